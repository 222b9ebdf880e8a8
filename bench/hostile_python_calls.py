"""Bad nnfit.keras calls for bench/hostile_sweep.py (issue 39): (name, code, expect), expect
"raise" where Keras 3.15 raises and "any" where Keras accepts the call (or where it crashes or
raises for a reason nnfit need not share). Check them against real Keras with
`KERAS_BACKEND=tensorflow VENV/bin/python bench/hostile_python_calls.py [FIRST_INDEX]`
(lines starting with !! disagree; the calls on FIFOs are skipped, they block in Keras).
Keras builds a Sequential model when it is made, nnfit when it is first used; the calls that
build one ask for its output_shape, so both build it. Each runs in its own child after PRELUDE, which gives a
compiled two-layer model `m`, data `x`, `y` and the paths FIFO, BOMB (a .keras whose
config.json inflates to 1 GiB), CLEAN (a valid .keras) and WORK (a folder of the case's own).
"""

PRELUDE = """
import numpy as np
from {pkg} import keras
from {pkg}.keras import layers, ops
def model():
    m = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    m.compile(optimizer="adam", loss="mse")
    return m
m = model()
x = np.random.rand(16, 4).astype("float32")
y = np.random.rand(16, 3).astype("float32")
FIFO, BOMB, CLEAN, WORK = {fifo!r}, {bomb!r}, {clean!r}, {work!r}
"""

