"""Symbolic tensors and the graph of layer calls they record (Keras's Functional API), and
the Keras JSON of a Functional or Sequential model made from them."""
import itertools
import json

from nnfit.keras import _state

# Set while a custom loss or metric is traced (nnfit.keras._custom_objects): shapes are then
# found by running the graph, whose values need not keep the batch axis.
UNBATCHED = []


def _ops():
    from nnfit.keras import ops
    return ops


class KerasTensor:
    """A symbolic tensor: the output of keras.Input or of a layer called on symbolic
    tensors. ``shape`` has None for the batch axis, as Keras's."""

    def __init__(self, shape, dtype, history, name=None):
        self.shape = tuple(shape)
        self.dtype = dtype
        self._history = history  # (layer, node index, tensor index)
        self.name = name or history[0].name

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    # Python's operators record keras.ops calls, as Keras's KerasTensor does.
    def __add__(self, other):
        return _ops().add(self, other)

    def __radd__(self, other):
        return _ops().add(other, self)

    def __sub__(self, other):
        return _ops().subtract(self, other)

    def __rsub__(self, other):
        return _ops().subtract(other, self)

    def __mul__(self, other):
        return _ops().multiply(self, other)

    def __rmul__(self, other):
        return _ops().multiply(other, self)

    def __matmul__(self, other):
        return _ops().matmul(self, other)

    def __rmatmul__(self, other):
        return _ops().matmul(other, self)

    def __truediv__(self, other):
        return _ops().true_divide(self, other)

    def __rtruediv__(self, other):
        return _ops().true_divide(other, self)

    def __floordiv__(self, other):
        return _ops().floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops().floor_divide(other, self)

    def __mod__(self, other):
        return _ops().mod(self, other)

    def __rmod__(self, other):
        return _ops().mod(other, self)

    def __pow__(self, other):
        return _ops().power(self, other)

    def __rpow__(self, other):
        return _ops().power(other, self)

    def __neg__(self):
        return _ops().negative(self)

    def __abs__(self):
        return _ops().absolute(self)

    def __lt__(self, other):
        return _ops().less(self, other)

    def __le__(self, other):
        return _ops().less_equal(self, other)

    def __gt__(self, other):
        return _ops().greater(self, other)

    def __ge__(self, other):
        return _ops().greater_equal(self, other)

    def __and__(self, other):
        return _ops().logical_and(self, other)

    def __rand__(self, other):
        return _ops().logical_and(other, self)

    def __or__(self, other):
        return _ops().logical_or(self, other)

    def __ror__(self, other):
        return _ops().logical_or(other, self)

    def __xor__(self, other):
        return _ops().logical_xor(self, other)

    def __invert__(self):
        return _ops().logical_not(self)

    def __getitem__(self, key):
        return _ops().get_item(self, key)

    def __round__(self, ndigits=None):
        return _ops().round(self, decimals=ndigits or 0)

    def __bool__(self):
        raise TypeError("A symbolic KerasTensor cannot be used as a Python boolean: its value is known only when "
                        "the model runs (use keras.ops.where or compare static shapes)")

    def __iter__(self):
        raise TypeError("A symbolic KerasTensor cannot be iterated (use keras.ops.unstack or index it)")

    def _json(self, node_index):
        layer, _, tensor_index = self._history
        return {"class_name": "__keras_tensor__",
                "config": {"shape": list(self.shape), "dtype": self.dtype,
                           "keras_history": [layer.name, node_index, tensor_index]}}


class Node:
    """One call of a layer: the structure of symbolic tensors it read, and what it made."""

    _ids = itertools.count()

    def __init__(self, layer, inputs):
        self.layer = layer
        self.inputs = inputs  # a KerasTensor, or a list of them (merge layers)
        self.outputs = []
        self.id = next(Node._ids)
        self.positional = False  # inputs passed as separate arguments (mha(query, value)), not one list
        # Tensors passed by keyword (an RNN's initial_state, attention_mask): name -> a tensor or a
        # list of them; or a flag's value (use_causal_mask).
        self.kwargs = {}

    def input_tensors(self):
        if self.inputs is None:
            return []
        own = list(self.inputs) if isinstance(self.inputs, (list, tuple)) else [self.inputs]
        return own + [t for t in flatten(list(self.kwargs.values())) if isinstance(t, KerasTensor)]

    def call_json(self, ref):
        """Keras 3's record of this call ({"args", "kwargs"}), each tensor written by `ref`."""
        if self.positional:  # layer(a, b, c): Keras records each as an argument
            args = [ref(t) for t in self.inputs]
        elif isinstance(self.inputs, (list, tuple)):
            args = [[ref(t) for t in self.inputs]]
        else:
            args = [ref(self.inputs)]
        kwargs = {k: [ref(t) for t in v] if isinstance(v, (list, tuple)) else ref(v) if isinstance(v, KerasTensor)
                  else v for k, v in self.kwargs.items()}  # a flag (use_causal_mask) as its value
        return {"args": args, "kwargs": kwargs}


