"""Keras 3's lookup layers: ``StringLookup`` and ``IntegerLookup`` (its ``IndexLookup``).

A vocabulary maps each token to an index: ``[mask] + [OOV] * num_oov_indices + tokens``
(the mask index only in ``"int"`` mode). Tokens outside the vocabulary go to the OOV index,
or with several OOV indices to a bucket (``x mod n`` for integers, FarmHash
``Fingerprint64`` for strings, as TensorFlow's ``to_hash_bucket_fast``). The indices are
then encoded by ``output_mode``: ``"int"``, ``"one_hot"``, ``"multi_hot"``, ``"count"``.

Integer lookups are JAX ops (they compile inside ``tf.function`` and ``fit``); string lookups
run on the host in NumPy, as string tensors live there (recorded into a compiled function
with ``tapejax._core.host``). Outputs are int64 as in Keras 3 with the TensorFlow backend;
a symbolic call (on ``tf.keras.Input``) gives Keras 3's spec: int64 for ``"int"``, float32
otherwise.
"""
import collections

import jax.numpy as jnp
import numpy as np

from ... import data as _data
from ... import errors
from ..._core import dtypes as _dtypes, host as _host
from ..._core.farmhash import fingerprint64 as _fingerprint64
from ..._core.tensor import Tensor, _TensorBase, is_tracer, string_array
from ...extend import defop
from ...ops.lookup_ops import sorted_search as _sorted_search, dict_lookup as _dict_lookup
from ._base import Layer, _Spec

_MODES = ("int", "one_hot", "multi_hot", "count")
_INT64_MAX = np.iinfo(np.int64).max


def _encode(idx, mode, depth, xp):
    """Keras 3's ``encode_categorical_inputs`` of int64 indices (``xp``: numpy or jax.numpy).
    Indices outside ``[0, depth)`` (a masked token) count nowhere."""
    if mode == "int":
        return idx
    if idx.ndim == 0:
        idx = idx[None]
    if mode == "one_hot":
        if idx.ndim > 1 and idx.shape[-1] == 1:
            idx = idx[..., 0]
        return (idx[..., None] == xp.arange(depth)).astype(np.int64)
    if idx.ndim > 2:
        raise ValueError("When output_mode is not `'int'`, maximum supported output rank is 2. Received "
                         f"output_mode {mode} and input shape {tuple(idx.shape)}, which would result in output "
                         f"rank {idx.ndim}.")
    hits = (idx[..., None] == xp.arange(depth)).astype(np.int64).sum(axis=-2)
    return xp.minimum(hits, 1) if mode == "multi_hot" else hits


def _int_lookup_fn(x, *, keys, values, default, mask, mask_value, n_oov, oov_start, mode, depth):
    x = x.astype(jnp.int64)
    idx = _sorted_search(x, keys, np.asarray(values, np.int64), np.int64(default))
    if mask is not None:
        idx = jnp.where(x == mask, mask_value, idx)
    if n_oov > 1:
        idx = jnp.where(idx == -1, jnp.mod(x, n_oov) + oov_start, idx)
    return _encode(idx, mode, depth, jnp)


_int_lookup = defop(_int_lookup_fn, name="integer_lookup",
                    static=("keys", "values", "default", "mask", "mask_value", "n_oov", "oov_start", "mode", "depth"))


