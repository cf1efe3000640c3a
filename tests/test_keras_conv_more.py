"""Keras 3's DepthwiseConv2D, SeparableConv2D and Conv3D: weights set explicitly; outputs (dtype, shape,
first values, sum), weight paths and shapes, and configs recorded from TF 2.21 (Keras 3)."""
import numpy as np
import pytest

import tapejax as tf

L = tf.keras.layers
x = (np.arange(2 * 6 * 5 * 3, dtype="float32").reshape(2, 6, 5, 3) * 7 % 13 - 6) / 5
x5 = (np.arange(2 * 4 * 5 * 4 * 2, dtype="float32").reshape(2, 4, 5, 4, 2) * 7 % 13 - 6) / 5

EXPECTED = {
    'dw': ('float32', (2, 4, 3, 6), [1.0009000301361084, 0.0778999999165535, 0.4875999987125397, 1.8837000131607056, -3.8447999954223633, -4.756199836730957, -1.0433000326156616, 0.33219999074935913], 88.7399, (['kernel', 'bias'], [(3, 3, 3, 2), (6,)])),
    'dw_same_s2': ('float32', (2, 3, 3, 3), [0.0, 0.26930001378059387, 0.862500011920929, 0.0, 0.39959999918937683, 0.762499988079071, 0.0, 0.40209999680519104], 32.4017, (['kernel', 'bias'], [(2, 3, 3, 1), (3,)])),
    'dw_dil': ('float32', (2, 4, 3, 3), [-1.1371999979019165, 0.5476999878883362, -1.167199969291687, 1.757699966430664, -0.804099977016449, 2.539400100708008, -0.23420000076293945, 0.1469999998807907], 3.638, (['kernel'], [(2, 2, 3, 1)])),
    'sep': ('float32', (2, 4, 3, 4), [-0.010700000450015068, 1.0269999504089355, 1.0012999773025513, -0.016300000250339508, -0.18979999423027039, 0.33500000834465027, 0.1581999957561493, -0.5694000124931335], 44.7447, (['depthwise_kernel', 'pointwise_kernel', 'bias'], [(3, 3, 3, 1), (1, 1, 3, 4), (4,)])),
    'sep_same': ('float32', (2, 3, 5, 2), [0.7279000282287598, 0.9894000291824341, -0.7645999789237976, -0.7275999784469604, 0.8776999711990356, 0.9828000068664551, 0.5601999759674072, 0.9945999979972839], 12.7872, (['depthwise_kernel', 'pointwise_kernel', 'bias'], [(3, 2, 3, 2), (1, 1, 6, 2), (2,)])),
    'c3': ('float32', (2, 3, 4, 3, 3), [1.3597999811172485, 1.7378000020980835, 1.6191999912261963, -1.490399956703186, -0.10369999706745148, 1.035599946975708, -1.3543000221252441, -1.3933000564575195], 78.1506, (['kernel', 'bias'], [(2, 2, 2, 2, 3), (3,)])),
    'c3_same': ('float32', (2, 2, 3, 2, 2), [1.1998000144958496, 1.6273000240325928, 0.0, 0.0, 1.7476999759674072, 2.1273999214172363, 0.046300001442432404, 0.7721999883651733], 37.304, (['kernel', 'bias'], [(2, 3, 2, 2, 2), (2,)])),
}

