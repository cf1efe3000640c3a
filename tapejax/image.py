"""tf.image: resizing, crops and pads, flips, dtype conversion and colour adjustments on jax.image.

Images are ``[height, width, channels]`` or batches ``[batch, height, width,
channels]``. Every function is a tape op (gradients flow through the float
ones) and follows TensorFlow 2.21's numbers: ``resize`` uses half-pixel
centres, as TF2 does, and its antialiasing kernels are the ones
``jax.image.scale_and_translate`` shares with TensorFlow's ``ScaleAndTranslate``.

Example:
    >>> import tapejax as tf
    >>> img = tf.reshape(tf.range(16, dtype=tf.float32), [4, 4, 1])
    >>> tf.image.resize(img, [2, 2])[..., 0].numpy().tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    >>> tf.image.flip_left_right(img)[0, :, 0].numpy().tolist()
    [3.0, 2.0, 1.0, 0.0]
"""
import io as _pyio

import jax
import jax.numpy as jnp
import numpy as np

from ._core import dtypes as _dtypes
from . import random as _random
from ._core.engine import Op
from .ops import cast, get_static_value
from . import errors
from ._core.tensor import Tensor, string_array, to_array

__all__ = [
    "ResizeMethod", "resize", "resize_with_pad", "flip_left_right", "flip_up_down", "random_flip_left_right",
    "random_flip_up_down", "stateless_random_flip_left_right", "stateless_random_flip_up_down",
    "central_crop", "crop_to_bounding_box", "pad_to_bounding_box", "resize_with_crop_or_pad",
    "convert_image_dtype", "rgb_to_grayscale", "grayscale_to_rgb", "adjust_brightness", "adjust_contrast",
    "per_image_standardization", "rot90", "decode_png", "decode_jpeg", "decode_image", "encode_png", "encode_jpeg",
    "is_jpeg", "adjust_gamma", "adjust_hue", "adjust_saturation", "rgb_to_hsv", "hsv_to_rgb", "rgb_to_yiq",
    "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb", "transpose", "sobel_edges", "random_brightness",
    "stateless_random_brightness", "random_contrast", "stateless_random_contrast", "random_hue",
    "stateless_random_hue", "random_saturation", "stateless_random_saturation", "random_crop", "stateless_random_crop",
]


