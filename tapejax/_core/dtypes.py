"""TensorFlow-style dtype objects over numpy/JAX dtypes."""
import os

import jax
import numpy as np
import jax.numpy as jnp

# TensorFlow has int64 and float64 tensors (argmax indices, float64 NumPy data); JAX has them
# only in its 64-bit mode, and without it truncates 64-bit values silently. So tapejax turns
# that mode on at import, while every default of its own stays TensorFlow's float32/int32.
# TAPEJAX_ENABLE_X64=0 opts out: then a value that does not fit 32 bits raises.
if os.environ.get("TAPEJAX_ENABLE_X64", "1") != "0":
    jax.config.update("jax_enable_x64", True)


class DType:
    """A TensorFlow dtype (``tf.float32``...) backed by a numpy dtype.

    Compares equal to its numpy dtype, numpy scalar type and name, and converts
    with ``np.dtype(tf.float32)``, so it can be passed to ``jnp`` functions.

    Example:
        >>> import tapejax as tf
        >>> tf.float32 == 'float32', tf.float32.is_floating
        (True, True)
    """

    __slots__ = ("_np",)

    def __init__(self, np_dtype):
        self._np = np.dtype(np_dtype)

    @property
    def dtype(self):  # lets np.dtype(DType) and jnp functions accept it
        return self._np

    @property
    def name(self):
        return "string" if self._np.kind == "O" else self._np.name

    @property
    def as_numpy_dtype(self):
        return self._np.type

    @property
    def is_floating(self):
        return jnp.issubdtype(self._np, jnp.floating)

    @property
    def is_complex(self):
        return jnp.issubdtype(self._np, jnp.complexfloating)

    @property
    def is_integer(self):
        return jnp.issubdtype(self._np, jnp.integer)

    @property
    def is_unsigned(self):
        return jnp.issubdtype(self._np, jnp.unsignedinteger)

    @property
    def is_bool(self):
        return self._np == np.bool_

    @property
    def base_dtype(self):
        return self

    @property
    def as_datatype_enum(self):
        """The dtype's number in TensorFlow's ``DataType`` enum (``tf.float32``: 1, ``tf.float64``: 2).

        Example:
            >>> import tapejax as tf
            >>> tf.float64.as_datatype_enum, tf.as_dtype(2)
            (2, tf.float64)
        """
        return _ENUMS[self.name]

    @property
    def size(self):
        return self._np.itemsize

    @property
    def min(self):
        return jnp.finfo(self._np).min if self.is_floating else jnp.iinfo(self._np).min

    @property
    def max(self):
        return jnp.finfo(self._np).max if self.is_floating else jnp.iinfo(self._np).max

    def __eq__(self, other):
        if other is self:
            return True
        try:
            return self._np == as_dtype(other)._np
        except TypeError:
            return False

    def __hash__(self):
        return hash(self._np)

    def __repr__(self):
        return "tf." + self.name

    def __str__(self):
        return f"<dtype: '{self.name}'>"


_BY_NAME = {}


def _make(name, np_dtype):
    d = DType(np_dtype)
    _BY_NAME[name] = d
    return d


float16 = half = _make("float16", np.float16)
bfloat16 = _make("bfloat16", jnp.bfloat16)
float32 = _make("float32", np.float32)
float64 = double = _make("float64", np.float64)
int8 = _make("int8", np.int8)
int16 = _make("int16", np.int16)
int32 = _make("int32", np.int32)
int64 = _make("int64", np.int64)
uint8 = _make("uint8", np.uint8)
uint16 = _make("uint16", np.uint16)
uint32 = _make("uint32", np.uint32)
uint64 = _make("uint64", np.uint64)
bool = _make("bool", np.bool_)  # noqa: A001  (TF's name)
complex64 = _make("complex64", np.complex64)
complex128 = _make("complex128", np.complex128)
# String tensors hold NumPy object arrays of bytes on the host (JAX arrays hold numbers).
string = _make("string", np.object_)


def as_dtype(value):
    """Converts a DType, numpy dtype, type, name or ``DataType`` enum number to a :class:`DType`.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> tf.as_dtype(np.int32)
        tf.int32
        >>> tf.as_dtype(2)  # Enum value for float64.
        tf.float64
        >>> tf.as_dtype('float')
        tf.float32
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, np.dtype):
        known = _BY_NP.get(value)
        if known is not None:
            return known
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if isinstance(value, str) and value in _C_ALIASES:   # TF's C names: 'float' is float32 (NumPy's float64)
        return _C_ALIASES[value]
    if type(value) is int:   # TensorFlow's DataType enum (types.proto): numpy would read 2 as a size
        if value in _BY_ENUM:
            return _BY_ENUM[value]
        raise TypeError(f"Cannot convert the argument `type_value`: {value!r} to a TensorFlow DType.")
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"Cannot convert {value!r} to a dtype. Use a tf dtype such as tf.float32, "
                        "a numpy dtype, or a name such as 'float32'.") from None
    if np_dtype.kind in "OUS":  # object, str and bytes NumPy data are TensorFlow's strings
        return string
    out = _BY_NAME.get(np_dtype.name) or DType(np_dtype)
    if isinstance(value, np.dtype) and out.name in _BY_NAME:
        _BY_NP[value] = out       # a tensor's dtype is asked often: numpy's dtype.name is Python
    return out


_BY_NP = {}

# TensorFlow's DataType enum (tensorflow/core/framework/types.proto) of the dtypes there are here.
_ENUMS = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7, "complex64": 8,
          "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18, "float16": 19, "uint32": 22,
          "uint64": 23}
_BY_ENUM = {n: _BY_NAME[name] for name, n in _ENUMS.items()}


def np_dtype(value):
    """numpy dtype of a DType-like value (None stays None)."""
    return None if value is None else as_dtype(value)._np


_C_NAMES = {"float32": "float", "float64": "double", "float16": "half"}
_C_ALIASES = {c: _BY_NAME[name] for name, c in _C_NAMES.items()}


def c_name(dtype):
    """The dtype's name in TensorFlow's kernel messages ('float' for float32, 'double', 'half')."""
    name = as_dtype(dtype).name
    return _C_NAMES.get(name, name)


def is_float(np_dt):
    """Whether values of this numpy dtype carry gradients (floating or complex)."""
    return np_dt.kind in "fc" or np_dt == jnp.bfloat16
