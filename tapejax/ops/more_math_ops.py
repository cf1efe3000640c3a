"""More math rows of the op table: TensorFlow's top-level aliases of ``tf.math`` ops (``tf.floor``,
``tf.acos``...), special functions, ``xdivy``-style safe ops, segment reductions, counting
(``bincount``, ``confusion_matrix``, ``in_top_k``) and complex parts.

Gradients are JAX's unless TensorFlow's registered gradient differs (its math_grad.py): rint and
nextafter have none, as floor and round.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special

from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, _TensorBase, to_array
from .._core.custom_gradient import custom_gradient
from .._core.engine import allows_dtypes, shares_dtype, known_value
from .. import errors
from ..errors import InvalidArgumentError
from ..extend import defop
from . import bounds, normalize
from .bounds import _kernel_message
from .namespaces import export
from .math_ops import (floor, round, acos, acosh, asin, asinh, atan, atan2, atanh, cosh, sinh, multiply, add_n,
                       _reduction, _no_gradient)
from .nn_ops import softmax, log_softmax

# TensorFlow publishes these tf.math ops at the top level too (tf.floor is tf.math.floor).
for _op, _name in [(floor, "floor"), (round, "round"), (acos, "acos"), (acosh, "acosh"), (asin, "asin"),
                   (asinh, "asinh"), (atan, "atan"), (atan2, "atan2"), (atanh, "atanh"), (cosh, "cosh"),
                   (sinh, "sinh")]:
    export(_name)(_op)
export("math.softmax")(softmax)
export("math.log_softmax")(log_softmax)


@export("scalar_mul", "math.scalar_mul")
def scalar_mul(scalar, x, name=None):
    """Multiplies ``x`` by the scalar ``scalar`` (``tf.math.scalar_mul``).

    Example:
        >>> import tapejax as tf
        >>> tf.math.scalar_mul(2.0, tf.constant([1.0, 2.0])).numpy().tolist()
        [2.0, 4.0]
    """
    s = scalar if isinstance(scalar, _TensorBase) else Tensor(to_array(scalar))
    if s.shape.rank not in (0, None):
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {tuple(s.shape)}.")
    return multiply(x, scalar)


truncatediv = export("truncatediv")(defop(jax.lax.div, name="truncatediv", vjp=_no_gradient))
truncatemod = export("truncatemod")(defop(jax.lax.rem, name="truncatemod", vjp=_no_gradient))
# An integer division by zero fails in TensorFlow's CPU kernels (the truncating ones with an internal error).
truncatediv.check, truncatemod.check = (
    bounds.divisor(op, "Unexpected error in binary operator (only integer div and mod should have errors)",
                   errors.InternalError) for op in ("TruncateDiv", "TruncateMod"))
rint = export("math.rint")(defop(jnp.rint, name="rint", vjp=_no_gradient))
nextafter = export("math.nextafter")(defop(jnp.nextafter, name="nextafter", vjp=_no_gradient))
erfinv = export("math.erfinv")(defop(jax.scipy.special.erfinv, name="erfinv"))
ndtri = export("math.ndtri")(defop(jax.scipy.special.ndtri, name="ndtri"))
erfcinv = export("math.erfcinv")(defop(lambda x: -jax.scipy.special.ndtri(x / 2) / np.sqrt(2).astype(x.dtype),
                                       name="erfcinv"))
bessel_i0 = export("math.bessel_i0")(defop(jax.scipy.special.i0, name="bessel_i0"))
bessel_i0e = export("math.bessel_i0e")(defop(jax.scipy.special.i0e, name="bessel_i0e"))
bessel_i1 = export("math.bessel_i1")(defop(jax.scipy.special.i1, name="bessel_i1"))
bessel_i1e = export("math.bessel_i1e")(defop(jax.scipy.special.i1e, name="bessel_i1e"))
# tf.math.special: JAX has Dawson's integral, Ei, Fresnel's integrals and Spence's function; the
# Bessel functions J, Y, K (Cephes, as TF's Eigen kernels) come from SciPy (a dependency of JAX) on
# the host, one elementwise callback, with TensorFlow's gradients (math_grad.py).
def _host_special(name):
    def run(x):
        f = getattr(scipy.special, name)
        return jax.pure_callback(lambda v: np.asarray(f(v), v.dtype), jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                 vmap_method="expand_dims")
    return run


_j0, _j1, _y0, _y1 = (_host_special(n) for n in ("j0", "j1", "y0", "y1"))
_k0, _k0e, _k1, _k1e = (_host_special(n) for n in ("k0", "k0e", "k1", "k1e"))
bessel_j0 = export("math.special.bessel_j0")(defop(_j0, name="bessel_j0", vjp=lambda ans, x: lambda g: -g * _j1(x)))
bessel_j1 = export("math.special.bessel_j1")(defop(_j1, name="bessel_j1", vjp=lambda ans, x: lambda g: g * jnp.where(
    x == 0, jnp.asarray(0.5, x.dtype), _j0(x) - ans / jnp.where(x == 0, jnp.ones_like(x), x))))
bessel_y0 = export("math.special.bessel_y0")(defop(_y0, name="bessel_y0", vjp=lambda ans, x: lambda g: -g * _y1(x)))
bessel_y1 = export("math.special.bessel_y1")(defop(_y1, name="bessel_y1", vjp=lambda ans, x: lambda g: g * (_y0(x) - ans / x)))
bessel_k0 = export("math.special.bessel_k0")(defop(_k0, name="bessel_k0", vjp=lambda ans, x: lambda g: -g * _k1(x)))
bessel_k0e = export("math.special.bessel_k0e")(defop(_k0e, name="bessel_k0e", vjp=lambda ans, x: lambda g: g * (ans - _k1e(x))))
bessel_k1 = export("math.special.bessel_k1")(defop(_k1, name="bessel_k1", vjp=lambda ans, x: lambda g: g * (-_k0(x) - ans / x)))
bessel_k1e = export("math.special.bessel_k1e")(defop(_k1e, name="bessel_k1e", vjp=lambda ans, x: lambda g: g * (
    ans * (1 - 1 / x) - _k0e(x))))
dawsn = export("math.special.dawsn")(defop(jax.scipy.special.dawsn, name="dawsn", vjp=lambda ans, x: lambda g: g * (1 - 2 * x * ans)))
expint = export("math.special.expint")(defop(jax.scipy.special.expi, name="expint", vjp=lambda ans, x: lambda g: g * jnp.exp(x) / x))
_half_pi_x2 = lambda x: jnp.asarray(np.pi / 2, x.dtype) * jnp.square(x)   # noqa: E731
fresnel_sin = export("math.special.fresnel_sin")(defop(lambda x: jax.scipy.special.fresnel(x)[0], name="fresnel_sin",
                                                       vjp=lambda ans, x: lambda g: g * jnp.sin(_half_pi_x2(x))))
fresnel_cos = export("math.special.fresnel_cos")(defop(lambda x: jax.scipy.special.fresnel(x)[1], name="fresnel_cos",
                                                       vjp=lambda ans, x: lambda g: g * jnp.cos(_half_pi_x2(x))))
spence = export("math.special.spence")(defop(jax.scipy.special.spence, name="spence", vjp=lambda ans, x: lambda g: g * jnp.where(
    x == 1, -jnp.ones_like(x), jnp.log(x) / (1 - x))))
for _name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
    export(f"math.special.{_name}")(globals()[_name])
igamma = export("math.igamma")(defop(jax.scipy.special.gammainc, name="igamma"))
igammac = export("math.igammac")(defop(jax.scipy.special.gammaincc, name="igammac"))
# TensorFlow's gradients (math_grad.py): none for zeta's x, polygamma's order, betainc's a and b
zeta = export("math.zeta")(defop(jax.scipy.special.zeta, name="zeta", vjp=lambda ans, x, q: lambda g: (
    None, g * -x * jax.scipy.special.zeta(x + 1, q))))
# TensorFlow's order ``a`` is a float tensor: nan where it is not a whole number.
polygamma = export("math.polygamma")(defop(lambda a, x: jnp.where(
    a == jnp.floor(a), jax.scipy.special.polygamma(a.astype(np.int32), x), jnp.nan), name="polygamma",
    vjp=lambda ans, a, x: lambda g: (None, g * jax.scipy.special.polygamma(a.astype(np.int32) + 1, x))))
betainc = export("math.betainc")(defop(jax.scipy.special.betainc, name="betainc", vjp=lambda ans, a, b, x: lambda g: (
    None, None, g * jnp.exp((b - 1) * jnp.log1p(-x) + (a - 1) * jnp.log(x) - jax.scipy.special.betaln(a, b)))))
_FLOATING = ("bfloat16", "half", "float", "double")
for _op, _tf_op in [(rint, "Rint"), (erfinv, "Erfinv"), (ndtri, "Ndtri"), (erfcinv, "Erfcinv"),
                    (bessel_i0, "BesselI0"), (bessel_i0e, "BesselI0e"), (bessel_i1, "BesselI1"),
                    (bessel_i1e, "BesselI1e"), (bessel_j0, "BesselJ0"), (bessel_j1, "BesselJ1"),
                    (bessel_y0, "BesselY0"), (bessel_y1, "BesselY1"), (bessel_k0, "BesselK0"),
                    (bessel_k0e, "BesselK0e"), (bessel_k1, "BesselK1"), (bessel_k1e, "BesselK1e"),
                    (dawsn, "Dawsn"), (expint, "Expint"), (fresnel_sin, "FresnelSin"),
                    (fresnel_cos, "FresnelCos"), (spence, "Spence")]:
    allows_dtypes(_op, _tf_op, _FLOATING)


def _xdivy(x, y):
    """``x / y``, and 0 where ``x`` is 0 (``tf.math.xdivy``); the gradient has no nan there either.

    Example:
        >>> import tapejax as tf
        >>> tf.math.xdivy(tf.constant([0.0, 1.0]), tf.constant([0.0, 4.0])).numpy().tolist()
        [0.0, 0.25]
    """
    zero = x == 0
    return jnp.where(zero, jnp.zeros_like(x), x / jnp.where(zero & (y == 0), jnp.ones_like(y), y))


def _xlog1py(x, y):
    """``x * log1p(y)``, and 0 where ``x`` is 0 (``tf.math.xlog1py``); the gradient has no nan there either.

    Example:
        >>> import tapejax as tf
        >>> tf.math.xlog1py(tf.constant([0.0, 2.0]), tf.constant([-1.0, 0.0])).numpy().tolist()
        [0.0, 0.0]
    """
    zero = x == 0
    return jnp.where(zero, jnp.zeros_like(x), x * jnp.log1p(jnp.where(zero & (y <= -1), jnp.zeros_like(y), y)))


xdivy = export("math.xdivy")(defop(_xdivy, name="xdivy"))
xlog1py = export("math.xlog1py")(defop(_xlog1py, name="xlog1py"))
reciprocal_no_nan = export("math.reciprocal_no_nan")(defop(
    lambda x: jnp.where(x == 0, jnp.zeros_like(x), 1 / jnp.where(x == 0, jnp.ones_like(x), x)),
    name="reciprocal_no_nan"))
for _op in (xdivy, xlog1py, igamma, igammac, zeta, polygamma, nextafter, truncatediv, truncatemod):
    shares_dtype(_op)
shares_dtype(betainc)


def _euclidean_norm(x, axis=None, keepdims=False):
    if x.dtype.kind in "iu":   # TensorFlow's integer kernel: the root truncated to the integer type
        s = jnp.sum(x.astype(np.float64 if jax.config.jax_enable_x64 else np.float32) ** 2, axis=axis, keepdims=keepdims)
        return jnp.sqrt(s).astype(x.dtype)
    return jnp.sqrt(jnp.sum(x * jnp.conj(x), axis=axis, keepdims=keepdims))


reduce_euclidean_norm = _reduction("reduce_euclidean_norm", _euclidean_norm, "math.reduce_euclidean_norm")

_lbeta = defop(lambda x: jnp.sum(jax.scipy.special.gammaln(x), -1) - jax.scipy.special.gammaln(jnp.sum(x, -1)),
               name="lbeta")


@export("math.lbeta")
def lbeta(x, name=None):
    """``log(|Beta(x)|)`` over the last axis: ``sum(lgamma(x)) - lgamma(sum(x))`` (``tf.math.lbeta``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.lbeta(tf.constant([1.0, 1.0])).numpy())
        0.0
    """
    return _lbeta(x)


_zero_fraction = defop(lambda x: jnp.mean((x == 0).astype(np.float32)), name="zero_fraction")


@export("math.zero_fraction", "nn.zero_fraction")
def zero_fraction(value, name=None):
    """The fraction of zeros in ``value``, a float32 scalar (``tf.math.zero_fraction``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.zero_fraction(tf.constant([0.0, 1.0, 0.0, 2.0])).numpy())
        0.5
    """
    return _zero_fraction(value)


@export("math.polyval")
def polyval(coeffs, x, name=None):
    """The polynomial ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule (``tf.math.polyval``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.polyval([2.0, 0.0, 1.0], tf.constant(3.0)).numpy())
        19.0
    """
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    x = x if isinstance(x, _TensorBase) else Tensor(to_array(x))
    if not coeffs:
        return Tensor(jnp.zeros_like(x._value))
    acc = coeffs[0]
    for c in coeffs[1:]:
        acc = acc * x + c
    return acc if isinstance(acc, _TensorBase) else Tensor(jnp.asarray(acc, x._value.dtype) + jnp.zeros_like(x._value))



@export("math.invert_permutation")
def invert_permutation(x, name=None):
    """The inverse permutation: ``y[x[i]] = i`` (``tf.math.invert_permutation``).

    Example:
        >>> import tapejax as tf
        >>> tf.math.invert_permutation(tf.constant([3, 4, 0, 2, 1])).numpy().tolist()
        [2, 4, 3, 0, 1]
    """
    x = x if isinstance(x, _TensorBase) else Tensor(np.asarray(to_array(x), np.int32))
    v = normalize.known(x, "invert_permutation")
    if v.ndim != 1:
        raise InvalidArgumentError(None, None, "invert_permutation expects a 1D vector. [Op:InvertPermutation]")
    n = v.shape[0]
    out = np.full(n, -1, v.dtype)
    for i, d in enumerate(v):
        if not 0 <= d < n:
            raise InvalidArgumentError(None, None, f"{d} is not between 0 and {n} [Op:InvertPermutation]")
        if out[d] != -1:
            raise InvalidArgumentError(None, None, f"{d} is duplicated in the input. [Op:InvertPermutation]")
        out[d] = i
    return Tensor(jnp.asarray(out))


_is_non_decreasing = defop(lambda x: jnp.all(jnp.diff(jnp.ravel(x)) >= 0), name="is_non_decreasing")
_is_strictly_increasing = defop(lambda x: jnp.all(jnp.diff(jnp.ravel(x)) > 0), name="is_strictly_increasing")


@export("math.is_non_decreasing")
def is_non_decreasing(x, name=None):
    """True if ``x``'s elements, flattened, never decrease (``tf.math.is_non_decreasing``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.is_non_decreasing([1, 1, 2]).numpy())
        True
    """
    return _is_non_decreasing(x)


@export("math.is_strictly_increasing")
def is_strictly_increasing(x, name=None):
    """True if ``x``'s elements, flattened, always increase (``tf.math.is_strictly_increasing``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.is_strictly_increasing([1, 1, 2]).numpy())
        False
    """
    return _is_strictly_increasing(x)


# ---------------------------------------------------------------- complex parts
def _real_or_imag(part):
    def f(x):
        if jnp.iscomplexobj(x):
            return part(x)
        return x if part is jnp.real else jnp.zeros_like(x)
    return f


_real = defop(_real_or_imag(jnp.real), name="real")
_imag = defop(_real_or_imag(jnp.imag), name="imag")
_conj = defop(jnp.conj, name="conj")
_angle = defop(jnp.angle, name="angle")


@export("math.real")
def real(input, name=None):
    """The real part of a complex tensor; a real tensor as it is (``tf.math.real``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.real(tf.complex(1.0, 2.0)).numpy())
        1.0
    """
    return _real(input)


@export("math.imag")
def imag(input, name=None):
    """The imaginary part of a complex tensor; zeros for a real one (``tf.math.imag``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.imag(tf.complex(1.0, 2.0)).numpy())
        2.0
    """
    return _imag(input)


@export("math.conj")
def conj(x, name=None):
    """The complex conjugate; a real tensor as it is (``tf.math.conj``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.conj(tf.complex(1.0, 2.0)).numpy())
        (1-2j)
    """
    return _conj(x)


@export("math.angle")
def angle(input, name=None):
    """The argument of a complex tensor; ``pi`` for negative and 0 for other reals (``tf.math.angle``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.math.angle(tf.complex(0.0, 1.0)).numpy())
        1.5707964
    """
    return _angle(input)


_complex = defop(jax.lax.complex, name="complex")


@export("complex")
def complex(real, imag, name=None):  # noqa: A001
    """``real + imag * 1j``: complex64 from float32 parts, complex128 from float64 (``tf.complex``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.complex(tf.constant(1.0), tf.constant(2.0)).numpy())
        (1+2j)
    """
    r = real if isinstance(real, _TensorBase) else Tensor(to_array(real))
    i = imag if isinstance(imag, _TensorBase) else Tensor(to_array(imag, r.dtype))
    if r.dtype != i.dtype or r.dtype.name not in ("float32", "float64"):
        raise TypeError(f"The `real` and `imag` components have incorrect types: {r.dtype.name} {i.dtype.name}. "
                        "They must be consistent, and one of [tf.float32, tf.float64]")
    return _complex(r, i)


# ---------------------------------------------------------------- segment reductions
_SEGMENT = {"sum": jax.ops.segment_sum, "max": jax.ops.segment_max, "min": jax.ops.segment_min}


def _segment_prod_vjp(ans, data, ids, num_segments):
    """TensorFlow's _UnsortedSegmentProdGrad: the product of the other elements of the segment,
    exact where an element is zero (JAX's scatter-multiply has no gradient)."""
    def grads(g):
        valid = (ids >= 0) & (ids < num_segments)
        safe = jnp.where(valid, ids, 0)
        bshape = ids.shape + (1,) * (data.ndim - ids.ndim)
        is_zero = data == 0
        zeros = jax.ops.segment_sum(is_zero.astype(np.int32), ids, num_segments=num_segments)
        non_zero = jnp.where(is_zero, jnp.ones_like(data), data)
        non_zero_prod = _prod(non_zero, ids, num_segments)
        others = jnp.where(is_zero, non_zero_prod[safe], ans[safe] / non_zero)
        others = jnp.where(zeros[safe] > 1, jnp.zeros_like(others), others)
        return jnp.where(valid.reshape(bshape), g[safe] * others, 0), None
    return grads


def _prod(data, ids, num_segments):
    return jax.ops.segment_prod(data, ids.astype(np.int32), num_segments=num_segments)


_segment_prod = defop(_prod, name="segment_prod", static=("num_segments",), vjp=_segment_prod_vjp)


def _segment_fn(data, ids, kind, num_segments, empty_zero):
    ids = ids.astype(np.int32)
    if kind in _SEGMENT:
        out = _SEGMENT[kind](data, ids, num_segments=num_segments)
        if kind in ("max", "min"):
            # an empty segment: 0 for the sorted ops, the dtype's lowest (highest) finite value for
            # the unsorted ones (JAX: -inf, inf)
            count = jax.ops.segment_sum(jnp.ones(ids.shape, np.int32), ids, num_segments=num_segments)
            info = jnp.finfo(data.dtype) if jnp.issubdtype(data.dtype, jnp.floating) else jnp.iinfo(data.dtype)
            fill = 0 if empty_zero else (info.min if kind == "max" else info.max)
            out = jnp.where((count == 0).reshape((-1,) + (1,) * (out.ndim - 1)), jnp.asarray(fill, out.dtype), out)
        return out
    total = jax.ops.segment_sum(data, ids, num_segments=num_segments)
    count = jax.ops.segment_sum(jnp.ones(ids.shape, data.dtype), ids, num_segments=num_segments)
    count = count.reshape(count.shape + (1,) * (total.ndim - count.ndim))
    if kind == "mean":
        return total / jnp.maximum(count, 1)
    return total / jnp.sqrt(jnp.maximum(count, 1))


_segment = defop(_segment_fn, name="segment", static=("kind", "num_segments", "empty_zero"))


def _sorted_segment(kind):
    def segment(data, segment_ids, name=None):
        ids = normalize.known(segment_ids, f"segment_{kind}")
        if ids.ndim != 1:
            raise InvalidArgumentError(None, None, _kernel_message(f"Segment{kind.title()}", "segment_ids should be a vector."))
        if ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
            raise InvalidArgumentError(None, None, _kernel_message(f"Segment{kind.title()}", "segment ids are not increasing"))
        n = int(ids[-1]) + 1 if ids.size else 0
        if kind == "prod":
            return _segment_prod(data, Tensor(jnp.asarray(ids)), num_segments=n)
        return _segment(data, Tensor(jnp.asarray(ids)), kind=kind, num_segments=n, empty_zero=True)
    segment.__name__ = segment.__qualname__ = f"segment_{kind}"
    segment.__doc__ = (f"The {kind} of ``data``'s rows in each segment of the sorted ``segment_ids`` "
                       f"(``tf.math.segment_{kind}``); an empty segment gives {1 if kind == 'prod' else 0}.\n\n"
                       "    Example:\n        >>> import tapejax as tf\n"
                       f"        >>> tf.math.segment_{kind}(tf.constant([1.0, 2.0, 4.0]), tf.constant([0, 0, 1]))"
                       ".numpy().tolist()\n"
                       f"        {_EXAMPLE[kind]}\n")
    return export(f"math.segment_{kind}")(segment)


def _unsorted_segment(kind):
    def unsorted_segment(data, segment_ids, num_segments, name=None):
        n = int(normalize.known(num_segments, f"unsorted_segment_{kind}"))
        def run():
            if kind == "prod":
                return _segment_prod(data, segment_ids, num_segments=n)
            return _segment(data, segment_ids, kind=kind, num_segments=n, empty_zero=False)
        # mean and sqrt_n are TensorFlow Python, over UnsortedSegmentSum
        return bounds.segment_ids(segment_ids, n, "UnsortedSegment" + _KERNEL.get(kind, "Sum"),
                                  name="" if kind in ("mean", "sqrt_n") else bounds.fast_path(segment_ids), then=run)
    unsorted_segment.__name__ = unsorted_segment.__qualname__ = f"unsorted_segment_{kind}"
    unsorted_segment.__doc__ = (
        f"The {kind.replace('_', ' ')} of ``data``'s rows in each of ``num_segments`` segments "
        f"(``tf.math.unsorted_segment_{kind}``); ``segment_ids`` in any order, negative ids dropped.\n\n"
        "    Example:\n        >>> import tapejax as tf\n"
        f"        >>> tf.math.unsorted_segment_{kind}(tf.constant([1.0, 2.0, 4.0]), tf.constant([1, 0, 1]), 2)"
        ".numpy().tolist()\n"
        f"        {_UNSORTED_EXAMPLE[kind]}\n")
    return export(f"math.unsorted_segment_{kind}")(unsorted_segment)


_KERNEL = {"max": "Max", "min": "Min", "prod": "Prod"}
_EXAMPLE = {"sum": "[3.0, 4.0]", "mean": "[1.5, 4.0]", "max": "[2.0, 4.0]", "min": "[1.0, 4.0]", "prod": "[2.0, 4.0]"}
_UNSORTED_EXAMPLE = {"sum": "[2.0, 5.0]", "mean": "[2.0, 2.5]", "max": "[2.0, 4.0]", "min": "[2.0, 1.0]",
                     "prod": "[2.0, 4.0]", "sqrt_n": "[2.0, 3.535533905029297]"}
segment_sum, segment_mean, segment_max, segment_min, segment_prod = (
    _sorted_segment(k) for k in ("sum", "mean", "max", "min", "prod"))
(unsorted_segment_sum, unsorted_segment_mean, unsorted_segment_max, unsorted_segment_min, unsorted_segment_prod,
 unsorted_segment_sqrt_n) = (_unsorted_segment(k) for k in ("sum", "mean", "max", "min", "prod", "sqrt_n"))


# ---------------------------------------------------------------- counting
@export("math.bincount")
def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32, name=None, axis=None,
             binary_output=False):
    """How often each value ``0..max(arr)`` occurs in ``arr`` (or the sum of its ``weights``) (``tf.math.bincount``).

    Example:
        >>> import tapejax as tf
        >>> tf.math.bincount(tf.constant([1, 1, 3])).numpy().tolist()
        [0, 2, 0, 1]
    """
    if (known_value(arr) is None and minlength is not None and maxlength is not None and int(minlength) == int(maxlength)
            and axis is None and not binary_output):
        # inside a tf.function: the length is fixed, the values need not be known
        w = None if weights is None else to_array(weights).ravel()
        out_dtype = weights.dtype if isinstance(weights, _TensorBase) else _dtypes.as_dtype(dtype)
        return Tensor(jnp.bincount(to_array(arr).ravel(), w, length=int(minlength)).astype(_dtypes.np_dtype(out_dtype)))
    v = normalize.known(arr, "bincount")
    if np.any(v < 0):
        raise InvalidArgumentError(None, None, "Input arr must be non-negative! [Op:DenseBincount]")
    n = int(v.max()) + 1 if v.size else 0
    if minlength is not None:
        n = max(n, int(minlength))
    if maxlength is not None:
        n = min(n, int(maxlength))
    out_dtype = weights.dtype if isinstance(weights, _TensorBase) else _dtypes.as_dtype(dtype)
    w = None if weights is None else normalize.known(weights, "bincount")
    if axis == -1:
        rows = [np.bincount(r[r < n], None if w is None else np.asarray(w)[i][r < n], minlength=n)[:n]
                for i, r in enumerate(v)]
        out = np.stack(rows) if rows else np.zeros((0, n))
    else:
        flat = v.ravel()
        keep = flat < n
        out = np.bincount(flat[keep], None if w is None else np.asarray(w).ravel()[keep], minlength=n)[:n]
    if binary_output:
        out = (out > 0)
    return Tensor(jnp.asarray(out, _dtypes.np_dtype(out_dtype)))


