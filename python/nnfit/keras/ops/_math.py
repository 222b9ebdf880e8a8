"""keras.ops's element-wise math, logical tests, NaN-aware reductions, integer bit
operations and constant arrays (isnan, hypot, logaddexp, nanmean, bitwise_and, linspace,
hamming, ...), with Keras 3.15's names, signatures and result dtypes.

Three kinds, as docs/python.md says:
- engine ops (element-wise and reductions): on symbolic tensors each records Keras's node
  (class, config, arguments), emitted by src/nn/layers/operation_math_emitters.cpp as the
  formula Keras's TensorFlow backend computes; on arrays the same one-node graph runs on the
  engine, and the result is given Keras's dtype (the engine's booleans are 0/1 floats);
- eager only (quantiles and medians, which sort; nextafter, i0, erfinv; the integer bit
  operations, which the engine's float32 kernels cannot do exactly): on arrays NumPy
  computes them as Keras's NumPy backend does, and a symbolic tensor is refused naming
  the op;
- constants (linspace, tri, the windows, ...): NumPy arrays, as keras.ops.arange here.
"""
import builtins
import math
import warnings

import numpy as np

from nnfit.keras import _dtypes
from nnfit.keras.ops._operation import call, is_symbolic

__all__ = [
    "all", "any", "count_nonzero", "isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal", "signbit",
    "isclose", "allclose", "nan_to_num", "stop_gradient", "divide_no_nan", "trunc", "cbrt", "exp2", "fabs",
    "deg2rad", "rad2deg", "sinc", "heaviside", "hypot", "logaddexp", "logaddexp2", "fmod", "fmax", "fmin", "ldexp",
    "nextafter", "arccosh", "real", "imag", "conj", "conjugate", "angle", "copy", "array", "saturate_cast",
    "average", "median", "quantile", "percentile", "ptp", "linspace", "logspace", "geomspace", "identity", "tri",
    "empty", "empty_like", "dtype", "erfc", "erfinv", "i0",
    "nanmax", "nanmin", "nanmean", "nansum", "nanprod", "nanstd", "nanvar", "nanargmax", "nanargmin", "nancumsum",
    "nancumprod", "nanmedian", "nanpercentile", "nanquantile",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift", "left_shift", "right_shift", "gcd", "lcm",
    "bartlett", "blackman", "hamming", "hanning", "kaiser",
]


# --- dtypes ---------------------------------------------------------------------------

def _dt(x):
    """Keras's dtype of an argument as nnfit computes it: a symbolic tensor's own; Python's
    int and float weak; an array's, with every float array computed in float32."""
    if is_symbolic(x):
        return _dtypes.standardize_dtype(x.dtype)
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, int):
        return int
    if isinstance(x, float):
        return float
    a = np.asarray(x)
    if a.dtype.kind == "f":
        return "float32"
    return _dtypes.standardize_dtype(a.dtype)


def _name(d):
    return d if isinstance(d, str) else _dtypes.result_type(d)


def _floating(*xs):
    return _dtypes.result_type(*[_dt(x) for x in xs], float)


def _common(*xs):
    return _dtypes.result_type(*[_dt(x) for x in xs])


def _as(y, dtype):
    """An eager result in Keras's dtype (the engine computes in float32)."""
    if is_symbolic(y) or dtype in (None, "bfloat16"):
        return y
    y = np.asarray(y)
    if np.dtype(dtype).kind in "iu" and y.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(y), y, 0).astype(dtype)
    return y.astype(dtype)


def _op(module, cls, snake, args, config=None, dtype=None, kwargs=None):
    dtype = _name(dtype) if dtype is not None else None
    return _as(call(module, cls, snake, args, config or {}, kwargs, out_dtype=dtype), dtype)


def _axis(axis):
    if axis is None or isinstance(axis, int):
        return axis
    return [int(a) for a in axis]


def _eager_only(name, *xs):
    if builtins.any(is_symbolic(x) for x in xs):
        raise NotImplementedError(f"keras.ops.{name} on a symbolic tensor is not supported by nnfit: it runs on arrays "
                                  "only (docs/python.md, keras.ops)")


def _np(x, dtype=None):
    a = np.asarray(x)
    if dtype is None and a.dtype.kind == "f" and a.dtype != np.float32:
        a = a.astype("float32")
    return a if dtype is None else a.astype(dtype)


# --- element-wise, one input ---------------------------------------------------------------

def _unary(fn, cls, out, module="numpy"):
    def op(x):
        d = {"bool": "bool", "same": _dt(x), "float": _floating(x)}[out]
        return _op(module, cls, fn if cls != "Conjugate" else "conjugate", [x], dtype=d)
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = f"keras.ops.{fn}(x) on nnfit's engine."
    return op


