"""BatchDataset: what keras.utils.timeseries_dataset_from_array and the *_dataset_from_directory
utilities return in place of Keras's tf.data.Dataset. A keras.utils.PyDataset (so fit,
evaluate and predict take it, as validation_data too) whose batches are NumPy arrays made on
demand from a list of samples, with the tf.data methods Keras's examples call on it: iteration
(for x, y in ds), take, skip, map (a Python function of the batch's parts), shuffle, repeat,
prefetch and cache (accepted, nothing to do), unbatch, as_numpy_iterator, cardinality, and the
attributes the utilities set (class_names, file_paths). Batch arrays have Keras's tensors'
``numpy()`` (an EagerArray), so ``images.numpy().astype("uint8")`` reads as under TensorFlow.

Note [Shuffling a BatchDataset]: Keras shuffles with tf.data's shuffle buffer (reshuffled on
each pass), whose random stream is TensorFlow's own. nnfit keeps the buffer's algorithm (a
buffer of `buffer_size` samples, each output drawn uniformly from it and replaced by the next
sample) with NumPy's generator seeded by (seed, pass), so which samples, their files and
their labels are Keras's, the order of a shuffled pass is not.
"""
import numpy as np

from nnfit.keras._pydataset import PyDataset


class EagerArray(np.ndarray):
    """A batch array with Keras's tensors' ``numpy()`` (a plain copy-free view)."""

    def numpy(self):
        return self.view(np.ndarray)


def eager(x):
    """Arrays (in tuples, lists and dicts) as EagerArrays."""
    if isinstance(x, np.ndarray) and not isinstance(x, EagerArray):
        return x.view(EagerArray)
    if isinstance(x, tuple):
        return tuple(eager(v) for v in x)
    if isinstance(x, list):
        return [eager(v) for v in x]
    if isinstance(x, dict):
        return {k: eager(v) for k, v in x.items()}
    return x


def stack(samples):
    """Samples (each an array or a tuple of them) as one batch (a tuple of arrays)."""
    if isinstance(samples[0], tuple):
        return tuple(np.stack([s[k] for s in samples]) for k in range(len(samples[0])))
    return np.stack(samples)


def buffer_order(count, buffer_size, rng):
    """tf.data's shuffle buffer over samples 0..count-1 (Note [Shuffling a BatchDataset])."""
    order, buffer, nxt = [], list(range(min(buffer_size, count))), min(buffer_size, count)
    while buffer:
        k = int(rng.integers(len(buffer)))
        order.append(buffer[k])
        if nxt < count:
            buffer[k] = nxt
            nxt += 1
        else:
            buffer[k] = buffer[-1]
            buffer.pop()
    return order


