"""keras.saving.serialize_keras_object / deserialize_keras_object (also keras.utils'), on
which keras.activations', initializers' and regularizers' get/serialize/deserialize stand.

Ported from Keras 3.15 (keras/src/saving/serialization_lib.py; Apache License 2.0,
Copyright The Keras Authors), for nnfit.keras's objects: the same JSON for plain values,
NumPy arrays and scalars, bytes, slices, lambdas, functions, Keras's built-in objects
({"module": "keras.layers", "class_name": "Dense", ...}) and registered or other custom
objects; deserialization finds a name in the custom objects (scope, registry, argument),
then in the nnfit.keras module that stands for Keras's ("keras.layers" ->
nnfit.keras.layers), then, for a function Keras writes as "builtins", in the modules of
activations, constraints, initializers, losses, metrics, optimizers and regularizers.
"""
import base64
import importlib
import marshal
import types
import warnings

import numpy as np

from nnfit.keras import _registration

PLAIN_TYPES = (str, int, float, bool)
BUILTIN_MODULES = ("activations", "constraints", "initializers", "losses", "metrics", "optimizers", "regularizers")



# keras.config.enable_unsafe_deserialization() sets it: safe_mode is then off everywhere.
UNSAFE_DESERIALIZATION = [False]

def _standardize_dtype(dtype):
    from nnfit.keras._dtypes import standardize_dtype
    return standardize_dtype(dtype)


def _config_of(obj):
    """The inner config: a function's registered name, else ``get_config()``."""
    if isinstance(obj, types.FunctionType):
        return _registration.get_registered_name(obj)
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize {obj} because it doesn't implement `get_config()`.")
    return serialize_dict(obj.get_config())


def serialize_dict(obj):
    return {key: serialize_keras_object(value) for key, value in obj.items()}


