"""What the guides function, intro_to_graphs, intro_to_modules and variable print, as TensorFlow
2.21 prints it: every expected string below was recorded by running the snippet under real
TensorFlow 2.21 (CPU); TensorFlow is not a dependency of these tests."""
import pytest

import tapejax as tf
from guide_harness import error_text


def _printed(capsys, fn):
    fn()
    import jax
    jax.effects_barrier()
    out = capsys.readouterr()
    return out.out + out.err


# -- tf.print: numbers as TensorFlow's SummarizeValue writes them -------------

def test_print_floats_round_trip_like_tensorflow(capsys):
    # Recorded from TF 2.21: '%.6g' when it reads back as the same float, else '%.9g';
    # float64 '%.15g' / '%.17g'; float16 and bfloat16 print through float.
    assert _printed(capsys, lambda: (
        tf.print(tf.constant([0.1, 1 / 3, 2.0, 1e-8, 123456789.0, 0.0067091])),
        tf.print(tf.constant([0.1, 1 / 3], tf.float64)),
        tf.print(tf.constant([0.1, 1 / 3], tf.float16)),
        tf.print(tf.constant([0.1, 1 / 3], tf.bfloat16)),
        tf.print(tf.range(20.0) / 7),
    )) == ("[0.1 0.333333343 2 1e-08 123456792 0.0067091]\n"
           "[0.1 0.33333333333333331]\n"
           "[0.0999755859 0.333251953]\n"
           "[0.100097656 0.333984375]\n"
           "[0 0.142857149 0.285714298 ... 2.42857146 2.57142854 2.71428561]\n")


def test_print_ints_bools_unpadded_like_tensorflow(capsys):
    # Recorded from TF 2.21.
    assert _printed(capsys, lambda: (
        tf.print(tf.constant([[1, 100], [-3, 4]])),
        tf.print(tf.constant([True, False]), tf.constant(True)),
        tf.print(tf.constant(float('nan')), -tf.constant(float('nan')), tf.constant(-float('inf'))),
        tf.print(tf.constant([1 + 2j], tf.complex64)),
    )) == "[[1 100]\n [-3 4]]\n[1 0] 1\nnan -nan -inf\n[?]\n"


def test_print_inside_function_and_strings_format(capsys):
    @tf.function
    def f(x):
        tf.print(x, x * 3)
        tf.print(x / 3)

    # Recorded from TF 2.21.
    assert _printed(capsys, lambda: f(tf.constant([0.2, 0.7]))) == "[0.2 0.7] [0.6 2.1]\n[0.0666666701 0.233333334]\n"
    assert tf.strings.format("{} and {}", (tf.constant([0.1, 1 / 3, 123456789.0]),
                                           tf.constant([0.1, 1 / 3], tf.float64))).numpy() == (
        b"[0.1 0.333333343 123456792] and [0.1 0.33333333333333331]")


# -- input_signature: TensorFlow's binding errors ------------------------------

