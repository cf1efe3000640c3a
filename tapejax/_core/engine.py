"""The tape engine: the op layer and recording.

Data flows one way. ``apply`` unwraps Tensor arguments, runs the op's pure JAX
function (jit-compiled, so an eager op is one dispatch), wraps the result, and
records a ``Node`` on every active recorder that watches one of the inputs.

The backward pass is in ``backward``; the compile caches are in ``cache``.
"""
import functools
import inspect
import sys

import jax
import jax.numpy as jnp
import numpy as np

from . import checks, dtypes as _dtypes, host as _host, new_shapes, state as _state
from .. import errors as errors
from .cache import track_variants
from .tensor import Tensor, _TensorBase, to_array, _contains_tensor, is_jax_autodiff, _python_default_dtype


state = _state._local      # per-thread: ``state.recorders``, the active tapes, innermost last

_FLOAT_KINDS = frozenset("fc")


_BFLOAT16 = np.dtype(jnp.bfloat16)


def is_float_dtype(dt):
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

    __slots__ = ("name", "fn", "vjp", "static", "n_args", "max_args", "arg_names", "takes_name", "variadic",
                 "_jfn", "same_dtype", "host",
                 "explain", "dtype_error", "no_gradient", "__weakref__", "_sized", "_variants", "_limit", "_recent", "_evicted",
                 "_seen", "lazy_shapes", "fixed_inputs", "lazy_fixed", "signatures", "check")

    def __init__(self, fn, vjp=None, name=None, static=(), jit=True, first_on_host=True):
        self.name = name or getattr(fn, "__name__", "op")
        self.same_dtype = False  # inputs share one dtype (TF's type attr T): see _converted_like
        # The op on NumPy arrays: for string tensors (which JAX cannot hold, see _host_apply), and
        # to fold shape arithmetic while tracing (see _fold).
        self.host = None
        self.explain = None      # (shapes, static) -> TensorFlow's message for bad arguments (_op_error)
        self.dtype_error = None  # (args, index, tracing) -> TensorFlow's error for inputs of mixed dtypes
        self.no_gradient = False  # TF registers no gradient for it: differentiating raises LookupError
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
        self.max_args = sys.maxsize if self.n_args is None else self.n_args[0]   # past it: static
        # The tensor parameters' names (TF code passes them as keywords too), and whether the
        # function takes a ``name`` (every TF op does: ``_positional``).
        self.arg_names = () if self.n_args is None else tuple(pos[:n])
        self.takes_name = params is not None and any(p.name == "name" or p.kind == p.VAR_KEYWORD for p in params)
        self._jfn = jax.jit(fn, static_argnames=self.static or None) if jit else fn
        # Compiled variants of _jfn (one per input shapes and static arguments): see cache.track_variants.
        self._sized = None      # the jitted function being counted
        self._variants = 0
        self._limit = 0         # 0: limits.max_variants_per_op; grows for an op that needs more
        self._recent = []       # keys of the variants compiled since the last clear
        self._evicted = frozenset()
        # Input shapes met so far -> times met (see new_shapes); None: always compiled
        # (whole programs: backward passes, tf.function calls).
        self._seen = {} if jit and first_on_host else None
        # Lazy execution's shape inference for it: {(static items, abstract inputs): result}, see
        # lazy._infer (kept by the op: an op made per tape structure takes its entries with it).
        self.lazy_shapes = None
        # Whether its construction fixes its arguments' shapes and dtypes (a backward pass: the
        # plan's), and then lazy execution's result for them once inferred (lazy.defer_recorded).
        self.fixed_inputs = False
        self.lazy_fixed = None
        self.signatures = None  # {(static items, abstract inputs): Signature}, see signature()
        self.check = None       # check(args, static): raises TF's kernel error for bad values (ops/bounds.py)

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._positional(args, kwargs)
        if len(args) > self.max_args:
            n, names = self.n_args
            for nm, v in zip(names, args[n:]):
                kwargs[nm] = v
            args = args[:n]
        if self.check is not None:
            self.check(args, kwargs)
        if defer is not None and (result := defer(self, args, kwargs)) is not NotImplemented:
            return result
        return _run(self, args, kwargs)

    def _positional(self, args, kwargs):
        """``args`` with the keyword arguments that name the next tensor parameters joined in
        order (``tf.clip_by_value(x, clip_value_min=0., clip_value_max=1.)``); TensorFlow's
        ``name=`` dropped (an op's name in a graph: nothing is named here), unless the function
        takes one. The other keyword arguments stay: static arguments."""
        if "name" in kwargs and not self.takes_name:
            del kwargs["name"]
        names = self.arg_names
        k = len(args)
        while k < len(names) and names[k] in kwargs:
            args += (kwargs.pop(names[k]),)
            k += 1
        return args

    def __repr__(self):
        return f"<tapejax op {self.name}>"


