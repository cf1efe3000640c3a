"""Math rows of the op table: elementwise functions, comparisons, reductions, clipping, casts.

A row is the JAX function made an op with ``defop`` (a hand-written ``vjp`` only where
TensorFlow's gradient differs from JAX's, or for numerics), its TensorFlow signature where
TensorFlow's arguments need normalising, and ``export``: where TensorFlow publishes it.
"""
import builtins
import collections
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .. import errors as errors
from .._core.tensor import Tensor, _TensorBase, _python_default_dtype, to_array
from .._core.basic import identity, negative
from .._core.engine import allows_dtypes, shares_dtype
from .._core.indexed_slices import IndexedSlices
from ..extend import defop
from . import bounds, eigen_math, eigen_reduce, kinks, normalize
from .namespaces import export

export("identity")(identity)
export("negative", "math.negative")(negative)

# ---------------------------------------------------------------- elementwise unary
# Where JAX's derivative differs from TensorFlow's at a kink or a singular point, TensorFlow's
# rule is kept (its math_grad.py): abs, maximum, minimum and clip_by_value in ``kinks``; floor,
# ceil, round and floordiv have no gradient (None; JAX: zeros); pow's gradient in its exponent
# is 0 where the base is not positive, xlogy's in x is 0 where x is 0 (JAX: nan). Complex
# inputs keep JAX's rule.


def _pow_vjp(ans, x, y):
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        return lambda g: jax.vjp(jnp.power, x, y)[1](g)
    log_x = jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1)), 0)
    return lambda g: (g * y * jnp.power(x, y - 1), g * ans * log_x)


def _xlogy_vjp(ans, x, y):
    return lambda g: (g * jax.scipy.special.xlogy((x != 0).astype(x.dtype), y),
                      g * jnp.where(x == 0, 0, x / jnp.where(x == 0, 1, y)))


def _no_gradient(ans, *xs):
    return lambda g: (None,) * len(xs)


abs = export("abs", "math.abs")(defop(kinks.abs, name="abs"))  # noqa: A001
sign = export("sign", "math.sign")(defop(jnp.sign, name="sign"))
exp = export("exp", "math.exp")(defop(eigen_math.exp, name="exp", vjp=lambda ans, x: lambda g: eigen_math.exp_grad(ans, g)))
expm1 = export("math.expm1")(defop(eigen_math.expm1, name="expm1",   # TF's gradient: g * exp(x)
                                    vjp=lambda ans, x: lambda g: eigen_math.exp_grad(eigen_math.exp(x), g)))
log = export("math.log")(defop(eigen_math.log, name="log"))   # gradient: JAX's g / x (TF: g * rcpps-based reciprocal)
log1p = export("math.log1p")(defop(eigen_math.log1p, name="log1p"))
sqrt = export("sqrt", "math.sqrt")(defop(jnp.sqrt, name="sqrt"))
rsqrt = export("math.rsqrt")(defop(jax.lax.rsqrt, name="rsqrt"))
square = export("square", "math.square")(defop(jnp.square, name="square"))
reciprocal = export("math.reciprocal")(defop(jnp.reciprocal, name="reciprocal"))
floor = export("math.floor")(defop(jnp.floor, name="floor", vjp=_no_gradient))
ceil = export("math.ceil")(defop(jnp.ceil, name="ceil", vjp=_no_gradient))
round = export("math.round")(defop(jnp.round, name="round", vjp=_no_gradient))  # noqa: A001
sin = export("sin", "math.sin")(defop(jnp.sin, name="sin"))
cos = export("cos", "math.cos")(defop(jnp.cos, name="cos"))
tan = export("tan", "math.tan")(defop(jnp.tan, name="tan"))
asin = export("math.asin")(defop(jnp.arcsin, name="asin"))
acos = export("math.acos")(defop(jnp.arccos, name="acos"))
atan = export("math.atan")(defop(jnp.arctan, name="atan"))
sinh = export("math.sinh")(defop(jnp.sinh, name="sinh"))
cosh = export("math.cosh")(defop(jnp.cosh, name="cosh"))
tanh = export("tanh", "math.tanh", "nn.tanh")(
    defop(eigen_math.tanh, name="tanh", vjp=lambda ans, x: lambda g: eigen_math.tanh_grad(ans, g)))
