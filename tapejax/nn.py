"""tf.nn: activations, losses on logits, convolution and pooling (re-exports of the op table)."""
from .ops import (
    relu as relu, relu6 as relu6, elu as elu, selu as selu, gelu as gelu, silu as silu, swish as swish,
    sigmoid as sigmoid, tanh as tanh, softplus as softplus, softsign as softsign, softmax as softmax,
    log_softmax as log_softmax,
    sparse_softmax_cross_entropy_with_logits as sparse_softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits as softmax_cross_entropy_with_logits,
    sigmoid_cross_entropy_with_logits as sigmoid_cross_entropy_with_logits, l2_loss as l2_loss,
    bias_add as bias_add, conv2d as conv2d, max_pool2d as max_pool2d, avg_pool2d as avg_pool2d,
    max_pool as max_pool, avg_pool as avg_pool, moments as moments, l2_normalize as l2_normalize,
    compute_average_loss as compute_average_loss, top_k as top_k, max_pool3d as max_pool3d,
    avg_pool3d as avg_pool3d, embedding_lookup as embedding_lookup,
)
from .ops import leaky_relu as _leaky_relu, multiply as _mul, where_op as _where, zeros_like as _zl
from ._core.tensor import to_array as _to_array
from . import random as random
from ._core.tensor import Tensor


def leaky_relu(features, alpha=0.2, name=None):
    """``x if x > 0 else alpha * x``."""
    return _leaky_relu(features, alpha=float(alpha))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes elements with probability ``rate`` and scales the rest by ``1 / (1 - rate)``.

    Example:
        >>> import tapejax as tf
        >>> tf.nn.dropout(tf.ones([4]), rate=0.0).numpy().tolist()
        [1.0, 1.0, 1.0, 1.0]
    """
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate}.")
    if rate == 0:
        return _mul(x, 1.0)
    shape = tuple(x.shape) if noise_shape is None else tuple(int(d) for d in noise_shape)
    keep = random.uniform(shape) >= rate
    return _where(keep, _mul(x, 1.0 / (1.0 - rate)), 0.0)


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
