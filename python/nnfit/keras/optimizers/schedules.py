"""keras.optimizers.schedules: the learning-rate schedules nnfit evaluates per step."""
from nnfit.keras._object import KerasObject, make_classes


class LearningRateSchedule(KerasObject):
    """Base of nnfit.keras's learning-rate schedules."""

    _group = "schedules"


__all__ = ["LearningRateSchedule"] + make_classes("schedules", LearningRateSchedule, globals())
