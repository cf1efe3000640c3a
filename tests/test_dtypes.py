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


# ---------------------------------------------------------------- inputs that share one dtype
# TensorFlow does not promote: an op's inputs share its type attribute T. Recorded from TF 2.21
# (eager): what converts (NumPy values and Python bools are cast to the tensor's dtype, Python ints
# fit any number, floats floating dtypes) and the errors of what does not.
SHARED_OK = [
    ("tf.constant([1]) * np.float32(2.5)", "int32", [2]),
    ("tf.constant([1]) + np.float64(2.5)", "int32", [3]),
    ("np.float32(2.5) * tf.constant([1])", "int32", [2]),
    ("tf.constant([1]) * np.array([2.5])", "int32", [2]),
    ("tf.math.maximum(np.float32(3.0), tf.constant([1]))", "int32", [3]),
    ("tf.constant([1]) * True", "int32", [1]),
    ("tf.constant([1.0]) + True", "float32", [2.0]),
    ("tf.add(1.5, 2)", "float32", 3.5),
    ("tf.constant([1], tf.uint8) * -1", "uint8", [255]),
    ("tf.constant([1], tf.int8) + 200", "int8", [-55]),
    ("tf.constant([1]) + 2**33", "int32", [1]),
    ("tf.stack([1, 2.5])", "float32", [1.0, 2.5]),
    ("tf.concat([tf.constant([1.0]), [2]], 0)", "float32", [1.0, 2.0]),
    ("tf.stack([tf.constant([1.0]), [2]])", "float32", [[1.0], [2.0]]),
    ("tf.constant([1]) / 2", "float64", [0.5]),
    ("tf.Variable(1.0).assign(2)", "float32", 2.0),
    ("tf.Variable(1).assign(np.float64(2.5))", "int32", 2),
    ("tf.Variable(1, dtype=tf.int32).assign(True)", "int32", 1),
]

