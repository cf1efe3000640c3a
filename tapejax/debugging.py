"""tf.debugging: assertions that raise tf.errors.InvalidArgumentError, eagerly and inside tf.function.

Eagerly an assertion checks its values at once, with TensorFlow's eager message. Inside a
``tf.function`` the check is staged into the compiled program as a host callback that runs
when the program runs, and the call raises ``InvalidArgumentError`` with TensorFlow's
``assertion failed: [...]`` message.

Example:
    >>> import tapejax as tf
    >>> tf.debugging.assert_equal(tf.constant([1, 2]).shape, (2,))
    >>> @tf.function
    ... def safe_sqrt(x):
    ...     tf.debugging.assert_non_negative(x)
    ...     return tf.sqrt(x)
    >>> safe_sqrt(tf.constant(-1.0))
    Traceback (most recent call last):
    ...
    tapejax.errors.InvalidArgumentError: assertion failed: [] [Condition x >= 0 did not hold element-wise:] [x = ] [-1]
"""
import logging

import jax
import jax.numpy as jnp
import numpy as np

from . import errors as errors
from ._core.checks import quiet
from ._core import graph_options as _graph_options
from ._core.tensor import _TensorBase, is_tracer as _is_tracer, to_array
from .ops import convert_to_tensor
from ._core.checks import program_errors as _raised, staged
from .ops import abs as _abs, less_equal
from .math import reduce_all



class _QuietFailedAssertions(logging.Filter):
    """JAX logs every exception a host callback raises; a failed assertion is raised to the
    caller instead, so its log record is dropped."""

    def filter(self, record):
        return not (record.exc_info and isinstance(record.exc_info[1], errors.InvalidArgumentError))


logging.getLogger("jax._src.callback").addFilter(_QuietFailedAssertions())


# ---------------------------------------------------------------------------
# Formatting, as TensorFlow's eager messages and its Assert kernel
# ---------------------------------------------------------------------------

def _elements(a, summarize):
    flat = np.asarray(a).reshape(-1)
    items = [repr(x) if isinstance(x, bytes) else str(x) for x in flat[:summarize]]
    return items + ["..."] * (len(items) < flat.size)


def _pretty(item, summarize):
    """An item of an eager assertion's data: strings as given, tensors as a list of elements."""
    if isinstance(item, _TensorBase):
        a = item.numpy()
        return str(a) if np.ndim(a) == 0 else str(_elements(a, summarize))
    return str(item)


def _kernel_number(v):
    # TensorFlow's kernel prints the shortest form that reads back: 1 not 1.0, 0.1 not 0.100000001.
    if isinstance(v, (float, np.floating)):
        short = f"{v:.6g}"
        return short if type(v)(short) == v else f"{v:.9g}"
    return repr(v) if isinstance(v, bytes) else str(v)


def _kernel(item, summarize):
    """An item of ``assertion failed: [...]``, as TensorFlow's Tensor::SummarizeValue prints it."""
    if isinstance(item, str):
        return item
    a = np.asarray(item)
    flat = a.reshape(-1)
    if a.ndim == 0:
        return _kernel_number(flat[0])
    if a.ndim > 1 and a.size <= summarize:
        return "".join("[" + _kernel(row, summarize) + "]" for row in a)
    return " ".join(_kernel_number(v) for v in flat[:summarize]) + ("..." if flat.size > summarize else "")


def _describe(x):
    return f"shape={x.shape} dtype={x.dtype.name}"


def _summarize(summarize):
    return 3 if summarize is None else (10 ** 9 if summarize < 0 else summarize)


def _tensor(x):
    return x if isinstance(x, _TensorBase) else convert_to_tensor(x)


# ---------------------------------------------------------------------------
# The check: now, or when the compiled program runs
# ---------------------------------------------------------------------------

