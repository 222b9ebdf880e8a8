"""nnfit.keras: Keras 3's API on nnfit's engine. ``from nnfit import keras`` in place of
``import keras``: the same classes, arguments and defaults, trained by nnfit."""
from nnfit.keras import (activations, backend, callbacks, config, constraints, datasets, initializers, layers,  # noqa: F401
                         losses, metrics, mixed_precision, models, ops, optimizers, preprocessing, random, regularizers,
                         saving, tree, utils)
from nnfit.keras._export import InputSpec  # noqa: F401
from nnfit.keras._graph import KerasTensor  # noqa: F401
from nnfit.keras.layers import Input, InputLayer, Layer  # noqa: F401
from nnfit.keras.models import Model, Sequential  # noqa: F401

__version__ = "3.15.1"  # the Keras API version nnfit.keras follows (nnfit.__version__ is nnfit's)


def device(device_name):
    """keras.device: a scope whose models are placed on ``device_name``: "cpu", "gpu:N" (or
    TensorFlow's "/GPU:N", nnfit's "cuda:N") or "auto" (the first usable GPU, else the
    CPU; the default, or NNFIT_DEVICE). ``model.device`` and ``model.device_reason`` say
    where a model went and why; an unusable GPU named here is an error when the model is
    built."""
    import contextlib

    from nnfit.keras import _state

    name = str(device_name).strip().lower().lstrip("/")
    if name.startswith("device:"):
        name = name[len("device:"):]
    if name.startswith("gpu"):
        name = "cuda" + name[len("gpu"):]
    kind, _, index = name.partition(":")
    if kind not in ("auto", "cpu", "cuda") or (kind == "auto" and index) or (index and not index.isdigit()):
        raise ValueError(f"keras.device: unknown device {device_name!r}; nnfit takes \"cpu\", \"gpu:N\" "
                         "(\"/GPU:N\", \"cuda:N\") or \"auto\"")

    @contextlib.contextmanager
    def scope():
        _state.push_device(name)
        try:
            yield
        finally:
            _state.pop_device()

    return scope()


def __getattr__(name):
    """keras.applications on first use: its nearly 5,000 lines of architectures would double the
    time `from nnfit import keras` takes."""
    if name == "applications":
        import importlib
        return importlib.import_module("nnfit.keras.applications")
    raise AttributeError(f"module 'nnfit.keras' has no attribute {name!r}")
