"""tf.control_dependencies and tf.inside_function, against TF 2.21's outputs (recorded)."""
import tapejax as tf


def test_control_dependencies_eagerly_and_in_a_function():
    v = tf.Variable(1.0)
    assert tf.inside_function() is False
    with tf.control_dependencies([v.assign_add(1.0)]) as ctx:
        assert ctx is None and v.numpy() == 2.0          # TF 2.21: None 2.0
    calls = []
    with tf.control_dependencies([lambda: calls.append(1)]):
        pass
    assert calls == [1]                                  # eagerly, TF calls the callables
    with tf.control_dependencies(None):
        pass
    with tf.control_dependencies([1.0]):                 # TF 2.21 accepts it (eagerly and traced)
        pass

    traced_calls = []

    @tf.function
    def f(x):
        a = v.assign_add(10.0)
        with tf.control_dependencies([a, lambda: traced_calls.append(1)]):
            y = tf.identity(x) * 2
        with tf.control_dependencies([tf.debugging.assert_positive(x)]):
            z = x + 1
        return y + z, tf.inside_function()

    out, inside = f(tf.constant(3.0))
    # TF 2.21: (10.0, True), v = 12.0; a traced function does not call the callables
    assert out.numpy() == 10.0 and bool(inside.numpy()) is True and v.numpy() == 12.0
    assert traced_calls == []
