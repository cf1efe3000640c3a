"""Keras 3's attention layers: ``MultiHeadAttention``, ``Attention`` (dot-product, Luong) and
``AdditiveAttention`` (Bahdanau), with Keras's masks (the inputs' Keras masks, ``attention_mask``,
``use_causal_mask``), its weights and names (``query/kernel`` ... ``attention_output/bias``) and
its configuration."""
import math

import jax.numpy as jnp
import numpy as np

from ... import ops as _ops
from ..._core.tensor import Tensor, TensorShape
from ...extend import defop
from .. import constraints as _constraints
from .. import initializers as _initializers
from .. import regularizers as _regularizers
from ._base import Layer, _keras_mask
from ._builtin import Dropout, _unsupported

_LARGE_NEGATIVE = -1e9   # Keras's Softmax fills masked scores with it (float32)


def _masked_softmax_fn(scores, mask, *, zero_masked):
    """Keras 3's ``Softmax(axis=-1)(scores, mask)``: masked scores become -1e9; where every score of
    a row is masked, the weights are zeros (the dot-product-attention path leaves them uniform)."""
    mask = mask.astype(bool)
    x = jnp.where(mask, scores, jnp.asarray(_LARGE_NEGATIVE, scores.dtype))
    x = x - jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x)
    out = e / jnp.sum(e, axis=-1, keepdims=True)
    return jnp.where(mask, out, jnp.zeros((), out.dtype)) if zero_masked else out


_masked_softmax = defop(_masked_softmax_fn, name="masked_softmax", static=("zero_masked",))


class _EinsumDense(Layer):
    """The projection sub-layers of MultiHeadAttention: ``einsum(equation, x, kernel) + bias``."""

    def __init__(self, equation, kernel_shape, bias_shape, kernel_initializer, bias_initializer,
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.equation = equation
        self._k_kernel_shape, self._k_bias_shape = tuple(kernel_shape), bias_shape
        self._k_options = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           kernel_constraint, bias_constraint)

    def build(self, input_shape):
        ki, bi, kr, br, kc, bc = self._k_options
        self.kernel = self.add_weight(name="kernel", shape=self._k_kernel_shape, initializer=ki, regularizer=kr,
                                      constraint=kc)
        self.bias = None if self._k_bias_shape is None else self.add_weight(
            name="bias", shape=tuple(self._k_bias_shape), initializer=bi, regularizer=br, constraint=bc)
        self.built = True

    def call(self, inputs):
        y = _ops.einsum(self.equation, inputs, self.kernel)
        return y if self.bias is None else y + self.bias


def _clone(initializer):
    """Keras 3 gives each sub-layer its own copy of the initializer (same class and config)."""
    return type(initializer).from_config(initializer.get_config())


