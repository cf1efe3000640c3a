"""Engine properties: compiled backward caching, threads, memory, dtypes, errors."""
import gc
import threading
import tracemalloc
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax import ops as _ops
from tapejax._core import backward as _backward, cache as _cache, engine as _engine, new_shapes as _new_shapes
from tapejax.ops import linalg_ops
from tapejax._core.backward import backward_trace_count

from conftest import assert_close, host_first


def _step(w, b, x):
    with tf.GradientTape() as tape:
        h = tf.tanh(x @ w + b)
        loss = tf.reduce_mean(h * h)
    return loss, tape.gradient(loss, [w, b])


# ---------------------------------------------------------------- caching
@pytest.fixture
def roomy_caches():
    """Caches that evict nothing during the test: an entry's bytes are the process's resident-set
    growth while it compiled, so after a long run one new program can push an older one out
    (lazily, the step's program), and it is traced again, as it should be."""
    old = tf.config.experimental.get_compile_cache_limits()
    tf.config.experimental.set_compile_cache_limits(max_programs=1024, max_bytes=2 ** 40)
    yield
    tf.config.experimental.set_compile_cache_limits(**old)


def test_same_structure_does_not_retrace(roomy_caches):
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.normal(size=(3, 2)).astype(np.float32))
    b = tf.Variable(np.zeros(2, np.float32))
    x = tf.constant(rng.normal(size=(4, 3)).astype(np.float32))
    _step(w, b, x)      # the first time on the host,
    _step(w, b, x)      # the second compiled
    n = backward_trace_count()
    for i in range(3):
        # new values, new input data, assigned variables: same fingerprint
        w.assign_sub(tf.ones_like(w) * 0.1)
        loss, (gw, gb) = _step(w, b, tf.constant(rng.normal(size=(4, 3)).astype(np.float32)))
        assert gw.shape == (3, 2) and gb.shape == (2,)
    assert backward_trace_count() == n
    # and the cached pass computes the right thing for the new values
    xv = rng.normal(size=(4, 3)).astype(np.float32)
    _, (gw, gb) = _step(w, b, tf.constant(xv))
    f = lambda wa, ba: jnp.mean(jnp.tanh(xv @ wa + ba) ** 2)  # noqa: E731
    assert_close([gw, gb], jax.grad(f, argnums=(0, 1))(w.numpy(), b.numpy()), rtol=1e-5, atol=1e-6)
    assert backward_trace_count() == n


@pytest.mark.eager_dispatch
@host_first
def test_new_structure_traces_once():
    x = tf.constant(np.ones((5,), np.float32))
    n = backward_trace_count()
    for _ in range(3):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x) * tf.cos(x) + x ** 3)  # a structure no other test uses
        tape.gradient(y, x)
    # traced to run on the host the first time, then to compile the second, then cached
    assert backward_trace_count() == n + 2
    # a new shape is a new fingerprint
    x2 = tf.constant(np.ones((6,), np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x2)
        y = tf.reduce_sum(tf.sin(x2) * tf.cos(x2) + x2 ** 3)
    tape.gradient(y, x2)
    assert backward_trace_count() == n + 3


@pytest.mark.eager_dispatch
def test_jacobian_is_cached_too():
    def jac(v):
        x = tf.constant(v)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.exp(x) * tf.reduce_sum(x)
        return tape.jacobian(y, x)
    jac(np.ones(3, np.float32))
    n = backward_trace_count()
    j = jac(np.arange(3, dtype=np.float32))
    assert backward_trace_count() == n
    want = jax.jacrev(lambda a: jnp.exp(a) * jnp.sum(a))(np.arange(3, dtype=np.float32))
    assert_close(j, want, rtol=1e-5)


def test_backward_cache_is_bounded():
    assert len(_backward._BACKWARD_CACHE) <= _cache.limits.max_programs


@pytest.fixture
def cache_limits():
    """Restores the compile cache limits (and forgets the churn rule's memory) after a test."""
    saved = tf.config.experimental.get_compile_cache_limits()
    _backward.clear_compile_caches()
    yield tf.config.experimental.set_compile_cache_limits
    tf.config.experimental.set_compile_cache_limits(**saved)
    _backward.clear_compile_caches()


def _mlp_grads(n, w1, w2, seed=0):
    rng = np.random.default_rng(seed + n)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.constant(x) @ w1)
        loss = tf.reduce_mean(tf.tanh(h @ w2) ** 2)
    grads = tape.gradient(loss, [w1, w2])

    def f(a, b):
        return jnp.mean(jnp.tanh(jax.nn.relu(x @ a) @ b) ** 2)
    return grads, jax.grad(f, argnums=(0, 1))(w1.numpy(), w2.numpy())


