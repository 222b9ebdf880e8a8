"""keras.metrics on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults (wherever Keras takes one of these, a name string works too), and the base
class of a user's metric: a subclass's ``update_state`` and ``result``, written with
keras.ops over variables made with ``add_variable``, are traced into graphs the engine runs
after each step (Note [Traced losses and metrics] in src/nn/traced_metric.cpp). A metric
function ``fn(y_true, y_pred)`` in compile's metrics is wrapped in MeanMetricWrapper, as
Keras does."""
import numpy as np

from nnfit.keras import _custom_objects
from nnfit.keras._object import KerasObject, make_classes


class Metric:
    """keras.metrics.Metric: subclass it with ``update_state(y_true, y_pred,
    sample_weight=None)`` assigning its variables (``add_variable`` / ``add_weight``) and
    ``result()``; ``reset_state()`` sets every variable to zeros unless overridden. On arrays
    it runs eagerly, as Keras's."""

    def __init__(self, dtype=None, name=None):
        if dtype is not None and str(getattr(dtype, "name", dtype)) != "float32":
            raise NotImplementedError(f"{type(self).__name__}: dtype={dtype!r} is not supported by nnfit (metrics "
                                      "are computed in float32)")
        self.name = name or _custom_objects._snake(type(self).__name__)
        self.dtype = "float32"
        self._metric_variables = []

    def add_variable(self, shape, initializer, dtype=None, aggregation="sum", name=None):
        where = f"{type(self).__name__} {self.name!r}: add_variable"
        if dtype is not None and str(getattr(dtype, "name", dtype)) not in ("float32", "int32", "int64"):
            raise NotImplementedError(f"{where}(dtype={dtype!r}) is not supported by nnfit (float32 variables)")
        variables = self.__dict__.setdefault("_metric_variables", [])
        shape = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
        base = name or "variable"
        taken = {v.name for v in variables}
        name, n = base, 0
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        v = _custom_objects.MetricVariable(self, name, shape, _custom_objects.initial_value(initializer, shape, where))
        variables.append(v)
        return v

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        return self.add_variable(shape, initializer, dtype=dtype, name=name)

    @property
    def variables(self):
        return list(self.__dict__.get("_metric_variables", []))

    def reset_state(self):
        for v in self.variables:
            v.assign(0.0)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: a subclass of keras.metrics.Metric defines update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__}: a subclass of keras.metrics.Metric defines result()")

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _samplewise(values, sample_weight, reduce_fn):
    """Keras's reduce_to_samplewise_values: the values weighted by the samples' weights and
    reduced (with `reduce_fn`) to one per sample."""
    from nnfit.keras import ops
    from nnfit.keras.ops._operation import is_symbolic

    def as_float(x):
        return ops.cast(x, "float32") if is_symbolic(x) else np.asarray(x, dtype="float32")

    values = as_float(values)
    if sample_weight is not None:
        w = as_float(sample_weight)
        if values.ndim == w.ndim - 1:
            values = ops.expand_dims(values, -1)
        elif values.ndim == w.ndim + 1 and values.shape[-1] == 1:
            values = ops.squeeze(values, -1)
        if values.ndim > w.ndim:
            values = reduce_fn(values, axis=list(range(w.ndim, values.ndim)))
        values = values * w
        if w.ndim > 1:
            sample_weight = reduce_fn(w, axis=list(range(1, w.ndim)))
        else:
            sample_weight = w
    if values.ndim > 1:
        values = reduce_fn(values, axis=list(range(1, values.ndim)))
    return values, sample_weight


class Mean(Metric):
    """keras.metrics.Mean(name, dtype): the weighted mean of the values it is given."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, values, sample_weight=None):
        from nnfit.keras import ops
        values, sample_weight = _samplewise(values, sample_weight, ops.mean)
        self.total.assign_add(ops.sum(values))
        if sample_weight is not None:
            self.count.assign_add(ops.sum(ops.cast(sample_weight, "float32")))
        elif values.ndim >= 1:
            self.count.assign_add(ops.sum(values * 0.0 + 1.0))  # the batch's size, known per batch
        else:
            self.count.assign_add(1.0)

    def result(self):
        from nnfit.keras import ops
        empty = ops.equal(self.count, 0.0)  # Keras's divide_no_nan: 0 before any sample
        return ops.where(empty, 0.0, self.total / ops.where(empty, 1.0, self.count))


class Sum(Metric):
    """keras.metrics.Sum(name, dtype): the weighted sum of the values it is given."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, values, sample_weight=None):
        from nnfit.keras import ops
        values, _ = _samplewise(values, sample_weight, ops.sum)
        self.total.assign_add(ops.sum(values))

    def result(self):
        from nnfit.keras import ops
        return ops.cast(self.total, "float32")


