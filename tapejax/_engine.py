"""The tape engine: the op layer, recording, and the backward pass.

Data flows one way. ``apply`` unwraps Tensor arguments, runs the op's pure JAX
function (jit-compiled, so an eager op is one dispatch), wraps the result, and
records a ``Node`` on every active recorder that watches one of the inputs.

The backward pass is ``_node_vjp`` (one node: JAX's VJP or the op's hand-written
rule, then unbroadcast and cast, once for every op) run in a reverse loop over
the recorded nodes. For tapes made of pure ops that whole loop is one JAX
function, compiled once per tape *fingerprint* (ops, static arguments, shapes,
dtypes, wiring) and cached, and applied through the op layer itself, so an outer
tape records it like any op: that is how higher-order gradients work. Tapes with
Python-level nodes (``custom_gradient``) run the same loop through the op layer, and so
do tapes of a structure that keeps arriving with new shapes or lengths (``_compile_whole``):
there each node's VJP is a small op compiled per (op, shapes) and shared by every tape,
instead of a whole program compiled per shape.

Every compile cache is bounded (``limits``, set by
``tf.config.experimental.set_compile_cache_limits``): whole programs by count and bytes
(:class:`CompileCache`, least recently used first), each op's compiled shape variants by
count (``_track_variants``). JAX keeps every executable it compiles, 1-3 MB each on CPU.
"""
import collections
import inspect
import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes, _host, _state, errors
from ._tensor import Tensor, _TensorBase, to_array, _contains_tensor, is_jax_autodiff, _python_default_dtype


class _State(threading.local):
    """Per-thread recording state: tapes in one thread never see another's ops."""

    def __init__(self):
        self.recorders = []       # active GradientTapes / ForwardAccumulators, innermost last


state = _State()

_FLOAT_KINDS = frozenset("fc")


_BFLOAT16 = np.dtype(jnp.bfloat16)


def _is_float_dtype(dt):
    return dt.kind in _FLOAT_KINDS or dt == _BFLOAT16


# ---------------------------------------------------------------------------
# Ops
# ---------------------------------------------------------------------------

class Op:
    """A tape op: a pure JAX function, optionally with a hand-written VJP rule.

    Built with :func:`tapejax.extend.defop`. Positional arguments are tensors;
    keyword arguments (and the positional ones named in ``static``) are static,
    hashable configuration such as ``axis``.
    """

    __slots__ = ("name", "fn", "vjp", "static", "n_args", "variadic", "_jfn", "same_dtype", "host",
                 "explain", "__weakref__", "_sized", "_variants", "_limit", "_recent", "_evicted")

    def __init__(self, fn, vjp=None, name=None, static=(), jit=True):
        self.name = name or getattr(fn, "__name__", "op")
        self.same_dtype = False  # inputs share one dtype (TF's type attr T): see _converted_like
        # The op on NumPy arrays: for string tensors (which JAX cannot hold, see _host_apply), and
        # to fold shape arithmetic while tracing (see _fold).
        self.host = None
        self.explain = None      # (shapes, static) -> TensorFlow's message for bad arguments (_op_error)
        self.fn = fn
        self.vjp = vjp
        self.static = tuple(static)
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            params = None
        self.variadic = params is None or any(p.kind == p.VAR_POSITIONAL for p in params)
        # Positional arguments past the tensor ones bind, by position, to static names.
        self.n_args = None
        if params is not None and not self.variadic:
            pos = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            n = len(pos)
            for i, nm in enumerate(pos):
                if nm in self.static:
                    n = i
                    break
            self.n_args = (n, tuple(pos[n:]))
        self._jfn = jax.jit(fn, static_argnames=self.static or None) if jit else fn
        # Compiled variants of _jfn (one per input shapes and static arguments): see _track_variants.
        self._sized = None      # the jitted function being counted
        self._variants = 0
        self._limit = 0         # 0: limits.max_variants_per_op; grows for an op that needs more
        self._recent = []       # keys of the variants compiled since the last clear
        self._evicted = frozenset()

    def __call__(self, *args, **kwargs):
        if self.n_args is not None and len(args) > self.n_args[0]:
            n, names = self.n_args
            for nm, v in zip(names, args[n:]):
                kwargs[nm] = v
            args = args[:n]
        return apply(self, args, kwargs)

    def __repr__(self):
        return f"<tapejax op {self.name}>"


