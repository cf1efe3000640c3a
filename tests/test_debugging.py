"""tf.debugging assertions: TensorFlow 2.21's messages eagerly, and they fire inside tf.function."""
import numpy as np
import pytest

import tapejax as tf
from tapejax.errors import InvalidArgumentError

X, Y = tf.constant([1, 2]), tf.constant([1, 3])

# Messages recorded from TensorFlow 2.21 (eager).
EAGER = [
    (lambda: tf.debugging.assert_equal(X, Y),
     "Condition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\nCorresponding x values:\n[2]\n"
     "Corresponding y values:\n[3]\nFirst 2 elements of x:\n[1 2]\nFirst 2 elements of y:\n[1 3]"),
    (lambda: tf.debugging.assert_equal(X, Y, message="msg"),
     "msg\nCondition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\nCorresponding x values:\n"
     "[2]\nCorresponding y values:\n[3]\nFirst 2 elements of x:\n[1 2]\nFirst 2 elements of y:\n[1 3]"),
    (lambda: tf.debugging.assert_greater(X, Y),
     "Condition x > y did not hold.\nIndices of first 2 different values:\n[[0]\n [1]]\nCorresponding x values:\n"
     "[1 2]\nCorresponding y values:\n[1 3]\nFirst 2 elements of x:\n[1 2]\nFirst 2 elements of y:\n[1 3]"),
    (lambda: tf.debugging.assert_less(X, Y),
     "Condition x < y did not hold.\nIndices of first 1 different values:\n[[0]]\nCorresponding x values:\n[1]\n"
     "Corresponding y values:\n[1]\nFirst 2 elements of x:\n[1 2]\nFirst 2 elements of y:\n[1 3]"),
    (lambda: tf.debugging.assert_non_negative(tf.constant([-1., 2.])),
     "\nCondition x >= 0 did not hold element-wise:\nx (shape=(2,) dtype=float32) = \n['-1.0', '2.0']"),
    (lambda: tf.debugging.assert_positive(tf.constant([-1., 2.])),
     "\nCondition x > 0 did not hold element-wise:\nx (shape=(2,) dtype=float32) = \n['-1.0', '2.0']"),
    (lambda: tf.debugging.check_numerics(tf.constant([1., float("inf")]), "bad"), "bad : Tensor had Inf values"),
    (lambda: tf.debugging.Assert(False, [tf.constant([1., -1.])]),
     "Expected 'False' to be true. Summarized data: 1.0, -1.0"),
    (lambda: tf.debugging.assert_near(tf.constant([1.]), tf.constant([1.1])),
     "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b''\nb'x and y not equal to "
     "tolerance rtol = tf.Tensor(1.1920929e-06, shape=(), dtype=float32), atol = tf.Tensor(1.1920929e-06, shape=(), "
     "dtype=float32)'\nb'x (shape=(1,) dtype=float32) = '\n1.0\nb'y (shape=(1,) dtype=float32) = '\n1.1"),
]


@pytest.mark.parametrize("call, message", EAGER)
def test_eager_messages_are_tensorflows(call, message):
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert str(info.value) == message


def test_passing_assertions_return_none():
    assert tf.debugging.assert_equal(X, X) is None
    assert tf.debugging.assert_less(X, Y + 1) is None
    assert tf.debugging.assert_non_negative(tf.constant([0., 2.])) is None
    t = tf.constant([1.0])
    assert tf.debugging.check_numerics(t, "ok") is t


def _fn(check):
    @tf.function
    def f(a):
        check(a)
        return tf.sqrt(tf.abs(a) + 1.0)
    return f


# Recorded from TensorFlow 2.21 inside tf.function ("Graph execution error: ... assertion failed: ...");
# TF's graph tensor names ("x (a:0) = ") become "x = ".
IN_FUNCTION = [
    (lambda a: tf.debugging.assert_equal(a, tf.constant([1., 3.])), [1., 2.], [1., 3.],
     "assertion failed: [Condition x == y did not hold element-wise:] [x = ] [1 2] [y = ] [1 3]"),
    (lambda a: tf.debugging.assert_greater(a, tf.constant([1., 3.]), message="msg"), [1., 2.], [2., 4.],
     "assertion failed: [msg] [Condition x > y did not hold element-wise:] [x = ] [1 2] [y = ] [1 3]"),
    (lambda a: tf.debugging.assert_non_negative(a), -1.0, 0.0,
     "assertion failed: [] [Condition x >= 0 did not hold element-wise:] [x = ] [-1]"),
    (lambda a: tf.debugging.check_numerics(tf.math.log(a), "bad"), [1., -1.], [1., 2.],
     "bad : Tensor had NaN values"),
    (lambda a: tf.debugging.Assert(tf.reduce_all(a > 0), [a]), [1., -1.], [1., 1.5], "assertion failed: [1 -1]"),
]


