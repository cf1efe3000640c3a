"""tf.experimental.ExtensionType: user-defined composite values, TensorFlow's way over JAX.

A subclass declares its fields with type annotations; TensorFlow's rules check and convert
them (``tf.Tensor`` fields through ``tf.convert_to_tensor``, ``Mapping`` fields into an
``ImmutableDict``, ``Tuple``/``Union``/nested ExtensionTypes...), generate ``__init__``,
``__repr__``, ``__eq__`` and a nested ``Spec`` class, and make the value immutable.

Underneath, every ExtensionType is a JAX pytree: its tensors (and nested composite values)
are the children, everything else (the class, the fields' Python values, the structure of
mappings and tuples) the static data. So a value passes through ``tf.function`` (its spec
is in the tracing key), ``tf.cond``, ``tf.while_loop`` and ``jax.jit`` as its tensors.
"""
import abc
import collections
import collections.abc
import inspect
import typing

import jax
import numpy as np

from .._core import dtypes as _dtypes, dispatch as _dispatch
from .._core.batching import UNBATCH as _UNBATCH
from .._core.tensor import Tensor, TensorShape, _TensorBase
from .. import ops as _ops
from .._staging.function import TensorSpec
from ..ragged import RaggedTensor, RaggedTensorSpec
from ..sparse import SparseTensor, SparseTensorSpec

_IN_CONSTRUCTOR = "_tf_extension_type_in_constructor"

RESERVED_FIELD_NAMES = [
    "self", "_tf_extension_type_cached_type_spec", "_tf_extension_type_cached_fields",
    "_tf_extension_type_fields", "_tf_extension_type_packed_variant", "_type_spec",
    "_shape_invariant_to_type_spec", "_consumers", "value_type", "is_compatible_with",
    "most_specific_compatible_type", "_with_tensor_ranks_only", "_to_components", "_from_components",
    "_component_specs", "_to_tensor_list", "_from_tensor_list", "_from_compatible_tensor_list",
    "_flat_tensor_specs", "_serialize", "_deserialize", "_to_legacy_output_types",
    "_to_legacy_output_shapes", "_to_legacy_output_classes", "_keras_mask",
]
_MUTABLE_KERAS_PROPERTIES = ["_keras_mask", "_keras_history", "_keras_history_checked"]


class _Sentinel:
    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name


class ImmutableDict(collections.abc.Mapping):
    """The mapping a ``Mapping`` field holds: read-only, in the order it was given."""

    __slots__ = ("_dict",)

    def __init__(self, *args, **kwargs):
        self._dict = dict(*args, **kwargs)

    def __getitem__(self, key):
        return self._dict[key]

    def __contains__(self, key):
        return key in self._dict

    def __iter__(self):
        return iter(self._dict)

    def __len__(self):
        return len(self._dict)

    def __repr__(self):
        return f"ImmutableDict({self._dict!r})"

    def __eq__(self, other):
        return dict(self._dict) == (dict(other) if isinstance(other, collections.abc.Mapping) else other)

    __hash__ = None


# ---------------------------------------------------------------------------
# Fields: annotations, TensorFlow's type checks and conversions
# ---------------------------------------------------------------------------

def _is_composite_type(t):
    return isinstance(t, type) and issubclass(t, (ExtensionType, RaggedTensor, SparseTensor))


def _is_forward_ref(t):
    return isinstance(t, (str, typing.ForwardRef))


def _is_tuple(t):
    return typing.get_origin(t) is tuple


def _is_mapping(t):
    return typing.get_origin(t) in (collections.abc.Mapping, dict)


def _args(t):
    return typing.get_args(t)


def validate_field_value_type(value_type, in_mapping_key=False, allow_forward_references=False):
    """Raises TensorFlow's TypeError for a field annotation ExtensionType does not support."""
    if _is_forward_ref(value_type):
        if allow_forward_references:
            return
        raise TypeError(f"Unresolved forward reference {value_type!r}")
    if value_type in (int, float, str, bytes, bool, None, type(None), _dtypes.DType):
        return
    if value_type in (Tensor, TensorShape) or _is_composite_type(value_type):
        if in_mapping_key:
            raise TypeError(f"Mapping had a key {value_type.__name__!r} with type {type(value_type).__name__!r}")
    elif _is_tuple(value_type) or _dispatch.is_union(value_type):
        args = _args(value_type)
        if len(args) == 2 and args[1] is Ellipsis and _is_tuple(value_type):
            validate_field_value_type(args[0], in_mapping_key, allow_forward_references)
        else:
            for a in args:
                validate_field_value_type(a, in_mapping_key, allow_forward_references)
    elif _is_mapping(value_type):
        key_type, item_type = _args(value_type)
        validate_field_value_type(key_type, True, allow_forward_references)
        validate_field_value_type(item_type, in_mapping_key, allow_forward_references)
    elif isinstance(value_type, type):
        raise TypeError(f"Unsupported type annotation {value_type.__name__!r}")
    else:
        raise TypeError(f"Unsupported type annotation {value_type!r}")


