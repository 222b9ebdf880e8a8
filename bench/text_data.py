"""The text benchmark's data set (bench/text_bench.py): token sequences whose label is a
bag-of-polarities rule, written as NPY with the standard library only so every framework
reads the same bytes.

Vocabulary 2,000 (0 is padding); each token has a hidden polarity -1, 0 or +1 (15%, 70%,
15%); a sequence is 16..64 uniformly random tokens, post-padded with zeros to 64; its label
is 1 when its polarities sum above zero (sequences summing to zero are drawn again). A
model has to read every present token and ignore the padding (Embedding(mask_zero=True)).
"""
import random
import struct
from array import array
from pathlib import Path

VOCAB, STEPS = 2000, 64


def _write_npy(path, typecode, descr, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        array(typecode, values).tofile(f)


def make(directory, train=20000, test=5000, seed=0):
    """Writes train_x.npy (int32 [train, 64]), train_y.npy (int32 [train]), test_x.npy and
    test_y.npy into `directory`; the same seed gives the same bytes."""
    rng = random.Random(seed)
    polarity = [0] + [rng.choices((-1, 0, 1), (0.15, 0.7, 0.15))[0] for _ in range(VOCAB - 1)]
    for name, count in (("train", train), ("test", test)):
        xs, ys = [], []
        while len(ys) < count:
            length = rng.randint(16, STEPS)
            tokens = [rng.randint(1, VOCAB - 1) for _ in range(length)]
            score = sum(polarity[t] for t in tokens)
            if score == 0:
                continue
            xs.extend(tokens + [0] * (STEPS - length))
            ys.append(1 if score > 0 else 0)
        _write_npy(Path(directory) / f"{name}_x.npy", "i", "<i4", (count, STEPS), xs)
        _write_npy(Path(directory) / f"{name}_y.npy", "i", "<i4", (count,), ys)
