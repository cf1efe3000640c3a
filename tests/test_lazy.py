"""Lazy execution (issue 17): eager ops recorded into a pending program, run as one compiled
program when a value is observed. Oracles: the same code run eagerly, and jax.grad."""
import contextlib
import copy
import gc
import pickle
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._core import lazy

from conftest import assert_close, host_first

cfg = tf.config.experimental


@pytest.fixture
def lazy_on():
    was = cfg.lazy_execution_enabled()
    cfg.set_lazy_execution(True)
    try:
        yield
    finally:
        cfg.set_lazy_execution(was, max_pending_ops=1024)


def both(fn):
    """fn() run eagerly and lazily: (eager result, lazy result) as NumPy."""
    was = cfg.lazy_execution_enabled()
    out = []
    for mode in (False, True):
        cfg.set_lazy_execution(mode)
        try:
            out.append(jax.tree_util.tree_map(np.asarray, fn(), is_leaf=tf.is_tensor))
        finally:
            cfg.set_lazy_execution(was)
    return out


def chain(x, steps=10):
    for _ in range(steps):
        x = tf.tanh(tf.sin(x) * 1.01 + 0.1)
    return x


def chain_jnp(x, steps=10):
    for _ in range(steps):
        x = jnp.tanh(jnp.sin(x) * 1.01 + 0.1)
    return x


X = np.linspace(-2, 2, 7).astype(np.float32)


def assert_eager_values(lazy_value, eager_value):
    """Lazy values equal eager's bit for bit on a CPU (ops compiled apart); on an accelerator a
    program is fused (``lazy._exact``), within rounding of eager's."""
    if lazy._exact():
        np.testing.assert_array_equal(lazy_value, eager_value)
    else:
        np.testing.assert_allclose(lazy_value, eager_value, rtol=2e-6, atol=1e-6)


def test_ops_are_pending_until_observed(lazy_on):
    y = chain(tf.constant(X))
    assert y._lazy is not None                   # nothing ran
    assert y.shape == (7,) and y.dtype == tf.float32 and y._lazy is not None
    assert "pending: 40 ops (sin x10, multiply x10, add x10, tanh x10)" in cfg.describe_lazy_execution()
    assert_close(y.numpy(), chain_jnp(X))
    assert y._lazy is None
    assert "last run: 40 ops" in cfg.describe_lazy_execution()


def test_gradient_equals_eager_and_jax(lazy_on):
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(chain(x))
    assert y._lazy is not None
    g = tape.gradient(y, x)
    # forward and backward ran as one program, at the end of the step
    assert "gradient" in cfg.describe_lazy_execution().split("last run:")[1]
    assert "sin x10" in cfg.describe_lazy_execution().split("last run:")[1]
    assert_close(g, jax.grad(lambda a: jnp.sum(chain_jnp(a)))(X), rtol=1e-5)
    assert_close(y, jnp.sum(chain_jnp(X)), rtol=1e-5)


def test_training_loop_equals_eager():
    def run():
        tf.random.set_seed(3)
        w = tf.Variable(tf.random.normal([3, 2]))
        b = tf.Variable(tf.zeros([2]))
        x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
        losses = []
        for _ in range(4):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.nn.relu(x @ w + b) - 1.0))
            gw, gb = tape.gradient(loss, [w, b])
            w.assign_sub(0.1 * gw)
            b.assign_sub(0.1 * gb)
            losses.append(loss)
        return losses, w, b

    eager, lazy_ = both(run)
    assert_close(lazy_, eager, rtol=1e-5)


def test_keras_fit_equals_eager():
    def run():
        tf.keras.utils.set_random_seed(0)
        model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh", input_shape=(3,)),
                                     tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam(0.01)
        x = tf.constant(np.linspace(0, 1, 24, dtype=np.float32).reshape(8, 3))
        y = tf.constant(np.ones((8, 1), np.float32))
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        return [loss] + list(model.weights)

    eager, lazy_ = both(run)
    assert_close(lazy_, eager, rtol=1e-5)


