"""More ``tf.nn`` rows of the op table: convolutions of every rank (1-D, 3-D, depthwise, separable,
transposed, ``tf.nn.convolution``), batch normalization, space/depth rearrangements, 1-D pooling,
local response normalization and a few losses and statistics.

A convolution is one ``lax.conv_general_dilated`` in TensorFlow's channels-last layout (filters
``[spatial..., in, out]``); a transposed convolution is, as in TensorFlow, the gradient of the
convolution with respect to its input (``conv2d_backprop_input``). Channels-first ``data_format``
is transposed to channels-last and back.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._core.tensor import Tensor, _TensorBase, to_array
from ..errors import InvalidArgumentError
from ..extend import defop
from . import normalize
from .namespaces import export
from .array_ops import _transpose
from .nn_ops import _pool

_LHS = {1: "NWC", 2: "NHWC", 3: "NDHWC"}
_RHS = {1: "WIO", 2: "HWIO", 3: "DHWIO"}


def _conv_fn(x, w, strides, padding, dilations, groups=1):
    nd = x.ndim - 2
    return jax.lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dilations,
                                        dimension_numbers=(_LHS[nd], _RHS[nd], _LHS[nd]),
                                        feature_group_count=groups)


def _conv_transpose_fn(y, w, output_shape, strides, padding, dilations):
    """TensorFlow's conv_transpose: the gradient of the convolution of an ``output_shape`` input."""
    x0 = jnp.zeros(output_shape, y.dtype)
    return jax.vjp(lambda x: _conv_fn(x, w, strides, padding, dilations), x0)[1](y)[0]


_conv = defop(_conv_fn, name="conv", static=("strides", "padding", "dilations", "groups"))
_conv_transpose = defop(_conv_transpose_fn, name="conv_transpose",
                        static=("output_shape", "strides", "padding", "dilations"))


def _tensor(x):
    return x if isinstance(x, _TensorBase) else Tensor(to_array(x))



def _channels_first(data_format):
    return data_format is not None and data_format.startswith("NC")


def _to_last(x, data_format):
    if not _channels_first(data_format):
        return x
    return _transpose(x, perm=(0,) + tuple(range(2, x.ndim)) + (1,))


def _to_first(x, data_format):
    if not _channels_first(data_format):
        return x
    return _transpose(x, perm=(0, x.ndim - 1) + tuple(range(1, x.ndim - 1)))


def _window(v, nd, data_format, name):
    """An int, ``nd`` ints or ``nd + 2`` ints (batch and channels included) -> ``nd`` ints."""
    if v is None:
        return (1,) * nd
    v = [int(v)] if isinstance(v, (int, np.integer)) else [int(e) for e in np.ravel(normalize.known(v, name))]
    if len(v) == nd + 2:
        v = v[2:] if _channels_first(data_format) else v[1:-1]
    if len(v) == 1:
        v = v * nd
    if len(v) != nd:
        raise ValueError(f"{name} should be of length 1, {nd} or {nd + 2}. Received: {name}={v} of length {len(v)}")
    return tuple(v)


def _padding(padding, nd, data_format):
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"`padding` must be 'VALID', 'SAME' or a list of pairs, got {padding!r}.")
        return padding.upper()
    pads = [tuple(int(e) for e in p) for p in padding]
    if len(pads) == nd + 2:
        pads = pads[2:] if _channels_first(data_format) else pads[1:-1]
    return tuple(pads)


@export("nn.convolution")
def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None, name=None):
    """N-D convolution (1-D, 2-D or 3-D, from the filters' rank) in TensorFlow's layouts (``tf.nn.convolution``).

    Args:
        input: ``[batch, spatial..., in_channels]`` (or channels first with ``data_format='NC...'``).
        filters: ``[spatial..., in_channels, out_channels]``.
        strides, dilations: an int or one per spatial dimension.
        padding: ``'VALID'``, ``'SAME'`` or explicit ``[[before, after], ...]`` pairs.

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(4.0), [1, 4, 1])
        >>> tf.nn.convolution(x, tf.ones([2, 1, 1])).numpy().ravel().tolist()
        [1.0, 3.0, 5.0]
    """
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    return _convolution(input, filters, strides, padding, data_format, dilations)


