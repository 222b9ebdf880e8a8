"""keras.ops.nn's layer-sized operations against Keras 3 (on TensorFlow, in the interop
venv), with keras_ops_parity.py's harness: values, gradients (tf.GradientTape against the
engine's autodiff) and, on symbolic tensors, the operation nodes Keras writes and the
model's predictions. Kernels, statistics and scales are arguments (eager cases, their
gradients checked) or constant arrays inside the function (symbolic cases). And a model
built with ops.conv, ops.max_pool and ops.layer_normalization, trained and saved as .keras
by nnfit, loads in Keras with the same predictions.

usage: keras_ops_parity_nn.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import keras_ops_parity as base
import numpy as np
import parity_runs

# Targets of the crossentropies: probabilities away from 0 and 1, and distributions (rows
# summing to 1: TensorFlow's softmax_cross_entropy_with_logits differentiates as if they do).
SCRIPT = base.SCRIPT.replace('    if kind == "pos":', '    if kind == "prob":\n'
                             '        return rng.uniform(0.05, 0.95, size=shape).astype("float32")\n'
                             '    if kind == "dist":\n'
                             '        v = rng.uniform(0.05, 1.0, size=shape)\n'
                             '        return (v / v.sum(-1, keepdims=True)).astype("float32")\n'
                             '    if kind == "pos":', 1).replace(
    "\nCASES = ", "\ndef tensor(x):  # a NumPy array as a backend tensor; a symbolic one as it is\n"
    "    return ops.convert_to_tensor(x) if isinstance(x, np.ndarray) else x\n\nCASES = ", 1)
assert "def tensor" in SCRIPT
assert SCRIPT != base.SCRIPT


def kernel(*shape):
    """A constant array of `shape` written into a case's source."""
    return f"np.linspace(-1, 1, {int(np.prod(shape))}, dtype='float32').reshape({shape})"


