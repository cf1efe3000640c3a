"""tf.experimental.numpy (TensorFlow's guide "NumPy API on TensorFlow", site/en/guide/tf_numpy.ipynb).

Expected values were printed by TensorFlow 2.21 for the same code with
``import tensorflow.experimental.numpy as tnp``.
"""
import tapejax.experimental.numpy as tnp


def test_python_scalars_keep_their_type():
    # The guide's "Type inference during array creation" cell. Static arguments are cached by
    # value, and 1 == 1.0 == True: asarray(1.) once returned asarray(1)'s int64.
    assert tnp.asarray(1).dtype.name == "int64"
    assert tnp.asarray(1.).dtype.name == "float64"
    assert tnp.asarray(True).dtype.name == "bool"
    assert tnp.full([2], 1.).dtype.name == "float64"
    assert tnp.full([2], 1).dtype.name == "int64"
    assert str(tnp.asarray(1.)) == "tf.Tensor(1.0, shape=(), dtype=float64)"


import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tapejax as tf  # noqa: E402
from tapejax.experimental import numpy as _enp  # noqa: E402


@pytest.fixture
def numpy_behavior():
    before = set(vars(tf.Tensor))
    tnp.experimental_enable_numpy_behavior()
    yield
    for name in set(vars(tf.Tensor)) - before:   # other tests see Tensors as before
        delattr(tf.Tensor, name)


def test_random_draws_tensorflows_numbers():
    tnp.random.seed(1)
    got = [tnp.random.randint(0, 10, size=4), tnp.random.randint(5), tnp.random.rand(2),
           tnp.random.uniform(1, 2, size=(2,)), tnp.random.standard_normal(2), tnp.random.randn(2, 1),
           tnp.random.uniform(size=(3,))]
    want = [[6, 3, 4, 2], 2, [0.634219945658423, 0.1178209900689886], [1.8916176580614845, 1.0290499176337198],
            [-0.02262274225921746, -0.5090404651751818], [[-0.5315526845169021], [-0.7389499254459535]],
            [0.9373339656541799, 0.563928724812405, 0.7221611046081244]]
    for g, w in zip(got, want):
        assert g.dtype.name == ("int64" if isinstance(np.ravel(w)[0], (int, np.integer)) else "float64")
        np.testing.assert_allclose(g.numpy(), w, rtol=4e-16)
    with pytest.raises(ValueError, match="invalid literal for int"):
        tnp.random.seed("x")
    tnp.random.seed(3)
    np.testing.assert_allclose(tnp.random.randn(2).numpy(), [-0.42362075848568365, 2.271344179087035], rtol=4e-16)
    assert tnp.ndarray is tf.Tensor


def test_numpy_methods(numpy_behavior):
    x = tf.constant([[1.5, -2.5]])
    assert str(x.T) == "tf.Tensor(\n[[ 1.5]\n [-2.5]], shape=(2, 1), dtype=float32)"
    assert str(x.astype(tnp.int32)) == "tf.Tensor([[ 1 -2]], shape=(1, 2), dtype=int32)"
    assert str(x.clip(0, 1)) == "tf.Tensor([[1. 0.]], shape=(1, 2), dtype=float32)"
    assert str(x.max()) == "tf.Tensor(1.5, shape=(), dtype=float32)"
    assert str(x.mean(axis=0)) == "tf.Tensor([ 1.5 -2.5], shape=(2,), dtype=float32)"
    assert str(x.min()) == "tf.Tensor(-2.5, shape=(), dtype=float32)"
    assert str(x.ravel()) == str(x.flatten()) == "tf.Tensor([ 1.5 -2.5], shape=(2,), dtype=float32)"
    assert x.transpose((1, 0)).shape == (2, 1)
    assert x.reshape(-1).shape == (2,) and x.reshape([2, 1]).shape == (2, 1) and x.reshape(2, 1).shape == (2, 1)
    assert x.size == 2 and type(x.size) is np.int64
    assert x.tolist() == [[1.5, -2.5]] and x.data is x
    assert str(round(tf.constant(2.6))) == "tf.Tensor(3.0, shape=(), dtype=float32)"
    with tf.GradientTape() as t:
        t.watch(x)
        y = x.T.reshape(-1).astype(tf.float64).max()
    assert str(t.gradient(y, x)) == "tf.Tensor([[1. 0.]], shape=(1, 2), dtype=float32)"
    with pytest.raises(NotImplementedError, match="prefer_float32"):
        tnp.experimental_enable_numpy_behavior(prefer_float32=True)


def test_methods_are_absent_until_enabled():
    # TF 2.21 without experimental_enable_numpy_behavior: AttributeError
    assert not hasattr(tf.ones([2]), "astype") and not hasattr(tf.ones([2]), "T")
    assert "__getitem__" not in vars(tf.Tensor)   # the fixture put Tensor's own indexing back
    assert _enp.random is tnp.random


def test_numpy_indexing(numpy_behavior):
    # the guide's indexing cell, as TF 2.21 prints it
    x = tnp.arange(24).reshape(2, 3, 4)
    assert str(x[1, tnp.newaxis, 1:3, ...]) == \
        "tf.Tensor(\n[[[16 17 18 19]\n  [20 21 22 23]]], shape=(1, 2, 4), dtype=int64)"
    assert str(x[:, (True, False, True)]) == ("tf.Tensor(\n[[[ 0  1  2  3]\n  [ 8  9 10 11]]\n\n"
                                              " [[12 13 14 15]\n  [20 21 22 23]]], shape=(2, 2, 4), dtype=int64)")
    assert str(x[1, (0, 0, 1), tnp.asarray([0, 1, 1])]) == "tf.Tensor([12 13 17], shape=(3,), dtype=int64)"
    assert str(x[x > 20]) == "tf.Tensor([21 22 23], shape=(3,), dtype=int64)"
    m = tf.constant([[True, False, False], [False, True, False]])
    assert str(x[m]) == "tf.Tensor(\n[[ 0  1  2  3]\n [16 17 18 19]], shape=(2, 4), dtype=int64)"
    y = tf.constant([1., 2., 3.])
    with tf.GradientTape() as t:
        t.watch(y)
        z = tf.reduce_sum(y[(True, False, True),] * 2)
    assert str(t.gradient(z, y)) == "tf.Tensor([2. 0. 2.], shape=(3,), dtype=float32)"
    f = tf.function(lambda a: a[(True, False, True),], autograph=False)
    assert str(f(y)) == "tf.Tensor([1. 3.], shape=(2,), dtype=float32)"
