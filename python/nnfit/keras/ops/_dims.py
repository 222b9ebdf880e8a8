"""Dimensions known only per batch inside a traced call (Note [Dimensions known per batch]).

A model whose Input has None past the batch axis (``keras.Input(shape=(None,))``) runs one
program per batch shape (Note [Shapes known per batch] in src/nn/layer_graph.cpp). Inside a
subclassed layer's call, Keras on TensorFlow gives ``ops.shape(x)[1]`` as a scalar tensor
whose value is that batch's length, and keras.io's layers use it for positions
(``ops.arange(0, ops.shape(x)[-1])``), head splits (``ops.reshape(q, (batch, seq_len, h,
d))``) and square masks (``ops.ones((seq_len, seq_len))``). nnfit traces the call once, so
there ``ops.shape`` gives a `Dim`: the size of axis `axis` of `tensor`, known when the batch
runs. The operations that take one build their result from that tensor, so the engine's
per-shape programs compute it for each batch:

- ``ops.reshape``: a Dim entry is the -1 the engine completes from the element count (an
  entry -1 already there is first made a number from the static sizes);
- ``ops.arange(n)`` / ``arange(0, n)``, ``ops.ones/zeros/full(shape)``: from the tensor's
  values (multiplied by zero) summed to [batch, n] and a cumulative sum or broadcast. The
  result has the batch axis in front ([batch, n] for arange where Keras gives [n]), as
  ``batched_constant`` gives layers' constant inputs in a trace: every row equal to Keras's
  value, which broadcasts against [batch, ...] tensors as Keras's does;
- a slice ``x[:, :n]`` of the axis n measures: the whole axis;
- the batch size, ``ops.shape(x)[0]``: the batch entry of a reshape, the first size of
  ops.zeros/ones/full (a tensor of the model's batch: an RNN's state), of keras.random's
  draws, and of ``ops.tile(mask, (batch_size, 1, 1))`` / ``ops.broadcast_to`` of an array
  (the array for every sample: keras.io's causal mask); ``ops.expand_dims`` of it and
  ``ops.concatenate`` with integer arrays make a `ShapeVector` of sizes those take.

Anything else (a Dim in Python arithmetic, a comparison, ``int()``, another operation's
argument) raises NotImplementedError naming what to do; outside a traced call ``ops.shape``
gives None for such a dimension, as Keras's Functional construction does.
"""
import numpy as np


def _message(what):
    return (f"{what}: a dimension known only per batch (None in the tensor's shape; ops.shape inside a layer's call "
            "gives it) is supported by nnfit in ops.reshape, ops.arange(n), ops.ones/zeros/full and a slice x[:, :n] "
            "of its own axis; give the model's Input a fixed length (keras.utils.pad_sequences(..., maxlen=...)) for "
            "other uses")


class Dim:
    """The size of axis `axis` of symbolic `tensor`, known only when a batch runs."""

    def __init__(self, tensor, axis):
        self.tensor = tensor
        self.axis = int(axis)

    def __repr__(self):
        return f"<dimension {self.axis} of a tensor of shape {tuple(self.tensor.shape)}, known per batch>"

    def __eq__(self, other):
        return isinstance(other, Dim) and other.tensor is self.tensor and other.axis == self.axis

    def __hash__(self):
        return hash((id(self.tensor), self.axis))

    def _refuse(self, *_args, **_kwargs):
        raise NotImplementedError(_message("a Python operation on it"))

    __int__ = __index__ = __float__ = __bool__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = __neg__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse


def is_dim(x):
    return isinstance(x, Dim)


def is_batch(x):
    """Whether x is the batch size (ops.shape(t)[0] inside a traced call)."""
    return isinstance(x, Dim) and x.axis == 0


def has_dim(x):
    if isinstance(x, (Dim, ShapeVector)):
        return True
    if isinstance(x, (list, tuple)):
        return any(has_dim(v) for v in x)
    if isinstance(x, dict):
        return any(has_dim(v) for v in x.values())
    if isinstance(x, slice):
        return any(has_dim(v) for v in (x.start, x.stop, x.step))
    return False


