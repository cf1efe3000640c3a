"""tf.keras.datasets.fashion_mnist: Zalando's 28x28 clothing images, as NumPy arrays."""
import gzip
import os

import numpy as np

from ..utils import get_file

__all__ = ["load_data"]

_BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def _read(labels_path, images_path):
    with gzip.open(labels_path, "rb") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    with gzip.open(images_path, "rb") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(labels), 28, 28)
    return images, labels


def load_data():
    """Loads Fashion-MNIST: 60,000 training and 10,000 test images of 10 clothing classes.

    The four IDX files are downloaded once (:func:`tapejax.keras.utils.get_file`) into
    ``~/.keras/datasets/fashion-mnist``, as Keras does; copies placed there are used offline.

    Returns:
        ``(x_train, y_train), (x_test, y_test)``: uint8 arrays of shapes ``(60000, 28, 28)``,
        ``(60000,)``, ``(10000, 28, 28)``, ``(10000,)``; labels 0-9 (T-shirt/top ... Ankle boot).

    Raises:
        Exception: a file is not cached and cannot be downloaded (``URL fetch failure on ...``).

    Example:
        >>> import tapejax as tf
        >>> (x_train, y_train), _ = tf.keras.datasets.fashion_mnist.load_data()  # doctest: +SKIP
        >>> x_train.shape  # doctest: +SKIP
        (60000, 28, 28)
    """
    dirname = os.path.join("datasets", "fashion-mnist")
    paths = [get_file(name, origin=_BASE + name, cache_subdir=dirname) for name in _FILES]
    return _read(paths[0], paths[1]), _read(paths[2], paths[3])
