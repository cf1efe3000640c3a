"""TensorFlow's CPU transcendental functions bit for bit (tapejax/ops/eigen_math.py): Eigen's
AVX packet functions over whole packets of 8, the scalar function (glibc's) for the tail.
Digests of TF 2.21's outputs recorded by /tmp/h11/record_eigen.py over eigen_cases.cases();
each op is checked on the host evaluator (an eager op's first call at a shape), compiled
(later calls), eagerly through tapejax and inside tf.function."""
import hashlib

import jax
import numpy as np
import pytest

import tapejax as tf
from tapejax._core import host_eval
from tapejax.ops import eigen_math

from eigen_cases import cases, cotangent, digest

DIGESTS = {
    'exp': 'ad39299c9f62',
    'tanh': '7d5a24272ace',
    'sigmoid': 'e3719d8dc38d',
    'log': 'a893707ff510',
    'log1p': '475dfa5a702d',
    'softplus': 'e07cc4437c5d',
    'log_sigmoid': 'be5e9bf21670',
    'elu': '1274ddec3bb2',
    'selu': '138c9bcde94d',
    'expm1': 'dc5c391bad92',
}
GRAD_DIGESTS = {
    'exp': 'ea0068e2721d',
    'tanh': '806edacb333b',
    'sigmoid': '41b44777512d',
    'softplus': '57be0cebcd40',
    'log_sigmoid': 'a366039616c9',
    'elu': '70f772fcdb92',
    'selu': '78252e03b813',
    'expm1': 'ea0068e2721d',
}
HALF_DIGESTS = {   # sigmoid, softplus, elu, selu, exp, expm1 of eigen_cases' mixed_1003
    'float16': '388e2960aa7e',
    'bfloat16': 'ffa19661c56e',
}

OPS = {
    "exp": (eigen_math.exp, tf.exp), "tanh": (eigen_math.tanh, tf.tanh),
    "sigmoid": (eigen_math.logistic, tf.sigmoid), "log": (eigen_math.log, tf.math.log),
    "log1p": (eigen_math.log1p, tf.math.log1p), "softplus": (eigen_math.softplus, tf.nn.softplus),
    "log_sigmoid": (lambda x: -eigen_math.softplus(-x), tf.math.log_sigmoid),
    "elu": (eigen_math.elu, tf.nn.elu), "selu": (eigen_math.selu, tf.nn.selu),
    "expm1": (eigen_math.expm1, tf.math.expm1),
}


def _flat(ys):
    return np.concatenate([np.asarray(y).ravel() for y in ys])


def _inputs():
    return [np.ascontiguousarray(x.T) if name == "transposed" else x for name, x in cases().items()]


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_compiled_and_host_give_tensorflows_bits(name):
    fn, _ = OPS[name]
    xs = _inputs()
    compiled = jax.jit(lambda xs: [fn(x) for x in xs])(xs)
    assert digest(_flat(compiled)) == DIGESTS[name]
    host = [host_eval.evaluate(jax.make_jaxpr(fn)(x), [x])[0] for x in xs]
    assert digest(_flat(host)) == DIGESTS[name]


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_eager_and_tf_function(name):
    _, op = OPS[name]
    c = cases()
    x = tf.constant(c["transposed"])
    first, second = op(tf.transpose(x)), op(tf.transpose(x))     # host, then compiled
    in_function = tf.function(lambda v: op(tf.transpose(v)))(x)
    assert np.array_equal(np.asarray(first), np.asarray(second), equal_nan=True)
    assert np.array_equal(np.asarray(first), np.asarray(in_function), equal_nan=True)
    ref = [op(tf.constant(v)).numpy().ravel() for k, v in c.items() if k != "transposed"]
    assert digest(np.concatenate(ref + [np.asarray(first).ravel()])) == DIGESTS[name]


@pytest.mark.parametrize("name", sorted(GRAD_DIGESTS))
def test_gradients_are_tensorflows(name):
    # TanhGrad dy * (1 - y*y), SigmoidGrad dy * (y * (1 - y)) (tail: (dy * y) * (1 - y)), exp's dy * y
    _, op = OPS[name]
    grads = []
    for x in _inputs():
        t = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = op(t)
        grads.append(tape.gradient(y, t, output_gradients=tf.constant(cotangent(x))).numpy())
    assert digest(_flat(grads)) == GRAD_DIGESTS[name]


