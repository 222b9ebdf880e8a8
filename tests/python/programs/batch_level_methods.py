# The Keras guide "Training & evaluation with the built-in methods", lower-level loops:
# train_on_batch, test_on_batch and predict_on_batch over batches the program slices
# itself, reset_metrics between epochs, return_dict, and calling the model on arrays.
import json
import numpy as np
import keras
from keras import layers

rng = np.random.default_rng(0)
x = rng.normal(size=(96, 10)).astype("float32")
y = (x[:, :3].sum(axis=1) > 0).astype("int64")
model = keras.Sequential([keras.Input((10,)), layers.Dense(12, activation="relu"), layers.Dense(2, activation="softmax")])
init = np.random.default_rng(1)
model.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.2), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
epoch_logs = []
for epoch in range(2):
    model.reset_metrics()
    for start in range(0, 96, 32):
        logs = model.train_on_batch(x[start:start + 32], y[start:start + 32], return_dict=True)
    epoch_logs.append({k: float(v) for k, v in sorted(logs.items())})
test = model.test_on_batch(x[:40], y[:40])
test_dict = model.test_on_batch(x[:40], y[:40], return_dict=True)
on_batch = model.predict_on_batch(x[:3])
called = np.asarray(model(x[:3]))
print("RESULT " + json.dumps({
    "log_keys": sorted(logs), "test_keys": sorted(test_dict), "test_len": len(test), "rtol": 1e-4,
    "epochs": epoch_logs, "test": [float(v) for v in test], "on_batch": on_batch.astype(float).ravel().tolist(),
    "called_equal": bool(np.allclose(called, on_batch, atol=1e-6))}))