class ResizeMethod:
    """The ``method`` names of :func:`resize` (``tf.image.ResizeMethod.BILINEAR`` is ``'bilinear'``)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_JAX_METHODS = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic", "lanczos3": "lanczos3",
                "lanczos5": "lanczos5"}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _images(images, name="images"):
    """The array and whether it was a single image (made a batch of one)."""
    x = to_array(images)
    if x.ndim not in (3, 4):
        raise ValueError(f"'{name}' must have either 3 or 4 dimensions ([height, width, channels] or "
                         f"[batch, height, width, channels]); got shape {tuple(x.shape)}.")
    return x


def _static_int(v, what):
    s = get_static_value(v) if not isinstance(v, (int, np.integer)) else v
    if s is None:
        raise ValueError(f"{what} must be known when the function is traced (a Python int or a constant).")
    return int(s)


def _op(fn, name, static=()):
    return Op(fn, name=name, static=static)


def _is_int(dt):
    return np.dtype(dt).kind in "iu" or np.dtype(dt) == np.bool_


# ---------------------------------------------------------------------------
# resize
# ---------------------------------------------------------------------------

_TABLE_SIZE = 1024


def _keys_table(a=-0.5):
    # TensorFlow's resize_bicubic coefficient table (GetCoeffsTable), sampled at 1/1024.
    x = np.arange(_TABLE_SIZE + 1, dtype=np.float64) / _TABLE_SIZE
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near.astype(np.float32), far.astype(np.float32)


def _bicubic_weights(in_size, out_size):
    """TF's ``resize_bicubic`` (half-pixel centres, Keys a=-0.5, no antialiasing) as an
    ``[out, in]`` matrix: table-quantised weights, taps outside the image dropped and the
    rest renormalised."""
    near, far = _keys_table()
    scale = np.float32(in_size) / np.float32(out_size)
    w = np.zeros((out_size, in_size), np.float32)
    for o in range(out_size):
        loc = (np.float32(o) + np.float32(0.5)) * scale - np.float32(0.5)
        base = int(np.floor(loc))
        off = int(np.rint(np.float32(loc - base) * _TABLE_SIZE))
        taps = [(base - 1, far[off]), (base, near[off]), (base + 1, near[_TABLE_SIZE - off]),
                (base + 2, far[_TABLE_SIZE - off])]
        taps = [(i, c) for i, c in taps if 0 <= i < in_size]
        total = np.float32(sum(c for _, c in taps))
        for i, c in taps:
            w[o, i] += c / total if abs(total) >= 1000 * np.finfo(np.float32).tiny else c
    return w


def _resize_fn(x, size, method, antialias):
    h, w = size
    if method == "bicubic" and not antialias:
        wh = jnp.asarray(_bicubic_weights(x.shape[-3], h))
        ww = jnp.asarray(_bicubic_weights(x.shape[-2], w))
        return jnp.einsum("oh,...hwc,pw->...opc", wh, x, ww, precision=jax.lax.Precision.HIGHEST)
    return jax.image.resize(x, x.shape[:-3] + (h, w, x.shape[-1]), _JAX_METHODS[method],
                            antialias=antialias, precision=jax.lax.Precision.HIGHEST)


_resize_op = _op(_resize_fn, "ResizeBilinear", static=("size", "method", "antialias"))


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False,
           name=None):
    """Resizes images to ``size = [new_height, new_width]``, as ``tf.image.resize`` (TF2).

    Args:
        images: ``[height, width, channels]`` or ``[batch, height, width, channels]``.
        size: two ints.
        method: ``'bilinear'`` (default), ``'nearest'``, ``'bicubic'``, ``'lanczos3'``,
            ``'lanczos5'`` (:class:`ResizeMethod`). ``'area'``, ``'gaussian'`` and
            ``'mitchellcubic'`` are not provided.
        preserve_aspect_ratio: fit inside ``size`` keeping the aspect ratio.
        antialias: when downsampling, widen the kernel to filter (as TF).

    Returns:
        float32 images, or the input dtype for ``'nearest'``.

    Example:
        >>> import tapejax as tf
        >>> img = tf.constant([[[0.0], [1.0]], [[2.0], [3.0]]])
        >>> tf.image.resize(img, [3, 3])[..., 0].numpy().round(3).tolist()
        [[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]
    """
    x = _images(images)
    method = getattr(method, "value", method)
    if method not in _JAX_METHODS:
        if method in ("area", "gaussian", "mitchellcubic"):
            raise NotImplementedError(
                f"tf.image.resize method '{method}' is not provided by tapejax: use 'bilinear', 'bicubic', "
                "'lanczos3' or 'lanczos5' (with antialias=True to filter when downsampling), or "
                "jax.image.scale_and_translate with your own kernel.")
        raise ValueError(f"Resize method is not implemented: {method}")
    new_h, new_w = (_static_int(s, "size") for s in (list(to_array(size).tolist())
                                                     if not isinstance(size, (list, tuple)) else size))
    if new_h <= 0 or new_w <= 0:
        raise ValueError(f"'size' must be positive: got {[new_h, new_w]}.")
    if preserve_aspect_ratio:
        scale = min(new_h / x.shape[-3], new_w / x.shape[-2])
        new_h = max(int(round(scale * x.shape[-3])), 1)
        new_w = max(int(round(scale * x.shape[-2])), 1)
    if method == "nearest":   # keeps the dtype; the others compute in float32, as TF
        return _resize_op(images, size=(new_h, new_w), method=method, antialias=False)
    if x.dtype != np.float32:
        images = cast(images, "float32")
    return _resize_op(images, size=(new_h, new_w), method=method, antialias=bool(antialias))


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """Resizes keeping the aspect ratio, then pads with zeros to the target size (centred).

    Example:
        >>> import tapejax as tf
        >>> tf.image.resize_with_pad(tf.ones([2, 4, 1]), 4, 4)[..., 0].numpy().tolist()
        [[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]
    """
    x = _images(image, "image")
    h, w = x.shape[-3], x.shape[-2]
    th, tw = _static_int(target_height, "target_height"), _static_int(target_width, "target_width")
    ratio = max(w / tw, h / th)
    rh, rw = int(h / ratio), int(w / ratio)   # TF floors (cast to int32)
    pad_h = max(0, int((th - rh) / 2))
    pad_w = max(0, int((tw - rw) / 2))
    resized = resize(image, [rh, rw], method=method, antialias=antialias)
    return pad_to_bounding_box(resized, pad_h, pad_w, th, tw)


# ---------------------------------------------------------------------------
# flips, rotations, crops, pads
# ---------------------------------------------------------------------------

_flip = _op(lambda x, axis: jnp.flip(x, axis), "ReverseV2", static=("axis",))
_rot90 = _op(lambda x, k: jnp.rot90(x, k, axes=(-3, -2)), "rot90", static=("k",))
_slice = _op(lambda x, start, stop: x[..., start[0]:stop[0], start[1]:stop[1], :], "crop_to_bounding_box",
             static=("start", "stop"))
_pad = _op(lambda x, pads: jnp.pad(x, ((0, 0),) * (x.ndim - 3) + pads + ((0, 0),)), "pad_to_bounding_box",
           static=("pads",))


def flip_left_right(image):
    """Mirrors images horizontally (reverses the width axis).

    Example:
        >>> import tapejax as tf
        >>> tf.image.flip_left_right(tf.constant([[[1.0], [2.0]]]))[..., 0].numpy().tolist()
        [[2.0, 1.0]]
    """
    _images(image, "image")
    return _flip(image, axis=-2)


def flip_up_down(image):
    """Mirrors images vertically (reverses the height axis).

    Example:
        >>> import tapejax as tf
        >>> tf.image.flip_up_down(tf.constant([[[1.0]], [[2.0]]]))[..., 0].numpy().tolist()
        [[2.0], [1.0]]
    """
    _images(image, "image")
    return _flip(image, axis=-3)


def _random_flip(image, axis, draw):
    x = _images(image, "image")
    # As TF: one uniform draw per image; a single image flips where it is < 0.5, a batch's
    # images where it rounds to 1 (TF's two code paths).
    if x.ndim == 3:
        flips = to_array(draw([])) < 0.5
    else:
        flips = jnp.round(to_array(draw([x.shape[0]]))) == 1
    return _where_flip(image, Tensor(flips.reshape(flips.shape + (1, 1, 1))), axis=axis)


_where_flip = _op(lambda x, c, axis: jnp.where(c, jnp.flip(x, axis), x), "random_flip", static=("axis",))


def random_flip_left_right(image, seed=None):
    """Flips each image left-right with probability 1/2 (``seed``: an op seed, as ``tf.random.uniform``).

    Example:
        >>> import tapejax as tf
        >>> tf.random.set_seed(0)
        >>> out = tf.image.random_flip_left_right(tf.constant([[[1.0], [2.0]]]), seed=1)
        >>> sorted(out[0, :, 0].numpy().tolist())
        [1.0, 2.0]
    """
    return _random_flip(image, -2, lambda shape: _random.uniform(shape, 0, 1.0, seed=seed))


def random_flip_up_down(image, seed=None):
    """Flips each image upside down with probability 1/2 (see :func:`random_flip_left_right`)."""
    return _random_flip(image, -3, lambda shape: _random.uniform(shape, 0, 1.0, seed=seed))


def stateless_random_flip_left_right(image, seed):
    """Flips each image left-right with probability 1/2, deterministically for ``seed``
    (a pair of ints); the same flips as TensorFlow for the same seed.

    Example:
        >>> import tapejax as tf
        >>> imgs = tf.reshape(tf.range(8.0), [4, 1, 2, 1])
        >>> out = tf.image.stateless_random_flip_left_right(imgs, seed=(1, 2))
        >>> out[:, 0, :, 0].numpy().tolist()
        [[1.0, 0.0], [2.0, 3.0], [5.0, 4.0], [6.0, 7.0]]
    """
    return _random_flip(image, -2, lambda shape: _random.stateless_uniform(shape, seed=seed, minval=0, maxval=1.0))


def stateless_random_flip_up_down(image, seed):
    """Flips each image upside down with probability 1/2, deterministically for ``seed``."""
    return _random_flip(image, -3, lambda shape: _random.stateless_uniform(shape, seed=seed, minval=0, maxval=1.0))


def rot90(image, k=1, name=None):
    """Rotates images counter-clockwise by ``k`` quarter turns.

    Example:
        >>> import tapejax as tf
        >>> img = tf.reshape(tf.range(4.0), [2, 2, 1])
        >>> tf.image.rot90(img)[..., 0].numpy().tolist()
        [[1.0, 3.0], [0.0, 2.0]]
    """
    _images(image, "image")
    return _rot90(image, k=_static_int(k, "k") % 4)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``[target_height, target_width]`` window whose top-left corner is at the offsets.

    Raises:
        ValueError: the window is empty or leaves the image (TensorFlow's messages).

    Example:
        >>> import tapejax as tf
        >>> img = tf.reshape(tf.range(9.0), [3, 3, 1])
        >>> tf.image.crop_to_bounding_box(img, 1, 1, 2, 2)[..., 0].numpy().tolist()
        [[4.0, 5.0], [7.0, 8.0]]
    """
    x = _images(image, "image")
    oh, ow = _static_int(offset_height, "offset_height"), _static_int(offset_width, "offset_width")
    th, tw = _static_int(target_height, "target_height"), _static_int(target_width, "target_width")
    h, w = x.shape[-3], x.shape[-2]
    for ok, msg in ((ow >= 0, "offset_width must be >= 0."), (oh >= 0, "offset_height must be >= 0."),
                    (tw > 0, "target_width must be > 0."), (th > 0, "target_height must be > 0."),
                    (w >= tw + ow, "width must be >= target + offset."),
                    (h >= th + oh, "height must be >= target + offset.")):
        if not ok:
            raise ValueError(msg)
    return _slice(image, start=(oh, ow), stop=(oh + th, ow + tw))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Pads images with zeros to ``[target_height, target_width]``, the image at the offsets.

    Raises:
        ValueError: negative offsets, or a target too small (TensorFlow's messages).

    Example:
        >>> import tapejax as tf
        >>> tf.image.pad_to_bounding_box(tf.ones([1, 1, 1]), 1, 0, 2, 2)[..., 0].numpy().tolist()
        [[0.0, 0.0], [1.0, 0.0]]
    """
    x = _images(image, "image")
    oh, ow = _static_int(offset_height, "offset_height"), _static_int(offset_width, "offset_width")
    th, tw = _static_int(target_height, "target_height"), _static_int(target_width, "target_width")
    h, w = x.shape[-3], x.shape[-2]
    after_h, after_w = th - oh - h, tw - ow - w
    for ok, msg in ((oh >= 0, "offset_height must be >= 0"), (ow >= 0, "offset_width must be >= 0"),
                    (after_h >= 0, "height must be <= target - offset"),
                    (after_w >= 0, "width must be <= target - offset")):
        if not ok:
            raise ValueError(msg)
    return _pad(image, pads=((oh, after_h), (ow, after_w)))


def resize_with_crop_or_pad(image, target_height, target_width):
    """Centrally crops or zero-pads images to the target size (TensorFlow's offsets).

    Example:
        >>> import tapejax as tf
        >>> img = tf.reshape(tf.range(9.0), [3, 3, 1])
        >>> tf.image.resize_with_crop_or_pad(img, 1, 5)[..., 0].numpy().tolist()
        [[0.0, 3.0, 4.0, 5.0, 0.0]]
    """
    x = _images(image, "image")
    th, tw = _static_int(target_height, "target_height"), _static_int(target_width, "target_width")
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0.")
    h, w = x.shape[-3], x.shape[-2]
    dh, dw = th - h, tw - w
    cropped = crop_to_bounding_box(image, max(-dh // 2, 0), max(-dw // 2, 0), min(th, h), min(tw, w))
    return pad_to_bounding_box(cropped, max(dh // 2, 0), max(dw // 2, 0), th, tw)


def central_crop(image, central_fraction):
    """The central ``central_fraction`` of each image's height and width.

    Raises:
        ValueError: ``central_fraction`` outside ``(0, 1]``.

    Example:
        >>> import tapejax as tf
        >>> img = tf.reshape(tf.range(16.0), [4, 4, 1])
        >>> tf.image.central_crop(img, 0.5)[..., 0].numpy().tolist()
        [[5.0, 6.0], [9.0, 10.0]]
    """
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    x = _images(image, "image")
    if central_fraction == 1.0:
        return image if isinstance(image, Tensor) else Tensor(x)
    h, w = x.shape[-3], x.shape[-2]
    start_h = int((h - h * central_fraction) / 2)
    start_w = int((w - w * central_fraction) / 2)
    return _slice(image, start=(start_h, start_w), stop=(h - start_h, w - start_w))


# ---------------------------------------------------------------------------
# dtypes and colour
# ---------------------------------------------------------------------------

def _saturate_cast(x, dt):
    dt = np.dtype(dt)
    if _is_int(dt) and dt != np.bool_:
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        if _is_int(x.dtype):
            src = np.iinfo(x.dtype)
            lo, hi = max(lo, src.min), min(hi, src.max)
        x = jnp.clip(x, jnp.asarray(lo).astype(x.dtype) if not _is_int(x.dtype) else lo,
                     jnp.asarray(hi).astype(x.dtype) if not _is_int(x.dtype) else hi)
    return x.astype(dt)


def _convert_fn(x, dtype, saturate):
    dt = np.dtype(dtype)
    src = np.dtype(x.dtype)
    if src == dt:
        return x
    if _is_int(src) and _is_int(dt):
        s_in, s_out = int(np.iinfo(src).max), int(np.iinfo(dt).max)
        if s_in > s_out:
            scaled = jnp.floor_divide(x, jnp.asarray((s_in + 1) // (s_out + 1), src))
            return _saturate_cast(scaled, dt) if saturate else scaled.astype(dt)
        cast = _saturate_cast(x, dt) if saturate else x.astype(dt)
        return cast * jnp.asarray((s_out + 1) // (s_in + 1), dt)
    if not _is_int(src) and not _is_int(dt):
        return x.astype(dt)
    if _is_int(src):          # to float: cast, then scale
        return x.astype(dt) * jnp.asarray(1.0 / np.iinfo(src).max, dt)
    scaled = x * jnp.asarray(np.iinfo(dt).max + 0.5, src)   # from float: scale, then cast
    return _saturate_cast(scaled, dt) if saturate else scaled.astype(dt)


_convert = _op(_convert_fn, "convert_image_dtype", static=("dtype", "saturate"))


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts images between dtypes, rescaling values (TensorFlow's rules).

    Floats are in ``[0, 1]``; integers in ``[0, MAX]``. Integer to float
    divides by ``MAX``; float to integer multiplies by ``MAX + 0.5`` and
    truncates; integer to integer shifts. ``saturate=True`` clips before a
    cast that could overflow.

    Example:
        >>> import tapejax as tf
        >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32).numpy().tolist()
        [0.0, 1.0]
        >>> tf.image.convert_image_dtype(tf.constant([0.5, 1.2]), tf.uint8, saturate=True).numpy().tolist()
        [127, 255]
    """
    dt = _dtypes.np_dtype(dtype)
    if not (_is_int(dt) or np.dtype(dt).kind == "f" or dt == np.dtype(jnp.bfloat16)) or dt == np.bool_:
        raise AttributeError(f"dtype must be either floating point or integer; got {_dtypes.as_dtype(dtype).name}")
    return _convert(image, dtype=np.dtype(dt).name if dt != np.dtype(jnp.bfloat16) else "bfloat16",
                    saturate=bool(saturate))


def _float_image(image):
    """TF's colour ops work on float16/float32 as they are, on other dtypes as float32."""
    dt = to_array(image).dtype
    return image if dt in (np.float16, np.float32) else convert_image_dtype(image, "float32")


_gray = _op(lambda x: jnp.tensordot(x, jnp.asarray([0.2989, 0.5870, 0.1140], x.dtype), axes=[[-1], [-1]])[..., None],
            "rgb_to_grayscale")


def rgb_to_grayscale(images, name=None):
    """Luma ``0.2989 R + 0.5870 G + 0.1140 B``, keeping a channel axis of size 1 and the dtype.

    Example:
        >>> import tapejax as tf
        >>> tf.image.rgb_to_grayscale(tf.constant([[[1.0, 1.0, 1.0]]])).numpy().round(4).tolist()
        [[[0.9999]]]
    """
    orig = to_array(images).dtype
    if to_array(images).shape[-1] != 3:
        raise ValueError(f"rgb_to_grayscale needs 3 channels in the last axis; got shape "
                         f"{tuple(to_array(images).shape)}.")
    return convert_image_dtype(_gray(convert_image_dtype(images, "float32")), orig)


def grayscale_to_rgb(images, name=None):
    """Repeats the single channel three times.

    Example:
        >>> import tapejax as tf
        >>> tf.image.grayscale_to_rgb(tf.constant([[[0.5]]])).numpy().tolist()
        [[[0.5, 0.5, 0.5]]]
    """
    x = to_array(images)
    if x.ndim < 2 or x.shape[-1] != 1:
        raise ValueError(f"grayscale_to_rgb needs 1 channel in the last axis; got shape {tuple(x.shape)}.")
    return _tile3(images)


_tile3 = _op(lambda x: jnp.concatenate([x, x, x], axis=-1), "grayscale_to_rgb")
_add_delta = _op(lambda x, d: x + d.astype(x.dtype), "adjust_brightness")
_contrast = _op(lambda x, f: (x - jnp.mean(x, axis=(-3, -2), keepdims=True)) * f.astype(x.dtype)
                + jnp.mean(x, axis=(-3, -2), keepdims=True), "AdjustContrastv2")
_contrast.no_gradient = True   # as in TF: tape.gradient through adjust_contrast raises LookupError


def adjust_brightness(image, delta):
    """Adds ``delta`` (in the ``[0, 1]`` scale) to every pixel; integer images saturate.

    Example:
        >>> import tapejax as tf
        >>> tf.image.adjust_brightness(tf.constant([[[0.25]]]), 0.5).numpy().tolist()
        [[[0.75]]]
    """
    orig = to_array(image).dtype
    return convert_image_dtype(_add_delta(_float_image(image), delta), orig, saturate=True)


def adjust_contrast(images, contrast_factor):
    """``(x - mean) * contrast_factor + mean`` per image and channel; integer images saturate.

    Example:
        >>> import tapejax as tf
        >>> tf.image.adjust_contrast(tf.constant([[[0.0], [1.0]]]), 2.0).numpy().tolist()
        [[[-0.5], [1.5]]]
    """
    orig = to_array(images).dtype
    return convert_image_dtype(_contrast(_float_image(images), contrast_factor), orig, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """Gamma correction ``gain * image ** gamma`` (in the ``[0, 1]`` scale for integer images,
    which saturate back) (``tf.image.adjust_gamma``).

    Example:
        >>> import tapejax as tf
        >>> tf.image.adjust_gamma([[[1.0, 2.0, 4.0]]], 0.5).numpy()
        array([[[1.       , 1.4142135, 2.       ]]], dtype=float32)
    """
    if get_static_value(gamma) is not None and np.any(np.asarray(get_static_value(gamma)) < 0):
        raise ValueError("Gamma should be a non-negative real number.")
    orig = to_array(image).dtype
    return convert_image_dtype(_gamma(_float_image(image), gamma, gain), orig, saturate=True)


_gamma = _op(lambda x, gamma, gain: (jnp.asarray(gain, x.dtype) * x ** jnp.asarray(gamma, x.dtype)), "adjust_gamma")


def _rgb_split(x):
    return x[..., 0], x[..., 1], x[..., 2]


def _hue_shift_fn(x, delta):
    """TF's CPU AdjustHue kernel: hue in ``[0, 6)`` from the channels' order (rgb_to_hv_range),
    moved by ``6 * delta`` and wrapped, back through hv_range_to_rgb; float32 steps."""
    f = jnp.float32
    r, g, b = (c.astype(f) for c in _rgb_split(x))
    r_lt_g = r < g
    cat = jnp.where(r_lt_g, jnp.where(b < r, 1, jnp.where(b > g, 3, 2)), jnp.where(b < g, 0, jnp.where(b > r, 4, 5)))
    v_max = jnp.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4], [r, g, g, b, b], r)
    v_mid = jnp.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4], [g, r, b, g, r], b)
    v_min = jnp.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4], [b, b, r, r, g], g)
    same = v_max == v_min
    ratio = (v_mid - v_min) / jnp.where(same, f(1), v_max - v_min)
    h = jnp.where(same, f(0), cat.astype(f) + jnp.where(cat % 2 == 0, ratio, 1 - ratio))
    h = h + jnp.asarray(delta, f) * f(6)
    h = jnp.where(h < 0, h + f(6) * jnp.ceil(-h / f(6)), h)   # TF adds/subtracts 6 until in [0, 6)
    h = jnp.where(h >= 6, h - f(6) * jnp.floor(h / f(6)), h)
    cat = jnp.clip(h.astype(jnp.int32), 0, 5)
    ratio = h - cat.astype(f)
    ratio = jnp.where(cat % 2 == 0, ratio, 1 - ratio)
    v_mid = v_min + ratio * (v_max - v_min)
    out_r = jnp.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4], [v_max, v_mid, v_min, v_min, v_mid], v_max)
    out_g = jnp.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4], [v_mid, v_max, v_max, v_mid, v_min], v_min)
    out_b = jnp.select([cat == 0, cat == 1, cat == 2, cat == 3, cat == 4], [v_min, v_min, v_mid, v_max, v_max], v_mid)
    return jnp.stack([out_r, out_g, out_b], axis=-1).astype(x.dtype)


