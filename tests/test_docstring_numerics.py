"""TensorFlow 2.21's API docstring examples of tf.math, tf.nn, tf.linalg, tf.image, tf.random and
the top-level array ops, and the behaviour behind them; values recorded from TensorFlow 2.21
(the same code run under ``tensorflow``)."""
import numpy as np
import pytest

import tapejax as tf

X = [[1 + 1j, 2 + 2j], [4 + 4j, 5 - 5j]]
ADJ = [[1 - 1j, 4 - 4j], [2 - 2j, 5 + 5j]]


def test_transpose_conjugate():
    # tf.transpose docstring: conjugate=True conjugates a complex tensor, no-op on real ones
    assert tf.transpose(tf.constant(X), conjugate=True).numpy().tolist() == ADJ
    assert tf.transpose([[1, 2]], conjugate=True).numpy().tolist() == [[1], [2]]
    assert tf.transpose(tf.constant(X)).numpy().tolist() == np.transpose(X).tolist()


def test_matrix_transpose_adjoint_and_matmul_adjoint():
    x = tf.constant(X)
    assert tf.linalg.matrix_transpose(x, conjugate=True).numpy().tolist() == ADJ
    assert tf.linalg.matrix_transpose(x).numpy().tolist() == np.transpose(X).tolist()
    assert tf.linalg.adjoint(x).numpy().tolist() == ADJ
    assert tf.matmul(x, x, adjoint_a=True).numpy().tolist() == [[34, 4 - 40j], [4 + 40j, 58]]
    assert tf.matmul(x, x, adjoint_b=True).numpy().tolist() == [[10, 8 + 20j], [8 - 20j, 82]]
    np.testing.assert_allclose(tf.linalg.solve(tf.constant([[1 + 1j, 2 + 2j], [4 + 4j, 5 + 5j]]),
                                               tf.constant([[1 + 0j], [2]]), adjoint=True).numpy(), [[0.5 + 0.5j], [0]])
    with pytest.raises(ValueError, match="Only one of `transpose_a` and `adjoint_a` can be True"):
        tf.matmul(x, x, transpose_a=True, adjoint_a=True)


def test_sigmoid_cross_entropy_with_logits_bits():
    got = tf.nn.sigmoid_cross_entropy_with_logits(labels=[0., 0., 0., 1., 1., 1., 0.5],
                                                  logits=[1., -1., 0., 1., -1., 0., 0.]).numpy()
    want = [1.3132617473602295, 0.3132616877555847, 0.6931471824645996, 0.3132616877555847,
            1.3132617473602295, 0.6931471824645996, 0.6931471824645996]
    np.testing.assert_array_equal(got, np.float32(want))
    l, z = np.linspace(-5, 5, 37).astype(np.float32), np.linspace(0, 1, 37).astype(np.float32)
    want = [0.006715348921716213, 0.1400289088487625, 0.2585887908935547, 0.36260712146759033, 0.45236021280288696, 0.5282064080238342, 0.5906080007553101, 0.6401569843292236, 0.677604079246521, 0.7038897275924683, 0.7201727032661438, 0.7278504967689514, 0.7285635471343994, 0.7241683602333069, 0.7166707515716553, 0.708107054233551, 0.7003771066665649, 0.6950453519821167, 0.6931471824645996, 0.6950453519821167, 0.7003771066665649, 0.7081071138381958, 0.7166707515716553, 0.7241683602333069, 0.7285634279251099, 0.727850615978241, 0.7201727628707886, 0.7038897275924683, 0.6776039600372314, 0.6401569247245789, 0.5906080007553101, 0.528206467628479, 0.45236003398895264, 0.3626070022583008, 0.25858911871910095, 0.1400291919708252, 0.006715348456054926]
    np.testing.assert_array_equal(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=l).numpy(), np.float32(want))


def test_constant_shape_mismatch_message():
    with pytest.raises(TypeError, match=r"Eager execution of tf.constant with unsupported shape. Tensor \[0. 1. 2. 3. 4. 5. 6. 7.\] "
                                        r"\(converted from \[0, 1, 2, 3, 4, 5, 6, 7\]\) has 8 elements, but got `shape` "
                                        r"\(3, 4\) with 12 elements\)."):
        tf.constant([0, 1, 2, 3, 4, 5, 6, 7], dtype=tf.float32, shape=(3, 4))


