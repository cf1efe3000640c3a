"""tf.keras layers: forward equals a direct JAX/flax computation, tape gradients equal jax.grad,
Keras weight layouts, names and defaults, and the Layer life cycle."""
import os
import tempfile

import flax.linen as linen
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import layers as L
from conftest import assert_close

RS = np.random.RandomState(0)


def randn(*shape):
    return RS.randn(*shape).astype(np.float32)


def check_layer(layer, x, pure, rtol=1e-5, atol=1e-5, **call_kw):
    """Forward and tape gradients (input and trainable weights) against ``pure(x, *weights)`` and jax.grad."""
    xt = tf.constant(x)
    y0 = layer(xt, **call_kw)          # builds
    weights = layer.trainable_weights
    wvals = [np.asarray(w.numpy()) for w in weights]
    expected = pure(x, *wvals)
    assert_close(y0, expected, rtol=rtol, atol=atol)
    ct = randn(*np.shape(expected))
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt, **call_kw)
    n_nodes = len(tape._nodes)
    grads = tape.gradient(y, [xt] + weights, output_gradients=tf.constant(ct))
    want = jax.grad(lambda *a: jnp.sum(pure(*a) * ct), argnums=tuple(range(1 + len(wvals))))(x, *wvals)
    assert_close(grads, list(want), rtol=rtol, atol=atol)
    return n_nodes


# ---------------------------------------------------------------- core layers

@pytest.mark.parametrize("activation,fn", [
    (None, lambda y: y), ("relu", jax.nn.relu), (tf.nn.elu, jax.nn.elu), ("tanh", jnp.tanh),
    ("softmax", jax.nn.softmax), ("gelu", lambda y: jax.nn.gelu(y, approximate=False)),
    ("sigmoid", jax.nn.sigmoid), ("exponential", jnp.exp), (lambda t: t * 2.0, lambda y: y * 2.0),
])
def test_dense_forward_and_grads(activation, fn):
    layer = L.Dense(4, activation=activation)
    n = check_layer(layer, randn(3, 5), lambda x, k, b: fn(x @ k + b))
    if not callable(activation) or isinstance(activation, (str,)) or activation is tf.nn.elu:
        assert n == 1  # the layer call (activation fused) is one tape op


def test_layer_backward_uses_the_saved_output_not_a_second_forward():
    # The backward of act(x @ k + b) needs two matmuls (dx, dk); recomputing the
    # pre-activation for the activation's derivative would add a third.
    from tapejax._core import backward as _backward, engine as _engine
    from tapejax.keras.layers._builtin import _dense

    x, k, b, g = randn(8, 5), randn(5, 4), randn(4), randn(8, 4)

    def backward(act, with_output):
        static = (("act", act),)
        ans = _dense.fn(x, k, b, act=act)

        def f(x, k, b, ans, g):
            args = [x, k, b, ans] if with_output else [x, k, b]
            return _backward._node_vjp(_dense, static, (True,) * 3, (True,), args, [g])
        hlo = jax.jit(f).lower(x, k, b, ans, g).compile().as_text()
        return f(x, k, b, ans, g), hlo.count(" dot(")

    for act in (jax.nn.relu, jnp.tanh, jax.nn.sigmoid):
        want = jax.vjp(lambda *a: act(a[0] @ a[1] + a[2]), x, k, b)[1](g)
        (grads, n_saved), (grads_re, n_re) = backward(act, True), backward(act, False)
        assert_close(list(grads), list(want), rtol=1e-5, atol=1e-5)
        assert_close(list(grads_re), list(want), rtol=1e-5, atol=1e-5)
        assert n_saved == 2 and n_re == 3, (act, n_saved, n_re)


@pytest.mark.parametrize("activation,fn", [("tanh", jnp.tanh), ("sigmoid", jax.nn.sigmoid), ("relu", jax.nn.relu)])
def test_dense_second_order_through_saved_output(activation, fn):
    layer = L.Dense(3, activation=activation)
    x = randn(2, 4)
    layer(tf.constant(x))
    k, b = (w.numpy() for w in layer.trainable_weights)
    xt = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(xt)
        with tf.GradientTape() as inner:
            inner.watch(xt)
            y = tf.reduce_sum(layer(xt) ** 3)
        g = inner.gradient(y, xt)
        s = tf.reduce_sum(g * g)
    h = outer.gradient(s, xt)

    def loss(x):
        gx = jax.grad(lambda x: jnp.sum(fn(x @ k + b) ** 3))(x)
        return jnp.sum(gx * gx)
    assert_close(h, jax.grad(loss)(x), rtol=1e-4, atol=1e-4)


def test_dense_rank3_and_no_bias():
    check_layer(L.Dense(2, use_bias=False), randn(2, 3, 4), lambda x, k: x @ k)


def test_dense_weights_names_defaults():
    tf.keras.backend.clear_session()
    d0, d1 = L.Dense(10), L.Dense(10)
    assert (d0.name, d1.name) == ("dense", "dense_1")
    d0.build((None, 784))
    assert [w.name for w in d0.weights] == ["kernel", "bias"]          # Keras 3 names
    assert [w.path for w in d0.weights] == ["dense/kernel", "dense/bias"]
    assert d0.kernel.shape == (784, 10) and d0.bias.shape == (10,)
    assert d0.count_params() == 7850
    limit = np.sqrt(6 / (784 + 10))
    k = d0.kernel.numpy()
    assert np.abs(k).max() <= limit and np.abs(k).max() > 0.8 * limit  # glorot_uniform
    assert np.all(d0.bias.numpy() == 0)
    assert d0.built and d0.dtype == "float32"
    names = [type(l).__name__ for l in (L.Conv2D(1, 1), L.BatchNormalization(), L.ReLU(),
                                           L.GlobalAveragePooling2D(), L.Conv2DTranspose(1, 1))]
    assert names
    assert L.ReLU().name.startswith("re_lu") and L.Conv2DTranspose(1, 1).name.startswith("conv2d_transpose")


