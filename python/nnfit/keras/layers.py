"""keras.layers on nnfit's engine: every layer nnfit implements, with Keras 3's arguments
and defaults (from Keras's own signatures), plus keras.Input and InputLayer.

A layer is its config until a model is built: calling it on symbolic tensors (from
keras.Input) records the call and gives the output's shape; the model's weights live in
nnfit's engine, which ``get_weights`` reads once the layer belongs to a built model.
"""
import numpy as np

from nnfit.keras import _argument_checks, _graph, _state, _traced_activation, _tracing
from nnfit.keras._api_table import TABLE
from nnfit.keras._object import KerasObject, make_classes, to_json_value
from nnfit.keras._registration import registered_name_or_none
from nnfit.keras._layer_attributes import LayerAttributes
from nnfit.keras._weights import LayerWeights

_LAYER_KWARGS = (("name", None), ("dtype", None), ("trainable", True), ("input_shape", None), ("input_dim", None),
                 ("batch_input_shape", None), ("batch_size", None), ("autocast", True),
                 ("activity_regularizer", None))  # Keras's base Layer takes it; Embedding's config has it
_NOT_IN_CONFIG = ("input_shape", "input_dim", "batch_input_shape", "batch_size", "autocast")


def _policy_json(name):
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name}, "registered_name": None}


def _policy_name(dtype):
    if dtype is None:
        return _state.policy()
    if hasattr(dtype, "name"):  # a DTypePolicy
        return dtype.name
    return str(dtype)


