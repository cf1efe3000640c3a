"""tf.strings: operations on string tensors.

A string tensor holds a NumPy object array of ``bytes`` on the host (text is UTF-8 encoded), so
these ops run in NumPy/Python, eagerly, and carry no gradients, as in TensorFlow. Element-wise
ops take a ``tf.RaggedTensor`` too (they apply to its flat values); ops that split strings
return a ``tf.RaggedTensor`` for a batch of strings, a 1-D tensor for one.

Example:
    >>> import tapejax as tf
    >>> tf.strings.split(tf.constant(["Gray wolf", "Lazy dog"]))
    <tf.RaggedTensor [[b'Gray', b'wolf'], [b'Lazy', b'dog']]>
    >>> tf.strings.to_number(tf.strings.split("1 10 100")).numpy()
    array([  1.,  10., 100.], dtype=float32)
"""
import functools
import re
from builtins import range as builtins_range

import jax.numpy as jnp
import numpy as np

from . import errors, ops as _ops
from ._core import dtypes as _dtypes, host as _host
from ._core.farmhash import fingerprint64 as _fingerprint64
from .ops.normalize import INDEX as _INDEX
from ._staging.printing import _fmt
from ._core.tensor import Tensor, _TensorBase, string_array
from .ragged import RaggedTensor


def _text(x):
    """The strings of ``x`` as a NumPy object array of bytes."""
    if isinstance(x, _TensorBase):
        a = np.asarray(x._value)
        if a.dtype != object:
            raise TypeError(f"Expected a string tensor, got dtype {x.dtype.name}. Format numbers with "
                            "tf.strings.as_string first.")
        return a
    return string_array(x)


def _strings(a):
    return Tensor(string_array(np.asarray(a, dtype=object)))


def _numbers(a, dtype):
    return Tensor(jnp.asarray(np.asarray(a, dtype=dtype)))


def _each(fn, a, otype=object):
    """``fn`` on every element of the object array ``a``."""
    out = np.frompyfunc(fn, 1, 1)(a) if a.size else np.zeros(a.shape, object)
    return np.asarray(out, dtype=otype).reshape(a.shape)