def _convolution(input, filters, strides, padding, data_format, dilations):
    """:func:`convolution`, explicit ``[[before, after], ...]`` padding too (TF's conv2d and
    depthwise_conv2d take it; tf.nn.convolution does not)."""
    x, w = _tensor(input), _tensor(filters)
    nd = w.ndim - 2
    if nd not in (1, 2, 3) or x.ndim != nd + 2:
        raise ValueError(f"`input` must be a {nd + 2}-D tensor for {nd}-D filters; got input shape {tuple(x.shape)} "
                         f"and filters shape {tuple(w.shape)}.")
    x = _to_last(x, data_format)
    cin = x.shape[-1]
    if cin is not None and w.shape[-2] is not None and cin % w.shape[-2]:
        raise ValueError(f"The number of input channels ({cin}) is not a multiple of the filters' input channels "
                         f"({w.shape[-2]}).")
    groups = 1 if cin is None or w.shape[-2] is None else cin // w.shape[-2]
    out = _conv(x, w, strides=_window(strides, nd, data_format, "strides"),
                padding=_padding(padding, nd, data_format),
                dilations=_window(dilations, nd, data_format, "dilations"), groups=groups)
    return _to_first(out, data_format)


@export("nn.conv1d")
def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):
    """1-D convolution of ``[batch, width, in]`` by ``[width, in, out]`` filters (``tf.nn.conv1d``).

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(4.0), [1, 4, 1])
        >>> tf.nn.conv1d(x, tf.ones([2, 1, 1]), stride=2, padding='VALID').numpy().ravel().tolist()
        [1.0, 5.0]
    """
    return convolution(input, filters, stride, padding, "NCW" if data_format == "NCW" else None, dilations)


@export("nn.conv3d")
def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """3-D convolution of ``[batch, depth, height, width, in]`` by ``[d, h, w, in, out]`` filters (``tf.nn.conv3d``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.conv3d(tf.ones([1, 2, 2, 2, 1]), tf.ones([2, 2, 2, 1, 1]), [1, 1, 1, 1, 1], 'VALID').numpy().ravel().tolist()
        [8.0]
    """
    return convolution(input, filters, strides, padding, data_format, dilations)


@export("nn.atrous_conv2d")
def atrous_conv2d(value, filters, rate, padding, name=None):
    """2-D convolution with the filters dilated by ``rate`` (``tf.nn.atrous_conv2d``).

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
        >>> tf.nn.atrous_conv2d(x, tf.ones([2, 2, 1, 1]), 2, 'VALID').numpy().ravel().tolist()
        [16.0]
    """
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return convolution(value, filters, 1, padding, None, int(rate))


@export("nn.depthwise_conv2d")
def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):
    """Convolves each input channel with its own ``channel_multiplier`` filters (``tf.nn.depthwise_conv2d``).

    ``filter`` is ``[height, width, in_channels, channel_multiplier]``; the output has
    ``in_channels * channel_multiplier`` channels.

    Example:
        >>> import tapejax as tf
        >>> x = tf.ones([1, 2, 2, 2])
        >>> w = tf.reshape(tf.range(8.0), [2, 2, 2, 1])
        >>> tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], 'VALID').numpy().ravel().tolist()
        [12.0, 16.0]
    """
    w = _tensor(filter)
    h, wd, c, m = w.shape
    return _convolution(input, _reshape(w, (h, wd, 1, c * m)), strides, padding, data_format, dilations)


def _reshape(x, shape):
    return _reshape_op(x, shape=tuple(shape))


_reshape_op = defop(lambda x, shape: jnp.reshape(x, shape), name="reshape", static=("shape",))