_JVP_OPS = ("exp", "tanh", "sigmoid", "softplus")


def test_gradients_inside_tf_function_and_jax():
    x = cases()["mixed_15"]
    g = cotangent(x)

    @tf.function
    def grads(v, dy):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(v)
            ys = [OPS[k][1](v) for k in _JVP_OPS]
        return [tape.gradient(y, v, output_gradients=dy) for y in ys]
    for (fn, op), got in zip([OPS[k] for k in _JVP_OPS], grads(tf.constant(x), tf.constant(g))):
        t = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = op(t)
        eager = tape.gradient(y, t, output_gradients=tf.constant(g)).numpy()
        assert np.array_equal(got.numpy(), eager, equal_nan=True)
        vjp = jax.jit(lambda x, g: jax.vjp(fn, x)[1](g)[0])   # custom_jvp: TF's rule
        assert np.array_equal(np.asarray(vjp(x, g)), eager, equal_nan=True)


def test_exp_prints_tensorflows_digits():
    # XLA's exp: 0.8212184, 0.37937242, 0.40073413
    x = tf.constant(np.array([-0.1969662, -0.96923697, -0.91445714] * 3, np.float32))
    assert tf.exp(x).numpy()[:3].tolist() == [np.float32(0.82121843), np.float32(0.3793724), np.float32(0.4007341)]
    # a scalar (and the last n % 8 elements) take glibc's expf: here the XLA digits
    assert repr(tf.exp(tf.constant(-0.1969662)).numpy()) == "np.float32(0.8212184)"


