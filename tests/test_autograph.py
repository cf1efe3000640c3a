"""AutoGraph: Python control flow on tensors inside tf.function.

Each program runs eagerly (plain Python on concrete tensors) and under
tf.function; the results must agree, and two calls with new values of the same
shapes must compile once. Where the semantics are subtle (break/continue/return,
undefined variables), the expected values and messages were recorded with
TensorFlow 2.21.
"""
import warnings

import numpy as np
import pytest

import tapejax as tf

# A program AutoGraph fails to convert would silently run unconverted: make that a failure here.
pytestmark = pytest.mark.filterwarnings("error:AutoGraph could not transform")


# ---------------------------------------------------------------------------
# Programs (module-level, so AutoGraph can read their source)
# ---------------------------------------------------------------------------

def if_else(x):
    if tf.reduce_sum(x) > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def if_elif(x):
    s = tf.reduce_sum(x)
    if s > 10.0:
        k = 3
    elif s > 5.0:
        k = 2
    elif s > 0.0:
        k = 1
    else:
        k = 0
    return k


def if_temporary(x):
    # `t` is local to one branch and not used after: it needs no else.
    if tf.reduce_sum(x) > 0:
        t = x * 3.0
        y = t + 1.0
    else:
        y = x
    return y


def if_return(x):
    if tf.reduce_sum(x) > 0:
        return x + 1.0
    return x - 1.0


def if_and_or_not(x):
    s = tf.reduce_sum(x)
    if s > 0 and s < 5 or not s > -3:
        return s * 10.0
    return s


def if_expression(x):
    s = tf.reduce_sum(x)
    return s * 2.0 if s > 0 else -s


def while_tensor(x):
    i = tf.constant(0)
    s = tf.reduce_sum(x)
    while s < 100.0:
        s = s * 2.0 + 1.0
        i += 1
    return s, i


def for_tf_range(x):
    s = tf.zeros_like(x)
    for i in tf.range(tf.shape(x)[0]):
        s = s + tf.cast(i, tf.float32) * x
    return s


def for_tensor(x):
    s = tf.constant(0.0)
    n = tf.constant(0)
    for v in x:
        s += v * v
        n += 1
    return s, n


def for_break(x):
    s = tf.constant(0.0)
    for v in x:
        if v < 0:
            break
        s += v
    return s


def while_continue_break(n):
    i = tf.constant(0)
    s = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > 7:
            break
        s += i
    return i, s


def nested_loops_break(x):
    s = 0.0
    for i in tf.range(3):
        for j in tf.range(4):
            if j > i:
                break
            s += tf.cast(i * j, tf.float32) + x
    return s


def loop_none_initialized(x):
    y = None                        # None before a staged loop: defined by the loop (TF: zeros placeholder)
    for i in tf.range(3):
        y = x + tf.cast(i, tf.float32)
    return y


def loop_defines_variable(x):
    # `z` is first assigned inside the loop (TF defines it with zeros of the right shape).
    while x > 0:
        x = x - 1.0
        z = x * 2.0
    return z


def python_loop_appends(x):
    out = []
    for i in range(3):              # a Python range: unrolled, the list grows while tracing
        out.append(x * float(i))
    return tf.stack(out)


def python_condition(x, flag=True):
    if flag:                        # a Python value stays Python: only this branch is traced
        y = x + 1.0
    else:
        y = x.undefined_attribute
    return y


def python_return_in_loop(x):
    for i in range(5):
        if i == 3:
            return x * float(i)
    return x


def _helper_abs(v):
    if v < 0:
        return -v
    return v


def calls_helper(x):
    return _helper_abs(tf.reduce_sum(x)) + 1.0


def calls_closure_and_lambda(x):
    scale = 3.0

    def inner(v):
        if v > 0:
            v = v * scale
        return v

    sq = lambda v: v * v if v > 1.0 else v  # noqa: E731
    return sq(inner(tf.reduce_sum(x)))


