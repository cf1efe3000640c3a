"""Keras 3 layers and metrics added for the TensorFlow tutorials: Normalization, RNN with
cells, metric aliases and confusion counts. Expected values recorded from TF 2.21 (Keras 3)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

X = np.array([[1., 2., 3.], [4., 6., 8.], [0., -1., 5.], [2., 2., 2.]], dtype=np.float32)


# ---------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------

def _adapted(data=X, **kw):
    layer = tf.keras.layers.Normalization(**kw)
    layer.adapt(data)
    return layer


def test_normalization_adapt_numpy_matches_tf():
    n = _adapted(axis=-1, name="normalization")
    assert repr(n.mean) == ("<tf.Tensor: shape=(1, 3), dtype=float32, numpy=array([[1.75, 2.25, 4.5 ]], "
                            "dtype=float32)>")
    np.testing.assert_allclose(n.variance.numpy(), [[2.1875, 6.1875, 5.25]], rtol=1e-6)
    assert [(w.name, w.path, w.trainable, w.dtype.name) for w in n.weights] == [
        ("mean", "normalization/mean", False, "float32"), ("variance", "normalization/variance", False, "float32"),
        ("count", "normalization/count", False, "int64")]
    assert n.trainable_weights == [] and int(n.count) == 0
    np.testing.assert_allclose(n(X).numpy(), [
        [-0.5070925354957581, -0.10050378739833832, -0.6546536684036255],
        [1.5212775468826294, 1.5075567960739136, 1.5275251865386963],
        [-1.183215856552124, -1.3065491914749146, 0.2182178795337677],
        [0.16903084516525269, -0.10050378739833832, -1.0910893678665161]], rtol=1e-6)
    # float64 inputs come out in the compute dtype, as in Keras
    assert n(X.astype(np.float64)).dtype == tf.float32
    assert n.get_config()["axis"] == (-1,) and n.get_config()["mean"] is None


def test_normalization_given_stats_invert_and_axes():
    n = _adapted()
    inv = tf.keras.layers.Normalization(mean=n.mean.numpy()[0], variance=n.variance.numpy()[0], invert=True)
    np.testing.assert_allclose(inv(n(X)).numpy(), X, atol=1e-6)
    assert inv.weights == []
    m = tf.keras.layers.Normalization(mean=3., variance=2.)
    np.testing.assert_allclose(m(np.array([[1., 5.]])).numpy(), [[-1.4142135381698608, 1.4142135381698608]])
    assert m.mean.shape == (1, 2) and m.weights == []
    t = _adapted(axis=None)
    np.testing.assert_allclose([t.mean.numpy().tolist(), t.variance.numpy().tolist()],
                               [[[2.8333332538604736]], [[5.972221851348877]]], rtol=1e-6)
    np.testing.assert_allclose(t(X[:1]).numpy(), [[-0.75019371509552, -0.3409971296787262, 0.06819946318864822]],
                               rtol=1e-6)
    x3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5
    a = _adapted(x3, axis=(1,))
    np.testing.assert_allclose(a.mean.numpy().ravel(), [25.992990493774414, 43.209617614746094, 64.61289978027344],
                               rtol=1e-6)
    np.testing.assert_allclose(a.variance.numpy().ravel(), [584.364501953125, 938.9288330078125,
                                                            1281.1739501953125], rtol=1e-5)
    np.testing.assert_allclose(a(x3).numpy()[1, 2], [0.6936964988708496, 0.8834341764450073, 1.077744722366333,
                                                     1.276523232460022], rtol=1e-5)
    with pytest.raises(ValueError, match="both `mean` and `variance`"):
        tf.keras.layers.Normalization(mean=1.)


def test_normalization_adapt_dataset_tensor_and_unbatched():
    for data in (tf.data.Dataset.from_tensor_slices(X).batch(3), tf.constant(X), [X[:3], X[3:]]):
        n = _adapted(data)
        np.testing.assert_allclose(n.mean.numpy(), [[1.75, 2.25, 4.5]], rtol=1e-6)
        np.testing.assert_allclose(n.variance.numpy(), [[2.1875, 6.1875, 5.25]], rtol=1e-6)
    n = _adapted(tf.data.Dataset.from_tensor_slices(np.array([1., 2., 3., 4.])), axis=None)
    assert (float(n.mean), float(n.variance)) == (2.5, 1.25) and n.mean.shape == ()
    n = _adapted(np.array([1., 2., 3., 4.]), axis=None)
    np.testing.assert_allclose(n(np.array([1., 2.])).numpy(), [-1.3416407, -0.4472136], rtol=1e-6)


def test_normalization_gradient_matches_jax():
    n = _adapted()
    xt = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.reduce_sum(n(xt) ** 2)
    g = tape.gradient(y, xt).numpy()
    np.testing.assert_allclose(g[0], [-0.6857142448425293, -0.08080808818340302, -0.5714285373687744], rtol=1e-5)
    mean, var = jnp.array([1.75, 2.25, 4.5]), jnp.array([2.1875, 6.1875, 5.25])
    expect = jax.grad(lambda x: jnp.sum(((x - mean) / jnp.sqrt(var)) ** 2))(jnp.asarray(X))
    np.testing.assert_allclose(g, expect, rtol=1e-5, atol=1e-6)


def test_normalization_in_function_and_fit():
    n = _adapted()
    f = tf.function(lambda x: n(x))
    np.testing.assert_allclose(f(tf.constant(X)).numpy(), n(X).numpy(), rtol=1e-6)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([n, tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mean_absolute_error")
    hist = model.fit(X.astype(np.float64), np.arange(4.0), epochs=2, verbose=0)
    assert len(hist.history["loss"]) == 2
    assert len(model.trainable_weights) == 2  # the statistics are not trained
    np.testing.assert_allclose(n.mean.numpy(), [[1.75, 2.25, 4.5]])


# ---------------------------------------------------------------------------
# RNN and cells
# ---------------------------------------------------------------------------

SEQ = np.arange(2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3) / 10.0 - 0.7

# TF 2.21: tf.keras.utils.set_random_seed(0); tf.keras.layers.RNN(Cell(4))(SEQ)
RNN_OUT = {
    "SimpleRNNCell": [[-0.695227, -0.695183, -0.383604, -0.824435], [-0.96925, -0.960302, -0.85884, -0.864975]],
    "LSTMCell": [[0.069919, -0.049593, 0.022624, 0.037233], [0.399432, -0.035835, 0.419088, 0.494844]],
    "GRUCell": [[-0.03837, 0.012023, -0.086004, 0.338809], [-0.237549, 0.089809, 0.0587, 0.95008]],
}
# ... and with initial_state = 0.3 everywhere
RNN_INIT = {
    "SimpleRNNCell": [[-0.684791, -0.594962, -0.553838, -0.758049], [-0.969181, -0.960004, -0.862471, -0.866426]],
    "LSTMCell": [[0.094364, 0.019837, 0.063085, 0.109998], [0.433462, 0.08617, 0.48187, 0.663015]],
    "GRUCell": [[-0.044364, 0.041554, -0.071682, 0.357851], [-0.222765, 0.136255, 0.05429, 0.95008]],
}
RNN_INIT["GRUCell"][1][3] = 0.951441


def _seeded_rnn(name, **kw):
    tf.keras.utils.set_random_seed(0)
    return tf.keras.layers.RNN(getattr(tf.keras.layers, name)(4), name="rnn", **kw)


@pytest.mark.parametrize("name", ["SimpleRNNCell", "LSTMCell", "GRUCell"])
def test_rnn_cell_matches_tf_and_layer(name):
    layer = _seeded_rnn(name)
    y = layer(SEQ)
    np.testing.assert_allclose(y.numpy(), RNN_OUT[name], atol=2e-6)
    snake = {"SimpleRNNCell": "simple_rnn_cell", "LSTMCell": "lstm_cell", "GRUCell": "gru_cell"}[name]
    assert [w.path.split("/")[0] + "/" + w.name for w in layer.weights] == \
        ["rnn/kernel", "rnn/recurrent_kernel", "rnn/bias"]
    assert all(w.path.split("/")[1].startswith(snake) for w in layer.weights)
    # the layer with the same weights computes the same numbers (and TF seeds both alike)
    tf.keras.utils.set_random_seed(0)
    ref = getattr(tf.keras.layers, name.replace("Cell", ""))(4)
    np.testing.assert_allclose(ref(SEQ).numpy(), y.numpy(), atol=1e-6)
    ref.set_weights([w * 0.5 for w in layer.get_weights()])
    layer.set_weights([w * 0.5 for w in layer.get_weights()])
    np.testing.assert_allclose(ref(SEQ).numpy(), layer(SEQ).numpy(), atol=1e-6)
    layer.set_weights([w * 2 for w in layer.get_weights()])
    n_states = 2 if name == "LSTMCell" else 1
    init = [tf.ones((2, 4)) * 0.3] * n_states
    np.testing.assert_allclose(layer(SEQ, initial_state=init).numpy(), RNN_INIT[name], atol=2e-6)


def test_lstm_cell_states_backwards_call_and_gradient():
    layer = _seeded_rnn("LSTMCell")
    layer(SEQ)
    l2 = tf.keras.layers.RNN(layer.cell, return_sequences=True, return_state=True, go_backwards=True)
    out, h, c = l2(SEQ)
    assert out.shape == (2, 5, 4)
    np.testing.assert_allclose(out[:, -1].numpy(), [[-0.062521, -0.023908, -0.031575, -0.015735],
                                                    [0.30926, -0.023761, 0.336405, 0.408433]], atol=2e-6)
    np.testing.assert_allclose(c.numpy(), [[-0.132777, -0.047941, -0.070036, -0.037345],
                                           [0.627153, -0.046419, 0.578666, 0.659506]], atol=2e-6)
    o, s = layer.cell(tf.constant(SEQ[:, 0]), [tf.ones((2, 4)) * 0.5] * 2)
    assert isinstance(s, list) and len(s) == 2
    np.testing.assert_allclose(o.numpy(), [[0.070475, 0.222223, 0.108433, 0.132733],
                                           [0.297078, 0.235262, 0.304937, 0.389417]], atol=2e-6)
    np.testing.assert_allclose(s[1].numpy(), [[0.130307, 0.469127, 0.227917, 0.301513],
                                              [0.528722, 0.507997, 0.506195, 0.650837]], atol=2e-6)
    xt = tf.constant(SEQ)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(layer(xt) ** 2)
    gx, gk = tape.gradient(loss, [xt, layer.cell.kernel])
    np.testing.assert_allclose(gx.numpy()[1, 4], [0.012241, -0.052058, 0.172486], atol=2e-6)
    np.testing.assert_allclose(gk.numpy()[0, :4], [0.285002, 0.00146, 0.263382, 0.415272], atol=2e-6)


class MinimalRNNCell(tf.keras.layers.Layer):
    """TF's RNN guide's cell."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="uniform",
                                                name="recurrent_kernel")
        self.built = True

    def call(self, inputs, states):
        output = tf.matmul(inputs, self.kernel) + tf.matmul(states[0], self.recurrent_kernel)
        return output, [output]


