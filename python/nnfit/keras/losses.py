"""keras.losses on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults (wherever Keras takes one of these, a name string works too), and the base
class of a user's loss: a subclass's ``call(y_true, y_pred)``, written with keras.ops, is
traced into the training graph (Note [Traced losses and metrics] in src/nn/traced_metric.cpp)."""
from nnfit.keras import _custom_objects
from nnfit.keras._object import KerasObject, make_classes


class Loss:
    """keras.losses.Loss: subclass it with ``call(self, y_true, y_pred)`` returning the loss
    per sample (or a scalar), written with keras.ops; ``reduction`` is Keras's
    ("sum_over_batch_size", "sum", "mean_with_sample_weight"; "none" cannot train)."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _custom_objects._REDUCTIONS:
            raise ValueError("Invalid value for argument `reduction`. Expected one of "
                             f"{set(_custom_objects._REDUCTIONS)}. Received: reduction={reduction}")
        if dtype is not None and str(getattr(dtype, "name", dtype)) != "float32":
            raise NotImplementedError(f"{type(self).__name__}: dtype={dtype!r} is not supported by nnfit (losses are "
                                      "computed in float32)")
        self.name = name or _custom_objects._snake(type(self).__name__)
        self.reduction = reduction
        self.dtype = "float32"

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__}: a subclass of keras.losses.Loss defines call(y_true, y_pred)")

    def __call__(self, y_true, y_pred, sample_weight=None):
        """Keras's Loss.__call__ on arrays: the reduced loss (eagerly, with keras.ops)."""
        from nnfit.keras import ops
        values = self.call(ops.cast(y_true, "float32"), ops.cast(y_pred, "float32"))
        return _custom_objects.reduce(values, sample_weight, self.reduction)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """keras.losses.LossFunctionWrapper(fn, reduction, name, **kwargs): a loss function as a
    Loss object (its call is ``fn(y_true, y_pred, **kwargs)``)."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = super().get_config()
        config["fn"] = _custom_objects._serialized(self.fn)
        config.update(self._fn_kwargs)
        return config


class _Builtin(KerasObject, Loss):
    """Base of the loss classes nnfit implements in its engine."""

    _group = "losses"


# LossFunctionWrapper is Keras's (keras.src.losses) but not in its public keras.losses.
__all__ = ["Loss"] + make_classes("losses", _Builtin, globals())