def _ragged_values(fn):
    """Lets a string op take a RaggedTensor: it applies to the flat values (a splitting op adds
    a ragged dimension)."""
    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):
        if isinstance(input, RaggedTensor):
            return input.with_flat_values(fn(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)
    return wrapper


def _decode(b, encoding="UTF-8", errors_="replace", replacement_char=0xFFFD):
    enc = encoding.upper().replace("UTF8", "UTF-8")
    if errors_ == "strict":
        try:
            return b.decode(enc)
        except UnicodeDecodeError as e:
            raise errors.InvalidArgumentError(None, None, f"Invalid formatting on input string: {e}") from None
    text = b.decode(enc, "ignore" if errors_ == "ignore" else "replace")
    return text if replacement_char == 0xFFFD else text.replace("\ufffd", chr(replacement_char))


def _split_result(rows, shape, make):
    """Per-string pieces as TensorFlow returns them: a 1-D tensor for one string, a
    RaggedTensor for a vector of strings."""
    if len(shape) == 0:
        return make(rows[0])
    if len(shape) != 1:
        raise ValueError(f"tapejax splits scalars and vectors of strings, got shape {tuple(shape)}. "
                         "Reshape to a vector first, or pass a RaggedTensor.")
    flat = [p for r in rows for p in r]
    return RaggedTensor.from_row_lengths(make(flat), [len(r) for r in rows])


# ---------------------------------------------------------------------- length, case, whitespace
@_ragged_values
def length(input, unit="BYTE", name=None):
    """The length of each string in bytes, or in Unicode characters with ``unit='UTF8_CHAR'``
    (``tf.strings.length``).

    Example:
        >>> import tapejax as tf
        >>> thanks = 'Thanks 😊'.encode('UTF-8')
        >>> int(tf.strings.length(thanks)), int(tf.strings.length(thanks, unit='UTF8_CHAR'))
        (11, 8)
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}.")
    count = len if unit == "BYTE" else (lambda b: len(_decode(b)))
    return _numbers(_each(count, _text(input), np.int32), np.int32)


@_ragged_values
def lower(input, encoding="", name=None):
    """Lower-cases each string: ASCII letters only, or all of Unicode with ``encoding='utf-8'``
    (``tf.strings.lower``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.lower("CamelCase").numpy()
        b'camelcase'
    """
    f = (lambda b: b.lower()) if not encoding else (lambda b: b.decode("utf-8").lower().encode("utf-8"))
    return _strings(_each(f, _text(input)))


@_ragged_values
def upper(input, encoding="", name=None):
    """Upper-cases each string: ASCII letters only, or all of Unicode with ``encoding='utf-8'``
    (``tf.strings.upper``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.upper("CamelCase").numpy()
        b'CAMELCASE'
    """
    f = (lambda b: b.upper()) if not encoding else (lambda b: b.decode("utf-8").upper().encode("utf-8"))
    return _strings(_each(f, _text(input)))


@_ragged_values
def strip(input, name=None):
    """Removes leading and trailing whitespace (``tf.strings.strip``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.strip(["  hello ", "world\\n"]).numpy()
        array([b'hello', b'world'], dtype=object)
    """
    return _strings(_each(lambda b: b.strip(), _text(input)))


# ---------------------------------------------------------------------- substrings, regexes
@_ragged_values
def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002
    """The substring of ``len`` bytes (or characters, ``unit='UTF8_CHAR'``) from ``pos`` of each
    string; a negative ``pos`` counts from the end (``tf.strings.substr``).

    Raises:
        tf.errors.InvalidArgumentError: ``pos`` outside a string.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.substr(["Hello", "World"], 1, 3).numpy()
        array([b'ell', b'orl'], dtype=object)
    """
    a = _text(input)
    p = np.broadcast_to(np.asarray(_ops.convert_to_tensor(pos)), a.shape)
    n = np.broadcast_to(np.asarray(_ops.convert_to_tensor(len)), a.shape)
    out = np.empty(a.shape, object)
    for i in np.ndindex(a.shape):
        s = a[i] if unit == "BYTE" else _decode(a[i])
        size, start = builtin_len(s), int(p[i])
        if start > size or start < -size:
            at = int(np.ravel_multi_index(i, a.shape)) if a.ndim else 0
            raise errors.InvalidArgumentError(None, None, f"pos {start} out of range for string {a[i]!r} at index {at}")
        start = start + size if start < 0 else start
        piece = s[start:start + max(int(n[i]), 0)]
        out[i] = piece if unit == "BYTE" else piece.encode("utf-8")
    return _strings(out)


builtin_len = len


def _re2(pattern):
    if isinstance(pattern, _TensorBase):
        pattern = pattern.numpy()
    return re.compile(pattern if isinstance(pattern, bytes) else pattern.encode("utf-8"))


@_ragged_values
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replaces matches of the regular expression ``pattern`` with ``rewrite`` (``\\1`` for a
    group, ``\\0`` for the match), every match or only the first (``tf.strings.regex_replace``).
    Patterns run on Python's ``re`` (TensorFlow uses RE2: the common syntax is the same).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.regex_replace("Text with tags.<br /><b>contains html</b>", "<[^>]+>", " ").numpy()
        b'Text with tags.  contains html '
    """
    rx = _re2(pattern)
    rw = rewrite.numpy() if isinstance(rewrite, _TensorBase) else rewrite
    rw = (rw if isinstance(rw, bytes) else rw.encode("utf-8")).replace(b"\\0", b"\\g<0>")
    return _strings(_each(lambda b: rx.sub(rw, b, count=0 if replace_global else 1), _text(input)))


@_ragged_values
def regex_full_match(input, pattern, name=None):
    """Whether each string matches the regular expression ``pattern`` entirely
    (``tf.strings.regex_full_match``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.regex_full_match(["TF lib", "lib TF"], ".*lib$").numpy()
        array([ True, False])
    """
    rx = _re2(pattern)
    return _numbers(_each(lambda b: rx.fullmatch(b) is not None, _text(input), bool), bool)


# ---------------------------------------------------------------------- joining
def join(inputs, separator="", name=None):
    """Joins the strings of several tensors element-wise (broadcast) with ``separator``
    (``tf.strings.join``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.join([["abc", "123"], ["def", "456"]], separator=" ").numpy()
        array([b'abc def', b'123 456'], dtype=object)
    """
    if any(isinstance(x, RaggedTensor) for x in inputs):
        rts = [x for x in inputs if isinstance(x, RaggedTensor)]
        return rts[0].with_flat_values(join([x.flat_values if isinstance(x, RaggedTensor) else x for x in inputs],
                                            separator))
    sep = separator.encode("utf-8") if isinstance(separator, str) else separator
    parts = np.broadcast_arrays(*[_text(x) for x in inputs])
    out = np.empty(parts[0].shape, object)
    for i in np.ndindex(out.shape):
        out[i] = sep.join(p[i] for p in parts)
    return _strings(out)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins the strings along ``axis`` (all of them by default) with ``separator``
    (``tf.strings.reduce_join``); a RaggedTensor joins each row along its last axis.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator="-").numpy()
        array([b'a-b', b'c-d'], dtype=object)
    """
    sep = separator.encode("utf-8") if isinstance(separator, str) else separator
    if isinstance(inputs, RaggedTensor):
        if inputs.ragged_rank != 1 or axis not in (1, -1):
            raise ValueError("tapejax joins a RaggedTensor's rows (axis=-1) of one ragged dimension.")
        out = _strings([sep.join(r) for r in inputs.to_list()])
        return _ops.expand_dims(out, -1) if keepdims else out
    a = _text(inputs)
    if axis is None:
        out = np.empty((), object)
        out[()] = sep.join(a.reshape(-1))
        if keepdims:
            out = out.reshape((1,) * a.ndim)
        return _strings(out)
    axis = int(np.asarray(axis)) % max(a.ndim, 1)
    moved = np.moveaxis(a, axis, -1)
    out = np.empty(moved.shape[:-1], object)
    for i in np.ndindex(out.shape):
        out[i] = sep.join(moved[i])
    return _strings(np.expand_dims(out, axis) if keepdims else out)


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of the strings along the last axis of ``data`` (``tf.strings.ngrams``): for
    each width of ``ngram_width`` in turn, the windows joined by ``separator``; ``pad_values``
    (one string or a (left, right) pair) pads each row with ``padding_width`` (width - 1 by
    default) values per side; ``preserve_short_sequences`` makes one n-gram of a row too short for any.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.ngrams(["A", "B", "C", "D"], 2).numpy()
        array([b'A B', b'B C', b'C D'], dtype=object)
        >>> tf.strings.ngrams(["TF", "and", "keras"], 1).numpy()
        array([b'TF', b'and', b'keras'], dtype=object)
    """
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    widths = [int(w) for w in widths]
    if any(w < 1 for w in widths):
        raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    enc = (lambda v: v.encode("utf-8") if isinstance(v, str) else v)  # noqa: E731
    sep = enc(separator)
    if pad_values is None:
        left = right = None
    elif isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2:
            raise ValueError("pad_values must be a string, tuple or list.")
        left, right = enc(pad_values[0]), enc(pad_values[1])
    else:
        left = right = enc(pad_values)
    if padding_width is not None and int(padding_width) < 1:
        raise ValueError(f"padding_width must be greater than 0. Got {padding_width}")

    def row_ngrams(row):
        row = list(row)
        out = []
        for w in widths:
            p = 0 if left is None else (w - 1 if padding_width is None else min(int(padding_width), w - 1))
            padded = [left] * p + row + [right] * p
            out.extend(sep.join(padded[i:i + w]) for i in builtins_range(len(padded) - w + 1))
        if not out and preserve_short_sequences:
            p = 0 if left is None else (widths[0] - 1 if padding_width is None else
                                        min(int(padding_width), widths[0] - 1))
            out.append(sep.join([left] * p + row + [right] * p))
        return out

    if isinstance(data, RaggedTensor):
        if data.ragged_rank != 1:
            return data.with_values(ngrams(data.values, ngram_width, separator, pad_values, padding_width,
                                           preserve_short_sequences))
        rows = [row_ngrams(r) for r in data.to_list()]
        return RaggedTensor.from_row_lengths(_strings(np.asarray([g for r in rows for g in r] or [], object)
                                                      .reshape(-1)), [len(r) for r in rows])
    a = _text(data)
    if a.ndim == 0:
        raise ValueError("Data must have rank>0")
    lead = a.reshape(-1, a.shape[-1]) if a.shape[-1] else a.reshape(-1, 0)
    rows = [row_ngrams(r) for r in lead]
    k = len(rows[0]) if rows else 0
    out = np.empty((len(rows), k), object)
    for i, r in enumerate(rows):
        out[i, :] = r
    return _strings(out.reshape(a.shape[:-1] + (k,)))


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Joins, with ``separator``, the strings of ``inputs`` that share a segment id, in order
    (``tf.strings.unsorted_segment_join``); the ids' shape is a prefix of the inputs' shape, a
    segment with no string is ``b''``.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.unsorted_segment_join(['this', 'a', 'test', 'is'], [0, 1, 1, 0], 2, ' ').numpy()
        array([b'this is', b'a test'], dtype=object)
    """
    a = _text(inputs)
    ids = np.asarray(segment_ids._value if isinstance(segment_ids, _TensorBase) else segment_ids)
    n = int(np.asarray(num_segments._value if isinstance(num_segments, _TensorBase) else num_segments))
    for d, (x, y) in enumerate(zip(ids.shape, a.shape)):
        if x != y:
            raise errors.InvalidArgumentError(None, None, f"Segment dimension is {x} while input dimension is {y} "
                                              f"in rank {d}")
    if ids.ndim > a.ndim or (ids.size and (ids.min() < 0 or ids.max() >= n)):
        raise errors.InvalidArgumentError(None, None, "segment_ids are not allowed to exceed num_segments or to "
                                          "have negative values.")
    sep = separator.encode("utf-8") if isinstance(separator, str) else separator
    flat_ids = ids.reshape(-1)
    rows = a.reshape((flat_ids.size,) + a.shape[ids.ndim:])
    out = np.empty((n,) + a.shape[ids.ndim:], object)
    for i in np.ndindex(out.shape[1:]):
        for k in builtins_range(n):
            out[(k,) + i] = sep.join(rows[(j,) + i] for j in np.flatnonzero(flat_ids == k))
    return _strings(out)


def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    """``template`` with each ``placeholder`` replaced by one of ``inputs``, printed as
    ``tf.print`` prints it (``tf.strings.format``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.format("x = {}", [tf.constant([1, 2, 3])]).numpy()
        b'x = [1 2 3]'
    """
    if isinstance(inputs, (_TensorBase, str)) or not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    pieces = template.split(placeholder)
    if builtin_len(pieces) - 1 != builtin_len(inputs):
        raise errors.InvalidArgumentError(None, None, f"{builtin_len(pieces) - 1} placeholder(s) in template "
                                          f"does not match {builtin_len(inputs)} input(s) provided")
    shown = [_fmt(x if isinstance(x, _TensorBase) else _ops.convert_to_tensor(x), summarize) for x in inputs]
    text = pieces[0] + "".join(s + p for s, p in zip(shown, pieces[1:]))
    return _strings(np.array(text.encode("utf-8"), dtype=object))


# ---------------------------------------------------------------------- numbers
@_ragged_values
def to_number(input, out_type=_dtypes.float32, name=None):
    """Parses each string as a number of ``out_type`` (float32 by default)
    (``tf.strings.to_number``).

    Raises:
        tf.errors.InvalidArgumentError: a string that is not a number of that type.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.to_number(["1.5", "-2"]).numpy()
        array([ 1.5, -2. ], dtype=float32)
    """
    dt = _dtypes.as_dtype(out_type)
    if not (dt.is_floating or dt.is_integer):
        raise TypeError(f"out_type must be a float or integer dtype, got {dt.name}.")
    parse = float if dt.is_floating else int

    def number(b):
        try:
            v = parse(b.decode("utf-8").strip())
        except (ValueError, UnicodeDecodeError):
            raise errors.InvalidArgumentError(None, None, "StringToNumberOp could not correctly convert string: "
                                              + b.decode("utf-8", "replace")) from None
        if dt.is_integer and not dt.min <= v <= dt.max:
            raise errors.InvalidArgumentError(None, None, "StringToNumberOp could not correctly convert string: "
                                              + b.decode("utf-8", "replace"))
        return v
    a = _text(input)
    return _numbers(_each(number, a, dt._np) if a.size else np.zeros(a.shape, dt._np), dt._np)


@_ragged_values
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """Formats each number as a string, printf-style: ``%f`` for floats (``%e`` with
    ``scientific``, ``%g`` with ``shortest``), ``%d`` for integers, ``true``/``false`` for
    booleans; strings stay as they are (``tf.strings.as_string``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.as_string([3.14159, 2.0], precision=2).numpy()
        array([b'3.14', b'2.00'], dtype=object)
    """
    t = _ops.convert_to_tensor(input)
    a = np.asarray(t)
    if t.dtype == _dtypes.string:
        return t  # strings stay as they are, as in TensorFlow
    if builtin_len(fill) > 1:
        raise errors.InvalidArgumentError(None, None, f"Fill string must be one or fewer characters: {fill}")
    spec = "%" + fill + (str(width) if width > -1 else "")
    if t.dtype.is_floating or t.dtype.is_complex:
        spec += (f".{precision}" if precision > -1 else "") + ("e" if scientific else "g" if shortest else "f")
    elif t.dtype.is_bool:
        return _strings(_each(lambda v: b"true" if v else b"false", a.astype(object)))
    else:
        spec += "d"
    if t.dtype.is_complex:
        return _strings(_each(lambda v: f"({spec % v.real},{spec % v.imag})".encode(), a.astype(object)))
    return _strings(_each(lambda v: (spec % v).encode(), a.astype(object)))


# ---------------------------------------------------------------------- splitting and Unicode
@_ragged_values
def split(input, sep=None, maxsplit=-1, name=None):
    """Splits each string at ``sep`` (runs of whitespace by default) (``tf.strings.split``):
    a 1-D tensor for a scalar, a RaggedTensor for a vector of strings.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.split("Gray wolf").numpy()
        array([b'Gray', b'wolf'], dtype=object)
    """
    a = _text(input)
    s = sep.numpy() if isinstance(sep, _TensorBase) else sep
    s = s.encode("utf-8") if isinstance(s, str) else s
    if s == b"":
        s = None  # TensorFlow: an empty separator splits on whitespace
    rows = [b.split(s, maxsplit) for b in a.reshape(-1)]
    return _split_result(rows, a.shape, _strings)


@_ragged_values
def bytes_split(input, name=None):
    """Splits each string into its bytes (``tf.strings.bytes_split``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.bytes_split("Duck").numpy()
        array([b'D', b'u', b'c', b'k'], dtype=object)
    """
    a = _text(input)
    return _split_result([[b[i:i + 1] for i in range(builtin_len(b))] for b in a.reshape(-1)], a.shape, _strings)


@_ragged_values
def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):
    """Splits each string into its Unicode characters, each UTF-8 encoded
    (``tf.strings.unicode_split``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.unicode_split("アヒル", "UTF-8").numpy().tolist() == [c.encode() for c in "アヒル"]
        True
    """
    a = _text(input)
    rows = [[c.encode("utf-8") for c in _decode(b, input_encoding, errors, replacement_char)] for b in a.reshape(-1)]
    return _split_result(rows, a.shape, _strings)


@_ragged_values
def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,
                   replace_control_characters=False, name=None):
    """The Unicode code points of each string (int32) (``tf.strings.unicode_decode``): a 1-D
    tensor for a scalar, a RaggedTensor for a vector of strings.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.unicode_decode("语言", "UTF-8").numpy()
        array([35821, 35328], dtype=int32)
    """
    a = _text(input)
    rows = [[ord(c) for c in _decode(b, input_encoding, errors, replacement_char)] for b in a.reshape(-1)]
    return _split_result(rows, a.shape, lambda flat: _numbers(flat, np.int32))


def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,
                                replace_control_characters=False, name=None):
    """The code points of each string and the byte offset where each starts
    (``tf.strings.unicode_decode_with_offsets``).

    Example:
        >>> import tapejax as tf
        >>> chars, offsets = tf.strings.unicode_decode_with_offsets("aé", "UTF-8")
        >>> chars.numpy().tolist(), offsets.numpy().tolist()
        ([97, 233], [0, 1])
    """
    a = _text(input)
    codes, offsets = [], []
    enc = input_encoding.upper().replace("UTF8", "UTF-8")
    for b in a.reshape(-1):
        text = _decode(b, input_encoding, errors, replacement_char)
        codes.append([ord(c) for c in text])
        offsets.append(np.cumsum([0] + [builtin_len(c.encode(enc)) for c in text[:-1]]).tolist() if text else [])
    return (_split_result(codes, a.shape, lambda flat: _numbers(flat, np.int32)),
            _split_result(offsets, a.shape, lambda flat: _numbers(flat, _INDEX)))


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):
    """Encodes code points (int32; the last axis, or a RaggedTensor's rows) as strings
    (``tf.strings.unicode_encode``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.unicode_encode([[99, 97, 116], [100, 111, 103]], output_encoding='UTF-8').numpy()
        array([b'cat', b'dog'], dtype=object)
    """
    enc = output_encoding.upper().replace("UTF8", "UTF-8")

    def encode(codes):
        return "".join(chr(int(c)) for c in codes).encode(enc, "replace" if errors != "strict" else "strict")
    if isinstance(input, RaggedTensor):
        if input.ragged_rank != 1:
            raise ValueError("tapejax encodes RaggedTensors of one ragged dimension.")
        return _strings([encode(r) for r in input.to_list()])
    a = np.asarray(_ops.convert_to_tensor(input))
    if a.ndim == 0:
        raise ValueError("unicode_encode needs at least one dimension of code points.")
    out = np.empty(a.shape[:-1], object)
    for i in np.ndindex(out.shape):
        out[i] = encode(a[i])
    return _strings(out)


def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533,
                      replace_control_characters=False, name=None):
    """Re-encodes each string from ``input_encoding`` to ``output_encoding``
    (``tf.strings.unicode_transcode``).

    Example:
        >>> import tapejax as tf
        >>> tf.strings.unicode_transcode("é", "UTF-8", "UTF-16-BE").numpy()
        b'\\x00\\xe9'
    """
    enc = output_encoding.upper().replace("UTF8", "UTF-8")
    return _strings(_each(lambda b: _decode(b, input_encoding, errors, replacement_char).encode(enc), _text(input)))


# ---------------------------------------------------------------------- hashing
@_ragged_values
def to_hash_bucket_fast(input, num_buckets, name=None):
    """The bucket of each string: FarmHash ``Fingerprint64`` modulo ``num_buckets`` (int64), the
    same numbers as TensorFlow's ``tf.strings.to_hash_bucket_fast`` on any platform.

    Example:
        >>> import tapejax as tf
        >>> tf.strings.to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3).numpy()
        array([0, 2, 2])
    """
    n = int(num_buckets)
    op = "StringToHashBucketFast"
    if n < 1:
        raise errors.InvalidArgumentError(None, None, (
            f"Value for attr 'num_buckets' of {n} must be at least minimum 1\n\t; NodeDef: {{{{node {op}}}}}; "
            f"Op<name={op}; signature=input:string -> output:int64; attr=num_buckets:int,min=1> [Op:{op}] name: "))
    if isinstance(input, _TensorBase) and input.dtype != _dtypes.string:
        raise errors.InvalidArgumentError(None, None, (
            f"cannot compute {op} as input #0(zero-based) was expected to be a string tensor but is a "
            f"{input.dtype.name} tensor [Op:{op}] name: "))
    return _numbers(_each(lambda b: _fingerprint64(b) % n, _text(input), np.int64), np.int64)


__all__ = ["length", "lower", "upper", "strip", "substr", "regex_replace", "regex_full_match", "join",
           "reduce_join", "format", "to_number", "as_string", "split", "bytes_split", "unicode_split",
           "unicode_decode", "unicode_decode_with_offsets", "unicode_encode", "unicode_transcode",
           "to_hash_bucket_fast", "unsorted_segment_join", "ngrams"]



def _staged(fn):
    """``fn`` recorded for every call while a tf.function with string arguments is traced
    (see tapejax._host)."""
    @functools.wraps(fn)
    def staged(*args, **kwargs):
        return _host.call(f"tf.strings.{fn.__name__}", fn, *args, **kwargs)
    return staged


for _name in __all__:
    globals()[_name] = _staged(globals()[_name])

from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr(__name__)
