"""TensorFlow's new type promotion: ``experimental_enable_numpy_behavior(dtype_conversion_mode="all"
| "safe")`` (TensorFlow's guide ``tf_numpy_type_promotion``). Every expected value was printed by
TensorFlow 2.21 (scripts /tmp/h8/t_table.py, probe2.py of the session that added this)."""
import logging

import numpy as np
import pytest

import tapejax as tf
import tapejax.experimental.numpy as tnp
from tapejax._core import engine, lazy, promotion, weak
from tapejax._core.tensor import Tensor


@pytest.fixture
def mode():
    """Sets a dtype conversion mode for the test; the default one ("legacy") after it, and Tensors
    without the NumPy methods experimental_enable_numpy_behavior gives them."""
    before = set(vars(tf.Tensor))
    yield weak.set_mode
    weak.set_mode("legacy")
    for name in set(vars(tf.Tensor)) - before:
        delattr(tf.Tensor, name)


# TensorFlow 2.21's tf.add(x, y) for x of the row's type and y of the column's (``*``: weak, a
# Python number's type; ``!``: "safe" mode raises TypeError; ``-``: TF's AddV2 takes no bools).
TYPES = "b u8 u16 u32 u64 i8 i16 i32 i64 bf16 f16 f32 f64 c64 c128 i32* i64* f32* f64* c128*".split()
TABLE = [
    '-      u8     u16    u32    u64    i8     i16    i32    i64    bf16   f16    f32    f64    c64    c128   i32*   i64*   f32*   f64*   c128*',
    'u8     u8     u16    u32    u64    i16!   i16    i32    i64    bf16   f16    f32    f64    c64    c128   u8     u8     f64*!  f64*   c128*',
    'u16    u16    u16    u32    u64    i32!   i32!   i32    i64    bf16!  f16!   f32    f64    c64    c128   u16    u16    f64*!  f64*   c128*',
    'u32    u32    u32    u32    u64    i64!   i64!   i64!   i64    bf16!  f16!   f32!   f64    c64!   c128   u32    u32    f64*!  f64*   c128*',
    'u64    u64    u64    u64    u64    f64*!  f64*!  f64*!  f64*!  bf16!  f16!   f32!   f64!   c64!   c128!  u64    u64    f64*!  f64*!  c128*!',
    'i8     i16!   i32!   i64!   f64*!  i8     i16    i32    i64    bf16   f16    f32    f64    c64    c128   i8     i8     f64*!  f64*   c128*',
    'i16    i16    i32!   i64!   f64*!  i16    i16    i32    i64    bf16!  f16!   f32    f64    c64    c128   i16    i16    f64*!  f64*   c128*',
    'i32    i32    i32    i64!   f64*!  i32    i32    i32    i64    bf16!  f16!   f32!   f64    c64!   c128   i32    i32    f64*!  f64*   c128*',
    'i64    i64    i64    i64    f64*!  i64    i64    i64    i64    bf16!  f16!   f32!   f64!   c64!   c128!  i64    i64    f64*!  f64*!  c128*!',
    'bf16   bf16   bf16!  bf16!  bf16!  bf16   bf16!  bf16!  bf16!  bf16   f32!   f32    f64    c64    c128   bf16   bf16   bf16   bf16   c64!',
    'f16    f16    f16!   f16!   f16!   f16    f16!   f16!   f16!   f32!   f16    f32    f64    c64    c128   f16    f16    f16    f16    c64!',
    'f32    f32    f32    f32!   f32!   f32    f32    f32!   f32!   f32    f32    f32    f64    c64    c128   f32    f32    f32    f32    c64!',
    'f64    f64    f64    f64    f64!   f64    f64    f64    f64!   f64    f64    f64    f64    c128!  c128   f64    f64    f64    f64    c128',
    'c64    c64    c64    c64!   c64!   c64    c64    c64!   c64!   c64    c64    c64    c128!  c64    c128   c64    c64    c64    c64    c64',
    'c128   c128   c128   c128   c128!  c128   c128   c128   c128!  c128   c128   c128   c128   c128   c128   c128   c128   c128   c128   c128',
    'i32*   u8     u16    u32    u64    i8     i16    i32    i64    bf16   f16    f32    f64    c64    c128   i32*   i64*   f32*   f64*   c128*',
    'i64*   u8     u16    u32    u64    i8     i16    i32    i64    bf16   f16    f32    f64    c64    c128   i64*   i64*   f32*   f64*   c128*',
    'f32*   f64*!  f64*!  f64*!  f64*!  f64*!  f64*!  f64*!  f64*!  bf16   f16    f32    f64    c64    c128   f32*   f32*   f32*   f64*   c128*',
    'f64*   f64*   f64*   f64*   f64*!  f64*   f64*   f64*   f64*!  bf16   f16    f32    f64    c64    c128   f64*   f64*   f64*   f64*   c128*',
    'c128*  c128*  c128*  c128*  c128*! c128*  c128*  c128*  c128*! c64!   c64!   c64!   c128   c64    c128   c128*  c128*  c128*  c128*  c128*',
]