def freeze(v):
    """Static arguments must be hashable: lists become tuples, scalar tensors Python numbers."""
    if isinstance(v, (list, tuple)):
        return tuple(freeze(e) for e in v)
    if isinstance(v, dict):
        return tuple(sorted((k, freeze(e)) for k, e in v.items()))
    if isinstance(v, _dtypes.DType):
        return v._np
    if isinstance(v, (_TensorBase, np.ndarray, jax.Array)):
        a = np.asarray(v)  # raises a clear error for traced values
        return a.item() if a.ndim == 0 else tuple(a.tolist())
    if isinstance(v, np.generic):
        return v.item()
    return v


class Node:
    """One recorded op application: what the backward pass needs, and nothing more.

    ``args`` are the values the backward pass is given: the inputs, and for an op with
    a hand-written rule its output too (the rule's ``ans``), so the pass does not
    re-run the op's forward computation to get it.
    """

    __slots__ = ("op", "static", "ins", "args", "in_ids", "out_ids", "custom")

    def __init__(self, op, static, ins, out_ids, custom=None, in_ids=None, ans=None):
        self.op = op
        self.static = static
        self.ins = ins                      # Tensors (with ids) or raw constants
        self.args = ins if ans is None else list(ins) + [ans]
        self.in_ids = tuple(t._id if type(t) is Tensor else None for t in ins) if in_ids is None else in_ids
        self.out_ids = out_ids
        self.custom = custom                # Python backward (custom_gradient), else None


def _read_variable(var):
    """A variable read: tapes watching accessed variables start watching it."""
    for r in state.recorders:
        if r._watch_accessed and var.trainable:
            r._watch_variable(var)
    return Tensor(_state.read(var), var._id)


def read_raw(var):
    """The array of a Variable read outside the op layer (random state, optimizers)."""
    return _state.read(var)


def _arg(a, recorders):
    """(tape input, raw value) for one op argument."""
    if type(a) is Tensor:
        return a, a._value
    if isinstance(a, _TensorBase):  # a Variable
        t = _read_variable(a)
        return t, t._value
    if type(a) in (float, int, bool):
        return a, a               # stays a weakly typed Python scalar, like TF's conversion
    if isinstance(a, (list, tuple)) and _contains_tensor(a):
        t = stack_op(*a)         # TF packs lists of tensors with a recorded op
        return t, t._value
    v = to_array(a)
    return v, v


def _converted_like(a, args):
    """A Python list or NumPy operand of an op whose inputs share one dtype (``add``,
    ``maximum``...) converted as TensorFlow converts it: to the first tensor's dtype, or to
    float32 beside a Python float. ``float32 tensor + float64 array`` is float32, and
    ``tf.maximum(0., [1, -1])`` is float32 (JAX would make both float64)."""
    if not isinstance(a, (list, tuple, np.ndarray, np.generic)) or _contains_tensor(a):
        return a
    hint = next((x.dtype._np for x in args if isinstance(x, _TensorBase)), None)
    if hint is None and any(type(x) is float for x in args):
        hint = np.dtype(np.float32)
    if hint is None:
        return a
    arr = np.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else _python_default_dtype(a)
    if arr.dtype.kind == hint.kind or (arr.dtype.kind in "iu" and hint.kind in "fc" and isinstance(a, (list, tuple))):
        return arr.astype(hint)
    return a


