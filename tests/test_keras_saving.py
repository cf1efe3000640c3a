"""Keras 3's saving semantics (recorded from TF 2.21): load_model compiles with the saved loss and
metric objects and builds the optimizer; the optimizer's saved state loads only into an optimizer
with as many variables (Keras's warning otherwise); optimizers are named like layers."""
import os
import warnings

import numpy as np
import pytest

import tapejax as tf

X = np.random.RandomState(0).rand(8, 3).astype("float32")


def _model(optimizer="adam", loss="mse", metrics=None):
    m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu"),
                             tf.keras.layers.Dense(2)])
    m.compile(optimizer=optimizer, loss=loss, metrics=metrics)
    return m


def test_optimizers_are_named_as_keras3():
    tf.keras.backend.clear_session()
    O = tf.keras.optimizers
    names = [o.name for o in [O.Adam(), O.Adam(), O.SGD(), O.AdamW(), O.RMSprop(), O.Adagrad(), O.Adadelta(),
                              O.Adamax(), O.Nadam(), O.Lion(), O.SGD(name="mine"), O.SGD()]]
    assert names == ['adam', 'adam_1', 'sgd', 'adam_w', 'rm_sprop', 'adagrad', 'adadelta', 'adamax', 'nadam',
                     'lion', 'mine', 'sgd_1']
    tf.keras.backend.clear_session()
    assert O.Adam().name == "adam" and O.Adam().iterations.path == "adam_1/iteration"
    m = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    m.compile("adam", "mse")
    assert m.optimizer.name == "adam_2"


