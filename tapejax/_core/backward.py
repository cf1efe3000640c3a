"""The backward pass: plans, the reverse loop, the compiled and op-by-op paths, jacobians.

The backward pass is ``_node_vjp`` (one node: JAX's VJP or the op's hand-written
rule, then unbroadcast and cast, once for every op) run in a reverse loop over
the recorded nodes. For tapes made of pure ops that whole loop is one JAX
function, compiled once per tape *fingerprint* (ops, static arguments, shapes,
dtypes, wiring) and cached, and applied through the op layer itself, so an outer
tape records it like any op: that is how higher-order gradients work. Tapes with
Python-level nodes (``custom_gradient``) run the same loop through the op layer, and so
do tapes of a structure that keeps arriving with new lengths (``_how_to_differentiate``):
there each node's VJP is a small op compiled per (op, shapes) and shared by every tape,
instead of a whole program compiled per shape. A tape fingerprint met for the first time
compiles nothing: the whole pass is traced and computed by NumPy (``new_shapes``), and
compiled when it comes back.
"""
import collections
import itertools
import operator
import threading
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import engine, lazy as _lazy, new_shapes
from .cache import CompileCache, abstract_key, data_bytes, limits, resident_bytes
from .engine import Op, apply, is_float_dtype, signature, state
from .state import pause_recording
from .tensor import Tensor, _TensorBase

def _unbroadcast(g, x):
    """Sums a cotangent down to the shape of ``x`` and casts it to ``x``'s dtype."""
    shape = np.shape(x)
    if g.shape != shape:
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1)
        g = jnp.sum(g, axis=axes, keepdims=False) if axes else g
        g = g.reshape(shape)
    dt = jnp.result_type(x)
    if g.dtype != dt:
        g = g.astype(dt)
    return g


def _node_vjp(op, static, gmask, cmask, inputs, cts):
    """Gradients of one node w.r.t. its inputs selected by ``gmask`` (pure JAX).

    ``inputs`` are the node's ``args``: its inputs, then its saved output when the op
    has a hand-written rule that was given one. ``cts`` holds cotangents for the
    outputs selected by ``cmask``; the others are zero.
    """
    kw = dict(static)
    n = len(gmask)
    ans = inputs[n] if len(inputs) > n else None
    inputs = inputs[:n]
    diff = [x for x, m in zip(inputs, gmask) if m]
    if op.vjp is not None:
        if ans is None:
            ans = op.fn(*inputs, **kw)
        ct = _fill_cts(ans, cmask, cts)
        grads = op.vjp(ans, *inputs, **kw)(ct)
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        grads = [g for g, m in zip(grads, gmask) if m]
    else:
        fn = new_shapes.differentiable(op, inputs, kw)

        def f(*d):
            it = iter(d)
            return fn(*[next(it) if m else x for x, m in zip(inputs, gmask)])
        ans, pull = jax.vjp(f, *diff)
        grads = pull(_fill_cts(ans, cmask, cts))
    # A rule may return None for an input it does not depend on: no gradient flows there,
    # and a source reached only that way gets None, not zeros (as TensorFlow).
    return tuple(None if g is None else _unbroadcast(g, x) for g, x in zip(grads, diff))


def _fill_cts(ans, cmask, cts):
    if not isinstance(ans, (tuple, list)):
        return cts[0]
    masks = iter(cmask)
    given = iter(cts)
    filled = []
    for a in ans:  # None outputs (unconnected gradients) have no mask entry
        if a is None:
            filled.append(None)
        elif next(masks):
            filled.append(next(given))
        elif is_float_dtype(a.dtype):
            filled.append(jnp.zeros_like(a))
        else:
            filled.append(np.zeros(a.shape, jax.dtypes.float0))
    return type(ans)(filled)