class DtypeMismatch(Exception):
    """Raised while an op whose inputs share one dtype (``shares_dtype``) is traced with an input
    of another: ``index`` is the input's position. ``apply`` raises TensorFlow's error instead."""

    def __init__(self, index):
        super().__init__(index)
        self.index = index


def shares_dtype(op, inputs=None):
    """Marks ``op``'s inputs (all, or the positions ``inputs``) as sharing one dtype, TensorFlow's
    type attribute ``T``: ``int32 + float32`` and ``int32 * 2.5`` are errors, not promotions.

    The check is part of the op's function, so it runs when JAX traces the op for new input
    types (eagerly, lazily, in a ``tf.function``), never on a call that hits the compiled
    cache. The reference dtype is the first input's that is not a Python number; a Python
    number fits a dtype of its kind or a wider one (an int any number, a float floating and
    complex ones), as TensorFlow converts it."""
    fn = op.fn

    @functools.wraps(fn)
    def checked(*args, **static):
        ins = args if inputs is None else [args[i] for i in inputs]
        avals = [jax.typeof(a) for a in ins]
        want = next((a.dtype for a in avals if not a.weak_type), None)
        for k, a in enumerate(avals):
            if a.dtype != want and want is not None and not (a.weak_type and number_fits(a.dtype, want)):
                raise DtypeMismatch(k if inputs is None else inputs[k])
        return fn(*args, **static)

    op.same_dtype = inputs or True
    return _checked_by(op, checked)


def _checked_by(op, checked):
    """``op`` computing ``checked``: its function behind a dtype check (``dtype_checked``)."""
    checked.dtype_checked = True
    op.fn = checked
    op._jfn = jax.jit(checked, static_argnames=op.static or None)
    return op


class DtypeNotAllowed(Exception):
    """Raised while an op is traced with an input of a dtype its TensorFlow kernel does not take
    (``allows_dtypes``); ``apply`` raises TensorFlow's error instead."""

    def __init__(self, dtype, tf_op, allowed):
        super().__init__(dtype)
        self.dtype, self.tf_op, self.allowed = dtype, tf_op, allowed


_TF_DTYPES = {"bfloat16": jnp.bfloat16, "half": np.float16, "float": np.float32, "double": np.float64,
              "complex64": np.complex64, "complex128": np.complex128}


def allows_dtypes(op, tf_op, allowed):
    """Limits ``op``'s first input to the dtypes TensorFlow's kernel ``tf_op`` takes, named as TF
    lists them (``("bfloat16", "half", "float", "double")``): ``tf.exp(1)`` and ``tf.sqrt(int32)``
    are TF's InvalidArgumentError, where JAX would compute in float32. Checked while the op is
    traced for new input types, as ``shares_dtype``."""
    dtypes = frozenset(np.dtype(_TF_DTYPES[n]) for n in allowed)
    fn = op.fn

    @functools.wraps(fn)
    def checked(x, *args, **static):
        dtype = jax.typeof(x).dtype
        if dtype not in dtypes:
            raise DtypeNotAllowed(dtype, tf_op, allowed)
        return fn(x, *args, **static)

    return _checked_by(op, checked)


def _not_allowed(e):
    """TensorFlow's error for an input dtype its kernel does not take (``allows_dtypes``)."""
    if _state._local.tracing:
        names = ", ".join(np.dtype(_TF_DTYPES[n]).name for n in e.allowed)
        return TypeError(f"Value passed to parameter 'x' has DataType {np.dtype(e.dtype).name} not in list of "
                         f"allowed values: {names}")
    listed = ", ".join(e.allowed)
    return errors.InvalidArgumentError(None, None, (
        f"Value for attr 'T' of {_dtypes.c_name(e.dtype)} is not in the list of allowed values: {listed}\n\t; "
        f"NodeDef: {{{{node {e.tf_op}}}}}; Op<name={e.tf_op}; signature=x:T -> y:T; attr=T:type,allowed=["
        f"{', '.join('DT_' + n.upper() for n in e.allowed)}]> [Op:{e.tf_op}] name: "))


