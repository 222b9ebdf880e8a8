"""keras.datasets.mnist (ported from Keras 3.15's keras/src/datasets/mnist.py; Apache
License 2.0, Copyright The Keras Authors): ``mnist.npz`` from Keras's cache."""
import numpy as np

from nnfit.keras.datasets import _cache


def load_data(path="mnist.npz"):
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, uint8, (60000, 28, 28) and
    (10000, 28, 28) images and their labels, from ``<keras cache>/datasets/<path>``."""
    path = _cache.get_file("keras.datasets.mnist.load_data", path, f"{_cache.ORIGIN_FOLDER}mnist.npz")
    with np.load(path, allow_pickle=False) as f:
        x_train, y_train, x_test, y_test = _cache.require(f, path, ["x_train", "y_train", "x_test", "y_test"])
        return (x_train, y_train), (x_test, y_test)
