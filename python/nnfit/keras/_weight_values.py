"""Values computed from a subclassed layer's weights alone inside its traced call
(Note [Weight-only values] in src/nn/traced_layer.cpp).

``ops.softplus(self.w)``, ``ops.exp(self.t)``, ``1e-3 * ops.sum(ops.square(self.w))``: an
operation whose tensor operands are only the layer's weights (or values made so) has no
batch axis, so it is not recorded in the call's graph. It is recorded in a graph of its own
(the trace's WeightTrace), over one unbatched symbolic input per weight, its shapes found by
running the ops as a custom loss's are. The value it gives is a symbolic tensor marked with
that WeightTrace: an operation that combines it with the batch reads it as a
``__variable__`` argument past the layer's weights (index ``len(weights) + k``), and
``add_loss`` of it is an output of the weight graph that the engine sums into the loss.
The engine emits the weight graph once per call, on the weights, before the call's graph.
"""
from nnfit.keras import _graph


class WeightTrace:
    """The weight-only operations of one traced call of `layer`: one unbatched input per
    weight (Keras's order), the values the call's operations read (in the order first read)
    and the add_loss values."""

    def __init__(self, layer):
        self.layer = layer
        self.inputs = None  # made on first use
        self.values = []
        self.losses = []

    def input_of(self, variable):
        if self.inputs is None:
            from nnfit.keras._custom_objects import _input
            self.inputs = [_input(f"{self.layer.name}_weight_{i}", v.shape, "float32")
                           for i, v in enumerate(self.layer._ordered_variables())]
            for t in self.inputs:
                t._weight_trace = self
        return self.inputs[variable._index()]

    def slot(self, value):
        for i, v in enumerate(self.values):
            if v is value:
                return i
        self.values.append(value)
        return len(self.values) - 1

    def config(self, where):
        """The trace's "weight_values" entry, or None when the call made none."""
        if not self.values and not self.losses:
            return None
        from nnfit.keras._custom_objects import _config
        graph = _config(f"{self.layer.name}_weights", self.inputs, self.values + self.losses, where)
        return {"graph": graph, "losses": len(self.losses)}


class ValueArgument:
    """A weight-only value as the argument of an operation on batch tensors: read by the
    engine as a weight of the layer is (`_variable_json`), past the layer's own weights."""

    def __init__(self, trace, value):
        self._trace = trace
        self._slot = trace.slot(value)
        self._layer = trace.layer
        self.shape = tuple(value.shape)
        self.dtype = value.dtype
        self.name = value.name
        self.path = f"{trace.layer.name}/{value.name}"

    def _variable_json(self):
        index = len(self._layer._ordered_variables()) + self._slot
        return {"class_name": "__variable__", "config": {"index": index, "shape": list(self.shape), "name": self.name}}


def current():
    from nnfit.keras import _tracing
    trace = _tracing.current_trace()
    return trace.get("weight_values") if trace is not None else None


def is_value(t):
    return getattr(t, "_weight_trace", None) is not None


def _operands(args):
    flat = [t for a in args for t in (a if isinstance(a, list) else [a])]
    return [t for t in flat if isinstance(t, _graph.KerasTensor) or hasattr(t, "_variable_json")]


def check(snake, args):
    """A weight-only value is read only inside the call that made it."""
    trace = current()
    for t in _operands(args):
        if is_value(t) and t._weight_trace is not trace:
            raise NotImplementedError(
                f"keras.ops.{snake}: {t.name!r} was computed from the weights of layer {t._weight_trace.layer.name!r} "
                "in another call; nnfit traces a value computed from weights inside the call that uses it (compute "
                "it in call(), not in build() or another layer)")


def weight_only(args):
    """Whether an operation's tensor operands are all weights or weight-only values."""
    operands = _operands(args)
    return bool(operands) and all(is_value(t) or hasattr(t, "_variable_json") for t in operands)


def record(snake, args, emit):
    """`emit(args)` (the operation's recording) with each weight replaced by its unbatched
    input of the weight graph, its shapes found by running that graph; its outputs are
    weight-only values."""
    trace = current()
    if trace is None:
        raise NotImplementedError(f"keras.ops.{snake}: an operation on a layer's weights alone runs in nnfit only "
                                  "inside that layer's call()")

    def fixed(a):
        if isinstance(a, list):
            return [fixed(t) for t in a]
        if hasattr(a, "_variable_json") and not isinstance(a, ValueArgument):
            return trace.input_of(a)
        return a

    _graph.UNBATCHED.append(True)
    try:
        out = emit([fixed(a) for a in args])
    finally:
        _graph.UNBATCHED.pop()
    for t in (out if isinstance(out, list) else [out]):
        t._weight_trace = trace
    return out


def as_arguments(snake, args):
    """The arguments of an operation on batch tensors, each weight-only value as the
    `__variable__` the engine reads it by."""
    out = []
    for a in args:
        if isinstance(a, list):
            if any(is_value(t) or hasattr(t, "_variable_json") for t in a):
                raise NotImplementedError(
                    f"keras.ops.{snake}: a list mixing weights (or values computed from weights alone) with tensors "
                    "computed from the inputs is not supported by nnfit; combine the weight with the batch in an "
                    "operation (ops.add, ops.multiply, ops.matmul, ...) before listing it")
            out.append(a)
        else:
            out.append(ValueArgument(a._weight_trace, a) if is_value(a) else a)
    return out


def refuse_layer(layer_name, tensors):
    """A layer called on a weight-only value (whose axis 0 is no batch) is refused."""
    for t in tensors:
        if is_value(t):
            raise NotImplementedError(
                f"layer {layer_name!r} is called on {t.name!r}, a value computed from weights alone (no batch axis); "
                "nnfit calls layers on the batch: use keras.ops on the value, or combine it with the call's inputs "
                "first")
