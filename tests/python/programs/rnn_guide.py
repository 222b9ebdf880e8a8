# The Keras guide "Working with RNNs": an Embedding, a GRU returning sequences and a
# SimpleRNN stacked; an LSTM encoder whose final states start an LSTM decoder
# (return_state, initial_state); a Bidirectional LSTM; summaries' layer lines.
import json
import numpy as np
import keras
from keras import layers

model = keras.Sequential()
model.add(keras.Input(shape=(None,), dtype="int32"))
model.add(layers.Embedding(input_dim=200, output_dim=16))
model.add(layers.GRU(16, return_sequences=True))
model.add(layers.SimpleRNN(8))
model.add(layers.Dense(4))
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
rng = np.random.default_rng(0)
ids = rng.integers(1, 200, size=(96, 12))
labels = ids[:, 0] % 4
history = model.fit(ids, labels, batch_size=32, epochs=2, shuffle=False, verbose=0)
lines = []
model.summary(print_fn=lambda line, **kwargs: lines.append(line))

encoder_input = keras.Input(shape=(None,))
encoder_embedded = layers.Embedding(input_dim=100, output_dim=8)(encoder_input)
output, state_h, state_c = layers.LSTM(8, return_state=True, name="encoder")(encoder_embedded)
encoder_state = [state_h, state_c]
decoder_input = keras.Input(shape=(None,))
decoder_embedded = layers.Embedding(input_dim=120, output_dim=8)(decoder_input)
decoder_output = layers.LSTM(8, name="decoder")(decoder_embedded, initial_state=encoder_state)
output = layers.Dense(10)(decoder_output)
seq2seq = keras.Model([encoder_input, decoder_input], output)
seq2seq.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in seq2seq.get_weights()])
enc = rng.integers(1, 100, size=(4, 7))
dec = rng.integers(1, 120, size=(4, 5))

bidirectional = keras.Sequential([keras.Input((5, 10)), layers.Bidirectional(layers.LSTM(8, return_sequences=True)),
                                  layers.Bidirectional(layers.LSTM(4)), layers.Dense(2)])
bidirectional.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in bidirectional.get_weights()])
series = rng.normal(size=(3, 5, 10)).astype("float32")
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": [model.count_params(), seq2seq.count_params(), bidirectional.count_params()],
    "summary_rows": [l for l in "\n".join(lines).splitlines() if "(" in l and ")" in l and "params" not in l.lower()],
    "rtol": 1e-4, "atol": 1e-6, "loss": [float(v) for v in history.history["loss"]],
    "seq2seq": seq2seq.predict([enc, dec], verbose=0).astype(float).ravel().tolist(),
    "bidirectional": bidirectional.predict(series, verbose=0).astype(float).ravel().tolist()}))
