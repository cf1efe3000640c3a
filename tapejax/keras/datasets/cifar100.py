"""tf.keras.datasets.cifar100: 60,000 32x32 colour images in 100 classes (20 superclasses)."""
import os

import numpy as np

from ..utils import get_file
from ._cifar import channels_last, load_batch

__all__ = ["load_data"]

_ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
_SHA256 = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"


def load_data(label_mode="fine"):
    """Loads CIFAR-100: 50,000 training and 10,000 test 32x32 RGB images (``keras.datasets.cifar100``).

    The archive is downloaded once (:func:`tapejax.keras.utils.get_file`, Keras's sha256) and
    unpacked into ``~/.keras/datasets/cifar-100-python-target``; a copy there is used offline.

    Args:
        label_mode: ``"fine"`` (100 classes) or ``"coarse"`` (20 superclasses).

    Returns:
        ``(x_train, y_train), (x_test, y_test)``: uint8 images of shapes ``(50000, 32, 32, 3)``
        and ``(10000, 32, 32, 3)``; int64 labels of shapes ``(50000, 1)`` and ``(10000, 1)``
        (as Keras returns them).

    Raises:
        ValueError: ``label_mode`` is neither ``"fine"`` nor ``"coarse"``.
        Exception: the archive is not cached and cannot be downloaded (``URL fetch failure on ...``).

    Example:
        >>> import tapejax as tf
        >>> (x_train, y_train), _ = tf.keras.datasets.cifar100.load_data("coarse")  # doctest: +SKIP
        >>> x_train.shape, y_train.shape  # doctest: +SKIP
        ((50000, 32, 32, 3), (50000, 1))
    """
    if label_mode not in ["fine", "coarse"]:
        raise ValueError('`label_mode` must be one of `"fine"`, `"coarse"`. '
                         f"Received: label_mode={label_mode}.")
    path = get_file(fname="cifar-100-python-target", origin=_ORIGIN, extract=True, file_hash=_SHA256)
    path = os.path.join(path, "cifar-100-python")
    out = []
    for part in ("train", "test"):
        x, y = load_batch(os.path.join(path, part), label_key=f"{label_mode}_labels")
        out.append((channels_last(x), np.reshape(y, (len(y), 1))))
    return tuple(out)
