"""keras.datasets.boston_housing (ported from Keras 3.15's
keras/src/datasets/boston_housing.py; Apache License 2.0, Copyright The Keras Authors)."""
import numpy as np

from nnfit.keras.datasets import _cache, _housing


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, 13 features and the median value."""
    _housing.check_split(test_split)
    path = _cache.get_file("keras.datasets.boston_housing.load_data", path,
                           f"{_cache.ORIGIN_FOLDER}boston_housing.npz")
    with np.load(path, allow_pickle=False) as f:
        x, y = _cache.require(f, path, ["x", "y"])
    return _housing.shuffle_split(x, y, test_split, seed)
