"""Subclassed layers on nnfit's engine (keras.layers.Layer with build, add_weight and call),
traced once into the model's graph (Note [Traced layers] in src/nn/traced_layer.cpp).

Calling a subclassed layer on symbolic tensors builds it (the user's ``build(input_shape)``,
whose ``add_weight`` calls are recorded as weight specs) and runs the user's ``call`` on
fresh symbolic inputs, once with training=True and once with training=False: keras.ops
calls record operation nodes, sublayer calls record layer nodes, a weight enters an
operation as a ``__variable__`` argument. The recorded graph goes into the layer's Keras
entry (key ``nnfit_trace``) beside Keras's own keys, and the engine's TracedLayer emits it
in place: no Python runs in a training step.
"""
import inspect
import json
import re

import numpy as np

from nnfit.keras import _graph, _state, _weight_values
from nnfit.keras._object import KerasObject, to_json_value
from nnfit.keras._registration import registered_name_or_none

# The traces being recorded now, innermost last: {"training": its mode, "inference": the
# sublayers it calls with training=False, "layer": the layer traced, "inputs": its symbolic
# inputs}.
_TRACES = []


def snake(class_name):
    """Keras's naming.to_snake_case: the automatic name of a layer of this class."""
    name = re.sub(r"\W+", "", class_name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def is_custom(cls):
    """Whether `cls` is a user's Layer subclass with its own call (not a generated layer)."""
    from nnfit.keras.layers import Layer
    return getattr(cls, "call", Layer.call) is not Layer.call


def current_trace():
    return _TRACES[-1] if _TRACES else None


class LayerVariable(_graph.KerasTensor):
    """A weight made by ``add_weight``: Keras's Variable (``shape``, ``dtype``, ``name``,
    ``path``, ``trainable``, ``numpy()``). Inside ``call`` it is an operand of keras.ops
    (and of Python's operators), read by the engine as the layer's weight."""

    def __init__(self, layer, name, shape, trainable, spec):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = "float32"
        self.name = name
        self.path = f"{layer.name}/{name}"
        self.trainable = bool(trainable)
        self._layer = layer
        self._spec = spec
        self._history = None

    @property
    def ndim(self):
        return len(self.shape)

    def _index(self):
        return self._layer._ordered_variables().index(self)

    def _variable_json(self):
        return {"class_name": "__variable__",
                "config": {"index": self._index(), "shape": list(self.shape), "name": self.name}}

    def numpy(self):
        values = self._layer.get_weights()
        if not values:
            raise ValueError(f"{self.path}: the layer's weights are made when its model is built (call the model, "
                             "fit, predict or build first)")
        return np.array(values[self._index()])

    @property
    def value(self):
        return self.numpy()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def assign(self, value):
        raise NotImplementedError(f"{self.path}: assigning a variable is not supported by nnfit (its value lives in "
                                  "the engine, and a step runs no Python); use layer.set_weights outside call(), "
                                  "or a keras.metrics object for a running total")

    assign_add = assign_sub = assign

    def __repr__(self):
        return f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}>"


def add_weight(layer, shape=None, initializer=None, dtype=None, trainable=True, autocast=True, regularizer=None,
               constraint=None, aggregation="none", overwrite_with_gradient=False, name=None):
    """Keras's Layer.add_weight, recorded for the trace (the engine makes the weight)."""
    where = f"{type(layer).__name__} {layer.name!r}: add_weight"
    if dtype is not None and str(getattr(dtype, "name", dtype)) != "float32":
        raise NotImplementedError(f"{where}(dtype={dtype!r}) is not supported by nnfit (float32 weights only)")
    if overwrite_with_gradient or aggregation not in ("none", "mean", "sum", "only_first_replica", None):
        raise NotImplementedError(f"{where}: aggregation and overwrite_with_gradient are not supported by nnfit")
    shape = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    if any(d is None or int(d) < 0 for d in shape):
        raise ValueError(f"{where}: the shape {shape} must be fully known (sizes >= 0)")
    taken = {v.name for v in layer._variables}
    base = name or "variable"
    name = base
    n = 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    spec = {"name": name, "shape": [int(d) for d in shape], "dtype": "float32",
            "initializer": _initializer_json(initializer, where), "trainable": bool(trainable),
            "regularizer": _object_json(regularizer, where, "regularizer"),
            "constraint": _object_json(constraint, where, "constraint")}
    v = LayerVariable(layer, name, shape, trainable, spec)
    layer._variables.append(v)
    return v


