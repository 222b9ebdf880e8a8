"""Images for keras.utils: load_img, save_img, img_to_array, array_to_img (Keras 3.15's, on
Pillow as Keras's are), and what image_dataset_from_directory needs of TensorFlow's image ops:
decode_image(channels=...) and resize(size, method), computed in NumPy to give TensorFlow's
values.

Note [TensorFlow's image ops in NumPy]: Keras's image_dataset_from_directory decodes with
tf.image.decode_image and resizes with tf.image.resize (no antialiasing, half-pixel centers),
whose outputs are float32 (uint8 for "nearest"). JPEG files are decoded by libjpeg-turbo's
TurboJPEG library (Debian's libturbojpeg0, through ctypes) with its fast integer IDCT and fancy
upsampling, TensorFlow's defaults, and read as grayscale as libjpeg's luminance channel, as
TensorFlow asks libjpeg for it; where that library is missing, Pillow decodes them with the
accurate IDCT, a few levels away from TensorFlow's values. Pillow decodes PNG, BMP and GIF
(exactly); a color PNG read as grayscale is libpng's fixed-point luminance
(9797 R + 19234 G + 3737 B) >> 15, truncated, as TensorFlow has libpng convert it. Resizing follows TensorFlow's kernels: "bilinear"
(resize_bilinear: lower/upper rows and columns, lerp in float32), "nearest"
(resize_nearest_neighbor: floor((i + 0.5) * scale)) and "bicubic" (resize_bicubic: Keys'
cubic with a = -0.5 from TensorFlow's 1024-step weight table, taps outside the image dropped
and the rest renormalized). Pillow's own resize filters antialias and give other values.
"""
import io
import pathlib
import warnings

import numpy as np


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("Could not import PIL.Image. nnfit.keras's image utilities need Pillow (Debian: "
                          "python3-pil, installed by scripts/setup.sh; or pip install pillow).") from None
    return Image


def _standardize_data_format(data_format):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    return data_format