_VALUE, _SPEC, _DEFAULT = "value", "spec", "default"


class ExtensionTypeField(collections.namedtuple("ExtensionTypeField", ["name", "value_type", "default"])):
    """One field of an ExtensionType: its name, annotation and default."""

    NO_DEFAULT = _Sentinel("ExtensionTypeField.NO_DEFAULT")

    def __new__(cls, name, value_type, default=NO_DEFAULT):
        try:
            validate_field_value_type(value_type, allow_forward_references=True)
        except TypeError as e:
            raise TypeError(f"In field {name!r}: {e}") from e
        if default is not cls.NO_DEFAULT:
            default = _convert_value(default, value_type, (f"default value for {name}",), _DEFAULT)
        return super().__new__(cls, name, value_type, default)

    @staticmethod
    def is_reserved_name(name):
        return name in RESERVED_FIELD_NAMES or name.lower().startswith("_tf_extension_type")


_NO_DEFAULT = ExtensionTypeField.NO_DEFAULT


def _convert_fields(fields, values, context):
    if len(fields) != len(values) or any(f.name not in values for f in fields):
        expected, actual = {f.name for f in fields}, set(values)
        if actual - expected:
            raise ValueError(f"Got unexpected fields: {actual - expected}")
        raise ValueError(f"Missing required fields: {expected - actual}")
    for f in fields:
        values[f.name] = _convert_value(values[f.name], f.value_type, (f.name,), context)


