"""Keras 3.15's metric functions (keras.metrics.binary_accuracy ...), written with keras.ops:
on arrays they run eagerly and return a float32 array per sample; in compile's metrics the
ones the engine computes (ENGINE below: the accuracies) are passed by name, the others are
wrapped in MeanMetricWrapper and traced, as Keras wraps them. Each follows Keras's body in
keras/src/metrics/accuracy_metrics.py and correlation_metrics.py. keras.metrics also
exports Keras's loss functions (the same objects as keras.losses's).
"""
import functools

import numpy as np

from nnfit.keras import ops
from nnfit.keras._loss_functions import EPSILON, _pair, same_rank
from nnfit.keras.ops._operation import is_symbolic


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    return ops.cast(ops.equal(y_true, ops.cast(ops.greater(y_pred, threshold), "float32")), "float32")


def categorical_accuracy(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    ids = ops.cast(ops.argmax(y_true, axis=-1), "float32")
    return ops.cast(ops.equal(ids, ops.cast(ops.argmax(y_pred, axis=-1), "float32")), "float32")


def sparse_categorical_accuracy(y_true, y_pred):
    y_true, y_pred = _pair(y_true, y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = ops.squeeze(y_true, -1)
    matches = ops.cast(ops.equal(y_true, ops.cast(ops.argmax(y_pred, axis=-1), "float32")), "float32")
    if matches.ndim > 1 and matches.shape[-1] == 1:
        matches = ops.squeeze(matches, -1)
    return matches


def _in_top_k(ids, y_pred, k):
    """TensorFlow's in_top_k, which Keras's top-k accuracies use: the target is among the k
    largest when fewer than k classes score strictly above it (ties at the boundary count
    as in); a class id out of range is never in."""
    classes = y_pred.shape[-1]
    target = ops.one_hot(ids, classes)
    score = ops.sum(y_pred * target, axis=-1, keepdims=True)
    above = ops.sum(ops.cast(ops.greater(y_pred, score), "float32"), axis=-1)
    valid = ops.sum(target, axis=-1)  # 0 for an id outside [0, classes)
    return ops.cast(ops.less(above, float(k)), "float32") * valid


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    y_true, y_pred = _pair(y_true, y_pred)
    return _in_top_k(ops.cast(ops.argmax(y_true, axis=-1), "float32"), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    if from_sorted_ids:
        raise NotImplementedError("sparse_top_k_categorical_accuracy(from_sorted_ids=True) is not supported by nnfit "
                                  "yet")
    y_true, y_pred = _pair(y_true, y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = ops.squeeze(y_true, -1)
    return _in_top_k(y_true, y_pred, k)


def pearson_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    t = y_true - ops.mean(y_true, axis=axis, keepdims=True)
    p = y_pred - ops.mean(y_pred, axis=axis, keepdims=True)
    t = t / ops.std(t, axis=axis, keepdims=True)
    p = p / ops.std(p, axis=axis, keepdims=True)
    return ops.mean(t * p, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    true_mean = ops.mean(y_true, axis=axis, keepdims=True)
    pred_mean = ops.mean(y_pred, axis=axis, keepdims=True)
    true_var = ops.var(y_true - true_mean, axis=axis, keepdims=True)
    pred_var = ops.var(y_pred - pred_mean, axis=axis, keepdims=True)
    covar = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + ops.square(true_mean - pred_mean)
    return ops.mean(2.0 * covar / (norm + EPSILON), axis=axis)


def cosine_similarity(y_true, y_pred, axis=-1):
    """The metrics' cosine similarity (regression_metrics.py): positive, where the loss's is
    negated."""
    y_true, y_pred = same_rank(*_pair(y_true, y_pred))
    return ops.sum(ops.normalize(y_true, axis=axis) * ops.normalize(y_pred, axis=axis), axis=axis)


def _keras_function(fn):
    @functools.wraps(fn)
    def function(*args, **kwargs):
        with np.errstate(divide="ignore", invalid="ignore"):  # NaN and inf as Keras gives them
            out = fn(*args, **kwargs)
        return out if is_symbolic(out) else np.asarray(out, dtype="float32")
    return function


FUNCTIONS = [_keras_function(f) for f in (binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
                                          top_k_categorical_accuracy, sparse_top_k_categorical_accuracy,
                                          pearson_correlation, concordance_correlation)]
globals().update({f.__name__: f for f in FUNCTIONS})
cosine_similarity = _keras_function(cosine_similarity)
# The metric functions the engine computes (src/nn/metrics.cpp), by Keras's name.
ENGINE = {"binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy", "top_k_categorical_accuracy",
          "sparse_top_k_categorical_accuracy", "mean_absolute_error", "mean_squared_error",
          "mean_absolute_percentage_error"}
