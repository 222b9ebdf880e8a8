"""Keras 3.15's layer classes nnfit gained for issue 36 (the adaptive poolings, Conv3DTranspose
and its alias Convolution3DTranspose, GroupQueryAttention, Wrapper, Pipeline), run under real
Keras (the Keras venv) and under `from nnfit import keras` on the same weights, side by side:

- facts that must be equal: each model's summary rows and parameter counts, output shapes,
  the layer's class and config keys, the classes Keras's aliases name, which layers are
  Wrappers;
- numbers within each case's tolerance (relative to the largest value): predictions on the
  same weights, the weights after one SGD step (so the layer's gradients, and those flowing
  through a weightless layer to the Dense in front of it), a model of images of any size at
  two sizes, GroupQueryAttention on masked steps;
- files both ways: Keras's .keras file loaded by nnfit predicts as Keras does, and nnfit's
  .keras file, loaded by Keras (a third run), predicts as Keras does with the layer's config
  as Keras wrote it.

Keras runs its models eagerly here (run_eagerly, model(x)): the same numbers without a
tf.function trace per tiny model, which keeps the test at seconds.

usage: keras_layers_more_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import json
import os
import shutil
import sys
import tempfile
import textwrap

import parity_runs

# Shared by the three runs: the cases, each (name, input shape, layer factory, tolerance).
CASES = textwrap.dedent("""
    @keras.saving.register_keras_serializable(package="parity")
    class Residual(keras.layers.Wrapper):  # a Wrapper of one's own, traced in nnfit
        def call(self, x):
            return x + self.layer(x)

    def cases(layers):
        return [
            ("AdaptiveAveragePooling1D", (7, 3), lambda: layers.AdaptiveAveragePooling1D(3), 1e-5),
            ("AdaptiveMaxPooling1D", (9, 2), lambda: layers.AdaptiveMaxPooling1D(4), 1e-5),
            ("AdaptiveAveragePooling2D", (7, 5, 3), lambda: layers.AdaptiveAveragePooling2D((3, 2)), 1e-5),
            ("AdaptiveMaxPooling2D", (6, 5, 2), lambda: layers.AdaptiveMaxPooling2D(2), 1e-5),
            ("AdaptiveAveragePooling2D channels_first", (3, 7, 6),
             lambda: layers.AdaptiveAveragePooling2D((4, 5), data_format="channels_first"), 1e-5),
            ("AdaptiveAveragePooling3D", (5, 6, 4, 2), lambda: layers.AdaptiveAveragePooling3D((2, 3, 2)), 1e-5),
            ("AdaptiveMaxPooling3D channels_first", (2, 5, 4, 6),
             lambda: layers.AdaptiveMaxPooling3D(2, data_format="channels_first"), 1e-5),
            ("AdaptiveMaxPooling2D upsampling", (3, 2, 2), lambda: layers.AdaptiveMaxPooling2D((5, 3)), 1e-5),
            ("Conv3DTranspose", (3, 4, 3, 2), lambda: layers.Conv3DTranspose(2, 3, strides=2), 1e-5),
            ("Conv3DTranspose same relu", (3, 4, 2, 3),
             lambda: layers.Conv3DTranspose(3, (2, 3, 2), strides=(2, 1, 2), padding="same", activation="relu"), 1e-5),
            ("Conv3DTranspose output_padding", (3, 3, 2, 2),
             lambda: layers.Conv3DTranspose(2, 3, strides=(2, 2, 3), padding="same", output_padding=(1, 0, 2)), 1e-5),
            ("Conv3DTranspose dilated no bias", (3, 4, 3, 2),
             lambda: layers.Conv3DTranspose(2, 2, dilation_rate=2, use_bias=False), 1e-5),
            ("Convolution3DTranspose", (2, 3, 2, 3), lambda: layers.Convolution3DTranspose(2, (1, 2, 3), strides=(1, 2, 1)),
             1e-5),
            # Self-attention: layer(h, h), or layer(h, h, h) with the key given.
            ("GroupQueryAttention", (5, 8),
             lambda: layers.GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2), 1e-4),
            ("GroupQueryAttention gate no bias key", (5, 6),
             lambda: layers.GroupQueryAttention(3, 6, 3, use_bias=False, use_gate=True), 1e-4, "key"),
            ("GroupQueryAttention multi-query sliding window", (6, 4),
             lambda: layers.GroupQueryAttention(2, 4, 1, sliding_window=2), 1e-4),
            ("GroupQueryAttention as multi-head", (4, 6), lambda: layers.GroupQueryAttention(3, 2, 2), 1e-4),
            ("Wrapper subclass", (5,), lambda: Residual(layers.Dense(5, activation="tanh", name="inner")), 1e-5),
            # (Not Normalization(mean=..., variance=...): Keras 3.15 on TensorFlow itself fails to
            # predict with one inside a Pipeline, its constants left in a scratch graph.)
            ("Pipeline", (6, 5, 3), lambda: layers.Pipeline([
                layers.Rescaling(0.5, 1.0), layers.CenterCrop(4, 3), layers.Rescaling(2.0)]), 1e-5),
            ("Pipeline with weights", (4, 3), lambda: layers.Pipeline([layers.Normalization(), layers.Identity()]), 1e-5),
        ]