class Spec(NamedTuple):
    """One node of a plan, as the reverse loop differentiates it (hashable: part of the
    tape's fingerprint)."""
    op: Any            # the Op; None for a node with a Python backward (custom_gradient)
    static: Any        # the op's static arguments; for a Python-backward node, id(node)
    gmask: tuple       # per input: does it get a gradient
    cmask: tuple       # per output: does it carry a cotangent
    in_slots: tuple    # slots of the inputs that get gradients
    out_slots: tuple   # slots of the outputs that carry cotangents
    keys: Any          # the inputs' abstract values (shapes, dtypes); None for a Python node


class _Plan:
    """The part of a tape between some sources and targets, resolved to slots."""

    __slots__ = ("nodes", "specs", "target_slots", "source_slots", "n_slots", "fingerprint", "custom",
                 "layout", "indices")

    def on(self, nodes):
        """This plan for the nodes of a tape of the same structure (``_structure``); for
        ``nodes=None``, the plan without nodes that is cached (it holds no tensors)."""
        p = _Plan()
        p.nodes = None if nodes is None else list(map(nodes.__getitem__, self.indices))
        for name in ("specs", "target_slots", "source_slots", "n_slots", "fingerprint", "custom", "layout",
                     "indices"):
            setattr(p, name, getattr(self, name))
        return p


class _Hashed:
    """A large key (a plan's fingerprint) hashed once: a plan met again is keyed by the same object."""

    __slots__ = ("value", "_hash")

    def __init__(self, value):
        self.value = value
        self._hash = hash(value)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or (type(other) is _Hashed and self._hash == other._hash and self.value == other.value)


def _relevant(nodes, target_ids, source_ids):
    """The nodes on a path from a source to a target, the ids reachable from the sources, and
    the ids the targets need.

    Runs on every ``gradient`` call over the whole tape, so it is written with set
    operations and plain loops rather than generator expressions.
    """
    reach = set(source_ids)
    fwd = []
    for n in nodes:
        if not reach.isdisjoint(n.in_ids):
            fwd.append(n)
            reach.update(n.out_ids)
            reach.discard(None)       # integer outputs (None ids) never carry gradients
    needed = set(target_ids)
    rel = []
    for n in reversed(fwd):
        if not needed.isdisjoint(n.out_ids):
            rel.append(n)
            needed.update(n.in_ids)   # ids outside ``reach`` are never outputs: harmless
            needed.discard(None)
    rel.reverse()
    return rel, reach, needed


def _spec(n, reach, needed, slot):
    gmask, in_slots, keys = [], [], []
    for i, t in zip(n.in_ids, n.ins):
        m = i is not None and i in reach and is_float_dtype(t._aval.dtype)
        gmask.append(m)
        if m:
            in_slots.append(slot(i))
        keys.append(abstract_key(t))
    cmask, out_slots = [], []
    for o in n.out_ids:
        m = o in needed
        cmask.append(m)
        if m:
            out_slots.append(slot(o))
    if n.op.no_gradient and any(gmask):
        raise LookupError(f"gradient registry has no entry for: {n.op.name}")
    if n.custom is not None:
        return Spec(None, id(n), tuple(gmask), tuple(cmask), tuple(in_slots), tuple(out_slots), None)
    return Spec(n.op, n.static, tuple(gmask), tuple(cmask), tuple(in_slots), tuple(out_slots), tuple(keys))


# Plans by tape structure (``_structure``): a training step records the same structure every
# step, and planning it again costs more than running its compiled backward pass.
_PLANS = collections.OrderedDict()
_MAX_PLANS = 256


def plan(nodes, target_ids, source_ids):
    """Selects the nodes on a path from a source to a target and numbers the values (slots);
    for a tape of a structure planned before, that plan, on this tape's nodes."""
    key = _structure(nodes, target_ids, source_ids)
    known = None if key is None else _PLANS.get(key)
    if known is not None:
        return known.on(nodes)
    p = _plan(nodes, target_ids, source_ids)
    if key is not None:
        position = {id(n): k for k, n in enumerate(nodes)}
        p.indices = [position[id(n)] for n in p.nodes]
        _PLANS[key] = p.on(None)
        if len(_PLANS) > _MAX_PLANS:
            _PLANS.popitem(last=False)
    return p