@pytest.mark.eager_dispatch
@host_first
def test_backward_cache_evicts_least_recently_used(cache_limits):
    cache_limits(max_programs=2)
    w = tf.Variable([1.0, 2.0])

    def grad(op):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(op(w * w))
        return tape.gradient(y, w)

    ops = [tf.sin, tf.cos, tf.exp]
    for op in ops:
        grad(op)            # on the host: nothing compiled, nothing cached
    assert len(_backward._BACKWARD_CACHE) == 0
    for op in ops:
        grad(op)            # met again: compiled and cached
    assert len(_backward._BACKWARD_CACHE) == 2
    n = backward_trace_count()
    assert_close(grad(tf.exp), 2 * w.numpy() * np.exp(w.numpy() ** 2))   # kept
    assert backward_trace_count() == n
    assert_close(grad(tf.sin), 2 * w.numpy() * np.cos(w.numpy() ** 2))   # evicted: compiled again
    assert backward_trace_count() == n + 1 and len(_backward._BACKWARD_CACHE) == 2


@pytest.mark.eager_dispatch
def test_backward_cache_is_bounded_by_bytes(cache_limits):
    cache_limits(max_bytes=1)   # every program is over the budget: only the newest is kept
    w = tf.Variable([1.0, 2.0])
    for op in (tf.sin, tf.cos, tf.exp):
        for _ in range(2):  # the second time compiled
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(op(w) * w)
            tape.gradient(y, w)
    assert len(_backward._BACKWARD_CACHE) == 1


@pytest.mark.eager_dispatch
@host_first
def test_new_batch_sizes_compile_nothing(cache_limits):
    """A batch size met for the first time runs on the host: forward ops and the backward
    pass are traced and computed by NumPy, nothing is compiled. Met again, it is compiled
    whole (up to the limit of shapes per structure), op by op past it, and whole once it
    keeps coming back. Every path gives JAX's gradients."""
    cache_limits(max_shapes_per_structure=2)
    from test_new_shapes import _OP_MODULES
    for op in [getattr(m, n) for m in _OP_MODULES for n in dir(m)] + [_backward._vjp_op]:
        op = getattr(op, "op", op)
        if isinstance(op, _engine.Op) and op._seen is not None:
            op._seen.clear()            # shapes other tests met are new again
    rng = np.random.default_rng(1)
    w1 = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32))
    w2 = tf.Variable(rng.normal(size=(4, 2)).astype(np.float32))
    ops = [_ops.relu, _ops.tanh, linalg_ops._matmul, _backward._vjp_op]
    compiled = [op._jfn._cache_size() for op in ops]
    host_runs = _new_shapes.host_runs[0]
    for n in range(1, 7):
        got, want = _mlp_grads(n, w1, w2)
        assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert len(_backward._BACKWARD_CACHE) == 0
    assert [op._jfn._cache_size() for op in ops] == compiled
    assert _new_shapes.host_runs[0] - host_runs >= 6 * 6      # 5 forward ops and a backward pass each
    for _ in range(2):
        for n in range(1, 7):
            got, want = _mlp_grads(n, w1, w2)
            assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert len(_backward._BACKWARD_CACHE) == 6


def _chain(k, x, w):
    with tf.GradientTape() as tape:
        y = x
        for _ in range(k):
            y = tf.sin(y) * w
        loss = tf.reduce_sum(y)
    return tape.gradient(loss, w)


def _chain_want(k, x, w):
    def f(w):
        y = x
        for _ in range(k):
            y = jnp.sin(y) * w
        return jnp.sum(y)
    return jax.grad(f)(w)