def apply(op, args, static):
    """Runs ``op`` on ``args``: unwrap, compute, wrap, and record on watching tapes."""
    recorders = state.recorders
    ins = []
    vals = []
    jax_autodiff = False
    given = static
    jfn = op._jfn
    try:
        for a in args:
            if type(a) is Tensor:  # the common case, inline: this loop runs for every eager op
                ins.append(a)
                vals.append(a._value)
            else:
                if op.same_dtype:
                    a = _converted_like(a, args)
                t, v = _arg(a, recorders)
                ins.append(t)
                vals.append(v)
                jax_autodiff = jax_autodiff or is_jax_autodiff(v)
        if static:
            static = {k: freeze(v) for k, v in static.items()}
        out = jfn(*vals, **static)
    except jax.errors.UnexpectedTracerError:
        raise _out_of_scope(ins) from None
    except (TypeError, ValueError) as e:
        # Values JAX does not take (string tensors, RaggedTensor, SparseTensor): their own
        # implementation of the op, if one claims them. The numeric path never comes here.
        for d in dispatchers:
            result = d(op, args, given)
            if result is not NotImplemented:
                return result
        if len(vals) < len(args):
            raise           # an argument that does not convert: its own error
        raise _op_error(op, vals, static, e) from None
    if op._sized is not jfn or (op._variants >= 0 and jfn._cache_size() != op._variants):
        _track_variants(op, jfn, vals, static)
    if jax_autodiff and not recorders:
        # A jax array that jax.grad/vjp/jvp is differentiating came in: a jax array goes out, as
        # JAX needs of the function it differentiates (a scalar output, a cotangent of the
        # output's pytree). Tensors in (the tape, tf.function) still give Tensors.
        return out
    if isinstance(out, (tuple, list)):
        wrapped = [None if o is None else Tensor(o) for o in out]
        outs = [o for o in wrapped if o is not None]
        result = tuple(wrapped) if isinstance(out, tuple) else wrapped
    else:
        outs = [Tensor(out)]
        result = outs[0]
    if _state._local.tracing:
        _state.name_traced(outs, op.name)
        if op.host is not None and len(outs) == 1:
            _fold(op, args, static, outs[0])
    if recorders:
        # An op with a hand-written rule keeps its (single) output for the backward pass.
        keep = op.vjp is not None and type(result) is Tensor
        _record(recorders, op, static, ins, outs, ans=result if keep else None)
    return result


def _op_error(op, vals, static, error):
    """TensorFlow's exception for arguments an op cannot compute with (incompatible shapes):
    ``InvalidArgumentError`` when running, ``ValueError`` while tracing (TF's shape inference),
    with TensorFlow's message where the op gives one (``op.explain``), else JAX's."""
    if isinstance(error, _JAX_TRACE_ERRORS):
        return error
    tracing = _state._local.tracing or any(isinstance(v, jax.core.Tracer) for v in vals)
    if tracing:   # TensorFlow's shape inference raises ValueError while tracing
        return ValueError(f"{op.name}: {error}")
    message = None
    if op.explain is not None:
        try:
            message = op.explain([tuple(np.shape(v)) for v in vals], static)
        except Exception:   # the explanation must never hide the error
            message = None
    message = message or f"{op.name}: {error}"
    return errors.InvalidArgumentError(None, None, message)


_JAX_TRACE_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                     jax.errors.TracerIntegerConversionError, jax.errors.TracerBoolConversionError,
                     jax.errors.NonConcreteBooleanIndexError)


_FOLD_SIZE = 64   # values larger than this are not folded


def known_value(x):
    """The value of ``x`` when it is known without running a program: a concrete tensor, a
    tensor known while tracing (``_state.known_value``), or a Python or NumPy value."""
    if isinstance(x, _TensorBase):
        return _state.known_value(x) if isinstance(x._value, jax.core.Tracer) else np.asarray(x._value)
    return None if isinstance(x, jax.core.Tracer) else np.asarray(x)


def _fold(op, args, static, out):
    """TensorFlow's constant folding of shape arithmetic: while tracing, an op whose inputs
    are all known (``_state.known_value``, or Python and NumPy values) gets a known value too,
    computed by ``op.host`` in NumPy (with jax.export's symbolic dimensions for unknown sizes)."""
    vals = []
    for a in args:
        v = a._value if isinstance(a, _TensorBase) else a
        if not isinstance(v, jax.core.Tracer) and np.size(v) > _FOLD_SIZE:
            return      # a large constant: not shape arithmetic (and not copied to NumPy)
        a = known_value(a)
        if a is None or a.size > _FOLD_SIZE:
            return
        vals.append(a)
    try:
        value = np.asarray(op.host(*vals, **static))
    except Exception:   # e.g. a comparison of unknown dimensions: the value is not known
        return
    if value.dtype == object or value.dtype.kind in "iub":
        _state.set_known(out, value)


