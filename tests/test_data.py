"""tf.data.Dataset: structure, batching, shuffling determinism, transformations, cardinality."""
import numpy as np
import pytest

import tapejax as tf

Dataset = tf.data.Dataset


def values(ds):
    return [np.asarray(x).tolist() for x in ds]


def test_from_tensor_slices_tuples_yield_tensors():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6)
    ds = Dataset.from_tensor_slices((x, y))
    elems = list(ds)
    assert len(elems) == 6 and len(ds) == 6
    a, b = elems[3]
    assert isinstance(a, tf.Tensor) and isinstance(b, tf.Tensor)
    np.testing.assert_array_equal(a.numpy(), x[3])
    assert int(b) == 3 and b.dtype == tf.int64 and a.dtype == tf.float32  # numpy's int64 stays, as in TF


def test_python_and_float64_inputs_follow_tf_conversion():
    assert Dataset.from_tensor_slices([1.0, 2.0]).element_spec.dtype == tf.float32
    assert Dataset.from_tensor_slices([1, 2]).element_spec.dtype == tf.int32
    elem = next(iter(Dataset.from_tensor_slices(np.random.random((3, 2)))))
    assert elem.dtype == tf.float64  # NumPy's float64 stays float64, as in TF


def test_dict_elements_and_batch():
    ds = Dataset.from_tensor_slices({"a": np.arange(5), "b": np.arange(5) * 10.0}).batch(2)
    batches = list(ds)
    assert [sorted(b) for b in batches] == [["a", "b"]] * 3
    np.testing.assert_array_equal(batches[0]["b"].numpy(), [0.0, 10.0])
    np.testing.assert_array_equal(batches[-1]["a"].numpy(), [4])
    assert ds.element_spec["a"].shape.as_list() == [None]


