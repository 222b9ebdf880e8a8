"""keras.datasets, keras.random and Normalization.adapt (issue 36), run under real Keras (the
Keras venv) and under `from nnfit import keras`: what each observable gives must be equal.

- keras.datasets: this driver writes small files of Keras's layouts into a temporary
  KERAS_HOME (mnist.npz, imdb.npz and its word index, reuters.npz and its word index, the
  two housing .npz, the CIFAR-10 and CIFAR-100 archives as get_file keeps them, and Debian's
  real Fashion-MNIST files when installed) and both runs load them with Keras 3's
  arguments; the arrays are compared by dtype, shape and SHA-256 of their bytes (object
  arrays of sequences by their lists). Keras's own load_data runs on them with its module's
  get_file replaced by Keras's real get_file called with file_hash=None: the synthetic files
  do not have the published files' hashes, and Keras would try to download them again.
- keras.random: shapes, dtypes, means and standard deviations on 200,000 draws (within
  tolerances of the distribution's own values, printed rounded so both runs agree), a
  fixed seed repeating, a SeedGenerator advancing, and the exception types of bad arguments.
- Normalization.adapt on arrays, on lists of batches and on a generator, with axis -1,
  (1, 2), None and invert=True: the Keras run leaves its adapted weights and predictions in
  the temporary folder and the nnfit run compares its own with them within 1e-5.

usage: keras_datasets_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import io
import json
import os
import pickle
import shutil
import sys
import tarfile
import tempfile
import textwrap

import numpy as np

import parity_runs

FASHION_DIR = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")

SCRIPT = textwrap.dedent("""
    import hashlib
    import json
    import os
    import numpy as np
    IMPORT_LINE
    from keras import layers

    is_keras = not keras.__name__.startswith("nnfit")
    home = os.environ["KERAS_HOME"]
    out = {}
    if is_keras:  # Keras's get_file, without the published files' hashes (see the module docstring)
        import importlib
        from keras.src.utils import file_utils
        real_get_file = file_utils.get_file
        def get_file_without_hash(*args, **kwargs):
            kwargs["file_hash"] = None
            return real_get_file(*args, **kwargs)
        for name in ("mnist", "imdb", "reuters", "boston_housing", "california_housing", "cifar10", "cifar100"):
            importlib.import_module("keras.src.datasets." + name).get_file = get_file_without_hash

    def digest(a):
        a = np.asarray(a)
        if a.dtype == object:
            body = json.dumps([list(map(int, s)) for s in a]).encode()
        else:
            body = np.ascontiguousarray(a).tobytes()
        return [str(a.dtype), list(a.shape), hashlib.sha256(body).hexdigest()[:16]]

    def loaded(result):
        (xa, ya), (xb, yb) = result
        return [digest(xa), digest(ya), digest(xb), digest(yb)]

    # 1. keras.datasets
    d = keras.datasets
    out["mnist"] = loaded(d.mnist.load_data())
    out["mnist_path"] = loaded(d.mnist.load_data(path="mnist_small.npz"))
    if os.path.isdir(os.path.join(home, "datasets", "fashion-mnist")):
        out["fashion_mnist"] = loaded(d.fashion_mnist.load_data())
    out["cifar10"] = loaded(d.cifar10.load_data())
    out["cifar100_fine"] = loaded(d.cifar100.load_data())
    out["cifar100_coarse"] = loaded(d.cifar100.load_data(label_mode="coarse"))
    for i, kw in enumerate([{}, {"num_words": 40, "skip_top": 3}, {"maxlen": 25, "seed": 7},
                            {"start_char": None, "oov_char": None, "index_from": 0, "num_words": 30},
                            {"start_char": None, "index_from": 5, "oov_char": 9, "skip_top": 10}]):
        out[f"imdb_{i}"] = loaded(d.imdb.load_data(**kw))
        out[f"reuters_{i}"] = loaded(d.reuters.load_data(test_split=0.3 if i % 2 else 0.2, **kw))
    out["imdb_word_index"] = sorted(d.imdb.get_word_index().items())
    out["reuters_word_index"] = sorted(d.reuters.get_word_index().items())
    out["reuters_labels"] = list(d.reuters.get_label_names())
    out["boston"] = loaded(d.boston_housing.load_data())
    out["boston_split"] = loaded(d.boston_housing.load_data(test_split=0.35, seed=3))
    out["california_large"] = loaded(d.california_housing.load_data())
    out["california_small"] = loaded(d.california_housing.load_data(version="small", test_split=0.1))
    for name, call in (("imdb_maxlen", lambda: d.imdb.load_data(maxlen=1)),
                       ("boston_bad_split", lambda: d.boston_housing.load_data(test_split=1.0)),
                       ("california_bad_version", lambda: d.california_housing.load_data(version="medium")),
                       ("cifar100_bad_mode", lambda: d.cifar100.load_data(label_mode="middle")),
                       ("mnist_path_with_folder", lambda: d.mnist.load_data(path="sub/mnist.npz"))):
        try:
            call()
            out[name] = "no error"
        except Exception as e:
            out[name] = type(e).__name__

    # 2. keras.random
    R = keras.random
    n = 200000
    def stats(a, digits=1):
        a = np.asarray(a)
        return [str(a.dtype), list(a.shape), round(float(a.mean()), digits), round(float(a.std()), digits)]
    out["normal"] = stats(R.normal((n,), mean=2.0, stddev=3.0, seed=1))
    out["normal_f64"] = stats(R.normal((4, 50000), dtype="float64", seed=2))
    out["uniform"] = stats(R.uniform((n,), minval=-1.0, maxval=3.0, seed=3))
    out["truncated_normal"] = stats(R.truncated_normal((n,), stddev=2.0, seed=4))
    t = np.asarray(R.truncated_normal((n,), mean=1.0, stddev=0.5, seed=5))
    out["truncated_within_2_stddev"] = bool(t.min() >= 0.0 and t.max() <= 2.0)
    r = np.asarray(R.randint((n,), 3, 9, seed=6))
    out["randint"] = stats(r) + [int(r.min()), int(r.max())]
    out["randint_uint8"] = stats(R.randint((10, 10), 0, 5, dtype="uint8", seed=6))[:2]
    out["gamma"] = stats(R.gamma((n,), alpha=3.0, seed=7))  # mean 3, std sqrt(3)
    out["binomial"] = stats(R.binomial((n,), counts=10, probabilities=0.5, seed=8))  # mean 5, std 1.58
    out["beta"] = stats(R.beta((n,), alpha=2.0, beta=2.0, seed=9))  # mean 0.5, std 0.22
    c = np.asarray(R.categorical(np.log([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]), 50000, seed=10))
    out["categorical"] = [str(c.dtype), list(c.shape)] + [round(float((c[0] == k).mean()), 2) for k in range(3)] + \\
                         [int(c[1].max())]
    out["categorical_int64"] = str(np.asarray(R.categorical(np.zeros((2, 3)), 4, dtype="int64", seed=1)).dtype)
    x = np.ones((400, 500), dtype="float32")
    dr = np.asarray(R.dropout(x, 0.3, seed=11))
    out["dropout"] = [str(dr.dtype), list(dr.shape), round(float((dr == 0).mean()), 2),
                      sorted(set(np.round(np.unique(dr), 4).tolist()))]
    dn = np.asarray(R.dropout(x, 0.5, noise_shape=(None, 1), seed=12))
    out["dropout_noise_shape"] = bool(np.all(dn == dn[:, :1])) and 0 < float((dn[:, 0] == 0).mean()) < 1
    out["dropout_rate_1"] = float(np.asarray(R.dropout(x, 1.0)).max())
    s = np.asarray(R.shuffle(np.arange(1000).reshape(10, 100), axis=1, seed=13))
    out["shuffle"] = [list(s.shape), bool(np.all(np.sort(s, axis=1) == np.arange(1000).reshape(10, 100))),
                      bool(np.all(s[:, 0] - s[0, 0] == np.arange(10) * 100)),
                      not bool(np.all(s == np.arange(1000).reshape(10, 100)))]
    out["seed_repeats"] = all(np.array_equal(np.asarray(f(seed=21)), np.asarray(f(seed=21))) for f in (
        lambda seed: R.normal((5,), seed=seed), lambda seed: R.uniform((5,), seed=seed),
        lambda seed: R.randint((5,), 0, 100, seed=seed), lambda seed: R.gamma((5,), 2.0, seed=seed)))
    out["seeds_differ"] = not np.array_equal(np.asarray(R.normal((5,), seed=1)), np.asarray(R.normal((5,), seed=2)))
    g = R.SeedGenerator(42)
    s0 = np.asarray(g.state).tolist()
    a, b = np.asarray(R.normal((5,), seed=g)), np.asarray(R.normal((5,), seed=g))
    out["seed_generator"] = [s0, np.asarray(g.state).tolist(), str(np.asarray(g.state).dtype),
                             not np.array_equal(a, b), g.get_config()["seed"]]
    g1, g2 = R.SeedGenerator(7), R.SeedGenerator(7)
    out["seed_generator_repeats"] = all(np.array_equal(np.asarray(R.uniform((4,), seed=g1)),
                                                       np.asarray(R.uniform((4,), seed=g2))) for _ in range(3))
    keras.utils.set_random_seed(5)
    u1 = np.asarray(R.normal((6,)))
    keras.utils.set_random_seed(5)
    out["set_random_seed_repeats_unseeded"] = bool(np.array_equal(u1, np.asarray(R.normal((6,)))))
    out["unseeded_calls_differ"] = not np.array_equal(np.asarray(R.normal((6,))), np.asarray(R.normal((6,))))
    out["default_dtypes"] = [str(np.asarray(f).dtype) for f in (
        R.normal((2,)), R.uniform((2,)), R.truncated_normal((2,)), R.randint((2,), 0, 3), R.gamma((2,), 1.0),
        R.binomial((2,), 4, 0.5), R.beta((2,), 1.0, 1.0), R.categorical(np.zeros((1, 3)), 2))]
    errors = {}
    for name, call in (("uniform_int", lambda: R.uniform((2,), dtype="int32")),
                       ("randint_float", lambda: R.randint((2,), 0, 3, dtype="float32")),
                       ("categorical_1d", lambda: R.categorical(np.zeros(3), 2)),
                       ("seed_str", lambda: R.normal((2,), seed="a")),
                       ("seed_float", lambda: R.normal((2,), seed=1.5)),
                       ("generator_float", lambda: R.SeedGenerator(1.5)),
                       ("generator_kwarg", lambda: R.SeedGenerator(1, foo=2)),
                       ("dropout_int", lambda: R.dropout(np.ones((2, 2), "int32"), 0.5)),
                       ("dropout_rate", lambda: R.dropout(np.ones((2, 2), "float32"), 1.5)),
                       ("normal_int", lambda: R.normal((2,), dtype="int32")),
                       ("symbolic_shape", lambda: R.normal(keras.Input((3,)).shape)),
                       ("symbolic_dropout", lambda: R.dropout(keras.Input((3,)), 0.5))):
        try:
            call()
            errors[name] = "no error"
        except Exception as e:
            errors[name] = "ValueError or NotImplementedError" if name.startswith("symbolic") else type(e).__name__
    out["errors"] = errors

    # 3. Normalization.adapt
    rng = np.random.default_rng(3)
    data = (rng.normal(size=(64, 5, 3)) * np.array([1.0, 4.0, 0.5]) + np.array([2.0, -1.0, 10.0])).astype("float32")
    flat = data[:, 0, :]
    cases = {
        "array_last": (dict(), (3,), flat, flat),
        "batches_last": (dict(), (3,), [flat[:20], flat[20:45], flat[45:]], flat),
        "generator_xy": (dict(), (3,), lambda: ((flat[i:i + 16], np.zeros(16)) for i in range(0, 64, 16)), flat),
        "array_axes_1_2": (dict(axis=(1, 2)), (5, 3), data, data),
        "batches_axis_none": (dict(axis=None), (5, 3), [data[:32], data[32:]], data),
        "array_axis_1": (dict(axis=1), (5, 3), data, data),
        "invert": (dict(invert=True), (3,), flat, flat),
    }
    ref_path = os.path.join(home, "adapt_reference.npz")
    mine = {}
    for name, (kwargs, shape, source, x) in cases.items():
        norm = layers.Normalization(**kwargs)
        norm.adapt(source() if callable(source) else source)
        model = keras.Sequential([keras.Input(shape), norm])
        mine[name + "_weights"] = np.concatenate([np.ravel(w) for w in norm.get_weights()[:2]])
        mine[name + "_pred"] = model.predict(x, verbose=0)
        out[name + "_shapes"] = [list(np.shape(w)) for w in norm.get_weights()]
    if is_keras:
        np.savez(ref_path, **mine)
        out["adapt_within_1e-5"] = sorted(mine)
    else:
        ref = np.load(ref_path)
        worst = {k: float(np.abs(v - ref[k]).max()) for k, v in mine.items()}
        out["adapt_within_1e-5"] = sorted(k for k, v in worst.items() if v <= 1e-5)
        if len(out["adapt_within_1e-5"]) != len(mine):
            print("adapt differences:", worst)
    print("PARITY " + json.dumps(out))
