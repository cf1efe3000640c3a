"""Where TensorFlow exposes each op: every row of the table says it (``export``), and the
namespace modules (``tf``, ``tf.math``, ``tf.nn``...) are generated from what the rows said.

A path is where TensorFlow puts the name, as TensorFlow's own ``tf_export`` spells it:
``"reduce_sum"`` is ``tf.reduce_sum``, ``"math.reduce_sum"`` is ``tf.math.reduce_sum``,
``"linalg.transpose"`` may publish an op under another name.

Example:
    >>> from tapejax.ops.namespaces import exports
    >>> import tapejax as tf
    >>> exports("math")["reduce_sum"] is tf.math.reduce_sum is tf.reduce_sum
    True
"""
import types

from .._core.dispatch import add_dispatch_support

_NAMESPACES = {}  # namespace ("" is tf itself) -> {public name: object}


def export(*paths):
    """Publishes the decorated op or function at each of ``paths`` (TensorFlow's ``tf_export``).
    A Python function is published with type-based dispatch (``tf.experimental.dispatch_for_api``,
    see ``tapejax._core.dispatch``), as TensorFlow's ops are."""
    def register(obj):
        if isinstance(obj, types.FunctionType):
            obj = add_dispatch_support(obj)
        for path in paths:
            namespace, _, name = path.rpartition(".")
            names = _NAMESPACES.setdefault(namespace, {})
            if names.get(name, obj) is not obj:
                raise ValueError(f"two rows of the op table publish tf.{path}: {names[name]!r} and {obj!r}.")
            names[name] = obj
        return obj
    return register


def exports(namespace):
    """``{name: object}`` of the ops published in ``namespace`` ("" for ``tf`` itself, "math", "nn"...)."""
    return dict(_NAMESPACES.get(namespace, {}))