@export("nn.separable_conv2d")
def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None, dilations=None,
                     name=None):
    """A depthwise convolution followed by a 1x1 convolution mixing the channels (``tf.nn.separable_conv2d``).

    Example:
        >>> import tapejax as tf
        >>> x = tf.ones([1, 2, 2, 2])
        >>> out = tf.nn.separable_conv2d(x, tf.ones([2, 2, 2, 1]), tf.ones([1, 1, 2, 3]), [1, 1, 1, 1], 'VALID')
        >>> out.numpy().ravel().tolist()
        [8.0, 8.0, 8.0]
    """
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    return convolution(depthwise, pointwise_filter, 1, "VALID", data_format)


@export("nn.conv_transpose")
def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None, dilations=None,
                   name=None):
    """The transposed convolution (the convolution's gradient w.r.t. its input) of any rank (``tf.nn.conv_transpose``).

    ``filters`` is ``[spatial..., out_channels, in_channels]``; ``output_shape`` the full output shape.

    Example:
        >>> import tapejax as tf
        >>> y = tf.ones([1, 2, 1])
        >>> tf.nn.conv_transpose(y, tf.ones([2, 1, 1]), [1, 4, 1], 2, 'VALID').numpy().ravel().tolist()
        [1.0, 1.0, 1.0, 1.0]
    """
    y, w = _tensor(input), _tensor(filters)
    nd = w.ndim - 2
    shape = tuple(int(e) for e in np.ravel(normalize.known(output_shape, "output_shape")))
    if len(shape) != nd + 2:
        raise ValueError(f"output_shape must have {nd + 2} elements for {nd}-D filters, got {list(shape)}.")
    if _channels_first(data_format):
        shape = (shape[0],) + shape[2:] + (shape[1],)
    y = _to_last(y, data_format)
    if shape[-1] % w.shape[-2]:
        raise InvalidArgumentError(None, None, f"input depth must be evenly divisible by filter depth: {shape[-1]} vs "
                                   f"{w.shape[-2]} [Op:Conv{nd}DBackpropInput]")
    out = _conv_transpose(y, w, output_shape=shape, strides=_window(strides, nd, data_format, "strides"),
                          padding=_padding(padding, nd, data_format),
                          dilations=_window(dilations, nd, data_format, "dilations"))
    return _to_first(out, data_format)


@export("nn.conv1d_transpose")
def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC", dilations=None,
                     name=None):
    """The transposed 1-D convolution (``tf.nn.conv1d_transpose``); filters ``[width, out, in]``.

    Example:
        >>> import tapejax as tf
        >>> tf.nn.conv1d_transpose(tf.ones([1, 2, 1]), tf.ones([2, 1, 1]), [1, 4, 1], 2).numpy().ravel().tolist()
        [1.0, 1.0, 1.0, 1.0]
    """
    return conv_transpose(input, filters, output_shape, strides, padding, "NCW" if data_format == "NCW" else None,
                          dilations)


@export("nn.conv2d_transpose")
def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None,
                     name=None):
    """The transposed 2-D convolution (``tf.nn.conv2d_transpose``); filters ``[height, width, out, in]``.

    Example:
        >>> import tapejax as tf
        >>> out = tf.nn.conv2d_transpose(tf.ones([1, 1, 1, 1]), tf.ones([2, 2, 1, 1]), [1, 2, 2, 1], 2)
        >>> out.numpy().ravel().tolist()
        [1.0, 1.0, 1.0, 1.0]
    """
    return conv_transpose(input, filters, output_shape, strides, padding, data_format, dilations)


@export("nn.conv3d_transpose")
def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC", dilations=None,
                     name=None):
    """The transposed 3-D convolution (``tf.nn.conv3d_transpose``); filters ``[d, h, w, out, in]``.

    Example:
        >>> import tapejax as tf
        >>> out = tf.nn.conv3d_transpose(tf.ones([1, 1, 1, 1, 1]), tf.ones([2, 2, 2, 1, 1]), [1, 2, 2, 2, 1], 2)
        >>> print(out.numpy().sum())
        8.0
    """
    return conv_transpose(input, filters, output_shape, strides, padding, data_format, dilations)


