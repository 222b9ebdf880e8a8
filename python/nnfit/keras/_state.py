"""nnfit.keras's global state, as Keras keeps it: the names given so far (reset by
keras.backend.clear_session), the global dtype policy and the random seed."""
import random

_names = {}
_policy = "float32"
_seed = None


def unique_name(base):
    """Keras's automatic names: "dense", then "dense_1", "dense_2", ..."""
    n = _names.get(base, 0)
    _names[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def clear():
    _names.clear()


def set_policy(name):
    global _policy
    _policy = name


def policy():
    return _policy


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
