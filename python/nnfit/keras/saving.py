"""keras.saving on nnfit's engine: load_model, save_model, save_weights, load_weights, and
Keras's registry of custom objects and serialization (nnfit.keras._registration and
_serialization, shared with keras.utils as Keras shares them). load_model uses the registry
to remake a subclassed layer's Python object from its config; the engine itself needs no
Python class: a subclassed layer's traced graph is in the file."""
from nnfit.keras._registration import (CustomObjectScope, custom_object_scope,  # noqa: F401
                                       get_custom_objects, get_registered_name, get_registered_object,
                                       register_keras_serializable)
from nnfit.keras._serialization import deserialize_keras_object, serialize_keras_object


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    from nnfit.keras._loading import load_model as load
    return load(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Keras's save_model: model.save(filepath, ...)."""
    model.save(filepath, overwrite=overwrite, zipped=zipped, **kwargs)


def save_weights(model, filepath, overwrite=True, max_shard_size=None, **kwargs):
    """Keras's save_weights: the weights as a .weights.h5 file (Keras's name check first)."""
    filepath_str = str(filepath)
    if max_shard_size is None and not filepath_str.endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath_str}")
    if max_shard_size is not None:
        raise NotImplementedError("keras.saving.save_weights: max_shard_size (sharded .weights.json files) is not "
                                  "supported by nnfit; save one .weights.h5 file")
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    model.save_weights(filepath_str, overwrite=overwrite)


def load_weights(model, filepath, skip_mismatch=False, **kwargs):
    """Keras's load_weights: from a .keras, .weights.h5 or legacy .h5 file."""
    filepath_str = str(filepath)
    objects_to_skip = kwargs.pop("objects_to_skip", None)
    by_name = kwargs.pop("by_name", None)
    if kwargs:
        raise ValueError(f"Invalid keyword arguments: {kwargs}")
    if objects_to_skip is not None and not filepath_str.endswith(".weights.h5"):
        raise ValueError(f"`objects_to_skip` only supports loading '.weights.h5' files.Received: {filepath}")
    if by_name is not None and not filepath_str.endswith((".h5", ".hdf5")):
        raise ValueError(f"`by_name` only supports loading legacy '.h5' or '.hdf5' files. Received: {filepath}")
    if not filepath_str.endswith((".keras", ".weights.h5", ".weights.json", ".h5", ".hdf5")):
        raise ValueError(f"File format not supported: filepath={filepath}. Keras 3 only supports V3 `.keras` and "
                         "`.weights.h5` files, or legacy V1/V2 `.h5` files.")
    if objects_to_skip or by_name:
        raise NotImplementedError("keras.saving.load_weights: objects_to_skip and by_name are not supported by nnfit")
    model.load_weights(filepath_str, skip_mismatch=skip_mismatch)


__all__ = ["register_keras_serializable", "get_registered_name", "get_registered_object", "get_custom_objects",
           "custom_object_scope", "CustomObjectScope", "load_model", "save_model", "save_weights", "load_weights",
           "serialize_keras_object", "deserialize_keras_object"]
