"""tf.lookup (tapejax/lookup.py): static, vocabulary and mutable tables — values, errors, tf.function and tf.data map.

Expected values recorded from TensorFlow 2.21 (the same cases run under ``tensorflow``); values compare
with a float32 tolerance, errors by class and the start of TF's message.
"""
import os
import tempfile

import numpy as np
import pytest

import tapejax as tf
from recorded_cases import check, grad

EXPECTED = {'kv_dtypes': ([b"<dtype: 'string'>", b"<dtype: 'int64'>"], "<dtype: 'string'>"), 'kv_list': ([b"<dtype: 'string'>", b"<dtype: 'float32'>"], "<dtype: 'string'>"), 'kv_cast': ([b"<dtype: 'int64'>", b"<dtype: 'int64'>"], "<dtype: 'string'>"), 'static': ([1, 3, -1, 2], "<dtype: 'int64'>"), 'static_2d': ([[1, -1], [3, 2]], "<dtype: 'int64'>"), 'static_scalar': (2, "<dtype: 'int64'>"), 'static_getitem': ([3], "<dtype: 'int64'>"), 'static_size': (3, "<dtype: 'int64'>"), 'static_export': [[b'a', b'b', b'c'], [1, 2, 3]], 'static_dtypes': ([b"<dtype: 'string'>", b"<dtype: 'int64'>"], "<dtype: 'string'>"), 'static_default': (-1, "<dtype: 'int64'>"), 'static_bad_dtype': ('EXC', 'TypeError', 'Dtype of argument `keys` must be <dtype:'), 'static_list': ('EXC', 'AttributeError', "'list' object has no attribute 'dtype'"), 'static_bad_default': ('EXC', 'TypeError', "Cannot convert 'x' to EagerTensor of dty"), 'static_int': ([1.5, -1.0, 2.5, 0.5], "<dtype: 'float32'>"), 'static_int32': ([[20, 0], [30, 10]], "<dtype: 'int32'>"), 'static_int_to_str': ([b'two', b'?', b'one'], "<dtype: 'string'>"), 'static_str_to_str': ([b'Y', b'-'], "<dtype: 'string'>"), 'static_dup': ('EXC', 'FailedPreconditionError', 'HashTable has different value for same k'), 'static_fn': ([6, -1], "<dtype: 'int32'>"), 'static_fn_outer': ([2, 4, -2], "<dtype: 'int64'>"), 'static_fn_int': ([2.5, 0.0, 3.5], "<dtype: 'float32'>"), 'static_map': [1, 2, -1], 'static_map_batch': [[1, 2], [-1, 3]], 'static_ragged': [[1, 2], [3]], 'text_whole': ([1, 2, 0, -1], "<dtype: 'int64'>"), 'text_cols': ([20, 30, -1], "<dtype: 'int64'>"), 'text_cols_str': ([b'x', b'none'], "<dtype: 'string'>"), 'text_vocab_size': ([1, -1], "<dtype: 'int64'>"), 'text_offset': ([6, 7], "<dtype: 'int64'>"), 'text_line_keys': ([b'emerson', b'palmer', b'?'], "<dtype: 'string'>"), 'text_size': (3, "<dtype: 'int64'>"), 'text_bad_key_index': ('EXC', 'ValueError', '`key_index` should be >= -2, received: -'), 'text_bad_linenum_dtype': ('EXC', 'ValueError', '`key_dtype` must be int64 if `key_index`'), 'textidx': ([-2, -1], "<dtype: 'int32'>"), 'vocab': ([0, 1, 2, 6, 7, 5, 3], "<dtype: 'int64'>"), 'vocab_size': (8, "<dtype: 'int64'>"), 'vocab_2d': ([[2, 4], [5, 1]], "<dtype: 'int64'>"), 'vocab_text': ([1, 4, 4, 2], "<dtype: 'int64'>"), 'vocab_int': ([1, 0, 3, 5, 2], "<dtype: 'int64'>"), 'vocab_noinit': ([9, 2, 5], "<dtype: 'int64'>"), 'vocab_bad_buckets': ('EXC', 'ValueError', '`num_oov_buckets` must be > 0; use Stati'), 'vocab_bad_values': ('EXC', 'TypeError', 'Invalid `value_dtype`, expected <dtype: '), 'vocab_bad_keys': ('EXC', 'TypeError', 'Invalid `key_dtype`, expected one of (tf'), 'vocab_fn': ([1, 3], "<dtype: 'int64'>"), 'vocab_map': [[0, 5], [2, 5]], 'vocab_bad_dtype': ('EXC', 'TypeError', 'Dtype of argument `keys` must be <dtype:'), 'mut_lookup': ([1, 20, 30, -1], "<dtype: 'int64'>"), 'mut_size': (3, "<dtype: 'int64'>"), 'mut_remove': ([1, -1, 30], "<dtype: 'int64'>"), 'mut_remove_size': (2, "<dtype: 'int64'>"), 'mut_export': [[b'a', b'b', b'c'], [1, 20, 30]], 'mut_vec': ([[3.0, 4.0], [0.0, -1.0]], "<dtype: 'float32'>"), 'mut_bad_dtype': ('EXC', 'ValueError', 'keys: Tensor conversion requested dtype '), 'mut_fn': ([30, -1], "<dtype: 'int64'>"), 'dense_lookup': ([90, -1, 120], "<dtype: 'int64'>"), 'dense_size': (3, "<dtype: 'int64'>"), 'dense_erase': ([-1, 50], "<dtype: 'int64'>"), 'dense_remove': (2, "<dtype: 'int64'>"), 'dense_empty_key': ('EXC', 'InvalidArgumentError', 'Using the empty_key as a table key is no'), 'dense_same_keys': ('EXC', 'InvalidArgumentError', 'Empty and deleted keys cannot be equal ['), 'dense_str': ([1.5, 0.0], "<dtype: 'float32'>")}

