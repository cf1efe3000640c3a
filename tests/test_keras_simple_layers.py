"""Keras 3's small layers (activations, shape, padding/cropping, noise, spatial dropout, Masking,
UnitNormalization, GroupNormalization, Maximum/Minimum/Dot). Expected values recorded from TF 2.21
(Keras 3): dtype, shape, the first ten values (4 decimals), the sum and the Keras mask of each output;
the seeded noise layers draw TF's numbers."""
import numpy as np
import pytest

import tapejax as tf

L = tf.keras.layers
x3 = (np.arange(2 * 4 * 3, dtype="float32").reshape(2, 4, 3) * 7 % 11 - 5) / 3
x4 = (np.arange(2 * 3 * 4 * 4, dtype="float32").reshape(2, 3, 4, 4) * 5 % 13 - 6) / 4
x2 = x3[:, 0, :]
xm = x3.copy()
xm[0, 1] = 0
xm[1, 3] = 0

EXPECTED = {
    'elu': ('float32', (2, 4, 3), [-0.8111000061035156, 0.666700005531311, -0.48660001158714294, 1.666700005531311, 0.33329999446868896, -0.632099986076355, 1.333299994468689, 0.0, -0.7364000082015991, 1.0], 3.9561, None),
    'elu.5': ('float32', (2, 4, 3), [-0.40560001134872437, 0.666700005531311, -0.24330000579357147, 1.666700005531311, 0.33329999446868896, -0.31610000133514404, 1.333299994468689, 0.0, -0.36820000410079956, 1.0], 7.3114, None),
    'prelu': ('float32', (2, 4, 3), [-0.5, 0.666700005531311, -0.20000000298023224, 1.666700005531311, 0.33329999446868896, -0.30000001192092896, 1.333299994468689, 0.0, -0.4000000059604645, 1.0], 7.1667, None),
    'prelu_alpha_shape': '(1, 3)',
    'id': ('float32', (2, 4, 3), [-1.666700005531311, 0.666700005531311, -0.666700005531311, 1.666700005531311, 0.33329999446868896, -1.0, 1.333299994468689, 0.0, -1.333299994468689, 1.0], -1.0, None),
    'rep': ('float32', (2, 3, 3), [-1.666700005531311, 0.666700005531311, -0.666700005531311, -1.666700005531311, 0.666700005531311, -0.666700005531311, -1.666700005531311, 0.666700005531311, -0.666700005531311, 0.666700005531311], 0.0, None),
    'perm': ('float32', (2, 3, 4), [-1.666700005531311, 1.666700005531311, 1.333299994468689, 1.0, 0.666700005531311, 0.33329999446868896, 0.0, -0.33329999446868896, -0.666700005531311, -1.0], -1.0, None),
    'up1': ('float32', (2, 12, 3), [-1.666700005531311, 0.666700005531311, -0.666700005531311, -1.666700005531311, 0.666700005531311, -0.666700005531311, -1.666700005531311, 0.666700005531311, -0.666700005531311, 1.666700005531311], -3.0, None),
    'zp1': ('float32', (2, 7, 3), [0.0, 0.0, 0.0, -1.666700005531311, 0.666700005531311, -0.666700005531311, 1.666700005531311, 0.33329999446868896, -1.0, 1.333299994468689], -1.0, None),
    'crop1': ('float32', (2, 1, 3), [1.666700005531311, 0.33329999446868896, -1.0, 0.33329999446868896, -1.0, 1.333299994468689], 1.6667, None),
    'crop2': ('float32', (2, 2, 1, 4), [0.75, -1.25, 0.0, 1.25, 1.25, -0.75, 0.5, -1.5, -1.0, 0.25], -0.5, None),
    'crop2i': ('float32', (2, 1, 2, 4), [0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, -1.0, 0.25], -0.25, None),
    'gn': ('float32', (2, 4, 3), [-2.002500057220459, 1.504699945449829, -1.138800024986267, 1.9706000089645386, 0.9596999883651733, -0.3237999975681305, 1.5575000047683716, 0.7968999743461609, -1.8952000141143799, 1.1114000082015991], 0.7388, None),
    'gn_inf': ('float32', (2, 4, 3), [-1.666700005531311, 0.666700005531311, -0.666700005531311, 1.666700005531311, 0.33329999446868896, -1.0, 1.333299994468689, 0.0, -1.333299994468689, 1.0], -1.0, None),
    'gd': ('float32', (2, 4, 3), [-0.7527999877929688, 1.5789999961853027, -0.1527000069618225, 2.49399995803833, 0.6743000149726868, -2.104300022125244, 1.8214999437332153, 0.0, -0.10999999940395355, 1.1820000410079956], 7.9924, None),
    'sd1': ('float32', (2, 4, 3), [-3.3333001136779785, 1.333299994468689, -1.333299994468689, 3.3333001136779785, 0.666700005531311, -2.0, 2.6666998863220215, 0.0, -2.6666998863220215, 2.0], 7.3333, None),
    'sd2': ('float32', (2, 3, 4, 4), [-3.0, -0.5, 2.0, -2.0, 0.5, 3.0, -1.0, 1.5, -2.5, 0.0], 0.0, None),
    'mask': ('float32', (2, 4, 3), [-1.666700005531311, 0.666700005531311, -0.666700005531311, 0.0, 0.0, 0.0, 1.333299994468689, 0.0, -1.333299994468689, 1.0], -0.6667, [[True, False, True, True], [True, True, True, False]]),
    'mask_val': ('float32', (2, 4, 3), [-1.666700005531311, 0.666700005531311, -0.666700005531311, 0.0, 0.0, 0.0, 1.333299994468689, 0.0, -1.333299994468689, 1.0], -0.6667, [[True, True, True, True], [True, True, True, True]]),
    'unit': ('float32', (2, 4, 3), [-0.8704000115394592, 0.3481999933719635, -0.3481999933719635, 0.8452000021934509, 0.16899999976158142, -0.507099986076355, 0.707099974155426, 0.0, -0.707099974155426, 0.507099986076355], -0.5381, None),
    'unit12': ('float32', (2, 4, 3), [-0.4302999973297119, 0.1720999926328659, -0.1720999926328659, 0.4302999973297119, 0.08609999716281891, -0.2581999897956848, 0.3443000018596649, 0.0, -0.3443000018596649, 0.2581999897956848], -0.243, None),
    'gnorm': ('float32', (2, 3, 4, 4), [-1.5425000190734863, -0.21080000698566437, 1.034600019454956, -1.0563000440597534, 0.32179999351501465, 1.653499960899353, -0.5335999727249146, 0.7731999754905701, -1.2762000560760498, 0.05550000071525574], -0.0, None),
    'gnorm_all': ('float32', (2, 4, 3), [-1.7036999464035034, 1.3367999792099, 1.3367999792099, 0.8202999830245972, 0.4456000030040741, 0.4456000030040741, 0.5679000020027161, -0.4456000030040741, -0.4456000030040741, 0.3154999911785126], -0.0, None),
    'max': ('float32', (2, 4, 3), [1.666700005531311, 0.666700005531311, 0.666700005531311, 1.666700005531311, 0.33329999446868896, 1.0, 1.333299994468689, -0.0, 1.333299994468689, 1.0], 22.3333, None),
    'min': ('float32', (2, 4, 3), [-3.3333001136779785, -0.666700005531311, -1.333299994468689, -1.666700005531311, -0.33329999446868896, -2.0, -1.333299994468689, 0.0, -2.6666998863220215, -1.0], -34.0, None),
    'dot1': ('float32', (2, 1), [7.3333001136779785, 7.3333001136779785], 14.6667, None),
    'dot_n': ('float32', (2, 1), [0.5720999836921692, 0.8808000087738037], 1.4528, None),
    'dot3': ('float32', (2, 3, 3), [8.33329963684082, -0.8888999819755554, -4.0, -0.8888999819755554, 0.666700005531311, -0.22220000624656677, -4.0, -0.22220000624656677, 6.0, 0.666700005531311], 9.8889, None),
    'dot32': ('float32', (2, 4, 4), [3.6666998863220215, -1.8889000415802002, -1.333299994468689, -0.7778000235557556, -1.8889000415802002, 3.8889000415802, 3.5555999279022217, 3.2221999168395996, -1.333299994468689, 3.5555999279022217], 71.6667, None),
    'mask_lstm': ('float32', (2, 2), [-0.06210000067949295, -0.06210000067949295, 0.7475000023841858, 0.7475000023841858], 1.3709, None),
}

