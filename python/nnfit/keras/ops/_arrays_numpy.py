"""keras.ops that nnfit runs on arrays only, in NumPy as Keras's NumPy backend computes them
(keras/src/backend/numpy/; opsB's group, imported by _arrays.py): those whose output shape
depends on the values (unique, nonzero, bincount, histogram), linear algebra, the Fourier
transforms, and a few with no use in a graph (tri, view, argpartition, whose order is
NumPy's own). On a symbolic tensor each raises NotImplementedError naming itself, except
`norm` for vectors, which is exact with the engine's reductions.

Floating results are float32, as nnfit's arrays are (Keras's NumPy backend keeps float64
for float64 input); integer results are int32 where Keras's are.
"""
import numpy as np

from nnfit.keras.ops._operation import is_symbolic

__all__ = [
    "bincount", "histogram", "argpartition", "unique", "nonzero", "tri", "view", "cholesky", "cholesky_inverse",
    "det", "eig", "eigh", "inv", "lstsq", "lu_factor", "matrix_rank", "norm", "pinv", "qr", "solve",
    "solve_triangular", "svd", "slogdet", "logdet", "fft", "fft2", "ifft2", "rfft", "irfft", "stft", "istft",
    "view_as_complex", "view_as_real",
]


def _arrays_only(name, *xs):
    for x in xs:
        for t in (x if isinstance(x, (list, tuple)) else [x]):
            if is_symbolic(t):
                raise NotImplementedError(f"keras.ops.{name} works on arrays only in nnfit (computed in NumPy, as "
                                          "Keras's NumPy backend does); a model's graph has no form of it")


def _f(x):
    """An array in nnfit's float type: float32 for anything but float16."""
    a = np.asarray(x)
    return a if a.dtype == np.float16 else a.astype("float32")


def bincount(x, weights=None, minlength=0, sparse=False):
    _arrays_only("bincount", x, weights)
    if sparse:
        raise NotImplementedError("keras.ops.bincount(sparse=True) is not supported by nnfit")
    x = np.asarray(x)
    dtype = "int32" if weights is None else ("float32" if np.asarray(weights).dtype.kind == "f" else "int32")
    if x.ndim == 2:
        rows = [np.bincount(r, None if weights is None else w, minlength)
                for r, w in zip(x, x if weights is None else np.asarray(weights))]
        return np.stack(rows).astype(dtype)
    return np.bincount(x, weights, minlength).astype(dtype)


def histogram(x, bins=10, range=None):  # noqa: A002 (Keras's name)
    _arrays_only("histogram", x)
    counts, edges = np.histogram(np.asarray(x), bins=bins, range=range)
    return counts.astype("int32"), edges.astype("float32")


def argpartition(x, kth, axis=-1):
    _arrays_only("argpartition", x)
    return np.argpartition(np.asarray(x), kth, axis).astype("int32")


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False, axis=None,  # noqa: A002
           size=None, fill_value=None):
    _arrays_only("unique", x)
    x = np.asarray(x)
    output = np.unique(x, return_index=return_index, return_inverse=return_inverse, return_counts=return_counts,
                       axis=axis, equal_nan=False)
    output = list(output) if (return_index or return_inverse or return_counts) else [output]
    values = output[0]
    if size is not None:
        dim = 0 if axis is None else axis % x.ndim
        count = values.shape[dim]
        if count > size:
            key = [slice(None)] * values.ndim
            key[dim] = slice(0, size)
            values = values[tuple(key)]
            if return_counts:
                output[-1] = output[-1][:size]
            if return_index:
                output[1] = output[1][:size]
        elif count < size:
            width = [(0, 0)] * values.ndim
            width[dim] = (0, size - count)
            values = np.pad(values, width, constant_values=0 if fill_value is None else fill_value)
            if return_counts:
                output[-1] = np.pad(output[-1], width[dim], constant_values=0)
            if return_index:
                output[1] = np.pad(output[1], width[dim], constant_values=1)
    output[0] = values
    output = [o.astype("int32") if o.dtype.kind in "iu" and i > 0 else o for i, o in enumerate(output)]
    return output[0] if len(output) == 1 else tuple(output)


