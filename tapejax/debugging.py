"""tf.debugging: assertions that raise tf.errors.InvalidArgumentError.

Example:
    >>> import tapejax as tf
    >>> tf.debugging.assert_equal(tf.constant([1, 2]).shape, (2,))
"""
import numpy as np

from . import errors
from ._tensor import _TensorBase, is_tracer


def _np(x):
    if isinstance(x, _TensorBase):
        if is_tracer(x._value):
            return None
        return np.asarray(x._value)
    return np.asarray(x)


def _check(ok, message, default):
    if not ok:
        raise errors.InvalidArgumentError(None, None, (message + "\n" if message else "") + default)


def _assert_cmp(cmp, name):
    def assertion(x, y, message=None, summarize=None, name=None):
        a, b = _np(x), _np(y)
        if a is None or b is None:
            return None  # inside a compiled function: checked only eagerly
        try:
            ok = bool(np.all(cmp(a, b)))
        except ValueError:
            ok = False
        _check(ok, message, f"Condition x {name} y did not hold.\nx = {a}\ny = {b}")
    assertion.__name__ = f"assert_{name}"
    return assertion


assert_equal = _assert_cmp(np.equal, "==")
assert_none_equal = _assert_cmp(np.not_equal, "!=")
assert_less = _assert_cmp(np.less, "<")
assert_less_equal = _assert_cmp(np.less_equal, "<=")
assert_greater = _assert_cmp(np.greater, ">")
assert_greater_equal = _assert_cmp(np.greater_equal, ">=")


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    a, b = _np(x), _np(y)
    if a is None or b is None:
        return None
    rtol = 10 * np.finfo(a.dtype).eps if rtol is None and a.dtype.kind == "f" else (rtol or 0)
    atol = 10 * np.finfo(a.dtype).eps if atol is None and a.dtype.kind == "f" else (atol or 0)
    _check(np.allclose(a, b, rtol=rtol, atol=atol), message, f"x and y not near.\nx = {a}\ny = {b}")


def assert_rank(x, rank, message=None, name=None):
    _check(np.ndim(_np(x) if not isinstance(x, _TensorBase) else x._value) == int(rank), message,
           f"Tensor must have rank {int(rank)}, got shape {np.shape(x)}.")


def assert_all_finite(t, message=None, name=None):
    a = _np(t)
    if a is not None:
        _check(np.all(np.isfinite(a)), message, "Tensor had NaN or Inf values.")
    return t


def check_numerics(tensor, message, name=None):
    return assert_all_finite(tensor, message)


def assert_type(tensor, tf_type, message=None, name=None):
    if tensor.dtype != tf_type:
        raise TypeError((message or "") + f" {tensor.dtype} must be of type {tf_type}.")


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    for x, spec in shapes:
        shp = tuple(x.shape)
        if len(shp) != len(spec) or any(isinstance(s, int) and s != d for s, d in zip(spec, shp)):
            raise ValueError((message or "") + f" Shape {shp} does not match {tuple(spec)}.")
