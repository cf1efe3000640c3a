"""tf.RaggedTensor and tf.ragged, against TensorFlow 2.21.

The cells named ``raggedNN`` are the first sections of the guide "Ragged tensors"
(tensorflow/docs site/en/guide/ragged_tensor.ipynb, code cell NN), ``tensorNN`` the ragged cells
of "Introduction to Tensors" (site/en/guide/tensor.ipynb), unchanged; the other cells are one call
each on the guide's ``digits`` and ``words``. Each runs with ``tf`` bound to tapejax and must print
what TensorFlow printed (``TF_OUTPUT``, recorded by scripts/record_text_tests.py; see
guide_harness).

Cells not run, and why:

- ragged39, ragged52-57: ``tf.strings.to_hash_bucket_fast`` (TensorFlow's FarmHash fingerprint)
  is not provided
- ragged59-75: ``tf.io.parse_example`` and ragged ``tf.data`` batching are not provided
- ragged77-88: ragged tensors as ``tf.function`` / SavedModel signatures (``tf.RaggedTensorSpec``)
  are not provided
"""
import numpy as np
import pytest

import tapejax as tf
from guide_harness import assert_same_output, run_cells

SETUP = '''digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
words = tf.ragged.constant([["So", "long"], ["thanks", "for", "all", "the", "fish"]])
f = tf.ragged.constant([[1.5, 2.0], [], [3.25]])'''