def test_batch_drop_remainder_and_cardinality():
    ds = Dataset.range(10)
    assert values(ds.batch(4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert values(ds.batch(4, drop_remainder=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(ds.batch(4)) == 3 and len(ds.batch(4, drop_remainder=True)) == 2
    assert int(ds.batch(4).cardinality()) == 3
    assert ds.batch(4, drop_remainder=True).element_spec.shape.as_list() == [4]
    assert ds.batch(4).element_spec.shape.as_list() == [None]


def test_shuffle_is_a_deterministic_permutation_with_seed():
    make = lambda: Dataset.range(100).shuffle(10, seed=42)  # noqa: E731
    a, b = make(), make()
    first_a, first_b = values(a), values(b)
    assert sorted(first_a) == list(range(100))
    assert first_a == first_b != list(range(100))
    second_a = values(a)              # a new epoch: reshuffled, still seeded
    assert second_a != first_a and second_a == values(b)
    fixed = Dataset.range(20).shuffle(20, seed=1, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)


def test_shuffle_buffer_limits_displacement():
    # With buffer_size=k an element can come out at most k-1 places early.
    out = values(Dataset.range(200).shuffle(5, seed=0))
    assert all(pos >= v - 4 for pos, v in enumerate(out))
    assert sorted(out) == list(range(200))


def test_shuffle_batch_pipeline_covers_data_once_per_epoch():
    x = np.arange(100, dtype=np.float32)
    ds = Dataset.from_tensor_slices((x, x * 2)).shuffle(1024, seed=3).batch(32)
    for _ in range(2):
        xs, ys = zip(*[(a.numpy(), b.numpy()) for a, b in ds])
        allx = np.concatenate(xs)
        assert sorted(allx.tolist()) == x.tolist()
        np.testing.assert_array_equal(np.concatenate(ys), allx * 2)  # pairs stay together


def test_map_receives_tensors_and_unpacks_tuples():
    seen = []

    def f(x, y):
        seen.append((type(x), type(y)))
        return x * 2, y + 1

    ds = Dataset.from_tensor_slices((np.arange(3.0), np.arange(3))).map(f, num_parallel_calls=tf.data.AUTOTUNE)
    assert [(float(a), int(b)) for a, b in ds] == [(0.0, 1), (2.0, 2), (4.0, 3)]
    assert seen[0] == (tf.Tensor, tf.Tensor)
    d = Dataset.from_tensor_slices({"v": np.arange(3)}).map(lambda e: e["v"] * 10)
    assert values(d) == [0, 10, 20]


def test_filter_repeat_take_skip_enumerate_zip():
    ds = Dataset.range(6)
    assert values(ds.filter(lambda x: x % 2 == 0)) == [0, 2, 4]
    assert values(ds.take(2).repeat(3)) == [0, 1] * 3
    assert values(ds.repeat().take(8)) == [0, 1, 2, 3, 4, 5, 0, 1]
    assert int(ds.repeat().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert values(ds.skip(4)) == [4, 5] and len(ds.skip(4)) == 2
    assert [(int(i), int(x)) for i, x in ds.skip(3).enumerate(start=1)] == [(1, 3), (2, 4), (3, 5)]
    z = Dataset.zip((ds, ds.map(lambda x: x * 10)))
    assert [(int(a), int(b)) for a, b in z.take(2)] == [(0, 0), (1, 10)]
    z2 = Dataset.zip(ds, Dataset.range(2))
    assert len(z2) == 2
    assert values(ds.take(3).concatenate(Dataset.range(2))) == [0, 1, 2, 0, 1]
    assert values(ds.shard(2, 1)) == [1, 3, 5]


def test_unbatch_prefetch_cache_as_numpy():
    ds = Dataset.range(5).batch(2).unbatch().prefetch(tf.data.AUTOTUNE)
    assert values(ds) == [0, 1, 2, 3, 4]
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    cached = Dataset.from_generator(gen, output_types=tf.int64).map(lambda x: x + 1).cache()
    assert values(cached) == values(cached) == [1, 2, 3]
    assert len(calls) == 1
    it = Dataset.from_tensor_slices((np.ones((2, 2)), np.zeros(2))).as_numpy_iterator()
    a, b = next(it)
    assert isinstance(a, np.ndarray) and a.shape == (2,)
    assert tf.data.experimental.AUTOTUNE == tf.data.AUTOTUNE


def test_from_tensors_generator_reduce_padded_batch():
    assert values(Dataset.from_tensors([1, 2, 3])) == [[1, 2, 3]]

    def gen():
        yield from range(3)

    assert values(Dataset.from_generator(gen, output_types=tf.int32)) == [0, 1, 2]
    assert int(Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x)) == 10
    ragged = Dataset.from_generator(lambda: iter([np.ones(1), np.ones(3)]), output_types=tf.float64,
                                    output_shapes=[None])
    np.testing.assert_array_equal(next(iter(ragged.padded_batch(2))).numpy(), [[1, 0, 0], [1, 1, 1]])


def test_iterator_protocol():
    it = iter(Dataset.range(2))
    assert int(next(it)) == 0 and int(it.get_next()) == 1
    with pytest.raises(StopIteration):
        next(it)


def test_errors_say_what_to_do():
    with pytest.raises(ValueError, match="same number of rows"):
        Dataset.from_tensor_slices((np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="from_tensors"):
        Dataset.from_tensor_slices(1.0)
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(3).repeat())
    with pytest.raises(TypeError, match="unknown length"):
        len(Dataset.range(3).filter(lambda x: x > 0))
    with pytest.raises(ValueError, match="positive buffer_size"):
        Dataset.range(3).shuffle(0)


def test_custom_training_loop_shape():
    # The seed-003 pattern: shuffle(1024).batch(64) over (x, y) and enumerate.
    x = np.random.default_rng(0).random((150, 4))
    y = np.random.default_rng(1).random((150, 2))
    ds = Dataset.from_tensor_slices((x, y)).shuffle(buffer_size=1024).batch(64)
    shapes = [(xb.shape.as_list(), yb.shape.as_list()) for step, (xb, yb) in enumerate(ds)]
    assert shapes == [([64, 4], [64, 2]), ([64, 4], [64, 2]), ([22, 4], [22, 2])]


def test_map_is_traced_once_like_tf_and_stateful_maps_run_per_element():
    traces = []

    def f(x):
        traces.append(1)             # a Python side effect: runs when traced, as in TF
        return tf.square(x) + 1.0

    ds = Dataset.from_tensor_slices(np.arange(600, dtype=np.float32)).map(f)
    out = np.array([float(v) for v in ds])
    np.testing.assert_allclose(out, np.arange(600) ** 2 + 1.0)
    assert len(traces) <= 3          # one trace per chunk shape, not one call per element
    noisy = Dataset.range(4).map(lambda x: tf.cast(x, tf.float32) + tf.random.uniform(()))
    draws = [float(v) - i for i, v in enumerate(noisy)]
    assert len(set(draws)) == 4      # the random op ran for every element

    def concrete(x):                 # needs a concrete value: runs eagerly
        return x * 2 if int(x) % 2 else x

    assert values(Dataset.range(4).map(concrete)) == [0, 2, 2, 6]


# ---------------------------------------------------------------------------
# window, interleave, scan, take_while, unique, rebatch, sample/choose_from_datasets
# Expected values are the outputs printed in TensorFlow's tf.data.Dataset docstrings.
# ---------------------------------------------------------------------------

def windows(ds):
    return [values(w) for w in ds]


def test_window_reproduces_tf_docstring_examples():
    assert windows(Dataset.range(7).window(2)) == [[0, 1], [2, 3], [4, 5], [6]]
    assert windows(Dataset.range(7).window(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert windows(Dataset.range(7).window(3, 2, 1, True)) == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert windows(Dataset.range(7).window(3, 1, 2, True)) == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    assert windows(Dataset.range(7).window(3, shift=1, drop_remainder=True)) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    assert windows(Dataset.range(7).window(3, shift=1, stride=2, drop_remainder=True)) == [
        [0, 2, 4], [1, 3, 5], [2, 4, 6]]
    # Each window is a Dataset, printed as TF 2.21 prints it (recorded).
    w = next(iter(Dataset.range(7).window(3)))
    assert isinstance(w, Dataset)
    assert repr(w) == "<_VariantDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert len(w) == 3


def test_window_of_nested_elements_is_a_structure_of_datasets():
    # TF: Dataset.from_tensor_slices(([1, 2, 3, 4], [5, 6, 7, 8])).window(2)
    ds = Dataset.from_tensor_slices(([1, 2, 3, 4], [5, 6, 7, 8])).window(2)
    assert [tuple(values(c) for c in w) for w in ds] == [([1, 2], [5, 6]), ([3, 4], [7, 8])]
    ds = Dataset.from_tensor_slices(([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])).window(2)
    first = next(iter(ds))
    assert isinstance(first, tuple) and all(isinstance(c, Dataset) for c in first)
    assert [(values(a), values(b)) for a, b in ds] == [([1, 2], [6, 7]), ([3, 4], [8, 9]), ([5], [10])]
    d = Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]}).window(2)
    assert [{k: values(v) for k, v in w.items()} for w in d] == [
        {"a": [1, 2], "b": [4, 5], "c": [7, 8]}, {"a": [3], "b": [6], "c": [9]}]
    assert repr(d.element_spec["a"]) == (
        "DatasetSpec(TensorSpec(shape=(), dtype=tf.int32, name=None), TensorShape([]))")
    assert windows(Dataset.from_tensor_slices({"a": [1, 2, 3, 4]}).window(2).map(lambda w: w["a"])) == [
        [1, 2], [3, 4]]


def test_window_flat_map_batch_time_series_pattern():
    # TF's docstring: window(3, shift=1, drop_remainder=True).flat_map(lambda x: x.batch(3))
    ds = Dataset.range(7).window(3, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(3))
    assert values(ds) == [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    # The time-series tutorial: windows of n + 1 values split into (inputs, label).
    series = np.arange(10, dtype=np.float32) * 10
    pairs = (Dataset.from_tensor_slices(series).window(4, shift=1, drop_remainder=True)
             .flat_map(lambda w: w.batch(4)).map(lambda w: (w[:-1], w[-1])))
    got = [(x.numpy().tolist(), float(y)) for x, y in pairs]
    assert got[0] == ([0.0, 10.0, 20.0], 30.0) and got[-1] == ([60.0, 70.0, 80.0], 90.0) and len(got) == 7
    # A tuple of windows: zip the batched components.
    xy = Dataset.from_tensor_slices((np.arange(5), np.arange(5) * 10)).window(2, drop_remainder=True)
    zipped = xy.flat_map(lambda x, y: Dataset.zip((x.batch(2), y.batch(2))))
    assert [(values([a])[0], values([b])[0]) for a, b in zipped] == [([0, 1], [0, 10]), ([2, 3], [20, 30])]
    # Elements that are not index-based (a generator) window the same way.
    gen = Dataset.from_generator(lambda: iter(range(7)), output_types=tf.int64)
    assert values(gen.window(3, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(3))) == values(ds)
    with pytest.raises(TypeError, match="flat_map"):
        Dataset.range(4).window(2).batch(2).take(1).get_single_element()


@pytest.mark.parametrize("size,shift,stride,drop", [
    (1, None, 1, False), (2, None, 1, True), (3, 1, 1, False), (3, 1, 1, True), (3, 2, 2, False),
    (3, 2, 2, True), (2, 4, 1, False), (2, 4, 1, True), (4, 1, 3, True), (12, 1, 1, True), (3, 5, 2, False)])
def test_window_cardinality_matches_the_windows(size, shift, stride, drop):
    for ds in (Dataset.range(10), Dataset.from_generator(lambda: iter(range(10)), output_types=tf.int64).take(10)):
        out = ds.window(size, shift, stride, drop)
        expected = []
        step = size if shift is None else shift
        for start in range(0, 10, step):
            w = list(range(start, min(start + (size - 1) * stride + 1, 10), stride))
            if drop and start + (size - 1) * stride >= 10:
                break
            expected.append(w)
        assert windows(out) == expected
        if ds._card >= 0:
            assert int(out.cardinality()) == len(expected)
        else:
            assert int(out.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert int(Dataset.range(3).repeat().window(2).cardinality()) == tf.data.INFINITE_CARDINALITY
    assert windows(Dataset.range(3).repeat().window(2, shift=3).take(2)) == [[0, 1], [0, 1]]


def test_window_errors_name_the_argument():
    with pytest.raises(ValueError, match="`size` must be a positive integer"):
        Dataset.range(3).window(0)
    with pytest.raises(ValueError, match="`shift` must be a positive integer"):
        Dataset.range(3).window(2, shift=0)
    with pytest.raises(ValueError, match="`stride` must be a positive integer"):
        Dataset.range(3).window(2, stride=-1)


def test_interleave_reproduces_tf_docstring_example():
    ds = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6),
                                        cycle_length=2, block_length=4)
    assert values(ds) == [1, 1, 1, 1,
                          2, 2, 2, 2,
                          1, 1,
                          2, 2,
                          3, 3, 3, 3,
                          4, 4, 4, 4,
                          3, 3,
                          4, 4,
                          5, 5, 5, 5,
                          5, 5]
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert values(ds) == values(ds)  # re-iterable, same order
    # flat_map's docstring: interleave(cycle_length=1) is flat_map.
    rows = Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert values(rows.flat_map(Dataset.from_tensor_slices)) == list(range(1, 10))
    assert values(rows.interleave(Dataset.from_tensor_slices, cycle_length=1)) == list(range(1, 10))
    assert values(rows.interleave(Dataset.from_tensor_slices, cycle_length=3)) == [1, 4, 7, 2, 5, 8, 3, 6, 9]


def test_interleave_refills_exhausted_slots_in_tf_order():
    # range(x) has x elements: slots empty at different times and are refilled in place.
    ds = Dataset.range(1, 4).interleave(lambda x: Dataset.range(x), cycle_length=2)
    assert values(ds) == [0, 0, 1, 0, 1, 2]
    ds = Dataset.range(4).interleave(lambda x: Dataset.range(x), cycle_length=2, block_length=2)
    assert values(ds) == [0, 0, 1, 0, 1, 2]
    # num_parallel_calls / deterministic are accepted; the order stays deterministic.
    par = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(3), cycle_length=2,
                                         num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    assert values(par) == [1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 5, 5, 5]
    # Windows are datasets: interleave(lambda w: w) flattens them like flat_map does.
    assert values(Dataset.range(4).window(2).interleave(lambda w: w, cycle_length=1)) == [0, 1, 2, 3]


def test_interleave_default_cycle_length_is_the_cpu_count(monkeypatch):
    monkeypatch.setattr(tf.data.os, "cpu_count", lambda: 3)
    make = lambda x: Dataset.from_tensors(x).repeat(2)  # noqa: E731
    expected = values(Dataset.range(5).interleave(make, cycle_length=3))
    assert values(Dataset.range(5).interleave(make)) == expected
    assert values(Dataset.range(5).interleave(make, cycle_length=tf.data.AUTOTUNE)) == expected
    assert expected == [0, 1, 2, 0, 1, 2, 3, 4, 3, 4]


def test_interleave_and_flat_map_errors():
    with pytest.raises(ValueError, match="`cycle_length` must be a positive integer"):
        Dataset.range(3).interleave(Dataset.from_tensors, cycle_length=0)
    with pytest.raises(ValueError, match="`block_length` must be a positive integer"):
        Dataset.range(3).interleave(Dataset.from_tensors, block_length=0)
    with pytest.raises(TypeError, match="must return a tf.data.Dataset.*from_tensor_slices"):
        values(Dataset.range(3).interleave(lambda x: x * 2, cycle_length=2))
    with pytest.raises(TypeError, match="flat_map: `map_func` must return a tf.data.Dataset"):
        values(Dataset.range(3).flat_map(lambda x: x))


def test_scan_reproduces_tf_docstring_example():
    ds = Dataset.range(10).scan(initial_state=tf.constant(0, tf.int64), scan_func=lambda state, i: (state + i, state + i))
    assert values(ds) == [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]
    assert values(ds) == values(ds)  # the state restarts on each iteration
    assert int(ds.cardinality()) == 10
    assert int(Dataset.range(2).repeat().scan(0, lambda s, x: (s, x)).cardinality()) == tf.data.INFINITE_CARDINALITY
    # Nested state and tuple elements: scan_func(state, element) with the element as one tuple.
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10))
    out = pairs.scan((tf.constant(0, tf.int64), tf.constant(1, tf.int64)), lambda s, e: ((s[0] + e[1], s[1] * 2), s[0] + e[0]))
    assert values(out) == [0, 1, 12, 33]


def test_scan_errors():
    with pytest.raises(TypeError, match=r"pair \(new_state, output_element\)"):
        values(Dataset.range(3).scan(tf.constant(0, tf.int64), lambda s, x: s + x))
    with pytest.raises(TypeError, match="changed the state's dtype.*tf.cast"):
        values(Dataset.range(3).scan(tf.constant(0), lambda s, x: (tf.cast(s, tf.float32) + 0.5, x)))
    with pytest.raises(TypeError, match="structure"):
        values(Dataset.range(3).scan(tf.constant(0), lambda s, x: ((s, s), x)))


def test_take_while_reproduces_tf_docstring_example():
    ds = Dataset.range(10).take_while(lambda x: x < 5)
    assert values(ds) == [0, 1, 2, 3, 4]
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert values(Dataset.range(10).repeat().take_while(lambda x: x < 3)) == [0, 1, 2]
    assert values(Dataset.from_tensor_slices(([1, 2, 9, 1], [0, 0, 0, 0])).take_while(lambda a, b: a < 5)
                  .map(lambda a, b: a)) == [1, 2]
    with pytest.raises(ValueError, match="scalar boolean.*reduce_all"):
        values(Dataset.from_tensor_slices([[1, 2]]).take_while(lambda x: x > 0))


def test_unique_reproduces_tf_docstring_example():
    ds = Dataset.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique()
    assert sorted(values(ds)) == [1, 2, 37]
    assert values(ds) == [1, 37, 2]  # first occurrences, in order
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    words = Dataset.from_tensor_slices(np.array(["a", "b", "a", "c", "b"])).unique()
    assert [w.numpy() for w in words] == [b"a", b"b", b"c"]  # string tensors
    rows = Dataset.from_tensor_slices(np.array([[1, 2], [1, 2], [2, 1]])).unique()
    assert values(rows) == [[1, 2], [2, 1]]
    with pytest.raises(TypeError, match="unique\\(\\) supports.*integer or string"):
        Dataset.from_tensor_slices([1.0, 2.0]).unique()
    with pytest.raises(TypeError, match="unique\\(\\) supports"):
        Dataset.from_tensor_slices(([1], [2])).unique()
    with pytest.raises(TypeError, match="unique\\(\\) supports"):
        values(Dataset.range(3).map(lambda x: tf.cast(x, tf.float32)).unique())


def test_rebatch_reproduces_tf_docstring_examples():
    def batches(ds):
        return [b.numpy().tolist() for b in ds]
    assert batches(Dataset.range(6).batch(2).rebatch(3)) == [[0, 1, 2], [3, 4, 5]]
    assert batches(Dataset.range(7).batch(4).rebatch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert batches(Dataset.range(7).batch(2).rebatch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert batches(Dataset.range(8).batch(4).rebatch([2, 1, 1])) == [[0, 1], [2], [3], [4, 5], [6], [7]]
    # rebatch(N) is unbatch().batch(N), structures included.
    xy = Dataset.from_tensor_slices((np.arange(10.0), np.arange(10))).batch(3)
    for (a, b), (c, d) in zip(xy.rebatch(4), xy.unbatch().batch(4)):
        np.testing.assert_array_equal(a.numpy(), c.numpy())
        np.testing.assert_array_equal(b.numpy(), d.numpy())
    assert xy.rebatch(4, drop_remainder=True).element_spec[0].shape.as_list() == [4]
    assert xy.rebatch(4).element_spec[0].shape.as_list() == [None]
    assert int(xy.rebatch(4).cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert int(xy.repeat().rebatch(4).cardinality()) == tf.data.UNKNOWN_CARDINALITY   # TF 2.21: -2, always


def test_rebatch_errors():
    with pytest.raises(ValueError, match="`batch_size` must be a positive integer"):
        Dataset.range(4).batch(2).rebatch(0)
    with pytest.raises(ValueError, match="`batch_size`"):
        Dataset.range(4).batch(2).rebatch([2, -1])
    with pytest.raises(ValueError, match="rank >= 1.*batch"):
        values(Dataset.range(4).rebatch(2))


def test_sample_from_datasets_is_deterministic_with_a_seed():
    a, b = Dataset.range(0, 3), Dataset.range(100, 103)
    make = lambda seed: Dataset.sample_from_datasets([a, b], weights=[0.5, 0.5], seed=seed)  # noqa: E731
    first = values(make(42))
    assert sorted(first) == [0, 1, 2, 100, 101, 102]
    assert [x for x in first if x < 100] == [0, 1, 2]  # each dataset's order is kept
    assert values(make(42)) == first                  # same seed, same draws
    ds = make(42)
    assert values(ds) == values(ds)                   # and every iteration repeats them
    assert len({tuple(values(make(s))) for s in range(20)}) > 1
    tf.random.set_seed(5)
    g1 = values(Dataset.sample_from_datasets([a, b]))
    tf.random.set_seed(5)
    assert values(Dataset.sample_from_datasets([a, b])) == g1
    re = Dataset.sample_from_datasets([Dataset.range(50), Dataset.range(50)], seed=1,
                                      rerandomize_each_iteration=True)
    assert values(re) != values(re)


def test_sample_from_datasets_weights_and_cardinality():
    zeros, ones = Dataset.from_tensors(0).repeat(), Dataset.from_tensors(1).repeat()
    mix = Dataset.sample_from_datasets([zeros, ones], weights=[0.75, 0.25], seed=0)
    draws = np.array(values(mix.take(4000)))
    assert abs(draws.mean() - 0.25) < 0.03
    assert int(mix.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert values(Dataset.sample_from_datasets([zeros.take(3), ones], weights=[1.0, 0.0], seed=0)) == [0, 0, 0]
    finite = Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(5)], seed=3)
    # TF 2.21: unknown (-2) when no dataset is infinite, whatever their lengths
    assert int(finite.cardinality()) == tf.data.UNKNOWN_CARDINALITY and len(values(finite)) == 8
    stop = Dataset.sample_from_datasets([Dataset.range(3), Dataset.range(10, 50)], seed=3,
                                        stop_on_empty_dataset=True)
    assert int(stop.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    out = values(stop)
    assert [x for x in out if x < 10] == [0, 1, 2] and len(out) < 43 and out[-1] >= 10
    # weights as a dataset: one list of weights per draw
    per_draw = Dataset.from_tensors(np.array([0.0, 1.0])).repeat(3).concatenate(
        Dataset.from_tensors(np.array([1.0, 0.0])).repeat(2))
    assert values(Dataset.sample_from_datasets([zeros, ones], weights=per_draw, seed=0)) == [1, 1, 1, 0, 0]


def test_sample_from_datasets_errors():
    with pytest.raises(ValueError, match="non-empty list"):
        Dataset.sample_from_datasets([])
    with pytest.raises(ValueError, match="one weight per dataset"):
        Dataset.sample_from_datasets([Dataset.range(2), Dataset.range(2)], weights=[1.0])
    with pytest.raises(ValueError, match="non-negative"):
        Dataset.sample_from_datasets([Dataset.range(2), Dataset.range(2)], weights=[1.0, -1.0])
    with pytest.raises(TypeError, match="from_tensor_slices"):
        Dataset.sample_from_datasets([Dataset.range(2), np.arange(2)])
    with pytest.raises(TypeError, match="different structures"):
        Dataset.sample_from_datasets([Dataset.range(2), Dataset.zip(Dataset.range(2), Dataset.range(2))])


def test_choose_from_datasets_reproduces_tf_docstring_example():
    datasets = [Dataset.from_tensors("foo").repeat(),
                Dataset.from_tensors("bar").repeat(),
                Dataset.from_tensors("baz").repeat()]
    choice_dataset = Dataset.range(3).repeat(3)
    result = Dataset.choose_from_datasets(datasets, choice_dataset)
    assert [x.numpy() for x in result] == [b"foo", b"bar", b"baz"] * 3  # string tensors, as TF
    assert int(result.cardinality()) == tf.data.INFINITE_CARDINALITY   # TF 2.21: -1 (a dataset is infinite)
    short = [Dataset.range(2), Dataset.range(10, 15)]
    choices = Dataset.from_tensor_slices([0, 1, 0, 0, 1, 1])
    stopping = Dataset.choose_from_datasets(short, choices)
    assert values(stopping) == [0, 10, 1]             # dataset 0 ran out: stop (the default)
    assert int(stopping.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert values(Dataset.choose_from_datasets(short, choices, stop_on_empty_dataset=False)) == [0, 10, 1, 11, 12]


def test_choose_from_datasets_errors():
    with pytest.raises(ValueError, match="non-empty list"):
        Dataset.choose_from_datasets([], Dataset.range(2))
    with pytest.raises(TypeError, match="must be a tf.data.Dataset of scalar integers"):
        Dataset.choose_from_datasets([Dataset.range(2)], [0, 0])
    with pytest.raises(TypeError, match="scalar integers"):
        Dataset.choose_from_datasets([Dataset.range(2)], Dataset.from_tensor_slices([0.0, 1.0]))
    with pytest.raises(ValueError, match="index 2.*valid indices 0..1"):
        values(Dataset.choose_from_datasets([Dataset.range(2), Dataset.range(2)], Dataset.from_tensor_slices([0, 2])))



def test_datasets_print_tfs_class_names():
    """Each transformation's result prints as the class TF 2.21 gives it (``_MapDataset``,
    ``_ParallelMapDataset`` with num_parallel_calls, ...), with TF's element_spec.
    Recorded from TF 2.21."""
    r = tf.data.Dataset.range(6)
    cases = [r, r.map(lambda x: x * 2), r.map(lambda x: x, num_parallel_calls=tf.data.AUTOTUNE), r.batch(2), r.batch(2, drop_remainder=True),
         r.batch(2, num_parallel_calls=2), r.shuffle(3).prefetch(1), r.filter(lambda x: x > 2), r.take(-1), r.skip(1).repeat(2),
         r.cache(), r.batch(2).unbatch(), r.enumerate(), r.padded_batch(2), tf.data.Dataset.from_tensor_slices([1, 2]),
         tf.data.Dataset.from_tensors([1, 2]), tf.data.Dataset.zip((r, r)), r.concatenate(r), r.window(2), r.shard(2, 0),
         r.interleave(lambda x: tf.data.Dataset.from_tensors(x), cycle_length=2), r.with_options(tf.data.Options()),
         tf.data.Dataset.sample_from_datasets([r, r], seed=1), r.unique(), r.take_while(lambda x: x < 3),
         r.scan(0, lambda s, x: (s, x)), r.flat_map(lambda x: tf.data.Dataset.from_tensors(x)), r.batch(4).rebatch(2)]
    assert [repr(c) for c in cases] == TF21_DATASET_REPRS


TF21_DATASET_REPRS = [
    '<_RangeDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_MapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_ParallelMapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_BatchDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>',
    '<_BatchDataset element_spec=TensorSpec(shape=(2,), dtype=tf.int64, name=None)>',
    '<_ParallelBatchDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>',
    '<_PrefetchDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_FilterDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_TakeDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_RepeatDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<CacheDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_UnbatchDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_ZipDataset element_spec=(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorSpec(shape=(), dtype=tf.int64, name=None))>',
    '<_PaddedBatchDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>',
    '<_TensorSliceDataset element_spec=TensorSpec(shape=(), dtype=tf.int32, name=None)>',
    '<_TensorDataset element_spec=TensorSpec(shape=(2,), dtype=tf.int32, name=None)>',
    '<_ZipDataset element_spec=(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorSpec(shape=(), dtype=tf.int64, name=None))>',
    '<_ConcatenateDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_WindowDataset element_spec=DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))>',
    '<_ShardDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_InterleaveDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_OptionsDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_DirectedInterleaveDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_UniqueDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_TakeWhileDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_ScanDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_FlatMapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>',
    '<_RebatchDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>',
]


def test_padded_batch_pads_to_padded_shapes():
    """``padded_shapes`` fixes the padded sizes (None / -1: the batch's largest), per component,
    with ``padding_values`` per component; too small a padded shape is TF's DataLossError. The
    expected values and specs were recorded from TensorFlow 2.21."""
    ds = tf.data.Dataset.range(1, 5).map(lambda x: tf.fill([x], x))
    b = ds.padded_batch(2, padded_shapes=[6])
    assert repr(b.element_spec) == "TensorSpec(shape=(None, 6), dtype=tf.int64, name=None)"
    assert [e.numpy().tolist() for e in b] == [[[1, 0, 0, 0, 0, 0], [2, 2, 0, 0, 0, 0]],
                                              [[3, 3, 3, 0, 0, 0], [4, 4, 4, 4, 0, 0]]]
    b = ds.padded_batch(2, padded_shapes=[None], padding_values=tf.constant(-1, tf.int64))
    assert repr(b.element_spec) == "TensorSpec(shape=(None, None), dtype=tf.int64, name=None)"
    assert [e.numpy().tolist() for e in b] == [[[1, -1], [2, 2]], [[3, 3, 3, -1], [4, 4, 4, 4]]]
    b = ds.padded_batch(2, padded_shapes=tf.TensorShape([5]))
    assert [e.numpy().tolist() for e in b] == [[[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]], [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0]]]

    pairs = tf.data.Dataset.range(1, 4).map(lambda x: (tf.fill([x], x), tf.fill([x, 2], tf.cast(x, tf.float32))))
    b = pairs.padded_batch(2, padded_shapes=([4], [None, 3]), padding_values=(tf.constant(-1, tf.int64), 0.5))
    assert repr(b.element_spec) == ("(TensorSpec(shape=(None, 4), dtype=tf.int64, name=None), "
                                    "TensorSpec(shape=(None, None, 3), dtype=tf.float32, name=None))")
    got = [(a.numpy().tolist(), c.numpy().tolist()) for a, c in b]
    assert got == [([[1, -1, -1, -1], [2, 2, -1, -1]],
                    [[[1.0, 1.0, 0.5], [0.5, 0.5, 0.5]], [[2.0, 2.0, 0.5], [2.0, 2.0, 0.5]]]),
                   ([[3, 3, 3, -1]], [[[3.0, 3.0, 0.5], [3.0, 3.0, 0.5], [3.0, 3.0, 0.5]]])]

    it = iter(ds.padded_batch(2, padded_shapes=[3]))
    assert next(it).numpy().tolist() == [[1, 0, 0], [2, 2, 0]]
    with pytest.raises(tf.errors.DataLossError, match="Attempted to pad to a smaller size than the input element"):
        next(it)


def test_printing_while_a_parallel_map_worker_traces_is_not_lost(capsys):
    # A parallel map's worker traces its function a second time (vectorized) with prints muted:
    # what another thread prints meanwhile is printed, and sys.stdout is the program's again after.
    import sys
    import threading
    tracing, go = threading.Event(), threading.Event()

    def fn(x):
        if threading.current_thread() is not threading.main_thread():
            tracing.set()
            go.wait(10)
        return x * 2
    ds = tf.data.Dataset.range(8).map(fn, num_parallel_calls=2)
    stdout = sys.stdout
    out = []
    consumer = threading.Thread(target=lambda: out.extend(int(v) for v in ds))
    consumer.start()
    assert tracing.wait(10)
    print("printed while the worker traced")
    go.set()
    consumer.join(10)
    assert out == [0, 2, 4, 6, 8, 10, 12, 14]
    assert sys.stdout is stdout
    assert "printed while the worker traced" in capsys.readouterr().out


def test_cardinality_of_filter_ignore_errors_skip_all_and_repeat_zero_as_tf():
    # Recorded from TF 2.21 (the tf.data.Dataset.cardinality docstring: filter over an infinite
    # dataset is UNKNOWN_CARDINALITY).
    inf = Dataset.range(4).repeat()
    unknown = Dataset.range(7).filter(lambda x: True)
    card = lambda ds: int(ds.cardinality())  # noqa: E731
    assert card(inf.filter(lambda x: True)) == tf.data.UNKNOWN_CARDINALITY
    assert (inf.filter(lambda x: True).cardinality() == tf.data.UNKNOWN_CARDINALITY).numpy()
    assert card(inf.ignore_errors()) == tf.data.UNKNOWN_CARDINALITY
    assert card(Dataset.range(4).ignore_errors()) == tf.data.UNKNOWN_CARDINALITY
    assert card(inf.skip(-1)) == tf.data.INFINITE_CARDINALITY
    assert card(unknown.skip(-1)) == tf.data.UNKNOWN_CARDINALITY
    assert card(Dataset.range(4).skip(-1)) == 0 and values(Dataset.range(4).skip(-1)) == []
    assert card(unknown.repeat(0)) == 0
    assert card(unknown.repeat(3)) == tf.data.UNKNOWN_CARDINALITY
    f, d = Dataset.range(3), inf
    assert card(Dataset.sample_from_datasets([f, d], stop_on_empty_dataset=True)) == tf.data.INFINITE_CARDINALITY
    assert card(Dataset.sample_from_datasets([d, d], weights=Dataset.from_tensors([0.5, 0.5]).repeat())) == -1
    assert card(Dataset.sample_from_datasets([f, f], weights=[0.5, 0.5])) == tf.data.UNKNOWN_CARDINALITY
    assert card(Dataset.choose_from_datasets([d, d], Dataset.range(2))) == tf.data.INFINITE_CARDINALITY
    assert card(Dataset.choose_from_datasets([f, d], Dataset.range(2).repeat(),
                                             stop_on_empty_dataset=False)) == tf.data.INFINITE_CARDINALITY
    assert card(Dataset.choose_from_datasets([f, f], Dataset.range(2))) == tf.data.UNKNOWN_CARDINALITY


def test_padded_batch_scalar_shape_broadcast_padding_value_and_tf_checks():
    # The tf.data.Dataset.padded_batch docstring, recorded from TF 2.21.
    A = tf.data.Dataset.range(1, 5, output_type=tf.int32).map(lambda x: tf.fill([x], x))
    assert A.element_spec == tf.TensorSpec((None,), tf.int32)
    d = A.padded_batch(2, padded_shapes=5, padding_values=-1)
    assert [a.tolist() for a in d.as_numpy_iterator()] == [[[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]],
                                                           [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]]
    assert d.element_spec == tf.TensorSpec((None, 5), tf.int32)
    e = tf.data.Dataset.zip((A, {"a": A})).padded_batch(2, padding_values=-1)   # one value pads every component
    first = next(e.as_numpy_iterator())
    assert first[0].tolist() == first[1]["a"].tolist() == [[1, -1], [2, 2]]
    s = A.map(tf.strings.as_string).padded_batch(2, padding_values="x")
    assert next(s.as_numpy_iterator()).tolist() == [[b"1", b"x"], [b"2", b"2"]]
    i64 = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))
    msg = ("Invalid `padding_values`. `padding_values` values type <dtype: 'int32'> does not match type "
           "<dtype: 'int64'> of the corresponding input component.")
    with pytest.raises(TypeError) as err:
        i64.padded_batch(2, padding_values=-1)
    assert str(err.value) == msg
    with pytest.raises(TypeError, match="values type <dtype: 'float32'> does not match type <dtype: 'int64'>"):
        i64.padded_batch(2, padding_values=-1.5)
    with pytest.raises(TypeError, match="values type <dtype: 'int32'> does not match type <dtype: 'string'>"):
        i64.map(tf.strings.as_string).padded_batch(2, padding_values=-1)
    with pytest.raises(ValueError, match=r"values should be scalars, but got \(2,\)\."):
        i64.padded_batch(2, padding_values=[-1, 2])
    with pytest.raises(TypeError, match="If shallow structure is a sequence, input must also be a sequence. "
                                        "Input has type: 'int'."):
        tf.data.Dataset.zip((A, A)).padded_batch(2, padded_shapes=5)


def test_from_list_of_elements_of_different_shapes_as_tf():
    # The tf.data.experimental.from_list docstring and TF 2.21's element_spec (recorded).
    ds = tf.data.experimental.from_list([[1], [2, 3]])
    assert repr(list(ds.as_numpy_iterator())) == "[array([1], dtype=int32), array([2, 3], dtype=int32)]"
    assert ds.element_spec == tf.TensorSpec((None,), tf.int32) and int(ds.cardinality()) == 2
    assert tf.data.experimental.from_list([1, [2]]).element_spec == tf.TensorSpec(None, tf.int32)
    pairs = tf.data.experimental.from_list([(1, "a"), ([2, 3], "bb")])
    assert repr(pairs.element_spec) == ("(TensorSpec(shape=<unknown>, dtype=tf.int32, name=None), "
                                        "TensorSpec(shape=(), dtype=tf.string, name=None))")
    assert repr(list(pairs.as_numpy_iterator())) == "[(np.int32(1), b'a'), (array([2, 3], dtype=int32), b'bb')]"
    with pytest.raises(ValueError, match="Invalid `elements`. `elements` must be a list."):
        tf.data.experimental.from_list("abc")
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.data.experimental.from_list([(1,), 2])


def test_dataset_functions_raise_name_errors_when_made_and_filter_checks_its_predicate():
    # TF 2.21 traces a dataset function when the transformation is made (the tf.data.Dataset.interleave
    # docstring's NameError) and checks filter's predicate returns a tf.bool scalar (recorded).
    ds = Dataset.range(1, 6)
    with pytest.raises(NameError, match="name 'Undefined' is not defined"):
        ds.interleave(lambda x: Undefined.from_tensors(x).repeat(6))  # noqa: F821
    with pytest.raises(NameError):
        ds.map(lambda x: undefined_name)  # noqa: F821
    with pytest.raises(NameError):
        ds.filter(lambda x: undefined_name)  # noqa: F821
    with pytest.raises(ValueError) as err:
        ds.filter(lambda x: x)
    assert str(err.value) == ("Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its "
                              "return type is TensorSpec(shape=(), dtype=tf.int64, name=None).")
    with pytest.raises(ValueError, match=r"return type is TensorSpec\(shape=\(2,\), dtype=tf.bool, name=None\)"):
        ds.filter(lambda x: x > [1, 2])
    strings = Dataset.from_tensor_slices(["a", "bb"])
    assert values(strings.filter(lambda x: tf.strings.length(x) > 1)) == [b"bb"]
    with pytest.raises(ValueError, match=r"return type is TensorSpec\(shape=\(\), dtype=tf.int32, name=None\)"):
        values(strings.filter(lambda x: tf.strings.length(x)))
    with pytest.raises(TypeError) as err:
        ds.window(2).as_numpy_iterator()
    assert str(err.value) == ("`tf.data.Dataset.as_numpy_iterator()` is not supported for datasets that produce "
                              "values of type <class 'tensorflow.python.data.ops.dataset_ops.DatasetV2'>")


def test_reduce_state_is_tensors_with_tf_checks():
    # The tf.data.Dataset.reduce docstring and TF 2.21's checks (recorded).
    assert repr(Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1)) == \
        "<tf.Tensor: shape=(), dtype=int64, numpy=5>"
    assert tf.data.Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1).numpy().item() == 5
    assert repr(Dataset.range(0).reduce(np.int64(0), lambda x, _: x + 1)) == \
        "<tf.Tensor: shape=(), dtype=int64, numpy=0>"
    s = Dataset.range(3).reduce((np.int64(0), {"a": 1.0}), lambda s, e: (s[0] + e, {"a": s[1]["a"] * 2}))
    assert repr(s) == ("(<tf.Tensor: shape=(), dtype=int64, numpy=3>, "
                       "{'a': <tf.Tensor: shape=(), dtype=float32, numpy=8.0>})")
    with pytest.raises(TypeError) as err:
        Dataset.range(5).reduce(np.int64(0), lambda x, y: tf.cast(x, tf.float32))
    assert str(err.value) == ("The element types for the new state must match the initial state. Expected "
                              "<dtype: 'int64'> but got <dtype: 'float32'>.")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"The number of components of the initial state and "
                       r"the reduce function output does not match. \(initial_state=1, output=2\)."):
        Dataset.range(5).reduce(np.int64(0), lambda x, y: (x, y))


def test_iterator_of_a_mapped_dataset_passed_to_a_tf_function():
    # TF 2.21: get_next() inside the function gives the elements in turn (the map's function ran
    # inside the trace and failed: TracerArrayConversionError)
    it = iter(tf.data.Dataset.range(3).map(lambda x: x * 2))

    @tf.function
    def f(it):
        return it.get_next()

    assert [repr(f(it)) for _ in range(2)] == ["<tf.Tensor: shape=(), dtype=int64, numpy=0>",
                                               "<tf.Tensor: shape=(), dtype=int64, numpy=2>"]
