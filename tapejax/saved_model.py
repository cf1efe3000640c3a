"""tf.saved_model: export tf.functions as StableHLO with their Variables; load without the source.

``save`` exports every ``tf.function`` on the object graph: one with an
``input_signature`` for that signature, one without for each signature it has
been called with (its concrete functions; Python arguments and defaults are
kept as literals, as TensorFlow does). Each is traced by the function's own
machinery (``ConcreteFunction``) as a *pure* JAX function of
``(variable values, inputs)`` and exported with ``jax.export``; the Variables'
values go into a checkpoint beside it. The exported function's gradient is the tape's gradient of
the original (so ``@tf.custom_gradient`` rules survive, as TensorFlow's
``SaveOptions(experimental_custom_gradients=True)``), serialised to second order.

``load`` rebuilds an object with the same attribute paths holding fresh
Variables and callable functions. A loaded function is one tape op per exported
trace whose JAX function is the deserialised ``Exported.call``: call it eagerly
or inside ``tf.function``, and differentiate it under a ``GradientTape`` with
respect to its inputs and the loaded Variables, which can be assigned and
trained. Arguments select a trace as in TensorFlow; none matching raises
TensorFlow's errors. The files are treated as untrusted (see ``load``).
"""
import contextlib
import hashlib
import inspect
import io
import json
import os
import pprint
import re
import shutil
import uuid

import jax
import jax.numpy as jnp
import numpy as np

from ._core import dtypes as _dtypes, state as _state
from . import ops as _ops
from .checkpoint.format import DataLossError as _DataLossError, NotFoundError as _NotFoundError
from .checkpoint.reader import read_index as _read_index, read_values as _read_values
from .checkpoint.tracking import Graph as _Graph
from .checkpoint.writer import swap_into_place as _swap_into_place, write as _write
from ._staging.function import ConcreteFunction, TensorSpec, _NeedsGraphTape, _Slot
from ._core.module import Module
from ._core.tensor import TensorShape, _TensorBase, to_array
from ._core.variable import Variable
from .extend import defop
from .experimental import extension_type as _ext

__all__ = ["save", "load", "SaveOptions", "LoadOptions"]

_FORMAT = "tapejax-saved-model"
_VERSION = 2   # 2: traces with Python arguments, input signatures, SHA-256 of function files
_INDEX = "saved_model.json"
_VJP_ORDER = 2
_PLATFORMS = ("cpu", "cuda")
_MAX_UNKNOWN_RANK = 4   # TensorSpec(None) (unknown rank) is exported for ranks 0..3


class SaveOptions:
    """Options for ``tf.saved_model.save``.

    Args:
        experimental_custom_gradients: keep the tape's gradients of the saved
            functions, ``@tf.custom_gradient`` rules included (default ``True``:
            it costs nothing here). With ``False`` the loaded gradients are JAX's
            derivatives of the traced forward computation, without custom rules.
        experimental_vjp_order: how many orders of derivatives are serialised (2).
        Other TensorFlow options are accepted and ignored.
    """

    def __init__(self, namespace_whitelist=None, save_debug_info=False, function_aliases=None,
                 experimental_io_device=None, experimental_variable_policy=None,
                 experimental_custom_gradients=True, experimental_image_format=False,
                 experimental_skip_saver=False, experimental_sharding_callback=None,
                 experimental_debug_stripper=False, experimental_vjp_order=_VJP_ORDER):
        self.experimental_custom_gradients = bool(experimental_custom_gradients)
        self.experimental_vjp_order = int(experimental_vjp_order)
        self.function_aliases = function_aliases


class LoadOptions:
    """Options for ``tf.saved_model.load`` (accepted for compatibility)."""

    def __init__(self, allow_partial_checkpoint=False, experimental_io_device=None,
                 experimental_skip_checkpoint=False, experimental_variable_policy=None,
                 experimental_load_function_aliases=False):
        self.experimental_skip_checkpoint = experimental_skip_checkpoint


# ---------------------------------------------------------------------------
# Finding the functions to export
# ---------------------------------------------------------------------------

def _is_tf_function(x):
    """A ``tapejax.function`` object (duck-typed: it wraps a Python function)."""
    return (not isinstance(x, type) and hasattr(x, "python_function")
            and hasattr(x, "input_signature"))


def _functions_of(obj):
    """(attribute name, tf.function bound to ``obj``) of one object of the graph."""
    out = []
    if isinstance(obj, (list, tuple, dict, Variable)):
        return out
    seen = set()
    for klass in type(obj).__mro__:
        for name, value in vars(klass).items():
            if name in seen or not _is_tf_function(value):
                continue
            seen.add(name)
            out.append((name, value.__get__(obj, type(obj))))
    for name, value in sorted(getattr(obj, "__dict__", {}).items()):
        if name not in seen and _is_tf_function(value):
            seen.add(name)
            out.append((name, value))
    return sorted(out, key=lambda t: t[0])


def _spec_leaves(signature):
    """The leaves of a signature (TensorSpecs and Python values) and its tree. An ExtensionType's
    spec stands for a value of it with TensorSpecs in its tensors' places (a JAX tree too)."""
    signature = jax.tree_util.tree_map(
        lambda s: _ext.placeholder(s) if isinstance(s, _ext.ExtensionTypeSpec) else s, signature,
        is_leaf=lambda s: isinstance(s, _ext.ExtensionTypeSpec) or _is_spec(s))
    return jax.tree_util.tree_flatten(signature, is_leaf=_is_spec)


def _spec_shape(spec):
    shape = spec.shape
    if shape is None:
        return None
    try:
        dims = list(shape)
    except TypeError:  # a TensorShape of unknown rank
        return None
    if getattr(shape, "rank", 0) is None:
        return None
    return [None if d is None else int(d) for d in dims]


def _spec_dtype(spec):
    dt = getattr(spec, "dtype", None)
    return np.dtype(_dtypes.np_dtype(dt if dt is not None else "float32"))


def _is_spec(x):
    # (an ExtensionType and its spec may have shape and dtype properties of their own)
    return (hasattr(x, "dtype") and hasattr(x, "shape") and not hasattr(x, "_value")
            and not isinstance(x, (_ext.ExtensionType, _ext.ExtensionTypeSpec)))


def _is_literal(x):
    """A Python argument value a SavedModel can hold (TensorFlow's ``Literal`` types)."""
    return x is None or type(x) in (bool, int, float, str)


def _params_and_defaults(fn):
    """The positional parameter names of a tf.function (``self`` dropped) and the defaults
    that a SavedModel can hold."""
    params = list(getattr(fn, "_params", None) or [])
    try:
        sig = inspect.signature(fn.python_function)
    except (TypeError, ValueError):
        return params, {}
    return params, {p.name: p.default for p in sig.parameters.values()
                    if p.name in params and p.default is not p.empty and _is_literal(p.default)}


def _traced_signatures(fn):
    """The traces (concrete functions) of a tf.function as positional signatures: keyword
    arguments by position, defaults filled in, as TensorFlow canonicalises them. Traces with
    arguments a SavedModel cannot hold (Variables, Python objects) are left out."""
    params, defaults = _params_and_defaults(fn)
    out = []
    for conc in list(getattr(fn, "_cache", {}).values()):
        sig = getattr(conc, "structured_input_signature", None)
        if sig is None:
            continue
        args, kwargs = list(sig[0]), dict(sig[1])
        for name in params[len(args):]:
            if name in kwargs:
                args.append(kwargs.pop(name))
            elif name in defaults:
                args.append(defaults[name])
            else:
                break
        leaves = _spec_leaves(args)[0]
        if not kwargs and all(_is_spec(x) or _is_literal(x) for x in leaves) and args not in out:
            out.append(args)
    return out


