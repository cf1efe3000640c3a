"""The ops TensorFlow makes weak-tensor aware under its new type promotion (its
``ops/weak_tensor_ops.py``), as measured on TensorFlow 2.21's public API with
``dtype_conversion_mode="all"``: a weak input gives a weak result for the "unary" ones, the
"binary" ones promote their two inputs (``_core/promotion.py``), "comparison" ones promote to a
plain result. Every other op gives a plain tensor (``tf.nn.relu``, ``tf.concat``, ``x[0]``, the
ones TensorFlow's wrappers miss included)."""
from .._core import basic, promotion
from . import array_ops, linalg_ops, math_ops, nn_ops

UNARY = [
    math_ops.abs, math_ops.sign, math_ops.round, math_ops.sigmoid, math_ops.log_sigmoid, math_ops.softplus,
    math_ops.ceil, math_ops.sqrt, math_ops.exp, math_ops.rsqrt, math_ops.acos, math_ops.floor, math_ops.acosh,
    math_ops.asin, math_ops.asinh, math_ops.atan, math_ops.atanh, math_ops.cos, math_ops.cosh, math_ops.digamma,
    math_ops.erf, math_ops.erfc, math_ops.expm1, math_ops.lgamma, math_ops.log, math_ops.log1p, basic.negative,
    math_ops.reciprocal, math_ops.sin, math_ops.sinh, math_ops.square, math_ops.tan, math_ops.tanh,
    math_ops.clip_by_value, nn_ops.relu6, nn_ops._leaky_relu, nn_ops.gelu, nn_ops.log_softmax, nn_ops.silu,
    math_ops.reduce_sum.op, math_ops.reduce_mean.op, math_ops.reduce_max.op, math_ops.reduce_min.op,
    math_ops.reduce_prod.op, math_ops.reduce_std.op, math_ops.reduce_variance.op, math_ops.reduce_logsumexp.op,
    linalg_ops.trace, linalg_ops.diag_part, linalg_ops.diag, linalg_ops._matrix_transpose, linalg_ops.matvec,
    array_ops._reshape, array_ops._expand_dims, array_ops._squeeze, array_ops._transpose, basic.identity,
]
BINARY = [
    math_ops.add, math_ops.subtract, math_ops.multiply, math_ops.truediv, math_ops.floordiv, math_ops.floormod,
    math_ops.pow, math_ops.divide_no_nan, math_ops.multiply_no_nan, linalg_ops._matmul,
]
COMPARISON = [math_ops.maximum, math_ops.minimum, math_ops.equal]

for _kind, _ops in (("unary", UNARY), ("binary", BINARY), ("comparison", COMPARISON)):
    for _op in _ops:
        promotion.kinds[_op] = _kind