class MultiHeadAttention(Layer):
    """Multi-head (scaled dot-product) attention, as in "Attention Is All You Need" (Keras 3's layer).

    ``query`` ``(B, T, dim)``, ``value`` ``(B, S, dim)`` and ``key`` (default: ``value``) are projected
    to ``num_heads`` heads of ``key_dim`` (``value_dim``) features; each head's scores
    ``softmax(q k^T / sqrt(key_dim))`` (masked) weigh the values; the heads are projected back to
    the query's last size (or ``output_shape``). The query's Keras mask is the output's mask.

    Args:
        num_heads: the number of heads.
        key_dim: the size of each head for query and key.
        value_dim: the size of each head for value (default ``key_dim``).
        dropout: the dropout rate of the attention weights (when training).
        use_bias: whether the projections have biases.
        output_shape: the last size of the output (default: the query's).
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, kernel_constraint,
            bias_constraint: the projections' options.
        seed: the dropout's seed.

    Call arguments: ``query``, ``value``, ``key=None``, ``attention_mask=None`` (boolean ``(B, T, S)``),
    ``return_attention_scores=False`` (then also returns ``(B, heads, T, S)`` scores),
    ``training=None``, ``use_causal_mask=False``.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)
        >>> target = tf.keras.Input(shape=[8, 16])
        >>> source = tf.keras.Input(shape=[4, 16])
        >>> output_tensor, weights = layer(target, source, return_attention_scores=True)
        >>> print(output_tensor.shape)
        (None, 8, 16)
        >>> print(weights.shape)
        (None, 2, 8, 4)
    """

    supports_masking = True

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, use_gate=False, flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, seed=None, sliding_window=None, **kwargs):
        _unsupported("MultiHeadAttention", use_gate=use_gate, flash_attention=flash_attention,
                     sliding_window=sliding_window)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self._num_heads = num_heads
        self._key_dim = key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout = dropout
        self._use_bias = use_bias
        if output_shape is not None and isinstance(output_shape, int):
            output_shape = (output_shape,)
        self._output_shape = output_shape
        if attention_axes is not None and tuple(np.atleast_1d(attention_axes).tolist()) not in ((1,), (-2,)):
            raise NotImplementedError("tapejax's MultiHeadAttention attends over the sequence axis of "
                                      "(batch, seq, features) inputs (attention_axes=None).")
        self._attention_axes = attention_axes if attention_axes is None else \
            tuple(np.atleast_1d(attention_axes).tolist())
        self._kernel_initializer = _initializers.get(kernel_initializer)
        self._bias_initializer = _initializers.get(bias_initializer)
        self._kernel_regularizer = _regularizers.get(kernel_regularizer)
        self._bias_regularizer = _regularizers.get(bias_regularizer)
        self._kernel_constraint = _constraints.get(kernel_constraint)
        self._bias_constraint = _constraints.get(bias_constraint)
        self.seed = seed
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(self._key_dim))
        self._dropout_layer = Dropout(rate=self._dropout, seed=self.seed)

    num_heads = property(lambda self: self._num_heads, doc="The number of attention heads.")
    key_dim = property(lambda self: self._key_dim, doc="The size of each query/key head.")
    value_dim = property(lambda self: self._value_dim, doc="The size of each value head.")
    dropout = property(lambda self: self._dropout, doc="The dropout rate of the attention weights.")
    use_bias = property(lambda self: self._use_bias, doc="Whether the projections have biases.")
    attention_axes = property(lambda self: self._attention_axes, doc="The axes attention runs over.")

    @property
    def query_dense(self):
        """The query projection (an EinsumDense-like sub-layer: ``kernel`` ``(dim, heads, key_dim)``)."""
        return self._query_dense

    @property
    def key_dense(self):
        """The key projection."""
        return self._key_dense

    @property
    def value_dense(self):
        """The value projection."""
        return self._value_dense

    @property
    def output_dense(self):
        """The output projection (``kernel`` ``(heads, value_dim, out)``)."""
        return self._output_dense

    def _k_dense(self, name, equation, kernel_shape, bias_shape):
        return _EinsumDense(equation, kernel_shape, bias_shape if self._use_bias else None,
                            _clone(self._kernel_initializer), _clone(self._bias_initializer),
                            self._kernel_regularizer, self._bias_regularizer, self._kernel_constraint,
                            self._bias_constraint, name=name, dtype=self.dtype_policy)

    def build(self, query_shape, value_shape=None, key_shape=None):
        query_shape = TensorShape(query_shape).as_list()
        value_shape = query_shape if value_shape is None else TensorShape(value_shape).as_list()
        key_shape = value_shape if key_shape is None else TensorShape(key_shape).as_list()
        if len(query_shape) != 3 or len(value_shape) != 3:
            raise NotImplementedError("tapejax's MultiHeadAttention takes (batch, seq, features) query and "
                                      f"value; received query {query_shape}, value {value_shape}.")
        h = self._num_heads
        self._query_dense = self._k_dense("query", "abc,cde->abde", (query_shape[-1], h, self._key_dim),
                                          (h, self._key_dim))
        self._query_dense.build(query_shape)
        self._key_dense = self._k_dense("key", "abc,cde->abde", (key_shape[-1], h, self._key_dim),
                                        (h, self._key_dim))
        self._key_dense.build(key_shape)
        self._value_dense = self._k_dense("value", "abc,cde->abde", (value_shape[-1], h, self._value_dim),
                                          (h, self._value_dim))
        self._value_dense.build(value_shape)
        self._attention_axes = (1,)
        out = tuple(self._output_shape) if self._output_shape else (query_shape[-1],)
        if len(out) != 1:
            raise NotImplementedError("tapejax's MultiHeadAttention takes an int output_shape.")
        self._output_dense = self._k_dense("attention_output", "abcd,cde->abe", (h, self._value_dim, out[0]),
                                           out)
        self._output_dense.build((None, None, h, self._value_dim))
        self.built = True

    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None:
            if "value" not in kwargs:
                raise TypeError("MultiHeadAttention.call() missing 1 required positional argument: 'value'")
            value = kwargs.pop("value")
        if not self.built:
            shapes = [None if t is None else tuple(getattr(t, "shape", np.shape(t))) for t in (query, value, key)]
            with self._k_scope():
                self.build(*shapes)
            self.built = True
        return super().__call__(query, value, key=key, **kwargs)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
             return_attention_scores=False, training=None, use_causal_mask=False):
        # Keras 3 fills value_mask / key_mask from the inputs' masks, reads the query's mask (over
        # any query_mask given), then deletes the inputs' masks: a second call on the same tensors
        # sees none.
        value_mask = _keras_mask(value) if value_mask is None else value_mask
        if key is not None and key_mask is None:
            key_mask = _keras_mask(key)
        if key is None:
            key = value
        query_mask = _keras_mask(query)
        for t in (query, value, key):
            if isinstance(t, Tensor) and _keras_mask(t) is not None:
                t._keras_mask = None
        mask = self._k_attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                                      use_causal_mask)
        q = self._query_dense(query)
        k = self._key_dense(key)
        v = self._value_dense(value)
        q = q * _ops.cast(self._inverse_sqrt_key_dim, q.dtype)
        scores = _ops.einsum("aecd,abcd->acbe", k, q)
        given = mask is not None
        mask = _ops.expand_dims(_ops.cast(mask, "bool"), -3) if given else _ops.ones_like(scores, dtype="bool")
        direct = not (self._dropout > 0.0 or return_attention_scores)
        scores = _masked_softmax(scores, mask, zero_masked=not direct)
        if given:
            scores._keras_mask = mask   # Keras's Softmax layer passes the mask on
        final = self._dropout_layer(scores, training=training) if self._dropout > 0.0 else scores
        out = _ops.einsum("acbe,aecd->abcd", final, v)
        out = self._output_dense(out)
        if query_mask is not None:
            out._keras_mask = _ops.cast(query_mask, "bool")
        if return_attention_scores:
            return out, scores
        return out

    def _k_attention_mask(self, query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask):
        auto = None
        if query_mask is not None:
            auto = _ops.expand_dims(_ops.cast(query_mask, "bool"), -1)
        for m in (value_mask, key_mask):
            if m is not None:
                m = _ops.expand_dims(_ops.cast(m, "bool"), -2)
                auto = m if auto is None else _ops.logical_and(auto, m)
        if use_causal_mask:
            t, s = query.shape[1], value.shape[1]
            causal = _ops.constant(np.tril(np.ones((1, t, s), bool)))
            auto = causal if auto is None else _ops.logical_and(auto, causal)
        if attention_mask is not None:
            attention_mask = _ops.cast(attention_mask, "bool")
        if auto is not None:
            attention_mask = auto if attention_mask is None else _ops.logical_and(attention_mask, auto)
        return attention_mask

    def compute_mask(self, inputs, previous_mask=None):
        return None   # the call sets the query's mask on the output itself

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = TensorShape(query_shape).as_list()
        last = self._output_shape[-1] if self._output_shape else query_shape[-1]
        return TensorShape(query_shape[:-1] + [last])

    def get_config(self):
        return {**super().get_config(), "num_heads": self._num_heads, "key_dim": self._key_dim,
                "value_dim": self._value_dim, "dropout": self._dropout, "use_bias": self._use_bias,
                "use_gate": False, "output_shape": self._output_shape, "attention_axes": self._attention_axes,
                "sliding_window": None,
                "kernel_initializer": _initializers.serialize(self._kernel_initializer),
                "bias_initializer": _initializers.serialize(self._bias_initializer),
                "kernel_regularizer": _regularizers.serialize(self._kernel_regularizer),
                "bias_regularizer": _regularizers.serialize(self._bias_regularizer),
                "activity_regularizer": _regularizers.serialize(self.activity_regularizer),
                "kernel_constraint": _constraints.serialize(self._kernel_constraint),
                "bias_constraint": _constraints.serialize(self._bias_constraint), "seed": self.seed}


