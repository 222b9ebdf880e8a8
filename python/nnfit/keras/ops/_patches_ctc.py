"""keras.ops.unfold and fold (PyTorch's im2col and col2im, channels first) on the engine
(Keras's Unfold and Fold nodes; src/nn/layers/operation_image_emitters.cpp), and
ctc_loss and ctc_decode on arrays only, in NumPy, as Keras's TensorFlow backend computes
them (tf.nn.ctc_loss on logits; tf.nn.ctc_greedy_decoder): CTC's recursion over time has no
engine op, so a symbolic tensor is refused naming the function.
"""
import numpy as np

from nnfit.keras.ops._operation import call, is_symbolic

__all__ = ["unfold", "fold", "ctc_loss", "ctc_decode"]


def _pair_json(v):
    return list(v) if isinstance(v, (tuple, list)) else v


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """keras.ops.unfold: (N, C, H, W) -> (N, C·kh·kw, L)."""
    if len(getattr(x, "shape", np.shape(x))) != 4:
        raise ValueError(f"keras.ops.unfold: input must be a 4D tensor, got shape {tuple(np.shape(x))}")
    return call("nn", "Unfold", "unfold", [x], {"kernel_size": _pair_json(kernel_size), "dilation": _pair_json(dilation),
                                                "padding": _pair_json(padding), "stride": _pair_json(stride)})


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """keras.ops.fold: (N, C·kh·kw, L) -> (N, C, oh, ow), overlapping patches summed."""
    if len(getattr(x, "shape", np.shape(x))) != 3:
        raise ValueError(f"keras.ops.fold: input must be a 3D tensor, got shape {tuple(np.shape(x))}")
    return call("nn", "Fold", "fold", [x], {"output_size": _pair_json(output_size), "kernel_size": _pair_json(kernel_size),
                                            "dilation": _pair_json(dilation), "padding": _pair_json(padding),
                                            "stride": _pair_json(stride)})


def _arrays_only(name, *xs):
    if any(is_symbolic(x) for x in xs):
        raise NotImplementedError(f"keras.ops.{name} works on arrays only in nnfit (CTC's recursion over time has no "
                                  "engine op): call it on arrays")


def _logsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m, axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """keras.ops.ctc_loss: the negative log-likelihood of each target under the logits
    `output` (batch, time, classes), blank `mask_index` (tf.nn.ctc_loss's)."""
    _arrays_only("ctc_loss", target, output, target_length, output_length)
    target = np.asarray(target).astype("int64")
    logits = np.asarray(output, "float64")
    if logits.ndim != 3 or target.ndim != 2:
        raise ValueError(f"keras.ops.ctc_loss: output must be (batch, time, classes) and target (batch, length), got "
                         f"{logits.shape} and {target.shape}")
    target_length = np.asarray(target_length).astype("int64").reshape(-1)
    output_length = np.asarray(output_length).astype("int64").reshape(-1)
    blank = mask_index % logits.shape[-1]
    logp = logits - _logsumexp(logits, -1)[..., None]
    out = np.zeros(logits.shape[0])
    for b in range(logits.shape[0]):
        labels = target[b, :target_length[b]]
        steps = int(output_length[b])
        ext = np.full(2 * len(labels) + 1, blank)
        ext[1::2] = labels
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = logp[b, 0, blank]
        if len(ext) > 1:
            alpha[1] = logp[b, 0, ext[1]]
        skip = np.zeros(len(ext), bool)
        skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
        for t in range(1, steps):
            prev1 = np.concatenate([[-np.inf], alpha])[:len(alpha)]
            prev2 = np.where(skip, np.concatenate([[-np.inf, -np.inf], alpha])[:len(alpha)], -np.inf)
            alpha = _logsumexp(np.stack([alpha, prev1, prev2]), 0) + logp[b, t, ext]
        out[b] = -_logsumexp(alpha[-2:] if len(ext) > 1 else alpha[-1:], 0)
    return out.astype("float32")


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1, merge_repeated=True,
               mask_index=0):
    """keras.ops.ctc_decode with strategy "greedy" (tf.nn.ctc_greedy_decoder): the first
    argmax per step within each sequence length, repeats merged and blanks dropped;
    returns (decoded (1, batch, steps) padded with -1, scores (batch, 1): minus the sum
    of the steps' maxima)."""
    _arrays_only("ctc_decode", inputs, sequence_lengths)
    if strategy == "beam_search":
        raise NotImplementedError("keras.ops.ctc_decode(strategy=\"beam_search\") is not supported by nnfit yet: use "
                                  "strategy=\"greedy\"")
    if strategy != "greedy":
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and 'beam_search'.")
    x = np.asarray(inputs, "float32")
    lengths = np.asarray(sequence_lengths).astype("int64").reshape(-1)
    n, steps, classes = x.shape
    blank = mask_index % classes if mask_index is not None else classes - 1
    decoded = np.full((1, n, steps), -1, "int32")
    scores = np.zeros((n, 1), "float32")
    for b in range(n):
        best = np.argmax(x[b, :lengths[b]], axis=-1)
        scores[b, 0] = -np.sum(np.max(x[b, :lengths[b]], axis=-1), dtype="float32")
        out, prev = [], -1
        for k in best:
            if k != blank and not (merge_repeated and k == prev):
                out.append(k)
            prev = k
        decoded[0, b, :len(out)] = out
    return decoded, scores
