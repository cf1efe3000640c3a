"""Data-parallel training step: tapejax MirroredStrategy vs hand-written jax.sharding, 1 to N devices.

The step is the "Custom training with tf.distribute" one: a Keras MLP 784-256-256-10
with Adam, per-example sparse cross-entropy scaled by the global batch size
(``tf.nn.compute_average_loss``), a ``tf.function`` step run by ``strategy.run`` on
batches from ``experimental_distribute_dataset``. The baseline, measured in the same
process, is the hand-written JAX program: ``jax.jit(value_and_grad)`` + ``optax.adam``
with the parameters replicated and the batch split over the same 1-D mesh.

On CPU the devices are simulated (``--xla_force_host_platform_device_count``) and
share the machine's cores, so the time per step measures the overhead of splitting
the step, not a speed-up. Each device count runs in a fresh process (JAX fixes the
device count when it starts).

    python benchmarks/bench_distribute.py [--devices 1 2 4 8] [--steps 20] [--repeats 7] [--batch 256]
"""
import argparse
import json
import os
import platform
import subprocess
import sys


def child(n_devices, steps, repeats, batch):
    if platform.system() == "Linux" and "cpu" in os.environ.get("JAX_PLATFORMS", "cpu"):
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + \
            f" --xla_force_host_platform_device_count={n_devices}"
    import statistics
    import time

    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    import tapejax as tf

    devices = jax.devices()[:n_devices]
    rs = np.random.RandomState(0)
    x = rs.randn(batch * 4, 784).astype("float32")
    y = rs.randint(0, 10, batch * 4).astype("int32")

    # -- tapejax -------------------------------------------------------------
    strategy = tf.distribute.MirroredStrategy(devices)
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(256, activation="relu", input_shape=(784,)),
            tf.keras.layers.Dense(256, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        optimizer = tf.keras.optimizers.Adam(1e-3)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    @tf.function
    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(labels, model(images, training=True)),
                                              global_batch_size=batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)
    batches = list(strategy.experimental_distribute_dataset(ds))

    def run_tapejax():
        for i in range(steps):
            loss = strategy.run(train_step, args=(batches[i % len(batches)],))
        jax.block_until_ready(loss._value)

    # -- plain JAX on the same mesh ---------------------------------------------
    mesh = Mesh(np.array(devices), ("batch",))
    rep, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    params = jax.device_put([np.asarray(v.numpy()) for v in model.trainable_variables], rep)
    tx = optax.adam(1e-3, eps=1e-7)
    opt_state = jax.device_put(tx.init(params), rep)
    jbatches = [(jax.device_put(b[0]._value, split), jax.device_put(b[1]._value, split)) for b in batches]

    def loss_fn(p, xb, yb):
        w1, b1, w2, b2, w3, b3 = p
        h = jax.nn.relu(xb @ w1 + b1)
        h = jax.nn.relu(h @ w2 + b2)
        logits = h @ w3 + b3
        return optax.softmax_cross_entropy_with_integer_labels(logits, yb).sum() / batch

    @jax.jit
    def jax_step(p, s, xb, yb):
        loss, g = jax.value_and_grad(loss_fn)(p, xb, yb)
        u, s = tx.update(g, s, p)
        return optax.apply_updates(p, u), s, loss

    state = [params, opt_state]

    def run_jax():
        for i in range(steps):
            xb, yb = jbatches[i % len(jbatches)]
            state[0], state[1], loss = jax_step(state[0], state[1], xb, yb)
        jax.block_until_ready(loss)

    def timed(fn):
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) / steps * 1e3

    run_tapejax(), run_jax()  # compile
    tt, jt = [], []
    for _ in range(repeats):  # interleaved, so a busy machine slows both alike
        tt.append(timed(run_tapejax))
        jt.append(timed(run_jax))
    t_min, t_med, j_min, j_med = min(tt), statistics.median(tt), min(jt), statistics.median(jt)
    print(json.dumps(dict(devices=n_devices, platform=devices[0].platform, tapejax_ms=t_med, tapejax_min_ms=t_min,
                          jax_ms=j_med, jax_min_ms=j_min,
                          traces=train_step.experimental_get_tracing_count())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is not None:
        child(a.child, a.steps, a.repeats, a.batch)
        return
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}")
    print(f"MLP 784-256-256-10, Adam, global batch {a.batch}, {a.steps} steps x {a.repeats} repeats, "
          "interleaved; ms per step, best repeat (median in parentheses)\n")
    print("| devices | per-device batch | tapejax strategy.run(tf.function) | plain JAX (jit + optax, same mesh) "
          "| ratio (best) |")
    print("|---:|---:|---:|---:|---:|")
    for n in a.devices:
        env = dict(os.environ)
        env.pop("XLA_FLAGS", None)
        out = subprocess.run([sys.executable, __file__, "--child", str(n), "--steps", str(a.steps),
                              "--repeats", str(a.repeats), "--batch", str(a.batch)],
                             capture_output=True, text=True, env=env)
        line = [l for l in out.stdout.splitlines() if l.startswith("{")]
        if out.returncode or not line:
            print(f"| {n} | failed: {out.stderr.strip().splitlines()[-1:]} |")
            continue
        r = json.loads(line[-1])
        print(f"| {n} | {a.batch // n} | {r['tapejax_min_ms']:.2f} ({r['tapejax_ms']:.2f}) ms | "
              f"{r['jax_min_ms']:.2f} ({r['jax_ms']:.2f}) ms | {r['tapejax_min_ms'] / r['jax_min_ms']:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