def _initializer_json(value, where):
    if value is None:
        return "glorot_uniform"
    if isinstance(value, str):
        return value
    if isinstance(value, KerasObject):
        return value.serialize()
    raise NotImplementedError(f"{where}: initializer {value!r} is not supported by nnfit (a Keras initializer's name "
                              "or a keras.initializers object)")


def _object_json(value, where, what):
    if value is None:
        return None
    if isinstance(value, (str, dict)):
        return value
    if isinstance(value, KerasObject):
        return value.serialize()
    if hasattr(value, "get_config"):
        return {"class_name": type(value).__name__, "config": to_json_value(value.get_config(), where)}
    raise NotImplementedError(f"{where}: {what} {value!r} is not supported by nnfit (a name or a keras.{what}s object)")


def _takes(fn, name):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())


def _shape_arg(tensors, structure):
    """What Keras's build gets: a shape tuple, or the inputs' structure of them."""
    if isinstance(structure, (list, tuple)):
        return [tuple(t.shape) for t in tensors]
    return tuple(tensors[0].shape)


# nnfit.keras's own attributes of a layer, never sublayers (the outer model is in _model).
_INTERNAL = {"_model", "_nodes", "_trace", "_trace_outputs", "_variables", "_args", "_carried", "_traced_in",
             "_traced_children"}


def _adopt_sublayers(layer):
    """Links each sublayer (attribute, or in a list or dict) to `layer`, whose weights hold
    its own: its get_weights/weights/set_weights read and write them there (_weights.py)."""
    from nnfit.keras.layers import Layer
    from nnfit.keras.models import Model
    children = []
    for attr in vars(layer):
        if attr.startswith("__") or attr in _INTERNAL:
            continue
        value = getattr(layer, attr)
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, (Layer, Model)) and item is not layer and item not in children:
                children.append(item)
                item._traced_in = layer
    layer._traced_children = children


def _sublayer_paths(layer):
    """Each sublayer's attribute path in `layer`, as Keras's files name its group: a layer (or
    model) attribute by its name, a list's or dict's layers under "<attribute>/<class in snake
    case>"."""
    from nnfit.keras.layers import Layer
    from nnfit.keras.models import Model
    paths = {}
    attrs = sorted((k for k in vars(layer) if not k.startswith("__") and k not in _INTERNAL), key=lambda k: f"~{k}" if k.startswith("_") else k)
    for attr in attrs:
        value = getattr(layer, attr)
        if isinstance(value, (Layer, Model)) and value is not layer:
            paths.setdefault(value.name, attr)
        elif isinstance(value, (list, tuple, dict)):
            used = {}
            for item in (value.values() if isinstance(value, dict) else value):
                if isinstance(item, Layer):
                    base = snake(type(item).__name__ if is_custom(type(item)) else item._class_name)
                    n = used.get(base)
                    used[base] = 0 if n is None else n + 1
                    paths.setdefault(item.name, f"{attr}/{base}" + ("" if n is None else f"_{n + 1}"))
    return paths


