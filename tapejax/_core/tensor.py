"""Tensor and TensorShape: immutable wrappers of jax arrays with TensorFlow's surface.

Operators are attached by ``_ops`` (they delegate to the op table), so this module
has no dependency on the ops and can be imported by the engine.
"""
import itertools
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import devices as _devices, dtypes as _dtypes, state as _state

_ids = itertools.count(1)

# Told of every Tensor converted to NumPy (the engine notes it for GradientTape.explain).
export_listeners = []

_NUMPY_IN_TRACE = (
    "{what} was called on a symbolic value inside a compiled tapejax.function: the value "
    "is not computed yet while the function is being traced. Keep the computation in "
    "tensors (tf.* ops, tf.print for printing, tf.cond / tf.where for branching), or call "
    "tf.config.run_functions_eagerly(True) while debugging.")


def _no_numpy():
    """TensorFlow's error for ``.numpy()`` of a symbolic tensor (an ``AttributeError``: a
    ``SymbolicTensor`` has no ``numpy``), with the reason while a function is traced."""
    msg = "'SymbolicTensor' object has no attribute 'numpy'"
    if _state.tracing():
        msg += ". " + _NUMPY_IN_TRACE.format(what=".numpy()")
    return AttributeError(msg)


def is_tracer(x):
    return isinstance(x, jax.core.Tracer)


class HostValue:
    """The value of a string tensor while a ``tf.function`` is traced, when it is known only
    per call (a string argument, or computed from one), like a tracer's. ``example`` holds
    the strings of the call being traced, which the tf.strings ops recorded for every call
    compute on (see ``tapejax._host``); anything else converting it to NumPy raises, as for a
    tracer. ``spec`` is the shape shown (None for an argument's unknown dimensions); reading
    ``shape`` gives the example's and marks it ``used``: the trace then holds for that shape
    only."""

    __slots__ = ("ref", "example", "spec", "used", "known")
    dtype = np.dtype(object)

    def __init__(self, ref, example, spec=None):
        self.ref = ref
        self.example = example
        self.spec = example.shape if spec is None else tuple(spec)
        self.used = False
        self.known = False   # the shape is the same in every call (an argument's, all dims known)

    @property
    def shape(self):
        self.used = True
        return self.example.shape

    @property
    def ndim(self):
        return len(self.spec)

    @property
    def size(self):
        return self.example.size if self.shape else 1

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(_NUMPY_IN_TRACE.format(what="Converting a string tensor to NumPy"))

    def __jax_array__(self):   # JAX refuses it before reading its shape (which would mark it used)
        raise TypeError("A string tensor is not a JAX value: it is computed on the host.")


def is_symbolic(x):
    """Whether ``x`` (a Tensor's value) is not known while a function is traced (or is only a
    shape and dtype: a concrete function's ``structured_outputs``)."""
    return isinstance(x, (jax.core.Tracer, HostValue, jax.ShapeDtypeStruct))


try:
    from jax._src.interpreters.ad import JVPTracer as _JVP, LinearizeTracer as _Linearize
    _AUTODIFF_TRACERS = frozenset((_JVP, _Linearize))
except ImportError:  # a JAX that moved them: only the public JVPTracer
    _AUTODIFF_TRACERS = frozenset((jax.interpreters.ad.JVPTracer,))


def is_jax_autodiff(x):
    """Whether ``x`` is a jax array being differentiated by jax.grad/vjp/jvp (an autodiff tracer)."""
    return type(x) in _AUTODIFF_TRACERS