def _host_value(a):
    """An op argument as NumPy, for an op run on the host."""
    if isinstance(a, _TensorBase):
        return np.asarray(a._value)
    return np.asarray(to_array(a))


def _is_text(a):
    if isinstance(a, _TensorBase):
        return a._value.dtype == object
    if isinstance(a, np.ndarray):
        return a.dtype.kind in "OUS"
    if isinstance(a, (list, tuple)):
        return any(_is_text(e) for e in a)
    return isinstance(a, (str, bytes))


def _host_apply(op, args, static):
    """An op on string tensors (NumPy object arrays of bytes on the host): the op's NumPy
    implementation ``op.host`` (recorded for every call while a tf.function with string
    arguments is traced: ``_host.call``). Never on a tape: strings carry no gradients, as in
    TensorFlow."""
    if not any(_is_text(a) for a in args):
        return NotImplemented
    return _host.call(op.name, _host_op, op, args, static)


def _host_op(op, args, static):
    vals = [_host_value(a) for a in args]
    if op.same_dtype:
        for i, (a, v) in enumerate(zip(args, vals)):
            if v.dtype != object:
                if not isinstance(a, _TensorBase):
                    raise TypeError(f"Cannot convert {a!r} to EagerTensor of dtype string")
                raise errors.InvalidArgumentError(None, None, (
                    f"cannot compute {op.name} as input #{i}(zero-based) was expected to be a string tensor "
                    f"but is a {a.dtype.name} tensor [Op:{op.name}]"))
    try:
        if op.host is None:
            raise TypeError(op.name)
        out = op.host(*vals, **static)
    except TypeError:   # an op on numbers (its NumPy version, if any, refuses bytes too)
        raise errors.InvalidArgumentError(None, None, (
            f"Value for attr 'T' of string is not in the list of allowed values of {op.name}: it computes "
            "on numbers. Parse the strings first with tf.strings.to_number (or tf.strings.length, "
            "tf.strings.unicode_decode) [Op:" + op.name + "]")) from None
    if isinstance(out, (tuple, list)):
        return type(out)(_host_out(o) for o in out)
    return _host_out(out)


def _host_out(o):
    if isinstance(o, bytes):
        a = np.empty((), object)
        a[()] = o
        o = a
    o = np.asarray(o)
    if o.dtype == object:
        o.flags.writeable = False
        return Tensor(o)
    return Tensor(jnp.asarray(o))


# What ``apply`` tries when JAX refuses an op's arguments: ``d(op, args, static)`` returns
# the result, or NotImplemented for arguments it does not handle (tapejax.ragged and
# tapejax.sparse add theirs).
dispatchers = [_host_apply]


def _out_of_scope(ins):
    """TensorFlow's error for a tensor of a finished tf.function trace used later."""
    leaked = next((t for t in ins if isinstance(t, _TensorBase) and isinstance(t._value, jax.core.Tracer)),
                  "A tensor")
    return TypeError(
        f"{leaked!r} is out of scope and cannot be used here. Use return values, explicit Python "
        "locals or TensorFlow collections to access it. (A tensor computed inside a tf.function "
        "was kept, e.g. appended to a list, and used after the function returned: return it "
        "instead.)")


def _record(recorders, op, static, ins, outs, custom=None, ans=None):
    # Written for speed: it runs for every op recorded in eager mode.
    node = None
    in_ids = None
    for r in recorders:
        watched = r._watched
        if in_ids is None:
            in_ids = tuple([t._id if type(t) is Tensor else None for t in ins])
        if watched.isdisjoint(in_ids):
            continue
        if node is None:
            # Integer/bool outputs get no id: nothing differentiates through them (None, as TF).
            out_ids = tuple([o._id if _is_float_dtype(o._value.dtype) else None for o in outs])
            if isinstance(static, dict):
                static = tuple(sorted(static.items())) if static else ()
            node = Node(op, static, ins, out_ids, custom, in_ids, ans)
        r._nodes.append(node)
        for i in node.out_ids:
            if i is not None:
                watched.add(i)


