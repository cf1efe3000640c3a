"""tf.RaggedTensor and tf.ragged: tensors whose rows have different lengths.

A RaggedTensor is ``values`` (a Tensor, or a RaggedTensor for more ragged dimensions) cut into
rows by ``row_splits`` (int64: row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``), as in
TensorFlow. The partition is concrete (NumPy on the host), so ragged tensors are eager values:
inside a compiled ``tf.function`` pad them (``to_tensor``) and carry the lengths. Numeric values
are tapejax Tensors, so ops on them are recorded and differentiable.

Ops of the op table take RaggedTensors where TensorFlow's do (elementwise math, reductions,
``tf.concat``, ``tf.tile``): ``apply`` hands them to :func:`_dispatch` when JAX refuses them.

Example:
    >>> import tapejax as tf
    >>> digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    >>> digits + 3
    <tf.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>
    >>> tf.reduce_sum(digits, axis=1).numpy()
    array([ 9,  0, 16,  6,  0], dtype=int32)
"""
import builtins

import jax
import jax.numpy as jnp
import numpy as np

from ._core import dtypes as _dtypes, engine as _engine
from . import ops as _ops, errors as errors
from ._core.tensor import Tensor, TensorShape, _TensorBase, _Ref
from .ops.normalize import INDEX as _INDEX
from .ops.math_ops import _cast
from .ops.nn_ops import _leaky_relu
from .ops.array_ops import _concat as _concat_op, _tile as _tile_op, _reverse as _reverse_op
from .extend import defop
from ._staging.function import TensorSpec as _TensorSpec
from .sparse import SparseTensor, _host_index, _index_tensor, _tensor


def _invalid(x, y):
    return errors.InvalidArgumentError(None, None, (
        "Arguments to _from_row_partition do not form a valid RaggedTensor\nCondition x == y did not hold.\n"
        f"First 1 elements of x:\n[{x}]\nFirst 1 elements of y:\n[{y}]"))


