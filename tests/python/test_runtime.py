"""nnfit's Python runtime: data read in place, the GIL released while training, Python
callbacks, Ctrl-C, errors as Python exceptions, and a quiet import."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import nnfit
from nnfit import keras
from nnfit.keras import layers


def mlp():
    return keras.Sequential([keras.Input(shape=(8,)), layers.Dense(32, activation="relu"),
                             layers.Dense(3, activation="softmax")])


def run_python(code, **kw):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=300, **kw)


def test_import_prints_nothing():
    r = run_python("""
        import nnfit
        from nnfit import keras
        from nnfit.keras import layers
        import nnfit._nnfit
        m = keras.Sequential([keras.Input((2,)), layers.Dense(1)])
        m.compile("sgd", "mse")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""


class Seen(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.events = []

    def on_train_begin(self, logs=None):
        self.events.append(("train_begin", self.params["epochs"], self.params["steps"]))

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(("epoch_begin", epoch))

    def on_train_batch_end(self, batch, logs=None):
        self.events.append(("batch", batch, sorted(logs)))

    def on_epoch_end(self, epoch, logs=None):
        self.events.append(("epoch_end", epoch, sorted(logs)))

    def on_train_end(self, logs=None):
        self.events.append(("train_end",))


def test_python_callbacks_are_called(blobs):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    seen = Seen()
    model.fit(x, y, batch_size=200, epochs=2, validation_data=(x[:50], y[:50]), callbacks=[seen], verbose=0)
    assert seen.model is model
    assert seen.events[0] == ("train_begin", 2, 3)
    assert seen.events[1] == ("epoch_begin", 0)
    assert seen.events[2] == ("batch", 0, ["accuracy", "loss"])
    assert seen.events[5] == ("epoch_end", 0, ["accuracy", "loss", "val_accuracy", "val_loss"])
    assert seen.events[-1] == ("train_end",)
    assert len(seen.events) == 1 + 2 * (1 + 3 + 1) + 1


def test_callback_stops_training(blobs):
    x, y = blobs

    class StopAfterOne(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.stop_training = True

    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    h = model.fit(x, y, epochs=5, callbacks=[StopAfterOne()], verbose=0)
    assert h.epoch == [0]


def test_callback_exception_propagates_and_model_stays_usable(blobs):
    x, y = blobs

    class Boom(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                raise ZeroDivisionError("boom in a callback")

    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(ZeroDivisionError, match="boom"):
        model.fit(x, y, epochs=3, callbacks=[Boom()], verbose=0)
    assert model.predict(x[:4], verbose=0).shape == (4, 3)
    assert len(model.fit(x, y, epochs=1, verbose=0).history["loss"]) == 1


def test_builtin_callbacks_run_in_the_engine(tmp_path, blobs):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    ckpt = tmp_path / "best.keras"
    log = tmp_path / "log.csv"
    h = model.fit(x, y, epochs=30, validation_split=0.2, verbose=0,
                  callbacks=[keras.callbacks.ModelCheckpoint(str(ckpt), save_best_only=True),
                             keras.callbacks.CSVLogger(str(log)),
                             keras.callbacks.EarlyStopping(monitor="loss", min_delta=10.0, patience=1)])
    assert h.epoch == [0, 1]  # no epoch improves the loss by 10
    assert ckpt.exists() and keras.models.load_model(ckpt).predict(x[:2], verbose=0).shape == (2, 3)
    assert log.read_text().splitlines()[0].startswith("epoch,")


def test_lambda_callback_and_lr_scheduler(blobs):
    x, y = blobs
    model = mlp()
    model.compile(keras.optimizers.SGD(learning_rate=0.1), "sparse_categorical_crossentropy")
    ends = []
    h = model.fit(x, y, epochs=3, verbose=0,
                  callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: ends.append(e)),
                             keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))])
    assert ends == [0, 1, 2]
    assert model.optimizer.learning_rate == pytest.approx(0.1 / 3)
    assert h.history["learning_rate"] == pytest.approx([0.1, 0.05, 0.1 / 3])


def test_arrays_are_read_in_place(blobs):
    x, y = blobs

    def linear():  # no ReLU, which would turn NaN inputs into zeros
        m = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(3, activation="softmax")])
        m.compile("adam", "sparse_categorical_crossentropy")
        return m

    model = linear()

    class Spoil(keras.callbacks.Callback):
        """Writes NaN into the caller's array after the first epoch."""

        def __init__(self, array):
            super().__init__()
            self.array = array

        def on_epoch_end(self, epoch, logs=None):
            self.array[:] = np.nan

    # float32 is read in place: the second epoch trains on the NaNs written into the array.
    with pytest.raises(ValueError, match="nan"):
        spoiled = x.copy()
        model.fit(spoiled, y, epochs=2, callbacks=[Spoil(spoiled)], verbose=0)
    # float64 is converted first (as Keras casts it), so spoiling the caller's array changes nothing.
    x64 = x.astype("float64")
    base = sys.getrefcount(x64)
    h = linear()
    assert len(h.fit(x64, y, epochs=2, callbacks=[Spoil(x64)], verbose=0).history["loss"]) == 2
    assert sys.getrefcount(x64) == base  # and nothing holds it after fit