def test_tf_initializers_are_tensorflows_not_keras():
    # tf.random_uniform_initializer & co are TF's init_ops_v2: unseeded ones draw new numbers on each
    # call from tf.random's global seed (they repeated one Keras seed: correlated weights).
    tf.random.set_seed(5)
    init = tf.random_normal_initializer(mean=1., stddev=2.)
    want = [[0.6393866539001465, -0.9005725383758545, 0.9207190275192261],
            [1.4530572891235352, 2.6213107109069824, 2.4932188987731934]]
    np.testing.assert_allclose([init([3]).numpy(), init([3]).numpy()], want, rtol=1e-6)
    np.testing.assert_allclose(tf.random_uniform_initializer(minval=-1., maxval=1.)([4]).numpy(),
                               [-0.5964090824127197, -0.30585765838623047, -0.888899564743042, -0.11748790740966797])
    # seeded: the stateless ops with seed [seed, 0]
    np.testing.assert_array_equal(tf.random_uniform_initializer(minval=0., maxval=1., seed=1)([3]).numpy(),
                                  np.float32([0.8784882, 0.45998025, 0.60029125]))
    np.testing.assert_allclose(tf.random_normal_initializer(mean=1., stddev=2., seed=1)([3]).numpy(),
                               [1.2533007, 0.01396686, 2.2623816], rtol=1e-6)
    assert tf.random_uniform_initializer(0, 10, seed=3)([4], tf.int32).numpy().tolist() == [8, 7, 2, 2]
    assert tf.ones_initializer()([2], "int64").dtype == tf.int64
    assert tf.zeros_initializer()([2]).numpy().tolist() == [0.0, 0.0]
    assert tf.constant_initializer([1, 2]).get_config() == {"value": [1, 2]}
    assert tf.random_normal_initializer(seed=1).get_config() == {"mean": 0.0, "stddev": 0.05, "seed": 1}
    init = tf.constant_initializer([0, 1, 2, 3, 4, 5, 6, 7])
    assert init(shape=[2, 4], dtype=tf.float32).numpy().tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    with pytest.raises(TypeError, match="has 8 elements, but got `shape` \\(2, 3\\) with 6 elements"):
        init(shape=[2, 3], dtype=tf.float32)
    with pytest.raises(ValueError, match=r"Argument `dtype` is expected to be floating point. Received: <dtype: 'int32'>."):
        tf.random_normal_initializer()([2], tf.int32)
    with pytest.raises(TypeError, match=r"Keyword argument should be one of \['partition_shape', 'partition_offset'\]. Received: foo"):
        tf.zeros_initializer()([2], foo=1)
    with pytest.raises(TypeError, match="Invalid type for initial value: EagerTensor. Expected Python scalar"):
        tf.constant_initializer(tf.constant(1.))
    with pytest.raises(ValueError, match=r"Argument `dtype` expected to be numeric or boolean. Received <dtype: 'string'>."):
        tf.zeros_initializer()([2], tf.string)
    # Keras layers take them (TF 2.21's Dense gives these numbers)
    d = tf.keras.layers.Dense(2, kernel_initializer=tf.random_normal_initializer(seed=1))
    np.testing.assert_allclose(d(tf.ones((1, 3))).numpy(), [[0.0663075, -0.14194284]], rtol=1e-5)


