"""Keras 3's custom losses and metrics (issue 35), run under real Keras (from PyPI, in the Keras
venv) and under `from nnfit import keras` with only the import line changed. Every case
starts from the same weights (set from one seeded generator), trains with SGD without
shuffling, and compares per epoch the History values (loss, metrics, validation) and keys:
1. a loss function fn(y_true, y_pred) (mean over the last axis) with a metric function and
   a keras.metrics.Metric subclass (add_variable, add_weight, update_state, result);
2. a lambda loss that reduces over everything (a scalar), with sample weights;
3. a keras.losses.Loss subclass with its own config, reduction="sum";
4. a Loss subclass with reduction="mean_with_sample_weight", weighted_metrics with a
   metric function, and sample weights;
5. keras.metrics.MeanMetricWrapper around a function taking a keyword argument;
6. a softmax classifier with a crossentropy written with keras.ops and a Metric subclass
   counting correct argmaxes, validated, then evaluate(return_dict=True);
7. files: the model of case 1 saved as .keras; compile_config's loss and metrics entries
   (without nnfit's "nnfit_trace") equal Keras's, and the file loads in the other framework
   with custom_objects, compiled, and evaluates to the same loss.
8. a subclassed keras.Model overriding compute_loss (a scalar with keras.ops, with and
   without sample weights, and super().compute_loss of a compiled loss function plus a term).
9. self.add_loss in layers' call (a penalty on the layer's input summed over the batch, one
   on a sublayer's output), with validation;
10. a model with two outputs, a custom loss per output with loss weights, and a metric
   function per output (History's per-output keys).
Values agree within 1e-4 relative (float32 sums in another order).

usage: keras_losses_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json, os, tempfile, zipfile
    import numpy as np
    IMPORT_LINE
    from keras import layers, ops

    out = {}
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype("float32")
    y = np.stack([x[:, 0] - 0.5 * x[:, 1], x[:, 2] * x[:, 3]], 1).astype("float32")
    sw = rng.uniform(0.2, 2.0, size=(96,)).astype("float32")

    def model(units=2, activation=None):
        m = keras.Sequential([keras.Input((4,)), layers.Dense(8, activation="tanh"), layers.Dense(units, activation=activation)])
        init = np.random.default_rng(1)
        m.set_weights([(init.normal(size=w.shape) * 0.5).astype("float32") for w in m.get_weights()])
        return m

    def history(h):
        return {k: [float(v) for v in vals] for k, vals in sorted(h.history.items())}

    def my_loss(y_true, y_pred):
        return ops.mean(ops.square(y_true - y_pred), axis=-1)

    def abs_err(y_true, y_pred):
        return ops.mean(ops.abs(y_true - y_pred), axis=-1)

    class TotalError(keras.metrics.Metric):
        def __init__(self, name="total_error", **kwargs):
            super().__init__(name=name, **kwargs)
            self.total = self.add_variable(shape=(), initializer="zeros", name="total")
            self.count = self.add_weight(shape=(), initializer="zeros", name="count")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.total.assign_add(ops.sum(ops.square(y_true - y_pred)))
            self.count.assign_add(ops.sum(y_true[:, 0] * 0.0 + 1.0))

        def result(self):
            return self.total / self.count

    # 1. A loss function, a metric function and a Metric subclass.
    m = model()
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss=my_loss, metrics=[abs_err, TotalError()])
    out["function"] = history(m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_split=0.25))
    saved_model = m

    # 2. A lambda reducing over everything, with sample weights.
    m = model()
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss=lambda t, p: ops.mean(ops.abs(t - p)))
    out["lambda"] = history(m.fit(x, y, sample_weight=sw, batch_size=32, epochs=3, shuffle=False, verbose=0))

    # 3. A Loss subclass with a config, reduction="sum".
    class ScaledHuber(keras.losses.Loss):
        def __init__(self, delta=1.0, scale=0.5, reduction="sum", name="scaled_huber"):
            super().__init__(reduction=reduction, name=name)
            self.delta, self.scale = delta, scale

        def call(self, y_true, y_pred):
            err = ops.abs(y_true - y_pred)
            quad = ops.minimum(err, self.delta)
            return self.scale * ops.sum(0.5 * quad * quad + self.delta * (err - quad), axis=-1)

        def get_config(self):
            config = super().get_config()
            config.update(delta=self.delta, scale=self.scale)
            return config

    m = model()
    m.compile(optimizer=keras.optimizers.SGD(0.005), loss=ScaledHuber(delta=0.5))
    out["loss_subclass_sum"] = history(m.fit(x, y, batch_size=24, epochs=3, shuffle=False, verbose=0))

    # 4. mean_with_sample_weight, weighted metrics and sample weights.
    class WeightedMSE(keras.losses.Loss):
        def call(self, y_true, y_pred):
            return ops.mean(ops.square(y_true - y_pred), axis=-1)

    m = model()
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss=WeightedMSE(reduction="mean_with_sample_weight"),
              weighted_metrics=[abs_err])
    out["mean_with_sample_weight"] = history(m.fit(x, y, sample_weight=sw, batch_size=32, epochs=3, shuffle=False,
                                                   verbose=0))

    # 5. keras.metrics.MeanMetricWrapper with a keyword argument.
    def power_error(y_true, y_pred, power=2.0):
        return ops.mean(ops.power(ops.abs(y_true - y_pred), power), axis=-1)

    m = model()
    m.compile(optimizer=keras.optimizers.SGD(0.02), loss=my_loss,
              metrics=[keras.metrics.MeanMetricWrapper(power_error, name="cubed", power=3.0)])
    out["metric_wrapper"] = history(m.fit(x, y, batch_size=32, epochs=3, shuffle=False, verbose=0))

    # 6. A classifier: crossentropy with keras.ops and a Metric counting correct argmaxes.
    labels = (x[:, 0] + x[:, 1] > 0).astype("int64") + (x[:, 2] > 0.5).astype("int64")
    onehot = np.eye(3, dtype="float32")[labels]

    def crossentropy(y_true, y_pred):
        return -ops.sum(y_true * ops.log(ops.clip(y_pred, 1e-7, 1.0)), axis=-1)

    class Correct(keras.metrics.Metric):
        def __init__(self, name="correct", **kwargs):
            super().__init__(name=name, **kwargs)
            self.hits = self.add_variable(shape=(), initializer="zeros", name="hits")
            self.seen = self.add_variable(shape=(), initializer="zeros", name="seen")

        def update_state(self, y_true, y_pred, sample_weight=None):
            hit = ops.cast(ops.equal(ops.argmax(y_true, axis=-1), ops.argmax(y_pred, axis=-1)), "float32")
            self.hits.assign_add(ops.sum(hit))
            self.seen.assign_add(ops.sum(hit * 0.0 + 1.0))

        def result(self):
            return self.hits / ops.maximum(self.seen, 1.0)

        def reset_state(self):
            self.hits.assign(0.0)
            self.seen.assign(0.0)

    m = model(3, "softmax")
    m.compile(optimizer=keras.optimizers.SGD(0.1), loss=crossentropy, metrics=[Correct()])
    h = m.fit(x[:72], onehot[:72], batch_size=16, epochs=3, shuffle=False, verbose=0,
              validation_data=(x[72:], onehot[72:]))
    out["classifier"] = history(h)
    out["classifier_evaluate"] = {k: [float(v)] for k, v in sorted(m.evaluate(x[72:], onehot[72:], verbose=0,
                                                                              return_dict=True).items())}

    # 8. A subclassed Model overriding compute_loss (with and without sample weights, and
    #    calling super().compute_loss with a compiled loss function).
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = layers.Dense(8, activation="tanh")
            self.d2 = layers.Dense(2)

        def call(self, inputs):
            return self.d2(self.d1(inputs))

        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            loss = ops.mean(ops.square(y_pred - y))
            if sample_weight is not None:
                loss = loss * ops.mean(sample_weight)
            return loss + 0.1 * ops.mean(ops.abs(y_pred))

    class NetSuper(Net):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
            return super().compute_loss(x, y, y_pred, sample_weight) + 0.01 * ops.mean(ops.square(y_pred))

    for name, cls, loss, weights in (("compute_loss", Net, None, None), ("compute_loss_weighted", Net, None, sw),
                                     ("compute_loss_super", NetSuper, abs_err, sw)):
        m = cls()
        m.predict(x[:1], verbose=0)  # builds the layers (Keras's build(input_shape) makes no sublayer weights)
        init = np.random.default_rng(1)
        m.set_weights([(init.normal(size=w.shape) * 0.5).astype("float32") for w in m.get_weights()])
        m.compile(optimizer=keras.optimizers.SGD(0.05), loss=loss, metrics=["mae"])
        out[name] = history(m.fit(x, y, sample_weight=weights, batch_size=16, epochs=3, shuffle=False, verbose=0))

    # 9. add_loss in layers' call: an activity penalty over the whole batch on the layer's
    #    input, and one on a sublayer's output.
    class ActivityPenalty(layers.Layer):
        def __init__(self, rate=1e-2, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate

        def call(self, inputs):
            self.add_loss(self.rate * ops.sum(ops.square(inputs)))
            return inputs

    class PenalizedDense(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(8, activation="tanh")

        def call(self, inputs):
            h = self.dense(inputs)
            self.add_loss(0.05 * ops.mean(ops.abs(h)))
            return h

    inp = keras.Input((4,))
    m = keras.Model(inp, layers.Dense(2)(ActivityPenalty(name="penalty")(PenalizedDense(name="block")(inp))))
    init = np.random.default_rng(1)
    m.set_weights([(init.normal(size=w.shape) * 0.5).astype("float32") for w in m.get_weights()])
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    out["add_loss"] = history(m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_split=0.25))

    # 10. Two outputs: a custom loss per output (a function, a Loss subclass) with loss
    #     weights, and a metric function per output.
    def max_error(t, p):
        return ops.max(ops.abs(t - p), axis=-1)

    inp = keras.Input((4,))
    h = layers.Dense(6, activation="tanh", name="h")(inp)
    m = keras.Model(inp, [layers.Dense(2, name="a")(h), layers.Dense(1, name="b")(h)])
    init = np.random.default_rng(1)
    m.set_weights([(init.normal(size=w.shape) * 0.5).astype("float32") for w in m.get_weights()])
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss={"a": abs_err, "b": WeightedMSE()},
              loss_weights={"a": 1.0, "b": 0.5}, metrics={"a": [max_error], "b": [max_error]})
    out["two_outputs"] = history(m.fit(x, [y, y[:, :1]], batch_size=16, epochs=3, shuffle=False, verbose=0))

    # 7. Files: compile_config as Keras writes it; loaded by the other framework (PARITY_FILES).
    where = os.environ.get("PARITY_FILES")
    if where:
        mine = "nnfit" if "nnfit" in keras.__name__ else "keras"
        path = os.path.join(where, mine + ".keras")
        saved_model.save(path)
        with zipfile.ZipFile(path) as z:
            compile_config = json.loads(z.read("config.json"))["compile_config"]
        strip = lambda e: {k: v for k, v in e.items() if k != "nnfit_trace"} if isinstance(e, dict) else e
        out["compile_config"] = {"loss": strip(compile_config["loss"]),
                                 "metrics": [strip(e) for e in compile_config["metrics"]]}
        out["evaluate_saved"] = {"loss": [float(saved_model.evaluate(x, y, verbose=0)[0])]}
        other = os.path.join(where, ("keras" if mine == "nnfit" else "nnfit") + ".keras")
        if os.path.exists(other):
            loaded = keras.models.load_model(other, custom_objects={"my_loss": my_loss, "abs_err": abs_err,
                                                                    "TotalError": TotalError})
            out["loaded_other"] = {"loss": [float(loaded.evaluate(x, y, verbose=0)[0])]}
    print("PARITY " + json.dumps(out))
""")