def note_barrier(kind, src):
    """Notes, on the recorders that watch ``src``, that a value left the tape here
    (``stop_gradient``, NumPy): what ``GradientTape.explain`` reports. Nothing is recorded."""
    i = getattr(src, "_id", None)
    for r in state.recorders:
        if i in r._watched:
            r._barriers.setdefault(i, kind)


def record_custom(ins, outs, backward):
    """Records a node whose backward is Python code (``custom_gradient``)."""
    recorders = state.recorders
    if recorders:
        _record(recorders, _CUSTOM, (), list(ins), list(outs), custom=backward)


_CUSTOM = Op(lambda *a: a, name="custom_gradient", jit=False)
stack_op = Op(lambda *xs: jnp.stack(xs), name="pack")


class pause_recording:
    """Context in which no recorder sees ops (used by stop_recording, custom_gradient)."""

    __slots__ = ("_saved", "_only")

    def __init__(self, only=None):
        self._only = only

    def __enter__(self):
        st = state
        self._saved = st.recorders
        st.recorders = [] if self._only is None else [r for r in self._saved if r is not self._only]
        return self

    def __exit__(self, *exc):
        state.recorders = self._saved
        return False


# ---------------------------------------------------------------------------
# Compile caches: bounded by count and bytes
# ---------------------------------------------------------------------------

class _Limits:
    """The bounds of the compile caches (``tf.config.experimental.set_compile_cache_limits``)."""

    max_programs = 32                 # whole compiled programs kept per cache (LRU)
    max_bytes = 256 * 2 ** 20         # their memory, measured as resident-set growth
    max_shapes_per_structure = 8      # tape structures seen with more shapes differentiate op by op
    max_variants_per_op = 8           # compiled (shapes, static arguments) variants of one op


limits = _Limits()
_MAX_OP_LIMIT = 4096


def resident_bytes():
    """The process's resident set size in bytes (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


try:
    import resource as _resource
    _PAGE = _resource.getpagesize()
except ImportError:  # not a Unix
    _PAGE = 4096


def data_bytes(values):
    """The bytes of the arrays among ``values`` (Tensors, Variables, arrays; others count 0)."""
    total = 0
    for v in jax.tree_util.tree_leaves(values, is_leaf=lambda x: isinstance(x, _TensorBase)):
        if isinstance(v, _TensorBase):
            stored = getattr(v, "_stored", None)   # a Variable: its storage (reading it would mark it shared)
            v = v._value if stored is None else stored
        total += getattr(v, "nbytes", 0) if not isinstance(v, jax.core.Tracer) else 0
    return total


class CompileCache:
    """A least-recently-used cache of compiled programs, bounded by ``limits.max_programs``
    entries and ``limits.max_bytes`` of memory.

    An entry's bytes are what the process's resident set grew by while it was compiled and
    first run (:meth:`charge`): XLA does not report the host memory a CPU executable holds.
    ``on_evict(value)`` is called for each entry dropped, to free its executables now.
    """

    def __init__(self, on_evict=None):
        self._entries = collections.OrderedDict()   # key -> [value, bytes, insertion number]
        self._bytes = 0
        self._inserted = 0
        self._lock = threading.RLock()
        self._on_evict = on_evict

    def get(self, key):
        with self._lock:
            e = self._entries.get(key)
            if e is None:
                return None
            self._entries.move_to_end(key)
            return e[0]

    def put(self, key, value):
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._inserted += 1
            self._entries[key] = [value, 0, self._inserted]
            dropped = self._trim()
        self._evict(dropped)

    def charge(self, key, nbytes):
        """Adds ``nbytes`` (clamped at 0) to the entry's size, then evicts down to the limits."""
        with self._lock:
            e = self._entries.get(key)
            if e is None or nbytes <= 0:
                return
            e[1] += nbytes
            self._bytes += nbytes
            dropped = self._trim()
        self._evict(dropped)

    def _trim(self):
        dropped = []
        while self._entries and (len(self._entries) > limits.max_programs
                                 or (self._bytes > limits.max_bytes and len(self._entries) > 1)):
            _, (value, nbytes, _) = self._entries.popitem(last=False)
            self._bytes -= nbytes
            dropped.append(value)
        return dropped

    def _evict(self, dropped):
        if self._on_evict is not None:
            for value in dropped:
                self._on_evict(value)

    def trim(self):
        """Applies the current limits (after they changed)."""
        with self._lock:
            dropped = self._trim()
        self._evict(dropped)

    def clear(self):
        with self._lock:
            dropped = [e[0] for e in self._entries.values()]
            self._entries.clear()
            self._bytes = 0
        self._evict(dropped)

    def values(self):
        """The values in the order they were put in (not the order of use)."""
        with self._lock:
            return [e[0] for e in sorted(self._entries.values(), key=lambda e: e[2])]

    @property
    def nbytes(self):
        return self._bytes

    def __len__(self):
        return len(self._entries)

    def __contains__(self, key):
        return key in self._entries


