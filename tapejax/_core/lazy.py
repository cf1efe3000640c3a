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
is turned off. It is one ``jax.jit`` function replaying the ops in order (on a CPU each
compiled apart, or fenced from its neighbours where that rounds alike, so values are eager's to
the bit: ``_alone``, ``_fenced``), cached by the
program's fingerprint (ops, static arguments, wiring, input shapes and dtypes, which values
are still referenced), in a bounded ``CompileCache``; a program met for the first time is run
on the host by NumPy instead and compiled when it comes back (``_first_sighting``). Values no
Tensor refers to any more are not returned (XLA fuses them away); after the run the program is
dropped.

What never becomes pending: ops while a ``tf.function`` is traced (values are tracers already),
string and host ops, ops inside ``tf.device`` (placed where the scope says, now), ops with
effects (host callbacks), ops on values JAX autodiff is differentiating, ops whose function is not
jitted (``Op(jit=False)``: Python callbacks), and anything ``apply`` has to convert in a way
that may fail (those run eagerly, after their pending inputs are computed).
"""
import collections
import functools
import itertools
import operator
import os
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import config as _jax_config   # eager_constant_folding: ensure_compile_time_eval's switch
from jax._src.lax.lax import _convert_element_type   # weak_type=True has no public spelling

from . import engine as _engine, host_eval, new_shapes, state as _state
from .cache import CompileCache, abstract_key, data_bytes, resident_bytes
from .tensor import Tensor, _TensorBase, _contains_tensor, _ids

_ARRAY = _state.ARRAY
_SCALARS = (float, int, bool)


class _Config:
    enabled = False
    max_pending_ops = 1024
    fuse_ops = False    # let XLA fuse across ops on a CPU too (faster; values within rounding)


config = _Config()


class _Program:
    """The ops recorded since the last run, in order, wired by value slots."""

    __slots__ = ("ops", "inputs", "input_slots", "_input_of", "scalars", "scalar_slots", "tensors",
                 "lock", "done", "__weakref__")

    def __init__(self):
        self.ops = []          # (op, static items, input slots, output slots or one slot, run apart): the fingerprint
        self.inputs = []       # concrete arrays and Python scalars the ops read
        self.input_slots = []
        self._input_of = {}    # id(input) -> slot
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
        # An array or number object read twice (``x * 1.01`` in a loop, the backward pass
        # reading what the forward read) is one input; the program holds it, so its id stays
        # its own. Keyed by identity, not value, so the program's wiring does not depend on
        # which values happen to be equal.
        s = self._input_of.get(id(v))
        if s is not None:
            return s
        s = self._input_of[id(v)] = len(self.tensors)
        kind = type(v)
        if kind is float or kind is int:
            self.tensors.append(None)
            self.scalars[kind].append(v)
            self.scalar_slots[kind].append(s)
            return s
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
            exact = _exact()
            key = (tuple(self.ops), tuple([abstract_key(v) for v in self.inputs]),
                   tuple(self.input_slots), tuple(fs), tuple(ints), tuple(out_slots), exact)
            packed = (np.array(self.scalars[float], jax.dtypes.canonicalize_dtype(np.float64)),
                      np.array(self.scalars[int], jax.dtypes.canonicalize_dtype(np.int64)))
            fn = _PROGRAMS.get(key)
            how = "cached" if fn is not None else "compiled"
            values = None
            if fn is None and _first_sighting(key):
                program = _program(self.ops, self.input_slots, fs, ints, len(self.tensors), out_slots)
                values = _on_host(functools.partial(program, None), [*packed, *self.inputs])
                how = "on host"
            if values is None and fn is None:
                fn = _compile(_program(self.ops, self.input_slots, fs, ints, len(self.tensors), out_slots), exact)
                _PROGRAMS.put(key, fn)
                before = resident_bytes()
                how = "compiled"
            try:
                # Values are concrete, also when observed while a function is traced.
                if values is None:
                    with jax.ensure_compile_time_eval():
                        values = fn(*packed, *self.inputs)
            except Exception:
                # Run op by op, so an error names the op that failed (nothing is half-applied:
                # no Tensor is given a value unless all are computed).
                slots = self.input_slots + fs + ints
                with jax.ensure_compile_time_eval():
                        values = _run_eagerly(self.ops, slots, self.inputs + self.scalars[float] + self.scalars[int],
                                          len(self.tensors), out_slots)
            if how == "compiled":
                _PROGRAMS.charge(key, resident_bytes() - before - data_bytes(values))
            for t, v in zip(outs, values):
                t._v = v
                t._lazy = None
            _last[0] = (self.ops, self.n_inputs(), len(outs), how)
            self.ops = self.inputs = self.tensors = None
            self._input_of = {}         # (``defer`` reads it without the lock)
            self.scalars = None


def _alive(tensors):
    """(slots, Tensors) of the pending values something besides the program refers to."""
    # references: the list's and getrefcount's argument (None, an input's slot, has millions)
    held = [s for s, c in enumerate(map(sys.getrefcount, tensors)) if c > 2]
    slots, outs = [], []
    for s in held:
        t = tensors[s]
        if t is not None and t._lazy is not None:
            slots.append(s)
            outs.append(t)
    return slots, outs


def _replay(ops, input_slots, inputs, n_slots, out_slots, call):
    vals = [None] * n_slots
    for s, v in zip(input_slots, inputs):
        vals[s] = v
    for op, static, ins, outs, apart in ops:
        r = call(op, apart)(*[vals[i] for i in ins], **static)
        if type(outs) is int:
            vals[outs] = r
        else:
            for s, o in zip(outs, [o for o in r if o is not None]):
                vals[s] = o
    return [vals[s] for s in out_slots]


def _program(ops, input_slots, float_slots, int_slots, n_slots, out_slots):
    """The pending program as one JAX function of (runtime, floats, ints, *arrays): ``runtime``
    the run-time values (True, -0.0) that keep each op's values eager's (``_alone``,
    ``_fenced``), None to let XLA fuse across ops."""
    slots = list(input_slots) + list(float_slots) + list(int_slots)
    ops = _with_static_dicts(ops)

    def program(runtime, floats, ints, *inputs):
        # Constants (zeros, seeds of ones) stay in the program: the run's ensure_compile_time_eval
        # would compute each one while tracing, compiling (and keeping) an executable per shape.
        with _jax_config.eager_constant_folding(False):
            scalars = [_weak(floats[k]) for k in range(len(float_slots))]
            scalars += [_weak(ints[k]) for k in range(len(int_slots))]
            if runtime is None:
                call = lambda op, how: op.fn          # noqa: E731
            else:
                call = functools.partial(_apart, *runtime)
            return _replay(ops, slots, list(inputs) + scalars, n_slots, out_slots, call)
    return program


def _compile(program, exact):
    """The compiled program: a function of (floats, ints, *arrays)."""
    if not exact:
        return jax.jit(functools.partial(program, None))
    return functools.partial(jax.jit(program), (True, np.float32(-0.0)))


def _apart(alone, zero, op, how):
    """``op.fn`` as a program runs it for eager's values: ``how`` is the op's entry of
    ``_separation`` (True: ``_alone``; ``_FENCED``: ``_fenced``; False: as it is)."""
    if how is True:
        return _alone(op, alone)
    return _fenced(op, zero) if how == _FENCED else op.fn


def _alone(op, alone):
    """``op.fn`` compiled as the op alone is, for the values of eager execution bit for bit: XLA
    fuses nothing across ops, where it would round differently (a multiply and the add after it
    become one FMA instruction on a CPU; ``optimization_barrier`` does not stop that). The op is
    the branch taken of a ``cond`` on ``alone``, a run-time True."""
    def fn(*args, **static):
        # Jitted: the branch and its output shapes (the other branch's zeros) are one trace of
        # the op, cached per input types (eager execution traced most already). XLA inlines it.
        f = functools.partial(op._jfn, **static)
        return jax.lax.cond(alone, f, lambda *a: jax.tree_util.tree_map(_zeros, jax.eval_shape(f, *a)), *args)
    return fn


def _fenced(op, zero):
    """``op.fn`` with ``zero`` (a run-time -0.0: XLA and LLVM cannot fold it away) added to each
    float32/float64 output. XLA fuses the op with its neighbours, but nothing is contracted across
    it: a multiply that ends the op becomes at most ``fma(a, b, -0.0)``, which rounds as the
    multiply alone does, and an add that starts the next op reads the sum, never a product. For
    ops whose every primitive rounds the same wherever XLA puts it (``_FUSE_EXACT``): cheaper
    than a conditional per op (``_alone``), which XLA's CPU runs as a kernel of its own."""
    def fn(*args, **static):
        return jax.tree_util.tree_map(lambda x: _fence(x, zero), op.fn(*args, **static))
    return fn