isnan = _unary("isnan", "Isnan", "bool")
isinf = _unary("isinf", "Isinf", "bool")
isfinite = _unary("isfinite", "Isfinite", "bool")
isneginf = _unary("isneginf", "Isneginf", "bool")
isposinf = _unary("isposinf", "Isposinf", "bool")
signbit = _unary("signbit", "Signbit", "bool")
trunc = _unary("trunc", "Trunc", "same")
cbrt = _unary("cbrt", "Cbrt", "float")
exp2 = _unary("exp2", "Exp2", "float")
fabs = _unary("fabs", "Fabs", "float")
deg2rad = _unary("deg2rad", "Deg2rad", "float")
rad2deg = _unary("rad2deg", "Rad2deg", "float")
sinc = _unary("sinc", "Sinc", "float")
arccosh = _unary("arccosh", "Arccosh", "float")
erfc = _unary("erfc", "Erfc", "float", module="math")


def stop_gradient(variable):
    """keras.ops.stop_gradient: the value, through which no gradient flows."""
    return _op("core", "StopGradient", "stop_gradient", [variable], dtype=_dt(variable))


# Complex-aware on arrays (NumPy), real on symbolic tensors (nnfit's tensors are real).
def _complex_or(name, cls, numpy_fn, out="same"):
    def op(x):
        if not is_symbolic(x) and np.iscomplexobj(x):
            return numpy_fn(np.asarray(x))
        d = "bool" if out == "bool" else (_floating(x) if out == "float" else _dt(x))
        return _op("numpy", cls, name if cls != "Conjugate" else "conjugate", [x], dtype=d)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"keras.ops.{name}(x): real tensors on nnfit's engine, complex arrays on NumPy."
    return op


isreal = _complex_or("isreal", "Isreal", np.isreal, "bool")
real = _complex_or("real", "Real", np.real)
imag = _complex_or("imag", "Imag", np.imag)
conj = _complex_or("conj", "Conjugate", np.conj)
conjugate = _complex_or("conjugate", "Conjugate", np.conj)
angle = _complex_or("angle", "Angle", lambda z: np.angle(z).astype("float32"), "float")
copy = _complex_or("copy", "Copy", np.copy)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    return _op("numpy", "NanToNum", "nan_to_num", [x], {"nan": nan, "posinf": posinf, "neginf": neginf},
               dtype=_dt(x))


def array(x, dtype=None):
    if is_symbolic(x):
        d = _dtypes.standardize_dtype(dtype) if dtype is not None else None
        return call("numpy", "Array", "array", [x], {"dtype": d}, out_dtype=d or x.dtype)
    from nnfit.keras.ops import convert_to_tensor
    return convert_to_tensor(x, dtype=dtype)


def saturate_cast(x, dtype):
    dtype = _dtypes.standardize_dtype(getattr(dtype, "name", dtype))
    return _op("core", "SaturateCast", "saturate_cast", [x], {"dtype": dtype}, dtype=dtype)


def empty_like(x, dtype=None):
    d = _dtypes.standardize_dtype(dtype) if dtype is not None else None
    if is_symbolic(x):
        return call("numpy", "EmptyLike", "empty_like", [x], {"dtype": d}, out_dtype=d or x.dtype)
    return np.zeros_like(_np(x), dtype=d or _name(_dt(x)))


def erfinv(x):
    """keras.ops.erfinv on arrays (eager only): Giles' approximation refined by Newton's
    method on math.erf in float64, rounded to float32."""
    _eager_only("erfinv", x)
    v = _np(x, "float64")
    w = -np.log(np.clip((1.0 - v) * (1.0 + v), 1e-300, None))
    small = w < 5.0
    ws, wl = w - 2.5, np.sqrt(np.maximum(w, 5.0)) - 3.0
    ps = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
              0.246640727, 1.50140941):
        ps = c + ps * ws
    pl = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
              1.00167406, 2.83297682):
        pl = c + pl * wl
    y = np.where(small, ps, pl) * v
    erf = np.vectorize(math.erf, otypes=[np.float64])
    with np.errstate(all="ignore"):
        for _ in range(3):
            y = y - (erf(y) - v) / (2.0 / math.sqrt(math.pi) * np.exp(-y * y))
        y = np.where(np.abs(v) == 1.0, np.sign(v) * np.inf, np.where(np.abs(v) > 1.0, np.nan, y))
    return _as(y, _floating(x))


def i0(x):
    """keras.ops.i0 on arrays (eager only): NumPy's np.i0, as Keras's NumPy backend."""
    _eager_only("i0", x)
    return _as(np.i0(_np(x, "float64")), _floating(x))