class RaggedTensor:
    """A tensor with rows of different lengths (``tf.RaggedTensor``).

    Build one with :func:`constant` or the ``from_*`` factories; ``values`` and ``row_splits``
    describe it, ``to_tensor`` pads it, ``to_list`` gives Python lists.

    Example:
        >>> import tapejax as tf
        >>> rt = tf.RaggedTensor.from_row_lengths([3, 1, 4, 1, 5, 9, 2], row_lengths=[4, 0, 2, 1])
        >>> rt
        <tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>
        >>> rt.shape, rt[2].numpy().tolist(), rt.to_tensor().shape
        (TensorShape([4, None]), [5, 9], TensorShape([4, 4]))
    """

    __slots__ = ("_values", "_splits", "_uniform", "__weakref__")
    _tf_composite = True  # tf.is_tensor is True, as for TensorFlow's composite tensors

    def __init__(self, values, row_splits, internal=False, uniform_row_length=None):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the factory methods "
                             "instead (e.g., RaggedTensor.from_row_lengths())")
        self._values = values
        self._splits = row_splits  # NumPy int64, concrete
        self._uniform = uniform_row_length  # an int for a uniform partition (its size is in the shape)

    # ------------------------------------------------------------------ factories
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``."""
        values = values if isinstance(values, RaggedTensor) else _tensor(values)
        splits = _host_index(row_splits).reshape(-1)
        if validate:
            n = _nrows_of(values)
            if splits.size == 0 or splits[0] != 0:
                raise errors.InvalidArgumentError(None, None, "row_splits must start with 0 "
                                                  f"(got {splits.tolist()}).")
            if np.any(np.diff(splits) < 0):
                raise errors.InvalidArgumentError(None, None, "row_splits must be sorted in ascending order "
                                                  f"(got {splits.tolist()}).")
            if splits[-1] != n:
                raise _invalid(splits[-1], n)
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Rows of ``row_lengths[i]`` values each."""
        lengths = _host_index(row_lengths).reshape(-1)
        return cls.from_row_splits(values, np.concatenate([[0], np.cumsum(lengths)]), validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Value ``j`` goes to row ``value_rowids[j]`` (sorted); ``nrows`` adds empty rows at the end."""
        ids = _host_index(value_rowids).reshape(-1)
        if ids.size and np.any(np.diff(ids) < 0):
            raise errors.InvalidArgumentError(None, None, "value_rowids must be sorted in ascending order.")
        n = (int(ids[-1]) + 1 if ids.size else 0) if nrows is None else int(nrows)
        return cls.from_row_lengths(values, np.bincount(ids, minlength=n)[:n] if n else np.zeros(0, np.int64),
                                    validate=validate)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        """Row ``i`` starts at ``row_starts[i]``; the last ends at the end of ``values``."""
        values = values if isinstance(values, RaggedTensor) else _tensor(values)
        return cls.from_row_splits(values, np.append(_host_index(row_starts).reshape(-1), _nrows_of(values)), validate=validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        """Row ``i`` ends at ``row_limits[i]``."""
        return cls.from_row_splits(values, np.concatenate([[0], _host_index(row_limits).reshape(-1)]), validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True, name=None):
        """Rows of ``uniform_row_length`` values each: a partitioned dimension of known size.

        Example:
            >>> import tapejax as tf
            >>> rt = tf.RaggedTensor.from_uniform_row_length(
            ...     tf.RaggedTensor.from_row_lengths([1, 2, 3, 4, 5], [2, 0, 1, 2]), uniform_row_length=2)
            >>> rt.shape, rt.ragged_rank
            (TensorShape([2, 2, None]), 2)
        """
        values = values if isinstance(values, RaggedTensor) else _tensor(values)
        n, length = _nrows_of(values), int(_host_index(uniform_row_length).reshape(()))
        rows = (n // length if length else 0) if nrows is None else int(_host_index(nrows).reshape(()))
        if rows * length != n:
            raise ValueError(f"uniform_row_length={length} times nrows={rows} must equal nvals={n}")
        return cls(values, np.arange(rows + 1, dtype=np.int64) * length, internal=True, uniform_row_length=length)

    @property
    def uniform_row_length(self):
        """The length of every row (int64 scalar) of a uniform partition, else None."""
        return None if self._uniform is None else _index_tensor(self._uniform)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        """Several ragged dimensions: ``nested_row_splits`` outermost first."""
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        """Several ragged dimensions: ``nested_row_lengths`` outermost first."""
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None, row_splits_dtype=None):
        """The rows of a dense tensor, cut to ``lengths``, or with trailing ``padding`` removed.

        Example:
            >>> import tapejax as tf
            >>> tf.RaggedTensor.from_tensor([[1, 0, 0], [2, 3, 0]], padding=0)
            <tf.RaggedTensor [[1], [2, 3]]>
        """
        if lengths is not None and padding is not None:
            raise ValueError("Specify argument `lengths` or `padding`, but not both.")
        if not isinstance(ragged_rank, int):
            raise TypeError(f"Argument `ragged_rank` must be an int. Received {ragged_rank}.")
        if ragged_rank <= 0:
            raise ValueError(f"Argument `ragged_rank` must be greater than 0. Received {ragged_rank}.")
        t = _tensor(tensor)
        if t.ndim < ragged_rank + 1:
            raise ValueError(f"Shape {TensorShape(t.shape)} must have rank at least {ragged_rank + 1}")
        if isinstance(lengths, (list, tuple)) and len(lengths) and not isinstance(lengths[0], (int, float)):
            # TF: nested row lengths, one per ragged dimension; the mask of the kept values is a
            # boolean RaggedTensor of those lengths, densified
            if ragged_rank not in (1, len(lengths)):
                raise ValueError("If Argument `lengths` is a tuple of row_lengths, argument `ragged_rank` must be "
                                 f"len(lengths): {len(lengths)}. Received ragged_rank: {ragged_rank}.")
            lengths = [_host_index(x).reshape(-1) for x in lengths]
            ones = np.ones(int(lengths[-1].sum()), bool)
            mask = np.asarray(RaggedTensor.from_nested_row_lengths(ones, lengths).to_tensor(
                default_value=False, shape=t.shape[:len(lengths) + 1]))
            return cls.from_nested_row_lengths(_ops.boolean_mask(t, mask), lengths)
        if ragged_rank > 1:   # TF: the first ragged_rank dimensions flattened, then uniform partitions
            dims = [int(d) for d in t.shape]
            size = np.cumprod(dims)
            result = cls.from_tensor(_ops.reshape(t, [int(size[ragged_rank - 1])] + dims[ragged_rank:]),
                                     lengths, padding)
            for axis in builtins.range(ragged_rank - 1, 0, -1):
                result = cls.from_uniform_row_length(result, dims[axis], nrows=int(size[axis - 1]))
            return result
        n, m = t.shape[0], t.shape[1]
        if lengths is not None:
            lens = np.minimum(_host_index(lengths).reshape(-1), m)
        elif padding is not None:
            pad = np.asarray(t) == np.asarray(_tensor(padding, t.dtype))
            pad = pad.reshape(n, m, -1).all(axis=2)
            keep = ~pad
            # A row keeps everything up to its last non-padding value (TensorFlow strips trailing padding).
            lens = np.where(keep.any(axis=1), m - np.argmax(keep[:, ::-1], axis=1), 0)
        else:   # TF: every row full, a uniform partition (its size stays in the shape)
            return cls.from_uniform_row_length(_ops.reshape(t, [n * m] + list(t.shape[2:])), m, nrows=n)
        mask = np.arange(m)[None, :] < lens[:, None]
        return cls.from_row_lengths(_ops.boolean_mask(t, mask), lens)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=None):
        """The rows of a 2-D ``tf.sparse.SparseTensor`` whose entries fill each row from its start
        (as ``to_sparse`` makes them)."""
        idx = np.asarray(st_input.indices).reshape(-1, 2)
        n = int(np.asarray(st_input.dense_shape)[0])
        lengths = np.bincount(idx[:, 0], minlength=n)
        expected = np.arange(len(idx)) - np.concatenate([[0], np.cumsum(lengths)])[idx[:, 0]]
        if idx.size and (np.any(np.diff(idx[:, 0]) < 0) or np.any(idx[:, 1] != expected)):
            raise errors.InvalidArgumentError(None, None, "from_sparse needs row-major entries that fill each "
                                              "row from column 0: call tf.sparse.reorder, or pad with to_dense.")
        return cls.from_row_lengths(st_input.values, lengths)

    # ------------------------------------------------------------------ structure
    @property
    def values(self):
        """The concatenated rows (a Tensor, or a RaggedTensor for nested ragged dimensions)."""
        return self._values

    @property
    def row_splits(self):
        """Where each row starts and ends in ``values`` (int64, ``nrows + 1`` entries)."""
        return _index_tensor(self._splits)

    @property
    def flat_values(self):
        """The innermost values: a Tensor."""
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self):
        """The ``row_splits`` of every ragged dimension, outermost first."""
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_splits)
            rt = rt._values
        return tuple(out)

    @property
    def ragged_rank(self):
        """How many dimensions are ragged."""
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self):
        """``[nrows, None, ...]``: ``None`` for each ragged dimension."""
        inner = self._values.shape[1:]
        return TensorShape([len(self._splits) - 1, self._uniform] + list(inner))

    def get_shape(self):
        return self.shape

    @property
    def ndim(self):
        return len(self.shape)

    def nrows(self, out_type=None, name=None):
        """The number of rows (an int64 scalar tensor)."""
        return Tensor(jnp.asarray(len(self._splits) - 1, _dtypes.np_dtype(out_type) or _INDEX))

    def _lengths(self):
        return np.diff(self._splits)

    def row_lengths(self, axis=1, name=None):
        """The length of each row (int64); ``axis=k`` the lengths of the rows of dimension ``k``, a
        RaggedTensor of the outer ``k`` dimensions.

        Example:
            >>> import tapejax as tf
            >>> rt = tf.ragged.constant([[[3, 1, 4], [1]], [], [[5, 9], [2]], [[6]], []])
            >>> print(rt.row_lengths(axis=2))
            <tf.RaggedTensor [[3, 1], [], [2, 1], [1], []]>
        """
        axis = _positive_axis(axis, self.ndim)
        if axis == 0:
            return self.nrows()
        if axis == 1:
            return _index_tensor(self._lengths())
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.row_lengths(axis - 1))
        shape = list(self._values.shape)    # dense values: every row of dimension ``axis`` is full
        return self.with_values(_index_tensor(np.full(shape[:axis - 1], shape[axis - 1], np.int64)))

    def nested_row_lengths(self, name=None):
        """The ``row_lengths`` of every ragged dimension, outermost first.

        Example:
            >>> import tapejax as tf
            >>> rt = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
            >>> [x.numpy().tolist() for x in rt.nested_row_lengths()]
            [[2, 1], [2, 1, 3]]
        """
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_lengths())
            rt = rt._values
        return tuple(out)

    def nested_value_rowids(self, name=None):
        """The ``value_rowids`` of every ragged dimension, outermost first.

        Example:
            >>> import tapejax as tf
            >>> rt = tf.ragged.constant([[[[3, 1, 4, 1], [], [5, 9, 2]], [], [[6], []]]])
            >>> [ids.numpy().tolist() for ids in rt.nested_value_rowids()]
            [[0, 0, 0], [0, 0, 0, 2, 2], [0, 0, 0, 0, 2, 2, 2, 3]]
        """
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.value_rowids())
            rt = rt._values
        return tuple(out)

    def merge_dims(self, outer_axis, inner_axis):
        """Merges dimensions ``outer_axis`` to ``inner_axis`` (both included) into one, as TF.

        Example:
            >>> import tapejax as tf
            >>> rt = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
            >>> print(rt.merge_dims(0, 1))
            <tf.RaggedTensor [[1, 2], [3], [4, 5, 6]]>
            >>> print(rt.merge_dims(0, 2))
            tf.Tensor([1 2 3 4 5 6], shape=(6,), dtype=int32)
        """
        outer_axis = _positive_axis(outer_axis, self.ndim, "outer_axis", "rank(self)")
        inner_axis = _positive_axis(inner_axis, self.ndim, "inner_axis", "rank(self)")
        if not outer_axis <= inner_axis:
            raise ValueError(f"Expected outer_axis ({outer_axis}) to be less than or equal to inner_axis "
                             f"({inner_axis}).")
        return _merge_dims(self, outer_axis, inner_axis)

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None, name=None,
                                 validate=True):
        """Several ragged dimensions from their ``value_rowids`` (and ``nrows``), outermost first.

        Example:
            >>> import tapejax as tf
            >>> tf.RaggedTensor.from_nested_value_rowids([1, 2, 3, 4], [[0, 0, 1], [0, 0, 1, 2]],
            ...                                          nested_nrows=[2, 3])
            <tf.RaggedTensor [[[1, 2], [3]], [[4]]]>
        """
        ids = list(nested_value_rowids)
        nrows = [None] * len(ids) if nested_nrows is None else list(nested_nrows)
        if len(nrows) != len(ids):
            raise ValueError(f"Argument `nested_nrows` must have the same length as argument "
                             f"`nested_value_rowids`. len(nested_nrows) = {len(nrows)} vs. "
                             f"len(nested_values_rowids) = {len(ids)}.")
        result = flat_values
        for rowids, n in reversed(list(zip(ids, nrows))):
            result = cls.from_value_rowids(result, rowids, n, validate=validate)
        return result

    def value_rowids(self, name=None):
        """The row of each value (int64)."""
        return _index_tensor(self._rowids())

    def _rowids(self):
        return np.repeat(np.arange(len(self._splits) - 1), self._lengths())

    def row_starts(self, name=None):
        return _index_tensor(self._splits[:-1])

    def row_limits(self, name=None):
        return _index_tensor(self._splits[1:])

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The shape of the smallest dense tensor holding it (int64)."""
        dims = self._bounding()
        return _index_tensor(dims if axis is None else np.asarray(dims)[axis])

    def _bounding(self):
        lengths = self._lengths()
        inner = self._values._bounding()[1:] if isinstance(self._values, RaggedTensor) else list(self._values.shape[1:])
        return [len(lengths), int(lengths.max()) if lengths.size else 0] + inner

    def with_values(self, new_values):
        """The same rows over new ``values`` (same number of values)."""
        new_values = new_values if isinstance(new_values, RaggedTensor) else _tensor(new_values)
        out = RaggedTensor.from_row_splits(new_values, self._splits)
        out._uniform = self._uniform
        return out

    def with_flat_values(self, new_values):
        """The same ragged partitions over new innermost values."""
        if isinstance(self._values, RaggedTensor):
            return RaggedTensor(self._values.with_flat_values(new_values), self._splits, internal=True,
                                uniform_row_length=self._uniform)
        return self.with_values(new_values)

    def _tf_shape(self, out_type):
        """``tf.shape(rt)``: a DynamicRaggedShape."""
        parts, rt = [], self
        while isinstance(rt, RaggedTensor):
            parts.append(RowPartition(rt._splits, rt._uniform, out_type, internal=True))
            rt = rt._values
        return DynamicRaggedShape(parts, list(rt.shape), out_type)

    def _partitions(self):
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt._splits)
            rt = rt._values
        return out

    # ------------------------------------------------------------------ conversion
    def to_tensor(self, default_value=None, name=None, shape=None):
        """The dense tensor, rows padded with ``default_value`` (zero / empty string) to the
        longest row, or cut and padded to ``shape``. Differentiable in the values.

        Example:
            >>> import tapejax as tf
            >>> tf.ragged.constant([[1, 2], [3]]).to_tensor(default_value=-1).numpy().tolist()
            [[1, 2], [3, -1]]
        """
        shape = None if shape is None else [None if d is None or d == -1 else int(d) for d in shape]
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.to_tensor(default_value, shape=None if shape is None else [None] + shape[2:])
        elif shape is not None and any(d is not None for d in shape[2:]):
            raise ValueError("tapejax's to_tensor(shape=...) shapes the ragged dimensions only; "
                             "slice the result for inner dimensions.")
        lengths = self._lengths()
        n = len(lengths) if shape is None or shape[0] is None else shape[0]
        m = (int(lengths.max()) if lengths.size else 0) if shape is None or shape[1] is None else shape[1]
        inner = list(values.shape[1:])
        fill = (_ops.zeros([1] + inner, values.dtype) if default_value is None
                else _ops.broadcast_to(_tensor(default_value, values.dtype), [1] + inner))
        pad_at = int(values.shape[0])
        rows = np.arange(n)[:, None]
        cols = np.arange(m)[None, :]
        ok = (rows < len(lengths)) & (cols < np.append(lengths, 0)[np.minimum(rows, len(lengths))])
        start = np.append(self._splits[:-1], 0)[np.minimum(rows, len(lengths))]
        idx = np.where(ok, start + cols, pad_at).astype(np.int32)
        return _ops.gather(_ops.concat([values, fill], axis=0), Tensor(jnp.asarray(idx)))

    def to_list(self):
        """The value as nested Python lists (bytes for strings)."""
        inner = self._values.to_list() if isinstance(self._values, RaggedTensor) else np.asarray(self._values).tolist()
        return [inner[s:e] for s, e in zip(self._splits[:-1], self._splits[1:])]

    def numpy(self):
        """The rows as NumPy, as TensorFlow gives them: an object array of row arrays, or one
        array when the rows happen to have one length."""
        values = self._values.numpy()
        rows = [values[s:e] for s, e in zip(self._splits[:-1], self._splits[1:])]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        if any(len(r) != len(rows[0]) for r in rows):
            out = np.empty(len(rows), object)
            out[:] = [None] * len(rows)
            for i, r in enumerate(rows):
                out[i] = r
            return out
        return np.array(rows)

    def to_sparse(self, name=None):
        """A ``tf.sparse.SparseTensor`` of the values at their (row, column) positions."""
        if isinstance(self._values, RaggedTensor) or self._values.ndim != 1:
            raise ValueError("tapejax's to_sparse converts 2-D ragged tensors; call to_tensor first.")
        cols = np.arange(len(self._rowids())) - self._splits[:-1][self._rowids()]
        indices = np.stack([self._rowids(), cols], axis=1).reshape(-1, 2)
        return SparseTensor(indices, self._values, self._bounding())

    def __array__(self, dtype=None, copy=None):
        raise TypeError("A tf.RaggedTensor has rows of different lengths: it does not convert to a dense "
                        "array. Use .to_tensor() (padded), .to_list(), or .numpy() (an object array of rows).")

    # ------------------------------------------------------------------ indexing
    def _row(self, i):
        n = len(self._splits) - 1
        if not -n <= i < n:
            raise errors.InvalidArgumentError(None, None, f"slice index {i} of dimension 0 out of bounds.")
        i %= n
        return self._values[int(self._splits[i]):int(self._splits[i + 1])]

    def _take(self, rows):
        """The rows at the given positions, as a RaggedTensor."""
        rows = np.asarray(rows, np.int64)
        lengths = self._lengths()[rows]
        idx = np.concatenate([np.arange(self._splits[r], self._splits[r + 1]) for r in rows] + [np.zeros(0, np.int64)])
        out = RaggedTensor.from_row_lengths(_take_values(self._values, idx), lengths)
        out._uniform = self._uniform
        return out

    def __getitem__(self, key):
        """Rows (``rt[0]``, ``rt[1:3]``), values (``rt[2, 1]``) and per-row slices (``rt[:, :2]``)."""
        key = key if isinstance(key, tuple) else (key,)
        if not key:
            return self
        first, rest = key[0], key[1:]
        if isinstance(first, _TensorBase):
            first = int(first)
        if isinstance(first, (int, np.integer)):
            row = self._row(int(first))
            return row[rest] if rest else row
        if not isinstance(first, slice):
            raise TypeError(f"RaggedTensor indices must be ints or slices, got {first!r}. Use tf.gather for "
                            "index tensors.")
        rows = self._take(builtins.range(*first.indices(len(self._splits) - 1)))
        return rows._per_row(rest) if rest else rows

    def _per_row(self, key):
        """``rt[:, key...]``: ``key[0]`` indexes within each row."""
        k, rest = key[0], key[1:]
        lengths = self._lengths()
        if isinstance(k, _TensorBase):
            k = int(k)
        if isinstance(k, (int, np.integer)):
            k = int(k)
            bad = np.flatnonzero((k >= lengths) | (k < -lengths))
            if bad.size:
                raise errors.InvalidArgumentError(None, None, f"slice index {k} of dimension 1 out of bounds "
                                                  f"in row {int(bad[0])} (length {int(lengths[bad[0]])}).")
            idx = self._splits[:-1] + np.where(k < 0, lengths + k, k)
            out = _take_values(self._values, idx)
            return out[(slice(None),) + rest] if rest else out
        if not isinstance(k, slice):
            raise TypeError(f"RaggedTensor indices must be ints or slices, got {k!r}.")
        parts = [np.arange(s, e)[k] for s, e in zip(self._splits[:-1], self._splits[1:])]
        idx = np.concatenate(parts + [np.zeros(0, np.int64)])
        values = _take_values(self._values, idx)
        if rest:
            values = values[(slice(None),) + rest]
        return RaggedTensor.from_row_lengths(values, [len(p) for p in parts])

    def __iter__(self):
        for i in builtins.range(len(self._splits) - 1):
            yield self._row(i)

    def _map_rows(self, fn, signature=None):
        """``tf.map_fn(fn, rt)``: ``fn`` of each row; the rows of the result form a RaggedTensor,
        or, with a ``fn_output_signature`` dtype, are stacked as a dense tensor."""
        rows = [fn(r) for r in self]
        if signature is not None:
            return _ops.stack([_tensor(r, signature) for r in rows])
        return stack(rows)

    # ------------------------------------------------------------------ printing
    def __repr__(self):
        with np.printoptions(formatter={"all": _formatter}):
            text = _formatter(self.numpy())
        return f"<tf.RaggedTensor {text}>"

    __str__ = __repr__

    def __hash__(self):
        raise TypeError("RaggedTensor is unhashable. Instead, use tensor.ref() as the key.")

    def ref(self):
        return _Ref(self)


