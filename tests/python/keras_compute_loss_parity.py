"""Keras 3's compute_loss reading x, without targets and with several outputs (issue 35), run
under real Keras (from PyPI, in the Keras venv) and under `from nnfit import keras` with only
the import line changed. Every case starts from the same weights (set from one seeded
generator), trains without shuffling, and compares per epoch the History values and keys,
then evaluate's:
1. an autoencoder (a subclassed Model) whose compute_loss reads x and y_pred only, trained
   with fit(x) and no targets, validated on (x_val,), evaluated on x alone;
2. the same model given targets anyway (Keras passes y to compute_loss, unread);
3. a subclassed model whose compute_loss mixes y (a weighted squared error) and x (a
   penalty on x - y_pred), with sample weights;
4. a Functional model (a keras.Model subclass built from inputs and outputs that only
   overrides compute_loss) with two inputs given as a list and x read as a list;
5. a Functional model with two outputs given as a dict: y, y_pred and sample_weight (one
   array given, repeated per output as Keras's data adapter does) are dicts by output name;
6. a subclassed model returning two outputs (a list) whose compute_loss weighs the first
   output's error by sample_weight[0] and adds a penalty on x.
Values agree within 1e-5 relative (float32 sums in another order).

usage: keras_compute_loss_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    IMPORT_LINE
    from keras import layers, ops

    out = {}
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 6)).astype("float32")
    y = np.stack([x[:, 0] - 0.5 * x[:, 1], x[:, 2] * x[:, 3]], 1).astype("float32")
    sw = rng.uniform(0.2, 2.0, size=(96,)).astype("float32")

    def set_weights(m):
        init = np.random.default_rng(1)
        m.set_weights([(init.normal(size=w.shape) * 0.4).astype("float32") for w in m.get_weights()])

    def history(h):
        return {k: [float(v) for v in vals] for k, vals in sorted(h.history.items())}

    def scores(value):
        values = value if isinstance(value, list) else [value]
        return [float(v) for v in values]

    # 1. An autoencoder trained with fit(x): compute_loss reads x and y_pred.
    class AE(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.enc = layers.Dense(3, activation="tanh")
            self.dec = layers.Dense(6)

        def call(self, inputs):
            return self.dec(self.enc(inputs))

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            return ops.mean(ops.square(x - y_pred))

    m = AE()
    m.predict(x[:1], verbose=0)
    set_weights(m)
    m.compile(optimizer=keras.optimizers.Adam(0.01))
    out["autoencoder"] = history(m.fit(x[:72], epochs=3, batch_size=16, shuffle=False, verbose=0,
                                       validation_data=(x[72:],)))
    out["autoencoder_evaluate"] = {"loss": scores(m.evaluate(x[72:], batch_size=16, verbose=0))}

    # 2. The same with targets given (unread).
    m = AE()
    m.predict(x[:1], verbose=0)
    set_weights(m)
    m.compile(optimizer=keras.optimizers.SGD(0.05))
    out["autoencoder_with_y"] = history(m.fit(x, x * 2.0, epochs=3, batch_size=32, shuffle=False, verbose=0))

    # 3. compute_loss on y and x, with sample weights.
    class Mixed(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.hidden = layers.Dense(8, activation="tanh")
            self.out = layers.Dense(2)

        def call(self, inputs):
            return self.out(self.hidden(inputs))

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            err = ops.mean(ops.square(y - y_pred), axis=-1)
            if sample_weight is not None:
                err = err * sample_weight
            return ops.mean(err) + 0.1 * ops.mean(ops.abs(x[:, :2] - y_pred))

    m = Mixed()
    m.predict(x[:1], verbose=0)
    set_weights(m)
    m.compile(optimizer=keras.optimizers.SGD(0.05))
    out["x_and_y"] = history(m.fit(x, y, sample_weight=sw, epochs=3, batch_size=16, shuffle=False, verbose=0))
    out["x_and_y_evaluate"] = {"loss": scores(m.evaluate(x, y, sample_weight=sw, batch_size=32, verbose=0))}

    # 4. A Functional subclass with two inputs, x read as a list.
    class TwoInputs(keras.Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            a, b = x
            return ops.mean(ops.square(y - y_pred)) + 0.05 * ops.mean(ops.square(a[:, :2] + b - y_pred))

    ia, ib = keras.Input((6,)), keras.Input((2,))
    h = layers.Dense(8, activation="tanh")(layers.Concatenate()([ia, ib]))
    m = TwoInputs([ia, ib], layers.Dense(2)(h))
    set_weights(m)
    m.compile(optimizer=keras.optimizers.SGD(0.05))
    out["functional_two_inputs"] = history(m.fit([x, y * 0.5], y, epochs=3, batch_size=24, shuffle=False, verbose=0))

    # 5. Two outputs as a dict: y and y_pred by name, sample weights on one term.
    class DictOutputs(keras.Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            first = ops.mean(ops.square(y["a"] - y_pred["a"]), axis=-1)
            if sample_weight is not None:  # Keras gives one per output, like y
                first = first * sample_weight["a"]
            second = ops.mean(ops.abs(y["b"] - y_pred["b"]))
            return ops.mean(first) + 0.5 * second + 0.01 * ops.mean(ops.square(x))

    inp = keras.Input((6,))
    h = layers.Dense(6, activation="tanh", name="h")(inp)
    m = DictOutputs(inp, {"a": layers.Dense(2, name="a")(h), "b": layers.Dense(1, name="b")(h)})
    set_weights(m)
    m.compile(optimizer=keras.optimizers.SGD(0.05))
    targets = {"a": y, "b": y[:, :1]}
    out["dict_outputs"] = history(m.fit(x, targets, sample_weight=sw, epochs=3, batch_size=16, shuffle=False,
                                        verbose=0))
    out["dict_outputs_evaluate"] = {"loss": scores(m.evaluate(x, targets, sample_weight=sw, batch_size=32,
                                                              verbose=0))}

    # 6. A subclassed model with two outputs (a list), sample weights one per output.
    class TwoOutputs(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.hidden = layers.Dense(8, activation="tanh")
            self.a = layers.Dense(2)
            self.b = layers.Dense(1)

        def call(self, inputs):
            h = self.hidden(inputs)
            return [self.a(h), self.b(h)]

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            first = ops.mean(ops.square(y[0] - y_pred[0]), axis=-1)
            if sample_weight is not None:
                first = first * sample_weight[0]
            return ops.mean(first) + ops.mean(ops.abs(y[1] - y_pred[1])) + 0.1 * ops.mean(ops.square(x[:, :1] - y_pred[1]))

    m = TwoOutputs()
    m.predict(x[:1], verbose=0)
    set_weights(m)
    m.compile(optimizer=keras.optimizers.SGD(0.05))
    out["list_outputs"] = history(m.fit(x, [y, y[:, 1:]], sample_weight=sw, epochs=3, batch_size=16, shuffle=False,
                                        verbose=0))
    out["list_outputs_evaluate"] = {"loss": scores(m.evaluate(x, [y, y[:, 1:]], sample_weight=sw, batch_size=32,
                                                              verbose=0))}
    print("PARITY " + json.dumps(out))
""")