# --- element-wise, two inputs ------------------------------------------------------------

def _binary(fn, cls, out):
    def op(x1, x2):
        d = _floating(x1, x2) if out == "float" else _common(x1, x2)
        if out == "common_int" and d == "bool":
            d = "int32"
        return _op("numpy", cls, fn, [x1, x2], dtype=d)
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = f"keras.ops.{fn}(x1, x2) on nnfit's engine: NumPy broadcasting."
    return op


divide_no_nan = _binary("divide_no_nan", "DivideNoNan", "float")
hypot = _binary("hypot", "Hypot", "float")
logaddexp = _binary("logaddexp", "Logaddexp", "float")
logaddexp2 = _binary("logaddexp2", "Logaddexp2", "float")
heaviside = _binary("heaviside", "Heaviside", "float")
fmod = _binary("fmod", "Fmod", "common_int")
fmax = _binary("fmax", "Fmax", "common")
fmin = _binary("fmin", "Fmin", "common")


def ldexp(x1, x2):
    d2 = _name(_dt(x2))
    if d2 not in _dtypes.INT_TYPES:
        raise TypeError(f"ldexp exponent must be an integer type. Received: x2 dtype={d2}")
    return _op("numpy", "Ldexp", "ldexp", [x1, x2], dtype=_floating(x1, x2))


def nextafter(x1, x2):
    """keras.ops.nextafter on arrays (eager only): NumPy's, in float32 as Keras's NumPy
    backend (Keras on TensorFlow computes it in float64 and rounds back, giving x1)."""
    _eager_only("nextafter", x1, x2)
    d = _floating(x1, x2)
    return _as(np.nextafter(_np(x1, d), _np(x2, d)), d)


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    return _op("numpy", "Isclose", "isclose", [x1, x2, float(rtol), float(atol)], {"equal_nan": equal_nan},
               dtype="bool")


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    return _op("numpy", "AllClose", "allclose", [x1, x2], {"rtol": rtol, "atol": atol, "equal_nan": equal_nan},
               dtype="bool")


# --- reductions --------------------------------------------------------------------------

def _reduction(fn, cls, out, with_keepdims=True):
    def op(x, axis=None, keepdims=False):
        d = {"bool": "bool", "int32": "int32", "same": _dt(x), "float": _floating(x)}[out]
        if fn == "nansum" and d in ("bool", "int8", "int16"):
            d = "int32"
        return _op("numpy", cls, fn, [x], {"axis": _axis(axis), "keepdims": keepdims}, dtype=d)
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = f"keras.ops.{fn}(x, axis=None, keepdims=False) on nnfit's engine."
    return op


all = _reduction("all", "All", "bool")  # noqa: A001 (Keras's names)
any = _reduction("any", "Any", "bool")  # noqa: A001
ptp = _reduction("ptp", "Ptp", "same")
nanmax = _reduction("nanmax", "Nanmax", "same")
nanmin = _reduction("nanmin", "Nanmin", "same")
nansum = _reduction("nansum", "Nansum", "same")
nanprod = _reduction("nanprod", "Nanprod", "same")
nanmean = _reduction("nanmean", "Nanmean", "float")
nanvar = _reduction("nanvar", "Nanvar", "float")
nanstd = _reduction("nanstd", "Nanstd", "float")
nanargmax = _reduction("nanargmax", "Nanargmax", "int32")
nanargmin = _reduction("nanargmin", "Nanargmin", "int32")


def count_nonzero(x, axis=None):
    return _op("numpy", "CountNonzero", "count_nonzero", [x], {"axis": _axis(axis)}, dtype="int32")


def nancumsum(x, axis=None, dtype=None):
    return _op("numpy", "Nancumsum", "nancumsum", [x], {"axis": axis, "dtype": dtype}, dtype=dtype or _dt(x))


def nancumprod(x, axis=None, dtype=None):
    return _op("numpy", "Nancumprod", "nancumprod", [x], {"axis": axis, "dtype": dtype}, dtype=dtype or _dt(x))


def average(x, axis=None, weights=None):
    """keras.ops.average: the mean on nnfit's engine; with weights, on arrays only (NumPy's
    np.average, Keras's formula sum(x·w)/sum(w))."""
    if weights is None:
        return _op("numpy", "Average", "average", [x], {"axis": _axis(axis)}, dtype=_floating(x),
                   kwargs={"weights": None})
    _eager_only("average with weights", x, weights)
    d = _floating(x, weights)
    return _as(np.average(_np(x, "float64"), axis=axis, weights=_np(weights, "float64")), d)


