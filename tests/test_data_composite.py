"""tf.data with RaggedTensor and SparseTensor components (the ragged_tensor and sparse_tensor
guides' tf.data sections), against TF 2.21's recorded output."""
import numpy as np
import pytest

import tapejax as tf


def _sparse():
    return tf.sparse.SparseTensor(indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)],
                                  values=[1, 1, 1, 1, 1, 1], dense_shape=(6, 4))


def _entries(st):
    return st.indices.numpy().tolist(), st.values.numpy().tolist(), st.dense_shape.numpy().tolist()


def test_sparse_slices_batch_unbatch_map():
    ds = tf.data.Dataset.from_tensor_slices(_sparse())
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([4]), tf.int32)"
    assert repr(ds.batch(2).element_spec) == "SparseTensorSpec(TensorShape([None, 4]), tf.int32)"
    assert repr(ds.batch(2).unbatch().element_spec) == "SparseTensorSpec(TensorShape([4]), tf.int32)"
    assert [_entries(e) for e in ds] == [
        ([[0], [1], [2]], [1, 1, 1], [4]), ([], [], [4]), ([], [], [4]), ([], [], [4]), ([[3]], [1], [4]),
        ([[0], [1]], [1, 1], [4])]
    assert [_entries(e) for e in ds.batch(4)] == [
        ([[0, 0], [0, 1], [0, 2]], [1, 1, 1], [4, 4]), ([[0, 3], [1, 0], [1, 1]], [1, 1, 1], [2, 4])]
    assert [_entries(e) for e in ds.batch(2).unbatch()] == [_entries(e) for e in ds]
    doubled = ds.map(lambda x: x * 2)
    assert repr(doubled.element_spec) == "SparseTensorSpec(TensorShape([4]), tf.int32)"
    assert [_entries(e)[1] for e in doubled] == [[2, 2, 2], [], [], [], [2], [2, 2]]