@export("math.confusion_matrix")
def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dtypes.int32, name=None):
    """The ``[num_classes, num_classes]`` matrix counting (label, prediction) pairs (``tf.math.confusion_matrix``).

    Example:
        >>> import tapejax as tf
        >>> tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy().tolist()
        [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    """
    lab = normalize.known(labels, "confusion_matrix").astype(np.int64).ravel()
    pred = normalize.known(predictions, "confusion_matrix").astype(np.int64).ravel()
    if lab.shape != pred.shape:
        raise ValueError(f"Dimensions {lab.shape[0]} and {pred.shape[0]} are not compatible")
    if np.any(lab < 0):
        raise InvalidArgumentError(None, None, "`labels` contains negative values.")
    if np.any(pred < 0):
        raise InvalidArgumentError(None, None, "`predictions` contains negative values.")
    n = int(max(lab.max(initial=-1), pred.max(initial=-1))) + 1 if num_classes is None else int(num_classes)
    for what, v in (("labels", lab), ("predictions", pred)):
        if np.any(v >= n):
            raise InvalidArgumentError(None, None, f"`{what}` out of bound\nCondition x < y did not hold.")
    w = np.ones(lab.shape) if weights is None else normalize.known(weights, "confusion_matrix").ravel()
    out = np.zeros((n, n), np.float64)
    np.add.at(out, (lab, pred), w)
    return Tensor(jnp.asarray(out, _dtypes.np_dtype(dtype)))


