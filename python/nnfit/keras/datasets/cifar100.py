"""keras.datasets.cifar100 (ported from Keras 3.15's keras/src/datasets/cifar100.py;
Apache License 2.0, Copyright The Keras Authors): the extracted ``cifar-100-python`` in
Keras's cache (``datasets/cifar-100-python-target/``), channels last."""
import os

import numpy as np

from nnfit.keras.datasets import _cache
from nnfit.keras.datasets._cifar import load_batch


def load_data(label_mode="fine"):
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, uint8 (N, 32, 32, 3) images and
    (N, 1) labels, fine (100 classes) or coarse (20)."""
    if label_mode not in ["fine", "coarse"]:
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    path = _cache.get_extracted("keras.datasets.cifar100.load_data", "cifar-100-python-target",
                                "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz", "cifar-100-python",
                                legacy="cifar-100-python")
    path = os.path.join(path, "cifar-100-python")
    x_train, y_train = load_batch(os.path.join(path, "train"), label_key=f"{label_mode}_labels")
    x_test, y_test = load_batch(os.path.join(path, "test"), label_key=f"{label_mode}_labels")
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    return (x_train.transpose(0, 2, 3, 1), y_train), (x_test.transpose(0, 2, 3, 1), y_test)
