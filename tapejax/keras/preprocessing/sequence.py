"""tf.keras.preprocessing.sequence: ``pad_sequences`` (the same function as ``tf.keras.utils``'s).

Example:
    >>> import tapejax as tf
    >>> tf.keras.preprocessing.sequence.pad_sequences([[1, 2], [3]], padding="post").tolist()
    [[1, 2], [3, 0]]
"""
from .._sequence import pad_sequences as pad_sequences

__all__ = ["pad_sequences"]