N, P = "normal", "prob"
# (name, function, input specs (kind, shape), gradient?, symbolic?, rtol)
CASES = [
    # convolutions: channels_last, 1 to 3 spatial axes, strides, dilation, same/valid
    ("conv2d", "lambda x, k: ops.conv(x, k, strides=2, padding='same')", [(N, (2, 9, 9, 4)), (N, (3, 3, 4, 5))], True, False, 1e-4),
    ("conv2d_symbolic", f"lambda x: ops.conv(x, {kernel(3, 3, 4, 5)}, padding='same')", [(N, (2, 8, 8, 4))], True, True, 1e-4),
    ("conv1d_dilated", "lambda x, k: ops.conv(x, k, dilation_rate=2)", [(N, (2, 12, 3)), (N, (3, 3, 4))], True, False, 1e-4),
    ("conv3d", "lambda x, k: ops.conv(x, k, strides=(1, 2, 1), padding='same')", [(N, (2, 5, 6, 4, 2)), (N, (2, 3, 2, 2, 3))], True, False, 1e-4),
    ("conv_channels_first", f"lambda x: ops.conv(x, {kernel(3, 3, 4, 5)}, data_format='channels_first')", [(N, (2, 4, 7, 8))], True, True, 1e-4),
    ("depthwise_conv", "lambda x, k: ops.depthwise_conv(x, k, strides=2, padding='same')", [(N, (2, 8, 8, 3)), (N, (3, 3, 3, 2))], True, False, 1e-4),
    ("depthwise_conv_symbolic", f"lambda x: ops.depthwise_conv(x, {kernel(3, 3, 3, 2)})", [(N, (2, 8, 8, 3))], True, True, 1e-4),
    ("depthwise_conv1d", "lambda x, k: ops.depthwise_conv(x, k, padding='same')", [(N, (2, 10, 3)), (N, (3, 3, 2))], True, False, 1e-4),
    ("separable_conv", "lambda x, d, p: ops.separable_conv(x, d, p, padding='same')", [(N, (2, 8, 8, 3)), (N, (3, 3, 3, 2)), (N, (1, 1, 6, 4))], True, False, 1e-4),
    ("separable_conv_symbolic", f"lambda x: ops.separable_conv(x, {kernel(3, 3, 3, 2)}, {kernel(1, 1, 6, 4)}, strides=2)", [(N, (2, 9, 9, 3))], True, True, 1e-4),
    ("conv_transpose", "lambda x, k: ops.conv_transpose(x, k, strides=2, padding='same')", [(N, (2, 5, 5, 4)), (N, (3, 3, 3, 4))], True, False, 1e-4),
    ("conv_transpose_output_padding", "lambda x, k: ops.conv_transpose(x, k, strides=2, output_padding=1)", [(N, (2, 4, 5, 4)), (N, (3, 3, 3, 4))], True, False, 1e-4),
    ("conv_transpose1d", "lambda x, k: ops.conv_transpose(x, k, strides=3)", [(N, (2, 5, 4)), (N, (4, 2, 4))], True, False, 1e-4),
    # (not symbolic: Keras 3.15.1's ConvTranspose.call passes output_padding for padding and fails)
    # poolings (the adaptive ones on tensor(x): Keras's TensorFlow backend reads a
    # tf.Tensor's shape.as_list() and fails on a NumPy array)
    ("max_pool", "lambda x: ops.max_pool(x, 2)", [("sep", (2, 8, 8, 3))], True, True, 1e-5),
    ("max_pool_same", "lambda x: ops.max_pool(x, 3, strides=2, padding='same')", [("sep", (2, 7, 7, 3))], True, True, 1e-5),
    ("max_pool1d", "lambda x: ops.max_pool(x, 2)", [("sep", (2, 9, 3))], True, True, 1e-5),
    ("max_pool_channels_first", "lambda x: ops.max_pool(x, (2, 2), data_format='channels_first')", [("sep", (2, 3, 6, 8))], True, True, 1e-5),
    ("average_pool", "lambda x: ops.average_pool(x, (2, 3), strides=(1, 2), padding='same')", [(N, (2, 7, 8, 3))], True, True, 1e-5),
    ("average_pool3d", "lambda x: ops.average_pool(x, 2)", [(N, (2, 4, 4, 4, 2))], True, True, 1e-5),
    ("adaptive_average_pool", "lambda x: ops.adaptive_average_pool(tensor(x), (3, 2))", [(N, (2, 8, 7, 3))], True, True, 1e-5),
    ("adaptive_max_pool", "lambda x: ops.adaptive_max_pool(tensor(x), (3, 4))", [("sep", (2, 7, 9, 3))], True, True, 1e-5),
    ("adaptive_average_pool1d", "lambda x: ops.adaptive_average_pool(tensor(x), (4,))", [(N, (2, 10, 3))], True, True, 1e-5),
    # attention
    ("dot_product_attention", "lambda q, k, v: ops.dot_product_attention(q, k, v)", [(N, (2, 5, 2, 4)), (N, (2, 6, 2, 4)), (N, (2, 6, 2, 3))], True, True, 1e-4),
    ("dot_product_attention_causal", "lambda q, k, v: ops.dot_product_attention(q, k, v, scale=0.3, is_causal=True)", [(N, (2, 5, 2, 4)), (N, (2, 5, 2, 4)), (N, (2, 5, 2, 4))], True, True, 1e-4),
    ("dot_product_attention_gqa_bias_mask", "lambda q, k, v, b: ops.dot_product_attention(q, k, v, bias=b, mask=b > -0.5)", [(N, (2, 5, 4, 3)), (N, (2, 6, 2, 3)), (N, (2, 6, 2, 3)), (N, (2, 4, 5, 6))], True, False, 1e-4),
    # normalizations and statistics
    ("batch_normalization", "lambda x, m, v, o, s: ops.batch_normalization(x, m, v, axis=-1, offset=o, scale=s)", [(N, (3, 4, 5)), (N, (5,)), ("pos", (5,)), (N, (5,)), (N, (5,))], True, False, 1e-4),
    ("batch_normalization_axis1", "lambda x, m, v: ops.batch_normalization(x, m, v, axis=1, epsilon=0.01)", [(N, (3, 4, 5)), (N, (4,)), ("pos", (4,))], True, False, 1e-4),
    ("batch_normalization_symbolic", "lambda x: ops.batch_normalization(x, np.arange(5, dtype='float32'), np.full(5, 2.0, 'float32'), axis=-1, scale=np.ones(5, 'float32'))", [(N, (3, 4, 5))], True, True, 1e-4),
    ("layer_normalization", "lambda x: ops.layer_normalization(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("layer_normalization_gamma_beta", "lambda x, g, b: ops.layer_normalization(x, g, b, epsilon=1e-3)", [(N, (3, 4, 5)), (N, (5,)), (N, (5,))], True, False, 1e-4),
    ("layer_normalization_fused_symbolic", "lambda x: ops.layer_normalization(x, np.linspace(0.5, 2, 5, dtype='float32'), np.linspace(-1, 1, 5, dtype='float32'))", [(N, (3, 4, 5))], True, True, 1e-4),
    ("layer_normalization_axes", "lambda x, g: ops.layer_normalization(x, g, axis=[1, 2])", [(N, (3, 4, 5)), (N, (4, 5))], True, False, 1e-4),
    ("rms_normalization", "lambda x: ops.rms_normalization(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("rms_normalization_scale", "lambda x, s: ops.rms_normalization(x, s, epsilon=1e-3)", [(N, (3, 4, 5)), (N, (5,))], True, False, 1e-4),
    ("moments", "lambda x: ops.moments(x, axes=[1])", [(N, (3, 4, 5))], False, True, 1e-4),
    ("moments_keepdims", "lambda x: ops.moments(x, axes=[1, 2], keepdims=True)", [(N, (3, 4, 5))], False, True, 1e-4),
    # losses as functions
    ("binary_crossentropy_logits", "lambda t, z: ops.binary_crossentropy(t, z, from_logits=True)", [(P, (3, 4)), (N, (3, 4))], True, True, 1e-4),
    ("binary_crossentropy", "lambda t, p: ops.binary_crossentropy(t, p)", [(P, (3, 4)), (P, (3, 4))], True, True, 1e-4),
    ("categorical_crossentropy_logits", "lambda t, z: ops.categorical_crossentropy(t, z, from_logits=True)", [("dist", (3, 4, 5)), (N, (3, 4, 5))], True, True, 1e-4),
    ("categorical_crossentropy", "lambda t, p: ops.categorical_crossentropy(t, p)", [(P, (3, 5)), (P, (3, 5))], True, True, 1e-4),
    ("categorical_crossentropy_axis1", "lambda t, p: ops.categorical_crossentropy(t, p, axis=1)", [(P, (3, 4, 2)), (P, (3, 4, 2))], True, True, 1e-4),
    ("sparse_categorical_crossentropy_logits", "lambda t, z: ops.sparse_categorical_crossentropy(t, z, from_logits=True)", [("ids", (3, 4)), (N, (3, 4, 5))], True, True, 1e-4),
    ("sparse_categorical_crossentropy", "lambda t, p: ops.sparse_categorical_crossentropy(t, p)", [("ids", (6, 1)), (P, (6, 5))], True, True, 1e-4),
    # encodings, rearrangements, image quality
    ("multi_hot", "lambda x: ops.multi_hot(x, 5)", [("ids", (3, 4))], False, True, 1e-5),
    ("depth_to_space", "lambda x: ops.depth_to_space(x, 2)", [(N, (2, 3, 4, 8))], True, True, 1e-5),
    ("space_to_depth", "lambda x: ops.space_to_depth(x, 2)", [(N, (2, 4, 6, 3))], True, True, 1e-5),
    ("depth_to_space_channels_first", "lambda x: ops.depth_to_space(x, 2, data_format='channels_first')", [(N, (2, 8, 3, 4))], True, True, 1e-5),
    ("psnr", "lambda a, b: ops.psnr(a, b, 2.0)", [(N, (2, 4, 4, 3)), (N, (2, 4, 4, 3))], True, False, 1e-4),
    # the activations Keras 3 added, as keras.ops and as keras.activations
    ("celu", "lambda x: ops.celu(x, alpha=0.7)", [("sep", (3, 4, 5))], True, True, 1e-4),
    ("glu", "lambda x: ops.glu(x)", [(N, (3, 4, 6))], True, True, 1e-4),
    ("glu_axis1", "lambda x: ops.glu(x, axis=1)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("hard_shrink", "lambda x: ops.hard_shrink(x, threshold=0.3)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("hard_tanh", "lambda x: ops.hard_tanh(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("log_sigmoid", "lambda x: ops.log_sigmoid(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("soft_shrink", "lambda x: ops.soft_shrink(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("sparse_plus", "lambda x: ops.sparse_plus(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("sparse_sigmoid", "lambda x: ops.sparse_sigmoid(x)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("sparsemax", "lambda x: ops.sparsemax(x)", [("sep", (3, 4, 5))], True, True, 1e-4),
    ("sparsemax_axis1", "lambda x: ops.sparsemax(x * 0.2, axis=1)", [("sep", (3, 4, 5))], False, True, 1e-4),
    ("squareplus", "lambda x: ops.squareplus(x, b=2)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("tanh_shrink", "lambda x: ops.tanh_shrink(x)", [(N, (3, 4, 5))], True, True, 1e-4),
    ("threshold", "lambda x: ops.threshold(x, 0.25, -2.0)", [("sep", (3, 4, 5))], True, True, 1e-5),
    ("activations_functions", "lambda x: keras.activations.sparsemax(keras.activations.celu(x))", [("sep", (3, 4, 5))], False, False, 1e-4),
    # (as layers' activation= and Activation layers: the model of files both ways below)
]

# Files both ways: a model of keras.ops.nn calls and of layers with Keras 3's newer
# activations (celu, log_sigmoid, squareplus), trained a little by nnfit and saved as
# .keras, predicts the same in Keras.
SAVE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from nnfit import keras
    ops = keras.ops
    rng = np.random.default_rng(3)
    x = rng.normal(size=(32, 8, 8, 3)).astype("float32")
    y = rng.integers(0, 4, size=32)
    i = keras.Input(shape=(8, 8, 3))
    h = keras.layers.Conv2D(6, 3, padding="same", activation="celu")(i)
    h = ops.conv(h, np.linspace(-0.5, 0.5, 3 * 3 * 6 * 8, dtype="float32").reshape(3, 3, 6, 8), padding="same")
    h = ops.max_pool(ops.relu(h), 2)
    h = keras.layers.Activation("log_sigmoid")(ops.layer_normalization(h, epsilon=1e-3))
    h = ops.depth_to_space(h, 2)
    h = ops.average_pool(h, 2, strides=2)
    h = keras.layers.Dense(16, activation="squareplus")(keras.layers.Flatten()(h))
    m = keras.Model(i, keras.layers.Dense(4, activation="softmax")(h))
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    m.fit(x, y, epochs=2, batch_size=8, verbose=0)
    m.save(sys.argv[1] + "/ops.keras")
    np.save(sys.argv[1] + "/x.npy", x)
    np.save(sys.argv[1] + "/nnfit.npy", m.predict(x, verbose=0))
""")


def main(argv, what="keras.ops.nn"):
    script = SCRIPT.replace("CASES_SOURCE", repr([c[:5] for c in CASES]))
    keras_res, nnfit_res = parity_runs.run_both(script, argv, timeout=900)
    both_ways = base.files_both_ways(argv, SAVE_SCRIPT)
    failures = ([both_ways] if both_ways else []) + base.case_failures(CASES, keras_res, nnfit_res)
    for f in failures:
        print("FAIL", f)
    print(f"{what} parity: {len(CASES) + 1 - len(failures)} of {len(CASES) + 1} agree (cases and files both ways)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
