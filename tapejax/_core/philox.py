"""TensorFlow's Philox-4x32-10 random numbers in ``jnp``, bit for bit.

TensorFlow's CPU/GPU random kernels hash a 128-bit counter with a 64-bit key
(``tsl/lib/random/philox_random.h``) and turn the 32-bit words into numbers
with ``random_distributions.h``. This module is that pipeline on uint32 arrays
only, so it runs jitted on any backend without JAX's 64-bit mode. A key is a
pair of uint32 words, a counter four (least significant first), as in TF.

Everything here is pure and shape-static; ``tapejax.random`` decides where the
key and counter come from (a seed, a Generator's state, a stateful op's seeds).
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

_M0, _M1 = 0xD2511F53, 0xCD9E8D57          # Philox multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85          # key schedule (Weyl) increments
_SCRAMBLE_KEY = (0x3EC8F720, 0x02461E29)   # GenerateKey in stateless_random_ops.cc
_U32 = np.uint32


def _mulhilo(m, x):
    """(high, low) words of the 64-bit product of the constant ``m`` and uint32 ``x``.

    No 64-bit integers without x64: the high word comes from 16-bit halves, whose
    products fit in 32 bits.
    """
    m_lo, m_hi = _U32(m & 0xFFFF), _U32(m >> 16)
    x_lo, x_hi = x & _U32(0xFFFF), x >> _U32(16)
    ll, lh, hl, hh = m_lo * x_lo, m_lo * x_hi, m_hi * x_lo, m_hi * x_hi
    mid = (ll >> _U32(16)) + (lh & _U32(0xFFFF)) + (hl & _U32(0xFFFF))
    hi = hh + (lh >> _U32(16)) + (hl >> _U32(16)) + (mid >> _U32(16))
    return hi, x * _U32(m)


def philox(counter, key):
    """The ten Philox-4x32 rounds: four uint32 words of output per counter.

    Args:
        counter: four uint32 arrays (broadcastable), least significant word first.
        key: two uint32 arrays (or scalars).

    Returns:
        A tuple of four uint32 arrays.
    """
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for i in range(10):
        if i:
            k0, k1 = k0 + _U32(_W0), k1 + _U32(_W1)
        hi0, lo0 = _mulhilo(_M0, c0)
        hi1, lo1 = _mulhilo(_M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def add128(counter, lo, hi=None):
    """``counter + (hi << 32 | lo)`` on four uint32 words, carries included."""
    c0, c1, c2, c3 = counter
    s0 = c0 + lo
    k = (s0 < lo).astype(_U32)
    if hi is not None:
        t1 = c1 + hi
        k1 = (t1 < hi).astype(_U32)
        s1 = t1 + k
        k = k1 | (s1 < k).astype(_U32)
    else:
        s1 = c1 + k
        k = (s1 < k).astype(_U32)
    s2 = c2 + k
    k = (s2 < k).astype(_U32)
    return s0, s1, s2, c3 + k


def split_u64(n):
    """The (low, high) uint32 words of a Python int taken modulo 2**64."""
    n = int(n) % (1 << 64)
    return n & 0xFFFFFFFF, n >> 32


def key_counter_from_seed(seed0, seed1):
    """TF's stateless seed scrambling (``GenerateKey``): two int64 seeds -> (key, counter) words.

    Python ints give exact host words; int32 arrays (traced seeds) are sign-extended
    as TF's ``static_cast<uint64>`` does.
    """
    if isinstance(seed0, (int, np.integer)) and isinstance(seed1, (int, np.integer)):
        words = _u32((*split_u64(seed0), *split_u64(seed1)))
    else:
        words = []
        for s in (seed0, seed1):
            s = jnp.asarray(s, jnp.int32)
            words += [s.view(jnp.uint32), jnp.where(s < 0, _U32(0xFFFFFFFF), _U32(0))]
    m = philox(tuple(words), _u32(_SCRAMBLE_KEY))
    zero = jnp.zeros((), jnp.uint32)
    return (m[0], m[1]), (zero, zero, m[2], m[3])


def _u32(words):
    return tuple(jnp.asarray(w, jnp.uint32) for w in words)


def _block(key, counter, n):
    """The Philox block of each of the ``n`` outputs: output ``e`` is word ``e % 4`` of call ``e // 4``.

    Each output recomputes its own block: XLA fuses that into one loop, whereas the
    four words of a block as four outputs (interleaved by a stack) run ~30x slower.
    """
    e = jnp.arange(n, dtype=jnp.uint32)
    return e & _U32(3), philox(add128(_u32(counter), e >> _U32(2)), _u32(key))


def _pick(k, w):
    return jnp.where(k == 0, w[0], jnp.where(k == 1, w[1], jnp.where(k == 2, w[2], w[3])))


def _flat_words(key, counter, n):
    k, w = _block(key, counter, n)
    return _pick(k, w)


# ---------------------------------------------------------------------------
# Word -> number conversions of random_distributions.h
# ---------------------------------------------------------------------------

def _uint32_to_float(x):
    # Uint32ToFloat: 23 mantissa bits under exponent 0 give [1, 2); minus one.
    return jax.lax.bitcast_convert_type((x & _U32(0x7FFFFF)) | _U32(0x3F800000), jnp.float32) - 1.0


_TWO_PI = 2.0 * math.pi
_TWO_PI_HI = np.float32(_TWO_PI)
_TWO_PI_LO = np.float32(_TWO_PI - float(_TWO_PI_HI))
_TWO_PI_1 = (_TWO_PI_HI.view(np.uint32) & _U32(0xFFFFF000)).view(np.float32)
_TWO_PI_2 = _TWO_PI_HI - _TWO_PI_1


def _two_pi_times(u):
    """float32(2*pi*u) with 2*pi and the product in double, as ``2.0f * M_PI * u`` in C.

    Dekker's exact product in float32: both factors split into 12-bit halves make
    every partial product exact, so ``p + e`` is ``float32(2*pi) * u`` exactly.
    """
    u_1 = jax.lax.bitcast_convert_type(jax.lax.bitcast_convert_type(u, jnp.uint32) & _U32(0xFFFFF000),
                                       jnp.float32)
    u_2 = u - u_1
    p = u * _TWO_PI_HI
    e = ((u_1 * _TWO_PI_1 - p) + u_2 * _TWO_PI_1 + u_1 * _TWO_PI_2) + u_2 * _TWO_PI_2
    return p + (e + u * _TWO_PI_LO)


_LOG_DTYPE = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32


def _box_muller(x0, x1):
    """BoxMullerFloat: two words -> two float32 normals (sin first, then cos)."""
    u1 = jnp.maximum(_uint32_to_float(x0), np.float32(1.0e-7))
    v1 = _two_pi_times(_uint32_to_float(x1))
    # TF's logf is glibc's (correctly rounded in practice); XLA's float32 log is often an ulp off
    # it, so the logarithm is taken in float64 and rounded (float32 where 64-bit mode is off).
    u2 = jnp.sqrt(np.float32(-2.0) * jnp.log(u1.astype(_LOG_DTYPE)).astype(jnp.float32))
    return jnp.sin(v1) * u2, jnp.cos(v1) * u2


def _normal_words(w):
    """The four normals of one block, in TF's order (as a list of arrays)."""
    return [*_box_muller(w[0], w[1]), *_box_muller(w[2], w[3])]