def call_symbolic(layer, inputs, args, kwargs):
    """The layer's call on symbolic inputs: traced (once per layer), recorded as one node of
    the outer graph; returns its symbolic outputs."""
    cls = type(layer).__name__
    where = f"{cls} {layer.name!r}"
    kwargs = dict(kwargs)
    training = kwargs.pop("training", None)
    if kwargs.pop("mask", None) is not None:
        raise NotImplementedError(f"{where}: a mask= argument is not supported by nnfit for subclassed layers")
    flat = _graph.flatten(inputs)
    _weight_values.refuse_layer(layer.name, flat)
    if not flat or not all(isinstance(t, _graph.KerasTensor) and not isinstance(t, LayerVariable) for t in flat):
        raise NotImplementedError(f"{where}: nnfit calls layers on symbolic tensors (keras.Input(...) and layer "
                                  "outputs); build a model and use predict() for arrays")
    masked = _masked_inputs(layer, flat)
    signature = [(tuple(t.shape[1:]), str(t.dtype)) for t in flat] + [("mask", m) for m in masked or []]
    if layer._trace is None:
        if not layer._custom_built:
            layer.build(_shape_arg(flat, inputs))
            layer._custom_built = True
        layer._build_shape = _shape_arg(flat, inputs)
        layer._trace, layer._trace_outputs, layer._trace_structure = _trace(layer, flat, inputs, args, kwargs, masked)
        layer._trace_signature = signature
    elif signature != layer._trace_signature:
        raise NotImplementedError(
            f"{where}: traced for inputs {layer._trace_signature}, called on {signature}; nnfit traces a layer's "
            "call once, for the shapes (and masks) of its first call (make another instance for other ones)")
    _note_training(layer, training, where)
    node = _graph.Node(layer, list(inputs) if isinstance(inputs, (list, tuple)) else inputs)
    layer._nodes.append(node)
    index = len(layer._nodes) - 1
    outputs = [_graph.KerasTensor(t.shape, t.dtype, (layer, index, i)) for i, t in enumerate(layer._trace_outputs)]
    node.outputs = outputs
    return outputs if layer._trace_structure == "list" else outputs[0]


def batched_constant(value, where):
    """A constant array a layer is called on inside a traced call (keras.io's positional
    embedding: ``self.pos_emb(ops.arange(maxlen))``) as a symbolic tensor with the batch axis,
    [batch, *shape], made from the trace's first input: nnfit's graph values are batched, and
    a row-wise layer gives each row what Keras gives once, which then broadcasts the same."""
    from nnfit.keras import ops
    trace = current_trace()
    value = np.asarray(value)
    if trace is None or value.dtype.kind not in "biuf":
        raise NotImplementedError(f"{where}: nnfit calls layers on symbolic tensors (keras.Input(...) and layer "
                                  "outputs); build a model and use predict() for arrays")
    first = trace["inputs"][0]
    zero = ops.multiply(ops.cast(first, "float32"), 0.0)
    if len(first.shape) > 1:
        zero = ops.sum(zero, axis=tuple(range(1, len(first.shape))))
    row = ops.reshape(zero, (-1,) + (1,) * value.ndim)
    out = ops.add(row, value.astype("float32"))
    return out if value.dtype.kind == "f" else ops.cast(out, "int32")


def _masked_inputs(layer, flat):
    """Which of the inputs carry a Keras mask, when the layer takes or passes on masks (its
    call has a `mask` argument, or it supports masking): the engine says, from the graph
    that made them (Note [Masks of traced layers] in src/nn/traced_layer.cpp). None when
    the layer does neither."""
    if not (_call_takes_mask(layer) or layer.supports_masking):
        return None
    if current_trace() is not None:  # inside a traced call: its inputs carry none (pass mask= explicitly)
        return [False] * len(flat)
    from nnfit import _engine
    roots = {}
    for n in _graph._collect(flat):
        if n.inputs is None:
            roots[n.layer.name] = n.layer._nodes[0].outputs[0]
    config = _graph.functional_config("masks", list(roots.values()), flat)
    prefix = {n.layer.name: n.layer for n in _graph._collect(flat) if getattr(n.layer, "_no_engine", False)}
    if prefix:  # the engine starts after the preprocessing layers (Note [Preprocessing prefix])
        from nnfit.keras._prefix import Prefix
        config = Prefix(config, prefix).engine_config
    return list(_engine.get().output_masks(json.dumps(config), f"layer {layer.name!r}"))


def _call_takes_mask(layer):
    """Whether the layer's call takes `mask` (a Lambda: whether its function does)."""
    takes = getattr(layer, "_call_takes_mask", None)
    return takes() if takes is not None else _explicit(layer.call, "mask")


def _explicit(fn, name):
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _note_training(layer, training, where):
    """A training= argument inside a trace: the trace's own mode (or None) changes nothing;
    training=False while tracing in training mode makes this layer's calls run in inference
    mode (Keras's Python call would run it so); outside a trace, Keras's Functional models
    pass the model's mode instead of a recorded flag, and so does nnfit."""
    trace = current_trace()
    if trace is None or training is None or bool(training) == trace["training"]:
        return
    if trace["training"] and not training:
        trace["inference"].add(layer.name)
        return
    raise NotImplementedError(f"{where}: called with training=True inside a call traced for inference; nnfit runs "
                              "a layer in the model's mode (or training=False for inference only)")


