"""``tf.train.CheckpointManager``: numbered checkpoints in a directory, saved through orbax's
``CheckpointManager``, kept by TensorFlow's retention rules."""
import collections
import dataclasses
import os
import re
import time

import numpy as np

from .format import _STATE_FILE, _ocp
from .._core import logs as _logs
from .checkpoint import Checkpoint, _TFObjectRepr, _callbacks, _is_async
from .reader import _is_inside, _read_state
from .writer import _clean_tmp, _delete_checkpoint, _write_state


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


class CheckpointManager(_TFObjectRepr):
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

    _tf_module = "tensorflow.python.checkpoint.checkpoint_management"

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
            _logs.warning("Ignoring checkpoint paths outside the manager's directory %r in its state file %r: %s",
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
