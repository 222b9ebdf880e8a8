# The Keras guide "Save, serialize, and export models": a function registered with
# register_keras_serializable used as a layer's activation, trained, saved and loaded.
import json
import os
import tempfile
import numpy as np
import keras
from keras import layers, ops


@keras.saving.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


inputs = keras.Input(shape=(3,))
outputs = layers.Dense(1, activation=custom_fn)(layers.Dense(4, activation="tanh")(inputs))
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
rng = np.random.default_rng(0)
x = rng.normal(size=(32, 3)).astype("float32")
y = np.square(x[:, :1]).astype("float32")
history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
with tempfile.TemporaryDirectory() as d:
    model.save(os.path.join(d, "activation.keras"))
    reloaded = keras.models.load_model(os.path.join(d, "activation.keras"))
print("RESULT " + json.dumps({"activation": keras.saving.get_registered_name(model.layers[-1].activation), "rtol": 1e-4,
                              "loss": [float(v) for v in history.history["loss"]],
                              "reloaded": reloaded.predict(x[:3], verbose=0).astype(float).ravel().tolist()}))