def test_two_tapes_two_optimizers_equal_eager_bit_for_bit():
    """A GAN's step: two tapes, two gradients, two optimizers. Lazily, values equal eager's to
    the last bit (compiled programs: each step run twice). A program's values may depend on which
    of its values are still referenced when it runs (XLA simplifies a conditional's unused
    outputs), so a step's program runs when ``tape.gradient`` returns, with a fixed set of live
    values (running it at the next op instead changed the last bits here)."""
    def run():
        tf.keras.utils.set_random_seed(5)
        g = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(4, activation="tanh"),
                                 tf.keras.layers.Dense(2)])
        d = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(3, activation="relu"),
                                 tf.keras.layers.Dense(1)])
        og, od = tf.keras.optimizers.Adam(0.01), tf.keras.optimizers.RMSprop(0.01)
        z = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2))
        real = tf.constant(np.cos(np.linspace(0, 3, 16, dtype=np.float32)).reshape(8, 2))
        for _ in range(2):
            with tf.GradientTape() as tg, tf.GradientTape() as td:
                fake = g(z, training=True)
                lf, lr_ = d(fake), d(real)
                dl = tf.reduce_mean(tf.nn.softplus(lf)) + tf.reduce_mean(tf.nn.softplus(-lr_))
                gl = tf.reduce_mean(tf.nn.softplus(-lf))
            gg = tg.gradient(gl, g.trainable_variables)
            dg = td.gradient(dl, d.trainable_variables)
            og.apply_gradients(zip(gg, g.trainable_variables))
            od.apply_gradients(zip(dg, d.trainable_variables))
        return [t.numpy() for t in [gl, dl, *gg, *dg, *g.weights, *d.weights]]

    eager, lazy_ = both(lambda: (run(), run())[1])
    for e, l in zip(eager, lazy_):
        np.testing.assert_array_equal(l, e)


@pytest.mark.parametrize("observe", [
    lambda t: t.numpy(), repr, str, lambda t: np.asarray(t), lambda t: float(t), lambda t: int(t),
    lambda t: bool(t > 0), lambda t: f"{t:.2f}", lambda t: jnp.asarray(t) + 0,
])
def test_observing_runs_the_program(lazy_on, observe):
    t = tf.reduce_sum(tf.constant([1.5, 2.0]) * 2.0)
    assert t._lazy is not None
    observe(t)
    assert t._lazy is None
    assert float(t.numpy()) == 7.0


def test_python_branch_on_a_value(lazy_on):
    x = tf.constant(0.5)
    for i in range(30):
        x = x * 1.5 if x < 10.0 else x - 3.0      # bool() runs what is pending
    expected = 0.5
    for i in range(30):
        expected = expected * 1.5 if expected < 10.0 else expected - 3.0
    assert abs(float(x) - expected) < 1e-4


def test_variables_read_the_latest_value(lazy_on):
    v = tf.Variable([1.0, 2.0])
    a = v * 2.0                    # pending, reads v now
    v.assign([10.0, 20.0])         # a write in program order
    b = v * 2.0
    v.assign_add(a)                # assigns a pending value: runs it
    assert_close(a, np.array([2.0, 4.0], np.float32))
    assert_close(b, np.array([20.0, 40.0], np.float32))
    assert_close(v, np.array([12.0, 24.0], np.float32))


def test_shape_error_at_the_line_that_caused_it(lazy_on):
    x = tf.constant([1.0, 2.0]) * 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        tf.constant([1.0, 2.0, 3.0]) + x       # raised here, not when something is observed
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
    assert_close(x, np.array([3.0, 6.0], np.float32))               # what was pending is intact


def test_error_same_class_and_message_as_eager():
    def bad():
        a = tf.ones([2, 3]) * 2.0
        try:
            tf.reshape(a, [4, 2])
        except Exception as e:
            return type(e).__name__, str(e)

    was = cfg.lazy_execution_enabled()
    cfg.set_lazy_execution(False)
    eager = bad()
    cfg.set_lazy_execution(True)
    try:
        lazy_ = bad()
    finally:
        cfg.set_lazy_execution(was)
    assert eager is not None and lazy_ == eager


def test_pending_program_is_bounded(lazy_on):
    cfg.set_lazy_execution(True, max_pending_ops=5)
    x = tf.constant(X)
    y = chain(x, steps=3)                     # 12 ops: runs after 5 and after 10
    p = lazy._local.program
    assert p is not None and len(p.ops) == 2
    assert_close(y, chain_jnp(X, steps=3), rtol=1e-5)
    with pytest.raises(ValueError, match="max_pending_ops"):
        cfg.set_lazy_execution(True, max_pending_ops=0)


