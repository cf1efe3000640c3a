"""tf.IndexedSlices: returned by tape.gradient exactly where TensorFlow returns it.

Expected values (indices, values, types) were recorded with TensorFlow 2.21.
"""
import re
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

INIT = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


def _grad(fn, source=None, **kwargs):
    v = tf.Variable(INIT) if source is None else source
    with tf.GradientTape() as tape:
        if not isinstance(v, tf.Variable):
            tape.watch(v)
        y = fn(v)
    return tape.gradient(y, v, **kwargs)


def _assert_slices(g, indices, values, dense_shape=(3, 2)):
    assert isinstance(g, tf.IndexedSlices), type(g)
    assert g.indices.numpy().tolist() == indices
    np.testing.assert_allclose(g.values.numpy(), values, rtol=1e-6)
    assert g.dense_shape.numpy().tolist() == list(dense_shape)
    assert g.dense_shape.dtype == tf.int32


def test_gather_of_variable_is_indexed_slices():
    g = _grad(lambda v: tf.reduce_sum(tf.gather(v, [0, 2, 0])))
    _assert_slices(g, [0, 2, 0], np.ones((3, 2)))
    assert g.dtype == tf.float32 and g.shape == [3, 2]


def test_gather_of_watched_constant_is_indexed_slices():
    g = _grad(lambda c: tf.reduce_sum(tf.gather(c, [0, 2, 0])), source=tf.constant(INIT))
    _assert_slices(g, [0, 2, 0], np.ones((3, 2)))


def test_embedding_lookup_flattens_ids():
    g = _grad(lambda v: tf.reduce_sum(tf.nn.embedding_lookup(v, [[0, 2], [1, 1]])))
    _assert_slices(g, [0, 2, 1, 1], np.ones((4, 2)))


def test_two_gathers_concatenate_in_tape_order():
    g = _grad(lambda v: tf.reduce_sum(tf.gather(v, [0, 2])) + tf.reduce_sum(tf.gather(v, [1])))
    _assert_slices(g, [0, 2, 1], np.ones((3, 2)))


def test_output_gradients_are_the_values():
    g = _grad(lambda v: tf.gather(v, [0, 2]), output_gradients=tf.ones([2, 2]) * 3)
    _assert_slices(g, [0, 2], np.full((2, 2), 3.0))


def test_int64_indices_keep_their_dtype():
    with jax.enable_x64(True):
        v = tf.Variable(INIT)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(v, tf.constant(np.array([0, 2], np.int64))))
        g = tape.gradient(y, v)
    assert isinstance(g, tf.IndexedSlices) and g.indices.dtype == tf.int64


@pytest.mark.parametrize("name,fn,want", [
    ("dense_and_gather", lambda v: tf.reduce_sum(tf.gather(v, [0, 2])) + tf.reduce_sum(v * 2.0),
     [[3.0, 3.0], [2.0, 2.0], [3.0, 3.0]]),
    ("dense_before_gather", lambda v: tf.reduce_sum(v * 2.0) + tf.reduce_sum(tf.gather(v, [0, 2])) +
     tf.reduce_sum(tf.gather(v, [1])), [[3.0, 3.0], [3.0, 3.0], [3.0, 3.0]]),
    ("gather_axis1", lambda v: tf.reduce_sum(tf.gather(v, [1, 0], axis=1)), np.ones((3, 2))),
    ("gather_of_intermediate", lambda v: tf.reduce_sum(tf.gather(v * 1.0, [0, 2])),
     [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]),
])
def test_dense_where_tensorflow_is_dense(name, fn, want):
    g = _grad(fn)
    assert type(g) is tf.Tensor, type(g)
    np.testing.assert_allclose(g.numpy(), want)


def test_unconnected_and_mixed_sources():
    v, w = tf.Variable(INIT), tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.gather(v, [0, 2])) * w
        z = w * 2.0
    gv, gw = tape.gradient(y, [v, w], unconnected_gradients="zero")
    assert isinstance(gv, tf.IndexedSlices) and type(gw) is tf.Tensor
    (gz,) = tape.gradient(z, [v], unconnected_gradients="zero")
    assert type(gz) is tf.Tensor and gz.numpy().tolist() == np.zeros((3, 2)).tolist()
    assert tape.gradient(z, v) is None
    assert type(tape.jacobian(y, v)) is tf.Tensor  # TensorFlow's jacobian is dense
    assert isinstance(tape.gradient(y, {"a": v})["a"], tf.IndexedSlices)


