"""TensorFlow's CPU transcendental functions, bit for bit, written in ``jax.numpy``.

TensorFlow's CPU kernels for ``Exp``, ``Tanh``, ``Sigmoid``... evaluate Eigen's functors: over
a flattened tensor of ``n`` float32 values, the first ``n - n % 8`` go through the functor's
AVX packet function (8 floats at a time, built without FMA: every product and every sum
rounded separately) and the last ``n % 8`` (all of them for ``n < 8``, and a scalar tensor)
through its scalar function, which for ``exp`` and ``log`` is glibc's ``expf``/``logf``.
The thread pool splits big tensors in blocks of whole packets, so only the flat position in
the (materialized, row-major) input decides the path. TensorFlow's CPU threads flush
denormal results to zero (and read denormal inputs as zero), as XLA's CPU code does.

XLA computes ``exp`` and ``tanh`` with its own approximations (they differ from TF's in the
last bit for a quarter to half of random inputs), and contracts every ``a * b + c`` into one
fused multiply-add. The functions here repeat Eigen's arithmetic step by step, each product
passed through :func:`fence_of` (``a * b + z`` with ``z`` a run-time ``-0.0``: XLA may fuse
it, but then it is the rounded product), so that a compiled program and
``_core.host_eval`` (NumPy, one rounding per primitive) both give TensorFlow's bits.

Every function takes and returns a ``jax.Array``; float32 follows Eigen, float16 and
bfloat16 are computed in float32 and rounded (as TF's Eigen does), other dtypes use XLA's
function.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_HALF = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))
_MIN_NORMAL32 = np.float32(2.0 ** -126)


# ------------------------------------------------------------------- building blocks

def fence_of(x):
    """``f(p) = p + z``, with ``z = -(min(|x|, 1) * 0)``: -0.0 computed at run time from
    ``x`` (NaN where ``x`` is NaN, whose result is NaN anyway). ``f(a * b) + c`` rounds the
    product before the sum, as Eigen's ``pmadd`` without FMA; a constant -0.0 would be
    folded away and ``a * b + c`` contracted into one FMA by XLA's CPU backend."""
    z = -(jnp.minimum(jnp.abs(x), jnp.ones((), x.dtype)) * jnp.zeros((), x.dtype))
    return lambda p: p + z


def _pmin(a, b):
    """Eigen's ``pmin`` (``vminps(b, a)``, std::min): ``a`` where either is NaN."""
    return jnp.where(b < a, b, a)


def _pmax(a, b):
    """Eigen's ``pmax``: ``a`` where either is NaN."""
    return jnp.where(a < b, b, a)


def _flush(v):
    """Denormal results flushed to (signed) zero, as TF's CPU threads (FTZ) do."""
    tiny = jnp.asarray(jnp.finfo(v.dtype).tiny, v.dtype)
    return jnp.where(jnp.abs(v) < tiny, v * jnp.zeros((), v.dtype), v)


def _flush_floats(v):
    """:func:`_flush` for float32/float64 ``v``; other dtypes as they are."""
    return _flush(v) if v.dtype in (_F32, _F64) else v


def flush(v):
    """``v`` with denormal float32/float64 values flushed to (signed) zero, as TF's CPU threads
    (and XLA) produce them; for code the host evaluator (NumPy, no FTZ) also runs."""
    return _flush_floats(jnp.asarray(v))


def _pow2_32(k):
    """``2.0 ** k`` (float32) for integer-valued float32 ``k`` in [-126, 127], exactly."""
    return lax.bitcast_convert_type((k.astype(jnp.int32) + 127) * (1 << 23), jnp.float32)


def _pow2_64(k):
    """``2.0 ** k`` (float64) for integer-valued float64 ``k`` in [-1022, 1023], exactly."""
    return lax.bitcast_convert_type((k.astype(jnp.int64) + 1023) * (1 << 52), jnp.float64)


def _ldexp32(y, m):
    """``y * 2**m`` rounded once (Eigen's ``pldexp``; denormals flushed) for float32 ``y``
    near 1 and integer-valued ``m`` (NaN or beyond [-150, 128] clamped there)."""
    m = jnp.where(m > 128, jnp.float32(128), jnp.where(m > -150, m, jnp.float32(-150)))
    k1 = jnp.floor(m * jnp.float32(0.5))
    return _flush((y * _pow2_32(k1)) * _pow2_32(m - k1))


def _lookup(i, table):
    """``table[i]`` for a small table, as a one-hot sum (exact; no gather, which the host
    evaluator does not run)."""
    t = jnp.asarray(np.asarray(table))
    hit = i[..., None] == jnp.arange(len(table), dtype=i.dtype)
    return jnp.sum(jnp.where(hit, t, jnp.zeros((), t.dtype)), axis=-1)


def split_packets(x, packet, scalar, *more, width=8):
    """``packet`` over the first ``n - n % width`` elements of the flattened ``x`` (and of
    ``more``, arrays of ``x``'s shape), ``scalar`` over the rest: Eigen's vectorized loop and
    its scalar tail."""
    flat = [v.reshape(-1) for v in (x,) + more]
    n = flat[0].shape[0]
    if not isinstance(n, int):    # a symbolic size (a SavedModel's unknown batch): no tail split
        return packet(*flat).reshape(x.shape)
    k = n - n % width
    if k == n:
        out = packet(*flat)
    elif k == 0:
        out = scalar(*flat)
    else:
        out = jnp.concatenate([packet(*[v[:k] for v in flat]), scalar(*[v[k:] for v in flat])])
    return out.reshape(x.shape)


def _by_dtype(x, f32, other):
    """``f32(x)`` for float32 (float16/bfloat16 through float32, rounded), ``other(x)`` else."""
    x = jnp.asarray(x)
    if x.dtype == _F32:
        return f32(x)
    if x.dtype in _HALF:
        return f32(x.astype(jnp.float32)).astype(x.dtype)
    return other(x)


# ------------------------------------------------------------------------------ exp

