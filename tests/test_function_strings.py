"""String tensors in tf.function: arguments, string ops inside, string outputs, trace counts.

Expected values are TensorFlow 2.21's (CPU), recorded by running the same code with it.
tapejax runs the string ops on the host around the XLA program (tapejax._core.host); the last
tests check the errors for what that cannot do, which must name the problem and the fix.
"""
import numpy as np
import pytest

import tapejax as tf


def _strings(t):
    return t.numpy().tolist()


def test_traced_once_per_string_shape_not_value(capsys):
    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a

    assert double(tf.constant("a")).numpy() == b"aa"
    assert double(tf.constant("b")).numpy() == b"bb"
    assert _strings(double(tf.constant(["a", "b"]))) == [b"aa", b"bb"]
    assert _strings(double(tf.constant(["c", "dd"]))) == [b"cc", b"dddd"]
    assert double.experimental_get_tracing_count() == 2
    assert capsys.readouterr().out == (
        'Tracing with Tensor("a:0", shape=(), dtype=string)\n'
        'Tracing with Tensor("a:0", shape=(2,), dtype=string)\n')


def test_numbers_computed_from_strings_enter_the_compiled_program():
    @tf.function
    def parse(s, x):
        return tf.strings.to_number(s) * x + tf.cast(tf.strings.length(s), tf.float32)

    assert parse(tf.constant(["1.5", "20"]), tf.constant(2.0)).numpy().tolist() == [6.0, 42.0]
    assert parse(tf.constant(["3", "-4.25"]), tf.constant(10.0)).numpy().tolist() == [31.0, -37.5]
    assert parse.experimental_get_tracing_count() == 1


def test_string_and_number_outputs():
    @tf.function
    def both(s):
        return tf.strings.upper(s), tf.strings.length(s)

    up, n = both(tf.constant(["ab", "cde"]))
    assert _strings(up) == [b"AB", b"CDE"] and n.dtype == tf.int32 and n.numpy().tolist() == [2, 3]
    up, n = both(tf.constant(["xyzw", ""]))
    assert _strings(up) == [b"XYZW", b""] and n.numpy().tolist() == [4, 0]

    @tf.function
    def dic(d):
        return {"up": tf.strings.upper(d["s"]), "n": d["n"] + 1}

    out = dic({"s": tf.constant("ab"), "n": tf.constant(1)})
    assert out["up"].numpy() == b"AB" and int(out["n"]) == 2


def test_string_constant_output():
    g = tf.function(lambda x: (x * 2.0, tf.constant("abc")))
    y, s = g(tf.constant(1.0))
    assert float(y) == 2.0
    assert repr(s) == "<tf.Tensor: shape=(), dtype=string, numpy=b'abc'>"


def test_input_signature_of_strings():
    traces = []

    @tf.function(input_signature=[tf.TensorSpec([2], tf.string)])
    def sig(s):
        traces.append(1)
        return tf.strings.join([s, "!"], separator="-")

    assert _strings(sig(tf.constant(["a", "bc"]))) == [b"a-!", b"bc-!"]
    assert _strings(sig(["x", "y"])) == [b"x-!", b"y-!"]     # a Python list converts to the spec
    with pytest.raises(TypeError, match=r"dtype=tf.int32, name=None\) to TensorSpec\(shape=\(2,\), dtype=tf.string"):
        sig(tf.constant([1, 2]))
    with pytest.raises(TypeError, match=r"Can not cast TensorSpec\(shape=\(3,\)"):
        sig(tf.constant(["a", "b", "c"]))
    assert len(traces) == 1 and sig.experimental_get_tracing_count() == 1


def test_unknown_dimensions_of_strings_trace_once(capsys):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def up(s):
        print("Tracing up", s)
        return tf.strings.upper(s)

    assert _strings(up(tf.constant(["a", "b"]))) == [b"A", b"B"]
    assert _strings(up(tf.constant(["c", "d", "e"]))) == [b"C", b"D", b"E"]
    assert up.experimental_get_tracing_count() == 1
    assert capsys.readouterr().out == 'Tracing up Tensor("s:0", shape=(None,), dtype=string)\n'


def test_numbers_from_strings_of_unknown_size_trace_per_size():
    # The XLA program takes the numbers with a static shape: TensorFlow traces once, tapejax
    # once per size (a documented difference). The values are TensorFlow's.
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([], tf.float32)])
    def nums(s, x):
        return tf.strings.to_number(s) * x

    assert nums(tf.constant(["1", "2"]), tf.constant(2.0)).numpy().tolist() == [2.0, 4.0]
    assert nums(tf.constant(["3", "4", "5"]), tf.constant(2.0)).numpy().tolist() == [6.0, 8.0, 10.0]
    assert nums(tf.constant(["6", "7", "8"]), tf.constant(3.0)).numpy().tolist() == [18.0, 21.0, 24.0]
    assert nums(tf.constant(["9", "1"]), tf.constant(1.0)).numpy().tolist() == [9.0, 1.0]
    assert nums.experimental_get_tracing_count() == 2
    cf = nums.get_concrete_function()
    assert cf(tf.constant(["1", "2", "3", "4"]), tf.constant(1.0)).numpy().tolist() == [1.0, 2.0, 3.0, 4.0]


