"""More top-level rows of the op table (``tf.X``): shape checks and broadcasting of shapes, grouping
(``identity_n``, ``group``, ``tuple``, ``no_op``), ``bitcast``, ``saturate_cast``, histograms,
``unique``, ``searchsorted``, ``sequence_mask``, ``reverse_sequence``, ``unravel_index`` and the
value-dependent ``dynamic_partition`` / ``dynamic_stitch``.

Ops whose output shape depends on input values (``unique``, ``dynamic_partition``...) read the
values on the host, so they run eagerly (TensorFlow runs them in graphs too).
"""
import builtins
import collections
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from .._core import checks as _checks, dtypes as _dtypes, state as _state
from .._core.basic import identity
from . import normalize
from .._core.tensor import is_tracer
from .._core.variable import current_name_scope
from .._core.tensor import Tensor, TensorShape, _TensorBase, to_array
from ..errors import InvalidArgumentError
from ..extend import defop
from .namespaces import export
from .array_ops import gather, reshape, stack
from .math_ops import truediv, cast, clip_by_value


def _tensor(x, dtype=None):
    return x if isinstance(x, _TensorBase) else Tensor(to_array(x, dtype) if dtype is not None else to_array(x))



def _dims(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _refine(x, *, sizes):
    # Each unknown (symbolic) dimension given a size, gathered to it: a gather's size need not be
    # compared with the dimension's while traced (a slice's must), and the value then has TF's
    # static shape, which the ops after it see. The program's check refuses other sizes.
    for axis, n in enumerate(sizes):
        if n is not None and jax.export.is_symbolic_dim(x.shape[axis]):
            x = jnp.take(x, jnp.arange(n), axis=axis, mode="fill")
    return x


_refined = defop(_refine, name="EnsureShape", static=("sizes",))


def _not_mergeable(want, have):
    """TensorFlow's shape inference's message for shapes that do not merge (``Merge``)."""
    if want.rank != have.rank:
        return f"Shape must be rank {want.rank} but is rank {have.rank}"
    i = next(i for i, (a, b) in enumerate(zip(want, have)) if a is not None and b is not None and a != b)
    return (f"Dimension {i} in both shapes must be equal, but are {want[i]} and {have[i]}. "
            f"Shapes are {_dims(want)} and {_dims(have)}.")


@export("ensure_shape")
def ensure_shape(x, shape, name=None):
    """``x`` if its shape is compatible with ``shape`` (None: any size), else TF's
    InvalidArgumentError (``tf.ensure_shape``).

    Inside a ``tf.function`` traced on unknown sizes, the result has the sizes ``shape`` gives
    (its static shape, as TensorFlow's shape inference refines it), and the program checks
    them when it runs; a known shape that is not compatible is TensorFlow's ValueError while
    the function is traced.

    Example:
        >>> import tapejax as tf
        >>> tf.ensure_shape(tf.zeros([2, 3]), [None, 3]).shape
        TensorShape([2, 3])
        >>> @tf.function
        ... def f(t):
        ...   t = tf.ensure_shape(t, [None, 3])
        ...   print(t.shape)
        ...   return t
        >>> cf = f.get_concrete_function(tf.TensorSpec([None, None]))
        (None, 3)
    """
    x = _tensor(x)
    want = TensorShape(shape)
    if not want.is_compatible_with(x.shape):
        if is_tracer(x._aval):   # a graph's shape inference refuses it
            raise ValueError(
                f"{_not_mergeable(want, x.shape)} for '{{{{node EnsureShape}}}} = EnsureShape["
                f"T=DT_{_dtypes.c_name(x.dtype).upper()}, shape={_dims(want)}]({_input_name(x)})' "
                f"with input shapes: {_dims(x.shape)}.")
        raise InvalidArgumentError(None, None, f"Shape of tensor input {_dims(x.shape)} is not compatible with expected "
                                   f"shape {_dims(want)}. [Op:EnsureShape]")
    dims = x._aval.shape
    if want.rank is None or not any(w is not None and jax.export.is_symbolic_dim(d) for d, w in zip(dims, want)):
        return identity(x)
    out = _refined(x, sizes=builtins.tuple(want))
    bad = functools.reduce(jnp.logical_or, [jnp.asarray(d) != w for d, w in zip(dims, want) if w is not None])
    label = _input_name(x)
    _checks.stage_error(
        bad, lambda actual: InvalidArgumentError(None, None, f"Shape of tensor {label} {_dims(actual)} is not "
                                                             f"compatible with expected shape {_dims(want)}."),
        jnp.stack([jnp.asarray(d, np.int64) for d in dims]), subject=out._value)
    return out


def _input_name(x):
    """The name of ``x``'s op in the graph being traced (TF's ensure_shape messages name it)."""
    name = _state.traced_name(x)
    return name.rsplit(":", 1)[0] if name else "input"


@export("identity_n")
def identity_n(input, name=None):
    """A list of the identities of ``input``'s tensors (``tf.identity_n``).

    Example:
        >>> import tapejax as tf
        >>> [t.numpy().tolist() for t in tf.identity_n([tf.constant(1), tf.constant([2.0])])]
        [1, [2.0]]
    """
    return [identity(_tensor(t)) for t in input]


@export("no_op")
def no_op(name=None):
    """Does nothing; None, as TensorFlow's eager ``tf.no_op`` (ops run in program order).

    Example:
        >>> import tapejax as tf
        >>> print(tf.no_op())
        None
    """
    return None


@export("group")
def group(*inputs, **kwargs):
    """Groups ops to run together; None, as in TensorFlow's eager mode (``tf.group``): ops run in
    program order, eagerly and inside tf.function.

    Example:
        >>> import tapejax as tf
        >>> print(tf.group(tf.constant(1), tf.constant(2)))
        None
    """
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise ValueError(f"Unknown keyword arguments: {sorted(unknown)}")
    return None


@export("tuple")
def tuple(tensors, control_inputs=None, name=None):  # noqa: A001 (TensorFlow's name)
    """The identities of ``tensors`` (None kept), once all are computed (``tf.tuple``).

    Example:
        >>> import tapejax as tf
        >>> [None if t is None else t.numpy() for t in tf.tuple([tf.constant(1), None])]
        [np.int32(1), None]
    """
    return [None if t is None else identity(_tensor(t)) for t in tensors]


@export("broadcast_static_shape")
def broadcast_static_shape(shape_x, shape_y):
    """The broadcast of two ``TensorShape``s (``tf.broadcast_static_shape``); None dims stay unknown.

    Example:
        >>> import tapejax as tf
        >>> tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3]))
        TensorShape([2, 3])
    """
    x, y = TensorShape(shape_x), TensorShape(shape_y)
    if x.rank is None or y.rank is None:
        return TensorShape(None)
    out = []
    for a, b in zip([1] * (len(y) - len(x)) + list(x), [1] * (len(x) - len(y)) + list(y)):
        if a == 1 or a == b:
            out.append(b)
        elif b == 1:
            out.append(a)
        elif a is None or b is None:
            out.append(a if b is None else b)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension "
                             f"pair they are either equal or one of them is 1. Received: {x} and {y}.")
    return TensorShape(out)


