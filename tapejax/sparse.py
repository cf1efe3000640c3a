"""tf.SparseTensor and tf.sparse: tensors stored as the coordinates and values of their entries.

A SparseTensor is ``indices`` (int64 ``[N, rank]``), ``values`` (``[N]``) and ``dense_shape``
(int64 ``[rank]``), as in TensorFlow. The coordinates are concrete (NumPy on the host): sparse
tensors are eager values. ``values`` is a tapejax Tensor, so ``to_dense``, ``reduce_sum``,
``add`` and ``sparse_dense_matmul`` (a ``jax.experimental.sparse.BCOO`` product) are recorded
ops, differentiable w.r.t. the values and the dense operand.

Example:
    >>> import tapejax as tf
    >>> st = tf.sparse.SparseTensor(indices=[[0, 1], [1, 0]], values=[2.0, 3.0], dense_shape=[2, 2])
    >>> tf.sparse.to_dense(st).numpy().tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    >>> tf.sparse.sparse_dense_matmul(st, tf.ones([2, 1])).numpy().tolist()
    [[2.0], [3.0]]
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from ._core import dtypes as _dtypes
from . import ops as _ops, errors as errors
from ._core.tensor import Tensor, TensorShape, _TensorBase, _Ref
from .ops.normalize import INDEX as _INDEX
from .extend import defop


def _tensor(x, dtype=None):
    if type(x) is Tensor and (dtype is None or x.dtype == dtype):
        return x
    return _ops.convert_to_tensor(x, dtype=dtype)


def _host_index(x):
    """Coordinates, shapes or row partitions as host int64 NumPy (they are concrete)."""
    a = np.asarray(x._value if isinstance(x, _TensorBase) else x)
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"Indices, shapes and row partitions must be integers, got dtype {a.dtype}.")
    return a.astype(np.int64)


def _index_tensor(a):
    return Tensor(jnp.asarray(np.asarray(a, np.int64).astype(_INDEX)))


class SparseTensor:
    """A sparse tensor: ``values[i]`` sits at ``indices[i]`` of a ``dense_shape`` tensor that is
    zero elsewhere (``tf.sparse.SparseTensor``, also ``tf.SparseTensor``).

    Args:
        indices: int ``[N, rank]``, the coordinates of the stored entries.
        values: ``[N]``, their values (numbers or strings).
        dense_shape: int ``[rank]``, the shape of the dense tensor.

    Example:
        >>> import tapejax as tf
        >>> st = tf.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
        >>> st.shape, st.dtype
        (TensorShape([3, 10]), tf.int32)
    """

    __slots__ = ("_indices", "_values", "_shape", "__weakref__")
    _tf_composite = True  # tf.is_tensor is True, as for TensorFlow's composite tensors

    def __init__(self, indices, values, dense_shape):
        idx = _host_index(indices)
        shape = _host_index(dense_shape).reshape(-1)
        idx = idx.reshape(-1, len(shape)) if idx.size == 0 else idx
        values = _tensor(values)
        if idx.ndim != 2:
            raise ValueError(f"indices must be a matrix [N, rank], got shape {idx.shape}.")
        if values.ndim != 1 or idx.shape[0] != values.shape[0]:
            raise ValueError(f"Dimensions {idx.shape[0]} and {values.shape[0] if values.ndim else 1} are not "
                             "compatible: indices and values need one row per stored entry.")
        if idx.shape[1] != len(shape):
            raise ValueError(f"Dimensions {idx.shape[1]} and {len(shape)} are not compatible: each index needs "
                             "one coordinate per dimension of dense_shape.")
        self._indices = idx
        self._values = values
        self._shape = shape

    @classmethod
    def from_value(cls, sparse_tensor_value):
        return cls(sparse_tensor_value.indices, sparse_tensor_value.values, sparse_tensor_value.dense_shape)

    @property
    def indices(self):
        """The coordinates of the stored entries (int64 ``[N, rank]``)."""
        return _index_tensor(self._indices)

    @property
    def values(self):
        """The stored values (``[N]``)."""
        return self._values

    @property
    def dense_shape(self):
        """The shape of the dense tensor (int64 ``[rank]``)."""
        return _index_tensor(self._shape)

    @property
    def shape(self):
        return TensorShape(self._shape.tolist())

    def get_shape(self):
        return self.shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def ndim(self):
        return len(self._shape)

    def set_shape(self, shape):
        """Checks ``shape`` against the (known) dense shape: TF's ValueError when they differ.

        Example:
            >>> import tapejax as tf
            >>> st = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
            >>> st.set_shape([3, None])
        """
        shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        if shape.rank is None:
            return
        have = [int(d) for d in self._shape]
        if len(have) != shape.rank or any(d is not None and d != h for d, h in zip(shape.as_list(), have)):
            raise ValueError(f"Shapes {TensorShape(have)} and {shape} are not compatible")

    def with_values(self, new_values):
        """The same coordinates with new values."""
        return SparseTensor(self._indices, new_values, self._shape)

    def __repr__(self):
        return f"SparseTensor(indices={self.indices!s}, values={self.values!s}, dense_shape={self.dense_shape!s})"

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        raise TypeError("A tf.SparseTensor does not convert to a dense array implicitly: use "
                        "tf.sparse.to_dense(sp) (or sp.values for the stored values).")

    def __hash__(self):
        raise TypeError("SparseTensor is unhashable. Instead, use tensor.ref() as the key.")

    def ref(self):
        return _Ref(self)

    def _dense_at_indices(self, other):
        """``other`` (a scalar or a tensor broadcastable to the dense shape) at the stored coordinates."""
        t = _tensor(other, self.dtype)
        if t.ndim == 0:
            return t
        full = _ops.broadcast_to(t, self._shape.tolist())
        return _ops.gather_nd(full, _index_tensor(self._indices))

    def __mul__(self, other):
        return self.with_values(self._values * self._dense_at_indices(other))

    def __truediv__(self, other):
        return self.with_values(self._values / self._dense_at_indices(other))

    __rmul__ = __mul__


class SparseTensorSpec:
    """The type of a SparseTensor: its dense shape (``None`` for unknown sizes) and dtype
    (``tf.SparseTensorSpec``), as ``tf.data`` reports it in ``element_spec``.

    Example:
        >>> import tapejax as tf
        >>> tf.SparseTensorSpec([None, 4], tf.int32)
        SparseTensorSpec(TensorShape([None, 4]), tf.int32)
    """

    __slots__ = ("_shape", "_dtype")
    value_type = SparseTensor

    def __init__(self, shape=None, dtype=_dtypes.float32):
        self._shape = None if shape is None else TensorShape(shape)
        self._dtype = _dtypes.as_dtype(dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)

    @classmethod
    def from_value(cls, value):
        return cls(value.shape, value.dtype)

    def is_compatible_with(self, other):
        """Whether ``other`` (a spec or a SparseTensor) has this dtype and a shape that fits."""
        if isinstance(other, SparseTensor):
            other = SparseTensorSpec.from_value(other)
        if not isinstance(other, SparseTensorSpec) or other.dtype != self.dtype:
            return False
        return self.shape is None or other.shape is None or self.shape.is_compatible_with(other.shape)

    def _key(self):
        return None if self._shape is None else tuple(self._shape), self._dtype.name

    def __eq__(self, other):
        return isinstance(other, SparseTensorSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        shape = "TensorShape(None)" if self._shape is None else repr(self._shape)
        return f"SparseTensorSpec({shape}, tf.{self._dtype.name})"


# ---------------------------------------------------------------------- ops
def _scatter_fn(values, default, indices, shape):
    return jnp.full(shape, default, values.dtype).at[tuple(jnp.moveaxis(indices, -1, 0))].set(values)


def _scatter_host(values, default, indices, shape):
    out = np.full(shape, default[()], values.dtype)
    out[tuple(np.moveaxis(indices, -1, 0))] = values
    return out


_scatter = defop(_scatter_fn, name="sparse_to_dense", static=("shape",))
_scatter.host = _scatter_host


def _spmm_fn(values, indices, b, shape, adjoint_a, adjoint_b, sparse_right):
    a = jsparse.BCOO((jnp.conj(values) if adjoint_a else values, indices), shape=shape)
    a = a.T if adjoint_a else a
    b = jnp.conj(jnp.swapaxes(b, -1, -2)) if adjoint_b else b
    if sparse_right:  # b @ a == (a^T @ b^T)^T
        return (a.T @ b.T).T
    return a @ b


_spmm = defop(_spmm_fn, name="sparse_dense_matmul", static=("shape", "adjoint_a", "adjoint_b", "sparse_right"))


def _segment_fn(values, ids, count, n, kind):
    if kind == "sum":
        return jax.ops.segment_sum(values, ids, n)
    r = jax.ops.segment_max(values, ids, n)
    return jnp.where(count > 0, r, jnp.zeros_like(r))  # TensorFlow: an empty slice reduces to 0


_segment = defop(_segment_fn, name="sparse_reduce", static=("n", "kind"))


def _order(indices, shape):
    """Row-major linear position of each coordinate."""
    return np.ravel_multi_index(tuple(indices.T), tuple(shape)) if len(indices) else np.zeros(0, np.int64)


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of a SparseTensor: its values at their coordinates, ``default_value``
    (zero, or the empty string) elsewhere (``tf.sparse.to_dense``). Differentiable in the values.

    Raises:
        tf.errors.InvalidArgumentError: with ``validate_indices``, an index out of bounds,
            repeated, or out of row-major order (``tf.sparse.reorder`` sorts them).

    Example:
        >>> import tapejax as tf
        >>> st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[2, 3])
        >>> tf.sparse.to_dense(st).numpy().tolist()
        [[1, 0, 0], [0, 0, 2]]
    """
    sp = _sparse(sp_input)
    idx, shape = sp._indices, sp._shape
    if validate_indices:
        for i, row in enumerate(idx):
            if np.any(row < 0) or np.any(row >= shape):
                raise errors.InvalidArgumentError(None, None, (
                    f"indices[{i}] = [{','.join(map(str, row))}] is out of bounds: need 0 <= index < "
                    f"[{','.join(map(str, shape))}]"))
        order = _order(idx, shape)
        for i in np.flatnonzero(np.diff(order) <= 0):
            what = "is repeated" if order[i + 1] == order[i] else (
                "is out of order. Many sparse ops require sorted indices.\n"
                "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n")
            raise errors.InvalidArgumentError(None, None, f"indices[{i + 1}] = [{','.join(map(str, idx[i + 1]))}] {what}")
    if default_value is None:
        default_value = b"" if sp.dtype == _dtypes.string else 0
    return _scatter(sp.values, _tensor(default_value, sp.dtype), _index_tensor(idx), shape=tuple(shape.tolist()))


