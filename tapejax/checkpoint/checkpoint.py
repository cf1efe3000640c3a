"""``tf.train.Checkpoint``: saves and restores the Variables of a group of objects by object path."""
import os
import warnings

from .._core.variable import Variable
from .tracking import (Graph, _as_value, _children, _defer, _holds_trackable, _mismatch, _raise_mismatches, _wrap,
                       apply_deferred)
from .writer import _Writer, _payload, _write_dir, _write_state
from .reader import read_index, read_values


class _TFObjectRepr:
    """Python's default repr under the TensorFlow module that defines the class, as TF prints
    it (a notebook cell ending in ``checkpoint.restore(...)`` shows
    ``<tensorflow.python.checkpoint.checkpoint.CheckpointLoadStatus at 0x...>``)."""

    _tf_module = "tensorflow.python.checkpoint.checkpoint"

    def _tf_repr_path(self):
        cls = type(self)
        module = self._tf_module if cls.__module__.startswith("tapejax.") else cls.__module__
        return f"{module}.{cls.__qualname__}"

    def __repr__(self):
        return f"<{self._tf_repr_path()} object at {id(self):#x}>"

    def _repr_pretty_(self, printer, cycle):
        # IPython prints objects without a repr of their own as <module.Class at 0x...>.
        printer.text(f"<{self._tf_repr_path()} at {id(self):#x}>")


class CheckpointLoadStatus(_TFObjectRepr):
    """What a restore matched; returned by ``Checkpoint.restore`` / ``read``.

    Example:
        >>> import tapejax as tf
        >>> tf.train.Checkpoint(v=tf.Variable(1.0)).restore(None)  # doctest: +ELLIPSIS
        <tensorflow.python.checkpoint.checkpoint.InitializationOnlyStatus object at 0x...>
    """

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


class InitializationOnlyStatus(CheckpointLoadStatus):
    """What ``restore(None)`` returns (no checkpoint yet: ``tf.train.latest_checkpoint`` found
    none); its assertions fail as TensorFlow's do."""

    def _nothing(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_consumed(self):
        self._nothing()

    def assert_existing_objects_matched(self):
        self._nothing()

    def assert_nontrivial_match(self):
        self._nothing()


def _renamed_attribute(owner, name):
    """The attribute that now holds what files written by earlier versions saved as ``name``: a
    class attribute naming its storage in ``checkpoint_attribute`` (Keras 3's Dense keeps its
    ``kernel`` property's weight in ``_kernel``, the key TF 2.21 writes)."""
    return getattr(getattr(type(owner), name, None), "checkpoint_attribute", None) or name


def _renamed(graph, path):
    head, _, name = path.rpartition("/")
    owner = graph.objects.get(head)
    if owner is None:
        return path
    new = _renamed_attribute(owner, name)
    return path if new == name else (f"{head}/{new}" if head else new)


def _restore(root, path, skip=()):
    """Restores ``path`` into ``root``'s Variables; saved paths starting with one of the
    prefixes in ``skip`` are left out (``load_weights`` skips an optimizer whose state does not
    fit, as Keras does)."""
    index = read_index(path)
    graph = Graph(root)
    values = read_values(path, index, targets=graph.variables)
    values = {p: v for p, v in values.items() if not p.startswith(skip)}
    found = dict(graph.variables)
    missing = [p for p in graph.variables if p not in values]
    if missing and index.get("aliases"):
        # Variables saved under another path (the same Variable in a list and a dict).
        saved = Graph.__new__(Graph)
        saved.aliases = index["aliases"]
        other = saved.paths_of(set(values))
        mine = graph.paths_of(set(missing))
        missing = set(missing)
        for alt, p in list(other.items()) + [(p, p) for p in values]:
            q = alt if alt in missing else mine.get(alt)   # a missing Variable's path
            if q is not None and p not in found:
                found[p] = graph.variables[q]
    for p in values:
        if p not in found:   # a weight saved before its layer renamed it (Dense's kernel is now `_kernel`)
            q = _renamed(graph, p)
            if q in graph.variables and q not in values:
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
        if owner is None:
            unmatched.append(p)
        else:   # assigned when the Variable appears (a build, an attribute set later)
            rest = _renamed_attribute(owner, rest)
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


class CheckpointOptions(_TFObjectRepr):
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

    _tf_module = "tensorflow.python.checkpoint.checkpoint_options"

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


class Checkpoint(_TFObjectRepr):
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
        apply_deferred(self)   # values of an earlier restore() waiting for this attribute

    def _trackable_children(self):
        """The root's children (``root=``), then the tracked objects by name, then the save counter."""
        out = dict(_children(self._root)) if self._root is not None else {}
        out.update(sorted(self._objects.items()))
        if self._save_counter is not None:
            out["save_counter"] = self._save_counter
        return out

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
        graph = Graph(self)
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
            return InitializationOnlyStatus(None, [], [], [], [])
        self._ensure_counter()
        return _restore(self, os.fspath(save_path))
