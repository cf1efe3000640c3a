"""tf.io: whole-file reads and writes, TFRecord files (read and written without TensorFlow),
``tf.io.gfile`` on the local file system, image codecs (with Pillow, the ``tapejax[image]``
extra) and ``serialize_tensor``/``parse_tensor``.

A TFRecord file is a sequence of records, each framed as::

    uint64 length (little-endian) | uint32 masked CRC32-C of length | data | uint32 masked CRC32-C of data

optionally GZIP- or ZLIB-compressed as a whole. ``TFRecordWriter`` writes them (byte for
byte what TensorFlow writes); ``tf.data.TFRecordDataset`` reads them with
:func:`read_records`, which checks both checksums and raises ``tf.errors.DataLossError``
on a damaged or truncated file. CRC32-C (Castagnoli) is computed here with NumPy.

Example:
    >>> import os, tempfile, tapejax as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "hello.txt")
    >>> tf.io.write_file(path, b"hello")
    >>> tf.io.read_file(path).numpy()
    b'hello'
    >>> tf.io.gfile.exists(path)
    True
"""
import collections
import csv as _csv
import functools
import glob as _glob
import gzip
import io as _pyio
import os
import shutil
import struct
import types
import zlib

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from ._core import dtypes as _dtypes, host as _host
from . import errors as errors
from ._core.tensor import Tensor, string_array, to_array
from .image import _image_bytes as _bytes  # a scalar string's bytes
from .image import (convert_image_dtype, decode_image, decode_jpeg, decode_png, encode_jpeg,  # noqa: F401
                    encode_png, is_jpeg)
from .ops.bounds import _kernel_message
from .strings import _numbers, _text
from . import ragged as _ragged, sparse as _sparse

__all__ = ["read_file", "write_file", "gfile", "serialize_tensor", "parse_tensor", "decode_raw", "decode_png", "decode_jpeg",
           "decode_image", "encode_png", "encode_jpeg", "is_jpeg", "TFRecordWriter", "TFRecordOptions",
           "parse_example", "parse_single_example", "FixedLenFeature", "VarLenFeature", "RaggedFeature",
           "decode_csv"]


def _path(p):
    """A local path from a str, bytes, os.PathLike or string Tensor."""
    if isinstance(p, Tensor):
        p = p.numpy()
    if isinstance(p, bytes):
        p = p.decode()
    p = os.fspath(p)
    if "://" in p:
        raise errors.UnimplementedError(
            None, None, f"File system scheme '{p.split('://')[0]}' not implemented (file: '{p}'): tapejax's tf.io "
            "reads local files; copy remote files locally first (for example with gsutil or fsspec).")
    return p


def _string(b):
    """A scalar string Tensor holding ``b``."""
    return Tensor(string_array(b))


def _not_found(path):
    return errors.NotFoundError(None, None, f"{path}; No such file or directory")


def read_file(filename, name=None):
    """The whole contents of a file, as a scalar string tensor (``.numpy()`` gives bytes).

    Raises:
        tf.errors.NotFoundError: no such file.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"abc")
        >>> tf.io.read_file(path).numpy()
        b'abc'
    """
    path = _path(filename)
    try:
        with open(path, "rb") as f:
            return _string(f.read())
    except FileNotFoundError:
        raise _not_found(path) from None


def write_file(filename, contents, name=None):
    """Writes ``contents`` (bytes or a scalar string tensor) to a file, creating directories.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "a", "b.bin")
        >>> tf.io.write_file(path, b"\\x00\\x01")
        >>> open(path, "rb").read()
        b'\\x00\\x01'
    """
    path = _path(filename)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "wb") as f:
        f.write(_bytes(contents))


# ---------------------------------------------------------------------------
# decode_csv
# ---------------------------------------------------------------------------

_CSV_NUMBERS = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}