class RaggedTensorSpec:
    """The type of a RaggedTensor: its shape (``None`` for ragged and unknown sizes), dtype and
    ragged rank (``tf.RaggedTensorSpec``). A ``tf.data`` element spec, and an ``input_signature``
    entry of ``tf.function``.

    Example:
        >>> import tapejax as tf
        >>> spec = tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)
        >>> spec
        RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)
        >>> spec.is_compatible_with(tf.ragged.constant([[1, 2], [3]]))
        True
    """

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype", "_flat_values_spec")
    value_type = RaggedTensor

    def __init__(self, shape=None, dtype=_dtypes.float32, ragged_rank=None, row_splits_dtype=_dtypes.int64,
                 flat_values_spec=None):
        self._shape = None if shape is None else TensorShape(shape)
        if ragged_rank is None:
            if self._shape is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = len(self._shape) - 1
        if self._shape is not None and not 0 <= ragged_rank < max(len(self._shape), 1):
            raise ValueError(f"ragged_rank must be non-negative and less than the rank of shape {self._shape}; "
                             f"got {ragged_rank}.")
        self._dtype = _dtypes.as_dtype(flat_values_spec.dtype if flat_values_spec is not None else dtype)
        self._ragged_rank = int(ragged_rank)
        self._row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
        self._flat_values_spec = flat_values_spec

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)
    flat_values_spec = property(lambda self: self._flat_values_spec)

    @classmethod
    def from_value(cls, value):
        """The spec of a RaggedTensor (or of a Tensor, as ragged rank 0)."""
        if isinstance(value, RaggedTensor):
            return cls(value.shape, value.dtype, value.ragged_rank)
        return cls(value.shape, value.dtype, 0)

    def is_compatible_with(self, other):
        """Whether ``other`` (a spec or a value) has this dtype, ragged rank and a shape that fits."""
        if not isinstance(other, RaggedTensorSpec):
            if not isinstance(other, (RaggedTensor, _TensorBase)):
                return False
            other = RaggedTensorSpec.from_value(other)
        if other.dtype != self.dtype or other.ragged_rank != self.ragged_rank:
            return False
        return self.shape is None or other.shape is None or self.shape.is_compatible_with(other.shape)

    def _tf_bind(self, value):
        """``value`` as an argument of a tf.function with this spec in its ``input_signature``
        (TypeError with TensorFlow's reason when it does not fit)."""
        if isinstance(value, RaggedTensor) and self.is_compatible_with(value):
            return value
        if isinstance(value, RaggedTensor) and value.ragged_rank == self.ragged_rank:
            inner = [] if self.shape is None else list(self.shape)[self.ragged_rank + 1:]
            got, want = value.flat_values, _TensorSpec([None] + inner, self.dtype)
            raise TypeError(f"Can not cast {_TensorSpec(got.shape, got.dtype)!r} to {want!r}")
        raise TypeError(f"Can not cast {value!r} to {self!r}")

    def _key(self):
        return (None if self._shape is None else tuple(self._shape), self._dtype.name, self._ragged_rank,
                self._row_splits_dtype.name)

    def __eq__(self, other):
        return isinstance(other, RaggedTensorSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        shape = "TensorShape(None)" if self._shape is None else repr(self._shape)
        return (f"RaggedTensorSpec({shape}, tf.{self._dtype.name}, {self._ragged_rank}, "
                f"tf.{self._row_splits_dtype.name})")


class RowPartition:
    """How one ragged dimension cuts its values into rows: ``row_splits`` (and a length when
    every row has it), ``tf.experimental.RowPartition``.

    Example:
        >>> import tapejax as tf
        >>> tf.experimental.RowPartition.from_row_lengths([5, 3, 2])
        tf.RowPartition(row_splits=[ 0  5  8 10])
    """

    __slots__ = ("_splits", "_uniform", "_dtype")

    def __init__(self, row_splits, uniform_row_length=None, dtype=_dtypes.int64, internal=False):
        if not internal:
            raise ValueError("RowPartition constructor is private; please use one of the factory methods "
                             "instead (e.g., RowPartition.from_row_lengths())")
        self._splits, self._uniform, self._dtype = row_splits, uniform_row_length, _dtypes.as_dtype(dtype)

    @classmethod
    def from_row_splits(cls, row_splits, validate=True, dtype=None, dtype_hint=None):
        return cls(_host_index(row_splits).reshape(-1), None, dtype or _dtypes.int64, internal=True)

    @classmethod
    def from_row_lengths(cls, row_lengths, validate=True, dtype=None, dtype_hint=None):
        lengths = _host_index(row_lengths).reshape(-1)
        return cls(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), None, dtype or _dtypes.int64,
                   internal=True)

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length, nvals=None, nrows=None, validate=True, dtype=None,
                                dtype_hint=None):
        length = int(_host_index(uniform_row_length).reshape(()))
        rows = int(nrows) if nrows is not None else (int(nvals) // length if length else 0)
        return cls(np.arange(rows + 1, dtype=np.int64) * length, length, dtype or _dtypes.int64, internal=True)

    def row_splits(self):
        return _index_tensor(self._splits)

    def row_lengths(self):
        return _index_tensor(np.diff(self._splits))

    def nrows(self):
        return _index_tensor(len(self._splits) - 1)

    def nvals(self):
        return _index_tensor(self._splits[-1])

    def uniform_row_length(self):
        return None if self._uniform is None else _index_tensor(self._uniform)

    def is_uniform(self):
        return self._uniform is not None

    @property
    def dtype(self):
        return self._dtype

    def __repr__(self):
        return f"tf.RowPartition(row_splits={self._splits})"


class DynamicRaggedShape:
    """The shape of a RaggedTensor: its row partitions and the shape of its flat values
    (``tf.shape(rt)``, ``tf.experimental.DynamicRaggedShape``). ``tf.zeros``, ``tf.ones``,
    ``tf.fill`` and ``tf.reshape`` of one make a RaggedTensor of that shape.

    Example:
        >>> import tapejax as tf
        >>> shape = tf.shape(tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]]))
        >>> shape
        <DynamicRaggedShape lengths=[4, (1, 3, 0, 2)] num_row_partitions=1>
        >>> tf.ones(shape)
        <tf.RaggedTensor [[1.0], [1.0, 1.0, 1.0], [], [1.0, 1.0]]>
    """

    __slots__ = ("_parts", "_inner", "_dtype")

    def __init__(self, row_partitions, inner_shape, dtype=None, validate=True, static_inner_shape=None):
        self._parts = list(row_partitions)
        self._inner = [int(d) for d in _host_index(inner_shape).reshape(-1)]
        dt = dtype or (self._parts[0].dtype if self._parts else _dtypes.int64)
        self._dtype = _dtypes.as_dtype(dt)
        if self._parts and self._inner and validate and self._parts[-1]._splits[-1] != self._inner[0]:
            raise ValueError(f"Last row partition does not match inner_shape: {self._parts[-1]._splits[-1]} "
                             f"values against {self._inner[0]}.")

    @classmethod
    def from_lengths(cls, lengths, num_row_partitions=None, dtype=_dtypes.int64):
        """From sizes, outermost first: an int for a uniform dimension, a tuple of row lengths
        for a ragged one (``[4, (2, 1, 0, 8), 12]``)."""
        lengths = list(lengths)
        last = max([i for i, d in enumerate(lengths) if isinstance(d, (tuple, list))], default=0)
        n = last if num_row_partitions is None else int(num_row_partitions)
        parts, count = [], int(lengths[0]) if lengths else 0
        for d in lengths[1:n + 1]:
            if isinstance(d, (tuple, list)):
                parts.append(RowPartition.from_row_lengths(list(d), dtype=dtype))
            else:
                parts.append(RowPartition.from_uniform_row_length(int(d), nrows=count, dtype=dtype))
            count = int(parts[-1]._splits[-1])
        return cls(parts, [count] + [int(d) for d in lengths[n + 1:]] if lengths else [], dtype)

    @classmethod
    def from_tensor(cls, t, dtype=None):
        if isinstance(t, RaggedTensor):
            return t._tf_shape(dtype or _dtypes.int64)
        return cls([], list(_tensor(t).shape), dtype)

    row_partitions = property(lambda self: tuple(self._parts))
    dtype = property(lambda self: self._dtype)
    num_row_partitions = property(lambda self: len(self._parts))
    rank = property(lambda self: len(self._parts) + len(self._inner))

    @property
    def inner_shape(self):
        return Tensor(jnp.asarray(np.asarray(self._inner, self._dtype._np)))

    def _lengths(self):
        if not self._parts:
            return list(self._inner)
        out = [len(self._parts[0]._splits) - 1]
        for p in self._parts:
            out.append(p._uniform if p._uniform is not None else tuple(np.diff(p._splits).tolist()))
        return out + self._inner[1:]

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self._prefix(key)
        dims = self._lengths()
        d = dims[int(key)]
        if isinstance(d, tuple):
            raise ValueError(f"Index {key} is not uniform")
        return Tensor(jnp.asarray(np.asarray(d, self._dtype._np)))

    def _prefix(self, key):
        """``shape[:k]``: the outer ``k`` dimensions."""
        start, stop, step = key.indices(self.rank)
        if start != 0 or step != 1:
            raise ValueError("tapejax slices a DynamicRaggedShape from its first dimension: shape[:k].")
        n = len(self._parts)
        if stop > n:
            return DynamicRaggedShape(self._parts, self._inner[:stop - n], self._dtype)
        if stop == 0:
            return DynamicRaggedShape([], [], self._dtype)
        total = int(self._parts[stop - 2]._splits[-1]) if stop >= 2 else len(self._parts[0]._splits) - 1
        return DynamicRaggedShape(self._parts[:stop - 1], [total], self._dtype)

    def _tf_with_flat_values(self, make):
        """The RaggedTensor of this shape over ``make(inner_shape)`` (tf.zeros / tf.fill / tf.reshape)."""
        values = make(list(self._inner))
        for p in reversed(self._parts):
            values = RaggedTensor.from_row_splits(values, p._splits)
            values._uniform = p._uniform
        return values

    def __repr__(self):
        return f"<DynamicRaggedShape lengths={self._lengths()} num_row_partitions={len(self._parts)}>"


def _formatter(x):
    """TensorFlow's ragged printing: NumPy's layout with comma separators; empty rows as []."""
    if isinstance(x, np.ndarray):
        return np.array2string(x, separator=", ") if x.size else repr(x.tolist())
    return str(x)


def _nrows_of(values):
    return len(values._splits) - 1 if isinstance(values, RaggedTensor) else int(values.shape[0])


def _positive_axis(axis, ndims, axis_name="axis", ndims_name="rank(self)"):
    """TF's get_positive_axis: ``axis`` in ``[-ndims, ndims)`` made non-negative."""
    axis = int(axis)
    if ndims is not None and not -ndims <= axis < ndims:
        raise ValueError(f"{axis_name}={axis} out of bounds: expected {-ndims}<={axis_name}<{ndims}")
    return axis + ndims if axis < 0 else axis


def _merge_dims(value, outer_axis, inner_axis):
    """TF's ragged merge_dims of a RaggedTensor or Tensor (axes already positive)."""
    if outer_axis == inner_axis:
        return value
    while outer_axis == 0 and isinstance(value, RaggedTensor):
        value = value._values
        inner_axis -= 1
        if inner_axis == 0:
            return value
    if not isinstance(value, RaggedTensor):
        shape = [int(d) for d in value.shape]
        return _ops.reshape(value, shape[:outer_axis] + [-1] + shape[inner_axis + 1:])
    if outer_axis > 1:
        return value.with_values(_merge_dims(value._values, outer_axis - 1, inner_axis - 1))
    new_values, new_splits = value._values, value._splits
    for axis in builtins.range(outer_axis, inner_axis):
        if isinstance(new_values, RaggedTensor):
            new_splits = new_values._splits[new_splits]
            new_values = new_values._values
        else:
            split = inner_axis - axis + 1
            shape = [int(d) for d in new_values.shape]
            new_values = _ops.reshape(new_values, [-1] + shape[split:])
            new_splits = new_splits * int(np.prod(shape[1:split], dtype=np.int64))
            break
    return RaggedTensor.from_row_splits(new_values, new_splits)


def _take_values(values, idx):
    if isinstance(values, RaggedTensor):
        return values._take(idx)
    return _ops.gather(values, _index_tensor(idx))


# ---------------------------------------------------------------------- tf.ragged functions
def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=None):
    """A RaggedTensor from nested Python lists (``tf.ragged.constant``).

    Every scalar must sit at the same depth; by default each list level but the innermost
    values' is ragged (``ragged_rank`` = depth - 1). Text becomes a string ragged tensor.

    Example:
        >>> import tapejax as tf
        >>> rt = tf.ragged.constant([["Hi"], ["How", "are", "you"]])
        >>> rt.shape, rt.dtype
        (TensorShape([2, None]), tf.string)
    """
    depth = _depth(pylist)
    if depth is None:
        raise ValueError("all scalar values must have the same nesting depth")
    depth = depth[0]
    if inner_shape is not None:
        inner = len(inner_shape)
    else:
        inner = 0 if ragged_rank is None else max(0, depth - 1 - ragged_rank)
    rank = depth - 1 - inner if ragged_rank is None else ragged_rank
    if rank <= 0:
        return _ops.constant(pylist, dtype=dtype)
    partitions = []
    level = pylist
    for _ in builtins.range(rank):
        lengths = [len(r) for r in level]
        partitions.append(lengths)
        level = [e for r in level for e in r]
    if not level and dtype is None:
        dtype = _dtypes.float32
    values = _ops.constant(level, dtype=dtype) if level else _ops.zeros([0] + [0] * inner, dtype)
    if level and values.ndim != 1 + inner:
        raise ValueError(f"Ragged rows of the innermost {inner} dimensions must be uniform for "
                         f"ragged_rank={rank}: got values of shape {tuple(values.shape)}.")
    return RaggedTensor.from_nested_row_lengths(values, partitions)


