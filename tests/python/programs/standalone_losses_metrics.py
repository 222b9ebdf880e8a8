# keras.losses and keras.metrics used on their own, as the Keras API docs show them: the
# loss functions and Loss objects called on arrays (with sample weights and reductions),
# metric objects updated over two batches and read, the metric functions, and the modules'
# get / serialize / deserialize.
import json
import numpy as np
import keras

rng = np.random.default_rng(0)
y_true = (rng.random((6, 3)) > 0.5).astype("float32")
y_pred = rng.random((6, 3)).astype("float32")
weights = rng.random(6).astype("float32")
scores = rng.random((5, 4)).astype("float32")
ids = np.array([0, 3, 2, 1, 1])
out = {"rtol": 1e-4}


def listed(x):
    return np.asarray(x, dtype="float64").tolist()


metrics = {
    "binary_crossentropy": keras.metrics.BinaryCrossentropy(), "kl_divergence": keras.metrics.KLDivergence(),
    "true_positives": keras.metrics.TruePositives(), "false_negatives": keras.metrics.FalseNegatives([0.3, 0.7]),
    "true_negatives": keras.metrics.TrueNegatives(), "false_positives": keras.metrics.FalsePositives(),
    "r2": keras.metrics.R2Score(), "r2_weighted": keras.metrics.R2Score("variance_weighted_average", 1),
    "pearson": keras.metrics.PearsonCorrelation(), "concordance": keras.metrics.ConcordanceCorrelation(),
    "cosine": keras.metrics.CosineSimilarity(), "hinge": keras.metrics.Hinge(),
    "squared_hinge": keras.metrics.SquaredHinge(), "categorical_hinge": keras.metrics.CategoricalHinge(),
    "logcosh": keras.metrics.LogCoshError(), "msle": keras.metrics.MeanSquaredLogarithmicError(),
    "poisson": keras.metrics.Poisson(), "cce": keras.metrics.CategoricalCrossentropy(label_smoothing=0.1)}
binary = (rng.random(40) > 0.4).astype("float32")
scored = np.clip(binary * 0.3 + rng.random(40) * 0.7, 0.0, 1.0).astype("float32")
for key, metric in {"precision_at_recall": keras.metrics.PrecisionAtRecall(recall=0.7),
                    "recall_at_precision": keras.metrics.RecallAtPrecision(0.8, num_thresholds=50),
                    "sensitivity_at_specificity": keras.metrics.SensitivityAtSpecificity(0.6),
                    "specificity_at_sensitivity": keras.metrics.SpecificityAtSensitivity(0.9, class_id=None)}.items():
    metric.update_state(binary, scored)
    metric.update_state(binary[:10], scored[:10] * 0.8, sample_weight=weights[:1].repeat(10))
    out[key] = [listed(metric.result()), metric.get_config()]
for key, metric in metrics.items():
    metric.update_state(y_true, y_pred)
    metric.update_state(y_true[:3], y_pred[:3] * 0.5, sample_weight=weights[:3])
    out[key] = [listed(metric.result()), metric.get_config()]
mean = keras.metrics.Mean()
mean.update_state([1, 3, 5, 7])
mean.update_state([2], sample_weight=[3])
total = keras.metrics.Sum()
total.update_state([1, 3, 5, 7])
total.update_state([[2, 1]], sample_weight=[3])
out["mean"], out["sum"] = listed(mean.result()), listed(total.result())
iou = keras.metrics.IoU(num_classes=3, target_class_ids=[0, 2])
iou.update_state([0, 1, 2, 1, 5], [0, 2, 2, 1, 1], sample_weight=[1, 2, 1, 1, 1])
mean_iou = keras.metrics.MeanIoU(num_classes=3)
mean_iou.update_state([0, 1, 2, 1], [0, 2, 2, 1])
binary_iou = keras.metrics.BinaryIoU()
binary_iou.update_state([0, 1, 1, 0], [0.2, 0.7, 0.4, 0.6])
one_hot = keras.metrics.OneHotMeanIoU(num_classes=3)
one_hot.update_state(np.eye(3)[[0, 1, 2, 2]], rng.random((4, 3)))
for key, metric in (("iou", iou), ("mean_iou", mean_iou), ("binary_iou", binary_iou), ("one_hot_mean_iou", one_hot)):
    out[key] = [listed(metric.result()), metric.get_config()]

