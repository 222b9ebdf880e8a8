"""keras.datasets, keras.random and Normalization.adapt in nnfit.keras (issue 36). The same
cases run side by side with real Keras 3.15 in keras_datasets_parity.py; here each result is
checked against what Keras's code computes (its shuffles, shifts and splits written out)."""
import collections
import gzip
import io
import json
import os
import pickle
import shutil
import tarfile
import tempfile

import numpy as np
import pytest

import nnfit
from nnfit import keras
from nnfit.keras import layers


@pytest.fixture
def keras_home(monkeypatch):
    """An empty Keras cache folder (KERAS_HOME), removed afterwards."""
    home = tempfile.mkdtemp(prefix="nnfit_test_datasets_")
    monkeypatch.setenv("KERAS_HOME", home)
    os.makedirs(os.path.join(home, "datasets"))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _ragged(seqs):
    a = np.empty(len(seqs), dtype=object)
    for i, s in enumerate(seqs):
        a[i] = list(s)
    return a


# keras.datasets: files missing.
@pytest.mark.parametrize("load,where,url", [
    (lambda: keras.datasets.mnist.load_data(), "mnist.npz", "tf-keras-datasets/mnist.npz"),
    (lambda: keras.datasets.imdb.load_data(), "imdb.npz", "tf-keras-datasets/imdb.npz"),
    (lambda: keras.datasets.imdb.get_word_index(), "imdb_word_index.json", "tf-keras-datasets/imdb_word_index.json"),
    (lambda: keras.datasets.reuters.load_data(), "reuters.npz", "tf-keras-datasets/reuters.npz"),
    (lambda: keras.datasets.reuters.get_word_index(), "reuters_word_index.json", "reuters_word_index.json"),
    (lambda: keras.datasets.boston_housing.load_data(), "boston_housing.npz", "boston_housing.npz"),
    (lambda: keras.datasets.california_housing.load_data(), "california_housing.npz", "california_housing.npz"),
    (lambda: keras.datasets.fashion_mnist.load_data(), os.path.join("fashion-mnist", "train-labels-idx1-ubyte.gz"),
     "tf-keras-datasets/train-labels-idx1-ubyte.gz"),
    (lambda: keras.datasets.cifar10.load_data(), "cifar-10-batches-py-target_archive",
     "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"),
    (lambda: keras.datasets.cifar100.load_data(), "cifar-100-python-target_archive",
     "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"),
])
def test_a_missing_file_names_the_path_and_the_url(keras_home, load, where, url):
    with pytest.raises(FileNotFoundError) as e:
        load()
    path = os.path.join(keras_home, "datasets", where)
    assert e.value.filename == path
    assert path in str(e.value) and url in str(e.value) and "Download" in str(e.value)


def test_a_keras_home_not_made_yet_is_named_as_keras_would_make_it(keras_home, monkeypatch):
    home = os.path.join(keras_home, "not_yet")  # Keras makes it when imported
    monkeypatch.setenv("KERAS_HOME", home)
    with pytest.raises(FileNotFoundError) as e:
        keras.datasets.boston_housing.load_data()
    assert e.value.filename == os.path.join(home, "datasets", "boston_housing.npz")


def test_fashion_mnist_error_mentions_debians_files(keras_home):
    with pytest.raises(FileNotFoundError, match="/usr/share/datasets/fashion-mnist"):
        keras.datasets.fashion_mnist.load_data()


def test_a_path_with_a_folder_is_refused_as_keras_does(keras_home):
    with pytest.raises(ValueError, match="Paths are no longer accepted"):
        keras.datasets.mnist.load_data(path=os.path.join("sub", "mnist.npz"))


# keras.datasets: reading Keras's files.
def test_mnist_reads_keras_npz(keras_home):
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.integers(0, 256, (5, 28, 28), dtype=np.uint8), "y_train": np.arange(5, dtype=np.uint8),
              "x_test": rng.integers(0, 256, (2, 28, 28), dtype=np.uint8), "y_test": np.arange(2, dtype=np.uint8)}
    np.savez(os.path.join(keras_home, "datasets", "mnist.npz"), **arrays)
    (xa, ya), (xb, yb) = keras.datasets.mnist.load_data()
    for got, key in ((xa, "x_train"), (ya, "y_train"), (xb, "x_test"), (yb, "y_test")):
        assert got.dtype == np.uint8 and np.array_equal(got, arrays[key])


def test_a_file_without_keras_arrays_is_named(keras_home):
    path = os.path.join(keras_home, "datasets", "mnist.npz")
    np.savez(path, x=np.zeros(2))
    with pytest.raises(ValueError, match="no array 'x_train'"):
        keras.datasets.mnist.load_data()


