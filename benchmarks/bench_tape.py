"""bench_tape: eager per-op overhead and the cost of one cached tape.gradient call.

A 100-step elementwise chain (sin, * 1.01, + 0.1, tanh on 1000 float32 values:
400 ops) timed, in the same run, as:

* raw ``jnp`` eager ops on a jax array (one JAX dispatch each: the floor),
* tapejax ops without a tape, and inside a recording GradientTape,
* ``tape.gradient`` of the recorded chain (the backward pass is compiled once
  per tape structure and cached: the timed calls hit the cache),
* ``jax.jit(jax.grad(f))`` of the same chain (the compiled reference).

Lazy execution (``tf.config.experimental.set_lazy_execution``, issue 17), same run:

* the chain's forward + ``tape.gradient`` eagerly and lazily (one program per step; its ops
  compiled apart on a CPU, or fused with ``fuse_ops=True``)
  against one ``jax.jit(jax.value_and_grad(f))`` call (goal: lazy <= 4x), and PyTorch eager
  autograd where torch is installed; the lazy first step (record-time shape inference, the
  fused program run on the host) and second step (it is compiled) are reported;
* a Python loop branching on a value every 10 ops (``if float(x.sum()) > 0``: each branch
  runs what is pending), eagerly and lazily (goal: lazy not slower).

Each figure is the median over interleaved rounds after warmup rounds; ratios
are taken within a round. Run: ``python benchmarks/bench_tape.py [--repeats 21]``.
"""
import argparse
import os
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import tapejax as tf

STEPS = 100
OPS = 4 * STEPS


def chain_jnp(x):
    for _ in range(STEPS):
        x = jnp.tanh(jnp.sin(x) * 1.01 + 0.1)
    return x


def chain_tf(x):
    for _ in range(STEPS):
        x = tf.tanh(tf.sin(x) * 1.01 + 0.1)
    return x