# ---------------------------------------------------------------- pooling
def _pool1d(input, ksize, strides, padding, data_format, kind):
    x = _to_last(_tensor(input), "NCW" if data_format == "NCW" else None)
    if x.ndim != 3:
        raise ValueError(f"{kind}_pool1d needs a 3-D input ({data_format}), got shape {tuple(x.shape)}.")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"`padding` must be 'VALID' or 'SAME', got {padding!r}.")
    out = _pool(x, kind=kind, ksize=_window(ksize, 1, data_format, "ksize"),
                strides=_window(strides, 1, data_format, "strides"), padding=padding.upper())
    return _to_first(out, "NCW" if data_format == "NCW" else None)


@export("nn.max_pool1d")
def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """1-D max pooling of a ``[batch, width, channels]`` tensor (``tf.nn.max_pool1d``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.max_pool1d(tf.reshape(tf.range(4.0), [1, 4, 1]), 2, 2, 'VALID').numpy().ravel().tolist()
        [1.0, 3.0]
    """
    return _pool1d(input, ksize, strides, padding, data_format, "max")


@export("nn.avg_pool1d")
def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """1-D average pooling of a ``[batch, width, channels]`` tensor (``tf.nn.avg_pool1d``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.avg_pool1d(tf.reshape(tf.range(4.0), [1, 4, 1]), 2, 2, 'VALID').numpy().ravel().tolist()
        [0.5, 2.5]
    """
    return _pool1d(input, ksize, strides, padding, data_format, "avg")


# ---------------------------------------------------------------- normalization
def _batch_norm_fn(x, mean, variance, offset, scale, eps):
    inv = jax.lax.rsqrt(variance + eps)
    if scale is not None:
        inv = inv * scale
    return x * inv + (offset - mean * inv if offset is not None else -mean * inv)


_batch_norm = defop(lambda x, mean, variance, offset, scale, eps: _batch_norm_fn(x, mean, variance, offset, scale, eps),
                    name="batch_normalization", static=("eps",))
_batch_norm_plain = defop(lambda x, mean, variance, eps: _batch_norm_fn(x, mean, variance, None, None, eps),
                          name="batch_normalization", static=("eps",))


