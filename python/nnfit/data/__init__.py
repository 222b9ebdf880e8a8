"""nnfit.data: tf.data-style input pipelines that run in nnfit's engine, beside training.

    ds = (nnfit.data.Dataset.from_tensor_slices((x, y))
          .map(nnfit.data.normalize(scale=1 / 255), num_parallel_calls=nnfit.data.AUTOTUNE)
          .cache().shuffle(60000).batch(128).prefetch(nnfit.data.AUTOTUNE))
    model.fit(ds, epochs=5, validation_data=test_ds)

A Dataset is a source and a list of transformations, written as the JSON of `nnfit
train`'s data sections (docs/config.md, "Input pipelines"; ``to_json()`` shows it) and
built by the same reader. Maps take nnfit's named preprocessing functions (normalize,
cast, reshape, resize, one_hot, random_crop, ...), which run in the pipeline's threads
without the GIL; Python functions are not accepted (they would take the GIL for every
element). Sources: in-memory arrays (from_tensor_slices) and files (idx, npy, npz, csv,
tfrecord, image_folder).
"""
import json

import numpy as np

AUTOTUNE = "AUTOTUNE"  # tf.data.AUTOTUNE: the engine's autotuner picks the value


class MapFunction:
    """A named preprocessing function for Dataset.map (made by normalize(), cast(), ...)."""

    def __init__(self, name, **params):
        self.name = name
        self.params = {k: v for k, v in params.items() if v is not None}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"nnfit.data.{self.name}({args})"


def normalize(scale=1.0, mean=None, stddev=None, component=0):
    """x * scale, then (x - mean) / stddev per channel (mean and stddev: numbers or lists)."""
    return MapFunction("normalize", scale=scale, mean=_list(mean), stddev=_list(stddev), component=component)


def cast(dtype, component=0):
    return MapFunction("cast", dtype=str(np.dtype(dtype)), component=component)


def convert_image_dtype(dtype, component=0):
    return MapFunction("convert_image_dtype", dtype=str(np.dtype(dtype)), component=component)


def reshape(shape, component=0):
    return MapFunction("reshape", shape=list(shape), component=component)


def resize(height, width, method="bilinear", component=0):
    return MapFunction("resize", height=height, width=width, method=method, component=component)


def one_hot(depth, component=1):
    return MapFunction("one_hot", depth=depth, component=component)


def random_crop(height, width, seed=None, component=0):
    return MapFunction("random_crop", height=height, width=width, seed=seed, component=component)


def random_flip_left_right(seed=None, component=0):
    return MapFunction("random_flip_left_right", seed=seed, component=component)


def random_brightness(max_delta, seed=None, component=0):
    return MapFunction("random_brightness", max_delta=max_delta, seed=seed, component=component)


def random_contrast(lower, upper, seed=None, component=0):
    return MapFunction("random_contrast", lower=lower, upper=upper, seed=seed, component=component)


def _list(v):
    if v is None:
        return None
    return [float(x) for x in np.atleast_1d(np.asarray(v, dtype=float))]


_READ_IN_PLACE = {np.dtype(t) for t in ("float32", "float16", "int32", "int64", "uint8", "bool")}


