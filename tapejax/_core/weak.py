"""Weak tensors in the op layer, constants and variables: TensorFlow's new type promotion applied.

``set_mode("all")`` (or ``"safe"``) is what ``tnp.experimental_enable_numpy_behavior(
dtype_conversion_mode=...)`` does. As TensorFlow's ``weak_tensor_ops.py`` wraps its APIs, ops then
run through ``_promoting_run``: a Python number or list given to an op TensorFlow lists as
weak-aware (``promotion.kinds``) is typed as TensorFlow infers it (``tf.abs(-3)``, ``x + 1.5``),
the two inputs of a promoting op are cast to their promoted dtype inside the op (``_promoting``:
the cast's gradient returns to each input's dtype), the result is weak as TensorFlow's wrappers
make it, and any other op's result is a plain tensor (``tf.concat`` of weak tensors is not weak).
Ops themselves only ever see plain arrays, so nothing compiled depends on the mode. In the
default mode the op layer runs as always: ``engine._run`` is swapped only while a weak mode is on.
"""
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import dtypes as _dtypes, engine as _engine, lazy as _lazy, promotion as _promotion
from .tensor import Tensor, _TensorBase, _contains_tensor

_plain_run = _engine._run
_MODES = {"off": None, "legacy": None, "safe": "safe", "all": "all"}


def set_mode(name):
    """Switches TensorFlow's dtype conversion mode: ``"all"`` or ``"safe"`` (the new promotion with
    weak tensors), ``"legacy"`` or ``"off"`` (tapejax's default rules: no promotion)."""
    if name not in _MODES:
        raise ValueError(
            f"The provided promotion mode {name} does not exist. Make sure the provided dtype conversion "
            "mode is one of the followings: 'off', 'legacy', 'safe' or 'all'.")
    new = _MODES[name]
    if new is not None and not _promotion.shown:
        _promotion.shown = True
        _show_weakness(Tensor)
    if new == _promotion.mode:
        return
    _promotion.mode = new
    _engine._run = _plain_run if new is None else _promoting_run
    lazy_changed()


def lazy_changed():
    """Lazy execution defers ops before ``engine._run`` sees them: it pauses while a weak mode is
    on (its ops would see weak arrays, which JAX widens), and resumes after."""
    if _promotion.mode is not None:
        _lazy.run_pending()
        _engine.defer = None
    else:
        _engine.defer = _lazy.defer if _lazy.config.enabled else None


def _promoting_run(op, args, static):
    """``engine._run`` under a weak mode. The op computes on plain arrays (a weak tensor passes as
    the tensor of its dtype, with its id): JAX would widen two weak float32 operands to float64,
    in the op and in its gradient. Its result is made weak as TensorFlow's wrapper makes it."""
    kind = _promotion.kinds.get(op)
    args, keys = _plain_args(args, 0 if kind is None else 1 if kind == "unary" else 2)
    weak = False
    if kind == "unary":
        weak = bool(keys) and keys[0] is not None and keys[0][1]
    elif kind is not None and len(keys) == 2 and None not in keys:
        try:
            dtype, weak = _promotion.result_type(keys)
        except _promotion.Refused as e:
            raise TypeError(str(e)) from None
        weak = weak and kind == "binary"
        if keys[0][0] != dtype or keys[1][0] != dtype:
            op = _promoting(op, dtype)
    return _weakly(_plain_run(op, args, static), weak)


