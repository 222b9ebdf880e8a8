"""nnfit.keras's preprocessing layers of strings and categories (issue 36) without Keras: the
hash functions against values TensorFlow 2.21 computed, the string rules TensorFlow's ops
follow, adapt on every kind of data, and models that start with these layers (Note
[Preprocessing prefix]): training, predicting from arrays and batches, files, refusals.
Keras.PreprocessingParity compares the same layers with real Keras."""
import json
import os
import zipfile

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import _hashing, layers

M63 = (1 << 63) - 1
STRINGS = [b"", b"a", b"hello world!", b"x" * 20, b"0123456789" * 4,
           b"The quick brown fox jumps over the lazy dog, again and again and again."]


def test_hashes_are_tensorflows():
    # tf.strings.to_hash_bucket_fast / _strong(key=[12345, 67890]) with 2**63 - 1 buckets.
    assert [_hashing.fingerprint64(s) % M63 for s in STRINGS] == [
        1936946117179621456, 3694432073954588132, 4577883861590986596, 8233088228747857348, 8835108245187232700,
        8103716448383103622]
    assert [_hashing.siphash(12345, 67890, s) % M63 for s in STRINGS] == [
        3320497352430948231, 3800837644910221272, 8825229407894538467, 4519853380350710924, 11269434120167503,
        3347142293122911525]
    assert _hashing.bucket_fast(["cat", "dog", 42], 10) == [6, 2, 6]  # an integer hashes as its decimal text


def test_text_vectorization_rules():
    tv = layers.TextVectorization()
    tv.adapt(np.array(["b a", "a b", "c"]))
    # Ties: count, then token, both descending (Keras's np.lexsort(...)[::-1]).
    assert tv.get_vocabulary() == ["", "[UNK]", "b", "a", "c"]
    lower = layers.TextVectorization(standardize="lower", split="whitespace", vocabulary=["éclair", "École", "x"])
    # tf.strings.lower lowers ASCII only; whitespace is ASCII only (a no-break space joins).
    out = lower(np.array(["ÉCLAIR École X", "x\u00a0x x"]))
    assert out.tolist() == [[1, 3, 4], [1, 4, 0]]
    bigrams = layers.TextVectorization(ngrams=2, vocabulary=["a b", "a", "b"])
    assert bigrams(["a b"]).tolist() == [[3, 4, 2]]  # width by width: unigrams, then bigrams
    chars = layers.TextVectorization(split="character", standardize=None, vocabulary=["h", "é"])
    assert chars(["hé!"]).tolist() == [[2, 3, 1]]


def test_text_vectorization_modes_and_callables():
    calls = []

    def standardize(x):
        calls.append(type(x))
        return np.char.upper(x)

    tv = layers.TextVectorization(standardize=standardize, split=lambda rows: [r.split("-") for r in rows],
                                  output_sequence_length=3)
    tv.adapt(["a-b-b", "c"])
    assert calls[0] is np.ndarray
    assert tv.get_vocabulary() == ["", "[UNK]", "B", "C", "A"]
    assert tv(["b-z-a-c"]).tolist() == [[2, 1, 4]]
    ragged = layers.TextVectorization(vocabulary=["a"], ragged=True)
    assert [r.tolist() for r in ragged(["a a", "a b c"])] == [[2, 2], [2, 1, 1]]
    counts = layers.TextVectorization(output_mode="count")
    counts.adapt(["x y y", "y"])
    assert counts(["y y z"]).tolist() == [[1, 2, 0]]
    tfidf = layers.TextVectorization(output_mode="tf_idf")
    tfidf.adapt(["x y", "y"])
    idf = np.log(1 + 2 / (1 + np.array([2, 1])))
    np.testing.assert_allclose(tfidf(["y x x"])[0], [0, idf[0], 2 * idf[1]], rtol=1e-6)


