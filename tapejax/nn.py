"""tf.nn: activations, losses on logits, convolution and pooling: the op table's rows (``tapejax.ops``)
and dropout."""
from .ops import exports as _exports, multiply as _mul, where as _where, cast as _cast, divide as _div, \
    subtract as _sub, convert_to_tensor as _convert
from ._core.tensor import to_array as _to_array, _TensorBase
from . import random as random
from .sparse import SparseTensor as _SparseTensor
from .ops import segment_sum as _segment_sum, gather as _gather, sqrt as _sqrt, divide_no_nan as _div_no_nan, \
    reshape as _reshape, embedding_lookup as _embedding_lookup
from ._core.tensor import Tensor
import types as _types

globals().update(_exports("nn"))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes elements with probability ``rate`` and scales the rest by ``1 / (1 - rate)``.

    TensorFlow's numbers: the mask is ``tf.random.uniform(noise_shape, seed=seed, dtype=x.dtype)
    >= rate``, so a global seed and ``seed`` give TF's mask; ``rate=0`` returns ``x`` and still
    takes an op seed, as in TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> tf.nn.dropout(tf.ones([4]), rate=0.0).numpy().tolist()
        [1.0, 1.0, 1.0, 1.0]
        >>> tf.random.set_seed(1)
        >>> tf.nn.dropout(tf.ones([8]), 0.5, seed=3).numpy().tolist()
        [2.0, 2.0, 2.0, 0.0, 2.0, 0.0, 2.0, 2.0]
    """
    return _dropout(x, rate, noise_shape, lambda shape, dtype: random.uniform(shape, seed=seed, dtype=dtype),
                    lambda: random.get_seed(seed))   # TF's dummy RNG step: the op seed is used either way


def _dropout(x, rate, noise_shape, uniform_sampler, dummy_rng_step=lambda: None):
    """TF's ``nn_ops._dropout``: ``x / (1 - rate)`` where ``uniform_sampler(noise_shape, dtype)
    >= rate``, else 0."""
    x = x if isinstance(x, Tensor) else _convert(x)
    if not x.dtype.is_floating:
        raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. "
                         f"Received: x_dtype={x.dtype}")
    if isinstance(rate, _TensorBase):
        ret = _div(x, _sub(_convert(1, dtype=x.dtype), _cast(rate, x.dtype)))
        rate = _cast(rate, x.dtype)
    else:
        rate = float(rate)
        if not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
        if rate == 0:
            dummy_rng_step()
            return x
        ret = _mul(x, _convert(1 / (1 - rate), dtype=x.dtype))
    dims = tuple(x.shape)
    shape = dims if noise_shape is None else tuple(
        dims[i] if d is None else int(d) for i, d in enumerate(noise_shape))
    keep = uniform_sampler(shape, x.dtype) >= rate
    return _where(keep, ret, _convert(0, dtype=x.dtype))



def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """Dropout whose mask is ``tf.random.stateless_uniform(noise_shape, seed) >= rate``: the same
    mask for the same ``seed``, TensorFlow's for it (``tf.nn.experimental.stateless_dropout``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.experimental.stateless_dropout(tf.ones([3, 5]), rate=0.5, seed=[1, 0])
        <tf.Tensor: shape=(3, 5), dtype=float32, numpy=
        array([[2., 0., 2., 0., 0.],
               [0., 0., 2., 0., 2.],
               [0., 0., 0., 0., 2.]], dtype=float32)>
    """
    return _dropout(x, rate, noise_shape, lambda shape, dtype: random.stateless_uniform(
        shape, seed, dtype=dtype, alg="auto_select" if rng_alg is None else rng_alg))


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """Dropout with the mask ``uniform_sampler(shape=noise_shape, dtype=x.dtype) >= rate``
    (``tf.nn.experimental.general_dropout``).

    Example:
        >>> import tapejax as tf
        >>> sampler = lambda shape, dtype: tf.constant([0.1, 0.6, 0.9, 0.3], dtype)
        >>> tf.nn.experimental.general_dropout(tf.ones([4]), 0.5, sampler).numpy()
        array([0., 2., 2., 0.], dtype=float32)
    """
    return _dropout(x, rate, noise_shape, lambda shape, dtype: uniform_sampler(shape=shape, dtype=dtype))


experimental = _types.ModuleType("tapejax.nn.experimental", "tf.nn.experimental: stateless and general dropout.")
experimental.stateless_dropout, experimental.general_dropout = stateless_dropout, general_dropout
experimental.__all__ = ["general_dropout", "stateless_dropout"]
del stateless_dropout, general_dropout


def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None, name=None,
                            allow_fast_lookup=False):
    """Combines the embeddings of each row's ids of a SparseTensor ``sp_ids`` (row ``i``: the
    entries whose index starts with ``i``), weighted by ``sp_weights``' values (or 1):
    ``"sum"``, ``"mean"`` (the weighted mean) or ``"sqrtn"`` (the sum over the root of the
    squared weights' sum); rows up to the last one with ids (``tf.nn.embedding_lookup_sparse``).

    Example:
        >>> import tapejax as tf
        >>> params = tf.constant([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=tf.float32)
        >>> sp_ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [2, 0]],
        ...                          values=[0, 1, 3, 2], dense_shape=(3, 2))
        >>> tf.nn.embedding_lookup_sparse(params, sp_ids, sp_weights=None,
        ...                               combiner='sum').numpy()
        array([[4., 6.],
               [7., 8.],
               [5., 6.]], dtype=float32)
    """
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if not isinstance(sp_ids, _SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor or RaggedTensor, got {type(sp_ids)}")
    if sp_weights is not None and not isinstance(sp_weights, _SparseTensor):
        raise TypeError(f"sp_weights must be either None or SparseTensor, got {type(sp_weights)}")
    segment_ids = _cast(_gather(sp_ids.indices, 0, axis=1), "int32")
    embeddings = _embedding_lookup(params, sp_ids.values, max_norm=max_norm)
    if sp_weights is None:
        weights = _convert(1, dtype=embeddings.dtype) + 0 * _cast(sp_ids.values, embeddings.dtype)
    else:
        weights = _cast(sp_weights.values, embeddings.dtype)
        embeddings = _mul(embeddings, _reshape(weights, list(weights.shape) + [1] * (len(embeddings.shape) - 1)))
    total = _segment_sum(embeddings, segment_ids)
    if combiner == "sum":
        return total
    denom = _segment_sum(weights if combiner == "mean" else _mul(weights, weights), segment_ids)
    if combiner == "sqrtn":
        denom = _sqrt(denom)
    return _div_no_nan(total, _reshape(denom, list(denom.shape) + [1] * (len(total.shape) - 1)))


def scale_regularization_loss(regularization_loss):
    """The regularization loss to add to a ``strategy.run`` step's loss (``tf.nn.scale_regularization_loss``).

    TensorFlow divides it by ``num_replicas_in_sync`` because each replica adds it
    and the replicas' losses are summed. A tapejax step computes on the global
    batch (see ``tf.distribute``), so it adds the loss once: it is returned as is.

    Example:
        >>> import tapejax as tf
        >>> print(tf.nn.scale_regularization_loss(tf.constant(0.5)).numpy())
        0.5
    """
    return regularization_loss if hasattr(regularization_loss, "_value") else Tensor(_to_array(regularization_loss))


__all__ = sorted(_exports("nn")) + ["dropout", "embedding_lookup_sparse", "experimental", "scale_regularization_loss"]