def _depth(x):
    """(nesting depth of the scalars of a nested list, whether only empty lists fixed it), or None
    if scalars sit at different depths. An empty list fits any depth from its own."""
    if not isinstance(x, (list, tuple)):
        return 0, False
    children = [_depth(e) for e in x]
    if None in children:
        return None
    fixed = {d for d, flexible in children if not flexible}
    loose = max([d for d, flexible in children if flexible], default=0)
    if len(fixed) > 1 or (fixed and loose > min(fixed)):
        return None
    return (1 + fixed.pop(), False) if fixed else (1 + loose, True)


def map_flat_values(op, *args, **kwargs):
    """Applies ``op`` to the flat values of the ragged arguments (which must share their row
    partitions); the result has the same rows (``tf.ragged.map_flat_values``).

    Example:
        >>> import tapejax as tf
        >>> tf.ragged.map_flat_values(lambda x: x * 2 + 1, tf.ragged.constant([[1, 2], [3]]))
        <tf.RaggedTensor [[3, 5], [7]]>
    """
    found = []

    def flat(x):
        if isinstance(x, RaggedTensor):
            found.append(x)
            return x.flat_values
        if isinstance(x, (list, tuple)):
            return type(x)(flat(e) for e in x)
        if isinstance(x, dict):
            return {k: flat(v) for k, v in x.items()}
        return x

    args, kwargs = flat(list(args)), flat(kwargs)
    if not found:
        return op(*args, **kwargs)
    _check_same_rows(found)
    out = op(*args, **kwargs)
    return found[0].with_flat_values(out)


