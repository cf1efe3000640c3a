"""tf.test: TensorFlow's test helpers (``TestCase`` and its assertions, ``compute_gradient``, what
the build and the machine support), over unittest, NumPy and JAX.

What TensorFlow's build provides is what JAX's provides here: XLA always (``is_built_with_xla``),
CUDA or ROCm where their JAX plugin is installed, GPUs where JAX sees them.
"""
import collections.abc
import importlib.util
import inspect
import platform
import random as _py_random
import unittest

import jax
import numpy as np

from . import errors as errors, nest as _nest, random as _random
from ._core import devices as _devices, dtypes as _dtypes, lazy as _lazy, logs as _logs
from ._core.tape import GradientTape
from ._core.tensor import _TensorBase
from .ops import convert_to_tensor

# TensorFlow's random_seed.DEFAULT_GRAPH_SEED: the seed each TestCase test starts from.
_DEFAULT_SEED = 87654321


def _ndarray(a):
    """``a`` (a tensor, a list, a number) as a NumPy array, as TestCase's ``_GetNdArray``."""
    if isinstance(a, _TensorBase):
        return a.numpy() if hasattr(a, "numpy") else np.asarray(a)
    if isinstance(a, np.ndarray):
        return a
    try:
        return np.array(a)
    except ValueError:   # ragged nested lists
        return np.array(a, dtype=object)


def _tolerances(a, b, rtol, atol, float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3,
                bfloat16_rtol=1e-2, bfloat16_atol=1e-2):
    """TestCase's tolerances widened for the less precise of ``a``'s and ``b``'s dtypes."""
    for dt, (r, t) in ((np.float32, (float_rtol, float_atol)), (np.complex64, (float_rtol, float_atol)),
                       (np.float16, (half_rtol, half_atol)), (_dtypes.bfloat16._np, (bfloat16_rtol, bfloat16_atol))):
        if a.dtype == dt or b.dtype == dt:
            rtol, atol = max(rtol, r), max(atol, t)
    return rtol, atol


def _subscripts(mask, value, limit=10):
    """TestCase's lines naming the elements where ``mask`` holds: ``  [1] : 5.0``, at most ``limit``."""
    if np.ndim(value) == 0:
        return ["  [0] : " + str(value)]
    where = np.argwhere(mask)
    lines = [f"  {w} : {value[tuple(w)]}" for w in where[:limit]]
    return lines + ["  ..."] * (len(where) > limit)


