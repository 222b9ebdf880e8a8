"""Keras 3.15's metric classes that nnfit writes with keras.ops rather than as engine
metrics: the means of a loss function (BinaryCrossentropy ... Poisson, the correlations),
the confusion counts (TruePositives ...), R2Score and the IoU family. Each is a
keras.metrics.Metric like a user's: on arrays it updates eagerly; in compile its
update_state and result are traced into graphs the engine runs after each step (Note
[Traced losses and metrics] in src/nn/traced_metric.cpp), so it trains with no Python in
the step. They take Keras's arguments and write Keras's configs (module keras.metrics), so
files with them load in Keras and back. Each follows Keras's own class in
keras/src/metrics/.
"""
import numpy as np

from nnfit.keras import _loss_functions as _losses
from nnfit.keras import _metric_functions as _functions
from nnfit.keras import ops
from nnfit.keras.metrics import MeanMetricWrapper, Metric
from nnfit.keras.ops._operation import is_symbolic

__all__ = []


def _float(x):
    """A tensor as float32: symbolic ones cast, arrays and Python lists converted."""
    return ops.cast(x, "float32") if is_symbolic(x) else np.asarray(x, dtype="float32")


def _export(cls):
    cls.__module__ = "nnfit.keras.metrics"  # serialized as Keras's keras.metrics
    __all__.append(cls.__name__)
    return cls


class _Wrapper(MeanMetricWrapper):
    """A Keras metric class that is MeanMetricWrapper of a function: `_keys` are the config
    keys Keras writes besides name and dtype."""

    _fn = None
    _keys = ()

    def __init__(self, name, dtype, **kwargs):
        super().__init__(type(self)._fn, name=name, dtype=dtype, **kwargs)

    def get_config(self):
        config = {"name": self.name, "dtype": self.dtype}
        config.update({k: self._fn_kwargs[k] for k in self._keys})
        return config


def _wrapper(class_name, fn, default_name, **defaults):
    keys = tuple(defaults)

    def __init__(self, name=default_name, dtype=None, **kwargs):
        unknown = set(kwargs) - set(keys)
        if unknown:
            raise TypeError(f"{class_name}.__init__() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        _Wrapper.__init__(self, name, dtype, **{**defaults, **kwargs})

    cls = type(class_name, (_Wrapper,), {"__init__": __init__, "_fn": staticmethod(fn), "_keys": keys,
                                         "__doc__": f"keras.metrics.{class_name}: the mean of {fn.__name__} over the "
                                                    "samples seen, as Keras's."})
    return _export(cls)


BinaryCrossentropy = _wrapper("BinaryCrossentropy", _losses.binary_crossentropy, "binary_crossentropy",
                              from_logits=False, label_smoothing=0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", _losses.categorical_crossentropy,
                                   "categorical_crossentropy", from_logits=False, label_smoothing=0, axis=-1)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", _losses.sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False, ignore_class=None,
                                         axis=-1)
CategoricalHinge = _wrapper("CategoricalHinge", _losses.categorical_hinge, "categorical_hinge")
Hinge = _wrapper("Hinge", _losses.hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", _losses.squared_hinge, "squared_hinge")
KLDivergence = _wrapper("KLDivergence", _losses.kl_divergence, "kl_divergence")
LogCoshError = _wrapper("LogCoshError", _losses.log_cosh, "logcosh")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", _losses.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
Poisson = _wrapper("Poisson", _losses.poisson, "poisson")
PearsonCorrelation = _wrapper("PearsonCorrelation", _functions.pearson_correlation, "pearson_correlation", axis=-1)
ConcordanceCorrelation = _wrapper("ConcordanceCorrelation", _functions.concordance_correlation,
                                  "concordance_correlation", axis=-1)


@_export
class CosineSimilarity(_Wrapper):
    """keras.metrics.CosineSimilarity(name, dtype, axis): the mean cosine similarity (Keras
    writes no axis in its config)."""

    _fn = staticmethod(_functions.cosine_similarity)

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(name, dtype, axis=axis)


def _thresholds(thresholds):
    """Keras's parse_init_thresholds: one or several thresholds in [0, 1] (0.5 by default)."""
    values = [0.5] if thresholds is None else list(np.atleast_1d(np.asarray(thresholds, dtype="float64")))
    if any(not 0.0 <= t <= 1.0 for t in values):
        raise ValueError(f"Threshold values must be in [0, 1]. Received: {thresholds}")
    return [float(t) for t in values]


class _ConfusionCount(Metric):
    """Keras's _ConfusionMatrixConditionCount: per threshold, the weighted count of
    predictions above it (and labels 1) that fall in one cell of the confusion matrix."""

    _label = _positive = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = _thresholds(thresholds)
        self.accumulator = self.add_variable(shape=(len(self.thresholds),), initializer="zeros", name="accumulator")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _losses.same_rank(*_losses._pair(y_true, y_pred))
        if sample_weight is not None:  # broadcast over each sample's values, as Keras's
            w = _float(sample_weight)
            while w.ndim < y_pred.ndim:
                w = ops.expand_dims(w, -1)
            w = ops.reshape(w * (y_pred * 0.0 + 1.0), (-1, 1))
        y_true = ops.reshape(y_true, (-1, 1))
        y_pred = ops.reshape(y_pred, (-1, 1))
        above = ops.cast(ops.greater(y_pred, np.asarray(self.thresholds, "float32")), "float32")
        label = y_true if self._label else 1.0 - y_true
        counts = label * (above if self._positive else 1.0 - above)
        if sample_weight is not None:
            counts = counts * w
        self.accumulator.assign_add(ops.sum(counts, axis=0))

    def result(self):
        return self.accumulator[0] if len(self.thresholds) == 1 else ops.cast(self.accumulator, "float32")

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "thresholds": self.init_thresholds}


