"""The ops added for TensorFlow's missing names (ops/more_*_ops.py) inside tf.function: the same
values as eagerly; an op whose output shape depends on traced values raises a clear ValueError
(TensorFlow gives an unknown shape, which a JAX trace cannot)."""
import numpy as np
import pytest

import tapejax as tf

CASES = {
    "floor": lambda x: tf.floor(x),
    "argsort": lambda x: tf.argsort(x),
    "useg": lambda x: tf.math.unsorted_segment_sum(x, tf.constant([0, 1, 0, 1]), 2),
    "useg_max": lambda x: tf.math.unsorted_segment_max(x, tf.constant([0, 1, 0, 1]), 2),
    "conv1d": lambda x: tf.nn.conv1d(tf.reshape(x, [1, 4, 1]), tf.ones([2, 1, 1]), 1, "SAME"),
    "conv2d_t": lambda x: tf.nn.conv2d_transpose(tf.reshape(x, [1, 2, 2, 1]), tf.ones([2, 2, 1, 1]), [1, 4, 4, 1], 2),
    "bn": lambda x: tf.nn.batch_normalization(x, 1.0, 2.0, None, None, 1e-3),
    "ensure": lambda x: tf.ensure_shape(x, [4]),
    "seqmask": lambda x: tf.sequence_mask(tf.cast(x, tf.int32), 3),
    "searchsorted": lambda x: tf.searchsorted(tf.constant([0.0, 2.0, 4.0]), x),
    "rs": lambda x: tf.reverse_sequence(tf.reshape(x, [2, 2]), [2, 1], seq_axis=1),
    "hist": lambda x: tf.histogram_fixed_width(x, [0.0, 4.0], nbins=2),
    "zero_fraction": lambda x: tf.math.zero_fraction(x),
    "xdivy": lambda x: tf.math.xdivy(x, x),
    "in_top_k": lambda x: tf.math.in_top_k([0], tf.reshape(x, [1, 4]), 2),
    "bincount": lambda x: tf.math.bincount(tf.cast(x, tf.int32), minlength=5, maxlength=5),
    "complex": lambda x: tf.complex(x, x),
    "saturate": lambda x: tf.saturate_cast(x, tf.uint8),
    "crelu": lambda x: tf.nn.crelu(x),
    "lrn": lambda x: tf.nn.lrn(tf.reshape(x, [1, 1, 1, 4]), 1),
    "scalar_mul": lambda x: tf.scalar_mul(2.0, x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_values_in_tf_function(name):
    x = tf.constant([1.0, 0.0, 3.0, 2.0])
    f = tf.autograph.experimental.do_not_convert(CASES[name])
    np.testing.assert_allclose(np.asarray(tf.function(f)(x)), np.asarray(f(x)), rtol=1e-6)


@pytest.mark.parametrize("f", [lambda x: tf.unique(x).y, lambda x: tf.math.segment_sum(x, tf.cast(x, tf.int32)),
                               lambda x: tf.dynamic_stitch([tf.cast(x[:2], tf.int32)], [x[:2]])])
def test_value_dependent_shapes_explain_themselves(f):
    with pytest.raises(ValueError, match="depends on the input's values"):
        tf.function(tf.autograph.experimental.do_not_convert(f))(tf.constant([1.0, 0.0, 3.0, 2.0]))


def test_gradient_through_transposed_convolution_in_tf_function():
    y, w = tf.constant(np.arange(4.0, dtype=np.float32).reshape(1, 2, 2, 1)), tf.ones([2, 2, 1, 1])

    def loss(y):
        with tf.GradientTape() as t:
            t.watch(y)
            out = tf.reduce_sum(tf.nn.conv2d_transpose(y, w, [1, 4, 4, 1], 2) ** 2)
        return t.gradient(out, y)
    # d/dy sum(out^2) = 2 * out windows summed: 8 * y for this stride-2 2x2 filter of ones
    np.testing.assert_allclose(np.asarray(tf.function(loss)(y)), 8 * np.asarray(y))
    np.testing.assert_allclose(np.asarray(loss(y)), 8 * np.asarray(y))