class Layer(LayerAttributes, LayerWeights, KerasObject):
    """Base of nnfit.keras's layers (Keras's keras.layers.Layer). Subclass it as in Keras
    (``__init__(**kwargs)``, ``build(input_shape)`` with ``add_weight``, ``call(inputs,
    training=None)`` written with keras.ops and layers, ``get_config``): the call is traced
    once into the model's graph (nnfit.keras._tracing)."""

    _group = "layers"
    _extra = _LAYER_KWARGS
    _custom = False  # a user's subclass with its own call (set per instance)

    def __init__(self, *args, **kwargs):
        if _tracing.is_custom(type(self)):
            self._init_custom(*args, **kwargs)
            return
        super().__init__(*args, **kwargs)
        _argument_checks.check_layer(self._class_name, self._args)
        self.name = self._args.get("name") or _state.unique_name(_snake(self._class_name))
        self._args["name"] = self.name
        self._policy = _policy_name(self._args.get("dtype"))
        if self._args.get("autocast") is not True:
            raise NotImplementedError(f"{self._class_name}: autocast=False is not supported by nnfit")
        self._nodes = []
        self._model = None  # the built model whose engine holds this layer's weights
        self.trainable = bool(self._args.get("trainable", True))

    def _init_custom(self, *args, trainable=True, name=None, dtype=None, autocast=True, input_shape=None,
                     input_dim=None, batch_input_shape=None, batch_size=None, activity_regularizer=None, **kwargs):
        """Keras's Layer.__init__ for a user's subclass (its config's activity_regularizer: None only)."""
        cls = type(self).__name__
        if activity_regularizer is not None:
            raise NotImplementedError(f"{cls}: activity_regularizer on a subclassed layer is not supported by nnfit "
                                      "(add the penalty with self.add_loss in call())")
        if args or kwargs:
            raise TypeError(f"{cls}: unrecognized arguments to Layer.__init__: "
                            f"{list(args) + sorted(kwargs)} (pass your own arguments to your __init__)")
        if autocast is not True:
            raise NotImplementedError(f"{cls}: autocast=False is not supported by nnfit")
        self._custom = True
        self._class_name = cls
        self.name = name or _state.unique_name(_tracing.snake(cls))
        self._args = {"name": self.name, "input_shape": input_shape, "input_dim": input_dim,
                      "batch_input_shape": batch_input_shape}
        self._policy = _policy_name(dtype)
        self._nodes = []
        self._model = None
        self.trainable = bool(trainable)
        self._variables = []  # add_weight's, in creation order
        self._trace = None
        self._custom_built = False

    def call(self, inputs, *args, **kwargs):
        """Keras's Layer.call: a subclass defines it (with keras.ops and layers)."""
        raise NotImplementedError(f"Layer {self.name!r} ({type(self).__name__}) has no call() method")

    @property
    def supports_masking(self):
        """Keras's: whether the layer passes on a mask (compute_mask); set it in __init__, or
        override compute_mask."""
        own = self.__dict__.get("_supports_masking")
        return own if own is not None else type(self).compute_mask is not Layer.compute_mask

    @supports_masking.setter
    def supports_masking(self, value):
        self._supports_masking = bool(value)

    def compute_mask(self, inputs, previous_mask):
        """Keras's default: the mask that reached the layer, passed on."""
        return previous_mask

    def add_loss(self, loss):
        """Keras's add_loss inside call(): the value (a tensor computed with keras.ops, summed)
        is added to the model's loss in the traced step."""
        from nnfit.keras import _added_losses
        _added_losses.add_loss(self, loss)

    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True, autocast=True, regularizer=None,
                   constraint=None, aggregation="none", overwrite_with_gradient=False, name=None):
        """Keras's add_weight: a weight of this layer, made by the engine when the model is
        built; inside call() it is an operand of keras.ops."""
        if not self._custom:
            raise NotImplementedError(f"{self._class_name} {self.name!r}: add_weight is for subclassed layers")
        return _tracing.add_weight(self, shape, initializer, dtype, trainable, autocast, regularizer, constraint,
                                   aggregation, overwrite_with_gradient, name)

    def _ordered_variables(self):
        """add_weight's weights in Keras's order: trainable ones, then the others."""
        return [v for v in self._variables if v.trainable] + [v for v in self._variables if not v.trainable]

    @property
    def built(self):
        if self._custom:
            return self._custom_built
        return LayerWeights.built.fget(self)

    @built.setter
    def built(self, value):
        if self._custom:
            self._custom_built = bool(value)

    def build(self, input_shape=None):
        if self._custom:  # Keras's default build: nothing to make
            self._custom_built = True
            return
        LayerWeights.build(self, input_shape)

    def _input_shape_arg(self):
        """The input shape given as a constructor argument (Keras's first-layer shortcut)."""
        a = self._args
        if a.get("batch_input_shape") is not None:
            return tuple(a["batch_input_shape"])[1:]
        if a.get("input_shape") is not None:
            return tuple(a["input_shape"])
        if a.get("input_dim") is not None and not self._own_argument("input_dim"):
            return (int(a["input_dim"]),)
        return None

    def _own_argument(self, name):
        """Whether `name` is an argument of the layer's own signature (Embedding's
        input_dim), not the base Layer's first-layer shortcut of that name."""
        if self._custom:
            return False
        return any(p[0] == name for p in TABLE["layers"][self._class_name]["params"])

    def get_config(self):
        if self._custom:  # Keras's base Layer.get_config; a subclass adds its own arguments
            return {"name": self.name, "trainable": self.trainable, "dtype": _policy_json(self._policy)}
        from nnfit.keras import _layer_config
        return _layer_config.keras_form(self._class_name, self._config_as_given())

    def _config_as_given(self):
        """The layer's arguments as a config, as they were given (what the engine is sent)."""
        config = super().get_config()
        if _traced_activation.is_traced(self._args.get("activation")):  # Keras's form of a function
            config["activation"] = {k: v for k, v in _activation_form(self).items() if k != "nnfit_trace"}
        for k in _NOT_IN_CONFIG:
            if not self._own_argument(k):
                config.pop(k, None)
        config["name"] = self.name
        config["trainable"] = self.trainable
        config["dtype"] = _policy_json(self._policy)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        dtype = config.get("dtype")
        if isinstance(dtype, dict):  # Keras 3's DTypePolicy object
            config["dtype"] = dtype.get("config", {}).get("name")
        return cls(**config)

    def serialize(self):
        if self._custom:  # Keras's form of a subclassed layer (its trace goes only into models)
            cls = type(self)
            registered = registered_name_or_none(cls)
            return {"module": None if registered else cls.__module__, "class_name": cls.__name__,
                    "config": to_json_value(self.get_config(), f"{cls.__name__}.get_config()"),
                    "registered_name": registered or cls.__name__}
        return super().serialize()

    def _entry(self):
        if self._custom:
            return _tracing.entry(self)
        # The arguments as given (the engine reads them); a class with its own get_config, its.
        config = self._config_as_given() if type(self).get_config is Layer.get_config else self.get_config()
        for k in self._engine_args:
            if self._args.get(k) is not None:
                config[k] = self._args[k]
        if "_activation_entry" in self.__dict__:  # a Python function's trace (nnfit.keras._traced_activation)
            config["activation"] = self._activation_entry
        return {"module": "keras.layers", "class_name": self._class_name, "config": config,
                "registered_name": None}

    def _output_count(self):
        if self._class_name == "Bidirectional":
            # Keras: the merged output (merge_mode=None: forward's and backward's), then each
            # direction's states.
            inner = _class_and_config(self._args.get("layer"))
            merged = 2 if self._args.get("merge_mode", "concat") is None else 1
            return merged + 2 * _state_count(*inner)
        return 1 + _state_count(self._class_name, self._args)

    def __call__(self, inputs, *args, **kwargs):
        if self._custom:
            return _tracing.call_symbolic(self, inputs, args, kwargs)
        if "training" in kwargs:  # the model's mode, or inference only inside a traced call
            _tracing._note_training(self, kwargs.pop("training"), f"{self._class_name} {self.name!r}")
        if kwargs.get("mask", 0) is None:
            kwargs.pop("mask")
        keyword = {}
        if self._class_name in _TAKES_INITIAL_STATE and kwargs.get("initial_state") is not None:
            keyword["initial_state"] = kwargs.pop("initial_state")  # Keras's states to start from
            if not all(isinstance(t, _graph.KerasTensor) for t in _graph.flatten(keyword["initial_state"])):
                raise NotImplementedError(f"{self._class_name} {self.name!r}: initial_state must be symbolic tensors "
                                          "(outputs of other layers or keras.Input)")
        elif kwargs.get("initial_state", 0) is None:
            kwargs.pop("initial_state")
        if self._class_name in _TAKES_ATTENTION_MASK:
            # Keras's call(..., attention_mask=None, use_causal_mask=False): a mask tensor
            # [batch, T, S] (an array inside a traced call: the same for every sample) and a flag.
            mask = kwargs.pop("attention_mask", None)
            if mask is not None:
                if not isinstance(mask, _graph.KerasTensor) and _tracing.current_trace() is not None:
                    mask = _tracing.batched_constant(mask, f"{self._class_name} {self.name!r}")
                if not isinstance(mask, _graph.KerasTensor):
                    raise NotImplementedError(f"{self._class_name} {self.name!r}: attention_mask must be a symbolic "
                                              "tensor (an input or a layer's output) in nnfit")
                keyword["attention_mask"] = mask
            if kwargs.pop("use_causal_mask", False):
                keyword["use_causal_mask"] = True
        if args or kwargs:
            raise NotImplementedError(f"{self._class_name} {self.name!r}: call arguments beyond the inputs "
                                      f"({', '.join(list(kwargs) or ['positional'])}) are not supported by nnfit")
        flat = _graph.flatten(inputs)
        if flat and _tracing.current_trace() and not any(isinstance(t, _graph.KerasTensor) for t in flat):
            inputs = _tracing.batched_constant(inputs, f"{self._class_name} {self.name!r}")  # positions
            flat = [inputs]
        if not flat or not all(isinstance(t, _graph.KerasTensor) for t in flat):
            raise NotImplementedError(
                f"{self._class_name} {self.name!r}: nnfit calls layers on symbolic tensors only (keras.Input(...)); "
                "build a model and use predict() for arrays")
        node = _graph.Node(self, list(inputs) if isinstance(inputs, (list, tuple)) else inputs)
        node.kwargs = keyword
        self._nodes.append(node)
        activation = self._args.get("activation")
        pending = _traced_activation.is_traced(activation) and "_activation_entry" not in self.__dict__
        if pending:
            self._activation_entry = "linear"  # the layer's shapes before its activation, which is then traced
        try:
            if pending:
                _traced_activation.check_layer(self._class_name, self.name)
            outputs = _graph.infer_outputs(self, node, self._output_count(), local=True)
            if pending:
                self._activation_entry = _traced_activation.entry(activation, outputs[0].shape,
                                                                  f"{self._class_name} {self.name!r}")
        except BaseException:
            if pending:
                del self._activation_entry
                if self._nodes and self._nodes[-1] is node:
                    self._nodes.pop()
            raise
        return outputs[0] if len(outputs) == 1 else outputs

    # Weights (weights, get_weights, set_weights, build, trainable, ...): _weights.LayerWeights.

    @property
    def output(self):
        model = getattr(self, "_model", None)
        if not self._nodes and getattr(model, "_is_sequential", False) and model._input is not None:
            model._stack_output()  # Keras's Sequential with an Input is called as it is built
        if not self._nodes or not self._nodes[0].outputs:
            raise AttributeError(f"Layer {self.name!r} has never been called and thus has no defined output.")
        outs = self._nodes[0].outputs
        return outs[0] if len(outs) == 1 else outs

    @property
    def input(self):
        if not self._nodes or self._nodes[0].inputs is None:
            raise AttributeError(f"Layer {self.name!r} is not connected, no input to return.")
        return self._nodes[0].inputs

    def __repr__(self):
        return f"<{self._class_name} name={self.name}, built={self.built}>"


