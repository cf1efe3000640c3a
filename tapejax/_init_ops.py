"""TensorFlow's own initializers (its ``init_ops_v2``): ``tf.zeros_initializer``,
``tf.ones_initializer``, ``tf.constant_initializer``, ``tf.random_uniform_initializer``,
``tf.random_normal_initializer``.

They are not Keras's: ``__call__(shape, dtype=tf.float32)``, and an unseeded random
initializer draws from ``tf.random.uniform`` / ``tf.random.normal`` (new numbers on every call,
reproducible with ``tf.random.set_seed``), a seeded one from the stateless ops with seed
``[seed, 0]`` (the same numbers on every call).

Example:
    >>> import tapejax as tf
    >>> tf.random_uniform_initializer(seed=3)([4]).numpy()
    array([-0.03040872,  0.04393453,  0.00322752,  0.03410413], dtype=float32)
"""
import numpy as np

from ._core import dtypes as _dtypes
from ._core.tensor import _TensorBase
from . import random as _random
from .ops import constant as _constant, ones as _ones, zeros as _zeros

_PARTITION_SHAPE, _PARTITION_OFFSET = "partition_shape", "partition_offset"


class Initializer:
    """Base of TensorFlow's initializers: ``__call__(shape, dtype=None, **kwargs)`` returns a
    tensor of that shape; ``get_config`` / ``from_config`` round-trip its arguments.

    Example:
        >>> import tapejax as tf
        >>> tf.random_normal_initializer(seed=1).get_config()
        {'mean': 0.0, 'stddev': 0.05, 'seed': 1}
    """

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        config.pop("dtype", None)
        return cls(**config)

    def _validate_kwargs(self, kwargs, support_partition=True):
        for kwarg in kwargs:
            if kwarg not in (_PARTITION_SHAPE, _PARTITION_OFFSET):
                raise TypeError(f"Keyword argument should be one of {[_PARTITION_SHAPE, _PARTITION_OFFSET]}. "
                                f"Received: {kwarg}")
            if not support_partition:
                raise ValueError(f"{type(self).__name__} initializer doesn't support partition-related arguments")
        return kwargs.get(_PARTITION_SHAPE)


def _numeric(dtype):
    dtype = _dtypes.as_dtype(dtype)
    if dtype == _dtypes.string or dtype.name in ("resource", "variant"):
        raise ValueError(f"Argument `dtype` expected to be numeric or boolean. Received {dtype}.")
    return dtype


class Zeros(Initializer):
    """Tensors of zeros (``tf.zeros_initializer``).

    Example:
        >>> import tapejax as tf
        >>> tf.Variable(tf.zeros_initializer()(shape=[3], dtype=tf.float32))
        <tf.Variable 'Variable:0' shape=(3,) dtype=float32, numpy=array([0., 0., 0.], dtype=float32)>
    """

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        shape = self._validate_kwargs(kwargs) or shape
        return _zeros(shape, _numeric(dtype))


class Ones(Initializer):
    """Tensors of ones (``tf.ones_initializer``).

    Example:
        >>> import tapejax as tf
        >>> tf.Variable(tf.ones_initializer()(shape=[3], dtype=tf.float32))
        <tf.Variable 'Variable:0' shape=(3,) dtype=float32, numpy=array([1., 1., 1.], dtype=float32)>
    """

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        shape = self._validate_kwargs(kwargs) or shape
        return _ones(shape, _numeric(dtype))


class Constant(Initializer):
    """Tensors of a constant value: a scalar filled in, or exactly as many values as the shape
    has elements (``tf.constant_initializer``; ``tf.constant(value, dtype, shape)``).

    Example:
        >>> import tapejax as tf
        >>> init = tf.constant_initializer([0, 1, 2, 3, 4, 5, 6, 7])
        >>> tf.Variable(init(shape=[2, 4], dtype=tf.float32))
        <tf.Variable 'Variable:0' shape=(2, 4) dtype=float32, numpy=
        array([[0., 1., 2., 3.],
               [4., 5., 6., 7.]], dtype=float32)>
    """

    def __init__(self, value=0, support_partition=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(f"Invalid type for initial value: {_type_name(value)}. Expected Python scalar, list or "
                            "tuple of values, or numpy.ndarray.")
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape, dtype=None, **kwargs):
        self._validate_kwargs(kwargs, support_partition=self.support_partition)
        return _constant(self.value, dtype=None if dtype is None else _dtypes.as_dtype(dtype), shape=shape)

    def get_config(self):
        return {"value": self.value}


def _type_name(value):
    return "EagerTensor" if isinstance(value, _TensorBase) else type(value).__name__


class _Random(Initializer):
    def __init__(self, seed):
        self.seed = seed

    def _draw(self, stateless, stateful, shape, a, b, dtype):
        if self.seed is not None:    # TF's _RandomGenerator: stateless ops with seed [seed, 0]
            return stateless(shape, [self.seed, 0], a, b, dtype=dtype)
        return stateful(shape, a, b, dtype=dtype)


class RandomUniform(_Random):
    """Uniform samples in ``[minval, maxval)`` (``tf.random_uniform_initializer``): a seeded one
    gives TensorFlow's numbers on every call, an unseeded one new numbers on each call.

    Example:
        >>> import tapejax as tf
        >>> tf.random_uniform_initializer(minval=0., maxval=1., seed=1)(shape=[3]).numpy()
        array([0.8784882 , 0.45998025, 0.60029125], dtype=float32)
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        shape = self._validate_kwargs(kwargs) or shape
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating and not dtype.is_integer:
            raise ValueError(f"Argument `dtype` expected to be numeric or boolean. Received {dtype}.")
        return self._draw(_random.stateless_uniform, _random.uniform, shape, self.minval, self.maxval, dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(_Random):
    """Normal samples (``tf.random_normal_initializer``): a seeded one gives TensorFlow's
    numbers on every call, an unseeded one new numbers on each call.

    Example:
        >>> import tapejax as tf
        >>> tf.random_normal_initializer(mean=1., stddev=2., seed=1)(shape=[3]).numpy()
        array([1.2533007 , 0.01396686, 2.2623816 ], dtype=float32)
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=_dtypes.float32, **kwargs):
        shape = self._validate_kwargs(kwargs) or shape
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dtype}.")
        return self._draw(_random.stateless_normal, _random.normal, shape, self.mean, self.stddev, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}
