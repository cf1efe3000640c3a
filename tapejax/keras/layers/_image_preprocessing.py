"""Keras 3's image preprocessing (data augmentation) layers: ``RandomFlip``, ``RandomRotation``,
``RandomZoom``, ``RandomTranslation``, ``RandomContrast``, ``RandomCrop``, ``CenterCrop``, ``Resizing``.

They draw as Keras 3 does on the TensorFlow backend: each layer owns a seed generator (a
``[seed, counter]`` state, ``seed`` given or drawn from Python's ``random``), each draw takes the
next pair for TF's Philox ``stateless_uniform``, so a seeded layer gives TF 2.21's numbers. A call
is one tape op. As in Keras 3, ``call``'s ``training`` defaults to True: a layer called directly
(or in a model called directly) augments; ``training=False`` (``predict``, ``evaluate``) gives the
input (cast to the layer's float dtype). The rotations, zooms and translations are TF's
``ImageProjectiveTransformV3`` (bilinear or nearest interpolation; reflect, wrap, constant or
nearest fill), written here in JAX.
"""
import jax
import jax.numpy as jnp
import numpy as np

from ... import image as _image
from ... import ops as _ops
from ..._core import philox as _philox
from ..._core.tensor import TensorShape
from ...extend import defop
from ._base import Layer
from ._builtin import _NEXT_SEED, _channels_last, _seed_generator_state

_INT32_MAX_MINUS_1 = np.iinfo(np.int32).max - 1
_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")


def _uniform(seed, shape, minval, maxval, offset=0):
    """Keras 3's ``random.uniform`` on TF: ``stateless_uniform(shape, seed)`` (float32) with the
    seed generator's state ``seed`` advanced ``offset`` draws."""
    seed = jnp.mod(seed + jnp.array([0, offset], seed.dtype), _INT32_MAX_MINUS_1).astype(jnp.int32)
    key, counter = _philox.key_counter_from_seed(seed[0], seed[1])
    u = _philox.uniform(key, counter, shape, np.float32)
    return u * (jnp.float32(maxval) - jnp.float32(minval)) + jnp.float32(minval)


# ---------------------------------------------------------------------------
# TF's ImageProjectiveTransformV3
# ---------------------------------------------------------------------------

def _map_coordinate(c, n, fill_mode):
    """TF's ``MapCoordinate`` of one axis of length ``n`` (float32 coordinates)."""
    n_f = jnp.float32(n)
    if fill_mode == "reflect":
        if n <= 1:
            return jnp.zeros_like(c)
        sz2 = jnp.float32(2 * n)
        neg = c < 0
        lo = jnp.where(c < sz2, sz2 * jnp.trunc(-c / sz2) + c, c)
        lo = jnp.where(lo < -n_f, lo + sz2, -lo - 1)
        hi = c - sz2 * jnp.trunc(c / sz2)
        hi = jnp.where(hi >= n_f, sz2 - hi - 1, hi)
        out = jnp.where(neg, lo, jnp.where(c > n_f - 1, hi, c))
        return jnp.clip(out, 0.0, n_f - 1)
    if fill_mode == "wrap":
        if n <= 1:
            return jnp.zeros_like(c)
        sz = jnp.float32(n - 1)
        lo = c + n_f * (jnp.trunc(-c / sz) + 1)
        hi = c - n_f * jnp.trunc(c / sz)
        out = jnp.where(c < 0, lo, jnp.where(c > n_f - 1, hi, c))
        return jnp.clip(out, 0.0, n_f - 1)
    if fill_mode == "nearest":
        return jnp.clip(c, 0.0, n_f - 1)
    return c   # constant: out-of-range reads give fill_value


