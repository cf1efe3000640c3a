"""The Keras ``Layer`` base class, ``InputLayer``/``Input`` and symbolic ``KerasTensor``s.

A layer is a :class:`tapejax.Module` with Keras's life cycle: it is built lazily
on its first call (``build(input_shape)`` creates the weights with
``add_weight``), tracks weights in creation order and sub-layers in
attribute-assignment order, and passes ``training`` down to the layers it calls.
"""
import inspect
import threading
import types
import warnings

import jax
import numpy as np

from ..._core import dtypes as _dtypes
from ... import errors as _errors
from ..._core.state import pause_recording
from ..._core.module import Module
from ..._core.state import Scope, init_scope, name_input as _name_input
from ..._core.tensor import Tensor, TensorShape, _TensorBase, to_array
from ..._core.variable import Variable, _name_scope
from .. import initializers as _initializers
from .._variables import KerasVariable
from .. import regularizers as regularizers
from .. import activations as _activations
from .. import _serialization
from .._serialization import serialize_keras_object
from ._input_spec import InputSpec as InputSpec, assert_input_compatibility  # noqa: F401
from ...ops import cast, divide_no_nan, shape as _shape_op
from ..mixed_precision import _layer_policy
from ...checkpoint.tracking import apply_deferred as _apply_deferred
from .._naming import _to_snake_case, unique_name
from ..metrics import Metric as _Metric


# ---------------------------------------------------------------------------
# Names and call context
# ---------------------------------------------------------------------------

class _CallContext(threading.local):
    def __init__(self):
        self.training = []   # the training value of each enclosing layer call
        self.stand_in_batch = []   # the size standing in for an unknown batch size (_infer_output)


_ctx = _CallContext()

_BOOKKEEPING_PREFIX = "_k_"
_HELD = (Module, Variable)                 # what a layer's weights and sub-layers are found in
_HOLDERS = _HELD + (list, tuple, dict)     # attribute values that may hold one


def _leaves(value):
    """Leaves of nested lists/tuples/dicts in insertion order (Keras tracks these containers)."""
    out = []
    _collect(value, out, object)
    return out


def _collect(value, out, kinds):
    """Appends the leaves of ``value`` that are instances of ``kinds`` to ``out`` (a plain
    recursion: it runs over every attribute of every layer each time weights are listed)."""
    if isinstance(value, (list, tuple)):
        if not isinstance(value, TensorShape):
            for v in value:
                _collect(v, out, kinds)
            return
    elif isinstance(value, dict):
        for v in value.values():
            _collect(v, out, kinds)
        return
    if isinstance(value, kinds):
        out.append(value)


def _contents(holders):
    """The items of the containers among ``holders``, nested ones too, a tuple per container:
    their identities are the same while no container had an item added, removed or replaced
    (a layer's scan keeps the tuples, so no identity is reused by a new object meanwhile)."""
    out = []
    for value in holders:
        if isinstance(value, (list, tuple, dict)) and not isinstance(value, TensorShape):
            _items(value, out)
    return out


def _items(container, out):
    items = tuple(container.values() if isinstance(container, dict) else container)
    out.append(items)
    for v in items:
        if isinstance(v, (list, tuple, dict)) and not isinstance(v, TensorShape):
            _items(v, out)


def _dedup(items):
    """``items`` without repeats (by identity), in first-occurrence order."""
    return list({id(v): v for v in items}.values())


_accepts_cache = {}


# Exceptions Keras 3 rebuilds from a message when it adds the call's arguments to it (others,
# which may carry state of their own, pass through unchanged).
_REBUILT_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError,
                   NotImplementedError, AssertionError, ZeroDivisionError, ArithmeticError)


def _with_call_arguments(layer, error, args, kwargs):
    """``error`` raised by ``layer.call`` as Keras 3 re-raises it: the same class, its message
    framed by ``Exception encountered when calling <Class>.call().`` and the arguments the call
    received (tensors as ``tf.Tensor(shape=..., dtype=...)``); only the innermost layer's call."""
    if getattr(error, "_keras_call_info_injected", False):
        return error
    is_op_error = isinstance(error, _errors.OpError)
    if not (is_op_error or type(error) in _REBUILT_ERRORS):
        return error
    try:
        sig = inspect.signature(layer.call)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return error

    def shown(v):
        if isinstance(v, _TensorBase):
            return f"tf.Tensor(shape={v.shape}, dtype={v.dtype.name})"
        return repr(v)

    def value(p):
        if p.name not in bound.arguments:
            return p.default
        return jax.tree_util.tree_map(shown, bound.arguments[p.name], is_leaf=lambda x: isinstance(x, _TensorBase))

    lines = [f"  \u2022 {p.name}={value(p)}" for p in sig.parameters.values()]
    if not lines:
        return error
    message = error.message if is_op_error else (error.args[0] if error.args else "")
    name = f"{type(layer).__name__}.call()"
    message = (f"Exception encountered when calling {name}.\n\n\x1b[1m{message}\x1b[0m\n\n"
               f"Arguments received by {name}:\n" + "\n".join(lines))
    new = type(error)(error.node_def if hasattr(error, "node_def") else None, getattr(error, "op", None),
                      message) if is_op_error else type(error)(message)
    new._keras_call_info_injected = True
    return new.with_traceback(error.__traceback__)


def _keras_mask(x):
    """The mask a Keras layer attached to a tensor (``x._keras_mask``), or None."""
    if type(x) is not Tensor:
        return None
    try:
        return _MASK_SLOT.__get__(x, Tensor)   # an unset slot raises here, not via Tensor.__getattr__
    except AttributeError:
        return None


_MASK_SLOT = Tensor._keras_mask


def _takes_mask(fn):
    """Keras 3 passes a mask only to a ``call`` with a parameter named ``mask``."""
    key = (getattr(fn, "__func__", fn), "mask:named")
    hit = _accepts_cache.get(key)
    if hit is None:
        try:
            hit = "mask" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            hit = False
        _accepts_cache[key] = hit
    return hit


def _accepts(fn, name):
    """Whether ``fn`` takes a keyword ``name`` (cached: it is asked on every layer call)."""
    key = (getattr(fn, "__func__", fn), name)
    hit = _accepts_cache.get(key)
    if hit is None:
        try:
            params = inspect.signature(fn).parameters
            hit = name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
        except (TypeError, ValueError):
            hit = True
        if len(_accepts_cache) < 4096:
            _accepts_cache[key] = hit
    return hit


def _shape_of(x):
    """A TensorShape for a tensor-like, a nest of them for nests."""
    if isinstance(x, (list, tuple)):
        return [_shape_of(e) for e in x]
    if isinstance(x, dict):
        return {k: _shape_of(v) for k, v in x.items()}
    if isinstance(x, KerasTensor):
        return x.shape
    return TensorShape(np.shape(to_array(x)) if not hasattr(x, "shape") else tuple(x.shape))


def _known_dims(shape):
    """A raw shape with a symbolic dimension (a symbolic call's unknown size) as None."""
    if all(type(d) is int for d in shape):
        return shape
    return tuple(d if type(d) is int else None for d in shape)


def _batchless(shape):
    """The shape a summary shows: the batch dimension unknown."""
    if isinstance(shape, list):
        return [_batchless(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _batchless(v) for k, v in shape.items()}
    shape = tuple(shape)
    return TensorShape((None,) + shape[1:]) if shape else TensorShape(shape)


def _to_tensors(x, numbers=True):
    """Keras converts array inputs of a call to tensors (numpy float64 becomes float32).
    ``numbers``: a flat list of Python numbers becomes a tensor too (the layers that take
    non-tensor arguments); Keras 3 leaves it, and the other layers refuse it."""
    if isinstance(x, (_TensorBase, KerasTensor)):
        return x
    if isinstance(x, (np.ndarray, jax.Array, np.generic)):
        return Tensor(to_array(x, np.float32 if np.dtype(x.dtype) == np.float64 else None))
    if isinstance(x, (list, tuple)):
        if numbers and x and all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in x):
            return Tensor(to_array(x))
        items = (_to_tensors(e, numbers) for e in x)
        return type(x)(*items) if hasattr(type(x), "_fields") else type(x)(items)
    if isinstance(x, dict):
        return {k: _to_tensors(v, numbers) for k, v in x.items()}
    return x


