# keras.io "Bidirectional LSTM on IMDB": Input(shape=(None,)) on padded id sequences.
import json
import numpy as np
import keras
from keras import layers

max_features, maxlen = 2000, 60
rng = np.random.default_rng(0)
seqs = [list(rng.integers(1, max_features, size=int(n))) for n in rng.integers(5, 90, size=256)]
y_train = np.array([int(s[0] > max_features // 2) for s in seqs])
x_train = keras.utils.pad_sequences(seqs, maxlen=maxlen)
inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(max_features, 32)(inputs)
x = layers.Bidirectional(layers.LSTM(16, return_sequences=True))(x)
x = layers.Bidirectional(layers.LSTM(16))(x)
outputs = layers.Dense(1, activation="sigmoid")(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=1, validation_split=0.25, verbose=0)
short = model.predict(x_train[:4, -20:], verbose=0).shape
print("RESULT " + json.dumps({"keys": sorted(history.history), "params": model.count_params(), "short": list(short)}))
