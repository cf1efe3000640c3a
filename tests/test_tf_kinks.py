"""Gradients at kinks and singular points are TensorFlow's, not JAX's.

Every expected value here was printed by TensorFlow 2.21 (CPU) for the same code with
``import tensorflow as tf``. The checkpoint guide's training loop met the first of them: an
L1 loss whose prediction equals its label (zero input, zero bias) has ``abs'(0)``, which is 0
in TensorFlow and 1 in JAX, so the first Adam step moved a bias TensorFlow leaves alone.
"""
import numpy as np
import pytest

import tapejax as tf

X = [0., 6., -1., 2., 6.5, 1.0]


def grad(f, x=X):
    x = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    g = t.gradient(y, x)
    return None if g is None else g.numpy()


@pytest.mark.parametrize("name, f, expected", [
    ("abs", tf.abs, [0., 1., -1., 1., 1., 1.]),
    ("clip_by_value", lambda x: tf.clip_by_value(x, 0., 6.), [1., 1., 0., 1., 0., 1.]),
    ("selu", tf.nn.selu, [1.050701, 1.050701, 0.64676857, 1.050701, 1.050701, 1.050701]),
    ("norm_1", lambda x: tf.norm(x, ord=1), [0., 1., -1., 1., 1., 1.]),
    ("norm_inf", lambda x: tf.norm(x, ord=np.inf), [0., 0., -0., 0., 1., 0.]),
    ("xlogy_x0", lambda x: tf.math.xlogy(x * 0., x), [0., 0., 0., 0., 0., 0.]),
    ("pow_0", lambda x: tf.pow(x, 0.), [np.nan, 0., -0., 0., 0., 0.]),
])
def test_gradient_at_kinks_is_tensorflows(name, f, expected):
    got, expected = grad(f), np.array(expected, np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    num = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(got)[num], np.signbit(expected)[num])


@pytest.mark.parametrize("f", [tf.math.floor, tf.math.ceil, tf.math.round,
                               lambda x: tf.math.floordiv(x, 2.)])
def test_rounding_ops_have_no_gradient(f):
    assert grad(f) is None  # TF registers None for Floor, Ceil, Round, FloorDiv


def test_pow_and_xlogy_gradients_in_their_second_argument():
    x, y = tf.constant([0.5, 6., -1.5, 2.3]), tf.constant([2., 4., 2., 0.])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, y])
        p = tf.pow(x, y)
        q = tf.math.xlogy(x * 0., y)
    np.testing.assert_allclose(t.gradient(p, x).numpy(), [1., 864., -3., 0.], rtol=1e-6)
    # TF: log(x) taken as 0 where x <= 0 (JAX: nan)
    np.testing.assert_allclose(t.gradient(p, y).numpy(), [-1.7328680e-01, 2.3221204e+03, 0., 8.3290911e-01],
                               rtol=1e-6)
    np.testing.assert_array_equal(t.gradient(q, y).numpy(), [0., 0., 0., 0.])


def test_losses_at_their_kinks():
    x = tf.constant([0., 0., 1., -2.])
    lab = tf.constant([0., 1., 1., 0.])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        sx = tf.nn.sigmoid_cross_entropy_with_logits(labels=lab, logits=x)
        mae = tf.keras.losses.MeanAbsoluteError()(lab, x)
        hinge = tf.keras.losses.Hinge()(lab, x)
    np.testing.assert_allclose(t.gradient(sx, x).numpy(), [0.5, -0.5, -0.26894143, 0.11920291], rtol=1e-6)
    g = t.gradient(mae, x).numpy()
    np.testing.assert_array_equal(g, [-0., -0.25, -0., -0.25])
    np.testing.assert_array_equal(np.signbit(g), [True, True, True, True])
    np.testing.assert_array_equal(t.gradient(hinge, x).numpy(), [0.25, -0.25, -0.25, 0.])


def test_checkpoint_guide_first_adam_step():
    # site/en/guide/checkpoint.ipynb's train_step on its toy data, one step from a fixed kernel:
    # TF prints bias [0.09999618, 0.09999775, ...]; with JAX's abs'(0) = 1 bias[0] stayed 0.
    k = tf.Variable([[0.7163782, 0.32525706, -0.28257847, 0.8999791, -0.8438778]])
    b = tf.Variable(tf.zeros([5]))
    x = tf.constant([[0.], [1.]])
    y = x * 5. + tf.range(5.)[None, :]
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(tf.matmul(x, k) + b - y))
    gk, gb = tape.gradient(loss, [k, b])
    np.testing.assert_allclose(gk.numpy(), [[-0.1, -0.1, -0.1, -0.1, -0.1]], rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), [-0.1, -0.2, -0.2, -0.2, -0.2], rtol=1e-6)
    tf.keras.optimizers.Adam(0.1).apply_gradients([(gk, k), (gb, b)])
    np.testing.assert_allclose(b.numpy(), [0.09999618, 0.09999775, 0.09999775, 0.09999775, 0.09999775],
                               rtol=1e-6)


def test_kinks_under_tf_function_and_jax_grad():
    import jax
    from tapejax.ops import kinks

    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.abs(x)) + tf.reduce_sum(tf.clip_by_value(x, 0., 1.))
        return t.gradient(y, x)
    np.testing.assert_array_equal(f(tf.constant([0., 1., -1.])).numpy(), [1., 2., -1.])
    assert jax.grad(lambda v: kinks.maximum(v, 0.))(0.) == 1.0
    assert jax.grad(lambda v: kinks.minimum(0., v))(0.) == 0.0
    assert jax.grad(kinks.abs)(0.) == 0.0


RELU_X = [0., 6., -1., 2., 6.5, 1.0, 5.0]
# (Keras arguments, values, gradients), printed by TF 2.21 (Keras 3's ReLU.static_call)
RELU_TF = [
    (dict(max_value=6.), [0.0, 6.0, 0.0, 2.0, 6.0, 1.0, 5.0], [0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0]),
    (dict(max_value=5.), [0.0, 5.0, 0.0, 2.0, 5.0, 1.0, 5.0], [0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0]),
    (dict(threshold=1.), [0.0, 6.0, 0.0, 2.0, 6.5, 0.0, 5.0], [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
    (dict(alpha=0.1), [0.0, 6.0, -0.1, 2.0, 6.5, 1.0, 5.0], [0.1, 1.0, 0.1, 1.0, 1.0, 1.0, 1.0]),
    (dict(alpha=0.1, max_value=5.), [0.0, 5.0, -0.1, 2.0, 5.0, 1.0, 5.0], [0.0, 0.0, 0.1, 1.0, 0.0, 1.0, 1.0]),
    (dict(alpha=0.1, threshold=1.), [-0.1, 6.0, -0.2, 2.0, 6.5, 0.0, 5.0], [0.1, 1.0, 0.1, 1.0, 1.0, 0.0, 1.0]),
    (dict(max_value=5., threshold=1.), [0.0, 5.0, 0.0, 2.0, 5.0, 0.0, 5.0], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]),
]


@pytest.mark.parametrize("kwargs, values, grads", RELU_TF)
def test_keras_relu_values_and_kinks(kwargs, values, grads):
    x = tf.constant(RELU_X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.keras.activations.relu(x, **kwargs)
    np.testing.assert_allclose(y.numpy(), values, rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(y.numpy()), np.signbit(values))   # 0.0, not -0.0
    np.testing.assert_allclose(t.gradient(y, x).numpy(), grads, rtol=1e-6)