def _check_same_rows(rts):
    """TensorFlow's check that ragged operands have the same row partitions (its message)."""
    first = rts[0]._partitions()
    for rt in rts[1:]:
        p = rt._partitions()
        if len(p) != len(first):
            raise ValueError(f"Ragged operands of ragged ranks {len(first)} and {len(p)} do not broadcast in "
                             "tapejax: give them the same ragged rank (tf.RaggedTensor.from_tensor, ragged_rank=).")
        for a, b in zip(first, p):
            _check_splits(a, b)


def _check_splits(x, y):
    """Raises TensorFlow's ``assert_equal`` error when row splits ``x`` and ``y`` differ."""
    if len(x) != len(y):
        raise errors.InvalidArgumentError(None, None, (
            "Condition x == y did not hold.\nFirst 1 elements of x:\n"
            f"[{len(x) - 1}]\nFirst 1 elements of y:\n[{len(y) - 1}]"))
    diff = np.flatnonzero(x != y)
    if not diff.size:
        return
    k = diff[:3]
    raise errors.InvalidArgumentError(None, None, (
        f"Condition x == y did not hold.\nIndices of first {len(k)} different values:\n{k[:, None]}\n"
        f"Corresponding x values:\n{x[k]}\nCorresponding y values:\n{y[k]}\n"
        f"First 3 elements of x:\n{x[:3]}\nFirst 3 elements of y:\n{y[:3]}"))


