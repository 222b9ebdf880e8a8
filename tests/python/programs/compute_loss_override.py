# The Keras guide "Customizing what happens in fit()", the compute_loss way: a subclassed
# Model overriding compute_loss to add a penalty on its predictions to the compiled loss,
# fitted with validation, then evaluated.
import json
import numpy as np
import keras
from keras import layers, ops


class CustomModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(16, activation="tanh")
        self.out = layers.Dense(1)

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss = super().compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training)
        return loss + 0.01 * ops.mean(ops.square(y_pred))


rng = np.random.default_rng(0)
x = rng.normal(size=(200, 8)).astype("float32")
y = (x[:, :4].sum(axis=1, keepdims=True) - x[:, 4:5]).astype("float32")
model = CustomModel()
model(x[:1])
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
history = model.fit(x, y, batch_size=40, epochs=3, shuffle=False, verbose=0, validation_split=0.2)
scores = model.evaluate(x, y, batch_size=50, verbose=0, return_dict=True)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "evaluate_keys": sorted(scores), "params": model.count_params(), "rtol": 1e-4,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "evaluate": {k: float(v) for k, v in sorted(scores.items())}}))
