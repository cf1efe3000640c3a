"""The Tensor / Variable / Module surface, as TensorFlow prints and behaves."""
import operator
import re
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


# ---------------------------------------------------------------- printing
def test_repr_and_str_scalar():
    x = tf.constant(6.0)
    assert repr(x) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"
    assert str(x) == "tf.Tensor(6.0, shape=(), dtype=float32)"
    assert repr(tf.constant(6)) == "<tf.Tensor: shape=(), dtype=int32, numpy=6>"
    assert repr(tf.constant(True)) == "<tf.Tensor: shape=(), dtype=bool, numpy=True>"



# What TensorFlow 2.21 printed (repr, then print, of each value; numpy 2.4) for
# ``_SCALARS_SOURCE``: a scalar's repr shows the Python number it converts to.
_SCALARS_SOURCE = """[tf.constant(27.3), tf.Variable(27.3), tf.constant(27.3, tf.float64), tf.constant(1.1, tf.float16),
 tf.constant(3), tf.constant(True), tf.constant(2**40, tf.int64), tf.constant(1.1+2j), tf.constant(1.1, tf.bfloat16),
 tf.constant(b'ab'), tf.constant('h\u00e9llo'), tf.constant(3, tf.uint8), tf.constant(np.nan), tf.constant(-np.inf),
 tf.constant([[0.1]]), tf.Variable([0.1, 0.2]), tf.reduce_sum(tf.constant([0.1, 0.2]))]"""
_SCALARS_TF = [
    '<tf.Tensor: shape=(), dtype=float32, numpy=27.299999237060547>',
    'tf.Tensor(27.3, shape=(), dtype=float32)',
    "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=27.299999237060547>",
    "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=27.299999237060547>",
    '<tf.Tensor: shape=(), dtype=float64, numpy=27.3>',
    'tf.Tensor(27.3, shape=(), dtype=float64)',
    '<tf.Tensor: shape=(), dtype=float16, numpy=1.099609375>',
    'tf.Tensor(1.1, shape=(), dtype=float16)',
    '<tf.Tensor: shape=(), dtype=int32, numpy=3>',
    'tf.Tensor(3, shape=(), dtype=int32)',
    '<tf.Tensor: shape=(), dtype=bool, numpy=True>',
    'tf.Tensor(True, shape=(), dtype=bool)',
    '<tf.Tensor: shape=(), dtype=int64, numpy=1099511627776>',
    'tf.Tensor(1099511627776, shape=(), dtype=int64)',
    '<tf.Tensor: shape=(), dtype=complex128, numpy=(1.1+2j)>',
    'tf.Tensor((1.1+2j), shape=(), dtype=complex128)',
    '<tf.Tensor: shape=(), dtype=bfloat16, numpy=1.1015625>',
    'tf.Tensor(1.10156, shape=(), dtype=bfloat16)',
    "<tf.Tensor: shape=(), dtype=string, numpy=b'ab'>",
    "tf.Tensor(b'ab', shape=(), dtype=string)",
    "<tf.Tensor: shape=(), dtype=string, numpy=b'h\\xc3\\xa9llo'>",
    "tf.Tensor(b'h\\xc3\\xa9llo', shape=(), dtype=string)",
    '<tf.Tensor: shape=(), dtype=uint8, numpy=3>',
    'tf.Tensor(3, shape=(), dtype=uint8)',
    '<tf.Tensor: shape=(), dtype=float32, numpy=nan>',
    'tf.Tensor(nan, shape=(), dtype=float32)',
    '<tf.Tensor: shape=(), dtype=float32, numpy=-inf>',
    'tf.Tensor(-inf, shape=(), dtype=float32)',
    '<tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[0.1]], dtype=float32)>',
    'tf.Tensor([[0.1]], shape=(1, 1), dtype=float32)',
    "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.1, 0.2], dtype=float32)>",
    "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([0.1, 0.2], dtype=float32)>",
    '<tf.Tensor: shape=(), dtype=float32, numpy=0.30000001192092896>',
    'tf.Tensor(0.3, shape=(), dtype=float32)',
    "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=0.30000001192092896>",
]


def test_scalar_reprs_match_tensorflow():
    values = eval(_SCALARS_SOURCE, {"tf": tf, "np": np})
    x = tf.Variable(0.1)
    printed = [line for v in values for line in (repr(v) + "\n" + str(v)).splitlines()]
    printed.append(repr(x.assign_add(0.2)))
    assert printed == _SCALARS_TF

