"""Type-based dispatch: TensorFlow APIs that call a user's override for arguments of a given type.

``tf.experimental.dispatch_for_api(api)`` registers a target for an API; when the API is
called with an argument whose type matches the target's signature (``MaskedTensor``,
``List[MaskedTensor]``, ``Union[MaskedTensor, tf.Tensor]``), the target runs instead.

Where the check sits costs the common call nothing:

- an op of the table (``engine.Op``) consults the targets only when JAX refused one of its
  arguments (``engine.dispatchers``, the path a RaggedTensor or a string takes): an
  ExtensionType never converts to an array, so that is where it arrives;
- a public Python function (``tf.stack``, ``tf.where``...) is published wrapped
  (:func:`add_dispatch_support`, as TensorFlow's ``add_dispatch_support``): with no target
  registered for it, the wrapper is one truth test before the call.

As in TensorFlow, only arguments of a type registered as dispatchable (an ExtensionType)
make a call look for targets: plain tensors never dispatch.
"""
import functools
import inspect
import types
import typing

from . import engine as _engine

_DISPATCHABLE = []          # types whose instances make a call look for targets (ExtensionType)
_TARGETS = {}               # API -> [(checker, target)], in registration order
_SIGNATURES = {}            # API -> {target: [signature]}


def register_dispatchable_type(cls):
    """Lets instances of ``cls`` (and its subclasses) trigger type-based dispatch."""
    if cls not in _DISPATCHABLE:
        _DISPATCHABLE.append(cls)
    return cls


def _targets_of(api):
    return _TARGETS.setdefault(api, getattr(api, "_tf_dispatch_targets", None) or [])


def _has_dispatchable(args, kwargs):
    kinds = tuple(_DISPATCHABLE)
    for a in (*args, *kwargs.values()):
        if isinstance(a, kinds):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(x, kinds) for x in a):
            return True
    return False


def dispatch(api, args, kwargs):
    """The result of the first target of ``api`` whose signature the arguments match, else
    NotImplemented."""
    targets = _TARGETS.get(api)
    if not targets or not _has_dispatchable(args, kwargs):
        return NotImplemented
    for checker, target, _ in list(targets):
        if checker(args, kwargs):
            return target(*args, **kwargs)
    return NotImplemented


def add_dispatch_support(fn):
    """``fn`` published with type-based dispatch (TensorFlow's ``add_dispatch_support``).

    The wrapper keeps ``fn``'s name, docstring and signature; with no target registered
    it costs one truth test.
    """
    if getattr(fn, "_tf_dispatch_targets", None) is not None:
        return fn
    targets = []

    @functools.wraps(fn)
    def op_dispatch_handler(*args, **kwargs):
        if targets and (r := dispatch(op_dispatch_handler, args, kwargs)) is not NotImplemented:
            return r
        return fn(*args, **kwargs)

    op_dispatch_handler._tf_dispatch_targets = targets
    _TARGETS[op_dispatch_handler] = targets
    return op_dispatch_handler


def supports_dispatch(api):
    return isinstance(api, _engine.Op) or getattr(api, "_tf_dispatch_targets", None) is not None


def _op_dispatcher(op, args, static):
    """Dispatch for an op of the table, tried when JAX refused an argument (engine.dispatchers)."""
    if not _TARGETS.get(op):
        return NotImplemented
    return dispatch(op, args, static)


_engine.dispatchers.insert(0, _op_dispatcher)


# ---------------------------------------------------------------------------
# Signatures and type checkers
# ---------------------------------------------------------------------------