def _activation_form(layer):
    from nnfit.keras import activations
    form = activations.serialize(layer._args["activation"])
    return form if isinstance(form, dict) else {"module": "builtins", "class_name": "function", "config": form,
                                                "registered_name": "function"}


def _class_and_config(layer):
    """A wrapped layer's class name and arguments, from the object or its serialized form."""
    if isinstance(layer, dict):
        return layer.get("class_name"), layer.get("config", {})
    return getattr(layer, "_class_name", None), getattr(layer, "_args", {})


def _state_count(class_name, args):
    """The states a recurrent layer returns after its output (return_state), else 0."""
    if not args.get("return_state"):
        return 0
    if class_name == "RNN":
        cell_class, _ = _class_and_config(args.get("cell"))
        return 2 if cell_class == "LSTMCell" else 1
    return 2 if class_name == "LSTM" else 1


# The layers whose call takes initial_state=[h(, c)] (read by the engine's recurrent layers).
_TAKES_INITIAL_STATE = ("SimpleRNN", "LSTM", "GRU", "RNN")
# The layers whose call takes attention_mask= and use_causal_mask= (the engine's MultiHeadAttention).
_TAKES_ATTENTION_MASK = ("MultiHeadAttention", "GroupQueryAttention")


def _snake(class_name):
    return TABLE["layers"][class_name]["snake"]


