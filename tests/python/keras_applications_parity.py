"""keras.applications under real Keras (from PyPI, in the Keras venv) and under `from nnfit
import keras` (issue 36): for MobileNetV2, ResNet50, ResNet101, EfficientNetB0, VGG16,
DenseNet121 and Xception, built with Keras's arguments (include_top, pooling, classes,
classifier_activation, input_shape) at small input sizes, the parameter count and the
summary's layer table must be equal, and predictions on one random batch equal within 1e-4
of the largest output after nnfit loads the `.weights.h5` file Keras saved (passed as
`weights=`: the argument a user with Keras's files gives). Keras's model is seeded, and its
BatchNormalization and Normalization statistics are set to random values before saving, so
every weight of the file matters. Also: each family's preprocess_input on arrays and on
symbolic tensors inside a model, and the transfer-learning guide's pattern (a frozen
MobileNetV2 base from the file, trained on top: the base unchanged bit for bit; unfrozen and
recompiled with a low rate: the base changes), compared as facts between the two.
On demand: NNFIT_APPS_PARITY_MORE=1 runs the other architectures nnfit has (MobileNet,
ResNet50V2, VGG19, InceptionV3, ResNet152, DenseNet201, EfficientNetB3) in place of the
seven, and NNFIT_APPS_PARITY_FULL=1 runs them at Keras's defaults (include_top, 1000 classes,
224x224, or 299x299 for Xception and InceptionV3).

usage: keras_applications_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import os
import sys
import tempfile
import textwrap

import numpy as np

import parity_runs
from keras_script_parity import table_rows

SCRIPT = textwrap.dedent("""
    import json, os
    import numpy as np
    IMPORT_LINE
    from keras import layers

    NNFIT = keras.__name__.startswith("nnfit")
    folder = os.environ["NNFIT_APPS_PARITY_DIR"]
    apps = keras.applications
    CASES = [
        ("MobileNetV2", dict(input_shape=(32, 32, 3), classes=10)),
        ("ResNet50", dict(include_top=False, input_shape=(32, 32, 3), pooling="avg")),
        ("ResNet101", dict(include_top=False, input_shape=(32, 32, 3), pooling="max")),
        ("EfficientNetB0", dict(input_shape=(32, 32, 3), classes=10, classifier_activation=None)),
        ("VGG16", dict(include_top=False, input_shape=(32, 32, 3))),
        ("DenseNet121", dict(input_shape=(32, 32, 3), classes=10)),
        ("Xception", dict(include_top=False, input_shape=(71, 71, 3), pooling="avg")),
    ]
    MORE = [  # the other architectures nnfit has, on demand
        ("MobileNet", dict(input_shape=(32, 32, 3), classes=10)),
        ("ResNet50V2", dict(include_top=False, input_shape=(32, 32, 3), pooling="avg")),
        ("VGG19", dict(input_shape=(32, 32, 3), classes=10, classifier_activation=None)),
        ("InceptionV3", dict(include_top=False, input_shape=(75, 75, 3), pooling="max")),
        ("ResNet152", dict(include_top=False, input_shape=(32, 32, 3))),
        ("DenseNet201", dict(include_top=False, input_shape=(32, 32, 3), pooling="avg")),
        ("EfficientNetB3", dict(input_shape=(32, 32, 3), classes=10)),
    ]
    if os.environ.get("NNFIT_APPS_PARITY_MORE"):
        CASES = MORE
    if os.environ.get("NNFIT_APPS_PARITY_FULL"):  # on demand: Keras's defaults, ImageNet's sizes
        CASES = [(name, dict(input_shape=(299, 299, 3) if name in ("Xception", "InceptionV3") else (224, 224, 3)))
                 for name, _ in CASES]

    def summary(model):
        lines = []
        model.summary(print_fn=lambda line, *a, **k: lines.append(line))
        return lines

    def randomize_statistics(model, rng):
        # Keras's fresh BatchNormalization is the identity in inference; random statistics
        # make every one of its four weights count.
        for layer in model.layers:
            kind = type(layer).__name__
            if kind == "BatchNormalization":  # [gamma] [beta] mean variance, as center and scale say
                config, weights = layer.get_config(), layer.get_weights()
                draws = (["gamma"] if config["scale"] else []) + (["beta"] if config["center"] else []) + ["mean", "var"]
                layer.set_weights([rng.uniform(0.5, 1.5, w.shape).astype("float32") if d in ("gamma", "var") else
                                   rng.normal(0, 0.1, w.shape).astype("float32") for d, w in zip(draws, weights)])
            elif kind == "Normalization":
                mean, var, count = layer.get_weights()
                layer.set_weights([rng.uniform(0.3, 0.6, mean.shape).astype("float32"),
                                   rng.uniform(0.05, 0.1, var.shape).astype("float32"), count])
                layer.finalize_state()  # Keras computes with set statistics from then on (as after a load)

    out = {}
    for i, (name, kwargs) in enumerate(CASES):
        path = os.path.join(folder, name + ".weights.h5")
        if NNFIT:
            model = getattr(apps, name)(weights=path, **kwargs)
        else:
            keras.utils.set_random_seed(i)
            model = getattr(apps, name)(weights=None, **kwargs)
            randomize_statistics(model, np.random.default_rng(i))
            model.save_weights(path)
        x = np.random.default_rng(100 + i).uniform(-1, 1, (2,) + kwargs["input_shape"]).astype("float32")
        y = np.asarray(model(x, training=False))  # eager in Keras: no tf.function to trace
        out[name] = {"params": int(model.count_params()), "summary": summary(model), "name": model.name,
                     "layers": len(model.layers), "shape": list(y.shape), "predictions": y.ravel().tolist()}

    # preprocess_input: on arrays, and on symbolic tensors inside a model.
    image = np.random.default_rng(7).uniform(0, 255, (2, 8, 8, 3)).astype("float32")
    pre = {}
    for family in ("mobilenet", "mobilenet_v2", "resnet", "resnet50", "resnet_v2", "efficientnet", "vgg16", "vgg19",
                   "densenet", "inception_v3", "xception"):
        module = getattr(apps, family)
        pre[family] = {"array": module.preprocess_input(image.copy()).ravel().tolist()}
        if family != "efficientnet":  # the identity: a model of no layers
            inp = keras.Input((8, 8, 3))
            symbolic = keras.Model(inp, module.preprocess_input(inp)).predict(image, verbose=0)
            pre[family]["symbolic"] = np.asarray(symbolic).ravel().tolist()
    out["preprocess_input"] = pre

    # The transfer-learning guide: a frozen base from the file, a new head, fit; unfreeze,
    # recompile with a low rate, fit again.
    path = os.path.join(folder, "transfer_base.weights.h5")
    if NNFIT:
        base = apps.MobileNetV2(include_top=False, weights=path, input_shape=(96, 96, 3))
    else:
        keras.utils.set_random_seed(11)
        base = apps.MobileNetV2(include_top=False, weights=None, input_shape=(96, 96, 3))
        base.save_weights(path)
    base.trainable = False
    inputs = keras.Input((96, 96, 3))
    x = base(inputs, training=False)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.2)(x)
    outputs = layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    rng = np.random.default_rng(3)
    images = rng.uniform(-1, 1, (16, 96, 96, 3)).astype("float32")
    labels = (images.mean(axis=(1, 2, 3)) > 0).astype("float32")
    def base_weights():  # the outer model's copy: nnfit's nested model object keeps its own (docs/python.md)
        return [np.array(w) for w in model.get_weights()[:len(base.weights)]]
    start = base_weights()
    model.compile(optimizer=keras.optimizers.Adam(), loss=keras.losses.BinaryCrossentropy(from_logits=True))
    counts_frozen = [len(model.trainable_weights), len(model.non_trainable_weights)]
    model.fit(images, labels, batch_size=8, epochs=1, verbose=0)
    frozen = base_weights()
    base.trainable = True
    model.compile(optimizer=keras.optimizers.Adam(1e-5), loss=keras.losses.BinaryCrossentropy(from_logits=True))
    counts_unfrozen = [len(model.trainable_weights), len(model.non_trainable_weights)]
    model.fit(images, labels, batch_size=8, epochs=1, verbose=0)
    tuned = base_weights()
    out["transfer"] = {
        "base_weights": len(start),
        "counts_frozen": counts_frozen, "counts_unfrozen": counts_unfrozen,
        "frozen_unchanged_bit_for_bit": all(np.array_equal(a, b) for a, b in zip(start, frozen)),
        "changed_after_unfreezing": sum(not np.array_equal(a, b) for a, b in zip(frozen, tuned)) > 0,
    }
    print("PARITY " + json.dumps(out))
