"""The metrics nnfit's engine computes in fit and evaluate (Accuracy ... AUC, F1Score),
updated eagerly on arrays outside them: a custom training loop's ``metric.update_state(y,
p)``, ``metric.result()`` and ``metric.reset_state()``, or ``metric(y, p)``. Each engine
metric object gets an eager twin, made from its config the first time it is updated
(metrics.py); in compile the object still goes to the engine by name, so a training step
never runs this code. The twins follow Keras 3.15's own code in keras/src/metrics/
(accuracy_metrics.py, regression_metrics.py, confusion_metrics.py, f_score_metrics.py and
metrics_utils.update_confusion_matrix_variables) step by step: the accuracies and the mean
errors as Keras's MeanMetricWrapper of the same functions, the confusion counts and scores
in NumPy in float32 variables, as Keras's numpy backend computes them. They take arrays;
a symbolic tensor is refused naming the metric.
"""
import numpy as np

from nnfit.keras import _loss_functions as _losses
from nnfit.keras import _metric_functions as _functions
from nnfit.keras.metrics import Mean, MeanMetricWrapper, Metric
from nnfit.keras.ops._operation import is_symbolic

EPSILON = 1e-7  # keras.backend.epsilon()
NEG_INF = -1e10  # metrics_utils.NEG_INF: the threshold top_k uses


def _arrays(where, *xs):
    for x in xs:
        if x is not None and is_symbolic(x):
            raise NotImplementedError(f"keras.metrics.{where}: update_state on symbolic tensors is not supported; "
                                      "in compile's metrics nnfit's engine computes it, and on arrays it updates "
                                      "eagerly")
    return [None if x is None else np.asarray(x, dtype="float32") for x in xs]


def _same_rank(x1, x2, expand_rank_1=True):
    """Keras's squeeze_or_expand_to_same_rank."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            x2 = np.expand_dims(x2, -1)
        else:
            x1 = np.squeeze(x1, -1)
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            x1 = np.expand_dims(x1, -1)
        else:
            x2 = np.squeeze(x2, -1)
    return x1, x2


def _divide_no_nan(a, b):
    a, b = np.asarray(a, "float32"), np.asarray(b, "float32")
    return np.where(b == 0, np.float32(0), a / np.where(b == 0, np.float32(1), b)).astype("float32")


def accuracy(y_true, y_pred):
    """keras.metrics.Accuracy's function: 1 where the values are equal."""
    from nnfit.keras import ops
    y_true, y_pred = _losses.same_rank(*_losses._pair(y_true, y_pred))
    return ops.cast(ops.equal(y_true, y_pred), "float32")