@export("nn.batch_normalization")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``(x - mean) / sqrt(variance + variance_epsilon) * scale + offset``, TensorFlow's formula (``tf.nn.batch_normalization``).

    ``offset`` and ``scale`` may be None.

    Example:
        >>> import tapejax as tf
        >>> tf.nn.batch_normalization(tf.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0).numpy().tolist()
        [-1.0, 1.0]
    """
    eps = float(variance_epsilon)
    if offset is None and scale is None:
        return _batch_norm_plain(x, mean, variance, eps=eps)
    x = _tensor(x)
    offset = Tensor(jnp.zeros((), x._value.dtype)) if offset is None else offset
    scale = Tensor(jnp.ones((), x._value.dtype)) if scale is None else scale
    return _batch_norm(x, mean, variance, offset, scale, eps=eps)


def _lrn_fn(x, depth_radius, bias, alpha, beta):
    sq = jnp.square(x)
    pad = [(0, 0)] * (x.ndim - 1) + [(depth_radius, depth_radius)]
    sqr_sum = jax.lax.reduce_window(jnp.pad(sq, pad), 0.0, jax.lax.add, (1,) * (x.ndim - 1) + (2 * depth_radius + 1,),
                                    (1,) * x.ndim, "VALID")
    return x / jnp.power(bias + alpha * sqr_sum, beta)


_lrn = defop(_lrn_fn, name="lrn", static=("depth_radius", "bias", "alpha", "beta"))


@export("nn.local_response_normalization", "nn.lrn")
def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):
    """Each value divided by ``(bias + alpha * sum of squares over the 2r+1 nearest channels) ** beta``
    (``tf.nn.local_response_normalization``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.local_response_normalization(tf.ones([1, 1, 1, 3]), depth_radius=1).numpy().ravel().tolist()
        [0.5773502588272095, 0.5, 0.5773502588272095]
    """
    x = _tensor(input)
    if x.ndim != 4:
        raise ValueError(f"input must be 4-dimensional, got shape {tuple(x.shape)}")
    return _lrn(x, depth_radius=int(depth_radius), bias=float(bias), alpha=float(alpha), beta=float(beta))


lrn = local_response_normalization


def _space_to_depth_fn(x, bs):
    b, h, w, c = x.shape
    x = x.reshape(b, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(b, h // bs, w // bs, bs * bs * c)


def _depth_to_space_fn(x, bs):
    b, h, w, c = x.shape
    x = x.reshape(b, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(b, h * bs, w * bs, c // (bs * bs))


_space_to_depth = defop(_space_to_depth_fn, name="space_to_depth", static=("bs",))
_depth_to_space = defop(_depth_to_space_fn, name="depth_to_space", static=("bs",))


def _block(x, block_size, data_format, what):
    bs = int(block_size)
    if bs < 2:
        raise ValueError(f"Value for attr 'block_size' of {bs} must be at least minimum 2")
    x = _tensor(x)
    if x.ndim != 4:
        raise ValueError(f"input rank should be 4 instead of {x.ndim}")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{what} takes data_format 'NHWC' or 'NCHW', got {data_format!r}.")
    return _to_last(x, data_format), bs


@export("nn.space_to_depth")
def space_to_depth(input, block_size, data_format="NHWC", name=None):
    """Moves ``block_size x block_size`` spatial blocks into the channels (``tf.nn.space_to_depth``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.space_to_depth(tf.reshape(tf.range(4.0), [1, 2, 2, 1]), 2).numpy().ravel().tolist()
        [0.0, 1.0, 2.0, 3.0]
    """
    x, bs = _block(input, block_size, data_format, "space_to_depth")
    h, w = x.shape[1], x.shape[2]
    if h % bs or w % bs:
        raise _invalid(f"Image width {w} and height {h} should be divisible by block_size: {bs} [Op:SpaceToDepth]")
    return _to_first(_space_to_depth(x, bs=bs), data_format)


@export("nn.depth_to_space")
def depth_to_space(input, block_size, data_format="NHWC", name=None):
    """Moves channels into ``block_size x block_size`` spatial blocks (``tf.nn.depth_to_space``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.depth_to_space(tf.reshape(tf.range(4.0), [1, 1, 1, 4]), 2).numpy()[0, :, :, 0].tolist()
        [[0.0, 1.0], [2.0, 3.0]]
    """
    x, bs = _block(input, block_size, data_format, "depth_to_space")
    if x.shape[-1] % (bs * bs):
        raise _invalid(f"Input depth dimension {x.shape[-1]} should be divisible by: {bs * bs} [Op:DepthToSpace]")
    return _to_first(_depth_to_space(x, bs=bs), data_format)


def _invalid(msg):
    return InvalidArgumentError(None, None, msg)


# ---------------------------------------------------------------- activations, losses, statistics
_crelu = defop(lambda x, axis: jnp.concatenate([jax.nn.relu(x), jax.nn.relu(-x)], axis=axis), name="crelu",
               static=("axis",))


@export("nn.crelu")
def crelu(features, axis=-1, name=None):
    """``concat([relu(x), relu(-x)], axis)`` (``tf.nn.crelu``).

    Example:
        >>> import tapejax as tf
        >>> tf.nn.crelu(tf.constant([1.0, -2.0])).numpy().tolist()
        [1.0, 0.0, 0.0, 2.0]
    """
    return _crelu(features, axis=int(axis))


_weighted_xent = defop(lambda labels, logits, pos_weight: (1 - labels) * logits + (1 + (pos_weight - 1) * labels) * (
    jnp.log1p(jnp.exp(-jnp.abs(logits))) + jax.nn.relu(-logits)), name="weighted_cross_entropy_with_logits")


@export("nn.weighted_cross_entropy_with_logits")
def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """Sigmoid cross-entropy with the positive term weighted by ``pos_weight``, TensorFlow's stable formula
    (``tf.nn.weighted_cross_entropy_with_logits``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.nn.weighted_cross_entropy_with_logits(tf.constant(1.0), tf.constant(0.0), 2.0).numpy())
        1.3862944
    """
    logits, labels = _tensor(logits), _tensor(labels)
    if tuple(logits.shape) != tuple(labels.shape):
        raise ValueError(f"`logits` and `labels` must have the same shape, received ({tuple(logits.shape)} vs "
                         f"{tuple(labels.shape)}).")
    return _weighted_xent(labels, logits, pos_weight)


_log_poisson = defop(lambda t, l, full: jnp.exp(l) - l * t + (jnp.where(
    (t >= 0) & (t <= 1), jnp.zeros_like(t),
    t * jnp.log(jnp.where(t > 0, t, 1)) - t + 0.5 * jnp.log(2 * np.pi * jnp.where(t > 0, t, 1))) if full else 0),
    name="log_poisson_loss", static=("full",))


@export("nn.log_poisson_loss")
def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """Poisson negative log-likelihood ``exp(log_input) - log_input * targets`` (plus Stirling's term with
    ``compute_full_loss``) (``tf.nn.log_poisson_loss``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.nn.log_poisson_loss(tf.constant(2.0), tf.constant(0.0)).numpy())
        1.0
    """
    t, li = _tensor(targets), _tensor(log_input)
    if t.shape.rank is not None and li.shape.rank is not None and tuple(t.shape) != tuple(li.shape):
        raise ValueError(f"log_input and targets must have the same shape ({tuple(li.shape)} vs {tuple(t.shape)})")
    return _log_poisson(t, li, full=bool(compute_full_loss))


@export("nn.normalize_moments")
def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Mean and variance from sufficient statistics (``tf.nn.normalize_moments``).

    Example:
        >>> import tapejax as tf
        >>> m, v = tf.nn.normalize_moments(2.0, tf.constant(4.0), tf.constant(10.0), None)
        >>> print(m.numpy(), v.numpy())
        2.0 1.0
    """
    divisor = 1 / _tensor(counts)
    shifted_mean = mean_ss * divisor
    mean = shifted_mean + shift if shift is not None else shifted_mean
    variance = variance_ss * divisor - shifted_mean * shifted_mean
    return mean, variance


@export("nn.sufficient_statistics")
def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """``(count, sum(x - shift), sum((x - shift)**2), shift)`` over ``axes`` (``tf.nn.sufficient_statistics``).

    Example:
        >>> import tapejax as tf
        >>> c, m, v, s = tf.nn.sufficient_statistics(tf.constant([1.0, 3.0]), [0])
        >>> print(c.numpy(), m.numpy(), v.numpy(), s)
        2.0 4.0 10.0 None
    """
    x = _tensor(x)
    axes = tuple(int(a) % x.ndim for a in axes)
    count = Tensor(jnp.asarray(np.prod([x.shape[a] for a in axes]), x._value.dtype))
    m = x - shift if shift is not None else x
    return count, _sum(m, axes=axes, keepdims=bool(keepdims)), _sum(m * m, axes=axes, keepdims=bool(keepdims)), shift


_sum = defop(lambda x, axes, keepdims: jnp.sum(x, axis=axes, keepdims=keepdims), name="sum", static=("axes", "keepdims"))


@export("nn.weighted_moments")
def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """Mean and variance of ``x`` over ``axes`` with each element counted ``frequency_weights`` times
    (``tf.nn.weighted_moments``).

    Example:
        >>> import tapejax as tf
        >>> m, v = tf.nn.weighted_moments(tf.constant([1.0, 3.0]), [0], tf.constant([3.0, 1.0]))
        >>> print(m.numpy(), v.numpy())
        1.5 0.75
    """
    x = _tensor(x)
    axes = tuple(int(a) % x.ndim for a in axes)
    w = frequency_weights if isinstance(frequency_weights, _TensorBase) else Tensor(to_array(frequency_weights, x.dtype))
    wx = _sum(w * x, axes=axes, keepdims=True)
    sw = _sum(w + x * 0, axes=axes, keepdims=True)
    divisor = 1 / sw   # TensorFlow: divide_no_nan
    mean = wx * divisor
    var = _sum(w * (x - mean) * (x - mean), axes=axes, keepdims=True) * divisor
    if not keepdims:
        mean, var = _squeeze(mean, axes=axes), _squeeze(var, axes=axes)
    return mean, var


_squeeze = defop(lambda x, axes: jnp.squeeze(x, axis=axes), name="squeeze", static=("axes",))


@export("nn.batch_norm_with_global_normalization")
def batch_norm_with_global_normalization(input=None, mean=None, variance=None, beta=None, gamma=None,
                                         variance_epsilon=None, scale_after_normalization=None, name=None, t=None, m=None,
                                         v=None):
    """``tf.nn.batch_normalization`` with ``gamma`` applied only if ``scale_after_normalization``
    (``tf.nn.batch_norm_with_global_normalization``).

    Example:
        >>> import tapejax as tf
        >>> out = tf.nn.batch_norm_with_global_normalization(tf.constant([1.0, 3.0]), tf.constant(2.0), tf.constant(1.0),
        ...                                                   tf.constant(0.5), tf.constant(2.0), 0.0, True)
        >>> out.numpy().tolist()
        [-1.5, 2.5]
    """
    return batch_normalization(input, mean, variance, beta, gamma if scale_after_normalization else None,
                               variance_epsilon)


@export("nn.pool")
def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None, dilations=None, name=None):
    """N-D max or average pooling (``tf.nn.pool``), ``pooling_type`` 'MAX' or 'AVG'.

    Example:
        >>> import tapejax as tf
        >>> tf.nn.pool(tf.reshape(tf.range(4.0), [1, 4, 1]), [2], 'MAX', strides=[2]).numpy().ravel().tolist()
        [1.0, 3.0]
    """
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"Invalid pooling_type: {pooling_type}")
    if dilations is not None and any(d != 1 for d in _window(dilations, len(window_shape), None, "dilations")):
        raise NotImplementedError("tapejax's tf.nn.pool takes dilations of 1 only.")
    x = _to_last(_tensor(input), data_format)
    nd = len(window_shape)
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"`padding` must be 'VALID' or 'SAME', got {padding!r}.")
    out = _pool(x, kind=pooling_type.lower(), ksize=_window(window_shape, nd, None, "window_shape"),
                strides=_window(strides, nd, None, "strides"), padding=padding.upper())
    return _to_first(out, data_format)