def test_input_signature_binding_errors_as_tensorflow():
    # guide function.ipynb cell 10 and variations; every message recorded from TF 2.21.
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def g(x):
        return x

    sig = "for signature: (x: TensorSpec(shape=(None,), dtype=tf.int32, name=None))."
    assert error_text(lambda: g(tf.constant([[1, 2], [3, 4]]))) == (
        "TypeError: Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(2, 2), "
        "dtype=tf.int32, name=None) to TensorSpec(shape=(None,), dtype=tf.int32, name=None)`. Received args: "
        "(<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], dtype=int32)>,) "
        "and kwargs: {} " + sig)
    assert error_text(lambda: g(tf.constant([1.0, 2.0]))) == (
        "TypeError: Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(2,), "
        "dtype=tf.float32, name=None) to TensorSpec(shape=(None,), dtype=tf.int32, name=None)`. Received args: "
        "(<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>,) and kwargs: {} " + sig)
    assert error_text(lambda: g([1.5, 2])) == (
        "TypeError: Binding inputs to tf.function failed due to `Cannot convert [1.5, 2] to EagerTensor of "
        "dtype int32`. Received args: ([1.5, 2],) and kwargs: {} " + sig)
    assert error_text(lambda: g(tf.constant([1]), tf.constant([1]))) == (
        "TypeError: Binding inputs to tf.function failed due to `too many positional arguments`. Received "
        "args: (<tf.Tensor: shape=(1,), dtype=int32, numpy=array([1], dtype=int32)>, <tf.Tensor: shape=(1,), "
        "dtype=int32, numpy=array([1], dtype=int32)>) and kwargs: {} " + sig)
    assert error_text(lambda: g(y=tf.constant([1]))) == (
        "TypeError: Binding inputs to tf.function failed due to `missing a required argument: 'x'`. Received "
        "args: () and kwargs: {'y': <tf.Tensor: shape=(1,), dtype=int32, numpy=array([1], dtype=int32)>} " + sig)
    assert repr(g(x=tf.constant([1]))) == "<tf.Tensor: shape=(1,), dtype=int32, numpy=array([1], dtype=int32)>"

    @tf.function(input_signature=[tf.TensorSpec([2], tf.float32),
                                  (tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32))])
    def h(a, b):
        return a

    sig = ("for signature: (a: TensorSpec(shape=(2,), dtype=tf.float32, name=None), b: Tuple[TensorSpec("
           "shape=(), dtype=tf.float32, name=None), TensorSpec(shape=(), dtype=tf.float32, name=None)]).")
    a = "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert error_text(lambda: h(tf.constant([1., 2.]), [1., 2.])) == (
        "TypeError: Binding inputs to tf.function failed due to `Can not cast [1.0, 2.0] to tuple type.`. "
        f"Received args: ({a}, [1.0, 2.0]) and kwargs: {{}} " + sig)
    assert error_text(lambda: h(tf.constant([1., 2.]), ("a", 2.))) == (
        "TypeError: Binding inputs to tf.function failed due to `Cannot convert 'a' to EagerTensor of dtype "
        f"float`. Received args: ({a}, ('a', 2.0)) and kwargs: {{}} " + sig)
    v = tf.Variable([1, 2])
    assert error_text(lambda: h(v, (1., 2.))).startswith(
        "TypeError: Binding inputs to tf.function failed due to `Incompatible type conversion requested to "
        "type float32 for `tf.Variable of type int32. (Variable: <tf.Variable '")


def test_python_values_keep_their_kind_on_conversion():
    # Recorded from TF 2.21: a float is not silently truncated to an integer dtype.
    assert error_text(lambda: tf.constant(1.5, dtype=tf.int32)) == "TypeError: Cannot convert 1.5 to EagerTensor of dtype int32"
    assert error_text(lambda: tf.convert_to_tensor([1, 2.0], tf.int32)) == (
        "TypeError: Cannot convert [1, 2.0] to EagerTensor of dtype int32")
    assert error_text(lambda: tf.constant(1, tf.bool)) == "TypeError: Cannot convert 1 to EagerTensor of dtype bool"
    assert error_text(lambda: tf.convert_to_tensor(1j, tf.float32)) == "TypeError: Cannot convert 1j to EagerTensor of dtype float"
    assert repr(tf.constant(True, tf.int32)) == "<tf.Tensor: shape=(), dtype=int32, numpy=1>"
    assert repr(tf.constant(1.5, tf.complex64)) == "<tf.Tensor: shape=(), dtype=complex64, numpy=(1.5+0j)>"


# -- errors raised while a tf.function traces: "in user code:" ------------------

_USER_CODE = '''
def helper(x):
  return x.nope

@tf.function
def g(x):
  y = x + 1
  return helper(y)

@tf.function
def h(x):
  if x > 0:
    raise ValueError("positive")
  return x

@tf.function
def f(x):
  v = tf.Variable(1.0)
  return v

class MyErr(Exception):
  def __init__(self, a, b):
    super().__init__(a + b)

@tf.function
def m(x):
  raise MyErr("a", "b")
'''


