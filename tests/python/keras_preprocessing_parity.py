"""Keras's preprocessing layers of strings and categories (issue 36) under real Keras 3.15 (on
TensorFlow, from the Keras venv) and under `from nnfit import keras`: TextVectorization,
StringLookup, IntegerLookup, CategoryEncoding, Hashing, Discretization and HashedCrossing on
the same inputs must give the same values, vocabularies (order included) and configs. Cases:
adapt on a corpus with ties, punctuation, capitals, non-ASCII letters and non-ASCII spaces,
from an array and from batches; every output mode; max_tokens, ngrams, split, standardize
(the built-in ones and a callable), output_sequence_length, pad_to_max_tokens; OOV buckets of
several indices (floormod, FarmHash, salted SipHash), mask and OOV tokens, invert; hashing of
strings, integers and floats, salted and masked; crossing of integers and strings;
quantile boundaries from adapt. Then keras.io's "text classification from scratch" shape:
TextVectorization adapted, a model trained on its integer sequences, and an end-to-end model
taking strings, its predictions within 1e-5 of the trained model's; and .keras files of the
end-to-end model written by Keras and read by nnfit, and the other way round.

usage: keras_preprocessing_parity.py KERAS_PYTHON [NNFIT_PYTHON]   (PREP_KEEP=DIR keeps the .keras files there)
"""
import os
import sys
import tempfile
import textwrap

import parity_runs

