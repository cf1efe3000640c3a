"""Losses equal hand-written / optax values and their gradients equal jax.grad; metrics on known inputs."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import tapejax as tf
from tapejax.keras import losses, metrics

EPS = 1e-7
rng = np.random.default_rng(0)
N, C = 4, 3
LOGITS = rng.normal(size=(N, C)).astype(np.float32)
PROBS = np.asarray(jax.nn.softmax(LOGITS))
LABELS = np.array([0, 2, 1, 2])
ONEHOT = np.eye(C, dtype=np.float32)[LABELS]
BIN = (rng.random((N, C)) > 0.5).astype(np.float32)
REG_T = rng.normal(size=(N, C)).astype(np.float32)
REG_P = rng.normal(size=(N, C)).astype(np.float32)
SIG = np.asarray(jax.nn.sigmoid(LOGITS))


def clip(p):
    return jnp.clip(p, EPS, 1 - EPS)


# (loss object, y_true, y_pred, per-sample oracle in jnp)
CASES = [
    ("mse", losses.MeanSquaredError(), REG_T, REG_P, lambda t, p: jnp.mean((p - t) ** 2, -1)),
    ("mae", losses.MeanAbsoluteError(), REG_T, REG_P, lambda t, p: jnp.mean(jnp.abs(p - t), -1)),
    ("huber", losses.Huber(delta=0.7), REG_T, REG_P,
     lambda t, p: jnp.mean(jnp.where(jnp.abs(p - t) <= 0.7, 0.5 * (p - t) ** 2,
                                     0.7 * jnp.abs(p - t) - 0.5 * 0.7 ** 2), -1)),
    ("bce_probs", losses.BinaryCrossentropy(), BIN, SIG,
     lambda t, p: jnp.mean(-(t * jnp.log(clip(p)) + (1 - t) * jnp.log(1 - clip(p))), -1)),
    ("bce_logits", losses.BinaryCrossentropy(from_logits=True), BIN, LOGITS,
     lambda t, p: jnp.mean(optax.sigmoid_binary_cross_entropy(p, t), -1)),
    ("bce_smooth", losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.2), BIN, LOGITS,
     lambda t, p: jnp.mean(optax.sigmoid_binary_cross_entropy(p, t * 0.8 + 0.1), -1)),
    ("cce_probs", losses.CategoricalCrossentropy(), ONEHOT, PROBS,
     lambda t, p: -jnp.sum(t * jnp.log(clip(p / jnp.sum(p, -1, keepdims=True))), -1)),
    ("cce_logits", losses.CategoricalCrossentropy(from_logits=True), ONEHOT, LOGITS,
     lambda t, p: optax.softmax_cross_entropy(p, t)),
    ("cce_smooth", losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.3), ONEHOT, LOGITS,
     lambda t, p: optax.softmax_cross_entropy(p, t * 0.7 + 0.1)),
    ("scce_probs", losses.SparseCategoricalCrossentropy(), LABELS, PROBS,
     lambda t, p: -jnp.log(clip((p / jnp.sum(p, -1, keepdims=True))[jnp.arange(N), t]))),
    ("scce_logits", losses.SparseCategoricalCrossentropy(from_logits=True), LABELS, LOGITS,
     lambda t, p: optax.softmax_cross_entropy_with_integer_labels(p, t)),
    ("scce_logits_col", losses.SparseCategoricalCrossentropy(from_logits=True), LABELS[:, None], LOGITS,
     lambda t, p: optax.softmax_cross_entropy_with_integer_labels(p, t[:, 0])),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,loss,t,p,oracle", CASES, ids=IDS)
def test_loss_value_and_reductions(name, loss, t, p, oracle):
    per = np.asarray(oracle(jnp.asarray(t), jnp.asarray(p)))
    np.testing.assert_allclose(float(loss(t, p)), per.mean(), rtol=1e-5)
    np.testing.assert_allclose(loss.call(t, p).numpy(), per, rtol=1e-5)
    cls = type(loss)
    kw = dict(loss._config)
    np.testing.assert_allclose(float(cls(reduction="sum", **kw)(t, p)), per.sum(), rtol=1e-5)
    np.testing.assert_allclose(cls(reduction="none", **kw)(t, p).numpy(), per, rtol=1e-5)
    sw = np.array([1.0, 0.0, 2.0, 0.5], np.float32)
    # sum_over_batch_size divides the weighted sum by the number of samples (Keras 3)
    np.testing.assert_allclose(float(loss(t, p, sample_weight=sw)), (per * sw).sum() / N, rtol=1e-5)
    np.testing.assert_allclose(float(loss(t, p, sample_weight=sw[:, None])), (per * sw).sum() / N, rtol=1e-5)
    np.testing.assert_allclose(float(loss(t, p, sample_weight=2.0)), 2 * per.mean(), rtol=1e-5)


@pytest.mark.parametrize("name,loss,t,p,oracle", CASES, ids=IDS)
def test_loss_gradient_equals_jax_grad_and_is_one_op(name, loss, t, p, oracle):
    w = tf.Variable(p)
    with tf.GradientTape() as tape:
        value = loss(t, w)
    assert len(tape._nodes) == 1  # the whole loss is one tape op
    want = jax.grad(lambda q: jnp.mean(oracle(jnp.asarray(t), q)))(jnp.asarray(p))
    np.testing.assert_allclose(tape.gradient(value, w).numpy(), np.asarray(want), rtol=1e-4, atol=1e-6)


def test_function_forms_and_get():
    np.testing.assert_allclose(losses.mse(REG_T, REG_P).numpy(), ((REG_P - REG_T) ** 2).mean(-1),
                               rtol=1e-5)
    np.testing.assert_allclose(
        losses.sparse_categorical_crossentropy(LABELS, LOGITS, from_logits=True).numpy(),
        np.asarray(optax.softmax_cross_entropy_with_integer_labels(LOGITS, LABELS)), rtol=1e-5)
    assert losses.get("mse") is losses.mse and losses.get("mean_squared_error") is losses.mse
    assert losses.mse.__name__ == "mean_squared_error"
    # TF 2.21: tf.keras.losses names these functions by their short names only
    for name in ("mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
                 "mean_squared_logarithmic_error", "log_cosh", "kl_divergence"):
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(tf.keras.losses, name)
    assert losses.get("sparse_categorical_crossentropy") is losses.sparse_categorical_crossentropy
    assert isinstance(losses.get("CategoricalCrossentropy"), losses.CategoricalCrossentropy)
    assert losses.MeanSquaredError().name == "mean_squared_error"
    with pytest.raises(ValueError, match="Could not interpret loss identifier"):
        losses.get("nope")
    with pytest.raises(ValueError, match="Invalid value for argument `reduction`"):
        losses.MeanSquaredError(reduction="avg")


def test_probabilities_are_clipped_like_keras():
    # p = 0 for the true class: Keras clips to 1e-7, giving -log(1e-7), not inf
    v = float(losses.SparseCategoricalCrossentropy()([0], [[0.0, 1.0]]))
    np.testing.assert_allclose(v, -np.log(np.float32(1e-7)), rtol=1e-5)
    v = float(losses.BinaryCrossentropy()([[1.0]], [[0.0]]))
    np.testing.assert_allclose(v, -np.log(np.float32(1e-7)), rtol=1e-4)


def test_stable_from_logits():
    v = float(losses.BinaryCrossentropy(from_logits=True)([[0.0]], [[200.0]]))
    np.testing.assert_allclose(v, 200.0, rtol=1e-6)
    v = float(losses.SparseCategoricalCrossentropy(from_logits=True)([1], [[1000.0, 0.0]]))
    np.testing.assert_allclose(v, 1000.0, rtol=1e-6)


def test_mse_rank_fix_and_custom_loss():
    # y_true (N,) against y_pred (N, 1): Keras expands y_true, so per-sample values not a broadcast
    np.testing.assert_allclose(float(losses.MeanSquaredError()([1.0, 2.0], [[1.0], [4.0]])), 2.0)

    class Scaled(losses.Loss):
        def call(self, y_true, y_pred):
            return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1) * 2.0

    np.testing.assert_allclose(float(Scaled()([[0.0, 2.0]], [[0.0, 0.0]])), 4.0)
    np.testing.assert_allclose(float(Scaled(reduction="sum")([[1.0], [1.0]], [[0.0], [0.0]])), 4.0)
    w = tf.Variable([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        loss = Scaled()([[0.0, 0.0]], w)
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [[2.0, 4.0]])


def test_ignore_class():
    per = np.asarray(optax.softmax_cross_entropy_with_integer_labels(LOGITS, LABELS))
    got = float(losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)(LABELS, LOGITS))
    np.testing.assert_allclose(got, per[LABELS != 2].mean(), rtol=1e-5)


# ---------------------------------------------------------------------------- metrics

def test_sparse_categorical_accuracy_known_batch_and_reset():
    m = metrics.SparseCategoricalAccuracy()
    y_pred = np.array([[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.2, 0.3, 0.5], [0.9, 0.05, 0.05]], np.float32)
    m.update_state([1, 0, 1, 2], y_pred)            # 2 of 4
    assert float(m.result()) == 0.5
    m.update_state(np.array([[2]]), y_pred[2:3])     # (N, 1) labels: 3 of 5
    np.testing.assert_allclose(float(m.result()), 0.6, rtol=1e-6)
    assert m.name == "sparse_categorical_accuracy"
    assert [v.name for v in m.variables] == ["total", "count"]
    assert [v.path for v in m.variables] == ["sparse_categorical_accuracy/total", "sparse_categorical_accuracy/count"]
    assert all(not v.trainable for v in m.variables) and m.trainable_weights == []
    m.reset_state()
    assert float(m.result()) == 0.0
    m.update_state([1], y_pred[:1], sample_weight=[0.0])
    assert float(m.result()) == 0.0
    m.reset_state()
    np.testing.assert_allclose(float(m([0, 0], y_pred[:2])), 0.5)


@pytest.mark.parametrize("metric,t,p,want", [
    (metrics.Accuracy(), [1, 2, 3, 4], [1, 2, 0, 4], 0.75),
    (metrics.BinaryAccuracy(), [[1], [1], [0], [0]], [[0.98], [0.4], [0.6], [0.1]], 0.5),
    (metrics.BinaryAccuracy(threshold=0.3), [[1], [1], [0], [0]], [[0.98], [0.4], [0.6], [0.1]], 0.75),
    (metrics.CategoricalAccuracy(), [[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]], 0.5),
    (metrics.MeanSquaredError(), [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.25),
    (metrics.MeanAbsoluteError(), [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.25),
    (metrics.RootMeanSquaredError(), [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.5),
    (metrics.SparseTopKCategoricalAccuracy(k=2), [2, 0], [[0.1, 0.5, 0.4], [0.0, 0.95, 0.05]], 0.5),
    (metrics.Precision(), [0, 1, 1, 1], [1, 0, 1, 1], 2 / 3),
    (metrics.Recall(), [0, 1, 1, 1], [1, 0, 1, 1], 2 / 3),
], ids=["accuracy", "binary", "binary_thr", "categorical", "mse", "mae", "rmse", "topk", "precision", "recall"])
def test_metrics_known_values(metric, t, p, want):
    metric.reset_state()
    np.testing.assert_allclose(float(metric(t, p)), want, rtol=1e-6)


def test_mean_and_sum_weighted():
    m = metrics.Mean()
    m.update_state([1.0, 2.0, 3.0, 4.0], sample_weight=[1, 0, 0, 1])
    assert float(m.result()) == 2.5
    m.update_state(10.0)
    np.testing.assert_allclose(float(m.result()), 5.0)
    s = metrics.Sum()
    s.update_state([[1.0, 2.0], [3.0, 4.0]])
    assert float(s.result()) == 10.0


def test_auc_close_to_exact():
    y = rng.integers(0, 2, 300)
    p = np.clip(rng.random(300) * 0.7 + y * 0.25, 0, 1)
    pos, neg = p[y == 1], p[y == 0]
    exact = np.mean(pos[:, None] > neg[None, :])
    np.testing.assert_allclose(float(metrics.AUC()(y, p)), exact, atol=2e-3)
    assert 0.5 < float(metrics.AUC(curve="PR")(y, p)) <= 1.0


def test_metric_get_and_wrapper():
    assert isinstance(metrics.get("accuracy"), metrics.Accuracy)
    assert metrics.get("acc").name == "acc"
    assert isinstance(metrics.get("sparse_categorical_accuracy"), metrics.SparseCategoricalAccuracy)
    m = metrics.CategoricalAccuracy()
    assert metrics.get(m) is m
    fn = lambda t, p: tf.abs(t - p)  # noqa: E731
    assert metrics.get(fn) is fn   # TF 2.21 (Keras 3): returned as is; compile wraps it
    wrapped = metrics.MeanMetricWrapper(fn)
    np.testing.assert_allclose(float(wrapped([1.0, 3.0], [0.0, 0.0])), 2.0)
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        metrics.get(3)


def test_metric_update_is_one_compiled_call_without_retrace():
    m = metrics.SparseCategoricalAccuracy()
    y = np.array([1, 0], np.int32)
    p = np.array([[0.1, 0.9], [0.2, 0.8]], np.float32)
    m.update_state(y, p)
    before = metrics._wrapper_update._cache_size()
    for _ in range(3):
        m.update_state(y, p)
    assert metrics._wrapper_update._cache_size() == before
    np.testing.assert_allclose(float(m.result()), 0.5)


@pytest.mark.skipif(not hasattr(tf, "function"), reason="tapejax.function not available")
def test_metric_inside_tf_function():
    m = metrics.Mean()

    @tf.function
    def step(x):
        m.update_state(x)

    step(tf.constant([1.0, 3.0]))
    step(tf.constant([5.0, 7.0]))
    np.testing.assert_allclose(float(m.result()), 4.0)


def test_sparse_crossentropy_of_unnormalized_probabilities_is_keras_3s():
    # TF 2.21: rows that are not probabilities (the metric function applied to logits): Keras 3
    # takes log(clip(p)) as logits, so a row is normalized after clipping; categorical
    # crossentropy normalizes first. Recorded from TF.
    p = np.array([[0.5, -0.2, 0.9], [2.0, 1.0, -1.0], [0.1, 0.2, 0.3], [-0.5, -0.1, -0.2]], np.float32)
    y = np.array([0, 1, 2, 1])
    np.testing.assert_allclose(tf.keras.losses.sparse_categorical_crossentropy(y, p).numpy(),
                               [1.0296195, 0.6931472, 0.6931472, 1.0986123], rtol=1e-6)
    np.testing.assert_allclose(tf.keras.losses.categorical_crossentropy(np.eye(3)[y], p).numpy(),
                               [0.87546873, 0.6931472, 0.6931472, 2.0794415], rtol=1e-6)
    np.testing.assert_allclose(tf.keras.losses.SparseCategoricalCrossentropy()(y, p).numpy(), 0.87863153, rtol=1e-6)


def test_metrics_are_named_as_keras3():
    # Recorded from TF 2.21: metrics without a default name of their own take Keras 3's automatic
    # names (one counter with layers and optimizers); compile wraps a function metric in a
    # MeanMetricWrapper (which takes such a name) named after the function.
    import numpy as np
    tf.keras.backend.clear_session()
    M = tf.keras.metrics
    pairs = {n: (getattr(M, n)(), getattr(M, n)()) for n in
             ["AUC", "Precision", "Recall", "TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives",
              "Mean", "Sum", "Accuracy", "MeanSquaredError", "CosineSimilarity", "RootMeanSquaredError"]}
    assert {n: (a.name, b.name) for n, (a, b) in pairs.items()} == {
        "AUC": ("auc", "auc_1"), "Precision": ("precision", "precision_1"), "Recall": ("recall", "recall_1"),
        "TruePositives": ("true_positives", "true_positives_1"),
        "FalsePositives": ("false_positives", "false_positives_1"),
        "TrueNegatives": ("true_negatives", "true_negatives_1"),
        "FalseNegatives": ("false_negatives", "false_negatives_1"), "Mean": ("mean", "mean"), "Sum": ("sum", "sum"),
        "Accuracy": ("accuracy", "accuracy"), "MeanSquaredError": ("mean_squared_error", "mean_squared_error"),
        "CosineSimilarity": ("cosine_similarity", "cosine_similarity"),
        "RootMeanSquaredError": ("root_mean_squared_error", "root_mean_squared_error")}
    tf.keras.backend.clear_session()

    def my_metric(y_true, y_pred):
        return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)

    x, y = np.ones((4, 3), "float32"), np.ones((4, 2), "float32")
    keys = []
    for _ in range(2):
        m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        m.compile("sgd", "mse", metrics=[M.AUC(), M.Precision(), M.mse, my_metric, "mae", M.MeanMetricWrapper(my_metric)])
        keys.append(sorted(m.fit(x, y, verbose=0).history))
    assert keys == [['auc', 'loss', 'mae', 'mean_metric_wrapper', 'mean_squared_error', 'my_metric', 'precision'],
                    ['auc_1', 'loss', 'mae', 'mean_metric_wrapper_3', 'mean_squared_error', 'my_metric', 'precision_1']]
    assert M.MeanMetricWrapper(my_metric).name == "mean_metric_wrapper_6" and M.get(my_metric) is my_metric
