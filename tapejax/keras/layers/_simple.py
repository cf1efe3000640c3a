"""Keras 3's small layers: activations (``ELU``, ``PReLU``), shape layers (``Permute``, ``RepeatVector``,
``Identity``), 1-D / 2-D padding, cropping and upsampling, noise and spatial dropout, ``Masking``,
``UnitNormalization``, ``GroupNormalization`` and the merges ``Maximum``,
``Minimum``, ``Dot``. Values follow Keras 3 on the TensorFlow backend; the random layers draw TF's
Philox numbers from the layer's seed generator (as ``Dropout``)."""
import math

import jax.numpy as jnp
import numpy as np

from ... import ops as _ops
from ..._core import philox as _philox
from ..._core.tensor import TensorShape
from ...extend import defop
from .. import activations as _activations
from .. import constraints as _constraints
from .. import initializers as _initializers
from .. import regularizers as _regularizers
from ._base import Layer
from ._builtin import (Dropout, _GlobalPooling, _Merge, _NEXT_SEED, _POOLING_CONFIG, _add_scale_weights,
                       _channels_last, _padding, _pool_fn, _seed_generator_state, _set_scale_options)
from ._input_spec import InputSpec

_EPSILON = 1e-7   # keras.backend.epsilon()


def _l2_normalize(x, axis, epsilon):
    """Keras 3's ``ops.normalize(x, axis, order=2, epsilon)``: ``x * min(rsqrt(sum(x**2)), 1/epsilon)``."""
    inv = jnp.minimum(jnp.reciprocal(jnp.sqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))),
                      jnp.asarray(1.0 / epsilon, x.dtype))
    return x * inv


def _normal_fn(x, seed, *, mean, stddev, multiply):
    """``x + N(mean, stddev)`` or ``x * N(mean, stddev)``: TF's ``stateless_normal`` with Keras's seed."""
    seed = jnp.mod(seed, np.iinfo(np.int32).max - 1).astype(jnp.int32)
    key, counter = _philox.key_counter_from_seed(seed[0], seed[1])
    dtype = np.float32 if x.dtype == np.float64 else x.dtype
    noise = (_philox.normal(key, counter, x.shape, dtype) * jnp.asarray(stddev, dtype)
             + jnp.asarray(mean, dtype)).astype(x.dtype)
    return x * noise if multiply else x + noise


