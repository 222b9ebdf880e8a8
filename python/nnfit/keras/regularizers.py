"""keras.regularizers on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults. Wherever Keras takes one of these, a name string works too."""
from nnfit.keras._object import KerasObject, make_classes


class Regularizer(KerasObject):
    """Base of nnfit.keras's regularizers."""

    _group = "regularizers"


__all__ = ["Regularizer"] + make_classes("regularizers", Regularizer, globals())


def l1(l1=0.01):
    return L1(l1)


def l2(l2=0.01):
    return L2(l2)


def l1_l2(l1=0.0, l2=0.0):
    return L1L2(l1, l2)


orthogonal_regularizer = OrthogonalRegularizer  # noqa: F821 (Keras's alias: the same class)


def _all_objects():
    return {"L1": L1, "L2": L2, "L1L2": L1L2, "OrthogonalRegularizer": OrthogonalRegularizer,  # noqa: F821
            "l1": L1, "l2": L2, "l1l2": L1L2, "orthogonal_regularizer": OrthogonalRegularizer}  # noqa: F821


def serialize(regularizer):
    """Keras's: serialize_keras_object(regularizer)."""
    from nnfit.keras._serialization import serialize_keras_object
    return serialize_keras_object(regularizer)


def deserialize(config, custom_objects=None):
    """Keras's: a regularizer from its config or name."""
    from nnfit.keras._serialization import deserialize_keras_object
    return deserialize_keras_object(config, module_objects=_all_objects(), custom_objects=custom_objects)


def get(identifier):
    """Keras's: None, a name ("l2"), a config dict, a class (made with its defaults) or a callable."""
    import inspect
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = _all_objects().get(identifier)
    else:
        obj = identifier
    if callable(obj) or isinstance(obj, KerasObject):  # nnfit's regularizers are configs, not callables
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")


__all__ += ["orthogonal_regularizer", "serialize", "deserialize", "get"]
