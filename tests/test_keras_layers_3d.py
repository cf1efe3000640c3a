"""Keras 3's 3-D layers: MaxPooling3D, AveragePooling3D (and the Pool3D aliases), GlobalAveragePooling3D,
GlobalMaxPooling3D, UpSampling3D, ZeroPadding3D, Cropping3D. Outputs (dtype, shape, first values, sum)
and configs recorded from TF 2.21 (Keras 3)."""
import numpy as np
import pytest

import tapejax as tf

L = tf.keras.layers
x5 = (np.arange(2 * 5 * 4 * 6 * 2, dtype="float32").reshape(2, 5, 4, 6, 2) * 7 % 13 - 6) / 5

EXPECTED = {
    'mp3': ('float32', (2, 2, 2, 3, 2), [1.2000000476837158, 1.2000000476837158, 0.6000000238418579, 0.800000011920929, 1.0, 1.2000000476837158, 1.2000000476837158, 1.2000000476837158], 50.6),
    'ap3': ('float32', (2, 5, 4, 6, 2), [-0.05000000074505806, 0.05000000074505806, -0.17499999701976776, -0.07500000298023224, -0.30000001192092896, -0.20000000298023224, -0.10000000149011612, -0.0], 2.6333),
    'mp3s': ('float32', (2, 3, 2, 3, 2), [1.2000000476837158, 1.2000000476837158, 1.2000000476837158, 1.0, 1.0, 1.2000000476837158, 1.2000000476837158, 1.2000000476837158], 82.8),
    'ap3v': ('float32', (2, 4, 2, 2, 2), [-0.05000000074505806, 0.05000000074505806, -0.10000000149011612, -0.0, 0.07500000298023224, 0.17499999701976776, -0.30000001192092896, -0.20000000298023224], -0.225),
    'gap3': ('float32', (2, 2), [-0.02500000037252903, 0.009999999776482582, -0.009999999776482582, 0.02500000037252903], 0.0),
    'gmp3': ('float32', (2, 1, 1, 1, 2), [1.2000000476837158, 1.2000000476837158, 1.2000000476837158, 1.2000000476837158], 4.8),
    'up3': ('float32', (2, 5, 8, 18, 2), [-1.2000000476837158, 0.20000000298023224, -1.2000000476837158, 0.20000000298023224, -1.2000000476837158, 0.20000000298023224, -1.0, 0.4000000059604645], 0.0),
    'zp3': ('float32', (2, 6, 8, 9, 2), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.0),
    'cr3': ('float32', (2, 2, 3, 2, 2), [-1.2000000476837158, 0.20000000298023224, -1.0, 0.4000000059604645, 0.0, -1.2000000476837158, 0.20000000298023224, -1.0], -1.0),
}

CONFIGS = [
    [('data_format', 'channels_last'), ('padding', 'valid'), ('pool_size', (2, 2, 2)), ('strides', (2, 2, 2)), ('trainable', True)],
    [('data_format', 'channels_last'), ('padding', 'same'), ('pool_size', (3, 3, 3)), ('strides', (3, 3, 3)), ('trainable', True)],
    [('data_format', 'channels_last'), ('keepdims', False), ('trainable', True)],
    [('data_format', 'channels_last'), ('size', (2, 2, 2)), ('trainable', True)],
    [('data_format', 'channels_last'), ('padding', ((2, 2), (2, 2), (2, 2))), ('trainable', True)],
    [('cropping', ((1, 2), (0, 1), (2, 2))), ('data_format', 'channels_last'), ('trainable', True)],
]

CASES = {
    "mp3": lambda: L.MaxPooling3D()(x5),
    "ap3": lambda: L.AveragePooling3D((2, 3, 2), strides=1, padding="same")(x5),
    "mp3s": lambda: L.MaxPool3D(3, strides=2, padding="same")(x5),
    "ap3v": lambda: L.AvgPool3D(2, strides=(1, 2, 3))(x5),
    "gap3": lambda: L.GlobalAveragePooling3D()(x5),
    "gmp3": lambda: L.GlobalMaxPool3D(keepdims=True)(x5),
    "up3": lambda: L.UpSampling3D((1, 2, 3))(x5),
    "zp3": lambda: L.ZeroPadding3D(((1, 0), 2, (0, 3)))(x5),
    "cr3": lambda: L.Cropping3D(((1, 2), (0, 1), 2))(x5),
}
CONFIG_LAYERS = [lambda: L.MaxPooling3D(), lambda: L.AveragePooling3D(3, padding="same"),
                 lambda: L.GlobalAveragePooling3D(), lambda: L.UpSampling3D(), lambda: L.ZeroPadding3D(2),
                 lambda: L.Cropping3D(((1, 2), (0, 1), 2))]


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_matches_tf(case):
    y = CASES[case]()
    dtype, shape, first, total = EXPECTED[case]
    assert (y.dtype.name, tuple(y.shape)) == (dtype, shape)
    np.testing.assert_allclose(y.numpy().ravel()[:8], first, atol=1e-4)
    np.testing.assert_allclose(float(y.numpy().astype("float64").sum()), total, atol=2e-3)


@pytest.mark.parametrize("i", range(len(CONFIG_LAYERS)))
def test_configs_match_keras(i):
    layer = CONFIG_LAYERS[i]()
    config = layer.get_config()
    assert sorted((k, v) for k, v in config.items() if k not in ("name", "dtype")) == CONFIGS[i]
    assert type(layer).from_config(config).get_config() == config
