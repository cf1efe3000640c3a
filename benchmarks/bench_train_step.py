"""Training-step speed: tapejax (eager and tf.function) against plain JAX, same run.

Models: an MLP 784-512-512-10 (batch 128) and the seed-000 CNN
(Conv2D(16,3,relu) -> Conv2D(16,3,relu) -> GlobalAveragePooling2D -> Dense(10),
batch 32, 28x28x1), both with Adam and sparse categorical cross-entropy.

Variants: the eager step (GradientTape, op by op), the same step with lazy execution on
(``tf.config.experimental.set_lazy_execution``: forward and backward one fused program), and
the step as a ``tf.function``.

Baselines: the hand-written `jax.jit(jax.value_and_grad(loss))` + optax.adam step
(compiled, buffers donated), and the same step without jit (plain JAX eager).

Steady state: the variants run in alternating blocks of `--steps` steps for
`--rounds` rounds (the order rotates every round), and each round's time is divided by the jax.jit block of the same
round, so machine load moves both sides of a ratio alike. Medians are printed.

First call (trace + compile): each variant in its own fresh process (`--first-call-runs`
processes each, median), after the same JAX warm-up, so no process reuses another's
compilations:
  - "built":  model and optimizer state already exist; tapejax's first tf.function call
    against jax.jit's first call (trace + compile only, what the goal compares);
  - "cold":   tapejax's first call on an unbuilt model (it also creates the weights and
    the Adam slots) against JAX initialising parameters (jax.random), optax state and
    then calling the jitted step.

    python benchmarks/bench_train_step.py [--rounds 9] [--steps 20] [--first-call-runs 3]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

import tapejax as tf

BATCH = {"mlp": 128, "cnn": 32}


def mlp_model():
    return tf.keras.Sequential([
        tf.keras.layers.Dense(512, activation="relu", input_shape=(784,)),
        tf.keras.layers.Dense(512, activation="relu"),
        tf.keras.layers.Dense(10),
    ])


def cnn_model():
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(16, [3, 3], activation="relu", input_shape=(None, None, 1)),
        tf.keras.layers.Conv2D(16, [3, 3], activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10),
    ])


def data(kind):
    rng = np.random.RandomState(0)
    batch = BATCH[kind]
    shape = (batch, 784) if kind == "mlp" else (batch, 28, 28, 1)
    return rng.rand(*shape).astype(np.float32), rng.randint(0, 10, size=(batch,)).astype(np.int32)


def jax_apply(kind):
    if kind == "mlp":
        def apply(params, x):
            (w1, b1), (w2, b2), (w3, b3) = params
            h = jax.nn.relu(x @ w1 + b1)
            h = jax.nn.relu(h @ w2 + b2)
            return h @ w3 + b3
    else:
        def apply(params, x):
            (k1, c1), (k2, c2), (w, b) = params
            dn = ("NHWC", "HWIO", "NHWC")
            h = jax.nn.relu(jax.lax.conv_general_dilated(x, k1, (1, 1), "VALID", dimension_numbers=dn) + c1)
            h = jax.nn.relu(jax.lax.conv_general_dilated(h, k2, (1, 1), "VALID", dimension_numbers=dn) + c2)
            return jnp.mean(h, axis=(1, 2)) @ w + b
    return apply


def jax_shapes(kind):
    if kind == "mlp":
        return [((784, 512), (512,)), ((512, 512), (512,)), ((512, 10), (10,))]
    return [((3, 3, 1, 16), (16,)), ((3, 3, 16, 16), (16,)), ((16, 10), (10,))]


def jax_init(kind, key):
    """Glorot-uniform kernels and zero biases, as Keras creates them (eager JAX)."""
    params = []
    for kshape, bshape in jax_shapes(kind):
        key, sub = jax.random.split(key)
        rf = int(np.prod(kshape[:-2])) if len(kshape) > 2 else 1
        limit = np.sqrt(6.0 / (kshape[-2] * rf + kshape[-1] * rf))
        params.append((jax.random.uniform(sub, kshape, jnp.float32, -limit, limit), jnp.zeros(bshape, jnp.float32)))
    return params


def jax_step(apply, jit=True):
    tx = optax.adam(1e-3, eps=1e-7)

    def loss_fn(params, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(apply(params, x), y).mean()

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return tx, (jax.jit(step, donate_argnums=(0, 1)) if jit else step)


def tapejax_step(kind):
    model = (mlp_model if kind == "mlp" else cnn_model)()
    opt = tf.keras.optimizers.Adam(1e-3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return model, opt, train_step


# ---------------------------------------------------------------------------
# Steady state, interleaved
# ---------------------------------------------------------------------------

def steady(kind, rounds, steps):
    x, y = data(kind)
    xt, yt = tf.constant(x), tf.constant(y)
    _, _, eager = tapejax_step(kind)
    _, _, lazy_step = tapejax_step(kind)

    def run_lazy():
        # Lazy execution (issue 17): the eager step's ops fused into one program per step.
        tf.config.experimental.set_lazy_execution(True)
        try:
            return lazy_step(xt, yt)._value
        finally:
            tf.config.experimental.set_lazy_execution(False)
    model, _, step = tapejax_step(kind)
    compiled = tf.function(step)
    compiled(xt, yt)
    params = [tuple(jnp.asarray(v.numpy()) for v in layer.weights) for layer in model.layers if layer.weights]
    apply = jax_apply(kind)
    tx, jstep = jax_step(apply, jit=True)
    jst = [jax.tree.map(jnp.copy, params), tx.init(params)]
    _, estep = jax_step(apply, jit=False)
    est = [params, tx.init(params)]
    xj, yj = jnp.asarray(x), jnp.asarray(y)

    def run_jit():
        jst[0], jst[1], loss = jstep(jst[0], jst[1], xj, yj)
        return loss

    def run_eager_jax():
        est[0], est[1], loss = estep(est[0], est[1], xj, yj)
        return loss

    variants = {
        "tapejax eager (GradientTape)": (lambda: eager(xt, yt)._value, steps),
        "tapejax eager, lazy execution": (run_lazy, steps),
        "tapejax tf.function": (lambda: compiled(xt, yt)._value, steps),
        "jax.jit + optax": (run_jit, steps),
        "plain JAX eager (no jit)": (run_eager_jax, max(2, steps // 10)),
    }
    times = {k: [] for k in variants}
    for fn, _ in variants.values():  # warm-up
        jax.block_until_ready(fn())
        jax.block_until_ready(fn())
    names = list(variants)
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:  # rotate: no variant always follows another
            fn, n = variants[k]
            t = time.perf_counter()
            for _ in range(n):
                r = fn()
            jax.block_until_ready(r)
            times[k].append((time.perf_counter() - t) / n)
    base = times["jax.jit + optax"]
    return {k: (statistics.median(v), statistics.median([a / b for a, b in zip(v, base)]),
                min(a / b for a, b in zip(v, base)), max(a / b for a, b in zip(v, base)))
            for k, v in times.items()}


# ---------------------------------------------------------------------------
# First call, one fresh process per measurement
# ---------------------------------------------------------------------------

def first_call(kind, variant):
    """Seconds of the first step call in this (fresh) process."""
    x, y = data(kind)
    jnp.zeros(1).block_until_ready()          # the same backend warm-up for every variant
    if variant.startswith("tapejax"):
        xt, yt = tf.constant(x), tf.constant(y)
        model, opt, step = tapejax_step(kind)
        if variant == "tapejax-built":
            model.build((None,) + x.shape[1:])
            opt.build(model.trainable_variables)
        compiled = tf.function(step)
        t = time.perf_counter()
        jax.block_until_ready(compiled(xt, yt)._value)
        return time.perf_counter() - t
    tx, jstep = jax_step(jax_apply(kind), jit=True)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    if variant == "jax-built":
        params = jax_init(kind, jax.random.PRNGKey(0))
        state = tx.init(params)
        jax.block_until_ready((params, state))
        t = time.perf_counter()
    else:
        t = time.perf_counter()
        params = jax_init(kind, jax.random.PRNGKey(0))
        state = tx.init(params)
    jax.block_until_ready(jstep(params, state, xj, yj))
    return time.perf_counter() - t


def first_call_median(kind, variant, runs):
    out = []
    for _ in range(runs):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--first-call", kind, variant],
                           capture_output=True, text=True, check=True)
        out.append(json.loads(r.stdout.strip().splitlines()[-1])["seconds"])
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--first-call-runs", type=int, default=3)
    ap.add_argument("--models", default="mlp,cnn")
    ap.add_argument("--first-call", nargs=2, metavar=("KIND", "VARIANT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.first_call:
        print(json.dumps({"seconds": first_call(*args.first_call)}))
        return
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, jax {jax.__version__}, "
          f"devices {jax.devices()}")
    for kind in args.models.split(","):
        r = steady(kind, args.rounds, args.steps)
        print(f"\n{kind} (batch {BATCH[kind]}), {args.rounds} interleaved rounds of {args.steps} steps")
        for k, (ms, ratio, lo, hi) in r.items():
            print(f"  {k:30s} {ms * 1e3:8.3f} ms/step   ratio to jax.jit {ratio:5.2f}  "
                  f"(rounds {lo:.2f}-{hi:.2f})")
        if not args.first_call_runs:
            continue
        fc = {v: first_call_median(kind, v, args.first_call_runs)
              for v in ("tapejax-built", "jax-built", "tapejax-cold", "jax-cold")}
        print(f"  first call, built state: tapejax {fc['tapejax-built'] * 1e3:.0f} ms / jax.jit "
              f"{fc['jax-built'] * 1e3:.0f} ms = {fc['tapejax-built'] / fc['jax-built']:.2f}")
        print(f"  first call, from scratch: tapejax {fc['tapejax-cold'] * 1e3:.0f} ms / JAX init + jit "
              f"{fc['jax-cold'] * 1e3:.0f} ms = {fc['tapejax-cold'] / fc['jax-cold']:.2f}")


if __name__ == "__main__":
    main()
