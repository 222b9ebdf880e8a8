"""Subclassed keras.Model on nnfit's engine: ``__init__`` makes layers, ``call(inputs,
training=None)`` uses them and keras.ops. The call is traced at the first known input
shape (fit, evaluate or predict's data, ``build(input_shape)``) into the Functional graph
of the same layers (as nnfit.keras._tracing traces a subclassed layer), and the engine
trains that graph: a step costs what the same Functional model's costs, with no Python
in it. A ``train_step`` or ``test_step`` override, written against a backend's autodiff
(TensorFlow's GradientTape, JAX, torch), cannot run in the engine and is refused.
"""
import json
import re

from nnfit.keras import _graph, _state, _tracing

_STEP_HOOKS = {"train_step": "fit", "test_step": "evaluate", "predict_step": "predict"}


def is_subclassed(cls):
    """Whether `cls` is a user's keras.Model subclass with its own call()."""
    return getattr(cls, "call", SubclassedModel.call) is not SubclassedModel.call


class SubclassedModel:
    """keras.Model's methods for subclasses (mixed into Model)."""

    _untraced = False  # a subclassed model whose call has not been traced yet
    _inference_layers = ()

    def call(self, inputs, training=None):
        """Keras's Model.call: a subclass defines it."""
        raise NotImplementedError(f"Model {self.name!r}: a subclass of keras.Model defines call(inputs); a "
                                  "Functional model is made with keras.Model(inputs, outputs)")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Keras's hook for custom training logic: a subclass's override, written with
        keras.ops, is traced into the step when the model compiles (Note [Traced losses and
        metrics]); this default, called from an override, is the compiled loss."""
        from nnfit.keras import _compute_loss
        return _compute_loss.compiled_loss(self, y, y_pred, sample_weight)

    def add_loss(self, loss):
        """Keras's add_loss inside call(): the value (computed with keras.ops from what the
        call's layers make, summed) is added to the model's loss in the traced step."""
        trace = _tracing.current_trace()
        if trace is None or trace.get("layer") is not self:
            raise NotImplementedError(f"{type(self).__name__}.add_loss: nnfit adds a model's losses from its call() "
                                      "(traced into the step); for other losses, override compute_loss(x, y, y_pred, "
                                      "sample_weight)")
        from nnfit.keras import _added_losses
        _added_losses.add_loss(self, loss)

    def train_step(self, data):
        """Keras's hook for a custom training step: nnfit runs the whole step in its engine."""
        raise NotImplementedError(_step_message(self, "train_step"))

    def test_step(self, data):
        raise NotImplementedError(_step_message(self, "test_step"))

    def predict_step(self, data):
        raise NotImplementedError(_step_message(self, "predict_step"))


def _step_message(model, hook):
    return (f"{type(model).__name__}.{hook}: nnfit runs the whole step (forward, loss, gradients, update) in its "
            f"engine, so a {hook} written against a backend's autodiff (TensorFlow's GradientTape, jax.grad, torch) "
            "cannot run there; nnfit's hook for custom training logic is compute_loss(x, y, y_pred, sample_weight) "
            "written with keras.ops (traced into the step), or compile(loss=...) with a Keras loss")


def check_step(model, hook):
    """Refuses a user's override of `hook` (train_step, test_step, predict_step)."""
    if getattr(type(model), hook) is not getattr(SubclassedModel, hook):
        raise NotImplementedError(_step_message(model, hook))


def init(model, name):
    """The state of a subclassed model before its call is traced."""
    model.name = name or _state.unique_name(_tracing.snake(type(model).__name__))
    model._untraced = True
    model.inputs, model.outputs = [], []
    model._layers = []
    model._config = None
    model._single_input = model._single_output = True


def input_names(model, x):
    """Input names for data `x` before the trace: one per array, as the trace will name them."""
    if isinstance(x, dict):
        raise NotImplementedError(f"Model {model.name!r}: dict inputs to a subclassed model are not supported by "
                                  "nnfit; pass an array or a list of arrays")
    n = len(x) if isinstance(x, (list, tuple)) and len(x) and hasattr(x[0], "shape") else 1
    return [f"input_layer{'' if i == 0 else f'_{i}'}" for i in range(n)]


def trace_arrays(model, xs):
    """Traces the model's call for inputs like the arrays `xs` (one tensor for one array)."""
    trace(model, [(tuple(a.shape[1:]), str(a.dtype)) for a in xs], len(xs) > 1)


def trace_shapes(model, input_shape):
    """Traces the model's call for build(input_shape): a shape with the batch axis, or a list of them."""
    several = bool(input_shape) and isinstance(input_shape[0], (list, tuple))
    shapes = list(input_shape) if several else [input_shape]
    trace(model, [(tuple(s[1:]), "float32") for s in shapes], several)


