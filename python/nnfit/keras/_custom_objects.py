"""Custom losses and metrics written with keras.ops, traced once into graphs the engine runs
(Note [Traced losses and metrics] in src/nn/traced_metric.cpp).

A loss function ``fn(y_true, y_pred)`` (or a ``keras.losses.Loss`` subclass's ``call``) is
called on symbolic y_true and y_pred shaped as the model's targets and outputs; each
keras.ops call records an operation node. A ``keras.metrics.Metric`` subclass's
``update_state`` runs on symbolic targets, predictions, sample weights and one symbolic
input per variable, and each ``assign`` / ``assign_add`` / ``assign_sub`` records the
variable's new value; ``result`` runs on the variables alone. These graphs may reduce over
the batch axis (a loss's mean over everything, a metric's running sum), so while one is
traced, a new operation's output shape is found by running the graph so far on arrays at
two batch sizes (nnfit.keras._graph.infer_outputs), not by a model's shape inference. The
trace goes into the object's Keras serialization under "nnfit_trace".
"""
import base64
import contextlib
import inspect
import marshal
import types

import numpy as np

from nnfit.keras import _graph, _state
from nnfit.keras._object import KerasObject, to_json_value
from nnfit.keras._registration import registered_name_or_none

_REDUCTIONS = ("sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight")


@contextlib.contextmanager
def _unbatched():
    """Shape inference by running the ops (the trace may reduce over the batch axis)."""
    _graph.UNBATCHED.append(True)
    saved = _state.push_names()
    try:
        yield
    finally:
        _state.pop_names(saved)
        _graph.UNBATCHED.pop()


def _input(name, batch_shape, dtype="float32"):
    from nnfit.keras.layers import InputLayer
    return InputLayer(batch_shape=batch_shape, dtype=dtype, name=name)._nodes[0].outputs[0]


def _config(name, inputs, outputs, where):
    """The Functional config of the ops from `inputs` (each listed, used or not, in this order
    first) to `outputs`."""
    for o in outputs:
        if not isinstance(o, _graph.KerasTensor) or isinstance(o, MetricVariable):
            raise TypeError(f"{where} must return a tensor computed with keras.ops, got {o!r}")
    made = {n.layer for n in _graph._collect(outputs)}
    used = [t for t in inputs if t._history[0] in made]
    if not used:
        raise NotImplementedError(f"{where} returns a value computed from none of its arguments")
    config = _graph.functional_config(name, used, outputs)
    config["config"]["input_layers"] = [[t._history[0].name, 0, 0] for t in inputs]
    layers = config["config"]["layers"]
    entries = []
    for t in inputs:
        layer = t._history[0]
        entry = next((e for e in layers if e["name"] == layer.name), None)
        if entry is None:
            entry = layer._entry()
            entry["name"] = layer.name
            entry["inbound_nodes"] = []
        entries.append(entry)
    names = {t._history[0].name for t in inputs}
    for e in layers:
        if e["name"] in names:
            continue
        if e["class_name"] == "InputLayer" or not str(e.get("module", "")).startswith("keras.src.ops"):
            raise NotImplementedError(
                f"{where} uses {e['class_name']} {e['name']!r}; nnfit traces custom losses and metrics written with "
                "keras.ops on their arguments (layers and other inputs belong in the model)")
        entries.append(e)
    config["config"]["layers"] = entries
    return config


