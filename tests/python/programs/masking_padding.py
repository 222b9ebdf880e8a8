# The Keras guide "Understanding masking & padding": pad_sequences, Embedding(mask_zero=True)
# and its compute_mask, a Masking layer, an LSTM skipping the padded steps, and a custom
# layer reading the mask (the guide's TemporalSoftmax, a softmax over the unpadded steps).
import json
import numpy as np
import keras
from keras import layers, ops

raw_inputs = [[711, 632, 71], [73, 8, 3215, 55, 927], [83, 91, 1, 645, 1253, 927]]
padded_inputs = keras.utils.pad_sequences(raw_inputs, padding="post")
embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
mask = embedding.compute_mask(padded_inputs)


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


inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=5000, output_dim=8, mask_zero=True)(inputs)
lstm_out = layers.LSTM(4)(x)
outputs = layers.Dense(1, activation="sigmoid")(lstm_out)
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
padded_longer = keras.utils.pad_sequences(raw_inputs, maxlen=9, padding="post")
same_when_padded = np.allclose(model.predict(padded_inputs, verbose=0), model.predict(padded_longer, verbose=0), atol=1e-6)

softmax_in = keras.Input(shape=(None,), dtype="int32")
y = layers.Embedding(input_dim=5000, output_dim=4, mask_zero=True)(softmax_in)
y = layers.Dense(1)(y)
softmax_model = keras.Model(softmax_in, TemporalSoftmax()(y))
softmax_model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in softmax_model.get_weights()])
probs = softmax_model.predict(padded_inputs, verbose=0)

masking_model = keras.Sequential([keras.Input((None, 3)), layers.Masking(mask_value=0.0), layers.SimpleRNN(2)])
masking_model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in masking_model.get_weights()])
series = np.stack([np.pad(init.normal(size=(n, 3)), ((0, 6 - n), (0, 0))) for n in (2, 4, 6)]).astype("float32")
print("RESULT " + json.dumps({
    "padded": padded_inputs.tolist(), "mask": np.asarray(mask).tolist(), "same_when_padded": bool(same_when_padded),
    "probs_shape": list(probs.shape), "rtol": 1e-4, "atol": 1e-6,
    "predictions": [float(v) for v in model.predict(padded_inputs, verbose=0)[:, 0]],
    "probs": np.round(probs, 6).astype(float).ravel().tolist(),
    "masked_rnn": masking_model.predict(series, verbose=0).astype(float).ravel().tolist()}))
