"""tf.TensorArray: a list of same-typed tensors that also works as a compiled loop's carry.

Two representations, one meaning:

- *list*: a Python list of Tensors (``None`` where nothing was written), as TensorFlow's
  eager TensorArray. Used eagerly and inside a ``tf.function`` while indices are Python
  numbers. Every element is an ordinary Tensor, so tapes differentiate ``stack``/``read``
  through the existing ops, and memory is one element per write.
- *buffer*: one preallocated Tensor of shape ``[size] + element_shape``, updated with
  ``.at[i].set`` (a tape op). Used when an index is only known when the compiled program
  runs (a ``tf.while_loop`` counter) and whenever the array is a JAX pytree leaf-set (a loop
  carry, a ``tf.function`` argument or result). Unwritten slots read as zeros, as TensorFlow
  does for an array whose element shape is known.

JAX needs the size and the element shape of a loop carry before the loop runs. The size is
the ``size`` argument; the element shape comes from ``element_shape``, the first write, or --
when the array enters a traced loop with nothing written yet -- from one probe run of the loop
body (:func:`infer_loop_shapes`). A ``dynamic_size`` array grows at indices known at trace
time, and at a loop's counter when the loop's range is known (``for i in tf.range(n)`` with
``n`` a Python int or a static shape, :class:`counted_loop`): the probe run grows it to the
counter's last value before the loop. Growing at another traced index raises a ``ValueError``
that says to preallocate.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._core import checks as _checks, dtypes as _dtypes, state as _state
from .. import errors as errors
from .._core.tensor import Tensor, TensorShape, _TensorBase, is_tracer
from .. import ops as _ops
from ..extend import defop

_set = defop(lambda buf, i, v: buf.at[i].set(v), name="tensor_array_write")
_get = defop(lambda buf, i: jax.lax.dynamic_index_in_dim(buf, i, 0, keepdims=False), name="tensor_array_read")
_scatter = defop(lambda buf, idx, v: buf.at[idx].set(v), name="tensor_array_scatter")

_TRACED_GROW = (
    "tf.TensorArray(dynamic_size=True) written at index {i} past its size {n}, and the index is only "
    "known when the compiled function runs (a tf.while_loop counter or a loop over tf.range in a "
    "tf.function). tapejax compiles loops with JAX, which preallocates a loop's arrays: create the "
    "array with the loop's length, e.g. tf.TensorArray(tf.float32, size=n) with n a Python int or a "
    "static shape (x.shape[0]).")
_UNKNOWN_SHAPE = (
    "tf.TensorArray: the element shape is unknown (nothing was written and no element_shape was "
    "given), so the array cannot be preallocated for {what}. Pass "
    "element_shape=..., e.g. tf.TensorArray(tf.float32, size=n, element_shape=[batch, units]).")


# The compiled loops being traced: each one's counter's last value (None where unknown), and
# the counters of those with one: id(Tensor) -> (Tensor, last).
_loops = []
_loop_counters = {}


class counted_loop:
    """While a loop is traced: its counter takes every value up to ``last`` (a known range and
    no ``break``; None where unknown). A ``dynamic_size`` array written at the counter (the
    Tensor :func:`loop_counter` marked) ends with ``last + 1`` elements, as TensorFlow's."""

    def __init__(self, last):
        self._last, self._marked = last, []

    def __enter__(self):
        _loops.append(self)
        return self

    def __exit__(self, *exc):
        _loops.remove(self)
        for key in self._marked:
            _loop_counters.pop(key, None)


def loop_counter(t):
    """``t``, marked as the counter of the innermost loop being traced (see :class:`counted_loop`)."""
    loop = _loops[-1] if _loops else None
    if loop is not None and loop._last is not None:
        _loop_counters[id(t)] = (t, loop._last)
        loop._marked.append(id(t))
    return t


def _index(i, what):
    """A Python int for a concrete index, else the traced int32 array."""
    v = i._value if isinstance(i, _TensorBase) else i
    if is_tracer(v):
        return v.astype(jnp.int32) if v.dtype != jnp.int32 else v
    a = np.asarray(v)
    if a.ndim != 0 or a.dtype.kind not in "iu":
        raise TypeError(f"TensorArray.{what}: the index must be a scalar integer, got {i!r}.")
    return int(a)


