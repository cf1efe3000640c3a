"""Checkpoints survive a process killed (SIGKILL) in the middle of a save, and bit rot is caught.

Each kill test runs a save in a child process that stops at a chosen point (or after a delay) and is
killed there; the parent then restores: it must get the previous complete checkpoint (or the new one,
whole, when the kill came after it was committed), and the next save must remove what the killed one
left. Children fork from a forkserver that has imported tapejax already, so each takes a fraction of
a second.
"""
import multiprocessing
import os
import signal
import time

import numpy as np
import pytest

import tapejax as tf
from tapejax.checkpoint import format as _format, manager as _manager, writer as _writer

_N = 1 << 18   # a 1 MiB float32 value


def _state(value):
    return tf.Variable(np.full(_N, value, np.float32)), tf.Variable(0)


def _child(directory, stop, ready, use_async):
    """Saves checkpoint 1 (all ones), then checkpoint 2 (all twos) and stops at ``stop``."""
    import shutil

    from orbax.checkpoint._src.path import atomicity

    def hang(*args, **kwargs):
        ready.set()
        time.sleep(600)

    v, step = _state(1.0)
    ckpt = tf.train.Checkpoint(v=v, step=step)
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=1)
    manager.save()
    v.assign(np.full(_N, 2.0, np.float32))
    step.assign(2)
    if stop == "before_commit":      # every file written, the temporary folder not yet renamed
        atomicity.AtomicRenameTemporaryPath.finalize = hang
    elif stop == "before_checksums":  # orbax committed the folder, its checksums not yet written
        _writer._write_checksums = hang
    elif stop == "before_state":     # complete, the state file still names checkpoint 1
        _manager._write_state = hang
    elif stop == "while_deleting":   # state written, checkpoint 1 half deleted
        shutil.rmtree = hang
    options = tf.train.CheckpointOptions(experimental_enable_async_checkpoint=use_async)
    if stop == "timed":
        ready.set()
    manager.save(options=options)
    ready.set()
    time.sleep(600)


@pytest.fixture(scope="module")
def context():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tapejax", "orbax.checkpoint", "tapejax.train"])
    return ctx


@pytest.mark.parametrize("stop,use_async,delay", [
    ("before_commit", False, 0.0),
    ("before_checksums", False, 0.0),
    ("before_state", False, 0.0),
    ("while_deleting", False, 0.0),
    ("before_commit", True, 0.0),
    ("timed", False, 0.01),
    ("timed", True, 0.05),
])
def test_kill_during_save_keeps_the_previous_checkpoint(tmp_path, context, stop, use_async, delay):
    directory = str(tmp_path / "ckpts")
    ready = context.Event()
    child = context.Process(target=_child, args=(directory, stop, ready, use_async))
    child.start()
    try:
        assert ready.wait(60), "the child never reached the kill point"
        time.sleep(delay)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.join()
    assert child.exitcode == -signal.SIGKILL

    v, step = _state(0.0)
    ckpt = tf.train.Checkpoint(v=v, step=step)
    latest = tf.train.latest_checkpoint(directory)
    ckpt.restore(latest).assert_consumed()
    number = int(latest.rsplit("-", 1)[1])
    if stop in ("before_commit", "before_checksums", "before_state"):
        assert number == 1
    if stop == "before_checksums":   # a folder without its checksums is not a checkpoint
        with pytest.raises(tf.errors.DataLossError, match="did not finish"):
            tf.train.Checkpoint(v=tf.Variable(np.zeros(_N, np.float32))).restore(os.path.join(directory, "ckpt-2"))
    elif stop == "while_deleting":
        assert number == 2
    # Whichever it is, it is whole: all ones with step 0, or all twos with step 2.
    expected = 1.0 if number == 1 else 2.0
    np.testing.assert_array_equal(v.numpy(), np.full(_N, expected, np.float32))
    assert int(step.numpy()) == (0 if number == 1 else 2)

    # A new manager (and its next save) removes what the killed save left.
    leftovers = [n for n in os.listdir(directory) if ".orbax-checkpoint-tmp" in n]
    if stop == "while_deleting":
        # (Killed "before_commit", orbax may not have made its temporary folder yet on a loaded
        # machine; the clean-up itself is tested on its own in
        # test_leftovers_of_a_killed_save_are_removed_by_the_next_plain_save.)
        assert leftovers, os.listdir(directory)
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=1)
    assert not [n for n in os.listdir(directory) if ".orbax-checkpoint-tmp" in n]
    path = manager.save()
    assert os.path.isdir(path) and tf.train.latest_checkpoint(directory) == path
    assert sorted(os.listdir(directory)) == ["checkpoint", os.path.basename(path)]
    v.assign(np.zeros(_N, np.float32))
    ckpt.restore(path).assert_consumed()
    np.testing.assert_array_equal(v.numpy(), np.full(_N, expected, np.float32))