""")

TOLERANCE = 1e-4  # of the largest output's magnitude


def logical_rows(lines):
    """The summary's rows as (name (type), output shape, params, connections), whatever the
    wrapping: Keras's table (rich) wraps a long cell onto continuation rows, whose params
    cell is empty, and joins a layer's connections with ", "; nnfit's wraps the same way at
    Keras's widths without a terminal. A cell cut short ends with an ellipsis."""
    rows = []
    for cells in table_rows(lines):
        if len(cells) < 3 or cells[0] in ("Total params", "Trainable params", "Non-trainable params"):
            continue
        cells = list(cells) + [""] * (4 - len(cells))
        if cells[2] == "" and rows:
            last = rows[-1]
            for k in (0, 1):
                if cells[k]:
                    last[k] = (last[k] + " " + cells[k]).strip()
            last[3] += " " + cells[3]
        else:
            rows.append(list(cells))
    return [(r[0], r[1], r[2], tuple(c.rstrip(",") for c in r[3].split())) for r in rows]


def same_cell(got, ref):
    return got == ref or (ref.endswith("\u2026") and got.startswith(ref[:-1]))


def same_row(got, ref):
    return (same_cell(got[0], ref[0]) and same_cell(got[1], ref[1]) and got[2] == ref[2] and
            len(got[3]) == len(ref[3]) and all(same_cell(g, r) for g, r in zip(got[3], ref[3])))


