"""keras.models.load_model and model_from_json on nnfit's engine: the engine reads the file
(the reader the CLI uses) and the Python model is made over it, its layers from the
file's Keras config: subclassed layers from ``custom_objects`` or the classes registered
with keras.saving.register_keras_serializable, else as the engine holds them. A file Keras
wrote with subclassed layers (no nnfit trace in it) is remade in Python: _retrace.py."""
import json

from nnfit.keras import _custom_objects, _state
from nnfit.keras import layers as layers_module
from nnfit.keras.models import Functional, Model, _engine
from nnfit.keras._sequential import Sequential


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Keras's load_model: a .keras or .h5 file (written by Keras or nnfit), with its
    weights, compiled from the file's compile config when ``compile``."""
    from nnfit.keras import _keras_zip, _prefix, _retrace
    if _keras_zip.is_regular_file(filepath) and not str(filepath).endswith((".keras", ".h5", ".hdf5")):
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports V3 `.keras` files, "
                         "legacy H5 format files (`.h5` extension).")  # Keras's words; others go to the engine
    config = _prefix.file_config(filepath)
    if config is not None and _prefix.has_prefix(config):  # preprocessing layers: remade here, assets read
        return _retrace.load(filepath, custom_objects, compile, prefix=True)
    if _retrace.needs_retrace(filepath, custom_objects):  # Keras's file of subclassed layers: remade here
        return _retrace.load(filepath, custom_objects, compile)
    _retrace.refuse_subclassed_model(filepath)
    # Custom losses and metrics Keras wrote (no nnfit trace in the file) are remade from
    # custom_objects and compiled here (Note [Traced losses and metrics]).
    compile_config = _custom_compile_config(filepath) if compile else None
    handle = _engine().Model.load(str(filepath), bool(compile) and compile_config is None, _state.next_seed(),
                                  _state.device())
    model = _from_engine(handle, custom_objects)
    if compile_config is not None:
        _custom_objects.compile_from_config(model, compile_config, custom_objects, safe_mode)
    elif handle.compiled and isinstance(config, dict):
        model._file_compile_config = config.get("compile_config")  # get_compile_config's answer
    return model


def _custom_compile_config(filepath):
    """A .keras file's compile_config when it holds custom losses or metrics without nnfit's
    trace, else None."""
    from nnfit.keras import _keras_zip
    config = _keras_zip.file_config(filepath)
    compile_config = config.get("compile_config") if config is not None else None
    if compile_config and _custom_objects.has_untraced_custom(compile_config):
        return compile_config
    return None


def _from_engine(handle, custom_objects=None):
    """A Python model over a model the engine built (from a file): its layers from the
    engine's Keras config."""
    config = json.loads(handle.to_json())
    entries = config["config"]["layers"]
    if config["class_name"] == "Sequential":
        model = Sequential(name=config["config"]["name"])
        for entry in entries:
            if entry["class_name"] == "InputLayer":
                c = entry["config"]
                model._input = layers_module.InputLayer(batch_shape=c.get("batch_shape"), dtype=c.get("dtype"),
                                                        name=c.get("name"))
            else:
                model._layers.append(_layer(entry, custom_objects))
                model._stack.append(model._layers[-1])
    else:
        model = Model.__new__(Functional)  # Keras loads a Functional config as a Functional
        model._handle, model._compile_args, model.optimizer, model.loss = None, None, None, None
        model.trainable = True
        model.name = config["config"]["name"]
        # Keras's operation nodes (module keras.src.ops.*) are nodes of the graph, not layers.
        model._layers = [_layer(e, custom_objects) if e["class_name"] != "InputLayer" else
                         layers_module.InputLayer(batch_shape=e["config"].get("batch_shape"),
                                                  dtype=e["config"].get("dtype"), name=e["config"].get("name"))
                         for e in entries if not str(e.get("module", "")).startswith("keras.src.ops.")]
        model._input_keys = sorted(config["config"]["input_layers"]) \
            if isinstance(config["config"]["input_layers"], dict) else None
        model._output_keys = sorted(config["config"]["output_layers"]) \
            if isinstance(config["config"]["output_layers"], dict) else None
        names = [e[0] for e in _as_refs(config["config"]["input_layers"])]
        model.inputs = [l._nodes[0].outputs[0] for l in model._layers if l.name in names]
        model.outputs = []
        model._config = config
    model._handle = handle
    for layer in model._layers:
        layer._model = model
    if handle.compiled:
        model._compile_args = ("engine", None, None, None, False, None)
        model.optimizer = _EngineOptimizer(model)
    return model


def _as_refs(refs):
    if isinstance(refs, dict):  # Keras's dict structure: the references in sorted-key order
        return [refs[k] for k in sorted(refs)]
    return [refs] if refs and isinstance(refs[0], str) else refs


class _EngineOptimizer:
    """A loaded model's optimizer, as the engine holds it (its learning rate and iterations)."""

    def __init__(self, model):
        self._model = model

    @property
    def learning_rate(self):
        return self._model._handle.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._model._handle.learning_rate = float(value)

    @property
    def iterations(self):
        return self._model._handle.iterations


def model_from_json(json_string, custom_objects=None):
    """Keras's model_from_json: an uncompiled model from Keras JSON."""
    from nnfit.keras import _prefix, _retrace
    try:
        config = json.loads(json_string)
    except RecursionError:  # the engine refuses JSON nested past 512 levels; Python's parser stops first
        raise ValueError("model_from_json: the JSON is nested too deeply to be a model config") from None
    if not isinstance(config, dict):
        raise ValueError("model_from_json: expected a model config (a JSON object), got a JSON "
                         f"{type(config).__name__}")
    if _prefix.has_prefix(config):  # preprocessing layers run in Python: the graph is remade here
        return _retrace.from_config(config, custom_objects)
    handle = _engine().Model.from_json(json_string, "model_from_json", _state.next_seed(), device=_state.device())
    return _from_engine(handle, custom_objects)


def _layer(entry, custom_objects):
    """The Python layer of a file's entry: a subclassed layer (one with nnfit's trace) from
    its class when known (its from_config and build, as Keras remakes it), else as loaded."""
    if entry["class_name"] in ("Functional", "Sequential"):
        # A nested model: remade in Python from its config; it shares the outer model's
        # weights once that model is built (Model._with_weights).
        from nnfit.keras import _retrace
        return _retrace.from_config(entry, custom_objects)
    if "nnfit_trace" not in entry:
        return layers_module.deserialize(entry)
    from nnfit.keras import _registration, _tracing
    if entry["class_name"] == "Lambda" and str(entry.get("module")).startswith("keras"):
        layer = _tracing.from_entry(entry, layers_module.Lambda)  # its trace runs; its function is not remade
        layer._trace = entry["nnfit_trace"]
        return layer
    cls = _registration.find_class(entry, custom_objects)
    return _tracing.from_entry(entry, cls)
