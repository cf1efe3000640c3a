"""Keras 3's object configurations: ``serialize_keras_object`` / ``deserialize_keras_object``.

A Keras object (an initializer, regularizer, constraint, dtype policy, layer, model) is
serialized as Keras 3's ``keras.src.saving.serialization_lib`` does it::

    {'module': 'keras.initializers', 'class_name': 'GlorotUniform',
     'config': {'seed': None, 'input_axes': None, 'output_axes': None}, 'registered_name': None}

``module`` and ``class_name`` name the public Keras symbol of a tapejax class (its base class
says in which public module it lives, ``_keras_public_module``); a user's class keeps its own
module and is named by ``tf.keras.saving.register_keras_serializable``'s name (else its class
name). A layer or model adds its ``build_config`` (and a model its ``compile_config``), as
Keras 3 does. Configurations are built only when asked for.
"""
import importlib
import types

import numpy as np

from .. import ops as _ops
from .._core import dtypes as _dtypes
from .._core.tensor import Tensor, TensorShape

_PLAIN = (str, int, float, bool)
# The public Keras modules tapejax's classes are deserialized from, and where they live here.
_PUBLIC_MODULES = {
    "keras.initializers": "tapejax.keras.initializers",
    "keras.regularizers": "tapejax.keras.regularizers",
    "keras.constraints": "tapejax.keras.constraints",
    "keras.layers": "tapejax.keras.layers",
    "keras.losses": "tapejax.keras.losses",
    "keras.metrics": "tapejax.keras.metrics",
    "keras.optimizers": "tapejax.keras.optimizers",
    "keras.src.models.functional": "tapejax.keras.models",
    "keras.models": "tapejax.keras.models",
    "keras": "tapejax.keras",
}
# Classes that Keras 3 exports under another name than tapejax's (none yet) or from 'keras'.
_KERAS_TOP = {"DTypePolicy": "tapejax.keras.mixed_precision", "Sequential": "tapejax.keras.models",
              "Model": "tapejax.keras.models", "Functional": "tapejax.keras.models"}


_REGISTERED = {}   # "package>name" -> class (register_keras_serializable)
# The operation classes of functional models (x * 2 on a KerasTensor) by their Keras class name:
# layers/_base.py, above this module, sets it.
_OPERATIONS = None


def register_keras_serializable(package="Custom", name=None):
    """Registers a class under ``"package>name"`` so that ``load_model`` can rebuild saved
    instances of it (Keras 3's ``keras.saving.register_keras_serializable``).

    Args:
        package: the namespace of the name (``"Custom"``).
        name: the name in it; the class's name by default.

    Returns:
        A decorator that registers the class and returns it unchanged.

    Raises:
        ValueError: the class has no ``get_config`` method.

    Example:
        >>> import tapejax as tf
        >>> @tf.keras.saving.register_keras_serializable(package="Demo")
        ... class Twice(tf.keras.layers.Layer):
        ...     def call(self, x):
        ...         return 2 * x
        >>> tf.keras.saving.get_registered_name(Twice)
        'Demo>Twice'
    """
    def decorator(arg):
        registered = f"{package}>{name or arg.__name__}"
        if isinstance(arg, type) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _REGISTERED[registered] = arg
        return arg
    return decorator


def get_registered_name(obj):
    """The name ``obj`` is registered under (``"package>name"``), else its ``__name__``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.saving.get_registered_name(tf.keras.layers.Dense)
        'Dense'
    """
    for registered, cls in _REGISTERED.items():
        if cls is obj:
            return registered
    return obj.__name__


_SCOPED = {}   # the objects of the open custom_object_scope()s


def get_custom_objects():
    """Keras 3's global dictionary of custom objects: ``register_keras_serializable`` writes its
    ``"package>name"`` entries here, and entries added by hand (``get_custom_objects()["MyLayer"] =
    MyLayer``) are found by ``load_model`` / ``deserialize_keras_object`` by class name.

    Example:
        >>> import tapejax as tf
        >>> @tf.keras.utils.register_keras_serializable(package="Demo")
        ... class Thrice(tf.keras.layers.Layer):
        ...     def call(self, x):
        ...         return 3 * x
        >>> tf.keras.utils.get_custom_objects()["Demo>Thrice"] is Thrice
        True
    """
    return _REGISTERED


class CustomObjectScope:
    """A ``with`` block in which ``custom_objects`` (a dict, or several) are known to deserialization
    (Keras 3's ``CustomObjectScope``; ``custom_object_scope`` is the same class).

    Example:
        >>> import tapejax as tf
        >>> class Mine(tf.keras.layers.Layer):
        ...     pass
        >>> with tf.keras.utils.custom_object_scope({"Mine": Mine}):
        ...     print(tf.keras.utils.get_registered_object("Mine") is Mine)
        True
        >>> tf.keras.utils.get_registered_object("Mine") is None
        True
    """

    def __init__(self, *args):
        self.custom_objects = {}
        for objects in args:
            if objects is not None:
                if not isinstance(objects, dict):
                    raise TypeError(f"Arguments to `CustomObjectScope` must be dicts or None. Received: {objects}")
                self.custom_objects.update(objects)
        self._backup = None

    def __enter__(self):
        self._backup = dict(_SCOPED)
        _SCOPED.update(self.custom_objects)
        return self

    def __exit__(self, *args):
        _SCOPED.clear()
        _SCOPED.update(self._backup)


