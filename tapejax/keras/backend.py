"""tf.keras.backend: the few session-level helpers tape code calls.

Example:
    >>> import tapejax as tf
    >>> tf.keras.backend.floatx(), tf.keras.backend.epsilon()
    ('float32', 1e-07)
"""
from ._naming import reset_uids as _reset_uids

_FLOATX = ["float32"]
_EPSILON = [1e-7]


def clear_session():
    """Resets Keras's layer-name counters (the next Dense is ``dense`` again).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.backend.clear_session()
        >>> tf.keras.layers.Dense(1).name
        'dense'
    """
    _reset_uids()


def floatx():
    """The default float type of weights: ``'float32'`` (see the module example)."""
    return _FLOATX[0]


def set_floatx(value):
    """Sets the value :func:`floatx` reports."""
    _FLOATX[0] = str(value)


def epsilon():
    """The fuzz factor Keras uses in numeric expressions (``1e-7``)."""
    return _EPSILON[0]


def set_epsilon(value):
    """Sets the value :func:`epsilon` reports."""
    _EPSILON[0] = float(value)


def learning_phase():
    """Always 0 (inference): tapejax layers take ``training=`` instead of a global phase."""
    return 0