def _convert_value(value, expected, path, context=_VALUE):
    where = "".join(path)
    if expected is None:
        expected = type(None)
    if expected is Tensor:
        return _convert_tensor(value, where, context)
    if _is_composite_type(expected):
        if context == _SPEC:
            if not (isinstance(value, TypeSpec) and issubclass(value.value_type, expected)):
                raise TypeError(f"{where}: expected a TypeSpec for {expected.__name__!r}, got "
                                f"{type(value).__name__!r}")
            return value
        if not isinstance(value, expected):
            raise TypeError(f"{where}: expected {expected.__name__!r}, got {type(value).__name__!r}")
        return value
    if expected is TensorShape:
        try:
            return TensorShape(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{where}: expected 'tf.TensorShape', got {type(value).__name__!r}") from e
    if expected is _dtypes.DType:
        try:
            return _dtypes.as_dtype(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{where}: expected 'tf.DType', got {type(value).__name__!r}") from e
    if expected in (int, float, bool, str, bytes, type(None)):
        if not isinstance(value, expected):
            raise TypeError(f"{where}: expected {expected.__name__!r}, got {type(value).__name__!r}")
        return value
    if _is_tuple(expected):
        return _convert_tuple(value, expected, path, context)
    if _is_mapping(expected):
        if not isinstance(value, collections.abc.Mapping):
            raise TypeError(f"{where}: expected mapping, got {type(value).__name__!r}")
        key_type, item_type = _args(expected)
        return ImmutableDict([(_convert_value(k, key_type, path + ("[<key>]",), context),
                               _convert_value(v, item_type, path + (f"[{k!r}]",), context))
                              for k, v in value.items()])
    if _dispatch.is_union(expected):
        for option in _args(expected):
            try:
                return _convert_value(value, option, path, context)
            except TypeError:
                pass
        raise TypeError(f"{where}: expected {expected!r}, got {type(value).__name__!r}")
    raise TypeError(f"{where}: Unsupported type annotation {expected!r}")


def _convert_tensor(value, where, context):
    if context == _SPEC:
        if not isinstance(value, TensorSpec):
            raise TypeError(f"{where}: expected a TensorSpec, got {type(value).__name__!r}")
        return value
    if not isinstance(value, Tensor):
        if context == _DEFAULT:
            return value
        try:
            value = _ops.convert_to_tensor(value)
        except (ValueError, TypeError) as e:
            raise TypeError(f"{where}: expected a Tensor, got {type(value).__name__!r}") from e
    return value


def _convert_tuple(value, expected, path, context):
    where = "".join(path)
    if not isinstance(value, collections.abc.Sequence) or isinstance(value, (str, bytes)):
        raise TypeError(f"{where}: expected tuple, got {type(value).__name__!r}")
    types = _args(expected)
    if len(types) == 2 and types[1] is Ellipsis:
        return tuple(_convert_value(v, types[0], path + (f"[{i}]",), context) for i, v in enumerate(value))
    if len(value) != len(types):
        raise TypeError(f"{where}: expected tuple with length {len(types)}, got {type(value).__name__!r})")
    return tuple(_convert_value(v, t, path + (f"[{i}]",), context) for i, (v, t) in enumerate(zip(value, types)))


# ---------------------------------------------------------------------------
# Components: the tensors and composite values inside a structure of field values
# ---------------------------------------------------------------------------

class _Leaf:
    """A component's place in a template (the static part of a value)."""

    def __repr__(self):
        return "<component>"


_LEAF = _Leaf()


_STATIC_TYPES = (type(None), bool, int, float, str, bytes, _dtypes.DType, TensorShape, collections.abc.Mapping)


def _is_component(x):
    """Whether a field value (or a part of one) is a component: anything but the static values
    (Python scalars, strings, dtypes, shapes) and the tuples and mappings holding them. JAX
    may rebuild a value with placeholders of its own in the components' places."""
    return not isinstance(x, _STATIC_TYPES) and not _is_tuple_value(x)


def _split(x, out):
    """The template of ``x`` (components replaced by _LEAF), appending its components to ``out``."""
    if _is_component(x):
        out.append(x)
        return _LEAF
    if isinstance(x, collections.abc.Mapping):
        return ("map", tuple(x.keys()), tuple(_split(v, out) for v in x.values()))
    if _is_tuple_value(x):
        return ("tuple", tuple(_split(v, out) for v in x))
    return ("value", x)


def _is_tuple_value(x):
    return isinstance(x, tuple) and not isinstance(x, TensorShape)   # a TensorShape is a tuple too


def _join(template, it):
    if template is _LEAF:
        return next(it)
    kind = template[0]
    if kind == "map":
        return ImmutableDict(zip(template[1], [_join(t, it) for t in template[2]]))
    if kind == "tuple":
        return tuple(_join(t, it) for t in template[1])
    return template[1]


def _fields_dict(value):
    return {f.name: value.__dict__[f.name] for f in type(value)._tf_extension_type_fields()}


def _flatten_value(value):
    comps = []
    names = tuple(f.name for f in type(value)._tf_extension_type_fields())
    template = tuple(_split(value.__dict__[n], comps) for n in names)
    return comps, (names, template)


def _unflatten_value(cls, aux, comps):
    names, template = aux
    it = iter(comps)
    return _new(cls, dict(zip(names, [_join(t, it) for t in template])))


def _new(cls, fields):
    """An instance with these fields, without running the constructor or ``__validate__``
    (TensorFlow's ``_create_object_from_type_and_dict``)."""
    value = object.__new__(cls)
    value.__dict__.update(fields)
    return value


def _spec_of_component(x):
    if isinstance(x, (TypeSpec, TensorSpec, RaggedTensorSpec, SparseTensorSpec)):   # a value's description
        return x
    if isinstance(x, ExtensionType):
        return x._type_spec
    if isinstance(x, RaggedTensor):
        return RaggedTensorSpec.from_value(x)
    if isinstance(x, SparseTensor):
        return SparseTensorSpec(x.shape, x.dtype)
    if isinstance(x, _TensorBase):
        return TensorSpec(x.shape, x.dtype)
    return TensorSpec(np.shape(x), _dtypes.as_dtype(x.dtype))


def _replace_components(x, fn):
    if _is_component(x):
        return fn(x)
    if isinstance(x, collections.abc.Mapping):
        return ImmutableDict([(k, _replace_components(v, fn)) for k, v in x.items()])
    if _is_tuple_value(x):
        return tuple(_replace_components(v, fn) for v in x)
    return x


def _spec_leaves(x, out):
    if isinstance(x, (TypeSpec, TensorSpec, RaggedTensorSpec, SparseTensorSpec)):
        out.append(x)
    elif isinstance(x, collections.abc.Mapping):
        for v in x.values():
            _spec_leaves(v, out)
    elif _is_tuple_value(x):
        for v in x:
            _spec_leaves(v, out)
    return out


def _spec_map(x, fn):
    if isinstance(x, (TypeSpec, TensorSpec, RaggedTensorSpec, SparseTensorSpec)):
        return fn(x)
    if isinstance(x, collections.abc.Mapping):
        return ImmutableDict([(k, _spec_map(v, fn)) for k, v in x.items()])
    if _is_tuple_value(x):
        return tuple(_spec_map(v, fn) for v in x)
    return x


def _plain_mappings(x):
    if isinstance(x, collections.abc.Mapping):
        return {k: _plain_mappings(v) for k, v in x.items()}
    if _is_tuple_value(x):
        return tuple(_plain_mappings(v) for v in x)
    return x


# ---------------------------------------------------------------------------
# ExtensionType
# ---------------------------------------------------------------------------

class ExtensionTypeMetaclass(abc.ABCMeta):
    """Metaclass of ExtensionType: checks the annotations, builds ``__init__`` and ``Spec``,
    and registers the class as a JAX pytree."""

    def __init__(cls, name, bases, namespace):
        if not namespace.get("_tf_extension_type_do_not_transform_this_class", False):
            _check_field_annotations(cls)
            _add_extension_type_constructor(cls)
            _add_type_spec(cls)
            jax.tree_util.register_pytree_node(cls, _flatten_value,
                                               lambda aux, c, cls=cls: _unflatten_value(cls, aux, c))
        super().__init__(name, bases, namespace)


class ExtensionType(metaclass=ExtensionTypeMetaclass):
    """Base class of user-defined composite values (``tf.experimental.ExtensionType``).

    A subclass declares its fields with type annotations: ``tf.Tensor``, ``tf.TensorShape``,
    ``tf.DType``, ``int``/``float``/``str``/``bytes``/``bool``/``None``, other ExtensionTypes,
    ``tf.RaggedTensor``/``tf.SparseTensor``, and ``Tuple``, ``Mapping``, ``Union``, ``Optional``
    of those. Values are converted to the declared types (a ``Mapping`` becomes an
    ``ImmutableDict``) and checked; the value is immutable; ``__validate__`` runs after
    construction. It can be an argument and a result of ``tf.function``, ``tf.cond`` and
    ``tf.while_loop``.

    Example:
        >>> import tapejax as tf
        >>> class MaskedTensor(tf.experimental.ExtensionType):
        ...     values: tf.Tensor
        ...     mask: tf.Tensor
        >>> mt = MaskedTensor([1, 2], [True, False])
        >>> mt.values
        <tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>
        >>> tf.type_spec_from_value(mt).values
        TensorSpec(shape=(2,), dtype=tf.int32, name=None)
    """

    _tf_extension_type_do_not_transform_this_class = True

    def __init__(self, *args, **kwargs):
        if type(self) is ExtensionType:
            raise AssertionError("Cannot create an instance of ExtensionType because ExtensionType is an "
                                 "abstract base class.")

    _tf_extension_type_cached_fields = None

    @classmethod
    def _tf_extension_type_fields(cls):
        if "_tf_extension_type_cached_fields" in cls.__dict__:
            return cls._tf_extension_type_cached_fields
        try:
            hints = typing.get_type_hints(cls)
            ok_to_cache = True
        except (NameError, AttributeError):
            hints = {}
            for base in reversed(cls.__mro__):
                hints.update(base.__dict__.get("__annotations__", {}))
            ok_to_cache = False
        fields = tuple(ExtensionTypeField(name, t, getattr(cls, name, _NO_DEFAULT)) for name, t in hints.items())
        if ok_to_cache:
            cls._tf_extension_type_cached_fields = fields
        return fields

    @classmethod
    def _tf_extension_type_has_field(cls, name):
        return any(name == f.name for f in cls._tf_extension_type_fields())

    def _tf_extension_type_convert_fields(self):
        _convert_fields(self._tf_extension_type_fields(), self.__dict__, _VALUE)

    def __repr__(self):
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self._tf_extension_type_fields())
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name, value):
        if name in _MUTABLE_KERAS_PROPERTIES or (
                _IN_CONSTRUCTOR in self.__dict__ and self._tf_extension_type_has_field(name)):
            self.__dict__[name] = value
        else:
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of ExtensionType.")

    def __delattr__(self, name):
        if name in _MUTABLE_KERAS_PROPERTIES or (
                _IN_CONSTRUCTOR in self.__dict__ and self._tf_extension_type_has_field(name)):
            del self.__dict__[name]
        else:
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of ExtensionType.")

    def __getattr__(self, name):
        if name in _MUTABLE_KERAS_PROPERTIES:
            return object.__getattribute__(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __eq__(self, other):
        if type(self) is not type(other):
            return False
        if self._type_spec != other._type_spec:
            return False
        a, b = jax.tree_util.tree_leaves(self), jax.tree_util.tree_leaves(other)
        if len(a) != len(b):
            return False
        conditions = []
        for t1, t2 in zip(a, b):
            t1, t2 = _ops.convert_to_tensor(t1), _ops.convert_to_tensor(t2)
            if t1.shape != t2.shape:
                return _ops.constant(False)
            conditions.append(_ops.reduce_all(_ops.equal(t1, t2)))
        # (no tensors: TensorFlow's reduce_all of an empty float stack, an InvalidArgumentError)
        return _ops.reduce_all(_ops.stack(conditions))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return _ops.logical_not(eq) if isinstance(eq, _TensorBase) else not eq

    __hash__ = None

    def __validate__(self):
        """Perform post-construction validation."""

    def __tf_batch_static__(self, batch_size, nested=True):
        # Only a BatchableExtensionType batches (tf.map_fn): TensorFlow's error for the others.
        what = "_unbatch" if batch_size is _UNBATCH else "_batch"
        raise AttributeError(f"'{type(self).Spec.__qualname__}' object has no attribute '{what}'")

    @property
    def _type_spec(self):
        cached = self.__dict__.get("_tf_extension_type_cached_type_spec")
        if cached is None:
            cached = self.Spec.from_value(self)
            self.__dict__["_tf_extension_type_cached_type_spec"] = cached
        return cached


class BatchableExtensionType(ExtensionType):
    """An ExtensionType that can be batched and unbatched (``tf.data``, ``tf.map_fn``).

    Batching stacks every tensor field and adds the batch size in front of every
    ``tf.TensorShape`` field (TensorFlow's default ``ExtensionTypeBatchEncoder``).

    Example:
        >>> import tapejax as tf
        >>> class Vehicle(tf.experimental.BatchableExtensionType):
        ...     top_speed: tf.Tensor
        ...     mpg: tf.Tensor
        >>> batch = Vehicle([120, 150, 80], [30, 40, 12])
        >>> tf.map_fn(lambda vehicle: vehicle.top_speed * vehicle.mpg, batch,
        ...           fn_output_signature=tf.int32).numpy()
        array([3600, 6000,  960], dtype=int32)
    """

    _tf_extension_type_do_not_transform_this_class = True

    def __tf_batch_static__(self, batch_size, nested=True):
        """A copy with the batch size (None: unbatched) applied to the TensorShape fields and the
        nested batchable values, the tensors left as they are (for tree structures: see
        ``tapejax._core.batching``)."""
        def field(x):
            if isinstance(x, TensorShape):
                return x[1:] if batch_size is _UNBATCH else TensorShape([batch_size]).concatenate(x)
            if isinstance(x, BatchableExtensionType) and nested:
                return x.__tf_batch_static__(batch_size, nested)
            if isinstance(x, collections.abc.Mapping):
                return ImmutableDict([(k, field(v)) for k, v in x.items()])
            if _is_tuple_value(x):
                return tuple(field(v) for v in x)
            return x
        return _new(type(self), {k: field(v) for k, v in _fields_dict(self).items()})




def as_dict(value):
    """The fields of an ExtensionType as a dict (not recursive)."""
    return _fields_dict(value)


# ---------------------------------------------------------------------------
# TypeSpec and the nested Spec classes
# ---------------------------------------------------------------------------

class TypeSpec(abc.ABC):
    """The type of a composite value (``tf.TypeSpec``): what ``tf.type_spec_from_value``
    returns and what ``input_signature`` and ``tf.data`` describe values with."""

    value_type = None

    def is_compatible_with(self, spec_or_value):
        """Whether ``spec_or_value`` (a TypeSpec or a value) fits this spec."""
        if not isinstance(spec_or_value, TypeSpec):
            spec_or_value = type_spec_from_value(spec_or_value)
        return _compatible(self, spec_or_value)


def _compatible(x, y):
    if isinstance(x, TensorSpec) and isinstance(y, TensorSpec):
        return x.dtype == y.dtype and (x.shape is None or y.shape is None or x.shape.is_compatible_with(y.shape))
    if isinstance(x, ExtensionTypeSpec):
        if type(x) is not type(y) or x._static_key() != y._static_key():
            return False
        a, b = _spec_leaves(tuple(x._fields().values()), []), _spec_leaves(tuple(y._fields().values()), [])
        return len(a) == len(b) and all(_compatible(i, j) for i, j in zip(a, b))
    if hasattr(x, "is_compatible_with"):
        return x.is_compatible_with(y)
    return x == y


class ExtensionTypeSpec(TypeSpec):
    """Base class of the ``Spec`` classes of ExtensionTypes (``tf.experimental.ExtensionTypeSpec``)."""

    def _serialize(self):
        return tuple((f.name, _plain_mappings(self.__dict__[f.name])) for f in self._tf_extension_type_fields())

    @classmethod
    def _deserialize(cls, state):
        return _new(cls, {k: _convert_mappings(v) for k, v in state})

    def _fields(self):
        return {f.name: self.__dict__[f.name] for f in self._tf_extension_type_fields()}

    def _to_components(self, value):
        return tuple(_flatten_value(value)[0])

    def _from_components(self, components):
        comps = iter(components)

        def fill(s):
            c = next(comps)
            return s._from_components(c) if isinstance(s, ExtensionTypeSpec) and not isinstance(c, ExtensionType) else c
        fields = {k: _spec_map(v, fill) for k, v in self._fields().items()}
        if list(comps):
            raise ValueError("Cannot build an ExtensionType instance from components because more components "
                             "are provided than the number expected by the type spec.")
        return _new(self.value_type, fields)

    @property
    def _component_specs(self):
        return tuple(_spec_leaves(tuple(self._fields().values()), []))

    @classmethod
    def from_value(cls, value):
        cached = value.__dict__.get("_tf_extension_type_cached_type_spec")
        if cached is not None:
            return cached
        return _new(cls, {k: _replace_components(v, _spec_of_component) for k, v in _fields_dict(value).items()})

    def __setattr__(self, name, value):
        if _IN_CONSTRUCTOR in self.__dict__ and self._tf_extension_type_has_field(name):
            self.__dict__[name] = value
        else:
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of "
                                 "ExtensionTypeSpec.")

    def __delattr__(self, name):
        if _IN_CONSTRUCTOR in self.__dict__ and self._tf_extension_type_has_field(name):
            del self.__dict__[name]
        else:
            raise AttributeError(f"Cannot mutate attribute `{name}` outside the custom constructor of "
                                 "ExtensionTypeSpec.")

    def __validate__(self):
        """Perform post-construction validation."""

    @classmethod
    def _tf_extension_type_fields(cls):
        return cls.value_type._tf_extension_type_fields()

    @classmethod
    def _tf_extension_type_has_field(cls, name):
        return any(name == f.name for f in cls._tf_extension_type_fields())

    def _tf_extension_type_convert_fields(self):
        _convert_fields(self._tf_extension_type_fields(), self.__dict__, _SPEC)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self._serialize())
        return f"{type(self).__qualname__}({fields})"

    def _key(self):
        return tuple((k, _hashable(v)) for k, v in self._serialize())

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self), self._key()))

    def most_specific_common_supertype(self, others):
        """The spec every one of ``self`` and ``others`` fits (unknown dimensions where shapes
        differ), or None."""
        out = self
        for o in others:
            if type(o) is not type(self):
                return None
            a, b = _spec_leaves(tuple(out._fields().values()), []), _spec_leaves(tuple(o._fields().values()), [])
            if len(a) != len(b) or out._static_key() != o._static_key():
                return None
            merged = []
            for x, y in zip(a, b):
                m = _common_spec(x, y)
                if m is None:
                    return None
                merged.append(m)
            it = iter(merged)
            out = _new(type(self), {k: _spec_map(v, lambda _: next(it)) for k, v in out._fields().items()})
        return out

    def _static_key(self):
        return tuple((k, _hashable(_spec_map(v, lambda s: type(s)))) for k, v in self._fields().items())

    def _tf_bind(self, value):
        """``value`` as an argument of a tf.function with this spec in its ``input_signature``
        (TypeError with TensorFlow's reason: the first field it lacks, or the first component
        that does not fit)."""
        if not isinstance(value, self.value_type):
            missing = next((f.name for f in self._tf_extension_type_fields()
                            if f.name not in getattr(value, "__dict__", {})), None)
            raise TypeError(repr(missing) if missing is not None else f"Can not cast {value!r} to {self!r}")
        if self.is_compatible_with(value._type_spec):
            return value
        want = _spec_leaves(tuple(self._fields().values()), [])
        got = _spec_leaves(tuple(value._type_spec._fields().values()), [])
        for w, g in zip(want, got):
            if not _compatible(w, g):
                raise TypeError(f"Can not cast {g!r} to {w!r}")
        raise TypeError(f"Can not cast {value!r} to {self!r}")

    def _tf_placeholder(self, example):
        """A value of this spec whose tensors are ``example(TensorSpec)``, for tracing."""
        def fill(s):
            if isinstance(s, ExtensionTypeSpec):
                return s._tf_placeholder(example)
            return example(s)
        return _new(self.value_type, {k: _spec_map(v, fill) for k, v in self._fields().items()})

    def _to_legacy_output_shapes(self):
        try:
            return self.shape
        except AttributeError as e:
            raise NotImplementedError("It appears that the Spec of the ExtensionType is missing a shape property. "
                                      "In order to support tf.Data, it is recommended that you implement a shape "
                                      "property on the Spec.") from e


