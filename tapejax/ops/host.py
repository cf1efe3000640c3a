"""The ops on NumPy. A string tensor holds a NumPy object array of bytes (JAX arrays hold
numbers): these ops run on the host for it, through the engine's fallback
(``_core/engine._host_apply``). While tracing, they also fold shape arithmetic
(``tf.zeros(tf.shape(x)[0] * 2)``: see ``_core/engine._fold``)."""
import numpy as np

from .._core.basic import identity, negative, packed
from .math_ops import (
    add, subtract, multiply, floordiv, floormod, maximum, minimum, equal, not_equal, select, reduce_prod, _cast,
)
from .array_ops import (
    _reshape, _transpose, _squeeze, _expand_dims, _tile, _broadcast_to, _concat, _stack, _unstack, _split,
    _getitem, _reverse, _roll, _gather, _gather_nd, _masked, _repeat, _decode_index, _gather_fn, _gather_nd_fn,
)

for _op, _host in [
        (subtract, np.subtract), (multiply, np.multiply), (floordiv, np.floor_divide),
        (floormod, np.mod), (negative, np.negative), (maximum, np.maximum), (minimum, np.minimum),
        (_cast, lambda x, dtype: x.astype(dtype)),   # tf.cast refuses strings before this op
        (reduce_prod.op, lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims)),
        (identity, lambda x: x),
        (add, np.add),  # string concatenation, as tf.add does
        (equal, lambda x, y: np.asarray(x == y, bool)),
        (not_equal, lambda x, y: np.asarray(x != y, bool)),
        (select, np.where),
        (_reshape, lambda x, shape: np.reshape(x, shape)),
        (_transpose, lambda x, perm=None: np.transpose(x, perm)),
        (_squeeze, lambda x, axis=None: np.squeeze(x, axis=axis)),
        (_expand_dims, lambda x, axis: np.expand_dims(x, axis)),
        (_tile, lambda x, multiples: np.tile(x, multiples)),
        (_broadcast_to, lambda x, shape: np.broadcast_to(x, shape)),
        (_concat, lambda *xs, axis: np.concatenate(xs, axis=axis)),
        (_stack, lambda *xs, axis=0: np.stack(xs, axis=axis)),
        (packed, lambda *xs, axis=0: np.stack(xs, axis=axis)),
        (_unstack, lambda x, axis=0: tuple(np.moveaxis(x, axis, 0))),
        (_split, lambda x, sections, axis=0: tuple(np.split(x, sections, axis=axis))),
        (_getitem, lambda x, *idx, spec: x[_decode_index(spec, idx)]),
        (_reverse, lambda x, axis: np.flip(x, axis)),
        (_roll, lambda x, shift, axis: np.roll(x, shift, axis)),
        (_gather, lambda p, i, axis=0, batch_dims=0: _gather_fn(p, i, axis, batch_dims, np)),
        (_gather_nd, lambda p, i, batch_dims=0: _gather_nd_fn(p, i, batch_dims, np)),
        (_masked, lambda x, idx, axis, k: np.take(x.reshape(x.shape[:axis] + (-1,) + x.shape[axis + k:]), idx, axis=axis)),
        (_repeat, lambda x, repeats, axis: np.repeat(x, np.asarray(repeats), axis=axis))]:
    _op.host = _host
