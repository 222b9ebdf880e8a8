"""nnfit.keras: Keras 3's API on nnfit's engine. ``from nnfit import keras`` in place of
``import keras``: the same classes, arguments and defaults, trained by nnfit."""
from nnfit.keras import (activations, backend, callbacks, initializers, layers, losses, metrics,  # noqa: F401
                         mixed_precision, models, optimizers, regularizers, utils)
from nnfit.keras._graph import KerasTensor  # noqa: F401
from nnfit.keras.layers import Input, InputLayer, Layer  # noqa: F401
from nnfit.keras.models import Model, Sequential  # noqa: F401

__version__ = "3.15.1"  # the Keras API version nnfit.keras follows (nnfit.__version__ is nnfit's)