def _quantiles(name, x, q, axis, method, keepdims, nan, scale=1.0):
    _eager_only(name, x)
    f = np.nanquantile if nan else np.quantile
    axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    with warnings.catch_warnings():  # an all-NaN group is NaN, as Keras's, without NumPy's warning
        warnings.simplefilter("ignore", RuntimeWarning)
        out = f(_np(x, "float64"), np.asarray(q, "float64") / scale, axis=axis, method=method, keepdims=keepdims)
    return _as(out, _floating(x))


def median(x, axis=None, keepdims=False):
    """keras.ops.median on arrays (eager only: it sorts)."""
    return _quantiles("median", x, 0.5, axis, "linear", keepdims, False)


def nanmedian(x, axis=None, keepdims=False):
    return _quantiles("nanmedian", x, 0.5, axis, "linear", keepdims, True)


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """keras.ops.quantile on arrays (eager only: it sorts)."""
    return _quantiles("quantile", x, q, axis, method, keepdims, False)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    return _quantiles("nanquantile", x, q, axis, method, keepdims, True)


def percentile(x, q, axis=None, method="linear", keepdims=False):
    return _quantiles("percentile", x, q, axis, method, keepdims, False, scale=100.0)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    return _quantiles("nanpercentile", x, q, axis, method, keepdims, True, scale=100.0)


# --- integers: exact on arrays, refused on symbolic tensors ------------------------------

def _integers(name, *xs):
    _eager_only(name, *xs)
    d = _common(*xs)
    if d not in _dtypes.INT_TYPES and d != "bool":
        raise TypeError(f"keras.ops.{name} takes integer (or boolean) tensors, got {d}")
    return d, [_np(x, d) for x in xs]


def _bitwise(name, f):
    def op(x, y):
        d, (a, b) = _integers(name, x, y)
        return f(a, b).astype(d)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"keras.ops.{name}(x, y) on integer arrays (eager only; NumPy's, exact)."
    return op


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", np.left_shift)
bitwise_right_shift = _bitwise("bitwise_right_shift", np.right_shift)
left_shift = _bitwise("left_shift", np.left_shift)
right_shift = _bitwise("right_shift", np.right_shift)


def bitwise_invert(x):
    d, (a,) = _integers("bitwise_invert", x)
    return np.invert(a).astype(d)


def bitwise_not(x):
    d, (a,) = _integers("bitwise_not", x)
    return np.invert(a).astype(d)


def gcd(x1, x2):
    d, (a, b) = _integers("gcd", x1, x2)
    return np.gcd(a, b).astype(d)


def lcm(x1, x2):
    d, (a, b) = _integers("lcm", x1, x2)
    return np.lcm(a, b).astype(d)


# --- constants -------------------------------------------------------------------------------

def _float_or(dtype):
    return _dtypes.standardize_dtype(dtype) if dtype is not None else "float32"


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    if num < 0:
        raise ValueError(f"`num` must be a non-negative integer. Received: num={num}")
    d = _dtypes.standardize_dtype(dtype) if dtype is not None else _floating(start, stop)
    out, step = np.linspace(np.asarray(start, "float64"), np.asarray(stop, "float64"), num, endpoint=endpoint,
                            retstep=True, axis=axis)
    if "int" in d:
        out = np.floor(out)
    out = out.astype(d)
    return (out, np.asarray(step, d if "float" in d else "float32")) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    exps = linspace(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis)
    return np.power(np.asarray(base, "float64"), exps.astype("float64")).astype(exps.dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    d = _float_or(dtype)
    out = np.geomspace(np.asarray(start, "float64"), np.asarray(stop, "float64"), num, endpoint=endpoint, axis=axis)
    return out.astype(d)


def identity(n, dtype=None):
    return np.eye(n, n, dtype=_float_or(dtype))


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 (Keras's names)
    return np.tri(N, M, k, dtype=_float_or(dtype))


def empty(shape, dtype=None):
    return np.zeros(shape, _float_or(dtype))


def dtype(x):
    """keras.ops.dtype: Keras's name of x's dtype."""
    return _dtypes.standardize_dtype(x.dtype if is_symbolic(x) else np.asarray(x).dtype)


def _window(name, f):
    def op(x):
        _eager_only(name, x)
        return f(int(x)).astype("float32")
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"keras.ops.{name}(x): NumPy's np.{name} window of x points, float32."
    return op


bartlett = _window("bartlett", np.bartlett)
blackman = _window("blackman", np.blackman)
hamming = _window("hamming", np.hamming)
hanning = _window("hanning", np.hanning)


def kaiser(x, beta):
    _eager_only("kaiser", x)
    return np.kaiser(int(x), float(beta)).astype("float32")