_ADD = "cannot compute AddV2 as input #1(zero-based) was expected to be a {} tensor but is a {} tensor [Op:AddV2] name: "
_KERNEL = "cannot compute {} as input #{}(zero-based) was expected to be a {} tensor but is a {} tensor [Op:{}] name: {}"
_SAME = "`x` and `y` must have the same dtype, got tf.{} != tf.{}."
SHARED_ERRORS = [
    ("tf.constant([1]) * 2.0", TypeError, "Cannot convert 2.0 to EagerTensor of dtype int32"),
    ("2.0 * tf.constant([1])", TypeError, "Cannot convert 2.0 to EagerTensor of dtype int32"),
    ("2.5 + tf.constant([1])", TypeError, "Cannot convert 2.5 to EagerTensor of dtype int32"),
    ("[2.5] + tf.constant([1])", TypeError, "Cannot convert [2.5] to EagerTensor of dtype int32"),
    ("2.5 / tf.constant([1])", TypeError, "Cannot convert 2.5 to EagerTensor of dtype int32"),
    ("tf.constant([1]) + 2.5", tf.errors.InvalidArgumentError, _ADD.format("int32", "float")),
    ("tf.add(tf.constant([1]), 2.5)", tf.errors.InvalidArgumentError, _ADD.format("int32", "float")),
    ("tf.add(1, 2.5)", tf.errors.InvalidArgumentError, _ADD.format("int32", "float")),
    ("tf.add(2.5, tf.constant([1]))", tf.errors.InvalidArgumentError, _ADD.format("float", "int32")),
    ("tf.constant([1]) + [2.5]", tf.errors.InvalidArgumentError, _ADD.format("int32", "float")),
    ("tf.constant([1]) + 1j", tf.errors.InvalidArgumentError, _ADD.format("int32", "complex128")),
    ("tf.constant([1.0]) + tf.constant([1])", tf.errors.InvalidArgumentError, _ADD.format("float", "int32")),
    ("tf.constant([1], tf.int64) + tf.constant([1])", tf.errors.InvalidArgumentError, _ADD.format("int64", "int32")),
    ("tf.Variable(1.0) + tf.Variable(1)", tf.errors.InvalidArgumentError, _ADD.format("float", "int32")),
    ("tf.constant([1.0]) * tf.constant([1], tf.float64)", tf.errors.InvalidArgumentError,
     _KERNEL.format("Mul", 1, "float", "double", "Mul", "")),
    ("tf.constant([1.0]) - tf.constant([1])", tf.errors.InvalidArgumentError,
     _KERNEL.format("Sub", 1, "float", "int32", "Sub", "")),
    ("tf.minimum(tf.constant([1]), tf.constant([1.0], tf.float64))", tf.errors.InvalidArgumentError,
     _KERNEL.format("Minimum", 1, "int32", "double", "Minimum", "")),
    ("tf.constant([1.0]) >= tf.constant([1])", tf.errors.InvalidArgumentError,
     _KERNEL.format("GreaterEqual", 1, "float", "int32", "GreaterEqual", "")),
    ("tf.constant([1.0]) == tf.constant([1])", tf.errors.InvalidArgumentError,
     _KERNEL.format("Equal", 1, "float", "int32", "Equal", "")),
    ("tf.concat([tf.constant([1.0]), tf.constant([1])], 0)", tf.errors.InvalidArgumentError,
     _KERNEL.format("ConcatV2", 1, "float", "int32", "ConcatV2", "concat")),
    ("tf.stack([tf.constant([1.0]), tf.constant([1.0], tf.float64)])", tf.errors.InvalidArgumentError,
     _KERNEL.format("Pack", 1, "float", "double", "Pack", "stack")),
    ("tf.add_n([tf.constant([1.0]), 2])", tf.errors.InvalidArgumentError,
     _KERNEL.format("AddN", 1, "float", "int32", "AddN", "")),
    ("tf.clip_by_value(tf.constant([1.0]), tf.constant(0), 1.0)", tf.errors.InvalidArgumentError,
     _KERNEL.format("Maximum", 1, "float", "int32", "Maximum", "")),
    ("tf.clip_by_value(tf.constant([1]), 0.0, 2.0)", TypeError, "Cannot convert 2.0 to EagerTensor of dtype int32"),
    ("tf.where([True], tf.constant([1.0]), tf.constant([1]))", tf.errors.InvalidArgumentError,
     "cannot compute SelectV2 as input #2(zero-based) was expected to be a float tensor but is a int32 tensor "
     "[Op:SelectV2]"),
    ("tf.where(tf.constant([True]), tf.constant([1]), 2.0)", TypeError, "Cannot convert 2.0 to EagerTensor of dtype int32"),
    ("tf.constant([1]) / 2.0", TypeError, _SAME.format("int32", "float32")),
    ("tf.constant([1.0]) / tf.constant([1])", TypeError, _SAME.format("float32", "int32")),
    ("tf.math.divide_no_nan(tf.constant([1.0]), tf.constant([1.0], tf.float64))", TypeError,
     _SAME.format("float32", "float64")),
    ("tf.multiply(2, 1.5)", TypeError, "Cannot convert 1.5 to EagerTensor of dtype int32"),
    ("tf.maximum(tf.constant([1]), 2.5)", TypeError, "Cannot convert 2.5 to EagerTensor of dtype int32"),
    ("tf.constant([1]) < 2.5", TypeError, "Cannot convert 2.5 to EagerTensor of dtype int32"),
    ("tf.constant([1]) ** 0.5", TypeError, "Cannot convert 0.5 to EagerTensor of dtype int32"),
    ("tf.constant([1]) * [2.5]", TypeError, "Cannot convert [2.5] to EagerTensor of dtype int32"),
    ("tf.stack([tf.constant(1), 2.5])", TypeError, "Cannot convert 2.5 to EagerTensor of dtype int32"),
    ("tf.logical_and(tf.constant([True]), 1)", TypeError, "Cannot convert 1 to EagerTensor of dtype bool"),
    ("tf.constant([1.0]) * 1j", TypeError, "Cannot convert 1j to EagerTensor of dtype float"),
    ("tf.Variable(1).assign(2.5)", TypeError, "Cannot convert 2.5 to EagerTensor of dtype int32"),
    ("tf.Variable(1).assign_add(0.5)", TypeError, "Cannot convert 0.5 to EagerTensor of dtype int32"),
    ("tf.Variable(True).assign(1)", TypeError, "Cannot convert 1 to EagerTensor of dtype bool"),
    ("tf.Variable(1).assign(tf.constant(2.5))", ValueError,
     "Tensor conversion requested dtype int32 for Tensor with dtype float32: "
     "<tf.Tensor: shape=(), dtype=float32, numpy=2.5>"),
    ("tf.Variable(1.0).assign_sub(tf.constant(1))", ValueError,
     "Tensor conversion requested dtype float32 for Tensor with dtype int32: "
     "<tf.Tensor: shape=(), dtype=int32, numpy=1>"),
    ("tf.convert_to_tensor(tf.constant(2.5), tf.int32)", ValueError,
     "Tensor conversion requested dtype int32 for Tensor with dtype float32: "
     "<tf.Tensor: shape=(), dtype=float32, numpy=2.5>"),
]