def _plain_args(args, n):
    """(``args`` with weak tensors as plain ones of the same id and the first ``n`` Python or
    NumPy values as tensors of the dtype TensorFlow infers, the lattice elements of the first
    ``n``)."""
    out, keys = list(args), []
    for i, a in enumerate(args):
        if type(a) is Tensor:
            v = a._aval
            weak = is_weak(v)
            if weak:
                out[i] = Tensor(_promotion.as_weak(a._value, False), a._id)
            if i < n:
                keys.append(None if v.dtype == object else _promotion.key(v.dtype, weak))
        elif i < n:
            try:
                k = value_key(a)
            except _promotion.Refused as e:
                raise TypeError(str(e)) from None
            keys.append(k)
            if k is not None and not isinstance(a, (_TensorBase, jax.Array)):
                # A NumPy value of TensorFlow's dtype, inside a tensor: the op takes it as it is (a
                # tensor's operand is not converted again), with no transfer made for it here.
                out[i] = Tensor(np.asarray(a, k[0]))
            elif isinstance(a, jax.Array):
                out[i] = Tensor(_promotion.as_weak(a, False) if a.weak_type else a)
    return out, keys


def _weakly(result, weak):
    """``result`` (a Tensor, or a tuple or list of them) weak where ``weak`` and its dtype may be,
    else plain (a constant inside the op may be weak for JAX); a changed one is a new Tensor of the
    same id: the op recorded the plain one, so its gradient computes on plain arrays."""
    if isinstance(result, (tuple, list)):
        return type(result)(_weakly(r, weak) for r in result)
    if type(result) is not Tensor:
        return result
    want = weak and result.dtype._np in _promotion.WEAK_DTYPES
    if is_weak(result._aval) == want:
        return result
    return Tensor(_promotion.as_weak(result._value, want), result._id)


def _promoting(op, dtype):
    """``op`` computing on its first two inputs cast to ``dtype`` (TensorFlow's promotion casts
    them; the gradient of the cast returns to each input's dtype)."""
    per_op = _derived.get(op)
    if per_op is None:
        per_op = _derived[op] = {}
    d = per_op.get(dtype)
    if d is None:
        d = per_op[dtype] = _cast_first_two(op, dtype)
    return d


_derived = weakref.WeakKeyDictionary()   # op -> {dtype: the op on inputs cast to dtype}


def _cast_first_two(op, dtype):
    fn, vjp = op.fn, op.vjp

    def promoted(x, y, *rest, **static):
        return fn(x.astype(dtype), y.astype(dtype), *rest, **static)

    def promoted_vjp(ans, x, y, *rest, **static):
        return vjp(ans, x.astype(dtype), y.astype(dtype), *rest, **static)

    d = _engine.Op(promoted, vjp=None if vjp is None else promoted_vjp, name=op.name, static=op.static)
    d.host, d.explain, d.dtype_error, d.no_gradient = op.host, op.explain, op.dtype_error, op.no_gradient
    return d


def is_weak(v):
    """Whether an array (or traced value) is weakly typed."""
    w = getattr(v, "weak_type", None)    # a jax array's (quick)
    if w is not None:
        return w
    try:
        return bool(jax.typeof(v).weak_type)
    except Exception:   # a NumPy object array (strings), a value lazy execution has not computed
        return False


def value_key(x):
    """The lattice element TensorFlow infers for ``x`` (``flexible_dtypes._get_dtype_and_weakness``),
    or None for values it leaves to the default rules (text, lists holding tensors)."""
    if isinstance(x, Tensor):
        dtype = x.dtype._np
        return None if dtype == object else _promotion.key(dtype, is_weak(x._aval))
    if isinstance(x, _TensorBase):
        return _promotion.key(x.dtype._np)
    if isinstance(x, _dtypes.DType):
        return _promotion.key(x._np)
    if isinstance(x, jax.Array):
        return _promotion.key(x.dtype, x.weak_type)
    if isinstance(x, (list, tuple)):
        if _contains_tensor(x):
            return None
        keys = [value_key(e) for e in x]
        return None if None in keys else _promotion.result_type(keys)
    return _promotion.python_key(x)


