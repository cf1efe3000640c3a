"""tf.summary and the Keras logging callbacks; TensorBoard's own reader reads the event files back."""
import glob
import io
import json
import os

import numpy as np
import pytest

import tapejax as tf

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
from tensorboard.util import tensor_util  # noqa: E402


def _read(logdir):
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    acc.Reload()
    return acc


def _values(acc, tag):
    return [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]


def _scalars(acc, tag):
    return [(s, float(v)) for s, v in _values(acc, tag)]


def test_scalar_histogram_text_image_are_read_back(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    data = np.random.RandomState(0).randn(200).astype(np.float32)
    with writer.as_default():
        for step in range(3):
            assert tf.summary.scalar("loss", 1.0 / (step + 1), step=step) is True
        tf.summary.histogram("weights", tf.constant(data), step=0, buckets=10)
        tf.summary.text("note", "hello", step=0)
        tf.summary.image("img", np.full([2, 4, 5, 3], 0.5, np.float32), step=0, max_outputs=1)
    assert glob.glob(str(tmp_path / "events.out.tfevents.*.v2"))
    acc = _read(tmp_path)
    assert _scalars(acc, "loss") == [(0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3))]
    (_, hist), = _values(acc, "weights")
    assert hist.shape == (10, 3) and hist[:, 2].sum() == 200
    assert hist[0, 0] == pytest.approx(data.min()) and hist[-1, 1] == pytest.approx(data.max())
    assert _values(acc, "note")[0][1] == b"hello"
    (_, img), = _values(acc, "img")
    assert list(img[:2]) == [b"5", b"4"] and len(img) == 3 and img[2].startswith(b"\x89PNG")
    from PIL import Image  # matplotlib (a test dependency) brings Pillow
    pixels = np.asarray(Image.open(io.BytesIO(img[2])))
    assert pixels.shape == (4, 5, 3) and (pixels == 128).all()
    metadata = acc.SummaryMetadata("loss")
    assert metadata.plugin_data.plugin_name == "scalars"


def test_no_writer_step_and_record_if(tmp_path):
    assert tf.summary.scalar("x", 1.0, step=0) is False   # no default writer
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("x", 1.0)
        tf.summary.experimental.set_step(5)
        assert tf.summary.experimental.get_step() == 5
        tf.summary.scalar("x", 2.0)
        with tf.summary.record_if(False):
            assert tf.summary.scalar("x", 3.0, step=6) is False
        with tf.summary.record_if(lambda: True):
            tf.summary.scalar("x", 4.0, step=7)
    tf.summary.experimental.set_step(None)
    with tf.summary.create_noop_writer().as_default():
        assert tf.summary.scalar("x", 1.0, step=0) is False
    assert _scalars(_read(tmp_path), "x") == [(5, 2.0), (7, 4.0)]


