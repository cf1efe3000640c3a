"""Array rows of the op table: shapes and structure, indexing and gathers, constructors.

Rows as in ``math_ops``: the op (``defop``), TensorFlow's signature normalising its arguments
(``normalize``), and ``export``: where TensorFlow publishes it.
"""
import builtins as _builtins
from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes, host as _host, promotion as _promotion, state as _state, weak as _weak
from .. import errors
from ..errors import InvalidArgumentError
from .._core.tensor import (
    HostValue, Tensor, _TensorBase, to_array, is_tracer, from_numpy, _python_default_dtype, string_array,
    check_python_kinds, check_tensor_dtype, _contains_tensor,
)
from .._core.engine import note_barrier
from .._core.variable import Variable
from .._core.indexed_slices import IndexedSlices, register_sparse_gradient, to_dense
from .._core.basic import (  # the core's own ops, rows of this table too
    identity, reshape as _reshape, transpose as _transpose, concat as _concat, stack as _stack,
)
from ..extend import defop, freeze
from . import bounds, normalize
from .math_ops import cast
from .namespaces import export
from .bounds import _kernel_message

# ---------------------------------------------------------------- shapes and structure
_squeeze = defop(lambda x, axis=None: jnp.squeeze(x, axis=axis), name="squeeze", static=("axis",))
_expand_dims = defop(lambda x, axis: jnp.expand_dims(x, axis), name="expand_dims", static=("axis",))
_tile = defop(lambda x, multiples: jnp.tile(x, multiples), name="tile", static=("multiples",))
_broadcast_to = defop(lambda x, shape: jnp.broadcast_to(x, shape), name="broadcast_to", static=("shape",))
_pad = defop(lambda x, c, paddings, mode="CONSTANT": _pad_fn(x, c, paddings, mode), name="pad", static=("paddings", "mode"))
_unstack = defop(lambda x, axis=0: tuple(jnp.moveaxis(x, axis, 0)), name="unstack", static=("axis",))
_split = defop(lambda x, sections, axis=0: tuple(jnp.split(x, sections, axis=axis)), name="split", static=("sections", "axis"))
_conjugate_transpose = defop(lambda x, perm=None: jnp.conj(jnp.transpose(x, perm)), name="conjugate_transpose", static=("perm",))
_reverse = defop(lambda x, axis: jnp.flip(x, axis), name="reverse", static=("axis",))
_roll = defop(lambda x, shift, axis: jnp.roll(x, shift, axis), name="roll", static=("shift", "axis"))
_sort = defop(lambda x, axis=-1, direction="ASCENDING": jnp.sort(x, axis=axis) if direction == "ASCENDING" else -jnp.sort(-x, axis=axis), name="sort", static=("axis", "direction"))
_repeat = defop(lambda x, repeats, axis: jnp.repeat(x, np.asarray(repeats), axis=axis), name="repeat", static=("repeats", "axis"))
_meshgrid = defop(lambda *xs, indexing: tuple(jnp.meshgrid(*[x.reshape(-1) for x in xs], indexing=indexing)), name="meshgrid", static=("indexing",))


@export("reshape")
def reshape(tensor, shape, name=None):
    """``tf.reshape``: ``shape`` may hold -1 and scalar tensors.

    Example:
        >>> import tapejax as tf
        >>> tf.reshape(tf.range(6), [2, -1]).shape
        TensorShape([2, 3])
    """
    if hasattr(shape, "_tf_with_flat_values"):   # a tf.experimental.DynamicRaggedShape: a RaggedTensor
        return shape._tf_with_flat_values(lambda inner: reshape(tensor, inner))
    shape = normalize.static_shape(shape)
    if -1 in shape and _state.is_exporting():
        shape = _symbolic_minus_one(tensor, shape)
    return _reshape(tensor, shape=shape)


