"""Keras 3's operations as nnfit.keras records and runs them (docs/design/keras_programming_model.md).

A ``keras.ops`` call on symbolic tensors adds an operation node to the graph, in the form
Keras 3 writes in a Functional config (module ``keras.src.ops.numpy``, class ``Add``, its
constructor config, its call's positional arguments), so nnfit's engine reads it with the
reader that reads Keras's files. The same call on arrays builds a one-node graph over the
arrays and runs it once on the engine (``_nnfit.run_operations``): eager and symbolic
calls run the same kernels.
"""
import json
import numbers

import numpy as np

from nnfit.keras import _graph, _state


# Tests' hook (tests/python/keras_ops_parity.py): with RECORD set, each eager call's
# arguments are kept in LAST_CALL, so `gradients(*LAST_CALL, cotangent=...)` differentiates
# the same operation with the engine's autodiff.
RECORD = False
LAST_CALL = None


class Operation:
    """One call of a Keras operation: a node of the graph, as a layer is (Keras 3's
    ``keras.src.ops.operation.Operation``). Not a layer: it has no weights and no config of
    its own beyond Keras's constructor arguments."""

    trainable = True

    def __init__(self, module, class_name, snake, config, out_dtype, outputs=1):
        self._outputs = outputs
        self._module = f"keras.src.ops.{module}"
        self._class_name = class_name
        self.name = _state.unique_name(snake)
        self._config = dict(config)
        self._out_dtype = out_dtype
        self._nodes = []
        self._model = None

    def _compute_dtype(self):
        return self._out_dtype[0] if isinstance(self._out_dtype, list) else self._out_dtype

    def _entry(self):
        return {"module": self._module, "class_name": self._class_name,
                "config": {"name": self.name, **self._config}, "registered_name": self._class_name}

    def _output_count(self):
        return self._outputs

    def _inbound(self, node, ref):
        """The node's call as Keras writes it: its arguments with each tensor as `ref(t)`."""
        return {"args": [_arg_json(a, ref) for a in node.call_args], "kwargs": dict(node.call_kwargs)}

    def get_weights(self):
        return []

    def count_params(self):
        return 0

    def __repr__(self):
        return f"<Operation {self._class_name} name={self.name}>"


class Const:
    """An array argument of a symbolic call: Keras's ``__tensor__`` object."""

    def __init__(self, value):
        self.value = np.asarray(value)


class Index:
    """GetItem's key: a tuple of integers, slices, None and Ellipsis (or one of them)."""

    def __init__(self, key):
        self.key = key


def _key_item(item):
    if item is None or isinstance(item, (bool, np.bool_)):
        if item is None:
            return None
        raise TypeError(f"keras.ops: a boolean index {item!r} is not supported by nnfit")
    if item is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(item, slice):
        def bound(b):
            if b is None:
                return None
            if not isinstance(b, (int, np.integer)):
                raise TypeError(f"keras.ops: slice bounds must be integers, got {b!r}")
            return int(b)
        return {"class_name": "__slice__", "config": {"start": bound(item.start), "stop": bound(item.stop),
                                                      "step": bound(item.step)}}
    if isinstance(item, (int, np.integer)):
        return int(item)
    raise TypeError(f"keras.ops: an index {item!r} is not supported by nnfit (integers, slices, None, Ellipsis)")


def _arg_json(a, ref):
    if hasattr(a, "_variable_json"):  # a subclassed layer's weight (Note [Traced layers])
        return a._variable_json()
    if isinstance(a, _graph.KerasTensor):
        return ref(a)
    if isinstance(a, list):
        return [ref(t) for t in a]
    if isinstance(a, Const):
        v = a.value
        dtype = "float32" if v.dtype.kind == "f" else ("bool" if v.dtype.kind == "b" else "int32")
        return {"class_name": "__tensor__", "config": {"value": v.astype("float64").tolist(), "dtype": dtype}}
    if isinstance(a, Index):
        if isinstance(a.key, tuple):
            return [_key_item(k) for k in a.key]
        return _key_item(a.key)
    if a is None or isinstance(a, bool):
        return a
    if isinstance(a, numbers.Integral):
        return int(a)
    if isinstance(a, numbers.Real):
        return float(a)
    raise TypeError(f"keras.ops: cannot pass a {type(a).__name__} to an operation")