def _in_top_k_fn(t, p, k):
    # TensorFlow's kernel "cannot say" (False) for a target out of range or a row with inf or nan
    t = t.astype(np.int32)
    inside = (t >= 0) & (t < p.shape[1])
    target = jnp.take_along_axis(p, jnp.where(inside, t, 0)[:, None], 1)
    return inside & jnp.all(jnp.isfinite(p), 1) & (jnp.sum(p > target, 1) < k)


_in_top_k = defop(_in_top_k_fn, name="in_top_k", static=("k",))


@export("math.in_top_k", "nn.in_top_k")
def in_top_k(targets, predictions, k, name=None):
    """Whether each ``targets[i]`` is among the ``k`` largest ``predictions[i]`` (``tf.math.in_top_k``);
    ties count as in, as in TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> tf.math.in_top_k([0, 1], tf.constant([[0.1, 0.9], [0.3, 0.7]]), 1).numpy().tolist()
        [False, True]
    """
    return _in_top_k(targets, predictions, k=int(normalize.known(k, "in_top_k")))


_argsort = defop(lambda x, axis, descending, stable: jnp.argsort(
    x, axis=axis, descending=descending, stable=stable).astype(np.int32),
    name="argsort", static=("axis", "descending", "stable"))


@export("argsort")
def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort ``values`` along ``axis``, int32 (``tf.argsort``).

    Example:
        >>> import tapejax as tf
        >>> tf.argsort(tf.constant([3.0, 1.0, 2.0])).numpy().tolist()
        [1, 2, 0]
    """
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f'Argument `direction` should be one of ASCENDING, DESCENDING. Received: '
                         f'direction={direction}')
    return _argsort(values, axis=int(axis), descending=direction == "DESCENDING", stable=True)


@export("math.accumulate_n")
def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The elementwise sum of a list of tensors (``tf.math.accumulate_n``, deprecated in TF for ``tf.math.add_n``).

    Example:
        >>> import tapejax as tf
        >>> tf.math.accumulate_n([tf.constant([1, 2]), tf.constant([3, 4])]).numpy().tolist()
        [4, 6]
    """
    return add_n(inputs)