class TensorShape(tuple):
    """The shape of a Tensor: a tuple of ints (``None`` for unknown dimensions).

    Example:
        >>> import tapejax as tf
        >>> s = tf.zeros([2, 3]).shape
        >>> s, s.as_list(), s.rank, s.num_elements()
        (TensorShape([2, 3]), [2, 3], 2, 6)
    """

    _unknown = False   # TensorShape(None): the rank is unknown too

    def __new__(cls, dims=()):
        if dims is None or isinstance(dims, TensorShape) and dims._unknown:
            self = super().__new__(cls, ())
            self._unknown = True
            return self
        if isinstance(dims, (int, np.integer)):   # TensorFlow: one dimension of that size
            dims = (dims,)
        # A symbolic dimension (jax.export shape polymorphism) is unknown, as in a traced TF graph.
        return super().__new__(cls, tuple(None if d is None or jax.export.is_symbolic_dim(d) else int(d)
                                          for d in dims))

    @property
    def rank(self):
        """The number of dimensions; None for ``TensorShape(None)`` (unknown rank)."""
        return None if self._unknown else tuple.__len__(self)

    ndims = rank

    @property
    def dims(self):
        return None if self._unknown else list(self)

    def as_list(self):
        if self._unknown:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self)

    def num_elements(self):
        return None if self._unknown or None in self else int(np.prod(self, dtype=np.int64))

    def is_fully_defined(self):
        return not self._unknown and None not in self

    def is_compatible_with(self, other):
        other = TensorShape(other)
        if self._unknown or other._unknown:
            return True
        return len(self) == len(other) and all(a is None or b is None or a == b for a, b in zip(self, other))

    def assert_is_compatible_with(self, other):
        """Raises TensorFlow's ValueError unless ``other`` is compatible with this shape."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {TensorShape(other)} are incompatible")

    def merge_with(self, other):
        """The shape with the dimensions known in either (ValueError where they differ).

        Example:
            >>> import tapejax as tf
            >>> tf.TensorShape([None, 2]).merge_with([3, None])
            TensorShape([3, 2])
        """
        other = TensorShape(other)
        if self._unknown:
            return other
        if other._unknown:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self, other)])

    def most_specific_compatible_shape(self, other):
        """The most specific shape compatible with both (unknown where they differ)."""
        other = TensorShape(other)
        if self._unknown or other._unknown or len(self) != len(other):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self, other)])

    def concatenate(self, other):
        """The dimensions of this shape followed by those of ``other``."""
        other = TensorShape(other)
        if self._unknown or other._unknown:
            return TensorShape(None)
        return TensorShape(tuple(self) + tuple(other))

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return TensorShape(other).concatenate(self)

    def __len__(self):
        if self._unknown:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return tuple.__len__(self)

    def __bool__(self):
        return not self._unknown and tuple.__len__(self) > 0

    def __iter__(self):
        if self._unknown:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return tuple.__iter__(self)

    def __eq__(self, other):
        # TensorFlow compares shapes with lists too: ``x.shape == [2, 3]``.
        if isinstance(other, TensorShape) and (self._unknown or other._unknown):
            return self._unknown and other._unknown
        if isinstance(other, list):
            other = tuple(other)
        return tuple.__eq__(self, other) if isinstance(other, tuple) and not self._unknown else NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __getitem__(self, key):
        if self._unknown:
            return TensorShape(None) if isinstance(key, slice) else None
        r = tuple.__getitem__(self, key)
        return TensorShape(r) if isinstance(key, slice) else r

    def __repr__(self):
        return "TensorShape(None)" if self._unknown else f"TensorShape({list(self)})"

    def __str__(self):
        if self._unknown:
            return "<unknown>"
        return "(" + ", ".join("None" if d is None else str(d) for d in self) + ("," if len(self) == 1 else "") + ")"


_F32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103    # the smallest float64 that rounds to float32's inf


def _python_default_dtype(x, requested=False):
    """TensorFlow's dtype for Python data: float32 for floats, int32 for ints that fit (else int64),
    complex128 for complex numbers. An object that is not a Python sequence but has ``__array__``
    (a pandas DataFrame or Series) keeps NumPy's dtype, as TensorFlow converts it through NumPy.
    ``requested``: a dtype will be applied to the data (floats stay float64 until then).

    Raises:
        ValueError: a float beyond float32's range (TF's message), where no dtype is requested.
    """
    try:
        arr = np.asarray(x)
    except ValueError:  # rows of different lengths
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    if arr.dtype.kind not in "OUS" and hasattr(type(x), "__array__") and not isinstance(x, (list, tuple)):
        return arr
    if arr.dtype == np.float64:
        return arr if requested else _float32_of_python(arr)
    if arr.dtype == np.int64:
        if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            return arr
        return arr.astype(np.int32)
    if arr.dtype.kind in "OUS":
        return string_array(x)
    return arr


def _float32_of_python(arr):
    if arr.ndim == 0:
        big = _F32_OVERFLOW <= abs(arr.item()) < float("inf")
    else:
        with np.errstate(over="ignore"):
            out = arr.astype(np.float32)
        big = not np.isfinite(out).all() and (np.isinf(out) & np.isfinite(arr)).any()
        if not big:
            return out
    if big:
        raise ValueError("Can't convert Python sequence with a value out of range for a double-precision float.")
    return arr.astype(np.float32)


_ALL_TEXT = object()


def string_array(x):
    """Text as a string tensor holds it: a read-only NumPy object array of ``bytes``
    (``str`` encoded as UTF-8), as TensorFlow's ``.numpy()`` gives it.

    Raises TensorFlow's errors for data that is not all text: ``ValueError`` for a Python
    list mixing strings and numbers (or a NumPy object array holding numbers), and for a
    list whose rows differ in length.
    """
    objs = x if isinstance(x, np.ndarray) and x.dtype == object else np.asarray(x, dtype=object)
    flat = [e.encode("utf-8") if isinstance(e, str) else e for e in objs.reshape(-1)]
    bad = next((e for e in flat if not isinstance(e, bytes)), _ALL_TEXT)
    if bad is not _ALL_TEXT:    # (None is a value that is not text: tf.convert_to_tensor(None))
        if not isinstance(x, (list, tuple, np.ndarray)):
            raise ValueError(f"Attempt to convert a value ({x!r}) with an unsupported type ({type(x)}) to a "
                             "Tensor.")
        if isinstance(bad, (list, tuple)):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
        first = flat[0] if flat else None
        if not isinstance(x, np.ndarray) and not isinstance(first, (bytes, bool, int, float, complex, np.generic)):
            # TensorFlow infers the dtype from the first value: one it cannot convert is the error
            raise ValueError(f"Attempt to convert a value ({first!r}) with an unsupported type ({type(first)}) "
                             "to a Tensor.")
        if isinstance(x, np.ndarray):
            raise ValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported object type "
                             f"{type(bad).__name__}).")
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    out = np.empty(objs.shape, object)
    out.reshape(-1)[:] = flat if flat else []
    out.flags.writeable = False  # a tensor is immutable; .numpy() gives this array, as for numbers
    return out


def _cannot_convert(x, dtype):
    return TypeError(f"Cannot convert {x!r} to EagerTensor of dtype {_dtypes.c_name(dtype)}")


def python_misfit(x, dtype):
    """The first Python value in ``x`` (a number or a nested list of them) that would lose its
    kind in ``dtype`` -- a float as an integer, a number as a bool, a complex as a real -- or
    ``_FITS``. NumPy values and tensors are cast, as in TensorFlow."""
    want = np.dtype(_dtypes.np_dtype(dtype))
    if want == object:
        return _FITS
    bad = {"b": (int, float, complex), "i": (float, complex), "u": (float, complex), "f": (complex,),
           "V": (complex,)}.get(want.kind, ())

    def visit(v):
        if isinstance(v, (list, tuple)):
            return next((m for m in map(visit, v) if m is not _FITS), _FITS)
        return v if isinstance(v, bad) and not isinstance(v, bool) else _FITS     # a bool fits any

    return visit(x) if bad else _FITS


_FITS = object()


def check_python_kinds(x, dtype):
    """Raises TensorFlow's TypeError when a Python value would lose its kind in ``dtype``
    (``python_misfit``): ``tf.constant(1.5, tf.int32)``, ``2.5 * int32_tensor``,
    ``int_variable.assign(2.5)``; while a function is traced, with TF's graph message."""
    m = python_misfit(x, dtype)
    if m is _FITS:
        return
    if _state._local.tracing:
        raise TypeError(f"Expected {_dtypes.as_dtype(dtype).name}, but got {m!r} of type '{type(m).__name__}'.")
    raise _cannot_convert(x, dtype)


