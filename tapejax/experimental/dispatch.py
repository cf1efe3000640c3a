"""tf.experimental.dispatch_for_api and the elementwise dispatch decorators (TensorFlow's
``tensorflow/python/util/dispatch.py``), over ``tapejax._core.dispatch``."""
import functools
import inspect

from .._core import dispatch as _dispatch
from ..ops import exports as _exports

# TensorFlow 2.21's unary and binary elementwise APIs (``dispatch.unary_elementwise_apis()``),
# those tapejax publishes are resolved when the first handler is registered.
_UNARY_NAMES = """
zeros_like ones_like debugging.check_numerics math.abs math.softplus math.sign math.real math.imag math.angle
math.round cast dtypes.saturate_cast math.sigmoid math.log_sigmoid math.conj math.reciprocal_no_nan math.erfinv
math.ndtri math.erfcinv math.ceil math.sqrt math.exp math.rsqrt math.acos math.floor bitwise.invert math.acosh
math.asin math.asinh math.atan math.atanh math.cos math.cosh math.digamma math.erf math.erfc math.expm1
math.is_finite math.is_inf math.is_nan math.lgamma math.log math.log1p math.logical_not math.negative
math.nextafter math.reciprocal math.rint math.sin math.sinh math.square math.tan math.tanh nn.relu6
nn.leaky_relu nn.gelu nn.elu nn.relu nn.selu nn.softsign strings.regex_full_match strings.regex_replace
strings.length strings.substr strings.to_number strings.to_hash_bucket strings.as_string io.decode_base64
io.encode_base64 strings.lower strings.upper strings.unicode_transcode strings.strip strings.to_hash_bucket_fast
strings.to_hash_bucket_strong strings.unicode_script math.special.dawsn math.special.expint
math.special.fresnel_cos math.special.fresnel_sin math.special.spence math.bessel_i0 math.bessel_i0e
math.bessel_i1 math.bessel_i1e math.special.bessel_k0 math.special.bessel_k0e math.special.bessel_k1
math.special.bessel_k1e math.special.bessel_j0 math.special.bessel_j1 math.special.bessel_y0
math.special.bessel_y1 clip_by_value nn.silu image.random_brightness image.stateless_random_brightness
image.adjust_brightness image.adjust_gamma image.convert_image_dtype io.decode_compressed
""".split()
_BINARY_NAMES = """
math.divide math.multiply math.subtract math.scalar_mul math.pow dtypes.complex math.truediv math.divide_no_nan
math.multiply_no_nan math.floordiv math.logical_xor math.equal math.not_equal math.add math.xdivy math.xlog1py
bitwise.bitwise_and bitwise.bitwise_or bitwise.bitwise_xor bitwise.left_shift bitwise.right_shift math.atan2
math.floormod math.greater math.greater_equal math.less math.less_equal math.logical_and math.logical_or
math.maximum math.minimum realdiv math.squared_difference truncatediv truncatemod math.xlogy math.zeta
nn.sigmoid_cross_entropy_with_logits
""".split()

_resolved = {}
_ELEMENTWISE_HANDLERS = {}    # (x_type,) or (x_type, y_type) -> handler
_ELEMENTWISE_TARGETS = {}     # the same keys -> [(api, target)]


def _apis(kind):
    if kind not in _resolved:
        names = _UNARY_NAMES if kind == "unary" else _BINARY_NAMES
        found = []
        for path in names:
            namespace, _, name = path.rpartition(".")
            api = _exports(namespace).get(name)
            if api is not None and _dispatch.supports_dispatch(api) and api not in found:
                found.append(api)
        _resolved[kind] = found
    return _resolved[kind]


def _name_scope_wrapper(func, api_sig):
    """``func`` taking the API's ``name`` argument too, when the API has one and func does not."""
    if api_sig is None or "name" not in api_sig.parameters:
        return func
    sig = inspect.signature(func)
    if "name" in sig.parameters or any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return func
    index = list(api_sig.parameters).index("name")

    @functools.wraps(func)
    def wrapped_func(*args, **kwargs):
        if index < len(args):
            args = args[:index] + args[index + 1:]
        else:
            kwargs.pop("name", None)
        return func(*args, **kwargs)
    wrapped_func.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + [api_sig.parameters["name"]])
    return wrapped_func


def _check_signature(api_sig, func):
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if (any(p.kind == p.VAR_POSITIONAL for p in params) and any(p.kind == p.VAR_KEYWORD for p in params)
            and not any(p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY) for p in params)):
        return
    ok = len(api_sig.parameters) == len(params) and all(
        a.name == b.name and a.kind == b.kind for a, b in zip(api_sig.parameters.values(), params))
    if not ok:
        raise ValueError(f"Dispatch function's signature {sig} does not match API's signature {api_sig}.")


