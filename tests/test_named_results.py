"""TensorFlow's generated ops return named tuples (TopKV2, Qr); printed results as TF 2.21 prints them."""
import tapejax as tf


def test_top_k_is_topkv2():
    r = tf.math.top_k(tf.constant([3., 1., 2.]), 2)
    assert repr(r) == ("TopKV2(values=<tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 2.], dtype=float32)>, "
                       "indices=<tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 2], dtype=int32)>)")
    values, indices = tf.nn.top_k(tf.constant([3., 1., 2.]), 1)
    assert r._fields == ("values", "indices") and values.numpy().tolist() == [3.0]
    x = tf.constant([3., 1., 2.])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.math.top_k(x, 2).values)
    assert t.gradient(y, x).numpy().tolist() == [1.0, 0.0, 1.0]


def test_qr_is_named():
    r = tf.linalg.qr(tf.constant([[2., 0.], [0., 3.]]))
    assert type(r).__name__ == "Qr" and r._fields == ("q", "r")
    assert abs(r.r.numpy()).tolist() == [[2.0, 0.0], [0.0, 3.0]]
