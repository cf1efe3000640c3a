"""Keras 3's attention layers: MultiHeadAttention, Attention, AdditiveAttention. Weights are set
explicitly; expected values recorded from TF 2.21 (Keras 3): dtype, shape, first values (4 decimals),
sum and the Keras mask of each output."""
import numpy as np
import pytest

import tapejax as tf

L = tf.keras.layers
rng = np.random.RandomState(1)
q = rng.randn(2, 3, 4).astype("float32")
v = rng.randn(2, 5, 6).astype("float32")
rng = np.random.RandomState(2)
aq = rng.randn(2, 3, 4).astype("float32")
av = rng.randn(2, 5, 4).astype("float32")
ak = rng.randn(2, 5, 4).astype("float32")
QM = np.array([[1, 1, 0], [1, 0, 0]], bool)
VM = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 0, 1]], bool)
AM = np.array([[[1, 1, 0, 0, 1]] * 3, [[1, 0, 0, 0, 0]] * 3], bool)

EXPECTED = {
    'mha': ('float32', (2, 3, 4), [-0.03999999910593033, -0.10599999874830246, 0.17299999296665192, -0.0949999988079071, 0.5612000226974487, -1.0591000318527222, 1.195099949836731, -0.8830000162124634], 3.502, None),
    'mha_o': ('float32', (2, 3, 4), [-0.03999999910593033, -0.10599999874830246, 0.17299999296665192, -0.0949999988079071, 0.5612000226974487, -1.0591000318527222, 1.195099949836731, -0.8830000162124634], 3.502, None),
    'mha_s': ('float32', (2, 2, 3, 5), [0.1316000074148178, 0.04610000178217888, 0.19519999623298645, 0.03350000083446503, 0.5935999751091003, 0.004100000020116568, 0.9945999979972839, 0.0], 12.0, None),
    'mha_am': ('float32', (2, 3, 4), [-0.5274999737739563, -0.0010999999940395355, 0.48179998993873596, -0.7257999777793884, -1.2182999849319458, 0.7214000225067139, -0.05810000002384186, -0.5286999940872192], -3.4302, None),
    'mha_am_s': ('float32', (2, 2, 3, 5), [0.17059999704360962, 0.059700001031160355, 0.0, 0.0, 0.7696999907493591, 0.004100000020116568, 0.9945999979972839, 0.0], 12.0, [[[[True, True, False, False, True], [True, True, False, False, True], [True, True, False, False, True]]], [[[True, False, False, False, False], [True, False, False, False, False], [True, False, False, False, False]]]]),
    'mha2_self_causal': ('float32', (2, 3, 7), [-0.40720000863075256, -1.4699000120162964, 0.14059999585151672, 1.4953999519348145, 0.13050000369548798, -1.4716999530792236, -0.39739999175071716, 1.2165000438690186], -4.1695, None),
    'mha2_key': ('float32', (2, 3, 7), [-0.1785999983549118, 0.11389999836683273, 0.19930000603199005, -0.07779999822378159, -0.2134000062942505, 0.03909999877214432, 0.22050000727176666, -0.2669000029563904], -4.1896, None),
    'mha3_masked': ('float32', (2, 3, 4), [-1.0996999740600586, 0.5680000185966492, 0.08449999988079071, -0.6183000206947327, -0.8125, 0.6195999979972839, -0.2904999852180481, -0.031099999323487282], -2.6836, [[True, True, False], [True, False, False]]),
    'mha3_again': ('float32', (2, 3, 4), [-1.0266000032424927, 0.5023000240325928, 0.1234000027179718, -0.6187999844551086, -0.8118000030517578, 0.5090000033378601, -0.10289999842643738, -0.23999999463558197], -4.1099, None),
    'mha3_qmask': ('float32', (2, 3, 4), [-1.0139000415802002, 1.1657999753952026, -1.0195000171661377, 0.6644999980926514, -0.43810001015663147, 0.7760000228881836, -0.9312999844551086, 0.9041000008583069], 2.8125, [[True, True, False], [True, False, False]]),
    'att': ('float32', (2, 3, 4), [-0.4546999931335449, 0.6596999764442444, -1.6663999557495117, 1.77839994430542, -1.7309999465942383, -0.014000000432133675, 0.0430000014603138, 0.6255999803543091], -2.0532, None),
    'att_k': ('float32', (2, 3, 4), [-2.3361001014709473, 0.09769999980926514, 0.3027999997138977, 1.409600019454956, 0.4462999999523163, -0.8039000034332275, -0.0421999990940094, 0.4291999936103821], -1.6055, None),
    'att_concat': ('float32', (2, 3, 4), [-1.2369999885559082, 0.12370000034570694, -0.6105999946594238, 1.9265999794006348, -0.8772000074386597, 0.3221000134944916, -0.9994000196456909, 1.72160005569458], 2.0198, None),
    'att_causal': ('float32', (2, 3, 4), [-0.33880001306533813, -0.2362000048160553, -0.6377000212669373, -1.187600016593933, -0.44670000672340393, -0.22789999842643738, -0.6008999943733215, -0.8468000292778015], -1.7819, None),
    'att_causal_s': ('float32', (2, 3, 5), [1.0, 0.0, 0.0, 0.0, 0.0, 0.9003000259399414, 0.09969999641180038, 0.0], 6.0, None),
    'att_mask': ('float32', (2, 3, 4), [-1.5009000301361084, -0.1316000074148178, -0.21729999780654907, 2.142400026321411, -1.7730000019073486, -0.000699999975040555, 0.0471000000834465, 0.6251000165939331], 0.3717, [[True, True, False], [True, False, False]]),
    'att_mask_causal': ('float32', (2, 3, 4), [-0.33880001306533813, -0.2362000048160553, -0.6377000212669373, -1.187600016593933, -0.44670000672340393, -0.22789999842643738, -0.6008999943733215, -0.8468000292778015], -2.7313, [[True, True, False], [True, False, False]]),
    'att_mask_causal_s': ('float32', (2, 3, 5), [1.0, 0.0, 0.0, 0.0, 0.0, 0.9003000259399414, 0.09969999641180038, 0.0], 6.0, None),
    'add': ('float32', (2, 3, 4), [-0.7279000282287598, 0.02449999935925007, -0.6327999830245972, 1.055400013923645, -0.08349999785423279, 0.01889999955892563, -0.9354000091552734, 1.1121000051498413], 1.1246, None),
    'add_mask': ('float32', (2, 3, 4), [-1.2731000185012817, -0.11330000311136246, -0.23909999430179596, 0.6517000198364258, -1.895300030708313, -0.004699999932199717, 0.06790000200271606, 1.3000999689102173], 2.1423, None),
    'add_noscale': ('float32', (2, 3, 4), [-0.6363000273704529, 0.10360000282526016, -0.7760999798774719, 1.2130000591278076, -1.316499948501587, 0.016300000250339508, -0.31700000166893005, 1.5298999547958374], 2.4277, None),
    'att_auto': ('float32', (2, 3, 4), [-0.6881999969482422, -0.05820000171661377, 0.6252999901771545, 0.7339000105857849, 0.15889999270439148, -0.42480000853538513, -0.617900013923645, -0.24289999902248383], -1.436, [[True, True, False], [True, False, False]]),
}


