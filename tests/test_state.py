"""The state model and TensorFlow's state semantics of tf.function.

Expected values were recorded from TensorFlow 2.21 running the same snippets.
"""
import jax
import numpy as np
import pytest

import tapejax as tf
from tapejax._core import state as _state
def ints(xs):
    return [int(x.numpy()) for x in xs]


# ---------------------------------------------------------------------------
# The scope itself
# ---------------------------------------------------------------------------

def test_scope_substitutes_collects_and_never_touches_variables():
    v, w = tf.Variable(1.0), tf.Variable(2.0)
    with _state.Scope([(v, np.float32(10.0))]) as scope:
        assert float(v.numpy()) == 10.0          # the given value
        w.assign_add(1.0)                        # an outside Variable: captured, written in the scope
        assert float(w.numpy()) == 3.0
    assert float(w.numpy()) == 2.0               # untouched until committed
    assert list(scope.captured) == [w._id] and list(scope.written) == [w._id]
    scope.commit()
    assert float(w.numpy()) == 3.0 and float(v.numpy()) == 1.0


def test_nested_scope_commits_into_its_parent():
    v = tf.Variable(1.0)
    with _state.Scope() as outer:
        with _state.Scope() as inner:
            v.assign(5.0)
        assert float(v.numpy()) == 1.0
        inner.commit()
        assert float(v.numpy()) == 5.0
    assert float(v.numpy()) == 1.0
    outer.commit()
    assert float(v.numpy()) == 5.0


def test_strict_scope_refuses_other_variables():
    v = tf.Variable(1.0)
    with pytest.raises(_state.Captured), _state.Scope(strict=True):
        v + 1.0


def test_variable_declares_what_it_carries():
    v = tf.Variable(1.0)
    assert not hasattr(v, "__dict__")
    with pytest.raises(AttributeError):
        v.some_attribute = 1
    assert v._sharding is None and v._kind is None
    assert tf.random.Generator.from_seed(1).state._kind == _state.RNG


# ---------------------------------------------------------------------------
# The three silent failures of issue 11
# ---------------------------------------------------------------------------

def test_returned_variable_gives_its_value_after_the_writes():
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(0)

        @tf.function
        def __call__(self):
            self.v.assign_add(1)
            return self.v

    m = M()
    out = [m() for _ in range(3)]
    assert ints(out) == [1, 2, 3]                       # TensorFlow: 1, 2, 3
    assert all(type(x) is tf.Tensor and x.dtype == tf.int32 for x in out)


def test_iterator_advances_inside_a_compiled_function():
    it = iter(tf.data.Dataset.from_tensor_slices([1, 2, 3, 4]))

    @tf.function
    def nxt():
        return next(it)

    assert ints([nxt() for _ in range(3)]) == [1, 2, 3]   # TensorFlow: [1, 2, 3], traced once
    assert nxt.experimental_get_tracing_count() == 1
    assert int(next(it).numpy()) == 4                      # eager next continues from there
    with pytest.raises(StopIteration):
        next(it)


def test_python_values_returned_become_tensors():
    foo = 1
    out = tf.function(lambda: 1 + foo)()
    assert type(out) is tf.Tensor and out.dtype == tf.int32 and int(out.numpy()) == 2
    assert tf.function(lambda: None)() is None

    @tf.function
    def k(x):
        return {"a": 1, "b": [2.0, x], "c": (None, 1.5, True)}

    out = k(tf.constant(3.0))
    # TensorFlow: a int32 1; b [float32 2.0, float32 3.0]; None stays None.
    assert out["a"].dtype == tf.int32 and int(out["a"].numpy()) == 1
    assert [x.dtype for x in out["b"]] == [tf.float32, tf.float32]
    assert [float(x.numpy()) for x in out["b"]] == [2.0, 3.0]
    assert out["c"][0] is None
    assert out["c"][1].dtype == tf.float32 and out["c"][2].dtype == tf.bool


# ---------------------------------------------------------------------------
# Iterators and generators are state
# ---------------------------------------------------------------------------

def test_exhausted_iterator_raises_out_of_range_after_the_step_ran():
    v = tf.Variable(0)
    it = iter(tf.data.Dataset.from_tensor_slices([1, 2]))

    @tf.function
    def nxt():
        v.assign_add(1)
        return next(it)

    assert ints([nxt(), nxt()]) == [1, 2]
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        nxt()
    assert int(v.numpy()) == 3                  # TensorFlow: 3 (the step's ops ran)
    with pytest.raises(StopIteration):
        next(it)


def test_iterator_that_cannot_be_staged_says_what_to_do():
    it = iter(tf.data.Dataset.from_tensor_slices([1, 2, 3]).batch(2))   # batches of 2 and 1

    @tf.function
    def nxt():
        return next(it)

    with pytest.raises(ValueError, match=r"for x in dataset: step\(x\)"):
        nxt()