def _saturation_fn(x, factor):
    """TF's CPU AdjustSaturation kernel: rgb_to_hsv, ``s * factor`` clipped to [0, 1], hsv_to_rgb."""
    f = jnp.float32
    r, g, b = (c.astype(f) for c in _rgb_split(x))
    vv = jnp.maximum(r, jnp.maximum(g, b))
    rng = vv - jnp.minimum(r, jnp.minimum(g, b))
    sat = jnp.where(vv > 0, rng / jnp.where(vv > 0, vv, f(1)), f(0))
    norm = f(1) / (f(6) * rng)
    hh = jnp.where(r == vv, norm * (g - b), jnp.where(g == vv, norm * (b - r) + f(2 / 6), norm * (r - g) + f(4 / 6)))
    hh = jnp.where(rng <= 0, f(0), hh)
    hh = jnp.where(hh < 0, hh + 1, hh)
    sat = jnp.clip(sat * jnp.asarray(factor, f), 0, 1)
    c = sat * vv
    m = vv - c
    dh = hh * f(6)
    cat = dh.astype(jnp.int32)
    fmodu = jnp.where(dh <= 0, dh + f(2) * (jnp.floor(-dh / f(2)) + 1), dh)
    fmodu = jnp.where(fmodu >= 2, fmodu - f(2) * jnp.floor(fmodu / f(2)), fmodu)
    xx = c * (1 - jnp.abs(fmodu - 1))
    z = jnp.zeros_like(c)
    conds = [cat == 0, cat == 1, cat == 2, cat == 3, cat == 4, cat == 5]
    rr = jnp.select(conds, [c, xx, z, z, xx, c], z)
    gg = jnp.select(conds, [xx, c, c, xx, z, z], z)
    bb = jnp.select(conds, [z, z, xx, c, c, xx], z)
    return jnp.stack([rr + m, gg + m, bb + m], axis=-1).astype(x.dtype)