def _set(layer):
    layer.set_weights([np.sin(np.arange(np.prod(w.shape)).reshape(w.shape) * (i + 1) * 0.37).astype("float32")
                       for i, w in enumerate(layer.get_weights())])
    return layer


def _check(tag, y):
    mask = getattr(y, "_keras_mask", None)
    dtype, shape, first, total, want_mask = EXPECTED[tag]
    assert (y.dtype.name, tuple(y.shape)) == (dtype, shape)
    np.testing.assert_allclose(y.numpy().ravel()[:8], first, atol=1e-4)
    np.testing.assert_allclose(float(y.numpy().astype("float64").sum()), total, atol=2e-3)
    assert (None if mask is None else mask.numpy().tolist()) == want_mask


def test_multi_head_attention_weights_and_outputs():
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3, name="mha")
    mha(q, v)
    assert [w.path for w in mha.weights] == [
        "mha/query/kernel", "mha/query/bias", "mha/key/kernel", "mha/key/bias", "mha/value/kernel", "mha/value/bias",
        "mha/attention_output/kernel", "mha/attention_output/bias"]
    assert [tuple(w.shape) for w in mha.weights] == [(4, 2, 3), (2, 3), (6, 2, 3), (2, 3), (6, 2, 3), (2, 3),
                                                     (2, 3, 4), (4,)]
    _set(mha)
    _check("mha", mha(q, v))
    out, scores = mha(q, v, return_attention_scores=True)
    _check("mha_o", out)
    _check("mha_s", scores)
    _check("mha_am", mha(q, v, attention_mask=AM))
    _check("mha_am_s", mha(q, v, attention_mask=AM, return_attention_scores=True)[1])


