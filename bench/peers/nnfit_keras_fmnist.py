# nnfit from Python: ../shared/bench/keras_fmnist.py (the Keras peer) with its import line
# changed to `from nnfit import keras` and tf.data's pipeline written with nnfit.data's
# same-named calls (from_tensor_slices, shuffle, batch, prefetch AUTOTUNE). Same models,
# optimizer, batch, per-epoch JSON lines and timing callback (a Python on_train_batch_end,
# so the GIL is taken once per batch, as the Keras peer's callback is called).
# usage: python3 nnfit_keras_fmnist.py mlp|cnn EPOCHS THREADS [float32|mixed_bfloat16]
# (PYTHONPATH must reach the nnfit package; THREADS sets OMP_NUM_THREADS.)
import gzip, json, os, sys, time
kind, epochs = sys.argv[1], int(sys.argv[2])
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
policy = sys.argv[4] if len(sys.argv) > 4 else "float32"
os.environ["OMP_NUM_THREADS"] = str(threads)
import numpy as np
import nnfit
from nnfit import keras
from nnfit.keras import layers

D = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist") + "/"
def idx(path, off):
    with gzip.open(D + path) as f:
        return np.frombuffer(f.read(), np.uint8, offset=off)
xtr = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype(np.float32) / 255
ytr = idx("train-labels-idx1-ubyte.gz", 8).astype(np.int64)
xte = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype(np.float32) / 255
yte = idx("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64)

keras.mixed_precision.set_global_policy(policy)
keras.utils.set_random_seed(0)
if kind == "mlp":
    model = keras.Sequential([keras.Input((28, 28, 1)), layers.Flatten(),
                              layers.Dense(128, activation="relu"), layers.Dense(10, dtype="float32")])
else:
    model = keras.Sequential([keras.Input((28, 28, 1)),
                              layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
                              layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2),
                              layers.Flatten(), layers.Dropout(0.5), layers.Dense(10, dtype="float32")])
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
train = (nnfit.data.Dataset.from_tensor_slices((xtr, ytr)).shuffle(len(xtr), seed=0)
         .batch(128).prefetch(nnfit.data.AUTOTUNE))
test = nnfit.data.Dataset.from_tensor_slices((xte, yte)).batch(1024).prefetch(nnfit.data.AUTOTUNE)

class EpochTimer(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = self.t1 = time.perf_counter()
    def on_train_batch_end(self, batch, logs=None):
        self.t1 = time.perf_counter()
    def on_epoch_end(self, epoch, logs=None):
        dt = self.t1 - self.t0
        rec = {"seconds": round(dt, 3), "samples_per_s": round(len(xtr) / dt),
               "test_acc": round(float(logs["val_accuracy"]), 4)}
        results["epochs"].append(rec)
        print(json.dumps(rec), flush=True)

results = {"peer": f"nnfit {nnfit.__version__} (nnfit.keras, Python {sys.version.split()[0]})", "model": kind,
           "policy": policy, "threads": threads, "epochs": []}
model.fit(train, epochs=epochs, validation_data=test, callbacks=[EpochTimer()], verbose=0)
print(json.dumps(results))