class _IndexLookup(Layer):
    """The shared machinery of ``StringLookup`` and ``IntegerLookup`` (Keras 3's ``IndexLookup``)."""

    _TEXT = True

    _allow_non_tensor_positional_args = True   # Keras 3's preprocessing layers take any inputs

    # Keras 3's IndexLookup configuration, in its order
    _k_config_keys = ("invert", "max_tokens", "num_oov_indices", "oov_token", "mask_token", "output_mode", "sparse",
                      "pad_to_max_tokens", "vocabulary_dtype", "idf_weights", "vocabulary", "vocabulary_size",
                      "oov_method", "salt")

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=None, vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 name=None, **kwargs):
        kwargs.pop("vocabulary_dtype", None)
        # the rest of Keras 3's configuration: the size follows from the vocabulary; one OOV method
        self._k_given_size = kwargs.pop("vocabulary_size", None)   # a configuration's, of an adapted layer
        if kwargs.pop("oov_method", "floormod") != "floormod" or kwargs.pop("salt", None) is not None:
            raise NotImplementedError("tapejax's lookup layers hash OOV tokens with oov_method='floormod' only.")
        super().__init__(name=name, autocast=False, **kwargs)
        if output_mode == "tf_idf" or idf_weights is not None:
            raise NotImplementedError("output_mode='tf_idf' is not provided by tapejax's lookup layers: use "
                                      "'count' and weight the counts.")
        if output_mode not in _MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of {list(_MODES) + ['tf_idf']}. "
                             f"Received: output_mode={output_mode}")
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("sparse=True is not provided by tapejax's lookup layers.")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        self.max_tokens, self.num_oov_indices = max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token = mask_token, oov_token
        self.invert, self.output_mode = bool(invert), output_mode
        self.pad_to_max_tokens, self.sparse = bool(pad_to_max_tokens), False
        self.input_vocabulary = vocabulary
        self._k_tokens = None            # the learned or given tokens, in index order
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    # -- vocabulary ------------------------------------------------------------

    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def _k_key(self, token):
        """A token as the lookup compares it: bytes for strings, a Python int for integers."""
        if self._TEXT:
            return token.encode("utf-8") if isinstance(token, str) else bytes(token)
        return int(token)

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the tokens (a list, array or 1-D tensor); special tokens at its start are skipped."""
        if isinstance(vocabulary, _TensorBase):
            vocabulary = vocabulary.numpy()
        vocabulary = list(np.asarray(vocabulary, dtype=object).reshape(-1)) if not isinstance(vocabulary, list) \
            else list(vocabulary)
        if not vocabulary:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        start = self._token_start_index()
        special = [self.mask_token] * self._oov_start_index() + [self.oov_token] * self.num_oov_indices
        keys = [self._k_key(t) for t in vocabulary]
        if [self._k_key(t) for t in special if t is not None] == keys[:start] and len(special) == start:
            keys = keys[start:]
        repeated = [t for t, n in collections.Counter(keys).items() if n > 1]
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please uniquify your "
                             f"dataset. The repeated terms are: {sorted(repeated)}")
        if self.max_tokens is not None and start + len(keys) > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab size. Received "
                             f"vocabulary size is {start + len(keys)}; `max_tokens` is {self.max_tokens}.")
        self._k_tokens = keys

    def _k_config_value(self, key):
        if key == "vocabulary":   # as it was given (Keras 3's input_vocabulary), arrays as lists
            vocabulary = self.input_vocabulary
            if isinstance(vocabulary, _TensorBase):
                vocabulary = vocabulary.numpy()
            return vocabulary.tolist() if isinstance(vocabulary, np.ndarray) else vocabulary
        if key == "vocabulary_size":
            return self._k_given_size if self._k_tokens is None else self.vocabulary_size()
        if key == "vocabulary_dtype":
            return "string" if self._TEXT else "int64"
        return {"idf_weights": None, "oov_method": "floormod", "salt": None}.get(key) if key in (
            "idf_weights", "oov_method", "salt") else getattr(self, key)

    def vocabulary_size(self):
        """The number of indices: the tokens plus the mask and OOV indices."""
        return self._token_start_index() + len(self._k_tokens or [])

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary in index order (Keras 3 gives the tokens as NumPy scalars)."""
        tokens = [np.str_(t.decode("utf-8")) if self._TEXT else np.int64(t) for t in (self._k_tokens or [])]
        special = [self.oov_token] * self._token_start_index()
        if self.mask_token is not None and self.output_mode == "int":
            special[0] = self.mask_token
        return (special if include_special_tokens else []) + tokens

    def adapt(self, data, steps=None):
        """Learns the vocabulary from ``data`` (an array, a list, a tensor or a batched dataset): the
        tokens by decreasing count, ties by decreasing token, as Keras 3."""
        if self.input_vocabulary is not None:
            raise ValueError(f"Cannot adapt layer '{self.name}' after setting a static vocabulary via "
                             "`vocabulary` argument or `set_vocabulary()` method.")
        batches = data.take(steps) if isinstance(data, _data.Dataset) and steps is not None else data
        if not isinstance(batches, _data.Dataset):
            batches = [batches]
        counts = collections.Counter()
        for batch in batches:
            counts.update(self._k_key(t) for t in self._k_flat(batch))
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(self._k_key(special), None)
        tokens = list(counts)
        order = np.lexsort((np.array(tokens, dtype=object if self._TEXT else np.int64),
                            np.array([counts[t] for t in tokens], np.int64)))[::-1] if tokens else []
        if self.max_tokens:
            order = order[:self.max_tokens - self._token_start_index()]
        self._k_tokens = [tokens[i] for i in order]

    def _k_flat(self, x):
        a = np.asarray(x._value if isinstance(x, _TensorBase) else x)
        if self._TEXT:
            return [t.encode("utf-8") if isinstance(t, str) else t for t in string_array(a).reshape(-1)]
        return a.astype(np.int64).reshape(-1).tolist()

    # -- calls -----------------------------------------------------------------

    def _k_depth(self):
        if self.output_mode == "int":
            return 0
        if self.pad_to_max_tokens and self.max_tokens is not None:
            return int(self.max_tokens)
        if self._k_tokens is None:
            raise RuntimeError(f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you "
                               "must set the layer's vocabulary before calling it. Either pass a `vocabulary` "
                               "argument to the layer, or call `adapt` with some sample data.")
        return self.vocabulary_size()

    def _k_table(self):
        return {t: i for i, t in enumerate(self._k_tokens or [], self._token_start_index())}

    def _k_default(self):
        return self._oov_start_index() if self.num_oov_indices == 1 else -1

    def _k_mask_value(self):
        return 0 if self.output_mode == "int" else _INT64_MAX

    def _k_oov_error(self, found):
        shown = ", ".join(f'"{v.decode("utf-8", "replace")}"' if isinstance(v, bytes) else str(v) for v in found)
        return errors.InvalidArgumentError(
            None, None, "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b'When "
            f"`num_oov_indices=0` all inputs should be in vocabulary, found OOV values [{shown}], consider "
            "setting `num_oov_indices=1`.'")

    def _k_output_specs(self, fn, inputs):
        """Keras 3's ``compute_output_spec``: int64 indices, float32 encodings."""
        shape = tuple(inputs[0].shape)
        if self.output_mode != "int":
            depth = self._k_depth()
            if self.output_mode == "one_hot":
                shape = (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (depth,)
            else:
                shape = shape[:-1] + (depth,)
        return _Spec(shape, np.int64 if self.output_mode == "int" else np.float32)

    def call(self, inputs):
        self._k_depth()
        if self.invert:
            return _host.call(f"{type(self).__name__}.invert", self._k_invert, inputs)
        if self._TEXT:
            return _host.call(type(self).__name__, self._k_lookup_strings, inputs)
        return self._k_lookup_ints(inputs)


def _strings_of(x):
    a = np.asarray(x._value) if isinstance(x, _TensorBase) else x
    return string_array(a)


class StringLookup(_IndexLookup):
    """Maps strings to indices of a vocabulary (Keras 3's ``StringLookup``), optionally encoded.

    Args:
        max_tokens: the most indices (with the special ones); None for no limit.
        num_oov_indices: indices for out-of-vocabulary strings (hashed among them when > 1).
        mask_token: a string that maps to index 0 (``"int"`` mode) or nowhere; None for none.
        oov_token: what ``get_vocabulary`` and ``invert`` show for OOV indices (``"[UNK]"``).
        vocabulary: the strings, or None to :meth:`adapt` the layer.
        invert: map indices back to strings.
        output_mode: ``"int"`` (int64 indices), ``"one_hot"``, ``"multi_hot"`` or ``"count"``.
        pad_to_max_tokens: encode to ``max_tokens`` columns.

    Example:
        >>> import tapejax as tf
        >>> lookup = tf.keras.layers.StringLookup(vocabulary=['a', 'b', 'c'], output_mode='one_hot')
        >>> lookup(['c', 'a', 'zzz']).numpy().tolist()
        [[0, 0, 0, 1], [0, 1, 0, 0], [1, 0, 0, 0]]
        >>> tf.keras.layers.StringLookup(vocabulary=['a', 'b'])(['b', 'q']).numpy().tolist()
        [2, 0]
    """

    _TEXT = True
    _k_config_keys = tuple(k for k in _IndexLookup._k_config_keys if k != "vocabulary_dtype") + ("encoding",)

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, **kwargs):
        self.encoding = encoding
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name,
                         **kwargs)

    def _k_lookup_strings(self, inputs):
        a = _strings_of(inputs)
        table, default = self._k_table(), self._k_default()
        flat = a.reshape(-1)
        idx = np.array(_dict_lookup(table, default, flat), np.int64).reshape(a.shape)
        if self.mask_token is not None:
            idx[a == self._k_key(self.mask_token)] = self._k_mask_value()
        oov = idx == -1
        if oov.any():
            if self.num_oov_indices == 0:
                raise self._k_oov_error(list(a[oov]))
            idx[oov] = [_fingerprint64(t) % self.num_oov_indices + self._oov_start_index() for t in a[oov]]
        return Tensor(jnp.asarray(_encode(idx, self.output_mode, self._k_depth(), np)))

    def _k_invert(self, inputs):
        idx = np.asarray(inputs._value if isinstance(inputs, _TensorBase) else inputs).astype(np.int64)
        vocab = [self._k_key(t) if t is not None else None for t in self.get_vocabulary()]
        oov = self._k_key(self.oov_token)
        out = np.empty(idx.shape, object)
        out.reshape(-1)[:] = [vocab[i] if 0 <= i < len(vocab) else oov for i in idx.reshape(-1)]
        return Tensor(string_array(out))