def _variants(signature):
    """(tree, leaves, shape variants) to export: ``None`` dims are symbolic; an unknown rank
    is exported for ranks 0..3. A variant gives (shape, dtype) for each TensorSpec leaf."""
    leaves, tree = _spec_leaves((tuple(signature), {}))
    choices = [[]]
    for s in leaves:
        if not _is_spec(s):
            continue
        shape = _spec_shape(s)
        ranks = [shape] if shape is not None else [[None] * r for r in range(_MAX_UNKNOWN_RANK)]
        choices = [c + [(r, _spec_dtype(s))] for c in choices for r in ranks]
    return tree, leaves, choices[:16]


# ---------------------------------------------------------------------------
# Tracing a tf.function as a pure function of (variables, inputs)
# ---------------------------------------------------------------------------

def _encode(structure, leaves):
    """A JSON description of a structure: Tensors are numbered leaves (appended to ``leaves``),
    TensorSpecs too; other values are Python literals."""
    if isinstance(structure, (list, tuple)):
        return {"list" if isinstance(structure, list) else "tuple": [_encode(s, leaves) for s in structure]}
    if isinstance(structure, dict):
        return {"dict": [[str(k), _encode(structure[k], leaves)] for k in sorted(structure, key=str)]}
    if structure is None:
        return {"none": 0}
    if isinstance(structure, _ext.ExtensionType):
        return _encode_extension_type(structure, leaves)
    if isinstance(structure, _TensorBase) or _is_spec(structure):
        leaves.append(structure)
        return {"t": len(leaves) - 1}
    if not _is_literal(structure):
        raise ValueError(f"a {type(structure).__name__} ({structure!r}) cannot be held in a SavedModel: "
                         "return Tensors (and Python numbers, strings or None).")
    return {"py": structure}


def _encode_extension_type(value, leaves):
    """An ExtensionType by its registered name and its fields: TensorShape, DType and mapping
    fields as such, the rest as structures."""
    cls = type(value)
    name = _ext.registered_name(cls)
    if name is None:
        raise ValueError(f"a {cls.__name__} cannot be held in a SavedModel: an ExtensionType needs a registered "
                         f"name for that, as in TensorFlow (in the class body: __name__ = "
                         f"'my_package.{cls.__name__}').")

    def field(v):
        if isinstance(v, TensorShape):
            return {"shape": None if v.rank is None else list(v)}
        if isinstance(v, _dtypes.DType):
            return {"dtype": v.name}
        if isinstance(v, _ext.ImmutableDict):
            return {"dict": [[str(k), field(v[k])] for k in sorted(v, key=str)]}
        if isinstance(v, tuple):
            return {"tuple": [field(e) for e in v]}
        return _encode(v, leaves)
    return {"ext": [name, [[k, field(v)] for k, v in _ext.as_dict(value).items()]]}


def _extension_type(name):
    cls = _ext.lookup(name)
    if cls is None:
        raise ValueError(f"The SavedModel holds values of the ExtensionType registered as {name!r}, which is not "
                         "defined here: define (import) its class before loading.")
    return cls


def _decode(desc, leaf):
    """The structure of a description; ``leaf(i)`` gives leaf number ``i``."""
    if "t" in desc:
        return leaf(desc["t"])
    if "ext" in desc:
        name, fields = desc["ext"]
        return _ext.from_fields(_extension_type(name), {k: _decode(d, leaf) for k, d in fields})
    if "shape" in desc:
        return TensorShape(desc["shape"])
    if "dtype" in desc:
        return _dtypes.as_dtype(desc["dtype"])
    if "none" in desc:
        return None
    if "py" in desc:
        return desc["py"]
    if "list" in desc:
        return [_decode(d, leaf) for d in desc["list"]]
    if "tuple" in desc:
        return tuple(_decode(d, leaf) for d in desc["tuple"])
    return {k: _decode(d, leaf) for k, d in desc["dict"]}


class _Traced:
    """One export variant of a tf.function: its Variables, outputs and pure form.

    The body runs as the function's own trace does (``ConcreteFunction._body``: AutoGraph,
    a state scope, no outer tape) and is differentiated by the function's own backward
    pass (``ConcreteFunction._backward``), so custom gradients are kept.
    """

    def __init__(self, fn, tree, leaves, avals, name, loud=True):
        self.avals, self.name = avals, name
        if any(_is_spec(x) and _spec_dtype(x) == object for x in leaves):
            raise ValueError(
                f"tf.saved_model.save: '{name}' takes string tensors, which a tapejax SavedModel cannot "
                "hold: its programs are jax.export programs, which compute on numbers. Export a function "
                "of the strings' numbers (token ids, tf.strings.to_number) and run the string ops before "
                "calling it.")
        slots = [_Slot(x) if _is_spec(x) else x for x in leaves]
        self.conc = ConcreteFunction(fn, slots, tree, (), (), ())
        scopes = []

        def discover(*xs):
            outputs, scope = self.conc._body(list(xs), [], [])
            scopes.append(scope)
            return outputs.arrays

        def trace(shapes, compile_time_eval):
            scopes.clear()
            try:
                try:
                    with jax.ensure_compile_time_eval() if compile_time_eval else contextlib.nullcontext():
                        jax.eval_shape(discover, *shapes)
                except _NeedsGraphTape:   # the body calls tf.gradients: trace recording every op
                    fn._graph_tape = True
                    return trace(shapes, compile_time_eval)
            except _state.TracedInitialValue:
                raise ValueError(
                    f"tf.saved_model.save: tracing '{name}' created Variables from its inputs. Create "
                    "Variables from shapes or constants, or call the model once on real inputs (model(x)) "
                    "before tf.saved_model.save.") from None
            return scopes[0]

        # Variables created while tracing (a lazy build, optimizer slots) must get concrete
        # values, as in tapejax.function: a first pass on stand-in sizes evaluates what
        # does not depend on the inputs (symbolic sizes cannot be evaluated that way) ...
        stand_ins = [jax.ShapeDtypeStruct(tuple(2 if jax.export.is_symbolic_dim(d) else d for d in a.shape),
                                          a.dtype) for a in avals]
        for _ in range(3):
            try:
                with _muted():
                    created = trace(stand_ins, True).created
            except Exception as e:  # noqa: BLE001
                # Sizes the body cannot take (the unknown sizes must fit together or with the
                # Variables' sizes: x.reshape([-1, 784])): the symbolic pass tells.
                if "created Variables" in str(e) or stand_ins == list(avals):
                    raise
                break
            if not created:
                break
        # ... then the real pass, with every Variable existing, finds what is read and written.
        with _muted(not loud):
            scope = trace(avals, False)
        if scope.created:
            raise ValueError(f"tf.saved_model.save: '{name}' creates new Variables every time it is "
                             "traced. Create Variables once (in __init__ or guarded by `if self.v is None`).")
        self.variables = list(scope.captured.values())
        self.written = list(scope.written.values())

    def run(self, var_vals, xs):
        """(flat outputs, output description, new values of written Variables), pure."""
        outputs, scope = self.conc._body(list(xs), self.variables, list(var_vals))
        leaves = []
        desc = _encode(outputs.build(outputs.arrays), leaves)
        return [to_array(x) for x in leaves], desc, [scope.values[v._id] for v in self.written]

    def pure(self, custom_gradients):
        """``f(var_vals, *inputs) -> (outputs, written values)`` with the tape's VJP."""
        self.desc = None

        def f(var_vals, *xs):
            flat, desc, written = self.run(list(var_vals), xs)
            self.desc = desc
            return flat, written

        if not custom_gradients:
            return f

        g = jax.custom_vjp(f)

        def fwd(var_vals, *xs):
            return f(var_vals, *xs), (var_vals, xs)

        def bwd(res, cts):
            var_vals, xs = res
            out_cts, _ = cts   # assignments are not differentiable (as in TensorFlow)
            grads = self.conc._backward(list(xs) + list(var_vals), list(out_cts), self.variables)
            # An integer input of unknown size (a uint8 image batch) has no zeros of float0 to
            # give: None is JAX's zero cotangent there.
            res = [(None if any(jax.export.is_symbolic_dim(d) for d in x.shape)
                    else np.zeros(x.shape, jax.dtypes.float0)) if not _dtypes.is_float(np.dtype(x.dtype))
                   else jnp.zeros(x.shape, x.dtype) if g is None else jnp.asarray(g, x.dtype)
                   for g, x in zip(grads, list(xs) + list(var_vals))]
            return (res[len(xs):],) + tuple(res[:len(xs)])

        g.defvjp(fwd, bwd)
        return g