def _positions(rt):
    """For each flat value of ``rt``: its index along the row dimension and every ragged dimension."""
    parts = rt._partitions()
    ids = np.arange(_nrows_of(rt.flat_values))
    pos = [None] * (len(parts) + 1)
    for level in builtins.reversed(builtins.range(len(parts))):
        splits = parts[level]
        row = np.repeat(np.arange(len(splits) - 1), np.diff(splits))[ids]
        pos[level + 1] = ids - splits[row]
        ids = row
    pos[0] = ids
    return pos


def _broadcast_dense(t, rt):
    """A dense operand at the flat values of ``rt`` (TensorFlow's ragged broadcasting): its shape,
    aligned right with ``rt``'s, has size 1 or ``rt``'s size in each dimension; in a ragged one,
    every row must have that length (else TensorFlow's row-splits error)."""
    parts = rt._partitions()
    k = len(parts)
    rank = k + 1 + rt.flat_values.ndim - 1
    if t.ndim > rank:
        raise ValueError(f"A dense operand of shape {tuple(t.shape)} has more dimensions than the RaggedTensor "
                         f"of shape {rt.shape}: tapejax broadcasts dense operands to the ragged shape only.")
    shape = [1] * (rank - t.ndim) + list(t.shape)
    pos = _positions(rt)
    for j in builtins.range(k + 1):
        d = shape[j]
        if d == 1:
            pos[j] = np.zeros_like(pos[j])
        elif j == 0 and d != _nrows_of(rt):
            raise errors.InvalidArgumentError(None, None, (
                f"Incompatible shapes: a dense operand of shape {tuple(t.shape)} does not broadcast to the "
                f"RaggedTensor of shape {rt.shape} ({d} rows against {_nrows_of(rt)})."))
        elif j > 0:
            splits = parts[j - 1]
            _check_splits(np.arange(len(splits), dtype=np.int64) * d, splits)
            if 1 in shape[:j] and _nrows_of(rt) != 1:
                # TensorFlow does not broadcast an outer dimension of 1 over rows a ragged
                # dimension follows, even when every row has the dense size.
                raise errors.InvalidArgumentError(None, None, (
                    "Last row partition does not match flat_values.\nCondition x == y did not hold.\n"
                    f"First 1 elements of x:\n[{int(np.prod(shape[:j + 1]))}]\nFirst 1 elements of y:\n"
                    f"[{int(splits[-1])}]"))
    index = _index_tensor(np.stack(pos, axis=1).reshape(-1, k + 1))
    return _ops.gather_nd(_ops.reshape(t, shape), index)


def range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=None):  # noqa: A001
    """Row ``i`` is ``tf.range(starts[i], limits[i], deltas[i])`` (``tf.ragged.range``).

    Example:
        >>> import tapejax as tf
        >>> tf.ragged.range([3, 0, 2])
        <tf.RaggedTensor [[0, 1, 2], [], [0, 1]]>
    """
    if limits is None:
        starts, limits = 0, starts
    s, l, d = np.broadcast_arrays(*(np.asarray(_tensor(v)) for v in (starts, limits, deltas)))
    rows = [np.arange(a, b, c) for a, b, c in zip(s.reshape(-1), l.reshape(-1), d.reshape(-1))]
    values = _ops.constant(np.concatenate(rows + [np.zeros(0)]).astype(np.result_type(s, l, d)), dtype=dtype)
    return RaggedTensor.from_row_lengths(values, [len(r) for r in rows])


def stack(values, axis=0, name=None):
    """Stacks tensors and ragged tensors along a new dimension ``axis`` (``tf.ragged.stack``):
    their sizes may differ, the stacked dimensions become ragged.

    Example:
        >>> import tapejax as tf
        >>> tf.ragged.stack([tf.constant([1, 2]), tf.constant([3])])
        <tf.RaggedTensor [[1, 2], [3]]>
        >>> t1 = tf.ragged.constant([[1, 2], [3, 4, 5]])
        >>> t2 = tf.ragged.constant([[6], [7, 8, 9]])
        >>> tf.ragged.stack([t1, t2], axis=1)
        <tf.RaggedTensor [[[1, 2], [6]],
         [[3, 4, 5], [7, 8, 9]]]>
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    return _stack_concat(list(values), axis, True)


def _stack_concat(parts, axis, stack_values):
    """TF's ``_ragged_stack_concat_helper``: ragged stack/concat of Tensors and RaggedTensors."""
    parts = [p if isinstance(p, RaggedTensor) else _tensor(p) for p in parts]
    if len(parts) == 1 and not stack_values:
        return parts[0]
    ndims = parts[0].ndim
    for p in parts[1:]:
        if p.ndim != ndims:
            raise ValueError(f"Shape {p.shape} must have rank {ndims}")
    out_ndims = ndims + 1 if stack_values else ndims
    axis = _positive_axis(axis, out_ndims)
    if stack_values and ndims == 1 and axis == 0:
        return RaggedTensor.from_row_lengths(_ops.concat(parts, axis=0), [int(p.shape[0]) for p in parts])
    if not any(isinstance(p, RaggedTensor) for p in parts) and axis in (out_ndims - 1, ndims - 1):
        return _ops.stack(parts, axis) if stack_values else _ops.concat(parts, axis)
    parts = [p if isinstance(p, RaggedTensor) else RaggedTensor.from_tensor(p) for p in parts]
    ragged_rank = max(max(p.ragged_rank for p in parts), 1)
    parts = [_increase_ragged_rank(p, ragged_rank) for p in parts]
    if axis == 0:
        return _stack_concat_axis_0(parts, stack_values)
    if axis == 1:
        return _stack_concat_axis_1(parts, stack_values)
    splits = parts[0]._splits
    for p in parts[1:]:
        if not np.array_equal(p._splits, splits):
            raise errors.InvalidArgumentError(None, None, "Inputs must have identical ragged splits\n"
                                              "Condition x == y did not hold.")
    return RaggedTensor.from_row_splits(_stack_concat([p._values for p in parts], axis - 1, stack_values), splits)


def _increase_ragged_rank(rt, ragged_rank):
    if ragged_rank > 0:
        if not isinstance(rt, RaggedTensor):
            rt = RaggedTensor.from_tensor(rt)
        if rt.ragged_rank < ragged_rank:
            rt = rt.with_values(_increase_ragged_rank(rt._values, ragged_rank - 1))
    return rt


def _stack_concat_axis_0(parts, stack_values):
    flat = _ops.concat([p.flat_values for p in parts], axis=0)
    nested = [p._partitions() for p in parts]
    splits = []
    for dim in builtins.range(parts[0].ragged_rank):
        pieces = [ns[dim] for ns in nested]
        offsets = np.cumsum([0] + [int(x[-1]) for x in pieces[:-1]])
        splits.append(np.concatenate([pieces[0]] + [x[1:] + o for x, o in zip(pieces[1:], offsets[1:])]))
    if stack_values:
        splits.insert(0, np.concatenate([[0], np.cumsum([_nrows_of(p) for p in parts])]))
    return RaggedTensor.from_nested_row_splits(flat, splits, validate=False)


