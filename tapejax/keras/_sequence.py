"""Keras 3's ``pad_sequences`` (``tf.keras.utils`` and ``tf.keras.preprocessing.sequence``)."""
import numpy as np


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Pads (and truncates) a list of sequences to one length: a NumPy array ``(len(sequences), maxlen)``.

    ``maxlen`` defaults to the longest sequence. ``padding="pre"`` (default) puts ``value`` before
    each sequence, ``"post"`` after; ``truncating`` says which end of a longer sequence is cut.
    Sequences may hold vectors (the array then has their shape after ``maxlen``).

    Args:
        sequences: a list of lists (or arrays).
        maxlen: the output length (None: the longest).
        dtype: the array's dtype (``"int32"``; ``object`` for variable-length strings).
        padding, truncating: ``"pre"`` or ``"post"``.
        value: the padding value.

    Raises:
        ValueError: a non-iterable sequence, a string ``value`` with a numeric ``dtype``, an unknown
            ``padding`` / ``truncating``, samples of different shapes (Keras's messages).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.utils.pad_sequences([[1], [2, 3], [4, 5, 6]])
        array([[0, 0, 1],
               [0, 2, 3],
               [4, 5, 6]], dtype=int32)
        >>> tf.keras.utils.pad_sequences([[1], [2, 3], [4, 5, 6]], maxlen=2, padding="post", value=-1)
        array([[ 1, -1],
               [ 2,  3],
               [ 5,  6]], dtype=int32)
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths = []
    sample_shape = ()
    found = False
    for s in sequences:
        try:
            lengths.append(len(s))
        except TypeError as e:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {s}") from e
        if not found and len(s):
            sample_shape = np.asarray(s).shape[1:]
            found = True
    if maxlen is None:
        maxlen = np.max(lengths)
    is_str = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
                         "You should set `dtype=object` for variable length strings.")
    out = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            kept = s[-maxlen:]
        elif truncating == "post":
            kept = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            out[i, :len(kept)] = kept
        elif padding == "pre":
            out[i, -len(kept):] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out
