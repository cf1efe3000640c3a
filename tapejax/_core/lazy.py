"""Lazy execution: eager ops fused into one compiled program.

While it is on (``tf.config.experimental.set_lazy_execution(True)``, or ``TAPEJAX_LAZY=1`` at
import), ``engine.apply`` does not run an op: it appends it to this thread's *pending program*
and returns a Tensor whose value is pending (``Tensor._lazy``). Its shape and dtype are known
at once -- ``jax.eval_shape`` of the op, cached per (op, static arguments, abstract inputs) --
so an op given arguments it cannot compute with raises its error at the line that called it,
exactly as eagerly (the op is then run eagerly, which raises it). Tapes record pending values
like any others; ``tape.gradient`` applies its backward op to them, which is recorded too, so
forward and backward become one program.

The program runs when a value is observed: ``Tensor._value`` (``.numpy()``, ``repr``,
``bool``/``int``/``float``, NumPy conversion, a Variable assignment, a host op, a
``tf.function`` argument...), when it reaches ``max_pending_ops`` ops, or when lazy execution
is turned off. It is one ``jax.jit`` function replaying the ops in order (each compiled apart,
so values are eager's to the bit: ``_alone``), cached by the
program's fingerprint (ops, static arguments, wiring, input shapes and dtypes, which values
are still referenced), in a bounded ``CompileCache``. Values no Tensor refers to any more are
not returned (XLA fuses them away); after the run the program is dropped.

What never becomes pending: ops while a ``tf.function`` is traced (values are tracers already),
string and host ops, ops inside ``tf.device`` (placed where the scope says, now), ops with
effects (host callbacks), ops on values JAX autodiff is differentiating, ops whose function is not
jitted (``Op(jit=False)``: Python callbacks), and anything ``apply`` has to convert in a way
that may fail (those run eagerly, after their pending inputs are computed).
"""
import collections
import functools
import os
import sys
import threading
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import config as _jax_config   # eager_constant_folding: ensure_compile_time_eval's switch
from jax._src.array import ArrayImpl
from jax._src.lax.lax import _convert_element_type   # weak_type=True has no public spelling

from . import engine as _engine, state as _state
from .cache import CompileCache, abstract_key, data_bytes, resident_bytes
from .tensor import Tensor, _TensorBase, _contains_tensor

_ARRAY = ArrayImpl   # a concrete jax array (named without making one: that would start the backend)
_SCALARS = (float, int, bool)


class _Config:
    enabled = False
    max_pending_ops = 1024


config = _Config()


