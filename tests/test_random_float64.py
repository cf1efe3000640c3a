"""float64 random numbers are TensorFlow's (random_distributions.h: Uint64ToDouble, BoxMullerDouble).

tf.experimental.numpy's ``tnp.random.randn`` draws float64 (the tf_numpy guide); tapejax raised
TypeError for any float64 draw. Every expected value was printed by TensorFlow 2.21 (CPU) for the
same code, to 17 significant digits: the numbers are equal to the bit.
"""
import numpy as np

import tapejax as tf


def test_float64_draws_equal_tensorflows():
    tf.random.set_seed(42)
    got = [tf.random.normal([5], dtype=tf.float64), tf.random.uniform([5], dtype=tf.float64),
           tf.random.uniform([3], 2., 5., dtype=tf.float64),
           tf.random.stateless_normal([5], seed=[1, 2], dtype=tf.float64),
           tf.random.stateless_uniform([3], seed=[1, 2], dtype=tf.float64)]
    g = tf.random.Generator.from_seed(7)
    got += [g.normal([3], dtype=tf.float64), g.uniform([3], dtype=tf.float64), g.normal([2])]
    got += [tf.random.normal([2], seed=3, dtype=tf.float64)]
    want = [
        [-1.3598275767565153, 0.6721227823730763, -0.7719790981854914, 1.42408819802286, 0.06866245385418975],
        [0.503130528115628, 0.4479558528441694, 0.8492321891571735, 0.5739862578908617, 0.7940506423771057],
        [4.792829051400793, 2.4172339477193256, 2.2553037873157527],
        [-0.1423118100189212, 0.7406072461585091, -1.469047669443883, 1.147747453689489, -0.7218813856153005],
        [0.7524837538451801, 0.9697857725627486, 0.17592233912897481],
        [0.7660882793614675, -1.6390396724835652, 1.232012701636412],
        [0.7158307410082931, 0.5241048217008131, 0.13544633572854536],
        [0.15951356, -0.2555016],
        [-0.6385052437399857, -2.0333548422945897],
    ]
    dtypes = [tf.float64] * 7 + [tf.float32, tf.float64]   # the Generator's float32 draw after its float64 ones
    for g_, w, dt in zip(got, want, dtypes):
        assert g_.dtype == dt
        np.testing.assert_allclose(g_.numpy(), w, rtol=4e-16 if dt == tf.float64 else 1e-7)
