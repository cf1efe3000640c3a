"""tf.function with unknown dimensions, as TensorFlow traces them.

An ``input_signature`` with None dimensions, or ``reduce_retracing=True`` after a call with
other sizes, traces the Python function once for every size (jax.export shape polymorphism);
shape values (``tf.shape``) are known while tracing, so ``tf.zeros(tf.shape(x))`` and
``tf.reshape(x, [tf.shape(x)[0], -1])`` work as in TensorFlow. Oracles: the same
computations run eagerly, and TensorFlow's trace counts.
"""
import numpy as np
import pytest

import tapejax as tf


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


def shape_ops(x):
    n = tf.shape(x)[0]
    return [tf.shape(x), tf.size(x), n, tf.rank(x), tf.reshape(x, [-1]), tf.zeros(tf.shape(x)),
            tf.ones([n, 2]), tf.reshape(x, [n * 3]), tf.range(n), tf.fill([n + 1], 2.0),
            tf.zeros(tf.stack([n, 2])), tf.reshape(x, [tf.shape(x)[0], -1]), x[1:] * 2.0,
            tf.reduce_mean(x, axis=0) * tf.cast(n, tf.float32)]


@pytest.mark.parametrize("signature", [None, [tf.TensorSpec([None, 3], tf.float32)]],
                         ids=["per-shape", "unknown-dim"])
def test_shape_values_are_known_while_tracing(signature):
    traces = []

    @tf.function(input_signature=signature)
    def f(x):
        traces.append(x.shape.as_list())
        return shape_ops(x)

    for n in (2, 5, 3):
        x = tf.reshape(tf.range(n * 3, dtype=tf.float32), [n, 3])
        for got, want in zip(f(x), shape_ops(x)):
            assert got.shape == want.shape and got.dtype == want.dtype
            close(got, want)
    # TensorFlow: one trace for the signature's unknown dimension, one per shape without it.
    assert traces == ([[None, 3]] if signature else [[2, 3], [5, 3], [3, 3]])
    assert f.experimental_get_tracing_count() == len(traces)


def test_unknown_dimension_traces_once_and_keeps_state_semantics():
    v = tf.Variable(0.0)
    printed = []

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        printed.append(str(x))
        v.assign_add(tf.reduce_sum(x))
        return v

    assert [float(f(tf.ones([n]))) for n in (1, 2, 3, 4)] == [1.0, 3.0, 6.0, 10.0]
    assert printed == ['Tensor("x:0", shape=(None,), dtype=float32)']
    # The trace's program serves every size; a size 0 (outside jax.export's dims >= 1) still runs.
    assert float(f(tf.zeros([0]))) == 10.0


def test_reduce_retracing_generalizes_like_tensorflow():
    shapes = []

    @tf.function(reduce_retracing=True)
    def g(x, y):
        shapes.append((x.shape.as_list(), y.shape.as_list()))
        return tf.matmul(x, y)

    for n in (2, 3, 4, 7):
        x = tf.ones([n, 3])
        close(g(x, tf.ones([3, 2])), np.full([n, 2], 3.0))
    # First call: its own shapes; second: the most specific common shape; then no retrace.
    assert shapes == [([2, 3], [3, 2]), ([None, 3], [3, 2])]
    assert g.experimental_get_tracing_count() == 2


def test_gradient_through_unknown_dimension_function():
    w = tf.Variable([1.0, -2.0, 0.5])

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def loss(x):
        return tf.reduce_sum(tf.tanh(x * w)) / tf.cast(tf.shape(x)[0], tf.float32)

    for n in (2, 4):
        x = tf.reshape(tf.range(n * 3, dtype=tf.float32), [n, 3]) / 10.0
        with tf.GradientTape() as tape:
            y = loss(x)
        with tf.GradientTape() as eager_tape:
            want = tf.reduce_sum(tf.tanh(x * w)) / n
        close(y, want)
        close(tape.gradient(y, w), eager_tape.gradient(want, w))


