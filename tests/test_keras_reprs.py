"""Keras 3's reprs of optimizers, callbacks, initializers, regularizers and metrics.

Expected strings recorded from TF 2.21 (Keras 3.15) with the same calls; addresses
replaced by ``0x..``."""
import re

import numpy as np

import tapejax as tf


def _r(obj):
    return re.sub(r"0x[0-9a-f]+", "0x..", repr(obj))


class MyCB(tf.keras.callbacks.Callback):
    pass


class Adam(tf.keras.optimizers.Adam):
    pass


TF21 = [
    (lambda: tf.keras.optimizers.Adam(), "<keras.src.optimizers.adam.Adam object at 0x..>"),
    (lambda: tf.keras.optimizers.SGD(0.1), "<keras.src.optimizers.sgd.SGD object at 0x..>"),
    (lambda: tf.keras.optimizers.get("rmsprop"), "<keras.src.optimizers.rmsprop.RMSprop object at 0x..>"),
    (lambda: tf.keras.metrics.Mean(), "<Mean name=mean>"),
    (lambda: tf.keras.metrics.Mean(name="train_loss"), "<Mean name=train_loss>"),
    (lambda: tf.keras.metrics.SparseCategoricalAccuracy(), "<SparseCategoricalAccuracy name=sparse_categorical_accuracy>"),
    (lambda: tf.keras.metrics.Accuracy(name="acc"), "<Accuracy name=acc>"),
    (lambda: tf.keras.callbacks.History(), "<keras.src.callbacks.history.History object at 0x..>"),
    (lambda: tf.keras.callbacks.EarlyStopping(), "<keras.src.callbacks.early_stopping.EarlyStopping object at 0x..>"),
    (lambda: tf.keras.callbacks.ModelCheckpoint("x.keras"),
     "<keras.src.callbacks.model_checkpoint.ModelCheckpoint object at 0x..>"),
    (lambda: tf.keras.initializers.GlorotUniform(),
     "<keras.src.initializers.random_initializers.GlorotUniform object at 0x..>"),
    (lambda: tf.keras.initializers.get("glorot_uniform"),
     "<keras.src.initializers.random_initializers.GlorotUniform object at 0x..>"),
    (lambda: tf.keras.regularizers.L2(0.1), "<keras.src.regularizers.regularizers.L2 object at 0x..>"),
    (lambda: tf.keras.regularizers.l2(0.1), "<keras.src.regularizers.regularizers.L2 object at 0x..>"),
    (lambda: MyCB(), "<test_keras_reprs.MyCB object at 0x..>"),        # TF: <__main__.MyCB ...> from a script
    (lambda: Adam(), "<test_keras_reprs.Adam object at 0x..>"),
]


def test_reprs_are_keras3s():
    assert [_r(make()) for make, _ in TF21] == [want for _, want in TF21]


def test_fit_returns_a_history_shown_as_keras3s_in_ipython():
    """A notebook cell ending in model.fit(...) shows IPython's form of the default repr."""
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(np.ones((2, 1), "float32"), np.ones((2, 1), "float32"), verbose=0)

    class Printer:
        def text(self, s):
            self.out = s
    p = Printer()
    history._repr_pretty_(p, False)
    assert re.sub(r"0x[0-9a-f]+", "0x..", p.out) == "<keras.src.callbacks.history.History at 0x..>"


class MyLoss(tf.keras.losses.Loss):
    def call(self, y_true, y_pred):
        return y_pred


def test_loss_reprs_are_keras3s():
    """Keras 3's built-in losses are LossFunctionWrappers of their function and arguments; a Loss
    subclass has Python's default repr. Recorded from TF 2.21 (script: <__main__.MyLoss ...>)."""
    L = tf.keras.losses
    objs = [L.SparseCategoricalCrossentropy(from_logits=True), L.MeanSquaredError(),
            L.BinaryCrossentropy(label_smoothing=0.1), L.CategoricalCrossentropy(), L.Huber(), L.CosineSimilarity(axis=1),
            L.MeanAbsoluteError(), L.KLDivergence(), L.LogCosh(), L.Poisson(), L.Hinge(), L.SquaredHinge(),
            L.MeanSquaredLogarithmicError(), L.MeanAbsolutePercentageError(), MyLoss(),
            L.get("sparse_categorical_crossentropy")]
    want = [
        "<LossFunctionWrapper(<function sparse_categorical_crossentropy at 0x..>, kwargs={'from_logits': True, 'ignore_class': None, 'axis': -1})>",
        '<LossFunctionWrapper(<function mean_squared_error at 0x..>, kwargs={})>',
        "<LossFunctionWrapper(<function binary_crossentropy at 0x..>, kwargs={'from_logits': False, 'label_smoothing': 0.1, 'axis': -1})>",
        "<LossFunctionWrapper(<function categorical_crossentropy at 0x..>, kwargs={'from_logits': False, 'label_smoothing': 0.0, 'axis': -1})>",
        "<LossFunctionWrapper(<function huber at 0x..>, kwargs={'delta': 1.0})>",
        "<LossFunctionWrapper(<function cosine_similarity at 0x..>, kwargs={'axis': 1})>",
        '<LossFunctionWrapper(<function mean_absolute_error at 0x..>, kwargs={})>',
        '<LossFunctionWrapper(<function kl_divergence at 0x..>, kwargs={})>',
        '<LossFunctionWrapper(<function log_cosh at 0x..>, kwargs={})>',
        '<LossFunctionWrapper(<function poisson at 0x..>, kwargs={})>',
        '<LossFunctionWrapper(<function hinge at 0x..>, kwargs={})>',
        '<LossFunctionWrapper(<function squared_hinge at 0x..>, kwargs={})>',
        '<LossFunctionWrapper(<function mean_squared_logarithmic_error at 0x..>, kwargs={})>',
        '<LossFunctionWrapper(<function mean_absolute_percentage_error at 0x..>, kwargs={})>',
        '<test_keras_reprs.MyLoss object at 0x..>',
        '<function sparse_categorical_crossentropy at 0x..>',
    ]
    assert [_r(o) for o in objs] == want
