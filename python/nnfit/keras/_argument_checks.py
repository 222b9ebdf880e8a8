"""Keras's own checks of layer and optimizer arguments, made when the object is constructed,
with Keras's exception types and words (issue 39): `Dense(0)`, `Conv2D(4, kernel_size=-1)`,
`Dropout(1.5)` or `SGD(momentum=-1)` raise ValueError at once, as in Keras 3.15, instead of
being kept in the config until the engine meets them (or never, for an unbuilt layer).
Each check is the condition of Keras's constructor (keras/src/layers/..., keras/src/
optimizers/...); bench/hostile_python_calls.py holds the calls that show each one.
"""
import numbers

_CONV = {"Conv1D": 1, "Conv2D": 2, "Conv3D": 3, "Conv1DTranspose": 1, "Conv2DTranspose": 2, "Conv3DTranspose": 3,
         "SeparableConv1D": 1, "SeparableConv2D": 2, "DepthwiseConv1D": 1, "DepthwiseConv2D": 2}
_POOL = {f"{kind}Pooling{n}D": n for kind in ("Max", "Average") for n in (1, 2, 3)}
_RNN = ("LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell", "SimpleRNNCell")
_RATE = ("Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianDropout", "AlphaDropout")
_ACTIVATION = ("Dense", "EinsumDense", "Activation", "LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell",
               "SimpleRNNCell") + tuple(_CONV)


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def standardize_tuple(value, n, name, allow_zero=False):
    """keras.src.utils.argument_validation.standardize_tuple's check."""
    error = f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}"
    if _is_int(value):
        values = (value,) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ValueError(error) from None
        if len(values) != n:
            raise ValueError(error)
        for v in values:
            try:
                int(v)
            except (ValueError, TypeError):
                raise ValueError(error + f"including element {v} of type {type(v)}") from None
    bad = {v for v in values if (v < 0 if allow_zero else v <= 0)}
    if bad:
        bound = ">=" if allow_zero else ">"
        raise ValueError(error + f", including values {bad} that do not satisfy `value {bound} 0`")


def standardize_padding(value, allow_causal=False):
    if isinstance(value, (list, tuple)):
        return
    allowed = {"valid", "same", "causal"} if allow_causal else {"valid", "same"}
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ValueError(f"The `padding` argument must be a list/tuple or one of {allowed}. Received: {value}")


def check_layer(class_name, args):
    """Raises Keras's ValueError for an argument Keras's constructor of `class_name` refuses."""
    if class_name == "Dense":
        units = args.get("units")
        if not _is_int(units) or units <= 0:
            raise ValueError("Received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units}")
    if class_name in _RNN:
        units = args.get("units")
        if not _is_int(units) or units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a positive integer, "
                             f"got {units}.")
    if class_name in _CONV:
        rank = _CONV[class_name]
        filters = args.get("filters")
        if filters is not None and (not _is_int(filters) or filters <= 0):
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        standardize_tuple(args.get("kernel_size"), rank, "kernel_size")
        standardize_tuple(args.get("strides", 1), rank, "strides")
        standardize_tuple(args.get("dilation_rate", 1), rank, "dilation_rate")
        standardize_padding(args.get("padding", "valid"), allow_causal=rank == 1)
    if class_name in _POOL:
        rank = _POOL[class_name]
        standardize_tuple(args.get("pool_size"), rank, "pool_size")
        if args.get("strides") is not None:
            standardize_tuple(args.get("strides"), rank, "strides")
        standardize_padding(args.get("padding", "valid"))
    if class_name in _RATE:
        rate = args.get("rate")
        if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
    if class_name == "Embedding":
        for key in ("input_dim", "output_dim"):
            v = args.get(key)
            if not _is_int(v) or v <= 0:
                raise ValueError(f"`{key}` must be a positive integer. Received: {key}={v} "
                                 f"(of type {type(v).__name__}).")
    if class_name == "Reshape":
        shape = args.get("target_shape")
        if isinstance(shape, (list, tuple)) and sum(1 for d in shape if d == -1) > 1:
            raise ValueError(f"There must be at most one unknown dimension (-1) in `target_shape`. Received: "
                             f"target_shape={tuple(shape)}.")
    if class_name in _ACTIVATION and isinstance(args.get("activation"), str):
        from nnfit.keras import activations
        activations.get(args["activation"])


def check_shape(shape):
    """keras.Input's shape: Keras's standardize_shape (ints or None, none negative)."""
    for d in shape:
        if d is None:
            continue
        if isinstance(d, (str, float)):
            raise ValueError(f"Cannot convert '{shape}' to a shape. Found invalid dimension '{d}' of type "
                             f"'{type(d)}'. ")
        if int(d) < 0:
            raise ValueError(f"Cannot convert '{shape}' to a shape. Negative dimensions are not allowed.")


def check_optimizer(class_name, args):
    """Keras's optimizer constructors' checks (learning_rate's type, SGD's momentum)."""
    lr = args.get("learning_rate")
    if isinstance(lr, (str, bytes)):
        raise ValueError("Argument `learning_rate` should be float, or an instance of LearningRateSchedule, or a "
                         f"callable (that takes in the current iteration value and returns the corresponding learning "
                         f"rate value). Received instead: learning_rate={lr}")
    if class_name == "SGD":
        m = args.get("momentum", 0.0)
        if not isinstance(m, float) or m < 0 or m > 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