def test_switch_off_runs_what_is_pending():
    was = cfg.lazy_execution_enabled()
    cfg.set_lazy_execution(True)
    try:
        y = tf.constant(X) * 2.0
        assert y._lazy is not None
        cfg.set_lazy_execution(False)
        assert y._lazy is None and not cfg.lazy_execution_enabled()
        assert tf.sin(y)._lazy is None          # eager again
        assert "lazy execution: off" in cfg.describe_lazy_execution()
    finally:
        cfg.set_lazy_execution(was)


def test_unreferenced_values_are_not_returned(lazy_on):
    x = tf.constant(X)
    y = tf.sin(x)
    z = tf.cos(y) + 1.0                        # y dropped below: only z is an output
    del y
    z.numpy()
    assert "1 outputs" in cfg.describe_lazy_execution()
    assert_close(z, np.cos(np.sin(X)) + 1.0, rtol=1e-6)


@host_first
def test_same_structure_is_compiled_once(lazy_on):
    """A program met the first time runs on the host (nothing compiled), is compiled when it
    comes back, and is served from the cache after that."""
    def step(v):
        return float(tf.reduce_sum(tf.exp(tf.constant(v) * 0.5 + 0.25)))

    hows = []
    for k in range(4):
        assert abs(step(X + k) - np.exp((X + k) * 0.5 + 0.25).sum()) < 1e-3
        hows.append(cfg.describe_lazy_execution().split("; ")[-2])
    assert hows == ["on host", "compiled", "cached", "cached"]


@host_first
def test_first_sighting_on_host_equals_compiled(lazy_on):
    """The first run of a training step (forward and backward, on the host) equals the
    compiled runs of the same step to rounding, and jax.grad."""
    w = tf.Variable(np.linspace(0.5, 1.5, 7).astype(np.float32))
    got = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(chain(tf.constant(X) * w, steps=4))
        got.append((loss.numpy(), tape.gradient(loss, w).numpy()))
        got[-1] += (cfg.describe_lazy_execution().split("; ")[-2],)
    assert [h for *_, h in got] == ["on host", "compiled", "cached"]
    want = jax.value_and_grad(lambda w_: jnp.sum(chain_jnp(jnp.asarray(X) * w_, steps=4)))(
        jnp.linspace(0.5, 1.5, 7, dtype=jnp.float32))
    for loss, g, _ in got:
        assert_close(loss, want[0], rtol=1e-6, atol=1e-6)
        assert_close(g, want[1], rtol=1e-5, atol=1e-6)


def test_enable_op_determinism_compiles_at_first_sighting(lazy_on, monkeypatch):
    from tapejax._core import new_shapes
    monkeypatch.setattr(new_shapes, "run_new_shapes_on_host", False)
    tf.reduce_sum(tf.constant(X) * 0.125 - 3.5).numpy()
    assert cfg.describe_lazy_execution().split("; ")[-2] == "compiled"


def test_python_scalars_keep_weak_types(lazy_on):
    h = tf.constant([1.0, 2.0], dtype=tf.float16) * 3.0 + 1
    i = tf.constant([1, 2]) * 3
    assert h.dtype == tf.float16 and i.dtype == tf.int32
    assert_close(h, np.array([4, 7], np.float16))
    assert_close(i, np.array([3, 6]))


def test_random_numbers_equal_eager():
    def draw():
        tf.random.set_seed(7)
        g = tf.random.Generator.from_seed(5)
        return tf.random.normal([3]), tf.random.uniform([2]), g.normal([2]), tf.random.uniform([2])

    eager, lazy_ = both(draw)
    assert_close(lazy_, eager, rtol=0, atol=0)


def test_functions_and_strings_inside_lazy_mode(lazy_on):
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        v.assign_add(1.0)
        return x * 2.0

    x = tf.constant([1.0, 2.0]) + 1.0           # pending, passed to a function
    assert_close(f(x), np.array([4.0, 6.0], np.float32))
    assert float(v) == 2.0
    s = tf.strings.join([tf.constant("a"), tf.constant("b")])
    assert s._lazy is None and s.numpy() == b"ab"  # strings stay on the host


def test_persistent_tape_jacobian_and_higher_order(lazy_on):
    x = tf.constant([0.3, -0.7])
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.sin(x) * x)
        g = inner.gradient(y, x)
        h = tf.tanh(x) * 2.0
    jac = outer.jacobian(h, x)
    gg = outer.gradient(g, x)
    f = lambda a: jnp.sum(jnp.sin(a) * a)
    xs = np.array([0.3, -0.7], np.float32)
    assert_close(jac, jax.jacobian(lambda a: jnp.tanh(a) * 2.0)(xs), rtol=1e-5)
    assert_close(gg, jnp.diag(jax.hessian(f)(xs)) * 0 + jax.hessian(f)(xs).sum(0), rtol=1e-5)