_LOG2EF = np.float32(1.44269504088896341)
_EXP_C1, _EXP_C2 = np.float32(-0.693359375), np.float32(2.12194440e-4)
_EXP_P = [np.float32(v) for v in (0.49999988079071044921875, 0.16666518151760101318359375,
                                  4.166965186595916748046875e-2, 8.36894474923610687255859375e-3,
                                  1.37449637986719608306884765625e-3)]


def _range_reduce(x, f):
    """``m = floor(x * log2(e) + 1/2)`` and ``r = x - m * ln 2`` in Cephes' two parts."""
    m = jnp.floor(f(x * _LOG2EF) + np.float32(0.5))
    r = f(m * _EXP_C1) + x
    return m, f(m * _EXP_C2) + r


def pexp_float(x):
    """Eigen's ``pexp_float`` (AVX, no FMA): the packet path of TF's float32 ``Exp``."""
    f = fence_of(x)
    m, r = _range_reduce(_pmin(x, np.float32(88.723)), f)
    p2, p3, p4, p5, p6 = _EXP_P
    r2 = r * r
    p_even = f(r2 * p6) + p4
    p_odd = f(r2 * p5) + p3
    p_even = f(r2 * p_even) + p2
    y = f(r * p_odd) + p_even
    y = f(r2 * y) + (r + np.float32(1))
    out = _pmax(_ldexp32(y, m), x)
    return jnp.where(x < np.float32(-104), np.float32(0), out)


_EXPF_N = 32
_EXPF_TAB = [2.0 ** (i / _EXPF_N) for i in range(_EXPF_N)]
_EXPF_C = (float.fromhex("0x1.c6af84b912394p-5") / _EXPF_N ** 3,
           float.fromhex("0x1.ebfce50fac4f3p-3") / _EXPF_N ** 2,
           float.fromhex("0x1.62e42ff0c52d6p-1") / _EXPF_N)
_EXPF_INVLN2N = float.fromhex("0x1.71547652b82fep+0") * _EXPF_N


def expf_glibc(x):
    """glibc's ``expf`` (float32 in, double inside): the scalar path of TF's float32 ``Exp``
    (Eigen's ``numext::exp`` is ``std::exp``): ``2^(k/32)`` from a table times a cubic."""
    xs = jnp.where(jnp.abs(x) < np.float32(128), x, np.float32(0))   # others: below (no NaN in int casts)
    z = jnp.float64(_EXPF_INVLN2N) * xs.astype(jnp.float64)
    kd = jnp.round(z)
    r = z - kd
    hi = jnp.floor(kd * (1.0 / _EXPF_N))
    s = _lookup((kd - hi * _EXPF_N).astype(jnp.int32), _EXPF_TAB) * _pow2_64(hi)
    c0, c1, c2 = _EXPF_C
    y = (c0 * r + c1) * (r * r) + (c2 * r + 1.0)
    out = _flush((y * s).astype(jnp.float32))
    out = jnp.where(x > np.float32(88.72283935546875), np.float32(np.inf), out)
    out = jnp.where(x < np.float32(-103.97208404541015625), np.float32(0), out)
    return jnp.where(jnp.isnan(x), x, out)


@jax.custom_jvp
def exp(x):
    """TensorFlow's CPU ``tf.exp`` (kernel ``Exp``, Eigen ``scalar_exp_op``): ``pexp_float``
    over whole packets of 8, glibc's ``expf`` for the last ``n % 8`` elements. Differentiable
    (JAX: ``exp(x) * t``)."""
    return _by_dtype(x, lambda v: split_packets(v, pexp_float, expf_glibc),
                     lambda v: _exp64(v) if v.dtype == _F64 else jnp.exp(v))


@exp.defjvp
def _exp_jvp(primals, tangents):
    y = exp(*primals)
    return y, tangents[0] * y


def exp_grad(y, dy):
    """TensorFlow's gradient of ``Exp``: ``dy * y`` (a denormal product flushed to 0)."""
    return _flush_floats(jnp.asarray(dy) * jnp.asarray(y))


# ----------------------------------------------------------------------------- tanh

_TANH_CLAMP = np.float32(7.90738964080810547)       # without FMA (with FMA: 8.01773357391357422)
_TANH_ALPHA = [np.float32(v) for v in (1.394553628e-8, 2.102733560e-5, 3.520756727e-3, 1.340216100e-1)]
_TANH_BETA = [np.float32(v) for v in (8.015776984e-7, 3.326951409e-4, 2.597254514e-2, 4.673548340e-1, 1.0)]


def _polevl(x, coeffs, f):
    """Eigen's ``ppolevl``: Horner's rule, ``p * x + c`` with the product rounded."""
    p = jnp.full_like(x, coeffs[0])
    for c in coeffs[1:]:
        p = f(p * x) + c
    return p


def ptanh_float(x):
    """Eigen's ``ptanh_float`` (rational 9/8 minimax, no FMA): TF's float32 ``Tanh`` on every
    element (with EIGEN_FAST_MATH the scalar ``numext::tanh`` is the same function)."""
    f = fence_of(x)
    x = _pmax(_pmin(x, _TANH_CLAMP), -_TANH_CLAMP)
    x2 = x * x
    x3 = x2 * x
    p = _polevl(x2, _TANH_ALPHA, f)
    q = _polevl(x2, _TANH_BETA, f)
    return _flush(_div(f(x3 * p) + x, q))


def _div(a, b):
    """``a / b`` rounded once (XLA keeps an elementwise division of two arrays a division)."""
    return a / b


@jax.custom_jvp
def tanh(x):
    """TensorFlow's CPU ``tf.tanh`` (kernel ``Tanh``, Eigen ``scalar_tanh_op``): ``ptanh_float``
    on every element (packet and scalar tail alike). Differentiable (:func:`tanh_grad`)."""
    return _by_dtype(x, ptanh_float, lambda v: _tanh64(v) if v.dtype == _F64 else jnp.tanh(v))


