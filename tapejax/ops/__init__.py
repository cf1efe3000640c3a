"""The op table: TensorFlow-named ops, one line each, over JAX.

Every op is a pure JAX function made into a tape op with ``defop``. A rule is
hand-written only where TensorFlow's gradient differs from JAX's (ties in
maximum/minimum) or for numerics; tests check each rule against JAX.
"""
import builtins
from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes, host as _host, state as _state
from .. import errors
from .._core.engine import freeze
from .._core.tensor import (
    HostValue, Tensor, _TensorBase, to_array, is_tracer, from_numpy, _python_default_dtype, string_array,
)
from ..extend import defop
from .._core.engine import note_barrier, known_value
from .._core.variable import Variable
from .._core.basic import (  # the core's own ops, rows of this table too
    identity, negative, reshape, transpose as _transpose, concat as _concat, stack as _stack, packed,
)

_f32 = np.float32
# TensorFlow's index dtype (argmax, where, count_nonzero): int64, when JAX can hold it.
_INDEX = np.int64 if jax.config.jax_enable_x64 else np.int32


def _axis(axis):
    return None if axis is None else (tuple(axis) if isinstance(axis, (list, tuple)) else axis)


# ---------------------------------------------------------------- elementwise unary
abs = defop(jnp.abs, name="abs")  # noqa: A001
sign = defop(jnp.sign, name="sign")
exp = defop(jnp.exp, name="exp", vjp=lambda ans, x: lambda g: g * ans)
expm1 = defop(jnp.expm1, name="expm1")
log = defop(jnp.log, name="log")
log1p = defop(jnp.log1p, name="log1p")
sqrt = defop(jnp.sqrt, name="sqrt")
rsqrt = defop(jax.lax.rsqrt, name="rsqrt")
square = defop(jnp.square, name="square")
reciprocal = defop(jnp.reciprocal, name="reciprocal")
floor = defop(jnp.floor, name="floor")
ceil = defop(jnp.ceil, name="ceil")
round = defop(jnp.round, name="round")  # noqa: A001
sin = defop(jnp.sin, name="sin")
cos = defop(jnp.cos, name="cos")
tan = defop(jnp.tan, name="tan")
asin = defop(jnp.arcsin, name="asin")
acos = defop(jnp.arccos, name="acos")
atan = defop(jnp.arctan, name="atan")
sinh = defop(jnp.sinh, name="sinh")
cosh = defop(jnp.cosh, name="cosh")
tanh = defop(jnp.tanh, name="tanh", vjp=lambda ans, x: lambda g: g * (1 - ans * ans))
asinh = defop(jnp.arcsinh, name="asinh")
acosh = defop(jnp.arccosh, name="acosh")
atanh = defop(jnp.arctanh, name="atanh")
sigmoid = defop(jax.nn.sigmoid, name="sigmoid", vjp=lambda ans, x: lambda g: g * ans * (1 - ans))
# JAX differentiates logaddexp(x, 0) as exp(x - ans): ~1e-6 off in float32 for large x
# (TF prints 0.9999546 for softplus'(10)); sigmoid(x) is exact.
softplus = defop(jax.nn.softplus, name="softplus", vjp=lambda ans, x: lambda g: g * jax.nn.sigmoid(x))
softsign = defop(jax.nn.soft_sign, name="softsign")
log_sigmoid = defop(jax.nn.log_sigmoid, name="log_sigmoid")
erf = defop(jax.scipy.special.erf, name="erf")
erfc = defop(jax.scipy.special.erfc, name="erfc")
lgamma = defop(jax.scipy.special.gammaln, name="lgamma")
digamma = defop(jax.scipy.special.digamma, name="digamma")
is_nan = defop(jnp.isnan, name="is_nan")
is_inf = defop(jnp.isinf, name="is_inf")
is_finite = defop(jnp.isfinite, name="is_finite")
logical_not = defop(jnp.logical_not, name="logical_not")
relu = defop(jax.nn.relu, name="relu")
relu6 = defop(jax.nn.relu6, name="relu6")
elu = defop(jax.nn.elu, name="elu")
selu = defop(jax.nn.selu, name="selu")
silu = swish = defop(jax.nn.silu, name="silu")
gelu = defop(lambda x, approximate=False: jax.nn.gelu(x, approximate=approximate), name="gelu", static=("approximate",))
leaky_relu = defop(lambda x, alpha=0.2: jnp.where(x > 0, x, x * alpha), name="leaky_relu", static=("alpha",))

# ---------------------------------------------------------------- elementwise binary
add = defop(jnp.add, name="add")
subtract = defop(jnp.subtract, name="subtract")
multiply = defop(jnp.multiply, name="multiply")
divide = truediv = defop(lambda x, y: _truediv(x, y), name="truediv")
floordiv = defop(jnp.floor_divide, name="floordiv")
floormod = mod = defop(jnp.mod, name="floormod")
pow = defop(jnp.power, name="pow")  # noqa: A001
atan2 = defop(jnp.arctan2, name="atan2")
squared_difference = defop(lambda x, y: jnp.square(x - y), name="squared_difference")
divide_no_nan = defop(lambda x, y: jnp.where(y == 0, 0.0, x / jnp.where(y == 0, 1, y)), name="divide_no_nan")
multiply_no_nan = defop(lambda x, y: jnp.where(y == 0, 0.0, x * y), name="multiply_no_nan")
xlogy = defop(jax.scipy.special.xlogy, name="xlogy")
# TensorFlow sends the whole gradient of a tie to x (x >= y), JAX splits it: keep TF's rule.
maximum = defop(jnp.maximum, name="maximum",
                vjp=lambda ans, x, y: lambda g: (g * (x >= y), g * (x < y)))
minimum = defop(jnp.minimum, name="minimum",
                vjp=lambda ans, x, y: lambda g: (g * (x <= y), g * (x > y)))
equal = defop(jnp.equal, name="equal")
not_equal = defop(jnp.not_equal, name="not_equal")
less = defop(jnp.less, name="less")
less_equal = defop(jnp.less_equal, name="less_equal")
greater = defop(jnp.greater, name="greater")
greater_equal = defop(jnp.greater_equal, name="greater_equal")
logical_and = defop(jnp.logical_and, name="logical_and")
logical_or = defop(jnp.logical_or, name="logical_or")
logical_xor = defop(jnp.logical_xor, name="logical_xor")
bitwise_and = defop(jnp.bitwise_and, name="bitwise_and")
bitwise_or = defop(jnp.bitwise_or, name="bitwise_or")
bitwise_xor = defop(jnp.bitwise_xor, name="bitwise_xor")
invert = defop(jnp.invert, name="invert")
where_op = defop(jnp.where, name="select")
clip_by_value = defop(lambda t, lo, hi: jnp.minimum(jnp.maximum(t, lo), hi), name="clip_by_value")

for _op in (add, subtract, multiply, truediv, floordiv, floormod, pow, atan2, squared_difference,
            divide_no_nan, multiply_no_nan, xlogy, maximum, minimum, equal, not_equal, less, less_equal,
            greater, greater_equal):
    _op.same_dtype = True  # TF converts a list or NumPy operand to the other inputs' dtype

