"""Runs a traced JAX function (its jaxpr) with NumPy, without compiling it.

XLA compiles every program per input shape: 15-40 ms for one small op on a CPU. An eager
op at a shape it has not met before (a new batch size, the short last batch of an epoch)
is run here instead -- traced by JAX (about a millisecond), each primitive computed by
NumPy -- and compiled only when that shape comes back (see ``_engine.apply``).

Only primitives whose NumPy form computes what XLA computes are listed in ``_RULES``,
with the parameters each rule understands; anything else (another primitive, parameter,
dtype such as bfloat16 or complex, an empty reduction) raises :class:`Unsupported`, and
the op is compiled as before. Results agree with XLA's to rounding (summation order,
``exp``/``tanh`` approximations), not bit for bit.
"""
import numpy as np


class Unsupported(Exception):
    """The jaxpr holds something this evaluator does not compute exactly."""


# bfloat16/float16 are left out: XLA keeps fused intermediates in float32, NumPy rounds each op.
DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                         np.uint8, np.uint16, np.uint32, np.uint64, np.bool_))


def evaluate(closed_jaxpr, args):
    """The outputs (NumPy arrays) of ``closed_jaxpr`` applied to ``args`` (NumPy arrays)."""
    with np.errstate(all="ignore"):     # log(0) = -inf, overflow to inf: as XLA, silently
        return _eval(closed_jaxpr.jaxpr, closed_jaxpr.consts, args)


def _eval(jaxpr, consts, args):
    if len(args) != len(jaxpr.invars) or len(consts) != len(jaxpr.constvars):
        raise Unsupported("arguments")
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = _typed(np.asarray(x), v.aval)
    for v, x in zip(jaxpr.invars, args):
        env[v] = _typed(np.asarray(x), v.aval)
    for eqn in jaxpr.eqns:
        rule = _RULES.get(eqn.primitive.name)
        if rule is None:
            raise Unsupported(eqn.primitive.name)
        ins = [_read(env, v) for v in eqn.invars]
        try:
            outs = rule(*ins, **eqn.params)
        except (TypeError, ValueError, IndexError) as e:   # parameters a rule does not know
            raise Unsupported(f"{eqn.primitive.name}: {e}") from None
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for v, o in zip(eqn.outvars, outs):
            env[v] = _typed(o, v.aval)
    return [_read(env, v) for v in jaxpr.outvars]


def _read(env, v):
    if hasattr(v, "val"):          # a Literal
        return _typed(np.asarray(v.val), v.aval)
    return env[v]


def _typed(x, aval):
    """``x`` as an array of ``aval``'s dtype, checked against its shape."""
    dt = np.dtype(aval.dtype)
    if dt not in DTYPES:
        raise Unsupported(str(dt))
    x = np.asarray(x)
    if x.dtype != dt:
        if x.dtype.kind != dt.kind:   # a rule that computed in another kind: not trusted
            raise Unsupported(f"{x.dtype} for {dt}")
        x = x.astype(dt)
    if x.shape != tuple(aval.shape):
        raise Unsupported(f"shape {x.shape} for {aval.shape}")
    return x


# ---------------------------------------------------------------------------- rules

def _plain(fn, kinds="fiub"):
    """An elementwise primitive: every parameter must be absent or None (``accuracy``,
    ``out_dtype``)."""
    def rule(*xs, **params):
        if any(v is not None for v in params.values()):
            raise Unsupported(f"{fn.__name__} {params}")
        if any(x.dtype.kind not in kinds for x in xs):
            raise Unsupported(f"{fn.__name__} on {[x.dtype for x in xs]}")
        return fn(*xs)
    return rule


def _float(fn):
    return _plain(fn, kinds="f")


def _logistic(x):
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _rsqrt(x):
    return x.dtype.type(1) / np.sqrt(x)


def _round(x, rounding_method):
    if int(rounding_method) == 1:         # TO_NEAREST_EVEN
        return np.rint(x)
    if int(rounding_method) == 0:         # AWAY_FROM_ZERO, exactly (no x + 0.5 rounding)
        t = np.trunc(x)
        return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), x.dtype.type(0))
    raise Unsupported(f"round {rounding_method}")