def _stack_concat_axis_1(parts, stack_values):
    n = _nrows_of(parts[0])
    for i, p in enumerate(parts[1:]):
        if _nrows_of(p) != n:
            raise errors.InvalidArgumentError(None, None, f"Input tensors at index 0 (=x) and {i + 1} (=y) have "
                                              "incompatible shapes.\nCondition x == y did not hold.")
    k = len(parts)
    permuted = _stack_concat_axis_0(parts, False)._take(np.arange(n * k).reshape(k, n).T.reshape(-1))
    if stack_values:
        return RaggedTensor.from_row_splits(permuted, np.arange(0, n * k + 1, k))
    return RaggedTensor.from_row_splits(permuted._values, permuted._splits[::k])


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The segment (row) id of each value, from ``row_splits`` (``tf.ragged.row_splits_to_segment_ids``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.ragged.row_splits_to_segment_ids([0, 3, 3, 5, 6, 9]))
        tf.Tensor([0 0 0 2 2 3 4 4 4], shape=(9,), dtype=int64)
    """
    s = _host_index(splits).reshape(-1)
    if s.size == 0:
        raise ValueError("Invalid row_splits: []")
    ids = np.repeat(np.arange(len(s) - 1), np.diff(s))
    out = _index_tensor(ids)
    out_type = splits.dtype if out_type is None and isinstance(splits, _TensorBase) else out_type
    return out if out_type is None else _cast(out, out_type)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """The ``row_splits`` of sorted segment ids (``tf.ragged.segment_ids_to_row_splits``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.ragged.segment_ids_to_row_splits([0, 0, 0, 2, 2, 3, 4, 4, 4]))
        tf.Tensor([0 3 3 5 6 9], shape=(6,), dtype=int64)
    """
    ids = _host_index(segment_ids).reshape(-1)
    n = (int(ids.max()) + 1 if ids.size else 0) if num_segments is None else int(_host_index(num_segments))
    counts = np.bincount(ids, minlength=n)[:n] if n else np.zeros(0, np.int64)
    out = _index_tensor(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
    out_type = segment_ids.dtype if out_type is None and isinstance(segment_ids, _TensorBase) else out_type
    return out if out_type is None else _cast(out, out_type)


def boolean_mask(data, mask, name=None):
    """The values of ``data`` where ``mask`` is true, keeping the dimensions of the mask but its
    last (``tf.ragged.boolean_mask``): a 1-D mask keeps rows; a rank-k mask gives a RaggedTensor
    whose rows hold the kept entries of each row.

    Example:
        >>> import tapejax as tf
        >>> T, F = (True, False)
        >>> tf.ragged.boolean_mask(data=[[1, 2, 3], [4, 5, 6], [7, 8, 9]],
        ...                        mask=[[T, F, T], [F, F, F], [T, F, F]]).to_list()
        [[1, 3], [], [7]]
        >>> tf.ragged.boolean_mask(tf.ragged.constant([[1, 2, 3], [4], [5, 6]]),
        ...                        tf.ragged.constant([[F, F, T], [F], [T, T]])).to_list()
        [[3], [], [5, 6]]
    """
    data = data if isinstance(data, RaggedTensor) else _tensor(data)
    mask = mask if isinstance(mask, RaggedTensor) else _tensor(mask, _dtypes.bool)
    if mask.dtype != _dtypes.bool:
        raise ValueError(f"mask.dtype={mask.dtype} is not tf.bool")
    if mask.ndim is not None and data.ndim is not None and mask.ndim > data.ndim:
        raise ValueError("mask.shape.ndims must be less than or equal to data.shape.ndims")
    if mask.ndim == 1:
        keep = np.flatnonzero(np.asarray(mask))
        if isinstance(data, RaggedTensor):
            return data._take(keep)
        return _ops.gather(data, _index_tensor(keep))
    d = data if isinstance(data, RaggedTensor) else RaggedTensor.from_tensor(data)
    m = mask if isinstance(mask, RaggedTensor) else RaggedTensor.from_tensor(mask)
    if not np.array_equal(d._splits, m._splits):
        raise errors.InvalidArgumentError(None, None, "data and mask have incompatible row partitions "
                                          "(their row lengths differ).")
    if mask.ndim == 2:
        flags = np.asarray(m._values).reshape(-1)
        kept = boolean_mask(d._values, m._values)
        counts = np.bincount(m._rowids()[flags], minlength=len(m._splits) - 1)
        return RaggedTensor.from_row_lengths(kept, counts)
    return RaggedTensor.from_row_splits(boolean_mask(d._values, m._values), d._splits)


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """Row ``p`` holds the values of ``data`` whose partition is ``p``, in order
    (``tf.ragged.stack_dynamic_partitions``).

    Example:
        >>> import tapejax as tf
        >>> tf.ragged.stack_dynamic_partitions(['a', 'b', 'c', 'd', 'e'], [3, 0, 2, 2, 3], 5)
        <tf.RaggedTensor [[b'b'], [], [b'c', b'd'], [b'a', b'e'], []]>
    """
    n = int(_host_index(num_partitions))
    parts = _host_index(partitions).reshape(-1)
    if parts.size and (parts.min() < 0 or parts.max() >= n):
        raise errors.InvalidArgumentError(None, None, f"partitions must be in the range [0, {n}): got "
                                          f"{parts.tolist()}.")
    order = np.argsort(parts, kind="stable")
    values = data if isinstance(data, RaggedTensor) else _tensor(data)
    return RaggedTensor.from_row_lengths(_take_values(values, order), np.bincount(parts, minlength=n))


# ---------------------------------------------------------------------- ops of the table on ragged tensors
_ELEMENTWISE = frozenset(getattr(_ops, n) for n in (
    "negative abs sign exp expm1 log log1p sqrt rsqrt square reciprocal floor ceil round sin cos tan asin "
    "acos atan sinh cosh tanh asinh acosh atanh sigmoid softplus softsign log_sigmoid erf erfc lgamma digamma "
    "is_nan is_inf is_finite logical_not identity relu relu6 elu selu silu gelu add subtract "
    "multiply truediv floordiv floormod pow atan2 squared_difference divide_no_nan multiply_no_nan xlogy "
    "maximum minimum equal not_equal less less_equal greater greater_equal logical_and logical_or "
    "logical_xor bitwise_and bitwise_or bitwise_xor invert select clip_by_value").split()) | {_cast, _leaky_relu}


def _segment_fn(data, ids, count, kind, n, mean_dtype):
    if kind == "sum":
        return jax.ops.segment_sum(data, ids, n)
    if kind == "prod":
        return jax.ops.segment_prod(data, ids, n)
    if kind == "mean":
        # ``count`` comes with the result's shape: XLA rewrites a division by a broadcast into a
        # multiplication by its reciprocal, one ulp off TensorFlow's quotient.
        total = jax.ops.segment_sum(data.astype(mean_dtype), ids, n)
        return total / count.astype(mean_dtype)
    if kind == "any":
        return jax.ops.segment_sum(data.astype(np.int32), ids, n) > 0
    if kind == "all":
        return jax.ops.segment_sum(1 - data.astype(np.int32), ids, n) == 0
    f = jax.ops.segment_max if kind == "max" else jax.ops.segment_min
    r = f(data, ids, n)
    if data.dtype.kind == "f":  # TensorFlow fills empty rows with the lowest / highest finite value
        lim = jnp.finfo(data.dtype).min if kind == "max" else jnp.finfo(data.dtype).max
        empty = count == 0
        r = jnp.where(empty, lim, r)
    return r


_segment = defop(_segment_fn, name="ragged_reduce", static=("kind", "n", "mean_dtype"))

_REDUCTIONS = {_ops.reduce_sum.op: "sum", _ops.reduce_mean.op: "mean", _ops.reduce_max.op: "max",
               _ops.reduce_min.op: "min", _ops.reduce_prod.op: "prod", _ops.reduce_any.op: "any",
               _ops.reduce_all.op: "all"}


def _reduce(op, rt, axis=None, keepdims=False):
    if axis is None:
        return op(rt.flat_values, keepdims=keepdims)
    axis = axis[0] if isinstance(axis, (list, tuple)) and len(axis) == 1 else axis
    if not isinstance(axis, (int, np.integer)):
        raise ValueError(f"tapejax reduces a RaggedTensor along one axis at a time, got axis={axis!r}.")
    ndim = rt.ndim
    axis = int(axis) + ndim if axis < 0 else int(axis)
    if rt.ragged_rank != 1 or axis not in (0, 1):
        raise ValueError(f"tapejax reduces ragged tensors with one ragged dimension along axis 0 or 1; got "
                         f"ragged_rank={rt.ragged_rank}, axis={axis}. Call .to_tensor() first.")
    if axis == 1:
        ids, n = rt._rowids(), len(rt._splits) - 1
    else:
        ids = np.arange(len(rt._rowids())) - rt._splits[:-1][rt._rowids()]
        n = int(rt._lengths().max()) if rt._lengths().size else 0
    values = rt._values
    count = np.bincount(ids, minlength=n).astype(np.int32)
    count = np.broadcast_to(count.reshape((n,) + (1,) * (values.ndim - 1)), (n,) + tuple(values.shape[1:]))
    kind = _REDUCTIONS[op]
    mean_dtype = None
    if kind == "mean":
        mean_dtype = np.dtype(values.dtype._np if values.dtype.is_floating else np.float64)
    out = _segment(values, Tensor(jnp.asarray(ids.astype(np.int32))), Tensor(jnp.asarray(count)),
                   kind=kind, n=n, mean_dtype=mean_dtype)
    return _ops.expand_dims(out, axis) if keepdims else out


def _as_ragged(x, like):
    if isinstance(x, RaggedTensor):
        return x
    return RaggedTensor.from_tensor(_tensor(x, like.dtype))


def _concat_rows(parts):
    """Values of the rows of ``parts`` one after another (axis 0)."""
    if all(isinstance(p, RaggedTensor) for p in parts):
        values = _concat_rows([p._values for p in parts])
        return RaggedTensor.from_row_lengths(values, np.concatenate([p._lengths() for p in parts]))
    return _ops.concat(parts, axis=0)


def _concat(parts, axis):
    rts = [p for p in parts if isinstance(p, RaggedTensor)]
    parts = [_as_ragged(p, rts[0]) for p in parts]
    ndim = parts[0].ndim
    axis = axis + ndim if axis < 0 else axis
    if axis == 0:
        return _concat_rows(parts)
    if axis != 1 or any(p.ragged_rank != parts[0].ragged_rank for p in parts):
        raise ValueError(f"tapejax concatenates ragged tensors of one ragged rank along axis 0 or 1, got axis={axis}.")
    n = {len(p._splits) - 1 for p in parts}
    if len(n) > 1:
        raise errors.InvalidArgumentError(None, None, "Input tensors at index 0 and 1 have incompatible shapes: "
                                          f"their numbers of rows differ ({sorted(n)}).")
    offsets = np.cumsum([0] + [_nrows_of(p._values) for p in parts])
    idx, lengths = [], []
    for i in builtins.range(n.pop()):
        row = [np.arange(p._splits[i], p._splits[i + 1]) + o for p, o in zip(parts, offsets)]
        idx.extend(row)
        lengths.append(sum(len(r) for r in row))
    values = _take_values(_concat_rows([p._values for p in parts]), np.concatenate(idx + [np.zeros(0, np.int64)]))
    return RaggedTensor.from_row_lengths(values, lengths)


def _tile(rt, multiples):
    multiples = [int(m) for m in multiples]
    if rt.ragged_rank != 1 or len(multiples) != rt.ndim or rt.ndim != 2:
        raise ValueError("tapejax tiles 2-D ragged tensors (multiples of length 2).")
    rows = [np.tile(np.arange(s, e), multiples[1]) for s, e in zip(rt._splits[:-1], rt._splits[1:])] * multiples[0]
    values = _take_values(rt._values, np.concatenate(rows + [np.zeros(0, np.int64)]))
    return RaggedTensor.from_row_lengths(values, [len(r) for r in rows])


def _reverse(rt, axes):
    """``tf.reverse`` of a RaggedTensor: the row order (axis 0), each row (a ragged axis), or the
    values' own dimensions."""
    for a in sorted({int(a) + rt.ndim if a < 0 else int(a) for a in axes}):
        if not 0 <= a < rt.ndim:
            raise errors.InvalidArgumentError(None, None, f"'axis'[0] = {a} is out of valid range [0, {rt.ndim}).")
        rt = _reverse_axis(rt, a)
    return rt


