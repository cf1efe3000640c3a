"""bench_strings: what string tensors cost the numeric path (nothing, by design), and what string ops cost.

String tensors reach an op's NumPy implementation only when JAX refuses the arguments (the
engine's ``except`` branch), so a numeric op runs the same code as before. Timed here:

* per-op time of small eager numeric ops (``x + y`` on tensors, ``x * 2.0`` with a Python
  scalar, ``tf.reduce_sum``) next to the raw ``jnp`` op, in the same run; run it with
  ``PYTHONPATH`` at another checkout to compare states (benchmarks/README.md);
* string ops on 10,000 strings: ``tf.strings.length``, ``tf.strings.split`` (to a
  RaggedTensor), ``tf.strings.to_number``, ``tf.gather`` of strings, next to the same work in a
  Python list comprehension.

Figures are the minimum over rounds (the machine is shared: the minimum is the least disturbed
round). Run: ``python benchmarks/bench_strings.py [--rounds 15]``.
"""
import argparse
import time

import jax.numpy as jnp
import numpy as np

import tapejax as tf


def per_call(fn, n, rounds):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    x, y = tf.constant(np.ones(16, np.float32)), tf.constant(np.full(16, 2.0, np.float32))
    jx, jy = jnp.ones(16, jnp.float32), jnp.full(16, 2.0, jnp.float32)
    for f in (lambda: x + y, lambda: jx + jy, lambda: x * 2.0, lambda: tf.reduce_sum(x)):
        f().block_until_ready() if hasattr(f(), "block_until_ready") else f()
    rows = [
        ("jnp x + y", per_call(lambda: jx + jy, 2000, args.rounds)),
        ("tapejax x + y", per_call(lambda: x + y, 2000, args.rounds)),
        ("tapejax x * 2.0 (Python scalar)", per_call(lambda: x * 2.0, 2000, args.rounds)),
        ("tapejax tf.reduce_sum(x)", per_call(lambda: tf.reduce_sum(x), 2000, args.rounds)),
    ]
    for name, t in rows:
        print(f"{name:40s} {t * 1e6:8.2f} us")
    print(f"{'ratio tapejax / jnp (x + y)':40s} {rows[1][1] / rows[0][1]:8.2f}")
    if not hasattr(tf, "strings"):
        return
    words = [f"{i} word{i % 7} x" for i in range(10_000)]
    s = tf.constant(words)
    nums = tf.constant([str(i) for i in range(10_000)])
    idx = tf.constant(np.arange(10_000)[::-1].copy())
    for name, fn, py in [
        ("tf.strings.length", lambda: tf.strings.length(s), lambda: [len(w.encode()) for w in words]),
        ("tf.strings.split", lambda: tf.strings.split(s), lambda: [w.encode().split() for w in words]),
        ("tf.strings.to_number", lambda: tf.strings.to_number(nums), lambda: [float(str(i)) for i in range(10_000)]),
        ("tf.gather (strings)", lambda: tf.gather(s, idx), lambda: [words[i] for i in range(9_999, -1, -1)]),
    ]:
        t, tp = per_call(fn, 3, args.rounds), per_call(py, 3, args.rounds)
        print(f"{name + ' (10,000 strings)':40s} {t * 1e3:8.2f} ms   Python loop {tp * 1e3:6.2f} ms   "
              f"ratio {t / tp:5.2f}")


if __name__ == "__main__":
    main()
