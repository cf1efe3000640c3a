"""tf.io.decode_csv (was missing; the CSV tutorial's cells 50-55): values, dtypes and errors
recorded from TF 2.21."""
import numpy as np
import pytest

import tapejax as tf

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def test_columns_types_defaults_and_quotes():
    n, s, f = tf.io.decode_csv(["1,a,2.5", '2,"b,c",', "3,,4"], record_defaults=[0, "x", 1.0])
    assert (n.dtype, s.dtype, f.dtype) == (tf.int32, tf.string, tf.float32)
    assert n.numpy().tolist() == [1, 2, 3] and s.numpy().tolist() == [b"a", b"b,c", b"x"]
    assert f.numpy().tolist() == [2.5, 1.0, 4.0]
    a, b = tf.io.decode_csv("7;z", [[0], ["q"]], field_delim=";")
    assert (a.shape, int(a), b.numpy()) == ((), 7, b"z")
    a, b = tf.io.decode_csv([["1,2"], ["3,4"]], [tf.constant(0, tf.int64), 0.0])
    assert (a.dtype, a.shape, b.dtype) == (tf.int64, (2, 1), tf.float32)
    np.testing.assert_array_equal(b.numpy(), [[2.], [4.]])
    a, b = tf.io.decode_csv(["1,2,3"], [0, 0], select_cols=[0, 2])
    assert (a.numpy().tolist(), b.numpy().tolist()) == ([1], [3])
    a, b = tf.io.decode_csv(["1,2"], [[], []])
    assert a.dtype == tf.float32 and a.numpy().tolist() == [1.0]


def test_in_a_dataset_map():
    ds = tf.data.Dataset.from_tensor_slices(["0,male,46.0", "1,female,2.5"]).map(
        lambda line: tf.io.decode_csv(line, [int(), str(), float()]))
    row = next(iter(ds))
    assert [e.numpy() for e in row] == [0, b"male", np.float32(46.0)]


@pytest.mark.parametrize("records, defaults, n, text", [
    (["1,2"], [0], 1, "Expect 1 fields but have 2 in record 0"),
    (["a,2"], [0, 0], 2, "Field 0 in record 0 is not a valid int32: a"),
    (["1,"], [0, []], 2, "Field 1 is required but missing in record 0!"),
])
def test_errors_as_tensorflow(records, defaults, n, text):
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.io.decode_csv(records, defaults)
    assert str(e.value) == (f"{{{{function_node __wrapped__DecodeCSV_OUT_TYPE_{n}_device_{_DEVICE}}}}} {text} "
                            "[Op:DecodeCSV]")