def img_to_array(img, data_format=None, dtype=None):
    """An image (a PIL image or anything np.asarray reads) as a 3-D float32 array, as Keras's."""
    data_format = _standardize_data_format(data_format)
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x.reshape((1,) + x.shape if data_format == "channels_first" else x.shape + (1,))
    raise ValueError(f"Unsupported image shape: {x.shape}")


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3-D array as a PIL image (scaled to 0..255 with scale), as Keras's."""
    Image = _pil()
    data_format = _standardize_data_format(data_format)
    x = np.asarray(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        if np.max(x) != 0:
            x = x / np.max(x)
        x = x * 255
    if x.shape[2] in (3, 4):
        return Image.fromarray(x.astype("uint8"), "RGBA" if x.shape[2] == 4 else "RGB")
    if x.shape[2] == 1:
        if np.max(x) > 255:
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {x.shape[2]}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Keras's save_img: array_to_img, then Pillow's save (format from the file's extension)."""
    data_format = _standardize_data_format(data_format)
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.")
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def _resampling():
    Image = _pil()
    r = getattr(Image, "Resampling", Image)
    return {"nearest": r.NEAREST, "bilinear": r.BILINEAR, "bicubic": r.BICUBIC, "hamming": r.HAMMING,
            "box": r.BOX, "lanczos": r.LANCZOS}


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """Keras's load_img: a PIL image in `color_mode`, resized by Pillow to `target_size`
    ((height, width)), center-cropped to its aspect ratio first with keep_aspect_ratio."""
    Image = _pil()
    if isinstance(path, io.BytesIO):
        img = Image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as f:
            img = Image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode == "rgba":
        if img.mode != "RGBA":
            img = img.convert("RGBA")
    elif color_mode == "rgb":
        if img.mode != "RGB":
            img = img.convert("RGB")
    else:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if target_size is not None:
        width_height = (target_size[1], target_size[0])
        if img.size != width_height:
            methods = _resampling()
            if interpolation not in methods:
                raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                                 f"{', '.join(methods.keys())}")
            resample = methods[interpolation]
            if keep_aspect_ratio:
                width, height = img.size
                target_width, target_height = width_height
                crop_height = min(height, (width * target_height) // target_width)
                crop_width = min(width, (height * target_width) // target_height)
                top, left = (height - crop_height) // 2, (width - crop_width) // 2
                img = img.resize(width_height, resample, box=[left, top, left + crop_width, top + crop_height])
            else:
                img = img.resize(width_height, resample)
    return img


# TensorFlow's decode_image and resize (Note [TensorFlow's image ops in NumPy]).

def decode_image(path, channels):
    """The image file at `path` as uint8 (height, width, channels), as tf.image.decode_image
    (channels=channels, expand_animations=False) gives it."""
    Image = _pil()
    with open(path, "rb") as f:
        data = f.read()
    if data[:3] == b"\xff\xd8\xff" and channels == 4:
        raise ValueError(f"{path}: JPEG does not support 4 channels (TensorFlow's decode_image refuses it too); "
                         "use color_mode='rgb' or 'grayscale'")
    if data[:2] == b"BM" and channels == 1:
        raise ValueError(f"{path}: `channels` must be 0, 3 or 4 for BMP, but got 1 (TensorFlow's decode_image "
                         "refuses it too); use color_mode='rgb' or 'rgba'")
    if data[:3] == b"\xff\xd8\xff" and _turbojpeg() is not None:
        return _decode_jpeg(data, channels)
    img = Image.open(io.BytesIO(data))
    if img.format == "JPEG":
        if channels == 1 and img.mode != "L":
            img.draft("L", img.size)  # libjpeg's grayscale output: the luminance channel
        img = img.convert("L" if channels == 1 else "RGB")
        x = np.asarray(img)
        return x[:, :, None] if channels == 1 else x
    img.seek(0)
    if img.mode not in ("L", "RGB", "RGBA"):
        img = img.convert("RGBA" if ("A" in img.mode or "transparency" in img.info) else "RGB")
    x = np.asarray(img)
    if x.ndim == 2:
        x = x[:, :, None]
    have = x.shape[2]
    if channels == 1 and have >= 3:
        r, g, b = (x[:, :, k].astype(np.uint32) for k in range(3))
        return ((9797 * r + 19234 * g + 3737 * b) >> 15).astype(np.uint8)[:, :, None]
    if channels == 3:
        return np.repeat(x, 3, axis=2) if have == 1 else x[:, :, :3]
    if channels == 4:
        if have == 4:
            return x
        rgb = np.repeat(x, 3, axis=2) if have == 1 else x
        return np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 255, np.uint8)], axis=2)
    return x


_TJ = {}


def _turbojpeg():
    """libturbojpeg through ctypes (None where it is not installed)."""
    if "lib" not in _TJ:
        import ctypes
        import ctypes.util
        lib = None
        for name in ("libturbojpeg.so.0", ctypes.util.find_library("turbojpeg")):
            try:
                lib = ctypes.CDLL(name) if name else None
            except OSError:
                lib = None
            if lib is not None:
                break
        if lib is not None:
            lib.tjInitDecompress.restype = ctypes.c_void_p
            lib.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong] + \
                [ctypes.POINTER(ctypes.c_int)] * 4
            lib.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p] + \
                [ctypes.c_int] * 5
            lib.tjDestroy.argtypes = [ctypes.c_void_p]
            lib.tjGetErrorStr2.argtypes = [ctypes.c_void_p]
            lib.tjGetErrorStr2.restype = ctypes.c_char_p
            lib.tjGetErrorCode.argtypes = [ctypes.c_void_p]
        _TJ["lib"] = lib
    return _TJ["lib"]


