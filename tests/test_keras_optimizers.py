"""Optimizers: trajectories equal Keras's documented update rules (numpy oracles) and raw optax."""
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import tapejax as tf
from tapejax.keras import optimizers
from tapejax._core import new_shapes as _new_shapes

A = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.2]], np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)
W0 = np.array([0.3, -0.7], np.float32)
STEPS = 6


def grad_np(w):
    return (2 * A.T @ (A @ w - B)).astype(np.float64)


def run_tapejax(opt, steps=STEPS, w0=W0):
    w = tf.Variable(w0)
    out = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            r = tf.linalg.matvec(A, w) - B if hasattr(tf.linalg, "matvec") else tf.reshape(
                tf.matmul(A, tf.reshape(w, [2, 1])), [3]) - B
            loss = tf.reduce_sum(r * r)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        out.append(w.numpy().copy())
    return np.array(out)


# --------------------------------------------------------------- Keras formulas in numpy

def keras_sgd(lr=0.01, momentum=0.0, nesterov=False):
    w, m, out = W0.astype(np.float64), 0.0, []
    for _ in range(STEPS):
        g = grad_np(w)
        if momentum:
            m = momentum * m - lr * g
            w = w + (momentum * m - lr * g if nesterov else m)
        else:
            w = w - lr * g
        out.append(w)
    return np.array(out)


def keras_adam(lr=0.001, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, wd=0.0):
    w, m, v, vh, out = W0.astype(np.float64), 0.0, 0.0, 0.0, []
    for t in range(1, STEPS + 1):
        g = grad_np(w)
        w = w - w * wd * lr
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        vh = np.maximum(vh, v)
        w = w - alpha * m / (np.sqrt(vh if amsgrad else v) + eps)
        out.append(w)
    return np.array(out)


