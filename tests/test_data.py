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
    assert int(b) == 3 and b.dtype == tf.int32 and a.dtype == tf.float32


def test_python_and_float64_inputs_follow_tf_conversion():
    assert Dataset.from_tensor_slices([1.0, 2.0]).element_spec.dtype == tf.float32
    assert Dataset.from_tensor_slices([1, 2]).element_spec.dtype == tf.int32
    elem = next(iter(Dataset.from_tensor_slices(np.random.random((3, 2)))))
    assert elem.dtype == tf.float32  # JAX's default precision


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

    cached = Dataset.from_generator(gen).map(lambda x: x + 1).cache()
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
    assert int(Dataset.range(5).reduce(tf.constant(0), lambda s, x: s + x)) == 10
    ragged = Dataset.from_generator(lambda: iter([np.ones(1), np.ones(3)]))
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