def _engine():
    from nnfit import _engine as e
    return e.get()


def is_symbolic(x):
    return isinstance(x, _graph.KerasTensor)


def _float_dtype_of(args):
    for a in args:
        for t in (a if isinstance(a, list) else [a]):
            if isinstance(t, _graph.KerasTensor) and str(t.dtype).startswith(("float", "bfloat")):
                return t.dtype
            if isinstance(t, np.ndarray) and t.dtype.kind == "f":
                return "float32"
    return "float32"


def call(module, class_name, snake, args, config=None, kwargs=None, out_dtype=None, outputs=1):
    """Runs or records Keras's operation `module.class_name` on positional `args`: each a
    tensor (symbolic or array), a list of tensors, a Python number, None, Const or Index.
    An operation of several `outputs` (Split, TopK) gives a list; `out_dtype` may then be
    a list of one dtype per output."""
    config = config or {}
    kwargs = kwargs or {}
    from nnfit.keras.ops import _dims
    if _dims.has_dim([a.key if isinstance(a, Index) else a for a in args]) or _dims.has_dim(config) \
            or _dims.has_dim(kwargs):
        _dims.refuse(f"keras.ops.{snake}")
    args = _unwrap_variables(args)
    if any(_dims.is_per_batch(t) for a in args for t in (a if isinstance(a, list) else [a])):
        return _dims.per_batch_call(snake, args, config, lambda fixed: call(module, class_name, snake, fixed, config, kwargs,
                                                                    out_dtype, outputs))
    flat = []
    for a in args:
        flat.extend(a if isinstance(a, list) else [a])
    dtype = out_dtype or _float_dtype_of(args)
    if any(is_symbolic(t) for t in flat):
        return _symbolic(module, class_name, snake, args, config, kwargs, dtype, outputs)
    out = _eager(module, class_name, snake, args, config, kwargs, outputs)
    # The engine holds booleans as 0/1 floats; on arrays they are Keras's bool arrays.
    if outputs == 1 and dtype == "bool":
        return np.asarray(out).astype(bool)
    if outputs > 1 and isinstance(dtype, list):
        return [np.asarray(o).astype(bool) if d == "bool" else o for o, d in zip(out, dtype)]
    return out


def _unwrap_variables(args):
    """A metric's variables (Note [Traced losses and metrics]) as their current values."""
    from nnfit.keras._custom_objects import MetricVariable, unwrap_args
    if any(isinstance(a, MetricVariable) or (isinstance(a, list) and any(isinstance(t, MetricVariable) for t in a))
           for a in args):
        return unwrap_args(args)
    return args


def _symbolic(module, class_name, snake, args, config, kwargs, dtype, count=1):
    from nnfit.keras import _weight_values
    _check_variables(snake, args)
    _weight_values.check(snake, args)
    if _weight_values.weight_only(args):  # Note [Weight-only values]
        return _weight_values.record(snake, args,
                                     lambda fixed: _record(module, class_name, snake, fixed, config, kwargs, dtype, count))
    return _record(module, class_name, snake, _weight_values.as_arguments(snake, args), config, kwargs, dtype, count)


