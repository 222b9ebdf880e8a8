"""keras.ops' array operations on nnfit's engine (opsB's group): contractions (einsum,
tensordot, dot, ...), indexing (take, take_along_axis, top_k, sort, scatter, the segment
reductions), data movement (split, flip, roll, tril, slice, the stacks, ...) and diagonals.

Each records Keras's own operation node on symbolic tensors (module, class and config as
Keras writes them) and runs the one-node graph on the engine for arrays; the emitters are
compositions of engine ops (Note [Array operations from the engine's ops] in
src/nn/layers/operation_array_emit.h). The engine computes integers in float32 (exact
below 2^24); an eager result is given Keras's dtype. Sorting is the engine's `argsort` op.
"""
import builtins

import numpy as np

from nnfit.keras.ops import _arrays_control, _arrays_numpy
from nnfit.keras.ops._arrays_control import *  # noqa: F401,F403  (control flow)
from nnfit.keras.ops._arrays_numpy import *  # noqa: F401,F403  (arrays only: NumPy)
from nnfit.keras.ops._operation import Const, Index, call, is_symbolic

__all__ = [
    "einsum", "tensordot", "dot", "outer", "inner", "vdot", "kron", "cross", "diagonal", "diag", "diagflat", "trace",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "take", "take_along_axis", "top_k", "sort",
    "argsort", "in_top_k", "segment_sum", "segment_max", "scatter", "scatter_update", "broadcast_to", "slice",
    "slice_update", "flip", "fliplr", "flipud", "rot90", "roll", "tril", "triu", "ravel", "hstack", "vstack",
    "dstack", "append", "select", "meshgrid", "diff", "segment_min", "segment_prod", "searchsorted", "digitize",
    "vander", "trapezoid", "unravel_index", "correlate", "rearrange",
] + _arrays_control.__all__ + _arrays_numpy.__all__

def _dtype(x):
    """nnfit's dtype of a tensor as Keras would type it: float32 for floats, int32 for
    integers (int64 kept), bool."""
    if is_symbolic(x):
        return str(x.dtype)
    a = np.asarray(x)
    if a.dtype.kind == "b":
        return "bool"
    if a.dtype.kind in "iu":
        return "int64" if a.dtype.itemsize > 4 else "int32"
    return "float32"


def _result_type(*xs):
    dtypes = [_dtype(x) for x in xs if x is not None]
    floats = [d for d in dtypes if d.startswith(("float", "bfloat"))]
    if floats:
        return "float32" if "float32" in floats or len(set(floats)) > 1 else floats[0]
    ints = [d for d in dtypes if d.startswith("int")]
    if ints:
        return "int64" if "int64" in ints else "int32"
    return dtypes[0] if dtypes else "float32"


def _run(module, cls, snake, args, config, dtype, outputs=1):
    """Records or runs the operation; an eager result gets `dtype` (a list: one per output)."""
    out = call(module, cls, snake, args, config, out_dtype=dtype, outputs=outputs)
    if any(is_symbolic(o) for o in (out if isinstance(out, list) else [out])):
        return out
    if outputs == 1:
        return np.asarray(out).astype(dtype, copy=False)
    return [np.asarray(o).astype(d, copy=False) for o, d in zip(out, dtype if isinstance(dtype, list) else [dtype] * outputs)]


def _ints(v):
    return v if isinstance(v, int) or v is None else [int(i) for i in v]


def _index_list(indices, symbolic):
    """An index argument: a symbolic tensor as it is; on symbolic calls a flat list of ints
    as Keras writes it (a list), other constants as arrays."""
    if is_symbolic(indices):
        return indices
    if isinstance(indices, (int, np.integer)):
        return int(indices)
    a = np.asarray(indices)
    if symbolic and a.ndim == 1 and a.dtype.kind in "iu" and a.size:
        return Index(tuple(int(i) for i in a))
    return a


def _host_indices(v):
    """Indices given as an array on a call: the operation's constant, as a symbolic call
    records them (so an eager gradient is taken with respect to the data alone); very large
    ones stay an input of the one-node graph."""
    if is_symbolic(v) or isinstance(v, (Const, Index, int, np.integer)):
        return v
    a = np.asarray(v)
    return Const(a) if a.dtype.kind in "iub" and 0 < a.size <= 65536 else a