CELLS = {
    "setup": SETUP,
    "ragged08": 'digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])\nwords = tf.ragged.constant([["So", "long"], ["thanks", "for", "all", "the", "fish"]])\nprint(tf.add(digits, 3))\nprint(tf.reduce_mean(digits, axis=1))\nprint(tf.concat([digits, [[5, 3]]], axis=0))\nprint(tf.tile(digits, [1, 2]))\nprint(tf.strings.substr(words, 0, 2))\nprint(tf.map_fn(tf.math.square, digits))',
    "ragged12": 'print(digits[0])       # First row',
    "ragged13": 'print(digits[:, :2])   # First two values in each row.',
    "ragged14": 'print(digits[:, -2:])  # Last two values in each row.',
    "ragged16": 'print(digits + 3)',
    "ragged17": 'print(digits + tf.ragged.constant([[1, 2, 3, 4], [], [5, 6, 7], [8], []]))',
    "ragged19": 'times_two_plus_one = lambda x: x * 2 + 1\nprint(tf.ragged.map_flat_values(times_two_plus_one, digits))',
    "ragged21": 'digits.to_list()',
    "ragged22": 'digits.numpy()',
    "ragged24": 'sentences = tf.ragged.constant([\n    ["Let\'s", "build", "some", "ragged", "tensors", "!"],\n    ["We", "can", "use", "tf.ragged.constant", "."]])\nprint(sentences)',
    "ragged25": 'paragraphs = tf.ragged.constant([\n    [[\'I\', \'have\', \'a\', \'cat\'], [\'His\', \'name\', \'is\', \'Mat\']],\n    [[\'Do\', \'you\', \'want\', \'to\', \'come\', \'visit\'], ["I\'m", \'free\', \'tomorrow\']],\n])\nprint(paragraphs)',
    "ragged27": 'print(tf.RaggedTensor.from_value_rowids(\n    values=[3, 1, 4, 1, 5, 9, 2],\n    value_rowids=[0, 0, 0, 0, 2, 2, 3]))',
    "ragged29": 'print(tf.RaggedTensor.from_row_lengths(\n    values=[3, 1, 4, 1, 5, 9, 2],\n    row_lengths=[4, 0, 2, 1]))',
    "ragged31": 'print(tf.RaggedTensor.from_row_splits(\n    values=[3, 1, 4, 1, 5, 9, 2],\n    row_splits=[0, 4, 4, 6, 7]))',
    "ragged34": 'print(tf.ragged.constant([["Hi"], ["How", "are", "you"]]))  # ok: type=string, rank=2',
    "ragged35": 'print(tf.ragged.constant([[[1, 2], [3]], [[4, 5]]]))        # ok: type=int32, rank=3',
    "ragged36": 'try:\n  tf.ragged.constant([["one", "two"], [3, 4]])              # bad: multiple types\nexcept ValueError as exception:\n  print(exception)',
    "ragged37": 'try:\n  tf.ragged.constant(["A", ["B", "C"]])                     # bad: multiple nesting depths\nexcept ValueError as exception:\n  print(exception)',
    "ragged42": 'tf.ragged.constant([["Hi"], ["How", "are", "you"]]).shape',
    "ragged44": 'print(tf.ragged.constant([["Hi"], ["How", "are", "you"]]).bounding_shape())',
    "ragged46": 'ragged_x = tf.ragged.constant([["John"], ["a", "big", "dog"], ["my", "cat"]])\nragged_y = tf.ragged.constant([["fell", "asleep"], ["barked"], ["is", "fuzzy"]])\nprint(tf.concat([ragged_x, ragged_y], axis=1))',
    "ragged48": "sparse_x = ragged_x.to_sparse()\nsparse_y = ragged_y.to_sparse()\nsparse_result = tf.sparse.concat(sp_inputs=[sparse_x, sparse_y], axis=1)\nprint(tf.sparse.to_dense(sparse_result, ''))",
    "tensor92": 'ragged_list = [\n    [0, 1, 2, 3],\n    [4, 5],\n    [6, 7, 8],\n    [9]]',
    "tensor93": 'try:\n  tensor = tf.constant(ragged_list)\nexcept Exception as e:\n  print(f"{type(e).__name__}: {e}")',
    "tensor95": 'ragged_tensor = tf.ragged.constant(ragged_list)\nprint(ragged_tensor)',
    "tensor97": 'print(ragged_tensor.shape)',
    'digits': 'digits',
    'str_digits': 'str(digits)',
    'words': 'words',
    'f': 'f',
    'tf_add_digits_3': 'tf.add(digits, 3)',
    'tf_reduce_mean_digits_axis_1': 'tf.reduce_mean(digits, axis=1)',
    'tf_reduce_sum_digits_axis_1': 'tf.reduce_sum(digits, axis=1)',
    'tf_reduce_max_digits_axis_1': 'tf.reduce_max(digits, axis=1)',
    'tf_reduce_min_digits_axis_1': 'tf.reduce_min(digits, axis=-1)',
    'tf_reduce_sum_digits_axis_0': 'tf.reduce_sum(digits, axis=0)',
    'tf_reduce_mean_f_axis_1': 'tf.reduce_mean(f, axis=1)',
    'tf_reduce_max_f_axis_1': 'tf.reduce_max(f, axis=1)',
    'tf_reduce_sum_digits': 'tf.reduce_sum(digits)',
    'tf_reduce_mean_f': 'tf.reduce_mean(f)',
    'tf_concat_digits_5_3_axis_0': 'tf.concat([digits, [[5, 3]]], axis=0)',
    'tf_tile_digits_1_2': 'tf.tile(digits, [1, 2])',
    'tf_strings_substr_words_0_2': 'tf.strings.substr(words, 0, 2)',
    'digits_0': 'digits[0]',
    'digits_2': 'digits[:, :2]',
    'digits_2_2': 'digits[:, -2:]',
    'digits_1_3': 'digits[1:3]',
    'digits_2_1': 'digits[2, 1]',
    'digits_3': 'digits + 3',
    'digits_2_3': 'digits * 2',
    'digits_4': '-digits',
    'digits_tf_ragged_constant_1_2_3_4_5_6_7_': 'digits + tf.ragged.constant([[1, 2, 3, 4], [], [5, 6, 7], [8], []])',
    'tf_ragged_map_flat_values_lambda_x_x_2_1': 'tf.ragged.map_flat_values(lambda x: x * 2 + 1, digits)',
    'digits_to_list': 'digits.to_list()',
    'digits_numpy': 'digits.numpy()',
    'words_numpy': 'words.numpy()',
    'tf_ragged_constant_1_2_3_4_5': 'tf.ragged.constant([[[1, 2], [3]], [[4, 5]]])',
    'tf_ragged_constant_1_2_3_4_5_shape': 'tf.ragged.constant([[[1, 2], [3]], [[4, 5]]]).shape',
    'tf_ragged_constant_1_2_3_4_5_ragged_rank': 'tf.ragged.constant([[[1, 2], [3]], [[4, 5]]]).ragged_rank',
    'tf_ragged_constant_1_2_3_4_5_values': 'tf.ragged.constant([[[1, 2], [3]], [[4, 5]]]).values',
    'tf_ragged_constant_1_2_3_4_5_flat_values': 'tf.ragged.constant([[[1, 2], [3]], [[4, 5]]]).flat_values',
    'tf_ragged_constant_1_2_3_4_5_nested_row_': 'tf.ragged.constant([[[1, 2], [3]], [[4, 5]]]).nested_row_splits',
    'tf_ragged_constant_1_2_3_4_5_to_tensor': 'tf.ragged.constant([[[1, 2], [3]], [[4, 5]]]).to_tensor()',
    'tf_ragged_constant_1_2_3_ragged_rank_1_d': 'tf.ragged.constant([[1, 2], [3]], ragged_rank=1, dtype=tf.float32)',
    'tf_ragged_constant_1_2_3_4_5_6_ragged_ra': 'tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)',
    'tf_ragged_constant_1_2_3_4_5_6_ragged_ra_2': 'tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1).shape',
    'tf_ragged_constant_1_2_3_4_5_6_ragged_ra_3': 'tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1).to_tensor()',
    'tf_ragged_constant': 'tf.ragged.constant([[], []])',
    'tf_ragged_constant_2': 'tf.ragged.constant([])',
    'digits_shape': 'digits.shape',
    'digits_dtype': 'digits.dtype',
    'words_dtype': 'words.dtype',
    'digits_values': 'digits.values',
    'digits_row_splits': 'digits.row_splits',
    'digits_row_lengths': 'digits.row_lengths()',
    'digits_value_rowids': 'digits.value_rowids()',
    'digits_nrows': 'digits.nrows()',
    'digits_row_starts': 'digits.row_starts()',
    'digits_row_limits': 'digits.row_limits()',
    'digits_bounding_shape': 'digits.bounding_shape()',
    'digits_to_tensor': 'digits.to_tensor()',
    'digits_to_tensor_default_value_1': 'digits.to_tensor(default_value=-1)',
    'words_to_tensor': 'words.to_tensor()',
    'digits_to_tensor_shape_3_2': 'digits.to_tensor(shape=[3, 2])',
    'digits_to_sparse': 'digits.to_sparse()',
    'digits_ragged_rank': 'digits.ragged_rank',
    'digits_flat_values': 'digits.flat_values',
    'tf_raggedtensor_from_value_rowids_values': 'tf.RaggedTensor.from_value_rowids(values=[3, 1, 4, 1, 5, 9, 2], value_rowids=[0, 0, 0, 0, 2, 2, 3])',
    'tf_raggedtensor_from_value_rowids_values_2': 'tf.RaggedTensor.from_value_rowids(values=[3, 1, 4, 1, 5, 9, 2], value_rowids=[0, 0, 0, 0, 2, 2, 3], nrows=6)',
    'tf_raggedtensor_from_row_lengths_values_': 'tf.RaggedTensor.from_row_lengths(values=[3, 1, 4, 1, 5, 9, 2], row_lengths=[4, 0, 2, 1])',
    'tf_raggedtensor_from_row_splits_values_3': 'tf.RaggedTensor.from_row_splits(values=[3, 1, 4, 1, 5, 9, 2], row_splits=[0, 4, 4, 6, 7])',
    'tf_raggedtensor_from_tensor_1_0_0_2_3_0_': 'tf.RaggedTensor.from_tensor([[1, 0, 0], [2, 3, 0]], padding=0)',
    'tf_raggedtensor_from_tensor_1_0_0_2_3_0__2': 'tf.RaggedTensor.from_tensor([[1, 0, 0], [2, 3, 0]], lengths=[1, 3])',
    'tf_raggedtensor_from_row_lengths_values__3': 'tf.RaggedTensor.from_row_lengths(values=tf.constant([1.0, 2.0, 3.0]), row_lengths=[1, 2]).row_splits',
    'tf_concat_tf_ragged_constant_john_a_big_': 'tf.concat([tf.ragged.constant([["John"], ["a", "big", "dog"], ["my", "cat"]]), tf.ragged.constant([["fell", "asleep"], ["barked"], ["is", "fuzzy"]])], axis=1)',
    'tf_concat_digits_digits_axis_1': 'tf.concat([digits, digits], axis=1)',
    'tf_ragged_constant_hi_how_are_you_shape': 'tf.ragged.constant([["Hi"], ["How", "are", "you"]]).shape',
    'tf_ragged_constant_hi_how_are_you_boundi': 'tf.ragged.constant([["Hi"], ["How", "are", "you"]]).bounding_shape()',
    'isinstance_digits_tf_raggedtensor': 'isinstance(digits, tf.RaggedTensor)',
    'tf_is_tensor_digits': 'tf.is_tensor(digits)',
    'list_digits': 'list(digits)',
    'tf_ragged_constant_1_5_2_0_3_25_dtype_tf': 'tf.ragged.constant([[1.5, 2.0], [], [3.25]], dtype=tf.float64)',
    'tf_ragged_range_3_0_2': 'tf.ragged.range([3, 0, 2])',
    'tf_ragged_range_1_2_4_3': 'tf.ragged.range([1, 2], [4, 3])',
    'tf_ragged_constant_1_2_3_tf_ragged_const': 'tf.ragged.constant([[1,2],[3]]) == tf.ragged.constant([[1,2],[3]])',
    'digits_with_flat_values_digits_flat_valu': 'digits.with_flat_values(digits.flat_values * 10)',
    'digits_with_values_digits_values_10': 'digits.with_values(digits.values * 10)',
    'tf_ragged_constant_true_false': 'tf.ragged.constant([[True, False], []])',
    'tf_ragged_stack_tf_constant_1_2_tf_const': 'tf.ragged.stack([tf.constant([1, 2]), tf.constant([3])])',
    'tf_map_fn_tf_math_square_digits': 'tf.map_fn(tf.math.square, digits)',
}

# cell: (cells run before it, ignore numbers)
PLAN = {name: ([], False) if name.startswith("tensor") or name == "ragged08" else
        (["ragged08"], False) if name.startswith("ragged") else (["setup"], False)
        for name in CELLS if name != "setup"}
PLAN["tensor95"] = (["tensor92"], False)
PLAN["tensor97"] = (["tensor92", "tensor95"], False)
PLAN["ragged48"] = (["ragged46"], False)