# ---------------------------------------------------------------- reductions
reduce_sum = defop(lambda x, axis=None, keepdims=False: jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype if x.dtype != np.bool_ else None), name="reduce_sum", static=("axis", "keepdims"))
reduce_mean = defop(lambda x, axis=None, keepdims=False: _mean(x, axis, keepdims), name="reduce_mean", static=("axis", "keepdims"))
reduce_max = defop(lambda x, axis=None, keepdims=False: jnp.max(x, axis=axis, keepdims=keepdims), name="reduce_max", static=("axis", "keepdims"))
reduce_min = defop(lambda x, axis=None, keepdims=False: jnp.min(x, axis=axis, keepdims=keepdims), name="reduce_min", static=("axis", "keepdims"))
reduce_prod = defop(lambda x, axis=None, keepdims=False: jnp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype if x.dtype != np.bool_ else None), name="reduce_prod", static=("axis", "keepdims"))
reduce_std = defop(lambda x, axis=None, keepdims=False: jnp.std(x, axis=axis, keepdims=keepdims), name="reduce_std", static=("axis", "keepdims"))
reduce_variance = defop(lambda x, axis=None, keepdims=False: jnp.var(x, axis=axis, keepdims=keepdims), name="reduce_variance", static=("axis", "keepdims"))
reduce_logsumexp = defop(lambda x, axis=None, keepdims=False: jax.nn.logsumexp(x, axis=axis, keepdims=keepdims), name="reduce_logsumexp", static=("axis", "keepdims"))
reduce_all = defop(lambda x, axis=None, keepdims=False: jnp.all(x, axis=axis, keepdims=keepdims), name="reduce_all", static=("axis", "keepdims"))
reduce_any = defop(lambda x, axis=None, keepdims=False: jnp.any(x, axis=axis, keepdims=keepdims), name="reduce_any", static=("axis", "keepdims"))
count_nonzero = defop(lambda x, axis=None, keepdims=False: jnp.count_nonzero(x, axis=axis, keepdims=keepdims).astype(_INDEX), name="count_nonzero", static=("axis", "keepdims"))
cumsum = defop(lambda x, axis=0, exclusive=False, reverse=False: _cum(jnp.cumsum, x, axis, exclusive, reverse, 0), name="cumsum", static=("axis", "exclusive", "reverse"))
cumprod = defop(lambda x, axis=0, exclusive=False, reverse=False: _cum(jnp.cumprod, x, axis, exclusive, reverse, 1), name="cumprod", static=("axis", "exclusive", "reverse"))
_argmax = defop(lambda x, axis=0, output_type=np.int32: jnp.argmax(x, axis=axis).astype(output_type), name="argmax", static=("axis", "output_type"))
_argmin = defop(lambda x, axis=0, output_type=np.int32: jnp.argmin(x, axis=axis).astype(output_type), name="argmin", static=("axis", "output_type"))
_norm = defop(lambda x, ord="euclidean", axis=None, keepdims=False: _norm_fn(x, ord, axis, keepdims), name="norm", static=("ord", "axis", "keepdims"))

# ---------------------------------------------------------------- shapes and structure
squeeze = defop(lambda x, axis=None: jnp.squeeze(x, axis=axis), name="squeeze", static=("axis",))
expand_dims = defop(lambda x, axis: jnp.expand_dims(x, axis), name="expand_dims", static=("axis",))
tile = defop(lambda x, multiples: jnp.tile(x, multiples), name="tile", static=("multiples",))
broadcast_to = defop(lambda x, shape: jnp.broadcast_to(x, shape), name="broadcast_to", static=("shape",))
_pad = defop(lambda x, c, paddings, mode="CONSTANT": _pad_fn(x, c, paddings, mode), name="pad", static=("paddings", "mode"))
_unstack = defop(lambda x, axis=0: tuple(jnp.moveaxis(x, axis, 0)), name="unstack", static=("axis",))
_split = defop(lambda x, sections, axis=0: tuple(jnp.split(x, sections, axis=axis)), name="split", static=("sections", "axis"))
_add_n = defop(lambda *xs: builtins.sum(xs[1:], xs[0]), name="add_n")
_einsum = defop(lambda *xs, equation: jnp.einsum(equation, *xs), name="einsum", static=("equation",))
_matmul = defop(lambda a, b, transpose_a=False, transpose_b=False: jnp.matmul(jnp.swapaxes(a, -1, -2) if transpose_a else a, jnp.swapaxes(b, -1, -2) if transpose_b else b), name="matmul", static=("transpose_a", "transpose_b"))
_tensordot = defop(lambda a, b, axes: jnp.tensordot(a, b, axes), name="tensordot", static=("axes",))
_cast = defop(lambda x, dtype: x.astype(dtype), name="cast", static=("dtype",))
_gather = defop(lambda p, i, axis=0, batch_dims=0: _gather_fn(p, i, axis, batch_dims), name="gather", static=("axis", "batch_dims"))
_gather_nd = defop(lambda p, i: p[tuple(jnp.moveaxis(i, -1, 0))], name="gather_nd")
_one_hot = defop(lambda i, on, off, depth, axis=-1, dtype=np.float32: jnp.where(jax.nn.one_hot(i, depth, axis=axis, dtype=bool), on, off).astype(dtype), name="one_hot", static=("depth", "axis", "dtype"))
_getitem = defop(lambda x, *idx, spec: x[_decode_index(spec, idx)], name="getitem", static=("spec",))
_reverse = defop(lambda x, axis: jnp.flip(x, axis), name="reverse", static=("axis",))
_roll = defop(lambda x, shift, axis: jnp.roll(x, shift, axis), name="roll", static=("shift", "axis"))
_sort = defop(lambda x, axis=-1, direction="ASCENDING": jnp.sort(x, axis=axis) if direction == "ASCENDING" else -jnp.sort(-x, axis=axis), name="sort", static=("axis", "direction"))
_top_k = defop(lambda x, k: jax.lax.top_k(x, k), name="top_k", static=("k",))

# ---------------------------------------------------------------- linear algebra
_solve = defop(jnp.linalg.solve, name="solve")
inv = defop(jnp.linalg.inv, name="inv")
det = defop(jnp.linalg.det, name="det")
logdet = defop(lambda x: jnp.linalg.slogdet(x)[1], name="logdet")
cholesky = defop(jnp.linalg.cholesky, name="cholesky")
trace = defop(lambda x: jnp.trace(x, axis1=-2, axis2=-1), name="trace")
diag_part = defop(lambda x: jnp.diagonal(x, axis1=-2, axis2=-1), name="diag_part")
diag = defop(lambda x: x[..., :, None] * jnp.eye(x.shape[-1], dtype=x.dtype), name="diag")
matrix_transpose = defop(lambda x: jnp.swapaxes(x, -1, -2), name="matrix_transpose")
matvec = defop(lambda a, b: jnp.einsum("...ij,...j->...i", a, b), name="matvec")
l2_normalize = defop(lambda x, axis=None, epsilon=1e-12: x * jax.lax.rsqrt(jnp.maximum(jnp.sum(x * x, axis=axis, keepdims=True), epsilon)), name="l2_normalize", static=("axis", "epsilon"))

# ---------------------------------------------------------------- neural network
softmax = defop(lambda x, axis=-1: jax.nn.softmax(x, axis=axis), name="softmax", static=("axis",))
log_softmax = defop(lambda x, axis=-1: jax.nn.log_softmax(x, axis=axis), name="log_softmax", static=("axis",))
_sparse_xent = defop(lambda labels, logits: -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[..., None].astype(jnp.int32), axis=-1)[..., 0], name="sparse_softmax_cross_entropy_with_logits")
# TensorFlow's kernel gives d/dlogits = softmax(logits) - labels, exact only when the labels sum
# to one: with one class the loss is constant, yet TF's gradient is 1 - label. Keep TF's rule.
_xent = defop(lambda labels, logits, axis=-1: -jnp.sum(labels * jax.nn.log_softmax(logits, axis=axis), axis=axis), name="softmax_cross_entropy_with_logits", static=("axis",),
              vjp=lambda ans, labels, logits, axis=-1: lambda g: (jnp.expand_dims(g, axis) * -jax.nn.log_softmax(logits, axis=axis), jnp.expand_dims(g, axis) * (jax.nn.softmax(logits, axis=axis) - labels)))