def _count(class_name, label, positive, default_name):
    def __init__(self, thresholds=None, name=None, dtype=None):
        _ConfusionCount.__init__(self, thresholds=thresholds, name=name or default_name, dtype=dtype)
    return _export(type(class_name, (_ConfusionCount,), {
        "__init__": __init__, "_label": label, "_positive": positive,
        "__doc__": f"keras.metrics.{class_name}(thresholds, name, dtype): the weighted count of "
                   f"{default_name.replace('_', ' ')} per threshold (0.5 by default)."}))


TruePositives = _count("TruePositives", True, True, "true_positives")
FalsePositives = _count("FalsePositives", False, True, "false_positives")
TrueNegatives = _count("TrueNegatives", False, False, "true_negatives")
FalseNegatives = _count("FalseNegatives", True, False, "false_negatives")


@_export
class R2Score(Metric):
    """keras.metrics.R2Score(class_aggregation, num_regressors, name, dtype): the coefficient
    of determination over (batch, outputs) targets, per output then aggregated."""

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of {valid}. Received: "
                             f"class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value >= 0. Received: "
                             f"num_regressors={num_regressors}")
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_variable(shape=(), initializer="zeros", name="num_samples")
        self._built = False

    def _build(self, true_shape, pred_shape):
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError("R2Score expects 2D inputs with shape (batch_size, output_dim). Received input shapes: "
                             f"y_pred.shape={pred_shape} and y_true.shape={true_shape}.")
        n = pred_shape[-1]
        self.squared_sum = self.add_variable(shape=(n,), initializer="zeros", name="squared_sum")
        self.sum = self.add_variable(shape=(n,), initializer="zeros", name="sum")
        self.total_mse = self.add_variable(shape=(n,), initializer="zeros", name="residual")
        self.count = self.add_variable(shape=(n,), initializer="zeros", name="count")
        self._built = True

    def _build_for(self, true_shape, pred_shape):
        """Its variables before a trace (Keras makes them at the first update)."""
        if not self._built:
            self._build(true_shape if len(true_shape) == len(pred_shape) else pred_shape, pred_shape)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _losses.same_rank(*_losses._pair(y_true, y_pred))
        if not self._built:
            self._build(tuple(y_true.shape), tuple(y_pred.shape))
        ones = y_true * 0.0 + 1.0
        w = ones if sample_weight is None else ones * ops.reshape(_float(sample_weight), (-1, 1))
        weighted = y_true * w
        self.sum.assign(self.sum + ops.sum(weighted, axis=0))
        self.squared_sum.assign(self.squared_sum + ops.sum(y_true * weighted, axis=0))
        self.total_mse.assign(self.total_mse + ops.sum(ops.square(y_true - y_pred) * w, axis=0))
        self.count.assign(self.count + ops.sum(w, axis=0))
        self.num_samples.assign(self.num_samples + ops.sum(ones))

    def result(self):
        mean = self.sum / self.count
        total = self.squared_sum - self.sum * mean
        raw = 1.0 - self.total_mse / total
        infinite = ops.logical_and(ops.equal(total, 0.0), ops.not_equal(self.total_mse, 0.0))  # Keras's isinf
        raw = ops.where(infinite, 0.0, raw)
        if self.class_aggregation == "uniform_average":
            score = ops.mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = ops.sum(total * raw) / ops.sum(total)
        else:
            score = raw
        if self.num_regressors:
            n = self.num_samples
            adjusted = 1.0 - (1.0 - score) * (n - 1.0) / (n - float(self.num_regressors) - 1.0)
            score = ops.where(ops.greater(n - 1.0, float(self.num_regressors)), adjusted, score)
        return score

    def reset_state(self):
        for v in self.variables:
            v.assign(np.zeros(v.shape, "float32"))

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


