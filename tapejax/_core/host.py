"""String tensors in a compiled ``tf.function``: host work recorded while tracing, run per call.

XLA computes on numbers, and a string tensor is a NumPy array of bytes on the host. A
function given string tensors is traced once per their shapes (not their values, as in
TensorFlow): each string argument is a :class:`~tapejax._tensor.HostValue`, a placeholder
holding the strings of the call being traced as an example. The ops that compute on strings
in NumPy (the tf.strings functions, and ops with a NumPy version such as ``tf.add``,
``tf.equal``, ``tf.reshape``: ``engine._host_apply``) go through :func:`call`, which runs
them on the examples and records them in the trace's :class:`Program`. Each call of the
compiled function first runs the program on its own strings (in NumPy, on the host), then the
XLA program: numbers computed from the strings (``tf.strings.length``,
``tf.strings.to_number``) enter it through ``jax.pure_callback``. String ops on values of the
XLA program (``tf.strings.as_string(x * 2)``) take them as extra outputs of it and run after
it. Strings (and numbers computed from strings) the function returns come from the host
program.

What cannot be recorded raises, saying what to do: host ops whose result is not made of
plain tensors (a ``tf.strings.split`` of a batch gives a RaggedTensor), numbers computed from
strings made after the program, strings made from values inside a branch or loop body, a
size that changes with the strings and that the trace used (``.shape``) or that the program
takes, and any other use of a string argument's value (``.numpy()``, NumPy conversion).
"""
import threading

import jax
import numpy as np

try:
    from jax._src import core as _jax_core
except ImportError:
    _jax_core = None

from .. import errors
from .tensor import HostValue, Tensor, _TensorBase, is_tracer

_LATE_NUMBERS = (
    "{name} computed numbers from strings made of values of the compiled (XLA) program: "
    "tapejax makes such strings on the host after the program has run, so numbers computed "
    "from them cannot go back into it. Compute the numbers from the program's values directly, "
    "or run the function eagerly with tf.config.run_functions_eagerly(True).")
_NOT_TENSORS = (
    "{name} on a string argument of a tf.function returned {what}: tapejax runs string ops on "
    "the host per call and can return only plain tensors from them (a RaggedTensor's row "
    "lengths would depend on each call's strings). Split the strings outside the function "
    "(e.g. in the tf.data pipeline), or run it eagerly with tf.config.run_functions_eagerly(True).")


_INNER = (
    "A tf.strings op was given a value computed inside tf.cond, tf.while_loop or a loop over a "
    "tensor (a branch or loop body) of a compiled function: tapejax makes strings from the "
    "program's values after it has run, so only values of the function's own body can be "
    "formatted. Return the numbers from the loop and format them after it, or run the function "
    "eagerly with tf.config.run_functions_eagerly(True).")


def _current_trace():
    try:
        return _jax_core.trace_ctx.trace
    except AttributeError:   # another JAX: values of inner traces are not told apart
        return None


class _Local(threading.local):
    program = None    # the Program of the function being traced


_local = _Local()


class Ref:
    """A host value of a program: an argument or an output of a recorded op."""

    __slots__ = ("program", "index")

    def __init__(self, program, index):
        self.program = program
        self.index = index


