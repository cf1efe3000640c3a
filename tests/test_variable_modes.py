"""tf.Variable's declared shape, synchronization and aggregation, as TF 2.21 (recorded)."""
import numpy as np
import pytest

import tapejax as tf


def test_declared_shape_with_unknown_dimensions():
    with pytest.raises(ValueError, match=r"the initial value's shape \(\(2,\)\) is not compatible with the "
                                         r"explicitly supplied `shape` argument \(\[3\]\)"):
        tf.Variable([1.0, 2.0], shape=[3])
    v = tf.Variable([1.0, 2.0], shape=[None])
    assert repr(v) == "<tf.Variable 'Variable:0' shape=(None,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    v.assign([1.0, 2.0, 3.0])
    assert v.shape.as_list() == [None] and v.value().shape == (3,)
    with pytest.raises(ValueError, match=r"The variable shape \(None,\), and the assigned value shape \(1, 1\)"):
        v.assign([[1.0]])
    v.assign_add([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0, 4.0])

    w = tf.Variable(0.0, shape=tf.TensorShape(None))
    assert str(w.shape) == "<unknown>"

    @tf.function
    def fill(n):
        w.assign(tf.range(n, dtype=tf.float32))
        return tf.reduce_sum(w), tf.shape(w)

    assert [t.numpy().tolist() for t in fill(3)] == [3.0, [3]]
    assert [t.numpy().tolist() for t in fill(5)] == [10.0, [5]]
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0, 2.0, 3.0, 4.0])
    assert fill.experimental_get_tracing_count() == 2


def test_synchronization_and_aggregation():
    v = tf.Variable(1.0)
    assert (str(v.aggregation), str(v.synchronization), v.trainable) == (
        "VariableAggregation.NONE", "VariableSynchronization.AUTO", True)
    v = tf.Variable([0.0], synchronization=tf.VariableSynchronization.ON_READ,
                    aggregation=tf.VariableAggregation.MEAN)
    assert v.trainable is False and v.aggregation is tf.VariableAggregation.MEAN
    assert repr(v.synchronization) == "<VariableSynchronization.ON_READ: 3>"
    assert tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ, trainable=True).trainable
    with pytest.raises(ValueError, match="Invalid variable synchronization mode: x for variable: None"):
        tf.Variable(1.0, synchronization="x")
    with pytest.raises(ValueError, match="Invalid variable aggregation mode: mean for variable: None"):
        tf.Variable(1.0, aggregation="mean")
    assert [repr(a) for a in tf.VariableAggregation] == [
        "<VariableAggregationV2.NONE: 0>", "<VariableAggregationV2.SUM: 1>", "<VariableAggregationV2.MEAN: 2>",
        "<VariableAggregationV2.ONLY_FIRST_REPLICA: 3>"]
    assert tf.VariableAggregation.NONE == tf.Variable(1.0).aggregation      # the TF1 member, equal by value
    assert tf.VariableAggregation.MEAN != "mean"
