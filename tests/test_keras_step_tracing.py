"""Where Keras's ``fit``/``evaluate``/``predict`` trace their step functions, and on what shapes:
Keras 3 on TensorFlow traces fit's and evaluate's tf.function on the data iterator's element
spec (the batch size ``None`` where the last batch is smaller, or a dataset's batch size is
unknown), with ``reduce_retracing=True``, and twice when its first trace creates Variables (an
unbuilt model, Adam's slots, compiled metrics); predict's on each batch. A ``print`` in a
``train_step`` or a layer's ``call`` shows each trace.

The expected output of every case was recorded from TensorFlow 2.21 (Keras 3, CPU) running the
same code with ``import tensorflow as tf``."""
import warnings

import numpy as np
import pytest

import tapejax as tf


class M(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.d = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.d(x)

    def train_step(self, data):
        x, y = data[0], data[1]
        print("  train", x.shape, y.shape)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x) - y))
        g = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(g, self.trainable_variables))
        return {"loss": loss}

    def test_step(self, data):
        x, y = data[0], data[1]
        print("  test", x.shape, y.shape)
        return {"loss": tf.reduce_mean(tf.square(self(x) - y))}

    def predict_step(self, data):
        x = data[0] if isinstance(data, (tuple, list)) else data
        print("  predict", x.shape)
        return self(x)


class P(tf.keras.layers.Layer):
    def call(self, x):
        print("  call", x.shape)
        return x


x = np.ones((10, 3), np.float32)
y = np.ones((10, 1), np.float32)
xv = np.ones((6, 3), np.float32)
yv = np.ones((6, 1), np.float32)


def ds(bs, drop=False):
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(bs, drop_remainder=drop)


CASES = {}


def case(f):
    CASES[f.__name__] = f
    return f


@case
def sub4():
    """A subclassed model with its own train_step, batches of 4 of 10 examples (the last smaller):
    traced on (None, 3), twice (its Dense builds in the first trace); later fits of other
    batch sizes, datasets included, fit that trace."""
    m = M()
    m.compile(optimizer="sgd")
    print(" fit bs4 e2")
    m.fit(x, y, batch_size=4, epochs=2, verbose=0)
    print(" fit bs4 again")
    m.fit(x, y, batch_size=4, epochs=1, verbose=0)
    print(" fit bs5")
    m.fit(x, y, batch_size=5, epochs=1, verbose=0)
    print(" fit bs2")
    m.fit(x, y, batch_size=2, epochs=1, verbose=0)
    print(" fit ds4")
    m.fit(ds(4), epochs=1, verbose=0)
    print(" fit ds4 drop")
    m.fit(ds(4, True), epochs=1, verbose=0)


@case
def sub5():
    """Batches of 5 of 10 (all full): traced on (5, 3); a second batch size is traced once with
    the batch size unknown (reduce_retracing), which serves every later size."""
    m = M()
    m.compile(optimizer="sgd")
    print(" fit bs5 e2")
    m.fit(x, y, batch_size=5, epochs=2, verbose=0)
    print(" fit bs5 again")
    m.fit(x, y, batch_size=5, epochs=1, verbose=0)
    print(" fit bs2")
    m.fit(x, y, batch_size=2, epochs=1, verbose=0)
    print(" fit bs10")
    m.fit(x, y, batch_size=10, epochs=1, verbose=0)
    print(" fit ds4")
    m.fit(ds(4), epochs=1, verbose=0)
    print(" fit bs4")
    m.fit(x, y, batch_size=4, epochs=1, verbose=0)


@case
def subds():
    """Datasets: batched with drop_remainder=True, the batch size is known; without, unknown."""
    m = M()
    m.compile(optimizer="sgd")
    print(" fit ds4 drop")
    m.fit(ds(4, True), epochs=2, verbose=0)
    print(" fit ds4")
    m.fit(ds(4), epochs=1, verbose=0)
    print(" fit ds5")
    m.fit(ds(5), epochs=1, verbose=0)


