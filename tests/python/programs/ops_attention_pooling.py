# keras.ops inside custom layers, as the Keras 3 guides write them: an attention-pooling
# layer (weights from add_weight, a softmax over time with ops), a layer normalizing with
# ops.mean/ops.var, and keras.ops called eagerly on arrays.
import json
import numpy as np
import keras
from keras import layers, ops


class AttentionPooling(layers.Layer):
    def build(self, input_shape):
        self.score = self.add_weight(shape=(input_shape[-1], 1), initializer="glorot_uniform", name="score")

    def call(self, inputs):
        scores = ops.matmul(inputs, self.score)
        weights = ops.softmax(scores, axis=1)
        return ops.sum(inputs * weights, axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[-1])


class Standardize(layers.Layer):
    def __init__(self, epsilon=1e-3, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = epsilon

    def call(self, inputs):
        mean = ops.mean(inputs, axis=-1, keepdims=True)
        variance = ops.var(inputs, axis=-1, keepdims=True)
        return (inputs - mean) * ops.rsqrt(variance + self.epsilon)


inputs = keras.Input(shape=(10, 6))
x = layers.Dense(8, activation="tanh")(inputs)
x = Standardize()(x)
x = AttentionPooling()(x)
outputs = layers.Dense(3, activation="softmax")(x)
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(0)
x_train = rng.normal(size=(120, 10, 6)).astype("float32")
y_train = np.argmax(x_train[:, :, :3].mean(axis=1), axis=1)
history = model.fit(x_train, y_train, batch_size=24, epochs=3, shuffle=False, verbose=0)
eager = ops.convert_to_numpy(ops.softmax(ops.matmul(x_train[0], ops.ones((6, 2))), axis=0))
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "weight_shapes": [list(w.shape) for w in model.weights],
    "pooled_shape": list(model.layers[3].output.shape), "rtol": 1e-4,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())},
    "eager": eager.astype(float).ravel()[:6].tolist(),
    "predictions": model.predict(x_train[:2], verbose=0).astype(float).ravel().tolist()}))
