"""Keras's keras.layers.TextVectorization on NumPy: standardize, split, n-grams, then a
StringLookup (mask "" at 0, "[UNK]" at 1), as keras/src/layers/preprocessing/
text_vectorization.py runs it on TensorFlow's string ops, whose rules are kept here:
``tf.strings.lower`` lowers ASCII letters only; punctuation is Keras's regex
(!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'); "whitespace" splits on ASCII whitespace (TF's
StringSplit), not on Python's wider set; "character" splits into code points; n-grams are
all widths' n-grams of a row, width by width, joined by a space (tf.strings.ngrams).

A callable ``standardize`` gets a NumPy array of str (as Keras gives it on its non-TF
backends) and may return an array, a list or a TensorFlow tensor; a callable ``split`` gets
the rows as a 1-D array of str and returns a list of token lists (or a ragged tensor).
"""
import re

import numpy as np

from nnfit.keras._lookup import internal_string_lookup
from nnfit.keras._registration import registered_name_or_none
from nnfit.keras._preprocessing import PreprocessingLayer, adapt_batches, as_strings, register, to_numpy

_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_SPACE = re.compile(r"[ \t\n\v\f\r]+")
_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def _check_choice(value, allowed, arg):
    if value is None or callable(value) or value in allowed:
        return
    raise ValueError(f"Unknown value for `{arg}` argument of layer TextVectorization. Allowed values are: "
                     f"{allowed + ('None', 'callable')}. Received: {value}")


def _function_config(fn):
    """A callable argument as Keras serializes a function (keras.saving's form)."""
    return {"module": getattr(fn, "__module__", None), "class_name": "function", "config": fn.__name__,
            "registered_name": registered_name_or_none(fn) or "function"}


