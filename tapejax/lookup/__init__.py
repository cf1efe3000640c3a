"""tf.lookup: tables from keys to values, as TensorFlow 2.21's ``lookup_ops``.

``StaticHashTable`` (from a ``KeyValueTensorInitializer`` or a ``TextFileInitializer``),
``StaticVocabularyTable`` (out-of-vocabulary keys hashed into buckets with FarmHash
``Fingerprint64``, TensorFlow's ``string_to_hash_bucket_fast``), and in ``tf.lookup.experimental``
the mutable ``MutableHashTable`` and ``DenseHashTable``. Keys are strings or integers; lookups take
tensors of any shape (and RaggedTensor / SparseTensor values), eagerly, inside ``tf.function`` and in
``tf.data.Dataset.map``. Integer-keyed static tables with numeric values are a JAX op; the others are
looked up on the host (``tapejax.ops.lookup_ops``, shared with Keras's ``StringLookup``).

Example:
    >>> import tapejax as tf
    >>> init = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([1, 2], tf.int64))
    >>> table = tf.lookup.StaticHashTable(init, default_value=-1)
    >>> table.lookup(tf.constant(["b", "a", "z"])).numpy().tolist()
    [2, 1, -1]
"""
from ._tables import (  # noqa: F401
    KeyValueTensorInitializer as KeyValueTensorInitializer, StaticHashTable as StaticHashTable,
    StaticVocabularyTable as StaticVocabularyTable, TextFileIndex as TextFileIndex,
    TextFileInitializer as TextFileInitializer,
)
from . import experimental as experimental  # noqa: F401

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable", "TextFileIndex",
           "TextFileInitializer", "experimental"]

from .._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("tapejax.lookup")
