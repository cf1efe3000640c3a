"""tf.vectorized_map (the tf_numpy guide's per-example gradients), recorded from TensorFlow 2.21."""
import tapejax as tf

W = [[1., 2.], [3., 4.]]


def _per_example(w):
    def grad(x):
        with tf.GradientTape() as t:
            t.watch(w)
            y = tf.reduce_sum(tf.matmul(x[None], w) ** 2)
        return t.gradient(y, w)
    return grad


def test_vectorized_map_equals_tensorflow():
    assert str(tf.vectorized_map(lambda x: x * x, tf.constant([1.0, 2.0, 3.0]))) == \
        "tf.Tensor([1. 4. 9.], shape=(3,), dtype=float32)"
    # a nested result; the constant one is repeated per element
    out = tf.vectorized_map(lambda p: (p[0] + p[1], tf.constant(5.0)), (tf.constant([1., 2.]), tf.constant([[1.], [2.]])))
    assert repr(out) == ("(<tf.Tensor: shape=(2, 1), dtype=float32, numpy=\narray([[2.],\n       [4.]], dtype=float32)>, "
                         "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([5., 5.], dtype=float32)>)")
    grad = _per_example(tf.constant(W))
    assert str(tf.vectorized_map(grad, tf.constant([[1., 0.], [0., 1.], [1., 1.]]))) == (
        "tf.Tensor(\n[[[ 2.  4.]\n  [ 0.  0.]]\n\n [[ 0.  0.]\n  [ 6.  8.]]\n\n [[ 8. 12.]\n  [ 8. 12.]]], "
        "shape=(3, 2, 2), dtype=float32)")
    f = tf.function(lambda e: tf.vectorized_map(grad, e))
    assert str(f(tf.constant([[1., 0.], [2., 1.]]))) == (
        "tf.Tensor(\n[[[ 2.  4.]\n  [ 0.  0.]]\n\n [[20. 32.]\n  [10. 16.]]], shape=(2, 2, 2), dtype=float32)")


def test_gradient_through_vectorized_map_reaches_captured_variables():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.vectorized_map(lambda x: x * v, tf.constant([1., 2., 3.])))
    assert str(t.gradient(y, v)) == "tf.Tensor(6.0, shape=(), dtype=float32)"
