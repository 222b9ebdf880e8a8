# The Keras guide "Customizing what happens in fit" / "Training & evaluation": a custom
# loss function, a Loss subclass and a Metric subclass.
import json
import numpy as np
import keras
from keras import layers, ops


def custom_mean_squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


class CustomMSE(keras.losses.Loss):
    def __init__(self, regularization_factor=0.1, name="custom_mse"):
        super().__init__(name=name)
        self.regularization_factor = regularization_factor

    def call(self, y_true, y_pred):
        mse = ops.mean(ops.square(y_true - y_pred), axis=-1)
        reg = ops.mean(ops.square(0.5 - y_pred), axis=-1)
        return mse + reg * self.regularization_factor


class CategoricalTruePositives(keras.metrics.Metric):
    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = ops.reshape(ops.argmax(y_pred, axis=1), (-1, 1))
        values = ops.cast(y_true, "int32") == ops.cast(y_pred, "int32")
        values = ops.cast(values, "float32")
        self.true_positives.assign_add(ops.sum(values))

    def result(self):
        return self.true_positives

    def reset_state(self):
        self.true_positives.assign(0.0)


rng = np.random.default_rng(0)
x = rng.normal(size=(256, 8)).astype("float32")
y = keras.utils.to_categorical((x[:, 0] > 0).astype("int64"), 10)
inputs = keras.Input(shape=(8,))
outputs = layers.Dense(10, activation="softmax")(layers.Dense(16, activation="relu")(inputs))
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss=custom_mean_squared_error)
h1 = model.fit(x, y, batch_size=64, epochs=1, verbose=0)
model.compile(optimizer="adam", loss=CustomMSE(), metrics=[CategoricalTruePositives()])
h2 = model.fit(x, y, batch_size=64, epochs=1, verbose=0)
print("RESULT " + json.dumps({"keys": [sorted(h1.history), sorted(h2.history)], "params": model.count_params()}))
