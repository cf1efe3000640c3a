"""Multi-device checks of tf.distribute, run in a subprocess by tests/test_distribute.py.

JAX reads ``XLA_FLAGS`` once, when it starts, so the 8 simulated CPU devices need a
fresh process. Modes:

    python tests/distribute_checks.py main      # 8 devices: every single-process check
    python tests/distribute_checks.py worker    # one of 2 processes x 4 devices (TF_CONFIG set)

Each check prints ``CHECK <name> ok ...``; the parent test asserts on those lines.
Nothing runs on import (pytest imports this file to collect doctests).
"""
import os
import sys

import numpy as np

GLOBAL_BATCH = 32
N_EXAMPLES = 96


def _data():
    rs = np.random.RandomState(0)
    x = rs.randn(N_EXAMPLES, 4).astype("float32")
    y = rs.randint(0, 3, N_EXAMPLES).astype("int32")
    return x, y


def _initial_weights():
    rs = np.random.RandomState(1)
    return [rs.randn(4, 16).astype("float32") * 0.5, rs.randn(16).astype("float32") * 0.1,
            rs.randn(16, 3).astype("float32") * 0.5, rs.randn(3).astype("float32") * 0.1]


def _make_model(tf):
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu", input_shape=(4,)),
                                 tf.keras.layers.Dense(3)])
    model.set_weights(_initial_weights())
    return model


def _make_step(tf, model, optimizer):
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    @tf.function
    def train_step(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            per_example = loss_object(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return train_step


def _reference(tf, steps):
    """The single-device run on full batches: what every distributed run must reproduce."""
    x, y = _data()
    model = _make_model(tf)
    optimizer = tf.keras.optimizers.Adam(0.01)
    step = _make_step(tf, model, optimizer)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    losses = [float(step(b)) for _, b in zip(range(steps), ds)]
    return model.get_weights(), losses


def _max_diff(a, b):
    return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v)))) for u, v in zip(a, b))


def _same_layout(sharding, spec, ndim):
    from jax.sharding import NamedSharding
    return sharding.is_equivalent_to(NamedSharding(sharding.mesh, spec), ndim)


def _check(name, cond, detail=""):
    if not cond:
        print(f"CHECK {name} FAILED {detail}", flush=True)
        raise SystemExit(f"check {name} failed: {detail}")
    print(f"CHECK {name} ok {detail}", flush=True)


# ---------------------------------------------------------------------------
# main: 8 simulated devices, one process
# ---------------------------------------------------------------------------