def totals(lines):
    return [r for r in table_rows(lines) if r[0] in ("Total params", "Trainable params", "Non-trainable params")]


def relative_difference(got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))


def compare(keras_out, nnfit_out):
    failures = []
    for name in [k for k in keras_out if k not in ("preprocess_input", "transfer")]:
        ref, got = keras_out[name], nnfit_out[name]
        for key in ("params", "name", "layers", "shape"):
            if got[key] != ref[key]:
                failures.append(f"{name}: {key} nnfit {got[key]}, Keras {ref[key]}")
        rows_ref, rows_got = logical_rows(ref["summary"]), logical_rows(got["summary"])
        diff = [(g, r) for g, r in zip(rows_got, rows_ref) if not same_row(g, r)][:3]
        if len(rows_got) != len(rows_ref) or diff or totals(got["summary"]) != totals(ref["summary"]):
            failures.append(f"{name}: summary tables differ ({len(rows_got)} rows, Keras {len(rows_ref)}); "
                            f"totals {totals(got['summary'])}, Keras {totals(ref['summary'])}; "
                            f"first differences (nnfit, Keras): {diff}")
        if ("Connected to" in "".join(got["summary"])) != ("Connected to" in "".join(ref["summary"])):
            failures.append(f"{name}: the summary's Connected to column: nnfit and Keras differ")
        rel = relative_difference(got["predictions"], ref["predictions"]) if got["shape"] == ref["shape"] else 1.0
        if not rel <= TOLERANCE:
            failures.append(f"{name}: predictions differ by {rel:.2e} of the largest output (tolerance {TOLERANCE})")
        print(f"{name:15s} params {got['params']:>11,} (Keras {ref['params']:,}); summary rows {len(rows_got)}; "
              f"output {tuple(got['shape'])}; max difference {rel:.1e} of the largest output")
    for family, ref in keras_out["preprocess_input"].items():
        got = nnfit_out["preprocess_input"][family]
        for kind in ref:
            rel = relative_difference(got[kind], ref[kind])
            if not rel <= 1e-6:
                failures.append(f"{family}.preprocess_input on {kind}s differs by {rel:.2e}")
    print(f"preprocess_input: {len(keras_out['preprocess_input'])} families, arrays and symbolic tensors")
    if nnfit_out["transfer"] != keras_out["transfer"]:
        failures.append(f"transfer learning: nnfit {nnfit_out['transfer']}, Keras {keras_out['transfer']}")
    if not keras_out["transfer"]["frozen_unchanged_bit_for_bit"] or not keras_out["transfer"]["changed_after_unfreezing"]:
        failures.append(f"transfer learning under Keras did not behave as the guide says: {keras_out['transfer']}")
    print(f"transfer learning: {nnfit_out['transfer']}")
    return failures


def main():
    with tempfile.TemporaryDirectory(prefix="nnfit_apps_parity_") as folder:
        os.environ["NNFIT_APPS_PARITY_DIR"] = folder
        os.environ["COLUMNS"] = "200"  # Keras's summary at its full width (it narrows to the terminal's)
        keras_out, nnfit_out = parity_runs.run_both(SCRIPT, sys.argv, timeout=900)
    failures = compare(keras_out, nnfit_out)
    if failures:
        sys.exit("\n".join(failures))
    print("parity: ok")


if __name__ == "__main__":
    main()
