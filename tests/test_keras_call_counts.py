"""When Keras calls a layer's ``call`` (a ``print`` there shows each call), as Keras 3 under
TensorFlow 2.21 does: the expected lines were recorded with real TensorFlow."""
import numpy as np
import pytest

import tapejax as tf

LOG = []   # what the layers' calls saw (a module list: Keras tracks a list attribute as a copy)


class Printing(tf.keras.layers.Layer):
    def build(self, input_shape):
        LOG.append(("build", tuple(input_shape)))
        self.w = self.add_weight(shape=(input_shape[-1], 3), initializer="ones")

    def call(self, x, training=None):
        LOG.append(("call", training, tuple(x.shape)))
        return tf.matmul(x, self.w)


def _data(n=4):
    return np.ones((n, 3), "float32"), np.ones((n, 3), "float32")


def test_fit_traces_the_step_once_without_an_eager_call():
    # TF 2.21: fit's train function is traced once (training=True); no call before it.
    log = LOG
    log.clear()
    model = tf.keras.Sequential([tf.keras.Input((3,)), Printing()])
    log.clear()
    model.compile(loss="mse", optimizer="sgd")
    x, y = _data()
    model.fit(x, y, epochs=2, batch_size=2, verbose=0)
    assert log == [("call", True, (2, 3))]
    log.clear()
    model.train_on_batch(x, y)
    assert log == [("call", True, (4, 3))]


def test_fit_with_created_metric_and_optimizer_state_traces_twice():
    # TF 2.21: variables created in the first trace (Adam's slots, the metric's) trace it again.
    log = LOG
    log.clear()
    model = tf.keras.Sequential([tf.keras.Input((3,)), Printing()])
    log.clear()
    model.compile(loss="mse", optimizer="adam", metrics=["mae"])
    x, y = _data()
    history = model.fit(x, y, epochs=1, batch_size=2, verbose=0)
    assert log == [("call", True, (2, 3)), ("call", True, (2, 3))]
    assert sorted(history.history) == ["loss", "mae"]


def test_test_on_batch_is_evaluate_step():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    assert model.test_on_batch(x, y) == [1.0, 1.0]
    assert model.test_on_batch(x, y, return_dict=True) == {"loss": 1.0, "mae": 1.0}


class Shown(tf.keras.layers.Layer):
    def call(self, x, training=None):
        LOG.append((training, str(x)))
        return x * 2


def test_symbolic_call_runs_call_once_with_training_unset():
    # TF 2.21 (Keras 3): Sequential / functional models call `call` once, symbolically, without
    # `training`; print(x) shows the graph placeholder.
    log = LOG
    log.clear()
    tf.keras.Sequential([tf.keras.Input((3,)), Printing()])
    assert log == [("build", (None, 3)), ("call", None, (None, 3))]
    log = LOG
    log.clear()
    out = Printing()(tf.keras.Input((5,)))
    assert log == [("build", (None, 5)), ("call", None, (None, 5))]
    assert tuple(out.shape) == (None, 3)
    log = LOG
    log.clear()
    model = tf.keras.Sequential([Printing()])
    model.build((None, 3))
    assert log == [("build", (None, 3)), ("call", None, (None, 3))]
    shown = LOG
    shown.clear()
    tf.keras.Sequential([tf.keras.Input((3,)), Shown()])
    assert shown == [(None, 'Tensor("Placeholder:0", shape=(None, 3), dtype=float32)')]


class Outer(tf.keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = Printing()

    def call(self, x):
        LOG.append(("outer", tuple(x.shape)))
        return self.inner(x)


class NestingModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.inner = Printing()

    def call(self, x, training=None):
        LOG.append(("model", training, tuple(x.shape)))
        return self.inner(x)


def test_layer_without_build_holding_unbuilt_layers_runs_call_to_build_them():
    # TF 2.21 (Keras 3's _maybe_build): such a layer's call runs once more at its first call
    # (compute_output_spec, without the enclosing training value) so its layers build.
    log = LOG
    log.clear()
    tf.keras.Sequential([tf.keras.Input((3,)), Outer()])
    assert log == [("outer", (None, 3)), ("build", (None, 3)), ("call", None, (None, 3)),
                   ("outer", (None, 3)), ("call", None, (None, 3))]
    log = LOG
    log.clear()
    model = NestingModel()
    model(np.ones((4, 3), "float32"))
    assert log == [("model", None, (4, 3)), ("build", (4, 3)), ("call", None, (4, 3)),
                   ("model", None, (4, 3)), ("call", None, (4, 3))]
    log.clear()
    model(np.ones((4, 3), "float32"), training=True)
    assert log == [("model", True, (4, 3)), ("call", True, (4, 3))]



class RandomDense(tf.keras.layers.Layer):
    """The intro_to_modules guide's FlexibleDense: tf.Variables made in build."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = tf.Variable(tf.random.normal([input_shape[-1], self.units]), name="w")

    def call(self, x):
        return tf.matmul(x, self.w)


class TwoRandomDense(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.d1, self.d2 = RandomDense(3), RandomDense(2)

    def call(self, x):
        return self.d2(self.d1(x))


def test_build_run_leaves_variables_made_from_values_to_the_call():
    # TF 2.21: the build run cannot make these tf.Variables (a scratch graph); the eager call
    # does, with the random values of an eager build.
    tf.keras.utils.set_random_seed(42)
    out = TwoRandomDense()(tf.constant([[2.0, 2.0, 2.0]]))
    np.testing.assert_allclose(out.numpy(), [[-3.279767, 4.0577188]], rtol=1e-6)


def test_subclassed_model_build_calls_nothing_and_warns():
    # TF 2.21: Keras 3's default build marks the model built (a warning), no call runs, no weights.
    LOG.clear()
    model = NestingModel()
    with pytest.warns(UserWarning, match="does not have a `build\\(\\)` method implemented"):
        model.build((None, 3))
    assert LOG == [] and model.built and model.count_params() == 0
    model(np.ones((2, 3), "float32"))
    assert LOG == [("model", None, (2, 3)), ("build", (2, 3)), ("call", None, (2, 3))]