def check_data_parallel(tf, jax, P):
    ref_weights, ref_losses = _reference(tf, 3)
    strategy = tf.distribute.MirroredStrategy()
    _check("devices", strategy.num_replicas_in_sync == 8, f"replicas={strategy.num_replicas_in_sync}")
    with strategy.scope():
        model = _make_model(tf)
        optimizer = tf.keras.optimizers.Adam(0.01)
    step = _make_step(tf, model, optimizer)
    x, y = _data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    losses, first = [], None
    for batch in strategy.experimental_distribute_dataset(ds):
        first = first or batch
        per_replica = strategy.run(step, args=(batch,))
        losses.append(float(strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)))
    d = _max_diff(model.get_weights(), ref_weights)
    _check("data_parallel_weights", d < 1e-5, f"max|w_8dev - w_1dev|={d:.2e}")
    _check("data_parallel_losses", _max_diff([losses], [ref_losses]) < 1e-5, f"{losses} vs {ref_losses}")
    # The first call creates the Adam slots: TensorFlow counts that call's two traces.
    _check("traced_once", step.experimental_get_tracing_count() == 2, f"traces={step.experimental_get_tracing_count()}")
    conc = next(iter(step._cache.values()))
    n_compiled = conc._jitted._cache_size()
    _check("compiled_once", n_compiled == 1, f"jit cache entries={n_compiled}")

    bx = first[0]._value
    _check("batch_sharded", bx.sharding.spec == P("batch") and len(bx.addressable_shards) == 8
           and bx.addressable_shards[0].data.shape == (GLOBAL_BATCH // 8, 4), str(bx.sharding))
    variables = model.variables + optimizer.variables
    bad = [v.name for v in variables if v._value.sharding.spec != P() or len(v._value.sharding.device_set) != 8]
    _check("variables_replicated", not bad and len(optimizer.variables) > 4,
           f"{len(variables)} variables (optimizer slots included) replicated over 8 devices; bad={bad}")

    pieces = strategy.experimental_local_results(first[0])
    _check("local_results", len(pieces) == 8 and tuple(pieces[0].shape) == (4, 4),
           f"{len(pieces)} pieces of shape {tuple(pieces[0].shape)}")
    per_example = strategy.run(lambda b: tf.reduce_sum(b[0], axis=1), args=(first,))
    total = strategy.reduce("SUM", per_example, axis=0)
    mean = strategy.reduce(tf.distribute.ReduceOp.MEAN, per_example, axis=0)
    _check("reduce_axis0", abs(float(total) - float(x[:GLOBAL_BATCH].sum())) < 1e-3
           and abs(float(mean) - float(x[:GLOBAL_BATCH].sum(1).mean())) < 1e-5, f"sum={float(total):.4f}")

    # Assignments outside a step keep the layout (set_weights, checkpoint restores).
    model.set_weights(_initial_weights())
    k = model.layers[0].kernel._value
    _check("assign_keeps_layout", k.sharding.spec == P() and len(k.sharding.device_set) == 8, str(k.sharding))

    # An eager step (no tf.function) on the sharded batch gives the same result too.
    with strategy.scope():
        m2 = _make_model(tf)
        o2 = tf.keras.optimizers.Adam(0.01)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def eager_step(inputs):
        xb, yb = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_object(yb, m2(xb, training=True)),
                                              global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, m2.trainable_variables)
        o2.apply_gradients(zip(grads, m2.trainable_variables))
        return loss

    for batch in strategy.experimental_distribute_dataset(ds):
        strategy.run(eager_step, args=(batch,))
    d = _max_diff(m2.get_weights(), ref_weights)
    _check("eager_data_parallel", d < 1e-5, f"max diff={d:.2e}")
    return ref_weights


def check_tutorial(tf, jax, P, tmpdir):
    """The "Custom training with tf.distribute" tutorial, unchanged but for the data size."""
    rs = np.random.RandomState(0)
    train_images = rs.rand(192, 12, 12, 1).astype("float32")
    train_labels = (train_images.reshape(192, -1).mean(1) * 20).astype("int64") % 10
    test_images = rs.rand(100, 12, 12, 1).astype("float32")
    test_labels = (test_images.reshape(100, -1).mean(1) * 20).astype("int64") % 10

    strategy = tf.distribute.MirroredStrategy()
    print('Number of devices: {}'.format(strategy.num_replicas_in_sync))
    BUFFER_SIZE = len(train_images)
    BATCH_SIZE_PER_REPLICA = 4
    GLOBAL_BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync
    EPOCHS = 2

    train_dataset = tf.data.Dataset.from_tensor_slices((train_images, train_labels)).shuffle(BUFFER_SIZE).batch(GLOBAL_BATCH_SIZE)
    test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(GLOBAL_BATCH_SIZE)
    train_dist_dataset = strategy.experimental_distribute_dataset(train_dataset)
    test_dist_dataset = strategy.experimental_distribute_dataset(test_dataset)

    def create_model():
        model = tf.keras.Sequential([
            tf.keras.layers.Conv2D(8, 3, activation='relu'),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(16, activation='relu'),
            tf.keras.layers.Dense(10)
        ])
        return model

    checkpoint_dir = os.path.join(tmpdir, 'training_checkpoints')
    checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")

    with strategy.scope():
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

        def compute_loss(labels, predictions):
            per_example_loss = loss_object(labels, predictions)
            return tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH_SIZE)

    with strategy.scope():
        test_loss = tf.keras.metrics.Mean(name='test_loss')
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name='train_accuracy')
        test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name='test_accuracy')

    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
        checkpoint = tf.train.Checkpoint(optimizer=optimizer, model=model)

    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = compute_loss(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_accuracy.update_state(labels, predictions)
        return loss

    def test_step(inputs):
        images, labels = inputs
        predictions = model(images, training=False)
        t_loss = loss_object(labels, predictions)
        test_loss.update_state(t_loss)
        test_accuracy.update_state(labels, predictions)

    @tf.function
    def distributed_train_step(dataset_inputs):
        per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    @tf.function
    def distributed_test_step(dataset_inputs):
        return strategy.run(test_step, args=(dataset_inputs,))

    train_losses = []
    for epoch in range(EPOCHS):
        total_loss = 0.0
        num_batches = 0
        for x in train_dist_dataset:
            total_loss += distributed_train_step(x)
            num_batches += 1
        train_loss = total_loss / num_batches

        for x in test_dist_dataset:
            distributed_test_step(x)

        if epoch % 2 == 0:
            checkpoint.save(checkpoint_prefix)

        template = ("Epoch {}, Loss: {}, Accuracy: {}, Test Loss: {}, Test Accuracy: {}")
        print(template.format(epoch + 1, train_loss, train_accuracy.result() * 100,
                              test_loss.result(), test_accuracy.result() * 100))
        train_losses.append(float(train_loss))
        test_loss.reset_state()
        train_accuracy.reset_state()
        test_accuracy.reset_state()

    _check("tutorial_runs", train_losses[-1] < train_losses[0] and all(np.isfinite(train_losses)),
           f"losses={[round(v, 4) for v in train_losses]}")
    variables = model.variables + optimizer.variables + train_accuracy.variables
    bad = [v.name for v in variables if v._value.sharding.spec != P() or len(v._value.sharding.device_set) != 8]
    _check("tutorial_variables_replicated", not bad, f"bad={bad}")
    # The last test batch (100 % 32 = 4 examples) does not split over 8 devices: computed replicated.
    # The train step creates the optimizer slots on its first call: two traces, as TensorFlow counts.
    _check("tutorial_traces", distributed_train_step.experimental_get_tracing_count() == 2
           and distributed_test_step.experimental_get_tracing_count() == 2,
           f"train traces={distributed_train_step.experimental_get_tracing_count()}, "
           f"test traces={distributed_test_step.experimental_get_tracing_count()}")

    # Restoring the checkpoint puts the values back in the replicated layout.
    path = checkpoint.save(checkpoint_prefix)
    saved = model.get_weights()
    for v in model.trainable_variables:
        v.assign(tf.zeros_like(v))
    checkpoint.restore(path)
    k = model.trainable_variables[0]._value
    d = _max_diff(model.get_weights(), saved)
    _check("tutorial_checkpoint_restore", k.sharding.spec == P() and len(k.sharding.device_set) == 8
           and d == 0.0, f"{k.sharding.spec}, max diff={d}")


def check_model_sharding(tf, jax, P):
    """A kernel split over devices stays split through compiled steps; results unchanged."""
    x, y = _data()
    strategy = tf.distribute.MirroredStrategy()
    ref_model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu", input_shape=(4,)),
                                     tf.keras.layers.Dense(3)])
    ref_opt = tf.keras.optimizers.Adam(0.01)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu", input_shape=(4,)),
                                     tf.keras.layers.Dense(3)])
        optimizer = tf.keras.optimizers.Adam(0.01)
    model.set_weights(ref_model.get_weights())
    k1, k2 = model.layers[0].kernel, model.layers[1].kernel
    tf.distribute.experimental.shard(k1, P(None, "batch"))        # columns over devices
    tf.distribute.experimental.shard(k2, tf.distribute.experimental.PartitionSpec("batch", None))
    ref_step = _make_step(tf, ref_model, ref_opt)
    step = _make_step(tf, model, optimizer)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    for batch in ds:
        ref_step(batch)
    for batch in strategy.experimental_distribute_dataset(ds):
        strategy.run(step, args=(batch,))
    d = _max_diff(model.get_weights(), ref_model.get_weights())
    _check("sharded_weights_match", d < 1e-5, f"max diff={d:.2e}")
    s1, s2 = k1._value.sharding, k2._value.sharding
    _check("kernel_stays_sharded", _same_layout(s1, P(None, "batch"), 2) and _same_layout(s2, P("batch"), 2)
           and k1._value.addressable_shards[0].data.shape == (4, 8), f"{s1.spec}, {s2.spec}")
    bias = model.layers[0].bias._value.sharding
    _check("bias_stays_replicated", bias.spec == P(), str(bias.spec))
    slots = [v for v in optimizer.variables if v._value.shape == (4, 64)]
    _check("slots_inherit_sharding", len(slots) == 2 and all(_same_layout(v._value.sharding, P(None, "batch"), 2)
                                                             for v in slots),
           str([v._value.sharding.spec for v in slots]))
    conc = next(iter(step._cache.values()))
    _check("sharded_compiled_once", conc._jitted._cache_size() == 1, f"{conc._jitted._cache_size()}")

    with strategy.scope():
        v = tf.Variable(np.zeros((4, 6), np.float32))
    try:
        tf.distribute.experimental.shard(v, P(None, "batch"))
        ok = False
    except ValueError as e:
        ok = "evenly" in str(e)
    _check("shard_uneven_error", ok)