def _track_variants(op, jfn, vals, static):
    """Keeps the compiled variants of an op's jitted function bounded: JAX keeps every one
    (about 1-3 MB each on CPU), so an eager loop over ever new shapes would grow without end.

    When more than the op's limit have been compiled since the last clear, its cache is
    cleared. An op whose working set is larger (a variant cleared is compiled again) gets a
    doubled limit, so a model using one op with many fixed shapes does not recompile them.
    """
    n = getattr(jfn, "_cache_size", None)
    if n is None:          # not jitted (Op(jit=False))
        op._sized, op._variants = jfn, -1
        return
    n = n()
    if op._sized is not jfn:
        op._sized, op._variants, op._recent, op._evicted = jfn, n, [], frozenset()
        return
    if n < op._variants or any(isinstance(v, jax.core.Tracer) for v in vals):
        op._variants = n
        return
    key = hash((tuple([_key(v) for v in vals]), tuple(sorted(static.items())) if static else ()))
    limit = op._limit or limits.max_variants_per_op
    if key in op._evicted:
        limit = op._limit = min(2 * limit, _MAX_OP_LIMIT)
    op._recent.append(key)
    op._variants = n
    if n > limit:
        jfn.clear_cache()
        op._evicted = frozenset(op._recent)
        op._recent = []
        op._variants = jfn._cache_size()


# ---------------------------------------------------------------------------
# Backward pass
# ---------------------------------------------------------------------------

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
        def f(*d):
            it = iter(d)
            return op.fn(*[next(it) if m else x for x, m in zip(inputs, gmask)], **kw)
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
        elif _is_float_dtype(a.dtype):
            filled.append(jnp.zeros_like(a))
        else:
            filled.append(np.zeros(a.shape, jax.dtypes.float0))
    return type(ans)(filled)


def _key(v):
    """Fingerprint entry of one node input: its abstract value."""
    if type(v) is Tensor:
        v = v._value
    if type(v) in (float, int, bool):
        return type(v)
    return (v.shape, v.dtype, getattr(v, "weak_type", False))


class _Plan:
    """The part of a tape between some sources and targets, resolved to slots."""

    __slots__ = ("nodes", "specs", "target_slots", "source_slots", "n_slots", "fingerprint", "custom")


