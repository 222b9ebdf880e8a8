"""Subclassed layers and models and models called as layers on nnfit's engine (issue 35):
what a traced step costs against the same Functional graph, weights reaching operations,
training=False inside a traced call, files, and the errors a user can meet (each naming
the layer, operation or hook and what to do). Parity with Keras: keras_subclass_parity.py."""
import json
import zipfile

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 12)).astype("float32")
    return x, (x[:, 0] + x[:, 1] > 0).astype("int64")


class Block(layers.Layer):
    """Dense, BatchNormalization and Dropout as a subclassed layer."""

    def __init__(self, units=16, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = layers.Dense(units, activation="relu")
        self.norm = layers.BatchNormalization()
        self.drop = layers.Dropout(0.1)

    def call(self, inputs, training=None):
        return self.drop(self.norm(self.dense(inputs), training=training), training=training)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


class Affine(layers.Layer):
    def __init__(self, units=8, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="glorot_uniform", name="w")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", name="b")

    def call(self, inputs):
        return ops.relu(ops.matmul(inputs, self.w) + self.b)


def fitted(model, data, epochs=1):
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model.fit(*data, epochs=epochs, batch_size=32, verbose=0)


def test_a_traced_layer_plans_the_same_step_as_its_functional_form(data):
    inp = keras.Input((12,))
    traced = keras.Model(inp, layers.Dense(2, activation="softmax")(Block(16)(inp)))
    inp = keras.Input((12,))
    h = layers.Dropout(0.1)(layers.BatchNormalization()(layers.Dense(16, activation="relu")(inp)))
    functional = keras.Model(inp, layers.Dense(2, activation="softmax")(h))
    a, b = fitted(traced, data), fitted(functional, data)
    # The planner's peak is exact: the same graph gives the same figure.
    assert a.nnfit[0]["memory_peak_bytes"] == b.nnfit[0]["memory_peak_bytes"]
    assert traced.count_params() == functional.count_params()
    assert [w.shape for w in traced.get_weights()] == [w.shape for w in functional.get_weights()]


def test_add_weight_reaches_the_operations_and_trains(data):
    inp = keras.Input((12,))
    affine = Affine(8, name="affine")
    model = keras.Model(inp, layers.Dense(2, activation="softmax")(affine(inp)))
    before = [w.copy() for w in affine.get_weights()]
    fitted(model, data, epochs=2)
    after = affine.get_weights()
    assert [w.path for w in affine.weights] == ["affine/w", "affine/b"]
    assert all(not np.array_equal(p, q) for p, q in zip(before, after))
    np.testing.assert_allclose(affine.w.numpy(), after[0])
    hidden = np.maximum(data[0][:4] @ after[0] + after[1], 0)
    head = model.layers[-1].get_weights()
    logits = hidden @ head[0] + head[1]
    want = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(model.predict(data[0][:4], verbose=0), want / want.sum(1, keepdims=True), rtol=1e-4,
                               atol=1e-6)


def test_training_false_inside_a_traced_call_runs_in_inference_mode(data):
    class Frozen(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(8)
            self.norm = layers.BatchNormalization()
            self.head = layers.Dense(2, activation="softmax")

        def call(self, inputs, training=False):
            return self.head(self.norm(self.dense(inputs), training=False))

    model = Frozen()
    model.build((None, 12))
    stats = [w.copy() for w in model.norm.get_weights()[2:]]
    fitted(model, data)
    assert all(np.array_equal(p, q) for p, q in zip(stats, model.norm.get_weights()[2:]))  # no update
    assert not np.array_equal(model.head.get_weights()[0], np.zeros((8, 2)))


def test_files_keep_keras_layout_and_load_with_custom_objects(data, tmp_path):
    inp = keras.Input((12,))
    model = keras.Model(inp, layers.Dense(2, activation="softmax")(Affine(8, name="affine")(inp)))
    fitted(model, data)
    path = str(tmp_path / "m.keras")
    model.save(path)
    entry = json.loads(zipfile.ZipFile(path).read("config.json"))["config"]["layers"][1]
    assert entry["class_name"] == "Affine" and entry["registered_name"] == "Affine"
    assert entry["build_config"] == {"input_shape": [None, 12]}
    assert [w["name"] for w in entry["nnfit_trace"]["weights"]] == ["w", "b"]
    for loaded in (keras.models.load_model(path), keras.models.load_model(path, custom_objects={"Affine": Affine})):
        np.testing.assert_allclose(loaded.predict(data[0][:8], verbose=0), model.predict(data[0][:8], verbose=0),
                                   rtol=1e-6)
    assert type(keras.models.load_model(path, custom_objects={"Affine": Affine}).layers[1]) is Affine
    stand_in = keras.models.load_model(path).layers[1]
    with pytest.raises(NotImplementedError, match="custom_objects"):
        stand_in(keras.Input((12,)))


def test_a_layer_called_on_positions_inside_a_call(data):
    """keras.io's positional embedding: an Embedding called on ops.arange's array inside call()."""
    class Positions(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.pos_emb = layers.Embedding(input_dim=12, output_dim=3)

        def call(self, x):
            return x[:, :, None] + self.pos_emb(ops.arange(0, ops.shape(x)[-1], 1))

    inp = keras.Input((12,))
    positions = Positions()
    model = keras.Model(inp, positions(inp))
    out = model.predict(data[0][:4], verbose=0)
    table = model.get_weights()[0]
    np.testing.assert_allclose(out, data[0][:4, :, None] + table[None], rtol=1e-6)
    assert model.count_params() == 36


def test_a_subclassed_layer_in_a_sequential(data):
    model = keras.Sequential([keras.Input((12,)), Affine(8), Block(4), layers.Dense(2, activation="softmax")])
    history = fitted(model, data)
    assert list(history.history) == ["accuracy", "loss"]
    assert [type(l).__name__ for l in model.layers] == ["Affine", "Block", "Dense"]


def test_a_train_step_override_names_compute_loss(data):
    class Custom(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):  # as keras.io's "customizing fit" with TensorFlow
            import tensorflow as tf  # noqa: F401  (never reached: nnfit refuses the override first)
            with tf.GradientTape() as tape:
                loss = self.compute_loss(y=data[1], y_pred=self(data[0], training=True))
            return {"loss": loss}

    model = Custom()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    with pytest.raises(NotImplementedError, match=r"Custom\.train_step.*compute_loss"):
        model.fit(*data, epochs=1, verbose=0)
    assert model.predict(data[0][:3], verbose=0).shape == (3, 2)  # predict does not use train_step


def test_errors_name_the_layer_and_what_to_do(data):
    class Branches(layers.Layer):
        def call(self, inputs, training=None):
            return inputs * 2.0 if training else inputs

    inputs = keras.Input((4,))  # no error: traced in both modes (test_traced_calls.py)
    branching = keras.Model(inputs, Branches()(inputs))
    np.testing.assert_array_equal(branching.predict(np.ones((2, 4), "float32"), verbose=0), np.ones((2, 4)))

    class WeightOnly(Affine):  # an operation on weights alone works (test_weight_values.py)
        def call(self, inputs):
            return ops.exp(self.b)

    with pytest.raises(NotImplementedError, match=r"call\(\) returns 'exp[^']*', a value computed from the layer's "
                                                   r"weights alone"):
        WeightOnly(12, name="weight_only")(keras.Input((12,)))

    class Accumulates(Affine):  # keras.io's ComputeSum: state updated in call()
        def call(self, inputs):
            self.b.assign_add(ops.mean(inputs, axis=-1, keepdims=True))
            return inputs

    with pytest.raises(NotImplementedError, match=r"accumulates/b: assigning a variable is not supported"):
        Accumulates(12, name="accumulates")(keras.Input((12,)))

    owner = Affine(4, name="owner")
    owner(keras.Input((3,)))

    class Borrows(layers.Layer):
        def call(self, inputs):
            return ops.matmul(inputs, owner.w)

    with pytest.raises(NotImplementedError, match=r"owner/w is a weight of layer 'owner'"):
        Borrows()(keras.Input((3,)))
    with pytest.raises(NotImplementedError, match=r"traced for inputs .*called on"):
        owner(keras.Input((5,)))
    class Unbuilt(keras.Model):
        def call(self, inputs):
            return inputs
    with pytest.raises(ValueError, match="has not yet been built"):
        Unbuilt().count_params()


def test_a_file_without_the_trace_is_remade_from_the_class(data, tmp_path):
    """Keras's own file of a subclassed layer (class and config, no graph): nnfit remakes the
    model with the class's from_config, traces it, and reads the weights."""
    inp = keras.Input((12,))
    model = keras.Model(inp, layers.Dense(2, activation="softmax")(Affine(8, name="affine")(inp)))
    fitted(model, data)
    path, stripped = str(tmp_path / "nnfit.keras"), str(tmp_path / "as_keras_writes.keras")
    model.save(path)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(stripped, "w") as dst:
        for item in src.namelist():
            payload = src.read(item)
            if item == "config.json":
                config = json.loads(payload)
                for entry in config["config"]["layers"]:
                    entry.pop("nnfit_trace", None)
                    if entry["class_name"] == "Affine":
                        entry["module"] = None
                payload = json.dumps(config).encode()
            dst.writestr(item, payload)
    with pytest.raises(ValueError, match="unknown layer class \"Affine\""):
        keras.models.load_model(stripped)  # without the class there is nothing to trace
    loaded = keras.models.load_model(stripped, custom_objects={"Affine": Affine})
    np.testing.assert_allclose(loaded.predict(data[0][:8], verbose=0), model.predict(data[0][:8], verbose=0),
                               rtol=1e-6)
    loaded.fit(*data, epochs=1, verbose=0)  # compiled from the file's compile config


@pytest.mark.parametrize("tamper, error, message", [
    (lambda t: t["weights"][0].update(shape=[3, 8]), ValueError, r"matmul \(Matmul\): argument 1 reads affine/w as "
                                                                 r"\(12, 8\) but it is \(3, 8\)"),
    (lambda t: t["weights"][0].update(dtype="float16"), NotImplementedError,
     r"nnfit_trace.weights\[0\]: add_weight\(dtype=\"float16\"\) is not supported"),
    (lambda t: t.pop("graph"), ValueError, r"nnfit_trace: missing required key \"graph\""),
    (lambda t: t.update(inference_layers=["nope"]), ValueError, r"inference_layers: names no layer"),
    (lambda t: t.update(sublayers={"a": 1}), ValueError, r"sublayers: must be a list of \[name, attribute path\]"),
    (lambda t: t.update(extra=1), ValueError, r"nnfit_trace"),
])
def test_a_bad_trace_is_refused_naming_the_key(tamper, error, message):
    inp = keras.Input((12,))
    config = json.loads(keras.Model(inp, Affine(8, name="affine")(inp)).to_json())
    tamper(config["config"]["layers"][1]["nnfit_trace"])
    with pytest.raises(error, match=message):
        keras.models.model_from_json(json.dumps(config)).build()


def test_keras_file_of_a_subclassed_model_is_refused_naming_the_class(tmp_path):
    path = str(tmp_path / "sub.keras")
    with zipfile.ZipFile(path, "w") as z:  # what Keras writes for a subclassed model (its class at the top)
        z.writestr("config.json", json.dumps({"module": None, "class_name": "MyModel", "registered_name": "MyModel",
                                              "config": {"name": "my_model", "trainable": True}}))
        z.writestr("metadata.json", "{}")
    with pytest.raises(NotImplementedError, match=r"subclassed model 'MyModel'.*save it as a Functional model"):
        keras.models.load_model(path)


def test_a_traced_layers_constants_are_not_the_models_weights():
    # Keras 3.15.1: model.get_weights() holds the add_weight variable and Dense's two, not
    # the 2.0 the call multiplies by (nnfit keeps it as a constant of the traced graph).
    class Scale(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

        def call(self, x):
            return x * self.w * 2.0

    inp = keras.Input((3,))
    model = keras.Model(inp, keras.layers.Dense(1)(Scale()(inp)))
    assert [w.shape for w in model.get_weights()] == [(3,), (3, 1), (1,)]
    values = [np.full(w.shape, 0.5, "float32") for w in model.get_weights()]
    model.set_weights(values)
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), np.full((2, 1), 0.5 * 2.0 * 0.5 * 3 + 0.5), rtol=1e-6)


KERNELS_SCRIPT = """
import sys
import numpy as np
from nnfit import keras
from nnfit.keras import layers


class TransformerBlock(layers.Layer):  # keras.io's text classifier, as bench/subclass_bench.py
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs, training=False):
        attn_output = self.dropout1(self.att(inputs, inputs), training=training)
        out1 = self.layernorm1(inputs + attn_output)
        return self.layernorm2(out1 + self.dropout2(self.ffn(out1), training=training))


def functional_block(x, embed_dim, num_heads, ff_dim, rate=0.1):
    a = layers.Dropout(rate)(layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)(x, x))
    out1 = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, a]))
    f = layers.Dense(embed_dim)(layers.Dense(ff_dim, activation="relu")(out1))
    return layers.LayerNormalization(epsilon=1e-6)(layers.Add()([out1, layers.Dropout(rate)(f)]))


inputs = keras.Input(shape=(16,), dtype="int32")
h = layers.Embedding(100, 16)(inputs)
h = TransformerBlock(16, 2, 16)(h) if sys.argv[1] == "subclassed" else functional_block(h, 16, 2, 16)
h = layers.Dense(2, activation="softmax")(layers.GlobalAveragePooling1D()(h))
model = keras.Model(inputs, h)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
rng = np.random.default_rng(0)
model.fit(rng.integers(0, 100, size=(64, 16)).astype("int32"), rng.integers(0, 2, size=64), batch_size=32, verbose=0)
"""


def test_keras_io_transformer_block_runs_the_functional_forms_kernels():
    # bench/subclass_bench.py's model: the subclassed TransformerBlock's training step is
    # the same kernels as its Functional form's, one for one (each kernel's role and its
    # implementation, from NNFIT_KERNEL_TIMES's report; the order of independent branches
    # may differ); a speed gap between the two forms in the bench is then the machine's,
    # not the trace's.
    import os
    import re
    import subprocess
    import sys

    def kernels(form):
        env = dict(os.environ, NNFIT_KERNEL_TIMES="1", OMP_NUM_THREADS="1")
        r = subprocess.run([sys.executable, "-c", KERNELS_SCRIPT, form], capture_output=True, text=True, env=env,
                           timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        rows = [line.split() for line in r.stderr.splitlines() if re.match(r"\s+[0-9.]+%\s", line)]
        assert len(rows) > 100, r.stderr[-2000:]
        # Layer names differ (the block's sublayers are auto-named either way): keep what
        # each kernel does and which implementation runs it.
        return [(re.sub(r"^[a-z_]+?(_\d+)?/", "", row[1]), row[2]) for row in rows]

    functional, subclassed = kernels("functional"), kernels("subclassed")
    assert sorted(subclassed) == sorted(functional)


def _varlen_model(call):
    """Input (None, 4) into a layer whose call is `call`, pooled to one number per row."""
    class Probe(layers.Layer):
        def call(self, x):
            return call(x)
    inp = keras.Input(shape=(None, 4))
    return keras.Model(inp, layers.GlobalAveragePooling1D()(Probe()(inp)))


def test_dimensions_known_per_batch_in_a_traced_call():
    # ops.shape gives the length as a Dim: reshape, arange, ones/triu and x[:, :n] compute per batch.
    def call(x):
        n = ops.shape(x)[1]
        assert ops.shape(x)[2] == 4
        halves = ops.reshape(x, (ops.shape(x)[0], n, 2, 2))
        mask = ops.triu(ops.ones((n, n)), k=1)  # [batch, n, n] held, Keras's [n, n] in value
        pos = ops.cast(ops.arange(n), "float32")
        y = ops.reshape(halves, (None, n, 4)) + x[:, :n] + ops.expand_dims(pos, -1)
        return ops.matmul(mask, y)
    model = _varlen_model(call)
    for n in (3, 5):
        x = np.random.default_rng(n).normal(size=(2, n, 4)).astype("float32")
        pos = np.arange(n, dtype="float32")[:, None]
        want = (np.triu(np.ones((n, n)), 1) @ (2 * x + pos)).mean(axis=1)
        np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("use, says", [
    (lambda x, n: ops.arange(n + 1), "a Python operation on it"),
    (lambda x, n: ops.tile(x, (1, n, 1)), "known only per batch"),
    (lambda x, n: ops.sum(ops.ones((n, n)), axis=0), "keras.ops.sum on the result of ops.arange/ones"),
    (lambda x, n: x[:, :n - 0], "a Python operation on it"),
    (lambda x, n: x[:, 1:n], "a slice with a dimension known per batch"),
])
def test_dimensions_known_per_batch_elsewhere_are_refused_by_name(use, says):
    with pytest.raises(NotImplementedError, match=says) as e:
        _varlen_model(lambda x: use(x, ops.shape(x)[1]))
    assert "pad_sequences" in str(e.value) or "fixed length" in str(e.value)


def test_ops_shape_outside_a_trace_gives_none_as_keras():
    x = keras.Input(shape=(None, 4))
    assert ops.shape(x) == (None, None, 4)


def test_a_sublayers_weights_are_its_share_of_the_traced_layers():
    # Keras: a sublayer's get_weights/weights/set_weights are its own variables.
    class Block(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.embed = layers.Embedding(10, 4)
            self.ffn = keras.Sequential([layers.Dense(3), layers.Dense(2)])
            self.heads = [layers.Dense(2)]

        def build(self, input_shape):
            self.scale = self.add_weight(shape=(2,), initializer="ones", name="scale")

        def call(self, x):
            return self.heads[0](self.ffn(self.embed(x))) * self.scale

    inp = keras.Input(shape=(5,))
    block = Block()
    model = keras.Model(inp, block(inp))
    model.predict(np.ones((2, 5)), verbose=0)
    assert [w.shape for w in block.embed.get_weights()] == [(10, 4)]
    assert [w.shape for w in block.ffn.get_weights()] == [(4, 3), (3,), (3, 2), (2,)]
    assert [w.shape for w in block.heads[0].weights] == [(2, 2), (2,)]
    assert len(block.get_weights()) == 1 + 1 + 4 + 2
    block.embed.set_weights([np.full((10, 4), 0.5, "float32")])
    np.testing.assert_array_equal(block.get_weights()[1], np.full((10, 4), 0.5))
    with pytest.raises(ValueError, match="expecting 1 weights"):
        block.embed.set_weights([])


def test_keras_io_causal_mask_tiled_over_the_batch_size_is_causal():
    # keras.io's miniature GPT verbatim: the mask tiled by a size vector made from ops.shape(x)[0]
    # (Keras 3.15 on TensorFlow refuses this form; keras_varlen_trace_parity.py checks the tuple form
    # against Keras). Causal: changing the inputs after step k leaves the outputs up to k alone.
    def causal_attention_mask(batch_size, n_dest, n_src, dtype):
        i = ops.arange(n_dest)[:, None]
        j = ops.arange(n_src)
        m = i >= j - n_src + n_dest
        mask = ops.cast(m, dtype)
        mask = ops.reshape(mask, [1, n_dest, n_src])
        mult = ops.concatenate([ops.expand_dims(batch_size, -1), ops.convert_to_tensor([1, 1])], 0)
        return ops.tile(mask, mult)

    class Block(layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.att = layers.MultiHeadAttention(2, 4)

        def call(self, x):
            shape = ops.shape(x)
            return self.att(x, x, attention_mask=causal_attention_mask(shape[0], shape[1], shape[1], "bool"))

    inp = keras.Input((6, 4))
    model = keras.Model(inp, Block()(inp))
    x = np.random.default_rng(0).normal(size=(3, 6, 4)).astype("float32")
    later = x.copy()
    later[:, 3:] += 1.0
    a, b = model.predict(x, verbose=0), model.predict(later, verbose=0)
    np.testing.assert_allclose(a[:, :3], b[:, :3], rtol=1e-6, atol=1e-6)
    assert np.abs(a[:, 3:] - b[:, 3:]).max() > 1e-3


def test_batch_size_from_ops_shape_in_shapes():
    # ops.shape(x)[0] inside a call: the batch size for reshape, zeros and keras.random, as Keras.
    class Probe(layers.Layer):
        def call(self, x):
            b = ops.shape(x)[0]
            flat = ops.reshape(x, (b, -1))
            return flat + ops.zeros((b, 8)) + 0.0 * keras.random.normal((b, 8))
    inp = keras.Input((2, 4))
    model = keras.Model(inp, Probe()(inp))
    x = np.arange(24, dtype="float32").reshape(3, 2, 4)
    np.testing.assert_allclose(model.predict(x, verbose=0), x.reshape(3, 8))


@keras.saving.register_keras_serializable(package="nnfit_tests")
class DictHeads(keras.Model):
    """A subclassed model whose call returns a dict (Keras's structure)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(8, activation="relu")
        self.score = layers.Dense(1)
        self.classes = layers.Dense(3)

    def call(self, inputs):
        z = self.hidden(inputs)
        return {"score": self.score(z), "classes": self.classes(z)}


def test_a_call_returning_a_dict_gives_dicts_trains_by_key_and_survives_its_file(data, tmp_path):
    x = data[0][:32, :5]
    y = {"score": x[:, :1], "classes": x[:, :3]}
    model = DictHeads()
    model.compile(optimizer="sgd", loss={"score": "mse", "classes": "mae"})
    history = model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    assert sorted(history.history) == ["classes_loss", "loss", "score_loss"]
    assert sorted(model.output) == ["classes", "score"]
    assert [tuple(t.shape) for t in model.outputs] == [(None, 3), (None, 1)]  # sorted by key, as Keras
    pred = model.predict(x, verbose=0)
    assert {k: v.shape for k, v in pred.items()} == {"classes": (32, 3), "score": (32, 1)}
    called = model(x[:4])
    np.testing.assert_allclose(called["score"], pred["score"][:4], rtol=1e-6)
    model.save(tmp_path / "heads.keras")
    loaded = keras.models.load_model(tmp_path / "heads.keras")
    again = loaded.predict(x, verbose=0)
    for k in pred:
        np.testing.assert_array_equal(again[k], pred[k])
    with pytest.raises(ValueError, match="which are not outputs of the model"):
        loaded.compile(optimizer="sgd", loss={"score": "mse", "klasses": "mse"})


def test_keras_layer_arguments_of_a_saved_config_are_taken():
    # Keras 3.15 writes activity_regularizer=None in a subclassed layer's config (a Sequential's
    # file); Layer.__init__ takes it as Keras's does, and refuses a regularizer naming it.
    layer = Affine(4, activity_regularizer=None, name="from_config")
    assert layer.name == "from_config"
    with pytest.raises(NotImplementedError, match=r"Affine: activity_regularizer on a subclassed layer is not supported"):
        Affine(4, activity_regularizer="l2")
