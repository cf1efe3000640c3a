"""tf.py_function and tf.numpy_function: arbitrary Python inside a compiled step.

Eagerly (and under ``tf.config.run_functions_eagerly(True)``) the Python function is
simply called: ``py_function`` gives it Tensors, so a GradientTape outside records its ops
and differentiates it like any code; ``numpy_function`` gives it NumPy arrays.

Inside a ``tf.function`` the call becomes a JAX host callback that runs the Python function
every time the compiled program runs: ``jax.experimental.io_callback(ordered=True)`` for
``py_function`` and ``numpy_function(stateful=True)`` (side effects happen on every call, in
program order), ``jax.pure_callback`` for ``numpy_function(stateful=False)``.

Output shapes. A callback's output shapes must be known when the program is compiled,
where TensorFlow leaves them unknown. They come from ``Tout`` when it holds
``tf.TensorSpec``\\ s with full shapes. Otherwise the function is run once while the
``tf.function`` is traced, with printing muted, to learn them: ``py_function`` abstractly
(its Tensors hold JAX tracers, nothing is computed) and, if it needs concrete values,
on zeros of the input shapes; ``numpy_function`` on zeros. Side effects other than printing
(appending to a list, a counter) do happen in that run, once per trace. JAX checks every
result against the learned shapes when the program runs, so a function whose output shape
depends on its input values raises instead of returning a wrong result: give it
``Tout=tf.TensorSpec(shape, dtype)``.

Gradients inside ``tf.function``: ``py_function`` is differentiable; the backward pass runs
``func`` again eagerly under a GradientTape (a host callback), so its side effects happen
again when a gradient is taken (twice for a function with several outputs, whose forward
the backward pass re-runs too).
"""
import contextlib
import functools
import io
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from .._core import checks as _checks, dtypes as _dtypes, state as _state
from .._core.state import pause_recording
from .._core.tensor import Tensor, _TensorBase, is_tracer, to_array
from ..extend import defop
from .._core.tape import GradientTape

_NO_SHAPES = (
    "tf.{name} inside a tf.function: the output shapes of {func!r} could not be learned by running it "
    "on placeholder inputs ({err}). JAX compiles the callback with static output shapes, so give them: "
    "Tout=tf.TensorSpec(shape, dtype) (or a list of TensorSpecs).")


class _Refused(RuntimeError):
    """Raised by a Python function op met while :func:`calls_run_eagerly` is active."""


_refusing = threading.local()


@contextlib.contextmanager
def calls_run_eagerly():
    """While active, a ``py_function`` / ``numpy_function`` met by a trace raises instead of
    running its Python function on placeholders to learn its output shapes: a dataset ``map``
    whose function calls one then runs eagerly, so the Python function runs once per element,
    as in TensorFlow (a random rotation's ``np.random`` draws are TF's)."""
    before, _refusing.on = getattr(_refusing, "on", False), True
    try:
        yield
    finally:
        _refusing.on = before


_graph = threading.local()


@contextlib.contextmanager
def graph_function_args():
    """While active (a dataset function run per element, which TF runs as a graph), a
    ``numpy_function`` gets its scalar arguments as TF's graph kernel gives them: a NumPy scalar,
    ``bytes`` for a string (eagerly TF gives 0-d arrays)."""
    before, _graph.on = getattr(_graph, "on", False), True
    try:
        yield
    finally:
        _graph.on = before


def _numpy_arg(a, graph):
    a = np.asarray(a)
    return a[()] if graph and a.ndim == 0 else a


def _refuse_if_asked(name):
    if getattr(_refusing, "on", False):
        raise _Refused(f"tf.{name} in a traced dataset map: run eagerly")


