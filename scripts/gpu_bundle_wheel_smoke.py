"""The GPU bundle's Python check (docs/gpu_bundle.md): `from nnfit import keras` trains the
Fashion-MNIST MLP for one epoch on the device named (default gpu:0) with the installed
wheel, and says where it ran. Fails unless it ran there (gpu:N must give cuda:N) and the
test accuracy passes 0.8.

usage: python gpu_bundle_wheel_smoke.py [gpu:0|cpu]      (FASHION_MNIST_DIR names the data)
"""
import gzip
import os
import sys
import time

import numpy as np

import nnfit
from nnfit import keras
from nnfit.keras import layers

data = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
device = sys.argv[1] if len(sys.argv) > 1 else "gpu:0"


def idx(name, offset):
    with gzip.open(os.path.join(data, name)) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


x = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype("float32") / 255
y = idx("train-labels-idx1-ubyte.gz", 8).astype("int32")
x_test = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype("float32") / 255
y_test = idx("t10k-labels-idx1-ubyte.gz", 8).astype("int32")
print("nnfit", nnfit.__file__)
with keras.device(device):
    model = keras.Sequential([keras.Input(shape=(28, 28, 1)), layers.Flatten(), layers.Dense(128, activation="relu"),
                              layers.Dense(10)])
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
t0 = time.perf_counter()
history = model.fit(x, y, batch_size=128, epochs=1, validation_data=(x_test, y_test), verbose=2)
seconds = time.perf_counter() - t0
val_accuracy = history.history["val_accuracy"][-1]
print("detail: nnfit.keras on %s (%s): val_accuracy %.4f, one epoch in %.2f s" % (
    model.device, model.device_reason, val_accuracy, seconds))
want = "cuda:" + device.split(":")[1] if device.startswith("gpu:") else device
assert model.device == want, "ran on %s, not %s: %s" % (model.device, want, model.device_reason)
assert val_accuracy > 0.8, val_accuracy