def _max_pool_argmax_fn(x, ksize, strides, padding, include_batch, out_dtype):
    b, h, w, c = x.shape
    flat = jnp.arange(h * w * c).reshape(1, h, w, c) + jnp.zeros((b, 1, 1, 1), np.int32)
    if include_batch:
        flat = flat + (jnp.arange(b) * h * w * c).reshape(b, 1, 1, 1)
    (kh, kw), (sh, sw) = ksize, strides
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + kh - h, 0), max((ow - 1) * sw + kw - w, 0)
        pads = [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)]
        x = jnp.pad(x, pads, constant_values=-jnp.inf)
        flat = jnp.pad(flat, pads, constant_values=-1)
    else:
        oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    vals, idxs = [], []
    for i in range(kh):        # TensorFlow's scan order: the first maximum wins
        for j in range(kw):
            window = (slice(None), slice(i, i + sh * (oh - 1) + 1, sh), slice(j, j + sw * (ow - 1) + 1, sw), slice(None))
            vals.append(x[window])
            idxs.append(flat[window])
    vals, idxs = jnp.stack(vals), jnp.stack(idxs)
    best = jnp.argmax(vals, axis=0)[None]
    return (jnp.take_along_axis(vals, best, 0)[0], jnp.take_along_axis(idxs, best, 0)[0].astype(out_dtype))