@tanh.defjvp
def _tanh_jvp(primals, tangents):
    y = tanh(*primals)
    return y, tanh_grad(y, tangents[0], _linear=True)


# ------------------------------------------------------------------------- logistic

_LOGISTIC_P = [np.float32(v) for v in (0.49999141693115234375, 0.16666877269744873046875,
                                       4.1898667812347412109375e-2, 8.33471305668354034423828125e-3)]


def plogistic_float(x):
    """Eigen's ``scalar_logistic_op<float>::packetOp``: ``exp(x/2)`` by a degree-5 polynomial,
    squared, then ``e / (1 + e)``; 0 below -104."""
    f = fence_of(x)
    m, r = _range_reduce(_pmin(x, np.float32(16.6355324)) * np.float32(0.5), f)
    p2, p3, p4, p5 = _LOGISTIC_P
    r2 = r * r
    p_even = f(r2 * p4) + p2
    p_odd = f(r2 * p5) + p3
    p = f(r * p_odd) + p_even
    p = f(r2 * p) + (r + np.float32(1))
    e = _ldexp32(p, m)
    e = _flush(e * e)
    return jnp.where(x < np.float32(-104), np.float32(0), _div(e, np.float32(1) + e))


def logistic_scalar(x):
    """Eigen's scalar ``scalar_logistic_op<float>``: ``e = expf(min(x, 16.6355324))`` (glibc),
    ``e / (1 + e)``."""
    e = expf_glibc(_pmin(x, np.float32(16.6355324)))
    return _flush(_div(e, np.float32(1) + e))


@jax.custom_jvp
def logistic(x):
    """TensorFlow's CPU ``tf.sigmoid`` (kernel ``Sigmoid``, Eigen ``scalar_logistic_op``):
    the packet function over whole packets of 8, the scalar one for the last ``n % 8``.
    Differentiable (:func:`sigmoid_grad`)."""
    if jnp.asarray(x).dtype in _HALF:
        return _half_logistic(jnp.asarray(x))
    return _by_dtype(x, lambda v: split_packets(v, plogistic_float, logistic_scalar),
                     lambda v: _logistic64(v) if v.dtype == _F64 else jax.nn.sigmoid(v))


@logistic.defjvp
def _logistic_jvp(primals, tangents):
    # written so that JAX's transpose (reverse mode) is SigmoidGrad: the tail's (t * (1 - y)) * y
    # transposes to (g * y) * (1 - y)
    y = logistic(*primals)
    return y, sigmoid_grad(y, tangents[0], _transposed=True, _linear=True)


# ------------------------------------------------------------------------ gradients

def tanh_grad(y, dy, _linear=False):
    """TensorFlow's ``TanhGrad`` (``scalar_tanh_gradient_op``): ``dy * (1 - y * y)``, the
    square rounded before the subtraction (XLA would fuse it)."""
    y, dy = jnp.asarray(y), jnp.asarray(dy)
    if y.dtype not in (_F32, _F64) or dy.dtype != y.dtype:
        return dy * (1 - y * y)
    out = dy * (jnp.ones((), y.dtype) - fence_of(y)(y * y))
    return out if _linear else _flush(out)


def sigmoid_grad(y, dy, _transposed=False, _linear=False):
    """TensorFlow's ``SigmoidGrad`` (``scalar_sigmoid_gradient_op``): ``dy * (y * (1 - y))``
    over whole packets, ``(dy * y) * (1 - y)`` for the scalar tail (4 doubles a packet)."""
    y, dy = jnp.asarray(y), jnp.asarray(dy)
    if y.dtype not in (_F32, _F64) or dy.dtype != y.dtype or y.shape != dy.shape:
        return dy * y * (1 - y)
    one = jnp.ones((), y.dtype)
    if _transposed:
        def tail(a, g):
            return (g * (one - a)) * a
    else:
        def tail(a, g):
            return (g * a) * (one - a)
    out = split_packets(y, lambda a, g: g * (a * (one - a)), tail, dy, width=8 if y.dtype == _F32 else 4)
    return out if _linear else _flush(out)


# ------------------------------------------------------------------------------ log

def _bits32(x):
    return lax.bitcast_convert_type(x, jnp.int32)


def _daz(x):
    """Denormal inputs read as (signed) zero, as TF's CPU threads (DAZ) read them."""
    return _flush(x)


_LOG_ALPHA = [np.float32(v) for v in (0.18256296349849254, 1.0000000190281063, 1.0000000190281136)]
_LOG_BETA = [np.float32(v) for v in (0.049616247954120038, 0.59923249590823520, 1.4999999999999927, 1.0)]


def plog_float(x):
    """Eigen's ``plog_float`` (``pfrexp``, a 3/3 rational approximation of ``log(1 + x)`` on
    [sqrt(1/2) - 1, sqrt(2) - 1], no FMA): the packet path of TF's float32 ``Log``. Denormals
    read as 0 give -inf."""
    x = _daz(x)
    f = fence_of(x)
    bits = _bits32(x) & 0x7FFFFFFF
    e = (lax.shift_right_logical(bits, np.int32(23)) - 126).astype(jnp.float32)
    m = lax.bitcast_convert_type((_bits32(x) & ~0x7F800000) | 0x3F000000, jnp.float32)   # [0.5, 1)
    small = m < np.float32(0.707106781186547524)
    v = m - np.float32(1)
    e = e - jnp.where(small, np.float32(1), np.float32(0))
    v = v + jnp.where(small, m, np.float32(0))
    p = v * _polevl(v, _LOG_ALPHA, f)
    y = _div(p, _polevl(v, _LOG_BETA, f))
    y = f(e * np.float32(0.693147180559945309417232121458176568)) + y
    y = jnp.where(x == np.float32(np.inf), np.float32(np.inf), y)
    y = jnp.where((x < 0) | jnp.isnan(x), np.float32(np.nan), y)
    return jnp.where(x == 0, np.float32(-np.inf), y)


