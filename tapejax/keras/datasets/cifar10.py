"""tf.keras.datasets.cifar10: 60,000 32x32 colour images in 10 classes, as NumPy arrays."""
import os

import numpy as np

from ..utils import get_file
from ._cifar import channels_last, load_batch

__all__ = ["load_data"]

_ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
_SHA256 = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"


def load_data():
    """Loads CIFAR-10: 50,000 training and 10,000 test 32x32 RGB images (``keras.datasets.cifar10``).

    The archive is downloaded once (:func:`tapejax.keras.utils.get_file`, Keras's sha256) and
    unpacked into ``~/.keras/datasets/cifar-10-batches-py-target``; a copy there is used offline.
    Classes: 0 airplane, 1 automobile, 2 bird, 3 cat, 4 deer, 5 dog, 6 frog, 7 horse, 8 ship, 9 truck.

    Returns:
        ``(x_train, y_train), (x_test, y_test)``: uint8 arrays of shapes ``(50000, 32, 32, 3)``,
        ``(50000, 1)``, ``(10000, 32, 32, 3)``, ``(10000, 1)`` (channels last, as Keras's
        default image data format).

    Raises:
        Exception: the archive is not cached and cannot be downloaded (``URL fetch failure on ...``).

    Example:
        >>> import tapejax as tf
        >>> (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()  # doctest: +SKIP
        >>> x_train.shape, y_train.shape, y_train.dtype  # doctest: +SKIP
        ((50000, 32, 32, 3), (50000, 1), dtype('uint8'))
    """
    path = get_file(fname="cifar-10-batches-py-target", origin=_ORIGIN, extract=True, file_hash=_SHA256)
    path = os.path.join(path, "cifar-10-batches-py")
    batches = [load_batch(os.path.join(path, f"data_batch_{i}")) for i in range(1, 6)]
    x_train = np.concatenate([x for x, _ in batches]).astype("uint8")
    y_train = np.concatenate([np.asarray(y, "uint8") for _, y in batches])
    x_test, y_test = load_batch(os.path.join(path, "test_batch"))
    y_train = y_train.reshape(len(y_train), 1)
    y_test = np.reshape(y_test, (len(y_test), 1)).astype("uint8")
    return (channels_last(x_train), y_train), (channels_last(x_test).astype("uint8"), y_test)