@pytest.mark.parametrize("check, bad, good, message", IN_FUNCTION)
def test_assertions_fire_inside_tf_function(check, bad, good, message):
    f = _fn(check)
    with pytest.raises(InvalidArgumentError) as info:
        f(tf.constant(bad))
    assert str(info.value) == message
    good = np.asarray(good, np.float32)
    np.testing.assert_allclose(f(tf.constant(good)).numpy(), np.sqrt(np.abs(good) + 1.0))
    with pytest.raises(InvalidArgumentError):   # the compiled program checks on every call
        f(tf.constant(bad))


def test_assertion_inside_a_function_under_a_tape():
    f = _fn(lambda a: tf.debugging.assert_positive(a))
    x = tf.Variable([1.0, 4.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(f(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 0.5 / np.sqrt(np.array([2.0, 5.0])), rtol=1e-6)
    x.assign([1.0, -4.0])
    with pytest.raises(InvalidArgumentError, match="x > 0"):
        with tf.GradientTape() as tape:
            f(x)


def test_failed_assertion_in_a_function_loses_no_variable():
    # The run that fails is discarded: the Variables it updates keep the values they had (their
    # buffers were deleted, given to the failed program, before), and later calls work.
    # (TensorFlow commits the updates made before the assertion: here v would be [-3, 4].)
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        v.assign_add(x)
        tf.debugging.assert_positive(v)
        return v * 2

    np.testing.assert_array_equal(f(tf.constant([1.0, 1.0])).numpy(), [4.0, 6.0])
    with pytest.raises(InvalidArgumentError, match="x > 0"):
        f(tf.constant([-5.0, 1.0]))
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(f(tf.constant([1.0, 1.0])).numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])


def test_only_programs_that_may_fail_keep_the_variables_buffers():
    # A program with a check that may raise does not take the Variables' buffers (nothing to
    # copy: it writes new ones); one that only prints (tf.print cannot fail) is given the
    # buffers themselves, as any other step.
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def printing(x):
        v.assign_add(x)
        tf.print(v)
        return v * 2

    @tf.function
    def checking(x):
        v.assign_add(x)
        tf.debugging.assert_positive(v)
        return v * 2

    for f, kept in ((printing, False), (checking, True)):
        f(tf.constant([1.0, 1.0]))
        f(tf.constant([1.0, 1.0]))   # v's buffer is the last call's output: donated unless it may fail
        before = v._stored
        f(tf.constant([1.0, 1.0]))
        assert before.is_deleted() != kept, f.__name__


def test_failed_assertion_does_not_fail_later_programs():
    # On an accelerator a failed run leaves JAX's order of effects failed: every later program
    # with effects, and jax.effects_barrier, would raise the old error.
    import jax
    f = _fn(lambda a: tf.debugging.assert_positive(a))
    with pytest.raises(InvalidArgumentError):
        f(tf.constant([-1.0]))
    jax.effects_barrier()
    np.testing.assert_allclose(f(tf.constant([3.0])).numpy(), [2.0])


def test_static_checks():
    with pytest.raises(ValueError, match=r"Tensor  must have rank 2.  Received rank 1, shape \(2,\)"):
        tf.debugging.assert_rank(X, 2)
    with pytest.raises(ValueError, match="must have rank 2"):
        tf.debugging.assert_shapes([(X, ("N", 3))])
    with pytest.raises(ValueError, match="dimension 0 must have size 2"):
        tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N", 3)), (tf.zeros([4]), ("N",))])
    tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N", 3)), (tf.zeros([2]), ("N",))])
    with pytest.raises(TypeError):
        tf.debugging.assert_type(X, tf.float32)
