"""Keras's ``self.add_loss(value)`` inside a subclassed layer's call, traced (Note [Traced
losses and metrics] in src/nn/traced_metric.cpp).

An added loss usually reduces over the batch axis (``ops.sum(inputs)``), which a layer's
graph cannot hold (its values keep axis 0 as the batch), so its operations go into a graph
of their own: from the values it reads that a layer or the call's input makes (its
"feeds", added to the layer's graph as extra outputs) to the losses. The engine sums each
loss and adds it to the model's, as Keras adds a layer's losses. While a layer is traced,
an operation that reduces the batch axis is given its shape by running it on arrays
(``local_outputs``); if such a value reaches the layer's outputs, the model's reader
refuses it, naming the operation. A value computed from the layer's weights alone goes to
the layer's weight graph instead (Note [Weight-only values]), added once per call."""
import numpy as np

from nnfit.keras import _graph

BATCH_AXIS_MESSAGE = "does not keep the batch axis"


def add_loss(layer, loss):
    """Layer.add_loss: records `loss` (a tensor or a list of them) in the layer's trace."""
    from nnfit.keras import _tracing
    where = f"{type(layer).__name__} {layer.name!r}: add_loss"
    trace = _tracing.current_trace()
    if trace is None or trace.get("losses") is None:
        raise NotImplementedError(f"{where} is traced inside the layer's call(); nnfit adds a loss only from there "
                                  "(for a fixed penalty, use a regularizer or compute_loss)")
    from nnfit.keras import _weight_values
    for t in _graph.flatten(loss):
        if hasattr(t, "_variable_json"):  # a weight itself: Keras adds it as a tensor (summed)
            t = _as_weight_value(t)
        if not isinstance(t, _graph.KerasTensor):
            raise ValueError(f"`add_loss()` can only be called from inside `build()` or `call()`, on a tensor input. "
                             f"Received invalid value: {t!r} ({where}: nnfit traces a value computed from the call's "
                             "inputs or weights with keras.ops)")
        if _weight_values.is_value(t):  # Note [Weight-only values]: summed into the loss once per call
            _weight_values.check("add_loss", [t])
            trace["weight_values"].losses.append(t)
        else:
            trace["losses"].append(t)


def _as_weight_value(variable):
    """add_loss(self.w): the weight as a weight-only value (an identity operation on it)."""
    from nnfit.keras import ops
    return ops.multiply(variable, 1.0)


def local_outputs(op, node, count, args, eager_graph, run):
    """The outputs of `op` called on `args` when the model's shape inference refuses them for
    the batch axis: shapes from running the one operation on ones at batch sizes 2 and 3."""
    runs = []
    for batch in (2, 3):
        arrays = []
        for a in args:
            if hasattr(a, "_variable_json") or (isinstance(a, _graph.KerasTensor)):
                shape = tuple(batch if d is None else d for d in a.shape)
                arrays.append(np.ones(shape, "float32"))
            elif isinstance(a, list):
                arrays.append([np.ones(tuple(batch if d is None else d for d in t.shape), "float32") for t in a])
            else:
                arrays.append(a)
        text, inputs, squeeze = eager_graph(arrays)
        outs, _ = run(text, inputs)
        runs.append([() if squeeze and o.size == 1 else tuple(o.shape) for o in outs])
    op._nodes.append(node)
    tensors = []
    for i, (a, b) in enumerate(zip(*runs)):
        shape = tuple(None if x != y else x for x, y in zip(a, b)) if len(a) == len(b) else a
        t = _graph.KerasTensor(shape, op._compute_dtype(), (op, len(op._nodes) - 1, i))
        t._unbatched = True
        tensors.append(t)
    node.outputs = tensors
    return tensors[:count]


def _is_operation(layer):
    from nnfit.keras.ops._operation import Operation
    return isinstance(layer, Operation)


def feeds(losses, where):
    """The values the losses' operations read that a layer or an input makes, in order."""
    out, seen = [], set()

    def visit(t):
        layer, index, _ = t._history
        if not _is_operation(layer):
            if all(t is not f for f in out):
                out.append(t)
            return
        node = layer._nodes[index]
        if node.id in seen:
            return
        seen.add(node.id)
        for a in node.call_args:
            if hasattr(a, "_variable_json"):
                raise NotImplementedError(
                    f"{where}: add_loss of a value computed from both the call's inputs and the layer's weights "
                    f"({layer.name}) is not supported by nnfit yet; add the inputs' part and the weights' part as two "
                    "add_loss calls (a value of the weights alone is supported)")
        for x in _graph.flatten(node.inputs):
            visit(x)

    for t in losses:
        visit(t)
    return out


def loss_config(name, inputs, losses):
    """The Functional config of the operations from `inputs` (feeds, as InputLayers) to
    `losses`."""
    index = {id(t): i for i, t in enumerate(inputs)}

    def ref(t):
        if id(t) in index:
            history = [f"add_loss_input_{index[id(t)]}", 0, 0]
        else:
            history = [t._history[0].name, 0, t._history[2]]
        return {"class_name": "__keras_tensor__", "config": {"shape": list(t.shape), "dtype": t.dtype,
                                                             "keras_history": history}}

    entries = [{"module": "keras.layers", "class_name": "InputLayer",
                "config": {"batch_shape": list(t.shape), "dtype": t.dtype, "name": f"add_loss_input_{i}"},
                "registered_name": None, "name": f"add_loss_input_{i}", "inbound_nodes": []}
               for i, t in enumerate(inputs)]
    order, seen = [], set()

    def visit(t):
        if id(t) in index:
            return
        layer, i, _ = t._history
        node = layer._nodes[i]
        if node.id in seen:
            return
        seen.add(node.id)
        for x in _graph.flatten(node.inputs):
            visit(x)
        order.append((layer, node))

    for t in losses:
        visit(t)
    for layer, node in order:
        entry = layer._entry()
        entry["name"] = layer.name
        entry["inbound_nodes"] = [layer._inbound(node, ref)]
        entries.append(entry)
    outputs = [ref(t)["config"]["keras_history"] for t in losses]
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": name, "trainable": True, "layers": entries,
                       "input_layers": [[f"add_loss_input_{i}", 0, 0] for i in range(len(inputs))],
                       "output_layers": outputs},
            "registered_name": "Functional"}