def _structure(nodes, target_ids, source_ids):
    """What a plan depends on, exactly: each node's Signature (op, static arguments, abstract
    inputs: they fix the number of inputs and outputs) and the wiring, with the value ids
    renumbered by first appearance (``None``, a value without an id, numbered like the rest).
    None when a node has a Python backward (its plan is this tape's own). Runs on every
    ``gradient`` call over the whole tape: written with C-level loops (map, chain, dict)."""
    sigs = list(map(_SIG, nodes))
    if None in sigs:
        for k, n in enumerate(nodes):
            if sigs[k] is None:
                if n.custom is not None:
                    return None
                sigs[k] = n.sig = signature(n.op, (n.static, tuple([abstract_key(t) for t in n.ins])))
    ids = list(itertools.chain(_chain(map(_IN_IDS, nodes)), _chain(map(_OUT_IDS, nodes)), target_ids, source_ids))
    number = dict(zip(dict.fromkeys(ids), itertools.count()))
    return tuple(sigs), len(target_ids), tuple(map(number.__getitem__, ids))


_SIG = operator.attrgetter("sig")
_IN_IDS = operator.attrgetter("in_ids")
_OUT_IDS = operator.attrgetter("out_ids")
_ARGS = operator.attrgetter("args")
_chain = itertools.chain.from_iterable


def _plan(nodes, target_ids, source_ids):
    rel, reach, needed = _relevant(nodes, target_ids, source_ids)
    slots = {}

    def slot(i):
        s = slots.get(i)
        if s is None:
            s = slots[i] = len(slots)
        return s

    target_slots = tuple([slot(i) for i in target_ids])
    specs = [_spec(n, reach, needed, slot) for n in rel]
    p = _Plan()
    p.nodes = rel
    p.specs = specs
    p.target_slots = target_slots
    p.source_slots = tuple([slot(i) if i in reach or i in needed else None for i in source_ids])
    p.n_slots = len(slots)
    p.custom = any(spec.op is None for spec in specs)
    p.fingerprint = None if p.custom else _Hashed((tuple(specs), target_slots, p.source_slots))
    p.layout = tuple([len(n.args) for n in rel])
    return p


def reverse(specs, node_inputs, target_slots, seeds, source_slots, vjp):
    """The backward pass: a reverse loop over nodes, accumulating cotangents by slot.

    ``vjp(index, spec, inputs, cts) -> grads`` differentiates one node; the loop is
    shared by the compiled pure path (arrays) and the op-layer path (Tensors).
    """
    ct = {}
    for s, g in zip(target_slots, seeds):
        ct[s] = g if s not in ct else ct[s] + g
    for k in range(len(specs) - 1, -1, -1):
        spec = specs[k]
        out_cts = [ct.get(s) for s in spec.out_slots]
        if all(c is None for c in out_cts):
            continue
        if any(c is None for c in out_cts):
            # An output needed by the plan received no cotangent: treat it as zero.
            cmask = tuple(m and c is not None for m, c in
                          zip(spec.cmask, _expand(spec.cmask, out_cts)))
            out_cts = [c for c in out_cts if c is not None]
            spec = spec._replace(cmask=cmask)
        grads = vjp(k, spec, node_inputs[k], out_cts)
        for s, g in zip(spec.in_slots, grads):
            if g is not None:
                ct[s] = g if s not in ct else ct[s] + g
    return tuple(None if s is None else ct.get(s) for s in source_slots)


def _expand(mask, vals):
    it = iter(vals)
    return [next(it) if m else None for m in mask]


def _drop_program(op):
    """Frees an evicted program's executables now (an outer tape may still hold the Op:
    it compiles again if used)."""
    clear = getattr(op._jfn, "clear_cache", None)
    if clear is not None:
        clear()