def _integer_pow(x, y):
    # XLA's lowering: repeated squaring, then a reciprocal for a negative power.
    if y == 0:
        return np.ones_like(x)
    recip, y = y < 0, abs(y)
    acc = None
    while y > 0:
        if y & 1:
            acc = x if acc is None else acc * x
        y >>= 1
        if y > 0:
            x = x * x
    if recip:
        if acc.dtype.kind != "f":
            raise Unsupported("integer_pow of an integer to a negative power")
        return acc.dtype.type(1) / acc
    return acc


def _pow(x, y):
    if x.dtype.kind != "f" or y.dtype.kind not in "fiu":
        raise Unsupported("pow")
    return np.power(x, y.astype(x.dtype))


def _select_n(pred, *cases):
    if len(cases) == 1:
        return cases[0]
    if len(cases) != 2 or pred.dtype.kind not in "biu":
        raise Unsupported("select_n")
    return np.where(pred.astype(bool), cases[1], cases[0])


def _clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


def _convert(x, new_dtype, weak_type, sharding):
    _no_sharding(sharding)
    dt = np.dtype(new_dtype)
    if dt not in DTYPES:
        raise Unsupported(str(dt))
    if x.dtype.kind == "f" and dt.kind in "iu":
        # In range, both truncate toward zero; out of range (and NaN) XLA saturates.
        info = np.iinfo(dt)
        if x.size and not (np.all(np.isfinite(x)) and x.min() > info.min - 1 and x.max() < info.max + 1):
            raise Unsupported("float to int out of range")
    if dt == np.bool_:
        return x != 0
    return x.astype(dt)


def _no_sharding(s):
    if s is not None:
        raise Unsupported("sharding")


def _broadcast_in_dim(x, shape, broadcast_dimensions, sharding):
    _no_sharding(sharding)
    if any(not isinstance(d, (int, np.integer)) for d in shape):
        raise Unsupported("dynamic shape")
    s = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        s[d] = x.shape[i]
    return np.broadcast_to(x.reshape(s), shape)


def _reshape(x, new_sizes, dimensions, sharding=None):
    _no_sharding(sharding)
    if dimensions is not None:
        raise Unsupported("reshape with dimensions")
    return x.reshape(new_sizes)


def _dot_general(a, b, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    _no_sharding(out_sharding)
    (lc, rc), (lb, rb) = dimension_numbers
    if a.dtype != b.dtype or a.dtype == np.bool_:
        raise Unsupported("dot_general dtypes")
    if preferred_element_type is not None and np.dtype(preferred_element_type) != a.dtype:
        pet = np.dtype(preferred_element_type)
        if pet not in DTYPES or (pet.kind == "f") != (a.dtype.kind == "f"):
            raise Unsupported("dot_general preferred_element_type")
        a, b = a.astype(pet), b.astype(pet)
    lc, rc, lb, rb = map(tuple, (lc, rc, lb, rb))
    lf = tuple(d for d in range(a.ndim) if d not in lc and d not in lb)
    rf = tuple(d for d in range(b.ndim) if d not in rc and d not in rb)
    batch = tuple(a.shape[d] for d in lb)
    k = int(np.prod([a.shape[d] for d in lc], dtype=np.int64))
    m = int(np.prod([a.shape[d] for d in lf], dtype=np.int64))
    n = int(np.prod([b.shape[d] for d in rf], dtype=np.int64))
    nb = int(np.prod(batch, dtype=np.int64))
    am = a.transpose(lb + lf + lc).reshape(nb, m, k)
    bm = b.transpose(rb + rc + rf).reshape(nb, k, n)
    out = np.matmul(am, bm)
    return out.reshape(batch + tuple(a.shape[d] for d in lf) + tuple(b.shape[d] for d in rf))


def _reduction(fn, kinds="fiu", needs_elements=False):
    def rule(x, axes, out_sharding=None):
        _no_sharding(out_sharding)
        if x.dtype.kind not in kinds:
            raise Unsupported(f"{fn.__name__} of {x.dtype}")
        axes = tuple(axes)
        if needs_elements and any(x.shape[a] == 0 for a in axes):
            raise Unsupported("empty reduction")
        return fn(x, axis=axes)
    return rule


def _sum(x, axis):
    return np.sum(x, axis=axis, dtype=x.dtype)


def _prod(x, axis):
    return np.prod(x, axis=axis, dtype=x.dtype)


def _arg(fn):
    def rule(x, axes, index_dtype):
        if len(axes) != 1 or x.shape[axes[0]] == 0 or x.dtype.kind not in "fiu":
            raise Unsupported("argmax")
        return fn(x, axis=axes[0]).astype(index_dtype)
    return rule


def _cumulative(fn):
    def rule(x, axis, reverse):
        if x.dtype.kind not in "fiu":
            raise Unsupported("cumulative")
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis), axis)
        return fn(x, axis)
    return rule


