"""Keras 3's reprs of its plain objects: Python's default ``<module.Class object at 0x...>``
under the Keras module that defines the class (``keras.src.callbacks.history.History``).

Optimizers, callbacks, initializers and regularizers have no repr of their own in Keras 3, so
a notebook cell ending in ``model.fit(...)`` shows ``<keras.src.callbacks.history.History at
0x...>`` (IPython's form) and ``repr`` gives ``... object at 0x...``. A user's subclass keeps
its own module, as it does in Keras.
"""


class KerasObjectRepr:
    """Mixin: the default object repr, with Keras 3's module for tapejax's own classes.

    A base class sets ``_keras_modules`` (class name -> Keras 3 module) for its namespace.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.callbacks.History()  # doctest: +ELLIPSIS
        <keras.src.callbacks.history.History object at 0x...>
    """

    _keras_modules = {}

    def _k_repr_path(self):
        cls = type(self)
        module = cls.__module__
        if module.startswith("tapejax."):
            module = self._keras_modules.get(cls.__name__, module)
        return f"{module}.{cls.__qualname__}"

    def __repr__(self):
        return f"<{self._k_repr_path()} object at {id(self):#x}>"

    def _repr_pretty_(self, printer, cycle):
        # IPython prints objects without a repr of their own as <module.Class at 0x...>.
        printer.text(f"<{self._k_repr_path()} at {id(self):#x}>")
