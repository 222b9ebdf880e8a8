"""Models as layers (Keras's ``base_model(x, training=False)``, an augmentation Sequential
inside a model, encoder/decoder models): a Sequential or Model called on symbolic tensors
becomes one node of the outer graph whose entry is the model's own Keras config, which the
engine reads as a nested model (NestedModel) as it reads Keras's files.

Weights: the nested model's weights, where it was built (a pre-trained base), are copied
into the outer model when that is built (as a layer's are: nnfit.keras._weights); from then
the outer model holds them and the nested model's own object reads and writes them there
(Model._with_weights, set_weights), as Keras's shared variables behave.
"""
from nnfit.keras import _graph, _tracing


class NestedCalls:
    """keras.Model's __call__ on symbolic tensors, and what the outer model asks of it as a
    layer (mixed into Model)."""

    _model = None    # the outer model that holds this one's weights, once built
    _carried = None

    def __call__(self, inputs, *args, training=None, mask=None, **kwargs):
        from nnfit.keras import _subclassed
        where = f"Model {self.name!r}"
        if args or kwargs or mask is not None:
            raise NotImplementedError(f"{where}: calling a model with arguments beyond its inputs and training= is "
                                      "not supported by nnfit")
        if isinstance(inputs, dict) and not self._is_sequential and self._input_keys is not None:
            missing = [k for k in self._input_keys if k not in inputs]
            if missing or len(inputs) != len(self._input_keys):
                raise ValueError(f"{where}: called with inputs {sorted(inputs)}; it takes {self._input_keys}")
            if any(isinstance(t, _graph.KerasTensor) for t in inputs.values()):  # by key, as Keras
                inputs = [inputs[k] for k in self._input_keys]
        flat = _graph.flatten(inputs)
        if not any(isinstance(t, _graph.KerasTensor) for t in flat):  # arrays: the inference program
            return self._call_on_arrays(inputs, training=training, mask=mask)
        if not all(isinstance(t, _graph.KerasTensor) for t in flat):
            raise TypeError(f"{where}: called on a mix of symbolic tensors and arrays; pass symbolic tensors "
                            "(keras.Input(...) and layer outputs) or arrays")
        if self._untraced:
            _subclassed.trace(self, [(tuple(t.shape[1:]), str(t.dtype)) for t in flat], len(flat) > 1)
        if self._is_sequential and self._input is None:
            self._set_input_from(tuple(flat[0].shape[1:]), str(flat[0].dtype))
        _tracing._note_training(self, training, where)
        if not hasattr(self, "_nodes"):
            self._nodes = []
        node = _graph.Node(self, list(inputs) if isinstance(inputs, (list, tuple)) else inputs)
        self._nodes.append(node)
        count = 1 if self._is_sequential else len(self.outputs)
        outputs = _graph.infer_outputs(self, node, count)
        if not self._is_sequential and self._output_keys is not None:
            return dict(zip(self._output_keys, outputs))
        return outputs[0] if count == 1 and (self._is_sequential or self._single_output) else outputs

    # As a layer of the outer graph.
    @property
    def _class_name(self):
        return "Sequential" if self._is_sequential else "Functional"

    def _entry(self):
        return self._model_json()

    def _compute_dtype(self):
        return "float32"

    def _elsewhere(self, model):
        """The weights of this model's layers as they are now (wherever each layer's weights
        live: a pre-trained base's layers are often trained in another model that shares
        them), in the engine's order for a nested model: layer by layer."""
        if model is self:
            return None
        values = []
        for layer in self._weight_layers():
            held = layer._elsewhere(None)
            if held is None and not isinstance(layer, NestedCalls):
                held = layer._held()
            if held is None:
                if not layer.get_weights():
                    return None  # not built anywhere: the outer model makes them
                held = (layer.get_weights(), None)
            values.extend(held[0])
        return values, None
