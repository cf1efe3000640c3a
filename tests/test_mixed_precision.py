"""tf.keras.mixed_precision: float32 variables computing in float16/bfloat16; dynamic loss scaling."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

MP = tf.keras.mixed_precision


@pytest.fixture(autouse=True)
def _float32_afterwards():
    yield
    MP.set_global_policy("float32")


def test_policies():
    assert (MP.Policy("mixed_float16").compute_dtype, MP.Policy("mixed_float16").variable_dtype) == \
        ("float16", "float32")
    assert MP.Policy("mixed_bfloat16").compute_dtype == "bfloat16"
    assert MP.Policy("float64").variable_dtype == "float64"
    assert MP.global_policy().name == "float32"
    with pytest.raises(ValueError, match="mixed_float16"):
        MP.Policy("mixed_float8")


@pytest.mark.parametrize("policy, dtype", [("mixed_float16", jnp.float16), ("mixed_bfloat16", jnp.bfloat16)])
def test_layers_compute_in_half_precision_with_float32_variables(policy, dtype):
    MP.set_global_policy(policy)
    layer = tf.keras.layers.Dense(3, activation="relu")
    x = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    with tf.GradientTape() as tape:
        y = layer(tf.constant(x))
        loss = tf.reduce_sum(tf.cast(y, tf.float32) ** 2)
    assert layer.kernel.dtype == tf.float32 and layer.bias.dtype == tf.float32
    assert y.dtype == tf.as_dtype(dtype) and layer.compute_dtype == np.dtype(dtype).name
    grads = tape.gradient(loss, [layer.kernel, layer.bias])
    assert [g.dtype for g in grads] == [tf.float32, tf.float32]

    # Oracle: the same layer written in jnp, computing in the half dtype from float32 weights.
    def f(k, b):
        out = jax.nn.relu(jnp.asarray(x, dtype) @ k.astype(dtype) + b.astype(dtype))
        return out, jnp.sum(out.astype(jnp.float32) ** 2)
    k, b = layer.kernel.numpy(), layer.bias.numpy()
    want_y, _ = f(k, b)
    np.testing.assert_array_equal(np.asarray(y.numpy(), np.float32), np.asarray(want_y, np.float32))
    want_g = jax.grad(lambda k, b: f(k, b)[1], argnums=(0, 1))(k, b)
    for g, w in zip(grads, want_g):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-2, atol=1e-2)
    # A layer given dtype keeps it.
    assert tf.keras.layers.Dense(1, dtype="float32").compute_dtype == "float32"


def test_fit_with_mixed_float16_and_loss_scaling():
    MP.set_global_policy("mixed_float16")
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(1, dtype="float32")])
    opt = MP.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05))
    model.compile(optimizer=opt, loss="mse")
    x = np.random.RandomState(0).randn(64, 3).astype(np.float32)
    h = model.fit(x, x.sum(1, keepdims=True), batch_size=16, epochs=5, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
    # 20 steps: each one either applied, or skipped (float16 overflow at a scale of 2**15) halving the scale.
    skipped = 15 - np.log2(float(opt.dynamic_scale.numpy()))
    assert int(opt.iterations.numpy()) + skipped == 20 and int(opt.iterations.numpy()) >= 15
    assert model.layers[0].kernel.dtype == tf.float32
    assert model.predict(x[:2], verbose=0).dtype == np.float32


@pytest.mark.parametrize("compiled", [False, True])
def test_loss_scale_optimizer_skips_non_finite_steps_and_adapts_the_scale(compiled):
    inner = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    opt = MP.LossScaleOptimizer(inner, initial_scale=8.0, dynamic_growth_steps=2)
    v = tf.Variable([1.0, 2.0])
    step = lambda g: opt.apply_gradients([(g, v)])  # noqa: E731
    if compiled:
        step = tf.function(step)
    step(tf.constant([8.0, 16.0]))            # finite: the gradient is unscaled (/8) then applied
    np.testing.assert_allclose(v.numpy(), [0.9, 1.8], rtol=1e-6)
    slots = [s.numpy().copy() for s in inner.variables[1:]]
    assert (float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy())) == (8.0, 1)

    step(tf.constant([np.inf, 1.0]))          # non-finite: skipped, scale halved, counter reset
    np.testing.assert_allclose(v.numpy(), [0.9, 1.8], rtol=1e-6)
    assert int(inner.iterations.numpy()) == 1
    for s, before in zip(inner.variables[1:], slots):
        np.testing.assert_array_equal(s.numpy(), before)
    assert (float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy())) == (4.0, 0)

    step(tf.constant([np.nan, 1.0]))
    assert float(opt.dynamic_scale.numpy()) == 2.0 and int(inner.iterations.numpy()) == 1
    step(tf.constant([2.0, 2.0]))
    step(tf.constant([2.0, 2.0]))             # two finite steps in a row: the scale doubles
    assert (float(opt.dynamic_scale.numpy()), int(opt.step_counter.numpy())) == (4.0, 0)
    assert int(opt.iterations.numpy()) == 3


def test_scale_loss_and_unscale():
    opt = MP.LossScaleOptimizer(tf.keras.optimizers.Adam(), initial_scale=4.0)
    assert float(opt.scale_loss(tf.constant(2.0))) == 8.0
    assert opt.learning_rate is not None and opt in [opt]


@pytest.mark.parametrize("name", ["get_scaled_loss", "get_unscaled_gradients"])
def test_keras2_loss_scaling_methods_are_gone(name):
    # TF 2.21 (Keras 3), the mixed-precision guide's custom loop:
    # AttributeError: 'LossScaleOptimizer' object has no attribute 'get_scaled_loss'
    opt = MP.LossScaleOptimizer(tf.keras.optimizers.RMSprop())
    with pytest.raises(AttributeError, match=f"^'LossScaleOptimizer' object has no attribute '{name}'"):
        getattr(opt, name)
    assert not hasattr(opt, name)
