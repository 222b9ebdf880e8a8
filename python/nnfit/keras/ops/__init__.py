"""keras.ops on nnfit's engine: Keras 3's names and signatures, on symbolic tensors (each
call adds Keras's own operation node to the model's graph, differentiable where Keras's
op is) and on arrays (run once by the engine's kernels, returning NumPy arrays).

Every name of Keras's keras.ops exists here; one nnfit does not implement raises
NotImplementedError naming it (docs/python.md lists which are which).
"""
import numpy as np

from nnfit.keras import _graph
from nnfit.keras.ops import _dims, _keras_names
from nnfit.keras.ops._operation import Index, call, is_symbolic

# numpy-module operations of one tensor, as Keras names them: function -> (class, snake).
_UNARY = {
    "abs": ("Absolute", "absolute"), "absolute": ("Absolute", "absolute"), "negative": ("Negative", "negative"),
    "sign": ("Sign", "sign"), "square": ("Square", "square"), "sqrt": ("Sqrt", "sqrt"),
    "reciprocal": ("Reciprocal", "reciprocal"), "exp": ("Exp", "exp"), "expm1": ("Expm1", "expm1"),
    "log": ("Log", "log"), "log1p": ("Log1p", "log1p"), "log2": ("Log2", "log2"), "log10": ("Log10", "log10"),
    "sin": ("Sin", "sin"), "cos": ("Cos", "cos"), "tan": ("Tan", "tan"), "arcsin": ("Arcsin", "arcsin"),
    "arccos": ("Arccos", "arccos"), "arctan": ("Arctan", "arctan"), "sinh": ("Sinh", "sinh"), "cosh": ("Cosh", "cosh"),
    "arcsinh": ("Arcsinh", "arcsinh"), "arctanh": ("Arctanh", "arctanh"), "floor": ("Floor", "floor"),
    "ceil": ("Ceil", "ceil"), "tanh": ("Tanh", "tanh"), "logical_not": ("LogicalNot", "logical_not"),
}
# Two tensors, broadcasting: function -> (class, snake, output dtype or None).
_BINARY = {
    "add": ("Add", "add", None), "subtract": ("Subtract", "subtract", None), "multiply": ("Multiply", "multiply", None),
    "divide": ("Divide", "divide", None), "true_divide": ("TrueDivide", "true_divide", None),
    "power": ("Power", "power", None), "maximum": ("Maximum", "maximum", None), "minimum": ("Minimum", "minimum", None),
    "floor_divide": ("FloorDivide", "floor_divide", None), "mod": ("Mod", "mod", None),
    "arctan2": ("Arctan2", "arctan2", None), "equal": ("Equal", "equal", "bool"), "less": ("Less", "less", "bool"),
    "less_equal": ("LessEqual", "less_equal", "bool"), "greater": ("Greater", "greater", "bool"),
    "greater_equal": ("GreaterEqual", "greater_equal", "bool"), "logical_xor": ("LogicalXor", "logical_xor", "bool"),
    "not_equal": ("NotEqual", "not_equal", "bool"), "logical_and": ("LogicalAnd", "logical_and", "bool"),
    "logical_or": ("LogicalOr", "logical_or", "bool"),
}
# keras.ops.nn activations of one tensor (no arguments): function -> (class, snake).
_ACTIVATIONS = {
    "relu": ("Relu", "relu"), "relu6": ("Relu6", "relu6"), "sigmoid": ("Sigmoid", "sigmoid"), "silu": ("Silu", "silu"),
    "swish": ("Silu", "silu"), "selu": ("Selu", "selu"), "softplus": ("Softplus", "softplus"),
    "softsign": ("Softsign", "softsign"), "hard_sigmoid": ("HardSigmoid", "hard_sigmoid"),
    "hard_silu": ("HardSilu", "hard_silu"), "hard_swish": ("HardSilu", "hard_silu"),
}


def _make_unary(fn, cls, snake):
    def op(x):
        return call("numpy", cls, snake, [x])
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = f"keras.ops.{fn}(x) on nnfit's engine."
    return op