# TF 2.21: f([0.5, 1., 2., 4.]), its gradient, f(float64 [0.5, 3.]), tf.function(f)(x)
SPECIAL = {
    'bessel_j0': ([0.9384698867797852, 0.7651976943016052, 0.22389079630374908, -0.39714983105659485], [-0.24226847290992737, -0.4400506019592285, -0.5767248272895813, 0.06604336202144623], [0.938469807240813, -0.2600519549019335], [0.9384698867797852, 0.7651976943016052, 0.22389079630374908, -0.39714983105659485]),
    'bessel_j1': ([0.24226847290992737, 0.4400506019592285, 0.5767248272895813, -0.06604336202144623], [0.4539329409599304, 0.3251470923423767, -0.06447161734104156, -0.380638986825943], [0.24226845767487387, 0.33905895852593654], [0.24226847290992737, 0.4400506019592285, 0.5767248272895813, -0.06604336202144623]),
    'bessel_y0': ([-0.44451871514320374, 0.08825697004795074, 0.5103757381439209, -0.016940778121352196], [1.4714723825454712, 0.7812128067016602, 0.10703243315219879, -0.3979256749153137], [-0.4445187335067066, 0.3768500100127906], [-0.44451871514320374, 0.08825697004795074, 0.5103757381439209, -0.016940778121352196]),
    'bessel_y1': ([-1.4714723825454712, -0.7812128067016602, -0.10703243315219879, 0.3979256749153137], [2.4984259605407715, 0.8694697618484497, 0.5638919472694397, -0.11642219871282578], [-1.4714723926702433, 0.3246744247918001], [-1.4714723825454712, -0.7812128067016602, -0.10703243315219879, 0.3979256749153137]),
    'bessel_k0': ([0.924419105052948, 0.4210244417190552, 0.11389389634132385, 0.011159677058458328], [-1.6564409732818604, -0.6019073128700256, -0.13986587524414062, -0.012483499012887478], [0.9244190712276663, 0.03473950438627925], [0.924419105052948, 0.4210244417190552, 0.11389389634132385, 0.011159677058458328]),
    'bessel_k0e': ([1.5241093635559082, 1.144463062286377, 0.8415684103965759, 0.6092976927757263], [-1.2069001197814941, -0.49169063568115234, -0.19190841913223267, -0.07227826118469238], [1.5241093857739103, 0.6977615980438517], [1.5241093635559082, 1.144463062286377, 0.8415684103965759, 0.6092976927757263]),
    'bessel_k1': ([1.6564409732818604, 0.6019073128700256, 0.13986587524414062, 0.012483499012887478], [-4.237300872802734, -1.0229318141937256, -0.18382683396339417, -0.014280552044510841], [1.6564411200033013, 0.0401564311281942], [1.6564409732818604, 0.6019073128700256, 0.13986587524414062, 0.012483499012887478]),
    'bessel_k1e': ([2.7310094833374023, 1.6361536979675293, 1.0334768295288086, 0.6815759539604187], [-4.2551188468933105, -1.144463062286377, -0.32482999563217163, -0.09811574220657349], [2.7310097082117863, 0.8065634801287871], [2.7310094833374023, 1.6361536979675293, 1.0334768295288086, 0.6815759539604187]),
    'dawsn': ([0.42443639039993286, 0.5380795001983643, 0.30134040117263794, 0.1293479949235916], [0.5755636096000671, -0.07615900039672852, -0.20536160469055176, -0.03478395938873291], [0.4244363835020223, 0.17827103061055835], [0.42443639039993286, 0.5380795001983643, 0.30134040117263794, 0.1293479949235916]),
    'expint': ([0.4542198181152344, 1.8951178789138794, 4.9542341232299805, 19.630874633789062], [3.2974424362182617, 2.7182817459106445, 3.694528102874756, 13.649537086486816], [0.45421990486317354, 9.933832570625416], [0.4542198181152344, 1.8951178789138794, 4.9542341232299805, 19.630874633789062]),
    'fresnel_cos': ([0.4923442006111145, 0.7798933982849121, 0.4882534444332123, 0.49842607975006104], [0.9238795042037964, -4.371138828673793e-08, 1.0, 1.0], [0.4923442258714464, 0.6057207892976857], [0.4923442006111145, 0.7798933982849121, 0.4882534444332123, 0.49842607975006104]),
    'fresnel_sin': ([0.06473242491483688, 0.4382591247558594, 0.34341567754745483, 0.420515775680542], [0.3826834559440613, 1.0, 1.7484555314695172e-07, 6.993822125878069e-07], [0.06473243285999929, 0.49631299896737496], [0.06473242491483688, 0.4382591247558594, 0.34341567754745483, 0.420515775680542]),
    'spence': ([0.5822403430938721, 0.0, -0.8224668502807617, -1.939375400543213], [-1.3862943649291992, -1.0, -0.6931471824645996, -0.4620981216430664], [0.5822405264650135, -1.4367463668836808], [0.5822403430938721, 0.0, -0.8224668502807617, -1.939375400543213]),
    'bessel_i0': ([1.063483476638794, 1.2660659551620483, 2.279585361480713, 11.301920890808105], [0.2578943371772766, 0.5651590824127197, 1.59063720703125, 9.759467124938965], [1.0634833707413238, 4.880792585865024], [1.063483476638794, 1.2660659551620483, 2.279585361480713, 11.301920890808105]),
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_math_special(name):
    f = getattr(tf.math.special, name)
    x = tf.constant([0.5, 1., 2., 4.])
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    got = (y.numpy().tolist(), t.gradient(y, x).numpy().tolist(), f(tf.constant([0.5, 3.], tf.float64)).numpy().tolist(),
           tf.function(f)(x).numpy().tolist())
    for g, w in zip(got, SPECIAL[name]):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-7)
    assert f(tf.constant([0.5, 3.], tf.float64)).dtype == tf.float64
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32 is not in the list of allowed values: bfloat16, half, float, double"):
        f(tf.constant([1, 2]))