class RootMeanSquaredError(Mean):
    """Keras's RootMeanSquaredError: the square root of the weighted mean squared error."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _arrays("RootMeanSquaredError", y_true, y_pred)
        y_true, y_pred = _same_rank(y_true, y_pred)
        return super().update_state(np.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return np.sqrt(np.asarray(super().result(), "float32"))


def _evenly_distributed(thresholds):
    """metrics_utils.is_evenly_distributed_thresholds."""
    n = len(thresholds)
    return n >= 3 and np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1), atol=EPSILON)


def update_confusion(counts, y_true, y_pred, thresholds, top_k=None, class_id=None, sample_weight=None,
                     multi_label=False, label_weights=None, evenly=False):
    """metrics_utils.update_confusion_matrix_variables on arrays: adds to each variable of
    `counts` ({"tp", "fp", "tn", "fn"}: MetricVariable) the weighted count of its cell per
    threshold (and per label when multi_label)."""
    y_true, y_pred = np.asarray(y_true, "float32"), np.asarray(y_pred, "float32")
    thresholds = np.asarray(thresholds, "float32")
    y_pred, y_true = _same_rank(y_pred, y_true)
    if sample_weight is not None:
        sample_weight = np.expand_dims(np.asarray(sample_weight, "float32"), -1)
        _, sample_weight = _same_rank(y_true, sample_weight, expand_rank_1=False)
    if top_k is not None:
        top = np.argsort(-y_pred, axis=-1, kind="stable")[..., :top_k]
        mask = np.zeros_like(y_pred)
        np.put_along_axis(mask, top, 1.0, axis=-1)
        y_pred = y_pred * mask + NEG_INF * (1 - mask)
    if class_id is not None:
        if y_pred.ndim == 1:
            raise ValueError("When class_id is provided, y_pred must be a 2D array with shape (num_samples, "
                             f"num_classes), found shape: {y_pred.shape}")
        y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
    if multi_label and y_pred.ndim != 2:
        raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank {y_pred.ndim}.")
    weights = np.ones_like(y_pred) if sample_weight is None else np.broadcast_to(sample_weight, y_pred.shape)
    if label_weights is not None and not multi_label:
        weights = weights * np.broadcast_to(np.asarray(label_weights, "float32")[None], y_pred.shape)
    positive = y_true.astype(bool)
    if not multi_label:
        positive, y_pred, weights = positive.reshape(-1), y_pred.reshape(-1), weights.reshape(-1)
    if evenly:
        # Keras's optimized path for evenly spaced thresholds: each prediction, clipped to
        # [0, 1], falls in a bucket, and a threshold counts the buckets at or above it.
        n = len(thresholds)
        bucket = np.ceil(np.clip(y_pred, 0.0, 1.0) * np.float32(n - 1)) - 1
        if thresholds[0] < 0.0 or thresholds[-1] > 1.0:
            bucket = np.maximum(bucket, 0)
        above = np.arange(n).reshape((n,) + (1,) * y_pred.ndim) <= bucket[None]
    else:
        above = y_pred[None] > thresholds.reshape((-1,) + (1,) * y_pred.ndim)
    cells = {"tp": (positive, True), "fp": (~positive, True), "tn": (~positive, False), "fn": (positive, False)}
    for key, variable in counts.items():
        label, predicted = cells[key]
        hit = np.logical_and(label[None], above if predicted else ~above)
        added = np.sum(np.where(hit, weights[None], np.float32(0)), axis=1, dtype="float32")
        variable.assign(np.asarray(variable.numpy() + added, "float32"))


class _Confusion(Metric):
    """Keras's Precision and Recall: per threshold, true positives against false positives
    (precision) or false negatives (recall)."""

    _other = _key = None  # the second count's variable name and update_confusion's key

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.top_k, self.class_id = top_k, class_id
        default = 0.5 if top_k is None else NEG_INF
        self.thresholds = [float(t) for t in np.atleast_1d(default if thresholds is None else thresholds)]
        self._evenly = _evenly_distributed(self.thresholds)
        self.true_positives = self.add_variable((len(self.thresholds),), "zeros", name="true_positives")
        self.other = self.add_variable((len(self.thresholds),), "zeros", name=self._other)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred, sample_weight = _arrays(type(self).__name__, y_true, y_pred, sample_weight)
        update_confusion({"tp": self.true_positives, self._key: self.other}, y_true,
                         y_pred, self.thresholds, top_k=self.top_k, class_id=self.class_id,
                         sample_weight=sample_weight, evenly=self._evenly)

    def result(self):
        tp = self.true_positives.numpy()
        r = _divide_no_nan(tp, tp + self.other.numpy())
        return r[0] if len(self.thresholds) == 1 else r


class Precision(_Confusion):
    _other, _key = "false_positives", "fp"


class Recall(_Confusion):
    _other, _key = "false_negatives", "fn"


class AUC(Metric):
    """Keras's AUC: true/false positive/negative counts at num_thresholds thresholds and the
    Riemann sum (or the PR interpolation) of the curve."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        super().__init__(name=name, dtype=dtype)
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            inner = sorted(float(t) for t in thresholds)
            self._evenly = _evenly_distributed(np.array([0.0] + inner + [1.0]))
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._evenly = True
        self._thresholds = np.array([0.0 - EPSILON] + inner + [1.0 + EPSILON])
        self.curve = str(getattr(curve, "value", curve)).upper()
        self.summation_method = str(getattr(summation_method, "value", summation_method)).lower()
        self.multi_label, self.num_labels = multi_label, num_labels
        self.label_weights = None if label_weights is None else np.asarray(label_weights, "float32")
        self._from_logits = from_logits
        self._built = False
        if multi_label and num_labels:
            self._build((None, num_labels))
        elif not multi_label:
            self._build(None)

    def _build(self, shape):
        variable_shape = (self.num_thresholds,)
        if self.multi_label:
            if len(shape) != 2:
                raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank {len(shape)}. "
                                 f"Full shape received for `y_pred`: {shape}")
            variable_shape = (self.num_thresholds, shape[1])
        self.true_positives = self.add_variable(variable_shape, "zeros", name="true_positives")
        self.false_positives = self.add_variable(variable_shape, "zeros", name="false_positives")
        self.true_negatives = self.add_variable(variable_shape, "zeros", name="true_negatives")
        self.false_negatives = self.add_variable(variable_shape, "zeros", name="false_negatives")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred, sample_weight = _arrays("AUC", y_true, y_pred, sample_weight)
        if not self._built:
            self._build(y_pred.shape)
        if self._from_logits:
            y_pred = (1.0 / (1.0 + np.exp(-y_pred))).astype("float32")
        update_confusion({"tp": self.true_positives, "tn": self.true_negatives, "fp": self.false_positives,
                          "fn": self.false_negatives}, y_true, y_pred, self._thresholds, sample_weight=sample_weight,
                         multi_label=self.multi_label, label_weights=None if self.multi_label else self.label_weights,
                         evenly=self._evenly)

    def _by_label(self, terms):
        if not self.multi_label:
            return np.float32(np.sum(terms))
        by_label = np.sum(terms, axis=0)
        if self.label_weights is None:
            return np.float32(np.mean(by_label))
        return _divide_no_nan(np.sum(by_label * self.label_weights), np.sum(self.label_weights))

    def _interpolate_pr_auc(self, tp, fp, fn):
        n = self.num_thresholds
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = _divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = np.where((p[:n - 1] > 0) & (p[1:] > 0), _divide_no_nan(p[:n - 1], np.maximum(p[1:], 0)),
                         np.ones_like(p[1:]))
        with np.errstate(divide="ignore", invalid="ignore"):
            increment = _divide_no_nan(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))
        return self._by_label(increment)

    def result(self):
        if not self._built:
            return np.float32(0.0)
        tp, fp = self.true_positives.numpy(), self.false_positives.numpy()
        tn, fn = self.true_negatives.numpy(), self.false_negatives.numpy()
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc(tp, fp, fn)
        recall = _divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        elif self.curve == "PR":
            x, y = recall, _divide_no_nan(tp, tp + fp)
        else:  # PRGAIN
            scaling = _divide_no_nan(tp + fn, tn + fp)
            recall_gain = np.where(tp == 0, 0.0, 1.0 - scaling * _divide_no_nan(fn, tp))
            precision_gain = np.where(tp == 0, 1.0, 1.0 - scaling * _divide_no_nan(fp, tp))
            x, y = np.maximum(recall_gain, 0.0), precision_gain
        n = self.num_thresholds
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:n - 1], y[1:])
        else:
            heights = np.maximum(y[:n - 1], y[1:])
        return self._by_label(((x[:n - 1] - x[1:]) * heights).astype("float32"))