def branchy_tf(x):
    """100 rounds of 10 elementwise ops, with a Python ``if`` on a value after each."""
    for _ in range(100):
        for _ in range(5):
            x = tf.sin(x) * 1.01
        if float(tf.reduce_sum(x)) > 0:
            x = x - 0.01
        else:
            x = x + 0.01
    return x


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()

    xv = np.random.default_rng(0).normal(size=1000).astype(np.float32)
    xj = jnp.asarray(xv)
    xt = tf.constant(xv)

    def raw():
        chain_jnp(xj).block_until_ready()

    def fwd_plain():
        chain_tf(xt)._value.block_until_ready()

    def record():
        with tf.GradientTape() as tape:
            tape.watch(xt)
            y = chain_tf(xt)
        y._value.block_until_ready()
        return tape, y

    f_grad = jax.jit(jax.grad(lambda a: jnp.sum(chain_jnp(a))))

    def jit_grad():
        f_grad(xj).block_until_ready()

    def step_tf():
        with tf.GradientTape() as tape:
            tape.watch(xt)
            y = tf.reduce_sum(chain_tf(xt))
        g = tape.gradient(y, xt)
        return y._value, g._value.block_until_ready()

    f_vg = jax.jit(jax.value_and_grad(lambda a: jnp.sum(chain_jnp(a))))

    def jit_vg():
        jax.block_until_ready(f_vg(xj))

    lazy_cfg = tf.config.experimental

    def lazily(fn, fuse_ops=False):
        def run():
            lazy_cfg.set_lazy_execution(True, fuse_ops=fuse_ops)
            try:
                return fn()
            finally:
                lazy_cfg.set_lazy_execution(False, fuse_ops=False)
        return run

    lazy_step = lazily(step_tf)
    t0 = time.perf_counter()
    lazy_step()                       # first lazy step: shape inference, the program on the host
    lazy_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    lazy_step()                       # second: the program met again is compiled
    lazy_second = time.perf_counter() - t0
    t0 = time.perf_counter()
    jit_vg()
    jit_first = time.perf_counter() - t0
    np.testing.assert_allclose(lazy_step()[1], np.asarray(f_vg(xj)[1]), rtol=1e-4, atol=1e-6)
    fused_step = lazily(step_tf, fuse_ops=True)
    for _ in range(3):   # on the host, compiled, cached
        np.testing.assert_allclose(fused_step()[1], np.asarray(f_vg(xj)[1]), rtol=1e-4, atol=1e-6)

    def branchy():
        branchy_tf(xt)._value.block_until_ready()

    lazy_branchy = lazily(branchy)
    np.testing.assert_allclose(np.asarray(lazily(lambda: branchy_tf(xt).numpy())()),
                               np.asarray(branchy_tf(xt)), rtol=1e-5)

    try:
        import torch
        # on the device JAX computes on: a GPU where JAX has one
        torch_device = "cuda" if jax.default_backend() == "gpu" and torch.cuda.is_available() else "cpu"
        xpt = torch.tensor(xv, device=torch_device)

        def torch_step():
            a = xpt.clone().requires_grad_(True)
            y = a
            for _ in range(STEPS):
                y = torch.tanh(torch.sin(y) * 1.01 + 0.1)
            y.sum().backward()
            g = a.grad
            if torch_device == "cuda":
                torch.cuda.synchronize()
            return g
    except ImportError:
        torch_step = None

    # correctness first: the tape's gradient equals JAX's
    tape, y = record()
    g_tape = tape.gradient(y, xt).numpy()
    g_jax = np.asarray(f_grad(xj))
    np.testing.assert_allclose(g_tape, g_jax, rtol=1e-4, atol=1e-6)

    def clock(fn):
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out

    # Rounds interleave every variant, so a busy machine slows them alike; the ratios
    # are taken within a round, then the median over rounds is reported.
    rows = {k: [] for k in ("raw", "plain", "tape", "grad", "jit", "eager_step", "lazy_step", "fused_step",
                            "jit_vg", "branchy_eager", "branchy_lazy", "torch")}
    for r in range(args.warmup + args.repeats):
        t_es, _ = clock(step_tf)
        t_ls, _ = clock(lazy_step)
        t_fs, _ = clock(fused_step)
        t_vg, _ = clock(jit_vg)
        t_be, _ = clock(branchy)
        t_bl, _ = clock(lazy_branchy)
        t_pt = clock(torch_step)[0] if torch_step is not None else float("nan")
        if r >= args.warmup:
            for k, v in zip(("eager_step", "lazy_step", "fused_step", "jit_vg", "branchy_eager", "branchy_lazy",
                             "torch"), (t_es, t_ls, t_fs, t_vg, t_be, t_bl, t_pt)):
                rows[k].append(v)
        t_raw, _ = clock(raw)
        t_plain, _ = clock(fwd_plain)
        t_tape, (tape, y) = clock(record)
        t_grad, _ = clock(lambda: tape.gradient(y, xt)._value.block_until_ready())
        t_jit, _ = clock(jit_grad)
        if r >= args.warmup:
            for k, v in zip(rows, (t_raw, t_plain, t_tape, t_grad, t_jit)):
                rows[k].append(v)

    med = {k: statistics.median(v) for k, v in rows.items()}

    def ratio(a, b):
        return statistics.median([x / y for x, y in zip(rows[a], rows[b])])

    us = 1e6
    print(f"machine: {os.cpu_count()} cores, {cpu_model()}; jax {jax.__version__}, "
          f"backend {jax.default_backend()}")
    print(f"chain: {STEPS} x (sin, *1.01, +0.1, tanh) on 1000 float32 = {OPS} ops; "
          f"median of {args.repeats} interleaved rounds after {args.warmup} warmup rounds")
    print(f"{'raw jnp eager, per op':<44}{med['raw'] / OPS * us:9.1f} us")
    print(f"{'tapejax forward, no tape, per op':<44}{med['plain'] / OPS * us:9.1f} us")
    print(f"{'tapejax forward, recording, per op':<44}{med['tape'] / OPS * us:9.1f} us")
    print(f"{'tapejax forward, recording, whole chain':<44}{med['tape'] * 1e3:9.2f} ms")
    print(f"{'tapejax tape.gradient (cached), per call':<44}{med['grad'] * 1e3:9.2f} ms")
    print(f"{'jax.jit(jax.grad(f)), per call':<44}{med['jit'] * 1e3:9.2f} ms")
    print(f"ratio forward per op / raw jnp op (no tape):   {ratio('plain', 'raw'):5.2f}  (goal <= 1.5)")
    print(f"ratio forward per op / raw jnp op (recording): {ratio('tape', 'raw'):5.2f}  (goal <= 1.5)")
    print(f"ratio gradient call / recorded forward:        {ratio('grad', 'tape'):5.2f}  (goal < 1)")
    print(f"ratio gradient call / jax.jit(jax.grad):       {ratio('grad', 'jit'):5.2f}")
    print("lazy execution (forward + tape.gradient of the chain, per step):")
    print(f"{'  eager step':<44}{med['eager_step'] * 1e3:9.2f} ms")
    print(f"{'  lazy step':<44}{med['lazy_step'] * 1e3:9.2f} ms")
    print(f"{'  lazy step, fuse_ops=True':<44}{med['fused_step'] * 1e3:9.2f} ms")
    print(f"{'  jax.jit(jax.value_and_grad(f))':<44}{med['jit_vg'] * 1e3:9.2f} ms")
    if torch_step is not None:
        print(f"{'  PyTorch eager autograd (' + torch_device + ')':<44}{med['torch'] * 1e3:9.2f} ms")
        print(f"  ratio PyTorch / jax.jit:                     {ratio('torch', 'jit_vg'):5.2f}")
    print(f"  ratio eager step / jax.jit:                  {ratio('eager_step', 'jit_vg'):5.2f}")
    print(f"  ratio lazy step / jax.jit:                   {ratio('lazy_step', 'jit_vg'):5.2f}  (goal <= 4)")
    print(f"  ratio lazy step, fuse_ops=True / jax.jit:    {ratio('fused_step', 'jit_vg'):5.2f}")
    print(f"  first lazy step (shape inference, run on the host): {lazy_first * 1e3:7.0f} ms; second "
          f"(compiles): {lazy_second * 1e3:.0f} ms (first jax.jit call: {jit_first * 1e3:.0f} ms)")
    print(f"{'  branch every 10 ops, eager':<44}{med['branchy_eager'] * 1e3:9.2f} ms")
    print(f"{'  branch every 10 ops, lazy':<44}{med['branchy_lazy'] * 1e3:9.2f} ms")
    print(f"  ratio lazy / eager (branchy loop):           {ratio('branchy_lazy', 'branchy_eager'):5.2f}  "
          "(goal <= 1)")


if __name__ == "__main__":
    main()
