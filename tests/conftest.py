"""Shared helpers for the tape-core tests: the oracle is JAX itself."""
import os
import shutil
import tempfile

import jax
import numpy as np
import pytest


def _compilation_cache():
    """XLA compiles the same program in many tests (a Keras model's train step, an op at a common
    shape): JAX's persistent compilation cache, in a directory made for this run, compiles each
    once per process. Executables are looked up by their program and compile options, so results
    are the same. Each xdist worker has a directory of its own: JAX writes entries without a lock
    unless it also evicts them, which scans the whole directory at every write.
    Returns the directory if this process made it (it removes it at the end)."""
    made = None
    if "TAPEJAX_TEST_XLA_CACHE" not in os.environ:
        made = os.environ["TAPEJAX_TEST_XLA_CACHE"] = tempfile.mkdtemp(prefix="tapejax-xla-cache-")
    path = os.path.join(os.environ["TAPEJAX_TEST_XLA_CACHE"], os.environ.get("PYTEST_XDIST_WORKER", "main"))
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return made


_CACHE_MADE_HERE = _compilation_cache()

import tapejax as tf  # noqa: E402  (after the cache is configured: importing may compile)

# As TensorFlow's own tests compare values (``test_util.run_without_tensor_float_32``): on a
# GPU with TensorFloat-32 (Ampere and newer), float32 products would otherwise be rounded to
# about 3 digits, and the oracles here are float32 and float64 on the CPU.
if jax.default_backend() == "gpu":
    tf.config.experimental.enable_tensor_float_32_execution(False)

# Ops and programs met at new shapes run on the host (NumPy) before they are compiled only where
# JAX computes on the CPU (tapejax/_core/new_shapes.py, lazy._first_sighting): the tests that
# count those host runs and compiles run there.
host_first = pytest.mark.skipif(jax.default_backend() != "cpu",
                                reason="new shapes run on the host first only on a CPU backend")


def as_np(x):
    """A numpy array of a Tensor / jax array / number (None stays None)."""
    return None if x is None else np.asarray(x)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    """Tree-wise allclose that also requires None exactly where expected is None."""
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual, is_leaf=lambda v: v is None or tf.is_tensor(v))
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected, is_leaf=lambda v: v is None or tf.is_tensor(v))
    assert len(a_leaves) == len(e_leaves), (a_tree, e_tree)
    for a, e in zip(a_leaves, e_leaves):
        if e is None:
            assert a is None, f"expected None, got {a!r}"
            continue
        assert a is not None, "got None, expected a value"
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, (a.shape, e.shape)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def tape_vjp(f):
    """``jax.vjp``-shaped view of the tape: ``f`` maps Tensors to a Tensor (or a list).

    Returns ``g(*arrays) -> (out, vjp_fn)`` where ``vjp_fn(ct)`` is
    ``tape.gradient(out, xs, output_gradients=ct)`` -- usable with
    ``jax.test_util.check_vjp`` to check the tape against finite differences.
    """
    def g(*arrays):
        xs = [tf.constant(a) for a in arrays]
        with tf.GradientTape() as tape:
            tape.watch(xs)
            out = f(*xs)
        out_val = jax.tree_util.tree_map(lambda t: t._value, out, is_leaf=tf.is_tensor)

        def vjp_fn(ct):
            cts = jax.tree_util.tree_map(tf.constant, ct)
            grads = tape.gradient(out, xs, output_gradients=cts)
            return tuple(g._value for g in grads)

        return out_val, vjp_fn

    return g


# The modules whose tests run a second time with lazy execution on (test ids ending ``[lazy]``
# or ``-lazy]``): lazy execution (tapejax/_core/lazy.py) promises every eager guarantee (values
# to the bit, errors, reprs, Variables, tapes). These cover the tape, the engine and the tensor,
# Variables and tf.function on them, and the seeds' training code. Chosen to fit CI's time
# budget: the modules of TF's own backprop tests, ops, dtypes, random numbers, Keras models and
# optimizers (run lazily here until session 28) run lazily with the whole suite,
# ``TAPEJAX_LAZY=1 python -m pytest -n logical``.
LAZY_TOO = {
    "test_tape.py", "test_engine.py", "test_tensor.py", "test_state.py", "test_function.py",
    "test_seeds_core.py", "test_indexed_slices.py", "test_guide_variables.py",
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "eager_dispatch: checks the caches of op-by-op dispatch (compiled variants per op, "
        "backward traces per tape structure); runs with lazy execution off")
    config.addinivalue_line("markers", "lazy: the second run of a test of LAZY_TOO, with lazy execution on")


def pytest_unconfigure(config):
    if _CACHE_MADE_HERE:
        shutil.rmtree(_CACHE_MADE_HERE, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Each test of a LAZY_TOO module is followed by its twin run lazily."""
    out = []
    for item in items:
        out.append(item)
        if (isinstance(item, pytest.Function) and item.path.name in LAZY_TOO
                and not item.get_closest_marker("eager_dispatch")):
            name = item.name[:-1] + "-lazy]" if item.name.endswith("]") else item.name + "[lazy]"
            twin = pytest.Function.from_parent(item.parent, name=name, callspec=getattr(item, "callspec", None),
                                               fixtureinfo=item._fixtureinfo, originalname=item.originalname)
            twin.add_marker("lazy")
            out.append(twin)
    items[:] = out


@pytest.fixture(autouse=True)
def _execution_mode(request):
    """Lazy execution on for a ``lazy`` twin; off for tests marked ``eager_dispatch`` (also when
    the suite runs with ``TAPEJAX_LAZY=1``): lazy execution compiles whole programs instead.
    A test that switches it (a docstring example) does not change it for the tests after it."""
    was = tf.config.experimental.lazy_execution_enabled()
    if request.node.get_closest_marker("lazy"):
        tf.config.experimental.set_lazy_execution(True)
    elif request.node.get_closest_marker("eager_dispatch"):
        tf.config.experimental.set_lazy_execution(False)
    try:
        yield
    finally:
        if tf.config.experimental.lazy_execution_enabled() != was:
            tf.config.experimental.set_lazy_execution(was)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