class TestCase(unittest.TestCase):
    """Base class for tests of TensorFlow code (``tf.test.TestCase``): unittest's, with
    TensorFlow's array assertions; each test starts from TensorFlow's default seeds.

    Example:
        >>> import tapejax as tf
        >>> class MyTest(tf.test.TestCase):
        ...   def test_add(self):
        ...     self.assertAllClose(tf.constant([1.0, 2.0]) + 1.0, [2.0, 3.0])
        >>> MyTest("test_add").run().wasSuccessful()
        True
    """

    def setUp(self):
        super().setUp()
        _py_random.seed(_DEFAULT_SEED)
        np.random.seed(_DEFAULT_SEED)
        _random.set_seed(_DEFAULT_SEED)

    def evaluate(self, tensors):
        """The NumPy values of a (nested structure of) tensors."""
        return _nest.map_structure(lambda t: t.numpy() if isinstance(t, _TensorBase) else t, tensors)

    def _array_like_close(self, a, b, rtol, atol, msg):
        a, b = _ndarray(a), _ndarray(b)
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape} with contents {b}.")
        if a.dtype == _dtypes.bfloat16._np:
            a = a.astype(np.float32)
        if b.dtype == _dtypes.bfloat16._np:
            b = b.astype(np.float32)
        if not np.allclose(a, b, rtol=rtol, atol=atol):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="\n".join(m for m in [msg] if m),
                                       equal_nan=True)

    def _all_close(self, a, b, rtol, atol, path, msg):
        where = "".join(f"[{p}]" for p in path)
        a, b = (x._asdict() if hasattr(x, "_asdict") else x for x in (a, b))
        if isinstance(a, collections.abc.Mapping) != isinstance(b, collections.abc.Mapping):
            raise ValueError(f"Can't compare dict to non-dict, a{where} vs b{where}. {msg or ''}")
        if isinstance(a, collections.abc.Mapping):
            self.assertCountEqual(a.keys(), b.keys(), msg=f"mismatched keys: a{where} has keys {a.keys()}, but "
                                                          f"b{where} has keys {b.keys()}. {msg or ''}")
            for k in a:
                self._all_close(a[k], b[k], rtol, atol, path + [k], msg)
            return
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and not (
                _ndarray(a).dtype != object and _ndarray(b).dtype != object):
            if len(a) != len(b):
                raise ValueError(f"Mismatched length: a{where} has {len(a)} items, but b{where} has {len(b)} "
                                 f"items. {msg or ''}")
            for i, (x, y) in enumerate(zip(a, b)):
                self._all_close(x, y, rtol, atol, path + [i], msg)
            return
        a_arr, b_arr = _ndarray(a), _ndarray(b)
        self._array_like_close(a_arr, b_arr, *_tolerances(a_arr, b_arr, rtol, atol), msg)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """Asserts that two (nested structures of) arrays or tensors have near values:
        ``|a - b| <= atol + rtol * |b|`` (wider for float16 and bfloat16)."""
        self._all_close(a, b, rtol, atol, [], msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        """``assertAllClose`` with the tolerances given per dtype."""
        a_arr, b_arr = _ndarray(a), _ndarray(b)
        rtol, atol = _tolerances(a_arr, b_arr, rtol, atol, float_rtol, float_atol, half_rtol, half_atol,
                                 bfloat16_rtol, bfloat16_atol)
        self._array_like_close(a_arr, b_arr, rtol, atol, msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """Asserts that two arrays or tensors do not have near values."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are close at all elements.")

    def assertAllEqual(self, a, b, msg=None):
        """Asserts that two arrays or tensors have the same shape and values (NaNs equal)."""
        msg = msg or ""
        a, b = _ndarray(a), _ndarray(b)
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}. Contents: {b!r}. \n{msg}.")
        same = a == b
        if a.dtype.kind in "fc":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if not np.all(same):
            np.testing.assert_array_equal(a, b, err_msg=msg)

    def assertNotAllEqual(self, a, b, msg=None):
        """Asserts that two arrays or tensors differ somewhere."""
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def _compare_all(self, a, target, op, what):
        a = _ndarray(a)
        if not np.all(op(a, target)):
            raise AssertionError(f"{a} is not {what} {target}")

    def assertAllGreater(self, a, comparison_target):
        self._compare_all(a, comparison_target, np.greater, "greater than")

    def assertAllLess(self, a, comparison_target):
        self._compare_all(a, comparison_target, np.less, "less than")

    def assertAllGreaterEqual(self, a, comparison_target):
        self._compare_all(a, comparison_target, np.greater_equal, "greater than or equal to")

    def assertAllLessEqual(self, a, comparison_target):
        self._compare_all(a, comparison_target, np.less_equal, "less than or equal to")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False, open_upper_bound=False):
        """Asserts that every element of ``target`` is in the range (closed unless told), and none is NaN."""
        t = _ndarray(target)
        if not (np.issubdtype(t.dtype, np.floating) or np.issubdtype(t.dtype, np.integer)):
            raise AssertionError(f"The value of {t} does not have an ordered numeric type, instead it has type: "
                                 f"{t.dtype}")
        nans = np.isnan(t) if t.dtype.kind == "f" else np.zeros(t.shape, bool)
        if np.any(nans):
            raise AssertionError(f"{np.sum(nans)} of the {t.size} element(s) are NaN. Subscripts(s) and value(s) "
                                 "of the NaN element(s):\n" + "\n".join(_subscripts(nans, t)))
        low = t <= lower_bound if open_lower_bound else t < lower_bound
        bad = np.logical_or(low, t >= upper_bound if open_upper_bound else t > upper_bound)
        if np.any(bad):
            where = (f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                     f"{')' if open_upper_bound else ']'}")
            raise AssertionError(f"{np.sum(bad)} of the {t.size} element(s) are outside the range {where}. "
                                 "Subscript(s) and value(s) of the offending elements:\n"
                                 + "\n".join(_subscripts(bad, t)))

    def assertAllInSet(self, target, expected_set):
        """Asserts that every element of ``target`` is in ``expected_set``."""
        t = _ndarray(target)
        diff = set(t.ravel().tolist()) - set(expected_set)
        if diff:
            raise AssertionError(f"{t} contains values not in {expected_set}: {diff}")

    def assertAllTrue(self, a):
        self.assertAllEqual(np.ones_like(_ndarray(a), dtype=bool), a)

    def assertAllFalse(self, a):
        self.assertAllEqual(np.zeros_like(_ndarray(a), dtype=bool), a)

    def assertNear(self, f1, f2, err, msg=None):
        """Asserts that two floats are within ``err`` of each other."""
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err,
                        f"{f1:f} != {f2:f} +/- {err:f}{'' if msg is None else ' (' + msg + ')'}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        """Asserts that two float lists are near, element by element."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertShapeEqual(self, input_a, input_b, msg=None):
        """Asserts that a NumPy array and a tensor have the same shape."""
        if not isinstance(input_a, (np.ndarray, np.generic)):
            raise TypeError(f"input_a must be a Numpy ndarray, Numpy scalar, or a Tensor.Instead received "
                            f"{type(input_a)}")
        self.assertAllEqual(np.shape(input_a), list(input_b.shape), msg=msg)

    def assertDTypeEqual(self, target, expected_dtype):
        """Asserts that ``target``'s elements have ``expected_dtype``."""
        self.assertEqual(_dtypes.as_dtype(_ndarray(target).dtype), _dtypes.as_dtype(expected_dtype))

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):
        """A context asserting its block raises ``exception_type`` whose message matches the
        regular expression (or for which the predicate holds)."""
        if callable(expected_err_re_or_predicate):
            return _PredicateRaises(self, exception_type, expected_err_re_or_predicate)
        return self.assertRaisesRegex(exception_type, expected_err_re_or_predicate)

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        """``assertRaisesWithPredicateMatch`` of ``tf.errors.OpError``."""
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)