def test_errors_while_tracing_say_in_user_code_as_tensorflow():
    # guide function.ipynb cells 54 and 56; the strings were recorded from TF 2.21 running
    # the same source under the same file name.
    import linecache
    linecache.cache["<cell>"] = (len(_USER_CODE), None, _USER_CODE.splitlines(True), "<cell>")
    ns = {"tf": tf}
    exec(compile(_USER_CODE, "<cell>", "exec"), ns)  # noqa: S102
    got = [error_text(lambda c=c: eval(c, ns)) for c in  # noqa: S307
           ["g(tf.constant(1.0))", "h(tf.constant(1.0))", "f(1.0)", "m(tf.constant(1.0))"]]
    assert got == [
        'AttributeError: in user code:\n\n    File "<cell>", line 8, in g  *\n        return helper(y)\n    File '
        '"<cell>", line 3, in helper  *\n        return x.nope\n\n    AttributeError: \'SymbolicTensor\' object '
        'has no attribute \'nope\'\n',
        'ValueError: in user code:\n\n    File "<cell>", line 13, in h  *\n        raise ValueError("positive")'
        '\n\n    ValueError: positive\n',
        'ValueError: in user code:\n\n    File "<cell>", line 18, in f  *\n        v = tf.Variable(1.0)\n\n    '
        'ValueError: tf.function only supports singleton tf.Variables created on the first call. Make sure the '
        'tf.Variable is only created once or created outside tf.function. See '
        'https://www.tensorflow.org/guide/function#creating_tfvariables for more information.\n',
        'StagingError: in user code:\n\n    File "<cell>", line 27, in m  *\n        raise MyErr("a", "b")\n\n'
        '    MyErr: ab\n',
    ]


def test_optimizer_slots_on_a_second_trace_are_not_singletons():
    # guide function.ipynb cell 56: a first call created the Adam slots, so a second optimizer's
    # slots created by a later trace raise TensorFlow's singleton error (recorded from TF 2.21).
    opt1 = tf.keras.optimizers.Adam(learning_rate=1e-2)
    opt2 = tf.keras.optimizers.Adam(learning_rate=1e-3)

    @tf.function
    def train_step(w, x, y, optimizer):
        with tf.GradientTape() as tape:
            L = tf.reduce_sum(tf.square(w * x - y))
        gradients = tape.gradient(L, [w])
        optimizer.apply_gradients(zip(gradients, [w]))

    w = tf.Variable(2.)
    train_step(w, tf.constant([-1.]), tf.constant([2.]), opt1)
    msg = error_text(lambda: train_step(w, tf.constant([-1.]), tf.constant([2.]), opt2))
    assert msg.startswith("ValueError: in user code:\n\n    File ")
    assert "in train_step  *\n        optimizer.apply_gradients(zip(gradients, [w]))\n" in msg
    assert msg.endswith("\n    ValueError: tf.function only supports singleton tf.Variables created on the first "
                        "call. Make sure the tf.Variable is only created once or created outside tf.function. See "
                        "https://www.tensorflow.org/guide/function#creating_tfvariables for more information.\n")


def test_a_missing_attribute_names_the_tensor_class():
    # Recorded from TF 2.21: an eager tensor is the C type tensorflow.python.framework.ops.EagerTensor,
    # a traced one a SymbolicTensor.
    assert error_text(lambda: tf.constant(1.0).nope) == (
        "AttributeError: 'tensorflow.python.framework.ops.EagerTensor' object has no attribute 'nope'")


def test_a_leaked_tensor_used_in_another_trace_is_out_of_scope():
    # guide function.ipynb cell 40; TF 2.21's message (recorded) goes on with where the tensor was
    # defined, a TensorFlow graph stack tapejax does not have: the first paragraph is compared.
    @tf.function
    def leaky_function(a):
        global _leaked
        _leaked = a + 1
        return _leaked

    assert leaky_function(tf.constant(1)).numpy() == 2
    assert error_text(lambda: _leaked.numpy()) == "AttributeError: 'SymbolicTensor' object has no attribute 'numpy'"

    @tf.function
    def captures_leaked_tensor(b):
        b += _leaked
        return b

    msg = error_text(lambda: captures_leaked_tensor(tf.constant(2)))
    assert msg.split("\n\n")[0] == (
        "TypeError: <tf.Tensor 'add:0' shape=() dtype=int32> is out of scope and cannot be used here. Use return "
        "values, explicit Python locals or TensorFlow collections to access it.\nPlease see "
        "https://www.tensorflow.org/guide/function#all_outputs_of_a_tffunction_must_be_return_values for more "
        "information.")


def test_a_function_closing_over_an_enclosing_jax_trace_is_not_a_leak():
    import jax

    def outer(w):
        t = tf.constant(w)

        @tf.function
        def f(x):
            return x * t
        return f(tf.constant(2.0))._value

    assert float(jax.jit(outer)(3.0)) == 6.0