def _serialized(obj):
    """Keras's serialization of a custom loss or metric (function, lambda or object), as
    Keras writes it in compile_config."""
    if isinstance(obj, types.LambdaType) and obj.__name__ == "<lambda>":
        code = base64.encodebytes(marshal.dumps(obj.__code__)).decode("ascii")
        closure = tuple(c.cell_contents for c in obj.__closure__) if obj.__closure__ else None
        try:
            extra = [to_json_value(obj.__defaults__, "lambda"), to_json_value(closure, "lambda")]
        except TypeError:  # it closes over objects that are no JSON: Keras could not reload it either
            extra = [None, None]
        return {"class_name": "__lambda__", "config": {"value": [code] + extra}}
    cls = type(obj)
    if isinstance(obj, types.FunctionType) or not hasattr(obj, "get_config"):
        registered = registered_name_or_none(obj) or getattr(obj, "__name__", cls.__name__)
        return {"module": "builtins", "class_name": "function", "config": registered, "registered_name": "function"}
    config = to_json_value(obj.get_config(), f"{cls.__name__}.get_config()")
    if cls.__module__.startswith("nnfit.keras."):  # Keras's own class, written in Python here
        return {"module": cls.__module__[len("nnfit."):], "class_name": cls.__name__, "config": config,
                "registered_name": None}
    module = None if cls.__module__ == "__main__" else cls.__module__
    return {"module": module, "class_name": cls.__name__, "config": config,
            "registered_name": registered_name_or_none(cls) or cls.__name__}


def is_custom_loss(loss):
    """Whether `loss` is written in Python (a function or a Loss subclass), not one of nnfit's."""
    if isinstance(loss, (str, dict, KerasObject)) or loss is None or getattr(loss, "_nnfit_builtin", None):
        return False  # a keras.losses function the engine has as a fused loss is passed by name
    return callable(loss)


def is_custom_metric(metric):
    if isinstance(metric, (str, dict, KerasObject)) or metric is None or getattr(metric, "_nnfit_metric", None):
        return False  # a keras.metrics function the engine computes is passed by name
    from nnfit.keras.metrics import Metric
    return isinstance(metric, Metric) or callable(metric)


def loss_name(loss):
    if isinstance(loss, types.FunctionType):
        return loss.__name__ if loss.__name__ != "<lambda>" else "lambda"
    return getattr(loss, "name", None) or _snake(type(loss).__name__)


def _snake(name):
    from nnfit.keras._tracing import snake
    return snake(name)


def trace_loss(loss, y_shape, pred_shape):
    """The loss's Keras serialization with its trace, for targets of `y_shape` and
    predictions of `pred_shape` (both without the batch axis)."""
    from nnfit.keras.losses import Loss
    name = loss_name(loss)
    where = f"loss {name!r}"
    reduction = "sum_over_batch_size"
    if isinstance(loss, Loss):
        reduction = loss.reduction
        fn = loss.call
    else:
        fn = loss
    if reduction in (None, "none"):
        raise NotImplementedError(f"{where}: reduction={reduction!r} gives one loss per sample, and nnfit trains on "
                                  "one number; use 'sum_over_batch_size' (Keras's default), 'sum' or "
                                  "'mean_with_sample_weight'")
    with _unbatched():
        y_true = _input("y_true", (None,) + tuple(y_shape))
        y_pred = _input("y_pred", (None,) + tuple(pred_shape))
        out = fn(y_true, y_pred)
        config = _config(name, [y_true, y_pred], [out], where)
    entry = _serialized(loss)
    entry["nnfit_trace"] = {"name": name, "reduction": reduction, "y_true_shape": [int(d) for d in y_shape],
                            "graph": config}
    return entry


class MetricVariable(_graph.KerasTensor):
    """A metric's state variable (add_variable / add_weight): Keras's Variable, with
    ``assign``, ``assign_add``, ``assign_sub``, ``value`` and ``numpy()``. Outside a trace it
    holds an array (a metric updated eagerly on arrays); inside one, its current symbolic
    value, which keras.ops and Python's operators read."""

    def __init__(self, metric, name, shape, initial):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = "float32"
        self.name = name
        self.path = f"{metric.name}/{name}"
        self.trainable = False
        self._initial = np.broadcast_to(np.asarray(initial, "float32"), self.shape).copy()
        self._value = self._initial.copy()

    @property
    def _history(self):
        if isinstance(self._value, _graph.KerasTensor):
            return self._value._history
        raise TypeError(f"{self.path}: holds an array here, not a symbolic tensor")

    def _metric_value(self):
        return self._value

    @property
    def value(self):
        return self.numpy()

    def numpy(self):
        if isinstance(self._value, _graph.KerasTensor):
            raise TypeError(f"{self.path}: its value is symbolic while the metric is traced")
        return np.array(self._value)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def assign(self, value):
        self._value = _as_value(value, self)
        return self

    def assign_add(self, delta):
        from nnfit.keras import ops
        self._value = _as_value(ops.add(self._value, _unwrap(delta)), self)
        return self

    def assign_sub(self, delta):
        from nnfit.keras import ops
        self._value = _as_value(ops.subtract(self._value, _unwrap(delta)), self)
        return self

    def __repr__(self):
        return f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}>"