def test_initializers_by_name_and_object():
    d = L.Dense(3, kernel_initializer="ones", bias_initializer=tf.keras.initializers.Constant(0.5))
    d(tf.ones([1, 2]))
    assert np.all(d.kernel.numpy() == 1) and np.all(d.bias.numpy() == 0.5)
    for name in ["glorot_normal", "he_normal", "he_uniform", "random_normal", "random_uniform",
                 "truncated_normal", "zeros", "ones", "GlorotUniform"]:
        assert tf.keras.initializers.get(name)((3, 4)).shape == (3, 4)
    with pytest.raises(ValueError, match="Unknown initializer"):
        tf.keras.initializers.get("nope")
    with pytest.raises(TypeError, match="Pass a scalar or an array"):
        tf.keras.initializers.Constant(np.ones(3))((2, 2))
    # Keras 3 seeds unseeded initializers from Python's random: set_random_seed (not
    # tf.random.set_seed) reproduces them, with TF 2.21's numbers.
    tf.keras.utils.set_random_seed(3)
    a = tf.keras.initializers.GlorotUniform()((4, 4)).numpy()
    tf.keras.utils.set_random_seed(3)
    b = tf.keras.initializers.GlorotUniform()((4, 4)).numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[0], np.float32([-0.003582775592803955, -0.8384392857551575, 0.5530387759208679,
                                                   -0.7087268233299255]))
    w = tf.keras.initializers.HeNormal(seed=0)((400, 500)).numpy()
    assert abs(w.std() - np.sqrt(2 / 400)) < 0.05 * np.sqrt(2 / 400)


def _conv(x, k, strides=(1, 1), padding="VALID"):
    return jax.lax.conv_general_dilated(x, k, strides, padding, dimension_numbers=("NHWC", "HWIO", "NHWC"))


@pytest.mark.parametrize("kw", [dict(), dict(padding="same", strides=2), dict(strides=(2, 1))])
def test_conv2d(kw):
    layer = L.Conv2D(3, 3, activation="relu", **kw)
    strides = kw.get("strides", 1)
    strides = (strides, strides) if isinstance(strides, int) else strides
    pad = kw.get("padding", "valid").upper()
    n = check_layer(layer, randn(2, 7, 6, 2), lambda x, k, b: jax.nn.relu(_conv(x, k, strides, pad) + b),
                    rtol=1e-4, atol=1e-4)
    assert n == 1
    assert layer.kernel.shape == (3, 3, 2, 3)


def test_conv2d_transpose_is_gradient_of_conv():
    for padding, strides in [("valid", 2), ("same", 2), ("valid", 1)]:
        layer = L.Conv2DTranspose(4, 3, strides=strides, padding=padding)
        x = randn(2, 5, 5, 3)
        y = layer(tf.constant(x))
        k = layer.kernel.numpy()
        assert k.shape == (3, 3, 4, 3)
        out_hw = 5 * strides if padding == "same" else 5 * strides + max(3 - strides, 0)
        assert y.shape == (2, out_hw, out_hw, 4)
        # TF's conv2d_transpose(x, k) is d conv2d(z, k) / dz applied to x.
        z = jnp.zeros((2, out_hw, out_hw, 4), jnp.float32)
        _, pull = jax.vjp(lambda z: _conv(z, k, (strides, strides), padding.upper()), z)
        assert_close(y, pull(x)[0], rtol=1e-4, atol=1e-4)
    check_layer(L.Conv2DTranspose(2, 2, strides=2), randn(1, 3, 3, 2),
                lambda x, k, b: jax.vjp(lambda z: _conv(z, k, (2, 2)), jnp.zeros((1, 6, 6, 2), jnp.float32))[1](x)[0] + b,
                rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cls,fn", [
    (L.MaxPooling2D, lambda x: linen.max_pool(x, (2, 2), (2, 2), "VALID")),
    (L.AveragePooling2D, lambda x: linen.avg_pool(x, (2, 2), (2, 2), "VALID").astype(x.dtype)),
])
def test_pooling(cls, fn):
    assert check_layer(cls(), randn(2, 6, 7, 3), fn) == 1


def test_average_pooling_same_excludes_padding():
    y = L.AveragePooling2D(3, strides=1, padding="same")(tf.ones([1, 4, 4, 1]))
    np.testing.assert_allclose(y.numpy(), 1.0, rtol=1e-6)


def test_global_pooling_flatten_reshape():
    x = randn(2, 4, 5, 3)
    check_layer(L.GlobalAveragePooling2D(), x, lambda x: x.mean(axis=(1, 2)))
    check_layer(L.GlobalMaxPooling2D(), x, lambda x: x.max(axis=(1, 2)))
    check_layer(L.GlobalAveragePooling2D(keepdims=True), x, lambda x: x.mean(axis=(1, 2), keepdims=True))
    check_layer(L.Flatten(), x, lambda x: x.reshape(2, -1))
    check_layer(L.Reshape((20, 3)), x, lambda x: x.reshape(2, 20, 3))
    check_layer(L.Reshape((-1,)), x, lambda x: x.reshape(2, -1))


def test_activation_layers():
    x = randn(3, 4) * 3
    check_layer(L.Activation("sigmoid"), x, jax.nn.sigmoid)
    check_layer(L.ReLU(), x, jax.nn.relu)
    check_layer(L.ReLU(max_value=1.0, negative_slope=0.1), x,
                lambda x: jnp.minimum(jnp.where(x > 0, x, 0.1 * x), 1.0))
    check_layer(L.LeakyReLU(), x, lambda x: jnp.where(x > 0, x, 0.3 * x))
    check_layer(L.Softmax(), x, jax.nn.softmax)
    with pytest.raises(ValueError, match="Unknown activation"):
        L.Dense(2, activation="nope")


# ---------------------------------------------------------------- normalization

def _bn_ref(x, gamma, beta, mean, var, eps=1e-3):
    return (x - mean) / jnp.sqrt(var + eps) * gamma + beta


def test_batchnorm_training_forward_grads_and_moving_stats():
    x = randn(8, 5) * 2 + 1
    bn = L.BatchNormalization()
    n = check_layer(bn, x, lambda x, g, b: _bn_ref(x, g, b, x.mean(0), x.var(0)), rtol=1e-4, atol=1e-4,
                    training=True)
    assert n == 1
    assert [w.name for w in bn.weights] == ["gamma", "beta", "moving_mean", "moving_variance"]
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]
    assert not bn.moving_mean.trainable
    # check_layer ran two training calls: moving = moving * 0.99 + stat * 0.01, twice.
    mm, mv = np.zeros(5), np.ones(5)
    for _ in range(2):
        mm = mm * 0.99 + x.mean(0) * 0.01
        mv = mv * 0.99 + x.var(0) * 0.01
    np.testing.assert_allclose(bn.moving_mean.numpy(), mm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), mv, rtol=1e-5, atol=1e-6)
    # The moving statistics get no gradient: the assignment is state.
    with tf.GradientTape() as tape:
        y = bn(tf.constant(x), training=True)
    assert tape.gradient(y, bn.moving_mean) is None


