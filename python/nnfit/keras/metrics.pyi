"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any

from nnfit.keras._object import KerasObject


class Metric(KerasObject): ...


class Accuracy(Metric):
    """Keras's Accuracy on nnfit's engine. Calculates how often predictions equal labels."""
    def __init__(self, name: Any = 'accuracy', dtype: Any = None) -> None: ...


class SparseCategoricalAccuracy(Metric):
    """Keras's SparseCategoricalAccuracy on nnfit's engine. Calculates how often predictions match integer labels."""
    def __init__(self, name: Any = 'sparse_categorical_accuracy', dtype: Any = None) -> None: ...


class CategoricalAccuracy(Metric):
    """Keras's CategoricalAccuracy on nnfit's engine. Calculates how often predictions match one-hot labels."""
    def __init__(self, name: Any = 'categorical_accuracy', dtype: Any = None) -> None: ...


class BinaryAccuracy(Metric):
    """Keras's BinaryAccuracy on nnfit's engine. Calculates how often predictions match binary labels."""
    def __init__(self, name: Any = 'binary_accuracy', dtype: Any = None, threshold: Any = 0.5) -> None: ...


class MeanAbsoluteError(Metric):
    """Keras's MeanAbsoluteError on nnfit's engine. Computes the mean absolute error between the labels and predictions."""
    def __init__(self, name: Any = 'mean_absolute_error', dtype: Any = None) -> None: ...


class MeanSquaredError(Metric):
    """Keras's MeanSquaredError on nnfit's engine. Computes the mean squared error between `y_true` and `y_pred`."""
    def __init__(self, name: Any = 'mean_squared_error', dtype: Any = None) -> None: ...


class RootMeanSquaredError(Metric):
    """Keras's RootMeanSquaredError on nnfit's engine. Computes root mean squared error metric between `y_true` and `y_pred`."""
    def __init__(self, name: Any = 'root_mean_squared_error', dtype: Any = None) -> None: ...


class MeanAbsolutePercentageError(Metric):
    """Keras's MeanAbsolutePercentageError on nnfit's engine. Computes mean absolute percentage error between `y_true` and `y_pred`."""
    def __init__(self, name: Any = 'mean_absolute_percentage_error', dtype: Any = None) -> None: ...


class Precision(Metric):
    """Keras's Precision on nnfit's engine. Computes the precision of the predictions with respect to the labels."""
    def __init__(self, thresholds: Any = None, top_k: Any = None, class_id: Any = None, name: Any = None, dtype: Any = None) -> None: ...


class Recall(Metric):
    """Keras's Recall on nnfit's engine. Computes the recall of the predictions with respect to the labels."""
    def __init__(self, thresholds: Any = None, top_k: Any = None, class_id: Any = None, name: Any = None, dtype: Any = None) -> None: ...


class AUC(Metric):
    """Keras's AUC on nnfit's engine. Approximates the AUC (Area under the curve) of the ROC or PR curves."""
    def __init__(self, num_thresholds: Any = 200, curve: Any = 'ROC', summation_method: Any = 'interpolation', name: Any = None, dtype: Any = None, thresholds: Any = None, multi_label: Any = False, num_labels: Any = None, label_weights: Any = None, from_logits: Any = False) -> None: ...


class TopKCategoricalAccuracy(Metric):
    """Keras's TopKCategoricalAccuracy on nnfit's engine. Computes how often targets are in the top `K` predictions."""
    def __init__(self, k: Any = 5, name: Any = 'top_k_categorical_accuracy', dtype: Any = None) -> None: ...


class SparseTopKCategoricalAccuracy(Metric):
    """Keras's SparseTopKCategoricalAccuracy on nnfit's engine. Computes how often integer targets are in the top `K` predictions."""
    def __init__(self, k: Any = 5, name: Any = 'sparse_top_k_categorical_accuracy', dtype: Any = None, from_sorted_ids: Any = False) -> None: ...


class F1Score(Metric):
    """Keras's F1Score on nnfit's engine. Computes F-1 Score."""
    def __init__(self, average: Any = None, threshold: Any = None, name: Any = 'f1_score', dtype: Any = None) -> None: ...


class FBetaScore(Metric):
    """Keras's FBetaScore on nnfit's engine. Computes F-Beta score."""
    def __init__(self, average: Any = None, beta: Any = 1.0, threshold: Any = None, name: Any = 'fbeta_score', dtype: Any = None) -> None: ...