def _unwrap(value):
    return value._metric_value() if isinstance(value, MetricVariable) else value


def _as_value(value, variable):
    value = _unwrap(value)
    if isinstance(value, _graph.KerasTensor):
        return value
    a = np.asarray(value, "float32")
    try:
        return np.broadcast_to(a, variable.shape).copy()
    except ValueError:
        raise ValueError(f"{variable.path}: cannot assign a value of shape {a.shape} to a variable of shape "
                         f"{variable.shape}") from None


def unwrap_args(args):
    """keras.ops's arguments with each metric variable replaced by its current value."""
    out = []
    for a in args:
        if isinstance(a, MetricVariable):
            out.append(a._metric_value())
        elif isinstance(a, list):
            out.append([t._metric_value() if isinstance(t, MetricVariable) else t for t in a])
        else:
            out.append(a)
    return out


def initial_value(initializer, shape, where):
    """A variable's first value from Keras's initializer argument (constant ones only: the
    engine keeps no random state for metrics)."""
    from nnfit.keras.initializers import Initializer
    if initializer is None:
        initializer = "zeros"
    if isinstance(initializer, Initializer):
        config = initializer.get_config()
        name = initializer._class_name
        if name == "Constant":
            return np.full(shape, float(config.get("value", 0.0)), "float32")
        initializer = name
    if isinstance(initializer, (int, float, np.ndarray, list)):
        return np.broadcast_to(np.asarray(initializer, "float32"), shape).copy()
    if isinstance(initializer, str):
        key = initializer.lower()
        if key in ("zeros", "zero"):
            return np.zeros(shape, "float32")
        if key in ("ones", "one"):
            return np.ones(shape, "float32")
    raise NotImplementedError(f"{where}: initializer {initializer!r} is not supported by nnfit for a metric's "
                              "variable (zeros, ones, a keras.initializers.Constant or a number)")


def _takes(fn, name):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())