class Program:
    """The host ops of one trace, in order, replayed on every call: those on the call's
    strings before the XLA program (:meth:`run`), those on numbers it computes after it
    (:meth:`run_late`)."""

    def __init__(self):
        self.n = 0
        self.arguments = []    # the Tensors the string arguments are traced as
        self.nodes = []        # (name, fn, tree, leaves (Refs or constants), output Refs, late)
        self.examples = {}     # Ref -> its value in the call traced (while tracing only)
        self.tracers = {}      # id(tracer) -> (tracer, Ref): values crossing the XLA program's edge
        self.shapes = {}       # Ref index -> (shape, dtype) of a value the program gets by callback
        self.expect = {}       # those of them the program uses: checked on every call (see prune)
        self.late = set()      # indices of the values known only after the program ran
        self.late_inputs = []  # the program's values the host ops after it take (while tracing)
        self.late_refs = []    # their Ref indices
        self.values = []       # the HostValues made (while tracing)
        self.fixed = {}        # Ref index -> the shape the trace used (read by the body)
        self.shape_used = False
        self.main = None       # the JAX trace of the program (see recording)
        self.env = None        # the values of the call running
        self.effects = False   # host callbacks with effects (tf.print) read them
        self.lock = threading.Lock()

    def _ref(self, example):
        r = Ref(self, self.n)
        self.n += 1
        self.examples[r] = example
        return r

    def argument(self, example, shape=None):
        """The Tensor a string argument is traced as (``example``: the call's strings)."""
        assert self.n == len(self.arguments), "arguments come first"
        t = Tensor(HostValue(self._ref(example), example, shape))
        t._value.known = None not in t._value.spec
        self.arguments.append(t)
        self.values.append(t._value)
        return t

    def ref_of(self, x):
        """The Ref of a tensor holding a host value of this program, or None."""
        if not isinstance(x, _TensorBase):
            return None
        v = x._value
        if type(v) is HostValue:
            if v.ref.program is not self:
                raise errors.InvalidArgumentError(None, None, (
                    "A string tensor of another tf.function trace is used here: it is out of scope. "
                    "Return it from that function instead."))
            return v.ref
        if is_tracer(v):
            e = self.tracers.get(id(v))
            if e is not None and e[0] is v:
                return e[1]
        return None

    def _program_value(self, x):
        """The Ref of a value of the XLA program that host ops take after it has run."""
        v = x._value
        if self.main is not None and getattr(v, "_trace", self.main) is not self.main:
            raise TypeError(_INNER)
        r = self._ref(np.zeros(v.shape, v.dtype))   # an example, for the ops' result types
        self.tracers[id(v)] = (v, r)
        self.late.add(r.index)
        self.late_inputs.append(v)
        self.late_refs.append(r.index)
        return r

    def _output(self, name, o, late):
        if type(o) is not Tensor:
            raise TypeError(_NOT_TENSORS.format(name=name, what=f"a {type(o).__name__}"))
        v = np.asarray(o._value)
        r = self._ref(v)
        if v.dtype == object:
            if late:
                self.late.add(r.index)
            hv = HostValue(r, v)
            self.values.append(hv)
            return Tensor(hv), r
        if late:
            raise TypeError(_LATE_NUMBERS.format(name=name))
        self.shapes[r.index] = self.expect[r.index] = (v.shape, v.dtype)
        t = jax.pure_callback(lambda: self._value(r.index), jax.ShapeDtypeStruct(v.shape, v.dtype))
        self.tracers[id(t)] = (t, r)
        return Tensor(t), r

    def _value(self, index):
        v = np.asarray(self.env[index])
        shape, dtype = self.shapes[index]
        # A value of another size is one the program does not use (see prune): any value does.
        return v if v.shape == shape else np.zeros(shape, dtype)

    def prune(self, jaxpr):
        """Keeps the size checks (``expect``) of the values the program uses only: a number
        the function just returns comes from the host program, at any size."""
        calls = [e for e in jaxpr.eqns if e.primitive.name == "pure_callback"]
        if len(calls) != len(self.expect):   # some are inside branches or loops: keep every check
            return
        used = {v for e in jaxpr.eqns for v in e.invars if not hasattr(v, "val")}
        used.update(v for v in jaxpr.outvars if not hasattr(v, "val"))
        for index, e in zip(sorted(self.expect), calls):
            if not any(v in used for v in e.outvars):
                del self.expect[index]

    def done(self):
        """Ends the trace: the examples and tracers are not kept."""
        self.main = None
        self.fixed = {hv.ref.index: hv.example.shape for hv in self.values if hv.used}
        self.shape_used = bool(self.fixed)
        self.values = None
        self.examples = self.tracers = self.late_inputs = None

    def run(self, args):
        """Runs the host ops before the XLA program on a call's string arguments; returns the
        host values (those known after it are filled in by :meth:`run_late`)."""
        env = list(args) + [None] * (self.n - len(args))
        self._run(env, False)
        return env

    def run_late(self, env, values):
        """Runs the host ops on ``values``, the numbers the XLA program computed for them."""
        for i, v in zip(self.late_refs, values):
            env[i] = v
        self._run(env, True)

    def _run(self, env, late):
        for name, fn, tree, leaves, outs, when in self.nodes:
            if when != late:
                continue
            a, k = jax.tree_util.tree_unflatten(
                tree, [Tensor(env[x.index]) if type(x) is Ref else x for x in leaves])
            out = fn(*a, **k)
            for r, o in zip(outs, [out] if type(out) is Tensor else out):
                v = o._value
                want = self.expect.get(r.index)
                if want is not None and (v.shape, v.dtype) != want:
                    raise errors.InvalidArgumentError(None, None, (
                        f"{name} computed a tensor of shape {tuple(v.shape)} and dtype {v.dtype} "
                        f"from this call's strings, but the compiled function was traced with shape "
                        f"{tuple(want[0])} and dtype {want[1]}: its size depends on the strings. "
                        "Pad or truncate to a fixed size, or run the string ops outside the function."))
                shape = self.fixed.get(r.index)
                if shape is not None and v.shape != shape:
                    raise errors.InvalidArgumentError(None, None, (
                        f"{name} made strings of shape {tuple(v.shape)} from this call's strings, but "
                        f"the compiled function was traced with shape {tuple(shape)}, which its body "
                        "used (.shape, tf.shape, tf.size): tapejax traces string ops with the shapes "
                        "of the strings they were traced with. Pad or truncate to a fixed size, or "
                        "run the string ops outside the function."))
                env[r.index] = v