def test_branches_and_masks_on_string_comparisons():
    @tf.function
    def choose(s, x):
        if s == "neg":
            return -x
        return x

    assert float(choose(tf.constant("neg"), tf.constant(3.0))) == -3.0
    assert float(choose(tf.constant("pos"), tf.constant(3.0))) == 3.0
    assert choose.experimental_get_tracing_count() == 1

    @tf.function
    def where(s):
        return tf.where(tf.equal(s, "yes"), 1, 0)

    assert where(tf.constant(["yes", "no", "yes"])).numpy().tolist() == [1, 0, 1]
    assert where(tf.constant(["no", "no", "yes"])).numpy().tolist() == [0, 0, 1]


def test_python_arguments_beside_strings():
    @tf.function
    def prefix(s, n):
        return tf.strings.substr(s, 0, n)

    assert prefix(tf.constant("hello"), 2).numpy() == b"he"
    assert prefix(tf.constant("world"), 2).numpy() == b"wo"
    assert prefix(tf.constant("world"), 3).numpy() == b"wor"
    assert prefix.experimental_get_tracing_count() == 2


def test_string_ops_per_call():
    regex = tf.function(lambda s: tf.strings.regex_replace(s, "[aeiou]", "_"))
    assert _strings(regex(tf.constant(["banana", "kiwi"]))) == [b"b_n_n_", b"k_w_"]
    assert _strings(regex(tf.constant(["apple", "fig"]))) == [b"_ppl_", b"f_g"]

    @tf.function
    def index(s):
        return s[1], s[0] + s[2]

    one, two = index(tf.constant(["a", "b", "c"]))
    assert one.numpy() == b"b" and two.numpy() == b"ac"

    @tf.function
    def shapes(s):
        return tf.shape(s), tf.size(s), tf.reshape(s, [-1])

    shape, size, flat = shapes(tf.constant([["a", "b"], ["c", "d"]]))
    assert shape.numpy().tolist() == [2, 2] and int(size) == 4 and _strings(flat) == [b"a", b"b", b"c", b"d"]

    numlen = tf.function(lambda s: tf.strings.length(s) + 1)
    assert numlen(tf.constant(["abc", "de"])).numpy().tolist() == [4, 3]

    @tf.function
    def lookup(keys):
        table = tf.constant(["zero", "one", "two"])
        return tf.gather(table, tf.strings.to_number(keys, tf.int32))

    assert _strings(lookup(tf.constant(["2", "0"]))) == [b"two", b"zero"]
    assert _strings(lookup(tf.constant(["1", "1"]))) == [b"one", b"one"]


def test_results_whose_size_depends_on_the_strings():
    split = tf.function(lambda s: tf.strings.split(s))
    assert _strings(split(tf.constant("a b c"))) == [b"a", b"b", b"c"]
    assert _strings(split(tf.constant("a b"))) == [b"a", b"b"]
    decode = tf.function(lambda s: tf.strings.unicode_decode(s, "UTF-8"))   # numbers, returned
    assert decode(tf.constant("héllo")).numpy().tolist() == [104, 233, 108, 108, 111]
    assert decode(tf.constant("hi")).numpy().tolist() == [104, 105]
    assert decode.experimental_get_tracing_count() == 1
    count = tf.function(lambda s: tf.size(tf.strings.split(s)))   # tf.size: computed per call
    assert int(count(tf.constant("a b c"))) == 3
    assert int(count(tf.constant("a b"))) == 2
    assert count.experimental_get_tracing_count() == 1


def test_strings_made_from_values_of_the_program():
    @tf.function
    def fmt(x):
        return tf.strings.as_string(x * 2)

    assert fmt(tf.constant(3)).numpy() == b"6"
    assert fmt(tf.constant(5)).numpy() == b"10"

    @tf.function
    def label(x):
        return tf.strings.join(["x=", tf.strings.as_string(x, precision=2)])

    assert _strings(label(tf.constant([1.5, 2.25]))) == [b"x=1.50", b"x=2.25"]
    assert _strings(label(tf.constant([3.0, -1.0]))) == [b"x=3.00", b"x=-1.00"]
    assert label.experimental_get_tracing_count() == 1

    @tf.function
    def report(name, x):
        total = tf.reduce_sum(x * 2)
        return tf.strings.format("{}: {}", [name, total]), total

    text, total = report(tf.constant("sum"), tf.constant([1, 2]))
    assert text.numpy() == b'"sum": 6' and int(total) == 6
    text, total = report(tf.constant("total"), tf.constant([3, 4]))
    assert text.numpy() == b'"total": 14' and int(total) == 14
    assert report.experimental_get_tracing_count() == 1

    mixed = tf.function(lambda s, x: tf.strings.join([s, tf.strings.as_string(x)]))
    assert mixed(tf.constant("n="), tf.constant(3)).numpy() == b"n=3"


