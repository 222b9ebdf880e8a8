"""keras.utils: to_categorical and set_random_seed."""
import numpy as np

from nnfit.keras import _state


def to_categorical(x, num_classes=None):
    """Class ids -> one-hot rows (float32), as Keras's to_categorical."""
    x = np.asarray(x, dtype="int64")
    input_shape = x.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    x = x.reshape(-1)
    if num_classes is None:
        num_classes = int(np.max(x)) + 1
    if x.size and (x.min() < 0 or x.max() >= num_classes):
        raise ValueError(f"to_categorical: class ids must lie in [0, {num_classes}), got {int(x.min())}..{int(x.max())}")
    out = np.zeros((x.shape[0], num_classes), dtype="float32")
    out[np.arange(x.shape[0]), x] = 1.0
    return out.reshape(input_shape + (num_classes,))


def set_random_seed(seed):
    """Seeds nnfit.keras: weight initialization, shuffling and dropout of the models and
    fits that follow draw from this seed (and NumPy's and Python's generators are seeded,
    as Keras seeds them)."""
    import random
    random.seed(seed)
    np.random.seed(seed)
    _state.set_seed(seed)
