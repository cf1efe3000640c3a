"""Keras 3 layers and metrics added for the TensorFlow tutorials: Normalization, RNN with
cells, metric aliases and confusion counts. Expected values recorded from TF 2.21 (Keras 3)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

X = np.array([[1., 2., 3.], [4., 6., 8.], [0., -1., 5.], [2., 2., 2.]], dtype=np.float32)


# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------

def _adapted(data=X, **kw):
    layer = tf.keras.layers.Normalization(**kw)
    layer.adapt(data)
    return layer


def test_normalization_adapt_numpy_matches_tf():
    n = _adapted(axis=-1, name="normalization")
    assert repr(n.mean) == ("<tf.Tensor: shape=(1, 3), dtype=float32, numpy=array([[1.75, 2.25, 4.5 ]], "
                            "dtype=float32)>")
    np.testing.assert_allclose(n.variance.numpy(), [[2.1875, 6.1875, 5.25]], rtol=1e-6)
    assert [(w.name, w.path, w.trainable, w.dtype.name) for w in n.weights] == [
        ("mean", "normalization/mean", False, "float32"), ("variance", "normalization/variance", False, "float32"),
        ("count", "normalization/count", False, "int64")]
    assert n.trainable_weights == [] and int(n.count) == 0
    np.testing.assert_allclose(n(X).numpy(), [
        [-0.5070925354957581, -0.10050378739833832, -0.6546536684036255],
        [1.5212775468826294, 1.5075567960739136, 1.5275251865386963],
        [-1.183215856552124, -1.3065491914749146, 0.2182178795337677],
        [0.16903084516525269, -0.10050378739833832, -1.0910893678665161]], rtol=1e-6)
    # float64 inputs come out in the compute dtype, as in Keras
    assert n(X.astype(np.float64)).dtype == tf.float32
    assert n.get_config()["axis"] == (-1,) and n.get_config()["mean"] is None


def test_normalization_given_stats_invert_and_axes():
    n = _adapted()
    inv = tf.keras.layers.Normalization(mean=n.mean.numpy()[0], variance=n.variance.numpy()[0], invert=True)
    np.testing.assert_allclose(inv(n(X)).numpy(), X, atol=1e-6)
    assert inv.weights == []
    m = tf.keras.layers.Normalization(mean=3., variance=2.)
    np.testing.assert_allclose(m(np.array([[1., 5.]])).numpy(), [[-1.4142135381698608, 1.4142135381698608]])
    assert m.mean.shape == (1, 2) and m.weights == []
    t = _adapted(axis=None)
    np.testing.assert_allclose([t.mean.numpy().tolist(), t.variance.numpy().tolist()],
                               [[[2.8333332538604736]], [[5.972221851348877]]], rtol=1e-6)
    np.testing.assert_allclose(t(X[:1]).numpy(), [[-0.75019371509552, -0.3409971296787262, 0.06819946318864822]],
                               rtol=1e-6)
    x3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5
    a = _adapted(x3, axis=(1,))
    np.testing.assert_allclose(a.mean.numpy().ravel(), [25.992990493774414, 43.209617614746094, 64.61289978027344],
                               rtol=1e-6)
    np.testing.assert_allclose(a.variance.numpy().ravel(), [584.364501953125, 938.9288330078125,
                                                            1281.1739501953125], rtol=1e-5)
    np.testing.assert_allclose(a(x3).numpy()[1, 2], [0.6936964988708496, 0.8834341764450073, 1.077744722366333,
                                                     1.276523232460022], rtol=1e-5)
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        tf.keras.layers.Normalization(mean=1.)


def test_normalization_adapt_dataset_tensor_and_unbatched():
    for data in (tf.data.Dataset.from_tensor_slices(X).batch(3), tf.constant(X), [X[:3], X[3:]]):
        n = _adapted(data)
        np.testing.assert_allclose(n.mean.numpy(), [[1.75, 2.25, 4.5]], rtol=1e-6)
        np.testing.assert_allclose(n.variance.numpy(), [[2.1875, 6.1875, 5.25]], rtol=1e-6)
    n = _adapted(tf.data.Dataset.from_tensor_slices(np.array([1., 2., 3., 4.])), axis=None)
    assert (float(n.mean), float(n.variance)) == (2.5, 1.25) and n.mean.shape == ()
    n = _adapted(np.array([1., 2., 3., 4.]), axis=None)
    np.testing.assert_allclose(n(np.array([1., 2.])).numpy(), [-1.3416407, -0.4472136], rtol=1e-6)


def test_normalization_gradient_matches_jax():
    n = _adapted()
    xt = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.reduce_sum(n(xt) ** 2)
    g = tape.gradient(y, xt).numpy()
    np.testing.assert_allclose(g[0], [-0.6857142448425293, -0.08080808818340302, -0.5714285373687744], rtol=1e-5)
    mean, var = jnp.array([1.75, 2.25, 4.5]), jnp.array([2.1875, 6.1875, 5.25])
    expect = jax.grad(lambda x: jnp.sum(((x - mean) / jnp.sqrt(var)) ** 2))(jnp.asarray(X))
    np.testing.assert_allclose(g, expect, rtol=1e-5)


def test_normalization_in_function_and_fit():
    n = _adapted()
    f = tf.function(lambda x: n(x))
    np.testing.assert_allclose(f(tf.constant(X)).numpy(), n(X).numpy(), rtol=1e-6)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([n, tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mean_absolute_error")
    hist = model.fit(X.astype(np.float64), np.arange(4.0), epochs=2, verbose=0)
    assert len(hist.history["loss"]) == 2
    assert len(model.trainable_weights) == 2  # the statistics are not trained
    np.testing.assert_allclose(n.mean.numpy(), [[1.75, 2.25, 4.5]])
