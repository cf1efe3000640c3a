"""Keras weighting found by running TensorFlow's imbalanced_data tutorial (synthetic credit-card
data) cell by cell under TF 2.21 and tapejax. Expected values are TF 2.21's (Keras 3), recorded
with /tmp/tf/bin/python on the same programs."""
import numpy as np
import pytest

import tapejax as tf

X = np.random.RandomState(0).randn(300, 4)
Y = (np.random.RandomState(1).rand(300, 1) < 0.1).astype(np.int64)
SW = np.where(Y[:, 0] == 1, 5.0, 0.5)


def _model(metrics, weighted_metrics=None, loss=None):
    tf.keras.utils.set_random_seed(1)
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(
        1, activation="sigmoid", bias_initializer=tf.keras.initializers.Constant(3.0))])
    m.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss=loss or tf.keras.losses.BinaryCrossentropy(),
              metrics=metrics, weighted_metrics=weighted_metrics)
    return m


def _history(h):
    return {k: [round(float(v), 4) for v in vs] for k, vs in h.history.items()}


def test_class_weight_weighs_the_loss_not_the_metrics():
    # tutorial cell 36: fit(..., class_weight={0: w0, 1: w1}) with TruePositives, AUC...: the
    # per-example weights reached the confusion metrics as (batch,) against (batch, 1) predictions
    # (a broadcasting error), and tapejax weighed the metrics, which Keras 3 does not.
    metrics = [tf.keras.metrics.TruePositives(name="tp"), tf.keras.metrics.FalsePositives(name="fp"), "accuracy",
               tf.keras.metrics.BinaryCrossentropy(name="ce")]
    got = _history(_model(metrics).fit(X, Y, batch_size=300, epochs=1, class_weight={0: 0.5, 1: 5.0}, verbose=0))
    assert got == {"accuracy": [0.1267], "ce": [2.7062], "fp": [262.0], "loss": [1.3994], "tp": [34.0]}


def test_weighted_metrics_use_sample_weights():
    m = _model([tf.keras.metrics.TruePositives(name="tp"), "accuracy"],
               [tf.keras.metrics.TruePositives(name="wtp")])
    got = _history(m.fit(X, Y, batch_size=300, epochs=1, sample_weight=SW, verbose=0))
    assert got == {"accuracy": [0.1267], "loss": [1.3994], "tp": [34.0], "wtp": [170.0]}
    assert [round(float(v), 4) for v in m.evaluate(X, Y, sample_weight=SW, verbose=0)] == [1.3994, 34.0, 0.1267, 170.0]
    with pytest.raises(ValueError) as e:
        m.fit(X, Y, sample_weight=SW, class_weight={0: 0.5, 1: 5.0}, verbose=0)
    assert str(e.value) == "You cannot `class_weight` and `sample_weight` at the same time."


def test_a_weighted_metric_named_as_a_metric_and_a_loss_name_with_weights():
    # loss='binary_crossentropy' (a function) with sample weights raised TypeError
    m = _model(["accuracy"], ["accuracy", tf.keras.metrics.AUC(name="auc")], loss="binary_crossentropy")
    got = m.evaluate(X, Y, sample_weight=SW, verbose=0, return_dict=True)
    want = {"accuracy": 0.12666666507720947, "auc": 0.48031842708587646, "loss": 1.3994289636611938,
            "weighted_accuracy": 0.5676567554473877}
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)