def _avals(variant, share_batch=False, constraints=()):
    """ShapeDtypeStructs of one variant, ``None`` dims symbolic (one scope for all).

    With ``share_batch``, every leading ``None`` dimension is the same symbol (the
    batch size of ``x`` and ``y`` in ``train_step(x, y)``).
    """
    names, per_input = [], []
    for shape, _ in variant:
        dims = []
        for i, d in enumerate(shape):
            if d is not None:
                dims.append(d)
            elif i == 0 and share_batch:
                dims.append("b")
            else:
                dims.append(f"d{len(names)}")
                names.append(dims[-1])
        per_input.append(dims)
    all_names = (["b"] if share_batch else []) + names
    syms = dict(zip(all_names, jax.export.symbolic_shape(", ".join(all_names), constraints=tuple(constraints)))) \
        if all_names else {}
    return [jax.ShapeDtypeStruct(tuple(syms[d] if isinstance(d, str) else d for d in dims), dt)
            for dims, (_, dt) in zip(per_input, variant)]


_BROADCAST_ERROR = re.compile(r"Incompatible shapes for broadcasting: shapes=\[(.*)\]")
# jax.lax's binary ops say it another way: "mul got incompatible shapes for broadcasting: (d0,), (4,)."
_LAX_BROADCAST_ERROR = re.compile(r"got incompatible shapes for broadcasting: ((?:\([^()]*\)(?:, )?)+)")
# tf.matmul(x, w) of x: [None, None]: the contracted sizes, in order.
_UNEQUAL_ERROR = re.compile(r"\b(\w+)(?: // 1)? != (\d+)\b")
_CONTRACT_ERROR = re.compile(r"contracting dimensions to have the same shape, (got \(.*?\) and \(.*?\))")


def _size_constraints(error, names):
    """``["d1 == 30"]`` from the error of a body that broadcasts or contracts an unknown size with
    a known one (``x - mean`` or ``tf.matmul(x, w)`` with ``x: [None, None]`` and 30 features):
    the sizes the program must be given, as TensorFlow checks when it runs. Empty when the error
    says nothing of that."""
    m = (_BROADCAST_ERROR.search(str(error)) or _LAX_BROADCAST_ERROR.search(str(error))
         or _CONTRACT_ERROR.search(str(error)))
    if not m:
        # conv2d of x: [None] * 4: "... but d3 // 1 != 3" (the input channels).
        return [f"{d} == {n}" for d, n in _UNEQUAL_ERROR.findall(str(error)) if d in names]
    shapes = [[d.strip() for d in t.split(",") if d.strip()] for t in re.findall(r"\(([^()]*)\)", m.group(1))]
    out = []
    for k in range(1, max((len(sh) for sh in shapes), default=0) + 1):
        dims = [sh[-k] for sh in shapes if len(sh) >= k]
        sizes = {int(d) for d in dims if d.isdigit() and int(d) != 1}
        if len(sizes) == 1:
            n = next(iter(sizes))
            out += [f"{d} == {n}" if d in names else _solved(d, n, names) for d in dims if not d.isdigit()]
    return [c for c in out if c]


