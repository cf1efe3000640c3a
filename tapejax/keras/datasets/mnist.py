"""tf.keras.datasets.mnist: the MNIST digits, as NumPy arrays (Keras's file and checksum)."""
import numpy as np

from ..utils import get_file

__all__ = ["load_data"]

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"


def load_data(path="mnist.npz"):
    """Loads MNIST: 60,000 training and 10,000 test 28x28 grayscale digits (``keras.datasets.mnist``).

    The file is downloaded once (with :func:`tapejax.keras.utils.get_file`) to
    ``~/.keras/datasets/<path>`` and checked against Keras's sha256; a copy placed there
    beforehand is used without the network.

    Args:
        path: the file name in the cache (relative to ``~/.keras/datasets``).

    Returns:
        ``(x_train, y_train), (x_test, y_test)``: uint8 arrays of shapes ``(60000, 28, 28)``,
        ``(60000,)``, ``(10000, 28, 28)``, ``(10000,)``; pixels 0-255, labels 0-9.

    Raises:
        Exception: the file is not cached and cannot be downloaded (Keras's
            ``URL fetch failure on ...``).

    Example:
        >>> import tapejax as tf
        >>> (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()  # doctest: +SKIP
        >>> x_train.shape, x_train.dtype, y_test.shape  # doctest: +SKIP
        ((60000, 28, 28), dtype('uint8'), (10000,))
    """
    path = get_file(fname=path, origin=_ORIGIN, file_hash=_SHA256)
    with np.load(path, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
