"""tf.data element specs computed from specs, as TensorFlow traces dataset functions (not from a
first element), and Dataset.ignore_errors / group_by_window / bucket_by_sequence_length.
Expected values recorded from TensorFlow 2.21."""
import pytest

import tapejax as tf


def _r(spec):
    return repr(spec)


def test_map_traces_on_the_input_spec():
    # TF 2.21: the batch dimension of batch(2) is unknown, so is the mapped one
    assert _r(tf.data.Dataset.range(6).batch(2).map(lambda x: x * 2).element_spec) == \
        "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    ds = tf.data.Dataset.range(6).batch(2, drop_remainder=True).map(
        lambda x: {"s": tf.reduce_sum(x), "f": tf.cast(x, tf.float32)[None]})
    assert _r(ds.element_spec) == ("{'s': TensorSpec(shape=(), dtype=tf.int64, name=None), "
                                   "'f': TensorSpec(shape=(1, 2), dtype=tf.float32, name=None)}")
    assert _r(tf.data.Dataset.range(6).batch(2).filter(lambda x: True).element_spec) == \
        "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"


def test_map_function_is_traced_once_when_the_map_is_made(capsys):
    def f(x):
        print("traced", x)
        return x + 1
    ds = tf.data.Dataset.range(3).map(f)
    print("made")
    assert [int(x) for x in ds] == [1, 2, 3]
    assert capsys.readouterr().out == 'traced Tensor("args_0:0", shape=(), dtype=int64)\nmade\n'


def test_scan_concatenate_flat_map_interleave_specs():
    ds = tf.data.Dataset.range(6).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, tf.stack([s, x])))
    assert _r(ds.element_spec) == "TensorSpec(shape=(2,), dtype=tf.int64, name=None)"
    a = tf.data.Dataset.range(6).batch(2, drop_remainder=True)
    b = tf.data.Dataset.range(6).batch(3, drop_remainder=True)
    assert _r(a.concatenate(b).element_spec) == "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    with pytest.raises(TypeError, match="Incompatible dataset elements:\n  TensorSpec\\(shape=\\(2,\\), dtype=tf.int64, "
                       "name=None\\) vs.   TensorSpec\\(shape=\\(\\), dtype=tf.float32, name=None\\)"):
        a.concatenate(tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32)))
    w = tf.data.Dataset.range(10).window(5, shift=1)
    assert _r(w.flat_map(lambda x: x.batch(5, drop_remainder=True)).element_spec) == \
        "TensorSpec(shape=(5,), dtype=tf.int64, name=None)"
    assert _r(tf.data.Dataset.zip((w, w)).flat_map(lambda a, b: tf.data.Dataset.zip((a.batch(2), b))).element_spec) \
        == "(TensorSpec(shape=(None,), dtype=tf.int64, name=None), TensorSpec(shape=(), dtype=tf.int64, name=None))"
    ds = tf.data.Dataset.range(6).interleave(lambda x: tf.data.Dataset.from_tensors(tf.stack([x, x])).batch(2))
    assert _r(ds.element_spec) == "TensorSpec(shape=(None, 2), dtype=tf.int64, name=None)"
    ds = tf.data.Dataset.range(6).flat_map(lambda x: tf.data.Dataset.from_tensor_slices(tf.stack([x, x])))
    assert _r(ds.element_spec) == "TensorSpec(shape=(), dtype=tf.int64, name=None)"
    assert [int(x) for x in ds.take(3)] == [0, 0, 1]


def test_ignore_errors():
    d = tf.data.Dataset.from_tensor_slices([1., 2., 0., 4.])
    d = d.map(lambda x: tf.debugging.check_numerics(1. / x, "error"))
    ie = d.ignore_errors()
    assert repr(ie) == "<_IgnoreErrorsDataset element_spec=TensorSpec(shape=(), dtype=tf.float32, name=None)>"
    assert int(ie.cardinality()) == -2
    assert [float(x) for x in ie] == [1.0, 0.5, 0.25]
    assert [b.numpy().tolist() for b in ie.batch(2)] == [[1.0, 0.5], [0.25]]
    it = iter(d)     # TF's iterator goes on after the error
    assert [float(next(it)), float(next(it))] == [1.0, 0.5]
    with pytest.raises(tf.errors.InvalidArgumentError):
        next(it)
    assert float(next(it)) == 0.25


