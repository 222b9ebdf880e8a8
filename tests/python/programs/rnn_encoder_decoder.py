# The Keras guide "Working with RNNs", RNN state reuse: an LSTM encoder's final states
# (return_state=True) start an LSTM decoder (initial_state=...), as a sequence-to-sequence
# model does.
import json
import numpy as np
import keras
from keras import layers

encoder_input = keras.Input(shape=(None,))
encoder_embedded = layers.Embedding(input_dim=100, output_dim=8)(encoder_input)
output, state_h, state_c = layers.LSTM(8, return_state=True, name="encoder")(encoder_embedded)
encoder_state = [state_h, state_c]
decoder_input = keras.Input(shape=(None,))
decoder_embedded = layers.Embedding(input_dim=120, output_dim=8)(decoder_input)
decoder_output = layers.LSTM(8, name="decoder")(decoder_embedded, initial_state=encoder_state)
output = layers.Dense(10)(decoder_output)
model = keras.Model([encoder_input, decoder_input], output)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
rng = np.random.default_rng(0)
enc = rng.integers(1, 100, size=(64, 7))
dec = rng.integers(1, 120, size=(64, 5))
target = (enc[:, 0] + dec[:, 0]) % 10
history = model.fit([enc, dec], target, batch_size=16, epochs=2, shuffle=False, verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "rtol": 1e-4,
    "loss": [float(v) for v in history.history["loss"]],
    "predictions": model.predict([enc[:2], dec[:2]], verbose=0).astype(float).ravel().tolist()}))
