"""Property tests: random programs on random shapes, tape vs ``jax.grad``.

A program is a list of instructions over a growing list of values. The same
program runs twice: on tapejax inside a GradientTape (with random leaf kinds:
trainable Variable, watched constant, unwatched constant, non-trainable
Variable, and random ``stop_gradient``) and as a pure JAX function. The JAX
side models the tape: an op is recorded only if one of its inputs is watched
(or computed from a watched value); an unrecorded op's output is a constant.
Which sources get ``None`` is modelled the same way.
"""
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import tapejax as tf

UNARY = {
    "sin": (tf.sin, jnp.sin),
    "cos": (tf.cos, jnp.cos),
    "tanh": (tf.tanh, jnp.tanh),
    "sigmoid": (tf.sigmoid, jax.nn.sigmoid),
    "softplus": (tf.math.softplus, jax.nn.softplus),
    "scale": (lambda x: x * 1.5, lambda x: x * 1.5),
    "shift": (lambda x: x + 0.3, lambda x: x + 0.3),
    "exp_tanh": (lambda x: tf.exp(tf.tanh(x)), lambda x: jnp.exp(jnp.tanh(x))),
    "mean_keepdims": (lambda x: tf.reduce_mean(x, axis=-1, keepdims=True) if x.ndim else x * 1.0,
                      lambda x: jnp.mean(x, axis=-1, keepdims=True) if x.ndim else x * 1.0),
    "square_half": (lambda x: tf.square(x) * 0.5, lambda x: jnp.square(x) * 0.5),
}
BINARY = {
    "add": (tf.add, jnp.add),
    "sub": (lambda a, b: a - b, jnp.subtract),
    "mul": (tf.multiply, jnp.multiply),
    # TensorFlow's tie rule (ties happen here: x against stop_gradient(x)): all to the first input
    "max": (tf.maximum, lambda a, b: jnp.where(a >= b, a, b)),
    "min": (tf.minimum, lambda a, b: jnp.where(a <= b, a, b)),
    "ratio": (lambda a, b: a / (1.0 + b * b), lambda a, b: a / (1.0 + b * b)),
}
KINDS = ["variable", "watched", "constant", "frozen_variable"]
SHAPES = [(), (3,), (2, 3)]


@st.composite
def programs(draw):
    shape = draw(st.sampled_from(SHAPES))
    n_leaves = draw(st.integers(1, 3))
    leaves = []
    for _ in range(n_leaves):
        leaf_shape = shape if draw(st.booleans()) else ()
        kind = draw(st.sampled_from(KINDS))
        leaves.append((kind, leaf_shape))
    n = n_leaves
    instructions = []
    for _ in range(draw(st.integers(1, 6))):
        what = draw(st.sampled_from(["unary", "unary", "binary", "binary", "stop"]))
        if what == "unary":
            instructions.append(("unary", draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, n - 1))))
        elif what == "binary":
            instructions.append(("binary", draw(st.sampled_from(sorted(BINARY))),
                                 draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))))
        else:
            instructions.append(("stop", draw(st.integers(0, n - 1))))
        n += 1
    extra = draw(st.integers(0, n - 1))  # fan-out: the target also sums another value
    seed = draw(st.integers(0, 2 ** 16))
    return leaves, instructions, extra, seed


def run_tapejax(leaves, instructions, extra, arrays, persistent=False):
    made = []
    for (kind, _), a in zip(leaves, arrays):
        if kind == "variable":
            made.append(tf.Variable(a))
        elif kind == "frozen_variable":
            made.append(tf.Variable(a, trainable=False))
        else:
            made.append(tf.constant(a))
    with tf.GradientTape(persistent=persistent) as tape:
        for (kind, _), t in zip(leaves, made):
            if kind == "watched":
                tape.watch(t)
        vals = list(made)
        for ins in instructions:
            if ins[0] == "unary":
                vals.append(UNARY[ins[1]][0](vals[ins[2]]))
            elif ins[0] == "binary":
                vals.append(BINARY[ins[1]][0](vals[ins[2]], vals[ins[3]]))
            else:
                vals.append(tf.stop_gradient(vals[ins[1]]))
        target = tf.reduce_sum(vals[-1]) + tf.reduce_sum(vals[extra])
    return tape, target, made


