"""``tf.types``: the types of TensorFlow's API (``tf.types.experimental.TraceType``)."""
from . import experimental as experimental  # noqa: F401