def _trace(layer, flat, inputs, args, kwargs, masked=None):
    """(the trace object, its output tensors, "list" or "one") of layer.call on inputs like
    `flat`; `masked` says which inputs carry a mask (None: the layer takes no masks)."""
    where = f"{type(layer).__name__} {layer.name!r}"
    from nnfit.keras.layers import InputLayer
    results = []
    for training in (True, False):
        saved = _state.push_names()
        try:
            tensors = [InputLayer(batch_shape=(None,) + tuple(t.shape[1:]), dtype=t.dtype,
                                  name=f"{layer.name}_input_{i}")._nodes[0].outputs[0] for i, t in enumerate(flat)]
            _TRACES.append({"training": training, "inference": set(), "layer": layer, "inputs": tensors, "losses": [],
                            "weight_values": _weight_values.WeightTrace(layer)})
            structured = list(tensors) if isinstance(inputs, (list, tuple)) else tensors[0]
            call_kwargs = dict(kwargs)
            if _takes(layer.call, "training"):
                call_kwargs["training"] = training
            masks = [InputLayer(batch_shape=(None,) + tuple(t.shape[1:-1]), dtype="bool",
                                name=f"{layer.name}_mask_{i}")._nodes[0].outputs[0] if m else None
                     for i, (t, m) in enumerate(zip(flat, masked or []))]
            mask = (masks if isinstance(inputs, (list, tuple)) else masks[0]) if masked is not None else None
            if masked is not None and _call_takes_mask(layer):  # Keras's Layer.__call__, step 6
                call_kwargs["mask"] = mask
            outputs = layer.call(structured, *args, **call_kwargs)
            out_masks = _output_masks(layer, structured, mask, masks, outputs) if masked is not None else None
        finally:
            trace = _TRACES.pop()
            _state.pop_names(saved)
        structure = "list" if isinstance(outputs, (list, tuple)) else "one"
        outs = _graph.flatten(outputs)
        if isinstance(outputs, dict):
            raise NotImplementedError(f"{where}: call() returns a dict; nnfit's subclassed layers return a tensor or "
                                      "a list of them")
        _check_outputs(outs, where)
        losses = None
        mask_info, mask_outs = _mask_entries(out_masks, masks, len(outs), where)
        feeds = _added_losses_feeds(trace, where)
        used = {n.layer for n in _graph._collect(outs + mask_outs + feeds)}
        fed = [m for m in masks if m is not None and m._history[0] in used]  # the graph's inputs after the layer's
        if trace["losses"]:  # add_loss: its operations' own graph, fed by extra outputs
            from nnfit.keras import _added_losses
            losses = _added_losses.loss_config(f"{layer.name}_losses", feeds, trace["losses"])
            graph = _graph.functional_config(f"{layer.name}_call", tensors + fed, outs + mask_outs + feeds)
        else:
            graph = _graph.functional_config(f"{layer.name}_call", tensors + fed, outs + mask_outs)
        if fed:
            mask_info["mask_inputs"] = [i for i, m in enumerate(masks) if any(m is f for f in fed)]
        values = trace["weight_values"].config(f"{where}: call()")
        results.append(({"graph": graph, "losses": losses, "weight_values": values, **mask_info}, trace["inference"],
                        outs, structure))
    (both, inference, outs, structure), (other, _, _, _) = results
    graph, losses, values = both["graph"], both["losses"], both["weight_values"]
    two_modes = None
    if _canonical(both) != _canonical(other):
        added = [v["losses"] for v in (values, other["weight_values"]) if v is not None]
        if losses is not None or other["losses"] is not None or any(added) or "mask_inputs" in both or \
                "output_masks" in both:
            raise NotImplementedError(
                f"{where}: call() makes different graphs with training=True and training=False (it branches on "
                "`training`) and uses masks or add_loss, which nnfit does not trace in two modes yet: pass training "
                "to sublayers (Dropout, BatchNormalization, ...) instead of branching on it")
        graph, inference, two_modes, values = _trace_two_modes(layer, flat, inputs, args, kwargs, outs)
    paths = _sublayer_paths(layer)
    _adopt_sublayers(layer)
    trace = {"weights": [v._spec for v in layer._ordered_variables()],
             "sublayers": [[name, paths[name]] for name in _tracked_order(layer) if _in_graph(graph, name)],
             "inference_layers": sorted(inference), "graph": graph}
    trace.update({k: both[k] for k in ("mask_inputs", "output_masks") if k in both})
    if two_modes is not None:
        trace["inference_outputs"] = two_modes
    if losses is not None:
        trace.update(losses=losses, num_outputs=len(outs))
    if values is not None:  # Note [Weight-only values]
        trace["weight_values"] = values
    return trace, outs, structure


