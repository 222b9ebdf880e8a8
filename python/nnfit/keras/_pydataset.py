"""keras.utils.PyDataset (also keras.utils.Sequence, Keras's alias): the base class of a
user's source of batches, read by fit, evaluate and predict (nnfit.keras._py_batches)."""


class PyDataset:
    """Keras's keras.utils.PyDataset: subclass it with ``__len__`` (batches per epoch) and
    ``__getitem__(index)`` returning a batch x, (x, y) or (x, y, sample_weight), and pass
    it to fit, evaluate or predict. Batches may differ in shape (a text model with
    ``Input(shape=(None,))`` fed batches padded to their own longest sequence). nnfit
    reads one batch at a time on the training thread (workers, use_multiprocessing and
    max_queue_size are accepted as Keras's and not used: the engine overlaps nothing
    with a Python batch yet)."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return self._workers

    @property
    def use_multiprocessing(self):
        return self._use_multiprocessing

    @property
    def max_queue_size(self):
        return self._max_queue_size

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index) returning a batch")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__ (the batches per epoch)")

    @property
    def num_batches(self):
        return len(self)

    def on_epoch_begin(self):
        """Called before each pass (Keras's hook)."""

    def on_epoch_end(self):
        """Called after each pass (Keras's hook: reshuffle here)."""
