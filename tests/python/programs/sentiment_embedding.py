# A sentiment classifier as the keras.io text examples write one on integer sequences:
# Embedding, GlobalAveragePooling1D, a Dense hidden layer, a sigmoid output; binary
# crossentropy with accuracy, precision, recall and AUC, validated on held-out data.
import json
import numpy as np
import keras
from keras import layers

vocab_size, maxlen = 500, 40
rng = np.random.default_rng(0)
positive, negative = rng.choice(np.arange(1, vocab_size), size=(2, 20), replace=False)
labels = rng.integers(0, 2, size=320)
x = rng.integers(1, vocab_size, size=(320, maxlen))
for i, label in enumerate(labels):
    x[i, rng.integers(0, maxlen, size=4)] = rng.choice(positive if label else negative, size=4)
x_train, y_train, x_val, y_val = x[:256], labels[:256], x[256:], labels[256:]
model = keras.Sequential([
    keras.Input(shape=(maxlen,), dtype="int32"),
    layers.Embedding(vocab_size, 16),
    layers.GlobalAveragePooling1D(),
    layers.Dense(16, activation="relu"),
    layers.Dense(1, activation="sigmoid"),
])
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.3).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.5, momentum=0.5), loss="binary_crossentropy",
              metrics=["accuracy", keras.metrics.Precision(), keras.metrics.Recall(), keras.metrics.AUC()])
history = model.fit(x_train, y_train, batch_size=32, epochs=3, shuffle=False, verbose=0, validation_data=(x_val, y_val))
print("RESULT " + json.dumps({
    "keys": sorted(history.history), "params": model.count_params(), "rtol": 1e-3,
    "history": {k: [float(v) for v in vals] for k, vals in sorted(history.history.items())}}))