def test_generator_advances_inside_a_compiled_function_like_eagerly():
    g = tf.random.Generator.from_seed(1)
    f = tf.function(lambda: g.normal([2]))
    compiled = [f().numpy() for _ in range(3)]
    g2 = tf.random.Generator.from_seed(1)
    eager = [g2.normal([2]).numpy() for _ in range(3)]
    np.testing.assert_allclose(compiled, eager)
    assert not np.allclose(compiled[0], compiled[1])


def test_python_side_effects_happen_at_trace_time_only():
    calls = []

    @tf.function
    def f(x):
        calls.append(1)
        return x + 1

    for _ in range(3):
        f(tf.constant(1.0))
    assert len(calls) == 1


# ---------------------------------------------------------------------------
# Tracing rules
# ---------------------------------------------------------------------------

def test_variable_arguments_trace_per_shape_dtype_and_trainability():
    @tf.function
    def f(v):
        v.assign_add(tf.ones_like(v))
        return v * 2

    a, b, c = tf.Variable(1.0), tf.Variable(5.0), tf.Variable([1.0, 2.0])
    # TensorFlow: 4.0 12.0, traced once, a == 2.0, b == 6.0
    assert float(f(a).numpy()) == 4.0 and float(f(b).numpy()) == 12.0
    assert f.experimental_get_tracing_count() == 1
    assert float(a.numpy()) == 2.0 and float(b.numpy()) == 6.0
    np.testing.assert_allclose(f(c).numpy(), [4.0, 6.0])
    assert f.experimental_get_tracing_count() == 2
    f(tf.Variable(1.0, trainable=False))
    assert f.experimental_get_tracing_count() == 3


def test_assigned_variables_do_not_retrace():
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        v.assign_add(x)
        return v.read_value()

    for _ in range(4):
        f(tf.constant(1.0))
    assert float(v.numpy()) == 4.0 and f.experimental_get_tracing_count() == 1


def test_variables_created_on_the_first_call_count_two_traces_like_tensorflow():
    class C:
        def __init__(self):
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(1.0)
            return self.v + x

    c = C()
    assert float(c(tf.constant(1.0)).numpy()) == 2.0
    assert c.__call__.experimental_get_tracing_count() == 2      # TensorFlow: 2
    assert float(c(tf.constant(2.0)).numpy()) == 3.0
    assert c.__call__.experimental_get_tracing_count() == 2
    np.testing.assert_allclose(c(tf.constant([2.0])).numpy(), [3.0])
    assert c.__call__.experimental_get_tracing_count() == 3      # TensorFlow: 3


def test_new_variable_on_a_later_call_raises_tensorflows_error():
    made = []

    @tf.function
    def f(x):
        made.append(1)
        if len(made) > 1:
            tf.Variable(2.0)
        return x

    f(tf.constant(1.0))
    with pytest.raises(ValueError, match="^Creating variables on a non-first call to a function "
                                         "decorated with tf.function.$"):
        f(tf.constant([1.0]))


def test_variable_created_on_every_trace_raises_tensorflows_error():
    @tf.function
    def f(x):
        return tf.Variable(1.0) + x

    with pytest.raises(ValueError, match="only supports singleton tf.Variables created on the first call"):
        f(tf.constant(1.0))


# ---------------------------------------------------------------------------
# Failures change nothing; donation loses nothing
# ---------------------------------------------------------------------------

