"""Normalization.adapt: the mean and variance of data over the layer's reduced axes, set as
the layer's weights (mean, variance; count is left as Keras leaves it).

Ported from Keras 3.15's keras/src/layers/preprocessing/normalization.py (Apache License
2.0, Copyright The Keras Authors): an array is reduced at once with NumPy (as Keras does for
NumPy input); batches (an nnfit.data.Dataset, a keras.utils.PyDataset, any iterable of
arrays or (x, y[, sample_weight]) tuples) are merged one by one in float32 with Keras's
weighted mean and lack-of-fit variance update, so the results are Keras's.
"""
import itertools
import math

import numpy as np


def _axes(layer):
    axis = layer._args.get("axis", -1)
    if axis is None:
        return ()
    if isinstance(axis, (int, np.integer)):
        return (int(axis),)
    return tuple(int(a) for a in axis)


def _extract_batch(batch):
    return batch[0] if isinstance(batch, tuple) else batch


def _batches(data):
    """(input shape, iterable of batches or None for one array, the array or None)."""
    from nnfit.data import Dataset
    from nnfit.keras.utils import PyDataset

    if isinstance(data, np.ndarray):
        return tuple(data.shape), None, data
    if isinstance(data, Dataset):
        batched = False
        for stage in data._stages:
            batched = True if "batch" in stage else False if "unbatch" in stage else batched
        if not batched:  # rows, batched by 128 as Keras batches a tf.data.Dataset of rows
            data = data.batch(128)
        it = data.as_numpy_iterator()
        first = next(it, None)
        if first is None:
            raise ValueError("Normalization.adapt(): the dataset yields no batches")
        first = _extract_batch(first)
        return tuple(np.shape(first)), (_extract_batch(b) for b in itertools.chain([first], it)), None
    if isinstance(data, PyDataset):
        return (tuple(np.shape(_extract_batch(data[0]))),
                (_extract_batch(data[i]) for i in range(data.num_batches)), None)
    if hasattr(data, "__iter__"):
        it = iter(data)
        first = next(it, None)
        if first is None:
            raise ValueError("adapt() received an empty iterable (no batches). Expected at least one batch. Pass a "
                             "non-empty iterable of arrays or tensors, e.g. layer.adapt([x]) or "
                             "layer.adapt(list_of_batches).")
        first = _extract_batch(first)
        if getattr(first, "shape", None) is None:
            raise TypeError("adapt() expects an iterable that yields arrays or tensors with a `.shape` attribute "
                            f"(e.g. numpy arrays or backend tensors). Got an element of type {type(first).__name__}. "
                            "Ensure each yielded element is array-like with a `.shape` attribute.")
        return tuple(first.shape), (_extract_batch(b) for b in itertools.chain([first], it)), None
    raise TypeError(f"Unsupported data type: {type(data)}. `adapt` supports `np.ndarray`, `nnfit.data.Dataset`, "
                    "`keras.utils.PyDataset`, and iterables of batches (e.g. list, generator).")


def adapt(layer, data):
    """Keras's Normalization.adapt(data) on nnfit's layer `layer`."""
    where = f"Normalization {layer.name!r}"
    if layer._args.get("mean") is not None:
        raise ValueError(f"{where}: adapt() on a layer given `mean` and `variance` (they are constants of its "
                         "config); make the layer without them to adapt it")
    input_shape, batches, array = _batches(data)
    ndim = len(input_shape)
    axes = _axes(layer)
    if any(a < -ndim or a >= ndim for a in axes):
        raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with ndim={ndim}, "
                         f"while axis={axes}")
    keep = tuple(sorted(d if d >= 0 else d + ndim for d in axes))
    if 0 in keep:
        raise NotImplementedError(f"{where}: a mean and variance per position of the batch axis (axis 0) is not "
                                  "supported by nnfit; keep other axes")
    reduce = tuple(d for d in range(ndim) if d not in keep)
    stats_shape = tuple(input_shape[d] for d in keep)

    if not layer.built:
        layer.build((None,) + tuple(input_shape[1:]))
    held = layer.get_weights()
    if tuple(held[0].shape) != stats_shape:
        raise ValueError(f"{where}: the layer was built for a mean and variance of shape {tuple(held[0].shape)}, "
                         f"but adapt() is being called with data of an incompatible shape, data.shape={input_shape}")

    if array is not None:
        total_mean = np.mean(array, axis=reduce)
        total_var = np.var(array, axis=reduce)
    else:
        total_mean = np.zeros(stats_shape, "float32")
        total_var = np.zeros(stats_shape, "float32")
        total_count = 0
        for batch in batches:
            batch = np.asarray(batch, dtype="float32")
            if batch.ndim != ndim or any(batch.shape[d] != input_shape[d] for d in keep):
                raise ValueError(f"adapt() yielded a batch with incompatible shape. Expected {input_shape}, "
                                 f"got {tuple(batch.shape)}.")
            batch_mean = np.mean(batch, axis=reduce)
            batch_var = np.var(batch, axis=reduce)
            batch_count = math.prod(batch.shape[d] for d in reduce) if reduce else 1
            total_count += batch_count
            batch_weight = float(batch_count) / total_count
            existing_weight = 1.0 - batch_weight
            new_total_mean = total_mean * existing_weight + batch_mean * batch_weight
            # The lack-of-fit sum of squares (Keras's formula).
            total_var = ((total_var + (total_mean - new_total_mean) ** 2) * existing_weight +
                         (batch_var + (batch_mean - new_total_mean) ** 2) * batch_weight)
            total_mean = new_total_mean
    layer.set_weights([np.asarray(total_mean, "float32").reshape(stats_shape),
                       np.asarray(total_var, "float32").reshape(stats_shape)] + held[2:])