_LOGF_TAB = [(float.fromhex(a), float.fromhex(b)) for a, b in [
    ("0x1.661ec79f8f3bep+0", "-0x1.57bf7808caadep-2"), ("0x1.571ed4aaf883dp+0", "-0x1.2bef0a7c06ddbp-2"),
    ("0x1.49539f0f010bp+0", "-0x1.01eae7f513a67p-2"), ("0x1.3c995b0b80385p+0", "-0x1.b31d8a68224e9p-3"),
    ("0x1.30d190c8864a5p+0", "-0x1.6574f0ac07758p-3"), ("0x1.25e227b0b8eap+0", "-0x1.1aa2bc79c81p-3"),
    ("0x1.1bb4a4a1a343fp+0", "-0x1.a4e76ce8c0e5ep-4"), ("0x1.12358f08ae5bap+0", "-0x1.1973c5a611cccp-4"),
    ("0x1.0953f419900a7p+0", "-0x1.252f438e10c1ep-5"), ("0x1p+0", "0x0p+0"),
    ("0x1.e608cfd9a47acp-1", "0x1.aa5aa5df25984p-5"), ("0x1.ca4b31f026aap-1", "0x1.c5e53aa362eb4p-4"),
    ("0x1.b2036576afce6p-1", "0x1.526e57720db08p-3"), ("0x1.9c2d163a1aa2dp-1", "0x1.bc2860d22477p-3"),
    ("0x1.886e6037841edp-1", "0x1.1058bc8a07ee1p-2"), ("0x1.767dcf5534862p-1", "0x1.4043057b6ee09p-2")]]
_LOGF_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_A = [float.fromhex(v) for v in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2")]
_LOGF_DENORMAL = np.float32(float.fromhex("-0x1.9fe368p+6"))   # a denormal read as 0 by x * 2^23 (DAZ)


def logf_glibc(x):
    """glibc's ``logf`` (double inside: ``log(c) + k ln 2 + log1p(z/c - 1)`` with 16 table
    entries ``c``): the scalar path of TF's float32 ``Log``. A positive denormal gives
    -103.97208 (TF's DAZ turns glibc's ``x * 2^23`` normalization into 0)."""
    bits = _bits32(x)     # the cases by the bits: XLA's CPU code compares a denormal as 0
    normal = (bits >= 0x00800000) & (bits < 0x7F800000)
    ix = jnp.where(normal, bits, np.int32(0x3F800000))
    tmp = ix - np.int32(0x3F330000)
    i = lax.shift_right_logical(tmp, np.int32(19)) & 15
    k = lax.shift_right_arithmetic(tmp, np.int32(23)).astype(jnp.float64)
    z = lax.bitcast_convert_type(ix - (tmp & np.int32(-8388608)), jnp.float32).astype(jnp.float64)
    invc = _lookup(i, [c for c, _ in _LOGF_TAB])
    logc = _lookup(i, [lc for _, lc in _LOGF_TAB])
    r = z * invc - 1.0
    r2 = r * r
    a0, a1, a2 = _LOGF_A
    y = (a0 * r2 + (a1 * r + a2)) * r2 + ((logc + k * _LOGF_LN2) + r)
    y = y.astype(jnp.float32)
    y = jnp.where(bits == 0x7F800000, np.float32(np.inf), jnp.where(bits < 0x00800000, _LOGF_DENORMAL, y))
    y = jnp.where((bits < 0) | (bits > 0x7F800000), np.float32(np.nan), y)
    return jnp.where((bits & 0x7FFFFFFF) == 0, np.float32(-np.inf), y)


@jax.custom_jvp
def log(x):
    """TensorFlow's CPU ``tf.math.log`` (kernel ``Log``, Eigen ``scalar_log_op``): ``plog_float``
    over whole packets of 8, glibc's ``logf`` for the last ``n % 8`` elements."""
    return _by_dtype(x, lambda v: split_packets(v, plog_float, logf_glibc),
                     lambda v: _log64(v) if v.dtype == _F64 else jnp.log(v))


@log.defjvp
def _log_jvp(primals, tangents):
    x, = primals
    return log(x), tangents[0] / x


# ---------------------------------------------------------------------------- log1p

_LP = [np.float32(v) for v in (6.6666668653e-01, 4.0000000596e-01, 2.8571429849e-01, 2.2222198546e-01,
                               1.8183572590e-01, 1.5313838422e-01, 1.4798198640e-01)]
_LN2_HI, _LN2_LO = np.float32(6.9313812256e-01), np.float32(9.0580006145e-06)


def _f32_of_bits(b):
    return lax.bitcast_convert_type(b, jnp.float32)


def _log1pf_reduce(x, hx, f_):
    """glibc ``log1pf``'s argument reduction: ``1 + x = 2^k (1 + f)`` with the correction
    ``c``; ``hu`` is 0 where ``|f| < 2^-20``."""
    one = np.float32(1)
    u = lax.optimization_barrier(one + x)     # else XLA rewrites (1 + x) - x as 1: c would be 0
    large = hx >= 0x5A000000
    hu = jnp.where(large, hx, _bits32(u))
    k = lax.shift_right_arithmetic(hu, np.int32(23)) - 127
    c = jnp.where(large, np.float32(0), _div(jnp.where(k > 0, one - (u - x), x - (u - one)), u))
    hu = hu & 0x007FFFFF
    low = hu < 0x3504F7
    k = jnp.where(low, k, k + 1)
    u = _f32_of_bits(hu | jnp.where(low, np.int32(0x3F800000), np.int32(0x3F000000)))
    hu = jnp.where(low, hu, lax.shift_right_arithmetic(0x00800000 - hu, np.int32(2)))
    small = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= np.int32(-1097468385)))   # -0.2929 < x < 0.41422
    f = jnp.where(small, x, u - one)
    return f, jnp.where(small, 0, k), jnp.where(small, np.float32(0), c), jnp.where(small, 1, hu)