class Dataset:
    """An input pipeline: a source, then transformations (each returns a new Dataset)."""

    def __init__(self, source, stages=(), tensors=()):
        self._source = source
        self._stages = list(stages)
        self._tensors = list(tensors)

    # Sources.
    @staticmethod
    def from_tensor_slices(tensors):
        """Elements are the rows of the arrays: one array, or a tuple (x, y[, sample_weight])."""
        parts = list(tensors) if isinstance(tensors, (tuple, list)) else [tensors]
        arrays = []
        for i, p in enumerate(parts):
            a = np.asarray(p)
            if a.dtype not in _READ_IN_PLACE:
                a = a.astype(np.int64 if a.dtype.kind in "iu" else np.float32)
            arrays.append(np.ascontiguousarray(a))
            if a.ndim == 0:
                raise ValueError(f"from_tensor_slices: component {i} is a scalar; slices need a first axis")
        if len({a.shape[0] for a in arrays}) != 1:
            raise ValueError("from_tensor_slices: the components' first dimensions differ: "
                             f"{[a.shape[0] for a in arrays]}")
        return Dataset({"format": "tensors"}, tensors=arrays)

    # Transformations (tf.data's names and arguments).
    def _with(self, stage):
        return Dataset(self._source, self._stages + [stage], self._tensors)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        if not isinstance(map_func, MapFunction):
            raise NotImplementedError("nnfit.data maps run nnfit's named functions (nnfit.data.normalize, cast, "
                                      "reshape, resize, one_hot, random_*), not Python functions")
        stage = {"map": map_func.name, **map_func.params}
        if num_parallel_calls is not None:
            stage["num_parallel_calls"] = num_parallel_calls
        if deterministic is not None:
            stage["deterministic"] = bool(deterministic)
        return self._with(stage)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        stage = {"shuffle": int(buffer_size), "reshuffle_each_iteration": bool(reshuffle_each_iteration)}
        if seed is not None:
            stage["seed"] = int(seed)
        return self._with(stage)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        return self._with({"batch": int(batch_size), "drop_remainder": bool(drop_remainder)})

    def unbatch(self, name=None):
        return self._with({"unbatch": True})

    def cache(self, filename="", name=None):
        return self._with({"cache": str(filename)})

    def prefetch(self, buffer_size, name=None):
        return self._with({"prefetch": buffer_size if buffer_size == AUTOTUNE else int(buffer_size)})

    def repeat(self, count=None, name=None):
        return self._with({"repeat": -1 if count is None else int(count)})

    def take(self, count, name=None):
        return self._with({"take": int(count)})

    def skip(self, count, name=None):
        return self._with({"skip": int(count)})

    def shard(self, num_shards, index, name=None):
        return self._with({"shard": int(num_shards), "index": int(index)})

    def ignore_errors(self, log_warning=False, name=None):
        return self._with({"ignore_errors": True})

    # Inspection.
    def to_json(self):
        """The pipeline as `nnfit train`'s config writes it ({"source", "pipeline"})."""
        return json.dumps({"source": self._source, "pipeline": self._stages})

    def _build(self, seed=0):
        from nnfit import _engine
        return _engine.get().Dataset.build(self.to_json(), "nnfit.data.Dataset", self._tensors, int(seed))

    @property
    def element_spec(self):
        return self._build().element_spec

    def as_numpy_iterator(self):
        """The elements (batches) as tuples of arrays, computed by the engine."""
        return iter(self._build().collect())


def _source(fmt, **keys):
    return Dataset({"format": fmt, **{k: v for k, v in keys.items() if v is not None}})


def _path(p):
    import os
    return os.path.abspath(os.fspath(p))


def idx(images, labels):
    """IDX files (MNIST's format, gzip or plain): (image, label) elements."""
    return _source("idx", images=_path(images), labels=_path(labels))


def npy(x, y, sample_weight=None):
    return _source("npy", x=_path(x), y=_path(y), sample_weight=None if sample_weight is None else _path(sample_weight))


def npz(path, x="x", y="y", sample_weight=None):
    return _source("npz", path=_path(path), x=x, y=y, sample_weight=sample_weight)


def csv(path, label, features=None):
    return _source("csv", path=_path(path), label=label, features=features)


def tfrecord(files, features, label, compression=None):
    """TFRecord files of tf.train.Example: ``features`` maps each feature to {"dtype", "shape"}."""
    files = [_path(files)] if isinstance(files, str) or hasattr(files, "__fspath__") else [_path(f) for f in files]
    return _source("tfrecord", files=files, features=features, label=label, compression=compression)


def image_folder(directory, channels=0):
    return _source("image_folder", directory=_path(directory), channels=channels or None)