asinh = export("math.asinh")(defop(jnp.arcsinh, name="asinh"))
acosh = export("math.acosh")(defop(jnp.arccosh, name="acosh"))
atanh = export("math.atanh")(defop(jnp.arctanh, name="atanh"))
sigmoid = export("sigmoid", "math.sigmoid", "nn.sigmoid")(
    defop(eigen_math.logistic, name="sigmoid", vjp=lambda ans, x: lambda g: eigen_math.sigmoid_grad(ans, g)))
# TF's Softplus kernel (exp, log1p per packet / glibc on the tail) and gradient g * sigmoid(x);
# log_sigmoid is TF's -softplus(-x).
softplus = export("math.softplus", "nn.softplus")(
    defop(eigen_math.softplus, name="softplus", vjp=lambda ans, x: lambda g: eigen_math.softplus_grad(x, g)))
softsign = export("math.softsign", "nn.softsign")(defop(jax.nn.soft_sign, name="softsign"))
log_sigmoid = export("math.log_sigmoid")(defop(lambda x: -eigen_math.softplus(-x), name="log_sigmoid",
                                                vjp=lambda ans, x: lambda g: -eigen_math.softplus_grad(-x, -g)))
erf = export("math.erf")(defop(jax.scipy.special.erf, name="erf"))
erfc = export("math.erfc")(defop(jax.scipy.special.erfc, name="erfc"))
lgamma = export("math.lgamma")(defop(jax.scipy.special.gammaln, name="lgamma"))
digamma = export("math.digamma")(defop(jax.scipy.special.digamma, name="digamma"))
is_nan = export("math.is_nan")(defop(jnp.isnan, name="is_nan"))
is_inf = export("math.is_inf")(defop(jnp.isinf, name="is_inf"))
is_finite = export("math.is_finite")(defop(jnp.isfinite, name="is_finite"))
logical_not = export("logical_not", "math.logical_not")(defop(jnp.logical_not, name="logical_not"))
invert = defop(jnp.invert, name="invert")

# ---------------------------------------------------------------- elementwise binary
add = export("add", "math.add")(defop(jnp.add, name="add"))
subtract = export("subtract", "math.subtract")(defop(jnp.subtract, name="subtract"))
multiply = export("multiply", "math.multiply")(defop(jnp.multiply, name="multiply"))
divide = truediv = export("divide", "truediv", "math.divide", "math.truediv")(
    defop(lambda x, y: _truediv(x, y), name="truediv"))
floordiv = export("floordiv", "math.floordiv")(defop(jnp.floor_divide, name="floordiv", vjp=_no_gradient))
floormod = mod = export("math.floormod", "math.mod")(defop(jnp.mod, name="floormod"))
floordiv.check, floormod.check = bounds.divisor("FloorDiv"), bounds.divisor("FloorMod")   # integer division by zero
pow = export("pow", "math.pow")(defop(jnp.power, name="pow", vjp=_pow_vjp))  # noqa: A001
atan2 = export("math.atan2")(defop(jnp.arctan2, name="atan2"))
squared_difference = export("math.squared_difference")(
    defop(lambda x, y: jnp.square(x - y), name="squared_difference"))
divide_no_nan = export("math.divide_no_nan")(
    defop(lambda x, y: jnp.where(y == 0, 0.0, x / jnp.where(y == 0, 1, y)), name="divide_no_nan"))
multiply_no_nan = export("math.multiply_no_nan")(
    defop(lambda x, y: jnp.where(y == 0, 0.0, x * y), name="multiply_no_nan"))
xlogy = export("math.xlogy")(defop(jax.scipy.special.xlogy, name="xlogy", vjp=_xlogy_vjp))
# TensorFlow sends the whole gradient of a tie to x (x >= y), JAX splits it: keep TF's rule.
maximum = export("maximum", "math.maximum")(
    defop(jnp.maximum, name="maximum", vjp=lambda ans, x, y: lambda g: (g * (x >= y), g * (x < y))))
minimum = export("minimum", "math.minimum")(
    defop(jnp.minimum, name="minimum", vjp=lambda ans, x, y: lambda g: (g * (x <= y), g * (x > y))))