def test_concrete_function_given_another_dtype_names_its_graph_function():
    # guide function.ipynb cell 20; TF 2.21 (recorded): "cannot compute __inference_double_202 as
    # input #0(zero-based) was expected to be a string tensor but is a int32 tensor
    # [Op:__inference_double_202]" (the number is TensorFlow's process-wide function count).
    import re

    @tf.function
    def double(a):
        return a + a

    double_strings = double.get_concrete_function(tf.TensorSpec(shape=None, dtype=tf.string))
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        double_strings(tf.constant(1))
    assert re.fullmatch(r"cannot compute (__inference_double_\d+) as input #0\(zero-based\) was expected to be a "
                        r"string tensor but is a int32 tensor \[Op:\1\]", str(e.value))


def test_inference_fn_calls_the_trace_with_flat_tensors():
    # guide function.ipynb cell 24; recorded from TF 2.21.
    @tf.function
    def double(a):
        return a + a

    atomic_fn = double.get_concrete_function(tf.TensorSpec(shape=None, dtype=tf.string)).inference_fn
    assert repr(atomic_fn(tf.constant("a"))) == "<tf.Tensor: shape=(), dtype=string, numpy=b'aa'>"
    assert type(atomic_fn).__name__ == "AtomicFunction"
    assert atomic_fn.name.startswith(b"__inference_double_")
    v = tf.Variable(2.0)
    g = tf.function(lambda x: x * v).get_concrete_function(tf.TensorSpec([], tf.float32))
    assert error_text(lambda: g.inference_fn(tf.constant(1.0))) == (
        "ValueError: The FunctionType defines captured inputs. Use call_with_captures instead.")


def test_eager_gather_out_of_range_reads_as_tensorflows_kernelerror_text():
    # intro_to_graphs.ipynb cell 21 and variations; recorded from TF 2.21.
    kernel = "{{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
    assert error_text(lambda: tf.gather(tf.constant([0.0]), [1])) == (
        "InvalidArgumentError: " + kernel + "indices[0] = 1 is not in [0, 1) [Op:GatherV2]")
    assert error_text(lambda: tf.gather(tf.constant([[1, 2]]), [3], axis=1)) == (
        "InvalidArgumentError: " + kernel + "indices[0] = 3 is not in [0, 2) [Op:GatherV2]")
    assert error_text(lambda: tf.gather(tf.constant([0.0]), [[0], [-1]])) == (
        "InvalidArgumentError: " + kernel + "indices[1,0] = -1 is not in [0, 1) [Op:GatherV2]")


# -- keras.saving.register_keras_serializable (intro_to_modules.ipynb cells 31, 36-38) ----

def test_register_keras_serializable_names_as_keras(tmp_path):
    # Names and error recorded from TF 2.21 (Keras 3).
    @tf.keras.saving.register_keras_serializable()
    class A(tf.keras.Model):
        def __init__(self, units=2, **kw):
            super().__init__(**kw)
            self.units = units
            self.d = tf.keras.layers.Dense(units)

        def call(self, x):
            return self.d(x)

    @tf.keras.saving.register_keras_serializable(package="P", name="B")
    class Bq(tf.keras.layers.Layer):
        pass

    assert tf.keras.saving.get_registered_name(A) == "Custom>A"
    assert tf.keras.saving.get_registered_object("Custom>A") is A
    assert tf.keras.saving.get_registered_name(Bq) == "P>B"
    assert tf.keras.saving.get_registered_name(tf.keras.layers.Dense) == "Dense"

    class NoConfig:
        pass

    assert error_text(lambda: tf.keras.saving.register_keras_serializable()(NoConfig)) == (
        "ValueError: Cannot register a class that does not have a get_config() method.")

    # A registered subclassed model comes back as itself, with its weights.
    a = A()
    y = a(tf.ones([1, 4]))
    a.save(str(tmp_path / "a.keras"))
    b = tf.keras.models.load_model(str(tmp_path / "a.keras"))
    assert type(b) is A
    assert float(tf.reduce_max(tf.abs(b(tf.ones([1, 4])) - y))) < 1e-6