@pytest.mark.parametrize("expr,dtype,value", SHARED_OK, ids=[c[0] for c in SHARED_OK])
def test_operands_convert_to_the_shared_dtype_as_tensorflow(expr, dtype, value):
    t = eval(expr, {"tf": tf, "np": np})
    assert t.dtype == getattr(tf, dtype), expr
    np.testing.assert_array_equal(np.asarray(t), np.asarray(value, dtype))


@pytest.mark.parametrize("expr,error,message", SHARED_ERRORS, ids=[c[0] for c in SHARED_ERRORS])
def test_mixed_dtypes_raise_tensorflows_errors(expr, error, message):
    for _ in range(2):      # the second call meets the op's compiled (or lazily cached) variants
        with pytest.raises(error) as info:
            eval(expr, {"tf": tf, "np": np})
        assert type(info.value) is error
        assert str(info.value).split("\n")[0] == message


# While a tf.function is traced: TypeErrors with TensorFlow's graph messages (TF 2.21).
GRAPH_ERRORS = [
    ("x + 2.5", "Input 'y' of 'AddV2' Op has type float32 that does not match type int32 of argument 'x'."),
    ("tf.constant(2.5) + x", "Input 'y' of 'AddV2' Op has type int32 that does not match type float32 of argument 'x'."),
    ("x * 2.0", "Expected int32 passed to parameter 'y' of op 'Mul', got 2.0 of type 'float' instead. "
                "Error: Expected int32, but got 2.0 of type 'float'."),
    ("x * [2.5]", "Expected int32 passed to parameter 'y' of op 'Mul', got [2.5] of type 'list' instead. "
                  "Error: Expected int32, but got 2.5 of type 'float'."),
    ("2.5 * x", "Expected int32, but got 2.5 of type 'float'."),
    ("x / 2.0", "`x` and `y` must have the same dtype, got tf.int32 != tf.float32."),
    ("x * tf.constant(2.5)", "Input 'y' of 'Mul' Op has type float32 that does not match type int32 of argument 'x'."),
    ("tf.where([True], x, tf.constant([2.5]))",
     "Input 'e' of 'SelectV2' Op has type float32 that does not match type int32 of argument 't'."),
    ("tf.matmul(tf.reshape(x, [1, 1]), tf.constant([[2.5]]))",
     "Input 'b' of 'MatMul' Op has type float32 that does not match type int32 of argument 'a'."),
    ("tf.concat([x, [2.5]], 0)",
     "Tensors in list passed to 'values' of 'ConcatV2' Op have types [int32, float32] that don't all match."),
    ("tf.add_n([x, tf.constant([2.5])])",
     "Tensors in list passed to 'inputs' of 'AddN' Op have types [int32, float32] that don't all match."),
    ("tf.Variable(1).assign(2.5) if False else v.assign(2.5)", "Expected int32, but got 2.5 of type 'float'."),
]


@pytest.mark.parametrize("expr,message", GRAPH_ERRORS, ids=[c[0] for c in GRAPH_ERRORS])
def test_mixed_dtypes_in_a_traced_function_raise_tensorflows_type_errors(expr, message):
    v = tf.Variable(1)
    f = tf.function(lambda x: eval(expr, {"tf": tf, "x": x, "v": v}))
    with pytest.raises(TypeError) as info:
        f(tf.constant([1]))
    assert str(info.value).strip().split("\n")[-1].strip() == "TypeError: " + message


def test_a_shared_dtype_costs_nothing_once_compiled():
    """The check is part of the op's traced function: an op called again with the same input
    types runs its compiled variant, and values of one dtype still compute."""
    x = tf.constant([1.0, 2.0])
    for _ in range(3):
        y = x * 2.0 + tf.constant([0.5, 0.5]) - 1
    np.testing.assert_array_equal(y.numpy(), np.float32([1.5, 3.5]))
    assert (tf.constant([1]) * 2).dtype == tf.int32