def for_dataset(x):
    s = tf.reduce_sum(x)
    for e in tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]):
        if e > 1.5:
            s += e
    return s


def for_dataset_break(x):
    s = tf.reduce_sum(x)
    for e in tf.data.Dataset.range(10):
        if e > 3:
            break
        s += tf.cast(e, tf.float32)
    return s


def for_tensor_target_used_after(x):
    last = tf.constant(-1.0)
    for v in x:
        last = v
    return last


def for_else_and_return(x):
    for v in x:
        if v > 1.5:
            break
    else:
        x = x * 2.0                 # runs only when the staged loop did not break
    for i in range(3):
        if i == 5:
            return x * 10.0
    else:
        x = x + 1.0
    return x


PROGRAMS = [
    (if_else, [1.0, 2.0], [-1.0, -3.0]),
    (if_elif, [3.0, 4.0], [0.5, 0.25]),
    (if_elif, [30.0, 4.0], [-3.0, -4.0]),
    (if_temporary, [1.0, 2.0], [-1.0, -2.0]),
    (if_return, [1.0, 2.0], [-1.0, -2.0]),
    (if_and_or_not, [1.0, 2.0], [-3.0, -2.0]),
    (if_expression, [1.0, 2.0], [-3.0, -2.0]),
    (while_tensor, [1.0, 2.0], [0.5, 0.25]),
    (for_tf_range, [1.0, 2.0], [3.0, -1.0]),
    (for_tensor, [1.0, 2.0], [3.0, -1.0]),
    (for_break, [1.0, 2.0, -1.0, 4.0], [-1.0, 2.0, 3.0, 4.0]),
    (nested_loops_break, 0.5, 1.5),
    (loop_defines_variable, 3.5, 2.0),
    (loop_none_initialized, 1.5, -2.0),
    (python_loop_appends, [1.0, 2.0], [3.0, 4.0]),
    (python_condition, [1.0, 2.0], [3.0, 4.0]),
    (python_return_in_loop, [1.0, 2.0], [3.0, 4.0]),
    (calls_helper, [1.0, 2.0], [-3.0, -4.0]),
    (calls_closure_and_lambda, [1.0, 2.0], [-3.0, 0.5]),
    (for_dataset, [1.0, 2.0], [0.5, 0.25]),
    (for_dataset_break, [1.0, 2.0], [0.5, 0.25]),
    (for_tensor_target_used_after, [1.0, 2.0], [3.0, 4.0]),
    (while_continue_break, 20, 5),
    (for_else_and_return, [1.0, 2.0], [1.0, 1.0]),
]


def _np(r):
    if isinstance(r, (tuple, list)):
        return [_np(x) for x in r]
    return np.asarray(r.numpy() if hasattr(r, "numpy") else r)