def _record(module, class_name, snake, args, config, kwargs, dtype, count):
    """The operation's node on `args` (symbolic tensors, weights, numbers, ...) and its outputs."""
    op = Operation(module, class_name, snake, config, dtype, count)
    fixed = []
    for a in args:
        if _is_variable(a):
            fixed.append(a)
        elif isinstance(a, list):
            if not all(is_symbolic(t) for t in a):
                raise TypeError(f"keras.ops.{snake}: a list mixing arrays and symbolic tensors is not supported by "
                                "nnfit; make each a symbolic tensor")
            fixed.append(list(a))
        elif isinstance(a, np.ndarray) or (hasattr(a, "__array__") and not is_symbolic(a) and not isinstance(a, (Const, Index))):
            fixed.append(Const(a))
        else:
            fixed.append(a)
    tensors = []
    for a in fixed:
        if _is_variable(a):
            continue
        if is_symbolic(a):
            tensors.append(a)
        elif isinstance(a, list):
            tensors.extend(a)
    node = _graph.Node(op, tensors)
    node.call_args = fixed
    node.call_kwargs = kwargs
    op._nodes.append(node)
    try:
        outputs = _graph.infer_outputs(op, node, op._output_count())
    except Exception as e:  # a batch-axis reduction in a layer's call feeds an add_loss
        from nnfit.keras import _added_losses, _tracing
        if _added_losses.BATCH_AXIS_MESSAGE not in str(e) or _tracing.current_trace() is None:
            raise
        outputs = _added_losses.local_outputs(
            op, node, op._output_count(), fixed,
            lambda arrays: eager_graph(module, class_name, snake, arrays, config, kwargs, count), _engine().run_operations)
    for i, t in enumerate(outputs):
        t.dtype = dtype[i] if isinstance(dtype, list) else dtype
    return outputs[0] if count == 1 else list(outputs)


def _is_variable(a):
    return hasattr(a, "_variable_json")


def _check_variables(snake, args):
    """A weight of a subclassed layer (add_weight's) is an operand inside that layer's call:
    beside tensors computed from the call's inputs, or alone (Note [Weight-only values])."""
    from nnfit.keras import _tracing
    variables = [a for a in args if _is_variable(a)]
    variables += [t for a in args if isinstance(a, list) for t in a if _is_variable(t)]
    trace = _tracing.current_trace()
    for v in variables:
        if trace is None or v._layer is not trace["layer"]:
            raise NotImplementedError(
                f"keras.ops.{snake}: {v.path} is a weight of layer {v._layer.name!r}; nnfit reads a weight only in "
                "its own layer's call (share a layer rather than its weights)")


def _as_array(x, where):
    a = np.asarray(x)
    if a.dtype == object:
        raise TypeError(f"{where}: expected an array of numbers, got {type(x).__name__}")
    if a.dtype.kind in "fb" or a.dtype.kind == "c":
        if a.dtype.kind == "c":
            raise TypeError(f"{where}: complex arrays are not supported by nnfit")
        a = a.astype("float32")
    elif a.dtype.kind in "iu":
        a = a.astype("int64" if a.dtype.itemsize > 4 else "int32")
    return np.ascontiguousarray(a)


def eager_graph(module, class_name, snake, args, config, kwargs, outputs=1):
    """The Functional config of one eager call and the arrays it reads, in input order."""
    arrays, layers, converted = [], [], []

    def input_ref(i, shape):
        return {"class_name": "__keras_tensor__",
                "config": {"shape": list(shape), "dtype": str(arrays[i].dtype), "keras_history": [f"input_{i}", 0, 0]}}

    refs = {}

    def take(x):
        squeeze = np.ndim(x) == 0  # a scalar runs as a (1,) array (ascontiguousarray makes it so)
        a = _as_array(x, f"keras.ops.{snake}").reshape(-1) if squeeze else _as_array(x, f"keras.ops.{snake}")
        arrays.append(a)
        i = len(arrays) - 1
        layers.append({"module": "keras.layers", "class_name": "InputLayer",
                       "config": {"batch_shape": list(a.shape), "dtype": str(a.dtype), "name": f"input_{i}"},
                       "registered_name": None, "name": f"input_{i}", "inbound_nodes": []})
        token = ("in", i)
        refs[token] = input_ref(i, a.shape)
        return token, squeeze

    scalars_only = True
    if not any(isinstance(a, (list, np.ndarray)) or hasattr(a, "__array__") for a in args):
        # Only Python numbers (ops.sqrt(4.0)): they are the tensors, as Keras converts them.
        args = [a if a is None or isinstance(a, (Const, Index)) else np.asarray(a, "float32") for a in args]
    for a in args:
        if isinstance(a, list):
            converted.append([take(t)[0] for t in a])
            scalars_only = False
        elif isinstance(a, (Const, Index)) or a is None or type(a) in (bool, int, float):
            converted.append(a)
        else:
            token, squeeze = take(a)
            scalars_only = scalars_only and squeeze
            converted.append(token)

    def js(a):
        if isinstance(a, tuple) and a and a[0] == "in":
            return refs[a]
        if isinstance(a, list):
            return [refs[t] for t in a]
        return _arg_json(a, None)

    name = snake
    layers.append({"module": f"keras.src.ops.{module}", "class_name": class_name,
                   "config": {"name": name, **config}, "registered_name": class_name, "name": name,
                   "inbound_nodes": [{"args": [js(a) for a in converted], "kwargs": dict(kwargs)}]})
    config_json = {"module": "keras.src.models.functional", "class_name": "Functional",
                   "config": {"name": "eager", "layers": layers,
                              "input_layers": [[f"input_{i}", 0, 0] for i in range(len(arrays))],
                              "output_layers": [[name, 0, i] for i in range(outputs)]},
                   "registered_name": "Functional"}
    return json.dumps(config_json), arrays, scalars_only and bool(arrays)