class _Program:
    """The ops recorded since the last run, in order, wired by value slots."""

    __slots__ = ("ops", "inputs", "input_slots", "_input_of", "scalars", "scalar_slots", "tensors",
                 "lock", "done", "__weakref__")

    def __init__(self):
        self.ops = []          # (op, static items, input slots, output slots or one slot): the fingerprint
        self.inputs = []       # concrete arrays and Python scalars the ops read
        self.input_slots = []
        self._input_of = {}    # id(array) -> slot: an array used twice is one input
        # Python floats and ints: passed as one array each (a jit argument apiece costs more
        # than the op), made weakly typed again inside, as JAX types a Python scalar argument.
        self.scalars = {float: [], int: []}
        self.scalar_slots = {float: [], int: []}
        # slot -> the pending Tensor (None for inputs). Held strongly, without a weakref per value
        # (they are what makes a recorded step cost in garbage collection): a value only this
        # list refers to is not returned (``_alive``).
        self.tensors = []
        self.lock = threading.RLock()
        self.done = False

    def _input(self, v):
        kind = type(v)
        if (kind is float or kind is int) and (kind is float or -2 ** 63 <= v < 2 ** 63):
            s = len(self.tensors)
            self.tensors.append(None)
            self.scalars[kind].append(v)
            self.scalar_slots[kind].append(s)
            return s
        if kind is _ARRAY:
            s = self._input_of.get(id(v))
            if s is not None:
                return s
            self._input_of[id(v)] = len(self.tensors)
        s = len(self.tensors)
        self.tensors.append(None)
        self.inputs.append(v)
        self.input_slots.append(s)
        return s

    def n_inputs(self):
        return len(self.inputs) + len(self.scalars[float]) + len(self.scalars[int])

    def run(self):
        """Computes every pending value still referenced, as one compiled call."""
        with self.lock:
            if self.done:
                return
            self.done = True
            _forget(self)
            out_slots, outs = _alive(self.tensors)
            if not outs:
                self.ops = self.inputs = self.tensors = None
                return
            fs, ints = self.scalar_slots[float], self.scalar_slots[int]
            key = (tuple(self.ops), tuple([abstract_key(v) for v in self.inputs]),
                   tuple(self.input_slots), tuple(fs), tuple(ints), tuple(out_slots))
            fn = _PROGRAMS.get(key)
            new = fn is None
            if new:
                fn = _compile(self.ops, self.input_slots, fs, ints, len(self.tensors), out_slots)
                _PROGRAMS.put(key, fn)
                before = resident_bytes()
            packed = (np.array(self.scalars[float], jax.dtypes.canonicalize_dtype(np.float64)),
                      np.array(self.scalars[int], jax.dtypes.canonicalize_dtype(np.int64)))
            try:
                # Values are concrete, also when observed while a function is traced.
                with jax.ensure_compile_time_eval():
                    values = fn(True, *packed, *self.inputs)
            except Exception:
                # Run op by op, so an error names the op that failed (nothing is half-applied:
                # no Tensor is given a value unless all are computed).
                slots = self.input_slots + fs + ints
                with jax.ensure_compile_time_eval():
                        values = _run_eagerly(self.ops, slots, self.inputs + self.scalars[float] + self.scalars[int],
                                          len(self.tensors), out_slots)
            if new:
                _PROGRAMS.charge(key, resident_bytes() - before - data_bytes(values))
            for t, v in zip(outs, values):
                t._v = v
                t._lazy = None
            _last[0] = (self.ops, self.n_inputs(), len(outs), "compiled" if new else "cached")
            self.ops = self.inputs = self.tensors = None
            self._input_of = self.scalars = None


def _alive(tensors):
    """(slots, Tensors) of the pending values something besides the program refers to."""
    slots, outs = [], []
    for s in range(len(tensors)):
        t = tensors[s]
        # references: the list, ``t`` and getrefcount's argument
        if t is not None and t._lazy is not None and sys.getrefcount(t) > 3:
            slots.append(s)
            outs.append(t)
    return slots, outs


def _replay(ops, input_slots, inputs, n_slots, out_slots, call):
    vals = [None] * n_slots
    for s, v in zip(input_slots, inputs):
        vals[s] = v
    for op, static, ins, outs in ops:
        r = call(op)(*[vals[i] for i in ins], **static)
        if type(outs) is int:
            vals[outs] = r
        else:
            for s, o in zip(outs, [o for o in r if o is not None]):
                vals[s] = o
    return [vals[s] for s in out_slots]


def _compile(ops, input_slots, float_slots, int_slots, n_slots, out_slots):
    slots = list(input_slots) + list(float_slots) + list(int_slots)
    ops = _with_static_dicts(ops)

    def program(alone, floats, ints, *inputs):
        # Constants (zeros, seeds of ones) stay in the program: the run's ensure_compile_time_eval
        # would compute each one while tracing, compiling (and keeping) an executable per shape.
        with _jax_config.eager_constant_folding(False):
            scalars = [_weak(floats[k]) for k in range(len(float_slots))]
            scalars += [_weak(ints[k]) for k in range(len(int_slots))]
            return _replay(ops, slots, list(inputs) + scalars, n_slots, out_slots, lambda op: _alone(op, alone))
    return jax.jit(program)


def _alone(op, alone):
    """``op.fn`` compiled as the op alone is, for the values of eager execution bit for bit: XLA
    fuses nothing across ops, where it would round differently (a multiply and the add after it
    become one FMA instruction on a CPU; ``optimization_barrier`` does not stop that). The op is
    the branch taken of a ``cond`` on ``alone``, a run-time True."""
    def fn(*args, **static):
        f = functools.partial(op.fn, **static)
        return jax.lax.cond(alone, f, lambda *a: jax.tree_util.tree_map(_zeros, jax.eval_shape(f, *a)), *args)
    return fn


