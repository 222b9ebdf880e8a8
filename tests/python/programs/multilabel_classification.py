# Multi-label classification as keras.io's "Large-scale multi-label text classification"
# builds its head: independent sigmoid outputs, binary crossentropy, binary accuracy at a
# threshold, precision and recall per label set, F1 over the labels.
import json
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(240, 12)).astype("float32")
y = np.stack([x[:, 0] > 0, x[:, 1] + x[:, 2] > 0, x[:, 3] > 0.5, x[:, 4] * x[:, 5] > 0], 1).astype("float32")
model = keras.Sequential([keras.Input(shape=(12,)), layers.Dense(32, activation="relu"), layers.Dropout(0.0),
                          layers.Dense(4, activation="sigmoid")])
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])
model.compile(loss="binary_crossentropy", optimizer=keras.optimizers.Adam(0.01),
              metrics=[keras.metrics.BinaryAccuracy(threshold=0.4), keras.metrics.Precision(name="precision"),
                       keras.metrics.Recall(name="recall"), keras.metrics.F1Score(average="macro", threshold=0.5)])
history = model.fit(x, y, batch_size=48, epochs=3, shuffle=False, verbose=0, validation_split=0.2)
probabilities = model.predict(x[:3], verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "labels": (probabilities > 0.5).astype(int).tolist(),
    "rtol": 1e-3, "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "probabilities": probabilities.astype(float).ravel().tolist()}))
