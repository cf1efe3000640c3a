"""tf.math.special: Bessel functions, Dawson's and Fresnel's integrals, the exponential integral
and Spence's function, generated from the op table's rows (``tapejax.ops``).

Example:
    >>> import tapejax as tf
    >>> tf.math.special.bessel_k0([0.5, 1., 2., 4.]).numpy().round(6)
    array([0.924419, 0.421024, 0.113894, 0.01116 ], dtype=float32)
"""
from ..ops import exports as _exports

globals().update(_exports("math.special"))
__all__ = sorted(_exports("math.special"))
