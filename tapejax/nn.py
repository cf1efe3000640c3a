"""tf.nn: activations, losses on logits, convolution and pooling: the op table's rows (``tapejax.ops``)
and dropout."""
from .ops import exports as _exports, multiply as _mul, where as _where
from ._core.tensor import to_array as _to_array
from . import random as random
from ._core.tensor import Tensor

globals().update(_exports("nn"))


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


__all__ = sorted(_exports("nn")) + ["dropout", "scale_regularization_loss"]