def _symbolic_minus_one(tensor, shape):
    """``shape`` with its -1 given as ``size // known`` when the input's size is symbolic (a
    ``TensorSpec([None, None])`` traced for a SavedModel): JAX cannot tell that ``a*b*c*d``
    divides by 784, but runs the division (TensorFlow computes the -1 at run time). A
    tf.function traces such a reshape once per size instead, which reports bad sizes as TF."""
    dims = getattr(to_array(tensor), "shape", ())
    if not any(jax.export.is_symbolic_dim(d) for d in dims):
        return shape
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    size = 1
    for d in dims:
        size *= d
    return tuple(size // known if d == -1 else d for d in shape)


@export("expand_dims")
def expand_dims(input, axis, name=None):
    """Inserts a dimension of size 1 at ``axis`` (``tf.expand_dims``)."""
    return _expand_dims(input, axis=int(axis))


@export("squeeze")
def squeeze(input, axis=None, name=None):
    """Removes dimensions of size 1 (``tf.squeeze``)."""
    return _squeeze(input, axis=normalize.axis(axis))


@export("tile")
def tile(input, multiples, name=None):
    """Repeats a tensor ``multiples`` times along each axis (``tf.tile``)."""
    return _tile(input, multiples=normalize.static_shape(multiples))


@export("broadcast_to")
def broadcast_to(input, shape, name=None):
    """Broadcasts a tensor to ``shape`` (``tf.broadcast_to``)."""
    return _broadcast_to(input, shape=normalize.static_shape(shape))


@export("transpose")
def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes dimensions by ``perm`` (reverses them by default) (``tf.transpose``);
    ``conjugate=True`` also conjugates a complex tensor (TF's ``ConjugateTranspose``).

    >>> import tapejax as tf
    >>> x = tf.constant([[1 + 1j, 2 + 2j, 3 + 3j], [4 + 4j, 5 + 5j, 6 + 6j]])
    >>> tf.transpose(x, conjugate=True)
    <tf.Tensor: shape=(3, 2), dtype=complex128, numpy=
    array([[1.-1.j, 4.-4.j],
           [2.-2.j, 5.-5.j],
           [3.-3.j, 6.-6.j]])>
    """
    perm = None if perm is None else normalize.static_shape(perm)
    if conjugate:
        a = convert_to_tensor(a)
        if a.dtype.is_complex:
            return _conjugate_transpose(a, perm=perm)
    return _transpose(a, perm=perm)


@export("concat")
def concat(values, axis, name="concat"):
    """Joins tensors along an existing ``axis`` (``tf.concat``)."""
    return _concat(*values, axis=int(axis))


@export("stack")
def stack(values, axis=0, name="stack"):
    """Stacks tensors along a new ``axis`` (``tf.stack``). Along axis 0, values that are all
    Python numbers or NumPy arrays are converted as one list, as TensorFlow does first
    (``tf.stack([1, 2.5])`` is float32); tensors must share one dtype."""
    if int(axis) == 0 and values and not _contains_tensor(values):
        return convert_to_tensor(values)
    return _stack(*values, axis=int(axis))


@export("unstack")
def unstack(value, num=None, axis=0, name="unstack"):
    """Splits a tensor into a list along ``axis`` (``tf.unstack``)."""
    return list(_unstack(value, axis=int(axis)))


@export("split")
def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits a tensor into ``num_or_size_splits`` pieces along ``axis`` (``tf.split``)."""
    if isinstance(num_or_size_splits, (int, np.integer)):
        sections = int(num_or_size_splits)
    else:
        sizes = [int(s) for s in np.asarray(num_or_size_splits).reshape(-1)]
        sections = tuple(np.cumsum(sizes)[:-1].tolist())
    return list(_split(value, sections=sections, axis=int(axis)))


@export("pad")
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads a tensor; ``mode`` is 'CONSTANT', 'REFLECT' or 'SYMMETRIC' (``tf.pad``)."""
    return _pad(tensor, constant_values, paddings=np.asarray(paddings).tolist(), mode=mode)


def _pad_fn(x, c, paddings, mode):
    mode = mode.upper()
    if mode == "CONSTANT":
        return jnp.pad(x, paddings, constant_values=c)
    return jnp.pad(x, paddings, mode={"REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode])


@export("reverse")
def reverse(tensor, axis, name=None):
    """Reverses a tensor along the given axes (``tf.reverse``)."""
    return _reverse(tensor, axis=tuple(int(a) for a in np.atleast_1d(np.asarray(axis))))


@export("roll")
def roll(input, shift, axis, name=None):
    """Rolls elements along ``axis`` by ``shift`` (``tf.roll``)."""
    return _roll(input, shift=shift, axis=axis)


@export("sort")
def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sorts along ``axis``, 'ASCENDING' or 'DESCENDING' (``tf.sort``)."""
    return _sort(values, axis=int(axis), direction=direction)


@export("stop_gradient")
def stop_gradient(input, name=None):
    """Identity whose gradient is zero: values pass, gradients do not (``tf.stop_gradient``).

    Example:
        >>> import tapejax as tf
        >>> x = tf.Variable(2.0)
        >>> with tf.GradientTape() as t:
        ...     y = x * tf.stop_gradient(x)
        >>> print(t.gradient(y, x).numpy())
        2.0
    """
    # Not recorded: like TensorFlow, the tape sees a constant, so the gradient is None.
    note_barrier("stop_gradient", input)
    return Tensor(jax.lax.stop_gradient(to_array(input)))


# ---------------------------------------------------------------- indexing and gathers
_gather = defop(lambda p, i, axis=0, batch_dims=0: _gather_fn(p, i, axis, batch_dims), name="gather", static=("axis", "batch_dims"))
_gather_nd = defop(lambda p, i, batch_dims=0: _gather_nd_fn(p, i, batch_dims), name="gather_nd", static=("batch_dims",))
_getitem = defop(lambda x, *idx, spec: x[_decode_index(spec, idx)], name="getitem", static=("spec",))
_one_hot = defop(lambda i, on, off, depth, axis=-1, dtype=np.float32: jnp.where(jax.nn.one_hot(i, depth, axis=axis, dtype=bool), on, off).astype(dtype), name="one_hot", static=("depth", "axis", "dtype"))
# TensorFlow's gradient of an axis-0 gather w.r.t. its params is IndexedSlices.
register_sparse_gradient(_gather, when=lambda s: s["axis"] == 0 and s["batch_dims"] == 0)
_densify = defop(lambda values, indices, shape: to_dense(values, indices, shape), name="indexed_slices_to_dense", static=("shape",))


def _gather_fn(p, i, axis, batch_dims, xp=jnp):
    if batch_dims == 0:
        # An index out of range gives 0, as TensorFlow's GPU kernel (on a CPU it was refused: bounds)
        return xp.take(p, i, axis=axis) if xp is np else jnp.take(p, i, axis=axis, mode="fill", fill_value=0)
    if xp is np:  # strings, on the host: one batch row at a time
        return np.stack([_gather_fn(pp, ii, axis - 1, batch_dims - 1, np) for pp, ii in zip(p, i)])
    f = lambda pp, ii: _gather_fn(pp, ii, axis - 1, batch_dims - 1)
    return jax.vmap(f)(p, i)


def _gather_nd_fn(p, i, batch_dims, xp=jnp):
    if batch_dims:
        if xp is np:
            return np.stack([_gather_nd_fn(pp, ii, batch_dims - 1, np) for pp, ii in zip(p, i)])
        return jax.vmap(lambda pp, ii: _gather_nd_fn(pp, ii, batch_dims - 1))(p, i)
    where = tuple(xp.moveaxis(i, -1, 0))
    return p[where] if xp is np else p.at[where].get(mode="fill", fill_value=0)


def getitem(x, key):
    """``x[key]``: TensorFlow's indexing (``strided_slice``): integers, slices, ``...``,
    ``tf.newaxis`` and scalar integer tensors, a list read as a tuple; an index outside its
    dimension raises InvalidArgumentError. Array indices are op inputs, a boolean mask is
    ``tf.boolean_mask``."""
    if _is_bool_mask(key):
        return boolean_mask(x, key)
    spec, dyn = _encode_index(tuple(key) if type(key) is list else key)
    traced = _check_subscripts(_shape_of(x), spec, dyn)
    out = _getitem(x, *dyn, spec=spec)
    for k, d, n in traced:
        bounds.subscript(k, d, n, then=lambda: out)
    return out


def _check_subscripts(shape, spec, dyn):
    """Each scalar index in the dimension it indexes (``bounds.subscript``): the known ones
    now; returns the traced ones, ``(index, dimension, size)``, to check with the result."""
    traced = []
    d, it = 0, iter(dyn)
    for j, s in enumerate(spec):
        tag = s[0]
        if tag == "e":
            d = len(shape) - sum(1 for t in spec[j + 1:] if t[0] in "sid")
        elif tag == "s":
            d += 1
        elif tag != "n":
            k = next(it) if tag == "d" else s[1]
            if (tag == "i" and type(k) is int or tag == "d" and np.ndim(k._v if isinstance(k, _TensorBase) else k) == 0) \
                    and d < len(shape) and shape[d] is not None:
                if tag == "i":
                    bounds.subscript(k, d, shape[d])
                else:
                    traced.append((k, d, shape[d]))
            d += 1
    return traced


def _encode_index(key):
    """Indexing spec as hashable static data; array indices become op inputs."""
    if not isinstance(key, tuple):
        key = (key,)
    spec, dyn = [], []
    for k in key:
        if isinstance(k, _builtins.slice):
            spec.append(("s", freeze(k.start), freeze(k.stop), freeze(k.step)))
        elif k is None or k is Ellipsis:
            spec.append(("n",) if k is None else ("e",))
        elif isinstance(k, (bool, np.bool_)):
            spec.append(("i", bool(k)))
        elif isinstance(k, (int, np.integer)):
            spec.append(("i", int(k)))
        elif isinstance(k, _TensorBase) and k.ndim == 0 and not is_tracer(k._value) and k._value.dtype.kind in "iu":
            spec.append(("i", int(k)))
        else:
            spec.append(("d",))
            dyn.append(k)
    return tuple(spec), dyn


def _decode_index(spec, dyn):
    it = iter(dyn)
    out = []
    for s in spec:
        tag = s[0]
        if tag == "s":
            out.append(_builtins.slice(s[1], s[2], s[3]))
        elif tag == "n":
            out.append(None)
        elif tag == "e":
            out.append(Ellipsis)
        elif tag == "i":
            out.append(s[1])
        else:
            out.append(next(it))
    return tuple(out)


@export("gather")
def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Gathers slices of ``params`` at ``indices`` along ``axis`` (``tf.gather``); ragged
    ``indices`` (a RaggedTensor) give a RaggedTensor of the same rows."""
    if hasattr(indices, "with_flat_values") and not batch_dims and axis in (None, 0):
        return indices.with_flat_values(gather(params, indices.flat_values))
    axis = int(batch_dims if axis is None else axis)
    # TF's GatherV2 counts a negative batch_dims from the indices' rank, a negative axis from the params'
    batch_dims = int(batch_dims)
    if batch_dims < 0:
        batch_dims += len(_shape_of(indices))
    if axis < 0:
        axis += len(_shape_of(params))
    # TensorFlow's gather of a Variable's rows is its sparse_read; a message of a kernel given
    # tensors (the fast path) ends with " name: "
    kernel = "ResourceGather" if isinstance(params, Variable) and axis == batch_dims == 0 else "GatherV2"
    return bounds.gather(indices, _shape_of(params)[axis], kernel, name=bounds.fast_path(indices),
                         then=lambda: _gather(params, indices, axis=axis, batch_dims=int(batch_dims)))


def _shape_of(x):
    """``x``'s static shape: a Tensor's, a Variable's, a nested list's."""
    if type(x) is Tensor:
        return x._v.shape
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


@export("gather_nd")
def gather_nd(params, indices, batch_dims=0, name=None):
    """Gathers slices of ``params`` at multi-dimensional ``indices`` (``tf.gather_nd``): each
    row of ``indices``' last axis is the position of an element (or a slice) of ``params``; with
    ``batch_dims``, the first dimensions of both are a batch, and each batch row indexes its own.

    Example:
        >>> import tapejax as tf
        >>> tf.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]]).numpy().tolist()
        [3, 2]
        >>> tf.gather_nd([[1, 2], [3, 4]], [[1], [0]], batch_dims=1).numpy().tolist()
        [2, 3]
    """
    b, shape = int(batch_dims), _shape_of(params)
    if not shape:
        raise InvalidArgumentError(None, None, _kernel_message("GatherNd", "params must be at least a vector", name=""))
    return bounds.nd(indices, shape, "GatherNd", param=True, batch_dims=b, name="" if b else bounds.fast_path(indices),
                     then=lambda: _gather_nd(params, indices, batch_dims=b))


def _scatter_fn(kind):
    def fn(tensor, indices, updates):
        at = tensor.at[tuple(jnp.moveaxis(indices, -1, 0))]
        return at.add(-updates) if kind == "sub" else getattr(at, kind)(updates)
    return fn


_tensor_scatter = {kind: defop(_scatter_fn(kind), name=f"tensor_scatter_{kind}")
                   for kind in ("set", "add", "sub", "min", "max", "multiply", "divide")}   # the last two: Variable.scatter_mul/div


def _tensor_scatter_nd(kind, tf_op, tensor, indices, updates):
    tensor = convert_to_tensor(tensor)
    return bounds.nd(indices, _shape_of(tensor), tf_op, name=bounds.fast_path(indices, updates),
                     then=lambda: _tensor_scatter[kind](tensor, indices, cast(updates, tensor.dtype)))


@export("tensor_scatter_nd_update")
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """A copy of ``tensor`` with the slices at ``indices`` (``[..., K]``) replaced by ``updates``.

    Example:
        >>> import tapejax as tf
        >>> tf.tensor_scatter_nd_update([1, 2, 3, 4], [[1], [3]], [9, 8]).numpy().tolist()
        [1, 9, 3, 8]
    """
    return _tensor_scatter_nd("set", "TensorScatterUpdate", tensor, indices, updates)


@export("tensor_scatter_nd_add")
def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` added at ``indices`` (repeated indices add up).

    Example:
        >>> import tapejax as tf
        >>> tf.tensor_scatter_nd_add([1, 2, 3], [[0], [0]], [5, 5]).numpy().tolist()
        [11, 2, 3]
    """
    return _tensor_scatter_nd("add", "TensorScatterAdd", tensor, indices, updates)