def _is_call_tensor(x):
    return isinstance(x, (_TensorBase, KerasTensor)) or getattr(type(x), "_tf_composite", False)


def _check_positional_tensors(args):
    """Keras 3's ``Layer.__call__``: after array arguments are converted, every positional
    argument (each leaf of a list, tuple or dict of them) must be a tensor or None; anything else
    (a Python number or list, a string, ``training`` given positionally) raises its ValueError."""
    leaves = jax.tree_util.tree_leaves(list(args), is_leaf=lambda x: x is None or _is_call_tensor(x))
    for leaf in leaves:
        if leaf is not None and not _is_call_tensor(leaf):
            raise ValueError("Only input tensors may be passed as positional arguments. The following argument "
                             f"value should be passed as a keyword argument: {leaf} (of type {type(leaf)})")


# ---------------------------------------------------------------------------
# Symbolic tensors (functional API)
# ---------------------------------------------------------------------------

_SYMBOLIC_OP = (
    "A symbolic tf.keras.Input / KerasTensor was passed to a tapejax op ({what}). Symbolic tensors only "
    "flow through Keras layers in tapejax. Wrap the computation in a layer instead, for example "
    "tf.keras.layers.Lambda(lambda t: tf.nn.relu(t))(x), or use tf.keras.layers.Add() / Concatenate().")

# Keras 3's errors (ValueError) for a KerasTensor given to a TensorFlow op / converted to an array.
_SYMBOLIC_TF_FN = (
    "A KerasTensor cannot be used as input to a TensorFlow function. A KerasTensor is a symbolic placeholder "
    "for a shape and dtype, used when constructing Keras Functional models or Keras Functions. You can only "
    "use it as input to a Keras layer or a Keras operation (from the namespaces `keras.layers` and "
    "`keras.ops`). You are likely doing something like:\n\n```\nx = Input(...)\n...\ntf_fn(x)  # Invalid."
    "\n```\n\nWhat you should do instead is wrap `tf_fn` in a layer:\n\n```\nclass MyLayer(Layer):\n"
    "    def call(self, x):\n        return tf_fn(x)\n\nx = MyLayer()(x)\n```\n")
_SYMBOLIC_ARRAY = (
    "A KerasTensor is symbolic: it's a placeholder for a shape an a dtype. It doesn't have any actual "
    "numerical value. You cannot convert it to a NumPy array.")


class KerasTensor:
    """A symbolic tensor of the functional API: a shape, a dtype, and the layer call that made it.

    Example:
        >>> import tapejax as tf
        >>> x = tf.keras.Input(shape=(3,))
        >>> x.shape
        TensorShape([None, 3])
    """

    def __init__(self, shape, dtype="float32", node=None, name=None, sparse=False, ragged=False):
        self.shape = TensorShape(shape)
        self.sparse, self.ragged = bool(sparse), bool(ragged)
        # Keras 3: a KerasTensor's dtype is a string ('float32'), not a DType (x.dtype.name raises
        # AttributeError, as the mixed-precision guide shows under TF 2.21).
        self.dtype = _dtypes.as_dtype(dtype).name
        self._k_node = node          # the _Node that produced it, None for an Input
        self.name = unique_name("keras_tensor") if name is None else name

    @property
    def _value(self):
        raise ValueError(_SYMBOLIC_TF_FN)

    def __jax_array__(self):
        raise ValueError(_SYMBOLIC_TF_FN)

    def __array__(self, *a, **k):
        raise ValueError(_SYMBOLIC_ARRAY)

    # Keras 3: operators on symbolic tensors are Keras operations, nodes of the functional graph
    # (``2 * x + 1`` makes a model's ``multiply`` and ``add``; they are not among model.layers).
    def __add__(self, other):
        return _operation("add", self, other)

    def __radd__(self, other):
        return _operation("add", other, self)

    def __sub__(self, other):
        return _operation("subtract", self, other)

    def __rsub__(self, other):
        return _operation("subtract", other, self)

    def __mul__(self, other):
        return _operation("multiply", self, other)

    def __rmul__(self, other):
        return _operation("multiply", other, self)

    def __truediv__(self, other):
        return _operation("true_divide", self, other)

    def __rtruediv__(self, other):
        return _operation("true_divide", other, self)

    def __matmul__(self, other):
        return _operation("matmul", self, other)

    def __rmatmul__(self, other):
        return _operation("matmul", other, self)

    def __pow__(self, other):
        return _operation("power", self, other)

    def __rpow__(self, other):
        return _operation("power", other, self)

    def __neg__(self):
        return _operation("negative", self)

    def __getitem__(self, key):
        return _operation("get_item", self, key)

    def __repr__(self):
        shape = tuple(self.shape.as_list()) if self.shape.rank is not None else None
        return (f"<KerasTensor shape={shape}, dtype={self.dtype}, sparse={self.sparse}, ragged={self.ragged}, "
                f"name={self.name}>")


class _Node:
    """One layer call of a functional graph: the layer, its (symbolic) arguments and outputs."""

    __slots__ = ("layer", "args", "kwargs", "outputs", "index")

    def __init__(self, layer, args, kwargs):
        self.layer, self.args, self.kwargs, self.outputs = layer, args, kwargs, None
        # its place among the layer's symbolic calls (Keras 3's node index, in a KerasTensor's history)
        self.index = layer.__dict__.get("_k_node_count", 0)
        layer.__dict__["_k_node_count"] = self.index + 1


def _is_symbolic(args, kwargs):
    for value in (*args, *kwargs.values()):
        if isinstance(value, KerasTensor) or (
                isinstance(value, (list, tuple, dict)) and any(isinstance(v, KerasTensor) for v in _leaves(value))):
            return True
    return False


# Sizes standing in for unknown dimensions while output shapes are inferred. Two
# different stand-ins are traced: a dimension that comes out different depends on an
# unknown one, so it stays unknown.
_STAND_INS = ((2, 32), (3, 35))


