"""Training-step speed: tapejax (eager and tf.function) against plain JAX, same run.

Models: an MLP 784-512-512-10 (batch 128) and the seed-000 CNN
(Conv2D(16,3,relu) -> Conv2D(16,3,relu) -> GlobalAveragePooling2D -> Dense(10),
batch 32, 28x28x1), both with Adam and sparse categorical cross-entropy.

Baselines: the hand-written `jax.jit(jax.value_and_grad(loss))` + optax.adam step
(compiled), and the same step without jit (plain JAX eager).

    python benchmarks/bench_train_step.py [--steps 30] [--repeats 5]
"""
import argparse
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

import tapejax as tf


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


def jax_step(apply, jit=True):
    tx = optax.adam(1e-3, eps=1e-7)

    def loss_fn(params, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(apply(params, x), y).mean()

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return tx, (jax.jit(step, donate_argnums=(0, 1)) if jit else step)


def time_steps(run_one, steps, repeats):
    """Median seconds per step over `repeats` blocks of `steps` steps (after warm-up)."""
    run_one()
    run_one()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            r = run_one()
        jax.block_until_ready(r)
        out.append((time.perf_counter() - t) / steps)
    return statistics.median(out)


def bench(kind, batch, steps, repeats, eager_jax_steps):
    rng = np.random.RandomState(0)
    if kind == "mlp":
        x = rng.rand(batch, 784).astype(np.float32)
    else:
        x = rng.rand(batch, 28, 28, 1).astype(np.float32)
    y = rng.randint(0, 10, size=(batch,)).astype(np.int32)
    xt, yt = tf.constant(x), tf.constant(y)
    results = {}

    # tapejax, eager and compiled (fresh model each: the compiled one is timed from its first call).
    def make():
        model = (mlp_model if kind == "mlp" else cnn_model)()
        opt = tf.keras.optimizers.Adam(1e-3)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def train_step(xb, yb):
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        return model, train_step

    _, eager_step = make()
    results["tapejax eager"] = time_steps(lambda: eager_step(xt, yt)._value, steps, repeats)
    model, step = make()
    compiled = tf.function(step)
    t = time.perf_counter()
    jax.block_until_ready(compiled(xt, yt)._value)
    results["tapejax tf.function first call"] = time.perf_counter() - t
    results["tapejax tf.function"] = time_steps(lambda: compiled(xt, yt)._value, steps, repeats)

    # plain JAX with the same initial weights
    params = [tuple(jnp.asarray(v.numpy()) for v in layer.weights) for layer in model.layers if layer.weights]
    apply = jax_apply(kind)
    tx, jstep = jax_step(apply, jit=True)
    state = [jax.tree.map(jnp.copy, params), None]
    state[1] = tx.init(state[0])
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    t = time.perf_counter()
    p, o, l = jstep(state[0], state[1], xj, yj)
    jax.block_until_ready(l)
    results["jax.jit first call"] = time.perf_counter() - t
    state[0], state[1] = p, o

    def run_jit():
        state[0], state[1], loss = jstep(state[0], state[1], xj, yj)
        return loss
    results["jax.jit step"] = time_steps(run_jit, steps, repeats)

    _, estep = jax_step(apply, jit=False)
    est = [params, tx.init(params)]

    def run_eager():
        est[0], est[1], loss = estep(est[0], est[1], xj, yj)
        return loss
    results["jax eager step"] = time_steps(run_eager, eager_jax_steps, 3)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, jax {jax.__version__}, devices {jax.devices()}")
    for kind, batch in (("mlp", 128), ("cnn", 32)):
        r = bench(kind, batch, args.steps, args.repeats, eager_jax_steps=3)
        base = r["jax.jit step"]
        print(f"\n{kind} (batch {batch})")
        for k, v in r.items():
            if "first call" in k:
                print(f"  {k:34s} {v * 1e3:9.1f} ms")
            else:
                print(f"  {k:34s} {v * 1e3:9.3f} ms/step   ratio to jax.jit {v / base:6.2f}")
        print(f"  first-call ratio tf.function / jax.jit: "
              f"{r['tapejax tf.function first call'] / r['jax.jit first call']:.2f}")


if __name__ == "__main__":
    main()