def _common_spec(x, y):
    if isinstance(x, TensorSpec) and isinstance(y, TensorSpec):
        if x.dtype != y.dtype:
            return None
        if x.shape is None or y.shape is None:
            return TensorSpec(None, x.dtype)
        return TensorSpec(TensorShape(x.shape).most_specific_compatible_shape(y.shape), x.dtype)
    if isinstance(x, ExtensionTypeSpec):
        return x.most_specific_common_supertype([y])
    return x if x == y else None


def _hashable(x):
    if isinstance(x, dict):
        return ("dict", tuple((k, _hashable(v)) for k, v in x.items()))
    if isinstance(x, collections.abc.Mapping):
        return ("dict", tuple((k, _hashable(v)) for k, v in x.items()))
    if _is_tuple_value(x):
        return tuple(_hashable(v) for v in x)
    return x


def _convert_mappings(x):
    if isinstance(x, dict):
        return ImmutableDict([(k, _convert_mappings(v)) for k, v in x.items()])
    if _is_tuple_value(x):
        return tuple(_convert_mappings(v) for v in x)
    return x


class BatchableExtensionTypeSpec(ExtensionTypeSpec):
    """Base class of the ``Spec`` classes of BatchableExtensionTypes."""

    def _batch(self, batch_size):
        return _new(type(self), {k: _batch_spec_field(v, batch_size) for k, v in self._fields().items()})

    def _unbatch(self):
        return _new(type(self), {k: _batch_spec_field(v, _UNBATCH) for k, v in self._fields().items()})


