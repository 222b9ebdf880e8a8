"""keras.ops's cdist, corrcoef, extract_sequences, isin, polar and jvp, with Keras 3.15's
signatures, made of operations nnfit already has (no engine op of their own).

- cdist (expand_dims, subtract, square, sum, sqrt) and extract_sequences (one take of a
  constant index matrix) run on arrays and in a model; a model records the composed nodes,
  not Keras's CDist / ExtractSequences, so its file loads in Keras as those nodes.
- corrcoef's rows are its variables: in a model they would be the batch's samples, so it
  is refused there and runs on arrays and in custom losses and metrics (traced unbatched).
- isin compares with a constant x2 (equal + any); integer arrays go through NumPy's np.isin,
  exact past float32's 2^24 as Keras's NumPy backend.
- polar's result is complex, which the engine has no dtype for: NumPy's on arrays only.
- jvp runs on arrays by reverse mode: the function is traced once into a graph and each
  output element's gradient row dotted with the tangents (exact, one backward pass per
  output element). A model's graph cannot hold it (the engine differentiates in reverse
  mode only).
"""
import builtins

import numpy as np

from nnfit.keras import _graph
from nnfit.keras.ops import _operation
from nnfit.keras.ops._operation import call, composed, is_symbolic

__all__ = ["cdist", "corrcoef", "extract_sequences", "isin", "polar", "jvp"]


def _ops():
    from nnfit import keras
    return keras.ops


def _shape(x):
    return tuple(x.shape) if is_symbolic(x) else np.shape(x)


def _in_model(*xs):
    """Whether a symbolic argument's axis 0 is a model's batch (not a custom loss's or
    metric's unbatched trace)."""
    return not _graph.UNBATCHED and builtins.any(is_symbolic(x) for x in xs)


def _float(x):
    ops = _ops()
    if is_symbolic(x):
        return x if str(x.dtype).startswith(("float", "bfloat")) else ops.cast(x, "float32")
    a = np.asarray(x)
    return a.astype("float32") if a.dtype != np.float32 else a


def cdist(x, y):
    """keras.ops.cdist: the Euclidean distance between each of x's rows (..., m, d) and each
    of y's (..., n, d), leading axes broadcast, as sqrt(sum((x[..., :, None, :] -
    y[..., None, :, :])²)). In a model: per sample (x (batch, m, d) with y (batch, n, d)),
    or against a constant y (n, d)."""
    xs, ys = _shape(x), _shape(y)
    if len(xs) < 2 or len(ys) < 2:
        raise ValueError(f"Inputs to `cdist` must have rank >= 2. Received shapes: x.shape={xs}, y.shape={ys}")
    if xs[-1] is not None and ys[-1] is not None and xs[-1] != ys[-1]:
        raise ValueError(f"The last dimension of inputs to `cdist` must match. Received shapes: x.shape={xs}, "
                         f"y.shape={ys}")
    if _in_model(x, y) and ((is_symbolic(y) and len(ys) == 2) or (is_symbolic(x) and is_symbolic(y) and len(xs) != len(ys))):
        raise NotImplementedError(
            f"keras.ops.cdist with x.shape={xs}, y.shape={ys} in a model pairs rows of different samples (axis 0 is "
            "the batch): nnfit refuses operations across the batch. Give both the same rank >= 3, (batch, m, d) and "
            "(batch, n, d), or make y a constant array (n, d)")

    def fn(a, b):
        ops = _ops()
        diff = ops.subtract(ops.expand_dims(_float(a), -2), ops.expand_dims(_float(b), -3))
        return ops.sqrt(ops.sum(ops.square(diff), axis=-1))
    return composed("cdist", fn, [x, y])


def corrcoef(x):
    """keras.ops.corrcoef: Pearson's correlation coefficients of x's rows (variables) over
    its columns (observations), as NumPy's np.corrcoef: (N, D) -> (N, N), (D,) -> a scalar;
    clipped to [-1, 1]."""
    shape = _shape(x)
    if _in_model(x):
        raise NotImplementedError(
            "keras.ops.corrcoef on a model's tensor: its rows are the variables, and a model's rows are the batch's "
            "samples, so the result would correlate samples with each other (nnfit refuses operations across the "
            "batch). Call it on arrays, or in a custom loss or metric, where axis 0 is an axis like the others")
    if len(shape) > 2:
        raise ValueError(f"keras.ops.corrcoef takes a 1-D or 2-D tensor (variables in rows), got shape {shape}")

    def fn(a):
        ops = _ops()
        a = _float(a)
        if len(shape) < 2:
            a = ops.expand_dims(a, 0)
        n = _shape(a)[-1]
        centered = ops.subtract(a, ops.mean(a, axis=-1, keepdims=True))
        cov = ops.divide(ops.matmul(centered, ops.transpose(centered)), float(n - 1))
        std = ops.sqrt(ops.diagonal(cov))
        out = ops.clip(ops.divide(cov, ops.multiply(ops.expand_dims(std, 1), ops.expand_dims(std, 0))), -1.0, 1.0)
        return ops.squeeze(out) if len(shape) < 2 else out
    if len(shape) == 0:
        return np.float32(np.nan)  # NumPy's corrcoef of one number
    return composed("corrcoef", fn, [x])


