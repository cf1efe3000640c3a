"""tf.keras models: Sequential, functional and subclassed models, summary, weights, the seed
programs' training loops, and compile/fit/evaluate/predict."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import layers as L
from conftest import assert_close


def mnist_cnn():
    # The model of seed 000, as written there.
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(16, [3, 3], activation='relu', input_shape=(None, None, 1)),
        tf.keras.layers.Conv2D(16, [3, 3], activation='relu'),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10)
    ])


# ---------------------------------------------------------------- Sequential

def test_sequential_summary_and_param_counts(capsys):
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([L.Dense(10, input_shape=(784,))])
    assert model.built and model.count_params() == 7850
    model.summary()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'Model: "sequential"'
    assert out[2].split() == ["┃", "Layer", "(type)", "┃", "Output", "Shape", "┃", "Param", "#", "┃"]
    assert out[4].split() == ["│", "dense", "(Dense)", "│", "(None,", "10)", "│", "7,850", "│"]
    assert " Total params: 7,850 (30.66 KB)" in out and " Trainable params: 7,850 (30.66 KB)" in out
    assert " Non-trainable params: 0 (0.00 B)" in out


def test_mnist_cnn_summary_shapes():
    model = mnist_cnn()
    lines = []
    model.summary(print_fn=lines.append)
    text = "".join(lines)
    assert "(None, None, None, 16)" in text and "(None, 16)" in text and "(None, 10)" in text
    assert [l.count_params() for l in model.layers] == [160, 2320, 0, 170]
    assert "Total params: 2,650" in text
    assert model(tf.zeros([2, 28, 28, 1])).shape == (2, 10)


def test_summary_counts_non_trainable():
    model = tf.keras.Sequential([L.Dense(4, input_shape=(3,)), L.BatchNormalization()])
    lines = []
    model.summary(print_fn=lines.append)
    assert len(lines) == 1    # Keras 3 hands print_fn the whole table
    assert " Total params: 32 (128.00 B)\n" in lines[0] and " Trainable params: 24 (96.00 B)\n" in lines[0]
    assert " Non-trainable params: 8 (32.00 B)\n" in lines[0]


def test_sequential_add_lazy_build_and_errors():
    model = tf.keras.Sequential()
    model.add(L.Dense(4))
    model.add(L.Dense(2))
    assert not model.built
    lines = []
    model.summary(print_fn=lines.append)   # Keras 3: unbuilt layers show '?' and '0 (unbuilt)'
    assert lines[0].count("0 (unbuilt)") == 2 and lines[0].count(" ? ") == 2
    y = model(np.ones((3, 5), np.float32))
    assert y.shape == (3, 2) and model.built
    assert [tuple(w.shape) for w in model.weights] == [(5, 4), (4,), (4, 2), (2,)]
    with pytest.raises(TypeError, match="must be an instance of class Layer"):
        model.add(3)
    m2 = tf.keras.Sequential([tf.keras.Input(shape=(6,)), L.Dense(3)])
    assert m2.built and m2.count_params() == 21 and len(m2.layers) == 1
    m3 = tf.keras.Sequential([L.InputLayer(input_shape=(2,)), L.Dense(1)])
    assert m3.count_params() == 3


def test_sequential_build_and_nested():
    inner = tf.keras.Sequential([L.Dense(4, activation="relu"), L.Dense(3)])
    outer = tf.keras.Sequential([inner, L.Dense(1)])
    outer.build((None, 5))
    assert inner.built and outer.count_params() == (5 * 4 + 4) + (4 * 3 + 3) + (3 + 1)
    assert len(outer.layers) == 2 and len(outer.trainable_weights) == 6
    x = np.random.RandomState(0).randn(2, 5).astype(np.float32)
    k = [w.numpy() for w in outer.trainable_weights]
    want = np.maximum(x @ k[0] + k[1], 0) @ k[2] + k[3]
    assert_close(outer(x), want @ k[4] + k[5], rtol=1e-5)


# ---------------------------------------------------------------- functional

def test_functional_model():
    inputs = tf.keras.Input(shape=(4,), name="x")
    h = L.Dense(8, activation="relu", name="hidden")(inputs)
    outputs = L.Dense(2, name="out")(h)
    model = tf.keras.Model(inputs=inputs, outputs=outputs, name="func")
    assert [type(l).__name__ for l in model.layers] == ["InputLayer", "Dense", "Dense"]
    assert model.count_params() == 4 * 8 + 8 + 8 * 2 + 2
    x = np.random.RandomState(1).randn(3, 4).astype(np.float32)
    k = [w.numpy() for w in model.trainable_weights]
    assert_close(model(x), np.maximum(x @ k[0] + k[1], 0) @ k[2] + k[3], rtol=1e-5)
    lines = []
    model.summary(print_fn=lines.append)
    rows = lines[0].splitlines()
    assert any(l.split()[1:3] == ["x", "(InputLayer)"] for l in rows)
    assert any(l.split()[1:6] == ["hidden", "(Dense)", "│", "(None,", "8)"] for l in rows)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    assert all(g is not None for g in tape.gradient(loss, model.trainable_variables))


def test_functional_multi_input_and_nested_model():
    a, b = tf.keras.Input(shape=(3,)), tf.keras.Input(shape=(2,))
    merged = L.Concatenate()([a, b])
    sub = tf.keras.Sequential([L.Dense(4), L.Dense(1)])
    out = sub(merged)
    model = tf.keras.Model([a, b], out)
    assert out.shape == (None, 1)
    y = model([np.ones((2, 3), np.float32), np.ones((2, 2), np.float32)])
    assert y.shape == (2, 1)
    assert model.count_params() == 5 * 4 + 4 + 4 + 1
    # Keras 3: an operator on a KerasTensor is a Keras operation of the graph (it raised here before).
    assert_close(tf.keras.Model(a, a + 1.0)(np.ones((1, 3), np.float32)), np.full((1, 3), 2.0))
    doubled = L.Lambda(lambda t: t * 2.0)(a)
    assert_close(tf.keras.Model(a, doubled)(np.ones((1, 3), np.float32)), np.full((1, 3), 2.0))


# ---------------------------------------------------------------- subclassing

class MyModel(tf.keras.Model):
    # The model of seed 003.
    def __init__(self, num_classes=10):
        super(MyModel, self).__init__(name='my_model')
        self.num_classes = num_classes
        self.dense_1 = tf.keras.layers.Dense(32, activation='relu')
        self.dropout = tf.keras.layers.Dropout(0.5)
        self.dense_2 = tf.keras.layers.Dense(num_classes)

    def call(self, inputs, training=None):
        x = self.dense_1(inputs)
        x = self.dropout(x, training=training)
        return self.dense_2(x)


def test_subclassed_model_weights_layers_build():
    model = MyModel()
    assert [l.name.split("_")[0] for l in model.layers] == ["dense", "dropout", "dense"]
    # TF 2.21 (Keras 3's default build): marked built, warns, builds no layer.
    with pytest.warns(UserWarning, match="does not have a `build\\(\\)` method implemented"):
        model.build((None, 20))
    assert model.built and model.count_params() == 0
    model(np.zeros((1, 20), np.float32))
    assert model.count_params() == 20 * 32 + 32 + 32 * 10 + 10
    names = [v.path for v in model.trainable_variables]
    assert names[0].startswith("my_model/dense") and names[0].endswith("/kernel") and len(names) == 4
    x = np.random.RandomState(0).randn(4, 20).astype(np.float32)
    assert_close(model(x), model(x, training=False))
    assert not np.allclose(model(x, training=True).numpy(), model(x, training=True).numpy())
    w = model.get_weights()
    model.set_weights([a * 0 for a in w])
    assert_close(model(x), np.zeros((4, 10)))
    model.set_weights(w)
    lines = []
    model.summary(print_fn=lines.append)
    assert 'Model: "my_model"' in lines[0]


def test_frozen_layer_in_model():
    model = tf.keras.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(2)])
    model.layers[0].trainable = False
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2
    lines = []
    model.summary(print_fn=lines.append)
    assert " Trainable params: 10 (40.00 B)\n" in lines[0] and " Non-trainable params: 16 (64.00 B)\n" in lines[0]


# ---------------------------------------------------------------- seed programs

def test_seed000_cnn_trains_with_tape_and_optimizer():
    tf.keras.utils.set_random_seed(0)  # Keras 3 seeds initializers from this, not tf.random.set_seed
    model = mnist_cnn()
    rng = np.random.RandomState(0)
    labels = rng.randint(0, 10, size=32)
    # Images whose mean intensity encodes the label: learnable by this small CNN.
    images = (rng.rand(32, 12, 12, 1) * 0.1 + labels[:, None, None, None] / 10.0).astype(np.float32)
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    loss_history = []

    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            tf.debugging.assert_equal(logits.shape, (32, 10))
            loss_value = loss_object(labels, logits)
        loss_history.append(loss_value.numpy().mean())
        grads = tape.gradient(loss_value, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for _ in range(25):
        train_step(tf.constant(images), tf.constant(labels))
    assert loss_history[-1] < 0.8 * loss_history[0]


def test_seed002_split_model_gradients_match_one_tape():
    tf.random.set_seed(0)
    x = tf.random.uniform((3, 10, 10, 1))
    y = tf.cast(tf.random.uniform((3, 1)) > 0.5, tf.float32)
    layer_0 = tf.keras.Sequential([L.Conv2D(filters=6, kernel_size=2, activation="relu")])
    layer_1 = tf.keras.Sequential([L.Conv2D(filters=6, kernel_size=2, activation="relu")])
    layer_2 = tf.keras.Sequential([L.Flatten(), L.Dense(1), L.Activation("sigmoid")])
    loss_fn = tf.keras.losses.MeanSquaredError()
    with tf.GradientTape(persistent=True) as tape:
        out0 = layer_0(x)
        out1 = layer_1(out0)
        out2 = layer_2(out1)
        loss = loss_fn(y, out2)
    ref = [tape.gradient(loss, l.trainable_weights) for l in (layer_0, layer_1, layer_2)]
    # The split: each part on its own tape, chained with output_gradients.
    with tf.GradientTape() as t0:
        o0 = layer_0(x)
    with tf.GradientTape(persistent=True) as t1:
        t1.watch(o0)
        o1 = layer_1(o0)
    with tf.GradientTape(persistent=True) as t2:
        t2.watch(o1)
        o2 = layer_2(o1)
        l2 = loss_fn(y, o2)
    g2 = t2.gradient(l2, layer_2.trainable_weights)
    d_o1 = t2.gradient(l2, o1)
    g1 = t1.gradient(o1, layer_1.trainable_weights, output_gradients=d_o1)
    d_o0 = t1.gradient(o1, o0, output_gradients=d_o1)
    g0 = t0.gradient(o0, layer_0.trainable_weights, output_gradients=d_o0)
    assert_close([g0, g1, g2], ref, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- compile / fit

def _classification_data(n=96, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 6).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32) + 2 * (x[:, 2] > 0.5).astype(np.int32)
    return x, y


def test_fit_evaluate_predict(capsys):
    tf.random.set_seed(1)
    x, y = _classification_data()
    model = tf.keras.Sequential([L.Dense(16, activation="relu", input_shape=(6,)), L.Dense(4)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    hist = model.fit(x, y, batch_size=32, epochs=4, validation_data=(x[:32], y[:32]))
    out = capsys.readouterr().out
    assert "Epoch 1/4" in out and "Epoch 4/4" in out
    assert "3/3\x1b[0m \x1b[32m" + "━" * 20 in out and " - loss: " in out and " - val_accuracy: " in out
    assert set(hist.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    assert hist.history["accuracy"][-1] > 0.6
    loss, acc = model.evaluate(x, y, verbose=0)
    assert loss < hist.history["loss"][0] and 0 <= acc <= 1
    pred = model.predict(x, batch_size=40, verbose=0)
    assert isinstance(pred, np.ndarray) and pred.shape == (96, 4)
    assert_close(pred, model(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(acc, np.mean(pred.argmax(-1) == y), atol=1e-6)


def test_fit_with_string_identifiers_and_compiled_equals_eager():
    x, y = _classification_data(64, seed=3)
    results = []
    for eager in (False, True):
        tf.keras.backend.clear_session()
        tf.keras.utils.set_random_seed(7)   # Keras 3 seeds unseeded initializers from Python's random
        model = tf.keras.Sequential([L.Dense(8, activation="relu", input_shape=(6,)), L.BatchNormalization(),
                                     L.Dense(4)])
        model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], run_eagerly=eager)
        model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
        results.append([w.numpy() for w in model.weights])
        names = [w.name for w in model.weights]
    assert_close(results[0], results[1], rtol=1e-4, atol=1e-5)
    # BatchNormalization's moving statistics were written back by the (compiled) step.
    assert not np.allclose(results[0][names.index("moving_mean")], 0.0)
    assert not np.allclose(results[0][names.index("moving_variance")], 1.0)
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,))])
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    h = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=2, verbose=0)
    assert set(h.history) == {"loss", "mae"}


def test_fit_on_dataset_and_validation_split():
    x, y = _classification_data(64)
    model = tf.keras.Sequential([L.Dense(4, input_shape=(6,))])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    h = model.fit(x, y, epochs=1, validation_split=0.25, verbose=0)
    assert "val_loss" in h.history
    if hasattr(tf, "data") and hasattr(tf.data, "Dataset"):
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
        h = model.fit(ds, epochs=2, verbose=0)
        assert len(h.history["loss"]) == 2
        assert isinstance(model.evaluate(ds, verbose=0), float)


def test_fit_requires_compile():
    # TF 2.21 / Keras 3.15: ValueError, for fit and evaluate; a loss only for the default steps
    model = tf.keras.Sequential([L.Dense(1, input_shape=(2,))])
    x, y = np.ones((8, 2), np.float32), np.zeros((8, 1), np.float32)
    for run in (lambda: model.fit(x, y, verbose=0), lambda: model.evaluate(x, y, verbose=0)):
        with pytest.raises(ValueError, match=r"^You must call `compile\(\)` before using the model\.$"):
            run()
    model.compile(optimizer="sgd")
    for run in (lambda: model.fit(x, y, verbose=0), lambda: model.evaluate(x, y, verbose=0),
                lambda: model.train_on_batch(x, y)):
        with pytest.raises(ValueError, match=r"^No loss to compute\. Provide a `loss` argument in `compile\(\)`\."):
            run()


class _Tracked(tf.keras.Model):
    """Keras 3's "customizing fit" pattern: own metrics as attributes, a custom train_step."""

    def __init__(self, list_metrics):
        super().__init__()
        self.d = L.Dense(1, kernel_initializer="ones")
        self.loss_tracker = tf.keras.metrics.Mean(name="my_loss")
        self.mae = tf.keras.metrics.MeanAbsoluteError(name="mae")
        self.list_metrics = list_metrics

    def call(self, x):
        return self.d(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y - y_pred))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        self.mae.update_state(y, y_pred)
        return {"my_loss": self.loss_tracker.result(), "mae": self.mae.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae] if self.list_metrics else super().metrics