def test_group_by_window():
    ds = tf.data.Dataset.range(10)
    g = ds.group_by_window(key_func=lambda x: x % 2, reduce_func=lambda key, w: w.batch(3), window_size=3)
    assert repr(g) == "<_GroupByWindowDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>"
    assert int(g.cardinality()) == -2
    assert [x.numpy().tolist() for x in g] == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    g2 = ds.group_by_window(key_func=lambda x: x % 3,
                            reduce_func=lambda key, w: w.map(lambda v: v + key * 100).batch(10),
                            window_size_func=lambda k: k + 1)
    assert [x.numpy().tolist() for x in g2] == [[0], [3], [101, 104], [6], [202, 205, 208], [9], [107]]
    msg = "Either the `window_size` argument or the `window_size_func` argument must be specified."
    with pytest.raises(ValueError, match=msg):
        ds.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2))
    with pytest.raises(ValueError, match=msg):
        ds.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), window_size=2, window_size_func=lambda k: 2)
    with pytest.raises(ValueError, match="^Tensor conversion requested dtype int64 for Tensor with dtype int32: "
                       "<tf.Tensor 'Cast:0' shape=\\(\\) dtype=int32>$"):
        ds.group_by_window(lambda x: tf.cast(x % 2, tf.int32), lambda k, w: w.batch(2), window_size=2)


_ROWS = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]


def _rows():
    return tf.data.Dataset.from_generator(lambda: _ROWS, output_signature=tf.TensorSpec([None], tf.int64))


def test_bucket_by_sequence_length():
    b = _rows().bucket_by_sequence_length(element_length_func=lambda elem: tf.shape(elem)[0],
                                          bucket_boundaries=[3, 5], bucket_batch_sizes=[2, 2, 2])
    assert repr(b) == "<_GroupByWindowDataset element_spec=TensorSpec(shape=(None, None), dtype=tf.int64, name=None)>"
    assert [e.numpy().tolist() for e in b] == [[[1, 2, 3, 4], [5, 6, 7, 0]],
                                               [[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]], [[0, 0], [21, 22]]]
    b = _rows().bucket_by_sequence_length(lambda elem: tf.shape(elem)[0], [3, 7], [2, 2, 2], pad_to_bucket_boundary=True,
                                          padding_values=tf.constant(-1, tf.int64))
    assert [e.numpy().tolist() for e in b] == [[[1, 2, 3, 4, -1, -1], [5, 6, 7, -1, -1, -1]],
                                               [[7, 8, 9, 10, 11, -1], [13, 14, 15, 16, 19, 20]], [[0, -1], [21, 22]]]
    assert _r(b.element_spec) == "TensorSpec(shape=(None, None), dtype=tf.int64, name=None)"
    with pytest.raises(ValueError, match=r"`len\(bucket_batch_sizes\)` must equal `len\(bucket_boundaries\) \+ 1` but "
                       r"`len\(bucket_batch_sizes\)=2` and `len\(bucket_boundaries\)=2`."):
        _rows().bucket_by_sequence_length(lambda elem: tf.shape(elem)[0], [3, 5], [2, 2])
    with pytest.raises(tf.errors.InternalError, match="When pad_to_bucket_boundary=True, elements must have length < "
                       r"max\(bucket_boundaries\)."):
        list(_rows().bucket_by_sequence_length(lambda elem: tf.shape(elem)[0], [3, 5], [2, 2, 2],
                                               pad_to_bucket_boundary=True))
    pairs = tf.data.Dataset.from_tensor_slices(([1, 2, 3, 4], [[1, 0], [2, 2], [3, 3], [0, 4]]))
    b = pairs.bucket_by_sequence_length(lambda a, b: a, [2], [2, 2])
    assert _r(b.element_spec) == ("(TensorSpec(shape=(None,), dtype=tf.int32, name=None), "
                                  "TensorSpec(shape=(None, 2), dtype=tf.int32, name=None))")
    assert [[x.numpy().tolist() for x in e] for e in b] == [[[2, 3], [[2, 2], [3, 3]]], [[1], [[1, 0]]],
                                                             [[4], [[0, 4]]]]