CONFIGS = {
    'ELU': [('alpha', 0.5), ('trainable', True)],
    'PReLU': [('alpha_constraint', None), ('alpha_initializer', {'module': 'keras.initializers', 'class_name': 'Zeros', 'config': {}, 'registered_name': None}), ('alpha_regularizer', None), ('shared_axes', [1, 2]), ('trainable', True)],
    'RepeatVector': [('n', 2), ('trainable', True)],
    'Permute': [('dims', (2, 1)), ('trainable', True)],
    'UpSampling1D': [('size', 3), ('trainable', True)],
    'ZeroPadding1D': [('data_format', 'channels_last'), ('padding', (2, 2)), ('trainable', True)],
    'Cropping1D': [('cropping', (1, 1)), ('trainable', True)],
    'Cropping2D': [('cropping', ((1, 1), (1, 1))), ('data_format', 'channels_last'), ('trainable', True)],
    'GaussianNoise': [('seed', 1), ('stddev', 0.2), ('trainable', True)],
    'GaussianDropout': [('rate', 0.1), ('seed', 2), ('trainable', True)],
    'SpatialDropout1D': [('rate', 0.3), ('seed', 1)],
    'SpatialDropout2D': [('data_format', 'channels_last'), ('rate', 0.3), ('seed', None)],
    'Masking': [('mask_value', 1.0), ('trainable', True)],
    'UnitNormalization': [('axis', -1), ('trainable', True)],
    'GroupNormalization': [('axis', -1), ('beta_constraint', None), ('beta_initializer', {'module': 'keras.initializers', 'class_name': 'Zeros', 'config': {}, 'registered_name': None}), ('beta_regularizer', None), ('center', True), ('epsilon', 0.001), ('gamma_constraint', None), ('gamma_initializer', {'module': 'keras.initializers', 'class_name': 'Ones', 'config': {}, 'registered_name': None}), ('gamma_regularizer', None), ('groups', 4), ('scale', True), ('trainable', True)],
    'Dot': [('axes', 1), ('normalize', True), ('trainable', True)],
    'Identity': [('trainable', True)],
    'Maximum': [('trainable', True)],
}

