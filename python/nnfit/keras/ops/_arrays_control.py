"""keras.ops' control flow on nnfit (opsB's group; imported by _arrays.py): plain Python
over the arguments, as Keras's NumPy backend runs it (keras/src/backend/numpy/core.py).

On arrays every function runs eagerly. On symbolic tensors, Python control flow on values
known while the model is built is traced into the graph (unrolled): cond and switch with a
Python predicate or index, fori_loop with Python bounds, while_loop whose condition is a
Python bool, scan over a known length or a non-symbolic sequence, associative_scan along a
non-batch axis. What would choose or loop per batch value (a symbolic predicate, a scan or
map over axis 0, which is the batch) is refused naming the operation, as is a custom
gradient, which the engine's autodiff would silently replace with its own.
"""
import builtins

import numpy as np

from nnfit.keras.ops._operation import is_symbolic

__all__ = ["cond", "switch", "fori_loop", "while_loop", "scan", "map", "associative_scan", "vectorized_map",
           "vectorize", "custom_gradient"]


def _flatten(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _flatten(item)]
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _flatten(tree[k])]
    return [tree]


def _pack(structure, leaves):
    """`leaves` (an iterator) in `structure`'s nesting."""
    if isinstance(structure, (list, tuple)):
        return type(structure)(_pack(s, leaves) for s in structure)
    if isinstance(structure, dict):
        return {k: _pack(structure[k], leaves) for k in sorted(structure)}
    return next(leaves)


def _refuse_symbolic(name, value, why):
    if any(is_symbolic(v) for v in _flatten(value)):
        raise NotImplementedError(f"keras.ops.{name}: {why} is a symbolic tensor, which nnfit's graph cannot branch "
                                  "or loop on (its value is known per batch); nnfit traces control flow on Python "
                                  "values, and runs it eagerly on arrays")


def _python_value(x):
    return x if isinstance(x, (bool, int, float)) else np.asarray(x).item()


def cond(pred, true_fn, false_fn):
    _refuse_symbolic("cond", pred, "the predicate")
    return true_fn() if _python_value(pred) else false_fn()


def switch(index, branches, *operands):
    _refuse_symbolic("switch", index, "the index")
    i = builtins.min(builtins.max(int(_python_value(index)), 0), len(branches) - 1)
    return branches[i](*operands)


def fori_loop(lower, upper, body_fun, init_val):
    _refuse_symbolic("fori_loop", [lower, upper], "a bound")
    val = init_val
    for i in range(int(_python_value(lower)), int(_python_value(upper))):
        val = body_fun(i, val)
    return val


def while_loop(cond, body, loop_vars, maximum_iterations=None):  # noqa: A002 (Keras's names)
    is_tuple = isinstance(loop_vars, (tuple, list))
    loop_vars = tuple(loop_vars) if is_tuple else (loop_vars,)
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        keep = cond(*loop_vars)
        _refuse_symbolic("while_loop", keep, "the condition")
        if not _python_value(keep):
            break
        loop_vars = body(*loop_vars)
        loop_vars = tuple(loop_vars) if isinstance(loop_vars, (list, tuple)) else (loop_vars,)
        count += 1
    return loop_vars if is_tuple else loop_vars[0]


def _stack(items):
    from nnfit.keras import ops
    if any(is_symbolic(t) for t in items):
        return ops.stack(items, axis=0)
    return np.stack([np.asarray(t) for t in items])


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    if not callable(f):
        raise TypeError(f"`f` should be a callable. Received: f={f}")
    if xs is None and length is None:
        raise ValueError("Got no `xs` to scan over and `length` not provided.")
    _refuse_symbolic("scan", xs, "the sequence scanned over its axis 0 (a model's batch axis)")
    xs_flat = [] if xs is None else [np.asarray(x) for x in _flatten(xs)]
    n = int(length) if length is not None else xs_flat[0].shape[0]
    carry, ys = init, []
    steps = range(n)
    for i in (reversed(steps) if reverse else steps):
        x = None if xs is None else _pack(xs, iter([a[i] for a in xs_flat]))
        carry, y = f(carry, x)
        ys.append(y if y is not None else _pack(init, iter([np.zeros_like(np.asarray(v)) for v in _flatten(init)])))
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    per_leaf = [_flatten(y) for y in ys]
    stacked = [_stack([leaves[j] for leaves in per_leaf]) for j in range(len(per_leaf[0]))]
    return carry, _pack(ys[0], iter(stacked))


def map(f, xs):  # noqa: A001 (Keras's name)
    _refuse_symbolic("map", xs, "the sequence mapped over its axis 0 (a model's batch axis)")
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys


def associative_scan(f, elems, reverse=False, axis=0):
    """The inclusive scan of an associative `f` along `axis`, sequentially: out[0] = e[0],
    out[i] = f(out[i-1], e[i]), on slices that keep the axis (length 1)."""
    from nnfit.keras import ops
    leaves = _flatten(elems)
    if any(is_symbolic(v) for v in leaves) and axis % len(leaves[0].shape) == 0:
        raise NotImplementedError("keras.ops.associative_scan along axis 0 of a symbolic tensor (a model's batch "
                                  "axis) is not supported by nnfit")
    rank = len(leaves[0].shape) if is_symbolic(leaves[0]) else np.ndim(leaves[0])
    axis = axis % rank
    n = leaves[0].shape[axis]

    def piece(v, i):
        key = (slice(None),) * axis + (slice(i, i + 1),)
        return ops.get_item(v, key) if is_symbolic(v) else np.asarray(v)[key]

    order = list(range(n))[::-1] if reverse else list(range(n))
    out, acc = [None] * n, None
    for i in order:
        e = _pack(elems, iter([piece(v, i) for v in leaves]))
        acc = e if acc is None else f(acc, e)
        out[i] = acc
    per_leaf = [_flatten(o) for o in out]

    def join(parts):
        if any(is_symbolic(p) for p in parts):
            return ops.concatenate(parts, axis=axis)
        return np.concatenate([np.asarray(p) for p in parts], axis=axis)

    return _pack(elems, iter([join([leaves_i[j] for leaves_i in per_leaf]) for j in range(len(leaves))]))


def vectorized_map(function, elements):
    _refuse_symbolic("vectorized_map", elements, "the elements mapped over their axis 0 (a model's batch axis)")
    if not isinstance(elements, (list, tuple)):
        return np.stack([np.asarray(function(x)) for x in np.asarray(elements)])
    batch_size = np.shape(elements[0])[0]
    return np.stack([np.asarray(function([np.asarray(x)[i] for x in elements])) for i in range(batch_size)])


def vectorize(pyfunc, *, excluded=None, signature=None):
    return np.vectorize(pyfunc, excluded=excluded if excluded is not None else set(), signature=signature)


def custom_gradient(f):
    """keras.ops.custom_gradient(f): on arrays, f's forward value (Keras's NumPy backend does
    the same: there is no gradient to customise). On symbolic tensors it is refused: the
    engine's autodiff would differentiate the forward ops, not use `grad_fn`."""

    def wrapper(*args, **kwargs):
        if any(is_symbolic(v) for v in _flatten(list(args) + list(kwargs.values()))):
            raise NotImplementedError(
                "keras.ops.custom_gradient on symbolic tensors is not supported by nnfit: the engine differentiates "
                "the forward operations itself and cannot use the custom grad_fn; write the forward computation "
                "without it, or as a layer")
        outputs, _ = f(*args, **kwargs)
        return outputs

    wrapper.__name__ = getattr(f, "__name__", "custom_gradient")
    return wrapper
