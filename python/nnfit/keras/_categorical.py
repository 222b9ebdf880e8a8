"""Keras's categorical preprocessing layers on NumPy: CategoryEncoding, Hashing,
HashedCrossing and Discretization, and the encoding of category indices they share with the
lookup layers (keras/src/utils/numerical_utils.py's encode_categorical_inputs, with
TensorFlow's bincount for inputs of rank 2 or less, as Keras on TensorFlow runs it).

Discretization's adapt is ported from Keras 3.15's discretization.py (Apache License 2.0,
Copyright The Keras Authors): it is NumPy there too, so its boundaries are Keras's.
"""
import numpy as np

from nnfit.keras import _hashing
from nnfit.keras._preprocessing import PreprocessingLayer, adapt_batches, register, to_numpy

_ENCODINGS = ("one_hot", "multi_hot", "count")


def encode(indices, output_mode, depth, dtype="float32", count_weights=None):
    """Category indices as Keras encodes them: "int" as they are (cast); "one_hot" a depth
    axis per index (a last axis of 1 replaced), zeros for an index outside [0, depth);
    "multi_hot" and "count" over the last axis (TensorFlow's bincount: an index outside
    [0, depth) is not counted); of rank 3 and more, over axis 1, as keras.ops does."""
    indices = np.asarray(indices)
    if output_mode == "int":
        return indices.astype(dtype)
    if indices.ndim == 0:
        indices = indices[None]
    if output_mode == "one_hot":
        if indices.ndim > 1 and indices.shape[-1] == 1:
            indices = indices[..., 0]
        return _one_hot(indices, depth, dtype)
    if indices.ndim <= 2:
        if indices.size and indices.min() < 0:
            raise ValueError(f"Input 'in' must be non-negative! Negative input value found: {int(indices.min())} "
                             "(TensorFlow's bincount, which Keras's multi_hot and count encodings run)")
        flat = indices.reshape(-1, indices.shape[-1]) if indices.ndim == 2 else indices[None]
        out = np.zeros((flat.shape[0], depth), dtype=np.float64)
        valid = (flat >= 0) & (flat < depth)
        rows = np.broadcast_to(np.arange(flat.shape[0])[:, None], flat.shape)
        if output_mode == "multi_hot":
            out[rows[valid], flat[valid]] = 1
        else:
            weights = np.ones(flat.shape) if count_weights is None else np.asarray(count_weights,
                                                                                   np.float64).reshape(flat.shape)
            np.add.at(out, (rows[valid], flat[valid]), weights[valid])
        out = out.astype(dtype)
        return out if indices.ndim == 2 else out[0]
    hot = _one_hot(indices, depth, dtype)
    if output_mode == "multi_hot":
        return hot.max(axis=1)
    if count_weights is not None:
        hot = hot * np.asarray(count_weights, dtype)[..., None]
    return hot.sum(axis=1).astype(dtype)


def _one_hot(indices, depth, dtype):
    out = np.zeros(indices.shape + (depth,), dtype=dtype)
    valid = (indices >= 0) & (indices < depth)
    idx = np.nonzero(valid)
    out[idx + (indices[valid],)] = 1
    return out