def _csv_default(default):
    """(dtype name, default value or None when required) of a ``record_defaults`` entry: TF's
    tensor conversion (``0`` int32, ``0.0`` float32, ``"x"`` string, ``[]`` a required float32)."""
    a = np.asarray(to_array(default) if isinstance(default, Tensor) else default)
    if a.dtype.kind in "OUS" or isinstance(default, (str, bytes)):
        kind = "string"
    elif a.dtype == np.float64 and not isinstance(default, Tensor):
        kind = "float32"
    elif a.dtype == np.int64 and not isinstance(default, Tensor):
        kind = "int32"
    else:
        kind = _dtypes.as_dtype(a.dtype).name
    if kind not in _CSV_NUMBERS and kind != "string":
        raise TypeError(f"tf.io.decode_csv: record_defaults entries are int32, int64, float32, float64 or "
                        f"string values, got {kind}.")
    if a.size == 0:
        return kind, None
    v = a.reshape(-1)[0]
    return kind, (v.encode() if isinstance(v, str) else bytes(v)) if kind == "string" else _CSV_NUMBERS[kind](v)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """Parses CSV lines into one tensor per column, each of ``records``' shape.

    Args:
        records: a string tensor (or bytes/str, or a list of them): one CSV line each.
        record_defaults: one entry per column: a value giving the column's type and its default
            for an empty field (``0`` int32, ``0.0`` float32, ``""`` string, a tensor of another
            dtype), or an empty list / tensor (``[]``: a required float32 column).
        field_delim: the field separator.
        use_quote_delim: whether double quotes enclose fields (that may hold the separator).
        na_value: a field text read as missing.
        select_cols: the (sorted) column indices to keep; ``record_defaults`` gives only those.

    Returns:
        A list of tensors, one per column.

    Raises:
        tf.errors.InvalidArgumentError: a line with another number of fields, a field that is not
            a number of its column's type, or a required field missing (TensorFlow's messages).

    Example:
        >>> import tapejax as tf
        >>> n, s = tf.io.decode_csv(["1,a", "2,"], record_defaults=[0, "x"])
        >>> n.numpy().tolist(), s.numpy().tolist()
        ([1, 2], [b'a', b'x'])
    """
    columns = [_csv_default(d) for d in record_defaults]
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if len(select_cols) != len(columns):
            raise errors.InvalidArgumentError(None, None, _csv_message(
                len(columns), f"select_cols should match record_defaults. Expected {len(columns)} but got "
                             f"{len(select_cols)}"))
    recs = string_array(to_array(records) if isinstance(records, Tensor) else records)
    shape, flat = recs.shape, recs.reshape(-1)
    quoting = _csv.QUOTE_MINIMAL if use_quote_delim else _csv.QUOTE_NONE
    out = [[] for _ in columns]
    for i, rec in enumerate(flat):
        fields = next(_csv.reader([rec.decode("utf-8", "surrogateescape")], delimiter=field_delim,
                                  quoting=quoting), [""])
        cols = select_cols if select_cols is not None else range(len(columns))
        if (select_cols is None and len(fields) != len(columns)) or len(fields) <= max(cols, default=-1):
            raise errors.InvalidArgumentError(None, None, _csv_message(
                len(columns), f"Expect {len(columns)} fields but have {len(fields)} in record {i}"))
        for k, (c, (kind, default)) in enumerate(zip(cols, columns)):
            out[k].append(_csv_value(fields[c], kind, default, c, i, na_value, len(columns)))
    return [Tensor(string_array(np.array(vals, dtype=object).reshape(shape))) if kind == "string"
            else Tensor(np.array(vals, dtype=_CSV_NUMBERS[kind]).reshape(shape))
            for vals, (kind, _) in zip(out, columns)]


def _csv_message(n, text):
    # TF names the kernel by its number of outputs: DecodeCSV_OUT_TYPE_<n>.
    return _kernel_message("DecodeCSV", text).replace("__wrapped__DecodeCSV_", f"__wrapped__DecodeCSV_OUT_TYPE_{n}_")


def _csv_value(text, kind, default, col, rec, na_value, n):
    if text == "" or text == na_value:
        if default is None:
            raise errors.InvalidArgumentError(None, None, _csv_message(
                n, f"Field {col} is required but missing in record {rec}!"))
        return default
    if kind == "string":
        return text.encode("utf-8", "surrogateescape")
    try:
        v = int(text.strip()) if kind.startswith("int") else float(text.strip())
        if kind.startswith("int") and not np.iinfo(_CSV_NUMBERS[kind]).min <= v <= np.iinfo(_CSV_NUMBERS[kind]).max:
            raise ValueError(text)
        return v
    except ValueError:
        raise errors.InvalidArgumentError(None, None, _csv_message(
            n, f"Field {col} in record {rec} is not a valid {kind}: {text}")) from None


# ---------------------------------------------------------------------------
# gfile
# ---------------------------------------------------------------------------

