"""tf.experimental.numpy: NumPy-style functions on Tensors (every jax.numpy name)."""
from ..ops import exports as _exports
from .. import numpy as tnp

globals().update(_exports("experimental.numpy"))


def __getattr__(name):
    return getattr(tnp, name)