def _group_norm_fn(x, *params, groups, axis, epsilon, center, scale):
    shape = x.shape
    ndim = len(shape)
    axis = axis % ndim
    grouped_shape = shape[:axis] + (groups, shape[axis] // groups) + shape[axis + 1:]
    dtype = jnp.result_type(x.dtype, jnp.float32)
    g = x.reshape(grouped_shape).astype(dtype)
    reduce = tuple(a for a in range(1, ndim + 1) if a != axis)
    mean = jnp.mean(g, axis=reduce, keepdims=True)
    variance = jnp.mean(jnp.square(g - mean), axis=reduce, keepdims=True)
    inv = jnp.reciprocal(jnp.sqrt(variance + epsilon))
    bshape = [1] * (ndim + 1)
    bshape[axis], bshape[axis + 1] = groups, shape[axis] // groups
    it = iter(params)
    if scale:
        inv = inv * next(it).reshape(bshape).astype(dtype)
    res = -mean * inv
    if center:
        res = res + next(it).reshape(bshape).astype(dtype)
    return (g * inv + res).astype(x.dtype).reshape(shape)


def _batch_dot_fn(x, y, *, axes):
    """Keras's ``batch_dot``: contracts ``x``'s ``axes[0]`` with ``y``'s ``axes[1]`` per sample; the
    remaining axes of ``x`` then of ``y``; a 1-D result becomes ``(batch, 1)``."""
    x = jnp.moveaxis(x, axes[0], -1)
    y = jnp.moveaxis(y, axes[1], 1)
    b, k = x.shape[0], x.shape[-1]
    out = jnp.einsum("bxk,bky->bxy", x.reshape((b, -1, k)), y.reshape((b, k, -1)))
    out = out.reshape((b,) + x.shape[1:-1] + y.shape[2:])
    return out[:, None] if out.ndim == 1 else out


def _alpha_dropout_fn(x, seed, *, rate, noise_shape):
    """Keras 3's AlphaDropout: keep where ``uniform >= rate`` (TF's Philox draw), set the rest to
    SELU's negative saturation, then the affine map that keeps the mean and variance."""
    shape = tuple(x.shape[i] if d is None else d for i, d in enumerate(noise_shape)) if noise_shape else x.shape
    seed = jnp.mod(seed, np.iinfo(np.int32).max - 1).astype(jnp.int32)
    key, counter = _philox.key_counter_from_seed(seed[0], seed[1])
    kept = (_philox.uniform(key, counter, shape, np.float32) >= np.float32(rate)).astype(x.dtype)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    alpha_p = -alpha * scale
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    y = x * kept + jnp.asarray(alpha_p, x.dtype) * (1 - kept)
    return jnp.asarray(a, x.dtype) * y + jnp.asarray(b, x.dtype)


_alpha_dropout = defop(_alpha_dropout_fn, name="alpha_dropout", static=("rate", "noise_shape"))
def _rms_norm_fn(x, scale, *, axis, epsilon):
    dtype = jnp.result_type(x.dtype, jnp.float32)
    y = x.astype(dtype)
    rrms = jnp.reciprocal(jnp.sqrt(jnp.mean(jnp.square(y), axis=axis, keepdims=True) + epsilon))
    return (y * rrms * scale.astype(dtype)).astype(x.dtype)


_rms_norm = defop(_rms_norm_fn, name="rms_normalization", static=("axis", "epsilon"))
_normal_noise = defop(_normal_fn, name="gaussian_noise", static=("mean", "stddev", "multiply"))
_group_norm = defop(_group_norm_fn, name="group_normalization",
                    static=("groups", "axis", "epsilon", "center", "scale"))
_batch_dot = defop(_batch_dot_fn, name="batch_dot", static=("axes",))
_pool3d = defop(_pool_fn, name="pooling3d", static=("kind", "pool_size", "strides", "padding"))
_l2_normalize_op = defop(_l2_normalize, name="l2_normalize", static=("axis", "epsilon"))


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------

class ELU(Layer):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)`` (Keras 3's ``ELU``, ``alpha=1.0``).

    Example:
        >>> import tapejax as tf
        >>> [round(v, 4) for v in tf.keras.layers.ELU()(tf.constant([-1.0, 2.0])).numpy().tolist()]
        [-0.6321, 2.0]
    """

    supports_masking = True
    _k_config_keys = ("alpha",)

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs):
        if self.alpha == 1.0:
            return _activations.elu(inputs)
        # Keras 3 on TF: where(x > 0, x, alpha * expm1(x))
        return _ops.where(inputs > 0, inputs, self.alpha * _ops.expm1(inputs))


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, else 0: ``x * (x > theta)`` (Keras's legacy layer, ``theta=1.0``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.ThresholdedReLU(theta=0.5)(tf.constant([0.5, 0.6, 2.0])).numpy().tolist()
        [0.0, 0.6000000238418579, 2.0]
    """

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError("Theta of a Thresholded ReLU layer cannot be None, expecting a float. "
                             f"Received: {theta}")
        if theta < 0:
            raise ValueError(f"The theta value of a Thresholded ReLU layer should be >=0. Received: {theta}")
        self.theta = float(theta)

    def call(self, inputs):
        x = _ops.cast(inputs, self.compute_dtype)
        return x * _ops.cast(_ops.greater(x, _ops.cast(self.theta, x.dtype)), x.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "theta": float(self.theta)}


class PReLU(Layer):
    """Parametric ReLU: ``x`` if ``x >= 0`` else ``alpha * x``, ``alpha`` a learned weight
    (shape of the input without its batch axis, size 1 along ``shared_axes``; zeros at first).

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.25))
        >>> layer(tf.constant([[-2.0, 3.0]])).numpy().tolist()
        [[-0.5, 3.0]]
        >>> layer.alpha.shape
        TensorShape([2])
    """

    supports_masking = True
    _k_config_keys = ("alpha_initializer", "alpha_regularizer", "alpha_constraint", "shared_axes")

    def __init__(self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = _initializers.get(alpha_initializer)
        self.alpha_regularizer = _regularizers.get(alpha_regularizer)
        self.alpha_constraint = _constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        param_shape = list(input_shape[1:])
        for i in self.shared_axes or ():
            param_shape[i - 1] = 1
        self.alpha = self.add_weight(shape=param_shape, name="alpha", initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer, constraint=self.alpha_constraint)
        axes = {i: input_shape[i] for i in range(1, len(input_shape)) if i not in (self.shared_axes or ())} \
            if self.shared_axes else {}
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)
        self.built = True

    def call(self, inputs):
        pos = _activations.relu(inputs)
        return pos + (-self.alpha * _activations.relu(-inputs))


# ---------------------------------------------------------------------------
# Shape layers
# ---------------------------------------------------------------------------

class Identity(Layer):
    """Returns its input unchanged (Keras 3's ``Identity``; passes a mask on).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Identity()(tf.constant([1.0, 2.0])).numpy().tolist()
        [1.0, 2.0]
    """

    supports_masking = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape


class RepeatVector(Layer):
    """Repeats a ``(batch, features)`` input ``n`` times: ``(batch, n, features)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.RepeatVector(3)(tf.constant([[1.0, 2.0]])).numpy().tolist()
        [[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]]
    """

    _k_config_keys = ("n",)

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = n
        if not isinstance(n, int):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return _ops.repeat(_ops.expand_dims(inputs, 1), self.n, axis=1)

    def compute_output_shape(self, input_shape):
        return TensorShape([input_shape[0], self.n, input_shape[1]])


class Permute(Layer):
    """Permutes the axes of each sample: ``dims`` indexes them from 1 (the batch axis stays).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Permute((2, 1))(tf.ones([4, 10, 64])).shape
        TensorShape([4, 64, 10])
    """

    _k_config_keys = ("dims",)

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of indices in "
                             f"`dims` must be consecutive and start from 1. Received dims={dims}")
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs):
        return _ops.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape).as_list()
        return TensorShape([shape[0]] + [shape[d] for d in self.dims])