def test_batchnorm_inference_uses_moving_stats():
    x = randn(4, 3)
    bn = L.BatchNormalization(momentum=0.5)
    bn(x)  # builds; inference does not update
    np.testing.assert_array_equal(bn.moving_mean.numpy(), 0.0)
    bn(x, training=True)
    mm, mv = bn.moving_mean.numpy(), bn.moving_variance.numpy()
    check_layer(bn, x, lambda x, g, b: _bn_ref(x, g, b, mm, mv), rtol=1e-5)
    check_layer(bn, x, lambda x, g, b: _bn_ref(x, g, b, mm, mv), training=False)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), mm)


def test_batchnorm_4d_moving_variance_is_the_batch_variance():
    # Keras 3's rule for every rank (no Bessel correction, unlike Keras 2's fused kernel).
    x = randn(2, 3, 3, 4)
    bn = L.BatchNormalization(momentum=0.0)
    y = bn(x, training=True)
    assert_close(y, _bn_ref(x, 1.0, 0.0, x.mean((0, 1, 2)), x.var((0, 1, 2))), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bn.moving_variance.numpy(), x.var((0, 1, 2)), rtol=1e-5)


def test_batchnorm_frozen_runs_in_inference_mode():
    bn = L.BatchNormalization()
    bn.build((None, 3))
    bn.trainable = False
    bn(randn(4, 3) + 5, training=True)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), 0.0)


def test_layer_normalization():
    x = randn(3, 4, 6)

    def ref(x, g, b):
        m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - m) / jnp.sqrt(v + 1e-3) * g + b

    assert check_layer(L.LayerNormalization(), x, ref, rtol=1e-4, atol=1e-4) == 1


def test_embedding():
    emb = L.Embedding(10, 3)
    ids = np.array([[1, 2], [3, 1]], np.int32)
    y = emb(tf.constant(ids))
    table = emb.embeddings.numpy()
    assert emb.embeddings.shape == (10, 3) and np.abs(table).max() <= 0.05
    assert_close(y, table[ids])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(emb(tf.constant(ids)) ** 2)
    g = tape.gradient(loss, emb.embeddings)
    assert isinstance(g, tf.IndexedSlices)  # as Keras 3 on TensorFlow
    want = jax.grad(lambda t: jnp.sum(t[ids] ** 2))(table)
    assert_close(tf.convert_to_tensor(g), want)


def test_merge_layers():
    a, b = randn(2, 3), randn(2, 3)
    assert_close(L.Concatenate()([tf.constant(a), tf.constant(b)]), np.concatenate([a, b], -1))
    assert_close(L.Concatenate(axis=0)([a, b]), np.concatenate([a, b], 0))
    assert_close(L.Add()([a, b]), a + b)
    assert_close(L.Subtract()([a, b]), a - b)
    assert_close(L.Multiply()([a, b]), a * b)
    assert_close(L.Average()([a, b]), (a + b) / 2, rtol=1e-6)
    with pytest.raises(ValueError, match="list of at least 2"):
        L.Add()(tf.constant(a))


# ---------------------------------------------------------------- dropout

def test_dropout_inference_identity_and_training_scaling():
    x = tf.ones([2000])
    drop = L.Dropout(0.25)
    assert_close(drop(x), np.ones(2000))
    assert_close(drop(x, training=False), np.ones(2000))
    y = drop(x, training=True).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    assert 0.2 < 1 - kept.mean() < 0.3
    y2 = drop(x, training=True).numpy()
    assert not np.array_equal(y, y2)  # a fresh key each call
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = drop(x, training=True)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g, np.where(y.numpy() != 0, 1 / 0.75, 0.0), rtol=1e-6)


def test_dropout_masks_and_seeds_are_keras3s():
    """Keras 3's Dropout owns a SeedGenerator (a seed from Python's random when none is given) and
    calls TF's stateless_dropout with its next [seed, counter]: masks, a tf.function's masks, and
    the weights of the layers made after it. Recorded from TF 2.21 (Keras 3)."""
    tf.keras.utils.set_random_seed(42)
    d = tf.keras.layers.Dropout(0.5)
    x = tf.ones([2, 6])
    assert d(x, training=True).numpy().tolist() == [[2.0, 2.0, 0.0, 2.0, 0.0, 2.0], [2.0, 0.0, 2.0, 2.0, 0.0, 0.0]]
    assert d(x, training=True).numpy().tolist() == [[2.0, 0.0, 0.0, 2.0, 2.0, 0.0], [2.0, 0.0, 2.0, 0.0, 2.0, 2.0]]
    e = tf.keras.layers.Dropout(0.25, seed=3, noise_shape=(None, 1))
    assert e(tf.ones([4, 3]), training=True).numpy().tolist() == [[0.0] * 3] + [[1.3333333730697632] * 3] * 3
    f = tf.keras.layers.Dropout(0.5)

    @tf.function
    def step(x):
        return f(x, training=True)
    assert step(x).numpy().tolist() == [[2.0, 0.0, 2.0, 2.0, 2.0, 0.0], [2.0, 2.0, 0.0, 0.0, 0.0, 2.0]]
    assert step(x).numpy().tolist() == [[2.0, 2.0, 2.0, 0.0, 0.0, 2.0], [2.0, 2.0, 0.0, 0.0, 2.0, 2.0]]
    # the layer's generator, not the global seed, picks the mask
    tf.random.set_seed(1)
    a = d(x, training=True).numpy()
    tf.random.set_seed(1)
    assert not np.array_equal(a, d(x, training=True).numpy())
    tf.keras.utils.set_random_seed(42)
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dropout(0.2),
                             tf.keras.layers.Dense(2)])
    np.testing.assert_array_equal(m.layers[-1].kernel.numpy(), np.array(
        [[0.7511440515518188, -0.05059242248535156], [-0.25792938470840454, -0.6872323155403137],
         [-0.23139142990112305, 0.7876588106155396]], np.float32))
    assert tf.keras.layers.Dropout(0.0).get_config()["seed"] is None and len(m.weights) == 4