def _reverse_axis(rt, a):
    if a == 0:
        return rt._take(np.arange(_nrows_of(rt))[::-1])
    if a == 1:
        idx = np.concatenate([np.arange(s, e)[::-1] for s, e in zip(rt._splits[:-1], rt._splits[1:])]
                             + [np.zeros(0, np.int64)])
        return RaggedTensor(_take_values(rt._values, idx), rt._splits, internal=True,
                            uniform_row_length=rt._uniform)
    values = rt._values
    values = _reverse_axis(values, a - 1) if isinstance(values, RaggedTensor) else _ops.reverse(values, [a - 1])
    return RaggedTensor(values, rt._splits, internal=True, uniform_row_length=rt._uniform)


def _elementwise(op, args, static):
    rts = [a for a in args if isinstance(a, RaggedTensor)]
    n = max(_nrows_of(rt) for rt in rts)
    if n != 1 and any(_nrows_of(rt) == 1 for rt in rts):   # a one-row operand repeats its row (TF)
        args = [a._take(np.zeros(n, np.int64)) if isinstance(a, RaggedTensor) and _nrows_of(a) == 1 else a
                for a in args]
        rts = [a for a in args if isinstance(a, RaggedTensor)]
    _check_same_rows(rts)
    flat = []
    for a in args:
        if isinstance(a, RaggedTensor):
            flat.append(a.flat_values)
            continue
        t = a if isinstance(a, _TensorBase) else _tensor(a)
        flat.append(t if t.ndim == 0 else _broadcast_dense(t, rts[0]))
    return rts[0].with_flat_values(op(*flat, **static))


def _dispatch(op, args, static):
    """The op-table ops TensorFlow's ragged dispatch covers, for RaggedTensor arguments."""
    if not any(isinstance(a, RaggedTensor) for a in args):
        return NotImplemented
    if op in _ELEMENTWISE:
        return _elementwise(op, args, static)
    if op in _REDUCTIONS:
        return _reduce(op, args[0], **static)
    if op is _concat_op:
        return _concat(list(args), static["axis"])
    if op is _tile_op:
        return _tile(args[0], static["multiples"])
    if op is _reverse_op:
        return _reverse(args[0], static["axis"])
    if op is _ops.identity:
        return args[0]
    raise TypeError(f"{op.name} does not take a tf.RaggedTensor in tapejax. Apply it to the values with "
                    "tf.ragged.map_flat_values(op, rt), or pad first with rt.to_tensor().")


_engine.dispatchers.insert(0, _dispatch)


def _binary(op, reverse=False):
    if reverse:
        return lambda self, other: _dispatch(op, (other, self), {})
    return lambda self, other: _dispatch(op, (self, other), {})


for _name, _op in [("add", _ops.add), ("sub", _ops.subtract), ("mul", _ops.multiply), ("truediv", _ops.truediv),
                   ("floordiv", _ops.floordiv), ("mod", _ops.floormod), ("pow", _ops.pow),
                   ("and", _ops.logical_and), ("or", _ops.logical_or), ("xor", _ops.logical_xor)]:
    setattr(RaggedTensor, f"__{_name}__", _binary(_op))
    setattr(RaggedTensor, f"__r{_name}__", _binary(_op, reverse=True))
for _name, _op in [("lt", _ops.less), ("le", _ops.less_equal), ("gt", _ops.greater), ("ge", _ops.greater_equal),
                   ("eq", _ops.equal), ("ne", _ops.not_equal)]:
    setattr(RaggedTensor, f"__{_name}__", _binary(_op))
RaggedTensor.__neg__ = lambda self: _dispatch(_ops.negative, (self,), {})
RaggedTensor.__abs__ = lambda self: _dispatch(_ops.abs, (self,), {})
RaggedTensor.__invert__ = lambda self: _dispatch(_ops.logical_not, (self,), {})




# A RaggedTensor is a JAX pytree: its values are the leaf, its row partition static data, so
# jax.tree functions and a compiled tf.function see the values (a new partition traces again).
jax.tree_util.register_pytree_node(
    RaggedTensor, lambda rt: ((rt._values,), (tuple(rt._splits.tolist()), rt._uniform)),
    lambda aux, children: RaggedTensor(children[0], np.asarray(aux[0], np.int64), internal=True,
                                       uniform_row_length=aux[1]))

__all__ = ["RaggedTensor", "constant", "map_flat_values", "range", "stack", "boolean_mask",
           "row_splits_to_segment_ids", "segment_ids_to_row_splits", "stack_dynamic_partitions"]
