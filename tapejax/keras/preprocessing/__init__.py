"""tf.keras.preprocessing: Keras 3's legacy ``image`` utilities (``ImageDataGenerator``)."""
from . import image as image

__all__ = ["image"]
