"""tf.keras.utils: ``to_categorical``, ``Progbar``, ``set_random_seed``.

Example:
    >>> import tapejax as tf
    >>> tf.keras.utils.to_categorical([0, 2], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
"""
import random as _pyrandom

import numpy as np

from .. import random as _random
from ._progbar import Progbar as Progbar  # noqa: F401
from .. import ops as _ops
from ..math import reduce_max


def to_categorical(x, num_classes=None):
    """One-hot encodes class ids, as ``keras.utils.to_categorical``.

    A trailing dimension of size 1 is replaced by the classes: labels of shape ``(n, 1)`` give
    ``(n, num_classes)``.

    Args:
        x: integer class ids (an array-like, or a Tensor).
        num_classes: the number of classes; by default ``max(x) + 1``.

    Returns:
        A float64 numpy array (as Keras), or a float32 Tensor for a Tensor input.

    Raises:
        IndexError: an id is ``num_classes`` or more.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> tf.keras.utils.to_categorical(np.array([[1], [0]]), 3).shape
        (2, 3)
        >>> tf.keras.utils.to_categorical(tf.constant([1, 0]), 2)
        <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
        array([[0., 1.],
               [1., 0.]], dtype=float32)>
    """
    if _ops.is_tensor(x):
        if x.shape.rank and x.shape.rank > 1 and x.shape[-1] == 1:
            x = _ops.squeeze(x, axis=-1)
        x = _ops.cast(x, "int32")
        if num_classes is None:
            num_classes = int(reduce_max(x)) + 1
        return _ops.one_hot(x, num_classes)
    x = np.array(x, dtype="int64")
    shape = x.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    num_classes = int(np.max(x)) + 1 if not num_classes else num_classes
    out = np.zeros((x.shape[0], num_classes))
    out[np.arange(x.shape[0]), x] = 1
    return out.reshape(shape + (num_classes,))


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy and ``tf.random`` at once (``tf.keras.utils.set_random_seed``).

    Unseeded Keras initializers take their seed from Python's ``random`` when they are
    made, so a model built after this call has TensorFlow 2.21 / Keras 3's weights.

    Args:
        seed: an int.

    Raises:
        ValueError: ``seed`` is not an int.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.utils.set_random_seed(0)
        >>> layer = tf.keras.layers.Dense(2)
        >>> layer.build((None, 2))
        >>> layer.kernel.numpy()
        array([[ 0.03841865, -0.46770066],
               [ 0.83014286, -0.96362484]], dtype=float32)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed!r} "
                         f"(of type {type(seed)}).")
    _pyrandom.seed(int(seed))
    np.random.seed(int(seed))
    _random.set_seed(int(seed))
