"""tf.train: object-based checkpoints (``Checkpoint``, ``CheckpointManager``).

A checkpoint holds the values of the Variables reachable from the objects given
to :class:`Checkpoint`, keyed by their *object path*, as TensorFlow's object
graph does: ``model/dense_1/kernel``, ``optimizer/iterations``. The walk goes
through attributes of Modules, Keras layers, models, optimizers and metrics,
lists, tuples and dicts (sorted keys), and nested Checkpoints, breadth first, so
a Variable reachable by several paths is stored once under its shortest one.
An object may define ``_trackable_children()`` returning ``{name: child}`` to
replace the default walk. ``tf.train.list_variables`` shows TensorFlow's keys
(``model/dense_1/kernel/.ATTRIBUTES/VARIABLE_VALUE``).

Storage is orbax: one directory per checkpoint holding the values as a PyTree of
jax Arrays nested by object path (``{'model': {'dense_1': {'kernel': ...}}}``,
so ``orbax.checkpoint.StandardCheckpointer().restore(path + '/state')`` reads it
by name; sharded values are written shard by shard, never gathered), a JSON
index of paths, shapes and dtypes, and a checksum per value (``checksums.json``,
computed while orbax writes, added last), verified on restore. Orbax writes to a
temporary directory and renames it when complete, so a save that fails or is
killed half way never damages an earlier checkpoint; the next save removes what
it left. ``CheckpointManager`` saves through orbax's
``CheckpointManager``; ``CheckpointOptions(experimental_enable_async_checkpoint=True)``
makes saves return once the values are copied (orbax's async checkpointing).

Values whose Variables do not exist yet (an unbuilt Keras model, an optimizer
before its first step, an attribute of a Checkpoint assigned later) are kept on
the deepest existing object of their path (``obj._deferred_restore``) and
assigned when the object creates them: Keras layers and optimizers call
:func:`_apply_deferred` after building, Checkpoints when an attribute is set.
"""
import collections
import dataclasses
import json
import logging
import math
import os
import re
import shutil
import threading
import time
import uuid
import warnings

import jax
import numpy as np

from ._core import state as _state
from . import dtypes as _dtypes, errors as _errors
from ._core.module import Module
from ._core.variable import Variable
from .keras import optimizers as _optimizers
from . import saved_model as _saved_model
from . import keras as _keras

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "CheckpointOptions", "list_variables",
           "load_variable", "load_checkpoint", "CheckpointReader"]

_STATE_FILE = "checkpoint"
_ATTRIBUTES = ".ATTRIBUTES"
_TMP_MARK = ".orbax-checkpoint-tmp"   # orbax's temporary folders (and ours) carry this
_INDEX_VERSION = 2
_log = logging.getLogger("tapejax")


class NotFoundError(_errors.NotFoundError, FileNotFoundError):
    """A checkpoint path that does not exist (also a ``FileNotFoundError``)."""

    def __init__(self, message):
        _errors.NotFoundError.__init__(self, None, None, message)


class DataLossError(_errors.DataLossError, ValueError):
    """A checkpoint that exists but cannot be read (truncated, corrupted or modified files); a
    ``tf.errors.DataLossError`` and a ``ValueError``."""

    def __init__(self, message):
        _errors.DataLossError.__init__(self, None, None, message)


def _ocp():
    # orbax takes about a second to import: only pay it when checkpointing.
    import orbax.checkpoint as ocp
    return ocp


# ---------------------------------------------------------------------------
# The object graph
# ---------------------------------------------------------------------------

def _escape(name):
    """A path segment: '/' inside a name must not split it (TensorFlow's escaping).
    Names under ``.ATTRIBUTES/`` (an iterator's state) are TensorFlow's own keys."""
    name = str(name)
    if name.startswith(_ATTRIBUTES + "/"):
        return name
    return name.replace(".", "..").replace("/", ".S")


class ListWrapper(list):
    """A list attribute of a Checkpoint: a plain list that restores the Variables appended to
    it from an earlier ``restore()`` (TensorFlow's ``ListWrapper``)."""

    def __init__(self, items=(), owner=None):
        super().__init__(items)
        self._owner = owner

    def __repr__(self):
        return f"ListWrapper({list.__repr__(self)})"

    def _changed(self):
        if self._owner is not None:
            _apply_deferred(self._owner)

    def append(self, x):
        super().append(x)
        self._changed()

    def extend(self, xs):
        super().extend(xs)
        self._changed()

    def insert(self, i, x):
        super().insert(i, x)
        self._changed()

    def __setitem__(self, i, x):
        super().__setitem__(i, x)
        self._changed()

    def __iadd__(self, xs):
        self.extend(xs)
        return self


class _DictWrapper(dict):
    """A dict attribute of a Checkpoint: restores the Variables added to it later."""

    def __init__(self, items=(), owner=None):
        super().__init__(items)
        self._owner = owner

    def __repr__(self):
        return f"DictWrapper({dict.__repr__(self)})"

    def __setitem__(self, k, x):
        super().__setitem__(k, x)
        if self._owner is not None:
            _apply_deferred(self._owner)

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        if self._owner is not None:
            _apply_deferred(self._owner)


def _wrap(value, owner):
    if type(value) is list:
        return ListWrapper(value, owner)
    if type(value) is dict:
        return _DictWrapper(value, owner)
    return value


def _is_trackable_object(x):
    if isinstance(x, (Module, Checkpoint)) or hasattr(type(x), "_trackable_children"):
        return True
    mod = type(x).__module__ or ""
    return mod.startswith("tapejax.keras") and hasattr(x, "__dict__")


def _holds_trackable(x, depth=0):
    if isinstance(x, Variable) or _is_trackable_object(x):
        return True
    if depth > 8:
        return False
    if isinstance(x, (list, tuple)):
        return any(_holds_trackable(e, depth + 1) for e in x)
    if isinstance(x, dict):
        return any(_holds_trackable(e, depth + 1) for e in x.values())
    return False


_SKIPPED_ATTRS = frozenset({"_deferred_restore", "__dict__", "__weakref__"})


