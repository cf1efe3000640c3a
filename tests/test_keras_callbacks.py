"""tf.keras.callbacks: the hooks fit/evaluate/predict call, and Keras 3's rules for the built-in callbacks."""
import os

import numpy as np
import pytest

import tapejax as tf

CB = tf.keras.callbacks


class _StubModel:
    """What the monitoring callbacks touch: stop_training and the weights."""

    def __init__(self):
        self.stop_training = False
        self.weights = 0
        self.restored = None

    def get_weights(self):
        return self.weights

    def set_weights(self, w):
        self.restored = w


def _run(cb, values):
    """Feeds ``values`` as the monitored quantity of successive epochs; returns the epochs run."""
    model = _StubModel()
    cb.set_model(model)
    cb.on_train_begin({})
    ran = 0
    for epoch, v in enumerate(values):
        model.weights = epoch
        ran += 1
        cb.on_epoch_end(epoch, {cb.monitor: v})
        if model.stop_training:
            break
    cb.on_train_end({})
    return ran, model


def _model(lr=0.1, **dense):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,), **dense)])
    model.compile(optimizer=tf.keras.optimizers.SGD(lr), loss="mse")
    return model


X = np.random.RandomState(0).randn(8, 2).astype("float32")
Y = X.sum(1, keepdims=True)


@pytest.mark.parametrize("values,kw,epochs", [
    ([1.0, 0.9, 0.95, 0.96, 0.97], dict(patience=2), 4),            # stops at epoch 3: two epochs without a new best
    ([1.0, 0.95, 0.92, 0.91], dict(patience=1, min_delta=0.1), 2),  # 0.05 better is no improvement
    ([1.0, 1.0, 1.0, 1.0], dict(patience=2, baseline=0.5), 2),      # never beats the baseline: the wait runs from epoch 0
    ([1.0, 0.9, 0.8, 0.7, 0.6], dict(patience=1, baseline=0.5), 5),  # improving epochs return early, as in Keras
    ([3.0, 3.0, 3.0, 3.0, 3.0], dict(patience=1, start_from_epoch=2), 4),
])
def test_early_stopping_follows_keras_rules(values, kw, epochs):
    ran, _ = _run(CB.EarlyStopping(monitor="loss", **kw), values)
    assert ran == epochs


def test_early_stopping_direction_and_restore_best_weights():
    ran, model = _run(CB.EarlyStopping(monitor="accuracy", patience=1, restore_best_weights=True),
                      [0.5, 0.8, 0.7, 0.6])
    assert ran == 3 and model.restored == 1       # accuracy is maximised; epoch 1 was the best
    with pytest.raises(ValueError, match="mode='max'"):
        _run(CB.EarlyStopping(monitor="zork"), [1.0])
    assert _run(CB.EarlyStopping(monitor="zork", mode="max", patience=0), [1.0, 2.0, 0.5])[0] == 3
    assert _run(CB.EarlyStopping(monitor="zork", mode="min", patience=0), [1.0, 2.0, 0.5])[0] == 2


def test_early_stopping_in_fit_and_missing_metric_warns():
    model = _model(lr=0.0)
    stop = CB.EarlyStopping(monitor="loss", patience=2, verbose=1)
    h = model.fit(X, Y, epochs=20, shuffle=False, callbacks=[stop], verbose=0)   # same batches: equal losses
    assert len(h.history["loss"]) == 3 and stop.stopped_epoch == 2 and model.stop_training
    with pytest.warns(UserWarning, match="val_loss.*not available"):
        model.fit(X, Y, epochs=1, callbacks=[CB.EarlyStopping()], verbose=0)


def test_learning_rate_scheduler_sets_the_rate_that_training_uses():
    model = _model(lr=0.1)
    before = [w.copy() for w in model.get_weights()]
    h = model.fit(X, Y, epochs=3, callbacks=[CB.LearningRateScheduler(lambda epoch: 0.0)], verbose=0)
    assert h.history["learning_rate"] == [0.0, 0.0, 0.0]
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))  # a rate of 0 changes nothing
    h = model.fit(X, Y, epochs=2, callbacks=[CB.LearningRateScheduler(lambda epoch, lr: 0.05 * (epoch + 1))],
                  verbose=0)
    assert np.allclose(h.history["learning_rate"], [0.05, 0.1])
    assert np.isclose(float(model.optimizer.learning_rate.numpy()), 0.1)
    assert h.history["loss"][1] < h.history["loss"][0]
    with pytest.raises(ValueError, match="should be a float"):
        model.fit(X, Y, epochs=1, callbacks=[CB.LearningRateScheduler(lambda epoch: "fast")], verbose=0)


