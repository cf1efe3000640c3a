"""tf.experimental.numpy: NumPy-style functions on Tensors (every jax.numpy name)."""
from .._ops import allclose as allclose  # noqa: F401


def __getattr__(name):
    from .. import numpy as tnp
    return getattr(tnp, name)
