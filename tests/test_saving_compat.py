"""Files written before the checkpoint package (tests/data/pre15, by commit c6a87f5's code: see
make.py there) load with today's code, and today's code writes the same keys for the same objects."""
import importlib.util
import pathlib
import shutil

import numpy as np
import pytest

import tapejax as tf

DATA = pathlib.Path(__file__).resolve().parent / "data" / "pre15"
_spec = importlib.util.spec_from_file_location("pre15_make", DATA / "make.py")
make = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make)   # Net and sequential(): the objects the files were written from


@pytest.fixture
def data(tmp_path):
    """A copy of the files (a restore never writes, but a test must not be able to change them)."""
    out = tmp_path / "pre15"
    shutil.copytree(DATA, out)
    return out


def test_a_checkpoint_restores_module_and_optimizer_slots(data):
    net, opt = make.Net(), tf.keras.optimizers.SGD(0.1, momentum=0.9)
    for v in net.variables:
        v.assign(tf.zeros_like(v))
    status = tf.train.Checkpoint(net=net, optimizer=opt).read(str(data / "ckpt"))
    w0 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_allclose(net.w.numpy(), 0.8 * w0)   # one SGD step on sum(w**2): w - 0.1 * 2w
    assert float(net.layers[0].numpy()) == 5.0 and net.layers[1]["b"].numpy().tolist() == [6, 7]
    opt.build([net.w])   # the momentum slot is created now and gets its deferred value
    status.assert_consumed()
    assert int(opt.iterations.numpy()) == 1
    np.testing.assert_allclose(opt._slot_vars[0].numpy(), 2 * w0, rtol=1e-6)   # the trace: the first gradient


def test_the_same_objects_are_written_under_the_same_keys(tmp_path):
    net, opt = make.Net(), tf.keras.optimizers.SGD(0.1, momentum=0.9)
    opt.build([net.w])
    path = tf.train.Checkpoint(net=net, optimizer=opt).write(str(tmp_path / "ckpt"))
    assert tf.train.list_variables(path) == tf.train.list_variables(str(DATA / "ckpt"))
    model, _ = make.sequential()
    model.save_weights(str(tmp_path / "weights"))
    # Compiled metrics' state is no longer written (Keras 3's weights files hold none); the old
    # files' metric entries are ignored when they load.
    # A Dense layer's kernel is saved as '_kernel' now, TF 2.21's key (Keras 3 keeps it in `_kernel`).
    old = sorted((k.replace("/kernel/", "/_kernel/"), shape) for k, shape in tf.train.list_variables(str(DATA / "weights"))
                 if not k.startswith("_k_metric_"))
    assert tf.train.list_variables(str(tmp_path / "weights")) == old


def test_save_weights_load_into_a_fresh_model(data):
    model, x = make.sequential()
    for v in model.variables:
        v.assign(tf.zeros_like(v))
    model.load_weights(str(data / "weights"))
    np.testing.assert_allclose(model.predict(x, verbose=0), np.load(data / "model_out.npy"), rtol=1e-6)


def test_model_save_loads_compiled_with_its_optimizer_state(data):
    loaded = tf.keras.models.load_model(str(data / "model"))
    x = make.sequential()[1]
    np.testing.assert_allclose(loaded.predict(x, verbose=0), np.load(data / "model_out.npy"), rtol=1e-6)
    assert type(loaded).__name__ == "Sequential" and loaded.optimizer is not None
    assert int(loaded.optimizer.iterations.numpy()) == 1
    served = tf.saved_model.load(str(data / "model"))
    np.testing.assert_allclose(served(tf.constant(x)).numpy(), np.load(data / "model_out.npy"), rtol=1e-6)


def test_a_functional_model_loads_as_its_saved_model(data):
    x = make.sequential()[1]
    loaded = tf.keras.models.load_model(str(data / "functional"))
    np.testing.assert_allclose(loaded(tf.constant(x)).numpy(), np.load(data / "functional_out.npy"), rtol=1e-6)
    out = loaded.signatures["serving_default"](features=tf.constant(x))
    np.testing.assert_allclose(list(out.values())[0].numpy(), np.load(data / "functional_out.npy"), rtol=1e-6)


def test_a_saved_model_of_a_module_loads(data):
    loaded = tf.saved_model.load(str(data / "module"))
    np.testing.assert_allclose(loaded(tf.constant([[1.0, 1.0]])).numpy(), [[4.0, 6.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(loaded(tf.constant([[1.0, 2.0]])))
    np.testing.assert_allclose(tape.gradient(y, loaded.w).numpy(), [[1.0, 1.0], [2.0, 2.0]])