_cumulative_logsumexp = defop(lambda x, axis, exclusive, reverse: _cum_lse(x, axis, exclusive, reverse),
                              name="cumulative_logsumexp", static=("axis", "exclusive", "reverse"))


def _cum_lse(x, axis, exclusive, reverse):
    if reverse:
        x = jnp.flip(x, axis)
    if exclusive:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        x = jax.lax.slice_in_dim(jnp.pad(x, pad, constant_values=-jnp.inf), 0, x.shape[axis], axis=axis)
    r = jax.lax.cumlogsumexp(x, axis=axis)
    return jnp.flip(r, axis) if reverse else r


@export("math.cumulative_logsumexp")
def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """``log(cumsum(exp(x)))`` along ``axis``, computed stably (``tf.math.cumulative_logsumexp``).

    Example:
        >>> import tapejax as tf
        >>> tf.math.cumulative_logsumexp(tf.constant([0.0, 0.0])).numpy().tolist()
        [0.0, 0.6931471824645996]
    """
    x = x if isinstance(x, _TensorBase) else Tensor(to_array(x))
    return _cumulative_logsumexp(x, axis=int(axis) % max(x.ndim, 1), exclusive=bool(exclusive), reverse=bool(reverse))


def _approx_k(largest):
    def approx(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
               aggregate_to_topk=True, name=None):
        x = operand if isinstance(operand, _TensorBase) else Tensor(to_array(operand))
        fn = jax.lax.approx_max_k if largest else jax.lax.approx_min_k
        return _approx_op(x, k=int(k), dim=int(reduction_dimension) % x.ndim, largest=largest, fn_name=fn.__name__)
    kind = "max" if largest else "min"
    approx.__name__ = approx.__qualname__ = f"approx_{kind}_k"
    approx.__doc__ = (f"The ``k`` {'largest' if largest else 'smallest'} values along ``reduction_dimension`` and "
                      f"their indices (``tf.math.approx_{kind}_k``); exact on CPU, XLA's approximation on TPU.\n\n"
                      "    Example:\n        >>> import tapejax as tf\n"
                      f"        >>> tf.math.approx_{kind}_k(tf.constant([1.0, 3.0, 2.0]), 1)[0].numpy().tolist()\n"
                      f"        [{3.0 if largest else 1.0}]\n")
    return export(f"math.approx_{kind}_k", f"nn.approx_{kind}_k")(approx)