def test_densify_and_arithmetic():
    g = _grad(lambda v: tf.reduce_sum(tf.gather(v, [0, 2, 0])))
    dense = [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    assert type(tf.convert_to_tensor(g)) is tf.Tensor
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), dense)
    np.testing.assert_allclose(tf.multiply(g, 2.0).numpy(), np.multiply(dense, 2.0))
    assert float(tf.reduce_sum(g)) == 6.0
    neg = -g
    assert isinstance(neg, tf.IndexedSlices) and neg.values.numpy().tolist() == (-np.ones((3, 2))).tolist()
    assert "IndexedSlices(indices=" in str(g)


def test_constructed_without_dense_shape_cannot_densify():
    s = tf.IndexedSlices(tf.ones([2, 2]), tf.constant([0, 1]))
    assert s.shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="dense_shape"):
        tf.convert_to_tensor(s)
    s = tf.IndexedSlices(tf.ones([2, 2]), tf.constant([1, 1]), dense_shape=[3, 2])
    np.testing.assert_allclose(tf.convert_to_tensor(s).numpy(), [[0, 0], [2, 2], [0, 0]])


def _weighted(v):
    return tf.reduce_sum(tf.gather(v, [0, 2, 0]) * tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))


def test_clipping_uses_the_slices_as_tensorflow():
    g = _grad(_weighted)
    c = tf.clip_by_norm(g, 2.0)
    assert isinstance(c, tf.IndexedSlices)
    np.testing.assert_allclose(c.values.numpy(), [[0.2096569538116455, 0.419313907623291],
                                                  [0.6289708614349365, 0.838627815246582],
                                                  [1.0482847690582275, 1.257941722869873]], rtol=1e-6)
    (cg, ct), n = tf.clip_by_global_norm([g, tf.constant([3.0])], 2.0)
    assert isinstance(cg, tf.IndexedSlices) and type(ct) is tf.Tensor
    np.testing.assert_allclose(cg.values.numpy(), [[0.2, 0.4], [0.6, 0.8], [1.0, 1.2]], rtol=1e-6)
    np.testing.assert_allclose(ct.numpy(), [0.6], rtol=1e-6)
    assert float(n) == pytest.approx(10.0)
    assert float(tf.linalg.global_norm([g])) == pytest.approx(9.539392, rel=1e-6)


# Three steps of each optimizer on tf.gather(v, rows) ** 2, recorded with TensorFlow 2.21 (Keras 3):
# the values for rows [0, 2] (unique indices: TensorFlow's sparse and dense paths agree) and for
# [0, 2, 0] (a repeated index: Keras 3 squares each slice on its own in Adam/Adagrad/RMSprop and
# scatters them one after another, which tapejax reproduces; the dense gradient's result differs).
TF_STEPS = {
    "sgd": (lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
            [[0.062000006437301636, 0.12400001287460327], [3.0, 4.0], [0.309999942779541, 0.37200021743774414]],
            [[-0.5400000214576721, -1.0800000429153442], [3.0, 4.0], [0.309999942779541, 0.37200021743774414]]),
    "adam": (lambda: tf.keras.optimizers.Adam(0.1),
             [[0.7015886306762695, 1.7006256580352783], [3.0, 4.0], [4.7002153396606445, 5.700176239013672]],
             [[0.5795562267303467, 1.5771201848983765], [3.0, 4.0], [4.7002153396606445, 5.700176239013672]]),
    "adagrad": (lambda: tf.keras.optimizers.Adagrad(0.1),
                [[0.7822992205619812, 1.776296615600586], [3.0, 4.0], [4.7732954025268555, 5.772991180419922]],
                [[0.696645975112915, 1.685948133468628], [3.0, 4.0], [4.7732954025268555, 5.772991180419922]]),
    "rmsprop": (lambda: tf.keras.optimizers.RMSprop(0.1),
                [[0.3691806197166443, 1.308717966079712], [3.0, 4.0], [4.2792887687683105, 5.276313781738281]],
                [[0.19345039129257202, 1.0552904605865479], [3.0, 4.0], [4.2792887687683105, 5.276313781738281]]),
}