def check_other_strategies(tf, jax, P, ref_weights):
    x, y = _data()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)

    mw = tf.distribute.MultiWorkerMirroredStrategy()
    _check("multiworker_single_process", mw.num_replicas_in_sync == 8)
    with mw.scope():
        model = _make_model(tf)
        optimizer = tf.keras.optimizers.Adam(0.01)
    step = _make_step(tf, model, optimizer)
    for batch in mw.experimental_distribute_dataset(ds):
        mw.run(step, args=(batch,))
    d = _max_diff(model.get_weights(), ref_weights)
    _check("multiworker_weights", d < 1e-5, f"max diff={d:.2e}")

    one = tf.distribute.OneDeviceStrategy("/cpu:3")
    with one.scope():
        v = tf.Variable(1.0)
    _check("one_device", v._value.sharding.device_set == {jax.devices()[3]}, str(v._value.sharding))

    two = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    _check("mirrored_device_names", two.num_replicas_in_sync == 2)
    try:
        with two.scope(), mw.scope():
            pass
        ok = False
    except ValueError as e:
        ok = "Mixing" in str(e)
    _check("mixing_strategies_error", ok)

    def dataset_fn(ctx):
        bs = ctx.get_per_replica_batch_size(GLOBAL_BATCH)
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(bs)

    batches = list(mw.distribute_datasets_from_function(dataset_fn))
    b = batches[0][0]._value
    _check("datasets_from_function", len(batches) == 3 and b.shape == (GLOBAL_BATCH, 4)
           and b.sharding.spec == P("batch") and np.allclose(np.asarray(b), x[:GLOBAL_BATCH]),
           f"{len(batches)} batches of {b.shape}")