_approx_op = defop(lambda x, k, dim, largest, fn_name: tuple(
    (jax.lax.approx_max_k if largest else jax.lax.approx_min_k)(x, k, reduction_dimension=dim)),
    name="approx_top_k", static=("k", "dim", "largest", "fn_name"))
approx_max_k, approx_min_k = _approx_k(True), _approx_k(False)


# ---------------------------------------------------------------- eigen decomposition, gradient helpers
_eig = defop(lambda x: tuple(jnp.linalg.eig(x)), name="eig")
_eigvals = defop(jnp.linalg.eigvals, name="eigvals")


@export("eig", "linalg.eig")
def eig(tensor, name=None):
    """Eigenvalues and eigenvectors of a (batch of) square, not necessarily symmetric, matrices;
    complex (``tf.linalg.eig``). JAX computes it on the CPU.

    Example:
        >>> import tapejax as tf
        >>> e, v = tf.linalg.eig(tf.constant([[2.0, 0.0], [0.0, 3.0]]))
        >>> e.numpy().tolist()
        [(2+0j), (3+0j)]
    """
    return _eig(tensor)


@export("eigvals", "linalg.eigvals")
def eigvals(tensor, name=None):
    """Eigenvalues of a (batch of) square matrices, complex (``tf.linalg.eigvals``).

    Example:
        >>> import tapejax as tf
        >>> tf.linalg.eigvals(tf.constant([[0.0, 1.0], [-1.0, 0.0]])).numpy().tolist()
        [1j, -1j]
    """
    return _eigvals(tensor)


@export("grad_pass_through")
def grad_pass_through(f):
    """``f`` with the identity as its gradient: the incoming gradient passes to ``f``'s inputs
    unchanged (``tf.grad_pass_through``; straight-through estimators).

    Example:
        >>> import tapejax as tf
        >>> x = tf.constant(1.4)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = tf.grad_pass_through(tf.round)(x) * 3.0
        >>> print(y.numpy(), tape.gradient(y, x).numpy())
        3.0 3.0
    """
    @custom_gradient
    def passed(*args, **kwargs):
        def grad(*dy, **grad_kwargs):
            variables = grad_kwargs.get("variables")
            if variables is not None:
                return dy, [None] * len(variables)
            return dy
        return f(*args, **kwargs), grad
    return functools.wraps(f)(passed) if hasattr(f, "__name__") else passed


@export("no_gradient")
def no_gradient(op_type):
    """Declares that TensorFlow graph op ``op_type`` has no gradient (``tf.no_gradient``). tapejax has
    no op registry to update: an op's gradient comes with its row (``defop``'s ``vjp``), so this
    only checks the argument, as TensorFlow does.

    Example:
        >>> import tapejax as tf
        >>> tf.no_gradient("MyOp")
    """
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
