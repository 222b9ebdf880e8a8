"""keras.utils: Keras 3.15's 40 names. On NumPy arrays as Keras's: to_categorical, normalize,
pad_sequences, split_dataset, set_random_seed, pack/unpack_x_y_sample_weight, standardize_dtype.
Batches: PyDataset and its alias Sequence; timeseries_dataset_from_array and
image/text/audio_dataset_from_directory return a BatchDataset (a PyDataset with tf.data's
methods: nnfit.keras._batch_dataset). Images: load_img, save_img, img_to_array, array_to_img
(_image_io). Files: get_file (_file_utils). Serialization and the custom-object registry,
shared with keras.saving (_registration, _serialization). Progbar and interactive logging
(_progbar). Graphs: get_source_inputs, is_keras_tensor, model_to_dot, plot_model
(_model_visualization). Config, clear_session. FeatureSpace, bounding_boxes and legacy raise
NotImplementedError saying what to use."""
import copy
import difflib
import json
import types

import numpy as np

from nnfit.keras import _state
from nnfit.keras._directory_datasets import (audio_dataset_from_directory, image_dataset_from_directory,  # noqa: F401
                                             text_dataset_from_directory)
from nnfit.keras._dtypes import standardize_dtype  # noqa: F401
from nnfit.keras._file_utils import get_file  # noqa: F401
from nnfit.keras._image_io import array_to_img, img_to_array, load_img, save_img  # noqa: F401
from nnfit.keras._model_visualization import model_to_dot, plot_model  # noqa: F401
from nnfit.keras._progbar import (Progbar, disable_interactive_logging, enable_interactive_logging,  # noqa: F401
                                  is_interactive_logging_enabled)
from nnfit.keras._pydataset import PyDataset
from nnfit.keras._registration import (CustomObjectScope, custom_object_scope, get_custom_objects,  # noqa: F401
                                       get_registered_name, get_registered_object, register_keras_serializable)
from nnfit.keras._serialization import deserialize_keras_object, serialize_keras_object  # noqa: F401
from nnfit.keras._timeseries import timeseries_dataset_from_array  # noqa: F401

Sequence = PyDataset  # Keras's alias: the same class


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




def clear_session(free_memory=True):
    """keras.utils.clear_session: keras.backend.clear_session (resets the automatic names)."""
    _state.clear()