def model(leaves, instructions, extra):
    """The pure JAX function and, per leaf, whether the tape connects it to the target."""
    watched0 = [kind in ("variable", "watched") for kind, _ in leaves]

    # A leaf the tape does not watch (a constant, a non-trainable Variable) gets no gradient
    # through the ops it feeds, even recorded ones (TensorFlow 2.21).
    frozen = [kind in ("constant", "frozen_variable") for kind, _ in leaves]

    def flow(*xs):
        vals = [jax.lax.stop_gradient(x) if f else x for x, f in zip(xs, frozen)]
        rec = list(watched0)                            # recorded-ness of each value
        deps = [set() if f else {i} for i, f in enumerate(frozen)]  # leaves connected through recorded ops

        def op(out, ins):
            recorded = any(rec[i] for i in ins)
            rec.append(recorded)
            deps.append(set().union(*(deps[i] for i in ins)) if recorded else set())
            vals.append(out if recorded else jax.lax.stop_gradient(out))

        for ins in instructions:
            if ins[0] == "unary":
                op(UNARY[ins[1]][1](vals[ins[2]]), [ins[2]])
            elif ins[0] == "binary":
                op(BINARY[ins[1]][1](vals[ins[2]], vals[ins[3]]), [ins[2], ins[3]])
            else:
                rec.append(False)
                deps.append(set())
                vals.append(jax.lax.stop_gradient(vals[ins[1]]))
        # the final reduce_sums and add are recorded when their inputs are
        connected = set()
        total = 0.0
        for i in (len(vals) - 1, extra):
            part = jnp.sum(vals[i])
            if rec[i]:
                connected |= deps[i]
            else:
                part = jax.lax.stop_gradient(part)
            total = total + part
        return total, connected

    return flow


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_match_jax_grad(prog):
    leaves, instructions, extra, seed = prog
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.0, 1.0, size=s).astype(np.float32) for _, s in leaves]
    tape, target, made = run_tapejax(leaves, instructions, extra, arrays)

    flow = model(leaves, instructions, extra)
    want_value, connected = flow(*arrays)
    np.testing.assert_allclose(target.numpy(), want_value, rtol=1e-5, atol=1e-5)
    want = jax.grad(lambda *xs: flow(*xs)[0], argnums=tuple(range(len(arrays))))(*arrays)

    got = tape.gradient(target, made)
    for i, (g, w) in enumerate(zip(got, want)):
        if i not in connected:
            assert g is None, f"leaf {i} ({leaves[i][0]}) is not connected on the tape, got {g}"
            np.testing.assert_allclose(np.asarray(w), 0.0)
        else:
            assert g is not None, f"leaf {i} ({leaves[i][0]}) should get a gradient"
            assert g.shape == arrays[i].shape and g.dtype == tf.float32
            np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-4, atol=1e-5)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
@example(prog=([('watched', (3,))], [('unary', 'tanh', 0)], 0, 1507))
def test_random_programs_zero_mode_jacobian_and_repeat(prog):
    leaves, instructions, extra, seed = prog
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.0, 1.0, size=s).astype(np.float32) for _, s in leaves]
    tape, target, made = run_tapejax(leaves, instructions, extra, arrays, persistent=True)
    flow = model(leaves, instructions, extra)
    want = jax.grad(lambda *xs: flow(*xs)[0], argnums=tuple(range(len(arrays))))(*arrays)

    zero = tape.gradient(target, made, unconnected_gradients="zero")
    again = tape.gradient(target, made, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    for g, g2, w in zip(zero, again, want):
        np.testing.assert_allclose(g.numpy(), np.asarray(w), rtol=1e-4, atol=1e-5)
        # equal to rounding: the first pass at new shapes runs in NumPy, the second compiled
        # (tf.config.experimental.enable_op_determinism() makes both compiled, bit for bit)
        np.testing.assert_allclose(g.numpy(), g2.numpy(), rtol=1e-6, atol=1e-7)
    # the Jacobian of the scalar target is its gradient
    jac = tape.jacobian(target, made, unconnected_gradients="zero")
    for j, w in zip(jac, want):
        np.testing.assert_allclose(j.numpy(), np.asarray(w), rtol=1e-4, atol=1e-5)