class FBetaScore(Metric):
    """Keras's FBetaScore (and F1Score): per-class (or micro) true positives, false
    positives and negatives of the thresholded predictions, then the F-beta score averaged
    as `average` says."""

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, y_true_shape, y_pred_shape):
        if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
            raise ValueError("FBetaScore expects 2D inputs with shape (batch_size, output_dim). Received input shapes: "
                             f"y_pred.shape={y_pred_shape} and y_true.shape={y_true_shape}.")
        shape = () if self.average == "micro" else (y_pred_shape[-1],)
        for name in ("true_positives", "false_positives", "false_negatives", "intermediate_weights"):
            setattr(self, name, self.add_variable(shape, "zeros", name=name))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred, sample_weight = _arrays(type(self).__name__, y_true, y_pred, sample_weight)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        if self.threshold is None:
            predicted = (y_pred >= np.max(y_pred, axis=-1, keepdims=True)) & (np.abs(y_pred) > 1e-9)
        else:
            predicted = y_pred > self.threshold
        y_pred = predicted.astype("float32")

        def weighted_sum(value):
            if sample_weight is not None:
                value = value * np.expand_dims(sample_weight, 1)
            return np.sum(value, axis=self.axis, dtype="float32")

        self.true_positives.assign(self.true_positives.numpy() + weighted_sum(y_pred * y_true))
        self.false_positives.assign(self.false_positives.numpy() + weighted_sum(y_pred * (1 - y_true)))
        self.false_negatives.assign(self.false_negatives.numpy() + weighted_sum((1 - y_pred) * y_true))
        self.intermediate_weights.assign(self.intermediate_weights.numpy() + weighted_sum(y_true))

    def result(self):
        if not self._built:
            return np.float32(0.0)
        tp, fp, fn = self.true_positives.numpy(), self.false_positives.numpy(), self.false_negatives.numpy()
        precision = tp / (tp + fp + np.float32(EPSILON))
        recall = tp / (tp + fn + np.float32(EPSILON))
        beta2 = np.float32(self.beta ** 2)
        f = precision * recall / (beta2 * precision + recall + np.float32(EPSILON)) * (1 + beta2)
        if self.average == "weighted":
            w = self.intermediate_weights.numpy()
            return np.float32(np.sum(f * (w / (np.sum(w) + np.float32(EPSILON)))))
        if self.average is not None:
            return np.float32(np.mean(f))
        return f.astype("float32")