@pytest.mark.parametrize("fn,a,b", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_program_matches_eager_and_traces_once(fn, a, b):
    f = tf.function(fn)
    for value in (a, b):
        x = tf.constant(value)
        eager = _np(fn(x))
        compiled = _np(f(x))
        np.testing.assert_allclose(np.asarray(compiled, dtype=np.float64), np.asarray(eager, dtype=np.float64),
                                   rtol=1e-6)
    assert f.experimental_get_tracing_count() == 1


def while_break_continue_else(x):
    s = tf.constant(0.0)
    i = tf.constant(0)
    while i < 10:
        i += 1
        if tf.cast(i, tf.float32) > x:
            break
        if i % 2 == 0:
            continue
        s += tf.cast(i, tf.float32)
    else:
        s = s - 100.0
    return s, i

def nested_for_break_continue(x):
    total = tf.constant(0.0)
    for row in x:
        for v in row:
            if v < 0:
                continue
            if v > 5:
                break
            total += v
    return total

def python_continue(x):
    for i in range(4):
        if i == 2:
            continue
        x = x * 2.0 + float(i)
    return x

def nested_if_branch_temporaries(x):
    y = x
    if x > 0:
        if x > 10:
            y = x * 3.0
        else:
            y = x * 2.0
        z = y + 1.0
    else:
        z = -x
    return y + z

def while_with_if(x):
    n = tf.constant(0)
    while x > 1.0:
        if x > 100.0:
            x = x / 10.0
        else:
            x = x / 2.0
        n += 1
    return x, n

def tf_range_start_if_else(x):
    acc = tf.zeros([2])
    for i in tf.range(1, 6):
        if i % 2 == 1:
            acc = acc + tf.cast(i, tf.float32) * x
        else:
            acc = acc - x
    return acc

def python_counter_in_staged_loop(x):
    k = 0
    for v in x:
        k += 1
        if v > 2:
            break
    return k

def python_while_in_staged_loop(x):
    s = 0.0
    for i in tf.range(3):
        j = 0
        while j < i:
            s += x
            j += 1
    return s


# Values recorded with TensorFlow 2.21 (tf.function with AutoGraph).
TF_RECORDED = [
    (nested_for_break_continue, [[1.0, -2.0, 3.0], [7.0, 1.0, 1.0], [2.0, 2.0, 9.0]], 8.0),
    (python_continue, 1.0, 13.0),
    (nested_if_branch_temporaries, 5.0, 21.0),
    (nested_if_branch_temporaries, 20.0, 121.0),
    (nested_if_branch_temporaries, -3.0, 0.0),
    (while_with_if, 1000.0, [0.78125, 8]),
    (while_with_if, 0.5, [0.5, 0]),
    (tf_range_start_if_else, [1.0, 2.0], [7.0, 14.0]),
    (python_counter_in_staged_loop, [1.0, 3.0, 2.0], 2),
    (python_counter_in_staged_loop, [0.0, 1.0, 2.0], 3),
    (python_while_in_staged_loop, 1.5, 4.5),
    # TF rejects a loop `else` after a tensor break; Python's semantics apply here.
    (while_break_continue_else, 4.5, [4.0, 5]),
    (while_break_continue_else, 20.0, [-75.0, 10]),
    (for_break, [1.0, 2.0, -1.0, 4.0], 3.0),
    (while_continue_break, 20, [8, 19]),
    (nested_loops_break, 0.5, 10.0),
    (loop_defines_variable, 3.5, -1.0),
    (loop_none_initialized, 1.5, 3.5),
    (for_dataset, 0.5, 5.5),
    (for_dataset_break, 0.5, 6.5),
    (if_return, -3.0, -4.0),
    (python_return_in_loop, 2.0, 6.0),
]


@pytest.mark.parametrize("fn,x,expected", TF_RECORDED, ids=[p[0].__name__ for p in TF_RECORDED])
def test_tensorflow_recorded(fn, x, expected):
    np.testing.assert_allclose(_np(tf.function(fn)(tf.constant(x))), expected)


def test_staged_loop_is_not_unrolled():
    f = tf.function(for_tf_range)
    # One program for every length-3 input: the loop bound is a traced value.
    f(tf.constant([1.0, 2.0, 3.0]))
    text = str(__import__("jax").make_jaxpr(lambda v: f._converted_function()(tf.Tensor(v))._value)(np.ones(3, np.float32)))
    assert "while" in text


def test_tf_range_with_traced_bound():
    @tf.function
    def tri(n):
        s = tf.constant(0)
        for i in tf.range(n):
            s += i
        return s

    assert int(tri(tf.constant(5))) == 10
    assert int(tri(tf.constant(101))) == 5050
    assert tri.experimental_get_tracing_count() == 1


def test_python_range_with_tensor_bound_is_staged():
    @tf.function
    def count(n):
        s = tf.constant(0)
        for i in range(n):
            s += 2
        return s

    assert int(count(tf.constant(4))) == 8
    assert int(count(tf.constant(7))) == 14
    assert count.experimental_get_tracing_count() == 1


def test_variable_assign_in_branch_and_loop():
    v = tf.Variable(0.0)

    @tf.function
    def step(x):
        for i in tf.range(3):
            if x > tf.cast(i, tf.float32):
                v.assign_add(1.0)
        return v.read_value()

    assert float(step(tf.constant(1.5))) == 2.0      # TF: i = 0, 1 pass
    assert float(step(tf.constant(0.5))) == 3.0
    assert step.experimental_get_tracing_count() == 1


def test_method_and_module():
    class Counter(tf.Module):
        def __init__(self):
            super().__init__()
            self.limit = 10.0

        def _clip(self, x):
            if x > self.limit:
                x = tf.constant(self.limit)
            return x

        @tf.function
        def __call__(self, x):
            total = tf.constant(0.0)
            for v in x:
                total += self._clip(v)
            return total

    c = Counter()
    assert float(c(tf.constant([1.0, 20.0, 3.0]))) == 14.0
    assert float(c(tf.constant([11.0, 2.0, 3.0]))) == 15.0
    assert c.__call__.experimental_get_tracing_count() == 1


def test_tf_print_runs_per_iteration(capsys):
    @tf.function
    def loop_print(x):
        for i in tf.range(3):
            tf.print("i", i, x)
            x = x + 1
        return x

    loop_print(tf.constant(0.5))
    loop_print(tf.constant(10.0))
    out = capsys.readouterr().out
    assert out.splitlines() == ["i 0 0.5", "i 1 1.5", "i 2 2.5", "i 0 10", "i 1 11", "i 2 12"]


def test_gradient_through_converted_control_flow():
    w = tf.Variable(2.0)

    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            if x > 0:
                y = w * x
            else:
                y = w * w
        return tape.gradient(y, w)

    assert float(grad(tf.constant(3.0))) == 3.0
    assert float(grad(tf.constant(-3.0))) == 4.0


# ---------------------------------------------------------------------------
# Errors (messages as TensorFlow 2.21's)
# ---------------------------------------------------------------------------

def only_main_branch(x):
    if x > 0:
        y = x * 2
    return y


def only_else_branch(x):
    if x > 0:
        pass
    else:
        y = x
    return y


def return_in_one_branch(x):
    if x > 0:
        return x


def return_in_staged_loop(x):
    for i in tf.range(5):
        if x[i] > 2:
            return i
    return -1


def loop_changes_shape(x):
    y = tf.constant([1.0])
    for i in tf.range(3):
        y = tf.concat([y, y], 0)
    return y


def loop_changes_dtype(x):
    y = tf.constant(0)
    for i in tf.range(3):
        y = tf.cast(y, tf.float32) + x
    return y


def loop_reads_undefined(x):
    for i in tf.range(3):
        y = y + x  # noqa: F821
    return y


def branches_differ_in_dtype(x):
    if x > 0:
        y = 1
    else:
        y = 2.0
    return y


def tensor_break_in_python_loop(x):
    s = tf.constant(0.0)
    for i in range(3):
        if x[i] < 0:
            break
        s += x[i]
    return s


def returns_nothing_in_branches(x):
    if x > 0:
        return None
    else:
        return None


ERRORS = [
    (only_main_branch, 1.0, ValueError, "'y' must also be initialized in the else branch"),
    (only_else_branch, 1.0, ValueError, "'y' must also be initialized in the main branch"),
    (return_in_one_branch, -3.0, ValueError, "the else branch must also have a return statement."),
    (returns_nothing_in_branches, -3.0, ValueError, "'retval_' is None at the end of the main branch."),
    (return_in_staged_loop, [1.0, 2.0, 3.0, 4.0, 5.0], NotImplementedError,
     "a return statement cannot be placed inside this TensorFlow loop"),
    (loop_changes_shape, 1.0, ValueError,
     "'y' has shape (1,) before the loop, but shape (2,) after one iteration. Use "
     "tf.autograph.experimental.set_loop_options to set shape invariants."),
    (loop_changes_dtype, 1.5, TypeError, "'y' has dtype int32 before the loop, but dtype float32 after one iteration"),
    (loop_reads_undefined, 1.5, ValueError, "'y' must be defined before the loop"),
    (branches_differ_in_dtype, 1.0, TypeError, "'y' has dtype int32 in the main branch, but dtype float32 in the "
     "else branch"),
    (tensor_break_in_python_loop, [1.0, -1.0, 2.0], NotImplementedError,
     "break and return statements which depend on a TF condition are not supported in Python for loops"),
]


@pytest.mark.parametrize("fn,x,exc,msg", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_errors(fn, x, exc, msg):
    with pytest.raises(exc) as info:
        tf.function(fn)(tf.constant(x))
    assert msg in str(info.value)


# ---------------------------------------------------------------------------
# Opting out
# ---------------------------------------------------------------------------

def test_autograph_false_keeps_python_semantics():
    with pytest.raises(TypeError, match="truth value"):
        tf.function(if_else, autograph=False)(tf.constant([1.0]))


def test_do_not_convert():
    @tf.autograph.experimental.do_not_convert
    def g(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="truth value"):
        tf.function(g)(tf.constant(1.0))
    assert tf.autograph.to_code(g) is None


def test_unavailable_source_warns_once_and_runs_unconverted():
    ns = {}
    exec("def f(x):\n    return x * 2.0\n", ns)   # noqa: S102 - no source file to read
    f = tf.function(ns["f"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert float(f(tf.constant(2.0))) == 4.0
        assert float(tf.function(ns["f"])(tf.constant(3.0))) == 6.0
    msgs = [str(x.message) for x in w if "AutoGraph could not transform" in str(x.message)]
    assert len(msgs) == 1


def test_library_functions_are_not_converted():
    from tapejax._staging import autograph as _autograph
    assert _autograph.convert(tf.reduce_sum) is tf.reduce_sum
    assert _autograph.convert(np.sum) is np.sum


def test_to_code_and_to_graph():
    code = tf.autograph.to_code(for_break)
    assert "ag__.for_stmt" in code
    assert not any(line.strip() == "break" for line in code.splitlines())
    g = tf.autograph.to_graph(for_break)
    assert float(tf.function(g)(tf.constant([1.0, -1.0]))) == 1.0


def test_set_loop_options_maximum_iterations():
    @tf.function
    def count(n):
        i = tf.constant(0)
        while i < n:
            tf.autograph.experimental.set_loop_options(maximum_iterations=4)
            i += 1
        return i

    assert int(count(tf.constant(10))) == 4
    assert int(count(tf.constant(2))) == 2


def test_closure_cells_are_shared_with_the_original():
    def make():
        scale = 2.0

        def f(x):
            if x > 0:
                return x * scale
            return x

        def set_scale(s):
            nonlocal scale
            scale = s
        return f, set_scale

    f, set_scale = make()
    g = tf.function(f)
    assert float(g(tf.constant(3.0))) == 6.0
    set_scale(10.0)    # a new trace sees the rebound closure variable, as Python does
    assert float(tf.function(f)(tf.constant(3.0))) == 30.0


def test_non_scalar_condition_names_the_fix():
    @tf.function
    def f(x):
        if x > 0:
            x = -x
        return x

    with pytest.raises(ValueError, match=r"shape \(2,\).*tf.reduce_any"):
        f(tf.constant([1.0, 2.0]))


def test_callable_object_and_partial_are_converted():
    import functools

    class Relu:
        def __call__(self, x, slope=0.0):
            if x > 0:
                return x
            return x * slope

    @tf.function
    def f(x):
        return Relu()(x) + functools.partial(Relu(), slope=0.5)(x)

    assert float(f(tf.constant(2.0))) == 4.0
    assert float(f(tf.constant(-2.0))) == -1.0
    assert f.experimental_get_tracing_count() == 1


def test_nested_tf_function_is_converted_when_inlined():
    @tf.function
    def inner(x):
        while x < 10:
            x = x * 2
        return x

    @tf.function
    def outer(x):
        return inner(x) + 1

    assert int(outer(tf.constant(3))) == 13
    assert int(outer(tf.constant(20))) == 21


def test_dataset_of_uneven_batches_is_unrolled_with_tf_result():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32).reshape(3, 2)).batch(2)

    @tf.function
    def total(w):
        s = tf.constant(0.0)
        for xb in ds:
            s += tf.reduce_sum(xb) * w
        return s

    assert float(total(tf.constant(2.0))) == 30.0


@pytest.mark.parametrize("build_first", [True, False])
def test_training_loop_over_dataset_inside_function(build_first):
    # Recorded with TensorFlow 2.21: two epochs of this loop (the dataset loop is staged in TF).
    x_all = np.linspace(-1, 1, 32).reshape(16, 2).astype(np.float32)
    y_all = x_all @ np.array([[1.0], [-2.0]], np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(4)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer="ones")])
    opt = tf.keras.optimizers.SGD(0.1)
    if build_first:
        model(x_all[:1])

    @tf.function
    def train_epoch():
        loss = tf.constant(0.0)
        for x, y in ds:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    train_epoch()
    loss = train_epoch()
    np.testing.assert_allclose(float(loss), 0.8254508376121521, rtol=1e-5)
    np.testing.assert_allclose(model.trainable_variables[0].numpy().ravel(), [-0.12457949, -0.13579214], rtol=1e-5)
    assert train_epoch.experimental_get_tracing_count() == 1


