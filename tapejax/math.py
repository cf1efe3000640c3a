"""tf.math: elementwise math and reductions (re-exports of the op table)."""
from .ops import (
    abs as abs, negative as negative, sign as sign, exp as exp, expm1 as expm1, log as log,
    log1p as log1p, sqrt as sqrt, rsqrt as rsqrt, square as square, reciprocal as reciprocal,
    floor as floor, ceil as ceil, round as round, sin as sin, cos as cos, tan as tan, asin as asin,
    acos as acos, atan as atan, atan2 as atan2, sinh as sinh, cosh as cosh, tanh as tanh,
    asinh as asinh, acosh as acosh, atanh as atanh, sigmoid as sigmoid, softplus as softplus,
    softsign as softsign, log_sigmoid as log_sigmoid, erf as erf, erfc as erfc, lgamma as lgamma,
    digamma as digamma, is_nan as is_nan, is_inf as is_inf, is_finite as is_finite, add as add,
    subtract as subtract, multiply as multiply, divide as divide, truediv as truediv,
    floordiv as floordiv, floormod as floormod, mod as mod, pow as pow,
    squared_difference as squared_difference, divide_no_nan as divide_no_nan,
    multiply_no_nan as multiply_no_nan, xlogy as xlogy, maximum as maximum, minimum as minimum,
    equal as equal, not_equal as not_equal, less as less, less_equal as less_equal, greater as greater,
    greater_equal as greater_equal, logical_and as logical_and, logical_or as logical_or,
    logical_not as logical_not, logical_xor as logical_xor, count_nonzero as count_nonzero,
    cumsum as cumsum, cumprod as cumprod, argmax as argmax, argmin as argmin, add_n as add_n,
    l2_normalize as l2_normalize, top_k as top_k,
)
from .ops import (
    _reduction, reduce_sum as _rs, reduce_mean as _rm, reduce_max as _rx, reduce_min as _rn,
    reduce_prod as _rp, reduce_std as _rsd, reduce_variance as _rv, reduce_logsumexp as _rl,
    reduce_all as _ra, reduce_any as _rany,
)

reduce_sum = _reduction(_rs)
reduce_mean = _reduction(_rm)
reduce_max = _reduction(_rx)
reduce_min = _reduction(_rn)
reduce_prod = _reduction(_rp)
reduce_std = _reduction(_rsd)
reduce_variance = _reduction(_rv)
reduce_logsumexp = _reduction(_rl)
reduce_all = _reduction(_ra)
reduce_any = _reduction(_rany)