@export("broadcast_dynamic_shape")
def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shapes given as 1-D integer tensors (``tf.broadcast_dynamic_shape``).

    Example:
        >>> import tapejax as tf
        >>> tf.broadcast_dynamic_shape([2, 1], [3]).numpy().tolist()
        [2, 3]
    """
    x, y = (_tensor(s, np.int32) if not isinstance(s, _TensorBase) else s for s in (shape_x, shape_y))
    a, b = (normalize.known(s, "broadcast_dynamic_shape").astype(np.int64).tolist() for s in (x, y))
    try:
        out = np.broadcast_shapes(builtins.tuple(a), builtins.tuple(b))
    except ValueError:
        raise InvalidArgumentError(None, None, f"Incompatible shapes: [{','.join(map(str, a))}] vs. "
                                   f"[{','.join(map(str, b))}] [Op:BroadcastArgs]") from None
    return Tensor(jnp.asarray(out, x.dtype.as_numpy_dtype if hasattr(x.dtype, "as_numpy_dtype") else np.int32))


# TensorFlow's DataType enum values: its Bitcast message names the types by them
_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "complex64": 8, "int64": 9,
         "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18, "float16": 19, "uint32": 22, "uint64": 23}
_bitcast = defop(lambda x, dtype: jax.lax.bitcast_convert_type(x, dtype), name="bitcast", static=("dtype",))


@export("bitcast")
def bitcast(input, type, name=None):  # noqa: A002
    """Reinterprets the bits of ``input`` as ``type`` (``tf.bitcast``): a narrower type adds a last
    axis, a wider one consumes it.

    Example:
        >>> import tapejax as tf
        >>> tf.bitcast(tf.constant(1.0), tf.int32).numpy()
        np.int32(1065353216)
    """
    x = _tensor(input)
    src, dst = np.dtype(x.dtype.as_numpy_dtype), _dtypes.np_dtype(type)
    if dst.itemsize > src.itemsize and (x.shape.rank == 0 or x.shape[-1] != dst.itemsize // src.itemsize):
        raise InvalidArgumentError(None, None, f"Cannot bitcast from {_ENUM.get(src.name, src.name)} to "
                                   f"{_ENUM.get(dst.name, dst.name)} [Op:Bitcast]")
    return _bitcast(x, dtype=dst)


@export("saturate_cast", "dtypes.saturate_cast")
def saturate_cast(value, dtype, name=None):
    """Casts to ``dtype``, clipping to its range first (``tf.saturate_cast``).

    Example:
        >>> import tapejax as tf
        >>> tf.saturate_cast(tf.constant([-5.0, 300.0]), tf.uint8).numpy().tolist()
        [0, 255]
    """
    x = _tensor(value)
    dst = _dtypes.np_dtype(dtype)
    src = np.dtype(x.dtype.as_numpy_dtype)
    if dst.kind in "iu" and src.kind in "iuf":
        info = np.iinfo(dst)
        lo, hi = info.min, info.max
        if src.kind == "f":   # the largest float of the input type within the range, as TensorFlow
            hi_c = np.asarray(hi, src)
            if float(hi_c) > hi:
                hi_c = np.nextafter(hi_c, np.asarray(0, src))
            lo, hi = max(float(lo), float(np.finfo(src).min)), min(float(hi_c), float(np.finfo(src).max))
        else:
            lo, hi = max(lo, np.iinfo(src).min), min(hi, np.iinfo(src).max)
        x = clip_by_value(x, Tensor(jnp.asarray(lo, src)), Tensor(jnp.asarray(hi, src)))
    elif dst.kind == "f" and src.kind == "f" and dst.itemsize < src.itemsize:
        f = np.finfo(dst)
        x = clip_by_value(x, Tensor(jnp.asarray(f.min, src)), Tensor(jnp.asarray(f.max, src)))
    return cast(x, dst)


@export("realdiv")
def realdiv(x, y, name=None):
    """``x / y`` for real (floating) tensors (``tf.realdiv``).

    Example:
        >>> import tapejax as tf
        >>> tf.realdiv(tf.constant(1.0), tf.constant(4.0)).numpy()
        np.float32(0.25)
    """
    return truediv(x, y)


@export("parallel_stack")
def parallel_stack(values, name="parallel_stack"):
    """``tf.stack(values)`` along a new first axis (``tf.parallel_stack``).

    Example:
        >>> import tapejax as tf
        >>> tf.parallel_stack([tf.constant(1), tf.constant(2)]).numpy().tolist()
        [1, 2]
    """
    return stack(values, axis=0)


@export("guarantee_const")
def guarantee_const(input, name=None):
    """``input`` unchanged (TensorFlow's promise to the optimizer that it is constant).

    Example:
        >>> import tapejax as tf
        >>> print(tf.guarantee_const(tf.constant(2)).numpy())
        2
    """
    return identity(_tensor(input))


@export("shape_n")
def shape_n(input, out_type=_dtypes.int32, name=None):
    """The shapes of a list of tensors, as 1-D integer tensors (``tf.shape_n``).

    Example:
        >>> import tapejax as tf
        >>> [s.numpy().tolist() for s in tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])]
        [[2, 3], [4]]
    """
    dt = _dtypes.np_dtype(out_type)
    return [Tensor(jnp.asarray([int(d) for d in _tensor(t).shape], dt)) for t in input]


# ---------------------------------------------------------------- histograms
def _bins(values, value_range, nbins):
    v = _tensor(values)
    r = _tensor(value_range, v.dtype.as_numpy_dtype)
    nb = int(normalize.known(nbins, "histogram_fixed_width"))
    if nb <= 0:
        raise InvalidArgumentError(None, None, f"nbins should be a positive number, but got '{nb}' "
                                   "[Op:HistogramFixedWidth]")
    val, rng = to_array(v), to_array(r)
    lo, hi = rng[0], rng[1]
    scaled = (val - lo).astype(np.float64 if jax.config.jax_enable_x64 else np.float32) / (hi - lo)
    return jnp.clip(jnp.floor(scaled * nb), 0, nb - 1).astype(np.int32), nb


@export("histogram_fixed_width")
def histogram_fixed_width(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """Counts of ``values`` in ``nbins`` equal bins over ``value_range``; values outside go to the
    first or last bin (``tf.histogram_fixed_width``).

    Example:
        >>> import tapejax as tf
        >>> tf.histogram_fixed_width(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), [0.0, 5.0], nbins=5).numpy().tolist()
        [2, 1, 1, 0, 2]
    """
    idx, nb = _bins(values, value_range, nbins)
    return Tensor(jnp.bincount(jnp.ravel(idx), length=nb).astype(_dtypes.np_dtype(dtype)))


@export("histogram_fixed_width_bins")
def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """The bin index of each of ``values`` (``tf.histogram_fixed_width_bins``).

    Example:
        >>> import tapejax as tf
        >>> tf.histogram_fixed_width_bins(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), [0.0, 5.0], nbins=5).numpy().tolist()
        [0, 0, 1, 2, 4, 4]
    """
    idx, _ = _bins(values, value_range, nbins)
    return Tensor(idx.astype(_dtypes.np_dtype(dtype)))


# ---------------------------------------------------------------- value-dependent shapes
Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _unique(x, out_idx):
    v = normalize.known(x, "unique")
    if v.ndim != 1:
        raise InvalidArgumentError(None, None, "unique expects a 1D vector. [Op:Unique]")
    _, first, inv, counts = np.unique(v, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")        # TensorFlow: in order of first occurrence
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    dt = _dtypes.np_dtype(out_idx)
    y = gather(x, Tensor(jnp.asarray(first[order], np.int32)))
    return y, Tensor(jnp.asarray(rank[inv.reshape(-1)], dt)), Tensor(jnp.asarray(counts[order], dt))


@export("unique")
def unique(x, out_idx=_dtypes.int32, name=None):
    """The distinct values of a 1-D tensor in order of first occurrence, and each element's index
    among them (``tf.unique``).

    Example:
        >>> import tapejax as tf
        >>> y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
        >>> y.numpy().tolist(), idx.numpy().tolist()
        ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    """
    y, idx, _ = _unique(_tensor(x), out_idx)
    return Unique(y, idx)


@export("unique_with_counts")
def unique_with_counts(x, out_idx=_dtypes.int32, name=None):
    """``tf.unique`` and how often each value occurs (``tf.unique_with_counts``).

    Example:
        >>> import tapejax as tf
        >>> tf.unique_with_counts(tf.constant([1, 1, 2])).count.numpy().tolist()
        [2, 1]
    """
    return UniqueWithCounts(*_unique(_tensor(x), out_idx))


@export("dynamic_partition")
def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits ``data`` into ``num_partitions`` tensors by the partition index of each element (or
    row) (``tf.dynamic_partition``).

    Example:
        >>> import tapejax as tf
        >>> parts = tf.dynamic_partition(tf.constant([10, 20, 30, 40]), tf.constant([0, 1, 0, 1]), 2)
        >>> [p.numpy().tolist() for p in parts]
        [[10, 30], [20, 40]]
    """
    data = _tensor(data)
    p = normalize.known(partitions, "dynamic_partition")
    n = int(num_partitions)
    if np.any((p < 0) | (p >= n)):
        bad = p.ravel()[np.argmax(((p < 0) | (p >= n)).ravel())]
        where = [int(e) for e in np.argwhere((p < 0) | (p >= n))[0]]
        raise InvalidArgumentError(None, None, f"partitions{where} = {bad} is not "
                                   f"in [0, {n}) [Op:DynamicPartition]")
    if builtins.tuple(data.shape[:p.ndim]) != p.shape:
        raise InvalidArgumentError(None, None, f"data.shape must start with partitions.shape, got data.shape = "
                                   f"{_dims(data.shape)}, partitions.shape = {_dims(p.shape)} [Op:DynamicPartition]")
    flat = reshape(data, [-1] + [int(d) for d in data.shape[p.ndim:]])
    return [gather(flat, Tensor(jnp.asarray(np.flatnonzero(p.ravel() == i), np.int32))) for i in builtins.range(n)]


