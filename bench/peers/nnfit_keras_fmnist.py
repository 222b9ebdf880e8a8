# nnfit from Python, measured as the CLI is measured: the models, optimizer and batch of
# ../shared/bench/keras_fmnist.py (the Keras peer) written with `from nnfit import keras`,
# fed by nnfit.data with the pipeline of examples/fashion_mnist_{mlp,cnn}.json (the CLI's
# job: IDX source, cache, shuffle, batch, normalize, prefetch AUTOTUNE), and samples/s from
# the engine's own per-epoch figure (history.nnfit[i]["samples_per_s"]: training batches
# over the training steps' wall time, the same figure the CLI's --metrics-json reports).
# PIPELINE "keras" instead feeds the Keras peer's way (arrays normalized in NumPy,
# from_tensor_slices, shuffle, batch, prefetch); CALLBACK "batch" adds the Keras peer's
# Python on_train_batch_end timer (the GIL taken once per batch).
# usage: python3 nnfit_keras_fmnist.py mlp|cnn EPOCHS THREADS [POLICY] [cli|keras] [none|batch]
# (PYTHONPATH must reach the nnfit package; THREADS sets OMP_NUM_THREADS.) One JSON line
# per epoch, then a summary line, as the peers print them.
import gzip, json, os, sys, time
kind, epochs = sys.argv[1], int(sys.argv[2])
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
policy = sys.argv[4] if len(sys.argv) > 4 else "float32"
pipeline = sys.argv[5] if len(sys.argv) > 5 else "cli"
callback = sys.argv[6] if len(sys.argv) > 6 else "none"
os.environ["OMP_NUM_THREADS"] = str(threads)
import numpy as np
import nnfit
from nnfit import keras
from nnfit.keras import layers

D = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist") + "/"
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
if pipeline == "cli":
    def idx(split):
        return nnfit.data.idx(f"{D}{split}-images-idx3-ubyte.gz", f"{D}{split}-labels-idx1-ubyte.gz")
    train = (idx("train").cache().shuffle(60000).batch(128).map(nnfit.data.normalize(scale=1 / 255))
             .prefetch(nnfit.data.AUTOTUNE))
    test = idx("t10k").cache().batch(128).map(nnfit.data.normalize(scale=1 / 255)).prefetch(nnfit.data.AUTOTUNE)
else:
    def idx(path, off):
        with gzip.open(D + path) as f:
            return np.frombuffer(f.read(), np.uint8, offset=off)
    xtr = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype(np.float32) / 255
    ytr = idx("train-labels-idx1-ubyte.gz", 8).astype(np.int64)
    xte = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1).astype(np.float32) / 255
    yte = idx("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64)
    train = (nnfit.data.Dataset.from_tensor_slices((xtr, ytr)).shuffle(len(xtr), seed=0)
             .batch(128).prefetch(nnfit.data.AUTOTUNE))
    test = nnfit.data.Dataset.from_tensor_slices((xte, yte)).batch(1024).prefetch(nnfit.data.AUTOTUNE)

class BatchTimer(keras.callbacks.Callback):
    """The Keras peer's timer: a Python hook after every batch."""
    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = self.t1 = time.perf_counter()
    def on_train_batch_end(self, batch, logs=None):
        self.t1 = time.perf_counter()
    def on_epoch_end(self, epoch, logs=None):
        self.seconds = getattr(self, "seconds", []) + [self.t1 - self.t0]

timer = BatchTimer() if callback == "batch" else None
history = model.fit(train, epochs=epochs, validation_data=test, callbacks=[timer] if timer else [], verbose=0)
results = {"peer": f"nnfit {nnfit.__version__} (nnfit.keras, Python {sys.version.split()[0]}; pipeline {pipeline}, "
                   f"callback {callback})", "model": kind, "policy": policy, "threads": threads, "epochs": []}
for i, engine in enumerate(history.nnfit):
    rate = 60000 / timer.seconds[i] if timer else engine["samples_per_s"]
    rec = {"samples_per_s": round(rate), "test_acc": round(history.history["val_accuracy"][i], 4)}
    results["epochs"].append(rec)
    print(json.dumps(rec), flush=True)
print(json.dumps(results))