""")

SCRIPT = textwrap.dedent("""
    import json
    import os
    import numpy as np
    IMPORT_LINE
    from keras import layers
    CASES_CODE

    out = {}
    shared = SHARED_DIR
    is_keras = not keras.__name__.startswith("nnfit")

    def rows(model):
        lines = []
        model.summary(print_fn=lambda line, *a, **k: lines.append(line))
        return [l.rstrip() for l in "\\n".join(lines).splitlines()[1:] if l.strip()]

    def fill(model, seed):  # the same weights under both (a Normalization's variance positive, its count kept)
        rng = np.random.default_rng(seed)
        values = []
        for w, v in zip(model.weights, model.get_weights()):
            if "variance" in w.path:
                values.append(rng.uniform(0.5, 1.5, v.shape).astype(v.dtype))
            elif "count" in w.path:
                values.append(v)
            else:
                values.append((rng.standard_normal(v.shape) * 0.5).astype(v.dtype))
        model.set_weights(values)
        for layer in model.layers:  # Keras's Normalization reads its variables when finalized (as on load)
            for inner in layer.layers if type(layer).__name__ == "Pipeline" else []:
                if type(inner).__name__ == "Normalization" and hasattr(inner, "finalize_state"):
                    inner.finalize_state()

    def model_of(name, shape, factory, call):
        # Dense in front, so a weightless layer's backward pass feeds a weight's gradient.
        inp = keras.Input(shape=shape, name="x")
        h = layers.Dense(shape[-1], name="front")(inp)
        layer = factory()
        if "Attention" in name:  # self-attention
            o = layer(h, h, h) if call == "key" else layer(h, h)
        else:
            o = layer(h)
        y = layers.Dense(2, name="head")(layers.Flatten(name="flat")(o))
        return keras.Model(inp, y, name="m"), layer

    def diff(a, b):
        a, b = np.asarray(a, "float64"), np.asarray(b, "float64")
        if a.shape != b.shape:
            return f"shapes {list(a.shape)} and {list(b.shape)}"
        return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))

    # Keras runs eagerly here: each of these tiny models would otherwise cost a tf.function trace
    # per call (the numbers are the same; nnfit runs its planned step either way).
    EAGER = {"run_eagerly": True} if is_keras else {}

    def predict(model, x):
        return np.asarray(model(x)) if is_keras else model.predict(x, verbose=0)

    def verdict(d, tol):
        return f"within {tol:g}" if not isinstance(d, str) and d <= tol else d

    for index, (name, shape, factory, tol, *call) in enumerate(cases(layers)):
        key = "".join(c if c.isalnum() else "_" for c in name)
        model, layer = model_of(name, shape, factory, call[0] if call else None)
        fill(model, index)
        rng = np.random.default_rng(100 + index)
        x = rng.standard_normal((4,) + shape).astype("float32")
        y = rng.standard_normal((4, 2)).astype("float32")
        pred = predict(model, x)
        facts = {"rows": rows(model), "params": model.count_params(), "class": type(layer).__name__,
                 "output_shape": list(layer.output.shape), "config_keys": sorted(layer.get_config())}
        path = os.path.join(shared, key + ".keras")
        if is_keras:
            model.save(path)
        else:
            model.save(os.path.join(shared, key + "_nnfit.keras"))
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", **EAGER)
        model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
        trained = model.get_weights()
        if is_keras:
            np.savez(os.path.join(shared, key + ".npz"), x=x, pred=pred, *trained)
            facts.update(predict=f"within {tol:g}", step=f"within {tol * 10:g}", keras_file=f"within {tol:g}")
        else:
            ref = np.load(os.path.join(shared, key + ".npz"))
            facts["predict"] = verdict(diff(pred, ref["pred"]), tol)
            facts["step"] = verdict(max((diff(w, ref[f"arr_{i}"]) for i, w in enumerate(trained)),
                                        key=lambda d: float("inf") if isinstance(d, str) else d), tol * 10)
            loaded = keras.models.load_model(path)
            facts["keras_file"] = verdict(diff(predict(loaded, ref["x"]), ref["pred"]), tol)
        out[name] = facts

    # Images of any size: the adaptive pooling gives the head a fixed size. Keras on TensorFlow
    # refuses spatial sizes known only per batch here ("must be statically known"), so its
    # numbers come from one model per size on the same weights; nnfit's model takes both.
    def pooled(shape):
        inp = keras.Input(shape=shape)
        h = layers.Conv2D(4, 3, activation="relu")(inp)
        m = keras.Model(inp, layers.Dense(2)(layers.Flatten()(layers.AdaptiveAveragePooling2D((2, 3))(h))))
        fill(m, 50)
        return m
    rng = np.random.default_rng(51)
    xs = [rng.standard_normal((2, 9, 8, 3)).astype("float32"), rng.standard_normal((3, 6, 11, 3)).astype("float32")]
    preds = [predict(pooled(v.shape[1:]), v) for v in xs]
    out["any size"] = {"rows": rows(pooled((9, 8, 3))), "params": pooled((6, 11, 3)).count_params()}
    if is_keras:
        np.savez(os.path.join(shared, "anysize.npz"), *preds)
        out["any size"]["predict"] = out["any size"]["predict (None, None, 3)"] = "within 1e-05"
    else:
        ref = np.load(os.path.join(shared, "anysize.npz"))
        out["any size"]["predict"] = verdict(max(diff(p, ref[f"arr_{i}"]) for i, p in enumerate(preds)), 1e-5)
        anysize = pooled((None, None, 3))
        out["any size"]["predict (None, None, 3)"] = verdict(
            max(diff(anysize.predict(v, verbose=0), ref[f"arr_{i}"]) for i, v in enumerate(xs)), 1e-5)
    # GroupQueryAttention on masked steps (Embedding mask_zero): the query's and value's masks
    # combined as Keras combines them, then a masked average.
    ids = keras.Input(shape=(6,), dtype="int32")
    e = layers.Embedding(20, 8, mask_zero=True)(ids)
    a = layers.GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)(e, e)
    masked = keras.Model(ids, layers.Dense(2)(layers.GlobalAveragePooling1D()(a)))
    fill(masked, 70)
    rng = np.random.default_rng(71)
    xi = rng.integers(1, 20, (4, 6)).astype("int32")
    xi[0, 3:] = 0
    xi[2, 1:] = 0
    yi = rng.standard_normal((4, 2)).astype("float32")
    pm = predict(masked, xi)
    # The totals (Keras's table also shows the mask's NotEqual operation as a row, which nnfit's
    # model keeps inside the engine).
    out["GroupQueryAttention masked"] = {"totals": [r for r in rows(masked) if "params" in r],
                                         "params": masked.count_params()}
    masked.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", **EAGER)
    masked.fit(xi, yi, batch_size=4, epochs=1, verbose=0, shuffle=False)
    tm = masked.get_weights()
    if is_keras:
        np.savez(os.path.join(shared, "masked.npz"), pm, *tm)
        out["GroupQueryAttention masked"].update(predict="within 0.0001", step="within 0.001")
    else:
        ref = np.load(os.path.join(shared, "masked.npz"))
        out["GroupQueryAttention masked"]["predict"] = verdict(diff(pm, ref["arr_0"]), 1e-4)
        out["GroupQueryAttention masked"]["step"] = verdict(
            max(diff(w, ref[f"arr_{i + 1}"]) for i, w in enumerate(tm)), 1e-3)

    out["aliases"] = [layers.Convolution3DTranspose is layers.Conv3DTranspose, layers.GroupQueryAttention.__name__]
    out["wrappers"] = [isinstance(layers.TimeDistributed(layers.Dense(2)), layers.Wrapper),
                       isinstance(layers.Bidirectional(layers.LSTM(2)), layers.Wrapper),
                       issubclass(layers.TimeDistributed, layers.Wrapper), issubclass(Residual, layers.Wrapper)]
    print("PARITY " + json.dumps(out))
