"""keras.Sequential on nnfit's engine: a stack of layers written as Keras's Sequential
config; a subclassed layer in the stack is traced on the shape the layers before it give
(nnfit.keras._tracing)."""
from nnfit.keras import _graph, _state
from nnfit.keras import layers as layers_module
from nnfit.keras.models import Model


class Sequential(Model):
    """keras.Sequential: a stack of layers. The input shape comes from keras.Input (or an
    InputLayer) first, a first layer's ``input_shape``, or the data of the first fit,
    predict or build."""

    _is_sequential = True

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable)
        self.name = name or _state.unique_name("sequential")
        self._input = None  # (InputLayer)
        self._layers = []  # the layers (model.layers)
        self._stack = []  # the layers in order (model.layers)
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        if self._handle is not None:  # built (by summary(), build, fit...): rebuilt with the layers' weights
            self._release_layers()
        if isinstance(layer, _graph.KerasTensor) and isinstance(layer._history[0], layers_module.InputLayer):
            layer = layer._history[0]
        if isinstance(layer, layers_module.InputLayer):
            if self._input is not None or self._layers:
                raise ValueError("Sequential: an InputLayer may only come first")
            self._input = layer
            return
        if isinstance(layer, Model):  # a nested model (keras.io's Sequential([augmentation, base_model, ...]))
            if layer is self:
                raise ValueError("Sequential.add: a model cannot be a layer of itself")
            if not self._layers and self._input is None and layer._input_known() and len(layer.inputs) == 1:
                first = layer.inputs[0]  # Keras's Sequential takes a first model's input as its own
                self._input = layers_module.InputLayer(batch_shape=tuple(first.shape), dtype=first.dtype)
        elif not isinstance(layer, layers_module.Layer):
            raise TypeError(f"Sequential.add: expected a keras.layers.Layer, got {layer!r}")
        elif not self._layers and self._input is None and layer._input_shape_arg() is not None:
            self._input = layers_module.InputLayer(shape=layer._input_shape_arg())
        if isinstance(layer, Model) and layer._is_sequential and layer._input is None and self._input is not None:
            # Keras builds a nested Sequential on the shape reaching it when it is added.
            x = self._stack_output()
            layer._set_input_from(tuple(x.shape[1:]), str(x.dtype))
        layer._carried = layer._elsewhere(self)  # weights from a model it was built in
        layer._model = self
        self._layers.append(layer)
        self._stack.append(layer)

    def pop(self):
        if self._handle is not None:
            self._release_layers()
        if not self._stack:
            raise TypeError("There are no layers in the model.")
        layer = self._stack.pop()
        self._layers.pop()
        layer._model = None  # it keeps its weights (carried)
        return layer

    @property
    def inputs(self):
        return [self._input._nodes[0].outputs[0]] if self._input is not None else []

    @property
    def outputs(self):
        """Keras's: the last layer's output, once the input is known."""
        if self._input is None:
            raise AttributeError(f"Sequential model {self.name!r} has no defined outputs yet.")
        if not self._layers:
            return list(self.inputs)
        out = self._layers[-1].output
        return list(out) if isinstance(out, list) else [out]

    @outputs.setter
    def outputs(self, value):  # Model.__init__ of a Sequential never sets it; kept for symmetry
        raise AttributeError("Sequential: outputs follow from its layers")

    def _input_names(self):
        return [self._input.name] if self._input is not None else ["input_layer"]

    def _input_known(self):
        return self._input is not None

    def _model_json(self):
        if self._input is None:
            raise ValueError(f"Sequential {self.name!r} has no input shape yet: start it with keras.Input(shape=...), "
                             "or call fit, predict or build(input_shape) first")
        self._trace_custom_layers()
        if any(isinstance(l, Model) and l._is_sequential and l._input is None for l in self._layers):
            self._stack_output()  # a nested Sequential without an Input takes the shape reaching it, as in Keras
        entries = [self._input._entry()] + [layer._entry() for layer in self._layers]
        return {"module": "keras", "class_name": "Sequential",
                "config": {"name": self.name, "trainable": self.trainable, "layers": entries,
                           "build_input_shape": list(self._input._batch_shape)},
                "registered_name": None}

    def _stack_output(self):
        """The stack called on its input's symbolic tensor, layer by layer (as Keras builds a
        Sequential that starts with an Input): each layer's `output` is then defined."""
        x = self._input._nodes[0].outputs[0]
        for layer in self._layers:
            x = layer(x)
        return x

    def _set_input_from(self, shape, dtype="float32"):
        if self._input is None:
            self._input = layers_module.InputLayer(batch_shape=(None,) + tuple(shape), dtype=dtype)

    def build(self, input_shape=None):
        if input_shape is not None:
            self._set_input_from(tuple(input_shape)[1:])
        super().build()

    def _prepare(self, xs):
        if self._input is None and xs:
            self._set_input_from(xs[0].shape[1:])
        super()._prepare(xs)

    def _prepare_inference(self, xs):
        if self._input is None and xs:
            self._set_input_from(xs[0].shape[1:])
        super()._prepare_inference(xs)

    def _trace_custom_layers(self):
        """Traces the subclassed layers of the stack (once), each on the output of the
        layers before it: the stack called on its input, as Keras builds a Sequential."""
        if not any(getattr(layer, "_custom", False) and layer._trace is None for layer in self._layers):
            return
        x = self._input._nodes[0].outputs[0]
        for layer in self._layers:
            x = layer(x)