# TF_OUTPUT: recorded with TensorFlow 2.21 by scripts/record_text_tests.py (do not edit by hand)
TF_OUTPUT = {'ragged08': '<tf.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>\n'
             'tf.Tensor([2.25              nan 5.33333333 6.                nan], shape=(5,), '
             'dtype=float64)\n'
             '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], [], [5, 3]]>\n'
             '<tf.RaggedTensor [[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, 6], []]>\n'
             "<tf.RaggedTensor [[b'So', b'lo'], [b'th', b'fo', b'al', b'th', b'fi']]>\n"
             '<tf.RaggedTensor [[9, 1, 16, 1], [], [25, 81, 4], [36], []]>\n',
 'ragged12': 'tf.Tensor([3 1 4 1], shape=(4,), dtype=int32)\n',
 'ragged13': '<tf.RaggedTensor [[3, 1], [], [5, 9], [6], []]>\n',
 'ragged14': '<tf.RaggedTensor [[4, 1], [], [9, 2], [6], []]>\n',
 'ragged16': '<tf.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>\n',
 'ragged17': '<tf.RaggedTensor [[4, 3, 7, 5], [], [10, 15, 9], [14], []]>\n',
 'ragged19': '<tf.RaggedTensor [[7, 3, 9, 3], [], [11, 19, 5], [13], []]>\n',
 'ragged21': '[[3, 1, 4, 1], [], [5, 9, 2], [6], []]\n',
 'ragged22': 'array([array([3, 1, 4, 1], dtype=int32), array([], dtype=int32),\n'
             '       array([5, 9, 2], dtype=int32), array([6], dtype=int32),\n'
             '       array([], dtype=int32)], dtype=object)\n',
 'ragged24': '<tf.RaggedTensor [[b"Let\'s", b\'build\', b\'some\', b\'ragged\', b\'tensors\', b\'!\'],\n'
             " [b'We', b'can', b'use', b'tf.ragged.constant', b'.']]>\n",
 'ragged25': "<tf.RaggedTensor [[[b'I', b'have', b'a', b'cat'], [b'His', b'name', b'is', b'Mat']],\n"
             " [[b'Do', b'you', b'want', b'to', b'come', b'visit'],\n"
             '  [b"I\'m", b\'free\', b\'tomorrow\']]]>\n',
 'ragged27': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>\n',
 'ragged29': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>\n',
 'ragged31': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>\n',
 'ragged34': "<tf.RaggedTensor [[b'Hi'], [b'How', b'are', b'you']]>\n",
 'ragged35': '<tf.RaggedTensor [[[1, 2], [3]], [[4, 5]]]>\n',
 'ragged36': "Can't convert Python sequence with mixed types to Tensor.\n",
 'ragged37': 'all scalar values must have the same nesting depth\n',
 'ragged42': 'TensorShape([2, None])\n',
 'ragged44': 'tf.Tensor([2 3], shape=(2,), dtype=int64)\n',
 'ragged46': "<tf.RaggedTensor [[b'John', b'fell', b'asleep'], [b'a', b'big', b'dog', b'barked'],\n"
             " [b'my', b'cat', b'is', b'fuzzy']]>\n",
 'ragged48': 'tf.Tensor(\n'
             "[[b'John' b'' b'' b'fell' b'asleep']\n"
             " [b'a' b'big' b'dog' b'barked' b'']\n"
             " [b'my' b'cat' b'' b'is' b'fuzzy']], shape=(3, 5), dtype=string)\n",
 'tensor92': '',
 'tensor93': "NameError: name 'ragged_list' is not defined\n",
 'tensor95': '<tf.RaggedTensor [[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]]>\n',
 'tensor97': '(4, None)\n',
 'digits': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], []]>\n',
 'str_digits': "'<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], []]>'\n",
 'words': "<tf.RaggedTensor [[b'So', b'long'], [b'thanks', b'for', b'all', b'the', b'fish']]>\n",
 'f': '<tf.RaggedTensor [[1.5, 2.0], [], [3.25]]>\n',
 'tf_add_digits_3': '<tf.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>\n',
 'tf_reduce_mean_digits_axis_1': '<tf.Tensor: shape=(5,), dtype=float64, numpy=array([2.25      ,        '
                                 'nan, 5.33333333, 6.        ,        nan])>\n',
 'tf_reduce_sum_digits_axis_1': '<tf.Tensor: shape=(5,), dtype=int32, numpy=array([ 9,  0, 16,  6,  0], '
                                'dtype=int32)>\n',
 'tf_reduce_max_digits_axis_1': '<tf.Tensor: shape=(5,), dtype=int32, numpy=\n'
                                'array([          4, -2147483648,           9,           6, -2147483648],\n'
                                '      dtype=int32)>\n',
 'tf_reduce_min_digits_axis_1': '<tf.Tensor: shape=(5,), dtype=int32, numpy=\n'
                                'array([         1, 2147483647,          2,          6, 2147483647],\n'
                                '      dtype=int32)>\n',
 'tf_reduce_sum_digits_axis_0': '<tf.Tensor: shape=(4,), dtype=int32, numpy=array([14, 10,  6,  1], '
                                'dtype=int32)>\n',
 'tf_reduce_mean_f_axis_1': '<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1.75,  nan, 3.25], '
                            'dtype=float32)>\n',
 'tf_reduce_max_f_axis_1': '<tf.Tensor: shape=(3,), dtype=float32, numpy=array([ 2.0000000e+00, '
                           '-3.4028235e+38,  3.2500000e+00], dtype=float32)>\n',
 'tf_reduce_sum_digits': '<tf.Tensor: shape=(), dtype=int32, numpy=31>\n',
 'tf_reduce_mean_f': '<tf.Tensor: shape=(), dtype=float32, numpy=2.25>\n',
 'tf_concat_digits_5_3_axis_0': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], [], [5, 3]]>\n',
 'tf_tile_digits_1_2': '<tf.RaggedTensor [[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, 6], []]>\n',
 'tf_strings_substr_words_0_2': "<tf.RaggedTensor [[b'So', b'lo'], [b'th', b'fo', b'al', b'th', b'fi']]>\n",
 'digits_0': '<tf.Tensor: shape=(4,), dtype=int32, numpy=array([3, 1, 4, 1], dtype=int32)>\n',
 'digits_2': '<tf.RaggedTensor [[3, 1], [], [5, 9], [6], []]>\n',
 'digits_2_2': '<tf.RaggedTensor [[4, 1], [], [9, 2], [6], []]>\n',
 'digits_1_3': '<tf.RaggedTensor [[], [5, 9, 2]]>\n',
 'digits_2_1': '<tf.Tensor: shape=(), dtype=int32, numpy=9>\n',
 'digits_3': '<tf.RaggedTensor [[6, 4, 7, 4], [], [8, 12, 5], [9], []]>\n',
 'digits_2_3': '<tf.RaggedTensor [[6, 2, 8, 2], [], [10, 18, 4], [12], []]>\n',
 'digits_4': '<tf.RaggedTensor [[-3, -1, -4, -1], [], [-5, -9, -2], [-6], []]>\n',
 'digits_tf_ragged_constant_1_2_3_4_5_6_7_': '<tf.RaggedTensor [[4, 3, 7, 5], [], [10, 15, 9], [14], []]>\n',
 'tf_ragged_map_flat_values_lambda_x_x_2_1': '<tf.RaggedTensor [[7, 3, 9, 3], [], [11, 19, 5], [13], []]>\n',
 'digits_to_list': '[[3, 1, 4, 1], [], [5, 9, 2], [6], []]\n',
 'digits_numpy': 'array([array([3, 1, 4, 1], dtype=int32), array([], dtype=int32),\n'
                 '       array([5, 9, 2], dtype=int32), array([6], dtype=int32),\n'
                 '       array([], dtype=int32)], dtype=object)\n',
 'words_numpy': "array([array([b'So', b'long'], dtype=object),\n"
                "       array([b'thanks', b'for', b'all', b'the', b'fish'], dtype=object)],\n"
                '      dtype=object)\n',
 'tf_ragged_constant_1_2_3_4_5': '<tf.RaggedTensor [[[1, 2], [3]], [[4, 5]]]>\n',
 'tf_ragged_constant_1_2_3_4_5_shape': 'TensorShape([2, None, None])\n',
 'tf_ragged_constant_1_2_3_4_5_ragged_rank': '2\n',
 'tf_ragged_constant_1_2_3_4_5_values': '<tf.RaggedTensor [[1, 2], [3], [4, 5]]>\n',
 'tf_ragged_constant_1_2_3_4_5_flat_values': '<tf.Tensor: shape=(5,), dtype=int32, numpy=array([1, 2, 3, 4, '
                                             '5], dtype=int32)>\n',
 'tf_ragged_constant_1_2_3_4_5_nested_row_': '(<tf.Tensor: shape=(3,), dtype=int64, numpy=array([0, 2, 3])>, '
                                             '<tf.Tensor: shape=(4,), dtype=int64, numpy=array([0, 2, 3, '
                                             '5])>)\n',
 'tf_ragged_constant_1_2_3_4_5_to_tensor': '<tf.Tensor: shape=(2, 2, 2), dtype=int32, numpy=\n'
                                           'array([[[1, 2],\n'
                                           '        [3, 0]],\n'
                                           '\n'
                                           '       [[4, 5],\n'
                                           '        [0, 0]]], dtype=int32)>\n',
 'tf_ragged_constant_1_2_3_ragged_rank_1_d': '<tf.RaggedTensor [[1.0, 2.0], [3.0]]>\n',
 'tf_ragged_constant_1_2_3_4_5_6_ragged_ra': '<tf.RaggedTensor [[[1, 2],\n  [3, 4]], [[5, 6]]]>\n',
 'tf_ragged_constant_1_2_3_4_5_6_ragged_ra_2': 'TensorShape([2, None, 2])\n',
 'tf_ragged_constant_1_2_3_4_5_6_ragged_ra_3': '<tf.Tensor: shape=(2, 2, 2), dtype=int32, numpy=\n'
                                               'array([[[1, 2],\n'
                                               '        [3, 4]],\n'
                                               '\n'
                                               '       [[5, 6],\n'
                                               '        [0, 0]]], dtype=int32)>\n',
 'tf_ragged_constant': '<tf.RaggedTensor [[], []]>\n',
 'tf_ragged_constant_2': '<tf.Tensor: shape=(0,), dtype=float32, numpy=array([], dtype=float32)>\n',
 'digits_shape': 'TensorShape([5, None])\n',
 'digits_dtype': 'tf.int32\n',
 'words_dtype': 'tf.string\n',
 'digits_values': '<tf.Tensor: shape=(8,), dtype=int32, numpy=array([3, 1, 4, 1, 5, 9, 2, 6], '
                  'dtype=int32)>\n',
 'digits_row_splits': '<tf.Tensor: shape=(6,), dtype=int64, numpy=array([0, 4, 4, 7, 8, 8])>\n',
 'digits_row_lengths': '<tf.Tensor: shape=(5,), dtype=int64, numpy=array([4, 0, 3, 1, 0])>\n',
 'digits_value_rowids': '<tf.Tensor: shape=(8,), dtype=int64, numpy=array([0, 0, 0, 0, 2, 2, 2, 3])>\n',
 'digits_nrows': '<tf.Tensor: shape=(), dtype=int64, numpy=5>\n',
 'digits_row_starts': '<tf.Tensor: shape=(5,), dtype=int64, numpy=array([0, 4, 4, 7, 8])>\n',
 'digits_row_limits': '<tf.Tensor: shape=(5,), dtype=int64, numpy=array([4, 4, 7, 8, 8])>\n',
 'digits_bounding_shape': '<tf.Tensor: shape=(2,), dtype=int64, numpy=array([5, 4])>\n',
 'digits_to_tensor': '<tf.Tensor: shape=(5, 4), dtype=int32, numpy=\n'
                     'array([[3, 1, 4, 1],\n'
                     '       [0, 0, 0, 0],\n'
                     '       [5, 9, 2, 0],\n'
                     '       [6, 0, 0, 0],\n'
                     '       [0, 0, 0, 0]], dtype=int32)>\n',
 'digits_to_tensor_default_value_1': '<tf.Tensor: shape=(5, 4), dtype=int32, numpy=\n'
                                     'array([[ 3,  1,  4,  1],\n'
                                     '       [-1, -1, -1, -1],\n'
                                     '       [ 5,  9,  2, -1],\n'
                                     '       [ 6, -1, -1, -1],\n'
                                     '       [-1, -1, -1, -1]], dtype=int32)>\n',
 'words_to_tensor': '<tf.Tensor: shape=(2, 5), dtype=string, numpy=\n'
                    "array([[b'So', b'long', b'', b'', b''],\n"
                    "       [b'thanks', b'for', b'all', b'the', b'fish']], dtype=object)>\n",
 'digits_to_tensor_shape_3_2': '<tf.Tensor: shape=(3, 2), dtype=int32, numpy=\n'
                               'array([[3, 1],\n'
                               '       [0, 0],\n'
                               '       [5, 9]], dtype=int32)>\n',
 'digits_to_sparse': 'SparseTensor(indices=tf.Tensor(\n'
                     '[[0 0]\n'
                     ' [0 1]\n'
                     ' [0 2]\n'
                     ' [0 3]\n'
                     ' [2 0]\n'
                     ' [2 1]\n'
                     ' [2 2]\n'
                     ' [3 0]], shape=(8, 2), dtype=int64), values=tf.Tensor([3 1 4 1 5 9 2 6], shape=(8,), '
                     'dtype=int32), dense_shape=tf.Tensor([5 4], shape=(2,), dtype=int64))\n',
 'digits_ragged_rank': '1\n',
 'digits_flat_values': '<tf.Tensor: shape=(8,), dtype=int32, numpy=array([3, 1, 4, 1, 5, 9, 2, 6], '
                       'dtype=int32)>\n',
 'tf_raggedtensor_from_value_rowids_values': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>\n',
 'tf_raggedtensor_from_value_rowids_values_2': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2], [], []]>\n',
 'tf_raggedtensor_from_row_lengths_values_': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>\n',
 'tf_raggedtensor_from_row_splits_values_3': '<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9], [2]]>\n',
 'tf_raggedtensor_from_tensor_1_0_0_2_3_0_': '<tf.RaggedTensor [[1], [2, 3]]>\n',
 'tf_raggedtensor_from_tensor_1_0_0_2_3_0__2': '<tf.RaggedTensor [[1], [2, 3, 0]]>\n',
 'tf_raggedtensor_from_row_lengths_values__3': '<tf.Tensor: shape=(3,), dtype=int64, numpy=array([0, 1, '
                                               '3])>\n',
 'tf_concat_tf_ragged_constant_john_a_big_': "<tf.RaggedTensor [[b'John', b'fell', b'asleep'], [b'a', "
                                             "b'big', b'dog', b'barked'],\n"
                                             " [b'my', b'cat', b'is', b'fuzzy']]>\n",
 'tf_concat_digits_digits_axis_1': '<tf.RaggedTensor [[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, '
                                   '6], []]>\n',
 'tf_ragged_constant_hi_how_are_you_shape': 'TensorShape([2, None])\n',
 'tf_ragged_constant_hi_how_are_you_boundi': '<tf.Tensor: shape=(2,), dtype=int64, numpy=array([2, 3])>\n',
 'isinstance_digits_tf_raggedtensor': 'True\n',
 'tf_is_tensor_digits': 'True\n',
 'list_digits': '[<tf.Tensor: shape=(4,), dtype=int32, numpy=array([3, 1, 4, 1], dtype=int32)>, <tf.Tensor: '
                'shape=(0,), dtype=int32, numpy=array([], dtype=int32)>, <tf.Tensor: shape=(3,), '
                'dtype=int32, numpy=array([5, 9, 2], dtype=int32)>, <tf.Tensor: shape=(1,), dtype=int32, '
                'numpy=array([6], dtype=int32)>, <tf.Tensor: shape=(0,), dtype=int32, numpy=array([], '
                'dtype=int32)>]\n',
 'tf_ragged_constant_1_5_2_0_3_25_dtype_tf': '<tf.RaggedTensor [[1.5, 2.0], [], [3.25]]>\n',
 'tf_ragged_range_3_0_2': '<tf.RaggedTensor [[0, 1, 2], [], [0, 1]]>\n',
 'tf_ragged_range_1_2_4_3': '<tf.RaggedTensor [[1, 2, 3], [2]]>\n',
 'tf_ragged_constant_1_2_3_tf_ragged_const': '<tf.RaggedTensor [[True, True], [True]]>\n',
 'digits_with_flat_values_digits_flat_valu': '<tf.RaggedTensor [[30, 10, 40, 10], [], [50, 90, 20], [60], '
                                             '[]]>\n',
 'digits_with_values_digits_values_10': '<tf.RaggedTensor [[30, 10, 40, 10], [], [50, 90, 20], [60], []]>\n',
 'tf_ragged_constant_true_false': '<tf.RaggedTensor [[True, False], []]>\n',
 'tf_ragged_stack_tf_constant_1_2_tf_const': '<tf.RaggedTensor [[1, 2], [3]]>\n',
 'tf_map_fn_tf_math_square_digits': '<tf.RaggedTensor [[9, 1, 16, 1], [], [25, 81, 4], [36], []]>\n'}
