"""Object-based checkpoints, the machinery of ``tf.train.Checkpoint`` and ``CheckpointManager``.

A checkpoint holds the values of the Variables reachable from the objects given to
:class:`Checkpoint`, keyed by their *object path*, as TensorFlow's object graph does
(``tracking``). ``tf.train.list_variables`` shows TensorFlow's keys
(``model/dense_1/_kernel/.ATTRIBUTES/VARIABLE_VALUE``).

Storage is orbax: one directory per checkpoint holding the values as a PyTree of jax Arrays
nested by object path (``{'model': {'dense_1': {'_kernel': ...}}}``, so
``orbax.checkpoint.StandardCheckpointer().restore(path + '/state')`` reads it by name;
sharded values are written shard by shard, never gathered), a JSON index of paths, shapes
and dtypes, and a checksum per value (``checksums.json``, computed while orbax writes, added
last), verified on restore (``writer``, ``reader``). Orbax writes to a temporary directory
and renames it when complete, so a save that fails or is killed half way never damages an
earlier checkpoint; the next save removes what it left. ``CheckpointManager`` (``manager``)
saves through orbax's ``CheckpointManager``;
``CheckpointOptions(experimental_enable_async_checkpoint=True)`` makes saves return once the
values are copied (orbax's async checkpointing).

The package knows Modules, Variables and the trackable protocol (``_trackable_children``);
objects that create their Variables late call :func:`tracking.apply_deferred`. It knows no
Keras: Keras's model files are ``tapejax.keras.saving``, built on this package.

    format.py      file names, value keys, checksums, errors
    tracking.py    the object graph; values waiting for their Variables
    writer.py      one checkpoint directory, atomically; the state file
    reader.py      reading (untrusted files), latest_checkpoint, CheckpointReader
    checkpoint.py  Checkpoint, CheckpointOptions, the restore status
    manager.py     CheckpointManager
"""
from .format import DataLossError, NotFoundError
from .tracking import AutoTrackable, ListWrapper
from .reader import CheckpointReader, latest_checkpoint, list_variables, load_checkpoint, load_variable
from .checkpoint import Checkpoint, CheckpointLoadStatus, CheckpointOptions
from .manager import CheckpointManager

__all__ = ["AutoTrackable", "Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "CheckpointOptions",
           "CheckpointReader", "DataLossError", "ListWrapper", "NotFoundError", "latest_checkpoint",
           "list_variables", "load_checkpoint", "load_variable"]
