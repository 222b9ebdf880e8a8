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

    with pytest.raises(NotImplementedError, match=r"Branches.*branches on `training`.*pass training to"):
        Branches()(keras.Input((4,)))

    class WeightOnly(Affine):
        def call(self, inputs):
            return inputs * ops.exp(self.b)

    with pytest.raises(NotImplementedError, match=r"keras.ops.exp: an operation on weights alone \(weight_only/b\)"):
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