def test_multi_head_attention_options_and_masks():
    mha2 = L.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=4, output_shape=7, use_bias=False)
    mha2(q, q)
    _set(mha2)
    _check("mha2_self_causal", mha2(q, q, use_causal_mask=True))
    _check("mha2_key", mha2(q, q, key=q[:, ::-1]))
    e = L.Embedding(10, 4, mask_zero=True)
    e.build((None,))
    _set(e)
    tok = np.array([[1, 2, 0], [3, 0, 0]])
    x = e(tok)
    mha3 = L.MultiHeadAttention(num_heads=1, key_dim=2)
    mha3(x, x)
    _set(mha3)
    x = e(tok)
    _check("mha3_masked", mha3(x, x))
    # Keras 3 deletes the inputs' masks in the call: the same tensors a second time are unmasked
    _check("mha3_again", mha3(x, x))
    x = e(tok)
    _check("mha3_qmask", mha3(x, L.Identity()(v[:, :3, :4])))


def test_multi_head_attention_config_and_symbolic_call():
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3, name="mha")
    mha(q, v)
    config = mha.get_config()
    assert config["attention_axes"] == (1,) and config["value_dim"] == 3 and config["use_gate"] is False
    assert config["kernel_initializer"]["class_name"] == "GlorotUniform"
    clone = L.MultiHeadAttention.from_config(config)
    assert clone.get_config()["num_heads"] == 2
    inp = tf.keras.Input((3, 4))
    assert tuple(L.MultiHeadAttention(2, 2)(inp, inp).shape) == (None, 3, 4)


def test_multi_head_attention_gradients_reach_every_weight():
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(mha(q, v) ** 2)
    grads = tape.gradient(loss, mha.trainable_variables)
    assert len(grads) == 8 and all(g is not None for g in grads)


def test_attention_layers():
    _check("att", L.Attention()([aq, av]))
    _check("att_k", L.Attention()([aq, av, ak]))
    a = L.Attention(use_scale=True, score_mode="concat")
    a([aq, av])
    a.set_weights([np.array(0.5, "float32"), np.array(2.0, "float32")])
    _check("att_concat", a([aq, av, ak]))
    out, scores = L.Attention()([aq, av], return_attention_scores=True, use_causal_mask=True)
    _check("att_causal", out)
    _check("att_causal_s", scores)
    _check("att_mask", L.Attention()([aq, av], mask=[QM, VM]))
    out, scores = L.Attention()([aq, av], mask=[QM, VM], return_attention_scores=True, use_causal_mask=True)
    _check("att_mask_causal", out)
    _check("att_mask_causal_s", scores)
    ad = L.AdditiveAttention()
    ad([aq, av])
    ad.set_weights([np.array([0.5, -1, 2, 0.1], "float32")])
    _check("add", ad([aq, av, ak]))
    _check("add_mask", ad([aq, av], mask=[None, VM]))
    _check("add_noscale", L.AdditiveAttention(use_scale=False)([aq, av]))
    e = L.Embedding(10, 4, mask_zero=True)
    e.build((None,))
    e.set_weights([np.cos(np.arange(40).reshape(10, 4)).astype("float32")])
    x, y = e(np.array([[1, 2, 0], [3, 0, 0]])), e(np.array([[4, 5, 6, 0, 0], [7, 8, 0, 0, 0]]))
    _check("att_auto", L.Attention()([x, y]))


def test_attention_configs_match_keras():
    def rest(layer):
        return sorted((k, v) for k, v in layer.get_config().items() if k not in ("name", "dtype"))
    assert rest(L.Attention()) == [("dropout", 0.0), ("score_mode", "dot"), ("seed", None), ("trainable", True),
                                   ("use_scale", False)]
    assert rest(L.Attention(True, "concat", 0.1, seed=3)) == [
        ("dropout", 0.1), ("score_mode", "concat"), ("seed", 3), ("trainable", True), ("use_scale", True)]
    assert rest(L.AdditiveAttention(False, dropout=0.2)) == [("dropout", 0.2), ("seed", None), ("trainable", True),
                                                            ("use_scale", False)]
    with pytest.raises(ValueError, match="must be called on a list of inputs"):
        L.Attention()(aq)
