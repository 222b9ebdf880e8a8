"""keras.utils (issue 36) under real Keras and under `from nnfit import keras`, on the same files
and arrays: what each observable gives must be equal. The public names of keras.utils; Config;
pack/unpack_x_y_sample_weight; standardize_dtype, result_type and the other keras.backend dtype
rules, get_uid; Progbar's text and interactive logging (fit's and summary's output off and on);
the custom-object registry and scopes, serialize/deserialize_keras_object of plain values,
arrays and registered objects; get_source_inputs, is_keras_tensor; timeseries_dataset_from_array
(windows, targets, strides, sampling rate, start/end index, shuffled windows as a set);
image_dataset_from_directory (files, labels, class names, splits, label modes, color modes,
interpolations, crop_to_aspect_ratio: pixel values within 1e-4 of TensorFlow's decode and
resize); text_dataset_from_directory and audio_dataset_from_directory (values, labels, padding);
the "Found N files" lines; fit on such datasets; get_file from file:// URLs (cache layout,
extraction, hashes); keras.saving's save_weights/load_weights and keras.models.save_model.
The fixture files are made here (Pillow, wave) in a temporary folder both runs read.

usage: keras_utils_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import hashlib
import io
import os
import shutil
import sys
import tarfile
import tempfile
import textwrap
import wave
import zipfile

import numpy as np

import parity_runs

SCRIPT = textwrap.dedent("""
    import contextlib, io, json, os, re
    import numpy as np
    IMPORT_LINE
    from keras import layers

    d = os.environ["NNFIT_UTILS_PARITY_DIR"]
    is_keras = not keras.__name__.startswith("nnfit")
    tag = "keras" if is_keras else "nnfit"
    out = {}

    def captured(fn):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            result = fn()
        return result, buf.getvalue()

    def arr(t):
        return np.asarray(t)

    # 1. The names.
    out["names"] = sorted(n for n in dir(keras.utils) if not n.startswith("_"))
    # 2. Config.
    c = keras.utils.Config(learning_rate=0.1, momentum=0.9)
    c.seed = 3
    c["b"] = 1
    try:
        c.lerning_rate
    except AttributeError as e:
        c_err = str(e)
    c.freeze()
    try:
        c.x = 1
    except ValueError as e:
        f_err = str(e)
    out["config"] = [list(c), c.to_json(), c.as_dict(), len(c), "seed" in c, c.get("zz", 5), c_err, f_err, c.frozen]
    # 3. pack / unpack.
    pk, up = keras.utils.pack_x_y_sample_weight, keras.utils.unpack_x_y_sample_weight
    out["pack"] = [repr(pk(1)), repr(pk([1, 2])), repr(pk(1, 2)), repr(pk(1, 2, 3)), repr(up(1)), repr(up([1, 2])),
                   repr(up((1,))), repr(up((1, 2, 3)))]
    try:
        up((1, 2, 3, 4))
    except ValueError as e:
        out["unpack_error"] = str(e)
    # 4. dtypes and the backend's small names.
    B = keras.backend
    out["standardize_dtype"] = [keras.utils.standardize_dtype(t) for t in
                                (None, "float32", np.float64, np.dtype("int8"), bool, int, float, str, "uint16")]
    try:
        keras.utils.standardize_dtype("float7")
    except ValueError as e:
        out["standardize_error"] = str(e)
    pairs = [("int32", "float32"), ("uint8", "int8"), ("int64", float), ("float16", int), ("bool", "int16"),
             ("bfloat16", "float16"), (int, float), ("int32",), ()]
    out["result_type"] = [B.result_type(*p) for p in pairs]
    out["is_float_int"] = [[B.is_float_dtype(t), B.is_int_dtype(t)] for t in ("float16", "bfloat16", "uint8", "bool")]
    out["image_data_format"] = B.image_data_format()
    keras.backend.clear_session()
    layers.Dense(2)
    out["get_uid"] = [B.get_uid("dense"), B.get_uid("dense"), B.get_uid("zz"), layers.Dense(2).name]
    keras.utils.clear_session()
    out["after_clear"] = layers.Dense(2).name
    try:
        B.set_floatx("float8")
    except ValueError as e:
        out["set_floatx_error"] = str(e).split("{")[0]  # a set follows, in hash order

    # 5. Progbar and interactive logging.
    def clean(text):
        text = re.sub(r"\\d+(us|ms|s)/(step|sample)", "T/U", text)
        text = re.sub(r"\\x08+", "B", text)  # backspaces: as many as the last line's timing text was long
        return re.sub(r"\\x1b\\[1m\\d+s\\x1b\\[0m", "E", text).replace(" 0s - ", " E - ")
    def bars():
        p = keras.utils.Progbar(4, interval=0.0, stateful_metrics=["acc"])
        for i in range(1, 5):
            p.update(i, [("loss", float(i)), ("acc", 0.5 * i)])
        q = keras.utils.Progbar(3, verbose=2)
        q.add(2, [("loss", 2.0)])
        q.add(1, [("loss", 5.0)])
        r = keras.utils.Progbar(None, interval=0.0)
        r.update(7, [("m", 1e-5)], finalize=True)
    out["progbar"] = clean(captured(bars)[1])
    xs = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    small = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    small.compile(optimizer="sgd", loss="mse")
    keras.utils.disable_interactive_logging()
    off = [keras.utils.is_interactive_logging_enabled(),
           captured(lambda: small.fit(xs, xs[:, :1], epochs=2, verbose=1))[1],
           captured(lambda: small.evaluate(xs, xs[:, :1], verbose=1))[1], captured(small.summary)[1]]
    keras.utils.enable_interactive_logging()
    on = captured(lambda: small.fit(xs, xs[:, :1], epochs=2, verbose=2))[1]
    out["interactive_logging"] = [off, keras.utils.is_interactive_logging_enabled(),
                                  [l.split(" - ")[0] for l in on.splitlines()]]

    # 6. The registry, scopes and serialization.
    @keras.utils.register_keras_serializable(package="Parity")
    class Scaler:
        def __init__(self, factor=1.0):
            self.factor = factor
        def get_config(self):
            return {"factor": self.factor}
        @classmethod
        def from_config(cls, config):
            return cls(**config)
    @keras.saving.register_keras_serializable()
    def twice(x):
        return 2 * x
    class Sub(Scaler):
        pass
    S = keras.utils.serialize_keras_object
    D = keras.utils.deserialize_keras_object
    reg = keras.utils.get_custom_objects()
    out["registry"] = [keras.utils.get_custom_objects() is keras.saving.get_custom_objects(),
                       sorted(k for k in reg if k.startswith(("Parity>", "Custom>twice"))),
                       keras.utils.get_registered_name(Scaler), keras.utils.get_registered_name(twice),
                       keras.utils.get_registered_name(Sub), keras.utils.get_registered_object("Parity>Scaler") is Scaler,
                       keras.utils.get_registered_object("Nope") is None,
                       keras.utils.get_registered_object("X", custom_objects={"X": 1}),
                       keras.utils.get_registered_object("Y", module_objects={"Y": 2})]
    with keras.utils.custom_object_scope({"A": 1}) as scope:
        inner = [keras.utils.get_registered_object("A"), "A" in keras.utils.get_custom_objects()]
        with keras.saving.CustomObjectScope({"B": 2}):
            inner += [keras.utils.get_registered_object("A"), keras.utils.get_registered_object("B")]
        inner += [keras.utils.get_registered_object("B"), type(scope).__name__,
                  keras.utils.CustomObjectScope is keras.utils.custom_object_scope]
    out["scopes"] = inner + [keras.utils.get_registered_object("A")]
    try:
        keras.utils.register_keras_serializable()(type("NoConfig", (), {}))
    except ValueError as e:
        out["register_error"] = str(e)
    values = [None, 3, 2.5, "s", True, [1, (2, 3)], {"a": [1]}, np.float32(1.5), np.array([[1, 2]], "int32"),
              b"by", slice(1, 4), Scaler(2.0), twice, Sub(1.0)]
    out["serialize"] = [repr(S(v)) for v in values]
    back = [D(S(v)) for v in values[:-1]]  # Sub is not registered: Keras cannot find it
    out["deserialize"] = [repr(b) if not isinstance(b, (Scaler, np.ndarray)) else
                          (type(b).__name__, getattr(b, "factor", None), getattr(b, "tolist", lambda: None)())
                          for b in back[:-1]] + [back[-1] is twice]
    try:
        D({"module": None, "class_name": "Gone", "config": {}, "registered_name": "Gone"})
    except TypeError as e:
        out["deserialize_error"] = str(e)[:60]
    builtins_ = [layers.Dense(3), keras.optimizers.Adam(), keras.losses.MeanSquaredError(), keras.regularizers.L2(0.1),
                 keras.initializers.GlorotUniform(seed=1)]
    out["serialize_builtin"] = [[S(o)["module"], S(o)["class_name"], S(o)["registered_name"]] for o in builtins_]
    out["roundtrip_builtin"] = [type(D(S(o))).__name__ for o in builtins_]
    out["saving_names"] = sorted(n for n in dir(keras.saving) if not n.startswith("_") and n != "KerasFileEditor")
    out["models_save_model"] = keras.models.save_model is keras.saving.save_model

    # 7. Symbolic tensors.
    a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
    h = layers.Dense(4)(layers.concatenate([a, b]))
    o = layers.Dense(1)(layers.add([h, layers.Dense(4)(a)]))
    srcs = keras.utils.get_source_inputs(o)
    out["source_inputs"] = [len(srcs), srcs[0] is a, srcs[1] is b, keras.utils.get_source_inputs(a)[0] is a,
                            keras.utils.get_source_inputs(5), keras.utils.is_keras_tensor(h),
                            keras.utils.is_keras_tensor(np.ones(2)), keras.backend.is_keras_tensor(a)]

    # 8. timeseries_dataset_from_array.
    series = np.arange(60, dtype="float64").reshape(30, 2)
    tgt = np.arange(30) * 10
    ts = {}
    for name, kw in {"plain": dict(sequence_length=5, batch_size=4),
                     "stride": dict(sequence_length=3, sequence_stride=4, sampling_rate=2, batch_size=3),
                     "range": dict(sequence_length=4, start_index=3, end_index=25, batch_size=5),
                     "unbatched": dict(sequence_length=6, sequence_stride=7, batch_size=None)}.items():
        got = [tuple(arr(t).tolist() for t in (e if isinstance(e, tuple) else (e,)))
               for e in keras.utils.timeseries_dataset_from_array(series, tgt, **kw)]
        ts[name] = [got, [str(arr(e[0]).dtype) for e in keras.utils.timeseries_dataset_from_array(series, tgt, **kw)][0]]
    ts["no_targets"] = [arr(x).shape for x in keras.utils.timeseries_dataset_from_array(series, None, 4, batch_size=8)]
    sh = [arr(x).tolist() for x, _ in keras.utils.timeseries_dataset_from_array(series, tgt, 4, shuffle=True, seed=5,
                                                                                 batch_size=7)]
    ts["shuffled_windows"] = sorted(w for batch in sh for w in batch)
    ts["shuffled_batches"] = [len(b) for b in sh]
    for bad in (dict(start_index=40), dict(sampling_rate=0), dict(sequence_stride=30), dict(end_index=0)):
        try:
            keras.utils.timeseries_dataset_from_array(series, tgt, 4, **bad)
        except ValueError as e:
            ts.setdefault("errors", []).append(str(e))
    out["timeseries"] = json.loads(json.dumps(ts, default=list))

    # 9. image_dataset_from_directory.
    images = os.path.join(d, "images")
    rel = lambda paths: [os.path.relpath(p, d) for p in paths]
    arrays = {}
    def image_case(name, **kw):
        def run():
            return keras.utils.image_dataset_from_directory(images, **kw)
        ds, printed = captured(run)
        sets = ds if isinstance(ds, list) else [ds]
        res = {"printed": printed.splitlines(), "class_names": sets[0].class_names,
               "file_paths": [rel(s.file_paths) for s in sets]}
        join = np.stack if kw.get("batch_size", 32) is None else np.concatenate
        for k, s in enumerate(sets):
            batches = list(s)
            if isinstance(batches[0], tuple):
                xs_ = join([arr(x) for x, _ in batches])
                ys_ = join([arr(y) for _, y in batches])
                shuffled = kw.get("shuffle", True) and not (kw.get("subset") == "both" and k == 1)
                res[f"labels_{k}"] = [sorted(ys_.tolist()) if shuffled else ys_.tolist(), str(ys_.dtype)]
            else:
                xs_ = join([arr(x) for x in batches])
            res[f"images_{k}"] = [list(xs_.shape), str(xs_.dtype), len(batches)]
            arrays[f"{name}_{k}"] = xs_ if not kw.get("shuffle", True) or kw.get("subset") == "both" and k == 1 \\
                else np.sort(xs_.reshape(len(xs_), -1).sum(1))
        out["image_" + name] = res
    image_case("int", image_size=(12, 10), shuffle=False, batch_size=4)
    image_case("categorical", image_size=9, label_mode="categorical", shuffle=False, batch_size=5)
    image_case("shuffled", image_size=(8, 8), seed=7)
    image_case("split", image_size=(8, 8), seed=3, validation_split=0.3, subset="both", batch_size=3)
    image_case("validation", image_size=(8, 8), seed=3, validation_split=0.3, subset="validation")
    image_case("no_labels", labels=None, image_size=(8, 8), shuffle=False)
    image_case("listed", labels=list(range(10)) + [0, 1, 2, 3, 4], image_size=(8, 8), shuffle=False)
    image_case("subset_classes", class_names=["c", "a"], image_size=(8, 8), shuffle=False, label_mode="binary")
    images = os.path.join(d, "pngs")  # PNG of every mode: TensorFlow reads no grayscale BMP nor RGBA JPEG
    image_case("gray_nearest", color_mode="grayscale", interpolation="nearest", image_size=(6, 11), shuffle=False)
    image_case("rgba_bicubic", color_mode="rgba", interpolation="bicubic", image_size=(7, 5), shuffle=False)
    image_case("gray_bilinear", color_mode="grayscale", image_size=(9, 9), shuffle=False)
    images = os.path.join(d, "images")
    for mode in ("grayscale", "rgba"):  # a BMP, a JPEG: refused by both
        try:
            list(keras.utils.image_dataset_from_directory(images, color_mode=mode, shuffle=False, verbose=False))
            out["image_refused_" + mode] = False
        except Exception as e:
            out["image_refused_" + mode] = True
    image_case("crop", crop_to_aspect_ratio=True, image_size=(6, 12), shuffle=False, batch_size=None)
    for bad in (dict(label_mode="binary"), dict(validation_split=0.2), dict(color_mode="cmyk"),
                dict(labels=[1, 2]), dict(class_names=["zz"])):
        try:
            captured(lambda: keras.utils.image_dataset_from_directory(images, **bad))
        except ValueError as e:
            out.setdefault("image_errors", []).append(str(e)[:90])
    fit_ds = keras.utils.image_dataset_from_directory(images, image_size=(8, 8), seed=1, batch_size=4, verbose=False)
    net = keras.Sequential([keras.Input((8, 8, 3)), layers.Rescaling(1 / 255), layers.Flatten(), layers.Dense(3)])
    net.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"])
    hist = net.fit(fit_ds, epochs=2, verbose=0, validation_data=fit_ds.take(2))
    out["image_fit"] = [sorted(hist.history), len(hist.history["loss"]), int(fit_ds.cardinality()),
                        len(list(fit_ds.take(2))), arr(next(iter(fit_ds.map(lambda x, y: (x / 255.0, y))))[0]).max() <= 1]

    # 10. text and audio.
    texts = os.path.join(d, "texts")
    def text_case(name, **kw):
        ds, printed = captured(lambda: keras.utils.text_dataset_from_directory(texts, **kw))
        sets = ds if isinstance(ds, list) else [ds]
        res = {"printed": printed.splitlines(), "class_names": sets[0].class_names}
        for k, s in enumerate(sets):
            got = [(arr(x).tolist(), arr(y).tolist()) if isinstance(e, tuple) else arr(e).tolist()
                   for e in s for x, y in [e if isinstance(e, tuple) else (e, e)]]
            res[f"batches_{k}"] = got if not kw.get("shuffle", True) or kw.get("subset") == "both" and k == 1 \\
                else sorted(map(repr, got))
        out["text_" + name] = json.loads(json.dumps(res, default=lambda b: b.decode("latin-1")))
    text_case("int", shuffle=False, batch_size=3)
    text_case("binary_max", shuffle=False, label_mode="binary", max_length=6, batch_size=None)
    text_case("split", seed=2, validation_split=0.4, subset="both", batch_size=2)
    audio = os.path.join(d, "audio")
    for name, kw in {"padded": dict(shuffle=False, batch_size=2),
                     "fixed": dict(shuffle=False, batch_size=3, output_sequence_length=5, label_mode="categorical")
                     }.items():
        ds, printed = captured(lambda: keras.utils.audio_dataset_from_directory(audio, **kw))
        out["audio_" + name] = [printed.splitlines(), ds.class_names,
                                [[arr(x).round(6).tolist(), arr(y).tolist()] for x, y in ds]]

    # 11. get_file.
    cache = os.path.join(d, f"cache_{tag}")
    os.makedirs(cache)  # a cache_dir that is not there is "not writable": Keras then uses /tmp/.keras
    url = "file://" + os.path.join(d, "files")
    gf = keras.utils.get_file
    sha = open(os.path.join(d, "files", "sha256.txt")).read().split()
    paths = [gf("data.bin", url + "/data.bin", cache_dir=cache), gf(origin=url + "/data.bin", cache_dir=cache,
                                                                    cache_subdir="sub", file_hash=sha[0]),
             gf("arch", url + "/arch.tar.gz", cache_dir=cache, extract=True),
             gf("z.zip", url + "/z.zip", cache_dir=cache, extract=True),
             gf(origin=url + "/arch.tar.gz", cache_dir=cache, extract=True, cache_subdir="x")]
    out["get_file"] = [os.path.relpath(p, cache) for p in paths]
    out["get_file_tree"] = sorted(os.path.relpath(os.path.join(r, f), cache) for r, _, fs in os.walk(cache) for f in fs)
    _, kept = captured(lambda: gf("data.bin", url + "/data.bin", cache_dir=cache, file_hash=sha[1]))
    with open(paths[0], "ab") as f:
        f.write(b"corrupt")
    _, printed = captured(lambda: gf("data.bin", url + "/data.bin", cache_dir=cache, file_hash=sha[1]))
    out["get_file_rehash"] = [kept, [l[:80] for l in printed.splitlines() if not l.startswith("\x1b")][:2],
                              os.path.getsize(paths[0])]
    try:
        gf("bad.bin", url + "/data.bin", cache_dir=cache, file_hash="0" * 64)
    except ValueError as e:
        out["get_file_bad_hash"] = [str(e), os.path.exists(os.path.join(cache, "datasets", "bad.bin"))]
    try:
        gf("x/y.bin", url + "/data.bin", cache_dir=cache)
    except ValueError as e:
        out["get_file_fname_error"] = str(e)

    # 12. keras.saving's weights functions and models.save_model.
    wm = keras.Sequential([keras.Input((3,)), layers.Dense(2, name="w")])
    try:
        keras.saving.save_weights(wm, os.path.join(d, f"w_{tag}.h5"))
    except ValueError as e:
        out["save_weights_error"] = str(e).replace(d, "DIR").replace(tag, "TAG")
    keras.saving.save_weights(wm, os.path.join(d, f"w_{tag}.weights.h5"))
    wm2 = keras.Sequential([keras.Input((3,)), layers.Dense(2, name="w")])
    keras.saving.load_weights(wm2, os.path.join(d, f"w_{tag}.weights.h5"))
    keras.models.save_model(wm2, os.path.join(d, f"m_{tag}.keras"))
    out["weights_roundtrip"] = [all(np.array_equal(p, q) for p, q in zip(wm.get_weights(), wm2.get_weights())),
                                os.path.exists(os.path.join(d, f"m_{tag}.keras"))]

    # 13. keras.activations, initializers and regularizers: get, serialize, deserialize, aliases.
    A, I, R = keras.activations, keras.initializers, keras.regularizers
    mods = [A.serialize(A.relu), A.get(None).__name__, A.get("tanh").__name__, A.deserialize("relu").__name__,
            A.deserialize({"module": "builtins", "class_name": "function", "config": "sigmoid",
                           "registered_name": "function"}).__name__,
            [type(I.get(n)).__name__ for n in ("glorot_uniform", "Zeros", "he_normal", "orthogonal")], I.get(None),
            I.glorot_uniform is I.GlorotUniform, I.OrthogonalInitializer is I.Orthogonal,
            type(I.get({"class_name": "he_normal", "config": {"seed": 3}})).__name__, I.serialize(I.Ones())["class_name"],
            type(I.deserialize({"module": "keras.initializers", "class_name": "Constant", "config": {"value": 2.0},
                                "registered_name": None})).__name__,
            [type(R.get(n)).__name__ for n in ("l2", "L1", "l1l2", "orthogonal_regularizer")],
            R.orthogonal_regularizer is R.OrthogonalRegularizer, R.serialize(R.L2(0.5))["config"],
            repr(R.deserialize("l1_l2")), type(R.deserialize({"module": "keras.regularizers", "class_name": "L1",
                                                              "config": {"l1": 0.2}, "registered_name": None})).__name__]
    for fn, arg in ((A.get, "nope"), (I.get, "nope"), (R.get, "l1_l2")):
        try:
            fn(arg)
        except ValueError as e:
            mods.append(str(e))
    out["module_get_serialize"] = mods

    # Arrays: Keras's run leaves them, nnfit's compares (pixel values to 1e-4).
    if is_keras:
        np.savez(os.path.join(d, "keras_arrays.npz"), **arrays)
    else:
        ref = np.load(os.path.join(d, "keras_arrays.npz"))
        for k in ref.files:
            diff = float(np.abs(ref[k].astype("float64") - arrays[k].astype("float64")).max()) \\
                if ref[k].shape == arrays[k].shape else f"shape {arrays[k].shape} vs {ref[k].shape}"
            out["image_values_" + k] = "within 1e-4" if diff == diff and not isinstance(diff, str) and diff <= 1e-4 \\
                else diff
    if is_keras:
        for k in arrays:
            out["image_values_" + k] = "within 1e-4"
    print("PARITY " + json.dumps(out, default=str))
