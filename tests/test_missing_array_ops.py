"""TensorFlow's top-level names added to the op table (ops/more_array_ops.py) and tf.assert_* aliases: values, gradients, errors.

Expected values recorded from TensorFlow 2.21 (same cases run under ``tensorflow``);
values compare with a float32 tolerance, errors by class and the start of TF's message.
"""
import numpy as np
import pytest

import tapejax as tf
from recorded_cases import check, grad

EXPECTED = {'ensure': ([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], "<dtype: 'float32'>"), 'ensure_bad': ('EXC', 'InvalidArgumentError', 'Shape of tensor input [2,3] is not compa'), 'ensure_rank': ('EXC', 'InvalidArgumentError', 'Shape of tensor input [2,3] is not compa'), 'identity_n': [1, [2.0]], 'no_op': None, 'group': None, 'tuple': [1, [2.0]], 'bss': ([2, 4, 3], 'TensorShape'), 'bss_none': ([None, 5], 'TensorShape'), 'bss_bad': ('EXC', 'ValueError', 'Incompatible shapes for broadcasting. Tw'), 'bds': ([2, 4, 3], "<dtype: 'int32'>"), 'bds64': ([2, 3], "<dtype: 'int64'>"), 'bds_bad': ('EXC', 'InvalidArgumentError', 'Incompatible shapes: [2] vs. [3]'), 'bitcast': ([1065353216, -1073741824], "<dtype: 'int32'>"), 'bitcast_narrow': ([[1, 0, 0, 0], [0, 1, 0, 0]], "<dtype: 'uint8'>"), 'bitcast_wide': ([1, 65536], "<dtype: 'int32'>"), 'bitcast_bad': ('EXC', 'InvalidArgumentError', 'Cannot bitcast from 5 to 3'), 'saturate': ([0, 255, 255], "<dtype: 'uint8'>"), 'saturate_i': ([-32768, 32767], "<dtype: 'int16'>"), 'saturate_f': ([3.4028234663852886e+38, -3.4028234663852886e+38], "<dtype: 'float32'>"), 'saturate_i32': ([2147483520, -2147483648], "<dtype: 'int32'>"), 'realdiv': ([0.25, 1.5], "<dtype: 'float32'>"), 'shape_n': [[2, 3], [4]], 'shape_n64': ([2, 3], "<dtype: 'int64'>"), 'hist': ([2, 1, 1, 0, 3], "<dtype: 'int32'>"), 'hist_int': ([3, 0, 2], "<dtype: 'int32'>"), 'hist_bins': ([0, 0, 1, 2, 4, 4, 4], "<dtype: 'int32'>"), 'hist_bad': ('EXC', 'InvalidArgumentError', 'nbins should be a positive number, but g'), 'unique': [[4, 1, 2, 7], [0, 1, 1, 2, 0, 3, 1]], 'unique64': [[4.0, 1.0], [0, 1, 0]], 'uwc': [[4, 1, 2, 7], [0, 1, 1, 2, 0, 3, 1], [2, 3, 1, 1]], 'unique_bad': ('EXC', 'InvalidArgumentError', 'unique expects a 1D vector.'), 'dp': [[[3, 4]], [[1, 2], [5, 6]], []], 'dp_g': [[2.0, 0.0, 3.0]], 'dp_bad': ('EXC', 'InvalidArgumentError', 'partitions[1] = 2 is not in [0, 2) '), 'ds': ([1.0, 11.0, 21.0, 31.0, 41.0, 51.0, 61.0], "<dtype: 'float32'>"), 'ds_dup': ([1.0, 3.0], "<dtype: 'float32'>"), 'ds_g': [[2.0, 5.0], [5.0]], 'ds_rows': ([[3, 4], [1, 2]], "<dtype: 'int32'>"), 'ss': ([[0, 1, 3, 2], [1, 1, 1, 3]], "<dtype: 'int32'>"), 'ss_right': ([3, 1], "<dtype: 'int32'>"), 'ss_bad': ('EXC', 'InvalidArgumentError', 'Expected begin, end, and strides to be 1'), 'sm': ([[True, False, False, False, False], [True, True, True, False, False], [True, True, False, False, False]], "<dtype: 'bool'>"), 'sm_none': ([[[True, False, False], [True, True, True]], [[True, True, False], [False, False, False]]], "<dtype: 'bool'>"), 'sm_f': ([[1.0, 1.0, 0.0]], "<dtype: 'float32'>"), 'rs': ([[2, 1, 3, 4], [7, 6, 5, 8]], "<dtype: 'int32'>"), 'rs_t': ([[5, 2], [3, 4], [1, 6]], "<dtype: 'int32'>"), 'rs_g': [[[2.0, 1.0, 3.0]]], 'ui': ([[0, 1, 1], [1, 2, 1]], "<dtype: 'int32'>"), 'ui_scalar': ([1, 3], "<dtype: 'int32'>"), 'ui_bad': ('EXC', 'InvalidArgumentError', 'index is out of bound as with dims'), 'argsort_int': ([1, 2, 0], "<dtype: 'int32'>"), 'assert_equal': None, 'assert_equal_bad': ('EXC', 'InvalidArgumentError', 'Condition x == y did not hold. First 1 e'), 'assert_less_bad': ('EXC', 'InvalidArgumentError', 'Condition x < y did not hold. First 1 el'), 'assert_greater': None, 'assert_rank_bad': ('EXC', 'ValueError', 'Tensor  must have rank 2.  Received rank'), 'Assert_bad': ('EXC', 'InvalidArgumentError', "Expected 'tf.Tensor(False, shape=(), dty"), 'guarantee_const': (2, "<dtype: 'int32'>"), 'ss1': ([[[4, 5, 6, 7], [8, 9, 10, 11]], [[16, 17, 18, 19], [20, 21, 22, 23]]], "<dtype: 'int32'>"), 'ss_masks': ([[12, 14], [16, 18], [20, 22]], "<dtype: 'int32'>"), 'ss_ellipsis': ([[[1, 2], [5, 6], [9, 10]], [[13, 14], [17, 18], [21, 22]]], "<dtype: 'int32'>"), 'ss_newaxis': ([[[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]]], "<dtype: 'int32'>"), 'ss_neg': ([[[23, 21], [19, 17], [15, 13]], [[11, 9], [7, 5], [3, 1]]], "<dtype: 'int32'>"), 'ss_g': [[0.0, 2.0, 0.0, 3.0, 0.0]], 'name_scope': (True, ''), 'is_symbolic': (False, ''), 's2b': ([[[[0.0, 1.0], [6.0, 7.0]], [[24.0, 25.0], [30.0, 31.0]]], [[[48.0, 49.0], [54.0, 55.0]], [[72.0, 73.0], [78.0, 79.0]]], [[[2.0, 3.0], [8.0, 9.0]], [[26.0, 27.0], [32.0, 33.0]]], [[[50.0, 51.0], [56.0, 57.0]], [[74.0, 75.0], [80.0, 81.0]]], [[[4.0, 5.0], [10.0, 11.0]], [[28.0, 29.0], [34.0, 35.0]]], [[[52.0, 53.0], [58.0, 59.0]], [[76.0, 77.0], [82.0, 83.0]]], [[[12.0, 13.0], [18.0, 19.0]], [[36.0, 37.0], [42.0, 43.0]]], [[[60.0, 61.0], [66.0, 67.0]], [[84.0, 85.0], [90.0, 91.0]]], [[[14.0, 15.0], [20.0, 21.0]], [[38.0, 39.0], [44.0, 45.0]]], [[[62.0, 63.0], [68.0, 69.0]], [[86.0, 87.0], [92.0, 93.0]]], [[[16.0, 17.0], [22.0, 23.0]], [[40.0, 41.0], [46.0, 47.0]]], [[[64.0, 65.0], [70.0, 71.0]], [[88.0, 89.0], [94.0, 95.0]]]], "<dtype: 'float32'>"), 's2b_pad': ([[[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [18.0, 19.0]], [[0.0, 0.0], [42.0, 43.0]]], [[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [66.0, 67.0]], [[0.0, 0.0], [90.0, 91.0]]], [[[0.0, 0.0], [0.0, 0.0]], [[12.0, 13.0], [20.0, 21.0]], [[36.0, 37.0], [44.0, 45.0]]], [[[0.0, 0.0], [0.0, 0.0]], [[60.0, 61.0], [68.0, 69.0]], [[84.0, 85.0], [92.0, 93.0]]], [[[0.0, 0.0], [0.0, 0.0]], [[14.0, 15.0], [22.0, 23.0]], [[38.0, 39.0], [46.0, 47.0]]], [[[0.0, 0.0], [0.0, 0.0]], [[62.0, 63.0], [70.0, 71.0]], [[86.0, 87.0], [94.0, 95.0]]], [[[0.0, 0.0], [0.0, 0.0]], [[16.0, 17.0], [0.0, 0.0]], [[40.0, 41.0], [0.0, 0.0]]], [[[0.0, 0.0], [0.0, 0.0]], [[64.0, 65.0], [0.0, 0.0]], [[88.0, 89.0], [0.0, 0.0]]], [[[0.0, 0.0], [6.0, 7.0]], [[0.0, 0.0], [30.0, 31.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[0.0, 0.0], [54.0, 55.0]], [[0.0, 0.0], [78.0, 79.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[0.0, 1.0], [8.0, 9.0]], [[24.0, 25.0], [32.0, 33.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[48.0, 49.0], [56.0, 57.0]], [[72.0, 73.0], [80.0, 81.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[2.0, 3.0], [10.0, 11.0]], [[26.0, 27.0], [34.0, 35.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[50.0, 51.0], [58.0, 59.0]], [[74.0, 75.0], [82.0, 83.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[4.0, 5.0], [0.0, 0.0]], [[28.0, 29.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]], [[[52.0, 53.0], [0.0, 0.0]], [[76.0, 77.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]], "<dtype: 'float32'>"), 's2b_1d': ([[[0.0], [1.0], [3.0], [5.0]], [[0.0], [2.0], [4.0], [0.0]]], "<dtype: 'float64'>"), 's2b_g': [[[[[5.0], [7.0]], [[1.0], [3.0]]], [[[6.0], [8.0]], [[2.0], [4.0]]]]], 's2b_bad': ('EXC', 'InvalidArgumentError', 'padded_shape[0]=4 is not divisible by bl'), 'b2s': ([[[[6.0], [1.0], [7.0]], [[18.0], [13.0], [19.0]], [[8.0], [3.0], [9.0]], [[20.0], [15.0], [21.0]], [[10.0], [5.0], [11.0]]]], "<dtype: 'float64'>"), 'b2s_g': [[[[[0.0]], [[2.0]]], [[[0.0]], [[2.0]]], [[[1.0]], [[3.0]]], [[[1.0]], [[3.0]]]]], 'b2s_bad': ('EXC', 'InvalidArgumentError', 'Input batch dimension (3) is not divisib'), 'nn_s2b': ([[[[0.0, 1.0], [4.0, 5.0], [8.0, 9.0]], [[24.0, 25.0], [28.0, 29.0], [32.0, 33.0]]], [[[48.0, 49.0], [52.0, 53.0], [56.0, 57.0]], [[72.0, 73.0], [76.0, 77.0], [80.0, 81.0]]], [[[2.0, 3.0], [6.0, 7.0], [10.0, 11.0]], [[26.0, 27.0], [30.0, 31.0], [34.0, 35.0]]], [[[50.0, 51.0], [54.0, 55.0], [58.0, 59.0]], [[74.0, 75.0], [78.0, 79.0], [82.0, 83.0]]], [[[12.0, 13.0], [16.0, 17.0], [20.0, 21.0]], [[36.0, 37.0], [40.0, 41.0], [44.0, 45.0]]], [[[60.0, 61.0], [64.0, 65.0], [68.0, 69.0]], [[84.0, 85.0], [88.0, 89.0], [92.0, 93.0]]], [[[14.0, 15.0], [18.0, 19.0], [22.0, 23.0]], [[38.0, 39.0], [42.0, 43.0], [46.0, 47.0]]], [[[62.0, 63.0], [66.0, 67.0], [70.0, 71.0]], [[86.0, 87.0], [90.0, 91.0], [94.0, 95.0]]]], "<dtype: 'float32'>")}

CASES = {}


def show(name, f):
    CASES[name] = f


show("ensure", lambda: tf.ensure_shape(tf.zeros([2, 3]), [None, 3]))
show("ensure_bad", lambda: tf.ensure_shape(tf.zeros([2, 3]), [2, 4]))
show("ensure_rank", lambda: tf.ensure_shape(tf.zeros([2, 3]), [None]))
show("identity_n", lambda: tf.identity_n([tf.constant(1), tf.constant([2.0])]))
show("no_op", lambda: tf.no_op())
show("group", lambda: tf.group(tf.constant(1), tf.constant(2)))
show("tuple", lambda: tf.tuple([tf.constant(1), tf.constant([2.0])]))
show("bss", lambda: tf.broadcast_static_shape(tf.TensorShape([2, 1, 3]), tf.TensorShape([4, 1])))
show("bss_none", lambda: tf.broadcast_static_shape(tf.TensorShape([None, 1]), tf.TensorShape([5])))
show("bss_bad", lambda: tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3])))
show("bds", lambda: tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]))
show("bds64", lambda: tf.broadcast_dynamic_shape(tf.constant([2, 1], tf.int64), tf.constant([3], tf.int64)))
show("bds_bad", lambda: tf.broadcast_dynamic_shape([2], [3]))
show("bitcast", lambda: tf.bitcast(tf.constant([1.0, -2.0]), tf.int32))
show("bitcast_narrow", lambda: tf.bitcast(tf.constant([1, 256], tf.int32), tf.uint8))
show("bitcast_wide", lambda: tf.bitcast(tf.constant([[1, 0], [0, 1]], tf.int16), tf.int32))
show("bitcast_bad", lambda: tf.bitcast(tf.constant([1, 2, 3], tf.int16), tf.int32))
show("saturate", lambda: tf.saturate_cast(tf.constant([-5.0, 300.0, 3e10]), tf.uint8))
show("saturate_i", lambda: tf.saturate_cast(tf.constant([-70000, 70000]), tf.int16))
show("saturate_f", lambda: tf.saturate_cast(tf.constant([1e300, -1e300], tf.float64), tf.float32))
show("saturate_i32", lambda: tf.saturate_cast(tf.constant([3e10, -3e10]), tf.int32))
show("realdiv", lambda: tf.realdiv(tf.constant([1.0, 3.0]), tf.constant([4.0, 2.0])))
# TF: eager RuntimeError; tapejax stacks
# show("parallel_stack", lambda: tf.parallel_stack([tf.constant([1, 2]), tf.constant([3, 4])]))
show("shape_n", lambda: tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])]))
show("shape_n64", lambda: tf.shape_n([tf.zeros([2, 3])], out_type=tf.int64)[0])
v = tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0, 4.999])
show("hist", lambda: tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5))
show("hist_int", lambda: tf.histogram_fixed_width(tf.constant([0, 1, 2, 7, 9]), tf.constant([0, 10]), nbins=3))
show("hist_bins", lambda: tf.histogram_fixed_width_bins(v, [0.0, 5.0], nbins=5))
show("hist_bad", lambda: tf.histogram_fixed_width(v, [0.0, 5.0], nbins=0))
show("unique", lambda: tf.unique(tf.constant([4, 1, 1, 2, 4, 7, 1])))
show("unique64", lambda: tf.unique(tf.constant([4.0, 1.0, 4.0]), out_idx=tf.int64))
show("uwc", lambda: tf.unique_with_counts(tf.constant([4, 1, 1, 2, 4, 7, 1])))
show("unique_bad", lambda: tf.unique(tf.constant([[1, 2]])))
# TF: no gradient (LookupError); tapejax: gather's
# show("unique_g", lambda: grad(lambda a: tf.reduce_sum(tf.unique(a).y * tf.constant([1.0, 2.0, 3.0])), [4.0, 1.0, 4.0, 2.0]))
show("dp", lambda: tf.dynamic_partition(tf.constant([[1, 2], [3, 4], [5, 6]]), tf.constant([1, 0, 1]), 3))
show("dp_g", lambda: grad(lambda a: tf.reduce_sum(tf.dynamic_partition(a, tf.constant([1, 0, 1]), 2)[1] * tf.constant([2.0, 3.0])), [1.0, 2.0, 3.0]))
show("dp_bad", lambda: tf.dynamic_partition(tf.constant([1, 2]), tf.constant([0, 2]), 2))
show("ds", lambda: tf.dynamic_stitch([tf.constant([6]), tf.constant([4, 1]), tf.constant([[5, 2], [0, 3]])], [tf.constant([61.0]), tf.constant([41.0, 11.0]), tf.constant([[51.0, 21.0], [1.0, 31.0]])]))
show("ds_dup", lambda: tf.dynamic_stitch([tf.constant([0, 1]), tf.constant([1])], [tf.constant([1.0, 2.0]), tf.constant([3.0])]))
show("ds_g", lambda: grad(lambda a, b: tf.reduce_sum(tf.dynamic_stitch([tf.constant([0, 1]), tf.constant([1])], [a, b]) * tf.constant([2.0, 5.0])), [1.0, 2.0], [3.0]))
show("ds_rows", lambda: tf.dynamic_stitch([tf.constant([1, 0])], [tf.constant([[1, 2], [3, 4]])]))
show("ss", lambda: tf.searchsorted(tf.constant([[1.0, 3.0, 5.0], [0.0, 2.0, 2.0]]), tf.constant([[0.0, 3.0, 6.0, 3.5], [2.0, 2.0, 1.0, 9.0]])))
show("ss_right", lambda: tf.searchsorted(tf.constant([0.0, 2.0, 2.0]), tf.constant([2.0, 1.0]), side="right"))
show("ss_bad", lambda: tf.searchsorted(tf.constant([0.0, 2.0]), tf.constant([2.0]), side="middle"))
show("sm", lambda: tf.sequence_mask([1, 3, 2], 5))
show("sm_none", lambda: tf.sequence_mask(tf.constant([[1, 3], [2, 0]])))
show("sm_f", lambda: tf.sequence_mask([2], 3, dtype=tf.float32))
show("rs", lambda: tf.reverse_sequence(tf.constant([[1, 2, 3, 4], [5, 6, 7, 8]]), [2, 3], seq_axis=1, batch_axis=0))
show("rs_t", lambda: tf.reverse_sequence(tf.constant([[1, 2], [3, 4], [5, 6]]), tf.constant([3, 1]), seq_axis=0, batch_axis=1))
show("rs_g", lambda: grad(lambda a: tf.reduce_sum(tf.reverse_sequence(a, [2], seq_axis=1) * tf.constant([[1.0, 2.0, 3.0]])), [[1.0, 2.0, 3.0]]))
show("ui", lambda: tf.unravel_index([1, 5, 4], [3, 3]))
show("ui_scalar", lambda: tf.unravel_index(7, [2, 4]))
show("ui_bad", lambda: tf.unravel_index([9], [3, 3]))
show("argsort_int", lambda: tf.argsort(tf.constant([3, 1, 2])))
show("assert_equal", lambda: tf.assert_equal(tf.constant(1), tf.constant(1)))
show("assert_equal_bad", lambda: tf.assert_equal(tf.constant(1), tf.constant(2)))
show("assert_less_bad", lambda: tf.assert_less(tf.constant(2), tf.constant(1)))
show("assert_greater", lambda: tf.assert_greater(tf.constant(2), tf.constant(1)))
show("assert_rank_bad", lambda: tf.assert_rank(tf.constant([1]), 2))
show("Assert_bad", lambda: tf.Assert(tf.constant(False), ["boom"]))
show("guarantee_const", lambda: tf.guarantee_const(tf.constant(2)))
t = tf.reshape(tf.range(24), [2, 3, 4])
show("ss1", lambda: tf.strided_slice(t, [0, 1], [2, 3], [1, 1]))
show("ss_masks", lambda: tf.strided_slice(t, [1, 0, 0], [2, 0, -1], [1, 1, 2], begin_mask=2, end_mask=2, shrink_axis_mask=1))
show("ss_ellipsis", lambda: tf.strided_slice(t, [0, 1], [0, 3], [1, 1], ellipsis_mask=1))
show("ss_newaxis", lambda: tf.strided_slice(t, [0, 0], [1, 1], [1, 1], new_axis_mask=1))
show("ss_neg", lambda: tf.strided_slice(t, [-1, -1, -1], [-3, -4, -5], [-1, -1, -2]))
show("ss_g", lambda: grad(lambda a: tf.reduce_sum(tf.strided_slice(a, [1], [4], [2]) * tf.constant([2.0, 3.0])), [1.0, 2.0, 3.0, 4.0, 5.0]))
show("ss_bad", lambda: tf.strided_slice(t, [0], [1, 2]))
show("name_scope", lambda: tf.get_current_name_scope() == "")
show("is_symbolic", lambda: tf.is_symbolic_tensor(tf.constant(1)))
xsb = np.arange(2 * 4 * 6 * 2, dtype=np.float32).reshape(2, 4, 6, 2)
show("s2b", lambda: tf.space_to_batch_nd(xsb, [2, 3], [[0, 0], [0, 0]]))
show("s2b_pad", lambda: tf.space_to_batch(xsb, [2, 4], [[1, 1], [1, 1]]))
show("s2b_1d", lambda: tf.space_to_batch_nd(np.arange(6.0).reshape(1, 6, 1), [2], [[1, 1]]))
show("s2b_g", lambda: grad(lambda a: tf.reduce_sum(tf.space_to_batch_nd(a, [2, 2], [[1, 1], [0, 0]]) * tf.range(1.0, 9.0)[:, None, None, None]), np.arange(8.0, dtype=np.float32).reshape(2, 2, 2, 1)))
show("s2b_bad", lambda: tf.space_to_batch_nd(xsb, [3, 3], [[0, 0], [0, 0]]))
show("b2s", lambda: tf.batch_to_space(np.arange(24.0).reshape(4, 3, 2, 1), [2, 2], [[0, 1], [1, 0]]))
show("b2s_g", lambda: grad(lambda a: tf.reduce_sum(tf.batch_to_space(a, [2, 1], [[1, 0], [0, 0]]) * tf.range(1.0, 4.0)[None, :, None, None]), np.arange(8.0, dtype=np.float32).reshape(4, 2, 1, 1)))
show("b2s_bad", lambda: tf.batch_to_space(np.arange(6.0).reshape(3, 2, 1, 1), [2, 1], [[0, 0], [0, 0]]))
show("nn_s2b", lambda: tf.nn.space_to_batch(xsb, [2, 2], [[0, 0], [0, 0]]))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_as_tensorflow(name):
    check(CASES[name], EXPECTED[name])