def test_leftovers_of_a_killed_save_are_removed_by_the_next_plain_save(tmp_path):
    v = tf.Variable([1.0, 2.0])
    ckpt = tf.train.Checkpoint(v=v)
    first = ckpt.save(str(tmp_path / "ckpt"))
    leftover = tmp_path / "ckpt-2.orbax-checkpoint-tmp-1234567"
    (leftover / "state").mkdir(parents=True)
    (leftover / "state" / "junk").write_bytes(b"partial")
    assert tf.train.latest_checkpoint(str(tmp_path)) == first   # the leftover is not a checkpoint
    second = ckpt.save(str(tmp_path / "ckpt"))
    assert not leftover.exists()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1", "ckpt-2"]
    assert tf.train.latest_checkpoint(str(tmp_path)) == second


def _data_files(path):
    """The data files of a checkpoint's values (orbax's OCDBT 'd' folders), smallest first."""
    return sorted((os.path.join(d, f) for d, _, fs in os.walk(os.path.join(path, "state"))
                   if os.path.basename(d) == "d" for f in fs), key=os.path.getsize)


def test_one_flipped_bit_in_a_data_file_raises_data_loss_naming_the_value(tmp_path):
    rng = np.random.default_rng(0)
    original = rng.normal(size=(256, 64)).astype(np.float32)   # incompressible: the bytes are the values
    w, b = tf.Variable(original), tf.Variable(np.zeros(3, np.float32))
    ckpt = tf.train.Checkpoint(model=tf.train.Checkpoint(w=w, b=b))
    path = ckpt.write(str(tmp_path / "c"))
    data = _data_files(path)[-1]   # the largest data file holds w
    raw = bytearray(open(data, "rb").read())
    for position in (len(raw) // 3, len(raw) // 2):
        flipped = bytearray(raw)
        flipped[position] ^= 0x04
        with open(data, "wb") as fh:
            fh.write(flipped)
        w.assign(np.zeros_like(original))
        # Orbax / tensorstore read such a file without complaint (a silently wrong value):
        # the checksum in the index is what catches it.
        with pytest.raises(tf.errors.DataLossError, match=r"model/w/\.ATTRIBUTES/VARIABLE_VALUE") as e:
            ckpt.restore(path)
        assert os.path.join(path, "state") in str(e.value) and "Checksum mismatch" in str(e.value)
        assert isinstance(e.value, ValueError)
        np.testing.assert_array_equal(w.numpy(), np.zeros_like(original))   # nothing assigned
    with open(data, "wb") as fh:
        fh.write(raw)
    ckpt.restore(path).assert_consumed()
    np.testing.assert_array_equal(w.numpy(), original)


def test_checksums_do_not_depend_on_how_an_array_is_split():
    x = np.random.default_rng(1).normal(size=(6, 10)).astype(np.float32)
    whole = _format._checksum(x)
    parts = sum(_format._block_checksum(x[r:r + 2, c:c + 5], (r, c), x.shape)
                for r in (0, 2, 4) for c in (0, 5)) % 2**32
    assert parts == whole
    for i, bit in [(0, 0), (17, 31), (59, 7)]:
        y = x.copy().reshape(-1).view(np.uint32)
        y[i] ^= np.uint32(1 << bit)
        assert _format._checksum(y.view(np.float32).reshape(x.shape)) != whole
    # 8-, 2- and 1-byte dtypes and scalars too.
    for a in (np.arange(5, dtype=np.int8), np.arange(5, dtype=np.float16), np.float32(3.5), np.array([True, False])):
        assert isinstance(_format._checksum(a), int)
    assert _format._checksum(np.arange(4, dtype=np.int16)) != _format._checksum(np.arange(4, dtype=np.int16)[::-1].copy())
