"""nnfit: a C++ engine for training neural networks, with Keras's API.

    from nnfit import keras

gives Keras 3's API (layers, Sequential, Model, compile, fit, ...) trained by nnfit's
engine. Importing nnfit prints nothing and loads the engine only when a model is built.
"""
from nnfit import data, errors  # noqa: F401  (pure Python: the engine loads with the first model)

__version__ = "0.1.0"
__all__ = ["keras", "data", "errors"]