# end TF_OUTPUT


@pytest.mark.parametrize("cell", list(PLAN))
def test_cell(cell):
    before, mask_numbers = PLAN[cell]
    printed = run_cells(CELLS, before + [cell], cell)
    assert_same_output(printed, TF_OUTPUT[cell], mask_numbers=mask_numbers)


@pytest.mark.parametrize("fn, error, message", [
    (lambda: tf.ragged.constant([["one", "two"], [3, 4]]), ValueError,
     "Can't convert Python sequence with mixed types to Tensor."),
    (lambda: tf.ragged.constant(["A", ["B", "C"]]), ValueError, "all scalar values must have the same nesting depth"),
    (lambda: tf.RaggedTensor.from_row_splits(values=[3, 1, 4], row_splits=[0, 4]), tf.errors.InvalidArgumentError,
     "Arguments to _from_row_partition do not form a valid RaggedTensor"),
    (lambda: tf.RaggedTensor.from_row_lengths(values=[3, 1, 4], row_lengths=[1, 1]), tf.errors.InvalidArgumentError,
     "Arguments to _from_row_partition do not form a valid RaggedTensor"),
    (lambda: len(tf.ragged.constant([[1], []])), TypeError, "has no len()"),
    (lambda: tf.constant([[1], [2, 3]]), ValueError, "Can't convert non-rectangular Python sequence to Tensor."),
    (lambda: tf.ragged.constant([[1], [2, 3]]) + tf.ragged.constant([[1, 2], [3]]), tf.errors.InvalidArgumentError,
     "Condition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\nCorresponding x values:\n[1]\n"
     "Corresponding y values:\n[2]\nFirst 3 elements of x:\n[0 1 3]\nFirst 3 elements of y:\n[0 2 3]"),
    (lambda: tf.RaggedTensor([1], [0, 1]), ValueError, "RaggedTensor constructor is private"),
])
def test_errors_as_tensorflow(fn, error, message):
    with pytest.raises(error) as info:
        fn()
    assert message in str(info.value)


