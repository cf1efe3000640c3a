"""tf.keras.utils.timeseries_dataset_from_array, recorded from TF 2.21 (Keras 3.15) with the same
calls (structured_data/time_series.ipynb builds its windows with it)."""
import numpy as np
import pytest

import tapejax as tf

ts = tf.keras.utils.timeseries_dataset_from_array


def test_windows_strides_and_rates_as_keras():
    data = np.arange(100 * 3, dtype="float32").reshape(100, 3)
    ds = ts(data, targets=None, sequence_length=5, sequence_stride=2, sampling_rate=3, batch_size=4)
    assert repr(ds) == "<_BatchDataset element_spec=TensorSpec(shape=(None, None, 3), dtype=tf.float32, name=None)>"
    first = next(iter(ds)).numpy()
    assert first.shape == (4, 5, 3)
    assert first[:, :, 0].tolist() == [[0, 9, 18, 27, 36], [6, 15, 24, 33, 42], [12, 21, 30, 39, 48],
                                       [18, 27, 36, 45, 54]]
    assert int(ds.cardinality()) == 11 and sum(len(b) for b in ds) == 44


def test_targets_start_end_and_unbatched_as_keras():
    data = np.arange(100 * 3, dtype="float32").reshape(100, 3)
    ds = ts(data[:, 0], targets=np.arange(100), sequence_length=4, batch_size=None, start_index=10, end_index=30)
    assert repr(ds) == ("<_PrefetchDataset element_spec=(TensorSpec(shape=(None,), dtype=tf.float32, name=None), "
                        "TensorSpec(shape=(), dtype=tf.int64, name=None))>")
    got = [(x.numpy().tolist(), int(y)) for x, y in ds]
    assert got[:3] == [([30.0, 33.0, 36.0, 39.0], 10), ([33.0, 36.0, 39.0, 42.0], 11), ([36.0, 39.0, 42.0, 45.0], 12)]
    assert len(got) == 17
    ds = ts(np.arange(10, dtype="float64"), np.arange(10) * 2, sequence_length=3, batch_size=3)
    assert repr(ds.element_spec) == ("(TensorSpec(shape=(None, None), dtype=tf.float64, name=None), "
                                     "TensorSpec(shape=(None,), dtype=tf.int64, name=None))")
    assert int(ds.cardinality()) == 3
    assert [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds] == [
        ([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]], [0, 2, 4]),
        ([[3.0, 4.0, 5.0], [4.0, 5.0, 6.0], [5.0, 6.0, 7.0]], [6, 8, 10]),
        ([[6.0, 7.0, 8.0], [7.0, 8.0, 9.0]], [12, 14])]


def test_shuffle_keeps_every_window():
    ds = ts(np.arange(10), None, sequence_length=3, batch_size=2, shuffle=True, seed=1)
    assert repr(ds) == "<_BatchDataset element_spec=TensorSpec(shape=(None, None), dtype=tf.int64, name=None)>"
    assert sorted(tuple(r) for b in ds for r in b.numpy().tolist()) == [(i, i + 1, i + 2) for i in range(8)]


@pytest.mark.parametrize("kw, message", [
    (dict(start_index=-1), "`start_index` must be 0 or greater. Received: start_index=-1"),
    (dict(start_index=20), "`start_index` must be lower than the length of the data. Received: start_index=20, "
                           "for data of length 10"),
    (dict(end_index=3, start_index=5), "`end_index` must be higher than `start_index`. Received: start_index=5, "
                                       "and end_index=3 "),
    (dict(end_index=20), "`end_index` must be lower than the length of the data. Received: end_index=20, for data "
                         "of length 10"),
    (dict(end_index=-2), "`end_index` must be higher than 0. Received: end_index=-2"),
    (dict(sampling_rate=0), "`sampling_rate` must be higher than 0. Received: sampling_rate=0"),
    (dict(sequence_stride=0), "`sequence_stride` must be higher than 0. Received: sequence_stride=0"),
    (dict(sampling_rate=10), "`sampling_rate` must be lower than the length of the data. Received: sampling_rate=10, "
                             "for data of length 10"),
    (dict(sequence_stride=10), "`sequence_stride` must be lower than the length of the data. Received: "
                               "sequence_stride=10, for data of length 10"),
])
def test_errors_as_keras(kw, message):
    with pytest.raises(ValueError) as e:
        ts(np.arange(10), None, sequence_length=3, **kw)
    assert str(e.value) == message


def test_set_shape_in_a_map_refines_the_element_spec_as_tf(capsys):
    # time_series.ipynb's WindowGenerator.split_window (recorded from TF 2.21): the windows' length
    # is unknown while the map function is traced; set_shape gives the spec its sizes.
    ds = ts(np.zeros((50, 3), "float32"), None, sequence_length=7, batch_size=4)

    def split(f):
        a = f[:, slice(0, 6), :]
        b = tf.stack([f[:, slice(6, None), i] for i in [1]], axis=-1)
        print(a.shape, b.shape)
        a.set_shape([None, 6, None])
        b.set_shape([None, 1, None])
        return a, b
    mapped = ds.map(split)
    assert repr(mapped.element_spec) == ("(TensorSpec(shape=(None, 6, 3), dtype=tf.float32, name=None), "
                                         "TensorSpec(shape=(None, 1, 1), dtype=tf.float32, name=None))")
    assert capsys.readouterr().out == "(None, None, 3) (None, None, 1)\n"
    a, b = next(iter(mapped))
    assert a.shape == (4, 6, 3) and b.shape == (4, 1, 1)
    with pytest.raises(ValueError, match=r"^Tensor's shape \(2, 3\) is not compatible with supplied shape \(2, 4\)\.$"):
        tf.zeros([2, 3]).set_shape([2, 4])