def _zeros(aval):
    return _convert_element_type(jnp.zeros(aval.shape, aval.dtype), weak_type=aval.weak_type)


def _weak(x):
    """A scalar as JAX types a Python scalar argument: weakly typed."""
    return _convert_element_type(x, weak_type=True)


def _run_eagerly(ops, input_slots, inputs, n_slots, out_slots):
    return _replay(_with_static_dicts(ops), input_slots, inputs, n_slots, out_slots, lambda op: op._jfn)


def _with_static_dicts(ops):
    return [(op, dict(items), ins, outs) for op, items, ins, outs in ops]


def _drop(fn):
    fn.clear_cache()


_PROGRAMS = CompileCache(on_evict=_drop)


class _Local(threading.local):
    program = None


_local = _Local()
_last = [None]


def _forget(program):
    if _local.program is program:
        _local.program = None


def _current():
    p = _local.program
    if p is None or p.done:
        p = _local.program = _Program()
    return p


# ---------------------------------------------------------------------------
# Shape inference at record time (jax.make_jaxpr: shapes, dtypes and effects)
# ---------------------------------------------------------------------------

_SHAPES_MAX = 1024   # per op
# op -> {(static, abstract inputs): abstract output, or _EAGER}. Weakly keyed: an op made per
# tape structure (a backward pass) is not kept alive, with what its trace holds, by its entries.
_shapes = weakref.WeakKeyDictionary()
_shapes_lock = threading.Lock()


def _infer(op, static, skey, specs):
    """The op's abstract output, or None when it is run now: it cannot be computed with these
    arguments (running it raises its error), or it has effects (a host callback checking an
    index must raise at the line that called it)."""
    seen = _shapes.get(op)
    out = None if seen is None else seen.get(skey)
    if out is not None:
        return None if out is _EAGER else out
    try:
        closed, out = jax.make_jaxpr(functools.partial(op.fn, **static), return_shape=True)(*specs)
    except Exception:   # the op runs now, and raises its error there
        return None
    if closed.effects or not all(isinstance(o, jax.ShapeDtypeStruct) for o in _leaves(out)):
        out = _EAGER
    with _shapes_lock:
        seen = _shapes.get(op)
        if seen is None:
            seen = _shapes[op] = {}
        elif len(seen) >= _SHAPES_MAX:
            seen.clear()
        seen[skey] = out
    return None if out is _EAGER else out


_EAGER = object()


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [o for o in out if o is not None]
    return [out]


# ---------------------------------------------------------------------------
# The op layer's hook
# ---------------------------------------------------------------------------

def defer(op, args, static):
    """``engine.apply`` while lazy execution is on: records ``op`` in the pending program."""
    if _state._local.tracing or getattr(op._jfn, "__wrapped__", None) is not op.fn:
        return NotImplemented      # traced (values are tracers), or not jax.jit(op.fn): run it now
    if jax.config.jax_default_device is not None:
        return NotImplemented      # inside tf.device: placed now, where the scope says
    program = _current()
    read = _read_args(program, args)
    if read is None:
        return NotImplemented
    ins, slots, keys, specs = read
    if static:
        static = {k: _engine.freeze(v) for k, v in static.items()}
        items = tuple(sorted(static.items()))
    else:
        items = ()
    try:
        skey = (items, tuple(keys))
        hash(skey)
    except TypeError:
        return NotImplemented
    out = _infer(op, static, skey, specs)
    if out is None:
        return NotImplemented
    with program.lock:
        if program.done:                           # run meanwhile by another thread
            return NotImplemented
        for k, (s, a) in enumerate(zip(slots, ins)):
            if s is None:
                slots[k] = program._input(a._v if type(a) is Tensor else a)
        result, outs, out_slots = _outputs(program, out)
        slots = tuple(slots)
        program.ops.append((op, items, slots, out_slots))
        full = len(program.ops) >= config.max_pending_ops
    recorders = _engine.state.recorders
    if recorders:
        keep = op.vjp is not None and type(result) is Tensor
        _engine._record(recorders, op, static, ins, outs, ans=result if keep else None)
    if full:
        program.run()
    return result