def nonzero(x):
    _arrays_only("nonzero", x)
    return tuple(i.astype("int32") for i in np.nonzero(np.asarray(x)))


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 (Keras's names)
    return np.tri(N, M=M, k=k, dtype=dtype or "float32")


def view(x, dtype=None):
    _arrays_only("view", x)
    return np.asarray(x).view(dtype) if dtype is not None else np.asarray(x)


# Linear algebra (keras/src/backend/numpy/linalg.py, without SciPy).
def cholesky(x, upper=False):
    _arrays_only("cholesky", x)
    lower = np.linalg.cholesky(_f(x))
    return np.swapaxes(lower, -1, -2).conj() if upper else lower


def solve_triangular(a, b, lower=False):
    _arrays_only("solve_triangular", a, b)
    a, b = _f(a), _f(b)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = b[..., None]
    # A triangular matrix's solve: NumPy's general solve gives the same solution (it
    # factors a triangular matrix without fill-in); the other triangle is ignored as SciPy's.
    tri_a = np.tril(a) if lower else np.triu(a)
    out = np.linalg.solve(tri_a, b).astype(a.dtype)
    return out[..., 0] if vector else out


def cholesky_inverse(x, upper=False):
    _arrays_only("cholesky_inverse", x)
    a = _f(x)
    identity = np.eye(a.shape[-1], dtype=a.dtype)
    inv_chol = solve_triangular(a, identity, lower=not upper)
    return np.matmul(inv_chol, inv_chol.T) if upper else np.matmul(inv_chol.T, inv_chol)


def det(x):
    _arrays_only("det", x)
    return np.linalg.det(_f(x)).astype("float32")


def eig(x):
    _arrays_only("eig", x)
    return np.linalg.eig(_f(x))


def eigh(x):
    _arrays_only("eigh", x)
    return np.linalg.eigh(_f(x))


def inv(x):
    _arrays_only("inv", x)
    return np.linalg.inv(_f(x))


def _lu_factor_2d(a):
    """SciPy's lu_factor: LU with partial pivoting in one matrix, and the pivot rows."""
    lu = np.array(a, dtype=a.dtype, copy=True)
    m, n = lu.shape
    piv = np.zeros(min(m, n), dtype="int32")
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(lu[j:, j])))
        piv[j] = p
        if p != j:
            lu[[j, p]] = lu[[p, j]]
        if lu[j, j] != 0:
            lu[j + 1:, j] /= lu[j, j]
            lu[j + 1:, j + 1:] -= np.outer(lu[j + 1:, j], lu[j, j + 1:])
    return lu, piv


def lu_factor(x):
    _arrays_only("lu_factor", x)
    a = _f(x)
    if a.ndim == 2:
        return _lu_factor_2d(a)
    flat = a.reshape((-1,) + a.shape[-2:])
    parts = [_lu_factor_2d(m) for m in flat]
    return (np.stack([p[0] for p in parts]).reshape(a.shape),
            np.stack([p[1] for p in parts]).reshape(a.shape[:-2] + (-1,)))