def _check_float(dtype, float64=True):
    dtype = np.dtype(dtype)
    if dtype == np.float64 and not (float64 and jax.config.jax_enable_x64):
        raise TypeError(
            "float64 random numbers need JAX's 64-bit mode, which TAPEJAX_ENABLE_X64=0 turns off: "
            "draw float32 and cast (tf.cast(tf.random.stateless_normal(shape, seed), tf.float64))."
            if float64 else "float64 truncated normals are not provided: draw float32 and cast "
            "(tf.cast(tf.random.truncated_normal(shape), tf.float64)).")
    if dtype not in (np.float64, np.float32, np.float16, jnp.bfloat16):
        raise TypeError(f"Random floats of dtype {dtype} are not supported: use float32, float64, float16 or bfloat16.")
    return dtype


# float64 (random_distributions.h): one double from two words, two doubles per Philox block.

def _uint64_to_double(x0, x1):
    # Uint64ToDouble: 20 mantissa bits of x0 over the 32 of x1 under exponent 0, minus one.
    man = ((x0 & _U32(0xFFFFF)).astype(jnp.uint64) << np.uint64(32)) | x1.astype(jnp.uint64)
    return jax.lax.bitcast_convert_type(man | np.uint64(1023 << 52), jnp.float64) - 1.0


def _pair_blocks(key, counter, n):
    """Output ``e`` of a float64 distribution comes from call ``e // 2``; the parity says which half."""
    e = jnp.arange(n, dtype=jnp.uint32)
    return (e & _U32(1)) == 1, philox(add128(_u32(counter), e >> _U32(1)), _u32(key))


def _uniform_double(key, counter, n):
    second, w = _pair_blocks(key, counter, n)
    return _uint64_to_double(jnp.where(second, w[2], w[0]), jnp.where(second, w[3], w[1]))


def _normal_double(key, counter, n):
    # BoxMullerDouble: one block -> two normals (sin first, then cos), in double.
    second, w = _pair_blocks(key, counter, n)
    u1 = jnp.maximum(_uint64_to_double(w[0], w[1]), 1.0e-7)
    v1 = _TWO_PI * _uint64_to_double(w[2], w[3])
    u2 = jnp.sqrt(-2.0 * jnp.log(u1))
    return jnp.where(second, jnp.cos(v1), jnp.sin(v1)) * u2


