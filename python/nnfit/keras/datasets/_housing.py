"""What the two housing datasets share (ported from Keras 3.15's
keras/src/datasets/boston_housing.py and california_housing.py; Apache License 2.0,
Copyright The Keras Authors): the shuffle (RandomState(seed)) and split."""
import numpy as np


def check_split(test_split):
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 "
                         "(exclusive of 1).")


def shuffle_split(x, y, test_split, seed):
    rng = np.random.RandomState(seed)
    indices = np.arange(len(x))
    rng.shuffle(indices)
    x = x[indices]
    y = y[indices]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))