def _stage(ok, items, summarize):
    """Stages ``if not all(ok): raise InvalidArgumentError(...)`` into the program being traced.
    ``items`` are strings and arrays printed as TensorFlow's Assert kernel prints them."""
    if quiet():   # the body re-run only to differentiate it: checked on the forward run
        return
    if _graph_options.strips_debug_ops():   # Grappler's debug_stripper: no Assert in TF's graph
        return
    parts = [(i, None) if isinstance(i, str) else (None, jax.lax.stop_gradient(to_array(i))) for i in items]

    def check(ok, *arrays):
        if not np.all(ok):
            it = iter(arrays)
            text = " ".join("[" + (s if s is not None else _kernel(next(it), summarize)) + "]" for s, _ in parts)
            _raised.append(errors.InvalidArgumentError(None, None, "assertion failed: " + text))
            raise _raised[-1]

    from jax.experimental import io_callback
    with staged(may_fail=True):
        io_callback(check, None, jnp.all(to_array(ok)), *[a for _, a in parts if a is not None], ordered=True)


def _symbolic(*xs):
    return any(_is_tracer(to_array(x)) for x in xs)


def _binary(sym, cmp, opname, example="tf.constant([1, 2]), tf.constant([1, 3])"):
    def assertion(x, y, message=None, summarize=None, name=None):
        x, y = _tensor(x), _tensor(y)
        n = _summarize(summarize)
        if _symbolic(x, y):
            items = ([message] if message is not None else []) + [
                f"Condition x {sym} y did not hold element-wise:", "x = ", x, "y = ", y]
            _stage(getattr(jnp, cmp.__name__)(to_array(x), to_array(y)), items, n)
            return None
        a, b = np.asarray(x.numpy()), np.asarray(y.numpy())
        try:
            ok = cmp(a, b)
        except ValueError:   # shapes that do not broadcast
            raise errors.InvalidArgumentError(
                None, None, f"Incompatible shapes: {list(a.shape)} vs. {list(b.shape)}") from None
        if np.all(ok):
            return None
        data = [f"Condition x {sym} y did not hold."]
        if n > 0:
            if a.shape == b.shape and a.ndim:
                bad = ~np.asarray(ok)
                k = min(n, int(bad.sum()))
                data += [f"Indices of first {k} different values:", np.argwhere(bad)[:k],
                         "Corresponding x values:", a[bad].reshape(-1)[:k],
                         "Corresponding y values:", b[bad].reshape(-1)[:k]]
            fa, fb = a.reshape(-1), b.reshape(-1)
            data += [f"First {min(fa.size, n)} elements of x:", fa[:n],
                     f"First {min(fb.size, n)} elements of y:", fb[:n]]
        if message is not None:
            data = [message] + data
        raise errors.InvalidArgumentError(None, None, "\n".join(_pretty(d, n) for d in data))
    assertion.__name__ = opname
    assertion.__doc__ = f"""Asserts ``x {sym} y`` element-wise (broadcast), as ``tf.debugging.{opname}``.

    Args:
        x, y: tensors (or values) to compare.
        message: a prefix for the error message.
        summarize: how many elements of each tensor the message shows (3; -1 for all).

    Raises:
        tf.errors.InvalidArgumentError: the condition does not hold (inside a ``tf.function``,
            when the function is called).

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.{opname}({example})
        Traceback (most recent call last):
        ...
        tapejax.errors.InvalidArgumentError: Condition x {sym} y did not hold...
    """
    return assertion


assert_equal = _binary("==", np.equal, "assert_equal")
assert_none_equal = _binary("!=", np.not_equal, "assert_none_equal")
assert_less = _binary("<", np.less, "assert_less")
assert_less_equal = _binary("<=", np.less_equal, "assert_less_equal", "tf.constant([1, 4]), tf.constant([1, 3])")
assert_greater = _binary(">", np.greater, "assert_greater")
assert_greater_equal = _binary(">=", np.greater_equal, "assert_greater_equal")


