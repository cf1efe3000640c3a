"""Values checked as TensorFlow's CPU kernels check them: indices against the tensor they
index, integer divisors, class labels, matrices to invert.

TensorFlow's CPU kernels refuse an index outside the tensor with an InvalidArgumentError naming
it (``indices[1] = 5 is not in [0, 3)``), as an integer division by zero or a label outside the
classes; XLA would clamp, drop, fill in or compute a value, a silent wrong result. Values known
now (Python numbers, NumPy arrays, eager tensors) are checked now, at the op. Values known only
when a compiled program runs (inside ``tf.function``, a ``Dataset.map`` function, a loop body)
are checked by the program (``checks.stage_error``), and the call of the program raises.

TensorFlow's GPU kernels check nothing (a gather gives 0 for an index out of range): off a
CPU, tapejax checks only what it knows without reading a device (Python and NumPy values), and
its gathers give 0 too, so a program on an accelerator never waits for the host.

An op's check can be its ``Op.check`` (``divisor``, ``invertible``), run at every call of the op.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import errors
from .._core import checks as _checks, state as _state
from .._core.tensor import _TensorBase, is_tracer


def _kernel_message(tf_op, text, name=None):
    """A kernel's error ``text`` as TensorFlow's eager errors print it (``name``: the op's name
    TF appends where its Python wrapper passed one). Used by every op module (via messages)."""
    device = "/job:localhost/replica:0/task:0/device:CPU:0"
    return (f"{{{{function_node __wrapped__{tf_op}_device_{device}}}}} {text} [Op:{tf_op}]"
            + ("" if name is None else f" name: {name}"))


def _dims(shape):
    return "[" + ",".join(map(str, shape)) + "]"


@functools.lru_cache(maxsize=None)
def _on_cpu():
    return jax.default_backend() == "cpu"


def _unchecked(x):
    """Off a CPU, values on the device (or traced) are not checked."""
    return not _on_cpu() and (is_tracer(x) or isinstance(x, jax.Array))


def _where(shape, k):
    """TensorFlow's position of the ``k``-th element of an array of ``shape``: ``[1,0]``, or
    nothing for a scalar."""
    return "" if not shape else "[" + ",".join(str(int(j)) for j in np.unravel_index(k, shape)) + "]"


def _row(v):
    return "[" + ", ".join(str(int(x)) for x in np.ravel(v)) + "]"


def fast_path(*inputs):
    """The ``name`` TensorFlow's eager message ends with: `` name: `` where the kernel was given
    tensors (its Python wrapper's fast path), nothing where it converted a list."""
    return "" if all(isinstance(x, _TensorBase) for x in inputs) else None


def check(indices, bad, describe, tf_op, rows=False, name=None, error=errors.InvalidArgumentError, whole=False,
          then=None):
    """Raises TensorFlow's ``error`` (InvalidArgumentError) for the first index where ``bad``
    holds, now or when the program being traced runs.

    ``bad(flat, xp)``: a boolean per index of ``flat`` (``xp`` NumPy or jax.numpy), which is the
    indices flattened, or with ``rows`` their rows of the last axis (one multi-dimensional index
    each, as ``gather_nd`` reads them). ``describe(where, index)``: the kernel's message for the
    index (a number, or a row) at position ``where``; with ``whole``, ``describe(where, index,
    flat)`` (a message listing every index).

    ``then()``: the op, run after a check made now and before a staged one, whose result it
    guards (the check is made only if the program uses the result, as TensorFlow's graph runs
    only the ops its outputs need); returns its result."""
    run = then or (lambda: None)
    i = indices._value if isinstance(indices, _TensorBase) else indices
    traced = is_tracer(i)
    if _unchecked(i):
        return run()
    if not traced:
        i = np.asarray(i)
    if i.dtype.kind not in "iu" or not i.size:
        return run()
    shape = i.shape[:-1] if rows else i.shape
    xp = jnp if traced else np
    flat = xp.reshape(i, (-1, i.shape[-1]) if rows else (-1,))
    wrong = bad(flat, xp)
    hits = None if traced else np.flatnonzero(wrong)
    if not traced and not hits.size:
        return run()
    if not traced and not _state.tracing():
        k = int(hits[0])
        raise error(None, None, _kernel_message(tf_op, describe(_where(shape, k), flat[k], *((flat,) if whole else ())),
                                                name))
    out = run()
    subject = out._value if isinstance(out, _TensorBase) else out
    if traced:
        # the shape as a value too: a dimension may be known only when the program runs (jax.export)
        dims = jnp.stack([jnp.asarray(d, np.int64) for d in shape]) if shape else jnp.zeros((0,), np.int64)
        _checks.stage_error(wrong.any(), lambda k, dims, *v: error(None, None, describe(_where(tuple(dims), int(k)), *v)),
                            jnp.argmax(wrong), dims, flat[jnp.argmax(wrong)], *((flat,) if whole else ()),
                            subject=subject)
    else:   # known now, inside a tf.function: raised when the program runs the op
        text = describe(_where(shape, int(hits[0])), flat[hits[0]], *((flat,) if whole else ()))
        _checks.stage_error(np.bool_(True), lambda: error(None, None, text), subject=subject)
    return out


def gather(indices, n, tf_op="GatherV2", name=None, then=None):
    """``tf.gather``'s indices, each in ``[0, n)``."""
    return check(indices, lambda i, xp: (i < 0) | (i >= n),
                 lambda where, v: f"indices{where} = {int(v)} is not in [0, {n})", tf_op, name=name, then=then)


def nd(indices, shape, tf_op, param=False, batch_dims=0, name=None, then=None):
    """Rows of ``indices`` (``gather_nd``, ``scatter_nd``), each a position in ``shape``; with
    ``batch_dims``, as TensorFlow checks them: the batch flattened, its row number prefixed."""
    if batch_dims:
        i = indices._value if isinstance(indices, _TensorBase) else indices
        if _unchecked(i):
            return then and then()
        xp = jnp if is_tracer(i) else np
        i = xp.asarray(i)
        nb = int(np.prod(i.shape[:batch_dims]))
        i = i.reshape((nb,) + i.shape[batch_dims:])
        batch = xp.broadcast_to(xp.arange(nb, dtype=i.dtype).reshape((nb,) + (1,) * (i.ndim - 1)), i.shape[:-1] + (1,))
        indices = xp.concatenate([batch, i], axis=-1)
        shape = (int(np.prod(shape[:batch_dims])),) + tuple(shape[batch_dims:])

    def bad(rows, xp):
        return ((rows < 0) | (rows >= xp.asarray(shape[:rows.shape[1]], rows.dtype))).any(axis=1)

    what = "param shape" if param else "shape"
    node = f", node name: {tf_op}" if param else ""
    return check(indices, bad,
                 lambda where, v: f"indices{where} = {_row(v)} does not index into {what} {_dims(shape)}{node}",
                 tf_op, rows=True, name=name, then=then)


def segment_ids(ids, n, tf_op, name=None, then=None):
    """``unsorted_segment_*``'s ids: below ``num_segments`` (negative ids are dropped)."""
    return check(ids, lambda i, xp: i >= n, lambda where, v: f"segment_ids{where} = {int(v)} is out of range [0, {n})",
                 tf_op, name=name, then=then)


def _slice_index(d, n):
    return lambda where, v: f"slice index {int(v) + n if int(v) < 0 else int(v)} of dimension {d} out of bounds."


def subscript(index, d, n, then=None):
    """A scalar index of ``x[...]`` into dimension ``d`` of size ``n``: in ``[-n, n)``. (A
    Python int out of range fails as TensorFlow's shape inference does, when the op is made.)"""
    if isinstance(index, (int, np.integer)):
        if not -n <= index < n:
            text = _slice_index(d, n)("", index)
            if _state.tracing():   # TensorFlow's shape inference, as the graph is built
                raise ValueError(text)
            raise errors.InvalidArgumentError(None, None, _kernel_message("StridedSlice", text, name="strided_slice/"))
        return
    return check(index, lambda i, xp: (i < -n) | (i >= n), _slice_index(d, n), "StridedSlice", name="strided_slice/",
                 then=then)


def _integer(a):
    """Whether ``a`` (a tensor, a Variable, a Python or NumPy value) holds integers."""
    return a.dtype.is_integer if isinstance(a, _TensorBase) else np.asarray(a).dtype.kind in "iu"


def divisor(tf_op, message="Integer division by zero", error=errors.InvalidArgumentError):
    """An integer division's check (``Op.check``): no divisor is zero."""
    def check_args(args, static):
        if len(args) < 2:
            return
        x, y = args[0], args[1]
        if _integer(x if isinstance(x, _TensorBase) else y):
            check(y, lambda v, xp: v == 0, lambda where, v: message, tf_op, name="", error=error)
    return check_args


def refuse(bad, tf_op, message, name="", error=errors.InvalidArgumentError):
    """Raises TensorFlow's ``error`` with the kernel's ``message`` where the boolean array
    ``bad`` holds anywhere: now, or when the program being traced runs."""
    if is_tracer(bad):
        if _on_cpu():
            _checks.stage_error(jnp.any(bad), lambda: error(None, None, message))
    elif np.any(bad):
        raise error(None, None, _kernel_message(tf_op, message, name))


def invertible(tf_op, message):
    """``Op.check`` of an op inverting its first argument: TensorFlow's CPU kernels refuse a
    matrix whose LU factorization has an exact zero pivot (XLA would give inf or nan)."""
    def check_args(args, static):
        a = args[0]
        a = a._value if isinstance(a, _TensorBase) else a if hasattr(a, "dtype") else np.asarray(a)
        if not jnp.issubdtype(a.dtype, jnp.inexact) or a.ndim < 2 or not a.size or _unchecked(a):
            return
        lu = jax.lax.linalg.lu(a)[0]
        refuse(jnp.any(jnp.diagonal(lu, axis1=-2, axis2=-1) == 0, axis=-1), tf_op, message)
    return check_args


def labels(labels, depth, ignore=None, tf_op="SparseSoftmaxCrossEntropyWithLogits"):
    """Class ``labels`` (a sparse cross-entropy's, any number dtype: used as integers) each in
    ``[0, depth)``, but for the ``ignore`` class."""
    v = labels._value if isinstance(labels, _TensorBase) else labels
    if _unchecked(v):
        return
    v = v.astype(jnp.int32) if is_tracer(v) else np.asarray(v).astype(np.int64)

    def bad(ids, xp):
        wrong = (ids < 0) | (ids >= depth)
        return wrong if ignore is None else wrong & (ids != ignore)

    check(v, bad, lambda where, label, every: (
        f"Received a label value of {int(label)} which is outside the valid range of [0, {depth}).  "
        f"Label values: {' '.join(str(int(x)) for x in np.ravel(every))}"), tf_op, name="", whole=True)