def test_body_needing_sizes_falls_back_to_one_trace_per_shape():
    traces = []

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        traces.append(x.shape.as_list())
        return x + np.arange(x.shape[0] or 0, dtype=np.float32)   # a NumPy array of the size

    close(f(tf.ones([3])), [1.0, 2.0, 3.0])
    close(f(tf.ones([4])), [1.0, 2.0, 3.0, 4.0])
    assert traces[-2:] == [[3], [4]]


def test_input_signature_mismatch_is_a_type_error():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def f(x):
        return x

    with pytest.raises(TypeError, match=r"Can not cast TensorSpec\(shape=\(2, 2\)"):
        f(tf.constant([[1, 2], [3, 4]]))
    # TF 2.21's message (recorded): the dtype mismatch is a cast the binding cannot make.
    with pytest.raises(TypeError, match=r"Can not cast TensorSpec\(shape=\(2,\), dtype=tf.float32, name=None\) "
                                        r"to TensorSpec\(shape=\(None,\), dtype=tf.int32"):
        f(tf.constant([1.0, 2.0]))


def test_concrete_function_binds_python_arguments():
    @tf.function
    def power(a, b):
        return a ** b

    square = power.get_concrete_function(a=tf.TensorSpec([None], tf.float32), b=2)
    assert repr(square).startswith("<ConcreteFunction (a: TensorSpec(shape=(None,), dtype=tf.float32, "
                                   "name=None), b: Literal[2]) -> TensorSpec(shape=(None,)")
    assert str(square).splitlines()[:3] == [
        "ConcreteFunction Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=tf.float32, name=None)",
        "  b (POSITIONAL_OR_KEYWORD): Literal[2]"]
    close(square(tf.constant([1.0, 2.0, 3.0])), [1.0, 4.0, 9.0])
    close(square(a=tf.constant([3.0])), [9.0])            # b is bound to 2
    close(square(tf.constant([3.0]), 2), [9.0])           # the value it was traced with
    with pytest.raises(TypeError, match=r"Can not cast 3 to Literal\[2\]"):
        square(tf.constant([10.0]), b=3)
    with pytest.raises(TypeError, match="missing a required argument: 'a'"):
        square()
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a float tensor but is a int32 tensor"):
        square(tf.constant([1, 2]))
    assert power.experimental_get_tracing_count() == 1


def test_calls_reuse_a_concrete_function_with_unknown_dimensions(capsys):
    """TF 2.21's cache: after get_concrete_function(TensorSpec([None])), calls whose shapes fit it
    reuse that trace (no Python rerun, no new trace); other ranks trace."""
    class M(tf.Module):
        def __init__(self):
            self.v = tf.Variable(1.)

        @tf.function
        def __call__(self, x):
            print('Tracing with', x)
            return x * self.v

    m = M()
    c2 = m.__call__.get_concrete_function(tf.TensorSpec([None], tf.float32))
    assert m(tf.constant([1., 2.])).numpy().tolist() == [1., 2.]
    m(tf.constant([[1.]]))
    assert m(tf.constant([3., 4., 5.])).numpy().tolist() == [3., 4., 5.]
    assert m.__call__.experimental_get_tracing_count() == 2
    assert c2(tf.constant([7.])).numpy().tolist() == [7.]
    assert capsys.readouterr().out == ('Tracing with Tensor("x:0", shape=(None,), dtype=float32)\n'
                                       'Tracing with Tensor("x:0", shape=(1, 1), dtype=float32)\n')
    f = tf.function(lambda x, y: x + y)
    f.get_concrete_function(tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([], tf.float32))
    f(tf.ones([3, 2]), tf.constant(1.))
    assert f.experimental_get_tracing_count() == 1
    f(tf.ones([3, 3]), tf.constant(1.))
    assert f.experimental_get_tracing_count() == 2


