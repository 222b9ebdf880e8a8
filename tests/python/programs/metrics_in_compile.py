# Losses and metrics given to compile the ways the Keras guides give them: a loss function
# object (keras.losses.categorical_crossentropy), metric functions, Keras's metric classes
# (KLDivergence, Precision, R2Score-free classification set, TruePositives, MeanIoU on
# one-hot targets), a segmentation loss class (Dice with its axes), a regression's R2Score
# and correlation, a classifier's PrecisionAtRecall family; fit, evaluate, save to .keras
# and load, and the compile config Keras writes.
import json
import os
import tempfile
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(3)
x = rng.normal(size=(96, 8)).astype("float32")
labels = (x[:, :3].sum(axis=1) > 0).astype(int) + (x[:, 3] > 0.8).astype(int)
y = np.eye(3, dtype="float32")[labels]
model = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(12, activation="relu"),
                          layers.Dense(3, activation="softmax")])
init = np.random.default_rng(4)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss=keras.losses.categorical_crossentropy,
              metrics=[keras.metrics.categorical_accuracy, keras.metrics.top_k_categorical_accuracy,
                       keras.metrics.KLDivergence(), keras.metrics.TruePositives(), keras.metrics.kl_divergence,
                       keras.metrics.OneHotMeanIoU(num_classes=3), keras.metrics.CategoricalHinge()])
history = model.fit(x[:80], y[:80], batch_size=16, epochs=3, shuffle=False, verbose=0)
scores = model.evaluate(x[80:], y[80:], batch_size=8, verbose=0, return_dict=True)
path = os.path.join(tempfile.mkdtemp(), "model.keras")
model.save(path)
loaded = keras.models.load_model(path)
again = loaded.evaluate(x[80:], y[80:], batch_size=8, verbose=0, return_dict=True)

segmenter = keras.Sequential([keras.Input(shape=(6, 6, 1)), layers.Conv2D(1, 3, padding="same",
                                                                        activation="sigmoid")])
segmenter.set_weights([(init.normal(size=w.shape) * 0.5).astype("float32") for w in segmenter.get_weights()])
masks = (rng.random((32, 6, 6, 1)) > 0.6).astype("float32")
images = (masks + rng.normal(size=masks.shape) * 0.3).astype("float32")
segmenter.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.Dice(axis=(1, 2, 3)),
                  metrics=[keras.metrics.BinaryIoU(target_class_ids=[1]), "binary_accuracy"])
seg_history = segmenter.fit(images, masks, batch_size=8, epochs=3, shuffle=False, verbose=0)
features = rng.normal(size=(64, 4)).astype("float32")
targets = (features @ rng.normal(size=(4, 2))).astype("float32")
regressor = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(2)])
regressor.set_weights([np.full((4, 2), 0.1, "float32"), np.zeros(2, "float32")])
regressor.compile(optimizer="sgd", loss="mse", metrics=[keras.metrics.R2Score(), keras.metrics.PearsonCorrelation()])
reg_history = regressor.fit(features, targets, batch_size=16, epochs=2, shuffle=False, verbose=0)
classifier = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(1, activation="sigmoid")])
classifier.set_weights([np.full((4, 1), 0.3, "float32"), np.zeros(1, "float32")])
classifier.compile(optimizer="sgd", loss="binary_crossentropy",
                   metrics=[keras.metrics.PrecisionAtRecall(0.5), keras.metrics.SpecificityAtSensitivity(0.5),
                            keras.metrics.FalsePositives(), keras.metrics.MeanIoU(2)])
cls_history = classifier.fit(features, (targets[:, :1] > 0).astype("float32"), batch_size=16, epochs=2,
                             shuffle=False, verbose=0)
print("RESULT " + json.dumps({
    "regression": {k: [float(v) for v in vals] for k, vals in sorted(reg_history.history.items())},
    "classification": {k: [float(v) for v in vals] for k, vals in sorted(cls_history.history.items())},
    "rtol": 2e-4, "atol": 1e-5,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "evaluate": {k: float(v) for k, v in sorted(scores.items())},
    "loaded": {k: float(v) for k, v in sorted(again.items())},
    "compile_config": {k: loaded.get_compile_config()[k] for k in ("loss", "metrics")},
    "segmentation": {k: [float(v) for v in vals] for k, vals in sorted(seg_history.history.items())}}))