def keras_rmsprop(lr=0.001, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    w, vel, avg, mom, out = W0.astype(np.float64), 0.0, 0.0, 0.0, []
    for _ in range(STEPS):
        g = grad_np(w)
        vel = rho * vel + (1 - rho) * g * g
        if centered:
            avg = rho * avg + (1 - rho) * g
            den = vel - avg * avg + eps
        else:
            den = vel + eps
        inc = lr * g / np.sqrt(den)
        if momentum:
            mom = momentum * mom + inc
            w = w - mom
        else:
            w = w - inc
        out.append(w)
    return np.array(out)


def keras_adagrad(lr=0.001, init=0.1, eps=1e-7):
    w, acc, out = W0.astype(np.float64), init, []
    for _ in range(STEPS):
        g = grad_np(w)
        acc = acc + g * g
        w = w - lr * g / np.sqrt(acc + eps)
        out.append(w)
    return np.array(out)


def keras_adadelta(lr=0.001, rho=0.95, eps=1e-7):
    w, ag, ad, out = W0.astype(np.float64), 0.0, 0.0, []
    rms = lambda x: np.sqrt(x + eps)  # noqa: E731
    for _ in range(STEPS):
        g = grad_np(w)
        ag = rho * ag + (1 - rho) * g * g
        dv = -rms(ad) / rms(ag) * g
        ad = rho * ad + (1 - rho) * dv * dv
        w = w + lr * dv
        out.append(w)
    return np.array(out)


def keras_nadam(lr=0.001, b1=0.9, b2=0.999, eps=1e-7):
    w, m, v, up, out = W0.astype(np.float64), 0.0, 0.0, 1.0, []
    for it in range(STEPS):
        g = grad_np(w)
        up = up * b1 * (1 - 0.5 * 0.96 ** (it + 1))
        u_t = b1 * (1 - 0.5 * 0.96 ** (it + 1))
        u_t1 = b1 * (1 - 0.5 * 0.96 ** (it + 2))
        up1 = up * u_t1
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        m_hat = u_t1 * m / (1 - up1) + (1 - u_t) * g / (1 - up)
        v_hat = v / (1 - b2 ** (it + 1))
        w = w - m_hat * lr / (np.sqrt(v_hat) + eps)
        out.append(w)
    return np.array(out)


CASES = [
    ("sgd", lambda: optimizers.SGD(0.01), lambda: keras_sgd(0.01)),
    ("sgd_momentum", lambda: optimizers.SGD(0.01, momentum=0.9), lambda: keras_sgd(0.01, 0.9)),
    ("sgd_nesterov", lambda: optimizers.SGD(0.01, momentum=0.9, nesterov=True), lambda: keras_sgd(0.01, 0.9, True)),
    ("adam", lambda: optimizers.Adam(0.05), lambda: keras_adam(0.05)),
    # a large epsilon makes Keras's placement (on sqrt(v), not sqrt(v_hat)) visible
    ("adam_eps", lambda: optimizers.Adam(0.05, epsilon=0.5), lambda: keras_adam(0.05, eps=0.5)),
    ("adam_amsgrad", lambda: optimizers.Adam(0.05, amsgrad=True), lambda: keras_adam(0.05, amsgrad=True)),
    ("adamw", lambda: optimizers.AdamW(0.05, weight_decay=0.1), lambda: keras_adam(0.05, wd=0.1)),
    ("rmsprop", lambda: optimizers.RMSprop(0.01), lambda: keras_rmsprop(0.01)),
    ("rmsprop_centered_momentum", lambda: optimizers.RMSprop(0.01, momentum=0.5, centered=True),
     lambda: keras_rmsprop(0.01, momentum=0.5, centered=True)),
    ("adagrad", lambda: optimizers.Adagrad(0.1), lambda: keras_adagrad(0.1)),
    ("adadelta", lambda: optimizers.Adadelta(1.0), lambda: keras_adadelta(1.0)),
    ("nadam", lambda: optimizers.Nadam(0.05), lambda: keras_nadam(0.05)),
]


@pytest.mark.parametrize("name,make,oracle", CASES, ids=[c[0] for c in CASES])
def test_trajectory_matches_keras_formula(name, make, oracle):
    np.testing.assert_allclose(run_tapejax(make()), oracle(), rtol=2e-5, atol=2e-6)


def test_adam_epsilon_placement_differs_from_optax_adam():
    ours = run_tapejax(optimizers.Adam(0.05, epsilon=0.5))
    theirs = run_tapejax(optimizers.Optax(optax.adam(0.05, eps=0.5)))
    assert np.abs(ours - theirs).max() > 1e-3  # the test above would catch optax's placement


def test_keras_defaults():
    adam = optimizers.Adam()
    assert (float(adam.learning_rate), adam.beta_1, adam.beta_2, adam.epsilon) == (
        pytest.approx(0.001), 0.9, 0.999, 1e-7)
    assert float(optimizers.SGD().learning_rate) == pytest.approx(0.01)
    assert optimizers.AdamW().weight_decay == 0.004
    assert optimizers.RMSprop().rho == 0.9 and optimizers.Adadelta().rho == 0.95
    assert optimizers.Adagrad().initial_accumulator_value == 0.1


@pytest.mark.parametrize("tx", [optax.adam(1e-2), optax.sgd(0.05, momentum=0.9), optax.lamb(1e-2)],
                         ids=["adam", "sgd", "lamb"])
def test_any_optax_transformation_follows_raw_optax(tx):
    got = run_tapejax(optimizers.Optax(tx))
    params = [jnp.asarray(W0)]
    state = tx.init(params)
    ref = []
    for _ in range(STEPS):
        g = [jnp.asarray(grad_np(np.asarray(params[0], np.float64)), jnp.float32)]
        u, state = tx.update(g, state, params)
        params = optax.apply_updates(params, u)
        ref.append(np.asarray(params[0]))
    np.testing.assert_allclose(got, np.array(ref), rtol=2e-5, atol=2e-6)


def test_one_compiled_update_for_all_variables():
    vs = [tf.Variable(np.ones((3, 2), np.float32)), tf.Variable(np.zeros(2, np.float32)), tf.Variable(1.0)]
    opt = optimizers.Adam(0.1)
    calls = []
    real = opt._jit_update
    opt._jit_update = lambda *a: calls.append(1) or real(*a)
    for _ in range(4):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(vs[0]) + tf.reduce_sum(vs[1] ** 2) + vs[2] * 3.0
        opt.apply_gradients(zip(tape.gradient(loss, vs), vs))
    assert len(calls) == 4          # one compiled call per step, for the three variables
    assert opt._trace_count == 1    # traced once: later steps reuse it
    assert int(opt.iterations) == 4


def test_slots_are_nontrainable_variables_created_lazily():
    tf.keras.backend.clear_session()   # Keras 3 names optimizers like layers: adam, adam_1...
    w = tf.Variable([1.0, 2.0], name="w")
    opt = optimizers.Adam()
    assert [v.name for v in opt.variables] == ["iteration", "learning_rate"]
    assert [v.path for v in opt.variables] == ["adam/iteration", "adam/learning_rate"]
    opt.apply_gradients([(tf.constant([0.1, 0.1]), w)])
    names = [v.path for v in opt.variables]
    assert "adam/w_momentum" in names and "adam/w_velocity" in names   # Keras 3's slot names
    assert all(not v.trainable for v in opt.variables)
    # TF 2.21 (Keras 3): <Variable path=adam/iteration, shape=(), dtype=int64, value=1>
    assert opt.iterations.dtype == tf.int64 and not opt.iterations.trainable


def test_none_gradients_skipped_with_keras_warning():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    opt = optimizers.SGD(0.5)
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['b:0'\] when minimizing the loss"):
        opt.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert float(a) == 0.5 and float(b) == 2.0
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, a), (None, b)])