_hue = _op(_hue_shift_fn, "AdjustHue")
_hue.no_gradient = True   # TF registers no gradient for AdjustHue / AdjustSaturation
_saturation = _op(_saturation_fn, "AdjustSaturation")
_saturation.no_gradient = True


def _rgb_images(images, what):
    x = to_array(images)
    if x.ndim < 1 or x.shape[-1] != 3:
        raise errors.InvalidArgumentError(None, None, f"input must have 3 channels but instead has "
                                                      f"{x.shape[-1] if x.ndim else 0} channels.")
    return x


def adjust_hue(image, delta, name=None):
    """Rotates the hue of RGB images by ``delta`` (a fraction of the colour wheel, in [-1, 1])
    (``tf.image.adjust_hue``); integer images go through float32 and back.

    Example:
        >>> import tapejax as tf
        >>> tf.image.adjust_hue([[[1.0, 2.0, 3.0]]], 0.2).numpy()
        array([[[2.3999996, 1.       , 3.       ]]], dtype=float32)
    """
    d = get_static_value(delta)
    if d is not None and (d < -1 or d > 1):
        raise ValueError("delta must be in the interval [-1, 1]")
    _rgb_images(image, "image")
    orig = to_array(image).dtype
    return convert_image_dtype(_hue(_float_image(image), delta), orig)


