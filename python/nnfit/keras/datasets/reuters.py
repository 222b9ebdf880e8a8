"""keras.datasets.reuters (ported from Keras 3.15's keras/src/datasets/reuters.py; Apache
License 2.0, Copyright The Keras Authors): ``reuters.npz`` and ``reuters_word_index.json``
from Keras's cache, shuffled, shifted, cut and split exactly as Keras does."""
import json

import numpy as np

from nnfit.keras.datasets import _cache, _sequences


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113, start_char=1,
              oov_char=2, index_from=3):
    """Keras's: ``(x_train, y_train), (x_test, y_test)``, newswires as object arrays of
    lists of word indices and their topic (46 topics)."""
    path = _cache.get_file("keras.datasets.reuters.load_data", path, f"{_cache.ORIGIN_FOLDER}reuters.npz")
    f = _cache.load_npz(path)
    xs, labels = _cache.require(f, path, ["x", "y"])

    rng = np.random.RandomState(seed)
    indices = np.arange(len(xs))
    rng.shuffle(indices)
    xs = xs[indices]
    labels = labels[indices]

    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    # (Keras leaves xs as the object array here when neither applies; so does nnfit.)
    if maxlen:
        xs, labels = _cache.remove_long_seq(maxlen, xs, labels)
    xs = _sequences.cut_vocabulary(xs, num_words, skip_top, oov_char)

    idx = int(len(xs) * (1 - test_split))
    x_train, y_train = np.array(xs[:idx], dtype="object"), np.array(labels[:idx])
    x_test, y_test = np.array(xs[idx:], dtype="object"), np.array(labels[idx:])
    return (x_train, y_train), (x_test, y_test)


def get_word_index(path="reuters_word_index.json"):
    """Keras's: the dict from word to index (before ``index_from``'s shift)."""
    path = _cache.get_file("keras.datasets.reuters.get_word_index", path,
                           f"{_cache.ORIGIN_FOLDER}reuters_word_index.json")
    with open(path) as f:
        return json.load(f)


def get_label_names():
    """Keras's: the 46 topics' names, in label order."""
    return ("cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee", "sugar",
            "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx", "interest", "gnp",
            "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock", "retail", "ipi",
            "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem", "dlr", "gas", "silver",
            "wpi", "hog", "lead")