def _check_args(name, func, inp, Tout, make):
    if Tout is None:
        raise TypeError(f"Missing required argument: 'Tout'\n  If using tf.{name} as a decorator, set `Tout`\n"
                        f"  **by name** above the function:\n  `@tf.{name}(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TypeError(f"Don't set the `inp` argument when using tf.{name} as a decorator (`func=None`).")

        def decorator(fun):
            @functools.wraps(fun)
            def wrapper(*args):
                return make(fun, list(args))
            return wrapper
        return decorator
    if inp is None:
        raise TypeError(f"Missing argument `inp`:\n  You must set the `inp` argument (the list of arguments to "
                        f"the\n  function), unless you use `tf.{name}` as a decorator (`func=None`).")
    return None


def _out_specs(Tout):
    """(single, [(dtype, shape or None)]) from a dtype, a TensorSpec, or a list of them."""
    single = not isinstance(Tout, (list, tuple))
    specs = []
    for t in ([Tout] if single else Tout):
        if hasattr(t, "shape") and hasattr(t, "dtype") and not isinstance(t, (_dtypes.DType, type)):
            shape = t.shape
            full = shape is not None and None not in shape
            specs.append((_dtypes.as_dtype(t.dtype), tuple(shape) if full else None))
        else:
            specs.append((_dtypes.as_dtype(t), None))
    return single, specs


def _convert_outputs(ret, single, specs, name):
    """The function's results as arrays of the dtypes in ``Tout`` (TF's conversion: a Tensor must
    have the dtype; other data converts when no value is lost)."""
    if ret is None:
        if specs:
            raise ValueError(f"tf.{name}: the function returned None but Tout lists outputs; return them, "
                             "or set Tout=[].")
        return []
    if single or not isinstance(ret, (list, tuple)):
        ret = [ret]
    if len(ret) != len(specs):
        raise ValueError(f"tf.{name}: the function returned {len(ret)} values, but Tout lists {len(specs)}.")
    out = []
    for r, (dt, _) in zip(ret, specs):
        if hasattr(r, "assign") and isinstance(r, _TensorBase):
            raise RuntimeError("Attempting to return a variable from an eagerly executed py_func. Only numeric "
                               "data structures like Tensors or NumPy arrays should be returned; return "
                               f"`variable.read_value()` instead: {r}")
        a = to_array(r)
        if a.dtype != dt._np:
            if isinstance(r, _TensorBase) or not np.can_cast(a.dtype, dt._np, casting="same_kind"):
                raise TypeError(f"tf.{name}: the function returned a value of dtype {_dtypes.as_dtype(a.dtype).name}"
                                f" where Tout says {dt.name}. Cast it in the function or change Tout.")
            a = a.astype(dt._np)
        out.append(a)
    return out


def _result(tensors, single):
    if single:
        return tensors[0]
    return list(tensors)


@contextlib.contextmanager
def _muted():
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def _staged(values):
    return _state.tracing() or any(is_tracer(v) for v in values)


# ---------------------------------------------------------------- py_function
def py_function(func=None, inp=None, Tout=None, name=None):
    """Runs the Python function ``func`` eagerly on Tensors, also inside a ``tf.function``.

    Args:
        func: a Python callable taking Tensors (one per element of ``inp``) and returning
            Tensors, arrays or numbers. ``None`` makes a decorator: ``@tf.py_function(Tout=...)``.
        inp: the list of inputs.
        Tout: the output dtype (one output), a list of dtypes (a list of outputs, ``[]`` for
            none), or ``tf.TensorSpec``\\ s, which also fix the shapes inside ``tf.function``.
        name: unused.

    Returns:
        A Tensor, or a list of Tensors when ``Tout`` is a list.

    Example:
        >>> import tapejax as tf
        >>> def log_huber(x, m):
        ...     if tf.abs(x) <= m:
        ...         return x**2
        ...     else:
        ...         return m**2 * (1 - 2 * tf.math.log(m) + tf.math.log(x**2))
        >>> print(tf.py_function(func=log_huber, inp=[tf.constant(1.0), tf.constant(2.0)], Tout=tf.float32).numpy())
        1.0
        >>> @tf.function
        ... def f(x):
        ...     return tf.py_function(log_huber, [x, tf.constant(2.0)], Tout=tf.float32)
        >>> print(f(tf.constant(3.0)).numpy())
        7.243721
    """
    deco = _check_args("py_function", func, inp, Tout, lambda f, a: py_function(f, a, Tout, name))
    if deco is not None:
        return deco
    single, specs = _out_specs(Tout)
    ins = [x if isinstance(x, _TensorBase) else Tensor(to_array(x)) for x in inp]
    # In a dataset map being traced even a call on no traced inputs must not run now (once):
    # the map runs eagerly instead, the function once per element.
    _refuse_if_asked("py_function")
    if not _staged([x._value for x in ins]):
        return _eager_py(func, ins, single, specs)
    shapes = _learn_shapes(func, ins, single, specs, "py_function", numpy=False)
    op = _callback_op(func, single, tuple(specs), tuple(shapes), len(ins))
    with _checks.staged(may_fail=True):
        out = op(*ins)
    if not shapes:
        return []
    return _result(out if isinstance(out, tuple) else (out,), single)


def _eager_py(func, ins, single, specs):
    ret = func(*ins)
    if ret is None and not specs:
        return []
    rets = [ret] if single else list(ret)
    tensors = []
    for r, a in zip(rets, _convert_outputs(ret, single, specs, "py_function")):
        # A Tensor of the right dtype is kept as is, so a tape outside sees its history.
        tensors.append(r if type(r) is Tensor and r._value.dtype == a.dtype else Tensor(a))
    return _result(tensors, single)


def _learn_shapes(func, ins, single, specs, name, numpy):
    if all(shape is not None for _, shape in specs):
        return [jax.ShapeDtypeStruct(shape, dt._np) for dt, shape in specs]

    def run(args, as_tensors):
        # Concrete placeholders compute now, not as part of the program being traced.
        with _muted(), pause_recording(), jax.ensure_compile_time_eval():
            ret = func(*([Tensor(jnp.asarray(a)) for a in args] if as_tensors else args))
        return _convert_outputs(ret, single, specs, name)

    errors = []
    if not numpy:
        try:
            outs = jax.eval_shape(lambda *a: run(a, True),
                                  *[jax.ShapeDtypeStruct(x.shape, x._value.dtype) for x in ins])
            return [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs]
        except Exception as e:  # noqa: BLE001 -- any failure means: try concrete placeholders
            errors.append(f"{type(e).__name__}: {e}")
    try:
        zeros = [np.zeros(x.shape, x._value.dtype) for x in ins]
        zeros = [_numpy_arg(z, True) for z in zeros] if numpy else zeros
        outs = run(zeros, not numpy)
    except Exception as e:  # noqa: BLE001
        errors.append(f"{type(e).__name__}: {e}")
        raise ValueError(_NO_SHAPES.format(name=name, func=func, err="; ".join(errors))) from e
    return [jax.ShapeDtypeStruct(np.shape(o), _dtypes.np_dtype(specs[k][0])) for k, o in enumerate(outs)]


def _host_py(func, single, specs):
    """The host side of a staged py_function: Tensors in, arrays of the declared dtypes out."""
    def host(*arrays):
        ret = func(*[Tensor(jnp.asarray(a)) for a in arrays])
        return tuple(np.asarray(a) for a in _convert_outputs(ret, single, specs, "py_function"))
    return host


def _host_grad(func, n_in):
    """The backward of a staged py_function: runs ``func`` again under a tape (TF's EagerPyFunc grad)."""

    def host(*arrays):
        xs = [Tensor(jnp.asarray(a)) for a in arrays[:n_in]]
        cts = [Tensor(jnp.asarray(c)) for c in arrays[n_in:]]
        with GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            ret = func(*xs)
        outs = list(ret) if isinstance(ret, (list, tuple)) else [ret]
        outs = [o if isinstance(o, _TensorBase) else Tensor(to_array(o)) for o in outs]
        pairs = [(o, c) for o, c in zip(outs, cts) if o.dtype.is_floating]
        gs = tape.gradient([o for o, _ in pairs], xs, output_gradients=[c for _, c in pairs])
        return tuple(np.zeros(x.shape, x._value.dtype) if g is None else np.asarray(g).astype(x._value.dtype)
                     for g, x in zip(gs, xs))
    return host


def _callback_op(func, single, specs, shapes, n_in):
    """A tape op running ``func`` as an ordered io_callback; its VJP is a host callback too.

    Made per traced call (never cached): the op holds ``func``, which may be a fresh lambda."""
    host = _host_py(func, single, specs)
    grad_host = _host_grad(func, n_in)

    def fwd(*xs):
        out = io_callback(host, tuple(shapes), *xs, ordered=True)
        return out[0] if len(out) == 1 else tuple(out)

    def vjp(ans, *xs):
        def pull(g):
            gs = g if isinstance(g, (tuple, list)) else (g,)
            # Integer outputs get float0 cotangents, which a callback cannot take: zeros stand in.
            gs = [jnp.zeros(c.shape, jnp.float32) if c.dtype == jax.dtypes.float0 else c for c in gs]
            in_shapes = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in xs)
            return jax.pure_callback(grad_host, in_shapes, *xs, *gs)
        return pull

    # Not jitted on its own: an ordered callback belongs to the program being traced.
    return defop(fwd, vjp=vjp, name="py_function", jit=False)