def _projective_transform_fn(images, transforms, *, interpolation, fill_mode, fill_value):
    """``images`` NHWC, ``transforms`` ``(batch, 8)`` float32: output pixel ``(y, x)`` reads the input
    at ``((a0 x + a1 y + a2) / k, (a3 x + a4 y + a5) / k)``, ``k = a6 x + a7 y + 1``."""
    _, h, w, _ = images.shape
    ys, xs = jnp.meshgrid(jnp.arange(h, dtype=jnp.float32), jnp.arange(w, dtype=jnp.float32), indexing="ij")

    def one(image, t):
        k = t[6] * xs + t[7] * ys + 1.0
        in_x = (t[0] * xs + t[1] * ys + t[2]) / k
        in_y = (t[3] * xs + t[4] * ys + t[5]) / k
        x = _map_coordinate(in_x, w, fill_mode)
        y = _map_coordinate(in_y, h, fill_mode)
        fill = jnp.asarray(fill_value, jnp.float32)

        def read(yi, xi):
            inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            v = image[jnp.clip(yi, 0, h - 1), jnp.clip(xi, 0, w - 1)].astype(jnp.float32)
            return jnp.where(inside[..., None], v, fill)

        if interpolation == "nearest":
            # std::round: halves away from zero
            out = read(jnp.trunc(y + jnp.copysign(0.5, y)).astype(jnp.int32),
                       jnp.trunc(x + jnp.copysign(0.5, x)).astype(jnp.int32))
        else:
            y0, x0 = jnp.floor(y), jnp.floor(x)
            y1, x1 = y0 + 1, x0 + 1
            iy0, ix0, iy1, ix1 = (v.astype(jnp.int32) for v in (y0, x0, y1, x1))
            top = (x1 - x)[..., None] * read(iy0, ix0) + (x - x0)[..., None] * read(iy0, ix1)
            bottom = (x1 - x)[..., None] * read(iy1, ix0) + (x - x0)[..., None] * read(iy1, ix1)
            out = (y1 - y)[..., None] * top + (y - y0)[..., None] * bottom
        return jnp.where((k == 0)[..., None], fill, out)

    out = jax.vmap(one)(images, transforms.astype(jnp.float32))
    return out.astype(images.dtype)


def _batched(fn):
    """Runs ``fn`` on a batch: an unbatched (3-D) image gets a batch axis of one and loses it after."""
    def wrapped(x, *args, **kwargs):
        if x.ndim == 3:
            return fn(x[None], *args, **kwargs)[0]
        return fn(x, *args, **kwargs)
    return wrapped


def _affine_matrix(angle, height, width):
    """Keras 3's ``_compute_affine_matrix`` for a rotation by ``angle`` degrees about the centre."""
    angle = angle * jnp.float32(np.pi / 180.0)
    cx, cy = 0.5 * (jnp.float32(width) - 1), 0.5 * (jnp.float32(height) - 1)
    cos, sin = jnp.cos(angle), jnp.sin(angle)
    zero = jnp.zeros_like(angle)
    a0, a1 = cos + zero * sin, -sin + zero * cos
    b0, b1 = zero * cos + sin, zero * -sin + cos
    a2 = zero + cx - cx * a0 - cy * a1
    b2 = zero + cy - cx * b0 - cy * b1
    return jnp.stack([a0, a1, a2, b0, b1, b2, zero, zero], axis=1)


@_batched
def _rotate_fn(x, seed, *, lower, upper, interpolation, fill_mode, fill_value):
    n, h, w, _ = x.shape
    angle = _uniform(seed, (n,), lower * 360.0, upper * 360.0)
    return _projective_transform_fn(x, _affine_matrix(angle, h, w), interpolation=interpolation,
                                    fill_mode=fill_mode, fill_value=fill_value)


@_batched
def _zoom_fn(x, seed, *, height, width, interpolation, fill_mode, fill_value):
    n, h, w, _ = x.shape
    zh = _uniform(seed, (n, 1), 1.0 + height[0], 1.0 + height[1])
    zw = zh if width is None else _uniform(seed, (n, 1), 1.0 + width[0], 1.0 + width[1], offset=1)
    x_off = ((jnp.float32(w) - 1.0) / 2.0) * (1.0 - zw)
    y_off = ((jnp.float32(h) - 1.0) / 2.0) * (1.0 - zh)
    zeros = jnp.zeros((n, 1), jnp.float32)
    t = jnp.concatenate([zw, zeros, x_off, zeros, zh, y_off, zeros, zeros], axis=1)
    return _projective_transform_fn(x, t, interpolation=interpolation, fill_mode=fill_mode, fill_value=fill_value)