CASES = {
    "elu": lambda: L.ELU()(x3),
    "elu.5": lambda: L.ELU(0.5)(x3),
    "prelu": lambda: L.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.3), shared_axes=[1])(x3),
    "id": lambda: L.Identity()(x3),
    "rep": lambda: L.RepeatVector(3)(x2),
    "perm": lambda: L.Permute((2, 1))(x3),
    "up1": lambda: L.UpSampling1D(3)(x3),
    "zp1": lambda: L.ZeroPadding1D((1, 2))(x3),
    "crop1": lambda: L.Cropping1D((1, 2))(x3),
    "crop2": lambda: L.Cropping2D(((1, 0), (1, 2)))(x4),
    "crop2i": lambda: L.Cropping2D(1)(x4),
    "gn": lambda: L.GaussianNoise(0.5, seed=3)(x3, training=True),
    "gn_inf": lambda: L.GaussianNoise(0.5, seed=3)(x3),
    "gd": lambda: L.GaussianDropout(0.4, seed=3)(x3, training=True),
    "sd1": lambda: L.SpatialDropout1D(0.5, seed=2)(x3, training=True),
    "sd2": lambda: L.SpatialDropout2D(0.5, seed=2)(x4, training=True),
    "mask": lambda: L.Masking()(xm),
    "mask_val": lambda: L.Masking(mask_value=xm[0, 0, 0])(xm),
    "unit": lambda: L.UnitNormalization()(x3),
    "unit12": lambda: L.UnitNormalization(axis=(1, 2))(x3),
    "gnorm": lambda: L.GroupNormalization(groups=2, axis=-1)(x4),
    "gnorm_all": lambda: L.GroupNormalization(groups=-1)(x3),
    "max": lambda: L.Maximum()([x3, -x3]),
    "min": lambda: L.minimum([x3, -x3, x3 * 2]),
    "dot1": lambda: L.Dot(axes=1)([x2, x2 * 2]),
    "dot_n": lambda: L.Dot(axes=1, normalize=True)([x2, x2 + 1]),
    "dot3": lambda: L.Dot(axes=(1, 1))([x3, x3]),
    "dot32": lambda: L.dot([x3, np.swapaxes(x3, 1, 2)], axes=(2, 1)),
    "mask_lstm": lambda: tf.keras.Sequential([tf.keras.Input((4, 3)), L.Masking(), L.LSTM(
        2, kernel_initializer="ones", recurrent_initializer="ones")])(xm),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_layer_output_matches_tf(case):
    y = CASES[case]()
    mask = getattr(y, "_keras_mask", None)
    dtype, shape, first, total, want_mask = EXPECTED[case]
    assert (y.dtype.name, tuple(y.shape)) == (dtype, shape)
    np.testing.assert_allclose(y.numpy().ravel()[:10], first, atol=1e-4)
    np.testing.assert_allclose(float(y.numpy().astype("float64").sum()), total, atol=2e-3)
    assert (None if mask is None else mask.numpy().tolist()) == want_mask


