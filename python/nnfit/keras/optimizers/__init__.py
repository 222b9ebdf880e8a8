"""keras.optimizers on nnfit's engine: the optimizers nnfit's fused update kernels
implement, with Keras 3's arguments and defaults. ``learning_rate`` may be a number or a
keras.optimizers.schedules object."""
from nnfit.keras._object import KerasObject, make_classes
from nnfit.keras.optimizers import schedules  # noqa: F401


class Optimizer(KerasObject):
    """Base of nnfit.keras's optimizers (Keras's keras.optimizers.Optimizer)."""

    _group = "optimizers"
    _model = None  # the compiled model whose engine runs this optimizer

    @property
    def learning_rate(self):
        if self._model is not None and self._model._handle is not None and self._model._handle.compiled:
            return self._model._handle.learning_rate
        return self._args.get("learning_rate")

    @learning_rate.setter
    def learning_rate(self, value):
        if self._model is not None and self._model._handle is not None and self._model._handle.compiled:
            self._model._handle.learning_rate = float(value)
        self._args["learning_rate"] = value

    @property
    def iterations(self):
        if self._model is not None and self._model._handle is not None:
            return self._model._handle.iterations
        return 0


__all__ = ["Optimizer", "schedules", "get", "serialize", "deserialize"] + make_classes("optimizers", Optimizer,
                                                                                     globals())


def serialize(optimizer):
    return optimizer.serialize()


def deserialize(config):
    cls = globals().get(config["class_name"])
    if cls is None:
        raise NotImplementedError(f"optimizer {config['class_name']!r} is not supported by nnfit")
    return cls.from_config(dict(config["config"]))


def get(identifier):
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    names = {n.lower(): n for n in __all__}
    if isinstance(identifier, str) and identifier.lower() in names:
        return globals()[names[identifier.lower()]]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")
