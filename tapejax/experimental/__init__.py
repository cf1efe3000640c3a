"""tf.experimental."""
from . import numpy as numpy  # noqa: F401
