"""keras.datasets.california_housing (ported from Keras 3.15's
keras/src/datasets/california_housing.py; Apache License 2.0, Copyright The Keras Authors)."""
import numpy as np

from nnfit.keras.datasets import _cache, _housing


def load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, 8 features and the median house
    value; ``version="small"`` keeps the first 600 rows."""
    _housing.check_split(test_split)
    path = _cache.get_file("keras.datasets.california_housing.load_data", path,
                           f"{_cache.ORIGIN_FOLDER}california_housing.npz")
    with np.load(path, allow_pickle=False) as f:
        x, y = _cache.require(f, path, ["x", "y"])
    if version == "small":
        x = x[:600]
        y = y[:600]
    elif version != "large":
        raise ValueError(f"Argument `version` must be one of 'small', 'large'. Received: version={version}")
    return _housing.shuffle_split(x, y, test_split, seed)