def _wrapper(fn, **keys):
    def make(config):
        return MeanMetricWrapper(fn, name=config["name"], **{k: config.get(k, v) for k, v in keys.items()})
    return make


def _plain(cls, drop=()):
    def make(config):
        return cls(**{k: v for k, v in config.items() if k not in drop})
    return make


TWINS = {
    "Accuracy": _wrapper(accuracy),
    "BinaryAccuracy": _wrapper(_functions.binary_accuracy, threshold=0.5),
    "CategoricalAccuracy": _wrapper(_functions.categorical_accuracy),
    "SparseCategoricalAccuracy": _wrapper(_functions.sparse_categorical_accuracy),
    "TopKCategoricalAccuracy": _wrapper(_functions.top_k_categorical_accuracy, k=5),
    "SparseTopKCategoricalAccuracy": _wrapper(_functions.sparse_top_k_categorical_accuracy, k=5,
                                              from_sorted_ids=False),
    "MeanAbsoluteError": _wrapper(_losses.mean_absolute_error),
    "MeanSquaredError": _wrapper(_losses.mean_squared_error),
    "MeanAbsolutePercentageError": _wrapper(_losses.mean_absolute_percentage_error),
    "RootMeanSquaredError": _plain(RootMeanSquaredError),
    "Precision": _plain(Precision),
    "Recall": _plain(Recall),
    "AUC": _plain(AUC),
    "F1Score": lambda config: FBetaScore(**config, beta=1.0),
    "FBetaScore": _plain(FBetaScore),
}


def twin_of(metric):
    """The eager twin of an engine metric object, made from its arguments (all of Keras's,
    also those the engine does not take, such as AUC's explicit thresholds)."""
    config = dict(metric._args)
    config.pop("dtype", None)
    config["name"] = metric.name
    return TWINS[metric._class_name](config)

