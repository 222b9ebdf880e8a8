"""Hostile files and arguments through nnfit.keras (issue 39): special files and zip bombs
given to load_model are refused by the engine before Python reads them, and the classifier
of bench/hostile_sweep.py sorts runs as the sweep needs. Each load runs in a child process
with a timeout and an address-space limit, so a hang or a blow-up fails the test instead of
stopping or swapping the machine."""
import importlib.util
import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FIXTURE = os.path.join(ROOT, "tests", "model", "fixtures", "towers_keras3.keras")


def load_in_child(path, limit_gib=1.5, timeout=60):
    """keras.models.load_model(path) in a child under RLIMIT_AS: (exit code, last line)."""
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({int(limit_gib * 2**30)}, {int(limit_gib * 2**30)}))
        from nnfit import keras
        try:
            keras.models.load_model({path!r})
        except Exception as e:
            print(type(e).__name__ + ": " + str(e).splitlines()[0])
            sys.exit(3)
        print("loaded")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    out = (r.stdout.strip().splitlines() or [r.stderr.strip()[-300:]])[-1]
    return r.returncode, out


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom"])
def test_special_files_are_refused_by_name(tmp_path, kind):
    path = kind
    if kind == "fifo":
        path = str(tmp_path / "model.keras")
        os.mkfifo(path)
    code, line = load_in_child(path, timeout=30)  # a read of the FIFO blocked forever before
    assert code == 3, line
    assert line.startswith("DataError") and path in line and ("FIFO" in line or "character device" in line), line


def test_a_config_json_bomb_is_refused_before_python_inflates_it(tmp_path):
    """1 GiB of whitespace after a real config.json deflates to about 1 MiB: valid JSON,
    which Python's zipfile read whole (and json parsed) before the engine's cap saw it."""
    path = tmp_path / "bomb.keras"
    with zipfile.ZipFile(FIXTURE) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "config.json":
                with dst.open("config.json", "w", force_zip64=True) as f:
                    f.write(data)
                    chunk = b" " * (1 << 24)
                    for _ in range(64):
                        f.write(chunk)
            else:
                dst.writestr(info.filename, data)
    assert path.stat().st_size < 10 << 20
    code, line = load_in_child(str(path), limit_gib=1.0)
    assert code == 3, line
    assert line.startswith("DataError") and "config.json" in line, line


def test_a_config_json_that_is_not_a_model_is_refused_by_the_engine(tmp_path):
    """Odd shapes of config.json (a list, a string as the model's config) reach the engine,
    which names them, instead of failing inside nnfit.keras's own look at the file."""
    for i, config in enumerate([[1, 2], {"class_name": "Functional", "config": "x"},
                                {"class_name": "Sequential", "config": {"layers": [1, None]}}]):
        path = tmp_path / f"odd{i}.keras"
        with zipfile.ZipFile(FIXTURE) as src, zipfile.ZipFile(path, "w") as dst:
            for info in src.infolist():
                dst.writestr(info.filename, json.dumps(config) if info.filename == "config.json"
                             else src.read(info.filename))
        code, line = load_in_child(str(path))
        assert code == 3, line
        assert str(path) in line, line
        assert not line.startswith(("TypeError", "AttributeError", "KeyError", "IndexError")), line


# Keras 3.15's own words for each (checked side by side with Keras: bench/hostile_python_calls.py).
KERAS_REFUSALS = [
    ("layers.Dense(0)", "Received an invalid value for `units`, expected a positive integer. Received: units=0"),
    ("layers.Dense(1.5)", "Received: units=1.5"),
    ("layers.Dense('3')", "Received: units=3"),
    ("layers.LSTM(0)", "Received an invalid value for argument `units`, expected a positive integer, got 0."),
    ("layers.Conv2D(0, 3)", "Invalid value for argument `filters`. Expected a strictly positive value. Received "
                            "filters=0."),
    ("layers.Conv2D(4, -1)", "The `kernel_size` argument must be a tuple of 2 integers. Received kernel_size=-1, "
                             "including values {-1} that do not satisfy `value > 0`"),
    ("layers.Conv2D(4, 3, strides=0)", "Received strides=0, including values {0}"),
    ("layers.Conv2D(4, 3, padding='nope')", "The `padding` argument must be a list/tuple or one of"),
    ("layers.MaxPooling2D(0)", "The `pool_size` argument must be a tuple of 2 integers. Received pool_size=0"),
    ("layers.Dropout(1.5)", "Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                            "Received: rate=1.5"),
    ("layers.Dropout(-0.1)", "Received: rate=-0.1"),
    ("layers.Embedding(0, 4)", "`input_dim` must be a positive integer. Received: input_dim=0 (of type int)."),
    ("layers.Reshape((-1, -1))", "There must be at most one unknown dimension (-1) in `target_shape`. Received: "
                                 "target_shape=(-1, -1)."),
    ("layers.Dense(3, activation='nope')", "Could not interpret activation function identifier: nope"),
    ("keras.Input((-1,))", "Cannot convert '(-1,)' to a shape. Negative dimensions are not allowed."),
    ("keras.optimizers.SGD(momentum=-1.0)", "`momentum` must be a float between [0, 1]."),
    ("keras.optimizers.Adam('x')", "Argument `learning_rate` should be float, or an instance of LearningRateSchedule"),
]


@pytest.mark.parametrize("call,message", KERAS_REFUSALS, ids=[c for c, _ in KERAS_REFUSALS])
def test_arguments_keras_refuses_are_refused_at_construction(call, message):
    from nnfit import keras
    from nnfit.keras import layers  # noqa: F401 (used by the calls)
    with pytest.raises(ValueError) as e:
        eval(call)
    assert message in str(e.value), str(e.value)


def test_valid_arguments_still_construct():
    from nnfit import keras
    from nnfit.keras import layers
    layers.Conv1D(2, 3, padding="causal")
    layers.Conv2D(4, (3, 1), strides=(2, 1), padding="SAME")
    layers.MaxPooling2D()
    layers.Dropout(0)
    layers.Embedding(10, 4)
    layers.Reshape((-1, 2))
    keras.optimizers.SGD(0.1, momentum=0.9)
    keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5))
    keras.Input((None, 3))


