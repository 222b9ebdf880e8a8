"""keras.ops in nnfit.keras: eager calls on arrays, operation nodes in models (trained,
saved and loaded), the names nnfit lacks, and the errors a user can meet. Values against
Keras itself are Keras.OpsParity's (keras_ops_parity.py); here, against NumPy."""
import pathlib
import re

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops
from nnfit.keras.ops import _keras_names as keras_names

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_docs_list_what_is_implemented():
    text = DOCS.read_text()
    block = re.search(r"<!-- ops-implemented -->\n(.*?)\n<!-- /ops-implemented -->", text, re.S).group(1)
    assert sorted(re.findall(r"`([a-z_0-9]+)`", block)) == ops.implemented()
    assert len(ops.__all__) == 337  # Keras 3.15.1's keras.ops


def test_eager_calls_run_on_the_engine_and_return_arrays():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4, 5)).astype("float32")
    b = rng.normal(size=(5,)).astype("float32")
    np.testing.assert_allclose(ops.add(a, b), a + b, rtol=1e-6)
    np.testing.assert_allclose(ops.sum(a), a.sum(), rtol=1e-5)  # every axis: fine on arrays
    np.testing.assert_allclose(ops.mean(a, axis=(0, 2)), a.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(ops.exp(a), np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(ops.where(a > 0, a, 0.0), np.where(a > 0, a, 0.0))
    np.testing.assert_allclose(ops.matmul(a, np.ones((5, 2), "float32")), a @ np.ones((5, 2)), rtol=1e-5)
    np.testing.assert_allclose(ops.transpose(a), a.T)
    np.testing.assert_allclose(ops.get_item(a, (slice(None), 1, slice(2, 4))), a[:, 1, 2:4])
    idx = ops.argmax(a, axis=-1)
    assert idx.dtype == np.int32 and (idx == a.argmax(-1)).all()
    np.testing.assert_allclose(ops.softmax(a, axis=1), np.exp(a) / np.exp(a).sum(1, keepdims=True), rtol=1e-5)
    assert ops.sqrt(np.float32(4.0)).shape == () and float(ops.sqrt(4.0)) == 2.0  # scalars stay scalars
    assert ops.add(2.0, np.ones(3, "float32")).shape == (3,)


def test_a_model_built_with_ops_trains_saves_and_loads(tmp_path, blobs):
    x, y = blobs
    inputs = keras.Input(shape=(8,))
    h = layers.Dense(16)(inputs)
    h = ops.relu(h) + 0.5 * ops.tanh(h)
    h = h - ops.mean(h, axis=-1, keepdims=True)
    h = h / ops.sqrt(ops.var(h, axis=-1, keepdims=True) + 1e-3)
    outputs = layers.Dense(3, activation="softmax")(h[:, :])
    model = keras.Model(inputs, outputs)
    assert [l.name for l in model.layers] == [inputs._history[0].name, "dense", "dense_1"]  # operations are not layers
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=10, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8
    path = tmp_path / "ops.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x[:16], verbose=0), model.predict(x[:16], verbose=0), rtol=1e-5)
    kinds = {l["class_name"] for l in loaded.get_config()["layers"]}
    assert {"Relu", "Tanh", "Multiply", "Add", "Mean", "Var", "Sqrt", "TrueDivide", "GetItem"} <= kinds


def test_symbolic_shapes_and_dtypes_follow_keras():
    x = keras.Input(shape=(5, 4))
    assert (x + np.arange(4, dtype="float32")).shape == (None, 5, 4)
    assert ops.sum(x, axis=1, keepdims=True).shape == (None, 1, 4)
    assert ops.reshape(x, (-1, 20)).shape == (None, 20)
    assert x[:, None, 2].shape == (None, 1, 4)
    assert (x > 0).dtype == "bool" and ops.argmax(x, axis=-1).dtype == "int32"
    assert ops.shape(x) == (None, 5, 4) and ops.ndim(x) == 3


def test_errors_name_the_operation_and_what_to_do():
    x = keras.Input(shape=(5, 4))
    with pytest.raises(Exception, match=r"\(Sum\): its output .* does not keep the batch axis"):
        ops.sum(x)
    assert sorted(set(ops.__all__) - set(ops.implemented())) == []  # all of Keras 3.15's names
    assert sorted(set(keras_names.LINALG) - set(ops.implemented())) == []
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.future_op is not supported by nnfit"):
        ops._not_implemented("future_op")(np.zeros(4))  # what a name Keras adds raises until nnfit has it
    with pytest.raises(TypeError, match="cannot be used as a Python boolean"):
        bool(x > 0)
    with pytest.raises(Exception, match="step other than 1"):
        x[:, ::2]
    with pytest.raises(NotImplementedError, match="where"):
        ops.where(x > 0)


def test_lambda_is_a_layer_traced_with_its_operations(blobs):
    x, y = blobs
    inputs = keras.Input(shape=(8,))
    h = layers.Lambda(lambda t, scale: ops.tanh(t) * scale, arguments={"scale": 2.0})(inputs)
    model = keras.Model(inputs, layers.Dense(3, activation="softmax")(h))
    entries = model.get_config()["layers"]
    assert [l["class_name"] for l in entries] == ["InputLayer", "Lambda", "Dense"]  # Keras's
    graph = entries[1]["nnfit_trace"]["graph"]["config"]["layers"]
    assert [l["class_name"] for l in graph] == ["InputLayer", "Tanh", "Multiply"]
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, verbose=0)
    np.testing.assert_allclose(layers.Lambda(lambda t: ops.square(t) + 1.0)(np.arange(3.0)), [1.0, 2.0, 5.0])


def test_model_called_on_symbolic_tensors_and_on_arrays(blobs):
    model = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(3)])
    outer = keras.Model(inputs := keras.Input(shape=(8,)), model(inputs))  # nested (test_subclass.py)
    assert [l.name for l in outer.layers][1:] == [model.name]
    x, _ = blobs
    np.testing.assert_allclose(model(x[:5]), model.predict(x[:5], verbose=0), rtol=1e-6)


def test_not_equal_and_logical_and_or_run_eagerly_as_numpy():
    # Keras's NotEqual, LogicalAnd and LogicalOr are also the mask layers of Functional
    # graphs; on arrays they are element-wise, broadcasting as NumPy (values 1/0).
    a = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], "float32")
    b = np.array([1.0, 1.0, 0.0], "float32")
    np.testing.assert_array_equal(keras.ops.not_equal(a, b), np.not_equal(a, b))
    np.testing.assert_array_equal(keras.ops.logical_and(a, b), np.logical_and(a, b))
    np.testing.assert_array_equal(keras.ops.logical_or(a, b), np.logical_or(a, b))
    np.testing.assert_array_equal(keras.ops.not_equal(a, 0), a != 0)
