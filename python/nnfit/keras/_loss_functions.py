"""Keras 3.15's loss functions (keras.losses.mean_squared_error ...), written with keras.ops
so that each works two ways, as in Keras: on arrays (run eagerly, returning one value per
sample as a NumPy array) and on symbolic tensors (inside a custom loss, a metric or a
compute_loss override, traced into the training graph). Each follows Keras's own body in
keras/src/losses/losses.py; where a Keras body calls an op that reduces or branches over
the whole batch, the note at the function says what nnfit does instead.

Where compile() is given one of these functions and the engine has the loss as a fused op
(BUILTIN below), the engine's op runs, as for the name string; Keras writes the function
in compile_config as ``{"module": "builtins", "class_name": "function", "config": name}``
and so does nnfit.
"""
import functools

import numpy as np

from nnfit.keras import ops
from nnfit.keras.ops._operation import is_symbolic

EPSILON = 1e-7  # keras.backend.epsilon()


def _pair(y_true, y_pred):
    y_pred = ops.cast(y_pred, "float32") if is_symbolic(y_pred) else np.asarray(y_pred, dtype="float32")
    y_true = ops.cast(y_true, "float32") if is_symbolic(y_true) else np.asarray(y_true, dtype="float32")
    return y_true, y_pred


def same_rank(y_true, y_pred):
    """Keras's squeeze_or_expand_to_same_rank for a target with one axis fewer or a last
    axis of 1 more."""
    if y_true.ndim == y_pred.ndim - 1:
        return ops.expand_dims(y_true, -1), y_pred
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        return ops.squeeze(y_true, -1), y_pred
    return y_true, y_pred