def extract_sequences(x, sequence_length, sequence_stride):
    """keras.ops.extract_sequences: the last axis (N) cut into 1 + (N - sequence_length) //
    sequence_stride frames of sequence_length, (..., N) -> (..., frames, sequence_length):
    one take of a constant index matrix."""
    shape = _shape(x)
    length, stride = int(sequence_length), int(sequence_stride)
    if len(shape) < 1:
        raise ValueError(f"Input should have rank >= 1. Received: input.shape = {shape}")
    if length < 1 or stride < 1:
        raise ValueError(f"keras.ops.extract_sequences: sequence_length and sequence_stride must be positive, got "
                         f"{sequence_length} and {sequence_stride}")
    if shape[-1] is None:
        raise NotImplementedError("keras.ops.extract_sequences on a last axis known only per batch is not supported "
                                  "by nnfit: give the input a fixed length")
    frames = 1 + (shape[-1] - length) // stride
    if frames <= 0:
        if is_symbolic(x):
            raise ValueError(f"keras.ops.extract_sequences: sequence_length {length} is longer than the last axis "
                             f"({shape[-1]}), so there is no frame")
        return np.zeros(tuple(shape[:-1]) + (0, length), np.asarray(x).dtype)
    index = np.arange(frames)[:, None] * stride + np.arange(length)[None, :]
    return _ops().take(x, index, axis=-1)


def isin(x1, x2, assume_unique=False, invert=False):
    """keras.ops.isin: whether each element of x1 equals one of x2's (bool, x1's shape), as
    any(x1[..., None] == x2.ravel()); `assume_unique` does not change the result. x2 is a
    constant (or, in a custom loss or metric, any tensor): in a model a symbolic x2 would be
    flattened across the batch."""
    ops = _ops()
    if _in_model(x2) and is_symbolic(x2):
        raise NotImplementedError(
            "keras.ops.isin with a symbolic x2 in a model: Keras flattens x2 over the whole batch, so each sample's "
            "result would depend on the other samples (nnfit refuses operations across the batch). Pass x2 as a "
            "constant array")
    if not is_symbolic(x1) and not is_symbolic(x2):
        a1, a2 = np.asarray(x1), np.asarray(x2)
        if a1.dtype.kind in "iub" and a2.dtype.kind in "iub":  # exact, as Keras's NumPy backend
            return np.isin(a1, a2, invert=invert)
    values = ops.reshape(x2, (-1,)) if is_symbolic(x2) else np.unique(np.asarray(x2).reshape(-1))
    if not is_symbolic(values) and values.size == 0:
        found = ops.less(ops.abs(x1), -1.0)  # false everywhere, NaN included
    else:
        found = ops.any(ops.equal(ops.expand_dims(x1, -1), values), axis=-1)
    if invert:
        found = call("numpy", "LogicalNot", "logical_not", [found], out_dtype="bool")
    return found


def polar(abs_, angle):
    """keras.ops.polar on arrays: abs_·cos(angle) + i·abs_·sin(angle), complex64, as Keras's
    NumPy backend computes it. nnfit's engine has no complex dtype, so symbolic tensors are
    refused."""
    if is_symbolic(abs_) or is_symbolic(angle):
        raise NotImplementedError(
            "keras.ops.polar on a symbolic tensor: its result is complex, and nnfit's engine has no complex "
            "tensors. Compute the real and imaginary parts as separate tensors: abs_ * ops.cos(angle) and "
            "abs_ * ops.sin(angle)")
    a, t = _float(abs_), _float(angle)
    return (a * np.cos(t) + 1j * (a * np.sin(t))).astype("complex64")