def log1pf_glibc(x):
    """glibc 2.36's ``log1pf`` (fdlibm's float code, every operation rounded to float32):
    the scalar path of TF's float32 ``Log1p``."""
    f_ = fence_of(x)
    hx = _bits32(x)
    ax = hx & 0x7FFFFFFF
    f, k, c, hu = _log1pf_reduce(jnp.where(hx >= 0x7F800000, np.float32(0), x), hx, f_)
    kf = k.astype(jnp.float32)
    klo = f_(kf * _LN2_LO) + c
    khi = f_(kf * _LN2_HI)
    hfsq = f_((np.float32(0.5) * f) * f)
    # |f| < 2^-20
    r_tiny = f_(hfsq * (np.float32(1) - f_(np.float32(0.6666667) * f)))
    tiny = jnp.where(k == 0, f - r_tiny, khi - ((r_tiny - klo) - f))
    tiny = jnp.where(f == 0, jnp.where(k == 0, np.float32(0), khi + klo), tiny)
    s = _div(f, np.float32(2) + f)
    z = s * s
    r = f_(z * _polevl(z, _LP[::-1], f_))
    sr = f_(s * (hfsq + r))
    out = jnp.where(k == 0, f - (hfsq - sr), khi - ((hfsq - (sr + klo)) - f))
    out = jnp.where(hu == 0, tiny, out)
    # |x| < 2^-29: x (below 2^-54) or x - x*x/2
    out = jnp.where(ax < 0x31000000, jnp.where(ax < 0x24800000, x, x - f_((x * x) * np.float32(0.5))), out)
    out = jnp.where(hx >= 0x7F800000, x + x, out)
    neg = (hx < 0) & (ax >= 0x3F800000)      # x <= -1
    return jnp.where(neg, jnp.where(x == np.float32(-1), np.float32(-np.inf), np.float32(np.nan)), out)


def plog1p_float(x):
    """Eigen's ``generic_log1p`` (Kahan's ``x * log(1 + x) / ((1 + x) - 1)`` on ``plog_float``):
    the packet path of TF's float32 ``Log1p``."""
    xp1 = lax.optimization_barrier(x + np.float32(1))    # XLA would fold (x + 1) - 1 into x
    log1 = plog_float(xp1)
    large = x * _div(log1, xp1 - np.float32(1))
    return _flush(jnp.where((xp1 == np.float32(1)) | (xp1 == log1), x, large))   # denormal x: 0 in TF


@jax.custom_jvp
def log1p(x):
    """TensorFlow's CPU ``tf.math.log1p`` (kernel ``Log1p``, Eigen ``scalar_log1p_op``):
    ``plog1p`` over whole packets of 8, glibc's ``log1pf`` for the last ``n % 8``."""
    return _by_dtype(x, lambda v: split_packets(v, plog1p_float, log1pf_glibc),
                     lambda v: _f64_path("log1p", v) if v.dtype == _F64 else jnp.log1p(v))


@log1p.defjvp
def _log1p_jvp(primals, tangents):
    x, = primals
    return log1p(x), tangents[0] / (1 + x)


# ------------------------------------------------------------------------- softplus

_SOFTPLUS_THRESHOLD = np.float32(np.float32(-15.942385) + np.float32(2))   # logf(FLT_EPSILON) + 2


def _softplus_with(exp_fn, log1p_fn):
    def fn(x):
        e = exp_fn(x)
        small = jnp.where(x < _SOFTPLUS_THRESHOLD, e, log1p_fn(e))
        return jnp.where(x > -_SOFTPLUS_THRESHOLD, x, small)
    return fn


@jax.custom_jvp
def softplus(x):
    """TensorFlow's CPU ``tf.nn.softplus`` (kernel ``Softplus``): ``x`` above -log(eps) - 2,
    ``exp(x)`` below log(eps) + 2, else ``log1p(exp(x))``, each per packet (``pexp``,
    ``plog1p``) or on the scalar tail (glibc's ``expf``, ``log1pf``)."""
    if jnp.asarray(x).dtype in _HALF:
        return _half_softplus(jnp.asarray(x))
    return _by_dtype(x, lambda v: split_packets(v, _softplus_with(pexp_float, plog1p_float),
                                                _softplus_with(expf_glibc, log1pf_glibc)),
                     lambda v: _f64_path("softplus", v) if v.dtype == _F64 else jax.nn.softplus(v))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    x, = primals
    return softplus(x), tangents[0] * logistic(x)


def softplus_grad(x, dy):
    """TensorFlow 2.21's gradient of ``Softplus`` (nn_grad.py): ``dy * sigmoid(x)`` (not its
    ``SoftplusGrad`` kernel)."""
    return _flush_floats(jnp.asarray(dy) * logistic(jnp.asarray(x)))


# ----------------------------------------------------------------------- elu, selu

_SELU_SCALE, _SELU_SCALE_ALPHA = np.float32(1.0507009873554804934193349852946), np.float32(1.7580993408473768599402175208123)


@jax.custom_jvp
def elu(x):
    """TensorFlow's CPU ``tf.nn.elu`` (kernel ``Elu``): ``x < 0 ? exp(x) - 1 : x`` with TF's
    ``exp`` (packets and tail), the comparison reading a denormal as 0."""
    if jnp.asarray(x).dtype in _HALF:
        return _half_elu(jnp.asarray(x))
    return _by_dtype(x, lambda v: jnp.where(_daz(v) < 0, exp(v) - np.float32(1), v),
                     lambda v: jnp.where(_daz(v) < 0, exp(v) - 1.0, v) if v.dtype == _F64 else jax.nn.elu(v))


@elu.defjvp
def _elu_jvp(primals, tangents):
    y = elu(*primals)
    return y, elu_grad(y, tangents[0], _linear=True)


def elu_grad(y, dy, _linear=False):
    """TensorFlow's ``EluGrad`` from the output: ``y < 0 ? (y + 1) * dy : dy``."""
    out = jnp.where(y < 0, (y + jnp.ones((), y.dtype)) * dy, dy)
    return out if _linear else _flush_floats(out)


