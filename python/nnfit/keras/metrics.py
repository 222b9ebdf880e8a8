"""keras.metrics on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults (wherever Keras takes one of these, a name string works too), and the base
class of a user's metric: a subclass's ``update_state`` and ``result``, written with
keras.ops over variables made with ``add_variable``, are traced into graphs the engine runs
after each step (Note [Traced losses and metrics] in src/nn/traced_metric.cpp). A metric
function ``fn(y_true, y_pred)`` in compile's metrics is wrapped in MeanMetricWrapper, as
Keras does."""
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


class MeanMetricWrapper(Metric):
    """keras.metrics.MeanMetricWrapper(fn, name=None, dtype=None, **kwargs): the mean of
    ``fn(y_true, y_pred, **kwargs)`` over the samples seen, weighted by sample_weight, as
    Keras's Mean: each sample's values are averaged first."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        from nnfit.keras import ops
        y_true = ops.cast(y_true, "float32")
        y_pred = ops.cast(y_pred, "float32")
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        values = ops.cast(values, "float32")
        if sample_weight is not None:  # Keras's reduce_to_samplewise_values with ops.mean
            w = ops.cast(sample_weight, "float32")
            if values.ndim > 1:
                values = ops.mean(values, axis=list(range(1, values.ndim)))
            if values.ndim == 1:
                values = values * w
                self.total.assign_add(ops.sum(values))
                self.count.assign_add(ops.sum(w))
                return
        if values.ndim > 1:
            values = ops.mean(values, axis=list(range(1, values.ndim)))
        self.total.assign_add(ops.sum(values))
        if values.ndim >= 1:
            self.count.assign_add(ops.sum(values * 0.0 + 1.0))
        else:
            self.count.assign_add(1.0)

    def result(self):
        from nnfit.keras import ops
        empty = ops.equal(self.count, 0.0)  # Keras's divide_no_nan: 0 before any sample
        return ops.where(empty, 0.0, self.total / ops.where(empty, 1.0, self.count))

    def get_config(self):
        config = super().get_config()
        config["fn"] = _custom_objects._serialized(self._fn)
        config.update(self._fn_kwargs)
        return config


class _Builtin(KerasObject, Metric):
    """Base of the metric classes nnfit implements in its engine."""

    _group = "metrics"


__all__ = ["Metric", "MeanMetricWrapper"] + make_classes("metrics", _Builtin, globals())
