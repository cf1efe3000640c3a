"""TensorFlow's dtypes: 64-bit values stay exact, tapejax's own defaults stay float32/int32.

Expected dtypes and values were recorded from TensorFlow 2.21 running the same expressions.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import tapejax as tf

# (expression, TF 2.21's dtype, TF 2.21's value)
CASES = [
    ("tf.constant(np.array([2**40 + 3]))", "int64", [2 ** 40 + 3]),
    ("tf.constant(2**40)", "int64", 2 ** 40),
    ("tf.constant([1, 2**40])", "int64", [1, 2 ** 40]),
    ("tf.constant(np.array([1.5]))", "float64", [1.5]),
    ("tf.Variable(np.array([1.5])).read_value()", "float64", [1.5]),
    ("tf.constant(np.int64(3))", "int64", 3),
    ("tf.constant(np.float64(3))", "float64", 3.0),
    ("tf.constant([0.1], tf.float64)", "float64", [0.1]),
    ("tf.argmax([1., 3., 2.])", "int64", 1),
    ("tf.argmin([1., 3., 2.])", "int64", 0),
    ("tf.where([True, False, True])", "int64", [[0], [2]]),
    ("tf.math.count_nonzero([1, 0, 2])", "int64", 2),
    ("tf.reduce_mean([1, 2])", "int32", 1),
    ("tf.reduce_mean([-1, -2])", "int32", -1),
    ("tf.reduce_mean([[1, 2], [3, 4]], axis=0)", "int32", [2, 3]),
    ("tf.reduce_sum(tf.constant([2**31 - 1, 2**31 - 1], tf.int64))", "int64", 2 ** 32 - 2),
    ("tf.reduce_sum([1, 2])", "int32", 3),
    ("tf.reduce_prod([2, 3])", "int32", 6),
    ("tf.cumsum([1, 2])", "int32", [1, 3]),
    ("tf.constant(1.0) + np.float64(2.0)", "float32", 3.0),
    ("tf.constant([1.0]) + np.array([2.0])", "float32", [3.0]),
    ("np.array([2.0]) * tf.constant([1.5])", "float32", [3.0]),
    ("tf.constant(1.0) + 2", "float32", 3.0),
    ("tf.maximum(0., [1, -1])", "float32", [1.0, 0.0]),
    ("tf.constant([1.0]) + [1, 2]", "float32", [2.0, 3.0]),
    ("tf.gather([1.0, 2.0], [1])", "float32", [2.0]),
    ("tf.constant(np.array([1.5])) * 2.0", "float64", [3.0]),
    ("tf.sqrt(tf.constant([2.0], tf.float64))", "float64", [2 ** 0.5]),
    ("tf.range(5)", "int32", [0, 1, 2, 3, 4]),
    ("tf.range(5.0)", "float32", [0.0, 1.0, 2.0, 3.0, 4.0]),
    ("tf.shape(tf.zeros([2, 3]))", "int32", [2, 3]),
    ("tf.size(tf.zeros([2, 3]))", "int32", 6),
    ("tf.cast(tf.constant([1.7]), tf.int64)", "int64", [1]),
    ("tf.one_hot([0, 1], 2)", "float32", [[1.0, 0.0], [0.0, 1.0]]),
    ("tf.linspace(-2, 2, 5)", "float64", [-2.0, -1.0, 0.0, 1.0, 2.0]),
    ("tf.zeros([1])", "float32", [0.0]),
    ("tf.ones([1], tf.int64)", "int64", [1]),
    ("tf.constant(7) // 2", "int32", 3),
    ("tf.constant(7) / 2", "float64", 3.5),
    ("tf.constant(7, tf.int64) / 2", "float64", 3.5),
    ("tf.constant(7, tf.int16) / 2", "float32", 3.5),
    ("next(iter(tf.data.Dataset.from_tensor_slices(np.arange(3))))", "int64", 0),
    ("next(iter(tf.data.Dataset.range(3)))", "int64", 0),
]


@pytest.mark.parametrize("expr,dtype,value", CASES, ids=[c[0] for c in CASES])
def test_dtype_and_value_as_tensorflow(expr, dtype, value):
    t = eval(expr, {"tf": tf, "np": np})
    assert t.dtype == getattr(tf, dtype), expr
    np.testing.assert_array_equal(t.numpy(), np.asarray(value, dtype))


def test_dtype_str_repr_and_module():
    assert str(tf.float32) == "<dtype: 'float32'>" and repr(tf.float32) == "tf.float32"
    assert tf.dtypes.as_dtype("int64") is tf.int64 and tf.dtypes.float64 is tf.float64


def test_float32_defaults_survive_64_bit_mode():
    """JAX's 64-bit mode is on; nothing tapejax creates by default becomes 64-bit."""
    w = tf.Variable(tf.random.normal([3, 2]))
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_mean(tf.matmul(x, w) ** 2)
    assert y.dtype == tf.float32 and tape.gradient(y, w).dtype == tf.float32
    layer = tf.keras.layers.Dense(2)
    assert layer(np.ones((1, 3))).dtype == tf.float32  # Keras casts float64 NumPy input
    for pool in (tf.keras.layers.AveragePooling2D(), tf.keras.layers.MaxPooling2D()):
        assert pool(tf.ones([1, 4, 4, 1])).dtype == tf.float32


_OPT_OUT = r"""
import numpy as np, tapejax as tf
for value in (2**40, np.array([2**40 + 3]), np.array([0.1])):
    try:
        tf.constant(value)
    except ValueError as e:
        assert "TAPEJAX_ENABLE_X64" in str(e), e
    else:
        raise AssertionError(f"{value!r} was narrowed silently")
assert tf.constant(np.array([2, 3])).dtype == tf.int32      # exact in 32 bits: fine
assert tf.constant(np.array([0.5])).numpy()[0] == 0.5
g = tf.random.Generator.from_seed(1)   # its state: six uint32 words instead of TF's int64 [3]
assert g.state.shape == (6,) and abs(float(g.normal([])) - 0.43842274) < 1e-6   # a GPU: to the last bit
assert g.state.numpy().tolist() == [257, 0, 0, 0, 0, 0]
print("ok")
"""


def test_opting_out_of_64_bit_mode_never_truncates_silently():
    env = dict(os.environ, TAPEJAX_ENABLE_X64="0")
    r = subprocess.run([sys.executable, "-c", _OPT_OUT], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_ops_of_python_numbers_compute_in_tf_default_dtypes():
    # TF 2.21 (tutorials/customization/basics): Python numbers become int32/float32 tensors,
    # also with JAX's 64-bit mode on.
    assert str(tf.math.add(1, 2)) == "tf.Tensor(3, shape=(), dtype=int32)"
    assert str(tf.math.square(5)) == "tf.Tensor(25, shape=(), dtype=int32)"
    assert str(tf.math.square(2) + tf.math.square(3)) == "tf.Tensor(13, shape=(), dtype=int32)"
    assert tf.add(1., 2.).dtype == tf.float32
    assert tf.maximum(1, 3).dtype == tf.int32
    assert tf.math.multiply(2 ** 40, 2).numpy() == 2 ** 41     # too big for int32: int64, exact


def test_where_of_python_numbers_is_int32():
    # TF 2.21: tf.where(cond, 1, 0) is int32 (JAX's 64-bit mode would make it int64)
    c = tf.constant([True, False])
    assert str(tf.where(c, 1, 0)) == "tf.Tensor([1 0], shape=(2,), dtype=int32)"
    assert tf.where(c, 1., 0.).dtype == tf.float32
    assert tf.where(c, tf.constant([1, 2], tf.int64), 0).dtype == tf.int64