@jax.custom_jvp
def selu(x):
    """TensorFlow's CPU ``tf.nn.selu`` (kernel ``Selu``): ``x < 0 ? scale_alpha * (exp(x) - 1)
    : scale * x`` with TF's ``exp``."""
    if jnp.asarray(x).dtype in _HALF:
        return _half_elu(jnp.asarray(x), selu=True)
    return _by_dtype(x, lambda v: _flush(jnp.where(_daz(v) < 0, _SELU_SCALE_ALPHA * (exp(v) - np.float32(1)),
                                                   _SELU_SCALE * v)),
                     lambda v: _flush(jnp.where(_daz(v) < 0, 1.7580993408473768599402175208123 * (exp(v) - 1.0),
                                                1.0507009873554804934193349852946 * v)) if v.dtype == _F64 else jax.nn.selu(v))


@selu.defjvp
def _selu_jvp(primals, tangents):
    y = selu(*primals)
    return y, selu_grad(y, tangents[0], _linear=True)


def selu_grad(y, dy, _linear=False):
    """TensorFlow's ``SeluGrad`` from the output: ``y < 0 ? dy * (y + scale_alpha) : dy * scale``."""
    sa, s = jnp.asarray(_SELU_SCALE_ALPHA, y.dtype), jnp.asarray(_SELU_SCALE, y.dtype)
    if y.dtype == _F64:
        sa, s = jnp.float64(1.7580993408473768599402175208123), jnp.float64(1.0507009873554804934193349852946)
    out = jnp.where(y < 0, dy * (y + sa), dy * s)
    return out if _linear else _flush_floats(out)


# ---------------------------------------------------------------------------- expm1

_EXPM1_Q = [np.float32(v) for v in (-3.3333335072e-02, 1.5873016091e-03, -7.9365076090e-05, 4.0082177293e-06,
                                    -2.0109921195e-07)]


def _expm1f_reduce(x, hx, f_):
    """glibc ``expm1f``'s argument reduction ``x = k ln2 + hi - lo``: ``(k, r, c)``."""
    pos = hx >= 0
    one_step = (hx & 0x7FFFFFFF) < 0x3F851592                # |x| < 1.5 ln 2: k = +-1
    kf = jnp.trunc(f_(np.float32(1.4426950216) * x) + jnp.where(pos, np.float32(0.5), np.float32(-0.5)))
    kf = jnp.where(one_step, jnp.where(pos, np.float32(1), np.float32(-1)), kf)
    hi = x - f_(kf * _LN2_HI)
    lo = kf * _LN2_LO
    r = lax.optimization_barrier(hi - f_(lo))                # else XLA folds (hi - r) into lo
    c = (hi - r) - lo
    reduced = (hx & 0x7FFFFFFF) > 0x3EB17218                 # |x| > ln 2 / 2
    return (jnp.where(reduced, kf, np.float32(0)), jnp.where(reduced, r, x),
            jnp.where(reduced, c, np.float32(0)))


def _expm1f_scale(y, k):
    """``y * 2^k`` by adding ``k`` to ``y``'s exponent bits (glibc's SET_FLOAT_WORD)."""
    return _f32_of_bits(_bits32(y) + k * (1 << 23))


def expm1f_glibc(x):
    """glibc's ``expm1f`` (fdlibm's float code, each operation rounded to float32): the scalar
    path of TF's float32 ``Expm1``."""
    hx = _bits32(x)
    ax = hx & 0x7FFFFFFF
    xs = jnp.where(ax < 0x42B17218, x, np.float32(0))      # others below
    f_ = fence_of(xs)
    kf, r, c = _expm1f_reduce(xs, hx, f_)
    k = kf.astype(jnp.int32)
    hfx = np.float32(0.5) * r
    hxs = r * hfx
    r1 = np.float32(1) + f_(hxs * _polevl(hxs, _EXPM1_Q[::-1], f_))
    t = np.float32(3) - f_(r1 * hfx)
    e = hxs * _div(r1 - t, np.float32(6) - f_(r * t))
    k0 = r - (f_(r * e) - hxs)
    e = (f_(r * (e - c)) - c) - hxs
    km1 = f_(np.float32(0.5) * (r - e)) - np.float32(0.5)
    k1 = jnp.where(r < np.float32(-0.25), np.float32(-2) * (e - (r + np.float32(0.5))),
                   np.float32(1) + np.float32(2) * (r - e))
    far = _expm1f_scale(np.float32(1) - (e - r), k) - np.float32(1)          # k <= -2 or k > 56
    mid = _expm1f_scale(_f32_of_bits(0x3F800000 - lax.shift_right_arithmetic(np.int32(0x1000000), jnp.clip(k, 0, 31)))
                        - (e - r), k)                                         # k < 23
    big = _expm1f_scale((r - (e + _f32_of_bits((0x7F - k) * (1 << 23)))) + np.float32(1), k)
    out = jnp.where(k < 23, mid, big)
    out = jnp.where((k <= -2) | (k > 56), far, out)
    out = jnp.where(k == 1, k1, jnp.where(k == -1, km1, jnp.where(k == 0, k0, out)))
    out = jnp.where(ax < 0x33000000, _daz(x), out)     # |x| < 2^-25: x - ((huge + x) - (huge + x)), 0 for a denormal
    out = jnp.where((hx < 0) & (ax >= 0x4195B844), np.float32(-1), out)        # x <= -27 ln 2
    out = jnp.where((hx >= 0) & (x > np.float32(8.8721679688e+01)), np.float32(np.inf), out)
    return jnp.where(ax >= 0x7F800000, jnp.where(ax > 0x7F800000, x + x, jnp.where(hx < 0, np.float32(-1), x)), out)


def pexpm1_float(x):
    """Eigen's ``generic_expm1`` (Kahan's ``(u - 1) * x / log(u)`` with ``u = pexp(x)``,
    ``plog_float``): the packet path of TF's float32 ``Expm1``."""
    u = pexp_float(x)
    um1 = u - np.float32(1)
    logu = plog_float(u)
    out = jnp.where(logu == u, u, um1 * _div(x, logu))
    return jnp.where(u == np.float32(1), x, jnp.where(um1 == np.float32(-1), np.float32(-1), out))   # denormal x kept


