"""tf.train: object-based checkpoints (``Checkpoint``, ``CheckpointManager``).

A checkpoint holds the values of the Variables reachable from the objects given
to :class:`Checkpoint`, keyed by their *object path*, as TensorFlow's object
graph does: ``model/dense_1/kernel``, ``optimizer/iterations``. The walk goes
through attributes of Modules, Keras layers, models, optimizers and metrics,
lists, tuples and dicts (sorted keys), and nested Checkpoints, breadth first, so
a Variable reachable by several paths is stored once under its shortest one.
An object may define ``_trackable_children()`` returning ``{name: child}`` to
replace the default walk.

Storage is orbax (one directory per checkpoint: the values as a PyTree of
NumPy arrays plus a JSON index of paths, shapes and dtypes). Orbax writes to a
temporary directory and renames it when complete, so a save that fails half way
never damages an earlier checkpoint.

Values whose Variables do not exist yet (an unbuilt Keras model, an optimizer
before its first step) are kept on the deepest existing object of their path
(``obj._deferred_restore``) and assigned when the object creates them: Keras
layers and optimizers call :func:`_apply_deferred` after building.
"""
import json
import os
import re
import shutil
import uuid
import warnings

import jax
import numpy as np

from . import _state, errors as _errors
from ._module import Module
from ._variable import Variable

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "CheckpointOptions", "list_variables",
           "load_variable"]

_STATE_FILE = "checkpoint"
_INDEX_VERSION = 1


class NotFoundError(_errors.NotFoundError, FileNotFoundError):
    """A checkpoint path that does not exist (also a ``FileNotFoundError``)."""

    def __init__(self, message):
        _errors.NotFoundError.__init__(self, None, None, message)


