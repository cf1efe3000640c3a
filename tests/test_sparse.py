"""tf.SparseTensor and tf.sparse, against TensorFlow 2.21.

The cells named ``sparseNN`` are the guide "Working with sparse tensors" (tensorflow/docs
site/en/guide/sparse_tensor.ipynb, code cell NN), ``tensor119`` the sparse cell of "Introduction
to Tensors", unchanged; the other cells are one call each. Each runs with ``tf`` bound to tapejax
and must print what TensorFlow printed (``TF_OUTPUT``, recorded by scripts/record_text_tests.py;
see guide_harness).

Cells not run, and why:

- sparse32: Keras layers on sparse inputs (``tf.keras.Input(sparse=True)``) are not provided
- sparse34-40: ``tf.data`` datasets of SparseTensors are not provided
"""
import re

import numpy as np
import pytest

import tapejax as tf
from guide_harness import assert_same_output, run_cells

SETUP = '''st1 = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
st2 = tf.sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]])
sf = tf.SparseTensor(indices=[[1, 0], [0, 1]], values=[1.5, 2.5], dense_shape=[2, 3])'''

CELLS = {
    "setup": SETUP,
    "sparse08": 'st1 = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]],\n                      values=[10, 20],\n                      dense_shape=[3, 10])',
    "sparse11": 'print(st1)',
    "sparse13": 'def pprint_sparse_tensor(st):\n  s = "<SparseTensor shape=%s \\n values={" % (st.dense_shape.numpy().tolist(),)\n  for (index, value) in zip(st.indices, st.values):\n    s += f"\\n  %s: %s" % (index.numpy().tolist(), value.numpy().tolist())\n  return s + "}>"',
    "sparse14": 'print(pprint_sparse_tensor(st1))',
    "sparse16": 'st2 = tf.sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]])\nprint(pprint_sparse_tensor(st2))',
    "sparse17": 'st3 = tf.sparse.to_dense(st2)\nprint(st3)',
    "sparse20": 'st_a = tf.sparse.SparseTensor(indices=[[0, 2], [3, 4]],\n                       values=[31, 2], \n                       dense_shape=[4, 10])\n\nst_b = tf.sparse.SparseTensor(indices=[[0, 2], [3, 0]],\n                       values=[56, 38],\n                       dense_shape=[4, 10])\n\nst_sum = tf.sparse.add(st_a, st_b)\n\nprint(pprint_sparse_tensor(st_sum))',
    "sparse22": 'st_c = tf.sparse.SparseTensor(indices=([0, 1], [1, 0], [1, 1]),\n                       values=[13, 15, 17],\n                       dense_shape=(2,2))\n\nmb = tf.constant([[4], [6]])\nproduct = tf.sparse.sparse_dense_matmul(st_c, mb)\n\nprint(product)',
    "sparse24": 'sparse_pattern_A = tf.sparse.SparseTensor(indices = [[2,4], [3,3], [3,4], [4,3], [4,4], [5,4]],\n                         values = [1,1,1,1,1,1],\n                         dense_shape = [8,5])\nsparse_pattern_B = tf.sparse.SparseTensor(indices = [[0,2], [1,1], [1,3], [2,0], [2,4], [2,5], [3,5], \n                                              [4,5], [5,0], [5,4], [5,5], [6,1], [6,3], [7,2]],\n                         values = [1,1,1,1,1,1,1,1,1,1,1,1,1,1],\n                         dense_shape = [8,6])\nsparse_pattern_C = tf.sparse.SparseTensor(indices = [[3,0], [4,0]],\n                         values = [1,1],\n                         dense_shape = [8,6])\n\nsparse_patterns_list = [sparse_pattern_A, sparse_pattern_B, sparse_pattern_C]\nsparse_pattern = tf.sparse.concat(axis=1, sp_inputs=sparse_patterns_list)\nprint(tf.sparse.to_dense(sparse_pattern))',
    "sparse25": 'sparse_slice_A = tf.sparse.slice(sparse_pattern_A, start = [0,0], size = [8,5])\nsparse_slice_B = tf.sparse.slice(sparse_pattern_B, start = [0,5], size = [8,6])\nsparse_slice_C = tf.sparse.slice(sparse_pattern_C, start = [0,10], size = [8,6])\nprint(tf.sparse.to_dense(sparse_slice_A))\nprint(tf.sparse.to_dense(sparse_slice_B))\nprint(tf.sparse.to_dense(sparse_slice_C))',
    "sparse27": 'st2_plus_5 = tf.sparse.map_values(tf.add, st2, 5)\nprint(tf.sparse.to_dense(st2_plus_5))',
    "sparse29": 'st2_plus_5 = tf.sparse.SparseTensor(\n    st2.indices,\n    st2.values + 5,\n    st2.dense_shape)\nprint(tf.sparse.to_dense(st2_plus_5))',
    "sparse43": '@tf.function\ndef f(x,y):\n  return tf.sparse.sparse_dense_matmul(x,y)\n\na = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]],\n                    values=[15, 25],\n                    dense_shape=[3, 10])\n\nb = tf.sparse.to_dense(tf.sparse.transpose(a))\n\nc = f(a,b)\n\nprint(c)',
    "sparse46": 'print(tf.sparse.reduce_max(tf.sparse.from_dense([-5, 0, -3])))',
    "sparse48": 'print(tf.math.reduce_max([-5, 0, -3]))',
    "tensor119": '# Sparse tensors store values by index in a memory-efficient manner\nsparse_tensor = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]],\n                                       values=[1, 2],\n                                       dense_shape=[3, 4])\nprint(sparse_tensor, "\\n")\n\n# You can convert sparse tensors to dense\nprint(tf.sparse.to_dense(sparse_tensor))',
    'st1': 'st1',
    'str_st1': 'str(st1)',
    'st1_indices': 'st1.indices',
    'st1_values': 'st1.values',
    'st1_dense_shape': 'st1.dense_shape',
    'st1_shape': 'st1.shape',
    'st1_dtype': 'st1.dtype',
    'st1_get_shape': 'st1.get_shape()',
    'isinstance_st1_sparsetensor': 'isinstance(st1, tf.SparseTensor)',
    'sparsetensor_is_sparsetensor': 'tf.SparseTensor is tf.sparse.SparseTensor',
    'is_tensor_st1': 'tf.is_tensor(st1)',
    'st2': 'st2',
    'to_dense_st2': 'tf.sparse.to_dense(st2)',
    'to_dense_st1': 'tf.sparse.to_dense(st1)',
    'reorder_sf': 'tf.sparse.reorder(sf)',
    'from_dense_constant_0_0_2_0_3_0_0_0': 'tf.sparse.from_dense(tf.constant([[0.0, 2.0], [3.0, 0.0]]))',
    'from_dense_constant_a_b': 'tf.sparse.from_dense(tf.constant(["", "a", "b"]))',
    'add_sparsetensor_indices_0_2_3_4_values_': 'tf.sparse.add(tf.sparse.SparseTensor(indices=[[0, 2], [3, 4]], values=[31, 2], dense_shape=[4, 10]), tf.sparse.SparseTensor(indices=[[0, 2], [3, 0]], values=[56, 38], dense_shape=[4, 10]))',
    'add_sf_ones_2_3': 'tf.sparse.add(sf, tf.ones([2, 3]))',
    'add_ones_2_3_sf': 'tf.sparse.add(tf.ones([2, 3]), sf)',
    'add_zero_sum_kept': 'tf.sparse.add(st2, tf.SparseTensor(indices=[[0, 3]], values=[-8], dense_shape=[3, 4]))',
    'add_threshold': 'tf.sparse.add(sf, tf.SparseTensor(indices=[[1, 0]], values=[-1.4], dense_shape=[2, 3]), threshold=0.2)',
    'sparse_dense_matmul_sparsetensor_indices': 'tf.sparse.sparse_dense_matmul(tf.sparse.SparseTensor(indices=([0, 1], [1, 0], [1, 1]), values=[13, 15, 17], dense_shape=(2,2)), tf.constant([[4], [6]]))',
    'sparse_dense_matmul_sf_ones_3_2': 'tf.sparse.sparse_dense_matmul(sf, tf.ones([3, 2]))',
    'sparse_dense_matmul_sf_ones_2_2_adjoint_': 'tf.sparse.sparse_dense_matmul(sf, tf.ones([2, 2]), adjoint_a=True)',
    'sparse_dense_matmul_sf_ones_2_3_adjoint_': 'tf.sparse.sparse_dense_matmul(sf, tf.ones([2, 3]), adjoint_b=True)',
    'sparse_dense_matmul_ones_2_2_sf': 'tf.sparse.sparse_dense_matmul(tf.ones([2, 2]), sf)',
    'reduce_sum_st2': 'tf.sparse.reduce_sum(st2)',
    'reduce_sum_st2_axis_1': 'tf.sparse.reduce_sum(st2, axis=1)',
    'reduce_sum_st2_axis_0_keepdims_true': 'tf.sparse.reduce_sum(st2, axis=0, keepdims=True)',
    'reduce_sum_sf_axis_1': 'tf.sparse.reduce_sum(sf, axis=-1)',
    'reduce_sum_st2_axis_1_output_is_sparse_t': 'tf.sparse.reduce_sum(st2, axis=1, output_is_sparse=True)',
    'reduce_max_from_dense_5_0_3': 'tf.sparse.reduce_max(tf.sparse.from_dense([-5, 0, -3]))',
    'reduce_max_st2_axis_1': 'tf.sparse.reduce_max(st2, axis=1)',
    'math_reduce_max_5_0_3': 'tf.math.reduce_max([-5, 0, -3])',
    'map_values_add_st2_5': 'tf.sparse.map_values(tf.add, st2, 5)',
    'transpose_st1': 'tf.sparse.transpose(st1)',
    'concat_axis_1_sp_inputs_st2_st2': 'tf.sparse.concat(axis=1, sp_inputs=[st2, st2])',
    'concat_axis_0_sp_inputs_st2_st2': 'tf.sparse.concat(axis=0, sp_inputs=[st2, st2])',
    'slice_st2_start_0_1_size_3_3': 'tf.sparse.slice(st2, start=[0, 1], size=[3, 3])',
    'to_dense_slice_st2_start_0_1_size_3_3': 'tf.sparse.to_dense(tf.sparse.slice(st2, start=[0, 1], size=[3, 3]))',
    'to_dense_concat_axis_1_sp_inputs_st2_st1': 'tf.sparse.to_dense(tf.sparse.concat(axis=1, sp_inputs=[st2, st1]))',
    'st1_2': 'st1 * 2',
    'st1_ones_3_10_int32': 'st1 * tf.ones([3, 10], tf.int32)',
    'sparsetensor_indices_0_0_1_2_values_a_b_': 'tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=["a", "b"], dense_shape=[2, 3])',
    'to_dense_sparsetensor_indices_0_0_1_2_va': 'tf.sparse.to_dense(tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=["a", "b"], dense_shape=[2, 3]))',
    'eye_2': 'tf.sparse.eye(2)',
    'to_dense_retain_st2_true_false_true': 'tf.sparse.to_dense(tf.sparse.retain(st2, [True, False, True]))',
    'from_dense_1_0_0_2_indices_dtype': 'tf.sparse.from_dense([[1, 0], [0, 2]]).indices.dtype',
}

