"""Variable: mutable, named state whose reads a tape can watch."""
import enum
from typing import Any, Optional

import jax
import numpy as np

from . import basic as _basic, dtypes as _dtypes, engine as _engine, promotion as _promotion, state as _state, weak as _weak
from .tensor import (_TensorBase, Tensor, TensorShape, to_array, _ids, is_tracer, _np_repr, check_python_kinds,
                     check_tensor_dtype)
from .. import errors

_name_scope = []  # module / name_scope prefixes, outermost first


def current_name_scope():
    return "/".join(_name_scope)


class name_scope:
    """``tf.name_scope(name)``: prefixes the names of Variables created inside.

    Example:
        >>> import tapejax as tf
        >>> with tf.name_scope("dense"):
        ...     v = tf.Variable(1.0, name="kernel")
        >>> v.name
        'dense/kernel:0'
    """

    def __init__(self, name):
        self._name = name

    def __enter__(self):
        if self._name:
            _name_scope.append(self._name)
        return self._name

    def __exit__(self, *exc):
        if self._name:
            _name_scope.pop()
        return False


def _shape_str(shape):
    return str(TensorShape(shape))


class Variable(_TensorBase):
    """A mutable tensor: model weights, optimizer slots, counters.

    Reading a trainable Variable inside a ``GradientTape`` (with
    ``watch_accessed_variables=True``, the default) makes the tape watch it.
    ``assign``, ``assign_add`` and ``assign_sub`` replace its value; like in
    TensorFlow they are state changes, so no gradient flows through them.

    Args:
        initial_value: a Tensor-like value, or a callable returning one.
        trainable: whether tapes watch it automatically (default True).
        name: its name (``'Variable'`` by default), prefixed by the current name scope.
        dtype: convert the initial value to this dtype.
        shape: accepted for compatibility (the shape of the initial value is used).

    Example:
        >>> import tapejax as tf
        >>> x = tf.Variable(3.0)
        >>> with tf.GradientTape() as tape:
        ...     y = x ** 2
        >>> tape.gradient(y, x)
        <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
        >>> print(x.assign_add(1.0).numpy())
        4.0
    """

    # What a Variable carries is declared here: ``_stored`` is its value outside every state
    # scope (read it through ``_value``, which asks the state model); ``_sharding`` its
    # tf.distribute layout, kept by assignments; ``_kind`` what it is (``_state.RNG``: a random
    # generator's state); ``_shared`` whether its buffer may be held elsewhere (not donated).
    __slots__ = ("_stored", "_id", "trainable", "_name", "_spec", "constraint", "_sharding", "_kind",
                 "_shared", "_sync", "_agg", "__weakref__")

    def __init__(self, initial_value: Any = None, trainable: Optional[bool] = None, validate_shape: bool = True,
                 caching_device: Any = None, name: Optional[str] = None, variable_def: Any = None,
                 dtype: Any = None, import_scope: Optional[str] = None, constraint: Any = None,
                 synchronization: Any = None, aggregation: Any = None, shape: Any = None,
                 experimental_enable_variable_lifting: bool = True) -> None:
        if type(self) is Variable:
            # As in TensorFlow, ``tf.Variable(...)`` makes a ``ResourceVariable`` (what
            # ``type(v).__name__`` says; the same layout); ``isinstance(v, tf.Variable)`` holds.
            self.__class__ = ResourceVariable
        if initial_value is None:
            raise ValueError("initial_value must be specified: tf.Variable(initial_value). "
                             "For example tf.Variable(tf.zeros([3])).")
        if callable(initial_value):
            initial_value = initial_value()
        if isinstance(initial_value, Variable):
            initial_value = initial_value._value
        value = to_array(initial_value, dtype)
        if _promotion.mode is not None and _weak.is_weak(value):   # TF: a variable is never weakly typed
            value = _promotion.as_weak(value, False)
        if is_tracer(value) and _state.tracing():
            raise _state.TracedInitialValue(name or "Variable")
        self._id = next(_ids)
        self._kind = None
        self._sharding, value = _state.placed(value)
        self._stored = value
        self._shared = True
        self._sync, self._agg, trainable = _distribution_modes(synchronization, aggregation, trainable, name)
        self.trainable = bool(trainable)
        base = name if name is not None else "Variable"
        if isinstance(base, str) and base.endswith(":0"):
            base = base[:-2]
        scope = current_name_scope()
        self._name = f"{scope}/{base}" if scope else base
        self._spec = None if shape is None else _declared_shape(shape, value)
        self.constraint = constraint
        _state.created(self)

    @property
    def _value(self):
        return _state.read(self)

    @property
    def shape(self) -> TensorShape:
        """The declared shape (``shape=`` at creation, which may leave dimensions unknown: any
        value of a compatible shape can be assigned), else the value's."""
        return TensorShape(self._stored.shape) if self._spec is None else self._spec

    @property
    def name(self) -> str:
        return self._name + ":0"

    @property
    def dtype(self) -> _dtypes.DType:
        return _dtypes.as_dtype(self._stored.dtype)

    def value(self) -> Tensor:
        """The current value as a Tensor (recorded as a read on watching tapes)."""
        return _basic.identity(self)

    read_value = value

    def _check(self, value, op):
        # Converted as TensorFlow's convert_to_tensor(value, dtype=self.dtype): a tensor of another
        # dtype or a Python value of another kind is an error; NumPy values are cast.
        if _promotion.mode is not None:    # TF's new type promotion: what promotes to its dtype converts
            value = _weak.variable_operand(self, value, op)
        if isinstance(value, _TensorBase):
            check_tensor_dtype(value, self._stored.dtype)
        elif not isinstance(value, (np.ndarray, np.generic, jax.Array)):
            check_python_kinds(value, self._stored.dtype)
        v = to_array(value)
        if v.dtype != self._stored.dtype:
            v = v.astype(self._stored.dtype)
        fits = v.shape == self._stored.shape if self._spec is None or op != "assign" else \
            self._spec.is_compatible_with(v.shape)
        if not fits:
            if op == "assign":   # TensorFlow's messages, word for word
                raise ValueError(
                    f"Cannot assign value to variable ' {self.name}': Shape mismatch.The variable shape "
                    f"{self.shape}, and the assigned value shape {_shape_str(v.shape)} are "
                    "incompatible.")
            raise errors.InvalidArgumentError(
                None, None, f"Cannot update variable with shape [{','.join(map(str, self._value.shape))}] using "
                f"a Tensor with shape [{','.join(map(str, v.shape))}], shapes must be equal.")
        return v

    def _set(self, value):
        _state.write(self, value)
        return self

    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> Optional["Variable"]:
        """Replaces the value. Returns the variable (TF's ``UnreadVariable`` view of it), or
        None with ``read_value=False``."""
        self._set(self._check(value, "assign"))
        return _UnreadVariable(self) if read_value else None

    def assign_add(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Optional["Variable"]:
        """Adds ``delta`` to the value. Returns the variable, as ``assign``."""
        # The delta must have the variable's shape (TF does not broadcast it either).
        self._set(_engine.read_raw(self) + self._check(delta, "assign_add"))
        return _UnreadVariable(self) if read_value else None

    def assign_sub(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Optional["Variable"]:
        """Subtracts ``delta`` from the value. Returns the variable, as ``assign``."""
        self._set(_engine.read_raw(self) - self._check(delta, "assign_sub"))
        return _UnreadVariable(self) if read_value else None

    def _repr_name(self):
        return self.name

    def __repr__(self):
        a = self._fmt()
        head = f"<tf.Variable '{self._repr_name()}' shape={self.shape} dtype={self.dtype.name}"
        if a is None:
            return head + ">"
        return f"{head}, numpy={_np_repr(a)}>"

    __str__ = __repr__

    def __hash__(self):
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key.")

    def __deepcopy__(self, memo):
        return Variable(self._value, trainable=self.trainable, name=self._name)

    @property
    def handle(self):
        return self

    def initialized_value(self):
        return self.value()

    @property
    def initial_value(self):
        return Tensor(self._value)

    @property
    def synchronization(self):
        """How a distributed copy syncs (``tf.VariableSynchronization``; ``AUTO`` by default)."""
        return self._sync

    @property
    def aggregation(self):
        """How replicas' updates combine (``tf.VariableAggregation``; ``NONE`` by default)."""
        return self._agg


class VariableSynchronization(enum.Enum):
    """``tf.VariableSynchronization``: when a distributed variable's copies sync (``AUTO``: as the
    strategy decides; ``ON_READ`` variables are aggregated when read, and are not trainable by
    default).

    Example:
        >>> import tapejax as tf
        >>> v = tf.Variable([0.], synchronization=tf.VariableSynchronization.ON_READ,
        ...                 aggregation=tf.VariableAggregation.MEAN)
        >>> v.trainable, v.synchronization, v.aggregation
        (False, <VariableSynchronization.ON_READ: 3>, <VariableAggregationV2.MEAN: 2>)
    """
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregationV2(enum.Enum):
    """``tf.VariableAggregation``: how the updates of replicas combine (``NONE``: an update from
    several replicas is an error; ``SUM``, ``MEAN``, ``ONLY_FIRST_REPLICA``). Equal to the TF1
    enum's member of the same value, as TensorFlow's.

    Example:
        >>> import tapejax as tf
        >>> tf.VariableAggregation.MEAN
        <VariableAggregationV2.MEAN: 2>
    """
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        return self is other or (isinstance(other, VariableAggregation) and self.value == other.value)


class VariableAggregation(enum.Enum):
    """TensorFlow 1's aggregation enum: what a Variable created without ``aggregation`` reports
    (``VariableAggregation.NONE``, as TensorFlow prints it)."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3  # deprecated alias

    def __hash__(self):
        return hash(self.value)


def _distribution_modes(synchronization, aggregation, trainable, name):
    """TensorFlow's defaults and checks of a Variable's ``synchronization``, ``aggregation`` and
    ``trainable`` (ON_READ variables are not trainable unless asked)."""
    if aggregation is None:
        aggregation = VariableAggregation.NONE
    elif not isinstance(aggregation, (VariableAggregation, VariableAggregationV2)):
        try:
            aggregation = VariableAggregationV2(aggregation)
        except ValueError:
            raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable: {name}") from None
    if synchronization is None:
        synchronization = VariableSynchronization.AUTO
    else:
        try:
            synchronization = VariableSynchronization(synchronization)
        except ValueError:
            raise ValueError(f"Invalid variable synchronization mode: {synchronization} for variable: {name}") from None
    if trainable is None:
        trainable = synchronization != VariableSynchronization.ON_READ
    return synchronization, aggregation, trainable


def _declared_shape(shape, value):
    shape = TensorShape(shape)
    if not shape.is_compatible_with(value.shape):
        raise ValueError(f"In this `tf.Variable` creation, the initial value's shape ({_shape_str(value.shape)}) is "
                         f"not compatible with the explicitly supplied `shape` argument ({list(shape)}).")
    return shape


class ResourceVariable(Variable):
    """The type of ``tf.Variable(...)``, as in TensorFlow: a Variable (nothing added)."""

    __slots__ = ()


class _UnreadVariable(Variable):
    """What ``assign`` returns, as TensorFlow's: the same variable (reads, assignments and
    gradients are the assigned Variable's), shown as ``<tf.Variable 'UnreadVariable' ...>``."""

    __slots__ = ("_target",)

    def __init__(self, target):   # noqa: D107 -- a view: no state of its own
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name):  # the Variable's fields (slots unset on the view)
        if name == "_target":
            raise AttributeError(name)
        return getattr(self._target, name)

    def _set(self, value):
        self._target._set(value)
        return self

    def _repr_name(self):
        return "UnreadVariable"

    # Fields the state model writes go to the Variable itself.
    _stored = property(lambda self: self._target._stored,
                       lambda self, x: setattr(self._target, "_stored", x))
    _shared = property(lambda self: self._target._shared,
                       lambda self, x: setattr(self._target, "_shared", x))
    _sharding = property(lambda self: self._target._sharding,
                         lambda self, x: setattr(self._target, "_sharding", x))
    trainable = property(lambda self: self._target.trainable,
                         lambda self, x: setattr(self._target, "trainable", x))

    def __deepcopy__(self, memo):
        return self._target.__deepcopy__(memo)


def register_pytree(cls):
    """Makes a Variable class a pytree as Variable is (one leaf: its value; rebuilt as a Tensor)."""
    jax.tree_util.register_pytree_node(cls, lambda v: ((v._value,), None), lambda _, c: Tensor(c[0]))
    return cls


register_pytree(Variable)
register_pytree(ResourceVariable)
register_pytree(_UnreadVariable)
