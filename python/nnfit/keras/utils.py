"""keras.utils: to_categorical, normalize, pad_sequences, split_dataset, img_to_array,
array_to_img and set_random_seed, with Keras 3's signatures and results on NumPy arrays;
model_to_dot and plot_model (nnfit.keras._model_visualization)."""
import numpy as np

from nnfit.keras import _state
from nnfit.keras._model_visualization import model_to_dot, plot_model  # noqa: F401


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


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis` (a zero norm leaves the values), as Keras's."""
    x = np.asarray(x) if isinstance(x, np.ndarray) else np.asarray(x, dtype="float32")
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis or -1)


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Sequences of different lengths as one array (num_samples, maxlen), padded and
    truncated at the start ("pre") or end ("post"), as Keras's pad_sequences."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape = [], ()
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError as e:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {x}") from e
        if not sample_shape and len(x):
            sample_shape = np.asarray(x).shape[1:]
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    is_str = np.issubdtype(dtype, np.str_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
                         "You should set `dtype=object` for variable length strings.")
    out = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            kept = s[-maxlen:]
        elif truncating == "post":
            kept = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            out[i, :len(kept)] = kept
        elif padding == "pre":
            out[i, -len(kept):] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None, preferred_backend=None):
    """Splits arrays (one, or a tuple/list of them with one row per sample) into two
    nnfit.data.Datasets of their rows, as Keras's split_dataset splits them into two
    tf.data.Datasets: sizes as counts (int) or fractions (float), the other side the rest.
    With shuffle the rows are permuted first (NumPy's generator: Keras's order differs)."""
    from nnfit.data import Dataset
    if isinstance(dataset, Dataset):
        raise NotImplementedError("split_dataset: nnfit splits arrays; split the arrays before from_tensor_slices")
    arrays = [np.asarray(a) for a in dataset] if isinstance(dataset, (tuple, list)) else [np.asarray(dataset)]
    total = len(arrays[0])
    if any(len(a) != total for a in arrays):
        raise ValueError(f"split_dataset: the arrays have different lengths {[len(a) for a in arrays]}")
    if left_size is None and right_size is None:
        raise ValueError("you must specify either `left_size` or `right_size` or both.")
    left, right = _split_sizes(left_size, right_size, total)
    order = np.arange(total)
    if shuffle:
        np.random.default_rng(seed).shuffle(order)

    def part(rows):
        picked = tuple(a[rows] for a in arrays)
        return Dataset.from_tensor_slices(picked if isinstance(dataset, (tuple, list)) else picked[0])

    return part(order[:left]), part(order[left:left + right])


def _split_sizes(left_size, right_size, total):
    """Keras's _rescale_dataset_split_sizes: counts from counts or fractions, checked."""
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and type(size) not in (int, float):
            raise TypeError(f"Invalid `{name}` Type. Expected: int or float or None, Received: type({name})="
                            f"{type(size)}.")
        if (type(size) is int and (size <= 0 or size >= total)) or (type(size) is float and (size <= 0 or size >= 1)):
            raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, or a float "
                             f"within the range `[0, 1]`. Received: {name}={size}")
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or equal "
                         "to 1.")
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                         f"left_size + right_size = {left + right}and total_length = {total}")
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}. "
                             f"Resulting {side} side dataset split will be empty. Adjust any of the aforementioned "
                             "parameters")
    return int(left), int(right)


def img_to_array(img, data_format=None, dtype=None):
    """An image (a PIL image or anything np.asarray reads) as a 3-D float32 array, as Keras's."""
    data_format = data_format or "channels_last"
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x.reshape((1,) + x.shape if data_format == "channels_first" else x.shape + (1,))
    raise ValueError(f"Unsupported image shape: {x.shape}")


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3-D array as a PIL image (scaled to 0..255 with scale), as Keras's; needs Pillow."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("Could not import PIL.Image. The use of `array_to_img` requires PIL.") from None
    x = np.asarray(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if (data_format or "channels_last") == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        if np.max(x) != 0:
            x = x / np.max(x)
        x = x * 255
    if x.shape[2] in (3, 4):
        return Image.fromarray(x.astype("uint8"), "RGBA" if x.shape[2] == 4 else "RGB")
    if x.shape[2] == 1:
        if np.max(x) > 255:
            return Image.fromarray(x[:, :, 0].astype("int32"), "I")
        return Image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {x.shape[2]}")


def set_random_seed(seed):
    """Seeds nnfit.keras: weight initialization, shuffling and dropout of the models and
    fits that follow draw from this seed (and NumPy's and Python's generators are seeded,
    as Keras seeds them)."""
    import random
    random.seed(seed)
    np.random.seed(seed)
    _state.set_seed(seed)
    from nnfit.keras import random as keras_random
    keras_random._reset_global_generator()  # remade from the seeded Python generator, as Keras does


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
