# The Keras guide "Understanding masking & padding", writing layers that use the mask: the
# guide's TemporalSoftmax, whose call(inputs, mask=None) gets the Embedding's mask and
# takes a softmax over the unpadded steps only.
import json
import numpy as np
import keras
from keras import layers, ops


class TemporalSoftmax(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        assert mask is not None
        broadcast_float_mask = ops.expand_dims(ops.cast(mask, "float32"), -1)
        inputs_exp = ops.exp(inputs) * broadcast_float_mask
        inputs_sum = ops.sum(inputs_exp * broadcast_float_mask, axis=1, keepdims=True)
        return inputs_exp / inputs_sum


padded_inputs = keras.utils.pad_sequences([[711, 632, 71], [73, 8, 3215, 55, 927]], padding="post")
inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=5000, output_dim=4, mask_zero=True)(inputs)
x = layers.Dense(1)(x)
outputs = TemporalSoftmax()(x)
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
probs = model.predict(padded_inputs, verbose=0)
print("RESULT " + json.dumps({"shape": list(probs.shape), "rtol": 1e-5,
                              "probs": probs.astype(float).ravel().tolist()}))
