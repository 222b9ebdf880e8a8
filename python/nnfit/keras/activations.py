"""keras.activations: nnfit's built-in activations by name, for ``activation=`` arguments
(each is its name; the engine computes them)."""
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
__all__ = list(_NAMES)
