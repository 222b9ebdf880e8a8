"""Keras's lookup layers on NumPy: StringLookup and IntegerLookup over the IndexLookup logic of
keras/src/layers/preprocessing/index_lookup.py (Keras 3.15), with TensorFlow's hash table
replaced by a dict and its hashes by nnfit.keras._hashing.

What is Keras's to the letter: the vocabulary's order after adapt (count, then token, both
descending: np.lexsort((tokens, counts))[::-1]; strings compare as their UTF-8 bytes, which
is code-point order), the special tokens' places (mask, then OOV buckets), OOV buckets of
several indices (floormod of integers, FarmHash Fingerprint64 of strings and of integers'
decimal text with oov_method="farmhash", keyed SipHash with a salt), the IDF weights
(log(1 + documents / (1 + document count)), OOV weights their mean), the frozen vocabulary
size of the encoded modes, the config and the assets file.
"""
import collections

import numpy as np

from nnfit.keras import _hashing, _state
from nnfit.keras._categorical import encode
from nnfit.keras._preprocessing import PreprocessingLayer, adapt_batches, as_strings, register, to_numpy

_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
_INT64_MAX = np.iinfo(np.int64).max


class IndexLookup(PreprocessingLayer):
    """Keras's IndexLookup: the shared logic of StringLookup and IntegerLookup."""

    _strings = True

    def _init_lookup(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                     output_mode, sparse, pad_to_max_tokens, oov_method, salt, name, dtype, trainable, kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"If pad_to_max_tokens is True, must set `max_tokens`. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if oov_method not in ("floormod", "farmhash"):
            raise ValueError(f"Unknown value for `oov_method` argument of layer {type(self).__name__}. Allowed "
                             f"values are: ('floormod', 'farmhash'). Received: {oov_method}")
        if salt is not None:
            if not self._strings and oov_method != "farmhash":
                raise ValueError(f"`salt` can only be used when `oov_method='farmhash'`. Received: oov_method={oov_method}")
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                salt = list(salt)
            elif isinstance(salt, int):
                salt = [salt, salt]
            else:
                raise ValueError("The `salt` argument for `IndexLookup` can only be a tuple of 2 integers, or a single "
                                 f"integer. Received: salt={salt}.")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode not in _MODES:
            raise ValueError(f"Unknown value for `output_mode` argument of layer {type(self).__name__}. Allowed values "
                             f"are: {_MODES}. Received: {output_mode}")
        if invert and output_mode != "int":
            raise ValueError(f"`output_mode` must be `'int'` when `invert` is true. Received: output_mode={output_mode}")
        if sparse and output_mode == "int":
            raise ValueError("`sparse` may only be true if `output_mode` is `'one_hot'`, `'multi_hot'`, `'count'` or "
                             f"`'tf_idf'`. Received: sparse={sparse} and output_mode={output_mode}")
        if sparse:
            raise NotImplementedError(f"{type(self).__name__}: sparse=True is not supported by nnfit (its outputs are "
                                      "dense NumPy arrays); use sparse=False")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError("`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
                             f"idf_weights={idf_weights} and output_mode={output_mode}")
        internal_name = kwargs.pop("_internal_name", None)
        self._frozen_vocab_size = kwargs.pop("vocabulary_size", None)
        self._has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("autocast", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword argument(s): {kwargs}")
        self._init_layer(name or internal_name, dtype, trainable=trainable)
        self.invert, self.max_tokens, self.num_oov_indices = bool(invert), max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token, self.output_mode = mask_token, oov_token, output_mode
        self.sparse, self.pad_to_max_tokens, self.oov_method, self.salt = False, bool(pad_to_max_tokens), oov_method, salt
        self.input_vocabulary = vocabulary if not isinstance(vocabulary, str) else None
        self.input_idf_weights = idf_weights
        self._tokens = []  # the learnt or set vocabulary, without special tokens, in index order
        self._index = {}
        self.idf_weights = None
        if output_mode == "tf_idf":
            if self._has_input_vocabulary and idf_weights is None:
                raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output mode, the `idf_weights` "
                                 "argument must also be provided.")
            if idf_weights is not None:
                self.idf_weights = np.asarray(idf_weights, dtype=np.float32)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        self.reset_state()

    # Keys.
    def _keys(self, values):
        """Inputs as this layer's keys: str for strings, int64 for integers."""
        if self._strings:
            return as_strings(values, self.encoding)
        a = to_numpy(values) if not isinstance(values, (list, tuple)) else np.asarray(values)
        return a.astype(np.int64)

    def _token(self, value):
        return str(value) if self._strings else int(value)

    # Vocabulary.
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def vocabulary_size(self):
        """Keras's: the vocabulary's size with the mask and OOV indices."""
        return len(self._tokens) + self._token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        """Keras's: the vocabulary in index order (with the mask and OOV tokens unless
        include_special_tokens=False)."""
        vocab = [self.oov_token] * self._token_start_index() + list(self._tokens)
        if self.mask_token is not None and self.output_mode == "int":
            vocab[0] = self.mask_token
        return vocab[self._token_start_index():] if not include_special_tokens else vocab

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Keras's set_vocabulary: an array or list of terms (the special tokens first, or
        none of them), or the path of a file with one term a line."""
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError("`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                             f"output_mode={self.output_mode} and idf_weights={idf_weights}")
        if isinstance(vocabulary, str):
            import os
            if not os.path.exists(vocabulary):
                raise ValueError(f"Vocabulary file {vocabulary} does not exist.")
            if self.output_mode == "tf_idf":
                raise ValueError("output_mode `'tf_idf'` does not support loading a vocabulary from file.")
            with open(vocabulary, encoding="utf-8") as f:  # every line a term, from the first token index on
                lines = f.read().split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            self._set_tokens([self._token(v) for v in lines])
            self._record_vocabulary_size()
            return
        vocabulary = [self._token(v) for v in (vocabulary.numpy() if hasattr(vocabulary, "numpy") else vocabulary)]
        if not vocabulary:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        oov_start, token_start = self._oov_start_index(), self._token_start_index()
        special = [self.mask_token] * oov_start + [self.oov_token] * self.num_oov_indices
        found_special = vocabulary[:token_start] == special
        tokens = vocabulary[token_start:] if found_special else vocabulary
        repeated = [t for t, c in collections.Counter(tokens).items() if c > 1]
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please uniquify your dataset. The "
                             f"repeated terms are: {repeated}")
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError("Found reserved mask token at unexpected location in `vocabulary`. Note that passed "
                             "`vocabulary` does not need to include the OOV and mask tokens. Either remove all mask and "
                             "OOV tokens, or include them only at the start of the vocabulary in precisely this order: "
                             f"{special}. Received: mask_token={self.mask_token} at vocabulary index "
                             f"{[i for i, v in enumerate(vocabulary) if v == self.mask_token][-1:]}")
        if self.oov_token is not None and self.invert and self.oov_token in tokens:
            raise ValueError("Found reserved OOV token at unexpected location in `vocabulary`. Note that passed "
                             "`vocabulary` does not need to include the OOV and mask tokens. Either remove all mask and "
                             "OOV tokens, or include them only at the start of the vocabulary in precisely this order: "
                             f"{special}. Received: oov_token={self.oov_token} at vocabulary index "
                             f"{[i for i, v in enumerate(vocabulary) if v == self.oov_token][-1:]}")
        if self.max_tokens is not None and token_start + len(tokens) > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab size. Received vocabulary "
                             f"size is {token_start + len(tokens)}; `max_tokens` is {self.max_tokens}.")
        self._set_tokens(tokens)
        self._record_vocabulary_size()
        if self.output_mode == "tf_idf" and idf_weights is not None:
            idf = np.asarray(idf_weights.numpy() if hasattr(idf_weights, "numpy") else idf_weights)
            if len(vocabulary) != len(idf):
                raise ValueError(f"`idf_weights` must be the same length as vocabulary. len(idf_weights) is {len(idf)}; "
                                 f"len(vocabulary) is {len(vocabulary)}")
            if idf.ndim != 1:
                raise ValueError(f"TF-IDF data must be a 1-index array. Received: type(idf_weights)={type(idf_weights)}")
            front, front_value = (0, 0) if found_special else (token_start, np.average(idf))
            back = self.max_tokens - front - len(idf) if self.pad_to_max_tokens and self.max_tokens else 0
            self.idf_weights = np.pad(idf, (front, back), "constant",
                                      constant_values=(front_value, 0)).astype(np.float32)

    def _set_tokens(self, tokens):
        self._tokens = list(tokens)
        start = self._token_start_index()
        self._index = {t: start + i for i, t in enumerate(self._tokens)}

    def _record_vocabulary_size(self):
        if self.output_mode != "int" and not self.pad_to_max_tokens:
            size = self.vocabulary_size()
            if self._frozen_vocab_size is not None and size != self._frozen_vocab_size:
                raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, the "
                                   "vocabulary size cannot be changed after the layer is called. Old vocab size is "
                                   f"{self._frozen_vocab_size}, new vocab size is {size}")
        self._frozen_vocab_size = self.vocabulary_size()

    # adapt.
    def reset_state(self):
        if self._has_input_vocabulary:
            return
        self._token_counts = collections.Counter()
        self._document_counts = collections.Counter()
        self._num_documents = 0

    def adapt(self, data, steps=None):
        """Keras's adapt: a vocabulary of the tokens in `data` (an array or list, one
        token per element; or batches from an nnfit.data.Dataset, a keras.utils.PyDataset or
        another iterable), the most frequent first, ties by token, high to low."""
        self.reset_state()
        batches, whole = adapt_batches(data, steps, type(self).__name__)
        for batch in batches:
            if whole:
                batch = self._keys(batch)
                if batch.ndim == 1:
                    batch = batch[:, None]
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via `vocabulary` "
                             "argument or `set_vocabulary()` method.")
        rows = self._rows(data)
        for row in rows:
            self._token_counts.update(row)
        if self.output_mode == "tf_idf":
            for row in rows:
                self._document_counts.update(set(row))
            self._num_documents += len(rows)

    def _rows(self, data):
        """A batch as a list of documents, each a list of tokens (a ragged list of lists, as
        TextVectorization's split gives, or an array of rank 0, 1 (one document) or more)."""
        if isinstance(data, list) and data and all(isinstance(r, list) for r in data):
            return [[self._token(v) for v in r] for r in data]
        a = self._keys(data)
        if a.ndim == 0:
            a = a[None]
        if a.ndim == 1:
            a = a[None]
        return [[self._token(v) for v in r.ravel().tolist()] for r in a]

    def finalize_state(self):
        if self._has_input_vocabulary or not self._token_counts:
            self._record_vocabulary_size()
            return
        counts = dict(self._token_counts)
        counts.pop(self.mask_token, None)
        counts.pop(self.oov_token, None)
        order = sorted(counts, key=lambda t: (counts[t], _sort_key(t)), reverse=True)
        if self.max_tokens:
            order = order[:self.max_tokens - self._token_start_index()]
        self._set_tokens(order)
        if self.output_mode == "tf_idf":
            doc_counts = np.array([self._document_counts[t] for t in order], dtype=np.int64)
            idf = np.log(1 + self._num_documents / (1 + doc_counts)).astype(np.float32)
            idf = np.pad(idf, (self._token_start_index(), 0), constant_values=np.mean(idf, dtype=np.float32))
            if self.pad_to_max_tokens and self.max_tokens is not None:
                idf = np.pad(idf, (0, self.max_tokens - idf.size), constant_values=0)
            self.idf_weights = idf.astype(np.float32)
        self.reset_state()
        self._record_vocabulary_size()

    # Calls.
    def compute_output_spec_of(self, spec):
        shape = tuple(spec[0])
        if self.output_mode == "int":
            return shape, ("string" if self._strings else "int64") if self.invert else "int64"
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        if self.output_mode == "one_hot":
            out = (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (depth,)
        else:
            out = shape[:-1] + (depth,)
        return out, "float32" if self.output_mode == "tf_idf" else "int64"

    def call(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens and self._frozen_vocab_size is None:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you must "
                               "set the layer's vocabulary before calling it. Either pass a `vocabulary` argument to "
                               "the layer, or call `adapt` with some sample data.")
        if self.invert:
            return self._invert(inputs)
        keys = self._keys(inputs)
        lookups = self._lookup(keys)
        if self.output_mode == "int":
            return lookups
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        out = encode(lookups, "count" if self.output_mode == "tf_idf" else self.output_mode, depth, "int64")
        if self.output_mode == "tf_idf":
            if self.idf_weights is None:
                raise ValueError("When `output_mode` is `'tf_idf'`, `idf_weights` must be provided.")
            out = out.astype(np.float32) * self.idf_weights
        return out

    def _lookup(self, keys):
        """Keras's _lookup_dense: indices of the keys, the mask and the OOV buckets."""
        flat = keys.ravel().tolist()
        one_oov = self.num_oov_indices == 1
        default = self._oov_start_index() if one_oov else -1
        out = np.array([self._index.get(v, default) for v in flat], dtype=np.int64).reshape(keys.shape)
        if self.mask_token is not None:
            out = np.where(keys == self.mask_token, 0 if self.output_mode == "int" else _INT64_MAX, out)
        if self.num_oov_indices == 0:
            missing = keys[out == -1]
            if missing.size:
                raise ValueError(f"When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                                 f"{missing.tolist()}, consider setting `num_oov_indices=1`.")
        elif self.num_oov_indices > 1:
            where = out == -1
            if where.any():
                values = keys[where]
                if not self._strings and self.oov_method != "farmhash":
                    buckets = np.mod(values, self.num_oov_indices)
                elif self.salt is not None:
                    buckets = np.array(_hashing.bucket_strong(values.tolist(), self.num_oov_indices, self.salt))
                else:
                    buckets = np.array(_hashing.bucket_fast(values.tolist(), self.num_oov_indices))
                out[where] = buckets + self._oov_start_index()
        return out

    def _invert(self, inputs):
        keys = to_numpy(inputs) if not isinstance(inputs, (list, tuple)) else np.asarray(inputs)
        keys = keys.astype(np.int64)
        vocab = {i + self._token_start_index(): t for i, t in enumerate(self._tokens)}
        values = [vocab.get(i, self.oov_token) for i in keys.ravel().tolist()]
        if self.mask_token is not None:
            values = [self.mask_token if i == 0 else v for i, v in zip(keys.ravel().tolist(), values)]
        if self._strings:
            return np.array(values, dtype=str).reshape(keys.shape) if values else np.zeros(keys.shape, dtype=str)
        return np.array(values, dtype=np.int64).reshape(keys.shape)

    # Config and files.
    def get_config(self):
        return {**self._base_config(), "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token, "mask_token": self.mask_token,
                "output_mode": self.output_mode, "sparse": self.sparse, "pad_to_max_tokens": self.pad_to_max_tokens,
                "vocabulary_dtype": "string" if self._strings else "int64",
                "idf_weights": _listify(self.input_idf_weights), "vocabulary": _listify(self.input_vocabulary),
                "vocabulary_size": self._frozen_vocab_size, "oov_method": self.oov_method, "salt": self.salt}

    def _entry(self):
        entry = super()._entry()
        entry["build_config"] = {}
        return entry

    def _assets(self):
        if self.input_vocabulary is not None:  # Keras keeps it in the config
            return {}
        return {"vocabulary.txt": "\n".join(str(w) for w in self.get_vocabulary(include_special_tokens=True))}

    def _load_assets(self, files):
        if self.input_vocabulary is not None or "vocabulary.txt" not in files:
            return
        lines = files["vocabulary.txt"].splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        values = [self._token(line) for line in lines]
        if self.output_mode == "tf_idf":
            self.set_vocabulary(values, idf_weights=self.idf_weights)
        else:
            self.set_vocabulary(values)

    def _own_variables(self):
        return {"idf_weights": self.idf_weights} if self.output_mode == "tf_idf" else {}

    def _load_own_variables(self, store):
        if self.output_mode == "tf_idf" and "idf_weights" in store:
            self.idf_weights = np.asarray(store["idf_weights"], dtype=np.float32)


def _sort_key(token):
    return token.encode("utf-8") if isinstance(token, str) else token


def _listify(x):
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, tuple):
        x = list(x)
    return x


@register
class StringLookup(IndexLookup):
    """Keras's keras.layers.StringLookup: strings mapped to indices of a vocabulary (set or
    learnt by adapt), or back with invert=True."""

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, salt=None, dtype=None, trainable=True, **kwargs):
        self.encoding = encoding
        kwargs.pop("vocabulary_dtype", None)
        self._init_lookup(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                          output_mode, sparse, pad_to_max_tokens, "floormod", salt, name, dtype, trainable, kwargs)

    def get_config(self):
        config = super().get_config()
        del config["vocabulary_dtype"]
        config["encoding"] = self.encoding
        return config


@register
class IntegerLookup(IndexLookup):
    """Keras's keras.layers.IntegerLookup: integers mapped to indices of a vocabulary (set or
    learnt by adapt), or back with invert=True."""

    _strings = False

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, oov_method="floormod", salt=None, name=None, dtype=None, trainable=True,
                 **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If `max_tokens` is set for `IntegerLookup`, it must be greater than 1. Received: "
                             f"max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"The value of `num_oov_indices` argument for `IntegerLookup` must >= 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if vocabulary_dtype != "int64":
            raise ValueError(f"Only `vocabulary_dtype='int64'` is supported at this time. Received: "
                             f"vocabulary_dtype={vocabulary_dtype}")
        self._init_lookup(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                          output_mode, sparse, pad_to_max_tokens, oov_method, salt, name, dtype, trainable, kwargs)

    def get_config(self):
        config = super().get_config()
        for key in ("oov_token", "mask_token"):
            if config[key] is not None:
                config[key] = int(config[key])
        if config["vocabulary"] is not None:
            config["vocabulary"] = [int(v) for v in config["vocabulary"]]
        return config


def internal_string_lookup(**kwargs):
    """TextVectorization's StringLookup: it takes an automatic name, as Keras's does (a user's
    next StringLookup is string_lookup_1)."""
    return StringLookup(_internal_name=_state.unique_name("string_lookup"), **kwargs)
