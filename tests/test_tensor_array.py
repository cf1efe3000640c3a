"""tf.TensorArray: eager, in tf.function, as a tf.while_loop carry, gradients vs jax.grad, errors.

Expected values and error classes/messages are TensorFlow 2.21's (tensor_array_ops.py and its
docstring examples)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def test_eager_write_read_stack_as_tf_docstring():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, 10)
    ta = ta.write(1, 20)
    ta = ta.write(2, 30)
    assert repr(ta.read(0)) == "<tf.Tensor: shape=(), dtype=float32, numpy=10.0>"
    assert repr(ta.read(2)) == "<tf.Tensor: shape=(), dtype=float32, numpy=30.0>"
    np.testing.assert_array_equal(ta.stack().numpy(), [10., 20., 30.])
    assert ta.size().numpy() == 3 and ta.size().dtype == tf.int32
    assert ta.dtype == tf.float32 and ta.element_shape == tf.TensorShape([])


def test_unwritten_index_reads_zeros_of_the_element_shape():
    ta = tf.TensorArray(tf.float32, size=3).write(1, [1.0, 2.0])
    np.testing.assert_array_equal(ta.stack().numpy(), [[0, 0], [1, 2], [0, 0]])
    with pytest.raises(ValueError, match="element shape is not fully defined"):
        tf.TensorArray(tf.float32, size=2).read(0)


def test_clear_after_read():
    ta = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
    assert ta.read(0).numpy() == 1.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not read index 0 twice"):
        ta.read(0)
    keep = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, 1.0)
    assert keep.read(0).numpy() == keep.read(0).numpy() == 1.0


def test_errors_as_tensorflow():
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(tf.errors.OutOfRangeError, match="Tried to write to index 2 but array is not resizeable"):
        ta.write(2, 1.0)
    with pytest.raises(tf.errors.OutOfRangeError, match="Writing to negative indices"):
        ta.write(-1, 1.0)
    with pytest.raises(tf.errors.OutOfRangeError, match="Tried to read from index 5 but array size is: 2"):
        ta.read(5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="TensorArray dtype is float32 but Op is trying to write dtype int32"):
        ta.write(0, tf.constant(1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="TensorArray dtype is int32 but Op is trying to write dtype float32"):
        tf.TensorArray(tf.int32, size=1).write(0, 1.5)      # no silent truncation to 1
    ta = ta.write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match="Incompatible shape for value"):
        ta.write(1, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Size must be declared"):
        tf.TensorArray(tf.float32)
    with pytest.raises(ValueError, match="Cannot unstack 3 tensors into a TensorArray of static size 2"):
        tf.TensorArray(tf.float32, size=2).unstack([1., 2., 3.])


def test_unstack_scatter_gather_concat_split():
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack([[1., 2.], [3., 4.], [5., 6.]])
    np.testing.assert_array_equal(ta.gather([2, 0]).numpy(), [[5, 6], [1, 2]])
    np.testing.assert_array_equal(ta.concat().numpy(), [1, 2, 3, 4, 5, 6])
    ta = tf.TensorArray(tf.int32, size=4).scatter([3, 1], tf.constant([[7], [8]]))
    np.testing.assert_array_equal(ta.stack().numpy(), [[0], [8], [0], [7]])
    ta = tf.TensorArray(tf.float32, size=2).split(tf.constant([1., 2., 3.]), [1, 2])
    np.testing.assert_array_equal(ta.concat().numpy(), [1, 2, 3])
    np.testing.assert_array_equal(ta.read(1).numpy(), [2, 3])


def test_tf_function_python_loop_fibonacci():
    @tf.function
    def fibonacci(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        ta = ta.unstack([0., 1.])
        for i in range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()
    np.testing.assert_array_equal(fibonacci(7).numpy(), [0., 1., 1., 2., 3., 5., 8.])


def _rnn(element_shape):
    @tf.function
    def dynamic_rnn(input_data, initial_state):
        input_data = tf.transpose(input_data, [1, 0, 2])
        n = input_data.shape[0]
        states = tf.TensorArray(tf.float32, size=n, element_shape=element_shape)

        def body(i, state, states):
            state = input_data[i] + state
            return i + 1, state, states.write(i, state)
        _, _, states = tf.while_loop(lambda i, s, ta: i < n, body, (tf.constant(0), initial_state, states))
        return tf.transpose(states.stack(), [1, 0, 2])
    return dynamic_rnn


@pytest.mark.parametrize("element_shape", [[2, 4], None], ids=["given", "inferred"])
def test_while_loop_carry_inside_tf_function(element_shape):
    # The guide's dynamic_rnn written with tf.while_loop; without element_shape the loop
    # learns it from the body's first write.
    x = np.random.RandomState(0).rand(2, 3, 4).astype(np.float32)
    f = _rnn(element_shape)
    np.testing.assert_allclose(f(tf.constant(x), tf.zeros([2, 4])).numpy(), np.cumsum(x, axis=1), rtol=1e-6)
    f(tf.constant(x + 1), tf.zeros([2, 4]))
    assert f.experimental_get_tracing_count() == 1


def test_eager_while_loop_carry():
    ta = tf.TensorArray(tf.int32, size=4)
    _, ta = tf.while_loop(lambda i, ta: i < 4, lambda i, ta: (i + 1, ta.write(i, i * i)), (tf.constant(0), ta))
    np.testing.assert_array_equal(ta.stack().numpy(), [0, 1, 4, 9])


def test_gradient_eager_matches_jax_grad():
    xv = np.array([0.5, -1.0, 2.0], np.float32)
    x = tf.Variable(xv)
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
        for i in range(3):
            ta = ta.write(i, tf.sin(x[i]) * x[i])
        y = tf.reduce_sum(ta.stack() ** 2) + ta.read(1) * 3.0
    oracle = jax.grad(lambda v: jnp.sum((jnp.sin(v) * v) ** 2) + 3.0 * jnp.sin(v[1]) * v[1])(xv)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), oracle, rtol=1e-5)


def test_gradient_through_compiled_loop_matches_jax_grad():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=3)
        _, ta = tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, x[i] ** 3)),
                              (tf.constant(0), ta), maximum_iterations=3)
        return tf.reduce_sum(ta.stack() * tf.constant([1., 2., 3.]))
    xv = np.array([1.0, 2.0, -1.5], np.float32)
    x = tf.Variable(xv)
    with tf.GradientTape() as tape:
        y = f(x)
    oracle = jax.grad(lambda v: jnp.sum(v ** 3 * jnp.array([1., 2., 3.])))(xv)
    np.testing.assert_allclose(y.numpy(), np.sum(xv ** 3 * [1, 2, 3]), rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), oracle, rtol=1e-5)


def test_traced_index_out_of_range_raises_at_run_time():
    @tf.function
    def f(n):
        ta = tf.TensorArray(tf.float32, size=2)
        _, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, 1.0)), (tf.constant(0), ta))
        return ta.stack()
    np.testing.assert_array_equal(f(tf.constant(2)).numpy(), [1., 1.])
    # TensorFlow 2.21: InvalidArgumentError "... Trying to modify element 2 in a list with 2 elements."
    with pytest.raises(tf.errors.InvalidArgumentError, match="Trying to modify element 2 in a list with 2 elements"):
        f(tf.constant(3)).numpy()


def test_dynamic_size_at_traced_index_asks_for_a_size():
    @tf.function
    def f(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        _, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, 1.0)), (tf.constant(0), ta))
        return ta.stack()
    with pytest.raises(ValueError, match="preallocates"):
        f(tf.constant(3))


def test_dynamic_size_grows_at_the_counter_of_a_known_range():
    # Recorded from TF 2.21: a dynamic array written at the counter of tf.range with known bounds
    # (Python ints, tf.shape of a static shape) ends with the counter's last value + 1 elements.
    @tf.function
    def offset():
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(2, 5):
            ta = ta.write(i, tf.cast(i, tf.float32))
        return ta.stack()

    @tf.function
    def by_shape(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(tf.shape(x)[0]):
            ta = ta.write(i, x[i] + 1)
        return ta.stack(), ta.size()

    @tf.function
    def nested():
        outer = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        for i in tf.range(3):
            inner = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
            for j in tf.range(2):
                inner = inner.write(j, i * 10 + j)
            outer = outer.write(i, inner.stack())
        return outer.stack()

    @tf.function
    def reads_back():
        ta = tf.TensorArray(tf.float32, size=1, dynamic_size=True, element_shape=[])
        ta = ta.write(0, 5.0)
        for i in tf.range(1, 4):
            ta = ta.write(i, ta.read(i - 1) * 2)
        return ta.stack()

    np.testing.assert_array_equal(offset().numpy(), [0., 0., 2., 3., 4.])
    stacked, size = by_shape(tf.constant([[1., 2.], [3., 4.], [5., 6.]]))
    np.testing.assert_array_equal(stacked.numpy(), [[2., 3.], [4., 5.], [6., 7.]])
    assert int(size) == 3
    np.testing.assert_array_equal(nested().numpy(), [[0, 1], [10, 11], [20, 21]])
    np.testing.assert_array_equal(reads_back().numpy(), [5., 10., 20., 40.])


def test_size_from_a_static_shape():
    @tf.function
    def double(x):
        ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0])
        for i in tf.range(tf.shape(x)[0]):
            ta = ta.write(i, x[i] * 2)
        return ta.stack()
    np.testing.assert_array_equal(double(tf.constant([1., 2., 3.])).numpy(), [2., 4., 6.])


def test_traced_size_is_rejected_with_a_fix():
    @tf.function
    def f(x):
        return tf.TensorArray(tf.float32, size=tf.shape(x)[0] + x[0]).stack()
    with pytest.raises(ValueError, match="static size"):
        f(tf.constant([1, 2]))


def test_is_a_pytree():
    ta = tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0])
    leaves, tree = jax.tree_util.tree_flatten(ta)
    assert len(leaves) == 1 and leaves[0].shape == (2, 2)
    back = jax.tree_util.tree_unflatten(tree, leaves)
    np.testing.assert_array_equal(back.stack().numpy(), [[1, 2], [0, 0]])


def test_a_zero_delta_range_raises_tensorflows_error():
    # TF 2.21: tf.range(0, 4, 0) raises "Requires delta != 0" (InvalidArgumentError eagerly, also as
    # the iterable of a loop in tf.function); tapejax raised OverflowError from the size computation.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires delta != 0"):
        tf.range(0, 4, 0)

    @tf.function
    def f():
        total = tf.constant(0)
        for i in tf.range(0, 4, 0):
            total += i
        return total
    with pytest.raises(Exception, match="Requires delta != 0"):
        f()
