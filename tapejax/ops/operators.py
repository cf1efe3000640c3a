"""Python's operators on Tensor and Variable (``x + y``, ``x @ y``, ``x[i]``...): the table's ops."""
import jax
import numpy as np

from .._core import dtypes as _dtypes, promotion as _promotion
from .._core.basic import negative
from .._core.engine import number_fits
from .._core.tensor import Tensor, _TensorBase, check_python_kinds
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
    kind = type(x)
    if kind is float or kind is int:   # the common case, first: a Python number that fits
        stored = tensor._v if type(tensor) is Tensor else getattr(tensor, "_stored", None)  # (a Variable's)
        if number_fits(_PYTHON[kind], tensor.dtype._np if stored is None else stored.dtype):
            return x
    elif isinstance(x, _TensorBase):
        return x
    if _promotion.mode is not None:    # TF's new type promotion: the op promotes its operands
        return x
    if isinstance(x, (np.ndarray, np.generic, jax.Array)):     # cast (a jax array as a NumPy one)
        dtype = tensor.dtype
        return x if dtype == _dtypes.string or x.dtype == dtype._np else x.astype(dtype._np)
    check_python_kinds(x, tensor.dtype)
    return x


_PYTHON = {float: np.dtype(np.float64), int: np.dtype(np.int64)}   # how JAX types a Python number


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
