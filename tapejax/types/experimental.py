"""``tf.types.experimental``: the tracing protocol (``TraceType``, ``__tf_tracing_type__``)."""
from .._staging.function import TraceType as TraceType, TracingContext as TracingContext  # noqa: F401
