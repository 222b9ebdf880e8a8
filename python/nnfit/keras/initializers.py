"""keras.initializers on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults. Wherever Keras takes one of these, a name string works too."""
from nnfit.keras._object import KerasObject, make_classes


class Initializer(KerasObject):
    """Base of nnfit.keras's initializers."""

    _group = "initializers"


__all__ = ["Initializer"] + make_classes("initializers", Initializer, globals())
