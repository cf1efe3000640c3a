"""tf.py_function / tf.numpy_function: eager, inside tf.function (run on every call), gradients, errors.

Expected values are TensorFlow 2.21's (script_ops.py docstring examples)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def log_huber(x, m):
    if tf.abs(x) <= m:
        return x**2
    else:
        return m**2 * (1 - 2 * tf.math.log(m) + tf.math.log(x**2))


def test_eager_calls_the_function_on_tensors():
    seen = []

    def f(a, b):
        seen.append((type(a), type(b)))
        return a * b
    out = tf.py_function(f, [tf.constant(2.0), 3.0], tf.float32)
    assert repr(out) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"
    assert seen == [(tf.Tensor, tf.Tensor)]
    assert tf.py_function(func=log_huber, inp=[tf.constant(1.0), tf.constant(2.0)], Tout=tf.float32).numpy() == 1.0


def test_decorator_and_list_outputs():
    @tf.py_function(Tout=[tf.float32, tf.int32])
    def split(x):
        return x * 2.0, tf.cast(x, tf.int32)
    a, b = split(tf.constant([1.5, 2.5]))
    np.testing.assert_array_equal(a.numpy(), [3.0, 5.0])
    assert b.dtype == tf.int32 and b.numpy().tolist() == [1, 2]


def test_eager_gradient_as_tf_docstring_and_jax_oracle():
    # TF's docstring: d/dx of x**2 at x=1 under a py_function decorator prints 2.0.
    @tf.py_function(Tout=tf.float32)
    def sq(x):
        return x ** 2
    x = tf.Variable(1.0)
    with tf.GradientTape() as t:
        y = sq(x)
    assert t.gradient(y, x).numpy() == 2.0
    xv = np.array([0.3, -2.0], np.float32)
    x = tf.Variable(xv)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.py_function(lambda a: tf.sin(a) * a, [x], tf.float32))
    np.testing.assert_allclose(t.gradient(y, x).numpy(), jax.grad(lambda v: jnp.sum(jnp.sin(v) * v))(xv), rtol=1e-6)


def test_inside_tf_function_runs_on_every_call_in_order():
    calls = []

    def record(x):
        calls.append(float(x.numpy()))
        return x + 1.0

    @tf.function
    def f(x):
        a = tf.py_function(record, [x], tf.TensorSpec([], tf.float32))
        b = tf.py_function(record, [a * 10.0], tf.TensorSpec([], tf.float32))
        return b
    assert f(tf.constant(1.0)).numpy() == 21.0
    assert f(tf.constant(2.0)).numpy() == 31.0
    assert calls == [1.0, 20.0, 2.0, 30.0]          # each call, in program order, never at trace
    assert f.experimental_get_tracing_count() == 1


def test_shapes_learned_at_trace_time_with_printing_muted(capsys):
    # The guide's py_plus: 'Executing eagerly.' once per call, although the shapes are learned.
    @tf.py_function(Tout=tf.float32)
    def py_plus(x, y):
        print('Executing eagerly.')
        return x + y

    @tf.function
    def tf_wrapper(x, y):
        print('Tracing.')
        return py_plus(x, y)
    assert tf_wrapper(tf.constant(1.0), tf.constant(2.0)).numpy() == 3.0
    assert tf_wrapper(tf.constant([1.0, 2.0]), tf.constant(2.0)).numpy().tolist() == [3.0, 4.0]
    jax.effects_barrier()
    assert capsys.readouterr().out.split() == ["Tracing.", "Executing", "eagerly.", "Tracing.", "Executing", "eagerly."]


def test_gradient_inside_tf_function_matches_jax():
    @tf.function
    def f(x):
        return tf.reduce_sum(tf.py_function(lambda a: a ** 3, [x], tf.float32) * 2.0)
    xv = np.array([1.0, -0.5, 2.0], np.float32)
    x = tf.Variable(xv)
    with tf.GradientTape() as t:
        y = f(x)
    np.testing.assert_allclose(y.numpy(), 2 * np.sum(xv ** 3), rtol=1e-6)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), jax.grad(lambda v: 2 * jnp.sum(v ** 3))(xv), rtol=1e-6)


def test_numpy_function_eager_and_in_tf_function_as_tf_docstring():
    seen = []

    def my_numpy_func(x):
        seen.append(type(x))
        return np.sinh(x)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def tf_function(input):
        y = tf.numpy_function(my_numpy_func, [input], tf.float32)
        return y * y
    assert repr(tf_function(tf.constant(1.))) == "<tf.Tensor: shape=(), dtype=float32, numpy=1.3810977935791016>"  # TF 2.21
    np.testing.assert_allclose(tf.numpy_function(my_numpy_func, [tf.constant([0.0, 1.0])], tf.float32).numpy(),
                               np.sinh([0.0, 1.0]).astype(np.float32), rtol=1e-6)
    # TF 2.21: a traced function's scalar argument is a NumPy scalar, an eager one's an array
    assert seen[-1] is np.ndarray and set(seen[:-1]) == {np.float32}


def test_numpy_function_in_a_dataset_map_gets_bytes_for_a_string_as_tf():
    # The tf.data.Dataset.map docstring (TF 2.21): a dataset function runs as a graph, so a
    # string scalar reaches the NumPy function as bytes.
    d = tf.data.Dataset.from_tensor_slices(["hello", "world"])
    d = d.map(lambda x: tf.numpy_function(func=lambda t: t.decode("utf-8").upper(), inp=[x], Tout=tf.string))
    assert list(d.as_numpy_iterator()) == [b"HELLO", b"WORLD"]
    seen = []
    out = tf.data.Dataset.range(2).map(lambda x: tf.numpy_function(lambda v: (seen.append(type(v)), v)[1], [x],
                                                                   tf.int64))
    assert [int(v) for v in out] == [0, 1] and set(seen) == {np.int64}
    assert type(tf.numpy_function(lambda v: v, [tf.constant("s")], tf.string).numpy()) is bytes


def test_numpy_function_stateful_runs_every_call():
    count = [0]

    def tick(x):
        count[0] += 1
        return x

    @tf.function
    def f(x):
        tf.numpy_function(tick, [x], tf.TensorSpec([2], tf.float32))  # result unused: still runs
        return x * 2.0
    for _ in range(3):
        f(tf.constant([1.0, 2.0]))
    jax.effects_barrier()
    assert count[0] == 3


def test_value_dependent_output_shape_is_an_error_not_a_wrong_result():
    @tf.function
    def f(x):
        return tf.numpy_function(lambda a: a[a > 0], [x], tf.float32)
    with pytest.raises(Exception, match="shape"):
        f(tf.constant([1.0, -1.0, 2.0])).numpy()


def test_errors():
    with pytest.raises(TypeError, match="Missing required argument: 'Tout'"):
        tf.py_function(lambda x: x, [1.0])
    with pytest.raises(TypeError, match="Don't set the `inp` argument"):
        tf.py_function(inp=[1.0], Tout=tf.float32)
    with pytest.raises(TypeError, match="Missing argument `inp`"):
        tf.numpy_function(lambda x: x, Tout=tf.float32)
    v = tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Attempting to return a variable"):
        tf.py_function(lambda: v, [], tf.float32)
    with pytest.raises(TypeError, match="Tout says float32"):
        tf.py_function(lambda: tf.constant(1), [], tf.float32)
    with pytest.raises(TypeError, match="Tout says int32"):
        tf.py_function(lambda: 1.5, [], tf.int32)        # never truncated silently
    assert tf.py_function(lambda: 3, [], tf.float32).numpy() == 3.0

    @tf.function
    def needs_values(x):
        return tf.numpy_function(lambda a: np.linalg.inv(a), [x], tf.float32)
    with pytest.raises(ValueError, match="Tout=tf.TensorSpec"):
        needs_values(tf.eye(2))


def test_gradient_inside_tf_function_with_two_outputs():
    @tf.function
    def f(x):
        a, n = tf.py_function(lambda v: (v * v, tf.cast(v, tf.int32)), [x], [tf.float32, tf.int32])
        return tf.reduce_sum(a * 3.0) + tf.cast(tf.reduce_sum(n), tf.float32)
    xv = np.array([1.0, -2.0], np.float32)
    x = tf.Variable(xv)
    with tf.GradientTape() as t:
        y = f(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), 6.0 * xv, rtol=1e-6)


def test_numpy_function_gradient_is_none_as_tf():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.numpy_function(lambda a: a * 2, [x], tf.float32))
    assert t.gradient(y, x) is None


def test_eager_numpy_function_converts_as_tensorflow():
    # tf.numpy_function docstring, TF 2.21 (script_ops: eagerly, func(*[np.array(x) for x in inp])
    # and the results converted without Tout): a Python float is float64, the result keeps its dtype.
    seen = []

    @tf.numpy_function(Tout=tf.float32)
    def my_numpy_func(x):
        seen.append(repr(x))
        return np.sinh(x)

    assert repr(my_numpy_func(1.0).numpy()) == "np.float64(1.1752011936438014)" and seen == ["array(1.)"]
    assert repr(tf.numpy_function(lambda x: x * 2, [tf.constant(1)], tf.float32)) == (
        "<tf.Tensor: shape=(), dtype=int32, numpy=2>")
    assert repr(tf.numpy_function(lambda x: (x, [x * 2.0]), [tf.constant(1.)], [tf.float32, tf.float32])) == (
        "[<tf.Tensor: shape=(), dtype=float32, numpy=1.0>, <tf.Tensor: shape=(), dtype=float32, numpy=2.0>]")
    assert tf.numpy_function(lambda x: None, [tf.constant(1.)], []) is None

    def fn_using_numpy(x):   # TF's docstring: the input array is the function's to write
        x[0] = 0.
        return x

    assert repr(tf.numpy_function(fn_using_numpy, inp=[tf.constant([1., 2.])], Tout=tf.float32)) == (
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 2.], dtype=float32)>")
    t = tf.constant([1., 2.])
    a = np.array(t)
    a[0] = 5.0   # np.array(t) is a copy (np.asarray(t) stays the read-only view)
    assert t.numpy().tolist() == [1.0, 2.0] and not np.asarray(t).flags.writeable