def test_exp_gradient_is_dy_times_y():
    x = tf.constant(np.array([-0.1969662, 2.5, 0.29354, 1.0, -3.7, 10.0, 0.1, 7.0, 3.0], np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.exp(x)
    g = tape.gradient(y, x, output_gradients=tf.constant(np.full(9, 0.3, np.float32)))
    assert np.array_equal(g.numpy(), y.numpy() * np.float32(0.3))
    assert g.numpy()[:3].tolist() == [0.2463655322790146, 3.6547484397888184, 0.4023500680923462]   # TF 2.21


def test_keras_activations_are_the_ops():
    assert tf.keras.activations.get("sigmoid") is tf.sigmoid and tf.nn.sigmoid is tf.sigmoid
    assert tf.keras.activations.get("tanh") is tf.tanh and tf.keras.activations.exponential is tf.exp
    for name in ("sigmoid", "tanh", "exponential"):
        pure = tf.keras.activations.pure(tf.keras.activations.get(name))
        assert tf.keras.activations._grad_from_output(pure) is not None   # TF's gradient, from the output


def test_fence_keeps_products_rounded_in_compiled_code():
    # Without the run-time -0.0, XLA's CPU backend fuses Eigen's r*p + q into one FMA.
    x = np.random.RandomState(3).uniform(0, 10, 512).astype(np.float32)
    for fn in (eigen_math.pexp_float, eigen_math.ptanh_float, eigen_math.plog1p_float, eigen_math.log1pf_glibc,
               eigen_math.expm1f_glibc):
        host = host_eval.evaluate(jax.make_jaxpr(fn)(x), [x])[0]
        assert np.array_equal(np.asarray(jax.jit(fn)(x)), host)


def test_log_of_denormals_and_specials():
    # TF 2.21: the packet path reads a denormal as 0 (-inf); glibc's logf on the tail turns
    # x * 2^23 (flushed to 0) into -103.97208 for a positive denormal
    x = np.array([1e-45, -1e-45, 1e-39, 0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    packet = tf.math.log(tf.constant(x)).numpy()
    assert packet[:6].tolist() == [-np.inf, -np.inf, -np.inf, -np.inf, -np.inf, np.inf] and np.isnan(packet[6:]).all()
    tail = np.array([tf.math.log(tf.constant(v)).numpy() for v in x])
    assert tail[[0, 2, 3, 4, 5]].tolist() == [np.float32(-103.97208), np.float32(-103.97208), -np.inf, -np.inf, np.inf]
    assert np.isnan(tail[[1, 6, 7]]).all()


@pytest.mark.parametrize("dtype", sorted(HALF_DIGESTS))
def test_half_types_round_each_step(dtype):
    # Eigen's half/bfloat16 packets: each function in float32 then rounded, each step between
    # (1 + e, e - 1, scale * x) rounded to the half type; float16's epsilon() is 2^-13 (softplus)
    x = tf.cast(tf.constant(cases()["mixed_1003"]), dtype)
    ys = [tf.cast(op(x), tf.float32).numpy() for op in (tf.sigmoid, tf.nn.softplus, tf.nn.elu, tf.nn.selu,
                                                         tf.exp, tf.math.expm1)]
    assert digest(np.concatenate(ys)) == HALF_DIGESTS[dtype]


@pytest.mark.parametrize("name,digest64", [("exp", "293c6716fe29"), ("tanh", "148056825e87"),
                                            ("sigmoid", "4b18ec339023"), ("log", "88d3df4b0ca2"),
                                            ("log1p", "e66e03f45053"), ("expm1", "cb273afeaf59"),
                                            ("softplus", "f3b1f61615de"), ("elu", "093c88f204bc"),
                                            ("selu", "f2630294a998")])
def test_float64_packets_are_tensorflows(name, digest64):
    # Eigen's pexp_double / ptanh_double / logistic / plog_double and the functions built on them on
    # packets of 4 (TF 2.21's first 1000 of 1003; XLA's differ in 0.07-55%); the 3-element tail is
    # XLA's (TF: glibc's)
    fn, op = OPS[name]
    x = cases()["mixed_1003"].astype(np.float64) * 1.37
    x = np.abs(x) if name in ("log", "log1p") else x
    y = op(tf.constant(x)).numpy()[:1000].copy()
    y[np.isnan(y)] = np.nan
    assert hashlib.sha256(y.tobytes()).hexdigest()[:12] == digest64
    assert np.array_equal(np.asarray(jax.jit(fn)(x))[:1000], y, equal_nan=True)


def test_keras_mish_and_its_gradient_are_tensorflows():
    # Keras 3's mish is x * tanh(softplus(x)) in TF ops; its gradient g*t + TanhGrad(t, x*g)*sigmoid(x)
    x = cases()["mixed_1003"]
    for _ in range(2):      # host, then compiled
        t = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = tf.keras.activations.mish(t)
        g = tape.gradient(y, t, output_gradients=tf.constant(cotangent(x)))
        assert digest(np.concatenate([y.numpy(), g.numpy()])) == "17d7dfb278df"


def test_traced_once_per_input_type_also_with_jit_disabled():
    """Eigen's arithmetic is 20-50 primitives a call: a program calling ``tanh`` 100 times (a
    lazy step traced with ``jax.disable_jit``, so the host can run it) holds one traced body
    for all calls, not 100 traces of it (the first lazy step of bench_tape took 2x longer)."""
    traced = []
    f32 = eigen_math.ptanh_float

    def counting(x):
        traced.append(1)
        return f32(x)

    x = np.linspace(-3, 3, 29, dtype=np.float32)
    eigen_math.ptanh_float = counting
    try:
        def chain(v):
            for _ in range(5):
                v = eigen_math.tanh(v) * 1.5
            return v
        with jax.disable_jit():
            closed = jax.make_jaxpr(chain)(x + np.float32(0.25))
    finally:
        eigen_math.ptanh_float = f32
    assert len(traced) <= 1       # 0 where an earlier test traced this input type
    calls = [e for e in closed.jaxpr.eqns if e.primitive.name in ("jit", "pjit")]
    assert len(calls) == 5 and len({id(e.params["jaxpr"]) for e in calls}) == 1
    want = x + np.float32(0.25)
    for _ in range(5):
        want = np.asarray(eigen_math.tanh(want)) * np.float32(1.5)
    np.testing.assert_array_equal(host_eval.evaluate(closed, [x + np.float32(0.25)])[0], want)