def from_dense(tensor, name=None):
    """The SparseTensor of the non-zero (non-empty string) entries of a dense tensor
    (``tf.sparse.from_dense``). Differentiable in the kept values.

    Example:
        >>> import tapejax as tf
        >>> tf.sparse.from_dense([[1, 0], [0, 2]]).indices.numpy().tolist()
        [[0, 0], [1, 1]]
    """
    t = _tensor(tensor)
    a = np.asarray(t)
    keep = a != (b"" if t.dtype == _dtypes.string else 0)
    idx = np.argwhere(keep).astype(np.int64)
    values = _ops.gather_nd(t, _index_tensor(idx))
    return SparseTensor(idx, values, a.shape)


def _sparse(x):
    if not isinstance(x, SparseTensor):
        raise TypeError(f"Expected a tf.SparseTensor, got {type(x).__name__}. Make one with tf.sparse.from_dense.")
    return x


def reorder(sp_input, name=None):
    """The same SparseTensor with its entries in row-major order (``tf.sparse.reorder``).

    Example:
        >>> import tapejax as tf
        >>> st = tf.sparse.SparseTensor(indices=[[1, 0], [0, 1]], values=[1, 2], dense_shape=[2, 2])
        >>> tf.sparse.reorder(st).indices.numpy().tolist()
        [[0, 1], [1, 0]]
    """
    sp = _sparse(sp_input)
    perm = np.argsort(_order(sp._indices, sp._shape), kind="stable")
    return SparseTensor(sp._indices[perm], _ops.gather(sp.values, _index_tensor(perm)), sp._shape)


