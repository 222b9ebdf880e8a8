"""keras.backend: clear_session, and what nnfit's engine is."""
from nnfit.keras import _state

def clear_session(free_memory=True):
    """Resets the automatic layer and model names (as Keras does)."""
    _state.clear()


def backend():
    return "nnfit"


def floatx():
    return "float32"


def epsilon():
    """Keras's fuzz factor, 1e-7, as user code reads it (``ops.maximum(x, epsilon())``)."""
    return 1e-7


def set_epsilon(value):
    """Keras's set_epsilon: nnfit's losses and metrics clip with Keras's default, 1e-7, only."""
    if float(value) != 1e-7:
        raise NotImplementedError(f"keras.backend.set_epsilon({value!r}) is not supported by nnfit: its losses and "
                                  "metrics use Keras's default fuzz factor, 1e-7")
