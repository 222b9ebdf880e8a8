"""Keras 3.15's optimizers that nnfit gained late (Lamb, Adafactor, ScheduleFreeAdamW) and the
SwapEMAWeights callback (fit's validation, evaluate and predict on the EMA weights,
swap_on_epoch), run under real Keras (from PyPI, in the Keras venv) and under `from nnfit import keras` on
the same data and initial weights: the weights after a few training steps agree to 1e-5
(relative to 1 + |w|). A .keras file saved mid-training resumes in the other framework:
Keras's file fitted on by nnfit, and nnfit's file fitted on by Keras (a third run), each
equal to the run that kept training without the file.

usage: keras_optimizers_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import os
import sys
import textwrap

import parity_runs

COMMON = textwrap.dedent("""
    import json
    import os
    import tempfile
    import numpy as np
    IMPORT_LINE
    from keras import layers

    is_keras = not keras.__name__.startswith("nnfit")
    shared = os.path.join(tempfile.gettempdir(), f"nnfit_optimizers_parity_{os.getuid()}")
    os.makedirs(shared, exist_ok=True)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6)).astype("float32")
    y = rng.normal(size=(64, 3)).astype("float32")
    w_rng = np.random.default_rng(1)
    w0 = [w_rng.normal(scale=0.5, size=s).astype("float32") for s in [(6, 8), (8,), (8, 3), (3,)]]

    def model(weights=w0):
        m = keras.Sequential([keras.Input((6,)), layers.Dense(8, activation="tanh"), layers.Dense(3)])
        m.set_weights(weights)
        return m

    def fit(m, epochs=1, **kw):
        m.fit(x, y, batch_size=16, epochs=epochs, shuffle=False, verbose=0, **kw)  # 4 steps an epoch

    def diff(ws, ref):
        return max(float(np.max(np.abs(w - r) / (1 + np.abs(r)))) for w, r in zip(ws, ref))

    def agree(key, ws):
        # Keras's run leaves its weights for nnfit's to compare with.
        path = os.path.join(shared, key + ".npz")
        if is_keras:
            np.savez(path, *ws)
            return "within 1e-5"
        ref = np.load(path)
        d = diff(ws, [ref[f"arr_{i}"] for i in range(len(ws))])
        return "within 1e-5" if d <= 1e-5 else d