class DataLossError(_errors.DataLossError, ValueError):
    """A checkpoint that exists but cannot be read (truncated or corrupted files); a
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
    """A path segment: '/' inside a name must not split it (TensorFlow's escaping)."""
    return str(name).replace(".", "..").replace("/", ".S")


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
        seen = {id(root)}
        frontier = [("", root)]
        while frontier:
            nxt = []
            for path, obj in frontier:
                for name, child in _children(obj):
                    if id(child) in seen:
                        continue
                    seen.add(id(child))
                    cpath = f"{path}/{_escape(name)}" if path else _escape(name)
                    if isinstance(child, Variable):
                        self.variables[cpath] = child
                    else:
                        self.objects[cpath] = child
                        self.kinds[cpath] = _kind(child)
                        nxt.append((cpath, child))
            frontier = nxt

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
    graph = _Graph(obj)
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
        if owner is not None and owner is not obj:
            value = pending.pop(path)
            _defer(owner, rest, value)
            _apply_deferred(owner)
    if not pending:
        try:
            del obj._deferred_restore
        except AttributeError:
            pass


def _defer(obj, path, value):
    pending = obj.__dict__.get("_deferred_restore")
    if pending is None:
        pending = {}
        try:
            obj._deferred_restore = pending
        except AttributeError:
            obj.__dict__["_deferred_restore"] = pending
    pending[path] = value


# ---------------------------------------------------------------------------
# Reading and writing one checkpoint directory
# ---------------------------------------------------------------------------

def _write(root, path, extra_index=None, variables=None):
    """Writes the Variables below ``root`` (or ``variables``: {path: Variable}) to the
    directory ``path``, atomically."""
    ocp = _ocp()
    if variables is None:
        graph = _Graph(root)
        variables, kinds = graph.variables, graph.kinds
    else:
        kinds = {}
    path = os.path.abspath(os.fspath(path))
    values = {}
    index = {"version": _INDEX_VERSION, "variables": {}, "kinds": kinds}
    for i, (p, var) in enumerate(variables.items()):
        arr = np.asarray(var._value)
        # Orbax refuses zero-size arrays: their shape and dtype in the index are the value.
        key = f"v{i}" if arr.size else None
        if key is not None:
            values[key] = arr
        index["variables"][p] = {"key": key, "shape": list(arr.shape), "dtype": str(arr.dtype),
                                 "trainable": bool(var.trainable), "name": var._name}
    if extra_index:
        index.update(extra_index)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    # Orbax writes into a temporary directory and renames it when complete. Writing
    # next to an existing checkpoint and swapping keeps that one intact until the
    # new one is whole (orbax's own force=True deletes it first).
    target = path if not os.path.exists(path) else f"{path}.new-{uuid.uuid4().hex[:8]}"
    ckptr = ocp.Checkpointer(ocp.CompositeCheckpointHandler())
    args = {"index": ocp.args.JsonSave(index)}
    if values:
        args["state"] = ocp.args.PyTreeSave(values)
    ckptr.save(target, args=ocp.args.Composite(**args))
    ckptr.close()
    if target != path:
        _swap_into_place(target, path)
    return path


def _swap_into_place(new, dest):
    """Moves the complete directory ``new`` to ``dest``, replacing what is there.

    The old copy is moved aside first and deleted last, so a crash leaves either
    the old or the new directory whole at ``dest``.
    """
    if os.path.exists(dest):
        old = f"{dest}.old-{uuid.uuid4().hex[:8]}"
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
        if not isinstance(index, dict) or "variables" not in index:
            raise ValueError("the index has no 'variables' entry")
    except NotFoundError:
        raise
    except Exception as e:  # orbax / json / tensorstore errors of a damaged checkpoint
        raise DataLossError(f"Unable to read the checkpoint index at {path!r}: {type(e).__name__}: {e}. "
                            "The checkpoint is corrupted or was not written by tapejax; restore an "
                            "earlier one (manager.checkpoints lists them).") from e
    return index


def _np_dtype(name):
    import ml_dtypes   # bfloat16, float8 & co.: NumPy does not know them by name
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


def _read_values(path, index):
    """{object path: numpy array} of a checkpoint directory."""
    path = os.path.abspath(os.fspath(path))
    entries = index["variables"]
    out = {p: np.zeros(e["shape"], _np_dtype(e["dtype"])) for p, e in entries.items() if e["key"] is None}
    if len(out) == len(entries):
        return out
    ocp = _ocp()
    try:
        r = ocp.Checkpointer(ocp.CompositeCheckpointHandler()).restore(
            path, args=ocp.args.Composite(state=ocp.args.PyTreeRestore()))
        state = r["state"]
        for p, e in entries.items():
            if e["key"] is None:
                continue
            arr = np.asarray(state[e["key"]])
            if list(arr.shape) != list(e["shape"]):
                raise ValueError(f"value {e['key']} of '{p}' has shape {arr.shape}, index says {e['shape']}")
            out[p] = arr
    except Exception as e:
        raise DataLossError(f"Unable to read the values of the checkpoint {path!r}: {type(e).__name__}: "
                            f"{e}. The checkpoint is corrupted (truncated or modified files); restore "
                            "an earlier one (manager.checkpoints lists them).") from e
    return out


class _Status:
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
    values = _read_values(path, index)
    graph = _Graph(root)
    matched, unmatched, deferred = [], [], []
    assignments, problems = [], []
    for p, value in values.items():
        var = graph.variables.get(p)
        if var is not None:
            problem = _mismatch(p, var, value)
            if problem:
                problems.append(problem)
            assignments.append((var, value))
            matched.append(p)
            continue
        owner, rest = graph.owner(p)
        if isinstance(owner, _RootView):
            owner = owner._ckpt._root
        if owner is None or isinstance(owner, Checkpoint):
            unmatched.append(p)
        else:
            deferred.append((owner, rest, p))
    # Everything is checked before anything is assigned: a failed restore changes nothing.
    if problems:
        _raise_mismatches(problems, repr(os.fspath(path)))
    for var, value in assignments:
        var._set(_as_value(var, value))
    for owner, rest, p in deferred:
        _defer(owner, rest, values[p])
    restored = set(matched)
    # The save counter is bookkeeping: a checkpoint from write() has none, and that is fine.
    unrestored = [p for p in graph.variables if p not in restored and p != "save_counter"]
    real = [p for p in matched if p != "save_counter"]
    if not real and unrestored:
        warnings.warn(
            f"Nothing in the checkpoint {os.fspath(path)!r} matched: it holds "
            f"{', '.join(sorted(values)[:8])}{' ...' if len(values) > 8 else ''} while the objects have "
            f"{', '.join(unrestored[:8])}{' ...' if len(unrestored) > 8 else ''}. Restore with the same "
            "structure (attribute names) as the save; status.assert_consumed() lists every difference.",
            stacklevel=3)
    return _Status(os.fspath(path), unmatched, unrestored,
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
    f = os.path.join(os.fspath(directory), _STATE_FILE)
    if not os.path.exists(f):
        return None, []
    latest, paths = None, []
    with open(f) as fh:
        for line in fh:
            m = re.match(r'\s*(\w+)\s*:\s*"(.*)"\s*$', line)
            if not m:
                continue
            if m.group(1) == "model_checkpoint_path":
                latest = m.group(2)
            elif m.group(1) == "all_model_checkpoint_paths":
                paths.append(m.group(2))
    absolute = lambda p: p if os.path.isabs(p) else os.path.join(os.fspath(directory), p)  # noqa: E731
    return (absolute(latest) if latest else None), [absolute(p) for p in paths]


def _write_state(directory, latest, paths):
    directory = os.fspath(directory)
    rel = lambda p: os.path.relpath(p, directory) if os.path.dirname(os.path.abspath(p)) == os.path.abspath(directory) else p  # noqa: E731
    text = f'model_checkpoint_path: "{rel(latest)}"\n' + "".join(
        f'all_model_checkpoint_paths: "{rel(p)}"\n' for p in paths)
    tmp = os.path.join(directory, f".{_STATE_FILE}.tmp-{uuid.uuid4().hex[:8]}")
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, os.path.join(directory, _STATE_FILE))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The path of the newest checkpoint saved in a directory, or None.

    Args:
        checkpoint_dir: the directory given to ``CheckpointManager`` or holding
            the prefixes passed to ``Checkpoint.save``.

    Returns:
        A path for ``Checkpoint.restore``, or ``None`` when there is none.

    Example:
        >>> import tempfile, tapejax as tf
        >>> d = tempfile.mkdtemp()
        >>> print(tf.train.latest_checkpoint(d))
        None
        >>> path = tf.train.Checkpoint(v=tf.Variable(1.0)).save(d + '/ckpt')
        >>> tf.train.latest_checkpoint(d) == path
        True
    """
    latest, _ = _read_state(checkpoint_dir)
    if latest is None or not os.path.isdir(latest):
        return None
    return latest


def list_variables(ckpt_dir_or_file):
    """``[(path, shape)]`` of the values in a checkpoint (a directory of them: the latest).

    Example:
        >>> import tempfile, tapejax as tf
        >>> path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).save(tempfile.mkdtemp() + '/ckpt')
        >>> tf.train.list_variables(path)
        [('save_counter', []), ('v', [2])]
    """
    path = _resolve(ckpt_dir_or_file)
    index = _read_index(path)
    return sorted((p, list(e["shape"])) for p, e in index["variables"].items())


def load_variable(ckpt_dir_or_file, name):
    """The value (a NumPy array) stored under ``name`` (a path from ``list_variables``).

    Example:
        >>> import tempfile, tapejax as tf
        >>> path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).save(tempfile.mkdtemp() + '/ckpt')
        >>> tf.train.load_variable(path, 'v').tolist()
        [1.0, 2.0]
    """
    path = _resolve(ckpt_dir_or_file)
    index = _read_index(path)
    if name not in index["variables"]:
        raise NotFoundError(f"Key {name!r} not found in checkpoint {path!r}. It holds: "
                            f"{', '.join(sorted(index['variables']))} (see tf.train.list_variables).")
    return _read_values(path, index)[name]


def _resolve(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path) and os.path.exists(os.path.join(path, _STATE_FILE)):
        latest = latest_checkpoint(path)
        if latest is None:
            raise _missing(path)
        return latest
    return path


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------

class CheckpointOptions:
    """Options of ``Checkpoint.save/write/restore`` (accepted for compatibility)."""

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 **kwargs):
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = experimental_enable_async_checkpoint


class Checkpoint:
    """Saves and restores the Variables of a group of objects, by object path.

    Args:
        root: optional object whose children become the checkpoint's top level.
        **kwargs: the objects to track (models, layers, optimizers, metrics,
            Modules, Variables, lists / dicts of them, other Checkpoints).

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
        for k, v in kwargs.items():
            if v is None:
                continue
            self._check_trackable(k, v)
            self._objects[k] = v

    @staticmethod
    def _check_trackable(name, value):
        if (type(value).__module__ or "").startswith("tapejax.data"):
            # TF's tutorials checkpoint the input iterator; tapejax's keeps no position.
            warnings.warn(f"tf.train.Checkpoint: the tf.data object '{name}' is accepted but its "
                          "position is not saved: after a restore, iteration starts from the "
                          "beginning. Skip the consumed elements with dataset.skip(n) if it matters.",
                          stacklevel=3)
            return
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
        self._objects[name] = value

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

    def write(self, file_prefix, options=None):
        """Writes a checkpoint to exactly ``file_prefix`` (no numbering, no state file).

        Returns:
            The path written.
        """
        return _write(self._tree_root(), file_prefix)

    def save(self, file_prefix, options=None):
        """Saves a numbered checkpoint ``{file_prefix}-{n}`` and records it as the latest.

        Returns:
            The path of the checkpoint, for ``restore``.
        """
        self._ensure_counter()
        self._save_counter.assign_add(1)
        path = os.path.abspath(f"{os.fspath(file_prefix)}-{int(self._save_counter.numpy())}")
        try:
            self.write(path)
        except BaseException:
            self._save_counter.assign_sub(1)
            raise
        directory = os.path.dirname(path)
        _, paths = _read_state(directory)
        paths = [p for p in paths if os.path.abspath(p) != path] + [path]
        _write_state(directory, path, paths)
        return path

    def read(self, save_path, options=None):
        """Restores from ``save_path`` (the counterpart of ``write``); returns a status."""
        return self.restore(save_path, options)

    def restore(self, save_path, options=None):
        """Restores the tracked Variables from ``save_path``.

        Variables that exist get their values now; values for Variables not
        created yet (an unbuilt model, optimizer slots before the first step) are
        assigned when those are created.

        Args:
            save_path: a path returned by ``save``/``write`` or
                ``tf.train.latest_checkpoint``; ``None`` does nothing.

        Returns:
            A status with ``assert_consumed()``, ``assert_existing_objects_matched()``,
            ``expect_partial()``.

        Raises:
            tf.errors.NotFoundError (also FileNotFoundError): no checkpoint at ``save_path``.
            ValueError: a checkpoint value whose shape differs from its Variable's.
            DataLossError (a ValueError): a corrupted checkpoint.
        """
        if save_path is None:
            return _Status(None, [], [], [], [])
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


