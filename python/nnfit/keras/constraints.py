"""keras.constraints on nnfit's engine: MaxNorm, MinMaxNorm, NonNeg and UnitNorm with Keras 3's
arguments and defaults, and their lower-case names. A layer's `kernel_constraint` (and the
other `*_constraint` arguments) is applied by the engine after each optimizer update, as
Keras applies it; a name string works wherever Keras takes one."""
from nnfit.keras._object import KerasObject, make_classes


class Constraint(KerasObject):
    """Base of nnfit.keras's constraints. A subclass with its own `__call__` (a Python
    function of the weight) cannot run inside nnfit's update step and is refused where it
    is used."""

    _group = "constraints"


__all__ = ["Constraint"] + make_classes("constraints", Constraint, globals())

# Keras's lower-case aliases: the same classes.
max_norm = MaxNorm  # noqa: F821  (made by make_classes)
min_max_norm = MinMaxNorm  # noqa: F821
non_neg = NonNeg  # noqa: F821
unit_norm = UnitNorm  # noqa: F821
__all__ += ["max_norm", "min_max_norm", "non_neg", "unit_norm"]


def get(identifier):
    """Keras's constraints.get: None, a Constraint, its name or its serialized dict."""
    if identifier is None or isinstance(identifier, Constraint):
        return identifier
    if isinstance(identifier, str):
        cls = globals().get(identifier)
        if isinstance(cls, type) and issubclass(cls, Constraint):
            return cls()
    if isinstance(identifier, dict) and "class_name" in identifier:
        return deserialize(identifier)
    raise ValueError(f"Could not interpret constraint identifier: {identifier!r}")


def serialize(constraint):
    return constraint.serialize()


def deserialize(config):
    cls = globals().get(config["class_name"])
    if not (isinstance(cls, type) and issubclass(cls, Constraint)):
        raise ValueError(f"keras.constraints: unknown constraint class {config['class_name']!r}")
    return cls.from_config(dict(config.get("config", {})))


__all__ += ["get", "serialize", "deserialize"]