def _int_pair(value, name):
    """A ``(before, after)`` pair from an int or a pair (Keras's ``standardize_tuple`` of 2)."""
    if isinstance(value, (int, np.integer)):
        return (int(value), int(value))
    value = tuple(value)
    if len(value) != 2 or not all(isinstance(v, (int, np.integer)) for v in value):
        raise ValueError(f"The `{name}` argument must be a tuple of 2 integers. Received: {name}={value}")
    return tuple(int(v) for v in value)


class UpSampling1D(Layer):
    """Repeats each time step ``size`` times: ``(batch, steps, features) -> (batch, steps * size, features)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.UpSampling1D(2)(tf.constant([[[1.0], [2.0]]]))[0, :, 0].numpy().tolist()
        [1.0, 1.0, 2.0, 2.0]
    """

    _k_config_keys = ("size",)

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _ops.repeat(inputs, self.size, axis=1)

    def compute_output_shape(self, input_shape):
        b, n, f = TensorShape(input_shape).as_list()
        return TensorShape([b, None if n is None else n * self.size, f])


class ZeroPadding1D(Layer):
    """Pads the time axis with zeros: ``padding`` an int or ``(before, after)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.ZeroPadding1D(1)(tf.ones([1, 2, 1]))[0, :, 0].numpy().tolist()
        [0.0, 1.0, 1.0, 0.0]
    """

    _k_config_keys = ("padding", "data_format")

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.padding = _int_pair(padding, "padding")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _ops.pad(inputs, [[0, 0], list(self.padding), [0, 0]])

    def compute_output_shape(self, input_shape):
        b, n, f = TensorShape(input_shape).as_list()
        return TensorShape([b, None if n is None else n + sum(self.padding), f])


