"""A .keras file written by Keras whose Functional or Sequential model holds subclassed
layers (which Keras saves as their class and config only, without a graph): the model is
remade in Python (and so is one whose layers have Python functions as activations), as
Keras's load_model remakes it (each subclassed layer from its class's
from_config, found in ``custom_objects`` or keras.saving's registry, and traced by its first
call), then its weights are read from the file, whose layout the traced model shares."""
from nnfit.keras import _keras_zip, _registration
from nnfit.keras import layers as layers_module


def needs_retrace(filepath, custom_objects):
    """Whether the file is a .keras zip with subclassed layers nnfit can remake (their class
    is known and their entries carry no nnfit trace)."""
    config = _keras_zip.file_config(filepath)
    if config is None or config.get("class_name") not in ("Functional", "Sequential"):
        return False
    inner = config.get("config")
    entries = inner.get("layers") if isinstance(inner, dict) else None
    if not isinstance(entries, list):
        return False  # not a model config nnfit knows: the engine names what is wrong
    entries = [e for e in entries if isinstance(e, dict)]
    custom = [e for e in entries if _is_custom_entry(e)]
    functions = [e for e in entries if _untraced_activation(e)]
    return bool(custom or functions) and all(_registration.find_class(e, custom_objects) is not None for e in custom) \
        and all(_activation_function(e, custom_objects) is not None for e in functions)


def _untraced_activation(entry):
    """Whether a layer entry's activation is a Python function Keras wrote (no nnfit trace)."""
    a = (entry.get("config") or {}).get("activation") if isinstance(entry.get("config"), dict) else None
    return isinstance(a, dict) and a.get("class_name") == "function" and "nnfit_trace" not in a


def _activation_function(entry, custom_objects):
    """The function an entry's activation names, from custom_objects or the registry, or None."""
    from nnfit.keras import activations
    from nnfit.keras._traced_activation import is_traced
    try:
        fn = activations.deserialize(entry["config"]["activation"], custom_objects=custom_objects)
    except (ValueError, TypeError, KeyError):
        return None
    return fn if is_traced(fn) else None


def refuse_subclassed_model(filepath):
    """A .keras file of a subclassed model saved by Keras (its class at the top, its weights
    under attribute paths): not loadable by nnfit yet; says so naming the class."""
    config = _keras_zip.file_config(filepath)
    cls = config.get("class_name") if isinstance(config, dict) else None
    if cls and cls not in ("Functional", "Sequential", "Model"):
        raise NotImplementedError(
            f"load_model: {filepath} holds Keras's subclassed model {cls!r} (its class and its weights under "
            "attribute paths), which nnfit cannot load yet; in Keras, save it as a Functional model "
            "(inputs = keras.Input(...); keras.Model(inputs, model(inputs)).save(...)) and load that")


def _is_custom_entry(entry):
    if "nnfit_trace" in entry or str(entry.get("module") or "").startswith("keras"):
        return False
    return entry.get("class_name") not in ("InputLayer", "Functional", "Sequential")


def _make_layer(entry, custom_objects):
    from nnfit.keras._preprocessing import CLASSES
    if entry["class_name"] in CLASSES and str(entry.get("module", "")).startswith("keras"):
        cls = CLASSES[entry["class_name"]]  # a callable standardize or split comes from custom_objects
        config = dict(entry["config"])
        return cls.from_config(config, custom_objects) if entry["class_name"] == "TextVectorization" \
            else cls.from_config(config)
    if _is_custom_entry(entry):
        return _registration.find_class(entry, custom_objects).from_config(dict(entry["config"]))
    if str(entry.get("module", "")).startswith("keras.src.ops."):
        raise NotImplementedError(f"load_model: the file's operation {entry['class_name']!r} beside subclassed "
                                  "layers cannot be remade by nnfit; save the model with nnfit, or without keras.ops")
    if entry["class_name"] in ("Functional", "Sequential"):
        if any(_is_custom_entry(e) for e in entry["config"].get("layers", [])):
            raise NotImplementedError(f"load_model: a nested model ({entry['config'].get('name')!r}) with subclassed "
                                      "layers cannot be remade by nnfit yet")
        return from_config({"class_name": entry["class_name"], "config": entry["config"]}, custom_objects)
    if _untraced_activation(entry):  # traced at its call (nnfit.keras._traced_activation)
        layer = layers_module.deserialize({**entry, "config": {**entry["config"], "activation": "linear"}})
        layer._args["activation"] = _activation_function(entry, custom_objects)
        return layer
    return layers_module.deserialize(entry)