def is_keras_tensor(x):
    """Whether `x` is a symbolic tensor (keras.Input's, or a layer's output on one)."""
    from nnfit.keras._graph import KerasTensor
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor):
    """Keras's: the keras.Input tensors `tensor` is computed from (each once, in the order
    reached); an object that is no symbolic tensor is returned as it is."""
    history = getattr(tensor, "_history", None)
    if not history or history[0] is None:
        return tensor
    layer, node_index, _ = history
    nodes = getattr(layer, "_nodes", None) or []
    if not nodes:
        return [tensor]
    node = nodes[node_index]
    inputs = node.input_tensors()
    if not inputs:  # an Input layer's node
        return list(node.outputs)
    sources = []
    for t in inputs:
        for x in get_source_inputs(t):
            if all(x is not s for s in sources):
                sources.append(x)
    return sources


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """Keras's: (x,), (x, y) or (x, y, sample_weight), as fit reads a batch."""
    if y is None:
        if not isinstance(x, (tuple, list)):
            return x
        return (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """Keras's: a batch as (x, y, sample_weight), the missing parts None."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if len(data) == 1:
        return (data[0], None, None)
    if len(data) == 2:
        return (data[0], data[1], None)
    if len(data) == 3:
        return (data[0], data[1], data[2])
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: "
                     f"{data}")


class Config:
    """Keras's keras.utils.Config: a dict whose entries are attributes too, that can be frozen
    and written as JSON."""

    __attrs__ = None

    def __init__(self, **kwargs):
        self._config = kwargs
        self._frozen = False
        self.__attrs__ = set(dir(self))

    @property
    def frozen(self):
        return self._frozen

    def freeze(self):
        self._frozen = True

    def unfreeze(self):
        self._frozen = False

    def _raise_if_frozen(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def as_dict(self):
        return copy.copy(self._config)

    def to_json(self):
        return json.dumps(self._config)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def pop(self, *args):
        self._raise_if_frozen()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._raise_if_frozen()
        return self._config.update(*args, **kwargs)

    def get(self, keyname, value=None):
        return self._config.get(keyname, value)

    def __setattr__(self, name, value):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            return object.__setattr__(self, name, value)
        self._raise_if_frozen()
        self._config[name] = value

    def __getattr__(self, name):
        attrs = object.__getattribute__(self, "__attrs__")
        if attrs is None or name in attrs:
            return object.__getattribute__(self, name)
        if name in self._config:
            return self._config[name]
        msg = f"Unknown attribute: '{name}'."
        closest = difflib.get_close_matches(name, self._config.keys(), n=1, cutoff=0.7)
        if closest:
            msg += f" Did you mean '{closest[0]}'?"
        raise AttributeError(msg)

    def __setitem__(self, key, item):
        self._raise_if_frozen()
        self._config[key] = item

    def __getitem__(self, key):
        return self._config[key]

    def __repr__(self):
        return f"<Config {self._config}>"

    def __iter__(self):
        yield from sorted(self._config.keys())

    def __len__(self):
        return len(self._config)

    def __delitem__(self, key):
        self._raise_if_frozen()
        del self._config[key]

    def __contains__(self, item):
        return item in self._config


class FeatureSpace:
    """Keras's FeatureSpace (a preprocessing model over dicts of structured features built on
    tf.data) is not supported by nnfit."""

    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32, hashing_dim=32,
                 num_discretization_bins=32, name=None):
        raise NotImplementedError(
            "keras.utils.FeatureSpace is not supported by nnfit: preprocess each feature with its own layer "
            "(Normalization, Discretization, StringLookup, IntegerLookup, Hashing, HashedCrossing, "
            "CategoryEncoding) and concatenate them in a model, as keras.io's structured-data examples "
            "without FeatureSpace do")


def _unsupported_module(name, functions, advice):
    module = types.ModuleType(f"nnfit.keras.utils.{name}", f"keras.utils.{name}: not supported by nnfit ({advice}).")

    def make(fn_name):
        def unsupported(*args, **kwargs):
            raise NotImplementedError(f"keras.utils.{name}.{fn_name} is not supported by nnfit: {advice}")
        unsupported.__name__ = unsupported.__qualname__ = fn_name
        return unsupported
    for fn_name in functions:
        setattr(module, fn_name, make(fn_name))
    return module


bounding_boxes = _unsupported_module(
    "bounding_boxes", ("affine_transform", "clip_to_image_size", "compute_ciou", "compute_iou", "convert_format",
                       "crop", "decode_deltas_to_boxes", "encode_box_to_deltas", "pad"),
    "nnfit has no bounding-box layers or ops; compute boxes with NumPy")
legacy = _unsupported_module(
    "legacy", ("deserialize_keras_object", "serialize_keras_object"),
    "it reads and writes Keras 2's (tf.keras's) config form; use keras.utils.serialize_keras_object and "
    "deserialize_keras_object (Keras 3's form), or load the Keras 2 .h5 file with keras.models.load_model")


__all__ = ["Config", "CustomObjectScope", "FeatureSpace", "Progbar", "PyDataset", "Sequence", "array_to_img",
           "audio_dataset_from_directory", "bounding_boxes", "clear_session", "custom_object_scope",
           "deserialize_keras_object", "disable_interactive_logging", "enable_interactive_logging", "get_custom_objects",
           "get_file", "get_registered_name", "get_registered_object", "get_source_inputs", "image_dataset_from_directory",
           "img_to_array", "is_interactive_logging_enabled", "is_keras_tensor", "legacy", "load_img", "model_to_dot",
           "normalize", "pack_x_y_sample_weight", "pad_sequences", "plot_model", "register_keras_serializable",
           "save_img", "serialize_keras_object", "set_random_seed", "split_dataset", "standardize_dtype",
           "text_dataset_from_directory", "timeseries_dataset_from_array", "to_categorical", "unpack_x_y_sample_weight"]


def __dir__():
    """Keras's names only, as dir(keras.utils) lists them (not the modules this one imports)."""
    return list(__all__)