RTOL = 1e-4


def compare(ref, got):
    """Differences between Keras's result (ref) and nnfit's (got), as messages."""
    failures = []
    for case, want in ref.items():
        have = got.get(case)
        if case == "compile_config":
            if have != want:
                failures.append(f"compile_config:\n  nnfit {have}\n  Keras {want}")
            continue
        if case == "loaded_other":
            continue  # compared against the writer's own evaluation below
        if have is None or sorted(have) != sorted(want):
            failures.append(f"{case}: History keys nnfit {sorted(have or {})}, Keras {sorted(want)}")
            continue
        for key, values in want.items():
            for epoch, (a, b) in enumerate(zip(have[key], values)):
                if abs(a - b) > RTOL * max(1.0, abs(b)):
                    failures.append(f"{case}.{key}[{epoch}]: nnfit {a:.7g}, Keras {b:.7g} (rtol {RTOL})")
    return failures


def main():
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as where:
        os.environ["PARITY_FILES"] = where
        ref, got = parity_runs.run_both(SCRIPT, sys.argv, timeout=1200)
        # Each loads the file the other wrote: run both again now that both files exist.
        ref2, got2 = parity_runs.run_both(SCRIPT, sys.argv, timeout=1200)
    for case in ref:
        if case in ("compile_config",):
            continue
        first = next(iter(ref[case]))
        print(f"{case}: {first} per epoch nnfit {[round(v, 6) for v in got.get(case, {}).get(first, [])]}, "
              f"Keras {[round(v, 6) for v in ref[case][first]]}")
    failures = compare(ref, got)
    # A file one framework wrote evaluates in the other as in the writer.
    for reader, writer, name in ((got2, ref, "Keras -> nnfit"), (ref2, got, "nnfit -> Keras")):
        have = reader.get("loaded_other", {}).get("loss", [None])[0]
        want = writer["evaluate_saved"]["loss"][0]
        print(f"file {name}: loss {have} (writer's {want})")
        if have is None or abs(have - want) > RTOL * max(1.0, abs(want)):
            failures.append(f"file {name}: the loaded model's loss is {have}, the writer's {want}")
    if failures:
        sys.exit(f"{len(failures)} differences from Keras:\n" + "\n".join(failures))
    print("parity: ok")


if __name__ == "__main__":
    main()
