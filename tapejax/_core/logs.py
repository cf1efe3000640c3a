"""TensorFlow's Python logger: ``tf.get_logger()``, the logger every tapejax warning goes to.

As in TensorFlow (``tensorflow/python/platform/tf_logging.py``) it is the ``"tensorflow"``
logger, and where the program configured no logging (the root logger has no handler) its
import gives it one (as TensorFlow's import does) that prints ``WARNING:tensorflow:<message>`` to stderr (stdout in an
interactive shell), so warnings read as TensorFlow's do.
"""
import logging
import sys
import threading

_logger = logging.getLogger("tensorflow")
_lock = threading.Lock()
_configured = [False]


def get_logger():
    """TensorFlow's logger (``logging.getLogger("tensorflow")``), ready to print.

    Example:
        >>> import logging
        >>> import tapejax as tf
        >>> tf.get_logger().name
        'tensorflow'
        >>> tf.get_logger().setLevel(logging.ERROR)   # silence warnings, as in TensorFlow tutorials
        >>> tf.get_logger().setLevel(logging.NOTSET)
    """
    if not _configured[0]:
        with _lock:
            if not _configured[0]:
                _configured[0] = True
                if not logging.getLogger().handlers:
                    interactive = bool(getattr(sys, "ps1", None)) or bool(sys.flags.interactive)
                    if interactive:
                        _logger.setLevel(logging.INFO)
                    handler = logging.StreamHandler(sys.stdout if interactive else sys.stderr)
                    handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT, None))
                    _logger.addHandler(handler)
    return _logger


def warning(msg, *args):
    get_logger().warning(msg, *args)


def info(msg, *args):
    get_logger().info(msg, *args)


def absl_warning(msg, *args):
    """A warning Keras 3 logs through absl (``WARNING:absl:<message>``): as ``absl.logging``
    does before absl is initialised, the root logger gets ``logging.basicConfig()`` when
    nothing configured logging, then the ``absl`` logger warns."""
    if not logging.root.handlers:
        logging.basicConfig()
    logging.getLogger("absl").warning(msg, *args)


# TensorFlow's own import uses its logger: the handler exists once ``import tensorflow`` returns,
# bound to the stderr of that moment (a harness or a notebook may later swap ``sys.stderr``).
get_logger()
