"""Every differentiable op of the table: tape gradient == JAX's VJP, across shapes.

Each row is (name, tapejax function, equivalent jnp function, input makers).
The tapejax side runs on a GradientTape with a random output cotangent passed
as ``output_gradients``; the oracle is ``jax.vjp`` of the jnp function.
Every row is also checked against float64 finite differences of the tape itself
(``check_vjp``), and a deliberately wrong rule must fail both checkers.

Every differentiable op of the table (``tapejax.ops`` and the ``nn``/``math``/
``linalg`` namespaces) must appear on the tape of some row *and* be run there on a
single-element input ([1] or [1, 1]); ``test_table_is_covered`` derives that from
the rows themselves, so a new op without a gradient row fails it. Binary ops also
run on broadcast shapes (``BINARY_SHAPES``).
"""
import functools

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
import pytest
from jax.test_util import check_grads, check_vjp

import tapejax as tf
from tapejax import ops as _ops
from tapejax.extend import defop

from conftest import assert_close, tape_vjp

R = np.random.default_rng(1234)
_MASK = np.array([[True, False], [False, False], [True, True]])


# ---------------------------------------------------------------- input makers
def normal(shape):
    return lambda: R.normal(size=shape).astype(np.float32)


def uniform(shape, lo, hi):
    return lambda: R.uniform(lo, hi, size=shape).astype(np.float32)


def ints(shape, hi):
    return lambda: R.integers(0, hi, size=shape).astype(np.int32)


def spd(n):
    def make():
        a = R.normal(size=(n, n))
        return (a @ a.T + n * np.eye(n)).astype(np.float32)
    return make


def well_conditioned(n):
    return lambda: (R.normal(size=(n, n)) + 3 * np.eye(n)).astype(np.float32)


def nonzero(shape):
    def make():
        a = R.normal(size=shape)
        return (np.sign(a) * (np.abs(a) + 0.5)).astype(np.float32)
    return make


def is_float(a):
    return np.asarray(a).dtype.kind == "f"


def _dense(g):
    return tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g


def _outs(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def check_fd(tf_fn, arrays, eps=1e-6, tol=1e-5):
    """The tape's VJP of ``tf_fn`` == float64 finite differences (``jax.test_util.check_vjp``).

    Float inputs are cast to float64 and differentiated; integer/bool inputs stay fixed.
    Only floating outputs are compared.
    """
    with jax.enable_x64(True):
        arrays = [a.astype(np.float64) if is_float(a) else a for a in arrays]
        diff = [i for i, a in enumerate(arrays) if is_float(a)]

        def tensors(d):
            full = [tf.constant(a) for a in arrays]
            for i, v in zip(diff, d):
                full[i] = tf.constant(v)
            return full

        def float_outs(out):
            return [o for o in _outs(out) if o.dtype.is_floating]

        def pure(*d):
            return [o._value for o in float_outs(tf_fn(*tensors(d)))]

        def vjp(*d):
            xs = tensors(d)
            with tf.GradientTape() as tape:
                tape.watch([xs[i] for i in diff])
                outs = float_outs(tf_fn(*xs))

            def pull(cts):
                grads = tape.gradient(outs, [xs[i] for i in diff], output_gradients=[tf.constant(c) for c in cts])
                return tuple(jnp.zeros_like(d[k]) if g is None else _dense(g)._value for k, g in enumerate(grads))

            return [o._value for o in outs], pull

        check_vjp(pure, vjp, tuple(jnp.asarray(arrays[i]) for i in diff), eps=eps, atol=tol, rtol=tol)


def check_op(tf_fn, jnp_fn, makers, rtol=2e-5, atol=2e-5, fd=False):
    """Tape gradient (random output cotangent) == jax.vjp of the jnp function; with ``fd=True``
    also the tape's VJP == float64 finite differences (on the tables that hold every op at
    single-element shapes; general-shape rows rely on jax.vjp, see test_table_is_covered)."""
    arrays = [m() for m in makers]
    diff = [i for i, a in enumerate(arrays) if is_float(a)]

    def jf(*d):
        full = list(arrays)
        for i, v in zip(diff, d):
            full[i] = v
        return jnp_fn(*full)

    primals = [jnp.asarray(arrays[i]) for i in diff]
    out_shape = jax.eval_shape(jf, *primals)
    shape_leaves, want_tree = jax.tree_util.tree_flatten(out_shape)
    cts = [R.normal(size=o.shape).astype(o.dtype) for o in shape_leaves]

    @jax.jit  # one compile for the oracle instead of one per eager primitive
    def oracle(primals, cts):
        out, pull = jax.vjp(jf, *primals)
        return out, pull(jax.tree_util.tree_unflatten(want_tree, cts))

    want_out, want_grads = oracle(primals, cts)
    want_leaves = jax.tree_util.tree_leaves(want_out)

    xs = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch([xs[i] for i in diff])
        out = tf_fn(*xs)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    assert len(outs) == len(want_leaves)
    for o, w in zip(outs, want_leaves):
        assert isinstance(o, tf.Tensor)
        assert tuple(o.shape) == np.shape(w)
        np.testing.assert_allclose(o.numpy(), np.asarray(w), rtol=rtol, atol=atol)
    grads = [_dense(g) for g in tape.gradient(outs, xs, output_gradients=[tf.constant(c) for c in cts])]
    for i, g in enumerate(grads):
        if i not in diff:
            assert g is None, "integer inputs are never differentiated"
            continue
        w = want_grads[diff.index(i)]
        assert g is not None, f"no gradient for input {i}"
        assert g.dtype == arrays[i].dtype and tuple(g.shape) == arrays[i].shape
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=rtol, atol=atol)
    if fd and diff:
        check_fd(tf_fn, arrays)


# ---------------------------------------------------------------- unary elementwise
UNARY_SHAPES = [(), (1,), (1, 1), (2, 1, 3)]

