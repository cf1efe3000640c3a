"""TensorFlow 2.21's API docstring examples of tf.math, tf.nn, tf.linalg, tf.image, tf.random and
the top-level array ops, and the behaviour behind them; values recorded from TensorFlow 2.21
(the same code run under ``tensorflow``)."""
import numpy as np
import pytest

import tapejax as tf

X = [[1 + 1j, 2 + 2j], [4 + 4j, 5 - 5j]]
ADJ = [[1 - 1j, 4 - 4j], [2 - 2j, 5 + 5j]]


def test_transpose_conjugate():
    # tf.transpose docstring: conjugate=True conjugates a complex tensor, no-op on real ones
    assert tf.transpose(tf.constant(X), conjugate=True).numpy().tolist() == ADJ
    assert tf.transpose([[1, 2]], conjugate=True).numpy().tolist() == [[1], [2]]
    assert tf.transpose(tf.constant(X)).numpy().tolist() == np.transpose(X).tolist()


def test_matrix_transpose_adjoint_and_matmul_adjoint():
    x = tf.constant(X)
    assert tf.linalg.matrix_transpose(x, conjugate=True).numpy().tolist() == ADJ
    assert tf.linalg.matrix_transpose(x).numpy().tolist() == np.transpose(X).tolist()
    assert tf.linalg.adjoint(x).numpy().tolist() == ADJ
    assert tf.matmul(x, x, adjoint_a=True).numpy().tolist() == [[34, 4 - 40j], [4 + 40j, 58]]
    assert tf.matmul(x, x, adjoint_b=True).numpy().tolist() == [[10, 8 + 20j], [8 - 20j, 82]]
    np.testing.assert_allclose(tf.linalg.solve(tf.constant([[1 + 1j, 2 + 2j], [4 + 4j, 5 + 5j]]),
                                               tf.constant([[1 + 0j], [2]]), adjoint=True).numpy(), [[0.5 + 0.5j], [0]])
    with pytest.raises(ValueError, match="Only one of `transpose_a` and `adjoint_a` can be True"):
        tf.matmul(x, x, transpose_a=True, adjoint_a=True)


def test_sigmoid_cross_entropy_with_logits_bits():
    got = tf.nn.sigmoid_cross_entropy_with_logits(labels=[0., 0., 0., 1., 1., 1., 0.5],
                                                  logits=[1., -1., 0., 1., -1., 0., 0.]).numpy()
    want = [1.3132617473602295, 0.3132616877555847, 0.6931471824645996, 0.3132616877555847,
            1.3132617473602295, 0.6931471824645996, 0.6931471824645996]
    np.testing.assert_array_equal(got, np.float32(want))
    l, z = np.linspace(-5, 5, 37).astype(np.float32), np.linspace(0, 1, 37).astype(np.float32)
    want = [0.006715348921716213, 0.1400289088487625, 0.2585887908935547, 0.36260712146759033, 0.45236021280288696, 0.5282064080238342, 0.5906080007553101, 0.6401569843292236, 0.677604079246521, 0.7038897275924683, 0.7201727032661438, 0.7278504967689514, 0.7285635471343994, 0.7241683602333069, 0.7166707515716553, 0.708107054233551, 0.7003771066665649, 0.6950453519821167, 0.6931471824645996, 0.6950453519821167, 0.7003771066665649, 0.7081071138381958, 0.7166707515716553, 0.7241683602333069, 0.7285634279251099, 0.727850615978241, 0.7201727628707886, 0.7038897275924683, 0.6776039600372314, 0.6401569247245789, 0.5906080007553101, 0.528206467628479, 0.45236003398895264, 0.3626070022583008, 0.25858911871910095, 0.1400291919708252, 0.006715348456054926]
    np.testing.assert_array_equal(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=l).numpy(), np.float32(want))


def test_constant_shape_mismatch_message():
    with pytest.raises(TypeError, match=r"Eager execution of tf.constant with unsupported shape. Tensor \[0. 1. 2. 3. 4. 5. 6. 7.\] "
                                        r"\(converted from \[0, 1, 2, 3, 4, 5, 6, 7\]\) has 8 elements, but got `shape` "
                                        r"\(3, 4\) with 12 elements\)."):
        tf.constant([0, 1, 2, 3, 4, 5, 6, 7], dtype=tf.float32, shape=(3, 4))


def test_tf_initializers_are_tensorflows_not_keras():
    # tf.random_uniform_initializer & co are TF's init_ops_v2: unseeded ones draw new numbers on each
    # call from tf.random's global seed (they repeated one Keras seed: correlated weights).
    tf.random.set_seed(5)
    init = tf.random_normal_initializer(mean=1., stddev=2.)
    want = [[0.6393866539001465, -0.9005725383758545, 0.9207190275192261],
            [1.4530572891235352, 2.6213107109069824, 2.4932188987731934]]
    np.testing.assert_allclose([init([3]).numpy(), init([3]).numpy()], want, rtol=1e-6)
    np.testing.assert_allclose(tf.random_uniform_initializer(minval=-1., maxval=1.)([4]).numpy(),
                               [-0.5964090824127197, -0.30585765838623047, -0.888899564743042, -0.11748790740966797])
    # seeded: the stateless ops with seed [seed, 0]
    np.testing.assert_array_equal(tf.random_uniform_initializer(minval=0., maxval=1., seed=1)([3]).numpy(),
                                  np.float32([0.8784882, 0.45998025, 0.60029125]))
    np.testing.assert_allclose(tf.random_normal_initializer(mean=1., stddev=2., seed=1)([3]).numpy(),
                               [1.2533007, 0.01396686, 2.2623816], rtol=1e-6)
    assert tf.random_uniform_initializer(0, 10, seed=3)([4], tf.int32).numpy().tolist() == [8, 7, 2, 2]
    assert tf.ones_initializer()([2], "int64").dtype == tf.int64
    assert tf.zeros_initializer()([2]).numpy().tolist() == [0.0, 0.0]
    assert tf.constant_initializer([1, 2]).get_config() == {"value": [1, 2]}
    assert tf.random_normal_initializer(seed=1).get_config() == {"mean": 0.0, "stddev": 0.05, "seed": 1}
    init = tf.constant_initializer([0, 1, 2, 3, 4, 5, 6, 7])
    assert init(shape=[2, 4], dtype=tf.float32).numpy().tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    with pytest.raises(TypeError, match="has 8 elements, but got `shape` \\(2, 3\\) with 6 elements"):
        init(shape=[2, 3], dtype=tf.float32)
    with pytest.raises(ValueError, match=r"Argument `dtype` is expected to be floating point. Received: <dtype: 'int32'>."):
        tf.random_normal_initializer()([2], tf.int32)
    with pytest.raises(TypeError, match=r"Keyword argument should be one of \['partition_shape', 'partition_offset'\]. Received: foo"):
        tf.zeros_initializer()([2], foo=1)
    with pytest.raises(TypeError, match="Invalid type for initial value: EagerTensor. Expected Python scalar"):
        tf.constant_initializer(tf.constant(1.))
    with pytest.raises(ValueError, match=r"Argument `dtype` expected to be numeric or boolean. Received <dtype: 'string'>."):
        tf.zeros_initializer()([2], tf.string)
    # Keras layers take them (TF 2.21's Dense gives these numbers)
    d = tf.keras.layers.Dense(2, kernel_initializer=tf.random_normal_initializer(seed=1))
    np.testing.assert_allclose(d(tf.ones((1, 3))).numpy(), [[0.0663075, -0.14194284]], rtol=1e-5)