def test_fit_with_dropout_trains_as_keras3():
    """compile/fit (Adam, from_logits loss, accuracy) of a seeded model with a Dropout, shuffle=False.
    Recorded from TF 2.21 (Keras 3)."""
    tf.keras.utils.set_random_seed(42)
    rng = np.random.RandomState(0)
    x = rng.rand(256, 28, 28).astype("float32")
    y = rng.randint(0, 10, 256).astype("uint8")
    model = tf.keras.Sequential([tf.keras.Input((28, 28)), L.Flatten(), L.Dense(32, activation="relu"),
                                 L.Dropout(0.2), L.Dense(10)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    h = model.fit(x, y, epochs=3, shuffle=False, verbose=0, batch_size=32)
    got = {k: [round(float(v), 5) for v in vs] for k, vs in h.history.items()}
    assert got == {'accuracy': [0.12109, 0.12891, 0.16797], 'loss': [2.42286, 2.27594, 2.26325]}
    np.testing.assert_allclose(model.layers[-1].kernel.numpy()[0, :4],
                               [0.2591693, -0.01745602, -0.08899409, -0.23711766], rtol=1e-5, atol=1e-6)


def test_training_flag_propagates_to_nested_layers():
    class Block(L.Layer):
        def __init__(self):
            super().__init__()
            self.drop = L.Dropout(0.5)

        def call(self, x):  # no training argument: Keras forwards the outer call's value
            return self.drop(x)

    block = Block()
    x = tf.ones([1000])
    assert np.all(block(x).numpy() == 1)
    assert np.any(block(x, training=True).numpy() == 0)


# ---------------------------------------------------------------- Layer life cycle

class Linear(L.Layer):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.scale = tf.Variable(2.0, name="scale")        # a tf.Variable attribute
        self.offset = tf.Variable(0.0, trainable=False, name="offset")

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1], self.units), initializer="random_normal")
        self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")
        self.counter = self.add_weight(name="counter", shape=(), initializer="zeros", trainable=False)

    def call(self, inputs, training=None):
        self.last_training = training
        return (tf.matmul(inputs, self.w) + self.b) * self.scale + self.offset


def test_custom_layer_add_weight_and_variable_attribute():
    layer = Linear(name="linear")
    assert not layer.built
    x = randn(2, 4)
    y = layer(x)
    assert layer.built and layer.last_training is None
    layer(x, training=True)
    assert layer.last_training is True
    # add_weight makes Keras 3 variables (name, path); a plain tf.Variable attribute is not a
    # weight (TF 2.21, Keras 3.15: not in `weights`, not counted; gradients still reach it)
    assert [getattr(v, "path", v.name) for v in layer.trainable_weights] == ["linear/w", "linear/b"]
    assert [getattr(v, "path", v.name) for v in layer.non_trainable_weights] == ["linear/counter"]
    assert len(layer.weights) == 3 and layer.variables == layer.weights
    assert layer.trainable_variables == layer.trainable_weights
    assert_close(y, (x @ layer.w.numpy() + layer.b.numpy()) * 2.0, rtol=1e-5)
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(layer(x))
    grads = tape.gradient(out, layer.trainable_weights + [layer.scale])
    assert all(g is not None for g in grads)
    assert layer.count_params() == 12 + 3 + 1


def test_sublayers_tracked_in_assignment_order_and_trainable_freezes():
    class Block(L.Layer):
        def __init__(self):
            super().__init__()
            self.second = L.Dense(2, name="b_second")
            self.first = L.Dense(3, name="a_first")
            self.extra = [L.Dense(1, name="listed")]

        def call(self, x):
            return self.extra[0](self.second(self.first(x)))

    block = Block()
    block(tf.ones([1, 4]))
    names = [v.path for v in block.trainable_weights]
    assert names[0].startswith(block.name + "/b_second/kernel")
    assert [n.split("/")[1] for n in names] == ["b_second", "b_second", "a_first", "a_first", "listed", "listed"]
    with pytest.raises(AttributeError, match="'Block' object has no attribute 'submodules'"):
        block.submodules    # Keras 3's layers are not tf.Modules (TF 2.21)
    block.first.trainable = False
    assert len(block.trainable_weights) == 4 and len(block.non_trainable_weights) == 2
    block.trainable = False
    assert block.trainable_weights == [] and len(block.non_trainable_weights) == 6
    assert len(block.weights) == 6
    block.trainable = True
    assert len(block.trainable_weights) == 6


def test_weights_listing_follows_containers_changed_after_a_listing():
    # A layer keeps the scan of its attributes between weight listings (twice a training
    # step); a container filled, emptied or with an item replaced afterwards, and a
    # Sequential's add/pop, must still show in the next listing.
    class Holder(L.Layer):
        def __init__(self):
            super().__init__()
            self.blocks, self.named = [], {}

        def call(self, x):
            return x

    h = Holder()
    assert h.trainable_weights == []
    h.blocks.append(tf.Variable(1.0))
    assert h.trainable_weights == []      # TF 2.21: a plain tf.Variable is not a weight
    h.blocks.append(tf.keras.Variable(1.0))
    assert len(h.trainable_weights) == 1
    h.blocks.append([L.Dense(2)])
    h.blocks[2][0].build((None, 3))
    assert [tuple(w.shape) for w in h.trainable_weights] == [(), (3, 2), (2,)]
    h.blocks[2][0] = L.Dense(5)
    h.blocks[2][0].build((None, 3))
    assert [tuple(w.shape) for w in h.trainable_weights] == [(), (3, 5), (5,)]
    h.named["x"] = L.Dense(1)
    h.named["x"].build((None, 2))
    assert len(h.trainable_weights) == 5
    del h.blocks
    assert [tuple(w.shape) for w in h.trainable_weights] == [(), (2, 1), (1,)]

    model = tf.keras.Sequential([tf.keras.Input((2,)), L.Dense(3)])
    assert len(model.trainable_weights) == 2
    model.add(L.Dense(4))
    assert [tuple(w.shape) for w in model.trainable_weights] == [(2, 3), (3,), (3, 4), (4,)]
    model.pop()
    assert len(model.trainable_weights) == 2 and len(model.layers) == 1


def test_get_set_weights_and_errors():
    d = L.Dense(2)
    with pytest.raises(ValueError, match="isn't built"):
        d.count_params()
    d.build((None, 3))
    w = d.get_weights()
    assert [a.shape for a in w] == [(3, 2), (2,)]
    d.set_weights([np.ones((3, 2)), np.full(2, 0.5)])
    assert_close(d(tf.ones([1, 3])), np.array([[3.5, 3.5]]))
    with pytest.raises(ValueError, match="expecting 2 weights"):
        d.set_weights([np.ones((3, 2))])
    with pytest.raises(ValueError, match="not compatible"):
        d.set_weights([np.ones((2, 2)), np.ones(2)])
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        L.Dense(2, unitz=3)
    cfg = d.get_config()
    assert cfg["units"] == 2 and cfg["name"] == d.name
    assert L.Dense.from_config({"units": 4}).units == 4


def test_input_shape_kwarg_and_compute_output_shape():
    d = L.Dense(4, input_shape=(3,))
    assert d._k_batch_input_shape == (None, 3)
    assert L.Conv2D(8, 3).compute_output_shape((None, None, None, 1)) == (None, None, None, 8)
    assert L.Conv2D(8, 3, strides=2).compute_output_shape((None, 9, 9, 1)) == (None, 4, 4, 8)
    assert L.Flatten().compute_output_shape((None, 2, 3)) == (None, 6)