def test_pending_values_of_another_thread(lazy_on):
    box = {}

    def worker():
        box["y"] = tf.constant(X) * 3.0       # pending in the worker's program
        box["pending"] = box["y"]._lazy is not None

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    mine = tf.constant(X) + 1.0
    assert box["pending"] and mine._lazy is not None
    z = box["y"] + mine                         # runs the worker's program, then records here
    assert_close(z, X * 3.0 + X + 1.0, rtol=1e-6)


def test_ops_inside_tf_device_run_where_placed(lazy_on):
    dev = tf.config.list_logical_devices("CPU")[-1].name
    with tf.device(dev):
        y = tf.constant(X) * 2.0
    assert y._lazy is None and y.device.endswith(dev.split("device:")[-1])


def test_python_numbers_varying_per_call_equal_eager():
    """A number object read twice is one program input (identity, not value): numbers that
    change every call, equal numbers that are distinct objects, and the same object reused
    all give eager's values."""
    x = tf.constant(X)

    def step(a, b):
        y = x * a + b            # a and b may be equal values yet distinct objects
        for _ in range(3):
            y = y * a            # the same object again
        return y

    cases = [(0.5, 0.25), (0.75, float("0.75")), (1.5, 1.5), (2.0, -1.0)]
    eager = [step(a, b).numpy() for a, b in cases]
    cfg.set_lazy_execution(True)
    try:
        got = [step(a, b).numpy() for a, b in cases]
    finally:
        cfg.set_lazy_execution(False)
    for e, g in zip(eager, got):
        assert_eager_values(g, e)


def test_python_int_outside_int32_as_eager():
    """An int beyond int32 is not made a program input: the op runs now, as eagerly."""
    def run():
        try:
            return ("ok", (tf.constant([1, 2]) + 2 ** 40).numpy().tolist())
        except Exception as e:          # whatever eager does, lazy does the same
            return (type(e).__name__, str(e))

    eager = run()
    cfg.set_lazy_execution(True)
    try:
        assert run() == eager
    finally:
        cfg.set_lazy_execution(False)


def test_a_repeated_step_plans_its_tape_once(lazy_on, monkeypatch):
    """A training step records the same tape structure every step: it is planned once, and its
    gradients still follow the values of each step (jax.grad)."""
    from tapejax._core import backward
    planned = []
    real = backward._plan
    monkeypatch.setattr(backward, "_plan", lambda *a: planned.append(1) or real(*a))
    w = tf.Variable(np.ones(7, np.float32))
    for k in range(4):
        x = tf.constant(X + k)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(chain(x * w))
        g = tape.gradient(loss, w)
        want = jax.grad(lambda w_: jnp.sum(chain_jnp(jnp.asarray(X + k) * w_)))(jnp.ones(7, jnp.float32))
        assert_close(g, want, rtol=1e-5, atol=1e-6)
    assert len(planned) == 1


@pytest.mark.parametrize("case", ["one program", "observed mid-tape", "seeds given", "outer tape"])
def test_backward_pass_deferred_from_recorded_slots(case, monkeypatch):
    """tape.gradient defers its backward pass from the slots its nodes were recorded with when
    every node is in the pending program; otherwise (a value observed mid-tape ran the program,
    output_gradients given, an outer tape recording the pass) it reads its arguments as any op
    does. Gradients equal eager's either way, step after step."""
    from tapejax._core import backward
    used = []
    real = lazy.defer_recorded
    monkeypatch.setattr(backward._lazy, "defer_recorded", lambda op, nodes: used.append(
        r := real(op, nodes)) or r)
    w = tf.Variable(np.linspace(0.5, 1.5, 7).astype(np.float32))

    def step(k):
        x = tf.constant(X + k)
        with (tf.GradientTape() if case == "outer tape" else contextlib.nullcontext()) as outer:
            with tf.GradientTape() as tape:
                h = tf.sin(x * w) * 1.01 + 0.1
                if case == "observed mid-tape":
                    float(tf.reduce_sum(h))
                loss = tf.reduce_sum(tf.tanh(h) * w)
            seeds = tf.constant(2.0) if case == "seeds given" else None
            g = tape.gradient(loss, w, output_gradients=seeds)
            if case == "outer tape":
                gg = outer.gradient(tf.reduce_sum(g * g), w)
                return g.numpy(), gg.numpy()
        return (g.numpy(),)

    eager = [step(k) for k in range(4)]      # new shapes run on the host first (to rounding)
    cfg.set_lazy_execution(True)
    try:
        got = [step(k) for k in range(4)]     # on the host, compiled, cached
    finally:
        cfg.set_lazy_execution(False)
    for e, l in zip(eager[2:], got[2:]):
        for a, b in zip(e, l):
            assert_eager_values(b, a)
    assert any(used) == (case == "one program")