def trace_metric(metric, y_shape, pred_shape, serialized=None, weighted=False):
    """The metric's Keras serialization (``serialized``, else its own) with its trace; a
    weighted one (weighted_metrics) also traced with sample weights, as only those get them."""
    where = f"{type(metric).__name__} {metric.name!r}"
    if hasattr(metric, "_build_for"):  # a metric that makes its variables at its first update (R2Score)
        metric._build_for((None,) + tuple(y_shape), (None,) + tuple(pred_shape))
    variables = list(metric._metric_variables)
    for v in variables:
        v._value = v._initial.copy()
    metric.reset_state()
    initial = []
    for v in variables:
        if isinstance(v._value, _graph.KerasTensor):
            raise NotImplementedError(f"{where}: reset_state() must assign constants (numbers or arrays); nnfit "
                                      "resets a metric between epochs without running Python")
        initial.append(np.asarray(v._value, "float32"))
    saved = [v._value for v in variables]
    trace = {"name": metric.name, "y_true_shape": [int(d) for d in y_shape],
             "variables": [{"name": v.name, "shape": list(v.shape), "initial": a.reshape(-1).tolist()}
                           for v, a in zip(variables, initial)]}
    try:
        # Without a sample_weight argument, update_state serves `metrics` only (Keras raises
        # when such a metric is given sample weights; so does the engine).
        modes = (False, True) if weighted and _takes(metric.update_state, "sample_weight") else (False,)
        for weighted in modes:
            key = "update_weighted" if weighted else "update"
            with _unbatched():
                y_true = _input("y_true", (None,) + tuple(y_shape))
                y_pred = _input("y_pred", (None,) + tuple(pred_shape))
                inputs = [y_true, y_pred]
                sample_weight = None
                if weighted:
                    sample_weight = _input("sample_weight", (None,))
                    inputs.append(sample_weight)
                states = [_input(f"variable_{i}", v.shape) for i, v in enumerate(variables)]
                for v, s in zip(variables, states):
                    v._value = s
                if _takes(metric.update_state, "sample_weight"):
                    metric.update_state(y_true, y_pred, sample_weight=sample_weight)
                else:
                    metric.update_state(y_true, y_pred)
                updated, outputs = [], []
                for i, (v, s) in enumerate(zip(variables, states)):
                    if v._value is s:
                        continue
                    if not isinstance(v._value, _graph.KerasTensor):
                        raise NotImplementedError(
                            f"{where}: update_state assigns {v.path} a constant; nnfit traces update_state once, so "
                            "a variable's new value must be computed from the arguments and variables with keras.ops")
                    updated.append(i)
                    outputs.append(v._value)
                if not outputs:
                    raise NotImplementedError(f"{where}: update_state assigns no variable (use assign, assign_add "
                                              "or assign_sub on variables made with add_variable)")
                trace[key] = _config(f"{metric.name}_update", inputs + states, outputs, f"{where}: update_state")
                trace["updated_weighted" if weighted else "updated"] = updated
            for v, s in zip(variables, saved):
                v._value = s
        with _unbatched():
            states = [_input(f"variable_{i}", v.shape) for i, v in enumerate(variables)]
            for v, s in zip(variables, states):
                v._value = s
            out = metric.result()
            if isinstance(out, dict):
                raise NotImplementedError(f"{where}: result() returns a dict; nnfit logs one number per metric")
            if isinstance(out, MetricVariable):
                out = out._value
            trace["result"] = _config(f"{metric.name}_result", states, [out], f"{where}: result()")
    finally:
        for v, s in zip(variables, saved):
            v._value = s
    entry = dict(serialized) if serialized is not None else _serialized(metric)
    entry["nnfit_trace"] = trace
    return entry


def unbatched_shapes(config):
    """The output shapes of a graph being traced, found by running it on ones at batch sizes 2
    and 3: an axis whose size follows the batch is None."""
    import json
    from nnfit import _engine
    runs = []
    for batch in (2, 3):
        arrays = []
        for e in config["config"]["layers"]:
            if e["class_name"] != "InputLayer":
                continue
            c = e["config"]
            shape = [batch if d is None else int(d) for d in c["batch_shape"]]
            arrays.append(np.ones(shape, c.get("dtype") or "float32"))
        outputs, _ = _engine.get().run_operations(json.dumps(config), arrays)
        runs.append([tuple(o.shape) for o in outputs])
    shapes = []
    for a, b in zip(*runs):
        if len(a) != len(b):
            raise NotImplementedError(f"an operation's output rank depends on the batch size ({a} and {b})")
        shapes.append(tuple(None if x != y else x for x, y in zip(a, b)))
    return shapes


def _untraced_custom(entry):
    """Whether a compile_config entry is a custom loss or metric Keras wrote (no trace of
    nnfit's in it): a function, a lambda, or a class outside keras's modules."""
    if not isinstance(entry, dict) or "nnfit_trace" in entry or "class_name" not in entry:
        return False
    if entry["class_name"] in ("function", "__lambda__"):
        return True
    module = entry.get("module")
    if _python_builtin(entry) is not None:
        return True  # one of Keras's classes nnfit writes with keras.ops: remade and traced
    return module is None or not str(module).startswith("keras")


def _python_builtin(entry):
    """The nnfit.keras class or function a compile_config entry of Keras's own losses and
    metrics names, where nnfit computes it in Python (traced), else None."""
    import importlib
    module = entry.get("module")
    function = entry.get("class_name") == "function"
    if function and module == "builtins" and isinstance(entry.get("config"), str):
        for group in ("losses", "metrics"):
            found = getattr(importlib.import_module(f"nnfit.keras.{group}"), entry["config"], None)
            if found is not None and not isinstance(found, type):
                return found
        return None
    if module in ("keras.losses", "keras.metrics"):
        found = getattr(importlib.import_module("nnfit." + module), str(entry.get("class_name")), None)
        if isinstance(found, type) and not issubclass(found, KerasObject):
            return found
    return None