def _cumsum(x, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _cumprod(x, axis):
    return np.cumprod(x, axis=axis, dtype=x.dtype)


def _iota(dtype, shape, dimension, sharding):
    _no_sharding(sharding)
    s = [1] * len(shape)
    s[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(s), shape)


def _slice(x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))]


def _starts(x, sizes, starts):
    # XLA clamps each start so that the slice lies inside the operand.
    return tuple(int(min(max(int(s), 0), d - n)) for s, d, n in zip(starts, x.shape, sizes))


def _dynamic_slice(x, *starts, slice_sizes):
    if len(starts) != x.ndim:
        raise Unsupported("dynamic_slice")
    st = _starts(x, slice_sizes, starts)
    return x[tuple(slice(s, s + n) for s, n in zip(st, slice_sizes))]


def _dynamic_update_slice(x, update, *starts):
    if len(starts) != x.ndim:
        raise Unsupported("dynamic_update_slice")
    st = _starts(x, update.shape, starts)
    out = np.array(x)
    out[tuple(slice(s, s + n) for s, n in zip(st, update.shape))] = update
    return out


def _pad(x, value, padding_config):
    if any(i != 0 for _, _, i in padding_config):
        raise Unsupported("interior padding")
    grown = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi, _ in padding_config], constant_values=value)
    return grown[tuple(slice(max(-lo, 0), grown.shape[d] - max(-hi, 0))
                       for d, (lo, hi, _) in enumerate(padding_config))]


def _split(x, sizes, axis):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


def _closed(name):
    def rule(*xs, **params):
        closed = params[name]
        jaxpr = getattr(closed, "jaxpr", closed)
        consts = getattr(closed, "consts", ())
        return _eval(jaxpr, consts, xs)
    return rule


def _jit(*xs, jaxpr, in_shardings=(), out_shardings=(), donated_invars=(), compiler_options_kvs=(), **_):
    for s in tuple(in_shardings) + tuple(out_shardings):
        if type(s).__name__ != "UnspecifiedValue":
            raise Unsupported("jit with shardings")
    if any(donated_invars) or compiler_options_kvs:
        raise Unsupported("jit options")
    return _eval(jaxpr.jaxpr, jaxpr.consts, xs)


def _custom_jvp_call(*xs, call_jaxpr, **_):
    return _eval(call_jaxpr.jaxpr, call_jaxpr.consts, xs)


def _identity(x, **_):
    return x


def _shift(kind):
    """XLA's shifts of integers; a count outside [0, bits) gives 0 (-1 for an arithmetic
    shift of a negative number)."""
    def rule(x, y):
        if x.dtype.kind not in "iu" or x.dtype != y.dtype:
            raise Unsupported("shift")
        bits = x.dtype.itemsize * 8
        u = np.dtype(f"u{x.dtype.itemsize}")
        ok = (y >= 0) & (y < bits)
        n = np.where(ok, y, 0).astype(u)
        if kind == "left":
            out = (x.astype(u) << n).astype(x.dtype)
            return np.where(ok, out, 0).astype(x.dtype)
        if kind == "logical":
            out = (x.astype(u) >> n).astype(x.dtype)
            return np.where(ok, out, 0).astype(x.dtype)
        s = x.astype(np.dtype(f"i{x.dtype.itemsize}"))
        out = np.where(ok, s >> n.astype(s.dtype), np.where(s < 0, -1, 0))
        return out.astype(x.dtype)
    return rule


