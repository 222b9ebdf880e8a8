"""keras.backend: clear_session, and what nnfit's engine is."""
from nnfit.keras import _state


def clear_session(free_memory=True):
    """Resets the automatic layer and model names (as Keras does)."""
    _state.clear()


def backend():
    return "nnfit"


def floatx():
    return "float32"
