"""TensorFlow's summation order: ``tf.reduce_sum`` as Eigen's tensor reductions add, in jnp.

TensorFlow's CPU Sum kernel (reduction_ops_common.h) first drops the size-1 dimensions and
merges adjacent ones that are all reduced or all kept, then runs one of Eigen's reducers:

* one reduced dimension left (a full sum): Eigen's ``InnerMostDimReducer`` on the
  thread pool's ``FullReducer``, which cuts inputs over ~1e5 elements into one block per
  thread (``_threads``);
* kept then reduced (rows): ``InnerMostDimReducer`` per row;
* reduced then kept (columns), kept-reduced-kept (a middle axis): ``InnerMostDimPreserver``,
  a sequential sum per output, four interleaved accumulators for 16 or more terms where the
  output lies in a full packet;
* reduced-kept-reduced: a sequential sum, the last axis outermost;
* anything else: the reduced axes transposed last, then rows.

``InnerMostDimReducer`` on ``n`` values (AVX: packets of ``P`` = 8 floats or 4 doubles):
above ``P * 1024`` values it halves the range at a packet boundary (of the buffer, not of
the row) and adds the halves' sums; below, four packet accumulators take packets 0-3, 4-7,
... in turn, are added ``((a0 + a1) + a2) + a3``, the remaining whole packets are added to
that, the last ``n % P`` values are summed alone from 0, and the result is that scalar plus
the packet's lanes added as a tree (``((p0+p4)+(p2+p6)) + ((p1+p5)+(p3+p7))``).

XLA's own reduce adds in another order (a tree of reduce-windows above 32 terms, and not
sequential from 8), so each sum here is written as explicit adds, whose order XLA keeps (no
product feeds them: nothing is contracted into an FMA). Checked bit for bit against TF
2.21 (tests/test_eigen_reduce.py).
"""
import math
import os

import jax
import jax.numpy as jnp
import numpy as np

from . import eigen_math

_UNROLL = 64        # sequential sums up to this many terms are unrolled adds (the host evaluator runs them); longer ones loop


def _packet(dtype):
    return 8 if np.dtype(dtype) == np.float32 else 4


def applies(x):
    """Whether sums of ``x`` follow Eigen's order here: float32/float64 of known shape (a
    tf.function traced for unknown sizes keeps XLA's sum)."""
    return (np.dtype(x.dtype) in (np.dtype(np.float32), np.dtype(np.float64))
            and all(isinstance(d, int) for d in np.shape(x)))


def _seq(x, axis):
    """``((0 + x[0]) + x[1]) + ...`` along ``axis``, in that order: unrolled adds, or a loop
    (XLA compiles a long unrolled chain slowly; its reduce would add in another order)."""
    axis %= x.ndim
    n = x.shape[axis]
    if n <= _UNROLL:
        acc = jax.lax.index_in_dim(x, 0, axis, keepdims=False)
        for i in range(1, n):
            acc = acc + jax.lax.index_in_dim(x, i, axis, keepdims=False)
        return acc
    zero = jnp.zeros(x.shape[:axis] + x.shape[axis + 1:], x.dtype)
    return jax.lax.fori_loop(0, n, lambda i, acc: acc + jax.lax.dynamic_index_in_dim(x, i, axis, keepdims=False), zero)


def _predux(p):
    """AVX's horizontal add of a packet (last axis): halves folded onto each other."""
    while p.shape[-1] > 1:
        h = p.shape[-1] // 2
        p = p[..., :h] + p[..., h:]
    return p[..., 0]


def _leaf(x):
    """Eigen's InnerMostDimReducer below its leaf size, along the last axis of ``x``."""
    n, P = x.shape[-1], _packet(x.dtype)
    g, V = n // (4 * P), n - n % P
    pa = None
    if g:
        blocks = x[..., :4 * P * g].reshape(*x.shape[:-1], g, 4, P)
        a = _seq(blocks, -3)
        pa = ((a[..., 0, :] + a[..., 1, :]) + a[..., 2, :]) + a[..., 3, :]
    for j in range(4 * P * g, V, P):
        pa = x[..., j:j + P] if pa is None else pa + x[..., j:j + P]
    tail = _seq(x[..., V:], -1) if n > V else None
    if pa is None:
        return tail
    s = _predux(pa)
    return s if tail is None else tail + s