def _fence(x, zero):
    aval = jax.typeof(x)
    if aval.dtype not in _FENCE_DTYPES:
        return x            # integers and booleans round nothing
    return jax.lax.add(x, _convert_element_type(zero, aval.dtype, weak_type=aval.weak_type))


_FENCED = "fenced"
_FENCE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# Primitives whose values do not depend on what XLA fuses them with, once nothing is contracted
# across ops: IEEE operations rounded once (+, -, *, /, sqrt), exact ones, comparisons, integer
# arithmetic and data movement. Not transcendental functions: XLA's CPU computes sin, exp, tanh...
# by approximations whose results may differ between a loop of the op alone and a fused loop
# (log, fused with its neighbours, differed in the last digit of one value in seven: see
# tests/test_lazy.py). Sixteen-bit floats are left out (XLA may keep them in float32 between
# fused ops), and so is anything not named here.
_FUSE_EXACT = frozenset("""
    abs add and bitcast_convert_type ceil clamp convert_element_type copy div eq floor ge gt integer_pow is_finite le lt
    max min mul ne neg nextafter not or rem round select_n shift_left shift_right_arithmetic
    shift_right_logical sign sqrt square sub xor
    broadcast_in_dim concatenate dynamic_slice dynamic_update_slice iota pad reshape rev slice
    squeeze transpose""".split())
