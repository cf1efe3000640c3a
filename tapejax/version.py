"""tf.version: the TensorFlow release whose behaviour tapejax reproduces, and tapejax's own version.

``tf.__version__`` and ``tf.version.VERSION`` are the TensorFlow version the API follows (code
ported from TensorFlow checks them); ``tf.version.TAPEJAX_VERSION`` is the package's own
version (from its installed metadata, set in pyproject.toml).

Example:
    >>> import tapejax as tf
    >>> tf.__version__, tf.version.VERSION
    ('2.21.0', '2.21.0')
"""
from importlib import metadata as _metadata

VERSION = "2.21.0"
"""The TensorFlow release whose API and behaviour tapejax reproduces."""

try:
    TAPEJAX_VERSION = _metadata.version("tapejax")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    TAPEJAX_VERSION = "0+unknown"