custom_object_scope = CustomObjectScope


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class registered (or passed in ``custom_objects`` / ``module_objects``) as ``name``, or None.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.saving.get_registered_object("Nope>Missing") is None
        True
    """
    for table in (_SCOPED, _REGISTERED, custom_objects, module_objects):
        if table and name in table:
            return table[name]
    return None



def _public_module(cls):
    """The public Keras module of a tapejax class (None for a user's class)."""
    if not cls.__module__.startswith("tapejax."):
        return None
    return getattr(cls, "_keras_public_module", None)


def serialize_dict(config):
    """Each value of ``config`` serialized (``serialize_keras_object``), keys and order kept."""
    return {key: serialize_keras_object(value) for key, value in config.items()}


def serialize_keras_object(obj):
    """Keras 3's ``keras.saving.serialize_keras_object``: a plain-Python description of ``obj``.

    ``None``, strings, numbers and booleans are kept; lists, tuples and dicts are serialized
    item by item (a tuple stays a tuple); a NumPy scalar becomes its Python value and a NumPy
    array ``{'class_name': '__numpy__', 'config': {'value': [...], 'dtype': ...}}``; a Keras
    object becomes ``{'module', 'class_name', 'config', 'registered_name'}`` (plus its
    ``build_config`` / ``compile_config`` where it has one).

    Raises:
        TypeError: an object without ``get_config``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.saving.serialize_keras_object(tf.keras.initializers.Zeros())
        {'module': 'keras.initializers', 'class_name': 'Zeros', 'config': {}, 'registered_name': None}
    """
    if obj is None or isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, TensorShape):
        return obj.as_list() if obj.rank is not None else None
    if isinstance(obj, (list, tuple)):
        items = [serialize_keras_object(x) for x in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return serialize_dict(obj)
    if isinstance(obj, bytes):
        return {"class_name": "__bytes__", "config": {"value": obj.decode("utf-8")}}
    if isinstance(obj, slice):
        return {"class_name": "__slice__", "config": {"start": serialize_keras_object(obj.start),
                                                      "stop": serialize_keras_object(obj.stop),
                                                      "step": serialize_keras_object(obj.step)}}
    if obj is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(obj, Tensor):
        value = obj.numpy()
        return {"class_name": "__tensor__", "config": {"value": np.asarray(value).tolist(),
                                                        "dtype": _dtypes.as_dtype(obj.dtype).name}}
    if type(obj).__module__ == np.__name__:
        if isinstance(obj, np.ndarray) and obj.ndim > 0:
            return {"class_name": "__numpy__", "config": {"value": obj.tolist(),
                                                          "dtype": _dtypes.as_dtype(obj.dtype).name}}
        return obj.item()
    if isinstance(obj, _dtypes.DType):
        return obj.name
    if isinstance(obj, types.FunctionType) or not hasattr(obj, "get_config"):
        name = getattr(obj, "__name__", None)
        if name is None:
            raise TypeError(f"Cannot serialize object {obj} of type {type(obj)}. To be serializable, a class "
                            "must implement the `get_config()` method.")
        # Keras 3 names a function by the public class of functions: module 'builtins', registered 'function'
        return {"module": "builtins", "class_name": "function", "config": get_registered_name(obj),
                "registered_name": "function"}
    config = obj.get_config()
    if not isinstance(config, dict):
        raise TypeError(f"The `get_config()` method of {obj} should return a dict. It returned: {config}")
    cls = type(obj)
    module = _public_module(cls)
    identity = getattr(obj, "_k_keras_identity", None)   # an object named by what it is (a functional model)
    identity = identity() if identity is not None else None
    if identity is not None:
        module, class_name, registered = identity
        out = {"module": module, "class_name": class_name, "config": serialize_dict(config),
               "registered_name": registered}
    elif module is not None:
        out = {"module": module, "class_name": getattr(cls, "_keras_class_name", cls.__name__),
               "config": serialize_dict(config), "registered_name": getattr(cls, "_keras_registered_name", None)}
    else:
        out = {"module": cls.__module__, "class_name": cls.__name__, "config": serialize_dict(config),
               "registered_name": get_registered_name(cls)}
    _add_build_and_compile_config(obj, out)
    return out


def _add_build_and_compile_config(obj, out):
    build = getattr(obj, "get_build_config", None)
    if build is not None:
        config = build()
        if config is not None:
            out["build_config"] = serialize_dict(config)
    compile_ = getattr(obj, "get_compile_config", None)
    if compile_ is not None:
        config = compile_()
        if config is not None:
            out["compile_config"] = serialize_dict(config)


def _lookup(class_name, module, registered_name, custom_objects):
    """The class a configuration names: ``custom_objects``, then the registered classes, then
    tapejax's class for the public Keras module."""
    for table, key in ((custom_objects, registered_name), (custom_objects, class_name), (_SCOPED, registered_name),
                       (_SCOPED, class_name), (_REGISTERED, registered_name), (_REGISTERED, class_name)):
        if table and key in table:
            return table[key]
    if module == "keras.src.ops.numpy":   # an operation of a functional model (x * 2 on a KerasTensor)
        return _OPERATIONS(class_name)
    here = _PUBLIC_MODULES.get(module) if isinstance(module, str) else None
    if module == "keras" and class_name in _KERAS_TOP:
        here = _KERAS_TOP[class_name]
    if here is not None:
        found = getattr(importlib.import_module(here), "Model" if class_name == "Functional" else class_name, None)
        if found is not None:
            return found
    return None


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """Keras 3's ``keras.saving.deserialize_keras_object``: the object ``config`` describes.

    ``config`` is what :func:`serialize_keras_object` returned (also after a JSON round trip,
    where tuples are lists): plain values and lists are returned as they are, NumPy and
    tensor descriptions as arrays, and a ``{'module', 'class_name', 'config', ...}``
    description as ``cls.from_config(config)`` of the class it names.

    Raises:
        TypeError: a class that cannot be found (pass it in ``custom_objects``).

    Example:
        >>> import tapejax as tf
        >>> init = tf.keras.saving.deserialize_keras_object(
        ...     {'module': 'keras.initializers', 'class_name': 'Constant', 'config': {'value': 2.0},
        ...      'registered_name': None})
        >>> type(init).__name__, init.value
        ('Constant', 2.0)
    """
    if config is None or isinstance(config, _PLAIN):
        return config
    if isinstance(config, (list, tuple)):
        items = [deserialize_keras_object(x, custom_objects) for x in config]
        return tuple(items) if isinstance(config, tuple) else items
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config}")
    if "class_name" not in config or "config" not in config:
        return {k: deserialize_keras_object(v, custom_objects) for k, v in config.items()}
    class_name, inner = config["class_name"], config["config"]
    if class_name in ("__numpy__", "__tensor__"):
        value = np.array(inner["value"], dtype=_dtypes.np_dtype(inner["dtype"]))
        if class_name == "__tensor__":
            return _ops.convert_to_tensor(value)
        return value
    if class_name == "__bytes__":
        return inner["value"].encode("utf-8")
    if class_name == "__slice__":
        return slice(*(deserialize_keras_object(inner.get(k), custom_objects) for k in ("start", "stop", "step")))
    if class_name == "__ellipsis__":
        return Ellipsis
    cls = _lookup(class_name, config.get("module"), config.get("registered_name"), custom_objects)
    if class_name == "function":
        fn = _lookup(inner, None, inner, custom_objects) if isinstance(inner, str) else None
        if fn is None:
            raise TypeError(f"Could not locate function '{inner}'. Make sure custom classes and functions are "
                            "decorated with `@keras.saving.register_keras_serializable()`.")
        return fn
    if cls is None:
        raise TypeError(f"Could not locate class '{class_name}'. Make sure custom classes are decorated with "
                        f"`@keras.saving.register_keras_serializable()`. Full object config: {config}")
    if not isinstance(cls, type):
        return cls
    kwargs = {"custom_objects": custom_objects} if _takes_custom_objects(cls) and custom_objects else {}
    obj = cls.from_config(inner, **kwargs)
    build = config.get("build_config")
    if build and hasattr(obj, "build_from_config") and not getattr(obj, "built", True):
        obj.build_from_config(build)
    return obj


def _takes_custom_objects(cls):
    import inspect
    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False


def get(identifier, module_objects, public_module, kind):
    """An object of one Keras namespace (initializers, regularizers, constraints) from its
    description: a ``{'class_name', 'config'}`` dict (Keras 3's full form or Keras 2's), for
    ``module.get``."""
    class_name = identifier.get("class_name")
    if class_name == "function":   # a user's function, by its registered name
        fn = get_registered_object(identifier.get("config")) if isinstance(identifier.get("config"), str) else None
        if not callable(fn):
            raise ValueError(f"Could not interpret {kind} identifier: {identifier}")
        return fn
    cls = None
    if identifier.get("registered_name") or identifier.get("module") not in (None, public_module):
        cls = _lookup(class_name, identifier.get("module"), identifier.get("registered_name"), None)
    if cls is None:
        cls = module_objects.get(class_name)
    if not isinstance(cls, type):
        raise ValueError(f"Could not interpret {kind} identifier: {identifier}")
    return cls.from_config(dict(identifier.get("config") or {}))