def test_summaries_inside_tf_function_are_written_when_it_runs(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    step = tf.Variable(0)

    @tf.function
    def train_step(x):
        with writer.as_default(), tf.summary.record_if(step % 2 == 0):
            tf.summary.scalar("sum", tf.reduce_sum(x), step=step)
            tf.summary.histogram("x", x, step=step)
        step.assign_add(1)
        return x * 2.0

    for i in range(4):
        train_step(tf.constant([float(i), 1.0]))
    writer.flush()
    acc = _read(tmp_path)
    # Traced once, written at every run whose step is even, with that run's values.
    assert train_step.experimental_get_tracing_count() == 1
    assert _scalars(acc, "sum") == [(0, 1.0), (2, 3.0)]
    assert [s for s, _ in _values(acc, "x")] == [0, 2]


def test_missing_tensorboard_names_the_install(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_tensorboard(name, *args, **kwargs):
        if name.startswith("tensorboard"):
            raise ImportError("No module named 'tensorboard'")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    with pytest.raises(ImportError, match=r"pip install tapejax\[tensorboard\]"):
        tf.summary.create_file_writer("unused")
    with pytest.raises(ImportError, match=r"pip install tapejax\[tensorboard\]"):
        tf.keras.callbacks.TensorBoard("unused")


X, Y = np.ones((8, 2), np.float32), np.ones((8, 1), np.float32)


def _model():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    return model


def test_tensorboard_callback_writes_keras_tags(tmp_path):
    model = _model()
    cb = tf.keras.callbacks.TensorBoard(str(tmp_path), update_freq=2, histogram_freq=1)
    hist = model.fit(X, Y, batch_size=2, epochs=2, verbose=0, validation_data=(X, Y), callbacks=[cb])
    train, val = _read(tmp_path / "train"), _read(tmp_path / "validation")
    for name in ("loss", "mae"):
        assert _scalars(train, "epoch_" + name) == [(e, pytest.approx(v)) for e, v in enumerate(hist.history[name])]
        assert _scalars(val, "epoch_" + name) == [(e, pytest.approx(v))
                                                   for e, v in enumerate(hist.history["val_" + name])]
    assert _scalars(train, "epoch_learning_rate") == [(0, pytest.approx(0.1)), (1, pytest.approx(0.1))]
    # 4 batches an epoch, update_freq=2: batch scalars at global batches 2, 4, 6, 8.
    assert [s for s, _ in _scalars(train, "batch_loss")] == [2, 4, 6, 8]
    kernel = [t for t in train.Tags()["tensors"] if t.endswith("/kernel/histogram")]   # Keras 3: by path
    assert len(kernel) == 1 and [s for s, _ in _values(train, kernel[0])] == [0, 1]
    model.evaluate(X, Y, verbose=0, callbacks=[cb])
    assert [s for s, _ in _scalars(_read(tmp_path / "validation"), "evaluation_loss_vs_iterations")] == [8]


def test_csv_logger_matches_keras(tmp_path):
    path = str(tmp_path / "log.csv")
    model = _model()
    model.fit(X, Y, batch_size=4, epochs=3, verbose=0, validation_data=(X, Y), validation_freq=2,
              callbacks=[tf.keras.callbacks.CSVLogger(path)])
    model.fit(X, Y, batch_size=4, epochs=1, verbose=0, callbacks=[tf.keras.callbacks.CSVLogger(path, ";", True)])
    # Keras 3.15.1 wrote, for the same calls:
    keras = ("epoch,loss,mae,val_loss,val_mae\n0,0.5799999833106995,0.699999988079071,NA,NA\n"
             "1,0.014847995713353157,0.1119999885559082,0.0006553577841259539,0.025599956512451172\n"
             "2,0.00038010787102393806,0.017919987440109253,NA,NA\n0;9.73059195530368e-06;0.0028671622276306152;NA;NA\n")
    got = open(path).read().splitlines()
    want = keras.splitlines()
    assert len(got) == len(want) and got[0] == want[0]
    for g, w in zip(got[1:], want[1:]):
        sep = ";" if ";" in w else ","
        g, w = g.split(sep), w.split(sep)
        assert [x == "NA" for x in g] == [x == "NA" for x in w] and g[0] == w[0]
        np.testing.assert_allclose([float(x) for x in g[1:] if x != "NA"], [float(x) for x in w[1:] if x != "NA"],
                                   rtol=1e-6)


class _Interrupt(tf.keras.callbacks.Callback):
    def __init__(self, at):
        super().__init__()
        self.at = at

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.at:
            raise RuntimeError("interrupted")


def test_backup_and_restore_resumes_the_interrupted_epoch(tmp_path):
    backup = str(tmp_path / "backup")
    model = _model()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.1), loss="mse")
    with pytest.raises(RuntimeError, match="interrupted"):
        model.fit(X, Y, epochs=5, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(backup), _Interrupt(3)])
    assert json.load(open(os.path.join(backup, "latest", "training_metadata.json")))["epoch"] == 3
    saved = [w.copy() for w in model.get_weights()]

    # A fresh process: a new model, built, whose weights and optimizer come back from the backup.
    resumed = _model()
    resumed.compile(optimizer=tf.keras.optimizers.Adam(0.1), loss="mse")
    seen = []
    probe = tf.keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: seen.append([w.copy() for w in resumed.get_weights()]))
    hist = resumed.fit(X, Y, epochs=5, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(backup), probe])
    assert hist.epoch == [3, 4]
    for a, b in zip(seen[0], saved):
        np.testing.assert_array_equal(a, b)
    assert int(resumed.optimizer.iterations.numpy()) == 5   # the restored Adam step count continued
    assert not os.path.exists(backup)   # deleted once training completed


def test_backup_every_n_batches_and_double_checkpoint(tmp_path):
    backup = str(tmp_path / "b")
    cb = tf.keras.callbacks.BackupAndRestore(backup, save_freq=3, double_checkpoint=True, delete_checkpoint=False)
    _model().fit(X, Y, batch_size=2, epochs=2, verbose=0, callbacks=[cb])
    assert json.load(open(os.path.join(backup, "latest", "training_metadata.json"))) == {"epoch": 1, "batch": 1}
    assert os.path.exists(os.path.join(backup, "latest.bkp", "training_metadata.json"))
    with pytest.raises(ValueError, match="save_freq"):
        tf.keras.callbacks.BackupAndRestore(backup, save_freq="never")