def _plan(first, n, P):
    """InnerMostDimReducer's split of ``n`` values from buffer index ``first``: a leaf
    ``(first, n)`` or a pair of plans."""
    if n <= P * 1024:
        return (first, n)
    split = P * -(-(first + -(-n // 2)) // P)
    left = min(split - first, n)
    if left >= n:
        return _plan(first, left, P)
    return (_plan(first, left, P), _plan(split, n - left, P))


def _leaves(plan):
    if isinstance(plan[0], tuple):
        return _leaves(plan[0]) + _leaves(plan[1])
    return [plan]


def _combine(plans, leaf_sums, leaves):
    """The plans' sums from their leaves' (last axis of ``leaf_sums``), added pairwise as the
    halving recursion does, one vectorized add per tree level."""
    index = {leaf: i for i, leaf in enumerate(leaves)}
    vals, levels = leaf_sums, {}

    def height(p):
        if not isinstance(p[0], tuple):
            return 0, index[p]
        (hl, il), (hr, ir) = height(p[0]), height(p[1])
        h = max(hl, hr) + 1
        levels.setdefault(h, []).append((il, ir))
        return h, ("node", h, len(levels[h]) - 1)

    roots = [height(p)[1] for p in plans]
    base, where = vals.shape[-1], {}
    for h in sorted(levels):
        pairs = [(_resolve(a, where), _resolve(b, where)) for a, b in levels[h]]
        left = jnp.take(vals, np.asarray([a for a, _ in pairs]), axis=-1)
        right = jnp.take(vals, np.asarray([b for _, b in pairs]), axis=-1)
        where[h] = vals.shape[-1]
        vals = jnp.concatenate([vals, left + right], axis=-1)
    return [vals[..., _resolve(r, where)] for r in roots]


def _resolve(i, where):
    return where[i[1]] + i[2] if isinstance(i, tuple) else i


def _leaf_sums(x2, leaves, base):
    """InnerMostDimReducer leaves ``(first, n)`` (buffer index ``base`` at column 0 of the rows
    ``x2``), each summed: (rows, leaves). One gather lays every leaf out alike -- its groups of
    four packets behind leading zeros, its whole packets left and its scalars after, zero-padded
    (adding +0 changes no sum that starts from +0) -- and one ``_leaf`` pass sums them all."""
    P = _packet(x2.dtype)
    m = x2.shape[-1]
    start = np.asarray([f - base for f, _ in leaves])[:, None]
    n = np.asarray([k for _, k in leaves])[:, None]
    g, r, t = n // (4 * P), n % (4 * P) // P, n % P
    G = int(g.max())
    c = np.arange(4 * P * G + 3 * P + P - 1)[None, :]
    j = c - (G - g) * 4 * P
    c2, c3 = c - 4 * P * G, c - 4 * P * G - 3 * P
    idx = np.where((c < 4 * P * G) & (j >= 0), start + j,
                   np.where((c2 >= 0) & (c2 < P * r), start + 4 * P * g + c2,
                            np.where((c3 >= 0) & (c3 < t), start + 4 * P * g + P * r + c3, m)))
    xz = jnp.concatenate([x2, jnp.zeros((*x2.shape[:-1], 1), x2.dtype)], axis=-1)
    lay = jnp.take(xz, jnp.asarray(idx.astype(np.int32)), axis=-1)     # (rows, leaves, width)
    pa = jnp.zeros((*lay.shape[:-1], P), x2.dtype)
    if G:
        a = _seq(lay[..., :4 * P * G].reshape(*lay.shape[:-1], G, 4, P), -3)
        pa = ((a[..., 0, :] + a[..., 1, :]) + a[..., 2, :]) + a[..., 3, :]
    for k in range(3):
        pa = pa + lay[..., 4 * P * G + k * P:4 * P * G + (k + 1) * P]
    return _seq(lay[..., 4 * P * G + 3 * P:], -1) + _predux(pa)


def _segments(x2, base, plans):
    """Sums of InnerMostDimReducer plans over the last axis of ``x2`` (rows), buffer index
    ``base`` at column 0; one array per plan."""
    leaves = [leaf for plan in plans for leaf in _leaves(plan)]
    if len(leaves) == 1 and leaves[0] == (base, x2.shape[-1]):
        return [_leaf(x2)]
    return _combine(plans, _leaf_sums(x2, leaves, base), leaves)


def _rows(x2):
    """Each row of ``x2`` (R, m) summed as Eigen's InnerMostDimReducer from index row * m."""
    R, m = x2.shape
    P = _packet(x2.dtype)
    if m <= P * 1024:
        return _leaf(x2)
    # the halving points are packet boundaries of the whole buffer: one plan per row offset
    classes = {}
    for r in range(R):
        classes.setdefault(r * m % P, []).append(r)
    if len(classes) == 1:
        return _segments(x2, 0, [_plan(0, m, P)])[0]
    out, order = [], []
    for rho, rows in classes.items():
        out.append(_segments(x2[np.asarray(rows)], rho, [_plan(rho, m, P)])[0])
        order += rows
    return jnp.concatenate(out)[np.argsort(order)]


def _threads(n, dtype):
    """The blocks Eigen's thread-pool FullReducer cuts ``n`` values into: its cost model's
    thread count, at most TensorFlow's intra-op pool size."""
    need = _cost_threads(n, np.dtype(dtype).itemsize)
    return min(need, intra_op_threads()) if need > 1 else 1


def _cost_threads(n, itemsize):
    # TensorCostModel<ThreadPoolDevice>::numThreads: (cost - 1e5) / 1e5 + 0.9 threads
    cost = n * _COST_PER_VALUE[itemsize]
    return max(1, int((cost - 100000.0) / 100000.0 + 0.9))


# Measured on TF 2.21 (a 16-thread pool, sizes 4e4-4e6): 31/64 cycles per byte fits every
# thread count; sums split from 108388 float32 / 54194 float64 values (pools of 2 or more).
_COST_PER_VALUE = {4: 31 / 16, 8: 31 / 8}


def intra_op_threads():
    """TensorFlow's default intra-op thread pool size: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # pragma: no cover
        return os.cpu_count() or 1


def _full(x1, threads):
    """The sum of a vector as Eigen's FullReducer with ``threads`` blocks."""
    n, P = x1.shape[0], _packet(x1.dtype)
    x2 = x1[None]
    if threads <= 1:
        return _rows(x2)[0]
    bs = int(math.floor(np.float32(n) / np.float32(threads)))
    nb = n // bs
    plans = [_plan(i * bs, bs, P) for i in range(nb)]
    if nb * bs < n:
        plans.append(_plan(nb * bs, n - nb * bs, P))
    sums = _segments(x2, 0, plans)
    acc = sums[nb] if nb * bs < n else sums[0]
    for s in sums[1:nb] if nb * bs >= n else sums[:nb]:
        acc = acc + s
    return acc[0]


def _preserve(x3):
    """(a, b, c) -> (a, c), summed over b as Eigen's InnerMostDimPreserver: sequential, or
    for ``b >= 16`` four interleaved accumulators where the output's packet fits its row."""
    a, b, c = x3.shape
    seq = _seq(x3, 1)
    P = _packet(x3.dtype)
    total = a * c
    if b < 16 or c < P:
        return seq
    u = b - b % 4
    acc = _seq(x3[:, :u].reshape(a, u // 4, 4, c), 1)
    acc = ((acc[:, 0] + acc[:, 1]) + acc[:, 2]) + acc[:, 3]
    for j in range(u, b):
        acc = acc + x3[:, j]
    o = np.arange(total)
    start = o - o % P
    packet = (start + P <= total) & (start % c + P - 1 < c)
    if packet.all():
        return acc
    return jnp.where(jnp.asarray(packet.reshape(a, c)), acc, seq)


def _simplify(shape, axes):
    """TensorFlow's ReductionHelper: size-1 dims dropped, neighbours of one kind merged."""
    dims, red = [], []
    for d, s in enumerate(shape):
        if s == 1:
            continue
        r = d in axes
        if red and red[-1] == r:
            dims[-1] *= s
        else:
            dims.append(s)
            red.append(r)
    return dims, red


def reduce_sum(x, axis=None, keepdims=False):
    """``tf.reduce_sum`` of a float32/float64 array with TensorFlow's CPU rounding."""
    axes = tuple(range(x.ndim)) if axis is None else tuple(sorted(a % x.ndim for a in np.atleast_1d(axis)))
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape)) if keepdims else \
        tuple(s for d, s in enumerate(x.shape) if d not in axes)
    if x.size == 0 or any(x.shape[a] == 0 for a in axes):
        return jnp.zeros(out_shape, x.dtype) if x.size == 0 else jnp.sum(x, axis=axes).reshape(out_shape)
    dims, red = _simplify(x.shape, axes)
    if not any(red):                  # TF copies: nothing is added
        return x.reshape(out_shape)
    # a product feeding the sum is rounded first (TF's kernels do), not contracted into an FMA
    y = eigen_math.fence_of(x)(x).reshape(dims)
    if red == [True]:
        r = _full(y, _threads(y.shape[0], x.dtype))
    elif red == [False, True]:
        r = _rows(y)
    elif red == [True, False]:
        r = _preserve(y[None])[0]
    elif red == [False, True, False]:
        r = _preserve(y)
    elif red == [True, False, True]:
        r = _seq(jnp.transpose(y, (2, 0, 1)).reshape(-1, dims[1]), 0)
    else:
        keep = [i for i, r_ in enumerate(red) if not r_]
        gone = [i for i, r_ in enumerate(red) if r_]
        y = jnp.transpose(y, keep + gone)
        r = _rows(y.reshape(math.prod(dims[i] for i in keep), -1))
    return _no_negative_zero(r).reshape(out_shape)


@jax.custom_jvp
def _no_negative_zero(r):
    """-0.0 made +0.0: Eigen's sums start from +0, so they are never -0 (a sum's derivative stays 1)."""
    return jnp.where(r == 0, jnp.zeros((), r.dtype), r)


_no_negative_zero.defjvp(lambda primals, tangents: (_no_negative_zero(primals[0]), tangents[0]))


def reduce_mean(x, axis=None, keepdims=False):
    """``tf.reduce_mean``: TensorFlow's sum divided (IEEE) by the count as ``x.dtype``."""
    axes = tuple(range(x.ndim)) if axis is None else tuple(sorted(a % x.ndim for a in np.atleast_1d(axis)))
    n = math.prod(x.shape[a] for a in axes)
    s = reduce_sum(x, axes, keepdims)
    return ieee_divide(s, np.asarray(n, x.dtype))


def tf_sum(x, axis=None, keepdims=False):
    """``reduce_sum`` of any array: TensorFlow's order where it applies, else ``jnp.sum``."""
    return reduce_sum(x, axis, keepdims) if applies(x) else jnp.sum(x, axis=axis, keepdims=keepdims)


def tf_mean(x, axis=None, keepdims=False):
    """``reduce_mean`` of any float array: TensorFlow's where it applies, else ``jnp.mean``."""
    return reduce_mean(x, axis, keepdims) if applies(x) else jnp.mean(x, axis=axis, keepdims=keepdims)


def reduce_variance(x, axis=None, keepdims=False):
    """``tf.math.reduce_variance``: ``reduce_mean(square(x - reduce_mean(x, keepdims=True)))``."""
    d = x - reduce_mean(x, axis, True)
    return reduce_mean(d * d, axis, keepdims)


def ieee_divide(s, n):
    """``s / n`` as an IEEE division (XLA turns division by a constant into a product)."""
    shape = jnp.broadcast_shapes(jnp.shape(s), jnp.shape(n))
    return jnp.broadcast_to(s, shape) / jax.lax.optimization_barrier(jnp.broadcast_to(jnp.asarray(n, s.dtype), shape))


# ------------------------------------------------------------------- softmax (kernels on rows)

def _to_rows(x, axis):
    """``x`` with ``axis`` swapped last (TF's softmax transposes it there), as (rows, classes)."""
    y = jnp.swapaxes(x, axis, -1) if axis % x.ndim != x.ndim - 1 else x
    return y, y.reshape(-1, y.shape[-1]) if y.ndim else y.reshape(1, 1)


def _from_rows(r, y, x, axis):
    r = r.reshape(y.shape)
    return jnp.swapaxes(r, axis, -1) if axis % x.ndim != x.ndim - 1 else r


def softmax(x, axis=-1):
    """TensorFlow's Softmax kernel (softmax_op_functor.h): ``e = exp(x - max)`` (Eigen's exp),
    then ``e * (1 / sum(e))`` with the row sum in Eigen's order."""
    y, x2 = _to_rows(x, axis)
    e = eigen_math.exp(x2 - jnp.max(x2, axis=-1, keepdims=True))
    s = _rows(eigen_math.fence_of(e)(e))[:, None]
    return _from_rows(e * ieee_divide(jnp.ones((), s.dtype), s), y, x, axis)


def log_softmax(x, axis=-1):
    """TensorFlow's LogSoftmax kernel: ``(x - max) - log(sum(exp(x - max)))``."""
    y, x2 = _to_rows(x, axis)
    shifted = x2 - jnp.max(x2, axis=-1, keepdims=True)
    e = eigen_math.exp(shifted)
    s = _rows(eigen_math.fence_of(e)(e))[:, None]
    return _from_rows(shifted - _log(s), y, x, axis)


def _log(x):
    log = getattr(eigen_math, "log", None)
    return log(x) if log is not None else jnp.log(x)


def _last(x, axis):
    return jnp.swapaxes(x, axis, -1) if x.ndim and axis % x.ndim != x.ndim - 1 else x


def softmax_grad(y, g, axis=-1):
    """TensorFlow's gradient of Softmax (on the tensor with ``axis`` swapped last):
    ``(g - reduce_sum(g * y, -1, keepdims=True)) * y``."""
    y, g = _last(y, axis), _last(g, axis)
    s = reduce_sum(g * y, -1, True)
    return _last((g - s) * y, axis)


def log_softmax_grad(y, g, axis=-1):
    """TensorFlow's gradient of LogSoftmax: ``g - reduce_sum(g, -1, keepdims=True) * exp(y)``."""
    y, g = _last(y, axis), _last(g, axis)
    s = reduce_sum(g, -1, True)
    return _last(g - eigen_math.fence_of(g)(s * eigen_math.exp(y)), axis)