_stitch = defop(lambda *xs, src, positions, shape: jnp.concatenate(
    [x.reshape((-1,) + shape) for x in xs])[np.asarray(src)].reshape((len(src),) + shape),
    name="dynamic_stitch", static=("src", "positions", "shape"),
    vjp=lambda ans, *xs, src, positions, shape: lambda g: builtins.tuple(
        g[np.asarray(pos)].reshape(x.shape) for x, pos in zip(xs, positions)))


@export("dynamic_stitch")
def dynamic_stitch(indices, data, name=None):
    """Interleaves ``data`` into one tensor: ``merged[indices[m][i]] = data[m][i]``, a later index
    winning (``tf.dynamic_stitch``). The gradient reaches every element, overwritten ones included,
    as TensorFlow's.

    Example:
        >>> import tapejax as tf
        >>> tf.dynamic_stitch([tf.constant([0, 2]), tf.constant([1])], [tf.constant([1, 3]), tf.constant([2])]).numpy().tolist()
        [1, 2, 3]
    """
    idx = [normalize.known(i, "dynamic_stitch").astype(np.int64) for i in indices]
    data = [_tensor(d) for d in data]
    if len(idx) != len(data):
        raise InvalidArgumentError(None, None, "indices and data must have the same length [Op:DynamicStitch]")
    shape = builtins.tuple(int(e) for e in data[0].shape[idx[0].ndim:])
    n = int(max((i.max() for i in idx if i.size), default=-1)) + 1
    src = np.zeros(n, np.int64)
    offset = 0
    for i in idx:
        src[i.ravel()] = offset + np.arange(i.size)
        offset += i.size
    positions = builtins.tuple(builtins.tuple(i.ravel().tolist()) for i in idx)
    return _stitch(*data, src=builtins.tuple(src.tolist()), positions=positions, shape=shape)