# (expression, its repr in TensorFlow 2.21 with dtype_conversion_mode="all"; "!! " an error). No
# transcendental values: an op at new shapes runs on the host first (new_shapes), where exp is an
# ulp off XLA's and TensorFlow's in float32.
ALL_MODE = [
    ('tf.constant(5)', '<tf.Tensor: shape=(), dtype=int32, numpy=5, weak=True>'),
    ('tf.constant(5.)', '<tf.Tensor: shape=(), dtype=float32, numpy=5.0, weak=True>'),
    ('tf.constant([1, 2.5])', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1. , 2.5], dtype=float32), weak=True>'),
    ('tf.constant(1j)', '<tf.Tensor: shape=(), dtype=complex128, numpy=1j, weak=True>'),
    ('tf.constant(np.int8(1))', '<tf.Tensor: shape=(), dtype=int8, numpy=1>'),
    ('tf.constant(np.array([1, 2]))', '<tf.Tensor: shape=(2,), dtype=int64, numpy=array([1, 2])>'),
    ('tf.constant(True)', '<tf.Tensor: shape=(), dtype=bool, numpy=True>'),
    ('tf.constant([True, False])', '<tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>'),
    ('tf.constant(5, tf.int32)', '<tf.Tensor: shape=(), dtype=int32, numpy=5>'),
    ('tf.constant(tf.constant(5))', '<tf.Tensor: shape=(), dtype=int32, numpy=5, weak=True>'),
    ('tf.constant(tf.constant(10, tf.int16), tf.float32)', '<tf.Tensor: shape=(), dtype=float32, numpy=10.0>'),
    ('tf.constant(tf.constant(10, tf.int32), tf.float32)', '<tf.Tensor: shape=(), dtype=float32, numpy=10.0>'),
    ('tf.constant(tf.constant(1.5), tf.int32)', '!! TypeError: Expected tensor 1.5 with dtype tf.int32, but got dtype tf.float32.'),
    ('tf.constant(tf.constant(1.5, tf.float32), tf.int32)', '!! TypeError: Expected tensor 1.5 with dtype tf.int32, but got dtype tf.float32.'),
    ('tf.constant(2**40)', '!! OverflowError: Python int 1099511627776 too large to convert to np.int32'),
    ('tf.constant([1, np.float16(2)])', '<tf.Tensor: shape=(2,), dtype=float16, numpy=array([1., 2.], dtype=float16)>'),
    ("tf.constant('a')", "<tf.Tensor: shape=(), dtype=string, numpy=b'a'>"),
    ('tf.constant(5, shape=[2])', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([5, 5], dtype=int32), weak=True>'),
    ('tf.constant(1, tf.int32) + 2.5', '<tf.Tensor: shape=(), dtype=float64, numpy=3.5, weak=True>'),
    ('tf.constant(1, tf.int8) + 2', '<tf.Tensor: shape=(), dtype=int8, numpy=3>'),
    ('2.5 * tf.constant(1, tf.int32)', '<tf.Tensor: shape=(), dtype=float64, numpy=2.5, weak=True>'),
    ('2 * tf.constant(1, tf.int8)', '<tf.Tensor: shape=(), dtype=int8, numpy=2>'),
    ('np.float16(2) * tf.constant(1, tf.int8)', '<tf.Tensor: shape=(), dtype=float16, numpy=2.0>'),
    ('tf.constant(1, tf.int8) * np.float16(2)', '<tf.Tensor: shape=(), dtype=float16, numpy=2.0>'),
    ('tf.add(1, 2.5)', '<tf.Tensor: shape=(), dtype=float32, numpy=3.5, weak=True>'),
    ('tf.add(1, 2)', '<tf.Tensor: shape=(), dtype=int32, numpy=3, weak=True>'),
    ('tf.add(tf.constant(1, tf.int8), 300)', '<tf.Tensor: shape=(), dtype=int8, numpy=45>'),
    ('tf.constant(1.) / 2', '<tf.Tensor: shape=(), dtype=float32, numpy=0.5, weak=True>'),
    ('tf.constant(1) / tf.constant(2)', '<tf.Tensor: shape=(), dtype=float64, numpy=0.5, weak=True>'),
    ('tf.constant(1, tf.int16) / tf.constant(2)', '<tf.Tensor: shape=(), dtype=float32, numpy=0.5>'),
    ('tf.constant([1, 2]) // 2', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 1], dtype=int32), weak=True>'),
    ('tf.constant([7, 2]) % 3', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32), weak=True>'),
    ('tf.constant(2) ** 3', '<tf.Tensor: shape=(), dtype=int32, numpy=8, weak=True>'),
    ('tf.maximum(tf.constant(1), 2)', '<tf.Tensor: shape=(), dtype=int32, numpy=2>'),
    ('tf.minimum(tf.constant(1.), 2)', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0>'),
    ('tf.maximum(tf.constant(1, tf.int8), 2.5)', '<tf.Tensor: shape=(), dtype=float64, numpy=2.5>'),
    ('tf.equal(tf.constant(1), 1)', '<tf.Tensor: shape=(), dtype=bool, numpy=True>'),
    ('tf.constant(1) == 1', '<tf.Tensor: shape=(), dtype=bool, numpy=True>'),
    ('tf.constant(1) == 1.5', '<tf.Tensor: shape=(), dtype=bool, numpy=False>'),
    ('tf.constant(1) != 1', '<tf.Tensor: shape=(), dtype=bool, numpy=False>'),
    ('tf.constant(1) < 2', '<tf.Tensor: shape=(), dtype=bool, numpy=True>'),
    ('tf.constant(1, tf.int8) < tf.constant(5, tf.int32)', '!! InvalidArgumentError: cannot compute Less as input #1(zero-based) was expected to be a int8 tensor but is a int32 tensor [Op:Less] name: '),
    ('tf.matmul(tf.constant([[1.]]), tf.constant([[2]], tf.int32))', '<tf.Tensor: shape=(1, 1), dtype=float64, numpy=array([[2.]]), weak=True>'),
    ('tf.matmul(tf.constant([[1.]]), tf.constant([[2.]]))', '<tf.Tensor: shape=(1, 1), dtype=float32, numpy=array([[2.]], dtype=float32), weak=True>'),
    ('tf.constant([[1.]]) @ tf.constant([[2.]], tf.float16)', '<tf.Tensor: shape=(1, 1), dtype=float16, numpy=array([[2.]], dtype=float16)>'),
    ('tf.subtract(tf.constant(5, tf.int16), tf.constant(1, tf.float32))', '<tf.Tensor: shape=(), dtype=float32, numpy=4.0>'),
    ('tf.multiply(tf.constant(1, tf.uint8), tf.constant(1, tf.int8))', '<tf.Tensor: shape=(), dtype=int16, numpy=1>'),
    ('tf.math.divide_no_nan(tf.constant(1.), 0.)', '<tf.Tensor: shape=(), dtype=float32, numpy=0.0, weak=True>'),
    ('tf.math.multiply_no_nan(tf.constant(1.), tf.constant(2, tf.float16))', '<tf.Tensor: shape=(), dtype=float16, numpy=2.0>'),
    ('tf.math.floordiv(7, tf.constant(2, tf.int64))', '<tf.Tensor: shape=(), dtype=int64, numpy=3>'),
    ('tf.math.floormod(tf.constant(7.5), 2)', '<tf.Tensor: shape=(), dtype=float32, numpy=1.5, weak=True>'),
    ('tf.pow(tf.constant(2, tf.int8), 2)', '<tf.Tensor: shape=(), dtype=int8, numpy=4>'),
    ('-tf.constant(5)', '<tf.Tensor: shape=(), dtype=int32, numpy=-5, weak=True>'),
    ('-tf.constant(5, tf.int32)', '<tf.Tensor: shape=(), dtype=int32, numpy=-5>'),
    ('abs(tf.constant(-5))', '<tf.Tensor: shape=(), dtype=int32, numpy=5, weak=True>'),
    ('tf.abs(-3)', '<tf.Tensor: shape=(), dtype=int32, numpy=3, weak=True>'),
    ('tf.math.abs([100., 4.])', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([100.,   4.], dtype=float32), weak=True>'),
    ('tf.square(tf.constant(2))', '<tf.Tensor: shape=(), dtype=int32, numpy=4, weak=True>'),
    ('tf.square(3.)', '<tf.Tensor: shape=(), dtype=float32, numpy=9.0, weak=True>'),
    ('tf.sqrt(4.)', '<tf.Tensor: shape=(), dtype=float32, numpy=2.0, weak=True>'),
    ('tf.math.sign(-2)', '<tf.Tensor: shape=(), dtype=int32, numpy=-1, weak=True>'),
    ('tf.nn.relu(tf.constant([-1., 2.]))', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 2.], dtype=float32)>'),
    ('tf.sigmoid(0.)', '<tf.Tensor: shape=(), dtype=float32, numpy=0.5, weak=True>'),
    ('tf.math.round(2.6)', '<tf.Tensor: shape=(), dtype=float32, numpy=3.0, weak=True>'),
    ('tf.reduce_sum(tf.constant([1, 2]))', '<tf.Tensor: shape=(), dtype=int32, numpy=3, weak=True>'),
    ('tf.reduce_sum([1, 2])', '<tf.Tensor: shape=(), dtype=int32, numpy=3, weak=True>'),
    ('tf.reduce_mean([1., 2.])', '<tf.Tensor: shape=(), dtype=float32, numpy=1.5, weak=True>'),
    ('tf.reduce_max(tf.constant([1., 2.]))', '<tf.Tensor: shape=(), dtype=float32, numpy=2.0, weak=True>'),
    ('tf.reduce_prod(tf.constant([1, 2]), 0)', '<tf.Tensor: shape=(), dtype=int32, numpy=2, weak=True>'),
    ('tf.reshape(tf.constant([1, 2]), [2, 1])', '<tf.Tensor: shape=(2, 1), dtype=int32, numpy=\narray([[1],\n       [2]], dtype=int32), weak=True>'),
    ('tf.reshape([1, 2], [2, 1])', '<tf.Tensor: shape=(2, 1), dtype=int32, numpy=\narray([[1],\n       [2]], dtype=int32), weak=True>'),
    ('tf.transpose(tf.constant([[1, 2]]))', '<tf.Tensor: shape=(2, 1), dtype=int32, numpy=\narray([[1],\n       [2]], dtype=int32), weak=True>'),
    ('tf.expand_dims(tf.constant(1.), 0)', '<tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.], dtype=float32), weak=True>'),
    ('tf.squeeze(tf.constant([[1.]]))', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0, weak=True>'),
    ('tf.identity(tf.constant(1))', '<tf.Tensor: shape=(), dtype=int32, numpy=1, weak=True>'),
    ('tf.identity(1)', '<tf.Tensor: shape=(), dtype=int32, numpy=1, weak=True>'),
    ('tf.stop_gradient(tf.constant(1.))', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0, weak=True>'),
    ('tf.zeros_like(tf.constant(1))', '<tf.Tensor: shape=(), dtype=int32, numpy=0, weak=True>'),
    ('tf.ones_like(tf.constant([1.]))', '<tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.], dtype=float32), weak=True>'),
    ('tf.zeros_like(tf.constant(1, tf.int16))', '<tf.Tensor: shape=(), dtype=int16, numpy=0>'),
    ('tf.clip_by_value(tf.constant([1., 5.]), 0., 3.)', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 3.], dtype=float32), weak=True>'),
    ('tf.clip_by_value(tf.constant([1., 5.], tf.float32), 0., 3.)', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 3.], dtype=float32)>'),
    ('tf.cast(tf.constant(1), tf.float32)', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0>'),
    ('tf.cast(1, tf.float32)', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0>'),
    ('tf.constant([1, 2, 3])[0]', '<tf.Tensor: shape=(), dtype=int32, numpy=1>'),
    ('tf.constant([1, 2, 3])[1:]', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>'),
    ('tf.concat([tf.constant([1]), tf.constant([2])], 0)', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>'),
    ('tf.stack([tf.constant(1), tf.constant(2)])', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>'),
    ('tf.gather(tf.constant([1, 2, 3]), [0])', '<tf.Tensor: shape=(1,), dtype=int32, numpy=array([1], dtype=int32)>'),
    ('tf.tile(tf.constant([1]), [2])', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 1], dtype=int32)>'),
    ('tf.fill([2], 5)', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([5, 5], dtype=int32)>'),
    ('tf.range(3)', '<tf.Tensor: shape=(3,), dtype=int32, numpy=array([0, 1, 2], dtype=int32)>'),
    ('tf.where(tf.constant([True, False]), tf.constant([1, 2]), tf.constant([3, 4]))', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 4], dtype=int32)>'),
    ('tf.where(tf.constant([True, False]), 1, 2)', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>'),
    ('tf.math.cumsum(tf.constant([1, 2]))', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 3], dtype=int32)>'),
    ('tf.shape(tf.constant([1, 2]))', '<tf.Tensor: shape=(1,), dtype=int32, numpy=array([2], dtype=int32)>'),
    ('tf.size(tf.constant([1, 2]))', '<tf.Tensor: shape=(), dtype=int32, numpy=2>'),
    ('tf.convert_to_tensor(1)', '<tf.Tensor: shape=(), dtype=int32, numpy=1>'),
    ('tf.convert_to_tensor(1.5)', '<tf.Tensor: shape=(), dtype=float32, numpy=1.5>'),
    ('tf.convert_to_tensor([1, 2])', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>'),
    ('tf.convert_to_tensor(1, tf.int64)', '<tf.Tensor: shape=(), dtype=int64, numpy=1>'),
    ('tf.convert_to_tensor(np.float32(1))', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0>'),
    ('tf.math.add_n([tf.constant(1), tf.constant(2)])', '<tf.Tensor: shape=(), dtype=int32, numpy=3>'),
    ('tf.math.squared_difference(tf.constant(1.), 2.)', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0>'),
    ('tf.math.logical_and(True, tf.constant(False))', '<tf.Tensor: shape=(), dtype=bool, numpy=False>'),
    ('tf.one_hot([0, 1], 2)', '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1., 0.],\n       [0., 1.]], dtype=float32)>'),
    ('tf.ones([2]) + 1', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 2.], dtype=float32)>'),
    ('tf.ones([2]) + tf.constant(1)', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 2.], dtype=float32)>'),
    ('tf.ones([2], tf.int32) + tf.constant(1.5)', '<tf.Tensor: shape=(2,), dtype=float64, numpy=array([2.5, 2.5]), weak=True>'),
    ('tf.ones([2], tf.float16) + 1e5', '<tf.Tensor: shape=(2,), dtype=float16, numpy=array([inf, inf], dtype=float16)>'),
    ('tf.ones([2], tf.bfloat16) * 3.5', '<tf.Tensor: shape=(2,), dtype=bfloat16, numpy=array([3.5, 3.5], dtype=bfloat16)>'),
    ('tf.constant(1, tf.uint32) + 1', '<tf.Tensor: shape=(), dtype=uint32, numpy=2>'),
    ('tf.constant(1, tf.uint64) + tf.constant(1, tf.int8)', '<tf.Tensor: shape=(), dtype=float64, numpy=2.0, weak=True>'),
    ('tf.constant(1., tf.float64) + tf.constant(1, tf.complex64)', '<tf.Tensor: shape=(), dtype=complex128, numpy=(2+0j)>'),
    ('tf.constant(1) + 1j', '<tf.Tensor: shape=(), dtype=complex128, numpy=(1+1j), weak=True>'),
    ('tf.constant(1.5) + tf.constant(2, tf.int64)', '<tf.Tensor: shape=(), dtype=float64, numpy=3.5, weak=True>'),
    ('tf.constant(3) + tf.constant(1.5)', '<tf.Tensor: shape=(), dtype=float32, numpy=4.5, weak=True>'),
    ('tf.constant(3) + True', '<tf.Tensor: shape=(), dtype=int32, numpy=4, weak=True>'),
    ('tf.constant(3., tf.float16) + np.float64(1)', '<tf.Tensor: shape=(), dtype=float64, numpy=4.0>'),
    ('tf.constant(3., tf.float16) + np.array([1., 2.])', '<tf.Tensor: shape=(2,), dtype=float64, numpy=array([4., 5.])>'),
    ('tf.constant(3, tf.int8) + [1, 2]', '<tf.Tensor: shape=(2,), dtype=int8, numpy=array([4, 5], dtype=int8)>'),
    ('tf.constant(3, tf.int8) + [1., 2.]', '<tf.Tensor: shape=(2,), dtype=float64, numpy=array([4., 5.]), weak=True>'),
    ('[1, 2] + tf.constant(3, tf.int8)', '<tf.Tensor: shape=(2,), dtype=int8, numpy=array([4, 5], dtype=int8)>'),
    ('np.array(3.2, np.float16) + tf.constant(1, tf.int8) + tf.constant(50)', '<tf.Tensor: shape=(), dtype=float16, numpy=54.1875>'),
    ('tf.add(tf.add(np.array(1, dtype=np.int8), tf.constant(1)), np.array(1, dtype=np.float16))', '<tf.Tensor: shape=(), dtype=float16, numpy=3.0>'),
    ('tf.add(tf.add(tf.constant(1), np.array(1, dtype=np.int8)), np.array(1, dtype=np.float16))', '<tf.Tensor: shape=(), dtype=float16, numpy=3.0>'),
    ('tnp.array(1)', '<tf.Tensor: shape=(), dtype=int32, numpy=1, weak=True>'),
    ('tnp.array(1.0)', '<tf.Tensor: shape=(), dtype=float32, numpy=1.0, weak=True>'),
    ('tnp.array([1, 2])', '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32), weak=True>'),
    ('tnp.array([1, 2.5])', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1. , 2.5], dtype=float32), weak=True>'),
    ('tnp.asarray(1)', '<tf.Tensor: shape=(), dtype=int32, numpy=1, weak=True>'),
    ('tnp.asarray([1., 2.])', '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32), weak=True>'),
    ('tnp.array(1, dtype=tnp.int64)', '<tf.Tensor: shape=(), dtype=int64, numpy=1>'),
    ('tnp.array(np.int8(1))', '<tf.Tensor: shape=(), dtype=int8, numpy=1>'),
    ('tnp.asarray(tf.constant(1))', '<tf.Tensor: shape=(), dtype=int32, numpy=1, weak=True>'),
    ('tnp.asarray(tf.constant(1, tf.int8))', '<tf.Tensor: shape=(), dtype=int8, numpy=1>'),
    ('tnp.array(True)', '<tf.Tensor: shape=(), dtype=bool, numpy=True>'),
    ('tnp.add(tnp.array(1), 2)', '<tf.Tensor: shape=(), dtype=int32, numpy=3>'),
    ('tnp.array(1) + tnp.array(2.5)', '<tf.Tensor: shape=(), dtype=float32, numpy=3.5, weak=True>'),
    ('tf.constant(1).numpy()', 'np.int32(1)'),
    ('str(tf.constant(1))', "'tf.Tensor(1, shape=(), dtype=int32, weak=True)'"),
    ('str(tf.constant([1., 2.]))', "'tf.Tensor([1. 2.], shape=(2,), dtype=float32, weak=True)'"),
    ("f'{tf.constant(1)}'", "'1 weakly typed'"),
    ("f'{tf.constant(1.5):.2f}'", "'1.50 weakly typed'"),
    ("f'{tf.constant(1, tf.int32)}'", "'1'"),
    ('tf.constant(1).dtype', 'tf.int32'),
    ('tf.constant(1).shape', 'TensorShape([])'),
    ('tf.is_tensor(tf.constant(1))', 'True'),
    ('tf.constant(5) + tf.constant(5, tf.int32)', '<tf.Tensor: shape=(), dtype=int32, numpy=10>'),
    ('tf.constant(5) + tf.constant(5)', '<tf.Tensor: shape=(), dtype=int32, numpy=10, weak=True>'),
    ('tf.constant(5) + tf.constant(5.)', '<tf.Tensor: shape=(), dtype=float32, numpy=10.0, weak=True>'),
    ('tf.constant(5) * 2', '<tf.Tensor: shape=(), dtype=int32, numpy=10, weak=True>'),
    ('tf.constant(5.) * 2', '<tf.Tensor: shape=(), dtype=float32, numpy=10.0, weak=True>'),
    ('1 - tf.constant(5.)', '<tf.Tensor: shape=(), dtype=float32, numpy=-4.0, weak=True>'),
]
# Where "safe" mode differs from "all".
SAFE_MODE = [
    ('tf.constant(tf.constant(10, tf.int32), tf.float32)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'int32'>, weak=False) and (<dtype: 'float32'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.constant(tf.constant(1.5), tf.int32)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'float32'>, weak=True) and (<dtype: 'int32'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.constant(tf.constant(1.5, tf.float32), tf.int32)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'float32'>, weak=False) and (<dtype: 'int32'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.constant(1, tf.int32) + 2.5', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'int32'>, weak=False) and (<dtype: 'float32'>, weak=True) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('2.5 * tf.constant(1, tf.int32)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'float32'>, weak=True) and (<dtype: 'int32'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.maximum(tf.constant(1, tf.int8), 2.5)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'int8'>, weak=False) and (<dtype: 'float32'>, weak=True) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.matmul(tf.constant([[1.]]), tf.constant([[2]], tf.int32))', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'float32'>, weak=True) and (<dtype: 'int32'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.multiply(tf.constant(1, tf.uint8), tf.constant(1, tf.int8))', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'uint8'>, weak=False) and (<dtype: 'int8'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.ones([2], tf.int32) + tf.constant(1.5)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'int32'>, weak=False) and (<dtype: 'float32'>, weak=True) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.constant(1, tf.uint64) + tf.constant(1, tf.int8)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'uint64'>, weak=False) and (<dtype: 'int8'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.constant(1., tf.float64) + tf.constant(1, tf.complex64)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'float64'>, weak=False) and (<dtype: 'complex64'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.constant(1.5) + tf.constant(2, tf.int64)', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'float32'>, weak=True) and (<dtype: 'int64'>, weak=False) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
    ('tf.constant(3, tf.int8) + [1., 2.]', "!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'int8'>, weak=False) and (<dtype: 'float32'>, weak=True) is disallowed. You need to explicitly specify the dtype in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode)."),
]

_DTYPES = {"b": tf.bool, "u8": tf.uint8, "u16": tf.uint16, "u32": tf.uint32, "u64": tf.uint64, "i8": tf.int8,
           "i16": tf.int16, "i32": tf.int32, "i64": tf.int64, "bf16": tf.bfloat16, "f16": tf.float16,
           "f32": tf.float32, "f64": tf.float64, "c64": tf.complex64, "c128": tf.complex128}


def _tensor(t):
    """A tensor of the table's type ``t`` (a weak int64 only arises inside TensorFlow: made here)."""
    x = tf.constant(True) if t == "b" else tf.constant(1, _DTYPES[t.rstrip("*")])
    return Tensor(promotion.as_weak(x._value)) if t.endswith("*") else x


def _typed(x):
    short = {v.name: k for k, v in _DTYPES.items()}[x.dtype.name]
    return short + ("*" if "weak=True" in repr(x) else "")


@pytest.mark.parametrize("safe", [False, True])
def test_promotion_table_is_tensorflows(mode, safe):
    mode("safe" if safe else "all")
    for a, row in zip(TYPES, TABLE):
        for b, want in zip(TYPES, row.split()):
            if want == "-":
                continue   # tapejax's add computes a logical or of bools (a difference of the default mode)
            x, y = _tensor(a), _tensor(b)
            if safe and want.endswith("!"):
                with pytest.raises(TypeError, match=r"In promotion mode PromoMode\.SAFE, implicit dtype promotion"):
                    tf.add(x, y)
            else:
                assert _typed(tf.add(x, y)) == want.rstrip("!"), (a, b)


def test_the_lattice_is_jaxs_where_a_strong_type_takes_part():
    """Between weak types TensorFlow keeps the widths JAX widens (i32* + f32* is f32*, JAX's f64*)."""
    key = promotion.key
    assert promotion.join(key(np.int32, True), key(np.float32, True)) == key(np.float32, True)
    assert promotion.join(key(np.int64, True), key(np.float32, True)) == key(np.float32, True)
    assert promotion.join(key(np.bool_), key(np.int32, True)) == key(np.int32, True)
    assert promotion.join(key(np.uint8), key(np.float32, True)) == key(np.float64, True)
    assert promotion.join(key(np.uint64), key(np.int8)) == key(np.float64, True)


def _shown(src, namespace):
    try:
        return repr(eval(src, namespace))
    except Exception as e:   # noqa: BLE001 -- the error is the value compared
        return f"!! {type(e).__name__}: {e}"


@pytest.mark.parametrize("safe", [False, True])
def test_expressions_print_as_tensorflows(mode, safe):
    mode("safe" if safe else "all")
    want = dict(ALL_MODE, **(dict(SAFE_MODE) if safe else {}))
    namespace = {"tf": tf, "tnp": tnp, "np": np}
    got = {src: _shown(src, namespace) for src in want}
    assert got == want


@pytest.mark.parametrize("safe", [False, True])
def test_variables_convert_what_promotes_to_their_dtype(mode, safe):
    mode("safe" if safe else "all")
    v, f = tf.Variable(10), tf.Variable(1.5)
    want = dict(VARIABLES, **(dict(VARIABLES_SAFE) if safe else {}))
    namespace = {"tf": tf, "np": np, "v": v, "f": f}
    got = {src: _shown(src, namespace) for src in want}   # in order: the variables change
    assert got == want


VARIABLES = [
    ("v", "<tf.Variable 'Variable:0' shape=() dtype=int32, numpy=10>"),
    ("v.assign_add(tf.constant(5, tf.int16))", "<tf.Variable 'UnreadVariable' shape=() dtype=int32, numpy=15>"),
    ("v.assign_add(tf.constant(5))", "<tf.Variable 'UnreadVariable' shape=() dtype=int32, numpy=20>"),
    ("v.assign_add(5)", "<tf.Variable 'UnreadVariable' shape=() dtype=int32, numpy=25>"),
    ("v.assign_add(2.5)", "!! TypeError: Variable dtype is immutable. Calling assign_add of Variable (with dtype "
     "<dtype: 'int32'>) on 2.5 requires converting 2.5 to <dtype: 'int32'>. This is disabled in the current "
     "promotion semantics. Please convert 2.5 manually before calling assign_add."),
    ("v.assign_sub(tf.constant(1, tf.int64))", "!! TypeError: Variable dtype is immutable. Calling assign_sub of "
     "Variable (with dtype <dtype: 'int32'>) on 1 requires converting 1 to <dtype: 'int32'>. This is disabled in the "
     "current promotion semantics. Please convert 1 manually before calling assign_sub."),
    ("v.assign(np.int8(3))", "<tf.Variable 'UnreadVariable' shape=() dtype=int32, numpy=3>"),
    ("v.assign(tf.constant(3.5))", "!! TypeError: Variable dtype is immutable. Calling assign of Variable (with dtype "
     "<dtype: 'int32'>) on 3.5 weakly typed requires converting 3.5 weakly typed to <dtype: 'int32'>. This is "
     "disabled in the current promotion semantics. Please convert 3.5 weakly typed manually before calling assign."),
    ("v + 1", "<tf.Tensor: shape=(), dtype=int32, numpy=4>"),
    ("v * 2.5", "<tf.Tensor: shape=(), dtype=float64, numpy=7.5, weak=True>"),
    ("tf.Variable(1.5)", "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.5>"),
    ("tf.Variable(tf.constant(1))", "<tf.Variable 'Variable:0' shape=() dtype=int32, numpy=1>"),
    ("tf.Variable(tf.constant(1)).value()", "<tf.Tensor: shape=(), dtype=int32, numpy=1>"),
    ("f.assign_add(1)", "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=2.5>"),
    ("f.assign_add(tf.constant(1, tf.float16))", "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=3.5>"),
    ("f.assign_add(tf.constant(1, tf.float64))", "!! TypeError: Variable dtype is immutable. Calling assign_add of "
     "Variable (with dtype <dtype: 'float32'>) on 1.0 requires converting 1.0 to <dtype: 'float32'>. This is disabled "
     "in the current promotion semantics. Please convert 1.0 manually before calling assign_add."),
    ("f + tf.constant(1)", "<tf.Tensor: shape=(), dtype=float32, numpy=4.5>"),
]
_REFUSED = ("!! TypeError: In promotion mode PromoMode.SAFE, implicit dtype promotion between (<dtype: 'int32'>, "
            "weak=False) and (<dtype: 'float32'>, weak=True) is disallowed. You need to explicitly specify the dtype "
            "in your op, or relax your dtype promotion rules (such as from SAFE mode to ALL mode).")
VARIABLES_SAFE = [("v.assign_add(2.5)", _REFUSED), ("v.assign(tf.constant(3.5))", _REFUSED), ("v * 2.5", _REFUSED)]


def test_weakness_crosses_tf_function(mode):
    mode("all")

    @tf.function
    def f(a, b):
        return a * b, a + 1

    assert repr(f(tf.constant(2), tf.constant(3, tf.int8))) == (
        "(<tf.Tensor: shape=(), dtype=int8, numpy=6>, <tf.Tensor: shape=(), dtype=int32, numpy=3, weak=True>)")
    assert repr(f(tf.constant(2.), tf.constant(3.))) == (
        "(<tf.Tensor: shape=(), dtype=float32, numpy=6.0, weak=True>, "
        "<tf.Tensor: shape=(), dtype=float32, numpy=3.0, weak=True>)")

    @tf.function
    def h(x):
        y = tf.constant(2)
        return x * y, y

    assert repr(h(tf.constant(1, tf.int16))) == (
        "(<tf.Tensor: shape=(), dtype=int16, numpy=2>, <tf.Tensor: shape=(), dtype=int32, numpy=2, weak=True>)")


def test_gradients_keep_their_sources_dtypes(mode):
    """Weak operands compute as plain arrays (JAX would widen two weak float32 ones to float64)."""
    mode("all")
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * 2 + tf.constant(1, tf.float16) * 0 + 1
    assert repr(y) == "<tf.Tensor: shape=(), dtype=float32, numpy=7.0>"
    assert repr(tape.gradient(y, x)) == "<tf.Tensor: shape=(), dtype=float32, numpy=2.0>"
    xf = tf.Variable(2., dtype=tf.float16)
    with tf.GradientTape() as tape:
        y3 = xf * tf.constant(3.0, tf.float32)
    assert repr(y3) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"
    assert repr(tape.gradient(y3, xf)) == "<tf.Tensor: shape=(), dtype=float16, numpy=3.0>"
    x2 = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x2)
        y2 = x2 * x2 + tf.exp(x2)
    g = tape.gradient(y2, x2)   # TF: the same value, weakly typed
    assert g.dtype == tf.float32 and np.isclose(g.numpy(), 4 + np.exp(np.float32(2)))


def test_the_guides_cells(mode, caplog):
    """The guide's cells (its TF 2.21 outputs)."""
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="all")
    assert caplog.messages == ["UserWarning: enabling the new type promotion must happen at the beginning of the "
                               "program. Please ensure no TF APIs have been used yet."]
    assert repr(tf.constant(1, tf.int64) + tf.constant(3.2, tf.float16)) == (
        "<tf.Tensor: shape=(), dtype=float16, numpy=4.19921875>")
    assert repr(tf.constant(1.2) + tf.constant(3.1, tf.float16)) == (
        "<tf.Tensor: shape=(), dtype=float16, numpy=4.30078125>")
    a, b, c = np.array(1, dtype=np.int8), tf.constant(1), np.array(1, dtype=np.float16)
    assert repr(tf.add(tf.add(a, b), c)) == "<tf.Tensor: shape=(), dtype=float16, numpy=3.0>"
    assert repr(tf.add(tf.add(b, a), c)) == "<tf.Tensor: shape=(), dtype=float16, numpy=3.0>"
    assert repr(np.array(3.2, np.float16) + tf.constant(1, tf.int8) + tf.constant(50)) == (
        "<tf.Tensor: shape=(), dtype=float16, numpy=54.1875>")
    a = tf.Variable(10, tf.int32)
    assert repr(a.assign_add(tf.constant(5, tf.int16))) == (
        "<tf.Variable 'UnreadVariable' shape=() dtype=int32, numpy=15>")
    assert repr(tf.constant(tf.constant(10, tf.int16), tf.float32)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=10.0>")
    assert repr(tnp.array(1)) == "<tf.Tensor: shape=(), dtype=int32, numpy=1, weak=True>"
    assert repr(tnp.array(1.0)) == "<tf.Tensor: shape=(), dtype=float32, numpy=1.0, weak=True>"
    tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="safe")
    with pytest.raises(TypeError, match=r"between \(<dtype: 'int8'>, weak=False\) and \(<dtype: 'uint32'>, weak=False\)"):
        tf.constant(10, dtype=tf.int8) + tf.constant(5, dtype=tf.uint32)


def test_formats_as_tensorflows_weak_tensors(mode):
    mode("all")
    assert f"{tf.constant([1, 2, 3])}" == "[1 2 3] weakly typed"
    assert f"{tf.constant(1.5):.2f}" == "1.50 weakly typed"
    assert str(tf.constant([1.5, 2.])) == "tf.Tensor([1.5 2. ], shape=(2,), dtype=float32, weak=True)"
    assert tf.constant(1).numpy() == np.int32(1) and type(tf.constant(1).numpy()) is np.int32


def test_unknown_mode_is_tensorflows_value_error():
    with pytest.raises(ValueError, match=r"^The provided promotion mode bogus does not exist\. Make sure the provided "
                                         r"dtype conversion mode is one of the followings: 'off', 'legacy', 'safe' or "
                                         r"'all'\.$"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="bogus")


def test_the_default_mode_is_untouched(mode):
    """"legacy" (the default) and "off" keep tapejax's rules and the op layer's own function."""
    assert engine._run is weak._plain_run
    mode("all")
    assert engine._run is not weak._plain_run
    for m in ("legacy", "off"):
        mode(m)
        assert engine._run is weak._plain_run
        assert repr(tf.constant(5)) == "<tf.Tensor: shape=(), dtype=int32, numpy=5>"
        assert repr(tnp.asarray(1)) == "<tf.Tensor: shape=(), dtype=int64, numpy=1>"
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot compute AddV2"):
            tf.constant(1) + tf.constant(1.5)
        with pytest.raises(TypeError, match="Cannot convert 2.5 to EagerTensor of dtype int32"):
            2.5 * tf.constant(1)


def test_lazy_execution_pauses_while_a_weak_mode_is_on(mode):
    """Deferred ops would see weak arrays (JAX widens two weak int32 ones to int64)."""
    tf.config.experimental.set_lazy_execution(True)
    try:
        mode("all")
        assert engine.defer is None
        assert repr(tf.constant([1, 2]) // 2) == (
            "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 1], dtype=int32), weak=True>")
        tf.config.experimental.set_lazy_execution(True)   # turned on again: still paused
        assert engine.defer is None
        mode("legacy")
        assert engine.defer is lazy.defer
    finally:
        tf.config.experimental.set_lazy_execution(False)
    assert engine.defer is None