RTOL = 1e-5


def compare(ref, got):
    """Differences between Keras's result (ref) and nnfit's (got), as messages."""
    failures = []
    for case, want in ref.items():
        have = got.get(case)
        if have is None or sorted(have) != sorted(want):
            failures.append(f"{case}: keys nnfit {sorted(have or {})}, Keras {sorted(want)}")
            continue
        for key, values in want.items():
            if len(have[key]) != len(values):
                failures.append(f"{case}.{key}: nnfit has {len(have[key])} values, Keras {len(values)}")
            for epoch, (a, b) in enumerate(zip(have[key], values)):
                if abs(a - b) > RTOL * max(1.0, abs(b)):
                    failures.append(f"{case}.{key}[{epoch}]: nnfit {a:.8g}, Keras {b:.8g} (rtol {RTOL})")
    return failures


def main():
    ref, got = parity_runs.run_both(SCRIPT, sys.argv, timeout=1200)
    for case in ref:
        first = next(iter(ref[case]))
        print(f"{case}: {first} nnfit {[round(v, 7) for v in got.get(case, {}).get(first, [])]}, "
              f"Keras {[round(v, 7) for v in ref[case][first]]}")
    failures = compare(ref, got)
    if failures:
        sys.exit(f"{len(failures)} differences from Keras:\n" + "\n".join(failures))
    print(f"parity: ok ({len(ref)} cases)")


if __name__ == "__main__":
    main()
