"""The rest of a Keras user's day (issue 36) in nnfit.keras: Embedding built from Python,
summary() before compile, a Keras file saved with its optimizer unbuilt, on_train_end's
logs, set_random_seed, Sequential.add after summary(), MultiHeadAttention's call forms,
fine-tuning (trainable at any time, taking effect at compile), weights before compile, and
the names Keras users reach for. The expected figures are real Keras 3.15.1's (the same
cases run side by side under both in keras_user_day_parity.py)."""
import json
import os

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "model", "fixtures")


def summary_lines(model):
    lines = []
    model.summary(print_fn=lines.append)
    return [line.strip() for line in lines if "params" in line]


# 1. Embedding.
def test_embedding_takes_input_dim_and_keras_uniform_default():
    emb = layers.Embedding(50, 8)
    assert emb.get_config()["input_dim"] == 50
    assert layers.Embedding(input_dim=7, output_dim=2).get_config()["input_dim"] == 7
    model = keras.Sequential([keras.Input((6,), dtype="int32"), emb, layers.GlobalAveragePooling1D(),
                              layers.Dense(2)])
    assert model.count_params() == 418  # Keras: 50 * 8 + 8 * 2 + 2
    w = emb.get_weights()[0]
    assert w.shape == (50, 8) and np.abs(w).max() <= 0.05 and np.abs(w).max() > 0.04  # RandomUniform(-0.05, 0.05)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    ids = np.random.default_rng(0).integers(0, 50, size=(64, 6)).astype("int32")
    history = model.fit(ids, (ids[:, 0] > 25).astype("int64"), epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    # input_dim stays the first-layer shortcut of the layers that have no argument of that name.
    assert keras.Sequential([layers.Dense(4, input_dim=3)]).count_params() == 16
    assert "input_dim" not in layers.Dense(4, input_dim=3).get_config()


# 2. summary() before compile.
def test_summary_before_compile_counts_keras_params():
    convnet = keras.Sequential([keras.Input(shape=(28, 28, 1)), layers.Conv2D(32, (3, 3), activation="relu"),
                                layers.MaxPooling2D((2, 2)), layers.Conv2D(64, (3, 3), activation="relu"),
                                layers.MaxPooling2D((2, 2)), layers.Flatten(), layers.Dropout(0.5),
                                layers.Dense(10, activation="softmax")])
    assert summary_lines(convnet)[0] == "Total params: 34,826 (136.04 KB)"  # the keras.io MNIST convnet
    norms = keras.Sequential([keras.Input((4,)), layers.Dense(8), layers.BatchNormalization(),
                              layers.LayerNormalization(), layers.RMSNormalization()])
    assert summary_lines(norms) == ["Total params: 96 (384.00 B)", "Trainable params: 80 (320.00 B)",
                                    "Non-trainable params: 16 (64.00 B)"]  # it crashed
    inp = keras.Input((5,))
    functional = keras.Model(inp, layers.Dense(3)(layers.BatchNormalization()(inp)))
    assert summary_lines(functional)[0] == "Total params: 38 (152.00 B)"


# 3. A Keras file saved after compile, before training.
@pytest.mark.parametrize("ext", [".keras", ".h5"])
def test_keras_file_with_unbuilt_optimizer_evaluates_and_fits_as_keras(ext):
    io = np.load(os.path.join(FIXTURES, "unbuilt_adam_keras3_io.npz"))
    model = keras.models.load_model(os.path.join(FIXTURES, "unbuilt_adam_keras3" + ext))
    assert model.optimizer.iterations == 0
    logs = model.evaluate(io["x"], io["y"], batch_size=8, verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(float(io["loss"]), rel=1e-5)
    assert logs["mae"] == pytest.approx(float(io["mae"]), rel=1e-5)
    model.fit(io["x"], io["y"], batch_size=4, epochs=1, shuffle=False, verbose=0)
    assert model.optimizer.iterations == int(io["iterations"])
    for i, w in enumerate(model.get_weights()):  # Keras's weights after the same two Adam steps
        np.testing.assert_allclose(w, io[f"fitted_{i}"], atol=1e-5)


# 4. on_train_end, set_random_seed, Sequential.add after summary, MultiHeadAttention.
def test_on_train_end_gets_the_last_epochs_logs(blobs):
    x, y = blobs

    class Ends(keras.callbacks.Callback):
        def on_train_end(self, logs=None):
            self.logs = dict(logs)

    model = keras.Sequential([keras.Input((8,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    ends = Ends()
    history = model.fit(x, y, epochs=2, validation_split=0.25, verbose=0, callbacks=[ends])
    assert sorted(ends.logs) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert ends.logs == {k: v[-1] for k, v in history.history.items()}


def test_set_random_seed_makes_two_builds_equal():
    def build(seed):
        keras.utils.set_random_seed(seed)
        return keras.Sequential([keras.Input((4,)), layers.Dense(5), layers.Dense(2)])

    a, b, c = build(3), build(3), build(4)
    assert [l.name for l in a.layers] != [l.name for l in b.layers]  # "dense", then "dense_2"
    for p, q in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(p, q)
    assert not np.array_equal(a.get_weights()[0], c.get_weights()[0])


def test_sequential_add_after_summary_keeps_the_built_weights():
    model = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    model.summary(print_fn=lambda line: None)
    first = model.layers[0].get_weights()[0]
    model.add(layers.Dense(2))
    assert model.count_params() == 23 and model.output_shape == (None, 2)
    np.testing.assert_array_equal(model.layers[0].get_weights()[0], first)
    popped = model.pop()
    assert popped.name == "dense_1" and model.count_params() == 15
    np.testing.assert_array_equal(model.layers[0].get_weights()[0], first)


def test_multi_head_attention_takes_query_value_and_key_as_arguments():
    q, v, k = keras.Input((5, 8)), keras.Input((6, 8)), keras.Input((6, 8))
    # (nnfit fixes a layer's call arguments at its first call: one layer per form.)
    mha, mha_key = layers.MultiHeadAttention(num_heads=2, key_dim=4), layers.MultiHeadAttention(num_heads=2, key_dim=4)
    o1, o2 = mha(q, v), mha_key(q, v, k)
    assert o1.shape == (None, 5, 8) and o2.shape == (None, 5, 8)
    model = keras.Model([q, v, k], [o1, o2])
    assert model.count_params() == 576
    nodes = [e["inbound_nodes"][0] for e in json.loads(model.to_json())["config"]["layers"]
             if e["class_name"] == "MultiHeadAttention"]
    assert [len(n["args"]) + len(n["kwargs"]) for n in nodes] == [2, 3]
    mha_key.set_weights(mha.get_weights())
    rng = np.random.default_rng(1)
    qs, vs, ks = (rng.normal(size=(3,) + s).astype("float32") for s in ((5, 8), (6, 8), (6, 8)))
    p1, p2 = model.predict([qs, vs, ks], verbose=0)
    assert np.abs(p1 - p2).max() > 1e-4  # the key matters
    p1_again, p2_same = model.predict([qs, vs, vs], verbose=0)
    np.testing.assert_allclose(p2_same, p1, atol=1e-6)  # key = value is mha(q, v)
    listed = keras.Model([q, v], layers.MultiHeadAttention(num_heads=2, key_dim=4, name="listed")([q, v]))
    listed.get_layer("listed").set_weights(mha.get_weights())
    np.testing.assert_allclose(listed.predict([qs, vs], verbose=0), p1, atol=1e-6)


# 5. Fine-tuning.
def _transfer_model():
    keras.utils.set_random_seed(1)
    base_in = keras.Input((6,))
    h = layers.Dense(8, activation="relu", name="base_dense")(base_in)
    base = keras.Model(base_in, layers.BatchNormalization(name="base_bn")(h), name="base")
    head = layers.Dense(2, activation="softmax", name="head")
    return base, keras.Model(base.input, head(base.output))


def _weights_by_layer(model):
    return {l.name: l.get_weights() for l in model.layers if l.get_weights()}


def _changed(before, after):
    return sorted(n for n in before if any(not np.array_equal(p, q) for p, q in zip(before[n], after[n])))


def test_transfer_learning_freeze_train_unfreeze_recompile_train():
    """The transfer-learning guide's steps; counts and changed layers are Keras's."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int64")
    base, model = _transfer_model()
    counts = lambda: [len(model.trainable_weights), len(model.non_trainable_weights), len(model.weights)]  # noqa: E731
    base.trainable = False  # after the layers were called: it still freezes them
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    assert counts() == [2, 6, 8]
    before = _weights_by_layer(model)
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    assert _changed(before, _weights_by_layer(model)) == ["head"]  # the base bit for bit, its BN statistics too
    base.trainable = True
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    assert counts() == [6, 2, 8]
    before = _weights_by_layer(model)
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    assert _changed(before, _weights_by_layer(model)) == ["base_bn", "base_dense", "head"]
    model.trainable = False
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    assert counts() == [0, 8, 8] and model.trainable_weights == []
    before = _weights_by_layer(model)
    model.fit(x, y, epochs=1, batch_size=16, verbose=0)
    assert _changed(before, _weights_by_layer(model)) == []
    model.trainable = True
    model.get_layer("base_dense").trainable = False
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    assert counts() == [4, 4, 8]
    assert [[len(l.weights), len(l.trainable_weights), len(l.non_trainable_weights)] for l in model.layers] == \
        [[0, 0, 0], [2, 0, 2], [4, 2, 2], [2, 2, 0]]
    bn = model.get_layer("base_bn")
    assert [w.path for w in bn.weights] == ["base_bn/gamma", "base_bn/beta", "base_bn/moving_mean",
                                            "base_bn/moving_variance"]
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]
    np.testing.assert_array_equal(bn.weights[0].numpy(), bn.get_weights()[0])


def test_trainable_changes_take_effect_at_the_next_compile_only(blobs):
    x, y = blobs
    model = keras.Sequential([keras.Input((8,)), layers.Dense(4, name="a"), layers.Dense(3, name="b")])
    model.compile(optimizer="sgd", loss="mse")
    model.get_layer("b").trainable = False  # after compile, before the first fit: Keras makes its step at fit
    before = model.get_layer("b").get_weights()[0]
    model.fit(x, keras.utils.to_categorical(y, 3), epochs=1, verbose=0)
    np.testing.assert_array_equal(model.get_layer("b").get_weights()[0], before)
    model.get_layer("b").trainable = True
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, keras.utils.to_categorical(y, 3), epochs=1, verbose=0)
    model.get_layer("a").trainable = False  # not compiled again: Keras's traced step keeps training it
    before = model.get_layer("a").get_weights()[0]
    model.fit(x, keras.utils.to_categorical(y, 3), epochs=1, verbose=0)
    assert not np.array_equal(model.get_layer("a").get_weights()[0], before)
    model.compile(optimizer="sgd", loss="mse")
    before = model.get_layer("a").get_weights()[0]
    model.fit(x, keras.utils.to_categorical(y, 3), epochs=1, verbose=0)
    np.testing.assert_array_equal(model.get_layer("a").get_weights()[0], before)


def test_weights_before_compile_and_layer_build():
    dense = layers.Dense(3)
    assert not dense.built and dense.weights == []
    dense.build((None, 4))
    assert dense.built and [w.shape for w in dense.get_weights()] == [(4, 3), (3,)] and dense.count_params() == 15
    dense.set_weights([np.ones((4, 3), "float32"), np.zeros(3, "float32")])
    model = keras.Sequential([keras.Input((4,)), dense])  # the model starts from the layer's weights
    assert model.predict(np.ones((1, 4), "float32"), verbose=0).sum() == 12.0
    pre = keras.Sequential([keras.Input((3,)), layers.Dense(2)])
    pre.layers[0].set_weights([np.full((3, 2), 0.5, "float32"), np.ones(2, "float32")])
    np.testing.assert_array_equal(pre.get_weights()[1], [1.0, 1.0])
    with pytest.raises(ValueError, match="expecting 0 weights"):
        layers.Dense(2).set_weights([np.ones((2, 2))])
    with pytest.raises(ValueError, match="isn't built"):
        layers.Dense(2).count_params()


def test_a_trained_models_layers_bring_their_weights_into_a_new_model(blobs):
    x, y = blobs
    base, model = _transfer_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x[:, :6], y % 2, epochs=1, verbose=0)
    trained = model.get_layer("base_dense").get_weights()
    reused = keras.Model(base.input, layers.Dense(5)(base.output))  # Keras shares these weights; nnfit copies
    for p, q in zip(reused.get_layer("base_dense").get_weights(), trained):
        np.testing.assert_array_equal(p, q)


# 6. Names.
def test_layer_aliases_and_the_separable_depthwise_and_transposed_convolutions():
    assert layers.MaxPool2D is layers.MaxPooling2D and layers.AvgPool1D is layers.AveragePooling1D
    assert layers.GlobalAvgPool2D is layers.GlobalAveragePooling2D and layers.Convolution2D is layers.Conv2D
    conv = keras.Sequential([keras.Input((12, 12, 3)), layers.SeparableConv2D(8, 3), layers.DepthwiseConv2D(3),
                             layers.Conv2DTranspose(4, 3, strides=2), layers.Reshape((17 * 17, 4)),
                             layers.SeparableConv1D(5, 3), layers.DepthwiseConv1D(3), layers.Conv1DTranspose(2, 3)])
    assert [l.count_params() for l in conv.layers] == [59, 80, 292, 0, 37, 20, 32]  # Keras's
    assert conv.output_shape == (None, 287, 2)


def test_merge_functional_forms():
    a, b = keras.Input((4,)), keras.Input((4,))
    forms = keras.Model([a, b], [layers.add([a, b]), layers.subtract([a, b]), layers.concatenate([a, b]),
                                 layers.dot([a, b], axes=1), layers.maximum([a, b])])
    av, bv = np.arange(8, dtype="float32").reshape(2, 4), np.full((2, 4), 2.0, "float32")
    add, sub, cat, dot, mx = forms.predict([av, bv], verbose=0)
    np.testing.assert_array_equal(add, av + bv)
    np.testing.assert_array_equal(sub, av - bv)
    np.testing.assert_array_equal(cat, np.concatenate([av, bv], 1))
    np.testing.assert_array_equal(dot, [[12.0], [44.0]])
    np.testing.assert_array_equal(mx, np.maximum(av, bv))


def test_utils_as_keras():
    u = keras.utils
    seqs = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], []]
    assert u.pad_sequences(seqs).tolist() == [[0, 0, 1, 2, 3], [0, 0, 0, 4, 5], [6, 7, 8, 9, 10], [0, 0, 0, 0, 0]]
    assert u.pad_sequences(seqs, maxlen=3, padding="post", truncating="post", value=-1).tolist() == \
        [[1, 2, 3], [4, 5, -1], [6, 7, 8], [-1, -1, -1]]
    assert u.pad_sequences(seqs).dtype == np.int32
    with pytest.raises(ValueError, match="Padding type"):
        u.pad_sequences(seqs, padding="middle")
    np.testing.assert_allclose(u.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0.0, 0.0]])
    left, right = u.split_dataset((np.arange(20).reshape(10, 2), np.arange(10)), left_size=0.7, shuffle=True, seed=1)
    lx = np.concatenate([b[0] for b in left.batch(100)._build(0).collect()])
    rx = np.concatenate([b[0] for b in right.batch(100)._build(0).collect()])
    assert len(lx) == 7 and len(rx) == 3 and sorted(np.concatenate([lx, rx])[:, 1].tolist()) == list(range(1, 20, 2))
    with pytest.raises(ValueError, match="left_size"):
        u.split_dataset(np.zeros(10), left_size=10)
    assert u.img_to_array(np.zeros((5, 7))).shape == (5, 7, 1)
    assert u.img_to_array(np.zeros((5, 7, 3)), data_format="channels_first").shape == (3, 5, 7)


def test_clone_model_model_from_json_and_from_config(blobs):
    model = keras.Sequential([keras.Input((8,)), layers.Dense(3, name="out")])
    clone = keras.models.clone_model(model)
    assert [l.name for l in clone.layers] == ["out"] and clone.count_params() == 27
    assert not np.array_equal(clone.get_weights()[0], model.get_weights()[0])  # fresh weights, as Keras
    again = keras.Sequential.from_config(model.get_config())
    assert again.count_params() == 27 and isinstance(again, keras.Sequential)
    assert keras.models.model_from_json(model.to_json()).count_params() == 27
    inp = keras.Input((4,))
    functional = keras.Model(inp, layers.Dense(2)(inp))
    assert keras.Model.from_config(functional.get_config()).count_params() == 10
    with pytest.raises(NotImplementedError, match="clone_function"):
        keras.models.clone_model(model, clone_function=lambda l: l)


def test_looking_at_a_layer_builds_nothing():
    model = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    dense = model.layers[0]
    assert dense.built and "built=True" in repr(dense)  # Keras's: its model knows its input
    assert model._handle is None  # repr and built made no engine model
    loose = layers.Dense(2)
    assert not loose.built and "built=False" in repr(loose)
    assert keras.Input((3,))._history[0].built


def test_bad_arguments_raise_as_keras_raises(blobs):
    # Checked side by side with Keras 3.15 on TensorFlow: TypeError for a float or string
    # batch_size or epochs, ValueError for x=None and datetime arrays; batch_size=0 is
    # Keras's default. A NaN learning rate, which Keras accepts and trains to NaNs, is
    # refused by nnfit with a ValueError naming the argument.
    x, y = blobs
    model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    for kwargs in ({"batch_size": 1.5}, {"batch_size": "32"}, {"epochs": 1.5}, {"epochs": "2"}):
        with pytest.raises(TypeError, match="must be an int"):
            model.fit(x, y, verbose=0, **kwargs)
    model.fit(x, y, batch_size=0, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="x is None"):
        model.fit(None, y, verbose=0)
    with pytest.raises(ValueError, match="Invalid dtype: datetime64"):
        model.fit(np.zeros((600, 8), "datetime64[s]"), y, verbose=0)
    with pytest.raises(ValueError, match=r"learning_rate.*nan is not a finite number"):
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=float("nan")), loss="mse")


# Inputs known per batch (Input(shape=(None,))) and batches from Python (PyDataset,
# generators): Note [Shapes known per batch], Note [Batches from Python].

class _PaddedText(keras.utils.PyDataset):
    """Sequences of 3..30 ids, each batch padded to its own longest; label: first id > 25."""

    def __init__(self, n, batch, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.seqs = [rng.integers(1, 50, size=int(k)) for k in rng.integers(3, 31, size=n)]
        self.y = np.array([int(s[0] > 25) for s in self.seqs])
        self.batch = batch
        self.epochs_ended = 0

    def __len__(self):
        return (len(self.seqs) + self.batch - 1) // self.batch

    def __getitem__(self, i):
        part = slice(i * self.batch, (i + 1) * self.batch)
        return keras.utils.pad_sequences(self.seqs[part], padding="post"), self.y[part]

    def on_epoch_end(self):
        self.epochs_ended += 1


def _text_model():
    inp = keras.Input(shape=(None,), dtype="int32")
    x = layers.Embedding(50, 8, mask_zero=True)(inp)
    model = keras.Model(inp, layers.Dense(1, activation="sigmoid")(layers.GRU(6)(x)))
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    return model


def test_a_model_with_none_dimensions_takes_every_length():
    model = _text_model()
    assert model.input_shape == (None, None)
    rng = np.random.default_rng(1)
    x = rng.integers(1, 50, size=(64, 12))
    history = model.fit(x, (x[:, 0] > 25).astype("float32"), batch_size=16, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    for length in (3, 12, 41):
        assert model.predict(x[:5, :min(length, 12)] if length <= 12 else np.tile(x[:5], 4)[:, :length],
                             verbose=0).shape == (5, 1)
    stats = model._handle.program_cache_stats()
    assert stats["input_shapes"] == 3  # 12 (fit and predict), 3 and 41
    config = json.loads(model.to_json())
    assert config["config"]["layers"][0]["config"]["batch_shape"] == [None, None]


def test_permute_and_repeat_vector_take_dimensions_known_per_batch():
    # Permute moves a None axis with its axis, RepeatVector keeps None features: each batch's values as NumPy's.
    inp = keras.Input(shape=(None, 3))
    permuted = keras.Model(inp, layers.Permute((2, 1))(inp))
    assert permuted.output_shape == (None, 3, None)
    feats = keras.Input(shape=(None,))
    repeated = keras.Model(feats, layers.RepeatVector(2)(feats))
    assert repeated.output_shape == (None, 2, None)
    rng = np.random.default_rng(0)
    for n in (4, 7):
        x = rng.normal(size=(2, n, 3)).astype("float32")
        np.testing.assert_array_equal(permuted.predict(x, verbose=0), x.transpose(0, 2, 1))
        np.testing.assert_array_equal(repeated.predict(x[:, :, 0], verbose=0), np.stack([x[:, :, 0]] * 2, axis=1))


def test_fit_takes_a_pydataset_of_batches_padded_per_batch():
    model = _text_model()
    train, val = _PaddedText(96, 16, 0), _PaddedText(32, 16, 1)
    history = model.fit(train, epochs=2, validation_data=val, verbose=0)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert train.epochs_ended == 2  # Keras's hook, once per pass
    shapes = {train[i][0].shape[1] for i in range(len(train))} | {val[i][0].shape[1] for i in range(len(val))}
    assert model._handle.program_cache_stats()["input_shapes"] == len(shapes)
    assert len(model.evaluate(_PaddedText(20, 8, 2), verbose=0)) == 2
    assert model.predict(_PaddedText(20, 8, 3), verbose=0).shape == (20, 1)


def test_fit_takes_a_generator_and_names_a_bad_batch():
    model = _text_model()

    def batches():
        for k in range(3):
            yield np.full((4, 5 + k), k + 1), np.ones(4)
    assert len(model.fit(batches(), epochs=1, verbose=0).history["loss"]) == 1

    def bad():
        yield np.ones((4, 5), "int32"), np.ones(4)
        yield np.ones((4, 5), "int32"), np.ones(4), np.ones(4), np.ones(4)
    with pytest.raises(Exception, match="batch 2"):
        model.fit(bad(), epochs=1, verbose=0)


def test_constraints_hold_after_every_update():
    model = keras.Sequential([keras.Input((6,)),
                              layers.Dense(4, kernel_constraint=keras.constraints.MaxNorm(0.3), bias_constraint="non_neg"),
                              layers.Dense(1, kernel_constraint=keras.constraints.unit_norm())])
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
    x = np.random.default_rng(0).normal(size=(64, 6)).astype("float32")
    model.fit(x, -np.abs(x.sum(axis=1, keepdims=True)) * 10, batch_size=16, epochs=2, verbose=0)
    kernel, bias, out_kernel, _ = model.get_weights()
    assert np.linalg.norm(kernel, axis=0).max() <= 0.3 + 1e-6
    assert bias.min() >= 0.0
    assert np.allclose(np.linalg.norm(out_kernel, axis=0), 1.0, atol=1e-5)
    assert keras.constraints.get("max_norm").get_config() == {"max_value": 2, "axis": 0}
    with pytest.raises(ValueError, match="constraint"):
        keras.constraints.get("no_such_constraint")


def test_a_sequential_started_with_an_input_gives_each_layer_an_output():
    model = keras.Sequential([keras.Input((4,)), layers.Dense(2, name="a"), layers.Dense(3, name="b")])
    extractor = keras.Model(model.inputs, [layer.output for layer in model.layers])
    outs = extractor(np.ones((5, 4), "float32"))
    assert [np.shape(o) for o in outs] == [(5, 2), (5, 3)]
    with pytest.raises(AttributeError, match="never been called"):
        _ = layers.Dense(2, name="loose").output


def test_a_lambda_in_a_sequential_is_one_of_its_layers():
    model = keras.Sequential([keras.Input((3,)), layers.Lambda(lambda t: keras.ops.abs(t) * 2.0), layers.Dense(1)])
    assert [type(l).__name__ for l in model.layers] == ["Lambda", "Dense"]  # as in Keras
    assert model.layers[0].name.startswith("lambda")
    kernel, bias = model.get_weights()
    x = np.array([[-1.0, 2.0, -3.0]], "float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), np.abs(x) * 2.0 @ kernel + bias, rtol=1e-6)
    config = json.loads(model.to_json())
    assert config["class_name"] == "Sequential" and config["config"]["layers"][1]["class_name"] == "Lambda"
    assert model.pop().__class__.__name__ == "Dense" and model.pop().__class__.__name__ == "Lambda"


def test_a_nested_model_shows_what_the_outer_model_trains():
    base = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="d1"), layers.BatchNormalization(name="bn")])
    before = [w.copy() for w in base.get_weights()]
    inp = keras.Input((4,))
    model = keras.Model(inp, layers.Dense(1, name="head")(base(inp, training=False)))
    base.trainable = False
    model.compile("adam", "mse")
    x = np.random.default_rng(0).normal(size=(32, 4)).astype("float32")
    model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(before, base.get_weights()))  # frozen: bit for bit
    base.trainable = True
    model.compile(keras.optimizers.Adam(1e-2), "mse")
    model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, verbose=0)
    after = base.get_weights()
    assert not np.array_equal(after[0], before[0])  # the outer model's training shows in base_model
    assert np.array_equal(base.layers[0].get_weights()[0], after[0])
    kernel, bias, gamma, beta, mean, var = after
    expected = gamma * (x[:3] @ kernel + bias - mean) / np.sqrt(var + 1e-3) + beta  # BatchNormalization's inference
    np.testing.assert_allclose(base.predict(x[:3], verbose=0), expected, rtol=1e-5, atol=1e-6)
    base.set_weights([np.zeros_like(w) for w in after])  # and writes go through to the outer model
    assert not any(np.any(w) for w in model.get_layer(base.name).get_weights())


def test_rnn_with_cells_is_the_layers_it_stands_for(tmp_path):
    # RNN(LSTMCell(n)) gives the LSTM layer's outputs on the same weights; a list of cells
    # is a StackedRNNCells, which gives the stacked layers'; a cell alone is refused.
    x = np.random.default_rng(3).normal(size=(4, 7, 3)).astype("float32")
    inp = keras.Input((7, 3))
    cell = keras.Model(inp, layers.RNN([layers.GRUCell(4), layers.LSTMCell(2)], go_backwards=True)(inp))
    stack = keras.Sequential([keras.Input((7, 3)), layers.GRU(4, return_sequences=True, go_backwards=True),
                              layers.LSTM(2, go_backwards=True)])
    assert cell.layers[1].get_config()["cell"]["class_name"] == "StackedRNNCells"
    assert type(cell.layers[1].cell).__name__ == "StackedRNNCells"
    assert [list(w.shape) for w in cell.get_weights()] == [list(w.shape) for w in stack.get_weights()]
    # The stacked step feeds the second cell the first's output of the same step: a forward
    # LSTM over the backward GRU's sequence as Keras returns it (in step order).
    first = keras.Sequential([keras.Input((7, 3)), layers.GRU(4, return_sequences=True, go_backwards=True)])
    first.set_weights(cell.get_weights()[:3])
    second = keras.Sequential([keras.Input((7, 4)), layers.LSTM(2)])
    second.set_weights(cell.get_weights()[3:])
    want = second.predict(first.predict(x, verbose=0), verbose=0)
    np.testing.assert_allclose(cell.predict(x, verbose=0), want, rtol=1e-5, atol=1e-6)
    path = str(tmp_path / "cells.keras")
    cell.save(path)
    np.testing.assert_allclose(keras.models.load_model(path).predict(x, verbose=0), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="inside keras.layers.RNN"):
        layers.LSTMCell(3)(inp)


def test_an_rnn_starts_from_the_states_it_is_given(tmp_path):
    # Keras's encoder-decoder: decoder(x, initial_state=[h, c]) is a call with keyword tensors,
    # written as Keras writes it ("kwargs": {"initial_state": [...]}) and read back.
    enc_in, dec_in = keras.Input((5, 3)), keras.Input((4, 3))
    _, h, c = layers.LSTM(6, return_state=True, name="encoder")(enc_in)
    decoded = layers.LSTM(6, name="decoder")(dec_in, initial_state=[h, c])
    model = keras.Model([enc_in, dec_in], decoded)
    rng = np.random.default_rng(2)
    enc, dec = rng.normal(size=(3, 5, 3)).astype("float32"), rng.normal(size=(3, 4, 3)).astype("float32")
    got = model.predict([enc, dec], verbose=0)
    # The same decoder from zero states gives another result: the states are read.
    zero_in = keras.Input((4, 3))
    alone = keras.Model(zero_in, layers.LSTM(6)(zero_in))
    alone.set_weights(model.get_layer("decoder").get_weights())
    assert np.abs(alone.predict(dec, verbose=0) - got).max() > 1e-3
    node = [l for l in json.loads(model.to_json())["config"]["layers"] if l["name"] == "decoder"][0]["inbound_nodes"][0]
    assert [t["config"]["keras_history"][0] for t in node["kwargs"]["initial_state"]] == ["encoder", "encoder"]
    path = str(tmp_path / "seq2seq.keras")
    model.save(path)
    np.testing.assert_allclose(keras.models.load_model(path).predict([enc, dec], verbose=0), got, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="initial_state must be symbolic"):
        layers.GRU(2)(dec_in, initial_state=np.zeros((3, 2), "float32"))


def test_bidirectional_and_rnn_give_keras_outputs():
    # Keras 3.15.1's counts and shapes: merge_mode=None gives both directions' outputs,
    # return_state each direction's states after them, RNN(LSTMCell) two states.
    i = keras.Input((5, 3))
    a = layers.Bidirectional(layers.LSTM(4, return_sequences=True), merge_mode=None)(i)
    b = layers.Bidirectional(layers.GRU(2, return_state=True))(i)
    c = layers.Bidirectional(layers.LSTM(2, return_state=True), merge_mode=None)(i)
    d = layers.RNN(layers.LSTMCell(3), return_state=True)(i)
    assert [[tuple(x.shape) for x in t] for t in (a, b, c, d)] == [
        [(None, 5, 4)] * 2, [(None, 4), (None, 2), (None, 2)], [(None, 2)] * 6, [(None, 3)] * 3]
    m = keras.Model(i, [a[1], b[2], c[5], d[2]])
    assert [o.shape for o in m.predict(np.ones((2, 5, 3), "float32"), verbose=0)] == [(2, 5, 4), (2, 2), (2, 2), (2, 3)]


@pytest.mark.parametrize("kind", ["Sequential", "Functional"])
def test_a_file_with_a_nested_model_loads_with_it(tmp_path, kind):
    # Keras's load_model remakes the nested model as one of model.layers, sharing the
    # outer model's weights (it failed: "layer class 'Sequential' is not supported").
    if kind == "Sequential":
        inner = keras.Sequential([layers.Dense(4), layers.Dense(3)], name="inner")
    else:
        ii = keras.Input((5,))
        inner = keras.Model(ii, layers.Dense(3)(layers.Dense(4)(ii)), name="inner")
    i = keras.Input((5,))
    model = keras.Model(i, layers.Dense(1)(inner(i)))
    x = np.random.default_rng(4).random((2, 5)).astype("float32")
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, np.ones((2, 1)), verbose=0)
    model.save(tmp_path / "nested.keras")
    loaded = keras.models.load_model(tmp_path / "nested.keras")
    assert [type(l).__name__ for l in loaded.layers] == ["InputLayer", kind, "Dense"]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    np.testing.assert_array_equal(loaded.get_layer("inner").predict(x, verbose=0),
                                  model.get_layer("inner").predict(x, verbose=0))


def test_a_model_only_defined_saves_its_initial_weights(tmp_path):
    # Keras saves a model it has only defined (it said: "not built; compile it before saving").
    i = keras.Input((4, 3))
    model = keras.Model(i, layers.LSTM(2)(i))
    model.save(tmp_path / "defined.keras")
    x = np.ones((1, 4, 3), "float32")
    np.testing.assert_array_equal(keras.models.load_model(tmp_path / "defined.keras").predict(x, verbose=0),
                                  model.predict(x, verbose=0))


def test_weights_are_the_variables_keras_makes():
    # Keras 3.15.1: BatchNormalization(scale=False) has beta and the moving statistics (no
    # gamma), LayerNormalization(center=False) gamma alone; nnfit's constants in their place
    # are not weights (get_weights gave 6 arrays where Keras gives 4).
    i = keras.Input((4,))
    model = keras.Model(i, layers.LayerNormalization(center=False)(layers.BatchNormalization(scale=False)(i)))
    assert [w.path for w in model.weights] == ["batch_normalization/beta", "batch_normalization/moving_mean",
                                               "batch_normalization/moving_variance", "layer_normalization/gamma"]
    assert len(model.get_weights()) == 4 and model.count_params() == 16
    model.set_weights([np.full((4,), v, "float32") for v in (0.5, 1.0, 4.0, 2.0)])
    # (x - 1) / sqrt(4 + 1e-3) + 0.5 per feature, then LayerNormalization with gamma 2.
    x = np.array([[1.0, 2.0, 3.0, 4.0]], "float32")
    y = (x - 1.0) / np.sqrt(4.0 + 1e-3) + 0.5
    want = 2.0 * (y - y.mean()) / np.sqrt(y.var() + 1e-3)
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5)

