"""keras.layers.Lambda on nnfit's engine: the function, written with keras.ops (and
Python's operators on tensors), is traced on the symbolic inputs, so the model's graph
holds the operation nodes it made (saved as those nodes: Keras loads them as they are,
where Keras itself would save the Lambda with its Python bytecode). On arrays the function
runs eagerly, each keras.ops call on the engine's kernels.
"""
from nnfit.keras import _graph, _state


class Lambda:
    """Keras's ``keras.layers.Lambda(function, output_shape=None, mask=None, arguments=None)``.
    Not one of ``model.layers`` (its operations are nodes of the graph); ``mask`` is not
    supported."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, name=None, dtype=None,
                 trainable=True, **kwargs):
        if kwargs:
            raise TypeError(f"Lambda: unexpected arguments {sorted(kwargs)}")
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, got {function!r}")
        if mask is not None:
            raise NotImplementedError("Lambda: mask= is not supported by nnfit")
        self.function = function
        self.output_shape = output_shape
        self.arguments = dict(arguments or {})
        self.name = name or _state.unique_name("lambda")
        self.trainable = trainable

    def __call__(self, inputs, *args, **kwargs):
        if args or kwargs:
            raise NotImplementedError(f"Lambda {self.name!r}: call arguments beyond the inputs are not supported by nnfit")
        outputs = self.function(inputs, **self.arguments)
        flat_in = _graph.flatten(inputs)
        if any(isinstance(t, _graph.KerasTensor) for t in flat_in):
            if not all(isinstance(t, _graph.KerasTensor) for t in _graph.flatten(outputs)):
                raise TypeError(f"Lambda {self.name!r}: the function must return symbolic tensors made with keras.ops "
                                "from its inputs (a tensor from another framework cannot join nnfit's graph)")
            if outputs is inputs:
                return outputs
        return outputs

    def get_config(self):
        raise NotImplementedError(f"Lambda {self.name!r}: nnfit saves a Lambda as the operations it made; "
                                  "its own config (Python bytecode) is not written")

    def __repr__(self):
        return f"<Lambda name={self.name}>"