__all__ = ["Layer", "Input", "InputLayer"] + make_classes(
    "layers", Layer, globals(), names=[n for n in TABLE["layers"] if n != "InputLayer"])


class MultiHeadAttention(MultiHeadAttention):  # noqa: F811 (the generated class, with Keras's call)
    __doc__ = MultiHeadAttention.__doc__

    def __call__(self, query, value=None, key=None, **kwargs):
        """Keras's call: mha(query, value) or mha(query, value, key)."""
        if value is None:  # nnfit's list form, mha([query, value(, key)])
            return super().__call__(query, **kwargs)
        outputs = super().__call__([query, value] + ([] if key is None else [key]), **kwargs)
        self._nodes[-1].positional = True
        return outputs


class RNN(RNN):  # noqa: F811 (the generated class, with Keras's list of cells)
    __doc__ = RNN.__doc__

    def __init__(self, cell, *args, **kwargs):
        # Keras: a list of cells is a StackedRNNCells of them.
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(list(cell))
        super().__init__(cell, *args, **kwargs)

    @property
    def cell(self):
        """The cell object (a StackedRNNCells for several), as given or read from a config."""
        value = self._args["cell"]
        if isinstance(value, dict):
            value = self._args["cell"] = deserialize(value)
        return value


def _cell_call(self, *args, **kwargs):
    raise NotImplementedError(
        f"keras.layers.{self._class_name} {self.name!r} called on its own: nnfit runs Keras's cells inside "
        f"keras.layers.RNN (RNN({self._class_name}(...)) or RNN([cell, ...])), which runs the whole sequence")