_trace_count = [0]
_BACKWARD_CACHE = CompileCache(on_evict=_drop_program)


def backward_trace_count():
    """How many times a backward pass has been traced (for tests: caching works)."""
    return _trace_count[0]


def _pure_backward(p):
    """The pure JAX backward function of a plan: (node inputs, seeds) -> source grads."""
    specs, target_slots, source_slots = p.specs, p.target_slots, p.source_slots

    def vjp(k, spec, inputs, cts):
        return _node_vjp(spec.op, spec.static, spec.gmask, spec.cmask, inputs, cts)

    def backward(node_inputs, seeds):
        _trace_count[0] += 1
        return reverse(specs, node_inputs, target_slots, seeds, source_slots, vjp)

    return backward


def cached(key, build):
    fn = _BACKWARD_CACHE.get(key)
    if fn is None:
        fn = build()
        _BACKWARD_CACHE.put(key, fn)
    return fn


# How a backward pass at a tape fingerprint not compiled yet is run (``_how_to_differentiate``).
# A fingerprint met for the first time runs on the host (``_ON_HOST``): the whole pass traced
# once and computed by NumPy, nothing compiled -- unless most of its nodes' VJPs were met
# before (a sequence unrolled to a new length: the same ops at the same shapes), where it is
# differentiated op by op (``_BY_NODE``), each node's VJP a small op run on the host at its
# first shapes and compiled per (op, shapes) after that, shared by every tape. A
# fingerprint that comes back is compiled whole (``_WHOLE``), up to
# ``limits.max_shapes_per_structure`` fingerprints of one family (the same kinds of
# operations); past that, a structure that keeps arriving with new shapes or lengths is
# differentiated op by op when most of its nodes' VJPs were met before, and otherwise (a new
# batch size makes every node new) compiled whole, the cheaper compile. A fingerprint that
# keeps coming back (``_REPEATS`` times) is compiled whole, as are jacobians.
_WHOLE, _BY_NODE, _ON_HOST = "whole", "by node", "on host"
_REPEATS = 3
_MAX_REMEMBERED = 4096
_families = collections.OrderedDict()   # family -> [fingerprint hashes (up to the limit), probed]
_sightings = collections.OrderedDict()  # fingerprint hash -> times met
_vjp_seen = collections.OrderedDict()   # node VJP keys met before
_churn_lock = threading.Lock()


def _remember(table, key, value):
    table[key] = value
    table.move_to_end(key)
    if len(table) > _MAX_REMEMBERED:
        table.popitem(last=False)


def _how_to_differentiate(p, key):
    h = hash(key)
    with _churn_lock:
        n = _sightings.pop(h, 0) + 1
        _remember(_sightings, h, n)
        nodes = [hash(spec._replace(in_slots=(), out_slots=())) for spec in p.specs]
        known = sum(1 for k in nodes if k in _vjp_seen)
        if n == 1 and new_shapes.run_new_shapes_on_host:
            for k in nodes:
                _remember(_vjp_seen, k, True)
            return _BY_NODE if 2 * known >= len(nodes) else _ON_HOST
        family = hash(frozenset([(spec.op, spec.static) for spec in p.specs]))
        entry = _families.get(family)
        if entry is None:
            entry = [set(), False]
        _remember(_families, family, entry)
        seen = entry[0]
        if len(seen) < limits.max_shapes_per_structure or h in seen or n >= _REPEATS:
            seen.add(h)
            return _WHOLE
        if entry[1] and 2 * known < len(nodes):
            return _WHOLE
        entry[1] = True
        for k in nodes:
            _remember(_vjp_seen, k, True)
        return _BY_NODE


def clear_compile_caches():
    """Drops every compiled backward pass and what the churn rule remembers."""
    _BACKWARD_CACHE.clear()
    with _churn_lock:
        _families.clear()
        _sightings.clear()
        _vjp_seen.clear()


