"""tapejax.function: a TensorFlow-style step compiled into one XLA program by ``jax.jit``.

The Python function is traced with its Tensor arguments as JAX inputs, inside a
state scope (``_state.Scope``) that gives each Variable it knows a traced value
and collects what the body assigns. The program takes the values of the state
(Variable arguments, then captured Variables) and returns, beside the outputs,
the new values of the state it assigns, whose input buffers it donates: a step
updates weights in place. The Variables themselves only change when the
compiled program has run, so a body that raises changes nothing.

The state a body touches is found by tracing: a trace that captures Variables it
was not given, creates Variables (allowed on the first call only, as in
TensorFlow: lazy Keras builds, optimizer slots) or assigns Variables it was not
told to donate is thrown away and traced again knowing them. Variables created
while tracing get concrete initial values: Keras layers, optimizers and metrics
compute theirs eagerly, and a body that creates one from a value it computes is
traced again under ``jax.ensure_compile_time_eval``.

String arguments are not inputs of the XLA program: they are traced as placeholders
(``HostValue``) and the string ops on them form a host program run before it on every call
(``tapejax._host``); strings made from the program's values are computed after it.

When a tape outside the call is recording, the whole call is one tape op. Its
VJP re-runs the step under an internal GradientTape and runs tapejax's own
backward pass, so custom gradients inside the function are honoured outside.
"""
import abc
import collections
import contextlib
import types
import functools
import inspect
import itertools
import operator
import gc
import threading
import weakref

import jax
import jax.numpy as jnp
from jax.extend.core import Literal as _Literal
from jax._src.interpreters import partial_eval as _pe   # dce_jaxpr: no public spelling
import numpy as np

from .._core import cache as _cache, dtypes as _dtypes, engine as _engine, host as _host, logs as _logs, state as _state
from .._core import checks as _checks, graph_options as _graph_options, host_eval as _host_eval, variable as _variable
from .. import errors
from .._core.module import Module as _Module
from .._core.state import pause_recording
from .._core.tensor import HostValue, Tensor, _TensorBase, TensorShape, string_array, to_array, is_tracer,\
    check_python_kinds
from .._core.tape import GradientTape
from . import autograph as _autograph



class _Flags(threading.local):
    def __init__(self):
        self.graph_tape = None  # the tape recording a whole trace, for tf.gradients


_flags = _Flags()
_run_eagerly = [False]


def executing_eagerly():
    """``tf.executing_eagerly()``: False while a ``tf.function`` body is traced.

    Example:
        >>> import tapejax as tf
        >>> tf.executing_eagerly()
        True
    """
    return not _state.tracing()


def inside_function():
    """``tf.inside_function()``: True while a ``tf.function`` body is traced.

    Example:
        >>> import tapejax as tf
        >>> tf.inside_function()
        False
        >>> bool(tf.function(lambda: tf.inside_function())())
        True
    """
    return _state.tracing()


def control_dependencies(control_inputs):
    """``tf.control_dependencies(control_inputs)``: a context for the ops that must run after
    ``control_inputs``. Ops already run in program order, eagerly and inside ``tf.function``
    (a Variable's reads and updates are ordered as written), so it adds no ordering; as
    TensorFlow 2 does eagerly, the callables among ``control_inputs`` are called now (not inside a
    traced function, as TF's graph does not call them).

    Example:
        >>> import tapejax as tf
        >>> v = tf.Variable(1.0)
        >>> with tf.control_dependencies([v.assign_add(1.0)]):
        ...     y = tf.identity(v) * 2
        >>> print(y.numpy())
        4.0
    """
    if control_inputs and executing_eagerly():
        for control in control_inputs:
            if callable(control):
                control()
    return contextlib.nullcontext()


def run_functions_eagerly(run_eagerly):
    _run_eagerly[0] = bool(run_eagerly)


def functions_run_eagerly():
    return _run_eagerly[0]


# ---------------------------------------------------------------------------
# TensorSpec and signatures
# ---------------------------------------------------------------------------

class TensorSpec:
    """Describes a Tensor argument: its shape (``None`` for unknown dims) and dtype.

    Args:
        shape: a list of ints / ``None`` (unknown dimension), or ``None`` for any shape.
        dtype: the dtype (``tf.float32`` by default).
        name: an optional name.

    Example:
        >>> import tapejax as tf
        >>> spec = tf.TensorSpec([None, 3], tf.float32)
        >>> spec
        TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
        >>> spec.is_compatible_with(tf.zeros([5, 3]))
        True
    """

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=_dtypes.float32, name=None):
        self.shape = TensorShape(shape) if shape is not None else None
        self.dtype = _dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    @classmethod
    def from_spec(cls, spec, name=None):
        """A TensorSpec of ``spec``'s shape and dtype, named ``name`` (else ``spec``'s name).

        Example:
            >>> import tapejax as tf
            >>> spec = tf.TensorSpec(shape=[8, 3], dtype=tf.int32, name="OriginalName")
            >>> tf.TensorSpec.from_spec(spec, "NewName")
            TensorSpec(shape=(8, 3), dtype=tf.int32, name='NewName')
        """
        return cls(spec.shape, spec.dtype, name or spec.name)

    def is_compatible_with(self, other):
        if isinstance(other, TensorSpec):
            shape, dtype = other.shape, other.dtype
        else:
            shape, dtype = TensorShape(np.shape(other)), _dtypes.as_dtype(to_array(other).dtype)
        if dtype != self.dtype:
            return False
        return self.shape is None or shape is None or self.shape.is_compatible_with(shape)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype and self.name == other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype.name, self.name))

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else str(self.shape)
        return f"TensorSpec(shape={shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


def _is_leaf(x):
    # A spec with ``_tf_bind`` (tf.RaggedTensorSpec) binds its argument itself.
    return isinstance(x, (_TensorBase, TensorSpec)) or x is None or hasattr(x, "_tf_bind")


def _bind_signature(fn_name, signature, params, args, kwargs):
    """Binds arguments to ``input_signature`` by TensorFlow's rules; returns them as Tensors.
    Raises TensorFlow's TypeError ("Binding inputs to tf.function failed due to ...") when an
    argument is missing or extra, or does not convert to its TensorSpec."""
    names = list(params[:len(signature)])
    names += [f"arg_{i}" for i in range(len(names), len(signature))]
    sig = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    sig_text = "(" + ", ".join(f"{n}: {_type_str(s)}" for n, s in zip(names, signature)) + ")"

    def fail(reason):
        return TypeError(f"Binding inputs to tf.function failed due to `{reason}`. Received args: {args} "
                         f"and kwargs: {kwargs} for signature: {sig_text}.")

    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise fail(e) from None
    out = []
    for name, spec in zip(names, signature):
        a = bound.arguments[name]
        spec_leaves, spec_tree = jax.tree_util.tree_flatten(spec, is_leaf=_is_leaf)
        try:
            arg_leaves = spec_tree.flatten_up_to(a)
        except (ValueError, TypeError):
            raise fail(f"Can not cast {a!r} to {type(spec).__name__} type.") from None
        conv = []
        for s, x in zip(spec_leaves, arg_leaves):
            if hasattr(s, "_tf_bind"):
                try:
                    conv.append(s._tf_bind(x))
                except TypeError as e:
                    raise fail(e) from None
                continue
            if isinstance(x, _variable.Variable):
                if x.dtype != s.dtype:
                    raise fail(f"Incompatible type conversion requested to type {s.dtype.name} for "
                               f"`tf.Variable of type {x.dtype.name}. (Variable: {x!r})")
                x = Tensor(_engine.read_raw(x))
            elif not isinstance(x, _TensorBase):
                try:
                    check_python_kinds(x, s.dtype)
                    x = Tensor(to_array(x, s.dtype))
                except (TypeError, ValueError) as e:
                    raise fail(e) from None
            if x.dtype != s.dtype or (s.shape is not None and not s.shape.is_compatible_with(x.shape)):
                raise fail(f"Can not cast {TensorSpec(x.shape, x.dtype)!r} to {s!r}")
            conv.append(x)
        out.append(jax.tree_util.tree_unflatten(spec_tree, conv))
    return tuple(out), {}


# ---------------------------------------------------------------------------
# Arguments and outputs
# ---------------------------------------------------------------------------

def _is_extension_type(x):
    return hasattr(type(x), "_tf_extension_type_fields")


def _arg_is_leaf(x):
    return isinstance(x, _TensorBase) or x is None


class TracingContext:
    """What ``__tf_tracing_type__(context)`` is given (TensorFlow's ``TracingContext``)."""


class TraceType(abc.ABC):
    """How a Python argument of a :func:`function` keys its traces (``tf.types.experimental.TraceType``).

    An object with ``__tf_tracing_type__(context)`` returning a TraceType is keyed by it:
    calls whose arguments have equal trace types reuse a trace, and the trace runs the
    Python function with ``placeholder_value()`` in the argument's place.

    Example:
        >>> import tapejax as tf
        >>> class Kind(tf.types.experimental.TraceType):
        ...     def __init__(self, obj): self.cls, self.obj = type(obj), obj
        ...     def is_subtype_of(self, other): return self == other
        ...     def most_specific_common_supertype(self, others):
        ...         return self if all(self == o for o in others) else None
        ...     def placeholder_value(self, placeholder_context=None): return self.obj
        ...     def __eq__(self, other): return isinstance(other, Kind) and self.cls is other.cls
        ...     def __hash__(self): return hash(self.cls)
        >>> class Scale:
        ...     factor = 3.0
        ...     def __tf_tracing_type__(self, context): return Kind(self)
        >>> f = tf.function(lambda s, x: s.factor * x)
        >>> _ = f(Scale(), tf.constant(1.0)); _ = f(Scale(), tf.constant(2.0))
        >>> f.experimental_get_tracing_count()
        1
    """

    @abc.abstractmethod
    def is_subtype_of(self, other):
        """Whether every value of this type is also one of ``other``."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others):
        """The most specific type of which this and ``others`` are subtypes, or None."""

    def placeholder_value(self, placeholder_context=None):
        """The value the Python function is traced with."""
        raise NotImplementedError(f"{type(self).__name__}.placeholder_value is not implemented: the "
                                  "trace needs a value to run the Python function with.")

    @abc.abstractmethod
    def __eq__(self, other):
        ...

    @abc.abstractmethod
    def __hash__(self):
        ...


def _static_key(x):
    if hasattr(x, "__tf_tracing_type__"):
        return ("trace_type", x.__tf_tracing_type__(TracingContext()))
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return (type(x), x)


def _split_args(args, kwargs):
    """(tensor values, tensors, Variable arguments, leaves, tree, cache key) of a call.

    A Variable argument is state the program reads and writes, keyed by its shape, dtype
    and trainability like in TensorFlow: another Variable of that kind reuses the trace.
    The key is (tree and the other arguments, one (shape, dtype, weak type) per tensor):
    a trace for shapes with unknown dimensions is keyed by those (see ``_Shapes``).
    """
    leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_arg_is_leaf)
    vals, tensors, var_args = [], [], []
    # One replica of a strategy running alone traces its own program (its random draws differ).
    # So does a program traced with Grappler's debug_stripper on (tf.config.optimizer).
    key, tkey = [tree, _state.distribution_key(), _graph_options.trace_key()], []
    first = {}   # Variable id -> its first argument position: f(v, v) is not traced as f(v, w)
    for x in leaves:
        if type(x) is Tensor:
            v = x._value
        elif isinstance(x, (jax.Array, np.ndarray)):
            v = jnp.asarray(x)
        elif isinstance(x, _variable.Variable):
            key.append(("var", x._stored.shape, x._stored.dtype, x.trainable,
                        first.setdefault(x._id, len(var_args))))
            var_args.append(x)
            continue
        else:
            key.append(_static_key(x))
            continue
        vals.append(v)
        tensors.append(x)
        key.append(_TENSOR)
        tkey.append((v.shape, v.dtype, getattr(v, "weak_type", False)))
    return vals, tensors, var_args, leaves, tree, (tuple(key), tuple(tkey))


def _tensor_shapes(args):
    """The shapes of the tensors among positional ``args``, in the order :meth:`Function._call_typed`
    takes their types."""
    return [tuple(shape) for shape, _, _ in _split_args(args, {})[5][1]]


_TENSOR = ("tensor",)   # a tensor argument's entry in a key (its type is in the key's second part)


class _Slot:
    """A tensor argument's place in a traced call (its spec; the value itself is not kept)."""

    __slots__ = ("spec",)

    def __init__(self, spec):
        self.spec = spec