def test_conversions(blobs):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    h1 = model.fit(x.astype("float64"), y.astype("int32"), epochs=1, verbose=0)
    h2 = model.fit(np.asfortranarray(x), y.astype("uint8"), epochs=1, verbose=0)
    assert all(len(h.history["loss"]) == 1 for h in (h1, h2))
    with pytest.raises(TypeError, match="<U"):
        model.fit(np.array([["a"] * 8] * 4), y[:4], verbose=0)


def test_gil_is_released_while_training(blobs):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20000, 64)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = keras.Sequential([keras.Input(shape=(64,)), layers.Dense(256, activation="relu"),
                              layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy")
    ticks = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=spin)
    t.start()
    start = time.perf_counter()
    model.fit(x, y, batch_size=16, epochs=20, verbose=0)  # 25,000 steps: ~0.6 s on an idle machine
    end = time.perf_counter()
    stop.set()
    t.join()
    during = [v for v in ticks if start < v < end]
    assert end - start > 0.1
    # A thread that needs the GIL every millisecond ran throughout training (with the GIL
    # held it would not run at all; the bound leaves room for a loaded machine).
    assert len(during) > max(20, 0.05 * (end - start) / 0.001), (len(during), end - start)


def test_ctrl_c_stops_cleanly():
    r = run_python("""
        import os, signal, threading, time
        import numpy as np
        from nnfit import keras
        from nnfit.keras import layers
        # As an interactive Python has it (a background job, as CI runs us, starts with SIGINT ignored).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        x = np.random.rand(20000, 64).astype("float32"); y = (x[:, 0] > 0.5).astype("int64")
        m = keras.Sequential([keras.Input((64,)), layers.Dense(256, activation="relu"), layers.Dense(2, activation="softmax")])
        m.compile("adam", "sparse_categorical_crossentropy")
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        t0 = time.time()
        try:
            m.fit(x, y, batch_size=32, epochs=200, verbose=0)
            print("not interrupted")
        except KeyboardInterrupt:
            print("KeyboardInterrupt after", round(time.time() - t0, 1))
        print("usable", m.predict(x[:3], verbose=0).shape)
        # Python's own handler is back: a second Ctrl-C outside fit raises as usual
        # (raise_signal delivers it to this thread, so Python raises on return).
        try:
            signal.raise_signal(signal.SIGINT)
            for _ in range(200):
                time.sleep(0.005)
            print("no KeyboardInterrupt", signal.getsignal(signal.SIGINT))
        except KeyboardInterrupt:
            print("handler restored")
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("KeyboardInterrupt after")
    assert float(lines[0].split()[-1]) < 30
    assert lines[1] == "usable (3, 2)"
    assert lines[2:] == ["handler restored"], r.stdout


def test_an_ignored_sigint_stays_ignored_during_fit():
    r = run_python("""
        import os, signal, threading
        import numpy as np
        from nnfit import keras
        from nnfit.keras import layers
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under nohup
        x = np.random.rand(2000, 16).astype("float32"); y = (x[:, 0] > 0.5).astype("int64")
        m = keras.Sequential([keras.Input((16,)), layers.Dense(2, activation="softmax")])
        m.compile("adam", "sparse_categorical_crossentropy")
        threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        h = m.fit(x, y, batch_size=32, epochs=40, verbose=0)
        print(len(h.epoch), signal.getsignal(signal.SIGINT) == signal.SIG_IGN)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["40", "True"]


def test_errors_map_to_python_exceptions(tmp_path, blobs):
    x, y = blobs
    bad = tmp_path / "bad.keras"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(nnfit.errors.DataError) as e:
        keras.models.load_model(bad)
    assert isinstance(e.value, OSError) and e.value.filename == str(bad)
    assert str(bad) in str(e.value) and "Errno" not in str(e.value), str(e.value)  # the engine's message
    with pytest.raises(OSError):
        keras.models.load_model(tmp_path / "missing.keras")
    with pytest.raises(NotImplementedError, match="softmax over several axes"):
        layers.Softmax(axis=[1, 2])(keras.Input((3, 4)))
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="class"):
        model.fit(x, y + 5, epochs=1, verbose=0)


def test_out_of_memory_is_a_memory_error():
    env = dict(os.environ, NNFIT_MEMORY_LIMIT="20MB")
    code = textwrap.dedent("""
        import numpy as np
        import nnfit
        from nnfit import keras
        from nnfit.keras import layers
        m = keras.Sequential([keras.Input((1024,)), layers.Dense(256), layers.Dense(10)])
        try:
            m.compile("adam", "mse")
            m.fit(np.zeros((4096, 1024), "float32"), np.zeros((4096, 10), "float32"), batch_size=4096, verbose=0)
        except MemoryError as e:
            print(type(e).__name__, isinstance(e, nnfit.errors.OutOfMemoryError))
            print(str(e).splitlines()[0])
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "OutOfMemoryError True"
    assert "batch size" in lines[1], lines[1]


def test_tensorboard_callback(tmp_path, blobs):
    x, y = blobs
    model = mlp()
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=2, validation_split=0.2, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(log_dir=tmp_path / "logs", profile_batch=(2, 3))])
    train = list((tmp_path / "logs" / "train").glob("events.out.tfevents.*"))
    val = list((tmp_path / "logs" / "validation").glob("events.out.tfevents.*"))
    assert train and val and train[0].stat().st_size > 0
    steps = (tmp_path / "logs" / "steps.jsonl").read_text().splitlines()
    assert len(steps) == 2 * 15  # 480 training samples in batches of 32, two epochs
    assert list((tmp_path / "logs" / "train" / "plugins" / "profile").glob("*/*.trace.json.gz"))
    with pytest.raises(NotImplementedError, match="write_images"):
        keras.callbacks.TensorBoard(write_images=True)
    with pytest.raises(ValueError, match="histogram_freq must be an integer >= 0"):
        keras.callbacks.TensorBoard(histogram_freq=-1)
    # histogram_freq=2 over 3 epochs: each weight's histogram at epochs 0 and 2, in train/ only
    # (TensorBoard's own reader checks their values: TensorBoard.ReadsNnfitLogs).
    model.fit(x, y, epochs=3, verbose=0, callbacks=[keras.callbacks.TensorBoard(log_dir=tmp_path / "h", histogram_freq=2)])
    data = b"".join(p.read_bytes() for p in (tmp_path / "h" / "train").glob("events.out.tfevents.*"))
    paths = [w.path for w in model.weights]
    assert paths and all(data.count(f"{p}/histogram".encode()) == 2 for p in paths)
    assert data.count(b"histograms") == 2 * len(paths)
    # evaluate with the callback: one more validation file (Keras 3's evaluation_* scalars).
    model.evaluate(x, y, callbacks=[keras.callbacks.TensorBoard(log_dir=tmp_path / "logs")], verbose=0)
    assert len(list((tmp_path / "logs" / "validation").glob("events.out.tfevents.*"))) == 2


def test_openmp_spin_is_chosen_before_libgomp_loads():
    code = textwrap.dedent("""
        import os
        from nnfit import keras
        from nnfit.keras import layers
        keras.Sequential([keras.Input((2,)), layers.Dense(1)]).build()
        maps = open("/proc/self/maps").read()
        print(os.environ.get("GOMP_SPINCOUNT"), "libgomp" in maps)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(env, NNFIT_OPENMP_SPIN="123"))
    assert r.stdout.split() == ["123", "True"], r.stderr
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(env, NNFIT_OPENMP_SPIN="123", GOMP_SPINCOUNT="77"))
    assert r.stdout.split() == ["77", "True"], r.stderr  # the user's own setting wins