def _batch_spec_field(x, batch_size):
    if isinstance(x, TensorSpec):
        if x.shape is None:
            return x
        shape = x.shape[1:] if batch_size is _UNBATCH else TensorShape([batch_size]).concatenate(x.shape)
        return TensorSpec(shape, x.dtype)
    if isinstance(x, BatchableExtensionTypeSpec):
        return x._unbatch() if batch_size is _UNBATCH else x._batch(batch_size)
    if isinstance(x, TensorShape):
        return x[1:] if batch_size is _UNBATCH else TensorShape([batch_size]).concatenate(x)
    if isinstance(x, collections.abc.Mapping):
        return ImmutableDict([(k, _batch_spec_field(v, batch_size)) for k, v in x.items()])
    if _is_tuple_value(x):
        return tuple(_batch_spec_field(v, batch_size) for v in x)
    return x


def type_spec_from_value(value):
    """The TypeSpec of ``value`` (``tf.type_spec_from_value``): a TensorSpec for a tensor, the
    ``Spec`` of an ExtensionType, a RaggedTensorSpec or SparseTensorSpec.

    Example:
        >>> import tapejax as tf
        >>> tf.type_spec_from_value(tf.constant([1.0, 2.0]))
        TensorSpec(shape=(2,), dtype=tf.float32, name=None)
    """
    if isinstance(value, ExtensionType):
        return value._type_spec
    if isinstance(value, (_TensorBase, RaggedTensor, SparseTensor)):
        return _spec_of_component(value)
    try:
        t = _ops.convert_to_tensor(value)
    except (TypeError, ValueError):
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}.") from None
    return TensorSpec(t.shape, t.dtype)


