"""keras.datasets.cifar10 (ported from Keras 3.15's keras/src/datasets/cifar10.py; Apache
License 2.0, Copyright The Keras Authors): the extracted ``cifar-10-batches-py`` in Keras's
cache (``datasets/cifar-10-batches-py-target/``), channels last as nnfit's image format."""
import os

import numpy as np

from nnfit.keras.datasets import _cache
from nnfit.keras.datasets._cifar import load_batch


def load_data():
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, uint8 (N, 32, 32, 3) images and
    (N, 1) labels."""
    path = _cache.get_extracted("keras.datasets.cifar10.load_data", "cifar-10-batches-py-target",
                                "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz", "cifar-10-batches-py",
                                legacy="cifar-10-batches-py")
    num_train_samples = 50000
    x_train = np.empty((num_train_samples, 3, 32, 32), dtype="uint8")
    y_train = np.empty((num_train_samples,), dtype="uint8")
    path = os.path.join(path, "cifar-10-batches-py")
    for i in range(1, 6):
        fpath = os.path.join(path, f"data_batch_{i}")
        x_train[(i - 1) * 10000:i * 10000, :, :, :], y_train[(i - 1) * 10000:i * 10000] = load_batch(fpath)
    x_test, y_test = load_batch(os.path.join(path, "test_batch"))
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    x_train = x_train.transpose(0, 2, 3, 1)
    x_test = x_test.transpose(0, 2, 3, 1)
    x_test = x_test.astype(x_train.dtype)
    y_test = y_test.astype(y_train.dtype)
    return (x_train, y_train), (x_test, y_test)