class _PredicateRaises:
    def __init__(self, case, exception_type, predicate):
        self._case, self._type, self._predicate = case, exception_type, predicate

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            raise AssertionError(f"Exception of type {self._type} not raised")
        if not issubclass(exc_type, self._type) or not self._predicate(exc):
            raise AssertionError(f"Exception of type {exc_type}: {exc}") from exc
        return True


def main(argv=None):
    """Runs the tests of the ``__main__`` module (``tf.test.main``), as unittest.main does."""
    return unittest.main(argv=argv)


def compute_gradient(f, x, delta=None):
    """The theoretical (tape) and numeric (central differences) Jacobians of ``f`` at ``x``
    (``tf.test.compute_gradient``).

    Args:
        f: the function.
        x: a list or tuple of ``f``'s arguments (values convertible to tensors).
        delta: the perturbation of the central differences; 1/1024 by default, as TensorFlow's.

    Returns:
        Two tuples (theoretical, numeric) of one 2-d NumPy array per argument, each with
        ``f(x)``'s number of elements rows and the argument's number of elements columns.

    Raises:
        ValueError: ``x`` is not a list or tuple.

    Example:
        >>> import tapejax as tf
        >>> theoretical, numerical = tf.test.compute_gradient(lambda x: x * x, [1.0])
        >>> theoretical, numerical
        ((array([[2.]], dtype=float32),), (array([[2.]], dtype=float32),))
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError("`x` must be a list or tuple of values convertible to a Tensor (arguments to `f`), "
                         f"not a {type(x)}")
    delta = 1.0 / 1024 if delta is None else delta
    xs = [convert_to_tensor(v) for v in x]
    y = f(*xs)
    return tuple(zip(*[(_theoretical(f, xs, i, y), _numeric(f, xs, i, y, delta)) for i in range(len(xs))]))


def _theoretical(f, xs, param, y):
    with GradientTape() as tape:
        tape.watch(xs[param])
        out = f(*xs)
    jac = tape.jacobian(out, xs[param], unconnected_gradients="zero")
    return np.asarray(jac.numpy(), xs[param].dtype._np).reshape(int(np.prod(y.shape)), -1)


def _numeric(f, xs, param, y, delta):
    values = [v.numpy() for v in xs]
    x = np.array(values[param])
    flat = x.reshape(-1)
    scale = np.asarray(2 * delta, y.dtype._np)[()]
    jac = np.zeros((int(np.prod(y.shape)), flat.size), x.dtype)
    for col in range(flat.size):
        original = flat[col]
        sides = []
        for step in (delta, -delta):
            flat[col] = original + np.asarray(step, x.dtype)
            values[param] = x
            sides.append(np.asarray(f(*[convert_to_tensor(v) for v in values])))
        flat[col] = original
        jac[:, col] = ((sides[0] - sides[1]) / scale).ravel()
    return jac


def _plugin(*names):
    """Whether one of these modules (a JAX plugin) is installed, without importing it."""
    for name in names:
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except ModuleNotFoundError:   # its package (jax_plugins) is not installed
            pass
    return False


def is_built_with_cuda():
    """Whether JAX has its CUDA support installed (``tf.test.is_built_with_cuda``).

    Example:
        >>> import tapejax as tf
        >>> isinstance(tf.test.is_built_with_cuda(), bool)
        True
    """
    return _plugin("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_plugins.xla_cuda12", "jax_plugins.xla_cuda13")


def is_built_with_rocm():
    """Whether JAX has its ROCm support installed (``tf.test.is_built_with_rocm``).

    Example:
        >>> import tapejax as tf
        >>> isinstance(tf.test.is_built_with_rocm(), bool)
        True
    """
    return _plugin("jax_rocm60_plugin", "jax_rocm7_plugin", "jax_plugins.xla_rocm60", "jax_plugins.xla_rocm7")


def is_built_with_gpu_support():
    """Whether JAX can run on GPUs (CUDA or ROCm) (``tf.test.is_built_with_gpu_support``).

    Example:
        >>> import tapejax as tf
        >>> tf.test.is_built_with_gpu_support() == (tf.test.is_built_with_cuda() or tf.test.is_built_with_rocm())
        True
    """
    return is_built_with_cuda() or is_built_with_rocm()


def is_built_with_xla():
    """True: every tapejax program is compiled by XLA (``tf.test.is_built_with_xla``).

    Example:
        >>> import tapejax as tf
        >>> tf.test.is_built_with_xla()
        True
    """
    return True


# TensorFlow's CPU target names, by LLVM backend. jaxlib's XLA links the host's backend only.
_CPU_TARGETS = {"x86": ("x86", "x86-64", "x86_64", "amd64"), "aarch64": ("aarch64", "arm64", "arm"),
                "ppc": ("ppc64", "ppc64le"), "systemz": ("s390x",)}


def _target_family(name):
    return next((family for family, names in _CPU_TARGETS.items() if name in names), None)


def is_cpu_target_available(target):
    """Whether XLA here compiles for the CPU ``target`` ('x86', 'aarch64', 'ppc64le', 's390x'...):
    jaxlib's compiler has the host's LLVM backend (``tf.test.is_cpu_target_available``).

    Raises:
        AssertionError: TensorFlow's, for a target name it does not know.

    Example:
        >>> import platform, tapejax as tf
        >>> tf.test.is_cpu_target_available('x86') == (platform.machine().lower() in ('x86_64', 'amd64'))
        True
    """
    family = _target_family(target)
    if family is None:
        raise AssertionError(f"Unknown CPU target: {target}")
    return family == _target_family(platform.machine().lower())


def gpu_device_name():
    """The name of the first GPU ('/device:GPU:0'), or '' where there is none
    (``tf.test.gpu_device_name``).

    Example:
        >>> import tapejax as tf
        >>> tf.test.gpu_device_name() in ('', '/device:GPU:0')
        True
    """
    for typ, index, _ in _devices.local_devices():
        if typ == "GPU":
            return f"/device:GPU:{index}"
    return ""


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether JAX sees a GPU (``tf.test.is_gpu_available``, deprecated in TensorFlow for
    ``tf.config.list_physical_devices('GPU')``); with ``min_cuda_compute_capability`` (major,
    minor), one of at least that CUDA compute capability.

    Example:
        >>> import tapejax as tf
        >>> tf.test.is_gpu_available() == bool(tf.config.list_physical_devices('GPU'))
        True
    """
    _deprecated_call("is_gpu_available", "Use `tf.config.list_physical_devices('GPU')` instead.")
    gpus = [d for typ, _, d in _devices.local_devices() if typ == "GPU"]
    if min_cuda_compute_capability is None:
        return bool(gpus)
    want = tuple(min_cuda_compute_capability)
    return any(_capability(d) >= want for d in gpus)


