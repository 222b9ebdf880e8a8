"""keras.ops.image on nnfit's engine: each function records Keras 3's own operation node
(module keras.src.ops.image, its class and config) on symbolic tensors and runs the same
node's engine ops on arrays (src/nn/layers/operation_image_emitters.cpp). An unbatched
image (rank 3) runs as a batch of one. `map_coordinates`, `scale_and_translate` and
`elastic_transform` have no engine form (gathers at data-dependent positions, per-axis
weight matrices, random fields): they run on arrays only, in NumPy, as Keras's backends
compute them (_image_numpy.py), and refuse a symbolic tensor naming themselves.
"""
import numpy as np

from nnfit.keras.ops._operation import Const, call, is_symbolic
from nnfit.keras.ops import _image_numpy

__all__ = ["resize", "affine_transform", "perspective_transform", "extract_patches", "extract_patches_3d",
           "rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb", "pad_images", "crop_images", "gaussian_blur",
           "sobel_edges", "ssim", "map_coordinates", "scale_and_translate", "elastic_transform"]


def _image_call(cls, snake, images, config, extra=(), image_rank=4, out_dtype=None):
    """Records or runs one image operation on `images` (and `extra` arguments); an array of
    rank image_rank - 1 runs as a batch of one, and an integer array's result is cast back
    to its dtype as Keras's TensorFlow backend casts it."""
    if is_symbolic(images):
        if len(images.shape) != image_rank:
            raise ValueError(f"keras.ops.image.{snake}: expected a batch of images of rank {image_rank}, got shape "
                             f"{tuple(images.shape)}")
        return call("image", cls, snake, [images, *extra], config, out_dtype=out_dtype)
    a = np.asarray(images)
    unbatched = a.ndim == image_rank - 1
    if a.ndim not in (image_rank - 1, image_rank):
        raise ValueError(f"keras.ops.image.{snake}: expected images of rank {image_rank - 1} (one) or {image_rank} "
                         f"(a batch), got shape {a.shape}")
    out = call("image", cls, snake, [a[None] if unbatched else a, *extra], config)
    out = np.asarray(out)
    if unbatched:
        out = out[0]
    if a.dtype.kind in "iu" and out_dtype is None:
        out = out.astype(a.dtype)
    return out


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """keras.ops.image.resize: tf.image.resize after Keras's crop or pad to the aspect ratio."""
    return _image_call("Resize", "resize", images,
                       {"size": [int(s) for s in size], "interpolation": interpolation, "antialias": antialias,
                        "crop_to_aspect_ratio": crop_to_aspect_ratio, "pad_to_aspect_ratio": pad_to_aspect_ratio,
                        "fill_mode": fill_mode, "fill_value": fill_value, "data_format": data_format})


def rgb_to_grayscale(images, data_format=None):
    return _image_call("RGBToGrayscale", "rgb_to_grayscale", images, {"data_format": data_format})


def rgb_to_hsv(images, data_format=None):
    return _image_call("RGBToHSV", "rgb_to_hsv", images, {"data_format": data_format})


def hsv_to_rgb(images, data_format=None):
    return _image_call("HSVToRGB", "hsv_to_rgb", images, {"data_format": data_format})


def sobel_edges(images, data_format=None):
    return _image_call("SobelEdges", "sobel_edges", images, {"data_format": data_format})


def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None, right_padding=None,
               target_height=None, target_width=None, data_format=None):
    return _image_call("PadImages", "pad_images", images,
                       {"top_padding": top_padding, "left_padding": left_padding, "bottom_padding": bottom_padding,
                        "right_padding": right_padding, "target_height": target_height, "target_width": target_width,
                        "data_format": data_format})


