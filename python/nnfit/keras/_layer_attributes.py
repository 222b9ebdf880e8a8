"""Keras's attributes of a layer that nnfit keeps in other forms (mixed into
keras.layers.Layer): its dtype policy's dtypes, its activation function, a weight by its name (``dense.kernel``,
``bn.moving_mean``), and a built-in layer's constructor arguments (``dense.units``,
``conv.kernel_size`` as Keras's tuple, ``dense.activation`` as the function)."""
import re

# The weights Keras's built-in layers expose as attributes (others stay in layer.weights):
# looked up only for these names, so a duck-typing getattr never reads weights.
_WEIGHT_NAMES = frozenset({"kernel", "bias", "gamma", "beta", "moving_mean", "moving_variance", "embeddings",
                           "depthwise_kernel", "pointwise_kernel", "recurrent_kernel", "alpha", "mean", "variance"})
_PER_AXIS = ("kernel_size", "strides", "dilation_rate", "pool_size", "size")  # an int means one per axis


class LayerAttributes:
    """Mixed into keras.layers.Layer."""

    @property
    def dtype_policy(self):
        from nnfit.keras.mixed_precision import DTypePolicy
        return DTypePolicy(self._policy)

    @property
    def dtype(self):
        return self.dtype_policy.variable_dtype

    @property
    def compute_dtype(self):
        return self._compute_dtype()

    def _compute_dtype(self):
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.dtype_policy.variable_dtype

    @property
    def activation(self):
        """Keras's layer.activation: the activation function."""
        from nnfit.keras._traced_activation import function_of
        if "_activation_attr" in self.__dict__ or self._custom or "activation" not in self._args:
            try:
                return self.__dict__["_activation_attr"]
            except KeyError:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute 'activation'") from None
        return function_of(self._args["activation"])

    @activation.setter
    def activation(self, value):
        self.__dict__["_activation_attr"] = value

    @property
    def path(self):
        return self.name

    def compute_output_shape(self, input_shape):
        """Keras's: the output shape (with the batch axis) for inputs of `input_shape` (a
        list of shapes for several inputs), as the engine infers it for a built-in layer. A
        subclassed layer defines its own (nnfit traces its call instead of asking it)."""
        if self.__dict__.get("_custom", False):
            raise NotImplementedError(f"Layer {self.name!r} ({type(self).__name__}) does not define "
                                      "compute_output_shape; nnfit infers a subclassed layer's shapes by tracing its "
                                      "call in a model")
        import json
        from nnfit import _engine
        from nnfit.keras._weights import _one_layer_config
        several = bool(input_shape) and isinstance(input_shape[0], (list, tuple))
        shapes = [list(s) for s in input_shape] if several else [list(input_shape)]
        handle = _engine.get().Model.from_json(json.dumps(_one_layer_config(self, shapes)),
                                               f"layer {self.name!r}: compute_output_shape", 0, device="cpu")
        outs = [tuple(s) for s in handle.output_shapes]
        return outs[0] if len(outs) == 1 else outs

    def __getattr__(self, name):
        """Keras's attributes of a built-in layer that nnfit keeps elsewhere: a weight by its
        name (``dense.kernel``, ``bn.moving_mean``: the Variable of ``layer.weights``) and a
        constructor argument (``dense.units``, ``conv.kernel_size`` as a tuple, ``activation``
        as the function). Called only when no attribute of that name exists."""
        prop = getattr(type(self), name, None)
        if isinstance(prop, property):  # the property itself raised AttributeError: let its message through
            return prop.fget(self)
        if name.startswith("_") or self.__dict__.get("_custom", False) or "_args" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if name in _WEIGHT_NAMES:
            for w in self.weights:
                if w.name == name:
                    return w
        if name in self._args and self._own_argument(name):
            value = self._args[name]
            rank = re.search(r"([123])D", self._class_name)
            if name in _PER_AXIS and rank is not None:  # Keras's standard form: kernel_size 3 -> (3, 3)
                if value is None and name == "strides":
                    value = self._args.get("pool_size")
                if isinstance(value, int):
                    value = [value] * int(rank.group(1))
            if name == "activation" or name.endswith("_activation"):
                from nnfit.keras import activations
                return activations.get(value)
            if not isinstance(value, dict):
                return tuple(value) if isinstance(value, list) else value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