def test_math_special_namespace():
    assert tf.math.special.bessel_i0 is tf.math.bessel_i0
    import tapejax.math.special as special   # noqa: the module path TensorFlow has too
    assert special.bessel_k1e is tf.math.special.bessel_k1e


def _image_cases():
    """The inputs of tests/data/tf_image_colour_2.21.json (recorded from TF 2.21 by the same code)."""
    rng = np.random.RandomState(0)
    x = rng.uniform(0, 1, (2, 3, 4, 3)).astype(np.float32)
    x[0, 0, 0] = [0.5, 0.5, 0.5]; x[0, 0, 1] = [0.2, 0.2, 0.7]; x[0, 0, 2] = [0.7, 0.7, 0.1]; x[0, 0, 3] = [0.3, 0.6, 0.6]
    xi = (x * 255).astype(np.uint8)
    out = {}
    for d in [-0.9, -0.3, 0.2, 0.45, 1.0]:
        out[f"hue{d}"] = lambda d=d: tf.image.adjust_hue(x, d)
        out[f"huei{d}"] = lambda d=d: tf.image.adjust_hue(xi, d)
    for f in [0.0, 0.3, 1.0, 2.5]:
        out[f"sat{f}"] = lambda f=f: tf.image.adjust_saturation(x, f)
        out[f"sati{f}"] = lambda f=f: tf.image.adjust_saturation(xi, f)
    out["hsv"] = lambda: tf.image.rgb_to_hsv(x)
    out["rgb"] = lambda: tf.image.hsv_to_rgb(x)
    out["sobel"] = lambda: tf.image.sobel_edges(tf.constant(x))
    out["gamma"] = lambda: tf.image.adjust_gamma(x, 2.2, 1.5)
    out["gammai"] = lambda: tf.image.adjust_gamma(xi, 0.5)
    out["yuv"] = lambda: tf.image.rgb_to_yuv(x)
    out["srs"] = lambda: tf.image.stateless_random_saturation(x, 0.2, 3., (3, 4))
    out["srh"] = lambda: tf.image.stateless_random_hue(xi, 0.4, (5, 4))
    out["src"] = lambda: tf.image.stateless_random_contrast(x, 0.2, 3., (3, 4))
    out["srb"] = lambda: tf.image.stateless_random_brightness(xi, 0.3, (3, 4))
    return out


def test_image_colour_ops_match_tensorflow():
    import json, pathlib
    want = json.loads((pathlib.Path(__file__).parent / "data" / "tf_image_colour_2.21.json").read_text())
    cases = _image_cases()
    assert sorted(cases) == sorted(want)
    for name, case in cases.items():
        got = case().numpy()
        assert str(got.dtype) == want[name]["dtype"], name
        np.testing.assert_allclose(got, np.asarray(want[name]["value"]), rtol=2e-6, atol=5e-7, err_msg=name)


