"""keras.layers.Wrapper: the base of layers that wrap another, `self.layer`. Subclass it and
write `call` with `self.layer` (a residual wrapper: ``x + self.layer(x)``); the call is traced
as any subclassed layer's (nnfit.keras._tracing), the wrapped layer a sublayer under the
attribute path "layer", as Keras's files hold it. Its config is Keras's: the base Layer's keys
and "layer", the wrapped layer serialized. As in Keras 3.15, TimeDistributed is a Wrapper and
Bidirectional is not.
"""
from nnfit.keras import layers as _layers


class _WrapperType(type):
    """isinstance(TimeDistributed(...), Wrapper) is true, as Keras's class hierarchy has it
    (nnfit's TimeDistributed is the engine's layer, generated from Keras's signature)."""

    def __instancecheck__(cls, obj):
        if cls is Wrapper and isinstance(obj, _layers.TimeDistributed):
            return True
        return super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub):
        if cls is Wrapper and isinstance(sub, type) and issubclass(sub, _layers.TimeDistributed):
            return True
        return super().__subclasscheck__(sub)


class Wrapper(_layers.Layer, metaclass=_WrapperType):
    """Keras's keras.layers.Wrapper(layer, **kwargs): subclass it with a ``call`` that uses
    ``self.layer``."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, _layers.Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. Please ensure wrapped "
                             "layer is a valid Keras layer.")
        self._init_custom(**kwargs)
        if type(self).call is Wrapper.call:
            self._custom = False  # the base class itself: nothing to trace
        self.layer = layer

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} {self.name!r}: keras.layers.Wrapper has no call of its own; "
                                  "subclass it and write call() with self.layer")

    def __call__(self, inputs, *args, **kwargs):
        if type(self).call is Wrapper.call:
            self.call(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["layer"] = _layers.serialize(self.layer)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer = config.pop("layer")
        if isinstance(layer, dict):
            layer = _layers.deserialize(layer)
        dtype = config.get("dtype")
        if isinstance(dtype, dict):
            config["dtype"] = dtype.get("config", {}).get("name")
        return cls(layer, **config)