def test_regularizer_losses():
    d = L.Dense(2, kernel_initializer="ones", kernel_regularizer="l2")
    d(tf.ones([1, 3]))
    assert len(d.losses) == 1
    np.testing.assert_allclose(float(d.losses[0]), 0.01 * 6, rtol=1e-6)


def test_numpy_and_float64_inputs_are_converted():
    d = L.Dense(2)
    y = d(np.ones((1, 3)))  # float64 numpy
    assert y.dtype == tf.float32


# ---------------------------------------------------------------- flax bridge

def test_flax_linen_layer_forward_and_grads():
    module = linen.Sequential([linen.Dense(5), linen.relu, linen.Dense(2)])
    layer = L.FlaxLayer(module)
    x = randn(3, 4)
    layer(tf.constant(x))
    names = [v.path for v in layer.trainable_weights]
    assert all(n.startswith(layer.name + "/params/") for n in names) and len(names) == 4

    vals = [v.numpy() for v in layer.trainable_weights]
    _, tree = jax.tree_util.tree_flatten({"params": module.init(jax.random.key(0), x)["params"]})

    def pure(x, *leaves):
        return module.apply(jax.tree_util.tree_unflatten(tree, leaves), x)

    assert check_layer(layer, x, pure, rtol=1e-5) == 1
    del vals


def test_flax_linen_batch_stats_are_updated():
    module = linen.BatchNorm(use_running_average=False, momentum=0.5)
    layer = L.FlaxLayer(module)
    x = randn(6, 3) + 2
    layer(x)
    assert len(layer.non_trainable_weights) == 2
    mean = [v for v in layer.non_trainable_weights if v.name.endswith("mean")][0]
    np.testing.assert_allclose(mean.numpy(), 0.5 * x.mean(0), rtol=1e-5)


def test_flax_nnx_layer():
    from flax import nnx
    module = nnx.Linear(4, 3, rngs=nnx.Rngs(0))
    layer = L.FlaxLayer(module)
    x = randn(2, 4)
    k, b = module.kernel[...], module.bias[...]
    assert_close(layer(x), x @ np.asarray(k) + np.asarray(b), rtol=1e-5)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x) ** 2)
    grads = tape.gradient(y, layer.trainable_weights)
    by_name = {v.name: g for v, g in zip(layer.trainable_weights, grads)}
    gk, gb = jax.grad(lambda k, b: jnp.sum((x @ k + b) ** 2), argnums=(0, 1))(k, b)
    assert_close([by_name["kernel"], by_name["bias"]], [gk, gb], rtol=1e-5)


def test_tf_guide_custom_layers_with_tf_initializers():
    # The TensorFlow guide's custom layers: tf.Variable attributes made with tf.*_initializer.
    # TF 2.21 (Keras 3.15): they compute, but are not the layers' weights.
    class Linear(L.Layer):
        def __init__(self, units=32, input_dim=32):
            super().__init__()
            w_init = tf.random_normal_initializer()
            self.w = tf.Variable(initial_value=w_init(shape=(input_dim, units), dtype="float32"), trainable=True)
            b_init = tf.zeros_initializer()
            self.b = tf.Variable(initial_value=b_init(shape=(units,), dtype="float32"), trainable=True)

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    class ComputeSum(L.Layer):
        def __init__(self, input_dim):
            super().__init__()
            self.total = tf.Variable(initial_value=tf.zeros((input_dim,)), trainable=False)

        def call(self, inputs):
            self.total.assign_add(tf.reduce_sum(inputs, axis=0))
            return self.total

    x = tf.ones((2, 2))
    linear = Linear(4, 2)
    assert linear(x).shape == (2, 4) and len(linear.trainable_weights) == 0
    my_sum = ComputeSum(2)
    my_sum(x)
    assert my_sum(x).numpy().tolist() == [4.0, 4.0]
    assert (len(my_sum.weights), len(my_sum.non_trainable_weights), len(my_sum.trainable_weights)) == (0, 0, 0)


def test_flax_linen_dropout_gets_rngs():
    class Net(linen.Module):
        @linen.compact
        def __call__(self, x, deterministic=True):
            return linen.Dropout(0.5, deterministic=deterministic)(linen.Dense(8)(x))

    layer = L.FlaxLayer(Net())
    x = tf.ones([4, 3])
    a = layer(x)
    assert_close(a, layer(x))
    b = layer(x, deterministic=False).numpy()
    assert np.any(b == 0) and not np.array_equal(b, layer(x, deterministic=False).numpy())


def test_conv1d_pooling1d_upsampling_zero_padding():
    x = randn(2, 9, 3)

    def conv1d(x, k, b):
        return jax.lax.conv_general_dilated(x, k, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")) + b

    assert check_layer(L.Conv1D(4, 3, strides=2, padding="same"), x, conv1d, rtol=1e-4, atol=1e-4) == 1
    check_layer(L.MaxPooling1D(), x, lambda x: linen.max_pool(x, (2,), (2,), "VALID"))
    check_layer(L.AveragePooling1D(3, padding="same"), x,
                lambda x: linen.avg_pool(x, (3,), (3,), "SAME", count_include_pad=False).astype(x.dtype))
    img = randn(1, 2, 3, 2)
    check_layer(L.UpSampling2D((2, 3)), img, lambda x: jnp.repeat(jnp.repeat(x, 2, 1), 3, 2))
    check_layer(L.ZeroPadding2D(((1, 0), (2, 1))), img, lambda x: jnp.pad(x, ((0, 0), (1, 0), (2, 1), (0, 0))))


def _lstm_ref(x, k, rk, b, return_sequences):
    u = rk.shape[0]
    h = c = jnp.zeros((x.shape[0], u))
    hs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ k + h @ rk + b
        i, f, g, o = (z[:, j * u:(j + 1) * u] for j in range(4))
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        hs.append(h)
    return jnp.stack(hs, 1) if return_sequences else h


@pytest.mark.parametrize("return_sequences", [False, True])
def test_lstm_matches_keras_equations(return_sequences):
    layer = L.LSTM(3, return_sequences=return_sequences)
    n = check_layer(layer, randn(2, 4, 5), lambda x, k, rk, b: _lstm_ref(x, k, rk, b, return_sequences),
                    rtol=1e-4, atol=1e-5)
    assert n == 1
    assert layer.kernel.shape == (5, 12) and layer.recurrent_kernel.shape == (3, 12)
    np.testing.assert_array_equal(layer.bias.numpy()[3:6], 1.0)  # unit_forget_bias
    q = layer.recurrent_kernel.numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)  # orthogonal rows, as Keras's init


