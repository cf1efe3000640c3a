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
