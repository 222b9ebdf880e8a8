"""keras.config on nnfit's engine: Keras 3.15's 25 names. The floatx, epsilon, image data
format, dtype policy and interactive logging settings are keras.backend's,
keras.mixed_precision's and keras.utils's own; enable_unsafe_deserialization turns
safe_mode off for every load (Python lambdas in files), as Keras's does. The backend is
nnfit's engine and cannot be switched; traceback filtering and flash attention are flags
nnfit keeps but does not need (its errors are one line; its attention kernel is its own);
Keras's max_epochs / max_steps_per_epoch caps are not supported (NotImplementedError when set)."""
from nnfit.keras import _serialization
from nnfit.keras import backend as _backend
from nnfit.keras import mixed_precision as _mixed_precision
from nnfit.keras import utils as _utils

backend = _backend.backend
floatx, set_floatx = _backend.floatx, _backend.set_floatx
epsilon, set_epsilon = _backend.epsilon, _backend.set_epsilon
image_data_format, set_image_data_format = _backend.image_data_format, _backend.set_image_data_format
dtype_policy, set_dtype_policy = _mixed_precision.dtype_policy, _mixed_precision.set_dtype_policy
enable_interactive_logging = _utils.enable_interactive_logging
disable_interactive_logging = _utils.disable_interactive_logging
is_interactive_logging_enabled = _utils.is_interactive_logging_enabled

_FLAGS = {"traceback_filtering": True, "flash_attention": None}


def enable_unsafe_deserialization():
    """Keras's: loading may deserialize Python lambdas (safe_mode off everywhere)."""
    _serialization.UNSAFE_DESERIALIZATION[0] = True


def set_backend(backend):
    if backend != _backend.backend():
        raise NotImplementedError(f"keras.config.set_backend({backend!r}): nnfit.keras runs on nnfit's engine; use "
                                  "`import keras` for another Keras backend")


def enable_traceback_filtering():
    _FLAGS["traceback_filtering"] = True


def disable_traceback_filtering():
    _FLAGS["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    return _FLAGS["traceback_filtering"]


def enable_flash_attention():
    _FLAGS["flash_attention"] = True


def disable_flash_attention():
    _FLAGS["flash_attention"] = False


def is_flash_attention_enabled():
    return _FLAGS["flash_attention"]


def is_nnx_enabled():
    return False  # a JAX (Flax NNX) setting


def max_epochs():
    return None


def max_steps_per_epoch():
    return None


def set_max_epochs(max_epochs):
    if max_epochs is not None:
        raise NotImplementedError("keras.config.set_max_epochs is not supported by nnfit; pass epochs to fit")


def set_max_steps_per_epoch(max_steps_per_epoch):
    if max_steps_per_epoch is not None:
        raise NotImplementedError("keras.config.set_max_steps_per_epoch is not supported by nnfit; pass "
                                  "steps_per_epoch to fit")