def check_tensor_dtype(t, dtype):
    """TensorFlow's ValueError for ``convert_to_tensor(t, dtype)`` of a tensor of another dtype
    (a Variable's ``assign``, ``tf.convert_to_tensor``): it does not cast."""
    if t.dtype != dtype:
        raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for Tensor with "
                         f"dtype {t.dtype.name}: {t!r}")


_WIDE = {np.dtype(np.int64): np.int32, np.dtype(np.uint64): np.uint32, np.dtype(np.float64): np.float32,
         np.dtype(np.complex128): np.complex64}


def _fits_32_bits(a):
    """Whether JAX's 32-bit mode can hold ``a`` exactly (it would narrow 64-bit values silently)."""
    narrow = _WIDE.get(a.dtype)
    if narrow is None or jax.config.jax_enable_x64:
        return True
    with np.errstate(all="ignore"):
        return bool(np.array_equal(a.astype(narrow).astype(a.dtype), a, equal_nan=a.dtype.kind in "fc"))


def from_numpy(a):
    """A numpy value as a jax array, keeping its dtype (float64 stays float64, as in TensorFlow).

    ``jax.device_put`` copies an array to the device without compiling anything;
    ``jnp.asarray`` compiles a small program per new shape (JAX 0.10). Inside a trace both
    stage the value as a constant of the program.
    """
    if not _fits_32_bits(a):
        raise ValueError(
            f"{a!r} needs {a.dtype} to be exact, and JAX's 64-bit mode is off (TAPEJAX_ENABLE_X64=0). "
            "Unset TAPEJAX_ENABLE_X64, or cast the value to a 32-bit dtype first.")
    return jnp.asarray(a) if a.ndim == 0 else jax.device_put(a)