SCRIPT = textwrap.dedent("""
    import json, os
    import numpy as np
    IMPORT_LINE
    from keras import layers

    out = {}

    def val(x):
        if isinstance(x, list):
            return [val(v) for v in x]
        a = np.asarray(x)
        if a.dtype.kind in "OS":
            return [val(v) for v in a] if a.ndim else (a.item().decode() if isinstance(a.item(), bytes) else a.item())
        if a.dtype.kind == "U":
            return a.tolist()
        if a.dtype.kind == "f":
            return np.round(a.astype("float64"), 5).tolist()
        return a.tolist()

    def plain(config):
        return json.loads(json.dumps(config, default=lambda o: o.item() if hasattr(o, "item") else str(o)))

    def vocab(layer, special=True):
        return [v.item() if hasattr(v, "item") else v for v in layer.get_vocabulary(special)]

    rng = np.random.default_rng(7)
    words = ["the", "The", "cat", "dog", "sat", "on", "mat", "a", "bird", "Éclair", "straße", "naïve", "x-ray",
             "it's", "U.S.A.", "zebra", "apple", "Zoo", "émigré"]
    seps = [" ", "  ", "\\t", "\\n", ", ", "! ", "\\u00a0", " -- "]
    corpus = []
    for i in range(60):
        n = int(rng.integers(1, 12))
        text = ""
        for j in range(n):
            text += words[int(rng.integers(len(words)))] + (seps[int(rng.integers(len(seps)))] if j < n - 1 else "")
        corpus.append(text)
    corpus = np.array(corpus)
    test = np.array(["The cat sat on the mat.", "unknown words here", "", "  Éclair!!  naïve\\tzebra  ",
                     "a a a a a a a a a a"])

    # TextVectorization.
    tv = {}
    settings = {
        "default": {},
        "max10_len6": {"max_tokens": 10, "output_sequence_length": 6},
        "bigrams": {"ngrams": 2, "max_tokens": 40},
        "ngrams_1_3": {"ngrams": (1, 3), "output_sequence_length": 8},
        "character": {"split": "character", "output_sequence_length": 12},
        "lower": {"standardize": "lower"},
        "strip": {"standardize": "strip_punctuation"},
        "raw": {"standardize": None},
        "multi_hot": {"output_mode": "multi_hot", "max_tokens": 12},
        "count": {"output_mode": "count"},
        "tf_idf": {"output_mode": "tf_idf", "max_tokens": 15},
        "tf_idf_padded": {"output_mode": "tf_idf", "max_tokens": 30, "pad_to_max_tokens": True},
        "multi_hot_padded": {"output_mode": "multi_hot", "max_tokens": 50, "pad_to_max_tokens": True},
        "no_split": {"split": None, "max_tokens": 20},
    }
    for name, kwargs in settings.items():
        layer = layers.TextVectorization(**kwargs)
        layer.adapt(corpus)
        tv[name] = {"vocabulary": vocab(layer), "size": layer.vocabulary_size(), "out": val(layer(test)),
                    "config": plain(layer.get_config())}
    batches = layers.TextVectorization(max_tokens=25)
    batches.adapt(corpus[i:i + 16] for i in range(0, 60, 16))
    tv["adapt_batches"] = {"vocabulary": vocab(batches), "out": val(batches(test))}
    steps = layers.TextVectorization()
    steps.adapt((corpus[i:i + 16] for i in range(0, 60, 16)), steps=2)
    tv["adapt_steps"] = {"vocabulary": vocab(steps)}

    def std(x):  # Keras on TensorFlow passes and wants a tf.Tensor; nnfit passes NumPy, takes either
        a = np.asarray(x)
        if a.dtype.kind in "OS":
            a = np.char.decode(a.astype(bytes), "utf-8")
        result = np.char.replace(np.char.lower(a), "<br />", " ")
        if IMPORT_LINE_IS_KERAS:
            import tensorflow as tf
            return tf.constant(result)
        return result
    custom = layers.TextVectorization(standardize=std, output_sequence_length=5)
    custom.adapt(np.array(["Hello<br />World", "hello there<br />you", "WORLD"]))
    tv["callable"] = {"vocabulary": vocab(custom), "out": val(custom(np.array(["Hello<br />you", "x"])))}
    given = layers.TextVectorization(vocabulary=["cat", "dog", "the"], output_sequence_length=4)
    tv["given"] = {"vocabulary": vocab(given), "out": val(given(test)), "config": plain(given.get_config())}
    given.set_vocabulary(["", "[UNK]", "sat", "mat"])
    tv["set_vocabulary"] = {"vocabulary": vocab(given), "without_special": vocab(given, False),
                            "out": val(given(test))}
    out["text_vectorization"] = tv

    # StringLookup.
    tokens = np.array([["a", "b", "c", "a"], ["d", "a", "b", "e"], ["c", "c", "f", "g"]])
    query = np.array([["a", "z", "e", "g"], ["", "q", "b", "zz"]])
    sl = {}
    lookups = {
        "default": {},
        "oov3": {"num_oov_indices": 3},
        "oov3_salt": {"num_oov_indices": 3, "salt": 1234},
        "oov3_salt_pair": {"num_oov_indices": 3, "salt": (5, 987654321)},
        "mask": {"mask_token": ""},
        "oov0_max4": {"num_oov_indices": 0, "max_tokens": 4},
        "one_hot": {"output_mode": "one_hot"},
        "multi_hot": {"output_mode": "multi_hot", "mask_token": ""},
        "count": {"output_mode": "count", "num_oov_indices": 2},
        "tf_idf": {"output_mode": "tf_idf"},
    }
    for name, kwargs in lookups.items():
        layer = layers.StringLookup(**kwargs)
        layer.adapt(tokens)
        entry = {"vocabulary": vocab(layer), "config": plain(layer.get_config())}
        if name != "oov0_max4":
            entry["out"] = val(layer(query))
        else:
            entry["out"] = val(layer(np.array([["a", "b"], ["c", "a"]])))
        sl[name] = entry
    inv = layers.StringLookup(vocabulary=["a", "b", "c"], invert=True, mask_token="[M]")
    sl["invert"] = {"vocabulary": vocab(inv), "out": val(inv(np.array([[0, 1, 2, 3, 4, 9]])))}
    special = layers.StringLookup(vocabulary=["[UNK]", "x", "y"], idf_weights=[0.1, 0.5, 2.0], output_mode="tf_idf")
    sl["given_special"] = {"vocabulary": vocab(special), "out": val(special(np.array([["x", "y", "y", "w"]])))}
    plain_vocab = layers.StringLookup(vocabulary=["x", "y"], idf_weights=[0.5, 2.0], output_mode="tf_idf")
    sl["given_plain"] = {"vocabulary": vocab(plain_vocab), "out": val(plain_vocab(np.array([["x", "w", "w"]])))}
    out["string_lookup"] = sl

    # IntegerLookup.
    ints = np.array([[5, 7, 7, 9, 12, 5, 5], [100, 7, 3, 3, 12, 0, 9]])
    iquery = np.array([[5, 7, 0, 42, -3, 1000]])
    il = {}
    for name, kwargs in {"default": {}, "oov3": {"num_oov_indices": 3},
                         "oov3_farmhash": {"num_oov_indices": 3, "oov_method": "farmhash"},
                         "oov3_salt": {"num_oov_indices": 3, "oov_method": "farmhash", "salt": 99},
                         "mask0": {"mask_token": 0}, "multi_hot": {"output_mode": "multi_hot", "max_tokens": 4},
                         "count": {"output_mode": "count"}}.items():
        layer = layers.IntegerLookup(**kwargs)
        layer.adapt(ints)
        il[name] = {"vocabulary": vocab(layer), "out": val(layer(iquery)), "config": plain(layer.get_config())}
    iinv = layers.IntegerLookup(vocabulary=[10, 20, 30], invert=True)
    il["invert"] = {"out": val(iinv(np.array([[0, 1, 2, 3, 7]])))}
    out["integer_lookup"] = il

    # CategoryEncoding.
    ce = {}
    for mode in ("one_hot", "multi_hot", "count"):
        layer = layers.CategoryEncoding(num_tokens=6, output_mode=mode)
        ce[mode] = {"rank1": val(layer(np.array([3, 2, 0, 1]))), "rank2": val(layer(np.array([[3, 5], [1, 8]]))),
                    "config": plain(layer.get_config())}
    ce["count_rank3"] = val(layers.CategoryEncoding(4, output_mode="count")(np.array([[[1, 1], [2, 3]],
                                                                                     [[0, 0], [1, 2]]])))
    ce["weights"] = val(layers.CategoryEncoding(4, output_mode="count")(np.array([[1, 1, 3]]),
                                                                        count_weights=np.array([[0.5, 0.25, 2.0]])))
    ce["one_hot_col"] = val(layers.CategoryEncoding(4, output_mode="one_hot")(np.array([[3], [1]])))
    out["category_encoding"] = ce

    # Hashing.
    strings = np.array([["cat"], ["dog"], [""], ["a long string of more than sixty-four bytes, to take the loop path!"],
                        ["Éclair"], ["mask"]])
    numbers = np.array([[0], [1], [-7], [123456789012], [42]])
    hs = {}
    for name, kwargs in {"plain": {}, "salt": {"salt": 133}, "salt_pair": {"salt": [7, 11]},
                         "mask": {"mask_value": "mask"}, "one_hot": {"output_mode": "one_hot"},
                         "multi_hot": {"output_mode": "multi_hot"}, "count": {"output_mode": "count"}}.items():
        layer = layers.Hashing(num_bins=7, **kwargs)
        hs[name] = {"strings": val(layer(strings)), "config": plain(layer.get_config())}
        if "mask_value" not in kwargs:
            hs[name]["numbers"] = val(layer(numbers))
    hs["floats"] = val(layers.Hashing(num_bins=1000)(np.array([[1.9], [-2.5], [3.0]])))
    hs["int_mask"] = val(layers.Hashing(num_bins=5, mask_value=0)(np.array([[0], [1], [2]])))
    hs["many"] = val(layers.Hashing(num_bins=1 << 30)(np.array(["w%d" % i for i in range(200)])))
    out["hashing"] = hs

    # HashedCrossing.
    hc = layers.HashedCrossing(num_bins=50)
    a, b = np.array([1, 2, 3, -4]), np.array(["A", "B", "C", ""])
    out["hashed_crossing"] = {"int_str": val(hc((a, b))), "str_int": val(hc((b, a))),
                              "three": val(hc((a, b, np.array([7, 8, 9, 10])))),
                              "col": val(hc((a[:, None], b[:, None]))),
                              "one_hot": val(layers.HashedCrossing(num_bins=5, output_mode="one_hot")((a, b))),
                              "config": plain(hc.get_config())}

    # Discretization.
    dz = {}
    data = rng.normal(size=(500, 3)).astype("float32")
    for name, kwargs in {"bins": {"bin_boundaries": [-1.0, 0.0, 0.1, 2.5]}, "adapt4": {"num_bins": 4},
                         "adapt10_eps": {"num_bins": 10, "epsilon": 0.001},
                         "one_hot": {"bin_boundaries": [0.0, 1.0], "output_mode": "one_hot"},
                         "multi_hot": {"bin_boundaries": [0.0, 1.0], "output_mode": "multi_hot"},
                         "count": {"bin_boundaries": [0.0, 1.0], "output_mode": "count"}}.items():
        layer = layers.Discretization(**kwargs)
        if "num_bins" in kwargs:
            layer.adapt(data)
        dz[name] = {"out": val(layer(np.array([[-1.5, 0.0, 0.1], [0.05, 1.0, 3.0]], "float32"))),
                    "boundaries": np.round(np.asarray(layer.bin_boundaries, "float64"), 5).tolist(),
                    "config": sorted(plain(layer.get_config()))}
    batched = layers.Discretization(num_bins=5)
    batched.adapt(data[i:i + 100] for i in range(0, 500, 100))
    dz["adapt_batches"] = np.round(np.asarray(batched.bin_boundaries, "float64"), 5).tolist()
    out["discretization"] = dz

    # keras.io's text classification from scratch, small: adapt, train on ids, end-to-end model.
    keras.utils.set_random_seed(1)
    good = ["good", "great", "fine", "nice", "superb"]
    bad = ["bad", "awful", "poor", "boring", "dull"]
    filler = ["movie", "the", "plot", "actors", "was", "a", "film"]
    texts, labels = [], []
    for i in range(256):
        pos = i % 2
        pool = good if pos else bad
        ws = [filler[int(rng.integers(7))] for _ in range(6)] + [pool[int(rng.integers(5))] for _ in range(2)]
        rng.shuffle(ws)
        texts.append(" ".join(ws).capitalize() + "!")
        labels.append(pos)
    texts, labels = np.array(texts), np.array(labels, "float32")
    vectorize = layers.TextVectorization(max_tokens=40, output_sequence_length=10)
    vectorize.adapt(texts)
    ids = np.asarray(vectorize(texts[:, None]))
    inputs = keras.Input(shape=(None,), dtype="int64")
    x = layers.Embedding(40, 8)(inputs)
    x = layers.GlobalAveragePooling1D()(x)
    predictions = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, predictions)
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    hist = model.fit(ids, labels, epochs=15, batch_size=32, verbose=0)
    string_input = keras.Input(shape=(1,), dtype="string")
    end_to_end = keras.Model(string_input, model(vectorize(string_input)))
    end_to_end.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    probe = np.array(["A good movie", "boring and dull", "superb, nice and great"], dtype=object)
    direct = np.asarray(model.predict(np.asarray(vectorize(probe[:, None])), verbose=0))
    e2e = np.asarray(end_to_end.predict(probe, verbose=0))
    loss, acc = end_to_end.evaluate(texts.astype(object), labels, verbose=0)
    out["text_classification"] = {"vocabulary": vocab(vectorize), "ids": ids[:3].tolist(),
                                  "final_accuracy": float(hist.history["accuracy"][-1]),
                                  "e2e_matches_model": bool(np.abs(direct - e2e).max() < 1e-5),
                                  "e2e_accuracy": float(acc),
                                  "probe_positive": (e2e.ravel() > 0.5).tolist()}

    # A .keras file of an end-to-end model, for the other framework (PREP_FILES).
    where = os.environ["PREP_FILES"]
    side = "keras" if IMPORT_LINE_IS_KERAS else "nnfit"
    other = "nnfit" if side == "keras" else "keras"
    path = os.path.join(where, other + ".keras")
    if os.path.exists(path):  # the other side's file: its predictions
        loaded = keras.models.load_model(path)
        want = np.load(os.path.join(where, other + ".npy"))
        out_file = np.asarray(loaded.predict(probe, verbose=0))
        print("FILE " + json.dumps({"max_diff": float(np.abs(out_file - want).max()),
                                    "vocabulary": vocab(loaded.layers[1])[:12]}))
    mine = os.path.join(where, side + ".keras")
    end_to_end.save(mine)
    np.save(os.path.join(where, side + ".npy"), e2e)
    print("PARITY " + json.dumps(out))
""")


