"""Keras's validation, inference and metric arguments, run under real Keras (from PyPI, in
the Keras venv) and under `from nnfit import keras`, on the same weights: validation_freq
(an int and a list), validation_batch_size, validation_steps, validation sample weights (a
tuple and validation_split's share of sample_weight), evaluate(sample_weight=...,
steps=...), predict(steps=...), and weighted_metrics (every metric kind nnfit has, weighted
by sample_weight and class_weight, with Keras's "weighted_" names where a name is taken),
and per-output metrics (a dict by output name, a list with one entry per output); then
train_on_batch (twice, with SGD at 0.1, so the second follows the first's update),
test_on_batch, predict_on_batch and model(x) on arrays.
The optimizer is SGD with a learning rate of 0, so training leaves the
weights alone and every figure is deterministic: the History's keys and lengths must be
Keras's, and every value must agree to 1e-4 relative (float32 arithmetic in two engines).

usage: keras_arguments_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    IMPORT_LINE

    rng = np.random.default_rng(7)
    x = rng.normal(size=(120, 8)).astype("float32")
    y = rng.integers(0, 3, size=120).astype("int64")
    w = rng.uniform(0.0, 2.0, size=120).astype("float32")
    vx, vy, vw = x[:40] * 0.5, y[:40], w[:40][::-1].copy()
    weights = [rng.normal(size=(8, 16)).astype("float32") * 0.5, rng.normal(size=16).astype("float32") * 0.1,
               rng.normal(size=(16, 3)).astype("float32") * 0.5, rng.normal(size=3).astype("float32") * 0.1]

    def model():
        m = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
        m.set_weights(weights)
        m.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
        return m

    def floats(d):
        # A logs dict as floats; a per-class value (F1Score(average=None)) as its items.
        out = {}
        for k, vs in d.items():
            v = np.asarray(vs)
            if isinstance(vs, list):
                out[k] = [float(e) for e in vs]
            elif v.ndim == 1:
                out.update({f"{k}_{i}": float(e) for i, e in enumerate(v)})
            else:
                out[k] = float(v)
        return out

    out = {}
    m = model()
    out["evaluate_weighted"] = floats(m.evaluate(x, y, sample_weight=w, batch_size=16, verbose=0, return_dict=True))
    out["evaluate_steps"] = floats(m.evaluate(x, y, batch_size=16, steps=3, verbose=0, return_dict=True))
    p = m.predict(x, batch_size=16, steps=2, verbose=0)
    out["predict_steps"] = {"rows": [float(p.shape[0])], "class_mean": [float((p * np.arange(3)).sum() / p.shape[0])]}
    out["fit_freq_2"] = floats(m.fit(x, y, batch_size=20, epochs=4, shuffle=False, verbose=0,
                                     validation_data=(vx, vy, vw), validation_freq=2, validation_batch_size=7,
                                     validation_steps=3).history)
    out["fit_freq_list"] = floats(m.fit(x, y, batch_size=20, epochs=3, shuffle=False, verbose=0,
                                        validation_data=(vx, vy), validation_freq=[1, 3]).history)
    out["fit_split_weighted"] = floats(m.fit(x, y, sample_weight=w, batch_size=20, epochs=1, shuffle=False,
                                             verbose=0, validation_split=0.25).history)

    # weighted_metrics: the categorical kinds and F1 on one-hot targets, the binary kinds on
    # one sigmoid unit; "accuracy" in both lists becomes "weighted_accuracy".
    m = model()
    m.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"], weighted_metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=2)])
    out["weighted_sparse_fit"] = floats(m.fit(x, y, batch_size=20, epochs=1, shuffle=False, verbose=0,
                                              class_weight={0: 3.0, 1: 0.5}, validation_data=(vx, vy, vw)).history)
    out["weighted_sparse_evaluate"] = floats(m.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True))
    onehot = np.eye(3, dtype="float32")[y]
    m = model()
    m.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="categorical_crossentropy",
              weighted_metrics=["categorical_accuracy", keras.metrics.F1Score(average="weighted"),
                                keras.metrics.F1Score(average=None, name="f1_each"), "mse", "mae"])
    out["weighted_onehot_evaluate"] = floats(m.evaluate(x, onehot, sample_weight=w, verbose=0, return_dict=True))
    b = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(1, activation="sigmoid")])
    b.set_weights([weights[0][:, :1], weights[1][:1]])
    b.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss="binary_crossentropy",
              weighted_metrics=["accuracy", keras.metrics.Precision(), keras.metrics.Recall(thresholds=0.3),
                                keras.metrics.AUC(), keras.metrics.AUC(curve="PR", name="pr_auc"),
                                keras.metrics.RootMeanSquaredError()])
    yb = (y == 1).astype("float32")
    out["weighted_binary_evaluate"] = floats(b.evaluate(x, yb, sample_weight=w, verbose=0, return_dict=True))

    # Per-output metrics on a two-output Functional model: a dict by output name, and a
    # list with one entry per output (Keras's reading of a list as long as the outputs).
    def two_outputs(metrics, weighted_metrics):
        inp = keras.Input(shape=(8,), name="x")
        hidden = keras.layers.Dense(16, activation="relu", name="hidden")(inp)
        head = keras.layers.Dense(3, activation="softmax", name="head")(hidden)
        aux = keras.layers.Dense(1, name="aux")(hidden)
        m = keras.Model(inp, [head, aux])
        m.set_weights(weights + [weights[2][:, :1], weights[3][:1]])
        m.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0),
                  loss=["sparse_categorical_crossentropy", "mse"], metrics=metrics, weighted_metrics=weighted_metrics)
        return m

    target = (x[:, :1] * 0.5).astype("float32")
    m = two_outputs({"head": ["accuracy"], "aux": ["mae", keras.metrics.RootMeanSquaredError()]},
                    {"aux": ["mse"]})
    # Batches of equal size: Keras's `<output>_loss` is the plain mean of the batches' means
    # (nnfit's, the mean over the samples); the two agree when no batch is partial.
    out["per_output_dict"] = floats(m.evaluate(x, [y, target], sample_weight=w, batch_size=40, verbose=0,
                                               return_dict=True))
    m = two_outputs(["accuracy", "mae"], None)
    out["per_output_list"] = floats(m.fit(x, [y, target], batch_size=20, epochs=1, shuffle=False, verbose=0,
                                          validation_data=(vx, [vy, vx[:, :1] * 0.5])).history)
    # The per-batch methods and the eager call, with a learning rate that moves the weights:
    # train_on_batch's second result comes after the first one's update.
    m = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(3, activation="softmax")])
    m.set_weights(weights)
    m.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
    first = m.train_on_batch(x[:20], y[:20])
    out["on_batch"] = {"train_1": [float(v) for v in first],
                       "train_2": [float(v) for v in m.train_on_batch(x[20:40], y[20:40], sample_weight=w[20:40])],
                       "test": [float(v) for v in m.test_on_batch(x, y, sample_weight=w)],
                       "predict_on_batch": [float(v) for v in np.asarray(m.predict_on_batch(x[:4])).ravel()],
                       "call": [float(v) for v in np.asarray(m(x[:4])).ravel()]}
    print("PARITY " + json.dumps(out))
""")


