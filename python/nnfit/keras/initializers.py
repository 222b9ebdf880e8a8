"""keras.initializers on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults. Wherever Keras takes one of these, a name string works too."""
from nnfit.keras._object import KerasObject, make_classes


class Initializer(KerasObject):
    """Base of nnfit.keras's initializers."""

    _group = "initializers"


__all__ = ["Initializer"] + make_classes("initializers", Initializer, globals())

# Keras's other names for the same classes (keras.initializers.glorot_uniform is GlorotUniform).
_ALIASES = {"constant": "Constant", "glorot_normal": "GlorotNormal", "glorot_uniform": "GlorotUniform",
            "he_normal": "HeNormal", "he_uniform": "HeUniform", "identity": "Identity", "IdentityInitializer": "Identity",
            "lecun_normal": "LecunNormal", "lecun_uniform": "LecunUniform", "ones": "Ones", "orthogonal": "Orthogonal",
            "OrthogonalInitializer": "Orthogonal", "random_normal": "RandomNormal", "random_uniform": "RandomUniform",
            "truncated_normal": "TruncatedNormal", "variance_scaling": "VarianceScaling", "zeros": "Zeros"}
for _alias, _name in _ALIASES.items():
    globals()[_alias] = globals()[_name]
__all__ += list(_ALIASES)


# Names Keras's get and deserialize take that are not attributes of keras.initializers
# (Embedding's default "uniform").
_GET_ONLY = {"normal": "RandomNormal", "one": "Ones", "uniform": "RandomUniform", "zero": "Zeros"}


def _all_objects():
    objects = {name: globals()[name] for name in __all__ if name != "Initializer"}
    objects.update({alias: globals()[name] for alias, name in _GET_ONLY.items()})
    return objects


def serialize(initializer):
    """Keras's: serialize_keras_object(initializer)."""
    from nnfit.keras._serialization import serialize_keras_object
    return serialize_keras_object(initializer)


def deserialize(config, custom_objects=None):
    """Keras's: an initializer from its config (class names and their snake-case aliases)."""
    from nnfit.keras._serialization import deserialize_keras_object
    return deserialize_keras_object(config, module_objects=_all_objects(), custom_objects=custom_objects)


def get(identifier):
    """Keras's: None, a name ("glorot_uniform"), a config dict, a class or a callable."""
    import inspect
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = deserialize({"class_name": str(identifier), "config": {}})
    else:
        obj = identifier
    if callable(obj) or isinstance(obj, KerasObject):  # nnfit's initializers are configs, not callables
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")


__all__ += ["serialize", "deserialize", "get"]