def _slots(leaves, shapes=None):
    out = []
    shapes = iter(shapes or ())
    for x in leaves:
        if type(x) is Tensor or isinstance(x, (jax.Array, np.ndarray)):
            v = to_array(x)
            x = _Slot(TensorSpec(next(shapes, v.shape), v.dtype))
        elif isinstance(x, _variable.Variable):
            x = _VarSlot
        elif hasattr(x, "__tf_tracing_type__"):
            x = x.__tf_tracing_type__(TracingContext()).placeholder_value(None)
        out.append(x)
    return out


_VarSlot = object()   # a Variable argument's place


def _rebuild_args(leaves, tree, vals, var_args):
    it, vit = iter(vals), iter(var_args)
    return jax.tree_util.tree_unflatten(
        tree, [Tensor(next(it)) if type(x) is _Slot else next(vit) if x is _VarSlot else x for x in leaves])


def _output_array(x):
    """An output leaf as an array (TensorFlow converts every returned value), or None to keep it."""
    if isinstance(x, _TensorBase):   # a Variable gives its value after the step's writes
        return x._value
    if isinstance(x, (jax.Array, np.ndarray, jax.core.Tracer, np.generic, bool, int, float, complex)):
        return to_array(x)
    return None                      # None, strings and other Python objects stay as they are


class _HostOut:
    """An output computed by the trace's host program (``_host``), given per call: strings, or
    numbers computed from them (whose size may then change from call to call)."""

    __slots__ = ("ref", "shape", "dtype")

    def __init__(self, ref, shape, dtype):
        self.ref, self.shape, self.dtype = ref, shape, dtype


class _Outputs:
    """Where a body's outputs go: array slots for tensors, the rest kept as Python values
    (string tensors too: constants, or values of the host program, ``_HostOut``)."""

    def __init__(self, out, host=None):
        leaves, self.tree = jax.tree_util.tree_flatten(out, is_leaf=_arg_is_leaf)
        self.orders = _key_orders(out)
        self.kinds = []
        arrays = []
        tensors = []
        for x in leaves:
            if type(x) is Tensor and x._value.dtype == object:
                v = x._value
                self.kinds.append(_HostOut(v.ref, v.spec, _dtypes.string) if type(v) is HostValue else x)
                continue
            ref = host.ref_of(x) if host is not None and type(x) is Tensor else None
            if ref is not None and ref.index in host.shapes:   # numbers the host program computed
                self.kinds.append(_HostOut(ref, x._value.shape, x.dtype))
                continue
            a = _output_array(x)
            self.kinds.append(x if a is None else _Slot)
            if a is not None:
                arrays.append(a)
                tensors.append(x)
        self.arrays = arrays
        self.tensors = tensors

    def forget_values(self):
        """Keeps only shapes: a finished trace must not hold on to its tracers."""
        self.arrays = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in self.arrays]
        self.tensors = None

    def build(self, arrays, env=None):
        """The outputs from the program's ``arrays`` and the host program's values ``env``
        (None: specs, for signatures)."""
        it = iter(arrays)
        leaves = []
        for k in self.kinds:
            if k is _Slot:
                x = next(it)
                leaves.append(x if isinstance(x, Tensor) else Tensor(x))
            elif type(k) is _HostOut:
                leaves.append(TensorSpec(k.shape, k.dtype) if env is None else Tensor(env[k.ref.index]))
            else:
                leaves.append(k)
        return _reordered(jax.tree_util.tree_unflatten(self.tree, leaves), self.orders)


def _key_orders(x):
    """Where the dicts of an output have their keys in an order other than sorted: JAX's
    pytrees sort dict keys, TensorFlow returns a dict in the order it was built. None when
    there is nothing to restore."""
    if type(x) is dict:
        subs = {k: _key_orders(v) for k, v in x.items()}
        try:
            in_order = list(x) == sorted(x)
        except TypeError:
            in_order = False
        return None if in_order and not any(subs.values()) else (list(x), subs)
    if type(x) in (list, tuple):
        subs = [_key_orders(v) for v in x]
        return subs if any(subs) else None
    return None


def _reordered(x, orders):
    if orders is None:
        return x
    if type(x) is dict:
        keys, subs = orders
        return {k: _reordered(x[k], subs[k]) for k in keys}
    return type(x)(_reordered(v, o) for v, o in zip(x, orders))


# ---------------------------------------------------------------------------
# Concrete functions
# ---------------------------------------------------------------------------

def _in_layout(v, x):
    """A new value in the layout tf.distribute gave the Variable: XLA's sharding propagation
    could pick another, and the next call would recompile for it."""
    return x if v._sharding is None else jax.lax.with_sharding_constraint(x, v._sharding)


def _symbolic_specs(vals, shapes, batch=False):
    """The traced arguments of a trace serving unknown dimensions: each None dimension a
    symbol of its own (``jax.export.symbolic_shape``), the others the call's sizes. With
    ``batch``, the unknown first dimensions are one symbol: the batch size of a Keras step's
    data (``x - y`` is then traced, as TensorFlow's graph runs it for equal sizes)."""
    lead = [bool(batch and shape and shape[0] is None) for shape in shapes]
    n = sum(d is None for shape in shapes for d in shape) - sum(lead)
    names = ["b"] * any(lead) + [f"d{i}" for i in range(n)]
    dims = jax.export.symbolic_shape(", ".join(names)) if names else ()
    b, dims = (dims[0], iter(dims[1:])) if any(lead) else (None, iter(dims))
    return [jax.ShapeDtypeStruct(tuple(b if i == 0 and first else next(dims) if d is None else d
                                       for i, d in enumerate(shape)), v.dtype,
                                 weak_type=getattr(v, "weak_type", False))
            for v, shape, first in zip(vals, shapes, lead)]


def _same_batch(tkey):
    """Whether the tensor arguments of a call (its key's second part) of rank 1 or more share
    their first dimension (a trace with a batch symbol serves only those calls)."""
    sizes = {shape[0] for shape, _, _ in tkey if shape}
    return len(sizes) <= 1


def _used_checks(jaxpr, n_real, n_out, flagged, guarded):
    """The checks (``checks.stage_error``) of the ops the program uses: as TensorFlow runs only
    the ops its outputs, its state and its effects need, a check guarding an unused value
    (``tf.gather(x, [5])`` whose result is dropped) raises nothing. Returns the positions of the
    kept checks' conditions, of their values (what their errors say), and the kept ``flagged``
    entries."""
    live = {v for v in jaxpr.outvars[:n_real] + jaxpr.outvars[n_out:] if not isinstance(v, _Literal)}
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(v in live for v in eqn.outvars):
            live.update(v for v in eqn.invars if not isinstance(v, _Literal))
    subjects = iter(jaxpr.outvars[n_out - sum(guarded):n_out])
    kept, pos = [], n_real
    for (error, k), guards in zip(flagged, guarded):
        subject = next(subjects) if guards else None
        if subject is None or isinstance(subject, _Literal) or subject in live:
            kept.append((pos, range(pos + 1, pos + 1 + k), (error, k)))
        pos += 1 + k
    return kept


def _split_flags(outs, flagged):
    """A program's outputs, and its checks' (``checks.stage_error``; ``_finish``): the last,
    their conditions as one array, then their values; ``flagged`` says how many."""
    n = 1 + sum(k for _, k in flagged) if flagged else 0
    return (outs[:len(outs) - n], outs[len(outs) - n:]) if n else (outs, ())


def _raise_flagged(flags, flagged):
    """Raises the first failed check's error. Reading the conditions waits for the program
    (as TensorFlow, the call that failed raises); their values are read only then. The
    program gave the Variables their values back."""
    if not flags:
        return
    failed = np.asarray(flags[0])
    if not failed.any():
        return
    it = iter(jax.device_get(flags[1:]))
    for (error, k), bad in zip(flagged, failed):
        values = [next(it) for _ in range(k)]
        if bad:
            raise error(*values)


class _ChecksAhead:
    """The conditions of a program's checks that depend on its arguments alone and are cheap
    to compute (an index or label range check), computed by NumPy before the program runs
    (``host_eval``): a call can then raise without waiting for its program (which leaves them
    out), so the next call's Python runs while it computes, as for a program without checks. A
    program queued on the device would wait for the programs before it."""

    _MAX_EQNS = 64

    def __init__(self, jaxpr, consts, positions, used):
        self.positions = frozenset(positions)
        self._used = used
        # only the constants the conditions read
        read = {v for v in [*(v for eqn in jaxpr.eqns for v in eqn.invars), *jaxpr.outvars]
                if not isinstance(v, _Literal)}
        kept = [(v, c) for v, c in zip(jaxpr.constvars, consts) if v in read]
        self._jaxpr = types.SimpleNamespace(jaxpr=jaxpr.replace(constvars=[v for v, _ in kept]),
                                            consts=[c for _, c in kept])

    def failed(self, arg_vals):
        """Whether a condition holds (TensorFlow's kernel would raise); None where it cannot
        say: the arguments are traced (a call inside a JAX transformation) or partly in other
        processes, or NumPy does not compute a primitive of the conditions as XLA does
        (``host_eval.Unsupported``)."""
        args = [a for a, u in zip(arg_vals, self._used) if u]
        if any(is_tracer(a) or not getattr(a, "is_fully_addressable", True) for a in args):
            return None     # traced, or spread over other processes' devices (multi-worker)
        try:
            return any(bool(np.any(c)) for c in _host_eval.evaluate(self._jaxpr, args))
        except _host_eval.Unsupported:
            return None

    @classmethod
    def cheap(cls, jaxpr):
        n = 0
        for eqn in jaxpr.eqns:
            n += 1
            if eqn.primitive.name in ("dot_general", "conv_general_dilated") or eqn.effects:
                return False
            for p in eqn.params.values():
                for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        if not cls.cheap(inner):
                            return False
                        n += len(inner.eqns)
        return n <= cls._MAX_EQNS


def _checks_ahead(closed, bads, n_args):
    """A ``_ChecksAhead`` of the checks among ``bads`` (positions of their conditions among
    the outputs of ``closed``) computed cheaply from the first ``n_args`` inputs alone, or None."""
    jaxpr, n_outs = closed.jaxpr, len(closed.jaxpr.outvars)
    ahead = []
    for pos in bads:
        sliced, used = _pe.dce_jaxpr(jaxpr, [i == pos for i in range(n_outs)])
        if not any(used[n_args:]) and not sliced.effects and _ChecksAhead.cheap(sliced):
            ahead.append(pos)
    if not ahead:
        return None
    sliced, used = _pe.dce_jaxpr(jaxpr, [i in ahead for i in range(n_outs)])
    return _ChecksAhead(sliced, closed.consts, ahead, used[:n_args])