class GFile:
    """``tf.io.gfile.GFile(name, mode)``: a file object (``'r'``, ``'w'``, ``'a'``, with ``'b'``).

    Raises:
        tf.errors.NotFoundError: reading a file that does not exist.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "t.txt")
        >>> with tf.io.gfile.GFile(path, "w") as f:
        ...     _ = f.write("line 1\\nline 2\\n")
        >>> with tf.io.gfile.GFile(path) as f:
        ...     f.readlines()
        ['line 1\\n', 'line 2\\n']
    """

    def __init__(self, name, mode="r"):
        self.name = _path(name)
        self.mode = mode
        try:
            self._f = open(self.name, mode)
        except FileNotFoundError:
            raise _not_found(self.name) from None

    def __getattr__(self, attr):
        return getattr(self._f, attr)

    def __iter__(self):
        return iter(self._f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False

    def size(self):
        return os.path.getsize(self.name)


def _exists(path):
    """Whether a file or directory exists."""
    return os.path.exists(_path(path))


def _isdir(path):
    """Whether ``path`` is a directory."""
    return os.path.isdir(_path(path))


def _glob_(pattern):
    """The paths matching a glob pattern (sorted), or each pattern of an iterable of them in turn,
    as TF's ``get_matching_files_v2``."""
    if not isinstance(pattern, (str, bytes, os.PathLike)):
        return [m for p in pattern for m in _glob_(p)]
    p = _path(pattern)
    if not any(c in p for c in "*?[\\"):     # no wildcard: the path itself, when it exists
        return [p] if os.path.exists(p) else []
    found = sorted(_glob.glob(p))
    # TF matches in the pattern's fixed directory, "." when it has none: './a.py' for '*.py'
    return found if os.path.dirname(p) else [os.path.join(".", f) for f in found]


def _listdir(path):
    """The entries of a directory (names, not paths).

    Raises:
        tf.errors.NotFoundError: no such directory.
    """
    p = _path(path)
    if not os.path.isdir(p):
        raise errors.NotFoundError(None, None, f"Could not find directory {p}")
    return os.listdir(p)


def _makedirs(path):
    """Creates a directory and its parents (no error if it exists)."""
    os.makedirs(_path(path), exist_ok=True)


def _mkdir(path):
    """Creates one directory (its parent must exist)."""
    p = _path(path)
    try:
        os.mkdir(p)
    except FileNotFoundError:
        raise _not_found(p) from None
    except FileExistsError:
        raise errors.AlreadyExistsError(None, None, f"{p}; File exists") from None


def _remove(path):
    """Deletes a file.

    Raises:
        tf.errors.NotFoundError: no such file.
    """
    p = _path(path)
    try:
        os.remove(p)
    except FileNotFoundError:
        raise _not_found(p) from None


def _rmtree(path):
    """Deletes a directory and everything in it."""
    p = _path(path)
    if not os.path.exists(p):
        raise _not_found(p)
    shutil.rmtree(p)


def _source_and_destination(src, dst, overwrite):
    s, d = _path(src), _path(dst)
    if not overwrite and os.path.exists(d):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {d}")
    if not os.path.exists(s):
        raise _not_found(s)
    return s, d


def _copy(src, dst, overwrite=False):
    """Copies a file.

    Raises:
        tf.errors.AlreadyExistsError: ``dst`` exists and ``overwrite`` is False.
    """
    shutil.copyfile(*_source_and_destination(src, dst, overwrite))


def _rename(src, dst, overwrite=False):
    """Renames (moves) a file or directory.

    Raises:
        tf.errors.AlreadyExistsError: ``dst`` exists and ``overwrite`` is False.
    """
    os.replace(*_source_and_destination(src, dst, overwrite))


def _walk(top, topdown=True, onerror=None):
    """``os.walk``: ``(dirname, subdirs, files)`` triples."""
    return os.walk(_path(top), topdown=topdown, onerror=onerror)


def _join(path, *paths):
    """Joins path components."""
    return os.path.join(_path(path), *[_path(p) for p in paths])


gfile = types.SimpleNamespace(
    GFile=GFile, Open=GFile, exists=_exists, isdir=_isdir, glob=_glob_, listdir=_listdir, makedirs=_makedirs,
    mkdir=_mkdir, remove=_remove, rmtree=_rmtree, copy=_copy, rename=_rename, walk=_walk, join=_join)
gfile.__doc__ = ("tf.io.gfile: local files (GFile, exists, isdir, glob, listdir, makedirs, mkdir, remove, "
                 "rmtree, copy, rename, walk, join); remote schemes (gs://...) raise UnimplementedError.")


# ---------------------------------------------------------------------------
# serialize_tensor / parse_tensor: TensorFlow's TensorProto wire format
# ---------------------------------------------------------------------------

_TF_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "complex64": 8,
            "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18, "float16": 19,
            "uint32": 22, "uint64": 23}
_FROM_ENUM = {v: k for k, v in _TF_ENUM.items()}
_C_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, wire, payload):
    key = _varint((num << 3) | wire)
    if wire == 0:
        return key + _varint(payload)
    return key + _varint(len(payload)) + payload


def serialize_tensor(tensor, name=None):
    """The tensor as a serialized ``TensorProto`` (the bytes TensorFlow writes), a scalar string.

    Example:
        >>> import tapejax as tf
        >>> s = tf.io.serialize_tensor(tf.constant([[1.5, 2.0]]))
        >>> s.numpy()
        b'\\x08\\x01\\x12\\x08\\x12\\x02\\x08\\x01\\x12\\x02\\x08\\x02"\\x08\\x00\\x00\\xc0?\\x00\\x00\\x00@'
        >>> tf.io.parse_tensor(s, tf.float32).numpy().tolist()
        [[1.5, 2.0]]
    """
    a = np.asarray(to_array(tensor))
    dt = _dtypes.as_dtype(a.dtype).name
    if dt not in _TF_ENUM:
        raise errors.UnimplementedError(None, None, f"serialize_tensor of dtype {dt} is not provided by tapejax.")
    shape = b"".join(_field(2, 2, _field(1, 0, d) if d else b"") for d in a.shape)
    out = _field(1, 0, _TF_ENUM[dt]) + _field(2, 2, shape)
    if a.size:
        out += _field(4, 2, np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes())
    return _string(out)


def _read_varint(b, i):
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, i