_GUIDE_DEPS = {"sparse11": ["sparse08"], "sparse14": ["sparse08", "sparse13"], "sparse16": ["sparse13"],
               "sparse17": ["sparse13", "sparse16"], "sparse20": ["sparse13"], "sparse24": [],
               "sparse25": ["sparse24"], "sparse27": ["sparse13", "sparse16"],
               "sparse29": ["sparse13", "sparse16"]}
# cell: (cells run before it, ignore numbers)
PLAN = {name: (_GUIDE_DEPS.get(name, []), False) if re.fullmatch(r"(sparse|tensor)\d+", name) else (["setup"], False)
        for name in CELLS if name != "setup"}

# TF_OUTPUT: recorded with TensorFlow 2.21 by scripts/record_text_tests.py (do not edit by hand)
TF_OUTPUT = {'sparse08': '',
 'sparse11': 'SparseTensor(indices=tf.Tensor(\n'
             '[[0 3]\n'
             ' [2 4]], shape=(2, 2), dtype=int64), values=tf.Tensor([10 20], shape=(2,), dtype=int32), '
             'dense_shape=tf.Tensor([ 3 10], shape=(2,), dtype=int64))\n',
 'sparse13': '',
 'sparse14': '<SparseTensor shape=[3, 10] \n values={\n  [0, 3]: 10\n  [2, 4]: 20}>\n',
 'sparse16': '<SparseTensor shape=[3, 4] \n values={\n  [0, 0]: 1\n  [0, 3]: 8\n  [2, 2]: 3}>\n',
 'sparse17': 'tf.Tensor(\n[[1 0 0 8]\n [0 0 0 0]\n [0 0 3 0]], shape=(3, 4), dtype=int32)\n',
 'sparse20': '<SparseTensor shape=[4, 10] \n values={\n  [0, 2]: 87\n  [3, 0]: 38\n  [3, 4]: 2}>\n',
 'sparse22': 'tf.Tensor(\n[[ 78]\n [162]], shape=(2, 1), dtype=int32)\n',
 'sparse24': 'tf.Tensor(\n'
             '[[0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0]\n'
             ' [0 0 0 0 0 0 1 0 1 0 0 0 0 0 0 0 0]\n'
             ' [0 0 0 0 1 1 0 0 0 1 1 0 0 0 0 0 0]\n'
             ' [0 0 0 1 1 0 0 0 0 0 1 1 0 0 0 0 0]\n'
             ' [0 0 0 1 1 0 0 0 0 0 1 1 0 0 0 0 0]\n'
             ' [0 0 0 0 1 1 0 0 0 1 1 0 0 0 0 0 0]\n'
             ' [0 0 0 0 0 0 1 0 1 0 0 0 0 0 0 0 0]\n'
             ' [0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0]], shape=(8, 17), dtype=int32)\n',
 'sparse25': 'tf.Tensor(\n'
             '[[0 0 0 0 0]\n'
             ' [0 0 0 0 0]\n'
             ' [0 0 0 0 1]\n'
             ' [0 0 0 1 1]\n'
             ' [0 0 0 1 1]\n'
             ' [0 0 0 0 1]\n'
             ' [0 0 0 0 0]\n'
             ' [0 0 0 0 0]], shape=(8, 5), dtype=int32)\n'
             'tf.Tensor(\n'
             '[[0]\n'
             ' [0]\n'
             ' [1]\n'
             ' [1]\n'
             ' [1]\n'
             ' [1]\n'
             ' [0]\n'
             ' [0]], shape=(8, 1), dtype=int32)\n'
             'tf.Tensor([], shape=(8, 0), dtype=int32)\n',
 'sparse27': 'tf.Tensor(\n[[ 6  0  0 13]\n [ 0  0  0  0]\n [ 0  0  8  0]], shape=(3, 4), dtype=int32)\n',
 'sparse29': 'tf.Tensor(\n[[ 6  0  0 13]\n [ 0  0  0  0]\n [ 0  0  8  0]], shape=(3, 4), dtype=int32)\n',
 'sparse43': 'tf.Tensor(\n[[225   0   0]\n [  0   0   0]\n [  0   0 625]], shape=(3, 3), dtype=int32)\n',
 'sparse46': 'tf.Tensor(-3, shape=(), dtype=int32)\n',
 'sparse48': 'tf.Tensor(0, shape=(), dtype=int32)\n',
 'tensor119': 'SparseTensor(indices=tf.Tensor(\n'
              '[[0 0]\n'
              ' [1 2]], shape=(2, 2), dtype=int64), values=tf.Tensor([1 2], shape=(2,), dtype=int32), '
              'dense_shape=tf.Tensor([3 4], shape=(2,), dtype=int64)) \n'
              '\n'
              'tf.Tensor(\n'
              '[[1 0 0 0]\n'
              ' [0 0 2 0]\n'
              ' [0 0 0 0]], shape=(3, 4), dtype=int32)\n',
 'st1': 'SparseTensor(indices=tf.Tensor(\n'
        '[[0 3]\n'
        ' [2 4]], shape=(2, 2), dtype=int64), values=tf.Tensor([10 20], shape=(2,), dtype=int32), '
        'dense_shape=tf.Tensor([ 3 10], shape=(2,), dtype=int64))\n',
 'str_st1': "'SparseTensor(indices=tf.Tensor(\\n[[0 3]\\n [2 4]], shape=(2, 2), dtype=int64), "
            'values=tf.Tensor([10 20], shape=(2,), dtype=int32), dense_shape=tf.Tensor([ 3 10], shape=(2,), '
            "dtype=int64))'\n",
 'st1_indices': '<tf.Tensor: shape=(2, 2), dtype=int64, numpy=\narray([[0, 3],\n       [2, 4]])>\n',
 'st1_values': '<tf.Tensor: shape=(2,), dtype=int32, numpy=array([10, 20], dtype=int32)>\n',
 'st1_dense_shape': '<tf.Tensor: shape=(2,), dtype=int64, numpy=array([ 3, 10])>\n',
 'st1_shape': 'TensorShape([3, 10])\n',
 'st1_dtype': 'tf.int32\n',
 'st1_get_shape': 'TensorShape([3, 10])\n',
 'isinstance_st1_sparsetensor': 'True\n',
 'sparsetensor_is_sparsetensor': 'True\n',
 'is_tensor_st1': 'True\n',
 'st2': 'SparseTensor(indices=tf.Tensor(\n'
        '[[0 0]\n'
        ' [0 3]\n'
        ' [2 2]], shape=(3, 2), dtype=int64), values=tf.Tensor([1 8 3], shape=(3,), dtype=int32), '
        'dense_shape=tf.Tensor([3 4], shape=(2,), dtype=int64))\n',
 'to_dense_st2': '<tf.Tensor: shape=(3, 4), dtype=int32, numpy=\n'
                 'array([[1, 0, 0, 8],\n'
                 '       [0, 0, 0, 0],\n'
                 '       [0, 0, 3, 0]], dtype=int32)>\n',
 'to_dense_st1': '<tf.Tensor: shape=(3, 10), dtype=int32, numpy=\n'
                 'array([[ 0,  0,  0, 10,  0,  0,  0,  0,  0,  0],\n'
                 '       [ 0,  0,  0,  0,  0,  0,  0,  0,  0,  0],\n'
                 '       [ 0,  0,  0,  0, 20,  0,  0,  0,  0,  0]], dtype=int32)>\n',
 'reorder_sf': 'SparseTensor(indices=tf.Tensor(\n'
               '[[0 1]\n'
               ' [1 0]], shape=(2, 2), dtype=int64), values=tf.Tensor([2.5 1.5], shape=(2,), dtype=float32), '
               'dense_shape=tf.Tensor([2 3], shape=(2,), dtype=int64))\n',
 'from_dense_constant_0_0_2_0_3_0_0_0': 'SparseTensor(indices=tf.Tensor(\n'
                                        '[[0 1]\n'
                                        ' [1 0]], shape=(2, 2), dtype=int64), values=tf.Tensor([2. 3.], '
                                        'shape=(2,), dtype=float32), dense_shape=tf.Tensor([2 2], '
                                        'shape=(2,), dtype=int64))\n',
 'from_dense_constant_a_b': 'SparseTensor(indices=tf.Tensor(\n'
                            '[[1]\n'
                            " [2]], shape=(2, 1), dtype=int64), values=tf.Tensor([b'a' b'b'], shape=(2,), "
                            'dtype=string), dense_shape=tf.Tensor([3], shape=(1,), dtype=int64))\n',
 'add_sparsetensor_indices_0_2_3_4_values_': 'SparseTensor(indices=tf.Tensor(\n'
                                             '[[0 2]\n'
                                             ' [3 0]\n'
                                             ' [3 4]], shape=(3, 2), dtype=int64), values=tf.Tensor([87 38  '
                                             '2], shape=(3,), dtype=int32), dense_shape=tf.Tensor([ 4 10], '
                                             'shape=(2,), dtype=int64))\n',
 'add_sf_ones_2_3': '<tf.Tensor: shape=(2, 3), dtype=float32, numpy=\n'
                    'array([[1. , 3.5, 1. ],\n'
                    '       [2.5, 1. , 1. ]], dtype=float32)>\n',
 'add_ones_2_3_sf': '<tf.Tensor: shape=(2, 3), dtype=float32, numpy=\n'
                    'array([[1. , 3.5, 1. ],\n'
                    '       [2.5, 1. , 1. ]], dtype=float32)>\n',
 'add_zero_sum_kept': 'SparseTensor(indices=tf.Tensor(\n'
                      '[[0 0]\n'
                      ' [0 3]\n'
                      ' [2 2]], shape=(3, 2), dtype=int64), values=tf.Tensor([1 0 3], shape=(3,), '
                      'dtype=int32), dense_shape=tf.Tensor([3 4], shape=(2,), dtype=int64))\n',
 'add_threshold': 'SparseTensor(indices=tf.Tensor([[0 1]], shape=(1, 2), dtype=int64), '
                  'values=tf.Tensor([2.5], shape=(1,), dtype=float32), dense_shape=tf.Tensor([2 3], '
                  'shape=(2,), dtype=int64))\n',
 'sparse_dense_matmul_sparsetensor_indices': '<tf.Tensor: shape=(2, 1), dtype=int32, numpy=\n'
                                             'array([[ 78],\n'
                                             '       [162]], dtype=int32)>\n',
 'sparse_dense_matmul_sf_ones_3_2': '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\n'
                                    'array([[2.5, 2.5],\n'
                                    '       [1.5, 1.5]], dtype=float32)>\n',
 'sparse_dense_matmul_sf_ones_2_2_adjoint_': '<tf.Tensor: shape=(3, 2), dtype=float32, numpy=\n'
                                             'array([[1.5, 1.5],\n'
                                             '       [2.5, 2.5],\n'
                                             '       [0. , 0. ]], dtype=float32)>\n',
 'sparse_dense_matmul_sf_ones_2_3_adjoint_': '<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\n'
                                             'array([[2.5, 2.5],\n'
                                             '       [1.5, 1.5]], dtype=float32)>\n',
 'sparse_dense_matmul_ones_2_2_sf': '<tf.Tensor: shape=(2, 3), dtype=float32, numpy=\n'
                                    'array([[1.5, 2.5, 0. ],\n'
                                    '       [1.5, 2.5, 0. ]], dtype=float32)>\n',
 'reduce_sum_st2': '<tf.Tensor: shape=(), dtype=int32, numpy=12>\n',
 'reduce_sum_st2_axis_1': '<tf.Tensor: shape=(3,), dtype=int32, numpy=array([9, 0, 3], dtype=int32)>\n',
 'reduce_sum_st2_axis_0_keepdims_true': '<tf.Tensor: shape=(1, 4), dtype=int32, numpy=array([[1, 0, 3, 8]], '
                                        'dtype=int32)>\n',
 'reduce_sum_sf_axis_1': '<tf.Tensor: shape=(2,), dtype=float32, numpy=array([2.5, 1.5], dtype=float32)>\n',
 'reduce_sum_st2_axis_1_output_is_sparse_t': 'SparseTensor(indices=tf.Tensor(\n'
                                             '[[0]\n'
                                             ' [2]], shape=(2, 1), dtype=int64), values=tf.Tensor([9 3], '
                                             'shape=(2,), dtype=int32), dense_shape=tf.Tensor([3], '
                                             'shape=(1,), dtype=int64))\n',
 'reduce_max_from_dense_5_0_3': '<tf.Tensor: shape=(), dtype=int32, numpy=-3>\n',
 'reduce_max_st2_axis_1': '<tf.Tensor: shape=(3,), dtype=int32, numpy=array([8, 0, 3], dtype=int32)>\n',
 'math_reduce_max_5_0_3': '<tf.Tensor: shape=(), dtype=int32, numpy=0>\n',
 'map_values_add_st2_5': 'SparseTensor(indices=tf.Tensor(\n'
                         '[[0 0]\n'
                         ' [0 3]\n'
                         ' [2 2]], shape=(3, 2), dtype=int64), values=tf.Tensor([ 6 13  8], shape=(3,), '
                         'dtype=int32), dense_shape=tf.Tensor([3 4], shape=(2,), dtype=int64))\n',
 'transpose_st1': 'SparseTensor(indices=tf.Tensor(\n'
                  '[[3 0]\n'
                  ' [4 2]], shape=(2, 2), dtype=int64), values=tf.Tensor([10 20], shape=(2,), dtype=int32), '
                  'dense_shape=tf.Tensor([10  3], shape=(2,), dtype=int64))\n',
 'concat_axis_1_sp_inputs_st2_st2': 'SparseTensor(indices=tf.Tensor(\n'
                                    '[[0 0]\n'
                                    ' [0 3]\n'
                                    ' [0 4]\n'
                                    ' [0 7]\n'
                                    ' [2 2]\n'
                                    ' [2 6]], shape=(6, 2), dtype=int64), values=tf.Tensor([1 8 1 8 3 3], '
                                    'shape=(6,), dtype=int32), dense_shape=tf.Tensor([3 8], shape=(2,), '
                                    'dtype=int64))\n',
 'concat_axis_0_sp_inputs_st2_st2': 'SparseTensor(indices=tf.Tensor(\n'
                                    '[[0 0]\n'
                                    ' [0 3]\n'
                                    ' [2 2]\n'
                                    ' [3 0]\n'
                                    ' [3 3]\n'
                                    ' [5 2]], shape=(6, 2), dtype=int64), values=tf.Tensor([1 8 3 1 8 3], '
                                    'shape=(6,), dtype=int32), dense_shape=tf.Tensor([6 4], shape=(2,), '
                                    'dtype=int64))\n',
 'slice_st2_start_0_1_size_3_3': 'SparseTensor(indices=tf.Tensor(\n'
                                 '[[0 2]\n'
                                 ' [2 1]], shape=(2, 2), dtype=int64), values=tf.Tensor([8 3], shape=(2,), '
                                 'dtype=int32), dense_shape=tf.Tensor([3 3], shape=(2,), dtype=int64))\n',
 'to_dense_slice_st2_start_0_1_size_3_3': '<tf.Tensor: shape=(3, 3), dtype=int32, numpy=\n'
                                          'array([[0, 0, 8],\n'
                                          '       [0, 0, 0],\n'
                                          '       [0, 3, 0]], dtype=int32)>\n',
 'to_dense_concat_axis_1_sp_inputs_st2_st1': '<tf.Tensor: shape=(3, 14), dtype=int32, numpy=\n'
                                             'array([[ 1,  0,  0,  8,  0,  0,  0, 10,  0,  0,  0,  0,  0,  '
                                             '0],\n'
                                             '       [ 0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  '
                                             '0],\n'
                                             '       [ 0,  0,  3,  0,  0,  0,  0,  0, 20,  0,  0,  0,  0,  '
                                             '0]],\n'
                                             '      dtype=int32)>\n',
 'st1_2': 'SparseTensor(indices=tf.Tensor(\n'
          '[[0 3]\n'
          ' [2 4]], shape=(2, 2), dtype=int64), values=tf.Tensor([20 40], shape=(2,), dtype=int32), '
          'dense_shape=tf.Tensor([ 3 10], shape=(2,), dtype=int64))\n',
 'st1_ones_3_10_int32': 'SparseTensor(indices=tf.Tensor(\n'
                        '[[0 3]\n'
                        ' [2 4]], shape=(2, 2), dtype=int64), values=tf.Tensor([10 20], shape=(2,), '
                        'dtype=int32), dense_shape=tf.Tensor([ 3 10], shape=(2,), dtype=int64))\n',
 'sparsetensor_indices_0_0_1_2_values_a_b_': 'SparseTensor(indices=tf.Tensor(\n'
                                             '[[0 0]\n'
                                             " [1 2]], shape=(2, 2), dtype=int64), values=tf.Tensor([b'a' "
                                             "b'b'], shape=(2,), dtype=string), dense_shape=tf.Tensor([2 3], "
                                             'shape=(2,), dtype=int64))\n',
 'to_dense_sparsetensor_indices_0_0_1_2_va': '<tf.Tensor: shape=(2, 3), dtype=string, numpy=\n'
                                             "array([[b'a', b'', b''],\n"
                                             "       [b'', b'', b'b']], dtype=object)>\n",
 'eye_2': 'SparseTensor(indices=tf.Tensor(\n'
          '[[0 0]\n'
          ' [1 1]], shape=(2, 2), dtype=int64), values=tf.Tensor([1. 1.], shape=(2,), dtype=float32), '
          'dense_shape=tf.Tensor([2 2], shape=(2,), dtype=int64))\n',
 'to_dense_retain_st2_true_false_true': '<tf.Tensor: shape=(3, 4), dtype=int32, numpy=\n'
                                        'array([[1, 0, 0, 0],\n'
                                        '       [0, 0, 0, 0],\n'
                                        '       [0, 0, 3, 0]], dtype=int32)>\n',
 'from_dense_1_0_0_2_indices_dtype': 'tf.int64\n'}