def test_lookups():
    sl = layers.StringLookup(num_oov_indices=0, vocabulary=["a", "b"])
    assert sl(["b", "a"]).tolist() == [1, 0]
    with pytest.raises(ValueError, match="all inputs should be in vocabulary"):
        sl(["c"])
    inv = layers.StringLookup(vocabulary=["a", "b"], invert=True)
    assert inv(np.array([[2, 0, 5]])).tolist() == [["b", "[UNK]", "[UNK]"]]
    with pytest.raises(ValueError, match="repeated term"):
        layers.StringLookup(vocabulary=["a", "a"])
    il = layers.IntegerLookup(num_oov_indices=2)
    il.adapt(np.array([3, 3, 9]))
    assert il.get_vocabulary() == [-1, -1, 3, 9]
    assert il(np.array([3, 4, 5])).tolist() == [2, 0, 1]  # floormod buckets
    multi = layers.StringLookup(output_mode="multi_hot", vocabulary=["a", "b"])
    with pytest.raises(RuntimeError, match="vocabulary size cannot be changed"):
        multi.set_vocabulary(["a", "b", "c"])  # as Keras: the encoded width is frozen


def test_adapt_sources(tmp_path):
    from nnfit.data import Dataset
    from nnfit.keras.utils import PyDataset

    data = np.array([[1], [2], [2], [7], [7], [7]], dtype=np.int64)
    want = [-1, 7, 2, 1]
    for source in (data, Dataset.from_tensor_slices(data).batch(2), (data[i:i + 3] for i in (0, 3))):
        layer = layers.IntegerLookup()
        layer.adapt(source)
        assert layer.get_vocabulary() == want

    class Rows(PyDataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return data[3 * i:3 * i + 3], np.zeros(3)

    layer = layers.IntegerLookup()
    layer.adapt(Rows())
    assert layer.get_vocabulary() == want
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("x\ny\n")
    sl = layers.StringLookup(vocabulary=str(vocab_file))
    assert sl(["y", "q"]).tolist() == [2, 0]
    d = layers.Discretization(num_bins=2)
    d.adapt(np.arange(10, dtype=np.float32))
    assert d(np.array([0.0, 9.0])).tolist() == [0, 1]


def _text_model():
    tv = layers.TextVectorization(max_tokens=30, output_sequence_length=6)
    tv.adapt(np.array(["good movie", "bad movie", "good good film", "bad plot"]))
    inp = keras.Input(shape=(1,), dtype="string")
    x = layers.Embedding(30, 4)(tv(inp))
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, layers.Dense(1, activation="sigmoid")(x)), tv


def test_model_with_a_prefix_trains_predicts_and_saves(tmp_path):
    keras.utils.set_random_seed(0)
    model, tv = _text_model()
    texts = np.array(["good movie", "bad movie", "good film", "bad plot"] * 8)
    labels = np.array([1, 0, 1, 0] * 8, dtype=np.float32)
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(texts, labels, epochs=40, batch_size=8, verbose=0)
    assert history.history["accuracy"][-1] == 1.0
    assert (model.predict(["good", "bad"], verbose=0).ravel() > 0.5).tolist() == [True, False]

    batches = [(texts[i:i + 8], labels[i:i + 8]) for i in range(0, 32, 8)]
    model.fit(iter(batches), epochs=1, verbose=0)  # a prefix runs on each batch from Python
    want = model.predict(texts, verbose=0)
    np.testing.assert_array_equal(model.predict((b[0] for b in batches), verbose=0), want)

    lines = []
    model.summary(print_fn=lines.append)
    assert any("text_vectorization (TextVectorization)" in l for l in lines)
    assert any("input_layer" in l and "(InputLayer)" in l for l in lines)

    path = tmp_path / "text.keras"
    model.save(path)
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
        vocab = z.read("assets/layers/text_vectorization/vocabulary.txt").decode()  # by class, as Keras
        assert "assets/layers/text_vectorization/_lookup_layer/vocabulary.txt" in z.namelist()
    assert [e["class_name"] for e in config["config"]["layers"]][:2] == ["InputLayer", "TextVectorization"]
    assert vocab.split("\n") == tv.get_vocabulary()
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(texts, verbose=0), want)
    assert loaded.layers[1].get_vocabulary() == tv.get_vocabulary()
    clone = keras.models.model_from_json(model.to_json())
    assert [l.__class__.__name__ for l in clone.layers][:2] == ["InputLayer", "TextVectorization"]