@pytest.mark.parametrize("list_metrics", [True, False])
def test_custom_train_step_metrics_reset_each_epoch(list_metrics):
    # Recorded from TF 2.21: compile(optimizer) alone suffices for a custom train_step; its
    # metrics (listed by an overriding `metrics`, or found in the attributes) reset each epoch
    # and its logs are its own (not re-weighted as the default loss tracker's).
    model = _Tracked(list_metrics)
    if not list_metrics:
        assert [m.name for m in model.metrics] == ["my_loss", "mae"]
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01))
    if not list_metrics:
        assert [m.name for m in model.metrics] == ["loss", "my_loss", "mae"]
    h = model.fit(np.ones((8, 2), np.float32), np.zeros((8, 1), np.float32), epochs=2, batch_size=4, verbose=0)
    np.testing.assert_allclose(h.history["my_loss"], [3.767199993133545, 2.941237449645996], rtol=1e-6)
    np.testing.assert_allclose(h.history["mae"], [1.940000057220459, 1.714184045791626], rtol=1e-6)


def test_compile_with_keras_names():
    x, y = _classification_data(64, seed=5)
    model = tf.keras.Sequential([L.Dense(4, activation="softmax", input_shape=(6,))])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    h = model.fit(x, y, batch_size=64, epochs=2, verbose=2)
    assert model.metrics_names == ["loss", "compile_metrics"]   # Keras 3's names
    assert type(model.metrics[1].metrics[0]).__name__ == "SparseCategoricalAccuracy"
    assert h.history["loss"][1] < h.history["loss"][0]


