"""``tf.experimental.numpy.random``: NumPy's random functions on TensorFlow's random ops.

As TensorFlow's ``np_random.py``: floats are float64 (TF 2.21 keeps float64 also under
``prefer_float32``), integers int64, drawn by ``tf.random.normal`` / ``tf.random.uniform`` with
the global seed, so a seeded program draws TensorFlow's numbers.

Example:
    >>> import tapejax as tf
    >>> import tapejax.experimental.numpy as tnp
    >>> tnp.random.seed(1)
    >>> tnp.random.randint(0, 10, size=4)
    <tf.Tensor: shape=(4,), dtype=int64, numpy=array([6, 3, 4, 2])>
"""
import numpy as np

from .. import random as _random
from .._core import dtypes as _dtypes


def seed(s):
    """Sets the global seed (``tf.random.set_seed(int(s))``)."""
    _random.set_seed(int(s))


def _size(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(size)


def standard_normal(size=None):
    """float64 normal numbers of shape ``size``."""
    return _random.normal(_size(size), dtype=_dtypes.float64)


def randn(*args):
    """``standard_normal(args)``."""
    return standard_normal(size=args)


def uniform(low=0.0, high=1.0, size=None):
    """float64 numbers in ``[low, high)``; ``size`` defaults to the broadcast shape of the bounds."""
    low, high = np.asarray(low, np.float64), np.asarray(high, np.float64)
    shape = np.broadcast_shapes(low.shape, high.shape) if size is None else _size(size)
    return _random.uniform(shape, minval=low, maxval=high, dtype=_dtypes.float64)


def rand(*size):
    """``uniform(0.0, 1.0, size)``."""
    return uniform(0.0, 1.0, size)


def randint(low, high=None, size=None, dtype=np.int64):
    """Integers in ``[low, high)`` (``[0, low)`` without ``high``); int64 or int32."""
    low = int(low)
    if high is None:
        low, high = 0, low
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise ValueError(f"`dtype` must be an integer type of 32 or 64 bits. Received: dtype={dtype.name}")
    return _random.uniform(_size(size), minval=low, maxval=int(high), dtype=dtype)