def test_prelu_alpha_shape():
    layer = L.PReLU(shared_axes=[1])
    layer(x3)
    assert str(tuple(layer.alpha.shape)) == EXPECTED["prelu_alpha_shape"]


CONFIG_LAYERS = [
    lambda: L.ELU(0.5), lambda: L.PReLU(shared_axes=[1, 2]), lambda: L.RepeatVector(2), lambda: L.Permute((2, 1)),
    lambda: L.UpSampling1D(3), lambda: L.ZeroPadding1D(2), lambda: L.Cropping1D(1), lambda: L.Cropping2D(1),
    lambda: L.GaussianNoise(0.2, seed=1), lambda: L.GaussianDropout(0.1, seed=2),
    lambda: L.SpatialDropout1D(0.3, seed=1), lambda: L.SpatialDropout2D(0.3), lambda: L.Masking(1.0),
    lambda: L.UnitNormalization(), lambda: L.GroupNormalization(4), lambda: L.Dot(axes=1, normalize=True),
    lambda: L.Identity(), lambda: L.Maximum(),
]


@pytest.mark.parametrize("i", range(len(CONFIG_LAYERS)))
def test_config_matches_keras_and_round_trips(i):
    layer = CONFIG_LAYERS[i]()
    config = layer.get_config()
    rest = {k: v for k, v in config.items() if k not in ("name", "dtype")}
    # TF's configs went through repr: compare in that form (tuples, lists and dicts as Keras gives them)
    assert sorted(rest.items()) == CONFIGS[type(layer).__name__]
    assert type(layer).from_config(config).get_config() == config


def test_errors_match_keras():
    with pytest.raises(ValueError, match="must be consecutive and start from 1"):
        L.Permute((0, 1))
    with pytest.raises(ValueError, match="should be called on exactly 2 inputs"):
        L.Dot(axes=1)([x2, x2, x2])
    with pytest.raises(ValueError, match=r"Number of groups \(3\) must be a multiple"):
        L.GroupNormalization(groups=3)(x4)


