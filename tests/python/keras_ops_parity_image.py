"""keras.ops.image against Keras 3 (on TensorFlow, in the interop venv), with
keras_ops_parity.py's harness: values, gradients (tf.GradientTape against the engine's
autodiff) and, on symbolic tensors, the operation nodes Keras writes and the model's
predictions; data formats, interpolations, fill modes, unbatched images. Transforms and
points are arguments (eager cases) or constant arrays inside the function (symbolic
cases). The arrays-only functions (map_coordinates, scale_and_translate,
elastic_transform) are compared eagerly; so are keras.ops.nn's unfold and fold (engine, symbolic
too) and ctc_loss and ctc_decode (arrays only). And a model of keras.ops.image calls, trained
and saved as .keras by nnfit, loads in Keras with the same predictions; one saved by Keras
predicts the same in nnfit.

usage: keras_ops_parity_image.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import sys
import textwrap

import keras_ops_parity as base
import keras_ops_parity_nn as nn_parity
import numpy as np

# Images: values in [0, 1] ("img"); hue, saturation and value in [0, 1] too.
SCRIPT = base.SCRIPT.replace('    if kind == "pos":', '    if kind == "img":\n'
                             '        return rng.uniform(0.0, 1.0, size=shape).astype("float32")\n'
                             '    if kind == "pos":', 1)
assert SCRIPT != base.SCRIPT

T = "np.array([1.1, 0.2, -0.8, -0.1, 0.9, 0.6, 0.01, -0.02], 'float32')"  # a projective transform
T_BATCH = "np.array([[1.1, 0.2, -0.8, -0.1, 0.9, 0.6, 0.01, -0.02], [0.8, -0.3, 1.5, 0.2, 1.2, -0.7, 0.0, 0.0]], 'float32')"
START = "np.array([[0, 0], [7, 0], [0, 6], [7, 6]], 'float32')"
END = "np.array([[0.5, 1], [6, 0.2], [1, 5], [7.5, 6.5]], 'float32')"
COORDS = "np.array([[0.3, -1.2, 2.5, 5.7, 3.0], [1.6, 4.2, -0.4, 2.0, 7.9]], 'float32')"
# Where Keras's TensorFlow backend's mirror and reflect agree with SciPy's (Keras's NumPy and
# JAX backends; nnfit's): mirror inside (-size + 1, size - 1), reflect from 0 up.
MIRROR = "np.array([[0.3, -1.2, 2.5, -3.7, 3.0], [1.6, 4.2, -0.4, 2.0, -5.9]], 'float32')"
REFLECT = "np.array([[0.3, 6.2, 2.5, 8.7, 11.5], [1.6, 4.2, 9.4, 2.0, 14.9]], 'float32')"
I, N = "img", "normal"
# (name, function, input specs (kind, shape), gradient?, symbolic?, rtol)
CASES = [
    # resize: methods, antialias, aspect-ratio crop and pad, channels_first
    ("resize_bilinear", "lambda x: ops.image.resize(x, (9, 5))", [(I, (2, 6, 7, 3))], True, True, 1e-4),
    ("resize_nearest", "lambda x: ops.image.resize(x, (4, 10), interpolation='nearest')", [(I, (2, 6, 7, 3))], True, True, 1e-5),
    ("resize_bicubic_antialias", "lambda x: ops.image.resize(x, (3, 4), interpolation='bicubic', antialias=True)", [(I, (2, 6, 7, 2))], True, True, 1e-4),
    ("resize_crop_to_aspect", "lambda x: ops.image.resize(x, (4, 4), crop_to_aspect_ratio=True)", [(I, (2, 6, 9, 3))], True, True, 1e-4),
    ("resize_pad_to_aspect", "lambda x: ops.image.resize(x, (5, 5), pad_to_aspect_ratio=True, fill_value=0.5)", [(I, (2, 6, 9, 3))], True, True, 1e-4),
    ("resize_channels_first", "lambda x: ops.image.resize(x, (8, 3), data_format='channels_first')", [(I, (2, 3, 6, 7))], True, True, 1e-4),
    ("resize_unbatched", "lambda x: ops.image.resize(x, (3, 3))", [(I, (6, 7, 3))], False, False, 1e-4),
    # colour
    ("rgb_to_grayscale", "lambda x: ops.image.rgb_to_grayscale(x)", [(I, (2, 5, 6, 3))], True, True, 1e-5),
    ("rgb_to_grayscale_channels_first", "lambda x: ops.image.rgb_to_grayscale(x, data_format='channels_first')", [(I, (2, 3, 5, 6))], True, True, 1e-5),
    ("rgb_to_grayscale_unbatched", "lambda x: ops.image.rgb_to_grayscale(x)", [(I, (5, 6, 3))], False, False, 1e-5),
    ("rgb_to_hsv", "lambda x: ops.image.rgb_to_hsv(x)", [(I, (2, 5, 6, 3))], True, True, 1e-5),
    ("rgb_to_hsv_grey_pixels", "lambda x: ops.image.rgb_to_hsv(ops.concatenate([x[..., :1], x[..., :1], x[..., 2:]], axis=-1) * 0 + x[..., :1])", [(I, (2, 4, 4, 3))], False, True, 1e-5),
    ("rgb_to_hsv_channels_first", "lambda x: ops.image.rgb_to_hsv(x, data_format='channels_first')", [(I, (2, 3, 4, 5))], True, True, 1e-5),
    ("hsv_to_rgb", "lambda x: ops.image.hsv_to_rgb(x)", [(I, (2, 5, 6, 3))], False, True, 1e-5),  # no gradient on TensorFlow
    ("hsv_round_trip", "lambda x: ops.image.hsv_to_rgb(ops.image.rgb_to_hsv(x))", [(I, (2, 5, 6, 3))], False, True, 1e-5),
    # padding and cropping
    ("pad_images", "lambda x: ops.image.pad_images(x, 1, 2, 3, 0)", [(N, (2, 4, 5, 3))], True, True, 1e-5),
    ("pad_images_target", "lambda x: ops.image.pad_images(x, top_padding=2, right_padding=1, target_height=9, target_width=8)", [(N, (2, 4, 5, 3))], True, True, 1e-5),
    ("pad_images_channels_first", "lambda x: ops.image.pad_images(x, 0, 1, 2, 3, data_format='channels_first')", [(N, (2, 3, 4, 5))], True, True, 1e-5),
    ("pad_images_unbatched", "lambda x: ops.image.pad_images(x, 1, 1, 1, 1)", [(N, (4, 5, 3))], False, False, 1e-5),
    ("crop_images", "lambda x: ops.image.crop_images(x, 1, 2, 2, 1)", [(N, (2, 7, 8, 3))], True, True, 1e-5),
    ("crop_images_target", "lambda x: ops.image.crop_images(x, bottom_cropping=1, left_cropping=3, target_height=4, target_width=2)", [(N, (2, 7, 8, 3))], True, True, 1e-5),
    ("crop_images_channels_first", "lambda x: ops.image.crop_images(x, 1, 0, 0, 2, data_format='channels_first')", [(N, (2, 3, 5, 6))], True, True, 1e-5),
    # filters
    ("gaussian_blur", "lambda x: ops.image.gaussian_blur(x)", [(N, (2, 7, 8, 3))], True, True, 1e-4),
    ("gaussian_blur_5x3", "lambda x: ops.image.gaussian_blur(x, kernel_size=(5, 3), sigma=(1.5, 0.8))", [(N, (2, 7, 8, 2))], True, True, 1e-4),
    ("gaussian_blur_channels_first", "lambda x: ops.image.gaussian_blur(x, (3, 3), (2.0, 2.0), data_format='channels_first')", [(N, (2, 3, 6, 5))], True, True, 1e-4),
    ("sobel_edges", "lambda x: ops.image.sobel_edges(x)", [(N, (2, 6, 7, 3))], True, True, 1e-4),
    ("sobel_edges_channels_first", "lambda x: ops.image.sobel_edges(x, data_format='channels_first')", [(N, (2, 2, 6, 5))], True, True, 1e-4),
    ("ssim", "lambda a, b: ops.image.ssim(a, b, filter_size=5)", [(I, (2, 9, 10, 3)), (I, (2, 9, 10, 3))], True, False, 1e-4),
    ("ssim_symbolic", "lambda x: ops.image.ssim(x, x * 0.8 + 0.1, max_val=2.0, filter_size=3, filter_sigma=1.0)", [(I, (2, 8, 8, 3))], False, True, 1e-4),
    ("ssim_channels_first", "lambda a, b: ops.image.ssim(a, b, filter_size=3, data_format='channels_first')", [(I, (2, 2, 7, 6)), (I, (2, 2, 7, 6))], False, False, 1e-4),
    ("ssim_unbatched", "lambda a, b: ops.image.ssim(a, b, filter_size=3)", [(I, (7, 6, 3)), (I, (7, 6, 3))], False, False, 1e-4),
    # patches
    ("extract_patches", "lambda x: ops.image.extract_patches(x, 2)", [(N, (2, 6, 8, 3))], True, True, 1e-5),
    ("extract_patches_overlapping_same", "lambda x: ops.image.extract_patches(x, (3, 2), strides=(1, 2), padding='same')", [(N, (2, 5, 6, 2))], True, True, 1e-5),
    ("extract_patches_dilated", "lambda x: ops.image.extract_patches(x, 2, strides=1, dilation_rate=2)", [(N, (2, 6, 6, 2))], True, True, 1e-5),
    ("extract_patches_channels_first", "lambda x: ops.image.extract_patches(x, 2, data_format='channels_first')", [(N, (2, 3, 4, 6))], True, True, 1e-5),
    ("extract_patches_unbatched", "lambda x: ops.image.extract_patches(x, 3)", [(N, (6, 6, 2))], False, False, 1e-5),
    ("extract_patches_3d", "lambda x: ops.image.extract_patches_3d(x, 2)", [(N, (2, 4, 4, 6, 2))], True, True, 1e-5),
    ("extract_patches_3d_strides", "lambda x: ops.image.extract_patches_3d(x, (2, 3, 2), strides=1)", [(N, (2, 4, 5, 4, 1))], True, True, 1e-5),
    # projective transforms: interpolations, fill modes, one transform or one per image
    ("affine_transform", f"lambda x: ops.image.affine_transform(x, {T})", [(I, (2, 6, 7, 3))], False, True, 1e-4),
    ("affine_transform_per_image", "lambda x, t: ops.image.affine_transform(x, t)", [(I, (2, 6, 7, 3)), ("img", (2, 8))], False, False, 1e-4),
    ("affine_transform_batch_constant", f"lambda x: ops.image.affine_transform(x, {T_BATCH}, fill_mode='reflect')", [(I, (2, 6, 7, 3))], False, False, 1e-4),
    ("affine_transform_nearest_wrap", f"lambda x: ops.image.affine_transform(x, {T}, interpolation='nearest', fill_mode='wrap')", [(I, (2, 6, 7, 3))], False, True, 1e-5),
    ("affine_transform_fill_nearest", f"lambda x: ops.image.affine_transform(x, {T}, fill_mode='nearest')", [(I, (2, 6, 7, 3))], False, True, 1e-4),
    ("affine_transform_fill_value", f"lambda x: ops.image.affine_transform(x, {T}, fill_value=0.7, data_format='channels_first')", [(I, (2, 3, 6, 7))], False, True, 1e-4),
    ("affine_transform_unbatched", f"lambda x: ops.image.affine_transform(x, {T})", [(I, (6, 7, 3))], False, False, 1e-4),
    ("perspective_transform", f"lambda x: ops.image.perspective_transform(x, {START}, {END})", [(I, (2, 7, 8, 3))], False, True, 1e-4),
    ("perspective_transform_nearest", f"lambda x: ops.image.perspective_transform(x, {START}, {END}, interpolation='nearest', fill_value=0.3)", [(I, (2, 7, 8, 3))], False, True, 1e-4),
    # arrays only
    ("map_coordinates_linear", f"lambda x: ops.image.map_coordinates(x, {COORDS}, 1)", [(N, (6, 8))], False, False, 1e-5),
    ("map_coordinates_nearest", f"lambda x: ops.image.map_coordinates(x, {COORDS}, 0, fill_mode='nearest')", [(N, (6, 8))], False, False, 1e-5),
    ("map_coordinates_reflect", f"lambda x: ops.image.map_coordinates(x, {REFLECT}, 1, fill_mode='reflect')", [(N, (6, 8))], False, False, 1e-5),
    ("map_coordinates_mirror", f"lambda x: ops.image.map_coordinates(x, {MIRROR}, 1, fill_mode='mirror')", [(N, (6, 8))], False, False, 1e-5),
    ("map_coordinates_wrap_fill", f"lambda x: ops.image.map_coordinates(x, {COORDS} * 2, 1, fill_mode='wrap') + ops.image.map_coordinates(x, {COORDS} * 2, 1, fill_value=0.5)", [(N, (6, 8))], False, False, 1e-5),
    ("scale_and_translate_linear", "lambda x: ops.image.scale_and_translate(x, (2, 9, 12, 3), np.array([1.5, 1.7], 'float32'), np.array([0.3, -1.0], 'float32'), (1, 2), 'linear')", [(N, (2, 6, 7, 3))], False, False, 1e-4),
    ("scale_and_translate_cubic_antialias", "lambda x: ops.image.scale_and_translate(x, (2, 3, 4, 3), np.array([0.5, 0.6], 'float32'), np.array([0.0, 0.2], 'float32'), (1, 2), 'cubic', antialias=True)", [(N, (2, 6, 7, 3))], False, False, 1e-4),
    ("scale_and_translate_lanczos3", "lambda x: ops.image.scale_and_translate(x, (2, 6, 14, 3), np.array([2.0], 'float32'), np.array([0.5], 'float32'), (2,), 'lanczos3', antialias=False)", [(N, (2, 6, 7, 3))], False, False, 1e-4),
    # keras.ops.nn's im2col and col2im (channels first), and CTC on arrays
    ("unfold", "lambda x: ops.unfold(x, 2, stride=2)", [(N, (2, 3, 6, 8))], True, True, 1e-5),
    ("unfold_padding_dilation", "lambda x: ops.unfold(x, (3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))", [(N, (2, 2, 7, 6))], True, True, 1e-5),
    ("fold", "lambda x: ops.fold(x, (6, 8), 2, stride=2)", [(N, (2, 12, 12))], True, True, 1e-5),
    ("fold_overlapping_padded", "lambda x: ops.fold(x, (5, 4), (3, 3), padding=1)", [(N, (2, 18, 20))], True, True, 1e-5),
    ("fold_of_unfold", "lambda x: ops.fold(ops.unfold(x, 3, dilation=2, stride=1), (7, 7), 3, dilation=2)", [(N, (2, 2, 7, 7))], False, True, 1e-5),
    ("ctc_loss", "lambda t, o: ops.ctc_loss((t + 1).astype('int32'), o, np.array([3, 2, 0], 'int32'), np.array([7, 6, 4], 'int32'))", [("ids", (3, 4)), (N, (3, 7, 6))], False, False, 1e-4),
    ("ctc_loss_blank_last", "lambda t, o: ops.ctc_loss(t.astype('int32'), o, np.array([4, 1, 2], 'int32'), np.array([8, 8, 5], 'int32'), mask_index=5)", [("ids", (3, 4)), (N, (3, 8, 6))], False, False, 1e-4),
    ("ctc_decode_greedy", "lambda o: ops.ctc_decode(o, np.array([6, 4, 1], 'int32'))[0]", [("ids", (3, 6, 3))], False, False, 1e-5),
    ("ctc_decode_greedy_scores_unmerged", "lambda o: ops.ctc_decode(o, np.array([6, 5, 3], 'int32'), merge_repeated=False, mask_index=2)[1]", [(N, (3, 6, 4))], False, False, 1e-5),
    ("elastic_transform_no_displacement", "lambda x: ops.image.elastic_transform(x, alpha=0.0, sigma=1.0, seed=3)", [(I, (2, 6, 7, 3))], False, False, 1e-5),
]

# Files both ways: a model of keras.ops.image calls, trained a little by nnfit and saved
# as .keras, predicts the same in Keras.
SAVE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from nnfit import keras
    ops = keras.ops
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(32, 12, 12, 3)).astype("float32")
    y = rng.integers(0, 3, size=32)
    i = keras.Input(shape=(12, 12, 3))
    h = ops.image.hsv_to_rgb(ops.image.rgb_to_hsv(i))
    h = ops.image.gaussian_blur(h, (3, 3), (1.0, 1.0))
    h = ops.image.affine_transform(h, np.array([1.0, 0.1, -0.5, 0.0, 1.0, 0.3, 0.0, 0.0], "float32"))
    h = ops.image.crop_images(ops.image.pad_images(h, 1, 1, 1, 1), 0, 0, 2, 2)
    g = ops.image.rgb_to_grayscale(h)
    e = ops.reshape(ops.image.sobel_edges(g), (-1, 12, 12, 2))
    p = ops.image.extract_patches(ops.concatenate([h, e], axis=-1), 4)
    p = ops.image.resize(keras.layers.Conv2D(4, 1)(p), (6, 6), interpolation="bilinear")
    m = keras.Model(i, keras.layers.Dense(3, activation="softmax")(keras.layers.Flatten()(p)))
    m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    m.fit(x, y, epochs=2, batch_size=8, verbose=0)
    m.save(sys.argv[1] + "/ops.keras")
    np.save(sys.argv[1] + "/x.npy", x)
    np.save(sys.argv[1] + "/nnfit.npy", m.predict(x, verbose=0))
""")

