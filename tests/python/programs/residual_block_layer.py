# The Keras guide "Making new layers and models via subclassing": a residual block written
# as a Layer that owns its sublayers (Conv2D, BatchNormalization, the 1x1 projection when
# the width changes), used twice in a Functional convnet; weights tracked through the
# sublayers, the summary's rows, and training in both frameworks from the same weights.
import json
import numpy as np
import keras
from keras import layers, ops


class ResidualBlock(layers.Layer):
    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.conv1 = layers.Conv2D(filters, 3, padding="same")
        self.bn1 = layers.BatchNormalization()
        self.conv2 = layers.Conv2D(filters, 3, padding="same")
        self.bn2 = layers.BatchNormalization()
        self.projection = None

    def build(self, input_shape):
        if input_shape[-1] != self.filters:
            self.projection = layers.Conv2D(self.filters, 1)

    def call(self, inputs, training=None):
        x = ops.relu(self.bn1(self.conv1(inputs), training=training))
        x = self.bn2(self.conv2(x), training=training)
        shortcut = inputs if self.projection is None else self.projection(inputs)
        return ops.relu(x + shortcut)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters}


inputs = keras.Input(shape=(12, 12, 3))
x = layers.Conv2D(8, 3, padding="same")(inputs)
x = ResidualBlock(8, name="block_1")(x)
x = ResidualBlock(16, name="block_2")(x)
x = layers.GlobalAveragePooling2D()(x)
outputs = layers.Dense(2, activation="softmax")(x)
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(np.abs(init.normal(size=w.shape)) * 0.3 + (0.5 if "variance" in w.path else 0.0)).astype("float32")
                   for w in model.weights])
model.compile(optimizer=keras.optimizers.SGD(0.05), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(0)
x_train = rng.random((48, 12, 12, 3)).astype("float32")
y_train = (x_train[:, :6].mean(axis=(1, 2, 3)) > 0.5).astype("int64")
history = model.fit(x_train, y_train, batch_size=16, epochs=2, shuffle=False, verbose=0)
block = model.get_layer("block_2")
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "block_weights": len(block.weights),
    "block_trainable": len(block.trainable_weights), "config": sorted(block.get_config()), "rtol": 1e-3,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "predictions": model.predict(x_train[:3], verbose=0).astype(float).ravel().tolist()}))