_FIT = [
    ("fit batch_size=1.5", "m.fit(x, y, batch_size=1.5, verbose=0)", "raise"),
    ("fit batch_size='32'", "m.fit(x, y, batch_size='32', verbose=0)", "raise"),
    ("fit batch_size=-1", "m.fit(x, y, batch_size=-1, verbose=0)", "raise"),
    ("fit batch_size=0", "m.fit(x, y, batch_size=0, verbose=0)", "any"),
    ("fit batch_size=2**32", "m.fit(x, y, batch_size=2**32, verbose=0)", "any"),
    ("fit batch_size=2**63", "m.fit(x, y, batch_size=2**63, verbose=0)", "raise"),
    ("fit batch_size=nan", "m.fit(x, y, batch_size=float('nan'), verbose=0)", "raise"),
    ("fit epochs=1.5", "m.fit(x, y, epochs=1.5, verbose=0)", "raise"),
    ("fit epochs='2'", "m.fit(x, y, epochs='2', verbose=0)", "raise"),
    ("fit epochs=-1", "m.fit(x, y, epochs=-1, verbose=0)", "any"),
    ("fit x=None", "m.fit(None, verbose=0)", "raise"),
    ("fit y=None", "m.fit(x, None, verbose=0)", "raise"),
    ("fit datetime64", "m.fit(np.zeros((16, 4), 'datetime64[s]'), y, verbose=0)", "raise"),
    ("fit complex", "m.fit(x.astype('complex64'), y, verbose=0)", "any"),
    ("fit object array", "m.fit(np.array([[object()] * 4] * 16), y, verbose=0)", "raise"),
    ("fit strings", "m.fit(np.full((16, 4), 'a'), y, verbose=0)", "raise"),
    ("fit zero samples", "m.fit(x[:0], y[:0], verbose=0)", "any"),
    ("fit wrong rank", "m.fit(x.reshape(16, 2, 2), y, verbose=0)", "raise"),
    ("fit same size other layout", "m.fit(x.reshape(8, 8), y[:8], verbose=0)", "raise"),
    ("fit y too short", "m.fit(x, y[:15], verbose=0)", "raise"),
    ("fit y of other width", "m.fit(x, np.zeros((16, 5)), verbose=0)", "raise"),
    ("fit validation_split=1.5", "m.fit(x, y, validation_split=1.5, verbose=0)", "any"),
    ("fit validation_split='0.2'", "m.fit(x, y, validation_split='0.2', verbose=0)", "raise"),
    ("fit steps_per_epoch=0", "m.fit(x, y, steps_per_epoch=0, verbose=0)", "any"),
    ("fit steps_per_epoch=-1", "m.fit(x, y, steps_per_epoch=-1, verbose=0)", "raise"),
    ("fit steps_per_epoch=1.5", "m.fit(x, y, steps_per_epoch=1.5, verbose=0)", "raise"),
    ("fit verbose='x'", "m.fit(x, y, verbose='x')", "any"),
    ("fit shuffle='x'", "m.fit(x, y, shuffle='x', verbose=0)", "any"),
    ("fit class_weight of a missing class", "m.fit(x, np.zeros((16,), 'int64'), class_weight={99: 1.0}, verbose=0)",
     "raise"),
    ("fit sample_weight too short", "m.fit(x, y, sample_weight=np.ones(15), verbose=0)", "raise"),
    ("fit sample_weight nan", "m.fit(x, y, sample_weight=np.full(16, np.nan), verbose=0)", "any"),
    ("fit sample_weight 2-d", "m.fit(x, y, sample_weight=np.ones((16, 4, 4)), verbose=0)", "raise"),
    ("fit callbacks=[1]", "m.fit(x, y, callbacks=[1], verbose=0)", "raise"),
    ("fit callbacks='x'", "m.fit(x, y, callbacks='x', verbose=0)", "raise"),
    ("fit initial_epoch=-1", "m.fit(x, y, initial_epoch=-1, verbose=0)", "any"),
    ("fit initial_epoch past epochs", "m.fit(x, y, epochs=1, initial_epoch=5, verbose=0)", "any"),
    ("fit validation_data=(x,)", "m.fit(x, y, validation_data=(x,), verbose=0)", "raise"),
    ("fit validation_data of other width", "m.fit(x, y, validation_data=(x, x), verbose=0)", "raise"),
    ("fit x dict of wrong names", "m.fit({'nope': x}, y, verbose=0)", "raise"),
    ("fit x of 2**20 columns", "m.fit(np.zeros((2, 2**20), 'float32'), y[:2], verbose=0)", "raise"),
    ("fit inf inputs", "m.fit(np.full((16, 4), np.inf, 'float32'), y, verbose=0)", "any"),
    ("fit unknown keyword", "m.fit(x, y, nope=1, verbose=0)", "raise"),
    ("fit on an uncompiled model", "model2 = keras.Sequential([keras.Input((4,)), layers.Dense(3)]); model2.fit(x, y)",
     "raise"),
]
_PREDICT = [
    ("predict batch_size=0", "m.predict(x, batch_size=0, verbose=0)", "any"),
    ("predict batch_size=2**40", "m.predict(x, batch_size=2**40, verbose=0)", "any"),
    ("predict batch_size=1.5", "m.predict(x, batch_size=1.5, verbose=0)", "raise"),
    ("predict steps=-1", "m.predict(x, steps=-1, verbose=0)", "raise"),
    ("predict wrong width", "m.predict(np.zeros((4, 5), 'float32'), verbose=0)", "raise"),
    ("predict no samples", "m.predict(np.zeros((0, 4), 'float32'), verbose=0)", "any"),
    ("predict None", "m.predict(None, verbose=0)", "raise"),
    ("evaluate y=None", "m.evaluate(x, None, verbose=0)", "raise"),
    ("evaluate batch_size='8'", "m.evaluate(x, y, batch_size='8', verbose=0)", "raise"),
    ("call on wrong width", "m(np.zeros((2, 5), 'float32'))", "raise"),
    ("call on a string", "m('x')", "raise"),
    ("train_on_batch of other lengths", "m.train_on_batch(x, y[:3])", "raise"),
    ("set_weights of wrong shapes", "m.set_weights([np.zeros((5, 3)), np.zeros(3)])", "raise"),
    ("set_weights too few", "m.set_weights([np.zeros((4, 3))])", "raise"),
    ("set_weights nan", "m.set_weights([np.full((4, 3), np.nan), np.zeros(3)]); m.predict(x, verbose=0)", "any"),
]
_LAYERS = [
    ("Dense(0)", "layers.Dense(0)", "raise"),
    ("Dense(-1)", "layers.Dense(-1)", "raise"),
    ("Dense(1.5)", "layers.Dense(1.5)", "raise"),
    ("Dense('3')", "layers.Dense('3')", "raise"),
    ("Dense(10**12) built", "keras.Sequential([keras.Input((4,)), layers.Dense(10**12)]).predict(x, verbose=0)",
     "raise"),
    ("Dense(2**31) built", "keras.Sequential([keras.Input((4,)), layers.Dense(2**31)]).predict(x, verbose=0)", "raise"),
    ("Conv2D(filters=0)", "layers.Conv2D(0, 3)", "raise"),
    ("Conv2D(kernel_size=0)", "layers.Conv2D(4, 0)", "raise"),
    ("Conv2D(kernel_size=-1)", "layers.Conv2D(4, -1)", "raise"),
    ("Conv2D(strides=0)", "layers.Conv2D(4, 3, strides=0)", "raise"),
    ("Conv2D(padding='nope')", "layers.Conv2D(4, 3, padding='nope')", "raise"),
    ("Conv2D kernel past its input",
     "keras.Sequential([keras.Input((4, 4, 1)), layers.Conv2D(2, 9)]).output_shape", "raise"),
    ("Dropout(1.5)", "layers.Dropout(1.5)", "raise"),
    ("Dropout(-0.1)", "layers.Dropout(-0.1)", "raise"),
    ("Input(shape=(-1,))", "keras.Input((-1,))", "raise"),
    ("Input(shape=(0,)) trained", "mm = keras.Sequential([keras.Input((0,)), layers.Dense(2)]); "
     "mm.compile('adam', 'mse'); mm.fit(np.zeros((4, 0), 'float32'), np.zeros((4, 2)), verbose=0)", "any"),
    ("Input(shape=(2**40,)) built", "keras.Sequential([keras.Input((2**40,)), layers.Dense(2)]).predict("
     "np.zeros((1, 1), 'float32'), verbose=0)", "raise"),
    ("Input(shape=('a',))", "keras.Input(('a',))", "raise"),
    ("Reshape to (-1, -1)", "keras.Sequential([keras.Input((4,)), layers.Reshape((-1, -1))])", "raise"),
    ("Reshape to another size", "keras.Sequential([keras.Input((4,)), layers.Reshape((5,))]).output_shape", "raise"),
    ("Embedding(0, 4)", "layers.Embedding(0, 4)", "raise"),
    ("Embedding ids past input_dim",
     "e = keras.Sequential([keras.Input((2,), dtype='int32'), layers.Embedding(10, 4)]); "
     "e.predict(np.array([[10**9, -5]], 'int32'), verbose=0)", "any"),
    ("LSTM(0)", "layers.LSTM(0)", "raise"),
    ("activation='nope'", "layers.Dense(3, activation='nope')", "raise"),
    ("BatchNormalization(axis=5)",
     "keras.Sequential([keras.Input((4,)), layers.BatchNormalization(axis=5)]).output_shape", "raise"),
    ("MaxPooling2D(pool_size=0)", "layers.MaxPooling2D(0)", "raise"),
    ("Concatenate of mismatched", "layers.Concatenate()([keras.Input((2, 3)), keras.Input((4, 5))])", "raise"),
    ("Add of mismatched", "layers.Add()([keras.Input((3,)), keras.Input((5,))])", "raise"),
]
_COMPILE = [
    ("compile optimizer='nope'", "m.compile(optimizer='nope', loss='mse')", "raise"),
    ("compile loss='nope'", "m.compile(optimizer='adam', loss='nope')", "any"),
    ("compile metrics=['nope']", "m.compile(optimizer='adam', loss='mse', metrics=['nope']); m.fit(x, y, verbose=0)",
     "raise"),
    ("Adam(nan)", "m.compile(optimizer=keras.optimizers.Adam(float('nan')), loss='mse'); m.fit(x, y, verbose=0)",
     "any"),
    ("Adam(inf)", "m.compile(optimizer=keras.optimizers.Adam(float('inf')), loss='mse'); m.fit(x, y, verbose=0)",
     "any"),
    ("Adam(-1)", "m.compile(optimizer=keras.optimizers.Adam(-1.0), loss='mse'); m.fit(x, y, verbose=0)", "any"),
    ("Adam('x')", "keras.optimizers.Adam('x')", "raise"),
    ("SGD(momentum=-1)", "keras.optimizers.SGD(momentum=-1.0)", "raise"),
    ("Adam(clipnorm=-1)",
     "m.compile(optimizer=keras.optimizers.Adam(clipnorm=-1.0), loss='mse'); m.fit(x, y, verbose=0)",
     "any"),
    ("Adam(beta_1=2)", "m.compile(optimizer=keras.optimizers.Adam(beta_1=2.0), loss='mse'); m.fit(x, y, verbose=0)",
     "any"),
    ("loss_weights of 3 for one output", "m.compile('adam', 'mse', loss_weights=[1, 2, 3]); m.fit(x, y, verbose=0)",
     "raise"),
]
_FILES = [
    ("load_model FIFO", "keras.models.load_model(FIFO)", "raise"),
    ("load_model /dev/zero", "keras.models.load_model('/dev/zero')", "raise"),
    ("load_model /dev/urandom", "keras.models.load_model('/dev/urandom')", "raise"),
    ("load_model a folder", "keras.models.load_model(WORK)", "raise"),
    ("load_model missing", "keras.models.load_model(WORK + '/missing.keras')", "raise"),
    ("load_model empty file", "open(WORK + '/e.keras', 'wb').close(); keras.models.load_model(WORK + '/e.keras')",
     "raise"),
    ("load_model text as .keras", "open(WORK + '/t.keras', 'w').write('hello'); keras.models.load_model(WORK + "
     "'/t.keras')", "raise"),
    ("load_model truncated", "d = open(CLEAN, 'rb').read(); open(WORK + '/c.keras', 'wb').write(d[:len(d) // 2]); "
     "keras.models.load_model(WORK + '/c.keras')", "raise"),
    ("load_model 1 GiB config.json bomb", "keras.models.load_model(BOMB)", "raise"),
    ("load_model .txt suffix", "import shutil; shutil.copy(CLEAN, WORK + '/m.txt'); keras.models.load_model(WORK + "
     "'/m.txt')", "raise"),
    ("load_model None", "keras.models.load_model(None)", "raise"),
    ("load_weights FIFO", "m.load_weights(FIFO)", "raise"),
    ("load_weights /dev/zero as .weights.h5", "import os; os.symlink('/dev/zero', WORK + '/z.weights.h5'); "
     "m.load_weights(WORK + '/z.weights.h5')", "raise"),
    ("load_weights of another model", "m.load_weights(CLEAN)", "raise"),
    ("save to /dev/full", "m.save('/dev/full')", "raise"),
    ("save to a folder", "m.save(WORK)", "raise"),
    ("save to a FIFO named .keras", "import os; os.mkfifo(WORK + '/f.keras'); m.save(WORK + '/f.keras')", "raise"),
    ("save without suffix", "m.save(WORK + '/m')", "raise"),
    ("save_weights to a FIFO", "import os; os.mkfifo(WORK + '/f.weights.h5'); m.save_weights(WORK + '/f.weights.h5')",
     "raise"),
    ("model_from_json nested 100000", "keras.models.model_from_json('[' * 100000 + ']' * 100000)", "raise"),
    ("model_from_json of a list", "keras.models.model_from_json('[1, 2]')", "any"),
    ("model_from_json Dense units 2**62", "import json; c = json.loads(m.to_json()); "
     "c['config']['layers'][1]['config']['units'] = 2**62; keras.models.model_from_json(json.dumps(c))", "any"),
]
_OPS = [
    ("ops.zeros((2**40,))", "ops.zeros((2**40,))", "raise"),
    ("ops.ones((2**31, 2**31))", "ops.ones((2**31, 2**31))", "raise"),
    ("ops.reshape to another size", "ops.reshape(np.zeros(6, 'float32'), (4,))", "raise"),
    ("ops.arange(1e12)", "ops.arange(1e12)", "raise"),
    ("ops.one_hot depth 2**40", "ops.one_hot(np.array([1]), 2**40)", "any"),
    ("ops.matmul of mismatched", "ops.matmul(np.zeros((2, 3), 'float32'), np.zeros((4, 5), 'float32'))", "raise"),
    ("ops.take out of range", "ops.take(np.zeros(3, 'float32'), np.array([10**9]))", "any"),
    ("utils.to_categorical num_classes 2**40", "keras.utils.to_categorical([1], num_classes=2**40)", "raise"),
    ("utils.pad_sequences maxlen 2**40", "keras.utils.pad_sequences([[1]], maxlen=2**40)", "raise"),
]