@_export
class IoU(Metric):
    """keras.metrics.IoU(num_classes, target_class_ids, name, dtype, ignore_class,
    sparse_y_true, sparse_y_pred, axis): intersection over union of the target classes,
    from the confusion matrix of class ids accumulated over the samples seen."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(name=name, dtype=None)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is [0, {num_classes}).")
        self.num_classes = int(num_classes)
        self.target_class_ids = list(target_class_ids)
        self.ignore_class = ignore_class
        self.sparse_y_true = sparse_y_true
        self.sparse_y_pred = sparse_y_pred
        self.axis = axis
        self._int_dtype = dtype or "int64"
        self.total_cm = self.add_variable(shape=(num_classes, num_classes), initializer="zeros",
                                          name="total_confusion_matrix")

    def _ids(self, y_true, y_pred):
        y_true, y_pred = _float(y_true), _float(y_pred)
        y_true = ops.argmax(y_true, axis=self.axis) if not self.sparse_y_true else y_true
        y_pred = ops.argmax(y_pred, axis=self.axis) if not self.sparse_y_pred else y_pred
        return ops.reshape(_float(y_true), (-1,)), ops.reshape(_float(y_pred), (-1,))

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = self._ids(y_true, y_pred)
        # Keras's integer ids: a fractional id is truncated, an id outside [0, classes) not counted.
        y_true = ops.where(ops.less(y_true, 0.0), -1.0, ops.floor(y_true))
        y_pred = ops.where(ops.less(y_pred, 0.0), -1.0, ops.floor(y_pred))
        w = y_true * 0.0 + 1.0
        if sample_weight is not None:
            w = w * ops.reshape(ops.floor(_float(sample_weight)), (-1,))  # Keras's int weights
        if self.ignore_class is not None:
            w = w * ops.cast(ops.not_equal(y_true, float(self.ignore_class)), "float32")
        true_hot = ops.one_hot(y_true, self.num_classes) * ops.expand_dims(w, -1)  # out of range: all zeros
        pred_hot = ops.one_hot(y_pred, self.num_classes)
        cm = ops.sum(ops.expand_dims(true_hot, 2) * ops.expand_dims(pred_hot, 1), axis=0)
        self.total_cm.assign(self.total_cm + cm)

    def result(self):
        cm = self.total_cm
        rows = ops.sum(cm, axis=0)
        cols = ops.sum(cm, axis=1)
        eye = np.eye(self.num_classes, dtype="float32")
        tp = ops.sum(cm * eye, axis=1)
        pick = np.eye(self.num_classes, dtype="float32")[self.target_class_ids].T  # (classes, targets)
        tp = ops.matmul(ops.expand_dims(tp, 0), pick)[0]
        denominator = ops.matmul(ops.expand_dims(rows + cols, 0), pick)[0] - tp
        valid = ops.cast(ops.greater(denominator, 1e-9), "float32")
        iou = ops.where(valid, tp / (denominator + 1e-7), 0.0)
        return ops.sum(iou) / (ops.sum(valid) + 1e-7)

    def get_config(self):
        return {"name": self.name, "dtype": self._int_dtype, "num_classes": self.num_classes,
                "target_class_ids": self.target_class_ids, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


@_export
class BinaryIoU(IoU):
    """keras.metrics.BinaryIoU(target_class_ids, threshold, name, dtype): IoU of predictions
    thresholded (>= threshold is class 1)."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = ops.cast(ops.greater_equal(_float(y_pred), float(self.threshold)), "float32")
        super().update_state(y_true, y_pred, sample_weight)

    def get_config(self):
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": self._int_dtype}


@_export
class MeanIoU(IoU):
    """keras.metrics.MeanIoU(num_classes, ...): IoU averaged over every class."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True, sparse_y_pred=True,
                 axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self._int_dtype,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


@_export
class OneHotIoU(IoU):
    """keras.metrics.OneHotIoU(num_classes, target_class_ids, ...): IoU of one-hot targets."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids, "name": self.name,
                "dtype": self._int_dtype, "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


