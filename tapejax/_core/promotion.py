"""TensorFlow's new type promotion (``dtype_conversion_mode="all"`` or ``"safe"``): the lattice.

TensorFlow 2.21's ``tf.experimental.numpy.experimental_enable_numpy_behavior(dtype_conversion_mode=)``
replaces "inputs must share one dtype" by a promotion lattice with *weak* types (its
``framework/flexible_dtypes.py``): a Python number, or a tensor made from one with no dtype
given, is weak (``tf.constant(1)`` is int32, weakly typed) and defers to the other operand's
dtype (``int8 tensor + 1`` is int8). A weak tensor's array is weakly typed for JAX
(``weak_type`` on its aval), which carries it through ``tf.function`` and JAX's own functions.

TensorFlow's table is JAX's lattice (with 64-bit types) wherever a strong operand takes part.
Between weak operands TensorFlow keeps their own widths (``i32* + f32*`` is ``f32*``, where JAX
widens to the default ``f64*``), and a bool defers to a weak operand: ``join`` follows TensorFlow
there. ``"safe"`` refuses the promotions that widen bits or lose precision (``_REFUSED_IN_SAFE``,
TensorFlow's cells marked ``PromoMode.ALL``) with TensorFlow's TypeError.

This module is the lattice and the mode; ``weak.py`` applies it to ops, constants and
variables. The default mode (``None``) changes nothing anywhere.
"""
import functools
import weakref

import jax
import numpy as np
from jax._src.lax.lax import _convert_element_type   # weak_type=True has no public spelling

# None: TensorFlow's default dtype rules (an op's inputs share one dtype); "all" or "safe".
mode = None
# Whether a weak mode was ever on (``weak.py`` then installed the weak reprs).
shown = False
# Op -> how TensorFlow's weak-tensor wrappers treat it (its ``ops/weak_tensor_ops.py``): "unary"
# (the result keeps the input's weakness), "binary" (inputs promoted, the result weak when the
# promoted type is), "comparison" (promoted, never weak). Any other op's result is a plain tensor.
kinds = weakref.WeakKeyDictionary()

_BOOL = np.dtype(np.bool_)
# The dtypes a weak tensor may have (TensorFlow's ``_ALLOWED_WEAK_DTYPES``).
WEAK_DTYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64, np.complex128))

# The promotions "safe" mode refuses, from TensorFlow 2.21's table (``*`` marks a weak operand).
_REFUSED_IN_SAFE = {
    "uint8": "int8 float32*",
    "uint16": "int8 int16 bfloat16 float16 float32*",
    "uint32": "int8 int16 int32 bfloat16 float16 float32 complex64 float32*",
    "uint64": "int8 int16 int32 int64 bfloat16 float16 float32 float64 complex64 complex128 float32* float64* "
              "complex128*",
    "int8": "float32*",
    "int16": "bfloat16 float16 float32*",
    "int32": "bfloat16 float16 float32 complex64 float32*",
    "int64": "bfloat16 float16 float32 float64 complex64 complex128 float32* float64* complex128*",
    "bfloat16": "float16 complex128*",
    "float16": "complex128*",
    "float32": "complex128*",
    "float64": "complex64",
}
_REFUSED = frozenset(frozenset((a, b)) for a, bs in _REFUSED_IN_SAFE.items() for b in bs.split())


class Refused(Exception):
    """A promotion ``"safe"`` mode refuses; the op layer raises TensorFlow's TypeError with this
    message (not a TypeError itself: the op layer reads those as arguments JAX does not take)."""


def key(dtype, weak=False):
    """A lattice element: (NumPy dtype, weak), weak only for the dtypes a weak tensor may have."""
    dtype = np.dtype(dtype)
    return dtype, bool(weak) and dtype in WEAK_DTYPES


def _name(k):
    return k[0].name + ("*" if k[1] else "")


def _kind(dtype):
    return 2 if dtype.kind == "c" else 1 if dtype.kind == "f" else 0


def refusal(a, b):
    """TensorFlow's message for a promotion of ``a`` and ``b`` that "safe" mode refuses."""
    return (f"In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: '{a[0].name}'>, "
            f"weak={a[1]}) and (<dtype: '{b[0].name}'>, weak={b[1]}) is disallowed. You need to explicitly "
            "specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode).")


@functools.lru_cache(maxsize=None)
def join(a, b, safe=False):
    """TensorFlow's promotion of lattice elements ``a`` and ``b`` (its binary table's entry), or
    ``Refused`` in "safe" mode for a promotion it disallows."""
    if safe and frozenset((_name(a), _name(b))) in _REFUSED:
        raise Refused(refusal(a, b))
    (da, wa), (db, wb) = a, b
    if da == _BOOL and (wb or db == _BOOL):
        return b
    if db == _BOOL and wa:
        return a
    if wa and wb:   # both weak: the higher kind, then the wider (TF keeps 32 bits; JAX widens to 64)
        return max(a, b, key=lambda k: (_kind(k[0]), k[0].itemsize))
    dtype, weak = jax.dtypes.result_type(_jax_type(a), _jax_type(b), return_weak_type_flag=True)
    return key(dtype, weak)


def _jax_type(k):
    """``k`` as JAX's lattice takes it: a weak type as its Python type (JAX's weak int, float, complex)."""
    dtype, weak = k
    return (int, float, complex)[_kind(dtype)] if weak else dtype


def result_type(keys):
    """TensorFlow's promotion of several lattice elements, in order (``flexible_dtypes.result_type``);
    with none, a weak float32."""
    keys = list(keys)
    if not keys:
        return key(np.float32, True)
    safe = mode == "safe"
    res = keys[0]
    for k in keys[1:]:
        res = join(res, k, safe)
    return res


def as_weak(x, weak=True):
    """``x`` (an array or a traced value) with the weak flag ``weak``."""
    return _convert_element_type(x, weak_type=weak)


def python_key(x):
    """The lattice element TensorFlow infers for a Python value (``_get_dtype_and_weakness``): int is
    i32* (OverflowError past int32), float f32*, complex c128*, bool strong; None for others."""
    t = type(x)
    if t is bool:
        return key(_BOOL)
    if t is int:
        if not -2**31 <= x < 2**31:
            raise OverflowError(f"Python int {x} too large to convert to np.int32")
        return key(np.int32, True)
    if t is float:
        return key(np.float32, True)
    if t is complex:
        return key(np.complex128, True)
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind not in "OUSV":
        return key(x.dtype)
    return None