# ---------------------------------------------------------------------------
# Class construction
# ---------------------------------------------------------------------------

def _check_field_annotations(cls):
    annotations = cls.__dict__.get("__annotations__", {})
    for name, value in cls.__dict__.items():
        if name == "Spec":
            if not isinstance(value, type):
                raise ValueError(f"{cls.__qualname__}.Spec must be a nested class; got {value}.")
            if value.__bases__ not in ((TypeSpec,), (object,)):
                raise ValueError(f"{cls.__qualname__}.Spec must be directly subclassed from tf.TypeSpec.")
        elif ExtensionTypeField.is_reserved_name(name):
            raise ValueError(f"The field annotations for {cls.__name__} are invalid. Field '{name}' is reserved.")
    for name in annotations:
        if ExtensionTypeField.is_reserved_name(name):
            raise ValueError(f"The field annotations for {cls.__name__} are invalid. Field '{name}' is reserved.")
    for key, value in cls.__dict__.items():
        if not (key in annotations or callable(value) or key.startswith("_abc_")
                or key == "_tf_extension_type_fields" or key.startswith("__") and key.endswith("__")
                or isinstance(value, (property, classmethod, staticmethod))):
            raise ValueError(f"The field annotations for {cls.__name__} are invalid. Field {key} is missing a "
                             "type annotation.")


