"""tf.lookup.experimental: the tables that change, ``MutableHashTable`` and ``DenseHashTable``.

Example:
    >>> import tapejax as tf
    >>> table = tf.lookup.experimental.MutableHashTable(tf.string, tf.float32, default_value=0.0)
    >>> table.insert(tf.constant(["pi"]), tf.constant([3.14]))
    >>> table.lookup(tf.constant(["pi", "e"])).numpy().round(2).tolist()
    [3.14, 0.0]
"""
from ._tables import MutableHashTable as MutableHashTable, DenseHashTable as DenseHashTable  # noqa: F401

__all__ = ["DenseHashTable", "MutableHashTable"]

from .._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("tapejax.lookup.experimental")