def test_user_cell_matches_tf_and_jax_grad():
    tf.keras.utils.set_random_seed(0)
    layer = tf.keras.layers.RNN(MinimalRNNCell(4), return_sequences=True)
    y = layer(SEQ)
    np.testing.assert_allclose(y[:, -1].numpy(), [[-0.002705, -0.033156, 0.03721, 0.014682],
                                                  [-0.012481, -0.119122, 0.134922, 0.037171]], atol=2e-6)
    np.testing.assert_allclose(layer.weights[0].numpy()[0], [0.001568, -0.019094, 0.03389, -0.03934], atol=2e-6)
    k, rk = (w.numpy() for w in layer.weights)

    def pure(k, rk):
        h = jnp.zeros((2, 4))
        for t in range(5):
            h = SEQ[:, t] @ k + h @ rk
        return jnp.sum(h ** 2)

    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(SEQ)[:, -1] ** 2)
    got = tape.gradient(loss, layer.trainable_weights)
    for g, e in zip(got, jax.grad(pure, argnums=(0, 1))(k, rk)):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-4, atol=1e-7)


def test_stacked_cells_match_tf():
    tf.keras.utils.set_random_seed(0)
    layer = tf.keras.layers.RNN([MinimalRNNCell(3), MinimalRNNCell(4)], return_state=True)
    out, s1, s2 = layer(SEQ)
    np.testing.assert_allclose(out.numpy(), [[-5.7e-05, 0.000629, -0.000339, -0.002127],
                                             [-0.000491, 0.002483, -0.001577, -0.007035]], atol=2e-6)
    tf.keras.utils.set_random_seed(0)
    st = tf.keras.layers.StackedRNNCells([tf.keras.layers.LSTMCell(3), tf.keras.layers.GRUCell(4)])
    layer = tf.keras.layers.RNN(st, return_state=True, return_sequences=True)
    out, (h1, c1), (h2,) = layer(SEQ)
    assert st.state_size == [[3, 3], 4] and st.output_size == 4
    np.testing.assert_allclose(out[:, -1].numpy(), [[0.049466, -0.024804, -0.034032, -0.007292],
                                                    [0.07128, -0.032574, -0.014311, 0.001816]], atol=2e-6)
    np.testing.assert_allclose(h1.numpy(), [[0.050208, -0.047914, -0.031152], [0.169091, 0.077721, -0.103327]],
                               atol=2e-6)
    np.testing.assert_allclose(h2.numpy(), out[:, -1].numpy())
    # one op per cell equals the step-by-step stacked cell
    steps = tf.keras.layers.RNN(st, return_sequences=True)._steps(tf.constant(SEQ), None)
    np.testing.assert_allclose(steps.numpy(), out.numpy(), atol=1e-6)