def add(a, b, threshold=0, name=None):
    """Adds two SparseTensors (a SparseTensor of the union of their entries, in row-major order;
    sums below ``threshold`` in magnitude are dropped), or a SparseTensor and a dense tensor
    (a dense tensor) (``tf.sparse.add``). Differentiable in the values.

    Like TensorFlow's, it expects entries in row-major order (``tf.sparse.reorder``): for
    unordered inputs TensorFlow's merge keeps their order, this sorts them.

    Example:
        >>> import tapejax as tf
        >>> a = tf.sparse.SparseTensor(indices=[[0, 2], [3, 4]], values=[31, 2], dense_shape=[4, 10])
        >>> b = tf.sparse.SparseTensor(indices=[[0, 2], [3, 0]], values=[56, 38], dense_shape=[4, 10])
        >>> tf.sparse.add(a, b).values.numpy().tolist()
        [87, 38, 2]
    """
    if not isinstance(a, SparseTensor):
        a, b = b, a
    sp = _sparse(a)
    if not isinstance(b, SparseTensor):
        return _ops.add(to_dense(sp, validate_indices=False), _tensor(b, sp.dtype))
    if not np.array_equal(sp._shape, b._shape):
        raise errors.InvalidArgumentError(None, None, f"Operands do not have the same ranks or shapes: "
                                          f"{sp._shape.tolist()} and {b._shape.tolist()}.")
    both = np.concatenate([sp._indices, b._indices])
    pos, first, inverse = np.unique(_order(both, sp._shape), return_index=True, return_inverse=True)
    values = _ops.concat([sp.values, _tensor(b.values, sp.dtype)], axis=0)
    count = np.bincount(inverse, minlength=len(pos))
    summed = _segment(values, _index_tensor(inverse), Tensor(jnp.asarray(count)), n=len(pos), kind="sum")
    out = SparseTensor(both[first], summed, sp._shape)
    if threshold:
        keep = np.flatnonzero(np.abs(np.asarray(summed)) >= threshold)
        out = SparseTensor(both[first][keep], _ops.gather(summed, _index_tensor(keep)), sp._shape)
    return out


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """``sp_a @ b`` with one operand sparse, as a dense tensor (``tf.sparse.sparse_dense_matmul``):
    a ``jax.experimental.sparse.BCOO`` product, differentiable w.r.t. the sparse values and the
    dense operand.

    Example:
        >>> import tapejax as tf
        >>> st = tf.sparse.SparseTensor(indices=[[0, 1], [1, 0], [1, 1]], values=[13, 15, 17], dense_shape=[2, 2])
        >>> tf.sparse.sparse_dense_matmul(st, tf.constant([[4], [6]])).numpy().tolist()
        [[78], [162]]
    """
    sparse_right = not isinstance(sp_a, SparseTensor)
    sp, dense = (_sparse(b), sp_a) if sparse_right else (sp_a, b)
    if sparse_right:  # adjoint_a / adjoint_b still name the operands by position
        adjoint_a, adjoint_b = adjoint_b, adjoint_a
    dense = _tensor(dense, sp.dtype)
    return _spmm(sp.values, _index_tensor(sp._indices), dense, shape=tuple(sp._shape.tolist()),
                 adjoint_a=bool(adjoint_a), adjoint_b=bool(adjoint_b), sparse_right=sparse_right)