def to_array(x, dtype=None):
    """The jax array (or tracer) behind a Tensor-like value, with TF's conversion rules."""
    if isinstance(x, _TensorBase):
        v = x._value
    elif isinstance(x, (jax.Array, jax.core.Tracer)):
        v = x
    else:
        if isinstance(x, (list, tuple)) and any(_contains_tensor(e) for e in x):
            vs = [to_array(e) for e in x]
            v = string_array(np.stack(vs)) if any(e.dtype == object for e in vs) else jnp.stack(vs)
        elif hasattr(x, "__jax_array__"):
            v = jnp.asarray(x)
        else:
            a = np.asarray(x) if isinstance(x, (np.ndarray, np.generic)) else _python_default_dtype(x, dtype is not None)
            text = a.dtype.kind in "OUS"
            if text or (dtype is not None and _dtypes.as_dtype(dtype) is _dtypes.string):
                if dtype is not None and not ((text or a.size == 0) and _dtypes.as_dtype(dtype) is _dtypes.string):
                    raise _cannot_convert(x, dtype)
                return string_array(a.astype(object))  # strings stay on the host, as NumPy (an empty list too)
            if dtype is not None:
                # Straight to the requested dtype: 0.1 through float32 is not float64's 0.1.
                a = np.asarray(x, _dtypes.np_dtype(dtype))
            v = from_numpy(a)
    if dtype is not None:
        dt = _dtypes.np_dtype(dtype)
        if v.dtype != dt:
            if v.dtype == object or dt == object:  # NumPy would parse or format silently
                raise _cannot_convert(x.numpy() if isinstance(x, _TensorBase) else x, dt)
            v = v.astype(dt)
    return v


def _contains_tensor(x):
    if hasattr(type(x), "_value"):   # the class: asking the instance would run a pending value
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_tensor(e) for e in x)
    return False


