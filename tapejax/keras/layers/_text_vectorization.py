"""Keras 3's ``TextVectorization``: strings -> standardized -> split -> (n-grams) -> vocabulary indices.

It runs on the host (NumPy), as string tensors live there (a compiled function records it with
``tapejax._core.host``, as ``StringLookup``), with TensorFlow's string semantics: ``lower`` is
ASCII-only (``tf.strings.lower``), punctuation is Keras's regular expression, ``whitespace``
splits on runs of ASCII whitespace (``tf.strings.split``), n-grams join tokens with a space
(``tf.strings.ngrams``). The vocabulary is a ``StringLookup`` with mask token ``""`` and OOV token
``"[UNK]"``; ``adapt`` counts the tokens (by decreasing count, ties by decreasing token).
"""
import re

import jax.numpy as jnp
import numpy as np

from ... import data as _data
from ..._core import host as _host
from ..._core.tensor import Tensor, _TensorBase, string_array
from ._base import Layer, _Spec
from ._lookup import StringLookup

_STRIP = re.compile(rb'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")


def _bytes(t):
    return t.encode("utf-8") if isinstance(t, str) else bytes(t)


class TextVectorization(Layer):
    """Turns strings into sequences of token indices (or multi-hot / count vectors), as Keras 3.

    Each string is standardized (``"lower_and_strip_punctuation"`` by default, ``"lower"``,
    ``"strip_punctuation"``, None or a callable on a string tensor), split (``"whitespace"``,
    ``"character"``, None or a callable), optionally expanded to n-grams, then looked up in the
    vocabulary (``vocabulary=`` or learned by :meth:`adapt`): index 0 is padding (``""``), 1 the
    OOV token ``"[UNK]"``. ``output_mode="int"`` gives int64 ``(batch, length)`` indices, padded with
    0 to the longest sequence or to ``output_sequence_length`` (and truncated to it);
    ``"multi_hot"`` / ``"count"`` give float32 ``(batch, vocabulary size)`` vectors.

    Args:
        max_tokens: the largest vocabulary (with padding and OOV) ``adapt`` keeps.
        standardize, split: see above.
        ngrams: None, an int ``n`` (1..n-grams) or a tuple of n-gram sizes.
        output_mode: ``"int"``, ``"multi_hot"`` or ``"count"`` (``"tf_idf"`` is not provided).
        output_sequence_length: the ``"int"`` output's length.
        pad_to_max_tokens: ``"multi_hot"`` / ``"count"`` vectors of ``max_tokens`` columns.
        vocabulary: a list of tokens (or a file path, one token a line).

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.TextVectorization(max_tokens=6, output_sequence_length=4)
        >>> layer.adapt(["The cat sat.", "The dog sat on the mat!"])
        >>> layer.get_vocabulary()
        ['', '[UNK]', np.str_('the'), np.str_('sat'), np.str_('on'), np.str_('mat')]
        >>> layer(["the cat sat", "a dog"]).numpy().tolist()
        [[2, 1, 3, 0], [1, 1, 0, 0]]
    """

    _allow_non_tensor_positional_args = True

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None, **kwargs):
        if output_mode == "tf_idf" or idf_weights is not None:
            raise NotImplementedError("output_mode='tf_idf' is not provided by tapejax's TextVectorization: use "
                                      "'count' and weight the counts.")
        if ragged or sparse:
            raise NotImplementedError("tapejax's TextVectorization gives dense outputs (ragged=False, sparse=False).")
        if output_mode not in ("int", "multi_hot", "count"):
            raise ValueError("Invalid value for argument `output_mode`. Expected one of ['int', 'multi_hot', "
                             f"'count', 'tf_idf']. Received: output_mode={output_mode}")
        if not (standardize is None or callable(standardize) or standardize in _STANDARDIZE):
            raise ValueError(f"Invalid value for argument `standardize`. Expected one of {list(_STANDARDIZE)} or a "
                             f"callable. Received: standardize={standardize}")
        if not (split is None or callable(split) or split in _SPLIT):
            raise ValueError(f"Invalid value for argument `split`. Expected one of {list(_SPLIT)} or a callable. "
                             f"Received: split={split}")
        if not (ngrams is None or isinstance(ngrams, int) and ngrams > 0 or isinstance(ngrams, tuple) and
                all(isinstance(n, int) and n > 0 for n in ngrams)):
            raise ValueError("`ngrams` must be None, an integer, or a tuple of integers. Received: "
                             f"ngrams={ngrams}")
        if output_mode == "int" and not (isinstance(output_sequence_length, int) or output_sequence_length is None):
            raise ValueError("`output_sequence_length` must be either None or an integer when `output_mode` is "
                             f"'int'. Received: output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not 'int'. "
                             f"Received output_sequence_length={output_sequence_length}.")
        kwargs.pop("vocabulary_size", None)
        super().__init__(name=name, autocast=False, **kwargs)
        self._max_tokens = max_tokens
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._output_mode = output_mode
        self._output_sequence_length = output_sequence_length
        self._pad_to_max_tokens = pad_to_max_tokens
        self._encoding = encoding
        if isinstance(vocabulary, str):
            with open(vocabulary, encoding=encoding) as f:
                vocabulary = [line.rstrip("\n") for line in f]
        self._lookup_layer = StringLookup(max_tokens=max_tokens, vocabulary=vocabulary, mask_token="",
                                          output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens,
                                          name=f"{self.name}_string_lookup" if name is None else None)

    # -- vocabulary ----------------------------------------------------------------------

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary in index order: ``''`` (padding), ``'[UNK]'``, then the tokens."""
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        """The number of indices (tokens plus padding and OOV)."""
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the tokens (special tokens at the start are skipped)."""
        if idf_weights is not None:
            raise NotImplementedError("idf_weights (output_mode='tf_idf') are not provided by tapejax.")
        self._lookup_layer.set_vocabulary(vocabulary)

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary from strings: an array, a list, a tensor or a dataset of them."""
        if isinstance(data, _data.Dataset):
            batches = data.take(steps) if steps is not None else data
            tokens = [t for batch in batches for row in self._k_tokenize(batch)[0] for t in row]
        else:
            tokens = [t for row in self._k_tokenize(data)[0] for t in row]
        self._lookup_layer.adapt(np.array(tokens, dtype=object) if tokens else np.array([], dtype=object))

    # -- the computation -------------------------------------------------------------------

    def _k_tokenize(self, inputs):
        """``(rows of byte tokens, batch shape)``: the standardized, split (and n-grammed) inputs."""
        if isinstance(inputs, _TensorBase):
            a = string_array(np.asarray(inputs._value))
        else:
            a = string_array(np.asarray(inputs, dtype=object))
        if a.ndim > 1:
            if a.shape[-1] != 1:
                raise ValueError("When using `TextVectorization` to tokenize strings, the input rank must be 1 or "
                                 f"the last shape dimension must be 1. Received: inputs.shape={a.shape} with "
                                 f"rank={a.ndim}")
            a = a.reshape(a.shape[:-1])
        strings = [_bytes(s) for s in a.reshape(-1)]   # a scalar string: one row, an unbatched output
        if callable(self._standardize):
            strings = [_bytes(s) for s in string_array(np.asarray(self._standardize(Tensor(
                string_array(np.array(strings, dtype=object)))).numpy(), dtype=object)).reshape(-1)]
        elif self._standardize is not None:
            if self._standardize in ("lower", "lower_and_strip_punctuation"):
                strings = [s.lower() for s in strings]    # ASCII only, as tf.strings.lower
            if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
                strings = [_STRIP.sub(b"", s) for s in strings]
        if self._split is None:
            rows = [[s] for s in strings]
        elif callable(self._split):
            split = self._split(Tensor(string_array(np.array(strings, dtype=object))))
            rows = [[_bytes(t) for t in (r.numpy() if hasattr(r, "numpy") else r)] for r in split]
        elif self._split == "whitespace":
            rows = [s.split() for s in strings]
        else:
            rows = [[c.encode("utf-8") for c in s.decode("utf-8")] for s in strings]
        if self._ngrams is not None:
            rows = [[b" ".join(row[i:i + n]) for n in self._ngrams for i in range(len(row) - n + 1)] for row in rows]
        return rows, a.shape

    def _k_vectorize(self, inputs):
        rows, shape = self._k_tokenize(inputs)
        if self._output_mode == "int":
            length = self._output_sequence_length
            if length is None:
                length = max((len(r) for r in rows), default=0)
            padded = np.full((len(rows), length), b"", dtype=object)
            for i, r in enumerate(rows):
                r = r[:length]
                padded[i, :len(r)] = r
            out = self._lookup_layer._k_lookup_strings(string_array(padded)).numpy()
            return Tensor(jnp.asarray(out.reshape(tuple(shape) + (length,))))
        length = max((len(r) for r in rows), default=0)
        padded = np.full((len(rows), max(length, 1)), b"", dtype=object)
        for i, r in enumerate(rows):
            padded[i, :len(r)] = r
        out = self._lookup_layer._k_lookup_strings(string_array(padded)).numpy()
        return Tensor(jnp.asarray(out.reshape(tuple(shape) + (out.shape[-1],))))

    def call(self, inputs):
        self._lookup_layer._k_depth()
        return _host.call("TextVectorization", self._k_vectorize, inputs)

    def _k_output_specs(self, fn, inputs):
        shape = tuple(inputs[0].shape)
        if len(shape) > 1 and shape[-1] == 1:
            shape = shape[:-1]
        if self._output_mode == "int":
            return _Spec(shape + (self._output_sequence_length,), np.int64)
        return _Spec(shape + (self._lookup_layer._k_depth(),), np.float32)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if len(shape) > 1 and shape[-1] == 1:
            shape = shape[:-1]
        if self._output_mode == "int":
            return shape + (self._output_sequence_length,)
        return shape + (self._lookup_layer._k_depth(),)

    def get_config(self):
        vocab = self._lookup_layer.input_vocabulary
        return {**super().get_config(), "max_tokens": self._max_tokens, "standardize": self._standardize,
                "split": self._split, "ngrams": self._ngrams_arg, "output_mode": self._output_mode,
                "output_sequence_length": self._output_sequence_length,
                "pad_to_max_tokens": self._pad_to_max_tokens, "sparse": False, "ragged": False,
                "vocabulary": None if vocab is None else list(vocab), "idf_weights": None,
                "encoding": self._encoding, "vocabulary_size": self.vocabulary_size()}