def _steps(make, rows, sparse):
    v, opt = tf.Variable(INIT), make()
    for _ in range(3):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(v, rows) ** 2)
        g = tape.gradient(y, v)
        assert isinstance(g, tf.IndexedSlices)
        opt.apply_gradients([(g if sparse else tf.convert_to_tensor(g), v)])
    return v.numpy()


@pytest.mark.parametrize("name", sorted(TF_STEPS))
def test_optimizer_step_with_indexed_slices_equals_tensorflow(name):
    make, want, want_repeated = TF_STEPS[name]
    np.testing.assert_allclose(_steps(make, [0, 2], sparse=True), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_steps(make, [0, 2], sparse=False), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(_steps(make, [0, 2, 0], sparse=True), np.float32(want_repeated))
    # the dense gradient itself is JAX's
    v = tf.Variable(INIT)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(v, [0, 2, 0]) ** 2)
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(y, v)).numpy(), _dense_grad(v).numpy())


def _dense_grad(v):
    rows = jnp.asarray([0, 2, 0])
    return tf.Tensor(jax.grad(lambda p: jnp.sum(p[rows] ** 2))(jnp.asarray(v.numpy())))


def test_in_function_step_and_return():
    v = tf.Variable(INIT)
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(ids):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.nn.embedding_lookup(v, ids) ** 2)
        g = tape.gradient(y, v)
        opt.apply_gradients([(g, v)])
        return g

    g = step(tf.constant([0, 2, 0]))
    _assert_slices(g, [0, 2, 0], [[2.0, 4.0], [10.0, 12.0], [2.0, 4.0]])
    np.testing.assert_allclose(v.numpy(), INIT - 0.1 * np.array([[4.0, 8.0], [0, 0], [10.0, 12.0]]), rtol=1e-6)


def test_outer_tape_over_function_gets_dense_values():
    v = tf.Variable(INIT)

    @tf.function
    def f(ids):
        return tf.reduce_sum(tf.gather(v, ids) ** 2)

    with tf.GradientTape() as tape:
        y = f(tf.constant([0, 2]))
    g = tape.gradient(y, v)
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), [[2.0, 4.0], [0.0, 0.0], [10.0, 12.0]])


def test_second_order_through_densified_slices():
    v = tf.Variable(INIT)
    rows = jnp.asarray([0, 2, 0])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.gather(v, [0, 2, 0]) ** 3)
        g = inner.gradient(y, v)
        z = tf.reduce_sum(tf.convert_to_tensor(g) ** 2)
    want = jax.grad(lambda p: jnp.sum(jax.grad(lambda q: jnp.sum(q[rows] ** 3))(p) ** 2))(jnp.asarray(INIT))
    np.testing.assert_allclose(tf.convert_to_tensor(outer.gradient(z, v)).numpy(), want, rtol=1e-5)


def test_keras_embedding_gradient_is_indexed_slices_as_in_tensorflow():
    # Recorded with TensorFlow 2.21 / Keras 3: the same seed, layer and ids.
    tf.keras.utils.set_random_seed(0)
    layer = tf.keras.layers.Embedding(5, 2)
    ids = tf.constant([[0, 3], [3, 1]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(ids) ** 2)
    g = tape.gradient(y, layer.trainable_variables)[0]
    assert isinstance(g, tf.IndexedSlices)
    assert np.asarray(g.indices).tolist() == [0, 3, 3, 1]
    np.testing.assert_allclose(np.asarray(g.values), [[0.00314, -0.03819], [-0.00019, 0.09735],
                                                      [-0.00019, 0.09735], [0.06778, -0.07868]], atol=1e-5)
    assert [int(d) for d in np.asarray(g.dense_shape)] == [5, 2]


def test_indexed_slices_repr_is_the_objects_as_tf():
    # tf.IndexedSlices docstring, TF 2.21: repr is the default object repr, str shows the parts.
    v = tf.Variable([[0., 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]])
    with tf.GradientTape() as tape:
        r = tf.gather(v, [1, 3])
    s = tape.gradient(r, v)
    assert re.fullmatch(r"<tapejax\.\S+\.IndexedSlices object at 0x[0-9a-f]+>", repr(s))
    assert str(s) == ("IndexedSlices(indices=tf.Tensor([1 3], shape=(2,), dtype=int32), values=tf.Tensor(\n"
                      "[[1. 1. 1.]\n [1. 1. 1.]], shape=(2, 3), dtype=float32), dense_shape=tf.Tensor([4 3], "
                      "shape=(2,), dtype=int32))")