def typed_value(x, weak=None):
    """``x`` (a Python or NumPy value) as the array TensorFlow's promotion makes of it (weakly typed
    as TensorFlow infers, or as ``weak`` says), or None for a value it does not type."""
    try:
        k = value_key(x)
    except _promotion.Refused as e:
        raise TypeError(str(e)) from None
    if k is None:
        return None
    dtype, inferred = k
    weak = inferred if weak is None else weak
    v = x if isinstance(x, jax.Array) else jnp.asarray(np.asarray(x, dtype))
    return _promotion.as_weak(v, weak) if is_weak(v) != weak else v


def with_weakness(t, weak):
    """The Tensor ``t`` with the weak flag ``weak``."""
    if is_weak(t._value) == weak:
        return t
    return Tensor(_promotion.as_weak(t._value, weak))


def constant(value, dtype, build):
    """``tf.constant(value, dtype)`` under a weak mode: weak for Python data with no dtype (and for
    a weak tensor), a tensor of another dtype converted where the promotion reaches ``dtype``.
    ``build(value, dtype)`` is the default ``tf.constant``."""
    try:
        k = value_key(value)
        want = None if dtype is None else _promotion.key(_dtypes.np_dtype(dtype))
        target = None if k is None or want is None else _promotion.result_type([k, want])
    except _promotion.Refused as e:
        raise TypeError(str(e)) from None
    if k is None:
        return build(value, dtype)
    if dtype is None:
        return with_weakness(build(value, None if isinstance(value, _TensorBase) else k[0]), k[1])
    if target[0] != _dtypes.np_dtype(dtype):
        if isinstance(value, _TensorBase):
            raise TypeError(f"Expected tensor {format(value.numpy())} with dtype {_dtypes.as_dtype(dtype)!r}, but got "
                            f"dtype {value.dtype!r}.")
        return build(value, dtype)
    if isinstance(value, _TensorBase):
        value = Tensor(_promotion.as_weak(value._value.astype(_dtypes.np_dtype(dtype)), False))
    return with_weakness(build(value, dtype), False)


def variable_operand(var, value, method):
    """The operand of ``var.assign*`` under a weak mode: converted to the variable's dtype when the
    promotion of the two is that dtype, else TensorFlow's TypeError."""
    try:
        k = value_key(value)
        if k is None:
            return value
        dtype = var.dtype._np
        target = _promotion.result_type([_promotion.key(dtype), k])
    except _promotion.Refused as e:
        raise TypeError(str(e)) from None
    if target[0] != dtype:
        shown, want = format(value), f"<dtype: '{dtype.name}'>"
        raise TypeError(
            f"Variable dtype is immutable. Calling {method} of Variable (with dtype {want}) on {shown} requires "
            f"converting {shown} to {want}. This is disabled in the current promotion semantics. Please convert "
            f"{shown} manually before calling {method}.")
    v = value._value if isinstance(value, _TensorBase) else typed_value(value)
    return _promotion.as_weak(v.astype(dtype), False)


def _show_weakness(cls):
    """While a weak mode is on, weak tensors print as TensorFlow's WeakTensors: ``..., weak=True>``,
    and formatted with `` weakly typed`` appended (JAX's own functions on Python numbers give weak
    arrays in the default mode too: not TensorFlow's WeakTensors). Installed when a weak mode is
    first switched on."""
    plain_repr, plain_str, plain_format = cls.__repr__, cls.__str__, cls.__format__

    def weak(self):
        return (_promotion.mode is not None and type(self) is Tensor and self._lazy is None and is_weak(self._v)
                and self.dtype._np in _promotion.WEAK_DTYPES)

    def __repr__(self):
        s = plain_repr(self)
        return s[:-1] + ", weak=True" + s[-1] if weak(self) else s

    def __str__(self):
        s = plain_str(self)
        return s[:-1] + ", weak=True" + s[-1] if weak(self) else s

    def __format__(self, spec):
        s = plain_format(self, spec)
        return s + " weakly typed" if weak(self) else s

    cls.__repr__, cls.__str__, cls.__format__ = __repr__, __str__, __format__
