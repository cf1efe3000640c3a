"""TensorFlow's CPU transcendental functions bit for bit (tapejax/ops/eigen_math.py): Eigen's
AVX packet functions over whole packets of 8, the scalar function (glibc's) for the tail.
Digests of TF 2.21's outputs recorded by /tmp/h11/record_eigen.py over eigen_cases.cases();
each op is checked on the host evaluator (an eager op's first call at a shape), compiled
(later calls), eagerly through tapejax and inside tf.function."""
import jax
import numpy as np
import pytest

import tapejax as tf
from tapejax._core import host_eval
from tapejax.ops import eigen_math

from eigen_cases import cases, digest

DIGESTS = {
    'exp': 'a60b34aabfa8',
}

OPS = {"exp": (eigen_math.exp, tf.exp)}


def _outputs(fn, xs):
    return np.concatenate([np.asarray(y).ravel() for y in xs])


def _inputs():
    c = cases()
    return [x.T if name == "transposed" else x for name, x in c.items()]


@pytest.mark.parametrize("name", sorted(OPS))
def test_compiled_and_host_give_tensorflows_bits(name):
    fn, _ = OPS[name]
    xs = [np.ascontiguousarray(x) for x in _inputs()]
    compiled = jax.jit(lambda xs: [fn(x) for x in xs])(xs)
    assert digest(_outputs(fn, compiled)) == DIGESTS[name]
    host = [host_eval.evaluate(jax.make_jaxpr(fn)(x), [x])[0] for x in xs]
    assert digest(_outputs(fn, host)) == DIGESTS[name]


@pytest.mark.parametrize("name", sorted(OPS))
def test_eager_and_tf_function(name):
    _, op = OPS[name]
    c = cases()
    x = tf.constant(c["transposed"])
    first, second = op(tf.transpose(x)), op(tf.transpose(x))     # host, then compiled
    in_function = tf.function(lambda v: op(tf.transpose(v)))(x)
    assert np.array_equal(np.asarray(first), np.asarray(second), equal_nan=True)
    assert np.array_equal(np.asarray(first), np.asarray(in_function), equal_nan=True)
    ref = [op(tf.constant(v)).numpy().ravel() for k, v in c.items() if k != "transposed"]
    eager = digest(np.concatenate(ref + [np.asarray(first).ravel()]))
    assert eager == DIGESTS[name]


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


def test_fence_keeps_products_rounded_in_compiled_code():
    # Without the run-time -0.0, XLA's CPU backend fuses Eigen's r*p + q into one FMA.
    x = np.random.RandomState(3).uniform(-10, 10, 4096).astype(np.float32)
    f = jax.jit(eigen_math.pexp_float)
    host = host_eval.evaluate(jax.make_jaxpr(eigen_math.pexp_float)(x), [x])[0]
    assert np.array_equal(np.asarray(f(x)), host)