# ---------------------------------------------------------------- sequences and search
_searchsorted = defop(lambda s, v, side, out: jax.vmap(lambda a, b: jnp.searchsorted(a, b, side=side))(
    s.reshape(-1, s.shape[-1]), v.reshape(-1, v.shape[-1])).reshape(v.shape).astype(out),
    name="searchsorted", static=("side", "out"))


@export("searchsorted")
def searchsorted(sorted_sequence, values, side="left", out_type=_dtypes.int32, name=None):
    """Where each of ``values`` would go in ``sorted_sequence`` (innermost axis, batched over the others)
    (``tf.searchsorted``).

    Example:
        >>> import tapejax as tf
        >>> tf.searchsorted(tf.constant([1.0, 3.0, 5.0]), tf.constant([0.0, 3.0, 6.0])).numpy().tolist()
        [0, 1, 3]
    """
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = '{side}'.")
    s, v = _tensor(sorted_sequence), _tensor(values)
    if s.ndim != v.ndim or builtins.tuple(s.shape[:-1]) != builtins.tuple(v.shape[:-1]):
        raise InvalidArgumentError(None, None, "Leading dim_size of both tensors must match. [Op:LowerBound]")
    return _searchsorted(s, v, side=side, out=_dtypes.np_dtype(out_type))