def _bitcast(x, new_dtype):
    dt = np.dtype(new_dtype)
    if dt not in DTYPES or dt.itemsize != x.dtype.itemsize:
        raise Unsupported(f"bitcast to {dt}")
    return np.ascontiguousarray(x).view(dt)


_RULES = {
    "add": _plain(np.add), "add_any": _plain(np.add), "sub": _plain(np.subtract),
    "mul": _plain(np.multiply), "div": _float(np.divide), "rem": _float(np.fmod),
    "max": _plain(np.maximum), "min": _plain(np.minimum), "pow": _pow, "atan2": _float(np.arctan2),
    "neg": _plain(np.negative, "fi"), "abs": _plain(np.abs, "fi"), "sign": _plain(np.sign, "fiu"),
    "floor": _float(np.floor), "ceil": _float(np.ceil), "round": _round, "is_finite": _float(np.isfinite),
    "exp": _float(np.exp), "exp2": _float(np.exp2), "log": _float(np.log), "log1p": _float(np.log1p),
    "expm1": _float(np.expm1), "tanh": _float(np.tanh), "logistic": _float(_logistic),
    "sin": _float(np.sin), "cos": _float(np.cos), "tan": _float(np.tan), "asin": _float(np.arcsin),
    "acos": _float(np.arccos), "atan": _float(np.arctan), "sinh": _float(np.sinh), "cosh": _float(np.cosh),
    "asinh": _float(np.arcsinh), "acosh": _float(np.arccosh), "atanh": _float(np.arctanh),
    "sqrt": _float(np.sqrt), "rsqrt": _float(_rsqrt), "cbrt": _float(np.cbrt), "square": _plain(np.square, "fi"),
    "one_minus_square": _float(lambda x: x.dtype.type(1) - np.square(x)),   # jax >= 0.11: tanh's derivative
    "integer_pow": _integer_pow, "bitcast_convert_type": _bitcast,
    "shift_left": _shift("left"), "shift_right_logical": _shift("logical"),
    "shift_right_arithmetic": _shift("arithmetic"),
    "eq": _plain(np.equal), "ne": _plain(np.not_equal), "lt": _plain(np.less), "le": _plain(np.less_equal),
    "gt": _plain(np.greater), "ge": _plain(np.greater_equal),
    "and": _plain(np.bitwise_and, "iub"), "or": _plain(np.bitwise_or, "iub"),
    "xor": _plain(np.bitwise_xor, "iub"), "not": _plain(np.invert, "iub"),
    "select_n": _select_n, "clamp": _clamp, "convert_element_type": _convert,
    "broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape,
    "squeeze": lambda x, dimensions: np.squeeze(x, tuple(dimensions)),
    "transpose": lambda x, permutation: np.transpose(x, permutation),
    "rev": lambda x, dimensions: np.flip(x, tuple(dimensions)),
    "dot_general": _dot_general,
    "reduce_sum": _reduction(_sum), "reduce_prod": _reduction(_prod),
    "reduce_max": _reduction(np.max, needs_elements=True), "reduce_min": _reduction(np.min, needs_elements=True),
    "reduce_and": _reduction(np.all, kinds="b"), "reduce_or": _reduction(np.any, kinds="b"),
    "argmax": _arg(np.argmax), "argmin": _arg(np.argmin),
    "cumsum": _cumulative(_cumsum), "cumprod": _cumulative(_cumprod),
    "cummax": _cumulative(np.maximum.accumulate), "cummin": _cumulative(np.minimum.accumulate),
    "iota": _iota, "slice": _slice, "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice, "concatenate": lambda *xs, dimension: np.concatenate(xs, dimension),
    "pad": _pad, "split": _split,
    "copy": _identity, "copy_p": _identity, "stop_gradient": _identity,
    "optimization_barrier": lambda *xs, **_: xs,   # an IEEE division's divisor (ops/math_ops._ieee_divisor)
    "jit": _jit, "pjit": _jit, "closed_call": _closed("call_jaxpr"),
    "custom_jvp_call": _custom_jvp_call,
}
