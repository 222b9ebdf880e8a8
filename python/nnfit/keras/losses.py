"""keras.losses on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults. Wherever Keras takes one of these, a name string works too."""
from nnfit.keras._object import KerasObject, make_classes


class Loss(KerasObject):
    """Base of nnfit.keras's losses."""

    _group = "losses"


__all__ = ["Loss"] + make_classes("losses", Loss, globals())
