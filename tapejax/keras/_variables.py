"""``tf.keras.Variable``: the Variable of Keras 3 layers, optimizers and metrics.

A :class:`tapejax.Variable` (tapes watch it, ``assign`` works as for any
Variable) that is named as Keras 3 names its variables: ``name`` is the short
name (``'kernel'``), ``path`` the name under the scopes it was created in
(``'dense/kernel'``), and its repr is Keras 3's.
"""
import numpy as np

from .._core.variable import Variable, _name_scope, register_pytree
from . import initializers as initializers


@register_pytree
class KerasVariable(Variable):
    """A Keras 3 variable: ``name`` is its own name, ``path`` includes the creating layer's.

    Args:
        initializer: the initial value, or a callable ``(shape, dtype) -> value``
            (an initializer object or name) with ``shape``.
        shape: the shape, for a callable ``initializer``.
        dtype: its dtype (default: the initial value's; float32 for initializers).
        trainable: whether it is trained (default True).
        name: its name (default ``'variable'``); it may not contain ``'/'``.

    Example:
        >>> import tapejax as tf
        >>> v = tf.keras.Variable(2.0, name="s")
        >>> v.name, v.path
        ('s', 's')
        >>> v
        <Variable path=s, shape=(), dtype=float32, value=2.0>
        >>> d = tf.keras.layers.Dense(2, name="dense")
        >>> d.build((None, 3))
        >>> d.kernel.name, d.kernel.path
        ('kernel', 'dense/kernel')
    """

    __slots__ = ("_short",)

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True,
                 aggregation="none", synchronization="auto", name=None, constraint=None, **kwargs):
        name = "variable" if name is None else str(name)
        if "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. "
                             f"Received: name={name}")
        if callable(initializer):
            if shape is None:
                raise ValueError("When creating a Variable from an initializer, the `shape` argument "
                                 f"should be specified. Received: initializer={initializer} and shape={shape}")
            value = initializers.get(initializer)(tuple(shape), dtype=dtype or "float32")
        else:
            value = initializer
        super().__init__(value, trainable=trainable, name=name, dtype=dtype, constraint=constraint)
        self._short = name

    @property
    def name(self):
        return self._short

    @property
    def path(self):
        return self._name

    def __repr__(self):
        a = self._fmt()
        value = "" if a is None else f", value={np.asarray(a)}"
        return f"<Variable path={self.path}, shape={tuple(self.shape)}, dtype={self.dtype.name}{value}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        return KerasVariable(self._value, trainable=self.trainable, name=self._short)


def owned_variable(owner, value, name, trainable=False):
    """A variable of an optimizer or metric named ``owner``: path ``'<owner>/<name>'`` whatever
    layer scope is active when it is created (Keras 3's ``adam/iteration``, ``mean/total``)."""
    saved = _name_scope[:]
    _name_scope[:] = [owner]
    try:
        return KerasVariable(value, trainable=trainable, name=name)
    finally:
        _name_scope[:] = saved
