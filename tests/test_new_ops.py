"""tf.repeat, tf.nn.max_pool3d / avg_pool3d, tf.get_static_value, tf.meshgrid, tf.nn.embedding_lookup:
values and errors recorded with TensorFlow 2.21; gradients are checked in test_ops_grad.py."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def _l(t):
    return t.numpy().tolist()


# ---------------------------------------------------------------- repeat
REPEAT = {
    "flat": (lambda: tf.repeat([[1, 2], [3, 4]], 2), [1, 1, 2, 2, 3, 3, 4, 4]),
    "per_row": (lambda: tf.repeat([[1, 2], [3, 4]], [1, 3], axis=0), [[1, 2], [3, 4], [3, 4], [3, 4]]),
    "axis1": (lambda: tf.repeat([[1.0, 2.0], [3.0, 4.0]], 2, axis=1), [[1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 4.0, 4.0]]),
    "scalar": (lambda: tf.repeat(3, 4), [3, 3, 3, 3]),
    "zero_count": (lambda: tf.repeat([1, 2, 3], [0, 2, 1]), [2, 2, 3]),
    "one_count_list": (lambda: tf.repeat([[1, 2], [3, 4]], [2], axis=1), [[1, 1, 2, 2], [3, 3, 4, 4]]),
    "tensor_counts": (lambda: tf.repeat(tf.constant([5, 6]), tf.constant([2, 1])), [5, 5, 6]),
}


@pytest.mark.parametrize("name", sorted(REPEAT))
def test_repeat_values(name):
    fn, want = REPEAT[name]
    assert _l(fn()) == want


REPEAT_ERRORS = {
    "bad_len": (lambda: tf.repeat([1, 2, 3], [1, 2]), ValueError),
    "negative": (lambda: tf.repeat([1, 2], -1), tf.errors.InvalidArgumentError),
    "axis_out_of_range": (lambda: tf.repeat([1, 2], 2, axis=3), ValueError),
    "rank2_repeats": (lambda: tf.repeat([1, 2], [[1, 2]]), ValueError),
    "float_repeats": (lambda: tf.repeat([1, 2], 1.5), TypeError),
}


@pytest.mark.parametrize("name", sorted(REPEAT_ERRORS))
def test_repeat_errors(name):
    fn, cls = REPEAT_ERRORS[name]
    with pytest.raises(cls):
        fn()


def test_repeat_in_function_static_and_traced_repeats():
    f = tf.function(lambda x: tf.repeat(x, [2, 1], axis=0), autograph=False)
    assert _l(f(tf.constant([[1.0], [2.0]]))) == [[1.0], [1.0], [2.0]]
    g = tf.function(lambda x, r: tf.repeat(x, r), autograph=False)
    with pytest.raises(ValueError, match="concrete repeats"):
        g(tf.constant([1.0, 2.0]), tf.constant([1, 2]))


# ---------------------------------------------------------------- 3-D pooling
def _x():
    return tf.reshape(tf.range(2 * 4 * 4 * 4 * 3, dtype=tf.float32), [2, 4, 4, 4, 3]) / 10.0


def test_pool3d_values_equal_tensorflow():
    x = _x()
    m = tf.nn.max_pool3d(x, 2, 2, "VALID")
    assert m.shape == [2, 2, 2, 2, 3] and float(tf.reduce_sum(m)) == pytest.approx(1070.4, rel=1e-6)
    a = tf.nn.avg_pool3d(x, 3, 2, "SAME")
    assert a.shape == [2, 2, 2, 2, 3] and float(tf.reduce_sum(a)) == pytest.approx(994.80005, rel=1e-6)
    a5 = tf.nn.avg_pool3d(x, [1, 2, 3, 1, 1], [1, 1, 2, 3, 1], "SAME")
    np.testing.assert_allclose(a5.numpy()[0, :, :, :, 0], [
        [[3.6, 4.5], [5.4, 6.3]], [[8.4, 9.3], [10.2, 11.1]],
        [[13.2, 14.1], [15.0, 15.9]], [[15.6, 16.5], [17.4, 18.3]]], rtol=1e-5)
    m3 = tf.nn.max_pool3d(x, [2, 1, 3], [1, 2, 1], "SAME")
    assert float(tf.reduce_sum(m3[1, :, :, :, 2])) == pytest.approx(1026.4, rel=1e-6)
    assert tf.nn.max_pool3d(x, 2, 2, "VALID", data_format="NCDHW").shape == [2, 4, 2, 2, 1]


def test_pool3d_gradient_equals_tensorflow():
    x = tf.Variable(np.array([3., 7., 1., 5., 8., 2., 6., 4., 0., 9., 11., 10.], np.float32).reshape([1, 2, 3, 2, 1]))
    w = tf.reshape(tf.range(12.0), [1, 2, 3, 2, 1])
    with tf.GradientTape() as tape:
        avg = tf.nn.avg_pool3d(x, 2, 1, "SAME")
        mx = tf.nn.max_pool3d(x, [1, 2, 2], [1, 1, 1], "VALID")
        y = tf.reduce_sum(avg * w) + tf.reduce_sum(mx ** 2)
    np.testing.assert_allclose(avg.numpy().ravel(), [4.375, 6.25, 5.75, 6.5, 7.75, 6.0, 4.75, 6.5, 7.5, 9.5, 10.5, 10.0])
    assert mx.numpy().ravel().tolist() == [7.0, 8.0, 9.0, 11.0]
    np.testing.assert_allclose(tape.gradient(y, x).numpy().ravel(),
                               [0.0, 14.25, 0.25, 1.25, 17.25, 4.5, 1.5, 5.25, 3.75, 30.75, 30.25, 27.0], rtol=1e-6)


def test_pool3d_in_function():
    f = tf.function(lambda x: tf.nn.avg_pool3d(x, 2, 2, "VALID"), autograph=False)
    np.testing.assert_allclose(f(_x()).numpy(), tf.nn.avg_pool3d(_x(), 2, 2, "VALID").numpy())


@pytest.mark.parametrize("fn,cls", [
    (lambda x: tf.nn.max_pool3d(x, [2, 2], 1, "VALID"), ValueError),
    (lambda x: tf.nn.avg_pool3d(x, 2, 2, "FOO"), tf.errors.InvalidArgumentError),
    (lambda x: tf.nn.max_pool3d(x[0], 2, 2, "VALID"), ValueError),
])
def test_pool3d_errors(fn, cls):
    with pytest.raises(cls):
        fn(_x())


# ---------------------------------------------------------------- get_static_value
def test_get_static_value():
    v = tf.get_static_value(tf.constant([1, 2]))
    assert isinstance(v, np.ndarray) and v.tolist() == [1, 2] and v.dtype == np.int32
    assert tf.get_static_value(3) == 3
    assert tf.get_static_value([1.0, 2.0]) == [1.0, 2.0]
    assert tf.get_static_value(tf.Variable(1.0)) is None
    seen = []

    @tf.function
    def f(x):
        seen.append(tf.get_static_value(x))
        return x

    f(tf.zeros([2]))
    assert seen == [None]


# ---------------------------------------------------------------- meshgrid
def test_meshgrid():
    X, Y = tf.meshgrid([1, 2, 3], [4, 5])
    assert _l(X) == [[1, 2, 3], [1, 2, 3]] and _l(Y) == [[4, 4, 4], [5, 5, 5]]
    X, Y = tf.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    assert _l(X) == [[1, 1], [2, 2], [3, 3]] and _l(Y) == [[4, 5], [4, 5], [4, 5]]
    assert [t.shape for t in tf.meshgrid([1, 2, 3], [4, 5], [6, 7, 8, 9])] == [[2, 3, 4]] * 3
    assert tf.meshgrid() == []
    assert [t.shape for t in tf.meshgrid([[1, 2], [3, 4]], [5, 6, 7])] == [[3, 4], [3, 4]]
    with pytest.raises(ValueError, match="'xy' or 'ij'"):
        tf.meshgrid([1], [2], indexing="foo")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.meshgrid([1], [2.0])
    f = tf.function(lambda a, b: tf.meshgrid(a, b), autograph=False)
    assert _l(f(tf.constant([1.0, 2.0]), tf.constant([3.0]))[1]) == [[3.0, 3.0]]


# ---------------------------------------------------------------- embedding_lookup
def test_embedding_lookup_values():
    table = tf.constant([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    np.testing.assert_allclose(tf.nn.embedding_lookup(table, [[0, 2], [1, 0]], max_norm=1.0).numpy(),
                               [[[0.6, 0.8], [0.6, 0.8]], [[0.3, 0.4], [0.6, 0.8]]], rtol=1e-6)
    assert _l(tf.nn.embedding_lookup([tf.constant([[1.0], [2.0]]), tf.constant([[3.0]])], [2, 0])) == [[3.0], [1.0]]
    f = tf.function(lambda t, i: tf.nn.embedding_lookup(t, i), autograph=False)
    assert _l(f(table, tf.constant([2]))) == [[6.0, 8.0]]


# ---------------------------------------------------------------- slices and scatters (TF 2.21 outputs)

def test_slice_and_scatter_nd_as_tensorflow():
    t = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert tf.slice(t, [0, 1], [2, -1]).numpy().tolist() == [[2, 3], [5, 6]]
    assert tf.slice(t, tf.constant([1, 0]), [1, 2]).numpy().tolist() == [[4, 5]]
    # the tensor slicing guide
    t1 = tf.constant([0, 1, 2, 3, 4, 5, 6, 7])
    assert str(tf.slice(t1, begin=[1], size=[3])) == "tf.Tensor([1 2 3], shape=(3,), dtype=int32)"
    assert str(tf.scatter_nd(indices=tf.constant([[1], [3], [5], [7], [9]]), updates=tf.constant([2, 4, 6, 8, 10]),
                             shape=tf.constant([10]))) == \
        "tf.Tensor([ 0  2  0  4  0  6  0  8  0 10], shape=(10,), dtype=int32)"
    t11 = tf.constant([[2, 7, 0], [9, 0, 1], [0, 3, 8]])
    assert tf.tensor_scatter_nd_add(t11, indices=[[0, 2], [1, 1], [2, 0]], updates=[6, 5, 4]).numpy().tolist() == \
        [[2, 7, 6], [9, 5, 1], [4, 3, 8]]
    assert tf.tensor_scatter_nd_sub(t11, indices=[[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, 1], [2, 2]],
                                    updates=[1, 7, 9, -1, 1, 3, 7]).numpy().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    t14 = tf.constant([[-2, -7, 0], [-9, 0, 1], [0, -3, -8]])
    assert tf.tensor_scatter_nd_min(t14, indices=[[0, 2], [1, 1], [2, 0]], updates=[-6, -5, -4]).numpy().tolist() == \
        [[-2, -7, -6], [-9, -5, 1], [-4, -3, -8]]
    assert tf.tensor_scatter_nd_max(t14, indices=[[0, 2], [1, 1], [2, 0]], updates=[6, 5, 4]).numpy().tolist() == \
        [[-2, -7, 6], [-9, 5, 1], [4, -3, -8]]
    assert tf.tensor_scatter_nd_update(t, [[0], [1]], [[7, 7, 7], [8, 8, 8]]).numpy().tolist() == [[7, 7, 7], [8, 8, 8]]
    assert tf.scatter_nd([[1], [1]], [2., 3.], [3]).numpy().tolist() == [0., 5., 0.]


@pytest.mark.parametrize("call, message", [
    (lambda t: tf.slice(t, [0, 1], [3, 1]), "Expected size[0] in [0, 2], but got 3 [Op:Slice]"),
    (lambda t: tf.tensor_scatter_nd_update(t, [[5, 0]], [9]),
     "indices[0] = [5, 0] does not index into shape [2,3] [Op:TensorScatterUpdate]"),
    (lambda t: tf.tensor_scatter_nd_add(t, [[-1, 0]], [9]),
     "indices[0] = [-1, 0] does not index into shape [2,3] [Op:TensorScatterAdd]"),
    (lambda t: tf.scatter_nd([[7]], [1], [4]), "indices[0] = [7] does not index into shape [4] [Op:ScatterNd]"),
])
def test_slice_and_scatter_errors_as_tensorflow(call, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        call(tf.constant([[1, 2, 3], [4, 5, 6]]))
    assert str(e.value).endswith(message)


def test_scatter_and_slice_gradients_against_jax():
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(4, 3)).astype(np.float32)
    u0 = rng.normal(size=(2, 3)).astype(np.float32)
    idx = np.array([[1], [3]])
    x, u = tf.Variable(x0), tf.Variable(u0)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.sin(tf.tensor_scatter_nd_update(x, idx, u * 2.0))) + tf.reduce_sum(tf.slice(x, [1, 0], [2, -1]) ** 2)
    gx, gu = tape.gradient(y, [x, u])

    def f(x, u):
        return jnp.sum(jnp.sin(x.at[idx[:, 0]].set(u * 2.0))) + jnp.sum(x[1:3] ** 2)
    wx, wu = jax.grad(f, argnums=(0, 1))(x0, u0)
    np.testing.assert_allclose(gx.numpy(), wx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gu.numpy(), wu, rtol=1e-5, atol=1e-6)


def test_svd_qr_eigh_as_tensorflow():
    a = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    s, u, v = tf.linalg.svd(a)
    np.testing.assert_allclose(s.numpy(), [9.525518, 0.51429987], rtol=1e-5)      # TF 2.21
    np.testing.assert_allclose((u * s) @ tf.transpose(v), a.numpy(), atol=1e-5)
    np.testing.assert_allclose(tf.abs(u).numpy(), np.abs([[0.22984774, -0.8834608], [0.52474487, -0.2407829],
                                                          [0.81964207, 0.4018962]]), atol=1e-5)
    np.testing.assert_allclose(tf.linalg.svd(tf.constant([[1., 2.], [3., 4.]]), compute_uv=False).numpy(),
                               [5.4649854, 0.36596614], rtol=1e-5)
    q, r = tf.linalg.qr(a)
    np.testing.assert_allclose(r.numpy(), [[-5.91608, -7.437357], [0., 0.82807845]], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a.numpy(), atol=1e-5)
    e, v = tf.linalg.eigh(tf.constant([[2., 1.], [1., 2.]]))
    np.testing.assert_allclose(e.numpy(), [1., 3.], rtol=1e-6)
    np.testing.assert_allclose(np.abs(v.numpy()), np.full((2, 2), 0.70710677), rtol=1e-6)
    x = tf.Variable(a)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.linalg.svd(x, compute_uv=False))
    want = jax.grad(lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False)))(a.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- division, as TensorFlow rounds it
@pytest.mark.parametrize("divisor", [255.0, 3.0, 0.1, "vector", "column"])
def test_division_is_ieee_as_in_tensorflow(divisor):
    # TensorFlow divides with IEEE division (checked: TF 2.21's x / 255.0, x / 3.0 and x / vector
    # on these values equal NumPy's bit for bit); XLA would multiply by the reciprocal instead.
    rs = np.random.RandomState(0)
    x = (rs.rand(64, 100) * 10).astype(np.float32)
    d = {"vector": rs.rand(100).astype(np.float32) + 0.5,
         "column": rs.rand(64, 1).astype(np.float32) + 0.5}.get(divisor, divisor)
    expected = x / (np.float32(d) if isinstance(d, float) else d)
    f = tf.function(lambda a, b: a / b)
    for _ in range(3):   # the first time at a shape on the host, then compiled
        np.testing.assert_array_equal((tf.constant(x) / d).numpy(), expected)
        np.testing.assert_array_equal(f(tf.constant(x), tf.constant(d, tf.float32)).numpy(), expected)


def test_mean_is_the_sum_divided_as_in_tensorflow():
    # TensorFlow 2.21's reduce_mean equals its reduce_sum / n with IEEE division, bit for bit
    # (checked on these values, axis 0, axis 1 and all).
    x = (np.random.RandomState(0).rand(64, 100) * 10).astype(np.float32)
    for axis, n in ((0, 64), (1, 100), (None, 6400)):
        for _ in range(2):
            t = tf.constant(x)
            np.testing.assert_array_equal(tf.reduce_mean(t, axis=axis).numpy(),
                                          tf.reduce_sum(t, axis=axis).numpy() / np.float32(n))