class Cropping1D(Layer):
    """Cuts ``cropping = (before, after)`` steps off the time axis (an int cuts as many each side).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Cropping1D(1)(tf.reshape(tf.range(4.0), [1, 4, 1]))[0, :, 0].numpy().tolist()
        [1.0, 2.0]
    """

    _k_config_keys = ("cropping",)

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _int_pair(cropping, "cropping")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        n = inputs.shape[1]
        if n is not None and sum(self.cropping) >= n:
            raise ValueError("`cropping` parameter of `Cropping1D` layer must be smaller than the input length. "
                             f"Received: inputs.shape={tuple(inputs.shape)}, and cropping={self.cropping}")
        return inputs[:, self.cropping[0]:n - self.cropping[1], :]

    def compute_output_shape(self, input_shape):
        b, n, f = TensorShape(input_shape).as_list()
        return TensorShape([b, None if n is None else n - sum(self.cropping), f])


class Cropping2D(Layer):
    """Cuts rows and columns off images: ``cropping`` an int, ``(rows, cols)`` (symmetric) or
    ``((top, bottom), (left, right))``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Cropping2D(cropping=((2, 2), (4, 4)))(tf.ones([2, 28, 28, 3])).shape
        TensorShape([2, 24, 20, 3])
    """

    _k_config_keys = ("cropping", "data_format")

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        if isinstance(cropping, (int, np.integer)):
            if cropping < 0:
                raise ValueError(f"`cropping` cannot be negative. Received: cropping={cropping}.")
            self.cropping = ((int(cropping),) * 2,) * 2
        elif hasattr(cropping, "__len__") and len(cropping) == 2:
            self.cropping = (_int_pair(cropping[0], "1st entry of cropping"),
                             _int_pair(cropping[1], "2nd entry of cropping"))
        else:
            raise ValueError("`cropping` should be either an int, a tuple of 2 ints (symmetric_height_crop, "
                             "symmetric_width_crop), or a tuple of 2 tuples of 2 ints ((top_crop, bottom_crop), "
                             f"(left_crop, right_crop)). Received: cropping={cropping}.")
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        (t, b), (l, r) = self.cropping
        h, w = inputs.shape[1], inputs.shape[2]
        if (h is not None and t + b >= h) or (w is not None and l + r >= w):
            raise ValueError("Values in `cropping` argument should be smaller than the corresponding spatial "
                             f"dimension of the input. Received: inputs.shape={tuple(inputs.shape)}, "
                             f"cropping={self.cropping}")
        return inputs[:, t:h - b, l:w - r, :]

    def compute_output_shape(self, input_shape):
        n, h, w, c = TensorShape(input_shape).as_list()
        (t, b), (l, r) = self.cropping
        return TensorShape([n, None if h is None else h - t - b, None if w is None else w - l - r, c])


# ---------------------------------------------------------------------------
# Noise, spatial dropout, masking, normalization, regularization
# ---------------------------------------------------------------------------

class _SeededNoise(Layer):
    supports_masking = True
    _TF_CHECKPOINT_IGNORED_PROPERTIES = frozenset({"_k_seed_state"})

    def _k_noise(self, inputs, mean, stddev, multiply):
        state = self._k_seed_state
        seed = state.read_value()
        state.assign_add(_NEXT_SEED)
        return _normal_noise(_ops.cast(inputs, self.compute_dtype), seed, mean=mean, stddev=stddev,
                             multiply=multiply)

    def compute_output_shape(self, input_shape):
        return input_shape


