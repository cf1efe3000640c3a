"""tf.train.Checkpoint / CheckpointManager: object paths, exact resume, atomic saves, bad input."""
import os

import numpy as np
import pytest

import tapejax as tf
from tapejax import train
from tapejax.checkpoint import checkpoint as _checkpoint, manager as _manager, reader as _reader, tracking
from tapejax.keras import optimizers


class Net(tf.Module):
    def __init__(self, n_in=3, n_out=2, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w = tf.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32), name="w")
        self.b = tf.Variable(np.zeros(n_out, np.float32), name="b")

    def __call__(self, x):
        return tf.tanh(x @ self.w + self.b)


_X = np.random.default_rng(1).normal(size=(8, 3)).astype(np.float32)
_Y = np.random.default_rng(2).normal(size=(8, 2)).astype(np.float32)


def _step(net, opt):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((net(tf.constant(_X)) - _Y) ** 2)
    grads = tape.gradient(loss, [net.w, net.b])
    opt.apply_gradients(zip(grads, [net.w, net.b]))
    return loss.numpy()


def _state(net, opt):
    return [v.numpy().copy() for v in (net.w, net.b)] + [np.asarray(v.numpy()).copy() for v in opt.variables]


def _assert_bitwise(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_paths_follow_attributes_lists_dicts_and_nested_checkpoints():
    net = Net()
    net.blocks = [tf.Variable(1.0), {"z": tf.Variable(2.0), "a": tf.Variable(3.0)}]
    inner = train.Checkpoint(step=tf.Variable(5))
    ckpt = train.Checkpoint(model=net, extra=inner, alias=net.w)
    paths = list(tracking.Graph(ckpt).variables)
    # Breadth first: net.w is stored once, under its shortest path ('alias').
    assert paths == ["alias", "extra/step", "model/b", "model/blocks/0", "model/blocks/1/a", "model/blocks/1/z"]


def test_resume_is_bitwise_identical_including_optimizer_slots(tmp_path):
    net, opt = Net(), optimizers.Adam(0.05)
    for _ in range(3):
        _step(net, opt)
    ckpt = train.Checkpoint(model=net, optimizer=opt)
    path = ckpt.save(str(tmp_path / "ckpt"))
    losses = [_step(net, opt) for _ in range(4)]
    final = _state(net, opt)

    # Same objects, rewound.
    ckpt.restore(path).assert_consumed()
    assert [_step(net, opt) for _ in range(4)] == losses
    _assert_bitwise(_state(net, opt), final)


def test_resume_into_fresh_objects_defers_optimizer_slots(tmp_path):
    net, opt = Net(), optimizers.Adam(0.05)
    for _ in range(3):
        _step(net, opt)
    path = train.Checkpoint(model=net, optimizer=opt).save(str(tmp_path / "ckpt"))
    losses = [_step(net, opt) for _ in range(4)]
    final = _state(net, opt)

    # The optimizer has no slots yet, so their values wait for its first step.
    net2, opt2 = Net(seed=7), optimizers.Adam(0.05)
    status = train.Checkpoint(model=net2, optimizer=opt2).restore(path)
    with pytest.raises(AssertionError, match="_slot_vars"):
        status.assert_consumed()
    status.assert_existing_objects_matched()
    assert [_step(net2, opt2) for _ in range(4)] == losses
    _assert_bitwise(_state(net2, opt2), final)
    status.assert_consumed()   # the deferred values have been used by now
    assert int(opt2.iterations.numpy()) == 7


def test_save_numbers_and_latest_checkpoint(tmp_path):
    v = tf.Variable(1.0)
    ckpt = train.Checkpoint(v=v)
    assert train.latest_checkpoint(str(tmp_path)) is None
    p1 = ckpt.save(str(tmp_path / "ckpt"))
    v.assign(2.0)
    p2 = ckpt.save(str(tmp_path / "ckpt"))
    assert (os.path.basename(p1), os.path.basename(p2)) == ("ckpt-1", "ckpt-2")
    assert train.latest_checkpoint(str(tmp_path)) == p2
    assert int(ckpt.save_counter.numpy()) == 2
    ckpt.restore(p1)
    assert v.numpy() == 1.0
    assert int(ckpt.save_counter.numpy()) == 1  # the counter is part of the checkpoint


def test_write_read_overwrite_and_restore_none(tmp_path):
    v = tf.Variable([1.0, 2.0])
    ckpt = train.Checkpoint(v=v)
    path = ckpt.write(str(tmp_path / "weights"))
    v.assign([5.0, 6.0])
    ckpt.write(path)   # overwrite in place
    v.assign([0.0, 0.0])
    ckpt.read(path).assert_consumed()
    assert v.numpy().tolist() == [5.0, 6.0]
    assert sorted(os.listdir(tmp_path)) == ["weights"]   # no temporary directories left
    ckpt.restore(None)  # TF: nothing to restore is not an error
    assert v.numpy().tolist() == [5.0, 6.0]


def test_manager_keeps_max_to_keep_and_survives_reopening(tmp_path):
    v = tf.Variable(0.0)
    ckpt = train.Checkpoint(v=v)
    manager = train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    for i in range(4):
        v.assign(float(i))
        manager.save()
    names = [os.path.basename(p) for p in manager.checkpoints]
    assert names == ["ckpt-3", "ckpt-4"]
    assert sorted(d for d in os.listdir(tmp_path) if d.startswith("ckpt")) == ["ckpt-3", "ckpt-4"]
    assert manager.latest_checkpoint == train.latest_checkpoint(str(tmp_path))
    again = train.CheckpointManager(train.Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    assert again.checkpoints == manager.checkpoints
    v.assign(-1.0)
    assert again.restore_or_initialize() == manager.latest_checkpoint
    assert v.numpy() == 3.0
    assert os.path.basename(manager.save(checkpoint_number=100)) == "ckpt-100"


def test_interrupted_save_leaves_previous_checkpoint_readable(tmp_path, monkeypatch):
    import orbax.checkpoint as ocp
    v = tf.Variable([1.0, 2.0, 3.0])
    ckpt = train.Checkpoint(v=v)
    manager = train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
    good = manager.save()

    def crash(*args, **kwargs):
        raise RuntimeError("disk full (injected)")

    # The values are written first; the index write then fails half way through the save.
    monkeypatch.setattr(ocp.handlers.JsonCheckpointHandler, "save", crash)
    monkeypatch.setattr(ocp.handlers.JsonCheckpointHandler, "async_save", crash)
    v.assign([9.0, 9.0, 9.0])
    with pytest.raises(RuntimeError, match="injected"):
        manager.save()
    with pytest.raises(RuntimeError, match="injected"):
        ckpt.write(good)   # overwriting in place fails too, and must not damage it
    monkeypatch.undo()

    assert manager.latest_checkpoint == good
    assert train.latest_checkpoint(str(tmp_path)) == good
    assert manager.checkpoints == [good]
    train.Checkpoint(v=v).restore(good).assert_consumed()
    assert v.numpy().tolist() == [1.0, 2.0, 3.0]
    # The failed save did not consume a number.
    assert os.path.basename(manager.save()) == "ckpt-2"


def test_missing_path_names_it(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    missing = str(tmp_path / "nope-3")
    with pytest.raises(FileNotFoundError, match="nope-3") as e:
        ckpt.restore(missing)
    assert isinstance(e.value, tf.errors.NotFoundError)
    assert "latest_checkpoint" in str(e.value)
    # A directory of checkpoints instead of one checkpoint: say which to pass.
    ckpt.save(str(tmp_path / "ckpt"))
    with pytest.raises(FileNotFoundError, match="latest_checkpoint"):
        ckpt.restore(str(tmp_path))


def test_checkpoint_of_a_different_model(tmp_path):
    path = train.Checkpoint(model=Net(3, 2)).save(str(tmp_path / "ckpt"))

    wider = Net(3, 4)
    before = wider.w.numpy().copy()
    with pytest.raises(ValueError, match=r"model/b.*\(2,\).*\(4,\)") as e:
        train.Checkpoint(model=wider).restore(path)
    assert "model/w" in str(e.value)
    np.testing.assert_array_equal(wider.w.numpy(), before)   # nothing assigned

    class Other(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(tf.zeros([3, 2]))

    with pytest.warns(UserWarning, match="Nothing in the checkpoint"):
        status = train.Checkpoint(model=Other()).restore(path)
    with pytest.raises(AssertionError, match="model/kernel") as e:
        status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="model/w"):
        status.assert_consumed()
    status.expect_partial()


def test_corrupted_checkpoint(tmp_path):
    v = tf.Variable(np.arange(100, dtype=np.float32))
    path = train.Checkpoint(v=v).write(str(tmp_path / "c"))
    for root, _, files in os.walk(os.path.join(path, "state")):
        for f in files:
            if f not in ("commit_success.txt",):
                with open(os.path.join(root, f), "wb") as fh:
                    fh.write(b"\x00garbage")
    with pytest.raises(ValueError, match="corrupted") as e:
        train.Checkpoint(v=v).restore(path)
    assert isinstance(e.value, train.DataLossError)
    assert v.numpy()[5] == 5.0

    path2 = train.Checkpoint(v=v).write(str(tmp_path / "d"))
    for root, _, files in os.walk(os.path.join(path2, "index")):
        for f in files:
            if f != "commit_success.txt":
                with open(os.path.join(root, f), "w") as fh:
                    fh.write("{not json")
    with pytest.raises(train.DataLossError, match="index"):
        train.Checkpoint(v=v).restore(path2)


def test_untrackable_objects_are_rejected():
    with pytest.raises(ValueError, match="trackable"):
        train.Checkpoint(model=[1, 2, 3])


# ---------------------------------------------------------------------------
# Keras models
# ---------------------------------------------------------------------------

def _sequential():
    return tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])


class _Subclassed(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense_1 = tf.keras.layers.Dense(4, activation="relu")
        self.dense_2 = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.dense_2(self.dense_1(x))


_XK = np.random.default_rng(3).normal(size=(16, 3)).astype(np.float32)


def test_keras_paths_name_attributes():
    m = _Subclassed()
    m(_XK)
    assert sorted(tracking.Graph(train.Checkpoint(model=m)).variables) == [
        "model/dense_1/_kernel", "model/dense_1/bias", "model/dense_2/_kernel", "model/dense_2/bias"]


@pytest.mark.parametrize("make", [_sequential, _Subclassed])
def test_restore_into_an_unbuilt_model_waits_for_the_build(tmp_path, make):
    model = make()
    model(_XK).numpy()    # built; its first run at these shapes is on the host (NumPy: equal to rounding)
    expected = model(_XK).numpy()   # compiled, as every later call
    path = train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))

    fresh = make()
    assert not fresh.weights
    status = train.Checkpoint(model=fresh).restore(path)
    status.assert_existing_objects_matched()
    np.testing.assert_array_equal(fresh(_XK).numpy(), expected)
    status.assert_consumed()

    # Built for the first time inside a tf.function trace: the restored values are kept too.
    traced = make()
    train.Checkpoint(model=traced).restore(path)
    step = tf.function(lambda x: traced(x))
    np.testing.assert_array_equal(step(tf.constant(_XK)).numpy(), expected)
    np.testing.assert_array_equal(traced(_XK).numpy(), expected)


