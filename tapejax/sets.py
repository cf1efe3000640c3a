"""tf.sets: set operations over the last dimension of integer or string tensors, as TensorFlow 2.21's
``sets_impl`` (``size``, ``intersection``, ``union``, ``difference``).

Each index of the leading dimensions holds one set: a dense tensor's last-dimension row, or a
``SparseTensor``'s values in that row. The results are ``SparseTensor``s whose rows hold the sorted
elements, ``dense_shape`` the leading dimensions and the largest result. Computed on the host in
NumPy (recorded into a ``tf.function`` by ``tapejax._core.host``).

Example:
    >>> import tapejax as tf
    >>> a = tf.constant([[1, 2, 3], [4, 5, 4]])
    >>> b = tf.constant([[3, 1, 9], [6, 6, 6]])
    >>> tf.sparse.to_dense(tf.sets.intersection(a, b)).numpy().tolist()
    [[1, 3], [0, 0]]
"""
import numpy as _np

from . import errors as _errors
from ._core import dtypes as _dtypes, host as _host
from ._core.tensor import Tensor as _Tensor, string_array as _string_array
from .ops.array_ops import convert_to_tensor as _convert
from .sparse import SparseTensor as _SparseTensor

__all__ = ["difference", "intersection", "size", "union"]

_SUPPORTED = "frozenset({tf.int32, tf.uint8, tf.int16, tf.int8, tf.string, tf.int64, tf.uint16})"
_OK = {"int8", "int16", "int32", "int64", "uint8", "uint16", "string"}


def _is_sparse(x):
    return isinstance(x, _SparseTensor)


def _np_of(t):
    a = _np.asarray(t._value)
    return _string_array(a) if a.dtype == object else a


def _rows(x, values=None, indices=None, shape=None):
    """``(leading shape, {row index tuple: list of elements})`` of a dense array or sparse parts."""
    if indices is None:
        if x.ndim < 2:
            raise _errors.InvalidArgumentError(None, None, f"Shape [{','.join(map(str, x.shape))}] has rank "
                                                           f"{x.ndim} < 2")
        lead = x.shape[:-1]
        return lead, {i: list(x[i]) for i in _np.ndindex(*lead)}
    lead = tuple(int(d) for d in shape[:-1])
    rows = {}
    for idx, v in zip(_np.asarray(indices).tolist(), list(values)):
        rows.setdefault(tuple(idx[:-1]), []).append(v)
    return lead, rows


def _parts(x):
    if _is_sparse(x):
        return (None, _np_of(x.values), _np.asarray(x.indices._value), _np.asarray(x.dense_shape._value))
    return (_np_of(x), None, None, None)


def _set_op(op, op_name, a_parts, b_parts, dtype):
    (lead_a, rows_a), (lead_b, rows_b) = _rows(*a_parts), _rows(*b_parts)
    if tuple(lead_a) != tuple(lead_b):
        raise _errors.InvalidArgumentError(None, None, (
            f"Mismatched shapes [{','.join(map(str, lead_a))}] vs [{','.join(map(str, lead_b))}] "
            f"[Op:{op_name}] name: "))
    indices, values, width = [], [], 0
    for row in _np.ndindex(*lead_a):
        sa, sb = set(rows_a.get(row, [])), set(rows_b.get(row, []))
        out = sorted(sa & sb if op == "intersection" else sa | sb if op == "union" else sa - sb)
        indices += [list(row) + [j] for j in range(len(out))]
        values += out
        width = max(width, len(out))
    np_dtype = _dtypes.np_dtype(dtype)
    if np_dtype == object:
        v = _np.empty(len(values), object)
        v[:] = values
        v = _string_array(v)
    else:
        v = _np.asarray(values, np_dtype).reshape(-1)
    return (_Tensor(_np.asarray(indices, _np.int64).reshape(-1, len(lead_a) + 1)), _Tensor(v),
            _Tensor(_np.asarray(list(lead_a) + [width], _np.int64)))