def dispatch_for_api(api, *signatures):
    """Decorator: ``api`` calls the decorated function when its arguments match a signature.

    Args:
        api: a TensorFlow API (``tf.stack``, ``tf.math.add``...).
        *signatures: dicts ``{parameter name: type annotation}``; without any, the decorated
            function's own annotations are the signature. An annotation is a type,
            ``List[...]`` or ``Union[...]``.

    Raises:
        ValueError: ``api`` does not support dispatch, or the function's signature is not the API's.

    Example:
        >>> import tapejax as tf
        >>> from typing import List
        >>> class Pair(tf.experimental.ExtensionType):
        ...     a: tf.Tensor
        ...     b: tf.Tensor
        >>> @tf.experimental.dispatch_for_api(tf.stack)
        ... def pair_stack(values: List[Pair], axis=0):
        ...     return Pair(tf.stack([v.a for v in values], axis), tf.stack([v.b for v in values], axis))
        >>> tf.stack([Pair(1, 2), Pair(3, 4)]).a.numpy()
        array([1, 3], dtype=int32)
        >>> tf.experimental.unregister_dispatch_for(pair_stack)
    """
    if not _dispatch.supports_dispatch(api):
        raise ValueError(f"{api} does not support dispatch.")
    api_sig = _dispatch.api_signature(api)
    if api_sig is None and signatures:
        raise ValueError(f"{api} does not support dispatch by parameter name.")
    checkers = [(_dispatch.make_signature_checker(api_sig, s), s) for s in signatures]

    def decorator(dispatch_target):
        if not callable(dispatch_target):
            raise TypeError(f"Expected dispatch_target to be callable; got {dispatch_target!r}")
        target = _name_scope_wrapper(dispatch_target, api_sig)
        if api_sig is not None:
            _check_signature(api_sig, target)
        found = checkers
        if not found:
            sig = {n: p.annotation for n, p in inspect.signature(dispatch_target).parameters.items()
                   if p.annotation is not inspect.Parameter.empty}
            if not sig:
                raise ValueError("The dispatch_for_api decorator must be called with at least one signature, or "
                                 "applied to a function that has type annotations on its parameters.")
            found = [(_dispatch.make_signature_checker(api_sig, sig), sig)]
        for checker, s in found:
            _dispatch.register(api, checker, target, s, key=dispatch_target)
        return dispatch_target
    return decorator


def unregister_dispatch_for(dispatch_target):
    """Removes a function registered with a ``dispatch_for_*`` decorator from every API.

    Raises:
        ValueError: it was not registered.
    """
    found = _dispatch.unregister(dispatch_target)
    for key in [k for k, h in _ELEMENTWISE_HANDLERS.items() if h is dispatch_target]:
        for _, target in _ELEMENTWISE_TARGETS.pop(key):
            _dispatch.unregister(target)
        del _ELEMENTWISE_HANDLERS[key]
        found = True
    if not found:
        raise ValueError(f"Function {dispatch_target} was not registered using a `@dispatch_for_*` decorator.")


def _elementwise_target(api, n, handler):
    def dispatch_target(*args, **kwargs):
        kwargs.pop("name", None)
        xs, rest = list(args[:n]), args[n:]
        names = list(_dispatch.api_signature(api).parameters)[:n] if _dispatch.api_signature(api) else []
        for nm in names[len(xs):]:
            xs.append(kwargs.pop(nm, None))
        if rest or kwargs:
            return handler(lambda *vs: api(*vs, *rest, **kwargs), *xs)
        return handler(api, *xs)
    dispatch_target.__name__ = dispatch_target.__qualname__ = "elementwise_dispatch_target_for_" + getattr(
        api, "__name__", getattr(api, "name", "op"))
    return dispatch_target


def _register_elementwise(kind, types, handler):
    key = tuple(types)
    if key in _ELEMENTWISE_HANDLERS:
        what = "A unary elementwise" if kind == "unary" else "A binary elementwise"
        on = types[0] if kind == "unary" else f"({types[0]}, {types[1]})"
        raise ValueError(f"{what} dispatch handler ({_ELEMENTWISE_HANDLERS[key]}) has already been registered "
                         f"for {on}.")
    _ELEMENTWISE_HANDLERS[key] = handler
    targets = _ELEMENTWISE_TARGETS.setdefault(key, [])
    for api in _apis(kind):
        target = _elementwise_target(api, len(types), handler)
        sig = dict(enumerate(types))
        api_sig = _dispatch.api_signature(api)
        checker = (_dispatch.make_signature_checker(api_sig, sig) if api_sig is not None
                   else _positional_checker(types))
        _dispatch.register(api, checker, target, sig)
        targets.append((api, target))
    return handler


def _positional_checker(types):
    checks = [_dispatch.make_type_checker(t) for t in types]
    return lambda args, kwargs: len(args) >= len(checks) and all(c(a) for c, a in zip(checks, args))


def dispatch_for_unary_elementwise_apis(x_type):
    """Decorator: every unary elementwise API (``tf.math.abs``, ``tf.ones_like``, ``tf.cast``...)
    calls ``handler(api_func, x)`` when its argument is of ``x_type``.

    Example:
        >>> import tapejax as tf
        >>> class Boxed(tf.experimental.ExtensionType):
        ...     v: tf.Tensor
        >>> @tf.experimental.dispatch_for_unary_elementwise_apis(Boxed)
        ... def boxed_unary(api_func, x):
        ...     return Boxed(api_func(x.v))
        >>> tf.abs(Boxed([-1, 2])).v.numpy()
        array([1, 2], dtype=int32)
        >>> tf.experimental.unregister_dispatch_for(boxed_unary)
    """
    return lambda handler: _register_elementwise("unary", (x_type,), handler)


def dispatch_for_binary_elementwise_apis(x_type, y_type):
    """Decorator: every binary elementwise API (``tf.math.add``, ``tf.math.equal``...) calls
    ``handler(api_func, x, y)`` when its arguments are of ``x_type`` and ``y_type``."""
    return lambda handler: _register_elementwise("binary", (x_type, y_type), handler)


def unary_elementwise_apis():
    return tuple(_apis("unary"))


def binary_elementwise_apis():
    return tuple(_apis("binary"))