def _uint_to_low_float(x, dtype):
    # Uint16ToHalf / Uint16ToGfloat16: the low 16 bits' mantissa under exponent 0, minus one.
    if dtype == np.float16:
        bits = ((x & _U32(0x3FF)) | _U32(15 << 10)).astype(jnp.uint16)
    else:
        bits = ((x & _U32(0x7F)) | _U32(127 << 7)).astype(jnp.uint16)
    return jax.lax.bitcast_convert_type(bits, dtype) - jnp.asarray(1.0, dtype)


def _n_calls(n):
    return max(-(-n // 4), 1)


def _flat_normals(key, counter, n):
    k, w = _block(key, counter, n)
    second = k >= 2
    f0, f1 = _box_muller(jnp.where(second, w[2], w[0]), jnp.where(second, w[3], w[1]))
    return jnp.where((k & _U32(1)) == 1, f1, f0)


@functools.partial(jax.jit, static_argnames=("shape", "dtype"))
def uniform(key, counter, shape, dtype=np.float32):
    """``UniformDistribution<float>``: floats in [0, 1) (float32, float64, float16, bfloat16)."""
    dtype = _check_float(dtype)
    if dtype == np.float64:
        return _uniform_double(key, counter, math.prod(shape)).reshape(shape)
    w = _flat_words(key, counter, math.prod(shape))
    out = _uint32_to_float(w) if dtype == np.float32 else _uint_to_low_float(w, dtype)
    return out.reshape(shape)


@functools.partial(jax.jit, static_argnames=("shape", "dtype"))
def normal(key, counter, shape, dtype=np.float32):
    """``NormalDistribution``: Box-Muller on word pairs, in float32, then cast (float64: its own)."""
    dtype = _check_float(dtype)
    if dtype == np.float64:
        return _normal_double(key, counter, math.prod(shape)).reshape(shape)
    return _flat_normals(key, counter, math.prod(shape)).astype(dtype).reshape(shape)


@functools.partial(jax.jit, static_argnames=("shape", "dtype", "unrolled"))
def truncated_normal(key, counter, shape, dtype=np.float32, unrolled=3):
    """``TruncatedNormalDistribution``: each group of 4 outputs rejects |x| >= 2 from its own
    block of 256 counters (``FillPhiloxRandomTask<..., true>`` reserves 256 samples per
    output, 4 per counter), in sample order."""
    dtype = _check_float(dtype, float64=False)
    n = math.prod(shape)
    groups = _n_calls(n)
    g = jnp.arange(groups, dtype=jnp.uint32)
    base = add128(_u32(counter), g << _U32(8), g >> _U32(24))
    key = _u32(key)
    slot = jnp.arange(4, dtype=jnp.int32)

    def step(vals, count, j):
        for c in _normal_words(philox(add128(base, j), key)):
            take = (jnp.abs(c) < np.float32(2.0)) & (count < 4)
            vals = jnp.where(take[:, None] & (slot == count[:, None]), c[:, None], vals)
            count = count + take.astype(jnp.int32)
        return vals, count

    vals, count = jnp.zeros((groups, 4), jnp.float32), jnp.zeros((groups,), jnp.int32)
    # Three calls give 12 candidates: all groups but about one in 10**12 are full after them.
    for j in range(unrolled):
        vals, count = step(vals, count, _U32(j))
    vals, count, _ = jax.lax.while_loop(
        lambda s: jnp.any(s[1] < 4),
        lambda s: (*step(s[0], s[1], s[2]), s[2] + _U32(1)),
        (vals, count, _U32(unrolled)))
    return vals.reshape(-1)[:n].astype(dtype).reshape(shape)


@functools.partial(jax.jit, static_argnames=("shape", "dtype"))
def uniform_int(key, counter, shape, minval, maxval, dtype=np.int32):
    """``UniformDistribution<int32>``: ``lo + (word % (uint32(hi) - uint32(lo)))``, wrapping."""
    w = _flat_words(key, counter, math.prod(shape))
    lo = jnp.asarray(minval, jnp.int32)
    rng = jnp.asarray(maxval, jnp.int32).view(jnp.uint32) - lo.view(jnp.uint32)
    out = (lo.view(jnp.uint32) + w % rng).view(jnp.int32)
    return out.astype(dtype).reshape(shape)


@functools.partial(jax.jit, static_argnames=("shape",))
def words(key, counter, shape):
    """Raw uint32 words in output order (``UniformFullIntDistribution<uint32>``)."""
    return _flat_words(key, counter, math.prod(shape)).reshape(shape)