def load(filepath, custom_objects, compile, prefix=False):
    """The file's model remade with its subclassed layers traced (or its preprocessing layers
    made, their assets read: Note [Preprocessing prefix]), its weights from the file."""
    config = _keras_zip.file_config(filepath)  # read before: needs_retrace or the prefix check
    model = from_config(config, custom_objects)
    if prefix:
        from nnfit.keras import _prefix
        model._handle_or_build()
        _prefix.load_assets(filepath, model._prefix.prefix_layers(), config)
    model.load_weights(str(filepath))
    compile_config = config.get("compile_config")
    if compile and compile_config:
        from nnfit.keras import _custom_objects
        compile_config = dict(compile_config)
        loss = compile_config.get("loss")
        if isinstance(loss, dict) and "class_name" in loss:  # one loss object for every output
            compile_config["loss"] = [loss] * max(1, len(model._output_names()))
        _custom_objects.compile_from_config(model, compile_config, custom_objects)
    return model


def from_config(config, custom_objects):
    """A model remade in Python from its Keras config (Functional or Sequential)."""
    from nnfit.keras.models import Model
    from nnfit.keras._sequential import Sequential
    body = config["config"]
    if config["class_name"] == "Sequential":
        model = Sequential(name=body.get("name"))
        for entry in body["layers"]:
            if entry["class_name"] == "InputLayer":
                c = entry["config"]
                model.add(layers_module.InputLayer(batch_shape=c.get("batch_shape"), dtype=c.get("dtype"),
                                                   name=c.get("name")))
            else:
                model.add(_make_layer(entry, custom_objects))
        shape = (body.get("build_input_shape") or (config.get("build_config") or {}).get("input_shape"))
        if model._input is None and shape:
            model._set_input_from(tuple(shape)[1:])
    else:
        model = _functional(body, custom_objects, Model)
    return model


def _functional(body, custom_objects, Model):
    """A Functional config's calls replayed in Python, each once the tensors it reads exist."""
    made, tensors, pending = {}, {}, []
    for entry in body["layers"]:
        name = entry.get("name") or entry["config"]["name"]
        if entry["class_name"] == "InputLayer":
            c = entry["config"]
            tensor = layers_module.Input(batch_shape=c.get("batch_shape"), dtype=c.get("dtype"), name=c.get("name"))
            tensors[(name, 0, 0)] = tensor
        else:
            made[name] = _make_layer(entry, custom_objects)
            offset = _node_offset(entry)
            pending.extend((name, i + offset, node) for i, node in enumerate(entry.get("inbound_nodes", [])))
    while pending:
        progress = False
        for item in list(pending):
            name, index, node = item
            try:
                args = [_resolve(a, tensors) for a in node.get("args", [])]
                kwargs = {k: _resolve(v, tensors) for k, v in (node.get("kwargs") or {}).items()}
            except KeyError:
                continue  # reads a tensor not made yet
            outputs = made[name](*args, **kwargs)
            for k, t in enumerate(outputs if isinstance(outputs, (list, tuple)) else [outputs]):
                tensors[(name, index, k)] = t
            pending.remove(item)
            progress = True
        if not progress:
            raise ValueError(f"load_model: the file's calls {[(n, i) for n, i, _ in pending]} read tensors no layer "
                             "makes")

    def refs(value):
        value = [value] if value and isinstance(value[0], str) else value
        return [tensors[tuple(r[:3])] for r in value]
    inputs, outputs = refs(body["input_layers"]), refs(body["output_layers"])
    return Model(inputs if len(inputs) > 1 else inputs[0], outputs if len(outputs) > 1 else outputs[0],
                 name=body.get("name"))


def _node_offset(entry):
    """Where a layer's calls start in Keras's node numbering: a nested model built on its own
    Input already has node 0 when the outer model calls it, so Keras refers to its first call
    as node 1 (Note [Keras 2 node indices] in src/model/keras/keras_model_config.cpp: Keras 3's
    files do the same)."""
    if entry["class_name"] == "Functional":
        return 1
    if entry["class_name"] == "Sequential":
        first = (entry["config"].get("layers") or [{}])[0]
        return 1 if first.get("class_name") == "InputLayer" else 0
    return 0


def _resolve(value, tensors):
    """A call argument of the file: its keras tensors as the tensors made so far."""
    if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
        return tensors[tuple(value["config"]["keras_history"])]
    if isinstance(value, list):
        return [_resolve(v, tensors) for v in value]
    return value