def _timed(fn, *args):
    import time
    t = time.perf_counter()
    out = fn(*args)
    print(f"TIME {fn.__name__} {time.perf_counter() - t:.1f}s", flush=True)
    return out


# TensorFlow 2.21, MirroredStrategy over 8 logical CPUs, Generator.from_seed(7): strategy.run(lambda:
# g.uniform([2])) gives each replica its numbers, then g.normal([]) outside run (state [519, 0, 0]).
TF_PER_REPLICA_UNIFORM = [
    [0.13688934, 0.0869267], [0.82347643, 0.6397152], [0.8204093, 0.85986936], [0.34225094, 0.3805499],
    [0.21745586, 0.5891824], [0.29938972, 0.13214982], [0.15325475, 0.497023], [0.41878045, 0.75721407]]
TF_AFTER_RUN_NORMAL = 0.43116674


def check_per_replica(tf, jax, P):
    """strategy.run without distributed batches runs once per replica, as in TensorFlow."""
    s = tf.distribute.MirroredStrategy()
    with s.scope():
        g = tf.random.Generator.from_seed(7)
        v = tf.Variable(1.0)
    r = s.run(lambda: g.uniform([2]))
    got = [t.numpy().tolist() for t in s.experimental_local_results(r)]
    _check("per_replica_generator", type(r).__name__ == "PerReplica" and isinstance(r, tf.distribute.DistributedValues)
           and np.allclose(got, TF_PER_REPLICA_UNIFORM, rtol=0, atol=1e-7)
           and g.state.numpy().tolist() == [519, 0, 0] and abs(float(g.normal([])) - TF_AFTER_RUN_NORMAL) < 1e-6,
           f"{got} {g.state.numpy().tolist()}")
    ids = s.run(lambda: tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32))
    _check("per_replica_ids_reduce", [float(t) for t in s.experimental_local_results(ids)] == list(range(8))
           and float(s.reduce("SUM", ids, axis=None)) == 28.0 and float(s.reduce("MEAN", ids, axis=None)) == 3.5
           and str(s.run(tf.distribute.get_replica_context).__class__.__name__) == "PerReplica",
           str(ids))
    # Replicas would update a mirrored Variable in turn, unaggregated: an error, not a silent result.
    try:
        s.run(lambda: v.assign_add(1.0))
        raised = None
    except ValueError as e:
        raised = str(e)
    _check("per_replica_write_error", raised is not None and "'Variable:0'" in raised
           and "experimental_distribute_dataset" in raised and float(v) == 1.0, str(raised))
    # A distributed batch still runs once, on the global batch (SPMD), with the generator's own key.
    batch = next(iter(s.experimental_distribute_dataset(tf.data.Dataset.range(16).batch(8))))
    out = s.run(lambda b: (b * 2, g.normal([])), args=(batch,))
    same = tf.random.Generator.from_state([519 + 256, 0, 0], "philox").normal([])
    _check("per_replica_not_for_batches", tf.is_tensor(out[0]) and out[0].shape == (8,)
           and float(out[1]) == float(same), str(out))


