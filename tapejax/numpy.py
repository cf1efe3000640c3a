"""Every ``jax.numpy`` function, usable on Tensors and recorded on tapes.

``tapejax.numpy.f(*args, **kwargs)`` calls ``jax.numpy.f``: arguments that are
tensors (Tensors, Variables, jax or numpy arrays) become the inputs of a tape
op; everything else (axes, shapes, Python numbers) is static configuration.
Ops are built once per function and call pattern, and cached.

Example:
    >>> import tapejax as tf
    >>> import tapejax.numpy as tnp
    >>> x = tf.Variable([1.0, 2.0, 3.0])
    >>> with tf.GradientTape() as tape:
    ...     y = tnp.sum(tnp.cumsum(x) ** 2)
    >>> tape.gradient(y, x).numpy().tolist()
    [20.0, 18.0, 12.0]
"""
import types

import jax
import jax.numpy as jnp
import numpy as np

from .extend import Op, freeze
from ._core import promotion as _promotion, weak as _weak
from ._core.tensor import Tensor, _TensorBase

_CACHE = {}


def _is_tensor(x):
    return isinstance(x, (_TensorBase, jax.Array, np.ndarray))


def _typed(v):
    if isinstance(v, tuple):
        return tuple(_typed(e) for e in v)
    return type(v), v


def _wrap(name, fn):
    def call(*args, **kwargs):
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
        dyn = tuple(i for i, x in enumerate(leaves) if _is_tensor(x))
        static = tuple((i, freeze(x)) for i, x in enumerate(leaves) if i not in dyn)
        # Typed: 1, 1.0 and True are equal keys, but jnp.asarray(1.0) is not jnp.asarray(1).
        key = (name, tree, dyn, _typed(static))
        op = _CACHE.get(key)
        if op is None:
            n = len(leaves)

            def pure(*xs):
                full = [None] * n
                for i, v in static:
                    full[i] = v
                for i, v in zip(dyn, xs):
                    full[i] = v
                a, kw = jax.tree_util.tree_unflatten(tree, full)
                return fn(*a, **kw)

            op = _CACHE[key] = Op(pure, name=name)
        return op(*[leaves[i] for i in dyn])

    call.__name__ = name
    call.__doc__ = f"``jax.numpy.{name}`` on Tensors, recorded on tapes."
    return call


def _lookup(module, prefix, name, namespace):
    fn = getattr(module, name)
    if isinstance(fn, types.ModuleType):
        # jnp.linalg, jnp.fft: wrap their functions too, or they would bypass the tape.
        w = _Submodule(fn, prefix + name + ".")
    elif not callable(fn) or isinstance(fn, type):
        return fn
    else:
        w = _wrap(prefix + name, fn)
        if prefix + name in ("array", "asarray", "asanyarray"):
            w = _weakly_typed(w)
    namespace[name] = w
    return w


def _weakly_typed(call):
    """``tnp.array`` / ``asarray`` under TensorFlow's new type promotion (``dtype_conversion_mode``
    "all" or "safe"): Python data with no dtype gives a weak tensor of TensorFlow's dtype
    (``tnp.array(1)`` is int32, weakly typed), a tensor keeps its weakness."""
    def array(a, *args, **kwargs):
        if _promotion.mode is None or args or kwargs.get("dtype") is not None:
            return call(a, *args, **kwargs)
        if isinstance(a, Tensor):
            return _weak.with_weakness(call(a, **kwargs), _weak.is_weak(a._value))
        v = None if kwargs or isinstance(a, _TensorBase) else _weak.typed_value(a)
        return call(a, **kwargs) if v is None else Tensor(v)

    array.__name__, array.__doc__ = call.__name__, call.__doc__
    return array


class _Submodule:
    """``tapejax.numpy.linalg`` and friends: a jax.numpy submodule whose functions are tape ops."""

    def __init__(self, module, prefix):
        self._module = module
        self._prefix = prefix

    def __getattr__(self, name):
        return _lookup(self._module, self._prefix, name, self.__dict__)

    def __repr__(self):
        return f"<tapejax.numpy wrapper of {self._module.__name__}>"


def __getattr__(name):
    return _lookup(jnp, "", name, globals())
