"""keras.layers.Lambda on nnfit's engine: a layer of the model (one of ``model.layers``, with
its summary row, named "lambda" as Keras names it) whose call is its function, traced once
with keras.ops as a subclassed layer's call is (nnfit.keras._tracing; Note [Traced layers]).
Its Keras entry is the one Keras writes (module keras.layers, class Lambda, the function as
Keras serializes it: a Python lambda's bytecode, a function's registered name) with nnfit's
trace beside it, so Keras loads the file as it loads its own Lambda files (a Python lambda
with ``safe_mode=False``) and nnfit runs the trace, with or without the function. On arrays
the function runs eagerly, each keras.ops call on the engine's kernels.
"""
import base64
import inspect
import marshal
import types

from nnfit.keras import _graph, _tracing
from nnfit.keras.layers import Layer


def _function_config(fn, where):
    """Keras's Lambda._serialize_function_to_config."""
    if isinstance(fn, types.LambdaType) and fn.__name__ == "<lambda>":
        from nnfit.keras._object import to_json_value
        code = base64.encodebytes(marshal.dumps(fn.__code__)).decode("ascii")
        closure = tuple(c.cell_contents for c in fn.__closure__) if fn.__closure__ else None
        try:
            defaults, closure = to_json_value(fn.__defaults__, where), to_json_value(closure, where)
        except TypeError:  # closes over objects that are no JSON: Keras could not reload them either
            defaults, closure = None, None
        return {"class_name": "__lambda__", "config": {"code": code, "defaults": defaults, "closure": closure}}
    from nnfit.keras._serialization import serialize_keras_object
    return serialize_keras_object(fn)


def _loaded_function(name):
    def function(*args, **kwargs):
        raise NotImplementedError(f"Lambda {name!r}: loaded from a file, its Python function is not remade by nnfit "
                                  "(the model runs its trace); make the Lambda again to call it on new tensors")
    return function


class Lambda(Layer):
    """Keras's ``keras.layers.Lambda(function, output_shape=None, mask=None, arguments=None)``:
    a layer whose call is ``function(inputs, **arguments)`` (with ``mask=`` and ``training=``
    when the function takes them), traced once; ``mask`` is None, or a function of
    ``(inputs, mask)`` giving the output's mask."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, got {function!r}")
        if mask is not None and not callable(mask):
            raise NotImplementedError(f"Lambda {self.name!r}: mask= must be None or a function (inputs, mask) -> mask "
                                      "in nnfit")
        self.arguments = dict(arguments or {})
        self.function = function
        self.supports_masking = mask is not None
        self.mask = mask
        self._output_shape = output_shape
        try:
            args = inspect.getfullargspec(function).args
        except TypeError:
            args = []
        self._fn_expects_training_arg = "training" in args
        self._fn_expects_mask_arg = "mask" in args

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_expects_mask_arg:
            kwargs["mask"] = mask
        if self._fn_expects_training_arg:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def _call_takes_mask(self):
        return self._fn_expects_mask_arg

    def compute_mask(self, inputs, mask=None):
        return self.mask(inputs, mask) if callable(self.mask) else self.mask

    def __call__(self, inputs, *args, **kwargs):
        if any(isinstance(t, _graph.KerasTensor) for t in _graph.flatten(inputs)):
            return super().__call__(inputs, *args, **kwargs)
        return self.call(inputs, *args, **kwargs)  # arrays: the function runs eagerly

    def get_config(self):
        where = f"Lambda {self.name!r}"
        config = {**super().get_config(), "function": _function_config(self.function, where)}
        if self._output_shape is not None:
            shape = self._output_shape
            config["output_shape"] = _function_config(shape, where) if callable(shape) else list(shape)
        if self.mask is not None:
            config["mask"] = _function_config(self.mask, where)
        config["arguments"] = dict(self.arguments)
        return config

    @classmethod
    def from_config(cls, config):
        """A Lambda read from a file: its function is not remade (Keras runs Python bytecode
        only with safe_mode=False; nnfit runs the trace)."""
        config = dict(config)
        name = config.get("name")
        config["function"] = _loaded_function(name)
        config["mask"] = None if config.get("mask") is None else _loaded_function(name)
        dtype = config.get("dtype")
        if isinstance(dtype, dict):
            config["dtype"] = dtype.get("config", {}).get("name")
        return cls(**config)

    def serialize(self):
        return {**super().serialize(), "module": "keras.layers", "registered_name": None}

    def _entry(self):
        return {**_tracing.entry(self), "module": "keras.layers", "registered_name": None}

    def __repr__(self):
        return f"<Lambda name={self.name}, built={self.built}>"