def _reduce(sp, axis, keepdims, output_is_sparse, kind):
    rank = len(sp._shape)
    if axis is None:
        axes = list(range(rank))
    else:
        axes = sorted({int(a) % rank for a in np.atleast_1d(np.asarray(axis))})
    kept = [d for d in range(rank) if d not in axes]
    out_shape = sp._shape[kept]
    ids = _order(sp._indices[:, kept], out_shape) if kept else np.zeros(len(sp._indices), np.int64)
    n = int(np.prod(out_shape, dtype=np.int64))
    count = np.bincount(ids, minlength=n)
    out = _segment(sp.values, _index_tensor(ids), Tensor(jnp.asarray(count)), n=n, kind=kind)
    if output_is_sparse:
        present = np.flatnonzero(count)
        coords = np.stack(np.unravel_index(present, tuple(out_shape)), axis=1) if kept else np.zeros((len(present), 0))
        return SparseTensor(coords, _ops.gather(out, _index_tensor(present)), out_shape)
    out = _ops.reshape(out, out_shape.tolist())
    if keepdims:
        out = _ops.reshape(out, [1 if d in axes else int(s) for d, s in enumerate(sp._shape)])
    return out


def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """Sums the entries of a SparseTensor over ``axis`` (all by default): a dense tensor, or a
    SparseTensor of the non-empty sums with ``output_is_sparse`` (``tf.sparse.reduce_sum``).

    Example:
        >>> import tapejax as tf
        >>> st = tf.sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]])
        >>> tf.sparse.reduce_sum(st, axis=1).numpy().tolist()
        [9, 0, 3]
    """
    return _reduce(_sparse(sp_input), axis, keepdims, output_is_sparse, "sum")