_sigmoid_xent = defop(lambda labels, logits: jnp.maximum(logits, 0) - logits * labels + jnp.log1p(jnp.exp(-jnp.abs(logits))), name="sigmoid_cross_entropy_with_logits")
l2_loss = defop(lambda x: jnp.sum(x * x) / 2, name="l2_loss")
bias_add = defop(lambda x, b: x + b, name="bias_add")
_conv2d = defop(lambda x, w, strides, padding, dilations: jax.lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dilations, dimension_numbers=("NHWC", "HWIO", "NHWC")), name="conv2d", static=("strides", "padding", "dilations"))
_pool = defop(lambda x, kind, ksize, strides, padding: _pool_fn(x, kind, ksize, strides, padding), name="pool", static=("kind", "ksize", "strides", "padding"))
_moments = defop(lambda x, axes, keepdims=False: (jnp.mean(x, axis=axes, keepdims=keepdims), jnp.var(x, axis=axes, keepdims=keepdims)), name="moments", static=("axes", "keepdims"))
_allclose = defop(lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: jnp.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan), name="allclose", static=("rtol", "atol", "equal_nan"))


# ---------------------------------------------------------------- the ops on NumPy
# A string tensor holds a NumPy object array of bytes (JAX arrays hold numbers): these ops run
# on the host for it, through the engine's fallback (see _core.engine._host_apply). While tracing,
# they also fold shape arithmetic (tf.zeros(tf.shape(x)[0] * 2): see _engine._fold).
for _op, _numpy_fn in [
        (subtract, np.subtract), (multiply, np.multiply), (floordiv, np.floor_divide),
        (floormod, np.mod), (negative, np.negative), (maximum, np.maximum), (minimum, np.minimum),
        (_cast, lambda x, dtype: x.astype(dtype)),   # tf.cast refuses strings before this op
        (reduce_prod, lambda x, axis=None, keepdims=False: np.prod(x, axis=axis, keepdims=keepdims)),
        (identity, lambda x: x),
        (add, np.add),  # string concatenation, as tf.add does
        (equal, lambda x, y: np.asarray(x == y, bool)),
        (not_equal, lambda x, y: np.asarray(x != y, bool)),
        (where_op, np.where),
        (reshape, lambda x, shape: np.reshape(x, shape)),
        (_transpose, lambda x, perm=None: np.transpose(x, perm)),
        (squeeze, lambda x, axis=None: np.squeeze(x, axis=axis)),
        (expand_dims, lambda x, axis: np.expand_dims(x, axis)),
        (tile, lambda x, multiples: np.tile(x, multiples)),
        (broadcast_to, lambda x, shape: np.broadcast_to(x, shape)),
        (_concat, lambda *xs, axis: np.concatenate(xs, axis=axis)),
        (_stack, lambda *xs, axis=0: np.stack(xs, axis=axis)),
        (packed, lambda *xs, axis=0: np.stack(xs, axis=axis)),
        (_unstack, lambda x, axis=0: tuple(np.moveaxis(x, axis, 0))),
        (_split, lambda x, sections, axis=0: tuple(np.split(x, sections, axis=axis))),
        (_getitem, lambda x, *idx, spec: x[_decode_index(spec, idx)]),
        (_reverse, lambda x, axis: np.flip(x, axis)),
        (_roll, lambda x, shift, axis: np.roll(x, shift, axis)),
        (_gather, lambda p, i, axis=0, batch_dims=0: _gather_fn(p, i, axis, batch_dims, np)),
        (_gather_nd, lambda p, i: p[tuple(np.moveaxis(i, -1, 0))])]:
    _op.host = _numpy_fn


# ---------------------------------------------------------------- helpers of the table
def _cum(f, x, axis, exclusive, reverse, unit):
    if reverse:
        x = jnp.flip(x, axis)
    if exclusive:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        x = jnp.pad(x, pad, constant_values=unit)
        x = jax.lax.slice_in_dim(x, 0, x.shape[axis] - 1, axis=axis)
    r = f(x, axis=axis, dtype=x.dtype)  # TF keeps the dtype (numpy widens int32)
    return jnp.flip(r, axis) if reverse else r


def _truediv(x, y):
    kinds = {jnp.result_type(x).kind, jnp.result_type(y).kind}
    if kinds <= {"i", "u"}:
        # TF divides integers in floating point: float32 up to 16 bits, float64 beyond.
        wide = jnp.result_type(x, y).itemsize > 2  # a Python int takes the tensor's width
        dt = np.float64 if wide and jax.config.jax_enable_x64 else np.float32
        return jnp.true_divide(jnp.asarray(x, dt), jnp.asarray(y, dt))
    return jnp.true_divide(x, y)


def _mean(x, axis, keepdims):
    if x.dtype.kind not in "iu":
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    axes = builtins.range(x.ndim) if axis is None else np.atleast_1d(axis)
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    # TensorFlow's integer mean stays integer: the sum divided with C's truncation.
    return jax.lax.div(jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype), jnp.asarray(max(n, 1), x.dtype))


def _norm_fn(x, ord, axis, keepdims):
    if ord in ("euclidean", 2, 2.0, "fro") and (axis is None or isinstance(axis, int) or ord == "fro"):
        return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims))
    if ord in (1, 1.0) and (axis is None or isinstance(axis, int)):
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == np.inf and (axis is None or isinstance(axis, int)):
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims)
    return jnp.linalg.norm(x, ord=None if ord == "euclidean" else ord, axis=axis, keepdims=keepdims)


def _pad_fn(x, c, paddings, mode):
    mode = mode.upper()
    if mode == "CONSTANT":
        return jnp.pad(x, paddings, constant_values=c)
    return jnp.pad(x, paddings, mode={"REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode])


def _gather_fn(p, i, axis, batch_dims, xp=jnp):
    if batch_dims == 0:
        return xp.take(p, i, axis=axis)
    if xp is np:  # strings, on the host: one batch row at a time
        return np.stack([_gather_fn(pp, ii, axis - 1, batch_dims - 1, np) for pp, ii in zip(p, i)])
    f = lambda pp, ii: _gather_fn(pp, ii, axis - 1, batch_dims - 1)
    return jax.vmap(f)(p, i)


def _pool_fn(x, kind, ksize, strides, padding):
    window = (1,) + ksize + (1,)
    stride = (1,) + strides + (1,)
    if kind == "max":
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, stride, padding)
    s = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, stride, padding)
    if padding == "VALID":
        return s / np.prod(ksize)
    ones = jnp.ones(x.shape[1:-1], x.dtype)[None, ..., None]
    n = jax.lax.reduce_window(ones, 0.0, jax.lax.add, window, stride, padding)
    return s / n


def _encode_index(key):
    """Indexing spec as hashable static data; array indices become op inputs."""
    if not isinstance(key, tuple):
        key = (key,)
    spec, dyn = [], []
    for k in key:
        if isinstance(k, slice):
            spec.append(("s", freeze(k.start), freeze(k.stop), freeze(k.step)))
        elif k is None or k is Ellipsis:
            spec.append(("n",) if k is None else ("e",))
        elif isinstance(k, (bool, np.bool_)):
            spec.append(("i", bool(k)))
        elif isinstance(k, (int, np.integer)):
            spec.append(("i", int(k)))
        elif isinstance(k, _TensorBase) and k.ndim == 0 and not is_tracer(k._value) and k._value.dtype.kind in "iu":
            spec.append(("i", int(k)))
        else:
            spec.append(("d",))
            dyn.append(k)
    return tuple(spec), dyn


