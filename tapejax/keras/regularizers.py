"""tf.keras.regularizers: weight penalties added to ``layer.losses``.

Example:
    >>> import tapejax as tf
    >>> d = tf.keras.layers.Dense(2, kernel_initializer='ones', kernel_regularizer=tf.keras.regularizers.l2(0.1))
    >>> _ = d(tf.ones([1, 3]))
    >>> round(float(d.losses[0]), 4)
    0.6
"""
from .. import ops as _ops
from ._repr import KerasObjectRepr as _KerasObjectRepr


class Regularizer(_KerasObjectRepr):
    """Base class: ``regularizer(weight) -> scalar penalty``."""

    _keras_modules = {name: "keras.src.regularizers.regularizers" for name in ("Regularizer", "L1", "L2", "L1L2")}

    def __call__(self, x):
        return _ops.constant(0.0)

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|w|) + l2 * sum(w**2)``.

    Example:
        >>> import tapejax as tf
        >>> float(tf.keras.regularizers.L1L2(l1=1.0, l2=1.0)(tf.constant([1.0, -2.0])))
        8.0
    """

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        terms = []
        if self.l1:
            terms.append(_ops.multiply(self.l1, _ops.reduce_sum(_ops.abs(x))))
        if self.l2:
            terms.append(_ops.multiply(self.l2, _ops.reduce_sum(_ops.square(x))))
        if not terms:
            return _ops.constant(0.0)
        return terms[0] if len(terms) == 1 else _ops.add(terms[0], terms[1])

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``l1 * sum(|w|)`` (Keras default 0.01).

    Example:
        >>> import tapejax as tf
        >>> float(tf.keras.regularizers.L1(0.5)(tf.constant([1.0, -2.0])))
        1.5
    """

    def __init__(self, l1=0.01):
        super().__init__(l1=l1)


class L2(L1L2):
    """``l2 * sum(w**2)`` (Keras default 0.01).

    Example:
        >>> import tapejax as tf
        >>> float(tf.keras.regularizers.L2(0.5)(tf.constant([1.0, -2.0])))
        2.5
    """

    def __init__(self, l2=0.01):
        super().__init__(l2=l2)


l1 = L1
l2 = L2
l1_l2 = L1L2


def get(identifier):
    """A regularizer from ``None``, a name (``'l1'``, ``'l2'``, ``'l1_l2'``) or a callable.

    Raises:
        ValueError: an unknown name.

    Example:
        >>> import tapejax as tf
        >>> type(tf.keras.regularizers.get('l2')).__name__
        'L2'
    """
    if identifier is None or callable(identifier):
        return identifier
    table = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}
    if isinstance(identifier, str) and identifier in table:
        return table[identifier]()
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}. Use 'l1', 'l2', "
                     "tf.keras.regularizers.l2(0.01) or a callable weight -> penalty.")