def refuse(where):
    raise NotImplementedError(_message(where))


def shape_of(x):
    """ops.shape of symbolic `x`: Dims for the unknown axes past the batch inside a trace."""
    from nnfit.keras import _tracing
    dims = tuple(x.shape)
    if _tracing.current_trace() is None:
        return dims
    return tuple(Dim(x, i) if d is None else d for i, d in enumerate(dims))


def reshape_target(x, newshape):
    """ops.reshape's newshape for the engine with a Dim in it: the Dim as -1 and the batch
    entry (None or -1) as a front -1, which the engine reads as axis 0's size (its reshape
    emitter); a -1 elsewhere is first made a number from x's static sizes, which needs x's
    only unknown axis past the batch to be the one the Dim measures the size of."""
    entries = list(newshape.entries if isinstance(newshape, ShapeVector) else newshape)
    if entries and is_batch(entries[0]):
        entries[0] = None  # the batch, as Keras's None there
    dims = [i for i, d in enumerate(entries) if isinstance(d, Dim)]
    if not dims:
        return [int(d) if d is not None else -1 for d in entries]
    if len(dims) > 1:
        refuse("ops.reshape with two dimensions known per batch")
    if dims[0] == 0 or not entries or not (entries[0] is None or (not isinstance(entries[0], Dim) and int(entries[0]) == -1)):
        refuse("ops.reshape whose first entry is not the batch (None or -1)")
    free = [i for i, d in enumerate(entries) if i > 0 and not isinstance(d, Dim) and (d is None or int(d) == -1)]
    if free:
        unknown = [i for i, d in enumerate(x.shape) if d is None and i > 0]
        if len(free) > 1 or len(unknown) != 1:
            refuse("ops.reshape with -1 beside a dimension known per batch")
        static = int(np.prod([d for i, d in enumerate(x.shape) if i > 0 and d is not None]))
        others = int(np.prod([int(d) for i, d in enumerate(entries) if i > 0 and i not in free and i not in dims]))
        if others == 0 or static % others:
            refuse(f"ops.reshape of {tuple(x.shape)} to {tuple(newshape)}")
        entries[free[0]] = static // others
    return [-1 if i == 0 or isinstance(d, Dim) else int(d) for i, d in enumerate(entries)]


def _zero_rows(dim):
    """[batch, n] zeros from `dim`'s tensor: its values compared with themselves (true even
    where they are inf; NaN gives false), times 0, summed over the other axes."""
    from nnfit.keras import ops
    x = dim.tensor
    z = ops.multiply(ops.cast(ops.equal(x, x), "float32"), 0.0)
    others = tuple(a for a in range(1, len(x.shape)) if a != dim.axis)
    if others:
        z = ops.sum(z, axis=others)
    return z


def arange(start, stop, step, dtype):
    from nnfit.keras import ops
    if stop is None:
        start, stop = 0, start
    if isinstance(start, Dim) or step not in (None, 1) or start != 0 or not isinstance(stop, Dim):
        refuse("ops.arange other than arange(n) or arange(0, n, 1)")
    positions = ops.subtract(ops.cumsum(ops.add(_zero_rows(stop), 1.0), axis=1), 1.0)
    return _mark(ops.cast(positions, dtype or "int32"))