def _solved(expr, size, names):
    """``"d1 == 7"`` from a size ``"d1 + 2"`` that must be 9 (``tf.concat`` of ``x[:, :-1]`` and a
    one-hot of 3): jax's constraints take one symbol on the left, so the linear size is solved
    for it. None for a size of several symbols or one with no integer solution."""
    used = [d for d in names if re.search(rf"\b{d}\b", expr)]
    if len(used) != 1:
        return None
    def at(v):
        return eval(re.sub(rf"\b{used[0]}\b", str(v), expr), {"__builtins__": {}},  # noqa: S307
                    {"floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "max": max, "min": min})
    try:
        a, b = at(0), at(1) - at(0)
        v = (size - a) // b if b else None
        return f"{used[0]} == {v}" if v is not None and v >= 0 and at(v) == size else None
    except Exception:  # noqa: BLE001 -- a size jax writes another way: no constraint
        return None


@contextlib.contextmanager
def _muted(on=True):
    """Python's output muted: the body's extra runs (stand-in sizes, the export's own trace, its
    backward) are tapejax's, where TensorFlow traces a saved function once."""
    if not on:
        yield
        return
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


# (function, signature) pairs already traced for a SavedModel: TensorFlow traces each concrete
# function once in its save context and keeps that trace for later saves, so its Python side
# effects (print) show once; an unknown rank, exported for several ranks, is one signature.
_SAVE_TRACED = set()


def _save_key(fn, signature):
    target = getattr(fn, "python_function", fn)
    leaves = _spec_leaves(list(signature))[0]
    sig = tuple((None if _spec_shape(x) is None else tuple(_spec_shape(x)), str(_spec_dtype(x))) if _is_spec(x)
                else repr(x) for x in leaves)
    return id(getattr(target, "__func__", target)), id(getattr(target, "__self__", None)), sig


def _export_one(name, fn, tree, leaves, variant, path_of, options, share_batch=False, loud=True):
    with _state.exporting():
        return _export_variant(name, fn, tree, leaves, variant, path_of, options, share_batch, loud)


def _export_variant(name, fn, tree, leaves, variant, path_of, options, share_batch, loud=True):
    constraints = []
    while True:
        avals = _avals(variant, share_batch, constraints)
        names = {str(d) for a in avals for d in a.shape if jax.export.is_symbolic_dim(d)}
        try:
            traced = _Traced(fn, tree, leaves, avals, name, loud)
            break
        except ValueError as e:
            more = [c for c in _size_constraints(e, names) if c not in constraints]
            if not more:
                raise
            constraints += more
    pure = traced.pure(options.experimental_custom_gradients)
    var_avals = [jax.ShapeDtypeStruct(v._value.shape, v._value.dtype) for v in traced.variables]
    with _muted():
        try:
            # Lowered for CPU and CUDA both: a model saved on a laptop loads on a GPU machine.
            exported = jax.export.export(jax.jit(pure), platforms=_PLATFORMS)(var_avals, *avals)
            blob = exported.serialize(vjp_order=options.experimental_vjp_order)
        except Exception:  # noqa: BLE001 -- an op without a lowering for one of them: this platform only
            exported = jax.export.export(jax.jit(pure))(var_avals, *avals)
            blob = exported.serialize(vjp_order=options.experimental_vjp_order)
    (args, _), specs = jax.tree_util.tree_unflatten(tree, leaves), []
    return {
        "args": [_encode(a, specs) for a in args],
        # The sizes the program takes: the signature's, less the unknown ones the body fixed.
        "inputs": [{"shape": [None if jax.export.is_symbolic_dim(d) else int(d) for d in a.shape] if s is not None
                    else s, "dtype": str(dt)} for a, (s, dt) in zip(exported.in_avals[len(var_avals):], variant)],
        "variables": [path_of(v) for v in traced.variables],
        "written": [path_of(v) for v in traced.written],
        "outputs": traced.desc,
        "sha256": hashlib.sha256(blob).hexdigest(),
    }, blob


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------

def save(obj, export_dir, signatures=None, options=None):
    """Exports the tf.functions of ``obj`` (StableHLO) with its Variables to ``export_dir``.

    Every ``tf.function`` on the object graph with an ``input_signature`` (or
    already traced) is exported; ``signatures`` (a tf.function with an input
    signature, or a dict ``{name: function}``) are exported as
    ``loaded.signatures[name]``, which take keyword arguments and return a dict.
    An object whose call is no tf.function (a Keras model) exports the tf.function its
    ``_default_save_signature`` attribute holds (TensorFlow's protocol) as its ``__call__``
    and, without ``signatures``, as ``serving_default``.

    Args:
        obj: a ``tf.Module`` (or Keras model, or any object with tf.functions).
        export_dir: the directory to write (replaced atomically if it exists).
        signatures: optional serving signatures.
        options: ``tf.saved_model.SaveOptions``.

    Raises:
        ValueError: nothing exportable, or a function that creates Variables when traced.

    Example:
        >>> import tempfile, tapejax as tf
        >>> class Scale(tf.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = tf.Variable(3.0)
        ...     @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        ...     def __call__(self, x):
        ...         return self.w * x
        >>> path = tempfile.mkdtemp() + '/scale'
        >>> tf.saved_model.save(Scale(), path)
        >>> loaded = tf.saved_model.load(path)
        >>> loaded(tf.constant([1.0, 2.0])).numpy().tolist()
        [3.0, 6.0]
        >>> with tf.GradientTape() as tape:
        ...     y = tf.reduce_sum(loaded(tf.constant([1.0, 2.0])))
        >>> float(tape.gradient(y, loaded.w))
        3.0
    """
    options = options or SaveOptions()
    export_dir = os.path.abspath(os.fspath(export_dir))
    graph = _Graph(obj)
    var_paths_by_id = {v._id: p for p, v in graph.variables.items()}
    saved_vars = dict(graph.variables)    # path -> Variable: what goes into the SavedModel
    kinds = dict(graph.kinds)
    n_captured = [0]

    def path_of(v):
        p = var_paths_by_id.get(v._id)
        if p is None:
            # Created while tracing (optimizer slots, a lazy build): walk the object again.
            again = _Graph(obj)
            for q, w in again.variables.items():
                if w._id not in var_paths_by_id and q not in saved_vars:
                    var_paths_by_id[w._id] = q
                    saved_vars[q] = w
            for q, k in again.kinds.items():
                kinds.setdefault(q, k)
            p = var_paths_by_id.get(v._id)
        if p is None:
            # A Variable read by a function but not reachable as an attribute is saved too.
            p = var_paths_by_id[v._id] = f"_captured/{n_captured[0]}"
            n_captured[0] += 1
            saved_vars[p] = v
        return p

    functions = {}   # "objpath:name" -> list of variants
    blobs = {}

    def export_fn(key, name, fn, signature_list, input_signature=False):
        variants_out = []
        errors = []
        for signature in signature_list:
            tree, leaves, variants = _variants(signature)
            save_key = _save_key(fn, signature)
            for variant in variants:
                loud = save_key not in _SAVE_TRACED
                _SAVE_TRACED.add(save_key)
                try:
                    try:
                        entry, blob = _export_one(name, fn, tree, leaves, variant, path_of, options, loud=loud)
                    except Exception:  # noqa: BLE001
                        if sum(1 for shape, _ in variant if shape and shape[0] is None) < 2:
                            raise
                        # Inputs combined along their leading dimension: one batch size for all.
                        entry, blob = _export_one(name, fn, tree, leaves, variant, path_of, options, True,
                                                  loud=False)
                except ImportError:
                    raise
                except ValueError as e:
                    if "created Variables" in str(e):
                        raise
                    errors.append(e)
                    continue
                except Exception as e:  # noqa: BLE001 -- a rank the function cannot take
                    errors.append(e)
                    continue
                fname = f"{len(blobs)}.bin"
                blobs[fname] = blob
                entry["file"] = fname
                variants_out.append(entry)
        if not variants_out and errors:
            raise ValueError(f"tf.saved_model.save could not trace '{name}': "
                             f"{type(errors[0]).__name__}: {errors[0]}") from errors[0]
        if variants_out:
            params, defaults = _params_and_defaults(fn)
            functions[key] = {"variants": variants_out, "arg_names": params, "defaults": defaults}
            if input_signature:
                specs = []
                functions[key]["signature"] = {
                    "args": [_encode(a, specs) for a in signature_list[0]],
                    "specs": [{"shape": _spec_shape(s), "dtype": str(_spec_dtype(s)), "name": s.name}
                              for s in specs]}

    for path, node in graph.objects.items():
        for name, fn in _functions_of(node):
            if fn.input_signature is not None:
                export_fn(f"{path}:{name}", name, fn, [list(fn.input_signature)], input_signature=True)
            else:
                sigs = _traced_signatures(fn)
                if sigs:
                    export_fn(f"{path}:{name}", name, fn, sigs)

    # An object whose call is no tf.function (a Keras model) names the function to export as
    # its call and default signature: `_default_save_signature`, a tf.function with an input
    # signature (TensorFlow's protocol), or None.
    default_fn = getattr(obj, "_default_save_signature", None) if ":__call__" not in functions else None
    if default_fn is not None:
        export_fn(":__call__", "__call__", default_fn, [list(default_fn.input_signature)], input_signature=True)
        if signatures is None:
            signatures = {"serving_default": default_fn}

    serving = {}
    for sname, fn in _signature_dict(signatures).items():
        fn, sig = _signature_source(fn, sname)
        if fn is default_fn:
            key = ":__call__"   # already exported
        else:
            key = f":signature:{sname}"
            export_fn(key, sname, fn, [sig], input_signature=True)
        serving[sname] = {"key": key, "arg_names": _arg_names(fn, len(_spec_leaves(sig)[0]))}

    if not functions:
        raise ValueError(
            f"tf.saved_model.save found no function to export on {obj!r}: decorate methods with "
            "@tf.function(input_signature=[tf.TensorSpec(shape, dtype)]) (or call them once before "
            "saving), or pass signatures={'serving_default': fn}.")

    tmp = f"{export_dir}.tmp-{uuid.uuid4().hex[:8]}"
    os.makedirs(os.path.join(tmp, "functions"))
    try:
        _write(os.path.join(tmp, "variables"), variables=saved_vars)
        for fname, blob in blobs.items():
            with open(os.path.join(tmp, "functions", fname), "wb") as fh:
                fh.write(bytes(blob))
        index = {"format": _FORMAT, "version": _VERSION, "kinds": kinds,
                 "variables": {p: {"trainable": bool(v.trainable), "name": v._name}
                               for p, v in saved_vars.items()},
                 "functions": functions, "signatures": serving,
                 "custom_gradients": options.experimental_custom_gradients}
        with open(os.path.join(tmp, _INDEX), "w") as fh:
            json.dump(index, fh)
        _swap_into_place(tmp, export_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _signature_dict(signatures):
    if signatures is None:
        return {}
    if isinstance(signatures, dict):
        return dict(signatures)
    return {"serving_default": signatures}


def _signature_source(fn, name):
    """(tf.function, input signature) of a serving signature."""
    if _is_tf_function(fn):
        sig = fn.input_signature
        if sig is None:
            traced = _traced_signatures(fn)
            if not traced:
                raise ValueError(f"Signature '{name}': the tf.function has no input_signature and was never "
                                 "traced. Write @tf.function(input_signature=[tf.TensorSpec(shape, dtype)]) "
                                 "or pass fn.get_concrete_function(tf.TensorSpec(shape, dtype)).")
            sig = traced[0]
        return fn, list(sig)
    sig = getattr(fn, "structured_input_signature", None)
    owner = getattr(fn, "_function", None)
    if sig is not None and owner is not None and not sig[1]:
        return owner, list(sig[0])
    raise ValueError(f"Signature '{name}' must be a tf.function with an input_signature or a concrete "
                     f"function (fn.get_concrete_function(tf.TensorSpec(...))), got {type(fn).__name__}.")


def _arg_names(fn, n):
    """The keyword names of a serving signature's ``n`` inputs."""
    params = list(getattr(fn, "_params", None) or [])[:n]
    return params + [f"input_{i}" for i in range(len(params), n)]


# ---------------------------------------------------------------------------
# load: the files are untrusted
# ---------------------------------------------------------------------------
#
# Everything read is checked before anything is built from it: the index's JSON types,
# the paths it names (a function file must be a plain name inside functions/), each
# function file against its SHA-256 and the index's shapes and dtypes. A damaged or
# hostile SavedModel raises DataLossError (a ValueError) naming the file and the problem.

_MAX_DEPTH = 64           # nesting of structures and object paths
_MAX_LIST_INDEX = 1 << 20  # an object path's list index
_FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_KINDS = ("object", "list", "dict")


def _damaged(path, problem):
    return _DataLossError(f"The SavedModel file {path!r} is corrupted or was not written by "
                                f"tf.saved_model.save: {problem}. Save the model again.")


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}


def _json_type(x):
    return _JSON_TYPES.get(type(x), type(x).__name__)


class _IndexChecker:
    """Checks the JSON index of a SavedModel, entry by entry, before it is used."""

    def __init__(self, file):
        self.file = file

    def need(self, ok, where, problem):
        if not ok:
            raise _damaged(self.file, f"{where} {problem}")

    def typed(self, x, kind, where):
        self.need(isinstance(x, kind), where, f"must be {_JSON_TYPES[kind]}, not {_json_type(x)}")
        return x

    def get(self, obj, key, kind, where):
        self.need(key in obj, where, f"has no '{key}' entry")
        return self.typed(obj[key], kind, f"{where}['{key}']")

    def path(self, path, kinds, where):
        """An object path: segments under a list are list indices; no dunder attributes."""
        self.typed(path, str, where)
        if path == "":
            return
        segments = path.split("/")
        self.need(len(segments) <= _MAX_DEPTH, where, "is nested too deeply")
        for i, seg in enumerate(segments):
            self.need(seg != "", where, "has an empty segment")
            parent = kinds.get("/".join(segments[:i]), "object")
            if parent == "list":
                self.need(seg.isdigit() and len(seg) < 8 and int(seg) < _MAX_LIST_INDEX, where,
                          f"indexes a list with {seg!r}")
            elif parent == "object":
                self.need(not _unescape(seg).startswith("__"), where, f"names the attribute {_unescape(seg)!r}")

    def desc(self, d, where, leaves, depth=0):
        """A structure description (see ``_encode``); its leaf numbers go to ``leaves``."""
        self.need(depth <= _MAX_DEPTH, where, "is nested too deeply")
        self.typed(d, dict, where)
        self.need(len(d) == 1, where, f"must have one entry, not {len(d)}")
        (tag, value), = d.items()
        inner = f"{where}['{tag}']"
        if tag == "t":
            self.need(type(value) is int and value >= 0, inner, "must be a leaf number")
            leaves.append(value)
        elif tag == "py":
            self.need(_is_literal(value), inner, f"must be a Python literal, not {_json_type(value)}")
        elif tag in ("list", "tuple"):
            for i, e in enumerate(self.typed(value, list, inner)):
                self.desc(e, f"{inner}[{i}]", leaves, depth + 1)
        elif tag in ("dict", "ext"):
            if tag == "ext":
                self.need(isinstance(value, list) and len(value) == 2 and isinstance(value[0], str), inner,
                          "must be a [registered name, fields] pair")
                value = value[1]
            for i, kv in enumerate(self.typed(value, list, inner)):
                self.need(isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str), f"{inner}[{i}]",
                          "must be a [key, value] pair")
                self.desc(kv[1], f"{inner}[{i}][1]", leaves, depth + 1)
        elif tag == "shape":
            self.need(value is None or isinstance(value, list) and all(d is None or type(d) is int for d in value),
                      inner, "must list sizes (integers or null), or be null")
        elif tag == "dtype":
            self.need(value in _dtypes._BY_NAME, inner, "names no dtype")
        else:
            self.need(tag == "none", where, f"has the unknown entry {tag!r}")

    def numbered(self, d, where, n=None):
        """A description whose leaves are numbered 0..n-1, each once (n=None: any count)."""
        leaves = []
        self.desc(d, where, leaves)
        self.need(sorted(leaves) == list(range(len(leaves))) and n in (None, len(leaves)), where,
                  f"numbers its leaves {sorted(leaves)}" + ("" if n is None else f", not 0..{n - 1}"))
        return len(leaves)

    def spec(self, s, where, unknown_rank=False):
        self.typed(s, dict, where)
        shape = s.get("shape")
        if not (unknown_rank and shape is None):
            self.typed(shape, list, f"{where}['shape']")
            self.need(len(shape) <= _MAX_DEPTH and all(d is None or (type(d) is int and d >= 0) for d in shape),
                      f"{where}['shape']", "must list sizes (non-negative integers or null)")
        dtype = self.get(s, "dtype", str, where)
        self.need(dtype in _dtypes._BY_NAME and dtype != "string", f"{where}['dtype']",
                  f"names no dtype of a tensor ({dtype[:40]!r})")

    def index(self, index):
        self.typed(index, dict, "the index")
        fmt, version = index.get("format"), index.get("version")
        self.need(fmt == _FORMAT, "the index", f"has the format {str(fmt)[:40]!r}, not {_FORMAT!r}")
        self.need(type(version) is int and 1 <= version <= _VERSION, "the index",
                  f"has the version {str(version)[:20]}; this tapejax reads versions 1 to {_VERSION} (a newer "
                  "tapejax wrote it?)")
        kinds = self.get(index, "kinds", dict, "the index")
        for p, k in kinds.items():
            self.path(p, kinds, f"kinds[{p[:80]!r}]")
            self.need(k in _KINDS, f"kinds[{p[:80]!r}]", f"must be one of {_KINDS}")
        variables = self.get(index, "variables", dict, "the index")
        for p, meta in variables.items():
            where = f"variables[{p[:80]!r}]"
            self.path(p, kinds, where)
            self.need(p != "", where, "has an empty path")
            self.typed(meta, dict, where)
            self.get(meta, "trainable", bool, where)
            self.get(meta, "name", str, where)
        functions = self.get(index, "functions", dict, "the index")
        for key, entry in functions.items():
            self.function(key, entry, kinds, variables)
        for name, s in self.get(index, "signatures", dict, "the index").items():
            where = f"signatures[{name[:80]!r}]"
            self.typed(s, dict, where)
            self.need(self.get(s, "key", str, where) in functions, f"{where}['key']", "names no function")
            self.need(all(isinstance(a, str) for a in self.get(s, "arg_names", list, where)),
                      f"{where}['arg_names']", "must list strings")

    def function(self, key, entry, kinds, variables):
        where = f"functions[{key[:80]!r}]"
        obj_path, sep, name = key.rpartition(":")
        self.need(sep == ":" and name and (name == "__call__" or not name.startswith("__")), where,
                  "is not an 'object/path:function_name' key")
        if not obj_path.startswith(":signature"):
            self.path(obj_path, kinds, where)
        self.typed(entry, dict, where)
        self.need(all(isinstance(a, str) for a in self.get(entry, "arg_names", list, where)),
                  f"{where}['arg_names']", "must list strings")
        for k, v in self.typed(entry.get("defaults", {}), dict, f"{where}['defaults']").items():
            self.need(_is_literal(v), f"{where}['defaults'][{k[:40]!r}]", "must be a Python literal")
        signature = entry.get("signature")
        if signature is not None:
            w = f"{where}['signature']"
            self.typed(signature, dict, w)
            specs = self.get(signature, "specs", list, w)
            for i, s in enumerate(specs):
                self.spec(s, f"{w}['specs'][{i}]", unknown_rank=True)
                self.need(s.get("name") is None or isinstance(s.get("name"), str), f"{w}['specs'][{i}]['name']",
                          "must be a string or null")
            self.numbered({"list": self.get(signature, "args", list, w)}, f"{w}['args']", len(specs))
        variants = self.get(entry, "variants", list, where)
        self.need(variants, f"{where}['variants']", "is empty")
        for i, v in enumerate(variants):
            w = f"{where}['variants'][{i}]"
            self.typed(v, dict, w)
            inputs = self.get(v, "inputs", list, w)
            for j, s in enumerate(inputs):
                self.spec(s, f"{w}['inputs'][{j}]")
            if "args" in v:
                self.numbered({"list": self.typed(v["args"], list, f"{w}['args']")}, f"{w}['args']",
                              len(inputs))
            for part in ("variables", "written"):
                for p in self.get(v, part, list, w):
                    self.need(isinstance(p, str) and p in variables, f"{w}['{part}']",
                              f"names {str(p)[:80]!r}, which is not a saved variable")
            self.need("outputs" in v, w, "has no 'outputs' entry")
            self.numbered(v["outputs"], f"{w}['outputs']")
            file = self.get(v, "file", str, w)
            self.need(_FILE_NAME.fullmatch(file) is not None and file not in (".", ".."), f"{w}['file']",
                      f"names the file {file[:200]!r}, which is not a file name inside functions/ (a path "
                      "outside the SavedModel directory?)")
            sha = v.get("sha256")
            self.need(sha is None or (isinstance(sha, str) and _HEX64.fullmatch(sha)), f"{w}['sha256']",
                      "must be 64 hexadecimal digits")


def _load_index(export_dir, given=None):
    """The checked index of a SavedModel directory (``given``: the path as the caller wrote it)."""
    index_file = os.path.join(export_dir, _INDEX)
    if not os.path.isfile(index_file):
        if os.path.exists(os.path.join(export_dir, "saved_model.pb")):
            raise ValueError(f"{export_dir!r} is a TensorFlow SavedModel (saved_model.pb): tapejax loads "
                             "the SavedModels written by tapejax.saved_model.save only.")
        # TensorFlow's loader raises a plain OSError naming the files it looked for.
        raise OSError(f"SavedModel file does not exist at: {given if given is not None else export_dir}"
                      f"{os.path.sep}{{saved_model.pbtxt|saved_model.pb}}")
    try:
        with open(index_file, "rb") as fh:
            index = json.loads(fh.read().decode("utf-8"))
    except (ValueError, RecursionError) as e:   # JSON and UTF-8 errors are ValueErrors
        raise _damaged(index_file, f"its JSON does not parse ({type(e).__name__}: {str(e)[:200]})") from None
    except OSError as e:
        raise _damaged(index_file, f"it cannot be read ({e})") from e
    _IndexChecker(index_file).index(index)
    return index


def _read_function(export_dir, variant, variables):
    """The checked ``jax.export.Exported`` of one variant."""
    functions_dir = os.path.join(export_dir, "functions")
    path = os.path.join(functions_dir, variant["file"])
    real = os.path.realpath(path)
    if os.path.commonpath([real, os.path.realpath(export_dir)]) != os.path.realpath(export_dir):
        raise _damaged(os.path.join(export_dir, _INDEX), f"the function file {variant['file']!r} links to "
                       f"{real!r}, outside the SavedModel directory")
    if not os.path.isfile(real):   # a directory, a FIFO (which would block), a missing file
        raise _damaged(path, "it is missing or not a regular file")
    try:
        with open(path, "rb") as fh:
            blob = fh.read()
    except OSError as e:
        raise _damaged(path, f"it cannot be read ({type(e).__name__}: {e.strerror or e})") from None
    sha = variant.get("sha256")
    if sha is not None and hashlib.sha256(blob).hexdigest() != sha:
        raise _damaged(path, f"its SHA-256 is not the one in the index ({len(blob)} bytes: truncated or "
                       "modified)")
    try:
        exported = jax.export.deserialize(bytearray(blob))
        exported.mlir_module()   # parse the program now: a damaged one fails here, not at a call
    except Exception as e:  # noqa: BLE001 -- flatbuffers' struct.error, MLIR parse errors, ...
        raise _damaged(path, f"it is not a serialized function ({type(e).__name__}: {str(e)[:200]})") from None
    _check_exported(path, exported, variant, variables)
    return exported


def _check_exported(path, exported, variant, variables):
    """The function's arrays agree with the index: its Variables, inputs and outputs."""
    def same(aval, shape, dtype):
        return (len(aval.shape) == len(shape) and np.dtype(aval.dtype) == dtype and all(
            jax.export.is_symbolic_dim(a) if d is None else (not jax.export.is_symbolic_dim(a) and a == d)
            for a, d in zip(aval.shape, shape)))

    var_values = [variables[p]._value for p in variant["variables"]]
    written = [variables[p]._value for p in variant["written"]]
    inputs = [(s["shape"], np.dtype(_dtypes.np_dtype(s["dtype"]))) for s in variant["inputs"]]
    expected_in = [(x.shape, x.dtype) for x in var_values] + inputs
    n_out = _leaf_count(variant["outputs"])
    expected_out = len(written) + n_out
    ins, outs = exported.in_avals, exported.out_avals
    if len(ins) != len(expected_in) or not all(same(a, s, d) for a, (s, d) in zip(ins, expected_in)):
        raise _damaged(path, f"it takes arrays {[f'{a.dtype}{list(a.shape)}' for a in ins][:20]}, but the index "
                       f"says {[f'{d}{list(s)}' for s, d in expected_in][:20]} (Variables, then inputs)")
    if len(outs) != expected_out or not all(same(a, x.shape, x.dtype) for a, x in zip(outs[n_out:], written)):
        raise _damaged(path, f"it returns {len(outs)} arrays, but the index says {n_out} outputs and "
                       f"{len(written)} assigned Variables")


def _leaf_count(desc):
    leaves = []
    _decode(desc, leaves.append)
    return len(leaves)


class _LoadedObject(Module):
    """An object rebuilt by ``tf.saved_model.load``: Variables and functions by attribute."""

    def __init__(self, path=""):
        super().__init__(name="loaded" if not path else path.rsplit("/", 1)[-1])

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("__call__")
        if fn is None:
            raise TypeError("This loaded object is not callable: the saved object had no tf.function "
                            "__call__ with an input_signature or called before saving.")
        return fn(*args, **kwargs)

    # TF revives a saved user object as a class local to its loader: its default repr names that.
    _TF_CLASS = "tensorflow.python.saved_model.load.Loader._recreate_base_user_object.<locals>._UserObject"

    def __repr__(self):
        return f"<{self._TF_CLASS} object at {id(self):#x}>"

    def _repr_pretty_(self, printer, cycle):
        printer.text(f"<{self._TF_CLASS} at {id(self):#x}>")   # IPython's form of a default repr


def _unescape(seg):
    return seg.replace(".S", "/").replace("..", ".")


class _Shown:
    """A value shown in an error message by a given text (pprint uses the repr)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


class _Variant:
    """One exported trace of a loaded function."""

    def __init__(self, name, entry, exported, variables):
        self.inputs = [TensorSpec(s["shape"], s["dtype"]) for s in entry["inputs"]]
        self.args = entry.get("args") or [{"t": i} for i in range(len(self.inputs))]   # version 1
        self.outputs = entry["outputs"]
        self.variables = [variables[p] for p in entry["variables"]]
        self.written = [variables[p] for p in entry["written"]]
        n_vars = len(self.variables)
        n_out = len(exported.out_avals) - len(self.written)
        self.output_avals = [([None if jax.export.is_symbolic_dim(d) else int(d) for d in a.shape], a.dtype)
                             for a in exported.out_avals[:n_out]]

        def call(*flat):
            outs, new = exported.call(list(flat[:n_vars]), *flat[n_vars:])
            return tuple(outs) + tuple(new)

        call.__name__ = f"saved_model_{name}"
        self.op = defop(call, name=f"saved_model:{name}")

    def bind(self, args, convert):
        """The input Tensors for these positional arguments, or None if they do not match
        (TensorFlow's rules: Python values equal, Tensors of the dtype and a compatible shape;
        with ``convert``, Python and NumPy values are converted to the TensorSpec's dtype)."""
        flat = [None] * len(self.inputs)
        if len(args) != len(self.args):
            return None
        if all(_bind(d, a, self.inputs, flat, convert) for d, a in zip(self.args, args)):
            return flat
        return None

    def run(self, flat):
        outs = self.op(*self.variables, *flat)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        n_out = len(outs) - len(self.written)
        for var, value in zip(self.written, outs[n_out:]):
            var._set(value._value)
        return _decode(self.outputs, outs[:n_out].__getitem__)

    def described(self, params):
        """The positional arguments as TensorFlow lists them: TensorSpecs named after them."""
        return [_described(d, params[i] if i < len(params) else f"arg_{i}", self.inputs)
                for i, d in enumerate(self.args)]


def _bind(desc, value, specs, flat, convert):
    if "t" in desc:
        spec = specs[desc["t"]]
        if not isinstance(value, _TensorBase):
            if not convert or isinstance(value, (str, bytes, type(None))):
                return False
            try:
                if np.asarray(value).dtype.kind in "fc" and spec.dtype._np.kind not in "fc":
                    return False   # TensorFlow does not convert 1.5 to an integer dtype
                value = _ops.convert_to_tensor(value, dtype_hint=spec.dtype)
            except (TypeError, ValueError):
                return False
        if not spec.is_compatible_with(value):
            return False
        flat[desc["t"]] = value
        return True
    if "py" in desc:
        return _is_literal(value) and value == desc["py"]
    if "none" in desc:
        return value is None
    if "shape" in desc or "dtype" in desc:
        return value == _decode(desc, None)
    if "ext" in desc:
        name, fields = desc["ext"]
        if not isinstance(value, _extension_type(name)):
            return False
        given = _ext.as_dict(value)
        return all(k in given and _bind(d, dict(given[k]) if isinstance(given[k], _ext.ImmutableDict) else given[k],
                                        specs, flat, convert) for k, d in fields)
    for tag, kind in (("list", list), ("tuple", tuple)):
        if tag in desc:
            return (type(value) is kind and len(value) == len(desc[tag])
                    and all(_bind(d, v, specs, flat, convert) for d, v in zip(desc[tag], value)))
    keys = [k for k, _ in desc["dict"]]
    return (isinstance(value, dict) and sorted(map(str, value)) == keys and all(isinstance(k, str) for k in value)
            and all(_bind(d, value[k], specs, flat, convert) for k, d in desc["dict"]))


def _described(desc, name, specs):
    """A positional argument of a signature with its TensorSpecs named as TensorFlow names them
    (``x``; ``pair_0``, ``pair_1`` inside a structure)."""
    if "t" in desc:
        return TensorSpec(specs[desc["t"]].shape, specs[desc["t"]].dtype, name)
    count = iter(range(len(specs)))
    return _decode(desc, lambda i: TensorSpec(specs[i].shape, specs[i].dtype, f"{name}_{next(count)}"))


def _shown_args(args, params):
    """The arguments of a call as TensorFlow shows them: tensors as ``<tf.Tensor 'x:0' ...>``."""
    out = []
    for i, a in enumerate(args):
        name = params[i] if i < len(params) else f"arg_{i}"
        count = [0]

        def show(x):
            if not isinstance(x, _TensorBase):
                return x
            k, count[0] = count[0], count[0] + 1
            return _Shown(f"<tf.Tensor '{name if k == 0 else f'{name}_{k}'}:0' shape={x.shape} "
                          f"dtype={x.dtype.name}>")

        out.append(jax.tree_util.tree_map(show, a, is_leaf=lambda x: isinstance(x, _TensorBase)))
    return out


def _positional(args):
    return f"Positional arguments ({len(args)} total):\n    * " + "\n    * ".join(pprint.pformat(a) for a in args)


class _LoadedFunction:
    """A function loaded from a SavedModel: one tape op per exported trace."""

    def __init__(self, name, entry, variants):
        self.name = name
        self._arg_names = list(entry["arg_names"])
        self._defaults = dict(entry.get("defaults", {}))
        self._variants = variants
        sig = entry.get("signature")
        self._signature = None if sig is None else (
            sig["args"], [TensorSpec(s["shape"], s["dtype"], s.get("name")) for s in sig["specs"]])

    def _canonical(self, args, kwargs):
        """Positional arguments: keywords by position, defaults filled in (TensorFlow's binding)."""
        args = list(args)
        kwargs = dict(kwargs)
        for n in self._arg_names[len(args):]:
            if n in kwargs:
                args.append(kwargs.pop(n))
            elif n in self._defaults:
                args.append(self._defaults[n])
            else:
                break
        if kwargs:
            raise TypeError(f"{self.name}() got unexpected keyword arguments {sorted(kwargs)}; it takes "
                            f"({', '.join(self._arg_names)}).")
        return args

    def __call__(self, *args, **kwargs):
        given = (args, kwargs)
        args = self._canonical(args, kwargs)
        if self._signature is not None:
            self._check_signature(args, given)
        for convert in (False, True):
            for v in self._variants:
                flat = v.bind(args, convert)
                if flat is not None:
                    return v.run(flat)
        options = "\n\n".join(f"Option {i + 1}:\n  {_positional(v.described(self._arg_names))}\n  Keyword "
                              "arguments: {}" for i, v in enumerate(self._variants))
        hint = "" if self._signature is None else (
            "\n\nThe input_signature accepts them, but the function's body fixed sizes it left unknown "
            "(it combines them with known sizes, as x - mean with a mean of 30 numbers): call it with those "
            "sizes.") if self._fixed_sizes() else (
            "\n\nThe input_signature has TensorSpecs of unknown rank: "
            f"tapejax exports those for ranks 0 to {_MAX_UNKNOWN_RANK - 1}; save the function with a "
            "TensorSpec of the rank you call it with.")
        raise ValueError(
            "Could not find matching concrete function to call loaded from the SavedModel. Got:\n  "
            f"{_positional(_shown_args(args, self._arg_names))}\n  Keyword arguments: {{}}\n\n Expected these "
            f"arguments to match one of the following {len(self._variants)} option(s):\n\n{options}{hint}")

    def _fixed_sizes(self):
        """Whether a variant takes a size its input_signature left unknown (``_size_constraints``)."""
        specs = self._signature[1]
        for v in self._variants:
            for spec, taken in zip(specs, v.inputs):
                known, shape = _spec_shape(spec), _spec_shape(taken)
                if known is not None and shape is not None and any(
                        a is None and b is not None for a, b in zip(known, shape)):
                    return True
        return False

    def _check_signature(self, args, given):
        """TensorFlow's TypeError for arguments that its input_signature does not accept."""
        descs, specs = self._signature
        flat = [None] * len(specs)
        problem = None
        if len(args) != len(descs):
            problem = f"takes {len(descs)} positional arguments but {len(args)} were given"
        else:
            for d, a in zip(descs, args):
                if _bind(d, a, specs, flat, True):
                    continue
                spec = specs[d["t"]] if "t" in d else None
                if spec is not None and isinstance(a, _TensorBase):
                    problem = f"Can not cast {TensorSpec(a.shape, a.dtype, spec.name)!r} to {spec!r}"
                elif spec is not None:
                    problem = f"Cannot convert {_short(a)} to EagerTensor of dtype {spec.dtype.name}"
                else:
                    problem = f"Can not bind {_short(a)} to {_decode(d, specs.__getitem__)!r}"
                break
        if problem is None:
            return
        params = self._arg_names + [f"arg_{i}" for i in range(len(self._arg_names), len(descs))]
        signature = ", ".join(f"{params[i]}: {_decode(d, specs.__getitem__)!r}" for i, d in enumerate(descs))
        raise TypeError(f"Binding inputs to tf.function failed due to `{problem}`. Received args: {given[0]!r} "
                        f"and kwargs: {given[1]!r} for signature: ({signature}).")

    def __repr__(self):
        return f"<tapejax.saved_model loaded function {self.name!r}>"


def _short(x):
    text = repr(x)
    return text if len(text) < 200 else text[:200] + "..."


class _Signature:
    """A serving signature of a loaded SavedModel: keyword arguments in, a dict out."""

    def __init__(self, fn, arg_names):
        self._fn, self._arg_names = fn, arg_names

    def __repr__(self):
        return f"<tapejax.saved_model signature ({', '.join(self._arg_names)}) -> dict>"

    @property
    def structured_outputs(self):
        """The outputs as TensorSpecs named by their keys (``{'output_0': TensorSpec(...)}``): a
        size differing between the exported traces is None, and the rank is unknown where theirs
        differ (a TensorSpec of unknown rank is exported for several ranks)."""
        variants = self._fn._variants
        per_leaf = zip(*(v.output_avals for v in variants))
        specs = [TensorSpec(_joined_shape([shape for shape, _ in avals]), avals[0][1]) for avals in per_leaf]
        out = _decode(variants[0].outputs, specs.__getitem__)
        if not isinstance(out, dict):
            out = {f"output_{i}": o for i, o in enumerate(out if isinstance(out, (list, tuple)) else [out])}
        return {k: TensorSpec(v.shape, v.dtype, k) for k, v in out.items()}

    def __call__(self, *args, **kwargs):
        # TF 2.21: a signature of one input also takes it positionally (its flat-signature
        # fallback); with more inputs, keyword arguments only.
        if args and len(self._arg_names) == 1 and len(args) == 1 and not kwargs:
            kwargs = {self._arg_names[0]: args[0]}
        elif args:
            raise TypeError(f"Signature functions take keyword arguments only: {', '.join(self._arg_names)}=...")
        missing = [n for n in self._arg_names if n not in kwargs]
        if missing:
            raise TypeError(f"Missing keyword arguments {missing}; this signature takes {self._arg_names}.")
        out = self._fn(*[kwargs[n] for n in self._arg_names])
        if isinstance(out, dict):
            return out
        if isinstance(out, (list, tuple)):
            return {f"output_{i}": o for i, o in enumerate(out)}
        return {"output_0": out}


def _joined_shape(shapes):
    """The most specific shape all of ``shapes`` have (None: an unknown rank)."""
    if len({len(s) for s in shapes}) != 1:
        return None
    return [d[0] if len(set(d)) == 1 else None for d in zip(*shapes)]


def load(export_dir, tags=None, options=None):
    """Loads a SavedModel written by ``tf.saved_model.save``; needs only tapejax and JAX.

    The files are treated as untrusted: the index, the paths it names, and every
    function file (against its SHA-256, shapes and dtypes) are checked before use.

    Returns:
        An object with the saved attribute paths: Variables (assignable,
        trainable) and functions (differentiable, callable inside tf.function);
        ``.signatures`` holds the serving signatures.

    Raises:
        OSError: no SavedModel at ``export_dir`` (TensorFlow's "SavedModel file does not exist at").
        ValueError: a directory that is not a tapejax SavedModel.
        tf.errors.DataLossError (a ValueError): a damaged or hostile SavedModel; the
            message names the file and the problem.

    Example:
        >>> import tempfile, tapejax as tf
        >>> try:
        ...     tf.saved_model.load(tempfile.mkdtemp() + '/missing')
        ... except OSError as e:
        ...     print(str(e).split(': ')[0])
        SavedModel file does not exist at
    """
    given = os.fspath(export_dir)
    export_dir = os.path.abspath(given)
    index = _load_index(export_dir, given)
    index_file = os.path.join(export_dir, _INDEX)
    ckpt_dir = os.path.join(export_dir, "variables")
    try:
        values = _read_values(ckpt_dir, _read_index(ckpt_dir))
    except _NotFoundError:
        raise _damaged(ckpt_dir, "the directory of the Variables' values is missing") from None
    variables = {}
    for p, meta in index["variables"].items():
        if p not in values:
            raise _damaged(index_file, f"the variable '{p}' has no value in {ckpt_dir!r}")
        variables[p] = Variable(values[p], trainable=meta["trainable"], name=meta["name"])

    def loaded_function(name, entry):
        return _LoadedFunction(name, entry, [
            _Variant(name, v, _read_function(export_dir, v, variables), variables) for v in entry["variants"]])

    root = _LoadedObject()
    kinds = index["kinds"]
    nodes = {"": root}

    def node(path):
        segments = path.split("/") if path else []
        for i in range(len(segments)):   # the checker bounded the depth
            sub = "/".join(segments[:i + 1])
            if sub not in nodes:
                kind = kinds.get(sub, "object")
                new = [] if kind == "list" else {} if kind == "dict" else _LoadedObject(sub)
                _attach(nodes["/".join(segments[:i])], _unescape(segments[i]), new)
                nodes[sub] = new
        return nodes[path]

    for p, var in variables.items():
        if p.startswith("_captured/"):
            continue
        parent_path, _, seg = p.rpartition("/")
        _attach(node(parent_path), _unescape(seg), var)
    for key, entry in index["functions"].items():
        if key.startswith(":signature:"):
            continue
        obj_path, _, name = key.rpartition(":")
        target = node(obj_path)
        if isinstance(target, _LoadedObject):
            target.__dict__[name] = loaded_function(name, entry)
    signatures = {}
    for sname, s in index["signatures"].items():
        signatures[sname] = _Signature(loaded_function(sname, index["functions"][s["key"]]), s["arg_names"])
    root.__dict__["signatures"] = signatures
    return root


def _attach(parent, name, value):
    if isinstance(parent, list):
        i = int(name)
        while len(parent) <= i:
            parent.append(None)
        parent[i] = value
    elif isinstance(parent, dict):
        parent[name] = value
    else:
        parent.__dict__[name] = value
