"""keras.optimizers on nnfit's engine: the optimizers nnfit's fused update kernels
implement, with Keras 3's arguments and defaults. ``learning_rate`` may be a number or a
keras.optimizers.schedules object."""
from nnfit.keras import _argument_checks
from nnfit.keras._object import KerasObject, make_classes
from nnfit.keras.optimizers import schedules  # noqa: F401


class Optimizer(KerasObject):
    """Base of nnfit.keras's optimizers (Keras's keras.optimizers.Optimizer)."""

    _group = "optimizers"
    _model = None  # the compiled model whose engine runs this optimizer

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _argument_checks.check_optimizer(self._class_name, self._args)

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


class LossScaleOptimizer(Optimizer):
    """keras.optimizers.LossScaleOptimizer(inner_optimizer, initial_scale=32768.0,
    dynamic_growth_steps=2000, name=None): the inner optimizer with the loss scaled, as
    mixed_float16 needs (nnfit scales the loss by itself for a float16 model, as Keras's
    compile does; given explicitly it takes these settings). The engine scales on the device:
    a step whose gradients overflow is skipped and the scale halved; after
    `dynamic_growth_steps` good steps it doubles."""

    _class_name = "LossScaleOptimizer"

    def __init__(self, inner_optimizer, initial_scale=32768.0, dynamic_growth_steps=2000, name=None, **kwargs):
        if not isinstance(inner_optimizer, Optimizer) or isinstance(inner_optimizer, LossScaleOptimizer):
            raise ValueError("Argument `inner_optimizer` must be an instance of `keras.optimizers.Optimizer`. "
                             f"Received: inner_optimizer={inner_optimizer}")
        if kwargs:
            raise NotImplementedError(f"LossScaleOptimizer: the arguments {sorted(kwargs)} are the inner optimizer's; "
                                      "give them to it (nnfit takes them there)")
        self.inner_optimizer = inner_optimizer
        self._args = {"name": name or "loss_scale_optimizer", "inner_optimizer": inner_optimizer,
                      "initial_scale": float(initial_scale), "dynamic_growth_steps": int(dynamic_growth_steps)}

    def get_config(self):
        return {"name": self._args["name"], "inner_optimizer": self.inner_optimizer.serialize(),
                "initial_scale": self._args["initial_scale"],
                "dynamic_growth_steps": self._args["dynamic_growth_steps"]}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        inner = config.pop("inner_optimizer")
        return cls(deserialize(inner) if isinstance(inner, dict) else inner, **config)

    @property
    def _model(self):
        return self.__dict__.get("_compiled_model")

    @_model.setter
    def _model(self, model):
        self.__dict__["_compiled_model"] = model
        self.inner_optimizer._model = model

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    @property
    def initial_scale(self):
        return self._args["initial_scale"]

    @property
    def dynamic_growth_steps(self):
        return self._args["dynamic_growth_steps"]


__all__.append("LossScaleOptimizer")


class _NotInNnfit:
    """Keras 3.15's optimizers nnfit's update kernels do not implement: they exist, so code
    that names them imports, and refuse to be made, saying what to use."""

    _why = ""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"keras.optimizers.{type(self).__name__} is not supported by nnfit: {self._why}")


class Muon(_NotInNnfit):
    _why = ("its Newton-Schulz orthogonalisation of each matrix's update has no fused kernel in nnfit's engine; "
            "use AdamW, Lion or Lamb")


class MultiOptimizer(_NotInNnfit):
    _why = "nnfit's engine updates every weight of a model with one optimizer; freeze layers or use one optimizer"


class OptimizerMap(_NotInNnfit):
    _why = "it maps weights to optimizers for MultiOptimizer, which nnfit does not support"


__all__ += ["Muon", "MultiOptimizer", "OptimizerMap"]