def test_fit_resumes_bit_for_bit_from_an_unbuilt_model(tmp_path):
    y = _XK.sum(1, keepdims=True)
    model = _sequential()
    model.compile(optimizer="adam", loss="mse")
    model.fit(_XK, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    path = train.Checkpoint(model=model, optimizer=model.optimizer).save(str(tmp_path / "ckpt"))
    model.fit(_XK, y, epochs=2, batch_size=4, verbose=0, shuffle=False)

    fresh = _sequential()
    fresh.compile(optimizer="adam", loss="mse")
    train.Checkpoint(model=fresh, optimizer=fresh.optimizer).restore(path)
    fresh.fit(_XK, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    _assert_bitwise(fresh.get_weights(), model.get_weights())
    _assert_bitwise([np.asarray(v.numpy()) for v in fresh.optimizer.variables],
                    [np.asarray(v.numpy()) for v in model.optimizer.variables])


def test_save_weights_and_load_weights(tmp_path):
    model = _Subclassed()
    model(_XK)      # the first call at a shape runs on the host (NumPy's matmul rounds otherwise)
    expected = model(_XK).numpy()
    path = str(tmp_path / "weights")
    model.save_weights(path)
    other = _Subclassed()
    other(_XK)
    other.load_weights(path)
    np.testing.assert_array_equal(other(_XK).numpy(), expected)
    # The checkpoint has the model itself as its root: no 'model/' prefix.
    assert sorted(_reader.read_index(path)["variables"]) == [
        "dense_1/_kernel", "dense_1/bias", "dense_2/_kernel", "dense_2/bias"]


def test_list_and_load_variables(tmp_path):
    net = Net()
    manager = train.CheckpointManager(train.Checkpoint(model=net), str(tmp_path), max_to_keep=1)
    manager.save()
    names = dict(train.list_variables(str(tmp_path)))
    # TensorFlow's keys (the same list TF 2.21 prints for this structure).
    assert names == {"_CHECKPOINTABLE_OBJECT_GRAPH": [], "model/b/.ATTRIBUTES/VARIABLE_VALUE": [2],
                     "model/w/.ATTRIBUTES/VARIABLE_VALUE": [3, 2], "save_counter/.ATTRIBUTES/VARIABLE_VALUE": []}
    np.testing.assert_array_equal(
        train.load_variable(manager.latest_checkpoint, "model/w/.ATTRIBUTES/VARIABLE_VALUE"), net.w.numpy())
    with pytest.raises(tf.errors.NotFoundError, match="model/w/.ATTRIBUTES/VARIABLE_VALUE"):
        train.load_variable(str(tmp_path), "model/w")   # not a key: the message gives the key
    with pytest.raises(tf.errors.NotFoundError, match="Key model/kernel not found in checkpoint"):
        train.load_variable(str(tmp_path), "model/kernel")
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_dtype_map()["model/w/.ATTRIBUTES/VARIABLE_VALUE"] == tf.float32
    assert reader.get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 1
    assert reader.has_tensor("model/b/.ATTRIBUTES/VARIABLE_VALUE") and not reader.has_tensor("model/b")
    with pytest.raises(tf.errors.NotFoundError, match="nowhere"):
        tf.train.load_checkpoint(str(tmp_path / "nowhere"))


def test_an_orbax_user_restores_the_tree_by_name(tmp_path):
    import orbax.checkpoint as ocp
    net = Net()
    path = train.Checkpoint(model=net, step=tf.Variable(7)).save(str(tmp_path / "ckpt"))
    tree = ocp.StandardCheckpointer().restore(os.path.abspath(path) + "/state")
    assert sorted(tree) == ["model", "save_counter", "step"]
    np.testing.assert_array_equal(np.asarray(tree["model"]["w"]), net.w.numpy())
    assert int(tree["step"]) == 7


def test_model_save_and_load_model_resume_training(tmp_path):
    y = _XK.sum(1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(_XK, y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    path = str(tmp_path / "model")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(_XK, verbose=0), model.predict(_XK, verbose=0))
    model.fit(_XK, y, epochs=1, batch_size=4, verbose=0, shuffle=False)
    loaded.fit(_XK, y, epochs=1, batch_size=4, verbose=0, shuffle=False)
    _assert_bitwise(loaded.get_weights(), model.get_weights())
    # The directory is a SavedModel too.
    assert tf.saved_model.load(path)(_XK).shape == (16, 1)
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        tf.keras.models.load_model(str(tmp_path / "nothing-here"))


def test_nested_checkpoints_pick_values_out_of_a_bigger_checkpoint(tmp_path):
    # The training-checkpoints guide: rebuild just the path to one Variable.
    class Layer(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(tf.ones([1, 5]))
            self.bias = tf.Variable([0.0, 1.0, 2.0, 3.0, 4.0])

    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.l1 = Layer()

    path = train.Checkpoint(step=tf.Variable(1), net=Net()).save(str(tmp_path / "ckpt"))
    to_restore = tf.Variable(tf.zeros([5]))
    new_root = train.Checkpoint(net=train.Checkpoint(l1=train.Checkpoint(bias=to_restore)))
    status = new_root.restore(train.latest_checkpoint(str(tmp_path)))
    assert to_restore.numpy().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="net/l1/kernel"):
        status.assert_consumed()
    assert path == train.latest_checkpoint(str(tmp_path))


def test_dtypes_and_zero_size_values_round_trip(tmp_path):
    import jax.numpy as jnp
    variables = {"bf16": tf.Variable(jnp.ones(3, jnp.bfloat16)), "empty": tf.Variable(np.zeros((0, 3), np.float32)),
                 "int8": tf.Variable(np.arange(3, dtype=np.int8)), "flags": tf.Variable(np.array([True, False]))}
    saved = {k: v.numpy().copy() for k, v in variables.items()}
    ckpt = train.Checkpoint(**variables)
    path = ckpt.write(str(tmp_path / "c"))
    for v in variables.values():
        v.assign(jnp.zeros_like(v._value))
    ckpt.restore(path).assert_consumed()
    for k, v in variables.items():
        assert v.numpy().dtype == saved[k].dtype
        np.testing.assert_array_equal(v.numpy(), saved[k])
    only_empty = train.Checkpoint(e=tf.Variable(np.zeros((0,), np.float32)))
    only_empty.restore(only_empty.write(str(tmp_path / "e"))).assert_consumed()


# ---------------------------------------------------------------------------
# CheckpointManager: TensorFlow's retention, intervals, paths; async saves
# ---------------------------------------------------------------------------

def test_manager_checkpoint_interval_skips_like_tensorflow(tmp_path):
    step = tf.Variable(0)
    manager = train.CheckpointManager(train.Checkpoint(step=step), str(tmp_path / "i"), max_to_keep=None,
                                      step_counter=step, checkpoint_interval=3)
    out = []
    for s in [0, 1, 2, 3, 3, 5, 6, 7]:
        step.assign(s)
        out.append((s, manager.save()))
    step.assign(7)
    out.append(("7 force", manager.save(check_interval=False)))
    step.assign(8)
    out.append(("8 force", manager.save(check_interval=False)))
    d = str(tmp_path / "i")
    # Recorded with TensorFlow 2.21 (directory 'i').
    assert out == [(0, f"{d}/ckpt-1"), (1, None), (2, None), (3, f"{d}/ckpt-2"), (3, None), (5, None),
                   (6, f"{d}/ckpt-3"), (7, None), ("7 force", f"{d}/ckpt-4"), ("8 force", f"{d}/ckpt-5")]
    with pytest.raises(ValueError, match="step_counter"):
        train.CheckpointManager(train.Checkpoint(step=step), d, max_to_keep=1, checkpoint_interval=3)


def test_manager_keep_checkpoint_every_n_hours_like_tensorflow(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(_manager, "_now", lambda: clock[0])
    monkeypatch.chdir(tmp_path)
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    manager = train.CheckpointManager(ckpt, "k", max_to_keep=2, keep_checkpoint_every_n_hours=1)
    for i in range(8):
        clock[0] = 1000.0 + i * 1800.0   # a save every half hour
        manager.save()
    # Recorded with TensorFlow 2.21: ckpt-3 and ckpt-5 are kept on disk, outside `checkpoints`.
    assert manager.checkpoints == ["k/ckpt-7", "k/ckpt-8"]
    assert sorted(os.listdir("k")) == ["checkpoint", "ckpt-3", "ckpt-5", "ckpt-7", "ckpt-8"]
    assert open("k/checkpoint").read() == (
        'model_checkpoint_path: "ckpt-8"\nall_model_checkpoint_paths: "ckpt-7"\n'
        'all_model_checkpoint_paths: "ckpt-8"\nall_model_checkpoint_timestamps: 11800.0\n'
        "all_model_checkpoint_timestamps: 13600.0\nlast_preserved_timestamp: 8200.0\n")
    again = train.CheckpointManager(ckpt, "k", max_to_keep=2, keep_checkpoint_every_n_hours=1)
    assert (again.checkpoints, again.latest_checkpoint) == (["k/ckpt-7", "k/ckpt-8"], "k/ckpt-8")
    clock[0] += 1800.0
    again.save()
    assert again.checkpoints == ["k/ckpt-8", "k/ckpt-9"]
    assert sorted(os.listdir("k")) == ["checkpoint", "ckpt-3", "ckpt-5", "ckpt-7", "ckpt-8", "ckpt-9"]


def test_relative_paths_stay_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    v = tf.Variable(3.0)
    ckpt = train.Checkpoint(v=v)
    assert ckpt.save("./tf_list_example") == "./tf_list_example-1"
    assert ckpt.write("w") == "w"
    manager = train.CheckpointManager(ckpt, "./tf_ckpts", max_to_keep=3)
    assert manager.save() == "./tf_ckpts/ckpt-2"
    assert train.latest_checkpoint("./tf_ckpts/") == "./tf_ckpts/ckpt-2"
    assert train.CheckpointManager(ckpt, "./tf_ckpts", max_to_keep=3).latest_checkpoint == "./tf_ckpts/ckpt-2"
    v.assign(0.0)
    ckpt.restore("./tf_ckpts/ckpt-2")
    assert v.numpy() == 3.0


def test_async_save_returns_early_and_the_next_operation_waits(tmp_path):
    v = tf.Variable(np.arange(1 << 16, dtype=np.float32))
    ckpt = train.Checkpoint(v=v)
    seen = []
    options = train.CheckpointOptions(experimental_enable_async_checkpoint=True,
                                      experimental_write_callbacks=[seen.append])
    manager = train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    first = manager.save(options=options)
    v.assign(v + 1.0)   # the save has the values of the moment it was called
    second = manager.save(options=options)   # waits for the first
    assert seen[0] == first
    ckpt.sync()
    assert seen == [first, second]
    assert manager.latest_checkpoint == second == train.latest_checkpoint(str(tmp_path))
    v.assign(tf.zeros_like(v))
    ckpt.restore(first)
    np.testing.assert_array_equal(v.numpy(), np.arange(1 << 16, dtype=np.float32))
    # A plain Checkpoint.save too; restore() waits for it.
    path = ckpt.save(str(tmp_path / "plain"), options=train.CheckpointOptions(enable_async=True))
    v.assign(tf.zeros_like(v))
    ckpt.restore(path)
    np.testing.assert_array_equal(v.numpy(), np.arange(1 << 16, dtype=np.float32))


def test_a_failed_async_save_raises_at_sync(tmp_path, monkeypatch):
    ckpt = train.Checkpoint(v=tf.Variable(1.0))
    options = train.CheckpointOptions(experimental_enable_async_checkpoint=True)

    def broken(*args, **kwargs):
        raise OSError("disk full (injected)")

    monkeypatch.setattr(_checkpoint, "_write_state", broken)
    ckpt.save(str(tmp_path / "ckpt"), options=options)
    with pytest.raises(OSError, match="injected"):
        ckpt.sync()
    ckpt.sync()   # reported once


def test_generator_and_iterator_are_checkpointable(tmp_path):
    g = tf.random.Generator.from_seed(5)
    it = iter(tf.data.Dataset.range(10))
    ckpt = train.Checkpoint(gen=g, iterator=it)
    next(it), next(it), g.normal([3])
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert dict(train.list_variables(path)).keys() >= {
        "gen/_state_var/.ATTRIBUTES/VARIABLE_VALUE", "iterator/.ATTRIBUTES/ITERATOR_STATE"}
    expected_draw = g.normal([3]).numpy()
    expected_next = [int(next(it)) for _ in range(3)]

    ckpt.restore(path)   # the same objects, rewound
    np.testing.assert_array_equal(g.normal([3]).numpy(), expected_draw)
    assert [int(next(it)) for _ in range(3)] == expected_next

    g2, it2 = tf.random.Generator.from_seed(99), iter(tf.data.Dataset.range(10))
    train.Checkpoint(gen=g2, iterator=it2).restore(path).assert_consumed()
    np.testing.assert_array_equal(g2.normal([3]).numpy(), expected_draw)
    assert [int(next(it2)) for _ in range(3)] == expected_next == [2, 3, 4]


def test_structures_assigned_after_restore_get_their_values(tmp_path):
    save = train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    save.mapped = {"one": save.listed[0]}
    save.mapped["two"] = save.listed[1]
    save.nested = train.Checkpoint(pair=(tf.Variable(5.0), tf.Variable(6.0)))
    path = save.save(str(tmp_path / "ckpt"))

    restore = train.Checkpoint()
    v2 = tf.Variable(0.0)
    restore.mapped = {"two": v2}   # the same Variable as listed/1, saved through a dict
    status = restore.restore(path)
    assert v2.numpy() == 2.0
    restore.listed = []
    assert repr(restore.listed) == "ListWrapper([])"
    v1 = tf.Variable(0.0)
    restore.listed.append(v1)
    assert v1.numpy() == 1.0
    a, b = tf.Variable(0.0), tf.Variable(0.0)
    restore.nested = train.Checkpoint(pair=(a, b))
    assert (a.numpy(), b.numpy()) == (5.0, 6.0)
    status.assert_consumed()


def test_sharded_variables_are_saved_shard_by_shard_and_restored_in_any_layout(tmp_path):
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent(f"""
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
        import jax, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        import tapejax as tf
        from tapejax import train
        mesh = Mesh(np.array(jax.devices()), ("x",))
        value = np.arange(32, dtype=np.float32).reshape(8, 4)
        v = tf.Variable(value)
        v._stored = jax.device_put(value, NamedSharding(mesh, P("x")))
        ckpt = train.Checkpoint(v=v)
        # What orbax is given is the sharded jax Array itself (each device writes its shard).
        leaf = ckpt._payload().args.state.item["v"]
        assert leaf is v._stored and len(leaf.addressable_shards) == 4, leaf
        path = ckpt.write({str(tmp_path / 'c')!r})
        v._stored = jax.device_put(np.zeros_like(value), NamedSharding(mesh, P(None, "x")))
        ckpt.restore(path).assert_consumed()
        assert v._stored.sharding.spec == P(None, "x"), v._stored.sharding   # read into its own layout
        np.testing.assert_array_equal(np.asarray(v._stored), value)
        print("SHARDED OK")
    """)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert "SHARDED OK" in run.stdout, run.stderr[-3000:]


def test_iterator_read_by_a_function_saves_and_restores_its_position(tmp_path):
    it = iter(tf.data.Dataset.range(10))
    step = tf.function(lambda: next(it))
    first = [int(step()) for _ in range(3)]
    path = train.Checkpoint(iterator=it).save(str(tmp_path / "ckpt"))
    assert first == [0, 1, 2] and int(train.load_variable(path, "iterator/.ATTRIBUTES/ITERATOR_STATE")) == 3
    assert int(step()) == 3
    train.Checkpoint(iterator=it).restore(path)
    assert int(next(it)) == 3   # rewound

    fresh = iter(tf.data.Dataset.range(10))   # restored before a function stages it
    train.Checkpoint(iterator=fresh).restore(path)
    step2 = tf.function(lambda: next(fresh))
    assert [int(step2()) for _ in range(2)] == [3, 4]


def test_module_attributes_set_after_restore_get_their_values(tmp_path):
    net = Net()
    net.blocks = [tf.Variable(3.0), {"scale": tf.Variable(4.0)}]
    path = train.Checkpoint(model=net).save(str(tmp_path / "ckpt"))

    class Empty(tf.Module):
        pass

    later = Empty()
    status = train.Checkpoint(model=later).restore(path)
    later.w = tf.Variable(np.zeros((3, 2), np.float32))
    later.blocks = (tf.Variable(0.0), {"scale": tf.Variable(0.0)})   # a tuple now: same paths
    np.testing.assert_array_equal(later.w.numpy(), net.w.numpy())
    assert (later.blocks[0].numpy(), later.blocks[1]["scale"].numpy()) == (3.0, 4.0)
    with pytest.raises(AssertionError, match="model/b"):
        status.assert_consumed()
    later.b = tf.Variable(np.ones(2, np.float32))
    status.assert_consumed()
    np.testing.assert_array_equal(later.b.numpy(), np.zeros(2, np.float32))


def test_a_dataset_is_trackable_with_nothing_to_save_and_its_iterator_saves_its_position(tmp_path):
    ds = tf.data.Dataset.range(5)
    it = iter(ds)
    next(it)
    ckpt = train.Checkpoint(ds=ds, it=it)
    path = ckpt.write(str(tmp_path / "c"))
    assert [k for k, _ in train.list_variables(path)] == ["_CHECKPOINTABLE_OBJECT_GRAPH", "it/.ATTRIBUTES/ITERATOR_STATE"]
    next(it)
    ckpt.read(path).assert_consumed()
    assert int(next(it)) == 1
    with pytest.raises(ValueError, match="trackable object"):
        train.Checkpoint(x=object())


def test_checkpoint_objects_print_tensorflows_reprs(tmp_path):
    """TF 2.21's default reprs (the DCGAN tutorial's ``checkpoint.restore(...)`` cell shows one);
    ``restore(None)`` is an InitializationOnlyStatus whose assertions fail. Recorded from TF."""
    import re
    v = tf.Variable(1.0)
    ck = tf.train.Checkpoint(v=v)
    mgr = tf.train.CheckpointManager(ck, str(tmp_path), max_to_keep=2)
    p = mgr.save()
    got = [re.sub("0x[0-9a-f]+", "0x..", repr(o))
           for o in [ck, mgr, ck.restore(p), ck.restore(None), ck.read(p), tf.train.CheckpointOptions()]]
    assert got == ["<tensorflow.python.checkpoint.checkpoint.Checkpoint object at 0x..>",
                   "<tensorflow.python.checkpoint.checkpoint_management.CheckpointManager object at 0x..>",
                   "<tensorflow.python.checkpoint.checkpoint.CheckpointLoadStatus object at 0x..>",
                   "<tensorflow.python.checkpoint.checkpoint.InitializationOnlyStatus object at 0x..>",
                   "<tensorflow.python.checkpoint.checkpoint.CheckpointLoadStatus object at 0x..>",
                   "<tensorflow.python.checkpoint.checkpoint_options.CheckpointOptions object at 0x..>"]
    with pytest.raises(AssertionError, match=r"^No checkpoint specified \(save_path=None\); nothing is being "
                                             r"restored.$"):
        ck.restore(None).assert_consumed()

    class Mine(tf.train.Checkpoint):
        pass
    assert repr(Mine()).startswith(f"<{__name__}.")   # a user's subclass keeps its module