def test_clipping():
    g = np.array([3.0, 4.0], np.float32)  # norm 5

    def step(**kw):
        w = tf.Variable([0.0, 0.0])
        optimizers.SGD(1.0, **kw).apply_gradients([(tf.constant(g), w)])
        return -w.numpy()

    np.testing.assert_allclose(step(clipnorm=1.0), g / 5, rtol=1e-6)
    np.testing.assert_allclose(step(clipvalue=3.5), [3.0, 3.5], rtol=1e-6)
    np.testing.assert_allclose(step(global_clipnorm=2.5), g / 2, rtol=1e-6)
    np.testing.assert_allclose(step(clipnorm=10.0), g, rtol=1e-6)
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and `global_clipnorm`"):
        optimizers.SGD(clipnorm=1.0, clipvalue=1.0)


@pytest.mark.parametrize("make, want", [
    (lambda: tf.keras.optimizers.Adam(0.1), "k_momentum k_velocity b_momentum b_velocity"),
    (lambda: tf.keras.optimizers.Adam(amsgrad=True),
     "k_momentum k_velocity b_momentum b_velocity k_velocity_hat b_velocity_hat"),
    (lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9), "k_momentum b_momentum"),
    (lambda: tf.keras.optimizers.RMSprop(centered=True, momentum=0.5),
     "k_velocity b_velocity k_momentum b_momentum k_average_gradient b_average_gradient"),
    (lambda: tf.keras.optimizers.Adadelta(),
     "k_accumulated_grad k_accumulated_delta_var b_accumulated_grad b_accumulated_delta_var"),
    (lambda: tf.keras.optimizers.Nadam(), "k_momentum k_velocity b_momentum b_velocity u_product"),
])
def test_variables_listed_in_keras_creation_order(make, want):
    # TF 2.21 / Keras 3.15: add_optimizer_variables(var_list, ["momentum", "velocity"]) creates
    # both slots of each variable in turn; separate calls (RMSprop's, amsgrad's velocity_hat)
    # follow one another. (Keras names Nadam's u_product, listed last, 'variable'.)
    opt = make()
    opt.build([tf.Variable(tf.ones([3, 2]), name="k"), tf.Variable(tf.zeros([2]), name="b")])
    assert [v.path.split("/", 1)[1] for v in opt.variables] == ["iteration", "learning_rate"] + want.split()


def test_global_clipnorm_spans_all_variables():
    w1, w2 = tf.Variable([0.0]), tf.Variable([0.0])
    optimizers.SGD(1.0, global_clipnorm=1.0).apply_gradients([(tf.constant([3.0]), w1), (tf.constant([4.0]), w2)])
    np.testing.assert_allclose([-float(w1[0]), -float(w2[0])], [0.6, 0.8], rtol=1e-6)


def test_schedules():
    sched = optimizers.schedules.ExponentialDecay(0.1, decay_steps=2, decay_rate=0.5)
    w = tf.Variable(0.0)
    opt = optimizers.SGD(sched)
    seen = []
    for step in range(5):
        before = float(w)
        opt.apply_gradients([(tf.constant(1.0), w)])
        seen.append(before - float(w))
    np.testing.assert_allclose(seen, [0.1 * 0.5 ** (s / 2) for s in range(5)], rtol=1e-5)
    assert opt._trace_count == 1
    np.testing.assert_allclose(float(opt.learning_rate), 0.1 * 0.5 ** 2.5, rtol=1e-5)

    staircase = optimizers.schedules.ExponentialDecay(1.0, 2, 0.5, staircase=True)
    np.testing.assert_allclose([float(staircase(s)) for s in range(4)], [1, 1, 0.5, 0.5])
    pw = optimizers.schedules.PiecewiseConstantDecay([2, 4], [1.0, 0.5, 0.1])
    np.testing.assert_allclose([float(pw(s)) for s in range(6)], [1, 1, 1, 0.5, 0.5, 0.1])
    inv = optimizers.schedules.InverseTimeDecay(1.0, 1, 0.5)
    np.testing.assert_allclose(float(inv(2)), 0.5)


