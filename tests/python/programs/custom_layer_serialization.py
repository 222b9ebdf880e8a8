# The Keras guide "Save, serialize, and export models": a registered custom layer with
# get_config, a registered custom function, the .keras round trip, and from_config of the
# layer and of the whole model. (A registered function as an activation: custom_activation.py.)
import json
import os
import tempfile
import numpy as np
import keras
from keras import layers, ops


@keras.saving.register_keras_serializable(package="MyLayers")
class CustomLayer(keras.layers.Layer):
    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor})
        return config


@keras.saving.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


inputs = keras.Input(shape=(6,))
x = layers.Dense(8, activation="relu")(inputs)
x = CustomLayer(0.5, name="scale")(x)
outputs = layers.Dense(1)(x)
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
rng = np.random.default_rng(0)
x_data = rng.normal(size=(64, 6)).astype("float32")
y_data = custom_fn(x_data[:, :1]).astype("float32")
history = model.fit(x_data, y_data, batch_size=16, epochs=2, shuffle=False, verbose=0)
layer_config = model.get_layer("scale").get_config()
clone_layer = CustomLayer.from_config(layer_config)
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "custom.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    reloaded_predictions = reloaded.predict(x_data[:5], verbose=0)
    reloaded.fit(x_data, y_data, batch_size=16, epochs=1, shuffle=False, verbose=0)
    after_more = reloaded.evaluate(x_data, y_data, verbose=0)
clone = keras.Model.from_config(model.get_config())
print("RESULT " + json.dumps({
    "registered": [keras.saving.get_registered_name(CustomLayer), keras.saving.get_registered_name(custom_fn)],
    "layer_config": sorted(layer_config), "factor": clone_layer.factor, "reloaded_class": type(reloaded.get_layer("scale")).__name__,
    "clone_layers": [type(l).__name__ for l in clone.layers], "rtol": 1e-4,
    "loss": [float(v) for v in history.history["loss"]],
    "predictions": [float(v) for v in model.predict(x_data[:5], verbose=0)[:, 0]],
    "reloaded": [float(v) for v in reloaded_predictions[:, 0]], "after_more": float(after_more)}))
