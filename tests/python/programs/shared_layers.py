# The Functional API guide's "Shared layers": one Embedding and one LSTM applied to two
# text inputs (the weights counted once), from seeded weights, trained without shuffling.
# SGD, not Adam: Keras on TensorFlow updates Adam's second moment of an Embedding table from
# each occurrence's squared gradient (tf.IndexedSlices), nnfit from the row's summed one.
import json
import numpy as np
import keras
from keras import layers

shared_embedding = layers.Embedding(1000, 16)
text_input_a = keras.Input(shape=(None,), dtype="int32")
text_input_b = keras.Input(shape=(None,), dtype="int32")
encoded_input_a = shared_embedding(text_input_a)
encoded_input_b = shared_embedding(text_input_b)
shared_lstm = layers.LSTM(8)
merged = layers.concatenate([shared_lstm(encoded_input_a), shared_lstm(encoded_input_b)])
outputs = layers.Dense(1, activation="sigmoid")(merged)
model = keras.Model([text_input_a, text_input_b], outputs)
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])

rng = np.random.default_rng(0)
a = rng.integers(1, 1000, size=(96, 10))
b = rng.integers(1, 1000, size=(96, 12))
y = (a[:, 0] > b[:, 0]).astype("float32")
model.compile(optimizer=keras.optimizers.SGD(0.5, momentum=0.9), loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit([a, b], y, batch_size=32, epochs=3, shuffle=False, verbose=0)
swapped = model.predict([b[:, :10], a[:, :10]], verbose=0)
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "layers": len(model.layers),
    "weights": [list(w.shape) for w in model.weights], "rtol": 1e-3,
    "loss": [float(v) for v in history.history["loss"]], "swapped": [float(v) for v in swapped[:4, 0]]}))
