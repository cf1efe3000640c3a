"""tf.distribute: multi-device checks in subprocesses (8 simulated CPU devices), API checks here.

JAX fixes its device count when it starts (``XLA_FLAGS``), and this test process
has started it already with one device: the multi-device checks run in
``tests/distribute_checks.py`` in fresh processes, and the tests here assert on the
lines those print. One process runs every single-process check; two more form a
2-worker cluster (TF_CONFIG, 4 devices each) for MultiWorkerMirroredStrategy.
"""
import json
import os
import re
import socket
import subprocess
import sys

import numpy as np
import pytest

import tapejax as tf

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "distribute_checks.py")

MAIN_CHECKS = [
    "jax_devices", "devices", "data_parallel_weights", "data_parallel_losses", "traced_once", "compiled_once",
    "batch_sharded", "variables_replicated", "local_results", "reduce_axis0", "assign_keeps_layout",
    "eager_data_parallel", "tutorial_runs", "tutorial_variables_replicated", "tutorial_traces",
    "tutorial_checkpoint_restore", "sharded_weights_match", "kernel_stays_sharded", "bias_stays_replicated",
    "slots_inherit_sharding", "sharded_compiled_once", "shard_uneven_error", "multiworker_single_process",
    "multiworker_weights", "one_device", "mirrored_device_names", "mixing_strategies_error",
    "datasets_from_function", "per_replica_generator", "per_replica_ids_reduce", "per_replica_write_error",
    "per_replica_not_for_batches",
]


def _env(**extra):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env.pop("TF_CONFIG", None)
    env["JAX_PLATFORMS"] = "cpu"
    env.update(extra)
    return env


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def runs():
    """Starts the 8-device process and the 2-worker cluster together; returns their outputs."""
    workers = [f"localhost:{_free_port()}", f"localhost:{_free_port()}"]
    cmds = [([sys.executable, SCRIPT, "main"], _env())]
    for i in range(2):
        cfg = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}}
        cmds.append(([sys.executable, SCRIPT, "worker"], _env(TF_CONFIG=json.dumps(cfg))))
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                              cwd=os.path.dirname(HERE)) for c, e in cmds]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=600)
            results.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return results


def _assert_check(result, name):
    rc, out, err = result
    assert re.search(rf"^CHECK {name} ok", out, re.M), (
        f"check {name} did not pass (exit {rc}).\n--- stdout ---\n{out[-4000:]}\n--- stderr ---\n{err[-4000:]}")


@pytest.mark.parametrize("name", MAIN_CHECKS)
def test_multi_device_check(runs, name):
    _assert_check(runs[0], name)


def test_multi_device_script_finished(runs):
    rc, out, err = runs[0]
    assert rc == 0 and "ALL CHECKS PASSED" in out, err[-4000:]


@pytest.mark.parametrize("worker", [0, 1])
@pytest.mark.parametrize("name", ["worker_cluster", "worker_weights", "worker_losses", "worker_batch_global",
                                  "worker_device_names"])
def test_multi_worker_two_processes(runs, worker, name):
    """Two processes x 4 devices, launched with TF_CONFIG, reproduce the single-device step."""
    _assert_check(runs[1 + worker], name)


# ---------------------------------------------------------------------------
# In this process (one device): the API surface and its errors
# ---------------------------------------------------------------------------

def test_default_strategy():
    s = tf.distribute.get_strategy()
    assert s.num_replicas_in_sync == 1 and not tf.distribute.has_strategy()
    with s.scope():
        v = tf.Variable(1.0)
    assert getattr(v, "_sharding", None) is None  # the default scope places nothing
    ds = tf.data.Dataset.range(4).batch(2)
    assert s.experimental_distribute_dataset(ds) is ds
    assert tf.distribute.get_replica_context() is not None


def test_scope_and_contexts():
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        assert tf.distribute.has_strategy() and tf.distribute.get_strategy() is strategy
        assert tf.distribute.in_cross_replica_context()
        assert tf.distribute.get_replica_context() is None

        def step():
            ctx = tf.distribute.get_replica_context()
            return ctx.num_replicas_in_sync, tf.distribute.in_cross_replica_context()

        assert strategy.run(step) == (strategy.num_replicas_in_sync, False)
    assert not tf.distribute.has_strategy()