def split_args(layout, flat):
    """Rebuilds ([inputs per node], seeds) from the flat argument list of a plan op."""
    out = []
    i = 0
    for n in layout:
        out.append(list(flat[i:i + n]))
        i += n
    return out, list(flat[i:])


def run_backward(p, targets, seeds, mode="grad", vmap_info=None):
    """Runs a plan's backward pass for ``targets`` with ``seeds`` (None = ones).

    Returns one Tensor (or None) per source slot. The compiled pass is an Op applied
    through the op layer, so an outer tape records the whole pass as one node whose
    VJP JAX derives from the pure function: that is how higher-order gradients work.
    """
    layout = p.layout
    seed_mask = tuple(s is not None for s in seeds)
    target_avals = tuple((t._aval.shape, t._aval.dtype) for t in targets)
    given = [s for s in seeds if s is not None]
    if p.custom:
        return _oplayer_backward(p, targets, seeds)
    key = (p.fingerprint, layout, seed_mask, target_avals, mode, vmap_info)
    op = _BACKWARD_CACHE.get(key)
    # Jacobians are compiled whole; so is a pass that lazy execution defers (its program
    # decides between the host and compiling, and must meet the same op every step).
    how = _WHOLE if op is None and (mode != "grad" or engine.defer is not None) else None
    if how is None and op is None:
        how = _how_to_differentiate(p, key)
        if how is _BY_NODE:
            return _oplayer_backward(p, targets, seeds)
    if how is not None:
        op = _build(p, layout, seed_mask, target_avals, mode, vmap_info, on_host=how is _ON_HOST)
        if how is _WHOLE:
            _BACKWARD_CACHE.put(key, op)     # a pass run on the host is cached only if it compiled
    before = None if how is None else resident_bytes()
    out = None if given or how is not None else _lazy.defer_recorded(op, p.nodes)
    if out is None:
        flat = list(_chain(map(_ARGS, p.nodes)))
        flat += given
        out = apply(op, flat, {})
    if how is _ON_HOST and op._jfn._cache_size():
        _BACKWARD_CACHE.put(key, op)
        how = _WHOLE
    if how is _WHOLE:
        # The program's size: what the process grew by, less the gradients it returned.
        _BACKWARD_CACHE.charge(key, resident_bytes() - before - data_bytes(out))
    return [None if s is None else g for s, g in zip(p.source_slots, out)]


def _build(p, layout, seed_mask, target_avals, mode, vmap_info, on_host):
    """The backward pass of a plan as an Op over (node inputs..., given seeds...)."""
    pure = _pure_backward(p)

    def seeds_of(extra):
        it = iter(extra)
        return [next(it) if m else jax.lax.full(shape, 1, dt) for m, (shape, dt) in zip(seed_mask, target_avals)]

    if mode == "grad":
        def fn(*flat):
            node_inputs, extra = split_args(layout, flat)
            return pure(node_inputs, seeds_of(extra))
    else:
        (shape, dt) = target_avals[0]
        fn = _jacobian_fn(pure, layout, shape, dt, mode, vmap_info)
    op = Op(fn, name="gradient" if mode == "grad" else mode, first_on_host=on_host)
    op.fixed_inputs = not any(seed_mask)      # the plan fixes its arguments (seeds given do not)
    return op


def _jacobian_fn(pure, layout, shape, dt, mode, use_pfor):
    """jacobian / batch_jacobian: the backward pass mapped over a basis of seeds."""
    def fn(*flat):
        node_inputs, _ = split_args(layout, flat)
        basis = _basis(tuple(shape), dt, mode)

        def one(seed):
            return pure(node_inputs, [seed])

        rows = jax.vmap(one)(basis) if use_pfor else jax.lax.map(one, basis)
        return tuple(None if r is None else _arrange(r, shape, mode) for r in rows)

    return fn


