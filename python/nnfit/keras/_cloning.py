"""keras.models.clone_model and Model/Sequential.from_config: a model of the same
architecture (the same layer classes, arguments and names) with fresh weights, as Keras
makes it, built by nnfit's engine from the model's Keras config."""
import json


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, recursive=False, **kwargs):
    """Keras's clone_model: the architecture of `model` with newly initialized weights."""
    for name, value in (("input_tensors", input_tensors), ("clone_function", clone_function),
                        ("call_function", call_function)):
        if value is not None:
            raise NotImplementedError(f"clone_model: {name} is not supported by nnfit (it clones the whole "
                                      "architecture with fresh weights)")
    if kwargs:
        raise TypeError(f"clone_model: unexpected arguments {sorted(kwargs)}")
    from nnfit.keras import models
    if not isinstance(model, models.Model):
        raise ValueError(f"Expected `model` argument to be a `Model` instance. Received: model={model!r}")
    return models.model_from_json(model.to_json())


def from_config(cls, config, custom_objects=None):
    """Keras's Model.from_config / Sequential.from_config: a model from get_config()'s dict."""
    from nnfit.keras import models
    if custom_objects:
        raise NotImplementedError("from_config: custom_objects are not supported by nnfit")
    functional = "input_layers" in config
    if cls is models.Sequential and functional:
        raise ValueError("Sequential.from_config: the config is a Functional model's (it has input_layers)")
    class_name = "Functional" if functional else "Sequential"
    return models.model_from_json(json.dumps({"module": "keras", "class_name": class_name, "config": config,
                                              "registered_name": None}))
