"""Reading checkpoints. The files are untrusted: the index's schema is checked, and each
value's shape and dtype against the data files, before anything is allocated; every value
is verified against its checksum. Also the ``checkpoint`` state file of a directory
(TensorFlow's format) and ``tf.train.load_checkpoint`` / ``list_variables`` / ``load_variable``."""
import json
import math
import os
import re

import numpy as np

from .. import dtypes as _dtypes
from .format import (_STATE_FILE, DataLossError, NotFoundError, _checksum, _INDEX_VERSION, _key, _ocp, _tree_get,
                     _tree_set)


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


def read_index(path):
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


def read_values(path, index, targets=None):
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
        self._index = read_index(self._path)
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
            self._values = read_values(self._path, self._index)
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