def test_element_specs_are_tf_tensor_specs():
    spec = tf.data.Dataset.range(3).element_spec
    assert spec == tf.TensorSpec([], tf.int64) and tf.TensorSpec([], tf.int64) == spec
    assert isinstance(spec, tf.TensorSpec)
    assert {tf.TensorSpec([None], tf.int64): 1}[tf.data.Dataset.range(3).batch(2).element_spec] == 1
    assert tf.data.Dataset.range(4).window(2).element_spec == tf.data.DatasetSpec(tf.TensorSpec([], tf.int64))
    assert repr(tf.data.DatasetSpec(tf.TensorSpec([2], tf.int32))) == \
        "DatasetSpec(TensorSpec(shape=(2,), dtype=tf.int32, name=None), TensorShape([]))"
    assert isinstance(iter(tf.data.Dataset.range(3)), tf.data.Iterator)
    assert tf.data.experimental.get_structure(tf.data.Dataset.range(3)) == spec


def test_experimental_transformations(caplog):
    import tapejax.data as data
    E = tf.data.experimental
    ds = tf.data.Dataset.range(6)
    data._WARNED.discard(("scan", None))
    t = E.scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s))
    assert ("scan (from tensorflow.python.data.experimental.ops.scan_ops) is deprecated and will be removed in a "
            "future version.\nInstructions for updating:\nUse `tf.data.Dataset.scan(...) instead") in caplog.text
    assert [int(x) for x in ds.apply(t)] == [0, 0, 1, 3, 6, 10]
    assert [(int(i), int(x)) for i, x in ds.apply(E.enumerate_dataset(5)).take(2)] == [(5, 0), (6, 1)]
    assert [int(x) for x in ds.apply(E.shuffle_and_repeat(1, 2))] == [0, 1, 2, 3, 4, 5] * 2
    assert [b.numpy().tolist() for b in ds.apply(E.map_and_batch(lambda x: x * 2, 4))] == [[0, 2, 4, 6], [8, 10]]
    assert [int(x) for x in ds.apply(E.take_while(lambda x: x < 3))] == [0, 1, 2]
    assert [int(x) for x in ds.batch(4).apply(E.unbatch())] == [0, 1, 2, 3, 4, 5]
    assert int(E.get_single_element(tf.data.Dataset.range(1))) == 0
    choice = tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1], tf.int64))
    assert [int(x) for x in E.choose_from_datasets([ds, ds.map(lambda x: x + 10)], choice)] == [0, 10, 11]
    a = ds.apply(E.assert_cardinality(6))
    assert repr(a) == "<_AssertCardinalityDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert [int(x) for x in a] == [0, 1, 2, 3, 4, 5] and int(a.cardinality()) == 6
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="Input dataset was expected to contain 5 elements but contained at least 6 elements."):
        list(ds.filter(lambda x: True).apply(E.assert_cardinality(5)))
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="Input dataset was expected to contain 7 elements but contained only 6 elements."):
        list(ds.filter(lambda x: True).apply(E.assert_cardinality(7)))
    lst = E.from_list([(1, "a"), (2, "b")])
    assert repr(lst) == ("<_ListDataset element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                         "TensorSpec(shape=(), dtype=tf.string, name=None))>")
    assert [(int(a), b.numpy()) for a, b in lst] == [(1, b"a"), (2, b"b")]