def test_simple_rnn_seeds_as_tf():
    # Keras 3's SimpleRNNCell takes its dropout seed before its initializers, LSTM/GRU after.
    tf.keras.utils.set_random_seed(0)
    layer = tf.keras.layers.SimpleRNN(4)
    layer(np.ones((1, 2, 3), np.float32))
    np.testing.assert_allclose(layer.kernel.numpy().ravel()[:3], [-0.32815, -0.56193, -0.40734], atol=1e-5)
    for rnn in (tf.keras.layers.SimpleRNN, tf.keras.layers.LSTM, tf.keras.layers.GRU):
        tf.keras.utils.set_random_seed(0)
        m = tf.keras.Sequential([rnn(2), tf.keras.layers.Dense(2)])
        m(np.ones((1, 2, 3), np.float32))
        np.testing.assert_allclose(m.layers[1].kernel.numpy().ravel(), [-0.37754, 0.58032, -0.16898, -0.21663],
                                   atol=1e-5)


def test_rnn_in_function_and_fit():
    layer = _seeded_rnn("GRUCell")
    f = tf.function(lambda x: layer(x))
    np.testing.assert_allclose(f(tf.constant(SEQ)).numpy(), RNN_OUT["GRUCell"], atol=2e-6)
    cell_rnn = tf.keras.layers.RNN(MinimalRNNCell(2))
    g = tf.function(lambda x: cell_rnn(x))
    np.testing.assert_allclose(g(tf.constant(SEQ)).numpy(), cell_rnn(SEQ).numpy(), rtol=1e-5)
    model = tf.keras.Sequential([tf.keras.Input((5, 3)), tf.keras.layers.RNN(tf.keras.layers.LSTMCell(4)),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    hist = model.fit(SEQ, np.ones((2, 1)), epochs=2, verbose=0)
    assert len(hist.history["loss"]) == 2 and model.output_shape == (None, 1)


# ---------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------

YT = np.array([[0., 1., 1.], [1., 0., 2.]], np.float32)
YP = np.array([[0.2, 0.7, 0.4], [0.9, 0.3, 1.5]], np.float32)
METRIC_FNS = {  # TF 2.21: tf.keras.metrics.<name>(YT, YP)
    "mse": [0.163333, 0.116667], "mae": [0.366667, 0.3], "mape": [66666692.0, 100000008.0],
    "msle": [0.06229, 0.034902], "KLD": [1.272964, 0.105359], "binary_crossentropy": [0.498703, -5.160116],
    "categorical_crossentropy": [1.797694, 2.274186], "hinge": [0.633333, 0.366667],
    "squared_hinge": [0.483333, 0.336667], "huber": [0.081667, 0.058333], "poisson": [0.857655, 0.66481],
    "logcosh": [0.078115, 0.056482],
}


def test_metric_function_aliases_match_tf():
    for name, expect in METRIC_FNS.items():
        np.testing.assert_allclose(getattr(tf.keras.metrics, name)(YT, YP).numpy(), expect, rtol=1e-5, atol=1e-6)
    for a, b in (("mse", "MSE"), ("mae", "MAE"), ("mape", "MAPE"), ("msle", "MSLE"), ("kld", "KLD")):
        assert getattr(tf.keras.metrics, a) is getattr(tf.keras.metrics, b)
    assert tf.keras.metrics.mse is tf.keras.losses.mse
    np.testing.assert_allclose(tf.keras.metrics.sparse_categorical_crossentropy(
        np.array([1, 2]), np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], np.float32)).numpy(), [0.693147, 0.223144],
        rtol=1e-5)


