"""TensorFlow's argument conventions made JAX's static arguments: axes, shapes, dimensions,
index dtypes, window sizes. Every TF signature of the table normalises through these."""
import jax
import numpy as np

from .._core import dtypes as _dtypes
from .._core.engine import known_value
from .._core.tensor import _TensorBase

# TensorFlow's index dtype (argmax, where, count_nonzero): int64, when JAX can hold it.
INDEX = np.int64 if jax.config.jax_enable_x64 else np.int32


def axis(axis):
    """TF's ``axis``: None, an int, or a list of ints (made a tuple, hashable)."""
    return None if axis is None else (tuple(axis) if isinstance(axis, (list, tuple)) else axis)


def static_dim(d):
    """A dimension as an int, or a symbolic dimension (a trace serving every size)."""
    if isinstance(d, _TensorBase):
        known = known_value(d)
        if known is None:
            return int(d)   # raises the explanatory error: the value is computed by the program
        d = known.item()
    return d if jax.export.is_symbolic_dim(d) else int(d)


def static_shape(shape):
    """TF's ``shape``: an int, a list (None is -1), or a tensor whose value is known."""
    if isinstance(shape, _TensorBase):
        known = known_value(shape)
        if known is None:
            np.asarray(shape)   # raises the explanatory error
        return tuple(static_dim(d) for d in known.reshape(-1))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(-1 if d is None else static_dim(d) for d in shape)


def int_type(dt):
    """An integer output dtype JAX can hold (int64 only in JAX's 64-bit mode)."""
    dt = _dtypes.np_dtype(dt)
    return dt if (jax.config.jax_enable_x64 or dt.itemsize <= 4) else np.dtype(np.int32)


def window(v, n=2):
    """TF's ``ksize``/``strides``/``dilations`` for ``n`` spatial dimensions: an int, n ints, or
    n + 2 ints (batch and channels included)."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(e) for e in v)
    if len(v) == n + 2:
        return v[1:-1]
    if len(v) == 1:
        return v * n
    return v


def known(x, what):
    """The NumPy value of ``x`` when it is known without running the program (a concrete tensor, a
    constant of a tf.function's trace, Python data), for ops whose output shape depends on it.

    Raises:
        ValueError: naming ``what``, when the value is computed by the program being traced.
    """
    if isinstance(x, (list, tuple)):
        return np.asarray([known(e, what) for e in x])
    v = known_value(x)
    if v is None:
        raise ValueError(f"{what}: the output's shape depends on the input's values, which are not known "
                         "while tracing a tf.function; compute it outside the function.")
    return np.asarray(v)