def test_repr_and_str_arrays():
    x = tf.constant([1.0, 2.0])
    assert repr(x) == "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert str(x) == "tf.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert repr(tf.constant([1, 2])) == "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>"
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    # a multi-line value starts on its own line, as TensorFlow prints it
    assert str(m) == "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"
    assert repr(m) == ("<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
                       "array([[1., 2.],\n       [3., 4.]], dtype=float32)>")


def test_format_and_print_in_fstrings():
    x = tf.constant(2.5)
    assert f"{x:.2f}" == "2.50"
    assert f"{x}" == "2.5"   # TF 2.21: the NumPy value, not str(x)


def test_variable_repr():
    v = tf.Variable([1.0, 2.0], name="w")
    assert repr(v) == "<tf.Variable 'w:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert repr(tf.Variable(3.0, name="s")) == "<tf.Variable 's:0' shape=() dtype=float32, numpy=3.0>"
    m = tf.Variable([[1, 2], [3, 4]], name="m")
    assert repr(m) == ("<tf.Variable 'm:0' shape=(2, 2) dtype=int32, numpy=\n"
                       "array([[1, 2],\n       [3, 4]], dtype=int32)>")
    assert str(m) == repr(m)


# ---------------------------------------------------------------- numpy / shape / dtype
def test_numpy_values():
    s = tf.constant(2.0).numpy()
    assert isinstance(s, np.float32) and s == 2.0
    a = tf.constant([[1, 2]]).numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.int32 and a.shape == (1, 2)
    assert np.asarray(tf.constant([1.0, 2.0])).tolist() == [1.0, 2.0]
    assert tf.Variable(3.0).numpy() == 3.0


def test_shape_is_tensorshape():
    x = tf.zeros([2, 3])
    assert isinstance(x.shape, tf.TensorShape)
    assert x.shape == (2, 3) and x.shape == [2, 3] and [2, 3] == x.shape
    assert x.shape != [2, 4] and not (x.shape != [2, 3])
    assert {x.shape: 1}[(2, 3)] == 1  # still hashable like a tuple
    assert repr(x.shape) == "TensorShape([2, 3])"
    assert str(x.shape) == "(2, 3)"
    assert str(tf.zeros([4]).shape) == "(4,)"
    assert repr(tf.constant(1.0).shape) == "TensorShape([])"
    assert x.shape.as_list() == [2, 3] and x.shape.rank == 2 and x.shape.num_elements() == 6
    assert x.shape[0] == 2 and isinstance(x.shape[1:], tf.TensorShape)
    assert x.get_shape() == x.shape and x.ndim == 2
    assert tf.Variable(tf.zeros([5, 1])).shape == (5, 1)


def test_dtype_compares_with_numpy_and_strings():
    x = tf.constant([1.0])
    assert x.dtype == tf.float32
    assert x.dtype == np.float32
    assert x.dtype == "float32"
    assert x.dtype == np.dtype("float32")
    assert x.dtype != tf.int32 and x.dtype != np.float64
    assert x.dtype.name == "float32" and repr(x.dtype) == "tf.float32"
    assert x.dtype.is_floating and not x.dtype.is_integer
    assert tf.constant(1).dtype == tf.int32 and tf.constant(True).dtype == tf.bool
    assert np.dtype(tf.float32) == np.float32
    assert jnp.zeros(2, dtype=tf.float32).dtype == jnp.float32