class _Polymorphic:
    """A program exported for every size of its unknown dimensions, compiled once per size
    it is called with (the Python function is not traced again)."""

    _MAX_SIZES = 64

    def __init__(self, exported, donate=(1,)):
        self._exported = exported
        self._jitted = jax.jit(exported.call, donate_argnums=donate)
        self._compiled = collections.OrderedDict()

    def __call__(self, arg_vals, don_vals, keep_vals):
        sizes = tuple(a.shape for a in arg_vals)
        compiled = self._compiled.get(sizes)
        if compiled is not None:
            # (A Keras step's hot path: the tracers of a JAX transformation, rare, are found
            # when the compiled program refuses them, not by looking at every value each call.)
            try:
                self._compiled.move_to_end(sizes)
                return compiled(arg_vals, don_vals, keep_vals)
            except TypeError:
                if not any(is_tracer(x) for x in (*arg_vals, *don_vals, *keep_vals)):
                    raise
        if any(is_tracer(x) for x in (*arg_vals, *don_vals, *keep_vals)):
            return self._exported.call(arg_vals, don_vals, keep_vals)
        if compiled is None:
            # jax.jit's dispatch of an exported call is slower than a compiled program's.
            compiled = self._jitted.lower(arg_vals, don_vals, keep_vals).compile()
            self._compiled[sizes] = compiled
            if len(self._compiled) > self._MAX_SIZES:
                self._compiled.popitem(last=False)
        return compiled(arg_vals, don_vals, keep_vals)


_concrete_ids = itertools.count(1)