def filled(shape, value, dtype):
    """ops.full(shape, value) with Dims in `shape`. With the batch size first, a tensor of the
    model's batch (ops.zeros((batch_size, units)): an RNN's state); else [batch, *shape], a
    per-batch tensor (Keras's value in every row)."""
    from nnfit.keras import ops
    shape = tuple(shape.entries if isinstance(shape, ShapeVector) else shape)
    batched = bool(shape) and is_batch(shape[0])
    out = None
    for k, d in enumerate(shape):
        if not isinstance(d, Dim):
            continue
        if is_batch(d) and k != 0:
            refuse("a shape with the batch size other than first")
        t = _zero_rows(d)  # [batch] for the batch size, else [batch, n] with n at axis 1
        rank = len(shape) if batched else len(shape) + 1
        axis = 0 if is_batch(d) else (k if batched else k + 1)  # where this size goes
        for _ in range(max(axis - 1, 0)):
            t = ops.expand_dims(t, 1)
        for _ in range(rank - 1 - axis):
            t = ops.expand_dims(t, -1)
        out = t if out is None else ops.add(out, t)
    static = np.full([1 if isinstance(d, Dim) else int(d) for d in shape], value, dtype="float32")
    out = ops.cast(ops.add(out, static[0] if batched else static), dtype or "float32")
    return out if batched else _mark(out)


class ShapeVector:
    """A 1-D integer tensor of sizes, some known only per batch: keras.io's
    ``ops.concatenate([ops.expand_dims(batch_size, -1), ops.convert_to_tensor([1, 1])], 0)``,
    the multiples of an ops.tile. ops.tile, broadcast_to, reshape and ones/zeros/full take it."""

    def __init__(self, entries):
        self.entries = list(entries)

    def __repr__(self):
        return f"<sizes {self.entries}, some known per batch>"


def shape_vector(parts):
    """ops.concatenate / stack of sizes: Dims, ShapeVectors and 1-D integer arrays."""
    entries = []
    for t in parts:
        if isinstance(t, ShapeVector):
            entries.extend(t.entries)
        elif isinstance(t, Dim) or np.ndim(t) == 0:
            entries.append(t if isinstance(t, Dim) else int(t))
        elif np.ndim(t) == 1 and np.asarray(t).dtype.kind in "iu":
            entries.extend(int(v) for v in np.asarray(t))
        else:
            refuse("ops.concatenate of sizes with something other than 1-D integer arrays")
    return ShapeVector(entries)


def batched_value(x, sizes, how):
    """ops.tile(x, [batch_size, ...]) or ops.broadcast_to(x, (batch_size, ...)) of an array
    x: x made the same for every sample of the batch (keras.io's causal mask, tiled over the
    batch), a tensor of the model's batch built from the batch size's tensor."""
    from nnfit.keras import ops
    from nnfit.keras.ops._operation import is_symbolic
    entries = list(sizes.entries if isinstance(sizes, ShapeVector) else sizes)
    if not entries or not is_batch(entries[0]) or has_dim(entries[1:]) or is_symbolic(x):
        refuse(f"ops.{how} other than of an array over the batch size first (ops.{how}(mask, [batch_size, 1, 1]))")
    value = np.asarray(x)
    rest = [int(d) for d in entries[1:]]
    if how == "tile":
        if value.ndim != len(entries) or value.shape[0] != 1:
            refuse(f"ops.tile of an array of shape {value.shape} by the batch size (its first size must be 1)")
        value = np.tile(value[0], rest)
    else:
        value = np.broadcast_to(value, [1] + rest)[0]
    t = _zero_rows(entries[0])
    for _ in range(value.ndim):
        t = ops.expand_dims(t, -1)
    dtype = "bool" if value.dtype.kind == "b" else "int32" if value.dtype.kind in "iu" else "float32"
    return ops.cast(ops.add(t, value.astype("float32")), dtype)