def test_simple_rnn_and_return_state():
    def ref(x, k, rk, b):
        h = jnp.zeros((x.shape[0], rk.shape[0]))
        for t in reversed(range(x.shape[1])):
            h = jnp.tanh(x[:, t] @ k + h @ rk + b)
        return h

    check_layer(L.SimpleRNN(4, go_backwards=True), randn(2, 3, 2), ref, rtol=1e-4, atol=1e-5)
    out, h, c = L.LSTM(2, return_state=True)(tf.ones([1, 3, 2]))
    assert_close(out, h)
    assert c.shape == (1, 2)


def _gru_ref(x, k, rk, b=None, *, reset_after, return_sequences=False, go_backwards=False, return_state=False,
             act=jnp.tanh, rec_act=jax.nn.sigmoid):
    """Keras 3's GRUCell, step by step: gates z, r, h; ``h = z * h + (1 - z) * hh``."""
    u = rk.shape[0]
    if b is None:
        b_in = b_rec = jnp.zeros(3 * u)
    elif reset_after:
        b_in, b_rec = b[0], b[1]
    else:
        b_in, b_rec = b, None
    h = jnp.zeros((x.shape[0], u))
    hs = []
    steps = range(x.shape[1])
    for t in (reversed(steps) if go_backwards else steps):
        xp = x[:, t] @ k + b_in
        x_z, x_r, x_h = xp[:, :u], xp[:, u:2 * u], xp[:, 2 * u:]
        if reset_after:
            hp = h @ rk + b_rec
            r_z, r_r, r_h = hp[:, :u], hp[:, u:2 * u], hp[:, 2 * u:]
        else:
            r_z, r_r = h @ rk[:, :u], h @ rk[:, u:2 * u]
        z = rec_act(x_z + r_z)
        r = rec_act(x_r + r_r)
        hh = act(x_h + r * r_h) if reset_after else act(x_h + (r * h) @ rk[:, 2 * u:])
        h = z * h + (1 - z) * hh
        hs.append(h)
    out = jnp.stack(hs, 1) if return_sequences else h
    return (out, h) if return_state else out


def _randomize(layer, input_shape):
    """Builds the layer and gives every weight random values (a zero bias would hide a misplaced bias)."""
    layer.build(input_shape)
    for w in layer.weights:
        w.assign(0.5 * randn(*w.shape))


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("return_sequences,go_backwards", [(False, False), (True, False), (False, True),
                                                           (True, True)])
def test_gru_matches_keras_equations(reset_after, return_sequences, go_backwards):
    layer = L.GRU(3, reset_after=reset_after, return_sequences=return_sequences, go_backwards=go_backwards)
    x = randn(2, 4, 5)
    _randomize(layer, x.shape)
    n = check_layer(layer, x, lambda x, k, rk, b: _gru_ref(x, k, rk, b, reset_after=reset_after,
                                                           return_sequences=return_sequences,
                                                           go_backwards=go_backwards),
                    rtol=1e-4, atol=1e-5)
    assert n == 1  # the whole recurrence is one tape op
    assert [w.path for w in layer.weights] == [f"{layer.name}/kernel", f"{layer.name}/recurrent_kernel",
                                               f"{layer.name}/bias"]
    assert layer.kernel.shape == (5, 9) and layer.recurrent_kernel.shape == (3, 9)
    assert layer.bias.shape == ((2, 9) if reset_after else (9,))


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_defaults_no_bias_and_activations(reset_after):
    layer = L.GRU(4, reset_after=reset_after)
    assert layer.name.startswith("gru")
    assert layer.return_sequences is False and layer.return_state is False and layer.go_backwards is False
    y = layer(tf.ones([2, 3, 5]))
    assert y.shape == (2, 4)
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros((2, 12) if reset_after else (12,)))  # zeros
    q = layer.recurrent_kernel.numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)  # orthogonal, as Keras's init
    limit = np.sqrt(6.0 / (5 + 12))  # glorot_uniform
    k = layer.kernel.numpy()
    assert np.abs(k).max() <= limit and k.std() > 0.3 * limit

    plain = L.GRU(3, use_bias=False, reset_after=reset_after, activation="relu", return_sequences=True)
    x = randn(2, 4, 2)
    _randomize(plain, x.shape)
    assert [w.path for w in plain.weights] == [f"{plain.name}/kernel", f"{plain.name}/recurrent_kernel"]
    assert plain.bias is None
    n = check_layer(plain, x, lambda x, k, rk: _gru_ref(x, k, rk, reset_after=reset_after, return_sequences=True,
                                                        act=jax.nn.relu), rtol=1e-4, atol=1e-5)
    assert n == 1


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_gru_return_state(reset_after, return_sequences):
    layer = L.GRU(3, return_state=True, return_sequences=return_sequences, reset_after=reset_after,
                  go_backwards=True)
    x = randn(2, 4, 2)
    _randomize(layer, x.shape)
    weights = layer.trainable_weights
    wvals = [np.asarray(w.numpy()) for w in weights]

    def pure(*a):
        return _gru_ref(*a, reset_after=reset_after, return_sequences=return_sequences, go_backwards=True,
                        return_state=True)

    want_out, want_h = pure(x, *wvals)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        outs = layer(xt)
    assert isinstance(outs, list) and len(outs) == 2  # [output, final_h]
    out, h = outs
    assert len(tape._nodes) == 1
    assert_close(out, want_out, rtol=1e-4, atol=1e-5)
    assert_close(h, want_h, rtol=1e-4, atol=1e-5)
    assert_close(out[:, -1] if return_sequences else out, h)  # go_backwards: the reversed sequence, Keras's order
    c_out, c_h = randn(*want_out.shape), randn(*want_h.shape)
    grads = tape.gradient(outs, [xt] + weights, output_gradients=[tf.constant(c_out), tf.constant(c_h)])

    def loss(*a):
        o, s = pure(*a)
        return jnp.sum(o * c_out) + jnp.sum(s * c_h)
    want = jax.grad(loss, argnums=tuple(range(1 + len(wvals))))(x, *wvals)
    assert_close(grads, list(want), rtol=1e-4, atol=1e-5)