class MeanMetricWrapper(Mean):
    """keras.metrics.MeanMetricWrapper(fn, name=None, dtype=None, **kwargs): the mean of
    ``fn(y_true, y_pred, **kwargs)`` over the samples seen, weighted by sample_weight, as
    Keras's Mean: each sample's values are averaged first."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        from nnfit.keras import ops
        values = self._fn(ops.cast(y_true, "float32"), ops.cast(y_pred, "float32"), **self._fn_kwargs)
        super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        config = super().get_config()
        config["fn"] = _custom_objects._serialized(self._fn)
        config.update(self._fn_kwargs)
        return config


class _Builtin(KerasObject, Metric):
    """Base of the metric classes nnfit implements in its engine."""

    _group = "metrics"


__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper"] + make_classes("metrics", _Builtin, globals())

from nnfit.keras._metric_classes import *  # noqa: E402,F401,F403  (Keras's metrics nnfit writes with keras.ops)
from nnfit.keras._metric_classes import __all__ as _classes  # noqa: E402
from nnfit.keras._metric_functions import ENGINE as _ENGINE  # noqa: E402
from nnfit.keras._metric_functions import FUNCTIONS as _functions  # noqa: E402
from nnfit.keras._loss_functions import FUNCTIONS as _loss_functions  # noqa: E402

# keras.metrics's functions: the accuracies and correlations, and Keras's loss functions
# (the same objects as keras.losses's); the ones the engine computes go to it by name.
_OWN = ("binary_crossentropy binary_focal_crossentropy categorical_crossentropy categorical_focal_crossentropy "
        "categorical_hinge hinge huber kl_divergence log_cosh mean_absolute_error mean_absolute_percentage_error "
        "mean_squared_error mean_squared_logarithmic_error poisson sparse_categorical_crossentropy "
        "squared_hinge").split()
globals().update({f.__name__: f for f in _functions})
globals().update({f.__name__: f for f in _loss_functions if f.__name__ in _OWN})
for _f in list(_functions) + list(_loss_functions):
    if _f.__name__ in _ENGINE:
        _f._nnfit_metric = _f.__name__
del _f
__all__ += list(_classes) + [f.__name__ for f in _functions] + _OWN


def _objects():
    """Keras's ALL_OBJECTS_DICT of keras.metrics: classes and functions by name, the
    classes by their snake-case names too (overriding a function of that name, as in
    Keras), and the short aliases."""
    from nnfit.keras._tracing import snake
    classes = {n: globals()[n] for n in __all__ if isinstance(globals()[n], type)}
    objects = {n: globals()[n] for n in __all__}
    objects.update({snake(n): c for n, c in classes.items()})
    for alias, target in (("bce", "BinaryCrossentropy"), ("mse", "MeanSquaredError"), ("mae", "MeanAbsoluteError"),
                          ("mape", "MeanAbsolutePercentageError"), ("msle", "MeanSquaredLogarithmicError")):
        objects[alias] = objects[alias.upper()] = classes[target]
    return objects


def serialize(metric):
    """keras.metrics.serialize: Keras's config of a Metric object or metric function."""
    from nnfit.keras._serialization import serialize_keras_object
    return serialize_keras_object(metric)


def deserialize(config, custom_objects=None):
    """keras.metrics.deserialize: the Metric object or function a name or config stands for."""
    from nnfit.keras._serialization import deserialize_keras_object
    return deserialize_keras_object(config, module_objects=_objects(), custom_objects=custom_objects)


def get(identifier):
    """keras.metrics.get: None, a name (a function's or a class's), a config dict, or a callable."""
    from nnfit.keras._serialization import get_object
    return get_object(identifier, deserialize, "metric")


__all__ += ["serialize", "deserialize", "get"]


def _eager_twin(self):
    """The engine metric's eager twin (_metric_eager.py), made on its first update."""
    twin = self.__dict__.get("_eager")
    if twin is None:
        from nnfit.keras._metric_eager import twin_of
        twin = self.__dict__["_eager"] = twin_of(self)
    return twin


# The engine computes these metrics in fit and evaluate; on arrays outside them each
# object updates its eager twin, which follows Keras's code.
_Builtin.update_state = lambda self, *args, **kwargs: _eager_twin(self).update_state(*args, **kwargs)
_Builtin.result = lambda self: _eager_twin(self).result()
_Builtin.reset_state = lambda self: self.__dict__.pop("_eager", None) and None
_Builtin.variables = property(lambda self: _eager_twin(self).variables)
# Keras's default name is the class's in snake case (Keras also numbers a second object of
# a class, auc_1; nnfit numbers duplicates when they meet in compile).
_Builtin.name = property(lambda self: self._args.get("name") or _custom_objects._snake(self._class_name))
