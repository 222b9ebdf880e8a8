"""keras.metrics on nnfit's engine: the classes nnfit implements, with Keras 3's arguments
and defaults. Wherever Keras takes one of these, a name string works too."""
from nnfit.keras._object import KerasObject, make_classes


class Metric(KerasObject):
    """Base of nnfit.keras's metrics."""

    _group = "metrics"


__all__ = ["Metric"] + make_classes("metrics", Metric, globals())