def _add_extension_type_constructor(cls):
    if "__init__" in cls.__dict__:
        _wrap_user_constructor(cls)
    else:
        _build_constructor(cls)


def _wrap_user_constructor(cls):
    user_constructor = cls.__init__

    def wrapped_init(self, *args, **kwargs):
        self.__dict__[_IN_CONSTRUCTOR] = True
        user_constructor(self, *args, **kwargs)
        del self.__dict__[_IN_CONSTRUCTOR]
        self._tf_extension_type_convert_fields()
        self.__validate__()

    wrapped_init.__name__, wrapped_init.__qualname__ = user_constructor.__name__, user_constructor.__qualname__
    wrapped_init.__doc__, wrapped_init.__wrapped__ = user_constructor.__doc__, user_constructor
    cls.__init__ = wrapped_init


def _build_constructor(cls):
    fields = cls._tf_extension_type_fields()
    keyword_only_start, got_default = len(fields), False
    for i, f in enumerate(fields):
        if got_default and f.default is _NO_DEFAULT:
            keyword_only_start = i
            break
        got_default = got_default or f.default is not _NO_DEFAULT
    P = inspect.Parameter
    params = [P(f.name, P.POSITIONAL_OR_KEYWORD if i < keyword_only_start else P.KEYWORD_ONLY,
                default=P.empty if f.default is _NO_DEFAULT else f.default, annotation=f.value_type)
              for i, f in enumerate(fields)]
    signature = inspect.Signature(params, return_annotation=cls.__name__)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        self.__dict__.update(bound.arguments)
        self._tf_extension_type_convert_fields()
        self.__validate__()

    __init__.__signature__ = inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD)] + params, return_annotation=cls)
    cls.__init__ = __init__