def _eager(module, class_name, snake, args, config, kwargs, count=1):
    global LAST_CALL
    if RECORD:
        LAST_CALL = (module, class_name, snake, args, config, kwargs, count)
    text, arrays, squeeze = eager_graph(module, class_name, snake, args, config, kwargs, count)
    if not arrays:
        raise TypeError(f"keras.ops.{snake}: expected at least one tensor argument")
    outputs, _ = _engine().run_operations(text, arrays)
    outs = [out.reshape(()) if squeeze and out.size == 1 else out for out in outputs]
    return outs[0] if count == 1 else outs


def trace_graph(snake, fn, arrays):
    """The Functional config of `fn` (keras.ops calls) on symbolic inputs of the arrays' own
    shapes, axis 0 an axis like the others (as a custom metric's trace), and the arrays as
    the engine takes them, in input order. throws: what `fn` raises on symbolic tensors."""
    from nnfit.keras._custom_objects import _config, _input, _unbatched
    arrays = [_as_array(a, f"keras.ops.{snake}").reshape(np.shape(a)) for a in arrays]
    with _unbatched():
        inputs = [_input(f"{snake}_input_{i}", a.shape, str(a.dtype)) for i, a in enumerate(arrays)]
        outputs = fn(*inputs)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        config = _config(snake, inputs, outputs, f"keras.ops.{snake}")
    return json.dumps(config), arrays


class Composed:
    """LAST_CALL of an operation nnfit composes from others on arrays (cdist, corrcoef): the
    composition `fn` and its array arguments, traced as one graph only when the test hook
    asks for its gradient."""

    def __init__(self, snake, fn, arrays):
        self.snake, self.fn, self.arrays = snake, fn, arrays


def composed(snake, fn, args):
    """fn(*args), keras.ops calls composing Keras's operation `snake`; on arrays, with RECORD
    set, LAST_CALL becomes the whole composition, so `gradients` differentiates it."""
    global LAST_CALL
    out = fn(*args)
    if RECORD and not any(is_symbolic(a) for a in args):
        LAST_CALL = (Composed(snake, fn, args),)
    return out


def gradients(module, class_name=None, snake=None, args=None, config=None, kwargs=None, outputs=1, cotangent=None):
    """The engine's gradient of sum(op(args)[0] · cotangent) with respect to each array
    argument (nnfit's check of its gradient rules against another framework's); an
    operation's other outputs get zero cotangents. `module` may be a Composed call instead."""
    if isinstance(module, Composed):
        text, arrays = trace_graph(module.snake, module.fn, module.arrays)
        values, grads = _engine().run_operations(text, arrays, [np.asarray(cotangent, "float32")])
        return values[0], grads
    text, arrays, _ = eager_graph(module, class_name, snake, args, config or {}, kwargs or {}, outputs)
    cotangents = [np.asarray(cotangent, "float32")]
    if outputs > 1:
        values, _ = _engine().run_operations(text, arrays)
        cotangents += [np.zeros(np.shape(v), "float32") for v in values[1:]]
    values, grads = _engine().run_operations(text, arrays, cotangents)
    return values[0], grads
