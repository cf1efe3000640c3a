"""What TensorFlow's CPU kernel checks cost a compiled training step.

The step (a ``tf.function``): Keras ``Embedding(V, 16)`` -> ``GlobalAveragePooling1D`` ->
``Dense(4)``, sparse categorical cross-entropy from logits, Adam; batch 32 of 100 ids. Its
program checks the ids against the table (``tf.gather``'s check) and the labels against the
classes (the cross-entropy's); both checks are outputs of the program, which the call reads
(it waits for the program, as a TensorFlow call does). Baseline, in the same run and
alternating blocks: the same model as a hand-written ``jax.jit(value_and_grad)`` + ``optax.adam``
step with donated buffers, which checks nothing (XLA clamps a bad id) and returns without
waiting; "jax.jit, waited" also blocks on its loss each step, as the checked step does.

    python benchmarks/bench_checks.py [--vocab 1000] [--rounds 7] [--steps 100]
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

import tapejax as tf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=100)
    a = ap.parse_args()
    V, D, C, B, T = a.vocab, 16, 4, 32, 100
    rng = np.random.default_rng(0)
    x_np = rng.integers(0, V, (B, T)).astype(np.int32)
    y_np = rng.integers(0, C, (B,)).astype(np.int32)

    model = tf.keras.Sequential([tf.keras.layers.Embedding(V, D), tf.keras.layers.GlobalAveragePooling1D(),
                                 tf.keras.layers.Dense(C)])
    model.build((None, T))
    opt = tf.keras.optimizers.Adam()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    params = {"e": jnp.asarray(rng.normal(size=(V, D)), jnp.float32), "w": jnp.zeros((D, C), jnp.float32),
              "b": jnp.zeros((C,), jnp.float32)}
    tx = optax.adam(1e-3)
    state = tx.init(params)

    def loss_jax(p, x, y):
        h = jnp.take(p["e"], x, axis=0).mean(axis=1) @ p["w"] + p["b"]
        return optax.softmax_cross_entropy_with_integer_labels(h, y).mean()

    @jax.jit
    def jax_step(p, s, x, y):
        loss, g = jax.value_and_grad(loss_jax)(p, x, y)
        u, s = tx.update(g, s, p)
        return optax.apply_updates(p, u), s, loss

    jax_step = jax.jit(jax_step, donate_argnums=(0, 1))
    x_tf, y_tf = tf.constant(x_np), tf.constant(y_np)
    x_j, y_j = jnp.asarray(x_np), jnp.asarray(y_np)
    box = [params, state]

    def run_tf(n):
        for _ in range(n):
            loss = step(x_tf, y_tf)
        loss.numpy()

    def run_jax(n, wait):
        for _ in range(n):
            box[0], box[1], loss = jax_step(box[0], box[1], x_j, y_j)
            if wait:
                loss.block_until_ready()
        loss.block_until_ready()

    variants = {"tapejax tf.function (checked)": run_tf, "jax.jit": lambda n: run_jax(n, False),
                "jax.jit, waited": lambda n: run_jax(n, True)}
    for f in variants.values():
        f(5)
    times = {k: [] for k in variants}
    names = list(variants)
    for r in range(a.rounds):
        for k in names[r % 3:] + names[:r % 3]:
            t0 = time.perf_counter()
            variants[k](a.steps)
            times[k].append((time.perf_counter() - t0) / a.steps * 1e6)
    base = statistics.median(times["jax.jit"])
    print(f"vocab {V}, batch {B}x{T}; us per step (median of {a.rounds} rounds of {a.steps})")
    for k in names:
        m = statistics.median(times[k])
        print(f"  {k:32s} {m:8.0f}  ratio to jax.jit {m / base:5.2f}")


if __name__ == "__main__":
    main()
