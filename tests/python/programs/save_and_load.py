# The Keras guide "Save, serialize, and export models": .keras, weights, config.
import json
import os
import tempfile
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(64, 32)).astype("float32")
y = rng.normal(size=(64, 1)).astype("float32")
inputs = keras.Input(shape=(32,))
outputs = layers.Dense(1)(layers.Dense(16, activation="relu")(inputs))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mean_squared_error")
model.fit(x, y, epochs=1, verbose=0)
with tempfile.TemporaryDirectory() as d:
    model.save(os.path.join(d, "my_model.keras"))
    reconstructed = keras.models.load_model(os.path.join(d, "my_model.keras"))
    same_predictions = bool(np.allclose(model.predict(x, verbose=0), reconstructed.predict(x, verbose=0), atol=1e-6))
    reconstructed.fit(x, y, epochs=1, verbose=0)
    model.save_weights(os.path.join(d, "w.weights.h5"))
    clone = keras.Model.from_config(model.get_config())
    clone.load_weights(os.path.join(d, "w.weights.h5"))
    same_weights = all(np.array_equal(a, b) for a, b in zip(clone.get_weights(), model.get_weights()))
print("RESULT " + json.dumps({"same_predictions": same_predictions, "same_weights": same_weights,
                              "params": reconstructed.count_params()}))
