"""keras.losses on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults (wherever Keras takes one of these, a name string works too), and the base
class of a user's loss: a subclass's ``call(y_true, y_pred)``, written with keras.ops, is
traced into the training graph (Note [Traced losses and metrics] in src/nn/traced_metric.cpp)."""
from nnfit.keras import _custom_objects, _loss_functions
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


def _builtin_call(self, y_true, y_pred, sample_weight=None):
    """A built-in loss called on arrays, as Keras's Loss.__call__: its function (Keras's
    formula, _loss_functions.py) per sample, then reduced as its reduction says."""
    from nnfit.keras import _loss_ops
    found = _loss_ops.traced(self)
    if found is None:
        raise NotImplementedError(f"{self._class_name} with {self._args} cannot be called on arrays by nnfit "
                                  "(it trains in the engine as configured)")
    values, reduction = found
    return _custom_objects.reduce(values(y_true, y_pred), sample_weight, reduction)


_Builtin.__call__ = _builtin_call


class _Wrapped(LossFunctionWrapper):
    """Keras's loss classes that nnfit computes with keras.ops (traced into the training
    graph) rather than with one of its engine's fused losses: a function and the config
    keys Keras writes."""

    _fn = None
    _keys = ()

    def __init__(self, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(type(self)._fn, reduction=reduction, name=name or type(self)._default_name, dtype=dtype,
                         **kwargs)

    def get_config(self):
        config = {"name": self.name, "reduction": self.reduction}
        config.update({k: self._fn_kwargs[k] for k in self._keys})
        return config


class Dice(_Wrapped):
    """keras.losses.Dice(reduction, name, axis, dtype): 1 - 2·|y ∩ ŷ| / (|y| + |ŷ|); in a
    model give axis the per-sample axes (None reduces the batch's too)."""
    _fn, _keys, _default_name = staticmethod(_loss_functions.dice), ("axis",), "dice"

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(reduction=reduction, name=name, dtype=dtype, axis=axis)


class Tversky(_Wrapped):
    """keras.losses.Tversky(alpha, beta, reduction, name, axis, dtype)."""
    _fn, _keys, _default_name = staticmethod(_loss_functions.tversky), ("alpha", "beta", "axis"), "tversky"

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None, dtype=None):
        super().__init__(reduction=reduction, name=name, dtype=dtype, alpha=alpha, beta=beta, axis=axis)


class Circle(_Wrapped):
    """keras.losses.Circle(gamma, margin, remove_diagonal, reduction, name, dtype): compares
    the samples of a batch with each other, so nnfit runs it on arrays only."""
    _fn, _keys, _default_name = staticmethod(_loss_functions.circle), ("gamma", "margin", "remove_diagonal"), "circle"

    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size", name="circle",
                 dtype=None):
        super().__init__(reduction=reduction, name=name, dtype=dtype, gamma=gamma, margin=margin,
                         remove_diagonal=remove_diagonal)


class CTC(_Wrapped):
    """keras.losses.CTC(reduction, name, dtype): on arrays (keras.ops.ctc_loss)."""
    _fn, _default_name = staticmethod(_loss_functions.ctc), "ctc"

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(reduction=reduction, name=name, dtype=dtype)


class CategoricalGeneralizedCrossEntropy(_Wrapped):
    """keras.losses.CategoricalGeneralizedCrossEntropy(q, reduction, name, dtype): (1 - p^q)/q
    of the true class's probability p, for integer labels."""
    _fn, _keys = staticmethod(_loss_functions.categorical_generalized_cross_entropy), ("q",)
    _default_name = "categorical_generalized_cross_entropy"

    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None):
        if not 0.0 < q < 1.0:
            raise ValueError("q must be in the interval (0, 1)")
        super().__init__(reduction=reduction, name=name, dtype=dtype, q=q)


_PYTHON_CLASSES = [Dice, Tversky, Circle, CTC, CategoricalGeneralizedCrossEntropy]
globals().update({f.__name__: f for f in _loss_functions.FUNCTIONS})

# Keras's ALL_OBJECTS_DICT: the classes and functions by name, and the short aliases.
_OBJECTS = {name: globals()[name] for name in __all__ if name != "Loss"}
_OBJECTS.update({c.__name__: c for c in _PYTHON_CLASSES})
_OBJECTS.update({f.__name__: f for f in _loss_functions.FUNCTIONS})
_OBJECTS.update({"Loss": Loss, "LossFunctionWrapper": LossFunctionWrapper})
for _alias, _target in (("bce", "binary_crossentropy"), ("kld", "kl_divergence"), ("mae", "mean_absolute_error"),
                        ("mse", "mean_squared_error"), ("mape", "mean_absolute_percentage_error"),
                        ("msle", "mean_squared_logarithmic_error")):
    _OBJECTS[_alias] = _OBJECTS[_alias.upper()] = _OBJECTS[_target]
del _alias, _target


def serialize(loss):
    """keras.losses.serialize: Keras's config of a Loss object or loss function."""
    from nnfit.keras._serialization import serialize_keras_object
    return serialize_keras_object(loss)


def deserialize(name, custom_objects=None):
    """keras.losses.deserialize: the Loss object or function a name or config stands for."""
    from nnfit.keras._serialization import deserialize_keras_object
    return deserialize_keras_object(name, module_objects=_OBJECTS, custom_objects=custom_objects)


def get(identifier):
    """keras.losses.get: None, a name (a function's or a class's), a config dict, or a callable."""
    from nnfit.keras._serialization import get_object
    return get_object(identifier, deserialize, "loss")


__all__ += [c.__name__ for c in _PYTHON_CLASSES] + [f.__name__ for f in _loss_functions.FUNCTIONS] + [
    "serialize", "deserialize", "get"]
