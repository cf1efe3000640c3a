"""tf.nest: nested structures of lists, tuples, namedtuples and dicts, as TensorFlow handles them.

Everything else is an atom (a leaf): Tensors, numbers, strings, ``None``. A dict's values are
visited in sorted key order (an ``OrderedDict``'s too), and packing rebuilds the same types.
Unlike ``jax.tree_util``, ``None`` is a leaf. Composite values are leaves too; with
``expand_composites=True`` they are structures of their components (TensorFlow's
``_to_components``): an ExtensionType's fields, a RaggedTensor's ``flat_values`` and
``nested_row_splits``, a SparseTensor's ``indices``, ``values`` and ``dense_shape``.

Example:
    >>> import tapejax as tf
    >>> tf.nest.flatten({"b": [1, (2, None)], "a": 3})
    [3, 1, 2, None]
    >>> tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
    >>> tf.nest.pack_sequence_as({"b": 0, "a": 0}, ["first", "second"])
    {'b': 'second', 'a': 'first'}
"""
import collections.abc

from .experimental import extension_type as _ext
from .ragged import RaggedTensor as _RaggedTensor
from .sparse import SparseTensor as _SparseTensor

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_attrs(x):
    return hasattr(type(x), "__attrs_attrs__")


def is_nested(seq):
    """Whether ``seq`` is a structure (list, tuple, dict, attrs object), not an atom.

    Example:
        >>> import tapejax as tf
        >>> tf.nest.is_nested([1]), tf.nest.is_nested("ab"), tf.nest.is_nested({})
        (True, False, True)
    """
    return isinstance(seq, (list, tuple, collections.abc.Mapping)) or _is_attrs(seq)


def _sorted(keys):
    try:
        return sorted(keys)
    except TypeError as e:
        raise TypeError("nest only supports dicts with sortable keys.") from e


_COMPOSITES = (_ext.ExtensionType, _RaggedTensor, _SparseTensor)


def _nested(s, expand):
    return is_nested(s) or expand and isinstance(s, _COMPOSITES)


def _children(s):
    """The direct substructures of a nested ``s``, in TensorFlow's order."""
    if isinstance(s, _ext.ExtensionType):
        return list(_ext.components(s))
    if isinstance(s, _RaggedTensor):
        return [s.flat_values, *s.nested_row_splits]
    if isinstance(s, _SparseTensor):
        return [s.indices, s.values, s.dense_shape]
    if isinstance(s, collections.abc.Mapping):
        return [s[k] for k in _sorted(s)]
    if _is_attrs(s):
        return [getattr(s, a.name) for a in type(s).__attrs_attrs__]
    return list(s)


def _rebuild(s, kids):
    """A structure like ``s`` with the direct substructures ``kids``."""
    if isinstance(s, _ext.ExtensionType):
        return _ext.rebuilt(s, kids)
    if isinstance(s, _RaggedTensor):
        return _RaggedTensor.from_nested_row_splits(kids[0], kids[1:], validate=False)
    if isinstance(s, _SparseTensor):
        return _SparseTensor(*kids)
    if isinstance(s, collections.abc.Mapping):
        by_key = dict(zip(_sorted(s), kids))
        if isinstance(s, collections.defaultdict):
            out = collections.defaultdict(s.default_factory)
            for k in s:
                out[k] = by_key[k]
            return out
        return type(s)((k, by_key[k]) for k in s)
    if _is_namedtuple(s):
        return type(s)(*kids)
    if _is_attrs(s):
        return type(s)(*kids)
    if isinstance(s, tuple):
        return tuple(kids) if type(s) is tuple else type(s)(kids)
    return type(s)(kids) if type(s) is not list else list(kids)


def flatten(structure, expand_composites=False):
    """The atoms of ``structure`` in order (a one-element list for an atom, ``None`` included).

    Example:
        >>> import tapejax as tf
        >>> tf.nest.flatten(None), tf.nest.flatten([])
        ([None], [])
        >>> tf.nest.flatten(tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2]]), expand_composites=True)
        [<tf.Tensor: shape=(7,), dtype=int32, numpy=array([3, 1, 4, 1, 5, 9, 2], dtype=int32)>, <tf.Tensor: shape=(4,), dtype=int64, numpy=array([0, 4, 4, 7])>]
    """
    if not _nested(structure, expand_composites):
        return [structure]
    out = []
    for kid in _children(structure):
        out.extend(flatten(kid, expand_composites))
    return out


