"""tf.io: TFRecord files, written and read without TensorFlow.

A TFRecord file is a sequence of records, each framed as::

    uint64 length (little-endian) | uint32 masked CRC32-C of length | data | uint32 masked CRC32-C of data

optionally GZIP- or ZLIB-compressed as a whole. ``TFRecordWriter`` writes them (byte for
byte what TensorFlow writes); ``tf.data.TFRecordDataset`` reads them with
:func:`read_records`, which checks both checksums and raises ``tf.errors.DataLossError``
on a damaged or truncated file. CRC32-C (Castagnoli) is computed here with NumPy.

Example:
    >>> import os, tempfile, tapejax as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     for r in [b"first", b"second"]:
    ...         writer.write(r)
    >>> [r for r in tf.data.TFRecordDataset(path).as_numpy_iterator()]
    [b'first', b'second']
"""
import functools
import gzip
import io as _pyio
import struct
import zlib

import numpy as np

from . import errors

__all__ = ["TFRecordWriter", "TFRecordOptions"]

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


from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr(__name__)