@jax.custom_jvp
def expm1(x):
    """TensorFlow's CPU ``tf.math.expm1`` (kernel ``Expm1``, Eigen ``scalar_expm1_op``):
    ``generic_expm1`` over whole packets of 8, glibc's ``expm1f`` for the last ``n % 8``."""
    return _by_dtype(x, lambda v: split_packets(v, pexpm1_float, expm1f_glibc),
                     lambda v: _f64_path("expm1", v) if v.dtype == _F64 else jnp.expm1(v))


@expm1.defjvp
def _expm1_jvp(primals, tangents):
    x, = primals
    y = expm1(x)
    return y, tangents[0] * (y + 1)


# ------------------------------------------------- float16 / bfloat16 composite functions
# Eigen's half and bfloat16 packets compute each function (exp, log1p...) in float32 and round,
# but every arithmetic step between them (1 + e, e - 1, scale * x) is rounded to the half type.

def _rounded(v, dt):
    """``v`` (float32) rounded to ``dt`` and back: one half-precision operation's result."""
    return v.astype(dt).astype(jnp.float32)


def _half_logistic(x):
    e = exp(x).astype(jnp.float32)
    q = _rounded(e / _rounded(np.float32(1) + e, x.dtype), x.dtype)
    return jnp.where(e == np.float32(np.inf), np.float32(1), q).astype(x.dtype)


def _half_softplus(x):
    # Eigen's NumTraits<half>::epsilon() is 2^-13 (bits 0x0800), bfloat16's 2^-7
    eps = np.float32(2.0 ** -13) if x.dtype == jnp.float16 else np.float32(jnp.finfo(x.dtype).eps)
    th = np.float32(x.dtype.type(x.dtype.type(np.log(eps)) + x.dtype.type(2)))
    xf = x.astype(jnp.float32)
    e = exp(x)
    out = jnp.where(xf < th, e.astype(jnp.float32), log1p(e).astype(jnp.float32))
    return jnp.where(xf > -th, xf, out).astype(x.dtype)


def _half_elu(x, selu=False):
    xf = x.astype(jnp.float32)
    em1 = _rounded(exp(x).astype(jnp.float32) - np.float32(1), x.dtype)
    if not selu:
        return jnp.where(xf < 0, em1, xf).astype(x.dtype)
    sa, s = (np.float32(x.dtype.type(v)) for v in (1.7580993408473768599402175208123, 1.0507009873554804934193349852946))
    return jnp.where(xf < 0, _rounded(sa * em1, x.dtype), _rounded(s * xf, x.dtype)).astype(x.dtype)



# ------------------------------------------------------------------------ float64 exp

_EXPD_P = (1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1)
_EXPD_Q = (3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1,
           2.00000000000000000009e0)


def pexp_double(x):
    """Eigen's ``pexp_double`` (Cephes' rational approximation, AVX without FMA): the packet
    path (4 doubles) of TF's float64 ``Exp``."""
    f = fence_of(x)
    xc = _pmin(x, np.float64(709.784))
    fx = jnp.floor(f(np.float64(1.4426950408889634073599) * xc) + 0.5)
    r = (xc - f(fx * 0.693145751953125)) - f(fx * 1.42860682030941723212e-6)
    r2 = r * r
    px = r * _polevl(r2, _EXPD_P, f)
    qx = _polevl(r2, _EXPD_Q, f)
    y = f(np.float64(2) * _div(px, qx - px)) + 1.0
    m = jnp.where(fx > 1024, np.float64(1024), jnp.where(fx > -1075, fx, np.float64(-1075)))
    k1 = jnp.floor(m * 0.5)
    out = _flush((y * _pow2_64(k1)) * _pow2_64(m - k1))
    return jnp.where(x < np.float64(-745.519), np.float64(0), _pmax(out, x))


def _exp64(x):
    """float64: ``pexp_double`` over whole packets of 4; XLA's ``exp`` for the last ``n % 4``
    (TF: glibc's ``exp``, correctly rounded nearly always, as XLA's)."""
    return split_packets(x, pexp_double, lambda v: _flush(jnp.exp(v)), width=4)


# ------------------------------------------------------------------- float64 tanh, sigmoid

_TANHD_CLAMP = np.float64(17.714196154005176)       # without FMA
_TANHD_ALPHA = (2.6158007860482230e-23, 7.6534862268749319e-19, 3.1309488231386680e-15, 4.2303918148209176e-12,
                2.4618379131293676e-09, 6.8644367682497074e-07, 9.3839087674268880e-05, 5.9809711724441161e-03,
                1.5184719640284322e-01)
_TANHD_BETA = (6.463747022670968018e-21, 5.782506856739003571e-17, 1.293019623712687916e-13,
               1.123643448069621992e-10, 4.492975677839633985e-08, 8.785185266237658698e-06,
               8.295161192716231542e-04, 3.437448108450402717e-02, 4.851805297361760360e-01, 1.0)


def ptanh_double(x):
    """Eigen's ``ptanh_double`` (rational 19/18, no FMA): the packet path (4 doubles) of TF's
    float64 ``Tanh``."""
    f = fence_of(x)
    x = _pmax(_pmin(x, _TANHD_CLAMP), -_TANHD_CLAMP)
    x2 = x * x
    x3 = x2 * x
    p = _polevl(x2, _TANHD_ALPHA, f)
    q = _polevl(x2, _TANHD_BETA, f)
    return _flush(_div(f(x3 * p) + x, q))


def _tanh64(x):
    """float64: ``ptanh_double`` over whole packets of 4, XLA's ``tanh`` on the tail (TF:
    glibc's ``tanh``)."""
    return split_packets(x, ptanh_double, lambda v: _flush(jnp.tanh(v)), width=4)


