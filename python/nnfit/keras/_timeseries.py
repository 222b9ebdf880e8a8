"""keras.utils.timeseries_dataset_from_array: sliding windows over an array as a BatchDataset.

Ported from Keras 3.15 (keras/src/utils/timeseries_dataset_utils.py; Apache License 2.0,
Copyright The Keras Authors): the same checks and messages, windows (start positions
0, sequence_stride, ... within [start_index, end_index), each of sequence_length steps
sampling_rate apart), targets (targets[start_index + position]) and, with shuffle, the same
permutation of the start positions (NumPy's RandomState(seed), as Keras draws it). Keras then
shuffles again through tf.data's buffer (batch_size * 8 windows); nnfit's buffer draws from
NumPy's generator (Note [Shuffling a BatchDataset]), so a shuffled pass has Keras's windows in
another order. Windows keep the data's dtype, as Keras's tensors do.
"""
import numpy as np

from nnfit.keras._batch_dataset import BatchDataset


def _check(data, sequence_stride, sampling_rate, start_index, end_index, format):
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= len(data):
            raise ValueError("`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {len(data)}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= len(data):
            raise ValueError("`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {len(data)}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    if sampling_rate <= 0:
        raise ValueError(f"`sampling_rate` must be higher than 0. Received: sampling_rate={sampling_rate}")
    if sampling_rate >= len(data):
        raise ValueError("`sampling_rate` must be lower than the length of the data. Received: "
                         f"sampling_rate={sampling_rate}, for data of length {len(data)}")
    if sequence_stride <= 0:
        raise ValueError(f"`sequence_stride` must be higher than 0. Received: sequence_stride={sequence_stride}")
    if sequence_stride >= len(data):
        raise ValueError("`sequence_stride` must be lower than the length of the data. Received: "
                         f"sequence_stride={sequence_stride}, for data of length {len(data)}")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1, batch_size=128,
                                  shuffle=False, seed=None, start_index=None, end_index=None, format="tf"):
    """Keras's: batches of windows (batch, sequence_length, ...) of `data`, with the target
    of each window's first step when `targets` is given; a BatchDataset that fit, evaluate
    and predict take."""
    _check(data, sequence_stride, sampling_rate, start_index, end_index, format)
    start_index = 0 if start_index is None else start_index
    end_index = len(data) if end_index is None else end_index
    num_seqs = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    index_dtype = "int32" if num_seqs < 2147483647 else "int64"
    start_positions = np.arange(0, num_seqs, sequence_stride, dtype=index_dtype)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(start_positions)
    steps = np.asarray(data[start_index:end_index])
    target_steps = None if targets is None else np.asarray(targets[start_index:end_index])
    offsets = np.arange(sequence_length, dtype=index_dtype) * sampling_rate

    def window(i):
        position = start_positions[i]
        x = steps[position + offsets]
        return x if target_steps is None else (x, target_steps[position])

    buffer = (batch_size * 8 if batch_size is not None else 1024) if shuffle else None
    return BatchDataset(len(start_positions), window, batch_size, shuffle_buffer=buffer, seed=seed)