class ConcreteFunction:
    """One trace of a :func:`function`: a compiled program for one input signature.

    The program takes the tensor arguments and the values of the state (Variable
    arguments, then the Variables the body captures) and returns the outputs and
    the new values of the state it assigns, whose input buffers it donates.

    Example:
        >>> import tapejax as tf
        >>> f = tf.function(lambda x: x * 2.0)
        >>> cf = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
        >>> cf.structured_input_signature
        ((TensorSpec(shape=(2,), dtype=tf.float32, name=None),), {})
        >>> cf(tf.constant([1.0, 2.0]))
        <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    """

    def __init__(self, function, leaves, tree, var_args, captured, assigned, shapes=None):
        self._function = function
        self._leaves = _slots(leaves, shapes)   # statics are baked into the trace; tensors are slots
        # The tensor arguments' shapes with None for the dimensions this trace serves at any
        # size (jax.export shape polymorphism), or None: traced for the shapes it was given.
        self._shapes = shapes
        self._tree = tree
        self._n_args = sum(1 for x in self._leaves if type(x) is _Slot)
        # String arguments (positions among the tensor arguments) are not inputs of the XLA
        # program: the trace's host program (see tapejax._host) takes them, per call.
        self._host_args = tuple(i for i, x in enumerate(x for x in self._leaves if type(x) is _Slot)
                                if x.spec.dtype == _dtypes.string)
        self._host = None
        # With string arguments only their dimensions may be unknown (they are not in the XLA
        # program); a trace whose program takes numbers computed from them by callback, of
        # static shapes, serves only the shapes it was traced with (``_exact``: their key).
        self._host_shapes = [shapes[i] for i in self._host_args] if shapes and self._host_args else None
        self._exact = None
        self._batch = False   # its unknown first dimensions are one (_symbolic_specs)
        if self._host_args:
            shapes = self._shapes = None
        self._n_var_args = len(var_args)
        self.captured = tuple(captured)
        state = list(var_args) + list(captured)
        # The state that is assigned is donated; a Variable argument always is (another
        # Variable may be passed next time: what this one's trace assigned is not known then).
        self._donate = tuple(i for i, v in enumerate(state) if i < len(var_args) or v._id in assigned)
        self._keep = tuple(i for i in range(len(state)) if i not in self._donate)
        self._updated = self._donate   # plus the kept state the trace assigns (see _new_state)
        self._traced = None            # the last jax trace of the program (see _finish)
        self._outputs = None
        self._scope = None
        self._checks = ()
        self._calls_back = False   # the program calls the host (tf.print, asserts, py_function, host ops)
        self._may_fail = False     # one of those callbacks may raise (state.note_may_fail)
        self._flagged = []         # (error, number of values) per check returned as outputs (_raise_flagged)
        self._guarded = []         # per check: whether it guards a value (kept only if the program uses it)
        self._precheck = None      # the checks run ahead of the program (``_ChecksAhead``)
        self._checking = None      # (program, flagged) checking everything: where those fail
        self._no_creation = False  # creating a Variable while traced raises (TensorFlow's singleton rule)
        self._uid = next(_concrete_ids)
        # The states of its seeded random ops (``_state.random_ops``); the Function gives every
        # trace of one signature the same list.
        self._random_ops = []
        self._op = None
        self._key = None
        self._specs = None
        self._jitted = jax.jit(self._pure, donate_argnums=(1,))
        # The Variables a trace is given (jax.jit may trace again, for other input layouts).
        self._trace_state = state

    @property
    def variables(self):
        return self.captured

    # -- the traced body ----------------------------------------------------

    def _body(self, arg_vals, state, state_vals, tape=None, trace=None):
        """Runs the Python function in a state scope giving ``state`` the values ``state_vals``.
        With the JAX ``trace`` of the program, the checks staged at its top are collected as
        outputs (``checks.collecting``).

        Returns (outputs, scope); the Variables themselves are never changed.
        """
        scope = _state.Scope(zip(state, state_vals), tracing=True)
        if trace is not None:
            _checks.collecting(scope, trace)
        if self._no_creation and tape is None:
            scope.forbid_creation = _NOT_SINGLETON
        graph = self._function._graph_tape and tape is None
        recording = tape if tape is not None else _GraphTape() if graph else contextlib.nullcontext()
        host = contextlib.nullcontext()
        if self._host is not None:
            arg_vals = list(arg_vals)
            for i, t in zip(self._host_args, self._host.arguments):
                arg_vals.insert(i, t._value)
            host = _host.recording(self._host)
        with scope, pause_recording(), host, _state.random_ops(self._random_ops):
            args, kwargs = _rebuild_args(self._leaves, self._tree, arg_vals, state[:self._n_var_args])
            for name, a in [*zip(self._function._params, args), *kwargs.items()]:
                if type(a) is Tensor:
                    _state.name_input(a, name)
                elif isinstance(a, (tuple, list, dict)) or hasattr(type(a), "_tf_extension_type_fields"):
                    # the tensors inside a structure: p, p_1, ... as TensorFlow names its placeholders
                    inner = [x for x in jax.tree_util.tree_leaves(a, is_leaf=_arg_is_leaf) if type(x) is Tensor]
                    for i, t in enumerate(inner):
                        _state.name_input(t, name if i == 0 else f"{name}_{i}")
            with recording:
                if tape is not None:
                    arg_tensors = [x for x in jax.tree_util.tree_leaves((args, kwargs), is_leaf=_arg_is_leaf)
                                   if type(x) is Tensor]
                    tape.watch([t for t in arg_tensors if _engine.is_float_dtype(t._value.dtype)])
                    tape.watch([v for v in state if _engine.is_float_dtype(v._stored.dtype)])
                out = self._function._converted_function()(*args, **kwargs)
            outputs = _Outputs(out, self._host)
        if tape is not None:
            outputs.arg_tensors = arg_tensors
        return outputs, scope

    def _new_state(self, state, scope):
        """The values the program returns for the state it updates (``_updated``): the donated
        state, and the kept state the trace assigned (not donated: a first trace learns only
        then that it assigns it; the next signature donates it)."""
        return [_in_layout(state[i], scope.values[state[i]._id]) for i in self._updated]

    def _pure(self, arg_vals, don_vals, keep_vals):
        state = self._trace_state
        given = [None] * len(state)
        for i, x in zip(self._donate, don_vals):
            given[i] = x
        for i, x in zip(self._keep, keep_vals):
            given[i] = x
        trace = _checks.current_trace()
        ctx = jax.ensure_compile_time_eval() if self._function._constants else contextlib.nullcontext()
        with ctx:
            outputs, scope = self._body(arg_vals, state, given, trace=trace)
        if self._host is not None:
            # Values the host ops after the program take: outputs of the program too.
            outputs.arrays.extend(self._host.late_inputs)
        # The checks staged at the top (an index out of range): their values, then the values
        # they guard, outputs last (``_finish`` keeps the checks of the ops the program uses).
        flags = scope.flags
        self._flagged = [(error, len(values)) for _, values, error, _ in flags]
        self._guarded = [subject is not None for *_, subject in flags]
        arrays = (list(outputs.arrays) + [x for bad, values, _, _ in flags for x in (bad, *values)]
                  + [subject for *_, subject in flags if subject is not None])
        outputs.forget_values()
        self._outputs, self._scope = outputs, scope
        self._updated = self._donate + tuple(i for i in self._keep if state[i]._id in scope.written)
        return arrays, self._new_state(state, scope)

    def _trace(self, arg_vals):
        """Traces the body; returns its scope (what it captured, assigned and created).

        Constants are staged into the program like everything else, except when the body
        creates a Variable from a value computed in it (``tf.Variable(tf.zeros(n) + 1)``): then
        the trace is repeated with constant computations evaluated eagerly
        (``jax.ensure_compile_time_eval``), so the Variable gets a concrete initial value.
        Keras layers, optimizers and metrics create theirs concretely and never need that.
        """
        state = self._trace_state
        # The host program: string ops on the string arguments, and on values of the program
        # (tf.strings.as_string(x)); kept when the trace has any.
        self._host = _host.Program()
        if self._host_args:
            for n, i in enumerate(self._host_args):
                self._host.argument(string_array(arg_vals[i]), self._host_shapes and self._host_shapes[n])
            arg_vals = [v for i, v in enumerate(arg_vals) if i not in self._host_args]
        if self._shapes is not None:
            arg_vals = _symbolic_specs(arg_vals, self._shapes, self._batch)
        args = (arg_vals, [state[i]._stored for i in self._donate], [state[i]._stored for i in self._keep])
        self._arg_specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=getattr(a, "weak_type", False))
                           for a in arg_vals]
        try:
            self._traced = self._jitted.trace(*args)
        except _state.TracedInitialValue:
            if self._function._constants:
                raise
            self._function._constants = True
            self._traced = self._jitted.trace(*args)
        # A tracer of an earlier trace (a leaked tensor) is closed over as a constant: JAX 0.10
        # hoists it into Traced._consts (no public spelling), older versions keep it in the jaxpr.
        leaked = [c for c in [*getattr(self._traced, "_consts", ()), *self._traced.jaxpr.consts]
                  if isinstance(c, jax.core.Tracer) and not _live(c)]
        if leaked:
            raise _out_of_scope(leaked[0])
        scope, self._scope = self._scope, None
        self._checks = tuple(scope.checks)
        self._calls_back = _engine.uses(self._traced.jaxpr.jaxpr, _CALLBACKS)
        self._may_fail = scope.may_fail
        if self._host.arguments or self._host.nodes:
            self._host.done()
        else:
            self._host = None
        return scope

    def _finish(self):
        """Makes the traced program the one calls run. When the trace assigns state it was not
        told to donate, or serves unknown dimensions, the program is replayed from the trace's
        jaxpr: a second trace would repeat the Python function's side effects, and TensorFlow
        traces once. The replay donates every assigned Variable, unless a host callback in it may
        fail (an assertion, an index check: a failed run must leave the Variables as they were);
        with unknown dimensions it is exported (``jax.export``) and compiled per size."""
        if self._shapes is None and not set(self._updated) - set(self._donate) and self._host is None \
                and not self._may_fail and not self._flagged:
            self._traced = None
            return
        closed, self._traced = self._traced.jaxpr, None
        if self._host is not None:
            self._host.prune(closed.jaxpr)
        old_don, old_keep, n_state = self._donate, self._keep, len(self._trace_state)
        self._donate = tuple(sorted(set(self._updated)))
        self._keep = tuple(i for i in range(n_state) if i not in self._donate)
        n_out = len(self._outputs.arrays) + sum(1 + n for _, n in self._flagged) + sum(self._guarded)
        n_real = len(self._outputs.arrays)
        kept = _used_checks(closed.jaxpr, n_real, n_out, self._flagged, self._guarded)
        updated = self._updated

        def replay_checking(kept):
            """The program, its checks ``kept`` returned as outputs (``_split_flags``)."""
            bads = [bad for bad, _, _ in kept]
            values = [v for _, vals, _ in kept for v in vals]

            def replay(arg_vals, don_vals, keep_vals):
                given = dict(zip(self._donate, don_vals))
                given.update(zip(self._keep, keep_vals))
                flat = list(arg_vals) + [given[i] for i in old_don] + [given[i] for i in old_keep]
                out = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *flat)
                new, outs = out[n_out:], out[:n_real]
                if bads:   # the checks' conditions as one output, then their values
                    failed = jnp.stack([out[i] for i in bads])
                    outs = outs + [failed] + [out[i] for i in values]
                    # a failed check gives the Variables their values back
                    new = [jnp.where(jnp.any(failed), given[i], x) for i, x in zip(updated, new)]
                return outs, new
            return replay

        donate = () if self._may_fail else (1,)
        self._flagged = [entry for _, _, entry in kept]
        self._precheck = self._checking = None
        if self._shapes is None:
            ahead = _checks_ahead(closed, [bad for bad, _, _ in kept], len(closed.jaxpr.invars) - n_state)
            if ahead is not None:
                # Checks of the arguments alone are computed by NumPy first, so the
                # program itself need not be waited for (``_run``); a failed one runs the program
                # that checks everything, for the error and its values.
                self._precheck = ahead
                self._checking = (jax.jit(replay_checking(kept), donate_argnums=donate), self._flagged)
                kept = [c for c in kept if c[0] not in ahead.positions]
                self._flagged = [entry for _, _, entry in kept]
            self._jitted = jax.jit(replay_checking(kept), donate_argnums=donate)
            return
        state = self._trace_state
        exported = jax.export.export(jax.jit(replay_checking(kept)))(
            self._arg_specs, [state[i]._stored for i in self._donate], [state[i]._stored for i in self._keep])
        self._jitted = _Polymorphic(exported, donate)

    def _discard(self):
        """Drops a trace that will not be used, now: its program holds the initial values of
        Variables it created as constants, and a buffer still referenced cannot be donated."""
        self._jitted = self._outputs = self._traced = None

    # -- calling ------------------------------------------------------------

    def _recorded(self, tensors, state):
        """Whether a recorder outside would record this call (it watches an input or a Variable)."""
        for r in _engine.state.recorders:
            if r._watch_accessed and any(v.trainable for v in state):
                return True
            if r._watched_vars and any(v._id in r._watched_vars for v in state):
                return True
            w = r._watched
            if any(type(t) is Tensor and t._id in w for t in tensors):
                return True
        return False

    def _call(self, arg_vals, tensors, var_args, env=None):
        if self._host is not None and env is None:
            return self._call_host(arg_vals, tensors, var_args)
        try:
            return self._run(arg_vals, tensors, var_args, env)
        except jax.errors.JaxRuntimeError as e:
            # A tf.debugging assertion failed while the program ran: raise its TensorFlow error.
            _checks.reraise(e)

    def _call_host(self, arg_vals, tensors, var_args):
        """A call of a trace with string arguments: its host program runs on them, then the
        XLA program (which reads numbers the host program computed by callback)."""
        host = self._host
        if _engine.state.recorders and self._recorded(tensors, list(var_args) + list(self.captured)):
            raise NotImplementedError(
                f"A GradientTape is recording a call of tf.function {self._function.__name__}, which has "
                "string arguments: tapejax cannot differentiate such a call from outside. Compute "
                "the gradient inside the function, or pass the strings' numbers (tf.strings.to_number, "
                "token ids) instead of strings.")
        with host.lock:
            host.env = env = host.run([arg_vals[i] for i in self._host_args])
            try:
                return self._call([v for i, v in enumerate(arg_vals) if i not in self._host_args], tensors,
                                  var_args, env)
            finally:
                host.env = None

    def _host_wait(self, outs, new_vals, env):
        """Waits for the program's host callbacks, then runs the host ops after it."""
        _wait_for_callbacks(outs, new_vals)
        if self._host.late_refs:
            self._host.run_late(env, [np.asarray(x) for x in outs[len(outs) - len(self._host.late_refs):]])

    def _run(self, arg_vals, tensors, var_args, env=None):
        state = list(var_args) + list(self.captured)
        if _engine.state.recorders and env is None and self._recorded(tensors, state):
            return self._call_recorded(tensors, state)
        if _state._local.scope is not None:
            # Called inside a state scope (a custom_gradient forward pass, a tf.cond branch run
            # eagerly): the state comes from, and goes back to, that scope.
            return self._call_in_scope(arg_vals, state, env)
        donated = [state[i] for i in self._donate]
        don = [v._stored for v in donated]
        # A program that may fail (an assertion) does not take the buffers (``_finish``): a failed
        # run leaves the Variables their values.
        if not self._may_fail and (any(map(_SHARED, donated)) or len(set(map(id, don))) < len(don)):
            don = _unshared(donated)
        keep = [state[i]._stored for i in self._keep]
        jitted, flagged = self._jitted, self._flagged
        if self._precheck is not None:
            failed = self._precheck.failed(arg_vals)
            if failed is not False:
                jitted, flagged = self._checking
        outs, new_vals = jitted(arg_vals, don, keep)
        del don
        outs, flags = _split_flags(outs, flagged)
        if env is not None:   # the host program's values must live until its callbacks ran
            self._host_wait(outs, new_vals, env)
        elif self._calls_back:
            _wait_for_callbacks(outs, new_vals)
        # A new value also returned, given to two Variables or forwarded from an input is held
        # elsewhere: it must not be donated next time.
        new_ids = list(map(id, new_vals))
        held = set(map(id, outs))
        held.update(map(id, keep))
        held.update(map(id, arg_vals))
        held.intersection_update(new_ids)
        if len(set(new_ids)) < len(new_ids):
            held.update(k for k, n in collections.Counter(new_ids).items() if n > 1)
        _state.store_outputs(donated if self._updated == self._donate else [state[i] for i in self._updated],
                             new_vals, held)
        _raise_flagged(flags, flagged)
        for check in self._checks:
            check()
        return self._outputs.build(outs, env)

    def _call_in_scope(self, arg_vals, state, env=None):
        # The scope's values may be the Variables' own buffers: donate copies (a program that
        # may fail takes none).
        copy = (lambda x: x) if self._may_fail else _state.copy_buffer
        jitted, flagged = self._checking or (self._jitted, self._flagged)
        outs, new_vals = jitted(arg_vals, [copy(state[i]._value) for i in self._donate],
                                [state[i]._value for i in self._keep])
        outs, flags = _split_flags(outs, flagged)
        if env is not None:
            self._host_wait(outs, new_vals, env)
        elif self._calls_back:
            _wait_for_callbacks(outs, new_vals)
        for i, x in zip(self._updated, new_vals):
            state[i]._set(x)
        _raise_flagged(flags, flagged)
        for check in self._checks:
            check()
        return self._outputs.build(outs, env)

    def __call__(self, *args, **kwargs):
        f = self._function
        if f._input_signature is not None:
            args, kwargs = _bind_signature(f.__name__, f._input_signature, f._params, args, kwargs)
        vals, tensors, var_args, leaves, tree, key = _split_args(args, kwargs)
        if key != self._key:
            args, kwargs = self._bind_flat(args, kwargs) or self._bind_structured(args, kwargs)
            vals, tensors, var_args, leaves, tree, key = _split_args(args, kwargs)
            for i, ((_, dt, _), (_, want, _)) in enumerate(zip(key[1], self._key[1])):
                if dt != want:
                    # TensorFlow names the call by its function's graph (a process-wide number).
                    op = f"__inference_{f.__name__}_{self._uid}"
                    raise errors.InvalidArgumentError(
                        None, None, f"cannot compute {op} as input #{i}(zero-based) was expected "
                        f"to be a {_dtypes.c_name(want)} tensor but is a {_dtypes.c_name(dt)} tensor [Op:{op}]")
            if self._exact is not None and key != self._exact or not self._serves(key):
                # Other shapes than this trace's (an unknown rank, a size 0): the function traces them.
                return f(*args, **kwargs)
        return self._call(vals, tensors, var_args)

    def _bind_flat(self, args, kwargs):
        """TensorFlow's call of a concrete function with only its tensor arguments (the Python
        arguments it was traced with are bound): ``f.get_concrete_function(spec, 3)(x)``.
        Returns the arguments in the traced structure, or None for another form of call."""
        n = sum(1 for x in self._leaves if type(x) is _Slot or x is _VarSlot)
        if kwargs or len(args) != n or not all(
                isinstance(a, (_TensorBase, jax.Array, np.ndarray, np.generic, int, float, bool)) for a in args):
            return None
        it = iter(args)
        leaves = [next(it) if type(x) is _Slot or x is _VarSlot else x for x in self._leaves]
        return jax.tree_util.tree_unflatten(self._tree, leaves)

    def _bind_structured(self, args, kwargs):
        """Binds a call with the traced function's own signature, as TensorFlow does: a Python
        argument must equal the value it was traced with, a tensor argument converts to its
        spec. Returns the arguments in the traced structure; raises TypeError otherwise."""
        sig = self._function._signature()
        traced_args, traced_kwargs = jax.tree_util.tree_unflatten(
            self._tree, [x.spec if type(x) is _Slot else x for x in self._leaves])

        def fail(reason):
            return TypeError(f"Binding inputs to tf.function failed due to `{reason}`. Received args: "
                             f"{args} and kwargs: {kwargs} for signature: {self._signature_str()}.\n"
                             f"Fallback to flat signature also failed due to: {self._flat_error(args, kwargs)}")

        try:
            traced = sig.bind(*traced_args, **traced_kwargs)
            call = sig.bind_partial(*args, **kwargs)
        except TypeError as e:
            raise fail(e) from None
        traced.apply_defaults()
        call.apply_defaults()
        for name, want in traced.arguments.items():
            if name not in call.arguments:
                if any(isinstance(x, TensorSpec) or x is _VarSlot for x in
                       jax.tree_util.tree_leaves(want, is_leaf=lambda x: _is_leaf(x) or x is _VarSlot)):
                    raise fail(f"missing a required argument: '{name}'")
                call.arguments[name] = want   # a Python argument: the value it was traced with
            given = call.arguments[name]
            want_leaves, want_tree = jax.tree_util.tree_flatten(want, is_leaf=lambda x: _is_leaf(x) or x is _VarSlot)
            try:
                given_leaves = want_tree.flatten_up_to(given)
            except (TypeError, ValueError):
                raise fail(f"Can not cast {given!r} to {_type_str(want)}") from None
            out = []
            for w, g in zip(want_leaves, given_leaves):
                if isinstance(w, TensorSpec):
                    if not isinstance(g, _TensorBase):
                        try:
                            g = Tensor(to_array(g, w.dtype))
                        except (TypeError, ValueError):
                            raise fail(f"Can not cast {g!r} to {_type_str(w)}") from None
                elif w is _VarSlot:
                    if not isinstance(g, _variable.Variable):
                        raise fail(f"Can not cast {g!r} to a tf.Variable")
                elif _static_key(w) != _static_key(g):
                    raise fail(f"Can not cast {g!r} to {_type_str(w)}")
                out.append(g)
            call.arguments[name] = want_tree.unflatten(out)
        names = list(sig.parameters)
        return (tuple(call.arguments[names[i]] for i in range(len(traced_args))),
                {k: call.arguments[k] for k in traced_kwargs})

    def _flat_error(self, args, kwargs):
        """Why the call does not fit the trace's flat signature (its tensor arguments, by the
        names TensorFlow gives them), in TensorFlow's words."""
        names = []
        for name, _, a in self._parameters():
            leaves = [x for x in jax.tree_util.tree_leaves(a, is_leaf=lambda x: _is_leaf(x) or x is _VarSlot)
                      if isinstance(x, TensorSpec) or x is _VarSlot]
            names += [name] if len(leaves) == 1 else [f"{name}_{i}" for i in range(len(leaves))]
        summary = f"{self._function.__name__}({', '.join(names)})"
        if len(args) > len(names):
            return f"{summary} takes {len(names)} positional arguments, got {len(args)}."
        kwargs = dict(kwargs)
        given = list(args)
        for name in names[len(given):]:
            if name not in kwargs:
                missing = sorted(set(names) - set(names[:len(args)]) - set(kwargs))
                return f"{summary} missing required arguments: {', '.join(missing)}."
            given.append(kwargs.pop(name))
        if kwargs:
            for k in kwargs:
                if k in names[:len(args)]:
                    return f"{summary} got two values for '{k}'."
            return f"{summary} got unexpected keyword arguments: {', '.join(sorted(kwargs))}."
        for i, a in enumerate(given):
            if not isinstance(a, _TensorBase):
                return f"{summary}: expected argument #{i}(zero-based) to be a Tensor; got {type(a).__name__} ({a})."
        return f"{summary} does not take these arguments."

    def _serves(self, key):
        """Whether this trace's program runs a call with this key (sizes its unknown dimensions
        take included)."""
        if key[0] != self._key[0] or len(key[1]) != len(self._key[1]):
            return False
        for (shape, dt, weak), (want, want_dt, want_weak) in zip(key[1], self._key[1]):
            if dt != want_dt or weak != want_weak or len(shape) != len(want) or not all(
                    w == d or (w is None and d > 0) for w, d in zip(want, shape)):
                return False
        return True

    @property
    def structured_input_signature(self):
        if self._specs is not None:
            return self._specs
        args, kwargs = jax.tree_util.tree_unflatten(
            self._tree, [x.spec if type(x) is _Slot else x for x in self._leaves])
        # An ExtensionType argument is described by its Spec (it was rebuilt with TensorSpecs inside).
        args, kwargs = jax.tree_util.tree_map(lambda x: x._type_spec if _is_extension_type(x) else x, (args, kwargs),
                                              is_leaf=_is_extension_type)
        return tuple(args), dict(kwargs)

    @property
    def structured_outputs(self):
        """The outputs as symbolic tensors, named as TensorFlow's graph outputs (``Identity:0``,
        ``Identity_1:0``, ...)."""
        o = self._outputs
        if not o:
            return None
        out = o.build([jax.ShapeDtypeStruct(a.shape, a.dtype) for a in o.arrays])
        tensors = [x for x in jax.tree_util.tree_leaves(out, is_leaf=_arg_is_leaf) if type(x) is Tensor]
        for i, t in enumerate(tensors):
            _state.name_input(t, "Identity" if i == 0 else f"Identity_{i}")
        return out

    def _parameters(self):
        """(name, kind, spec or value) of each argument of the trace, in the function's order."""
        args, kwargs = self.structured_input_signature
        try:
            sig = self._function._signature()
            bound = sig.bind(*args, **kwargs)
        except (TypeError, ValueError):
            return ([(f"arg_{i}", "POSITIONAL_OR_KEYWORD", a) for i, a in enumerate(args)]
                    + [(k, "KEYWORD_ONLY", a) for k, a in kwargs.items()])
        return [(k, sig.parameters[k].kind.name, a) for k, a in bound.arguments.items()]

    def _signature_str(self):
        params = ", ".join(f"{k}: {_type_str(a)}" for k, _, a in self._parameters())
        return f"({params}) -> {_type_str(self.structured_outputs)}"

    def __repr__(self):
        return f"<ConcreteFunction {self._signature_str()} at 0x{id(self):X}>"

    @property
    def function_type(self):
        """The trace's signature, as TensorFlow's ``FunctionType`` prints it.

        Example:
            >>> import tapejax as tf
            >>> f = tf.function(lambda a: a + a)
            >>> print(f.get_concrete_function(tf.TensorSpec([], tf.string)).function_type)
            (a: TensorSpec(shape=(), dtype=tf.string, name=None)) -> TensorSpec(shape=(), dtype=tf.string, name=None)
        """
        return FunctionType(self)

    def __str__(self):
        return "ConcreteFunction " + self.pretty_printed_signature()

    def pretty_printed_signature(self, verbose=True):
        """The signature as TensorFlow prints it: ``Input Parameters:`` / ``Output Type:``."""
        lines = ["Input Parameters:"]
        lines.extend(f"  {k} ({kind}): {_type_str(a)}" for k, kind, a in self._parameters())
        lines.append("Output Type:")
        lines.append(f"  {_type_str(self.structured_outputs)}")
        lines.append("Captures:")
        if self.captured:
            lines.extend(f"  {id(v)}: TensorSpec(shape={_shape_str(v.shape)}, dtype=tf.resource, name=None)"
                         for v in self.captured)
        else:
            lines.append("  None")
        return "\n".join(lines)

    @property
    def inference_fn(self):
        """The trace as one callable taking its tensor arguments, flat (TensorFlow's
        ``AtomicFunction``, named ``__inference_<function>_<n>``).

        Example:
            >>> import tapejax as tf
            >>> double = tf.function(lambda a: a + a)
            >>> atomic = double.get_concrete_function(tf.TensorSpec([], tf.string)).inference_fn
            >>> atomic(tf.constant("a"))
            <tf.Tensor: shape=(), dtype=string, numpy=b'aa'>
        """
        return AtomicFunction(self)

    @property
    def graph(self):
        raise NotImplementedError("tapejax compiles with jax.jit and has no tf.Graph. Use "
                                  "jax.make_jaxpr or concrete_function.lower() (not yet) to inspect it.")

    # -- the whole call as one tape op (a tape outside is recording) ---------

    def _call_recorded(self, tensors, state):
        if self._op is None:
            # op.fn is what backward passes re-evaluate: muted, so tf.print prints once per call.
            self._op = _engine.Op(self._op_fn_quiet, vjp=self._op_vjp, first_on_host=False,
                                  name=f"function_{self._function.__name__}")
            self._op._jfn = jax.jit(self._op_fn)
        n_out = len(self._outputs.arrays)
        self._call_state = state
        res = list(self._op(*tensors, *state))
        for i, x in zip(self._updated, res[n_out:]):
            state[i]._set(x._value)
        return self._outputs.build(res[:n_out])

    def _op_fn(self, *flat):
        n = self._n_args
        state = self._call_state
        outputs, scope = self._body(list(flat[:n]), state, flat[n:])
        return tuple(outputs.arrays) + tuple(self._new_state(state, scope))

    def _op_fn_quiet(self, *flat):
        _checks.muted.depth += 1
        try:
            return self._op_fn(*flat)
        finally:
            _checks.muted.depth -= 1

    def _op_vjp(self, ans, *flat):
        n_out = len(self._outputs.arrays)
        state = self._call_state

        def pull(cts):
            return self._backward(list(flat), list(cts[:n_out]), state)

        return pull

    def _backward(self, flat, cts, state):
        """The VJP of a call: re-run the body under a tape, then tapejax's backward pass."""
        n = self._n_args
        tape = GradientTape(persistent=True, watch_accessed_variables=False)
        _checks.muted.depth += 1
        try:
            outputs, scope = self._body(flat[:n], state, flat[n:], tape=tape)
            targets, seeds = [], []
            for t, c in zip(outputs.tensors, cts):
                if isinstance(t, _TensorBase) and _engine.is_float_dtype(t.dtype._np) \
                        and c is not None and c.dtype != jax.dtypes.float0:
                    targets.append(t)
                    seeds.append(Tensor(c))
            sources = outputs.arg_tensors + list(state)
            with scope:
                grads = (tape.gradient(targets, sources, output_gradients=seeds) if targets
                         else [None] * len(sources))
        finally:
            _checks.muted.depth -= 1
        # None (unconnected) stays None: the engine then gives a source only reached this way None.
        # An IndexedSlices gradient becomes dense here.
        return tuple(None if g is None else to_array(g) for g in grads)


