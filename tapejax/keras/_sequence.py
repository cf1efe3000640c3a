"""Keras 3's ``pad_sequences`` (``tf.keras.utils`` and ``tf.keras.preprocessing.sequence``) and the
legacy ``skipgrams`` / ``make_sampling_table`` (``tf.keras.preprocessing.sequence``)."""
import random as _pyrandom

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


def make_sampling_table(size, sampling_factor=1e-5):
    """Word-rank sampling probabilities for :func:`skipgrams` (Keras's legacy function): the
    probability of keeping the ``i``-th most frequent word, from Zipf's law, ``min(1, f / sqrt(f))``
    with ``f = sampling_factor * (i * (ln i + gamma) + 1/2 - 1 / (12 i))``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.preprocessing.sequence.make_sampling_table(4).round(5).tolist()
        [0.00315, 0.00315, 0.00548, 0.00742]
    """
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True, categorical=False,
              sampling_table=None, seed=None):
    """Skip-gram pairs of a sequence of word indices (Keras's legacy function, as the word2vec
    tutorial calls it): ``([[word, context], ...], labels)``, 1 for a word within ``window_size`` of
    the other, 0 for ``negative_samples`` random pairs per positive one. Index 0 is skipped; a
    ``sampling_table`` drops frequent words at random. The draws and the shuffle use Python's
    ``random`` module exactly as Keras does, so ``random.seed`` / ``seed`` give Keras's pairs.

    Example:
        >>> import tapejax as tf
        >>> pairs, labels = tf.keras.preprocessing.sequence.skipgrams([1, 2, 3], 4, window_size=1,
        ...                                                            negative_samples=0, shuffle=False)
        >>> pairs, labels
        ([[1, 2], [2, 1], [2, 3], [3, 2]], [1, 1, 1, 1])
    """
    couples = []
    labels = []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < _pyrandom.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i:
                wj = sequence[j]
                if not wj:
                    continue
                couples.append([wi, wj])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        num_negative = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        _pyrandom.shuffle(words)
        couples += [[words[i % len(words)], _pyrandom.randint(1, vocabulary_size - 1)] for i in range(num_negative)]
        labels += ([[1, 0]] if categorical else [0]) * num_negative
    if shuffle:
        if seed is None:
            seed = _pyrandom.randint(0, 10e6)
        _pyrandom.seed(seed)
        _pyrandom.shuffle(couples)
        _pyrandom.seed(seed)
        _pyrandom.shuffle(labels)
    return couples, labels
