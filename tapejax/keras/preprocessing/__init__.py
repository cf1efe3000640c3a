"""tf.keras.preprocessing: Keras 3's legacy ``image`` utilities (``ImageDataGenerator``) and
``sequence.pad_sequences``."""
from . import image as image, sequence as sequence

__all__ = ["image", "sequence"]