def has_untraced_custom(compile_config):
    def walk(v):
        if isinstance(v, list):
            return any(walk(e) for e in v)
        if isinstance(v, dict) and "class_name" not in v:
            return any(walk(e) for e in v.values())
        return _untraced_custom(v)
    return any(walk(compile_config.get(k)) for k in ("loss", "metrics", "weighted_metrics"))


def deserialize(entry, custom_objects, safe_mode):
    """A compile_config entry as the object compile takes: a custom function or class from
    ``custom_objects`` or the registry (Keras's deserialize_keras_object), else as written."""
    from nnfit.keras import saving
    if isinstance(entry, list):
        return [deserialize(e, custom_objects, safe_mode) for e in entry]
    if isinstance(entry, dict) and "class_name" not in entry:
        return {k: deserialize(v, custom_objects, safe_mode) for k, v in entry.items()}
    if not _untraced_custom(entry):
        return entry
    if entry["class_name"] == "__lambda__":
        from nnfit.keras._serialization import UNSAFE_DESERIALIZATION
        if safe_mode and not UNSAFE_DESERIALIZATION[0]:
            raise ValueError("Requested the deserialization of a Python lambda. This carries a potential risk of "
                             "arbitrary code execution and thus it is disallowed by default. If you trust the source "
                             "of the artifact, you can override this error by passing `safe_mode=False` to the "
                             "loading function.")
        code, defaults, closure = entry["config"]["value"]
        fn_code = marshal.loads(base64.decodebytes(code.encode("ascii")))
        cells = tuple(types.CellType(c) for c in closure) if closure else None
        return types.FunctionType(fn_code, globals(), None, tuple(defaults) if defaults else None, cells)
    function = entry["class_name"] == "function"
    names = [entry["config"]] if function else [entry.get("registered_name"), entry["class_name"]]
    found = None
    for name in names:
        if isinstance(name, str) and found is None:
            found = saving.get_registered_object(name, custom_objects)
    if found is None and entry.get("registered_name") in (None, "function"):
        found = _python_builtin(entry)
    if found is None:
        what = f"function '{entry['config']}'" if function else f"class '{entry['class_name']}'"
        raise TypeError(f"Could not locate {what}. Make sure custom classes and functions are decorated with "
                        "`@keras.saving.register_keras_serializable()` or passed in custom_objects. If they are "
                        f"already decorated, make sure they are all imported so that the decorator is run before "
                        f"trying to load them. Full object config: {entry}")
    return found if function else found.from_config(entry.get("config") or {})


def compile_from_config(model, compile_config, custom_objects, safe_mode=True):
    """compile() with a file's compile_config whose custom losses and metrics are remade from
    ``custom_objects`` (then traced, as when the user compiles)."""
    model.compile(optimizer=compile_config.get("optimizer") or "rmsprop",
                  loss=deserialize(compile_config.get("loss"), custom_objects, safe_mode),
                  loss_weights=compile_config.get("loss_weights"),
                  metrics=deserialize(compile_config.get("metrics"), custom_objects, safe_mode),
                  weighted_metrics=deserialize(compile_config.get("weighted_metrics"), custom_objects, safe_mode))


def reduce(values, sample_weight, reduction):
    """Keras's reduce_weighted_values with keras.ops (symbolic or eager): the values weighted
    by the samples' weights (broadcast on the batch axis), summed, and for the mean
    reductions divided by their count (or the weights' sum)."""
    from nnfit.keras import ops
    values = ops.cast(values, "float32")
    if sample_weight is not None:
        w = ops.cast(sample_weight, "float32")
        if values.ndim > 1:
            w = ops.reshape(w, (-1,) + (1,) * (values.ndim - 1))
        values = values * w
    if values.ndim == 0 or reduction in (None, "none"):
        return values
    if reduction == "sum":
        return ops.sum(values)
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        return ops.sum(values) / ops.sum(ops.cast(sample_weight, "float32"))
    return ops.mean(values)