def _decode_index(spec, dyn):
    it = iter(dyn)
    out = []
    for s in spec:
        tag = s[0]
        if tag == "s":
            out.append(slice(s[1], s[2], s[3]))
        elif tag == "n":
            out.append(None)
        elif tag == "e":
            out.append(Ellipsis)
        elif tag == "i":
            out.append(s[1])
        else:
            out.append(next(it))
    return tuple(out)


def _static_dim(d):
    """A dimension as an int, or a symbolic dimension (a trace serving every size)."""
    if isinstance(d, _TensorBase):
        known = known_value(d)
        if known is None:
            return int(d)   # raises the explanatory error: the value is computed by the program
        d = known.item()
    return d if jax.export.is_symbolic_dim(d) else int(d)


def _static_shape(shape):
    if isinstance(shape, _TensorBase):
        known = known_value(shape)
        if known is None:
            np.asarray(shape)   # raises the explanatory error
        return tuple(_static_dim(d) for d in known.reshape(-1))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(-1 if d is None else _static_dim(d) for d in shape)


# ---------------------------------------------------------------- TF signatures
def getitem(x, key):
    if _is_bool_mask(key):
        return boolean_mask(x, key)
    spec, dyn = _encode_index(key)
    return _getitem(x, *dyn, spec=spec)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, name=None):
    """Matrix product of ``a`` and ``b`` (batched over leading dimensions).

    Example:
        >>> import tapejax as tf
        >>> tf.matmul([[1.0, 2.0]], [[3.0], [4.0]]).numpy()
        array([[11.]], dtype=float32)
    """
    return _matmul(a, b, transpose_a=bool(transpose_a or adjoint_a), transpose_b=bool(transpose_b or adjoint_b))


def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes dimensions by ``perm`` (reverses them by default) (``tf.transpose``)."""
    return _transpose(a, perm=None if perm is None else _static_shape(perm))


def einsum(equation, *inputs, **kwargs):
    """``tf.einsum(equation, *inputs)``.

    Example:
        >>> import tapejax as tf
        >>> tf.einsum('ij,j->i', [[1.0, 2.0]], [3.0, 4.0]).numpy()
        array([11.], dtype=float32)
    """
    return _einsum(*inputs, equation=equation)


def tensordot(a, b, axes, name=None):
    """Tensor contraction of ``a`` and ``b`` over ``axes`` (``tf.tensordot``)."""
    return _tensordot(a, b, axes=freeze(axes))


def concat(values, axis, name="concat"):
    """Joins tensors along an existing ``axis`` (``tf.concat``)."""
    return _concat(*values, axis=int(axis))


def stack(values, axis=0, name="stack"):
    """Stacks tensors along a new ``axis`` (``tf.stack``)."""
    return _stack(*values, axis=int(axis))


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits a tensor into a list along ``axis`` (``tf.unstack``)."""
    return list(_unstack(value, axis=int(axis)))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits a tensor into ``num_or_size_splits`` pieces along ``axis`` (``tf.split``)."""
    if isinstance(num_or_size_splits, (int, np.integer)):
        sections = int(num_or_size_splits)
    else:
        sizes = [int(s) for s in np.asarray(num_or_size_splits).reshape(-1)]
        sections = tuple(np.cumsum(sizes)[:-1].tolist())
    return list(_split(value, sections=sections, axis=int(axis)))


def add_n(inputs, name=None):
    """Elementwise sum of a list of tensors (``tf.add_n``)."""
    return _add_n(*inputs)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads a tensor; ``mode`` is 'CONSTANT', 'REFLECT' or 'SYMMETRIC' (``tf.pad``)."""
    return _pad(tensor, constant_values, paddings=freeze(np.asarray(paddings).tolist()), mode=mode)


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


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Gathers slices of ``params`` at ``indices`` along ``axis`` (``tf.gather``)."""
    _check_gather_bounds(params, indices, batch_dims if axis is None else int(axis))
    return _gather(params, indices, axis=batch_dims if axis is None else int(axis), batch_dims=int(batch_dims))


def _check_gather_bounds(params, indices, axis):
    """Eagerly, an out-of-range index raises as in TensorFlow (XLA would clamp it silently)."""
    p = params._value if isinstance(params, _TensorBase) else params
    i = indices._value if isinstance(indices, _TensorBase) else indices
    if is_tracer(p) or is_tracer(i) or not hasattr(p, "shape"):
        return
    i = np.asarray(i)
    if i.dtype.kind not in "iu" or not i.size:
        return
    n = p.shape[axis]
    bad = np.flatnonzero((i.reshape(-1) < 0) | (i.reshape(-1) >= n))
    if bad.size:
        k = int(bad[0])
        raise errors.InvalidArgumentError(None, None, f"indices[{k}] = {int(i.reshape(-1)[k])} is not in [0, {n})")


def gather_nd(params, indices, batch_dims=0, name=None):
    """Gathers slices of ``params`` at multi-dimensional ``indices`` (``tf.gather_nd``)."""
    return _gather_nd(params, indices)


def _masked_fn(x, idx, axis, k):
    merged = x.reshape(x.shape[:axis] + (-1,) + x.shape[axis + k:])
    return jnp.take(merged, idx, axis=axis)


_masked = defop(_masked_fn, name="boolean_mask", static=("axis", "k"))
_masked.host = lambda x, idx, axis, k: np.take(x.reshape(x.shape[:axis] + (-1,) + x.shape[axis + k:]), idx, axis=axis)


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The entries of ``tensor`` where the K-D boolean ``mask`` is True, over dimensions
    ``axis .. axis+K-1`` (``tf.boolean_mask``; also ``tensor[mask]``). Differentiable in ``tensor``.

    The result's size depends on the mask's values, so the mask must be concrete: inside a
    ``tf.function`` (one XLA program, static shapes) use ``tf.where(mask, tensor, 0)`` instead.

    Example:
        >>> import tapejax as tf
        >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> tf.boolean_mask(x, [True, False, True]).numpy()
        array([[1., 2.],
               [5., 6.]], dtype=float32)
        >>> x[x > 2.5].numpy()
        array([3., 4., 5., 6.], dtype=float32)
    """
    m = mask._value if isinstance(mask, _TensorBase) else mask
    if is_tracer(m):
        raise ValueError(
            "tf.boolean_mask (and tensor[bool_mask]) inside a tf.function: the result's shape depends on "
            "the mask's values, and a compiled program needs static shapes. Keep the shape with "
            "tf.where(mask, tensor, tf.zeros_like(tensor)), or mask outside the function.")
    m = np.asarray(m)
    if m.dtype != np.bool_:
        raise TypeError(f"boolean_mask needs a boolean mask, got dtype {m.dtype}.")
    x = tensor if isinstance(tensor, _TensorBase) else Tensor(to_array(tensor))
    shape = tuple(x.shape)
    axis = 0 if axis is None else int(axis)
    axis = axis + len(shape) if axis < 0 else axis
    k = m.ndim
    if k == 0 or shape[axis:axis + k] != m.shape:
        raise ValueError(f"boolean_mask: the mask's shape {m.shape} must equal the tensor's dimensions "
                         f"{axis}..{axis + k - 1}, which are {shape[axis:axis + k]} (tensor shape {shape}).")
    idx = np.flatnonzero(m.reshape(-1)).astype(np.int32)
    return _masked(x, Tensor(from_numpy(idx)), axis=axis, k=k)