def _attention_inputs(layer, inputs, mask):
    name = type(layer).__name__
    if not isinstance(inputs, (list, tuple)):
        raise ValueError(f"{name} layer must be called on a list of inputs, namely [query, value] or "
                         f"[query, value, key]. Received: inputs={inputs}.")
    if len(inputs) < 2 or len(inputs) > 3:
        raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                         f"[query, value, key]. Received length: {len(inputs)}.")
    inputs = [_ops.convert_to_tensor(x) for x in inputs]
    if mask is None:
        mask = [_keras_mask(x) for x in inputs]
        mask = None if all(m is None for m in mask) else mask
    if mask is not None and (not isinstance(mask, (list, tuple)) or len(mask) < 2 or len(mask) > 3):
        raise ValueError(f"{name} layer accepts mask list of length 2 or 3. Received: mask={mask}")
    return inputs, mask


class Attention(Layer):
    """Dot-product (Luong-style) attention over ``[query, value]`` or ``[query, value, key]``.

    ``scores = query @ key^T`` (times a learned ``scale`` when ``use_scale``; ``score_mode="concat"``
    sums ``tanh(query + key)`` instead), masked by the value's mask (and the causal mask), softmax
    over the value steps, then ``scores @ value``; query steps masked out give zeros.

    Args:
        use_scale: learn a scalar scale of the scores.
        score_mode: ``"dot"`` (default) or ``"concat"``.
        dropout: the dropout rate of the attention weights (when training).
        seed: the dropout's seed.

    Example:
        >>> import tapejax as tf
        >>> q = tf.constant([[[1.0, 0.0]]])
        >>> v = tf.constant([[[1.0, 0.0], [0.0, 1.0]]])
        >>> [round(x, 4) for x in tf.keras.layers.Attention()([q, v]).numpy().ravel().tolist()]
        [0.7311, 0.2689]
    """

    supports_masking = True
    _TF_CHECKPOINT_IGNORED_PROPERTIES = frozenset({"_k_seed_state"})

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = use_scale
        self.score_mode = score_mode
        self.dropout = dropout
        self.seed = seed
        if score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of {'dot', 'concat'}. "
                             f"Received: score_mode={score_mode}")
        self._k_dropout = Dropout(dropout, seed=seed) if dropout > 0 else None
        self.scale = None
        self.concat_score_weight = None

    def build(self, input_shape):
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones", trainable=True)
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones",
                                                       trainable=True)
        self.built = True

    def _k_scores(self, query, key):
        if self.score_mode == "dot":
            scores = _ops.matmul(query, _ops.transpose(key, [0, 2, 1]) if key.shape.rank == 3 else
                                 _ops.matrix_transpose(key))
            return scores * self.scale if self.scale is not None else scores
        q, k = _ops.expand_dims(query, -2), _ops.expand_dims(key, -3)
        summed = q + k if self.scale is None else self.scale * (q + k)
        return self.concat_score_weight * _ops.reduce_sum(_ops.tanh(summed), axis=-1)

    def call(self, inputs, mask=None, training=False, return_attention_scores=False, use_causal_mask=False):
        inputs, mask = _attention_inputs(self, inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._k_scores(q, k)
        scores_mask = None if v_mask is None else _ops.cast(v_mask, "bool")
        if use_causal_mask:
            tq, tv = scores.shape[-2], scores.shape[-1]
            causal = _ops.constant(np.tril(np.ones((1, tq, tv), bool)))
            scores_mask = causal if scores_mask is None else _ops.logical_and(_ops.expand_dims(scores_mask, -2),
                                                                               causal)
        if scores_mask is not None:
            padding = _ops.logical_not(scores_mask)
            if padding.shape.rank == 2:
                padding = _ops.expand_dims(padding, -2)
            scores = _ops.where(padding, scores - 1.0e9, scores)
        weights = _ops.softmax(scores, axis=-1)
        if training and self._k_dropout is not None:
            weights = self._k_dropout(weights, training=True)
        out = _ops.matmul(weights, v)
        if q_mask is not None:
            out = _ops.where(_ops.expand_dims(_ops.cast(q_mask, "bool"), -1), out, _ops.zeros_like(out))
            out._keras_mask = _ops.convert_to_tensor(q_mask)   # compute_mask's, for a mask passed in too
        if return_attention_scores:
            return out, weights
        return out

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            mask = [_keras_mask(x) for x in inputs] if isinstance(inputs, (list, tuple)) else None
        if mask is None or mask[0] is None:
            return None
        return _ops.convert_to_tensor(mask[0])

    def compute_output_shape(self, input_shape):
        query_shape, value_shape = TensorShape(input_shape[0]).as_list(), TensorShape(input_shape[1]).as_list()
        return TensorShape(query_shape[:-1] + value_shape[-1:])

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}


class AdditiveAttention(Attention):
    """Additive (Bahdanau-style) attention: ``scores = sum(scale * tanh(query + key), -1)``, ``scale``
    a learned vector (glorot_uniform; ``use_scale=False`` uses 1), then as :class:`Attention`.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.AdditiveAttention(use_scale=False)
        >>> layer([tf.ones([1, 2, 3]), tf.ones([1, 4, 3])]).shape
        TensorShape([1, 2, 3])
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        dim = TensorShape(input_shape[0] if isinstance(input_shape, (list, tuple)) and
                          isinstance(input_shape[0], (list, tuple, TensorShape)) else input_shape)[-1]
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=[dim], initializer="glorot_uniform", trainable=True)
        self.built = True

    def _k_scores(self, query, key):
        q, k = _ops.expand_dims(query, -2), _ops.expand_dims(key, -3)
        t = _ops.tanh(q + k)
        return _ops.reduce_sum(self.scale * t if self.use_scale else t, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