_CALLS = frozenset(("pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
                    "custom_vjp_call_jaxpr"))


def _separation(jaxpr):
    """How a program keeps the values of an op with this ``jaxpr`` eager's: ``_FENCED`` for one
    of ``_FUSE_EXACT`` primitives only (``_fenced``), False for a convolution (XLA's CPU runs one
    inside a conditional an order of magnitude slower; it is not contracted with its
    neighbours), True for the rest (``_alone``)."""
    if _fuses_exactly(jaxpr):
        return _FENCED
    return not _engine.uses(jaxpr, ("conv_general_dilated",))


def _fuses_exactly(jaxpr):
    for eqn in jaxpr.eqns:
        if any(getattr(v.aval, "dtype", None) not in _EXACT_DTYPES for v in eqn.outvars):
            return False
        name = eqn.primitive.name
        if name in _CALLS:
            subs = [getattr(p, "jaxpr", p) for p in eqn.params.values()]
            if not all(_fuses_exactly(s) for s in subs if hasattr(s, "eqns")):
                return False
        elif name not in _FUSE_EXACT:
            return False
    return True


_EXACT_DTYPES = frozenset(np.dtype(d) for d in (np.float32, np.float64, np.bool_, np.int8, np.int16, np.int32,
                                                 np.int64, np.uint8, np.uint16, np.uint32, np.uint64))


def _zeros(aval):
    return _convert_element_type(jnp.zeros(aval.shape, aval.dtype), weak_type=aval.weak_type)


def _exact():
    """Whether programs compile each op apart (``_alone``): on a CPU, unless ``fuse_ops`` is
    set, so values equal eager execution's (and TensorFlow's) bit for bit. On accelerators
    eager values are XLA's already, and a conditional per op would serialize the program."""
    return not config.fuse_ops and jax.default_backend() == "cpu"


# A program met for the first time is not compiled (XLA takes 0.1-2 s for a step's program on
# a CPU): it is traced and run by NumPy, as ops at new shapes are (``new_shapes``), and
# compiled when it comes back -- a training loop compiles its step on the second step, a
# notebook cell run once compiles nothing. Off under ``enable_op_determinism`` (results equal
# the compiled ones to rounding, not bit for bit).
_sightings = collections.OrderedDict()   # hashes of the programs met (bounded)
_MAX_SIGHTINGS = 4096
_MAX_HOST_EQNS = 50000


def _first_sighting(key):
    if not new_shapes.run_new_shapes_on_host:
        return False
    h = hash(key)
    if h in _sightings:
        _sightings.move_to_end(h)
        return False
    _sightings[h] = True
    if len(_sightings) > _MAX_SIGHTINGS:
        _sightings.popitem(last=False)
    return True