_max_pool_argmax = defop(_max_pool_argmax_fn, name="max_pool_with_argmax",
                         static=("ksize", "strides", "padding", "include_batch", "out_dtype"))


@export("nn.max_pool_with_argmax")
def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", output_dtype=np.int64,
                         include_batch_in_index=False, name=None):
    """2-D max pooling and the flat index of each maximum, ``(y * width + x) * channels + c``
    (``+ b * height * width * channels`` with ``include_batch_in_index``) (``tf.nn.max_pool_with_argmax``).

    Example:
        >>> import tapejax as tf
        >>> out, idx = tf.nn.max_pool_with_argmax(tf.reshape(tf.range(4.0), [1, 2, 2, 1]), 2, 2, 'VALID')
        >>> out.numpy().ravel().tolist(), idx.numpy().ravel().tolist()
        ([3.0], [3])
    """
    if data_format != "NHWC":
        raise ValueError(f"Data formats other than 'NHWC' are not yet supported for max_pool_with_argmax, got "
                         f"{data_format!r}")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"`padding` must be 'VALID' or 'SAME', got {padding!r}.")
    x = _tensor(input)
    dt = normalize.int_type(output_dtype)
    return _max_pool_argmax(x, ksize=_window(ksize, 2, None, "ksize"), strides=_window(strides, 2, None, "strides"),
                            padding=padding.upper(), include_batch=bool(include_batch_in_index), out_dtype=dt)