def reader(value):
    """A function giving the value a HostValue has in the call running (for host callbacks
    of the program: ``tf.print``)."""
    ref = value.ref
    if ref.index in ref.program.late:
        raise TypeError("tf.print of a string computed from values of the compiled (XLA) program: "
                        "tapejax computes such strings after the program has run. Print the numbers "
                        "themselves (tf.print formats them), or return the string and print it outside.")
    ref.program.effects = True
    return lambda: ref.program.env[ref.index]


class recording:
    """Context in which the host ops on ``program``'s values are recorded (a trace)."""

    def __init__(self, program):
        self.program = program

    def __enter__(self):
        self.saved, _local.program = _local.program, self.program
        self.program.main = _current_trace()

    def __exit__(self, *exc):
        _local.program = self.saved


def _is_tensor(x):
    return isinstance(x, _TensorBase)


def call(name, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, a host (NumPy) computation on tensors named ``name`` (for
    errors). While a function is traced and some argument is a host value of its program
    (a string argument, or computed from one) or a value of the XLA program (a tracer), the
    call is run on examples and recorded, and its outputs are host values."""
    prog = _local.program
    if prog is None:
        return fn(*args, **kwargs)
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
    refs = [prog.ref_of(x) for x in leaves]
    if all(r is None for r in refs) and not any(
            isinstance(x, _TensorBase) and is_tracer(x._value) for x in leaves):
        return fn(*args, **kwargs)     # constants: computed now, as TensorFlow folds them
    refs = [prog._program_value(x) if r is None and isinstance(x, _TensorBase) and is_tracer(x._value)
            else r for x, r in zip(leaves, refs)]
    late = any(r is not None and r.index in prog.late for r in refs)
    examples = [x if r is None else Tensor(prog.examples[r]) for x, r in zip(leaves, refs)]
    a, k = jax.tree_util.tree_unflatten(tree, examples)
    _local.program = None
    try:
        with jax.ensure_compile_time_eval():
            out = fn(*a, **k)
    finally:
        _local.program = prog
    if type(out) is Tensor:
        new, outs = prog._output(name, out, late)
        outs = [outs]
    elif type(out) in (tuple, list):
        pairs = [prog._output(name, o, late) for o in out]
        new, outs = type(out)(p[0] for p in pairs), [p[1] for p in pairs]
    else:
        raise TypeError(_NOT_TENSORS.format(name=name, what=f"a {type(out).__name__}"))
    prog.nodes.append((name, fn, tree, [x if r is None else r for x, r in zip(leaves, refs)], outs, late))
    return new