def test_image_docstrings_and_errors():
    x = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
    np.testing.assert_array_equal(tf.image.adjust_hue(x, 0.2).numpy(), np.float32(
        [[[2.3999996, 1., 3.], [5.3999996, 4., 6.]], [[8.4, 7., 9.], [11.4, 10., 12.]]]))
    img = tf.constant([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]], [[13, 14, 15], [16, 17, 18]]])
    assert tf.image.adjust_hue(img, 0.2).numpy().tolist() == [[[2, 1, 3], [5, 4, 6]], [[8, 7, 9], [11, 10, 12]], [[14, 13, 15], [17, 16, 18]]]
    np.testing.assert_allclose(tf.image.stateless_random_saturation(x, 0.5, 1.0, (1, 2)).numpy(), [
        [[1.1559395, 2.0779698, 3.], [4.1559396, 5.07797, 6.]], [[7.1559396, 8.07797, 9.], [10.155939, 11.07797, 12.]]], rtol=1e-6)
    np.testing.assert_allclose(tf.image.stateless_random_contrast(x, 0.2, 0.5, (1, 2)).numpy(), [
        [[3.4605184, 4.4605184, 5.4605184], [4.820173, 5.820173, 6.820173]],
        [[6.179827, 7.179827, 8.179827], [7.5394816, 8.539482, 9.539482]]], rtol=1e-6)
    np.testing.assert_allclose(tf.image.rgb_to_yiq(tf.constant([[[1.0, 2.0, 3.0]]])).numpy(), [[[1.815, -0.91724455, 0.09962624]]], rtol=1e-6)
    assert tf.image.transpose(img).numpy().tolist() == [[[1, 2, 3], [7, 8, 9], [13, 14, 15]], [[4, 5, 6], [10, 11, 12], [16, 17, 18]]]
    with pytest.raises(ValueError, match=r"delta must be in the interval \[-1, 1\]"):
        tf.image.adjust_hue(x, 1.5)
    with pytest.raises(ValueError, match="Gamma should be a non-negative real number."):
        tf.image.adjust_gamma(x, -1.)
    with pytest.raises(ValueError, match="max_delta must be <= 0.5."):
        tf.image.random_hue(x, 0.6)
    with pytest.raises(ValueError, match="upper must be > lower."):
        tf.image.stateless_random_contrast(x, 0.5, 0.5, (1, 2))
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions."):
        tf.image.transpose([[1.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'T' of int32 is not in the list of allowed values"):
        tf.image.rgb_to_hsv(img)
    with pytest.raises(LookupError):   # TF registers no gradient for AdjustHue
        v = tf.constant(x)
        with tf.GradientTape() as t:
            t.watch(v)
            y = tf.image.adjust_hue(v, 0.1)
        t.gradient(y, v)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input must have 3 channels but instead has 2 channels."):
        tf.image.adjust_hue(tf.constant([[[1., 2.]]]), 0.1)


def test_gather_negative_batch_dims_and_axis():
    # tf.argsort / tf.math.top_k docstrings: tf.gather(x, indices, batch_dims=-1)
    mat = [[30, 20, 10], [20, 10, 30], [10, 30, 20]]
    assert tf.gather(mat, tf.argsort(mat), batch_dims=-1).numpy().tolist() == [[10, 20, 30]] * 3
    x = tf.constant([[1., 5., 3., 2., 0., 4.], [6, 5, 4, 3, 2, 1]])
    assert tf.gather(x, tf.math.top_k(x, 2).indices, batch_dims=-1).numpy().tolist() == [[5, 4], [6, 5]]
    assert tf.gather([[1, 2], [3, 4]], [1], axis=-1).numpy().tolist() == [[2], [4]]


def test_constant_of_a_tensor():
    # tf.constant docstring: the tensor itself, so a tape sees through it
    v = tf.Variable([0.0])
    with tf.GradientTape() as g:
        loss = tf.constant(v + v)
    assert g.gradient(loss, v).numpy().tolist() == [2.0]
    x = tf.constant([1, 2])
    assert tf.constant(x) is x and tf.constant(x, tf.int32) is x
    with pytest.raises(TypeError, match=r"Expected tensor \[1 2\] with dtype tf.float32, but got dtype tf.int32."):
        tf.constant(x, tf.float32)
    with pytest.raises(TypeError, match="Expected any non-tensor type, but got a tensor instead."):
        tf.function(lambda t: tf.constant(t * 2))(tf.constant([1.]))


def test_dtype_enum_values():
    # tf.einsum docstring: tf.ones(2, 3) is int32 ones (3 is DT_INT32)
    assert tf.ones(2, 3).numpy().tolist() == [1, 1] and tf.ones(2, 3).dtype == tf.int32
    assert [tf.as_dtype(i) for i in (1, 2, 9, 10, 19)] == [tf.float32, tf.float64, tf.int64, tf.bool, tf.float16]
    with pytest.raises(TypeError):
        tf.as_dtype(True)


def test_depthwise_conv2d_explicit_padding():
    x = np.array([[1., 2.], [3., 4.], [5., 6.]], dtype=np.float32).reshape((1, 3, 2, 1))
    kernel = np.array([[1., 2.], [3., 4]], dtype=np.float32).reshape((2, 1, 1, 2))
    got = tf.nn.depthwise_conv2d(x, kernel, strides=[1, 1, 1, 1], padding=[[0, 0], [1, 0], [1, 0], [0, 0]]).numpy()
    assert got.tolist() == [[[[0, 0], [3, 4], [6, 8]], [[0, 0], [10, 14], [14, 20]], [[0, 0], [18, 26], [22, 32]]]]
    with pytest.raises(TypeError, match="Expected string for argument 'padding'"):
        tf.nn.convolution(x, kernel, padding=[[0, 0], [1, 0], [1, 0], [0, 0]])


def test_linalg_triangular_band_tensor_diag():
    a = tf.constant([[3, 0, 0, 0], [2, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], dtype=tf.float32)
    b = tf.constant([[4], [2], [4], [2]], dtype=tf.float32)
    close = lambda got, want: np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)   # noqa: E731
    close(tf.linalg.triangular_solve(a, b, lower=True), [[1.3333333730697632], [-0.6666667461395264], [2.6666665077209473], [-1.333333134651184]])
    close(tf.linalg.triangular_solve(a, b, lower=False), [[1.3333333730697632], [2.0], [4.0], [2.0]])
    close(tf.linalg.triangular_solve(a, b, lower=True, adjoint=True), [[0.0], [0.0], [2.0], [2.0]])
    close(tf.linalg.triangular_solve(tf.stack([a, 2 * a]), b, lower=True), [
        [[1.3333333730697632], [-0.6666667461395264], [2.6666665077209473], [-1.333333134651184]],
        [[0.6666666865348816], [-0.3333333730697632], [1.3333332538604736], [-0.666666567325592]]])
    with tf.GradientTape() as t:
        t.watch(a)
        y = tf.reduce_sum(tf.linalg.triangular_solve(a, b) ** 2)
    np.testing.assert_allclose(t.gradient(y, a).numpy(), [
        [2.3703699111938477, 0.0, 0.0, 0.0], [-1.777777075767517, 0.8888885974884033, 0.0, 0.0],
        [-10.666666030883789, 5.333333492279053, -21.333330154418945, 0.0],
        [3.5555551052093506, -1.7777776718139648, 7.111109733581543, -3.5555543899536133]], rtol=2e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\] matrices in the last dimensions must be square \(3 =/= 2\)"):
        tf.linalg.triangular_solve(tf.ones([2, 3]), tf.ones([2, 1]))
    m = tf.reshape(tf.range(16), [4, 4])
    assert tf.linalg.band_part(m, 1, -1).numpy().tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [0, 9, 10, 11], [0, 0, 14, 15]]
    assert tf.linalg.band_part(m, 0, 2).numpy().tolist() == [[0, 1, 2, 0], [0, 5, 6, 7], [0, 0, 10, 11], [0, 0, 0, 15]]
    assert tf.linalg.tensor_diag([1, 2]).numpy().tolist() == [[1, 0], [0, 2]]
    assert tf.linalg.tensor_diag_part(tf.reshape(tf.range(36.), [2, 3, 2, 3])).numpy().tolist() == [[0.0, 7.0, 14.0], [21.0, 28.0, 35.0]]
    x = [[[[1111, 1112], [1121, 1122]], [[1211, 1212], [1221, 1222]]], [[[2111, 2112], [2121, 2122]], [[2211, 2212], [2221, 2222]]]]
    assert tf.linalg.tensor_diag_part(x).numpy().tolist() == [[1111, 1212], [2121, 2222]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Invalid shape \[2,3\]: dimensions 0 and 1 do not match."):
        tf.linalg.tensor_diag_part(tf.ones([2, 3]))


def test_image_random_crop_offsets_are_tensorflows():
    x = tf.reshape(tf.range(60), [3, 4, 5])
    want = {(1, 2): [[[12, 13, 14], [17, 18, 19]], [[32, 33, 34], [37, 38, 39]]],
            (3, 4): [[[2, 3, 4], [7, 8, 9]], [[22, 23, 24], [27, 28, 29]]],
            (5, 6): [[[1, 2, 3], [6, 7, 8]], [[21, 22, 23], [26, 27, 28]]]}
    for seed, w in want.items():
        assert tf.image.stateless_random_crop(x, [2, 2, 3], seed).numpy().tolist() == w
    tf.random.set_seed(3)
    w = [[[22, 23, 24], [27, 28, 29]], [[42, 43, 44], [47, 48, 49]]]
    assert tf.image.random_crop(x, [2, 2, 3]).numpy().tolist() == w
    assert tf.image.random_crop(x, [2, 2, 3], seed=4).numpy().tolist() == w
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size, got '\n3, 4, 5\n4, 2, 3"):
        tf.image.random_crop(x, [4, 2, 3])


def test_stateless_dropout_and_seed_splitting_are_tensorflows():
    x = tf.ones([3, 5])
    assert tf.nn.experimental.stateless_dropout(x, rate=0.5, seed=[1, 0]).numpy().tolist() == [
        [2, 0, 2, 0, 0], [0, 0, 2, 0, 2], [0, 0, 0, 0, 2]]
    assert tf.nn.experimental.stateless_dropout(x, rate=0.8, seed=[2, 0]).numpy().tolist() == [
        [5, 0, 0, 0, 0], [0, 0, 0, 5, 0], [0, 0, 0, 0, 0]]
    assert tf.nn.experimental.stateless_dropout(tf.ones([3, 10]), rate=2 / 3, noise_shape=[1, 10], seed=[1, 0]).numpy().tolist() == [
        [3, 0, 0, 0, 0, 0, 0, 3, 0, 3]] * 3
    assert tf.nn.experimental.stateless_dropout(x, rate=0.0, seed=[1, 0]) is not None
    sampler = lambda shape, dtype: tf.constant([0.1, 0.6, 0.9, 0.3], dtype)   # noqa: E731
    assert tf.nn.experimental.general_dropout(tf.ones([4]), 0.5, sampler).numpy().tolist() == [0, 2, 2, 0]
    tf.random.set_seed(0)
    assert tf.nn.dropout(x, rate=0.8, seed=1).numpy().tolist() == [[0, 0, 0, 5, 5], [0, 5, 0, 5, 0], [5, 0, 5, 0, 5]]
    assert tf.random.split([1, 2], num=3).numpy().tolist() == [[1105988140, 1738052849], [-335576002, 370444179],
                                                                [10670227, -246211131]]
    assert tf.random.split(tf.constant([1, 2], tf.int64)).numpy().tolist() == [
        [7464880146280614444, 1591045637757961278], [-1057468755545501549, 2524363516007002203]]
    seed = tf.random.experimental.stateless_fold_in([1, 2], 3)
    assert seed.numpy().tolist() == [1105988140, 3] and tf.random.fold_in([1, 2], 3).dtype == tf.int32
    np.testing.assert_allclose(tf.random.stateless_normal(shape=[3], seed=seed).numpy(), [0.03197195, 0.8979765, 0.13253039], rtol=1e-6)


def test_embedding_lookup_sparse():
    params = tf.constant([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=tf.float32)
    sp_ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [2, 0]], values=[0, 1, 3, 2], dense_shape=(3, 2))
    w = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [2, 0]], values=[0.1, 1.0, 0.5, 2.0], dense_shape=(3, 2))
    sp2 = tf.SparseTensor(indices=[[0, 0], [0, 1], [2, 0], [2, 1]], values=[0, 1, 3, 2], dense_shape=(4, 2))
    want = {  # TF 2.21: no weights, weights, a row without ids (rows up to the last with ids)
        "sum": ([[4.0, 6.0], [7.0, 8.0], [5.0, 6.0]], [[3.0999999046325684, 4.199999809265137], [3.5, 4.0], [10.0, 12.0]],
                [[4.0, 6.0], [0.0, 0.0], [12.0, 14.0]]),
        "mean": ([[2.0, 3.0], [7.0, 8.0], [5.0, 6.0]], [[2.8181817531585693, 3.8181815147399902], [7.0, 8.0], [5.0, 6.0]],
                 [[2.0, 3.0], [0.0, 0.0], [6.0, 7.0]]),
        "sqrtn": ([[2.8284270763397217, 4.242640495300293], [7.0, 8.0], [5.0, 6.0]],
                  [[3.0846149921417236, 4.1791558265686035], [7.0, 8.0], [5.0, 6.0]],
                  [[2.8284270763397217, 4.242640495300293], [0.0, 0.0], [8.485280990600586, 9.899495124816895]])}
    for c, (a, b, d) in want.items():
        np.testing.assert_allclose(tf.nn.embedding_lookup_sparse(params, sp_ids, None, combiner=c).numpy(), a, rtol=1e-6)
        np.testing.assert_allclose(tf.nn.embedding_lookup_sparse(params, sp_ids, w, combiner=c).numpy(), b, rtol=1e-6)
        np.testing.assert_allclose(tf.nn.embedding_lookup_sparse(params, sp2, None, combiner=c).numpy(), d, rtol=1e-6)
    with pytest.raises(ValueError, match="combiner must be one of 'mean', 'sqrtn' or 'sum', got max"):
        tf.nn.embedding_lookup_sparse(params, sp_ids, None, combiner="max")