class CheckpointManager:
    """Keeps the last ``max_to_keep`` numbered checkpoints in a directory.

    Args:
        checkpoint: the ``tf.train.Checkpoint`` to save.
        directory: where checkpoints and the ``checkpoint`` state file go.
        max_to_keep: how many to keep (``None`` keeps all).
        checkpoint_name: file name prefix (``ckpt``).

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

    def __init__(self, checkpoint, directory, max_to_keep=5, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager needs a tf.train.Checkpoint, got {type(checkpoint).__name__}: "
                            "write tf.train.CheckpointManager(tf.train.Checkpoint(model=model), directory).")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"max_to_keep must be a positive integer or None, got {max_to_keep}.")
        self._checkpoint = checkpoint
        self._directory = os.path.abspath(os.fspath(directory))
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        os.makedirs(self._directory, exist_ok=True)
        latest, paths = _read_state(self._directory)
        self._checkpoints = [p for p in paths if os.path.isdir(p)]
        self._latest = latest if latest and os.path.isdir(latest) else None

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's path, or None."""
        return self._latest

    @property
    def checkpoints(self):
        """Paths of the kept checkpoints, oldest first."""
        return list(self._checkpoints)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Saves a checkpoint numbered by ``checkpoint_number`` (default: the save counter).

        Deletes the oldest ones beyond ``max_to_keep``. Returns the path.
        """
        ckpt = self._checkpoint
        ckpt._ensure_counter()
        if checkpoint_number is None:
            ckpt._save_counter.assign_add(1)
            number = int(ckpt._save_counter.numpy())
        else:
            number = int(checkpoint_number)
            ckpt._save_counter.assign_add(1)
        path = f"{self._prefix}-{number}"
        try:
            ckpt.write(path)
        except BaseException:
            ckpt._save_counter.assign_sub(1)
            raise
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        removed = []
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                removed.append(self._checkpoints.pop(0))
        self._latest = path
        _write_state(self._directory, path, self._checkpoints)
        for p in removed:
            shutil.rmtree(p, ignore_errors=True)
        return path

    def restore_or_initialize(self):
        """Restores the latest checkpoint if there is one, else runs ``init_fn``; returns the path or None."""
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
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
    from .keras import optimizers as _optimizers
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
    from . import saved_model as _saved_model
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
            from . import saved_model as _saved_model
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
    from . import keras as _keras
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
            from .keras import optimizers as _optimizers
            opt = comp.get("optimizer")
            model.compile(optimizer=_optimizers.deserialize(opt) if opt else "rmsprop", loss=comp.get("loss"),
                          metrics=comp.get("metrics") or None)
    except Exception as e:  # noqa: BLE001 -- a configuration whose parts do not fit together
        raise damaged(f"the model cannot be built from it ({type(e).__name__}: {str(e)[:200]})") from None
    Checkpoint(root=model).read(os.path.join(filepath, "weights")).expect_partial()
    return model
