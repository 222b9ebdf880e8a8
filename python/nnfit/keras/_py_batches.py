"""Batches from Python for fit, evaluate and predict (Note [Batches from Python]): a
keras.utils.PyDataset, or any other iterable of batches (a generator, a list of (x, y)
tuples), read by the engine as a dataset of whole batches, one Python call per batch.
Each batch is x, (x, y) or (x, y, sample_weight), with x (and y) an array or a list or
tuple of arrays for a model with several inputs (outputs). Batches may differ in shape
(Input(shape=(None,)) models: Note [Shapes known per batch])."""
import numpy as np

from nnfit.keras import _graph

# The dtypes the engine reads as they are; float64 and other integers are converted, as
# Keras converts them to the model's dtypes.
_KEPT = {np.dtype(t) for t in ("float32", "int32", "int64", "uint8", "bool")}


def is_batches(x):
    """Whether fit/evaluate/predict's x is a source of batches rather than arrays."""
    from nnfit.keras.utils import PyDataset
    if isinstance(x, PyDataset):
        return True
    if x is None or isinstance(x, (np.ndarray, list, tuple, dict, str, bytes)) or hasattr(x, "__array__"):
        return False
    return hasattr(x, "__iter__") or hasattr(x, "__next__")


def _array(v, where):
    a = np.asarray(v)
    if a.dtype.kind == "f" and a.dtype != np.float32:
        a = a.astype(np.float32)
    elif a.dtype.kind in "iu" and a.dtype not in _KEPT:
        a = a.astype(np.int64)
    elif a.dtype not in _KEPT:
        raise TypeError(f"{where}: arrays of dtype {a.dtype} cannot be fed to the model (float, integer or bool)")
    if a.ndim == 0:
        raise ValueError(f"{where}: a batch needs a batch axis, got a scalar")
    return np.ascontiguousarray(a)


class Batches:
    """What fit, evaluate and predict build a source of batches into: `_build` gives the
    engine's dataset (as nnfit.data.Dataset's does), `take` the first n batches."""

    def __init__(self, source, n_inputs, n_outputs, what, limit=None, transform=None):
        from nnfit.keras.utils import PyDataset
        self._source = source
        self._pydataset = isinstance(source, PyDataset)
        self._n_in, self._n_out, self._what, self._limit = n_inputs, n_outputs, what, limit
        self._transform = transform  # x's batch to the engine's inputs (a model's preprocessing prefix)
        self._peeked = None  # a one-shot iterator's first batch, read for the element spec
        self._iterator = None

    def take(self, n):
        return Batches(self._source, self._n_in, self._n_out, self._what, n, self._transform)

    def _parts(self, batch, index):
        where = f"{self._what}: batch {index + 1}"
        if not isinstance(batch, tuple):
            batch = (batch,)
        if not 1 <= len(batch) <= 3:
            raise ValueError(f"{where}: a batch is x, (x, y) or (x, y, sample_weight), got a tuple of {len(batch)}")
        parts = []
        for k, (part, count) in enumerate(zip(batch, (self._n_in, self._n_out, 1))):
            if k == 0 and self._transform is not None:
                parts += [_array(v, where) for v in self._transform(part)]
                continue
            items = _graph.flatten(list(part.values()) if isinstance(part, dict) else part) \
                if isinstance(part, (list, dict)) or (isinstance(part, tuple) and count > 1) else [part]
            if len(items) != count:
                name = ("x", "y", "sample_weight")[k]
                raise ValueError(f"{where}: {name} holds {len(items)} arrays; the model takes {count}")
            parts += [_array(v, where) for v in items]
        return parts

    def _first(self):
        if self._pydataset:
            return self._source[0]
        if self._peeked is None:
            self._iterator = iter(self._source)
            try:
                self._peeked = next(self._iterator)
            except StopIteration:
                raise ValueError(f"{self._what}: the data gave no batch") from None
        return self._peeked

    def _start_pass(self):
        if self._pydataset:
            source = self._source
            source.on_epoch_begin()
            count = len(source) if self._limit is None else min(len(source), self._limit)
            state = {"i": 0}

            def step():
                i = state["i"]
                if i >= count:
                    source.on_epoch_end()
                    return None
                state["i"] = i + 1
                return self._parts(source[i], i)
            return step
        if self._peeked is not None:  # the first pass goes on with the iterator peeked
            first, iterator = self._peeked, self._iterator
            self._peeked = self._iterator = None
        else:
            first, iterator = None, iter(self._source)
        state = {"i": 0, "first": first}

        def step():
            i = state["i"]
            if self._limit is not None and i >= self._limit:
                return None
            if state["first"] is not None:
                batch, state["first"] = state["first"], None
            else:
                try:
                    batch = next(iterator)
                except StopIteration:
                    return None
            state["i"] = i + 1
            return self._parts(batch, i)
        return step

    def cardinality(self):
        if self._pydataset:
            n = len(self._source)
            return n if self._limit is None else min(n, self._limit)
        try:
            n = len(self._source)
        except TypeError:
            return -2  # unknown (data::kUnknownCardinality)
        return n if self._limit is None else min(n, self._limit)

    def _build(self, seed=0):
        from nnfit import _engine
        first = self._parts(self._first(), 0)
        components = [(str(a.dtype), a.ndim) for a in first]
        return _engine.get().Dataset.from_batches(self._start_pass, components, self.cardinality())