def _children(obj):
    """The (name, child) pairs of one node of the object graph, in walk order."""
    if isinstance(obj, Variable):
        return []
    if isinstance(obj, Checkpoint):
        items = sorted(obj._objects.items())
        if obj._save_counter is not None:
            items.append(("save_counter", obj._save_counter))
        return items
    custom = getattr(type(obj), "_trackable_children", None)
    if custom is not None and not isinstance(obj, type):
        return list(custom(obj).items())
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _holds_trackable(v)]
    if isinstance(obj, dict):
        return [(str(k), obj[k]) for k in sorted(obj, key=str) if _holds_trackable(obj[k])]
    attrs = getattr(obj, "__dict__", None)
    if attrs is None:
        return []
    ignored = getattr(obj, "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
    return [(k, attrs[k]) for k in sorted(attrs)
            if k not in _SKIPPED_ATTRS and k not in ignored and _holds_trackable(attrs[k])]


def _kind(obj):
    if isinstance(obj, (list, tuple)):
        return "list"
    if isinstance(obj, dict):
        return "dict"
    return "object"


class _Graph:
    """The object graph below a root: Variables and objects by path (breadth first)."""

    def __init__(self, root):
        self.variables = {}   # path -> Variable
        self.objects = {"": root}   # path -> container / trackable object
        self.kinds = {"": _kind(root)}
        self.aliases = {}     # another path to an object or Variable -> its path above
        seen = {id(root): ""}
        frontier = [("", root)]
        while frontier:
            nxt = []
            for path, obj in frontier:
                for name, child in _children(obj):
                    cpath = f"{path}/{_escape(name)}" if path else _escape(name)
                    if id(child) in seen:
                        if seen[id(child)] != cpath:
                            self.aliases.setdefault(cpath, seen[id(child)])
                        continue
                    seen[id(child)] = cpath
                    if isinstance(child, Variable):
                        self.variables[cpath] = child
                    else:
                        self.objects[cpath] = child
                        self.kinds[cpath] = _kind(child)
                        nxt.append((cpath, child))
            frontier = nxt

    def paths_of(self, paths):
        """{other path: path} for the values at ``paths`` reachable by other paths (aliases,
        and the Variables below aliased objects)."""
        by_target = collections.defaultdict(list)
        for alias, target in self.aliases.items():
            by_target[target].append(alias)
        out, frontier = {}, {p: p for p in paths}
        for _ in range(8):   # aliases of aliased objects, a few levels deep
            found = {}
            for p, canonical in frontier.items():
                parts = p.split("/")
                for i in range(len(parts), 0, -1):   # the path itself, then the objects above it
                    target = "/".join(parts[:i])
                    for alias in by_target.get(target, ()):
                        q = alias + p[len(target):]
                        if q not in out and q not in paths:
                            found[q] = canonical
            if not found:
                break
            out.update(found)
            frontier = found
        return out

    def owner(self, path):
        """The deepest existing object on ``path`` and the rest of the path below it."""
        parts = path.split("/")
        for i in range(len(parts) - 1, -1, -1):
            prefix = "/".join(parts[:i])
            obj = self.objects.get(prefix)
            if obj is not None and not isinstance(obj, (list, tuple, dict)):
                return obj, "/".join(parts[i:])
        return None, path


def _mismatch(path, var, value):
    if tuple(var._value.shape) == tuple(value.shape):
        return None
    return (f"'{path}' (variable '{var.name}'): checkpoint shape {tuple(value.shape)}, "
            f"variable shape {tuple(var._value.shape)}")


def _raise_mismatches(problems, where):
    raise ValueError(
        f"Cannot restore {where}: the shapes of {len(problems)} value(s) differ from their "
        "Variables: " + "; ".join(problems) + ". The checkpoint was written by a differently "
        "configured model: build the model with the same configuration (layer sizes) as the one "
        "that was saved. Nothing was assigned.")


def _check_shape(path, var, value):
    problem = _mismatch(path, var, value)
    if problem:
        _raise_mismatches([problem], "a deferred checkpoint value")


def _as_value(var, value):
    if isinstance(value, jax.Array) and value.dtype == var.dtype._np:
        return value   # read from the checkpoint in the Variable's layout
    # Concrete even while a tf.function is traced (the restore happens during a lazy build).
    with jax.ensure_compile_time_eval():
        return jax.device_put(np.asarray(value, dtype=var.dtype._np))


def _apply_deferred(obj):
    """Assigns checkpoint values kept for ``obj`` to the Variables it has created since.

    Called by Keras layers after ``build`` and by optimizers after creating their
    slots; a no-op when nothing was deferred. Values for Variables still missing
    stay pending (or move to a sub-object that now exists).
    """
    pending = getattr(obj, "__dict__", {}).get("_deferred_restore")
    if not pending:
        return
    graph = _Graph(obj._tree_root() if isinstance(obj, Checkpoint) else obj)
    for path in list(pending):
        var = graph.variables.get(path)
        if var is not None:
            value = pending.pop(path)
            _check_shape(path, var, value)
            # Not through assign: this may run while a tf.function is traced (a lazy build),
            # and a restore is not a write of the traced step but the Variable's initial value.
            _state.initialize(var, _as_value(var, value))
            continue
        owner, rest = graph.owner(path)
        if isinstance(owner, _RootView):
            owner = owner._ckpt
        if owner is not None and owner is not obj:
            value = pending.pop(path)
            _defer(owner, rest, value)
            _apply_deferred(owner)
    if not pending:
        try:
            del obj._deferred_restore
        except AttributeError:
            pass


class _Pending(dict):
    """Checkpoint values kept on an object for Variables it does not have yet ({path: value});
    ``tf.Module.__setattr__`` calls ``apply`` when an attribute is set."""

    def apply(self, owner):
        _apply_deferred(owner)


def _defer(obj, path, value):
    pending = obj.__dict__.get("_deferred_restore")
    if pending is None:
        pending = _Pending()
        try:
            obj._deferred_restore = pending
        except AttributeError:
            obj.__dict__["_deferred_restore"] = pending
    pending[path] = value


# ---------------------------------------------------------------------------
# Reading and writing one checkpoint directory
# ---------------------------------------------------------------------------

def _key(path):
    """TensorFlow's checkpoint key of the value at an object path."""
    return path if f"/{_ATTRIBUTES}/" in f"/{path}" else f"{path}/{_ATTRIBUTES}/VARIABLE_VALUE"


_MULT = np.uint32(2654435761)
_CHUNK = 1 << 20


def _block_checksum(block, starts, shape):
    """Checksum of the elements of ``block``, which sits at ``starts`` in an array of ``shape``.

    Each 32-bit word of the data is multiplied by an odd weight derived from its
    position in the whole array and the products are summed modulo 2**32: a flipped
    bit always changes the sum, and the sums of the blocks of a sharded array add
    up to the checksum of the whole, however it is split.
    """
    if len(shape) == 0:
        block, starts, shape = np.reshape(block, 1), (0,), (1,)
    block = np.ascontiguousarray(block)
    if block.size == 0:
        return 0
    size = block.dtype.itemsize
    words_per = size // 4 if size >= 4 else 1
    view = np.uint32 if size >= 4 else (np.uint16 if size == 2 else np.uint8)
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    inner = np.zeros(block.shape[1:], np.uint32)
    for k in range(1, block.ndim):
        pos = (np.arange(block.shape[k], dtype=np.uint64) + starts[k]) * strides[k]
        inner = inner + pos.astype(np.uint32).reshape((-1,) + (1,) * (block.ndim - 1 - k))
    inner = (inner.reshape(-1, 1) * np.uint32(words_per)
             + np.arange(words_per, dtype=np.uint32)).reshape(-1)
    data = block.reshape(block.shape[0], -1).view(view)
    rows = max(1, _CHUNK // inner.size)
    step = np.uint32((strides[0] * words_per) % 2**32)
    total = 0
    for r0 in range(0, block.shape[0], rows):
        r = np.arange(r0, min(block.shape[0], r0 + rows), dtype=np.uint32) + np.uint32(starts[0] % 2**32)
        weights = ((r * step)[:, None] + inner[None, :]) * _MULT | np.uint32(1)
        total += int(np.sum(data[r0:r0 + len(r)].astype(np.uint32) * weights, dtype=np.uint32))
    return total % 2**32


def _checksum(x):
    """The checksum of an array (NumPy or jax, sharded or not) from its addressable shards:
    no shard is gathered to one host."""
    if not isinstance(x, jax.Array):
        return _block_checksum(np.asarray(x), (0,) * np.ndim(x), np.shape(x))
    total = 0
    for shard in x.addressable_shards:
        if shard.replica_id != 0:
            continue
        starts = tuple(s.start or 0 for s in shard.index)
        total += _block_checksum(np.asarray(shard.data), starts, x.shape)
    return total % 2**32


def _tree_set(tree, parts, value):
    for part in parts[:-1]:
        tree = tree.setdefault(part, {})
    tree[parts[-1]] = value


def _tree_get(tree, key):
    if isinstance(key, str):   # version 1: flat keys v0, v1, ...
        return tree[key]
    for part in key:
        tree = tree[part]
    return tree


_CHECKSUMS = "checksums.json"


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
            _swap_into_place(target, path)
        if then is not None:
            then()

    (writer or _Writer()).run(save, path, lambda: ckptr.save(target, args=save.args), ckptr.wait_until_finished,
                              lambda: target, done, background)


def _write(root, path, extra_index=None, variables=None):
    """Writes the Variables below ``root`` (or ``variables``: {path: Variable}) to the
    directory ``path``, atomically and synchronously. Returns the absolute path."""
    kinds = {}
    if variables is None:
        graph = _Graph(root)
        variables, kinds, aliases = graph.variables, graph.kinds, graph.aliases
    else:
        aliases = {}
    path = os.path.abspath(os.fspath(path))
    _write_dir(path, _payload(variables, kinds, extra_index, aliases))
    return path


def _swap_into_place(new, dest):
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


def _missing(path):
    d = os.path.dirname(os.path.abspath(path)) or "."
    hint = ""
    if os.path.isdir(path) and os.path.exists(os.path.join(path, _STATE_FILE)):
        hint = (f" '{path}' is a directory of checkpoints: pass one checkpoint, e.g. "
                f"checkpoint.restore(tf.train.latest_checkpoint({path!r})).")
    elif os.path.isdir(d):
        found = latest_checkpoint(d)
        if found:
            hint = f" The latest checkpoint in that directory is {found!r}."
    return NotFoundError(
        f"Failed to find any matching files for {path!r}: no checkpoint was written there.{hint} "
        "Pass the path returned by checkpoint.save(...) or tf.train.latest_checkpoint(directory).")


def _read_index(path):
    path = os.path.abspath(os.fspath(path))
    if not os.path.isdir(path) or not os.path.isdir(os.path.join(path, "index")):
        raise _missing(path)
    ocp = _ocp()
    try:
        r = ocp.Checkpointer(ocp.CompositeCheckpointHandler()).restore(
            path, args=ocp.args.Composite(index=ocp.args.JsonRestore()))
        index = r["index"]
    except NotFoundError:
        raise
    except Exception as e:  # orbax / json / tensorstore errors of a damaged checkpoint
        raise DataLossError(f"Unable to read the checkpoint index at {path!r}: {type(e).__name__}: {e}. "
                            "The checkpoint is corrupted or was not written by tapejax; restore an "
                            "earlier one (manager.checkpoints lists them).") from e
    _check_index(path, index)
    return index


def _np_dtype(name):
    import ml_dtypes   # bfloat16, float8 & co.: NumPy does not know them by name
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


_MAX_RANK = 64


def _value_dtype(name):
    """The NumPy dtype a checkpoint's index names, or None when it names no array dtype
    (a Variable holds numbers and booleans: never Python objects, strings or records)."""
    if not isinstance(name, str):
        return None
    try:
        dt = _np_dtype(name)
    except (TypeError, ValueError, AttributeError):
        return None
    if dt.kind in "biufc" or (dt.kind == "V" and dt.names is None and dt.type.__module__.startswith("ml_dtypes")):
        return dt if str(dt) == name else None
    return None


def _is_name(x):
    """A file or key name: a non-empty string that names nothing above its folder."""
    return isinstance(x, str) and x not in ("", ".", "..") and "/" not in x and "\\" not in x and "\0" not in x


def _check_index(path, index):
    """Raises DataLossError naming the field of ``path``'s index that has the wrong form: the
    index comes from a file, and a file is not trusted."""
    where = os.path.join(path, "index", "metadata")

    def bad(field, problem):
        raise DataLossError(f"The checkpoint index {where!r} is corrupted: {field} {problem}. Restore an "
                            "earlier checkpoint (manager.checkpoints lists them).")

    if not isinstance(index, dict):
        bad("the index", f"is a JSON {type(index).__name__}, not an object")
    version = index.get("version", 1)
    if type(version) is not int or not 1 <= version <= _INDEX_VERSION:
        bad("'version'", f"is {version!r}, not a version from 1 to {_INDEX_VERSION}")
    entries = index.get("variables")
    if not isinstance(entries, dict):
        bad("'variables'", "is missing" if entries is None else f"is a JSON {type(entries).__name__}, not an object")
    for field in ("kinds", "aliases"):
        value = index.get(field, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            bad(f"'{field}'", "is not an object of strings")
    checksums = index.get("checksums")
    if checksums is not None and not _is_name(checksums):
        bad("'checksums'", f"is {checksums!r}, not the name of a file in the checkpoint folder")
    for p, e in entries.items():
        field = f"'variables' entry {p!r}"
        if not isinstance(e, dict):
            bad(field, f"is a JSON {type(e).__name__}, not an object")
        for k in ("key", "shape", "dtype"):
            if k not in e:
                bad(field, f"has no {k!r}")
        shape, key = e["shape"], e["key"]
        if (not isinstance(shape, list) or len(shape) > _MAX_RANK
                or not all(type(d) is int and d >= 0 for d in shape)):
            bad(f"{field} 'shape'", f"is {shape!r}, not a list of at most {_MAX_RANK} sizes >= 0")
        if _value_dtype(e["dtype"]) is None:
            bad(f"{field} 'dtype'", f"is {e['dtype']!r}, not a numeric or boolean dtype name")
        if key is None:
            # No data files hold it: only an empty value has its shape and dtype as its whole value.
            if math.prod(shape) != 0:
                bad(field, f"has no stored value ('key': null) but shape {shape} (an empty value has size 0)")
        elif not (_is_name(key) if isinstance(key, str) else
                  isinstance(key, list) and key and all(_is_name(k) for k in key)):
            bad(f"{field} 'key'", f"is {key!r}, not null or a list of names")
        if not isinstance(e.get("name", ""), str) or not isinstance(e.get("trainable", True), bool):
            bad(field, "has a 'name' that is not a string or a 'trainable' that is not a boolean")


def _read_values(path, index, targets=None):
    """{object path: array} of a checkpoint directory, each value checked against its checksum.

    ``targets`` ({object path: Variable}): values of those Variables come back as jax
    Arrays in the Variables' layouts (each shard read by its device); the rest as NumPy.
    ``index`` has been checked by ``_check_index``; the shape and dtype of each value are
    checked against what the data files hold before anything is allocated.
    """
    path = os.path.abspath(os.fspath(path))
    entries = index["variables"]
    out = {p: np.zeros(e["shape"], _np_dtype(e["dtype"])) for p, e in entries.items() if e["key"] is None}
    stored = {p: e for p, e in entries.items() if e["key"] is not None}
    if not stored:
        return out
    ocp = _ocp()
    targets = targets or {}
    data_dir = os.path.join(path, "state")

    def lost(what, e=None):
        return DataLossError(f"Unable to read the values of the checkpoint {path!r} (data files under "
                             f"{data_dir!r}): {what}{f': {type(e).__name__}: {e}' if e is not None else ''}. "
                             "The checkpoint is corrupted (truncated or modified files); restore an earlier "
                             "one (manager.checkpoints lists them).")

    keys = {p: e["key"] if not isinstance(e["key"], str) else [e["key"]] for p, e in stored.items()}
    try:   # the shapes and dtypes the data files hold (their metadata; no value is read)
        from etils import epath
        handler = ocp.PyTreeCheckpointHandler()
        try:
            held = handler.metadata(epath.Path(data_dir)).tree
        finally:
            handler.close()
    except Exception as e:
        raise lost("their metadata is unreadable", e) from e
    restore_args = {}
    for p, e in stored.items():
        try:
            meta = _tree_get(held, keys[p])
            shape, dtype = tuple(meta.shape), np.dtype(meta.dtype)
        except (KeyError, TypeError, AttributeError, IndexError):
            raise DataLossError(f"The checkpoint {path!r} has no stored value for '{_key(p)}' (its data "
                                f"files under {data_dir!r} are incomplete).") from None
        if list(shape) != e["shape"] or str(dtype) != e["dtype"]:
            # Checked before reading: a declared shape is never allocated unless the files hold it.
            raise DataLossError(
                f"The value of '{_key(p)}' in {data_dir!r} is {dtype}{list(shape)}, its index "
                f"({os.path.join(path, 'index')!r}) says {e['dtype']}{e['shape']}: the checkpoint is corrupted.")
        var = targets.get(p)
        sharding = getattr(var._stored, "sharding", None) if var is not None else None
        if sharding is not None and list(var.shape) == list(e["shape"]):
            arg = ocp.ArrayRestoreArgs(sharding=sharding)
        else:
            arg = ocp.RestoreArgs(restore_type=np.ndarray)
        _tree_set(restore_args, keys[p], arg)
    sums = {}
    if index.get("checksums"):
        sums_file = os.path.join(path, index["checksums"])
        try:
            with open(sums_file) as fh:
                sums = json.load(fh)
        except (OSError, ValueError) as e:
            raise DataLossError(f"The checkpoint {path!r} has no readable {index['checksums']} ({e}): its save "
                                "did not finish. Restore an earlier one (manager.checkpoints lists them).") from e
        if not isinstance(sums, dict):
            raise DataLossError(f"The checksums file {sums_file!r} is corrupted: it holds a JSON "
                                f"{type(sums).__name__}, not an object. Restore an earlier checkpoint.")
    try:
        r = ocp.Checkpointer(ocp.CompositeCheckpointHandler()).restore(
            path, args=ocp.args.Composite(state=ocp.args.PyTreeRestore(restore_args=restore_args)))
        state = r["state"]
    except Exception as e:
        raise lost("orbax failed", e) from e
    for p, e in stored.items():
        try:
            arr = _tree_get(state, keys[p])
        except (KeyError, TypeError):
            raise DataLossError(f"The checkpoint {path!r} has no stored value for '{_key(p)}' (its data "
                                f"files under {data_dir!r} are incomplete).") from None
        if list(arr.shape) != e["shape"] or str(arr.dtype) != e["dtype"]:
            raise DataLossError(f"The value of '{_key(p)}' in {data_dir!r} is {arr.dtype}{list(arr.shape)}, "
                                f"its index says {e['dtype']}{e['shape']}: the checkpoint is corrupted.")
        if index.get("checksums"):
            got, want = _checksum(arr), sums.get(p)
            if got != want or type(want) is not int:
                raise DataLossError(
                    f"Checksum mismatch for '{_key(p)}' (variable '{e.get('name')}') in the checkpoint data "
                    f"files under {data_dir!r}: stored {f'{want:#010x}' if type(want) is int else repr(want)}, "
                    f"read {got:#010x}. The files were modified or damaged on disk; restore an earlier "
                    "checkpoint (manager.checkpoints lists them).")
        out[p] = arr
    return out


class CheckpointLoadStatus:
    """What a restore matched; returned by ``Checkpoint.restore`` / ``read``."""

    def __init__(self, path, unmatched, unrestored, deferred, matched):
        self._path = path
        self._unmatched = unmatched       # checkpoint paths with no object at all
        self._unrestored = unrestored     # existing Variables the checkpoint had no value for
        self._deferred = deferred         # checkpoint paths waiting for their Variable
        self._matched = matched

    def expect_partial(self):
        """Silences the check that everything matched; returns the status."""
        return self

    def assert_consumed(self):
        """Raises AssertionError unless every value was used and every Variable restored.

        Values deferred to Variables that have been created since count as used.
        """
        deferred = [p for p in self._deferred if _still_pending(p)]
        problems = []
        if self._unmatched or deferred:
            problems.append("values in the checkpoint with no matching Variable: "
                            + ", ".join(sorted(self._unmatched + [str(d) for d in deferred])))
        if self._unrestored:
            problems.append("Variables with no value in the checkpoint: " + ", ".join(self._unrestored))
        if problems:
            raise AssertionError(
                f"Restoring {self._path!r} did not match the objects exactly: " + "; ".join(problems)
                + ". Save and restore the same structure (same attribute names), build the model before "
                "asserting, or use checkpoint.restore(path).expect_partial() for a partial restore.")
        return self

    def assert_existing_objects_matched(self):
        """Raises AssertionError if an existing Variable got no value from the checkpoint.

        Checkpoint values for objects that do not exist here are allowed (a partial
        restore into a smaller structure), as in TensorFlow.
        """
        if self._unrestored:
            raise AssertionError(
                f"Restoring {self._path!r}: Variables with no value in the checkpoint: "
                f"{', '.join(self._unrestored)}. The checkpoint holds: "
                f"{', '.join(sorted(self._matched + self._unmatched)) or 'nothing'}. It was written by a "
                "different model, or attribute names changed.")
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError if nothing at all was restored."""
        if not self._matched and not self._deferred:
            raise AssertionError(f"Nothing in {self._path!r} matched the objects being restored.")
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: values are assigned eagerly (kept for TF1-style code)."""

    def initialize_or_restore(self, session=None):
        """Nothing to run: values are assigned eagerly (kept for TF1-style code)."""


def _restore(root, path):
    index = _read_index(path)
    graph = _Graph(root)
    values = _read_values(path, index, targets=graph.variables)
    found = dict(graph.variables)
    missing = [p for p in graph.variables if p not in values]
    if missing and index.get("aliases"):
        # Variables saved under another path (the same Variable in a list and a dict).
        saved = _Graph.__new__(_Graph)
        saved.aliases = index["aliases"]
        other = saved.paths_of(set(values))
        mine = graph.paths_of(set(missing))
        missing = set(missing)
        for alt, p in list(other.items()) + [(p, p) for p in values]:
            q = alt if alt in missing else mine.get(alt)   # a missing Variable's path
            if q is not None and p not in found:
                found[p] = graph.variables[q]
    matched, unmatched, deferred = [], [], []
    assignments, problems = [], []
    for p, value in values.items():
        var = found.get(p)
        if var is not None:
            problem = _mismatch(p, var, value)
            if problem:
                problems.append(problem)
            assignments.append((var, value))
            matched.append(p)
            continue
        owner, rest = graph.owner(p)
        if isinstance(owner, _RootView):
            owner = owner._ckpt
        if owner is None:
            unmatched.append(p)
        else:   # assigned when the Variable appears (a build, an attribute set later)
            deferred.append((owner, rest, p))
    # Everything is checked before anything is assigned: a failed restore changes nothing.
    if problems:
        _raise_mismatches(problems, repr(os.fspath(path)))
    for var, value in assignments:
        var._set(_as_value(var, value))
    for owner, rest, p in deferred:
        _defer(owner, rest, values[p])
    restored = {id(found[p]) for p in matched}
    # The save counter is bookkeeping: a checkpoint from write() has none, and that is fine.
    unrestored = [p for p, v in graph.variables.items() if id(v) not in restored and p != "save_counter"]
    real = [p for p in matched if p != "save_counter"]
    if not real and unrestored:
        warnings.warn(
            f"Nothing in the checkpoint {os.fspath(path)!r} matched: it holds "
            f"{', '.join(sorted(values)[:8])}{' ...' if len(values) > 8 else ''} while the objects have "
            f"{', '.join(unrestored[:8])}{' ...' if len(unrestored) > 8 else ''}. Restore with the same "
            "structure (attribute names) as the save; status.assert_consumed() lists every difference.",
            stacklevel=3)
    return CheckpointLoadStatus(os.fspath(path), unmatched, unrestored,
                   [_PendingRef(owner, rest, p) for owner, rest, p in deferred], matched)


class _PendingRef:
    __slots__ = ("owner", "rest", "path")

    def __init__(self, owner, rest, path):
        self.owner, self.rest, self.path = owner, rest, path

    def __lt__(self, other):
        return str(self) < str(other)

    def __str__(self):
        return self.path


def _still_pending(ref):
    pending = getattr(ref.owner, "__dict__", {}).get("_deferred_restore") or {}
    return ref.rest in pending


# ---------------------------------------------------------------------------
# The checkpoint state file of a directory ("checkpoint", TensorFlow's format)
# ---------------------------------------------------------------------------

def _read_state(directory):
    """(latest, [paths], [timestamps], last_preserved_timestamp) of a directory's state file;
    relative paths are joined to ``directory`` as given (relative stays relative)."""
    f = os.path.join(os.fspath(directory), _STATE_FILE)
    if not os.path.exists(f):
        return None, [], [], None
    latest, paths, stamps, preserved = None, [], [], None
    try:
        with open(f, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        for n, line in enumerate(lines, 1):
            m = re.match(r'\s*(\w+)\s*:\s*"?(.*?)"?\s*$', line)
            if not m:
                continue
            key, value = m.groups()
            if key == "model_checkpoint_path":
                latest = value
            elif key == "all_model_checkpoint_paths":
                paths.append(value)
            elif key == "all_model_checkpoint_timestamps":
                stamps.append(float(value))
            elif key == "last_preserved_timestamp":
                preserved = float(value)
    except (OSError, ValueError) as e:   # UnicodeDecodeError, float('garbage')
        raise DataLossError(f"Unable to parse the checkpoint state file {f!r}: {type(e).__name__}: {e}. It is "
                            "corrupted: delete it (the checkpoints next to it stay restorable by path).") from e
    join = lambda p: p if os.path.isabs(p) else os.path.join(os.fspath(directory), p)  # noqa: E731
    return (join(latest) if latest else None), [join(p) for p in paths], stamps, preserved


def _is_inside(directory, path):
    """Whether ``path`` is an entry of ``directory`` itself (links resolved): what a manager may adopt and delete."""
    return (os.path.dirname(os.path.realpath(os.path.abspath(path)))
            == os.path.realpath(os.path.abspath(directory))) and os.path.basename(path) not in ("", ".", "..")


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


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The path of the newest checkpoint saved in a directory, or None.

    Args:
        checkpoint_dir: the directory given to ``CheckpointManager`` or holding
            the prefixes passed to ``Checkpoint.save``.

    Returns:
        A path for ``Checkpoint.restore`` (relative when ``checkpoint_dir`` is), or
        ``None`` when there is none.

    Example:
        >>> import tempfile, tapejax as tf
        >>> d = tempfile.mkdtemp()
        >>> print(tf.train.latest_checkpoint(d))
        None
        >>> path = tf.train.Checkpoint(v=tf.Variable(1.0)).save(d + '/ckpt')
        >>> tf.train.latest_checkpoint(d) == path
        True
    """
    latest = _read_state(checkpoint_dir)[0]
    if latest is None or not os.path.isdir(latest):
        return None
    return latest


def _resolve(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path) and os.path.exists(os.path.join(path, _STATE_FILE)):
        latest = latest_checkpoint(path)
        if latest is None:
            raise _missing(path)
        return latest
    return path


class CheckpointReader:
    """What ``tf.train.load_checkpoint`` returns: a checkpoint's keys, shapes, dtypes, values.

    Example:
        >>> import tempfile, tapejax as tf
        >>> path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).save(tempfile.mkdtemp() + '/ckpt')
        >>> reader = tf.train.load_checkpoint(path)
        >>> reader.get_variable_to_shape_map()['v/.ATTRIBUTES/VARIABLE_VALUE']
        [2]
        >>> reader.get_tensor('v/.ATTRIBUTES/VARIABLE_VALUE')
        array([1., 2.], dtype=float32)
    """

    _GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"

    def __init__(self, path):
        self._path = _resolve(path)
        self._index = _read_index(self._path)
        self._paths = {_key(p): p for p in self._index["variables"]}
        self._values = None

    def _entry(self, key):
        if key == self._GRAPH_KEY:
            return {"shape": [], "dtype": "string"}
        if key not in self._paths:
            guess = _key(key) if _key(key) in self._paths else None
            raise NotFoundError(f"Key {key} not found in checkpoint"
                                + (f". Its key is {guess!r}" if guess else
                                   f" {self._path!r} (tf.train.list_variables lists its keys)"))
        return self._index["variables"][self._paths[key]]

    def has_tensor(self, key):
        return key == self._GRAPH_KEY or key in self._paths

    def get_variable_to_shape_map(self):
        """{key: shape as a list}."""
        return {k: list(self._entry(k)["shape"]) for k in self._keys()}

    def get_variable_to_dtype_map(self):
        """{key: tf.DType}."""
        return {k: _dtypes.string if k == self._GRAPH_KEY else _dtypes.as_dtype(_np_dtype(self._entry(k)["dtype"]))
                for k in self._keys()}

    def _keys(self):
        return [self._GRAPH_KEY] + sorted(self._paths)

    def get_tensor(self, key):
        """The value stored under ``key`` (a NumPy array; the object graph: its JSON as bytes)."""
        entry = self._entry(key)
        if key == self._GRAPH_KEY:
            return json.dumps(self._index, sort_keys=True).encode()
        if self._values is None:
            self._values = _read_values(self._path, self._index)
        value = self._values[self._paths[key]]
        return value[()] if value.ndim == 0 else value


def load_checkpoint(ckpt_dir_or_file):
    """A :class:`CheckpointReader` of a checkpoint (a directory of them: the latest).

    Raises:
        tf.errors.NotFoundError: nothing is there.
    """
    return CheckpointReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file):
    """``[(key, shape)]`` of the values in a checkpoint (a directory of them: the latest).

    Example:
        >>> import tempfile, tapejax as tf
        >>> path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).save(tempfile.mkdtemp() + '/ckpt')
        >>> tf.train.list_variables(path)
        [('_CHECKPOINTABLE_OBJECT_GRAPH', []), ('save_counter/.ATTRIBUTES/VARIABLE_VALUE', []), ('v/.ATTRIBUTES/VARIABLE_VALUE', [2])]
    """
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """The value (a NumPy array) stored under the key ``name`` (see ``list_variables``).

    Example:
        >>> import tempfile, tapejax as tf
        >>> path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).save(tempfile.mkdtemp() + '/ckpt')
        >>> tf.train.load_variable(path, 'v/.ATTRIBUTES/VARIABLE_VALUE').tolist()
        [1.0, 2.0]
    """
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------

class CheckpointOptions:
    """Options of ``Checkpoint.save/write/restore`` and ``CheckpointManager.save``.

    Args:
        experimental_enable_async_checkpoint: (or ``enable_async``) saves return as
            soon as the values are copied; the files are written in the background
            (orbax's async checkpointing). The next save or restore, or ``sync()``,
            waits for it.
        experimental_write_callbacks: functions called with the path of each
            checkpoint once it is written.

    Example:
        >>> import tempfile, tapejax as tf
        >>> ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
        >>> options = tf.train.CheckpointOptions(experimental_enable_async_checkpoint=True)
        >>> path = ckpt.save(tempfile.mkdtemp() + '/ckpt', options=options)
        >>> ckpt.sync()   # the files are complete from here on
    """

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False, experimental_sharding_callback=None,
                 experimental_skip_slot_variables=False):
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = experimental_enable_async_checkpoint
        self.enable_async = enable_async
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_sharding_callback = experimental_sharding_callback
        self.experimental_skip_slot_variables = experimental_skip_slot_variables


def _is_async(options):
    return bool(options is not None and (options.experimental_enable_async_checkpoint or options.enable_async))


def _callbacks(options, path):
    for fn in (getattr(options, "experimental_write_callbacks", None) or ()):
        fn(path)


class Checkpoint:
    """Saves and restores the Variables of a group of objects, by object path.

    Args:
        root: optional object whose children become the checkpoint's top level.
        **kwargs: the objects to track (models, layers, optimizers, metrics,
            Modules, Variables, lists / dicts of them, other Checkpoints,
            ``tf.random.Generator``, dataset iterators).

    Example:
        >>> import tempfile, tapejax as tf
        >>> class Net(tf.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = tf.Variable([1.0, 2.0])
        >>> net = Net()
        >>> ckpt = tf.train.Checkpoint(model=net)
        >>> path = ckpt.save(tempfile.mkdtemp() + '/ckpt')
        >>> path.endswith('ckpt-1')
        True
        >>> _ = net.w.assign([0.0, 0.0])
        >>> ckpt.restore(path).assert_consumed()  # doctest: +ELLIPSIS
        <...>
        >>> net.w.numpy().tolist()
        [1.0, 2.0]
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_objects", {})
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_writer", _Writer())
        for k, v in kwargs.items():
            if v is None:
                continue
            self._check_trackable(k, v)
            self._objects[k] = _wrap(v, self)

    @staticmethod
    def _check_trackable(name, value):
        if type(value) in (list, dict) and not value:
            return   # filled later (TensorFlow's ListWrapper / DictWrapper)
        if (type(value).__module__ or "").startswith("tapejax.data"):
            return   # a Dataset: trackable in TensorFlow, with nothing to save (its iterators have)
        if not _holds_trackable(value):
            raise ValueError(
                f"`Checkpoint` was expecting {name} to be a trackable object (an object derived from "
                f"tf.Module, a Keras model/layer/optimizer/metric, or a tf.Variable), got {value!r}. "
                "If you believe this object should be trackable (i.e. it is part of the TensorFlow "
                "Python API and manages state), store its Variables as attributes of a tf.Module.")

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"'Checkpoint' object has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        self._check_trackable(name, value)
        self._objects[name] = _wrap(value, self)
        _apply_deferred(self)   # values of an earlier restore() waiting for this attribute

    def _tree_root(self):
        if self._root is None:
            return self
        return _RootView(self)

    @property
    def save_counter(self):
        """How many times ``save`` has run (a Variable, saved with the checkpoint)."""
        self._ensure_counter()
        return self._save_counter

    def _ensure_counter(self):
        if self._save_counter is None:
            object.__setattr__(self, "_save_counter",
                               Variable(0, dtype="int32", trainable=False, name="save_counter"))

    def _payload(self):
        graph = _Graph(self._tree_root())
        return _payload(graph.variables, graph.kinds, aliases=graph.aliases)

    def _write(self, file_prefix, options, then=None):
        path = os.fspath(file_prefix)
        self._writer.sync()

        def done():
            if then is not None:
                then()
            _callbacks(options, path)

        _write_dir(os.path.abspath(path), self._payload(), self._writer, _is_async(options), done)
        return path

    def write(self, file_prefix, options=None):
        """Writes a checkpoint to exactly ``file_prefix`` (no numbering, no state file).

        Returns:
            ``file_prefix``, for ``read``.
        """
        return self._write(file_prefix, options)

    def save(self, file_prefix, options=None):
        """Saves a numbered checkpoint ``{file_prefix}-{n}`` and records it as the latest.

        Returns:
            The path of the checkpoint (relative when ``file_prefix`` is), for ``restore``.
        """
        self._writer.sync()
        self._ensure_counter()
        self._save_counter.assign_add(1)
        path = f"{os.fspath(file_prefix)}-{int(self._save_counter.numpy())}"
        directory = os.path.dirname(path) or "."
        try:
            self._write(path, options, lambda: _write_state(directory, path, [path]))
        except BaseException:
            self._save_counter.assign_sub(1)
            raise
        return path

    def sync(self):
        """Waits for a save started with async checkpointing; raises its error if it failed."""
        self._writer.sync()

    def read(self, save_path, options=None):
        """Restores from ``save_path`` (the counterpart of ``write``); returns a status."""
        return self.restore(save_path, options)

    def restore(self, save_path, options=None):
        """Restores the tracked Variables from ``save_path``.

        Variables that exist get their values now; values for Variables not
        created yet (an unbuilt model, optimizer slots before the first step, an
        attribute assigned later) are assigned when those are created.

        Args:
            save_path: a path returned by ``save``/``write`` or
                ``tf.train.latest_checkpoint``; ``None`` does nothing.

        Returns:
            A status with ``assert_consumed()``, ``assert_existing_objects_matched()``,
            ``expect_partial()``.

        Raises:
            tf.errors.NotFoundError (also FileNotFoundError): no checkpoint at ``save_path``.
            ValueError: a checkpoint value whose shape differs from its Variable's.
            tf.errors.DataLossError (also a ValueError): a corrupted checkpoint (a
                checksum that does not match names the value and the files).
        """
        self._writer.sync()
        if save_path is None:
            return CheckpointLoadStatus(None, [], [], [], [])
        self._ensure_counter()
        return _restore(self._tree_root(), os.fspath(save_path))


class _RootView:
    """A Checkpoint built with ``root=``: the root's children are the top level."""

    def __init__(self, ckpt):
        self._ckpt = ckpt

    def _trackable_children(self):
        c = self._ckpt
        out = dict(_children(c._root))
        out.update(sorted(c._objects.items()))
        if c._save_counter is not None:
            out["save_counter"] = c._save_counter
        return out


def _now():
    """The clock of CheckpointManager's retention (TensorFlow's time.time())."""
    return time.time()


def _evaluate(x):
    return int(np.asarray(x.numpy() if hasattr(x, "numpy") else x))


@dataclasses.dataclass(frozen=True)
class _StepNames:
    """Orbax's step naming for TensorFlow's ``{checkpoint_name}-{number}`` directories."""

    prefix: str

    def build_name(self, step):
        return f"{self.prefix}-{step}"

    def _metadata(self, path):
        from orbax.checkpoint.path import step as step_lib
        m = re.fullmatch(re.escape(self.prefix) + r"-(\d+)", path.name)
        if m and path.is_dir():
            return step_lib.Metadata(step=int(m.group(1)), path=path)
        return None

    # orbax (and etils, its path library) load when a manager first saves: importing them
    # costs about a second (see _ocp).
    def find_all(self, base_path):
        from etils import epath
        from orbax.checkpoint.path import step as step_lib
        return step_lib.build_step_metadatas(epath.Path(base_path).iterdir(), self._metadata)

    def find_step(self, base_path, step):
        from etils import epath
        found = self._metadata(epath.Path(base_path) / self.build_name(step))
        if found is None:
            raise ValueError(f"No checkpoint {self.build_name(step)!r} in {base_path}.")
        return found


class CheckpointManager:
    """Keeps the last ``max_to_keep`` numbered checkpoints in a directory (saved through
    orbax's ``CheckpointManager``).

    Args:
        checkpoint: the ``tf.train.Checkpoint`` to save.
        directory: where checkpoints and the ``checkpoint`` state file go.
        max_to_keep: how many to keep (``None`` keeps all).
        keep_checkpoint_every_n_hours: of the checkpoints leaving the kept set,
            keep one each this many hours (they leave ``checkpoints`` but stay on disk).
        checkpoint_name: file name prefix (``ckpt``).
        step_counter: a Variable counting steps, read when ``checkpoint_interval`` is set.
        checkpoint_interval: ``save()`` does nothing until ``step_counter`` has moved
            this many steps since the last checkpoint (``save(check_interval=False)``
            saves anyway, unless the step has a checkpoint already).
        init_fn: what ``restore_or_initialize`` runs when there is no checkpoint.

    The ``checkpoint`` state file is not trusted: paths in it that lead outside ``directory``
    are ignored (with a logged warning), so a manager never restores nor deletes anything there.

    Example:
        >>> import tempfile, tapejax as tf
        >>> v = tf.Variable(0.0)
        >>> manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), tempfile.mkdtemp(), max_to_keep=2)
        >>> for step in range(3):
        ...     _ = v.assign_add(1.0)
        ...     _ = manager.save()
        >>> [p.rsplit('/', 1)[-1] for p in manager.checkpoints]
        ['ckpt-2', 'ckpt-3']
        >>> manager.latest_checkpoint.endswith('ckpt-3')
        True
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None,
                 last_checkpoint_step=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager needs a tf.train.Checkpoint, got {type(checkpoint).__name__}: "
                            "write tf.train.CheckpointManager(tf.train.Checkpoint(model=model), directory).")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._abs_directory = os.path.abspath(self._directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._name = checkpoint_name
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._last_checkpoint_step = last_checkpoint_step
        self._orbax_manager = None
        os.makedirs(self._abs_directory, exist_ok=True)
        _clean_tmp(self._abs_directory)
        latest, paths, stamps, preserved = _read_state(self._directory)
        # The state file is not trusted: a path outside the directory is never adopted (nor deleted).
        outside = [p for p in [latest] + paths if p is not None and not _is_inside(self._abs_directory, p)]
        if outside:
            _log.warning("Ignoring checkpoint paths outside the manager's directory %r in its state file %r: %s",
                         self._directory, os.path.join(self._directory, _STATE_FILE), outside)
            if stamps and len(stamps) == len(paths):
                stamps = [t for p, t in zip(paths, stamps) if p not in outside]
            paths = [p for p in paths if p not in outside]
            latest = None if latest in outside else latest
        now = _now()
        self._maybe_delete = collections.OrderedDict()
        if latest is None and not paths:
            self._latest = None
            self._last_preserved = now - 1.0
        else:
            self._latest = latest if latest is not None and os.path.isdir(latest) else None
            self._last_preserved = min(preserved if preserved is not None else now - 1.0, now)
            stamps = stamps if len(stamps) == len(paths) else [self._last_preserved] * len(paths)
            for p, t in zip(paths, stamps):
                t = min(t, now)
                if t > self._last_preserved or preserved is None:
                    self._maybe_delete[p] = t

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's path (relative when ``directory`` is), or None."""
        return self._latest

    @property
    def checkpoints(self):
        """Paths of the kept checkpoints, oldest first (not those kept by
        ``keep_checkpoint_every_n_hours``)."""
        return list(self._maybe_delete)

    def _orbax(self):
        if self._orbax_manager is None:
            ocp = _ocp()
            options = ocp.CheckpointManagerOptions(
                step_name_format=_StepNames(self._name), enable_async_checkpointing=True,
                save_root_metadata=False, create=True)
            self._orbax_manager = ocp.CheckpointManager(self._abs_directory, options=options)
        return self._orbax_manager

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Saves a checkpoint numbered ``checkpoint_number`` (default: the save counter).

        Deletes the oldest beyond ``max_to_keep`` once it is written. With async
        checkpointing (``options``) this returns before the files are complete.

        Returns:
            Its path, or None when ``checkpoint_interval`` says it is not time yet.
        """
        if self._checkpoint_interval is not None:
            step = _evaluate(self._step_counter)
            if self._last_checkpoint_step is not None:
                if step == self._last_checkpoint_step:
                    return None
                if check_interval and step < self._last_checkpoint_step + self._checkpoint_interval:
                    return None
            self._last_checkpoint_step = step
        ckpt = self._checkpoint
        ckpt._writer.sync()
        ckpt._ensure_counter()
        ckpt._save_counter.assign_add(1)
        number = _evaluate(ckpt._save_counter if checkpoint_number is None else checkpoint_number)
        path = f"{self._prefix}-{number}"
        try:
            args = ckpt._payload()
            _clean_tmp(self._abs_directory)
            mgr = self._orbax()
            if os.path.exists(os.path.abspath(path)):
                # A number saved before (a restart from an older checkpoint): TensorFlow overwrites it,
                # and orbax writes no step twice. The one overwrite that is not atomic.
                _delete_checkpoint(os.path.abspath(path))
            mgr.reload()

            def done():
                self._record_and_sweep(path)
                _callbacks(options, path)

            final = os.path.abspath(path)
            ckpt._writer.run(args, final, lambda: mgr.save(number, args=args.args, force=True),
                             mgr.wait_until_finished, lambda: final, done, _is_async(options))
        except BaseException:
            ckpt._save_counter.assign_sub(1)
            raise
        return path

    def _record_and_sweep(self, path):
        """TensorFlow's retention: the newest ``max_to_keep`` stay; of those leaving, one every
        ``keep_checkpoint_every_n_hours`` is kept on disk. The state file is written before
        anything is deleted."""
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = _now()
        self._latest = path
        doomed = []
        if self._max_to_keep:
            while len(self._maybe_delete) > self._max_to_keep:
                old, stamp = self._maybe_delete.popitem(last=False)
                if self._keep_hours and stamp - self._keep_hours * 3600.0 >= self._last_preserved:
                    self._last_preserved = stamp
                    continue
                doomed.append(old)
        _write_state(self._directory, path, list(self._maybe_delete), list(self._maybe_delete.values()),
                     self._last_preserved)
        for old in doomed:
            if _is_inside(self._abs_directory, old):
                _delete_checkpoint(os.path.abspath(old))

    def sync(self):
        """Waits for a save started with async checkpointing."""
        self._checkpoint.sync()

    def restore_or_initialize(self):
        """Restores the latest checkpoint if there is one, else runs ``init_fn``; returns the path or None."""
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = _evaluate(self._step_counter)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None


def _save_weights(model, filepath, overwrite=True, save_format=None, options=None):
    """``model.save_weights(path)``: a checkpoint with ``model`` as its root (its optimizer
    included when compiled, as TensorFlow's checkpoint format does)."""
    if not overwrite and os.path.exists(os.fspath(filepath)):
        raise FileExistsError(f"{os.fspath(filepath)!r} exists; pass overwrite=True to replace it.")
    Checkpoint(root=model).write(filepath)


def _load_weights(model, filepath, skip_mismatch=False, by_name=False, options=None):
    """``model.load_weights(path)``: restores ``save_weights`` (or the weights of a
    ``model.save`` directory); returns the restore status. An unbuilt model gets the
    values when it builds."""
    filepath = os.fspath(filepath)
    if os.path.exists(os.path.join(filepath, _KERAS_FILE)):
        filepath = os.path.join(filepath, "weights")
    return Checkpoint(root=model).read(filepath)


# ---------------------------------------------------------------------------
# Keras model files: model.save(path) / tf.keras.models.load_model(path)
# ---------------------------------------------------------------------------

_KERAS_FILE = "keras_model.json"


def _keras_compile_config(model, include_optimizer):
    opt = getattr(model, "_k_optimizer", None)
    loss = getattr(model, "_k_loss_spec", None)
    metrics = getattr(model, "_k_metric_specs", [])
    if opt is None:
        return None
    cfg = {"loss": loss if isinstance(loss, str) else None,
           "metrics": [m for m in metrics if isinstance(m, str)]}
    if include_optimizer:
        try:
            cfg["optimizer"] = json.loads(json.dumps(_optimizers.serialize(opt)))
        except (TypeError, ValueError):   # a schedule or optax transformation: not serialisable
            cfg["optimizer"] = None
    return cfg


def _keras_save_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None, **kwargs):
    """``model.save(path)``: a directory holding the model's configuration (Sequential), its
    weights (a checkpoint with the optimizer's state) and a SavedModel of its call.

    ``tf.keras.models.load_model(path)`` rebuilds a Sequential model from it;
    ``tf.saved_model.load(path)`` loads the exported call of any built model.
    """
    filepath = os.path.abspath(os.fspath(filepath))
    if os.path.exists(filepath) and not overwrite:
        raise FileExistsError(f"{filepath!r} exists; pass overwrite=True to replace it.")
    tmp = f"{filepath}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        exported = _saved_model._keras_call(model) is not None
        if exported:
            _saved_model.save(model, tmp)
        else:
            os.makedirs(tmp)
        config = model.get_config() if "layers" in (_safe_config(model) or {}) else None
        variables = _Graph(model).variables
        if not include_optimizer:
            variables = {p: v for p, v in variables.items() if not p.startswith("_k_optimizer/")}
        _write(None, os.path.join(tmp, "weights"), variables=variables)
        build_shape = getattr(model, "_k_build_shape", None)
        meta = {"format": "tapejax-keras", "version": 1, "class_name": type(model).__name__,
                "config": config, "build_shape": None if build_shape is None else list(build_shape),
                "compile": _keras_compile_config(model, include_optimizer), "saved_model": exported}
        with open(os.path.join(tmp, _KERAS_FILE), "w") as fh:
            json.dump(meta, fh)
        _swap_into_place(tmp, filepath)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _safe_config(model):
    try:
        return model.get_config()
    except Exception:  # noqa: BLE001 -- a custom model without a configuration
        return None


def _keras_load_model(filepath, custom_objects=None, compile=True, safe_mode=True, **kwargs):
    """``tf.keras.models.load_model(path)`` for directories written by ``model.save(path)``.

    The model file is untrusted: its JSON types are checked, layers are made only from Keras
    layer classes (or ``custom_objects``), and a configuration that cannot be built raises
    DataLossError (a ValueError) naming the file.
    """
    filepath = os.path.abspath(os.fspath(filepath))
    meta_file = os.path.join(filepath, _KERAS_FILE)
    if not os.path.isfile(meta_file):
        raise NotFoundError(f"No model saved at {filepath!r} (no {_KERAS_FILE}). Save it with "
                            "model.save(path) first; for weights only use model.load_weights(path).")

    def damaged(problem):
        return DataLossError(f"The model file {meta_file!r} is corrupted or was not written by model.save: "
                             f"{problem}. Save the model again.")

    try:
        with open(meta_file, "rb") as fh:
            meta = json.loads(fh.read().decode("utf-8"))
    except (ValueError, RecursionError) as e:   # JSON and UTF-8 errors are ValueErrors
        raise damaged(f"its JSON does not parse ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(meta, dict) or meta.get("format") != "tapejax-keras":
        raise damaged("it is not a tapejax Keras model description")
    config = meta.get("config")
    if config is not None and not (isinstance(config, dict) and isinstance(config.get("layers", []), list)
                                   and isinstance(config.get("name"), (str, type(None)))):
        raise damaged("'config' must be an object with a list of 'layers'")
    if not config or "layers" not in config:
        if meta.get("saved_model") is True:
            return _saved_model.load(filepath)
        raise ValueError(f"The model at {filepath!r} ({str(meta.get('class_name'))[:80]}) has no configuration "
                         "to rebuild it from: re-create it in code and call model.load_weights(path + '/weights').")
    build_shape = meta.get("build_shape")
    if build_shape is not None and not (isinstance(build_shape, list) and len(build_shape) <= 16 and all(
            d is None or (type(d) is int and 0 <= d < 2 ** 31) for d in build_shape)):
        raise damaged("'build_shape' must list sizes (non-negative integers or null)")
    comp = meta.get("compile")
    if comp is not None and not (isinstance(comp, dict) and isinstance(comp.get("loss"), (str, type(None)))
                                 and isinstance(comp.get("metrics") or [], list)
                                 and all(isinstance(m, str) for m in comp.get("metrics") or [])
                                 and isinstance(comp.get("optimizer"), (dict, type(None)))):
        raise damaged("'compile' must be an object with a loss name, metric names and an optimizer configuration")
    custom_objects = dict(custom_objects or {})
    layers = []
    for i, entry in enumerate(config["layers"]):
        if not (isinstance(entry, dict) and isinstance(entry.get("class_name"), str)
                and isinstance(entry.get("config"), dict)):
            raise damaged(f"layer {i} is not a {{'class_name': ..., 'config': {{...}}}} entry")
        name = entry["class_name"]
        cls = custom_objects.get(name) or getattr(_keras.layers, name, None)
        if not (isinstance(cls, type) and issubclass(cls, _keras.layers.Layer)):
            raise ValueError(f"Unknown layer: '{name[:80]}'. Pass it in custom_objects={{'{name[:80]}': "
                             f"{name[:80]}}}.")
        try:
            layers.append(cls.from_config(dict(entry["config"])))
        except Exception as e:  # noqa: BLE001 -- whatever a layer's constructor rejects
            raise damaged(f"layer {i} ({name}) cannot be made from its configuration ({type(e).__name__}: "
                          f"{str(e)[:200]})") from None
    try:
        model = _keras.Sequential(layers, name=config.get("name"))
        if build_shape is not None and not model.built:
            model.build(tuple(build_shape))
        if compile and comp:
            opt = comp.get("optimizer")
            model.compile(optimizer=_optimizers.deserialize(opt) if opt else "rmsprop", loss=comp.get("loss"),
                          metrics=comp.get("metrics") or None)
    except Exception as e:  # noqa: BLE001 -- a configuration whose parts do not fit together
        raise damaged(f"the model cannot be built from it ({type(e).__name__}: {str(e)[:200]})") from None
    Checkpoint(root=model).read(os.path.join(filepath, "weights")).expect_partial()
    return model