def plan(nodes, target_ids, source_ids):
    """Selects the nodes on a path from a source to a target and numbers the values.

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

    slots = {}

    def slot(i):
        s = slots.get(i)
        if s is None:
            s = slots[i] = len(slots)
        return s

    target_slots = tuple([slot(i) for i in target_ids])
    specs = []
    custom = False
    for n in rel:
        gmask = []
        in_slots = []
        keys = []
        for i, t in zip(n.in_ids, n.ins):
            m = i is not None and i in reach and _is_float_dtype(t._value.dtype)
            gmask.append(m)
            if m:
                in_slots.append(slot(i))
            keys.append(_key(t))
        cmask = []
        out_slots = []
        for o in n.out_ids:
            m = o in needed
            cmask.append(m)
            if m:
                out_slots.append(slot(o))
        gmask, cmask = tuple(gmask), tuple(cmask)
        if n.custom is not None:
            custom = True
            specs.append((None, id(n), gmask, cmask, tuple(in_slots), tuple(out_slots), None))
        else:
            specs.append((n.op, n.static, gmask, cmask, tuple(in_slots), tuple(out_slots), tuple(keys)))
    p = _Plan()
    p.nodes = rel
    p.specs = specs
    p.target_slots = target_slots
    p.source_slots = tuple([slot(i) if i in reach or i in needed else None for i in source_ids])
    p.n_slots = len(slots)
    p.custom = custom
    p.fingerprint = None if custom else (tuple(specs), target_slots, p.source_slots)
    return p


def _reverse(specs, node_inputs, target_slots, seeds, source_slots, vjp):
    """The backward pass: a reverse loop over nodes, accumulating cotangents by slot.

    ``vjp(spec_index, inputs, cts) -> grads`` differentiates one node; the loop is
    shared by the compiled pure path (arrays) and the op-layer path (Tensors).
    """
    ct = {}
    for s, g in zip(target_slots, seeds):
        ct[s] = g if s not in ct else ct[s] + g
    for k in range(len(specs) - 1, -1, -1):
        spec = specs[k]
        out_cts = [ct.get(s) for s in spec[5]]
        if all(c is None for c in out_cts):
            continue
        if any(c is None for c in out_cts):
            # An output needed by the plan received no cotangent: treat it as zero.
            cmask = tuple(m and c is not None for m, c in
                          zip(spec[3], _expand(spec[3], out_cts)))
            out_cts = [c for c in out_cts if c is not None]
            spec = spec[:3] + (cmask,) + spec[4:]
        grads = vjp(k, spec, node_inputs[k], out_cts)
        for s, g in zip(spec[4], grads):
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
        return _node_vjp(spec[0], spec[1], spec[2], spec[3], inputs, cts)

    def backward(node_inputs, seeds):
        _trace_count[0] += 1
        return _reverse(specs, node_inputs, target_slots, seeds, source_slots, vjp)

    return backward


def cached(key, build):
    fn = _BACKWARD_CACHE.get(key)
    if fn is None:
        fn = build()
        _BACKWARD_CACHE.put(key, fn)
    return fn


# Which backward passes are compiled whole. A tape structure that keeps arriving with new
# shapes (variable-length batches, sequences unrolled to each length) would compile a whole
# program per shape. Past ``limits.max_shapes_per_structure`` fingerprints of one family (the
# same kinds of operations), a new fingerprint is differentiated op by op -- each node's VJP
# a small program compiled per (op, shapes) and shared by every tape -- when most of its
# nodes' VJPs were compiled before (an RNN unrolled to a new length: none is new), or the
# first time, to find out. Otherwise one whole program is still the cheaper compile (a new
# batch size makes every node new). A fingerprint that keeps coming back (``_REPEATS``
# times) is compiled whole, as are jacobians.
_REPEATS = 3
_MAX_REMEMBERED = 4096
_families = collections.OrderedDict()   # family -> [fingerprint hashes (up to the limit), probed]
_sightings = collections.OrderedDict()  # fingerprint hash -> times seen, for churning families
_vjp_seen = collections.OrderedDict()   # node VJP keys the op-by-op path compiled
_churn_lock = threading.Lock()


def _remember(table, key, value):
    table[key] = value
    table.move_to_end(key)
    if len(table) > _MAX_REMEMBERED:
        table.popitem(last=False)


def _compile_whole(p, key):
    family = hash(frozenset([(spec[0], spec[1]) for spec in p.specs]))
    h = hash(key)
    with _churn_lock:
        entry = _families.get(family)
        if entry is None:
            entry = [set(), False]
        _remember(_families, family, entry)
        seen = entry[0]
        if len(seen) < limits.max_shapes_per_structure or h in seen:
            seen.add(h)
            return True
        n = _sightings.pop(h, 0) + 1
        _remember(_sightings, h, n)
        if n >= _REPEATS:
            return True
        nodes = [hash((spec[0], spec[1], spec[2], spec[3], spec[6])) for spec in p.specs]
        known = sum(1 for k in nodes if k in _vjp_seen)
        if entry[1] and 2 * known < len(nodes):
            return True
        entry[1] = True
        for k in nodes:
            _remember(_vjp_seen, k, True)
        return False


def clear_compile_caches():
    """Drops every compiled backward pass and what the churn rule remembers."""
    _BACKWARD_CACHE.clear()
    with _churn_lock:
        _families.clear()
        _sightings.clear()
        _vjp_seen.clear()


def _split_args(layout, flat):
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
    layout = tuple(len(n.args) for n in p.nodes)
    seed_mask = tuple(s is not None for s in seeds)
    target_avals = tuple((t._value.shape, t._value.dtype) for t in targets)
    given = [s for s in seeds if s is not None]
    if p.custom:
        return _oplayer_backward(p, targets, seeds)
    key = (p.fingerprint, layout, seed_mask, target_avals, mode, vmap_info)

    def build():
        pure = _pure_backward(p)

        def seeds_of(extra):
            it = iter(extra)
            return [next(it) if m else jnp.ones(shape, dt) for m, (shape, dt) in zip(seed_mask, target_avals)]

        if mode == "grad":
            def fn(*flat):
                node_inputs, extra = _split_args(layout, flat)
                return pure(node_inputs, seeds_of(extra))
        else:
            (shape, dt) = target_avals[0]
            fn = _jacobian_fn(pure, layout, shape, dt, mode, vmap_info)
        return Op(fn, name="gradient" if mode == "grad" else mode)

    op = _BACKWARD_CACHE.get(key)
    new = op is None
    if new:
        if mode == "grad" and not _compile_whole(p, key):
            return _oplayer_backward(p, targets, seeds)
        op = build()
        _BACKWARD_CACHE.put(key, op)
        before = resident_bytes()
    flat = [t for n in p.nodes for t in n.args] + given
    out = apply(op, flat, {})
    if new:
        # The program's size: what the process grew by, less the gradients it returned.
        _BACKWARD_CACHE.charge(key, resident_bytes() - before - data_bytes(out))
    return [None if s is None else g for s, g in zip(p.source_slots, out)]


def _jacobian_fn(pure, layout, shape, dt, mode, use_pfor):
    """jacobian / batch_jacobian: the backward pass mapped over a basis of seeds."""
    def fn(*flat):
        node_inputs, _ = _split_args(layout, flat)
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
    from ._ops import ones_like
    seed_tensors = [ones_like(t) if s is None else s for t, s in zip(targets, seeds)]

    def vjp(k, spec, inputs, cts):
        node = p.nodes[k]
        cts = [c if isinstance(c, _TensorBase) else Tensor(c) for c in cts]
        if node.custom is not None:
            full = _expand(spec[3], cts)
            return node.custom(full, spec[2])
        return _vjp_op(*inputs, *cts, op=spec[0], static=spec[1], gmask=spec[2], cmask=spec[3],
                       n_in=len(inputs))

    node_inputs = [n.args for n in p.nodes]
    return list(_reverse(p.specs, node_inputs, p.target_slots, seed_tensors, p.source_slots, vjp))


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
    from ._ops import stack, reshape, _transpose, zeros_like
    rows = [_oplayer_backward(p, [target], [Tensor(e)]) for e in basis]
    out = []
    for k in range(len(p.source_slots)):
        col = [r[k] for r in rows]
        if all(c is None for c in col):
            out.append(None)
            continue
        like = next(c for c in col if c is not None)
        r = stack([zeros_like(like) if c is None else c for c in col])  # (n, *source)
        src = tuple(r.shape[1:])
        if mode == "jacobian":
            out.append(reshape(r, shape=tuple(shape) + src))
        else:
            perm = (1, 0) + tuple(range(2, r.ndim))  # (batch, n, *source_rest)
            out.append(reshape(_transpose(r, perm=perm), shape=(shape[0],) + tuple(shape[1:]) + src[1:]))
    return out