class AtomicFunction:
    """A traced function called with its flat tensor arguments (``ConcreteFunction.inference_fn``)."""

    def __init__(self, concrete):
        self._concrete = concrete

    @property
    def name(self):
        return f"__inference_{self._concrete._function.__name__}_{self._concrete._uid}".encode()

    @property
    def function_type(self):
        return self._concrete.function_type

    def __call__(self, *args):
        if self._concrete.captured:
            raise ValueError("The FunctionType defines captured inputs. Use call_with_captures instead.")
        return self._concrete(*args)


class FunctionType:
    """The signature of a :class:`ConcreteFunction` (``function_type``): its ``str`` is
    ``(a: TensorSpec(...)) -> TensorSpec(...)``, its ``repr`` the pretty-printed signature."""

    def __init__(self, concrete):
        self._concrete = concrete

    @property
    def output(self):
        return self._concrete.structured_outputs

    def __str__(self):
        return self._concrete._signature_str()

    def __repr__(self):
        return self._concrete.pretty_printed_signature()


def _live(tracer):
    """Whether ``tracer`` belongs to a trace running now (an enclosing jax transformation the
    function is called under may close over its values), rather than to a finished one."""
    try:
        from jax._src import core as _jcore   # the active trace: no public spelling
        t = _jcore.trace_ctx.trace
    except (ImportError, AttributeError):
        return True
    while t is not None:
        if tracer._trace is t:
            return True
        t = getattr(t, "parent_trace", None)
    return False


def _out_of_scope(tracer):
    """TensorFlow's TypeError for a tensor of an earlier trace used in this one (it leaked out
    of its function through a global or an attribute; JAX made it a constant of this trace)."""
    # Only on this error path: the Tensor that holds the tracer, for its name.
    leaked = next((r for r in gc.get_referrers(tracer) if isinstance(r, Tensor)), None)
    return _engine.out_of_scope_error(repr(leaked) if leaked is not None else "A tensor of an earlier trace")


def _signature_shapes(signature):
    """Per tensor argument of an input_signature with unknown dimensions, its shape (None for
    an unknown rank: traced per rank); None when every dimension is known."""
    if signature is None:
        return None
    specs = [s for s in jax.tree_util.tree_leaves(signature, is_leaf=_is_leaf) if isinstance(s, TensorSpec)]
    shapes = [None if s.shape is None else tuple(s.shape) for s in specs]
    return shapes if any(s is not None and None in s for s in shapes) else None


