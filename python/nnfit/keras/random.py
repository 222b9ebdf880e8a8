"""keras.random on nnfit: Keras 3's random functions and SeedGenerator, eager, on NumPy.

Seeds work as Keras's (keras/src/random/seed_generator.py, Apache License 2.0, Copyright The
Keras Authors; its seed logic is ported): an integer seed gives the same values every call,
a SeedGenerator's state [seed, counter] advances by one per call, and no seed draws from a
global generator that keras.utils.set_random_seed remakes. Each draw is a counter-based
Philox stream keyed by that state (TensorFlow's stateless ops are Philox too), so the
values are not TensorFlow's; shapes, dtypes, distributions and errors are Keras's. Inside a
traced layer call, normal, uniform and truncated_normal of shape (batch, ...) are the
engine's draws, new every step (Note [Random draws in traced calls]); the other functions,
and draws elsewhere on symbolic tensors, raise NotImplementedError naming them.
"""
import random as _python_random

import numpy as np

from nnfit.keras import _graph, _state, _tracing
from nnfit.keras.backend import floatx

_FLOATS = ("float16", "float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


class SeedGenerator:
    """Keras's keras.random.SeedGenerator: a seed state [seed, counter] (int64) that each
    random call given it reads and advances; ``seed=None`` picks one from Python's
    generator (seeded by keras.utils.set_random_seed)."""

    def __init__(self, seed=None, name=None, **kwargs):
        self.name = name if name is not None else _state.unique_name("seed_generator")
        kwargs.pop("backend", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        self._initial_seed = seed
        if seed is None:
            seed = _python_random.randint(1, int(1e9))
        if not isinstance(seed, (int, np.integer)):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
        self._value = np.array([int(seed), 0], dtype="int64")

    @property
    def state(self):
        from nnfit.keras._weights import Variable
        return Variable(self._value, f"{self.name}/seed_generator_state", False)

    def next(self, ordered=True):
        """The current state; then the counter advances (``ordered``) or the state is
        scrambled as Keras's global generator does."""
        value = self._value.copy()
        if ordered:
            self._value = self._value + np.array([0, 1], dtype="int64")
        else:
            self._value = (self._value + 1) * 5387 % 933199
        return value

    def get_config(self):
        return {"seed": self._initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<SeedGenerator name={self.name}, state={self._value.tolist()}>"


_global_generator = None


def _reset_global_generator():
    """keras.utils.set_random_seed's: the global generator is remade from the new seed."""
    global _global_generator
    _global_generator = None


def _draw_seed(seed):
    global _global_generator
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if isinstance(seed, (int, np.integer)):
        return np.array([int(seed), 0], dtype="int64")
    if seed is None:
        if _global_generator is None:
            _global_generator = SeedGenerator()
        return _global_generator.next(ordered=False)
    raise ValueError("Argument `seed` must be either an integer or an instance of `SeedGenerator`. "
                     f"Received: seed={seed} (of type {type(seed)})")


def _rng(seed):
    key = np.array([int(s) & 0xFFFFFFFFFFFFFFFF for s in _draw_seed(seed)], dtype=np.uint64)
    return np.random.Generator(np.random.Philox(key=key))


def _eager(fn, *values):
    """NotImplementedError naming keras.random.`fn` for symbolic arguments or a traced call."""
    flat = []
    for v in values:
        flat.extend(v if isinstance(v, (list, tuple)) else [v])
    if any(isinstance(v, _graph.KerasTensor) for v in flat) or _tracing.current_trace() is not None:
        traced = "in a traced layer call" if _tracing.current_trace() is not None else "on symbolic tensors"
        raise NotImplementedError(
            f"keras.random.{fn} {traced} is not supported by nnfit (normal, uniform and truncated_normal are, "
            "in a Layer subclass's call, with shape=(batch, ...) and number arguments); call keras.random."
            f"{fn} on arrays outside the model")


_TRACED_CLASSES = {"normal": "RandomNormal", "uniform": "RandomUniform", "truncated_normal": "RandomTruncatedNormal"}


def _traced(fn, shape, offset, scale, dtype, seed):
    """A draw inside a traced layer call (Note [Random draws in traced calls] in
    src/nn/layers/random_operations.cpp): offset + scale·draw of `shape`, whose first size is
    the batch's (None: ``ops.shape(x)[0]`` of a symbolic tensor), drawn anew every step by
    the engine. None when not in a traced call."""
    if _tracing.current_trace() is None:
        return None
    where = f"keras.random.{fn}"
    from nnfit.keras.ops import _dims
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    shape = tuple(None if _dims.is_batch(d) else d for d in shape)  # ops.shape(x)[0]: the batch size
    if _dims.has_dim(shape):
        _dims.refuse(f"{where}(shape=...) in a traced call with a size other than the batch's")
    if any(isinstance(v, _graph.KerasTensor) for v in (offset, scale) + shape):
        raise NotImplementedError(f"{where} in a traced call: its shape and its numbers (mean, stddev, minval, maxval) "
                                  "must be Python numbers in nnfit (the batch size as None: ops.shape(x)[0])")
    if not shape or shape[0] is not None or any(d is None for d in shape[1:]):
        raise NotImplementedError(f"{where}(shape={shape}) in a traced call: nnfit draws per batch, so the shape must be "
                                  "(batch, ...) with the batch size from a symbolic tensor (ops.shape(x)[0]) and the "
                                  "other sizes known")
    if _dtype(fn, dtype, _FLOATS, "a floating point", TypeError) != "float32":
        raise NotImplementedError(f"{where} in a traced call: nnfit draws float32 (cast the result)")
    state = _draw_seed(seed)  # a SeedGenerator advances: each draw its own numbers
    node_seed = (int(state[0]) * 1000003 + int(state[1]) * 7919 + 1) & 0x3FFFFFFFFFFFFFFF
    base = _tracing.batched_constant(np.full(tuple(int(d) for d in shape[1:]), float(offset), "float32"), where)
    from nnfit.keras.ops import _operation
    return _operation.call("keras.src.random.random", _TRACED_CLASSES[fn], fn, [base],
                           config={"scale": float(scale), "seed": node_seed})


def _dtype(fn, dtype, kinds, kind_name, error=ValueError):
    name = floatx() if dtype is None else np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name == "bfloat16":
        raise NotImplementedError(f"keras.random.{fn}: dtype bfloat16 is not supported by nnfit (NumPy has no "
                                  "bfloat16); draw float32 and cast where it is used")
    if name not in kinds:
        raise error(f"`keras.random.{fn}` requires {kind_name} `dtype`. Received: dtype={dtype}")
    return name


def _shape(fn, shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if any(d is None for d in shape):  # a symbolic tensor's shape: its batch size is known per batch only
        raise ValueError(f"keras.random.{fn}: the shape must be fully known, got {tuple(shape)} (a symbolic "
                         "tensor's shape?); random draws run on arrays only in nnfit")
    return tuple(int(d) for d in shape)


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Keras's: values from a normal distribution, `dtype` (default floatx) of `shape`."""
    traced = _traced("normal", shape, mean, stddev, dtype, seed)
    if traced is not None:
        return traced
    _eager("normal", shape, mean, stddev)
    dtype = _dtype("normal", dtype, _FLOATS, "a floating point", TypeError)
    return _rng(seed).normal(mean, stddev, size=_shape("normal", shape)).astype(dtype)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Keras's: values uniform in [minval, maxval)."""
    traced = _traced("uniform", shape, minval, maxval - minval if not isinstance(maxval, _graph.KerasTensor) else maxval,
                     dtype, seed)
    if traced is not None:
        return traced
    _eager("uniform", shape, minval, maxval)
    dtype = _dtype("uniform", dtype, _FLOATS, "a floating point")
    return _rng(seed).uniform(minval, maxval, size=_shape("uniform", shape)).astype(dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Keras's: a normal distribution with values beyond two standard deviations redrawn."""
    traced = _traced("truncated_normal", shape, mean, stddev, dtype, seed)
    if traced is not None:
        return traced
    _eager("truncated_normal", shape, mean, stddev)
    dtype = _dtype("truncated_normal", dtype, _FLOATS, "a floating point", TypeError)
    rng = _rng(seed)
    z = rng.standard_normal(size=_shape("truncated_normal", shape))
    bad = np.abs(z) > 2.0
    while bad.any():
        z[bad] = rng.standard_normal(size=int(bad.sum()))
        bad = np.abs(z) > 2.0
    return (np.asarray(mean) + np.asarray(stddev) * z).astype(dtype)


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Keras's: integers uniform in [minval, maxval)."""
    _eager("randint", shape, minval, maxval)
    if dtype is None:
        raise ValueError("`keras.random.randint` requires an integer `dtype`. Received: dtype=None")
    dtype = _dtype("randint", dtype, _INTS, "an integer")
    if np.any(np.asarray(minval) >= np.asarray(maxval)):
        raise ValueError(f"keras.random.randint: minval must be less than maxval, got minval={minval}, "
                         f"maxval={maxval}")
    out = _rng(seed).integers(minval, maxval, size=_shape("randint", shape), dtype="int64")
    return out.astype(dtype)


def shuffle(x, axis=0, seed=None):
    """Keras's: `x` with its entries along `axis` in a random order."""
    _eager("shuffle", x)
    x = np.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"keras.random.shuffle: axis {axis} is out of range for an array of shape {x.shape}")
    return np.take(x, _rng(seed).permutation(x.shape[axis]), axis=axis)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Keras's: each entry kept with probability 1 - rate and scaled by 1 / (1 - rate);
    `noise_shape` (None entries: the inputs') broadcasts one draw along axes of size 1."""
    _eager("dropout", inputs, noise_shape or ())
    x = np.asarray(inputs)
    if rate == 1.0:
        return np.zeros_like(x)
    if rate == 0.0:
        return x
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. "
                         f"Received: x_dtype={x.dtype}")
    if not 0 <= rate < 1:
        raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
    shape = x.shape if noise_shape is None else tuple(
        x.shape[i] if d is None else int(d) for i, d in enumerate(noise_shape))
    keep = _rng(seed).uniform(size=shape) >= rate
    return (x * x.dtype.type(1.0 / (1.0 - rate)) * keep).astype(x.dtype)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Keras's: `num_samples` class indices per row of the (batch, classes) `logits`."""
    _eager("categorical", logits)
    logits = np.asarray(logits, dtype="float64")
    if logits.ndim != 2:
        raise ValueError("`logits` should be a 2-D tensor with shape [batch_size, num_classes]. "
                         f"Received: logits={logits}")
    dtype = _dtype("categorical", dtype, _INTS, "an integer")
    gumbel = _rng(seed).gumbel(size=(logits.shape[0], int(num_samples), logits.shape[1]))
    return np.argmax(logits[:, None, :] + gumbel, axis=-1).astype(dtype)  # the Gumbel-max draw


def gamma(shape, alpha, dtype=None, seed=None):
    """Keras's: values from a gamma distribution of concentration `alpha` (scale 1)."""
    _eager("gamma", shape, alpha)
    dtype = _dtype("gamma", dtype, _FLOATS, "a floating point", TypeError)
    return _rng(seed).standard_gamma(alpha, size=_shape("gamma", shape)).astype(dtype)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Keras's: successes in `counts` trials of probability `probabilities`, as `dtype`
    (default floatx)."""
    _eager("binomial", shape, counts, probabilities)
    dtype = _dtype("binomial", dtype, _FLOATS + _INTS, "a numeric")
    counts = np.asarray(counts).astype("int64")
    return _rng(seed).binomial(counts, probabilities, size=_shape("binomial", shape)).astype(dtype)


def beta(shape, alpha, beta, dtype=None, seed=None):
    """Keras's: values from a beta distribution, Gamma(alpha) / (Gamma(alpha) + Gamma(beta))."""
    _eager("beta", shape, alpha, beta)
    dtype = _dtype("beta", dtype, _FLOATS, "a floating point", TypeError)
    rng = _rng(seed)
    shape = _shape("beta", shape)
    gamma_a = rng.standard_gamma(np.broadcast_to(alpha, shape)).astype(dtype)
    gamma_b = rng.standard_gamma(np.broadcast_to(beta, shape)).astype(dtype)
    return gamma_a / (gamma_a + gamma_b)


__all__ = ["SeedGenerator", "beta", "binomial", "categorical", "dropout", "gamma", "normal", "randint", "shuffle",
           "truncated_normal", "uniform"]
