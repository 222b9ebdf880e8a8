"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any

from nnfit.keras._object import KerasObject


class Loss(KerasObject): ...


class SparseCategoricalCrossentropy(Loss):
    """Keras's SparseCategoricalCrossentropy on nnfit's engine. Computes the crossentropy loss between the labels and predictions."""
    def __init__(self, from_logits: Any = False, ignore_class: Any = None, reduction: Any = 'sum_over_batch_size', axis: Any = -1, name: Any = 'sparse_categorical_crossentropy', dtype: Any = None) -> None: ...


class CategoricalCrossentropy(Loss):
    """Keras's CategoricalCrossentropy on nnfit's engine. Computes the crossentropy loss between the labels and predictions."""
    def __init__(self, from_logits: Any = False, label_smoothing: Any = 0.0, axis: Any = -1, reduction: Any = 'sum_over_batch_size', name: Any = 'categorical_crossentropy', dtype: Any = None) -> None: ...


class BinaryCrossentropy(Loss):
    """Keras's BinaryCrossentropy on nnfit's engine. Computes the cross-entropy loss between true labels and predicted labels."""
    def __init__(self, from_logits: Any = False, label_smoothing: Any = 0.0, axis: Any = -1, reduction: Any = 'sum_over_batch_size', name: Any = 'binary_crossentropy', dtype: Any = None) -> None: ...


class MeanSquaredError(Loss):
    """Keras's MeanSquaredError on nnfit's engine. Computes the mean of squares of errors between labels and predictions."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'mean_squared_error', dtype: Any = None) -> None: ...


class MeanAbsoluteError(Loss):
    """Keras's MeanAbsoluteError on nnfit's engine. Computes the mean of absolute difference between labels and predictions."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'mean_absolute_error', dtype: Any = None) -> None: ...


class MeanAbsolutePercentageError(Loss):
    """Keras's MeanAbsolutePercentageError on nnfit's engine. Computes the mean absolute percentage error between `y_true` & `y_pred`."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'mean_absolute_percentage_error', dtype: Any = None) -> None: ...


class MeanSquaredLogarithmicError(Loss):
    """Keras's MeanSquaredLogarithmicError on nnfit's engine. Computes the mean squared logarithmic error between `y_true` & `y_pred`."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'mean_squared_logarithmic_error', dtype: Any = None) -> None: ...


class Huber(Loss):
    """Keras's Huber on nnfit's engine. Computes the Huber loss between `y_true` & `y_pred`."""
    def __init__(self, delta: Any = 1.0, reduction: Any = 'sum_over_batch_size', name: Any = 'huber_loss', dtype: Any = None) -> None: ...


class LogCosh(Loss):
    """Keras's LogCosh on nnfit's engine. Computes the logarithm of the hyperbolic cosine of the prediction error."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'log_cosh', dtype: Any = None) -> None: ...


class Poisson(Loss):
    """Keras's Poisson on nnfit's engine. Computes the Poisson loss between `y_true` & `y_pred`."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'poisson', dtype: Any = None) -> None: ...


class KLDivergence(Loss):
    """Keras's KLDivergence on nnfit's engine. Computes Kullback-Leibler divergence loss between `y_true` & `y_pred`."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'kl_divergence', dtype: Any = None) -> None: ...


class Hinge(Loss):
    """Keras's Hinge on nnfit's engine. Computes the hinge loss between `y_true` & `y_pred`."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'hinge', dtype: Any = None) -> None: ...


class SquaredHinge(Loss):
    """Keras's SquaredHinge on nnfit's engine. Computes the squared hinge loss between `y_true` & `y_pred`."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'squared_hinge', dtype: Any = None) -> None: ...


class CategoricalHinge(Loss):
    """Keras's CategoricalHinge on nnfit's engine. Computes the categorical hinge loss between `y_true` & `y_pred`."""
    def __init__(self, reduction: Any = 'sum_over_batch_size', name: Any = 'categorical_hinge', dtype: Any = None) -> None: ...


class CosineSimilarity(Loss):
    """Keras's CosineSimilarity on nnfit's engine. Computes the cosine similarity between `y_true` & `y_pred`."""
    def __init__(self, axis: Any = -1, reduction: Any = 'sum_over_batch_size', name: Any = 'cosine_similarity', dtype: Any = None) -> None: ...


class BinaryFocalCrossentropy(Loss):
    """Keras's BinaryFocalCrossentropy on nnfit's engine. Computes focal cross-entropy loss between true labels and predictions."""
    def __init__(self, apply_class_balancing: Any = False, alpha: Any = 0.25, gamma: Any = 2.0, from_logits: Any = False, label_smoothing: Any = 0.0, axis: Any = -1, reduction: Any = 'sum_over_batch_size', name: Any = 'binary_focal_crossentropy', dtype: Any = None) -> None: ...


class CategoricalFocalCrossentropy(Loss):
    """Keras's CategoricalFocalCrossentropy on nnfit's engine. Computes the alpha balanced focal crossentropy loss."""
    def __init__(self, alpha: Any = 0.25, gamma: Any = 2.0, from_logits: Any = False, label_smoothing: Any = 0.0, axis: Any = -1, reduction: Any = 'sum_over_batch_size', name: Any = 'categorical_focal_crossentropy', dtype: Any = None) -> None: ...