def test_python_numbers_only_get_tensorflow_dtypes(lazy_on):
    # Only Python numbers: TF converts them to int32 / float32 (JAX's would be int64 / float64).
    i, f = tf.add(1, 2), tf.multiply(1.5, 2)
    assert (i.dtype, f.dtype) == (tf.int32, tf.float32)
    assert int(i) == 3 and float(f) == 3.0


def test_copies_of_a_pending_value_are_computed(lazy_on):
    # matplotlib copies what it plots (copy.copy) and drops the original: as TF's EagerTensor,
    # a copy is the tensor itself, so the program still computes it.
    c = copy.copy(tf.constant(X) * 2.0)
    d = copy.deepcopy([tf.constant(X) * 3.0])[0]
    p = pickle.loads(pickle.dumps(tf.constant(X) * 4.0))
    assert_close([np.asarray(c, float), d, p], [X * 2.0, X * 3.0, X * 4.0])


def test_values_of_a_failed_program_raise_when_read(lazy_on, monkeypatch):
    # A program whose run fails leaves its other values uncomputed: reading one raises, it
    # never hands out the abstract value (np.asarray of it was an object array).
    def failing(*args, **kwargs):
        raise FloatingPointError("the op failed")

    monkeypatch.setattr(lazy, "_PROGRAMS", lazy.CompileCache(on_evict=lazy._drop))   # not kept after
    monkeypatch.setattr(lazy, "_compile", lambda *a: failing)
    monkeypatch.setattr(lazy, "_run_eagerly", failing)
    monkeypatch.setattr(lazy, "_on_host", lambda *a: None)
    a = tf.constant(X) * 2.0
    b = tf.sin(a)
    with pytest.raises(FloatingPointError, match="the op failed"):
        b.numpy()
    with pytest.raises(RuntimeError, match="never computed"):
        np.asarray(a)


def test_values_equal_eager_bit_for_bit():
    # Fused, a multiply and the add after it become one FMA instruction on a CPU (rounded once):
    # a lazy program compiles its ops apart, so values are eager's to the last bit (a random
    # range, u * (max - min) + min, is TensorFlow's; so are Keras initializers).
    u = np.array([0.24328744, 0.9835063, 0.22041726, 0.46792018, 0.77385795, 0.83544147], np.float32)

    def run():
        lo, hi = tf.constant(-2.5), tf.constant(4.0)
        return (tf.constant(u) * (hi - lo) + lo,
                tf.random.stateless_uniform([6], seed=[3, 4], minval=-2.5, maxval=4.0),
                tf.keras.initializers.GlorotUniform(seed=0)((3, 4)))

    eager, lazy_ = both(run)
    for e, l in zip(eager, lazy_):
        assert_eager_values(l, e)
    np.testing.assert_array_equal(eager[0], (u * np.float32(6.5)) + np.float32(-2.5))


def test_fuse_ops_lets_xla_fuse_within_rounding():
    """``fuse_ops=True``: one fused program (a multiply and an add may become one FMA), values
    within rounding of eager's; the switch shows in describe_lazy_execution."""
    rng = np.random.default_rng(1)
    x, a, b = (rng.normal(size=1000).astype(np.float32) for _ in range(3))

    def run():
        return tf.constant(x) * tf.constant(a) + tf.constant(b)

    eager = run().numpy()
    cfg.set_lazy_execution(True, fuse_ops=True)
    try:
        assert "fuse_ops=True" in cfg.describe_lazy_execution()
        got = [run().numpy() for _ in range(3)]     # on the host, compiled, cached
    finally:
        cfg.set_lazy_execution(False, fuse_ops=False)
    for g in got:
        assert_close(g, eager, rtol=1e-6, atol=1e-6)
    assert "fuse_ops" not in cfg.describe_lazy_execution()