@register
class TextVectorization(PreprocessingLayer):
    """Keras's keras.layers.TextVectorization: strings to token indices (padded to
    output_sequence_length) or to multi-hot, count or TF-IDF vectors of a vocabulary learnt
    by adapt (or given)."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None, dtype=None, trainable=True,
                 **kwargs):
        if sparse:
            raise NotImplementedError("TextVectorization: sparse=True is not supported by nnfit (its outputs are dense "
                                      "NumPy arrays); use sparse=False")
        _check_choice(standardize, ("lower_and_strip_punctuation", "lower", "strip_punctuation"), "standardize")
        _check_choice(split, ("whitespace", "character"), "split")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode not in _MODES:
            raise ValueError(f"Unknown value for `output_mode` argument of layer TextVectorization. Allowed values "
                             f"are: {_MODES}. Received: {output_mode}")
        if isinstance(ngrams, list):
            ngrams = tuple(ngrams)
        if not (ngrams is None or isinstance(ngrams, int) or isinstance(ngrams, tuple)
                and all(isinstance(i, int) for i in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams}")
        if output_mode == "int" and not (isinstance(output_sequence_length, int) or output_sequence_length is None):
            raise ValueError("`output_sequence_length` must be either None or an integer when `output_mode` is 'int'. "
                             f"Received: output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not 'int'. "
                             f"Received output_sequence_length={output_sequence_length}.")
        if ragged and output_mode != "int":
            raise ValueError(f"`ragged` must not be true if `output_mode` is `'int'`. Received: ragged={ragged} and "
                             f"output_mode={output_mode}")
        self._has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        kwargs.pop("autocast", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword argument(s): {kwargs}")
        self._init_layer(name, dtype, trainable=trainable)
        self._standardize, self._split, self._ngrams_arg = standardize, split, ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._ragged, self._output_mode = bool(ragged), output_mode
        self._output_sequence_length, self._encoding = output_sequence_length, encoding
        self._lookup_layer = internal_string_lookup(
            max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights, pad_to_max_tokens=pad_to_max_tokens,
            mask_token="", output_mode=output_mode, has_input_vocabulary=self._has_input_vocabulary,
            encoding=encoding, vocabulary_size=vocabulary_size)

    # Vocabulary (the lookup layer's).
    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    # adapt.
    def adapt(self, data, batch_size=None, steps=None):
        """Keras's adapt: the vocabulary of `data`'s tokens after standardize, split and
        n-grams (an array or list of strings, or batches of them)."""
        self.reset_state()
        batches, whole = adapt_batches(data, steps, "TextVectorization")
        for batch in batches:
            if whole:
                batch = as_strings(batch, self._encoding)
                if batch.ndim == 1:
                    batch = batch[:, None]
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        self._lookup_layer.update_state(self._preprocess(data))

    def finalize_state(self):
        self._lookup_layer.finalize_state()

    def reset_state(self):
        self._lookup_layer.reset_state()

    # The string ops.
    def _standardized(self, inputs):
        strings = as_strings(to_numpy(inputs) if not isinstance(inputs, (list, tuple)) else inputs, self._encoding)
        if self._standardize in ("lower", "lower_and_strip_punctuation"):
            strings = _map(strings, lambda s: s.translate(_ASCII_LOWER))
        if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            strings = _map(strings, lambda s: _PUNCTUATION.sub("", s))
        if callable(self._standardize):
            strings = as_strings(to_numpy(self._standardize(strings)), self._encoding)
        return strings

    def _preprocess(self, inputs):
        """Standardized, split and n-grammed inputs: a list of token lists (one per row) when
        splitting, else an array of str."""
        strings = self._standardized(inputs)
        if self._split is None:
            if self._ngrams is not None:
                rows = strings.reshape(-1, strings.shape[-1]) if strings.ndim else strings.reshape(1, 1)
                return [_ngrams(list(r), self._ngrams) for r in rows.tolist()]
            return strings
        if strings.ndim > 1:
            if strings.shape[-1] != 1:
                raise ValueError("When using `TextVectorization` to tokenize strings, the input rank must be 1 or the "
                                 f"last shape dimension must be 1. Received: inputs.shape={strings.shape} with "
                                 f"rank={strings.ndim}")
            strings = strings[..., 0]
        if self._split == "whitespace":
            rows = [[t for t in _ASCII_SPACE.split(s) if t] for s in strings.reshape(-1).tolist()]
        elif self._split == "character":
            rows = [list(s) for s in strings.reshape(-1).tolist()]
        else:
            split = self._split(strings.reshape(-1))
            split = split.to_list() if hasattr(split, "to_list") else split
            rows = [[t.decode(self._encoding) if isinstance(t, bytes) else str(t) for t in r] for r in split]
        if self._ngrams is not None:
            rows = [_ngrams(r, self._ngrams) for r in rows]
        return rows

    def call(self, inputs):
        data = self._preprocess(inputs)
        lookup = self._lookup_layer
        if not isinstance(data, list):  # no split: the lookup of each string
            out = lookup.call(data)
            if self._output_mode == "int" and self._output_sequence_length is not None:
                out = _fit_length(out, self._output_sequence_length)
            return out
        if self._output_mode == "int":
            rows = [lookup.call(np.array(r, dtype=str)) if r else np.zeros((0,), np.int64) for r in data]
            if self._ragged:
                return [r[:self._output_sequence_length] if self._output_sequence_length else r for r in rows]
            width = self._output_sequence_length
            if width is None:
                width = max((len(r) for r in rows), default=0)
            out = np.zeros((len(rows), width), dtype=np.int64)
            for i, r in enumerate(rows):
                out[i, :min(len(r), width)] = r[:width]
            return out
        if self._output_mode == "one_hot":
            raise NotImplementedError("TextVectorization: output_mode='one_hot' with a split (a ragged one-hot tensor "
                                      "in Keras) is not supported by nnfit; use 'multi_hot' or 'count', or split=None")
        return _encode_rows(lookup, data)

    def compute_output_spec_of(self, spec):
        shape = tuple(spec[0])
        if self._output_mode == "int":
            return (shape[0] if shape else None, self._output_sequence_length), "int64"
        lookup = self._lookup_layer
        depth = lookup.max_tokens if lookup.pad_to_max_tokens else lookup._frozen_vocab_size
        dtype = "float32" if self._output_mode == "tf_idf" else "int64"
        return (shape[0] if shape else None, depth), dtype

    # Config and files.
    def get_config(self):
        lookup = self._lookup_layer
        from nnfit.keras._lookup import _listify
        return {**self._base_config(), "max_tokens": lookup.max_tokens,
                "standardize": _function_config(self._standardize) if callable(self._standardize)
                else self._standardize,
                "split": _function_config(self._split) if callable(self._split) else self._split,
                "ngrams": list(self._ngrams_arg) if isinstance(self._ngrams_arg, tuple) else self._ngrams_arg,
                "output_mode": self._output_mode, "output_sequence_length": self._output_sequence_length,
                "pad_to_max_tokens": lookup.pad_to_max_tokens, "sparse": False, "ragged": self._ragged,
                "vocabulary": _listify(lookup.input_vocabulary), "idf_weights": _listify(lookup.input_idf_weights),
                "encoding": self._encoding, "vocabulary_size": self.vocabulary_size()}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        for key in ("standardize", "split"):
            if isinstance(config.get(key), dict):
                config[key] = _find_function(config[key], custom_objects)
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        return cls(**config)

    def _assets(self):
        return self._lookup_layer._assets()

    def _load_assets(self, files):
        self._lookup_layer._load_assets(files)

    def _own_variables(self):
        return self._lookup_layer._own_variables()

    def _load_own_variables(self, store):
        self._lookup_layer._load_own_variables(store)

    def _sublayers(self):
        """Keras's tracked sublayer, saved under layers/<name>/_lookup_layer too."""
        return {"_lookup_layer": self._lookup_layer}


