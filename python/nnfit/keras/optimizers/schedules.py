"""keras.optimizers.schedules: the learning-rate schedules nnfit evaluates per step."""
from nnfit.keras._object import KerasObject, make_classes


class LearningRateSchedule(KerasObject):
    """Base of nnfit.keras's learning-rate schedules."""

    _group = "schedules"


__all__ = ["LearningRateSchedule"] + make_classes("schedules", LearningRateSchedule, globals())


def serialize(learning_rate_schedule):
    """Keras's: serialize_keras_object(learning_rate_schedule)."""
    from nnfit.keras._serialization import serialize_keras_object
    return serialize_keras_object(learning_rate_schedule)


def deserialize(config, custom_objects=None):
    """Keras's: a schedule from its config."""
    from nnfit.keras._serialization import deserialize_keras_object
    objects = {name: globals()[name] for name in __all__}
    return deserialize_keras_object(config, module_objects=objects, custom_objects=custom_objects)


__all__ += ["serialize", "deserialize"]