def test_hard_sigmoid_is_keras3():
    # Keras 3 (TensorFlow >= 2.16): relu6(x + 3) / 6, not Keras 2's clip(0.2 x + 0.5, 0, 1).
    x = np.array([-4.0, -1.5, 0.0, 1.5, 2.9, 4.0], np.float32)
    got = tf.keras.activations.get("hard_sigmoid")(tf.constant(x)).numpy()
    np.testing.assert_allclose(got, np.clip(x / 6.0 + 0.5, 0.0, 1.0), rtol=1e-6)


def test_add_weight_takes_keras3_arguments():
    # Keras 3.15 (TF 2.21; the custom layers tutorial): the name is a keyword only
    layer = tf.keras.layers.Layer(name="l")
    with pytest.raises(ValueError, match=r"^`name` must be passed as a keyword argument\. Received: "
                       r"add_weight\('kernel', \.\.\.\)\. Use: add_weight\(shape=\.\.\., name='kernel'\)\.$"):
        layer.add_weight("kernel", shape=[2, 3])
    w = layer.add_weight((2,), "ones", "float32", name="w")    # shape, initializer, dtype
    assert w.numpy().tolist() == [1.0, 1.0] and w.path == "l/w"
    with pytest.raises(ValueError, match="^`shape` was passed both positionally and as a keyword argument.$"):
        layer.add_weight((2,), shape=(2,))
    with pytest.raises(TypeError, match="at most 3 positional arguments but 4 were given"):
        layer.add_weight((2,), "ones", "float32", True)


def test_input_layer_takes_keras3_arguments_and_warns_on_input_shape():
    """Keras 3's InputLayer: ``shape`` first, ``input_shape=`` warns once from Keras's own line
    (cvae tutorial: ``InputLayer(input_shape=(28, 28, 1))``). Recorded from TF 2.21 with
    warnings.simplefilter("always")."""
    import warnings
    L = tf.keras.layers
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        layers = [L.InputLayer(input_shape=(3,)), L.InputLayer((3,)), L.InputLayer(shape=(3,), batch_size=4),
                  L.InputLayer(batch_input_shape=(2, 3)), L.InputLayer(input_shape=(3,), batch_size=5)]
    assert [(x.category.__name__, str(x.message)) for x in w] == [
        ("UserWarning", "Argument `input_shape` is deprecated. Use `shape` instead.")] * 2
    assert len({(x.filename, x.lineno) for x in w}) == 1   # one location: printed once per process
    assert [layer.batch_shape for layer in layers] == [(None, 3), (None, 3), (4, 3), (2, 3), (5, 3)]
    with pytest.raises(ValueError, match="^You cannot pass both `shape` and `batch_shape` at the same time.$"):
        L.InputLayer(shape=(3,), batch_shape=(1, 3))
    with pytest.raises(ValueError, match="^You must pass a `shape` argument.$"):
        L.InputLayer()
    model = tf.keras.Sequential([L.InputLayer(shape=(3,)), L.Dense(2)])
    assert model.built and model.output_shape == (None, 2)


def test_input_shape_argument_warns_as_keras3():
    """Keras 3 warns (UserWarning) on ``input_shape``/``input_dim`` given to a layer, not on
    ``InputLayer``/``Input``. Recorded from TF 2.21 (Keras 3) with warnings.simplefilter("always")
    on Dense(input_shape), Dense(input_dim), Dense(), InputLayer(shape), Input(shape), Conv2D(input_shape)."""
    import warnings
    tf21 = [('UserWarning', 'Do not pass an `input_shape`/`input_dim` argument to a layer. When using '
             'Sequential models, prefer using an `Input(shape)` object as the first layer in the model instead.')] * 3
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tf.keras.layers.Dense(10, input_shape=(None, 5))
        tf.keras.layers.Dense(10, input_dim=5)
        tf.keras.layers.Dense(10)
        tf.keras.layers.InputLayer(shape=(3,))
        tf.keras.Input(shape=(3,))
        tf.keras.layers.Conv2D(1, 1, input_shape=(None, None, 3))
    assert [(x.category.__name__, str(x.message)) for x in w] == tf21
    # stacklevel 2, as Keras: the warning points at the layer's super().__init__ call, so Python's
    # default filter shows it once per layer class (the tutorials print it per class).
    assert all(x.filename.endswith("_builtin.py") for x in w)


@pytest.mark.parametrize("make, message", [
    (lambda: tf.keras.layers.Dense(np.int32(784)),
     "Received an invalid value for `units`, expected a positive integer. Received: units=784"),
    (lambda: tf.keras.layers.Dense(0), "Received an invalid value for `units`, expected a positive integer. Received: units=0"),
    (lambda: tf.keras.layers.Dense(2.0),
     "Received an invalid value for `units`, expected a positive integer. Received: units=2.0"),
    (lambda: tf.keras.layers.Embedding(np.int64(10), 3),
     "`input_dim` must be a positive integer. Received: input_dim=10 (of type int64)."),
    (lambda: tf.keras.layers.Embedding(10, 0), "`output_dim` must be a positive integer. Received: output_dim=0 (of type int)."),
    (lambda: tf.keras.layers.Embedding(True, 3),
     "`input_dim` must be a positive integer. Received: input_dim=True (of type bool)."),
])
def test_dense_units_and_embedding_sizes_must_be_python_ints_as_keras3(make, message):
    # Recorded from TF 2.21; autoencoder.ipynb passes Dense(tf.math.reduce_prod(shape).numpy()), which
    # Keras 3 rejects. The check comes before the layer takes a name.
    tf.keras.backend.clear_session()
    with pytest.raises(ValueError) as e:
        make()
    assert str(e.value) == message
    assert tf.keras.layers.Dense(1).name == "dense" and tf.keras.layers.Dense(True).units is True


def test_weights_of_an_unbuilt_layer_as_keras3():
    # Recorded from TF 2.21 (Keras 3.15): Dense/Conv/Embedding read their weight through a property
    # that raises before build (keras/regression.ipynb: `linear_model.layers[1].kernel`);
    # BatchNormalization's weights are None until built; other attributes are plain missing ones.
    L = tf.keras.layers
    cases = [(L.Dense(3), "kernel", "You must build the layer before accessing `kernel`."),
             (L.Dense(3), "bias", "'Dense' object has no attribute 'bias'"),
             (L.Conv2D(2, 3), "kernel", "You must build the layer before accessing `kernel`."),
             (L.Conv1D(2, 3), "kernel", "You must build the layer before accessing `kernel`."),
             (L.Conv2DTranspose(2, 3), "kernel", "'Conv2DTranspose' object has no attribute 'kernel'"),
             (L.Embedding(5, 2), "embeddings", "You must build the layer before accessing `embeddings`."),
             (L.LayerNormalization(), "gamma", "'LayerNormalization' object has no attribute 'gamma'")]
    for layer, attr, message in cases:
        with pytest.raises(AttributeError) as e:
            getattr(layer, attr)
        assert str(e.value) == message
        assert not hasattr(layer, attr)
    bn = L.BatchNormalization()
    assert (bn.gamma, bn.beta, bn.moving_mean, bn.moving_variance) == (None, None, None, None)
    bn.build((None, 2))
    assert bn.gamma.shape == (2,) and bn.moving_variance.shape == (2,)
    d = L.Dense(3, use_bias=False)
    d.build((None, 2))
    assert d.kernel.shape == (2, 3) and d.bias is None
    assert [v.path for v in d.weights] == [f"{d.name}/kernel"]