def test_reduce_lr_on_plateau_with_cooldown():
    model = _model(lr=0.0)
    model.optimizer.learning_rate = 1.0
    cb = CB.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, cooldown=2, min_lr=0.2)
    cb.set_model(model)
    cb.on_train_begin({})
    lrs = []
    for epoch in range(6):
        logs = {"loss": 1.0}
        cb.on_epoch_end(epoch, logs)
        lrs.append(logs["learning_rate"])
    # Keras's order: epoch 0 sets the best; 1 cuts to 0.5 and starts a 2-epoch cooldown; 2 counts
    # it down; 3 ends it and cuts to 0.25; 4 counts down; 5 cuts to max(0.125, min_lr) = 0.2.
    assert np.allclose(lrs, [1.0, 1.0, 0.5, 0.5, 0.25, 0.25])
    assert np.isclose(float(model.optimizer.learning_rate.numpy()), 0.2)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        CB.ReduceLROnPlateau(factor=2.0)


def test_terminate_on_nan_stops_within_the_epoch(capsys):
    model = _model()
    batches = []
    x = X.copy()
    x[0, 0] = np.nan
    h = model.fit(x, Y, batch_size=2, epochs=3, shuffle=False, verbose=0,
                  callbacks=[CB.TerminateOnNaN(), CB.LambdaCallback(on_train_batch_end=lambda b, logs: batches.append(b))])
    assert batches == [0] and len(h.history["loss"]) == 1
    assert "Batch 0: Invalid loss, terminating training" in capsys.readouterr().out


def test_model_checkpoint_save_best_only_and_reload(tmp_path):
    model = _model(lr=0.0)
    cb = CB.ModelCheckpoint(str(tmp_path / "best-{epoch}.weights.h5"), monitor="loss", save_best_only=True, save_weights_only=True)
    model.fit(X, Y, epochs=3, shuffle=False, callbacks=[cb], verbose=0)
    assert sorted(os.listdir(tmp_path)) == ["best-1.weights.h5"]   # a constant loss improves only once
    every = CB.ModelCheckpoint(str(tmp_path / "all-{epoch:02d}-{loss:.1f}.weights.h5"), save_weights_only=True)
    loss = model.evaluate(X, Y, verbose=0)
    model.fit(X, Y, epochs=2, callbacks=[every], verbose=0)
    assert sorted(f for f in os.listdir(tmp_path) if f.startswith("all-")) == [
        f"all-01-{loss:.1f}.weights.h5", f"all-02-{loss:.1f}.weights.h5"]
    other = _model()
    other.load_weights(str(tmp_path / "best-1.weights.h5"))
    assert all(np.array_equal(a, b) for a, b in zip(other.get_weights(), model.get_weights()))


def test_model_checkpoint_saves_every_save_freq_batches_as_keras3(tmp_path, capsys, monkeypatch):
    # Recorded from TF 2.21 (Keras 3): 3 batches per epoch; {batch} is the 1-based batch index;
    # the batch count carries over between epochs; verbose=1 prints 'saving' and 'finished saving'.
    monkeypatch.chdir(tmp_path)
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    x, y = np.ones((10, 2), "float32"), np.zeros((10, 1), "float32")
    cb = CB.ModelCheckpoint("ck/w-{epoch:02d}-{batch}.weights.h5", save_weights_only=True, save_freq=2, verbose=1)
    model.fit(x, y, batch_size=4, epochs=3, callbacks=[cb], verbose=0)
    assert sorted(os.listdir("ck")) == ['w-01-2.weights.h5', 'w-02-1.weights.h5', 'w-02-3.weights.h5',
                                        'w-03-2.weights.h5']
    assert capsys.readouterr().out == "".join(
        f"\nEpoch {e}: saving model to ck/w-0{e}-{b}.weights.h5\n\nEpoch {e}: finished saving model to "
        f"ck/w-0{e}-{b}.weights.h5\n" for e, b in [(1, 2), (2, 1), (2, 3), (3, 2)])
    cb = CB.ModelCheckpoint("e/m-{epoch}-{loss:.3f}.keras", save_freq=4, verbose=1)
    model.fit(x, y, batch_size=4, epochs=2, callbacks=[cb], verbose=0)
    assert sorted(os.listdir("e")) == ['m-2-0.906.keras']
    capsys.readouterr()
    cb = CB.ModelCheckpoint("b/best.weights.h5", monitor="nope", mode="min", save_best_only=True,
                            save_weights_only=True, verbose=1)
    with pytest.warns(UserWarning, match="^Can save best model only with nope available.$"):
        model.fit(x, y, batch_size=4, epochs=1, callbacks=[cb], verbose=0)
    assert os.listdir("b") == ["best.weights.h5"]
    assert capsys.readouterr().out == "\nEpoch 1: finished saving model to b/best.weights.h5\n"
    cb = CB.ModelCheckpoint("c/best.weights.h5", monitor="loss", save_best_only=True, save_weights_only=True,
                            verbose=1)
    model.fit(x, y, batch_size=4, epochs=2, callbacks=[cb], verbose=0)
    assert capsys.readouterr().out == (
        "\nEpoch 1: loss improved from None to 0.39220, saving model to c/best.weights.h5\n"
        "\nEpoch 1: finished saving model to c/best.weights.h5\n"
        "\nEpoch 2: loss improved from 0.39220 to 0.27057, saving model to c/best.weights.h5\n"
        "\nEpoch 2: finished saving model to c/best.weights.h5\n")