# Device placement (issue 19): models go where keras.device / NNFIT_DEVICE say, "auto" by
# default, and say why; a GPU named where none is usable is an error naming what is missing.
NO_DRIVER = not os.path.exists("/proc/driver/nvidia/gpus")


def test_device_defaults_to_auto_and_says_why():
    m = mlp()
    if NO_DRIVER:
        assert m.device == "cpu"
        assert "no NVIDIA driver" in m.device_reason, m.device_reason
    else:
        assert m.device in ("cpu", "cuda:0"), m.device
        assert m.device_reason


def test_keras_device_scope_places_models(monkeypatch):
    with keras.device("cpu"):
        m = mlp()
    assert m.device == "cpu"
    assert m.device_reason == "requested by nnfit.keras.device"
    monkeypatch.setenv("NNFIT_DEVICE", "cpu:0")
    assert mlp().device_reason == "requested by nnfit.keras.device"
    with pytest.raises(ValueError, match="unknown device 'tpu:0'"):
        keras.device("tpu:0")
    with keras.device("auto"):
        assert mlp().device in ("cpu", "cuda:0")


@pytest.mark.skipif(not NO_DRIVER, reason="this machine has an NVIDIA driver")
def test_a_gpu_named_without_one_is_an_error(tmp_path):
    with keras.device("/GPU:0"):
        m = mlp()
    with pytest.raises(NotImplementedError, match="no NVIDIA GPU on this machine"):
        m.device  # built (and placed) on first use
    m = mlp()
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    m.save(tmp_path / "m.keras")
    with keras.device("gpu:0"):
        with pytest.raises(NotImplementedError, match="no NVIDIA GPU on this machine"):
            keras.models.load_model(tmp_path / "m.keras")
    with keras.device("cpu"):
        assert keras.models.load_model(tmp_path / "m.keras").device == "cpu"