@case
def subbuilt():
    """A model built before fit, with an optimizer without slots: nothing is created in the
    trace, so it is traced once."""
    m = M()
    m(x[:2])
    m.compile(optimizer="sgd")
    print(" fit bs4")
    m.fit(x, y, batch_size=4, epochs=1, verbose=0)
    m2 = M()
    m2(x[:2])
    opt = tf.keras.optimizers.SGD()
    opt.build(m2.trainable_variables)
    m2.compile(optimizer=opt)
    print(" built+opt fit bs4")
    m2.fit(x, y, batch_size=4, epochs=1, verbose=0)


@case
def subval():
    """validation_data, evaluate and predict: evaluate's step is traced on its data's spec as
    fit's is
    predict's on each batch's shapes (Keras 3 calls it with the batches), a second
    size with the batch size unknown."""
    m = M()
    m.compile(optimizer="sgd")
    print(" fit bs4 val")
    m.fit(x, y, batch_size=4, epochs=2, verbose=0, validation_data=(xv, yv))
    print(" fit bs5 val")
    m.fit(x, y, batch_size=5, epochs=1, verbose=0, validation_data=(xv, yv))
    print(" fit bs5 valbs3")
    m.fit(x, y, batch_size=5, epochs=1, verbose=0, validation_data=(xv, yv), validation_batch_size=3)
    print(" fit val ds")
    m.fit(ds(4), epochs=1, verbose=0, validation_data=ds(5))
    print(" evaluate bs4")
    m.evaluate(x, y, batch_size=4, verbose=0)
    print(" evaluate bs5")
    m.evaluate(x, y, batch_size=5, verbose=0)
    print(" evaluate ds drop")
    m.evaluate(ds(4, True), verbose=0)
    print(" predict bs4")
    m.predict(x, batch_size=4, verbose=0)
    print(" predict bs4 again")
    m.predict(x, batch_size=4, verbose=0)
    print(" predict bs5")
    m.predict(x, batch_size=5, verbose=0)
    print(" predict bs3")
    m.predict(x, batch_size=3, verbose=0)


@case
def subeval():
    """evaluate and predict of an unbuilt model build it in their first trace (traced twice)."""
    m = M()
    m.compile(optimizer="sgd")
    print(" evaluate bs4 unbuilt")
    m.evaluate(x, y, batch_size=4, verbose=0)
    print(" evaluate bs4 again")
    m.evaluate(x, y, batch_size=4, verbose=0)
    m = M()
    m.compile(optimizer="sgd")
    print(" predict bs5 unbuilt")
    m.predict(x, batch_size=5, verbose=0)
    print(" predict bs5 again")
    m.predict(x, batch_size=5, verbose=0)
    print(" predict ds4")
    m.predict(tf.data.Dataset.from_tensor_slices(x).batch(4), verbose=0)


@case
def steps():
    """steps_per_epoch: the spec is the data's, whatever number of batches is taken."""
    m = M()
    m.compile(optimizer="sgd")
    print(" fit bs4 steps2 e2")
    m.fit(x, y, batch_size=4, steps_per_epoch=2, epochs=2, verbose=0)
    m = M()
    m.compile(optimizer="sgd")
    print(" fit bs5 steps1 e2")
    m.fit(x, y, batch_size=5, steps_per_epoch=1, epochs=2, verbose=0)
    m = M()
    m.compile(optimizer="sgd")
    print(" fit ds4.repeat steps3 e2")
    m.fit(ds(4).repeat(), steps_per_epoch=3, epochs=2, verbose=0)