def main():
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    import tempfile
    import jax
    from jax.sharding import PartitionSpec as P
    import tapejax as tf
    _check("jax_devices", len(jax.devices()) == 8, str(len(jax.devices())))
    ref_weights = _timed(check_data_parallel, tf, jax, P)
    with tempfile.TemporaryDirectory() as tmp:
        _timed(check_tutorial, tf, jax, P, tmp)
    _timed(check_model_sharding, tf, jax, P)
    _timed(check_other_strategies, tf, jax, P, ref_weights)
    _timed(check_per_replica, tf, jax, P)
    print("ALL CHECKS PASSED", flush=True)


# ---------------------------------------------------------------------------
# worker: one process of a 2-process cluster (launched with TF_CONFIG)
# ---------------------------------------------------------------------------

def worker():
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
    import tapejax as tf
    strategy = tf.distribute.MultiWorkerMirroredStrategy()   # starts jax.distributed from TF_CONFIG
    import jax
    _check("worker_cluster", jax.process_count() == 2 and strategy.num_replicas_in_sync == 8,
           f"process {jax.process_index()} of {jax.process_count()}, replicas={strategy.num_replicas_in_sync}")
    # The single-device reference, on this process's first device.
    ref_weights, ref_losses = _reference(tf, 3)
    x, y = _data()
    with strategy.scope():
        model = _make_model(tf)
        optimizer = tf.keras.optimizers.Adam(0.01)
    step = _make_step(tf, model, optimizer)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    losses = []
    for batch in strategy.experimental_distribute_dataset(ds):
        loss = strategy.run(step, args=(batch,))
        losses.append(float(strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)))
    d = _max_diff(model.get_weights(), ref_weights)
    _check("worker_weights", d < 1e-5, f"max|w_2x4dev - w_1dev|={d:.2e}")
    _check("worker_losses", _max_diff([losses], [ref_losses]) < 1e-5, f"{losses} vs {ref_losses}")
    b = batch[0]._value
    _check("worker_batch_global", b.shape == (GLOBAL_BATCH, 4) and len(b.addressable_shards) == 4
           and not b.is_fully_addressable, f"global {b.shape}, {len(b.addressable_shards)} local shards")
    # TensorFlow names a cluster's devices by job and task: /job:worker/replica:0/task:<i>/device:CPU:<k>.
    names = strategy.extended.worker_devices
    task = jax.process_index()
    _check("worker_device_names", names == tuple(f"/job:worker/replica:0/task:{task}/device:CPU:{k}" for k in range(4))
           and tf.constant(1.0).device == f"/job:worker/replica:0/task:{task}/device:CPU:0", f"{names}")


if __name__ == "__main__":
    {"main": main, "worker": worker}[sys.argv[1] if len(sys.argv) > 1 else "main"]()