equal = export("equal", "math.equal")(defop(jnp.equal, name="equal"))
not_equal = export("not_equal", "math.not_equal")(defop(jnp.not_equal, name="not_equal"))
less = export("less", "math.less")(defop(jnp.less, name="less"))
less_equal = export("less_equal", "math.less_equal")(defop(jnp.less_equal, name="less_equal"))
greater = export("greater", "math.greater")(defop(jnp.greater, name="greater"))
greater_equal = export("greater_equal", "math.greater_equal")(defop(jnp.greater_equal, name="greater_equal"))
logical_and = export("logical_and", "math.logical_and")(defop(jnp.logical_and, name="logical_and"))
logical_or = export("logical_or", "math.logical_or")(defop(jnp.logical_or, name="logical_or"))
logical_xor = export("math.logical_xor")(defop(jnp.logical_xor, name="logical_xor"))
bitwise_and = defop(jnp.bitwise_and, name="bitwise_and")
bitwise_or = defop(jnp.bitwise_or, name="bitwise_or")
bitwise_xor = defop(jnp.bitwise_xor, name="bitwise_xor")
select = defop(jnp.where, name="select")
clip_by_value = export("clip_by_value")(defop(kinks.clip, name="clip_by_value"))

# The dtypes TensorFlow's kernels take: floating ops refuse integers (tf.exp(1) raises in TF).
_FLOATING = ("bfloat16", "half", "float", "double")
for _op, _tf_op in [(exp, "Exp"), (expm1, "Expm1"), (log, "Log"), (log1p, "Log1p"), (sqrt, "Sqrt"),
                    (rsqrt, "Rsqrt"), (sin, "Sin"), (cos, "Cos"), (tan, "Tan"), (asin, "Asin"), (acos, "Acos"),
                    (atan, "Atan"), (sinh, "Sinh"), (cosh, "Cosh"), (tanh, "Tanh"), (asinh, "Asinh"),
                    (acosh, "Acosh"), (atanh, "Atanh"), (sigmoid, "Sigmoid")]:
    allows_dtypes(_op, _tf_op, _FLOATING + ("complex64", "complex128"))
for _op, _tf_op in [(erf, "Erf"), (erfc, "Erfc"), (lgamma, "Lgamma"), (digamma, "Digamma"), (floor, "Floor"),
                    (ceil, "Ceil"), (is_nan, "IsNan")]:
    allows_dtypes(_op, _tf_op, _FLOATING)
allows_dtypes(softplus, "Softplus", ("half", "bfloat16", "float", "double"))

# TensorFlow's type attribute T: the inputs share one dtype (no promotion; a list or NumPy
# operand is converted to the others' dtype). TF's messages: ops/messages.py.
for _op in (add, subtract, multiply, truediv, floordiv, floormod, pow, atan2, squared_difference,
            divide_no_nan, multiply_no_nan, xlogy, maximum, minimum, equal, not_equal, less, less_equal,
            greater, greater_equal, logical_and, logical_or, logical_xor, clip_by_value):
    shares_dtype(_op)
shares_dtype(select, inputs=(1, 2))


@export("where")
def where(condition, x=None, y=None, name=None):
    """Elementwise ``x if condition else y``; with only ``condition``, the indices of True values."""
    if x is None and y is None:
        return Tensor(jnp.argwhere(to_array(condition)).astype(normalize.INDEX))
    if not isinstance(x, _TensorBase) and not isinstance(y, _TensorBase):
        # Python values: TF's default dtypes (int32, float32), not JAX's 64-bit ones
        x, y = _python_default_dtype(x), _python_default_dtype(y)
    return select(condition, x, y)


# ---------------------------------------------------------------- reductions
def _reduction(name, reduce, *paths):
    """A reduction row: the op ``reduce(x, axis, keepdims)`` and TF's signature over it
    (``fn.op`` is the op: what dispatch on RaggedTensor arguments sees)."""
    op = defop(lambda x, axis=None, keepdims=False: reduce(x, axis=axis, keepdims=keepdims),
               name=name, static=("axis", "keepdims"))

    def reduction(input_tensor, axis=None, keepdims=False, name=None):
        return op(input_tensor, axis=normalize.axis(axis), keepdims=bool(keepdims))

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = (f"``tf.math.{name}(input_tensor, axis=None, keepdims=False)``: reduces "
                         f"over ``axis`` (all axes if None), keeping them as size 1 if ``keepdims``.")
    reduction.op = op
    return export(*paths)(reduction)


def _same_dtype(f):
    """jnp.sum/prod widen small ints; TensorFlow keeps the input's dtype (bool sums count)."""
    return lambda x, **kw: f(x, dtype=None if x.dtype == np.bool_ else x.dtype, **kw)


