"""tf.experimental.numpy: NumPy-style functions on Tensors (every jax.numpy name), ``random``
(TensorFlow's ``np_random``), ``ndarray`` (``tf.Tensor``, as TensorFlow's alias) and
``experimental_enable_numpy_behavior`` (NumPy's methods on Tensors)."""
import numpy as _np

from .._core import logs as _logs, weak as _weak
from .._core.tensor import Tensor as ndarray
from .. import ops as _ops
from ..ops import weak_ops as _weak_ops  # noqa: F401  (the ops TF's new type promotion makes weak-aware)
from ..ops import exports as _exports
from .. import numpy as tnp
from . import _np_random as random  # noqa: F401

globals().update(_exports("experimental.numpy"))


def _reshape(self, *newshape, order="C"):
    if order != "C":
        raise ValueError(f"Unsupported order argument {order}")
    if len(newshape) == 1 and not isinstance(newshape[0], (int, _np.integer)):
        newshape = newshape[0]
    return tnp.reshape(self, tuple(newshape))


def _is_bool_index(k):
    if isinstance(k, (list, tuple)) and k and all(isinstance(e, (bool, _np.bool_)) for e in k):
        return True
    if isinstance(k, _np.ndarray) or (isinstance(k, ndarray) and not _is_traced(k)):
        return k.dtype == bool
    return False


def _is_traced(t):
    try:
        _np.asarray(t)
    except Exception:  # noqa: BLE001 -- a tracer inside tf.function: left to TensorFlow's rules
        return True
    return False


def _numpy_getitem(self, key):
    # NumPy's boolean indices: a boolean sequence (or concrete boolean array) of k dimensions
    # selects the positions of its True values in k dimensions (TF's NumPy-style slicing).
    items = key if isinstance(key, tuple) else (key,)
    if any(_is_bool_index(k) for k in items):
        key = tuple(i for k in items for i in (_np.nonzero(_np.asarray(k)) if _is_bool_index(k) else (k,)))
    return _plain_getitem(self, key)


_plain_getitem = ndarray.__getitem__

_METHODS = {
    "__getitem__": _numpy_getitem,
    "T": property(lambda self: tnp.transpose(self)),
    "size": property(lambda self: _np.int64(_np.prod(self.shape, dtype=_np.int64))),
    "tolist": lambda self: self.numpy().tolist(),
    "transpose": lambda self, axes=None: tnp.transpose(self, axes),
    "flatten": lambda self: tnp.ravel(self),
    "ravel": lambda self: tnp.ravel(self),
    "reshape": _reshape,
    "clip": lambda self, a_min, a_max: tnp.clip(self, a_min, a_max),
    "astype": lambda self, dtype: _ops.cast(self, dtype),
    "__round__": lambda self, ndigits=None: tnp.around(self, 0 if ndigits is None else ndigits),
    "max": lambda self, axis=None, keepdims=None: tnp.max(self, axis, keepdims=bool(keepdims)),
    "mean": lambda self, axis=None, dtype=None, out=None, keepdims=None: tnp.mean(
        self, axis, dtype=dtype, keepdims=bool(keepdims)),
    "min": lambda self, axis=None, keepdims=None: tnp.min(self, axis, keepdims=bool(keepdims)),
    "data": property(lambda self: self),
    "__pos__": lambda self: self,
}


def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """Gives Tensors NumPy's methods and boolean indices, as TensorFlow's does: ``T``, ``size``,
    ``reshape``, ``astype``, ``transpose``, ``ravel``, ``flatten``, ``clip``, ``max``, ``mean``,
    ``min``, ``tolist``, ``data``, ``round()``, and ``x[:, (True, False, True)]``, ``x[x > 2]``
    (boolean indices known when indexing: not a mask computed inside a ``tf.function``).
    All are recorded on tapes.

    ``dtype_conversion_mode="all"`` or ``"safe"`` switches on TensorFlow's new type promotion
    (its guide ``tf_numpy_type_promotion``): Python numbers and lists, and tensors made from
    them with no dtype, are *weak* (``tf.constant(1)`` prints ``weak=True``) and defer to the
    other operand's dtype; the arithmetic ops promote their inputs along TensorFlow's lattice
    (``int32 + float32`` is float32; "safe" refuses the promotions that widen bits or lose
    precision with TensorFlow's TypeError). ``"legacy"`` (and ``"off"``) keep tapejax's rules,
    TensorFlow's default ones: an op's inputs share one dtype. TensorFlow's ``"legacy"`` also
    switches to NumPy's promotion (``int32 + float32`` is float64), which tapejax does not do,
    and ``prefer_float32=True`` raises ``NotImplementedError``.

    Args:
        prefer_float32: TensorFlow's float32 default for Python floats (not provided).
        dtype_conversion_mode: ``"legacy"``, ``"off"``, ``"all"`` or ``"safe"``.

    Raises:
        ValueError: an unknown ``dtype_conversion_mode`` (TensorFlow's message).

    Example:
        >>> import tapejax as tf
        >>> import tapejax.experimental.numpy as tnp
        >>> tnp.experimental_enable_numpy_behavior()
        >>> x = tf.ones([2, 3])
        >>> x.T.shape, x.reshape(-1).shape, x.astype(tnp.int32).dtype, x.size
        (TensorShape([3, 2]), TensorShape([6]), tf.int32, np.int64(6))
    """
    if prefer_float32:
        raise NotImplementedError(
            "tapejax's experimental_enable_numpy_behavior does not provide prefer_float32=True (tnp.asarray(1.) "
            "stays float64; write tnp.asarray(1., tnp.float32)).")
    if dtype_conversion_mode in ("safe", "all"):
        _logs.warning("UserWarning: enabling the new type promotion must happen at the beginning of the program. "
                      "Please ensure no TF APIs have been used yet.")
    _weak.set_mode(dtype_conversion_mode)
    for name, method in _METHODS.items():
        if name == "__getitem__" or not hasattr(ndarray, name) or vars(ndarray).get(name) is method:
            setattr(ndarray, name, method)   # Tensor's own methods stay; indexing becomes NumPy's


def __getattr__(name):
    return getattr(tnp, name)