# The NumPy methods TensorFlow's Tensor.__getattr__ points to experimental_enable_numpy_behavior for.
_NUMPY_METHODS = frozenset({"T", "astype", "ravel", "transpose", "reshape", "clip", "size", "tolist", "data"})


class _TensorBase:
    """Read-only surface shared by Tensor and Variable (both hold ``_value``)."""

    __slots__ = ()
    __array_priority__ = 100

    @property
    def _aval(self):
        """The value, or for a pending value of lazy execution (``lazy.py``) its abstract value
        (``jax.ShapeDtypeStruct``): what shape and dtype questions read, without running it."""
        return self._value

    @property
    def shape(self):
        if _static_shapes:   # a tensor of a trace on unknown sizes may have been given sizes (set_shape)
            refined = refined_shape(self)
            if refined is not None:
                return refined
        return TensorShape(self._aval.shape)

    @property
    def dtype(self):
        return _dtypes.as_dtype(self._aval.dtype)

    @property
    def ndim(self):
        return self._aval.ndim

    @property
    def device(self):
        """TensorFlow's name of the device holding the value ('/job:localhost/replica:0/task:0/device:CPU:0');
        '' while a function is traced, as for TensorFlow's symbolic tensors."""
        v = self._value
        if is_symbolic(v):
            return ""
        if isinstance(v, np.ndarray):
            # a string tensor: in host memory, named after the default device as TensorFlow does
            return _devices.device_name(_devices.default_device())
        return _devices.array_device_name(v)

    def get_shape(self):
        return self.shape

    def numpy(self):
        """The value as a numpy array (a numpy scalar for 0-d values), like TensorFlow."""
        v = self._value
        if is_symbolic(v):
            raise _no_numpy()
        for f in export_listeners:
            f(self)
        a = np.asarray(v)
        # TensorFlow's .numpy() is the caller's own writable copy (np.asarray(t) is the read-only view).
        return a[()] if a.ndim == 0 else a.copy()

    def __array__(self, dtype=None, copy=None):
        v = self._value
        if is_symbolic(v):
            raise NotImplementedError(_NUMPY_IN_TRACE.format(what="Converting to a NumPy array"))
        for f in export_listeners:
            f(self)
        a = np.asarray(v)
        if dtype is not None:
            return a.astype(dtype)
        # np.array(t) asks for a copy (NumPy 2 passes copy=True) and may write to it: the view of
        # the jax buffer is read-only.
        return a.copy() if copy else a

    def __jax_array__(self):
        return self._value

    def _concrete(self, what):
        v = self._value
        if is_symbolic(v):
            known = _state.known_value(self)
            if known is not None and known.dtype != object:
                return known     # a shape value: known while tracing, as in TensorFlow
            raise TypeError(
                f"{what} of a tensor inside a compiled tapejax.function: its value is not known "
                "while the function is traced, so Python cannot branch on it. Use tf.cond(pred, "
                "true_fn, false_fn), tf.where(cond, x, y) or tf.while_loop(cond, body, vars) "
                "instead (they map onto jax.lax), or run eagerly with "
                "tf.config.run_functions_eagerly(True).")
        return v

    def __bool__(self):
        v = self._concrete("Using the truth value")
        if v.size != 1:
            raise ValueError(f"The truth value of a tensor with shape {tuple(v.shape)} is ambiguous. "
                             "Use tf.reduce_any(x) or tf.reduce_all(x).")
        return bool(v)

    def __float__(self):
        return float(self._concrete("float()"))

    def __int__(self):
        return int(self._concrete("int()"))

    def __index__(self):
        v = self._concrete("Using as an index")
        if v.dtype.kind not in "iu":
            raise TypeError(f"Only integer tensors can be used as an index, got {v.dtype}.")
        return int(v)

    def __len__(self):
        if not self._aval.shape:
            raise TypeError("len() of a scalar tensor is undefined: it has shape ().")
        return self._aval.shape[0]

    def __iter__(self):
        if not self._aval.shape:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self._aval.shape[0]):
            yield self[i]

    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def ref(self):
        return _Ref(self)

    def _fmt(self):
        v = self._value
        if is_symbolic(v):
            return None
        return self.numpy()

    def __format__(self, spec):
        if spec and self._value.ndim == 0 and not is_symbolic(self._value):
            return format(self.numpy(), spec)
        return format(str(self), spec)


