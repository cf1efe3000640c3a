"""``tf.compat``: TensorFlow's bytes/text helpers and the ``v1`` / ``v2`` namespaces.

The helpers are TensorFlow 2 code's (``tf.compat.as_bytes``, ``as_str``,
``dimension_value``). ``tf.compat.v1`` imports, as in TensorFlow 2.21, so TF1 code
fails at the TF1 name it uses, with an error that says what to write instead
(see :mod:`tapejax.compat.v1`); ``tf.compat.v2`` is tapejax itself.

Example:
    >>> import tapejax as tf
    >>> tf.compat.as_bytes("cat"), tf.compat.as_str(b"dog"), tf.compat.dimension_value(3)
    (b'cat', 'dog', 3)
"""
import numbers as _numbers
import os as _os
import sys as _sys

import numpy as _np

from .._missing import missing as _missing
from . import v1 as v1  # noqa: F401

bytes_or_text_types = (bytes, str)
integral_types = (_numbers.Integral, _np.integer)
real_types = (_numbers.Real, _np.integer, _np.floating)
complex_types = (_numbers.Complex, _np.number)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """``bytes_or_text`` as bytes (text encoded with ``encoding``).

    Raises:
        TypeError: neither bytes nor text, as TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> tf.compat.as_bytes("é")
        b'\\xc3\\xa9'
    """
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """``bytes_or_text`` as text (bytes decoded with ``encoding``).

    Raises:
        TypeError: neither bytes nor text, as TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> tf.compat.as_text(b"cat")
        'cat'
    """
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value, encoding="utf-8"):
    """``str(value)``, bytes decoded first.

    Example:
        >>> import tapejax as tf
        >>> tf.compat.as_str_any(b"a"), tf.compat.as_str_any(3)
        ('a', '3')
    """
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """A path-like object as ``str`` (anything else unchanged).

    Example:
        >>> import pathlib, tapejax as tf
        >>> tf.compat.path_to_str(pathlib.Path("/tmp"))
        '/tmp'
    """
    return _os.fspath(path) if isinstance(path, _os.PathLike) else path


def dimension_value(dimension):
    """The size of a dimension as an ``int`` or ``None`` (TF1's ``Dimension`` objects too).

    Example:
        >>> import tapejax as tf
        >>> tf.compat.dimension_value(tf.TensorShape([2, None])[0])
        2
    """
    return getattr(dimension, "value", dimension)


def dimension_at_index(shape, index):
    """``shape[index]`` (``None`` for an unknown rank).

    Example:
        >>> import tapejax as tf
        >>> tf.compat.dimension_at_index(tf.TensorShape([2, 3]), 1)
        3
    """
    dims = getattr(shape, "dims", shape)
    return None if dims is None else dimension_value(dims[index])


def forward_compatible(year, month, day):
    """Whether code may use a feature that TensorFlow enables after the given date: always
    True (tapejax reproduces TensorFlow 2.21's behaviour).

    Example:
        >>> import tapejax as tf
        >>> tf.compat.forward_compatible(2021, 1, 1)
        True
    """
    return True


def __getattr__(name):
    if name == "v2":
        return _sys.modules[__name__.rpartition(".")[0]]
    raise _missing(__name__, name)
