"""tf.nn: activations, losses on logits, convolution and pooling: the op table's rows (``tapejax.ops``)
and dropout."""
from .ops import exports as _exports, multiply as _mul, where as _where, cast as _cast, divide as _div, \
    subtract as _sub, convert_to_tensor as _convert
from ._core.tensor import to_array as _to_array, _TensorBase
from . import random as random
from ._core.tensor import Tensor

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
            random.get_seed(seed)   # TF's dummy RNG step: the op seed is used either way
            return x
        ret = _mul(x, _convert(1 / (1 - rate), dtype=x.dtype))
    dims = tuple(x.shape)
    shape = dims if noise_shape is None else tuple(
        dims[i] if d is None else int(d) for i, d in enumerate(noise_shape))
    keep = random.uniform(shape, seed=seed, dtype=x.dtype) >= rate
    return _where(keep, ret, _convert(0, dtype=x.dtype))


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


__all__ = sorted(_exports("nn")) + ["dropout", "scale_regularization_loss"]
