"""tapejax.function call overhead and first-call cost, against the hand-threaded jax.jit step.

A linear model trained with hand-written SGD (``assign_sub``) on ``n_vars`` Variables:
the tapejax step finds, passes in, writes back and donates the Variables itself; the
JAX baseline threads the same arrays by hand through ``jax.jit(..., donate_argnums)``.
Small arrays, so the numbers are per-call overhead, not FLOPs.

    python benchmarks/bench_function.py [--calls 2000] [--vars 1 10 100]
"""
import argparse
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import tapejax as tf


def tapejax_step(n_vars):
    ws = [tf.Variable(tf.zeros([8])) for _ in range(n_vars)]

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            pred = tf.add_n([tf.reduce_sum(x * w, axis=1) for w in ws])
            loss = tf.reduce_mean((pred - y) ** 2)
        for w, g in zip(ws, tape.gradient(loss, ws)):
            w.assign_sub(0.01 * g)
        return loss

    return step


def jax_step():
    def loss_fn(ws, x, y):
        pred = sum(jnp.sum(x * w, axis=1) for w in ws)
        return jnp.mean((pred - y) ** 2)

    def step(ws, x, y):
        loss, gs = jax.value_and_grad(loss_fn)(ws, x, y)
        return [w - 0.01 * g for w, g in zip(ws, gs)], loss

    return jax.jit(step, donate_argnums=(0,))


def median_us(fn, calls, repeats=5):
    fn()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            r = fn()
        jax.block_until_ready(r)
        out.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--vars", type=int, nargs="+", default=[1, 10, 100])
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, jax {jax.__version__}, devices {jax.devices()}")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 8)).astype(np.float32)
    y = rng.normal(size=(16,)).astype(np.float32)
    xt, yt = tf.constant(x), tf.constant(y)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    print(f"{'variables':>10} {'first call tapejax':>19} {'first call jax':>15} "
          f"{'tapejax us/call':>16} {'jax us/call':>12} {'ratio':>6}")
    for n in args.vars:
        step = tapejax_step(n)
        t = time.perf_counter()
        jax.block_until_ready(step(xt, yt)._value)
        first_tj = time.perf_counter() - t
        tj = median_us(lambda: step(xt, yt)._value, args.calls)
        assert step.experimental_get_tracing_count() == 1

        jstep = jax_step()
        state = [[jnp.zeros(8) for _ in range(n)]]
        t = time.perf_counter()
        state[0], loss = jstep(state[0], xj, yj)
        jax.block_until_ready(loss)
        first_j = time.perf_counter() - t

        def run():
            state[0], loss = jstep(state[0], xj, yj)
            return loss

        jj = median_us(run, args.calls)
        print(f"{n:>10} {first_tj * 1e3:>16.1f} ms {first_j * 1e3:>12.1f} ms {tj:>16.1f} {jj:>12.1f} "
              f"{tj / jj:>6.2f}")


if __name__ == "__main__":
    main()