def test_top_k_index_type():
    r = tf.math.top_k([1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0], k=3, index_type=tf.int16)
    assert r.indices.dtype == tf.int16 and r.indices.numpy().tolist() == [0, 1, 3] and r.values.numpy().tolist() == [1, 1, 1]
    assert tf.math.top_k([[1., 1, 0, 1]], k=2, index_type=tf.int64).indices.dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'index_type' of uint8 is not in the list of allowed values: int16, int32, int64"):
        tf.math.top_k([1., 1, 0, 1], k=2, index_type=tf.uint8)


def test_create_rng_state():
    state = lambda *a: tf.random.create_rng_state(*a).numpy().tolist()   # noqa: E731
    assert tf.random.create_rng_state(1234, "philox").dtype == tf.int64
    assert state(1234, "philox") == [1234, 0, 0] and state([12, 34], "threefry") == [12, 34]
    assert state(2 ** 70 + 5, "philox") == [5, 64, 0] and state([7], "philox") == [0, 0, 7]
    assert state([1, 2, 3, 4], "auto_select") == [1, 2, 3] and state(-1, "philox") == [-1, -1, -1]
    with pytest.raises(ValueError, match="Argument `alg` got unsupported value foo. Supported values are philox"):
        tf.random.create_rng_state(1, "foo")