def api_signature(api):
    """The signature an API is called with (an op's: its function's tensor and static
    parameters, and TensorFlow's ``name``)."""
    if not isinstance(api, _engine.Op):
        return inspect.signature(api)
    P = inspect.Parameter
    if api.n_args is None:
        nin = getattr(inspect.unwrap(api.fn), "nin", None)    # a NumPy-style ufunc: TensorFlow's (x, y, name=None)
        if nin not in (1, 2):
            return None
        return inspect.Signature([P(nm, P.POSITIONAL_OR_KEYWORD) for nm in ("x", "y")[:nin]]
                                 + [P("name", P.POSITIONAL_OR_KEYWORD, default=None)])
    n, rest = api.n_args
    params = [P(nm, P.POSITIONAL_OR_KEYWORD) for nm in api.arg_names]
    fn_params = inspect.signature(api.fn).parameters
    params += [P(nm, P.POSITIONAL_OR_KEYWORD, default=fn_params[nm].default) for nm in rest]
    if "name" not in fn_params:
        params.append(P("name", P.POSITIONAL_OR_KEYWORD, default=None))
    return inspect.Signature(params)


def _origin(t):
    return typing.get_origin(t)


def is_union(t):
    return _origin(t) in (typing.Union, types.UnionType)


def make_type_checker(annotation):
    """A predicate for values of ``annotation``: a type, ``List[...]``, ``Union[...]`` or None."""
    if is_union(annotation):
        options = [make_type_checker(t) for t in typing.get_args(annotation)]
        return lambda x: any(c(x) for c in options)
    if _origin(annotation) is list:
        args = typing.get_args(annotation)
        if len(args) != 1:
            raise AssertionError("Expected List[...] to have a single type parameter")
        elt = make_type_checker(args[0])
        return lambda x: isinstance(x, (list, tuple)) and all(elt(v) for v in x)
    if isinstance(annotation, type):
        return lambda x: isinstance(x, annotation)
    if annotation is None:
        return lambda x: x is None
    raise ValueError(f"Type annotation {annotation} is not currently supported by dispatch.  Supported "
                     "annotations: type objects,  List[...], and Union[...]")


def make_signature_checker(api_sig, signature):
    """``(args, kwargs) -> bool``: whether a call's arguments match ``signature``
    ({parameter name or index: annotation})."""
    if not (isinstance(signature, dict) and all(isinstance(k, (str, int)) for k in signature)):
        raise TypeError("signatures must be dictionaries mapping parameter names to type annotations.")
    names = list(api_sig.parameters)
    checks = []
    for name, annotation in signature.items():
        if isinstance(name, int) and name < len(names):
            name = names[name]
        param = api_sig.parameters.get(name)
        if param is None:
            raise ValueError(f"signature includes annotation for unknown parameter {name!r}.")
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            raise ValueError("Dispatch currently only supports type annotations for positional parameters; "
                             f"can't handle annotation for {param.kind!r} parameter {name}.")
        checks.append((names.index(name), name, make_type_checker(annotation)))

    def matches(args, kwargs):
        for index, name, check in checks:
            if index < len(args):
                value = args[index]
            elif name in kwargs:
                value = kwargs[name]
            else:
                return False
            if not check(value):
                return False
        return True
    return matches


def register(api, checker, target, signature, key=None):
    """Adds ``target`` for ``api``; ``key`` (default: the target) is what unregisters it."""
    key = target if key is None else key
    _targets_of(api).append((checker, target, key))
    _SIGNATURES.setdefault(api, {}).setdefault(key, []).append(signature)


def unregister(key):
    """Removes the targets registered under ``key`` from every API; whether there were any."""
    found = False
    for api, sigs in _SIGNATURES.items():
        if key in sigs:
            del sigs[key]
            _TARGETS[api][:] = [e for e in _TARGETS[api] if e[2] is not key]
            found = True
    return found


def signatures_for(cls):
    """{api: [signature]} of the registered targets whose signatures mention ``cls``."""
    def mentions(x):
        if isinstance(x, dict):
            return any(mentions(v) for v in x.values())
        if x is cls:
            return True
        if is_union(x) or _origin(x) is list:
            return any(mentions(a) for a in typing.get_args(x))
        return False
    out = {}
    for api, sigs in _SIGNATURES.items():
        for found in sigs.values():
            hits = [s for s in found if mentions(s)]
            if hits:
                out.setdefault(api, []).extend(hits)
    return out