def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The largest stored entry over ``axis`` (missing entries do not count; a slice with none
    gives 0) (``tf.sparse.reduce_max``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.sparse.reduce_max(tf.sparse.from_dense([-5, 0, -3])).numpy())
        -3
    """
    return _reduce(_sparse(sp_input), axis, keepdims, output_is_sparse, "max")


def map_values(op, *args, **kwargs):
    """Applies ``op`` to the values of the SparseTensor arguments (which must share their indices)
    (``tf.sparse.map_values``).

    Example:
        >>> import tapejax as tf
        >>> st = tf.sparse.from_dense([[1, 0], [0, 2]])
        >>> tf.sparse.map_values(tf.add, st, 5).values.numpy().tolist()
        [6, 7]
    """
    found = [a for a in list(args) + list(kwargs.values()) if isinstance(a, SparseTensor)]
    if not found:
        raise ValueError("tf.sparse.map_values needs at least one SparseTensor argument.")
    for s in found[1:]:
        if not (np.array_equal(s._indices, found[0]._indices) and np.array_equal(s._shape, found[0]._shape)):
            raise errors.InvalidArgumentError(None, None, "map_values: SparseTensors must have the same indices "
                                              "and dense_shape.")
    unwrap = lambda a: a.values if isinstance(a, SparseTensor) else a  # noqa: E731
    out = op(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    return found[0].with_values(out)


def transpose(sp_input, perm=None, name=None):
    """Permutes the dimensions of a SparseTensor (reverses them by default), entries reordered
    (``tf.sparse.transpose``)."""
    sp = _sparse(sp_input)
    perm = list(range(len(sp._shape)))[::-1] if perm is None else [int(p) for p in np.asarray(perm)]
    return reorder(SparseTensor(sp._indices[:, perm], sp.values, sp._shape[perm]))


def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None):
    """Concatenates SparseTensors along ``axis``, entries reordered (``tf.sparse.concat``).

    With ``expand_nonconcat_dims`` the other dimensions grow to the largest input's."""
    sps = [_sparse(s) for s in sp_inputs]
    rank = len(sps[0]._shape)
    axis = int(axis) % rank
    shapes = np.stack([s._shape for s in sps])
    others = [d for d in range(rank) if d != axis]
    if not expand_nonconcat_dims and np.any(shapes[:, others] != shapes[0, others]):
        raise errors.InvalidArgumentError(None, None, "Input shapes must match in the non-concatenated dimensions: "
                                          f"got {shapes.tolist()}. Pass expand_nonconcat_dims=True to grow them.")
    offsets = np.concatenate([[0], np.cumsum(shapes[:, axis])])
    idx = []
    for s, o in zip(sps, offsets):
        i = s._indices.copy()
        i[:, axis] += o
        idx.append(i)
    shape = shapes.max(axis=0)
    shape[axis] = offsets[-1]
    values = _ops.concat([s.values for s in sps], axis=0)
    return reorder(SparseTensor(np.concatenate(idx), values, shape))