def _unary(sym, cmp, opname):
    def assertion(x, message=None, summarize=None, name=None):
        x = _tensor(x)
        prefix = f"{message}.  " if message else ""
        n = _summarize(summarize)
        if _symbolic(x):
            _stage(getattr(jnp, cmp.__name__)(to_array(x), 0), [prefix, f"Condition x {sym} 0 did not hold element-wise:", "x = ", x], n)
            return None
        if not np.all(cmp(np.asarray(x.numpy()), 0)):
            data = [prefix, f"Condition x {sym} 0 did not hold element-wise:", f"x ({_describe(x)}) = ", x]
            raise errors.InvalidArgumentError(None, None, "\n".join(_pretty(d, n) for d in data))
        return None
    assertion.__name__ = opname
    assertion.__doc__ = f"""Asserts ``x {sym} 0`` element-wise, as ``tf.debugging.{opname}``.

    Raises:
        tf.errors.InvalidArgumentError: some element fails (inside a ``tf.function``, when the
            function is called).

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.{opname}(tf.constant([0.0, 2.0, -1.0]))
        Traceback (most recent call last):
        ...
        tapejax.errors.InvalidArgumentError: ...Condition x {sym} 0 did not hold element-wise:...
    """
    return assertion


assert_non_negative = _unary(">=", np.greater_equal, "assert_non_negative")
assert_positive = _unary(">", np.greater, "assert_positive")
assert_non_positive = _unary("<=", np.less_equal, "assert_non_positive")
assert_negative = _unary("<", np.less, "assert_negative")


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 (TensorFlow's name)
    """Raises ``InvalidArgumentError`` showing ``data`` when ``condition`` is false.

    Args:
        condition: a boolean scalar (Tensor or Python bool).
        data: tensors and strings to show in the message.
        summarize: how many elements of each tensor to show (3).

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.Assert(False, [tf.constant([1.0, -1.0])])
        Traceback (most recent call last):
        ...
        tapejax.errors.InvalidArgumentError: Expected 'False' to be true. Summarized data: 1.0, -1.0
    """
    n = _summarize(summarize)
    data = [d if isinstance(d, str) else _tensor(d) for d in data]
    if _symbolic(condition, *[d for d in data if not isinstance(d, str)]):
        _stage(condition, data, n)
        return None
    if not bool(np.asarray(to_array(condition))):
        shown = [repr(d.encode()) if isinstance(d, str) else
                 (", ".join(_elements(d.numpy(), n)) if d.shape.rank else str(d.numpy())) for d in data]
        raise errors.InvalidArgumentError(
            None, None, f"Expected '{condition!s}' to be true. Summarized data: " + "\n".join(shown))
    return None


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Asserts ``|x - y| <= atol + rtol * |y|`` element-wise (default tolerances: 10 epsilon of the dtype).

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))
    """
    x, y = _tensor(x), _tensor(y)
    eps = 10 * np.finfo(x.dtype.as_numpy_dtype).eps if x.dtype.is_floating else 0
    rtol = _tensor(np.asarray(eps if rtol is None else rtol, x.dtype.as_numpy_dtype))
    atol = _tensor(np.asarray(eps if atol is None else atol, x.dtype.as_numpy_dtype))
    ok = reduce_all(less_equal(_abs(x - y), atol + rtol * _abs(y)))
    Assert(ok, [message or "", f"x and y not equal to tolerance rtol = {rtol!s}, atol = {atol!s}",
                f"x ({_describe(x)}) = ", x, f"y ({_describe(y)}) = ", y], summarize=summarize)


def assert_rank(x, rank, message=None, name=None):
    """Asserts that ``x`` has rank ``rank`` (known from its shape, so checked at once).

    Raises:
        ValueError: another rank, with TensorFlow's message.

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.assert_rank(tf.zeros([2, 3]), 2)
    """
    actual = len(np.shape(to_array(x)))
    if actual != int(rank):
        prefix = f"{message}.  " if message else ""
        raise ValueError(f"{prefix}Tensor  must have rank {int(rank)}.  Received rank {actual}, "
                         f"shape {tuple(np.shape(to_array(x)))}")


def assert_all_finite(t, message, name=None, x=None):
    """Returns ``t`` after checking it has no NaN or Inf (inside a ``tf.function``, when it runs).

    Raises:
        tf.errors.InvalidArgumentError: ``message : Tensor had NaN values`` (or ``Inf``, or ``Inf and NaN``).

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.check_numerics(tf.constant([1.0, float('nan')]), 'bad')
        Traceback (most recent call last):
        ...
        tapejax.errors.InvalidArgumentError: bad : Tensor had NaN values
    """
    t = _tensor(x if t is None else t)

    def check(v):
        nan, inf = bool(np.isnan(v).any()), bool(np.isinf(v).any())
        if nan or inf:
            what = "Inf and NaN" if nan and inf else ("NaN" if nan else "Inf")
            _raised.append(errors.InvalidArgumentError(None, None, f"{message} : Tensor had {what} values"))
            raise _raised[-1]

    if not t.dtype.is_floating:
        return t
    if _symbolic(t):
        if not quiet() and not _graph_options.strips_debug_ops():
            from jax.experimental import io_callback
            with staged(may_fail=True):
                io_callback(check, None, jax.lax.stop_gradient(to_array(t)), ordered=True)
        return t
    try:
        check(np.asarray(t.numpy()))
    except errors.InvalidArgumentError:
        _raised.clear()
        raise
    return t


def check_numerics(tensor, message, name=None):
    """``assert_all_finite``: returns ``tensor`` after checking it has no NaN or Inf."""
    return assert_all_finite(tensor, message)


def assert_type(tensor, tf_type, message=None, name=None):
    """Asserts ``tensor.dtype == tf_type``.

    Raises:
        TypeError: another dtype.

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.assert_type(tf.constant(1.0), tf.float32)
    """
    if tensor.dtype != tf_type:
        raise TypeError(f"{message or ''}{tensor.dtype.name} must be of type {tf_type!r}.")


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Asserts each ``(tensor, spec)`` pair's shape matches ``spec`` (ints must match, names
    must stay the same size across tensors, ``None`` matches anything).

    Raises:
        ValueError: a rank or a dimension does not match.

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.assert_shapes([(tf.zeros([2, 3]), ('N', 3)), (tf.zeros([2]), ('N',))])
    """
    sizes = {}
    prefix = f"{message}.  " if message else ""
    for x, spec in shapes:
        shape = tuple(np.shape(to_array(x)))
        if len(shape) != len(spec):
            raise ValueError(f"{prefix}Tensor  must have rank {len(spec)}.  Received rank {len(shape)}, "
                             f"shape {shape}")
        for i, (s, d) in enumerate(zip(spec, shape)):
            want = sizes.setdefault(s, d) if isinstance(s, str) else s
            if want is not None and want != d:
                raise ValueError(f"{prefix}Tensor dimension {i} must have size {want}.  Received size {d}, "
                                 f"shape {shape}")


_log_device_placement = [False]


def set_log_device_placement(enabled):
    """Turns logging of op placements on or off (``tf.debugging.set_log_device_placement``).

    TensorFlow then logs the device of each op it runs (``Executing op MatMul in device
    /job:localhost/replica:0/task:0/device:CPU:0``) and of each node of the graphs it places.
    Here JAX places every op on the device of its inputs (or the ``tf.device`` scope's), so the
    setting is recorded (:func:`get_log_device_placement`) and nothing is logged; a Tensor's
    ``device`` says where it is.

    Example:
        >>> import tapejax as tf
        >>> tf.debugging.set_log_device_placement(True)
        >>> tf.debugging.get_log_device_placement()
        True
        >>> tf.debugging.set_log_device_placement(False)
    """
    _log_device_placement[0] = bool(enabled)


def get_log_device_placement():
    """Whether :func:`set_log_device_placement` turned placement logging on."""
    return _log_device_placement[0]