# Contractions.
def einsum(subscripts, *operands, **kwargs):
    return _run("numpy", "Einsum", "einsum", list(operands), {"subscripts": subscripts}, _result_type(*operands))


def tensordot(x1, x2, axes=2):
    if not isinstance(axes, int):
        axes = [_ints([a] if isinstance(a, int) else a) for a in axes]
    return _run("numpy", "Tensordot", "tensordot", [x1, x2], {"axes": axes}, _result_type(x1, x2))


def dot(x1, x2):
    return _run("numpy", "Dot", "dot", [x1, x2], {}, _result_type(x1, x2))


def outer(x1, x2):
    return _run("numpy", "Outer", "outer", [x1, x2], {}, _result_type(x1, x2))


def inner(x1, x2):
    return _run("numpy", "Inner", "inner", [x1, x2], {}, _result_type(x1, x2))


def vdot(x1, x2):
    return _run("numpy", "Vdot", "vdot", [x1, x2], {}, _result_type(x1, x2))


def kron(x1, x2):
    return _run("numpy", "Kron", "kron", [x1, x2], {}, _result_type(x1, x2))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return _run("numpy", "Cross", "cross", [x1, x2], {"axisa": axisa, "axisb": axisb, "axisc": axisc, "axis": axis},
                _result_type(x1, x2))


def diagonal(x, offset=0, axis1=0, axis2=1):
    return _run("numpy", "Diagonal", "diagonal", [x], {"offset": offset, "axis1": axis1, "axis2": axis2}, _dtype(x))


def trace(x, offset=0, axis1=0, axis2=1):
    return _run("numpy", "Trace", "trace", [x], {"offset": offset, "axis1": axis1, "axis2": axis2}, _dtype(x))


def diag(x, k=0):
    return _run("numpy", "Diag", "diag", [x], {"k": k}, _dtype(x))


def diagflat(x, k=0):
    return _run("numpy", "Diagflat", "diagflat", [x], {"k": k}, _dtype(x))


# Splits: one output per piece.
def _split(cls, snake, x, indices_or_sections, axis=None):
    if isinstance(indices_or_sections, (int, np.integer)):
        config, count = {"indices_or_sections": int(indices_or_sections)}, int(indices_or_sections)
    else:
        points = [int(i) for i in indices_or_sections]
        config, count = {"indices_or_sections": points}, len(points) + 1
    if cls in ("Split", "ArraySplit"):
        config["axis"] = axis
    return _run("numpy", cls, snake, [x], config, _dtype(x), outputs=count)


def split(x, indices_or_sections, axis=0):
    return _split("Split", "split", x, indices_or_sections, axis)


def array_split(x, indices_or_sections, axis=0):
    return _split("ArraySplit", "array_split", x, indices_or_sections, axis)


def hsplit(x, indices_or_sections):
    return _split("Hsplit", "hsplit", x, indices_or_sections)


def vsplit(x, indices_or_sections):
    return _split("Vsplit", "vsplit", x, indices_or_sections)


def dsplit(x, indices_or_sections):
    return _split("Dsplit", "dsplit", x, indices_or_sections)


def unstack(x, num=None, axis=0):
    shape = tuple(x.shape) if is_symbolic(x) else np.shape(x)
    n = num if num is not None else shape[axis]
    if n is None:
        raise ValueError(f"keras.ops.unstack: axis {axis} of {shape} has no known size; give num")
    return _run("core", "Unstack", "unstack", [x], {"num": num, "axis": axis}, _dtype(x), outputs=int(n))


# Indexing.
def take(x, indices, axis=None):
    return _run("numpy", "Take", "take", [x, _index_list(indices, is_symbolic(x))], {"axis": axis}, _dtype(x))


def take_along_axis(x, indices, axis=None):
    return _run("numpy", "TakeAlongAxis", "take_along_axis", [x, _host_indices(indices)], {"axis": axis}, _dtype(x))


def sort(x, axis=-1):
    return _run("numpy", "Sort", "sort", [x], {"axis": axis}, _dtype(x))


def argsort(x, axis=-1):
    return _run("numpy", "Argsort", "argsort", [x], {"axis": axis}, "int32")