@pytest.mark.eager_dispatch
def test_sequence_lengths_are_differentiated_op_by_op(cache_limits):
    """A tape unrolled to a new length every call (a sequence model): the same ops on the same
    shapes in a new arrangement. Past the limit no whole program is compiled for it."""
    cache_limits(max_shapes_per_structure=2)
    x = tf.constant(np.linspace(-1, 1, 5).astype(np.float32))
    w = tf.Variable(np.linspace(0.5, 1.0, 5).astype(np.float32))
    n0 = backward_trace_count()
    traces = []
    for k in range(1, 9):
        assert_close(_chain(k, x, w), _chain_want(k, x.numpy(), w.numpy()), rtol=1e-5, atol=1e-6)
        traces.append(backward_trace_count() - n0)
    # k=1 records no sin (x is not watched): its backward pass is traced to run on the host.
    # From k=2 on, most nodes' VJPs were met before: op by op, nothing traced whole.
    assert traces == [1, 1, 1, 1, 1, 1, 1, 1]
    _chain(8, x, w)                         # a length that comes back is compiled whole
    assert backward_trace_count() == n0 + 2
    assert_close(_chain(8, x, w), _chain_want(8, x.numpy(), w.numpy()), rtol=1e-5, atol=1e-6)
    assert backward_trace_count() == n0 + 2


def test_op_by_op_backward_is_differentiable(cache_limits):
    """The op-by-op pass records on an outer tape, like the compiled one: second derivatives."""
    cache_limits(max_shapes_per_structure=1)
    for n in (2, 3, 4):
        x = tf.constant(np.linspace(0.1, 1.0, n).astype(np.float32))
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.sin(x) * x)
            g = inner.gradient(y, x)
        h = outer.gradient(g, x)
        xv = x.numpy()
        assert_close(g, np.cos(xv) * xv + np.sin(xv), rtol=1e-5)
        assert_close(h, -np.sin(xv) * xv + 2 * np.cos(xv), rtol=1e-5)


@pytest.mark.eager_dispatch
def test_op_variants_are_bounded(cache_limits):
    cache_limits(max_variants_per_op=3)
    op = tf.extend.defop(lambda x: x * 3.0, name="times3_variants")
    for n in range(1, 12):                  # ever new shapes: at most the limit stays compiled
        assert_close(op(tf.ones([n])), np.full(n, 3.0, np.float32))
        assert op._jfn._cache_size() <= 3
    for _ in range(3):                      # a working set of 4 shapes: the limit grows to hold it
        for n in (20, 21, 22, 23):
            op(tf.ones([n]))
    assert op._limit >= 4
    size = op._jfn._cache_size()
    for n in (20, 21, 22, 23):
        op(tf.ones([n]))
    assert op._jfn._cache_size() == size    # no recompiling


def test_compile_cache_limits_validate():
    with pytest.raises(ValueError, match="max_programs must be a positive integer"):
        tf.config.experimental.set_compile_cache_limits(max_programs=0)
    with pytest.raises(ValueError, match="max_bytes"):
        tf.config.experimental.set_compile_cache_limits(max_bytes=1.5)