class GaussianNoise(_SeededNoise):
    """Adds zero-centred Gaussian noise of standard deviation ``stddev`` when training (identity
    otherwise); ``seed`` makes the noise TensorFlow's.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.GaussianNoise(0.1, seed=1)
        >>> layer(tf.ones([2])).numpy().tolist()
        [1.0, 1.0]
        >>> layer(tf.ones([1000]), training=True).numpy().std().round(1)
        np.float32(0.1)
    """

    _k_config_keys = ("stddev", "seed")

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= stddev <= 1:
            raise ValueError(f"Invalid value received for argument `stddev`. Expected a float value between 0 "
                             f"and 1. Received: stddev={stddev}")
        self.stddev = stddev
        self.seed = seed
        if stddev > 0:
            self._k_seed_state = _seed_generator_state(seed)

    def call(self, inputs, training=False):
        if training and self.stddev > 0:
            return self._k_noise(inputs, 0.0, float(self.stddev), False)
        return inputs


class GaussianDropout(_SeededNoise):
    """Multiplies by Gaussian noise of mean 1 and standard deviation ``sqrt(rate / (1 - rate))``
    when training (identity otherwise).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.GaussianDropout(0.5, seed=1)(tf.ones([2])).numpy().tolist()
        [1.0, 1.0]
    """

    _k_config_keys = ("rate", "seed")

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 "
                             f"and 1. Received: rate={rate}")
        self.rate = rate
        self.seed = seed
        if rate > 0:
            self._k_seed_state = _seed_generator_state(seed)

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            return self._k_noise(inputs, 1.0, math.sqrt(self.rate / (1.0 - self.rate)), True)
        return inputs


class _SpatialDropout(Dropout):
    _k_config_keys = ("rate", "seed")
    _k_ndim = None

    def __init__(self, rate, seed=None, name=None, dtype=None, **kwargs):
        super().__init__(rate, seed=seed, name=name, dtype=dtype, **kwargs)
        self.input_spec = InputSpec(ndim=self._k_ndim)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        self.noise_shape = (None,) + (1,) * (self._k_ndim - 2) + (None,)
        try:
            return super().call(inputs, training=training)
        finally:
            self.noise_shape = None

    def get_config(self):
        # Keras 3's BaseSpatialDropout: name, dtype, rate, seed (SpatialDropout2D/3D add data_format)
        config = super().get_config()
        config.pop("trainable", None)
        config.pop("noise_shape", None)
        if self._k_ndim > 3:
            config["data_format"] = "channels_last"
        return config


class SpatialDropout1D(_SpatialDropout):
    """Dropout of whole feature channels of ``(batch, steps, channels)`` inputs when training.

    Example:
        >>> import tapejax as tf
        >>> y = tf.keras.layers.SpatialDropout1D(0.5, seed=1)(tf.ones([1, 3, 8]), training=True)
        >>> bool((y.numpy() == y.numpy()[:, :1]).all())   # the same channels dropped at every step
        True
    """

    _k_ndim = 3


class SpatialDropout2D(_SpatialDropout):
    """Dropout of whole feature maps of ``(batch, height, width, channels)`` inputs when training.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.SpatialDropout2D(0.5)(tf.ones([1, 2, 2, 3])).shape
        TensorShape([1, 2, 2, 3])
    """

    _k_ndim = 4

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        _channels_last(data_format)
        super().__init__(rate, seed=seed, name=name, dtype=dtype)


class SpatialDropout3D(_SpatialDropout):
    """Dropout of whole feature volumes of ``(batch, depth, height, width, channels)`` inputs when training.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.SpatialDropout3D(0.5)(tf.ones([1, 2, 2, 2, 3])).shape
        TensorShape([1, 2, 2, 2, 3])
    """

    _k_ndim = 5

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        _channels_last(data_format)
        super().__init__(rate, seed=seed, name=name, dtype=dtype)