def _sum(x, axis=None, keepdims=False):
    """TensorFlow's float32/float64 sums add in Eigen's order (ops/eigen_reduce.py)."""
    if eigen_reduce.applies(x):
        return eigen_reduce.reduce_sum(x, axis, keepdims)
    return _same_dtype(jnp.sum)(x, axis=axis, keepdims=keepdims)


def _mean(x, axis, keepdims):
    axes = builtins.range(x.ndim) if axis is None else np.atleast_1d(axis)
    if eigen_reduce.applies(x):
        return eigen_reduce.reduce_mean(x, axis, keepdims)
    if x.dtype.kind not in "iu":
        if x.dtype.itemsize < 4:    # float16, bfloat16: accumulated in float32, as JAX does
            return jnp.mean(x, axis=axis, keepdims=keepdims)
        # TensorFlow's mean is the sum divided by the count, with IEEE division (_truediv). The
        # count may be symbolic (a tf.function traced for unknown sizes).
        n = math.prod([x.shape[a] for a in axes])
        return _truediv(jnp.sum(x, axis=axis, keepdims=keepdims), jnp.asarray(n, x.dtype))
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    # TensorFlow's integer mean stays integer: the sum divided with C's truncation.
    return jax.lax.div(jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype), jnp.asarray(max(n, 1), x.dtype))


reduce_sum = _reduction("reduce_sum", _sum, "reduce_sum", "math.reduce_sum")
reduce_mean = _reduction("reduce_mean", _mean, "reduce_mean", "math.reduce_mean")
reduce_max = _reduction("reduce_max", jnp.max, "reduce_max", "math.reduce_max")
reduce_min = _reduction("reduce_min", jnp.min, "reduce_min", "math.reduce_min")
reduce_prod = _reduction("reduce_prod", _same_dtype(jnp.prod), "reduce_prod", "math.reduce_prod")
reduce_std = _reduction("reduce_std", lambda x, axis, keepdims: jnp.sqrt(_variance(x, axis, keepdims))
                        if eigen_reduce.applies(x) else jnp.std(x, axis=axis, keepdims=keepdims), "math.reduce_std")
reduce_variance = _reduction("reduce_variance", lambda x, axis, keepdims: _variance(x, axis, keepdims),
                             "math.reduce_variance")


def _variance(x, axis, keepdims):
    """TensorFlow's ``reduce_variance``: ``reduce_mean(square(x - reduce_mean(x, keepdims=True)))``."""
    if not eigen_reduce.applies(x):
        return jnp.var(x, axis=axis, keepdims=keepdims)
    return eigen_reduce.reduce_variance(x, axis, keepdims)
reduce_logsumexp = _reduction("reduce_logsumexp", jax.nn.logsumexp, "reduce_logsumexp", "math.reduce_logsumexp")
reduce_all = _reduction("reduce_all", jnp.all, "reduce_all", "math.reduce_all")
reduce_any = _reduction("reduce_any", jnp.any, "reduce_any", "math.reduce_any")
count_nonzero = export("math.count_nonzero")(defop(
    lambda x, axis=None, keepdims=False: jnp.count_nonzero(x, axis=axis, keepdims=keepdims).astype(normalize.INDEX),
    name="count_nonzero", static=("axis", "keepdims")))


def _cum(f, unit):
    """TF's cumsum/cumprod: ``exclusive`` shifts in the unit, ``reverse`` runs from the end."""
    def cum(x, axis=0, exclusive=False, reverse=False):
        if reverse:
            x = jnp.flip(x, axis)
        if exclusive:
            pad = [(0, 0)] * x.ndim
            pad[axis] = (1, 0)
            x = jnp.pad(x, pad, constant_values=unit)
            x = jax.lax.slice_in_dim(x, 0, x.shape[axis] - 1, axis=axis)
        r = f(x, axis=axis, dtype=x.dtype)  # TF keeps the dtype (numpy widens int32)
        return jnp.flip(r, axis) if reverse else r
    cum.__doc__ = (f"The cumulative {'sum' if unit == 0 else 'product'} along ``axis`` (``tf.math.{f.__name__}``); "
                   f"``exclusive`` starts from {unit}, ``reverse`` runs from the end.")
    return cum


_CUM_STATIC = ("axis", "exclusive", "reverse")
cumsum = export("cumsum", "math.cumsum")(defop(_cum(jnp.cumsum, 0), name="cumsum", static=_CUM_STATIC))
cumprod = export("cumprod", "math.cumprod")(defop(_cum(jnp.cumprod, 1), name="cumprod", static=_CUM_STATIC))

