"""A keras.Model subclass's ``compute_loss(x, y, y_pred, sample_weight)`` override, traced
once with keras.ops into the training step (Note [compute_loss in the step] in
src/nn/loss.cpp; Note [Traced losses and metrics] in src/nn/traced_metric.cpp).

x, y and y_pred come in the model's structure (one tensor, a list, or a dict by name) as
symbolic inputs; the engine feeds them from the step's own values: the model's inputs, the
batch's targets and the model's outputs. What the override reads is recorded: one that never
reads y makes the model take no targets (Keras's ``fit(x)`` for an autoencoder).
"""
import json

from nnfit.keras import _graph
from nnfit.keras._custom_objects import _config, _input, _serialized, _takes, _unbatched, is_custom_loss, reduce
from nnfit.keras._object import KerasObject

_COMPUTE_LOSS = []  # the model whose compute_loss is being traced


def overrides_compute_loss(model):
    from nnfit.keras._subclassed import SubclassedModel
    return getattr(type(model), "compute_loss", SubclassedModel.compute_loss) is not SubclassedModel.compute_loss


def compiled_loss(model, y, y_pred, sample_weight):
    """Keras's Model.compute_loss as a subclass's override calls it (super().compute_loss):
    the compiled loss on the traced tensors, which must itself be written with keras.ops
    (one output: with several, Keras logs its compiled losses apart, which is not traced)."""
    if not _COMPUTE_LOSS:
        raise NotImplementedError(f"{type(model).__name__}.compute_loss runs inside nnfit's step (traced when the model "
                                  "is compiled); it cannot be called on arrays")
    loss = model.loss
    if loss is None:
        raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
    if y is None:
        raise ValueError(f"{type(model).__name__}.compute_loss calls super().compute_loss, whose compiled loss needs "
                         "targets y; pass y to fit and evaluate")
    if isinstance(y_pred, (list, tuple, dict)):
        raise NotImplementedError(
            f"{type(model).__name__}.compute_loss calls super().compute_loss on a model with several outputs; Keras "
            "then also logs a loss per compiled loss, which nnfit's traced compute_loss does not. Compute each "
            "output's loss in compute_loss with keras.ops (y and y_pred are lists, or dicts by output name)")
    return _one_compiled_loss(model, loss, y, y_pred, sample_weight)


def _one_compiled_loss(model, loss, y, y_pred, sample_weight):
    from nnfit.keras import _loss_ops
    builtin = None if isinstance(loss, (list, tuple, dict)) else _loss_ops.traced(loss)
    if builtin is not None:  # Keras's formula written with keras.ops
        fn, reduction = builtin
        return reduce(fn(y, y_pred), sample_weight, reduction)
    if isinstance(loss, (list, tuple, dict)) or not is_custom_loss(loss):
        raise NotImplementedError(
            f"{type(model).__name__}.compute_loss calls super().compute_loss with the loss {loss!r}; nnfit traces "
            "compute_loss with keras.ops and has Keras's loss functions written with them (one loss, not a list or "
            "dict of them): compile with one loss, a loss function or a keras.losses.Loss subclass written with "
            "keras.ops, or compute the loss in compute_loss")
    from nnfit.keras.losses import Loss
    if isinstance(loss, Loss):
        return reduce(loss.call(y, y_pred), sample_weight, loss.reduction)
    return reduce(loss(y, y_pred), sample_weight, "sum_over_batch_size")


def _structured(tensors, keys, single):
    """Tensors in the model's structure, as Keras passes x, y and y_pred: one tensor, a dict
    by name, or a list."""
    if single:
        return tensors[0]
    return dict(zip(keys, tensors)) if keys else list(tensors)


