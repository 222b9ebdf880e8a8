"""pytest setup for nnfit's Python package: the package under test comes from PYTHONPATH
(ctest sets it to <build>/python) or from an installed nnfit."""
import numpy as np
import pytest


@pytest.fixture
def blobs():
    """A small 3-class problem a dense model learns in a few epochs."""
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(3, 8)) * 3
    y = rng.integers(0, 3, size=600)
    x = (centers[y] + rng.normal(size=(600, 8))).astype("float32")
    return x, y.astype("int64")


@pytest.fixture(autouse=True)
def fresh_session():
    from nnfit import keras
    keras.backend.clear_session()
    keras.mixed_precision.set_global_policy("float32")
    keras.utils.set_random_seed(1)
    yield
