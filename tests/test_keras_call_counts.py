"""When Keras calls a layer's ``call`` (a ``print`` there shows each call), as Keras 3 under
TensorFlow 2.21 does: the expected lines were recorded with real TensorFlow."""
import numpy as np

import tapejax as tf


class _Printing(tf.keras.layers.Layer):
    def __init__(self, log, **kwargs):
        super().__init__(**kwargs)
        self.log = log

    def build(self, input_shape):
        self.log.append(("build", tuple(input_shape)))
        self.w = self.add_weight(shape=(input_shape[-1], 3), initializer="ones")

    def call(self, x, training=None):
        self.log.append(("call", training, tuple(x.shape)))
        return tf.matmul(x, self.w)


def _data(n=4):
    return np.ones((n, 3), "float32"), np.ones((n, 3), "float32")


def test_fit_traces_the_step_once_without_an_eager_call():
    # TF 2.21: fit's train function is traced once (training=True); no call before it.
    log = []
    model = tf.keras.Sequential([tf.keras.Input((3,)), _Printing(log)])
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
    log = []
    model = tf.keras.Sequential([tf.keras.Input((3,)), _Printing(log)])
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