def test_run_compiled_step_creates_placed_slots():
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        w = tf.Variable([1.0, 2.0])
        opt = tf.keras.optimizers.Adam(0.1)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * x)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    out = strategy.run(step, args=(tf.constant([1.0, 1.0]),))
    assert float(strategy.reduce(tf.distribute.ReduceOp.SUM, out, axis=None)) == 3.0
    # Slots created inside run (while tracing) are placed by the strategy too.
    assert all(getattr(v, "_sharding", None) is not None for v in opt.variables)


def test_reduce_ops_and_errors():
    s = tf.distribute.MirroredStrategy()
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert float(s.reduce("SUM", x, axis=None)[0, 0]) == 1.0
    np.testing.assert_allclose(s.reduce(tf.distribute.ReduceOp.SUM, x, axis=0).numpy(), [4.0, 6.0])
    np.testing.assert_allclose(s.reduce(tf.distribute.ReduceOp.MEAN, x, axis=0).numpy(), [2.0, 3.0])
    out = s.reduce("MEAN", {"a": x, "b": None}, axis=1)
    np.testing.assert_allclose(out["a"].numpy(), [1.5, 3.5])
    assert out["b"] is None
    with pytest.raises(ValueError, match="ReduceOp.SUM"):
        s.reduce("MAX", x)


def test_bad_device_and_mixing_errors():
    with pytest.raises(ValueError, match="jax.devices"):
        tf.distribute.MirroredStrategy(["/gpu:7"])
    a, b = tf.distribute.MirroredStrategy(), tf.distribute.OneDeviceStrategy("/cpu:0")
    with pytest.raises(ValueError, match="Mixing different"):
        with a.scope(), b.scope():
            pass
    assert not tf.distribute.has_strategy()


def test_shard_errors():
    strategy = tf.distribute.MirroredStrategy()
    P = tf.distribute.experimental.PartitionSpec
    free = tf.Variable(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="strategy.scope"):
        tf.distribute.experimental.shard(free, P(None, "batch"))
    with strategy.scope():
        v = tf.Variable(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="axes"):
        tf.distribute.experimental.shard(v, P("model"))
    with pytest.raises(ValueError, match="rank"):
        tf.distribute.experimental.shard(v, P(None, None, "batch"))
    tf.distribute.experimental.shard(v, P(None, "batch"))
    assert v._value.sharding.spec == P(None, "batch")


def test_input_context_and_tf_config(monkeypatch):
    ctx = tf.distribute.InputContext(2, 1, 8)
    assert ctx.get_per_replica_batch_size(64) == 8
    with pytest.raises(ValueError, match="multiple of 8"):
        ctx.get_per_replica_batch_size(12)
    from tapejax.distribute import _tf_config_cluster
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"chief": ["a:1"], "worker": ["b:2", "c:3"]},
                                                "task": {"type": "worker", "index": 1}}))
    assert _tf_config_cluster() == ("a:1", 3, 2)
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG must be JSON"):
        _tf_config_cluster()


def test_distributed_dataset_uneven_last_batch():
    strategy = tf.distribute.MirroredStrategy()
    ds = tf.data.Dataset.from_tensor_slices((np.arange(5.0, dtype=np.float32), np.arange(5))).batch(2)
    batches = list(strategy.experimental_distribute_dataset(ds))
    assert [tuple(b[0].shape) for b in batches] == [(2,), (2,), (1,)]
    assert batches[0][1].dtype == tf.int64  # numpy int64 stays int64, as in TF


def test_iterating_a_distributed_dataset_in_a_function_warns_as_tensorflow():
    """custom_training tutorial cell 18: TF 2.21 warns (UserWarning) that it reads the dataset's
    options in graph mode when a tf.function iterates a distributed dataset; eagerly it does not."""
    import warnings
    strategy = tf.distribute.MirroredStrategy()
    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.range(4).batch(2))

    @tf.function
    def total(d):
        t = tf.constant(0, tf.int64)
        for x in d:
            t += tf.reduce_sum(x)
        return t

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        list(dist)
        assert not caught
        assert int(total(dist)) == 6
    assert [type(w.message) for w in caught] == [UserWarning]
    assert str(caught[0].message).startswith(
        "To make it possible to preserve tf.data options across serialization boundaries, their "
        "implementation has moved to be part of the TensorFlow graph.")