def slice(sp_input, start, size, name=None):  # noqa: A001
    """The entries inside the box ``[start, start + size)``, re-based to ``start``
    (``tf.sparse.slice``)."""
    sp = _sparse(sp_input)
    start, size = _host_index(start), _host_index(size)
    stop = np.minimum(start + size, sp._shape)
    keep = np.flatnonzero(np.all((sp._indices >= start) & (sp._indices < stop), axis=1))
    return SparseTensor(sp._indices[keep] - start, _ops.gather(sp.values, _index_tensor(keep)),
                        np.maximum(stop - start, 0))


def _elementwise_union(a, b, op):
    """``op`` of two SparseTensors over the union of their entries (an absent one is 0), in
    row-major order: TF's SparseSparseMaximum / SparseSparseMinimum."""
    a, b = _sparse(a), _sparse(b)
    if len(a._shape) != len(b._shape):
        raise errors.InvalidArgumentError(None, None, "Operands do not have the same ranks; got shapes: "
                                          f"{' '.join(map(str, a._shape))} and {' '.join(map(str, b._shape))}")
    if not np.array_equal(a._shape, b._shape):
        raise errors.InvalidArgumentError(None, None, "Operands' shapes do not match: got "
                                          f"{' '.join(map(str, a._shape))} and {' '.join(map(str, b._shape))}")
    pa, pb = _order(a._indices, a._shape), _order(b._indices, b._shape)
    pos, first = np.unique(np.concatenate([pa, pb]), return_index=True)
    both = np.concatenate([a._indices, b._indices]).reshape(-1, len(a._shape))

    def aligned(sp, p):   # sp's value at each union position, 0 where it has none
        where = {int(x): i for i, x in enumerate(p)}
        idx = np.asarray([where.get(int(x), len(p)) for x in pos], np.int64)
        ext = _ops.concat([sp.values, _ops.zeros([1], sp.dtype)], axis=0)
        return _ops.gather(ext, _index_tensor(idx))
    return SparseTensor(both[first], op(aligned(a, pa), aligned(b, pb)), a._shape)


def maximum(sp_a, sp_b, name=None):
    """The element-wise maximum of two SparseTensors of one shape, over the union of their
    entries (an absent entry counts as 0) (``tf.sparse.maximum``).

    Example:
        >>> import tapejax as tf
        >>> sp_zero = tf.sparse.SparseTensor([[0]], [0], [7])
        >>> sp_one = tf.sparse.SparseTensor([[1]], [1], [7])
        >>> res = tf.sparse.maximum(sp_zero, sp_one)
        >>> res.indices.numpy().tolist(), res.values.numpy().tolist()
        ([[0], [1]], [0, 1])
    """
    return _elementwise_union(sp_a, sp_b, _ops.maximum)


def minimum(sp_a, sp_b, name=None):
    """The element-wise minimum of two SparseTensors of one shape, over the union of their
    entries (an absent entry counts as 0) (``tf.sparse.minimum``).

    Example:
        >>> import tapejax as tf
        >>> sp_zero = tf.sparse.SparseTensor([[0]], [0], [7])
        >>> sp_one = tf.sparse.SparseTensor([[1]], [1], [7])
        >>> tf.sparse.minimum(sp_zero, sp_one).values.numpy().tolist()
        [0, 0]
    """
    return _elementwise_union(sp_a, sp_b, _ops.minimum)