def test_confusion_counts_match_tf():
    expect = {"TruePositives": [4.0, 2.0], "FalsePositives": [2.0, 1.0], "TrueNegatives": [1.0, 2.0],
              "FalseNegatives": [3.0, 5.0]}
    for cls, values in expect.items():
        m = getattr(tf.keras.metrics, cls)(thresholds=[0.3, 0.5])
        m.update_state([0, 1, 1, 0, 1], [0.1, 0.4, 0.8, 0.6, 0.2], sample_weight=[1, 2, 1, 1, 3])
        m.update_state([1, 0], [0.9, 0.35])
        assert m.result().numpy().tolist() == values
        assert [v.path for v in m.variables] == [m.name + "/accumulator"]
        m.reset_state()
        assert m.result().numpy().tolist() == [0.0, 0.0]
    m = tf.keras.metrics.TruePositives()
    assert m.result().shape == () and m.get_config()["thresholds"] == 0.5


def test_metrics_in_function_and_fit():
    m = tf.keras.metrics.FalsePositives()
    f = tf.function(lambda t, p: m.update_state(t, p))
    f(tf.constant([0., 1., 0.]), tf.constant([0.9, 0.8, 0.7]))
    f(tf.constant([0., 1., 0.]), tf.constant([0.1, 0.8, 0.7]))
    assert float(m.result()) == 3.0
    assert float(tf.function(tf.keras.metrics.mse)(tf.constant(YT), tf.constant(YP))[0]) == pytest.approx(0.163333, rel=1e-5)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy",
                  metrics=[tf.keras.metrics.TruePositives(name="tp"), tf.keras.metrics.FalseNegatives(name="fn")])
    hist = model.fit(X[:, :3], np.array([1., 0., 1., 1.]), epochs=1, verbose=0)
    assert hist.history["tp"][0] + hist.history["fn"][0] == 3.0