def adjust_saturation(image, saturation_factor, name=None):
    """Multiplies the saturation of RGB images by ``saturation_factor`` (clipped to [0, 1] in HSV)
    (``tf.image.adjust_saturation``); integer images go through float32 and back.

    Example:
        >>> import tapejax as tf
        >>> tf.image.adjust_saturation([[[1.0, 2.0, 3.0]]], 0.5).numpy()
        array([[[2. , 2.5, 3. ]]], dtype=float32)
    """
    _rgb_images(image, "image")
    orig = to_array(image).dtype
    return convert_image_dtype(_saturation(_float_image(image), saturation_factor), orig)


def _rgb_to_hsv_fn(x):
    """TF's RGBToHSV kernel (colorspace_op.h)."""
    r, g, b = _rgb_split(x)
    v = jnp.maximum(jnp.maximum(r, g), b)
    rng = v - jnp.minimum(jnp.minimum(r, g), b)
    s = jnp.where(v > 0, rng / jnp.where(v > 0, v, 1), 0).astype(x.dtype)
    safe = jnp.where(rng > 0, rng, 1)
    norm = (1 / safe) * jnp.asarray(1 / 6, x.dtype)
    h = jnp.where(r == v, norm * (g - b), jnp.where(g == v, norm * (b - r) + jnp.asarray(2 / 6, x.dtype),
                                                   norm * (r - g) + jnp.asarray(4 / 6, x.dtype)))
    h = jnp.where(rng > 0, h, 0)
    h = jnp.where(h < 0, h + 1, h)
    return jnp.stack([h, s, v], axis=-1).astype(x.dtype)


def _hsv_to_rgb_fn(x):
    """TF's HSVToRGB kernel (colorspace_op.h)."""
    h, s, v = _rgb_split(x)
    dh = h * 6
    dr = jnp.clip(jnp.abs(dh - 3) - 1, 0, 1)
    dg = jnp.clip(-jnp.abs(dh - 2) + 2, 0, 1)
    db = jnp.clip(-jnp.abs(dh - 4) + 2, 0, 1)
    one_s = -s + 1
    return jnp.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v], axis=-1).astype(x.dtype)


_rgb_to_hsv = _op(_rgb_to_hsv_fn, "RGBToHSV")
_hsv_to_rgb = _op(_hsv_to_rgb_fn, "HSVToRGB")


def _float_only(images, op):
    dt = _dtypes.as_dtype(to_array(images).dtype)
    if not dt.is_floating:
        raise errors.InvalidArgumentError(
            None, None, f"Value for attr 'T' of {dt.name} is not in the list of allowed values: half, bfloat16, float, "
            f"double\n\t; NodeDef: {{{{node {op}}}}}; Op<name={op}; signature=images:T -> output:T; attr=T:type,"
            f"default=DT_FLOAT,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]> [Op:{op}]")


def rgb_to_hsv(images, name=None):
    """RGB to HSV, all in ``[0, 1]`` (``tf.image.rgb_to_hsv``); float images only.

    Example:
        >>> import tapejax as tf
        >>> tf.image.rgb_to_hsv([[[0.0, 0.0, 1.0]]]).numpy()
        array([[[0.6666667, 1.       , 1.       ]]], dtype=float32)
    """
    _float_only(images, "RGBToHSV")
    _rgb_images(images, "images")
    return _rgb_to_hsv(images)


