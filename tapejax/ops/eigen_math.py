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
    return jnp.where(jnp.abs(v) < jnp.asarray(_MIN_NORMAL32, v.dtype), v * jnp.zeros((), v.dtype), v)


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


def split_packets(x, packet, scalar, width=8):
    """``packet`` over the first ``n - n % width`` elements of the flattened ``x``, ``scalar``
    over the rest: Eigen's vectorized loop and its scalar tail."""
    flat = x.reshape(-1)
    n = flat.shape[0]
    k = n - n % width
    if k == n:
        out = packet(flat)
    elif k == 0:
        out = scalar(flat)
    else:
        out = jnp.concatenate([packet(flat[:k]), scalar(flat[k:])])
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


def exp(x):
    """TensorFlow's CPU ``tf.exp`` (kernel ``Exp``, Eigen ``scalar_exp_op``): ``pexp_float``
    over whole packets of 8, glibc's ``expf`` for the last ``n % 8`` elements."""
    return _by_dtype(x, lambda v: split_packets(v, pexp_float, expf_glibc), jnp.exp)