def _read_args(program, args):
    """(tape inputs, slots (None: a new input), abstract keys, specs for shape inference), or
    None for arguments ``apply`` converts itself (NumPy, lists, strings, tracers)."""
    slots, keys, specs, ins = [], [], [], []
    for a in args:
        if type(a) is not Tensor:
            if type(a) in _SCALARS or type(a) is _ARRAY:
                ins.append(a)
                slots.append(None)
                keys.append(type(a) if type(a) in _SCALARS else (a.shape, a.dtype, a.weak_type))
                specs.append(a)
                continue
            if isinstance(a, _TensorBase):          # a Variable: its value now
                a = _engine._read_variable(a)
            elif isinstance(a, (list, tuple)) and _contains_tensor(a):
                a = _engine.packed(*a)
                if type(a) is not Tensor:
                    return None
            else:
                return None
        p = a._lazy
        if p is not None and p is not program:
            p.run()                                # another thread's program, or one run already
            p = a._lazy
        ins.append(a)
        v = a._v
        if p is not None:
            slots.append(a._slot)
        else:
            if type(v) is not _ARRAY:
                return None                        # a tracer, a string tensor
            slots.append(None)
        keys.append((v.shape, v.dtype, v.weak_type))
        specs.append(v)
    if ins and all(type(a) in _SCALARS for a in ins):
        return None      # only Python numbers: ``apply`` gives them TF's dtypes (int32, float32)
    return ins, slots, keys, specs


def _outputs(program, out):
    """Pending Tensors for the op's abstract output: (result, output Tensors, their slots)."""
    if not isinstance(out, (tuple, list)):
        t = _pending(program, out)
        return t, [t], t._slot
    wrapped = [None if o is None else _pending(program, o) for o in out]
    outs = [t for t in wrapped if t is not None]
    return (tuple(wrapped) if isinstance(out, tuple) else wrapped), outs, tuple(t._slot for t in outs)


def _pending(program, aval):
    t = Tensor(aval)
    t._lazy = program
    t._slot = len(program.tensors)
    program.tensors.append(t)
    return t


# ---------------------------------------------------------------------------
# The switch and the debug view
# ---------------------------------------------------------------------------

def run_pending():
    """Runs this thread's pending program now (the end of a step)."""
    p = _local.program
    if p is not None:
        p.run()


def set_enabled(enabled, max_pending_ops=None):
    if max_pending_ops is not None:
        if int(max_pending_ops) < 1:
            raise ValueError(f"max_pending_ops must be a positive integer, got {max_pending_ops!r}.")
        config.max_pending_ops = int(max_pending_ops)
    enabled = bool(enabled)
    if not enabled:
        run_pending()
    config.enabled = enabled
    _engine.defer = defer if enabled else None


def _describe(ops, n_inputs, n_outputs, how):
    counts = collections.Counter(op.name for op, *_ in ops)
    names = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.most_common())
    return f"{len(ops)} ops ({names}); {n_inputs} inputs, {n_outputs} outputs; {how}"


def describe():
    """What is pending in this thread, and what the last run fused."""
    p = _local.program
    pending = "nothing" if p is None or p.done or not p.ops else _describe(
        p.ops, p.n_inputs(), len(_alive(p.tensors)[0]), "pending")
    return (f"lazy execution: {'on' if config.enabled else 'off'} (max_pending_ops={config.max_pending_ops}); "
            f"pending: {pending}; last run: {_describe(*_last[0]) if _last[0] else 'none'}; "
            f"{len(_PROGRAMS)} compiled programs cached")


if os.environ.get("TAPEJAX_LAZY", "0").strip().lower() not in ("", "0", "false", "no", "off"):
    set_enabled(True)