""")


def make_fixtures(d):
    """Images of three classes (PNG of several modes and sizes, JPEG, BMP, a nested folder),
    text files, 16-bit WAV files, and files to download."""
    from PIL import Image
    rng = np.random.default_rng(0)
    for k, cls in enumerate("abc"):
        os.makedirs(os.path.join(d, "images", cls, "deeper"))
        for i in range(5):
            h, w = 10 + 3 * i, 14 - i
            pixels = rng.integers(0, 256, size=(h, w, 3)).astype("uint8")
            kind = (k * 5 + i) % 5
            name = os.path.join(d, "images", cls, ("deeper/" if i == 4 else "") + f"img_{i}")
            if kind == 0:
                Image.fromarray(pixels).save(name + ".png")
            elif kind == 1:
                Image.fromarray(pixels).save(name + ".jpg", quality=85)
            elif kind == 2:
                Image.fromarray(pixels[:, :, 0]).save(name + ".png")
            elif kind == 3:
                Image.fromarray(np.concatenate([pixels, pixels[:, :, :1]], 2), "RGBA").save(name + ".png")
            else:
                Image.fromarray(pixels).save(name + ".bmp")
    open(os.path.join(d, "images", "a", "notes.txt"), "w").write("not an image")
    for k, cls in enumerate("xy"):
        os.makedirs(os.path.join(d, "pngs", cls))
        for i, mode in enumerate(("L", "RGB", "RGBA", "P", "LA")):
            pixels = rng.integers(0, 256, size=(9 + i, 12 - k, 4)).astype("uint8")
            img = Image.fromarray(pixels, "RGBA").convert(mode) if mode != "P" else \
                Image.fromarray(pixels[:, :, :3]).convert("P", palette=Image.ADAPTIVE, colors=16)
            img.save(os.path.join(d, "pngs", cls, f"{mode}.png"))
    os.makedirs(os.path.join(d, "images", ".hidden"))
    for cls in ("neg", "pos"):
        os.makedirs(os.path.join(d, "texts", cls))
        for i in range(4):
            with open(os.path.join(d, "texts", cls, f"t{i}.txt"), "wb") as f:
                f.write(f"{cls} review {i}: caf\u00e9 {'good' if cls == 'pos' else 'bad'} {i * 'x'}".encode())
    for cls in ("no", "yes"):
        os.makedirs(os.path.join(d, "audio", cls))
        for i in range(3):
            with wave.open(os.path.join(d, "audio", cls, f"s{i}.wav"), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(8000)
                w.writeframes(rng.integers(-32768, 32767, size=3 + 2 * i).astype("<i2").tobytes())
    files = os.path.join(d, "files")
    os.makedirs(files)
    data = bytes(range(256)) * 8
    open(os.path.join(files, "data.bin"), "wb").write(data)
    open(os.path.join(files, "sha256.txt"), "w").write(
        f"{hashlib.sha256(data).hexdigest()} {hashlib.md5(data).hexdigest()}")
    with tarfile.open(os.path.join(files, "arch.tar.gz"), "w:gz") as t:
        for name, body in (("top/one.txt", b"1"), ("top/two/three.txt", b"3")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            t.addfile(info, io.BytesIO(body))
    with zipfile.ZipFile(os.path.join(files, "z.zip"), "w") as z:
        z.writestr("inner/z.txt", "z")


def main():
    d = tempfile.mkdtemp(prefix="nnfit_utils_parity_")
    try:
        make_fixtures(d)
        os.environ["NNFIT_UTILS_PARITY_DIR"] = d
        keras_out, nnfit_out = parity_runs.run_both(SCRIPT, sys.argv, timeout=600)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    failed = [k for k in keras_out if keras_out[k] != nnfit_out.get(k)]
    for k in sorted(keras_out):
        print(f"{'ok  ' if k not in failed else 'DIFF'} {k}: keras {str(keras_out[k])[:300]}" +
              ("" if k not in failed else f"\n     nnfit {str(nnfit_out.get(k))[:300]}"))
    missing = sorted(set(nnfit_out) - set(keras_out))
    if missing:
        failed.append(f"only in nnfit: {missing}")
    if failed:
        sys.exit(f"{len(failed)} of {len(keras_out)} differ from Keras: {failed}")
    print(f"all {len(keras_out)} agree with Keras")


if __name__ == "__main__":
    main()
