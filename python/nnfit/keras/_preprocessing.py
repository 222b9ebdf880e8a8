"""The base of Keras's preprocessing layers of strings, vocabularies and categories
(TextVectorization, StringLookup, IntegerLookup, CategoryEncoding, Hashing, Discretization,
HashedCrossing): layers that run in Python on NumPy arrays, not in nnfit's engine.

Called on arrays or lists they return NumPy arrays (Keras returns tensors of the same
values); called on symbolic tensors they record a node whose output shape and dtype they
compute themselves, as Keras's compute_output_spec does. In a model they form its
preprocessing prefix, run on each batch before the engine's program (Note [Preprocessing
prefix] in nnfit.keras._prefix). They have no weights: state (a vocabulary, bin
boundaries, IDF weights) lives on the layer, in its config and in the .keras file's assets.
"""
import numpy as np

from nnfit.keras import _graph, _state
from nnfit.keras.layers import Layer, _policy_json

# The classes of this family, by Keras class name: nnfit.keras._prefix splits models on them.
CLASSES = {}


def register(cls):
    CLASSES[cls.__name__] = cls
    return cls


class PreprocessingLayer(Layer):
    """Keras's preprocessing layer base on NumPy: eager calls, symbolic calls with the output
    spec computed here, Keras's config and no weights."""

    _no_engine = True  # runs before the engine's graph (nnfit.keras._prefix)

    def _init_layer(self, name, dtype, default_dtype="float32", trainable=True):
        """The part of keras.layers.Layer.__init__ these layers share."""
        self._class_name = type(self).__name__
        self.name = name or _state.unique_name(_snake(self._class_name))
        if isinstance(dtype, dict):  # a DTypePolicy's config, from a file
            dtype = dtype.get("config", {}).get("name")
        self._policy = str(getattr(dtype, "name", dtype) if dtype is not None else default_dtype)
        self._args = {"name": self.name}
        self._nodes = []
        self._model = None
        self.trainable = bool(trainable)

    # Keras's base get_config: the common keys first, then the layer's own.
    def _base_config(self):
        return {"name": self.name, "trainable": self.trainable, "dtype": _policy_json(self._policy)}

    def get_config(self):
        raise NotImplementedError

    @classmethod
    def from_config(cls, config):
        return cls(**dict(config))

    def _entry(self):
        return {"module": "keras.layers", "class_name": self._class_name, "config": self.get_config(),
                "registered_name": None}

    # Calls.
    def __call__(self, inputs, *args, **kwargs):
        flat = _graph.flatten(inputs)
        if any(isinstance(t, _graph.KerasTensor) for t in flat):
            if args or kwargs:
                raise NotImplementedError(f"{self._class_name} {self.name!r}: call arguments beyond the inputs are "
                                          "not supported by nnfit in a model")
            return self._symbolic(inputs)
        return self.call(inputs, *args, **kwargs)

    def _symbolic(self, inputs):
        node = _graph.Node(self, list(inputs) if isinstance(inputs, (list, tuple)) else inputs)
        self._nodes.append(node)
        specs = [(t.shape, t.dtype) for t in _graph.flatten(inputs)]
        try:
            shape, dtype = self.compute_output_spec_of(specs if isinstance(inputs, (list, tuple)) else specs[0])
        except BaseException:
            self._nodes.pop()
            raise
        out = _graph.KerasTensor(shape, dtype, (self, len(self._nodes) - 1, 0))
        node.outputs = [out]
        return out

    def compute_output_spec_of(self, spec):
        """(shape, dtype) of the output for an input's (shape, dtype) (a list of them for a
        layer of several inputs)."""
        raise NotImplementedError

    def call(self, inputs):
        raise NotImplementedError

    # No weights: the state is the layer's own (vocabulary, boundaries), saved as Keras does.
    def _held(self):
        return [], []

    @property
    def built(self):
        return True

    @built.setter
    def built(self, value):
        pass

    def build(self, input_shape=None):
        pass

    def count_params(self):
        return 0

    def set_weights(self, weights):
        if list(weights):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a weight list of length "
                             f"{len(list(weights))}, but the layer was expecting 0 weights.")

    def _elsewhere(self, model):
        return None

    # Files: Keras's save_assets / load_assets and save_own_variables (nnfit.keras._prefix).
    def _assets(self):
        """{file name: text} this layer keeps in the .keras file's assets/layers/<name>/."""
        return {}

    def _load_assets(self, files):
        pass

    def _own_variables(self):
        """{key: array} Keras saves for this layer under layers/<name>/vars (IDF weights)."""
        return {}

    def _load_own_variables(self, store):
        pass

    def __repr__(self):
        return f"<{self._class_name} name={self.name}, built=True>"


def _snake(class_name):
    from nnfit.keras._api_table import TABLE
    return TABLE["layers"][class_name]["snake"]


# Data for adapt: Keras's rules (keras/src/layers/preprocessing/index_lookup.py adapt).
def adapt_batches(data, steps, what):
    """The batches adapt reads: an array, list or tuple is one batch (steps must be None); an
    nnfit.data.Dataset, keras.utils.PyDataset or other iterable gives its batches, the first
    `steps` of them. A batch that is a tuple (x, y[, w]) gives its x."""
    from nnfit.data import Dataset
    from nnfit.keras.utils import PyDataset

    if isinstance(data, (np.ndarray, list, tuple, str, bytes)):
        if steps is not None:
            raise ValueError(f"{what}.adapt(): `steps` is not supported with array or list inputs")
        return [data], True
    if isinstance(data, Dataset):
        source = data.as_numpy_iterator()
    elif isinstance(data, PyDataset):
        source = (data[i] for i in range(len(data)))
    elif hasattr(data, "__iter__"):
        source = iter(data)
    else:
        raise TypeError(f"{what}.adapt(): expected an array, a list, an nnfit.data.Dataset, a keras.utils.PyDataset "
                        f"or an iterable of batches, got {type(data).__name__}")

    def batches():
        for i, batch in enumerate(source):
            if steps is not None and i >= steps:
                return
            yield batch[0] if isinstance(batch, tuple) else batch
    return batches(), False


def as_strings(values, encoding="utf-8"):
    """Strings, bytes or a nested list of them as a NumPy array of str (object arrays of
    bytes, as TensorFlow returns strings, are decoded)."""
    a = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if a.dtype.kind == "U":
        return a
    if a.dtype.kind == "S":
        return np.char.decode(a, encoding)
    if a.dtype.kind == "O":
        flat = [v.decode(encoding) if isinstance(v, bytes) else str(v) for v in a.ravel()]
        return np.array(flat, dtype=str).reshape(a.shape) if flat else np.zeros(a.shape, dtype=str)
    raise TypeError(f"expected strings, got an array of {a.dtype}")


def to_numpy(x):
    """A tensor-like (a TensorFlow tensor from a user's function, a list) as a NumPy array."""
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    return np.asarray(x) if not isinstance(x, np.ndarray) else x