CASES = {}


def show(name, f):
    CASES[name] = f


d = tempfile.mkdtemp()
vocab = os.path.join(d, "vocab.txt")
with open(vocab, "w") as f:
    f.write("emerson\nlake\npalmer\n")
tsv = os.path.join(d, "pairs.tsv")
with open(tsv, "w") as f:
    f.write("a\t10\tx\nb\t20\ty\nc\t30\tz\n")
kv = lambda: tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64))
st = lambda: tf.lookup.StaticHashTable(kv(), default_value=-1)
show("kv_dtypes", lambda: [str(kv().key_dtype), str(kv().value_dtype)] and tf.constant([str(kv().key_dtype), str(kv().value_dtype)]))
show("kv_list", lambda: tf.constant([str(x) for x in (lambda i: (i.key_dtype, i.value_dtype))(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1.5, 2.5]))]))
show("kv_cast", lambda: tf.constant([str(x) for x in (lambda i: (i.key_dtype, i.value_dtype))(tf.lookup.KeyValueTensorInitializer([1, 2], [3, 4], key_dtype=tf.int64, value_dtype=tf.int64))]))
show("static", lambda: st().lookup(tf.constant(["a", "c", "z", "b"])))
show("static_2d", lambda: st().lookup(tf.constant([["a", "q"], ["c", "b"]])))
show("static_scalar", lambda: st().lookup(tf.constant("b")))
show("static_getitem", lambda: st()[tf.constant(["c"])])
show("static_size", lambda: st().size())
show("static_export", lambda: (lambda e: [sorted(e[0].numpy().tolist()), sorted(e[1].numpy().tolist())])(st().export()))
show("static_dtypes", lambda: tf.constant([str(st().key_dtype), str(st().value_dtype)]))
show("static_default", lambda: st().default_value)
show("static_bad_dtype", lambda: st().lookup(tf.constant([1, 2])))
show("static_list", lambda: st().lookup(["a", "b"]))
show("static_bad_default", lambda: tf.lookup.StaticHashTable(kv(), default_value="x"))
show("static_int", lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant([3, 7, 1], tf.int64), tf.constant([0.5, 1.5, 2.5])), -1.0).lookup(tf.constant([7, 2, 1, 3], tf.int64)))
show("static_int32", lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant([3, 7, 1]), tf.constant([10, 20, 30])), 0).lookup(tf.constant([[7, 2], [1, 3]])))
show("static_int_to_str", lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant([1, 2], tf.int64), tf.constant(["one", "two"])), "?").lookup(tf.constant([2, 5, 1], tf.int64)))
show("static_str_to_str", lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["x", "y"], ["X", "Y"]), "-").lookup(tf.constant(["y", "w"])))
show("static_dup", lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["x", "x"], [1, 2]), -1).lookup(tf.constant(["x"])))
show("static_fn", lambda: tf.function(lambda k: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "c"], [5, 6]), -1).lookup(k))(tf.constant(["c", "zz"])))
tbl = st()
show("static_fn_outer", lambda: tf.function(lambda k: tbl.lookup(k) * 2)(tf.constant(["a", "b", "nope"])))
itbl = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant([3, 7, 1], tf.int64), tf.constant([0.5, 1.5, 2.5])), -1.0)
show("static_fn_int", lambda: tf.function(lambda k: itbl.lookup(k) + 1.0)(tf.constant([7, 2, 1], tf.int64)))
show("static_map", lambda: list(tf.data.Dataset.from_tensor_slices(["a", "b", "q"]).map(lambda s: tbl.lookup(s)).as_numpy_iterator()))
show("static_map_batch", lambda: list(tf.data.Dataset.from_tensor_slices(["a", "b", "q", "c"]).batch(2).map(lambda s: tbl.lookup(s)).as_numpy_iterator()))
show("static_ragged", lambda: tbl.lookup(tf.ragged.constant([["a", "b"], ["c"]])).to_list())
show("text_whole", lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1).lookup(tf.constant(["lake", "palmer", "emerson", "x"])))
show("text_cols", lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(tsv, tf.string, 0, tf.int64, 1, delimiter="\t"), -1).lookup(tf.constant(["b", "c", "d"])))
show("text_cols_str", lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(tsv, tf.string, 0, tf.string, 2), "none").lookup(tf.constant(["a", "d"])))
show("text_vocab_size", lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1, vocab_size=2), -1).lookup(tf.constant(["lake", "palmer"])))
show("text_offset", lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1, value_index_offset=5), -1).lookup(tf.constant(["lake", "palmer"])))
show("text_line_keys", lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(vocab, tf.int64, -1, tf.string, -2), "?").lookup(tf.constant([0, 2, 9], tf.int64)))
show("text_size", lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1), -1).size())
show("text_bad_key_index", lambda: tf.lookup.TextFileInitializer(vocab, tf.string, -3, tf.int64, -1))
show("text_bad_linenum_dtype", lambda: tf.lookup.TextFileInitializer(vocab, tf.string, -1, tf.int64, -2))
show("textidx", lambda: tf.constant([tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER]))
voc = lambda n: tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"], tf.constant([0, 1, 2], tf.int64)), n)
show("vocab", lambda: voc(5).lookup(tf.constant(["emerson", "lake", "palmer", "king", "crimson", "yes", "genesis"])))
show("vocab_size", lambda: voc(5).size())
show("vocab_2d", lambda: voc(3).lookup(tf.constant([["palmer", "xyz"], ["", "lake"]])))
show("vocab_text", lambda: tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1), 2).lookup(tf.constant(["lake", "oops", "again", "palmer"])))
show("vocab_int", lambda: tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(tf.constant([42, 7], tf.int64), tf.constant([0, 1], tf.int64)), 4).lookup(tf.constant([7, 42, 3, 100, -5], tf.int64)))
show("vocab_noinit", lambda: tf.lookup.StaticVocabularyTable(None, 10, lookup_key_dtype=tf.string).lookup(tf.constant(["a", "bb", "ccc"])))
show("vocab_bad_buckets", lambda: voc(0))
show("vocab_bad_values", lambda: tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), 2))
show("vocab_bad_keys", lambda: tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(tf.constant([1]), tf.constant([1], tf.int64)), 2))
vt2 = voc(2)
show("vocab_fn", lambda: tf.function(lambda k: vt2.lookup(k))(tf.constant(["lake", "zzz"])))
vt = voc(3)
show("vocab_map", lambda: list(tf.data.Dataset.from_tensor_slices([["emerson", "q"], ["palmer", "w"]]).map(vt.lookup).as_numpy_iterator()))
show("vocab_bad_dtype", lambda: vt.lookup(tf.constant([1, 2], tf.int64)))
def mut():
    t = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
    t.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
    t.insert(tf.constant(["b", "c"]), tf.constant([20, 30], tf.int64))
    return t