@pytest.mark.parametrize("kwargs, message", [
    (dict(filepath="w", save_weights_only=True), "When using `save_weights_only=True` in `ModelCheckpoint`, the "
     "filepath provided must end in `.weights.h5` (Keras weights format). Received: filepath=w"),
    (dict(filepath="w.h5", save_weights_only=True), "When using `save_weights_only=True` in `ModelCheckpoint`, "
     "the filepath provided must end in `.weights.h5` (Keras weights format). Received: filepath=w.h5"),
    (dict(filepath="m"), "The filepath provided must end in `.keras` (Keras model format). Received: filepath=m"),
    (dict(filepath="m.keras", save_freq="batch"),
     "Unrecognized save_freq: batch. Expected save_freq are 'epoch' or integer values"),
    (dict(filepath="m.keras", save_freq=2.0),
     "Unrecognized save_freq: 2.0. Expected save_freq are 'epoch' or integer values"),
])
def test_model_checkpoint_rejects_keras3s_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as e:
        CB.ModelCheckpoint(**kwargs)
    assert str(e.value) == message


def test_hook_order_params_and_history():
    calls = []

    class Record(CB.Callback):
        def __getattribute__(self, name):
            if name.startswith("on_"):
                return lambda *a: calls.append((name,) + tuple(x for x in a if isinstance(x, int)))
            return super().__getattribute__(name)

    rec = Record()
    model = _model()
    h = model.fit(X, Y, batch_size=4, epochs=2, validation_data=(X, Y), callbacks=[rec], verbose=0)
    epoch = lambda e: [("on_epoch_begin", e), ("on_train_batch_begin", 0), ("on_train_batch_end", 0),  # noqa: E731
                       ("on_train_batch_begin", 1), ("on_train_batch_end", 1), ("on_epoch_end", e)]
    assert calls == [("on_train_begin",)] + epoch(0) + epoch(1) + [("on_train_end",)]
    assert rec.params == {"epochs": 2, "steps": 2, "verbose": 0} and rec.model is model
    assert isinstance(h, CB.Callback) and model.history is h and h.epoch == [0, 1]
    assert sorted(h.history) == ["loss", "val_loss"]

    calls.clear()
    model.evaluate(X, Y, batch_size=8, callbacks=[rec], verbose=0)
    assert calls == [("on_test_begin",), ("on_test_batch_begin", 0), ("on_test_batch_end", 0), ("on_test_end",)]
    calls.clear()
    model.predict(X, batch_size=8, callbacks=[rec], verbose=0)
    assert calls == [("on_predict_begin",), ("on_predict_batch_begin", 0), ("on_predict_batch_end", 0),
                     ("on_predict_end",)]


def test_base_callback_batch_aliases_and_lambda_errors():
    seen = []

    class Old(CB.Callback):
        def on_batch_end(self, batch, logs=None):
            seen.append(batch)

    _model().fit(X, Y, batch_size=4, epochs=1, callbacks=[Old()], verbose=0)
    assert seen == [0, 1]   # on_train_batch_end defaults to on_batch_end, as in Keras
    with pytest.raises(ValueError, match="not a callback hook"):
        CB.LambdaCallback(on_epcoh_end=print)


def test_fit_class_weight_is_a_per_example_sample_weight():
    rs = np.random.RandomState(1)
    x = rs.randn(12, 2).astype("float32")
    ids = rs.randint(0, 3, size=12)

    def trained(**fit_kw):
        tf.keras.utils.set_random_seed(3)
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(2,))])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.5),
                      loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True))
        model.fit(x, np.eye(3, dtype="float32")[ids], batch_size=4, epochs=2, shuffle=False, verbose=0, **fit_kw)
        return model.get_weights()

    weights = {0: 3.0, 2: 0.25}                     # class 1 is omitted: weight 1.0, as in Keras
    by_class = trained(class_weight=weights)
    by_example = trained(sample_weight=np.array([weights.get(c, 1.0) for c in ids], "float32"))
    plain = trained()
    for a, b in zip(by_class, by_example):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert not np.allclose(by_class[0], plain[0])
    model = _model()
    with pytest.raises(ValueError, match="at the same time"):
        model.fit(X, Y, class_weight={0: 1.0}, sample_weight=np.ones(8), verbose=0)
    with pytest.raises(ValueError, match="needs a dict"):
        model.fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(4), class_weight={0: 1.0}, verbose=0)