def _fields(b):
    i = 0
    while i < len(b):
        key, i = _read_varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _read_varint(b, i)
        elif wire == 2:
            n, i = _read_varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        else:
            raise errors.InvalidArgumentError(None, None, "Could not parse `serialized` as TensorProto.")
        yield num, wire, v


# TensorProto's typed value fields (used by TensorFlow when tensor_content is absent).
_VALUE_FIELDS = {5: ("float32", "<f4"), 6: ("float64", "<f8"), 7: ("int32", None), 10: ("int64", None),
                 11: ("bool", None), 13: ("float16", None), 16: ("uint32", None), 17: ("uint64", None)}


def parse_tensor(serialized, out_type, name=None):
    """The tensor a serialized ``TensorProto`` holds; ``out_type`` must be its dtype.

    Raises:
        tf.errors.InvalidArgumentError: not a TensorProto, or another dtype.

    Example:
        >>> import tapejax as tf
        >>> tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([1, 2])), tf.int32).numpy().tolist()
        [1, 2]
    """
    b = _bytes(serialized)
    enum, dims, content, values = None, [], None, []
    try:
        for num, _, v in _fields(b):
            if num == 1:
                enum = v
            elif num == 2:
                for n2, _, dim in _fields(v):
                    if n2 == 2:
                        dims.append(dict((k, x) for k, _, x in _fields(dim)).get(1, 0))
            elif num == 4:
                content = v
            elif num in _VALUE_FIELDS:
                values.append((num, v))
    except IndexError:
        raise errors.InvalidArgumentError(None, None, "Could not parse `serialized` as TensorProto.") from None
    if enum not in _FROM_ENUM:
        raise errors.InvalidArgumentError(None, None, f"Could not parse `serialized` as TensorProto (dtype {enum}).")
    dt = _FROM_ENUM[enum]
    want = _dtypes.as_dtype(out_type).name
    if want != dt:
        raise errors.InvalidArgumentError(   # TensorFlow's C++ dtype names (float, double, half)
            None, None, f"Type mismatch between parsed tensor ({_C_NAMES.get(dt, dt)}) and dtype "
                        f"({_C_NAMES.get(want, want)})")
    np_dt = np.dtype(_dtypes.np_dtype(dt)).newbyteorder("<")
    size = int(np.prod(dims, dtype=np.int64))
    if content is not None:
        a = np.frombuffer(content, np_dt)
    else:
        a = _typed_values(values, np_dt)
        if a.size == 1 and size > 1:
            a = np.full(size, a[0], np_dt)
    if a.size not in (0, size) and size:
        raise errors.InvalidArgumentError(None, None, "Could not parse `serialized`: its data does not fill its shape.")
    a = np.zeros(size, np_dt) if a.size == 0 else a
    return Tensor(a.reshape(dims).astype(np_dt.newbyteorder("=")))


_RAW_TYPES = ("float16", "float32", "float64", "int32", "uint16", "uint8", "int16", "int8", "int64", "complex64",
              "complex128", "bool", "bfloat16")


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """The bytes of each string read as numbers of ``out_type`` (``tf.io.decode_raw``): a string
    tensor of shape ``S`` gives shape ``S + [n]``. Every string must have the same length, a
    multiple of the type's size; with ``fixed_length`` each is cut or zero-padded to that many
    bytes first.

    Raises:
        tf.errors.InvalidArgumentError: lengths that differ or do not divide into whole numbers,
            a non-string input, or an ``out_type`` TensorFlow does not decode (strings).

    Example:
        >>> import tapejax as tf
        >>> tf.io.decode_raw(tf.constant("Duck"), tf.uint8)
        <tf.Tensor: shape=(4,), dtype=uint8, numpy=array([ 68, 117,  99, 107], dtype=uint8)>
    """
    # On the host, around a tf.function's program (strings are NumPy; see _core/host.call).
    return _host.call("tf.io.decode_raw", _decode_raw, input_bytes, out_type, little_endian, fixed_length)