@export("sequence_mask")
def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name=None):
    """``mask[..., j] = j < lengths[...]``, ``maxlen`` columns (``max(lengths)`` if None) (``tf.sequence_mask``).

    Example:
        >>> import tapejax as tf
        >>> tf.sequence_mask([1, 3], 4).numpy().astype(int).tolist()
        [[1, 0, 0, 0], [1, 1, 1, 0]]
    """
    ln = _tensor(lengths)
    m = int(np.max(normalize.known(ln, "sequence_mask"), initial=0)) if maxlen is None else int(normalize.known(maxlen, "sequence_mask"))
    return Tensor((jnp.arange(m) < to_array(ln)[..., None]).astype(_dtypes.np_dtype(dtype)))


_reverse_sequence = defop(lambda x, lengths, seq_axis, batch_axis: _reverse_sequence_fn(x, lengths, seq_axis, batch_axis),
                          name="reverse_sequence", static=("seq_axis", "batch_axis"))


def _reverse_sequence_fn(x, lengths, seq_axis, batch_axis):
    n = x.shape[seq_axis]
    j = jnp.arange(n)
    shape = [1] * x.ndim
    shape[seq_axis] = n
    lshape = [1] * x.ndim
    lshape[batch_axis] = x.shape[batch_axis]
    j = j.reshape(shape)
    ln = lengths.reshape(lshape).astype(np.int32)
    src = jnp.where(j < ln, ln - 1 - j, j)
    return jnp.take_along_axis(x, jnp.broadcast_to(src, x.shape), axis=seq_axis)


