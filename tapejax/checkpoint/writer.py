"""Writing one checkpoint directory: atomically (orbax writes a temporary folder and renames it
when complete), with a checksum per value added last, in the background for async saves."""
import json
import os
import shutil
import threading
import uuid

import jax

from .format import _CHECKSUMS, _INDEX_VERSION, _STATE_FILE, _TMP_MARK, _checksum, _ocp, _tree_set


class _Save:
    """One save: orbax's arguments (the values as a PyTree of jax Arrays, the JSON index) and
    the Arrays whose checksums are computed while orbax writes them."""

    def __init__(self, args, arrays):
        self.args = args
        self.arrays = arrays   # {object path: jax Array}

    def checksums(self):
        return {p: _checksum(x) for p, x in self.arrays.items()}


def _payload(variables, kinds=None, extra_index=None, aliases=None):
    """The :class:`_Save` of ``variables`` ({object path: Variable}): their values in their
    own layouts, nested by object path, and an index of paths, shapes and dtypes."""
    ocp = _ocp()
    tree, arrays = {}, {}
    index = {"version": _INDEX_VERSION, "variables": {}, "kinds": kinds or {}, "aliases": aliases or {},
             "checksums": _CHECKSUMS}
    for path, var in variables.items():
        x = var._value   # marks the buffer shared: no later step may donate it while orbax reads it
        if not isinstance(x, jax.Array):
            x = jax.numpy.asarray(x)
        entry = {"key": None, "shape": list(x.shape), "dtype": str(x.dtype),
                 "trainable": bool(var.trainable), "name": var._name}
        # Orbax refuses zero-size arrays: their shape and dtype in the index are the value.
        if x.size:
            entry["key"] = path.split("/")
            _tree_set(tree, entry["key"], x)
            arrays[path] = x
        index["variables"][path] = entry
    if extra_index:
        index.update(extra_index)
    args = {"index": ocp.args.JsonSave(index)}
    if tree:
        args["state"] = ocp.args.PyTreeSave(tree)
    return _Save(ocp.args.Composite(**args), arrays)


def _write_checksums(directory, sums):
    """Adds the checksums to a committed checkpoint directory (atomically): a checkpoint is
    referenced (state file, returned path) only once they are there."""
    tmp = os.path.join(directory, f".{_CHECKSUMS}{_TMP_MARK}")
    with open(tmp, "w") as fh:
        json.dump(sums, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, os.path.join(directory, _CHECKSUMS))


_IN_FLIGHT = set()   # absolute paths of the checkpoints this process is writing now


def _clean_tmp(directory):
    """Removes what interrupted saves left in ``directory`` (orbax's temporary folders), but
    not the folders of saves this process has in flight there."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    busy = tuple(os.path.basename(p) + _TMP_MARK for p in list(_IN_FLIGHT)
                 if os.path.dirname(p) == os.path.abspath(directory))
    for name in names:
        if _TMP_MARK in name and not name.startswith(busy):
            shutil.rmtree(os.path.join(directory, name), ignore_errors=True)


def _delete_checkpoint(path):
    """Deletes a checkpoint directory; renamed first, so a crash half way leaves only a
    temporary folder (removed by the next save) and never a partial checkpoint."""
    if not os.path.isdir(path):
        return
    doomed = f"{path}{_TMP_MARK}-deleted-{uuid.uuid4().hex[:8]}"
    os.rename(path, doomed)
    shutil.rmtree(doomed, ignore_errors=True)


class _Writer:
    """Runs one save at a time; a background save (orbax's async checkpointing) finishes in
    a thread, and the next save, restore or ``sync()`` waits for it and raises its error."""

    def __init__(self):
        self._thread = None
        self._error = None

    def sync(self):
        thread = self._thread
        if thread is not None:
            thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None:
            raise error

    def run(self, save, final, start, wait, directory, then, background):
        """``start()`` begins orbax's save of ``save`` (the checkpoint ``final``) and returns once
        the values are held; the checksums are computed while orbax writes; ``wait()`` blocks
        until orbax has committed the directory ``directory()``; the checksums go in;
        ``then()`` records it."""
        self.sync()
        _IN_FLIGHT.add(final)
        try:
            start()
        except BaseException:
            _IN_FLIGHT.discard(final)
            raise

        def finish():
            try:
                sums = save.checksums()
                wait()
                _write_checksums(directory(), sums)
                then()
            finally:
                _IN_FLIGHT.discard(final)

        if not background:
            finish()
            return

        def body():
            try:
                finish()
            except BaseException as e:  # noqa: BLE001 -- raised by the next sync()
                self._error = e

        self._thread = threading.Thread(target=body, name="tapejax-checkpoint-save")
        self._thread.start()


def _write_dir(path, save, writer=None, background=False, then=None):
    """Writes a checkpoint directory at ``path`` (absolute), atomically: orbax writes a
    temporary folder and renames it when complete; an existing checkpoint there is
    replaced only once the new one is whole."""
    ocp = _ocp()
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    _clean_tmp(parent)
    target = path if not os.path.exists(path) else f"{path}{_TMP_MARK}-new-{uuid.uuid4().hex[:8]}"
    ckptr = ocp.AsyncCheckpointer(ocp.CompositeCheckpointHandler())

    def done():
        ckptr.close()
        if target != path:
            swap_into_place(target, path)
        if then is not None:
            then()

    (writer or _Writer()).run(save, path, lambda: ckptr.save(target, args=save.args), ckptr.wait_until_finished,
                              lambda: target, done, background)


def write(path, variables):
    """Writes ``variables`` ({object path: Variable}) to the checkpoint directory ``path``,
    atomically and synchronously. Returns the absolute path."""
    path = os.path.abspath(os.fspath(path))
    _write_dir(path, _payload(variables))
    return path


def swap_into_place(new, dest):
    """Moves the complete directory ``new`` to ``dest``, replacing what is there.

    The old copy is moved aside first and deleted last, so a crash leaves either
    the old or the new directory whole at ``dest`` (or the new one still aside).
    """
    if os.path.exists(dest):
        old = f"{dest}{_TMP_MARK}-old-{uuid.uuid4().hex[:8]}"
        os.rename(dest, old)
        os.rename(new, dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(new, dest)


def _write_state(directory, latest, paths, timestamps=(), last_preserved=None):
    """Writes the state file atomically, with paths relative to ``directory`` (as TensorFlow)."""
    directory = os.fspath(directory)
    rel = lambda p: os.path.relpath(p, directory) if os.path.dirname(os.path.abspath(p)) == os.path.abspath(directory) else p  # noqa: E731
    text = f'model_checkpoint_path: "{rel(latest)}"\n' + "".join(
        f'all_model_checkpoint_paths: "{rel(p)}"\n' for p in paths)
    text += "".join(f"all_model_checkpoint_timestamps: {t!r}\n" for t in timestamps)
    if last_preserved is not None:
        text += f"last_preserved_timestamp: {last_preserved!r}\n"
    tmp = os.path.join(directory, f".{_STATE_FILE}{_TMP_MARK}-{uuid.uuid4().hex[:8]}")
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, os.path.join(directory, _STATE_FILE))
