"""tf.IndexedSlices, and the sparse gradients TensorFlow returns for gathered tensors.

TensorFlow's gradient of ``tf.gather(params, indices)`` (axis 0) with respect to
``params`` is not a dense tensor but ``IndexedSlices(values, indices, dense_shape)``:
the output cotangent rows and the rows they belong to. ``tape.gradient`` returns
it for a source that only gathers read on the way to the target; one dense use
makes the gradient dense, as TensorFlow's aggregation does.

Here the backward pass itself stays dense and unchanged: for such a source the
tape is asked for the gradients of the gathers' *outputs* instead (exactly the
``values``), and the indices are the ones the gathers were given. Ops opt in with
:func:`register_sparse_gradient` (the op table registers ``gather``).
"""
import operator
import types

import jax
import jax.numpy as jnp
import numpy as np

from .backward import plan
from .basic import concat, negative, reshape
from .engine import is_float_dtype
from .tensor import Tensor, TensorShape, _TensorBase, to_array


class IndexedSlices:
    """A sparse representation of a tensor's rows: ``dense[indices[i]] += values[i]`` (``tf.IndexedSlices``).

    ``tape.gradient`` returns it for a Variable (or watched tensor) that the
    target reads only through ``tf.gather`` / ``tf.nn.embedding_lookup``, as
    TensorFlow does. ``tf.convert_to_tensor`` -- and any op given one -- makes it
    dense by summing the rows at repeated indices; optimizers accept it.

    Args:
        values: a tensor of the slices, shape ``[N, ...]``.
        indices: a 1-D integer tensor of ``N`` row indices.
        dense_shape: the shape of the dense tensor (optional).

    Example:
        >>> import tapejax as tf
        >>> v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> with tf.GradientTape() as tape:
        ...     y = tf.reduce_sum(tf.gather(v, [0, 2, 0]))
        >>> g = tape.gradient(y, v)
        >>> type(g).__name__, g.indices.numpy().tolist()
        ('IndexedSlices', [0, 2, 0])
        >>> tf.convert_to_tensor(g).numpy()
        array([[2., 2.],
               [0., 0.],
               [1., 1.]], dtype=float32)
    """

    __slots__ = ("_values", "_indices", "_dense_shape")

    def __init__(self, values, indices, dense_shape=None):
        self._values = values if isinstance(values, _TensorBase) else Tensor(to_array(values))
        self._indices = indices if isinstance(indices, _TensorBase) else Tensor(to_array(indices))
        if dense_shape is not None and not isinstance(dense_shape, _TensorBase):
            dense_shape = Tensor(to_array(dense_shape, np.int32 if _is_python_shape(dense_shape) else None))
        self._dense_shape = dense_shape

    values = property(lambda self: self._values, doc="The slices: a tensor of shape ``[N, ...]``.")
    indices = property(lambda self: self._indices, doc="The row of each slice: an integer tensor ``[N]``.")
    dense_shape = property(lambda self: self._dense_shape, doc="The dense tensor's shape (a 1-D tensor) or None.")

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self):
        """The dense shape as a TensorShape (unknown first dimension without ``dense_shape``)."""
        if self._dense_shape is None:
            return TensorShape((None,) + tuple(self._values.shape[1:]))
        return TensorShape(_static_shape(self._dense_shape))

    @property
    def device(self):
        return self._values.device

    def __neg__(self):
        return IndexedSlices(negative(self._values), self._indices, self._dense_shape)

    def __jax_array__(self):
        """The dense array: rows at repeated indices are summed."""
        if self._dense_shape is None:
            raise ValueError("Cannot convert an IndexedSlices without dense_shape to a dense tensor: the "
                             "number of rows is unknown. Build it with IndexedSlices(values, indices, "
                             "dense_shape=...).")
        return to_dense(self._values._value, self._indices._value, _static_shape(self._dense_shape))

    def __str__(self):
        return f"IndexedSlices(indices={self._indices!s}, values={self._values!s}, dense_shape={self._dense_shape!s})"

    # repr: the object's default, as TF 2.21's (only str shows the parts).


def _is_python_shape(s):
    return isinstance(s, (list, tuple)) and all(isinstance(d, (int, np.integer)) for d in s)


def _static_shape(dense_shape):
    return tuple(int(d) for d in np.asarray(dense_shape._value))


