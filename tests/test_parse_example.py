"""tf.train.Example protos and tf.io.parse_example / parse_single_example (the ragged_tensor guide's
tf.Example cells), against TF 2.21's recorded output."""
import google.protobuf.text_format as pbtext
import pytest

import tapejax as tf


def _ex(text):
    return pbtext.Merge(text, tf.train.Example()).SerializeToString()


BATCH = [
    _ex('features { feature {key: "b" value {float_list {value: [1.5, 2]}}} feature {key: "a" value {int64_list '
        '{value: [7, 8, 9]}}} feature {key: "s" value {bytes_list {value: ["x"]}}} feature {key: "q" value '
        '{int64_list {value: [4, 5]}}}}'),
    _ex('features { feature {key: "b" value {float_list {value: [3]}}} feature {key: "a" value {int64_list '
        '{value: [1, 2, 3]}}}}')]
SPEC = {'b': tf.io.VarLenFeature(tf.float32), 'a': tf.io.FixedLenFeature([3], tf.int64),
        's': tf.io.FixedLenFeature([], tf.string, default_value=b'?'),
        'r': tf.io.RaggedFeature(tf.int64, value_key='q')}


def test_parse_example_batch():
    out = tf.io.parse_example(BATCH, SPEC)
    assert list(out) == ['b', 'a', 's', 'r']
    assert str(out['b']) == (
        "SparseTensor(indices=tf.Tensor(\n[[0 0]\n [0 1]\n [1 0]], shape=(3, 2), dtype=int64), values=tf.Tensor("
        "[1.5 2.  3. ], shape=(3,), dtype=float32), dense_shape=tf.Tensor([2 2], shape=(2,), dtype=int64))")
    assert str(out['a']) == "tf.Tensor(\n[[7 8 9]\n [1 2 3]], shape=(2, 3), dtype=int64)"
    assert str(out['s']) == "tf.Tensor([b'x' b'?'], shape=(2,), dtype=string)"
    assert str(out['r']) == "<tf.RaggedTensor [[4, 5], []]>"


def test_parse_single_example():
    one = tf.io.parse_single_example(BATCH[0], SPEC)
    assert list(one) == ['b', 'a', 's', 'r']
    assert str(one['b']) == (
        "SparseTensor(indices=tf.Tensor(\n[[0]\n [1]], shape=(2, 1), dtype=int64), values=tf.Tensor([1.5 2. ], "
        "shape=(2,), dtype=float32), dense_shape=tf.Tensor([2], shape=(1,), dtype=int64))")
    assert str(one['a']) == "tf.Tensor([7 8 9], shape=(3,), dtype=int64)"
    assert str(one['s']) == "tf.Tensor(b'x', shape=(), dtype=string)"
    assert str(one['r']) == "tf.Tensor([4 5], shape=(2,), dtype=int64)"


def test_example_protos():
    e = tf.train.Example(features=tf.train.Features(feature={
        'x': tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2]))}))
    assert str(e) == ('features {\n  feature {\n    key: "x"\n    value {\n      int64_list {\n        value: 1\n'
                      '        value: 2\n      }\n    }\n  }\n}\n')
    assert type(e).__name__ == "Example" and tf.train.Example.FromString(e.SerializeToString()) == e
    assert repr(tf.io.FixedLenFeature([3], tf.int64)) == "FixedLenFeature(shape=[3], dtype=tf.int64, default_value=None)"
    assert repr(tf.io.VarLenFeature(tf.float32)) == "VarLenFeature(dtype=tf.float32)"
    assert repr(tf.io.RaggedFeature(tf.string)) == (
        "RaggedFeature(dtype=tf.string, value_key=None, partitions=(), row_splits_dtype=tf.int32, validate=False)")