@export("reverse_sequence")
def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):
    """Reverses the first ``seq_lengths[b]`` elements along ``seq_axis`` of each batch entry ``b``
    (``tf.reverse_sequence``).

    Example:
        >>> import tapejax as tf
        >>> tf.reverse_sequence(tf.constant([[1, 2, 3], [4, 5, 6]]), [2, 3], seq_axis=1, batch_axis=0).numpy().tolist()
        [[2, 1, 3], [6, 5, 4]]
    """
    x = _tensor(input)
    seq_axis = int(seq_axis) % x.ndim
    batch_axis = 0 if batch_axis is None else int(batch_axis) % x.ndim
    ln = _tensor(seq_lengths, np.int32)
    return _reverse_sequence(x, ln, seq_axis=seq_axis, batch_axis=batch_axis)


@export("unravel_index")
def unravel_index(indices, dims, name=None):
    """The coordinates of flat ``indices`` in an array of shape ``dims``, one row per dimension (``tf.unravel_index``).

    Example:
        >>> import tapejax as tf
        >>> tf.unravel_index([1, 5, 4], [3, 3]).numpy().tolist()
        [[0, 1, 1], [1, 2, 1]]
    """
    i = _tensor(indices, np.int32)
    d = normalize.known(_tensor(dims, np.int32), "unravel_index")
    v = normalize.known(i, "unravel_index")
    if np.any((v < 0) | (v >= np.prod(d))):
        raise InvalidArgumentError(None, None, "index is out of bound as with dims [Op:UnravelIndex]")
    out = np.stack(np.unravel_index(v, builtins.tuple(d.tolist())))
    return Tensor(jnp.asarray(out, i.dtype.as_numpy_dtype))


