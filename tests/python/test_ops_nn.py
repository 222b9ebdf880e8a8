"""keras.ops.nn's layer-sized operations in nnfit.keras (values against Keras are
Keras.OpsParityNN's, keras_ops_parity_nn.py): a subclassed layer written with ops.conv
trains as Conv2D does and is emitted as Conv2D is (conv2d, then bias_add), the operations
in a model save and load, Moments' two outputs, and the errors a user can meet."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers, ops


class OpsConv(layers.Layer):
    """Conv2D written with keras.ops: a kernel and a bias of add_weight's."""

    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(3, 3, input_shape[-1], self.filters), initializer="glorot_uniform")
        self.bias = self.add_weight(shape=(self.filters,), initializer="zeros")

    def call(self, x):
        return ops.relu(ops.conv(x, self.kernel, padding="same") + self.bias)


def _images(n=256, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8, 8, 1)).astype("float32")
    y = (x[:, :4].mean(axis=(1, 2, 3)) > 0).astype("int32")
    return x, y


def test_a_layer_written_with_ops_conv_trains_like_conv2d():
    x, y = _images()
    losses = {}
    for use_ops in (True, False):
        keras.utils.set_random_seed(1)
        i = keras.Input((8, 8, 1))
        h = OpsConv(8)(i) if use_ops else layers.Conv2D(8, 3, padding="same", activation="relu")(i)
        h = ops.max_pool(h, 2) if use_ops else layers.MaxPooling2D(2)(h)
        m = keras.Model(i, layers.Dense(2, activation="softmax")(layers.Flatten()(h)))
        m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        losses[use_ops] = m.fit(x, y, epochs=8, batch_size=32, verbose=0).history["loss"]
    assert losses[True][-1] < 0.85 * losses[True][0]
    # Same initial weights (the seed), same ops: the curves agree closely.
    np.testing.assert_allclose(losses[True], losses[False], rtol=2e-3)


def test_operations_in_a_model_save_and_load(tmp_path):
    x, y = _images(64)
    i = keras.Input((8, 8, 1))
    h = ops.conv(i, np.linspace(-1, 1, 9 * 4, dtype="float32").reshape(3, 3, 1, 4), padding="same")
    h = ops.layer_normalization(ops.average_pool(h, 2), epsilon=1e-3)
    h = ops.space_to_depth(ops.depth_to_space(h, 2), 2)
    h = ops.adaptive_max_pool(h, (2, 2))
    m = keras.Model(i, layers.Dense(2, activation="softmax")(layers.Flatten()(h)))
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    m.fit(x, y, epochs=1, batch_size=16, verbose=0)
    m.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), m.predict(x, verbose=0), rtol=1e-5)
    kinds = {l["class_name"] for l in loaded.get_config()["layers"]}
    assert {"Conv", "AveragePool", "LayerNorm", "DepthToSpace", "SpaceToDepth", "AdaptiveMaxPool"} <= kinds


def test_moments_gives_two_tensors_eagerly_and_symbolically():
    x = np.random.default_rng(0).normal(size=(3, 4, 5)).astype("float32")
    mean, var = ops.moments(x, axes=[1, 2])
    np.testing.assert_allclose(mean, x.mean(axis=(1, 2)), rtol=1e-5)
    np.testing.assert_allclose(var, x.var(axis=(1, 2)), rtol=1e-4)
    i = keras.Input((4, 5))
    mean, var = ops.moments(i, axes=[-1], keepdims=True)
    assert mean.shape == (None, 4, 1) and var.shape == (None, 4, 1)
    out = keras.Model(i, [mean, var]).predict(x, verbose=0)
    np.testing.assert_allclose(out[1], x.var(axis=-1, keepdims=True), rtol=1e-4)


def test_numpy_values_of_the_encodings():
    np.testing.assert_array_equal(ops.multi_hot(np.array([[0.0, 4, 4], [1, 2, 3]]), 5),
                                  [[1, 0, 0, 0, 1], [0, 1, 1, 1, 0]])
    x = np.arange(2 * 2 * 2 * 4, dtype="float32").reshape(2, 2, 2, 4)
    np.testing.assert_array_equal(ops.space_to_depth(ops.depth_to_space(x, 2), 2), x)
    np.testing.assert_allclose(ops.psnr(x, x + 1.0, 255.0), 20 * np.log10(255.0), rtol=1e-5)


def test_errors_name_the_operation_and_what_is_wrong():
    x = keras.Input((8, 8, 3))
    with pytest.raises(Exception, match=r"\(Conv\).*channels must be a multiple of the kernel's input channels"):
        ops.conv(x, np.zeros((3, 3, 2, 4), "float32"))
    with pytest.raises(Exception, match=r"\(Conv\).*rank"):
        ops.conv(x, np.zeros((3, 3, 4), "float32"))
    with pytest.raises(ValueError, match="data_format"):
        ops.max_pool(x, 2, data_format="nhwc")
    with pytest.raises(Exception, match=r"\(PSNR\): its output .* does not keep the batch axis"):
        ops.psnr(x, x, 1.0)
    with pytest.raises(Exception, match=r"\(DepthToSpace\).*multiple of block_size"):
        ops.depth_to_space(x, 2)
    q = keras.Input((5, 2, 4))
    with pytest.raises(ValueError, match="Flash attention"):
        ops.dot_product_attention(q, q, q, flash_attention=True)
    with pytest.raises(Exception, match=r"\(SparseCategoricalCrossentropy\).*without its last axis"):
        ops.sparse_categorical_crossentropy(keras.Input((3,)), keras.Input((4, 5)))
