"""The on-disk format shared by the writer and the reader: file names, TensorFlow's value keys,
the checksum of a value, and the errors of a missing or damaged checkpoint."""

import jax
import numpy as np

from .. import errors as _errors


_STATE_FILE = "checkpoint"
_ATTRIBUTES = ".ATTRIBUTES"
_TMP_MARK = ".orbax-checkpoint-tmp"   # orbax's temporary folders (and ours) carry this
_INDEX_VERSION = 2


class NotFoundError(_errors.NotFoundError, FileNotFoundError):
    """A checkpoint path that does not exist (also a ``FileNotFoundError``)."""

    def __init__(self, message):
        _errors.NotFoundError.__init__(self, None, None, message)


class DataLossError(_errors.DataLossError, ValueError):
    """A checkpoint that exists but cannot be read (truncated, corrupted or modified files); a
    ``tf.errors.DataLossError`` and a ``ValueError``."""

    def __init__(self, message):
        _errors.DataLossError.__init__(self, None, None, message)


def _ocp():
    # orbax takes about a second to import: only pay it when checkpointing.
    import orbax.checkpoint as ocp
    return ocp


def _key(path):
    """TensorFlow's checkpoint key of the value at an object path."""
    return path if f"/{_ATTRIBUTES}/" in f"/{path}" else f"{path}/{_ATTRIBUTES}/VARIABLE_VALUE"


_MULT = np.uint32(2654435761)
_CHUNK = 1 << 20


def _block_checksum(block, starts, shape):
    """Checksum of the elements of ``block``, which sits at ``starts`` in an array of ``shape``.

    Each 32-bit word of the data is multiplied by an odd weight derived from its
    position in the whole array and the products are summed modulo 2**32: a flipped
    bit always changes the sum, and the sums of the blocks of a sharded array add
    up to the checksum of the whole, however it is split.
    """
    if len(shape) == 0:
        block, starts, shape = np.reshape(block, 1), (0,), (1,)
    block = np.ascontiguousarray(block)
    if block.size == 0:
        return 0
    size = block.dtype.itemsize
    words_per = size // 4 if size >= 4 else 1
    view = np.uint32 if size >= 4 else (np.uint16 if size == 2 else np.uint8)
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    inner = np.zeros(block.shape[1:], np.uint32)
    for k in range(1, block.ndim):
        pos = (np.arange(block.shape[k], dtype=np.uint64) + starts[k]) * strides[k]
        inner = inner + pos.astype(np.uint32).reshape((-1,) + (1,) * (block.ndim - 1 - k))
    inner = (inner.reshape(-1, 1) * np.uint32(words_per)
             + np.arange(words_per, dtype=np.uint32)).reshape(-1)
    data = block.reshape(block.shape[0], -1).view(view)
    rows = max(1, _CHUNK // inner.size)
    step = np.uint32((strides[0] * words_per) % 2**32)
    total = 0
    for r0 in range(0, block.shape[0], rows):
        r = np.arange(r0, min(block.shape[0], r0 + rows), dtype=np.uint32) + np.uint32(starts[0] % 2**32)
        weights = ((r * step)[:, None] + inner[None, :]) * _MULT | np.uint32(1)
        total += int(np.sum(data[r0:r0 + len(r)].astype(np.uint32) * weights, dtype=np.uint32))
    return total % 2**32


def _checksum(x):
    """The checksum of an array (NumPy or jax, sharded or not) from its addressable shards:
    no shard is gathered to one host."""
    if not isinstance(x, jax.Array):
        return _block_checksum(np.asarray(x), (0,) * np.ndim(x), np.shape(x))
    total = 0
    for shard in x.addressable_shards:
        if shard.replica_id != 0:
            continue
        starts = tuple(s.start or 0 for s in shard.index)
        total += _block_checksum(np.asarray(shard.data), starts, x.shape)
    return total % 2**32


def _tree_set(tree, parts, value):
    for part in parts[:-1]:
        tree = tree.setdefault(part, {})
    tree[parts[-1]] = value


def _tree_get(tree, key):
    if isinstance(key, str):   # version 1: flat keys v0, v1, ...
        return tree[key]
    for part in key:
        tree = tree[part]
    return tree


_CHECKSUMS = "checksums.json"