""")

# The third run, under Keras: nnfit's files load and predict as Keras's model, with the
# layer's config as Keras wrote it.
READ_BACK = textwrap.dedent("""
    import json
    import os
    import numpy as np
    IMPORT_LINE
    from keras import layers
    CASES_CODE

    shared = SHARED_DIR
    out = {}
    for name, shape, factory, tol, *_ in cases(layers):
        key = "".join(c if c.isalnum() else "_" for c in name)
        ref = np.load(os.path.join(shared, key + ".npz"))
        ours = keras.models.load_model(os.path.join(shared, key + "_nnfit.keras"))
        theirs = keras.models.load_model(os.path.join(shared, key + ".keras"))
        pred = np.asarray(ours(ref["x"]))
        d = float(np.abs(pred - ref["pred"]).max() / max(1.0, np.abs(ref["pred"]).max()))
        same = json.loads(json.dumps(ours.layers[2].get_config())) == json.loads(json.dumps(theirs.layers[2].get_config()))
        out[name] = {"nnfit_file": f"within {tol:g}" if d <= tol else d, "config": "as Keras's" if same else
                     {"nnfit": ours.layers[2].get_config(), "keras": theirs.layers[2].get_config()}}
    print("PARITY " + json.dumps(out))
""")


def main():
    shared = tempfile.mkdtemp(prefix="nnfit_layers_more_")
    try:
        def prepared(script):
            return script.replace("CASES_CODE", CASES).replace("SHARED_DIR", repr(shared))
        keras_out, nnfit_out = parity_runs.run_both(prepared(SCRIPT), sys.argv, timeout=600)
        keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
        back = parity_runs.run(sys.argv[1], prepared(READ_BACK), "import keras", keras_env, 600)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    failed = []
    for name in keras_out:
        want, got = keras_out[name], nnfit_out.get(name)
        bad = want != got
        brief = {k: v for k, v in want.items() if k not in ("rows", "config_keys")} if isinstance(want, dict) else want
        print(f"{'DIFF' if bad else 'ok  '} {name}: {json.dumps(want if bad else brief)}" +
              (f"\n     nnfit {json.dumps(got)}" if bad else ""))
        if bad:
            failed.append(name)
    for name, facts in back.items():
        bad = not (str(facts["nnfit_file"]).startswith("within") and facts["config"] == "as Keras's")
        print(f"{'DIFF' if bad else 'ok  '} {name}: nnfit's .keras in Keras {facts['nnfit_file']}, config {facts['config']}")
        if bad:
            failed.append(name + " (nnfit's file in Keras)")
    total = len(keras_out) + len(back)
    if failed:
        sys.exit(f"{len(failed)} of {total} differ from Keras: {failed}")
    print(f"all {total} agree with Keras")


if __name__ == "__main__":
    main()
