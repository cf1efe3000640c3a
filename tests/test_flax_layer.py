"""FlaxLayer around linen modules with BatchNorm and Dropout, inside Sequential and functional models."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from conftest import assert_close


class BNDrop(nn.Module):
    """Keras 3's FlaxLayer convention: a ``training`` parameter."""

    @nn.compact
    def __call__(self, x, training=False):
        x = nn.Dense(8)(x)
        x = nn.BatchNorm(use_running_average=not training, momentum=0.5)(x)
        x = nn.Dropout(0.5, deterministic=not training)(x)
        return nn.Dense(1)(x)


def _data(n=32):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4)).astype("float32") * 3.0 + 1.0
    return x, (x.sum(axis=1, keepdims=True) > 4).astype("float32")


def _stats(layer):
    return {v.path: np.array(v.numpy()) for v in layer.non_trainable_weights}


def _check_model(model, layer):
    x, y = _data()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    assert [v.name for v in layer.non_trainable_weights] == ["mean", "var"]
    before = _stats(layer)
    kernel_before = np.array(layer.trainable_weights[-1].numpy())
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    after = _stats(layer)
    # fit runs the module with training=True: the running statistics moved toward the data's.
    for name in before:
        assert not np.allclose(before[name], after[name]), name
    assert not np.allclose(kernel_before, layer.trainable_weights[-1].numpy())
    # evaluate and predict run with training=False: no statistics update, no dropout.
    loss = model.evaluate(x, y, verbose=0)
    assert np.isfinite(loss)
    p1, p2 = model.predict(x, verbose=0), model.predict(x, verbose=0)
    assert_close(p1, p2)
    for name, value in _stats(layer).items():
        assert_close(value, after[name])
    # The same inference by hand in flax, from the layer's variables.
    variables = {"params": {}, "batch_stats": {}}
    for v in layer.weights:
        *path, leaf = v.path.split(layer.name + "/", 1)[1].split("/")
        d = variables.setdefault(path[0], {})
        for k in path[1:]:
            d = d.setdefault(k, {})
        d[leaf] = jnp.asarray(v.numpy())
    expected = layer.module.apply(variables, jnp.asarray(x), training=False)
    assert_close(p1, expected, rtol=1e-5, atol=1e-5)
    # A training call uses dropout: two calls differ, and update the statistics.
    t1, t2 = model(x, training=True), model(x, training=True)
    assert not np.allclose(t1.numpy(), t2.numpy())


def test_flax_layer_with_batchnorm_and_dropout_in_sequential():
    layer = tf.keras.layers.FlaxLayer(BNDrop(), seed=1)
    model = tf.keras.Sequential([tf.keras.Input((4,)), layer])
    assert model.output_shape == (None, 1)
    _check_model(model, layer)


def test_flax_layer_with_batchnorm_and_dropout_in_functional_model():
    inputs = tf.keras.Input((4,))
    layer = tf.keras.layers.FlaxLayer(BNDrop(), seed=2)
    outputs = tf.keras.layers.Dense(1, kernel_initializer="ones")(layer(inputs))
    model = tf.keras.Model(inputs, outputs)
    x, y = _data()
    model.compile(optimizer="adam", loss="mse")
    before = _stats(layer)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    assert all(not np.allclose(before[k], v) for k, v in _stats(layer).items())
    after = _stats(layer)
    assert_close(model.predict(x, verbose=0), model.predict(x, verbose=0))
    assert np.isfinite(model.evaluate(x, y, verbose=0))
    assert all(np.array_equal(after[k], v) for k, v in _stats(layer).items())


def test_compute_output_shape_leaves_no_traced_state():
    layer = tf.keras.layers.FlaxLayer(BNDrop())
    assert layer.compute_output_shape((None, 4)) == (None, 1)
    for v in layer.weights:
        assert isinstance(v.numpy(), np.ndarray)
    assert layer(tf.ones([2, 4])).shape == (2, 1)


def test_training_argument_reaches_the_module():
    class Mode(nn.Module):
        @nn.compact
        def __call__(self, x, training=False):
            return x + (1.0 if training else 0.0)

    layer = tf.keras.layers.FlaxLayer(Mode())
    assert_close(layer(tf.zeros([1, 2])), np.zeros((1, 2)))
    assert_close(layer(tf.zeros([1, 2]), training=True), np.ones((1, 2)))
    model = tf.keras.Sequential([tf.keras.Input((2,)), layer])
    assert_close(model(np.zeros((1, 2), "float32")), np.zeros((1, 2)))
    assert_close(model(np.zeros((1, 2), "float32"), training=True), np.ones((1, 2)))


def test_seed_makes_init_and_dropout_reproducible():
    def run():
        layer = tf.keras.layers.FlaxLayer(BNDrop(), seed=7)
        y = layer(tf.ones([4, 4]), training=True)
        return [w.numpy() for w in layer.trainable_weights], y.numpy()

    (w1, y1), (w2, y2) = run(), run()
    for a, b in zip(w1, w2):
        assert_close(a, b)
    assert_close(y1, y2)


def test_given_variables_are_used():
    module = nn.Dense(2)
    variables = module.init(jax.random.key(0), jnp.ones((1, 3)))
    layer = tf.keras.layers.FlaxLayer(module, variables=variables)
    assert_close(layer(tf.ones([1, 3])), module.apply(variables, jnp.ones((1, 3))))


@pytest.mark.parametrize("mode", ["grad", "vjp"])
def test_functions_returning_tensors_under_jax_transforms(mode):
    x = jnp.array([0.5, 1.0, -2.0], jnp.float32)
    if mode == "grad":
        assert_close(jax.grad(lambda t: tf.reduce_sum(tf.sin(t)))(x), jnp.cos(x))
    else:
        out, pull = jax.vjp(lambda t: tf.sin(t) * tf.constant(2.0), x)
        assert isinstance(out, jax.Array)
        assert_close(out, 2.0 * jnp.sin(x))
        assert_close(pull(jnp.ones(3, jnp.float32))[0], 2.0 * jnp.cos(x))