def _basis(shape, dt, mode):
    """The seeds of a jacobian: one-hot over the target (for batch_jacobian, over one
    example's elements, set in every example at once), stacked on a new first axis."""
    if mode == "jacobian":
        n = int(np.prod(shape, dtype=np.int64))
        return jnp.eye(n, dtype=dt).reshape((n,) + shape)
    n = int(np.prod(shape[1:], dtype=np.int64))
    return jnp.broadcast_to(jnp.eye(n, dtype=dt)[:, None, :], (n, shape[0], n)).reshape((n,) + shape)


def _arrange(r, shape, mode):
    """(n, *source) rows -> TF's jacobian layout."""
    src = r.shape[1:]
    if mode == "jacobian":
        return r.reshape(tuple(shape) + src)
    r = jnp.moveaxis(r, 0, 1)  # (batch, n, *source_rest)
    return r.reshape((shape[0],) + tuple(shape[1:]) + src[1:])


# The op-layer path: each pure node's VJP is one cached compiled op; custom nodes
# run their Python backward on Tensors, so outer tapes see every step.

def _vjp_fn(*args, op, static, gmask, cmask, n_in):
    return _node_vjp(op, static, gmask, cmask, args[:n_in], args[n_in:])


_vjp_op = Op(_vjp_fn, name="vjp", static=("op", "static", "gmask", "cmask", "n_in"))


def _oplayer_backward(p, targets, seeds):
    seed_tensors = [Tensor(jnp.ones_like(t._value)) if s is None else s for t, s in zip(targets, seeds)]

    def vjp(k, spec, inputs, cts):
        node = p.nodes[k]
        cts = [c if isinstance(c, _TensorBase) else Tensor(c) for c in cts]
        if node.custom is not None:
            return node.custom(_expand(spec.cmask, cts), spec.gmask)
        return _vjp_op(*inputs, *cts, op=spec.op, static=spec.static, gmask=spec.gmask, cmask=spec.cmask,
                       n_in=len(inputs))

    node_inputs = [n.args for n in p.nodes]
    return list(reverse(p.specs, node_inputs, p.target_slots, seed_tensors, p.source_slots, vjp))


def custom_jacobian(p, target, srcs, mode, use_pfor):
    """jacobian / batch_jacobian of a tape with Python backward nodes: the op-layer
    backward pass mapped over the basis with ``jax.vmap`` (nothing recorded)."""
    shape, dt = tuple(target._value.shape), target._value.dtype
    basis = _basis(shape, dt, mode)

    if state.recorders:
        return _recorded_custom_jacobian(p, target, basis, shape, mode)

    def one(seed):
        with pause_recording():
            gs = _oplayer_backward(p, [target], [Tensor(seed)])
        return tuple(None if g is None else g._value for g in gs)

    rows = jax.vmap(one)(basis) if use_pfor else jax.lax.map(one, basis)
    return [None if r is None else Tensor(_arrange(r, shape, mode)) for r in rows]


def _recorded_custom_jacobian(p, target, basis, shape, mode):
    """custom_jacobian while an outer tape records: one op-layer backward pass per
    basis row (the Python grad_fn cannot be vmapped into an op), so the outer tape
    sees every step and can differentiate the Jacobian."""
    rows = [_oplayer_backward(p, [target], [Tensor(e)]) for e in basis]
    out = []
    for k in range(len(p.source_slots)):
        col = [r[k] for r in rows]
        if all(c is None for c in col):
            out.append(None)
            continue
        like = next(c for c in col if c is not None)._value
        col = [Tensor(jnp.zeros_like(like)) if c is None else c for c in col]
        out.append(_arrange_op(*col, shape=tuple(shape), mode=mode))
    return out


_arrange_op = Op(lambda *rows, shape, mode: _arrange(jnp.stack(rows), shape, mode), name="jacobian_rows",
                 static=("shape", "mode"))