def _capability(device):
    cc = getattr(device, "compute_capability", None)
    if cc is None:
        return (0, 0)
    return tuple(int(p) for p in str(cc).split(".")[:2])


_WARNED = set()


def _deprecated_call(name, instructions):
    """TensorFlow's deprecation warning, once, naming the caller's line."""
    if name in _WARNED:
        return
    _WARNED.add(name)
    caller = inspect.stack()[2]
    _logs.warning("From %s:%d: %s (from tensorflow.python.framework.test_util) is deprecated and will be removed "
                  "in a future version.\nInstructions for updating:\n%s", caller.filename, caller.lineno, name,
                  instructions)


def _sync_devices():
    """Blocks until every device has finished the work given to it (``tf.test.experimental.sync_devices``):
    the pending program of lazy execution runs, and every live array is ready.

    Example:
        >>> import tapejax as tf
        >>> y = tf.linalg.matmul(tf.ones([64, 64]), tf.ones([64, 64]))
        >>> tf.test.experimental.sync_devices()
    """
    _lazy.run_pending()
    jax.effects_barrier()
    for a in jax.live_arrays():
        a.block_until_ready()


class experimental:
    """``tf.test.experimental``."""

    sync_devices = staticmethod(_sync_devices)


_sync_devices.__name__ = _sync_devices.__qualname__ = "sync_devices"

__all__ = ["TestCase", "main", "compute_gradient", "is_built_with_cuda", "is_built_with_rocm",
           "is_built_with_gpu_support", "is_built_with_xla", "is_cpu_target_available", "gpu_device_name",
           "is_gpu_available", "experimental"]