def top_k(x, k, sorted=True):  # noqa: A002 (Keras's name)
    return _run("math", "TopK", "top_k", [x], {"k": int(k), "sorted": sorted}, [_dtype(x), "int32"], outputs=2)


def in_top_k(targets, predictions, k):
    return _run("math", "InTopK", "in_top_k", [targets, predictions], {"k": int(k)}, "bool")


def _segments(name, cls, data, segment_ids, num_segments, sorted):  # noqa: A002
    if num_segments is None and not is_symbolic(segment_ids):
        ids = np.asarray(segment_ids)
        num_segments = int(ids.max()) + 1 if ids.size else 0
    return _run("math", cls, name, [data, _host_indices(segment_ids)], {"num_segments": num_segments, "sorted": sorted}, _dtype(data))


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segments("segment_sum", "SegmentSum", data, segment_ids, num_segments, sorted)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segments("segment_max", "SegmentMax", data, segment_ids, num_segments, sorted)


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segments("segment_min", "SegmentMin", data, segment_ids, num_segments, sorted)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segments("segment_prod", "SegmentProd", data, segment_ids, num_segments, sorted)


def scatter(indices, values, shape):
    return _run("core", "Scatter", "scatter", [_host_indices(indices), values], {"shape": _ints(shape)}, _dtype(values))


def scatter_update(inputs, indices, updates, reduction=None):
    return _run("core", "ScatterUpdate", "scatter_update", [inputs, _host_indices(indices), updates], {"reduction": reduction},
                _dtype(inputs))


# Data movement.
def broadcast_to(x, shape):
    from nnfit.keras.ops import _dims
    if _dims.has_dim(shape):
        return _dims.batched_value(x, shape, "broadcast_to")
    return _run("numpy", "BroadcastTo", "broadcast_to", [x], {"shape": _ints(shape)}, _dtype(x))


def _start_indices(start_indices):
    if is_symbolic(start_indices):
        raise NotImplementedError("keras.ops.slice / slice_update with start_indices in a symbolic tensor is not "
                                  "supported by nnfit: give a list of ints")
    return Index(tuple(int(i) for i in np.asarray(start_indices).reshape(-1)))


def slice(inputs, start_indices, shape):  # noqa: A001 (Keras's name)
    return _run("core", "Slice", "slice", [inputs, _start_indices(start_indices)], {"shape": _ints(shape)},
                _dtype(inputs))


def slice_update(inputs, start_indices, updates):
    return _run("core", "SliceUpdate", "slice_update", [inputs, _start_indices(start_indices), updates], {},
                _dtype(inputs))


def flip(x, axis=None):
    return _run("numpy", "Flip", "flip", [x], {"axis": _ints(axis)}, _dtype(x))


def fliplr(x):
    return _run("numpy", "Fliplr", "fliplr", [x], {}, _dtype(x))


def flipud(x):
    return _run("numpy", "Flipud", "flipud", [x], {}, _dtype(x))


def rot90(array, k=1, axes=(0, 1)):
    return _run("numpy", "Rot90", "rot90", [array], {"k": k, "axes": _ints(axes)}, _dtype(array))


def roll(x, shift, axis=None):
    return _run("numpy", "Roll", "roll", [x], {"shift": _ints(shift), "axis": _ints(axis)}, _dtype(x))


def tril(x, k=0):
    return _run("numpy", "Tril", "tril", [x], {"k": k}, _dtype(x))


def triu(x, k=0):
    return _run("numpy", "Triu", "triu", [x], {"k": k}, _dtype(x))


def ravel(x):
    return _run("numpy", "Ravel", "ravel", [x], {}, _dtype(x))


def _stack(cls, snake, xs):
    xs = list(xs)
    return _run("numpy", cls, snake, [xs], {}, _result_type(*xs))


def hstack(xs):
    return _stack("Hstack", "hstack", xs)


def vstack(xs):
    return _stack("Vstack", "vstack", xs)


def dstack(xs):
    return _stack("Dstack", "dstack", xs)


def append(x1, x2, axis=None):
    return _run("numpy", "Append", "append", [x1, x2], {"axis": axis}, _result_type(x1, x2))


def select(condlist, choicelist, default=0):
    return _run("numpy", "Select", "select", [list(condlist), list(choicelist), default], {},
                _result_type(*choicelist))