def test_seed002_jacobian_chain_rule_matches_one_tape():
    # Seed 002's "split model": per-part jacobian / batch_jacobian, chained by hand.
    tf.random.set_seed(0)
    x = tf.random.uniform((3, 10, 10, 1))
    y = tf.cast(tf.random.uniform((3, 1)) > 0.5, tf.float32)
    model = tf.keras.Sequential([L.Conv2D(filters=6, kernel_size=2, activation="relu"),
                                 L.Conv2D(filters=6, kernel_size=2, activation="relu"),
                                 L.Flatten(), L.Dense(1), L.Activation("sigmoid")])
    loss_fn = tf.keras.losses.MeanSquaredError()
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    ref = tape.gradient(loss, [model.layers[i].trainable_weights for i in (0, 1, 3)])

    with tf.GradientTape(persistent=True) as tape_0:
        out_layer_0 = model.layers[0](x)
    with tf.GradientTape(persistent=True) as tape_1:
        tape_1.watch(out_layer_0)
        out_layer_1 = model.layers[1](out_layer_0)
    with tf.GradientTape(persistent=True) as tape_2:
        tape_2.watch(out_layer_1)
        out_flatten = model.layers[2](out_layer_1)
        out_layer_2 = model.layers[4](model.layers[3](out_flatten))
        loss = loss_fn(y, out_layer_2)
    dOut0_dWeights0 = tape_0.jacobian(out_layer_0, model.layers[0].trainable_weights)
    dOut1_dOut0 = tape_1.batch_jacobian(out_layer_1, out_layer_0)
    dOut1_dWeights1 = tape_1.jacobian(out_layer_1, model.layers[1].trainable_weights)
    dOut2_dOut1 = tape_2.batch_jacobian(out_layer_2, out_layer_1)
    dOut2_dWeights2 = tape_2.jacobian(out_layer_2, model.layers[3].trainable_weights)
    dLoss_dOut2 = tape_2.gradient(loss, out_layer_2)

    def add_missing_axes(source_tensor, target_tensor):
        for _ in range(len(target_tensor.shape) - len(source_tensor.shape)):
            source_tensor = source_tensor[..., tf.newaxis]
        return source_tensor

    def upstream_gradient_loss_weights(dOutUpstream_dWeightsLocal, dLoss_dOutUpstream):
        ext = add_missing_axes(dLoss_dOutUpstream, dOutUpstream_dWeightsLocal)
        return tf.reduce_sum(dOutUpstream_dWeightsLocal * ext, axis=range(len(dLoss_dOutUpstream.shape)))

    def upstream_gradient_loss_out(dOutUpstream_dOutLocal, dLoss_dOutUpstream):
        ext = add_missing_axes(dLoss_dOutUpstream, dOutUpstream_dOutLocal)
        return tf.reduce_sum(dOutUpstream_dOutLocal * ext, axis=range(len(dLoss_dOutUpstream.shape))[1:])

    got2 = [upstream_gradient_loss_weights(j, dLoss_dOut2) for j in dOut2_dWeights2]
    dLoss_dOut1 = upstream_gradient_loss_out(dOut2_dOut1, dLoss_dOut2)
    got1 = [upstream_gradient_loss_weights(j, dLoss_dOut1) for j in dOut1_dWeights1]
    dLoss_dOut0 = upstream_gradient_loss_out(dOut1_dOut0, dLoss_dOut1)
    got0 = [upstream_gradient_loss_weights(j, dLoss_dOut0) for j in dOut0_dWeights0]
    assert_close([got0, got1, got2], ref, rtol=1e-5, atol=1e-6)