@pytest.mark.parametrize("spec, message", [
    ({'z': tf.io.FixedLenFeature([], tf.int64)},
     "Name: <unknown>, Feature: z (data type: int64) is required but could not be found. [Op:ParseExampleV2]"),
    ({'a': tf.io.FixedLenFeature([2], tf.int64)},
     "Name: <unknown>, Key: a, Index: 0.  Number of int64 values != expected.  Values size: 3 but output shape: [2] "
     "[Op:ParseExampleV2]"),
    ({'a': tf.io.FixedLenFeature([3], tf.float32)},
     "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Data type: int64 but expected type: float "
     "[Op:ParseExampleV2]"),
])
def test_parse_errors(spec, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.io.parse_example(BATCH, spec)
    assert str(info.value) == message


def test_guide_ragged_features_through_tf_data():
    """ragged_tensor guide cells 31-38: parse, slice, batch, unbatch and map."""
    batch = [_ex('features { feature {key: "colors" value {bytes_list {value: ["red", "blue"]} } } '
                 'feature {key: "lengths" value {int64_list {value: [7]} } } }'),
             _ex('features { feature {key: "colors" value {bytes_list {value: ["orange"]} } } '
                 'feature {key: "lengths" value {int64_list {value: []} } } }')]
    feats = tf.io.parse_example(batch, {'colors': tf.io.RaggedFeature(tf.string),
                                        'lengths': tf.io.RaggedFeature(tf.int64)})
    assert str(feats['colors']) == "<tf.RaggedTensor [[b'red', b'blue'], [b'orange']]>"
    assert str(feats['lengths']) == "<tf.RaggedTensor [[7], []]>"
    ds = tf.data.Dataset.from_tensor_slices(feats)
    assert ['{}'.format(e['colors']) for e in ds] == ["[b'red' b'blue']", "[b'orange']"]
    assert ['{}'.format(e['lengths']) for e in ds.batch(2)] == ["<tf.RaggedTensor [[7], []]>"]
    ranges = ds.map(lambda f: {'mean_length': tf.math.reduce_mean(f['lengths']),
                               'length_ranges': tf.ragged.range(f['lengths'])})
    assert [('{}'.format(e['mean_length']), '{}'.format(e['length_ranges'])) for e in ranges] == [
        ('7', '<tf.RaggedTensor [[0, 1, 2, 3, 4, 5, 6]]>'), ('0', '<tf.RaggedTensor []>')]


def test_parse_example_of_one_serialized_example_and_tf_key_order():
    # tf.train.Example / Feature / Features / Int64List docstrings, TF 2.21: a scalar is one Example
    # (no batch dimension: a RaggedFeature gives a Tensor), the dict lists the sparse features,
    # then the dense, then the ragged, each by key; a matrix of strings is refused.
    ex = tf.train.Example(features=tf.train.Features(feature={
        'x': tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])),
        'b': tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}))
    s = ex.SerializeToString()
    got = tf.io.parse_example(s, {'x': tf.io.FixedLenFeature([2], tf.float32), 'b': tf.io.RaggedFeature(tf.int64),
                                  'v': tf.io.VarLenFeature(tf.int64)})
    assert str(got) == (
        "{'v': SparseTensor(indices=tf.Tensor([], shape=(0, 1), dtype=int64), values=tf.Tensor([], shape=(0,), "
        "dtype=int64), dense_shape=tf.Tensor([0], shape=(1,), dtype=int64)), 'x': <tf.Tensor: shape=(2,), "
        "dtype=float32, numpy=array([1., 2.], dtype=float32)>, 'b': <tf.Tensor: shape=(1,), dtype=int64, "
        "numpy=array([3])>}")
    got = tf.io.parse_example([s], {'my_ints': tf.io.RaggedFeature(tf.int64), 'b': tf.io.RaggedFeature(tf.int64)})
    assert list(got) == ['b', 'my_ints'] and isinstance(got['b'], tf.RaggedTensor)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^Expected serialized to be a scalar or vector, got shape: \[1,1\] \[Op:ParseExampleV2\]$"):
        tf.io.parse_example([[s]], {'x': tf.io.FixedLenFeature([2], tf.float32)})