def slice_key(x, key):
    """A GetItem key with a Dim as a slice's stop: the whole axis when the Dim measures that
    same axis of `x` itself (x[:, :seq_len]); anything else is refused."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for position, item in enumerate(items):
        if isinstance(item, slice) and has_dim(item):
            whole = (isinstance(item.stop, Dim) and item.stop.tensor is x and item.stop.axis == position
                     and item.start in (None, 0) and item.step in (None, 1)
                     and not any(i is None or i is Ellipsis for i in items[:position]))
            if not whole:
                refuse("a slice with a dimension known per batch other than x[:, :n] over n's own axis of x")
            out.append(slice(None))
        elif has_dim(item):
            refuse("an index that is a dimension known per batch")
        else:
            out.append(item)
    return tuple(out) if isinstance(key, tuple) else out[0]


# Note [Dimensions known per batch], the results of arange and ones/zeros/full: they carry a
# batch axis in front of Keras's value ("per batch" tensors). An element-wise operation of
# two of them, or of one with a batched tensor of at least its rank (its axes past the
# batch moved right as Keras's broadcasting aligns them), gives Keras's values; triu and
# tril work on the last two axes either way. Every other operation on one would read the
# extra axis as Keras's axis 0, so it is refused, naming the operation.
_ELEMENTWISE_ONE = {"cast", "triu", "tril", "negative", "absolute", "square", "sqrt", "exp", "log", "sin", "cos",
                    "logical_not", "floor", "ceil", "sign", "reciprocal", "tanh", "sigmoid", "relu"}
_ELEMENTWISE_TWO = {"add", "subtract", "multiply", "divide", "true_divide", "power", "maximum", "minimum",
                    "floor_divide", "mod", "equal", "less", "less_equal", "greater", "greater_equal", "not_equal",
                    "logical_and", "logical_or", "logical_xor", "where"}


def _mark(t):
    t._per_batch = True
    return t


def is_per_batch(t):
    return getattr(t, "_per_batch", False)


def per_batch_call(snake, args, config, run):
    """keras.ops.<snake> on `args`, some of them per-batch tensors: run by `run(args)` with
    their axes aligned, or refused. expand_dims and squeeze at negative axes (counted from
    the end, so the same axes) are taken too."""
    from nnfit.keras import ops
    from nnfit.keras.ops._operation import is_symbolic
    tensors = [a for a in args if is_symbolic(a)]
    axes = config.get("axis")
    from_end = axes is not None and all(int(a) < 0 for a in (axes if isinstance(axes, (list, tuple)) else [axes]))
    if (snake in _ELEMENTWISE_ONE or (snake in ("expand_dims", "squeeze") and from_end)) and len(tensors) == 1:
        return _mark(_unmarked(run, list(args)))
    # matmul broadcasts its leading axes as element-wise operations do (matrices: Keras rank >= 2).
    matrices = snake == "matmul" and all(len(t.shape) >= 3 for t in tensors if is_per_batch(t))
    if (snake not in _ELEMENTWISE_TWO and not matrices) or any(isinstance(a, list) for a in args):
        raise NotImplementedError(
            f"keras.ops.{snake} on the result of ops.arange/ones/zeros/full of a dimension known per batch: nnfit "
            "holds it with the batch axis in front (Note [Dimensions known per batch]) and supports element-wise "
            "operations on it, triu/tril and calling a layer on it; give the model's Input a fixed length for this use")
    rank = max(len(t.shape) for t in tensors if not is_per_batch(t)) if any(not is_per_batch(t) for t in tensors) \
        else None
    fixed = []
    for a in args:
        if is_symbolic(a) and is_per_batch(a) and rank is not None:
            if len(a.shape) > rank:
                refuse(f"keras.ops.{snake} of a per-batch tensor of rank {len(a.shape) - 1} (Keras's) with a tensor "
                       f"of rank {rank}")
            if rank > len(a.shape):
                a._per_batch = False  # expand_dims after the batch axis: the tensor as the engine holds it
                try:
                    b = a
                    for _ in range(rank - len(a.shape)):
                        b = ops.expand_dims(b, 1)
                finally:
                    a._per_batch = True
                a = b
        fixed.append(a)
    out = _unmarked(run, fixed)
    return _mark(out) if rank is None else out


def _unmarked(run, args):
    """run(args) with args' per-batch marks lifted meanwhile (the operation itself is plain)."""
    marked = [a for a in args if is_per_batch(a)]
    for a in marked:
        a._per_batch = False
    try:
        return run(args)
    finally:
        for a in marked:
            a._per_batch = True