def test_how_ops_are_kept_apart(lazy_on):
    """On a CPU an op is compiled apart (a conditional) so values stay eager's; an op of IEEE
    arithmetic and data movement only is fused with a -0.0 added to its output (nothing is
    contracted across it); a convolution is neither (XLA's CPU runs it an order of magnitude
    slower inside a conditional, and it is not contracted with its neighbours), nor is a pass
    that contains one."""
    x = tf.constant(np.ones((1, 5, 5, 1), np.float32))
    k = tf.constant(np.ones((3, 3, 1, 1), np.float32))
    a = tf.sin(x)
    b = tf.reshape(a * 2.0 + 1.0, [1, 5, 5, 1])
    c = tf.nn.conv2d(b, k, strides=1, padding="VALID")
    ops = lazy._local.program.ops
    assert [(op.name, apart) for op, *_, apart in ops] == [
        ("sin", True), ("multiply", "fenced"), ("add", "fenced"), ("reshape", "fenced"), ("conv2d", False)]
    assert_close(c, np.full((1, 3, 3, 1), 9 * (2 * np.sin(1.0) + 1), np.float32), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 1000, 4099])
def test_fenced_and_apart_ops_equal_eager_bit_for_bit(dtype, n):
    """Every intermediate value observed (a program with many outputs: XLA fuses the fenced ops
    into loops with several outputs), sizes with and without a vector remainder: each value
    equals eager's to the last bit. Eager runs three times first (a shape met for the first
    time runs on the host, within rounding)."""
    rng = np.random.default_rng(n)
    x = tf.constant((rng.normal(size=n) * 3).astype(dtype))
    i = tf.constant(rng.integers(0, n, size=n).astype(np.int32))

    def run():
        a = tf.sin(x)
        b = a * 1.01 + 0.1
        c = tf.tanh(b) * b - a / 3.0
        d = tf.sqrt(tf.abs(c) + 1.0) / (b * b + 0.5)
        e = tf.exp(d) * 2.0 - 1.0
        f = tf.math.log(tf.abs(e) + 0.5) * tf.sigmoid(d) + tf.cos(c)
        g = tf.where(f > 0.0, f * e, -f - d)
        h = tf.gather(tf.concat([g, f * 0.5], 0), i) + tf.reverse(g, [0]) * 3.0
        j = tf.math.floormod(i * 7 + 3, 5) + i // 2
        k = tf.math.softplus(h) - tf.math.expm1(h * 0.01) + tf.cast(j, dtype) * h
        return [a, b, c, d, e, f, g, h, j, k, tf.reduce_sum(k * k)]

    for _ in range(3):
        eager = [t.numpy() for t in run()]
    cfg.set_lazy_execution(True)
    try:
        for _ in range(3):       # on the host, compiled, cached
            got = [t.numpy() for t in run()]
    finally:
        cfg.set_lazy_execution(False)
    assert "cached" in lazy.describe().split("last run:")[1]
    for k, (l, e) in enumerate(zip(got, eager)):
        assert_eager_values(l, e), k


def test_pending_value_observed_while_a_function_is_traced(lazy_on):
    """A pending value first read inside a tf.function trace (a program met for the first
    time: run on the host) is computed, not traced: it stays a concrete value afterwards."""
    a = tf.sin(tf.constant(X) * 1.25 + 0.5)

    @tf.function
    def f():
        return a * 2.0

    assert_close(f(), np.sin(X * 1.25 + 0.5) * 2.0, rtol=1e-6, atol=1e-6)
    assert_close(a, np.sin(X * 1.25 + 0.5), rtol=1e-6, atol=1e-6)
    if jax.default_backend() == "cpu":
        assert "on host" in cfg.describe_lazy_execution()


def test_new_shapes_keep_no_executables_besides_the_programs(lazy_on):
    # Tracing a program computed its constants at once (zeros, the gradient's seed), compiling
    # and keeping an executable for each at every new shape: memory grew without bound.
    def executables():
        gc.collect()
        return sum(type(o).__name__ == "MeshExecutable" for o in gc.get_objects())

    w = tf.Variable(np.full((4, 3), 0.1, np.float32))

    def step(n):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(tf.constant(np.ones((n, 4), np.float32)) @ w) * 2.0)
        return tape.gradient(loss, w).numpy()

    step(1)
    before = executables()
    for n in range(20, 30):
        assert_close(step(n), np.full((4, 3), 2 * n * (1 - np.tanh(0.4) ** 2), np.float32), rtol=1e-5)
    assert executables() - before <= 10       # one program per new shape
