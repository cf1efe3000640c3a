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

The implementation is the ``tapejax.checkpoint`` package (storage, checksums,
deferred restores); this module is the ``tf.train`` namespace.
"""
from .checkpoint import (Checkpoint, CheckpointLoadStatus, CheckpointManager, CheckpointOptions,  # noqa: F401
                         CheckpointReader, DataLossError, ListWrapper, NotFoundError, latest_checkpoint,
                         list_variables, load_checkpoint, load_variable)
from .io import EXAMPLE_PROTOS as _PROTOS

# TensorFlow's tf.train.Example protocol buffers (feature.proto, example.proto).
BytesList, FloatList, Int64List = _PROTOS["BytesList"], _PROTOS["FloatList"], _PROTOS["Int64List"]
Feature, Features, FeatureList, FeatureLists = (_PROTOS["Feature"], _PROTOS["Features"], _PROTOS["FeatureList"],
                                                _PROTOS["FeatureLists"])
Example, SequenceExample = _PROTOS["Example"], _PROTOS["SequenceExample"]

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "CheckpointOptions", "list_variables",
           "load_variable", "load_checkpoint", "CheckpointReader", "BytesList", "FloatList", "Int64List", "Feature",
           "Features", "FeatureList", "FeatureLists", "Example", "SequenceExample"]
