"""tf.keras.datasets: ``mnist`` and ``fashion_mnist``, downloaded once into ``~/.keras/datasets``.

Example:
    >>> import tapejax as tf
    >>> tf.keras.datasets.mnist.load_data  # doctest: +ELLIPSIS
    <function load_data at 0x...>
"""
from . import fashion_mnist as fashion_mnist, mnist as mnist
from ..._missing import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
