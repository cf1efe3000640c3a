"""The object graph of a checkpoint, and values restored before their Variables exist.

A checkpoint holds the Variables reachable from its objects, keyed by *object path*, as
TensorFlow's object graph does: ``model/dense_1/kernel``, ``optimizer/iterations``. The
walk goes through the attributes of Modules, through lists, tuples and dicts (sorted keys),
and through any object defining the trackable protocol, ``_trackable_children()`` returning
``{name: child}`` (Checkpoints, optimizers, dataset iterators, :class:`AutoTrackable`
objects), breadth first, so a Variable reachable by several paths is stored once under its
shortest one.

Values whose Variables do not exist yet (an unbuilt model, an optimizer before its first
step, an attribute of a Checkpoint assigned later) are kept on the deepest existing object
of their path (``obj._deferred_restore``) and assigned when the object creates them: an
object that creates Variables after its construction calls :func:`apply_deferred` once it
has (a layer after ``build``, an optimizer after creating its slots); ``tf.Module`` and
Checkpoints do when an attribute is set.
"""
import collections

import jax
import numpy as np

from .._core import state as _state
from .._core.module import Module
from .._core.variable import Variable
from .format import _ATTRIBUTES


def _escape(name):
    """A path segment: '/' inside a name must not split it (TensorFlow's escaping).
    Names under ``.ATTRIBUTES/`` (an iterator's state) are TensorFlow's own keys."""
    name = str(name)
    if name.startswith(_ATTRIBUTES + "/"):
        return name
    return name.replace(".", "..").replace("/", ".S")


class ListWrapper(list):
    """A list attribute of a Checkpoint: a plain list that restores the Variables appended to
    it from an earlier ``restore()`` (TensorFlow's ``ListWrapper``)."""

    def __init__(self, items=(), owner=None):
        super().__init__(items)
        self._owner = owner

    def __repr__(self):
        return f"ListWrapper({list.__repr__(self)})"

    def _changed(self):
        if self._owner is not None:
            apply_deferred(self._owner)

    def append(self, x):
        super().append(x)
        self._changed()

    def extend(self, xs):
        super().extend(xs)
        self._changed()

    def insert(self, i, x):
        super().insert(i, x)
        self._changed()

    def __setitem__(self, i, x):
        super().__setitem__(i, x)
        self._changed()

    def __iadd__(self, xs):
        self.extend(xs)
        return self


class _DictWrapper(dict):
    """A dict attribute of a Checkpoint: restores the Variables added to it later."""

    def __init__(self, items=(), owner=None):
        super().__init__(items)
        self._owner = owner

    def __repr__(self):
        return f"DictWrapper({dict.__repr__(self)})"

    def __setitem__(self, k, x):
        super().__setitem__(k, x)
        if self._owner is not None:
            apply_deferred(self._owner)

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        if self._owner is not None:
            apply_deferred(self._owner)


def _wrap(value, owner):
    if type(value) is list:
        return ListWrapper(value, owner)
    if type(value) is dict:
        return _DictWrapper(value, owner)
    return value


def _is_trackable_object(x):
    return isinstance(x, Module) or hasattr(type(x), "_trackable_children")


def _holds_trackable(x, depth=0):
    if isinstance(x, Variable) or _is_trackable_object(x):
        return True
    if depth > 8:
        return False
    if isinstance(x, (list, tuple)):
        return any(_holds_trackable(e, depth + 1) for e in x)
    if isinstance(x, dict):
        return any(_holds_trackable(e, depth + 1) for e in x.values())
    return False


_SKIPPED_ATTRS = frozenset({"_deferred_restore", "__dict__", "__weakref__"})


def _children(obj):
    """The (name, child) pairs of one node of the object graph, in walk order."""
    if isinstance(obj, Variable):
        return []
    custom = getattr(type(obj), "_trackable_children", None)
    if custom is not None and not isinstance(obj, type):
        return list(custom(obj).items())
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _holds_trackable(v)]
    if isinstance(obj, dict):
        return [(str(k), obj[k]) for k in sorted(obj, key=str) if _holds_trackable(obj[k])]
    return _attribute_children(obj)


def _attribute_children(obj):
    """The attributes of ``obj`` that hold trackable values, by name (a Module's children)."""
    attrs = getattr(obj, "__dict__", None)
    if attrs is None:
        return []
    # _TF_CHECKPOINT_IGNORED_PROPERTIES: state an object keeps out of checkpoints only (a Keras
    # layer's random-seed state: a variable of the layer, in no weights file of Keras 3's).
    ignored = getattr(obj, "_TF_MODULE_IGNORED_PROPERTIES", frozenset()) | getattr(
        obj, "_TF_CHECKPOINT_IGNORED_PROPERTIES", frozenset())
    return [(k, attrs[k]) for k in sorted(attrs)
            if k not in _SKIPPED_ATTRS and k not in ignored and _holds_trackable(attrs[k])]


class AutoTrackable:
    """Base of objects whose attributes are their checkpoint children, as a ``tf.Module``'s are
    (TensorFlow's ``AutoTrackable``): Variables, Modules, other trackable objects, and lists and
    dicts of them. Derive from it to make an object's state part of the checkpoints and
    SavedModels of the objects that hold it.

    Example:
        >>> import tempfile, tapejax as tf
        >>> from tapejax.checkpoint import AutoTrackable
        >>> class Counter(AutoTrackable):
        ...     def __init__(self):
        ...         self.count = tf.Variable(3)
        >>> path = tf.train.Checkpoint(counter=Counter()).write(tempfile.mkdtemp() + '/ckpt')
        >>> int(tf.train.load_variable(path, 'counter/count/.ATTRIBUTES/VARIABLE_VALUE'))
        3
    """

    def _trackable_children(self):
        return dict(_attribute_children(self))


