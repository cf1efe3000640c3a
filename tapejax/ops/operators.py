"""Python's operators on Tensor and Variable (``x + y``, ``x @ y``, ``x[i]``...): the table's ops."""
import jax
import numpy as np

from .._core import dtypes as _dtypes
from .._core.basic import negative
from .._core.tensor import _TensorBase, check_python_kinds
from .math_ops import (
    abs, add, subtract, multiply, divide, floordiv, floormod, pow, logical_and, logical_or, logical_xor,
    logical_not, invert, less, less_equal, greater, greater_equal, equal, not_equal,
)
from .linalg_ops import matmul
from .array_ops import getitem


def _binary(op, reverse=False):
    if reverse:
        return lambda self, other: op(_left_operand(other, self), self)
    return lambda self, other: op(self, other)


def _left_operand(x, tensor):
    """A reflected operator's left operand (``2.5 * t``), converted to the tensor's dtype as
    TensorFlow converts it: a NumPy value is cast, a Python value of another kind is a TypeError
    (``2.5 * int32_tensor``: ``Cannot convert 2.5 to EagerTensor of dtype int32``)."""
    if isinstance(x, _TensorBase):
        return x
    dtype = tensor.dtype
    if isinstance(x, (np.ndarray, np.generic, jax.Array)):     # cast (a jax array as a NumPy one)
        return x if dtype == _dtypes.string or x.dtype == dtype.as_numpy_dtype else x.astype(dtype.as_numpy_dtype)
    if not (type(x) is int and dtype != _dtypes.bool or type(x) is float and dtype.is_floating):
        check_python_kinds(x, dtype)    # (the common cases above need no check)
    return x


def _rmatmul(self, other):
    return matmul(other, self)


def _install_operators(cls):
    for name, op in [("add", add), ("sub", subtract), ("mul", multiply), ("truediv", divide),
                     ("floordiv", floordiv), ("mod", floormod), ("pow", pow),
                     ("and", logical_and), ("or", logical_or), ("xor", logical_xor)]:
        setattr(cls, f"__{name}__", _binary(op))
        setattr(cls, f"__r{name}__", _binary(op, reverse=True))
    cls.__matmul__ = lambda self, other: matmul(self, other)
    cls.__rmatmul__ = _rmatmul
    cls.__neg__ = lambda self: negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: abs(self)
    cls.__invert__ = lambda self: logical_not(self) if self._value.dtype == np.bool_ else invert(self)
    cls.__lt__ = _binary(less)
    cls.__le__ = _binary(less_equal)
    cls.__gt__ = _binary(greater)
    cls.__ge__ = _binary(greater_equal)
    cls.__eq__ = lambda self, other: equal(self, other) if _comparable(self, other) else False
    cls.__ne__ = lambda self, other: not_equal(self, other) if _comparable(self, other) else True
    cls.__getitem__ = getitem


def _comparable(self, other):
    if isinstance(other, (str, bytes)):
        return self._value.dtype == object  # a string tensor compares with text
    return other is not None and not isinstance(other, type)


_install_operators(_TensorBase)