def _dilation2d_fn(x, f, strides, rates, padding):
    b, h, w, c = x.shape
    kh, kw = f.shape[0], f.shape[1]
    (sh, sw), (rh, rw) = strides, rates
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        ph, pw = max((oh - 1) * sh + eh - h, 0), max((ow - 1) * sw + ew - w, 0)
        x = jnp.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)], constant_values=-jnp.inf)
    else:
        oh, ow = (h - eh) // sh + 1, (w - ew) // sw + 1
    vals = []
    for i in range(kh):        # TensorFlow's scan order: the gradient goes to the first maximum
        for j in range(kw):
            y0, x0 = i * rh, j * rw
            vals.append(x[:, y0:y0 + sh * (oh - 1) + 1:sh, x0:x0 + sw * (ow - 1) + 1:sw, :] + f[i, j])
    vals = jnp.stack(vals)
    return jnp.take_along_axis(vals, jnp.argmax(vals, axis=0)[None], 0)[0]


_dilation2d = defop(_dilation2d_fn, name="dilation2d", static=("strides", "rates", "padding"))


def _morph_args(filters, strides, padding, data_format, dilations):
    if data_format != "NHWC":
        raise ValueError("tapejax's dilation2d/erosion2d take data_format='NHWC' only.")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError(f"`padding` must be 'VALID' or 'SAME', got {padding!r}.")
    return dict(strides=_window(strides, 2, None, "strides"), rates=_window(dilations, 2, None, "dilations"),
                padding=padding.upper())


@export("nn.dilation2d")
def dilation2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """Grayscale morphological dilation: the max over each window of ``input + filters``
    (``tf.nn.dilation2d``); filters ``[height, width, channels]``.

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
        >>> tf.nn.dilation2d(x, tf.zeros([2, 2, 1]), [1, 1, 1, 1], 'VALID', 'NHWC', [1, 1, 1, 1]).numpy().ravel().tolist()
        [3.0]
    """
    return _dilation2d(input, filters, **_morph_args(filters, strides, padding, data_format, dilations))


@export("nn.erosion2d")
def erosion2d(value, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """Grayscale morphological erosion: the min over each window of ``value - filters`` (filters
    reversed), TensorFlow's ``-dilation2d(-value, reverse(filters))`` (``tf.nn.erosion2d``).

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
        >>> tf.nn.erosion2d(x, tf.zeros([2, 2, 1]), [1, 1, 1, 1], 'VALID', 'NHWC', [1, 1, 1, 1]).numpy().ravel().tolist()
        [0.0]
    """
    f = _tensor(filters)
    neg = _negate(_tensor(value))
    return _negate(_dilation2d(neg, _flip2(f), **_morph_args(filters, strides, padding, data_format, dilations)))


_negate = defop(lambda x: -x, name="neg")
_flip2 = defop(lambda f: f[::-1, ::-1], name="reverse")
