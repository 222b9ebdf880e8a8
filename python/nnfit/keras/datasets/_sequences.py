"""What IMDB and Reuters share (ported from Keras 3.15's keras/src/datasets/imdb.py and
reuters.py; Apache License 2.0, Copyright The Keras Authors): the word-index shift, the
start and out-of-vocabulary characters and the vocabulary cut, exactly as Keras does them."""


def shift(xs, start_char, index_from):
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in xs]
    if index_from:
        return [[w + index_from for w in x] for x in xs]
    return [[w for w in x] for x in xs]


def cut_vocabulary(xs, num_words, skip_top, oov_char):
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]
