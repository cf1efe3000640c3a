"""tf.math: elementwise math and reductions, generated from the op table's rows (``tapejax.ops``)."""
from ..ops import exports as _exports

globals().update(_exports("math"))
__all__ = sorted(_exports("math"))
from . import special as special  # noqa: E402,F401  (tf.math.special)