CONFIGS = {
    'DepthwiseConv2D': [('activation', 'linear'), ('activity_regularizer', None), ('bias_constraint', None), ('bias_initializer', {'module': 'keras.initializers', 'class_name': 'Zeros', 'config': {}, 'registered_name': None}), ('bias_regularizer', None), ('data_format', 'channels_last'), ('depth_multiplier', 1), ('depthwise_constraint', None), ('depthwise_initializer', {'module': 'keras.initializers', 'class_name': 'GlorotUniform', 'config': {'seed': None, 'input_axes': None, 'output_axes': None}, 'registered_name': None}), ('depthwise_regularizer', None), ('dilation_rate', (1, 1)), ('kernel_size', (3, 3)), ('padding', 'valid'), ('strides', (1, 1)), ('trainable', True), ('use_bias', True)],
    'SeparableConv2D': [('activation', 'linear'), ('activity_regularizer', None), ('bias_constraint', None), ('bias_initializer', {'module': 'keras.initializers', 'class_name': 'Zeros', 'config': {}, 'registered_name': None}), ('bias_regularizer', None), ('data_format', 'channels_last'), ('depth_multiplier', 1), ('depthwise_constraint', None), ('depthwise_initializer', {'module': 'keras.initializers', 'class_name': 'GlorotUniform', 'config': {'seed': None, 'input_axes': None, 'output_axes': None}, 'registered_name': None}), ('depthwise_regularizer', None), ('dilation_rate', (1, 1)), ('filters', 4), ('kernel_size', (3, 3)), ('padding', 'valid'), ('pointwise_constraint', None), ('pointwise_initializer', {'module': 'keras.initializers', 'class_name': 'GlorotUniform', 'config': {'seed': None, 'input_axes': None, 'output_axes': None}, 'registered_name': None}), ('pointwise_regularizer', None), ('strides', (1, 1)), ('trainable', True), ('use_bias', True)],
    'Conv3D': [('activation', 'linear'), ('activity_regularizer', None), ('bias_constraint', None), ('bias_initializer', {'module': 'keras.initializers', 'class_name': 'Zeros', 'config': {}, 'registered_name': None}), ('bias_regularizer', None), ('data_format', 'channels_last'), ('dilation_rate', (1, 1, 1)), ('filters', 2), ('groups', 1), ('kernel_constraint', None), ('kernel_initializer', {'module': 'keras.initializers', 'class_name': 'GlorotUniform', 'config': {'seed': None, 'input_axes': None, 'output_axes': None}, 'registered_name': None}), ('kernel_regularizer', None), ('kernel_size', (3, 3, 3)), ('padding', 'valid'), ('strides', (1, 1, 1)), ('trainable', True), ('use_bias', True)],
}

CASES = {
    "dw": lambda: (L.DepthwiseConv2D(3, depth_multiplier=2), x),
    "dw_same_s2": lambda: (L.DepthwiseConv2D((2, 3), strides=2, padding="same", activation="relu"), x),
    "dw_dil": lambda: (L.DepthwiseConv2D(2, dilation_rate=2, use_bias=False), x),
    "sep": lambda: (L.SeparableConv2D(4, 3), x),
    "sep_same": lambda: (L.SeparableConv2D(2, (3, 2), strides=(2, 1), padding="same", depth_multiplier=2,
                                           activation="tanh"), x),
    "c3": lambda: (L.Conv3D(3, 2), x5),
    "c3_same": lambda: (L.Conv3D(2, (2, 3, 2), strides=2, padding="same", activation="relu"), x5),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_and_weights_match_tf(case):
    layer, inp = CASES[case]()
    layer(inp)
    layer.set_weights([np.sin(np.arange(np.prod(w.shape)).reshape(w.shape) * (i + 1) * 0.37).astype("float32")
                       for i, w in enumerate(layer.get_weights())])
    y = layer(inp)
    dtype, shape, first, total, (paths, shapes) = EXPECTED[case]
    assert (y.dtype.name, tuple(y.shape)) == (dtype, shape)
    np.testing.assert_allclose(y.numpy().ravel()[:8], first, atol=1e-4)
    np.testing.assert_allclose(float(y.numpy().astype("float64").sum()), total, atol=2e-3)
    assert [w.path.split("/", 1)[1] for w in layer.weights] == paths
    assert [tuple(w.shape) for w in layer.weights] == shapes


@pytest.mark.parametrize("make", [lambda: L.DepthwiseConv2D(3), lambda: L.SeparableConv2D(4, 3),
                                  lambda: L.Conv3D(2, 3)])
def test_configs_match_keras(make):
    layer = make()
    config = layer.get_config()
    assert sorted((k, v) for k, v in config.items() if k not in ("name", "dtype")) == CONFIGS[type(layer).__name__]
    assert type(layer).from_config(config).get_config() == config


def test_gradients_reach_the_kernels():
    layer = L.SeparableConv2D(2, 3)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) ** 2)
    assert all(g is not None for g in tape.gradient(loss, layer.trainable_variables))


