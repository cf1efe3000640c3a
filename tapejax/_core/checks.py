"""Checks a compiled program makes when it runs, and the errors they raise.

An error TensorFlow raises from a kernel at run time (an assertion, an out-of-range index) is
raised by a compiled tapejax program through a host callback staged into it: the callback
appends the TensorFlow error to ``program_errors`` and raises; the program's caller
(``tf.function``'s call, ``Dataset.map``) finds it there and raises it in place of JAX's
``JaxRuntimeError``. A program holding such a callback is noted ``may_fail``
(``state.note_may_fail``): its caller keeps the Variables' buffers (a failed run must not lose
them) and waits for its callbacks, so the error is raised at the call that failed.
"""
import contextlib
import threading

import jax
import jax.numpy as jnp

from . import state as _state

program_errors = []   # errors raised by the host callbacks of the program now running


class _Muted(threading.local):
    depth = 0   # > 0 while a traced body is re-run only to differentiate it


muted = _Muted()


def quiet():
    """Whether side effects (tf.print, checks) are muted: the body is re-run only to
    differentiate it, and they were staged by its forward run already."""
    return muted.depth > 0


def staged(may_fail=False):
    """Context in which a side effect is staged into the program being traced, even with
    constant arguments (traces run with eager constant folding, which would run it now).
    ``may_fail``: the staged host callback may raise (an assertion, user code): see
    ``state.note_may_fail``."""
    if may_fail:
        _state.note_may_fail()
    try:
        from jax._src import config as jax_config
        return jax_config.eager_constant_folding(False)
    except (ImportError, AttributeError):  # a JAX without it folds nothing eagerly
        return contextlib.nullcontext()


def reraise(error):
    """Raises the TensorFlow error a host callback raised while a compiled program ran (JAX
    reports it as the ``JaxRuntimeError`` ``error``), or ``error`` itself."""
    # The failed run's effect tokens would fail every later program with effects (and every
    # ``jax.effects_barrier``) on an accelerator: start the order of effects afresh.
    from jax._src import dispatch   # runtime_tokens: the order of effects (no public spelling)
    dispatch.runtime_tokens.clear()
    if not program_errors:
        raise error
    found = program_errors[0]
    program_errors.clear()
    raise found from None


def current_trace():
    """The JAX trace ops are staged into now (None with a JAX that does not say: every check
    then calls back)."""
    try:
        from jax._src import core
        return core.trace_ctx.trace
    except (ImportError, AttributeError):
        return None


def staging():
    """Whether ops are being staged into a JAX program now (a jit, ``eval_shape``, a ``vmap``, an op's
    trace), not run: a print then belongs to the program, to happen when it runs."""
    try:
        from jax._src import core
        return not isinstance(core.trace_ctx.trace, core.EvalTrace)
    except (ImportError, AttributeError):
        return False


def collecting(scope, trace):
    """Makes ``scope`` (a ``tf.function`` body's, traced as ``trace``) collect the checks staged
    at the top of its trace as outputs of the program: ``scope.flags``, a list of
    ``(bad, values, error, subject)``."""
    scope.flags, scope.trace = [], trace


def stage_error(bad, error, *values, subject=None):
    """Stages ``if bad: raise error(*values)`` into the program being traced: ``bad`` a traced
    boolean scalar, ``values`` traced arrays the error's message needs (given as NumPy arrays).
    ``subject``: the value the check guards (an op's result), if the check is needed only
    when the program uses it (TensorFlow runs only the ops a graph's outputs need).

    At the top of a ``tf.function`` body, ``bad`` and ``values`` become outputs of its program,
    which its call waits for, reads and raises from (``collecting``), and a failed check leaves
    every Variable as it was: the program stays without effects (JAX's fast dispatch) and keeps
    donating the Variables' buffers. Elsewhere (a loop body, a branch, a ``Dataset.map``
    function) a host callback raises, called only when ``bad`` holds. Nothing is staged while
    ``quiet()``, nor into a SavedModel's programs (which compute on numbers)."""
    if quiet() or _state.is_exporting():
        return
    s = _state._local.scope
    while s is not None and s.flags is None:
        s = s.parent
    # a value of the body's own trace, not of a loop's, a branch's or a transformation's in it
    if s is not None and s.trace is not None and (
            bad._trace if isinstance(bad, jax.core.Tracer) else current_trace()) is s.trace:
        # only a traced subject can be unused (a constant, or strings on the host, always count)
        s.flags.append((bad, values, error, subject if isinstance(subject, jax.core.Tracer) else None))
        return

    def fail(bad, *values):
        if bad:   # also checked here: a vmapped cond runs both branches
            program_errors.append(error(*values))
            raise program_errors[-1]

    from jax.experimental import io_callback
    values = [jax.lax.stop_gradient(jnp.asarray(v)) for v in values]
    with staged(may_fail=True):
        try:
            jax.lax.cond(bad, lambda: io_callback(fail, None, bad, *values), lambda: None)
        except NotImplementedError:   # vmapped (tf.vectorized_map): JAX has no effects in a vmapped cond
            io_callback(fail, None, bad, *values)