def hsv_to_rgb(images, name=None):
    """HSV to RGB, all in ``[0, 1]`` (``tf.image.hsv_to_rgb``); float images only.

    Example:
        >>> import tapejax as tf
        >>> tf.image.hsv_to_rgb([[[0.6666667, 1.0, 1.0]]]).numpy().round(5)
        array([[[0., 0., 1.]]], dtype=float32)
    """
    _float_only(images, "HSVToRGB")
    _rgb_images(images, "images")
    return _hsv_to_rgb(images)


_colour_matrix = _op(lambda x, kernel: jnp.tensordot(x, jnp.asarray(kernel, x.dtype), axes=[[x.ndim - 1], [0]]),
                     "colour_matrix", static=("kernel",))
_RGB_TO_YIQ = ((0.299, 0.59590059, 0.2115), (0.587, -0.27455667, -0.52273617), (0.114, -0.32134392, 0.31119955))
_YIQ_TO_RGB = ((1, 1, 1), (0.95598634, -0.27201283, -1.10674021), (0.6208248, -0.64720424, 1.70423049))
_RGB_TO_YUV = ((0.299, -0.14714119, 0.61497538), (0.587, -0.28886916, -0.51496512), (0.114, 0.43601035, -0.10001026))
_YUV_TO_RGB = ((1, 1, 1), (0, -0.394642334, 2.03206185), (1.13988303, -0.58062185, 0))


def rgb_to_yiq(images):
    """RGB to YIQ (``tf.image.rgb_to_yiq``): a product with TF's 3x3 kernel over the last axis.

    Example:
        >>> import tapejax as tf
        >>> tf.image.rgb_to_yiq(tf.constant([[[1.0, 2.0, 3.0]]])).numpy()
        array([[[ 1.815     , -0.91724455,  0.09962624]]], dtype=float32)
    """
    return _colour_matrix(images, kernel=_RGB_TO_YIQ)


def yiq_to_rgb(images):
    """YIQ to RGB (``tf.image.yiq_to_rgb``), the inverse of :func:`rgb_to_yiq`.

    Example:
        >>> import tapejax as tf
        >>> tf.image.yiq_to_rgb(tf.image.rgb_to_yiq([[[1.0, 2.0, 3.0]]])).numpy()
        array([[[0.99997723, 2.0000236 , 2.9999375 ]]], dtype=float32)
    """
    return _colour_matrix(images, kernel=_YIQ_TO_RGB)


def rgb_to_yuv(images):
    """RGB to YUV (``tf.image.rgb_to_yuv``): a product with TF's 3x3 kernel over the last axis.

    Example:
        >>> import tapejax as tf
        >>> tf.image.rgb_to_yuv([[[1.0, 0.0, 0.0]]]).numpy()
        array([[[ 0.299     , -0.14714119,  0.6149754 ]]], dtype=float32)
    """
    return _colour_matrix(images, kernel=_RGB_TO_YUV)


def yuv_to_rgb(images):
    """YUV to RGB (``tf.image.yuv_to_rgb``), the inverse of :func:`rgb_to_yuv`.

    Example:
        >>> import tapejax as tf
        >>> tf.image.yuv_to_rgb(tf.image.rgb_to_yuv([[[1.0, 0.0, 0.0]]])).numpy().round(4)
        array([[[ 1.,  0., -0.]]], dtype=float32)
    """
    return _colour_matrix(images, kernel=_YUV_TO_RGB)


_image_transpose = _op(lambda x: jnp.swapaxes(x, -3, -2), "transpose_image")


def transpose(image, name=None):
    """Swaps height and width of an image or a batch of images (``tf.image.transpose``).

    Example:
        >>> import tapejax as tf
        >>> tf.image.transpose(tf.reshape(tf.range(4.0), [2, 2, 1]))[..., 0].numpy().tolist()
        [[0.0, 2.0], [1.0, 3.0]]
    """
    x = to_array(image)
    if x.ndim not in (3, 4):
        raise ValueError(f"'image' (shape {_dtypes_shape(x.shape)}) must have either 3 or 4 dimensions.")
    return _image_transpose(image)


def _dtypes_shape(shape):
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _sobel_fn(x):
    p = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")
    h, w = x.shape[1], x.shape[2]
    win = lambda i, j: p[:, i:i + h, j:j + w, :]   # noqa: E731
    dy = (win(2, 0) + 2 * win(2, 1) + win(2, 2)) - (win(0, 0) + 2 * win(0, 1) + win(0, 2))
    dx = (win(0, 2) + 2 * win(1, 2) + win(2, 2)) - (win(0, 0) + 2 * win(1, 0) + win(2, 0))
    return jnp.stack([dy, dx], axis=-1)


_sobel = _op(_sobel_fn, "sobel_edges")


def sobel_edges(image):
    """Sobel edge maps of a batch of images ``[batch, h, w, d]``: ``[batch, h, w, d, 2]``, the
    vertical (dy) then horizontal (dx) gradients, with reflected borders (``tf.image.sobel_edges``).

    Example:
        >>> import tapejax as tf
        >>> img = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
        >>> tf.image.sobel_edges(img)[0, 1, 1, 0].numpy()
        array([24.,  8.], dtype=float32)
    """
    return _sobel(image)


def random_brightness(image, max_delta, seed=None):
    """:func:`adjust_brightness` by a delta drawn from ``[-max_delta, max_delta)`` with
    ``tf.random.uniform`` (``seed``: an op seed) (``tf.image.random_brightness``).

    Example:
        >>> import tapejax as tf
        >>> tf.image.random_brightness([[[1.0]]], 0.2).shape
        TensorShape([1, 1, 1])
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _random.uniform([], -max_delta, max_delta, seed=seed))


def stateless_random_brightness(image, max_delta, seed):
    """:func:`adjust_brightness` by a delta drawn from ``[-max_delta, max_delta)`` by
    ``tf.random.stateless_uniform`` with ``seed`` (TensorFlow's numbers).

    Example:
        >>> import tapejax as tf
        >>> tf.image.stateless_random_brightness([[[1.0, 2.0, 3.0]]], 0.2, (1, 2)).numpy()
        array([[[1.1376241, 2.1376243, 3.1376243]]], dtype=float32)
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _random.stateless_uniform([], seed, -max_delta, max_delta))