@_batched
def _translate_fn(x, seed, *, height, width, interpolation, fill_mode, fill_value):
    n, h, w, _ = x.shape
    dy = _uniform(seed, (n, 1), height[0], height[1]) * jnp.float32(h)
    dx = _uniform(seed, (n, 1), width[0], width[1], offset=1) * jnp.float32(w)
    ones, zeros = jnp.ones((n, 1), jnp.float32), jnp.zeros((n, 1), jnp.float32)
    t = jnp.concatenate([ones, zeros, -dx, zeros, ones, -dy, zeros, zeros], axis=1)
    return _projective_transform_fn(x, t, interpolation=interpolation, fill_mode=fill_mode, fill_value=fill_value)


def _flip_fn(x, seed, *, mode):
    batched = x if x.ndim == 4 else x[None]
    flips = _uniform(seed, (batched.shape[0], 1, 1, 1), 0.0, 1.0) <= 0.5
    out = batched
    if mode in ("horizontal", "horizontal_and_vertical"):
        out = jnp.where(flips, jnp.flip(out, axis=-2), out)
    if mode in ("vertical", "horizontal_and_vertical"):
        out = jnp.where(flips, jnp.flip(out, axis=-3), out)
    return out if x.ndim == 4 else out[0]


def _contrast_fn(x, seed, *, lower, upper, value_range):
    shape = (1, 1, 1) if x.ndim == 3 else (x.shape[0], 1, 1, 1)
    factor = _uniform(seed, shape, 1.0 - lower, 1.0 + upper).astype(x.dtype)
    mean = jnp.mean(jnp.mean(x, axis=-3, keepdims=True), axis=-2, keepdims=True)
    out = (x - mean) * factor + mean
    return jnp.clip(out, value_range[0], value_range[1]).astype(out.dtype)


def _crop_starts_fn(seed, *, h_range, w_range):
    h = _uniform(seed, (), 0.0, h_range).astype(jnp.int32)
    w = _uniform(seed, (), 0.0, w_range, offset=1).astype(jnp.int32)
    return jnp.stack([h, w])


def _dynamic_crop_fn(x, starts, *, height, width):
    sizes = x.shape[:-3] + (height, width, x.shape[-1])
    starts = starts.astype(jnp.int32)
    zero = jnp.zeros((), jnp.int32)
    begin = (zero,) * (x.ndim - 3) + (starts[0], starts[1], zero)
    return jax.lax.dynamic_slice(x, begin, sizes)


def _brightness_fn(x, seed, *, lower, upper, value_range):
    shape = (1, 1, 1) if x.ndim == 3 else (x.shape[0], 1, 1, 1)
    delta = _uniform(seed, shape, lower, upper) * jnp.float32(value_range[1] - value_range[0])
    return jnp.clip(x + delta.astype(x.dtype), value_range[0], value_range[1]).astype(x.dtype)


_brightness = defop(_brightness_fn, name="random_brightness", static=("lower", "upper", "value_range"))
_rotate = defop(_rotate_fn, name="random_rotation",
                static=("lower", "upper", "interpolation", "fill_mode", "fill_value"))
_zoom = defop(_zoom_fn, name="random_zoom", static=("height", "width", "interpolation", "fill_mode", "fill_value"))
_translate = defop(_translate_fn, name="random_translation",
                   static=("height", "width", "interpolation", "fill_mode", "fill_value"))
_flip = defop(_flip_fn, name="random_flip", static=("mode",))
_contrast = defop(_contrast_fn, name="random_contrast", static=("lower", "upper", "value_range"))
_crop_starts = defop(_crop_starts_fn, name="random_crop_starts", static=("h_range", "w_range"))
_dynamic_crop = defop(_dynamic_crop_fn, name="random_crop", static=("height", "width"))