def _is_bool_mask(key):
    if isinstance(key, _TensorBase):
        return key._value.dtype == np.bool_ and key.ndim > 0
    if isinstance(key, (np.ndarray, jax.Array)):
        return key.dtype == np.bool_ and key.ndim > 0
    if isinstance(key, list) and key:
        return all(isinstance(k, (bool, np.bool_)) for k in np.ravel(np.asarray(key, dtype=object)))
    return False


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encodes integer ``indices`` into ``depth`` classes (``tf.one_hot``)."""
    dt = _dtypes.np_dtype(dtype) if dtype is not None else (
        to_array(on_value).dtype if on_value is not None else np.dtype(np.float32))
    return _one_hot(indices, 1 if on_value is None else on_value, 0 if off_value is None else off_value,
                    depth=int(depth), axis=-1 if axis is None else int(axis), dtype=dt)


def where(condition, x=None, y=None, name=None):
    """Elementwise ``x if condition else y``; with only ``condition``, the indices of True values."""
    if x is None and y is None:
        return Tensor(jnp.argwhere(to_array(condition)).astype(_INDEX))
    return where_op(condition, x, y)


def argmax(input, axis=None, output_type=_dtypes.int64, name=None):
    """Index of the largest value (int32 unless JAX's 64-bit mode is on)."""
    return _argmax(input, axis=0 if axis is None else int(axis), output_type=_int_type(output_type))


def argmin(input, axis=None, output_type=_dtypes.int64, name=None):
    """Index of the smallest value (int32 unless JAX's 64-bit mode is on)."""
    return _argmin(input, axis=0 if axis is None else int(axis), output_type=_int_type(output_type))


def _int_type(dt):
    dt = _dtypes.np_dtype(dt)
    return dt if (jax.config.jax_enable_x64 or dt.itemsize <= 4) else np.dtype(np.int32)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector or matrix norm (``tf.norm``); 'euclidean' by default."""
    return _norm(tensor, ord=ord, axis=_axis(axis), keepdims=bool(keepdims))


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Scales ``t`` so its L2 norm is at most ``clip_norm`` (TF's formula and gradient).

    Example:
        >>> import tapejax as tf
        >>> tf.clip_by_norm(tf.constant([3.0, 4.0]), 1.0).numpy()
        array([0.6, 0.8], dtype=float32)
    """
    if isinstance(t, IndexedSlices):  # TensorFlow clips the slices by their own norm
        return IndexedSlices(_clip_by_norm(t.values, clip_norm, axes=_axis(axes)), t.indices, t.dense_shape)
    return _clip_by_norm(t, clip_norm, axes=_axis(axes))


def _clip_by_norm_fn(t, clip_norm, axes=None):
    l2sum = jnp.sum(t * t, axis=axes, keepdims=True)
    pred = l2sum > 0
    l2norm = jnp.where(pred, jnp.sqrt(jnp.where(pred, l2sum, 1.0)), l2sum)
    return t * clip_norm / jnp.maximum(l2norm, clip_norm)


_clip_by_norm = defop(_clip_by_norm_fn, name="clip_by_norm", static=("axes",))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales a list of tensors so their global L2 norm is at most ``clip_norm``; returns (list, norm)."""
    gn = use_norm if use_norm is not None else global_norm([t for t in t_list if t is not None])
    scale = clip_norm * minimum(1.0 / gn, 1.0 / clip_norm)
    return [None if t is None else _scaled(t, scale) for t in t_list], gn


def _scaled(t, scale):
    if isinstance(t, IndexedSlices):
        return IndexedSlices(t.values * scale, t.indices, t.dense_shape)
    return t * scale


def global_norm(t_list, name=None):
    """The L2 norm of all tensors of a list together (``tf.linalg.global_norm``)."""
    # IndexedSlices count by their slices, duplicates included, as in TensorFlow.
    return sqrt(add_n([reduce_sum(square(t.values if isinstance(t, IndexedSlices) else t))
                       for t in t_list if t is not None]))


def solve(matrix, rhs, adjoint=False, name=None):
    """Solves ``matrix @ x = rhs`` for ``x`` (``tf.linalg.solve``)."""
    return _solve(matrix_transpose(matrix) if adjoint else matrix, rhs)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-example cross-entropy of integer ``labels`` and unnormalised ``logits``."""
    return _sparse_xent(labels, logits)


def softmax_cross_entropy_with_logits(labels=None, logits=None, axis=-1, name=None):
    """Per-example cross-entropy of a label distribution and unnormalised ``logits``."""
    return _xent(labels, logits, axis=int(axis))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise logistic loss of ``labels`` in [0, 1] and ``logits``, computed stably."""
    return _sigmoid_xent(labels, logits)


def _tuple2(v, n=2):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(e) for e in v)
    if len(v) == n + 2:
        return v[1:-1]
    if len(v) == 1:
        return v * n
    return v


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution, NHWC input and HWIO filters (TF's layout), on ``lax.conv_general_dilated``."""
    if data_format != "NHWC":
        raise ValueError("tapejax's conv2d takes data_format='NHWC' (channels last). Transpose NCHW inputs "
                         "with tf.transpose(x, [0, 2, 3, 1]) first.")
    pad_ = padding.upper() if isinstance(padding, str) else tuple(tuple(p) for p in padding)[1:-1]
    return _conv2d(input, filters, strides=_tuple2(strides), padding=pad_,
                   dilations=_tuple2(1 if dilations is None else dilations))


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D max pooling of an NHWC tensor (``tf.nn.max_pool2d``)."""
    return _pool(input, kind="max", ksize=_tuple2(ksize), strides=_tuple2(strides), padding=padding.upper())


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D average pooling of an NHWC tensor (``tf.nn.avg_pool2d``)."""
    return _pool(input, kind="avg", ksize=_tuple2(ksize), strides=_tuple2(strides), padding=padding.upper())


max_pool = max_pool2d
avg_pool = avg_pool2d


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance of ``x`` over ``axes`` (``tf.nn.moments``)."""
    return _moments(x, axes=tuple(axes), keepdims=bool(keepdims))


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """Sum of per-example losses divided by the global batch size (tf.nn.compute_average_loss)."""
    if sample_weight is not None:
        per_example_loss = per_example_loss * sample_weight
    n = global_batch_size if global_batch_size is not None else (per_example_loss.shape[0] if per_example_loss.ndim else 1)
    return reduce_sum(per_example_loss) / float(n)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _allclose(a, b, rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


def stop_gradient(input, name=None):
    """Identity whose gradient is zero: values pass, gradients do not (``tf.stop_gradient``).

    Example:
        >>> import tapejax as tf
        >>> x = tf.Variable(2.0)
        >>> with tf.GradientTape() as t:
        ...     y = x * tf.stop_gradient(x)
        >>> print(t.gradient(y, x).numpy())
        2.0
    """
    # Not recorded: like TensorFlow, the tape sees a constant, so the gradient is None.
    note_barrier("stop_gradient", input)
    return Tensor(jax.lax.stop_gradient(to_array(input)))


def reverse(tensor, axis, name=None):
    """Reverses a tensor along the given axes (``tf.reverse``)."""
    return _reverse(tensor, axis=tuple(int(a) for a in np.atleast_1d(np.asarray(axis))))


def roll(input, shift, axis, name=None):
    """Rolls elements along ``axis`` by ``shift`` (``tf.roll``)."""
    return _roll(input, shift=freeze(shift), axis=freeze(axis))


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sorts along ``axis``, 'ASCENDING' or 'DESCENDING' (``tf.sort``)."""
    return _sort(values, axis=int(axis), direction=direction)


def top_k(input, k=1, sorted=True, name=None):
    """The ``k`` largest values of the last axis and their indices (``tf.math.top_k``)."""
    return _top_k(input, k=int(k))


# ---------------------------------------------------------------- constructors (no gradients)
def constant(value: Any, dtype: Any = None, shape: Optional[Sequence[int]] = None,
             name: Optional[str] = None) -> Tensor:
    """Creates a Tensor from a Python number, list, numpy array or tensor.

    Python floats become float32 and ints int32, as in TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> tf.constant([1, 2])
        <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
    """
    v = to_array(value, dtype)
    if shape is not None:
        shape = _static_shape(shape)
        v = (np if v.dtype == object else jnp).broadcast_to(v, shape) if v.size == 1 else v.reshape(shape)
    return Tensor(v)


def is_tensor(x):
    """Whether ``x`` is a Tensor or Variable (or a RaggedTensor / SparseTensor, TensorFlow's composite tensors)."""
    return isinstance(x, _TensorBase) or getattr(type(x), "_tf_composite", False)


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: Optional[str] = None) -> Tensor:
    """Returns ``value`` if it is a Tensor, else converts it (a Variable is read; an IndexedSlices is made dense)."""
    if isinstance(value, IndexedSlices):
        value = _dense_of(value)
    if type(value) is Tensor and (dtype is None or value.dtype == dtype):
        return value
    if isinstance(value, _TensorBase):
        return identity(value) if dtype is None else cast(value, dtype)
    if dtype is None and dtype_hint is not None and not isinstance(value, (np.ndarray, jax.Array)):
        try:
            return Tensor(to_array(value, dtype_hint))
        except (TypeError, ValueError):
            pass  # a hint only: the value's own dtype (text stays a string tensor)
    return Tensor(to_array(value, dtype))


