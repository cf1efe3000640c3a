"""tf.experimental.numpy: NumPy-style functions on Tensors (every jax.numpy name)."""
from ..ops import allclose as allclose  # noqa: F401
from .. import numpy as tnp


def __getattr__(name):
    return getattr(tnp, name)