@functools.lru_cache(maxsize=None)
def number_fits(number, dtype):
    """Whether TensorFlow converts a Python number that JAX types ``number`` to ``dtype``."""
    kinds = (jnp.complexfloating, jnp.inexact, jnp.number)   # complex, float, int numbers
    kind = next(k for k in kinds if jnp.issubdtype(number, k))
    return bool(jnp.issubdtype(dtype, kind))


def freeze(v):
    """Static arguments must be hashable: lists become tuples, scalar tensors Python numbers."""
    if type(v) in _ATOMS:
        return v
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


_ATOMS = frozenset((int, float, bool, str, type(None)))


class Node:
    """One recorded op application: what the backward pass needs, and nothing more.

    ``args`` are the values the backward pass is given: the inputs, and for an op with
    a hand-written rule its output too (the rule's ``ans``), so the pass does not
    re-run the op's forward computation to get it.
    """

    __slots__ = ("op", "static", "ins", "args", "in_ids", "out_ids", "custom", "sig", "lazy", "slots")

    def __init__(self, op, static, ins, out_ids, custom=None, in_ids=None, ans=None, sig=None):
        self.op = op
        self.static = static
        self.ins = ins                      # Tensors (with ids) or raw constants
        self.args = ins if ans is None else list(ins) + [ans]
        self.in_ids = tuple(t._id if type(t) is Tensor else None for t in ins) if in_ids is None else in_ids
        self.out_ids = out_ids
        self.custom = custom                # Python backward (custom_gradient), else None
        # The node's Signature (op, static arguments, abstract inputs), set by lazy execution
        # at record time and otherwise when a gradient first needs it (``backward.plan``).
        self.sig = sig
        # Recorded lazily: the pending program, and the slots of ``args`` in it (lazy._pend).
        self.lazy = self.slots = None


class Signature:
    """An op application's (op, static items, abstract inputs), interned: equal keys give the
    same object, so a tuple of signatures hashes and compares by identity, at C speed. It
    holds nothing (an op made per tape structure is not kept alive by it)."""

    __slots__ = ("__weakref__",)


_MAX_SIGNATURES = 1024   # per op


def signature(op, rest):
    """The interned Signature of ``op`` applied with ``rest`` = (static items, abstract input keys)."""
    per_op = op.signatures
    s = None if per_op is None else per_op.get(rest)
    if s is None:
        s = bounded_entries(op, "signatures", _MAX_SIGNATURES)[rest] = Signature()
    return s


def bounded_entries(op, name, limit):
    """``op``'s cache dict in its attribute ``name`` (made if need be), emptied when it holds
    ``limit`` entries: for an entry about to be added. Later keys get new values, so caches
    keyed by the old ones miss. The op holds its caches: one made per tape structure (a
    backward pass) takes them with it."""
    entries = getattr(op, name)
    if entries is None:
        entries = {}
        setattr(op, name, entries)
    elif len(entries) >= limit:
        entries.clear()
    return entries