def _shape_str(shape):
    return str(TensorShape(shape))


def _type_str(x):
    """TensorFlow's description of a structure of specs (``pretty_printed_concrete_signatures``)."""
    if isinstance(x, (TensorSpec, jax.ShapeDtypeStruct)):
        shape = x.shape if isinstance(x, TensorSpec) else x.shape
        dt = x.dtype.name if isinstance(x, TensorSpec) else _dtypes.as_dtype(x.dtype).name
        return f"TensorSpec(shape={'<unknown>' if shape is None else _shape_str(shape)}, dtype=tf.{dt}, name=None)"
    if isinstance(x, Tensor):
        return _type_str(TensorSpec(x.shape, x.dtype))
    if isinstance(x, (list, tuple)):
        name = "List" if isinstance(x, list) else "Tuple"
        return f"{name}[{', '.join(_type_str(e) for e in x)}]"
    if isinstance(x, dict):
        return "Dict[" + ", ".join(f"[{k!r}, {_type_str(v)}]" for k, v in x.items()) + "]"
    if hasattr(x, "_tf_bind"):
        return repr(x)
    return f"Literal[{x!r}]"


# ---------------------------------------------------------------------------
# function
# ---------------------------------------------------------------------------

_NON_FIRST_CALL = "Creating variables on a non-first call to a function decorated with tf.function."
_NOT_SINGLETON = (
    "tf.function only supports singleton tf.Variables created on the first call. Make sure the "
    "tf.Variable is only created once or created outside tf.function. See "
    "https://www.tensorflow.org/guide/function#creating_tfvariables for more information.")
_RETRACING = (
    "{n} out of the last {calls} calls to {name} triggered tf.function retracing. Tracing is "
    "expensive and the excessive number of tracings could be due to (1) creating @tf.function "
    "repeatedly in a loop, (2) passing tensors with different shapes, (3) passing Python objects "
    "instead of tensors. For (1), please define your @tf.function outside of the loop. For (2), "
    "@tf.function has reduce_retracing=True option that can avoid unnecessary retracing. For (3), "
    "please refer to https://www.tensorflow.org/guide/function#controlling_retracing and "
    "https://www.tensorflow.org/api_docs/python/tf/function for  more details.")
_MAX_TRACES = 8            # of one signature while new state keeps appearing
_RETRACE_HISTORY = 10      # TensorFlow looks at the calls in a window of 10 ...
_RETRACE_WARN = 5          # ... warns when 5 of them traced ...
_RETRACE_MAX_WARNINGS = 2  # ... and at most twice per Python function


class _TracingDetector:
    """TensorFlow's frequent-tracing detector (``_FrequentTracingDetector``), one per Python
    function: it logs the retracing warning when 5 of the calls in the last window of 10
    traced, at most twice."""

    __slots__ = ("_calls_per_tracing", "_call_count", "_warnings")

    def __init__(self):
        self._calls_per_tracing = []   # per trace: 1 + the calls after it that did not trace
        self._call_count = 0
        self._warnings = 0

    def called_with_tracing(self, python_function):
        self._call_count += 1
        self._calls_per_tracing.append(1)
        while self._calls_per_tracing and \
                self._call_count - self._calls_per_tracing[0] > _RETRACE_HISTORY:
            self._call_count -= self._calls_per_tracing.pop(0)
        if self._warnings >= _RETRACE_MAX_WARNINGS or len(self._calls_per_tracing) < _RETRACE_WARN:
            return
        self._warnings += 1
        _logs.warning(_RETRACING.format(n=len(self._calls_per_tracing), calls=self._call_count,
                                       name=python_function))

    def called_without_tracing(self):
        if not self._calls_per_tracing:
            self._calls_per_tracing = [0]
        self._calls_per_tracing[-1] += 1
        self._call_count += 1


_detectors = weakref.WeakKeyDictionary()
_detectors_lock = threading.Lock()


def _tracing_detector(python_function):
    """The detector of a Python function: shared, as in TensorFlow, by every tf.function made
    from the same code (a tf.function created in a loop)."""
    target = python_function
    while hasattr(target, "__wrapped__"):
        target = target.__wrapped__
    target = getattr(target, "__func__", target)
    key = getattr(target, "__code__", target)
    with _detectors_lock:
        try:
            d = _detectors.get(key)
            if d is None:
                d = _detectors[key] = _TracingDetector()
        except TypeError:     # not weakly referenceable: a detector of its own
            d = _TracingDetector()
        return d


def _drop_concrete(conc):
    """Frees the executables of a trace evicted from a Function's cache (called again, its
    signature is traced again)."""
    for jitted in (conc._jitted, conc._op._jfn if conc._op is not None else None):
        clear = getattr(jitted, "clear_cache", None)
        if clear is not None:
            clear()


_CALLBACKS = ("io_callback", "pure_callback", "debug_callback")   # primitives calling the host
_SHARED = operator.attrgetter("_shared")


def _unshared(donated):
    """The buffers of the Variables ``donated``, where some may be held elsewhere (read out, or
    one buffer given to two Variables): those are replaced by copies first."""
    seen = set()
    for v in donated:
        if v._shared or id(v._stored) in seen:
            _state.store(v, _state.copy_buffer(v._stored), shared=False)
        seen.add(id(v._stored))
    return [v._stored for v in donated]


def _wait_for_callbacks(outs, new_vals):
    """Waits until the program's host callbacks have run, so that one that fails (an assertion)
    raises at the call, as in TensorFlow: on a GPU a program runs asynchronously, and its
    failure would otherwise surface at some later read."""
    jax.block_until_ready((outs, new_vals))
    jax.effects_barrier()