def _check_outputs(outs, where):
    for o in outs:
        if _weight_values.is_value(o):
            raise NotImplementedError(
                f"{where}: call() returns {o.name!r}, a value computed from the layer's weights alone (no batch axis); "
                "nnfit's layer outputs carry the batch: combine it with the inputs (ops.add, ops.multiply, "
                "ops.matmul, ...), e.g. ops.zeros_like(x) + value for an input x")
        if isinstance(o, LayerVariable) or not isinstance(o, _graph.KerasTensor):
            raise TypeError(f"{where}: call() must return symbolic tensors computed from its inputs with keras.ops "
                            f"and layers, got {o!r}")


def _trace_two_modes(layer, flat, inputs, args, kwargs, training_outs):
    """A call that branches on `training` (Note [Traced layers in two modes] in
    src/nn/traced_layer.cpp): both calls on the same symbolic inputs, one graph whose outputs
    are the training call's, then the inference call's. Returns (graph, the sublayers called
    with training=False in the training call, the first inference output's index, the
    weight-only values both calls read)."""
    from nnfit.keras.layers import InputLayer
    weights = _weight_values.WeightTrace(layer)
    where = f"{type(layer).__name__} {layer.name!r}"
    saved = _state.push_names()
    try:
        tensors = [InputLayer(batch_shape=(None,) + tuple(t.shape[1:]), dtype=t.dtype,
                              name=f"{layer.name}_input_{i}")._nodes[0].outputs[0] for i, t in enumerate(flat)]
        structured = list(tensors) if isinstance(inputs, (list, tuple)) else tensors[0]
        made = []
        for training in (True, False):
            _TRACES.append({"training": training, "inference": set(), "layer": layer, "inputs": tensors, "losses": [],
                            "weight_values": weights})
            try:
                outputs = layer.call(structured, *args,
                                     **(dict(kwargs, training=training) if _takes(layer.call, "training") else kwargs))
            finally:
                made.append((_graph.flatten(outputs), _TRACES.pop()))
    finally:
        _state.pop_names(saved)
    (train, train_trace), (infer, _) = made
    _check_outputs(train + infer, where)
    shapes = [(tuple(o.shape), o.dtype) for o in train]
    if [(tuple(o.shape), o.dtype) for o in infer] != shapes or shapes != [(tuple(o.shape), o.dtype) for o in training_outs]:
        raise NotImplementedError(f"{where}: call() gives outputs of other shapes or dtypes with training=False than "
                                  f"with training=True ({[tuple(o.shape) for o in infer]} and {[s for s, _ in shapes]})")
    graph = _graph.functional_config(f"{layer.name}_call", tensors, train + infer)
    return graph, train_trace["inference"], len(train), weights.config(f"{where}: call()")


def _added_losses_feeds(trace, where):
    """The values add_loss's graph reads, fed to it by extra outputs of the call's graph."""
    if not trace["losses"]:
        return []
    from nnfit.keras import _added_losses
    return _added_losses.feeds(trace["losses"], f"{where}: add_loss")


def _output_masks(layer, inputs, mask, masks, outputs):
    """Keras's _set_mask_metadata: compute_mask(inputs, previous mask) per output when the
    layer supports masking, else none (the mask stops here, as in Keras)."""
    if not layer.supports_masking:
        return None
    previous = mask if mask is not None else (masks if isinstance(inputs, list) else masks[0])
    return layer.compute_mask(inputs, previous)