class SeedModel(tf.keras.Model):
    def __init__(self, num_classes=10):
        super(SeedModel, self).__init__(name='my_model')
        self.dense_1 = tf.keras.layers.Dense(32, activation='relu')
        self.dense_2 = tf.keras.layers.Dense(num_classes)

    def call(self, inputs):
        return self.dense_2(self.dense_1(inputs))


def test_seed003_custom_loop_with_metrics_and_tf_function():
    rng = np.random.RandomState(0)
    x_train = rng.random_sample((256, 32)).astype(np.float32)
    y_train = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 256)]
    model = SeedModel(num_classes=10)
    optimizer = tf.keras.optimizers.SGD(learning_rate=1e-1)
    loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
    train_acc_metric = tf.keras.metrics.CategoricalAccuracy()

    def train_step(x_batch_train, y_batch_train):
        with tf.GradientTape() as tape:
            logits = model(x_batch_train)
            loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric(y_batch_train, logits)
        return loss_value

    step = tf.function(train_step) if hasattr(tf, "function") else train_step
    losses = []
    for epoch in range(3):
        for i in range(0, 256, 64):
            losses.append(float(step(tf.constant(x_train[i:i + 64]), tf.constant(y_train[i:i + 64]))))
        acc = float(train_acc_metric.result())
        assert 0.0 <= acc <= 1.0
        train_acc_metric.reset_state()
    assert np.mean(losses[-4:]) < np.mean(losses[:4])
    assert [v.path for v in model.trainable_weights][0].startswith("my_model/dense")


def test_sequential_with_declared_input_shape_keeps_its_shapes_after_a_call():
    # Keras 3.15 / TF 2.21 (the custom layers tutorial): shapes stay those of the declared input
    my_seq = tf.keras.Sequential([tf.keras.layers.Conv2D(1, (1, 1), input_shape=(None, None, 3)),
                                  tf.keras.layers.BatchNormalization(),
                                  tf.keras.layers.Conv2D(2, 1, padding='same')])
    my_seq(tf.zeros([1, 2, 3, 3]))
    assert my_seq.output_shape == (None, None, None, 2)
    assert [tuple(l.output_shape) for l in my_seq.layers] == [(None, None, None, 1)] * 2 + [(None, None, None, 2)]


def test_logs_are_sorted_as_keras_3_hands_them_over():
    # TF 2.21 (Keras 3): callbacks, History and returned dicts get the keys sorted; evaluate's
    # list is the loss, then the metrics as compiled. Recorded from TF with this model and data.
    tf.keras.utils.set_random_seed(0)
    m = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(3)])
    m.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["sparse_categorical_accuracy", "accuracy",
                       tf.keras.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2"),
                       tf.keras.metrics.sparse_categorical_crossentropy])
    x = np.arange(16, dtype=np.float32).reshape(8, 2) / 10
    y = np.arange(8) % 3
    seen = []

    class Keys(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(list(logs))

    h = m.fit(x, y, epochs=1, verbose=0, validation_data=(x, y), callbacks=[Keys()])
    keys = ["accuracy", "loss", "sparse_categorical_accuracy", "sparse_categorical_crossentropy", "top2"]
    assert seen[0] == keys
    assert list(h.history) == keys + ["val_" + k for k in keys]
    assert list(m.evaluate(x, y, verbose=0, return_dict=True)) == keys
    # TF 2.21's evaluate of the fitted model (the loss first, then the metrics as compiled).
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), [1.1889104843139648, 0.25, 0.25, 0.625, 2.337329864501953],
                               rtol=1e-5)
    assert list(m.train_on_batch(x, y, return_dict=True)) == keys


