"""tf.data behaviours found by running TensorFlow's data_performance guide cell by cell under
TF 2.21 and tapejax. Expected values are TF 2.21's, recorded with /tmp/tf/bin/python."""
import numpy as np

import tapejax as tf


def test_py_function_without_inputs_runs_once_per_element_in_a_map():
    # guide cells 8-11: mapped_function calls tf.py_function(lambda: time.sleep(0.03), [], ());
    # TF runs it for every element (it was run once, while the map was traced).
    calls = []

    def mapped(s):
        tf.py_function(lambda: calls.append(1), [], ())
        return s
    assert [int(x) for x in tf.data.Dataset.range(3).map(mapped)] == [0, 1, 2]
    assert len(calls) == 3
    np_calls = []

    def np_mapped(s):
        tf.numpy_function(lambda: np_calls.append(1) or np.float32(0), [], tf.float32)
        return s
    assert [int(x) for x in tf.data.Dataset.range(4).map(np_mapped)] == [0, 1, 2, 3]
    assert len(np_calls) == 4


def test_a_list_returned_by_a_map_function_is_a_tuple_of_components():
    # guide cell 21: naive_map returns tf.py_function(..., Tout=(string, float32, int32)), a list
    # of tensors of different shapes; TF treats a returned list as a tuple (it was stacked: error).
    ds = tf.data.Dataset.range(2).map(lambda x: [x, tf.stack([x, x])])
    assert repr(ds.element_spec) == ("(TensorSpec(shape=(), dtype=tf.int64, name=None), "
                                     "TensorSpec(shape=(2,), dtype=tf.int64, name=None))")
    first = next(iter(ds))
    assert isinstance(first, tuple) and first[1].numpy().tolist() == [0, 0]
    ds = tf.data.Dataset.range(2).map(
        lambda x: tf.py_function(lambda a: [a, a * 2.0], [tf.cast(x, tf.float32)], (tf.float32, tf.float32)))
    assert [(float(a), float(b)) for a, b in ds] == [(0.0, 0.0), (1.0, 2.0)]


def test_a_nested_list_of_tensors_packs_in_their_dtype():
    # TF 2.21: {"a": [x, x]} with int64 x is TensorSpec(shape=(2,), dtype=tf.int64) (was int32)
    ds = tf.data.Dataset.range(2).map(lambda x: {"a": [x, x]})
    assert repr(ds.element_spec) == "{'a': TensorSpec(shape=(2,), dtype=tf.int64, name=None)}"
    assert next(iter(ds))["a"].dtype == tf.int64


def test_from_generator_output_types_and_shapes_are_deprecated(caplog):
    # guide cell 21: TF 2.21 warns once per argument, naming the caller's line, in graph mode only:
    # while a dataset function is traced (TF traces interleave's function when it is made), not
    # eagerly once the eager context exists
    import tapejax.data as data
    data._WARNED.discard(("DatasetV2.from_generator", "output_types"))
    data._WARNED.discard(("DatasetV2.from_generator", "output_shapes"))

    def gen():
        yield [("Open",), ("Read",)], [(1.5, 2.5), (3.5, 4.5)], [(7, 0, -1), (7, 0, 0)]

    def make(_):
        return tf.data.Dataset.from_generator(gen, output_types=(tf.string, tf.float32, tf.int32),
                                              output_shapes=((2, 1), (2, 2), (2, 3)))
    make(None)
    assert "deprecated" not in caplog.text
    ds = tf.data.Dataset.range(1).interleave(make)
    text = caplog.text
    for arg in ("output_types", "output_shapes"):
        assert (f"test_data_performance_guide.py:{_line_of('output_shapes=((2, 1)') - 1}: calling "
                f"DatasetV2.from_generator (from tensorflow.python.data.ops.dataset_ops) with {arg} is deprecated "
                "and will be removed in a future version.\nInstructions for updating:\nUse output_signature instead"
                in text)
    steps, times, values = next(iter(ds))
    assert steps.numpy().tolist() == [[b"Open"], [b"Read"]] and values.dtype == tf.int32
    caplog.clear()
    tf.data.Dataset.range(1).interleave(make)
    assert "deprecated" not in caplog.text  # once per argument, as in TF


def _line_of(text):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line and "_line_of" not in line)


def test_numpy_gives_a_writable_copy():
    # guide cells 23-24: draw_timeline writes into `timeline['times'][mask].numpy()`; TF 2.21's
    # .numpy() is the caller's own writable array, np.asarray(t) the read-only view
    t = tf.constant([1., 2., 3.])
    a = t.numpy()
    assert a.flags.writeable and a.flags.owndata
    a[0] = 5
    assert t.numpy().tolist() == [1.0, 2.0, 3.0]
    b = t[1:].numpy()
    b[0] = 7
    assert t.numpy().tolist() == [1.0, 2.0, 3.0]
    v = tf.Variable([1., 2.])
    c = v.numpy()
    c[0] = 9
    assert v.numpy().tolist() == [1.0, 2.0]
    assert not np.asarray(t).flags.writeable
    assert type(tf.constant(3.0).numpy()) is np.float32 and type(tf.constant("a").numpy()) is bytes