def test_input_spec_checks_calls_as_keras3():
    # Recorded from TF 2.21 (Keras 3.15): a layer checks its first argument against its input_spec
    # before the call's own frame (an error inside a Sequential is framed by Sequential.call, with
    # its kwargs line); Dense needs rank >= 2, then the built size of the last axis.
    # structured_data/time_series.ipynb cell 52 (a Dense built on 57 features fed 456).
    L = tf.keras.layers

    def error(f):
        with pytest.raises(ValueError) as e:
            f()
        return str(e.value)
    assert error(lambda: L.Dense(3, name="dense")(tf.ones([4]))) == (
        "Input 0 with name 'None' of layer 'dense' is incompatible with the layer: expected min_ndim=2, found ndim=1. "
        "Full shape received: (4,)")
    d = L.Dense(3, name="dense_1")
    d(tf.ones([2, 5]))
    assert repr(d.input_spec) == "InputSpec(min_ndim=2, axes={-1: 5})"
    assert error(lambda: d(tf.ones([2, 4]))) == (
        "Input 0 with name 'None' of layer 'dense_1' is incompatible with the layer: expected axis -1 of input shape "
        "to have value 5, but received input with shape (2, 4)")
    assert d(tf.ones([2, 7, 5])).shape == (2, 7, 3)
    m = tf.keras.Sequential([L.Flatten(), L.Dense(2, name="dense_2")])
    m(tf.ones([1, 3, 4]))
    assert error(lambda: m(tf.ones([1, 4, 4]))) == (
        "Exception encountered when calling Sequential.call().\n\n\x1b[1mInput 0 with name 'None' of layer 'dense_2' is "
        "incompatible with the layer: expected axis -1 of input shape to have value 12, but received input with shape "
        "(1, 16)\x1b[0m\n\nArguments received by Sequential.call():\n  \u2022 inputs=tf.Tensor(shape=(1, 4, 4), "
        "dtype=float32)\n  \u2022 training=None\n  \u2022 mask=None\n  \u2022 kwargs=<class 'inspect._empty'>")
    c = L.Conv2D(2, 3)
    assert repr(c.input_spec) == "InputSpec(min_ndim=4)"
    c(tf.ones([1, 5, 5, 3]))
    assert repr(c.input_spec) == "InputSpec(min_ndim=4, axes={-1: 3})"
    assert repr(L.InputSpec(shape=(None, 28, 28, 1), dtype="float32")) == "InputSpec(dtype=float32, shape=(None, 28, 28, 1), ndim=4)"


def test_keras_layers_and_tf_modules_track_each_other_as_tf_2_21():
    # Recorded from TF 2.21 (Keras 3.15): a Keras layer's weights are its Keras Variables and its
    # Keras sub-layers' (a plain tf.Variable or tf.Module attribute is not one: fit does not
    # train it); a tf.Module does not look inside the Keras layers it holds; checkpoints save all.
    d = L.Dense(2)
    d(tf.ones([1, 3]))

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.d = d
            self.ls = [L.Dense(1)]
            self.v = tf.Variable(1.0, name="v")

    class Inner(tf.Module):
        def __init__(self):
            super().__init__()
            self.u = tf.Variable(2.0, name="u")

    class Lay(L.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.kv = tf.keras.Variable(3.0, name="kv")
            self.raw = tf.Variable(4.0, name="raw")

        def call(self, x):
            return x * self.inner.u * self.kv * self.raw

    m = M()
    assert [v.name for v in m.variables] == ["v:0"] and [v.name for v in m.trainable_variables] == ["v:0"]
    assert m.submodules == ()
    lay = Lay()
    lay(tf.ones([1]))
    assert [v.name for v in lay.variables] == ["kv"] and lay.non_trainable_weights == []
    with pytest.raises(AttributeError, match="'Lay' object has no attribute 'submodules'"):
        lay.submodules
    path = tf.train.Checkpoint(m=m, l=lay).save(os.path.join(tempfile.mkdtemp(), "c"))
    assert sorted(k for k, _ in tf.train.list_variables(path)) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "l/inner/u/.ATTRIBUTES/VARIABLE_VALUE", "l/kv/.ATTRIBUTES/VARIABLE_VALUE",
        "l/raw/.ATTRIBUTES/VARIABLE_VALUE", "m/d/_kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "m/d/bias/.ATTRIBUTES/VARIABLE_VALUE", "m/v/.ATTRIBUTES/VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]
    model = tf.keras.Sequential([Lay()])
    model(tf.ones([1, 1]))
    assert [v.name for v in model.trainable_variables] == ["kv"]
    model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(0.1))
    model.fit(np.ones((2, 1), np.float32), np.zeros((2, 1), np.float32), verbose=0)
    assert model.layers[0].raw.numpy() == 4.0 and model.layers[0].kv.numpy() != 3.0   # TF: raw not trained


def test_activity_regularizer_adds_its_penalty_per_batch_element():
    # Recorded from TF 2.21 (Keras 3.15): the penalty of each output, divided by the batch size,
    # is a loss of the call (and of fit / evaluate)
    act = L.Activation("linear", activity_regularizer=tf.keras.regularizers.L1(0.1))
    act(tf.constant([[1., -2.], [1., 1.]]))
    np.testing.assert_allclose([float(x) for x in act.losses], [0.25], rtol=1e-6)
    d = L.Dense(2, kernel_initializer="ones", activity_regularizer="l2")
    d(tf.constant([[1., 2.]]))
    np.testing.assert_allclose([float(x) for x in d.losses], [0.17999999225139618], rtol=1e-6)
    m = tf.keras.Sequential([tf.keras.Input((2,)), L.Dense(1, kernel_initializer="ones",
                                                           activity_regularizer=tf.keras.regularizers.L1(0.5))])
    m.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(0.0))
    assert m.evaluate(np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32), verbose=0) == 5.0
    m(tf.ones([3, 2]))
    assert [float(x) for x in m.losses] == [1.0]
