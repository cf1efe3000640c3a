"""New shapes run on the host.

XLA compiles a program per input shape: 15-40 ms for each small op on a CPU, so an eager
step at a new batch size spent ~300 ms compiling. An op at input shapes it has not met
before (``_COMPILE_AT`` times) is traced and run by NumPy (``host_eval``, about a
millisecond), and compiled when those shapes come back: a training loop at one shape
compiles on its second step and runs compiled from then on, while shapes met once
(variable-length batches, the short last batch) compile nothing. Ops the host evaluator
does not cover, and inputs that are not concrete arrays on the CPU (tracers, other
devices), are compiled as before. A backward pass at a tape fingerprint met for the first
time runs on the host the same way (``backward.run_backward``).
"""
import collections
import functools

import jax
import jax.extend.core
import numpy as np

from . import host_eval, state as _state

run_new_shapes_on_host = True   # off: every op compiles at once (deterministic to the last bit)
NOT_RUN = object()
_COMPILE_AT = 1          # times an op's input shapes are met on the host before compiling
_ARRAY = _state.ARRAY
_SCALARS = (float, int, bool)
_SEEN_LIMIT = 4096       # input shapes remembered per op
host_runs = [0]          # ops run on the host (for tests)

# The programs of the ops last run on the host, by (op, abstract inputs, static arguments):
# a backward pass traced for the host differentiates them (differentiable) instead of
# tracing each op again.
_host_programs = collections.OrderedDict()
_MAX_HOST_PROGRAMS = 256
_MAX_HOST_EQNS = 10000


def call(op, jfn, vals, static):
    """``op``'s jitted function on ``vals``, on the host the first time it meets their shapes."""
    if op._seen is not None and run_new_shapes_on_host and not _state._local.tracing:
        out = _first_on_host(op, vals, static)
        if out is not NOT_RUN:
            return out
    return jfn(*vals, **static)


def _first_on_host(op, vals, static):
    """``op`` on the host if it has not met these input shapes before, else ``NOT_RUN``.
    Written for speed: it runs for every eager op."""
    sig = []
    for v in vals:
        t = type(v)
        if t is _ARRAY:
            sig.append(v.aval)
        elif t in _SCALARS:
            sig.append(t)
        else:           # a tracer (tf.function, jax transformations), a NumPy array
            return NOT_RUN
    seen = op._seen
    try:
        key = (tuple(sig), tuple(static.items())) if static else tuple(sig)
        n = seen.get(key, 0)
    except TypeError:   # an unhashable static argument: the compiled call explains it
        return NOT_RUN
    if n >= _COMPILE_AT:
        return NOT_RUN
    if len(seen) >= _SEEN_LIMIT:
        seen.clear()
    seen[key] = n + 1
    device = None       # where the outputs go: the inputs' device when they are committed
    for v in vals:
        if type(v) is _ARRAY and v.committed:
            devices = v.devices()
            if len(devices) != 1 or (device is not None and devices != {device}):
                return NOT_RUN
            device, = devices
    if (jax.default_backend() if device is None else device.platform) != "cpu":
        return NOT_RUN
    return _run_on_host(op, vals, static, device)


def _run_on_host(op, vals, static, device):
    _state._local.host_tracing = True
    try:
        closed, tree = _trace(op, vals, static)
    except Exception:   # bad arguments: the compiled call raises the op's own error
        return NOT_RUN
    finally:
        _state._local.host_tracing = False
    if any(a.weak_type for a in closed.out_avals) or len(closed.jaxpr.eqns) > _MAX_HOST_EQNS:
        return NOT_RUN     # a weakly typed result (all inputs Python scalars); a long loop
    try:
        flat = host_eval.evaluate(closed, [np.asarray(v) for v in jax.tree_util.tree_leaves(vals)])
    except Exception:   # host_eval.Unsupported; values NumPy cannot hold (PRNG keys): compiled
        return NOT_RUN
    _host_programs[_program_key(op, vals, static)] = closed, tree
    if len(_host_programs) > _MAX_HOST_PROGRAMS:
        _host_programs.popitem(last=False)
    host_runs[0] += 1
    return jax.tree_util.tree_unflatten(tree, jax.device_put(flat, device))


def _trace(op, vals, static):
    """The program (jaxpr) of ``op`` on ``vals``, and its output structure, traced with the
    jitted functions inside it (most of ``jax.numpy``) inlined: JAX caches a trace of each
    jitted function per shapes for as long as the function lives (``jnp.matmul``: for ever),
    ~20 kB each, too much for shapes met once; and a nested jit is slower to differentiate.
    ``lax.scan`` and other loops of a static length are unrolled (``jax.disable_jit``); a
    loop with a traced condition stays one ``while`` (which the host does not run)."""
    with jax.disable_jit():
        closed, shapes = jax.make_jaxpr(functools.partial(op.fn, **static), return_shape=True)(*vals)
    return closed, jax.tree_util.tree_structure(shapes)


def _program_key(op, vals, static):
    return (op, tuple([(a.shape, a.dtype, a.weak_type) for a in map(jax.typeof, vals)]),
            tuple(sorted(static.items())) if static else ())


def differentiable(op, inputs, kw):
    """``op.fn`` with its static arguments. While a backward pass is traced to run on the
    host, it is the program the forward pass traced (``_trace``: nested jits inlined, which
    JAX differentiates several times faster than a nested jit), not traced again."""
    if not _state._local.host_tracing or op._seen is None:
        return lambda *a: op.fn(*a, **kw)
    program = _host_programs.get(_program_key(op, inputs, kw))
    closed, tree = _trace(op, inputs, kw) if program is None else program
    run = jax.extend.core.jaxpr_as_fun(closed)
    return lambda *a: jax.tree_util.tree_unflatten(tree, run(*jax.tree_util.tree_leaves(a)))
