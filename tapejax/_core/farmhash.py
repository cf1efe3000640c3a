"""FarmHash ``Fingerprint64`` (farmhashna::Hash64), the hash behind TensorFlow's
``tf.strings.to_hash_bucket_fast``: a fixed, platform-independent 64-bit hash of bytes.

A transcription of Google's farmhash.cc (MIT licence) with Python integers masked to 64 bits.

Example:
    >>> from tapejax._core.farmhash import fingerprint64
    >>> fingerprint64(b"Who") % 1024
    633
"""
import struct

_M = (1 << 64) - 1
_K0 = 0xc3a5c85c97cb3127
_K1 = 0xb492b66fbe98f273
_K2 = 0x9ae16a3b2f90404f
_KMUL = 0x9ddfea08eb382d69


def _fetch64(s, i):
    return struct.unpack_from("<Q", s, i)[0]


def _fetch32(s, i):
    return struct.unpack_from("<I", s, i)[0]


def _rot(v, shift):
    return ((v >> shift) | (v << (64 - shift))) & _M if shift else v


def _shift_mix(v):
    return v ^ (v >> 47)


def _len16(u, v, mul=_KMUL):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len0to16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_fetch64(s, 0) + _K2) & _M
        b = _fetch64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _len16((n + (_fetch32(s, 0) << 3)) & _M, _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xffffffff
        z = (n + (s[n - 1] << 2)) & 0xffffffff
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len17to32(s, n):
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K1) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    return _len16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
                  (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)


def _len33to64(s, n):
    mul = _K2 + n * 2
    a = (_fetch64(s, 0) * _K2) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _len16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_fetch64(s, 16) * mul) & _M
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _M
    h = ((z + _fetch64(s, n - 24)) * mul) & _M
    return _len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
                  (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak32(s, i, a, b):
    w, x, y, z = (_fetch64(s, i + k) for k in (0, 8, 16, 24))
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def _round(s, i, x, y, z, v, w, mul, last):
    """One 64-byte step of the long-input loop (``last``: the final one, with its extra mixing)."""
    x = (_rot((x + y + v[0] + _fetch64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v[1] + _fetch64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * 9) & _M if last else w[1]
    y = (y + (v[0] * 9 if last else v[0]) + _fetch64(s, i + 40)) & _M
    z = (_rot((z + w[0]) & _M, 33) * mul) & _M
    v = _weak32(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _fetch64(s, i + 16)) & _M)
    return z, y, x, v, w   # x and z swap


def fingerprint64(data):
    """FarmHash's ``Fingerprint64`` of ``data`` (bytes) as an unsigned 64-bit Python int."""
    s = bytes(data)
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    y = (seed * _K1 + 113) & _M
    z = (_shift_mix((y * _K2 + 113) & _M) * _K2) & _M
    v = w = (0, 0)
    x = (seed * _K2 + _fetch64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    for i in range(0, end, 64):
        x, y, z, v, w = _round(s, i, x, y, z, v, w, _K1, False)
    mul = _K1 + ((z & 0xff) << 1)
    w0 = (w[0] + ((n - 1) & 63)) & _M
    v0 = (v[0] + w0) & _M
    w = ((w0 + v0) & _M, w[1])
    v = (v0, v[1])
    x, y, z, v, w = _round(s, last64, x, y, z, v, w, mul, True)
    return _len16((_len16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _M,
                  (_len16(v[1], w[1], mul) + x) & _M, mul)
