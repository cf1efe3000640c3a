"""tf.train: object-based checkpoints (``Checkpoint``, ``CheckpointManager``).

A checkpoint holds the values of the Variables reachable from the objects given
to :class:`Checkpoint`, keyed by their *object path*, as TensorFlow's object
graph does: ``model/dense_1/kernel``, ``optimizer/iterations``. The walk goes
through attributes of Modules, Keras layers, models, optimizers and metrics,
lists, tuples and dicts (sorted keys), and nested Checkpoints, breadth first, so
a Variable reachable by several paths is stored once under its shortest one.
An object may define ``_trackable_children()`` returning ``{name: child}`` to
replace the default walk. ``tf.train.list_variables`` shows TensorFlow's keys
(``model/dense_1/_kernel/.ATTRIBUTES/VARIABLE_VALUE``).

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

_EXAMPLE = """

    Example:
        >>> import tapejax as tf
        >>> ex = tf.train.Example(features=tf.train.Features(feature={
        ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, 2.0])),
        ...     "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))}))
        >>> list(ex.features.feature["x"].float_list.value), ex.features.feature["id"].int64_list.value[0]
        ([1.5, 2.0], 7)
        >>> tf.train.Example.FromString(ex.SerializeToString()) == ex
        True
"""
for _cls, _doc in ((BytesList, "A list of byte strings (TensorFlow's ``feature.proto``)."),
                   (FloatList, "A list of float32 values (TensorFlow's ``feature.proto``)."),
                   (Int64List, "A list of int64 values (TensorFlow's ``feature.proto``)."),
                   (Feature, "One of a BytesList, FloatList or Int64List (TensorFlow's ``feature.proto``)."),
                   (Features, "A map from feature names to Features (TensorFlow's ``feature.proto``)."),
                   (FeatureList, "A list of Features, one per step of a sequence (``feature.proto``)."),
                   (FeatureLists, "A map from names to FeatureLists (TensorFlow's ``feature.proto``)."),
                   (Example, "TensorFlow's ``Example`` proto: Features, stored in TFRecord files and read by "
                             "``tf.io.parse_example``."),
                   (SequenceExample, "TensorFlow's ``SequenceExample`` proto: context Features and FeatureLists.")):
    _cls.__module__ = __name__          # protobuf's generated classes have none
    _cls.__doc__ = _doc + _EXAMPLE

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "CheckpointOptions", "list_variables",
           "load_variable", "load_checkpoint", "CheckpointReader", "BytesList", "FloatList", "Int64List", "Feature",
           "Features", "FeatureList", "FeatureLists", "Example", "SequenceExample"]
