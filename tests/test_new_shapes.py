"""New input shapes run on the host: each primitive of the host evaluator against XLA, and
gradients at shapes met for the first time (nothing compiled) against ``jax.grad``."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import tapejax as tf
from tapejax import ops as _ops
from tapejax._core import backward as _backward, basic as _basic, engine as _engine, host_eval as _host_eval
from tapejax._core import new_shapes as _new_shapes
from tapejax.ops import array_ops, linalg_ops, math_ops, nn_ops

_OP_MODULES = [math_ops, array_ops, linalg_ops, nn_ops, _basic]

from conftest import assert_close, host_first

R = np.random.default_rng(0)
F32 = R.normal(size=(3, 4)).astype(np.float32) * 2
F32[0, :3] = [np.nan, np.inf, -0.0]
POS = np.abs(R.normal(size=(3, 4))).astype(np.float32) + 0.1
UNIT = np.tanh(R.normal(size=(3, 4))).astype(np.float32)
F64 = R.normal(size=(3, 4))
I32 = R.integers(-2**31, 2**31 - 1, size=(3, 4)).astype(np.int32)
SMALL = R.integers(-5, 6, size=(3, 4)).astype(np.int32)
B = R.normal(size=(3, 4)) > 0
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.49999997], np.float32)

# (name, function, arguments); float results are compared to XLA's to rounding, others exactly.
CASES = [
    ("neg", jnp.negative, (F32,)), ("abs", jnp.abs, (F32,)), ("sign", jnp.sign, (F32,)),
    ("floor", jnp.floor, (F32,)), ("ceil", jnp.ceil, (F32,)),
    ("round_even", jnp.round, (HALVES,)),
    ("round_away", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), (HALVES,)),
    ("exp", jnp.exp, (F32,)), ("exp2", jnp.exp2, (F32,)), ("log", jnp.log, (F32,)),
    ("log1p", jnp.log1p, (F32,)), ("expm1", jnp.expm1, (F32,)), ("tanh", jnp.tanh, (F32,)),
    ("sigmoid", jax.nn.sigmoid, (F32,)), ("sin", jnp.sin, (F32,)), ("cos", jnp.cos, (F32,)),
    ("tan", jnp.tan, (UNIT,)), ("arcsin", jnp.arcsin, (UNIT,)), ("arccos", jnp.arccos, (UNIT,)),
    ("arctan", jnp.arctan, (F32,)), ("sinh", jnp.sinh, (UNIT,)), ("cosh", jnp.cosh, (UNIT,)),
    ("arcsinh", jnp.arcsinh, (F32,)), ("arccosh", jnp.arccosh, (POS + 1,)),
    ("arctanh", jnp.arctanh, (UNIT * 0.9,)), ("sqrt", jnp.sqrt, (F32,)), ("rsqrt", lax.rsqrt, (POS,)),
    ("cbrt", jnp.cbrt, (F32,)), ("square", jnp.square, (F32,)), ("isfinite", jnp.isfinite, (F32,)),
    ("cube", lambda x: x ** 3, (F32,)), ("inverse_square", lambda x: x ** -2, (POS,)),
    ("pow", jnp.power, (POS, F32)), ("pow_int", lambda x, n: x ** n, (POS, 3)),
    ("arctan2", jnp.arctan2, (F32, UNIT)), ("rem", lax.rem, (F32, POS)),
    ("add", jnp.add, (F32, UNIT)), ("sub", jnp.subtract, (F32, UNIT)), ("mul", jnp.multiply, (F32, UNIT)),
    ("div", jnp.divide, (F32, UNIT)), ("max", jnp.maximum, (F32, UNIT)), ("min", jnp.minimum, (F32, UNIT)),
    ("scalar", lambda x: x * 2.5 + 1, (F32,)),
    ("compare", lambda x, y: (x < y, x <= y, x > y, x >= y, x == y, x != y), (F32, UNIT)),
    ("where", lambda p, x, y: jnp.where(p, x, y), (B, F32, UNIT)),
    ("clip", lambda x: jnp.clip(x, -1, 1), (F32,)), ("clamp", lambda x: lax.clamp(np.float32(-1), x, np.float32(1)), (UNIT,)),
    ("to_int", lambda x: x.astype(np.int32), (UNIT * 100,)), ("to_bool", lambda x: x.astype(bool), (F32,)),
    ("to_f64", lambda x: x.astype(np.float64), (F32,)), ("to_f32", lambda x: x.astype(np.float32), (F64,)),
    ("int_to_float", lambda x: x.astype(np.float32), (I32,)),
    ("f64_math", lambda x: jnp.tanh(x) * jnp.exp(-x * x), (F64,)),
    ("int_wraps", lambda x, y: (x + y, x * y, x - y, -x, jnp.abs(x)), (I32, I32[::-1])),
    ("int_pow", lambda x: x ** 3, (SMALL,)),
    ("bitwise", lambda x, y: (x & y, x | y, x ^ y, ~x), (I32, SMALL)),
    ("logical", lambda p, q: (p & q, p | q, p ^ q, ~p), (B, B[::-1])),
    ("reshape", lambda x: x.reshape(2, 6), (F32,)), ("transpose", lambda x: x.T, (F32,)),
    ("broadcast", lambda x: jnp.broadcast_to(x[:, None, :], (3, 2, 4)), (F32,)),
    ("expand_squeeze", lambda x: jnp.squeeze(jnp.expand_dims(x, 0), 0), (F32,)),
    ("slice", lambda x: x[1:3, ::2], (F32,)), ("index", lambda x: x[1], (F32,)),
    ("flip", lambda x: jnp.flip(x, (0, 1)), (F32,)),
    ("concatenate", lambda x, y: jnp.concatenate([x, y], 1), (F32, UNIT)),
    ("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1)), constant_values=7.0), (F32,)),
    ("pad_negative", lambda x: lax.pad(x, np.float32(0), ((-1, 2, 0), (1, -2, 0))), (F32,)),
    ("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), (F32, 5)),
    ("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, -3)), (F32, UNIT[:2, :2], 2)),
    ("iota", lambda x: x + jnp.arange(4, dtype=np.float32), (F32,)),
    ("split", lambda x: jnp.split(x, [1, 3], axis=1), (F32,)),
    ("cumsum", lambda x: (jnp.cumsum(x, 0), lax.cumsum(x, 1, reverse=True)), (UNIT,)),
    ("cumprod_max", lambda x: (jnp.cumprod(x, 1), lax.cummax(x, 0), lax.cummin(x, 1, reverse=True)), (UNIT,)),
    ("int_cumsum", lambda x: jnp.cumsum(x, 1), (I32,)),
    ("reductions", lambda x: (x.sum(0), x.prod(1), x.max(), x.min(0), x.mean(1), x.var(0)), (UNIT,)),
    ("int_reductions", lambda x: (x.sum(0), x.max(1), x.min()), (I32,)),
    ("argmax", lambda x: (jnp.argmax(x, 0), jnp.argmin(x, 1)), (F32,)),
    ("all_any", lambda p: (p.all(0), p.any(1), p.all()), (B,)),
    ("matmul", jnp.matmul, (F32[1:], UNIT.T)),
    ("batched_matmul", jnp.matmul, (R.normal(size=(2, 3, 4)).astype(np.float32),
                                    R.normal(size=(2, 4, 5)).astype(np.float32))),
    ("einsum", lambda a, b: jnp.einsum("bij,jkb->bki", a, b), (R.normal(size=(2, 3, 4)),
                                                             R.normal(size=(4, 5, 2)))),
    ("int_dot", jnp.dot, (SMALL, SMALL.T)),
    ("softmax", lambda x: jax.nn.softmax(x, axis=0), (UNIT,)),
    ("logsumexp", lambda x: jax.nn.logsumexp(x, axis=1), (UNIT,)),
    ("relu_grad", jax.grad(lambda x: jnp.sum(jax.nn.relu(x) ** 2)), (UNIT,)),
    ("mean_grad", jax.grad(lambda x: jnp.mean(jnp.tanh(x) @ x.T)), (UNIT,)),
]


def _flat(xs):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(xs)]


@pytest.mark.parametrize("inlined", [True, False], ids=["inlined", "nested_jit"])
@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_host_evaluator_matches_xla(name, fn, args, inlined):
    with jax.disable_jit(inlined):
        closed = jax.make_jaxpr(fn)(*args)
    got = _host_eval.evaluate(closed, _flat(args))
    want = _flat(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=2e-6 if w.dtype == np.float32 else 1e-13, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, w)


UNSUPPORTED = [
    ("bfloat16", lambda x: x + x, (F32.astype(jnp.bfloat16),)),
    ("complex", lambda x: x * x, (F32.astype(np.complex64),)),
    ("float_to_int_nan", lambda x: x.astype(np.int32), (F32,)),
    ("empty_max", lambda x: lax.reduce_max(x, (0,)), (np.zeros((0, 3), np.float32),)),
    ("interior_pad", lambda x: lax.pad(x, np.float32(0), ((0, 0, 1), (0, 0, 0))), (F32,)),
    ("sort", lambda x: jnp.sort(x, 0), (F32,)),
    ("gather", lambda x, i: x[i], (F32, np.array([2, 0], np.int32))),
    ("conv", lambda x, k: lax.conv(x, k, (1, 1), "SAME"), (np.ones((1, 1, 5, 5), np.float32),
                                                          np.ones((1, 1, 3, 3), np.float32))),
    ("while", lambda x: lax.while_loop(lambda c: c.sum() < 100, lambda c: c * 2 + 1, x), (POS,)),
    ("int_div", lambda x, y: x // y, (SMALL, SMALL + 10)),
]


@pytest.mark.parametrize("name,fn,args", UNSUPPORTED, ids=[c[0] for c in UNSUPPORTED])
def test_host_evaluator_refuses_what_it_does_not_compute_exactly(name, fn, args):
    closed = jax.make_jaxpr(fn)(*args)
    with pytest.raises(_host_eval.Unsupported):
        _host_eval.evaluate(closed, _flat(args))


# ---------------------------------------------------------------- gradients at new shapes

@pytest.fixture
def fresh():
    """Forgets every shape met and compiled program, so each test meets its shapes first."""
    _backward.clear_compile_caches()
    ops = [getattr(m, n) for m in _OP_MODULES for n in dir(m)] + [_backward._vjp_op]
    for op in ops:
        op = getattr(op, "op", op)
        if isinstance(op, _engine.Op) and op._seen is not None:
            op._seen.clear()
    # The counted ops start with no compiled variants: one near its limit (the worker's earlier
    # tests) would clear its cache at the test's first compile, and Counter.compiles() go negative.
    for op in Counter.OPS:
        op._jfn.clear_cache()
    yield
    _backward.clear_compile_caches()


class Counter:
    """Ops run on the host, and ops compiled (jitted variants of the op table), since made."""

    OPS = [_ops.relu, _ops.tanh, linalg_ops._matmul, _ops.add, _ops.reduce_mean.op, _backward._vjp_op]

    def __init__(self):
        self.host = _new_shapes.host_runs[0]
        self.compiled = [op._jfn._cache_size() for op in self.OPS]

    def host_runs(self):
        return _new_shapes.host_runs[0] - self.host

    def compiles(self):
        return sum(op._jfn._cache_size() - n for op, n in zip(self.OPS, self.compiled))


def _mlp(rng):
    return [tf.Variable(rng.normal(size=(5, 8)).astype(np.float32) * 0.5),
            tf.Variable(rng.normal(size=(8,)).astype(np.float32) * 0.1),
            tf.Variable(rng.normal(size=(8, 3)).astype(np.float32) * 0.5)]


def _mlp_loss(p, x, y):
    logits = tf.nn.relu(x @ p[0] + p[1]) @ p[2]
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))


def _mlp_loss_jax(p, x, y):
    logits = jax.nn.relu(x @ p[0] + p[1]) @ p[2]
    return jnp.mean(-jnp.sum(y * jax.nn.log_softmax(logits), -1))


_mlp_oracle = jax.jit(jax.value_and_grad(_mlp_loss_jax))   # compiled once a shape, not op by op


@pytest.mark.eager_dispatch   # counts ops run on the host and per-op compiles: op-by-op dispatch
@host_first
def test_new_batch_sizes_compile_nothing_and_match_jax(fresh):
    rng = np.random.default_rng(1)
    params = _mlp(rng)
    count = Counter()
    for n in (1, 2, 3, 7, 16):
        x = rng.normal(size=(n, 5)).astype(np.float32)
        y = jax.nn.one_hot(rng.integers(0, 3, n), 3).astype(np.float32)
        with tf.GradientTape() as tape:
            loss = _mlp_loss(params, tf.constant(x), tf.constant(y))
        grads = tape.gradient(loss, params)
        values = [p.numpy() for p in params]
        want, want_grads = _mlp_oracle(values, x, y)
        assert_close(loss, want, rtol=1e-5)
        assert_close(grads, want_grads, rtol=1e-5, atol=1e-6)
    assert count.compiles() == 0
    assert count.host_runs() >= 5 * 6
    assert len(_backward._BACKWARD_CACHE) == 0


def test_the_first_call_on_the_host_agrees_with_the_compiled_ones(fresh):
    rng = np.random.default_rng(2)
    params = _mlp(rng)
    x = tf.constant(rng.normal(size=(11, 5)).astype(np.float32))
    y = tf.constant(jax.nn.one_hot(rng.integers(0, 3, 11), 3).astype(np.float32))
    results = []
    for _ in range(3):          # host, compiled, cached
        with tf.GradientTape() as tape:
            loss = _mlp_loss(params, x, y)
        results.append([loss] + tape.gradient(loss, params))
    assert len(_backward._BACKWARD_CACHE) == 1
    for other in results[1:]:
        assert_close(results[0], other, rtol=2e-6, atol=1e-7)


def test_reductions_across_the_batch_are_exact(fresh):
    """What padding batches to a few sizes would get wrong: means, variances, maxima and a
    softmax over the batch axis."""
    rng = np.random.default_rng(3)
    w = tf.Variable(rng.normal(size=(4, 6)).astype(np.float32))

    def loss_tf(x):
        h = x @ w
        mean, var = tf.nn.moments(h, axes=[0])
        z = (h - mean) / tf.sqrt(var + 1e-3)                     # batch normalisation
        return (tf.reduce_sum(tf.nn.softmax(z, axis=0) * z) + tf.reduce_max(z)
                + tf.reduce_logsumexp(z) + tf.reduce_mean(tf.square(z)))

    def loss_jax(w, x):
        h = x @ w
        z = (h - h.mean(0)) / jnp.sqrt(h.var(0) + 1e-3)
        return (jnp.sum(jax.nn.softmax(z, axis=0) * z) + z.max() + jax.nn.logsumexp(z)
                + jnp.mean(z * z))

    for n in (2, 3, 5, 9):
        x = rng.normal(size=(n, 4)).astype(np.float32)
        with tf.GradientTape() as tape:
            loss = loss_tf(tf.constant(x))
        want, want_grad = jax.jit(jax.value_and_grad(loss_jax))(w.numpy(), x)   # the oracle, compiled once
        assert_close(loss, want, rtol=1e-5)
        assert_close(tape.gradient(loss, w), want_grad, rtol=1e-4, atol=1e-5)


def test_second_derivatives_at_new_shapes(fresh):
    for n in (2, 3, 6):
        xv = np.linspace(-1, 1, n).astype(np.float32)
        x = tf.constant(xv)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.tanh(x) * x ** 2)
            g = inner.gradient(y, x)
            s = tf.reduce_sum(g * g)
        h = outer.gradient(s, x)
        f = lambda a: jnp.sum(jnp.tanh(a) * a ** 2)  # noqa: E731
        assert_close(g, jax.jit(jax.grad(f))(xv), rtol=1e-5, atol=1e-6)
        assert_close(h, jax.jit(jax.grad(lambda a: jnp.sum(jax.grad(f)(a) ** 2)))(xv), rtol=1e-4, atol=1e-5)


def test_persistent_tapes_output_gradients_and_variables(fresh):
    rng = np.random.default_rng(4)
    w = tf.Variable(rng.normal(size=(3, 2)).astype(np.float32))
    frozen = tf.Variable(rng.normal(size=(2,)).astype(np.float32), trainable=False)
    for n in (4, 5):
        xv = rng.normal(size=(n, 3)).astype(np.float32)
        ct = rng.normal(size=(n, 2)).astype(np.float32)
        with tf.GradientTape(persistent=True) as tape:
            y = tf.sigmoid(tf.constant(xv) @ w) * frozen
            z = tf.reduce_sum(y * y)
        gy = tape.gradient(y, [w, frozen], output_gradients=tf.constant(ct))
        gz = tape.gradient(z, w)
        gw_zero = tape.gradient(z, frozen, unconnected_gradients="zero")
        del tape

        def f(wv):
            return jax.nn.sigmoid(xv @ wv) * frozen.numpy()
        assert gy[1] is None
        assert_close(gy[0], jax.vjp(f, w.numpy())[1](ct)[0], rtol=1e-5, atol=1e-6)
        assert_close(gz, jax.grad(lambda wv: jnp.sum(f(wv) ** 2))(w.numpy()), rtol=1e-5, atol=1e-6)
        assert_close(gw_zero, np.zeros(2, np.float32))


def test_integer_paths_and_dtypes_at_new_shapes(fresh):
    for n in (3, 4):
        x64 = tf.constant(np.linspace(-1, 1, n))                  # float64
        with tf.GradientTape() as tape:
            tape.watch(x64)
            k = tf.argmax(x64)                                   # int64, no gradient
            y = tf.reduce_sum(tf.exp(x64) * tf.cast(k, tf.float64))
        g = tape.gradient(y, x64)
        assert g.dtype == tf.float64
        assert_close(g, np.exp(np.linspace(-1, 1, n)) * (n - 1), rtol=1e-12)
        i = tf.constant(np.arange(n, dtype=np.int32))
        assert (i * 3 + 1).dtype == tf.int32
        assert tf.reduce_all(tf.equal(i, i)).dtype == tf.bool


def test_sequence_lengths(fresh):
    rng = np.random.default_rng(5)
    wx = tf.Variable(rng.normal(size=(4, 4)).astype(np.float32) * 0.5)
    wh = tf.Variable(rng.normal(size=(4, 4)).astype(np.float32) * 0.5)
    for t in (2, 3, 5, 4):
        xs = rng.normal(size=(t, 3, 4)).astype(np.float32)
        with tf.GradientTape() as tape:
            h = tf.zeros([3, 4])
            for i in range(t):
                h = tf.tanh(tf.constant(xs[i]) @ wx + h @ wh)
            loss = tf.reduce_mean(h ** 2)
        got = tape.gradient(loss, [wx, wh])

        def f(a, b):
            h = jnp.zeros((3, 4), np.float32)
            for i in range(t):
                h = jnp.tanh(xs[i] @ a + h @ b)
            return jnp.mean(h ** 2)
        assert_close(got, jax.grad(f, argnums=(0, 1))(wx.numpy(), wh.numpy()), rtol=1e-5, atol=1e-6)


def test_custom_gradient_at_new_shapes(fresh):
    @tf.custom_gradient
    def clip_grad(x):
        def grad(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)
        return tf.identity(x), grad

    for n in (2, 3):
        x = tf.constant(np.linspace(-2, 2, n).astype(np.float32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(clip_grad(x * 3.0) ** 2)
        want = 3 * np.clip(2 * 3 * x.numpy(), -0.5, 0.5)
        assert_close(tape.gradient(y, x), want, rtol=1e-6)


def test_ops_the_host_does_not_run_are_compiled(fresh):
    rng = np.random.default_rng(6)
    k = tf.Variable(rng.normal(size=(3, 3, 1, 2)).astype(np.float32))
    for n in (5, 6):
        xv = rng.normal(size=(1, n, n, 1)).astype(np.float32)
        idx = np.array([1, 0, n - 1], np.int32)
        with tf.GradientTape() as tape:
            y = tf.nn.conv2d(tf.constant(xv), k, strides=1, padding="SAME")
            z = tf.reduce_sum(tf.gather(tf.sort(tf.reshape(y, [-1])), idx) ** 2)

        def f(kv):
            yv = lax.conv_general_dilated(xv, kv, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return jnp.sum(jnp.sort(yv.reshape(-1))[idx] ** 2)
        assert_close(tape.gradient(z, k), jax.grad(f)(k.numpy()), rtol=1e-4, atol=1e-5)


def test_errors_at_new_shapes_are_tensorflows(fresh):
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.add(tf.ones([3]), tf.ones([4]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))


@pytest.mark.eager_dispatch   # counts ops run on the host: op-by-op dispatch
@host_first
def test_committed_inputs_keep_their_device(fresh):
    dev = jax.devices()[-1]
    x = tf.constant(jax.device_put(np.ones((3, 7), np.float32), dev))
    assert x._value.committed
    count = Counter()
    y = tf.tanh(x) * 2.0
    assert count.host_runs() == 2
    assert y._value.devices() == {dev} and y._value.committed
    z = tf.tanh(tf.ones([3, 7]))
    assert not z._value.committed


def test_tf_function_traces_and_compiles_as_before(fresh):
    f = tf.function(lambda x: tf.reduce_sum(tf.tanh(x) * 3.0))
    count = Counter()
    for n in (3, 4):
        assert_close(f(tf.ones([n])), n * 3 * np.tanh(1.0), rtol=1e-6)
    assert count.host_runs() == 0


@pytest.mark.eager_dispatch   # counts per-op compiled variants: op-by-op dispatch
def test_switched_off_everything_compiles(fresh, monkeypatch):
    monkeypatch.setattr(_new_shapes, "run_new_shapes_on_host", False)
    count = Counter()
    w = tf.Variable(np.ones((3, 2), np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.tanh(tf.ones([5, 3]) @ w))
    assert_close(tape.gradient(loss, w), np.full((3, 2), (1 - np.tanh(3.0) ** 2) / 2, np.float32), rtol=1e-5)
    assert count.host_runs() == 0 and count.compiles() > 0


def test_enable_op_determinism_compiles_new_shapes_at_once(monkeypatch):
    monkeypatch.setattr(_new_shapes, "run_new_shapes_on_host", True)
    tf.config.experimental.enable_op_determinism()
    assert _new_shapes.run_new_shapes_on_host is False
    runs = _new_shapes.host_runs[0]
    x = tf.constant(np.ones((7, 13), np.float32))    # shapes no other test meets
    assert float(tf.reduce_sum(tf.sin(x) * 0.0)) == 0.0
    assert _new_shapes.host_runs[0] == runs
