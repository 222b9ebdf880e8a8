"""Keras 3.15's image augmentation layers (issue 36: RandomBrightness, RandomGrayscale,
RandomInvert, Solarization, RandomPosterization, AutoContrast, RandomErasing,
RandomColorDegeneration, RandomSharpness, MaxNumBoundingBoxes, RandomShear, MixUp, CutMix,
RandomCrop, Equalization), run under real Keras and under `from nnfit import keras`.
Random draws cannot be equal, so what is compared is what can be: outputs at inference
(the identity, or AutoContrast's); training outputs where the draw's range is one value
(brightness (0.3, 0.3), bits fixed, ...) or that are not random (Equalization, RandomCrop's
fixed window), against the numbers Keras computed on the same input; statistics of random outputs checked against Keras's
ranges (each side answers the same yes/no questions); value_range handled as Keras's;
the configs a model of every layer gives, and a .keras file Keras wrote read by nnfit
(its predictions and the configs nnfit writes back).

usage: keras_augmentation_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import os
import shutil
import sys
import tempfile
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json, os, zipfile
    import numpy as np
    IMPORT_LINE
    from keras import layers

    out = {}
    shared = os.environ["NNFIT_AUGMENTATION_PARITY_DIR"]
    is_keras = not keras.__name__.startswith("nnfit")
    rng = np.random.default_rng(0)
    x255 = rng.uniform(0, 255, size=(6, 8, 8, 3)).astype("float32")
    x255[0, :, :, 1] = 7.0  # a flat channel: AutoContrast keeps it
    x01 = (x255 / 255.0).astype("float32")
    ints = np.floor(x255).astype("float32")
    refs = {}

    def strip(c):
        c = dict(c)
        c.pop("dtype", None)
        for k in ("x_factor", "y_factor"):  # RandomShear's: Keras writes f as (-f, f), nnfit as given
            if isinstance(c.get(k), (int, float)):
                c[k] = [-abs(c[k]), abs(c[k])]
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in c.items()}

    def written(path):
        cfg = json.loads(zipfile.ZipFile(path).read("config.json"))
        return [[l["class_name"], strip(l["config"])] for l in cfg["config"]["layers"] if l["class_name"] != "InputLayer"]

    def run(layer, x, training, shape=(8, 8, 3)):
        if is_keras and type(layer).__name__ == "Equalization":
            # Keras 3.15's cannot be in a model (its output spec is its input: "part of a
            # cycle"); called on the arrays it computes what nnfit's model does.
            return np.asarray(layer(x, training=training))
        model = keras.Sequential([keras.Input(shape), layer])
        return np.asarray(model(x, training=training))

    def compare(key, y, tol):
        # Keras's numbers go to the shared file; nnfit's are checked against them.
        if is_keras:
            refs[key] = y
            out[key] = f"within {tol}"
        else:
            ref = np.load(os.path.join(shared, "refs.npz"))[key]
            diff = float(np.abs(y - ref).max()) if y.shape == ref.shape else f"shape {y.shape} vs {ref.shape}"
            out[key] = f"within {tol}" if not isinstance(diff, str) and diff <= tol else diff

    # 1. Inference: the identity, AutoContrast's stretch (with value_range, and a flat channel).
    for name, make in [("brightness", lambda: layers.RandomBrightness(0.4)),
                       ("grayscale", lambda: layers.RandomGrayscale(0.9)),
                       ("invert", lambda: layers.RandomInvert()),
                       ("solarization", lambda: layers.Solarization(0.5, 0.5)),
                       ("posterization", lambda: layers.RandomPosterization(3)),
                       ("erasing", lambda: layers.RandomErasing()),
                       ("color_degeneration", lambda: layers.RandomColorDegeneration(0.5)),
                       ("sharpness", lambda: layers.RandomSharpness(0.5)),
                       ("max_num_bounding_boxes", lambda: layers.MaxNumBoundingBoxes(4)),
                       ("shear", lambda: layers.RandomShear(0.3, 0.2)),
                       ("mix_up", lambda: layers.MixUp()),
                       ("cut_mix", lambda: layers.CutMix()),
                       ("equalization", lambda: layers.Equalization()),
                       ("auto_contrast", lambda: layers.AutoContrast())]:
        compare("inference_" + name, run(make(), x255, False), 1e-4)
    compare("auto_contrast_training", run(layers.AutoContrast(), x255, True), 1e-4)
    compare("auto_contrast_0_1", run(layers.AutoContrast(value_range=(0, 1)), x01, False), 1e-6)

    # 2. Training with a range of one value: Keras's numbers.
    compare("brightness_fixed", run(layers.RandomBrightness((0.3, 0.3)), x255, True), 1e-4)
    compare("brightness_fixed_negative", run(layers.RandomBrightness((-0.5, -0.5), value_range=(-1, 1)),
                                             x01 * 2 - 1, True), 1e-6)
    compare("grayscale_all", run(layers.RandomGrayscale(1.0), x255, True), 1e-3)
    compare("grayscale_none", run(layers.RandomGrayscale(0.0), x255, True), 0.0)
    compare("invert_all", run(layers.RandomInvert((1.0, 1.0)), x255, True), 1e-4)
    compare("invert_none", run(layers.RandomInvert((0.0, 0.0), value_range=(0, 1)), x01, True), 0.0)
    compare("solarization_invert", run(layers.Solarization(0.0, 0.0), x255, True), 1e-4)
    compare("solarization_0_1", run(layers.Solarization(0.0, 0.0, value_range=(0, 1)), x01, True), 1e-6)
    compare("posterization_4_bits", run(layers.RandomPosterization((4, 4)), ints, True), 0.0)
    compare("posterization_1_bit_0_1", run(layers.RandomPosterization((1, 1), value_range=(0, 1)), x01, True), 1e-6)
    compare("color_degeneration_fixed", run(layers.RandomColorDegeneration((0.4, 0.4)), x255, True), 1e-3)
    compare("color_degeneration_full", run(layers.RandomColorDegeneration((-1.0, -1.0)), x255, True), 1e-3)
    compare("sharpness_fixed", run(layers.RandomSharpness((0.25, 0.25)), x255, True), 1e-3)
    compare("sharpness_fixed_0_1", run(layers.RandomSharpness((0.1, 0.1), value_range=(0, 1)), x01, True), 1e-5)
    compare("erasing_never", run(layers.RandomErasing((0.0, 0.0)), x255, True), 0.0)
    # Equalization is not random: Keras's histogram of each channel over the whole batch.
    compare("equalization", run(layers.Equalization(), x255, True), 1e-3)
    compare("equalization_16_bins", run(layers.Equalization(bins=16), ints, True), 1e-3)
    compare("equalization_0_1", run(layers.Equalization(value_range=(0, 1)), x01, True), 1e-5)
    compare("equalization_one_bin_unchanged", run(layers.Equalization(), np.full((2, 8, 8, 3), 9.0, "float32"), True), 0.0)

    # RandomShear draws a sign per sample: each output is Keras's shear by +f or by -f
    # (Keras's affine_transform computes both references).
    same = np.repeat(x255[1:2], 40, axis=0)
    for name, make, m in [("shear_x", lambda: layers.RandomShear((0.2, 0.2), seed=1), [1, 0.2, 0, 0, 1, 0, 0, 0]),
                          ("shear_xy_constant", lambda: layers.RandomShear((0.1, 0.1), (0.3, 0.3), fill_mode="constant",
                                                                          fill_value=9.0, interpolation="nearest", seed=2),
                           [1, 0.1, 0, 0.3, 1, 0, 0, 0])]:
        layer = make()
        if is_keras:
            for sign in (1, -1):
                t = np.array([m], dtype="float32") * np.array([1, sign, 1, sign, 1, 1, 1, 1], dtype="float32")
                refs[f"{name}_{sign}"] = np.asarray(keras.ops.image.affine_transform(
                    x255[1:2], t, interpolation=layer.interpolation, fill_mode=layer.fill_mode,
                    fill_value=layer.fill_value))
            plus, minus = refs[f"{name}_1"], refs[f"{name}_-1"]
        else:
            ref = np.load(os.path.join(shared, "refs.npz"))
            plus, minus = ref[f"{name}_1"], ref[f"{name}_-1"]
        y = run(layer, same, True)
        is_plus = np.abs(y - plus).max(axis=(1, 2, 3)) <= 1e-3
        is_minus = np.abs(y - minus).max(axis=(1, 2, 3)) <= 1e-3
        out[name] = {"each_one_of_the_two": bool(np.all(is_plus | is_minus)),
                     "both_signs": bool(is_plus.any() and is_minus.any())}

    # 3. Statistics of random outputs, as yes/no questions on Keras's ranges.
    many = np.full((400, 6, 6, 3), 100.0, dtype="float32")
    many[:, :, :, 1] = 60.0
    many[:, :, :, 2] = 180.0
    per = lambda y: y.reshape(len(y), -1)
    y = run(layers.RandomBrightness(0.2, seed=1), many, True, (6, 6, 3))
    delta = (y - many)[:, 0, 0, 0]
    out["brightness_stats"] = {
        "one_delta_per_image": bool(np.allclose(y - many, delta[:, None, None, None], atol=1e-3)),
        "within_factor_times_range": bool(np.all(np.abs(delta) <= 0.2 * 255 + 1e-3)),
        "spread": bool(delta.std() > 20 and delta.min() < -35 and delta.max() > 35),
        "clipped_to_range": bool(y.min() >= 0 and y.max() <= 255)}
    y = run(layers.RandomGrayscale(0.5, seed=2), many, True, (6, 6, 3))
    gray = np.ptp(y, axis=-1).max(axis=(1, 2)) < 1e-3
    out["grayscale_stats"] = {"fraction_near_half": bool(0.38 < gray.mean() < 0.62),
                              "rest_unchanged": bool(np.array_equal(y[~gray], many[~gray]))}
    y = run(layers.RandomInvert(seed=3), many, True, (6, 6, 3))
    inverted = np.all(np.isclose(y, 255 - many), axis=(1, 2, 3))
    kept = np.all(y == many, axis=(1, 2, 3))
    # factor (0, 1): probability p ~ U(0, 1) then u < p: half the images, on average.
    out["invert_stats"] = {"each_inverted_or_kept": bool(np.all(inverted | kept)),
                           "fraction_near_half": bool(0.38 < inverted.mean() < 0.62)}
    y = run(layers.Solarization(threshold_factor=0.5, seed=4), many, True, (6, 6, 3))
    out["solarization_stats"] = {"each_pixel_kept_or_inverted": bool(np.all(np.isclose(y, many) | np.isclose(y, 255 - many))),
                                 "both_happen": bool(np.any(np.isclose(y, 255 - many) & ~np.isclose(y, many))
                                                     and np.any(np.isclose(y, many) & ~np.isclose(y, 255 - many)))}
    grid = np.tile(np.arange(36, dtype="float32").reshape(1, 6, 6, 1) * 7, (400, 1, 1, 3))
    y = run(layers.RandomPosterization((1, 8), seed=5), grid, True, (6, 6, 3))
    # The largest power of two every value of an image is a multiple of: 2^(8 - bits).
    step = [max(s for s in (1, 2, 4, 8, 16, 32, 64, 128) if np.all(img % s == 0)) for img in y]
    out["posterization_stats"] = {"bits_drawn": sorted(set(int(8 - np.log2(s)) for s in step)),
                                  "never_above_input": bool(np.all(y <= grid))}
    flat = np.full((400, 10, 10, 3), 128.0, dtype="float32")
    y = run(layers.RandomErasing(scale=(0.1, 0.3), fill_value=0.0, seed=6), flat, True, (10, 10, 3))
    area = (y[..., 0] == 0).mean(axis=(1, 2))
    erased = area > 0
    out["erasing_stats"] = {"fraction_near_half": bool(0.38 < erased.mean() < 0.62),
                            # A side is sqrt(scale) of the image's (drawn per axis): at most ceil(sqrt(0.3)·10) = 6 pixels.
                            "area_within_scale": bool(np.all(area[erased] <= 0.36) and area[erased].mean() > 0.08),
                            "rest_unchanged": bool(np.all(y[~erased] == 128.0))}
    y = run(layers.RandomErasing(factor=(1.0, 1.0), seed=7), flat, True, (10, 10, 3))
    changed = y != 128.0
    out["erasing_noise_fill"] = {"clipped_to_range": bool(y.min() >= 0 and y.max() <= 255),
                                 "noisy": bool(np.unique(y[changed]).size > 50)}
    y = run(layers.RandomColorDegeneration(0.5, seed=8), many, True, (6, 6, 3))
    g = many[..., :1] * np.float32(0.2989) + many[..., 1:2] * np.float32(0.587) + many[..., 2:] * np.float32(0.114)
    f = ((y - many) / (g - many))[:, 0, 0, 0]
    out["color_degeneration_stats"] = {"factor_within_minus_to_plus_half": bool(np.all(np.abs(f) <= 0.5 + 1e-3)),
                                       "spread": bool(f.min() < -0.35 and f.max() > 0.35)}
    checker = np.tile(((np.indices((6, 6)).sum(0) % 2) * 200.0 + 20.0).astype("float32")[None, :, :, None], (400, 1, 1, 3))
    y = run(layers.RandomSharpness(0.5, seed=9), checker, True, (6, 6, 3))
    centre = y[:, 2, 2, 0] - checker[:, 2, 2, 0]
    # The centre (20, four of its neighbours 220) moves towards its smoothed value
    # (4·220 + 4·20 + 5·20) / 13 = 81.5 by 1 - 2·factor in [0, 1]: up by at most 61.5.
    out["sharpness_stats"] = {"centre_moves_towards_smoothed": bool(centre.min() >= -1e-3 and centre.min() < 15
                                                                    and centre.max() > 45 and centre.max() <= 61.6),
                              "clipped_to_range": bool(y.min() >= 0 and y.max() <= 255)}

    # MixUp and CutMix mix each image with another of the batch. Image i holds i in channel 0
    # and i² in channel 1, so an output tells which image was mixed in and by what weight.
    n = 200
    ids = np.arange(n, dtype="float32")
    tagged = np.zeros((n, 4, 4, 3), dtype="float32")
    tagged[..., 0] = ids[:, None, None]
    tagged[..., 1] = (ids ** 2)[:, None, None]
    y = run(layers.MixUp(alpha=0.2, seed=1), tagged, True, (4, 4, 3))
    o0, o1 = y[:, 0, 0, 0].astype("float64"), y[:, 0, 0, 1].astype("float64")
    partner, weight = [], []
    for i in range(n):
        if abs(o0[i] - i) < 0.05:
            partner.append(None)  # a weight near 1 (or mixed with itself, 1 in n)
            weight.append(1.0)
            continue
        # o0 = w·i + (1 − w)·j and o1 = w·i² + (1 − w)·j² give j = (o1 − i·o0) / (o0 − i).
        j = int(round((o1[i] - i * o0[i]) / (o0[i] - i)))
        partner.append(j)
        weight.append((o0[i] - j) / (i - j) if j != i else 1.0)
    weight = np.array(weight)
    out["mix_up_stats"] = {
        "each_image_uniform": bool(np.all(np.ptp(y.reshape(n, 16, 3), axis=1) < 1e-2)),
        "partners_are_images": all(p is None or 0 <= p < n for p in partner),
        "weights_in_0_1": bool(np.all((weight > -1e-3) & (weight < 1 + 1e-3))),
        # Beta(0.2, 0.2): a third of its mass in (0.1, 0.9), mean 1/2.
        "beta_shaped": bool(0.2 < np.mean((weight > 0.1) & (weight < 0.9)) < 0.5 and 0.4 < weight.mean() < 0.6)}
    y = run(layers.CutMix(seed=2), np.repeat(np.repeat(tagged, 4, axis=1), 4, axis=2), True, (16, 16, 3))
    pasted = y[..., 0] != ids[:, None, None]
    rect, single = True, True
    for i in range(n):
        rows, cols = np.nonzero(pasted[i])
        if rows.size:
            rect = rect and rows.size == (np.ptp(rows) + 1) * (np.ptp(cols) + 1)
            single = single and np.unique(y[i][pasted[i]][:, 0]).size == 1
    out["cut_mix_stats"] = {"one_rectangle_from_one_image": bool(rect and single),
                            "area_mean_near_half": bool(0.3 < pasted.mean() < 0.65)}

    # RandomCrop: in training one window per batch at a random offset; Keras's fixed window
    # (resized) when the input is not larger on both axes. (At inference Keras 3.15 returns
    # the input uncropped, which nnfit does not: see docs/config.md.)
    big = rng.uniform(0, 255, size=(5, 9, 7, 3)).astype("float32")
    seen, each_a_window = set(), True
    for k in range(12):
        y = run(layers.RandomCrop(4, 3), big, True, (9, 7, 3))
        found = [(t, l) for t in range(6) for l in range(5) if np.array_equal(y, big[:, t:t + 4, l:l + 3])]
        each_a_window = each_a_window and len(found) >= 1
        seen.update(found[:1])
    out["random_crop_training"] = {"each_one_window_for_the_batch": bool(each_a_window),
                                   "windows_vary": len(seen) >= 3}
    compare("random_crop_smaller", run(layers.RandomCrop(10, 4), x255[:, :8, :6], True, (8, 6, 3)), 1e-3)
    compare("random_crop_same_width", run(layers.RandomCrop(4, 6), x255[:, :8, :6], True, (8, 6, 3)), 0.0)
    crop_model = keras.Sequential([keras.Input((8, 6, 3)), layers.RandomCrop(4, 5, seed=3, name="rc")])
    crop_lines = []
    crop_model.summary(print_fn=lambda line, *a, **k: crop_lines.append(line))
    out["random_crop_summary"] = [l for l in "\\n".join(crop_lines).splitlines() if l.startswith("│")]
    if is_keras:
        crop_model.save(os.path.join(shared, "crop.keras"))
        out["random_crop_file"] = written(os.path.join(shared, "crop.keras"))
    else:
        keras.models.load_model(os.path.join(shared, "crop.keras")).save(os.path.join(shared, "crop_nnfit.keras"))
        out["random_crop_file"] = written(os.path.join(shared, "crop_nnfit.keras"))

    # 4. Configs, and a .keras file Keras wrote.
    every = [layers.RandomBrightness(0.2, value_range=(0, 1), seed=3, name="b"),
             layers.RandomGrayscale(0.3, name="g"),
             layers.RandomInvert(0.4, value_range=(1, 0), name="i"),
             layers.Solarization(0.2, (0.1, 0.6), seed=1, name="s"),
             layers.RandomPosterization(5, name="p"),
             layers.AutoContrast(value_range=(1, 0), name="a"),
             layers.RandomErasing(0.5, scale=0.2, fill_value=(1, 2, 3), name="e"),
             layers.RandomColorDegeneration((0.6, -0.2), name="c"),
             layers.RandomSharpness(0.7, name="h"),
             layers.MaxNumBoundingBoxes(5, name="m"),
             layers.RandomShear(0.3, (0.1, 0.2), fill_mode="constant", fill_value=1.0, seed=4, name="r"),
             layers.MixUp(0.4, seed=5, name="x"),
             layers.CutMix(0.6, name="u")]
    model = keras.Sequential([keras.Input((8, 8, 3))] + every)
    model.save(os.path.join(shared, "every_built.keras" if is_keras else "every_built_nnfit.keras"))
    out["saved"] = written(os.path.join(shared, "every_built.keras" if is_keras else "every_built_nnfit.keras"))
    if is_keras:
        model.save(os.path.join(shared, "every.keras"))
        out["file_predictions"] = "within 1e-5"
        out["file_written"] = written(os.path.join(shared, "every.keras"))
        refs["file_x"] = x01
        refs["file_y"] = np.asarray(model.predict(x01, verbose=0))
        np.savez(os.path.join(shared, "refs.npz"), **refs)
    else:
        ref = np.load(os.path.join(shared, "refs.npz"))
        loaded = keras.models.load_model(os.path.join(shared, "every.keras"))
        diff = float(np.abs(loaded.predict(ref["file_x"], verbose=0) - ref["file_y"]).max())
        out["file_predictions"] = "within 1e-5" if diff <= 1e-5 else diff
        loaded.save(os.path.join(shared, "every_nnfit.keras"))
        out["file_written"] = written(os.path.join(shared, "every_nnfit.keras"))
    lines = []
    model.summary(print_fn=lambda line, *a, **k: lines.append(line))
    out["summary_rows"] = [l for l in "\\n".join(lines).splitlines() if l.startswith("│")]
    print("PARITY " + json.dumps(out))
""")


def main():
    shared = tempfile.mkdtemp(prefix="nnfit_augmentation_parity_")
    os.environ["NNFIT_AUGMENTATION_PARITY_DIR"] = shared
    try:
        keras_out, nnfit_out = parity_runs.run_both(SCRIPT, sys.argv, timeout=300)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    failed = [k for k in keras_out if keras_out[k] != nnfit_out.get(k)]
    for k in sorted(keras_out):
        print(f"{'ok  ' if k not in failed else 'DIFF'} {k}: keras {keras_out[k]}" +
              ("" if k not in failed else f"\n     nnfit {nnfit_out.get(k)}"))
    if failed:
        sys.exit(f"{len(failed)} of {len(keras_out)} differ from Keras: {failed}")
    print(f"all {len(keras_out)} agree with Keras")


if __name__ == "__main__":
    main()