def test_max_pool2d_explicit_padding():
    x = tf.constant([[1., 2., 3., 4.], [5., 6., 7., 8.], [9., 10., 11., 12.]])[tf.newaxis, :, :, tf.newaxis]
    pads = [[0, 0], [1, 1], [1, 1], [0, 0]]
    assert tf.nn.max_pool2d(x, ksize=(2, 2), strides=(2, 2), padding=pads)[0, :, :, 0].numpy().tolist() == [[1, 3, 4], [9, 11, 12]]
    assert tf.nn.max_pool2d(-x, (2, 2), (1, 1), [[0, 0], [1, 0], [0, 1], [0, 0]])[0, :, :, 0].numpy().tolist() == [
        [-1, -2, -3, -4], [-1, -2, -3, -4], [-5, -6, -7, -8]]
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.nn.max_pool2d(x, 2, 2, pads))
    assert t.gradient(y, x)[0, :, :, 0].numpy().tolist() == [[1, 0, 1, 1], [0, 0, 0, 0], [1, 0, 1, 1]]


def test_pool2d_channels_first():
    # NCHW was pooled as if NHWC (a silent wrong shape (1, 0, 2, 4)); TF 2.21's values:
    x = tf.reshape(tf.range(32.), [1, 2, 4, 4])
    a = tf.nn.max_pool2d(x, 2, 2, "VALID", data_format="NCHW")
    assert a.shape == (1, 2, 2, 2) and a.numpy().ravel().tolist() == [5.0, 7.0, 13.0, 15.0, 21.0, 23.0, 29.0, 31.0]
    b = tf.nn.avg_pool2d(x, [1, 1, 2, 2], [1, 1, 2, 1], "SAME", data_format="NCHW")
    assert b.shape == (1, 2, 2, 4) and b.numpy().ravel().tolist() == [
        2.5, 3.5, 4.5, 5.0, 10.5, 11.5, 12.5, 13.0, 18.5, 19.5, 20.5, 21.0, 26.5, 27.5, 28.5, 29.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Default MaxPoolingOp only supports NHWC on device type CPU"):
        tf.nn.max_pool2d(x, 2, 2, [[0, 0], [0, 0], [1, 1], [0, 0]], data_format="NCHW")
    with pytest.raises(TypeError, match="Expected string for argument 'padding'"):
        tf.nn.avg_pool2d(x, 2, 2, [[0, 0], [0, 0], [1, 1], [0, 0]])