def compare(got, ref):
    """Every case's keys, list lengths and values (1e-4 relative, 1e-6 absolute)."""
    failures = []
    for case, want in ref.items():
        have = got.get(case, {})
        if sorted(have) != sorted(want):
            failures.append(f"{case}: keys nnfit {sorted(have)}, Keras {sorted(want)}")
            continue
        for key, values in want.items():
            mine = have[key]
            if isinstance(values, list) != isinstance(mine, list) or (isinstance(values, list)
                                                                       and len(values) != len(mine)):
                failures.append(f"{case}.{key}: nnfit {mine}, Keras {values}")
                continue
            for a, b in zip(mine if isinstance(mine, list) else [mine], values if isinstance(values, list) else [values]):
                if abs(a - b) > 1e-6 + 1e-4 * abs(b):
                    failures.append(f"{case}.{key}: nnfit {mine}, Keras {values}")
                    break
    return failures


def main():
    ref, got = parity_runs.run_both(SCRIPT, sys.argv, timeout=900)
    failures = compare(got, ref)
    for case, logs in ref.items():
        print(f"{case}: " + ", ".join(f"{k}={v}" for k, v in sorted(logs.items())))
    if failures:
        sys.exit("\n".join(failures))
    print(f"parity: ok ({len(ref)} cases)")


if __name__ == "__main__":
    main()