def matrix_rank(x, tol=None):
    _arrays_only("matrix_rank", x)
    x = _f(x)
    if x.ndim < 2:
        raise ValueError(f"Expected input to have rank >= 2. Received input with shape {x.shape}.")
    return np.asarray(np.linalg.matrix_rank(x, tol=tol)).astype("int32")


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 (Keras's name)
    if is_symbolic(x):
        return _symbolic_norm(x, ord, axis, keepdims)
    return np.asarray(np.linalg.norm(_f(x), ord=ord, axis=axis, keepdims=keepdims)).astype("float32")


def _symbolic_norm(x, ord, axis, keepdims):  # noqa: A002
    """A vector norm over one non-batch axis with the engine's reductions (exact): 2 (the
    default), 1, inf, -inf, 0 and other p; matrix norms are refused."""
    from nnfit.keras import ops
    from nnfit.keras._weight_values import is_value
    if axis is None and (ord is None or (ord == "fro" and x.ndim == 2)) and (hasattr(x, "_variable_json") or is_value(x)):
        out = ops.sqrt(ops.sum(ops.square(x)))  # a weight's (Note [Weight-only values]): every entry, flattened
        return ops.reshape(out, (1,) * x.ndim) if keepdims else out
    if axis is None or not isinstance(axis, int):
        raise NotImplementedError("keras.ops.norm on a symbolic tensor is supported by nnfit for one axis (a vector "
                                  "norm over a non-batch axis) and, on a layer's weights, over every entry; matrix "
                                  "norms and norms over every axis of the batch work on arrays only")
    a = ops.abs(x)
    if ord is None or ord == 2:
        return ops.sqrt(ops.sum(ops.square(x), axis=axis, keepdims=keepdims))
    if ord == 1:
        return ops.sum(a, axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return ops.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return ops.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return ops.sum(ops.cast(ops.not_equal(x, 0.0), "float32"), axis=axis, keepdims=keepdims)
    p = float(ord)
    return ops.power(ops.sum(ops.power(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


def pinv(x, rcond=None):
    _arrays_only("pinv", x)
    return np.linalg.pinv(_f(x), **({} if rcond is None else {"rcond": rcond})).astype("float32")


def qr(x, mode="reduced"):
    _arrays_only("qr", x)
    if mode not in {"reduced", "complete"}:
        raise ValueError(f"`mode` argument value not supported. Expected one of {{'reduced', 'complete'}}. "
                         f"Received: mode={mode}")
    return tuple(np.linalg.qr(_f(x), mode=mode))


def solve(a, b):
    _arrays_only("solve", a, b)
    return np.linalg.solve(_f(a), _f(b))


def svd(x, full_matrices=True, compute_uv=True):
    _arrays_only("svd", x)
    out = np.linalg.svd(_f(x), full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def lstsq(a, b, rcond=None):
    _arrays_only("lstsq", a, b)
    return np.linalg.lstsq(_f(a), _f(b), rcond=rcond)[0].astype("float32")


def slogdet(x):
    _arrays_only("slogdet", x)
    sign, logabs = np.linalg.slogdet(_f(x))
    return np.asarray(sign, "float32"), np.asarray(logabs, "float32")


def logdet(x):
    _arrays_only("logdet", x)
    return slogdet(x)[1]


# Fourier transforms: complex values as (real, imaginary) pairs, as Keras passes them.
def _complex(x, name):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"Input `x` should be a tuple of two tensors - real and imaginary. Received: x={x}")
    _arrays_only(name, *x)
    real, imag = np.asarray(x[0]), np.asarray(x[1])
    if real.shape != imag.shape:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary. Both the real and "
                         f"imaginary parts should have the same shape. Received: x[0].shape = {real.shape}, "
                         f"x[1].shape = {imag.shape}")
    if real.dtype.kind != "f" or imag.dtype.kind != "f":
        raise ValueError(f"At least one tensor in input `x` is not of type float. Received: x={x}.")
    return real.astype("float64") + 1j * imag.astype("float64")


def _pair(c):
    return np.real(c).astype("float32"), np.imag(c).astype("float32")


def fft(x):
    return _pair(np.fft.fft(_complex(x, "fft"), axis=-1))


def fft2(x):
    return _pair(np.fft.fft2(_complex(x, "fft2"), axes=(-2, -1)))


def ifft2(x):
    return _pair(np.fft.ifft2(_complex(x, "ifft2"), axes=(-2, -1)))


def rfft(x, fft_length=None):
    _arrays_only("rfft", x)
    return _pair(np.fft.rfft(np.asarray(x, "float64"), n=fft_length, axis=-1, norm="backward"))


def irfft(x, fft_length=None):
    return np.fft.irfft(_complex(x, "irfft"), n=fft_length, axis=-1, norm="backward").astype("float32")


def _window(window, sequence_length, fft_length):
    """The analysis window (SciPy's periodic hann / hamming, or the array given), padded
    to fft_length as Keras pads it."""
    if window is None:
        return np.ones(fft_length)  # Keras's: ones over the whole fft_length, unpadded
    if isinstance(window, str):
        if window not in {"hann", "hamming"}:
            raise ValueError(f'If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                             f"Received: window={window}")
        n = np.arange(sequence_length)
        a = 0.5 if window == "hann" else 0.54
        win = a - (1 - a) * np.cos(2 * np.pi * n / sequence_length)
    else:
        win = np.asarray(window, "float64")
        if win.ndim != 1 or win.shape[-1] != sequence_length:
            raise ValueError(f"The shape of `window` must be equal to [sequence_length]. Received: window shape="
                             f"{win.shape}")
    left = (fft_length - sequence_length) // 2
    return np.pad(win, [(left, fft_length - sequence_length - left)])


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    _arrays_only("stft", x)
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise TypeError(f"Invalid input type. Expected `float32` or `float64`. Received: input type={x.dtype}")
    if fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. Received: sequence_length="
                         f"{sequence_length}, fft_length={fft_length}")
    x = x.astype("float64")
    if center:
        width = [(0, 0)] * x.ndim
        width[-1] = (fft_length // 2, fft_length // 2)
        x = np.pad(x, width, mode="reflect")
    win = _window(window, sequence_length, fft_length)
    # SciPy's stft (boundary=None, padded=False) scaled back by Keras: rfft of each window.
    frames = 1 + (x.shape[-1] - fft_length) // sequence_stride
    starts = np.arange(frames) * sequence_stride
    windows = x[..., starts[:, None] + np.arange(fft_length)[None, :]] * win
    return _pair(np.fft.rfft(windows, n=fft_length, axis=-1))


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann", center=True):
    spectrum = _complex(x, "istft")
    frames = spectrum.shape[-2]
    expected = fft_length + sequence_stride * (frames - 1)
    win = _window(window, sequence_length, fft_length)
    # SciPy's istft (boundary=False) with Keras's scaling: overlap-add of the windowed inverse
    # transforms, divided by the overlapping squared windows where they exceed 1e-10.
    pieces = np.fft.irfft(spectrum, n=fft_length, axis=-1) * win
    out = np.zeros(spectrum.shape[:-2] + (expected,))
    norm = np.zeros(expected)
    for i in range(frames):
        s = i * sequence_stride
        out[..., s:s + fft_length] += pieces[..., i, :]
        norm[s:s + fft_length] += win ** 2
    out = out / np.where(norm > 1e-10, norm, 1.0)
    if window is None:  # Keras divides by the stride, not the window's sum, without a window
        out = out * fft_length / sequence_stride
    start = fft_length // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = -(fft_length // 2)
    else:
        end = expected
    return out[..., start:end].astype("float32")


def view_as_complex(x):
    _arrays_only("view_as_complex", x)
    x = np.asarray(x)
    if x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"Last dimension of input must be size 2 (real and imaginary). Received shape: {x.shape}")
    return x[..., 0].astype("complex64") + 1j * x[..., 1].astype("complex64")


def view_as_real(x):
    _arrays_only("view_as_real", x)
    x = np.asarray(x)
    return np.stack((np.real(x), np.imag(x)), axis=-1).astype("float32")