def serialize_keras_object(obj):
    """Keras's JSON-ready form of `obj` (Keras 3.15's serialize_keras_object)."""
    from nnfit.keras._graph import KerasTensor
    from nnfit.keras._object import KerasObject
    if obj is None or isinstance(obj, PLAIN_TYPES):
        return obj
    if isinstance(obj, (list, tuple)):
        items = [serialize_keras_object(x) for x in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return serialize_dict(obj)
    if isinstance(obj, bytes):
        return {"class_name": "__bytes__", "config": {"value": obj.decode("utf-8")}}
    if isinstance(obj, slice):
        return {"class_name": "__slice__", "config": {"start": serialize_keras_object(obj.start),
                                                      "stop": serialize_keras_object(obj.stop),
                                                      "step": serialize_keras_object(obj.step)}}
    if obj is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(obj, KerasTensor):
        return {"class_name": "__keras_tensor__",
                "config": {"shape": tuple(obj.shape), "dtype": obj.dtype, "keras_history": None}}
    if isinstance(obj, np.ndarray) and type(obj) is not np.ndarray:  # a weight (Variable): Keras's tensor form
        return {"class_name": "__tensor__", "config": {"value": np.asarray(obj).tolist(),
                                                       "dtype": _standardize_dtype(obj.dtype)}}
    if type(obj).__module__ == np.__name__:
        if isinstance(obj, np.ndarray) and obj.ndim > 0:
            return {"class_name": "__numpy__", "config": {"value": obj.tolist(),
                                                          "dtype": _standardize_dtype(obj.dtype)}}
        return obj.item()
    if isinstance(obj, types.FunctionType) and obj.__name__ == "<lambda>":
        warnings.warn("The object being serialized includes a `lambda`. This is unsafe. In order to reload the "
                      "object, you will have to pass `safe_mode=False` to the loading function. Please avoid using "
                      "`lambda` in the future, and use named Python functions instead.", stacklevel=2)
        code = base64.encodebytes(marshal.dumps(obj.__code__)).decode("ascii")
        closure = tuple(c.cell_contents for c in obj.__closure__) if obj.__closure__ else None
        return {"class_name": "__lambda__", "config": {"value": (code, obj.__defaults__, closure)}}
    if isinstance(obj, types.FunctionType):
        # Keras's form of every function: the class "function" of module builtins.
        return {"module": "builtins", "class_name": "function", "config": _config_of(obj),
                "registered_name": "function"}
    if isinstance(obj, KerasObject) and not getattr(obj, "_custom", False):
        return obj.serialize()  # Keras's built-in classes: {"module": "keras.layers", ...}
    cls = type(obj)
    if cls.__module__.startswith("nnfit.keras."):  # Keras's own class, written in Python here
        return {"module": cls.__module__[len("nnfit."):], "class_name": cls.__name__, "config": _config_of(obj),
                "registered_name": None}
    config = {"module": None if cls.__module__ == "__main__" else cls.__module__, "class_name": cls.__name__,
              "config": _config_of(obj), "registered_name": _registration.get_registered_name(cls)}
    if hasattr(obj, "get_build_config"):
        build_config = obj.get_build_config()
        if build_config is not None:
            config["build_config"] = serialize_dict(build_config)
    return config


def _keras_module(module):
    """The nnfit.keras module standing for Keras's `module` ("keras.layers"), or None."""
    if module == "keras" or module.startswith("keras."):
        try:
            return importlib.import_module("nnfit." + module)
        except ImportError:
            return None
    return None


def _retrieve(name, registered_name, module, obj_type, full_config, custom_objects):
    if obj_type == "function":
        found = _registration.get_registered_object(name, custom_objects=custom_objects)
    else:
        found = _registration.get_registered_object(registered_name, custom_objects=custom_objects)
    if found is not None:
        return found
    if module:
        mod = _keras_module(module)
        if mod is not None and getattr(mod, name, None) is not None:
            return getattr(mod, name)
        if obj_type == "function" and module == "builtins":
            for sub in BUILTIN_MODULES:
                obj = getattr(importlib.import_module(f"nnfit.keras.{sub}"), name, None)
                if obj is not None:
                    return obj
            if ">" not in name:
                for custom_name, custom_object in custom_objects.items():
                    if custom_name.endswith(f">{name}"):
                        return custom_object
    raise TypeError(f"Could not locate {obj_type} '{name}'. Make sure custom classes and functions are decorated "
                    "with `@keras.saving.register_keras_serializable()`. If they are already decorated, make sure "
                    "they are all imported so that the decorator is run before trying to load them. Full object "
                    f"config: {full_config}")


def _with_module_objects(config, custom_objects, module_objects):
    """Keras's short forms read with a module's objects: a name ("relu"), or a dict whose
    class_name is a name there; None when `config` is not one of them."""
    inner, fn_module = None, None
    if isinstance(config, dict):
        inner = config.get("config")
        if "class_name" not in config:
            raise ValueError(f"Unknown `config` as a `dict`, config={config}")
        if config["class_name"] in custom_objects or config.get("registered_name") in custom_objects or (
                isinstance(inner, str) and inner in custom_objects):
            return None
        if config["class_name"] == "function":
            fn_module = config["module"]
            config = config["config"] if fn_module == "builtins" else config["registered_name"]
        else:
            if config.get("module", "_") is None:
                raise TypeError(f"Cannot deserialize object of type `{config['class_name']}`. If "
                                f"`{config['class_name']}` is a custom class, please register it using the "
                                "`@keras.saving.register_keras_serializable()` decorator.")
            config = config["class_name"]
    if not isinstance(config, str) or config not in module_objects:
        return (config,)
    obj = module_objects[config]
    if isinstance(obj, types.FunctionType):
        return (obj,)
    return (obj.from_config(inner or {}),)


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object `config` describes (Keras 3.15's deserialize_keras_object)."""
    module_objects = kwargs.pop("module_objects", None)
    custom_objects = {**(custom_objects or {}), **_registration.scope_objects(), **_registration.GLOBAL_CUSTOM_OBJECTS}
    if config is None:
        return None
    if isinstance(config, str) and custom_objects.get(config) is not None:
        return custom_objects[config]
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(x, custom_objects=custom_objects, safe_mode=safe_mode) for x in config]
    if module_objects is not None:
        found = _with_module_objects(config, custom_objects, module_objects)
        if found is not None:
            return found[0]
    if isinstance(config, PLAIN_TYPES):
        return config
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config}")
    if "class_name" not in config or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects=custom_objects, safe_mode=safe_mode)
                for k, v in config.items()}
    class_name = config["class_name"]
    inner = config["config"] if config["config"] is not None else {}
    if class_name in ("__tensor__", "__numpy__"):
        return np.array(inner["value"], dtype=inner["dtype"])
    if class_name == "__keras_tensor__":
        raise NotImplementedError("deserialize_keras_object: a symbolic tensor (__keras_tensor__) is not supported by "
                                  "nnfit outside a model's config; load the model that holds it")
    if class_name == "__bytes__":
        return inner["value"].encode("utf-8")
    if class_name == "__ellipsis__":
        return Ellipsis
    if class_name == "__slice__":
        return slice(*(deserialize_keras_object(inner[k], custom_objects=custom_objects, safe_mode=safe_mode)
                       for k in ("start", "stop", "step")))
    if class_name == "__lambda__":
        if safe_mode and not UNSAFE_DESERIALIZATION[0]:
            raise ValueError("Requested the deserialization of a Python lambda. This carries a potential risk of "
                             "arbitrary code execution and thus it is disallowed by default. If you trust the source "
                             "of the artifact, you can override this error by passing `safe_mode=False` to the "
                             "loading function.")
        code, defaults, closure = inner["value"]
        fn_code = marshal.loads(base64.decodebytes(code.encode("ascii")))
        cells = tuple(types.CellType(c) for c in closure) if closure else None
        return types.FunctionType(fn_code, globals(), None, tuple(defaults) if defaults else None, cells)
    module = config.get("module", None)
    registered_name = config.get("registered_name", class_name)
    if class_name == "function":
        if not isinstance(inner, str):
            raise TypeError(f"Expected 'config' to be a non-null str for a function classname,\ninstead got "
                            f"{type(inner)}\nFull config: {config}")
        return _retrieve(inner, registered_name, module, "function", config, custom_objects)
    if not isinstance(inner, dict):
        raise TypeError(f"Expected 'config' to be a dict for {class_name},\ninstead got {type(inner)}\n"
                        f"Full config: {config}")
    cls = _retrieve(class_name, registered_name, module, "class", config, custom_objects)
    if isinstance(cls, types.FunctionType):
        return cls
    if not hasattr(cls, "from_config"):
        raise TypeError(f"Unable to reconstruct an instance of '{class_name}' because the class is missing a "
                        f"`from_config()` method. Full object config: {config}")
    with _registration.CustomObjectScope(custom_objects):
        try:
            instance = cls.from_config(inner)
        except TypeError as e:
            raise TypeError(f"{cls} could not be deserialized properly. Please ensure that components that are "
                            "Python object instances (layers, models, etc.) returned by `get_config()` are "
                            "explicitly deserialized in the model's `from_config()` method."
                            f"\n\nconfig={config}.\n\nException encountered: {e}") from None
        build_config = config.get("build_config")
        if build_config and not getattr(instance, "built", False) and hasattr(instance, "build"):
            instance.build(build_config.get("input_shape"))
    return instance


def get_object(identifier, deserialize, what):
    """Keras's keras.losses.get / keras.metrics.get: None, a name (a function's or a
    class's, read with the module's `deserialize`), a config dict, or a callable; a class
    found by name is instantiated with its defaults."""
    if identifier is None:
        return None
    obj = deserialize(identifier) if isinstance(identifier, (dict, str)) else identifier
    if isinstance(obj, type):
        obj = obj()
    if callable(obj):
        return obj
    raise ValueError(f"Could not interpret {what} identifier: {identifier}")
