"""keras.backend: clear_session, what nnfit's engine is (float32, channels last), Keras's dtype
rules (nnfit.keras._dtypes) and get_uid."""
from nnfit.keras import _state
from nnfit.keras._dtypes import is_float_dtype, is_int_dtype, result_type, standardize_dtype  # noqa: F401


def clear_session(free_memory=True):
    """Resets the automatic layer and model names (as Keras does)."""
    _state.clear()


def backend():
    return "nnfit"


def floatx():
    return "float32"


def set_floatx(value):
    """Keras's set_floatx: nnfit's engine computes in float32 (mixed precision through
    keras.mixed_precision), so only "float32" is taken."""
    accepted_dtypes = {"bfloat16", "float16", "float32", "float64"}
    if value not in accepted_dtypes:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {accepted_dtypes}")
    if value != "float32":
        raise NotImplementedError(f"keras.backend.set_floatx({value!r}) is not supported by nnfit: its variables and "
                                  "defaults are float32; for float16/bfloat16 compute use "
                                  "keras.mixed_precision.set_global_policy('mixed_float16' or 'mixed_bfloat16')")


def epsilon():
    """Keras's fuzz factor, 1e-7, as user code reads it (``ops.maximum(x, epsilon())``)."""
    return 1e-7


def set_epsilon(value):
    """Keras's set_epsilon: nnfit's losses and metrics clip with Keras's default, 1e-7, only."""
    if float(value) != 1e-7:
        raise NotImplementedError(f"keras.backend.set_epsilon({value!r}) is not supported by nnfit: its losses and "
                                  "metrics use Keras's default fuzz factor, 1e-7")


def image_data_format():
    """Keras's default image layout, the one nnfit's engine computes in."""
    return "channels_last"


def set_image_data_format(data_format):
    """Keras's set_image_data_format: nnfit's engine is channels last (NHWC), so only that
    is taken (a layer's own data_format argument is still read where nnfit supports it)."""
    data_format = str(data_format).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    if data_format != "channels_last":
        raise NotImplementedError("keras.backend.set_image_data_format('channels_first') is not supported by nnfit: "
                                  "its engine lays images out channels last (NHWC); transpose the data instead")


def is_keras_tensor(x):
    """Whether `x` is a symbolic tensor (keras.Input's, or a layer's output on one)."""
    from nnfit.keras._graph import KerasTensor
    return isinstance(x, KerasTensor)


def get_uid(prefix=""):
    """Keras's get_uid: 1, 2, ... per prefix, counting the automatic names given with it
    (Keras shares the counter with them); clear_session resets it."""
    return _state.next_uid(prefix)