def uses(jaxpr, names):
    """Whether ``jaxpr`` (or a jaxpr inside one of its equations: a cond, a scan, a nested jit)
    applies a primitive named in ``names``."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in names:
            return True
        for p in eqn.params.values():
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and uses(inner, names):
                    return True
    return False


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
        t = packed(*a)           # TF packs lists of tensors with a recorded op
        return t, t._value
    v = to_array(a)
    return v, v


def _converted_like(a, args, inputs=True):
    """An operand of an op whose inputs share one dtype (``add``, ``maximum``...) that is not a
    tensor, converted as TensorFlow converts it: NumPy values and Python bools cast to the first
    tensor's dtype (``int32 tensor * np.float32(2.5)`` is int32, as in TensorFlow), lists made
    that dtype where their kind allows, or float32 beside a Python float: ``float32 tensor +
    float64 array`` is float32, and ``tf.maximum(0., [1, -1])`` is float32 (JAX would make both
    float64). What does not convert is left for the op's dtype check (``shares_dtype``)."""
    kind = type(a)
    if kind is float or kind is int:    # the common case: the op's dtype check decides
        return a
    if kind is not bool and not isinstance(a, (list, tuple, np.ndarray, np.generic, jax.Array)):
        return a
    if not isinstance(a, jax.Array) and _contains_tensor(a):
        return a
    if inputs is not True:      # only some arguments share the dtype (tf.where's x and y)
        args = [args[i] for i in inputs]
        if not any(a is x for x in args):
            return a
    tensor = next((x.dtype._np for x in args if isinstance(x, _TensorBase)), None)
    numeric = tensor is not None and tensor != object
    if type(a) is bool:
        return np.asarray(a, tensor) if numeric else a
    hint = tensor
    if hint is None and any(type(x) is float for x in args):
        hint = np.dtype(np.float32)
    if hint is None:
        return a
    if isinstance(a, jax.Array):     # a jax array (or one JAX is tracing) is cast as a NumPy one
        return a.astype(hint) if numeric and a.dtype != hint else a
    if isinstance(a, (np.ndarray, np.generic)):
        arr = np.asarray(a)
        if numeric and arr.dtype != object and arr.dtype.kind not in "USV":
            return arr.astype(hint)
    else:
        arr = _python_default_dtype(a)
    if arr.dtype.kind == hint.kind or (arr.dtype.kind in "iu" and hint.kind in "fc" and isinstance(a, (list, tuple))):
        return arr.astype(hint)
    return a


# Lazy execution (``lazy.py``) sets this while it is on: ``defer(op, args, static)`` records the
# op in the pending program and returns its pending result, or NotImplemented to run it now.
defer = None


def apply(op, args, static):
    """Runs ``op`` on ``args``: unwrap, compute, wrap, and record on watching tapes (lazily:
    records it in the pending program, see ``defer``)."""
    if defer is not None and (result := defer(op, args, static)) is not NotImplemented:
        return result
    return _run(op, args, static)


def _run(op, args, static):
    """``apply`` now."""
    recorders = state.recorders
    ins = []
    vals = []
    jax_autodiff = False
    given = static
    jfn = op._jfn
    n_python = 0
    try:
        for a in args:
            if type(a) is Tensor:  # the common case, inline: this loop runs for every eager op
                ins.append(a)
                vals.append(a._v if a._lazy is None else a._value)
            else:
                if op.same_dtype:
                    a = _converted_like(a, args, op.same_dtype)
                t, v = _arg(a, recorders)
                ins.append(t)
                vals.append(v)
                jax_autodiff = jax_autodiff or is_jax_autodiff(v)
                n_python += type(v) in (float, int, bool)
        if n_python and n_python == len(vals):
            vals = _python_numbers(vals, op.same_dtype)
        if static:
            static = {k: freeze(v) for k, v in static.items()}
        out = new_shapes.call(op, jfn, vals, static)
    except jax.errors.UnexpectedTracerError:
        raise _out_of_scope(ins) from None
    except jax.errors.JaxRuntimeError as e:   # a check staged in the op's program failed (map_fn's body)
        checks.reraise(e)
    except DtypeMismatch as e:
        raise _dtype_error(op, args, e.index) from None
    except DtypeNotAllowed as e:
        raise _not_allowed(e) from None
    except (TypeError, ValueError) as e:
        return _not_numeric(op, args, given, vals, static, e)
    if op._sized is not jfn or (op._variants >= 0 and jfn._cache_size() != op._variants):
        track_variants(op, jfn, vals, static)
    if jax_autodiff and not recorders:
        # A jax array that jax.grad/vjp/jvp is differentiating came in: a jax array goes out, as
        # JAX needs of the function it differentiates (a scalar output, a cotangent of the
        # output's pytree). Tensors in (the tape, tf.function) still give Tensors.
        return out
    if isinstance(out, (tuple, list)):
        outs, result = _wrap_many(out)
    else:
        result = Tensor(out)
        outs = [result]
    if _state._local.tracing:
        _state.name_traced(outs, op.name)
        if op.host is not None and len(outs) == 1:
            _fold(op, args, static, outs[0])
    if recorders:
        # An op with a hand-written rule keeps its (single) output for the backward pass.
        keep = op.vjp is not None and type(result) is Tensor
        _record(recorders, op, static, ins, outs, ans=result if keep else None)
    return result