class Function:
    __tapejax_do_not_convert__ = True   # AutoGraph calls a tf.function as it is
    """A Python function compiled into one XLA program per input signature.

    Made by :func:`function`. Calls with a known signature run the compiled
    program; Variables read or assigned inside are passed in and written back.
    """

    def __init__(self, python_function, input_signature=None, jit_compile=None, reduce_retracing=False,
                 name=None, autograph=True):
        self._python_function = python_function
        self._autograph = autograph
        self._converted = None     # AutoGraph's conversion, made at the first trace
        self._bound_to = None      # (Function, instance ref) of a method bound by __get__
        functools.update_wrapper(self, python_function, updated=())
        self.__name__ = name or getattr(python_function, "__name__", "function")
        self._input_signature = None if input_signature is None else tuple(input_signature)
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._cache = _cache.CompileCache(on_evict=_drop_concrete)   # key -> ConcreteFunction (LRU)
        # Shapes with unknown (None) dimensions, traced once for every size (see _generalize):
        # the input_signature's, per tensor argument, or (reduce_retracing) the widest seen
        # so far per argument structure.
        self._sig_shapes = _signature_shapes(self._input_signature)
        self._widened = {}
        self._symbolic = True      # False once a body could not be traced with unknown dimensions
        self._aliases = {}         # a call's own key -> the key of the trace serving it
        self._typed = {}           # (type, key) of a typed call (_call_typed) -> the key of the trace serving it
        self._spec_keys = []       # keys of get_concrete_function traces with unknown dimensions
        self._variables = {}       # id -> Variable: every Variable a trace of this function captured
        self._assigned = set()     # ids of the Variables some trace assigned (their buffers are donated)
        self._trace_count = 0
        self._created_variables = False   # the first call created Variables
        self._detector = None      # TensorFlow's frequent-tracing detector of the Python function
        self._constants = False   # trace with constants evaluated eagerly (ConcreteFunction._trace)
        self._graph_tape = False  # the body calls tf.gradients: traces record every op
        self._bound = weakref.WeakKeyDictionary()
        self._bound_by_id = {}
        try:
            self._params = [p.name for p in inspect.signature(python_function).parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            self._params = []

    @property
    def python_function(self):
        return self._python_function

    def _signature(self):
        """The Python function's signature (a method's without its instance)."""
        sig = inspect.signature(self._python_function)
        if self._bound_to is not None:
            sig = sig.replace(parameters=list(sig.parameters.values())[1:])
        return sig

    def _converted_function(self):
        """The function that is traced: AutoGraph's conversion of the Python function (autograph)."""
        if self._converted is None:
            if self._bound_to is not None:
                # A method: the class's function is converted once, for every instance.
                owner, ref = self._bound_to
                conv = owner._converted_function()
                self._converted = functools.wraps(conv)(lambda *a, **k: conv(ref(), *a, **k))
            elif self._autograph:
                self._converted = _autograph.convert(self._python_function)
            else:
                self._converted = self._python_function
        return self._converted

    @property
    def input_signature(self):
        return self._input_signature

    def experimental_get_tracing_count(self):
        """How many times this function has been traced, counted as TensorFlow does.

        One per input signature, plus one on a first call that created Variables
        (TensorFlow traces it once creating them and once more using them).

        Example:
            >>> import tapejax as tf
            >>> f = tf.function(lambda x: x + 1)
            >>> _ = f(tf.constant(1.0)); _ = f(tf.constant(2.0)); _ = f(tf.constant([1.0]))
            >>> f.experimental_get_tracing_count()
            2
        """
        return self._trace_count

    def pretty_printed_concrete_signatures(self, verbose=True):
        """The signatures of every trace, as TensorFlow prints them.

        Example:
            >>> import tapejax as tf
            >>> f = tf.function(lambda x: x * 2)
            >>> _ = f(tf.constant([1.0, 2.0]))
            >>> print(f.pretty_printed_concrete_signatures())
            Input Parameters:
              x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.float32, name=None)
            Output Type:
              TensorSpec(shape=(2,), dtype=tf.float32, name=None)
            Captures:
              None
        """
        return "\n\n".join(c.pretty_printed_signature(verbose) for c in self._cache.values())

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:
            # Unhashable instances (a class defining __eq__) are looked up by identity.
            entry = self._bound_by_id.get(id(instance))
            bound = entry[1] if entry is not None and entry[0]() is instance else None
        if bound is None:
            ref = weakref.ref(instance) if _weakrefable(instance) else (lambda: instance)
            fn = self._python_function

            @functools.wraps(fn)
            def method(*args, **kwargs):
                return fn(ref(), *args, **kwargs)

            bound = Function(method, self._input_signature, self._jit_compile, self._reduce_retracing,
                             name=self.__name__, autograph=self._autograph)
            bound._params = self._params[1:]
            bound._bound_to = (self, ref)
            try:
                self._bound[instance] = bound
            except TypeError:
                self._bound_by_id[id(instance)] = (ref, bound)
        return bound

    def __call__(self, *args, **kwargs):
        if _run_eagerly[0]:
            return self._python_function(*args, **kwargs)
        if _state.tracing():
            # Inside another function's trace the body is simply inlined into that program.
            return self._converted_function()(*args, **kwargs)
        if self._input_signature is not None:
            args, kwargs = _bind_signature(self.__name__, self._input_signature, self._params, args, kwargs)
        vals, tensors, var_args, leaves, tree, key = _split_args(args, kwargs)
        if any(is_tracer(v) for v in vals):
            # Called inside a JAX transformation (jax.jit, vmap, eval_shape): that is the program.
            return self._converted_function()(*args, **kwargs)
        conc = self._cache.get(key)
        if conc is None and key in self._aliases:
            conc = self._cache.get(self._aliases[key])
        if conc is not None:
            detector = self._detector or self._find_detector()
            with _detectors_lock:
                detector.called_without_tracing()
            return conc._call(vals, tensors, var_args)
        return self._trace_call(vals, tensors, var_args, leaves, tree, key)

    def _call_typed(self, shapes, args):
        """Calls with positional ``args`` whose tensors are typed ``shapes`` (one per tensor, in
        the order they flatten; ``None`` for a dimension of any size) rather than by their own
        shapes, as a TensorFlow function given a ``tf.data`` iterator is typed by its element
        spec: a trace serves the call if it serves that type (its unknown dimensions are
        unknown in the trace); with ``reduce_retracing=True`` a new type is widened against the
        traces before it. ``shapes=None`` types the call by its own shapes. The tensors' first
        dimensions, when unknown, are one dimension (the batch size of Keras's data): the trace
        runs calls whose tensors share it.

        Keras's ``fit``/``evaluate``/``predict`` call their steps so (see
        ``tapejax.keras.Model``); calling with the same type again costs what a plain call
        does."""
        if _run_eagerly[0] or _state.tracing():
            return self(*args)
        vals, tensors, var_args, leaves, tree, key = _split_args(args, {})
        typed = (shapes, key)
        gkey = self._typed.get(typed)
        conc = None if gkey is None else self._cache.get(gkey)
        if conc is not None:
            detector = self._detector or self._find_detector()
            with _detectors_lock:
                detector.called_without_tracing()
            return conc._call(vals, tensors, var_args)
        if any(is_tracer(v) for v in vals) or self._input_signature is not None:
            return self(*args)
        batch = _same_batch(key[1])
        skey = key
        if shapes is not None and len(shapes) == len(key[1]) and all(
                len(s) == len(shape) and all(a is None or a == b for a, b in zip(s, shape))
                for s, (shape, _, _) in zip(shapes, key[1])):
            skey = (key[0], tuple((tuple(s), dt, weak) for s, (_, dt, weak) in zip(shapes, key[1])))
        if any(dt == object for _, dt, _ in key[1]) or not self._symbolic:
            gshapes = None   # strings, or a body that needs its sizes: traced for these
        elif skey in self._cache:
            gshapes = [shape for shape, _, _ in skey[1]]   # TensorFlow's cache: a trace of this type
        else:
            gkey, widened = self._generalize(skey)
            gshapes = [shape for shape, _, _ in (skey if widened is None else gkey)[1]]
        if gshapes is not None and any(d is None and c == 0 for g, (shape, _, _) in zip(gshapes, key[1])
                                       for d, c in zip(g, shape)):
            gshapes = None   # an unknown dimension is at least 1 (jax.export): a size 0 is traced alone
        return self._trace_call(vals, tensors, var_args, leaves, tree, key, gshapes, batch=batch, typed=typed)

    def _trace_call(self, *args, **kwargs):
        """Runs a call no known trace serves by its own key (``call=False``: returns its trace).
        ``shapes``, when given, are the tensor arguments' shapes with None dimensions.

        An error the user's converted code raised while traced is raised as TensorFlow's
        AutoGraph raises it: ``in user code:`` and the user's frames, then the error."""
        try:
            return self._trace_call_impl(*args, **kwargs)
        except Exception as e:
            if _state.tracing() or getattr(e, "_tapejax_in_user_code", False):
                raise
            new = _autograph.user_code_error(e)
            if new is None:
                raise
            raise new from None

    def _trace_call_impl(self, vals, tensors, var_args, leaves, tree, key, shapes=None, call=True, batch=False,
                         typed=None):
        """``batch``: the tensor arguments' unknown first dimensions are one (a Keras step's
        data, see :meth:`_call_typed`). ``typed``: the key of a typed call, remembered with the
        trace serving it."""
        if shapes is None:
            gkey, shapes = self._generalize(key)
            if shapes is None:
                gkey, shapes = self._spec_trace_for(key)
        else:
            gkey = (key[0], tuple((s, dt, weak) for s, (_, dt, weak) in zip(shapes, key[1])))
            if not any(d is None for shape in shapes for d in shape):
                shapes = None
        conc = self._cache.get(gkey)
        if conc is not None and (conc._exact is not None and conc._exact != key
                                 or conc._batch and not _same_batch(key[1])):
            # A trace of strings for its shapes only, or of one batch size for arguments of
            # several: trace these.
            gkey, shapes = key, None
            conc = self._cache.get(key)
        traced = conc is None
        if traced:
            before, known = _cache.resident_bytes(), set(self._variables)
            try:
                conc = self._new_concrete(vals, var_args, leaves, tree, gkey, shapes, batch and shapes is not None)
            except Exception:
                if shapes is None or any(dt == object for _, dt, _ in key[1]):
                    raise   # (string arguments' unknown dimensions need no sizes)
                # Some op needs the sizes (or the program cannot be exported): trace per shape.
                self._symbolic = False
                gkey = key
                conc = self._cache.get(key) or self._new_concrete(vals, var_args, leaves, tree, key)
            if gkey != key and conc._host is not None and (conc._host.expect or conc._host.shape_used):
                conc._exact = key
        if gkey != key:
            if len(self._aliases) >= 1024:
                self._aliases.clear()
            self._aliases[key] = gkey
        if typed is not None:
            if len(self._typed) >= 1024:
                self._typed.clear()
            self._typed[typed] = conc._key
        if not call:
            return conc
        out = None
        try:
            out = conc._call(vals, tensors, var_args)
        finally:
            if traced:
                # The trace's size: what the process grew by while it was traced, compiled and
                # run, less the data it made (its outputs, the Variables it created).
                data = [v for i, v in self._variables.items() if i not in known]
                self._cache.charge(gkey, _cache.resident_bytes() - before - _cache.data_bytes([out, data]))
        detector = self._detector or self._find_detector()
        with _detectors_lock:
            if traced:
                detector.called_with_tracing(self._python_function)
            else:
                detector.called_without_tracing()
        return out

    def _generalize(self, key):
        """(key, shapes) of the trace for a call with this key: shapes with None for the
        dimensions it serves at any size, or None to trace the call's own shapes.

        With an ``input_signature``, its None dimensions. With ``reduce_retracing=True``, as
        in TensorFlow: the first call of an argument structure traces its own shapes; a later
        call with other sizes traces the most specific common shape, the dimensions that
        differed unknown, and every call that fits it reuses that trace.
        """
        static, tkey = key
        sizes = [shape for shape, _, _ in tkey]
        if any(dt == object for _, dt, _ in tkey):
            # String arguments: only their unknown dimensions (an input_signature's) stay unknown.
            if self._sig_shapes is None or len(self._sig_shapes) != len(sizes):
                return key, None
            shapes = [s if dt == object and s is not None else c
                      for s, c, (_, dt, _) in zip(self._sig_shapes, sizes, tkey)]
            if shapes == sizes:
                return key, None
            return (static, tuple((tuple(s), dt, weak) for s, (_, dt, weak) in zip(shapes, tkey))), shapes
        if not self._symbolic or (self._sig_shapes is None and not self._reduce_retracing):
            return key, None
        if self._sig_shapes is not None:
            if len(self._sig_shapes) != len(sizes):
                return key, None
            shapes = [s if s is not None else c for s, c in zip(self._sig_shapes, sizes)]
        else:
            struct = (static, tuple((len(shape), dt, weak) for shape, dt, weak in tkey))
            prev = self._widened.get(struct)
            shapes = sizes if prev is None else [
                tuple(a if a == b else None for a, b in zip(p, c)) for p, c in zip(prev, sizes)]
            self._widened[struct] = shapes
        # An unknown dimension is at least 1 (jax.export); a call with a 0 there is traced alone.
        if not any(d is None for shape in shapes for d in shape) or any(
                d is None and c == 0 for shape, size in zip(shapes, sizes) for d, c in zip(shape, size)):
            return key, None
        shapes = [tuple(shape) for shape in shapes]
        return (static, tuple((shape, dt, weak) for shape, (_, dt, weak) in zip(shapes, tkey))), shapes

    def _spec_trace_for(self, key):
        """(key, shapes) of a get_concrete_function trace with unknown dimensions that serves a
        call with this key (TensorFlow's cache reuses a trace whose input types are a supertype
        of the call's), else (key, None)."""
        static, tkey = key
        for skey in self._spec_keys:
            sstatic, stkey = skey
            if sstatic != static or len(stkey) != len(tkey) or skey not in self._cache:
                continue
            if all(sdt == dt and sweak == weak and len(sshape) == len(shape)
                   and all(a is None and b != 0 or a == b for a, b in zip(sshape, shape))
                   for (sshape, sdt, sweak), (shape, dt, weak) in zip(stkey, tkey)):
                return skey, [list(sshape) for sshape, _, _ in stkey]
        return key, None

    def get_concrete_function(self, *args, **kwargs):
        """The :class:`ConcreteFunction` for these arguments (TensorSpecs or values), tracing if needed.

        With no arguments, the function's ``input_signature`` is used. Python
        arguments are bound: call the result with the tensor arguments only.

        Example:
            >>> import tapejax as tf
            >>> f = tf.function(lambda x, n: x * n)
            >>> cf = f.get_concrete_function(tf.TensorSpec([], tf.float32), 3)
            >>> print(cf(tf.constant(2.0)).numpy())
            6.0
        """
        if not args and not kwargs and self._input_signature is not None:
            args = self._input_signature
        given = (tuple(args), dict(kwargs))
        has_spec = any(isinstance(x, TensorSpec) or hasattr(x, "_tf_placeholder")
                       for x in jax.tree_util.tree_leaves(given, is_leaf=_is_leaf))
        spec_shapes = {}   # id of the example tensor standing for a TensorSpec -> the spec's shape

        def example(s):
            shape = tuple(1 if d is None else d for d in (s.shape or ()))
            t = Tensor(string_array(np.full(shape, b"0", object)) if s.dtype == _dtypes.string
                       else jnp.zeros(shape, s.dtype._np))
            if s.shape is not None:
                spec_shapes[id(t)] = tuple(s.shape)
            return t

        # A composite's spec (an ExtensionType's) gives a value of its own with example tensors.
        args, kwargs = jax.tree_util.tree_map(
            lambda s: example(s) if isinstance(s, TensorSpec) else s._tf_placeholder(example)
            if hasattr(s, "_tf_placeholder") else s, (args, kwargs), is_leaf=_is_leaf)
        if self._input_signature is not None:
            args, kwargs = _bind_signature(self.__name__, self._input_signature, self._params, args, kwargs)
        vals, tensors, var_args, leaves, tree, key = _split_args(args, kwargs)
        shapes = [spec_shapes.get(id(t), tuple(v.shape)) for t, v in zip(tensors, vals)]
        if any(v.dtype == object for v in vals):   # strings: only their dimensions stay unknown
            shapes = [s if v.dtype == object else tuple(v.shape) for s, v in zip(shapes, vals)]
        if self._input_signature is not None or not any(None in s for s in shapes):
            shapes = None   # the signature's own unknown dimensions, or none
        conc = self._cache.get(key) or self._cache.get(self._aliases.get(key))
        if conc is None:
            conc = self._trace_call(vals, tensors, var_args, leaves, tree, key, shapes, call=False)
            ckey = getattr(conc, "_key", None)
            if shapes is not None and ckey is not None and ckey not in self._spec_keys and any(
                    d is None for shape, _, _ in ckey[1] for d in shape):
                self._spec_keys.append(ckey)
        if has_spec:
            conc._specs = given
        return conc

    def _new_concrete(self, vals, var_args, leaves, tree, key, shapes=None, batch=False):
        """Traces a new signature. The state the body touches is found by tracing: a trace that
        captures Variables it was not given, creates Variables, or assigns Variables it was
        not told to donate is thrown away and traced again knowing them."""
        first = self._trace_count == 0
        created_any = False
        # TensorFlow traces the body once when its Variables already exist: know the ones it can
        # reach up front (and those of the Python objects it is given), so no second trace
        # repeats its Python side effects.
        objs = [x for x in leaves if not isinstance(x, (_TensorBase, jax.Array, np.ndarray))]
        if first:
            objs += _function_objects(self)
        for v in _variables_in(objs):
            self._variables.setdefault(v._id, v)
        # A new signature is a new graph in TensorFlow: its random ops start at their seeds.
        random_ops = []
        for _ in range(_MAX_TRACES):
            conc = ConcreteFunction(self, leaves, tree, var_args, self._variables.values(), self._assigned,
                                    shapes)
            # As TensorFlow: once a first call has created Variables, every later trace (this
            # call's retrace included) runs where creating one raises, at the user's line.
            conc._no_creation = created_any or (not first and self._created_variables)
            conc._batch = batch
            conc._random_ops = random_ops
            try:
                scope = conc._trace(vals)
            except _NeedsGraphTape:
                self._graph_tape = True
                continue
            if scope.created:
                if not first:
                    raise ValueError(_NON_FIRST_CALL)
                if created_any:
                    raise ValueError(_NOT_SINGLETON)
                created_any = True
            arg_ids = {v._id for v in var_args}
            new = [v for i, v in scope.captured.items() if i not in arg_ids]
            # Assigned Variables this trace was not told to donate still get their new values
            # (only their buffers are not reused): donated from the next signature on.
            self._assigned |= set(scope.written) - arg_ids
            if not (new or scope.created):
                break
            scope.drop()
            for v in new:
                self._variables.setdefault(v._id, v)
            conc._discard()
        else:
            raise ValueError(_NOT_SINGLETON)
        conc._finish()
        conc._key = key
        self._created_variables = self._created_variables or created_any
        self._cache.put(key, conc)
        # TensorFlow traces a first call that creates Variables twice (creating, then using them).
        self._trace_count += 2 if created_any else 1
        return conc

    def _find_detector(self):
        self._detector = _tracing_detector(self._python_function)
        return self._detector

    def __repr__(self):
        return f"<tapejax.function {self.__name__}>"


# ---------------------------------------------------------------------------
# tf.gradients: symbolic differentiation of the computation being traced
# ---------------------------------------------------------------------------

class _NeedsGraphTape(Exception):
    """tf.gradients was called in a trace that recorded nothing: trace again recording."""


class _Everything(set):
    """The ids a graph tape watches: all of them (TensorFlow's graph knows every tensor)."""

    def isdisjoint(self, other):
        return False

    def __contains__(self, item):
        return True


class _GraphTape:
    """Records every op of a trace on a persistent tape, so ``tf.gradients(y, x)`` can
    differentiate between any two tensors of it (JAX drops the backward work not used)."""

    def __enter__(self):
        self.tape = GradientTape(persistent=True, watch_accessed_variables=True)
        self.tape._watched = _Everything()
        self.saved = _flags.graph_tape
        _flags.graph_tape = self.tape
        self.tape.__enter__()
        return self.tape

    def __exit__(self, *exc):
        self.tape.__exit__(*exc)
        _flags.graph_tape = self.saved
        return False


def _graph_tape(what):
    if not _state.tracing():
        raise RuntimeError(f"{what} is not supported when eager execution is enabled. Use "
                           "tf.GradientTape instead.")
    if _flags.graph_tape is None:
        raise _NeedsGraphTape()
    return _flags.graph_tape


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False, aggregation_method=None,
              stop_gradients=None, unconnected_gradients="none"):
    """``tf.gradients``: the symbolic derivatives of the sum of ``ys`` with respect to ``xs``.

    Only inside a ``tf.function`` (as in TensorFlow 2): it differentiates the
    computation being traced between any of its tensors.

    Args:
        ys: a Tensor or list of Tensors to differentiate (summed).
        xs: a Tensor or list of Tensors.
        grad_ys: optional upstream gradients, one per ``ys``.
        unconnected_gradients: ``'none'`` (``None`` for an unconnected ``x``) or ``'zero'``.

    Returns:
        A list with one gradient (or None) per ``x``.

    Raises:
        RuntimeError: called eagerly ("Use tf.GradientTape instead").

    Example:
        >>> import tapejax as tf
        >>> @tf.function
        ... def f(x):
        ...     return tf.gradients(x ** 3, x)
        >>> print(f(tf.constant(2.0))[0].numpy())
        12.0
    """
    tape = _graph_tape("tf.gradients")
    ys, xs = _as_list(ys), _as_list(xs)
    grad_ys = None if grad_ys is None else _as_list(grad_ys)
    if stop_gradients is not None:
        raise NotImplementedError("tf.gradients(stop_gradients=...) is not supported: wrap those "
                                  "tensors in tf.stop_gradient where they are computed instead.")
    return list(tape.gradient(ys, xs, output_gradients=grad_ys, unconnected_gradients=unconnected_gradients))


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """``tf.hessians``: the Hessian of the sum of ``ys`` with respect to each of ``xs``.

    Only inside a ``tf.function``. Each result has shape ``x.shape + x.shape``.

    Example:
        >>> import tapejax as tf
        >>> @tf.function
        ... def f(x):
        ...     return tf.hessians(tf.reduce_sum(x ** 3), x)
        >>> f(tf.constant([1.0, 2.0]))[0].numpy().tolist()
        [[6.0, 0.0], [0.0, 12.0]]
    """
    tape = _graph_tape("tf.hessians")
    out = []
    for x in _as_list(xs):
        g = tape.gradient(ys, x)
        out.append(None if g is None else tape.jacobian(g, x))
    return out