def _hinge_labels(y_true):
    """Keras's convert_binary_labels_to_hinge: labels all 0 or 1 become -1 or 1. Keras
    decides over the whole tensor (ops.all then ops.cond); on arrays so does nnfit, while
    in a traced graph, which sees one batch, each 0 becomes -1 (the same for labels that
    are all 0/1 or all -1/1, the labels hinge takes)."""
    if not is_symbolic(y_true):
        return 2.0 * y_true - 1.0 if np.all((y_true == 0) | (y_true == 1)) else y_true
    return ops.where(ops.equal(y_true, 0.0), -1.0, y_true)


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    return ops.mean(ops.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    return 100.0 * ops.mean(ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), EPSILON)), axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    first = ops.log(ops.maximum(y_pred, EPSILON) + 1.0)
    second = ops.log(ops.maximum(y_true, EPSILON) + 1.0)
    return ops.mean(ops.square(first - second), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    return -ops.sum(ops.normalize(y_true, axis=axis) * ops.normalize(y_pred, axis=axis), axis=axis)


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    error = y_pred - y_true
    abs_error = ops.abs(error)
    return ops.mean(ops.where(abs_error <= delta, 0.5 * ops.square(error), delta * abs_error - 0.5 * delta * delta),
                    axis=-1)


def log_cosh(y_true, y_pred):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    x = y_pred - y_true
    return ops.mean(x + ops.softplus(x * -2.0) - 0.6931471805599453, axis=-1)


def hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(ops.square(ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    pos = ops.sum(y_true * y_pred, axis=-1)
    neg = ops.max((1.0 - y_true) * y_pred, axis=-1)
    return ops.maximum(neg - pos + 1.0, 0.0)


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = ops.clip(y_true, EPSILON, 1.0)
    y_pred = ops.clip(y_pred, EPSILON, 1.0)
    return ops.sum(y_true * ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    return ops.mean(y_pred - y_true * ops.log(y_pred + EPSILON), axis=-1)


def _check_axis(axis):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    if axis != -1:
        raise NotImplementedError(f"axis={axis}: nnfit's crossentropies take the classes on the last axis (axis=-1)")


def _binary_values(y_true, y_pred, from_logits):
    """Keras's ops.binary_crossentropy, element-wise (TensorFlow's formulas)."""
    if from_logits:  # tf.nn.sigmoid_cross_entropy_with_logits
        return ops.relu(y_pred) - y_pred * y_true + ops.log1p(ops.exp(-ops.abs(y_pred)))
    p = ops.clip(y_pred, EPSILON, 1.0 - EPSILON)
    return -(y_true * ops.log(p) + (1.0 - y_true) * ops.log(1.0 - p))


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    _check_axis(axis)
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return ops.mean(_binary_values(y_true, y_pred, from_logits), axis=-1)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                              label_smoothing=0.0, axis=-1):
    _check_axis(axis)
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = ops.sigmoid(y_pred)
    bce = _binary_values(y_true, y_pred, False)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = ops.power(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return ops.mean(focal, axis=-1)


def _smooth(y_true, label_smoothing):
    if label_smoothing:
        return y_true * (1.0 - label_smoothing) + label_smoothing / y_true.shape[-1]
    return y_true


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    _check_axis(axis)
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _smooth(y_true, label_smoothing)
    if from_logits:
        return -ops.sum(y_true * ops.log_softmax(y_pred, axis=-1), axis=-1)
    p = ops.clip(y_pred / ops.sum(y_pred, axis=-1, keepdims=True), EPSILON, 1.0 - EPSILON)
    return -ops.sum(y_true * ops.log(p), axis=-1)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                                   axis=-1):
    _check_axis(axis)
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _smooth(y_true, label_smoothing)
    if from_logits:
        y_pred = ops.softmax(y_pred, axis=-1)
    output = ops.clip(y_pred / ops.sum(y_pred, axis=-1, keepdims=True), EPSILON, 1.0 - EPSILON)
    cce = -y_true * ops.log(output)
    return ops.sum(ops.power(1.0 - output, gamma) * alpha * cce, axis=-1)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    _check_axis(axis)
    if ignore_class is not None:
        raise NotImplementedError("sparse_categorical_crossentropy(ignore_class=...) is not supported by nnfit yet")
    y_true, y_pred = _pair(y_true, y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = ops.squeeze(y_true, -1)
    target = ops.one_hot(y_true, y_pred.shape[-1])  # nnfit's one_hot takes float ids
    if from_logits:
        return -ops.sum(target * ops.log_softmax(y_pred, axis=-1), axis=-1)
    # TensorFlow's sparse_softmax_cross_entropy_with_logits over the clipped probabilities' logs.
    logp = ops.log(ops.clip(y_pred / ops.sum(y_pred, axis=-1, keepdims=True), EPSILON, 1.0 - EPSILON))
    return ops.logsumexp(logp, axis=-1) - ops.sum(target * logp, axis=-1)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    y_true, y_pred = _pair(y_true, y_pred)
    p = ops.sum(y_pred * ops.one_hot(y_true, y_pred.shape[-1]), axis=-1)
    return (1.0 - ops.power(p, q)) / q


def dice(y_true, y_pred, axis=None):
    """Keras's dice; axis=None reduces every axis, the batch's too, so in a model give the
    per-sample axes (e.g. axis=(1, 2, 3))."""
    y_true, y_pred = _pair(y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    return 1.0 - (2.0 * intersection) / (ops.sum(y_true, axis=axis) + ops.sum(y_pred, axis=axis) + EPSILON)


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    y_true, y_pred = _pair(y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    fp = ops.sum((1.0 - y_pred) * y_true, axis=axis)
    fn = ops.sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - intersection / (intersection + fp * alpha + fn * beta + EPSILON)


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """Keras's circle loss. It compares every sample with every other in the batch, so it
    runs on arrays; a model trained with it is refused where the batch axis is mixed."""
    if is_symbolic(y_true) or is_symbolic(y_pred):
        raise NotImplementedError("keras.losses.circle compares the samples of a batch with each other; nnfit runs it "
                                  "on arrays only, not inside a model's training step")
    y_true = np.asarray(y_true).astype("int32")
    y_pred = np.asarray(y_pred, dtype="float32")
    ref_embeddings = y_pred if ref_embeddings is None else np.asarray(ref_embeddings, dtype="float32")
    ref_labels = y_true if ref_labels is None else np.asarray(ref_labels).astype("int32")
    distances = np.maximum(1.0 - y_pred @ ref_embeddings.T, 0.0)
    query = y_true.reshape(-1, 1)
    key = ref_labels.reshape(-1, 1)
    positive = query == key.T
    negative = ~positive
    if remove_diagonal:
        positive = positive & ~np.eye(query.size, key.size, dtype=bool)
    pos_weights = np.maximum((margin + distances) * positive, 0.0)
    neg_weights = np.maximum((1.0 + margin - distances) * negative, 0.0)
    pos_w = -1.0 * gamma * pos_weights * (margin - distances)
    neg_w = gamma * neg_weights * ((1.0 - margin) - distances)
    with np.errstate(divide="ignore"):
        p_loss = np.asarray(ops.logsumexp(np.where(positive, pos_w, -np.inf).astype("float32"), axis=1))
        n_loss = np.asarray(ops.logsumexp(np.where(negative, neg_w, -np.inf).astype("float32"), axis=1))
    return np.asarray(ops.softplus((p_loss + n_loss).astype("float32")))


def ctc(y_true, y_pred):
    if len(ops.shape(y_true)) != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in integer "
                         f"format. Received: y_true.shape={ops.shape(y_true)}")
    if len(ops.shape(y_pred)) != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                         f"num_classes)`. Received: y_pred.shape={ops.shape(y_pred)}")
    if is_symbolic(y_true) or is_symbolic(y_pred):
        raise NotImplementedError("keras.losses.ctc runs on arrays in nnfit, not yet inside a model's training step")
    batch, steps = ops.shape(y_pred)[0], ops.shape(y_pred)[1]
    label_length = np.sum(np.asarray(y_true) != 0, axis=-1).astype("int32")
    return ops.ctc_loss(y_true, y_pred, label_length, np.full((batch,), steps, "int32"), mask_index=0)


FUNCTIONS = [mean_squared_error, mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error,
             cosine_similarity, huber, log_cosh, hinge, squared_hinge, categorical_hinge, kl_divergence, poisson,
             binary_crossentropy, binary_focal_crossentropy, categorical_crossentropy, categorical_focal_crossentropy,
             sparse_categorical_crossentropy, categorical_generalized_cross_entropy, dice, tversky, circle, ctc]
# The functions the engine has as fused loss ops (src/nn/loss.cpp), by Keras's name.
BUILTIN = {f.__name__ for f in FUNCTIONS[:17]}


def _keras_function(fn):
    """`fn` as keras.losses exports it: on arrays its result is a float32 array (Keras's
    floatx), and a function the engine has is marked so that compile passes it by name."""
    @functools.wraps(fn)
    def function(*args, **kwargs):
        with np.errstate(divide="ignore", invalid="ignore"):  # NaN and inf as Keras gives them
            out = fn(*args, **kwargs)
        return out if is_symbolic(out) else np.asarray(out, dtype="float32")
    if fn.__name__ in BUILTIN:
        function._nnfit_builtin = fn.__name__
    return function


FUNCTIONS = [_keras_function(f) for f in FUNCTIONS]
globals().update({f.__name__: f for f in FUNCTIONS})
