"""``tf.dtypes``: TensorFlow's dtype objects and conversions.

Example:
    >>> import tapejax as tf
    >>> tf.dtypes.as_dtype("int64"), str(tf.dtypes.float32)
    (tf.int64, "<dtype: 'float32'>")
"""
from ._core.dtypes import (
    DType as DType, as_dtype as as_dtype, float16 as float16, half as half, bfloat16 as bfloat16,
    float32 as float32, float64 as float64, double as double, int8 as int8, int16 as int16,
    int32 as int32, int64 as int64, uint8 as uint8, uint16 as uint16, uint32 as uint32,
    uint64 as uint64, bool as bool, complex64 as complex64, complex128 as complex128, string as string,
)
from .ops import exports as _exports

globals().update(_exports("dtypes"))  # tf.dtypes.cast