for _cell in (SimpleRNNCell, LSTMCell, GRUCell, StackedRNNCells):  # noqa: F821 (made above)
    _cell.__call__ = _cell_call
del _cell


# Keras's other names for the same classes (MaxPool2D is MaxPooling2D, ...).
RandomGrayscale._engine_args = ("seed",)  # noqa: F821 (made above); Keras's get_config drops it

for _alias, _target in TABLE["layer_aliases"].items():
    globals()[_alias] = globals()[_target]
__all__ += list(TABLE["layer_aliases"])


# Keras's functional forms of the merge layers: layers.add([a, b]) is Add()([a, b]).
def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    return Dot(axes=axes, **kwargs)(inputs)


__all__ += ["add", "concatenate", "multiply", "average", "maximum", "minimum", "subtract", "dot"]


class InputLayer(Layer):
    """Keras's InputLayer: the entry of a model (keras.Input makes one and returns its tensor)."""

    _class_name = "InputLayer"

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, input_tensor=None,
                 optional=False, name=None, **kwargs):
        if kwargs:
            raise TypeError(f"InputLayer: unexpected arguments {sorted(kwargs)}")
        if sparse:
            raise NotImplementedError("InputLayer: sparse inputs are not supported by nnfit")
        if input_tensor is not None:
            raise NotImplementedError("InputLayer: input_tensor is not supported by nnfit")
        if optional:
            raise NotImplementedError("InputLayer: optional inputs are not supported by nnfit")
        if batch_shape is None:
            if shape is None:
                raise ValueError("You must pass a `shape` argument.")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            _argument_checks.check_shape(shape)
            batch_shape = (batch_size,) + shape
        self._args = {}
        self.name = name or _state.unique_name("input_layer")
        self._batch_shape = tuple(None if d is None else int(d) for d in batch_shape)
        self._dtype = str(dtype) if dtype is not None else "float32"
        self._policy = self._dtype
        self.trainable = True
        self._model = None
        node = _graph.Node(self, None)
        node.outputs = [_graph.KerasTensor(self._batch_shape, self._dtype, (self, 0, 0), name=self.name)]
        self._nodes = [node]

    def get_config(self):
        return {"batch_shape": list(self._batch_shape), "dtype": self._dtype, "sparse": False, "ragged": False,
                "name": self.name, "optional": False}

    def _compute_dtype(self):
        return self._dtype

    built = True  # as Keras's: an input has no weights to make

    def set_weights(self, weights):
        """As Keras's: an InputLayer takes the empty list (a loop over model.layers)."""
        weights = list(weights)
        if weights:
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a weight list of length "
                             f"{len(weights)}, but the layer was expecting 0 weights.")

    def _held(self):
        return [], []



def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None,
          optional=False):
    """keras.Input: a symbolic tensor from a new InputLayer, to build a Functional model."""
    layer = InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, sparse=sparse, batch_shape=batch_shape,
                       input_tensor=tensor, optional=optional, name=name)
    return layer._nodes[0].outputs[0]


from nnfit.keras._lambda import Lambda  # noqa: E402  (its function traced as a subclassed call)
from nnfit.keras._export import InputSpec  # noqa: E402,F401  (keras.layers.InputSpec, as keras.InputSpec)

__all__.append("Lambda")
from nnfit.keras._wrapper import Wrapper  # noqa: E402  (a base for subclasses, traced as they are)

__all__.append("Wrapper")
from nnfit.keras._more_layers import (  # noqa: E402,F811  (over the generated classes of these names)
    AugMix, ContrastLimitedAdaptiveHistogramEqualization, ConvLSTM1D, ConvLSTM2D, ConvLSTM3D, GroupQueryAttention,
    MelSpectrogram, Pipeline, RandAugment, RandomElasticTransform, RandomPerspective, ReversibleEmbedding,
    SpectralNormalization, STFTSpectrogram)


def serialize(layer):
    return layer.serialize()