def _on_host(program, args):
    """``program`` on ``args`` traced and computed by NumPy (``host_eval``), or None where it
    cannot be: inputs not on the CPU, a primitive the host evaluator does not cover."""
    if jax.default_backend() != "cpu" or any(type(a) is _ARRAY and a.committed and
                                             next(iter(a.devices())).platform != "cpu" for a in args):
        return None
    _state._local.host_tracing = True
    try:
        with jax.disable_jit():      # nested jits inlined (see new_shapes._trace)
            closed = jax.make_jaxpr(program)(*args)
        if len(closed.jaxpr.eqns) > _MAX_HOST_EQNS or any(a.weak_type for a in closed.out_avals):
            return None   # a long loop unrolled; a weakly typed result (a device_put loses it)
        flat = host_eval.evaluate(closed, [np.asarray(a) for a in args])
    except Exception:   # host_eval.Unsupported, or an error the compiled run reports
        return None
    finally:
        _state._local.host_tracing = False
    with jax.ensure_compile_time_eval():    # concrete, also when observed while a function is traced
        return jax.device_put(flat)


def _weak(x):
    """A scalar as JAX types a Python scalar argument: weakly typed."""
    return _convert_element_type(x, weak_type=True)


def _run_eagerly(ops, input_slots, inputs, n_slots, out_slots):
    return _replay(_with_static_dicts(ops), input_slots, inputs, n_slots, out_slots, lambda op, apart: op._jfn)


def _with_static_dicts(ops):
    return [(op, dict(items), ins, outs, apart) for op, items, ins, outs, apart in ops]


def _drop(fn):
    getattr(fn, "func", fn).clear_cache()   # a partial of the jitted function (_compile)


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
# op.lazy_shapes: {(static items, abstract inputs): (abstract output, Signature, run apart), or
# _EAGER}, at most _SHAPES_MAX per op (engine.bounded_entries).
_shapes_lock = threading.Lock()


def _infer(op, static, skey, specs):
    """(the op's abstract output, its Signature for the tape, whether a compiled program runs
    it apart (``_alone``), whether its one output is floating point (tapes record its id)), or
    ``_EAGER`` when it is run now: its function is not ``jax.jit(op.fn)`` (a Python callback),
    it cannot be computed with these arguments (running it raises its error), or it has
    effects (a host callback checking an index must raise at the line that called it). The
    abstract values are JAX's ``ShapedArray`` (what a jax array's ``aval`` is): hashed and
    compared in C, they key this table themselves."""
    if getattr(op._jfn, "__wrapped__", None) is not op.fn:
        return _cache_shapes(op, skey, _EAGER)
    specs = [_EXAMPLE.get(k, k) if type(k) is type else k for k in specs]
    try:
        closed, out = jax.make_jaxpr(functools.partial(op.fn, **static), return_shape=True)(*specs)
    except (_engine.DtypeMismatch, _engine.DtypeNotAllowed):   # run now: TF's error (or a bool converted)
        return _cache_shapes(op, skey, _EAGER)
    except Exception:   # the op runs now, and raises its error there
        return _EAGER
    avals = closed.out_avals
    if not closed.effects and all(type(a) is _ShapedArray for a in avals):
        out = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(out), avals)
    if closed.effects or not (type(out) is _ShapedArray or (
            isinstance(out, (tuple, list)) and all(type(o) is _ShapedArray or o is None for o in out))):
        known = _EAGER      # effects; outputs other than arrays or a flat tuple/list of them
    else:
        known = (out, _engine.signature(op, skey), _separation(closed.jaxpr),
                 type(out) is _ShapedArray and _engine.is_float_dtype(out.dtype))
    return _cache_shapes(op, skey, known)


def _cache_shapes(op, skey, known):
    with _shapes_lock:
        _engine.bounded_entries(op, "lazy_shapes", _SHAPES_MAX)[skey] = known
    if op.fixed_inputs:
        op.lazy_fixed = known
    return known


_EAGER = (None, None, None, None)
_EXAMPLE = {float: 0.0, int: 0, bool: False}    # a Python scalar argument, as shape inference sees it
_ShapedArray = jax.core.ShapedArray
_DEFAULT_DEVICE = _jax_config.default_device   # jax.config.jax_default_device, read in C


# ---------------------------------------------------------------------------
# The op layer's hook
# ---------------------------------------------------------------------------

