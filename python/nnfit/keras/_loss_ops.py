"""Keras's built-in losses written with keras.ops, for where nnfit traces a loss instead of
emitting its engine op: ``super().compute_loss`` inside a subclassed model's compute_loss
override (Note [Traced losses and metrics] in src/nn/traced_metric.cpp). Each is Keras
3.15's formula (keras/src/losses/losses.py over backend/tensorflow/nn.py), per sample, for
_custom_objects.reduce to reduce as the loss's reduction says.

One Keras behaviour is out of reach here: a crossentropy of a softmax's or sigmoid's own
output reads that activation's logits (Note [Crossentropy from the logits]); in a traced
compute_loss y_pred is the model's output as a value, so the probabilities are used, clipped
as Keras clips them, which differs from Keras only where the activation saturates.
"""
from nnfit.keras import ops

EPSILON = 1e-7  # keras.backend.epsilon()


def _same_rank(y_true, y_pred):
    """Keras's squeeze_or_expand_to_same_rank for a target with one axis fewer or a last
    axis of 1 more."""
    if y_true.ndim == y_pred.ndim - 1:
        return ops.expand_dims(y_true, -1), y_pred
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        return ops.squeeze(y_true, -1), y_pred
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    return ops.mean(ops.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    return 100.0 * ops.mean(ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), EPSILON)), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    first = ops.log(ops.maximum(y_pred, EPSILON) + 1.0)
    second = ops.log(ops.maximum(y_true, EPSILON) + 1.0)
    return ops.mean(ops.square(first - second), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    error = y_pred - y_true
    abs_error = ops.abs(error)
    return ops.mean(ops.where(abs_error <= delta, 0.5 * ops.square(error), delta * abs_error - 0.5 * delta * delta),
                    axis=-1)


def log_cosh(y_true, y_pred):
    x = y_pred - y_true
    return ops.mean(x + ops.softplus(x * -2.0) - 0.6931471805599453, axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:  # tf.nn.sigmoid_cross_entropy_with_logits
        values = ops.relu(y_pred) - y_pred * y_true + ops.log1p(ops.exp(-ops.abs(y_pred)))
    else:
        p = ops.clip(y_pred, EPSILON, 1.0 - EPSILON)
        values = -(y_true * ops.log(p) + (1.0 - y_true) * ops.log(1.0 - p))
    return ops.mean(values, axis=-1)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[-1]
    if from_logits:
        return -ops.sum(y_true * ops.log_softmax(y_pred, axis=-1), axis=-1)
    p = ops.clip(y_pred / ops.sum(y_pred, axis=-1, keepdims=True), EPSILON, 1.0 - EPSILON)
    return -ops.sum(y_true * ops.log(p), axis=-1)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = ops.squeeze(y_true, -1)
    target = ops.one_hot(ops.cast(y_true, "float32"), y_pred.shape[-1])  # nnfit's one_hot takes float ids
    if from_logits:
        return -ops.sum(target * ops.log_softmax(y_pred, axis=-1), axis=-1)
    # TensorFlow's sparse_softmax_cross_entropy_with_logits over the clipped probabilities' logs.
    logp = ops.log(ops.clip(y_pred / ops.sum(y_pred, axis=-1, keepdims=True), EPSILON, 1.0 - EPSILON))
    return ops.logsumexp(logp, axis=-1) - ops.sum(target * logp, axis=-1)


_FUNCTIONS = {f.__name__: f for f in (mean_squared_error, mean_absolute_error, mean_absolute_percentage_error,
                                      mean_squared_logarithmic_error, huber, log_cosh, binary_crossentropy,
                                      categorical_crossentropy, sparse_categorical_crossentropy)}
_ALIASES = {"mse": "mean_squared_error", "mae": "mean_absolute_error", "mape": "mean_absolute_percentage_error",
            "msle": "mean_squared_logarithmic_error", "logcosh": "log_cosh", "bce": "binary_crossentropy",
            "huber_loss": "huber"}
# The arguments of Keras's loss classes each function takes.
_ARGUMENTS = {"huber": ("delta",), "binary_crossentropy": ("from_logits", "label_smoothing"),
              "categorical_crossentropy": ("from_logits", "label_smoothing"),
              "sparse_categorical_crossentropy": ("from_logits",)}


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
        if args.get("axis", -1) != -1:
            return None
    else:
        return None
    fn = _FUNCTIONS.get(name)
    if fn is None:
        return None
    kwargs = {k: args[k] for k in _ARGUMENTS.get(name, ()) if k in args}

    def values(y_true, y_pred):
        if name != "sparse_categorical_crossentropy":
            y_true, y_pred = _same_rank(ops.cast(y_true, "float32"), y_pred)
        return fn(y_true, y_pred, **kwargs)

    return values, reduction
