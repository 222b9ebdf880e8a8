"""Keras's dtype rules for keras.backend and keras.utils: standardize_dtype, result_type,
is_float_dtype, is_int_dtype.

Ported from Keras 3.15 (keras/src/backend/common/dtypes.py and variables.py; Apache License
2.0, Copyright The Keras Authors), with the values Keras has on TensorFlow, the backend
nnfit.keras is compared with: Python's int is int64, and 64-bit results stay 64-bit for
int64 and float64 (uint64 and complex128 become 32-bit, as on every Keras backend).
"""
import functools

import numpy as np

BOOL_TYPES = ("bool",)
INT_TYPES = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")
FLOAT_TYPES = ("bfloat16", "float16", "float32", "float64")
WEAK_TYPES = ("int", "float")
COMPLEX_TYPES = ("complex64", "complex128")
FLOAT8_TYPES = ("float8_e4m3fn", "float8_e5m2")
ALLOWED_DTYPES = ("float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
                  "int64", "bfloat16", "bool", "string", "float8_e4m3fn", "float8_e5m2", "complex64", "complex128")
PYTHON_DTYPES_MAP = {bool: "bool", int: "int64", float: "float32", str: "string", "int": "int64",
                     complex: "complex128"}
BIT64_TO_BIT32_DTYPE = {"int64": "int64", "uint64": "uint32", "float64": "float64", "complex128": "complex64"}


def standardize_dtype(dtype):
    """Keras's name of a dtype (a string, a NumPy dtype or type, Python's bool/int/float/str)."""
    if dtype is None:
        return "float32"
    dtype = PYTHON_DTYPES_MAP.get(dtype, dtype)
    if hasattr(dtype, "name"):
        dtype = dtype.name
    elif hasattr(dtype, "__name__"):
        dtype = dtype.__name__
    elif hasattr(dtype, "__str__") and ("torch" in str(dtype) or "jax.numpy" in str(dtype)):
        dtype = str(dtype).split(".")[-1]
    if dtype not in ALLOWED_DTYPES:
        raise ValueError(f"Invalid dtype: {dtype}")
    return dtype


def is_float_dtype(dtype):
    dtype = standardize_dtype(dtype)
    return dtype.startswith("float") or dtype.startswith("bfloat")


def is_int_dtype(dtype):
    dtype = standardize_dtype(dtype)
    return dtype.startswith("int") or dtype.startswith("uint")


def _type_promotion_lattice():
    (b1,) = BOOL_TYPES
    (u1, u2, u4, u8, i1, i2, i4, i8) = INT_TYPES
    bf, f2, f4, f8 = FLOAT_TYPES
    i_, f_ = WEAK_TYPES
    c64, c128 = COMPLEX_TYPES
    return {b1: [i_], u1: [i2, u2], u2: [i4, u4], u4: [i8, u8], u8: [f_], i_: [u1, i1, c64], i1: [i2], i2: [i4],
            i4: [i8], i8: [f_], f_: [bf, f2], bf: [f4], f2: [f4], f4: [f8, c64], f8: [c128], c64: [c128], c128: []}


def _make_lattice_upper_bounds():
    lattice = _type_promotion_lattice()
    upper_bounds = {node: {node} for node in lattice}
    for n in lattice:
        while True:
            new_upper_bounds = set().union(*(lattice[b] for b in upper_bounds[n]))
            if new_upper_bounds.issubset(upper_bounds[n]):
                break
            upper_bounds[n] |= new_upper_bounds
    return upper_bounds


LATTICE_UPPER_BOUNDS = _make_lattice_upper_bounds()


@functools.lru_cache(512)
def _least_upper_bound(*nodes):
    upper = LATTICE_UPPER_BOUNDS
    try:
        bounds = [upper[n] for n in set(nodes)]
    except KeyError:
        dtype = next(n for n in set(nodes) if n not in upper)
        raise ValueError(f"{dtype=} is not a valid dtype for Keras type promotion.") from None
    common = set.intersection(*bounds)
    least = (common & set(nodes)) or {c for c in common if common.issubset(upper[c])}
    if len(least) == 1:
        return least.pop()
    raise ValueError(f"Input dtypes {tuple(str(n) for n in nodes)} have no available implicit dtype promotion path. "
                     "Try explicitly casting inputs to the desired output type.")


def _respect_weak_type(dtype, weak_type):
    if not weak_type or dtype == "bool":
        return dtype
    for kind in ("float", "int", "complex"):
        if kind in dtype:
            return kind
    raise ValueError(f"Invalid value for argument `dtype`. Expected one of {ALLOWED_DTYPES}. Received: dtype={dtype}")


def _resolve_weak_type(dtype, precision="32"):
    indicator = "f" if dtype == "bfloat16" else dtype[:1]
    if indicator == "b":
        return "bool"
    if indicator == "i":
        return f"int{precision}"
    if indicator == "u":
        return f"uint{precision}"
    return f"float{precision}"


def result_type(*dtypes):
    """Keras's result_type: the dtype of an operation on these dtypes (Keras's promotion
    lattice, JAX's); Python's int and float are weak."""
    if len(dtypes) == 0:
        return "float32"
    for dtype in dtypes:
        if dtype in FLOAT8_TYPES:
            raise ValueError(f"There is no implicit conversions from float8 dtypes to others. You must cast it "
                             f"internally. Received: {dtypes}")
    args = ["float32" if a is None else a for a in dtypes]
    names = [standardize_dtype(a) for a in args]
    weak = [a is int or a is float for a in args]
    if len(names) == 1:
        out, out_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        out, out_weak = names[0], False
    elif all(weak):
        out, out_weak = _least_upper_bound(*{_respect_weak_type(d, False) for d in names}), True
    else:
        out = _least_upper_bound(*{_respect_weak_type(d, w) for d, w in zip(names, weak)})
        out_weak = out in WEAK_TYPES
    if out != "bool" and out_weak:
        out = _resolve_weak_type(out, precision="32")
    return BIT64_TO_BIT32_DTYPE.get(out, out)


def numpy_dtype(dtype):
    """The NumPy dtype of a Keras dtype name (bfloat16 and float8 have none in NumPy)."""
    return np.dtype(standardize_dtype(dtype))