class _Base(tf.Module):
    def scale(self, x):
        return x * 2.0


class _Child(_Base):
    def scale(self, x):
        y = super().scale(x)        # zero-argument super() keeps working in converted methods
        if y > 0:
            y = y + 1.0
        return y

    @tf.function
    def __call__(self, x):
        return self.scale(x)


def test_converted_method_with_zero_argument_super():
    c = _Child()
    assert float(c(tf.constant(1.0))) == 3.0
    assert float(c(tf.constant(-1.0))) == -2.0


def test_decorated_function_converts_the_wrapper_not_the_wrapped():
    import functools
    calls = []

    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*a):
            calls.append(1)
            return fn(*a)
        return wrapper

    @logged
    def body(x):
        if x > 0:
            x = x * 3.0
        return x

    f = tf.function(body)
    assert float(f(tf.constant(2.0))) == 6.0
    assert float(f(tf.constant(-2.0))) == -2.0
    assert calls == [1]     # the wrapper ran, once, while tracing


_traces = 0
_visits = 0


def test_function_with_global_statement_is_converted():
    # TensorFlow's guides count traces with `global`; the branches and loops still convert.
    @tf.function
    def f(x):
        global _traces, _visits
        _traces += 1
        for _ in range(3):
            _visits += 1          # a Python loop: unrolled while tracing
        if x > 0:
            y = x * 2
        else:
            y = -x
        while x < 10:
            x = x + 3
        return y + x

    assert int(f(tf.constant(1))) == 12 and int(f(tf.constant(-2))) == 12
    assert (_traces, _visits) == (1, 3)


def test_python_object_arguments_trace_once_each():
    # The guide "Random number generation": a Generator argument traces once per generator.
    traces = []

    @tf.function
    def draw(g):
        traces.append(1)
        return g.normal([])

    a = draw(tf.random.Generator.from_seed(1))
    b = draw(tf.random.Generator.from_seed(2))
    assert len(traces) == 2
    np.testing.assert_allclose([float(a), float(b)], [0.43842274, -0.1012345], rtol=1e-6)   # TF 2.21