class _Ref:
    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self):
        return id(self._obj)

    def __eq__(self, other):
        return isinstance(other, _Ref) and other._obj is self._obj


# The static shapes ``set_shape`` gave tensors traced on unknown sizes (jax.export's symbolic
# dimensions: a tf.function's or a dataset function's trace), by id, with a weak reference to the
# tensor (its entry goes with it). TensorFlow's ``set_shape`` changes only the static shape: the
# value, whose sizes the program learns when it runs, is the same.
_static_shapes = {}


def refined_shape(t):
    """The static shape ``set_shape`` gave ``t`` (a tensor of a trace on unknown sizes), else None."""
    hit = _static_shapes.get(id(t))
    return hit[1] if hit is not None and hit[0]() is t else None


class Tensor(_TensorBase):
    """An immutable value: a jax array with TensorFlow's API.

    Tensors come from ops (``tf.constant``, ``x * y``, ``tf.reduce_sum``...). A tape
    identifies each by its ``_id``. ``jnp.asarray(t)`` gives the jax array (no copy);
    ``np.asarray(t)`` a numpy copy. Tensors are JAX pytrees, so they pass through
    ``jax.jit``/``jax.tree`` functions.

    Example:
        >>> import tapejax as tf
        >>> tf.constant([1.0, 2.0]) * 3
        <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 6.], dtype=float32)>
    """

    # Lazy execution (lazy.py): while the value is pending, ``_lazy`` is the pending program,
    # ``_slot`` the value's place in it and ``_v`` its abstract value (jax.ShapeDtypeStruct).
    __slots__ = ("_v", "_id", "_lazy", "_slot", "_keras_mask", "__weakref__")   # a Keras layer's output mask

    @property
    def name(self):
        """The tensor's name in the graph of the function being traced (``Greater:0``, ``x:0``);
        an eager tensor has none (AttributeError, as in TensorFlow)."""
        if is_symbolic(self._value):
            return self._traced_name()
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")

    def __getattr__(self, name):
        # Only reached for a missing attribute. Inside a traced function a tensor is a
        # TensorFlow SymbolicTensor, and TensorFlow's message names that class.
        if name == "name":   # the property's own error (Python retries a failed property here)
            raise AttributeError("Tensor.name is undefined when eager execution is enabled.")
        kind = self._tf_type_name()
        if name in _NUMPY_METHODS:   # TF's hint: NumPy's methods come with NumPy behavior
            raise AttributeError(
                f"{kind.rsplit('.', 1)[-1]} object has no attribute '{name}'. " + """
        If you are looking for numpy-related methods, please run the following:
        tf.experimental.numpy.experimental_enable_numpy_behavior()
      """)
        raise AttributeError(f"'{kind}' object has no attribute '{name}'")

    def _tf_type_name(self):
        """The class TensorFlow's messages name: its eager tensor is a C type whose name is
        ``tensorflow.python.framework.ops.EagerTensor``; a tensor of a traced function is a
        ``SymbolicTensor``."""
        try:
            symbolic = is_tracer(object.__getattribute__(self, "_v"))
        except AttributeError:
            symbolic = False
        if symbolic:
            return "SymbolicTensor"
        return "tensorflow.python.framework.ops.EagerTensor" if type(self) is Tensor else type(self).__name__

    # Tensors are immutable. TensorFlow's tensors have no ``__setitem__``: Python's TypeError
    # names their class (``tf.tensor_scatter_nd_update`` or a Variable's ``assign`` instead).
    def __setitem__(self, key, value):
        raise TypeError(f"'{self._tf_type_name()}' object does not support item assignment")

    def __delitem__(self, key):
        raise TypeError(f"'{self._tf_type_name()}' object doesn't support item deletion")

    def set_shape(self, shape):
        """Checks that ``shape`` (``None`` for unknown sizes) fits this tensor's shape, which is
        always known here, as TF's eager tensors do (a ``tf.py_function`` result in a dataset map).

        Raises:
            ValueError: TensorFlow's, when the shapes are incompatible.

        Example:
            >>> import tapejax as tf
            >>> tf.zeros([2, 3]).set_shape([None, 3])
        """
        if shape is None:
            return
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape "
                             f"{TensorShape(shape)}.")
        if None in self.shape:
            # Traced on unknown sizes: the sizes given are TF's static shape from here on.
            key = id(self)
            _static_shapes[key] = (weakref.ref(self, lambda _, key=key: _static_shapes.pop(key, None)),
                                   TensorShape([a if a is not None else b for a, b in zip(self.shape, TensorShape(shape))]))

    def __format__(self, spec):
        """As TF's eager tensors: formatted as the NumPy value (``f"{tf.size(x)}"`` is ``12``)."""
        if is_tracer(self._value):
            return format(str(self), spec)
        return format(self.numpy(), spec)

    def __init__(self, value, _id=None):
        self._v = value
        self._lazy = None
        self._id = next(_ids) if _id is None else _id

    # Tensors are immutable: a copy is the tensor itself, as TF's EagerTensor's (a copy of the
    # slots would be a pending value its program never computes); pickled as its value.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return type(self), (self._value,)

    @property
    def _value(self):
        """The jax array. A pending value of lazy execution is computed first (with everything
        pending beside it, as one compiled program): reading the value is what observes it."""
        if self._lazy is not None:
            self._lazy.run()
            if self._lazy is not None:     # never its abstract value in place of the value
                raise RuntimeError(
                    "This tensor's value was never computed: the lazily executed program that was to "
                    "compute it failed (the error it raised names the op).")
        return self._v

    @property
    def _aval(self):
        return self._v

    def __repr__(self):
        a = self._fmt()
        if a is None:  # a value being traced: TensorFlow's graph tensor repr
            return f"<tf.Tensor '{self._traced_name()}' shape={self._shown_shape()} dtype={self.dtype.name}>"
        return f"<tf.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={_np_repr(a)}>"

    def __str__(self):
        a = self._fmt()
        if a is None:
            return f'Tensor("{self._traced_name()}", shape={self._shown_shape()}, dtype={self.dtype.name})'
        return f"tf.Tensor({_np_str(a)}, shape={self.shape}, dtype={self.dtype.name})"

    def eval(self):
        return self.numpy()

    def _traced_name(self):
        return _state.traced_name(self) or "symbolic"

    def _shown_shape(self):
        v = self._value
        return TensorShape(v.spec) if type(v) is HostValue else self.shape


def _np_repr(a):
    # TensorFlow 2.21 (``numpy_text``): a scalar is shown as the Python number it converts to
    # (``repr(x.item())``: a float32 0.1 is 0.10000000149011612), a string as its bytes.
    if isinstance(a, bytes):   # as given: NumPy's fixed-width bytes would drop trailing NULs (b'\x01\x00')
        return repr(bytes(a))
    if np.ndim(a) == 0:
        x = np.asarray(a)[()]
        return repr(bytes(x) if isinstance(x, bytes) else x.item())
    return _multiline(repr(a))


def _np_str(a):
    return _multiline(str(a))


def _multiline(text):
    # TensorFlow starts a multi-line value on its own line: "numpy=\narray([[...".
    return "\n" + text if "\n" in text else text


# What ``type(t).__name__`` says in TensorFlow for an eager tensor (``tf.Tensor`` is this class
# here; ``EagerTensor`` is its name for pickling).
Tensor.__name__ = Tensor.__qualname__ = "EagerTensor"
EagerTensor = Tensor

jax.tree_util.register_pytree_node(
    Tensor, lambda t: ((t._value,), None), lambda _, children: Tensor(children[0]))