@export("tensor_scatter_nd_sub")
def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` subtracted at ``indices``.

    Example:
        >>> import tapejax as tf
        >>> tf.tensor_scatter_nd_sub([1, 2, 3], [[2]], [3]).numpy().tolist()
        [1, 2, 0]
    """
    return _tensor_scatter_nd("sub", "TensorScatterSub", tensor, indices, updates)


@export("tensor_scatter_nd_min")
def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """``tensor`` with the element-wise minimum of it and ``updates`` at ``indices``.

    Example:
        >>> import tapejax as tf
        >>> tf.tensor_scatter_nd_min([1, 5, 3], [[1]], [2]).numpy().tolist()
        [1, 2, 3]
    """
    return _tensor_scatter_nd("min", "TensorScatterMin", tensor, indices, updates)


@export("tensor_scatter_nd_max")
def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """``tensor`` with the element-wise maximum of it and ``updates`` at ``indices``.

    Example:
        >>> import tapejax as tf
        >>> tf.tensor_scatter_nd_max([1, 5, 3], [[0]], [4]).numpy().tolist()
        [4, 5, 3]
    """
    return _tensor_scatter_nd("max", "TensorScatterMax", tensor, indices, updates)


@export("scatter_nd")
def scatter_nd(indices, updates, shape, name=None):
    """A tensor of ``shape``, zeros but ``updates`` at ``indices`` (repeated indices add up).

    Example:
        >>> import tapejax as tf
        >>> tf.scatter_nd([[1], [3]], [9, 8], [5]).numpy().tolist()
        [0, 9, 0, 8, 0]
    """
    shape = normalize.static_shape(shape)
    name = bounds.fast_path(indices, updates)
    updates = convert_to_tensor(updates)
    return bounds.nd(indices, shape, "ScatterNd", name=name, then=lambda: _tensor_scatter["add"](
        Tensor(jnp.zeros(shape, updates.dtype._np)), indices, updates))


_slice = defop(lambda x, begin, size: jax.lax.slice(x, begin, tuple(b + s for b, s in zip(begin, size))),
               name="slice", static=("begin", "size"))


@export("slice")
def slice(input_, begin, size, name=None):  # noqa: A001
    """The part of ``input_`` of ``size`` starting at ``begin`` (a size of -1 takes the rest).

    Example:
        >>> import tapejax as tf
        >>> tf.slice(tf.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1]).numpy().tolist()
        [[2, 3], [5, 6]]
    """
    x = convert_to_tensor(input_)
    shape = tuple(x.shape)
    begin = tuple(int(b) for b in normalize.static_shape(begin))
    size = tuple(d - b if s == -1 else int(s) for s, b, d in zip(normalize.static_shape(size), begin, shape))
    for k, (b, s, d) in enumerate(zip(begin, size, shape)):
        if not 0 <= b <= d:
            raise errors.InvalidArgumentError(None, None, _kernel_message(
                "Slice", f"Expected begin[{k}] in [0, {d}], but got {b}"))
        if not 0 <= s <= d - b:
            raise errors.InvalidArgumentError(None, None, _kernel_message(
                "Slice", f"Expected size[{k}] in [0, {d - b}], but got {s}"))
    return _slice(x, begin=begin, size=size)


def _masked_fn(x, idx, axis, k):
    merged = x.reshape(x.shape[:axis] + (-1,) + x.shape[axis + k:])
    return jnp.take(merged, idx, axis=axis)


_masked = defop(_masked_fn, name="boolean_mask", static=("axis", "k"))


@export("boolean_mask")
def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The entries of ``tensor`` where the K-D boolean ``mask`` is True, over dimensions
    ``axis .. axis+K-1`` (``tf.boolean_mask``; also ``tensor[mask]``). Differentiable in ``tensor``.

    The result's size depends on the mask's values, so the mask must be concrete: inside a
    ``tf.function`` (one XLA program, static shapes) use ``tf.where(mask, tensor, 0)`` instead.

    Example:
        >>> import tapejax as tf
        >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> tf.boolean_mask(x, [True, False, True]).numpy()
        array([[1., 2.],
               [5., 6.]], dtype=float32)
        >>> x[x > 2.5].numpy()
        array([3., 4., 5., 6.], dtype=float32)
    """
    m = mask._value if isinstance(mask, _TensorBase) else mask
    if is_tracer(m):
        raise ValueError(
            "tf.boolean_mask (and tensor[bool_mask]) inside a tf.function: the result's shape depends on "
            "the mask's values, and a compiled program needs static shapes. Keep the shape with "
            "tf.where(mask, tensor, tf.zeros_like(tensor)), or mask outside the function.")
    m = np.asarray(m)
    if m.dtype != np.bool_:
        raise TypeError(f"boolean_mask needs a boolean mask, got dtype {m.dtype}.")
    x = tensor if isinstance(tensor, _TensorBase) else Tensor(to_array(tensor))
    shape = tuple(x.shape)
    axis = 0 if axis is None else int(axis)
    axis = axis + len(shape) if axis < 0 else axis
    k = m.ndim
    if k == 0 or shape[axis:axis + k] != m.shape:
        raise ValueError(f"boolean_mask: the mask's shape {m.shape} must equal the tensor's dimensions "
                         f"{axis}..{axis + k - 1}, which are {shape[axis:axis + k]} (tensor shape {shape}).")
    idx = np.flatnonzero(m.reshape(-1)).astype(np.int32)
    return _masked(x, Tensor(from_numpy(idx)), axis=axis, k=k)


def _is_bool_mask(key):
    if isinstance(key, _TensorBase):
        return key._value.dtype == np.bool_ and key.ndim > 0
    if isinstance(key, (np.ndarray, jax.Array)):
        return key.dtype == np.bool_ and key.ndim > 0
    if isinstance(key, list) and key:
        return all(isinstance(k, (bool, np.bool_)) for k in np.ravel(np.asarray(key, dtype=object)))
    return False


@export("one_hot")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encodes integer ``indices`` into ``depth`` classes (``tf.one_hot``)."""
    dt = _dtypes.np_dtype(dtype) if dtype is not None else (
        to_array(on_value).dtype if on_value is not None else np.dtype(np.float32))
    return _one_hot(indices, 1 if on_value is None else on_value, 0 if off_value is None else off_value,
                    depth=int(depth), axis=-1 if axis is None else int(axis), dtype=dt)


# ---------------------------------------------------------------- constructors (no gradients)
@export("constant")
def constant(value: Any, dtype: Any = None, shape: Optional[Sequence[int]] = None,
             name: Optional[str] = None) -> Tensor:
    """Creates a Tensor from a Python number, list, numpy array or tensor.

    Python floats become float32 and ints int32, as in TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> tf.constant([1, 2])
        <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """
    if type(value) is Tensor and _promotion.mode is None:   # (under TF's new type promotion: its rules below)
        if is_tracer(value._v):
            raise TypeError("Expected any non-tensor type, but got a tensor instead.")
        if dtype is not None and _dtypes.as_dtype(dtype) != value.dtype:
            raise TypeError(f"Expected tensor {value.numpy()} with dtype {_dtypes.as_dtype(dtype)!r}, but got dtype "
                            f"{value.dtype!r}.")
        if shape is None:   # TF gives the tensor itself: a tape still sees through it
            return value
    if _promotion.mode is not None:    # TF's new type promotion: Python data makes weak tensors
        return _weak.constant(value, dtype, lambda v, dt: _constant(v, dt, shape))
    return _constant(value, dtype, shape)


def _constant(value, dtype, shape):
    if dtype is not None:
        check_python_kinds(value, dtype)
    v = to_array(value, dtype)
    if shape is not None:
        shape = normalize.static_shape(shape)
        n = int(np.prod(shape, dtype=np.int64))
        if v.size not in (1, n):
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor {np.asarray(v)} (converted "
                            f"from {value}) has {v.size} elements, but got `shape` {tuple(shape)} with {n} elements).")
        v = (np if v.dtype == object else jnp).broadcast_to(v, shape) if v.size == 1 else v.reshape(shape)
    return Tensor(v)


@export("is_tensor")
def is_tensor(x):
    """Whether ``x`` is a Tensor or Variable (or a RaggedTensor / SparseTensor, TensorFlow's composite tensors)."""
    return isinstance(x, _TensorBase) or getattr(type(x), "_tf_composite", False)


@export("convert_to_tensor")
def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: Optional[str] = None) -> Tensor:
    """Returns ``value`` if it is a Tensor, else converts it (a Variable is read; an IndexedSlices is made dense)."""
    if isinstance(value, IndexedSlices):
        value = _dense_of(value)
    if type(value) is Tensor and (dtype is None or value.dtype == dtype):
        return value
    if isinstance(value, _TensorBase):
        if dtype is not None:
            check_tensor_dtype(value, dtype)    # TensorFlow does not cast: a ValueError
        return identity(value)
    if dtype is None and dtype_hint is not None and not isinstance(value, (np.ndarray, jax.Array)):
        try:
            return Tensor(to_array(value, dtype_hint))
        except (TypeError, ValueError):
            pass  # a hint only: the value's own dtype (text stays a string tensor)
    if dtype is not None:
        check_python_kinds(value, dtype)
    return Tensor(to_array(value, dtype))


def _empty_strings(shape):
    return Tensor(string_array(np.full(shape, b"", object)))


@export("zeros")
def zeros(shape, dtype=_dtypes.float32, name=None):
    """A tensor of zeros (float32 by default; empty strings for ``tf.string``)."""
    if hasattr(shape, "_tf_with_flat_values"):
        return shape._tf_with_flat_values(lambda inner: zeros(inner, dtype))
    dt = _dtypes.np_dtype(dtype)
    if dt == object:
        return _empty_strings(normalize.static_shape(shape))
    return Tensor(jnp.zeros(normalize.static_shape(shape), dt))


@export("ones")
def ones(shape, dtype=_dtypes.float32, name=None):
    """A tensor of ones (float32 by default)."""
    if hasattr(shape, "_tf_with_flat_values"):
        return shape._tf_with_flat_values(lambda inner: ones(inner, dtype))
    return Tensor(jnp.ones(normalize.static_shape(shape), _dtypes.np_dtype(dtype)))


@export("zeros_like")
def zeros_like(input, dtype=None, name=None):
    """Zeros with the shape (and dtype, unless given) of ``input`` (empty strings for strings)."""
    v = to_array(input)
    if (v.dtype if dtype is None else _dtypes.np_dtype(dtype)) == object:
        return _empty_strings(v.shape)
    return Tensor(jnp.zeros_like(v, dtype=_dtypes.np_dtype(dtype)))


@export("ones_like")
def ones_like(input, dtype=None, name=None):
    """Ones with the shape (and dtype, unless given) of ``input``."""
    v = to_array(input)
    if (v.dtype if dtype is None else _dtypes.np_dtype(dtype)) == object:
        raise errors.InvalidArgumentError(None, None, "Value for attr 'T' of string is not in the list of "
                                          "allowed values of OnesLike: strings have no one [Op:OnesLike]")
    return Tensor(jnp.ones_like(v, dtype=_dtypes.np_dtype(dtype)))


@export("fill")
def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value`` (a number or a string)."""
    if hasattr(dims, "_tf_with_flat_values"):
        return dims._tf_with_flat_values(lambda inner: fill(inner, value))
    v = to_array(value)
    if v.dtype == object:
        return Tensor(string_array(np.full(normalize.static_shape(dims), v[()], object)))
    return Tensor(jnp.full(normalize.static_shape(dims), v, v.dtype))


@export("eye", "linalg.eye")
def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """An identity matrix (optionally batched), float32 by default."""
    e = jnp.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=_dtypes.np_dtype(dtype))
    if batch_shape is not None:
        e = jnp.broadcast_to(e, normalize.static_shape(batch_shape) + e.shape)
    return Tensor(e)


@export("linspace")
def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (``tf.linspace``)."""
    s, e = to_array(start), to_array(stop)
    dt = jnp.result_type(s, e)
    if dt.kind in "iub":
        dt = np.dtype(np.float64 if jax.config.jax_enable_x64 else np.float32)  # TF: float64 for ints
    return Tensor(jnp.linspace(s, e, int(num), axis=axis, dtype=dt))


@export("range")
def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """Like Python's range, as a Tensor (int32 for ints, float32 for floats)."""
    if limit is None:
        start, limit = 0, start
    # Python numbers stay Python numbers: inside a trace, to_array would stage them.
    vals = [v if isinstance(v, (int, float, np.number)) else to_array(v) for v in (start, limit, delta)]
    if dtype is None:
        # TF: int32 for Python ints, float32 for Python floats, else the tensors' dtype.
        dtype = jnp.result_type(*[_python_default_dtype(v) if isinstance(v, (int, float)) else v for v in vals])
    # A bound known while tracing (tf.shape(x)[0]) is used as TensorFlow's shape inference would.
    vals = [normalize.static_dim(a) if isinstance(a, _TensorBase) and is_tracer(a._value) else np.asarray(v)
            for a, v in zip((start, limit, delta), vals)]
    if not is_tracer(vals[2]) and np.ndim(vals[2]) == 0 and vals[2] == 0:
        raise InvalidArgumentError(None, None, f"Requires delta != 0: {vals[2]}")
    return Tensor(jnp.arange(vals[0], vals[1], vals[2], dtype=_dtypes.np_dtype(dtype)))


def _per_call(v):
    """Whether ``v`` is strings whose shape is known only per call (made by string ops from a
    tf.function's string arguments, or an argument of unknown dimensions): their shape is then
    computed on the host for each call (see tapejax._core.host)."""
    return type(v) is HostValue and not v.known


@export("shape")
def shape(input, out_type=_dtypes.int32, name=None):
    """The shape of ``input`` as an int32 tensor (``tf.shape``); a RaggedTensor's is a
    ``tf.experimental.DynamicRaggedShape``."""
    if hasattr(input, "_tf_shape"):
        return input._tf_shape(out_type)
    v = to_array(input)
    if _per_call(v):
        return _host.call("tf.shape", shape, input, out_type)
    return _shape_value(v.shape, out_type)


def _shape_value(dims, out_type):
    """A tensor of dimensions (a tuple, or one), whose value is known while tracing (TensorFlow's
    shape inference): ``tf.zeros(tf.shape(x))`` needs it. Unknown dimensions are values of the
    program."""
    dt = _dtypes.np_dtype(out_type)
    if all(type(d) is int for d in (dims if isinstance(dims, tuple) else (dims,))):
        known = np.asarray(dims, dt)
        t = Tensor(jnp.asarray(known))
    else:
        known = np.asarray(dims, object)
        t = Tensor(jnp.array(dims, dt))
    if is_tracer(t._value):
        _state.set_known(t, known)
    return t


@export("size")
def size(input, out_type=_dtypes.int32, name=None):
    """The number of elements of ``input`` as a tensor (``tf.size``)."""
    v = to_array(input)
    if _per_call(v):
        return _host.call("tf.size", size, input, out_type)
    n = 1
    for d in v.shape:
        n = n * d
    return _shape_value(n, out_type)


@export("rank")
def rank(input, name=None):
    """The number of dimensions of ``input`` as a tensor (``tf.rank``)."""
    return Tensor(jnp.asarray(to_array(input).ndim, jnp.int32))



def _dense_of(value):
    """An IndexedSlices as a dense tensor, through a recorded op (so outer tapes see it)."""
    if value.dense_shape is None:
        return Tensor(jnp.asarray(value))  # raises the explanatory ValueError
    return _densify(value.values, value.indices, shape=value.shape)



@export("repeat")
def repeat(input, repeats, axis=None, name=None):
    """Repeats each element (or slice along ``axis``) ``repeats`` times (``tf.repeat``).

    Args:
        input: a tensor.
        repeats: an int, or a 1-D list/tensor with one count per slice along ``axis``.
            The output's size depends on it, so inside a ``tf.function`` it must be
            a Python value or a constant, not a traced tensor.
        axis: the axis to repeat along; ``None`` flattens ``input`` first.

    Returns:
        The repeated tensor.

    Raises:
        ValueError: ``repeats`` of the wrong length or rank, ``axis`` out of range,
            or ``repeats`` traced inside a ``tf.function``.
        TypeError: non-integer ``repeats``.
        tf.errors.InvalidArgumentError: a negative count.

    Example:
        >>> import tapejax as tf
        >>> tf.repeat([[1, 2], [3, 4]], [1, 3], axis=0).numpy().tolist()
        [[1, 2], [3, 4], [3, 4], [3, 4]]
        >>> tf.repeat([1, 2], 2).numpy().tolist()
        [1, 1, 2, 2]
    """
    # Python counts stay numpy: inside a trace, to_array would stage them as a traced value.
    r = repeats._value if isinstance(repeats, _TensorBase) else repeats
    if is_tracer(r):
        raise ValueError("tf.repeat inside a tf.function needs concrete repeats: the output's size depends on "
                         "them, and a compiled program needs static shapes. Pass a Python int/list or a "
                         "tf.constant built outside the function.")
    r = np.asarray(r)
    if r.dtype.kind not in "iu":
        raise TypeError(f"Argument `tensor` (name: repeats) must be of type integer. Received {repeats!r} of "
                        f"dtype {r.dtype}. Pass integer counts.")
    if r.ndim > 1:
        raise ValueError(f"Shape {r.shape} must have rank at most 1: repeats is one count, or one count per slice.")
    if (r < 0).any():
        raise InvalidArgumentError(None, None, f"tf.repeat: repeats must be >= 0, got {r.tolist()}.")
    x = input if isinstance(input, _TensorBase) else Tensor(to_array(input))
    if axis is None:
        x, axis = reshape(x, shape=(-1,)), 0
    axis = int(axis)
    if not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
        raise ValueError(f"axis={axis} out of bounds: expected {-max(x.ndim, 1)}<=axis<{max(x.ndim, 1)}.")
    if x.ndim == 0:
        x = reshape(x, shape=(1,))
    axis %= x.ndim
    if r.ndim == 1 and r.size != 1 and r.size != x.shape[axis]:
        raise ValueError(f"Dimensions {x.shape[axis]} and {r.size} are not compatible: repeats needs one count "
                         f"per slice along axis {axis}.")
    counts = int(r.reshape(-1)[0]) if r.size == 1 else tuple(int(c) for c in r)
    return _repeat(x, repeats=counts, axis=axis)



@export("get_static_value")
def get_static_value(tensor, partial=False):
    """The value of ``tensor`` as numpy if it is known without running a program, else None
    (``tf.get_static_value``): a concrete tensor gives its value, a traced one (inside a
    ``tf.function``) or a Variable gives None, and a non-tensor is returned as is.

    Example:
        >>> import tapejax as tf
        >>> tf.get_static_value(tf.constant([1, 2]))
        array([1, 2], dtype=int32)
        >>> @tf.function
        ... def f(x):
        ...     return tf.get_static_value(x) is None
        >>> f(tf.constant(1.0))
        <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """
    if isinstance(tensor, Variable):
        return None  # its value can change: TensorFlow does not fold it
    if isinstance(tensor, IndexedSlices):
        return None
    if not isinstance(tensor, _TensorBase):
        return tensor
    v = tensor._value
    return None if is_tracer(v) else np.asarray(v)


@export("meshgrid")
def meshgrid(*args, **kwargs):
    """N-D coordinate grids of 1-D coordinate vectors (``tf.meshgrid``).

    Args:
        *args: tensors of coordinates (flattened), all of one dtype.
        indexing: ``'xy'`` (default, Cartesian: the first two output axes are
            swapped) or ``'ij'`` (matrix indexing).

    Returns:
        A list of N tensors of rank N.

    Raises:
        ValueError: an ``indexing`` other than 'xy' or 'ij'.
        tf.errors.InvalidArgumentError: inputs of different dtypes.

    Example:
        >>> import tapejax as tf
        >>> X, Y = tf.meshgrid([1, 2, 3], [4, 5])
        >>> X.numpy().tolist(), Y.numpy().tolist()
        ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keywords for meshgrid: {sorted(kwargs)}. Only 'indexing' and 'name' are accepted.")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'.")
    if not args:
        return []
    xs = [a if isinstance(a, _TensorBase) else Tensor(to_array(a)) for a in args]
    dts = {np.dtype(x._value.dtype) for x in xs}
    if len(dts) > 1:
        raise InvalidArgumentError(None, None, f"tf.meshgrid: all inputs must have one dtype, got "
                                   f"{sorted(d.name for d in dts)}. Cast them first with tf.cast.")
    return list(_meshgrid(*xs, indexing=indexing))
