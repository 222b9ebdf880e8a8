"""What CIFAR-10 and CIFAR-100 share (ported from Keras 3.15's keras/src/datasets/cifar.py;
Apache License 2.0, Copyright The Keras Authors): one pickled batch file."""
from nnfit.keras.datasets import _cache


def load_batch(fpath, label_key="labels"):
    """``(data, labels)`` of one batch file, data as (N, 3, 32, 32) uint8."""
    with open(fpath, "rb") as f:
        d = _cache.RestrictedUnpickler(f, encoding="bytes").load()
    d = {k.decode("utf8"): v for k, v in d.items()}
    if "data" not in d or label_key not in d:
        raise ValueError(f"{fpath}: no {'data' if 'data' not in d else label_key!r} entry (it holds {sorted(d)}); "
                         "it is not a CIFAR batch file: delete it and download the archive again")
    data = d["data"]
    data = data.reshape(data.shape[0], 3, 32, 32)
    return data, d[label_key]