def test_ragged_slices_batch_unbatch():
    rt = tf.ragged.constant([[1, 2], [3], [4, 5, 6], []])
    dr = tf.data.Dataset.from_tensor_slices(rt)
    assert repr(dr.element_spec) == "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    assert [str(e) for e in dr] == ["tf.Tensor([1 2], shape=(2,), dtype=int32)",
                                    "tf.Tensor([3], shape=(1,), dtype=int32)",
                                    "tf.Tensor([4 5 6], shape=(3,), dtype=int32)",
                                    "tf.Tensor([], shape=(0,), dtype=int32)"]
    assert repr(dr.batch(3).element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert [repr(e) for e in dr.batch(3)] == ["<tf.RaggedTensor [[1, 2], [3], [4, 5, 6]]>", "<tf.RaggedTensor [[]]>"]
    assert [str(e) for e in dr.batch(3).unbatch()] == [str(e) for e in dr]
    r3 = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[[1], [2, 3]], [[4]], []]))
    assert repr(r3.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert [repr(e) for e in r3] == ["<tf.RaggedTensor [[1], [2, 3]]>", "<tf.RaggedTensor [[4]]>",
                                     "<tf.RaggedTensor []>"]
    assert repr(r3.batch(2).element_spec) == (
        "RaggedTensorSpec(TensorShape([None, None, None]), tf.int32, 2, tf.int64)")
    assert [repr(e) for e in r3.batch(2)] == ["<tf.RaggedTensor [[[1], [2, 3]], [[4]]]>", "<tf.RaggedTensor [[]]>"]
    one = tf.data.Dataset.from_tensors(rt)
    assert repr(one.element_spec) == "RaggedTensorSpec(TensorShape([4, None]), tf.int32, 1, tf.int64)"
    assert [repr(e) for e in one] == ["<tf.RaggedTensor [[1, 2], [3], [4, 5, 6], []]>"]


def test_ragged_in_dicts_and_maps():
    rt = tf.ragged.constant([[1, 2], [3], [4, 5, 6], []])
    dd = tf.data.Dataset.from_tensor_slices({'a': rt, 'b': [1, 2, 3, 4]})
    assert repr(dd.element_spec) == ("{'a': RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64), "
                                     "'b': TensorSpec(shape=(), dtype=tf.int32, name=None)}")
    assert repr(dd.batch(2).element_spec) == (
        "{'a': RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64), "
        "'b': TensorSpec(shape=(None,), dtype=tf.int32, name=None)}")
    assert [(repr(e['a']), e['b'].numpy().tolist()) for e in dd.batch(2)] == [
        ("<tf.RaggedTensor [[1, 2], [3]]>", [1, 2]), ("<tf.RaggedTensor [[4, 5, 6], []]>", [3, 4])]
    dr = tf.data.Dataset.from_tensor_slices(rt)
    assert [repr(e) for e in dr.map(lambda x: tf.ragged.range(x))] == [
        "<tf.RaggedTensor [[0], [0, 1]]>", "<tf.RaggedTensor [[0, 1, 2]]>",
        "<tf.RaggedTensor [[0, 1, 2, 3], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5]]>", "<tf.RaggedTensor []>"]
    assert [int(e) for e in dr.map(lambda x: tf.reduce_sum(x))] == [3, 3, 15, 0]


def test_ragged_batch_and_dense_to_ragged_batch(capsys):
    ds = tf.data.Dataset.from_tensor_slices([1, 5, 3]).map(tf.range)
    assert [repr(b) for b in ds.ragged_batch(2)] == ["<tf.RaggedTensor [[0], [0, 1, 2, 3, 4]]>",
                                                      "<tf.RaggedTensor [[0, 1, 2]]>"]
    assert repr(ds.ragged_batch(2).element_spec) == (
        "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)")
    dense = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).ragged_batch(2)
    assert repr(dense.element_spec) == "TensorSpec(shape=(None, 2), dtype=tf.int32, name=None)"
    assert [b.numpy().tolist() for b in dense] == [[[1, 2], [3, 4]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot add tensor to the batch: number of elements "
                       r"does not match. Shapes are: \[tensor\]: \[5\], \[batch\]: \[1\]"):
        list(ds.batch(2))
    ragged = tf.data.Dataset.from_tensor_slices([1, 5, 3, 2, 8]).map(tf.range).apply(
        tf.data.experimental.dense_to_ragged_batch(2))
    assert [repr(b) for b in ragged] == ["<tf.RaggedTensor [[0], [0, 1, 2, 3, 4]]>",
                                         "<tf.RaggedTensor [[0, 1, 2], [0, 1]]>",
                                         "<tf.RaggedTensor [[0, 1, 2, 3, 4, 5, 6, 7]]>"]


def test_specs():
    spec = tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)
    assert repr(spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    assert spec.ragged_rank == 1 and spec.row_splits_dtype == tf.int64 and spec.flat_values_spec is None
    assert repr(tf.RaggedTensorSpec([2, None, 3], tf.float32)) == (
        "RaggedTensorSpec(TensorShape([2, None, 3]), tf.float32, 2, tf.int64)")
    assert repr(tf.RaggedTensorSpec([2, None, 3], tf.float32, 1)) == (
        "RaggedTensorSpec(TensorShape([2, None, 3]), tf.float32, 1, tf.int64)")
    assert repr(tf.RaggedTensorSpec.from_value(tf.ragged.constant([[1]]))) == (
        "RaggedTensorSpec(TensorShape([1, None]), tf.int32, 1, tf.int64)")
    assert spec.is_compatible_with(tf.ragged.constant([[1]]))
    assert not spec.is_compatible_with(tf.ragged.constant([[1.]]))
    with pytest.raises(ValueError, match="Must specify ragged_rank or a shape with a known rank."):
        tf.RaggedTensorSpec()
    assert repr(tf.SparseTensorSpec()) == "SparseTensorSpec(TensorShape(None), tf.float32)"
    assert repr(tf.SparseTensorSpec([3, None], tf.int64)) == "SparseTensorSpec(TensorShape([3, None]), tf.int64)"
    assert repr(tf.SparseTensorSpec.from_value(tf.sparse.eye(2))) == (
        "SparseTensorSpec(TensorShape([2, 2]), tf.float32)")


def test_from_generator_with_ragged_and_sparse_specs_as_tf():
    # The tf.data.Dataset.from_generator docstring and TF 2.21's checks (recorded).
    def gen():
        yield 42, tf.ragged.constant([[1, 2], [3]])
    sig = (tf.TensorSpec(shape=(), dtype=tf.int32), tf.RaggedTensorSpec(shape=(2, None), dtype=tf.int32))
    ds = tf.data.Dataset.from_generator(gen, output_signature=sig)
    assert repr(list(ds.take(1))) == "[(<tf.Tensor: shape=(), dtype=int32, numpy=42>, <tf.RaggedTensor [[1, 2], [3]]>)]"

    def first(values, spec):
        return next(iter(tf.data.Dataset.from_generator(lambda: iter(values), output_signature=spec)))
    sp = first([tf.sparse.from_dense([[1, 0], [0, 2]])], tf.SparseTensorSpec(shape=(2, 2), dtype=tf.int32))
    assert sp.indices.numpy().tolist() == [[0, 0], [1, 1]] and sp.values.numpy().tolist() == [1, 2]
    cases = [
        ([tf.ragged.constant([[1, 2], [3]])], tf.RaggedTensorSpec(shape=(None, None), dtype=tf.int64),
         "`generator` yielded an element of RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64) where "
         "an element of RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64) was expected."),
        ([[[1, 2], [3]]], tf.RaggedTensorSpec(shape=(None, None), dtype=tf.int32),
         "`generator` yielded an element that did not match the expected structure. The expected structure was "
         "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64), but the yielded element was "
         "[[1, 2], [3]]."),
        ([np.array([[1, 2], [3, 4]])], tf.RaggedTensorSpec(shape=(None, None), dtype=tf.int64),
         "`generator` yielded an element of TensorSpec(shape=(2, 2), dtype=tf.int64, name=None) where an element "
         "of RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64) was expected."),
        ([tf.sparse.from_dense([[1, 0], [0, 2]])], tf.SparseTensorSpec(shape=(None, 3), dtype=tf.int32),
         "`generator` yielded an element of SparseTensorSpec(TensorShape([2, 2]), tf.int32) where an element of "
         "SparseTensorSpec(TensorShape([None, 3]), tf.int32) was expected."),
    ]
    for values, spec, msg in cases:
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            first(values, spec)
        assert "TypeError: " + msg in str(err.value)
