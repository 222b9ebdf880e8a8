"""keras.ops' array operations (opsB) where Keras on TensorFlow is not the reference or
cannot run (Keras.OpsParityArrays compares the rest with Keras): NumPy's values, Keras's
dtypes of eager results, long sorts (the engine's argsort), the refusals in a model, models
with einsum, take, top_k, sort and traced control flow."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import ops

rng = np.random.default_rng(0)


def test_values_that_follow_numpy():
    x = rng.normal(size=(3, 4)).astype("float32")
    np.testing.assert_array_equal(ops.rot90(x, k=2), np.rot90(x, 2))  # Keras 3.15's TF backend differs
    np.testing.assert_array_equal(ops.rot90(x, k=-1, axes=(1, 0)), np.rot90(x, -1, axes=(1, 0)))
    np.testing.assert_allclose(ops.einsum("ij,jk", x, x.T), x @ x.T, rtol=1e-5)  # implicit output
    np.testing.assert_allclose(ops.einsum("bij->", x[None]), x.sum(), rtol=1e-5)
    i = np.array([[0, 7], [13, 23], [5, 18]], dtype="int32")  # Keras 3.15's TF backend differs for a matrix
    assert [a.tolist() for a in ops.unravel_index(i, (4, 6))] == [a.tolist() for a in np.unravel_index(i, (4, 6))]


def test_eager_results_have_kerass_dtypes():
    i = np.arange(12, dtype="int32").reshape(3, 4)
    assert ops.flip(i, axis=1).dtype == np.int32 and np.array_equal(ops.flip(i, axis=1), np.flip(i, axis=1))
    assert ops.flip(i.astype("int64"), axis=0).dtype == np.int64
    assert ops.einsum("ij,kj->ik", i, i).dtype == np.int32
    assert ops.argsort(i).dtype == np.int32
    values, indices = ops.top_k(i.astype("float32"), 2)
    assert values.dtype == np.float32 and indices.dtype == np.int32
    assert ops.in_top_k(np.array([3, 0, 1]), i.astype("float32"), 1).dtype == np.bool_
    assert [p.shape for p in ops.split(i, [1], axis=1)] == [(3, 1), (3, 3)]
    assert len(ops.unstack(i)) == 3 and ops.unstack(i)[2].tolist() == [8, 9, 10, 11]


def test_long_axes_sort_on_the_engine():
    x = rng.normal(size=(2, 3000)).astype("float32")
    np.testing.assert_array_equal(ops.sort(x), np.sort(x))
    np.testing.assert_array_equal(ops.argsort(x), np.argsort(x, kind="stable"))
    values, indices = ops.top_k(x, 20)
    np.testing.assert_array_equal(values, -np.sort(-x)[:, :20])
    np.testing.assert_array_equal(np.take_along_axis(x, indices, axis=1), values)
    values, _ = ops.top_k(x, 3)  # k argmaxes
    np.testing.assert_array_equal(values, -np.sort(-x)[:, :3])
    x[0, 5] = np.nan
    np.testing.assert_array_equal(ops.argsort(x), np.argsort(x, kind="stable"))  # NaN last, as NumPy
    inp = keras.Input(shape=(3000,))
    model = keras.Model(inp, ops.sort(inp))  # any length in a model
    np.testing.assert_array_equal(model.predict(x[1:], verbose=0), np.sort(x[1:]))


def test_refusals_name_the_operation():
    i = keras.Input(shape=(4, 5))
    with pytest.raises(Exception, match="batch"):
        ops.take(i, [0], axis=0)
    with pytest.raises(Exception, match="num_segments"):
        ops.segment_sum(i, ops.cast(i[:, 0, 0], "int32"))
    with pytest.raises(NotImplementedError, match="start_indices"):
        ops.slice(i, i, (1, 2, 2))
    with pytest.raises(Exception, match="repeated in one operand"):
        ops.einsum("bii->bi", ops.reshape(i[:, :4, :4], (-1, 4, 4)))


def test_a_model_of_array_operations_trains():
    x = rng.normal(size=(96, 6, 4)).astype("float32")
    y = (x[:, :, 0].sum(axis=1) > 0).astype("int32")
    inp = keras.Input(shape=(6, 4))
    h = keras.layers.Dense(8)(inp)
    att = ops.softmax(ops.einsum("bqd,bkd->bqk", h, h) / 8.0)
    h = ops.einsum("bqk,bkd->bqd", att, h)
    top, _ = ops.top_k(h, 3)
    h = ops.concatenate([ops.reshape(ops.take(h, [0, 5], axis=1), (-1, 16)), ops.reshape(ops.diff(top, axis=-1), (-1, 12))],
                        axis=-1)
    out = keras.layers.Dense(2, activation="softmax")(h)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    first = model.evaluate(x, y, verbose=0)[0]
    model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert model.evaluate(x, y, verbose=0)[0] < first  # gradients flow through einsum, take, top_k and diff


def test_control_flow_traces_python_values_into_a_model():
    x = rng.normal(size=(5, 4)).astype("float32")
    inp = keras.Input(shape=(4,))
    h = ops.fori_loop(0, 3, lambda i, v: v * 0.5 + float(i), inp)
    h = ops.cond(True, lambda: h + 1.0, lambda: h - 1.0)
    h = ops.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, ops.exp(v * 0.1)), (0, h))[1]
    h = ops.associative_scan(lambda a, b: a + b, h, axis=1)
    model = keras.Model(inp, ops.norm(h, axis=-1, keepdims=True))
    want = x
    for i in range(3):
        want = want * 0.5 + i
    want = np.exp(np.exp((want + 1.0) * 0.1) * 0.1)
    want = np.linalg.norm(np.cumsum(want, axis=1), axis=-1, keepdims=True)
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5)


def test_control_flow_and_arrays_only_refusals():
    inp = keras.Input(shape=(4,))
    with pytest.raises(NotImplementedError, match="keras.ops.cond: the predicate is a symbolic tensor"):
        ops.cond(ops.sum(inp, axis=1) > 0, lambda: inp, lambda: -inp)
    with pytest.raises(NotImplementedError, match="keras.ops.scan"):
        ops.scan(lambda c, x: (c + x, x), 0.0, inp)
    with pytest.raises(NotImplementedError, match="keras.ops.custom_gradient on symbolic"):
        ops.custom_gradient(lambda v: (v * 2, lambda up: up))(inp)
    for name, call in [("inv", lambda: ops.inv(inp)), ("unique", lambda: ops.unique(inp)),
                       ("stft", lambda: ops.stft(inp, 4, 2, 4)), ("linalg.svd", lambda: ops.linalg.svd(inp))]:
        with pytest.raises(NotImplementedError, match=f"keras.ops.{name.split('.')[-1]} works on arrays only"):
            call()
    assert ops.custom_gradient(lambda v: (v * 2, lambda up: up))(np.ones(3, "float32")).tolist() == [2, 2, 2]