def _decode_jpeg(data, channels):
    """A JPEG as TensorFlow's decode_jpeg (fast integer IDCT, fancy upsampling) gives it."""
    import ctypes
    tj = _turbojpeg()
    handle = tj.tjInitDecompress()
    try:
        width, height, subsamp, colorspace = (ctypes.c_int() for _ in range(4))
        if tj.tjDecompressHeader3(handle, data, len(data), ctypes.byref(width), ctypes.byref(height),
                                  ctypes.byref(subsamp), ctypes.byref(colorspace)) != 0:
            raise ValueError(f"cannot decode the JPEG file: {tj.tjGetErrorStr2(handle).decode()}")
        out = np.empty((height.value, width.value, channels), np.uint8)
        pixel_format = 0 if channels == 3 else 6  # TJPF_RGB, TJPF_GRAY
        if tj.tjDecompress2(handle, data, len(data), out.ctypes.data, width.value, 0, height.value, pixel_format,
                            2048) != 0 and tj.tjGetErrorCode(handle) != 0:  # TJFLAG_FASTDCT; 0: a warning only
            raise ValueError(f"cannot decode the JPEG file: {tj.tjGetErrorStr2(handle).decode()}")
        return out
    finally:
        tj.tjDestroy(handle)


def _bilinear_axis(out_size, in_size):
    scale = np.float32(in_size) / np.float32(out_size)
    centers = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    floor = np.floor(centers)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(centers).astype(np.int64), in_size - 1)
    return lower, upper, (centers - floor).astype(np.float32)


def _bicubic_table():
    a = -0.5
    x = np.arange(1025, dtype=np.float64) / 1024
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near.astype(np.float32), far.astype(np.float32)


def _bicubic_axis(out_size, in_size):
    """Per output index: 4 input indices and their weights (TensorFlow's GetWeightsAndIndices
    with half-pixel centers and Keys' cubic)."""
    near, far = _bicubic_table()
    scale = np.float32(in_size) / np.float32(out_size)
    loc = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)
    base = np.floor(loc).astype(np.int64)
    offset = np.rint((loc - base) * np.float32(1024)).astype(np.int64)
    weights = np.stack([far[offset], near[offset], near[1024 - offset], far[1024 - offset]], axis=1)
    taps = base[:, None] + np.arange(-1, 3)[None, :]
    inside = (taps >= 0) & (taps < in_size)
    weights = np.where(inside, weights, np.float32(0))
    weights = weights / weights.sum(axis=1, keepdims=True)
    return np.clip(taps, 0, in_size - 1), weights.astype(np.float32)


def resize(image, size, method="bilinear"):
    """tf.image.resize(image, size, method) of one (height, width, channels) image."""
    out_h, out_w = int(size[0]), int(size[1])
    in_h, in_w = image.shape[:2]
    if method == "nearest":
        rows = np.minimum(np.floor((np.arange(out_h, dtype=np.float32) + np.float32(0.5)) *
                                   (np.float32(in_h) / np.float32(out_h))).astype(np.int64), in_h - 1)
        cols = np.minimum(np.floor((np.arange(out_w, dtype=np.float32) + np.float32(0.5)) *
                                   (np.float32(in_w) / np.float32(out_w))).astype(np.int64), in_w - 1)
        return image[rows][:, cols]
    x = image.astype(np.float32)
    if method == "bilinear":
        top_i, bottom_i, y_lerp = _bilinear_axis(out_h, in_h)
        left_i, right_i, x_lerp = _bilinear_axis(out_w, in_w)
        x_lerp = x_lerp[None, :, None]
        top_rows, bottom_rows = x[top_i], x[bottom_i]
        top = top_rows[:, left_i] + (top_rows[:, right_i] - top_rows[:, left_i]) * x_lerp
        bottom = bottom_rows[:, left_i] + (bottom_rows[:, right_i] - bottom_rows[:, left_i]) * x_lerp
        return (top + (bottom - top) * y_lerp[:, None, None]).astype(np.float32)
    if method == "bicubic":
        row_taps, row_w = _bicubic_axis(out_h, in_h)
        col_taps, col_w = _bicubic_axis(out_w, in_w)
        # TensorFlow interpolates each of the four rows along x, then those along y.
        along_x = sum(x[:, col_taps[:, k]] * col_w[None, :, k, None] for k in range(4))
        return sum(along_x[row_taps[:, k]] * row_w[:, k, None, None] for k in range(4)).astype(np.float32)
    raise NotImplementedError(f"interpolation={method!r} is not supported by nnfit's image datasets (TensorFlow's "
                              "resize kernel for it is not ported): use 'bilinear' (Keras's default), 'nearest' or "
                              "'bicubic'")