# end TF_OUTPUT


@pytest.mark.parametrize("cell", list(PLAN))
def test_cell(cell):
    before, mask_numbers = PLAN[cell]
    printed = run_cells(CELLS, before + [cell], cell)
    assert_same_output(printed, TF_OUTPUT[cell], mask_numbers=mask_numbers)


_UNSORTED = dict(indices=[[1, 0], [0, 1]], values=[1.5, 2.5], dense_shape=[2, 3])


@pytest.mark.parametrize("fn, error, message", [
    (lambda: tf.sparse.to_dense(tf.SparseTensor(**_UNSORTED)), tf.errors.InvalidArgumentError,
     "indices[1] = [0,1] is out of order. Many sparse ops require sorted indices."),
    (lambda: tf.sparse.to_dense(tf.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 3])),
     tf.errors.InvalidArgumentError, "indices[0] = [0,3] is out of bounds: need 0 <= index < [3,3]"),
    (lambda: tf.sparse.to_dense(tf.SparseTensor(indices=[[0, 1], [0, 1]], values=[1, 2], dense_shape=[3, 3])),
     tf.errors.InvalidArgumentError, "indices[1] = [0,1] is repeated"),
    (lambda: tf.SparseTensor(indices=[[0, 3]], values=[10, 20], dense_shape=[3, 3]), ValueError,
     "Dimensions 1 and 2 are not compatible"),
    (lambda: tf.convert_to_tensor(tf.SparseTensor(**_UNSORTED)), TypeError, "tf.sparse.to_dense"),
])
def test_errors_as_tensorflow(fn, error, message):
    with pytest.raises(error) as info:
        fn()
    assert message in str(info.value)