def deserialize(config):
    """A layer from Keras's serialized form ({"class_name", "config", ...})."""
    cls = globals().get(config["class_name"])
    if cls is None or not isinstance(cls, type) or not issubclass(cls, Layer):
        raise NotImplementedError(f"layer class {config['class_name']!r} is not supported by nnfit")
    return cls.from_config(dict(config["config"]))



class Normalization(Normalization):  # noqa: F811 (the generated class, with Keras's adapt)
    __doc__ = Normalization.__doc__

    def adapt(self, data):
        """Keras's: the mean and variance of `data` (an array, an nnfit.data.Dataset, a
        keras.utils.PyDataset or an iterable of batches) over the axes not kept, set as the
        layer's weights (nnfit.keras._normalization_adapt)."""
        from nnfit.keras import _normalization_adapt
        _normalization_adapt.adapt(self, data)

    def build(self, input_shape=None):
        if input_shape is not None:
            self._input_ndim = len(input_shape)
        super().build(input_shape)

    @property
    def mean(self):
        """Keras's: the mean the layer subtracts, shaped to broadcast against its inputs
        ((1, features) for the usual axis=-1 on rows); None before the layer is built. nnfit
        reads the current weights (Keras's is a copy made at the end of adapt or build)."""
        return self._statistic(0, "mean")

    @property
    def variance(self):
        """Keras's: the variance the layer divides by, shaped as ``mean``."""
        return self._statistic(1, "variance")

    def _statistic(self, index, key):
        from nnfit.keras import _normalization_adapt
        given = self._args.get(key)
        if not self.built:
            return None
        values = np.asarray(given if given is not None else self.get_weights()[index], "float32")
        ndim = getattr(self, "_input_ndim", None)
        if ndim is None:
            try:
                ndim = len(self.input.shape)
            except AttributeError:
                ndim = 2
        keep = sorted(a % ndim for a in _normalization_adapt._axes(self))
        shape = [1] * ndim
        if given is not None and values.ndim == 0:
            return np.full([1] * ndim, values, "float32")
        for axis, size in zip(keep[len(keep) - values.ndim:], values.shape):
            shape[axis] = size
        return values.reshape(shape)


def _not_equal(inputs, value):
    from nnfit.keras import ops
    if isinstance(inputs, _graph.KerasTensor):
        return ops.not_equal(inputs, value)
    return np.not_equal(np.asarray(inputs), value)


class Embedding(Embedding):  # noqa: F811 (the generated class, with Keras's compute_mask)
    __doc__ = Embedding.__doc__

    def compute_mask(self, inputs, mask=None):
        """Keras's: where the ids are not 0 when mask_zero=True, else None (a bool array on
        arrays, a symbolic tensor on symbolic ones)."""
        return _not_equal(inputs, 0) if self._args.get("mask_zero") else None


class Masking(Masking):  # noqa: F811 (the generated class, with Keras's compute_mask)
    __doc__ = Masking.__doc__

    def compute_mask(self, inputs, mask=None):
        """Keras's: the steps with any feature other than mask_value."""
        from nnfit.keras import ops
        if isinstance(inputs, _graph.KerasTensor):
            return ops.any(ops.not_equal(inputs, self._args.get("mask_value", 0.0)), axis=-1)
        return np.any(_not_equal(inputs, self._args.get("mask_value", 0.0)), axis=-1)

# The preprocessing layers of strings and categories: Python on NumPy, run before the engine's
# graph in a model (nnfit.keras._prefix); they replace the generated classes of their names.
from nnfit.keras._lookup import IntegerLookup, StringLookup  # noqa: E402,F811
from nnfit.keras._categorical import CategoryEncoding, Discretization, HashedCrossing, Hashing  # noqa: E402,F811
from nnfit.keras._text_vectorization import TextVectorization  # noqa: E402,F811
# Layers wrapping JAX, Flax, PyTorch or TensorFlow code: named, and refused with the reason.
from nnfit.keras._foreign_layers import FlaxLayer, JaxLayer, TFSMLayer, TorchModuleWrapper  # noqa: E402,F401
__all__ += ["FlaxLayer", "JaxLayer", "TFSMLayer", "TorchModuleWrapper"]