def test_ops_without_ragged_support_say_what_to_do():
    digits = tf.ragged.constant([[3, 1], [4]])
    with pytest.raises(TypeError, match="map_flat_values"):
        tf.matmul(digits, digits)
    with pytest.raises(TypeError, match="to_tensor"):
        tf.convert_to_tensor(digits)


# Gradients through ragged tensors (TF 2.21's values; TF returns the second as IndexedSlices).
def test_gradient_through_row_reductions():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        r = tf.RaggedTensor.from_row_lengths(x * 2.0, [2, 1])
        y = tf.reduce_sum(tf.reduce_mean(r * r, axis=1))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [4.0, 8.0, 24.0])


def test_gradient_through_to_tensor():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        r = tf.RaggedTensor.from_row_lengths(x, [2, 0, 1])
        y = tf.reduce_sum(r.to_tensor(default_value=0.0) * tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(y, x)).numpy(), [1.0, 2.0, 5.0])


def test_gradient_through_max_and_column_sums():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        r = tf.RaggedTensor.from_row_lengths(x, [2, 0, 1])
        y = tf.reduce_sum(tf.reduce_max(r, axis=1) * 1.0) + tf.reduce_sum(
            tf.reduce_sum(r, axis=0) * tf.constant([1.0, 10.0]))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 11.0, 2.0])


def test_ragged_arguments_of_a_compiled_function():
    # A RaggedTensor is a pytree: the values are traced, the row partition is static.
    f = tf.function(lambda rt: (rt * 2 + 1, tf.reduce_sum(rt, axis=1)))
    out, sums = f(tf.ragged.constant([[1, 2], [3]]))
    assert out.to_list() == [[3, 5], [7]] and sums.numpy().tolist() == [3, 3]
    out, sums = f(tf.ragged.constant([[1], [3, 4, 5]]))
    assert out.to_list() == [[3], [7, 9, 11]] and sums.numpy().tolist() == [1, 12]


def test_map_fn_with_a_dense_signature():
    digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    out = tf.map_fn(lambda r: tf.reduce_sum(r), digits, fn_output_signature=tf.int32)
    assert out.numpy().tolist() == [9, 0, 16, 6, 0]  # TF 2.21's output


# Ragged broadcasting (ragged_tensor guide, "Broadcasting"): TF 2.21's results and errors.
_X = [[1, 2], [3, 4, 5, 6], [7]]


@pytest.mark.parametrize("make, expected", [
    (lambda: tf.ragged.constant(_X) * tf.constant([[10], [20], [30]]),
     "<tf.RaggedTensor [[10, 20], [60, 80, 100, 120], [210]]>"),
    (lambda: tf.constant([[10], [20], [30]]) - tf.ragged.constant(_X), "<tf.RaggedTensor [[9, 8], [17, 16, 15, 14], [23]]>"),
    (lambda: tf.maximum(tf.ragged.constant(_X), tf.constant([[3]])), "<tf.RaggedTensor [[3, 3], [3, 4, 5, 6], [7]]>"),
    (lambda: tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1) + tf.constant([10, 20]),
     "<tf.RaggedTensor [[[11, 22],\n  [13, 24],\n  [15, 26]], [[17, 28]]]>"),
    (lambda: tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1) + tf.constant([[[100]], [[200]]]),
     "<tf.RaggedTensor [[[101, 102],\n  [103, 104],\n  [105, 106]], [[207, 208]]]>"),
    (lambda: tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1) + tf.constant([[[100, 200]]]),
     "<tf.RaggedTensor [[[101, 202],\n  [103, 204],\n  [105, 206]], [[107, 208]]]>"),
    (lambda: tf.ragged.constant([[1, 2], [3, 4]]) + tf.constant([[10, 20], [30, 40]]),
     "<tf.RaggedTensor [[11, 22],\n [33, 44]]>"),
    (lambda: tf.ragged.constant([[[1], [2]], [], [[3]]], ragged_rank=2) + tf.constant([[[1]], [[2]], [[3]]]),
     "<tf.RaggedTensor [[[2],\n  [3]], [], [[6]]]>"),
    (lambda: tf.ragged.constant([[[[1], [2]], [], [[3]], [[4]]], [[[5], [6]], [[7]]]], ragged_rank=2)
     + tf.constant([10, 20, 30]),
     "<tf.RaggedTensor [[[[11, 21, 31],\n   [12, 22, 32]], [], [[13, 23, 33]], [[14, 24, 34]]],\n"
     " [[[15, 25, 35],\n   [16, 26, 36]], [[17, 27, 37]]]]>"),
])
def test_broadcasting_dense_operands(make, expected):
    assert repr(make()) == expected