@_export
class OneHotMeanIoU(MeanIoU):
    """keras.metrics.OneHotMeanIoU(num_classes, ...): MeanIoU of one-hot targets."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self._int_dtype,
                "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class _AtConstraint(Metric):
    """Keras's SensitivitySpecificityBase: the four confusion counts at `num_thresholds`
    evenly spaced thresholds in [0, 1], and a result that is the best of one rate where
    another meets `value`."""

    _value_key = None

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if value < 0 or value > 1:
            raise ValueError(f"Argument `{self._value_key}` must be in the range [0, 1]. Received: "
                             f"{self._value_key}={value}")
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        super().__init__(name=name, dtype=dtype)
        setattr(self, self._value_key, value)
        self.value = value
        self.num_thresholds = num_thresholds
        self.class_id = class_id
        if num_thresholds == 1:
            self.thresholds = [0.5]
        else:
            self.thresholds = [0.0] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1.0]
        n = len(self.thresholds)
        self.true_positives = self.add_variable(shape=(n,), initializer="zeros", name="true_positives")
        self.false_positives = self.add_variable(shape=(n,), initializer="zeros", name="false_positives")
        self.true_negatives = self.add_variable(shape=(n,), initializer="zeros", name="true_negatives")
        self.false_negatives = self.add_variable(shape=(n,), initializer="zeros", name="false_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _losses._pair(y_true, y_pred)
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        y_true, y_pred = _losses.same_rank(y_true, y_pred)
        ones = y_pred * 0.0 + 1.0
        w = ones
        if sample_weight is not None:
            w = _float(sample_weight)
            while w.ndim < y_pred.ndim:
                w = ops.expand_dims(w, -1)
            w = w * ones
        y_true = ops.reshape(y_true, (-1, 1))
        w = ops.reshape(w, (-1, 1))
        above = ops.cast(ops.greater(ops.reshape(y_pred, (-1, 1)), np.asarray(self.thresholds, "float32")),
                         "float32")
        for variable, label, predicted in ((self.true_positives, y_true, above),
                                           (self.false_positives, 1.0 - y_true, above),
                                           (self.true_negatives, 1.0 - y_true, 1.0 - above),
                                           (self.false_negatives, y_true, 1.0 - above)):
            variable.assign_add(ops.sum(label * predicted * w, axis=0))

    @staticmethod
    def _rate(part, other):
        total = part + other
        empty = ops.equal(total, 0.0)  # Keras's divide_no_nan
        return ops.where(empty, 0.0, part / ops.where(empty, 1.0, total))

    def _best_where(self, constrained, dependent):
        """Keras's _find_max_under_constraint: the largest `dependent` where `constrained`
        >= value (0 where none does)."""
        feasible = ops.greater_equal(constrained, float(self.value))
        return ops.maximum(ops.max(ops.where(feasible, dependent, 0.0)), 0.0)

    def reset_state(self):
        for v in self.variables:
            v.assign(np.zeros(v.shape, "float32"))

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "class_id": self.class_id,
                "num_thresholds": self.num_thresholds, self._value_key: self.value}


def _sensitivity(m):
    return _AtConstraint._rate(m.true_positives, m.false_negatives)


def _specificity(m):
    return _AtConstraint._rate(m.true_negatives, m.false_positives)


def _precision(m):
    return _AtConstraint._rate(m.true_positives, m.false_positives)


@_export
class SensitivityAtSpecificity(_AtConstraint):
    """keras.metrics.SensitivityAtSpecificity(specificity, num_thresholds=200, class_id=None,
    name=None, dtype=None): the best sensitivity where specificity >= the given one."""
    _value_key = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name or "sensitivity_at_specificity", dtype)

    def result(self):
        return self._best_where(_specificity(self), _sensitivity(self))


@_export
class SpecificityAtSensitivity(_AtConstraint):
    """keras.metrics.SpecificityAtSensitivity(sensitivity, ...): the best specificity where
    sensitivity >= the given one."""
    _value_key = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name or "specificity_at_sensitivity", dtype)

    def result(self):
        return self._best_where(_sensitivity(self), _specificity(self))


@_export
class PrecisionAtRecall(_AtConstraint):
    """keras.metrics.PrecisionAtRecall(recall, ...): the best precision where recall >= the
    given one."""
    _value_key = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name or "precision_at_recall", dtype)

    def result(self):
        return self._best_where(_sensitivity(self), _precision(self))


@_export
class RecallAtPrecision(_AtConstraint):
    """keras.metrics.RecallAtPrecision(precision, ...): the best recall where precision >=
    the given one."""
    _value_key = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name or "recall_at_precision", dtype)

    def result(self):
        return self._best_where(_precision(self), _sensitivity(self))
