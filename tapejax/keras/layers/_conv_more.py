"""Keras 3's depthwise and separable 2-D convolutions (``DepthwiseConv2D``, ``SeparableConv2D``),
``Conv3D`` and ``Conv1DTranspose``, NHWC / NDHWC, on ``lax.conv_general_dilated`` (one tape op per call, as ``Conv2D``)."""
import jax

from ..._core.tensor import TensorShape
from ...extend import defop
from .. import activations as _activations
from .. import constraints as _constraints
from .. import initializers as _initializers
from .. import regularizers as _regularizers
from ._base import Layer
from ._builtin import _Activated, _BuiltWeight, _CONV_CONFIG, _as_float, _channels_last, _one, _pair, _padding
from ._input_spec import InputSpec


def _depthwise(x, kernel, strides, padding, dilation):
    kh, kw, cin, mult = kernel.shape
    return jax.lax.conv_general_dilated(x, kernel.reshape(kh, kw, 1, cin * mult), strides, padding,
                                        rhs_dilation=dilation, dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=cin)


def _depthwise_fn(x, kernel, *bias, strides, padding, dilation, act):
    y = _depthwise(_as_float(x, kernel), kernel, strides, padding, dilation)
    return act(y + bias[0] if bias else y)


def _separable_fn(x, depthwise, pointwise, *bias, strides, padding, dilation, act):
    y = _depthwise(_as_float(x, depthwise), depthwise, strides, padding, dilation)
    y = jax.lax.conv_general_dilated(y, pointwise, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return act(y + bias[0] if bias else y)


def _conv3d_fn(x, kernel, *bias, strides, padding, dilation, act):
    y = jax.lax.conv_general_dilated(_as_float(x, kernel), kernel, strides, padding, rhs_dilation=dilation,
                                     dimension_numbers=("NDHWC", "DHWIO", "NDHWC"))
    return act(y + bias[0] if bias else y)


def _conv1d_transpose_fn(x, kernel, *bias, strides, padding, act):
    """TF's conv1d_transpose: the transpose of the 1-D convolution, for Keras's output length."""
    x = _as_float(x, kernel)
    k, filters, _ = kernel.shape
    n, s = x.shape[1], strides[0]
    length = n * s if padding == "SAME" else n * s + max(k - s, 0)

    def conv(z):
        return jax.lax.conv_general_dilated(z, kernel, strides, padding, dimension_numbers=("NWC", "WIO", "NWC"))

    (y,) = jax.linear_transpose(conv, jax.ShapeDtypeStruct((x.shape[0], length, filters), x.dtype))(x)
    return act(y + bias[0] if bias else y)


_STATIC = ("strides", "padding", "dilation", "act")
_conv1d_transpose_op = defop(_conv1d_transpose_fn, name="conv1d_transpose", static=("strides", "padding", "act"))
_depthwise_op = defop(_depthwise_fn, name="depthwise_conv2d", static=_STATIC)
_separable_op = defop(_separable_fn, name="separable_conv2d", static=_STATIC)
_conv3d_op = defop(_conv3d_fn, name="conv3d", static=_STATIC)


def _channels(layer, input_shape, ndim):
    channels = TensorShape(input_shape)[-1]
    if channels is None:
        raise ValueError(f"The channel dimension of the inputs to {type(layer).__name__} should be defined. "
                         "Found None.")
    layer.input_spec = InputSpec(min_ndim=ndim, axes={-1: channels})
    return channels


def _triple(v, what):
    if isinstance(v, int):
        return (v, v, v)
    v = tuple(int(e) for e in v)
    if len(v) != 3:
        raise ValueError(f"The `{what}` argument must be a tuple of 3 integers. Received: {what}={v}")
    return v


class DepthwiseConv2D(Layer):
    """Depthwise 2-D convolution: each input channel gets its own ``depth_multiplier`` filters
    (``kernel`` ``(kh, kw, channels, depth_multiplier)``; output channel ``c * depth_multiplier + m``).

    Args:
        kernel_size, strides, padding, dilation_rate: as in ``Conv2D``.
        depth_multiplier: filters per input channel.
        activation, use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer,
            bias_regularizer, depthwise_constraint, bias_constraint: the usual options.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.DepthwiseConv2D(3, depth_multiplier=2)
        >>> layer(tf.ones([4, 10, 10, 12])).shape
        TensorShape([4, 8, 8, 24])
        >>> layer.kernel.shape
        TensorShape([3, 3, 12, 2])
    """

    kernel = _BuiltWeight("kernel")
    _k_config_keys = ("depth_multiplier", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
                      "activation", "use_bias", "depthwise_initializer", "bias_initializer", "depthwise_regularizer",
                      "bias_regularizer", "activity_regularizer", "depthwise_constraint", "bias_constraint")

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1, data_format=None,
                 dilation_rate=(1, 1), activation=None, use_bias=True, depthwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _channels_last(data_format)
        self.depth_multiplier = int(depth_multiplier)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self._k_padding, self.padding = _padding(padding)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.activation = _activations.get(activation)
        self._k_act = _activations.pure(self.activation)
        self.use_bias = use_bias
        self.depthwise_initializer = _initializers.get(depthwise_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.depthwise_regularizer = _regularizers.get(depthwise_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.depthwise_constraint = _constraints.get(depthwise_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=4)

    def build(self, input_shape):
        channels = _channels(self, input_shape, 4)
        self._kernel = self.add_weight(name="kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
                                       initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
                                       constraint=self.depthwise_constraint)
        self.bias = self.add_weight(name="bias", shape=(channels * self.depth_multiplier,),
                                    initializer=self.bias_initializer, regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def call(self, inputs):
        ws = (self.kernel, self.bias) if self.use_bias else (self.kernel,)
        act = self._k_act if self._k_act is not None else _activations._identity
        y = _depthwise_op(inputs, *ws, strides=self.strides, padding=self._k_padding, dilation=self.dilation_rate,
                          act=act)
        return y if self._k_act is not None else self.activation(y)


class SeparableConv2D(_Activated, Layer):
    """Depthwise separable 2-D convolution: a depthwise convolution (``depthwise_kernel``
    ``(kh, kw, channels, depth_multiplier)``) then a 1x1 convolution (``pointwise_kernel``
    ``(1, 1, channels * depth_multiplier, filters)``), plus a bias.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.SeparableConv2D(4, 3, padding="same")
        >>> layer(tf.ones([1, 5, 5, 3])).shape
        TensorShape([1, 5, 5, 4])
        >>> [w.name for w in layer.weights]
        ['depthwise_kernel', 'pointwise_kernel', 'bias']
    """

    _k_config_keys = ("depth_multiplier", "filters", "kernel_size", "strides", "padding", "data_format",
                      "dilation_rate", "activation", "use_bias", "depthwise_initializer", "pointwise_initializer",
                      "bias_initializer", "depthwise_regularizer", "pointwise_regularizer", "bias_regularizer",
                      "activity_regularizer", "depthwise_constraint", "pointwise_constraint", "bias_constraint")

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _channels_last(data_format)
        self.filters = int(filters)
        self.depth_multiplier = int(depth_multiplier)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self._k_padding, self.padding = _padding(padding)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.activation = _activations.get(activation)
        self._k_act = _activations.pure(self.activation)
        self.use_bias = use_bias
        self.depthwise_initializer = _initializers.get(depthwise_initializer)
        self.pointwise_initializer = _initializers.get(pointwise_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.depthwise_regularizer = _regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = _regularizers.get(pointwise_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.depthwise_constraint = _constraints.get(depthwise_constraint)
        self.pointwise_constraint = _constraints.get(pointwise_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)
        self.input_spec = InputSpec(min_ndim=4)

    def build(self, input_shape):
        channels = _channels(self, input_shape, 4)
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel", shape=(1, 1, channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None
        self.built = True

    def call(self, inputs):
        ws = (self.depthwise_kernel, self.pointwise_kernel) + ((self.bias,) if self.use_bias else ())
        return self._post(_separable_op(inputs, *ws, strides=self.strides, padding=self._k_padding,
                                        dilation=self.dilation_rate, act=self._fused))


class Conv3D(_Activated, Layer):
    """3-D convolution, NDHWC, kernel ``(kd, kh, kw, in, filters)``.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.Conv3D(2, 3)
        >>> layer(tf.ones([4, 10, 10, 10, 3])).shape
        TensorShape([4, 8, 8, 8, 2])
    """

    kernel = _BuiltWeight("kernel")
    _k_config_keys = _CONV_CONFIG

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        if int(groups) != 1:
            raise NotImplementedError("Conv3D(groups>1) is not supported by tapejax yet.")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _channels_last(data_format)
        self.filters = int(filters)
        self.kernel_size = _triple(kernel_size, "kernel_size")
        self.strides = _triple(strides, "strides")
        self._k_padding, self.padding = _padding(padding)
        self.dilation_rate = _triple(dilation_rate, "dilation_rate")
        self.groups = 1
        self._set_kernel_options(activation, use_bias, kernel_initializer, bias_initializer,
                                 kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(min_ndim=5)

    def build(self, input_shape):
        channels = _channels(self, input_shape, 5)
        self._add_kernel_and_bias(self.kernel_size + (channels, self.filters), (self.filters,))
        self.built = True

    def call(self, inputs):
        ws = (self.kernel, self.bias) if self.use_bias else (self.kernel,)
        return self._post(_conv3d_op(inputs, *ws, strides=self.strides, padding=self._k_padding,
                                     dilation=self.dilation_rate, act=self._fused))


class Conv1DTranspose(_Activated, Layer):
    """Transposed 1-D convolution (TF's ``conv1d_transpose``), ``(N, T, C)`` inputs, kernel
    ``(k, filters, in)``; the output length is ``T * strides`` (``"same"``) or
    ``T * strides + max(k - strides, 0)`` (``"valid"``).

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.Conv1DTranspose(4, 3, strides=2)
        >>> layer(tf.ones([2, 5, 3])).shape
        TensorShape([2, 11, 4])
        >>> layer.kernel.shape
        TensorShape([3, 4, 3])
    """

    _k_config_keys = _CONV_CONFIG[:4] + ("output_padding",) + tuple(k for k in _CONV_CONFIG[4:] if k != "groups")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        if output_padding is not None:
            raise NotImplementedError("Conv1DTranspose(output_padding=...) is not supported by tapejax yet.")
        if _one(dilation_rate) != (1,):
            raise NotImplementedError("Conv1DTranspose(dilation_rate>1) is not supported by tapejax yet.")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _channels_last(data_format)
        self.filters = int(filters)
        self.kernel_size, self.strides, self.dilation_rate = _one(kernel_size), _one(strides), (1,)
        self._k_padding, self.padding = _padding(padding)
        self.output_padding = None
        self._set_kernel_options(activation, use_bias, kernel_initializer, bias_initializer,
                                 kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape):
        channels = _channels(self, input_shape, 3)
        self.input_spec = InputSpec(ndim=3, axes={-1: channels})
        self._add_kernel_and_bias(self.kernel_size + (self.filters, channels), (self.filters,), "kernel")
        self.built = True

    def call(self, inputs):
        ws = (self.kernel, self.bias) if self.use_bias else (self.kernel,)
        return self._post(_conv1d_transpose_op(inputs, *ws, strides=self.strides, padding=self._k_padding,
                                               act=self._fused))