def defer(op, args, static):
    """``engine.apply`` while lazy execution is on: records ``op`` in the pending program.
    Written for speed: it runs for every eager op (the commonest arguments are read inline, its
    Tensor and tape Node are made without calls: ``_pend``)."""
    if _state._local.tracing or _DEFAULT_DEVICE.value is not None:
        return NotImplemented      # traced: values are tracers; inside tf.device: placed now
    program = _local.program
    if program is None or program.done:
        program = _current()
    n = len(args)
    a = args[0] if n else None
    if (n == 1 or n == 2) and not static and type(a) is Tensor and a._lazy is program:
        if n == 1:                 # f(x), x pending
            return _pend(program, op, (), args, [a._slot], (a._v,), (a._id,))
        b = args[1]
        if type(b) is Tensor and b._lazy is program:        # x * y
            return _pend(program, op, (), args, [a._slot, b._slot], (a._v, b._v), (a._id, b._id))
        if type(b) is float:       # x * 2.0: an input already if read before (a loop)
            return _pend(program, op, (), args, [a._slot, program._input_of.get(id(b))], (a._v, float),
                         (a._id, None))
    read = _read(program, args)
    if read is None:
        return NotImplemented
    ins, slots, keys, ids = read
    if static:
        static = {k: _engine.freeze(v) for k, v in static.items()}
        items = tuple(sorted(static.items()))
    else:
        items = ()
    return _pend(program, op, items, ins, slots, keys, tuple(ids), static)


def _pend(program, op, items, ins, slots, keys, ids, static=None):
    """``defer``'s second half: the op's abstract result (``_infer``), pending Tensor, program
    entry, and node on the tapes that watch an input (holding its ``args``' slots: ``defer_recorded``)."""
    skey = (items, keys)
    seen = op.lazy_shapes
    try:
        known = None if seen is None else seen.get(skey)
    except TypeError:              # an unhashable static argument: the op explains it
        return NotImplemented
    if known is None:
        known = _infer(op, static or {}, skey, keys)
    out, sig, apart, float_out = known
    if out is None:
        return NotImplemented
    with program.lock:
        if program.done:                           # run meanwhile by another thread
            return NotImplemented
        if None in slots:                          # inputs: arrays and Python numbers
            _input_slots(program, slots, ins)
        tensors = program.tensors
        if single := type(out) is _ShapedArray:    # one output: made here, without a call
            result = _new(Tensor)
            result._v = out
            result._lazy = program
            result._id = rid = next(_ids)
            result._slot = out_slots = len(tensors)
            tensors.append(result)
        else:
            result, outs, out_slots = _outputs(program, out)
        program.ops.append((op, items, slots := tuple(slots), out_slots, apart))
        full = len(program.ops) >= config.max_pending_ops
    recorders = _engine.state.recorders
    if recorders and single:
        out_id = rid if float_out else None
        node = None
        for r in recorders:
            watched = r._watched
            if watched.isdisjoint(ids):
                continue
            if node is None:
                node = _new(_Node)
                node.op, node.static = op, items
                node.ins, node.in_ids = ins, ids
                node.out_ids = (out_id,)
                node.custom = None
                node.sig = sig
                node.lazy = program
                if op.vjp is None:
                    node.args, node.slots = ins, slots
                else:   # an op with a hand-written rule keeps its output for the backward pass
                    node.args, node.slots = (*ins, result), (*slots, out_slots)
            r._nodes.append(node)
            if out_id is not None:
                watched.add(out_id)
    elif recorders:
        _engine._record(recorders, op, items, ins, outs, None, None, sig, ids)
    if full:
        program.run()
    return result


_new = object.__new__
_Node = _engine.Node


def _input_slots(program, slots, ins):
    """Fills in the slots of the inputs among ``ins`` (arrays, Python numbers)."""
    input_of = program._input_of
    for k in range(len(slots)):
        if slots[k] is None:
            a = ins[k]
            a = a._v if type(a) is Tensor else a
            s = input_of.get(id(a))
            slots[k] = program._input(a) if s is None else s


