"""tf.keras on flax and optax: layers, models, initializers, activations, losses, optimizers, metrics, saving.

Example:
    >>> import tapejax as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    >>> model(tf.ones([1, 3])).shape
    TensorShape([1, 2])
"""
import importlib as _importlib

from . import activations as activations, backend as backend, initializers as initializers
from . import layers as layers, models as models, saving as saving
from ._variables import KerasVariable as Variable
from .layers import Input as Input, InputSpec as InputSpec, KerasTensor as KerasTensor, Layer as Layer
from .models import Model as Model, Sequential as Sequential
from .._missing import missing

# losses, optimizers, metrics (and more) load on first use, so a missing one never
# breaks ``import tapejax``.
_LAZY = ("losses", "optimizers", "metrics", "callbacks", "regularizers", "utils", "mixed_precision", "datasets",
         "preprocessing", "constraints")


# Keras 3's top-level aliases of classes in the lazy submodules: tf.keras.Loss is tf.keras.losses.Loss.
_LAZY_CLASSES = {"Loss": "losses", "Metric": "metrics", "Optimizer": "optimizers", "Regularizer": "regularizers",
                 "Initializer": "initializers"}


def __getattr__(name):
    if name in _LAZY_CLASSES:
        value = getattr(_importlib.import_module(f"{__name__}.{_LAZY_CLASSES[name]}"), name)
        globals()[name] = value
        return value
    if name in _LAZY:
        try:
            module = _importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"tapejax.keras has no submodule {name!r} yet.") from None
        globals()[name] = module
        return module
    raise missing(__name__, name)