@case
def seq():
    """A Sequential model with the default steps (a layer printing its input's shape)."""
    m = tf.keras.Sequential([tf.keras.Input((3,)), P(), tf.keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse")
    print(" fit bs4 e2")
    m.fit(x, y, batch_size=4, epochs=2, verbose=0)
    print(" fit bs4 again")
    m.fit(x, y, batch_size=4, epochs=1, verbose=0)
    print(" evaluate bs4")
    m.evaluate(x, y, batch_size=4, verbose=0)
    print(" predict bs4")
    m.predict(x, batch_size=4, verbose=0)
    print(" fit bs5")
    m.fit(x, y, batch_size=5, epochs=1, verbose=0)


@case
def seqmetrics():
    """Compiled metrics are built in the first trace (traced twice); validation traced once."""
    m = tf.keras.Sequential([tf.keras.Input((3,)), P(), tf.keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    print(" fit bs5 e2 val")
    m.fit(x, y, batch_size=5, epochs=2, verbose=0, validation_data=(xv, yv))


@case
def sequnbuilt():
    """A Sequential model without an input shape: built on the spec (the first line), in the
    first trace, which is then traced again."""
    m = tf.keras.Sequential([P(), tf.keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse")
    print(" fit bs4 e2")
    m.fit(x, y, batch_size=4, epochs=2, verbose=0)
    print(" predict bs5")
    m.predict(x, batch_size=5, verbose=0)


@case
def func():
    """A functional model with Adam: its slots are created in the first trace (traced twice)."""
    i = tf.keras.Input((3,))
    o = tf.keras.layers.Dense(1)(P()(i))
    m = tf.keras.Model(i, o)
    m.compile(optimizer="adam", loss="mse")
    print(" fit bs5 e2")
    m.fit(x, y, batch_size=5, epochs=2, verbose=0)
    print(" fit ds4")
    m.fit(ds(4), epochs=1, verbose=0)
    print(" evaluate ds4")
    m.evaluate(ds(4), verbose=0)
    print(" predict ds4")
    m.predict(tf.data.Dataset.from_tensor_slices(x).batch(4), verbose=0)


@case
def onbatch():
    """train_on_batch / test_on_batch / predict_on_batch: typed by the batch's own shapes; Keras
    3 passes (x, y, sample_weight), so fit's (x, y) data is traced again."""
    m = M()
    m.compile(optimizer="sgd")
    print(" train_on_batch 4")
    m.train_on_batch(x[:4], y[:4])
    print(" train_on_batch 4")
    m.train_on_batch(x[:4], y[:4])
    print(" train_on_batch 2")
    m.train_on_batch(x[:2], y[:2])
    print(" train_on_batch 3")
    m.train_on_batch(x[:3], y[:3])
    print(" test_on_batch 3")
    m.test_on_batch(x[:3], y[:3])
    print(" predict_on_batch 3")
    m.predict_on_batch(x[:3])
    print(" fit bs4")
    m.fit(x, y, batch_size=4, epochs=1, verbose=0)


@case
def multi():
    """Several inputs (a list, a dict): their batch dimension is one unknown dimension."""
    a = tf.keras.Input((3,), name="a")
    b = tf.keras.Input((2,), name="b")
    o = tf.keras.layers.Dense(1)(P()(tf.keras.layers.Concatenate()([a, b])))
    m = tf.keras.Model([a, b], o)
    m.compile(optimizer="adam", loss="mse")
    x2 = np.ones((10, 2), np.float32)
    print(" fit [x, x2] bs4")
    m.fit([x, x2], y, batch_size=4, epochs=2, verbose=0)
    print(" fit dict bs4")
    m.fit({"a": x, "b": x2}, y, batch_size=4, epochs=1, verbose=0)
    print(" predict [x, x2] bs4")
    p = m.predict([x, x2], batch_size=4, verbose=0)
    print(" ", p.shape)


@case
def sw():
    """Sample weights and validation_split."""
    m = tf.keras.Sequential([tf.keras.Input((3,)), P(), tf.keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse", weighted_metrics=["mae"])
    sw = np.arange(10, dtype=np.float32)
    print(" fit sw bs4")
    m.fit(x, y, sample_weight=sw, batch_size=4, epochs=1, verbose=0)
    print(" fit sw bs5")
    m.fit(x, y, sample_weight=sw, batch_size=5, epochs=1, verbose=0)
    print(" fit val split 0.3 bs4")
    m.fit(x, y, validation_split=0.3, batch_size=4, epochs=1, verbose=0)
    print(" evaluate sw bs3")
    m.evaluate(x, y, sample_weight=sw, batch_size=3, verbose=0)


# Recorded from TensorFlow 2.21 (Keras 3): the same cases with `import tensorflow as tf`.
EXPECTED = {
    "sub4": """\
 fit bs4 e2
  train (None, 3) (None, 1)
  train (None, 3) (None, 1)
 fit bs4 again
 fit bs5
 fit bs2
 fit ds4
 fit ds4 drop
""",
    "sub5": """\
 fit bs5 e2
  train (5, 3) (5, 1)
  train (5, 3) (5, 1)
 fit bs5 again
 fit bs2
  train (None, 3) (None, 1)
 fit bs10
 fit ds4
 fit bs4
""",
    "subds": """\
 fit ds4 drop
  train (4, 3) (4, 1)
  train (4, 3) (4, 1)
 fit ds4
  train (None, 3) (None, 1)
 fit ds5
""",
    "subbuilt": """\
 fit bs4
  train (None, 3) (None, 1)
 built+opt fit bs4
  train (None, 3) (None, 1)
""",
    "subval": """\
 fit bs4 val
  train (None, 3) (None, 1)
  train (None, 3) (None, 1)
  test (None, 3) (None, 1)
 fit bs5 val
 fit bs5 valbs3
 fit val ds
 evaluate bs4
 evaluate bs5
 evaluate ds drop
 predict bs4
  predict (4, 3)
  predict (None, 3)
 predict bs4 again
 predict bs5
 predict bs3
""",
    "subeval": """\
 evaluate bs4 unbuilt
  test (None, 3) (None, 1)
  test (None, 3) (None, 1)
 evaluate bs4 again
 predict bs5 unbuilt
  predict (5, 3)
  predict (5, 3)
 predict bs5 again
 predict ds4
  predict (None, 3)
""",
    "steps": """\
 fit bs4 steps2 e2
  train (None, 3) (None, 1)
  train (None, 3) (None, 1)
 fit bs5 steps1 e2
  train (5, 3) (5, 1)
  train (5, 3) (5, 1)
 fit ds4.repeat steps3 e2
  train (None, 3) (None, 1)
  train (None, 3) (None, 1)
""",
    "seq": """\
  call (None, 3)
 fit bs4 e2
  call (None, 3)
 fit bs4 again
 evaluate bs4
  call (None, 3)
 predict bs4
  call (4, 3)
  call (None, 3)
 fit bs5
""",
    "seqmetrics": """\
  call (None, 3)
 fit bs5 e2 val
  call (5, 3)
  call (5, 3)
  call (None, 3)
""",
    "sequnbuilt": """\
 fit bs4 e2
  call (None, 3)
  call (None, 3)
  call (None, 3)
 predict bs5
  call (5, 3)
""",
    "func": """\
  call (None, 3)
 fit bs5 e2
  call (5, 3)
  call (5, 3)
 fit ds4
  call (None, 3)
 evaluate ds4
  call (None, 3)
 predict ds4
  call (4, 3)
  call (None, 3)
""",
    "onbatch": """\
 train_on_batch 4
  train (4, 3) (4, 1)
  train (4, 3) (4, 1)
 train_on_batch 4
 train_on_batch 2
  train (None, 3) (None, 1)
 train_on_batch 3
 test_on_batch 3
  test (3, 3) (3, 1)
 predict_on_batch 3
  predict (3, 3)
 fit bs4
  train (None, 3) (None, 1)
""",
    "multi": """\
  call (None, 5)
 fit [x, x2] bs4
  call (None, 5)
  call (None, 5)
 fit dict bs4
  call (None, 5)
 predict [x, x2] bs4
  call (4, 5)
  call (None, 5)
  (10, 1)
""",
    "sw": """\
  call (None, 3)
 fit sw bs4
  call (None, 3)
  call (None, 3)
 fit sw bs5
 fit val split 0.3 bs4
  call (None, 3)
  call (None, 3)
 evaluate sw bs3
  call (None, 3)
""",
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_traces_as_tensorflow(name, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CASES[name]()
    assert capsys.readouterr().out == EXPECTED[name]
