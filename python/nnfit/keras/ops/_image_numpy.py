"""keras.ops.image's functions with no engine form, on arrays only, in NumPy:
`map_coordinates` (gathers at the coordinates' taps, order 0 and 1, SciPy's five fill
modes), `scale_and_translate` (the per-axis weight matrices of Keras's NumPy and TensorFlow
backends) and `elastic_transform` (Keras's NumPy backend: a random displacement field,
Gaussian-blurred, sampled with map_coordinates; its draws are NumPy's, so they differ
from TensorFlow's draws for the same seed, as Keras's backends differ among themselves).
"""
import itertools

import numpy as np

_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
_METHODS = ("linear", "bilinear", "trilinear", "cubic", "bicubic", "tricubic", "lanczos3", "lanczos5")


def _mirror(index, size):
    s = size - 1  # half the period of the triangular wave
    return np.abs((index + s) % (2 * s) - s) if s > 0 else np.zeros_like(index)


def _fix_coordinates(index, size, fill_mode):
    """(index inside the axis, whether it is a real pixel) for integer indices: SciPy's modes
    as JAX's map_coordinates writes them (Keras's NumPy and JAX backends)."""
    if fill_mode == "constant":
        return np.clip(index, 0, size - 1), (index >= 0) & (index < size)
    if fill_mode == "nearest":
        return np.clip(index, 0, size - 1), np.ones(index.shape, bool)
    if fill_mode == "mirror":
        return _mirror(index, size), np.ones(index.shape, bool)
    if fill_mode == "reflect":
        return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2, np.ones(index.shape, bool)
    return np.mod(index, size), np.ones(index.shape, bool)  # wrap


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """Keras's map_coordinates, in NumPy: TensorFlow's backend's taps and weights, SciPy's
    mirror and reflect (Keras's TensorFlow backend folds negative coordinates with abs() for
    reflect and fails past the last pixel for mirror; its NumPy and JAX backends follow SciPy)."""
    x = np.asarray(inputs)
    coordinates = np.asarray(coordinates)
    if coordinates.ndim < 2 or coordinates.shape[0] != x.ndim:
        raise ValueError("keras.ops.image.map_coordinates: the first dim of `coordinates` must be the rank of "
                         f"`inputs` ({x.ndim}) and coordinates at least rank 2; got {coordinates.shape}")
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"keras.ops.image.map_coordinates: fill_mode must be one of {_FILL_MODES}, got {fill_mode!r}")
    if order not in (0, 1):
        raise NotImplementedError("keras.ops.image.map_coordinates requires order 0 or 1 (as Keras's backends)")
    dtype = np.float32 if x.dtype.kind in "iub" or x.dtype.itemsize < 4 else x.dtype
    per_axis = []
    for c, size in zip(coordinates, x.shape):
        c = c.astype(dtype) if c.dtype.kind == "f" else c
        if order == 0:
            nodes = [((c if c.dtype.kind in "iu" else np.round(c)).astype(np.int64), np.asarray(1, dtype))]
        else:
            lower = np.floor(c)
            upper_weight = (c - lower).astype(dtype)
            nodes = [(lower.astype(np.int64), (1 - upper_weight).astype(dtype)),
                     (lower.astype(np.int64) + 1, upper_weight)]
        per_axis.append([(*_fix_coordinates(i, size, fill_mode), w) for i, w in nodes])
    result = 0
    for items in itertools.product(*per_axis):
        indices, valid, weights = zip(*items)
        gathered = x[tuple(indices)].astype(dtype)
        if fill_mode == "constant":
            gathered = np.where(np.logical_and.reduce(valid), gathered, np.asarray(fill_value, dtype))
        w = weights[0]
        for more in weights[1:]:
            w = w * more
        result = result + w * gathered
    result = np.asarray(result)
    if x.dtype.kind in "iu":
        result = np.round(result)
    return result.astype(x.dtype if x.dtype.kind != "f" or x.dtype.itemsize >= 4 else dtype)


def _triangle(x):
    return np.maximum(0, 1 - np.abs(x))