def encoded_shape(shape, output_mode, depth):
    """The output shape of encode() for an input shape (batch axis first)."""
    shape = tuple(shape)
    if output_mode == "int":
        return shape
    if not shape:
        return (depth,)
    if output_mode == "one_hot":
        return (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (depth,)
    if len(shape) > 2:
        return (shape[0],) + shape[2:] + (depth,)
    return shape[:-1] + (depth,)


def _check_mode(layer, mode, allowed):
    if mode not in allowed:
        raise ValueError(f"Invalid value for argument `output_mode`. Expected one of {allowed}. "
                         f"Received: output_mode={mode}")


def _check_sparse(cls, sparse):
    if sparse:
        raise NotImplementedError(f"{cls}: sparse=True is not supported by nnfit (its outputs are dense NumPy "
                                  "arrays); use sparse=False")


@register
class CategoryEncoding(PreprocessingLayer):
    """Keras's keras.layers.CategoryEncoding: integer category indices encoded as one-hot,
    multi-hot or count vectors of num_tokens."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, name=None, dtype=None,
                 trainable=True, **kwargs):
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in _ENCODINGS:
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        _check_sparse("CategoryEncoding", sparse)
        _no_kwargs("CategoryEncoding", kwargs)
        self._init_layer(name, dtype, trainable=trainable)
        self.num_tokens, self.output_mode, self.sparse = int(num_tokens), output_mode, bool(sparse)

    def get_config(self):
        return {**self._base_config(), "num_tokens": self.num_tokens, "output_mode": self.output_mode}

    def compute_output_spec_of(self, spec):
        return encoded_shape(spec[0], self.output_mode, self.num_tokens), self._policy

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not `'count'`. "
                             f"Received `count_weights={count_weights}`.")
        return encode(to_numpy(inputs), self.output_mode, self.num_tokens, self._policy, count_weights)


@register
class Hashing(PreprocessingLayer):
    """Keras's keras.layers.Hashing: values hashed into num_bins bins with TensorFlow's
    FarmHash Fingerprint64 (a salt: keyed SipHash-2-4), integers and floats (cast to int64)
    hashed as their decimal text."""

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, name=None, dtype=None,
                 trainable=True, **kwargs):
        _no_kwargs("Hashing", kwargs)
        self._init_layer(name, dtype, default_dtype="int64" if output_mode == "int" else "float32",
                         trainable=trainable)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. "
                             f"Received: num_bins={num_bins}.")
        if output_mode == "int" and self._policy not in ("int32", "int64"):
            raise ValueError(f"When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or 'in64'. "
                             f"Received: dtype={dtype}")
        _check_mode(self, output_mode, ("int",) + _ENCODINGS)
        _check_sparse("Hashing", sparse)
        self.num_bins, self.mask_value, self.output_mode, self.sparse = int(num_bins), mask_value, output_mode, False
        self.salt = None
        if salt is not None:
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                self.salt = list(salt)
            elif isinstance(salt, int):
                self.salt = [salt, salt]
            else:
                raise ValueError("The `salt` argument for `Hashing` can only be a tuple of size 2 integers, or a "
                                 f"single integer. Received: salt={salt}.")
        self.strong_hash = self.salt is not None

    def get_config(self):
        return {**self._base_config(), "num_bins": self.num_bins, "salt": self.salt, "mask_value": self.mask_value,
                "output_mode": self.output_mode, "sparse": self.sparse}

    def compute_output_spec_of(self, spec):
        shape = tuple(spec[0])
        if self.output_mode == "int":
            return shape, self._policy
        return (shape[:-1] + (self.num_bins,)) if shape else (self.num_bins,), self._policy

    def call(self, inputs):
        values = _values(inputs)
        if self.output_mode == "one_hot" and values.ndim and values.shape[-1] == 1:
            values = values[..., 0]
        bins = hash_to_bins(values, self.num_bins, self.mask_value, self.salt)
        return encode(bins, self.output_mode, self.num_bins, self._policy)


def _values(inputs):
    """Inputs of strings or numbers as a NumPy array (strings as str)."""
    a = to_numpy(inputs) if not isinstance(inputs, (list, tuple)) else np.asarray(inputs)
    if a.dtype.kind in "OS":
        from nnfit.keras._preprocessing import as_strings
        a = as_strings(a)
    return a


def hash_to_bins(values, num_bins, mask_value=None, salt=None):
    """Keras's Hashing._hash_values_to_bins on a NumPy array: int64 bin indices."""
    values = np.asarray(values)
    bins = num_bins
    mask = None
    if mask_value is not None and bins > 1:
        bins -= 1
        mask = values == mask_value
    if values.dtype.kind == "f":
        values = values.astype(np.int64)
    flat = values.ravel().tolist()
    hashed = _hashing.bucket_strong(flat, bins, salt) if salt is not None else _hashing.bucket_fast(flat, bins)
    out = np.array(hashed, dtype=np.int64).reshape(values.shape)
    if mask is not None:
        out = np.where(mask, 0, out + 1)
    return out


@register
class HashedCrossing(PreprocessingLayer):
    """Keras's keras.layers.HashedCrossing: two or more categorical features crossed into
    num_bins bins as tf.sparse.cross_hashed does (FingerprintCat64 from 0xDECAFCAFFE over
    each value: a string's Fingerprint64, an integer itself)."""

    _KEY = 0xDECAFCAFFE

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None, trainable=True, **kwargs):
        _no_kwargs("HashedCrossing", kwargs)
        self._init_layer(name, dtype, default_dtype="int64" if output_mode == "int" else "float32",
                         trainable=trainable)
        _check_sparse("HashedCrossing", sparse)
        if output_mode not in ("int", "one_hot"):
            raise ValueError("Invalid value for argument `output_mode`. Expected one of ('int', 'one_hot'). "
                             f"Received: output_mode={output_mode}")
        self.num_bins, self.output_mode, self.sparse = int(num_bins), output_mode, False

    def get_config(self):
        return {"num_bins": self.num_bins, "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name,
                "dtype": self._policy}

    def compute_output_spec_of(self, specs):
        if not isinstance(specs, list) or len(specs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: {specs}")
        shape = tuple(specs[0][0])
        if self.output_mode == "int":
            return shape, self._policy
        return (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (self.num_bins,), self._policy

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on at least two inputs. Received: inputs={inputs}")
        arrays = [_values(x) for x in inputs]
        shape = arrays[0].shape
        if len(shape) > 2 or (len(shape) == 2 and shape[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or `(batch_size, 1)`. "
                             f"Received: inputs={inputs}")
        if any(a.shape != shape for a in arrays[1:]):
            raise ValueError(f"All `HashedCrossing` inputs should have equal shape. Received: inputs={inputs}")
        if any(a.dtype.kind not in "iuU" for a in arrays):
            raise ValueError(f"All `HashedCrossing` inputs should have an integer or string dtype. Received: "
                             f"inputs={inputs}")
        columns = [[_hashing.fingerprint64(v.encode("utf-8")) if a.dtype.kind == "U" else int(v) & _hashing._M
                    for v in a.ravel().tolist()] for a in arrays]
        crossed = []
        for row in zip(*columns):
            h = self._KEY
            for feature in row:
                h = _hashing.fingerprint_cat64(h, feature)
            crossed.append(h % self.num_bins)
        out = np.array(crossed, dtype=np.int64).reshape(shape)
        return encode(out, self.output_mode, self.num_bins, self._policy)


@register
class Discretization(PreprocessingLayer):
    """Keras's keras.layers.Discretization: values bucketed by bin_boundaries (or by
    num_bins quantile boundaries learnt by adapt), as TensorFlow's Bucketize."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False, dtype=None,
                 name=None, trainable=True):
        self._init_layer(name, dtype, trainable=trainable)
        _check_sparse("Discretization", sparse)
        _check_mode(self, output_mode, ("int",) + _ENCODINGS)
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = list(bin_boundaries) if bin_boundaries is not None else None
        self.num_bins, self.epsilon, self.output_mode, self.sparse = num_bins, epsilon, output_mode, False
        self.summary = None if self.bin_boundaries else np.array([[], []], dtype="float32")

    @property
    def output_dtype(self):
        return self._policy if self.output_mode != "int" else "int32"

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name, "dtype": self._policy}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            boundaries = config.pop("bin_boundaries")  # adapted: both are set, as Keras writes them
            layer = cls(**config)
            layer.bin_boundaries = boundaries
            return layer
        return cls(**config)

    def compute_output_spec_of(self, spec):
        shape = tuple(spec[0])
        if self.output_mode == "int":
            return shape, self.output_dtype
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            return (shape[:-1] if shape and shape[-1] == 1 and len(shape) > 1 else shape) + (depth,), self.output_dtype
        if len(shape) >= 2:
            return (shape[0],) + shape[2:] + (depth,), self.output_dtype
        return (depth,), self.output_dtype

    def adapt(self, data, steps=None):
        """Keras's: quantile boundaries of `data` (an array, a dataset or batches)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                             "use `num_bins` instead.")
        self.reset_state()
        batches, _ = adapt_batches(data, steps, "Discretization")
        for batch in batches:
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        data = np.array(to_numpy(data)).astype("float32")
        self.summary = _merge_summaries(_summarize(data, self.epsilon), self.summary, self.epsilon)

    def finalize_state(self):
        if self.num_bins is None:
            return
        self.bin_boundaries = _compress_summary(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def reset_state(self):
        if self.num_bins is not None:
            self.summary = np.array([[], []], dtype="float32")

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at construction time or call "
                             "`adapt(dataset)` before you can start using the `Discretization` layer.")
        x = to_numpy(inputs)
        # TF's Bucketize holds float32 boundaries and compares each value with them exactly.
        boundaries = np.asarray(self.bin_boundaries, dtype=np.float32).astype(np.float64)
        indices = np.searchsorted(boundaries, x.astype(np.float64), side="right")
        return encode(indices.astype(np.int32), self.output_mode, len(self.bin_boundaries) + 1, self.output_dtype)


def _summarize(values, epsilon):
    values = np.sort(np.reshape(values, [-1]))
    num_buckets = 1.0 / epsilon
    step = max(np.size(values) / num_buckets, 1)
    boundaries = values[int(step - 1)::int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _merge_summaries(prev, nxt, epsilon):
    merged = np.concatenate((prev, nxt), axis=1)
    merged = np.take(merged, np.argsort(merged[0]), axis=1)
    return _compress_summary(merged, epsilon)


def _compress_summary(summary, epsilon):
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_weight_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_weight_percents, summary[0])
    cum_weights = np.interp(percents, cum_weight_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")


def _no_kwargs(cls, kwargs):
    kwargs = {k: v for k, v in kwargs.items() if k not in ("autocast",) or v is not True}
    if kwargs:
        raise ValueError(f"{cls}: unrecognized keyword argument(s): {kwargs}")
