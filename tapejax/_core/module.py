"""tf.Module: a named container that finds its Variables and submodules."""
import re

from .variable import Variable, name_scope as _name_scope


def _snake(name):
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _leaves(value):
    """Leaves of nested lists/tuples/dicts (dicts in sorted key order, like tf.nest)."""
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            yield from _leaves(value[k])
    else:
        yield value


class Module:
    """Base class of models and layers: ``variables``, ``trainable_variables``, ``submodules``.

    Attributes are walked in sorted name order (nested lists, tuples and dicts
    included), then submodules, as in TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> class Dense(tf.Module):
        ...     def __init__(self, n_in, n_out, name=None):
        ...         super().__init__(name=name)
        ...         self.w = tf.Variable(tf.ones([n_in, n_out]), name='w')
        ...         self.b = tf.Variable(tf.zeros([n_out]), name='b')
        ...     def __call__(self, x):
        ...         return x @ self.w + self.b
        >>> d = Dense(3, 2)
        >>> [v.name for v in d.trainable_variables]
        ['b:0', 'w:0']
    """

    _TF_MODULE_IGNORED_PROPERTIES = frozenset()
    # A Keras 3 layer is not a tf.Module: a tf.Module's variables and submodules do not include
    # the Keras layers its attributes hold, nor theirs (TF 2.21). Layers say False.
    _is_tf_module = True

    def __init__(self, name=None):
        if name is None:
            name = _snake(type(self).__name__)
        self._name = name

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        # Checkpoint values restored before this attribute existed (tf.train keeps them here).
        pending = self.__dict__.get("_deferred_restore")
        if pending and name != "_deferred_restore":
            pending.apply(self)

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        return _name_scope(self._name)

    def _flatten(self, predicate, recursive=True, seen=None, everything=False):
        """The attributes' leaves ``predicate`` holds for, then the submodules'. ``everything``:
        also inside the Keras layers held (every Variable reachable, for tapejax's own use)."""
        seen = {id(self)} if seen is None else seen
        subs = []
        attrs = vars(self)
        for key in sorted(attrs):
            if key in self._TF_MODULE_IGNORED_PROPERTIES:
                continue
            for leaf in _leaves(attrs[key]):
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
                if isinstance(leaf, Module) and not (everything or leaf._is_tf_module):
                    continue
                if predicate(leaf):
                    yield leaf
                if recursive and isinstance(leaf, Module):
                    subs.append(leaf)
        for m in subs:
            if everything and not m._is_tf_module:
                yield from (v for v in m._every_variable() if predicate(v))
            else:
                yield from m._flatten(predicate, recursive, seen, everything)

    def _every_variable(self):
        """Every Variable this object reaches (a tf.Module's attributes, the Keras layers they
        hold and those layers' own state): what a ``tf.function`` may capture."""
        return self._flatten(lambda x: isinstance(x, Variable), everything=True)

    @property
    def variables(self):
        return tuple(self._flatten(lambda x: isinstance(x, Variable)))

    @property
    def trainable_variables(self):
        return tuple(self._flatten(lambda x: isinstance(x, Variable) and x.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._flatten(lambda x: isinstance(x, Variable) and not x.trainable))

    @property
    def submodules(self):
        return tuple(self._flatten(lambda x: isinstance(x, Module)))

    @classmethod
    def with_name_scope(cls, method):
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        wrapped.__name__ = method.__name__
        wrapped.__doc__ = method.__doc__
        return wrapped
