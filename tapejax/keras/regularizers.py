"""tf.keras.regularizers: weight penalties added to ``layer.losses``.

Example:
    >>> import tapejax as tf
    >>> d = tf.keras.layers.Dense(2, kernel_initializer='ones', kernel_regularizer=tf.keras.regularizers.l2(0.1))
    >>> _ = d(tf.ones([1, 3]))
    >>> round(float(d.losses[0]), 4)
    0.6
"""
import numpy as np

from .. import ops as _ops
from ._repr import KerasObjectRepr as _KerasObjectRepr
from . import _serialization


class Regularizer(_KerasObjectRepr):
    """Base class: ``regularizer(weight) -> scalar penalty``."""

    _keras_modules = {name: "keras.src.regularizers.regularizers" for name in ("Regularizer", "L1", "L2", "L1L2")}
    _keras_public_module = "keras.regularizers"   # where serialize_keras_object names it

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
        # Keras 3 keeps the factor as a float32 tensor: its configuration shows float32's value
        # (L1(0.1) -> {'l1': 0.10000000149011612}).
        super().__init__(l1=float(np.float32(0.01 if l1 is None else l1)))

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    """``l2 * sum(w**2)`` (Keras default 0.01).

    Example:
        >>> import tapejax as tf
        >>> float(tf.keras.regularizers.L2(0.5)(tf.constant([1.0, -2.0])))
        2.5
    """

    def __init__(self, l2=0.01):
        super().__init__(l2=0.01 if l2 is None else l2)

    def get_config(self):
        return {"l2": self.l2}


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
    if isinstance(identifier, dict):   # a configuration: Keras 3's (serialize) or Keras 2's
        return _serialization.get(identifier, {"L1": L1, "L2": L2, "L1L2": L1L2, "Regularizer": Regularizer},
                                  "keras.regularizers", "regularizer")
    table = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}
    if isinstance(identifier, str) and identifier in table:
        return table[identifier]()
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}. Use 'l1', 'l2', "
                     "tf.keras.regularizers.l2(0.01) or a callable weight -> penalty.")


def serialize(regularizer):
    """Keras 3's configuration of a regularizer (``serialize_keras_object``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.regularizers.serialize(tf.keras.regularizers.L2(0.5))
        {'module': 'keras.regularizers', 'class_name': 'L2', 'config': {'l2': 0.5}, 'registered_name': None}
    """
    return _serialization.serialize_keras_object(regularizer)


def deserialize(config, custom_objects=None):
    """The regularizer a configuration describes (Keras 3's ``keras.regularizers.deserialize``).

    Example:
        >>> import tapejax as tf
        >>> type(tf.keras.regularizers.deserialize({'class_name': 'L1', 'config': {'l1': 0.5}})).__name__
        'L1'
    """
    return _serialization.deserialize_keras_object(config, custom_objects) if custom_objects else get(config)