def test_bad_calls_raise_value_errors_not_internal_ones(tmp_path):
    import numpy as np
    from nnfit import keras
    from nnfit.keras import layers
    m = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    m.compile("adam", "mse")
    x, y = np.zeros((8, 4), "float32"), np.zeros((8, 3), "float32")
    with pytest.raises(ValueError, match="batch axis"):  # IndexError before
        m("x")
    with pytest.raises(ValueError, match="past 2\\^63 - 1"):  # pybind11's TypeError before
        m.fit(x, y, batch_size=2**63, verbose=0)
    with pytest.raises(ValueError, match="nested too deeply"):  # RecursionError before
        keras.models.model_from_json("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="a JSON list"):  # AttributeError before
        keras.models.model_from_json("[1, 2]")
    path = tmp_path / "m.txt"
    m.save(tmp_path / "m.keras")
    path.write_bytes((tmp_path / "m.keras").read_bytes())
    with pytest.raises(ValueError, match="File format not supported"):  # loaded before; Keras refuses the name
        keras.models.load_model(path)
def _sweep():
    spec = importlib.util.spec_from_file_location("hostile_sweep", os.path.join(ROOT, "bench", "hostile_sweep.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sweeps_classifier():
    sweep = _sweep()
    classify = sweep.classify
    error = "nnfit: error: m.keras: config.json is 3 GB\n  hint: save the model again\n"
    assert classify(kind="keras", damaged=True, returncode=1, stderr=error, timed_out=False, peak_rss=50 << 20) \
        == "clean error"
    assert classify(kind="keras", damaged=True, returncode=0, stderr="", timed_out=False, peak_rss=50 << 20) \
        == "silent acceptance"
    assert classify(kind="keras", damaged=False, returncode=0, stderr="", timed_out=False, peak_rss=50 << 20) \
        == "accepted"
    assert classify(kind="keras", damaged=True, returncode=-11, stderr="", timed_out=False, peak_rss=50 << 20) \
        == "crash"
    assert classify(kind="keras", damaged=True, returncode=-9, stderr="", timed_out=True, peak_rss=50 << 20) == "hang"
    assert classify(kind="keras", damaged=True, returncode=1, stderr=error, timed_out=False, peak_rss=3 << 30) \
        == "blow-up"
    assert classify(kind="keras", damaged=True, returncode=1, stderr="nnfit: internal error: std::bad_alloc\n",
                    timed_out=False, peak_rss=50 << 20) == "blow-up"
    assert classify(kind="keras", damaged=True, returncode=1, stderr="nnfit: internal error: vector::_M_range\n",
                    timed_out=False, peak_rss=50 << 20) == "unclear error"
    assert classify(kind="keras", damaged=True, returncode=1, stderr="nnfit: error: " + "x" * 2000 + "\n",
                    timed_out=False, peak_rss=50 << 20) == "unclear error"
    # Damage the zip's CRC covers may load only with the clean file's predictions.
    assert classify(kind="keras", damaged="same", returncode=0, stderr="", timed_out=False, peak_rss=50 << 20,
                    outputs_ok=False) == "silent acceptance"
    assert classify(kind="keras", damaged="same", returncode=0, stderr="", timed_out=False, peak_rss=50 << 20,
                    outputs_ok=True) == "accepted"
    # An allocation the machine could make but the sweep's limit stopped, against a size
    # refused as larger than the machine before anything is allocated.
    oom = "nnfit: error: cpu:0: out of memory allocating {} GiB\n"
    assert classify(kind="config", damaged=None, returncode=1, stderr=oom.format(3), timed_out=False,
                    peak_rss=50 << 20) == "blow-up"
    assert classify(kind="config", damaged=None, returncode=1, stderr=oom.format(1 << 20), timed_out=False,
                    peak_rss=50 << 20) == "clean error"
    assert classify(kind="keras", damaged=True, returncode=1, stderr=error, timed_out=False, peak_rss=50 << 20,
                    names=("other.keras",)) == "unclear error"  # names neither the file nor the key
    assert classify(kind="python", damaged=True, returncode=3, stderr="RAISED IndexError builtins tuple index\n",
                    timed_out=False, peak_rss=50 << 20) == "unclear error"
    assert classify(kind="python", damaged=True, returncode=3, stderr="RAISED ValueError builtins Dense(0)\n",
                    timed_out=False, peak_rss=50 << 20) == "clean error"
    # A damaged file whose damage does not matter (a byte of padding) may load: not every
    # mutation is damage, so the sweep marks only mutations it knows must be refused.
    assert classify(kind="keras", damaged=None, returncode=0, stderr="", timed_out=False, peak_rss=50 << 20) \
        == "accepted"