""")


def _pickle_batch(d):
    return pickle.dumps({k.encode(): v for k, v in d.items()}, protocol=3)


def _tar(path, members, mode="w"):
    with tarfile.open(path, mode) as tar:
        for name, body in members:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))


def _ragged(rng, n, vocab):
    seqs = np.empty(n, dtype=object)
    for i in range(n):
        seqs[i] = [int(w) for w in rng.integers(1, vocab, size=int(rng.integers(3, 40)))]
    return seqs


def write_cache(home):
    """Small files of the layouts Keras's get_file keeps under `home`/datasets."""
    rng = np.random.default_rng(0)
    d = os.path.join(home, "datasets")
    os.makedirs(d)
    for name, n in (("mnist.npz", 60), ("mnist_small.npz", 12)):
        np.savez(os.path.join(d, name), x_train=rng.integers(0, 256, (n, 28, 28), dtype=np.uint8),
                 y_train=rng.integers(0, 10, n, dtype=np.uint8),
                 x_test=rng.integers(0, 256, (n // 3, 28, 28), dtype=np.uint8),
                 y_test=rng.integers(0, 10, n // 3, dtype=np.uint8))
    if os.path.isdir(FASHION_DIR):  # Debian's dataset-fashion-mnist: the real files
        shutil.copytree(FASHION_DIR, os.path.join(d, "fashion-mnist"))
    # CIFAR-10: Keras reads 5 x 10,000 training rows, so the archive is full-sized (plain tar).
    batches = [(f"cifar-10-batches-py/data_batch_{i}", _pickle_batch(
        {"data": rng.integers(0, 256, (10000, 3072), dtype=np.uint8), "labels": rng.integers(0, 10, 10000).tolist()}))
        for i in range(1, 6)]
    batches.append(("cifar-10-batches-py/test_batch", _pickle_batch(
        {"data": rng.integers(0, 256, (30, 3072), dtype=np.uint8), "labels": rng.integers(0, 10, 30).tolist()})))
    _tar(os.path.join(d, "cifar-10-batches-py-target_archive"), batches)
    _tar(os.path.join(d, "cifar-100-python-target_archive"), [
        (f"cifar-100-python/{split}", _pickle_batch({
            "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
            "fine_labels": rng.integers(0, 100, n).tolist(), "coarse_labels": rng.integers(0, 20, n).tolist()}))
        for split, n in (("train", 40), ("test", 12))], mode="w:gz")
    np.savez(os.path.join(d, "imdb.npz"), x_train=_ragged(rng, 50, 60), y_train=rng.integers(0, 2, 50),
             x_test=_ragged(rng, 30, 60), y_test=rng.integers(0, 2, 30))
    np.savez(os.path.join(d, "reuters.npz"), x=_ragged(rng, 70, 80), y=rng.integers(0, 46, 70))
    for name in ("imdb_word_index.json", "reuters_word_index.json"):
        with open(os.path.join(d, name), "w") as f:
            json.dump({f"w{i}": i for i in range(1, 60)}, f)
    np.savez(os.path.join(d, "boston_housing.npz"), x=rng.normal(size=(50, 13)), y=rng.normal(size=50))
    np.savez(os.path.join(d, "california_housing.npz"), x=rng.normal(size=(700, 8)).astype("float32"),
             y=rng.normal(size=700).astype("float32"))


def main():
    home = tempfile.mkdtemp(prefix="nnfit_datasets_parity_")
    try:
        write_cache(home)
        os.environ["KERAS_HOME"] = home
        keras_out, nnfit_out = parity_runs.run_both(SCRIPT, sys.argv, timeout=900)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    failed = [k for k in keras_out if keras_out[k] != nnfit_out.get(k)]
    for k in sorted(keras_out):
        shown = str(keras_out[k])
        print(f"{'ok  ' if k not in failed else 'DIFF'} {k}: keras {shown[:300]}" +
              ("" if k not in failed else f"\n     nnfit {str(nnfit_out.get(k))[:300]}"))
    if "fashion_mnist" not in keras_out:
        print(f"(Fashion-MNIST not compared: {FASHION_DIR} is absent; Debian's dataset-fashion-mnist has it)")
    if failed:
        sys.exit(f"{len(failed)} of {len(keras_out)} differ from Keras: {failed}")
    print(f"all {len(keras_out)} agree with Keras")


if __name__ == "__main__":
    main()
