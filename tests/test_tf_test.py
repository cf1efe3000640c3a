"""tf.test: TestCase's assertions, compute_gradient and the build queries, against TF 2.21's
recorded behaviour (the tf.test docstrings)."""
import platform
import unittest

import numpy as np
import pytest

import tapejax as tf


@tf.function
def square(x):
    return x * x


def test_compute_gradient_as_tf():
    # TF 2.21's values (delta 1/1024, central differences; Jacobians of shape (y size, x size)).
    assert repr(tf.test.compute_gradient(square, [1.0])) == (
        "((array([[2.]], dtype=float32),), (array([[2.]], dtype=float32),))")
    theoretical, numeric = tf.test.compute_gradient(lambda x, y: tf.reduce_sum(x * y, axis=0),
                                                    [[[1.0, 2.0], [3.0, 4.0]], [0.5, -1.0]])
    np.testing.assert_array_equal(theoretical[0], [[0.5, 0, 0.5, 0], [0, -1, 0, -1]])
    np.testing.assert_array_equal(theoretical[1], [[4, 0], [0, 6]])
    np.testing.assert_array_equal(numeric[0], [[0.5, 0, 0.5, 0], [0, -1, 0, -1]])
    theoretical, numeric = tf.test.compute_gradient(lambda x: x ** 3, [np.array([1.5, 2.0])])
    assert theoretical[0].dtype == np.float64
    np.testing.assert_allclose(numeric[0], [[6.75000095, 0], [0, 12.00000095]], rtol=1e-8)
    with pytest.raises(ValueError, match=r"^`x` must be a list or tuple of values convertible to a Tensor "
                                         r"\(arguments to `f`\), not a <class 'float'>$"):
        tf.test.compute_gradient(square, 1.0)


class _Cases(tf.test.TestCase):
    __test__ = False   # run by the tests below, some meant to fail

    def test_passes(self):
        self.assertAllClose({'a': [1.0, 2.0], 'b': (3, tf.constant(4.0))},
                            {'a': tf.constant([1.0, 2.0 + 1e-7]), 'b': (3, 4.0)})
        self.assertAllEqual(tf.constant([[1, 2]]), [[1, 2]])
        self.assertAllInRange(tf.constant([1.0, 2.0]), 1.0, 2.0)
        self.assertShapeEqual(np.zeros([2, 3]), tf.zeros([2, 3]))
        self.assertDTypeEqual(tf.constant([1]), np.int32)
        self.assertAllLess(tf.constant([1, 2]), 3)
        self.assertNotAllClose([1.0], [1.1])
        self.assertEqual(self.evaluate({'x': tf.constant(2.0)}), {'x': 2.0})
        # TF 2.21: each test starts from TensorFlow's default seed (87654321)
        np.testing.assert_allclose(tf.random.uniform([2]).numpy(), [0.5836375, 0.2972299], rtol=1e-6)
        assert np.random.rand() == 0.18463433217903202
        with self.assertRaisesOpError("must be"):
            tf.debugging.assert_equal(1, 2, message="must be")

    def test_fail_close(self):
        self.assertAllClose([1.0, 2.0], [1.0, 2.1])

    def test_fail_equal(self):
        self.assertAllEqual([1, 2], [1, 3])

    def test_fail_range(self):
        self.assertAllInRange([1.0, 5.0], 0.0, 2.0)

    def test_fail_dict(self):
        self.assertAllClose({'a': 1.0}, [1.0])


def _run(name):
    return _Cases(name).run(unittest.TestResult())


def test_test_case_assertions_pass_and_fail_as_tf():
    result = _run("test_passes")
    assert result.wasSuccessful(), result.errors + result.failures
    for name, last in [("test_fail_close", " DESIRED: array([1. , 2.1])"),
                       ("test_fail_equal", " DESIRED: array([1, 3])"),
                       ("test_fail_range", "  [1] : 5.0")]:
        result = _run(name)
        assert len(result.failures) == 1 and result.failures[0][1].splitlines()[-1] == last
    result = _run("test_fail_dict")
    assert result.errors[0][1].splitlines()[-1] == "ValueError: Can't compare dict to non-dict, a vs b. "


def test_build_queries():
    assert tf.test.is_built_with_xla() is True
    assert tf.test.is_built_with_gpu_support() == (tf.test.is_built_with_cuda() or tf.test.is_built_with_rocm())
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    assert [tf.test.is_cpu_target_available(t) for t in ("x86", "x86-64", "x86_64")] == [x86] * 3
    assert [tf.test.is_cpu_target_available(t) for t in ("aarch64", "arm64", "arm")] == [not x86] * 3
    with pytest.raises(AssertionError, match="^Unknown CPU target: X86$"):
        tf.test.is_cpu_target_available("X86")
    gpus = tf.config.list_physical_devices('GPU')
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if gpus else "")
    assert tf.test.is_gpu_available() == bool(gpus) and tf.test.is_gpu_available(True, (3, 0)) == bool(gpus)
    tf.test.experimental.sync_devices()
