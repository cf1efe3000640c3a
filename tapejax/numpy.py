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
    [24.0, 22.0, 12.0]
"""
import jax
import jax.numpy as jnp
import numpy as np

from ._engine import Op, freeze
from ._tensor import _TensorBase

_CACHE = {}


def _is_tensor(x):
    return isinstance(x, (_TensorBase, jax.Array, np.ndarray))


def _wrap(name, fn):
    def call(*args, **kwargs):
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
        dyn = tuple(i for i, x in enumerate(leaves) if _is_tensor(x))
        static = tuple((i, freeze(x)) for i, x in enumerate(leaves) if i not in dyn)
        key = (name, tree, dyn, static)
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


def __getattr__(name):
    fn = getattr(jnp, name)
    if not callable(fn) or isinstance(fn, type):
        return fn
    w = _wrap(name, fn)
    globals()[name] = w
    return w
