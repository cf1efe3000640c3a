"""tf.keras.preprocessing.sequence: ``pad_sequences`` (the same function as ``tf.keras.utils``'s),
``skipgrams`` and ``make_sampling_table``.

Example:
    >>> import tapejax as tf
    >>> tf.keras.preprocessing.sequence.pad_sequences([[1, 2], [3]], padding="post").tolist()
    [[1, 2], [3, 0]]
"""
from .._sequence import (
    make_sampling_table as make_sampling_table, pad_sequences as pad_sequences, skipgrams as skipgrams,
)

__all__ = ["make_sampling_table", "pad_sequences", "skipgrams"]