out["functions"] = {
    "binary_accuracy": listed(keras.metrics.binary_accuracy(y_true, y_pred)),
    "categorical_accuracy": listed(keras.metrics.categorical_accuracy(np.eye(4)[ids], scores)),
    "sparse_categorical_accuracy": listed(keras.metrics.sparse_categorical_accuracy(ids, scores)),
    "top_k": listed(keras.metrics.top_k_categorical_accuracy(np.eye(4)[ids], scores, k=2)),
    "sparse_top_k": listed(keras.metrics.sparse_top_k_categorical_accuracy(ids, scores, k=2)),
    "pearson": listed(keras.metrics.pearson_correlation(y_true, y_pred)),
    "concordance": listed(keras.metrics.concordance_correlation(y_true, y_pred))}
for name in ("mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
             "mean_squared_logarithmic_error", "cosine_similarity", "huber", "log_cosh", "hinge", "squared_hinge",
             "categorical_hinge", "kl_divergence", "poisson", "binary_crossentropy", "binary_focal_crossentropy",
             "categorical_crossentropy", "categorical_focal_crossentropy", "dice", "tversky"):
    out["functions"][name] = listed(getattr(keras.losses, name)(y_true, y_pred))
probabilities = scores / scores.sum(-1, keepdims=True)
out["functions"]["sparse_categorical_crossentropy"] = listed(
    keras.losses.sparse_categorical_crossentropy(ids, probabilities))
out["functions"]["from_logits"] = listed(keras.losses.sparse_categorical_crossentropy(ids, scores, from_logits=True))
out["functions"]["generalized"] = listed(keras.losses.categorical_generalized_cross_entropy(ids, probabilities, 0.7))
embeddings = scores / np.linalg.norm(scores, axis=1, keepdims=True)
out["functions"]["circle"] = listed(keras.losses.circle(np.array([0, 1, 0, 1, 1]), embeddings))

losses = {"mse": keras.losses.MeanSquaredError(), "huber": keras.losses.Huber(delta=0.3),
          "focal": keras.losses.BinaryFocalCrossentropy(apply_class_balancing=True, gamma=1.5),
          "dice": keras.losses.Dice(), "tversky": keras.losses.Tversky(alpha=0.3, beta=0.7),
          "kld": keras.losses.KLDivergence(), "cosine": keras.losses.CosineSimilarity(),
          "cce_sum": keras.losses.CategoricalCrossentropy(label_smoothing=0.2, reduction="sum")}
out["losses"] = {k: [listed(loss(y_true, y_pred)), listed(loss(y_true, y_pred, sample_weight=weights))]
                 for k, loss in losses.items()}
out["serialized"] = [keras.losses.serialize(keras.losses.mean_squared_error),
                     keras.losses.serialize(keras.losses.Tversky()), keras.metrics.serialize(keras.metrics.R2Score()),
                     keras.metrics.serialize(keras.metrics.categorical_accuracy)]
out["round_trip"] = keras.losses.deserialize(keras.losses.serialize(keras.losses.Tversky(alpha=0.3))).get_config()


def name_of(obj):
    return getattr(obj, "__name__", type(obj).__name__)


out["get"] = [name_of(keras.losses.get(n)) for n in ("mse", "MSE", "bce", "Dice", "dice", "mean_squared_error",
                                                     "MeanSquaredError", "kld")]
out["get"] += [name_of(keras.metrics.get(n)) for n in ("mse", "accuracy", "auc", "binary_accuracy", "kl_divergence",
                                                       "KLDivergence", "mean_squared_error", "r2_score")]
print("RESULT " + json.dumps(out))