@pytest.mark.parametrize("make, expected", [
    (lambda: tf.ragged.constant(_X) + tf.constant([1, 2]),
     "Condition x == y did not hold.\nIndices of first 2 different values:\n[[2]\n [3]]\nCorresponding x values:\n"
     "[4 6]\nCorresponding y values:\n[6 7]\nFirst 3 elements of x:\n[0 2 4]\nFirst 3 elements of y:\n[0 2 6]"),
    (lambda: tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1) + tf.constant([[100], [200]]),
     "Condition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\nCorresponding x values:\n[2]\n"
     "Corresponding y values:\n[3]\nFirst 3 elements of x:\n[0 2 4]\nFirst 3 elements of y:\n[0 3 4]"),
    (lambda: tf.ragged.constant([[[1], [2]], [], [[3]]], ragged_rank=2) + tf.constant([[1], [2], [3]]),
     "Condition x == y did not hold.\nIndices of first 3 different values:\n[[1]\n [2]\n [3]]\nCorresponding x "
     "values:\n[3 6 9]\nCorresponding y values:\n[2 2 3]\nFirst 3 elements of x:\n[0 3 6]\nFirst 3 elements of "
     "y:\n[0 2 2]"),
    (lambda: tf.ragged.constant(_X) + tf.ragged.constant([[1], [2], [3]]),
     "Condition x == y did not hold.\nIndices of first 3 different values:\n[[1]\n [2]\n [3]]\nCorresponding x "
     "values:\n[2 6 7]\nCorresponding y values:\n[1 2 3]\nFirst 3 elements of x:\n[0 2 6]\nFirst 3 elements of "
     "y:\n[0 1 2]"),
])
def test_broadcasting_errors(make, expected):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        make()
    assert str(info.value) == expected


def test_broadcast_gradient_reaches_the_dense_operand():
    y = tf.Variable([[1.0], [2.0], [3.0]])
    with tf.GradientTape() as tape:
        out = tf.reduce_sum((tf.ragged.constant([[1.0, 2.0], [3.0, 4.0, 5.0, 6.0], [7.0]]) * y).flat_values)
    assert tape.gradient(out, y).numpy().tolist() == [[3.0], [18.0], [7.0]]


def test_reverse_of_ragged_tensors():
    """tf.reverse on each kind of axis, and the guide's make_palindrome in a tf.function (TF 2.21)."""
    @tf.function
    def make_palindrome(x, axis):
        return tf.concat([x, tf.reverse(x, [axis])], axis)

    rt = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert repr(make_palindrome(rt, axis=1)) == "<tf.RaggedTensor [[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]]>"
    assert repr(make_palindrome(rt, axis=0)) == "<tf.RaggedTensor [[1, 2], [3], [4, 5, 6], [4, 5, 6], [3], [1, 2]]>"
    r3 = tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    assert [repr(tf.reverse(r3, ax)) for ax in ([0], [1], [2], [-1], [0, 2])] == [
        "<tf.RaggedTensor [[[4, 5, 6]], [], [[1, 2], [3]]]>", "<tf.RaggedTensor [[[3], [1, 2]], [], [[4, 5, 6]]]>",
        "<tf.RaggedTensor [[[2, 1], [3]], [], [[6, 5, 4]]]>", "<tf.RaggedTensor [[[2, 1], [3]], [], [[6, 5, 4]]]>",
        "<tf.RaggedTensor [[[6, 5, 4]], [], [[2, 1], [3]]]>"]
    uniform = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert repr(tf.reverse(uniform, [2])) == "<tf.RaggedTensor [[[2, 1],\n  [4, 3]], [[6, 5]]]>"
    assert repr(tf.reverse(uniform, [1])) == "<tf.RaggedTensor [[[3, 4],\n  [1, 2]], [[5, 6]]]>"


def test_function_input_signature_of_ragged_tensor_spec():
    """ragged_tensor guide: a tf.function with a RaggedTensorSpec input_signature (TF 2.21)."""
    @tf.function(input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)])
    def max_and_min(rt):
        return (tf.math.reduce_max(rt, axis=-1), tf.math.reduce_min(rt, axis=-1))

    hi, lo = max_and_min(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]))
    assert (hi.numpy().tolist(), lo.numpy().tolist()) == ([2, 3, 6], [1, 3, 4])
    hi, lo = max_and_min(tf.ragged.constant([[1], [3, 3, 3, 3]]))
    assert (hi.numpy().tolist(), lo.numpy().tolist()) == ([1, 3], [1, 3])
    with pytest.raises(TypeError) as info:
        max_and_min(tf.ragged.constant([[1.0]]))
    assert str(info.value).startswith(
        "Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(1,), dtype=tf.float32, "
        "name=None) to TensorSpec(shape=(None,), dtype=tf.int32, name=None)`. Received args: "
        "(<tf.RaggedTensor [[1.0]]>,) and kwargs: {} for signature: (rt: RaggedTensorSpec(TensorShape([None, None]), "
        "tf.int32,")


def test_from_uniform_row_length():
    """ragged_tensor guide's last cell and the uniform partition's shape through ops (TF 2.21)."""
    rt = tf.RaggedTensor.from_uniform_row_length(
        values=tf.RaggedTensor.from_row_splits(values=[10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
                                               row_splits=[0, 3, 5, 9, 10]),
        uniform_row_length=2)
    assert str(rt) == "<tf.RaggedTensor [[[10, 11, 12], [13, 14]],\n [[15, 16, 17, 18], [19]]]>"
    assert str(rt.shape) == "(2, 2, None)" and rt.ragged_rank == 2
    assert int(rt.uniform_row_length) == 2 and rt.row_splits.numpy().tolist() == [0, 2, 4]
    assert str((rt + 1).shape) == "(2, 2, None)" and str(rt[1:].shape) == "(1, 2, None)"
    assert repr(rt[0]) == "<tf.RaggedTensor [[10, 11, 12], [13, 14]]>"
    u = tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 3)
    assert str(u) == "<tf.RaggedTensor [[1, 2, 3],\n [4, 5, 6]]>" and str(u.shape) == "(2, 3)"
    assert u.to_tensor().numpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    assert tf.RaggedTensor.from_row_splits([1, 2, 3], [0, 1, 3]).uniform_row_length is None
    with pytest.raises(ValueError, match="uniform_row_length=0 times nrows=2 must equal nvals=6"):
        tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 0, nrows=2)