def test_specs_of_datasets_choosing_among_others_and_rebatch():
    # TF 2.21: the most specific compatible spec of the inputs; rebatch's batch size is static only
    # when no partial batch can form
    a = tf.data.Dataset.range(6).batch(2, drop_remainder=True)
    b = tf.data.Dataset.range(6).batch(3, drop_remainder=True)
    none = "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    assert _r(tf.data.Dataset.sample_from_datasets([a, b], seed=1).element_spec) == none
    assert _r(tf.data.Dataset.choose_from_datasets([a, b], tf.data.Dataset.range(2)).element_spec) == none
    one = "TensorSpec(shape=(1,), dtype=tf.int64, name=None)"
    assert [_r(a.rebatch(1).element_spec), _r(a.rebatch(1, drop_remainder=True).element_spec)] == [one, one]
    assert [_r(a.rebatch(3).element_spec), _r(tf.data.Dataset.range(5).batch(2).rebatch(1).element_spec)] == [none, none]


def test_sparse_batch():
    ds = tf.data.Dataset.from_tensor_slices([1, 3, 2]).map(lambda x: tf.fill([x], x))
    b = ds.sparse_batch(2, [4])
    assert repr(b) == "<_DenseToSparseBatchDataset element_spec=SparseTensorSpec(TensorShape([None, 4]), tf.int32)>"
    assert int(b.cardinality()) == 2
    got = [(s.indices.numpy().tolist(), s.values.numpy().tolist(), s.dense_shape.numpy().tolist()) for s in b]
    assert got == [([[0, 0], [1, 0], [1, 1], [1, 2]], [1, 3, 3, 3], [2, 4]), ([[0, 0], [0, 1]], [2, 2], [1, 4])]
    b = ds.sparse_batch(2, [None])
    assert repr(b.element_spec) == "SparseTensorSpec(TensorShape([None, None]), tf.int32)"
    assert [s.dense_shape.numpy().tolist() for s in b] == [[2, 3], [1, 2]]
    with pytest.raises(tf.errors.DataLossError, match=r"Input element had shape \(\[3\]\) that is larger than the row "
                       r"shape \(\[2\]\)."):
        list(ds.sparse_batch(2, [2]))


def test_save_and_load(tmp_path):
    ds = tf.data.Dataset.range(5).map(lambda x: (x, tf.cast(x, tf.float32) * 2)).batch(2)
    assert ds.save(str(tmp_path / "ds")) is None
    loaded = tf.data.Dataset.load(str(tmp_path / "ds"))
    assert repr(loaded) == ("<_LoadDataset element_spec=(TensorSpec(shape=(None,), dtype=tf.int64, name=None), "
                            "TensorSpec(shape=(None,), dtype=tf.float32, name=None))>")
    assert int(loaded.cardinality()) == 3
    assert [(a.tolist(), b.tolist()) for a, b in loaded.as_numpy_iterator()] == [
        ([0, 1], [0.0, 2.0]), ([2, 3], [4.0, 6.0]), ([4], [8.0])]
    missing = str(tmp_path / "nope")
    with pytest.raises(tf.errors.NotFoundError, match="tf.data snapshot element_spec file not found: "):
        tf.data.Dataset.load(missing)


def test_more_experimental_names(caplog, tmp_path):
    E = tf.data.experimental
    ds = tf.data.Dataset.range(6)
    assert E.SHARD_HINT == -1
    assert repr(list(E.ExternalStatePolicy)) == ("[<ExternalStatePolicy.WARN: 0>, <ExternalStatePolicy.IGNORE: 1>, "
                                                 "<ExternalStatePolicy.FAIL: 2>]")
    assert len(list(E.AutotuneAlgorithm)) == 5 and E.AutotuneAlgorithm.STAGE_BASED.value == 4
    E.save(ds, str(tmp_path / "s"))
    assert repr(E.load(str(tmp_path / "s"))) == "<_LoadDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert "save (from tensorflow.python.data.experimental.ops.io) is deprecated" in caplog.text
    assert repr(E.RandomDataset(seed=1)).startswith("<RandomDatasetV2 element_spec=TensorSpec(shape=(), dtype=tf.int64")
    it = iter(tf.data.Dataset.range(1))
    o = E.get_next_as_optional(it)
    assert bool(o.has_value()) and int(o.get_value()) == 0
    empty = it.get_next_as_optional()
    assert not bool(empty.has_value())
    with pytest.raises(tf.errors.InvalidArgumentError):
        empty.get_value()
    assert repr(ds.apply(E.copy_to_device("/cpu:0"))) == \
        "<_CopyToDeviceDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert [int(x) for x in ds.apply(E.prefetch_to_device("/cpu:0"))] == [0, 1, 2, 3, 4, 5]
    p = tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).apply(E.pad_to_cardinality(4))
    assert repr(p) == ("<_ConcatenateDataset element_spec={'a': TensorSpec(shape=(), dtype=tf.int32, name=None), "
                       "'valid': TensorSpec(shape=(), dtype=tf.bool, name=None)}>")
    assert [(int(e["a"]), bool(e["valid"])) for e in p] == [(1, True), (2, True), (0, False), (0, False)]
    assert int(E.at(ds, 3)) == 3
    red = E.Reducer(lambda k: tf.constant(0, tf.int64), lambda s, x: s + x, lambda s: s)
    g = ds.apply(E.group_by_reducer(lambda x: x % 2, red))
    assert repr(g) == "<_GroupByReducerDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert [int(x) for x in g] == [6, 9]