""")

SCRIPT = COMMON + textwrap.dedent("""
    out = {}
    zero_bias = [w0[0], np.zeros(8, "float32"), w0[2], np.zeros(3, "float32")]
    CASES = [
        ("Lamb", lambda o: o.Lamb(0.01), w0),
        ("Lamb betas", lambda o: o.Lamb(0.02, beta_1=0.8, beta_2=0.95, epsilon=1e-5), w0),
        # Zero biases: the trust ratio's |w| = 0 branch (ratio 1) at the first step.
        ("Lamb zero biases", lambda o: o.Lamb(0.01), zero_bias),
        ("Lamb weight_decay", lambda o: o.Lamb(0.01, weight_decay=0.1), w0),
        ("Lamb global_clipnorm", lambda o: o.Lamb(0.01, global_clipnorm=0.3), w0),
        ("Lamb use_ema", lambda o: o.Lamb(0.01, use_ema=True, ema_momentum=0.9), w0),
        ("Lamb schedule", lambda o: o.Lamb(o.schedules.ExponentialDecay(0.05, 3, 0.5)), w0),
        # Adafactor: the kernels factored (r, c), the biases not (Keras's scalar placeholders).
        ("Adafactor", lambda o: o.Adafactor(0.05), w0),
        ("Adafactor args", lambda o: o.Adafactor(0.1, beta_2_decay=-0.5, epsilon_1=1e-20, epsilon_2=1e-2,
                                                 clip_threshold=0.5, relative_step=False), w0),
        ("Adafactor zero biases", lambda o: o.Adafactor(0.05), zero_bias),
        ("Adafactor weight_decay clipnorm", lambda o: o.Adafactor(0.05, weight_decay=0.1, clipnorm=0.5), w0),
        ("Adafactor use_ema", lambda o: o.Adafactor(0.05, use_ema=True, ema_momentum=0.9), w0),
        ("Adafactor schedule", lambda o: o.Adafactor(o.schedules.CosineDecay(0.2, 8)), w0),
        # ScheduleFreeAdamW: the momentum starts as the variable at the first step.
        ("ScheduleFreeAdamW", lambda o: o.ScheduleFreeAdamW(0.01), w0),
        ("ScheduleFreeAdamW warmup weight_decay", lambda o: o.ScheduleFreeAdamW(0.02, beta_1=0.8, beta_2=0.95,
                                                                                epsilon=1e-6, warmup_steps=3,
                                                                                weight_decay=0.1), w0),
        ("ScheduleFreeAdamW zero biases use_ema", lambda o: o.ScheduleFreeAdamW(0.01, use_ema=True), zero_bias),
    ]
    for name, make, weights in CASES:
        m = model(weights)
        opt = make(keras.optimizers)
        m.compile(optimizer=opt, loss="mse")
        fit(m, epochs=2)
        out[name] = agree(name.replace(" ", "_"), m.get_weights())
        # A constant rate as a float32 (Keras's get_config reads its float32 variable; nnfit's
        # gives the number it was given, for every optimizer: not Lamb's to settle here).
        config = {k: v for k, v in sorted(opt.get_config().items()) if k != "name"}
        if isinstance(config["learning_rate"], float):
            config["learning_rate"] = float(np.float32(config["learning_rate"]))
        out[name + " config"] = config
        out[name + " iterations"] = int(opt.iterations)

    # Adafactor on a rank-3 kernel (Conv1D's: two 4 × 3 matrices factored apart).
    conv = keras.Sequential([keras.Input((5, 4)), layers.Conv1D(3, 2), layers.Flatten(), layers.Dense(3)])
    c_rng = np.random.default_rng(2)
    conv.set_weights([c_rng.normal(scale=0.5, size=w.shape).astype("float32") for w in conv.get_weights()])
    conv.compile(optimizer=keras.optimizers.Adafactor(0.05), loss="mse")
    conv.fit(x[:, :5, None].repeat(4, axis=2) * np.arange(1, 5, dtype="float32"), y, batch_size=16, epochs=2,
             shuffle=False, verbose=0)
    out["Adafactor Conv1D"] = agree("adafactor_conv", conv.get_weights())

    # SwapEMAWeights: validation (and evaluate, predict) on the averages, swapped back after.
    def history_agrees(key, h):
        vals = np.array([h.history[k] for k in sorted(h.history)], dtype="float64")
        return agree(key, [vals])

    m = model()
    m.compile(optimizer=keras.optimizers.Adam(0.02, use_ema=True, ema_momentum=0.8), loss="mse")
    h = m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_data=(x[:32], y[:32]),
              callbacks=[keras.callbacks.SwapEMAWeights()])
    out["SwapEMAWeights history"] = history_agrees("swap_history", h)
    out["SwapEMAWeights history keys"] = sorted(h.history)
    out["SwapEMAWeights weights"] = agree("swap_weights", m.get_weights())
    swap = keras.callbacks.SwapEMAWeights()
    fit(m)
    out["SwapEMAWeights evaluate"] = agree("swap_evaluate", [np.array(m.evaluate(x, y, verbose=0, callbacks=[swap]))])
    out["SwapEMAWeights after evaluate"] = agree("swap_after_evaluate", m.get_weights())
    out["SwapEMAWeights predict"] = agree("swap_predict", [m.predict(x, verbose=0, callbacks=[swap])])
    # Keras 3.15's on_predict_end does not swap back: the model keeps the averages.
    out["SwapEMAWeights after predict"] = agree("swap_after_predict", m.get_weights())

    m = model()
    m.compile(optimizer=keras.optimizers.Lamb(0.01, use_ema=True, ema_momentum=0.7), loss="mse")
    h = m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0, validation_data=(x[:32], y[:32]),
              callbacks=[keras.callbacks.SwapEMAWeights(swap_on_epoch=True)])
    out["SwapEMAWeights swap_on_epoch history"] = history_agrees("swap_epoch_history", h)
    out["SwapEMAWeights swap_on_epoch weights"] = agree("swap_epoch_weights", m.get_weights())

    m = model()
    m.compile(optimizer="adam", loss="mse")
    try:
        m.fit(x, y, epochs=1, verbose=0, validation_data=(x, y), callbacks=[keras.callbacks.SwapEMAWeights()])
        out["SwapEMAWeights without use_ema"] = "no error"
    except ValueError as e:
        out["SwapEMAWeights without use_ema"] = str(e).split(". Received")[0]

    # A .keras file saved mid-training resumes: 4 steps, save, 4 more; the file's model
    # fitted 4 more steps in the other framework must equal the run that kept going.
    for kind, make in (("lamb", lambda o: o.Lamb(0.01)), ("adafactor", lambda o: o.Adafactor(0.05)),
                       ("schedule_free", lambda o: o.ScheduleFreeAdamW(0.01, warmup_steps=2))):
        m = model()
        m.compile(optimizer=make(keras.optimizers), loss="mse")
        fit(m)
        tag = "keras" if is_keras else "nnfit"
        m.save(os.path.join(shared, f"{kind}_{tag}.keras"))
        fit(m)
        np.savez(os.path.join(shared, f"{kind}_{tag}_continued.npz"), *m.get_weights())
        if not is_keras:
            loaded = keras.models.load_model(os.path.join(shared, f"{kind}_keras.keras"))
            out[f"{kind}: Keras's file iterations"] = int(loaded.optimizer.iterations)
            fit(loaded)
            ref = np.load(os.path.join(shared, f"{kind}_keras_continued.npz"))
            d = diff(loaded.get_weights(), [ref[f"arr_{i}"] for i in range(4)])
            out[f"{kind}: Keras's .keras resumed"] = "within 1e-5" if d <= 1e-5 else d
        else:
            out[f"{kind}: Keras's file iterations"] = 4
            out[f"{kind}: Keras's .keras resumed"] = "within 1e-5"
    print("PARITY " + json.dumps(out))