def test_python_floats_beyond_float32():
    # TF 2.21: a Python float that float32 rounds to inf is refused when float32 is the default
    # dtype, and kept (with no overflow warning) when float64 is asked for; inf itself is a value.
    import warnings
    msg = "Can't convert Python sequence with a value out of range for a double-precision float."
    for value in (1e300, [1e39], [1.0, -3.5e38], 3.4028235677973366e38):
        with pytest.raises(ValueError, match=re.escape(msg)):
            tf.constant(value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tf.constant([1e300], tf.float64).numpy()[0] == 1e300
        assert tf.constant(3.4028235677973362e38).numpy() == np.float32(3.4028235e38)
        assert np.isinf(tf.constant([float("inf"), 1.0]).numpy()[0])


def test_python_conversion_defaults():
    assert tf.constant(1.5).dtype == tf.float32      # Python float -> float32
    assert tf.constant([1, 2]).dtype == tf.int32                 # Python int -> int32
    assert tf.constant([1, 2], dtype=tf.float32).dtype == tf.float32
    assert tf.constant(0.0, shape=[2, 3]).shape == (2, 3)
    assert tf.constant("a").dtype == tf.string  # text: a string tensor (tests/test_strings.py)
    # An int that does not fit int32 becomes int64, as in TF (never wrapped around).
    big = tf.constant(2 ** 40)
    assert big.dtype == tf.int64 and big.numpy() == 2 ** 40
    assert tf.constant(2 ** 31 - 1).numpy() == 2 ** 31 - 1


def test_scalar_conversions():
    assert float(tf.constant(2.5)) == 2.5
    assert int(tf.constant(2.5)) == 2
    assert bool(tf.constant(1.0)) is True
    assert [10, 20, 30][tf.constant(1)] == 20
    with pytest.raises(ValueError, match="reduce_any"):
        bool(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="integer"):
        [1, 2][tf.constant(1.0)]


def test_len_iter_hash_ref():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and rows[1].numpy().tolist() == [3.0, 4.0]
    with pytest.raises(TypeError, match="ref"):
        hash(x)
    with pytest.raises(TypeError, match="ref"):
        {tf.Variable(1.0): 1}
    d = {x.ref(): "x"}
    assert d[x.ref()] == "x" and x.ref().deref() is x
    with pytest.raises(TypeError):
        len(tf.constant(1.0))


# ---------------------------------------------------------------- interop
def test_jax_and_numpy_interop():
    x = tf.constant([1.0, 2.0])
    j = jnp.sin(x)
    assert isinstance(j, jax.Array)
    np.testing.assert_allclose(np.asarray(j), np.sin([1.0, 2.0]), rtol=1e-6)
    n = np.sin(x)
    assert isinstance(n, np.ndarray)
    assert jnp.asarray(x) is x._value  # no copy
    # Tensors are pytrees: they go through jax transformations
    out = jax.jit(lambda t: t * 2)(x)
    np.testing.assert_allclose(np.asarray(out), [2.0, 4.0])
    assert jax.tree_util.tree_leaves({"a": x})[0] is x._value


# ---------------------------------------------------------------- indexing
def test_indexing_and_slicing():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = tf.constant(a)
    cases = [
        (lambda t: t[1], lambda n: n[1]),
        (lambda t: t[-1, 2], lambda n: n[-1, 2]),
        (lambda t: t[:, 1:, ::2], lambda n: n[:, 1:, ::2]),
        (lambda t: t[..., 0], lambda n: n[..., 0]),
        (lambda t: t[tf.newaxis], lambda n: n[None]),
        (lambda t: t[:, tf.newaxis, 1], lambda n: n[:, None, 1]),
        (lambda t: t[..., tf.newaxis], lambda n: n[..., None]),
        (lambda t: t[tf.constant(1)], lambda n: n[1]),
        (lambda t: t[tf.constant(1), tf.constant(2)], lambda n: n[1, 2]),
        (lambda t: t[0, tf.constant(0):tf.constant(2)], lambda n: n[0, 0:2]),
        (lambda t: t[::-1, 0, 1:3], lambda n: n[::-1, 0, 1:3]),
        (lambda t: t[0, np.int64(2)], lambda n: n[0, 2]),
    ]
    for tf_idx, np_idx in cases:
        got = tf_idx(x)
        assert isinstance(got, tf.Tensor)
        want = np_idx(a)
        assert tuple(got.shape) == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    assert tf.newaxis is None


def test_variable_indexing():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert v[1, 0].numpy() == 3.0
    assert v[:, 1].numpy().tolist() == [2.0, 4.0]


# ---------------------------------------------------------------- operators
ARITH = [
    ("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
    ("floordiv", operator.floordiv), ("mod", operator.mod), ("pow", operator.pow),
]


@pytest.mark.parametrize("name,op", ARITH)
def test_arithmetic_operators(name, op):
    a = np.array([[1.5, 2.0], [3.0, 4.5]], np.float32)
    b = np.array([0.5, 2.5], np.float32)
    x, y = tf.constant(a), tf.constant(b)
    want = op(a, b)
    for got in (op(x, y), op(x, b), op(tf.Variable(a), y)):
        assert isinstance(got, tf.Tensor) and got.dtype == tf.float32
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    # reflected, with numpy arrays and Python numbers on the left
    for left, right in ((a, y), (2.0, x)):
        got = op(left, right)
        assert isinstance(got, tf.Tensor), f"{type(left).__name__} {name} Tensor gave {type(got)}"
        np.testing.assert_allclose(got.numpy(), op(np.asarray(left, np.float32), np.asarray(right)), rtol=1e-6)
    got = op(x, 3)  # Python number on the right keeps the tensor's dtype
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), op(a, np.float32(3)), rtol=1e-6)