def test_shapes_the_values_decide_are_unknown():
    # TF 2.21: tf.fill([x], x) / tf.boolean_mask have unknown sizes (was the first element's shape)
    ds = tf.data.Dataset.range(5).map(lambda x: tf.fill([x], x))
    assert _r(ds.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    assert _r(ds.batch(2).element_spec) == "TensorSpec(shape=(None, None), dtype=tf.int64, name=None)"
    ds = tf.data.Dataset.from_tensor_slices([[1, 2, 3]]).map(lambda x: tf.boolean_mask(x, x > 1))
    assert _r(ds.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int32, name=None)"
    ds = tf.data.Dataset.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s, tf.fill([x], x)))
    assert _r(ds.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"


_i = 0


def test_functions_take_the_variables_they_read_when_the_transformation_is_made():
    # TF 2.21 traces a dataset function when map() is called: a loop variable is taken then
    # (text tutorial: lines_dataset.map(lambda ex: labeler(ex, i)) for i, file_name in ...)
    global _i
    dss = []
    for _i in range(3):
        dss.append(tf.data.Dataset.from_tensor_slices(["a", "b"]).map(lambda ex: (ex, tf.cast(_i, tf.int64))))
    assert [int(label) for d in dss for _, label in d] == [0, 0, 1, 1, 2, 2]
    dss = []
    for k in range(3):
        dss.append(tf.data.Dataset.range(2).map(lambda x: x + k).filter(lambda x: x >= k))
    assert [int(x) for d in dss for x in d] == [0, 1, 1, 2, 2, 3]


def test_numpy_iterator():
    it = tf.data.Dataset.range(3).as_numpy_iterator()
    assert isinstance(it, tf.data.NumpyIterator)
    assert repr(it).startswith("NumpyIterator(iterator=<tensorflow.python.data.ops.iterator_ops.OwnedIterator object at 0x")
    assert int(next(it)) == 0 and [int(x) for x in it] == [1, 2]


def test_a_layer_first_built_in_a_map_is_built_eagerly():
    # a Keras layer built while the spec is traced kept the trace's values ("A tensor is out of scope")
    import numpy as np
    norm = tf.keras.layers.Normalization(mean=0., variance=1.)
    ds = tf.data.Dataset.from_tensor_slices(np.ones((4, 3), "float32")).batch(2).map(lambda x: norm(x))
    assert [b.numpy().tolist() for b in ds] == [[[1.0] * 3] * 2] * 2
    ds = tf.data.Dataset.from_tensor_slices(np.ones((4, 3), "float32")).batch(2).map(lambda x: norm(x))
    assert _r(ds.element_spec) == "TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)"   # built: traced


def test_iterator_element_spec_and_iterator_spec():
    it = iter(tf.data.Dataset.range(3).batch(2))
    none = "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    assert _r(it.element_spec) == none and _r(tf.data.experimental.get_structure(it)) == none
    assert repr(tf.data.IteratorSpec(it.element_spec)) == f"IteratorSpec({none},)"


def test_experimental_tfrecord_writer(tmp_path):
    path = str(tmp_path / "x.tfrec")
    w = tf.data.experimental.TFRecordWriter(path, compression_type="GZIP")
    assert w.write(tf.data.Dataset.from_tensor_slices([b"a", b"bc"])) is None
    assert list(tf.data.TFRecordDataset(path, "GZIP").as_numpy_iterator()) == [b"a", b"bc"]
    with pytest.raises(TypeError, match=r"^Invalid `dataset`. Expected a`dataset` that produces scalar `tf.string` "
                       r"elements, but got a dataset which produces elements with shapes \(1,\) and types "
                       r"<dtype: 'string'>.$"):
        w.write(tf.data.Dataset.from_tensor_slices([[b"a"]]))


def test_experimental_optional_and_optional_spec_as_tf():
    # The tf.experimental.Optional and tf.OptionalSpec docstrings, recorded from TF 2.21.
    optional = tf.experimental.Optional.from_value(42)
    assert tf.experimental.Optional is tf.data.experimental.Optional
    assert str(optional.has_value()) == "tf.Tensor(True, shape=(), dtype=bool)"
    assert str(optional.get_value()) == "tf.Tensor(42, shape=(), dtype=int32)"
    assert str(optional.element_spec) == "TensorSpec(shape=(), dtype=tf.int32, name=None)"
    empty = tf.experimental.Optional.empty(tf.TensorSpec(shape=(), dtype=tf.int32, name=None))
    assert str(empty.has_value()) == "tf.Tensor(False, shape=(), dtype=bool)"
    with pytest.raises(tf.errors.InvalidArgumentError, match="The given optional does not have a value."):
        empty.get_value()
    nested = tf.experimental.Optional.from_value((1, {"a": [1., 2.]}))
    assert repr(tf.OptionalSpec.from_value(nested)) == (
        "OptionalSpec((TensorSpec(shape=(), dtype=tf.int32, name=None), {'a': TensorSpec(shape=(2,), "
        "dtype=tf.float32, name=None)}),)")
    spec = tf.OptionalSpec(tf.TensorSpec(shape=(), dtype=tf.int32))
    assert spec.is_compatible_with(tf.experimental.Optional.from_value(5))
    assert spec == tf.OptionalSpec(tf.TensorSpec(shape=(), dtype=tf.int32))

    @tf.function(input_signature=[spec])
    def maybe_square(optional):
        if optional.has_value():
            x = optional.get_value()
            return x * x
        return -1
    assert str(maybe_square(tf.experimental.Optional.from_value(5))) == "tf.Tensor(25, shape=(), dtype=int32)"
    assert str(maybe_square(empty)) == "tf.Tensor(-1, shape=(), dtype=int32)"
    assert str(maybe_square(tf.experimental.Optional.from_value(7))) == "tf.Tensor(49, shape=(), dtype=int32)"
    it = iter(tf.data.Dataset.range(1))
    it.get_next_as_optional()
    end = it.get_next_as_optional()
    assert not bool(end.has_value()) and end.element_spec == tf.TensorSpec((), tf.int64)


def test_dataset_and_iterator_specs_in_input_signatures_as_tf():
    # The tf.data.IteratorSpec and tf.data.DatasetSpec docstrings, recorded from TF 2.21.
    @tf.function(input_signature=[tf.data.IteratorSpec(tf.TensorSpec(shape=(), dtype=tf.int32, name=None))])
    def square(iterator):
        x = iterator.get_next()
        return x * x
    assert str(square(iter(tf.data.Dataset.from_tensors(5)))) == "tf.Tensor(25, shape=(), dtype=int32)"
    assert repr(tf.data.DatasetSpec.from_value(tf.data.Dataset.range(3))) == \
        "DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))"

    @tf.function(input_signature=[tf.data.DatasetSpec(tf.TensorSpec(shape=(), dtype=tf.int64))])
    def total(ds):
        return ds.reduce(tf.constant(0, tf.int64), lambda s, x: s + x)
    assert str(total(tf.data.Dataset.range(4))) == "tf.Tensor(6, shape=(), dtype=int64)"
    assert str(total(tf.data.Dataset.range(5))) == "tf.Tensor(10, shape=(), dtype=int64)"