_argmax = defop(lambda x, axis=0, output_type=np.int32: jnp.argmax(x, axis=axis).astype(output_type),
                name="argmax", static=("axis", "output_type"))
_argmin = defop(lambda x, axis=0, output_type=np.int32: jnp.argmin(x, axis=axis).astype(output_type),
                name="argmin", static=("axis", "output_type"))


@export("argmax", "math.argmax")
def argmax(input, axis=None, output_type=_dtypes.int64, name=None):
    """Index of the largest value (int32 unless JAX's 64-bit mode is on)."""
    return _argmax(input, axis=0 if axis is None else int(axis), output_type=normalize.int_type(output_type))


@export("argmin", "math.argmin")
def argmin(input, axis=None, output_type=_dtypes.int64, name=None):
    """Index of the smallest value (int32 unless JAX's 64-bit mode is on)."""
    return _argmin(input, axis=0 if axis is None else int(axis), output_type=normalize.int_type(output_type))


_add_n = defop(lambda *xs: builtins.sum(xs[1:], xs[0]), name="add_n")
shares_dtype(_add_n)


@export("add_n", "math.add_n")
def add_n(inputs, name=None):
    """Elementwise sum of a list of tensors (``tf.add_n``); each converted on its own, as in
    TensorFlow, so they must share one dtype."""
    return _add_n(*[x if isinstance(x, _TensorBase) else Tensor(to_array(x)) for x in inputs])


_top_k = defop(lambda x, k: jax.lax.top_k(x, k), name="top_k", static=("k",))


# TensorFlow's generated ops return named tuples: print(tf.math.top_k(x)) shows
# TopKV2(values=..., indices=...).
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


@export("math.top_k", "nn.top_k")
def top_k(input, k=1, sorted=True, index_type=_dtypes.int32, name=None):
    """The ``k`` largest values of the last axis and their indices (``tf.math.top_k``).

    Returns:
        ``TopKV2(values, indices)``, a named tuple as TensorFlow's.

    Example:
        >>> import tapejax as tf
        >>> tf.math.top_k(tf.constant([3.0, 1.0, 2.0]), 2).indices.numpy().tolist()
        [0, 2]
    """
    index_type = _dtypes.as_dtype(index_type)
    if index_type.name not in ("int16", "int32", "int64"):
        raise errors.InvalidArgumentError(None, None, f"Value for attr 'index_type' of {index_type.name} is not in the "
                                                      "list of allowed values: int16, int32, int64")
    values, indices = _top_k(input, k=int(k))
    return TopKV2(values, indices if index_type == _dtypes.int32 else cast(indices, index_type))


l2_normalize = export("math.l2_normalize", "nn.l2_normalize", "linalg.l2_normalize")(defop(
    lambda x, axis=None, epsilon=1e-12: x * jax.lax.rsqrt(jnp.maximum(jnp.sum(x * x, axis=axis, keepdims=True), epsilon)),
    name="l2_normalize", static=("axis", "epsilon")))

_allclose = defop(lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: jnp.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan),
                  name="allclose", static=("rtol", "atol", "equal_nan"))