def test_confusion_metrics_take_per_example_weights_against_column_predictions():
    # Keras 3: sample_weight (batch,) with y_pred (batch, 1): expanded, then broadcast
    m = tf.keras.metrics.TruePositives()
    m.update_state([[1], [1], [0]], [[0.9], [0.2], [0.8]], sample_weight=[2.0, 3.0, 4.0])
    assert float(m.result()) == 2.0
    auc = tf.keras.metrics.AUC()
    auc.update_state([[1], [0], [1], [0]], [[0.9], [0.3], [0.4], [0.6]], sample_weight=[1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(float(auc.result()), 0.5, atol=1e-6)


def test_weights_files_leave_the_compiled_metrics_alone(tmp_path):
    # tutorial cells 19-24: save_weights after an evaluate, load_weights into new models that share
    # the METRICS objects: Keras 3's weights file has no metric state, so the metrics keep theirs
    # (tapejax restored the saved counts, and the next fit's first epoch started from them)
    x = np.random.RandomState(0).randn(40, 4)
    y = (x[:, :1] > 0).astype(np.float32)
    shared = [tf.keras.metrics.TruePositives(name="tp")]
    tf.keras.utils.set_random_seed(3)
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer="sgd", loss="binary_crossentropy", metrics=shared)
    m.evaluate(x, y, verbose=0)
    assert float(shared[0].result()) == 7.0
    path = str(tmp_path / "w.weights.h5")
    m.save_weights(path)
    shared[0].reset_state()
    m.load_weights(path)
    assert float(shared[0].result()) == 0.0
    assert not [n for n, _ in tf.train.list_variables(path) if "metric" in n]


def test_model_metrics_are_keras3s_loss_tracker_and_compile_metrics():
    # tutorial cells 29, 39, 55 print zip(model.metrics_names, model.evaluate(...)): TF 2.21 has
    # two names, so two lines (tapejax listed every metric)
    x = np.random.RandomState(0).randn(40, 4)
    y = (x[:, :1] > 0).astype(np.float32)
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1, activation="sigmoid")])
    assert (m.metrics_names, m.metrics) == ([], [])
    m.compile(optimizer="sgd", loss="binary_crossentropy", metrics=["accuracy", tf.keras.metrics.AUC(name="auc")])
    assert m.metrics_names == ["loss", "compile_metrics"]
    assert [type(v).__name__ for v in m.metrics] == ["Mean", "CompileMetrics"]
    with pytest.raises(ValueError, match="^Cannot get result\\(\\) since the metric has not yet been built.$"):
        m.metrics[1].result()
    loss, acc, auc = m.evaluate(x, y, verbose=0)
    assert [type(v).__name__ for v in m.metrics[1].metrics] == ["BinaryAccuracy", "AUC"]
    res = m.metrics[1].result()
    assert list(res) == ["accuracy", "auc"] and float(res["accuracy"]) == acc and float(res["auc"]) == auc
    np.testing.assert_allclose(float(m.metrics[0].result()), loss, rtol=1e-6)
    m2 = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1, activation="sigmoid")])
    m2.compile(optimizer="sgd", loss="binary_crossentropy")
    m2.evaluate(x, y, verbose=0)
    assert m2.metrics_names == ["loss"]


@pytest.mark.parametrize("mode,want", [("n", [0.866526, 0.835381]), ("l", [0.750916, 0.793879]),
                                       ("pebl", [0.73562, 0.72436])])
def test_dropout_seed_state_is_not_in_weights_files(tmp_path, mode, want):
    # tutorial cells 19-24 (make_model, load_weights(initial_weights), fit): Keras 3 saves no
    # SeedGenerator state, so loading weights leaves a Dropout's random stream as it is; tapejax
    # restored the saved layer's, and every fit after load_weights drew other masks (TF 2.21's
    # losses recorded from the same program)
    tf.keras.utils.set_random_seed(42)
    x = np.random.RandomState(0).randn(300, 8).astype(np.float32)
    y = (x[:, :1] > 0).astype(np.float32)

    def mk(bias=None):
        b = tf.keras.initializers.Constant(bias) if bias is not None else None
        m = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dropout(0.5),
                                 tf.keras.layers.Dense(1, activation="sigmoid", bias_initializer=b)])
        m.compile(optimizer=tf.keras.optimizers.Adam(1e-3), loss=tf.keras.losses.BinaryCrossentropy(),
                  metrics=[tf.keras.metrics.AUC(name="auc")])
        return m
    m = mk()
    if "p" in mode:
        m.predict(x[:10], verbose=0)
    if "e" in mode:
        m.evaluate(x, y, batch_size=64, verbose=0)
    m = mk(np.log([0.5])) if "b" in mode else mk()
    path = str(tmp_path / "i.weights.h5")
    m.save_weights(path)
    m = mk()
    if "l" in mode:
        m.load_weights(path)
    h = m.fit(x, y, batch_size=128, epochs=2, verbose=0, validation_data=(x[:32], y[:32]))
    np.testing.assert_allclose(h.history["loss"], want, atol=2e-6)
    assert not [n for n, _ in tf.train.list_variables(path) if "seed" in n]
