"""Keras 3's colour augmentation layers (RandomHue, RandomSaturation, RandomColorJitter,
RandomGaussianBlur) under real Keras (the interop venv) and under nnfit.keras. Their draws
are each framework's own, so values are compared where a draw is fixed by its range:
RandomSaturation and RandomGaussianBlur with ranges of one value equal Keras's outputs
(rtol 1e-4), RandomColorJitter with brightness and saturation of one value likewise, and
each image of RandomHue (factor of one value, a random sign) equals Keras's transform with
+factor/2 or -factor/2. Also: inference is the identity, the layers' configs in a saved
model equal Keras's, random factors stay in their ranges (a per-image hue shift recovered
from the output), and a model holding the four saved by one framework predicts the same in
the other.

usage: keras_color_augmentation_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import parity_runs

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    IMPORT_LINE
    NNFIT = keras.__name__.startswith("nnfit")
    L = keras.layers
    rng = np.random.default_rng(7)
    x255 = rng.uniform(0, 255, size=(6, 9, 10, 3)).astype("float32")
    x01 = (x255 / 255).astype("float32")

    def run(layer, x, training=True):
        if NNFIT:
            i = keras.Input(x.shape[1:])
            return np.asarray(keras.Model(i, layer(i))(x, training=training), "float64")
        return np.asarray(layer(x, training=training), "float64")

    out = {}
    cases = {
        "saturation": (lambda: L.RandomSaturation((0.8, 0.8)), x255),
        "saturation_unit_range": (lambda: L.RandomSaturation((0.3, 0.3), value_range=(1, 0)), x01),
        "gaussian_blur": (lambda: L.RandomGaussianBlur((1.0, 1.0), kernel_size=5, sigma=(0.7, 0.7)), x255),
        "gaussian_blur_3x5": (lambda: L.RandomGaussianBlur((1.0, 1.0), kernel_size=(3, 5), sigma=(0.9, 0.9), value_range=(0, 1)), x01),
        "color_jitter": (lambda: L.RandomColorJitter(value_range=(0, 1), brightness_factor=(0.1, 0.1), saturation_factor=(0.6, 0.6)), x01),
    }
    for name, (make, x) in cases.items():
        out[name] = run(make(), x).tolist()
    # Inference: the identity.
    out["inference"] = max(float(np.max(np.abs(run(make(), x, training=False) - x))) for make, x in cases.values())
    # RandomHue of a fixed size: each image shifted by +size/2 or -size/2. nnfit's draws over
    # four calls (24 images), so "not every image took the same sign" fails by chance with
    # probability 2^-23 (over one call's six images it was 1 in 32).
    if NNFIT:
        out["hue"] = np.concatenate([run(L.RandomHue((0.4, 0.4)), x255) for _ in range(4)]).tolist()
    else:
        layer = L.RandomHue((0.4, 0.4))
        out["hue_plus"] = np.asarray(layer.transform_images(x255, {"factor": np.full(6, 0.2, "float32")}), "float64").tolist()
        out["hue_minus"] = np.asarray(layer.transform_images(x255, {"factor": np.full(6, -0.2, "float32")}), "float64").tolist()
    # Random ranges: the mean hue shift of each image, from the outputs' hue channel.
    hsv_in = np.asarray(keras.ops.image.rgb_to_hsv(x01))
    shifts = []
    for seed in range(4):
        y = run(L.RandomHue(0.3, value_range=(0, 1), seed=seed), x01).astype("float32")
        d = (np.asarray(keras.ops.image.rgb_to_hsv(y))[..., 0] - hsv_in[..., 0] + 0.5) % 1.0 - 0.5
        shifts += np.median(d.reshape(6, -1), axis=1).tolist()
    out["hue_shifts"] = shifts
    # Configs in a saved model's file.
    i = keras.Input((9, 10, 3))
    layers = [L.RandomHue(0.3, seed=1), L.RandomSaturation([0.2, 0.7], value_range=(0, 1)),
              L.RandomColorJitter(value_range=(0, 1), brightness_factor=0.2, contrast_factor=(0.1, 0.3),
                                  saturation_factor=0.5, hue_factor=(0.1, 0.2), seed=4),
              L.RandomGaussianBlur(0.5, kernel_size=(3, 5), sigma=(0.5, 2.0), value_range=(0, 1))]
    h = i
    for layer in layers:
        h = layer(h)
    m = keras.Model(i, h)
    out["configs"] = [{k: v for k, v in l["config"].items() if k not in ("name", "dtype")}
                      for l in m.get_config()["layers"][1:]]
    print("PARITY " + json.dumps(out))
""")

