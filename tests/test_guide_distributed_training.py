"""Behaviours found by running TensorFlow's distributed_training guide cell by cell under TF 2.21
and tapejax on a machine without GPUs. Expected values and messages are TF 2.21's, recorded with
/tmp/tf/bin/python."""
import jax
import pytest

import tapejax as tf


def test_default_strategy_reduce_without_axis_returns_the_value():
    # guide cell 9: strategy.reduce("SUM", 1., axis=None) is 1.0 (a Python float, not a Tensor)
    default = tf.distribute.get_strategy()
    out = default.reduce("SUM", 1., axis=None)
    assert type(out) is float and out == 1.0
    assert default.reduce("MEAN", [1.0, 3.0], axis=None) == [1.0, 3.0]
    t = tf.constant([1.0, 3.0])
    assert default.reduce("SUM", t, axis=None) is t
    assert float(default.reduce("SUM", t, axis=0)) == 4.0


def test_mirrored_reduce_of_data_that_is_not_per_replica():
    # TF: the MEAN of the same value on every replica is the value itself; a one-replica SUM a Tensor
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    assert strategy.reduce("MEAN", 2.0, axis=None) == 2.0
    out = strategy.reduce("SUM", 1.0, axis=None)
    assert isinstance(out, tf.Tensor) and float(out) == 1.0


def test_cross_device_ops():
    # guide cell 4: MirroredStrategy(cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
    for ops in (tf.distribute.HierarchicalCopyAllReduce(), tf.distribute.NcclAllReduce(),
                tf.distribute.ReductionToOneDevice()):
        assert isinstance(ops, tf.distribute.CrossDeviceOps)
        assert tf.distribute.MirroredStrategy(cross_device_ops=ops).num_replicas_in_sync >= 1
    with pytest.raises(ValueError) as e:
        tf.distribute.HierarchicalCopyAllReduce(-1)
    assert str(e.value) == "HierarchicalCopy requires num_packs >= 0, but -1 is specified"
    with pytest.raises(ValueError) as e:
        tf.distribute.NcclAllReduce(num_packs=-2)
    assert str(e.value) == "NCCL all-reduce requires num_packs >= 0, but -2 is specified"


def test_central_storage_strategy():
    # guide cell 7: on a machine without GPUs one replica, on the CPU; variables are plain
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    assert strategy.num_replicas_in_sync == 1
    assert strategy.extended.worker_devices == ("/job:localhost/replica:0/task:0/device:CPU:0",)
    with strategy.scope():
        v = tf.Variable(1.0)
    assert repr(v) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"
    assert type(v).__name__ == "ResourceVariable"


def test_multi_worker_mirrored_strategy_warnings_for_local_training(caplog):
    # guide cells 5-6: TF 2.21 warns that collectives were not configured at startup (the runtime
    # was running already), and that NCCL was asked for without GPUs.
    tf.constant(1.0)  # the runtime is running
    tf.distribute.MultiWorkerMirroredStrategy()
    assert caplog.messages == ["Collective ops is not configured at program startup. Some performance "
                               "features may not be enabled."]
    caplog.clear()
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.NCCL)
    tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    if any(d.platform == "gpu" for d in jax.local_devices()):
        return
    assert caplog.messages[1:] == ["Enabled NCCL communication but no GPUs detected/specified."]


def test_mirrored_strategy_of_no_devices_uses_every_local_device():
    # gpu guide cell 10: MirroredStrategy(tf.config.list_logical_devices('GPU')) on a machine
    # without GPUs is TF's MirroredStrategy() (its devices or all_local_devices())
    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("GPU") if not any(
        d.platform == "gpu" for d in jax.local_devices()) else [])
    assert strategy.num_replicas_in_sync == len(jax.local_devices())
    assert tf.distribute.MirroredStrategy(devices=[]).num_replicas_in_sync == len(jax.local_devices())
