"""tf.sets (tapejax/sets.py): size, intersection, union, difference of dense and sparse sets — values, errors.

Expected values recorded from TensorFlow 2.21 (the same cases run under ``tensorflow``); values compare
with a float32 tolerance, errors by class and the start of TF's message.
"""
import numpy as np
import pytest

import tapejax as tf
from recorded_cases import check, grad

EXPECTED = {'size': ('EXC', 'TypeError', 'Expected `SparseTensor`, got tf.Tensor( '), 'size3': ('EXC', 'TypeError', 'Expected `SparseTensor`, got tf.Tensor( '), 'size_sp': ([2, 1], "<dtype: 'int32'>"), 'inter': [[[0, 0], [0, 1]], [1, 3], [2, 2]], 'union': [[[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2]], [1, 2, 3, 9, 4, 5, 6], [2, 4]], 'diff': [[[0, 0], [1, 0], [1, 1]], [2, 4, 5], [2, 2]], 'diff_ba': [[[0, 0], [1, 0]], [9, 6], [2, 1]], 'inter3': [[[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 1]], [2, 3, 5, 6], [2, 2, 2]], 'union3': [[[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1], [1, 1, 2]], [0, 1, 2, 1, 3, 5, 6, 0, 7, 8], [2, 2, 3]], 'inter_sp': [[[0, 0], [1, 0]], [1, 4], [2, 1]], 'union_sp': [[[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1]], [1, 2, 3, 7, 4, 5], [2, 4]], 'diff_sp': [[[0, 0]], [7], [2, 1]], 'inter_dense_out': ([[1, 3], [0, 0]], "<dtype: 'int32'>"), 'str': [[[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], [b'a', b'b', b'z', b'a', b'c'], [2, 3]], 'str_inter': [[[0, 0], [0, 1]], [b'a', b'b'], [1, 2]], 'empty': [[], [], [1, 0]], 'rank1': ('EXC', 'TypeError', 'Expected `SparseTensor`, got tf.Tensor(['), 'bad_dtype': ('EXC', 'TypeError', "'a' has invalid dtype `<dtype: 'float32'"), 'mismatch': ('EXC', 'TypeError', "Types don't match, <dtype: 'int32'> vs <"), 'sp_sp': [[[0, 0], [0, 1], [1, 0]], [1, 7, 4], [2, 2]], 'fn': [[[0, 0], [0, 1]], [1, 3], [2, 2]], 'shape_mismatch': ('EXC', 'InvalidArgumentError', 'Mismatched shapes [1] vs [2] [Op:DenseTo'), 'size_str': ('EXC', 'TypeError', 'Expected `SparseTensor`, got tf.Tensor([')}

CASES = {}


def sp(s):
    return [s.indices, s.values, s.dense_shape]


def show(name, f):
    CASES[name] = f


a = tf.constant([[1, 2, 3], [4, 5, 4]])
b = tf.constant([[3, 1, 9], [6, 6, 6]])
a3 = tf.constant([[[1, 2], [3, 3]], [[5, 6], [7, 8]]], tf.int64)
b3 = tf.constant([[[2, 0], [3, 1]], [[6, 5], [0, 0]]], tf.int64)
s = tf.sparse.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [1, 2]], values=[7, 1, 4, 4], dense_shape=[2, 4])
show("size", lambda: tf.sets.size(a))
show("size3", lambda: tf.sets.size(a3))
show("size_sp", lambda: tf.sets.size(s))
show("inter", lambda: sp(tf.sets.intersection(a, b)))
show("union", lambda: sp(tf.sets.union(a, b)))
show("diff", lambda: sp(tf.sets.difference(a, b)))
show("diff_ba", lambda: sp(tf.sets.difference(a, b, aminusb=False)))
show("inter3", lambda: sp(tf.sets.intersection(a3, b3)))
show("union3", lambda: sp(tf.sets.union(a3, b3)))
show("inter_sp", lambda: sp(tf.sets.intersection(a, s)))
show("union_sp", lambda: sp(tf.sets.union(s, a)))
show("diff_sp", lambda: sp(tf.sets.difference(s, a)))
show("inter_dense_out", lambda: tf.sparse.to_dense(tf.sets.intersection(a, b)))
show("str", lambda: sp(tf.sets.union(tf.constant([["a", "b"], ["c", "a"]]), tf.constant([["b", "z"], ["c", "c"]]))))
show("str_inter", lambda: sp(tf.sets.intersection(tf.constant([["a", "b"]]), tf.constant([["b", "a"]]))))
show("empty", lambda: sp(tf.sets.intersection(tf.constant([[1, 2]]), tf.constant([[3, 4]]))))
show("rank1", lambda: tf.sets.size(tf.constant([1, 2])))
show("bad_dtype", lambda: tf.sets.union(tf.constant([[1.0]]), tf.constant([[2.0]])))
show("mismatch", lambda: tf.sets.union(tf.constant([[1]]), tf.constant([[2]], tf.int64)))
show("sp_sp", lambda: sp(tf.sets.union(s, s)))
show("fn", lambda: sp(tf.function(lambda: tf.sets.intersection(a, b))()))
show("shape_mismatch", lambda: tf.sets.union(tf.constant([[1, 2]]), tf.constant([[1], [2]])))
show("size_str", lambda: tf.sets.size(tf.constant([["a", "a", "b"]])))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_as_tensorflow(name):
    check(CASES[name], EXPECTED[name])