def _kind(obj):
    if isinstance(obj, (list, tuple)):
        return "list"
    if isinstance(obj, dict):
        return "dict"
    return "object"


class Graph:
    """The object graph below a root: Variables and objects by path (breadth first)."""

    def __init__(self, root):
        self.variables = {}   # path -> Variable
        self.objects = {"": root}   # path -> container / trackable object
        self.kinds = {"": _kind(root)}
        self.aliases = {}     # another path to an object or Variable -> its path above
        seen = {id(root): ""}
        frontier = [("", root)]
        while frontier:
            nxt = []
            for path, obj in frontier:
                for name, child in _children(obj):
                    cpath = f"{path}/{_escape(name)}" if path else _escape(name)
                    if id(child) in seen:
                        if seen[id(child)] != cpath:
                            self.aliases.setdefault(cpath, seen[id(child)])
                        continue
                    seen[id(child)] = cpath
                    if isinstance(child, Variable):
                        self.variables[cpath] = child
                    else:
                        self.objects[cpath] = child
                        self.kinds[cpath] = _kind(child)
                        nxt.append((cpath, child))
            frontier = nxt

    def paths_of(self, paths):
        """{other path: path} for the values at ``paths`` reachable by other paths (aliases,
        and the Variables below aliased objects)."""
        by_target = collections.defaultdict(list)
        for alias, target in self.aliases.items():
            by_target[target].append(alias)
        out, frontier = {}, {p: p for p in paths}
        for _ in range(8):   # aliases of aliased objects, a few levels deep
            found = {}
            for p, canonical in frontier.items():
                parts = p.split("/")
                for i in range(len(parts), 0, -1):   # the path itself, then the objects above it
                    target = "/".join(parts[:i])
                    for alias in by_target.get(target, ()):
                        q = alias + p[len(target):]
                        if q not in out and q not in paths:
                            found[q] = canonical
            if not found:
                break
            out.update(found)
            frontier = found
        return out

    def owner(self, path):
        """The deepest existing object on ``path`` and the rest of the path below it."""
        parts = path.split("/")
        for i in range(len(parts) - 1, -1, -1):
            prefix = "/".join(parts[:i])
            obj = self.objects.get(prefix)
            if obj is not None and not isinstance(obj, (list, tuple, dict)):
                return obj, "/".join(parts[i:])
        return None, path


def _mismatch(path, var, value):
    if tuple(var._value.shape) == tuple(value.shape):
        return None
    return (f"'{path}' (variable '{var.name}'): checkpoint shape {tuple(value.shape)}, "
            f"variable shape {tuple(var._value.shape)}")


def _raise_mismatches(problems, where):
    raise ValueError(
        f"Cannot restore {where}: the shapes of {len(problems)} value(s) differ from their "
        "Variables: " + "; ".join(problems) + ". The checkpoint was written by a differently "
        "configured model: build the model with the same configuration (layer sizes) as the one "
        "that was saved. Nothing was assigned.")


def _check_shape(path, var, value):
    problem = _mismatch(path, var, value)
    if problem:
        _raise_mismatches([problem], "a deferred checkpoint value")


def _as_value(var, value):
    if isinstance(value, jax.Array) and value.dtype == var.dtype._np:
        return value   # read from the checkpoint in the Variable's layout
    # Concrete even while a tf.function is traced (the restore happens during a lazy build).
    with jax.ensure_compile_time_eval():
        return jax.device_put(np.asarray(value, dtype=var.dtype._np))


def apply_deferred(obj):
    """Assigns checkpoint values kept for ``obj`` to the Variables it has created since.

    The deferred-restore hook: an object that creates Variables after its construction calls
    it once it has (a Keras layer after ``build``, an optimizer after creating its slots); a
    no-op when nothing was deferred. Values for Variables still missing
    stay pending (or move to a sub-object that now exists).
    """
    pending = getattr(obj, "__dict__", {}).get("_deferred_restore")
    if not pending:
        return
    graph = Graph(obj)
    for path in list(pending):
        var = graph.variables.get(path)
        if var is not None:
            value = pending.pop(path)
            _check_shape(path, var, value)
            # Not through assign: this may run while a tf.function is traced (a lazy build),
            # and a restore is not a write of the traced step but the Variable's initial value.
            _state.initialize(var, _as_value(var, value))
            continue
        owner, rest = graph.owner(path)
        if owner is not None and owner is not obj:
            value = pending.pop(path)
            _defer(owner, rest, value)
            apply_deferred(owner)
    if not pending:
        try:
            del obj._deferred_restore
        except AttributeError:
            pass


class _Pending(dict):
    """Checkpoint values kept on an object for Variables it does not have yet ({path: value});
    ``tf.Module.__setattr__`` calls ``apply`` when an attribute is set."""

    def apply(self, owner):
        apply_deferred(owner)


def _defer(obj, path, value):
    pending = obj.__dict__.get("_deferred_restore")
    if pending is None:
        pending = _Pending()
        try:
            obj._deferred_restore = pending
        except AttributeError:
            obj.__dict__["_deferred_restore"] = pending
    pending[path] = value
