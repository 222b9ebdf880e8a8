"""keras.datasets.imdb (ported from Keras 3.15's keras/src/datasets/imdb.py; Apache License
2.0, Copyright The Keras Authors): ``imdb.npz`` and ``imdb_word_index.json`` from Keras's
cache, shuffled, shifted and cut exactly as Keras does (NumPy's RandomState(seed))."""
import json

import numpy as np

from nnfit.keras.datasets import _cache, _sequences


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3, **kwargs):
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, the reviews as object arrays of
    lists of word indices. ``kwargs`` are accepted and ignored, as Keras 3 does."""
    path = _cache.get_file("keras.datasets.imdb.load_data", path, f"{_cache.ORIGIN_FOLDER}imdb.npz")
    f = _cache.load_npz(path)
    x_train, labels_train, x_test, labels_test = _cache.require(f, path, ["x_train", "y_train", "x_test", "y_test"])

    rng = np.random.RandomState(seed)
    indices = np.arange(len(x_train))
    rng.shuffle(indices)
    x_train = x_train[indices]
    labels_train = labels_train[indices]
    indices = np.arange(len(x_test))
    rng.shuffle(indices)
    x_test = x_test[indices]
    labels_test = labels_test[indices]

    x_train = _sequences.shift(x_train, start_char, index_from)
    x_test = _sequences.shift(x_test, start_char, index_from)
    if maxlen:
        x_train, labels_train = _cache.remove_long_seq(maxlen, x_train, labels_train)
        x_test, labels_test = _cache.remove_long_seq(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. "
                             "Increase maxlen.")
    xs = _sequences.cut_vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    idx = len(x_train)
    x_train, y_train = np.array(xs[:idx], dtype="object"), labels[:idx]
    x_test, y_test = np.array(xs[idx:], dtype="object"), labels[idx:]
    return (x_train, y_train), (x_test, y_test)


def get_word_index(path="imdb_word_index.json"):
    """Keras's: the dict from word to index (before ``index_from``'s shift)."""
    path = _cache.get_file("keras.datasets.imdb.get_word_index", path,
                           f"{_cache.ORIGIN_FOLDER}imdb_word_index.json")
    with open(path) as f:
        return json.load(f)