def to_dense(values, indices, shape):
    """Pure JAX: the dense array of IndexedSlices parts (a summing scatter)."""
    return jnp.zeros(shape, values.dtype).at[indices].add(values)


jax.tree_util.register_pytree_node(
    IndexedSlices,
    lambda s: ((s._values, s._indices, s._dense_shape), None),
    lambda _, children: IndexedSlices(*children),
)


# ---------------------------------------------------------------------------
# The tape hook
# ---------------------------------------------------------------------------

_SPARSE_OPS = {}


def register_sparse_gradient(op, when=lambda static: True):
    """Declares that ``op``'s gradient w.r.t. its first input is IndexedSlices of its output's
    cotangent, indexed by its second input (when ``when(static)`` holds, e.g. axis 0)."""
    _SPARSE_OPS[op] = when


def gradient_with_indexed_slices(tape, targets, srcs, seeds):
    """``tape._backward(targets, srcs, seeds)``, with TensorFlow's IndexedSlices for the
    sources the targets read only through registered gathers."""
    gathers = _sparse_sources(tape._nodes, targets, srcs)
    if not gathers:
        return tape._backward(targets, srcs, seeds)
    # Differentiate w.r.t. each gather's output (stand-ins carry the id and dtype _backward reads).
    expanded, owner = [], []
    for k, s in enumerate(srcs):
        for n in gathers.get(s._id, ()):
            expanded.append(types.SimpleNamespace(_id=n.out_ids[0], _value=s._value))
            owner.append(k)
        if s._id not in gathers:
            expanded.append(s)
            owner.append(k)
    flat = tape._backward(targets, expanded, seeds)
    grads = [None] * len(srcs)
    parts = {}
    for k, g in zip(owner, flat):
        if srcs[k]._id in gathers:
            parts.setdefault(k, []).append(g)
        else:
            grads[k] = g
    for k, gs in parts.items():
        grads[k] = _assemble(gathers[srcs[k]._id], gs)
    return grads


_OP = operator.attrgetter("op")


def _sparse_sources(nodes, targets, srcs):
    """{source id: [gather nodes]} for the float sources only registered gathers read (as params)."""
    if _SPARSE_OPS.keys().isdisjoint(map(_OP, nodes)):
        return {}                  # no registered gather on the tape (a C-level scan)
    src_ids = {s._id for s in srcs if is_float_dtype(s._value.dtype)}
    candidates = set()
    for n in nodes:
        when = _SPARSE_OPS.get(n.op)
        if when is not None and n.in_ids[0] in src_ids and n.out_ids[0] is not None and when(dict(n.static)):
            candidates.add(n.in_ids[0])
    candidates -= {t._id for t in targets}
    if not candidates:
        return {}
    relevant = plan(nodes, [t._id for t in targets], list(candidates)).nodes
    gathers = {i: [] for i in candidates}
    for n in relevant:
        for pos, i in enumerate(n.in_ids):
            if gathers.get(i) is not None:
                when = _SPARSE_OPS.get(n.op)
                if pos == 0 and when is not None and when(dict(n.static)) and i not in n.in_ids[1:]:
                    gathers[i].append(n)
                else:
                    gathers[i] = None  # a dense use: TensorFlow's sum is dense
    return {i: ns for i, ns in gathers.items() if ns}


def _assemble(nodes, grads):
    values, indices = [], []
    for n, g in zip(nodes, grads):
        if g is None:
            continue
        params, idx = n.ins[0], n.ins[1]
        idx = idx if isinstance(idx, _TensorBase) else Tensor(idx)
        if idx._value.dtype.kind not in "iu":  # float ids (a Keras Embedding casts them)
            idx = Tensor(idx._value.astype(np.int32))
        values.append(reshape(g, shape=(-1,) + tuple(params.shape[1:])))
        indices.append(reshape(idx, shape=(-1,)))
    if not values:
        return None
    if len(values) > 1:
        dt = jnp.result_type(*[i._value.dtype for i in indices])
        values = [concat(*values, axis=0)]
        indices = [Tensor(jnp.concatenate([i._value.astype(dt) for i in indices]))]
    shape = Tensor(np.asarray(nodes[0].ins[0].shape, np.int32))
    return IndexedSlices(values[0], indices[0], shape)