SAVE = textwrap.dedent("""
    import sys
    import numpy as np
    IMPORT_LINE
    L = keras.layers
    x = np.random.default_rng(1).uniform(size=(8, 6, 6, 3)).astype("float32")
    i = keras.Input((6, 6, 3))
    h = L.RandomHue(0.2, value_range=(0, 1))(i)
    h = L.RandomSaturation(0.3, value_range=(0, 1))(h)
    h = L.RandomColorJitter(value_range=(0, 1), brightness_factor=0.1, hue_factor=0.1)(h)
    h = L.RandomGaussianBlur(0.5, value_range=(0, 1))(h)
    m = keras.Model(i, L.Dense(2)(L.Flatten()(h)))
    m.compile(optimizer="adam", loss="mse")
    m.fit(x, np.zeros((8, 2), "float32"), epochs=1, verbose=0)
    m.save(sys.argv[1] + "/model.keras")
    np.save(sys.argv[1] + "/x.npy", x)
    np.save(sys.argv[1] + "/saved.npy", m.predict(x, verbose=0))
""")
LOAD = textwrap.dedent("""
    import sys
    import numpy as np
    IMPORT_LINE
    m = keras.models.load_model(sys.argv[1] + "/model.keras")
    np.save(sys.argv[1] + "/loaded.npy", m.predict(np.load(sys.argv[1] + "/x.npy"), verbose=0))
""")


def close(a, b, rtol, what):
    a, b = np.asarray(a, "float64"), np.asarray(b, "float64")
    if a.shape != b.shape:
        return f"{what}: shape {a.shape} vs Keras's {b.shape}"
    atol = 1e-5 * max(1.0, float(np.max(np.abs(b))))
    bad = np.abs(a - b) > atol + rtol * np.abs(b)
    return f"{what}: {int(bad.sum())} of {a.size} differ (worst {np.max(np.abs(a - b))})" if bad.any() else None


def both_ways(argv):
    nnfit_python = argv[2] if len(argv) > 2 else sys.executable
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    sides = {"keras": (argv[1], "import keras", keras_env), "nnfit": (nnfit_python, "from nnfit import keras", dict(os.environ))}
    problems = []
    for saver, loader in (("nnfit", "keras"), ("keras", "nnfit")):
        with tempfile.TemporaryDirectory() as d:
            for who, code in ((saver, SAVE), (loader, LOAD)):
                python, line, env = sides[who]
                r = subprocess.run([python, "-c", code.replace("IMPORT_LINE", line), d], capture_output=True, text=True,
                                   env=env, timeout=600)
                if r.returncode != 0:
                    problems.append(f"saved by {saver}, loaded by {loader}: {who} failed:\n{r.stderr[-1500:]}")
                    break
            else:
                p = close(np.load(d + "/loaded.npy"), np.load(d + "/saved.npy"), 1e-5, f"saved by {saver}, loaded by {loader}")
                if p:
                    problems.append(p)
    return problems


def main(argv):
    k, n = parity_runs.run_both(SCRIPT, argv, timeout=900)
    failures = []
    for name in ("saturation", "saturation_unit_range", "gaussian_blur", "gaussian_blur_3x5", "color_jitter"):
        failures.append(close(n[name], k[name], 1e-4, name))
    hue, plus, minus = (np.asarray(v) for v in (n["hue"], k["hue_plus"], k["hue_minus"]))
    images = plus.shape[0]  # nnfit's hue holds several calls' outputs of the same images
    for b in range(hue.shape[0]):
        if close(hue[b], plus[b % images], 1e-4, "") and close(hue[b], minus[b % images], 1e-4, ""):
            failures.append(f"hue: image {b} is neither Keras's +0.2 nor its -0.2 shift")
    signs = [close(hue[b], plus[b % images], 1e-4, "") is None for b in range(hue.shape[0])]
    if all(signs) or not any(signs):
        failures.append(f"hue: every image took the same sign ({signs}); the sign is a fair draw per image")
    for who, res in (("nnfit", n), ("keras", k)):
        if res["inference"] != 0.0:
            failures.append(f"{who}: inference is not the identity (max change {res['inference']})")
        shifts = np.abs(res["hue_shifts"])
        if shifts.max() > 0.15 + 1e-3 or len(set(np.round(res["hue_shifts"], 4))) < len(shifts) // 2:
            failures.append(f"{who}: RandomHue(0.3) shifts {np.round(res['hue_shifts'], 3).tolist()} are not draws in [-0.15, 0.15]")
    def numbers_as_floats(v):  # Keras writes value_range (0, 255) as ints, nnfit as floats: the same numbers
        if isinstance(v, dict):
            return {key: numbers_as_floats(x) for key, x in v.items()}
        if isinstance(v, list):
            return [numbers_as_floats(x) for x in v]
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    if json.dumps(numbers_as_floats(n["configs"]), sort_keys=True) != json.dumps(numbers_as_floats(k["configs"]), sort_keys=True):
        failures.append(f"configs: {n['configs']} vs Keras's {k['configs']}")
    failures += both_ways(argv)
    failures = [f for f in failures if f]
    for f in failures:
        print("FAIL", f)
    total = 5 + 3 + 2 + 1 + 2
    print(f"colour augmentation parity: {total - len(failures)} of {total} checks agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