# TF 2.21: Conv1DTranspose outputs (shape, first values, sum, weight paths and shapes)
X1 = (np.arange(2 * 5 * 3, dtype="float32").reshape(2, 5, 3) * 7 % 13 - 6) / 5
CONV1D_TRANSPOSE = [((2, 11, 4), [-0.6019999980926514, -1.162600040435791, -0.03579999879002571, 1.715999960899353, 1.8494000434875488, 1.3995000123977661, -0.2084999978542328, -0.9998000264167786, -0.2777999937534332, 2.2592999935150146], 53.9082, ['kernel', 'bias'], [(3, 4, 3), (4,)]), ((2, 15, 2), [0.0, 0.0, 0.0, 1.5937000513076782, 1.8494000434875488, 1.3995000123977661, 0.0, 0.0, 0.007699999958276749, 0.5428000092506409], 32.7269, ['kernel', 'bias'], [(4, 2, 3), (2,)]), ((2, 6, 3), [-0.6019999980926514, -1.836899995803833, -1.0317000150680542, 1.0347000360488892, 1.9876999855041504, 0.7329999804496765, -0.11190000176429749, -0.2498999983072281, -0.11029999703168869, 0.7455999851226807], -0.079, ['kernel'], [(2, 3, 3)])]
CONV1D_TRANSPOSE_CONFIG = [('activation', 'linear'), ('activity_regularizer', None), ('bias_constraint', None), ('bias_initializer', {'module': 'keras.initializers', 'class_name': 'Zeros', 'config': {}, 'registered_name': None}), ('bias_regularizer', None), ('data_format', 'channels_last'), ('dilation_rate', (1,)), ('filters', 4), ('kernel_constraint', None), ('kernel_initializer', {'module': 'keras.initializers', 'class_name': 'GlorotUniform', 'config': {'seed': None, 'input_axes': None, 'output_axes': None}, 'registered_name': None}), ('kernel_regularizer', None), ('kernel_size', (3,)), ('output_padding', None), ('padding', 'valid'), ('strides', (1,)), ('trainable', True), ('use_bias', True)]


def test_conv1d_transpose_matches_tf():
    layers = [L.Conv1DTranspose(4, 3, strides=2), L.Conv1DTranspose(2, 4, strides=3, padding="same", activation="relu"),
              L.Conv1DTranspose(3, 2, use_bias=False)]
    for layer, (shape, first, total, paths, shapes) in zip(layers, CONV1D_TRANSPOSE):
        layer(X1)
        layer.set_weights([np.sin(np.arange(np.prod(w.shape)).reshape(w.shape) * (i + 1) * 0.37).astype("float32")
                           for i, w in enumerate(layer.get_weights())])
        y = layer(X1).numpy()
        assert y.shape == shape
        np.testing.assert_allclose(y.ravel()[:10], first, atol=1e-4)
        np.testing.assert_allclose(float(y.sum()), total, atol=2e-3)
        assert [w.path.split("/", 1)[1] for w in layer.weights] == paths
        assert [tuple(w.shape) for w in layer.weights] == shapes
    config = L.Conv1DTranspose(4, 3).get_config()
    assert sorted((k, v) for k, v in config.items() if k not in ("name", "dtype")) == CONV1D_TRANSPOSE_CONFIG
    assert L.Convolution1DTranspose is L.Conv1DTranspose and L.Convolution2D is L.Conv2D