# name -> (tapejax fn, jnp fn, maker(shape))
UNARY = {
    "negative": (tf.negative, jnp.negative, normal),
    "abs": (tf.abs, jnp.abs, nonzero),
    "sign": (tf.sign, jnp.sign, nonzero),
    "exp": (tf.exp, jnp.exp, normal),
    "expm1": (tf.math.expm1, jnp.expm1, normal),
    "log": (tf.math.log, jnp.log, lambda s: uniform(s, 0.2, 3.0)),
    "log1p": (tf.math.log1p, jnp.log1p, lambda s: uniform(s, -0.5, 3.0)),
    "sqrt": (tf.sqrt, jnp.sqrt, lambda s: uniform(s, 0.2, 3.0)),
    "rsqrt": (tf.math.rsqrt, lambda x: 1 / jnp.sqrt(x), lambda s: uniform(s, 0.2, 3.0)),
    "square": (tf.square, jnp.square, normal),
    "reciprocal": (tf.math.reciprocal, lambda x: 1 / x, nonzero),
    "sin": (tf.sin, jnp.sin, normal),
    "cos": (tf.cos, jnp.cos, normal),
    "tan": (tf.tan, jnp.tan, lambda s: uniform(s, -1.0, 1.0)),
    "asin": (tf.math.asin, jnp.arcsin, lambda s: uniform(s, -0.8, 0.8)),
    "acos": (tf.math.acos, jnp.arccos, lambda s: uniform(s, -0.8, 0.8)),
    "atan": (tf.math.atan, jnp.arctan, normal),
    "sinh": (tf.math.sinh, jnp.sinh, normal),
    "cosh": (tf.math.cosh, jnp.cosh, normal),
    "tanh": (tf.tanh, jnp.tanh, normal),
    "asinh": (tf.math.asinh, jnp.arcsinh, normal),
    "acosh": (tf.math.acosh, jnp.arccosh, lambda s: uniform(s, 1.2, 3.0)),
    "atanh": (tf.math.atanh, jnp.arctanh, lambda s: uniform(s, -0.8, 0.8)),
    "sigmoid": (tf.sigmoid, lambda x: 1 / (1 + jnp.exp(-x)), normal),
    "softplus": (tf.math.softplus, lambda x: jnp.logaddexp(x, 0.0), normal),
    "softsign": (tf.math.softsign, lambda x: x / (1 + jnp.abs(x)), nonzero),
    "log_sigmoid": (tf.math.log_sigmoid, lambda x: -jnp.logaddexp(-x, 0.0), normal),
    "erf": (tf.math.erf, jss.erf, normal),
    "erfc": (tf.math.erfc, jss.erfc, normal),
    "lgamma": (tf.math.lgamma, jss.gammaln, lambda s: uniform(s, 0.5, 4.0)),
    "digamma": (tf.math.digamma, jss.digamma, lambda s: uniform(s, 0.5, 4.0)),
    "identity": (tf.identity, lambda x: x, normal),
    "relu": (tf.nn.relu, lambda x: jnp.maximum(x, 0.0), nonzero),
    "relu6": (tf.nn.relu6, lambda x: jnp.clip(x, 0.0, 6.0), lambda s: uniform(s, -3.0, 9.0)),
    "elu": (tf.nn.elu, lambda x: jnp.where(x > 0, x, jnp.expm1(x)), nonzero),
    "selu": (tf.nn.selu, jax.nn.selu, nonzero),
    "silu": (tf.nn.silu, lambda x: x / (1 + jnp.exp(-x)), normal),
    "gelu": (tf.nn.gelu, lambda x: 0.5 * x * (1 + jss.erf(x / float(np.sqrt(2)))), normal),
    "gelu_tanh": (lambda x: tf.nn.gelu(x, approximate=True), functools.partial(jax.nn.gelu, approximate=True), normal),
    "leaky_relu": (lambda x: tf.nn.leaky_relu(x, alpha=0.3), lambda x: jnp.where(x > 0, x, 0.3 * x), nonzero),
    "neg_operator": (lambda x: -x, jnp.negative, normal),
    "abs_operator": (lambda x: abs(x), jnp.abs, nonzero),
    "pow_operator": (lambda x: x ** 3, lambda x: x ** 3, normal),
    "rpow_operator": (lambda x: 2.0 ** x, lambda x: 2.0 ** x, normal),
    "softmax": (tf.nn.softmax, jax.nn.softmax, normal),
    "log_softmax": (tf.nn.log_softmax, jax.nn.log_softmax, normal),
    "l2_loss": (tf.nn.l2_loss, lambda x: jnp.sum(x * x) / 2, normal),
    "dropout_rate0": (lambda x: tf.nn.dropout(x, rate=0.0), lambda x: x, normal),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    tf_fn, jnp_fn, maker = UNARY[name]
    shapes = [s for s in UNARY_SHAPES if s or name not in ("softmax", "log_softmax")]
    # All shapes on one tape: several targets, one gradient call, one cotangent each.
    check_op(lambda *xs: [tf_fn(x) for x in xs], lambda *xs: [jnp_fn(x) for x in xs],
             [maker(s) for s in shapes], fd=True)


# ---------------------------------------------------------------- binary elementwise, with broadcasting
BINARY_SHAPES = [((), ()), ((), (4,)), ((2, 3), (3,)), ((3, 1, 2), (4, 2)),
                 ((1,), (1, 1)), ((1, 1), (2, 3)), ((2, 1), (1, 3))]

BINARY = {
    "add": (tf.add, jnp.add, normal, normal),
    "subtract": (tf.subtract, jnp.subtract, normal, normal),
    "multiply": (tf.multiply, jnp.multiply, normal, normal),
    "divide": (tf.divide, jnp.divide, normal, nonzero),
    "floormod": (tf.math.floormod, jnp.mod, normal, nonzero),
    "pow": (tf.pow, jnp.power, lambda s: uniform(s, 0.5, 2.0), normal),
    "atan2": (tf.math.atan2, jnp.arctan2, normal, nonzero),
    "squared_difference": (tf.math.squared_difference, lambda x, y: (x - y) ** 2, normal, normal),
    "divide_no_nan": (tf.math.divide_no_nan, jnp.divide, normal, nonzero),
    "multiply_no_nan": (tf.math.multiply_no_nan, jnp.multiply, normal, nonzero),
    "xlogy": (tf.math.xlogy, lambda x, y: x * jnp.log(y), lambda s: uniform(s, 0.5, 2.0), lambda s: uniform(s, 0.5, 2.0)),
    "maximum": (tf.maximum, jnp.maximum, normal, normal),
    "minimum": (tf.minimum, jnp.minimum, normal, normal),
    "add_operator": (lambda x, y: x + y, jnp.add, normal, normal),
    "sub_operator": (lambda x, y: x - y, jnp.subtract, normal, normal),
    "mul_operator": (lambda x, y: x * y, jnp.multiply, normal, normal),
    "div_operator": (lambda x, y: x / y, jnp.divide, normal, nonzero),
    "pow_operator": (lambda x, y: x ** y, jnp.power, lambda s: uniform(s, 0.5, 2.0), normal),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    tf_fn, jnp_fn, mx, my = BINARY[name]
    makers = [m for sx, sy in BINARY_SHAPES for m in (mx(sx), my(sy))]
    check_op(lambda *xs: [tf_fn(xs[i], xs[i + 1]) for i in range(0, len(xs), 2)],
             lambda *xs: [jnp_fn(xs[i], xs[i + 1]) for i in range(0, len(xs), 2)], makers, fd=True)


def test_divide_no_nan_at_zero():
    x, y = tf.constant([1.0, 2.0]), tf.constant([0.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = tf.math.divide_no_nan(x, y)
    gx, gy = tape.gradient(z, [x, y])
    np.testing.assert_allclose(z.numpy(), [0.0, 0.5])
    np.testing.assert_allclose(gx.numpy(), [0.0, 0.25])
    np.testing.assert_allclose(gy.numpy(), [0.0, -2.0 / 16])


def test_where_and_clip():
    cond = R.normal(size=(2, 3)) > 0
    check_op(lambda c, x, y: tf.where(c, x, y), jnp.where,
             [lambda: cond, normal((2, 3)), normal((3,))])
    check_op(lambda t, lo, hi: tf.clip_by_value(t, lo, hi), lambda t, lo, hi: jnp.clip(t, lo, hi),
             [normal((3, 4)), lambda: np.float32(-0.5), lambda: np.float32(0.5)])


# ---------------------------------------------------------------- hand-written rules == JAX's
RULES = {
    "exp": (_ops.exp, jnp.exp, 1),
    "tanh": (_ops.tanh, jnp.tanh, 1),
    "sigmoid": (_ops.sigmoid, jax.nn.sigmoid, 1),
    "maximum": (_ops.maximum, jnp.maximum, 2),
    "minimum": (_ops.minimum, jnp.minimum, 2),
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_hand_written_rule_equals_jax(name):
    op, jfn, n = RULES[name]
    assert op.vjp is not None, f"{name} is expected to carry a hand-written rule"
    xs = [R.normal(size=(3, 4)).astype(np.float32) for _ in range(n)]  # no ties
    g = R.normal(size=(3, 4)).astype(np.float32)
    ans = op.fn(*xs)
    got = op.vjp(ans, *xs)(g)
    got = got if isinstance(got, tuple) else (got,)
    want = jax.vjp(jfn, *xs)[1](g)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn,name", [(tf.maximum, "maximum"), (tf.minimum, "minimum")])
def test_ties_send_gradient_to_x(fn, name):
    # TensorFlow: xmask = x >= y (maximum) / x <= y (minimum); JAX would split 0.5/0.5.
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.constant([1.0, 0.0, 5.0])
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = fn(x, y)
    gx, gy = tape.gradient(z, [x, y])
    if name == "maximum":
        np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0, 0.0])
        np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0, 1.0])
    else:
        np.testing.assert_array_equal(gx.numpy(), [1.0, 0.0, 1.0])
        np.testing.assert_array_equal(gy.numpy(), [0.0, 1.0, 0.0])
    # and that is not what plain JAX does at the tie
    jx = jax.grad(lambda a: (jnp.maximum if name == "maximum" else jnp.minimum)(a, 1.0))(1.0)
    assert float(jx) == 0.5


# ---------------------------------------------------------------- reductions
RED_SHAPE = (2, 3, 4)
RED_AXES = [None, [1], (0, 2)]

REDUCTIONS = {
    "reduce_sum": (tf.reduce_sum, jnp.sum),
    "reduce_mean": (tf.reduce_mean, jnp.mean),
    "reduce_max": (tf.reduce_max, jnp.max),
    "reduce_min": (tf.reduce_min, jnp.min),
    "reduce_prod": (tf.reduce_prod, jnp.prod),
    "reduce_std": (tf.math.reduce_std, jnp.std),
    "reduce_variance": (tf.math.reduce_variance, jnp.var),
    "reduce_logsumexp": (tf.reduce_logsumexp, jax.nn.logsumexp),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction(name):
    tf_fn, jfn = REDUCTIONS[name]
    configs = [(axis, keepdims) for axis in RED_AXES for keepdims in (False, True)]

    def jaxis(axis):
        return tuple(axis) if isinstance(axis, list) else axis

    check_op(lambda x: [tf_fn(x, axis=a, keepdims=k) for a, k in configs],
             lambda x: [jfn(x, axis=jaxis(a), keepdims=k) for a, k in configs], [normal(RED_SHAPE)],
             fd=name in NO_SINGLE_ELEMENT)
    if name in NO_SINGLE_ELEMENT:
        return
    single = [(axis, keepdims) for axis in (None, [1]) for keepdims in (False, True)]
    check_op(lambda x: [tf_fn(x, axis=a, keepdims=k) for a, k in single],
             lambda x: [jfn(x, axis=jaxis(a), keepdims=k) for a, k in single], [normal((1, 1))], fd=True)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative(exclusive, reverse):
    def ref(f, unit):
        def g(x):
            x2 = jnp.flip(x, 1) if reverse else x
            if exclusive:
                x2 = jnp.concatenate([jnp.full_like(x2[:, :1], unit), x2[:, :-1]], axis=1)
            r = f(x2, axis=1)
            return jnp.flip(r, 1) if reverse else r
        return g
    check_op(lambda x: tf.math.cumsum(x, axis=1, exclusive=exclusive, reverse=reverse), ref(jnp.cumsum, 0.0),
             [normal((3, 4))])
    check_op(lambda x: tf.math.cumprod(x, axis=1, exclusive=exclusive, reverse=reverse), ref(jnp.cumprod, 1.0),
             [nonzero((3, 4))])


@pytest.mark.parametrize("ord_,axis", [("euclidean", None), ("euclidean", 1), (1, 0), (np.inf, None),
                                        ("fro", (0, 1)), (2, 1)])
def test_norm(ord_, axis):
    def ref(x):
        if ord_ == "euclidean" or ord_ == 2:
            return jnp.sqrt(jnp.sum(x * x, axis=axis))
        if ord_ == "fro":
            return jnp.sqrt(jnp.sum(x * x))
        if ord_ == 1:
            return jnp.sum(jnp.abs(x), axis=axis)
        return jnp.max(jnp.abs(x))
    check_op(lambda x: tf.norm(x, ord=ord_, axis=axis), ref, [nonzero((3, 4))])


def test_non_differentiable_reductions_are_none():
    x = tf.constant([[1.0, 2.0], [3.0, 0.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        outs = [tf.math.count_nonzero(x), tf.argmax(x, axis=1), tf.argmin(x), tf.reduce_any(x > 1.0)]
    for o in outs:
        assert o.dtype.is_integer or o.dtype.is_bool
        assert tape.gradient(o, x) is None


# ---------------------------------------------------------------- shapes and structure
SHAPE_OPS = {
    "reshape": (lambda x: tf.reshape(x, [3, -1]), lambda x: x.reshape(3, -1), [normal((2, 3, 2))]),
    "reshape_tensor_shape": (lambda x: tf.reshape(x, tf.constant([4, 3])), lambda x: x.reshape(4, 3), [normal((2, 6))]),
    "transpose": (lambda x: tf.transpose(x), lambda x: x.T, [normal((2, 3))]),
    "transpose_perm": (lambda x: tf.transpose(x, [1, 2, 0]), lambda x: jnp.transpose(x, (1, 2, 0)), [normal((2, 3, 4))]),
    "squeeze": (lambda x: tf.squeeze(x), jnp.squeeze, [normal((1, 3, 1))]),
    "squeeze_axis": (lambda x: tf.squeeze(x, axis=[2]), lambda x: jnp.squeeze(x, 2), [normal((1, 3, 1))]),
    "expand_dims": (lambda x: tf.expand_dims(x, -1), lambda x: x[..., None], [normal((2, 3))]),
    "tile": (lambda x: tf.tile(x, [2, 3]), lambda x: jnp.tile(x, (2, 3)), [normal((2, 3))]),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [4, 2, 3]), lambda x: jnp.broadcast_to(x, (4, 2, 3)), [normal((2, 1))]),
    "pad_constant": (lambda x: tf.pad(x, [[1, 0], [2, 1]], constant_values=3.0),
                     lambda x: jnp.pad(x, ((1, 0), (2, 1)), constant_values=3.0), [normal((2, 3))]),
    "pad_reflect": (lambda x: tf.pad(x, [[1, 1], [2, 1]], mode="REFLECT"),
                    lambda x: jnp.pad(x, ((1, 1), (2, 1)), mode="reflect"), [normal((3, 4))]),
    "pad_symmetric": (lambda x: tf.pad(x, [[1, 1], [2, 1]], mode="SYMMETRIC"),
                      lambda x: jnp.pad(x, ((1, 1), (2, 1)), mode="symmetric"), [normal((3, 4))]),
    "concat": (lambda x, y: tf.concat([x, y], axis=1), lambda x, y: jnp.concatenate([x, y], 1),
               [normal((2, 3)), normal((2, 1))]),
    "concat_neg_axis": (lambda x, y: tf.concat([x, y], -1), lambda x, y: jnp.concatenate([x, y], -1),
                        [normal((2, 3)), normal((2, 2))]),
    "stack": (lambda x, y: tf.stack([x, y], axis=1), lambda x, y: jnp.stack([x, y], 1),
              [normal((2, 3)), normal((2, 3))]),
    "pack_list_operand": (lambda x, y: tf.constant(2.0) * [x, y], lambda x, y: 2.0 * jnp.stack([x, y]),
                          [normal((3,)), normal((3,))]),
    "unstack": (lambda x: tf.unstack(x, axis=1), lambda x: [x[:, i] for i in range(3)], [normal((2, 3))]),
    "split_num": (lambda x: tf.split(x, 2, axis=1), lambda x: jnp.split(x, 2, 1), [normal((2, 4))]),
    "split_sizes": (lambda x: tf.split(x, [1, 3], axis=1), lambda x: [x[:, :1], x[:, 1:]], [normal((2, 4))]),
    "add_n": (lambda x, y, z: tf.add_n([x, y, z]), lambda x, y, z: x + y + z,
              [normal((2, 3)), normal((2, 3)), normal((2, 3))]),
    "einsum": (lambda x, y: tf.einsum("bij,jk->bik", x, y), lambda x, y: jnp.einsum("bij,jk->bik", x, y),
               [normal((2, 3, 4)), normal((4, 5))]),
    "matmul": (tf.matmul, jnp.matmul, [normal((3, 4)), normal((4, 2))]),
    "matmul_batched": (tf.matmul, jnp.matmul, [normal((2, 3, 4)), normal((2, 4, 2))]),
    "matmul_transpose_a": (lambda a, b: tf.matmul(a, b, transpose_a=True), lambda a, b: a.T @ b,
                           [normal((4, 3)), normal((4, 2))]),
    "matmul_transpose_b": (lambda a, b: tf.matmul(a, b, transpose_b=True), lambda a, b: a @ b.T,
                           [normal((3, 4)), normal((2, 4))]),
    "matmul_operator": (lambda a, b: a @ b, jnp.matmul, [normal((3, 4)), normal((4, 2))]),
    "tensordot": (lambda a, b: tf.tensordot(a, b, axes=[[1], [0]]), lambda a, b: jnp.tensordot(a, b, ((1,), (0,))),
                  [normal((3, 4)), normal((4, 2))]),
    "tensordot_int": (lambda a, b: tf.tensordot(a, b, 1), lambda a, b: jnp.tensordot(a, b, 1),
                      [normal((3, 4)), normal((4, 2))]),
    "cast_f32_f16": (lambda x: tf.cast(x, tf.float16) * 1.0, lambda x: x.astype(jnp.float16) * 1.0, [normal((3,))]),
    "gather": (lambda p, i: tf.gather(p, i), lambda p, i: p[i], [normal((5, 3)), ints((4,), 5)]),
    "boolean_mask": (lambda p: tf.boolean_mask(p, _MASK, axis=1), lambda p: p[:, _MASK], [normal((2, 3, 2))]),
    "gather_axis1": (lambda p, i: tf.gather(p, i, axis=1), lambda p, i: p[:, i], [normal((2, 5)), ints((2, 3), 5)]),
    "gather_batch_dims": (lambda p, i: tf.gather(p, i, batch_dims=1, axis=1),
                          lambda p, i: jnp.take_along_axis(p, i, axis=1), [normal((3, 5)), ints((3, 2), 5)]),
    "gather_nd": (lambda p, i: tf.gather_nd(p, i), lambda p, i: p[i[:, 0], i[:, 1]],
                  [normal((4, 3)), lambda: np.array([[0, 1], [3, 2], [0, 1]], np.int32)]),
    "one_hot_values": (lambda i, on, off: tf.one_hot(i, 4, on_value=on, off_value=off),
                       lambda i, on, off: jnp.where(jax.nn.one_hot(i, 4) > 0, on, off),
                       [ints((3,), 4), lambda: np.float32(2.0), lambda: np.float32(-1.0)]),
    "reverse": (lambda x: tf.reverse(x, [1]), lambda x: x[:, ::-1], [normal((2, 3))]),
    "roll": (lambda x: tf.roll(x, 1, axis=0), lambda x: jnp.roll(x, 1, 0), [normal((4, 2))]),
    "sort": (lambda x: tf.sort(x), jnp.sort, [normal((3, 5))]),
    "sort_descending": (lambda x: tf.sort(x, direction="DESCENDING"), lambda x: -jnp.sort(-x), [normal((3, 5))]),
    "top_k": (lambda x: tf.math.top_k(x, k=2)[0], lambda x: -jnp.sort(-x)[..., :2], [normal((3, 5))]),
    "variable_value": (lambda x: tf.identity(x) * 2.0, lambda x: x * 2.0, [normal((2,))]),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_op(name):
    tf_fn, jfn, makers = SHAPE_OPS[name]
    check_op(tf_fn, jfn, makers, rtol=1e-3 if "f16" in name else 2e-5, atol=1e-3 if "f16" in name else 2e-5)


INDEXING = {
    "int": (lambda x: x[1], [normal((3, 4))]),
    "negative_int": (lambda x: x[-1, 2], [normal((3, 4))]),
    "slice": (lambda x: x[1:, ::2], [normal((3, 4))]),
    "newaxis": (lambda x: x[:, None, 1:3], [normal((3, 4))]),
    "ellipsis": (lambda x: x[..., 0], [normal((2, 3, 4))]),
    "int_array": (lambda x: x[np.array([0, 2, 2])], [normal((3, 4))]),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_getitem(name):
    key_fn, makers = INDEXING[name]
    check_op(key_fn, key_fn, makers)


def test_getitem_tensor_index():
    # a scalar int tensor index (static) and an int tensor index (dynamic input)
    check_op(lambda x: x[tf.constant(1)] + x[tf.constant([0, 0])][0],
             lambda x: x[1] + x[jnp.array([0, 0])][0], [normal((3, 4))])


def test_where_condition_tensor_and_moments():
    check_op(lambda x: list(tf.nn.moments(x, axes=[0])),
             lambda x: [jnp.mean(x, 0), jnp.var(x, 0)], [normal((5, 3))])


# ---------------------------------------------------------------- linear algebra
LINALG = {
    "solve": (tf.linalg.solve, jnp.linalg.solve, [well_conditioned(3), normal((3, 2))]),
    "solve_adjoint": (lambda a, b: tf.linalg.solve(a, b, adjoint=True), lambda a, b: jnp.linalg.solve(a.T, b),
                      [well_conditioned(3), normal((3, 2))]),
    "inv": (tf.linalg.inv, jnp.linalg.inv, [well_conditioned(3)]),
    "det": (tf.linalg.det, jnp.linalg.det, [well_conditioned(3)]),
    "logdet": (tf.linalg.logdet, lambda a: jnp.linalg.slogdet(a)[1], [spd(3)]),
    "cholesky": (tf.linalg.cholesky, jnp.linalg.cholesky, [spd(3)]),
    "eigh": (lambda a: tf.linalg.eigh(a)[0], lambda a: jnp.linalg.eigh(a)[0], [spd(3)]),
    "eigvalsh": (tf.linalg.eigvalsh, jnp.linalg.eigvalsh, [spd(3)]),
    "trace": (tf.linalg.trace, jnp.trace, [normal((3, 3))]),
    "diag_part": (tf.linalg.diag_part, jnp.diagonal, [normal((3, 3))]),
    "diag": (tf.linalg.diag, jnp.diag, [normal((3,))]),
    "matrix_transpose": (tf.linalg.matrix_transpose, lambda a: jnp.swapaxes(a, -1, -2), [normal((2, 3, 4))]),
    "matvec": (tf.linalg.matvec, lambda a, b: a @ b, [normal((3, 4)), normal((4,))]),
    "l2_normalize": (lambda x: tf.math.l2_normalize(x, axis=1), lambda x: x / jnp.linalg.norm(x, axis=1, keepdims=True),
                     [normal((2, 3))]),
    "global_norm": (lambda x, y: tf.linalg.global_norm([x, y]), lambda x, y: jnp.sqrt(jnp.sum(x * x) + jnp.sum(y * y)),
                    [normal((2, 3)), normal((4,))]),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg(name):
    tf_fn, jfn, makers = LINALG[name]
    check_op(tf_fn, jfn, makers, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- neural network
def _conv_ref(x, w, strides=(1, 1), padding="VALID"):
    return jax.lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _clip_norm_ref(t, c):
    n = jnp.sqrt(jnp.sum(t * t))
    return t * c / jnp.maximum(n, c)


NN = {
    "sparse_xent": (lambda l, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=l, logits=z),
                    lambda l, z: -jnp.take_along_axis(jax.nn.log_softmax(z), l[:, None], 1)[:, 0],
                    [ints((4,), 3), normal((4, 3))]),
    "xent": (lambda l, z: tf.nn.softmax_cross_entropy_with_logits(labels=l, logits=z),
             lambda l, z: -jnp.sum(l * jax.nn.log_softmax(z), -1),
             [lambda: jax.nn.softmax(R.normal(size=(4, 3))).astype(np.float32), normal((4, 3))]),
    "sigmoid_xent": (lambda l, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=l, logits=z),
                     lambda l, z: -l * jax.nn.log_sigmoid(z) - (1 - l) * jax.nn.log_sigmoid(-z),
                     [uniform((4, 3), 0.0, 1.0), normal((4, 3))]),
    "bias_add": (tf.nn.bias_add, lambda x, b: x + b, [normal((2, 3, 4)), normal((4,))]),
    "conv2d_valid": (lambda x, w: tf.nn.conv2d(x, w, 1, "VALID"), _conv_ref, [normal((2, 5, 5, 3)), normal((3, 3, 3, 4))]),
    "conv2d_same_stride2": (lambda x, w: tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME"),
                            lambda x, w: _conv_ref(x, w, (2, 2), "SAME"), [normal((1, 6, 6, 2)), normal((3, 3, 2, 3))]),
    "max_pool2d": (lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"),
                   lambda x: jnp.max(x.reshape(1, 2, 2, 2, 2, 3), axis=(2, 4)), [normal((1, 4, 4, 3))]),
    "avg_pool2d": (lambda x: tf.nn.avg_pool2d(x, 2, 2, "VALID"),
                   lambda x: jnp.mean(x.reshape(1, 2, 2, 2, 2, 3), axis=(2, 4)), [normal((1, 4, 4, 3))]),
    "avg_pool2d_same": (lambda x: tf.nn.avg_pool2d(x, 3, 1, "SAME"),
                        lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
                        / jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
                        [normal((1, 4, 4, 2))]),
    "clip_by_norm_clipped": (lambda t: tf.clip_by_norm(t, 0.5), lambda t: _clip_norm_ref(t, 0.5), [normal((3, 2))]),
    "clip_by_norm_unclipped": (lambda t: tf.clip_by_norm(t, 100.0), lambda t: _clip_norm_ref(t, 100.0), [normal((3, 2))]),
    "clip_by_global_norm": (lambda x, y: tf.clip_by_global_norm([x, y], 0.5)[0],
                            lambda x, y: [x * 0.5 / jnp.maximum(jnp.sqrt(jnp.sum(x * x) + jnp.sum(y * y)), 0.5),
                                          y * 0.5 / jnp.maximum(jnp.sqrt(jnp.sum(x * x) + jnp.sum(y * y)), 0.5)],
                            [normal((3,)), normal((2, 2))]),
    "compute_average_loss": (lambda x: tf.nn.compute_average_loss(x, global_batch_size=8), lambda x: jnp.sum(x) / 8,
                             [normal((4,))]),
}


@pytest.mark.parametrize("name", sorted(NN))
def test_nn(name):
    tf_fn, jfn, makers = NN[name]
    check_op(tf_fn, jfn, makers, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- single-element shapes ([1], [1, 1])
# Size-1 dimensions are where unbroadcasting and reductions go wrong silently (a [1, 1]
# softmax gradient once did). Unary, binary and reduction ops get these shapes in their
# tables above; every other op gets a row here.
def _pos(shape):
    return uniform(shape, 0.5, 2.0)


def _const(value, dtype=np.float32):
    return lambda: np.asarray(value, dtype)


SINGLE = {
    "select": (lambda c, x, y: tf.where(c, x, y), jnp.where, [_const([[True]], np.bool_), normal((1,)), normal((1, 1))]),
    "clip_by_value": (lambda t: tf.clip_by_value(t, -0.5, 0.5), lambda t: jnp.clip(t, -0.5, 0.5), [uniform((1, 1), -0.4, 0.4)]),
    "cumsum": (lambda x: tf.math.cumsum(x, axis=1), lambda x: jnp.cumsum(x, 1), [normal((1, 1))]),
    "cumprod": (lambda x: tf.math.cumprod(x, axis=1, exclusive=True), lambda x: jnp.ones_like(x), [normal((1, 1))]),
    "norm": (lambda x: [tf.norm(x), tf.norm(x, ord=1, axis=0)], lambda x: [jnp.sqrt(jnp.sum(x * x)), jnp.abs(x[0])],
             [nonzero((1, 1))]),
    "reshape": (lambda x: tf.reshape(x, [1]), lambda x: x.reshape(1), [normal((1, 1))]),
    "transpose": (lambda x: tf.transpose(x), lambda x: x.T, [normal((1, 1))]),
    "squeeze": (lambda x: tf.squeeze(x), jnp.squeeze, [normal((1, 1))]),
    "expand_dims": (lambda x: tf.expand_dims(x, 0), lambda x: x[None], [normal((1,))]),
    "tile": (lambda x: tf.tile(x, [3]), lambda x: jnp.tile(x, 3), [normal((1,))]),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [2, 3]), lambda x: jnp.broadcast_to(x, (2, 3)), [normal((1,))]),
    "pad": (lambda x: tf.pad(x, [[1, 0], [0, 2]]), lambda x: jnp.pad(x, ((1, 0), (0, 2))), [normal((1, 1))]),
    "concat": (lambda x, y: tf.concat([x, y], 0), lambda x, y: jnp.concatenate([x, y]), [normal((1, 1)), normal((1, 1))]),
    "stack": (lambda x, y: tf.stack([x, y]), lambda x, y: jnp.stack([x, y]), [normal((1,)), normal((1,))]),
    "pack": (lambda x, y: tf.constant(2.0, x.dtype) * [x, y], lambda x, y: 2.0 * jnp.stack([x, y]), [normal((1,)), normal((1,))]),
    "unstack": (lambda x: tf.unstack(x), lambda x: [x[0]], [normal((1, 1))]),
    "split": (lambda x: tf.split(x, 1, axis=1), lambda x: [x], [normal((1, 1))]),
    "add_n": (lambda x, y: tf.add_n([x, y]), jnp.add, [normal((1, 1)), normal((1, 1))]),
    "einsum": (lambda x, y: tf.einsum("ij,jk->ik", x, y), jnp.matmul, [normal((1, 1)), normal((1, 1))]),
    "matmul": (tf.matmul, jnp.matmul, [normal((1, 1)), normal((1, 1))]),
    "matmul_broadcast_batch": (tf.matmul, jnp.matmul, [normal((2, 1, 1)), normal((1, 1))]),
    "tensordot": (lambda a, b: tf.tensordot(a, b, 1), lambda a, b: jnp.tensordot(a, b, 1), [normal((1, 1)), normal((1, 1))]),
    "cast": (lambda x: tf.cast(x, x.dtype), lambda x: x, [normal((1, 1))]),
    "gather": (lambda p, i: tf.gather(p, i), lambda p, i: p[i], [normal((1, 1)), _const([0], np.int32)]),
    "gather_nd": (lambda p, i: tf.gather_nd(p, i), lambda p, i: p[i[:, 0], i[:, 1]], [normal((1, 1)), _const([[0, 0]], np.int32)]),
    "boolean_mask": (lambda p: tf.boolean_mask(p, np.array([[True]])), lambda p: p.reshape(1), [normal((1, 1))]),
    "one_hot": (lambda i, on, off: tf.one_hot(i, 1, on_value=on, off_value=off),
                lambda i, on, off: jnp.where(jax.nn.one_hot(i, 1) > 0, on, off), [_const([0], np.int32), normal(()), normal(())]),
    "getitem": (lambda x: x[0], lambda x: x[0], [normal((1, 1))]),
    "reverse": (lambda x: tf.reverse(x, [1]), lambda x: x[:, ::-1], [normal((1, 1))]),
    "roll": (lambda x: tf.roll(x, 1, axis=0), lambda x: x, [normal((1,))]),
    "sort": (lambda x: tf.sort(x), jnp.sort, [normal((1, 1))]),
    "top_k": (lambda x: tf.math.top_k(x, k=1)[0], lambda x: x, [normal((1, 1))]),
    "solve": (tf.linalg.solve, jnp.linalg.solve, [_pos((1, 1)), normal((1, 1))]),
    "inv": (tf.linalg.inv, jnp.linalg.inv, [_pos((1, 1))]),
    "det": (tf.linalg.det, jnp.linalg.det, [_pos((1, 1))]),
    "logdet": (tf.linalg.logdet, lambda a: jnp.log(a[0, 0]), [_pos((1, 1))]),
    "cholesky": (tf.linalg.cholesky, jnp.sqrt, [_pos((1, 1))]),
    "eigh": (lambda a: tf.linalg.eigh(a)[0], lambda a: a[0], [_pos((1, 1))]),
    "eigvalsh": (tf.linalg.eigvalsh, lambda a: a[0], [_pos((1, 1))]),
    "trace": (tf.linalg.trace, jnp.trace, [normal((1, 1))]),
    "diag_part": (tf.linalg.diag_part, jnp.diagonal, [normal((1, 1))]),
    "diag": (tf.linalg.diag, jnp.diag, [normal((1,))]),
    "matrix_transpose": (tf.linalg.matrix_transpose, lambda a: a.T, [normal((1, 1))]),
    "matvec": (tf.linalg.matvec, jnp.matmul, [normal((1, 1)), normal((1,))]),
    "l2_normalize": (lambda x: tf.math.l2_normalize(x, axis=1), lambda x: x / jnp.abs(x), [nonzero((1, 1))]),
    "global_norm": (lambda x: tf.linalg.global_norm([x]), lambda x: jnp.abs(x[0]), [nonzero((1,))]),
    "sparse_xent": (lambda l, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=l, logits=z),
                    lambda l, z: -jax.nn.log_softmax(z)[:, 0], [_const([0], np.int32), normal((1, 1))]),
    # labels that sum to one: there TensorFlow's rule (softmax - labels) is the derivative (see below)
    "xent": (lambda l, z: tf.nn.softmax_cross_entropy_with_logits(labels=l, logits=z),
             lambda l, z: -jnp.sum(l * jax.nn.log_softmax(z), -1), [_const([[1.0]]), normal((1, 1))]),
    "sigmoid_xent": (lambda l, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=l, logits=z),
                     lambda l, z: -l * jax.nn.log_sigmoid(z) - (1 - l) * jax.nn.log_sigmoid(-z),
                     [uniform((1, 1), 0.0, 1.0), normal((1, 1))]),
    "bias_add": (tf.nn.bias_add, jnp.add, [normal((1, 1)), normal((1,))]),
    "conv2d": (lambda x, w: tf.nn.conv2d(x, w, 1, "VALID"), _conv_ref, [normal((1, 1, 1, 1)), normal((1, 1, 1, 1))]),
    "max_pool2d": (lambda x: tf.nn.max_pool2d(x, 1, 1, "VALID"), lambda x: x, [normal((1, 1, 1, 1))]),
    "avg_pool2d_same": (lambda x: tf.nn.avg_pool2d(x, 2, 1, "SAME"), lambda x: x, [normal((1, 1, 1, 1))]),
    "moments": (lambda x: list(tf.nn.moments(x, axes=[0])), lambda x: [x[0], jnp.zeros(1, x.dtype)], [normal((1, 1))]),
    "clip_by_norm": (lambda t: tf.clip_by_norm(t, 0.1), lambda t: t * 0.1 / jnp.abs(t), [uniform((1, 1), 0.5, 2.0)]),
    # ops of issue 12
    "repeat": (lambda x: tf.repeat(x, 3, axis=0), lambda x: jnp.repeat(x, 3, 0), [normal((1, 1))]),
    "meshgrid": (lambda x, y: tf.meshgrid(x, y), lambda x, y: list(jnp.meshgrid(x, y)), [normal((1,)), normal((1,))]),
    "max_pool3d": (lambda x: tf.nn.max_pool3d(x, 1, 1, "VALID"), lambda x: x, [normal((1, 1, 1, 1, 1))]),
    "avg_pool3d_same": (lambda x: tf.nn.avg_pool3d(x, 2, 1, "SAME"), lambda x: x, [normal((1, 1, 1, 1, 1))]),
    "indexed_slices_to_dense": (lambda v: tf.convert_to_tensor(tf.IndexedSlices(v, tf.constant([0]), [1, 1])),
                                lambda v: v, [normal((1, 1))]),
    "embedding_lookup": (lambda p, i: tf.nn.embedding_lookup(p, i), lambda p, i: p[i], [normal((1, 1)), _const([[0]], np.int32)]),
}


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_single_element(name):
    tf_fn, jfn, makers = SINGLE[name]
    check_op(tf_fn, jfn, makers, rtol=1e-4, atol=1e-4, fd=True)


def test_softmax_xent_gradient_equals_tensorflow_for_unnormalised_labels():
    for labels, logits, want_labels, want_logits in [
            ([[0.5]], [[0.3]], [[-0.0]], [[0.5]]),
            ([[0.2, 0.5]], [[0.3, -0.1]], [[0.5130152702331543, 0.9130152463912964]],
             [[0.3986876606941223, -0.09868767857551575]])]:
        l, z = tf.constant(labels), tf.constant(logits)
        with tf.GradientTape() as tape:
            tape.watch([l, z])
            y = tf.nn.softmax_cross_entropy_with_logits(labels=l, logits=z)
        gl, gz = tape.gradient(y, [l, z])
        np.testing.assert_allclose(gl.numpy(), want_labels, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(gz.numpy(), want_logits, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- ops of issue 12, general shapes
def _pool3d_ref(kind, k, s, padding):
    def f(x):
        win, st = (1,) + k + (1,), (1,) + s + (1,)
        if kind == "max":
            return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, win, st, padding)
        return (jax.lax.reduce_window(x, 0.0, jax.lax.add, win, st, padding)
                / jax.lax.reduce_window(jnp.ones_like(x), 0.0, jax.lax.add, win, st, padding))
    return f


NEW_OPS = {
    "repeat_per_element": (lambda x: tf.repeat(x, [1, 0, 2], axis=1), lambda x: jnp.repeat(x, np.array([1, 0, 2]), 1),
                           [normal((2, 3))]),
    "repeat_flat": (lambda x: tf.repeat(x, 2), lambda x: jnp.repeat(x.reshape(-1), 2), [normal((2, 2))]),
    "meshgrid_xy": (lambda x, y, z: tf.meshgrid(x, y, z), lambda x, y, z: list(jnp.meshgrid(x, y, z)),
                    [normal((2,)), normal((3,)), normal((4,))]),
    "meshgrid_ij": (lambda x, y: tf.meshgrid(x, y, indexing="ij"), lambda x, y: list(jnp.meshgrid(x, y, indexing="ij")),
                    [normal((2,)), normal((3,))]),
    "max_pool3d_valid": (lambda x: tf.nn.max_pool3d(x, 2, 2, "VALID"), _pool3d_ref("max", (2, 2, 2), (2, 2, 2), "VALID"),
                         [normal((2, 4, 4, 4, 2))]),
    "max_pool3d_same": (lambda x: tf.nn.max_pool3d(x, [2, 1, 3], [1, 2, 1], "SAME"),
                        _pool3d_ref("max", (2, 1, 3), (1, 2, 1), "SAME"), [normal((1, 3, 4, 3, 2))]),
    "avg_pool3d_valid": (lambda x: tf.nn.avg_pool3d(x, 2, 1, "VALID"), _pool3d_ref("avg", (2, 2, 2), (1, 1, 1), "VALID"),
                         [normal((1, 3, 3, 3, 2))]),
    "avg_pool3d_same": (lambda x: tf.nn.avg_pool3d(x, 3, 2, "SAME"), _pool3d_ref("avg", (3, 3, 3), (2, 2, 2), "SAME"),
                        [normal((2, 4, 3, 5, 1))]),
    "indexed_slices_to_dense": (lambda v: tf.convert_to_tensor(tf.IndexedSlices(v, tf.constant([2, 0, 2]), [3, 2])),
                                lambda v: jnp.zeros((3, 2), v.dtype).at[jnp.array([2, 0, 2])].add(v), [normal((3, 2))]),
    "embedding_lookup_max_norm": (lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=0.5),
                                  lambda p, i: _clip_rows(p[i], 0.5), [normal((4, 3)), ints((2, 2), 4)]),
    "gather_twice_sparse": (lambda p: tf.gather(p, [0, 2]) * tf.gather(p, [1, 1]),
                            lambda p: p[jnp.array([0, 2])] * p[jnp.array([1, 1])], [normal((3, 2))]),
}

# The special functions and safe ops of tf.math added for TensorFlow's missing names (ops/more_math_ops.py);
# zeta, polygamma and betainc only in the argument TensorFlow differentiates (None for the others).
_SP = jax.scipy.special
NEW_OPS.update({
    "erfinv": (tf.math.erfinv, _SP.erfinv, [uniform((1, 1), -0.8, 0.8)]),
    "ndtri": (tf.math.ndtri, _SP.ndtri, [uniform((1, 1), 0.1, 0.9)]),
    "erfcinv": (tf.math.erfcinv, lambda x: -_SP.ndtri(x / 2) / np.sqrt(2).astype(np.float32), [uniform((1, 1), 0.2, 1.8)]),
    "bessel_i0": (tf.math.bessel_i0, _SP.i0, [normal((1, 1))]),
    "bessel_i0e": (tf.math.bessel_i0e, _SP.i0e, [nonzero((1, 1))]),
    "bessel_i1": (tf.math.bessel_i1, _SP.i1, [normal((1, 1))]),
    "bessel_i1e": (tf.math.bessel_i1e, _SP.i1e, [nonzero((1, 1))]),
    "xdivy": (tf.math.xdivy, lambda x, y: x / y, [normal((1, 1)), uniform((1, 1), 0.5, 2.0)]),
    "xlog1py": (tf.math.xlog1py, lambda x, y: x * jnp.log1p(y), [normal((1, 1)), uniform((1, 1), 0.0, 2.0)]),
    "reciprocal_no_nan": (tf.math.reciprocal_no_nan, lambda x: 1 / x, [uniform((1, 1), 0.5, 2.0)]),
    "igamma": (tf.math.igamma, _SP.gammainc, [uniform((1, 1), 0.5, 2.0), uniform((1, 1), 0.5, 2.0)]),
    "igammac": (tf.math.igammac, _SP.gammaincc, [uniform((1, 1), 0.5, 2.0), uniform((1, 1), 0.5, 2.0)]),
    "zeta": (lambda q: tf.math.zeta(tf.cast([[2.0]], q.dtype), q), lambda q: _SP.zeta(jnp.array([[2.0]], q.dtype), q),
             [uniform((1, 1), 1.0, 2.0)]),
    "polygamma": (lambda x: tf.math.polygamma(tf.cast([[1.0]], x.dtype), x),
                  lambda x: _SP.polygamma(jnp.array([[1]]), x), [uniform((1, 1), 1.0, 2.0)]),
    "betainc": (lambda x: tf.math.betainc(tf.cast([[2.0]], x.dtype), tf.cast([[3.0]], x.dtype), x),
                lambda x: _SP.betainc(jnp.array([[2.0]], x.dtype), jnp.array([[3.0]], x.dtype), x), [uniform((1, 1), 0.2, 0.8)]),
})


def _scipy_fn(name, derivative):
    """A JAX oracle of ``scipy.special.<name>`` (float64 values by SciPy) with the textbook
    ``derivative(x, scipy)``: for the Bessel functions JAX lacks (its ``bessel_jn`` is nan here)."""
    import scipy.special as sps

    def value(x):
        return jax.pure_callback(lambda a: getattr(sps, name)(np.asarray(a, np.float64)).astype(a.dtype),
                                 jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    @jax.custom_jvp
    def f(x):
        return value(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        call = lambda g: jax.pure_callback(  # noqa: E731
            lambda a: g(np.asarray(a, np.float64), sps).astype(a.dtype), jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return value(x), call(derivative) * dx
    return f


# tf.math.special's Bessel functions (TF's Cephes kernels; d/dx by the recurrences), its other
# special functions against jax.scipy, and linalg.band_part / tensor_diag.
NEW_OPS.update({
    "bessel_j0": (tf.math.special.bessel_j0, _scipy_fn("j0", lambda x, s: -s.j1(x)), [uniform((1, 1), 0.2, 3.0)]),
    "bessel_j1": (tf.math.special.bessel_j1, _scipy_fn("j1", lambda x, s: s.j0(x) - s.j1(x) / x),
                  [uniform((1, 1), 0.2, 3.0)]),
    "bessel_y0": (tf.math.special.bessel_y0, _scipy_fn("y0", lambda x, s: -s.y1(x)), [uniform((1, 1), 0.5, 3.0)]),
    "bessel_y1": (tf.math.special.bessel_y1, _scipy_fn("y1", lambda x, s: s.y0(x) - s.y1(x) / x),
                  [uniform((1, 1), 0.5, 3.0)]),
    "bessel_k0": (tf.math.special.bessel_k0, _scipy_fn("k0", lambda x, s: -s.k1(x)), [uniform((1, 1), 0.5, 3.0)]),
    "bessel_k0e": (tf.math.special.bessel_k0e, _scipy_fn("k0e", lambda x, s: s.k0e(x) - s.k1e(x)),
                   [uniform((1, 1), 0.5, 3.0)]),
    "bessel_k1": (tf.math.special.bessel_k1, _scipy_fn("k1", lambda x, s: -s.k0(x) - s.k1(x) / x),
                  [uniform((1, 1), 0.5, 3.0)]),
    "bessel_k1e": (tf.math.special.bessel_k1e, _scipy_fn("k1e", lambda x, s: s.k1e(x) - s.k0e(x) - s.k1e(x) / x),
                   [uniform((1, 1), 0.5, 3.0)]),
    "dawsn": (tf.math.special.dawsn, _SP.dawsn, [normal((1, 1))]),
    "expint": (tf.math.special.expint, _SP.expi, [uniform((1, 1), 0.5, 2.0)]),
    "fresnel_sin": (tf.math.special.fresnel_sin, lambda x: _SP.fresnel(x)[0], [uniform((1, 1), -2.0, 2.0)]),
    "fresnel_cos": (tf.math.special.fresnel_cos, lambda x: _SP.fresnel(x)[1], [uniform((1, 1), -2.0, 2.0)]),
    "spence": (tf.math.special.spence, _scipy_fn("spence", lambda x, s: np.log(x) / (1 - x)),   # jax.grad: nan
               [uniform((1, 1), 0.5, 0.9)]),
    "band_part": (lambda x: tf.linalg.band_part(x, 1, 0), lambda x: jnp.triu(jnp.tril(x, 0), -1), [normal((1, 1))]),
    "band_part_3x4": (lambda x: tf.linalg.band_part(x, 1, 2), lambda x: jnp.triu(jnp.tril(x, 2), -1),
                      [normal((3, 4))]),
    "tensor_diag": (tf.linalg.tensor_diag, lambda x: jnp.reshape(jnp.diag(x.ravel()), x.shape * 2), [normal((1, 1))]),
    "tensor_diag_2x2": (tf.linalg.tensor_diag, lambda x: jnp.reshape(jnp.diag(x.ravel()), x.shape * 2),
                        [normal((2, 2))]),
})


def _clip_rows(x, c):
    n = jnp.sqrt(jnp.sum(x * x, axis=-1, keepdims=True))
    return x * c / jnp.maximum(n, c)


@pytest.mark.parametrize("name", sorted(NEW_OPS))
def test_new_ops(name):
    tf_fn, jfn, makers = NEW_OPS[name]
    check_op(tf_fn, jfn, makers, rtol=1e-4, atol=1e-4, fd=True)


# ---------------------------------------------------------------- coverage of the table
# Ops whose outputs are integers or booleans: nothing to differentiate (TensorFlow returns None).
NOT_DIFFERENTIABLE = {"is_nan", "is_inf", "is_finite", "logical_not", "equal", "not_equal", "less",
                      "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
                      "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "reduce_all", "reduce_any",
                      "count_nonzero", "argmax", "argmin", "allclose",
                      # TensorFlow registers None as their gradient (test_tf_kinks checks it)
                      "floor", "ceil", "round", "floordiv", "rint", "nextafter", "truncatediv", "truncatemod"}
# Ops checked on general shapes whose derivative does not exist at every single-element input.
NO_SINGLE_ELEMENT = {"reduce_std": "the standard deviation of one element is 0, where sqrt has no derivative"}


def _fd_rows():
    """(tapejax fn, input makers) of the rows checked against finite differences too: they
    hold every differentiable op, at single-element shapes where it has a derivative there."""
    for tf_fn, _, maker in UNARY.values():
        yield (lambda *xs, f=tf_fn: [f(x) for x in xs]), [maker(s) for s in UNARY_SHAPES if s]
    for tf_fn, _, mx, my in BINARY.values():
        yield (lambda *xs, f=tf_fn: [f(xs[i], xs[i + 1]) for i in range(0, len(xs), 2)]), \
            [m for sx, sy in BINARY_SHAPES for m in (mx(sx), my(sy))]
    for name, (tf_fn, _) in REDUCTIONS.items():
        yield (lambda x, f=tf_fn: [f(x), f(x, axis=[1], keepdims=True)]), \
            [normal(RED_SHAPE if name in NO_SINGLE_ELEMENT else (1, 1))]
    for table in (SINGLE, NEW_OPS):
        for tf_fn, _, makers in table.values():
            yield tf_fn, makers


def _table_ops():
    from tapejax._core import engine as _engine
    ops = {_engine.packed}
    for module in (_ops, tf.nn, tf.math, tf.linalg):
        ops.update(v for v in vars(module).values() if isinstance(v, tf.extend.Op))
    return {op.name for op in ops}


def test_table_is_covered():
    """Every differentiable op of the table is on the tape of a row checked against jax.vjp and
    finite differences, on a single-element input too: a new op without a gradient row fails here."""
    seen, single = set(), set()
    for tf_fn, makers in _fd_rows():
        xs = [tf.constant(m()) for m in makers]
        with tf.GradientTape() as tape:
            tape.watch([x for x in xs if x.dtype.is_floating])
            tf_fn(*xs)
        for n in tape._nodes:
            seen.add(n.op.name)
            if any(np.size(v) == 1 and np.ndim(v) >= 1 for v in n.args if hasattr(v, "shape")):
                single.add(n.op.name)
    differentiable = _table_ops() - NOT_DIFFERENTIABLE
    assert not differentiable - seen, f"ops without a gradient row: {sorted(differentiable - seen)}"
    no_single = differentiable - single - set(NO_SINGLE_ELEMENT)
    assert not no_single, f"ops never checked on a [1] / [1, 1] input: {sorted(no_single)}"


def test_coverage_check_notices_a_new_op(monkeypatch):
    monkeypatch.setattr(_ops, "_brand_new_op", defop(jnp.sin, name="brand_new_op"), raising=False)
    with pytest.raises(AssertionError, match="brand_new_op"):
        test_table_is_covered()


# ---------------------------------------------------------------- finite differences (float64)
FD_FUNCS = {
    "chain": (lambda x: tf.reduce_sum(tf.tanh(tf.sin(x) * 1.5 + x ** 2)), [(4,)]),
    "matmul_softmax": (lambda a, b: tf.nn.softmax(a @ b), [(3, 4), (4, 2)]),
    "broadcast_div": (lambda x, y: x / (1.0 + y * y), [(2, 3), (3,)]),
    "reductions": (lambda x: tf.reduce_logsumexp(x, axis=1) * tf.reduce_mean(x ** 2, axis=1), [(3, 4)]),
    "shapes": (lambda x: tf.reshape(tf.transpose(x), [-1])[2:7] * tf.tile(x[0], [2])[1:6], [(3, 4)]),
    "linalg": (lambda a, b: tf.linalg.solve(a @ tf.transpose(a) + 3.0 * tf.eye(3, dtype=tf.float64), b), [(3, 3), (3, 2)]),
    "hand_rules": (lambda x, y: tf.exp(x) * tf.tanh(y) + tf.sigmoid(x * y) + tf.maximum(x, y) - tf.minimum(x, 2 * y),
                   [(5,), (5,)]),
}


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("name", sorted(FD_FUNCS))
def test_finite_differences_float64(name, x64):
    f, shapes = FD_FUNCS[name]
    args = tuple(jnp.asarray(R.normal(size=s), jnp.float64) for s in shapes)

    def pure(*arrays):
        return f(*[tf.Tensor(a) for a in arrays])._value

    # JAX through the tapejax ops (the op functions are pure JAX) ...
    check_grads(jax.jit(pure), args, order=1, modes=["rev"], eps=1e-6, atol=1e-6, rtol=1e-6)
    # ... and the tape itself, as a VJP, against finite differences.
    check_vjp(pure, tape_vjp(f), args, eps=1e-6, atol=1e-6, rtol=1e-6)
    out, _ = tape_vjp(f)(*args)
    assert out.dtype == jnp.float64


def test_wrong_rule_fails_the_checker(x64):
    good = defop(jnp.sin, name="good_sin", vjp=lambda ans, x: lambda g: g * jnp.cos(x))
    bad = defop(jnp.sin, name="bad_sin", vjp=lambda ans, x: lambda g: g * jnp.sin(x))  # wrong on purpose
    arg = (jnp.asarray(R.normal(size=(4,)), jnp.float64),)
    pure = lambda a: jnp.sin(a)  # noqa: E731
    check_vjp(pure, tape_vjp(lambda x: good(x) * 1.0), arg, eps=1e-6, atol=1e-6, rtol=1e-6)
    with pytest.raises(AssertionError):
        check_vjp(pure, tape_vjp(lambda x: bad(x) * 1.0), arg, eps=1e-6, atol=1e-6, rtol=1e-6)
    # and the table comparison against jax.vjp detects it as well
    with pytest.raises(AssertionError):
        check_op(bad, jnp.sin, [normal((4,))])
    with pytest.raises(AssertionError):  # and so does the float64 check of every row
        check_fd(bad, [normal((4,))()])
    check_op(good, jnp.sin, [normal((4,))], fd=True)