# And the other way: a model of these calls built and saved by Keras (its array arguments
# as "__numpy__") predicts the same under nnfit.
KERAS_SAVE = textwrap.dedent("""
    import sys
    import numpy as np
    import keras
    ops = keras.ops
    x = np.random.default_rng(5).uniform(size=(6, 10, 10, 3)).astype("float32")
    i = keras.Input(shape=(10, 10, 3))
    h = ops.image.perspective_transform(i, np.array([[0, 0], [9, 0], [0, 9], [9, 9]], "float32"),
                                        np.array([[1, 0], [9, 1], [0, 8], [8, 9]], "float32"))
    h = ops.image.gaussian_blur(ops.image.resize(h, (8, 12), interpolation="bicubic"), (5, 3), (1.2, 0.7))
    h = ops.image.affine_transform(h, np.array([0.9, 0.1, 0.4, 0.0, 1.1, -0.3, 0.0, 0.0], "float32"), fill_mode="wrap")
    g = ops.image.rgb_to_grayscale(ops.image.crop_images(h, 1, 2, target_height=6, target_width=8))
    p = ops.image.extract_patches(ops.image.pad_images(g, 1, 0, 1, 0), (2, 4))
    s = ops.expand_dims(ops.image.ssim(h, ops.image.hsv_to_rgb(ops.image.rgb_to_hsv(h) * 0.9), filter_size=3), -1)
    m = keras.Model(i, [p, s])
    m.save(sys.argv[1] + "/keras.keras")
    np.save(sys.argv[1] + "/x.npy", x)
    for k, y in enumerate(m.predict(x, verbose=0)):
        np.save(sys.argv[1] + f"/keras{k}.npy", y)
""")
NNFIT_LOAD = textwrap.dedent("""
    import sys
    import numpy as np
    from nnfit import keras
    m = keras.models.load_model(sys.argv[1] + "/keras.keras")
    for k, y in enumerate(m.predict(np.load(sys.argv[1] + "/x.npy"), verbose=0)):
        np.save(sys.argv[1] + f"/nnfit{k}.npy", y)
""")


def keras_to_nnfit(argv):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        failed = base.run_scripts(argv, d, [("keras", KERAS_SAVE), ("nnfit", NNFIT_LOAD)], "Keras's file in nnfit")
        if failed:
            return failed
        for k in range(2):
            problem = base.close(np.load(f"{d}/nnfit{k}.npy"), np.load(f"{d}/keras{k}.npy"), 1e-4,
                                 f"Keras's file in nnfit: output {k}")
            if problem:
                return problem
    return None


def main(argv):
    other_way = keras_to_nnfit(argv)
    print("FAIL", other_way) if other_way else print("Keras's file in nnfit: the same predictions")
    saved = nn_parity.SCRIPT, nn_parity.CASES, nn_parity.SAVE_SCRIPT
    nn_parity.SCRIPT, nn_parity.CASES, nn_parity.SAVE_SCRIPT = SCRIPT, CASES, SAVE_SCRIPT
    try:
        return nn_parity.main(argv, what="keras.ops.image") or (1 if other_way else 0)
    finally:
        nn_parity.SCRIPT, nn_parity.CASES, nn_parity.SAVE_SCRIPT = saved


if __name__ == "__main__":
    sys.exit(main(sys.argv))