# TF 2.21: AlphaDropout (seeded, with a noise shape) and SpatialDropout3D outputs in training
ALPHA = [[[-0.9807999730110168, 1.0281000137329102, -0.11990000307559967], [1.8890000581741333, 0.741100013256073, -0.40689998865127563], [1.6019999980926514, 0.45410001277923584, -0.6937999725341797], [1.315000057220459, -1.059499979019165, -1.059499979019165]], [[1.0281000137329102, -0.11990000307559967, 1.8890000581741333], [0.741100013256073, -0.40689998865127563, 1.6019999980926514], [0.45410001277923584, -0.6937999725341797, 1.315000057220459], [-1.059499979019165, -0.9807999730110168, 1.0281000137329102]]]
ALPHA_NOISE_SHAPE = [[[-0.6980999708175659, 1.3701000213623047, -0.77920001745224], [2.256500005722046, 1.0746999979019165, -0.77920001745224], [1.9610999822616577, 0.77920001745224, -0.77920001745224], [1.6655999422073364, 0.4837000072002411, -0.77920001745224]], [[1.3701000213623047, 0.1882999986410141, -0.77920001745224], [1.0746999979019165, -0.10719999670982361, -0.77920001745224], [0.77920001745224, -0.4027000069618225, -0.77920001745224], [0.4837000072002411, -0.6980999708175659, -0.77920001745224]]]
SPATIAL3D = [0.0, 1.333299994468689, -1.333299994468689, 3.3333001136779785, 0.0, -2.0, 2.6666998863220215, 0.0, 0.0, 2.0, -0.666700005531311, -3.3333001136779785, 0.0, -1.333299994468689, 3.3333001136779785, 0.666700005531311, 0.0, 2.6666998863220215, 0.0, -2.6666998863220215, 0.0, -0.666700005531311, -3.3333001136779785, 1.333299994468689, 0.0, 3.3333001136779785, 0.666700005531311, -2.0, 0.0, 0.0, -2.6666998863220215, 2.0, 0.0, -3.3333001136779785, 1.333299994468689, -1.333299994468689, 0.0, 0.666700005531311, -2.0, 2.6666998863220215, 0.0, -2.6666998863220215, 2.0, -0.666700005531311, 0.0, 1.333299994468689, -1.333299994468689, 3.3333001136779785, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
x5 = (np.arange(2 * 2 * 3 * 2 * 4, dtype="float32").reshape(2, 2, 3, 2, 4) * 7 % 11 - 5) / 3


def test_alpha_and_spatial3d_dropout_match_tf():
    np.testing.assert_allclose(L.AlphaDropout(0.3, seed=2)(x3, training=True).numpy(), ALPHA, atol=1e-4)
    y = L.AlphaDropout(0.5, noise_shape=(2, 1, 3), seed=4)(x3, training=True)
    np.testing.assert_allclose(y.numpy(), ALPHA_NOISE_SHAPE, atol=1e-4)
    np.testing.assert_allclose(L.AlphaDropout(0.3, seed=2)(x3).numpy(), x3)
    np.testing.assert_allclose(L.SpatialDropout3D(0.5, seed=3)(x5, training=True).numpy().ravel(), SPATIAL3D,
                               atol=1e-4)
    assert sorted((k, v) for k, v in L.AlphaDropout(0.3, seed=2).get_config().items()
                  if k not in ("name", "dtype")) == [('rate', 0.3), ('seed', 2), ('trainable', True)]
    assert sorted((k, v) for k, v in L.SpatialDropout3D(0.2, seed=1).get_config().items()
                  if k not in ("name", "dtype")) == [('data_format', 'channels_last'), ('rate', 0.2), ('seed', 1)]



def test_rms_normalization_matches_tf():
    layer = L.RMSNormalization()
    assert layer.get_config()["axis"] == -1
    y = layer(x3).numpy()
    np.testing.assert_allclose(y.ravel()[:8], [-1.507599949836731, 0.6029999852180481, -0.6029999852180481, 1.4637999534606934, 0.29280000925064087, -0.8783000111579895, 1.2246999740600586, 0.0], atol=1e-4)
    np.testing.assert_allclose(float(y.sum()), -0.932, atol=2e-3)
    layer.set_weights([np.array([0.5, 2.0, -1.0], "float32")])
    np.testing.assert_allclose(layer(x3).numpy().ravel()[:8], [-0.7537999749183655, 1.2059999704360962, 0.6029999852180481, 0.7318999767303467, 0.5855000019073486, 0.8783000111579895, 0.6123999953269958, 0.0], atol=1e-4)
    layer2 = L.RMSNormalization(axis=[1, 2], epsilon=0.1)
    np.testing.assert_allclose(layer2(x3).numpy().ravel()[:8], [-1.434399962425232, 0.5738000273704529, -0.5738000273704529, 1.434399962425232, 0.28690001368522644, -0.8607000112533569, 1.1476000547409058, 0.0], atol=1e-4)
    assert [tuple(w.shape) for w in layer2.weights] == [(4, 3)]
    config = layer.get_config()
    assert sorted((k, v) for k, v in config.items() if k not in ("name", "dtype")) == [('axis', [-1]), ('epsilon', 1e-06), ('trainable', True)]


def test_thresholded_relu_matches_tf():
    # TF 2.21 (Keras's legacy layer): x * (x > theta); -1 * 0 keeps its sign, as TF prints -0.0
    layer = L.ThresholdedReLU(theta=0.5, name="thresholded_re_lu")
    y = layer(np.array([-1., 0.5, 0.6, 2.]))
    assert y.dtype == tf.float32 and [str(v) for v in y.numpy().tolist()] == ["-0.0", "0.0", "0.6000000238418579",
                                                                            "2.0"]
    assert L.ThresholdedReLU()(np.array([1., 1.5])).numpy().tolist() == [0.0, 1.5]
    config = layer.get_config()
    assert config["theta"] == 0.5 and config["name"] == "thresholded_re_lu" and config["trainable"] is True
    with pytest.raises(ValueError, match="should be >=0. Received: -1"):
        L.ThresholdedReLU(theta=-1)
