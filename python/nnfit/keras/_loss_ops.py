"""Keras's built-in losses as traceable functions, for where nnfit traces a loss instead of
emitting its engine op: ``super().compute_loss`` inside a subclassed model's compute_loss
override (Note [Traced losses and metrics] in src/nn/traced_metric.cpp), and a built-in
loss object called on arrays. `traced` maps a loss name or keras.losses object to Keras's
function of it (_loss_functions.py) with the object's arguments, per sample, and its
reduction, for _custom_objects.reduce.

One Keras behaviour is out of reach here: a crossentropy of a softmax's or sigmoid's own
output reads that activation's logits (Note [Crossentropy from the logits]); in a traced
compute_loss y_pred is the model's output as a value, so the probabilities are used, clipped
as Keras clips them, which differs from Keras only where the activation saturates.
"""
from nnfit.keras import ops
from nnfit.keras._loss_functions import FUNCTIONS, same_rank

_FUNCTIONS = {f.__name__: f for f in FUNCTIONS}
_ALIASES = {"mse": "mean_squared_error", "mae": "mean_absolute_error", "mape": "mean_absolute_percentage_error",
            "msle": "mean_squared_logarithmic_error", "logcosh": "log_cosh", "bce": "binary_crossentropy",
            "huber_loss": "huber", "kld": "kl_divergence", "kullback_leibler_divergence": "kl_divergence",
            "l_o_g_cosh": "log_cosh", "k_l_divergence": "kl_divergence"}
# The arguments of Keras's loss classes each function takes.
_ARGUMENTS = {"huber": ("delta",), "binary_crossentropy": ("from_logits", "label_smoothing"),
              "categorical_crossentropy": ("from_logits", "label_smoothing"),
              "sparse_categorical_crossentropy": ("from_logits",),
              "binary_focal_crossentropy": ("apply_class_balancing", "alpha", "gamma", "from_logits",
                                            "label_smoothing"),
              "categorical_focal_crossentropy": ("alpha", "gamma", "from_logits", "label_smoothing"),
              "cosine_similarity": ("axis",), "dice": ("axis",), "tversky": ("alpha", "beta", "axis"),
              "categorical_generalized_cross_entropy": ("q",),
              "circle": ("gamma", "margin", "remove_diagonal")}


def _snake(class_name):
    import re
    return re.sub("(?<!^)(?=[A-Z])", "_", class_name).lower()


def traced(loss):
    """(fn(y_true, y_pred) per sample, reduction) of a built-in loss given by name or as a
    keras.losses object, or None when it is not one of these."""
    from nnfit.keras._object import KerasObject
    if isinstance(loss, str):
        name, args, reduction = _ALIASES.get(loss, loss), {}, "sum_over_batch_size"
    elif isinstance(loss, KerasObject):
        name, args = _snake(loss._class_name), dict(loss._args)
        reduction = args.get("reduction", "sum_over_batch_size")
        if args.get("axis", -1) != -1 and name not in ("cosine_similarity", "dice", "tversky"):
            return None
    else:
        return None
    name = _ALIASES.get(name, name)
    fn = _FUNCTIONS.get(name)
    if fn is None:
        return None
    kwargs = {k: args[k] for k in _ARGUMENTS.get(name, ()) if k in args}

    def values(y_true, y_pred):
        if name != "sparse_categorical_crossentropy":
            y_true, y_pred = same_rank(ops.cast(y_true, "float32"), y_pred)
        return fn(y_true, y_pred, **kwargs)

    return values, reduction