def test_a_body_that_raises_leaves_every_variable_readable_and_unchanged():
    v = tf.Variable(tf.ones([3]))

    @tf.function
    def f(x):
        v.assign(v * 2.0)
        if x.shape[0] == 2:
            raise RuntimeError("boom")
        return v.read_value()

    f(tf.ones([1]))
    f(tf.ones([1]))                      # the buffer of v has been donated, twice
    with pytest.raises(RuntimeError, match="boom"):
        f(tf.ones([2]))
    assert not isinstance(v._stored, jax.core.Tracer)
    np.testing.assert_allclose(v.numpy(), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(f(tf.ones([1])).numpy(), [8.0, 8.0, 8.0])


def test_donation_updates_in_place_and_never_deletes_what_the_user_holds():
    v = tf.Variable(tf.ones([3]))

    @tf.function
    def step():
        v.assign(v * 2.0)
        return v

    held = v.read_value()               # shares the buffer: the first call donates a copy
    out1 = step()
    donated = v._stored
    out2 = step()                       # out1 does not share v's buffer? Either way it survives
    np.testing.assert_allclose(held.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(out1.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(out2.numpy(), [4.0, 4.0, 4.0])
    plain = tf.Variable(tf.ones([3]))

    @tf.function
    def update():
        plain.assign_add(tf.ones([3]))

    update()
    before = plain._stored
    update()
    assert before.is_deleted()          # the step updated the weights in place
    assert donated is not None
    np.testing.assert_allclose(plain.numpy(), [3.0, 3.0, 3.0])


# ---------------------------------------------------------------------------
# init_scope and executing_eagerly
# ---------------------------------------------------------------------------

def test_init_scope_runs_eagerly_on_real_values():
    v = tf.Variable(1.0)
    seen = []

    @tf.function
    def f(x):
        with tf.init_scope():
            seen.append(tf.executing_eagerly())
            v.assign(5.0)                # a real, immediate assignment
        seen.append(tf.executing_eagerly())
        return v + x

    assert float(f(tf.constant(1.0)).numpy()) == 6.0
    assert seen[:2] == [True, False]      # TensorFlow: init True, in False
    assert float(v.numpy()) == 5.0
    assert tf.executing_eagerly()


# ---------------------------------------------------------------------------
# tf.gradients / tf.hessians, concrete functions, leaked tensors
# ---------------------------------------------------------------------------

def test_gradients_and_hessians_differentiate_the_trace():
    @tf.function
    def gr(x):
        y = x * x * x
        return tf.gradients(y, x), tf.hessians(y, x)

    g, h = gr(tf.constant(2.0))
    assert float(g[0].numpy()) == 12.0 and float(h[0].numpy()) == 12.0   # TensorFlow: 12.0, 12.0

    @tf.function
    def between_intermediates(x):
        c = tf.constant(3.0)
        u = x * x
        y = c * u + tf.cond(x > 0, lambda: u, lambda: -x)
        return tf.gradients(y, [u, c, x])

    gu, gc, gx = between_intermediates(tf.constant(2.0))
    assert float(gu.numpy()) == 4.0 and float(gc.numpy()) == 4.0 and float(gx.numpy()) == 16.0

    @tf.function
    def hess(x):
        return tf.hessians(tf.reduce_sum(x ** 3), x)[0]

    np.testing.assert_allclose(hess(tf.constant([1.0, 2.0])).numpy(), [[6.0, 0.0], [0.0, 12.0]])


def test_gradients_eagerly_raise_tensorflows_error():
    with pytest.raises(RuntimeError, match="^tf.gradients is not supported when eager execution is enabled. "
                                           "Use tf.GradientTape instead.$"):
        tf.gradients(tf.constant(1.0), tf.constant(2.0))


def test_concrete_function_binds_python_arguments_and_prints_its_signature():
    v = tf.Variable(1.0)

    @tf.function
    def g(x, n):
        return {"a": x * v * n, "b": [x, None]}

    cf = g.get_concrete_function(tf.TensorSpec([], tf.float32), 3)
    assert float(cf(tf.constant(2.0))["a"].numpy()) == 6.0
    text = g.pretty_printed_concrete_signatures()
    lines = text.splitlines()
    # TensorFlow's text, but for the capture's id.
    assert lines[:5] == [
        "Input Parameters:",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.float32, name=None)",
        "  n (POSITIONAL_OR_KEYWORD): Literal[3]",
        "Output Type:",
        "  Dict[['a', TensorSpec(shape=(), dtype=tf.float32, name=None)], ['b', List[TensorSpec(shape=(), "
        "dtype=tf.float32, name=None), Literal[None]]]]"]
    assert lines[5] == "Captures:" and lines[6].endswith(": TensorSpec(shape=(), dtype=tf.resource, name=None)")


def test_tensor_leaked_out_of_a_trace_raises_typeerror():
    leak = []

    @tf.function
    def g(x):
        y = x * 2
        leak.append(y)
        return y

    g(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="is out of scope and cannot be used here. Use return values"):
        leak[0] + 1


def test_traced_values_print_like_tensorflow_graph_tensors():
    seen = []

    @tf.function
    def g(x):
        y = x * 2
        z = y * 3
        seen.append((repr(x), repr(y), str(z), repr(tf.reduce_sum(z))))
        return y

    g(tf.constant([1.0, 2.0]))
    # TensorFlow prints exactly these.
    assert seen[0] == ("<tf.Tensor 'x:0' shape=(2,) dtype=float32>", "<tf.Tensor 'mul:0' shape=(2,) dtype=float32>",
                       'Tensor("mul_1:0", shape=(2,), dtype=float32)', "<tf.Tensor 'Sum:0' shape=() dtype=float32>")


def test_python_side_effect_guarding_an_assign_runs_at_the_single_trace():
    # TF's guide ("Better performance with tf.function"): the Variable exists before the call, so
    # TensorFlow traces once; the assign staged by that trace runs on every call: 1, 2, 3.
    class Model(tf.Module):
        def __init__(self):
            self.v = tf.Variable(0)
            self.counter = 0

        @tf.function
        def __call__(self):
            if self.counter == 0:
                self.counter += 1
                self.v.assign_add(1)
            return self.v

    m = Model()
    assert [int(m().numpy()) for _ in range(3)] == [1, 2, 3]
    assert m.__call__.experimental_get_tracing_count() == 1

    w = tf.Variable(0)

    @tf.function
    def g():
        w.assign_add(1)
        return w

    assert [int(g().numpy()) for _ in range(3)] == [1, 2, 3] and int(w.numpy()) == 3
    assert g.experimental_get_tracing_count() == 1
