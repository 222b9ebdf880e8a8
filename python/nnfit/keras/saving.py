"""keras.saving on nnfit's engine: load_model and save_model, and Keras's registry of custom
classes (register_keras_serializable, get_registered_object/name, custom_object_scope),
which load_model uses to remake a subclassed layer's Python object from its config. The
engine itself needs no Python class: a subclassed layer's traced graph is in the file."""
import contextlib

_REGISTRY = {}  # "package>Name" -> class
_SCOPES = []    # custom_object_scope dicts, innermost last


def register_keras_serializable(package="Custom", name=None):
    """Keras's decorator: registers a class as "package>name" (name: the class's)."""
    def decorator(cls):
        key = f"{package}>{name or cls.__name__}"
        if key in _REGISTRY and _REGISTRY[key] is not cls:
            raise ValueError(f"{key} has already been registered to {_REGISTRY[key]}")
        _REGISTRY[key] = cls
        cls._registered_name = key
        return cls
    return decorator


def get_registered_name(obj):
    return getattr(obj, "_registered_name", None) or obj.__name__


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class for a registered name or a class name: from `custom_objects`, the
    custom_object_scope, the registry, then `module_objects`."""
    for table in [custom_objects or {}] + _SCOPES[::-1] + [_REGISTRY, module_objects or {}]:
        if name in table:
            return table[name]
    return None


def get_custom_objects():
    return _REGISTRY


@contextlib.contextmanager
def custom_object_scope(custom_objects):
    _SCOPES.append(dict(custom_objects or {}))
    try:
        yield
    finally:
        _SCOPES.pop()


CustomObjectScope = custom_object_scope


def find_class(entry, custom_objects=None):
    """The class of a layer entry from the user's custom objects or the registry, or None."""
    for name in (entry.get("registered_name"), entry.get("class_name")):
        if name:
            cls = get_registered_object(name, custom_objects)
            if cls is not None:
                return cls
    return None


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    from nnfit.keras._loading import load_model as load
    return load(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    model.save(filepath, overwrite=overwrite, zipped=zipped, **kwargs)


__all__ = ["register_keras_serializable", "get_registered_name", "get_registered_object", "get_custom_objects",
           "custom_object_scope", "CustomObjectScope", "load_model", "save_model"]