def test_category_encoding_and_functional_merges_as_keras3():
    # Recorded from TF 2.21 (Keras 3.15); structured_data/preprocessing_layers.ipynb encodes its
    # looked-up categories with CategoryEncoding and joins its inputs with layers.concatenate.
    import numpy as np
    L = tf.keras.layers
    assert L.CategoryEncoding(num_tokens=4, output_mode="one_hot")([3, 2, 0, 1]).numpy().tolist() == [
        [0, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    out = L.CategoryEncoding(num_tokens=4, output_mode="multi_hot")([[0, 1], [0, 0], [1, 2], [3, 1]])
    assert out.dtype == tf.float32 and out.numpy().tolist() == [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]]
    counts = L.CategoryEncoding(num_tokens=4, output_mode="count")(
        [[0, 1], [0, 0], [1, 2], [3, 1]], count_weights=np.array([[.1, .2], [.1, .1], [.2, .3], [.4, .2]]))
    np.testing.assert_allclose(counts.numpy(), [[0.1, 0.2, 0, 0], [0.2, 0, 0, 0], [0, 0.2, 0.3, 0], [0, 0.2, 0, 0.4]],
                               rtol=1e-6)
    assert L.CategoryEncoding(num_tokens=4)([1, 2]).numpy().tolist() == [0, 1, 1, 0]
    assert L.CategoryEncoding(num_tokens=3, output_mode="one_hot")(tf.constant([[1], [2]])).shape == (2, 3)
    assert L.CategoryEncoding(num_tokens=3)(tf.constant(2)).numpy().tolist() == [0, 0, 1]
    for kw, message in [({"num_tokens": None}, "num_tokens must be set to use this layer. If the number of tokens "
                                                "is not known beforehand, use the IntegerLookup layer instead."),
                        ({"num_tokens": 0}, "`num_tokens` must be >= 1. Received: num_tokens=0."),
                        ({"num_tokens": 3, "output_mode": "x"}, "Unknown arg for output_mode: x")]:
        with pytest.raises(ValueError) as e:
            L.CategoryEncoding(**kw)
        assert str(e.value) == message
    y = L.CategoryEncoding(num_tokens=5)(tf.keras.Input(shape=(1,), dtype="int64"))
    assert (tuple(y.shape), y.dtype) == ((None, 5), "float32")
    y = L.CategoryEncoding(num_tokens=5, output_mode="one_hot")(tf.keras.Input(shape=(1,)))
    assert tuple(y.shape) == (None, 5)
    assert tuple(L.concatenate([tf.keras.Input((2,)), tf.keras.Input((3,))]).shape) == (None, 5)
    assert L.concatenate([tf.ones([1, 2]), tf.zeros([1, 1])]).numpy().tolist() == [[1, 1, 0]]
    assert L.add([tf.ones([1, 2]), tf.ones([1, 2])]).numpy().tolist() == [[2, 2]]
    assert L.subtract([tf.ones([1, 2]), tf.ones([1, 2])]).numpy().tolist() == [[0, 0]]
    assert L.multiply([tf.ones([1, 2]) * 2, tf.ones([1, 2]) * 3]).numpy().tolist() == [[6, 6]]
    assert L.average([tf.ones([1, 2]), tf.zeros([1, 2])]).numpy().tolist() == [[0.5, 0.5]]