def test_sparse_plus_dense_does_not_need_sorted_indices():
    out = tf.sparse.add(tf.SparseTensor(**_UNSORTED), tf.ones([2, 3]))
    assert out.numpy().tolist() == [[1.0, 3.5, 1.0], [2.5, 1.0, 1.0]]  # TF 2.21's output


# Gradients (TF 2.21's values).
def test_sparse_dense_matmul_gradients_wrt_dense_and_values():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    vals = tf.Variable([1.5, 2.5])
    with tf.GradientTape() as tape:
        sp = tf.SparseTensor(indices=[[0, 1], [1, 0]], values=vals * 1.0, dense_shape=[2, 3])
        y = tf.reduce_sum(tf.sparse.sparse_dense_matmul(sp, x) ** 2)
    gx, gv = tape.gradient(y, [x, vals])
    np.testing.assert_allclose(gx.numpy(), [[12.5, 25.0], [13.5, 18.0], [0.0, 0.0]])
    np.testing.assert_allclose(gv.numpy(), [75.0, 25.0])


def test_to_dense_and_reduce_sum_gradients():
    vals = tf.Variable([1.5, 2.5])
    with tf.GradientTape() as tape:
        sp = tf.SparseTensor(indices=[[0, 1], [1, 0]], values=vals * 1.0, dense_shape=[2, 3])
        y = (tf.reduce_sum(tf.sparse.to_dense(sp) * tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
             + tf.sparse.reduce_sum(sp) * 3.0)
    np.testing.assert_allclose(tape.gradient(y, vals).numpy(), [5.0, 7.0])


def test_sparse_add_gradient():
    vals = tf.Variable([1.5, 2.5])
    with tf.GradientTape() as tape:
        sp = tf.SparseTensor(indices=[[0, 1], [1, 0]], values=vals * 1.0, dense_shape=[2, 3])
        total = tf.sparse.add(sp, tf.sparse.SparseTensor(indices=[[1, 0]], values=[1.0], dense_shape=[2, 3]))
        y = tf.reduce_sum(total.values ** 2)
    np.testing.assert_allclose(tape.gradient(y, vals).numpy(), [3.0, 7.0])


def test_matmul_agrees_with_dense_matmul():
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(5, 4)).astype(np.float32) * (rng.random((5, 4)) < 0.4)
    b = rng.normal(size=(4, 3)).astype(np.float32)
    sp = tf.sparse.from_dense(dense)
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(sp, b).numpy(), dense @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(sp, b.T, adjoint_b=True).numpy(), dense @ b,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(b.T, sp, adjoint_b=True).numpy(), b.T @ dense.T,
                               rtol=1e-5, atol=1e-6)