def test_fashion_mnist_reads_gzip_idx(keras_home):
    folder = os.path.join(keras_home, "datasets", "fashion-mnist")
    os.makedirs(folder)
    images = np.arange(3 * 28 * 28, dtype=np.uint32).astype(np.uint8).reshape(3, 28, 28)
    for prefix, n in (("train", 3), ("t10k", 2)):
        with gzip.open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(b"\0\0\x08\x01" + n.to_bytes(4, "big") + bytes(range(n)))
        with gzip.open(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"), "wb") as f:
            f.write(b"\0\0\x08\x03" + n.to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + images[:n].tobytes())
    (xa, ya), (xb, yb) = keras.datasets.fashion_mnist.load_data()
    assert xa.shape == (3, 28, 28) and np.array_equal(xa, images) and list(ya) == [0, 1, 2]
    assert xb.shape == (2, 28, 28) and np.array_equal(xb, images[:2]) and list(yb) == [0, 1]


def test_cifar100_extracts_keras_archive_and_is_channels_last(keras_home):
    rng = np.random.default_rng(1)
    data = {s: rng.integers(0, 256, (n, 3072), dtype=np.uint8) for s, n in (("train", 4), ("test", 2))}
    archive = os.path.join(keras_home, "datasets", "cifar-100-python-target_archive")
    with tarfile.open(archive, "w:gz") as tar:
        for split, x in data.items():
            body = pickle.dumps({b"data": x, b"fine_labels": list(range(len(x))),
                                 b"coarse_labels": [7] * len(x)}, protocol=3)
            info = tarfile.TarInfo(f"cifar-100-python/{split}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    (xa, ya), (xb, yb) = keras.datasets.cifar100.load_data()
    assert os.path.isfile(os.path.join(keras_home, "datasets", "cifar-100-python-target", "cifar-100-python", "train"))
    assert xa.shape == (4, 32, 32, 3) and ya.shape == (4, 1) and list(ya[:, 0]) == [0, 1, 2, 3]
    assert np.array_equal(xa[1], data["train"][1].reshape(3, 32, 32).transpose(1, 2, 0))
    (_, ya), _ = keras.datasets.cifar100.load_data(label_mode="coarse")
    assert list(ya[:, 0]) == [7, 7, 7, 7]
    with pytest.raises(ValueError, match="label_mode"):
        keras.datasets.cifar100.load_data(label_mode="middle")


def test_cifar_refuses_a_pickle_of_other_objects(keras_home):
    folder = os.path.join(keras_home, "datasets", "cifar-100-python-target", "cifar-100-python")
    os.makedirs(folder)
    with open(os.path.join(folder, "train"), "wb") as f:
        pickle.dump({b"data": collections.Counter()}, f)  # an object of another class
    with pytest.raises(pickle.UnpicklingError, match="Refusing"):
        keras.datasets.cifar100.load_data()


def _imdb_keras(x_train, y_train, x_test, y_test, num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1,
                oov_char=2, index_from=3):
    """Keras's imdb.load_data steps, written out for the test."""
    rng = np.random.RandomState(seed)
    i = np.arange(len(x_train))
    rng.shuffle(i)
    j = np.arange(len(x_test))
    rng.shuffle(j)
    xa, ya, xb, yb = [x_train[k] for k in i], y_train[i], [x_test[k] for k in j], y_test[j]
    if start_char is not None:
        xa, xb = ([[start_char] + [w + index_from for w in s] for s in xs] for xs in (xa, xb))
    else:
        xa, xb = ([[w + index_from for w in s] for s in xs] for xs in (xa, xb))
    if maxlen:
        keep_a, keep_b = [len(s) < maxlen for s in xa], [len(s) < maxlen for s in xb]
        xa, ya = [s for s, k in zip(xa, keep_a) if k], ya[keep_a]
        xb, yb = [s for s, k in zip(xb, keep_b) if k], yb[keep_b]
    top = num_words or max(max(s) for s in xa + xb)
    fix = (lambda s: [w if skip_top <= w < top else oov_char for w in s]) if oov_char is not None else \
        (lambda s: [w for w in s if skip_top <= w < top])
    return [fix(s) for s in xa], ya, [fix(s) for s in xb], yb


@pytest.mark.parametrize("kwargs", [{}, {"num_words": 9, "skip_top": 2}, {"maxlen": 5, "seed": 4},
                                    {"start_char": None, "oov_char": None, "num_words": 8}])
def test_imdb_shuffles_shifts_and_cuts_as_keras(keras_home, kwargs):
    seqs_a = [[1, 2, 3], [4, 5], [6, 1, 1, 2], [3], [2, 2, 2, 2, 2, 2]]
    seqs_b = [[5, 4, 3, 2], [1], [7, 7]]
    ya, yb = np.array([0, 1, 0, 1, 1]), np.array([1, 0, 1])
    np.savez(os.path.join(keras_home, "datasets", "imdb.npz"), x_train=_ragged(seqs_a), y_train=ya,
             x_test=_ragged(seqs_b), y_test=yb)
    (xa, got_ya), (xb, got_yb) = keras.datasets.imdb.load_data(**kwargs)
    exp_xa, exp_ya, exp_xb, exp_yb = _imdb_keras(seqs_a, ya, seqs_b, yb, **kwargs)
    assert xa.dtype == object and [list(s) for s in xa] == exp_xa and list(got_ya) == list(exp_ya)
    assert [list(s) for s in xb] == exp_xb and list(got_yb) == list(exp_yb)


def test_imdb_maxlen_keeping_nothing_is_keras_error(keras_home):
    np.savez(os.path.join(keras_home, "datasets", "imdb.npz"), x_train=_ragged([[1, 2], [3, 4, 5]]),
             y_train=np.array([0, 1]), x_test=_ragged([[1, 2], [3]]), y_test=np.array([0, 1]))
    with pytest.raises(ValueError, match="Increase maxlen"):
        keras.datasets.imdb.load_data(maxlen=2)


def test_word_indexes_and_reuters_split(keras_home):
    d = os.path.join(keras_home, "datasets")
    for name in ("imdb_word_index.json", "reuters_word_index.json"):
        with open(os.path.join(d, name), "w") as f:
            json.dump({"the": 1, "film": 19}, f)
    assert keras.datasets.imdb.get_word_index() == {"the": 1, "film": 19}
    assert keras.datasets.reuters.get_word_index() == {"the": 1, "film": 19}
    assert len(keras.datasets.reuters.get_label_names()) == 46
    np.savez(os.path.join(d, "reuters.npz"), x=_ragged([[i + 1] * (i % 4 + 1) for i in range(10)]), y=np.arange(10))
    (xa, ya), (xb, yb) = keras.datasets.reuters.load_data(test_split=0.3, seed=5)
    order = np.arange(10)
    np.random.RandomState(5).shuffle(order)
    assert len(xa) == 7 and len(xb) == 3 and list(ya) + list(yb) == list(order)
    word = order[0] + 1 + 3  # shifted by index_from; the largest word (13) is num_words, so out of vocabulary
    assert list(xa[0]) == [1] + [word if word < 13 else 2] * (order[0] % 4 + 1)


def test_housing_split_and_arguments(keras_home):
    d = os.path.join(keras_home, "datasets")
    x, y = np.arange(40.0).reshape(20, 2), np.arange(20.0)
    np.savez(os.path.join(d, "boston_housing.npz"), x=x, y=y)
    (xa, ya), (xb, yb) = keras.datasets.boston_housing.load_data(test_split=0.25, seed=2)
    order = np.arange(20)
    np.random.RandomState(2).shuffle(order)
    assert np.array_equal(ya, y[order[:15]]) and np.array_equal(xb, x[order[15:]])
    with pytest.raises(ValueError, match="test_split"):
        keras.datasets.boston_housing.load_data(test_split=1.0)
    np.savez(os.path.join(d, "california_housing.npz"), x=np.arange(1400.0).reshape(700, 2), y=np.arange(700.0))
    (xa, ya), (xb, yb) = keras.datasets.california_housing.load_data(version="small")
    assert len(ya) + len(yb) == 600 and len(yb) == 120 and max(ya.max(), yb.max()) < 600
    assert len(keras.datasets.california_housing.load_data()[0][1]) == 560
    with pytest.raises(ValueError, match="version"):
        keras.datasets.california_housing.load_data(version="medium")


# keras.random
R = keras.random


def test_random_shapes_dtypes_and_statistics():
    n = 100000
    a = R.normal((n,), mean=2.0, stddev=3.0, seed=1)
    assert a.dtype == np.float32 and a.shape == (n,) and abs(a.mean() - 2) < 0.05 and abs(a.std() - 3) < 0.05
    u = R.uniform((4, n // 4), minval=-1.0, maxval=3.0, dtype="float64", seed=2)
    assert u.dtype == np.float64 and u.shape == (4, n // 4) and u.min() >= -1 and u.max() < 3
    assert abs(u.mean() - 1) < 0.03
    t = R.truncated_normal((n,), mean=1.0, stddev=0.5, seed=3)
    assert t.min() >= 0.0 and t.max() <= 2.0 and abs(t.std() - 0.5 * 0.8796) < 0.01
    r = R.randint((n,), 3, 9, seed=4)
    assert r.dtype == np.int32 and r.min() == 3 and r.max() == 8
    assert R.randint((3,), 0, 5, dtype="uint8").dtype == np.uint8
    g = R.gamma((n,), alpha=3.0, seed=5)
    assert g.dtype == np.float32 and abs(g.mean() - 3) < 0.05 and abs(g.var() - 3) < 0.1
    b = R.binomial((n,), counts=10, probabilities=0.3, seed=6)
    assert b.dtype == np.float32 and abs(b.mean() - 3) < 0.05 and set(np.unique(b)) <= set(range(11))
    be = R.beta((n,), alpha=2.0, beta=5.0, seed=7)
    assert be.min() > 0 and be.max() < 1 and abs(be.mean() - 2 / 7) < 0.01
    c = R.categorical(np.array([np.log([0.1, 0.2, 0.7]), [0.0, -np.inf, -np.inf]]), 20000, seed=8)
    assert c.dtype == np.int32 and c.shape == (2, 20000)
    assert abs((c[0] == 2).mean() - 0.7) < 0.02 and np.all(c[1] == 0)


def test_dropout_and_shuffle():
    x = np.ones((300, 400), dtype="float32")
    d = R.dropout(x, 0.25, seed=1)
    assert d.dtype == np.float32 and abs((d == 0).mean() - 0.25) < 0.01
    assert np.allclose(np.unique(d), [0.0, 1 / 0.75])
    per_row = R.dropout(x, 0.5, noise_shape=(None, 1), seed=2)
    assert np.all(per_row == per_row[:, :1])
    assert np.array_equal(R.dropout(x, 0.0), x) and not R.dropout(x, 1.0).any()
    s = R.shuffle(np.arange(50).reshape(5, 10), axis=1, seed=3)
    assert np.array_equal(np.sort(s, axis=1), np.arange(50).reshape(5, 10))
    assert np.all(s - s[0] == (np.arange(5) * 10)[:, None])  # one permutation of the columns
    assert not np.array_equal(s, np.arange(50).reshape(5, 10))


def test_seeds_and_seed_generator_as_keras():
    assert np.array_equal(R.normal((4,), seed=9), R.normal((4,), seed=9))
    assert not np.array_equal(R.normal((4,), seed=9), R.normal((4,), seed=10))
    g = R.SeedGenerator(42)
    assert g.state.tolist() == [42, 0] and g.state.dtype == np.int64
    first, second = R.uniform((4,), seed=g), R.uniform((4,), seed=g)
    assert g.state.tolist() == [42, 2] and not np.array_equal(first, second)
    h = R.SeedGenerator(42)
    assert np.array_equal(R.uniform((4,), seed=h), first)  # the same state, the same draw
    assert g.get_config() == {"seed": 42, "name": g.name} and R.SeedGenerator.from_config(g.get_config()).name
    keras.utils.set_random_seed(3)
    a = R.normal((5,))
    keras.utils.set_random_seed(3)
    assert np.array_equal(a, R.normal((5,))) and not np.array_equal(R.normal((5,)), R.normal((5,)))


@pytest.mark.parametrize("call,error,match", [
    (lambda: R.uniform((2,), dtype="int32"), ValueError, "floating point"),
    (lambda: R.normal((2,), dtype="int32"), TypeError, "floating point"),
    (lambda: R.randint((2,), 0, 3, dtype="float32"), ValueError, "integer"),
    (lambda: R.randint((2,), 3, 3), ValueError, "minval must be less than maxval"),
    (lambda: R.categorical(np.zeros(3), 2), ValueError, "2-D"),
    (lambda: R.normal((2,), seed="a"), ValueError, "SeedGenerator"),
    (lambda: R.SeedGenerator(1.5), ValueError, "must be an integer"),
    (lambda: R.SeedGenerator(1, foo=2), ValueError, "Unrecognized keyword"),
    (lambda: R.dropout(np.ones(2, "int32"), 0.5), ValueError, "floating point"),
    (lambda: R.dropout(np.ones(2, "float32"), 1.5), ValueError, "rate"),
    (lambda: R.shuffle(np.ones((2, 2)), axis=2), ValueError, "axis 2"),
    (lambda: R.normal((2,), dtype="bfloat16"), NotImplementedError, "bfloat16"),
    (lambda: R.normal(keras.Input((3,)).shape), ValueError, "fully known"),
])
def test_random_argument_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_random_on_symbolic_tensors_names_the_function():
    with pytest.raises(NotImplementedError, match="keras.random.dropout"):
        R.dropout(keras.Input((3,)), 0.5)

    class Noisy(layers.Layer):
        def call(self, x):
            return x + R.normal((3,))

    with pytest.raises(NotImplementedError, match="keras.random.normal"):
        keras.Model(inp := keras.Input((3,)), Noisy()(inp))


# Normalization.adapt
def _data():
    rng = np.random.default_rng(3)
    return (rng.normal(size=(64, 5, 3)) * [1.0, 4.0, 0.5] + [2.0, -1.0, 10.0]).astype("float32")


def test_adapt_on_an_array_sets_keras_statistics_and_predicts():
    x = _data()[:, 0, :]
    norm = layers.Normalization()
    norm.adapt(x)
    mean, var, count = norm.get_weights()
    assert np.allclose(mean, x.mean(0), atol=1e-6) and np.allclose(var, x.var(0), atol=1e-5) and count == 0
    model = keras.Sequential([keras.Input((3,)), norm])
    assert np.allclose(model.predict(x, verbose=0), (x - x.mean(0)) / x.std(0), atol=1e-5)
    inverse = layers.Normalization(invert=True)
    inverse.adapt(x)
    back = keras.Sequential([keras.Input((3,)), inverse]).predict(np.zeros((2, 3), "float32"), verbose=0)
    assert np.allclose(back, x.mean(0), atol=1e-5)


@pytest.mark.parametrize("source", ["list", "generator", "dataset", "rows", "pydataset"])
def test_adapt_on_batches_merges_as_keras(source):
    x = _data()[:, 0, :]
    if source == "list":
        data = [x[:10], x[10:40], x[40:]]
    elif source == "generator":
        data = ((x[i:i + 16], np.zeros(16)) for i in range(0, 64, 16))
    elif source == "dataset":
        data = nnfit.data.Dataset.from_tensor_slices((x, np.zeros(64, "int64"))).batch(24)
    elif source == "rows":  # unbatched rows: batched by 128, as Keras batches a tf.data.Dataset
        data = nnfit.data.Dataset.from_tensor_slices(x)
    else:
        class Batches(keras.utils.PyDataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return x[i * 16:(i + 1) * 16], np.zeros(16)
        data = Batches()
    norm = layers.Normalization()
    norm.adapt(data)
    mean, var, _ = norm.get_weights()
    assert np.allclose(mean, x.mean(0), atol=1e-5) and np.allclose(var, x.var(0), rtol=1e-5, atol=1e-5)


def test_adapt_axes_and_a_layer_in_a_built_model():
    x = _data()
    both = layers.Normalization(axis=(1, 2))
    both.adapt(x)
    assert both.get_weights()[0].shape == (5, 3) and np.allclose(both.get_weights()[0], x.mean(0), atol=1e-5)
    single = layers.Normalization(axis=None)
    single.adapt([x[:30], x[30:]])
    assert single.get_weights()[0].shape == () and abs(float(single.get_weights()[1]) - x.var()) < 1e-4
    norm = layers.Normalization()
    model = keras.Sequential([keras.Input((5, 3)), norm])
    before = model.predict(x, verbose=0)
    assert np.allclose(before, x)  # mean 0, variance 1 until adapted
    norm.adapt(x)
    assert np.allclose(model.predict(x, verbose=0), (x - x.mean((0, 1))) / x.std((0, 1)), atol=1e-5)
    folder = tempfile.mkdtemp(prefix="nnfit_test_adapt_")
    try:  # an adapted layer saves and loads (its int64 count included)
        path = os.path.join(folder, "m.keras")
        model.save(path)
        loaded = keras.models.load_model(path)
        assert np.allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    finally:
        shutil.rmtree(folder)


def test_adapt_bad_input():
    with pytest.raises(ValueError, match="given `mean` and `variance`"):
        layers.Normalization(mean=1.0, variance=2.0).adapt(np.ones((4, 2)))
    with pytest.raises(ValueError, match="empty iterable"):
        layers.Normalization().adapt([])
    with pytest.raises(TypeError, match="Unsupported data type"):
        layers.Normalization().adapt(3.0)
    with pytest.raises(ValueError, match=r"range \[-ndim, ndim\)"):
        layers.Normalization(axis=3).adapt(np.ones((4, 2)))
    norm = layers.Normalization()
    norm.adapt(np.ones((4, 2)))
    with pytest.raises(ValueError, match="incompatible shape"):
        norm.adapt(np.ones((4, 3)))
    with pytest.raises(ValueError, match="incompatible shape"):
        layers.Normalization().adapt([np.ones((4, 2)), np.ones((4, 3))])
