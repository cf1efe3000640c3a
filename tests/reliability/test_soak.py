"""Soak: thousands of small training steps, eager and compiled, and a stream of new shapes,
with the process's resident memory (from /proc/self/status) staying bounded."""
import gc
import sys

import numpy as np
import pytest

import tapejax as tf
from conftest import host_first
from tapejax._core import backward as _backward, engine as _engine
from tapejax.ops import linalg_ops
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def _model():
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.normal(size=(4, 3)).astype(np.float32) * 0.5)
    b = tf.Variable(np.zeros(3, np.float32))
    return w, b


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return tf.constant(x), tf.constant(x[:, :3] * 0.5)


def _loss(w, b, x, y):
    return tf.reduce_mean((tf.tanh(x @ w + b) - y) ** 2)


def _step(w, b, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.tanh(x @ w + b) - y) ** 2)
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.1 * gw)
    b.assign_sub(0.1 * gb)
    return loss


def test_soak_eager_and_compiled_steps():
    w, b = _model()
    compiled = tf.function(_step)
    batches = [_data(8, s) for s in range(4)]
    first = float(_loss(w, b, *batches[0]))
    # Warm up: every program compiled, allocator pools filled.
    for i in range(200):
        _step(w, b, *batches[i % 4])
        compiled(w, b, *batches[i % 4])
    gc.collect()
    start = rss_mb()
    for i in range(2500):
        _step(w, b, *batches[i % 4])
        loss = compiled(w, b, *batches[i % 4])
    gc.collect()
    grown = rss_mb() - start
    assert grown < 25, f"resident memory grew by {grown:.1f} MB over 5,000 steps"
    assert _engine.state.recorders == []
    assert compiled.experimental_get_tracing_count() == 1
    assert float(_loss(w, b, *batches[0])) < first       # it trained
    assert np.isfinite(float(loss))


def test_soak_new_shapes_stay_bounded():
    """A new batch size every step: compiled programs are evicted, so memory levels off."""
    saved = tf.config.experimental.get_compile_cache_limits()
    tf.config.experimental.set_compile_cache_limits(
        max_programs=4, max_shapes_per_structure=2, max_variants_per_op=2)
    w = tf.Variable(np.linspace(-1, 1, 4).astype(np.float32))

    def grad(n):
        x = tf.constant(np.ones((n, 4), np.float32))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sin(x * w))
        return tape.gradient(loss, w)

    try:
        for n in range(1, 7):           # warm up: the caches fill to their limits
            grad(n)
        gc.collect()
        start = rss_mb()
        for n in range(7, 17):
            np.testing.assert_allclose(grad(n).numpy(), n * np.cos(w.numpy()), rtol=1e-5)
        gc.collect()
        grown = rss_mb() - start
        # Unbounded, each new shape keeps about 6 MB of executables here (60 MB in all).
        assert grown < 30, f"resident memory grew by {grown:.1f} MB over 10 new shapes"
        assert len(_backward._BACKWARD_CACHE) <= 4
    finally:
        tf.config.experimental.set_compile_cache_limits(**saved)
        _backward.clear_compile_caches()


@host_first
def test_soak_new_batch_sizes_on_the_host_compile_nothing():
    """Hundreds of batch sizes, each met once: every step runs on the host (traced and
    computed by NumPy), nothing is compiled, the gradients stay JAX's, and memory grows by
    little more than the batches themselves (no executables, bounded trace caches)."""
    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.normal(size=(16, 32)).astype(np.float32) * 0.3)
    b1 = tf.Variable(np.zeros(32, np.float32))
    w2 = tf.Variable(rng.normal(size=(32, 1)).astype(np.float32) * 0.3)
    params = [w1, b1, w2]
    ops = [linalg_ops._matmul, tf.add, tf.nn.relu, tf.reduce_mean.op, _backward._vjp_op]

    def step(n):
        x = rng.normal(size=(n, 16)).astype(np.float32)
        y = rng.normal(size=(n, 1)).astype(np.float32)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.nn.relu(tf.constant(x) @ w1 + b1) @ w2 - tf.constant(y)) ** 2)
        return tape.gradient(loss, params), x, y

    def want(x, y):
        # The gradient by hand in float64 with NumPy: JAX's would compile at every sample's shape.
        w1_, b1_, w2_ = (p.numpy().astype(np.float64) for p in params)
        h = x @ w1_ + b1_
        r = np.maximum(h, 0)
        dout = 2 * (r @ w2_ - y) / y.size
        dh = (dout @ w2_.T) * (h > 0)
        return x.T @ dh, dh.sum(0), r.T @ dout

    _backward.clear_compile_caches()
    for n in range(1001, 1051):          # warm up: the bounded caches fill (6 programs a size)
        step(n)
    gc.collect()
    start = rss_mb()
    compiled = [op._jfn._cache_size() for op in ops]
    programs = len(_backward._BACKWARD_CACHE)
    samples = []
    for n in range(1, 201):
        grads, x, y = step(n)
        if n % 25 == 0:
            samples.append((grads, x, y))
    gc.collect()
    grown = rss_mb() - start
    assert [op._jfn._cache_size() for op in ops] == compiled
    assert len(_backward._BACKWARD_CACHE) == programs
    # The compiling path kept ~6-12 MB of executables per new shape before its caches evicted.
    assert grown < 80, f"resident memory grew by {grown:.1f} MB over 200 new batch sizes"
    for grads, x, y in samples:
        for g, w in zip(grads, want(x, y)):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)
    _backward.clear_compile_caches()