def _empty_strings(shape):
    return Tensor(string_array(np.full(shape, b"", object)))


def zeros(shape, dtype=_dtypes.float32, name=None):
    """A tensor of zeros (float32 by default; empty strings for ``tf.string``)."""
    dt = _dtypes.np_dtype(dtype)
    if dt == object:
        return _empty_strings(_static_shape(shape))
    return Tensor(jnp.zeros(_static_shape(shape), dt))


def ones(shape, dtype=_dtypes.float32, name=None):
    """A tensor of ones (float32 by default)."""
    return Tensor(jnp.ones(_static_shape(shape), _dtypes.np_dtype(dtype)))


def zeros_like(input, dtype=None, name=None):
    """Zeros with the shape (and dtype, unless given) of ``input`` (empty strings for strings)."""
    v = to_array(input)
    if (v.dtype if dtype is None else _dtypes.np_dtype(dtype)) == object:
        return _empty_strings(v.shape)
    return Tensor(jnp.zeros_like(v, dtype=_dtypes.np_dtype(dtype)))


def ones_like(input, dtype=None, name=None):
    """Ones with the shape (and dtype, unless given) of ``input``."""
    v = to_array(input)
    if (v.dtype if dtype is None else _dtypes.np_dtype(dtype)) == object:
        raise errors.InvalidArgumentError(None, None, "Value for attr 'T' of string is not in the list of "
                                          "allowed values of OnesLike: strings have no one [Op:OnesLike]")
    return Tensor(jnp.ones_like(v, dtype=_dtypes.np_dtype(dtype)))


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value`` (a number or a string)."""
    v = to_array(value)
    if v.dtype == object:
        return Tensor(string_array(np.full(_static_shape(dims), v[()], object)))
    return Tensor(jnp.full(_static_shape(dims), v, v.dtype))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """An identity matrix (optionally batched), float32 by default."""
    e = jnp.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=_dtypes.np_dtype(dtype))
    if batch_shape is not None:
        e = jnp.broadcast_to(e, _static_shape(batch_shape) + e.shape)
    return Tensor(e)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (``tf.linspace``)."""
    s, e = to_array(start), to_array(stop)
    dt = jnp.result_type(s, e)
    if dt.kind in "iub":
        dt = np.dtype(np.float64 if jax.config.jax_enable_x64 else np.float32)  # TF: float64 for ints
    return Tensor(jnp.linspace(s, e, int(num), axis=axis, dtype=dt))


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """Like Python's range, as a Tensor (int32 for ints, float32 for floats)."""
    if limit is None:
        start, limit = 0, start
    # Python numbers stay Python numbers: inside a trace, to_array would stage them.
    vals = [v if isinstance(v, (int, float, np.number)) else to_array(v) for v in (start, limit, delta)]
    if dtype is None:
        # TF: int32 for Python ints, float32 for Python floats, else the tensors' dtype.
        dtype = jnp.result_type(*[_python_default_dtype(v) if isinstance(v, (int, float)) else v for v in vals])
    # A bound known while tracing (tf.shape(x)[0]) is used as TensorFlow's shape inference would.
    vals = [_static_dim(a) if isinstance(a, _TensorBase) and is_tracer(a._value) else np.asarray(v)
            for a, v in zip((start, limit, delta), vals)]
    return Tensor(jnp.arange(vals[0], vals[1], vals[2], dtype=_dtypes.np_dtype(dtype)))


def _per_call(v):
    """Whether ``v`` is strings whose shape is known only per call (made by string ops from a
    tf.function's string arguments, or an argument of unknown dimensions): their shape is then
    computed on the host for each call (see tapejax._host)."""
    return type(v) is HostValue and not v.known


def shape(input, out_type=_dtypes.int32, name=None):
    """The shape of ``input`` as an int32 tensor (``tf.shape``)."""
    v = to_array(input)
    if _per_call(v):
        return _host.call("tf.shape", shape, input, out_type)
    return _shape_value(v.shape, out_type)


def _shape_value(dims, out_type):
    """A tensor of dimensions (a tuple, or one), whose value is known while tracing (TensorFlow's
    shape inference): ``tf.zeros(tf.shape(x))`` needs it. Unknown dimensions are values of the
    program."""
    dt = _dtypes.np_dtype(out_type)
    if all(type(d) is int for d in (dims if isinstance(dims, tuple) else (dims,))):
        known = np.asarray(dims, dt)
        t = Tensor(jnp.asarray(known))
    else:
        known = np.asarray(dims, object)
        t = Tensor(jnp.array(dims, dt))
    if is_tracer(t._value):
        _state.set_known(t, known)
    return t


def size(input, out_type=_dtypes.int32, name=None):
    """The number of elements of ``input`` as a tensor (``tf.size``)."""
    v = to_array(input)
    if _per_call(v):
        return _host.call("tf.size", size, input, out_type)
    n = 1
    for d in v.shape:
        n = n * d
    return _shape_value(n, out_type)


def rank(input, name=None):
    """The number of dimensions of ``input`` as a tensor (``tf.rank``)."""
    return Tensor(jnp.asarray(to_array(input).ndim, jnp.int32))


def reshape_op(tensor, shape, name=None):
    """``tf.reshape``: ``shape`` may hold -1 and scalar tensors."""
    return reshape(tensor, shape=_static_shape(shape))


def expand_dims_op(input, axis, name=None):
    """Inserts a dimension of size 1 at ``axis`` (``tf.expand_dims``)."""
    return expand_dims(input, axis=int(axis))


def squeeze_op(input, axis=None, name=None):
    """Removes dimensions of size 1 (``tf.squeeze``)."""
    return squeeze(input, axis=_axis(axis))


def tile_op(input, multiples, name=None):
    """Repeats a tensor ``multiples`` times along each axis (``tf.tile``)."""
    return tile(input, multiples=_static_shape(multiples))