def expand_dims(sp_input, axis=None, name=None):
    """A dimension of size 1 inserted at ``axis`` (the last by default) (``tf.sparse.expand_dims``).

    Example:
        >>> import tapejax as tf
        >>> sp = tf.sparse.SparseTensor(indices=[[3, 4, 1]], values=[7], dense_shape=[10, 10, 3])
        >>> tf.sparse.expand_dims(sp, axis=0).shape.as_list()
        [1, 10, 10, 3]
        >>> tf.sparse.expand_dims(sp).shape.as_list()
        [10, 10, 3, 1]
    """
    sp = _sparse(sp_input)
    rank = len(sp._shape)
    axis = -1 if axis is None else int(np.asarray(_tensor(axis)))
    if not -(rank + 1) <= axis <= rank:
        raise errors.InvalidArgumentError(None, None, f"Expected size[1] in [0, {rank}], but got "
                                          f"{axis + rank + 1 if axis < 0 else axis}")
    axis = axis + rank + 1 if axis < 0 else axis
    indices = np.insert(sp._indices.reshape(-1, rank), axis, 0, axis=1)
    return SparseTensor(indices, sp.values, np.insert(sp._shape, axis, 1))


def softmax(sp_input, name=None):
    """The softmax of each innermost row of a SparseTensor (rank >= 2) over its present entries
    (absent ones take no part) (``tf.sparse.softmax``).

    Example:
        >>> import numpy as np
        >>> import tapejax as tf
        >>> st = tf.sparse.from_dense([[[0., np.e], [1., 0.]], [[np.e, 0.], [np.e, np.e]]])
        >>> tf.sparse.softmax(st).values.numpy().tolist()
        [1.0, 1.0, 1.0, 0.5, 0.5]
    """
    sp = _sparse(sp_input)
    rank = len(sp._shape)
    if rank < 2:
        raise errors.InvalidArgumentError(None, None, f"Input should have rank >= 2, but received shape: "
                                          f"{' '.join(map(str, sp._shape))}")
    idx = sp._indices.reshape(-1, rank)
    outer = _order(idx[:, :-1], sp._shape[:-1]) if len(idx) else np.zeros(0, np.int64)
    rows, ids = np.unique(outer, return_inverse=True)
    n = len(rows)
    count = Tensor(jnp.asarray(np.bincount(ids, minlength=n)))
    ids_t = _index_tensor(ids)
    top = _segment(sp.values, ids_t, count, n=n, kind="max")
    e = _ops.exp(_ops.subtract(sp.values, _ops.gather(top, ids_t)))
    total = _segment(e, ids_t, count, n=n, kind="sum")
    out = _ops.divide(e, _ops.gather(total, ids_t))
    perm = np.argsort(_order(idx, sp._shape), kind="stable")
    if np.any(perm != np.arange(len(perm))):   # TF's kernel writes the values in row-major order, the
        out = _ops.gather(out, _index_tensor(perm))   # indices as given (it expects reordered input)
    return SparseTensor(idx, out, sp._shape)


def retain(sp_input, to_retain):
    """The entries where the boolean vector ``to_retain`` is True (``tf.sparse.retain``)."""
    sp = _sparse(sp_input)
    keep = np.flatnonzero(np.asarray(_tensor(to_retain)))
    return SparseTensor(sp._indices[keep], _ops.gather(sp.values, _index_tensor(keep)), sp._shape)


def eye(num_rows, num_columns=None, dtype=_dtypes.float32, name=None):
    """A sparse identity matrix (``tf.sparse.eye``)."""
    n = int(num_rows)
    m = n if num_columns is None else int(num_columns)
    k = min(n, m)
    return SparseTensor(np.stack([np.arange(k)] * 2, axis=1), _ops.ones([k], dtype), [n, m])


# A SparseTensor is a JAX pytree: its values are the leaf, its coordinates and shape static data.
def _unflatten(static, children):
    sp = object.__new__(SparseTensor)
    sp._values = children[0]
    sp._indices = np.asarray(static[0], np.int64).reshape(-1, len(static[1]))
    sp._shape = np.asarray(static[1], np.int64)
    return sp


jax.tree_util.register_pytree_node(
    SparseTensor, lambda sp: ((sp._values,), (tuple(sp._indices.reshape(-1).tolist()), tuple(sp._shape.tolist()))),
    _unflatten)


__all__ = ["SparseTensor", "to_dense", "from_dense", "reorder", "add", "sparse_dense_matmul", "reduce_sum",
           "reduce_max", "map_values", "transpose", "concat", "slice", "retain", "eye", "maximum", "minimum",
           "expand_dims", "softmax"]