class BatchDataset(PyDataset):
    """Batches of `batch_size` samples (None: single samples) read by `load(index)`; with
    `shuffle_buffer`, each pass is in a new shuffled order (Note [Shuffling a BatchDataset]);
    `collate` makes a batch of samples (default: stacks them)."""

    def __init__(self, count, load, batch_size=None, shuffle_buffer=None, seed=None, collate=stack):
        super().__init__()
        self._count, self._load, self._batch_size, self._collate = count, load, batch_size, collate
        self._shuffle_buffer, self._seed, self._pass = shuffle_buffer, seed, 0
        self._order = list(range(count))
        self._started = False
        self.class_names = None

    def _new_pass(self):
        if self._shuffle_buffer:
            seed = None if self._seed is None else (self._seed, self._pass)
            self._order = buffer_order(self._count, self._shuffle_buffer, np.random.default_rng(seed))
        self._pass += 1
        self._started = True

    def on_epoch_begin(self):
        self._new_pass()

    def __len__(self):
        if self._batch_size is None:
            return self._count
        return -(-self._count // self._batch_size)

    def __getitem__(self, index):
        if index < 0 or index >= len(self):
            raise IndexError(f"batch {index} of a dataset of {len(self)}")
        if not self._started:
            self._new_pass()
        if self._batch_size is None:
            return eager(self._load(self._order[index]))
        rows = self._order[index * self._batch_size:(index + 1) * self._batch_size]
        return eager(self._collate([self._load(i) for i in rows]))

    def __iter__(self):
        self._new_pass()
        for i in range(len(self)):
            yield self[i]

    # tf.data's methods, as Keras's examples use them.
    def take(self, count):
        return _Derived(self, lambda n: n if count < 0 else min(n, count), lambda i: i)

    def skip(self, count):
        return _Derived(self, lambda n: max(0, n - count), lambda i: i + count)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """`map_func` on each batch: called with the batch's parts (x, y) as tf.data calls it."""
        return _Derived(self, lambda n: n, lambda i: i,
                        lambda b: eager(map_func(*b) if isinstance(b, tuple) else map_func(b)))

    def repeat(self, count=None):
        if count is None or count < 0:
            raise NotImplementedError("BatchDataset.repeat() without a count (forever) is not supported by nnfit: "
                                      "fit reads the dataset again on every epoch, so no repeat is needed")
        return _Derived(self, lambda n: n * count, lambda i: i % len(self))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """The batches (a batched dataset's) or samples in a shuffled order, as tf.data's
        shuffle (Note [Shuffling a BatchDataset])."""
        parent = self
        ds = BatchDataset(len(parent), lambda i: parent[i], None, buffer_size, seed)
        ds.class_names = self.class_names
        return ds

    def unbatch(self):
        if self._batch_size is None:
            raise ValueError("unbatch: the dataset is not batched")
        if isinstance(self, _Derived):
            raise NotImplementedError("unbatch: nnfit unbatches the dataset a utility returned, not one made from it "
                                      "by take, skip, map or repeat: unbatch first")
        count = self._count
        return _Derived(self, lambda n: count, lambda i: i, unbatched=True)

    def batch(self, batch_size, drop_remainder=False):
        if self._batch_size is not None:
            raise NotImplementedError("BatchDataset.batch on a batched dataset is not supported by nnfit (batches of "
                                      "batches): pass batch_size=None to the utility to batch it yourself")
        count = len(self) - (len(self) % batch_size if drop_remainder else 0)
        parent = self
        ds = BatchDataset(count, lambda i: _plain(parent[i]), batch_size, collate=getattr(self, "_collate", stack))
        ds.class_names = self.class_names
        return ds

    def prefetch(self, buffer_size=None, name=None):
        return self

    def cache(self, filename="", name=None):
        return self

    def as_numpy_iterator(self):
        for b in self:
            yield _plain(b)

    def cardinality(self):
        return len(self)


def _plain(x):
    if isinstance(x, np.ndarray):
        return x.view(np.ndarray)
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(v) for v in x)
    return x


class _Derived(BatchDataset):
    """A view of a BatchDataset: `size(n)` batches of the parent's n, batch i being the
    parent's `index(i)` through `transform`; unbatched: the parent's batches' samples."""

    def __init__(self, parent, size, index, transform=None, unbatched=False):
        PyDataset.__init__(self)
        self._parent, self._size, self._index, self._transform = parent, size, index, transform
        self._unbatched = unbatched
        self._batch_size = None if unbatched else parent._batch_size
        self.class_names = parent.class_names
        if hasattr(parent, "file_paths"):
            self.file_paths = parent.file_paths

    def _new_pass(self):
        self._parent._new_pass()

    def __len__(self):
        return self._size(len(self._parent)) if not self._unbatched else self._size(None)

    def __getitem__(self, index):
        if index < 0 or index >= len(self):
            raise IndexError(f"batch {index} of a dataset of {len(self)}")
        if self._unbatched:
            size = self._parent._batch_size
            batch = self._parent[index // size]
            k = index % size
            return eager(tuple(v[k] for v in batch) if isinstance(batch, tuple) else batch[k])
        batch = self._parent[self._index(index)]
        return batch if self._transform is None else self._transform(batch)
