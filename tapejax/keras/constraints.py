"""tf.keras.constraints: projections applied to a weight after each optimizer update, as Keras 3.

A layer takes one as ``kernel_constraint=`` / ``bias_constraint=`` (a name, an object or a
configuration); the optimizer replaces the variable by ``constraint(variable)`` after updating it.

Example:
    >>> import tapejax as tf
    >>> tf.keras.constraints.NonNeg()(tf.constant([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
"""
from .. import ops as _ops
from . import backend as _backend
from ._repr import KerasObjectRepr as _KerasObjectRepr
from . import _serialization


class Constraint(_KerasObjectRepr):
    """Base class: ``constraint(weight) -> projected weight`` (the identity here).

    Example:
        >>> import tapejax as tf
        >>> class Halve(tf.keras.constraints.Constraint):
        ...     def __call__(self, w):
        ...         return w / 2.0
        >>> Halve()(tf.constant([2.0])).numpy().tolist()
        [1.0]
    """

    _keras_modules = {name: "keras.src.constraints.constraints"
                      for name in ("Constraint", "MaxNorm", "NonNeg", "UnitNorm", "MinMaxNorm")}
    _keras_public_module = "keras.constraints"   # where serialize_keras_object names it

    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norms(w, axis):
    return _ops.sqrt(_ops.reduce_sum(_ops.square(w), axis=axis, keepdims=True))


def _axis(axis):
    return list(axis) if isinstance(axis, tuple) else axis


class MaxNorm(Constraint):
    """Scales the weights of each unit (the slices along ``axis``) down to a norm of at most ``max_value``.

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.constraints.MaxNorm(1.0)(tf.constant([[3.0], [4.0]]))
        >>> [round(v, 4) for v in w.numpy()[:, 0].tolist()]
        [0.6, 0.8]
    """

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        w = _ops.convert_to_tensor(w)
        norms = _norms(w, _axis(self.axis))
        desired = _ops.clip_by_value(norms, 0.0, float(self.max_value))
        return w * (desired / (_backend.epsilon() + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Sets negative weights to zero.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.constraints.NonNeg()(tf.constant([-1.0, 1.0])).numpy().tolist()
        [0.0, 1.0]
    """

    def __call__(self, w):
        w = _ops.convert_to_tensor(w)
        return _ops.maximum(w, _ops.zeros_like(w))


class UnitNorm(Constraint):
    """Scales the weights of each unit (the slices along ``axis``) to norm 1.

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.constraints.UnitNorm()(tf.constant([[3.0], [4.0]]))
        >>> [round(v, 4) for v in w.numpy()[:, 0].tolist()]
        [0.6, 0.8]
    """

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = _ops.convert_to_tensor(w)
        return w / (_backend.epsilon() + _norms(w, _axis(self.axis)))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves the norm of each unit's weights towards ``[min_value, max_value]`` by ``rate``.

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.constraints.MinMaxNorm(1.0, 2.0)(tf.constant([[0.3], [0.4]]))
        >>> [round(v, 4) for v in w.numpy()[:, 0].tolist()]
        [0.6, 0.8]
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w):
        w = _ops.convert_to_tensor(w)
        norms = _norms(w, _axis(self.axis))
        desired = (self.rate * _ops.clip_by_value(norms, float(self.min_value), float(self.max_value))
                   + (1 - self.rate) * norms)
        return w * (desired / (_backend.epsilon() + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm

_BY_NAME = {"max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm,
            "MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm}


def get(identifier):
    """A constraint from ``None``, a name (``'non_neg'``, ``'MaxNorm'``), a configuration or a callable.

    Raises:
        ValueError: an identifier that names no constraint.

    Example:
        >>> import tapejax as tf
        >>> type(tf.keras.constraints.get('non_neg')).__name__
        'NonNeg'
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return _serialization.get(identifier, {**_BY_NAME, "Constraint": Constraint}, "keras.constraints",
                                  "constraint")
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")


def serialize(constraint):
    """Keras 3's configuration of a constraint (``serialize_keras_object``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.constraints.serialize(tf.keras.constraints.NonNeg())
        {'module': 'keras.constraints', 'class_name': 'NonNeg', 'config': {}, 'registered_name': None}
    """
    return _serialization.serialize_keras_object(constraint)


def deserialize(config, custom_objects=None):
    """The constraint a configuration describes (Keras 3's ``keras.constraints.deserialize``).

    Example:
        >>> import tapejax as tf
        >>> type(tf.keras.constraints.deserialize({'class_name': 'UnitNorm', 'config': {'axis': 0}})).__name__
        'UnitNorm'
    """
    return _serialization.deserialize_keras_object(config, custom_objects) if custom_objects else get(config)