def _operation(a, b, op, aminusb=True):
    a = a if _is_sparse(a) else _convert(a)
    b = b if _is_sparse(b) else _convert(b)
    for name, x in (("a", a), ("b", b)):
        if x.dtype.name not in _OK:
            raise TypeError(f"'{name}' has invalid dtype `{x.dtype}` not in supported dtypes: `{_SUPPORTED}`.")
    if a.dtype != b.dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")
    if not _is_sparse(a) and _is_sparse(b):      # TensorFlow puts the sparse operand first
        a, b = b, a
        aminusb = not aminusb
    if op == "difference" and not aminusb:
        a, b = b, a
    name = ("Sparse" if _is_sparse(a) else "Dense") + "To" + ("Sparse" if _is_sparse(b) else "Dense") + \
        "SetOperation"

    def run(a, b):
        return _set_op(op, name, _parts(a), _parts(b), a.dtype)

    indices, values, shape = _host.call(name, run, a, b)
    return _SparseTensor(indices, values, shape)


def size(a, validate_indices=True):
    """The number of unique elements of each set of the ``SparseTensor`` ``a`` (its last
    dimension), int32 with ``a``'s leading dimensions (``tf.sets.size``).

    Example:
        >>> import tapejax as tf
        >>> s = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], [7, 1, 4], dense_shape=[2, 3])
        >>> tf.sets.size(s).numpy().tolist()
        [2, 1]
    """
    if not _is_sparse(a):
        raise TypeError(f"Expected `SparseTensor`, got {str(a)}.")
    if a.dtype.name not in _OK:
        raise TypeError(f"Invalid dtype `{a.dtype}` not in supported dtypes: `{_SUPPORTED}`.")

    def run(a):
        lead, rows = _rows(None, _np_of(a.values), _np.asarray(a.indices._value), _np.asarray(a.dense_shape._value))
        return _Tensor(_np.asarray([len(set(rows.get(r, []))) for r in _np.ndindex(*lead)], _np.int32).reshape(lead))

    return _host.call("SetSize", run, a)


def intersection(a, b, validate_indices=True):
    """The elements in both ``a`` and ``b`` of each set (the last dimension; dense tensors or
    ``SparseTensor``s), a ``SparseTensor`` of sorted elements (``tf.sets.intersection``).

    Example:
        >>> import tapejax as tf
        >>> r = tf.sets.intersection(tf.constant([["a", "b", "c"]]), tf.constant([["c", "a", "z"]]))
        >>> r.values.numpy().tolist(), r.dense_shape.numpy().tolist()
        ([b'a', b'c'], [1, 2])
    """
    return _operation(a, b, "intersection")


def union(a, b, validate_indices=True):
    """The elements in ``a`` or ``b`` of each set, a ``SparseTensor`` of sorted elements
    (``tf.sets.union``).

    Example:
        >>> import tapejax as tf
        >>> r = tf.sets.union(tf.constant([[1, 2], [3, 3]]), tf.constant([[2, 5], [1, 1]]))
        >>> tf.sparse.to_dense(r).numpy().tolist()
        [[1, 2, 5], [1, 3, 0]]
    """
    return _operation(a, b, "union")


def difference(a, b, aminusb=True, validate_indices=True):
    """The elements of each set of ``a`` not in ``b`` (``b`` minus ``a`` with ``aminusb=False``), a
    ``SparseTensor`` of sorted elements (``tf.sets.difference``).

    Example:
        >>> import tapejax as tf
        >>> a, b = tf.constant([[1, 2, 3], [4, 5, 4]]), tf.constant([[3, 1, 9], [6, 6, 6]])
        >>> tf.sparse.to_dense(tf.sets.difference(a, b)).numpy().tolist()
        [[2, 0], [4, 5]]
    """
    return _operation(a, b, "difference", aminusb)


from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("tapejax.sets")