# ---------------------------------------------------------------- strided_slice
@export("strided_slice")
def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """TensorFlow's general slice ``input_[begin:end:strides]`` with its bit masks (``tf.strided_slice``):
    bit ``i`` of ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]``, of ``ellipsis_mask`` makes
    spec ``i`` an ellipsis, of ``new_axis_mask`` a new axis, of ``shrink_axis_mask`` an index.

    Example:
        >>> import tapejax as tf
        >>> t = tf.reshape(tf.range(12), [3, 4])
        >>> tf.strided_slice(t, [0, 1], [3, 4], [2, 2]).numpy().tolist()
        [[1, 3], [9, 11]]
        >>> tf.strided_slice(t, [1, 0], [2, 0], end_mask=2, shrink_axis_mask=1).numpy().tolist()
        [4, 5, 6, 7]
    """
    b = normalize.known(begin, "strided_slice").astype(np.int64).ravel()
    e = normalize.known(end, "strided_slice").astype(np.int64).ravel()
    s = np.ones_like(b) if strides is None else normalize.known(strides, "strided_slice").astype(np.int64).ravel()
    if not len(b) == len(e) == len(s):
        raise InvalidArgumentError(None, None, f"Expected begin, end, and strides to be 1D equal size tensors, but got "
                                   f"shapes [{len(b)}], [{len(e)}], and [{len(s)}] instead. [Op:StridedSlice]")
    if np.any(s == 0):
        raise InvalidArgumentError(None, None, "strides[0] must be non-zero [Op:StridedSlice]")
    key = []
    for i in builtins.range(len(b)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(int(b[i]))
        else:
            key.append(builtins.slice(None if begin_mask & bit else int(b[i]), None if end_mask & bit else int(e[i]),
                                      int(s[i])))
    return _tensor(input_)[builtins.tuple(key)]


@export("timestamp")
def timestamp(name=None):
    """The current time in seconds since the epoch, a float64 scalar (``tf.timestamp``).

    Example:
        >>> import tapejax as tf
        >>> tf.timestamp().dtype == tf.float64
        True
    """
    return Tensor(np.asarray(time.time(), np.float64))


@export("get_current_name_scope")
def get_current_name_scope():
    """The name of the current ``tf.name_scope``, '' at the top (``tf.get_current_name_scope``).

    Example:
        >>> import tapejax as tf
        >>> with tf.name_scope("outer"):
        ...     print(tf.get_current_name_scope())
        outer
    """
    return current_name_scope()


@export("is_symbolic_tensor")
def is_symbolic_tensor(tensor):
    """True for a tensor of a tf.function's trace, False for an eager one or a non-tensor (``tf.is_symbolic_tensor``).

    Example:
        >>> import tapejax as tf
        >>> tf.is_symbolic_tensor(tf.constant(1))
        False
    """
    return isinstance(tensor, _TensorBase) and is_tracer(tensor._value)


# ---------------------------------------------------------------- space <-> batch
def _space_to_batch_fn(x, block, paddings):
    m = len(block)
    x = jnp.pad(x, [(0, 0)] + [builtins.tuple(p) for p in paddings] + [(0, 0)] * (x.ndim - 1 - m))
    b, rest = x.shape[0], x.shape[1 + m:]
    shape = [b]
    for i, bs in enumerate(block):
        shape += [x.shape[1 + i] // bs, bs]
    x = x.reshape(shape + list(rest))
    perm = [2 + 2 * i for i in builtins.range(m)] + [0] + [1 + 2 * i for i in builtins.range(m)]
    perm += list(builtins.range(1 + 2 * m, x.ndim))
    x = x.transpose(perm)
    return x.reshape([b * int(np.prod(block))] + [x.shape[m + 1 + i] for i in builtins.range(m)] + list(rest))


def _batch_to_space_fn(x, block, crops):
    m = len(block)
    nb = int(np.prod(block))
    b, dims, rest = x.shape[0] // nb, x.shape[1:1 + m], x.shape[1 + m:]
    x = x.reshape(list(block) + [b] + list(dims) + list(rest))
    perm = [m]
    for i in builtins.range(m):
        perm += [m + 1 + i, i]
    perm += list(builtins.range(2 * m + 1, x.ndim))
    x = x.transpose(perm).reshape([b] + [d * bs for d, bs in zip(dims, block)] + list(rest))
    index = (builtins.slice(None),) + builtins.tuple(
        builtins.slice(c0, x.shape[1 + i] - c1) for i, (c0, c1) in enumerate(crops))
    return x[index]


_space_to_batch = defop(_space_to_batch_fn, name="space_to_batch_nd", static=("block", "paddings"))
_batch_to_space = defop(_batch_to_space_fn, name="batch_to_space_nd", static=("block", "crops"))


def _pairs(v, what):
    return builtins.tuple(builtins.tuple(int(e) for e in p) for p in normalize.known(v, what).reshape(-1, 2))


@export("space_to_batch_nd", "space_to_batch", "nn.space_to_batch")
def space_to_batch_nd(input, block_shape, paddings, name=None):
    """Pads the spatial dimensions and moves ``block_shape`` blocks of them into the batch (``tf.space_to_batch_nd``).

    Example:
        >>> import tapejax as tf
        >>> tf.space_to_batch_nd(tf.reshape(tf.range(4), [1, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]]).numpy().ravel().tolist()
        [0, 1, 2, 3]
    """
    x = _tensor(input)
    block = builtins.tuple(int(e) for e in normalize.known(block_shape, "space_to_batch_nd").ravel())
    pads = _pairs(paddings, "space_to_batch_nd")
    for i, (bs, (p0, p1)) in enumerate(zip(block, pads)):
        if (x.shape[1 + i] + p0 + p1) % bs:
            raise InvalidArgumentError(None, None, f"padded_shape[{i}]={x.shape[1 + i] + p0 + p1} is not divisible by "
                                       f"block_shape[{i}]={bs} [Op:SpaceToBatchND]")
    return _space_to_batch(x, block=block, paddings=pads)


@export("batch_to_space")
def batch_to_space(input, block_shape, crops, name=None):
    """Moves ``block_shape`` blocks of the batch back into the spatial dimensions and crops them
    (``tf.batch_to_space``, the inverse of ``tf.space_to_batch_nd``).

    Example:
        >>> import tapejax as tf
        >>> tf.batch_to_space(tf.reshape(tf.range(4), [4, 1, 1, 1]), [2, 2], [[0, 0], [0, 0]]).numpy()[0, :, :, 0].tolist()
        [[0, 1], [2, 3]]
    """
    x = _tensor(input)
    block = builtins.tuple(int(e) for e in normalize.known(block_shape, "batch_to_space").ravel())
    if x.shape[0] % int(np.prod(block)):
        raise InvalidArgumentError(None, None, f"Input batch dimension ({x.shape[0]}) is not divisible by product of "
                                   f"block sizes ({int(np.prod(block))}) [Op:BatchToSpaceND]")
    return _batch_to_space(x, block=block, crops=_pairs(crops, "batch_to_space"))
