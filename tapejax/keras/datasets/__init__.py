"""tf.keras.datasets: ``mnist``, ``fashion_mnist``, ``cifar10`` and ``cifar100``, downloaded once into ``~/.keras/datasets``.

Example:
    >>> import tapejax as tf
    >>> tf.keras.datasets.mnist.load_data  # doctest: +ELLIPSIS
    <function load_data at 0x...>
"""
from . import cifar10 as cifar10, cifar100 as cifar100, fashion_mnist as fashion_mnist, mnist as mnist
from ..._missing import module_getattr as _module_getattr

__getattr__ = _module_getattr(__name__)