def plogistic_double(x):
    """Eigen's generic ``scalar_logistic_op::packetOp`` for doubles: ``e = pexp(x)``,
    ``e / (1 + e)`` (1 where ``e`` is inf)."""
    e = pexp_double(x)
    return jnp.where(e == np.inf, np.float64(1), _flush(_div(e, 1.0 + e)))


def _logistic64(x):
    """float64: :func:`plogistic_double` over packets of 4; the tail with XLA's ``exp``
    (TF: glibc's ``exp``)."""
    def tail(v):
        e = _flush(jnp.exp(v))
        return jnp.where(e == np.inf, np.float64(1), _flush(_div(e, 1.0 + e)))
    return split_packets(x, plogistic_double, tail, width=4)


# ------------------------------------------------------------------------ float64 log

_LOGD_P = (1.01875663804580931796E-4, 4.97494994976747001425E-1, 4.70579119878881725854E0,
           1.44989225341610930846E1, 1.79368678507819816313E1, 7.70838733755885391666E0)
_LOGD_Q = (1.0, 1.12873587189167450590E1, 4.52279145837532221105E1, 8.29875266912776603211E1,
           7.11544750618563894466E1, 2.31251620126765340583E1)


def _cubic_pair(x, x3, c, f):
    """Eigen's interleaved ``(c0 x + c1) x + c2) x^3 + ((c3 x + c4) x + c5)``."""
    y = f(c[0] * x) + c[1]
    y1 = f(c[3] * x) + c[4]
    y = f(y * x) + c[2]
    y1 = f(y1 * x) + c[5]
    return f(y * x3) + y1


def plog_double(x):
    """Eigen's ``plog_double`` (Cephes' ``x - x^2/2 + x^3 P(x)/Q(x)``, no FMA): the packet
    path (4 doubles) of TF's float64 ``Log``."""
    x = _daz(x)
    f = fence_of(x)
    bits = lax.bitcast_convert_type(x, jnp.int64)
    e = (lax.shift_right_logical(bits & 0x7FFFFFFFFFFFFFFF, np.int64(52)) - 1022).astype(jnp.float64)
    m = lax.bitcast_convert_type((bits & ~0x7FF0000000000000) | 0x3FE0000000000000, jnp.float64)
    small = m < 0.70710678118654752440
    v = (m - 1.0) + jnp.where(small, m, 0.0)
    e = e - jnp.where(small, 1.0, 0.0)
    x2 = v * v
    x3 = x2 * v
    y = _div(_cubic_pair(v, x3, _LOGD_P, f) * x3, _cubic_pair(v, x3, _LOGD_Q, f))
    y = f(-0.5 * x2) + y
    y = f(e * 0.693147180559945309417232121458176568) + (v + y)
    y = jnp.where(x == np.inf, np.inf, y)
    y = jnp.where((x < 0) | jnp.isnan(x), np.nan, y)
    return jnp.where(x == 0, -np.inf, y)


def _log64(x):
    """float64: :func:`plog_double` over packets of 4, XLA's ``log`` on the tail (TF: glibc's)."""
    return split_packets(x, plog_double, jnp.log, width=4)


# ------------------------------------------- float64 log1p, expm1, softplus, elu, selu

def _generic_log1p(x, plog):
    """Eigen's ``generic_log1p`` on a packet log."""
    one = jnp.ones((), x.dtype)
    xp1 = lax.optimization_barrier(x + one)     # XLA would fold (x + 1) - 1 into x
    log1 = plog(xp1)
    return jnp.where((xp1 == one) | (xp1 == log1), x, x * _div(log1, xp1 - one))


def _generic_expm1(x, pexp, plog):
    """Eigen's ``generic_expm1`` on packet exp and log."""
    one = jnp.ones((), x.dtype)
    u = pexp(x)
    um1 = u - one
    logu = plog(u)
    out = jnp.where(logu == u, u, um1 * _div(x, logu))
    return jnp.where(u == one, x, jnp.where(um1 == -one, -one, out))


def _f64_path(name, x):
    """float64 forms: Eigen's packet functions over packets of 4, XLA's on the ``n % 4`` tail."""
    if name == "log1p":
        return split_packets(x, lambda v: _flush(_generic_log1p(_daz(v), plog_double)), jnp.log1p, width=4)
    if name == "expm1":
        return split_packets(x, lambda v: _generic_expm1(v, pexp_double, plog_double), jnp.expm1, width=4)
    th = np.float64(np.log(np.finfo(np.float64).eps) + 2)
    def sp(e_fn, l_fn):
        def fn(v):
            e = e_fn(v)
            return jnp.where(v > -th, v, jnp.where(v < th, e, l_fn(e)))
        return fn
    return split_packets(x, sp(pexp_double, lambda e: _generic_log1p(e, plog_double)),
                         sp(lambda v: _flush(jnp.exp(v)), jnp.log1p), width=4)


# ------------------------------------------------------------------- traced once per input type
# Eigen's arithmetic is 20-50 primitives a call, which JAX traced again at every call: a lazy chain of
# 100 tanh and its gradient took ~1 s to trace. Jitted, a call inside a trace reuses the body traced
# for its input type (XLA inlines it: the same program, the same values; the host evaluator runs it),
# also where a caller disables jit to inline everything else (a lazy program run on the host,
# new_shapes' traces).
def _traced_once(f, **jit_kwargs):
    jitted = jax.jit(f, **jit_kwargs)

    @functools.wraps(f)
    def call(*args, **kwargs):
        with jax.disable_jit(False):
            return jitted(*args, **kwargs)
    return call


exp, tanh, logistic, log, log1p, expm1, softplus, elu, selu = (
    _traced_once(f) for f in (exp, tanh, logistic, log, log1p, expm1, softplus, elu, selu))
exp_grad, softplus_grad = _traced_once(exp_grad), _traced_once(softplus_grad)
tanh_grad, elu_grad, selu_grad = (_traced_once(f, static_argnames=("_linear",)) for f in (tanh_grad, elu_grad, selu_grad))
sigmoid_grad = _traced_once(sigmoid_grad, static_argnames=("_transposed", "_linear"))