def _make_binary(fn, cls, snake, dtype):
    def op(x1, x2):
        return call("numpy", cls, snake, [x1, x2], out_dtype=dtype)
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = f"keras.ops.{fn}(x1, x2) on nnfit's engine: NumPy broadcasting."
    return op


def _make_activation(fn, cls, snake):
    def op(x):
        return call("nn", cls, snake, [x])
    op.__name__ = op.__qualname__ = fn
    op.__doc__ = f"keras.ops.{fn}(x) on nnfit's engine (Keras's formula)."
    return op


for _fn, (_cls, _snake) in _UNARY.items():
    globals()[_fn] = _make_unary(_fn, _cls, _snake)
for _fn, (_cls, _snake, _dtype) in _BINARY.items():
    globals()[_fn] = _make_binary(_fn, _cls, _snake, _dtype)
for _fn, (_cls, _snake) in _ACTIVATIONS.items():
    globals()[_fn] = _make_activation(_fn, _cls, _snake)


def _axis(axis):
    if axis is None or isinstance(axis, int):
        return axis
    return [int(a) for a in axis]


# Reductions.
def sum(x, axis=None, keepdims=False):  # noqa: A001 (Keras's name)
    return call("numpy", "Sum", "sum", [x], {"axis": _axis(axis), "keepdims": keepdims})


def mean(x, axis=None, keepdims=False):
    return call("numpy", "Mean", "mean", [x], {"axis": _axis(axis), "keepdims": keepdims})


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    return call("numpy", "Max", "max", [x], {"axis": _axis(axis), "keepdims": keepdims, "initial": initial})


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    return call("numpy", "Min", "min", [x], {"axis": _axis(axis), "keepdims": keepdims, "initial": initial})


amax, amin = max, min


def prod(x, axis=None, keepdims=False, dtype=None):
    return call("numpy", "Prod", "prod", [x], {"axis": _axis(axis), "keepdims": keepdims, "dtype": dtype})


def var(x, axis=None, keepdims=False):
    return call("numpy", "Var", "var", [x], {"axis": _axis(axis), "keepdims": keepdims})


def std(x, axis=None, keepdims=False):
    return call("numpy", "Std", "std", [x], {"axis": _axis(axis), "keepdims": keepdims})


def argmax(x, axis=None, keepdims=False):
    return call("numpy", "Argmax", "argmax", [x], {"axis": axis, "keepdims": keepdims}, out_dtype="int32")


def argmin(x, axis=None, keepdims=False):
    return call("numpy", "Argmin", "argmin", [x], {"axis": axis, "keepdims": keepdims}, out_dtype="int32")


def cumsum(x, axis=None, dtype=None):
    return call("numpy", "Cumsum", "cumsum", [x], {"axis": axis, "dtype": dtype})


def cumprod(x, axis=None, dtype=None):
    return call("numpy", "Cumprod", "cumprod", [x], {"axis": axis, "dtype": dtype})


def logsumexp(x, axis=None, keepdims=False):
    return call("math", "Logsumexp", "logsumexp", [x], {"axis": _axis(axis), "keepdims": keepdims})


# Element-wise with arguments.
def clip(x, x_min, x_max):
    return call("numpy", "Clip", "clip", [x], {"x_min": x_min, "x_max": x_max})


def round(x, decimals=0):  # noqa: A001
    return call("numpy", "Round", "round", [x], {"decimals": decimals})


def where(condition, x1=None, x2=None):
    if x1 is None or x2 is None:
        raise NotImplementedError("keras.ops.where(condition) without x1 and x2 (the indices of true elements) is "
                                  "not supported by nnfit: its shape depends on the values")
    return call("numpy", "Where", "where", [condition, x1, x2])


def erf(x):
    return call("math", "Erf", "erf", [x])


def rsqrt(x):
    return call("math", "Rsqrt", "rsqrt", [x])


# Shapes.
def reshape(x, newshape):
    if _dims.has_dim(newshape):
        return call("numpy", "Reshape", "reshape", [x], {"newshape": _dims.reshape_target(x, newshape)})
    newshape = [int(d) if d is not None else -1 for d in ((newshape,) if isinstance(newshape, int) else newshape)]
    return call("numpy", "Reshape", "reshape", [x], {"newshape": newshape})


