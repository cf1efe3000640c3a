"""tf.version: the TensorFlow release whose behaviour tapejax reproduces, and tapejax's own version.

``tapejax.__version__`` is the package's version (from its installed metadata, set in
pyproject.toml); ``tf.version.VERSION`` is the TensorFlow version the API follows, for code
that checks ``tf.version.VERSION``.

Example:
    >>> import tapejax as tf
    >>> tf.version.VERSION
    '2.21.0'
    >>> tf.__version__ == tf.version.TAPEJAX_VERSION
    True
"""
from importlib import metadata as _metadata

VERSION = "2.21.0"
"""The TensorFlow release whose API and behaviour tapejax reproduces."""

try:
    TAPEJAX_VERSION = _metadata.version("tapejax")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    TAPEJAX_VERSION = "0+unknown"
