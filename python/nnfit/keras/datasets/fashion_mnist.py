"""keras.datasets.fashion_mnist (ported from Keras 3.15's
keras/src/datasets/fashion_mnist.py; Apache License 2.0, Copyright The Keras Authors): the
four gzip IDX files under ``<keras cache>/datasets/fashion-mnist``."""
import gzip
import os

import numpy as np

from nnfit.keras.datasets import _cache

_FILES = ["train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
          "t10k-images-idx3-ubyte.gz"]
_HINT = (" On Debian, the package dataset-fashion-mnist holds the same four files in "
         "/usr/share/datasets/fashion-mnist: copy them into that folder.")


def load_data():
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, uint8 (N, 28, 28) images and labels."""
    paths = [_cache.get_file("keras.datasets.fashion_mnist.load_data", f, _cache.ORIGIN_FOLDER + f,
                             cache_subdir=os.path.join("datasets", "fashion-mnist"), hint=_HINT) for f in _FILES]
    with gzip.open(paths[0], "rb") as lbpath:
        y_train = np.frombuffer(lbpath.read(), np.uint8, offset=8)
    with gzip.open(paths[1], "rb") as imgpath:
        x_train = np.frombuffer(imgpath.read(), np.uint8, offset=16).reshape(len(y_train), 28, 28)
    with gzip.open(paths[2], "rb") as lbpath:
        y_test = np.frombuffer(lbpath.read(), np.uint8, offset=8)
    with gzip.open(paths[3], "rb") as imgpath:
        x_test = np.frombuffer(imgpath.read(), np.uint8, offset=16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
