"""A built-in layer's get_config() in Keras 3's standard form (what Keras's own layers return
and its files hold), from the arguments as they were given: initializers, regularizers and
constraints named by a string become their serialized objects, sizes given as one int become
one per axis (a tuple), pooling strides default to the pool size, padding and cropping
become Keras's nested pairs, activation None is "linear", data_format None is
"channels_last". The engine reads either form; this is the form a user reads."""
import re

_PER_AXIS = ("kernel_size", "strides", "dilation_rate", "pool_size")
_PAIRS = ("padding", "cropping")  # ZeroPadding / Cropping: per axis a (before, after) pair


def _rank(class_name):
    m = re.search(r"([123])D", class_name)
    return int(m.group(1)) if m else None


def _pairs(value, rank):
    """Keras's ZeroPadding/Cropping argument as its config holds it."""
    if isinstance(value, int):
        pair = (value, value)
        return pair if rank == 1 else tuple(pair for _ in range(rank))
    value = tuple(value)
    if rank == 1:
        return value
    return tuple((v, v) if isinstance(v, int) else tuple(v) for v in value)


def keras_form(class_name, config):
    """`config` (a built-in layer's arguments) in Keras's get_config form."""
    from nnfit.keras import constraints, initializers, regularizers
    out = dict(config)
    rank = _rank(class_name)
    for key, value in config.items():
        if key.endswith("_initializer") and isinstance(value, str):
            out[key] = initializers.serialize(initializers.get(value))
        elif key.endswith("_regularizer") and isinstance(value, str):
            out[key] = regularizers.serialize(regularizers.get(value))
        elif key.endswith("_constraint") and isinstance(value, str):
            out[key] = constraints.serialize(constraints.get(value))
        elif key in ("activation", "recurrent_activation") and value is None:
            out[key] = "linear"
        elif key == "data_format" and value is None:
            out[key] = "channels_last"
        elif rank is not None and key in _PER_AXIS:
            if value is None and key == "strides":
                value = out.get("pool_size", config.get("pool_size"))
            if isinstance(value, int):
                value = (value,) * rank
            out[key] = tuple(value) if isinstance(value, list) else value
        elif rank is not None and key in _PAIRS and not (key == "padding" and isinstance(value, str)):
            out[key] = _pairs(value, rank)
        elif rank is not None and rank > 1 and key == "size" and isinstance(value, int):  # UpSampling2D/3D
            out[key] = (value,) * rank
    if "pool_size" in out and rank is not None and isinstance(out["pool_size"], int):
        out["pool_size"] = (out["pool_size"],) * rank
    if class_name == "MultiHeadAttention" and out.get("value_dim") is None:
        out["value_dim"] = out.get("key_dim")
    if class_name == "EinsumDense" and isinstance(out.get("output_shape"), int):
        out["output_shape"] = (out["output_shape"],)
    if class_name == "RandomRotation" and isinstance(out.get("factor"), (int, float)):
        out["factor"] = (-out["factor"], out["factor"])
    if class_name in ("LSTM", "GRU", "SimpleRNN", "RNN"):  # Keras's base RNN's argument
        out.setdefault("zero_output_for_mask", False)
    if class_name == "Bidirectional" and out.get("backward_layer") is None and isinstance(out.get("layer"), dict):
        # Keras's config holds the backward layer it made: the forward one's, reversed.
        backward = {**out["layer"], "config": dict(out["layer"]["config"])}
        backward["config"]["name"] = "backward_" + str(backward["config"].get("name"))
        backward["config"]["go_backwards"] = not backward["config"].get("go_backwards", False)
        out["backward_layer"] = backward
    if class_name == "LayerNormalization":
        out.setdefault("rms_scaling", False)
    if class_name.startswith("SpatialDropout"):  # Keras's own form of these: the policy's name, no trainable
        dtype = out.get("dtype")
        out["dtype"] = dtype["config"]["name"] if isinstance(dtype, dict) else dtype
        out.pop("trainable", None)
    return out