def defer_recorded(op, nodes):
    """``apply(op, [the nodes' args...])`` of a backward pass ``op`` while lazy execution is on,
    read from the slots the nodes were recorded with (their args are pending values of this
    thread's program, or its inputs): hundreds of arguments, none read again. None where a
    node was not recorded into the pending program, or a tape records the pass (``apply``)."""
    program = _local.program
    known = op.lazy_fixed
    if (known is None or type(known[0]) not in (tuple, list) or program is None or program.done
            or _engine.state.recorders or _state._local.tracing or _DEFAULT_DEVICE.value is not None
            or set(map(_NODE_PROGRAM, nodes)) != {program}):
        return None
    slots = tuple(_chain(map(_NODE_SLOTS, nodes)))
    out, _, apart, _ = known
    with program.lock:
        if program.done:                           # run meanwhile by another thread
            return None
        result, _, out_slots = _outputs(program, out)
        program.ops.append((op, (), slots, out_slots, apart))
        full = len(program.ops) >= config.max_pending_ops
    if full:
        program.run()
    return result


_NODE_PROGRAM = operator.attrgetter("lazy")
_NODE_SLOTS = operator.attrgetter("slots")
_chain = itertools.chain.from_iterable


def _read(program, args):
    """``_read_args``, with the common arguments -- Tensors, pending or concrete, and Python
    numbers -- read inline."""
    slots = []
    keys = []
    ids = []
    numbers_only = True
    for a in args:
        ta = type(a)
        if ta is Tensor:
            numbers_only = False
            if a._lazy is program:
                slots.append(a._slot)
                keys.append(a._v)
                ids.append(a._id)
                continue
            if a._lazy is None:
                v = a._v
                if type(v) is _ARRAY:
                    slots.append(None)
                    keys.append(v.aval)
                    ids.append(a._id)
                    continue
        elif ta is float or (ta is int and -2 ** 31 <= a < 2 ** 31):
            slots.append(None)
            keys.append(ta)
            ids.append(None)
            continue
        return _read_args(program, args)     # anything else: the general reading
    if numbers_only and args:
        return None      # only Python numbers: ``apply`` gives them TF's dtypes (int32, float32)
    return args, slots, tuple(keys), ids


def _read_args(program, args):
    """(tape inputs, slots (None: a new input), abstract values: the shape inference's
    arguments and key, the inputs' tape ids), or None for arguments ``apply`` converts itself
    (NumPy, lists, strings, tracers)."""
    slots, keys, ins, ids = [], [], [], []
    numbers_only = True
    for a in args:
        if type(a) is not Tensor:
            if type(a) in _SCALARS:
                if type(a) is int and not -2 ** 31 <= a < 2 ** 31:
                    return None                    # int32 overflow: the op raises it now
                ins.append(a)
                ids.append(None)
                slots.append(None)
                keys.append(type(a))
                continue
            if type(a) is _ARRAY:
                numbers_only = False
                ins.append(a)
                ids.append(None)
                slots.append(None)
                keys.append(a.aval)
                continue
            if isinstance(a, _TensorBase):          # a Variable: its value now
                a = _engine._read_variable(a)
            elif isinstance(a, (list, tuple)) and _contains_tensor(a):
                a = _engine.packed(*a)
                if type(a) is not Tensor:
                    return None
            else:
                return None
        numbers_only = False
        p = a._lazy
        if p is not None and p is not program:
            p.run()                                # another thread's program, or one run already
            p = a._lazy
        ins.append(a)
        ids.append(a._id)
        v = a._v
        if p is not None:
            slots.append(a._slot)
            keys.append(v)
        elif type(v) is _ARRAY:
            slots.append(None)
            keys.append(v.aval)
        else:
            return None                            # a tracer, a string tensor
    if numbers_only and ins:
        return None      # only Python numbers: ``apply`` gives them TF's dtypes (int32, float32)
    return ins, slots, tuple(keys), tuple(ids)


def _outputs(program, out):
    """Pending Tensors for the op's abstract outputs: (result, output Tensors, their slots)."""
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


def set_enabled(enabled, max_pending_ops=None, fuse_ops=None):
    if fuse_ops is not None:
        run_pending()
        config.fuse_ops = bool(fuse_ops)
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
    fuse = ", fuse_ops=True" if config.fuse_ops else ""
    return (f"lazy execution: {'on' if config.enabled else 'off'} (max_pending_ops={config.max_pending_ops}{fuse}); "
            f"pending: {pending}; last run: {_describe(*_last[0]) if _last[0] else 'none'}; "
            f"{len(_PROGRAMS)} compiled programs cached")


if os.environ.get("TAPEJAX_LAZY", "0").strip().lower() not in ("", "0", "false", "no", "off"):
    set_enabled(True)
