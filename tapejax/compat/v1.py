"""``tf.compat.v1``: importable, as in TensorFlow 2.21, so TF1 code fails at the TF1 name it uses.

tapejax has no TensorFlow 1 graph API (graphs, sessions, placeholders, ``tf.compat.v1.layers``,
estimators): reading such a name raises an ``AttributeError`` that says what TF2 code to write
instead. What TF2 code itself calls through ``v1`` works: ``logging`` (TensorFlow's logger),
``enable_eager_execution`` / ``enable_v2_behavior`` (no-ops: tapejax is always eager) and
``executing_eagerly``.

Example:
    >>> import tapejax.compat.v1 as tf1
    >>> tf1.logging.ERROR, tf1.executing_eagerly()
    (40, True)
    >>> tf1.Session
    Traceback (most recent call last):
    ...
    AttributeError: module 'tapejax.compat.v1' has no attribute 'Session': tf.compat.v1.Session (TensorFlow 1's graph sessions) is not provided by tapejax: write TF2 code instead (eager ops, tf.function for a compiled step, tf.GradientTape for gradients, tf.Variable for state).
"""
import logging as _logging
import types as _types

from .._core.logs import get_logger as _get_logger
from .._staging.function import executing_eagerly as executing_eagerly  # noqa: F401

_TF2 = ("write TF2 code instead (eager ops, tf.function for a compiled step, tf.GradientTape for "
        "gradients, tf.Variable for state).")

# name: (what it is in TensorFlow 1, what TF2 code writes instead)
_HINTS = {
    "Session": ("TensorFlow 1's graph sessions", _TF2),
    "InteractiveSession": ("TensorFlow 1's graph sessions", _TF2),
    "Graph": ("TensorFlow 1's graphs", _TF2),
    "placeholder": ("TensorFlow 1's graph inputs", "give a tf.function an input_signature of "
                    "tf.TensorSpec for symbolic inputs."),
    "get_variable": ("TensorFlow 1's variable scopes", "make tf.Variable objects (a tf.Module or Keras "
                     "layer holds them)."),
    "variable_scope": ("TensorFlow 1's variable scopes", "tf.name_scope names Variables."),
    "global_variables_initializer": ("TensorFlow 1's initializer ops", "Variables are initialized when "
                                     "created."),
    "global_variables": ("TensorFlow 1's graph collections", "a tf.Module or Keras model lists its "
                         "variables (.variables, .trainable_variables)."),
    "get_collection": ("TensorFlow 1's graph collections", "Keras models collect their regularization "
                       "losses in model.losses."),
    "layers": ("TensorFlow 1's layers, gone from TensorFlow 2.21 too", "use tf.keras.layers."),
    "losses": ("TensorFlow 1's loss ops", "use tf.keras.losses."),
    "metrics": ("TensorFlow 1's metric ops", "use tf.keras.metrics."),
    "train": ("TensorFlow 1's optimizers, hooks and sessions", "use tf.keras.optimizers, Keras callbacks "
              "and tf.train.Checkpoint."),
    "estimator": ("removed in TensorFlow 2.16", "use tf.keras Model.compile/fit, or a custom loop with "
                  "tf.GradientTape."),
    "feature_column": ("deprecated in TensorFlow", "preprocess features with Keras preprocessing layers or "
                       "in a tf.data.Dataset.map."),
    "keras": ("TensorFlow 1's Keras", "use tf.keras (tf.keras.utils.set_random_seed for reproducible "
              "random numbers)."),
    "disable_eager_execution": ("TensorFlow 1's graph mode", "tapejax is always eager; tf.function "
                                "compiles a step."),
    "disable_v2_behavior": ("TensorFlow 1's graph mode", "tapejax is always eager; tf.function compiles "
                            "a step."),
}


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """A no-op: tapejax, as TensorFlow 2, always executes eagerly."""


def enable_v2_behavior():
    """A no-op: tapejax is TensorFlow 2."""


def _set_verbosity(v):
    _get_logger().setLevel(v)


logging = _types.SimpleNamespace(
    DEBUG=_logging.DEBUG, INFO=_logging.INFO, WARN=_logging.WARN, WARNING=_logging.WARNING,
    ERROR=_logging.ERROR, FATAL=_logging.FATAL,
    set_verbosity=_set_verbosity, get_verbosity=lambda: _get_logger().getEffectiveLevel(),
    debug=lambda msg, *a: _get_logger().debug(msg, *a), info=lambda msg, *a: _get_logger().info(msg, *a),
    warning=lambda msg, *a: _get_logger().warning(msg, *a), warn=lambda msg, *a: _get_logger().warning(msg, *a),
    error=lambda msg, *a: _get_logger().error(msg, *a), fatal=lambda msg, *a: _get_logger().critical(msg, *a),
)


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    what, instead = _HINTS.get(name, ("TensorFlow 1's API", _TF2))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: tf.compat.v1.{name} ({what}) is "
                         f"not provided by tapejax: {instead}")