def _map(strings, fn):
    flat = [fn(s) for s in strings.reshape(-1).tolist()]
    return np.array(flat, dtype=str).reshape(strings.shape) if flat else strings


def _ngrams(tokens, widths):
    out = []
    for n in widths:
        out += [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
    return out


def _fit_length(out, length):
    """Keras's trim-then-pad of the last axis to output_sequence_length."""
    out = out[..., :length]
    if out.shape[-1] < length:
        pad = [(0, 0)] * (out.ndim - 1) + [(0, length - out.shape[-1])]
        out = np.pad(out, pad)
    return out


def _encode_rows(lookup, rows):
    """multi_hot, count or tf_idf of ragged rows (TensorFlow's bincount over each row)."""
    depth = lookup.max_tokens if lookup.pad_to_max_tokens else lookup._frozen_vocab_size
    out = np.zeros((len(rows), depth), dtype=np.int64)
    for i, r in enumerate(rows):
        if not r:
            continue
        idx = lookup._lookup(np.array(r, dtype=str))
        idx = idx[(idx >= 0) & (idx < depth)]
        if lookup.output_mode == "multi_hot":
            out[i, idx] = 1
        else:
            np.add.at(out[i], idx, 1)
    if lookup.output_mode == "tf_idf":
        return out.astype(np.float32) * lookup.idf_weights
    return out


def _find_function(config, custom_objects):
    """A function Keras serialized ({"class_name": "function", "config": name, ...}) from
    custom_objects, keras.saving's registry or its module."""
    name = config.get("config")
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    from nnfit.keras import saving
    registered = config.get("registered_name")
    for key in (registered, name):
        if key and key != "function":
            fn = saving.get_registered_object(key)
            if fn is not None:
                return fn
    module = config.get("module")
    if module and module not in ("builtins", "__main__"):
        import importlib
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            pass
    import __main__
    if hasattr(__main__, name):
        return getattr(__main__, name)
    raise TypeError(f"Could not locate function '{name}'. Make sure custom classes and functions are decorated with "
                    "`@keras.saving.register_keras_serializable()` or passed in `custom_objects`.")