def _mask_entries(out_masks, masks, count, where):
    """The trace's "output_masks" (per call output: None, {"input": k} for the mask of input
    k passed on, {"output": j} for a computed one, graph output j after the call's) and the
    computed masks' tensors."""
    if out_masks is None:
        return {}, []
    flat = _graph.flatten(out_masks)
    entries, computed = [], []
    for m in flat[:count] + [None] * (count - len(flat)):
        if m is None:
            entries.append(None)
        elif any(m is f for f in masks):
            entries.append({"input": next(i for i, f in enumerate(masks) if f is m)})
        elif isinstance(m, _graph.KerasTensor) and not isinstance(m, LayerVariable):
            entries.append({"output": len(computed)})
            computed.append(m)
        else:
            raise TypeError(f"{where}: compute_mask must return None or symbolic tensors computed with keras.ops, "
                            f"got {m!r}")
    return ({"output_masks": entries} if any(e is not None for e in entries) else {}), computed


def tracked_sublayers(obj):
    """The layers and models a layer or model holds, in Keras's tracking order (attribute
    assignment, lists in order), which orders its weights."""
    from nnfit.keras.layers import Layer
    from nnfit.keras.models import Model
    out = []
    for key, value in vars(obj).items():
        if key in _INTERNAL:
            continue
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, (Layer, Model)) and item is not obj and all(item is not o for o in out):
                out.append(item)
    return out


def _tracked_order(layer):
    return [item.name for item in tracked_sublayers(layer)]


def _in_graph(graph, name):
    return any(e.get("name") == name for e in graph["config"]["layers"])


def _canonical(graph):
    return json.dumps(graph, sort_keys=True)


def entry(layer):
    """The layer's Keras entry, as Keras writes a subclassed layer, with nnfit's trace."""
    cls = type(layer)
    registered = registered_name_or_none(cls)
    if layer._trace is None:
        raise ValueError(f"{cls.__name__} {layer.name!r}: the layer has never been called on symbolic tensors, so "
                         "nnfit has not traced it (call it on keras.Input(...) or give the model an input shape)")
    config = to_json_value(layer.get_config(), f"{cls.__name__}.get_config()")
    shape = layer._build_shape
    build = [list(s) for s in shape] if shape and isinstance(shape[0], (list, tuple)) else list(shape)
    return {"module": None if registered else cls.__module__, "class_name": cls.__name__, "config": config,
            "registered_name": registered or cls.__name__, "build_config": {"input_shape": build},
            "nnfit_trace": layer._trace}


def from_entry(entry, cls):
    """The Python object of a traced layer read from a file: `cls`'s (its from_config, then
    its build for the recorded input shape, so its add_weight attributes exist), or, when
    the class is not known here, a stand-in holding the file's config and trace."""
    config = dict(entry["config"])
    shape = (entry.get("build_config") or {}).get("input_shape")
    if cls is None:
        layer = _as_loaded_class()(entry["class_name"], config)
        layer._trace = entry["nnfit_trace"]
    else:  # a call on new tensors traces it again; the engine's model keeps the file's graph
        layer = cls.from_config(config)
        if shape is not None and not layer._custom_built:
            layer.build(tuple(tuple(s) for s in shape) if shape and isinstance(shape[0], list) else tuple(shape))
            layer._custom_built = True
    layer._build_shape = shape
    return layer


_AS_LOADED = []  # the stand-in class, made once (layers imports this module, so not at import)


def _as_loaded_class():
    if _AS_LOADED:
        return _AS_LOADED[0]
    from nnfit.keras.layers import Layer

    class AsLoaded(Layer):
        """A traced layer loaded without its Python class: the engine runs its recorded graph;
        its config and weights are readable, but it cannot be called on new tensors."""

        def __init__(self, class_name, config):
            dtype = config.get("dtype")
            super().__init__(name=config.get("name"), trainable=config.get("trainable", True),
                             dtype=dtype.get("config", {}).get("name") if isinstance(dtype, dict) else dtype)
            self._class_name = class_name
            self._config = config
            self._custom_built = True

        def __call__(self, inputs, *args, **kwargs):
            self.call(inputs)

        def call(self, inputs, *args, **kwargs):
            raise NotImplementedError(
                f"{self._class_name} {self.name!r}: loaded without its Python class, so it cannot be called again; "
                "pass custom_objects={...} to load_model or register the class with "
                "keras.saving.register_keras_serializable")

        def get_config(self):
            return dict(self._config)

    _AS_LOADED.append(AsLoaded)
    return AsLoaded