def test_ensure_shape_refines_the_static_shape_and_checks_sizes(capsys):
    # tf.ensure_shape docstring and tf.Tensor.get_shape docstring, TF 2.21: the result has the
    # sizes given (ops after it see them: a matmul with a [3, 2] matrix traces), and the
    # program refuses other sizes when it runs, naming the tensor.
    @tf.function
    def f(x):
        print("before:", x.shape)
        y = tf.ensure_shape(x, [None, 3])
        print("after:", y.shape, (y @ tf.ones([3, 2])).shape)
        return tf.reduce_sum(y)

    cf = f.get_concrete_function(tf.TensorSpec([None, None]))
    assert capsys.readouterr().out == "before: (None, None)\nafter: (None, 3) (None, 2)\n"
    assert cf(tf.ones([2, 3])).numpy() == 6.0
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^Shape of tensor x \[2,4\] is not compatible with expected shape \[\?,3\]\.$"):
        cf(tf.ones([2, 4]))

    @tf.function
    def my_fun(a):
        a = tf.ensure_shape(a, [5, 5])
        print("Result shape: ", a.shape)
        return a

    cf = my_fun.get_concrete_function(tf.TensorSpec([None, None]))
    assert capsys.readouterr().out == "Result shape:  (5, 5)\n"
    assert cf(tf.ones([5, 5])).shape == (5, 5)

    @tf.function
    def unused(x):
        tf.ensure_shape(x, [None, 3])   # its result unused: TF's graph does not run it
        return tf.reduce_sum(x)

    assert unused.get_concrete_function(tf.TensorSpec([None, None]))(tf.ones([2, 4])).numpy() == 8.0


def test_ensure_shape_gradient_in_unknown_dimension_function():
    v = tf.Variable([[1., 2., 3.]])

    @tf.function(input_signature=[tf.TensorSpec([None, None])])
    def grads(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.ensure_shape(x * v, [None, 3])
            loss = tf.reduce_sum(y * y)
        return t.gradient(loss, [x, v])

    gx, gv = grads(tf.ones([2, 3]))   # TF 2.21's values
    close(gx, [[2., 8., 18.], [2., 8., 18.]])
    close(gv, [[4., 8., 12.]])


@pytest.mark.parametrize("shape,want,message", [
    ([3], [5], "Dimension 0 in both shapes must be equal, but are 5 and 3. Shapes are [5] and [3]. for "
               "'{{node EnsureShape}} = EnsureShape[T=DT_FLOAT, shape=[5]](x)' with input shapes: [3]."),
    ([3, 2], [5], "Shape must be rank 1 but is rank 2 for '{{node EnsureShape}} = EnsureShape[T=DT_FLOAT, "
                  "shape=[5]](x)' with input shapes: [3,2]."),
    ([2, 3], [None, 4], "Dimension 1 in both shapes must be equal, but are 4 and 3. Shapes are [?,4] and [2,3]. "
                        "for '{{node EnsureShape}} = EnsureShape[T=DT_FLOAT, shape=[?,4]](x)' with input shapes: "
                        "[2,3]."),
])
def test_ensure_shape_of_a_known_shape_in_a_function_is_a_value_error(shape, want, message):
    # TF 2.21: shape inference refuses it while the function is traced.
    @tf.function
    def g(x):
        return tf.ensure_shape(x, want)

    with pytest.raises(ValueError) as e:
        g(tf.zeros(shape))
    assert str(e.value).rstrip().endswith(message)


def test_set_shape_gives_the_static_shape_only(capsys):
    # TF 2.21: set_shape refines what .shape says while traced; the value is the call's.
    @tf.function
    def h(x):
        x.set_shape([None, 3])
        print(x.shape)
        return x * 2

    cf = h.get_concrete_function(tf.TensorSpec([None, None]))
    assert capsys.readouterr().out == "(None, 3)\n"
    assert cf(tf.zeros([2, 4])).shape == (2, 4)
