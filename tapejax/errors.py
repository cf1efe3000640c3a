"""tf.errors: exception classes with TensorFlow's names."""


class OpError(Exception):
    def __init__(self, node_def=None, op=None, message="", *args):
        super().__init__(message)
        self.message = message


class InvalidArgumentError(OpError):
    """An argument failed a check (raised by tf.debugging assertions)."""


class NotFoundError(OpError):
    pass


class FailedPreconditionError(OpError):
    """The system is not in a state the operation needs (a lookup table given two values for one key)."""


class AlreadyExistsError(OpError):
    """What was to be created (a file, with tf.io.gfile.copy or mkdir) exists already."""


class OutOfRangeError(OpError):
    pass


class CancelledError(OpError):
    """An operation was cancelled: an ``enqueue`` to a closed ``tf.queue.FIFOQueue``.

    Example:
        >>> import tapejax as tf
        >>> issubclass(tf.errors.CancelledError, tf.errors.OpError)
        True
    """


class UnimplementedError(OpError):
    pass


class InternalError(OpError):
    """An internal invariant broke: TensorFlow raises it for an assertion failed inside a dataset
    function (``bucket_by_sequence_length(pad_to_bucket_boundary=True)`` of a too long element).

    Example:
        >>> import tapejax as tf
        >>> issubclass(tf.errors.InternalError, tf.errors.OpError)
        True
    """


class DataLossError(OpError):
    """Unrecoverable data loss or corruption: a checkpoint or SavedModel whose files are
    truncated, modified or not what their index says.

    Example:
        >>> import tapejax as tf
        >>> issubclass(tf.errors.DataLossError, tf.errors.OpError)
        True
    """