def _pack(structure, flat, i, expand=False):
    if not _nested(structure, expand):
        return flat[i], i + 1
    kids = []
    for kid in _children(structure):
        packed, i = _pack(kid, flat, i, expand)
        kids.append(packed)
    return _rebuild(structure, kids), i


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """``flat_sequence`` packed into the structure of ``structure`` (the inverse of :func:`flatten`).

    Raises:
        TypeError: ``flat_sequence`` is not a sequence.
        ValueError: it has another number of items than ``structure`` has atoms.
    """
    if not is_nested(flat_sequence):
        raise TypeError(f"Attempted to pack value:\n  {flat_sequence}\ninto a structure, but found "
                        f"incompatible type `{type(flat_sequence)}` instead.")
    flat = list(flat_sequence)
    if not _nested(structure, expand_composites):
        if len(flat) != 1:
            raise ValueError(f"The target structure is of type `{type(structure)}`\n  {structure}\nHowever the "
                             f"input is a sequence ({type(flat_sequence)}) of length {len(flat)}.\n  "
                             f"{flat_sequence}\nnest cannot guarantee that it is safe to map one to the other.")
        return flat[0]
    n = len(flatten(structure, expand_composites))
    if n != len(flat):
        raise ValueError(f"Could not pack sequence. Structure had {n} atoms, but flat_sequence had {len(flat)} "
                         f"items.  Structure: {structure}, flat_sequence: {flat_sequence}.")
    return _pack(structure, flat, 0, expand_composites)[0]


class _Dot:
    def __repr__(self):
        return "."


def _desc(x):
    return f"type={type(x).__name__} str={x}"


def _shape_of(s):
    return pack_sequence_as(s, [_Dot()] * len(flatten(s))) if is_nested(s) else _Dot()


def _mismatch(a, b, check_types):
    """(exception class, 'More specifically' text) for the first difference of ``a`` and ``b``, or None."""
    if is_nested(a) != is_nested(b):
        seq, atom = (a, b) if is_nested(a) else (b, a)
        return ValueError, f'Substructure "{_desc(seq)}" is a sequence, while substructure "{_desc(atom)}" is not'
    if not is_nested(a):
        return None
    if check_types and type(a) is not type(b) and not (
            isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping)):
        return TypeError, (f"The two namedtuples don't have the same sequence type. First structure {_desc(a)} "
                           f"has type {type(a).__name__}, while second structure {_desc(b)} has type "
                           f"{type(b).__name__}")
    if isinstance(a, collections.abc.Mapping) and isinstance(b, collections.abc.Mapping) and set(a) != set(b):
        return ValueError, (f"The two dictionaries don't have the same set of keys. First structure has keys "
                            f"{_desc(_sorted(a))}, while second structure has keys {_desc(_sorted(b))}")
    ka, kb = _children(a), _children(b)
    if len(ka) != len(kb):
        return ValueError, (f"The two structures don't have the same number of elements. First structure: "
                            f"{_desc(a)}. Second structure: {_desc(b)}")
    for x, y in zip(ka, kb):
        found = _mismatch(x, y, check_types)
        if found:
            return found
    return None


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raises unless ``nest1`` and ``nest2`` have the same nested structure (TensorFlow's messages).

    Raises:
        ValueError: different nesting, numbers of elements or dict keys.
        TypeError: with ``check_types``, different sequence types (list vs tuple, two namedtuples).
    """
    found = _mismatch(nest1, nest2, check_types)
    if found:
        cls, detail = found
        raise cls(f"The two structures don't have the same nested structure.\n\nFirst structure: {_desc(nest1)}"
                  f"\n\nSecond structure: {_desc(nest2)}\n\nMore specifically: {detail}\nEntire first structure:\n"
                  f"{_shape_of(nest1)}\nEntire second structure:\n{_shape_of(nest2)}")


def map_structure(func, *structure, **kwargs):
    """``func`` applied to the atoms of the structures, packed like the first one.

    Raises:
        ValueError: no structure, an unknown keyword, or structures that differ.
        TypeError: with ``check_types`` (default True), structures of different sequence types.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    expand = kwargs.pop("expand_composites", False)
    for k in kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and `expand_composites`, not: `{k}`")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flat = [flatten(s, expand) for s in structure]
    return pack_sequence_as(structure[0], [func(*xs) for xs in zip(*flat)], expand_composites=expand)