def broadcast_to_op(input, shape, name=None):
    """Broadcasts a tensor to ``shape`` (``tf.broadcast_to``)."""
    return broadcast_to(input, shape=_static_shape(shape))


def _reduction(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        return op(input_tensor, axis=_axis(axis), keepdims=bool(keepdims))
    reduce.__name__ = op.name
    reduce.__doc__ = f"``tf.{op.name}(input_tensor, axis=None, keepdims=False)``."
    return reduce




# ---------------------------------------------------------------- TensorFlow's messages for bad arguments
# (see _engine._op_error): what TensorFlow's kernels say, in the form its eager errors print.
def _kernel_message(tf_op, text, name=None):
    device = "/job:localhost/replica:0/task:0/device:CPU:0"
    return (f"{{{{function_node __wrapped__{tf_op}_device_{device}}}}} {text} [Op:{tf_op}]"
            + ("" if name is None else f" name: {name}"))


def _dims(shape):
    return "[" + ",".join(map(str, shape)) + "]"


def _explain_broadcast(tf_op):
    def explain(shapes, static):
        a, b = shapes[:2]
        return _kernel_message(tf_op, f"Incompatible shapes: {_dims(a)} vs. {_dims(b)}", name="")
    return explain


for _op, _tf_op in [(add, "AddV2"), (subtract, "Sub"), (multiply, "Mul"), (truediv, "RealDiv"),
                    (floordiv, "FloorDiv"), (floormod, "FloorMod"), (pow, "Pow"), (maximum, "Maximum"),
                    (minimum, "Minimum"), (squared_difference, "SquaredDifference"), (equal, "Equal"),
                    (not_equal, "NotEqual"), (less, "Less"), (less_equal, "LessEqual"), (greater, "Greater"),
                    (greater_equal, "GreaterEqual"), (logical_and, "LogicalAnd"), (logical_or, "LogicalOr")]:
    _op.explain = _explain_broadcast(_tf_op)


def _explain_matmul(shapes, static):
    a, b = shapes
    return _kernel_message("MatMul", f"Matrix size-incompatible: In[0]: {_dims(a)}, In[1]: {_dims(b)}", name="")


def _explain_reshape(shapes, static):
    n = int(np.prod(shapes[0], dtype=np.int64))
    want = [d for d in static["shape"] if d != -1]
    known = int(np.prod(want, dtype=np.int64))
    text = (f"requires a multiple of {known}" if len(want) < len(static["shape"])
            else f"has {known}")
    return _kernel_message("Reshape", f"Input to reshape is a tensor with {n} values, but the requested shape {text}")


def _explain_concat(shapes, static):
    axis = static["axis"] % len(shapes[0]) if shapes[0] else 0
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(shapes[0]):
            return _kernel_message("ConcatV2", f"ConcatOp : Ranks of all input tensors should match: "
                                   f"shape[0] = {_dims(shapes[0])} vs. shape[{i}] = {_dims(s)}", name="concat")
        for d, (x, y) in enumerate(zip(shapes[0], s)):
            if d != axis and x != y:
                return _kernel_message("ConcatV2", f"ConcatOp : Dimension {d} in both shapes must be equal: "
                                       f"shape[0] = {_dims(shapes[0])} vs. shape[{i}] = {_dims(s)}", name="concat")
    return None


_matmul.explain = _explain_matmul
reshape.explain = _explain_reshape
_concat.explain = _explain_concat


# ---------------------------------------------------------------- operators on Tensor and Variable
def _binary(op, reverse=False):
    if reverse:
        return lambda self, other: op(other, self)
    return lambda self, other: op(self, other)


def _rmatmul(self, other):
    return matmul(other, self)


def _install_operators(cls):
    for name, op in [("add", add), ("sub", subtract), ("mul", multiply), ("truediv", divide),
                     ("floordiv", floordiv), ("mod", floormod), ("pow", pow),
                     ("and", logical_and), ("or", logical_or), ("xor", logical_xor)]:
        setattr(cls, f"__{name}__", _binary(op))
        setattr(cls, f"__r{name}__", _binary(op, reverse=True))
    cls.__matmul__ = lambda self, other: matmul(self, other)
    cls.__rmatmul__ = _rmatmul
    cls.__neg__ = lambda self: negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: abs(self)
    cls.__invert__ = lambda self: logical_not(self) if self._value.dtype == np.bool_ else invert(self)
    cls.__lt__ = _binary(less)
    cls.__le__ = _binary(less_equal)
    cls.__gt__ = _binary(greater)
    cls.__ge__ = _binary(greater_equal)
    cls.__eq__ = lambda self, other: equal(self, other) if _comparable(self, other) else False
    cls.__ne__ = lambda self, other: not_equal(self, other) if _comparable(self, other) else True
    cls.__getitem__ = getitem


def _comparable(self, other):
    if isinstance(other, (str, bytes)):
        return self._value.dtype == object  # a string tensor compares with text
    return other is not None and not isinstance(other, type)


_install_operators(_TensorBase)


# ---------------------------------------------------------------- sparse gradients, repeat, 3-D pooling, meshgrid (issue 12)
from .._core.indexed_slices import IndexedSlices, register_sparse_gradient, to_dense  # noqa: E402
from ..errors import InvalidArgumentError

# TensorFlow's gradient of an axis-0 gather w.r.t. its params is IndexedSlices.
register_sparse_gradient(_gather, when=lambda s: s["axis"] == 0 and s["batch_dims"] == 0)
_densify = defop(lambda values, indices, shape: to_dense(values, indices, shape), name="indexed_slices_to_dense", static=("shape",))
_repeat = defop(lambda x, repeats, axis: jnp.repeat(x, np.asarray(repeats), axis=axis), name="repeat", static=("repeats", "axis"))
_repeat.host = lambda x, repeats, axis: np.repeat(x, np.asarray(repeats), axis=axis)
_meshgrid = defop(lambda *xs, indexing: tuple(jnp.meshgrid(*[x.reshape(-1) for x in xs], indexing=indexing)), name="meshgrid", static=("indexing",))


def _dense_of(value):
    """An IndexedSlices as a dense tensor, through a recorded op (so outer tapes see it)."""
    if value.dense_shape is None:
        return Tensor(jnp.asarray(value))  # raises the explanatory ValueError
    return _densify(value.values, value.indices, shape=value.shape)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of the embedding table ``params`` at ``ids`` (``tf.nn.embedding_lookup``).

    The gradient w.r.t. a table Variable is a ``tf.IndexedSlices``, as in TensorFlow.

    Args:
        params: the table ``[vocab, ...]``, or a list of tables sharded by rows
            ("div" strategy: the list concatenated is the table).
        ids: integer tensor of any shape.
        max_norm: if given, each looked-up row with a larger L2 norm is scaled to it.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``.

    Example:
        >>> import tapejax as tf
        >>> table = tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
        >>> tf.nn.embedding_lookup(table, [[2], [0]]).numpy().tolist()
        [[[4.0, 5.0]], [[0.0, 1.0]]]
    """
    if isinstance(params, (list, tuple)):
        params = params[0] if len(params) == 1 else concat(list(params), axis=0)
    out = gather(params, ids)
    if max_norm is not None:
        n_ids = np.ndim(to_array(ids))
        out = clip_by_norm(out, max_norm, axes=list(builtins.range(n_ids, out.ndim)))
    return out


def repeat(input, repeats, axis=None, name=None):
    """Repeats each element (or slice along ``axis``) ``repeats`` times (``tf.repeat``).

    Args:
        input: a tensor.
        repeats: an int, or a 1-D list/tensor with one count per slice along ``axis``.
            The output's size depends on it, so inside a ``tf.function`` it must be
            a Python value or a constant, not a traced tensor.
        axis: the axis to repeat along; ``None`` flattens ``input`` first.

    Returns:
        The repeated tensor.

    Raises:
        ValueError: ``repeats`` of the wrong length or rank, ``axis`` out of range,
            or ``repeats`` traced inside a ``tf.function``.
        TypeError: non-integer ``repeats``.
        tf.errors.InvalidArgumentError: a negative count.

    Example:
        >>> import tapejax as tf
        >>> tf.repeat([[1, 2], [3, 4]], [1, 3], axis=0).numpy().tolist()
        [[1, 2], [3, 4], [3, 4], [3, 4]]
        >>> tf.repeat([1, 2], 2).numpy().tolist()
        [1, 1, 2, 2]
    """
    # Python counts stay numpy: inside a trace, to_array would stage them as a traced value.
    r = repeats._value if isinstance(repeats, _TensorBase) else repeats
    if is_tracer(r):
        raise ValueError("tf.repeat inside a tf.function needs concrete repeats: the output's size depends on "
                         "them, and a compiled program needs static shapes. Pass a Python int/list or a "
                         "tf.constant built outside the function.")
    r = np.asarray(r)
    if r.dtype.kind not in "iu":
        raise TypeError(f"Argument `tensor` (name: repeats) must be of type integer. Received {repeats!r} of "
                        f"dtype {r.dtype}. Pass integer counts.")
    if r.ndim > 1:
        raise ValueError(f"Shape {r.shape} must have rank at most 1: repeats is one count, or one count per slice.")
    if (r < 0).any():
        raise InvalidArgumentError(None, None, f"tf.repeat: repeats must be >= 0, got {r.tolist()}.")
    x = input if isinstance(input, _TensorBase) else Tensor(to_array(input))
    if axis is None:
        x, axis = reshape(x, shape=(-1,)), 0
    axis = int(axis)
    if not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
        raise ValueError(f"axis={axis} out of bounds: expected {-max(x.ndim, 1)}<=axis<{max(x.ndim, 1)}.")
    if x.ndim == 0:
        x = reshape(x, shape=(1,))
    axis %= x.ndim
    if r.ndim == 1 and r.size != 1 and r.size != x.shape[axis]:
        raise ValueError(f"Dimensions {x.shape[axis]} and {r.size} are not compatible: repeats needs one count "
                         f"per slice along axis {axis}.")
    counts = int(r.reshape(-1)[0]) if r.size == 1 else tuple(int(c) for c in r)
    return _repeat(x, repeats=counts, axis=axis)


_POOL3D_FORMATS = ("NDHWC", "NCDHW")


def _pool3d(input, ksize, strides, padding, data_format, kind):
    if data_format not in _POOL3D_FORMATS:
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}.")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise InvalidArgumentError(None, None, f"Value for attr 'padding' of {padding!r} is not in the list of "
                                   "allowed values: \"SAME\", \"VALID\".")

    def three(name, v):
        v = [int(v)] if isinstance(v, (int, np.integer)) else [int(e) for e in v]
        if len(v) not in (1, 3, 5):
            raise ValueError(f"{name} should be of length 1, 3 or 5. Received: {name}={v} of length {len(v)}")
        if len(v) == 5:
            v = v[2:] if data_format == "NCDHW" else v[1:-1]
        return tuple(v * 3 if len(v) == 1 else v)

    x = input if isinstance(input, _TensorBase) else Tensor(to_array(input))
    if x.ndim != 5:
        raise ValueError(f"{kind}_pool3d needs a 5-D input ({data_format}), got shape {tuple(x.shape)}.")
    if data_format == "NCDHW":
        x = _transpose(x, perm=(0, 2, 3, 4, 1))
    out = _pool(x, kind=kind, ksize=three("ksize", ksize), strides=three("strides", strides), padding=padding.upper())
    return _transpose(out, perm=(0, 4, 1, 2, 3)) if data_format == "NCDHW" else out


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D max pooling of an NDHWC tensor (``tf.nn.max_pool3d``).

    Args:
        input: a 5-D tensor ``[batch, depth, height, width, channels]`` (or NCDHW).
        ksize, strides: an int or a list of 1, 3 or 5 ints (window and step per dimension).
        padding: ``'VALID'`` or ``'SAME'``.
        data_format: ``'NDHWC'`` (default) or ``'NCDHW'``.

    Returns:
        The pooled tensor, same layout.

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1])
        >>> tf.nn.max_pool3d(x, 2, 2, 'VALID').numpy().ravel().tolist()
        [7.0]
    """
    return _pool3d(input, ksize, strides, padding, data_format, "max")


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D average pooling of an NDHWC tensor (``tf.nn.avg_pool3d``); 'SAME' averages only the
    values inside the input, as TensorFlow does.

    Args:
        input: a 5-D tensor ``[batch, depth, height, width, channels]`` (or NCDHW).
        ksize, strides: an int or a list of 1, 3 or 5 ints.
        padding: ``'VALID'`` or ``'SAME'``.
        data_format: ``'NDHWC'`` (default) or ``'NCDHW'``.

    Returns:
        The pooled tensor, same layout.

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1])
        >>> tf.nn.avg_pool3d(x, 2, 2, 'VALID').numpy().ravel().tolist()
        [3.5]
    """
    return _pool3d(input, ksize, strides, padding, data_format, "avg")


def get_static_value(tensor, partial=False):
    """The value of ``tensor`` as numpy if it is known without running a program, else None
    (``tf.get_static_value``): a concrete tensor gives its value, a traced one (inside a
    ``tf.function``) or a Variable gives None, and a non-tensor is returned as is.

    Example:
        >>> import tapejax as tf
        >>> tf.get_static_value(tf.constant([1, 2]))
        array([1, 2], dtype=int32)
        >>> @tf.function
        ... def f(x):
        ...     return tf.get_static_value(x) is None
        >>> f(tf.constant(1.0))
        <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """
    if isinstance(tensor, Variable):
        return None  # its value can change: TensorFlow does not fold it
    if isinstance(tensor, IndexedSlices):
        return None
    if not isinstance(tensor, _TensorBase):
        return tensor
    v = tensor._value
    return None if is_tracer(v) else np.asarray(v)


def meshgrid(*args, **kwargs):
    """N-D coordinate grids of 1-D coordinate vectors (``tf.meshgrid``).

    Args:
        *args: tensors of coordinates (flattened), all of one dtype.
        indexing: ``'xy'`` (default, Cartesian: the first two output axes are
            swapped) or ``'ij'`` (matrix indexing).

    Returns:
        A list of N tensors of rank N.

    Raises:
        ValueError: an ``indexing`` other than 'xy' or 'ij'.
        tf.errors.InvalidArgumentError: inputs of different dtypes.

    Example:
        >>> import tapejax as tf
        >>> X, Y = tf.meshgrid([1, 2, 3], [4, 5])
        >>> X.numpy().tolist(), Y.numpy().tolist()
        ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keywords for meshgrid: {sorted(kwargs)}. Only 'indexing' and 'name' are accepted.")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'.")
    if not args:
        return []
    xs = [a if isinstance(a, _TensorBase) else Tensor(to_array(a)) for a in args]
    dts = {np.dtype(x._value.dtype) for x in xs}
    if len(dts) > 1:
        raise InvalidArgumentError(None, None, f"tf.meshgrid: all inputs must have one dtype, got "
                                   f"{sorted(d.name for d in dts)}. Cast them first with tf.cast.")
    return list(_meshgrid(*xs, indexing=indexing))
