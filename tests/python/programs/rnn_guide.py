# The Keras guide "Working with RNNs": an Embedding, a GRU returning sequences and a
# SimpleRNN stacked, trained; a Bidirectional LSTM stack; an LSTM's return_state; the
# summary's layer rows. (The guide's encoder-decoder: rnn_encoder_decoder.py.)
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

bidirectional = keras.Sequential([keras.Input((5, 10)), layers.Bidirectional(layers.LSTM(8, return_sequences=True)),
                                  layers.Bidirectional(layers.LSTM(4)), layers.Dense(2)])
bidirectional.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in bidirectional.get_weights()])
series = rng.normal(size=(3, 5, 10)).astype("float32")
state_input = keras.Input(shape=(None, 10))
whole, state_h, state_c = layers.LSTM(6, return_state=True, return_sequences=True)(state_input)
states = keras.Model(state_input, [whole, state_h, state_c])
states.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in states.get_weights()])
outputs = states.predict(series, verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": [model.count_params(), bidirectional.count_params(), states.count_params()],
    "state_shapes": [list(o.shape) for o in outputs],
    "summary_rows": [l for l in "\n".join(lines).splitlines() if "(" in l and ")" in l and "params" not in l.lower()],
    "rtol": 1e-4, "atol": 1e-6, "loss": [float(v) for v in history.history["loss"]],
    "last_step_is_h": bool(np.allclose(outputs[0][:, -1], outputs[1], atol=1e-6)),
    "state_c": outputs[2].astype(float).ravel().tolist(),
    "bidirectional": bidirectional.predict(series, verbose=0).astype(float).ravel().tolist()}))
