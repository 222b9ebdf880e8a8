# The Keras guide "Making new layers and models via subclassing": a subclassed Model and a
# layer with add_weight.
import json
import numpy as np
import keras
from keras import layers, ops


class Linear(layers.Layer):
    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b


class MLP(keras.Model):
    def __init__(self):
        super().__init__()
        self.linear_1 = Linear(32)
        self.linear_2 = Linear(10)

    def call(self, inputs):
        x = self.linear_1(inputs)
        x = ops.relu(x)
        return self.linear_2(x)


rng = np.random.default_rng(0)
x = rng.normal(size=(256, 16)).astype("float32")
y = (x[:, 0] > 0).astype("int64")
model = MLP()
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(x, y, batch_size=32, epochs=2, verbose=0)
print("RESULT " + json.dumps({"keys": sorted(history.history), "params": model.count_params()}))