def _decode_raw(input_bytes, out_type, little_endian, fixed_length):
    dt = _dtypes.as_dtype(out_type)
    if dt.name not in _RAW_TYPES:
        raise errors.InvalidArgumentError(
            None, None, f"Value for attr 'out_type' of {dt.name} is not in the list of allowed values: half, float, "
                        "double, int32, uint16, uint8, int16, int8, int64, complex64, complex128, bool, bfloat16")
    op = "DecodeRaw" if fixed_length is None else "DecodePaddedRaw"
    if isinstance(input_bytes, Tensor) and input_bytes.dtype.name != "string":
        raise errors.InvalidArgumentError(
            None, None, f"cannot compute {op} as input #0(zero-based) was expected to be a string tensor but is a "
                        f"{input_bytes.dtype.name} tensor [Op:{op}] name: ")
    strings = _text(input_bytes)
    np_dt = np.dtype(_dtypes.np_dtype(dt.name)).newbyteorder("<" if little_endian else ">")
    size = np_dt.itemsize
    flat = list(strings.ravel())
    if fixed_length is not None:
        fixed_length = int(fixed_length)
        if fixed_length % size:
            raise errors.InvalidArgumentError(None, None, _kernel_message(
                op, f"fixed_length ({fixed_length}) must be a multiple of the size of out_type ({size})", name=""))
        flat = [b[:fixed_length].ljust(fixed_length, b"\0") for b in flat]
    n = len(flat[0]) if flat else 0
    for k, b in enumerate(flat):
        if len(b) != n:
            raise errors.InvalidArgumentError(None, None, _kernel_message(
                op, f"{op} requires input strings to all be the same size, but element {k} has size {n} != "
                    f"{len(b)}", name=""))
    if n % size:
        raise errors.InvalidArgumentError(None, None, _kernel_message(
            op, f"Input to {op} has length {n} that is not a multiple of {size}, the size of {dt.name}", name=""))
    values = np.frombuffer(b"".join(flat), np_dt).astype(np_dt.newbyteorder("="))
    return _numbers(values.reshape(strings.shape + (n // size,)), values.dtype)


def _typed_values(values, np_dt):
    out = []
    for num, v in values:
        if isinstance(v, int):
            out.append(v)
        elif num in (5, 6):
            out.extend(np.frombuffer(v, _VALUE_FIELDS[num][1]).tolist())
        else:   # packed varints
            i = 0
            while i < len(v):
                n, i = _read_varint(v, i)
                out.append(n)
    a = np.asarray(out, dtype=np.uint64 if np_dt.kind in "iu" else None)
    return (a.astype(np.int64) if np_dt.kind == "i" else a).astype(np_dt)


# ---------------------------------------------------------------------------
# TFRecord files
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# CRC32-C (polynomial 0x1EDC6F41, reflected 0x82F63B78), TFRecord's checksum
# ---------------------------------------------------------------------------


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()
_TABLE_NP = np.array(_TABLE, dtype=np.uint32)
_LANE_MIN = 8192   # from this many bytes on, the CRC runs on NumPy lanes


def _crc_python(data, crc=0):
    table = _TABLE
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc


@functools.lru_cache(maxsize=64)
def _zeros_operator(n):
    """Four 256-entry tables applying ``n`` zero bytes to a CRC register (a GF(2)-linear map)."""
    cols = np.uint32(1) << np.arange(32, dtype=np.uint32)   # the register's basis vectors
    for _ in range(n):
        cols = (cols >> 8) ^ _TABLE_NP[cols & 0xFF]
    values = np.arange(256)
    tables = []
    for t in range(4):
        tab = np.zeros(256, np.uint32)
        for bit in range(8):
            tab ^= np.where((values >> bit) & 1, cols[8 * t + bit], np.uint32(0)).astype(np.uint32)
        tables.append(tab.tolist())
    return tables


def _crc_lanes(data):
    """The raw CRC register (from 0) of ``data``, computed on K lanes of L bytes at once.

    Leading zero bytes leave a zero register unchanged, so ``data`` is front-padded to
    K * L bytes; each lane's register is computed in lockstep with NumPy, then the lanes
    are folded left to right: ``acc = zeros_L(acc) ^ lane``.
    """
    n = len(data)
    k = 1 << max(6, min(12, n.bit_length() // 2))
    lane = -(-n // k)
    buf = np.zeros(k * lane, np.uint8)
    buf[k * lane - n:] = np.frombuffer(data, np.uint8)
    cols = buf.reshape(k, lane).T.astype(np.uint32)           # cols[j] = byte j of every lane
    reg = np.zeros(k, np.uint32)
    for j in range(lane):
        reg = (reg >> 8) ^ _TABLE_NP[(reg ^ cols[j]) & 0xFF]
    t0, t1, t2, t3 = _zeros_operator(lane)
    acc = 0
    for r in reg.tolist():
        acc = t0[acc & 0xFF] ^ t1[(acc >> 8) & 0xFF] ^ t2[(acc >> 16) & 0xFF] ^ t3[acc >> 24] ^ r
    return acc


def crc32c(data):
    """CRC32-C of ``data`` (bytes), as ``google_crc32c`` computes it.

    Example:
        >>> from tapejax.io import crc32c
        >>> hex(crc32c(b"123456789"))
        '0xe3069283'
    """
    data = bytes(data)
    if len(data) < _LANE_MIN:
        return _crc_python(data, 0xFFFFFFFF) ^ 0xFFFFFFFF
    # A register starting at s equals one starting at 0 with s xored into the first 4 bytes.
    head = (int.from_bytes(data[:4], "little") ^ 0xFFFFFFFF).to_bytes(4, "little")
    return _crc_lanes(head + data[4:]) ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---------------------------------------------------------------------------
# Compression and framing
# ---------------------------------------------------------------------------

_COMPRESSION = {None: "", "": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def compression(compression_type, method):
    """TF's compression name ('', 'GZIP' or 'ZLIB') for ``compression_type``."""
    if isinstance(compression_type, TFRecordOptions):
        compression_type = compression_type.compression_type
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode()
    if compression_type not in _COMPRESSION:
        raise errors.InvalidArgumentError(
            None, None, f"{method}: Unsupported compression_type {compression_type!r}: use None (or ''), "
                        "'GZIP' or 'ZLIB'.")
    return _COMPRESSION[compression_type]


def open_file(path, kind, method=""):
    """``path`` opened for reading binary data, decompressed (``kind`` is '', 'GZIP' or 'ZLIB').

    Raises ``tf.errors.NotFoundError`` (TF's message) when there is no such file.
    """
    try:
        f = gzip.open(path, "rb") if kind == "GZIP" else open(path, "rb")
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    if kind == "ZLIB":
        with f:
            return _pyio.BytesIO(zlib.decompress(f.read()))
    return f


def read_records(path, compression_type=None):
    """The records (bytes) of the TFRecord file ``path``, with both checksums checked.

    Raises:
        tf.errors.DataLossError: if a record is truncated or a checksum does not match
            (TF's messages: ``truncated record at OFFSET``, ``corrupted record at OFFSET``).
            A file that ends inside a record's 12-byte header raises too, where TF
            silently stops.
        tf.errors.NotFoundError: if there is no such file.
    """
    kind = compression(compression_type, "TFRecordDataset")
    with open_file(path, kind) as f:
        offset = 0
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise errors.DataLossError(None, None, f"truncated record at {offset}' failed with Read less "
                                                       f"bytes than requested ({path})")
            length, length_crc = struct.unpack("<QI", header)
            if _masked_crc(header[:8]) != length_crc:
                hint = " (Is this even a TFRecord file?)" if offset == 0 else ""
                raise errors.DataLossError(None, None, f"corrupted record at {offset}{hint} ({path}: the "
                                                       "checksum of the record's length does not match)")
            data = f.read(length)
            footer = f.read(4)
            if len(data) < length or len(footer) < 4:
                raise errors.DataLossError(None, None, f"truncated record at {offset}' failed with Read less "
                                                       f"bytes than requested ({path})")
            if _masked_crc(data) != struct.unpack("<I", footer)[0]:
                raise errors.DataLossError(None, None, f"corrupted record at {offset + 12} ({path}: the "
                                                       "checksum of the record's data does not match)")
            yield data
            offset += 16 + length


def frame(record):
    """``record`` (bytes) framed as one TFRecord."""
    header = struct.pack("<Q", len(record))
    return b"".join([header, struct.pack("<I", _masked_crc(header)), record,
                     struct.pack("<I", _masked_crc(record))])


class TFRecordOptions:
    """Options for ``TFRecordWriter``: the compression (``None``/'', 'GZIP' or 'ZLIB').

    ``compression_level`` (0-9) is used; TF's other zlib tuning arguments are accepted.

    Example:
        >>> import tapejax as tf
        >>> tf.io.TFRecordOptions(compression_type="GZIP").compression_type
        'GZIP'
    """

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        self.compression_type = compression(compression_type, "TFRecordOptions") or None
        self.compression_level = compression_level

    @classmethod
    def get_compression_type_string(cls, options):
        """'' , 'GZIP' or 'ZLIB' for ``options`` (a TFRecordOptions, a string or None)."""
        return compression(options, "TFRecordOptions")


class TFRecordWriter:
    """Writes records (bytes) to a TFRecord file, as ``tf.io.TFRecordWriter``.

    ``options`` is a ``TFRecordOptions`` or a compression name ('GZIP', 'ZLIB').
    Use it as a context manager, or call ``close()``.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "x.tfrecord")
        >>> with tf.io.TFRecordWriter(path, "GZIP") as w:
        ...     w.write(b"abc")
        >>> [r for r in tf.data.TFRecordDataset(path, "GZIP").as_numpy_iterator()]
        [b'abc']
    """

    def __init__(self, path, options=None):
        opts = options if isinstance(options, TFRecordOptions) else TFRecordOptions(options)
        self._kind = compression(opts, "TFRecordWriter")
        level = 6 if opts.compression_level is None else int(opts.compression_level)
        self._raw = open(path, "wb")
        if self._kind == "GZIP":
            self._file = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=level, mtime=0)
        else:
            self._file = self._raw
        self._zlib = zlib.compressobj(level) if self._kind == "ZLIB" else None

    def write(self, record):
        """Appends one record (bytes, or a str encoded as UTF-8)."""
        if isinstance(record, str):
            record = record.encode()
        elif not isinstance(record, bytes):
            record = np.asarray(getattr(record, "numpy", lambda: record)()).item()
            record = record.encode() if isinstance(record, str) else bytes(record)
        data = frame(record)
        self._file.write(self._zlib.compress(data) if self._zlib else data)

    def flush(self):
        """Writes buffered data to the file."""
        if self._zlib is not None:
            self._file.write(self._zlib.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        """Flushes and closes the file."""
        if self._raw.closed:
            return
        if self._zlib is not None:
            self._file.write(self._zlib.flush())
        if self._file is not self._raw:
            self._file.close()
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------------------
# tf.train.Example protocol buffers and tf.io.parse_example
# ---------------------------------------------------------------------------

def _example_classes():
    """TensorFlow's ``feature.proto`` / ``example.proto`` messages (package ``tensorflow``), built
    from their descriptors in a pool of their own: the same wire format and text format."""
    f = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/example.proto",
                                             package="tensorflow", syntax="proto3")

    def message(name, fields, nested=()):
        m = fdp.message_type.add(name=name)
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        for number, (fname, ftype, label, type_name, oneof) in enumerate(fields, 1):
            field = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                field.type_name = type_name
            if oneof is not None:
                if not m.oneof_decl:
                    m.oneof_decl.add(name="kind")
                field.oneof_index = 0
        return m

    def map_entry(name, value_type):
        entry = descriptor_pb2.DescriptorProto(name=name)
        entry.field.add(name="key", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=f.TYPE_MESSAGE, label=f.LABEL_OPTIONAL, type_name=value_type)
        entry.options.map_entry = True
        return entry

    rep, opt = f.LABEL_REPEATED, f.LABEL_OPTIONAL
    message("BytesList", [("value", f.TYPE_BYTES, rep, None, None)])
    message("FloatList", [("value", f.TYPE_FLOAT, rep, None, None)])
    message("Int64List", [("value", f.TYPE_INT64, rep, None, None)])
    message("Feature", [(n, f.TYPE_MESSAGE, opt, f".tensorflow.{t}", 0) for n, t in
                        (("bytes_list", "BytesList"), ("float_list", "FloatList"), ("int64_list", "Int64List"))])
    message("Features", [("feature", f.TYPE_MESSAGE, rep, ".tensorflow.Features.FeatureEntry", None)],
            [map_entry("FeatureEntry", ".tensorflow.Feature")])
    message("FeatureList", [("feature", f.TYPE_MESSAGE, rep, ".tensorflow.Feature", None)])
    message("FeatureLists", [("feature_list", f.TYPE_MESSAGE, rep, ".tensorflow.FeatureLists.FeatureListEntry",
                              None)], [map_entry("FeatureListEntry", ".tensorflow.FeatureList")])
    message("Example", [("features", f.TYPE_MESSAGE, opt, ".tensorflow.Features", None)])
    message("SequenceExample", [("context", f.TYPE_MESSAGE, opt, ".tensorflow.Features", None),
                                ("feature_lists", f.TYPE_MESSAGE, opt, ".tensorflow.FeatureLists", None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    names = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList", "FeatureLists",
             "Example", "SequenceExample"]
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.{n}")) for n in names}


EXAMPLE_PROTOS = _example_classes()


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of a fixed shape (``tf.io.FixedLenFeature``): a dense tensor per example."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)

    def __repr__(self):
        return f"FixedLenFeature(shape={self.shape!r}, dtype={self.dtype!r}, default_value={self.default_value!r})"


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length (``tf.io.VarLenFeature``): a SparseTensor."""

    def __repr__(self):
        return f"VarLenFeature(dtype={self.dtype!r})"


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """A feature of any length (``tf.io.RaggedFeature``): a RaggedTensor of the examples' values
    (``value_key`` names the feature; the key of the spec by default). Only the values are read:
    ``partitions`` (more ragged dimensions) are not provided.

    Example:
        >>> import tapejax as tf
        >>> ex = tf.train.Example(features=tf.train.Features(feature={
        ...     'n': tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
        >>> tf.io.parse_example([ex.SerializeToString()] * 2, {'n': tf.io.RaggedFeature(tf.int64)})['n']
        <tf.RaggedTensor [[1, 2], [1, 2]]>
    """

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dtypes.int32, validate=False):
        if partitions:
            raise ValueError("tapejax's RaggedFeature reads the values of one feature (partitions=() only).")
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype, validate)

    def __repr__(self):
        return (f"RaggedFeature(dtype={self.dtype!r}, value_key={self.value_key!r}, partitions={self.partitions!r}, "
                f"row_splits_dtype={self.row_splits_dtype!r}, validate={self.validate!r})")


_KINDS = {"string": ("bytes_list", object, "string"), "int64": ("int64_list", np.int64, "int64"),
          "float32": ("float_list", np.float32, "float")}


def _feature_values(example, key, dtype, where):
    """The values of feature ``key`` of one parsed Example (None if it is absent)."""
    kind, np_dt, tf_name = _KINDS.get(_dtypes.as_dtype(dtype).name, (None, None, None))
    if kind is None:
        raise ValueError(f"Unsupported dtype {_dtypes.as_dtype(dtype).name} for a feature: use tf.string, "
                         "tf.int64 or tf.float32.")
    if key not in example.features.feature:
        return None
    feature = example.features.feature[key]
    got = feature.WhichOneof("kind")
    if got is not None and got != kind:
        names = {"bytes_list": "string", "int64_list": "int64", "float_list": "float"}
        raise errors.InvalidArgumentError(None, None, (
            f"Name: <unknown>, Key: {key}, Index: {where}.  Data types don't match. Data type: {names[got]} but "
            f"expected type: {tf_name} [Op:ParseExampleV2]"))
    values = list(getattr(feature, kind).value) if got else []
    return np.asarray(values, dtype=np_dt) if np_dt is not object else np.asarray(values + [b""], object)[:-1]


def _values_tensor(values, dtype):
    return Tensor(string_array(values)) if values.dtype == object else _numbers(values, values.dtype)


def _parse_fixed(examples, key, spec):
    shape = [int(d) for d in spec.shape]
    rows = []
    for i, ex in enumerate(examples):
        v = _feature_values(ex, key, spec.dtype, i)
        if v is None:
            if spec.default_value is None:
                raise errors.InvalidArgumentError(None, None, (
                    f"Name: <unknown>, Feature: {key} (data type: {_KINDS[_dtypes.as_dtype(spec.dtype).name][2]}) "
                    "is required but could not be found. [Op:ParseExampleV2]"))
            v = np.broadcast_to(np.asarray(spec.default_value, dtype=_KINDS[_dtypes.as_dtype(spec.dtype).name][1]),
                                shape).reshape(-1)
        if v.size != int(np.prod(shape)):
            raise errors.InvalidArgumentError(None, None, (
                f"Name: <unknown>, Key: {key}, Index: {i}.  Number of {_dtypes.as_dtype(spec.dtype).name} values != "
                f"expected.  Values size: {v.size} but output shape: {shape} [Op:ParseExampleV2]"))
        rows.append(v.reshape(shape))
    return rows


def _parse(serialized, features, batched):
    text = _text(serialized)
    if batched and text.ndim > 1:
        raise errors.InvalidArgumentError(None, None, "Expected serialized to be a scalar or vector, got shape: "
                                          f"[{','.join(map(str, text.shape))}] [Op:ParseExampleV2]")
    batched = batched and text.ndim == 1   # one serialized Example (a scalar): its features, no batch dimension
    examples = [EXAMPLE_PROTOS["Example"].FromString(bytes(s)) for s in text.reshape(-1)]
    out = {}
    # TensorFlow's order (parsing_config): the sparse features, then the dense, then the ragged, each by key.
    kinds = (VarLenFeature, FixedLenFeature, RaggedFeature)
    for key, spec in sorted(features.items(), key=lambda kv: (
            next((i for i, k in enumerate(kinds) if isinstance(kv[1], k)), len(kinds)), kv[0])):
        if isinstance(spec, FixedLenFeature):
            rows = _parse_fixed(examples, key, spec)
            stacked = np.stack(rows) if rows else np.zeros([0] + list(spec.shape))
            out[key] = _values_tensor(stacked if batched else np.asarray(stacked[0], stacked.dtype), spec.dtype)
            continue
        name = spec.value_key or key if isinstance(spec, RaggedFeature) else key
        rows = [_feature_values(ex, name, spec.dtype, i) for i, ex in enumerate(examples)]
        np_dt = _KINDS[_dtypes.as_dtype(spec.dtype).name][1]
        rows = [np.zeros(0, np_dt) if r is None else r for r in rows]
        flat = np.concatenate(rows) if rows else np.zeros(0, np_dt)
        values = _values_tensor(flat, spec.dtype)
        if isinstance(spec, RaggedFeature):
            out[key] = _ragged.RaggedTensor.from_row_lengths(values, [len(r) for r in rows]) if batched else values
        else:
            cols = np.concatenate([np.arange(len(r)) for r in rows] + [np.zeros(0, np.int64)])
            rowid = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
            width = max([len(r) for r in rows], default=0)
            out[key] = _sparse.SparseTensor(np.stack([rowid, cols], 1) if batched else cols[:, None], values,
                                            [len(rows), width] if batched else [width])
    return out


def parse_example(serialized, features, example_names=None, name=None):
    """Parses a batch of serialized ``tf.train.Example`` protos (``tf.io.parse_example``): a dict of
    SparseTensors (``VarLenFeature``), dense tensors (``FixedLenFeature``) and RaggedTensors
    (``RaggedFeature``), in TensorFlow's order (sparse, dense, ragged; each by key), with
    TensorFlow's errors for a missing required feature, a wrong number of values or a wrong
    type. A scalar ``serialized`` (one Example) parses as :func:`parse_single_example` does.

    Example:
        >>> import tapejax as tf
        >>> ex = tf.train.Example(features=tf.train.Features(feature={
        ...     'x': tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))}))
        >>> tf.io.parse_example([ex.SerializeToString()], {'x': tf.io.FixedLenFeature([2], tf.float32)})['x']
        <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[1., 2.]], dtype=float32)>
        >>> tf.io.parse_example(ex.SerializeToString(), {'x': tf.io.RaggedFeature(tf.float32)})
        {'x': <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>}
    """
    return _parse(serialized, features, batched=True)


def parse_single_example(serialized, features, example_names=None, name=None):
    """Parses one serialized ``tf.train.Example`` (``tf.io.parse_single_example``): as
    :func:`parse_example` without the batch dimension (a RaggedFeature gives a 1-D Tensor)."""
    return _parse(serialized, features, batched=False)


from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("tapejax.io")