# Floating kernels refuse integers in TensorFlow (JAX would compute in float32): TF 2.21's errors.
_FLOATS = "bfloat16, half, float, double"
NOT_ALLOWED = [
    ("tf.exp(1)", "int32", "Exp", _FLOATS + ", complex64, complex128"),
    ("tf.sqrt(tf.constant([4]))", "int32", "Sqrt", _FLOATS + ", complex64, complex128"),
    ("tf.math.log(tf.constant(1, tf.int64))", "int64", "Log", _FLOATS + ", complex64, complex128"),
    ("tf.sin(tf.constant([4]))", "int32", "Sin", _FLOATS + ", complex64, complex128"),
    ("tf.tanh(tf.constant([4]))", "int32", "Tanh", _FLOATS + ", complex64, complex128"),
    ("tf.nn.sigmoid(1)", "int32", "Sigmoid", _FLOATS + ", complex64, complex128"),
    ("tf.math.rsqrt(tf.constant([4]))", "int32", "Rsqrt", _FLOATS + ", complex64, complex128"),
    ("tf.math.erf(tf.constant([4]))", "int32", "Erf", _FLOATS),
    ("tf.math.lgamma(tf.constant([4]))", "int32", "Lgamma", _FLOATS),
    ("tf.math.floor(tf.constant([4]))", "int32", "Floor", _FLOATS),
    ("tf.nn.softmax(tf.constant([1, 2]))", "int32", "Softmax", "half, bfloat16, float, double"),
    ("tf.nn.softplus(tf.constant([1, 2]))", "int32", "Softplus", "half, bfloat16, float, double"),
]


@pytest.mark.parametrize("expr,dtype,tf_op,allowed", NOT_ALLOWED, ids=[c[0] for c in NOT_ALLOWED])
def test_integer_inputs_of_floating_kernels_raise_tensorflows_error(expr, dtype, tf_op, allowed):
    for _ in range(2):
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            eval(expr, {"tf": tf, "np": np})
        text = str(info.value)
        assert text.split("\n")[0] == f"Value for attr 'T' of {dtype} is not in the list of allowed values: {allowed}"
        assert text.endswith(f"[Op:{tf_op}] name: ")
    assert eval(expr.replace("1)", "1.0)").replace("[4]", "[4.0]").replace("[1, 2]", "[1.0, 2.0]").replace(
        "(1, tf.int64)", "(1.0)"), {"tf": tf}).dtype == tf.float32


def test_integer_inputs_of_floating_kernels_in_a_traced_function():
    f = tf.function(lambda x: tf.sqrt(x))
    with pytest.raises(TypeError) as info:
        f(tf.constant([4]))
    assert str(info.value).strip().split("\n")[-1].strip() == (
        "TypeError: Value passed to parameter 'x' has DataType int32 not in list of allowed values: "
        "bfloat16, float16, float32, float64, complex64, complex128")


def test_as_dtype_of_datatype_enum_numbers():
    # tf.as_dtype docstring: TF 2.21 reads an int as its DataType enum (types.proto), and a
    # DType compares equal to its number.
    want = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7,
            "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "complex128": 18,
            "float16": 19, "uint32": 22, "uint64": 23}
    for name, n in want.items():
        assert tf.as_dtype(n) is tf.as_dtype(name) and tf.as_dtype(name).as_datatype_enum == n
    assert repr(tf.as_dtype(2)) == "tf.float64"
    assert (tf.float32 == 1, tf.float32 == 2, tf.float64 == 2, tf.float32 != 1) == (True, False, True, False)
    with pytest.raises(TypeError, match=r"^Cannot convert the argument `type_value`: 99 to a TensorFlow DType\.$"):
        tf.as_dtype(99)


def test_as_dtype_of_tensorflow_c_names():
    # tf.as_dtype docstring, TF 2.21: 'float' is float32 (NumPy reads float64), 'double', 'half'.
    assert (repr(tf.as_dtype('float')), repr(tf.as_dtype('double')), repr(tf.as_dtype('half'))) == (
        "tf.float32", "tf.float64", "tf.float16")
