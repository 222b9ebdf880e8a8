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