class AlphaDropout(_SeededNoise):
    """Dropout for self-normalizing (SELU) networks, when training: dropped values become SELU's
    negative saturation, then ``a * x + b`` keeps the inputs' mean and variance (Keras 3's layer).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.AlphaDropout(0.2, seed=1)(tf.ones([3])).numpy().tolist()
        [1.0, 1.0, 1.0]
    """

    _k_config_keys = ("rate", "seed")   # TF 2.21's tf.keras.layers.AlphaDropout lists no noise_shape

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 "
                             f"and 1. Received: rate={rate}")
        self.rate = rate
        self.seed = seed
        self.noise_shape = noise_shape
        if rate > 0:
            self._k_seed_state = _seed_generator_state(seed)

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            state = self._k_seed_state
            seed = state.read_value()
            state.assign_add(_NEXT_SEED)
            return _alpha_dropout(inputs, seed, rate=float(self.rate),
                                  noise_shape=None if self.noise_shape is None else tuple(self.noise_shape))
        return inputs


class Masking(Layer):
    """Masks time steps whose features all equal ``mask_value``: they are zeroed and the mask
    (``any(x != mask_value, axis=-1)``) passes to the layers that use it (RNNs, pooling).

    Example:
        >>> import tapejax as tf, numpy as np
        >>> y = tf.keras.layers.Masking()(np.array([[[1.0], [0.0], [2.0]]]))
        >>> y._keras_mask.numpy().tolist()
        [[True, False, True]]
    """

    supports_masking = True
    _k_config_keys = ("mask_value",)

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs, mask=None):
        return _ops.reduce_any(_ops.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = _ops.reduce_any(_ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return inputs * _ops.cast(keep, inputs.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape


class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm over ``axis``: ``x * min(rsqrt(sum(x**2)), 1e12)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.UnitNormalization()(tf.constant([[3.0, 4.0]])).numpy().tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """

    supports_masking = True
    _k_config_keys = ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        if not isinstance(axis, (int, list, tuple)):
            raise TypeError(f"Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                            f"Received: axis={axis}")

    def call(self, inputs):
        axis = tuple(self.axis) if isinstance(self.axis, list) else self.axis
        return _l2_normalize_op(_ops.cast(inputs, self.compute_dtype), axis=axis, epsilon=1e-12)

    def compute_output_shape(self, input_shape):
        return input_shape


class RMSNormalization(Layer):
    """Root-mean-square normalization: ``x * rsqrt(mean(x**2, axis) + epsilon) * scale``, ``scale`` a
    learned weight over ``axis`` (ones at first; Keras 3's ``RMSNormalization``, epsilon 1e-6).

    Example:
        >>> import tapejax as tf
        >>> y = tf.keras.layers.RMSNormalization()(tf.constant([[3.0, 4.0]]))
        >>> [round(v, 4) for v in y.numpy()[0].tolist()]
        [0.8485, 1.1314]
    """

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.epsilon = epsilon

    def build(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            shape = tuple(input_shape[d] for d in self.axis)
        else:
            shape = (input_shape[self.axis],)
            self.axis = [self.axis]
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")
        self.built = True

    def call(self, inputs):
        return _rms_norm(inputs, self.scale, axis=tuple(self.axis), epsilon=float(self.epsilon))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}


class GroupNormalization(Layer):
    """Normalizes the channels of ``axis`` in ``groups`` groups (mean and variance per sample and
    group), then ``gamma * x + beta`` per channel (Keras 3's ``GroupNormalization``, epsilon 1e-3).

    Example:
        >>> import tapejax as tf
        >>> y = tf.keras.layers.GroupNormalization(groups=2)(tf.constant([[1.0, 3.0, 2.0, 6.0]]))
        >>> [round(v, 4) for v in y.numpy()[0].tolist()]
        [-0.9995, 0.9995, -0.9999, 0.9999]
    """

    supports_masking = True
    _k_config_keys = ("groups", "axis", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
                      "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint")

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.groups = groups
        self.axis = axis
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = _initializers.get(beta_initializer)
        self.gamma_initializer = _initializers.get(gamma_initializer)
        _set_scale_options(self, beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape).as_list()
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels "
                             f"({dim}).")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                             f"({dim}).")
        self.input_spec = InputSpec(ndim=len(input_shape), axes={self.axis: dim})
        _add_scale_weights(self, (dim,))
        self.built = True

    def call(self, inputs):
        params = tuple(p for p in (self.gamma, self.beta) if p is not None)
        out = _group_norm(inputs, *params, groups=self.groups, axis=self.axis, epsilon=float(self.epsilon),
                          center=self.center, scale=self.scale)
        return _ops.cast(out, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape


# ---------------------------------------------------------------------------
# Merges
# ---------------------------------------------------------------------------

class Maximum(_Merge):
    """Elementwise maximum of a list of inputs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Maximum()([tf.constant([1.0, 5.0]), tf.constant([3.0, 2.0])]).numpy().tolist()
        [3.0, 5.0]
    """

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = _ops.maximum(out, x)
        return out


class Minimum(_Merge):
    """Elementwise minimum of a list of inputs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Minimum()([tf.constant([1.0, 5.0]), tf.constant([3.0, 2.0])]).numpy().tolist()
        [1.0, 2.0]
    """

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = _ops.minimum(out, x)
        return out


class Dot(_Merge):
    """Dot product of two samples along ``axes`` (Keras's ``batch_dot``); ``normalize=True`` gives
    the cosine similarity.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> x = np.arange(10).reshape(1, 5, 2)
        >>> y = np.arange(10, 20).reshape(1, 2, 5)
        >>> tf.keras.layers.Dot(axes=(1, 2))([x, y]).numpy().tolist()
        [[[260, 360], [320, 445]]]
    """

    _k_config_keys = ("axes", "normalize")

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError(f"Invalid type for argument `axes`: it should be a list or an int. Received: "
                                f"axes={axes}")
            if len(axes) != 2:
                raise ValueError(f"Invalid format for argument `axes`: it should contain two elements. Received: "
                                 f"axes={axes}")
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError(f"Invalid format for argument `axes`: list elements should be integers. "
                                 f"Received: axes={axes}")
        self.axes = axes
        self.normalize = normalize

    def _merge(self, xs):
        if len(xs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. Received: inputs={xs}")
        x1, x2 = (_ops.convert_to_tensor(x) for x in xs)
        if isinstance(self.axes, int):
            axes = [self.axes % x1.shape.rank, self.axes % x2.shape.rank] if self.axes < 0 else [self.axes] * 2
        else:
            axes = [a % x.shape.rank if a < 0 else a for a, x in zip(self.axes, (x1, x2))]
        if self.normalize:
            x1 = _l2_normalize_op(x1, axis=axes[0], epsilon=_EPSILON)
            x2 = _l2_normalize_op(x2, axis=axes[1], epsilon=_EPSILON)
        return _batch_dot(x1, x2, axes=tuple(axes))


def maximum(inputs, **kwargs):
    """Keras's functional form of :class:`Maximum`: ``Maximum(**kwargs)(inputs)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.maximum([tf.constant([1.0]), tf.constant([2.0])]).numpy().tolist()
        [2.0]
    """
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """Keras's functional form of :class:`Minimum`: ``Minimum(**kwargs)(inputs)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.minimum([tf.constant([1.0]), tf.constant([2.0])]).numpy().tolist()
        [1.0]
    """
    return Minimum(**kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """Keras's functional form of :class:`Dot`: ``Dot(axes, **kwargs)(inputs)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.dot([tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])], axes=1).numpy().tolist()
        [[11.0]]
    """
    return Dot(axes=axes, **kwargs)(inputs)


# ---------------------------------------------------------------------------
# 3-D pooling, upsampling, padding and cropping (NDHWC)
# ---------------------------------------------------------------------------

def _triple(v, what):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * 3
    v = tuple(int(e) for e in v)
    if len(v) != 3:
        raise ValueError(f"The `{what}` argument must be a tuple of 3 integers. Received: {what}={v}")
    return v


class _Pooling3D(Layer):
    _kind = None
    _k_config_keys = _POOLING_CONFIG

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.pool_size = _triple(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _triple(strides, "strides")
        self._k_padding, self.padding = _padding(padding)
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        return _pool3d(inputs, kind=self._kind, pool_size=self.pool_size, strides=self.strides,
                       padding=self._k_padding)


class MaxPooling3D(_Pooling3D):
    """Max over ``pool_size`` windows of ``(N, D, H, W, C)`` volumes; strides default to the pool size.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.MaxPooling3D()(tf.ones([1, 4, 4, 4, 3])).shape
        TensorShape([1, 2, 2, 2, 3])
    """

    _kind = "max"


class AveragePooling3D(_Pooling3D):
    """Mean over ``pool_size`` windows of ``(N, D, H, W, C)`` volumes (padding excluded, as Keras).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.AveragePooling3D(2)(tf.ones([1, 4, 4, 4, 1])).shape
        TensorShape([1, 2, 2, 2, 1])
    """

    _kind = "avg"


class GlobalAveragePooling3D(_GlobalPooling):
    """Mean over depth, height and width: ``(N, D, H, W, C) -> (N, C)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.GlobalAveragePooling3D()(tf.ones([2, 3, 4, 5, 6])).shape
        TensorShape([2, 6])
    """

    _kind, _axes = "avg", (1, 2, 3)


class GlobalMaxPooling3D(_GlobalPooling):
    """Max over depth, height and width: ``(N, D, H, W, C) -> (N, C)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.GlobalMaxPooling3D()(tf.ones([2, 3, 4, 5, 6])).shape
        TensorShape([2, 6])
    """

    _kind, _axes = "max", (1, 2, 3)


class UpSampling3D(Layer):
    """Repeats depth, height and width ``size`` times: ``(N, D, H, W, C) -> (N, D*s0, H*s1, W*s2, C)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.UpSampling3D(2)(tf.ones([1, 1, 2, 3, 1])).shape
        TensorShape([1, 2, 4, 6, 1])
    """

    _k_config_keys = ("size", "data_format")

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.size = _triple(size, "size")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        x = inputs
        for axis, n in zip((1, 2, 3), self.size):
            x = _ops.repeat(x, n, axis=axis)
        return x


def _pairs3(value, what):
    if isinstance(value, (int, np.integer)):
        return ((int(value),) * 2,) * 3
    if len(value) != 3:
        raise ValueError(f"`{what}` should have 3 elements. Received: {what}={value}.")
    return tuple(_int_pair(v, f"{what} entry") for v in value)


class ZeroPadding3D(Layer):
    """Pads depth, height and width with zeros: ``padding`` an int, 3 ints, or 3 ``(before, after)`` pairs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.ZeroPadding3D(1)(tf.ones([1, 1, 2, 3, 1])).shape
        TensorShape([1, 3, 4, 5, 1])
    """

    _k_config_keys = ("padding", "data_format")

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.padding = _pairs3(padding, "padding")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        return _ops.pad(inputs, [[0, 0]] + [list(p) for p in self.padding] + [[0, 0]])


class Cropping3D(Layer):
    """Cuts depth, height and width: ``cropping`` an int, 3 ints, or 3 ``(before, after)`` pairs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Cropping3D(1)(tf.ones([1, 3, 4, 5, 1])).shape
        TensorShape([1, 1, 2, 3, 1])
    """

    _k_config_keys = ("cropping", "data_format")

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.cropping = _pairs3(cropping, "cropping")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        sizes = inputs.shape[1:4]
        for n, (a, b) in zip(sizes, self.cropping):
            if n is not None and a + b >= n:
                raise ValueError("Values in `cropping` argument should be smaller than the corresponding spatial "
                                 f"dimension of the input. Received: inputs.shape={tuple(inputs.shape)}, "
                                 f"cropping={self.cropping}")
        (d0, d1), (h0, h1), (w0, w1) = self.cropping
        d, h, w = sizes
        return inputs[:, d0:d - d1, h0:h - h1, w0:w - w1, :]