def flatten(structure):
    if isinstance(structure, (list, tuple)):
        return [t for s in structure for t in flatten(s)]
    if isinstance(structure, dict):
        return [t for s in structure.values() for t in flatten(s)]
    return [structure]


def _collect(outputs):
    """The nodes outputs depend on, each after the nodes it reads (depth-first order)."""
    order, seen = [], set()

    def visit(node):
        if node.id in seen:
            return
        seen.add(node.id)
        for t in node.input_tensors():
            layer, index, _ = t._history
            visit(layer._nodes[index])
        order.append(node)

    for t in outputs:
        layer, index, _ = t._history
        visit(layer._nodes[index])
    return order


def _keras_layer_order(inputs, outputs):
    """The layers in Keras 3's order (keras/src/ops/function.py, map_graph): by depth, the
    most operations from an output first, ties in the order a depth-first walk from the
    outputs first meets them. Keras lists model.layers, writes the config and names the
    weights of a .weights.h5 file in this order, so a branching model (a ResNet block's
    shortcut) must follow it for Keras's files to load."""
    first_seen, finished, post_order = {}, set(), []

    def visit(t):
        layer, index, _ = t._history
        node = layer._nodes[index]
        if node.id in finished:
            return
        first_seen.setdefault(layer, len(first_seen))
        for parent in node.input_tensors():
            visit(parent)
        finished.add(node.id)
        post_order.append(node)

    for t in outputs:
        visit(t)
    node_depth, layer_depth = {}, {}
    for node in reversed(post_order):
        depth = max(node_depth.setdefault(node.id, 0), layer_depth.get(node.layer, 0))
        layer_depth[node.layer] = depth
        node_depth[node.id] = depth
        for t in node.input_tensors():
            layer, index, _ = t._history
            parent = layer._nodes[index]
            node_depth[parent.id] = max(depth + 1, node_depth.get(parent.id, 0))
    for t in inputs:  # an input no output needs is still the model's (Keras: depth 0)
        layer = t._history[0]
        if layer not in layer_depth:
            layer_depth[layer] = 0
            first_seen[layer] = -1
    return sorted(layer_depth, key=lambda layer: (-layer_depth[layer], first_seen[layer]))


def sorted_structure(structure, what):
    """Keras's dict inputs or outputs: (the tensors in the order of the sorted keys, as Keras's
    tree.flatten takes a dict, and the keys); other structures: (flatten(structure), None)."""
    if not isinstance(structure, dict):
        return flatten(structure), None
    keys = sorted(structure)
    for k in keys:
        if not isinstance(k, str):
            raise TypeError(f"Model: the keys of dict {what} must be strings, got {k!r}")
        if isinstance(structure[k], (list, tuple, dict)):
            raise NotImplementedError(f"Model: {what}[{k!r}] is a {type(structure[k]).__name__}; nnfit takes dict "
                                      f"{what} of one tensor per key")
    return [structure[k] for k in keys], keys


def functional_config(name, inputs, outputs, trainable=True, input_keys=None, output_keys=None):
    """Keras 3's Functional config for the graph from `inputs` to `outputs` (KerasTensors);
    with keys, input_layers/output_layers are dicts by key, as Keras writes dict structures."""
    nodes = _collect(outputs)
    for t in inputs:  # an input no output reads is still the graph's (Keras keeps it)
        layer, index, _ = t._history
        if all(n is not layer._nodes[index] for n in nodes):
            nodes.append(layer._nodes[index])
    per_layer = {}
    for node in nodes:
        per_layer.setdefault(node.layer, []).append(node)
    layers = [layer for layer in _keras_layer_order(inputs, outputs) if layer in per_layer]
    # A layer's node indices in this model: the order of its calls here.
    index = {node.id: i for lst in per_layer.values() for i, node in enumerate(lst)}

    def ref(t):
        layer, node_index, tensor_index = t._history
        return t._json(index[layer._nodes[node_index].id])

    def out_ref(t):
        layer, node_index, tensor_index = t._history
        return [layer.name, index[layer._nodes[node_index].id], tensor_index]

    entries = []
    for layer in layers:
        inbound = []
        for node in per_layer[layer]:
            if node.inputs is None:  # an InputLayer's own node
                continue
            if hasattr(layer, "_inbound"):  # a keras.ops operation: its own arguments
                inbound.append(layer._inbound(node, ref))
                continue
            inbound.append(node.call_json(ref))
        entry = layer._entry()
        entry["name"] = layer.name
        entry["inbound_nodes"] = inbound
        entries.append(entry)
    for t in inputs:
        if t._history[0]._class_name != "InputLayer":
            raise ValueError(f"Model inputs must come from keras.Input(), got {t!r}")
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": name, "trainable": trainable, "layers": entries,
                       "input_layers": _refs([out_ref(t) for t in inputs], input_keys),
                       "output_layers": _refs([out_ref(t) for t in outputs], output_keys)},
            "registered_name": "Functional"}