def _flat(tree, what):
    if isinstance(tree, (list, tuple)):
        return list(tree)
    if isinstance(tree, dict):
        raise NotImplementedError(f"keras.ops.jvp: a dict of {what} is not supported by nnfit; give a tuple or list")
    return [tree]


def jvp(fun, primals, tangents, has_aux=False):
    """keras.ops.jvp on arrays: (fun(*primals), J·tangents[, aux]), J the Jacobian of fun at
    primals. nnfit's engine differentiates in reverse mode only, so `fun` (keras.ops calls)
    is traced once into a graph and J·t is built row by row: one backward pass per output
    element, each row dotted with the tangents — exact, but its cost grows with the
    output's size. Outputs: a tensor or a tuple/list of tensors; aux: tensors of the trace
    or constants."""
    if not isinstance(primals, (list, tuple)) or not isinstance(tangents, (list, tuple)):
        raise TypeError("keras.ops.jvp: primals and tangents must be tuples or lists of arguments")
    if len(primals) != len(tangents):
        raise ValueError(f"keras.ops.jvp: {len(primals)} primals but {len(tangents)} tangents")
    if builtins.any(is_symbolic(p) for p in list(primals) + list(tangents)):
        raise NotImplementedError(
            "keras.ops.jvp on symbolic tensors: a model's graph cannot hold a forward-mode derivative, since "
            "nnfit's engine differentiates in reverse mode only. Call ops.jvp on arrays (nnfit computes it there "
            "from reverse-mode gradients), or train on a loss whose gradient the model's backward pass computes")
    arrays = [np.asarray(p) for p in primals]
    for i, (p, t) in enumerate(zip(arrays, tangents)):
        if np.shape(t) != p.shape:
            raise ValueError(f"keras.ops.jvp: tangent {i} has shape {np.shape(t)}, its primal {p.shape}")
    structure = {}

    def traced(*inputs):
        result = fun(*inputs)
        if has_aux:
            if not isinstance(result, (list, tuple)) or len(result) != 2:
                raise ValueError("keras.ops.jvp with has_aux=True: fun must return a pair (output, aux)")
            result, aux = result
            structure["aux"] = aux
        structure["out"] = result
        outs = _flat(result, "outputs")
        aux_flat = _flat(structure.get("aux"), "aux") if has_aux else []
        structure["aux_symbolic"] = [is_symbolic(a) for a in aux_flat]
        returned = outs + [a for a in aux_flat if is_symbolic(a)]
        structure["shapes"] = [tuple(t.shape) for t in returned]
        return returned

    text, inputs = _operation.trace_graph("jvp", traced, arrays)
    engine = _operation._engine()
    values, _ = engine.run_operations(text, inputs)
    n_out = len(_flat(structure["out"], "outputs"))
    outs, aux_values = values[:n_out], values[n_out:]
    t_flat = [np.asarray(t, "float64").reshape(-1) for t in tangents]
    tangents_out = []
    for k, out in enumerate(outs):
        row_tangents = np.zeros(out.size, "float64")
        for i in range(out.size):
            cotangents = [np.zeros(o.shape, "float32") for o in values]
            cotangents[k].reshape(-1)[i] = 1.0
            _, grads = engine.run_operations(text, inputs, cotangents)
            row_tangents[i] = builtins.sum(float(np.dot(np.asarray(g, "float64").reshape(-1), t))
                                           for g, t in zip(grads, t_flat))
        tangents_out.append(row_tangents.astype(out.dtype))
    # The engine runs a rank-0 tensor as shape (1,): results take the trace's shapes.
    outs = [np.asarray(o).reshape(s) for o, s in zip(outs, structure["shapes"])]
    tangents_out = [t.reshape(s) for t, s in zip(tangents_out, structure["shapes"])]
    aux_values = [np.asarray(a).reshape(s) for a, s in zip(aux_values, structure["shapes"][n_out:])]
    if isinstance(structure["out"], (list, tuple)):
        primal_result, tangent_result = type(structure["out"])(outs), type(structure["out"])(tangents_out)
    else:
        primal_result, tangent_result = outs[0], tangents_out[0]
    if not has_aux:
        return primal_result, tangent_result
    aux = structure["aux"]
    aux_iter = iter(aux_values)
    aux_flat = [next(aux_iter) if s else a for a, s in zip(_flat(aux, "aux"), structure["aux_symbolic"])]
    aux_result = type(aux)(aux_flat) if isinstance(aux, (list, tuple)) else aux_flat[0]
    return primal_result, tangent_result, aux_result