def test_load_model_compiles_with_loss_and_metric_objects_and_builds_the_optimizer(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(1)
    y = np.array([0, 1] * 4)
    m = _model(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
               metrics=[tf.keras.metrics.SparseCategoricalAccuracy(), "accuracy"])
    m.save("untrained.keras")
    # TF 2.21: the loaded optimizer is built (10 variables) and the saved one (2) is skipped.
    with pytest.warns(UserWarning) as rec:
        u = tf.keras.models.load_model("untrained.keras")
    assert [str(w.message) for w in rec] == [
        "Skipping variable loading for optimizer 'adam', because it has 10 variables whereas the saved "
        "optimizer has 2 variables. "]
    assert u.optimizer.built and len(u.optimizer.variables) == 10
    m.fit(X, y, epochs=2, verbose=0)
    m.save("trained.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = tf.keras.models.load_model("trained.keras")
    assert type(t.loss).__name__ == "SparseCategoricalCrossentropy" and t.loss.get_config()["from_logits"] is True
    assert type(t.optimizer).__name__ == "Adam" and t.optimizer.built
    assert int(t.optimizer.iterations.numpy()) == 2 and len(t.optimizer.variables) == 10
    capsys.readouterr()
    t.summary()
    out = capsys.readouterr().out
    assert " Total params: 80 (324.00 B)\n" in out and " Optimizer params: 54 (220.00 B)\n" in out
    assert t.evaluate(X, y, verbose=0) == m.evaluate(X, y, verbose=0)
    t.fit(X, y, epochs=1, verbose=0)
    m.fit(X, y, epochs=1, verbose=0)
    np.testing.assert_allclose(t.get_weights()[0], m.get_weights()[0], atol=1e-6)
    assert int(t.optimizer.iterations.numpy()) == 3


def test_load_weights_skips_an_optimizer_state_that_does_not_fit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(1)
    y = np.random.RandomState(1).rand(8, 2).astype("float32")
    m = _model()
    m.fit(X, y, epochs=2, verbose=0)
    m.save_weights("t.weights.h5")
    fresh = _model()
    with pytest.warns(UserWarning) as rec:
        fresh.load_weights("t.weights.h5")
    # TF 2.21: the fresh model's optimizer is not built: its state starts afresh.
    assert [str(w.message) for w in rec] == [
        "Skipping variable loading for optimizer 'adam_1', because it has 2 variables whereas the saved "
        "optimizer has 10 variables. "]
    assert not fresh.optimizer.built and int(fresh.optimizer.iterations.numpy()) == 0
    assert all(np.array_equal(a, b) for a, b in zip(fresh.get_weights(), m.get_weights()))
    fresh.fit(X, y, epochs=1, verbose=0)
    assert int(fresh.optimizer.iterations.numpy()) == 1
    np.testing.assert_allclose([float(v.ravel()[0]) for v in fresh.get_weights()][:2],
                               [-0.4492327570915222, -0.0029983557760715485], rtol=1e-6)
    built = _model()
    built.fit(X, y, epochs=1, verbose=0)   # built alike: the state loads
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        built.load_weights("t.weights.h5")
    assert int(built.optimizer.iterations.numpy()) == 2
    sgd = _model("sgd")
    sgd.fit(X, y, epochs=1, verbose=0)
    with pytest.warns(UserWarning, match="^Skipping variable loading for optimizer 'sgd', because it has 2 "
                                         "variables whereas the saved optimizer has 10 variables. $"):
        sgd.load_weights("t.weights.h5")
    assert int(sgd.optimizer.iterations.numpy()) == 1


def test_h5_paths_log_keras3s_legacy_format_warnings(tmp_path, caplog, monkeypatch):
    # TF 2.21 prints these as WARNING:absl:<message> (absl's logger; tapejax writes its own format).
    monkeypatch.chdir(tmp_path)
    m = _model(loss=tf.keras.losses.MeanSquaredError(), metrics=[tf.keras.metrics.MeanAbsoluteError()])
    u = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    m.fit(X, np.ones((8, 2), "float32"), epochs=2, verbose=0)
    with caplog.at_level("WARNING", logger="absl"):
        m.save("m.h5")
        loaded = tf.keras.models.load_model("m.h5")
        u.save("u.h5")
        tf.keras.models.load_model("u.h5")
        m.save("m.keras")
        tf.keras.models.load_model("m.keras")
    saving = ("You are saving your model as an HDF5 file via `model.save()` or `keras.saving.save_model(model)`. "
              "This file format is considered legacy. We recommend using instead the native Keras format, e.g. "
              "`model.save('my_model.keras')` or `keras.saving.save_model(model, 'my_model.keras')`. ")
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("absl", "WARNING", saving),
        ("absl", "WARNING", "Compiled the loaded model, but the compiled metrics have yet to be built. "
                            "`model.compile_metrics` will be empty until you train or evaluate the model."),
        ("absl", "WARNING", saving),
        ("absl", "WARNING", "No training configuration found in the save file, so the model was *not* compiled. "
                            "Compile it manually.")]
    # TF 2.21: the legacy loader builds the optimizer on the Sequential's own (no) variables and sets
    # its iterations; summary() counts 2 optimizer variables (TF's fit then fails: Unknown variable).
    assert type(loaded.loss).__name__ == "MeanSquaredError"
    assert loaded.optimizer.built and int(loaded.optimizer.iterations.numpy()) == 2
    assert len(loaded.optimizer.variables) == 2


def test_compile_state_attributes_as_keras3(tmp_path, monkeypatch):
    # TF 2.21: a model never compiled has no `optimizer` attribute, `loss` None and `compiled` False;
    # load_model(compile=False) gives such a model.
    monkeypatch.chdir(tmp_path)
    m = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    assert not hasattr(m, "optimizer") and m.loss is None and m.compiled is False
    with pytest.raises(AttributeError, match="^'Sequential' object has no attribute 'optimizer'$"):
        m.optimizer
    m.compile("sgd", "mse")
    assert type(m.optimizer).__name__ == "SGD" and m.loss == "mse" and m.compiled is True
    m.save("m.keras")
    assert not hasattr(tf.keras.models.load_model("m.keras", compile=False), "optimizer")


def test_threshold_metrics_configs_as_keras3(tmp_path, monkeypatch):
    # Recorded from TF 2.21: what load_model rebuilds compiled metrics from.
    M = tf.keras.metrics
    assert M.AUC(name="auc").get_config() == {
        'name': 'auc', 'dtype': 'float32', 'num_thresholds': 200, 'curve': 'ROC', 'summation_method': 'interpolation',
        'multi_label': False, 'num_labels': None, 'label_weights': None, 'from_logits': False}
    assert M.AUC(num_thresholds=50, curve="PR", summation_method="minoring", from_logits=True,
                 name="a2").get_config() == {
        'name': 'a2', 'dtype': 'float32', 'num_thresholds': 50, 'curve': 'PR', 'summation_method': 'minoring',
        'multi_label': False, 'num_labels': None, 'label_weights': None, 'from_logits': True}
    assert M.AUC(thresholds=[0.3, 0.6], name="a3").get_config() == {
        'name': 'a3', 'dtype': 'float32', 'num_thresholds': 4, 'curve': 'ROC', 'summation_method': 'interpolation',
        'multi_label': False, 'num_labels': None, 'label_weights': None, 'from_logits': False, 'thresholds': [0.3, 0.6]}
    assert M.Precision(name="precision").get_config() == {
        'name': 'precision', 'dtype': 'float32', 'thresholds': None, 'top_k': None, 'class_id': None}
    assert M.Recall(thresholds=[0.2, 0.5], name="recall").get_config() == {
        'name': 'recall', 'dtype': 'float32', 'thresholds': [0.2, 0.5], 'top_k': None, 'class_id': None}
    for m in [M.AUC(num_thresholds=50, curve="PR", name="pr"), M.Precision(thresholds=0.7, name="p7")]:
        assert type(m).from_config(m.get_config()).get_config() == m.get_config()
    monkeypatch.chdir(tmp_path)
    model = _model(loss="binary_crossentropy", metrics=[M.AUC(num_thresholds=50, curve="PR", name="pr"),
                                                         M.Precision(thresholds=0.7, name="p7")])
    model.fit(X, (X[:, :2] > 0.5).astype("float32"), epochs=1, verbose=0)
    model.save("m.keras")
    loaded = tf.keras.models.load_model("m.keras")
    y = (X[:, :2] > 0.5).astype("float32")
    assert loaded.evaluate(X, y, verbose=0) == model.evaluate(X, y, verbose=0)
