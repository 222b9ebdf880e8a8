"""keras.activations: nnfit's built-in activations by name, for ``activation=`` arguments
(each is its name; the engine computes them). The ones Keras 3 added (celu ... threshold)
are also functions of tensors, keras.ops' own (on arrays and on symbolic tensors)."""
_NAMES = ("relu", "sigmoid", "softmax", "tanh", "elu", "selu", "softplus", "softsign", "swish", "silu", "gelu",
          "hard_sigmoid", "hard_silu", "hard_swish", "exponential", "linear", "leaky_relu", "relu6", "mish",
          "log_softmax")


def _make(name):
    def activation(x):
        raise NotImplementedError(f"keras.activations.{name}: nnfit applies activations inside models only "
                                  f"(pass activation={name!r} or this function to a layer)")
    activation.__name__ = name
    activation.__qualname__ = name
    activation.__doc__ = f"Keras's {name} activation, as a layer's ``activation`` argument."
    return activation


for _n in _NAMES:
    globals()[_n] = _make(_n)

# Keras 3's newer activations: keras.ops.nn's functions, with Keras's signatures.
from nnfit.keras.ops._nn import (celu, glu, hard_shrink, hard_tanh, log_sigmoid, soft_shrink,  # noqa: E402
                                 sparse_plus, sparse_sigmoid, sparsemax, squareplus, tanh_shrink, threshold)

_NAMES += ("celu", "glu", "hard_shrink", "hard_tanh", "log_sigmoid", "soft_shrink", "sparse_plus", "sparse_sigmoid",
           "sparsemax", "squareplus", "tanh_shrink", "threshold")
__all__ = list(_NAMES)


def serialize(activation):
    """Keras's: an activation function as its name (a registered one as its registered name)."""
    from nnfit.keras._registration import get_registered_name
    from nnfit.keras._serialization import serialize_keras_object
    config = serialize_keras_object(activation)
    if not isinstance(config, dict) or "config" not in config:
        raise ValueError(f"Unknown activation function '{activation}' cannot be serialized due to invalid function "
                         "name. Make sure to use an activation name that matches the references defined in "
                         "activations.py or use `@keras.saving.register_keras_serializable()`to register any custom "
                         f"activations. config={config}")
    if not callable(activation) or not hasattr(activation, "__code__"):
        return config
    if isinstance(config["config"], str) and config["config"] not in _NAMES:
        config["config"] = get_registered_name(activation)
        return config
    return config["config"]


def deserialize(config, custom_objects=None):
    """Keras's: the activation function of a name or config."""
    from nnfit.keras._serialization import deserialize_keras_object
    return deserialize_keras_object(config, module_objects={n: globals()[n] for n in _NAMES},
                                    custom_objects=custom_objects)


def get(identifier):
    """Keras's: None (linear), a name, a config dict or a callable."""
    if identifier is None:
        return globals()["linear"]
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = globals()[identifier] if identifier in _NAMES else None
    else:
        obj = identifier
    if callable(obj):
        return obj
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")


__all__ += ["serialize", "deserialize", "get"]