def test_keras_dense_takes_sparse_inputs():
    """sparse_tensor guide: ``Dense`` on ``Input(sparse=True)`` (Keras 3 matmul of a SparseTensor);
    outputs recorded from TF 2.21 with ones initializers."""
    import tapejax as tf
    x = tf.keras.Input(shape=(4,), sparse=True)
    assert repr(x).startswith("<KerasTensor shape=(None, 4), dtype=float32, sparse=True, ragged=False, name=")
    y = tf.keras.layers.Dense(4, kernel_initializer='ones', bias_initializer='ones')(x)
    model = tf.keras.Model(x, y)
    data = tf.sparse.SparseTensor(indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], values=[1] * 6,
                                  dense_shape=(6, 4))
    expected = [[4.0] * 4, [1.0] * 4, [1.0] * 4, [1.0] * 4, [2.0] * 4, [3.0] * 4]
    assert model(data).numpy().tolist() == expected
    assert model.predict(data, verbose=0).tolist() == expected
    relu = tf.keras.layers.Dense(2, kernel_initializer='ones', activation='relu')
    assert relu(tf.sparse.SparseTensor([[0, 1]], [-2.0], [2, 3])).numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert "ragged=True" in repr(tf.keras.Input(shape=(3,), ragged=True))


def test_sparse_maximum_minimum_expand_dims_as_tf():
    # The tf.sparse.maximum / minimum / expand_dims docstrings and TF 2.21's outputs (recorded).
    res = tf.sparse.maximum(tf.sparse.SparseTensor([[0]], [0], [7]), tf.sparse.SparseTensor([[1]], [1], [7]))
    assert repr(res.indices) == "<tf.Tensor: shape=(2, 1), dtype=int64, numpy=\narray([[0],\n       [1]])>"
    assert repr(res.values) == "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 1], dtype=int32)>"
    assert repr(res.dense_shape) == "<tf.Tensor: shape=(1,), dtype=int64, numpy=array([7])>"
    a = tf.sparse.SparseTensor([[0, 1], [1, 0]], [-2., 3.], [2, 2])
    b = tf.sparse.SparseTensor([[0, 1], [1, 1]], [-5., -1.], [2, 2])
    mx, mn = tf.sparse.maximum(a, b), tf.sparse.minimum(a, b)   # an absent entry counts as 0
    assert mx.indices.numpy().tolist() == [[0, 1], [1, 0], [1, 1]] and mx.values.numpy().tolist() == [-2.0, 3.0, 0.0]
    assert mn.indices.numpy().tolist() == [[0, 1], [1, 0], [1, 1]] and mn.values.numpy().tolist() == [-5.0, 0.0, -1.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Operands do not have the same ranks; got shapes: 2 2 "
                                                             "and 3"):
        tf.sparse.maximum(a, tf.sparse.SparseTensor([[0]], [1.], [3]))
    sp = tf.sparse.SparseTensor(indices=[[3, 4, 1]], values=[7], dense_shape=[10, 10, 3])
    assert tf.sparse.expand_dims(sp, axis=0).shape.as_list() == [1, 10, 10, 3]
    assert tf.sparse.expand_dims(sp, axis=1).shape.as_list() == [10, 1, 10, 3]
    assert tf.sparse.expand_dims(sp, axis=-1).shape.as_list() == [10, 10, 3, 1]
    assert tf.sparse.expand_dims(sp).shape.as_list() == [10, 10, 3, 1]
    assert tf.sparse.expand_dims(a, 1).indices.numpy().tolist() == [[0, 0, 1], [1, 0, 0]]


