"""tf.keras.initializers: weight initializers with Keras's names and defaults, on ``jax.nn.initializers``.

An initializer is called as ``init(shape, dtype=None)`` and returns a Tensor.
Random initializers draw TensorFlow's numbers as Keras 3 does with the TensorFlow
backend: a seeded one draws ``tf.random.stateless_*`` with seed ``[seed, 0]`` (the
same numbers on every call); an unseeded one takes its seed from Python's
``random`` when it is made, so ``tf.keras.utils.set_random_seed(n)`` reproduces
TensorFlow's weights.

Example:
    >>> import tapejax as tf
    >>> tf.keras.initializers.Constant(2.0)(shape=(2,)).numpy().tolist()
    [2.0, 2.0]
    >>> tf.keras.initializers.get('glorot_uniform')
    <keras.src.initializers.random_initializers.GlorotUniform object ...>
"""
import math
import random as _pyrandom
import re

import jax
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .. import random as random
from .._core.tensor import Tensor, to_array
from ._repr import KerasObjectRepr as _KerasObjectRepr
from . import _serialization


def _key(seed):
    """A jax key for flax modules: from ``seed``, else from tf.random's global generator."""
    if seed is not None:
        return jax.random.key(int(seed))
    return random.get_global_generator().make_key()


def _shape(shape):
    return tuple(int(d) for d in shape)


def _dtype(dtype):
    return _dtypes.np_dtype(dtype) if dtype is not None else np.dtype(np.float32)


_KERAS_MODULES = {
    **{name: "keras.src.initializers.constant_initializers" for name in ("Constant", "Zeros", "Ones")},
    **{name: "keras.src.initializers.random_initializers" for name in (
        "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling", "GlorotNormal", "GlorotUniform",
        "HeNormal", "HeUniform", "LecunNormal", "LecunUniform", "Orthogonal")},
    "Initializer": "keras.src.initializers.initializer"}


