"""nnfit.keras's global state, as Keras keeps it: the names given so far (reset by
keras.backend.clear_session), the global dtype policy, the random seed and the device
models are placed on (keras.device's scope; NNFIT_DEVICE, else "auto")."""
import os
import random

_names = {}
_policy = "float32"
_seed = None
_device = []  # keras.device scopes, innermost last


def unique_name(base):
    """Keras's automatic names: "dense", then "dense_1", "dense_2", ..."""
    n = _names.get(base, 0)
    _names[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def clear():
    _names.clear()


def push_names():
    """A snapshot of the names given so far, for pop_names: a trace (nnfit.keras._tracing)
    names its operations as if it ran alone, the same in each of its passes."""
    return dict(_names)


def pop_names(saved):
    _names.clear()
    _names.update(saved)


def set_policy(name):
    global _policy
    _policy = name


def policy():
    return _policy


def device():
    """The device a model built now is placed on: the innermost keras.device scope, else
    NNFIT_DEVICE, else "auto" (the first usable GPU, else the CPU)."""
    return _device[-1] if _device else os.environ.get("NNFIT_DEVICE", "auto")


def push_device(name):
    _device.append(name)


def pop_device():
    _device.pop()


def set_seed(seed):
    global _seed
    _seed = int(seed)


def next_seed():
    """A seed for a new model or fit: from keras.utils.set_random_seed's sequence, else fresh."""
    global _seed
    if _seed is None:
        return random.SystemRandom().getrandbits(63)
    _seed = (_seed * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return _seed >> 1


def next_uid(prefix):
    """keras.backend.get_uid: the counter unique_name keeps for `prefix`, advanced."""
    _names[prefix] = _names.get(prefix, 0) + 1
    return _names[prefix]