def _check_bounds(buf, i, what, dynamic_size=False):
    """At run time, an out-of-range traced index raises (``.at[i].set`` would drop the write)."""
    n = buf.shape[0]

    def error(i):
        if dynamic_size and i >= n:
            return errors.InvalidArgumentError(None, None, _TRACED_GROW.format(i=int(i), n=n))
        verb = "modify" if what == "write" else "access"   # TensorFlow's TensorList kernels
        return errors.InvalidArgumentError(None, None, f"Trying to {verb} element {int(i)} in a list with {n} elements.")

    _checks.stage_error((i < 0) | (i >= n), error, i)


class TensorArray:
    """A list of tensors of one dtype, written and read by index (``tf.TensorArray``).

    Use the returned array of every write: ``ta = ta.write(i, x)``. It works eagerly, inside
    ``tf.function``, and as a ``tf.while_loop`` variable; reads, ``stack`` and ``gather``
    are differentiable under a GradientTape.

    Args:
        dtype: the elements' dtype.
        size: the number of elements (a Python int or a concrete scalar tensor).
        dynamic_size: whether writes past ``size`` grow the array.
        clear_after_read: whether a read clears the element (a second read of it raises).
        element_shape: the elements' shape, if known (needed to preallocate an array that
            enters a compiled loop before anything is written, when the loop cannot tell).
        infer_shape: whether the first write fixes the element shape.

    Example:
        >>> import tapejax as tf
        >>> ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
        >>> ta = ta.write(0, 10)
        >>> ta = ta.write(1, 20)
        >>> ta.read(1)
        <tf.Tensor: shape=(), dtype=float32, numpy=20.0>
        >>> ta.stack()
        <tf.Tensor: shape=(2,), dtype=float32, numpy=array([10., 20.], dtype=float32)>
        >>> @tf.function
        ... def fibonacci(n):
        ...     ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        ...     ta = ta.unstack([0., 1.])
        ...     for i in range(2, n):
        ...         ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        ...     return ta.stack()
        >>> fibonacci(7)
        <tf.Tensor: shape=(7,), dtype=float32, numpy=array([0., 1., 1., 2., 3., 5., 8.], dtype=float32)>
    """

    __slots__ = ("_dtype", "_elems", "_buffer", "_dynamic_size", "_clear_after_read", "_element_shape",
                 "_infer_shape", "_cleared")

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if handle is not None or flow is not None:
            raise ValueError("TensorArray handles and flows are TensorFlow graph internals; tapejax has none. "
                             "Create the array with tf.TensorArray(dtype, size=...).")
        if size is None:
            raise ValueError("Size must be declared for TensorArrays: tf.TensorArray(dtype, size=n) "
                             "(size=0 with dynamic_size=True for a growing array).")
        sv = size._value if isinstance(size, _TensorBase) else size
        if is_tracer(sv) and isinstance(size, _TensorBase):
            known = _state.known_value(size)     # tf.shape(x)[0] of a static shape
            sv = sv if known is None or known.dtype == object else known
        if is_tracer(sv):
            raise ValueError(
                "tf.TensorArray: the size is a tensor computed inside the compiled function, so it is not "
                "known when the function is traced, and JAX preallocates arrays with a static size. Use a "
                "static size, e.g. x.shape[0] instead of tf.shape(x)[0], or a Python int.")
        self._dtype = _dtypes.as_dtype(dtype)
        self._elems = [None] * int(np.asarray(sv))
        self._buffer = None
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape)
        self._element_shape = None if element_shape is None else tuple(TensorShape(element_shape))
        self._cleared = set()

    # -- properties -----------------------------------------------------------

    @property
    def dtype(self):
        """The elements' dtype."""
        return self._dtype

    @property
    def element_shape(self):
        """The elements' shape (``None`` while unknown)."""
        return None if self._element_shape is None else TensorShape(self._element_shape)

    @property
    def dynamic_size(self):
        """Whether writes past the size grow the array."""
        return self._dynamic_size

    def _size(self):
        return self._buffer.shape[0] if self._buffer is not None else len(self._elems)

    def size(self, name=None):
        """The number of elements, as an int32 scalar Tensor."""
        return Tensor(jnp.asarray(self._size(), jnp.int32))

    def identity(self, name=None):
        """The array itself (TF's graph-ordering identity)."""
        return self

    def close(self, name=None):
        """Drops every element."""
        self._elems, self._buffer = [], None

    def __repr__(self):
        return (f"<tf.TensorArray dtype={self._dtype.name} size={self._size()} "
                f"element_shape={self.element_shape}>")

    # -- writing ----------------------------------------------------------------

    def _as_tensor(self, value):
        """``value`` as a Tensor of the array's dtype. Python data converts to it when no value
        is lost (``10`` into float32, as TF's preferred dtype); a Tensor must have it."""
        t = value if type(value) is Tensor else _ops.convert_to_tensor(value)  # a Variable is read now
        if t.dtype != self._dtype and not isinstance(value, _TensorBase) and np.can_cast(
                t.dtype.as_numpy_dtype, self._dtype.as_numpy_dtype, casting="same_kind"):
            t = _ops.cast(t, self._dtype)
        if t.dtype != self._dtype:
            raise errors.InvalidArgumentError(
                None, None, f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                f"{t.dtype.name}. Cast the value first: tf.cast(value, tf.{self._dtype.name}).")
        return t

    def _convert(self, value):
        t = self._as_tensor(value)
        shape = tuple(t.shape)
        if self._element_shape is not None:
            if not TensorShape(self._element_shape).is_compatible_with(shape):
                raise ValueError(f"Incompatible shape for value ({TensorShape(shape)}), expected "
                                 f"({TensorShape(self._element_shape)}): with infer_shape=True every "
                                 "element of a TensorArray has the same shape.")
        if self._infer_shape:
            self._element_shape = shape
        return t

    def write(self, index, value, name=None):
        """Writes ``value`` at ``index``; returns the array (use it: ``ta = ta.write(i, x)``)."""
        i = _index(index, "write")
        counter = _loop_counters.get(id(index))
        if isinstance(i, int):
            self._grow(i)
        elif counter is not None and counter[0] is index and self._dynamic_size:
            self._grow(counter[1])   # in the probe run (infer_loop_shapes); a no-op in the loop
        t = self._convert(value)
        if isinstance(i, int) and self._buffer is None:
            self._elems[i] = t
            self._cleared.discard(i)
            return self
        if not isinstance(i, int):
            self._to_buffer(traced_index=i, what="a write at a traced index")
            _check_bounds(self._buffer._value, i, "write", self._dynamic_size)
        self._buffer = _set(self._buffer, Tensor(jnp.asarray(i, jnp.int32)), t)
        return self

    def _grow(self, i):
        if i < 0:
            raise errors.OutOfRangeError(None, None, f"Writing to negative indices (index {i}) is not allowed.")
        n = self._size()
        if i < n:
            return
        if not self._dynamic_size:
            raise errors.OutOfRangeError(
                None, None, f"Tried to write to index {i} but array is not resizeable and size is: {n}. "
                "Create it with a larger size or dynamic_size=True.")
        if self._buffer is None:
            self._elems.extend([None] * (i - n + 1))
        else:
            pad = _ops.zeros([i - n + 1] + list(self._element_shape), self._dtype)
            self._buffer = _ops.concat([self._buffer, pad], 0)

    def _to_buffer(self, traced_index=None, what="a compiled loop"):
        """Switches to the preallocated representation (a no-op when already there)."""
        if self._buffer is not None:
            return
        if traced_index is not None and not isinstance(traced_index, int) and self._dynamic_size and not self._elems:
            raise ValueError(_TRACED_GROW.format(i="(traced)", n=0))
        if self._element_shape is None or None in self._element_shape:
            raise ValueError(_UNKNOWN_SHAPE.format(what=what))
        if any(e is not None and tuple(e.shape) != self._element_shape for e in self._elems):
            raise ValueError("tf.TensorArray: elements of different shapes (infer_shape=False) cannot be "
                             f"preallocated for {what}; write elements of one shape.")
        zero = None
        parts = []
        for e in self._elems:
            if e is None:
                zero = zero if zero is not None else _ops.zeros(list(self._element_shape), self._dtype)
                e = zero
            parts.append(e)
        self._buffer = (_ops.stack(parts) if parts else
                        _ops.zeros([0] + list(self._element_shape), self._dtype))
        self._elems = None
        self._cleared = set()

    def unstack(self, value, name=None):
        """Writes ``value[i]`` at index ``i``; the array's size becomes ``len(value)``."""
        value = self._convert_many(value)
        n = value.shape[0]
        if n > self._size() and not self._dynamic_size:
            raise ValueError(f"Cannot unstack {n} tensors into a TensorArray of static size {self._size()}. "
                             "Create it with size=len(value) or dynamic_size=True.")
        self._buffer = None
        self._elems = _ops.unstack(value)
        self._cleared = set()
        return self

    def _convert_many(self, value):
        t = self._as_tensor(value)
        if t.ndim == 0:
            raise ValueError("TensorArray.unstack/scatter needs a value with a leading dimension, got a scalar.")
        elem = tuple(t.shape[1:])
        if self._element_shape is not None and not TensorShape(self._element_shape).is_compatible_with(elem):
            raise ValueError(f"Incompatible shape for value ({TensorShape(elem)}), expected "
                             f"({TensorShape(self._element_shape)}).")
        if self._infer_shape:
            self._element_shape = elem
        return t

    def scatter(self, indices, value, name=None):
        """Writes ``value[k]`` at ``indices[k]`` for every k; returns the array."""
        value = self._convert_many(value)
        iv = indices._value if isinstance(indices, _TensorBase) else indices
        if not is_tracer(iv):
            idx = [int(k) for k in np.asarray(iv).reshape(-1)]
            if len(idx) != value.shape[0]:
                raise ValueError(f"TensorArray.scatter: {len(idx)} indices for {value.shape[0]} values.")
            for k in idx:
                self._grow(k)
            if self._buffer is None:
                for k, v in zip(idx, _ops.unstack(value)):
                    self._elems[k] = v
                    self._cleared.discard(k)
                return self
        self._to_buffer(traced_index=iv, what="a scatter at traced indices")
        self._buffer = _scatter(self._buffer, indices, value)
        return self

    def split(self, value, lengths, name=None):
        """Splits ``value`` along its first axis into pieces of ``lengths``, one per element."""
        lengths = [int(k) for k in np.asarray(lengths).reshape(-1)]
        t = self._as_tensor(value)
        if t.ndim == 0:
            raise errors.InvalidArgumentError(
                None, None, "Expected value to be at least a vector, but received shape: []")
        if sum(lengths) != t.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                f"{sum(lengths)} and value's shape is: {list(t.shape)}")
        if not self._dynamic_size and len(lengths) != self._size():
            raise errors.InvalidArgumentError(
                None, None, f"TensorArray's size is not equal to the size of lengths ({self._size()} vs. "
                f"{len(lengths)}), and the TensorArray is not marked as dynamically resizeable.")
        self._buffer = None
        self._elems = _ops.split(t, lengths)
        self._cleared = set()
        self._element_shape = None
        return self

    # -- reading ----------------------------------------------------------------

    def _zero(self, i):
        if self._element_shape is None or None in self._element_shape:
            raise ValueError(
                f"Could not read from TensorArray index {i}: nothing was written there and the element "
                "shape is not fully defined, so no zeros can stand in for it. Write the index first, or "
                "give element_shape=... when creating the array.")
        return _ops.zeros(list(self._element_shape), self._dtype)

    def read(self, index, name=None):
        """The element at ``index`` (zeros of the element shape if never written)."""
        i = _index(index, "read")
        if self._buffer is None and isinstance(i, int):
            n = len(self._elems)
            if i < 0:
                raise errors.OutOfRangeError(None, None, f"Reading from negative indices (index {i}) is not allowed.")
            if i >= n:
                raise errors.OutOfRangeError(None, None, f"Tried to read from index {i} but array size is: {n}")
            t = self._elems[i]
            if t is None:
                if i in self._cleared:
                    raise errors.InvalidArgumentError(
                        None, None, f"Could not read index {i} twice because it was cleared after a previous "
                        "read (perhaps try setting clear_after_read = false?)")
                t = self._zero(i)
            # TF2's graph TensorArray (inside tf.function) ignores clear_after_read; the eager one clears.
            if self._clear_after_read and not _state.tracing():
                self._elems[i] = None
                self._cleared.add(i)
            return t
        self._to_buffer(what="a read at a traced index")
        if isinstance(i, int):
            if not 0 <= i < self._size():
                raise errors.OutOfRangeError(
                    None, None, f"Tried to read from index {i} but array size is: {self._size()}")
            i = jnp.asarray(i, jnp.int32)
        else:
            _check_bounds(self._buffer._value, i, "read")
        return _get(self._buffer, Tensor(i))

    def stack(self, name=None):
        """All elements stacked along a new first axis (unwritten ones as zeros)."""
        if self._buffer is not None:
            return self._buffer
        if not self._elems:
            if self._element_shape is None or None in self._element_shape:
                raise ValueError("Tried to stack elements of an empty TensorArray with a non-fully-defined "
                                 "element_shape: give element_shape=... when creating it.")
            return _ops.zeros([0] + list(self._element_shape), self._dtype)
        return _ops.stack([self._zero(i) if e is None else e for i, e in enumerate(self._elems)])

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked along a new first axis."""
        iv = indices._value if isinstance(indices, _TensorBase) else indices
        if self._buffer is None and not is_tracer(iv):
            idx = [int(k) for k in np.asarray(iv).reshape(-1)]
            for k in idx:
                if not 0 <= k < len(self._elems):
                    raise errors.OutOfRangeError(
                        None, None, f"Tried to gather index {k} but array size is: {len(self._elems)}")
            return _ops.stack([self._zero(k) if self._elems[k] is None else self._elems[k] for k in idx])
        self._to_buffer(what="a gather at traced indices")
        return _ops.gather(self._buffer, indices)

    def concat(self, name=None):
        """All elements joined along their first axis."""
        if self._buffer is not None:
            b = self._buffer
            if b.ndim < 2:
                raise errors.InvalidArgumentError(
                    None, None, "Concat saw a scalar shape at index 0 but requires at least vectors.")
            return _ops.reshape(b, [-1] + list(b.shape[2:]))
        parts = [self._zero(i) if e is None else e for i, e in enumerate(self._elems)]
        for i, p in enumerate(parts):
            if p.ndim == 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Concat saw a scalar shape at index {i} but requires at least vectors.")
        return _ops.concat(parts, 0)

    def grad(self, source, flow=None, name=None):
        """Not needed: tapes differentiate TensorArray reads directly (raises NotImplementedError)."""
        raise NotImplementedError("TensorArray.grad is not needed in tapejax: a GradientTape differentiates "
                                  "reads, stack and gather of a TensorArray directly.")


# ---------------------------------------------------------------- pytree: the buffer is the leaf
def _flatten(ta):
    aux_static = (ta._dtype, ta._dynamic_size, ta._clear_after_read, ta._infer_shape)
    if ta._buffer is None and (ta._element_shape is None or None in ta._element_shape):
        # Nothing to preallocate yet: an empty leaf set (a compiled loop learns the shape first,
        # see infer_loop_shapes).
        return (), aux_static + (len(ta._elems), ta._element_shape, False)
    ta._to_buffer()
    return (ta._buffer,), aux_static + (ta._size(), ta._element_shape, True)


def _unflatten(aux, children):
    dtype, dynamic_size, clear_after_read, infer_shape, size, element_shape, has_buffer = aux
    ta = TensorArray.__new__(TensorArray)
    ta._dtype, ta._dynamic_size, ta._clear_after_read, ta._infer_shape = dtype, dynamic_size, clear_after_read, infer_shape
    ta._element_shape = element_shape
    ta._cleared = set()
    if has_buffer:
        b = children[0]
        ta._buffer = b if isinstance(b, _TensorBase) or b is None or not hasattr(b, "shape") else Tensor(b)
        ta._elems = None
    else:
        ta._buffer = None
        ta._elems = [None] * size
    return ta


jax.tree_util.register_pytree_node(TensorArray, _flatten, _unflatten)


def _arrays_in(tree):
    leaves = jax.tree_util.tree_leaves(tree, is_leaf=lambda x: isinstance(x, (TensorArray, _TensorBase)))
    return [x for x in leaves if isinstance(x, TensorArray)]


def infer_loop_shapes(lv, run_body):
    """Loop variables whose TensorArrays know their element shape, for a compiled loop.

    A TensorArray that enters a traced loop with nothing written and no ``element_shape``
    cannot be preallocated, and a ``dynamic_size`` one must have the size it will grow to.
    ``run_body(copy_of_lv)`` runs the loop body once on a copy (the caller undoes its Variable
    writes); the shapes it writes fix those arrays' element shapes, the sizes it grows to (at a
    :func:`loop_counter`) their sizes. Loop variables without such arrays are returned
    unchanged, and the body is not run.
    """
    arrays = _arrays_in(lv)
    unknown = [ta for ta in arrays if ta._buffer is None and
               (ta._element_shape is None or None in ta._element_shape)]
    counted = _loops and _loops[-1]._last is not None
    if not unknown and not (counted and any(ta._dynamic_size for ta in arrays)):
        return lv
    copy = jax.tree_util.tree_map(lambda x: x, lv, is_leaf=lambda x: isinstance(x, _TensorBase))
    out = run_body(copy)
    before, after = _arrays_in(lv), _arrays_in(out)
    if len(before) != len(after):
        return lv  # the loop reports the structure mismatch
    for ta, new in zip(before, after):
        if ta in unknown and new._element_shape is not None and None not in new._element_shape:
            ta._element_shape = new._element_shape
        if ta._dynamic_size and new._size() > ta._size():
            ta._grow(new._size() - 1)
    return lv