def _not_numeric(op, args, given, vals, static, error):
    """Values JAX does not take (string tensors, RaggedTensor, SparseTensor): their own
    implementation of the op, if one claims them; else TF's error. The numeric path never
    comes here."""
    for d in dispatchers:
        result = d(op, args, given)
        if result is not NotImplemented:
            return result
    if len(vals) < len(args):
        raise error     # an argument that does not convert: its own error
    raise _op_error(op, vals, static, error) from None


def _python_numbers(vals, same_dtype):
    """An op's arguments when all are Python numbers: TensorFlow converts each to a tensor of its
    default dtype (int32, float32), where JAX would compute in its own (int64 and float64 in 64-bit
    mode); for an op whose inputs share one dtype, the first so and the others to its dtype where
    they convert (``tf.add(1.5, 2)`` is float32, ``tf.multiply(2, 1.5)`` an error)."""
    vals = [_python_default_dtype(v) for v in vals]
    if same_dtype:
        inputs = range(len(vals)) if same_dtype is True else same_dtype
        want = vals[inputs[0]].dtype
        for i in inputs:
            got = vals[i].dtype
            if got != want and want != np.bool_ and (got == np.bool_ or number_fits(got, want)):
                vals[i] = vals[i].astype(want)
    return vals


def _dtype_error(op, args, index):
    """TensorFlow's error for inputs of ``op`` that do not share its dtype (``shares_dtype``)."""
    tracing = _state._local.tracing
    if op.dtype_error is not None:
        return op.dtype_error(args, index, tracing)
    return TypeError(f"{op.name}: input #{index} has another dtype than the others; cast it with tf.cast first.")


def _wrap_many(out):
    """(the output Tensors, the op's result) of an op returning a tuple or list (None entries kept)."""
    wrapped = [None if o is None else Tensor(o) for o in out]
    return [o for o in wrapped if o is not None], (tuple(wrapped) if isinstance(out, tuple) else wrapped)


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
        if type(v) is list and _contains_tensor(v):
            return      # a list holding tensors (tf.stack([[0], [i]])): converted by the op
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
    arguments is traced: ``host.call``). Never on a tape: strings carry no gradients, as in
    TensorFlow."""
    if not any(_is_text(a) for a in args):
        return NotImplemented
    return _host.call(op.name, _host_op, op, args, static)


def _host_op(op, args, static):
    vals = [_host_value(a) for a in args]
    if op.same_dtype:
        for i, (a, v) in enumerate(zip(args, vals)):
            if v.dtype != object and (op.same_dtype is True or i in op.same_dtype):
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
    leaked = next((t for t in ins if isinstance(t, _TensorBase) and isinstance(t._value, jax.core.Tracer)), None)
    return out_of_scope_error(repr(leaked) if leaked is not None else "A tensor")


def out_of_scope_error(what):
    """TensorFlow's TypeError for ``what``, a tensor of a finished trace used outside it (it
    leaked through a list, a global or an attribute); recorded from TF 2.21."""
    return TypeError(
        f"{what} is out of scope and cannot be used here. Use return values, explicit Python locals or "
        "TensorFlow collections to access it.\nPlease see "
        "https://www.tensorflow.org/guide/function#all_outputs_of_a_tffunction_must_be_return_values for "
        "more information.")


def _record(recorders, op, static, ins, outs, custom=None, ans=None, sig=None, in_ids=None, out_ids=None):
    # Written for speed: it runs for every op recorded in eager mode. ``in_ids`` / ``out_ids``
    # when the caller knows them (lazy execution).
    node = None
    for r in recorders:
        watched = r._watched
        if in_ids is None:
            in_ids = tuple([t._id if type(t) is Tensor else None for t in ins])
        if watched.isdisjoint(in_ids):
            continue
        if node is None:
            # Integer/bool outputs get no id: nothing differentiates through them (None, as TF).
            if out_ids is None:
                out_ids = tuple([o._id if is_float_dtype(o._v.dtype) else None for o in outs])
            if isinstance(static, dict):
                static = tuple(sorted(static.items())) if static else ()
            node = Node(op, static, ins, out_ids, custom, in_ids, ans, sig)
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
def _stack(*xs, axis=0):
    return jnp.stack(xs, axis=axis)


stack = shares_dtype(Op(_stack, name="stack", static=("axis",)))    # tf.stack
packed = shares_dtype(Op(_stack, name="packed", static=("axis",)))  # a list of tensors converted to one, as TF names it