def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None, right_cropping=None,
                target_height=None, target_width=None, data_format=None):
    return _image_call("CropImages", "crop_images", images,
                       {"top_cropping": top_cropping, "left_cropping": left_cropping,
                        "bottom_cropping": bottom_cropping, "right_cropping": right_cropping,
                        "target_height": target_height, "target_width": target_width, "data_format": data_format})


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    return _image_call("GaussianBlur", "gaussian_blur", images,
                       {"kernel_size": list(kernel_size), "sigma": list(sigma), "data_format": data_format})


def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, data_format=None):
    """keras.ops.image.ssim: one value per image (Keras's _ssim, channels averaged)."""
    config = {"max_val": max_val, "filter_size": filter_size, "filter_sigma": filter_sigma, "k1": k1, "k2": k2,
              "data_format": data_format}
    if is_symbolic(image1) or is_symbolic(image2) or np.ndim(image1) == 4:
        return call("image", "SSIM", "ssim", [image1, image2], config)
    out = call("image", "SSIM", "ssim", [np.asarray(image1)[None], np.asarray(image2)[None]], config)
    return np.asarray(out).reshape(())


def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """keras.ops.image.extract_patches: a convolution with an identity kernel (Keras's)."""
    if isinstance(size, int):
        size = (size, size)
    size = list(size)
    from nnfit.keras import backend as _backend
    config = {"size": size, "strides": size if strides is None else (list(strides) if not isinstance(strides, int) else strides),
              "dilation_rate": list(dilation_rate) if isinstance(dilation_rate, (tuple, list)) else dilation_rate,
              "padding": padding, "data_format": data_format or _backend.image_data_format()}
    return _image_call("ExtractPatches", "extract_patches", images, config, image_rank=len(size) + 2)


def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    if isinstance(size, int):
        size = (size, size, size)
    if len(size) != 3:
        raise ValueError(f"keras.ops.image.extract_patches_3d: size must be an int or 3 ints, got {size!r}")
    return extract_patches(volumes, size, strides, dilation_rate, padding, data_format)


def _points(x, what, snake):
    if is_symbolic(x):
        raise NotImplementedError(f"keras.ops.image.{snake}: a symbolic {what} is not supported by nnfit, which solves "
                                  "the transform when it builds the graph: pass an array")
    return Const(np.asarray(x, "float32"))


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0, data_format=None):
    """keras.ops.image.affine_transform: TensorFlow's ImageProjectiveTransformV3 (the engine's
    affine_transform op; the transform is data, not differentiated, as in TensorFlow)."""
    config = {"interpolation": interpolation, "fill_mode": fill_mode, "fill_value": fill_value,
              "data_format": data_format}
    if not is_symbolic(transform):
        transform = np.asarray(transform, "float32")
    return _image_call("AffineTransform", "affine_transform", images, config, extra=(transform,))


def perspective_transform(images, start_points, end_points, interpolation="bilinear", fill_value=0, data_format=None):
    config = {"interpolation": interpolation, "fill_value": fill_value, "data_format": data_format}
    extra = (_points(start_points, "start_points", "perspective_transform"),
             _points(end_points, "end_points", "perspective_transform"))
    return _image_call("PerspectiveTransform", "perspective_transform", images, config, extra=extra)


def _arrays_only(snake, *tensors):
    if any(is_symbolic(t) for t in tensors):
        raise NotImplementedError(f"keras.ops.image.{snake} works on arrays only in nnfit (it has no engine form: "
                                  "docs/python.md, keras.ops.image)")


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    _arrays_only("map_coordinates", inputs, coordinates)
    return _image_numpy.map_coordinates(inputs, coordinates, order, fill_mode, fill_value)


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method, antialias=True):
    _arrays_only("scale_and_translate", images, scale, translation)
    return _image_numpy.scale_and_translate(images, output_shape, scale, translation, spatial_dims, method, antialias)


def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                      seed=None, data_format=None):
    _arrays_only("elastic_transform", images)
    return _image_numpy.elastic_transform(images, alpha, sigma, interpolation, fill_mode, fill_value, seed,
                                          data_format, gaussian_blur)
