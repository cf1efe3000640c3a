"""GradientTape behaviour, checked against TensorFlow's documented results and JAX."""
import logging
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
import tapejax.numpy as tnp
from tapejax.extend import defop

from conftest import assert_close


def f32(x):
    return np.asarray(x, np.float32)


# ---------------------------------------------------------------- watching
def test_watch_tensor():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).numpy() == 6.0


def test_unwatched_tensor_is_none():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_watch_nested_structure():
    a, b, c = tf.constant(1.0), tf.constant(2.0), tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        tape.watch({"a": a, "rest": [b, (c,)]})
        y = a * b * c
    ga, gb, gc = tape.gradient(y, [a, b, c])
    assert (ga.numpy(), gb.numpy(), gc.numpy()) == (6.0, 3.0, 2.0)
    assert tape.watched_variables() == (c,)


def test_watch_rejects_non_tensors():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="tf.constant"):
            tape.watch(3.0)


def test_watch_integer_tensor_warns_and_gives_none(caplog):
    x = tf.constant(3)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
    assert "floating" in caplog.text
    assert tape.gradient(y, x) is None


def test_warnings_print_as_tensorflow_logs_them():
    # TensorFlow 2.21, the autodiff guide's cell (a script: the warning goes to stderr).
    code = ("import tapejax as tf\nx = tf.constant(10)\nwith tf.GradientTape() as g:\n"
            "  g.watch(x)\n  y = x * x\nprint(g.gradient(y, x))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "None\n"
    assert out.stderr.splitlines()[-1] == (
        "WARNING:tensorflow:The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.int32")
    # The logger TensorFlow code silences: tf.get_logger().setLevel('ERROR').
    quiet = "import tapejax as tf\ntf.get_logger().setLevel('ERROR')\n" + code.split("\n", 1)[1]
    out = subprocess.run([sys.executable, "-c", quiet], capture_output=True, text=True, check=True)
    assert "WARNING" not in out.stderr and out.stdout == "None\n"


def test_trainable_variables_watched_automatically():
    x0 = tf.Variable(3.0, name="x0")
    x1 = tf.Variable(3.0, name="x1", trainable=False)
    x2 = tf.Variable(2.0, name="x2") + 1.0
    x3 = tf.constant(3.0, name="x3")
    with tf.GradientTape() as tape:
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert grad[0].numpy() == 6.0
    assert grad[1:] == [None, None, None]
    assert [v.name for v in tape.watched_variables()] == ["x0:0"]


def test_watch_accessed_variables_false():
    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        ys = tf.reduce_sum(y0 + y1)
    grad = tape.gradient(ys, {"x0": x0, "x1": x1})
    assert grad["x0"] is None
    np.testing.assert_allclose(grad["x1"].numpy(), 0.9999546, rtol=1e-6)
    assert tape.watched_variables() == (x1,)


def test_watched_variables_in_creation_order():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    c = tf.Variable(3.0, name="c")
    with tf.GradientTape() as tape:
        y = c * b + a  # read in reverse creation order
    assert tape.watched_variables() == (a, b, c)
    assert isinstance(tape.watched_variables(), tuple)


def test_nontrainable_variable_watched_explicitly():
    v = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        y = v * v
    assert tape.gradient(y, v) is None
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = v * v
    assert tape.gradient(y, v).numpy() == 6.0


# ---------------------------------------------------------------- recording control
def test_stop_recording():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


def test_stop_recording_only_pauses_that_tape():
    x = tf.Variable(2.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            with inner.stop_recording():
                y = x * x
    assert inner.gradient(y, x) is None
    assert outer.gradient(y, x).numpy() == 4.0


def test_stop_recording_outside_block_raises():
    # As TensorFlow: RuntimeError before the tape ever recorded, ValueError after its block.
    tape = tf.GradientTape()
    with pytest.raises(RuntimeError, match="not recording"):
        with tape.stop_recording():
            pass
    with tape:
        pass
    with pytest.raises(ValueError, match="not recording"):
        with tape.stop_recording():
            pass


def test_reset():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y * y
        t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0 and grad["y"] is None


def test_reset_forgets_watched_tensors():
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        t.reset()
        y = x * x
    assert t.gradient(y, x) is None


def test_stop_gradient():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y ** 2
        z = x ** 2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0 and grad["y"] is None
    with tf.GradientTape() as t:
        z = x * tf.stop_gradient(x)
    assert t.gradient(z, x).numpy() == 2.0
    np.testing.assert_allclose(tf.stop_gradient(tf.constant([1.0, 2.0])).numpy(), [1.0, 2.0])


# ---------------------------------------------------------------- targets and sources
def test_sources_structures():
    w = tf.Variable(f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), name="w")
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
    x = [[1.0, 2.0, 3.0]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y ** 2)
    as_list = tape.gradient(loss, [w, b])
    as_tuple = tape.gradient(loss, (w, b))
    as_dict = tape.gradient(loss, {"w": w, "b": b})
    nested = tape.gradient(loss, {"p": [w, (b,)]})
    assert isinstance(as_list, list) and isinstance(as_tuple, tuple) and set(as_dict) == {"w", "b"}
    y_val = np.array([[1.0, 2.0, 3.0]]) @ w.numpy()
    want_b = y_val[0]  # d mean(y^2) / dy = 2y / 2
    want_w = np.outer([1.0, 2.0, 3.0], want_b)
    for got in (as_list, as_tuple, [as_dict["w"], as_dict["b"]], [nested["p"][0], nested["p"][1][0]]):
        assert_close(got[0], want_w)
        assert_close(got[1], want_b)


def test_single_source_returns_single_gradient():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x ** 2
    g = tape.gradient(y, x)
    assert isinstance(g, tf.Tensor) and g.numpy() == 6.0


def test_nested_targets_are_summed():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = {"a": x * 2.0, "b": [x * x, (x,)]}
    assert tape.gradient(y, x).numpy() == 2.0 + 4.0 + 1.0


def test_non_scalar_target_is_summed():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * [3.0, 4.0]
    assert tape.gradient(y, x).numpy() == 7.0
    x = tf.linspace(-10.0, 10.0, 201)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.sigmoid(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               jax.grad(lambda a: jnp.sum(jax.nn.sigmoid(a)))(x.numpy()), rtol=1e-6, atol=1e-7)


def test_intermediate_sources():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0


def test_intermediate_and_leaf_sources_together():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = tf.reduce_sum(y * y)
    g = tape.gradient(z, {"y": y, "x": x})
    assert_close(g["y"], 2 * f32([1.0, 4.0]))
    assert_close(g["x"], 4 * f32([1.0, 8.0]))


def test_target_is_source():
    x = tf.constant([1.0, 2.0])
    v = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
    assert_close(tape.gradient(x, x), f32([1.0, 1.0]))
    assert tape.gradient(v, v).numpy() == 1.0


def test_output_gradients():
    x = tf.constant([1.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = tf.reduce_sum(y * y)
    assert_close(tape.gradient(y, x, output_gradients=tf.constant([1.0, 2.0])), f32([2.0, 12.0]))
    assert_close(tape.gradient(y, x, output_gradients=np.array([0.5, 1.0], np.float32)), f32([1.0, 6.0]))
    # one per target; TensorFlow has no meaning for a None entry (ValueError, or a crash)
    assert_close(tape.gradient([y, z], x, output_gradients=[tf.constant([1.0, 2.0]), tf.constant(1.0)]),
                 f32([2.0 + 4.0, 12.0 + 108.0]))
    with pytest.raises(ValueError, match=r"output_gradients\[1\] is None"):
        tape.gradient([y, z], x, output_gradients=[tf.constant([1.0, 2.0]), None])
    with pytest.raises(ValueError, match="shape"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="one entry per target"):
        tape.gradient([y, z], x, output_gradients=[tf.constant([1.0, 2.0])])


# ---------------------------------------------------------------- None, and the ways to get it
def test_none_unconnected():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None


def test_none_variable_replaced_by_tensor():
    x = tf.Variable(2.0)
    grads = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            y = x + 1
        grads.append(tape.gradient(y, x))
        x = x + 1  # the guide's bug: now a Tensor, not a Variable
    assert grads[0].numpy() == 1.0
    assert grads[1] is None
    assert isinstance(x, tf.Tensor)


def test_none_integer_dtype():
    x = tf.constant(10)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert g.gradient(y, x) is None
    vi = tf.Variable(2)
    vf = tf.Variable(3.0)
    with tf.GradientTape() as g:
        y = tf.cast(vi, tf.float32) * vf
    gi, gf = g.gradient(y, [vi, vf])
    assert gi is None and gf.numpy() == 2.0


def test_none_through_integer_cast():
    x = tf.Variable(2.5)
    with tf.GradientTape() as g:
        y = tf.cast(tf.cast(x, tf.int32), tf.float32) * 2.0
    assert g.gradient(y, x) is None


def test_none_numpy_computation():
    x = tf.Variable(f32([[1.0, 2.0], [3.0, 4.0]]))
    with tf.GradientTape() as tape:
        x2 = x ** 2
        y = np.mean(x2, axis=0)  # leaves TensorFlow: a numpy value
        y = tf.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None
    assert float(y) == pytest.approx(7.5)


def test_none_stateful_assign():
    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        x1.assign_add(x0)  # state change: no gradient
        y = x1 ** 2
    assert tape.gradient(y, x0) is None
    assert x1.numpy() == 3.0
    x2 = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        x2.assign(x0 * 2.0)
        y = x2 * 1.0
    assert tape.gradient(y, x0) is None


def test_none_computed_outside_tape():
    x = tf.Variable(2.0)
    y = x * x
    with tf.GradientTape() as tape:
        z = y + 1.0
    assert tape.gradient(z, x) is None


def test_unconnected_gradients_zero():
    x, y = tf.Variable([2.0, 3.0]), tf.Variable(3.0)
    w = tf.Variable(4.0)
    for mode in (tf.UnconnectedGradients.ZERO, "zero"):
        with tf.GradientTape() as tape:
            z = y * w
        gx, gy = tape.gradient(z, [x, y], unconnected_gradients=mode)
        assert_close(gx, f32([0.0, 0.0]))
        assert gx.dtype == tf.float32
        assert gy.numpy() == 4.0
    for mode in (tf.UnconnectedGradients.NONE, "none"):
        with tf.GradientTape() as tape:
            z = y * w
        assert tape.gradient(z, x, unconnected_gradients=mode) is None
    with tf.GradientTape() as tape:
        z = y * w
    with pytest.raises(ValueError, match="UnconnectedGradients"):
        tape.gradient(z, x, unconnected_gradients="zeros")


# ---------------------------------------------------------------- the one-call rule, and calls inside the block
def test_non_persistent_second_call_raises():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
        z = y * y
    g.gradient(z, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        g.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        g.jacobian(y, x)


def test_persistent_tape_multiple_calls():
    x = tf.constant([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert_close(tape.gradient(z, x), f32([4.0, 108.0]))
    assert_close(tape.gradient(y, x), f32([2.0, 6.0]))
    assert_close(tape.gradient(z, x), f32([4.0, 108.0]))
    del tape


def test_gradient_inside_block_non_persistent_stops_recording():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
        g = tape.gradient(y, x)
        z = g * x  # not recorded any more
    assert g.numpy() == 4.0
    assert z.numpy() == 8.0
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.gradient(z, x)


def test_gradient_inside_block_persistent_records_it():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x * x
        g = tape.gradient(y, x)       # 3 x^2, recorded on the same tape
        g2 = tape.gradient(g, x)      # 6 x
    assert g.numpy() == 12.0 and g2.numpy() == 12.0
    assert tape.gradient(g2, x).numpy() == 6.0


def test_reenter_persistent_tape():
    x = tf.Variable(2.0)
    tape = tf.GradientTape(persistent=True)
    with tape:
        y = x * x
    between = y * 10.0  # outside: not recorded
    with tape:
        z = y * x
    assert tape.gradient(z, x).numpy() == 12.0
    assert tape.gradient(between, x) is None


def test_reenter_used_non_persistent_tape_starts_afresh():
    # TensorFlow: entering a used non-persistent tape again records on a new tape.
    x = tf.Variable(2.0)
    tape = tf.GradientTape()
    with tape:
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="one set of gradients"):
        tape.gradient(y, x)
    with tape:
        z = x * x * x
    assert tape.gradient(z, x).numpy() == 12.0
    assert tape.watched_variables() == (x,)


def test_bad_targets_and_sources():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    with pytest.raises(ValueError, match="tf.constant"):
        tape.gradient(y, 3.0)
    with pytest.raises(TypeError, match="Targets"):
        tape.gradient(3.0, x)


# ---------------------------------------------------------------- several tapes
def test_multiple_tapes_watch_different_tensors():
    x0, x1 = tf.constant(0.0), tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        ys = tf.reduce_sum(y0 + y1)
    assert tape0.gradient(ys, x0).numpy() == 1.0
    assert tape1.gradient(ys, x1).numpy() == 0.25


def test_multiple_tapes_cross_gradients_are_none():
    x0, x1 = tf.constant(0.5), tf.constant(0.5)
    with tf.GradientTape(persistent=True) as tape0, tf.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = tf.math.sin(x0) + tf.nn.sigmoid(x1)
    np.testing.assert_allclose(tape0.gradient(ys, x0).numpy(), 0.87758255, rtol=1e-6)
    assert tape0.gradient(ys, x1) is None
    assert tape1.gradient(ys, x0) is None
    np.testing.assert_allclose(tape1.gradient(ys, x1).numpy(), 0.23500371, rtol=1e-6)


def test_unwatched_source_feeding_a_recorded_op_is_none():
    # TensorFlow 2.21 (recorded): an unwatched source gets None even when it feeds a
    # recorded op, persistent tape or not.
    x0, x1 = tf.constant(3.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape0:
        tape0.watch(x0)
        ys = x0 * x1
    assert tape0.gradient(ys, x1) is None
    assert tape0.gradient(ys, x0).numpy() == 2.0
    g0, g1 = tape0.gradient(ys, [x0, x1])
    assert g0.numpy() == 2.0 and g1 is None


def test_split_model_chain_rule_two_tapes():
    """Backprop across two separate tapes with output_gradients (two-model training)."""
    rng = np.random.default_rng(0)
    w0 = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32))
    w1 = tf.Variable(rng.normal(size=(4, 1)).astype(np.float32))
    x = tf.constant(rng.normal(size=(5, 3)).astype(np.float32))
    with tf.GradientTape() as tape0:
        h = tf.tanh(x @ w0)
    with tf.GradientTape() as tape1:
        tape1.watch(h)
        loss = tf.reduce_mean(tf.sigmoid(h @ w1) ** 2)
    g_h, g_w1 = tape1.gradient(loss, [h, w1])
    g_w0 = tape0.gradient(h, w0, output_gradients=g_h)

    def f(a, b):
        return jnp.mean(jax.nn.sigmoid(jnp.tanh(x.numpy() @ a) @ b) ** 2)
    want_w0, want_w1 = jax.grad(f, argnums=(0, 1))(w0.numpy(), w1.numpy())
    assert_close(g_w0, want_w0)
    assert_close(g_w1, want_w1)


# ---------------------------------------------------------------- jacobian / batch_jacobian
def _fn(a):
    return jnp.sin(a)[:, None] * jnp.cos(a)[None, :] + a ** 2


def test_jacobian_equals_jax_and_stacked_gradients():
    xv = np.linspace(-1.0, 1.0, 4).astype(np.float32)
    x = tf.constant(xv)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sin(x)[:, None] * tf.cos(x)[None, :] + x ** 2
    j = tape.jacobian(y, x)
    assert j.shape == (4, 4, 4)
    assert_close(j, jax.jacrev(_fn)(xv))
    basis = np.eye(16, dtype=np.float32).reshape(16, 4, 4)
    rows = [tape.gradient(y, x, output_gradients=tf.constant(e)) for e in basis]
    assert_close(j, np.stack([r.numpy() for r in rows]).reshape(4, 4, 4))
    assert_close(tape.jacobian(y, x, experimental_use_pfor=False), j)


def test_jacobian_scalar_source_and_multiple_sources():
    x = tf.linspace(-10.0, 10.0, 201)
    delta = tf.Variable(0.0)
    w = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.sigmoid(x * w + delta)
    dy = tape.jacobian(y, delta)
    assert dy.shape == (201,)
    s = jax.nn.sigmoid(x.numpy() * 2.0)
    assert_close(dy, s * (1 - s), atol=1e-6)
    jd, jw = tape.jacobian(y, [delta, w])
    assert_close(jd, dy)
    assert_close(jw, s * (1 - s) * x.numpy(), atol=1e-5)


def test_jacobian_sum_equals_gradient():
    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(size=(7, 5)).astype(np.float32))
    kernel = tf.Variable(rng.normal(size=(5, 10)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(x @ kernel)
    j = tape.jacobian(y, kernel)
    assert j.shape == (7, 10, 5, 10)
    g = tape.gradient(y, kernel)
    assert float(tf.reduce_max(abs(g - tf.reduce_sum(j, axis=[0, 1])))) < 1e-4


def test_jacobian_unconnected():
    x = tf.constant([1.0, 2.0])
    z = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    assert tape.jacobian(y, z) is None
    jz = tape.jacobian(y, z, unconnected_gradients="zero")
    assert jz.shape == (2, 3) and not np.any(jz.numpy())


def test_batch_jacobian_vs_jax():
    rng = np.random.default_rng(2)
    xv = rng.normal(size=(6, 5)).astype(np.float32)
    w1v = rng.normal(size=(5, 8)).astype(np.float32)
    w2v = rng.normal(size=(8, 4)).astype(np.float32)
    x = tf.constant(xv)
    w1, w2 = tf.Variable(w1v), tf.Variable(w2v)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.elu(tf.nn.elu(x @ w1) @ w2)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (6, 4, 5)

    def per_example(a):
        return jax.nn.elu(jax.nn.elu(a @ w1v) @ w2v)
    want = jax.vmap(jax.jacrev(per_example))(xv)
    assert_close(jb, want, atol=1e-5)
    j = tape.jacobian(y, x)
    assert j.shape == (6, 4, 6, 5)
    assert_close(jb, tf.einsum("bxby->bxy", j), atol=1e-5)
    assert_close(tape.batch_jacobian(y, x, experimental_use_pfor=False), jb, atol=1e-6)


def test_batch_jacobian_mismatched_batch_raises():
    x = tf.constant(np.ones((4, 3), np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x, axis=1, keepdims=True)
    with pytest.raises(ValueError, match="rank at least 2"):
        tape.batch_jacobian(y, tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y, tf.constant([[1.0], [2.0]]))
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(tf.transpose(y), x)


def test_hessian_nested_tapes_equals_jax():
    rng = np.random.default_rng(3)
    xv = rng.normal(size=(4,)).astype(np.float32)
    x = tf.Variable(xv)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = tf.reduce_sum(tf.sin(x) * x ** 2) + tf.reduce_prod(x)
        g = t1.gradient(y, x)
    h = t2.jacobian(g, x)
    want = jax.hessian(lambda a: jnp.sum(jnp.sin(a) * a ** 2) + jnp.prod(a))(xv)
    assert_close(h, want, rtol=1e-4, atol=1e-5)


def test_second_order_scalar():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert (dy_dx.numpy(), d2y_dx2.numpy()) == (3.0, 6.0)


def test_third_order():
    x = tf.Variable(0.5)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = tf.sin(x) * x
            g1 = t1.gradient(y, x)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    f = lambda a: jnp.sin(a) * a  # noqa: E731
    want = jax.grad(jax.grad(jax.grad(f)))(0.5)
    np.testing.assert_allclose(g3.numpy(), want, rtol=1e-5)


def test_input_gradient_regularization_without_keras():
    rng = np.random.default_rng(4)
    xv = rng.normal(size=(7, 5)).astype(np.float32)
    wv = rng.normal(size=(5, 10)).astype(np.float32)
    bv = rng.normal(size=(10,)).astype(np.float32)
    x = tf.constant(xv)
    w, b = tf.Variable(wv), tf.Variable(bv)
    with tf.GradientTape() as t2:
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            out = tf.reduce_sum(tf.nn.relu(x @ w + b) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dw, db = t2.gradient(g1_mag, [w, b])

    def mag(wa, ba):
        g = jax.grad(lambda xa: jnp.sum(jax.nn.relu(xa @ wa + ba) ** 2))(xv)
        return jnp.sqrt(jnp.sum(g * g))
    want_w, want_b = jax.grad(mag, argnums=(0, 1))(wv, bv)
    assert_close(dw, want_w, rtol=1e-4, atol=1e-4)
    assert_close(db, want_b, rtol=1e-4, atol=1e-4)


def test_newton_step_without_keras():
    """The advanced guide's Hessian / Newton step, with Variables and tf.nn.relu instead of layers."""
    rng = np.random.default_rng(5)
    xv = rng.normal(size=(7, 5)).astype(np.float32)
    k1 = rng.normal(size=(5, 8)).astype(np.float32) * 0.5
    k2 = rng.normal(size=(8, 6)).astype(np.float32) * 0.5
    b2 = rng.normal(size=(6,)).astype(np.float32) * 0.1
    x = tf.constant(xv)
    kernel1 = tf.Variable(k1)
    kernel2, bias2 = tf.Variable(k2), tf.Variable(b2)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            h = tf.nn.relu(x @ kernel1)
            h = tf.nn.relu(h @ kernel2 + bias2)
            loss = tf.reduce_mean(h ** 2)
        g = t1.gradient(loss, kernel1)
    h = t2.jacobian(g, kernel1)
    assert kernel1.shape == (5, 8) and h.shape == (5, 8, 5, 8)
    n_params = tf.reduce_prod(kernel1.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])

    def loss_fn(k):
        return jnp.mean(jax.nn.relu(jax.nn.relu(xv @ k) @ k2 + b2) ** 2)
    want_h = jax.hessian(loss_fn)(k1).reshape(40, 40)
    assert_close(h_mat, want_h, rtol=1e-3, atol=1e-5)
    assert_close(h_mat, tf.transpose(h_mat), atol=1e-5)  # symmetric

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    _ = kernel1.assign_sub(tf.reshape(update, kernel1.shape))
    want_update = np.linalg.solve(np.asarray(want_h, np.float64) + eps * np.eye(40),
                                  np.asarray(jax.grad(loss_fn)(k1), np.float64).reshape(40, 1))
    assert_close(kernel1, k1 - want_update.reshape(5, 8).astype(np.float32), rtol=1e-2, atol=1e-3)


# ---------------------------------------------------------------- custom_gradient
@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


def test_custom_gradient_log1pexp_stable():
    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    dy = tape.gradient(y, x)
    assert dy.numpy() == 1.0 and not np.isnan(dy.numpy())
    # and the naive version is NaN there
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.log(1 + tf.exp(x))
    assert np.isnan(tape.gradient(y, x).numpy())


def test_custom_gradient_clip():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert t.gradient(output, v).numpy() == 2.0
    v = tf.Variable([3.0, 4.0])
    with tf.GradientTape() as t:
        output = clip_gradients(v * 1.0)
    assert_close(t.gradient(output, v), f32([0.5, 0.5]) / np.sqrt(2))  # the clipped ones


def test_custom_gradient_call_form():
    def f(x):
        def grad(dy):
            return dy * 3.0
        return x * 2.0, grad
    cf = tf.custom_gradient(f)
    x = tf.constant(1.5)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = cf(x)
    assert y.numpy() == 3.0
    assert tape.gradient(y, x).numpy() == 3.0


def test_custom_gradient_multiple_inputs_and_none():
    @tf.custom_gradient
    def f(a, b):
        def grad(dy):
            return dy * 10.0, None
        return a * b, grad
    a, b = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = f(a, b)
    ga, gb = tape.gradient(y, [a, b])
    assert ga.numpy() == 10.0 and gb is None


def test_custom_gradient_with_variables():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def lin(x):
        y = x * w

        def grad(dy, variables=None):
            assert variables == [w] or list(variables)[0] is w
            return dy * w, [dy * x * 10.0]
        return y, grad
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = lin(x)
    gx, gw = tape.gradient(y, [x, w])
    assert gx.numpy() == 3.0 and gw.numpy() == 20.0


def test_custom_gradient_variables_missing_kwarg_raises():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def lin(x):
        def grad(dy):
            return dy * w
        return x * w, grad
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match="variables"):
            lin(x)


def test_custom_gradient_wrong_count_raises():
    @tf.custom_gradient
    def two(a, b):
        def grad(dy):
            return dy
        return a + b, grad
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = two(a, b)
    with pytest.raises(ValueError, match="2 gradients"):
        tape.gradient(y, [a, b])


def test_custom_gradient_wrong_variable_count_raises():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def lin(x):
        def grad(dy, variables=None):
            return dy * w, []
        return x * w, grad
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = lin(x)
    with pytest.raises(ValueError, match="each variable"):
        tape.gradient(y, [x, w])


def test_custom_gradient_not_a_pair_raises():
    @tf.custom_gradient
    def bad(x):
        return x * 2.0
    with pytest.raises(TypeError, match="grad_fn"):
        bad(tf.constant(1.0))


def test_custom_gradient_second_order():
    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x
        return x ** 3, grad
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = cube(x)
        g = t1.gradient(y, x)
    assert g.numpy() == 12.0
    assert t2.gradient(g, x).numpy() == 12.0  # 6 x


def test_custom_gradient_inside_nested_tapes_first_order_each():
    x = tf.Variable(2.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            out = clip_gradients(x * x)
    assert inner.gradient(out, x).numpy() == 2.0
    assert outer.gradient(out, x).numpy() == 2.0


def test_custom_gradient_jacobian():
    @tf.custom_gradient
    def sq(x):
        def grad(dy):
            return dy * 2.0 * x
        return x * x, grad
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = sq(x) + x
    want = np.diag([3.0, 5.0]).astype(np.float32)
    assert_close(tape.jacobian(y, x), want)
    assert_close(tape.jacobian(y, x, experimental_use_pfor=False), want)
    xb = tf.constant([[1.0], [2.0]])
    with tf.GradientTape() as tape:
        tape.watch(xb)
        y = sq(xb)
    assert_close(tape.batch_jacobian(y, xb), f32([[[2.0]], [[4.0]]]))


def test_custom_gradient_jacobian_under_outer_tape():
    @tf.custom_gradient
    def cube(a):
        def grad(dy):
            return dy * 3.0 * a * a
        return a ** 3, grad
    xv = np.array([[0.5, 1.0], [1.5, 2.0]], np.float32)
    x = tf.Variable(xv)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = cube(x) * tf.reduce_sum(x)
        j = t1.jacobian(y, x)
        s = tf.reduce_sum(j * j)
    f = lambda a: a ** 3 * jnp.sum(a)  # noqa: E731
    assert_close(j, jax.jacrev(f)(xv), rtol=1e-5)
    assert_close(t2.gradient(s, x), jax.grad(lambda a: jnp.sum(jax.jacrev(f)(a) ** 2))(xv), rtol=1e-5)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = cube(x)
        bj = t1.batch_jacobian(y, x)
        s = tf.reduce_sum(bj * bj)
    per_row = jax.vmap(jax.jacrev(lambda r: r ** 3))
    assert_close(bj, per_row(xv))
    assert_close(t2.gradient(s, x), jax.grad(lambda a: jnp.sum(per_row(a) ** 2))(xv), rtol=1e-5)


# ---------------------------------------------------------------- recompute_grad
def test_recompute_grad_equals_plain_gradient():
    rng = np.random.default_rng(6)
    w = tf.Variable(rng.normal(size=(4, 4)).astype(np.float32))
    x = tf.constant(rng.normal(size=(3, 4)).astype(np.float32))

    def block(a):
        return tf.tanh(a @ w) * tf.sin(a)
    remat = tf.recompute_grad(block)
    with tf.GradientTape() as t1:
        t1.watch(x)
        y1 = tf.reduce_sum(remat(x) ** 2)
    with tf.GradientTape() as t2:
        t2.watch(x)
        y2 = tf.reduce_sum(block(x) ** 2)
    assert_close(y1, y2)
    g1 = t1.gradient(y1, [x, w])
    g2 = t2.gradient(y2, [x, w])
    assert_close(g1, g2, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- forward mode
def test_forward_accumulator_jvp_equals_jax():
    xv = np.array([0.5, -1.0, 2.0], np.float32)
    tv = np.array([1.0, 0.5, -2.0], np.float32)
    x = tf.constant(xv)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(tv)) as acc:
        y = tf.reduce_sum(tf.sin(x) * x ** 2)
        z = tf.exp(x) / (1.0 + x * x)
    _, want_y = jax.jvp(lambda a: jnp.sum(jnp.sin(a) * a ** 2), (xv,), (tv,))
    _, want_z = jax.jvp(lambda a: jnp.exp(a) / (1 + a * a), (xv,), (tv,))
    assert_close(acc.jvp(y), want_y)
    assert_close(acc.jvp([y, z]), [want_y, want_z])
    unrelated = tf.constant(1.0) * 2.0
    assert acc.jvp(unrelated) is None
    assert acc.jvp(unrelated, unconnected_gradients="zero").numpy() == 0.0
    assert_close(acc.jvp(x), tv)


def test_forward_accumulator_variable_primal():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="structure"):
        tf.autodiff.ForwardAccumulator(v, [1.0, 1.0, 1.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 1.0])) as acc:
        y = tf.reduce_sum(v * v)
    assert acc.jvp(y).numpy() == 6.0


def test_forward_over_reverse_hvp():
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    vv = np.array([1.0, 0.0, -1.0], np.float32)
    x = tf.Variable(xv)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(vv)) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.sin(x) * x ** 2)
        g = tape.gradient(y, x)
    hvp = acc.jvp(g)
    want = jax.hessian(lambda a: jnp.sum(jnp.sin(a) * a ** 2))(xv) @ vv
    assert_close(hvp, want, rtol=1e-5, atol=1e-5)


def test_forward_accumulator_bad_tangent_shape():
    with pytest.raises(ValueError, match="shape"):
        tf.autodiff.ForwardAccumulator(tf.constant([1.0, 2.0]), tf.constant([1.0]))


# ---------------------------------------------------------------- tapejax.numpy and extend.defop
def test_tapejax_numpy_is_recorded():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tnp.sum(tnp.cumsum(x) ** 2) + tnp.dot(x, x) * tnp.mean(tnp.tanh(x))
    g = tape.gradient(y, x)
    f = lambda a: jnp.sum(jnp.cumsum(a) ** 2) + jnp.dot(a, a) * jnp.mean(jnp.tanh(a))  # noqa: E731
    assert_close(g, jax.grad(f)(np.array([1.0, 2.0, 3.0], np.float32)))
    assert isinstance(y, tf.Tensor)


def test_tapejax_numpy_static_arguments():
    x = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    with tf.GradientTape() as tape:
        y = tnp.sum(tnp.max(x, axis=1) * tnp.linalg.norm(x, axis=0)[:2])
    f = lambda a: jnp.sum(jnp.max(a, axis=1) * jnp.linalg.norm(a, axis=0)[:2])  # noqa: E731
    assert_close(tape.gradient(y, x), jax.grad(f)(x.numpy()), rtol=1e-5, atol=1e-6)


def test_defop_without_vjp():
    @defop
    def smooth_abs(x, eps=1e-3):
        return jnp.sqrt(x * x + eps)
    x = tf.Variable([-2.0, 0.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(smooth_abs(x))
    want = jax.grad(lambda a: jnp.sum(jnp.sqrt(a * a + 1e-3)))(x.numpy())
    assert_close(tape.gradient(y, x), want)


def test_defop_with_vjp_and_static():
    calls = []

    def rule(ans, x, power):
        calls.append(power)
        return lambda g: g * power * x ** (power - 1)
    powr = defop(lambda x, power: x ** power, vjp=rule, name="powr", static=("power",))
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(powr(x, 3))       # static passed positionally
        z = tf.reduce_sum(powr(x, power=2))  # and by keyword
    gy, = tape.gradient([y, z], [x])
    assert_close(gy, f32([3.0 + 2.0, 12.0 + 4.0]))
    assert set(calls) == {2, 3}
    assert repr(powr) == "<tapejax op powr>"


def test_defop_multiple_outputs():
    @defop
    def polar(x, y):
        return jnp.hypot(x, y), jnp.arctan2(y, x)
    a, b = tf.Variable(3.0), tf.Variable(4.0)
    with tf.GradientTape() as tape:
        r, theta = polar(a, b)
        out = r * 2.0 + theta
    ga, gb = tape.gradient(out, [a, b])
    fa, fb = jax.grad(lambda p, q: 2 * jnp.hypot(p, q) + jnp.arctan2(q, p), argnums=(0, 1))(3.0, 4.0)
    np.testing.assert_allclose([ga.numpy(), gb.numpy()], [fa, fb], rtol=1e-6)
    with tf.GradientTape() as tape:
        r, theta = polar(a, b)
    assert tape.gradient(r, b).numpy() == pytest.approx(0.8)


# ---------------------------------------------------------------- explain (tapejax's own)
# One case per entry of TensorFlow's guide "Cases where gradient returns None", and the rest of
# the ways a tape gives None; each checks that gradient() is None and explain() names why.
def _explained(tape, target, source, code, words):
    e = tape.explain(target, source)
    assert e.reasons == (code,), (e.reasons, str(e))
    assert not e.connected and str(e).startswith("No gradient") and words in str(e)
    assert repr(e).startswith("GradientExplanation(")
    if tape._nodes is not None:
        assert tape.gradient(target, source) is None


def test_explain_connected():
    w = tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(-w)
    e = tape.explain(y, w)
    assert e.connected and e.reasons == ("connected",) and "2 recorded operations" in str(e)
    assert tape.gradient(y, w).numpy() == 0.0  # connected, and the derivative is zero


def test_explain_not_watched():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    _explained(tape, y, x, "not_watched", "tape.watch(x)")


def test_explain_non_trainable_variable():
    v, w = tf.Variable(2.0, trainable=False), tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        y = v * w
    _explained(tape, y, v, "non_trainable", "trainable=False")


def test_explain_unwatched_variable():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        y = x * x
    _explained(tape, y, x, "variable_unwatched", "watch_accessed_variables=False")


def test_explain_variable_replaced_by_tensor():
    # guide: `x = x + 1` makes x a Tensor; the Variable is no longer used
    x = tf.Variable(2.0)
    source = x
    with tf.GradientTape(persistent=True) as tape:
        y = tf.constant(1.0) * 2.0
    _explained(tape, y, source, "variable_not_read", "assign_add")


def test_explain_unconnected_target():
    x, y0 = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape(persistent=True) as tape:
        unused = x * 2.0  # noqa: F841
        z = y0 * y0
    e = tape.explain(z, x)
    assert e.reasons == ("dead_end",) and tape.gradient(z, x) is None
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        z = y0 * y0
    _explained(tape, z, x, "unconnected", "does not depend")


def test_explain_numpy():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        x2 = x ** 2
        y = tf.reduce_mean(np.mean(x2, axis=0))
    _explained(tape, y, x, "numpy", "NumPy")


def test_explain_integer_source_and_integer_path():
    x = tf.constant(10)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    _explained(tape, y, x, "integer_source", "int32")
    v = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        z = tf.cast(tf.cast(v * 2.0, tf.int32), tf.float32) * 3.0
    _explained(tape, z, v, "integer", "integer")


def test_explain_state_assignment():
    # guide: x1.assign_add(x0) -- the assignment stops the gradient to x0
    x0, x1 = tf.Variable(3.0), tf.Variable(0.0)
    with tf.GradientTape(persistent=True) as tape:
        x1.assign_add(x0)
        y = x1 ** 2
    _explained(tape, y, x0, "variable_not_read", "assignment")
    with tf.GradientTape(persistent=True) as tape:
        x1.assign(x0 * 2.0)
        y = x1 ** 2
    _explained(tape, y, x0, "dead_end", "assign")


def test_explain_stop_gradient_and_stop_recording():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.stop_gradient(x * 2.0) * 3.0
    _explained(tape, y, x, "stop_gradient", "tf.stop_gradient")
    with tf.GradientTape(persistent=True) as tape:
        with tape.stop_recording():
            y = x * x
    _explained(tape, y, x, "target_stopped", "stop_recording")


def test_explain_target_outside_block_and_used_tape():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        a = x * 2.0
    y = a * x
    _explained(tape, y, x, "target_outside", "outside")
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    _explained(tape, y, x, "used", "persistent=True")


def test_op_without_tf_gradient_raises_lookup_error():
    # TF 2.21 (autodiff guide): AdjustContrastv2 has no registered gradient.
    image = tf.Variable([[[0.5, 0.0, 0.0]]])
    delta = tf.Variable(0.1)
    with tf.GradientTape(persistent=True) as tape:
        new_image = tf.image.adjust_contrast(image, delta)
        other = image * 2.0
    with pytest.raises(LookupError, match="^gradient registry has no entry for: AdjustContrastv2$"):
        tape.gradient(new_image, [image, delta])
    # off the path it is not differentiated, and the tape still works
    assert float(tf.reduce_sum(tape.gradient(other, image))) == 6.0
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = x * x
    assert float(t.gradient(y, x)) == 6.0


def test_aggregation_method_constants_and_tf_gradients():
    # tf.AggregationMethod docstring, TF 2.21: the constants, and tf.gradients takes one.
    assert (tf.AggregationMethod.ADD_N, tf.AggregationMethod.DEFAULT, tf.AggregationMethod.EXPERIMENTAL_TREE,
            tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N) == (0, 0, 1, 2)

    @tf.function
    def example():
        x = tf.constant(1.0)
        y = x * 2.0
        z = y + y + y + y
        return tf.gradients(z, [x, y], aggregation_method=tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)

    assert repr(example()) == ("[<tf.Tensor: shape=(), dtype=float32, numpy=8.0>, "
                               "<tf.Tensor: shape=(), dtype=float32, numpy=4.0>]")


def test_logger_handler_is_made_at_import_as_tf():
    # tf.get_logger docstring, TF 2.21: the handler exists once the import returns, on the stderr
    # of that moment (a later sys.stderr swap does not take the message).
    code = ("import io, sys\nimport tapejax as tf\nsys.stderr = io.StringIO()\n"
            "tf.get_logger().error('The value %d is invalid.', 3)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.splitlines()[-1] == "ERROR:tensorflow:The value 3 is invalid."


def test_print_inside_recompute_grad_prints_per_call(capsys):
    # tf.recompute_grad docstring, TF 2.21: the function's tf.print runs at each of the 4 forward
    # calls (it printed when the op was traced only: 3 times, the first call on the host none).
    y = tf.Variable(1.0)

    def my_function(x):
        tf.print('running')
        return x * y

    my_function_recompute = tf.recompute_grad(my_function)
    with tf.GradientTape() as tape:
        r = tf.constant(1.0)
        for _ in range(4):
            r = my_function_recompute(r)
    assert capsys.readouterr().out == "running\n" * 4
    assert float(tape.gradient(r, y)) == 4.0
def test_tensorflow_logger_writes_to_the_stderr_of_import_time():
    # TF 2.21 configures its logger when imported: a warning made under contextlib.redirect_stderr
    # still goes to the process's stderr (recorded: the buffer stays empty).
    code = ("import contextlib, io\nimport tapejax as tf\nbuf = io.StringIO()\n"
            "with contextlib.redirect_stderr(buf):\n    tf.data.experimental.Counter()\nprint(repr(buf.getvalue()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "''\n"
    assert out.stderr.splitlines()[-3:] == [
        "WARNING:tensorflow:From <string>:5: CounterV2 (from tensorflow.python.data.experimental.ops.counter) is "
        "deprecated and will be removed in a future version.",
        "Instructions for updating:",
        "Use `tf.data.Dataset.counter(...)` instead."]
