"""A Python function as a layer's ``activation=`` (Dense(1, activation=my_fn)), traced with
keras.ops on a symbolic tensor of the layer's output shape (Note [Traced activations] in
src/nn/layer_graph.cpp): the layer's Keras entry keeps the activation as Keras writes it
(``{"module": "builtins", "class_name": "function", "config": "<registered name>"}``) with
the trace under "nnfit_trace" beside it, which Keras ignores and the engine applies to the
layer's output. A model loaded from a file keeps the file's trace, so it runs with or
without the function registered; ``layer.activation`` is the function when it is.
"""
from nnfit.keras import _graph


# The layers that apply their activation to their output (the engine's list too:
# src/model/keras/keras_traced_config.cpp); a recurrent cell applies it inside.
APPLIED = ("Dense", "EinsumDense", "Activation", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D", "DepthwiseConv2D")


def check_layer(class_name, name):
    if class_name not in APPLIED:
        raise NotImplementedError(f"{class_name} {name!r}: a Python function as the activation of a {class_name} layer "
                                  "is not supported by nnfit (it is for Dense, EinsumDense, Activation and the "
                                  "convolutions); use one of Keras's activations by name")


def is_traced(fn):
    """Whether a layer's activation argument is a Python function nnfit traces (not a name, a
    config, or one of keras.activations' built-ins, which the engine knows by name)."""
    from nnfit.keras import activations
    if fn is None or isinstance(fn, (str, dict)) or not callable(fn):
        return False
    return not any(fn is getattr(activations, n) for n in activations._NAMES)


def entry(fn, shape, where):
    """Keras's serialization of `fn` with its trace on a tensor of `shape` (the layer's output
    shape, batch axis None)."""
    from nnfit.keras import activations
    from nnfit.keras._custom_objects import _config, _input, _unbatched
    name = getattr(fn, "__name__", "activation")
    where = f"{where}: activation {name!r}"
    with _unbatched():
        x = _input("x", tuple(shape))
        y = fn(x)
        if not isinstance(y, _graph.KerasTensor):
            raise TypeError(f"{where} must return a tensor computed from its argument with keras.ops, got {y!r}")
        if tuple(y.shape) != tuple(x.shape):
            raise NotImplementedError(f"{where} changes the shape {tuple(x.shape)} to {tuple(y.shape)}; nnfit applies "
                                      "an activation element-wise to the layer's output (use a layer for the rest)")
        config = _config(name if name.isidentifier() else "activation", [x], [y], where)
    serialized = activations.serialize(fn)
    if not isinstance(serialized, dict):
        serialized = {"module": "builtins", "class_name": "function", "config": serialized,
                      "registered_name": "function"}
    return {**serialized, "nnfit_trace": {"graph": config}}


def function_of(value):
    """``layer.activation``: the function of a layer's activation argument (a name, a
    function, or Keras's serialized form read from a file, found in the registry or
    custom_objects)."""
    from nnfit.keras import activations
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != "nnfit_trace"}
    return activations.get(value)
