"""Keras 3's Discretization: TF's Bucketize indices (int32), adapt's approximate quantile boundaries
(arrays and datasets), the one_hot / multi_hot / count encodings and the configuration. Expected
values recorded from TF 2.21 (Keras 3)."""
import numpy as np

import tapejax as tf

L = tf.keras.layers
X = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])


def test_bucketize_and_adapt_match_tf():
    y = L.Discretization(bin_boundaries=[0., 1., 2.])(X)
    assert y.dtype == tf.int32 and y.numpy().tolist() == [[0, 2, 3, 1], [1, 3, 2, 1]]
    layer = L.Discretization(num_bins=4, epsilon=0.01)
    layer.adapt(X)
    np.testing.assert_allclose(layer.bin_boundaries, [0.0, 0.5, 1.2999999523162842])
    assert layer(X).numpy().tolist() == [[0, 2, 3, 2], [1, 3, 3, 1]]
    d = np.random.RandomState(0).randn(1000).astype("float32")
    layer = L.Discretization(num_bins=5)
    layer.adapt(d)
    np.testing.assert_allclose(layer.bin_boundaries, [-0.86405, -0.31198, 0.19656, 0.78633], atol=1e-5)
    layer = L.Discretization(num_bins=3)
    layer.adapt(tf.data.Dataset.from_tensor_slices(d).batch(100))
    np.testing.assert_allclose(layer.bin_boundaries, [-0.43697, 0.37212], atol=1e-5)


def test_encodings_and_config_match_tf():
    assert L.Discretization(bin_boundaries=[0., 1.], output_mode="one_hot")(
        np.array([[-1.], [0.5], [2.]])).numpy().tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert L.Discretization(bin_boundaries=[0., 1.], output_mode="multi_hot")(
        np.array([[-1., 0.5], [2., 2.]])).numpy().tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert L.Discretization(bin_boundaries=[0., 1.], output_mode="count")(
        np.array([[-1., 0.5], [2., 2.]])).numpy().tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    config = L.Discretization(bin_boundaries=[0., 1.], name="disc").get_config()
    assert sorted(config.items()) == [("bin_boundaries", [0.0, 1.0]), ("dtype", "float32"), ("epsilon", 0.01),
                                      ("name", "disc"), ("num_bins", None), ("output_mode", "int"),
                                      ("sparse", False)]
    assert L.Discretization.from_config(config).get_config() == config