def trace_compute_loss(model, loss, x_shapes, y_shapes, pred_shapes):
    """The engine's loss entry for a compute_loss override (Note [compute_loss in the step] in
    src/nn/loss.cpp): traced without and with sample weights over (x, y, y_pred), each in the
    model's structure; Keras's form of what was compiled is what files keep. Also returns
    which of x and y the override reads ({"x": bool, "y": bool})."""
    cls = type(model).__name__
    where = f"{cls}.compute_loss"
    graphs, reads = {}, {"x": False, "y": False}
    takes_training = _takes(model.compute_loss, "training")
    several_in, several_out = len(x_shapes) > 1, len(pred_shapes) > 1
    for weighted in (False, True):
        _COMPUTE_LOSS.append(model)
        try:
            with _unbatched():
                xs = [_input(f"x_{i}" if several_in else "x", (None,) + tuple(s)) for i, s in enumerate(x_shapes)]
                ys = [_input(f"y_{i}" if several_out else "y", (None,) + tuple(s)) for i, s in enumerate(y_shapes)]
                preds = [_input(f"y_pred_{i}" if several_out else "y_pred", (None,) + tuple(s))
                         for i, s in enumerate(pred_shapes)]
                inputs = xs + ys + preds
                sample_weight = None
                if weighted:
                    weights = _input("sample_weight", (None,))
                    inputs.append(weights)
                    # Keras's data adapter repeats one sample_weight array per output in y's structure.
                    sample_weight = _structured([weights] * len(ys), getattr(model, "_output_keys", None),
                                                not several_out)
                x = _structured(xs, getattr(model, "_input_keys", None), getattr(model, "_single_input", True))
                y = _structured(ys, getattr(model, "_output_keys", None), not several_out)
                y_pred = _structured(preds, getattr(model, "_output_keys", None), not several_out)
                args = (x, y, y_pred, sample_weight)
                out = model.compute_loss(*args, training=True) if takes_training else model.compute_loss(*args)
                if out is None:
                    raise ValueError(f"{cls}.compute_loss returned None; it returns the loss (a scalar tensor)")
                if isinstance(out, (list, tuple, dict)):
                    raise ValueError(f"{cls}.compute_loss returned {type(out).__name__}; it returns the loss, one "
                                     "scalar tensor (sum the terms with keras.ops)")
                graphs[weighted] = _config(f"{model.name}_compute_loss", inputs, [out], where)
                if isinstance(out, _graph.KerasTensor):
                    made = {n.layer for n in _graph._collect([out])}
                    reads["x"] = reads["x"] or any(t._history[0] in made for t in xs)
                    reads["y"] = reads["y"] or any(t._history[0] in made for t in ys)
        finally:
            _COMPUTE_LOSS.pop()
    form = None if loss is None else (_serialized(loss) if is_custom_loss(loss) else loss)
    if isinstance(form, KerasObject):
        form = form.serialize()
    entry = {"module": None, "class_name": "compute_loss", "config": {}, "registered_name": None,
             "nnfit_trace": {"name": f"{cls}.compute_loss", "reduction": "compute_loss", "x_inputs": len(x_shapes),
                             "y_true_shapes": [[int(d) for d in s] for s in y_shapes], "graph": graphs[False],
                             "weighted_graph": graphs[True], "keras_form": form}}
    return entry, reads


def engine_loss(model, loss, handle, pred_shapes):
    """The engine's loss (one JSON entry in a list), the targets' shapes per output and what
    the override reads, for compile."""
    from nnfit.keras import _training
    single = loss is not None and not isinstance(loss, (list, tuple, dict))
    targets = [_training.target_shape(_training.loss_json(loss, p), p) if single else p for p in pred_shapes]
    entry, reads = trace_compute_loss(model, loss, [tuple(s)[1:] for s in handle.input_shapes], targets, pred_shapes)
    if reads["x"] and model._prefix is not None:
        raise NotImplementedError(
            f"{type(model).__name__}.compute_loss reads x, and model {model.name!r} starts with preprocessing layers "
            "that run in Python before the engine; nnfit feeds compute_loss the engine's inputs. Read y_pred and y "
            "only, or preprocess the data before the model")
    return [json.dumps(entry)], targets, reads


def targets(model, y, what, name="y"):
    """y as the engine's targets: none for a compute_loss that reads no y (Keras passes y to
    it unread), else one array per output; a clear error where they are needed but missing."""
    from nnfit.keras import _training
    if not model._takes_targets:
        return []
    if y is not None:
        return _training.as_arrays(y, model._output_names(), name, target=True)
    cls = type(model).__name__
    if model._compute_loss_reads is None:
        raise ValueError(f"{what}: targets y are needed with array inputs (or pass an nnfit.data.Dataset of (x, y))")
    if model._compute_loss_reads["y"]:
        raise ValueError(f"{what}: {cls}.compute_loss reads y, and no targets were given; pass y (nnfit traces "
                         "compute_loss once with y given, so a branch on `y is None` is not taken: compute the loss "
                         "from x and y_pred alone to train without targets)")
    raise ValueError(f"{what}: no targets y were given, and the compiled metrics read them ({cls}.compute_loss reads "
                     "none); pass y, or compile without metrics")


def no_weights_without_targets(model, ys, sample_weight):
    """Validation arrays become a dataset of (x, y, sample_weight) rows, where weights follow
    one target per output: without targets there is no place for them."""
    if not ys and sample_weight is not None:
        raise NotImplementedError(
            f"fit: validation sample weights (validation_data's third array or validation_split with sample_weight) "
            f"for {type(model).__name__}, whose compute_loss reads no targets, are not supported by nnfit yet; "
            "validate without weights, or pass validation_data as an nnfit.data.Dataset of (x, y, sample_weight)")