def _function_objects(function):
    """What a function's body can reach without being given it: the instance of a method, its
    closure and the globals its code names."""
    fn = function._python_function
    objs = []
    if function._bound_to is not None:
        objs.append(function._bound_to[1]())
        fn = function._bound_to[0]._python_function
    fn = inspect.unwrap(fn)
    owner = getattr(fn, "__self__", None)   # tf.function(obj.method): the instance is reachable
    if owner is not None and not isinstance(owner, types.ModuleType):
        objs.append(owner)
    code = getattr(fn, "__code__", None)
    if code is not None:
        objs += [c.cell_contents for c in (fn.__closure__ or ()) if _cell_set(c)]
        g = getattr(fn, "__globals__", {})
        objs += [g[n] for n in code.co_names if n in g]
    return objs


def _variables_in(objs):
    """The Variables in ``objs``: Variables, Modules, Keras layers and models, lists, tuples and
    dicts of them, and the attributes of other objects (a ``tf.random.Generator``)."""
    out, seen = [], set()

    def visit(x, depth=0):
        if isinstance(x, _variable.Variable):
            if x._id not in seen:
                seen.add(x._id)
                out.append(x)
        elif isinstance(x, _Module):
            for v in x._every_variable():
                visit(v)
            # State the object's methods use besides its variables (a Keras model's optimizer
            # and metrics, which its train_step updates).
            for v in getattr(x, "_tf_function_state", lambda: ())():
                visit(v)
        elif isinstance(x, (list, tuple)) and depth < 2:
            for e in x:
                visit(e, depth + 1)
        elif isinstance(x, dict) and depth < 2:
            for e in x.values():
                visit(e, depth + 1)
        elif depth == 0 and hasattr(x, "__dict__") and not isinstance(
                x, (type, types.ModuleType, types.FunctionType, types.MethodType, functools.partial)):
            for e in vars(x).values():
                visit(e, depth + 1)

    for x in objs:
        visit(x)
    return out


def _cell_set(cell):
    try:
        cell.cell_contents
    except ValueError:  # a free variable not bound yet
        return False
    return True


def _weakrefable(x):
    try:
        weakref.ref(x)
        return True
    except TypeError:
        return False


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None,
             experimental_attributes=None, experimental_relax_shapes=None,
             experimental_compile=None, experimental_follow_type_hints=None, name=None):
    """Compiles a TensorFlow-style function (a training step) into one XLA program.

    Usable as ``@tf.function``, ``@tf.function(...)`` or ``tf.function(f)``, on
    plain functions and on methods. Each new input signature (tensor shapes and
    dtypes, values of Python arguments) is traced once with ``jax.jit``; later
    calls run the compiled program. Variables the function reads or assigns
    (weights, optimizer slots, metric totals, the random generator) are found
    automatically, passed in and written back; the buffers of assigned Variables
    are donated. Variable arguments are traced by shape and dtype, like tensors.
    As in TensorFlow, Variables may be created on the first call only (lazy
    layer build, optimizer slots), and a returned Variable gives its value after
    the call's assignments; Python values returned become Tensors. A
    ``tf.data`` iterator read inside advances on every call. Python side
    effects happen while tracing only; use ``tf.print`` to print each call.
    Python ``if``/``while``/``for`` on tensor values become staged control flow
    (AutoGraph). String tensors (arguments, ``tf.strings`` ops, outputs) are traced
    once per shape, not per value, as in TensorFlow: their ops run on the host around
    the XLA program (see ``tapejax._host``; what it cannot do raises, saying what to do).

    Args:
        func: the function; omitted when used as ``@tf.function(...)``.
        input_signature: optional list of :class:`TensorSpec` that arguments must
            match. ``None`` dimensions accept any size: the Python function is
            traced once with them unknown (``x.shape`` shows None, ``tf.shape(x)``
            gives their values) and the program is compiled once per size. A body
            that needs the sizes, or runs host callbacks (``tf.print``), is traced
            once per shape instead.
        autograph: convert Python ``if``/``while``/``for`` on tensors into staged
            control flow (``tf.cond`` / ``jax.lax.while_loop``), as TensorFlow's
            AutoGraph does (see ``tapejax._autograph``); ``False`` traces the
            Python code as written.
        reduce_retracing: as in TensorFlow, a call with other sizes than the
            first traces once more with the dimensions that differ unknown, and
            that trace serves every later size.
        jit_compile: accepted for compatibility (everything is compiled by XLA).

        The traces are kept in a least-recently-used cache bounded by
        ``tf.config.experimental.set_compile_cache_limits``; an evicted signature is
        traced again when it comes back. TensorFlow's retracing warning is logged (at
        most twice per Python function) when 5 of the last 10 calls traced: pad
        inputs to a few sizes, or use ``input_signature``, to trace less.

    Returns:
        A callable :class:`Function`.

    Raises:
        TypeError: arguments that do not match ``input_signature``.
        ValueError: a call other than the first creates Variables, or the first
            creates new ones every time it is traced (TensorFlow's errors).

    Example:
        >>> import tapejax as tf
        >>> w = tf.Variable(2.0)
        >>> @tf.function
        ... def step(x):
        ...     with tf.GradientTape() as tape:
        ...         loss = (w * x - 1.0) ** 2
        ...     w.assign_sub(0.1 * tape.gradient(loss, w))
        ...     return loss
        >>> print(step(tf.constant(1.0)).numpy())
        1.0
        >>> round(float(w.numpy()), 4)
        1.8
        >>> _ = step(tf.constant(1.0))
        >>> step.experimental_get_tracing_count()
        1
    """
    if func is None:
        return functools.partial(function, input_signature=input_signature, jit_compile=jit_compile,
                                 reduce_retracing=reduce_retracing, name=name, autograph=autograph)
    return Function(func, input_signature=input_signature, jit_compile=jit_compile,
                    reduce_retracing=reduce_retracing, name=name, autograph=autograph)