class _Spec:
    """A shape (``None`` for unknown dimensions) and a dtype: a leaf of inferred output trees."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = TensorShape(shape), dtype


def _is_tensor_leaf(x):
    return isinstance(x, (_TensorBase, KerasTensor))


class _autocast:
    """Keras 3's autocast: the floating tensors among a layer's arguments (positional and
    keyword) are cast to its compute dtype, whatever the policy (a float32 layer given float16
    computes in float32: the mixed-precision guide's float32 softmax; ``autocast=False`` turns
    it off). Under mixed precision (a policy computing in another dtype than its variables')
    the trainable weights are cast too; the weight attributes hold the cast tensors only during
    the call, so gradients reach the variables. Entering gives the ``(args, kwargs)`` to call."""

    def __init__(self, layer, args, kwargs):
        self.layer, self.args, self.kwargs = layer, args, kwargs

    def __enter__(self):
        layer, policy = self.layer, self.layer._k_policy
        self.swapped = []
        if not layer.__dict__.get("_k_autocast", True):
            return self.args, self.kwargs
        compute = policy.compute_dtype
        if compute != policy.variable_dtype:
            own = {id(v) for v in layer.__dict__.get("_k_trainable", ())}
            attrs = layer.__dict__
            for name, value in list(attrs.items()):
                if id(value) in own and value.dtype.is_floating:
                    self.swapped.append((name, value))
                    attrs[name] = cast(value, compute)
        target = _dtypes.as_dtype(compute)
        stray = lambda t: isinstance(t, _TensorBase) and t.dtype.is_floating and t.dtype != target  # noqa: E731
        tree = (self.args, self.kwargs)
        if not any(stray(t) for t in jax.tree_util.tree_leaves(tree, is_leaf=_is_tensor_leaf)):
            return tree
        return jax.tree_util.tree_map(lambda t: cast(t, target) if stray(t) else t, tree, is_leaf=_is_tensor_leaf)

    def __exit__(self, *exc):
        for name, value in self.swapped:
            self.layer.__dict__[name] = value
        return False


def _abstract_run(fn, arrays, tracing=False):
    """``jax.eval_shape`` of ``fn([tensors])`` on ``arrays`` (ShapeDtypeStructs): nothing computed.
    The inputs are named as a TensorFlow graph's placeholders (``print(x)`` in a layer's ``call``
    shows ``Tensor("Placeholder:0", shape=(None, 3), dtype=float32)``, as in Keras 3)."""
    def run(arrays):
        # In a scope of its own, then dropped: state the call assigns (a flax module's
        # batch_stats, a generator's advance) is traced here and must not leak out.
        with pause_recording(), Scope(tracing=tracing):
            tensors = [Tensor(a) for a in arrays]
            for i, t in enumerate(tensors):
                _name_input(t, "Placeholder" if i == 0 else f"Placeholder_{i}")
            out = fn(tensors)
        return jax.tree_util.tree_map(to_array, out, is_leaf=_is_tensor_leaf)

    return jax.eval_shape(run, arrays)


def _symbolic_arrays(specs):
    """ShapeDtypeStructs for ``specs``, each unknown dimension a symbol of its own."""
    n = sum(d is None for sp in specs for d in sp.shape)
    symbols = iter(jax.export.symbolic_shape(", ".join(f"_d{i}" for i in range(n)))) if n else iter(())
    return [jax.ShapeDtypeStruct(tuple(next(symbols) if d is None else d for d in sp.shape),
                                 _dtypes.np_dtype(sp.dtype)) for sp in specs]


def _infer_output(fn, specs):
    """Output specs of ``fn([tensors])`` for input ``specs`` by ``jax.eval_shape`` (nothing computed).

    ``fn`` runs once, as Keras 3 calls a layer once on symbolic inputs: an unknown dimension is
    a symbolic size (``jax.export`` shape polymorphism; the tensors' shapes show it as None), and
    an output dimension that depends on one is unknown. Only a call that cannot be traced so
    (shape arithmetic needing numbers) is traced again with two different sizes standing in for
    the unknown ones: a dimension that comes out different depends on them."""
    if not any(d is None for sp in specs for d in sp.shape):
        out = _abstract_run(fn, _symbolic_arrays(specs))
        return jax.tree_util.tree_map(lambda x: _Spec(x.shape, x.dtype), out)
    try:
        out = _abstract_run(fn, _symbolic_arrays(specs))
    except Exception:  # noqa: BLE001 -- an op that needs the sizes: stand-ins below
        pass
    else:
        return jax.tree_util.tree_map(
            lambda x: _Spec(tuple(None if jax.export.is_symbolic_dim(d) else int(d) for d in x.shape), x.dtype), out)
    results = []
    unknown_batch = any(sp.shape and sp.shape[0] is None for sp in specs)
    for batch, other in _STAND_INS:
        arrays = [jax.ShapeDtypeStruct(
            tuple((batch if i == 0 else other) if d is None else d for i, d in enumerate(sp.shape)),
            _dtypes.np_dtype(sp.dtype)) for sp in specs]
        _ctx.stand_in_batch.append(batch if unknown_batch else None)
        try:
            results.append(_abstract_run(fn, arrays))
        finally:
            _ctx.stand_in_batch.pop()
    return jax.tree_util.tree_map(
        lambda x, y: _Spec(tuple(p if p == q else None for p, q in zip(x.shape, y.shape)), x.dtype),
        results[0], results[1])


# ---------------------------------------------------------------------------
# Layer
# ---------------------------------------------------------------------------

_INPUT_SHAPE_WARNING = ("Do not pass an `input_shape`/`input_dim` argument to a layer. When using "
                        "Sequential models, prefer using an `Input(shape)` object as the first layer in "
                        "the model instead.")

_LAYER_KWARGS = frozenset({"input_shape", "batch_input_shape", "input_dim", "batch_size", "dynamic",
                           "autocast", "activity_regularizer", "weights", "input_length"})


def _positional_weight_args(args, shape, initializer, dtype):
    """Keras 3's ``add_weight(shape, initializer, dtype)`` positional form, and its errors for
    the Keras 2 form ``add_weight('kernel', ...)``."""
    if not args:
        return shape, initializer, dtype
    if len(args) > 3:
        raise TypeError(f"add_weight() takes at most 3 positional arguments but {len(args)} were given.")
    if isinstance(args[0], str):
        raise ValueError("`name` must be passed as a keyword argument. "
                         f"Received: add_weight('{args[0]}', ...). Use: add_weight(shape=..., name='{args[0]}').")
    given = {"shape": shape, "initializer": initializer, "dtype": dtype}
    for arg, key in zip(args, given):
        if given[key] is not None:
            raise ValueError(f"`{key}` was passed both positionally and as a keyword argument.")
        given[key] = arg
    return given["shape"], given["initializer"], given["dtype"]


class Layer(Module):
    """Base class of Keras layers: lazy build, weights, ``training``, sub-layer tracking.

    Subclasses create weights in ``build(input_shape)`` with :meth:`add_weight`
    (or in ``__init__`` when the shape is known) and compute in
    ``call(inputs, training=None)``. Calling the layer builds it on first use,
    passes ``training`` only when ``call`` accepts it (and otherwise forwards the
    enclosing layer's value, as Keras does), and converts array inputs to tensors.

    Args:
        trainable: whether the layer's weights are trained (``trainable_weights``).
        name: the layer name; by default a unique snake-case name (``dense``, ``dense_1``...).
        dtype: the dtype of the layer's weights (``'float32'``).
        input_shape: the shape of one example, used by ``Sequential`` to build early.

    Example:
        >>> import tapejax as tf
        >>> class Linear(tf.keras.layers.Layer):
        ...     def __init__(self, units=2, **kwargs):
        ...         super().__init__(**kwargs)
        ...         self.units = units
        ...     def build(self, input_shape):
        ...         self.w = self.add_weight(name='w', shape=(input_shape[-1], self.units),
        ...                                  initializer='ones')
        ...         self.b = self.add_weight(name='b', shape=(self.units,), initializer='zeros')
        ...     def call(self, inputs):
        ...         return tf.matmul(inputs, self.w) + self.b
        >>> layer = Linear(name='linear')
        >>> layer(tf.ones([1, 3])).numpy().tolist()
        [[3.0, 3.0]]
        >>> [w.path for w in layer.weights]
        ['linear/w', 'linear/b']
    """

    _is_tf_module = False   # Keras 3's layers are not tf.Modules (``Module._flatten``)

    @property
    def submodules(self):
        # Keras 3's layers have no ``submodules`` (a tf.Module's): TF 2.21's AttributeError
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'submodules'")

    _k_model = False   # a keras Model (its auto config takes no arguments)

    # Keras 3: only tensors (or None) may be passed positionally to a layer, but to the
    # preprocessing layers and functional models, which take other values.
    _allow_non_tensor_positional_args = False

    _keras_public_module = "keras.layers"   # where serialize_keras_object names a built-in layer
    # The constructor arguments get_config lists after the base ones (name, trainable, dtype,
    # activity_regularizer), in Keras 3's order: each read from the attribute of that name.
    _k_config_keys = ()
    _k_activations = frozenset({"activation", "recurrent_activation"})   # configured by their Keras name

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        if not cls.__module__.startswith("tapejax.") and _default_get_config(cls):
            # Keras 3 keeps the constructor arguments of a user's layer without a get_config of
            # its own (its "auto config"); a Model subclass's are its defaults (Keras 3's
            # Model.__new__ passes no arguments on)
            if cls._k_model:
                args, kwargs = (), {}
            obj.__dict__["_k_auto_config"] = _auto_config(cls, args, kwargs)
        return obj

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        unknown = set(kwargs) - _LAYER_KWARGS
        if unknown:
            raise TypeError(f"Keyword argument not understood: {sorted(unknown)[0]!r} (in "
                            f"{type(self).__name__}). Check the spelling against the layer's documented "
                            "arguments.")
        if name is None:
            name = unique_name(_to_snake_case(type(self).__name__))
        elif not isinstance(name, str):
            raise TypeError(f"A layer name must be a string, got {name!r}.")
        super().__init__(name=name)
        self._k_init_state()
        self._k_trainable_flag = bool(trainable)
        self._k_policy = _layer_policy(dtype)
        self._k_autocast = bool(kwargs.get("autocast", True))
        self._k_dtype = np.dtype(self._k_policy.variable_dtype)
        self.built = False
        if kwargs.get("input_shape") is not None or kwargs.get("input_dim") is not None:
            # Keras 3 warns here (stacklevel 2: the subclass's super().__init__ line), and
            # tutorials written for Keras 2 print it on every layer class that gets one.
            warnings.warn(_INPUT_SHAPE_WARNING, stacklevel=2)
        batch_input_shape = kwargs.get("batch_input_shape")
        if batch_input_shape is None:
            if kwargs.get("input_shape") is not None:
                batch_input_shape = (kwargs.get("batch_size"),) + tuple(kwargs["input_shape"])
            elif kwargs.get("input_dim") is not None:
                batch_input_shape = (kwargs.get("batch_size"), kwargs["input_dim"])
        self._k_batch_input_shape = None if batch_input_shape is None else tuple(batch_input_shape)
        self._k_activity_regularizer = regularizers.get(kwargs.get("activity_regularizer"))

    @property
    def activity_regularizer(self):
        """The regularizer of the layer's outputs (``activity_regularizer=``), or None."""
        return self.__dict__.get("_k_activity_regularizer")

    @activity_regularizer.setter
    def activity_regularizer(self, value):
        self._k_activity_regularizer = regularizers.get(value)

    def _k_init_state(self):
        d = self.__dict__
        d.setdefault("_k_trainable", [])        # own trainable weights, creation order
        d.setdefault("_k_non_trainable", [])    # own non-trainable weights, creation order
        d.setdefault("_k_regularized", [])      # (regularizer, variable) pairs
        d.setdefault("_k_call_losses", [])      # add_loss values of the latest call
        d.setdefault("_k_output_shape", None)
        d.setdefault("_k_declared_shape", False)  # output shape from a declared input shape: kept
        d.setdefault("_k_in_scope", 0)
        d.setdefault("_k_trainable_flag", True)

    # -- attribute tracking -------------------------------------------------

    def __setattr__(self, name, value):
        if not name.startswith(_BOOKKEEPING_PREFIX) and name != "built":
            self._k_init_state()
            for leaf in _leaves(value):
                if isinstance(leaf, KerasVariable):
                    self._k_track_variable(leaf, leaf.trainable)
            self._k_rescan()
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        self._k_rescan()
        object.__delattr__(self, name)

    def _k_rescan(self):
        """Forgets what the attributes held (``_k_holders``, ``_k_scan``): one was set or deleted."""
        self.__dict__.pop("_k_holders", None)
        self.__dict__.pop("_k_scan", None)

    def _k_track_variable(self, var, trainable):
        for lst in (self._k_trainable, self._k_non_trainable):
            for v in lst:
                if v is var:
                    return
        (self._k_trainable if trainable else self._k_non_trainable).append(var)

    def _k_holders_now(self):
        """The attributes that may hold a Module or Variable (a Module, a Variable, a container),
        in attribute-assignment order, kept until an attribute is set or deleted."""
        holders = self.__dict__.get("_k_holders")
        if holders is None:
            holders = [value for key, value in vars(self).items()
                       if not key.startswith(_BOOKKEEPING_PREFIX) and isinstance(value, _HOLDERS)]
            self.__dict__["_k_holders"] = holders
        return holders

    def _k_held(self):
        """The Modules (layers) and Variables the attributes hold, also in containers filled
        after assignment (``self.ws.append(v)``), in attribute-assignment order."""
        out = []
        for value in self._k_holders_now():
            _collect(value, out, _HELD)
        return out

    def _k_parts(self):
        """(own trainable weights, own non-trainable weights, directly tracked sub-layers and
        tf.Modules in attribute-assignment order). The scan of the attributes is kept with the
        identities of what the containers among them hold (``_k_scan``): a weights listing,
        twice a training step, then checks those instead of walking every attribute again."""
        items = _contents(self._k_watched())
        key = [tuple(map(id, t)) for t in items]
        scan = self.__dict__.get("_k_scan")
        if scan is None or scan[0] != key:
            subs = []
            # As Keras 3: its own Variables (add_weight, tf.keras.Variable) and the Keras layers
            # held; a plain tf.Variable or tf.Module attribute is not a weight (TF 2.21: not in
            # ``weights``, not trained by ``fit``; checkpoints still save it).
            for x in self._k_held():
                if isinstance(x, Variable):
                    if isinstance(x, KerasVariable):
                        self._k_track_variable(x, x.trainable)
                elif x is not self and not x._is_tf_module:
                    subs.append(x)
            scan = self.__dict__["_k_scan"] = (key, self._k_layers_first(_dedup(subs)), items)
        return self._k_trainable, self._k_non_trainable, scan[1]

    def _k_layers_first(self, sublayers):
        """The sub-layers in the order weights list them (a Model puts its layers first)."""
        return sublayers

    def _k_watched(self):
        """What the scan of ``_k_parts`` depends on: the holders (a Model adds its layer list)."""
        return self._k_holders_now()

    def _k_sublayers(self):
        return self._k_parts()[2]


    # -- weights ------------------------------------------------------------

    @property
    def trainable(self):
        """Whether the layer trains: ``False`` moves all its weights to ``non_trainable_weights``."""
        return self._k_trainable_flag

    @trainable.setter
    def trainable(self, value):
        self._k_trainable_flag = bool(value)
        for sub in self._k_sublayers():
            if isinstance(sub, Layer):
                sub.trainable = value

    @property
    def metrics(self):
        """The metrics (``tf.keras.metrics.Metric``) the layer's attributes hold, then its
        sub-layers' (Keras 3: ``fit`` resets them at each epoch)."""
        out = self._k_own_metrics()
        for sub in self._k_sublayers():
            if isinstance(sub, Layer):
                out.extend(sub.metrics)
        return _dedup(out)

    def _k_own_metrics(self):
        return _dedup([v for key, value in vars(self).items() if not key.startswith(_BOOKKEEPING_PREFIX)
                       for v in _leaves(value) if isinstance(v, _Metric)])

    @property
    def trainable_weights(self):
        """The weights a training step updates: own (creation order), then sub-layers'."""
        if not self.trainable:
            return []
        own, _, subs = self._k_parts()
        out = list(own)
        for sub in subs:
            out.extend(sub.trainable_weights if isinstance(sub, Layer) else sub.trainable_variables)
        return _dedup(out)

    @property
    def non_trainable_weights(self):
        """Weights not trained: non-trainable ones (moving statistics), or all of a frozen layer's."""
        own_t, own_n, subs = self._k_parts()
        if self.trainable:
            out = list(own_n)
            for sub in subs:
                out.extend(sub.non_trainable_weights if isinstance(sub, Layer) else sub.non_trainable_variables)
        else:
            out = list(own_t) + list(own_n)
            for sub in subs:
                out.extend(sub.weights if isinstance(sub, Layer) else sub.variables)
        return _dedup(out)

    @property
    def weights(self):
        """``trainable_weights + non_trainable_weights``."""
        return _dedup(self.trainable_weights + self.non_trainable_weights)

    @property
    def trainable_variables(self):
        return self.trainable_weights

    @property
    def non_trainable_variables(self):
        return self.non_trainable_weights

    @property
    def variables(self):
        return self.weights

    @property
    def dtype(self):
        return self._k_dtype.name

    @property
    def compute_dtype(self):
        """The dtype the layer computes in (its mixed precision policy's)."""
        return self._k_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self._k_dtype.name

    @property
    def dtype_policy(self):
        return self._k_policy

    @property
    def losses(self):
        """Regularization penalties and ``add_loss`` values of the latest call (with sub-layers')."""
        out = list(self._k_call_losses)
        for reg, var in self._k_regularized:
            out.append(reg(var))
        for sub in self._k_sublayers():
            if isinstance(sub, Layer):
                out.extend(sub.losses)
        return out

    def _k_activity_losses(self, outputs):
        """Keras 3: the ``activity_regularizer``'s penalty of each output tensor, divided by its
        batch size, is a loss of the call."""
        for out in jax.tree_util.tree_leaves(outputs, is_leaf=_is_tensor_leaf):
            if isinstance(out, _TensorBase):
                loss = self._k_activity_regularizer(out)
                if out.shape.rank:
                    loss = divide_no_nan(loss, cast(_shape_op(out)[0], loss.dtype))
                self.add_loss(loss)

    def add_loss(self, loss):
        """Adds a loss tensor (e.g. an activity penalty) to ``layer.losses`` for this call."""
        self._k_call_losses.append(loss() if callable(loss) else loss)

    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation="none", overwrite_with_gradient=False,
                   name=None, **kwargs):
        """Creates a weight of this layer: a ``tf.keras.Variable`` with path ``<layer>/<name>``.

        Args:
            shape: its shape (default scalar); Keras 3 also takes ``shape, initializer, dtype``
                positionally, never the name (``add_weight('kernel', ...)`` raises Keras's
                ValueError).
            dtype: default the layer's dtype.
            initializer: name or initializer object; default ``glorot_uniform``
                for floats, ``zeros`` otherwise.
            regularizer: optional callable ``var -> penalty``, added to ``losses``.
            trainable: default True. A frozen layer creates non-trainable Variables.
            name: the weight's name (e.g. ``'kernel'``), a keyword.

        Returns:
            The new ``tf.keras.Variable`` (a :class:`tapejax.Variable`).

        Example:
            >>> import tapejax as tf
            >>> layer = tf.keras.layers.Layer(name='scale')
            >>> w = layer.add_weight(name='w', shape=(2,), initializer='ones')
            >>> w.name, [v.path for v in layer.trainable_weights]
            ('w', ['scale/w'])
        """
        self._k_init_state()
        shape, initializer, dtype = _positional_weight_args(args, shape, initializer, dtype)
        shape = () if shape is None else tuple(int(d) for d in shape)
        dt = _dtypes.np_dtype(dtype) if dtype is not None else self._k_dtype
        if initializer is None:
            initializer = "glorot_uniform" if dt.kind in "fc" else "zeros"
        init = _initializers.get(initializer)
        trainable = True if trainable is None else bool(trainable)
        # As Keras 3: weights are created in init_scope, concrete and outside any function being
        # traced, so a lazy build inside tf.function is not a Variable the function creates.
        # A name with slashes (a flax parameter's 'params/Dense_0/kernel') names nested scopes:
        # the variable's name is the last part, its path all of them.
        *scopes, short = (name or "variable").split("/")
        with init_scope(), self._k_scope(), _nested_scopes(scopes):
            value = init(shape, dtype=_dtypes.as_dtype(dt))
            var = KerasVariable(to_array(value, dt), trainable=trainable and self.trainable,
                                name=short, constraint=constraint)
        self._k_track_variable(var, trainable)
        if regularizer is not None:
            self._k_regularized.append((_regularizer(regularizer), var))
        return var

    add_variable = add_weight

    def _k_scope(self):
        return _LayerScope(self)

    def get_weights(self):
        """The weights' values as numpy arrays, in ``weights`` order.

        Example:
            >>> import tapejax as tf
            >>> d = tf.keras.layers.Dense(2, kernel_initializer='ones')
            >>> _ = d(tf.ones([1, 3]))
            >>> [w.shape for w in d.get_weights()]
            [(3, 2), (2,)]
        """
        return [np.array(v.numpy()) for v in self.weights]

    def set_weights(self, weights):
        """Assigns numpy arrays to the weights, in ``weights`` order (shapes must match).

        Raises:
            ValueError: a different number of arrays, or a shape mismatch.

        Example:
            >>> import tapejax as tf, numpy as np
            >>> d = tf.keras.layers.Dense(1)
            >>> _ = d(tf.ones([1, 2]))
            >>> d.set_weights([np.ones((2, 1)), np.zeros(1)])
            >>> d(tf.ones([1, 2])).numpy().tolist()
            [[2.0]]
        """
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(
                f"You called `set_weights(weights)` on layer '{self.name}' with a weight list of length "
                f"{len(weights)}, but the layer was expecting {len(params)} weights "
                f"(shapes {[tuple(p.shape) for p in params]}).")
        for p, w in zip(params, weights):
            w = np.asarray(w)
            if tuple(w.shape) != tuple(p.shape):
                raise ValueError(f"Layer '{self.name}' weight shape {tuple(p.shape)} is not compatible with "
                                 f"provided weight shape {w.shape} (weight {p.name}).")
        for p, w in zip(params, weights):
            p.assign(np.asarray(w))

    def count_params(self):
        """The number of scalars in the layer's weights.

        Raises:
            ValueError: the layer is not built yet.

        Example:
            >>> import tapejax as tf
            >>> d = tf.keras.layers.Dense(10)
            >>> d.build((None, 784))
            >>> d.count_params()
            7850
        """
        if not self.built and not self.weights:
            raise ValueError(
                f"You tried to call `count_params` on layer '{self.name}', but the layer isn't built. "
                "You can build it manually via: `layer.build(batch_input_shape)`, or call it on data.")
        return int(sum(int(np.prod(v.shape, dtype=np.int64)) for v in self.weights))

    # -- life cycle ---------------------------------------------------------

    def build(self, input_shape):
        """Creates the weights for inputs of ``input_shape``; the base version creates none."""
        self.built = True

    def call(self, inputs, *args, **kwargs):
        """The forward computation; the base layer is the identity."""
        return inputs

    @property
    def supports_masking(self):
        """Whether the layer passes a mask on (Keras 3: True where ``compute_mask`` is its own)."""
        own = self.__dict__.get("_k_supports_masking")
        return own if own is not None else type(self).compute_mask is not Layer.compute_mask

    @supports_masking.setter
    def supports_masking(self, value):
        self.__dict__["_k_supports_masking"] = bool(value)

    def compute_mask(self, inputs, previous_mask=None):
        """The mask of the output (Keras 3: the input's, for a layer that supports masking)."""
        return previous_mask

    def _k_maybe_build(self, input_shape):
        if self.built:
            return
        if isinstance(input_shape, (tuple, list)) and not isinstance(input_shape, TensorShape) \
                and not any(isinstance(e, (tuple, list, dict)) for e in input_shape):
            input_shape = TensorShape(input_shape)
        if _ctx.stand_in_batch and _ctx.stand_in_batch[-1] is not None and isinstance(input_shape, TensorShape) \
                and input_shape.rank and input_shape[0] == _ctx.stand_in_batch[-1]:
            # Built inside an abstract call whose batch size is unknown (a subclassed model's
            # build, fit's first step): the layer builds on None, as Keras 3's symbolic call.
            input_shape = TensorShape((None,) + tuple(input_shape)[1:])
        with self._k_scope():
            self.build(input_shape)
        self.built = True
        self._k_build_input_shape = _shape_config(input_shape)   # get_build_config's
        _apply_deferred(self)  # checkpoint values restored before the weights existed

    def __call__(self, *args, **kwargs):
        if not args:
            if "inputs" not in kwargs:
                raise TypeError(f"Layer '{self.name}' was called without inputs: write layer(x).")
            args = (kwargs.pop("inputs"),)
        if len(args) == 1 and type(args[0]) is Tensor:
            pass        # the common call, layer(x): nothing to convert or check
        elif self._allow_non_tensor_positional_args:
            args = (_to_tensors(args[0]),) + args[1:]
        else:
            args = tuple(_to_tensors(a, numbers=False) for a in args)
            _check_positional_tensors(args)
        if _is_symbolic(args, kwargs):
            return self._k_symbolic_call(args, kwargs)
        inputs = args[0]
        # Keras 3 checks the input spec before the call's own frame (an error is framed by the
        # calling layer's), before building and again after (build may set it).
        assert_input_compatibility(self.input_spec, inputs, self.name)
        if not self.built:
            self._k_build_by_running(args, kwargs)
            self._k_maybe_build(_shape_of(inputs))
            assert_input_compatibility(self.input_spec, inputs, self.name)
        training = self._k_resolve_training(kwargs)
        mask = _keras_mask(inputs)
        if mask is not None and "mask" not in kwargs and _takes_mask(self.call):
            kwargs["mask"] = mask
        self._k_call_losses = []
        _ctx.training.append(training)
        try:
            with self._k_scope(), _autocast(self, args, kwargs) as (args, kwargs):
                out = self.call(*args, **kwargs)
        except Exception as e:
            raise _with_call_arguments(self, e, args, kwargs) from None
        finally:
            _ctx.training.pop()
        if self.__dict__.get("_k_activity_regularizer") is not None:
            self._k_activity_losses(out)
        if self.supports_masking and type(out) is Tensor and _keras_mask(out) is None:
            out_mask = self.compute_mask(inputs, mask)
            if out_mask is not None:
                out._keras_mask = out_mask
        # Raw shapes are kept (cheap); summary() and output_shape hide the batch size. A model
        # built from a declared input shape keeps its shapes (None dimensions), as Keras 3.
        if not self._k_declared_shape:
            self._k_output_shape = _known_dims(out._value.shape) if type(out) is Tensor else _shape_of(out)
        return out

    def _k_has_default_build(self):
        return type(self).build is Layer.build

    def _k_build_by_running(self, args, kwargs):
        """Keras 3's ``_maybe_build``: a layer without a ``build`` of its own that holds unbuilt
        layers runs ``call`` once on its arguments' specs (``compute_output_spec``; nothing is
        computed) so they build, before the call itself: a ``print`` in ``call`` shows twice at
        the first call. ``training`` is passed only if given; a call that cannot run so (it needs
        values) builds its layers in the call itself."""
        if not self._k_has_default_build() or not any(
                isinstance(sub, Layer) and not sub.built for sub in self._k_sublayers()):
            return
        flat, tree = jax.tree_util.tree_flatten(list(args), is_leaf=_is_tensor_leaf)
        pos = [i for i, leaf in enumerate(flat) if isinstance(leaf, (Tensor, KerasTensor, _Spec))]
        kw = dict(kwargs)
        training = kw.pop("training", None)
        if training is not None and _accepts(self.call, "training"):
            kw["training"] = training

        def fn(tensors):
            concrete = list(flat)
            for i, t in zip(pos, tensors):
                concrete[i] = t
            call_args = jax.tree_util.tree_unflatten(tree, concrete)
            _ctx.training.append(training)
            try:
                with self._k_scope(), _autocast(self, tuple(call_args), kw) as (a, k):
                    return self.call(*a, **k)
            finally:
                _ctx.training.pop()

        try:
            # As a traced function (Keras's scratch graph): a tf.Variable made in a nested build
            # from a computed value (tf.random.normal) raises here, and the call builds it.
            _abstract_run(fn, _symbolic_arrays([_Spec(flat[i].shape, flat[i].dtype) for i in pos]), tracing=True)
        except Exception:  # noqa: BLE001 -- values needed (Python branching, .numpy()): built by the call
            pass

    def _k_resolve_training(self, kwargs):
        """Keras's rule: an explicit ``training``, else the enclosing call's, else call's default."""
        training = kwargs.pop("training", None)
        if training is None and _ctx.training:
            training = _ctx.training[-1]
        if isinstance(training, _TensorBase):
            training = bool(training)
        accepts = _accepts(self.call, "training")
        if accepts and training is not None:
            kwargs["training"] = training
        return training

    def _k_symbolic_call(self, args, kwargs):
        """A call on ``tf.keras.Input`` tensors: build, infer output shapes, record the graph node."""
        inputs = args[0]
        if not self.built:
            self._k_build_by_running(args, kwargs)
            self._k_maybe_build(_shape_of(inputs))
        # Keras 3 passes ``training`` to a symbolic call only when it was given (or an enclosing
        # call has one): ``call`` sees its own default (None) in Sequential / functional models.
        training = kwargs.get("training")
        if training is None and _ctx.training:
            training = _ctx.training[-1]
        call_kwargs = dict(kwargs)
        call_kwargs.pop("training", None)
        if training is not None and _accepts(self.call, "training"):
            call_kwargs["training"] = training
        flat, tree = jax.tree_util.tree_flatten(list(args), is_leaf=_is_tensor_leaf)
        sym_pos = [i for i, leaf in enumerate(flat) if isinstance(leaf, KerasTensor)]

        def fn(tensors):
            concrete = list(flat)
            for i, t in zip(sym_pos, tensors):
                concrete[i] = t
            call_args = jax.tree_util.tree_unflatten(tree, concrete)
            # As the eager call: a mixed policy's layer outputs its compute dtype (float16).
            with self._k_scope(), _autocast(self, tuple(call_args), call_kwargs) as (call_args, kw):
                _ctx.training.append(training)
                try:
                    return self.call(*call_args, **kw)
                finally:
                    _ctx.training.pop()

        specs = self._k_output_specs(fn, [flat[i] for i in sym_pos])
        node = _Node(self, args, kwargs)
        outputs = jax.tree_util.tree_map(lambda sp: KerasTensor(sp.shape, sp.dtype, node=node), specs)
        node.outputs = outputs
        self._k_output_shape = jax.tree_util.tree_map(lambda t: t.shape, outputs)
        return outputs

    def _k_output_specs(self, fn, inputs):
        """The output specs of a symbolic call of ``fn`` on ``inputs`` (KerasTensors): by tracing
        ``call`` abstractly; a layer that computes on the host (strings) says them itself."""
        return _infer_output(fn, inputs)

    def compute_output_shape(self, input_shape):
        """Output shape for inputs of ``input_shape`` (by tracing ``call`` abstractly).

        Example:
            >>> import tapejax as tf
            >>> tf.keras.layers.Dense(4).compute_output_shape((None, 3))
            TensorShape([None, 4])
        """
        input_shape = TensorShape(input_shape)
        if not self.built:
            self._k_build_by_running((_Spec(input_shape, self._k_dtype),), {})
        self._k_maybe_build(input_shape)
        out = _infer_output(lambda xs: self._k_plain_call(xs[0]), [_Spec(input_shape, self._k_dtype)])
        return jax.tree_util.tree_map(lambda sp: sp.shape, out)

    def _k_plain_call(self, x, training=None):
        """``call`` on ``x`` as Keras 3's symbolic call: ``training`` passed only when given."""
        kw = {"training": training} if training is not None and _accepts(self.call, "training") else {}
        _ctx.training.append(training)
        try:
            with self._k_scope(), _autocast(self, (x,), kw) as (args, kw):
                return self.call(*args, **kw)
        finally:
            _ctx.training.pop()

    def get_config(self):
        """The layer's configuration, as Keras 3's: ``name``, ``trainable``, ``dtype`` (its dtype
        policy's configuration), ``activity_regularizer`` when it has one, then the layer's own
        arguments (``_k_config_keys``); initializers, regularizers, constraints and other Keras
        objects as ``serialize_keras_object`` describes them. ``type(layer).from_config(config)``
        makes a new layer with the same configuration.

        Example:
            >>> import tapejax as tf
            >>> config = tf.keras.layers.Dropout(0.5, name='drop').get_config()
            >>> config['name'], config['rate'], config['dtype']['config']
            ('drop', 0.5, {'name': 'float32'})
        """
        config = {"name": self.name}
        if "_k_auto_config" in self.__dict__ and _default_get_config(type(self)):
            arguments, keeps_name = _auto_config_of(self)
            config.update(arguments)
            if not keeps_name:
                del config["name"]
        config.update({"trainable": self.trainable, "dtype": serialize_keras_object(self._k_policy)})
        if self.activity_regularizer is not None:
            config["activity_regularizer"] = serialize_keras_object(self.activity_regularizer)
        for key in self._k_config_keys:
            value = self._k_config_value(key)
            if key in self._k_activations:
                value = _activations.serialize(value)
            elif _is_keras_object(value) or isinstance(value, (list, tuple)) and any(map(_is_keras_object, value)):
                value = serialize_keras_object(value)   # Keras objects (a list of cells); plain values kept
            config[key] = value
        return config

    get_config._k_default = True   # the base configuration (layers/_base._default_get_config)

    def _k_config_value(self, key):
        """The value ``get_config`` lists for one of ``_k_config_keys``: the attribute of that name."""
        return getattr(self, key)

    @classmethod
    def from_config(cls, config):
        """A new layer from ``get_config()``'s configuration (the dtype policy's configuration
        or, from files of earlier versions, a dtype name)."""
        return cls(**config)

    def get_build_config(self):
        """Keras 3's build configuration, ``{'input_shape': ...}``, for a layer built on one input
        shape (None otherwise)."""
        shape = self.__dict__.get("_k_build_input_shape")
        return None if shape is None else {"input_shape": shape}

    def build_from_config(self, config):
        """Builds the layer on ``get_build_config()``'s input shape (Keras 3's ``build_from_config``)."""
        if config and config.get("input_shape") is not None and not self.built:
            self._k_maybe_build(tuple(config["input_shape"]))

    input_spec = None   # an InputSpec (or a list of them) its calls are checked against, as Keras 3

    @property
    def output_shape(self):
        if self._k_output_shape is None:
            raise AttributeError(f"The layer '{self.name}' has never been called and thus has no defined "
                                 "output shape. Call it on data (or build the model) first.")
        return _batchless(self._k_output_shape)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    __str__ = __repr__


class _Operation(Layer):
    """A Keras operation of the functional graph (``x + 1`` on a KerasTensor): a weightless layer
    that ``model.layers`` leaves out and ``model.summary()`` lists, as Keras 3's operations."""

    _allow_non_tensor_positional_args = True

    _k_is_operation = True

    def call(self, *args):
        return self._k_fn(*args)

    def _k_keras_identity(self):
        """How ``serialize_keras_object`` names it: Keras 3's operation class (``keras.src.ops.numpy``)."""
        return "keras.src.ops.numpy", type(self).__name__, type(self).__name__

    def get_config(self):
        """Keras 3's operation configuration: its name."""
        return {"name": self.name}

    def get_build_config(self):
        return None   # an operation has no build configuration (Keras 3's Operation)

    @classmethod
    def from_config(cls, config):
        return cls(name=config["name"])


# Keras 3's operation names, their classes (the summary's "add (Add)") and what they compute.
_OPERATIONS = {
    "add": ("Add", lambda a, b: a + b),
    "subtract": ("Subtract", lambda a, b: a - b),
    "multiply": ("Multiply", lambda a, b: a * b),
    "true_divide": ("TrueDivide", lambda a, b: a / b),
    "matmul": ("Matmul", lambda a, b: a @ b),
    "power": ("Power", lambda a, b: a ** b),
    "negative": ("Negative", lambda a: -a),
    # Keras 3's GetItem: a list key (a key read back from JSON) is a tuple
    "get_item": ("GetItem", lambda a, key: a[tuple(key) if isinstance(key, list) else key]),
}
_OPERATION_CLASSES = {}


def _operation_class(name):
    """The operation class of a Keras 3 operation name (``'add'``), made once."""
    cls_name, fn = _OPERATIONS[name]
    cls = _OPERATION_CLASSES.get(name)
    if cls is None:
        cls = _OPERATION_CLASSES[name] = type(cls_name, (_Operation,), {"_k_fn": staticmethod(fn)})
    return cls


def _operation(name, *args):
    return _operation_class(name)(name=unique_name(name))(*args)


def _operation_by_class_name(class_name):
    """The operation class a configuration names (``'Multiply'``), or None."""
    for name, (cls_name, _) in _OPERATIONS.items():
        if cls_name == class_name:
            return _operation_class(name)
    return None


_serialization._OPERATIONS = _operation_by_class_name


class _LayerScope:
    """The layer's name scope, entered once however deeply its own methods nest."""

    __slots__ = ("layer", "pushed")

    def __init__(self, layer):
        self.layer = layer

    def __enter__(self):
        layer = self.layer
        self.pushed = layer._k_in_scope == 0
        if self.pushed:
            _name_scope.append(layer.name)
        layer._k_in_scope += 1

    def __exit__(self, *exc):
        self.layer._k_in_scope -= 1
        if self.pushed:
            _name_scope.pop()
        return False


class _nested_scopes:
    def __init__(self, names):
        self.names = [n for n in names if n]

    def __enter__(self):
        _name_scope.extend(self.names)

    def __exit__(self, *exc):
        del _name_scope[len(_name_scope) - len(self.names):]
        return False


_AUTO_CONFIG_EXAMPLE = '''
class CustomLayer(keras.layers.Layer):
    def __init__(self, arg1, arg2, **kwargs):
        super().__init__(**kwargs)
        self.arg1 = arg1
        self.arg2 = arg2

    def get_config(self):
        config = super().get_config()
        config.update({
            "arg1": self.arg1,
            "arg2": self.arg2,
        })
        return config
'''


def _is_keras_object(value):
    """Whether a configuration value is a Keras object (an initializer, a layer...), not a plain value."""
    return (hasattr(value, "get_config") and not isinstance(value, type)) or isinstance(value, types.FunctionType)


def _default_get_config(cls):
    """Whether ``cls`` configures itself with the base ``get_config`` (no get_config of its own)."""
    return getattr(cls.get_config, "_k_default", False) and not cls._k_config_keys


def _auto_config(cls, args, kwargs):
    """Keras 3's auto config: the constructor's arguments (defaults included, ``name`` left out)
    when all are strings, numbers, booleans or None (in lists, tuples, dicts); else None, or
    ``"positional"`` for a constructor given positional-only or ``*args`` arguments."""
    try:
        signature = inspect.signature(cls.__init__)
        bound = signature.bind(None, *args, **kwargs)
    except (TypeError, ValueError):
        return None
    params = list(signature.parameters.values())
    if any(p.kind == inspect.Parameter.POSITIONAL_ONLY for p in params[1:]):
        return "positional"
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    arguments.pop(params[0].name, None)
    for p in params:
        if p.kind == inspect.Parameter.VAR_KEYWORD:
            arguments.update(arguments.pop(p.name, {}))
        elif p.kind == inspect.Parameter.VAR_POSITIONAL and arguments.pop(p.name, ()):
            return "positional"
    arguments.pop("name", None)

    def plain(value):
        if isinstance(value, (list, tuple)):
            return all(plain(v) for v in value)
        if isinstance(value, dict):
            return all(plain(v) for v in value.values())
        return value is None or isinstance(value, (str, int, float, bool))

    return arguments if plain(arguments) else None


def _auto_config_of(layer):
    """``(arguments, keeps_name)``: the auto config part of ``layer.get_config()`` (Keras 3's
    Operation.get_config) and whether the constructor takes ``name`` back; Keras's
    NotImplementedError when the constructor's arguments could not be kept."""
    auto = layer.__dict__["_k_auto_config"]
    if isinstance(auto, dict):
        params = inspect.signature(type(layer).__init__).parameters
        keeps_name = "name" in params or ("kwargs" in params and
                                          params["kwargs"].kind == inspect.Parameter.VAR_KEYWORD)
        return dict(auto), keeps_name
    name = type(layer).__name__
    if auto == "positional":
        problem = (f"Object {name} was created by passing\npositional only or variadic positional arguments (e.g.,\n"
                   "`*args`) to `__init__()`, which is not supported by the\nautomatic config generation. Please "
                   "remove all positional\nonly and variadic arguments from `__init__()`\nor override `get_config()` "
                   "and `from_config()` to make\nthe object serializatble.")
    else:
        problem = (f"Object {name} was created by passing\nnon-serializable argument values in `__init__()`,\nand "
                   "therefore the object must override `get_config()` in\norder to be serializable. Please implement "
                   "`get_config()`.")
    raise NotImplementedError(f"\n{problem}\n\nExample:\n\n{_AUTO_CONFIG_EXAMPLE}")


def _shape_config(shape):
    """A build shape as Keras 3's build configuration keeps it: a tuple (a list of them for a
    layer of several inputs), None where unknown."""
    if isinstance(shape, TensorShape):
        return None if shape.rank is None else tuple(shape.as_list())
    if isinstance(shape, (list, tuple)):
        if all(d is None or isinstance(d, (int, np.integer)) for d in shape):
            return tuple(None if d is None else int(d) for d in shape)
        return [_shape_config(s) for s in shape]
    if isinstance(shape, dict):
        return {k: _shape_config(v) for k, v in shape.items()}
    return None


def _regularizer(reg):
    return regularizers.get(reg)


# ---------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------

class InputLayer(Layer):
    """The entry of a model: declares the input shape (``Sequential([InputLayer((4,)), ...])``).

    Keras 3's signature: ``shape`` is the first argument; ``input_shape=`` (Keras 2) still works
    and warns ``Argument `input_shape` is deprecated. Use `shape` instead.``, as Keras 3 does.

    Example:
        >>> import tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.InputLayer(shape=(4,)),
        ...                              tf.keras.layers.Dense(2)])
        >>> model.built
        True
        >>> tf.keras.layers.InputLayer((3,), batch_size=8).batch_shape
        (8, 3)
    """

    def __init__(self, shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None,
                 input_tensor=None, optional=False, name=None, **kwargs):
        if "input_shape" in kwargs:
            # Keras 3 warns from one line of its own (no stacklevel): once per process.
            warnings.warn("Argument `input_shape` is deprecated. Use `shape` instead.")
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        ragged = bool(kwargs.pop("ragged", None))
        kwargs.pop("type_spec", None)
        if shape is not None and batch_shape is not None:
            raise ValueError("You cannot pass both `shape` and `batch_shape` at the same time.")
        if shape is not None:
            batch_shape = (batch_size,) + ((shape,) if isinstance(shape, int) else tuple(shape))
        elif batch_shape is None and input_tensor is None:
            raise ValueError("You must pass a `shape` argument.")
        batch_input_shape = None if batch_shape is None else tuple(batch_shape)
        self.batch_shape = batch_input_shape
        tensor_name = name   # Keras 3: an unnamed Input's tensor is keras_tensor_<n>
        if name is None:
            name = unique_name("input_layer")
        # Keras 3: a string input's layer keeps the global policy; its dtype is 'string'
        text = dtype is not None and _dtypes.as_dtype(dtype) == _dtypes.string
        super().__init__(name=name, dtype=None if text else dtype, batch_input_shape=batch_input_shape, **kwargs)
        self._k_input_dtype = "string" if text else self._k_dtype.name
        self.built = True
        self._k_output_shape = None if batch_input_shape is None else TensorShape(batch_input_shape)
        self.sparse, self.ragged, self.optional = bool(sparse), ragged, bool(optional)
        self._k_tensor = KerasTensor(batch_input_shape, self._k_input_dtype, node=None, name=tensor_name,
                                     sparse=self.sparse, ragged=ragged) \
            if batch_input_shape is not None else None
        if self._k_tensor is not None:
            self._k_tensor._k_input_layer = self

    @property
    def dtype(self):
        return self._k_input_dtype

    def get_config(self):
        """Keras 3's InputLayer configuration: ``batch_shape``, ``dtype`` (a name), ``sparse``,
        ``ragged``, ``name``, ``optional``.

        Example:
            >>> import tapejax as tf
            >>> tf.keras.layers.InputLayer(shape=(4,), name='x').get_config()
            {'batch_shape': (None, 4), 'dtype': 'float32', 'sparse': False, 'ragged': False, 'name': 'x', 'optional': False}
        """
        return {"batch_shape": self.batch_shape, "dtype": self.dtype, "sparse": self.sparse,
                "ragged": self.ragged, "name": self.name, "optional": self.optional}


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=None, tensor=None, ragged=None,
          batch_shape=None, optional=False, **kwargs):
    """A symbolic input of a functional model: ``tf.keras.Input(shape=(784,))``.

    Args:
        shape: the shape of one example (without the batch dimension).
        batch_size: optional fixed batch size.
        name: optional name.
        dtype: default float32.

    Returns:
        A :class:`KerasTensor`; call layers on it, then ``tf.keras.Model(inputs, outputs)``.

    Example:
        >>> import tapejax as tf
        >>> inputs = tf.keras.Input(shape=(3,))
        >>> outputs = tf.keras.layers.Dense(2)(inputs)
        >>> model = tf.keras.Model(inputs, outputs)
        >>> model(tf.ones([4, 3])).shape
        TensorShape([4, 2])
    """
    if kwargs:   # Keras 3's Input takes no others (TF 2's ``type_spec=`` included)
        raise TypeError(f"Input() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if batch_shape is not None:
        batch_input_shape = tuple(batch_shape)
    elif shape is None:
        raise ValueError("Please provide to Input a `shape` argument: tf.keras.Input(shape=(784,)).")
    else:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        batch_input_shape = (batch_size,) + shape
    layer = InputLayer(batch_input_shape=batch_input_shape, name=name, dtype=dtype, sparse=sparse, ragged=ragged)
    return layer._k_tensor
