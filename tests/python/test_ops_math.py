"""keras.ops's math group in nnfit.keras (python/nnfit/keras/ops/_math.py): what the parity
test cannot show against Keras. The eager-only names refuse symbolic tensors naming
themselves; nextafter is NumPy's (Keras on TensorFlow rounds it away); integer operations
are exact past float32's 2^24; complex arrays; stop_gradient in a trained model; a model
of these operations trains, saves and loads; the refusals of polar, jvp, corrcoef, isin and
cdist on symbolic tensors. Values against Keras: Keras.OpsParityMath."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops


@pytest.mark.parametrize("call", [
    lambda x: ops.median(x, axis=-1), lambda x: ops.quantile(x, 0.5, axis=-1), lambda x: ops.nanpercentile(x, 5, axis=1),
    lambda x: ops.nextafter(x, x), lambda x: ops.i0(x), lambda x: ops.erfinv(x),
    lambda x: ops.average(x, axis=-1, weights=np.ones(3, "float32")),
])
def test_eager_only_names_refuse_symbolic_tensors_naming_themselves(call):
    x = keras.Input((4, 3))
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.\w+.* on a symbolic tensor .* arrays only"):
        call(x)


def test_integer_operations_are_exact_and_refuse_floats_and_symbolic_tensors():
    a = np.array([2**40 + 3, -7, 12], "int64")
    b = np.array([2**33 + 1, 3, 18], "int64")
    np.testing.assert_array_equal(ops.bitwise_and(a, b), a & b)  # past 2^24: no float32 on the way
    np.testing.assert_array_equal(ops.bitwise_xor(a, b), a ^ b)
    np.testing.assert_array_equal(ops.left_shift(a, 2), a << 2)
    np.testing.assert_array_equal(ops.gcd(a, b), np.gcd(a, b))
    assert ops.bitwise_not(np.array([0, 5], "int32")).dtype == np.int32
    assert ops.lcm(np.array([4], "uint8"), np.array([6], "uint8")).tolist() == [12]
    with pytest.raises(TypeError, match="bitwise_or takes integer"):
        ops.bitwise_or(np.ones(2, "float32"), np.ones(2, "float32"))
    with pytest.raises(NotImplementedError, match="keras.ops.gcd on a symbolic tensor"):
        ops.gcd(keras.Input((2,), dtype="int32"), 3)
    with pytest.raises(TypeError, match="ldexp exponent must be an integer"):
        ops.ldexp(np.ones(2, "float32"), np.ones(2, "float32"))


def test_nextafter_is_numpys_in_float32():
    x = np.array([1.0, 0.0, -2.5], "float32")
    y = ops.nextafter(x, np.float32(10.0))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.nextafter(x, np.float32(10.0)))
    assert (y > x).all()


def test_complex_arrays_and_dtype():
    z = np.array([1 + 2j, -3 - 0.5j], "complex64")
    np.testing.assert_array_equal(ops.real(z), z.real)
    np.testing.assert_array_equal(ops.imag(z), z.imag)
    np.testing.assert_array_equal(ops.conj(z), np.conj(z))
    np.testing.assert_allclose(ops.angle(z), np.angle(z), rtol=1e-6)
    assert ops.isreal(z).tolist() == [False, False]
    assert ops.dtype(keras.Input((2,))) == "float32"
    assert ops.dtype(np.zeros(2, "int32")) == "int32"
    assert ops.dtype(keras.Input((2,), dtype="int32")) == "int32"


def test_a_reduction_over_the_batch_is_refused_naming_it():
    x = keras.Input((3,))
    with pytest.raises(Exception, match="allclose.*batch"):
        keras.Model(x, ops.allclose(x, x))


def test_stop_gradient_freezes_what_is_before_it():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(64, 4)).astype("float32"), rng.normal(size=(64, 1)).astype("float32")
    inp = keras.Input((4,))
    before, after = layers.Dense(4, name="before"), layers.Dense(1, name="after")
    model = keras.Model(inp, after(ops.stop_gradient(before(inp))))
    model.compile(optimizer="sgd", loss="mse")
    w_before, w_after = before.get_weights()[0].copy(), after.get_weights()[0].copy()
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    np.testing.assert_array_equal(before.get_weights()[0], w_before)
    assert not np.allclose(after.get_weights()[0], w_after)


def test_a_model_of_math_ops_trains_saves_and_loads(tmp_path):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(64, 6)).astype("float32")
    y = (x[:, :1] > 0).astype("float32")
    inp = keras.Input((6,))
    h = layers.Dense(8)(inp)
    h = ops.logaddexp(h, ops.hypot(h, 1.0)) - ops.nanmean(h, axis=-1, keepdims=True)
    h = ops.where(ops.isfinite(h), ops.cbrt(h) + ops.sinc(h), 0.0)
    model = keras.Model(inp, layers.Dense(1, activation="sigmoid")(h))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    losses = model.fit(x, y, epochs=8, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)


# --- cdist, corrcoef, extract_sequences, isin, polar, jvp (_compositions.py) -------------------

def test_polar_is_numpys_complex_on_arrays_and_refused_on_symbolic_tensors_saying_what_to_do():
    r, t = np.array([1.0, 2.0], "float32"), np.array([0.5, -1.0], "float32")
    z = ops.polar(r, t)
    assert z.dtype == np.complex64
    np.testing.assert_array_equal(z, (r * np.cos(t) + 1j * (r * np.sin(t))).astype("complex64"))
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.polar.*no complex tensors.*abs_ \* ops\.cos\(angle\)"
                                                  r".*abs_ \* ops\.sin\(angle\)"):
        ops.polar(keras.Input((3,)), keras.Input((3,)))


def test_jvp_is_exact_on_arrays_and_refused_on_symbolic_tensors_naming_reverse_mode():
    rng = np.random.default_rng(4)
    a, b, ta, tb = (rng.normal(size=s).astype("float32") for s in [(3, 4), (4, 2), (3, 4), (4, 2)])
    out, tangent = ops.jvp(lambda u, v: ops.matmul(u, v), (a, b), (ta, tb))
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tangent, ta @ b + a @ tb, rtol=1e-5, atol=1e-5)  # bilinear: exact
    p, t = ops.jvp(ops.sin, (np.float32(0.1),), (np.float32(0.2),))
    assert np.shape(p) == () and np.isclose(t, 0.2 * np.cos(0.1), rtol=1e-6)
    x = keras.Input((3,))
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.jvp on symbolic tensors.*reverse mode only.*on arrays"):
        ops.jvp(ops.sin, (x,), (x,))


def test_model_refusals_name_the_op_and_the_batch_axis():
    x = keras.Input((5,))
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.corrcoef.*batch.*custom loss or metric"):
        ops.corrcoef(x)
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.isin with a symbolic x2.*constant array"):
        ops.isin(x, x)
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.cdist.*across the batch.*constant array"):
        ops.cdist(keras.Input((4, 5)), x)


def test_isin_and_cdist_in_a_model_predict_their_eager_values():
    rng = np.random.default_rng(6)
    ids = rng.integers(0, 6, size=(8, 5)).astype("float32")
    inp = keras.Input((5,))
    model = keras.Model(inp, ops.isin(inp, [1.0, 4.0], invert=True))
    np.testing.assert_array_equal(model.predict(ids, verbose=0).astype(bool), ~np.isin(ids, [1.0, 4.0]))
    centers = rng.normal(size=(3, 5)).astype("float32")
    model = keras.Model(inp, ops.cdist(inp, centers))
    x = rng.normal(size=(8, 5)).astype("float32")
    np.testing.assert_allclose(model.predict(x, verbose=0), ops.cdist(x, centers), rtol=1e-5, atol=1e-6)


def test_isin_on_integers_is_exact_and_corrcoef_of_a_vector_is_numpys():
    big = np.array([2**24, 2**24 + 1], "int32")
    assert ops.isin(big, np.array([2**24 + 1], "int32")).tolist() == [False, True]
    v = np.array([1.0, 3.0, 2.0], "float32")
    assert np.shape(ops.corrcoef(v)) == () and np.isclose(ops.corrcoef(v), np.corrcoef(v))