class Initializer(_KerasObjectRepr):
    """Base class: subclasses implement ``__call__(shape, dtype=None)``.

    Example:
        >>> import tapejax as tf
        >>> class Twos(tf.keras.initializers.Initializer):
        ...     def __call__(self, shape, dtype=None):
        ...         return tf.fill(shape, 2.0)
        >>> Twos()((2,)).numpy().tolist()
        [2.0, 2.0]
    """

    _keras_modules = _KERAS_MODULES
    _keras_public_module = "keras.initializers"   # where serialize_keras_object names it

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(self, shape, dtype=None).")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    """All zeros (Keras's default bias initializer).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.Zeros()((2,)).numpy().tolist()
        [0.0, 0.0]
    """

    def __call__(self, shape, dtype=None, **kwargs):
        return Tensor(jnp.zeros(_shape(shape), _dtype(dtype)))


class Ones(Initializer):
    """All ones.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.Ones()((2,)).numpy().tolist()
        [1.0, 1.0]
    """

    def __call__(self, shape, dtype=None, **kwargs):
        return Tensor(jnp.ones(_shape(shape), _dtype(dtype)))


class Constant(Initializer):
    """A constant: a scalar broadcast to the shape, or an array of exactly that shape.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> tf.keras.initializers.Constant(np.eye(2))((2, 2)).numpy().tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """

    def __init__(self, value=0):
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs):
        shape = _shape(shape)
        v = np.asarray(to_array(self.value), dtype=_dtype(dtype))
        if v.size == 1:
            return Tensor(jnp.full(shape, v.reshape(()), v.dtype))
        if v.size != int(np.prod(shape, dtype=np.int64)):
            raise TypeError(
                f"Constant initializer: the value has shape {v.shape} ({v.size} elements) but the weight "
                f"has shape {shape}. Pass a scalar or an array with {int(np.prod(shape))} elements, "
                f"e.g. tf.keras.initializers.Constant(np.zeros({shape})).")
        return Tensor(jnp.asarray(v.reshape(shape)))

    def get_config(self):
        return {"value": self.value}


class _RandomInitializer(Initializer):
    """Keras 3's seeding: ``seed=None`` takes ``random.randint(1, 10**9)`` from Python's ``random``
    when the initializer is made (so ``tf.keras.utils.set_random_seed`` fixes it), and an int seed
    draws the same numbers on every call."""

    def __init__(self, seed=None):
        self._init_seed = seed
        if seed is None:
            seed = _pyrandom.randint(1, int(1e9))
        elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"`seed` argument should be an integer, got seed={seed!r}: "
                             "e.g. tf.keras.initializers.GlorotUniform(seed=0).")
        self.seed = int(seed)

    def _seed(self):
        # Keras's TF backend: seed state [seed, 0] as int64, floormod 2**31 - 2 into int32.
        return [self.seed % (2 ** 31 - 2), 0]

    def _normal(self, shape, mean, stddev, dtype):
        return random.stateless_normal(shape, self._seed(), mean, stddev, dtype)

    def _truncated_normal(self, shape, mean, stddev, dtype):
        return random.stateless_truncated_normal(shape, self._seed(), mean, stddev, dtype)

    def _uniform(self, shape, minval, maxval, dtype):
        return random.stateless_uniform(shape, self._seed(), minval, maxval, dtype)

    def get_config(self):
        return {"seed": self._init_seed}


class RandomNormal(_RandomInitializer):
    """Normal samples (Keras defaults: ``mean=0.0, stddev=0.05``), TensorFlow's numbers for a seed.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.RandomNormal(stddev=1.0, seed=1)((3,)).numpy()
        array([ 0.1266503 , -0.49301657,  0.6311907 ], dtype=float32)
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        return self._normal(_shape(shape), self.mean, self.stddev, _dtype(dtype))

    def get_config(self):
        return {"seed": self._init_seed, "mean": self.mean, "stddev": self.stddev}


class RandomUniform(_RandomInitializer):
    """Uniform samples on ``[minval, maxval)`` (Keras defaults: ``-0.05, 0.05``).

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.initializers.RandomUniform(0.0, 1.0, seed=1)((100,))
        >>> bool(tf.reduce_all(w >= 0.0))
        True
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval = minval, maxval
        super().__init__(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        return self._uniform(_shape(shape), self.minval, self.maxval, _dtype(dtype))

    def get_config(self):
        return {"seed": self._init_seed, "minval": self.minval, "maxval": self.maxval}


class TruncatedNormal(_RandomInitializer):
    """Normal samples cut at two standard deviations (Keras defaults: ``mean=0.0, stddev=0.05``).

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.initializers.TruncatedNormal(stddev=1.0, seed=0)((1000,))
        >>> bool(tf.reduce_max(tf.abs(w)) <= 2.0)
        True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        return self._truncated_normal(_shape(shape), self.mean, self.stddev, _dtype(dtype))

    def get_config(self):
        return {"seed": self._init_seed, "mean": self.mean, "stddev": self.stddev}


def _fans(shape, input_axes=None, output_axes=None):
    """Keras's ``compute_fans``: conv kernels count the receptive field in both fans; with
    ``input_axes`` and ``output_axes``, the products of the sizes of those axes."""
    if input_axes is not None and output_axes is not None:
        return math.prod(shape[a] for a in input_axes), math.prod(shape[a] for a in output_axes)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(_RandomInitializer):
    """Scale / fan variance scaling, Keras's fan rules (conv kernels: receptive field times channels).

    ``distribution`` is ``'truncated_normal'`` (corrected for the truncation, as in
    Keras), ``'untruncated_normal'`` or ``'uniform'``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.VarianceScaling(2.0, 'fan_in', 'uniform', seed=0)((3, 3, 1, 8)).shape
        TensorShape([3, 3, 1, 8])
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, input_axes=None,
                 output_axes=None):
        if distribution == "normal":
            distribution = "truncated_normal"
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid mode {mode!r}: use 'fan_in', 'fan_out' or 'fan_avg'.")
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"Invalid distribution {distribution!r}: use 'truncated_normal', "
                             "'untruncated_normal' or 'uniform'.")
        if scale <= 0.0:
            raise ValueError(f"scale must be positive, got scale={scale}.")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.input_axes, self.output_axes = input_axes, output_axes
        super().__init__(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        shape, dt = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _fans(shape, self.input_axes, self.output_axes)
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale /= max(1.0, fan_out)
        else:
            scale /= max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution == "truncated_normal":
            # The standard deviation of a unit normal truncated to (-2, 2).
            return self._truncated_normal(shape, 0.0, math.sqrt(scale) / 0.87962566103423978, dt)
        if self.distribution == "untruncated_normal":
            return self._normal(shape, 0.0, math.sqrt(scale), dt)
        limit = math.sqrt(3.0 * scale)
        return self._uniform(shape, -limit, limit, dt)

    def get_config(self):
        return {"seed": self._init_seed, "scale": self.scale, "mode": self.mode,
                "distribution": self.distribution, "input_axes": self.input_axes, "output_axes": self.output_axes}


class GlorotUniform(VarianceScaling):
    """Uniform on ``±sqrt(6 / (fan_in + fan_out))``: Keras's default kernel initializer.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.GlorotUniform(seed=0)((2, 2)).numpy()
        array([[-0.7078647 ,  0.50461936],
               [ 0.73500216,  0.6633029 ]], dtype=float32)
    """

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_avg", "uniform", seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class GlorotNormal(VarianceScaling):
    """Truncated normal with variance ``2 / (fan_in + fan_out)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.GlorotNormal(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class HeNormal(VarianceScaling):
    """Truncated normal with variance ``2 / fan_in`` (for ReLU networks).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.HeNormal(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class HeUniform(VarianceScaling):
    """Uniform on ``±sqrt(6 / fan_in)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.HeUniform(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(2.0, "fan_in", "uniform", seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class LecunNormal(VarianceScaling):
    """Truncated normal with variance ``1 / fan_in``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.LecunNormal(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class LecunUniform(VarianceScaling):
    """Uniform on ``±sqrt(3 / fan_in)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.LecunUniform(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(1.0, "fan_in", "uniform", seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self._init_seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class Orthogonal(_RandomInitializer):
    """A (scaled) random orthogonal matrix: Keras's QR of a seeded normal matrix, signs fixed by R.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> q = tf.keras.initializers.Orthogonal(seed=0)((3, 3)).numpy()
        >>> bool(np.allclose(q @ q.T, np.eye(3), atol=1e-5))
        True
    """

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        super().__init__(seed)

    def __call__(self, shape, dtype=None, **kwargs):
        shape, dt = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"The Orthogonal initializer needs a shape of rank >= 2, got {shape}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        a = to_array(self._normal((max(rows, cols), min(rows, cols)), 0.0, 1.0, dt))
        q, r = jnp.linalg.qr(a)
        q = q * jnp.sign(jnp.diag(r))
        if rows < cols:
            q = q.T
        return Tensor((self.gain * q.reshape(shape)).astype(dt))

    def get_config(self):
        return {"seed": self._init_seed, "gain": self.gain}


# Keras's snake-case aliases (both the class and the function spellings).
zeros = Zeros
ones = Ones
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
he_normal = HeNormal
he_uniform = HeUniform
lecun_normal = LecunNormal
lecun_uniform = LecunUniform
orthogonal = Orthogonal

_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling, "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
    "he_normal": HeNormal, "he_uniform": HeUniform, "lecun_normal": LecunNormal,
    "lecun_uniform": LecunUniform, "orthogonal": Orthogonal,
    # Keras 3's short aliases (TF's RNN guide builds a cell with initializer='uniform')
    "uniform": RandomUniform, "normal": RandomNormal, "one": Ones, "zero": Zeros,
}


def get(identifier):
    """An initializer from a name (``'glorot_uniform'``, ``'GlorotUniform'``), an object or a callable.

    Raises:
        ValueError: an unknown name.

    Example:
        >>> import tapejax as tf
        >>> type(tf.keras.initializers.get('he_normal')).__name__
        'HeNormal'
    """
    if identifier is None:
        return None
    if isinstance(identifier, str):
        key = re.sub(r"(?<!^)(?=[A-Z])", "_", identifier).lower() if not identifier.islower() else identifier
        cls = _BY_NAME.get(key)
        if cls is None:
            raise ValueError(f"Unknown initializer: {identifier!r}. Use one of {sorted(_BY_NAME)} or "
                             "an initializer object such as tf.keras.initializers.Constant(0.1).")
        return cls()
    if isinstance(identifier, dict):   # a configuration: Keras 3's (serialize) or Keras 2's
        return _serialization.get(identifier, _classes(), "keras.initializers", "initializer")
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}. Pass a name such as "
                     "'glorot_uniform', an initializer object, or a callable (shape, dtype) -> tensor.")


def _classes():
    """The initializer classes by class name (what a configuration's ``class_name`` names)."""
    return {name: obj for name, obj in globals().items()
            if isinstance(obj, type) and issubclass(obj, Initializer) and not name.startswith("_")}


def serialize(initializer):
    """Keras 3's configuration of an initializer (``serialize_keras_object``; ``get`` reads it back).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.serialize(tf.keras.initializers.Constant(2.0))
        {'module': 'keras.initializers', 'class_name': 'Constant', 'config': {'value': 2.0}, 'registered_name': None}
    """
    return _serialization.serialize_keras_object(initializer)


def deserialize(config, custom_objects=None):
    """The initializer a configuration describes (Keras 3's ``keras.initializers.deserialize``).

    Example:
        >>> import tapejax as tf
        >>> init = tf.keras.initializers.deserialize(tf.keras.initializers.serialize(tf.keras.initializers.Ones()))
        >>> type(init).__name__
        'Ones'
    """
    return _serialization.deserialize_keras_object(config, custom_objects) if custom_objects else get(config)