def test_integer_operators():
    x = tf.constant([7, -7])
    assert (x // 2).numpy().tolist() == [3, -4]
    assert (x % 3).numpy().tolist() == [1, 2]
    assert (x / 2).dtype == tf.float64  # TF divides int32 in float64
    assert (x / 2).numpy().tolist() == [3.5, -3.5]
    assert (x * 2).dtype == tf.int32
    assert (~tf.constant(5)).numpy() == -6


def test_matmul_operator():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, y = tf.constant(a), tf.constant(b)
    np.testing.assert_allclose((x @ y).numpy(), a @ b)
    np.testing.assert_allclose((a @ y).numpy(), a @ b)     # numpy on the left -> __rmatmul__
    np.testing.assert_allclose((x @ b).numpy(), a @ b)
    assert isinstance(a @ y, tf.Tensor)
    np.testing.assert_allclose(([[1.0, 2.0, 3.0]] @ y).numpy(), np.array([[1.0, 2.0, 3.0]]) @ b)
    v = tf.Variable(b)
    np.testing.assert_allclose((x @ v).numpy(), a @ b)


def test_unary_and_comparison_operators():
    a = np.array([-1.0, 0.0, 2.0], np.float32)
    x = tf.constant(a)
    np.testing.assert_array_equal((-x).numpy(), -a)
    np.testing.assert_array_equal((+x).numpy(), a)
    np.testing.assert_array_equal(abs(x).numpy(), np.abs(a))
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        got = op(x, 0.0)
        assert got.dtype == tf.bool
        np.testing.assert_array_equal(got.numpy(), op(a, 0.0))
        np.testing.assert_array_equal(op(0.0, x).numpy(), op(0.0, a))
    assert (x == None) is False and (x != None) is True  # noqa: E711
    assert (x == "a") is False


def test_logical_operators():
    t, f = tf.constant([True, False]), tf.constant([True, True])
    assert (t & f).numpy().tolist() == [True, False]
    assert (t | False).numpy().tolist() == [True, False]
    assert (t ^ f).numpy().tolist() == [False, True]
    assert (~t).numpy().tolist() == [False, True]
    assert (True & t).numpy().tolist() == [True, False]


def test_list_of_tensors_is_packed():
    a, b = tf.constant(1.0), tf.constant(2.0)
    out = tf.constant([1.0, 1.0]) * [a, b]
    assert out.numpy().tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- Variable state
def test_variable_assign_family():
    v = tf.Variable([1.0, 2.0])
    r = v.assign([3.0, 4.0])
    assert v.numpy().tolist() == [3.0, 4.0]
    # TF returns an UnreadVariable: a view of the same variable
    assert repr(r) == "<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, numpy=array([3., 4.], dtype=float32)>"
    v.assign([5.0, 6.0])
    assert r.numpy().tolist() == [5.0, 6.0] and r.name == v.name
    assert v.assign([3.0, 4.0], read_value=False) is None
    v.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [4.0, 5.0]
    v.assign_sub(tf.constant([0.5, 0.5]))
    assert v.numpy().tolist() == [3.5, 4.5]
    assert v.assign_add([1.0, 1.0]).numpy().tolist() == [4.5, 5.5]
    i = tf.Variable(0)
    i.assign_add(1)
    assert i.numpy() == 1 and i.dtype == tf.int32
    v.assign(np.array([1, 2]))  # converted to the variable's dtype
    assert v.dtype == tf.float32 and v.numpy().tolist() == [1.0, 2.0]


def test_variable_assign_shape_mismatch_as_tensorflow():
    # TensorFlow 2.21's exceptions and messages, recorded; the Variable is unchanged.
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    with pytest.raises(ValueError) as e:
        v.assign(1.0)
    assert str(e.value) == ("Cannot assign value to variable ' w:0': Shape mismatch.The variable shape (2, 2), "
                            "and the assigned value shape () are incompatible.")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^Cannot update variable with shape \[2,2\] using a Tensor with shape \[\], shapes "
                             "must be equal.$"):
        v.assign_add(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \[2,2\] using a Tensor with shape \[3\]"):
        v.assign_sub([1.0, 2.0, 3.0])
    assert v.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_variable_construction():
    assert tf.Variable(1).dtype == tf.int32
    assert tf.Variable(1, dtype=tf.float32).dtype == tf.float32
    assert tf.Variable(lambda: tf.ones([2])).numpy().tolist() == [1.0, 1.0]
    assert tf.Variable(1.0).name == "Variable:0"
    assert tf.Variable(1.0, name="k").name == "k:0"
    assert tf.Variable(1.0).trainable and not tf.Variable(1.0, trainable=False).trainable
    w = tf.Variable(tf.Variable(2.0))
    assert w.numpy() == 2.0
    with pytest.raises(ValueError, match="initial_value"):
        tf.Variable()


def test_variable_value_reads():
    v = tf.Variable([1.0, 2.0])
    r = v.value()
    assert isinstance(r, tf.Tensor) and r.numpy().tolist() == [1.0, 2.0]
    v.assign([5.0, 6.0])
    assert r.numpy().tolist() == [1.0, 2.0]  # a read is a snapshot
    assert v.read_value().numpy().tolist() == [5.0, 6.0]
    c = tf.convert_to_tensor(v)
    assert isinstance(c, tf.Tensor) and c.numpy().tolist() == [5.0, 6.0]
    assert tf.is_tensor(v) and tf.is_tensor(c) and not tf.is_tensor(np.ones(1))


def test_name_scope():
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            v = tf.Variable(1.0, name="k")
        w = tf.Variable(1.0, name="b")
    u = tf.Variable(1.0, name="c")
    assert (v.name, w.name, u.name) == ("outer/inner/k:0", "outer/b:0", "c:0")


# ---------------------------------------------------------------- tf.Module
class Child(tf.Module):
    def __init__(self, tag, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(1.0, name=f"{tag}_w")
        self.frozen = tf.Variable(2.0, trainable=False, name=f"{tag}_frozen")


class Parent(tf.Module):
    def __init__(self):
        super().__init__(name="parent")
        self.z = tf.Variable(0.0, name="z")
        self.a_child = Child("a")
        self.b = tf.Variable(1.0, name="b")
        self.layers = [Child("l0"), {"y": tf.Variable(3.0, name="dy"), "x": tf.Variable(4.0, name="dx")}]
        self.alias = self.b  # seen once
        self.not_state = tf.constant(1.0)


def test_module_variable_order():
    m = Parent()
    names = [v.name for v in m.variables]
    # own attributes in sorted key order (nested structures flattened, dict keys sorted), then submodules
    assert names == ["b:0", "dx:0", "dy:0", "z:0", "a_frozen:0", "a_w:0", "l0_frozen:0", "l0_w:0"]
    assert [v.name for v in m.trainable_variables] == ["b:0", "dx:0", "dy:0", "z:0", "a_w:0", "l0_w:0"]
    assert [v.name for v in m.non_trainable_variables] == ["a_frozen:0", "l0_frozen:0"]
    assert isinstance(m.variables, tuple) and isinstance(m.trainable_variables, tuple)
    subs = m.submodules
    assert len(subs) == 2 and subs[0] is m.a_child and subs[1] is m.layers[0]


def test_module_names_and_scope():
    assert Child("c").name == "child"
    assert Child("c", name="custom").name == "custom"

    class MyDense(tf.Module):
        def __init__(self):
            super().__init__()
            with self.name_scope:
                self.kernel = tf.Variable(tf.ones([2, 2]), name="kernel")
    d = MyDense()
    assert d.name == "my_dense" and d.kernel.name == "my_dense/kernel:0"


def test_module_gradients():
    m = Parent()
    with tf.GradientTape() as tape:
        loss = m.z * m.b + m.a_child.w * m.a_child.frozen + m.layers[1]["x"]
    grads = tape.gradient(loss, m.trainable_variables)
    assert [None if g is None else float(g) for g in grads] == [0.0, 1.0, None, 1.0, 2.0, None]


@pytest.mark.parametrize("shape,mask_shape,axis", [((5,), (5,), None), ((4, 3), (4,), 0), ((2, 3, 4), (2, 3), 0),
                                                   ((2, 3, 4), (3, 4), 1), ((2, 3, 4), (4,), -1)])
def test_boolean_mask_values_and_gradient(shape, mask_shape, axis):
    rs = np.random.RandomState(0)
    xv = rs.randn(*shape).astype(np.float32)
    m = rs.rand(*mask_shape) > 0.4
    a = 0 if axis is None else axis % len(shape)
    index = (slice(None),) * a + (m,)
    x = tf.Variable(xv)
    with tf.GradientTape() as tape:
        y = tf.boolean_mask(x, tf.constant(m), axis=axis)
        loss = tf.reduce_sum(tf.sin(y))
    np.testing.assert_array_equal(y.numpy(), xv[index])
    want = jax.grad(lambda v: jnp.sum(jnp.sin(v[index])))(xv)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), want, rtol=1e-6)
    if a == 0:
        np.testing.assert_array_equal(x[m].numpy(), xv[m])          # tensor[bool_mask] is boolean_mask
        np.testing.assert_array_equal(x[m.tolist()].numpy(), xv[m])