def meshgrid(*x, indexing="xy"):
    return _run("numpy", "Meshgrid", "meshgrid", list(x), {"indexing": indexing}, _result_type(*x),
                outputs=builtins.max(len(x), 1))


def diff(a, n=1, axis=-1):
    return _run("numpy", "Diff", "diff", [a], {"n": n, "axis": axis}, _dtype(a))


# Searching and sequences.
def _host_values(v):
    """A list of numbers passed beside a tensor (digitize's bins): an array."""
    return np.asarray(v, dtype="float32" if np.asarray(v).dtype.kind == "f" else None) if isinstance(v, (list, tuple)) else v


def searchsorted(sorted_sequence, values, side="left"):
    return _run("numpy", "SearchSorted", "searchsorted", [_host_values(sorted_sequence), _host_values(values)],
                {"side": side}, "int32")


def digitize(x, bins):
    return _run("numpy", "Digitize", "digitize", [_host_values(x), _host_values(bins)], {}, "int32")


def vander(x, N=None, increasing=False):  # noqa: N803 (Keras's name)
    return _run("numpy", "Vander", "vander", [x], {"N": N, "increasing": increasing}, _dtype(x))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    if x is not None:
        if is_symbolic(y) or is_symbolic(x):
            raise NotImplementedError("keras.ops.trapezoid with sample points x is supported by nnfit on arrays "
                                      "only: give dx in a model")
        integrate = getattr(np, "trapezoid", None) or np.trapz  # NumPy < 2 names it trapz
        return np.asarray(integrate(np.asarray(y), np.asarray(x), dx=dx, axis=axis), "float32")
    return _run("numpy", "Trapezoid", "trapezoid", [y], {"x": None, "dx": float(dx), "axis": axis}, "float32")


def unravel_index(indices, shape):
    shape = _ints(shape)
    n = 1 if isinstance(shape, int) else len(shape)
    out = _run("numpy", "UnravelIndex", "unravel_index", [_host_values(indices)], {"shape": shape}, _dtype(indices),
               outputs=n)
    return tuple(out) if isinstance(out, list) else (out,)


def correlate(x1, x2, mode="valid"):
    return _run("numpy", "Correlate", "correlate", [x1, x2], {"mode": mode}, "float32")


def rearrange(tensor, pattern, **axes_lengths):
    """einops' rearrange as Keras computes it: a reshape splitting grouped input axes, a
    transpose, and a reshape merging grouped output axes (recorded as those nodes)."""
    from nnfit.keras import ops
    import re
    left, right = re.split(r"\s*->\s*", pattern)
    in_axes = re.findall(r"\w+|\(.*?\)", left)
    out_axes = re.findall(r"\w+|\(.*?\)", right)
    shape = list(tensor.shape) if is_symbolic(tensor) else list(np.shape(tensor))
    if len(in_axes) != len(shape):
        raise ValueError(f"keras.ops.rearrange: the pattern {left!r} names {len(in_axes)} axes, the tensor has "
                         f"{len(shape)}")
    sizes, flat_in = dict(axes_lengths), []
    for axis, dim in zip(in_axes, shape):
        inner = re.findall(r"\w+", axis)
        if axis.startswith("("):
            unknown = [a for a in inner if a not in sizes]
            if unknown:
                known = int(np.prod([sizes[a] for a in inner if a in sizes]))
                sizes[unknown[0]] = None if dim is None else dim // known
        else:
            sizes[axis] = dim
        flat_in.extend(inner)
    split = [sizes[a] for a in flat_in]
    x = tensor
    if any(a.startswith("(") for a in in_axes):
        x = ops.reshape(x, [-1 if d is None else d for d in split])
    flat_out = [a for axis in out_axes for a in re.findall(r"\w+", axis)]
    order = [flat_in.index(a) for a in flat_out]
    if order != list(range(len(order))):
        x = ops.transpose(x, order)
    if any(a.startswith("(") for a in out_axes):
        merged = []
        for axis in out_axes:
            dims = [sizes[a] for a in re.findall(r"\w+", axis)]
            merged.append(-1 if any(d is None for d in dims) else int(np.prod(dims)))
        x = ops.reshape(x, merged)
    return x