def test_dynamic_ragged_shape():
    """ragged_tensor guide, "Ragged shapes": tf.shape of a RaggedTensor and what it builds (TF 2.21)."""
    rt = tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]])
    s = tf.shape(rt)
    assert str(s) == repr(s) == "<DynamicRaggedShape lengths=[4, (1, 3, 0, 2)] num_row_partitions=1>"
    assert (s.dtype, s.rank, s.num_row_partitions, s.inner_shape.numpy().tolist()) == (tf.int32, 2, 1, [6])
    assert repr(s[0]) == "<tf.Tensor: shape=(), dtype=int32, numpy=4>"
    assert repr(s[:1]) == "<DynamicRaggedShape lengths=[4] num_row_partitions=0>"
    assert repr(s[:2]) == repr(s)
    with pytest.raises(ValueError, match="^Index 1 is not uniform$"):
        s[1]
    x = tf.constant([['a', 'b'], ['c', 'd'], ['e', 'f']])
    assert repr(tf.reshape(x, s)) == "<tf.RaggedTensor [[b'a'], [b'b', b'c', b'd'], [], [b'e', b'f']]>"
    assert repr(tf.zeros(s)) == "<tf.RaggedTensor [[0.0], [0.0, 0.0, 0.0], [], [0.0, 0.0]]>"
    assert repr(tf.ones(s, tf.int32)) == "<tf.RaggedTensor [[1], [1, 1, 1], [], [1, 1]]>"
    assert repr(tf.fill(s, 'x')) == "<tf.RaggedTensor [[b'x'], [b'x', b'x', b'x'], [], [b'x', b'x']]>"
    d = tf.experimental.DynamicRaggedShape(
        row_partitions=[tf.experimental.RowPartition.from_row_lengths([5, 3, 2])], inner_shape=[10, 8])
    assert repr(d) == "<DynamicRaggedShape lengths=[3, (5, 3, 2), 8] num_row_partitions=1>"
    assert (d.rank, int(d[2]), d[0].dtype) == (3, 8, tf.int64)
    f = tf.experimental.DynamicRaggedShape.from_lengths([4, (2, 1, 0, 8), 12])
    assert repr(f) == "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8), 12] num_row_partitions=1>"
    assert str(tf.zeros(f).shape) == "(4, None, 12)"
    assert repr(tf.experimental.DynamicRaggedShape.from_lengths([2, 3, (1, 2, 3, 4, 5, 6)])) == (
        "<DynamicRaggedShape lengths=[2, 3, (1, 2, 3, 4, 5, 6)] num_row_partitions=2>")
    assert repr(tf.experimental.DynamicRaggedShape.from_lengths([2, 3])) == (
        "<DynamicRaggedShape lengths=[2, 3] num_row_partitions=0>")
    assert str(tf.shape(tf.ragged.constant([[[1], [2, 3]], [[4]]]))) == (
        "<DynamicRaggedShape lengths=[2, (2, 1), (1, 2, 1)] num_row_partitions=2>")
    assert str(tf.shape(tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1))) == (
        "<DynamicRaggedShape lengths=[2, (1, 2), 2] num_row_partitions=1>")
    assert repr(tf.experimental.RowPartition.from_row_lengths([5, 3, 2])) == (
        "tf.RowPartition(row_splits=[ 0  5  8 10])")


def test_reduce_mean_with_inner_dimensions_divides_as_tensorflow():
    """reduce_mean(axis=1) of rows of 4-vectors: TF's quotient (tapejax multiplied by the
    reciprocal, an ulp off in some entries). Recorded from TF 2.21."""
    x = np.random.RandomState(3).randn(20, 4).astype(np.float32)
    mean = tf.reduce_mean(tf.RaggedTensor.from_row_lengths(x, [3, 7, 10]), axis=1)
    assert mean.numpy().tolist() == [
        [0.48914071917533875, -0.1318223923444748, -0.43336954712867737, -0.5352903008460999],
        [-0.6870893239974976, -0.3765529692173004, 0.6012946367263794, -0.2863469421863556],
        [-0.1214148998260498, 0.4490867555141449, -0.13136866688728333, -0.02157345972955227]]


def test_guide_bigram_embeddings_seeded():
    """ragged_tensor guide cell 20 with tf.keras.utils.set_random_seed(42) (TF 2.21's output)."""
    import math
    tf.keras.utils.set_random_seed(42)
    queries = tf.ragged.constant([['Who', 'is', 'Dan', 'Smith'], ['Pause'], ['Will', 'it', 'rain', 'later', 'today']])
    table = tf.Variable(tf.random.truncated_normal([1024, 4], stddev=1.0 / math.sqrt(4)))
    word_embeddings = tf.nn.embedding_lookup(table, tf.strings.to_hash_bucket_fast(queries, 1024))
    marker = tf.fill([queries.nrows(), 1], '#')
    padded = tf.concat([marker, queries, marker], axis=1)
    bigrams = tf.strings.join([padded[:, :-1], padded[:, 1:]], separator='+')
    bigram_embeddings = tf.nn.embedding_lookup(table, tf.strings.to_hash_bucket_fast(bigrams, 1024))
    avg = tf.reduce_mean(tf.concat([word_embeddings, bigram_embeddings], axis=1), axis=1)
    assert str(avg) == ("tf.Tensor(\n[[ 0.02094391 -0.08333479 -0.16323045 -0.0770272 ]\n"
                        " [-0.15259077 -0.08659901 -0.27207097  0.06410756]\n"
                        " [ 0.22957534  0.06953489  0.38135675  0.0111092 ]], shape=(3, 4), dtype=float32)")
    assert repr(tf.gather([10, 20, 30], tf.ragged.constant([[0, 2], [], [1]]))) == (
        "<tf.RaggedTensor [[10, 30], [], [20]]>")