# ---------------------------------------------------------------- threads
def test_threads_do_not_see_each_others_ops():
    v = tf.Variable(2.0)
    barrier = threading.Barrier(2, timeout=30)
    results, errors = {}, []

    def recorder():
        try:
            with tf.GradientTape() as tape:
                barrier.wait()           # both threads are inside their block now
                a = v * 3.0
                barrier.wait()           # the other thread has done its op
                y = a + 1.0
            results["nodes"] = len(tape._nodes)
            results["grad"] = tape.gradient(y, v)
            results["other"] = tape  # kept to check it did not record the other thread's op
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def other():
        try:
            barrier.wait()
            results["outside"] = v * 5.0  # outside any tape of this thread
            with tf.GradientTape() as tape:
                z = v * v
            results["own_grad"] = tape.gradient(z, v)
            barrier.wait()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=recorder), threading.Thread(target=other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert results["nodes"] == 2                   # v * 3, + 1: not the other thread's ops
    assert results["grad"].numpy() == 3.0
    assert results["own_grad"].numpy() == 4.0
    assert _engine.state.recorders == []           # nothing leaked into this thread


def test_thread_tapes_in_parallel_give_right_gradients():
    out = {}

    def work(k):
        x = tf.constant(float(k))
        for _ in range(50):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x * x * float(k)
            g = tape.gradient(y, x)
        out[k] = g.numpy()

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert out == {1: 2.0, 2: 8.0, 3: 18.0}


# ---------------------------------------------------------------- memory
def test_non_persistent_tape_releases_saved_tensors():
    x = tf.constant(np.ones(1000, np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = tf.sin(x)
        y = tf.reduce_sum(h * h)
    ref = weakref.ref(h)
    g = tape.gradient(y, x)
    assert g.shape == (1000,)
    del h, y
    gc.collect()
    assert ref() is None, "a used non-persistent tape must not keep its saved tensors"


def test_persistent_tape_keeps_until_deleted():
    x = tf.constant(np.ones(10, np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = tf.sin(x)
        y = tf.reduce_sum(h * h)
    ref = weakref.ref(h)
    tape.gradient(y, x)
    del h, y
    gc.collect()
    assert ref() is not None  # still needed for the next gradient call
    del tape
    gc.collect()
    assert ref() is None


def test_many_eager_steps_do_not_grow_memory():
    w = tf.Variable(np.full(8, 0.5, np.float32))
    x = tf.constant(np.linspace(-1, 1, 8).astype(np.float32))

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((w * x - 1.0) ** 2)
        g = tape.gradient(loss, w)
        w.assign_sub(0.01 * g)
        return loss

    for _ in range(200):  # warm up caches
        step()
    cache_len = len(_backward._BACKWARD_CACHE)
    gc.collect()
    objects_before = len(gc.get_objects())
    for _ in range(9_000):
        loss = step()
    gc.collect()
    objects_after = len(gc.get_objects())
    # the last 800 steps under tracemalloc (it slows Python down): no per-step growth
    tracemalloc.start()
    try:
        for _ in range(100):
            step()
        gc.collect()
        mid = tracemalloc.get_traced_memory()[0]
        for _ in range(800):
            loss = step()
        gc.collect()
        end = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(_backward._BACKWARD_CACHE) == cache_len
    assert _engine.state.recorders == []
    assert objects_after - objects_before < 500, "live Python objects grow with the number of steps"
    assert end - mid < 40_000, f"memory grew by {end - mid} bytes over 800 steps"
    assert float(loss) < 1.0  # it trained


# ---------------------------------------------------------------- dtypes
def test_int_and_bool_tensors_are_never_differentiated():
    i = tf.constant([1, 2, 3])
    b = tf.constant([True, False, True])
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([i, b])
        y = tf.reduce_sum(tf.cast(i, tf.float32) * x)
        z = tf.reduce_sum(tf.where(b, x, 0.0))
        k = tf.reduce_sum(i * 2)
        xi = tf.cast(x, tf.int32)
    assert tape.gradient(y, i) is None
    assert tape.gradient(z, b) is None
    assert tape.gradient(k, i) is None
    assert tape.gradient(xi, x) is None
    assert tape.gradient(y, [i, x])[1].numpy().tolist() == [1.0, 2.0, 3.0]
    assert tape.gradient(z, x).numpy().tolist() == [1.0, 0.0, 1.0]
    zi = tape.gradient(y, i, unconnected_gradients="zero")
    assert zi.dtype == tf.int32 and zi.numpy().tolist() == [0, 0, 0]


def test_float64_and_float16_gradients_keep_dtype():
    for dt in (tf.float16, tf.bfloat16):
        x = tf.constant([1.0, 2.0], dtype=dt)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x * x)
        g = tape.gradient(y, x)
        assert g.dtype == dt
        np.testing.assert_allclose(np.asarray(g.numpy(), np.float32), [2.0, 4.0])


def test_mixed_dtype_gradient_is_cast_to_source_dtype():
    x = tf.constant([1.0, 2.0], dtype=tf.float16)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(x, tf.float32) * 3.0)
    g = tape.gradient(y, x)
    assert g.dtype == tf.float16 and g.numpy().tolist() == [3.0, 3.0]


# ---------------------------------------------------------------- interop with plain JAX
def test_tensor_through_plain_jax_is_a_constant():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        a = jnp.asarray(x)             # leaves the tape, like NumPy in TF
        b = jnp.sin(a) * 2.0
        y = tf.reduce_sum(tf.constant(b) + 0.0)
        z = tf.reduce_sum(jnp.cos(x) * x)
    np.testing.assert_allclose(y.numpy(), 2 * (np.sin(1.0) + np.sin(2.0)), rtol=1e-6)
    assert isinstance(b, jax.Array)
    # A jax array on the left converts the Tensor with __jax_array__: all of it is plain JAX.
    assert tape.gradient([y, z], x) is None
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(jnp.sin(jnp.asarray(x)))
    assert tape.gradient(y, x) is None


def test_ops_accept_jax_and_numpy_arrays():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * jnp.array([3.0, 4.0]) + np.array([1.0, 1.0], np.float32))
    assert tape.gradient(y, x).numpy().tolist() == [3.0, 4.0]


def test_tensors_inside_jax_jit_and_grad():
    # Tensors are pytrees and ops take tracers: tapejax code runs under jax transforms.
    def f(a):
        t = tf.Tensor(a)
        return tf.reduce_sum(tf.sin(t) * t)._value
    xv = np.array([0.5, 1.5], np.float32)
    np.testing.assert_allclose(jax.jit(jax.grad(f))(xv), np.cos(xv) * xv + np.sin(xv), rtol=1e-6)


# ---------------------------------------------------------------- errors name the fix
def _raises(exc, match, fn):
    with pytest.raises(exc, match=match):
        fn()


def test_errors_name_the_fix():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    _raises(RuntimeError, r"persistent=True", lambda: tape.gradient(y, x))
    _raises(ValueError, r"tf\.constant\(", lambda: tf.GradientTape().watch([1.0]))
    _raises(ValueError, r"tf\.UnconnectedGradients\.ZERO",
            lambda: tf.GradientTape(persistent=True).gradient(x, x, unconnected_gradients="zeros"))
    _raises(ValueError, r"tf\.reduce_any", lambda: bool(tf.constant([1.0, 2.0])))
    _raises(TypeError, r"ref\(\)", lambda: hash(tf.constant(1.0)))
    _raises(ValueError, r"Shape mismatch", lambda: tf.Variable([1.0, 2.0]).assign([1.0, 2.0, 3.0]))
    _raises(ValueError, r"jacobian\(\)", lambda: _batch_jacobian_mismatch())
    _raises(ValueError, r"tf\.Variable\(tf\.zeros", lambda: tf.Variable())
    _raises(ValueError, r"NHWC|transpose", lambda: tf.nn.conv2d(tf.ones([1, 3, 3, 1]), tf.ones([2, 2, 1, 1]), 1,
                                                               "VALID", data_format="NCHW"))

    w = tf.Variable(1.0)

    @tf.custom_gradient
    def f(a):
        return a * w, lambda dy: dy
    with tf.GradientTape():
        _raises(TypeError, r"variables=None", lambda: f(tf.constant(1.0)))


def _batch_jacobian_mismatch():
    x = tf.constant(np.ones((3, 2), np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    return tape.batch_jacobian(y, tf.constant(np.ones((4, 2), np.float32)))


# ---------------------------------------------------------------- plans cached by tape structure
def _random_tape(rng, values, n_ops):
    """A tape over ``values`` (watched constants) with ops wired at random; returns
    (tape, all values recorded)."""
    ops = [tf.add, tf.multiply, tf.subtract, lambda a, b: tf.sin(a), lambda a, b: a * 2.0,
           lambda a, b: tf.cast(a > b, tf.float32)]
    with tf.GradientTape(persistent=True) as tape:
        pool = list(values)
        for v in pool:
            tape.watch(v)
        for _ in range(n_ops):
            f = ops[rng.integers(len(ops))]
            pool.append(f(pool[rng.integers(len(pool))], pool[rng.integers(len(pool))]))
    return tape, pool


@pytest.mark.parametrize("seed", range(8))
def test_a_cached_plan_is_the_plan_of_the_tape(seed):
    """``backward.plan`` reuses the plan of a tape of the same structure: on tapes with random
    wiring, targets and sources, it must equal the plan computed afresh, and gradients jax.grad."""
    rng = np.random.default_rng(seed)
    for _ in range(6):
        xs = [tf.constant(rng.normal(size=3).astype(np.float32)) for _ in range(3)]
        tape, pool = _random_tape(rng, xs, 8)
        targets = [pool[k] for k in rng.integers(3, len(pool), size=rng.integers(1, 3))]
        sources = [pool[k] for k in sorted(set(rng.integers(0, len(pool), size=rng.integers(1, 4)).tolist()))]
        tids = [tape._id_of(t) for t in targets]
        sids = [tape._id_of(s) for s in sources]
        fresh = _backward._plan(tape._nodes, tids, sids)
        for _ in range(2):       # the second call is served from the cache
            p = _backward.plan(tape._nodes, tids, sids)
            assert [id(n) for n in p.nodes] == [id(n) for n in fresh.nodes]
            assert (p.specs, p.target_slots, p.source_slots, p.n_slots, p.layout) == (
                fresh.specs, fresh.target_slots, fresh.source_slots, fresh.n_slots, fresh.layout)


def test_same_values_split_otherwise_between_targets_and_sources():
    """``gradient([c, b], x)`` and ``gradient(c, [b, x])`` on one tape name the same values in
    the same order: the plan's key must still tell them apart (how many are targets)."""
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = tf.sin(x)
        b = a * 2.0
        c = b * b
    cos = np.cos(x.numpy())
    b_np = 2 * np.sin(x.numpy())
    for _ in range(2):      # the second time from the cached plans
        g = tape.gradient([c, b], x)
        np.testing.assert_allclose(g.numpy(), (2 * b_np + 1) * 2 * cos, rtol=1e-6)
        gb, gx = tape.gradient(c, [b, x])
        np.testing.assert_allclose(gb.numpy(), 2 * b_np, rtol=1e-6)
        np.testing.assert_allclose(gx.numpy(), 2 * b_np * 2 * cos, rtol=1e-6)


def test_same_ops_other_wiring_other_gradient():
    """Two tapes with the same ops on the same shapes but wired differently get their own
    plans (a plan keyed by the ops alone would reuse the first and be silently wrong)."""
    x = tf.constant([1.0, 2.0])
    y = tf.constant([3.0, 5.0])
    for a, b, want in ((x, y, [3.0, 5.0]), (x, x, [2.0, 4.0]), (y, x, [3.0, 5.0]), (x, y, [3.0, 5.0])):
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            z = tf.reduce_sum(a * b)
        assert tape.gradient(z, x).numpy().tolist() == want


def test_every_op_takes_tensorflows_name_argument():
    """Every TensorFlow op takes ``name=`` (its name in a graph). Each op of the tf, tf.math and
    tf.nn namespaces that computes on one or two float tensors gives the same values with it;
    before, ``tf.add(x, x, name='a')`` raised ``Incompatible shapes`` and 117 others raised too."""
    from tapejax._core.engine import Op
    x = tf.constant([0.5, 1.5, 2.5])
    checked = 0
    for mod in (tf, tf.math, tf.nn):
        for name in sorted(dir(mod)):
            op = getattr(mod, name, None)
            if not isinstance(op, Op):
                continue
            for args in ((x,), (x, x)):
                try:
                    want = op(*args)
                except Exception:
                    continue
                got = op(*args, name="n")
                for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                    # (the first call of a shape runs on the host: to rounding)
                    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, err_msg=name)
                checked += 1
                break
    assert checked > 100


def test_tensor_arguments_by_keyword_and_name_in_a_function():
    # Recorded from TF 2.21.
    x = tf.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tf.clip_by_value(x, clip_value_min=1.5, clip_value_max=2.5), [1.5, 2.0, 2.5])
    np.testing.assert_array_equal(tf.clip_by_value(x, 1.5, clip_value_max=2.5), [1.5, 2.0, 2.5])
    np.testing.assert_array_equal(tf.nn.relu(x - 2.0, name="r"), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(tf.math.atan2(x, 2.0 * x, name="t"), [0.4636476] * 3, rtol=1e-6)

    @tf.function
    def f(v):
        return tf.exp(tf.identity(v, name="i"), name="e")

    np.testing.assert_allclose(f(x), [2.7182817, 7.389056, 20.085537], rtol=1e-6)
