"""keras.ops.image in nnfit.keras (python/nnfit/keras/ops/_image.py): what the parity test
cannot show against Keras on TensorFlow. The arrays-only names refuse symbolic tensors
naming themselves; the gradients TensorFlow does not give (hsv_to_rgb has none,
affine_transform's is the inverse warp) are the exact ones, checked by central differences;
rgb_to_hsv of grey pixels has finite gradients; ssim as a custom loss trains; map_coordinates'
mirror and reflect are SciPy's. Values against Keras: Keras.OpsParityImage."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops
from nnfit.keras.ops import _operation


@pytest.mark.parametrize("call", [
    lambda x: ops.image.map_coordinates(x, np.zeros((4, 2), "float32"), 1),
    lambda x: ops.image.scale_and_translate(x, (2, 8, 8, 3), np.ones(2, "float32"), np.zeros(2, "float32"), (1, 2), "linear"),
    lambda x: ops.image.elastic_transform(x),
])
def test_arrays_only_names_refuse_symbolic_tensors_naming_themselves(call):
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.image\.\w+ works on arrays only"):
        call(keras.Input((4, 4, 3)))


def test_perspective_points_must_be_arrays_and_images_batched():
    x = keras.Input((6, 6, 3))
    pts = keras.Input((4, 2))
    with pytest.raises(NotImplementedError, match="perspective_transform: a symbolic start_points"):
        ops.image.perspective_transform(x, pts, np.zeros((4, 2), "float32"))
    with pytest.raises(ValueError, match="rgb_to_grayscale: expected images of rank 3 .* or 4"):
        ops.image.rgb_to_grayscale(np.zeros((2, 2), "float32"))


def _numeric_gradient(f, x, cot, eps=1e-2):
    g = np.zeros_like(x, dtype="float64")
    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = float(np.sum(np.asarray(f(x), "float64") * cot))
        flat[i] = old - eps
        down = float(np.sum(np.asarray(f(x), "float64") * cot))
        flat[i] = old
        g.reshape(-1)[i] = (up - down) / (2 * eps)
    return g


@pytest.mark.parametrize("name,f,x", [
    # hsv_to_rgb is piecewise linear in h and bilinear in s, v: kinks away from these values.
    ("hsv_to_rgb", lambda x: ops.image.hsv_to_rgb(x),
     np.array([[[[0.05, 0.4, 0.7], [0.3, 0.8, 0.5]], [[0.58, 0.2, 0.9], [0.9, 0.6, 0.3]]]], "float32")),
    # a pure translation by a fraction: bilinear weights constant in x, the sampling linear
    ("affine_transform", lambda x: ops.image.affine_transform(x, np.array([1, 0, 0.37, 0, 1, -0.61, 0, 0], "float32"),
                                                               fill_mode="reflect"),
     np.random.default_rng(0).normal(size=(1, 4, 5, 2)).astype("float32")),
])
def test_gradients_tensorflow_does_not_give_are_exact(name, f, x):
    cot = np.random.default_rng(1).normal(size=np.shape(f(x))).astype("float32")
    _operation.RECORD = True
    try:
        f(x)
        _, grads = _operation.gradients(*_operation.LAST_CALL, cotangent=cot)
    finally:
        _operation.RECORD = False
    np.testing.assert_allclose(grads[0], _numeric_gradient(f, x.copy(), cot), atol=2e-3, rtol=2e-3)


def test_grey_pixels_have_finite_hsv_gradients_in_a_model():
    i = keras.Input((4, 4, 3))
    dense = layers.Dense(3, activation="sigmoid")
    m = keras.Model(i, layers.Flatten()(ops.image.rgb_to_hsv(dense(i))))
    m.compile(optimizer="sgd", loss="mse")
    x = np.full((8, 4, 4, 3), 0.5, "float32")  # every Dense output equal per pixel when its weights tie
    dense.set_weights([np.zeros((3, 3), "float32"), np.zeros(3, "float32")])
    h = m.fit(x, np.zeros((8, 48), "float32"), epochs=1, batch_size=4, verbose=0)
    assert np.isfinite(h.history["loss"]).all()
    assert all(np.isfinite(w).all() for w in m.get_weights())


def test_ssim_as_a_custom_loss_trains():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(16, 8, 8, 1)).astype("float32")
    i = keras.Input((8, 8, 1))
    m = keras.Model(i, layers.Conv2D(1, 3, padding="same", activation="sigmoid")(i))
    m.compile(optimizer=keras.optimizers.Adam(0.05),
              loss=lambda y_true, y_pred: 1.0 - ops.image.ssim(y_true, y_pred, filter_size=3))
    h = m.fit(x, x, epochs=5, batch_size=8, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]


def test_map_coordinates_fill_modes_are_scipys():
    x = np.arange(4, dtype="float32")  # SciPy: mirror d c b | a b c d | c b a; reflect d c b a | a b c d | d c b a
    at = np.array([[-3.0, -1.0, 4.0, 5.0, 6.0]], "float32")
    assert ops.image.map_coordinates(x, at, 0, fill_mode="mirror").tolist() == [3, 1, 2, 1, 0]
    assert ops.image.map_coordinates(x, at, 0, fill_mode="reflect").tolist() == [2, 0, 3, 2, 1]
    assert ops.image.map_coordinates(x, at, 0, fill_mode="wrap").tolist() == [1, 3, 0, 1, 2]
    assert ops.image.map_coordinates(x, at, 0, fill_mode="nearest").tolist() == [0, 0, 3, 3, 3]
    assert ops.image.map_coordinates(x, at, 1, fill_value=9.0).tolist() == [9, 9, 9, 9, 9]


def test_unbatched_images_and_integer_dtypes():
    img = np.arange(48, dtype="uint8").reshape(4, 4, 3)
    y = ops.image.rgb_to_grayscale(img)
    assert y.shape == (4, 4, 1) and y.dtype == np.uint8
    assert ops.image.ssim(img.astype("float32") / 47, img.astype("float32") / 47, filter_size=3).shape == ()
    assert ops.image.extract_patches_3d(np.zeros((4, 4, 4, 2), "float32"), 2).shape == (2, 2, 2, 16)


def test_ctc_runs_on_arrays_only_and_keras_losses_ctc_uses_it():
    with pytest.raises(NotImplementedError, match=r"keras\.ops\.ctc_loss works on arrays only"):
        ops.ctc_loss(keras.Input((3,), dtype="int32"), keras.Input((5, 4)), np.ones(2), np.ones(2))
    with pytest.raises(NotImplementedError, match="beam_search.* use strategy=\"greedy\""):
        ops.ctc_decode(np.zeros((1, 3, 4), "float32"), np.array([3]), strategy="beam_search")
    y_true = np.array([[1, 2, 0], [3, 3, 1]], "int32")
    y_pred = np.random.default_rng(3).normal(size=(2, 6, 5)).astype("float32")
    per_sample = ops.ctc_loss(y_true, y_pred, np.array([2, 3]), np.array([6, 6]), mask_index=0)
    assert per_sample.shape == (2,) and np.all(per_sample > 0)
    np.testing.assert_allclose(keras.losses.CTC()(y_true, y_pred), per_sample.mean(), rtol=1e-5)


def test_fold_is_unfolds_adjoint():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 6, 7)).astype("float32")
    cols = rng.normal(size=ops.unfold(x, 3, padding=1, stride=2).shape).astype("float32")
    lhs = float(np.sum(ops.unfold(x, 3, padding=1, stride=2) * cols))
    rhs = float(np.sum(x * ops.fold(cols, (6, 7), 3, padding=1, stride=2)))
    assert abs(lhs - rhs) < 1e-3 * max(1.0, abs(lhs))