def test_dense_row_against_a_ragged_dimension_raises_as_tensorflow():
    """TF 2.21 does not broadcast a dense [d] over rows whose ragged dimension it meets, even when
    every row has length d (a full-rank dense operand works)."""
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.ragged.constant([[1, 2], [3, 4]]) + tf.constant([10, 20])
    assert str(info.value) == ("Last row partition does not match flat_values.\nCondition x == y did not hold.\n"
                               "First 1 elements of x:\n[2]\nFirst 1 elements of y:\n[4]")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"First 1 elements of x:\n\[3\]\nFirst 1 elements "
                       r"of y:\n\[9\]"):
        tf.ragged.constant([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) + tf.constant([1, 2, 3])
    assert repr(tf.ragged.constant([[1, 2, 3], [4, 5, 6]]) + tf.constant([[1, 2, 3], [4, 5, 6]])) == (
        "<tf.RaggedTensor [[2, 4, 6],\n [8, 10, 12]]>")


def test_one_row_ragged_operand_repeats_its_row():
    """TF 2.21 broadcasts a one-row RaggedTensor over the other's rows (then checks the splits)."""
    assert repr(tf.ragged.constant([[1], [2]]) + tf.ragged.constant([[1]])) == "<tf.RaggedTensor [[2],\n [3]]>"
    assert repr(tf.ragged.constant([[1, 2], [3, 4]]) + tf.ragged.constant([[10, 20]])) == (
        "<tf.RaggedTensor [[11, 22],\n [13, 24]]>")
    assert repr(tf.ragged.constant([[[1], [2, 3]], [[4], [5, 6]]]) + tf.ragged.constant([[[10], [20, 30]]])) == (
        "<tf.RaggedTensor [[[11], [22, 33]],\n [[14], [25, 36]]]>")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.ragged.constant([[1, 2], [3]]) + tf.ragged.constant([[10, 20]])
    assert str(info.value) == (
        "Condition x == y did not hold.\nIndices of first 1 different values:\n[[2]]\nCorresponding x values:\n[3]\n"
        "Corresponding y values:\n[4]\nFirst 3 elements of x:\n[0 2 3]\nFirst 3 elements of y:\n[0 2 4]")


def test_from_tensor_nested_lengths_ragged_rank_and_uniform_rows_as_tf():
    # The tf.RaggedTensor.from_tensor docstring and TF 2.21's shapes (recorded).
    dt = tf.constant([[[5, 0], [7, 0], [0, 0]], [[0, 0], [3, 0], [0, 0]], [[6, 0], [0, 0], [0, 0]]])
    assert repr(tf.RaggedTensor.from_tensor(dt, lengths=([2, 0, 3], [1, 1, 2, 0, 1]))) == \
        "<tf.RaggedTensor [[[5], [7]], [], [[6, 0], [], [0]]]>"
    assert tf.RaggedTensor.from_tensor(dt, ragged_rank=2).shape.as_list() == [3, 3, 2]
    padded = tf.RaggedTensor.from_tensor(dt, padding=0, ragged_rank=2)
    assert padded.shape.as_list() == [3, 3, None]
    assert padded.to_list() == [[[5], [7], []], [[], [3], []], [[6], [], []]]
    full = tf.RaggedTensor.from_tensor([[1, 2], [3, 4]])
    assert full.shape.as_list() == [2, 2] and int(full.uniform_row_length) == 2
    with pytest.raises(ValueError, match=r"Shape \(3, 3, 2\) must have rank at least 4"):
        tf.RaggedTensor.from_tensor(dt, ragged_rank=3)


def test_row_lengths_axis_merge_dims_nested_value_rowids_as_tf():
    # The tf.RaggedTensor.row_lengths / merge_dims / nested_value_rowids docstrings (TF 2.21).
    rt = tf.ragged.constant([[[3, 1, 4], [1]], [], [[5, 9], [2]], [[6]], []])
    assert repr(rt.row_lengths(axis=2)) == "<tf.RaggedTensor [[3, 1], [], [2, 1], [1], []]>"
    assert repr(rt.row_lengths(-1)) == "<tf.RaggedTensor [[3, 1], [], [2, 1], [1], []]>"
    assert int(rt.row_lengths(0)) == 5
    dense_inner = tf.RaggedTensor.from_row_lengths(tf.zeros([5, 3, 2]), [2, 3])
    assert dense_inner.row_lengths(2).to_list() == [[3, 3], [3, 3, 3]]
    with pytest.raises(ValueError, match=r"axis=5 out of bounds: expected -3<=axis<3"):
        rt.row_lengths(5)
    m = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
    assert repr(m.merge_dims(0, 1)) == "<tf.RaggedTensor [[1, 2], [3], [4, 5, 6]]>"
    assert m.merge_dims(1, 2).to_list() == [[1, 2, 3], [4, 5, 6]]
    assert str(m.merge_dims(0, 2)) == "tf.Tensor([1 2 3 4 5 6], shape=(6,), dtype=int32)"
    assert [len(r) for r in dense_inner.merge_dims(1, 3).to_list()] == [12, 18]
    with pytest.raises(ValueError, match=r"Expected outer_axis \(2\) to be less than or equal to inner_axis \(1\)"):
        m.merge_dims(2, 1)
    ids = tf.ragged.constant([[[[3, 1, 4, 1], [], [5, 9, 2]], [], [[6], []]]]).nested_value_rowids()
    assert [i.numpy().tolist() for i in ids] == [[0, 0, 0], [0, 0, 0, 2, 2], [0, 0, 0, 0, 2, 2, 2, 3]]
    back = tf.RaggedTensor.from_nested_value_rowids(tf.constant([3, 1, 4, 1, 5, 9, 2, 6]),
                                                    [i.numpy() for i in ids], nested_nrows=[1, 3, 5])
    assert back.to_list() == [[[[3, 1, 4, 1], [], [5, 9, 2]], [], [[6], []]]]


def test_ragged_stack_along_any_axis_as_tf():
    # The tf.ragged.stack docstring and TF 2.21 (recorded).
    t1 = tf.ragged.constant([[1, 2], [3, 4, 5]])
    t2 = tf.ragged.constant([[6], [7, 8, 9]])
    t3 = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert repr(tf.ragged.stack([t1, t2], axis=1)) == "<tf.RaggedTensor [[[1, 2], [6]],\n [[3, 4, 5], [7, 8, 9]]]>"
    assert tf.ragged.stack([t1, t2], axis=-2).to_list() == [[[1, 2], [6]], [[3, 4, 5], [7, 8, 9]]]
    assert tf.ragged.stack([t1, t3], axis=1).to_list() == [[[1, 2], [1, 2, 3]], [[3, 4, 5], [4, 5, 6]]]
    dense = tf.ragged.stack([t3, t3], axis=1)
    assert isinstance(dense, tf.Tensor) and dense.shape.as_list() == [2, 2, 3]
    r = tf.ragged.stack([t3, tf.constant([[5], [6], [7]])], axis=0)
    assert repr(r) == "<tf.RaggedTensor [[[1, 2, 3], [4, 5, 6]], [[5], [6], [7]]]>"
    assert r.shape.as_list() == [2, None, None]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Inputs must have identical ragged splits"):
        tf.ragged.stack([t1, t2], axis=2)


def test_ragged_boolean_mask_segment_ids_and_dynamic_partitions_as_tf():
    # The tf.ragged.boolean_mask / row_splits_to_segment_ids / segment_ids_to_row_splits /
    # stack_dynamic_partitions docstrings and TF 2.21's outputs (recorded).
    T, F = (True, False)
    assert tf.ragged.boolean_mask(data=[[1, 2, 3], [4, 5, 6], [7, 8, 9]],
                                  mask=[[T, F, T], [F, F, F], [T, F, F]]).to_list() == [[1, 3], [], [7]]
    assert tf.ragged.boolean_mask(tf.ragged.constant([[1, 2, 3], [4], [5, 6]]),
                                  tf.ragged.constant([[F, F, T], [F], [T, T]])).to_list() == [[3], [], [5, 6]]
    assert tf.ragged.boolean_mask(tf.ragged.constant([[1, 2, 3], [4], [5, 6]]),
                                  tf.ragged.constant([True, False, True])).to_list() == [[1, 2, 3], [5, 6]]
    rt = tf.ragged.constant([[[1, 2], [3]], [[4]], []])
    assert repr(tf.ragged.boolean_mask(rt, tf.ragged.constant([[T, F], [T], []]))) == \
        "<tf.RaggedTensor [[[1, 2]], [[4]], []]>"
    assert repr(tf.ragged.boolean_mask(rt, tf.ragged.constant([[[T, F], [T]], [[F]], []]))) == \
        "<tf.RaggedTensor [[[1], [3]], [[]], []]>"
    assert str(tf.ragged.boolean_mask(tf.constant([[1, 2], [3, 4], [5, 6]]), [T, F, T]).numpy().tolist()) == \
        "[[1, 2], [5, 6]]"
    assert str(tf.ragged.row_splits_to_segment_ids([0, 3, 3, 5, 6, 9])) == \
        "tf.Tensor([0 0 0 2 2 3 4 4 4], shape=(9,), dtype=int64)"
    assert str(tf.ragged.segment_ids_to_row_splits([0, 0, 0, 2, 2, 3, 4, 4, 4])) == \
        "tf.Tensor([0 3 3 5 6 9], shape=(6,), dtype=int64)"
    assert str(tf.ragged.segment_ids_to_row_splits([0, 0, 2], num_segments=4)) == \
        "tf.Tensor([0 2 2 3 3], shape=(5,), dtype=int64)"
    assert str(tf.ragged.segment_ids_to_row_splits(tf.constant([0, 1, 1], tf.int32))) == \
        "tf.Tensor([0 1 3], shape=(3,), dtype=int32)"
    assert repr(tf.ragged.stack_dynamic_partitions(["a", "b", "c", "d", "e"], [3, 0, 2, 2, 3], 5)) == \
        "<tf.RaggedTensor [[b'b'], [], [b'c', b'd'], [b'a', b'e'], []]>"
    assert tf.ragged.stack_dynamic_partitions([[1, 2], [3, 4], [5, 6]], [1, 0, 1], 2).to_list() == \
        [[[3, 4]], [[1, 2], [5, 6]]]