def _keys_cubic(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = np.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return np.where(x >= 2.0, 0.0, out)


def _lanczos(radius, x):
    y = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius)
    out = np.where(x > 1e-3, np.divide(y, np.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return np.where(x > radius, 0.0, out)


_KERNELS = {"linear": _triangle, "cubic": _keys_cubic, "lanczos3": lambda x: _lanczos(3.0, x),
            "lanczos5": lambda x: _lanczos(5.0, x)}


def _weight_matrix(input_size, output_size, scale, translation, kernel, antialias):
    dtype = np.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = np.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = (np.arange(output_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    x = np.abs(sample_f[np.newaxis, :] - np.arange(input_size, dtype=dtype)[:, np.newaxis]) / kernel_scale
    weights = kernel(x)
    total = np.sum(weights, axis=0, keepdims=True)
    weights = np.where(np.abs(total) > 1000.0 * np.finfo(np.float32).eps,
                       np.divide(weights, np.where(total != 0, total, 1)), 0)
    inside = np.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)[np.newaxis, :]
    return np.where(inside, weights, 0)


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method, antialias=True):
    """Keras's scale_and_translate (its NumPy and TensorFlow backends' algorithm)."""
    if method not in _METHODS:
        raise ValueError(f"keras.ops.image.scale_and_translate: method must be one of {_METHODS}, got {method!r}")
    method = "linear" if method in ("linear", "bilinear", "trilinear") else (
        "cubic" if method in ("cubic", "bicubic", "tricubic") else method)
    x = np.asarray(images)
    scale = np.asarray(scale)
    translation = np.asarray(translation)
    dtype = np.result_type(scale.dtype, translation.dtype)
    if dtype == np.float64 or dtype.kind != "f":
        dtype = np.float32
    scale, translation = scale.astype(dtype), translation.astype(dtype)
    if len(spatial_dims) == 0:
        return x
    integer = x.dtype.kind in "iu"
    out = x.astype(np.float32) if integer else x.copy()
    for i, d in enumerate(spatial_dims):
        d = d % x.ndim
        w = _weight_matrix(x.shape[d], output_shape[d], scale[i], translation[i], _KERNELS[method], antialias)
        out = np.moveaxis(np.tensordot(out, w.astype(out.dtype), axes=(d, 0)), -1, d)
    if integer:
        out = np.clip(np.round(out), x.min(), x.max()).astype(x.dtype)
    return out


def elastic_transform(images, alpha, sigma, interpolation, fill_mode, fill_value, seed, data_format, gaussian_blur):
    """Keras's NumPy backend's elastic_transform; `gaussian_blur` is keras.ops.image's."""
    from nnfit.keras import backend
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"keras.ops.image.elastic_transform: interpolation must be nearest or bilinear, got "
                         f"{interpolation!r}")
    if fill_mode not in ("constant", "nearest", "wrap", "mirror", "reflect"):
        raise ValueError(f"keras.ops.image.elastic_transform: fill_mode {fill_mode!r} is not one of constant, "
                         "nearest, wrap, mirror, reflect")
    x = np.asarray(images)
    if x.ndim not in (3, 4):
        raise ValueError(f"keras.ops.image.elastic_transform: expected images of rank 3 or 4, got shape {x.shape}")
    data_format = data_format or backend.image_data_format()
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype("float32")
    alpha, sigma = dtype.type(alpha), dtype.type(sigma)
    kernel = int(6 * sigma) | 1
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    if data_format == "channels_last":
        n, h, w, c = x.shape
        channel_axis = -1
    else:
        n, c, h, w = x.shape
        channel_axis = 1
    rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else None)
    dx = rng.normal(size=(n, h, w)).astype(dtype) * sigma
    dy = rng.normal(size=(n, h, w)).astype(dtype) * sigma
    blur = lambda d: np.asarray(gaussian_blur(np.expand_dims(d, channel_axis), (kernel, kernel), (float(sigma), float(sigma)),  # noqa: E731
                                              data_format=data_format)).reshape(n, h, w)
    dx, dy = blur(dx), blur(dy)
    gx, gy = np.meshgrid(np.arange(w), np.arange(h))
    ys, xs = gy[None] + alpha * dy, gx[None] + alpha * dx
    out = np.zeros_like(x)
    order = 1 if interpolation == "bilinear" else 0
    for b in range(n):
        for i in range(c):
            plane = x[b, ..., i] if data_format == "channels_last" else x[b, i]
            value = map_coordinates(plane, [ys[b], xs[b]], order, fill_mode, fill_value)
            if data_format == "channels_last":
                out[b, ..., i] = value
            else:
                out[b, i] = value
    return out[0] if unbatched else out