# ---------------------------------------------------------------- numpy_function
def _flat(x):
    """``x``'s leaves as TensorFlow's ``nest.flatten`` lists them (dict values by sorted key)."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flat(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _flat(e)]
    return [x]


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """Runs ``func`` on NumPy arrays, also inside a ``tf.function`` (``tf.numpy_function``).

    Not differentiable (TensorFlow gives ``None`` gradients too).

    Args:
        func: a Python callable taking NumPy arrays and returning NumPy arrays or numbers.
            ``None`` makes a decorator: ``@tf.numpy_function(Tout=...)``.
        inp: the list of inputs.
        Tout: the output dtype, a list of dtypes, or ``tf.TensorSpec``\\ s (see the module notes).
        stateful: ``True`` (default) runs it on every call of a compiled function, in order;
            ``False`` lets the compiler skip or merge calls whose results are unused or equal.
        name: unused.

    Returns:
        A Tensor, or a list of Tensors when ``Tout`` is a list.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> def my_numpy_func(x):
        ...     return np.sinh(x)
        >>> @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
        ... def tf_function(input):
        ...     y = tf.numpy_function(my_numpy_func, [input], tf.float32)
        ...     return y * y
        >>> tf_function(tf.constant(1.))
        <tf.Tensor: shape=(), dtype=float32, numpy=1.3810978>
    """
    deco = _check_args("numpy_function", func, inp, Tout,
                       lambda f, a: numpy_function(f, a, Tout, stateful, name))
    if deco is not None:
        return deco
    single, specs = _out_specs(Tout)
    vals = [x._value if isinstance(x, _TensorBase) else to_array(x) for x in inp]
    _refuse_if_asked("numpy_function")
    if not _staged(vals):
        if getattr(_graph, "on", False):   # a dataset function run eagerly: TF's graph op
            ret = func(*[_numpy_arg(v, True) for v in vals])
            if ret is None and not specs:
                return []
            return _result([Tensor(a if a.dtype == object else jnp.asarray(a))   # (strings stay NumPy)
                            for a in _convert_outputs(ret, single, specs, "numpy_function")],
                           single)
        # TensorFlow's eager numpy_function: the inputs as np.array gives them (a Python float is
        # float64), the results converted as they come (Tout is not applied), one result unwrapped.
        outs = [r if r is None else Tensor(to_array(r)) for r in _flat(func(*[np.array(x) for x in inp]))]
        return outs[0] if len(outs) == 1 else outs
    ins = [Tensor(v) for v in vals]
    shapes = tuple(_learn_shapes(func, ins, single, specs, "numpy_function", numpy=True))

    def host(*arrays):   # a traced function's: TF's graph kernel gives scalars as NumPy scalars
        ret = func(*[_numpy_arg(a, True) for a in arrays])
        return tuple(np.asarray(a) for a in _convert_outputs(ret, single, specs, "numpy_function"))

    with _checks.staged(may_fail=True):
        if stateful:
            out = io_callback(host, shapes, *[jax.lax.stop_gradient(v) for v in vals], ordered=True)
        else:
            out = jax.pure_callback(host, shapes, *[jax.lax.stop_gradient(v) for v in vals])
    return _result([Tensor(o) for o in out], single) if specs else []