def test_boolean_mask_errors():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match=r"mask's shape \(3,\)"):
        tf.boolean_mask(x, [True, False, True])
    with pytest.raises(TypeError, match="boolean mask"):
        tf.boolean_mask(x, tf.constant([1, 0]))

    @tf.function
    def f(v):
        return tf.reduce_sum(v[v > 2.0])

    with pytest.raises(ValueError, match=r"tf.where\(mask, tensor"):
        f(x)


def test_format_is_numpy_format_as_tf_eager_tensors():
    # TF 2.21: f"{t}" formats an EagerTensor's NumPy value; Variables format as their repr.
    t = tf.size(tf.zeros([3, 4]))
    assert f"Size: {t}" == "Size: 12"
    assert f"{tf.constant([1.5, 2])}" == "[1.5 2. ]"
    assert f"{tf.constant(2.5):.2f}" == "2.50"
    assert "{}".format(tf.constant(["a"])) == "[b'a']"
    assert f"{tf.Variable(3.)}" == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>"


def test_type_names_are_tensorflows():
    # TensorFlow's autodiff guide ("Cases where gradient returns None"), as TF 2.21 printed it.
    x = tf.Variable(2.0)
    printed = []
    for epoch in range(2):
        with tf.GradientTape() as tape:
            y = x + 1
        printed.append(f"{type(x).__name__} : {str(tape.gradient(y, x))}")
        x = x + 1
    assert printed == ["ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32)", "EagerTensor : None"]
    v = tf.Variable(1.0)
    assert isinstance(v, tf.Variable) and not isinstance(v, tf.Tensor) and isinstance(v + 1, tf.Tensor)
    assert type(v.assign(2.0)).__name__ == "_UnreadVariable"
    t = pickle.loads(pickle.dumps(tf.constant([1.0, 2.0])))
    assert type(t) is tf.Tensor and t.numpy().tolist() == [1.0, 2.0]


def test_tensorshape_of_unknown_rank():
    """TensorShape(None) is TensorFlow's unknown shape (TF 2.21's answers), not a scalar's shape."""
    s = tf.TensorShape(None)
    assert (repr(s), str(s), s.rank, s.ndims, s.dims) == ("TensorShape(None)", "<unknown>", None, None, None)
    assert not s.is_fully_defined() and s.num_elements() is None
    assert s.is_compatible_with(tf.TensorShape([2, 3])) and tf.TensorShape([2, 3]).is_compatible_with(s)
    assert s == tf.TensorShape(None) and s != tf.TensorShape([]) and tf.TensorShape([]) != s
    assert s[0] is None and str(s[1:]) == "<unknown>" and repr(tf.TensorShape(s)) == "TensorShape(None)"
    with pytest.raises(ValueError, match="Cannot take the length of shape with unknown rank."):
        len(s)
    with pytest.raises(ValueError, match="as_list\\(\\) is not defined on an unknown TensorShape."):
        s.as_list()
    assert tf.TensorShape([]).rank == 0 and str(tf.TensorShape([])) == "()"
