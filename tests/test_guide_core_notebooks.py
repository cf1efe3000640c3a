"""What TensorFlow 2.21 prints in the core guides (site/en/guide/core/*_core.ipynb) and the
"Random number generation" guide, where tapejax printed something else.

Expected strings and numbers were recorded from TensorFlow 2.21 (CPU) running the same code.
"""
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import tapejax as tf
from tapejax import distribute as _distribute

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_MIRRORED_EAGER = (
    "Using MirroredStrategy eagerly has significant overhead currently. We will be working on "
    "improving this in the future, but for now please wrap `call_for_each_replica` or "
    "`experimental_run` or `run` inside a tf.function to get the best performance.")


def _run_fresh(code):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    env.pop("XLA_FLAGS", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


@pytest.mark.parametrize("seed_call", ["tf.random.set_seed(42)", "tf.keras.utils.set_random_seed(42)"])
def test_set_seed_before_virtual_devices(seed_call):
    # random_numbers.ipynb with a seed after the import: TF's set_seed touches no device, so the
    # CPU can still be split into three logical devices (tapejax raised: backends started).
    out = _run_fresh(f"""
import tapejax as tf
{seed_call}
physical_devices = tf.config.list_physical_devices("CPU")
tf.config.experimental.set_virtual_device_configuration(
    physical_devices[0], [tf.config.experimental.VirtualDeviceConfiguration()] * 3)
print(len(tf.config.list_logical_devices("CPU")))
print(tf.random.uniform([2]))
""")
    assert out == "3\ntf.Tensor([0.6645621  0.44100678], shape=(2,), dtype=float32)\n"


def test_mirrored_strategy_eager_run_warns_the_first_five_times(caplog, monkeypatch):
    monkeypatch.setattr(_distribute, "_EAGER_RUN_WARNINGS", [0])
    strategy = tf.distribute.MirroredStrategy(["cpu:0"])

    def warnings_during(call):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            call()
        return [r.getMessage() for r in caplog.records if r.name == "tensorflow"]

    assert warnings_during(lambda: strategy.run(lambda: tf.constant(1.0))) == [_MIRRORED_EAGER]
    # A tf.function, strategy.run inside one, and the other strategies: no warning (as in TF).
    def one():
        return tf.constant(1.0)

    assert warnings_during(lambda: strategy.run(tf.function(one))) == []
    assert warnings_during(tf.function(lambda: strategy.run(one))) == []
    assert warnings_during(lambda: tf.distribute.OneDeviceStrategy("cpu:0").run(lambda: tf.constant(1.0))) == []
    assert warnings_during(lambda: tf.distribute.get_strategy().run(lambda: tf.constant(1.0))) == []
    counts = [len(warnings_during(lambda: strategy.run(lambda: tf.constant(1.0)))) for _ in range(6)]
    assert counts == [1, 1, 1, 1, 0, 0]


def test_seeded_random_ops_in_a_function_are_graph_ops():
    # mlp_core.ipynb builds its layers inside a tf.function: in a graph each random op has its
    # own kernel, starting at its seeds (three xavier_init(seed=22) weights start alike), an
    # op given no seed gets the graph's op seed 0, 1, ..., and each call moves every op on.
    tf.random.set_seed(22)
    vs = []

    @tf.function
    def f():
        if not vs:
            vs.append(tf.Variable(tf.random.uniform([2, 3], seed=22)))
            vs.append(tf.Variable(tf.random.uniform([3], seed=22)))
            vs.append(tf.Variable(tf.random.uniform([2], seed=5)))
            vs.append(tf.Variable(tf.random.uniform([2])))
        return vs[0] + 1.0

    f()
    # Bit patterns of the float32 values TensorFlow made (uniform draws are bit-identical).
    assert [v.numpy().ravel().view(np.uint32).tolist() for v in vs] == [
        [1034823264, 1058608990, 1064322788, 1050628896, 1057907952, 1064006920],
        [1034823264, 1058608990, 1064322788],
        [1062749532, 1050409480],
        [1031109312, 1059032446]]
    np.testing.assert_array_equal(vs[1].numpy(), np.array([0.08503413, 0.5980128, 0.9385817], np.float32))

    @tf.function
    def g():
        return tf.random.uniform([2], seed=22), tf.random.uniform([2], seed=22), tf.random.uniform([2])

    assert [t.numpy().view(np.uint32).tolist() for t in g()] == [
        [1034823264, 1058608990], [1034823264, 1058608990], [1031109312, 1059032446]]
    assert [t.numpy().view(np.uint32).tolist() for t in g()] == [
        [1042224688, 1054078824], [1042224688, 1054078824], [1041175992, 1058866600]]
    # Eager ops keep their own kernels and op-seed sequence: the graph ops took none of it.
    assert tf.random.uniform([2]).numpy().view(np.uint32).tolist() == [1055633080, 1063692296]


def test_set_seed_starts_traced_random_ops_again_with_their_traced_seeds():
    tf.random.set_seed(3)

    @tf.function
    def f():
        return tf.random.normal([3])

    @tf.function
    def g():
        return tf.random.normal([3], seed=1)

    f_first, g_first = f().numpy(), g().numpy()
    np.testing.assert_allclose(f_first, [-1.864718, 0.802645, -0.44321716], rtol=1e-6)
    np.testing.assert_allclose(f().numpy(), [0.00829498, 1.1544195, 1.6332208], rtol=1e-6)
    np.testing.assert_allclose(g_first, [-0.02353588, -0.7080437, 0.7906703], rtol=1e-6)
    np.testing.assert_allclose(g().numpy(), [0.5215358, 2.0299118, -0.78256524], rtol=1e-6)
    tf.random.set_seed(4)   # the kernels start again, with the global seed they were traced with
    np.testing.assert_array_equal(g().numpy(), g_first)
    np.testing.assert_array_equal(f().numpy(), f_first)


def test_saved_model_of_a_function_whose_unknown_sizes_meet_known_ones(tmp_path):
    # logistic_regression_core.ipynb exports `(x - mean) / std` with
    # input_signature=[TensorSpec([None, None])] and a mean of 30 numbers; mlp_core.ipynb exports
    # `tf.reshape(x, [-1, 784])` of a TensorSpec([None, None, None, None], tf.uint8) image batch.
    # TF saves both and runs them on [n, 30] / [n, 28, 28, 1] inputs (tapejax could not trace them).
    class Normalize(tf.Module):
        def __init__(self):
            self.mean = tf.Variable(tf.range(30, dtype=tf.float32))

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
        def __call__(self, x):
            return x - self.mean

    class Flatten(tf.Module):
        def __init__(self):
            self.w = tf.Variable(tf.ones([784, 3]))

        @tf.function(input_signature=[tf.TensorSpec([None, None, None, None], tf.uint8)])
        def __call__(self, x):
            return tf.matmul(tf.reshape(x, [-1, 784]) / 255, self.w)

    tf.saved_model.save(Normalize(), str(tmp_path / "norm"))
    tf.saved_model.save(Flatten(), str(tmp_path / "flat"))
    norm, flat = tf.saved_model.load(str(tmp_path / "norm")), tf.saved_model.load(str(tmp_path / "flat"))
    out = norm(tf.ones([4, 30]))
    assert out.shape == (4, 30)
    np.testing.assert_array_equal(out.numpy()[:2, :3], [[1., 0., -1.], [1., 0., -1.]])
    assert norm(tf.ones([1, 30])).shape == (1, 30)
    out = flat(tf.constant(np.full((5, 28, 28, 1), 255, np.uint8)))
    assert out.shape == (5, 3)
    np.testing.assert_array_equal(out.numpy()[:2], [[784., 784., 784.], [784., 784., 784.]])
    assert flat(tf.constant(np.full((1, 28, 28, 1), 255, np.uint8))).shape == (1, 3)
    # Sizes the body cannot take are refused (TF: InvalidArgumentError when it runs).
    with pytest.raises(ValueError, match="fixed sizes"):
        norm(tf.ones([4, 31]))


def test_saved_model_of_a_matmul_of_unknown_features(tmp_path):
    # An export module calling a model's tf.matmul(x, w) first, x: TensorSpec([None, None]), w: [30, 2].
    class Model(tf.Module):
        def __init__(self):
            self.w = tf.Variable(tf.ones([30, 2]))

        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
        def __call__(self, x):
            return tf.matmul(x, self.w)

    tf.saved_model.save(Model(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    np.testing.assert_array_equal(loaded(tf.ones([4, 30])).numpy()[:1], [[30., 30.]])   # TF 2.21's


def test_nn_dropout_draws_tensorflows_mask():
    # tf.nn.dropout ignored `seed` and drew a float32 mask; TF draws
    # tf.random.uniform(noise_shape, seed=seed, dtype=x.dtype) >= rate (values from TF 2.21).
    tf.random.set_seed(1)
    assert tf.nn.dropout(tf.ones([8]), 0.5, seed=3).numpy().tolist() == [2, 2, 2, 0, 2, 0, 2, 2]
    assert tf.nn.dropout(tf.ones([8]), 0.5, seed=3).numpy().tolist() == [2, 0, 2, 0, 2, 0, 0, 0]
    assert tf.nn.dropout(tf.ones([8]), 0.5).numpy().tolist() == [0, 2, 2, 0, 0, 2, 2, 0]
    tf.random.set_seed(1)
    x = tf.ones([8])
    assert tf.nn.dropout(x, 0.0) is x        # rate 0: x itself, and an op seed is used up
    assert tf.nn.dropout(tf.ones([8]), 0.5).numpy().tolist() == [2, 0, 0, 2, 2, 0, 0, 2]
    assert tf.nn.dropout(tf.ones([2, 3]), 0.5, noise_shape=[2, 1], seed=4).numpy().tolist() == [[0, 0, 0]] * 2
    out = tf.nn.dropout(tf.ones([4], tf.float64), 0.25, seed=4)
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(out.numpy(), [0, 4 / 3, 4 / 3, 0])
    tf.random.set_seed(1)
    assert tf.nn.dropout(tf.constant([1.0, 2.0, 3.0, 4.0]), tf.constant(0.5), seed=2).numpy().tolist() == [0, 4, 0, 0]
    with pytest.raises(ValueError, match="must be a floating point tensor"):
        tf.nn.dropout(tf.constant([1, 2]), 0.5)
