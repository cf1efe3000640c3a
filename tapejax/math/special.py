"""tf.math.special: Bessel functions, Dawson's and Fresnel's integrals, the exponential integral
and Spence's function, generated from the op table's rows (``tapejax.ops``).

Example:
    >>> import tapejax as tf
    >>> tf.math.special.bessel_k0([0.5, 1., 2., 4.]).numpy()
    array([0.9244191 , 0.42102444, 0.1138939 , 0.01115968], dtype=float32)
"""
from ..ops import exports as _exports

globals().update(_exports("math.special"))
__all__ = sorted(_exports("math.special"))