@export("experimental.numpy.allclose")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _allclose(a, b, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


def _truediv(x, y):
    kinds = {jnp.result_type(x).kind, jnp.result_type(y).kind}
    if kinds <= {"i", "u"}:
        # TF divides integers in floating point: float32 up to 16 bits, float64 beyond.
        wide = jnp.result_type(x, y).itemsize > 2  # a Python int takes the tensor's width
        dt = np.float64 if wide and jax.config.jax_enable_x64 else np.float32
        return jnp.true_divide(jnp.asarray(x, dt), jnp.asarray(y, dt))
    return jnp.true_divide(x, _ieee_divisor(y, x))


def _ieee_divisor(y, x):
    """The divisor ``y`` broadcast to the quotient's shape where it has fewer elements, behind an
    optimization barrier: XLA rewrites ``x / broadcast(y)`` into ``x * broadcast(1 / y)``, which
    rounds differently from TensorFlow's division (IEEE, correctly rounded: ``x / 255.0`` differed
    in the last bit for 7 values in 10 on a CPU)."""
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
    if jnp.shape(y) == shape or jnp.result_type(x, y).kind not in "fc":
        return y
    return jax.lax.optimization_barrier(jnp.broadcast_to(jnp.asarray(y, jnp.result_type(x, y)), shape))


# ---------------------------------------------------------------- clipping and norms
def _clip_by_norm_fn(t, clip_norm, axes=None):
    l2sum = jnp.sum(t * t, axis=axes, keepdims=True)
    pred = l2sum > 0
    l2norm = jnp.where(pred, jnp.sqrt(jnp.where(pred, l2sum, 1.0)), l2sum)
    return t * clip_norm / kinks.maximum(l2norm, clip_norm)


_clip_by_norm = defop(_clip_by_norm_fn, name="clip_by_norm", static=("axes",))


@export("clip_by_norm")
def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Scales ``t`` so its L2 norm is at most ``clip_norm`` (TF's formula and gradient).

    Example:
        >>> import tapejax as tf
        >>> tf.clip_by_norm(tf.constant([3.0, 4.0]), 1.0).numpy()
        array([0.6, 0.8], dtype=float32)
    """
    if isinstance(t, IndexedSlices):  # TensorFlow clips the slices by their own norm
        return IndexedSlices(_clip_by_norm(t.values, clip_norm, axes=normalize.axis(axes)), t.indices, t.dense_shape)
    return _clip_by_norm(t, clip_norm, axes=normalize.axis(axes))


@export("clip_by_global_norm")
def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales a list of tensors so their global L2 norm is at most ``clip_norm``; returns (list, norm)."""
    gn = use_norm if use_norm is not None else global_norm([t for t in t_list if t is not None])
    scale = clip_norm * minimum(1.0 / gn, 1.0 / clip_norm)
    return [None if t is None else _scaled(t, scale) for t in t_list], gn


def _scaled(t, scale):
    if isinstance(t, IndexedSlices):
        return IndexedSlices(t.values * scale, t.indices, t.dense_shape)
    return t * scale


@export("linalg.global_norm")
def global_norm(t_list, name=None):
    """The L2 norm of all tensors of a list together (``tf.linalg.global_norm``)."""
    # IndexedSlices count by their slices, duplicates included, as in TensorFlow.
    return sqrt(add_n([reduce_sum(square(t.values if isinstance(t, IndexedSlices) else t))
                       for t in t_list if t is not None]))


# ---------------------------------------------------------------- casts
def _cast_fn(x, dtype):
    """``x.astype(dtype)``, converting floats to integers as TensorFlow's CPU kernel does (x86's
    truncating conversion: NaN and values out of range give the most negative 32-bit integer,
    or 64-bit for 64-bit and unsigned 32-bit results, and narrower integers keep its low
    bits), where XLA saturates. Off a CPU, TensorFlow's GPU kernels saturate as XLA does."""
    d = np.dtype(dtype)
    if d.kind not in "iu" or not jnp.issubdtype(x.dtype, jnp.floating) or jax.default_backend() != "cpu":
        return x.astype(d)
    wide = np.dtype(np.int64) if d.itemsize == 8 or d == np.uint32 else np.dtype(np.int32)
    limit = float(2 ** (8 * wide.itemsize - 1))
    bad = jnp.isnan(x) | (x >= limit) | (x < -limit)
    i = jnp.where(bad, jnp.iinfo(wide).min, jnp.where(bad, jnp.zeros((), x.dtype), x).astype(wide))
    return i.astype(d)


_cast = defop(_cast_fn, name="cast", static=("dtype",))


@export("cast", "dtypes.cast")
def cast(x, dtype, name=None):
    """Casts to ``dtype``; casting to an integer type cuts the gradient (``None``), as in TF.

    Strings do not cast (TensorFlow's ``UnimplementedError``): parse them with
    ``tf.strings.to_number``, format numbers with ``tf.strings.as_string``.
    """
    dt = _dtypes.np_dtype(dtype)
    v = x._value if isinstance(x, _TensorBase) else None
    if dt == object or (v is not None and v.dtype == object):
        if v is not None and v.dtype == dt:
            return identity(x)
        frm = _dtypes.c_name(x.dtype if v is not None else Tensor(to_array(x)).dtype)
        raise errors.UnimplementedError(None, None, (
            f"Cast {frm} to {_dtypes.c_name(dt)} is not supported [Op:Cast]: "
            + ("parse strings with tf.strings.to_number." if frm == "string" else
               "format numbers as strings with tf.strings.as_string.")))
    return _cast(x, dtype=dt)