def test_optax_schedule_and_settable_learning_rate():
    w = tf.Variable(0.0)
    opt = optimizers.SGD(optax.linear_schedule(1.0, 0.0, 4))
    for _ in range(2):
        opt.apply_gradients([(tf.constant(1.0), w)])
    np.testing.assert_allclose(float(w), -(1.0 + 0.75), rtol=1e-6)

    w = tf.Variable(0.0)
    opt = optimizers.SGD(0.1)
    opt.apply_gradients([(tf.constant(1.0), w)])
    opt.learning_rate = 0.5           # a Variable assignment: no retrace
    opt.apply_gradients([(tf.constant(1.0), w)])
    np.testing.assert_allclose(float(w), -0.6, rtol=1e-6)
    assert opt._trace_count == 1
    assert isinstance(opt.learning_rate, tf.Variable)


def test_minimize():
    w = tf.Variable(3.0)
    opt = optimizers.SGD(0.25)
    opt.minimize(lambda: w * w, [w])
    assert float(w) == 1.5
    with tf.GradientTape() as tape:
        loss = w * w
    opt.minimize(loss, [w], tape=tape)
    assert float(w) == 0.75
    with pytest.raises(ValueError, match="`tape` is required"):
        opt.minimize(w * w, [w])


def test_separate_variable_sets_get_separate_state():
    a, b = tf.Variable(1.0), tf.Variable(1.0)
    opt = optimizers.Adam(0.1)
    opt.apply_gradients([(tf.constant(1.0), a)])
    opt.apply_gradients([(tf.constant(1.0), b)])
    np.testing.assert_allclose(float(a), float(b))


def test_get_and_errors():
    assert isinstance(optimizers.get("adam"), optimizers.Adam)
    assert isinstance(optimizers.get(optax.sgd(0.1)), optimizers.Optimizer)
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        optimizers.get("nope")
    with pytest.raises(TypeError, match="unexpected keyword"):
        optimizers.Adam(betas=0.9)
    w = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="has shape"):
        optimizers.SGD().apply_gradients([(tf.constant([1.0]), w)])


@pytest.mark.skipif(not hasattr(tf, "function"), reason="tapejax.function not available")
def test_inside_tf_function():
    w = tf.Variable([1.0, 2.0])
    opt = optimizers.Adam(0.1)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss

    ref_w = tf.Variable([1.0, 2.0])
    ref = optimizers.Adam(0.1)
    for _ in range(3):
        step()
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(ref_w * ref_w)
        ref.apply_gradients(zip(tape.gradient(loss, [ref_w]), [ref_w]))
    np.testing.assert_allclose(w.numpy(), ref_w.numpy(), rtol=1e-6)
    assert int(opt.iterations) == 3


def test_variable_constraint_applied_after_update():
    w = tf.Variable([3.0, -4.0], constraint=lambda v: tf.clip_by_value(v, -1.0, 1.0))
    optimizers.SGD(0.1).apply_gradients([(tf.constant([1.0, 1.0]), w)])
    np.testing.assert_allclose(w.numpy(), [1.0, -1.0])


def test_custom_schedule_subclass_written_with_tf_ops():
    class Warmup(optimizers.schedules.LearningRateSchedule):  # the Transformer tutorial's pattern
        def __init__(self, d_model, warmup_steps=4):
            super().__init__()
            self.d_model = tf.cast(d_model, tf.float32)
            self.warmup_steps = warmup_steps

        def __call__(self, step):
            step = tf.cast(step, dtype=tf.float32)
            return tf.math.rsqrt(self.d_model) * tf.math.minimum(tf.math.rsqrt(step), step * self.warmup_steps ** -1.5)

    w = tf.Variable(0.0)
    opt = optimizers.SGD(Warmup(16))
    for _ in range(3):
        opt.apply_gradients([(tf.constant(1.0), w)])
    # steps 0, 1, 2 (Keras passes `iterations` before incrementing it): lr = 0, 1/32, 2/32
    np.testing.assert_allclose(float(w), -(0 + 1 + 2) / 32, rtol=1e-6)
    assert opt._trace_count == 1


