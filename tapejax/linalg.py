"""tf.linalg: matrix ops, generated from the op table's rows (``tapejax.ops``)."""
from .ops import exports as _exports

globals().update(_exports("linalg"))
__all__ = sorted(_exports("linalg"))