""")

# Keras fits on nnfit's file (written by the nnfit run above).
RESUME = COMMON + textwrap.dedent("""
    out = {}
    for kind in ("lamb", "adafactor", "schedule_free"):
        loaded = keras.models.load_model(os.path.join(shared, f"{kind}_nnfit.keras"))
        fit(loaded)
        ref = np.load(os.path.join(shared, f"{kind}_nnfit_continued.npz"))
        d = diff(loaded.get_weights(), [ref[f"arr_{i}"] for i in range(4)])
        out[f"{kind}: nnfit's .keras resumed in Keras"] = "within 1e-5" if d <= 1e-5 else d
        out[f"{kind}: nnfit's file in Keras"] = [type(loaded.optimizer).__name__, int(loaded.optimizer.iterations)]
    print("PARITY " + json.dumps(out))
""")


def main():
    keras_out, nnfit_out = parity_runs.run_both(SCRIPT, sys.argv, timeout=300)
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    resumed = parity_runs.run(sys.argv[1], RESUME, "import keras", keras_env, 300)
    keras_out.update(resumed)
    for kind, cls in (("lamb", "Lamb"), ("adafactor", "Adafactor"), ("schedule_free", "ScheduleFreeAdamW")):
        nnfit_out.update({f"{kind}: nnfit's .keras resumed in Keras": "within 1e-5", f"{kind}: nnfit's file in Keras": [cls, 8]})
    failed = [k for k in keras_out if keras_out[k] != nnfit_out.get(k)]
    for k in keras_out:
        print(f"{'ok  ' if k not in failed else 'DIFF'} {k}: keras {keras_out[k]}" +
              ("" if k not in failed else f"\n     nnfit {nnfit_out.get(k)}"))
    if failed:
        sys.exit(f"{len(failed)} of {len(keras_out)} differ from Keras: {failed}")
    print(f"all {len(keras_out)} agree with Keras")


if __name__ == "__main__":
    main()