# ---------------------------------------------------------------- buffers updated in place
def _sgd_step(v, opt):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    opt.apply_gradients([(tape.gradient(loss, v), v)])


@pytest.mark.parametrize("keep", ["read_value", "jax_array", "numpy_of_jax_array", "lazy_read", "numpy"])
def test_a_value_read_before_an_update_keeps_its_value(keep):
    """The optimizer updates a variable's buffer in place only when nothing else holds it
    (TF: when its reference count is one); a value read before -- also the variable's own
    buffer, taken with ``jnp.asarray(v)``, or a NumPy view of that -- keeps the old value."""
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(0.25)
    _sgd_step(v, opt)      # v = [0.5, 1.0]
    lazy = keep == "lazy_read"
    if lazy:
        tf.config.experimental.set_lazy_execution(True)
    try:
        held = {"read_value": lambda: v.read_value(), "jax_array": lambda: jnp.asarray(v),
                "numpy_of_jax_array": lambda: np.asarray(jnp.asarray(v)), "lazy_read": lambda: v * 1.0,
                "numpy": lambda: v.numpy()}[keep]()
        _sgd_step(v, opt)
        _sgd_step(v, opt)
        got = np.asarray(held)
    finally:
        if lazy:
            tf.config.experimental.set_lazy_execution(False)
    np.testing.assert_array_equal(got, [0.5, 1.0])
    np.testing.assert_allclose(v.numpy(), [0.125, 0.25])


def test_buffers_nothing_else_holds_are_updated_in_place(monkeypatch):
    """The common case copies nothing: a training step's reads of the variables are gone
    when the optimizer runs, so their buffers (and the slots') are donated."""
    from tapejax._core import state
    copies = []
    real = state.copy_buffer
    monkeypatch.setattr(state, "copy_buffer", lambda x: copies.append(1) or real(x))
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(2)])
    opt = tf.keras.optimizers.Adam(0.01)
    x = tf.constant(np.ones((5, 3), np.float32))
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    assert copies == []
    held = model.trainable_variables[0]._value      # a holder: that buffer is copied
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    assert len(copies) == 1 and not held.is_deleted()


def test_in_place_updates_equal_the_copying_ones(monkeypatch):
    """Adam with its buffers donated (nothing else holds them) follows the same trajectory as
    with every buffer held elsewhere (copies), to the last bit (ops compiled at every shape, as
    under enable_op_determinism)."""
    monkeypatch.setattr(_new_shapes, "run_new_shapes_on_host", False)
    rng = np.random.default_rng(0)
    init = rng.normal(size=(4, 3)).astype(np.float32)
    out = []
    for hold in (False, True):
        v = tf.Variable(init)
        opt = tf.keras.optimizers.Adam(0.1)
        kept = []
        for _ in range(4):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.sin(v) * v)
            opt.apply_gradients([(tape.gradient(loss, v), v)])
            if hold:
                kept.append(v.read_value())   # a reader holds each new buffer: no donation
        out.append(v.numpy())
        if hold:
            assert all(not k._value.is_deleted() for k in kept)
    np.testing.assert_array_equal(out[0], out[1])


def test_built_and_summary_count_the_optimizer_as_keras3(capsys):
    """Keras 3 lists iteration (int64), learning_rate and the slots (no update-rule step count),
    and summary() counts them once the optimizer is built, also an SGD without slots. Recorded
    from TF 2.21: Adam after fit 'Optimizer params: 18 (76.00 B)', SGD '2 (12.00 B)'."""
    tf.keras.backend.clear_session()   # Keras 3 names optimizers like layers: adam, adam_1...
    opt = optimizers.Adam(0.1)
    assert not opt.built
    assert repr(opt.iterations) == "<Variable path=adam/iteration, shape=(), dtype=int64, value=0>"
    for name, expected in [("adam", " Optimizer params: 18 (76.00 B)"), ("sgd", " Optimizer params: 2 (12.00 B)")]:
        m = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        m.compile(name, "mse")
        m.summary()
        assert "Optimizer params" not in capsys.readouterr().out
        m.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
        assert m.optimizer.built
        m.summary()
        assert capsys.readouterr().out.splitlines()[-1] == expected
    assert [v.path.split("/")[1] for v in m.optimizer.variables] == ["iteration", "learning_rate"]