def test_variables_and_nested_functions_with_strings():
    v = tf.Variable(0.0)

    @tf.function
    def acc(s):
        v.assign_add(tf.reduce_sum(tf.strings.to_number(s)))
        return v

    assert float(acc(tf.constant(["1.5", "2"]))) == 3.5
    assert float(acc(tf.constant(["0.25", "-1"]))) == 2.75

    inner = tf.function(lambda s: tf.strings.upper(s))
    outer = tf.function(lambda s, n: inner(s) + tf.strings.as_string(n * 2))
    assert outer(tf.constant("ab"), tf.constant(2)).numpy() == b"AB4"
    assert outer(tf.constant("cd"), tf.constant(5)).numpy() == b"CD10"


def test_tf_print_of_string_arguments(capsys):
    @tf.function
    def printer(s):
        tf.print("got", s, tf.constant("const"))
        return tf.strings.length(s)

    assert int(printer(tf.constant("hello"))) == 5
    assert int(printer(tf.constant("bye"))) == 3
    assert capsys.readouterr().out == 'got "hello" "const"\ngot "bye" "const"\n'


def test_concrete_function_of_strings():
    @tf.function
    def ident(s):
        return s

    cf = ident.get_concrete_function(tf.TensorSpec([2], tf.string))
    assert str(cf.function_type) == ("(s: TensorSpec(shape=(2,), dtype=tf.string, name=None)) -> "
                                     "TensorSpec(shape=(2,), dtype=tf.string, name=None)")
    assert cf.pretty_printed_signature() == (
        "Input Parameters:\n"
        "  s (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.string, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(2,), dtype=tf.string, name=None)\n"
        "Captures:\n"
        "  None")
    assert _strings(cf(tf.constant(["u", "v"]))) == [b"u", b"v"]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"input #0\(zero-based\) was expected to be a string tensor but is a float tensor"):
        cf(tf.constant([1.0, 2.0]))
    assert ident(tf.constant([["a"], ["b"]])).numpy().tolist() == [[b"a"], [b"b"]]


def test_string_argument_has_no_value_while_traced():
    @tf.function
    def nump(s):
        return s.numpy()

    with pytest.raises(AttributeError, match="'SymbolicTensor' object has no attribute 'numpy'"):
        nump(tf.constant("a"))

    @tf.function
    def to_numpy(s):
        return np.asarray(s)

    with pytest.raises(NotImplementedError, match="symbolic value"):
        to_numpy(tf.constant("a"))


# -- what the host program cannot do: errors naming the problem and the fix ----------------

def test_ragged_results_of_string_arguments_raise():
    split = tf.function(lambda s: tf.strings.split(s))
    with pytest.raises(TypeError, match="tf.strings.split.*RaggedTensor.*outside the function"):
        split(tf.constant(["a b", "c"]))


def test_numbers_from_strings_made_of_program_values_raise():
    f = tf.function(lambda x: tf.strings.length(tf.strings.as_string(x)) + 1)
    with pytest.raises(TypeError, match="numbers from strings made of values of the compiled.*directly"):
        f(tf.constant(123))


def test_strings_from_values_of_a_branch_raise():
    f = tf.function(lambda x: tf.cond(x > 0, lambda: tf.strings.as_string(x + 1), lambda: tf.constant("neg")))
    with pytest.raises(TypeError, match="inside tf.cond.*Return the numbers"):
        f(tf.constant(3))


def test_shapes_that_change_with_the_strings_raise():
    f = tf.function(lambda s: tf.strings.split(s).shape[0])   # the trace's shape, used by Python
    assert int(f(tf.constant("a b c"))) == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(2,\).*traced with shape \(3,\).*Pad"):
        f(tf.constant("a b"))
    double = tf.function(lambda s: tf.strings.unicode_decode(s, "UTF-8") * 2)   # the program takes them
    assert double(tf.constant("héllo")).numpy().tolist() == [208, 466, 216, 216, 222]
    with pytest.raises(tf.errors.InvalidArgumentError, match="its size depends on the strings"):
        double(tf.constant("hi"))


def test_tape_outside_a_call_with_strings_raises():
    f = tf.function(lambda s, x: tf.strings.to_number(s) * x)
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(NotImplementedError, match="string arguments.*inside the function"):
            f(tf.constant("3"), x)
    assert float(f(tf.constant("3"), x)) == 6.0   # without a tape recording it


def test_saved_model_of_a_function_of_strings_raises(tmp_path):
    class Lengths(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
        def f(self, s):
            return tf.strings.length(s)

    m = Lengths()
    assert int(m.f(tf.constant("abc"))) == 3
    with pytest.raises(ValueError, match="takes string tensors.*token ids"):
        tf.saved_model.save(m, str(tmp_path / "m"))