def _build_spec_constructor(cls):
    P = inspect.Parameter
    params = [P(f.name, P.POSITIONAL_OR_KEYWORD) for f in cls._tf_extension_type_fields()]
    signature = inspect.Signature(params, return_annotation=cls.__name__)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        self.__dict__.update(bound.arguments)
        self._tf_extension_type_convert_fields()
        self.__validate__()

    __init__.__signature__ = inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD)] + params, return_annotation=cls)
    cls.__init__ = __init__


_SPEC_REGISTRY = {}   # the ``__name__`` of an ExtensionType + ".Spec" -> its Spec (for SavedModel)


def _add_type_spec(cls):
    spec_name, spec_qualname = cls.__name__ + ".Spec", cls.__qualname__ + ".Spec"
    spec_dict = {"value_type": cls, "__module__": cls.__module__}
    user_spec = cls.__dict__.get("Spec")
    if user_spec is not None:
        for name, value in user_spec.__dict__.items():
            if ExtensionTypeField.is_reserved_name(name):
                raise ValueError(f"TypeSpec {spec_qualname} uses reserved name '{name}'.")
            if cls._tf_extension_type_has_field(name):
                raise ValueError(f"TypeSpec {spec_qualname} defines a variable '{name}' which shadows a field in "
                                 f"{cls.__qualname__}")
            if name in ("__module__", "__dict__", "__weakref__"):
                continue
            spec_dict[name] = value
    base = BatchableExtensionTypeSpec if issubclass(cls, BatchableExtensionType) else ExtensionTypeSpec
    spec = type(spec_name, (base,), spec_dict)
    spec.__qualname__ = spec_qualname
    type.__setattr__(cls, "Spec", spec)
    if "__init__" in spec.__dict__:
        _wrap_user_constructor(spec)
    else:
        _build_spec_constructor(spec)
    if "__name__" in cls.__dict__:
        _SPEC_REGISTRY[cls.__dict__["__name__"] + ".Spec"] = spec


_dispatch.register_dispatchable_type(ExtensionType)

__all__ = ["ExtensionType", "BatchableExtensionType", "ExtensionTypeSpec", "TypeSpec", "type_spec_from_value",
           "as_dict", "ImmutableDict"]


# ---------------------------------------------------------------------------
# Batching helpers for tf.data and tf.map_fn
# ---------------------------------------------------------------------------

UNBATCH = _UNBATCH


def components(value):
    """The tensors and composite values directly inside an ExtensionType, in field order."""
    return _flatten_value(value)[0]


def check_batchable(value):
    """Raises TensorFlow's error for batching or slicing a value that is not batchable."""
    if isinstance(value, ExtensionType) and not isinstance(value, BatchableExtensionType):
        raise AttributeError(f"'{type(value).Spec.__qualname__}' object has no attribute '_to_batched_tensor_list'")


def rebuilt(value, comps, batch=None):
    """``value``'s type and static fields with the components ``comps`` (no validation, as
    TensorFlow's ``_from_components``); ``batch``: a batch size to add in front of its
    TensorShape fields, or UNBATCH to remove their first dimension (batchable types)."""
    if batch is not None:
        check_batchable(value)
    out = _unflatten_value(type(value), _flatten_value(value)[1], comps)
    if batch is not None and isinstance(out, BatchableExtensionType):
        out = out.__tf_batch_static__(batch, nested=False)
    return out


# ---------------------------------------------------------------------------
# Registered names (SavedModel)
# ---------------------------------------------------------------------------

def registered_name(cls):
    """The ``__name__`` an ExtensionType class registered (TensorFlow's requirement for a
    SavedModel to hold its values), or None."""
    return cls.__dict__.get("__name__") if isinstance(cls.__dict__.get("__name__"), str) else None


def lookup(name):
    """The ExtensionType class registered as ``name``, or None."""
    spec = _SPEC_REGISTRY.get(name + ".Spec")
    return None if spec is None else spec.value_type


def from_fields(cls, fields):
    """A value of ``cls`` with these fields (mappings as ImmutableDicts), without its
    constructor or ``__validate__`` (a value read back, as TensorFlow's ``_from_components``)."""
    return _new(cls, {k: _convert_mappings(v) for k, v in fields.items()})


def placeholder(spec):
    """A value of an ExtensionType spec with its TensorSpecs in the tensors' places."""
    return spec._tf_placeholder(lambda s: s)