def trace(model, specs, several):
    """Runs the model's call on symbolic inputs of `specs` ((shape, dtype) each) in training
    and in inference mode, and makes the model the Functional graph it recorded."""
    from nnfit.keras import layers as layers_module
    from nnfit.keras.models import _graph_layers
    where = f"{type(model).__name__} {model.name!r}"
    saved = _state.push_names()
    try:
        tensors = [layers_module.Input(shape=s, dtype=d, name=f"input_layer{'' if i == 0 else f'_{i}'}")
                   for i, (s, d) in enumerate(specs)]
    finally:
        _state.pop_names(saved)
    structured = list(tensors) if several else tensors[0]
    results = []
    for training in (True, False):
        saved = _state.push_names()
        _tracing._TRACES.append({"training": training, "inference": set(), "layer": model, "inputs": tensors,
                                 "losses": []})
        try:
            kwargs = {"training": training} if _tracing._takes(model.call, "training") else {}
            outputs = model.call(structured, **kwargs)
        finally:
            record = _tracing._TRACES.pop()
            _state.pop_names(saved)
        outs, keys = _graph.sorted_structure(outputs, "outputs")  # a dict: Keras's structure, by sorted key
        outs = _graph.flatten(outs)
        for o in outs:
            if isinstance(o, _tracing.LayerVariable) or not isinstance(o, _graph.KerasTensor):
                raise TypeError(f"{where}: call() must return symbolic tensors computed from its inputs with layers "
                                f"and keras.ops, got {o!r}")
        config = _model_config(model, tensors, outs, record["losses"], where, keys)
        results.append((config, record["inference"], outputs, outs, keys))
    (config, inference, outputs, outs, keys), (other, _, _, _, _) = results
    if json.dumps(config, sort_keys=True) != json.dumps(other, sort_keys=True):
        raise NotImplementedError(
            f"{where}: call() makes different graphs with training=True and training=False (it branches on "
            "`training`); nnfit traces one graph for both: pass training to the layers (Dropout, "
            "BatchNormalization, ...) instead of branching on it")
    model.inputs, model.outputs = tensors, outs
    model._single_input = not several
    model._single_output = not isinstance(outputs, (list, tuple, dict))
    model._output_keys = keys
    model._config = config
    model._layers = _graph_layers(outs)
    model._inference_layers = tuple(sorted(inference))
    model._untraced = False
    model._build()


def _model_config(model, tensors, outs, losses, where, keys=None):
    """The Functional config of the traced call (output_layers a dict by `keys` for a call
    returning a dict); with add_loss, its "nnfit_losses": the losses' operations and the
    values of the graph they read (Note [Traced losses and metrics])."""
    if not losses:
        return _graph.functional_config(model.name, tensors, outs, model.trainable, output_keys=keys)
    from nnfit.keras import _added_losses
    feeds = _added_losses.feeds(losses, f"{where}: add_loss")
    config = _graph.functional_config(model.name, tensors, outs + feeds, model.trainable)
    refs = config["config"]["output_layers"]
    refs = [refs] if refs and isinstance(refs[0], str) else refs
    config["config"]["output_layers"] = _graph._refs(refs[:len(outs)], keys)
    config["nnfit_losses"] = {"graph": _added_losses.loss_config(f"{model.name}_losses", feeds, losses),
                              "feeds": refs[len(outs):]}
    return config


def apply_inference_layers(model, handle):
    """The layers the model's call runs with training=False, set in the engine's model."""
    for name in model._inference_layers:
        handle.set_layer_inference_only(name, True)


# Keras's layers without weights (built when made, so an unbuilt model's summary shows 0).
_WEIGHTLESS = re.compile(r"(Dropout|GaussianNoise|Activation|ReLU|ELU|Softmax|Flatten|Reshape|Permute|RepeatVector|"
                         r"Pooling|Padding|Cropping|UpSampling|^Add$|Subtract|Multiply|Average|Maximum|Minimum|"
                         r"Concatenate|^Dot$|Rescaling|Resizing|CenterCrop|^Random|Masking|ActivityRegularization)")


def unbuilt_summary(model):
    """Keras's summary of a subclassed model not built yet: its layers, shapes unknown."""
    widths = (33, 24, 15)

    def rule(left, fill, mid, right):
        return left + mid.join(fill * w for w in widths) + right

    def row(cells, bar):
        return bar + bar.join([" " + cells[0].ljust(widths[0] - 1), " " + cells[1].ljust(widths[1] - 1),
                               cells[2].rjust(widths[2] - 1) + " "]) + bar

    lines = [f'Model: "{model.name}"', rule("┏", "━", "┳", "┓"), row(["Layer (type)", "Output Shape", "Param #"], "┃"),
             rule("┡", "━", "╇", "┩")]
    layers = _tracing.tracked_sublayers(model)
    for i, layer in enumerate(layers):
        cls = type(layer).__name__ if getattr(layer, "_custom", False) else layer._class_name
        built = layer.built if getattr(layer, "_custom", False) else bool(_WEIGHTLESS.search(cls))
        lines.append(row([f"{layer.name} ({cls})", "?", "0" if built else "0 (unbuilt)"], "│"))
        if i + 1 < len(layers):
            lines.append(rule("├", "─", "┼", "┤"))
    lines.append(rule("└", "─", "┴", "┘"))
    lines += [" Total params: 0 (0.00 B)", " Trainable params: 0 (0.00 B)", " Non-trainable params: 0 (0.00 B)"]
    return "\n".join(lines)


def not_built(model):
    return ValueError(f"This model ({model.name!r}) has not yet been built. Build the model first by calling "
                      "`build()` or by calling it on data (fit, evaluate, predict).")


def without_input_rows(summary):
    """The summary table without its InputLayer rows (and the rule under each)."""
    lines, out, skip = summary.split("\n"), [], False
    for line in lines:
        if skip:
            skip = False
            if line.startswith("├"):
                continue
        if line.startswith("│") and "(InputLayer)" in line:
            skip = True
            continue
        out.append(line)
    return "\n".join(out)