def test_sequential_and_several_inputs(tmp_path):
    tv = layers.TextVectorization(max_tokens=6, output_sequence_length=3)
    tv.adapt(["a b", "b c", "b"])
    seq = keras.Sequential([keras.Input(shape=(1,), dtype="string"), tv, layers.Embedding(6, 2), layers.Flatten(),
                            layers.Dense(1)])
    x = np.array([["a b"], ["b z"]])
    want = seq.predict(x, verbose=0)
    assert want.shape == (2, 1)
    assert json.loads(seq.to_json())["config"]["layers"][1]["class_name"] == "TextVectorization"
    seq.save(tmp_path / "seq.keras")
    loaded = keras.models.load_model(tmp_path / "seq.keras")
    assert type(loaded).__name__ == "Sequential"
    assert loaded.layers[0].get_vocabulary() == ["", "[UNK]", "b", "c", "a"]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), want)

    city = keras.Input(shape=(1,), dtype="string", name="city")
    age = keras.Input(shape=(1,), dtype="int64", name="age")
    crossed = layers.HashedCrossing(num_bins=8, output_mode="one_hot")([city, age])
    bins = layers.Discretization(bin_boundaries=[18, 65], output_mode="one_hot")(age)
    out = layers.Dense(1)(layers.Concatenate()([crossed, bins]))
    model = keras.Model([city, age], out)
    model.compile(optimizer="sgd", loss="mse")
    x = {"city": np.array([["Paris"], ["Oslo"], ["Lima"]]), "age": np.array([[10], [30], [70]])}
    model.fit(x, np.ones((3, 1)), epochs=1, verbose=0)
    assert model.predict(x, verbose=0).shape == (3, 1)


def test_refusals(tmp_path):
    from nnfit import _engine
    from nnfit.data import Dataset

    inp = keras.Input(shape=(3,))
    x = layers.Dense(3)(inp)
    with pytest.raises(NotImplementedError, match="must come first"):
        keras.Model(inp, layers.Dense(1)(layers.CategoryEncoding(4)(x)))
    model, _ = _text_model()
    model.compile(optimizer="adam", loss="mse")
    with pytest.raises(NotImplementedError, match="nnfit.data.Dataset's batches never reach Python"):
        model.fit(Dataset.from_tensor_slices((np.zeros((4, 6)), np.zeros((4, 1)))).batch(2), verbose=0)
    # The engine alone (the CLI's reader) names the layer it cannot run.
    with pytest.raises(NotImplementedError, match="TextVectorization 'text_vectorization.*' is a preprocessing layer"):
        _engine.get().Model.from_json(model.to_json(), "test", 0, device="cpu")
    # ONNX export would take the prefix's outputs for the model's inputs: refused, no file.
    with pytest.raises(NotImplementedError, match="preprocessing layers"):
        model.export(tmp_path / "text.onnx", format="onnx")
    assert not os.path.exists(tmp_path / "text.onnx")
    tfidf = layers.TextVectorization(output_mode="tf_idf")
    tfidf.adapt(["a b"])
    inp = keras.Input(shape=(1,), dtype="string")
    m = keras.Model(inp, layers.Dense(1)(tfidf(inp)))
    with pytest.raises(NotImplementedError, match="IDF weights"):
        m.save(tmp_path / "tfidf.keras")
    assert not os.path.exists(tmp_path / "tfidf.keras")


def test_api_names():
    from nnfit.keras._api_table import TABLE
    names = ("TextVectorization", "StringLookup", "IntegerLookup", "CategoryEncoding", "Hashing", "Discretization",
             "HashedCrossing")
    for name in names:
        assert name in TABLE["layers"]
        assert getattr(layers, name).__module__.startswith("nnfit.keras._")
        assert getattr(keras.layers, name) is getattr(layers, name)
    assert layers.StringLookup().get_config()["oov_token"] == "[UNK]"