CALLS = _FIT + _PREDICT + _LAYERS + _COMPILE + _FILES + _OPS


def check_with_keras(first=0):
    """Each call under real Keras in this process; prints whether Keras agrees with `expect`."""
    import os
    import signal
    import tempfile

    def alarm(*_):
        raise TimeoutError("no answer in 60 s")
    signal.signal(signal.SIGALRM, alarm)
    work = tempfile.mkdtemp(prefix="keras-calls-")
    prelude = PRELUDE.replace("from {pkg} import keras\nfrom {pkg}.keras import", "import keras\nfrom keras import")
    clean = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "formats", "samples",
                         "keras", "moonflower_mnist_cnn_keras3.1.1.keras")
    for i, (name, code, expect) in enumerate(CALLS):
        if i < first or "FIFO" in code or "BOMB" in code or "mkfifo" in code:
            continue
        d = os.path.join(work, str(i))
        os.makedirs(d)
        namespace = {}
        exec(prelude.format(fifo="/nonexistent", bomb="/nonexistent", clean=clean, work=d), namespace)
        signal.alarm(60)
        try:
            exec(code, namespace)
            got = "ACCEPTED"
        except Exception as e:
            got = f"{type(e).__name__}: {str(e)[:150]}"
        signal.alarm(0)
        agree = (got == "ACCEPTED") == (expect == "any")
        print(("   " if agree else "!! ") + f"{i} {name} [{expect}] -> {got}".replace("\n", " "), flush=True)


if __name__ == "__main__":
    import sys
    check_with_keras(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
