"""tf.map_fn, tf.scan, tf.foldl, tf.foldr, tf.vectorized_map: higher-order ops over the first axis.

Two ways to run, chosen per call:

* No tape is recording: ``jax.lax.scan`` / ``jax.lax.map`` over the Python
  ``fn`` (traced once, so the loop is one XLA loop, eagerly or inside a
  ``tapejax.function``).
* A tape is recording: the loop runs in Python over the (static) leading
  dimension, so every op ``fn`` runs is recorded like any other op, and the
  gradient is the tape's own -- including for Variables and tensors ``fn``
  closes over, which a single opaque op could not see.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._core import checks as _checks, dtypes as _dtypes, state as _state
from .._core.batching import UNBATCH, rebatched_tree
from .._core.engine import state
from .._core.tensor import Tensor, _TensorBase, to_array
from ..errors import InvalidArgumentError
from . import stack


def _is_leaf(x):
    return x is None or isinstance(x, _TensorBase)


def _flatten(x):
    return jax.tree_util.tree_flatten(x, is_leaf=_is_leaf)


def _as_tensor(x):
    return x if isinstance(x, _TensorBase) else Tensor(to_array(x))


def _elems(elems, what):
    """The leaves of ``elems`` as tensors, their structure, and their common length."""
    if not callable(what[1]):
        raise TypeError(f"{what[0]}: fn must be callable, got {type(what[1]).__name__}.")
    leaves, tree = _flatten(elems)
    if not leaves:
        raise ValueError(f"{what[0]}: elems must hold at least one tensor.")
    leaves = [_as_tensor(x) for x in leaves]
    for x in leaves:
        if x.ndim == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars. "
                             "Wrap a scalar: tf.reshape(x, [1]).")
    n = leaves[0].shape[0]
    for x in leaves[1:]:
        if x.shape[0] != n:
            raise ValueError(f"Dimensions {n} and {x.shape[0]} are not compatible: every tensor in elems "
                             "must have the same first dimension (the one that is iterated over).")
    return leaves, tree, n


def _check_same(tree, new, what):
    leaves, new_tree = _flatten(new)
    if new_tree != tree:
        raise ValueError(f"The two structures don't have the same nested structure: {what} must keep "
                         f"the structure {tree}, got {new_tree}.")
    return [_as_tensor(x) for x in leaves]


def _check_avals(ref, new, what):
    for r, x in zip(ref, new):
        if tuple(r.shape) != tuple(x.shape):
            raise ValueError(f"Incompatible shape for value ({tuple(x.shape)}), expected ({tuple(r.shape)}): "
                             f"{what} must keep the shape of every tensor from step to step.")
        if r.dtype != x.dtype:
            raise InvalidArgumentError(None, None, f"{what}: expected dtype {r.dtype.name}, but fn returned "
                                       f"{x.dtype.name}. Cast inside fn, or declare the output dtype with "
                                       "fn_output_signature.")


def _rebuild(tree, arrays):
    return jax.tree_util.tree_unflatten(tree, [Tensor(a) for a in arrays])


def _no_writes(run, what):
    """Runs ``run()`` (a jax.lax loop); Variables assigned inside ``fn`` would leak tracers."""
    w = _state.Scope()  # assigns nothing to the Variables themselves
    with w:
        try:
            out = run()
        except jax.errors.JaxRuntimeError as e:   # a check staged in fn failed (an index out of range)
            _checks.reraise(e)
    if w.written:
        raise NotImplementedError(
            f"{what}: fn assigns a Variable. Inside a tf.map_fn/tf.scan body state cannot be updated per "
            "element; return the new value from fn and assign it after the loop.")
    return out


# ---------------------------------------------------------------------------
# scan (foldl / foldr are scans that keep only the last carry)
# ---------------------------------------------------------------------------

def _scan(fn, elems, initializer, reverse, keep_all, what):
    x_leaves, x_tree, n = _elems(elems, (what, fn))
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    if initializer is None:
        if n == 0:
            raise InvalidArgumentError(None, None, f"{what}: elems is empty and no initializer was given, "
                                       "so there is no first accumulator. Pass initializer=...")
        first, order = order[0], order[1:]
        a_tree = x_tree
        a_leaves = [x[first] for x in x_leaves]
    else:
        first = None
        a_leaves, a_tree = _flatten(initializer)
        a_leaves = [_as_tensor(a) for a in a_leaves]
    if state.recorders:
        return _scan_recorded(fn, x_leaves, x_tree, a_leaves, a_tree, order, first, keep_all, what)
    return _no_writes(lambda: _scan_lax(fn, x_leaves, x_tree, a_leaves, a_tree, first, reverse, keep_all,
                                        what), what)


def _scan_recorded(fn, x_leaves, x_tree, a_leaves, a_tree, order, first, keep_all, what):
    acc = a_leaves
    steps = {} if first is None else {first: acc}
    for i in order:
        x = jax.tree_util.tree_unflatten(x_tree, [t[i] for t in x_leaves])
        new = _check_same(a_tree, fn(jax.tree_util.tree_unflatten(a_tree, acc), x), what)
        _check_avals(acc, new, what)
        acc = new
        steps[i] = acc
    if not keep_all:
        return jax.tree_util.tree_unflatten(a_tree, acc)
    if not steps:
        return jax.tree_util.tree_unflatten(a_tree, [Tensor(jnp.zeros((0,) + tuple(a.shape), a._value.dtype))
                                                     for a in a_leaves])
    rows = [steps[i] for i in sorted(steps)]
    return jax.tree_util.tree_unflatten(a_tree, [stack([r[k] for r in rows]) for k in range(len(acc))])


def _scan_lax(fn, x_leaves, x_tree, a_leaves, a_tree, first, reverse, keep_all, what):
    xs = [x._value for x in x_leaves]
    init = [a._value for a in a_leaves]
    if first is not None:
        xs = [x[:-1] if reverse else x[1:] for x in xs]

    def body(carry, x):
        new = _check_same(a_tree, fn(_rebuild(a_tree, carry), _rebuild(x_tree, x)), what)
        _check_avals([Tensor(c) for c in carry], new, what)
        out = [t._value for t in new]
        return out, (out if keep_all else None)

    final, ys = jax.lax.scan(body, init, xs, reverse=reverse)
    if not keep_all:
        return _rebuild(a_tree, final)
    if first is not None:
        ys = [jnp.concatenate([y, a[None]] if reverse else [a[None], y]) for y, a in zip(ys, init)]
    return _rebuild(a_tree, ys)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """Applies ``acc = fn(acc, x)`` over the first axis of ``elems``, stacking every ``acc`` (``tf.scan``).

    Args:
        fn: ``fn(accumulator, element) -> accumulator``, keeping the accumulator's
            structure, shapes and dtypes.
        elems: a tensor or a nested structure of tensors, iterated along axis 0.
        initializer: the first accumulator; if ``None``, the first element of
            ``elems`` is, and it is the first output.
        reverse: scan from the last element to the first (outputs stay in the
            order of ``elems``).
        parallel_iterations, back_prop, swap_memory, infer_shape, name: accepted
            for TensorFlow compatibility; they change nothing.

    Returns:
        The accumulators of every step, stacked on a new first axis, with the
        accumulator's structure.

    Raises:
        ValueError: ``fn`` changed the accumulator's structure or shape.

    Example:
        >>> import tapejax as tf
        >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4])).numpy()
        array([ 1,  3,  6, 10], dtype=int32)
        >>> tf.scan(lambda a, x: a * 0.5 + x, tf.constant([1.0, 2.0]), initializer=tf.constant(10.0)).numpy()
        array([6., 5.], dtype=float32)
    """
    return _scan(fn, elems, initializer, bool(reverse), True, "tf.scan")


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """Folds ``fn(acc, x)`` over the first axis of ``elems`` from the first element on (``tf.foldl``).

    Args:
        fn: ``fn(accumulator, element) -> accumulator``.
        elems: a tensor or a nested structure of tensors, iterated along axis 0.
        initializer: the first accumulator (default: the first element of ``elems``).
        parallel_iterations, back_prop, swap_memory, name: accepted, no effect.

    Returns:
        The last accumulator.

    Example:
        >>> import tapejax as tf
        >>> print(tf.foldl(lambda a, x: a - x, tf.constant([1.0, 2.0, 3.0, 4.0])).numpy())
        -8.0
    """
    return _scan(fn, elems, initializer, False, False, "tf.foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """Folds ``fn(acc, x)`` over the first axis of ``elems`` from the last element back (``tf.foldr``).

    Args:
        fn: ``fn(accumulator, element) -> accumulator``.
        elems: a tensor or a nested structure of tensors, iterated along axis 0.
        initializer: the first accumulator (default: the last element of ``elems``).
        parallel_iterations, back_prop, swap_memory, name: accepted, no effect.

    Returns:
        The last accumulator.

    Example:
        >>> import tapejax as tf
        >>> print(tf.foldr(lambda a, x: a - x, tf.constant([1.0, 2.0, 3.0, 4.0])).numpy())
        -2.0
    """
    return _scan(fn, elems, initializer, True, False, "tf.foldr")


# ---------------------------------------------------------------------------
# map_fn
# ---------------------------------------------------------------------------

def _signature_dtypes(sig, tree, what):
    """The dtype of every output leaf, from ``fn_output_signature`` (dtypes or TensorSpecs; a
    composite's spec, an ExtensionType's, stands for a value of it with TensorSpecs inside)."""
    sig = jax.tree_util.tree_map(lambda s: s._tf_placeholder(lambda t: t) if hasattr(s, "_tf_placeholder") else s,
                                 sig)
    leaves, sig_tree = jax.tree_util.tree_flatten(
        sig, is_leaf=lambda s: not hasattr(type(s), "__tf_batch_static__") and (
            s is None or hasattr(s, "dtype") or isinstance(s, (_dtypes.DType, type, np.dtype, str))))
    if sig_tree != tree:
        raise ValueError(f"The two structures don't have the same nested structure: {what}: fn returned "
                         f"{tree}, fn_output_signature describes {sig_tree}.")
    return [_dtypes.np_dtype(getattr(s, "dtype", s)) for s in leaves]


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """Applies ``fn`` to every slice of ``elems`` along its first axis and stacks the results (``tf.map_fn``).

    Args:
        fn: ``fn(element) -> result``; ``element`` has the structure of ``elems``.
        elems: a tensor or a nested structure of tensors, iterated along axis 0.
        dtype: deprecated spelling of ``fn_output_signature``.
        fn_output_signature: the structure and dtypes of ``fn``'s result (dtypes or
            ``tf.TensorSpec``); needed when it differs from ``elems``'s.
        parallel_iterations, back_prop, swap_memory, infer_shape, name: accepted,
            no effect.

    Returns:
        ``fn``'s results stacked on a new first axis.

    Raises:
        ValueError: scalar elems, elems of different lengths, or a result whose
            structure is neither ``elems``'s nor ``fn_output_signature``'s.
        tf.errors.InvalidArgumentError: a result dtype other than the declared one.

    Example:
        >>> import tapejax as tf
        >>> tf.map_fn(lambda x: x * x, tf.constant([1.0, 2.0, 3.0])).numpy()
        array([1., 4., 9.], dtype=float32)
        >>> tf.map_fn(lambda p: p[0] * p[1], (tf.constant([1, 2]), tf.constant([3, 4])),
        ...           fn_output_signature=tf.int32).numpy()
        array([3, 8], dtype=int32)
    """
    sig = fn_output_signature if fn_output_signature is not None else dtype
    if hasattr(elems, "_map_rows"):  # a RaggedTensor: fn gets each row (see tapejax.ragged)
        return elems._map_rows(fn, sig)
    x_leaves, x_tree, n = _elems(elems, ("tf.map_fn", fn))
    # An element's structure: a batchable ExtensionType's batch shape loses its first dimension.
    x_tree = rebatched_tree(x_tree, UNBATCH)

    def call(x):
        out_leaves, out_tree = _flatten(fn(x))
        out_leaves = [_as_tensor(o) for o in out_leaves]
        if sig is None:
            if out_tree != x_tree:
                raise ValueError(f"The two structures don't have the same nested structure: tf.map_fn: fn "
                                 f"returned {out_tree} but elems is {x_tree}. Declare the result with "
                                 "fn_output_signature=...")
            want = [np.dtype(x._value.dtype) for x in x_leaves]
        else:
            want = _signature_dtypes(sig, out_tree, "tf.map_fn")
        for o, w in zip(out_leaves, want):
            if np.dtype(o._value.dtype) != w:
                raise InvalidArgumentError(None, None, f"tf.map_fn: fn returned dtype {o.dtype.name} where "
                                           f"{_dtypes.as_dtype(w).name} was expected (from "
                                           f"{'elems' if sig is None else 'fn_output_signature'}). Cast "
                                           "inside fn, or set fn_output_signature.")
        call.tree = out_tree
        return out_leaves

    if state.recorders:
        rows = [call(jax.tree_util.tree_unflatten(x_tree, [t[i] for t in x_leaves])) for i in range(n)]
        if rows:
            return jax.tree_util.tree_unflatten(rebatched_tree(call.tree, n), [stack([r[k] for r in rows])
                                                            for k in range(len(rows[0]))])

    def body(xs):
        return [t._value for t in call(_rebuild(x_tree, xs))]

    ys = _no_writes(lambda: jax.lax.map(body, [x._value for x in x_leaves]), "tf.map_fn")
    return _rebuild(rebatched_tree(call.tree, n), ys)


# ---------------------------------------------------------------------------
# vectorized_map
# ---------------------------------------------------------------------------

def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """Applies ``fn`` to every slice of ``elems`` along axis 0, vectorized (``tf.vectorized_map``).

    TensorFlow's pfor is ``jax.vmap`` here.

    Args:
        fn: ``fn(element) -> result``; ``element`` has the structure of ``elems``.
        elems: a tensor or a nested structure of tensors, iterated along axis 0.
        fallback_to_while_loop, warn: accepted, no effect (``jax.vmap`` vectorizes every op).

    Returns:
        ``fn``'s results stacked on a new first axis (a result that does not depend on the
        element is repeated, as TensorFlow's). Under a recording tape the rows run one by one
        (as ``tf.map_fn``), so gradients reach the tensors ``fn`` closes over.

    Raises:
        ValueError: scalar elems, or elems of different lengths.
        NotImplementedError: ``fn`` assigns a Variable.

    Example:
        >>> import tapejax as tf
        >>> tf.vectorized_map(lambda x: x * x, tf.constant([1.0, 2.0, 3.0])).numpy()
        array([1., 4., 9.], dtype=float32)
    """
    x_leaves, x_tree, n = _elems(elems, ("tf.vectorized_map", fn))
    if state.recorders:
        rows = [_flatten(fn(jax.tree_util.tree_unflatten(x_tree, [t[i] for t in x_leaves]))) for i in range(n)]
        tree = rows[0][1]
        return jax.tree_util.tree_unflatten(tree, [stack([_as_tensor(r[0][k]) for r in rows])
                                                   for k in range(len(rows[0][0]))])
    out_tree = []

    def body(*xs):
        leaves, tree = _flatten(fn(_rebuild(x_tree, xs)))
        out_tree.append(tree)
        return [_as_tensor(o)._value for o in leaves]

    ys = _no_writes(lambda: jax.vmap(body)(*[x._value for x in x_leaves]), "tf.vectorized_map")
    return _rebuild(out_tree[0], ys)