def test_unbounded_recursion_while_tracing_is_a_staging_error_per_call():
    # guide function.ipynb cell 42. TF 2.21 (recorded): StagingError, "in user code:", one
    # "in recursive_fn  *" frame per recursive call (TF shows the `if` line, tapejax the call's),
    # ending with the RecursionError.
    @tf.function
    def recursive_fn(n):
        if n > 0:
            return recursive_fn(n - 1)
        else:
            return 1

    msg = error_text(lambda: recursive_fn(tf.constant(5)))
    assert msg.startswith("StagingError: in user code:\n\n")
    assert msg.count("in recursive_fn  *") > 10
    assert "\n\n    RecursionError: maximum recursion depth exceeded" in msg


def test_concrete_function_binding_errors_name_the_flat_signature_too():
    # guide function.ipynb cell 22 and variations; recorded from TF 2.21.
    @tf.function
    def pow(a, b):
        return a ** b

    square = pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)
    msg = error_text(lambda: square(tf.constant(10.0), b=3))
    assert msg.startswith("TypeError: Binding inputs to tf.function failed due to `Can not cast 3 to Literal[2]`. "
                          "Received args: (<tf.Tensor: shape=(), dtype=float32, numpy=10.0>,) and kwargs: {'b': 3} "
                          "for signature: (a: TensorSpec(shape=<unknown>, dtype=tf.float32, name=None), b: Literal[2]) "
                          "-> TensorSpec(shape=")
    tails = [error_text(c).split("\n")[-1] for c in [
        lambda: square(tf.constant(10.0), b=3), lambda: square(tf.constant(10.0), 2, 5), lambda: square(),
        lambda: square(a=1.0, c=2), lambda: square(1.0, 3)]]
    assert tails == [
        "Fallback to flat signature also failed due to: pow(a) got unexpected keyword arguments: b.",
        "Fallback to flat signature also failed due to: pow(a) takes 1 positional arguments, got 3.",
        "Fallback to flat signature also failed due to: pow(a) missing required arguments: a.",
        "Fallback to flat signature also failed due to: pow(a) got unexpected keyword arguments: c.",
        "Fallback to flat signature also failed due to: pow(a) takes 1 positional arguments, got 2.",
    ]


# -- Keras 3: an error in a layer's call names the layer and the arguments it received --------

def test_layer_call_errors_carry_the_call_arguments_as_keras_3():
    # intro_to_modules.ipynb cell 30 and variations; recorded from TF 2.21 (Keras 3). TF's kernel
    # on this CPU is oneDNN's (`__MklMatMul`); tapejax names TensorFlow's MatMul kernel.
    class FlexibleDense(tf.keras.layers.Layer):
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.out_features))

        def call(self, inputs, training=None, scale=1.0):
            return tf.matmul(inputs, self.w) * scale

    fd = FlexibleDense(3)
    fd(tf.ones([1, 3]))
    assert error_text(lambda: fd(tf.constant([[2.0, 2.0, 2.0, 2.0]]), scale=2.0)) == (
        "InvalidArgumentError: Exception encountered when calling FlexibleDense.call().\n\n\x1b[1m"
        "{{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:CPU:0}} Matrix "
        "size-incompatible: In[0]: [1,4], In[1]: [3,3] [Op:MatMul] name: \x1b[0m\n\nArguments received by "
        "FlexibleDense.call():\n  \u2022 inputs=tf.Tensor(shape=(1, 4), dtype=float32)\n  \u2022 training=None\n"
        "  \u2022 scale=2.0")

    class Bad(tf.keras.layers.Layer):
        def call(self, x):
            raise ValueError("boom")

    class Outer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = Bad()

        def call(self, x):
            return self.inner(x)

    bad = ("ValueError: Exception encountered when calling Bad.call().\n\n\x1b[1mboom\x1b[0m\n\nArguments "
           "received by Bad.call():\n  \u2022 x=tf.Tensor(shape=(2,), dtype=float32)")
    assert error_text(lambda: Bad()(tf.ones([2]))) == bad
    assert error_text(lambda: Outer()(tf.ones([2]))) == bad   # only the innermost call's

    class KeyE(tf.keras.layers.Layer):
        def call(self, x):
            return {}["k"]

    assert error_text(lambda: KeyE()(tf.ones([2]))) == (
        "KeyError: 'Exception encountered when calling KeyE.call().\\n\\n\\x1b[1mk\\x1b[0m\\n\\nArguments "
        "received by KeyE.call():\\n  \u2022 x=tf.Tensor(shape=(2,), dtype=float32)'")