def _refs(refs, keys=None):
    """Keras 3 writes one input or output as its reference, several as a list of them, and a
    dict structure as a dict of them."""
    if keys is not None:
        return dict(zip(keys, refs))
    return refs[0] if len(refs) == 1 else refs


def _local_config(layer, node, tensors):
    """The Functional config of `node`'s call alone, fed by stand-in inputs of its input
    tensors' shapes and dtypes: a built-in layer's output shapes depend on nothing else, and
    this keeps building an N-layer model linear in N (DenseNet121: 428 calls)."""
    sources, names = [], {}
    for t in node.input_tensors():
        if id(t) not in names:
            names[id(t)] = f"__nnfit_source_{len(sources)}"
            sources.append(t)

    def ref(t):
        return {"class_name": "__keras_tensor__",
                "config": {"shape": list(t.shape), "dtype": t.dtype, "keras_history": [names[id(t)], 0, 0]}}

    entries = [{"module": "keras.layers", "class_name": "InputLayer", "name": names[id(t)], "inbound_nodes": [],
                "config": {"batch_shape": list(t.shape), "dtype": t.dtype, "sparse": False, "ragged": False,
                           "name": names[id(t)], "optional": False}, "registered_name": None} for t in sources]
    entry = layer._entry()
    entry["name"] = layer.name
    entry["inbound_nodes"] = [node.call_json(ref)]
    entries.append(entry)
    outputs = [[layer.name, 0, i] for i in range(len(tensors))]
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": "shape_inference", "trainable": True, "layers": entries,
                       "input_layers": _refs([[names[id(t)], 0, 0] for t in sources]),
                       "output_layers": _refs(outputs)},
            "registered_name": "Functional"}


def infer_outputs(layer, node, count, local=False):
    """The KerasTensors a new call makes: shapes from nnfit's engine, which builds the
    graph up to this call exactly as it will build the model. `local` (a built-in layer)
    builds the call alone on inputs of its inputs' shapes first, and the whole graph only
    when that fails (whose error then names the layer as the model would)."""
    from nnfit import _engine  # the extension loads only when a model is built
    _nnfit = _engine.get()

    if not hasattr(layer, "_inbound"):  # a layer on a value of weights alone (Note [Weight-only values])
        from nnfit.keras import _weight_values
        try:
            _weight_values.refuse_layer(layer.name, node.input_tensors())
        except NotImplementedError:
            layer._nodes.pop()
            raise
    if UNBATCHED and not hasattr(layer, "_inbound"):  # a layer, not an operation
        layer._nodes.pop()
        raise NotImplementedError(f"{type(layer).__name__} {layer.name!r} is called inside a custom loss or metric; "
                                  "nnfit traces those with keras.ops on their arguments (layers belong in the model)")

    if local:
        tensors = [KerasTensor((None,), layer._compute_dtype(), (layer, len(layer._nodes) - 1, i))
                   for i in range(count)]
        try:
            shapes = _nnfit.output_shapes(json.dumps(_local_config(layer, node, tensors)), f"layer {layer.name!r}")
        except Exception:
            shapes = None  # the whole graph below gives the error with its context
        if shapes is not None:
            node.outputs = tensors
            for t, shape in zip(tensors, shapes):
                t.shape = tuple(shape)
            return tensors

    sources = node.input_tensors()
    roots = {}
    for n in _collect(sources):
        if n.inputs is None:
            roots[n.layer.name] = n.layer._nodes[0].outputs[0]
    tensors = [KerasTensor((None,), layer._compute_dtype(), (layer, len(layer._nodes) - 1, i)) for i in range(count)]
    node.outputs = tensors
    config = functional_config("shape_inference", list(roots.values()), tensors)
    prefix = {n.layer.name: n.layer for n in _collect(sources) if getattr(n.layer, "_no_engine", False)}
    if prefix:  # the engine starts after the preprocessing layers (Note [Preprocessing prefix])
        from nnfit.keras._prefix import Prefix
        config = Prefix(config, prefix).engine_config
    try:
        if UNBATCHED:
            from nnfit.keras._custom_objects import unbatched_shapes
            shapes = unbatched_shapes(config)
        else:
            shapes = _nnfit.output_shapes(json.dumps(config), f"layer {layer.name!r}")
    except BaseException:
        layer._nodes.pop()
        raise
    for t, shape in zip(tensors, shapes):
        t.shape = tuple(shape)
    return tensors


def unique_name(base):
    return _state.unique_name(base)