def transpose(x, axes=None):
    return call("numpy", "Transpose", "transpose", [x], {"axes": None if axes is None else [int(a) for a in axes]})


def swapaxes(x, axis1, axis2):
    axes = list(range(ndim(x)))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return transpose(x, axes)


def moveaxis(x, source, destination):
    n = ndim(x)
    source = [s % n for s in ((source,) if isinstance(source, int) else source)]
    destination = [d % n for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [a for a in range(n) if a not in source]
    for d, s in sorted(zip(destination, source)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(x, axis):
    if _dims.is_dim(x):  # keras.io's ops.expand_dims(batch_size, -1): a vector of sizes
        if axis not in (0, -1):
            _dims.refuse(f"ops.expand_dims of a size at axis {axis}")
        return _dims.ShapeVector([x])
    return call("numpy", "ExpandDims", "expand_dims", [x], {"axis": _axis(axis)})


def squeeze(x, axis=None):
    return call("numpy", "Squeeze", "squeeze", [x], {"axis": _axis(axis)})


def concatenate(xs, axis=0):
    if _dims.has_dim(list(xs)):
        return _dims.shape_vector(xs)
    return call("numpy", "Concatenate", "concatenate", [list(xs)], {"axis": axis})


def stack(x, axis=0):
    if _dims.has_dim(list(x)):
        return _dims.shape_vector(x)
    return call("numpy", "Stack", "stack", [list(x)], {"axis": axis})


def tile(x, repeats):
    if _dims.has_dim(repeats):
        return _dims.batched_value(x, repeats, "tile")
    return call("numpy", "Tile", "tile", [x], {"repeats": [int(r) for r in ((repeats,) if isinstance(repeats, int) else repeats)]})


def repeat(x, repeats, axis=None):
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("keras.ops.repeat with a list of repeats is not supported by nnfit: give one int")
    return call("numpy", "Repeat", "repeat", [x], {"repeats": int(repeats), "axis": axis})


def pad(x, pad_width, mode="constant", constant_values=None):
    width = np.asarray(pad_width, dtype="int64")
    if width.ndim == 1:
        width = np.tile(width.reshape(1, -1), (ndim(x), 1)) if width.size == 2 else width.reshape(-1, 2)
    return call("numpy", "Pad", "pad", [x], {"pad_width": width.tolist(), "mode": mode},
                kwargs={"constant_values": constant_values})


def get_item(x, key):
    if _dims.has_dim(key):
        key = _dims.slice_key(x, key)
    return call("numpy", "GetItem", "get_item", [x, Index(key)])


def matmul(x1, x2):
    return call("numpy", "Matmul", "matmul", [x1, x2])


def cast(x, dtype):
    dtype = getattr(dtype, "name", dtype)
    return call("core", "Cast", "cast", [x], {"dtype": str(dtype)}, out_dtype=str(dtype))


# keras.ops.nn with arguments.
def softmax(x, axis=-1):
    return call("nn", "Softmax", "softmax", [x], {"axis": axis})


def log_softmax(x, axis=-1):
    return call("nn", "LogSoftmax", "log_softmax", [x], {"axis": axis})


def gelu(x, approximate=True):
    return call("nn", "Gelu", "gelu", [x], {"approximate": approximate})


def elu(x, alpha=1.0):
    return call("nn", "Elu", "elu", [x], {"alpha": alpha})


def leaky_relu(x, negative_slope=0.2):
    return call("nn", "LeakyRelu", "leaky_relu", [x], {"negative_slope": negative_slope})


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    dtype = dtype or "float32"
    return call("nn", "OneHot", "one_hot", [x], {"num_classes": int(num_classes), "axis": axis, "dtype": dtype,
                                                 "sparse": sparse}, out_dtype=dtype)


def normalize(x, axis=-1, order=2, epsilon=None):
    return call("nn", "Normalize", "normalize", [x], {"axis": axis, "order": order, "epsilon": epsilon})


# Tensors that are not graph nodes: static facts and constant arrays.
def shape(x):
    return _dims.shape_of(x) if is_symbolic(x) else tuple(np.shape(x))


def ndim(x):
    return len(shape(x))


def size(x):
    s = tuple(x.shape) if is_symbolic(x) else np.shape(x)
    return None if any(d is None for d in s) else int(np.prod(s))


def convert_to_numpy(x):
    if is_symbolic(x):
        raise ValueError("A symbolic tensor has no value: convert_to_numpy takes arrays")
    return np.asarray(x)


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    if sparse or ragged:
        raise NotImplementedError("keras.ops.convert_to_tensor: sparse and ragged tensors are not supported by nnfit")
    if is_symbolic(x):
        return x
    if _dims.has_dim(x):
        return x if isinstance(x, _dims.ShapeVector) else _dims.shape_vector([x] if _dims.is_dim(x) else x)
    return np.asarray(x, dtype=dtype or (None if np.asarray(x).dtype.kind != "f" else "float32"))


def is_tensor(x):
    return is_symbolic(x) or isinstance(x, np.ndarray)


def arange(start, stop=None, step=None, dtype=None):
    if _dims.has_dim((start, stop, step)):
        return _dims.arange(start, stop, step, dtype)
    out = np.arange(start, stop, 1 if step is None else step)
    return out.astype(dtype or ("float32" if out.dtype.kind == "f" else "int32"))


def ones(shape, dtype=None):
    if _dims.has_dim(shape):
        return _dims.filled(shape, 1.0, dtype)
    return np.ones(shape, dtype or "float32")


def zeros(shape, dtype=None):
    if _dims.has_dim(shape):
        return _dims.filled(shape, 0.0, dtype)
    return np.zeros(shape, dtype or "float32")


def full(shape, fill_value, dtype=None):
    if _dims.has_dim(shape):
        if is_symbolic(fill_value) or _dims.has_dim(fill_value):
            _dims.refuse("ops.full with a symbolic fill value and a dimension known per batch")
        return _dims.filled(shape, float(fill_value), dtype)
    return np.full(shape, fill_value, dtype or "float32")


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 (Keras's names)
    return np.eye(N, M, k, dtype=dtype or "float32")


def _eager_only(fn, what):
    def op(x, *args, **kwargs):
        if is_symbolic(x):
            raise NotImplementedError(f"keras.ops.{fn} on a symbolic tensor is not supported by nnfit yet")
        return what(x, *args, **kwargs)
    op.__name__ = op.__qualname__ = fn
    return op


ones_like = _eager_only("ones_like", lambda x, dtype=None: np.ones_like(x, dtype=dtype or "float32"))
zeros_like = _eager_only("zeros_like", lambda x, dtype=None: np.zeros_like(x, dtype=dtype or "float32"))
full_like = _eager_only("full_like", lambda x, fill_value, dtype=None: np.full_like(x, fill_value, dtype=dtype or "float32"))


from nnfit.keras.ops._nn import *  # noqa: E402,F401,F403  (keras.ops.nn: convolutions, poolings, losses, ...)
from nnfit.keras.ops._arrays import *  # noqa: E402,F401,F403  (opsB: array operations)
from nnfit.keras.ops._math import *  # noqa: E402,F401,F403  (opsA: math, logical tests, nan-reductions, integers)
from nnfit.keras.ops._patches_ctc import *  # noqa: E402,F401,F403  (unfold, fold, ctc_loss, ctc_decode)
from nnfit.keras.ops._compositions import *  # noqa: E402,F401,F403  (cdist, corrcoef, extract_sequences, isin, polar, jvp)


def _not_implemented(name):
    def op(*args, **kwargs):
        raise NotImplementedError(f"keras.ops.{name} is not supported by nnfit yet (docs/python.md lists the "
                                  "keras.ops it implements)")
    op.__name__ = op.__qualname__ = name
    op._nnfit_missing = True
    return op


for _name in _keras_names.TOP_LEVEL:
    if _name not in globals():
        globals()[_name] = _not_implemented(_name)



from nnfit.keras.ops import image, linalg, nn, numpy  # noqa: E402,F401  (Keras's submodules)


def implemented():
    """The keras.ops names nnfit implements (the rest raise NotImplementedError)."""
    return sorted(n for n in _keras_names.TOP_LEVEL if not getattr(globals()[n], "_nnfit_missing", False))


__all__ = sorted(_keras_names.TOP_LEVEL)