def _check_range(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_contrast(image, lower, upper, seed=None):
    """:func:`adjust_contrast` by a factor drawn from ``[lower, upper)`` with ``tf.random.uniform``.

    Example:
        >>> import tapejax as tf
        >>> tf.image.random_contrast([[[1.0]], [[2.0]]], 0.2, 0.5).shape
        TensorShape([2, 1, 1])
    """
    _check_range(lower, upper)
    return adjust_contrast(image, _random.uniform([], lower, upper, seed=seed))


def stateless_random_contrast(image, lower, upper, seed):
    """:func:`adjust_contrast` by a factor drawn from ``[lower, upper)`` with
    ``tf.random.stateless_uniform`` and ``seed`` (TensorFlow's numbers).

    Example:
        >>> import tapejax as tf
        >>> tf.image.stateless_random_contrast([[[1.0]], [[2.0]]], 0.2, 0.5, (1, 2)).numpy()
        array([[[1.2733909]],
        <BLANKLINE>
               [[1.7266091]]], dtype=float32)
    """
    _check_range(lower, upper)
    return adjust_contrast(image, _random.stateless_uniform([], seed, lower, upper))


def _check_hue(max_delta):
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")


def random_hue(image, max_delta, seed=None):
    """:func:`adjust_hue` by a delta drawn from ``[-max_delta, max_delta)`` (at most 0.5) with
    ``tf.random.uniform``.

    Example:
        >>> import tapejax as tf
        >>> tf.image.random_hue([[[1.0, 2.0, 3.0]]], 0.2).shape
        TensorShape([1, 1, 3])
    """
    _check_hue(max_delta)
    return adjust_hue(image, _random.uniform([], -max_delta, max_delta, seed=seed))


def stateless_random_hue(image, max_delta, seed):
    """:func:`adjust_hue` by a delta drawn from ``[-max_delta, max_delta)`` with
    ``tf.random.stateless_uniform`` and ``seed`` (TensorFlow's numbers).

    Example:
        >>> import tapejax as tf
        >>> tf.image.stateless_random_hue([[[1.0, 2.0, 3.0]]], 0.2, (1, 2)).numpy()
        array([[[1.6514902, 1.       , 3.       ]]], dtype=float32)
    """
    _check_hue(max_delta)
    return adjust_hue(image, _random.stateless_uniform([], seed, -max_delta, max_delta))


def random_saturation(image, lower, upper, seed=None):
    """:func:`adjust_saturation` by a factor drawn from ``[lower, upper)`` with ``tf.random.uniform``.

    Example:
        >>> import tapejax as tf
        >>> tf.image.random_saturation([[[1.0, 2.0, 3.0]]], 0.5, 1.0).shape
        TensorShape([1, 1, 3])
    """
    _check_range(lower, upper)
    return adjust_saturation(image, _random.uniform([], lower, upper, seed=seed))


def stateless_random_saturation(image, lower, upper, seed=None):
    """:func:`adjust_saturation` by a factor drawn from ``[lower, upper)`` with
    ``tf.random.stateless_uniform`` and ``seed`` (TensorFlow's numbers).

    Example:
        >>> import tapejax as tf
        >>> tf.image.stateless_random_saturation([[[1.0, 2.0, 3.0]]], 0.5, 1.0, (1, 2)).numpy().round(5)
        array([[[1.15594, 2.07797, 3.     ]]], dtype=float32)
    """
    _check_range(lower, upper)
    return adjust_saturation(image, _random.stateless_uniform([], seed, lower, upper))


def _random_crop(value, size, draw):
    v = to_array(value)
    size = [int(d) for d in np.ravel(to_array(size))]
    if len(size) != v.ndim:
        raise ValueError(f"Shapes must be equal rank, but are {v.ndim} and {len(size)}")
    if any(s > d for s, d in zip(size, v.shape)):
        raise errors.InvalidArgumentError(None, None, "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                                          "Summarized data: b'Need value.shape >= size, got '\n"
                                          f"{', '.join(map(str, v.shape))}\n{', '.join(map(str, size))}")
    limit = np.asarray(v.shape, np.int32) - np.asarray(size, np.int32) + 1
    offset = to_array(draw([len(size)])) % limit
    return _crop_at(value, offset, size=tuple(size))


_crop_at = _op(lambda x, offset, size: jax.lax.dynamic_slice(x, tuple(offset[i] for i in range(x.ndim)), size),
               "random_crop", static=("size",))


def random_crop(value, size, seed=None, name=None):
    """A ``size`` slice of ``value`` at an offset drawn with ``tf.random.uniform`` (``seed``: an op
    seed) (``tf.image.random_crop``); ``value.shape >= size`` in every dimension.

    Example:
        >>> import tapejax as tf
        >>> tf.image.random_crop(tf.reshape(tf.range(12), [2, 2, 3]), [1, 2, 3]).shape
        TensorShape([1, 2, 3])
    """
    return _random_crop(value, size, lambda shape: _random.uniform(shape, 0, 2 ** 31 - 1, dtype="int32", seed=seed))


def stateless_random_crop(value, size, seed, name=None):
    """A ``size`` slice of ``value`` at an offset drawn with ``tf.random.stateless_uniform`` and
    ``seed`` (TensorFlow's offsets) (``tf.image.stateless_random_crop``).

    Example:
        >>> import tapejax as tf
        >>> image = [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]
        >>> tf.image.stateless_random_crop(image, size=[1, 2, 3], seed=(1, 2))
        <tf.Tensor: shape=(1, 2, 3), dtype=int32, numpy=
        array([[[1, 2, 3],
                [4, 5, 6]]], dtype=int32)>
    """
    return _random_crop(value, size, lambda shape: _random.stateless_uniform(shape, seed, 0, 2 ** 31 - 1, dtype="int32"))


def _standardize(x):
    x = x if jnp.issubdtype(x.dtype, jnp.floating) else x.astype(jnp.float32)
    n = x.shape[-1] * x.shape[-2] * x.shape[-3]
    mean = jnp.mean(x, axis=(-1, -2, -3), keepdims=True)
    std = jnp.std(x, axis=(-1, -2, -3), keepdims=True)
    return (x - mean) / jnp.maximum(std, jax.lax.rsqrt(jnp.asarray(n, x.dtype)))


_standardize_op = _op(_standardize, "per_image_standardization")


def per_image_standardization(image):
    """Scales each image to mean 0 and variance 1: ``(x - mean) / max(stddev, 1/sqrt(N))``.

    Integer images give float32.

    Example:
        >>> import tapejax as tf
        >>> tf.image.per_image_standardization(tf.constant([[[1.0], [3.0]]])).numpy().tolist()
        [[[-1.0], [1.0]]]
    """
    _images(image, "image")
    return _standardize_op(image)


# ---------------------------------------------------------------------------
# image codecs (Pillow)
# ---------------------------------------------------------------------------

def _image_bytes(x):
    """The bytes of an encoded image: a scalar string tensor, bytes or str."""
    if isinstance(x, Tensor):
        x = x.numpy()
    if isinstance(x, np.ndarray) and x.dtype == object:
        x = x.item()
    if isinstance(x, str):
        x = x.encode()
    if not isinstance(x, (bytes, bytearray)):
        raise TypeError(f"Expected bytes (a scalar string), got {type(x).__name__}.")
    return bytes(x)


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("tf.io / tf.image codecs need Pillow: pip install 'tapejax[image]' (or pip install pillow).") \
            from None
    return Image


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _decode(contents, channels, dtype=np.uint8):
    Image = _pil()
    try:
        img = Image.open(_pyio.BytesIO(_image_bytes(contents)))
        img.load()
    except Exception as e:   # Pillow raises several types for corrupt data
        raise errors.InvalidArgumentError(None, None, f"Unknown image file format or corrupt image: {e}") from None
    wide = img.mode.startswith("I;16") or img.mode == "I"
    if channels:
        if channels not in _MODES:
            raise errors.InvalidArgumentError(None, None, f"channels must be 0, 1, 2, 3 or 4; got {channels}.")
        img = img.convert(_MODES[channels]) if img.mode != _MODES[channels] else img
    elif img.mode not in ("L", "LA", "RGB", "RGBA") and not wide:
        img = img.convert("RGBA" if "A" in img.mode or "transparency" in img.info else "RGB")
    a = np.asarray(img)
    if a.ndim == 2:
        a = a[..., None]
    if wide:
        a = a.astype(np.uint16)
        return a if np.dtype(dtype) == np.uint16 else (a >> 8).astype(np.uint8)
    if np.dtype(dtype) == np.uint16:
        return a.astype(np.uint16) * 257
    return a.astype(np.uint8)


def decode_png(contents, channels=0, dtype=_dtypes.uint8, name=None):
    """Decodes a PNG to a ``[height, width, channels]`` uint8 (or uint16) tensor. Needs Pillow.

    Args:
        contents: the PNG bytes (a scalar string tensor or bytes).
        channels: 0 (as stored), 1 (gray), 3 (RGB) or 4 (RGBA).
        dtype: ``tf.uint8`` or ``tf.uint16``.

    Example:
        >>> import tapejax as tf
        >>> img = tf.constant([[[255, 0, 0]]], tf.uint8)
        >>> tf.io.decode_png(tf.io.encode_png(img)).numpy().tolist()
        [[[255, 0, 0]]]
    """
    return Tensor(_decode(contents, channels, _dtypes.np_dtype(dtype)))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """Decodes a JPEG to a ``[height, width, channels]`` uint8 tensor. Needs Pillow (libjpeg).

    Example:
        >>> import tapejax as tf
        >>> img = tf.fill([8, 8, 3], tf.constant(200, tf.uint8))
        >>> tf.io.decode_jpeg(tf.io.encode_jpeg(img)).shape
        TensorShape([8, 8, 3])
    """
    return Tensor(_decode(contents, channels))


def decode_image(contents, channels=None, dtype=_dtypes.uint8, name=None, expand_animations=True):
    """Decodes a PNG, JPEG, GIF or BMP (GIFs: ``[frames, height, width, 3]`` with
    ``expand_animations``). ``dtype=tf.float32`` scales to ``[0, 1]``. Needs Pillow.

    Example:
        >>> import tapejax as tf
        >>> img = tf.constant([[[0], [255]]], tf.uint8)
        >>> tf.io.decode_image(tf.io.encode_png(img), dtype=tf.float32).numpy().tolist()
        [[[0.0], [1.0]]]
    """
    b = _image_bytes(contents)
    if b[:6] in (b"GIF87a", b"GIF89a"):
        Image = _pil()
        img = Image.open(_pyio.BytesIO(b))
        frames = []
        for i in range(getattr(img, "n_frames", 1)):
            img.seek(i)
            frames.append(np.asarray(img.convert("RGB")))
        a = np.stack(frames)
        if not expand_animations:
            a = a[0]
    else:
        a = _decode(b, channels or 0)
    return convert_image_dtype(Tensor(a), dtype)


def is_jpeg(contents, name=None):
    """Whether the bytes start like a JPEG file (a bool tensor).

    Example:
        >>> import tapejax as tf
        >>> bool(tf.io.is_jpeg(b"\\xff\\xd8\\xff\\xe0"))
        True
    """
    return Tensor(np.bool_(_image_bytes(contents)[:3] == b"\xff\xd8\xff"))


def _encode(image, fmt, **kw):
    Image = _pil()
    a = np.asarray(to_array(image))
    if a.ndim != 3 or a.shape[-1] not in _MODES:
        raise errors.InvalidArgumentError(None, None, f"image must be 3-dimensional [height, width, channels] "
                                                      f"with 1 to 4 channels; got shape {a.shape}.")
    if a.dtype == np.uint16 and a.shape[-1] == 1:
        img = Image.fromarray(a[..., 0].astype(np.uint16))
    elif a.dtype == np.uint8:
        img = Image.fromarray(a[..., 0] if a.shape[-1] == 1 else a, _MODES[a.shape[-1]])
    else:
        raise errors.InvalidArgumentError(None, None, f"image must be uint8 (or single-channel uint16 for PNG); "
                                                      f"got {a.dtype}.")
    buf = _pyio.BytesIO()
    img.save(buf, fmt, **kw)
    return Tensor(string_array(buf.getvalue()))


def encode_png(image, compression=-1, name=None):
    """Encodes a uint8 ``[height, width, channels]`` image as PNG bytes. Needs Pillow.

    Example:
        >>> import tapejax as tf
        >>> tf.io.encode_png(tf.zeros([2, 2, 1], tf.uint8)).numpy()[:4]
        b'\\x89PNG'
    """
    return _encode(image, "PNG", compress_level=6 if compression == -1 else int(compression))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False, chroma_downsampling=True,
                density_unit="in", x_density=300, y_density=300, xmp_metadata="", name=None):
    """Encodes a uint8 image (1 or 3 channels) as JPEG bytes. Needs Pillow.

    Example:
        >>> import tapejax as tf
        >>> tf.io.encode_jpeg(tf.zeros([2, 2, 3], tf.uint8)).numpy()[:2]
        b'\\xff\\xd8'
    """
    return _encode(image, "JPEG", quality=int(quality), progressive=bool(progressive),
                   subsampling=2 if chroma_downsampling else 0, dpi=(x_density, y_density))


from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("tapejax.image")