def test_sparse_softmax_as_tf():
    # The tf.sparse.softmax docstring and TF 2.21 (recorded), unordered input included: TF's kernel
    # writes the values in row-major order next to the indices as given.
    st = tf.sparse.from_dense([[[0., np.e], [1., 0.]], [[np.e, 0.], [np.e, np.e]]])
    res = tf.sparse.softmax(st)
    assert res.indices.numpy().tolist() == [[0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert repr(res.values) == ("<tf.Tensor: shape=(5,), dtype=float32, numpy=array([1. , 1. , 1. , 0.5, 0.5], "
                                "dtype=float32)>")
    assert tf.sparse.to_dense(res).numpy().tolist() == [[[0., 1.], [1., 0.]], [[1., 0.], [0.5, 0.5]]]
    st = tf.sparse.SparseTensor([[0, 2], [0, 0], [1, 1], [2, 0]], [1., 2., 3., 4.], [3, 3])
    np.testing.assert_allclose(tf.sparse.softmax(st).values.numpy(), [0.7310585975646973, 0.2689414322376251,
                                                                      1.0, 1.0], rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input should have rank >= 2, but received shape: 3"):
        tf.sparse.softmax(tf.sparse.SparseTensor([[0]], [1.], [3]))


def test_sparse_tensor_set_shape_as_tf():
    # The tf.SparseTensor.set_shape docstring and TF 2.21 (recorded).
    st = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    st.set_shape([3, 4])
    st.set_shape([3, None])
    st.set_shape(tf.TensorShape(None))
    with pytest.raises(ValueError, match=r"^Shapes \(3, 4\) and \(1, 4\) are not compatible$"):
        st.set_shape([1, 4])
    with pytest.raises(ValueError, match=r"^Shapes \(3, 4\) and \(3,\) are not compatible$"):
        st.set_shape([3])