def test_fit_shuffles_array_inputs_in_keras3s_order_when_seeded():
    """Keras 3 shuffles array inputs with tf.random.shuffle(tf.range(n)) inside a tf.data map
    function: with a global seed that is the first random op of a new graph (op seed 0), so
    every epoch and every fit gets the same order, whatever ran before. Recorded from TF 2.21."""
    seen = []

    class Rec(tf.keras.layers.Layer):
        def call(self, x, training=None):
            if training:
                seen.extend(np.asarray(x)[:, 0].astype(int).tolist())
            return x

    tf.keras.utils.set_random_seed(42)
    x = np.arange(10, dtype="float32")[:, None]
    model = tf.keras.Sequential([tf.keras.Input((1,)), Rec(), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    tf.random.uniform([3])
    model.fit(x, np.zeros((10, 1), "float32"), epochs=2, batch_size=5, verbose=0)
    model.fit(x, np.zeros((10, 1), "float32"), epochs=1, batch_size=5, verbose=0)
    assert seen == [3, 8, 7, 5, 2, 0, 1, 6, 9, 4] * 3
    seen.clear()
    tf.random.set_seed(7)
    model.fit(np.arange(100, dtype="float32")[:, None], np.zeros((100, 1), "float32"), batch_size=32, verbose=0)
    assert seen[:6] == [37, 95, 54, 13, 31, 16]
    seen.clear()
    tf.random.set_seed(0)   # TF's seeds (0, 0) become (0, 2**31 - 1)
    model.fit(x, np.zeros((10, 1), "float32"), batch_size=10, verbose=0)
    assert seen == [2, 0, 5, 8, 7, 1, 9, 6, 3, 4]


def test_seeded_fit_with_shuffle_matches_tf():
    """compile/fit with shuffle=True after set_random_seed(42). Recorded from TF 2.21 (Keras 3)."""
    tf.keras.utils.set_random_seed(42)
    rng = np.random.RandomState(0)
    x = rng.rand(256, 28, 28).astype("float32")
    y = rng.randint(0, 10, 256).astype("uint8")
    model = tf.keras.Sequential([tf.keras.Input((28, 28)), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dropout(0.2),
                                 tf.keras.layers.Dense(10)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    h = model.fit(x, y, epochs=3, verbose=0, batch_size=32)
    got = {k: [round(float(v), 5) for v in vs] for k, vs in h.history.items()}
    assert got == {'accuracy': [0.12109, 0.11328, 0.19531], 'loss': [2.36745, 2.28322, 2.24027]}


def test_fit_without_trainable_weights_trains_nothing_and_warns():
    """As Keras 3 (recorded from TF 2.21): a model without trainable weights fits (the loss is
    computed, nothing is updated, the optimizer takes no step) with a UserWarning."""
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Lambda(lambda x: x * 2)])
    model.compile(loss="mse", optimizer="sgd")
    with pytest.warns(UserWarning, match="The model does not have any trainable weights."):
        h = model.fit(np.ones((4, 3), np.float32), np.ones((4, 3), np.float32), epochs=2, verbose=0, batch_size=2)
    assert h.history == {"loss": [1.0, 1.0]}
    assert int(model.optimizer.iterations.numpy()) == 0


def test_a_layer_is_called_as_often_as_keras_calls_it():
    """A layer's ``call`` (and its Python side effects) runs as often as in Keras 3 (counts
    recorded from TF 2.21): once when ``predict`` traces its step, once per eager call. (Building
    a Sequential with an Input calls it twice, Keras once: two abstract traces at stand-in sizes
    tell the unknown dimensions.)"""
    calls = []

    class Twice(tf.keras.layers.Layer):
        def call(self, x, training=None):
            calls.append(training)
            return x * 2

    model = tf.keras.Sequential([tf.keras.Input((3,)), Twice()])
    calls.clear()
    model.predict(np.ones((2, 3), np.float32), verbose=0)
    assert calls == [False]
    calls.clear()
    model(np.ones((2, 3), np.float32))
    assert calls == [None]


# ------------------------------------------- Keras 3's array adapter and functional input rank

class _FakeFrame:
    """The part of pandas.DataFrame Keras 3's array adapter uses (pandas is no test dependency)."""
    __module__ = "pandas.core.frame"

    def __init__(self, columns):
        self.columns = columns

    @property
    def dtypes(self):
        import types
        return types.SimpleNamespace(values=np.array([c.dtype for c in self.columns.values()], object))

    def astype(self, dtype):
        return _FakeFrame({k: v.astype(dtype) for k, v in self.columns.items()})

    def to_numpy(self):
        return np.stack(list(self.columns.values()), axis=1)

    def __iter__(self):   # a DataFrame iterates over its column names
        return iter(self.columns)


_FakeFrame.__name__ = _FakeFrame.__qualname__ = "DataFrame"


class _FakeSeries:
    __module__ = "pandas.core.series"

    def __init__(self, values):
        self.values = values

    def to_numpy(self):
        return self.values

    def __iter__(self):
        return iter(self.values)


_FakeSeries.__name__ = _FakeSeries.__qualname__ = "Series"


def _frames():
    out = [(_FakeFrame, _FakeSeries)]
    try:
        import pandas as pd
        out.append((pd.DataFrame, pd.Series))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("frame,series", _frames())
def test_fit_evaluate_predict_take_pandas_and_one_rank_short_inputs_as_keras3(frame, series):
    """The regression tutorial: a DataFrame is its values (float32), a Series one column, and a
    model whose input is (None, 1) takes (n,) inputs (Keras 3's ``_adjust_input_rank``).
    Recorded from TF 2.21 (Keras 3) with the same code."""
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(1)
    cols = {"a": np.arange(6, dtype="float64"), "b": np.arange(6, dtype="float64") * 2, "c": np.arange(6) % 2}
    df, y = frame(cols), series(np.arange(6, dtype="float64"))
    m = tf.keras.Sequential([L.Dense(1, input_shape=(1,))])
    assert m.predict(np.arange(3, dtype="float32"), verbose=0).shape == (3, 1)
    assert m(np.arange(3, dtype="float32")).shape == (3, 1)                 # (3,) -> (3, 1)
    assert m(np.ones((3, 1, 1), "float32")).shape == (3, 1)                 # (3, 1, 1) -> (3, 1)
    with pytest.raises(ValueError, match="Invalid input shape"):
        m(np.ones((3, 2, 2), "float32"))
    m2 = tf.keras.Sequential([L.Dense(1)])
    m2.compile(optimizer="sgd", loss="mae")
    np.testing.assert_allclose(m2.predict(df, verbose=0).ravel(), [
        0.0, 0.5069000124931335, -0.5098999738693237, -0.003000000026077032, -1.0197999477386475,
        -0.5128999948501587], atol=1e-4)
    h = m2.fit(df, y, epochs=2, verbose=0, validation_split=0.34)
    np.testing.assert_allclose(h.history["loss"], [1.001, 0.9477], atol=1e-4)
    np.testing.assert_allclose(h.history["val_loss"], [4.303, 4.0975], atol=1e-4)
    assert round(m2.evaluate(df, y, verbose=0), 4) == 2.4965
    m.compile(optimizer="sgd", loss="mae")
    assert round(m.evaluate(series(cols["a"]), y, verbose=0), 4) == 4.5871


def test_sequential_built_by_a_call_keeps_its_batch_size_as_keras3(capsys):
    """Keras 3 builds a Sequential on an InputLayer of the first call's batch shape: summary and
    output_shape show that batch size (the regression tutorial's ``(10, 9)``); fit and evaluate
    build in their tf.function on the dataset's element spec (batch None); predict on its first
    batch. Recorded from TF 2.21."""
    tf.keras.backend.clear_session()
    m3 = tf.keras.Sequential([L.Dense(2), L.Dense(3)])
    m3(np.ones((10, 4), "float32"))
    assert m3.output_shape == (10, 3)
    assert m3(np.ones((7, 4), "float32")).shape == (7, 3)
    capsys.readouterr()
    m3.summary()
    rows = [line for line in capsys.readouterr().out.splitlines() if "(Dense)" in line]
    assert [r.split("│")[2].strip() for r in rows] == ["(10, 2)", "(10, 3)"]
    m4 = tf.keras.Sequential([L.Dense(2)])
    m4.compile("adam", "mse")
    m4.fit(np.ones((40, 3)), np.ones((40, 2)), verbose=0, batch_size=16)
    m6 = tf.keras.Sequential([L.Dense(2)])
    m6.compile("sgd", "mse")
    m6.predict(np.ones((5, 3)), verbose=0)
    m7 = tf.keras.Sequential([L.Dense(2)])
    m7.build((None, 3))
    for model, shape in [(m4, "(None, 2)"), (m6, "(5, 2)"), (m7, "(None, 2)")]:
        model.summary()
        rows = [line for line in capsys.readouterr().out.splitlines() if "(Dense)" in line]
        assert [r.split("│")[2].strip() for r in rows] == [shape]


def test_predict_retracing_warnings_name_and_count_as_keras3():
    """Keras 3 compiles predict as ``one_step_on_data_distributed`` with reduce_retracing, one
    code object for every model, so TF's retracing warning names it and counts all models'
    traces together (the regression tutorial prints it). Recorded from TF 2.21 with this loop."""
    import logging
    import re
    msgs = []

    class Handler(logging.Handler):
        def emit(self, record):
            msgs.append(record.getMessage())

    from tapejax._staging import function as _function
    from tapejax.keras import models as _models
    # The counts are per process (one detector for the code); start from a fresh one.
    _function._detectors.pop(_models._keras3_predict_function(None).__code__, None)
    handler = Handler()
    tf.get_logger().addHandler(handler)
    try:
        for i in range(7):
            m = tf.keras.Sequential([L.Dense(1)])
            m.predict(np.ones((3 + i, 2)), verbose=0)
            m.predict(np.ones((40, 2)), verbose=0)
    finally:
        tf.get_logger().removeHandler(handler)
    name = "<function TensorFlowTrainer.make_predict_function.<locals>.one_step_on_data_distributed at 0x..>"
    assert [re.sub("0x[0-9a-f]+", "0x..", x).split(" triggered")[0] for x in msgs] == [
        f"5 out of the last 7 calls to {name}", f"6 out of the last 8 calls to {name}"]


def test_fit_on_a_dataset_warns_that_shuffle_is_ignored_and_rejects_y_as_keras3():
    """Keras 3's tf.data adapter (the overfit tutorial's fit on a dataset prints the warning).
    Recorded from TF 2.21 with warnings.simplefilter("always"): one warning over these calls."""
    import warnings
    m = tf.keras.Sequential([L.Dense(1)])
    m.compile("sgd", "mse")
    ds = tf.data.Dataset.from_tensor_slices((np.ones((4, 2), "float32"), np.ones((4, 1), "float32"))).batch(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.fit(ds, verbose=0)
        m.fit(ds, verbose=0, shuffle=False)
        m.evaluate(ds, verbose=0)
        m.predict(ds.map(lambda x, y: x), verbose=0)
    assert [(x.category.__name__, str(x.message)) for x in w] == [(
        "UserWarning", "`shuffle=True` was passed, but will be ignored since the data `x` was provided as a "
        "tf.data.Dataset. The Dataset is expected to already be shuffled (via `.shuffle(buffer_size)`).")]
    with pytest.raises(ValueError, match=r"^When providing `x` as a tf.data.Dataset, `y` should not be passed. "
                       r"Instead, the targets should be included as part of the tf.data.Dataset.$"):
        m.fit(ds, y=np.ones((4, 1)), verbose=0, shuffle=False)
    with pytest.raises(ValueError, match=r"^When providing `x` as a tf.data.Dataset, `sample_weights` should not "
                       r"be passed. Instead, the sample weights should be included as part of the tf.data.Dataset.$"):
        m.fit(ds, sample_weight=np.ones(4), verbose=0, shuffle=False)
    with pytest.raises(ValueError, match="`y` should not be passed"):
        m.evaluate(ds, y=np.ones((4, 1)), verbose=0)


def test_fit_on_datasets_iterates_as_keras3_epoch_iterator():
    """Keras 3's EpochIterator: with steps_per_epoch the dataset's iterator carries over to the
    next epoch (a shuffled, repeated dataset goes on with its stream: the overfitting tutorial);
    a dataset of unknown size that runs out warns 'Your input ran out of data' every pass (fit,
    its validation, evaluate, predict). Recorded from TF 2.21 with this code."""
    import warnings
    tf.keras.utils.set_random_seed(0)
    x = np.random.RandomState(0).randn(40, 3).astype("float32")
    y = x.sum(1, keepdims=True)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(40).batch(8)
    m = tf.keras.Sequential([L.Dense(1)])
    m.compile("sgd", "mse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(ds, epochs=4, verbose=0)
        ds2 = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(40).repeat().batch(8)
        m = tf.keras.Sequential([L.Dense(1)])
        m.compile("sgd", "mse")
        h = m.fit(ds2, epochs=4, steps_per_epoch=3, verbose=0)
    np.testing.assert_allclose(h.history["loss"], [9.83384, 8.19034, 5.94579, 6.47741], atol=2e-5)
    ds3 = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).unbatch().batch(8)   # size unknown
    m = tf.keras.Sequential([L.Dense(1)])
    m.compile("sgd", "mse")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        h = m.fit(ds3, epochs=3, verbose=0, validation_data=ds3)
        assert round(float(m.evaluate(ds3, verbose=0)), 5) == 2.39548
        assert m.predict(ds3.map(lambda a, b: a), verbose=0).shape == (40, 1)
    np.testing.assert_allclose(h.history["loss"], [4.61355, 3.58477, 2.80106], atol=2e-5)
    np.testing.assert_allclose(h.history["val_loss"], [3.91744, 3.05455, 2.39548], atol=2e-5)
    ran_out = [x for x in w if str(x.message).startswith("Your input ran out of data; interrupting training. "
                                                          "Make sure that your dataset or generator can generate "
                                                          "at least `steps_per_epoch * epochs` batches. You may "
                                                          "need to use the `.repeat()` function when building "
                                                          "your dataset.")]
    assert len(ran_out) == 8


def test_sequentials_inside_a_subclassed_model_build_on_an_unknown_batch_in_fit_as_keras3():
    # Recorded from TF 2.21 (autoencoder.ipynb's encoder/decoder): fit and evaluate call the model in
    # their traced step on the dataset's spec, so the Sequential models it calls (built there) show
    # None; a direct call or predict builds them on that batch.
    import contextlib
    import io
    L = tf.keras.layers

    class AE(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.encoder = tf.keras.Sequential([L.Flatten(), L.Dense(4, activation="relu")])
            self.decoder = tf.keras.Sequential([L.Dense(6), L.Reshape((2, 3))])

        def call(self, x):
            return self.decoder(self.encoder(x))

    def shapes(model):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            model.summary()
        return [line.split("│")[2].strip() for line in buf.getvalue().splitlines() if line.startswith("│")]

    x = np.random.RandomState(0).rand(10, 2, 3).astype("float32")
    expected = {"fit": (['(None, 6)', '(None, 4)'], ['(None, 6)', '(None, 2, 3)']),
                "evaluate": (['(None, 6)', '(None, 4)'], ['(None, 6)', '(None, 2, 3)']),
                "call": (['(3, 6)', '(3, 4)'], ['(3, 6)', '(3, 2, 3)']),
                "predict": (['(4, 6)', '(4, 4)'], ['(4, 6)', '(4, 2, 3)'])}
    for how, (enc, dec) in expected.items():
        m = AE()
        m.compile("adam", "mse")
        if how == "fit":
            m.fit(x, x, batch_size=4, epochs=1, verbose=0)
        elif how == "evaluate":
            m.evaluate(x, x, batch_size=4, verbose=0)
        elif how == "predict":
            m.predict(x, batch_size=4, verbose=0)
        else:
            m(x[:3])
        assert (shapes(m.encoder), shapes(m.decoder)) == (enc, dec), how


def test_a_model_built_by_fit_or_evaluate_shows_the_batch_size_of_the_data_spec_as_keras3():
    # Recorded from TF 2.21 (Keras 3.15): Keras's TF backend builds an unbuilt model in its traced
    # step, on the data's element spec, whose batch dimension is the batch size where every batch
    # is full (arrays whose length it divides, after validation_split; a dataset batched with
    # drop_remainder=True), else None; train_on_batch / test_on_batch build on the batch given.
    # generative/autoencoder.ipynb's decoder summary: (32, 14, 14, 8) after fit on 60000 images.
    L = tf.keras.layers

    def new():
        m = tf.keras.Sequential([L.Dense(3)])
        m.compile("adam", "mse")
        return m

    def arrays(n):
        return np.zeros((n, 5), "float32"), np.zeros((n, 3), "float32")

    cases = [("fit", 8, 4, {}, (4, 3)), ("fit", 10, 4, {}, (None, 3)), ("fit", 8, 4, {"shuffle": False}, (4, 3)),
             ("fit", 8, None, {}, (None, 3)), ("fit", 64, None, {}, (32, 3)),
             ("fit", 12, 4, {"validation_split": 0.25}, (None, 3)), ("fit", 8, 4, {"steps_per_epoch": 1}, (4, 3)),
             ("evaluate", 8, 4, {}, (4, 3)), ("evaluate", 10, 4, {}, (None, 3)),
             ("predict", 8, 4, {}, (4, 3)), ("predict", 10, 4, {}, (4, 3))]
    for how, n, bs, kw, expected in cases:
        m = new()
        x, y = arrays(n)
        if how == "predict":
            m.predict(x, batch_size=bs, verbose=0)
        else:
            getattr(m, how)(x, y, batch_size=bs, verbose=0, **kw)
        assert m.output_shape == expected, (how, n, bs, kw)
    for drop, expected in [(False, (None, 3)), (True, (4, 3))]:
        m = new()
        m.fit(tf.data.Dataset.from_tensor_slices(arrays(8)).batch(4, drop_remainder=drop), verbose=0)
        assert m.output_shape == expected, drop
    for how in ("train_on_batch", "test_on_batch"):
        m = new()
        getattr(m, how)(*arrays(5))
        assert m.output_shape == (5, 3), how

    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.seq = tf.keras.Sequential([L.Dense(3)])

        def call(self, x):
            return self.seq(x)
    for n, expected in [(8, (4, 3)), (10, (None, 3))]:
        m = Sub()
        m.compile("adam", "mse")
        m.fit(*arrays(n), batch_size=4, verbose=0)
        assert m.seq.output_shape == expected, n


def test_fit_and_evaluate_retrace_warnings_count_one_trace_per_compile_as_keras3():
    """Keras 3's fit/evaluate tf.function takes the data iterator (unknown batch size): it traces
    once per model, never for the last smaller batch, and fit and evaluate share one detector.
    distribute/keras tutorial cell 22 printed a spurious warning after three evaluations. Recorded
    from TF 2.21 with this script: nothing until the loop of new models, then two warnings."""
    import logging
    import re
    msgs = []

    class Handler(logging.Handler):
        def emit(self, record):
            msgs.append(record.getMessage())

    from tapejax._staging import function as _function
    from tapejax.keras import models as _models
    _function._detectors.pop(_models._multi_step_on_iterator.__code__, None)
    x = np.random.RandomState(0).rand(100, 4).astype("float32")
    y = np.random.RandomState(1).randint(0, 3, 100)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)

    def make():
        m = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(3)])
        m.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        return m

    handler = Handler()
    tf.get_logger().addHandler(handler)
    try:
        models = [make() for _ in range(3)]
        for m in models:
            m.evaluate(ds, verbose=0)
        for m in models:
            m.fit(ds, epochs=2, verbose=0)
        assert msgs == []
        for _ in range(8):     # a new model per fit: one trace each
            make().fit(x[:10], y[:10], verbose=0)
    finally:
        tf.get_logger().removeHandler(handler)
    name = "<function TensorFlowTrainer._make_function.<locals>.multi_step_on_iterator at 0x..>"
    assert [re.sub("0x[0-9a-f]+", "0x..", m).split(" triggered")[0] for m in msgs] == [
        f"5 out of the last 12 calls to {name}", f"6 out of the last 13 calls to {name}"]


def test_lists_of_python_numbers_are_no_data_type_as_keras3():
    """migration_debugging cell 12: ``model.fit([1, 2, 3], [0.0, 0.0, 1.0])``. TF 2.21's Keras
    raises ValueError('Unrecognized data type: x=... (of type ...)') naming x also when y is
    the list; tapejax failed with 'len() of unsized object'."""
    m = tf.keras.Sequential([tf.keras.Input((1,)), L.Dense(1)])
    m.compile("adam", "mse")
    with pytest.raises(ValueError, match=r"^Unrecognized data type: x=\[1, 2, 3\] \(of type <class 'list'>\)$"):
        m.fit([1, 2, 3], [0.0, 0.0, 1.0], verbose=0)
    with pytest.raises(ValueError, match=r"^Unrecognized data type: x=\[\[1\.\]\n \[1\.\]\] \(of type "
                                         r"<class 'numpy\.ndarray'>\)$"):
        m.fit(np.ones((2, 1)), [0.0, 1.0], verbose=0)
    for call in (lambda: m.evaluate([1, 2], [0.0, 1.0], verbose=0), lambda: m.predict([1, 2], verbose=0)):
        with pytest.raises(ValueError, match=r"^Unrecognized data type: x=\[1, 2\]"):
            call()


def test_a_functional_model_picks_dict_inputs_by_name_as_keras3():
    # Recorded from TF 2.21 (Keras 3.15): extra keys are left out (preprocessing_layers.ipynb feeds
    # its 'target' column with the features); a model of dict inputs warns, one of a list does not.
    import warnings
    L = tf.keras.layers
    a, b = tf.keras.Input((1,), name="a"), tf.keras.Input((1,), name="b")
    out = L.Dense(1, kernel_initializer="ones")(L.concatenate([a, b]))
    feed = {"a": tf.ones([2, 1]), "b": tf.ones([2, 1]) * 2, "c": tf.zeros([2, 1])}
    for model, expected in [(tf.keras.Model({"a": a, "b": b}, out),
                             ["The structure of `inputs` doesn't match the expected structure.\n"
                              "Expected: {'a': 'a', 'b': 'b'}\nReceived: inputs={'a': 'Tensor(shape=(2, 1))', "
                              "'b': 'Tensor(shape=(2, 1))', 'c': 'Tensor(shape=(2, 1))'}"]),
                            (tf.keras.Model([a, b], out), [])]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert model(feed).numpy().tolist() == [[3.0], [3.0]]
        assert [str(x.message) for x in w] == expected
    model = tf.keras.Model([a, b], out)
    model.compile("sgd", "mse")
    ds = tf.data.Dataset.from_tensor_slices(({"a": np.ones((4, 1)), "b": np.ones((4, 1)), "c": np.ones((4, 1))},
                                             np.ones((4, 1)))).batch(2)
    assert round(model.fit(ds, verbose=0).history["loss"][0], 4) == 0.9418