# ---------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------

def _check_rank(x):
    if x.shape.rank not in (3, 4):
        raise ValueError("Expected image tensor to have rank 3 (single image) or 4 (batch of images). "
                         f"Received: data.shape={tuple(x.shape)}")


class _ImagePreprocessingLayer(Layer):
    """Keras 3's ``BaseImagePreprocessingLayer``: channels-last images, 3-D or 4-D; a seed generator
    for the random layers; ``training`` defaults to True."""

    _allow_non_tensor_positional_args = True   # a Keras 3 DataLayer: takes lists and arrays
    # Keras 3 saves no SeedGenerator state (weights files, tf.train.Checkpoint).
    _TF_CHECKPOINT_IGNORED_PROPERTIES = frozenset({"_k_seed_state"})
    _k_random = True

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        if self._k_random:
            self.seed = seed
            self._k_seed_state = _seed_generator_state(seed)

    def _k_next_seed(self, draws=1):
        """The seed generator's state, advanced by ``draws`` draws (Keras's ``SeedGenerator.next``)."""
        state = self._k_seed_state
        seed = state.read_value()
        state.assign_add(_NEXT_SEED * draws)
        return seed

    def _k_images(self, inputs):
        x = _ops.convert_to_tensor(inputs)
        _check_rank(x)
        return _ops.cast(x, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        config = super().get_config()
        config["data_format"] = self.data_format
        if self._k_random:
            config["seed"] = self.seed
        return config


def _factor_pair(factor, bounds, name="factor"):
    """Keras 3's ``_set_factor``: a number ``f`` gives ``(max(-f, lower bound), f)``, a pair is sorted."""
    message = ("The `factor` argument should be a number (or a list of two numbers) in the range "
               f"[{bounds[0]}, {bounds[1]}]. Received: factor={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(message)
        factor = abs(factor)
        return (max(-factor, bounds[0]), factor)   # Keras keeps the numbers' types: (0, 0.3)
    raise ValueError(message)


_HW_FACTOR_ERROR = ("The `{name}` argument should be a number (or a list of two numbers) in the range "
                    "[-1.0, 1.0]. ")


def _hw_factor(factor, name, open_low):
    """RandomZoom's / RandomTranslation's height and width factors: ``f -> (-|f|, |f|)``."""
    def check(v):
        if v > 1.0 or (v <= -1.0 if open_low else v < -1.0):
            raise ValueError(_HW_FACTOR_ERROR.format(name=name) + f"Received: input_number={v}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(_HW_FACTOR_ERROR.format(name=name) + f"Received: {name}={factor}")
        check(factor[0])
        check(factor[1])
        return tuple(float(f) for f in sorted(factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        check(factor)
        factor = abs(factor)
        return (-float(factor), float(factor))
    raise ValueError(_HW_FACTOR_ERROR.format(name=name) + f"Received: {name}={factor}")


def _check_fill(fill_mode, interpolation):
    if fill_mode not in _FILL_MODES:
        raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one {_FILL_MODES}.")
    if interpolation not in _INTERPOLATIONS:
        raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one {_INTERPOLATIONS}.")


class RandomFlip(_ImagePreprocessingLayer):
    """Randomly flips images left-right and/or top-bottom when training (Keras 3's ``RandomFlip``).

    Each image of the batch is flipped with probability 1/2 (in ``"horizontal_and_vertical"`` mode
    one draw flips both ways). With ``training=False`` the images pass unchanged. The output has
    the layer's dtype (float32).

    Args:
        mode: ``"horizontal"``, ``"vertical"`` or ``"horizontal_and_vertical"`` (default).
        seed: an int, for reproducible flips.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> x = np.arange(4.0).reshape(1, 2, 2, 1)
        >>> flip = tf.keras.layers.RandomFlip("horizontal", seed=3)
        >>> flip(x, training=False)[0, ..., 0].numpy().tolist()
        [[0.0, 1.0], [2.0, 3.0]]
        >>> flip(x)[0, ..., 0].numpy().tolist()
        [[1.0, 0.0], [3.0, 2.0]]
    """

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.mode = mode

    def call(self, inputs, training=True):
        x = self._k_images(inputs)
        if not training:
            return x
        return _flip(x, self._k_next_seed(), mode=self.mode)

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


class _AffineLayer(_ImagePreprocessingLayer):
    def _k_set_fill(self, fill_mode, interpolation, fill_value):
        _check_fill(fill_mode, interpolation)
        self.fill_mode = fill_mode
        self.interpolation = interpolation
        self.fill_value = fill_value

    def _k_fill(self):
        return dict(interpolation=self.interpolation, fill_mode=self.fill_mode, fill_value=float(self.fill_value))


class RandomRotation(_AffineLayer):
    """Randomly rotates images about their centre when training (Keras 3's ``RandomRotation``).

    Each image turns by an angle drawn uniformly from ``factor`` (fractions of a full turn, 360
    degrees): ``factor=0.1`` means ``[-36, 36]`` degrees, ``(-0.2, 0.3)`` means ``[-72, 108]``.
    Pixels from outside the image follow ``fill_mode``. With ``training=False`` the images pass
    unchanged.

    Args:
        factor: a number or a pair of numbers in ``[-1, 1]``.
        fill_mode: ``"reflect"`` (default), ``"wrap"``, ``"constant"`` or ``"nearest"``.
        interpolation: ``"bilinear"`` (default) or ``"nearest"``.
        seed: an int, for reproducible rotations.
        fill_value: the value of ``"constant"`` filling.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> layer = tf.keras.layers.RandomRotation(0.5, fill_mode="constant", seed=1)
        >>> layer(np.ones((2, 4, 4, 3))).shape
        TensorShape([2, 4, 4, 3])
        >>> layer(np.ones((1, 2, 2, 1)), training=False)[0, ..., 0].numpy().tolist()
        [[1.0, 1.0], [1.0, 1.0]]
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(factor, (-1, 1))
        self._k_set_fill(fill_mode, interpolation, fill_value)

    def call(self, inputs, training=True):
        x = self._k_images(inputs)
        if not training:
            return x
        return _rotate(x, self._k_next_seed(), lower=float(self.factor[0]), upper=float(self.factor[1]),
                       **self._k_fill())

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "data_format": self.data_format,
                "fill_mode": self.fill_mode, "fill_value": self.fill_value,
                "interpolation": self.interpolation, "seed": self.seed}


class RandomZoom(_AffineLayer):
    """Randomly zooms images when training (Keras 3's ``RandomZoom``).

    ``height_factor`` (and ``width_factor``) give the range of the zoom: a positive value zooms
    out, a negative one zooms in; ``0.2`` means ``[-20%, +20%]``. Without ``width_factor`` the
    aspect ratio is kept (one draw for both axes). With ``training=False`` the images pass unchanged.

    Args:
        height_factor: a number or a pair in ``(-1, 1]``.
        width_factor: likewise, or None.
        fill_mode, interpolation, seed, fill_value: as in :class:`RandomRotation`.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> layer = tf.keras.layers.RandomZoom(0.5, seed=1)
        >>> layer(np.ones((2, 5, 5, 1))).shape
        TensorShape([2, 5, 5, 1])
    """

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _hw_factor(height_factor, "height_factor", open_low=True)
        self.width_factor = width_factor
        if width_factor is not None:
            self.width_lower, self.width_upper = _hw_factor(width_factor, "width_factor", open_low=True)
        self._k_set_fill(fill_mode, interpolation, fill_value)

    def call(self, inputs, training=True):
        x = self._k_images(inputs)
        if not training:
            return x
        width = None if self.width_factor is None else (self.width_lower, self.width_upper)
        seed = self._k_next_seed(1 if width is None else 2)
        return _zoom(x, seed, height=(self.height_lower, self.height_upper), width=width, **self._k_fill())

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "data_format": self.data_format}


class RandomTranslation(_AffineLayer):
    """Randomly shifts images when training (Keras 3's ``RandomTranslation``).

    ``height_factor`` and ``width_factor`` are fractions of the height and width: ``0.2`` shifts by
    up to 20% either way, ``(-0.2, 0.3)`` from 20% up to 30% down. With ``training=False`` the images
    pass unchanged.

    Args:
        height_factor, width_factor: numbers or pairs in ``[-1, 1]``.
        fill_mode, interpolation, seed, fill_value: as in :class:`RandomRotation`.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> layer = tf.keras.layers.RandomTranslation(0.2, 0.2, seed=1)
        >>> layer(np.ones((2, 5, 5, 1))).shape
        TensorShape([2, 5, 5, 1])
    """

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _hw_factor(height_factor, "height_factor", open_low=False)
        self.width_factor = width_factor
        self.width_lower, self.width_upper = _hw_factor(width_factor, "width_factor", open_low=False)
        self._k_set_fill(fill_mode, interpolation, fill_value)

    def call(self, inputs, training=True):
        x = self._k_images(inputs)
        if not training:
            return x
        return _translate(x, self._k_next_seed(2), height=(self.height_lower, self.height_upper),
                          width=(self.width_lower, self.width_upper), **self._k_fill())

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor, "width_factor": self.width_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value, "data_format": self.data_format}


def _image_tensor(inputs):
    """``inputs`` as a tensor of one image (rank 3) or a batch (rank 4), as Keras 3 checks them."""
    x = _ops.convert_to_tensor(inputs)
    if x.shape.rank not in (3, 4):
        raise ValueError(f"Expected the input image to be rank 3 or 4. Received inputs.shape={tuple(x.shape)}")
    return x


class RandomContrast(_ImagePreprocessingLayer):
    """Randomly adjusts the contrast of each image when training (Keras 3's ``RandomContrast``).

    Each image becomes ``(x - mean) * c + mean`` (``mean`` per channel over height and width), with
    ``c`` drawn from ``[1 - lower, 1 + upper]`` (``factor=f`` gives ``lower=0, upper=f``), clipped to
    ``value_range``. With ``training=False`` the input passes unchanged.

    Args:
        factor: a number or pair in ``[0, 1]``.
        value_range: the range the outputs are clipped to (default ``(0, 255)``).
        seed: an int, for reproducible factors.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> layer = tf.keras.layers.RandomContrast(0.5, seed=1)
        >>> layer(np.ones((1, 2, 2, 1)))[0, ..., 0].numpy().tolist()
        [[1.0, 1.0], [1.0, 1.0]]
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor_pair(factor, (0, 1))
        self.value_range = value_range

    def call(self, inputs, training=True):
        x = _image_tensor(inputs)
        if not training:
            return x
        return _contrast(x, self._k_next_seed(), lower=float(self.factor[0]), upper=float(self.factor[1]),
                         value_range=tuple(float(v) for v in self.value_range))

    def get_config(self):
        config = super().get_config()
        return {**config, "factor": self.factor, "value_range": self.value_range, "seed": self.seed}


class RandomBrightness(_ImagePreprocessingLayer):
    """Randomly shifts the brightness of each image when training (Keras 3's ``RandomBrightness``).

    Each image gets ``delta * (value_range[1] - value_range[0])`` added, ``delta`` drawn from
    ``factor`` (``f`` means ``[-f, f]``), then clipped to ``value_range``. With ``training=False``
    the input passes unchanged.

    Args:
        factor: a number or pair in ``[-1, 1]``.
        value_range: the range of the pixel values (default ``(0, 255)``).
        seed: an int, for reproducible shifts.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> layer = tf.keras.layers.RandomBrightness(0.2, seed=1)
        >>> layer(np.full((1, 2, 2, 1), 100.0), training=False)[0, ..., 0].numpy().tolist()
        [[100.0, 100.0], [100.0, 100.0]]
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor_pair(factor, (-1, 1))
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError("The `value_range` argument should be a list of two numbers. "
                             f"Received: value_range={value_range}")
        self.value_range = sorted(value_range)

    def call(self, inputs, training=True):
        x = _image_tensor(inputs)
        if not training:
            return x
        return _brightness(x, self._k_next_seed(), lower=float(self.factor[0]), upper=float(self.factor[1]),
                           value_range=tuple(float(v) for v in self.value_range))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range, "seed": self.seed}


def _center_crop_box(in_h, in_w, height, width):
    """Keras 3's centred crop to the target's aspect ratio: ``(h_start, w_start, crop_h, crop_w)``."""
    crop_h = max(min(in_h, int(float(in_w * height) / width)), 1)
    crop_w = max(min(in_w, int(float(in_h * width) / height)), 1)
    return int(float(in_h - crop_h) / 2), int(float(in_w - crop_w) / 2), crop_h, crop_w


def _resize_to(x, height, width, interpolation="bilinear", antialias=False):
    return _image.resize(x, [height, width], method=interpolation, antialias=antialias)


class RandomCrop(_ImagePreprocessingLayer):
    """Randomly crops ``height`` x ``width`` patches when training (Keras 3's ``RandomCrop``).

    When training and the images are larger than the target both ways, one random window (the same
    for the whole batch) is cut out; otherwise the images are cropped to the target's aspect ratio
    about the centre and resized to it. With ``training=False`` the images pass unchanged.

    Args:
        height, width: the output size.
        seed: an int, for reproducible crops.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> tf.keras.layers.RandomCrop(2, 3, seed=1)(np.ones((4, 5, 6, 1))).shape
        TensorShape([4, 2, 3, 1])
    """

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        # Keras 3 keeps a drawn seed in the configuration when none is given
        seed_value = seed if seed is not None else int(_seed_generator_state(None).numpy()[0])
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)
        self.seed = seed_value
        self.height = height
        self.width = width

    def call(self, inputs, training=True):
        x = _ops.convert_to_tensor(inputs)
        _check_rank(x)
        if not training:
            return x
        x = _ops.cast(x, self.compute_dtype)
        in_h, in_w = x.shape[-3], x.shape[-2]
        if in_h is None or in_w is None:
            raise ValueError("RandomCrop requires the input to have a fully defined height and width. "
                             f"Received: images.shape={tuple(x.shape)}")
        if in_h > self.height and in_w > self.width:
            starts = _crop_starts(self._k_next_seed(2), h_range=float(in_h - self.height + 1),
                                  w_range=float(in_w - self.width + 1))
            return _dynamic_crop(x, starts, height=self.height, width=self.width)
        self._k_next_seed()   # Keras draws the generator's seed even when it does not use it
        # Keras cuts the target's size from the centred box's start (fewer rows or columns where
        # the image is smaller), then resizes what it got
        h0, w0, _, _ = _center_crop_box(in_h, in_w, self.height, self.width)
        x = x[..., h0:h0 + self.height, w0:w0 + self.width, :]
        if tuple(x.shape[-3:-1]) != (self.height, self.width):
            x = _ops.cast(_resize_to(x, self.height, self.width), self.compute_dtype)
        return x

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape).as_list())
        shape[-3], shape[-2] = self.height, self.width
        return TensorShape(shape)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width, "seed": self.seed,
                "data_format": self.data_format}


class CenterCrop(_ImagePreprocessingLayer):
    """Crops the centre ``height`` x ``width`` of images, training or not (Keras 3's ``CenterCrop``).

    An image smaller than the target one way is first cropped to the target's aspect ratio and
    then resized to it. The output has the layer's dtype (float32).

    Args:
        height, width: the output size.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
        >>> tf.keras.layers.CenterCrop(2, 2)(x)[0, ..., 0].numpy().tolist()
        [[5.0, 6.0], [9.0, 10.0]]
    """

    _k_random = False

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height = height
        self.width = width

    def call(self, inputs, training=True):
        x = self._k_images(inputs)
        in_h, in_w = x.shape[-3], x.shape[-2]
        if in_h < self.height or in_w < self.width:
            h0, w0, ch, cw = _center_crop_box(in_h, in_w, self.height, self.width)
            x = x[..., h0:h0 + ch, w0:w0 + cw, :]
            return _ops.cast(_resize_to(x, self.height, self.width), self.compute_dtype)
        h0, w0 = (in_h - self.height) // 2, (in_w - self.width) // 2
        return x[..., h0:h0 + self.height, w0:w0 + self.width, :]

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape).as_list())
        shape[-3], shape[-2] = self.height, self.width
        return TensorShape(shape)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width, "data_format": self.data_format}


class Resizing(_ImagePreprocessingLayer):
    """Resizes images to ``height`` x ``width`` (Keras 3's ``Resizing``, by ``tf.image.resize``).

    ``crop_to_aspect_ratio=True`` first crops the largest centred window of the target's aspect
    ratio; ``pad_to_aspect_ratio=True`` pads with ``fill_value`` to it instead. Integer images come
    back rounded in their dtype; float images in the layer's dtype.

    Args:
        height, width: the output size.
        interpolation: ``"bilinear"`` (default), ``"nearest"``, ``"bicubic"``, ``"lanczos3"``,
            ``"lanczos5"``.
        crop_to_aspect_ratio, pad_to_aspect_ratio: keep the aspect ratio by cropping / padding.
        fill_value: the padding value.
        antialias: filter when downsampling.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> x = np.array([[[[0.0], [1.0]], [[2.0], [3.0]]]])
        >>> tf.keras.layers.Resizing(3, 3)(x)[0, ..., 0].numpy().tolist()
        [[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]
    """

    _k_random = False

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, antialias=False,
                 data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height = height
        self.width = width
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio
        self.pad_to_aspect_ratio = pad_to_aspect_ratio
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.antialias = bool(antialias)

    def call(self, inputs, training=True):
        x = _ops.convert_to_tensor(inputs)
        if self.fill_mode != "constant":
            raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is supported. "
                             f"Received: fill_mode={self.fill_mode}")
        if self.pad_to_aspect_ratio and self.crop_to_aspect_ratio:
            raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
        if x.shape.rank not in (3, 4):
            raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                             f"Received input with shape: images.shape={tuple(x.shape)}")
        in_h, in_w = x.shape[-3], x.shape[-2]
        if self.crop_to_aspect_ratio:
            h0, w0, ch, cw = _center_crop_box(in_h, in_w, self.height, self.width)
            x = x[..., h0:h0 + ch, w0:w0 + cw, :]
        elif self.pad_to_aspect_ratio:
            ph = max(in_h, int(float(in_w * self.height) / self.width))
            pw = max(in_w, int(float(in_h * self.width) / self.height))
            hs, ws = int(float(ph - in_h) / 2), int(float(pw - in_w) / 2)
            pads = [[0, 0]] * (x.shape.rank - 3) + [[hs, hs], [ws, ws], [0, 0]]
            x = _ops.pad(x, pads, constant_values=_ops.cast(self.fill_value, x.dtype))
        resized = _resize_to(x, self.height, self.width, self.interpolation, self.antialias)
        if resized.dtype == x.dtype:
            return resized
        if x.dtype.is_integer:
            info = np.iinfo(x.dtype.as_numpy_dtype)
            resized = _ops.clip_by_value(_ops.round(resized), float(info.min), float(info.max))
        return _ops.cast(resized, x.dtype)

    def compute_output_shape(self, input_shape):
        shape = list(TensorShape(input_shape).as_list())
        shape[-3], shape[-2] = self.height, self.width
        return TensorShape(shape)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias, "data_format": self.data_format}
