"""tf.keras.initializers: weight initializers with Keras's names and defaults, on ``jax.nn.initializers``.

An initializer is called as ``init(shape, dtype=None)`` and returns a Tensor.
Random initializers draw their key from ``tf.random``'s global generator (so
``tf.random.set_seed`` makes them reproducible) unless given a ``seed``.
Values differ from TensorFlow's (another RNG); distributions are the same.

Example:
    >>> import tapejax as tf
    >>> tf.keras.initializers.Constant(2.0)(shape=(2,)).numpy().tolist()
    [2.0, 2.0]
    >>> tf.keras.initializers.get('glorot_uniform')
    <tapejax.keras.initializers.GlorotUniform object ...>
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from .._tensor import Tensor, to_array


def _key(seed):
    if seed is not None:
        return jax.random.key(int(seed))
    from .. import random
    return random.get_global_generator().make_key()


def _shape(shape):
    return tuple(int(d) for d in shape)


def _dtype(dtype):
    return _dtypes.np_dtype(dtype) if dtype is not None else np.dtype(np.float32)


class Initializer:
    """Base class: subclasses implement ``__call__(shape, dtype=None)``.

    Example:
        >>> import tapejax as tf
        >>> class Twos(tf.keras.initializers.Initializer):
        ...     def __call__(self, shape, dtype=None):
        ...         return tf.fill(shape, 2.0)
        >>> Twos()((2,)).numpy().tolist()
        [2.0, 2.0]
    """

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


class RandomNormal(Initializer):
    """Normal samples (Keras defaults: ``mean=0.0, stddev=0.05``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.RandomNormal(seed=1)((3, 2)).shape
        TensorShape([3, 2])
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        dt = _dtype(dtype)
        z = jax.random.normal(_key(self.seed), _shape(shape), dt)
        return Tensor((z * self.stddev + self.mean).astype(dt))

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    """Uniform samples on ``[minval, maxval)`` (Keras defaults: ``-0.05, 0.05``).

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.initializers.RandomUniform(0.0, 1.0, seed=1)((100,))
        >>> bool(tf.reduce_all(w >= 0.0))
        True
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, **kwargs):
        dt = _dtype(dtype)
        return Tensor(jax.random.uniform(_key(self.seed), _shape(shape), dt, self.minval, self.maxval))

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class TruncatedNormal(Initializer):
    """Normal samples cut at two standard deviations (Keras defaults: ``mean=0.0, stddev=0.05``).

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.initializers.TruncatedNormal(stddev=1.0, seed=0)((1000,))
        >>> bool(tf.reduce_max(tf.abs(w)) <= 2.0)
        True
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, **kwargs):
        dt = _dtype(dtype)
        z = jax.random.truncated_normal(_key(self.seed), -2.0, 2.0, _shape(shape), dt)
        return Tensor((z * self.stddev + self.mean).astype(dt))

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class VarianceScaling(Initializer):
    """Scale / fan variance scaling, Keras's fan rules (conv kernels: receptive field times channels).

    ``distribution`` is ``'truncated_normal'`` (corrected for the truncation, as in
    Keras), ``'untruncated_normal'`` or ``'uniform'``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.VarianceScaling(2.0, 'fan_in', 'uniform', seed=0)((3, 3, 1, 8)).shape
        TensorShape([3, 3, 1, 8])
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if distribution == "normal":
            distribution = "truncated_normal"
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid mode {mode!r}: use 'fan_in', 'fan_out' or 'fan_avg'.")
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"Invalid distribution {distribution!r}: use 'truncated_normal', "
                             "'untruncated_normal' or 'uniform'.")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, **kwargs):
        shape = _shape(shape)
        dt = _dtype(dtype)
        if len(shape) < 2:
            # Keras: a vector's fan_in and fan_out are both its length (1 for a scalar);
            # jax's fan rules need two axes, and "fan_out" of a (1, n) shape gives exactly that.
            n = shape[0] if shape else 1
            init = jax.nn.initializers.variance_scaling(self.scale, "fan_out", self.distribution)
            return Tensor(init(_key(self.seed), (1, n), dt).reshape(shape))
        init = jax.nn.initializers.variance_scaling(self.scale, self.mode, self.distribution,
                                                    in_axis=-2, out_axis=-1)
        return Tensor(init(_key(self.seed), shape, dt))

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed}


class GlorotUniform(VarianceScaling):
    """Uniform on ``±sqrt(6 / (fan_in + fan_out))``: Keras's default kernel initializer.

    Example:
        >>> import tapejax as tf
        >>> w = tf.keras.initializers.GlorotUniform(seed=0)((784, 10))
        >>> bool(tf.reduce_max(tf.abs(w)) <= (6 / 794) ** 0.5)
        True
    """

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotNormal(VarianceScaling):
    """Truncated normal with variance ``2 / (fan_in + fan_out)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.GlorotNormal(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeNormal(VarianceScaling):
    """Truncated normal with variance ``2 / fan_in`` (for ReLU networks).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.HeNormal(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class HeUniform(VarianceScaling):
    """Uniform on ``±sqrt(6 / fan_in)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.HeUniform(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)

    def get_config(self):
        return {"seed": self.seed}


class LecunNormal(VarianceScaling):
    """Truncated normal with variance ``1 / fan_in``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.LecunNormal(seed=0)((4, 4)).shape
        TensorShape([4, 4])
    """

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)

    def get_config(self):
        return {"seed": self.seed}


class Orthogonal(Initializer):
    """A (scaled) random orthogonal matrix, on ``jax.nn.initializers.orthogonal``.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> q = tf.keras.initializers.Orthogonal(seed=0)((3, 3)).numpy()
        >>> bool(np.allclose(q @ q.T, np.eye(3), atol=1e-5))
        True
    """

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, **kwargs):
        return Tensor(jax.nn.initializers.orthogonal(self.gain)(_key(self.seed), _shape(shape), _dtype(dtype)))

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


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
orthogonal = Orthogonal

_BY_NAME = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "random_uniform": RandomUniform, "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling, "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
    "he_normal": HeNormal, "he_uniform": HeUniform, "lecun_normal": LecunNormal, "orthogonal": Orthogonal,
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
        import re
        key = re.sub(r"(?<!^)(?=[A-Z])", "_", identifier).lower() if not identifier.islower() else identifier
        cls = _BY_NAME.get(key)
        if cls is None:
            raise ValueError(f"Unknown initializer: {identifier!r}. Use one of {sorted(_BY_NAME)} or "
                             "an initializer object such as tf.keras.initializers.Constant(0.1).")
        return cls()
    if isinstance(identifier, dict):
        return type(get(identifier["class_name"]))(**identifier.get("config", {}))
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}. Pass a name such as "
                     "'glorot_uniform', an initializer object, or a callable (shape, dtype) -> tensor.")


def serialize(initializer):
    """``{'class_name': ..., 'config': ...}`` of an initializer (``get`` reads it back).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.initializers.serialize(tf.keras.initializers.Constant(2.0))
        {'class_name': 'Constant', 'config': {'value': 2.0}}
    """
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}