class IntegerLookup(_IndexLookup):
    """Maps integers to indices of a vocabulary (Keras 3's ``IntegerLookup``), optionally encoded.

    The arguments are :class:`StringLookup`'s, with integer tokens: ``oov_token`` is -1 by
    default, ``mask_token`` an integer or None; with several OOV indices a token goes to
    ``token mod num_oov_indices``. Inputs are cast to int64.

    Example:
        >>> import tapejax as tf
        >>> lookup = tf.keras.layers.IntegerLookup(vocabulary=[1, 4, 7, 99], output_mode='one_hot')
        >>> lookup([-1, 4, 1]).numpy().tolist()
        [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0]]
        >>> tf.keras.layers.IntegerLookup(vocabulary=[10, 20])([20, 5]).numpy().tolist()
        [2, 0]
    """

    _TEXT = False

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, output_mode="int",
                 sparse=False, pad_to_max_tokens=False, vocabulary=None, vocabulary_dtype="int64", idf_weights=None,
                 invert=False, name=None, **kwargs):
        if vocabulary_dtype not in ("int64", _dtypes.int64):
            raise ValueError(f"IntegerLookup supports vocabulary_dtype 'int64' in tapejax, got {vocabulary_dtype!r}.")
        super().__init__(max_tokens=max_tokens, num_oov_indices=num_oov_indices, mask_token=mask_token,
                         oov_token=oov_token, vocabulary=vocabulary, idf_weights=idf_weights, invert=invert,
                         output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens, sparse=sparse, name=name,
                         **kwargs)

    def _k_lookup_ints(self, inputs):
        table = sorted(self._k_table().items())
        if self.num_oov_indices == 0 and isinstance(inputs, _TensorBase) and not is_tracer(inputs._value):
            a = np.asarray(inputs._value).astype(np.int64)
            known = {k for k, _ in table} | ({int(self.mask_token)} if self.mask_token is not None else set())
            found = [v for v in a.reshape(-1).tolist() if v not in known]
            if found:
                raise self._k_oov_error(found)
        return _int_lookup(inputs, keys=tuple(k for k, _ in table), values=tuple(v for _, v in table),
                           default=self._k_default(),
                           mask=None if self.mask_token is None else int(self.mask_token),
                           mask_value=self._k_mask_value(), n_oov=self.num_oov_indices,
                           oov_start=self._oov_start_index(), mode=self.output_mode, depth=self._k_depth())

    def _k_invert(self, inputs):
        idx = np.asarray(inputs._value if isinstance(inputs, _TensorBase) else inputs).astype(np.int64)
        vocab = [int(t) for t in self.get_vocabulary()]
        out = np.array([vocab[i] if 0 <= i < len(vocab) else int(self.oov_token) for i in idx.reshape(-1)],
                       np.int64).reshape(idx.shape)
        return Tensor(jnp.asarray(out))


__all__ = ["StringLookup", "IntegerLookup"]
