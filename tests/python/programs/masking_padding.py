# The Keras guide "Understanding masking & padding": pad_sequences, Embedding(mask_zero=True)
# and its compute_mask, an LSTM skipping the padded steps (more padding, same predictions),
# a Masking layer before a SimpleRNN. (A custom layer reading the mask: masking_custom_layer.py.)
import json
import numpy as np
import keras
from keras import layers

raw_inputs = [[711, 632, 71], [73, 8, 3215, 55, 927], [83, 91, 1, 645, 1253, 927]]
padded_inputs = keras.utils.pad_sequences(raw_inputs, padding="post")
embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
mask = embedding.compute_mask(padded_inputs)

inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=5000, output_dim=8, mask_zero=True)(inputs)
lstm_out = layers.LSTM(4)(x)
outputs = layers.Dense(1, activation="sigmoid")(lstm_out)
model = keras.Model(inputs, outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
padded_longer = keras.utils.pad_sequences(raw_inputs, maxlen=9, padding="post")
same_when_padded = np.allclose(model.predict(padded_inputs, verbose=0), model.predict(padded_longer, verbose=0), atol=1e-6)

masking_model = keras.Sequential([keras.Input((None, 3)), layers.Masking(mask_value=0.0), layers.SimpleRNN(2)])
masking_model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in masking_model.get_weights()])
series = np.stack([np.pad(init.normal(size=(n, 3)), ((0, 6 - n), (0, 0))) for n in (2, 4, 6)]).astype("float32")
print("RESULT " + json.dumps({
    "padded": padded_inputs.tolist(), "mask": np.asarray(mask).tolist(), "same_when_padded": bool(same_when_padded),
    "masking_mask": np.asarray(layers.Masking(mask_value=0.0).compute_mask(series)).tolist(),
    "rtol": 1e-4, "atol": 1e-6,
    "predictions": [float(v) for v in model.predict(padded_inputs, verbose=0)[:, 0]],
    "masked_rnn": masking_model.predict(series, verbose=0).astype(float).ravel().tolist()}))