def runs(argv):
    """Keras's result, nnfit's (which reads Keras's file), and Keras reading nnfit's file."""
    keras_python = argv[1]
    nnfit_python = argv[2] if len(argv) > 2 else sys.executable
    keras_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    keras_env.update(KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    with tempfile.TemporaryDirectory() as where:
        where = os.environ.get("PREP_KEEP", where)
        keras_script = SCRIPT.replace("IMPORT_LINE_IS_KERAS", "True")
        nnfit_script = SCRIPT.replace("IMPORT_LINE_IS_KERAS", "False")
        ref, _ = parity_runs.run(keras_python, keras_script, "import keras", dict(keras_env, PREP_FILES=where), 600,
                                 with_lines=("FILE ",))
        got, nnfit_read = parity_runs.run(nnfit_python, nnfit_script, "from nnfit import keras",
                                          dict(os.environ, PREP_FILES=where), 600, with_lines=("FILE ",))
        os.remove(os.path.join(where, "keras.keras"))  # Keras reads only nnfit's file now
        _, keras_read = parity_runs.run(keras_python, keras_script, "import keras", dict(keras_env, PREP_FILES=where),
                                        600, with_lines=("FILE ",))
    return ref, got, {"Keras -> nnfit": nnfit_read.get("FILE "), "nnfit -> Keras": keras_read.get("FILE ")}


def differences(want, have, path=""):
    """Where have differs from want, as messages (floats within 1e-5)."""
    if isinstance(want, dict):
        out = []
        for k in want:
            if not isinstance(have, dict) or k not in have:
                out.append(f"{path}.{k}: missing in nnfit's result")
            else:
                out += differences(want[k], have[k], f"{path}.{k}")
        return out
    if isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
        return [m for i, (a, b) in enumerate(zip(want, have)) for m in differences(a, b, f"{path}[{i}]")][:3]
    if isinstance(want, float) and isinstance(have, (int, float)) and not isinstance(have, bool):
        return [] if abs(want - have) <= 1e-5 * max(1.0, abs(want)) else [f"{path}: nnfit {have}, Keras {want}"]
    return [] if want == have else [f"{path}:\n  nnfit {have}\n  Keras {want}"]


def main():
    ref, got, files = runs(sys.argv)
    failures = []
    text = ref.pop("text_classification")
    mine = got.pop("text_classification", {})
    for key in ("vocabulary", "ids", "e2e_matches_model", "probe_positive"):
        failures += differences(text[key], mine.get(key), f"text_classification.{key}")
    for key in ("final_accuracy", "e2e_accuracy"):
        if abs(text[key] - mine.get(key, -1)) > 0.05:
            failures.append(f"text_classification.{key}: nnfit {mine.get(key)}, Keras {text[key]} (tolerance 0.05)")
    print(f"text classification: accuracy (nnfit, Keras) {mine.get('final_accuracy')}, {text['final_accuracy']}; "
          f"end-to-end {mine.get('e2e_accuracy')}, {text['e2e_accuracy']}")
    failures += differences(ref, got)
    cases = sum(len(v) if isinstance(v, dict) else 1 for v in ref.values())
    print(f"{cases} cases over {len(ref)} layers compared")
    for way, result in files.items():
        if result is None:
            failures.append(f"{way}: the file was not read")
            continue
        print(f"the end-to-end model's .keras file, {way}: max prediction difference {result['max_diff']:.2e}")
        if not result["max_diff"] < 1e-5:
            failures.append(f"{way}: predictions differ by {result['max_diff']} (tolerance 1e-5)")
        if result["vocabulary"] != text["vocabulary"][:12]:
            failures.append(f"{way}: the loaded vocabulary {result['vocabulary']} is not the saved one")
    if failures:
        sys.exit(f"{len(failures)} differences from Keras:\n" + "\n".join(failures))
    print("parity: ok")


if __name__ == "__main__":
    main()