show("mut_lookup", lambda: mut().lookup(tf.constant(["a", "b", "c", "d"])))
show("mut_size", lambda: mut().size())
show("mut_remove", lambda: (lambda t: (t.remove(tf.constant(["b", "zz"])), t.lookup(tf.constant(["a", "b", "c"])))[1])(mut()))
show("mut_remove_size", lambda: (lambda t: (t.remove(tf.constant(["b"])), t.size())[1])(mut()))
show("mut_export", lambda: (lambda e: [sorted(e[0].numpy().tolist()), sorted(e[1].numpy().tolist())])(mut().export()))
show("mut_vec", lambda: (lambda t: (t.insert(tf.constant([1, 2], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]])), t.lookup(tf.constant([2, 5], tf.int64)))[1])(tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=[0.0, -1.0])))
show("mut_bad_dtype", lambda: mut().insert(tf.constant([1]), tf.constant([1], tf.int64)))
show("mut_fn", lambda: (lambda t: tf.function(lambda k: t.lookup(k))(tf.constant(["c", "x"])))(mut()))
mt = mut()
@tf.function
def ins(k, v):
    mt.insert(k, v)
    return mt.size()
def dense():
    t = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1)
    t.insert(tf.constant([5, 9, 12], tf.int64), tf.constant([50, 90, 120], tf.int64))
    return t
show("dense_lookup", lambda: dense().lookup(tf.constant([9, 4, 12], tf.int64)))
show("dense_size", lambda: dense().size())
show("dense_erase", lambda: (lambda t: (t.erase(tf.constant([9], tf.int64)), t.lookup(tf.constant([9, 5], tf.int64)), )[1])(dense()))
show("dense_remove", lambda: (lambda t: (t.remove(tf.constant([5], tf.int64)), t.size())[1])(dense()))
show("dense_empty_key", lambda: dense().insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64)))
show("dense_same_keys", lambda: tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=3, deleted_key=3))
show("dense_str", lambda: (lambda t: (t.insert(tf.constant(["k"]), tf.constant([1.5])), t.lookup(tf.constant(["k", "j"])))[1])(tf.lookup.experimental.DenseHashTable(tf.string, tf.float32, default_value=0.0, empty_key="", deleted_key="$")))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_as_tensorflow(name):
    check(CASES[name], EXPECTED[name])
