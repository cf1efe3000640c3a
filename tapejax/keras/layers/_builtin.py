"""Keras's built-in layers. Each layer call is ONE tape op.

The math is a pure JAX function ``f(x, *weights, **static)`` made a tape op with
``defop`` (compiled, so an eager call is one dispatch, and the tape holds one node
whose VJP is one compiled call). A known activation is fused into that function.
The pieces come from JAX (``lax.conv_general_dilated``, ``lax.reduce_window`` pooling,
``jax.nn``); gradients are JAX's. The layer ops with weights differentiate their
fused activation from the saved output (``_layer_vjp``), so the backward pass does
not repeat the layer's forward matmul or convolution.
"""
import functools
import random as _pyrandom

import jax
import jax.numpy as jnp
import numpy as np

from ... import ops as _ops
from ...ops import bounds as _bounds
from ..._core import dtypes as _dtypes, philox as _philox
from ..._core.indexed_slices import register_sparse_gradient
from ..._core.tensor import TensorShape
from ..._core.variable import Variable
from ...extend import defop
from .. import activations as _activations
from .. import initializers as _initializers
from .. import constraints as _constraints
from .. import regularizers as _regularizers
from ._base import Layer
from ._input_spec import InputSpec
from ... import random as random
from ... import sparse as _sparse
from ..._core.engine import read_raw


# ---------------------------------------------------------------------------
# Pure functions (the ops)
# ---------------------------------------------------------------------------

def _as_float(x, like):
    # Keras autocasts inputs to the layer's compute dtype.
    return x if x.dtype == like.dtype else x.astype(like.dtype)


def _dense_fn(x, kernel, *bias, act):
    y = jnp.matmul(_as_float(x, kernel), kernel)
    if bias:
        y = y + bias[0]
    return act(y)


def _conv_fn(x, kernel, *bias, strides, padding, dilation, groups, act):
    y = jax.lax.conv_general_dilated(_as_float(x, kernel), kernel, strides, padding, rhs_dilation=dilation,
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=groups)
    if bias:
        y = y + bias[0]
    return act(y)


def _deconv_out(n, k, s, padding):
    # keras.utils.conv_utils.deconv_output_length (no output_padding, no dilation).
    return n * s if padding == "SAME" else n * s + max(k - s, 0)


def _conv_transpose_fn(x, kernel, *bias, strides, padding, act):
    # TF's conv2d_transpose is the gradient of conv2d with respect to its input: the
    # transpose of that linear map, for the output size Keras computes.
    x = _as_float(x, kernel)
    kh, kw, filters, _ = kernel.shape
    out_shape = (x.shape[0], _deconv_out(x.shape[1], kh, strides[0], padding),
                 _deconv_out(x.shape[2], kw, strides[1], padding), filters)

    def conv(z):
        return jax.lax.conv_general_dilated(z, kernel, strides, padding,
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    (y,) = jax.linear_transpose(conv, jax.ShapeDtypeStruct(out_shape, x.dtype))(x)
    if bias:
        y = y + bias[0]
    return act(y)


def _window(x, init, op, pool_size, strides, padding):
    """``lax.reduce_window`` over the spatial axes of a channels-last batch (as flax's ``pool``)."""
    ones = (1,) * (x.ndim - len(pool_size) - 1)
    return jax.lax.reduce_window(x, init, op, ones + tuple(pool_size) + (1,), ones + tuple(strides) + (1,), padding)


def _pool_fn(x, kind, pool_size, strides, padding):
    if kind == "max":
        low = -jnp.inf if jnp.issubdtype(x.dtype, jnp.inexact) else int(jnp.iinfo(x.dtype).min)
        return _window(x, low, jax.lax.max, pool_size, strides, padding)
    # Keras averages over the valid (unpadded) window elements only: divide by the window
    # counts of a ones image (in the default float dtype, as flax's avg_pool), keep x's dtype.
    total = _window(x, 0, jax.lax.add, pool_size, strides, padding)
    counts = _window(jnp.ones((1,) + x.shape[1:-1] + (1,)), 0, jax.lax.add, pool_size, strides, padding)
    return (total / counts).astype(x.dtype)


def _global_pool_fn(x, kind, axes, keepdims):
    return (jnp.max if kind == "max" else jnp.mean)(x, axis=axes, keepdims=keepdims)


def _bn_shape(x, axis):
    return [x.shape[a] if a in axis else 1 for a in range(x.ndim)]


def _bn_train_fn(x, *params, axis, epsilon, center, scale):
    # Keras 3 (TensorFlow's current Keras) updates the moving variance with the plain
    # batch variance for every rank; Keras 2's fused kernel used a Bessel-corrected one.
    reduce = tuple(a for a in range(x.ndim) if a not in axis)
    mean = jnp.mean(x, axis=reduce)
    var = jnp.var(x, axis=reduce)
    return _bn_apply(x, mean, var, params, axis, epsilon, center, scale), mean, var


def _bn_infer_fn(x, mean, var, *params, axis, epsilon, center, scale):
    return _bn_apply(x, mean, var, params, axis, epsilon, center, scale)


def _bn_apply(x, mean, var, params, axis, epsilon, center, scale):
    shape = _bn_shape(x, axis)
    y = jax.nn.standardize(x, axis=tuple(a for a in range(x.ndim) if a not in axis),
                           mean=mean.reshape(shape), variance=var.reshape(shape), epsilon=epsilon)
    it = iter(params)
    if scale:
        y = y * next(it).reshape(shape)
    if center:
        y = y + next(it).reshape(shape)
    return y


def _ln_fn(x, *params, axis, epsilon, center, scale):
    mean = jnp.mean(x, axis=axis, keepdims=True)
    var = jnp.var(x, axis=axis, keepdims=True)
    y = jax.nn.standardize(x, axis=axis, mean=mean, variance=var, epsilon=epsilon)
    shape = [x.shape[a] if a in axis else 1 for a in range(x.ndim)]
    it = iter(params)
    if scale:
        y = y * next(it).reshape(shape)
    if center:
        y = y + next(it).reshape(shape)
    return y


def _dropout_fn(x, seed, rate, noise_shape):
    """TF's ``stateless_dropout`` as Keras 3 calls it: ``seed`` is the SeedGenerator state
    ``[seed, counter]``, taken modulo ``int32.max - 1``; the mask is ``stateless_random_uniform
    >= rate`` (Philox), the kept values ``x * float(1 / (1 - rate))``."""
    shape = tuple(x.shape[i] if d is None else d for i, d in enumerate(noise_shape)) if noise_shape else x.shape
    seed = jnp.mod(seed, np.iinfo(np.int32).max - 1).astype(jnp.int32)
    key, counter = _philox.key_counter_from_seed(seed[0], seed[1])
    # float64 uniforms need JAX's 64-bit mode (off in tapejax): the mask is drawn in float32.
    u_dtype = np.float32 if x.dtype == np.float64 else x.dtype
    u = _philox.uniform(key, counter, shape, u_dtype)
    scale = jnp.asarray(1.0 / (1.0 - rate), x.dtype)
    return jnp.where(u >= jnp.asarray(rate, u_dtype), x * scale, jnp.zeros((), x.dtype))


def _embedding_fn(table, ids):
    # an id out of range gives 0, as TensorFlow's GPU gather (on a CPU it was refused: Embedding.call)
    return jnp.take(table, ids.astype(jnp.int32), axis=0, mode="fill", fill_value=0)


def _flatten_fn(x):
    return jnp.reshape(x, (x.shape[0], -1))


def _reshape_fn(x, target):
    return jnp.reshape(x, (x.shape[0],) + target)


def _conv1d_fn(x, kernel, *bias, strides, padding, dilation, act):
    y = jax.lax.conv_general_dilated(_as_float(x, kernel), kernel, strides, padding, rhs_dilation=dilation,
                                     dimension_numbers=("NWC", "WIO", "NWC"))
    if bias:
        y = y + bias[0]
    return act(y)


def _upsample_fn(x, size):
    return jnp.repeat(jnp.repeat(x, size[0], axis=1), size[1], axis=2)


def _zero_pad_fn(x, padding):
    return jnp.pad(x, ((0, 0), padding[0], padding[1], (0, 0)))


def _rnn_fn(x, kernel, recurrent_kernel, *rest, cell, units, return_sequences, go_backwards, act, rec_act,
            reset_after=True, n_states=0, masked=False):
    # Keras's cell equations; the input projection of every step is one matmul before the scan.
    # A GRU with reset_after has a (2, 3 * units) bias: row 0 for the input, row 1 for the recurrence.
    # ``rest`` is the bias (if any) and then ``n_states`` initial states (zeros when none are given),
    # then, when ``masked``, the (batch, time) mask.
    mask, rest = (rest[-1], rest[:-1]) if masked else (None, rest)
    bias, states = rest[:len(rest) - n_states], rest[len(rest) - n_states:]
    x = _as_float(x, kernel)
    b_in = b_rec = 0.0
    if bias:
        if cell == "gru" and reset_after:
            b_in, b_rec = bias[0][0], bias[0][1]
        else:
            b_in = bias[0]
    xs = jnp.swapaxes(jnp.matmul(x, kernel) + b_in, 0, 1)   # (T, N, gates)
    if go_backwards:
        xs = xs[::-1]
    n = x.shape[0]
    zeros = jnp.zeros((n, units), x.dtype)

    def lstm(carry, xt):
        h, c = carry
        z = xt + h @ recurrent_kernel
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = rec_act(f) * c + rec_act(i) * act(g)
        h = rec_act(o) * act(c)
        return (h, c), h

    def simple(carry, xt):
        (h,) = carry
        h = act(xt + h @ recurrent_kernel)
        return (h,), h

    rk_zr, rk_h = recurrent_kernel[:, :2 * units], recurrent_kernel[:, 2 * units:]

    def gru(carry, xt):
        # gates z (update), r (reset), h (candidate)
        (h,) = carry
        x_z, x_r, x_h = jnp.split(xt, 3, axis=-1)
        if reset_after:
            r_z, r_r, r_h = jnp.split(h @ recurrent_kernel + b_rec, 3, axis=-1)
        else:
            r_z, r_r = jnp.split(h @ rk_zr, 2, axis=-1)
        z = rec_act(x_z + r_z)
        r = rec_act(x_r + r_r)
        hh = act(x_h + r * r_h) if reset_after else act(x_h + (r * h) @ rk_h)
        h = z * h + (1 - z) * hh
        return (h,), h

    step, init = {"lstm": (lstm, (zeros, zeros)), "gru": (gru, (zeros,)), "simple": (simple, (zeros,))}[cell]
    if states:
        init = tuple(_as_float(s, kernel) for s in states)
    if mask is not None:
        step, init, xs = _masked_step(step, init, xs, mask, go_backwards)
    final, hs = jax.lax.scan(step, init, xs)
    if mask is not None:
        final = final[:-1]   # the carried output
    out = jnp.swapaxes(hs, 0, 1) if return_sequences else final[0] if mask is None else hs[-1]
    return (out,) + tuple(final)


def _masked_step(step, init, xs, mask, go_backwards):
    """Keras 3's masked recurrence: a masked step keeps the states and repeats the last output."""
    ms = jnp.swapaxes(jnp.asarray(mask, bool), 0, 1)[:, :, None]   # (T, N, 1)
    if go_backwards:
        ms = ms[::-1]

    def masked(carry, inp):
        xt, mt = inp
        states, prev = carry[:-1], carry[-1]
        new, h = step(states, xt)
        new = tuple(jnp.where(mt, n, s) for n, s in zip(new, states))
        h = jnp.where(mt, h, prev)
        return new + (h,), h

    return masked, tuple(init) + (jnp.zeros_like(init[0]),), (xs, ms)


def _layer_vjp(fn):
    """The VJP rule of a layer op ``fn(x, kernel, *bias, act, ...) = act(linear(...))``.

    The activation is differentiated from the op's saved output where its derivative
    allows (relu, sigmoid, tanh, softmax, linear), and the linear part by ``jax.vjp``,
    whose forward result is unused and removed by XLA: the backward pass does not
    compute the layer's matmul or convolution again. Other activations are
    differentiated by ``jax.vjp`` at the recomputed pre-activation.
    """
    def vjp(ans, x, kernel, *bias, act, **static):
        def linear(*args):
            return fn(*args, act=_activations._identity, **static)

        def pull(g):
            pre, pull_linear = jax.vjp(linear, x, kernel, *bias)
            d = _activations._grad_from_output(act)
            g = jax.vjp(act, pre)[1](g)[0] if d is None else d(ans, g)
            return pull_linear(g)
        return pull
    return vjp


_dense = defop(_dense_fn, name="dense", static=("act",), vjp=_layer_vjp(_dense_fn))
_rnn = defop(_rnn_fn, name="rnn", static=("cell", "units", "return_sequences", "go_backwards", "act", "rec_act",
                                          "reset_after", "n_states", "masked"))
_conv1d = defop(_conv1d_fn, name="conv1d", static=("strides", "padding", "dilation", "act"),
                vjp=_layer_vjp(_conv1d_fn))
_upsample = defop(_upsample_fn, name="upsampling2d", static=("size",))
_zero_pad = defop(_zero_pad_fn, name="zero_padding2d", static=("padding",))
_conv = defop(_conv_fn, name="conv2d", static=("strides", "padding", "dilation", "groups", "act"),
              vjp=_layer_vjp(_conv_fn))
_conv_transpose = defop(_conv_transpose_fn, name="conv2d_transpose", static=("strides", "padding", "act"),
                        vjp=_layer_vjp(_conv_transpose_fn))
_pool = defop(_pool_fn, name="pooling2d", static=("kind", "pool_size", "strides", "padding"))
_global_pool = defop(_global_pool_fn, name="global_pooling", static=("kind", "axes", "keepdims"))
_bn_train = defop(_bn_train_fn, name="batch_norm_train",
                  static=("axis", "epsilon", "center", "scale"))
_bn_infer = defop(_bn_infer_fn, name="batch_norm", static=("axis", "epsilon", "center", "scale"))
_ln = defop(_ln_fn, name="layer_norm", static=("axis", "epsilon", "center", "scale"))
_dropout = defop(_dropout_fn, name="dropout", static=("rate", "noise_shape"))
_embedding = defop(_embedding_fn, name="embedding")
# As in Keras 3 on TF (a gather): the table's gradient is a tf.IndexedSlices of the looked-up rows.
register_sparse_gradient(_embedding)
_flatten = defop(_flatten_fn, name="flatten")
_reshape = defop(_reshape_fn, name="reshape", static=("target",))


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def _pair(v, what):
    if isinstance(v, (int, np.integer)):
        return (int(v), int(v))
    v = tuple(int(e) for e in v)
    if len(v) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers, got {v}.")
    return v


def _padding(p):
    """``(lax's padding, Keras's)``: ``('SAME', 'same')`` for ``'same'`` (any case)."""
    p = str(p).upper()
    if p not in ("VALID", "SAME"):
        raise ValueError(f"The `padding` argument must be 'valid' or 'same', got {p.lower()!r}.")
    return p, p.lower()


def _one(v):
    """A 1-D size argument as Keras 3 keeps it: ``3 -> (3,)``."""
    return (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(e) for e in v)


def _channels_last(data_format):
    """The layer's ``data_format`` (``'channels_last'``, the only one tapejax's layers take)."""
    if data_format not in (None, "channels_last"):
        raise ValueError("tapejax's Keras layers are channels-last (NHWC), like flax: pass "
                         "data_format='channels_last' and transpose NCHW inputs with "
                         "tf.transpose(x, [0, 2, 3, 1]).")
    return "channels_last"


def _unsupported(layer, **arguments):
    """Raises NotImplementedError for a Keras 3 argument tapejax does not implement, given a value."""
    for name, value in arguments.items():
        if value is not None and value is not False:
            raise NotImplementedError(f"{layer}({name}=...) is not supported by tapejax yet.")


# The configuration of Keras 3's convolutions (BaseConv.get_config), in its order.
_CONV_CONFIG = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "groups",
                "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
                "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint")


class _BuiltWeight:
    """Keras 3's ``kernel`` (``embeddings``) property of Dense, Conv1D/Conv2D and Embedding: the
    weight is the attribute ``_kernel``, so a checkpoint names it ``_kernel`` as TF 2.21's does
    (``dense/_kernel/.ATTRIBUTES/VARIABLE_VALUE``); reading it before the layer is built raises
    Keras's AttributeError, and it cannot be set."""

    def __init__(self, public):
        self.public, self.private = public, "_" + public
        self.checkpoint_attribute = self.private   # files of earlier versions saved ``kernel`` (tf.train)

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.private]
        except KeyError:
            raise AttributeError(f"You must build the layer before accessing `{self.public}`.") from None

    def __set__(self, obj, value):
        raise AttributeError(f"property '{self.public}' of '{type(obj).__name__}' object has no setter")


class _Attribute:
    """A plain instance attribute below a class where the name is a ``_BuiltWeight``
    (Conv2DTranspose keeps ``self.kernel``, its checkpoint key ``kernel``, as Keras 3's)."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{self.name}'") from None

    def __set__(self, obj, value):
        obj.__dict__[self.name] = value


class _Activated:
    """Shared by layers with an ``activation=`` argument: fuse it when it is a known op."""

    def _set_kernel_options(self, activation, use_bias, kernel_initializer, bias_initializer,
                            kernel_regularizer, bias_regularizer, kernel_constraint=None, bias_constraint=None):
        """The options every kernel (+ bias) layer takes: Dense, Conv1D, Conv2D."""
        self.activation = _activations.get(activation)
        self._k_act = _activations.pure(self.activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.kernel_regularizer = _regularizers.get(kernel_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)

    def _add_kernel_and_bias(self, kernel_shape, bias_shape, kernel_attribute="_kernel"):
        """Creates ``kernel`` (and ``bias`` when ``use_bias``) with the layer's options."""
        setattr(self, kernel_attribute, self.add_weight(
            name="kernel", shape=kernel_shape, initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint))
        self.bias = self.add_weight(name="bias", shape=bias_shape, initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer, constraint=self.bias_constraint) \
            if self.use_bias else None

    def _post(self, y):
        return y if self._k_act is not None else self.activation(y)

    @property
    def _fused(self):
        return self._k_act if self._k_act is not None else _activations._identity


# ---------------------------------------------------------------------------
# Core layers
# ---------------------------------------------------------------------------

class Dense(_Activated, Layer):
    """``activation(inputs @ kernel + bias)``; kernel ``(in, units)``, glorot_uniform / zeros.

    Args:
        units: output size.
        activation: a name (``'relu'``), a callable (``tf.nn.elu``) or None.
        use_bias: add a bias vector (default True).
        kernel_initializer, bias_initializer: names or initializer objects.
        kernel_regularizer, bias_regularizer: optional penalties, added to ``losses``.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.Dense(2, activation='relu', kernel_initializer='ones', name='dense')
        >>> layer(tf.constant([[1.0, -3.0]])).numpy().tolist()
        [[0.0, 0.0]]
        >>> [(v.name, v.path) for v in layer.trainable_variables]
        [('kernel', 'dense/kernel'), ('bias', 'dense/bias')]
    """

    supports_masking = True   # Keras 3 passes an input mask on

    kernel = _BuiltWeight("kernel")
    _k_config_keys = ("units", "activation", "use_bias", "kernel_initializer", "bias_initializer",
                      "kernel_regularizer", "bias_regularizer", "kernel_constraint", "bias_constraint",
                      "quantization_config")

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, lora_rank=None,
                 lora_alpha=None, quantization_config=None, **kwargs):
        # Keras 3 checks before the layer exists (no name taken): a NumPy integer is refused too.
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. Received: units={units}")
        _unsupported(type(self).__name__, lora_rank=lora_rank, quantization_config=quantization_config)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = units
        self._set_kernel_options(activation, use_bias, kernel_initializer, bias_initializer,
                                 kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        self.quantization_config = None
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        last = TensorShape(input_shape)[-1]
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be defined. Found None. "
                             "Give the model an input_shape with a known feature size.")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self._add_kernel_and_bias((last, self.units), (self.units,))
        self.built = True

    def call(self, inputs):
        if isinstance(inputs, _sparse.SparseTensor):   # Keras 3's matmul of a sparse input (TF backend)
            values = _ops.cast(inputs.values, self.kernel.dtype)
            y = _sparse.sparse_dense_matmul(inputs.with_values(values), self.kernel)
            y = y + self.bias if self.use_bias else y
            return self.activation(y) if self.activation is not None else y
        ws = (self.kernel, self.bias) if self.use_bias else (self.kernel,)
        return self._post(_dense(inputs, *ws, act=self._fused))



class Conv2D(_Activated, Layer):
    """2-D convolution, NHWC, kernel ``(kh, kw, in, filters)``, on ``lax.conv_general_dilated``.

    Args:
        filters: output channels.
        kernel_size: an int or a pair.
        strides: default 1.
        padding: ``'valid'`` (default) or ``'same'``.
        dilation_rate: default 1.
        groups: grouped convolution (default 1).
        activation, use_bias, kernel_initializer, bias_initializer: as in Dense.

    Example:
        >>> import tapejax as tf
        >>> conv = tf.keras.layers.Conv2D(16, [3, 3], activation='relu', input_shape=(None, None, 1))
        >>> conv(tf.ones([2, 28, 28, 1])).shape
        TensorShape([2, 26, 26, 16])
        >>> conv.kernel.shape
        TensorShape([3, 3, 1, 16])
    """

    kernel = _BuiltWeight("kernel")
    _k_config_keys = _CONV_CONFIG

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _channels_last(data_format)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self._k_padding, self.padding = _padding(padding)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.groups = int(groups)
        self._set_kernel_options(activation, use_bias, kernel_initializer, bias_initializer,
                                 kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(min_ndim=4)

    def build(self, input_shape):
        channels = TensorShape(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs to Conv2D should be defined (NHWC). "
                             "Found None. Pass input_shape=(height, width, channels).")
        if channels % self.groups:
            raise ValueError(f"The number of input channels ({channels}) must be divisible by groups "
                             f"({self.groups}).")
        self.input_spec = InputSpec(min_ndim=4, axes={-1: channels})
        self._add_kernel_and_bias(self.kernel_size + (channels // self.groups, self.filters), (self.filters,))
        self.built = True

    def call(self, inputs):
        ws = (self.kernel, self.bias) if self.use_bias else (self.kernel,)
        return self._post(_conv(inputs, *ws, strides=self.strides, padding=self._k_padding,
                                dilation=self.dilation_rate, groups=self.groups, act=self._fused))



class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution (TF's ``conv2d_transpose``), kernel ``(kh, kw, filters, in)``.

    Example:
        >>> import tapejax as tf
        >>> up = tf.keras.layers.Conv2DTranspose(4, 3, strides=2, padding='same')
        >>> up(tf.ones([1, 5, 5, 2])).shape
        TensorShape([1, 10, 10, 4])
        >>> up.kernel.shape
        TensorShape([3, 3, 4, 2])
    """

    kernel = _Attribute("kernel")
    _k_config_keys = _CONV_CONFIG[:4] + ("output_padding",) + tuple(k for k in _CONV_CONFIG[4:] if k != "groups")

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None,
                 data_format=None, dilation_rate=(1, 1), **kwargs):
        if output_padding is not None:
            raise NotImplementedError("Conv2DTranspose(output_padding=...) is not supported by tapejax yet; "
                                      "crop or pad the output with tf.pad / slicing instead.")
        if _pair(dilation_rate, "dilation_rate") != (1, 1):
            raise NotImplementedError("Conv2DTranspose(dilation_rate>1) is not supported by tapejax yet.")
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         **kwargs)
        self.output_padding = None

    def build(self, input_shape):
        channels = TensorShape(input_shape)[-1]
        if channels is None:
            raise ValueError("The channel dimension of the inputs to Conv2DTranspose should be defined.")
        self.input_spec = InputSpec(min_ndim=4, axes={-1: channels})
        self._add_kernel_and_bias(self.kernel_size + (self.filters, channels), (self.filters,), "kernel")
        self.built = True

    def call(self, inputs):
        ws = (self.kernel, self.bias) if self.use_bias else (self.kernel,)
        return self._post(_conv_transpose(inputs, *ws, strides=self.strides, padding=self._k_padding,
                                          act=self._fused))


class Conv1D(_Activated, Layer):
    """1-D convolution over steps, ``(N, T, C)`` inputs, kernel ``(k, in, filters)``.

    Example:
        >>> import tapejax as tf
        >>> conv = tf.keras.layers.Conv1D(4, 3)
        >>> conv(tf.ones([2, 10, 3])).shape, conv.kernel.shape
        (TensorShape([2, 8, 4]), TensorShape([3, 3, 4]))
    """

    kernel = _BuiltWeight("kernel")

    _k_config_keys = _CONV_CONFIG

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1,
                 groups=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, **kwargs):
        if int(groups) != 1:
            raise NotImplementedError("Conv1D(groups>1) is not supported by tapejax yet.")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _channels_last(data_format)
        self.filters = int(filters)
        self.kernel_size, self.strides, self.dilation_rate = _one(kernel_size), _one(strides), _one(dilation_rate)
        self.groups = 1
        self._k_padding, self.padding = _padding(padding)
        self._set_kernel_options(activation, use_bias, kernel_initializer, bias_initializer,
                                 kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        self.input_spec = InputSpec(min_ndim=3)

    def build(self, input_shape):
        channels = TensorShape(input_shape)[-1]
        self.input_spec = InputSpec(min_ndim=3, axes={-1: channels})
        self._add_kernel_and_bias(self.kernel_size + (channels, self.filters), (self.filters,))
        self.built = True

    def call(self, inputs):
        ws = (self.kernel, self.bias) if self.use_bias else (self.kernel,)
        return self._post(_conv1d(inputs, *ws, strides=self.strides, padding=self._k_padding,
                                  dilation=self.dilation_rate, act=self._fused))


class UpSampling2D(Layer):
    """Repeats rows and columns ``size`` times (nearest neighbour).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.UpSampling2D()(tf.ones([1, 2, 3, 1])).shape
        TensorShape([1, 4, 6, 1])
    """

    _k_config_keys = ("size", "data_format", "interpolation")

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        if interpolation != "nearest":
            raise NotImplementedError("UpSampling2D supports interpolation='nearest' in tapejax; for "
                                      "bilinear resizing use tf.image.resize.")
        self.size = _pair(size, "size")
        self.interpolation = interpolation

    def call(self, inputs):
        return _upsample(inputs, size=self.size)


class ZeroPadding2D(Layer):
    """Pads rows and columns with zeros: ``padding`` an int, a pair, or ``((top, bottom), (left, right))``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.ZeroPadding2D(1)(tf.ones([1, 2, 2, 1])).shape
        TensorShape([1, 4, 4, 1])
    """

    _k_config_keys = ("padding", "data_format")

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        if isinstance(padding, (int, np.integer)):
            padding = ((int(padding),) * 2,) * 2
        elif all(isinstance(p, (int, np.integer)) for p in padding):
            padding = ((int(padding[0]),) * 2, (int(padding[1]),) * 2)
        self.padding = tuple(tuple(int(e) for e in p) for p in padding)

    def call(self, inputs):
        return _zero_pad(inputs, padding=self.padding)


# The configuration of Keras 3's pooling layers (BasePooling.get_config), in its order.
_POOLING_CONFIG = ("pool_size", "padding", "strides", "data_format")


class _Pooling2D(Layer):
    _kind = None
    _k_config_keys = _POOLING_CONFIG

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self._k_padding, self.padding = _padding(padding)

    def call(self, inputs):
        return _pool(inputs, kind=self._kind, pool_size=self.pool_size, strides=self.strides,
                     padding=self._k_padding)


class MaxPooling2D(_Pooling2D):
    """Max over ``pool_size`` windows (``lax.reduce_window``); strides default to the pool size.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.MaxPooling2D()(tf.ones([1, 4, 4, 3])).shape
        TensorShape([1, 2, 2, 3])
    """

    _kind = "max"


class AveragePooling2D(_Pooling2D):
    """Mean over ``pool_size`` windows (``lax.reduce_window``, padding excluded as in Keras).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.AveragePooling2D(2)(tf.ones([1, 4, 4, 1])).numpy().tolist()
        [[[[1.0], [1.0]], [[1.0], [1.0]]]]
    """

    _kind = "avg"


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D


_pool1d = defop(_pool_fn, name="pooling1d", static=("kind", "pool_size", "strides", "padding"))


class _Pooling1D(Layer):
    _kind = None
    _k_config_keys = _POOLING_CONFIG

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.pool_size = _one(pool_size)
        self.strides = self.pool_size if strides is None else _one(strides)
        self._k_padding, self.padding = _padding(padding)

    def call(self, inputs):
        return _pool1d(inputs, kind=self._kind, pool_size=self.pool_size, strides=self.strides,
                       padding=self._k_padding)


class MaxPooling1D(_Pooling1D):
    """Max over windows of steps, ``(N, T, C)`` inputs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.MaxPooling1D()(tf.ones([1, 6, 2])).shape
        TensorShape([1, 3, 2])
    """

    _kind = "max"


class AveragePooling1D(_Pooling1D):
    """Mean over windows of steps, ``(N, T, C)`` inputs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.AveragePooling1D(3)(tf.ones([1, 6, 2])).shape
        TensorShape([1, 2, 2])
    """

    _kind = "avg"


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D


class _GlobalPooling(Layer):
    _kind = None
    _axes = None
    _k_config_keys = ("data_format", "keepdims")

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        return _global_pool(inputs, kind=self._kind, axes=self._axes, keepdims=self.keepdims)

    def compute_mask(self, inputs, previous_mask=None):
        return None


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over height and width: ``(N, H, W, C) -> (N, C)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.GlobalAveragePooling2D()(tf.ones([2, 5, 5, 3])).shape
        TensorShape([2, 3])
    """

    _kind, _axes = "avg", (1, 2)


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over height and width: ``(N, H, W, C) -> (N, C)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.GlobalMaxPooling2D()(tf.ones([2, 5, 5, 3])).shape
        TensorShape([2, 3])
    """

    _kind, _axes = "max", (1, 2)


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over steps: ``(N, T, C) -> (N, C)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.GlobalAveragePooling1D()(tf.ones([2, 5, 3])).shape
        TensorShape([2, 3])
    """

    _kind, _axes = "avg", (1,)
    supports_masking = True

    def call(self, inputs, mask=None):
        """The mean over the steps the mask keeps (all of them without one), as Keras 3."""
        if mask is None:
            return super().call(inputs)
        m = _ops.expand_dims(_ops.cast(mask, inputs.dtype), 2)
        return (_ops.reduce_sum(inputs * m, axis=1, keepdims=self.keepdims)
                / _ops.reduce_sum(m, axis=1, keepdims=self.keepdims))


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over steps: ``(N, T, C) -> (N, C)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.GlobalMaxPooling1D()(tf.ones([2, 5, 3])).shape
        TensorShape([2, 3])
    """

    _kind, _axes = "max", (1,)


GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D


class Flatten(Layer):
    """Flattens each example: ``(N, ...) -> (N, prod(...))``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Flatten()(tf.ones([2, 3, 4])).shape
        TensorShape([2, 12])
    """

    _k_config_keys = ("data_format",)

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _channels_last(data_format)

    def call(self, inputs):
        return _flatten(inputs)


class Reshape(Layer):
    """Reshapes each example to ``target_shape`` (one ``-1`` allowed).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Reshape((3, 4))(tf.ones([2, 12])).shape
        TensorShape([2, 3, 4])
    """

    _k_config_keys = ("target_shape",)

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def call(self, inputs):
        return _reshape(inputs, target=self.target_shape)


_NEXT_SEED = np.array([0, 1], np.int64)


def _seed_generator_state(seed):
    """Keras 3's ``SeedGenerator(seed)`` state: a non-trainable ``[seed, 0]`` variable, the seed
    drawn from Python's ``random`` when not given (as an unseeded initializer draws its own).

    It is not one of the layer's weights (Keras lists it in ``layer.variables`` only)."""
    if seed is None:
        seed = _pyrandom.randint(1, int(1e9))
    elif not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed}")
    return Variable(np.array([seed, 0], np.int64), trainable=False, name="seed_generator_state")


class Dropout(Layer):
    """Zeroes inputs with probability ``rate`` when ``training=True``, scaling the rest by ``1/(1-rate)``.

    At inference (``training`` False or not given) it is the identity. As in Keras 3, the layer
    owns a seed generator made with it (``seed``, or one drawn from Python's ``random``, so
    ``tf.keras.utils.set_random_seed`` gives TensorFlow's masks and the next layers' weights);
    each training call takes the next ``[seed, counter]`` pair for TF's ``stateless_dropout``.

    Example:
        >>> import tapejax as tf
        >>> drop = tf.keras.layers.Dropout(0.5)
        >>> drop(tf.ones([4])).numpy().tolist()
        [1.0, 1.0, 1.0, 1.0]
        >>> sorted(set(drop(tf.ones([100]), training=True).numpy().tolist()))
        [0.0, 2.0]
    """

    supports_masking = True   # Keras 3 passes an input mask on
    # Keras 3 saves no SeedGenerator state (weights files, tf.train.Checkpoint): loading weights
    # leaves the layer's random stream where it is.
    _TF_CHECKPOINT_IGNORED_PROPERTIES = frozenset({"_k_seed_state"})
    _k_config_keys = ("rate", "seed", "noise_shape")

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        rate = float(rate)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 "
                             f"and 1. Received: rate={rate}")
        self.rate = rate
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        if rate > 0:
            self._k_seed_state = _seed_generator_state(seed)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        state = self._k_seed_state
        seed = state.read_value()
        state.assign_add(_NEXT_SEED)
        return _dropout(inputs, seed, rate=self.rate, noise_shape=self.noise_shape)



class Activation(Layer):
    """Applies an activation: ``Activation('sigmoid')``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Activation('relu')(tf.constant([-1.0, 2.0])).numpy().tolist()
        [0.0, 2.0]
    """

    supports_masking = True   # Keras 3 passes an input mask on

    _k_config_keys = ("activation",)

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = _activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)


class ReLU(Layer):
    """``min(max_value, x)`` for ``x > threshold``, else ``negative_slope * (x - threshold)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.ReLU(max_value=1.0)(tf.constant([-1.0, 0.5, 3.0])).numpy().tolist()
        [0.0, 0.5, 1.0]
    """

    _k_config_keys = ("max_value", "negative_slope", "threshold")

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value = max_value
        self.negative_slope = float(negative_slope)
        self.threshold = float(threshold)

    def call(self, inputs):
        return _activations.relu(inputs, alpha=self.negative_slope, max_value=self.max_value,
                                 threshold=self.threshold)


class LeakyReLU(Layer):
    """``x`` if positive else ``alpha * x`` (Keras default ``alpha=0.3``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.LeakyReLU()(tf.constant([-1.0, 2.0])).numpy().tolist()
        [-0.30000001192092896, 2.0]
    """

    _k_config_keys = ("negative_slope",)

    def __init__(self, alpha=0.3, negative_slope=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha if negative_slope is None else negative_slope)

    @property
    def negative_slope(self):
        """Keras 3's name of ``alpha``."""
        return self.alpha

    def call(self, inputs):
        return _activations.leaky_relu(inputs, alpha=self.alpha)


class Softmax(Layer):
    """Softmax over ``axis`` (default -1).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Softmax()(tf.constant([[1.0, 1.0]])).numpy().tolist()
        [[0.5, 0.5]]
    """

    _k_config_keys = ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return _activations.softmax(inputs, axis=self.axis)


def _norm_axes(axis, ndim):
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % ndim for a in axis))


def _set_scale_options(layer, beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint):
    """The regularizers and constraints of a normalization's ``beta`` and ``gamma``."""
    layer.beta_regularizer = _regularizers.get(beta_regularizer)
    layer.gamma_regularizer = _regularizers.get(gamma_regularizer)
    layer.beta_constraint = _constraints.get(beta_constraint)
    layer.gamma_constraint = _constraints.get(gamma_constraint)


def _add_scale_weights(layer, shape):
    """A normalization's ``gamma`` (when ``scale``) and ``beta`` (when ``center``), with its options."""
    layer.gamma = layer.add_weight(name="gamma", shape=shape, initializer=layer.gamma_initializer,
                                   regularizer=layer.gamma_regularizer, constraint=layer.gamma_constraint) \
        if layer.scale else None
    layer.beta = layer.add_weight(name="beta", shape=shape, initializer=layer.beta_initializer,
                                  regularizer=layer.beta_regularizer, constraint=layer.beta_constraint) \
        if layer.center else None


class BatchNormalization(Layer):
    """Normalizes with batch statistics when training, moving statistics otherwise.

    ``gamma``/``beta`` are trainable; ``moving_mean``/``moving_variance`` are
    non-trainable Variables updated on every ``training=True`` call as
    ``moving -= (moving - batch_stat) * (1 - momentum)`` (no gradient flows
    through the update). The training call is one op returning the output and the
    batch statistics. A frozen layer (``trainable=False``) runs in inference mode,
    as in TF2.

    Args:
        axis: the feature axis (default -1).
        momentum: default 0.99.
        epsilon: default 1e-3.
        center, scale: use ``beta`` / ``gamma`` (default True).

    Example:
        >>> import tapejax as tf
        >>> bn = tf.keras.layers.BatchNormalization()
        >>> y = bn(tf.constant([[0.0], [2.0]]), training=True)
        >>> [round(float(v), 4) for v in y[:, 0]]
        [-0.9995, 0.9995]
        >>> round(float(bn.moving_mean[0]), 4)
        0.01
    """

    _k_config_keys = ("axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
                      "moving_mean_initializer", "moving_variance_initializer", "beta_regularizer",
                      "gamma_regularizer", "beta_constraint", "gamma_constraint", "synchronized", "renorm",
                      "renorm_clipping", "renorm_momentum")

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, synchronized=False, fused=None, virtual_batch_size=None, adjustment=None,
                 **kwargs):
        super().__init__(**kwargs)
        # Keras 3 names its weights before build: None until then.
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None
        self.axis = axis
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = _initializers.get(beta_initializer)
        self.gamma_initializer = _initializers.get(gamma_initializer)
        self.moving_mean_initializer = _initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = _initializers.get(moving_variance_initializer)
        _set_scale_options(self, beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint)
        # One device: a synchronized layer's statistics are its own (Keras 3 on one replica).
        self.synchronized = bool(synchronized)
        self.renorm, self.renorm_clipping, self.renorm_momentum = renorm, renorm_clipping, renorm_momentum
        self.fused = fused

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        self._k_axes = _norm_axes(self.axis, len(input_shape))
        shape = tuple(input_shape[a] for a in self._k_axes)
        if None in shape:
            raise ValueError(f"Axis {self.axis} of the input to BatchNormalization should have a defined "
                             f"dimension, but the layer received an input with shape {input_shape}.")
        _add_scale_weights(self, shape)
        self.moving_mean = self.add_weight(name="moving_mean", shape=shape, initializer=self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=shape,
                                               initializer=self.moving_variance_initializer, trainable=False)
        self.built = True

    def _params(self):
        return tuple(p for p in (self.gamma, self.beta) if p is not None)

    def call(self, inputs, training=None):
        static = dict(axis=self._k_axes, epsilon=self.epsilon, center=self.center, scale=self.scale)
        if training and self.trainable:
            y, mean, var = _bn_train(inputs, *self._params(), **static)
            decay = 1.0 - self.momentum
            for moving, stat in ((self.moving_mean, mean), (self.moving_variance, var)):
                cur = read_raw(moving)
                moving.assign(cur - (cur - stat._value.reshape(cur.shape)) * decay)
            return y
        return _bn_infer(inputs, self.moving_mean, self.moving_variance, *self._params(), **static)



class LayerNormalization(Layer):
    """Normalizes each example over ``axis`` (default -1), then ``gamma * x + beta`` (epsilon 1e-3).

    Example:
        >>> import tapejax as tf
        >>> y = tf.keras.layers.LayerNormalization()(tf.constant([[1.0, 3.0]]))
        >>> [round(v, 4) for v in y.numpy()[0].tolist()]
        [-0.9995, 0.9995]
    """

    _k_config_keys = ("axis", "epsilon", "center", "scale", "rms_scaling", "beta_initializer", "gamma_initializer",
                      "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint")

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, **kwargs):
        _unsupported("LayerNormalization", rms_scaling=rms_scaling)
        super().__init__(**kwargs)
        # Keras 3 keeps a list of axes as a list, a tuple as a tuple
        self.axis = list(axis) if isinstance(axis, list) else axis
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.rms_scaling = False
        self.beta_initializer = _initializers.get(beta_initializer)
        self.gamma_initializer = _initializers.get(gamma_initializer)
        _set_scale_options(self, beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        self._k_axes = _norm_axes(self.axis, len(input_shape))
        shape = tuple(input_shape[a] for a in self._k_axes)
        _add_scale_weights(self, shape)
        self.built = True

    def call(self, inputs):
        params = tuple(p for p in (self.gamma, self.beta) if p is not None)
        return _ln(inputs, *params, axis=self._k_axes, epsilon=self.epsilon, center=self.center,
                   scale=self.scale)



class Embedding(Layer):
    """Looks up rows of ``embeddings`` ``(input_dim, output_dim)`` (uniform ±0.05 init).

    Example:
        >>> import tapejax as tf
        >>> emb = tf.keras.layers.Embedding(10, 4)
        >>> emb(tf.constant([[1, 2, 3]])).shape
        TensorShape([1, 3, 4])
    """

    embeddings = _BuiltWeight("embeddings")
    _k_config_keys = ("input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer",
                      "activity_regularizer", "embeddings_constraint", "mask_zero", "quantization_config")

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, weights=None, lora_rank=None, lora_alpha=None,
                 quantization_config=None, input_length=None, **kwargs):
        for arg, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"`{arg}` must be a positive integer. Received: {arg}={value} "
                                 f"(of type {type(value).__name__}).")
        if input_length is not None:
            kwargs.setdefault("input_shape", (input_length,))
        _unsupported("Embedding", lora_rank=lora_rank, quantization_config=quantization_config)
        super().__init__(**kwargs)   # activity_regularizer among them, as Keras 3
        self.input_dim = input_dim
        self.output_dim = output_dim
        if embeddings_initializer == "uniform":
            embeddings_initializer = _initializers.RandomUniform()
        self.embeddings_initializer = _initializers.get(embeddings_initializer)
        self.embeddings_regularizer = _regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = _constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.quantization_config = None
        if weights is not None:   # Keras 3: built at once, with these initial values
            self._k_maybe_build((None,))
            self.set_weights(weights if isinstance(weights, list) else [weights])

    def build(self, input_shape):
        self._embeddings = self.add_weight(name="embeddings", shape=(self.input_dim, self.output_dim),
                                           initializer=self.embeddings_initializer,
                                           regularizer=self.embeddings_regularizer,
                                           constraint=self.embeddings_constraint)
        self.built = True

    def call(self, inputs):
        # Keras 3 on TensorFlow: tf.gather's check
        return _bounds.gather(inputs, self.input_dim, then=lambda: _embedding(self.embeddings, inputs))

    def compute_mask(self, inputs, previous_mask=None):
        """With ``mask_zero``, the positions of non-zero ids (``inputs != 0``), for the layers after."""
        return _ops.not_equal(inputs, 0) if self.mask_zero else None



# ---------------------------------------------------------------------------
# Merging
# ---------------------------------------------------------------------------

class _Merge(Layer):
    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer ({type(self).__name__}) should be called on a list of at least 2 "
                             "inputs: layer([x1, x2]).")
        return self._merge(list(inputs))


class Concatenate(_Merge):
    """Concatenates a list of inputs along ``axis`` (default -1).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Concatenate()([tf.ones([2, 3]), tf.ones([2, 1])]).shape
        TensorShape([2, 4])
    """

    _k_config_keys = ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def _merge(self, xs):
        # Keras 3's ops.concatenate: inputs of different dtypes meet at their result type
        # (int64 and float32: float32), where tf.concat would raise
        dtypes = {_dtypes.as_dtype(x.dtype) for x in xs}
        if len(dtypes) > 1 and _dtypes.string not in dtypes:
            common = functools.reduce(jnp.promote_types, [d.as_numpy_dtype for d in dtypes])
            xs = [_ops.cast(x, common) for x in xs]
        return _ops.concat(xs, axis=self.axis)


class Add(_Merge):
    """Sums a list of inputs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Add()([tf.ones([2]), tf.ones([2])]).numpy().tolist()
        [2.0, 2.0]
    """

    def _merge(self, xs):
        return _ops.add_n(xs)


class Subtract(_Merge):
    """``inputs[0] - inputs[1]``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Subtract()([tf.ones([2]), tf.ones([2])]).numpy().tolist()
        [0.0, 0.0]
    """

    def _merge(self, xs):
        return _ops.subtract(xs[0], xs[1])


class Multiply(_Merge):
    """Elementwise product of a list of inputs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Multiply()([tf.fill([2], 2.0), tf.fill([2], 3.0)]).numpy().tolist()
        [6.0, 6.0]
    """

    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = _ops.multiply(out, x)
        return out


class Average(_Merge):
    """Elementwise mean of a list of inputs.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Average()([tf.fill([2], 2.0), tf.fill([2], 4.0)]).numpy().tolist()
        [3.0, 3.0]
    """

    def _merge(self, xs):
        return _ops.multiply(_ops.add_n(xs), 1.0 / len(xs))


def concatenate(inputs, axis=-1, **kwargs):
    """Keras's functional form of :class:`Concatenate`: ``Concatenate(axis, **kwargs)(inputs)``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.concatenate([tf.ones([1, 2]), tf.zeros([1, 1])])
        <tf.Tensor: shape=(1, 3), dtype=float32, numpy=array([[1., 1., 0.]], dtype=float32)>
    """
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs, **kwargs):
    """Keras's functional form of :class:`Add` (``Add(**kwargs)(inputs)``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.add([tf.ones([1, 2]), tf.ones([1, 2])]).numpy()
        array([[2., 2.]], dtype=float32)
    """
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """Keras's functional form of :class:`Subtract` (``Subtract(**kwargs)(inputs)``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.subtract([tf.ones([1, 2]), tf.ones([1, 2])]).numpy()
        array([[0., 0.]], dtype=float32)
    """
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """Keras's functional form of :class:`Multiply` (``Multiply(**kwargs)(inputs)``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.multiply([tf.ones([1, 2]) * 2, tf.ones([1, 2]) * 3]).numpy()
        array([[6., 6.]], dtype=float32)
    """
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """Keras's functional form of :class:`Average` (``Average(**kwargs)(inputs)``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.average([tf.ones([1, 2]), tf.zeros([1, 2])]).numpy()
        array([[0.5, 0.5]], dtype=float32)
    """
    return Average(**kwargs)(inputs)


class Lambda(Layer):
    """Wraps a function of tensors as a layer (so it can take part in functional models).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Lambda(lambda t: t * 2.0)(tf.ones([2])).numpy().tolist()
        [2.0, 2.0]
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = arguments or {}

    def call(self, inputs):
        return self.function(inputs, **self.arguments)


# ---------------------------------------------------------------------------
# Recurrent
# ---------------------------------------------------------------------------

# Keras 3's RNN layer configuration (RNN.get_config without its cell), then the LSTM's own.
_RNN_BASE_CONFIG = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll", "zero_output_for_mask")
_LSTM_CONFIG = _RNN_BASE_CONFIG + (
    "units", "activation", "recurrent_activation", "use_bias", "kernel_initializer", "recurrent_initializer",
    "bias_initializer", "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
    "activity_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
    "recurrent_dropout", "seed")


class _RNN(Layer):
    _cell = None
    _gates = 1
    _k_config_keys = _LSTM_CONFIG

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, use_cudnn="auto", zero_output_for_mask=False,
                 time_major=False, **kwargs):
        if stateful or dropout or recurrent_dropout or time_major:
            raise NotImplementedError(f"{type(self).__name__}(stateful / dropout / recurrent_dropout / "
                                      "time_major) is not supported by tapejax yet; apply "
                                      "tf.keras.layers.Dropout to the inputs or outputs instead.")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        _set_cell_activations(self, activation, recurrent_activation, "layers")
        self.use_bias = use_bias
        _set_cell_initializers(self, kernel_initializer, recurrent_initializer, bias_initializer, seed)
        _set_cell_penalties(self, kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                            recurrent_constraint, bias_constraint)
        self.unit_forget_bias = unit_forget_bias
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful, self.unroll = False, bool(unroll)   # unrolling is lax.scan's business
        # Keras 3: with a mask, a masked step's sequence output is zeros instead of the last output
        # (Bidirectional sets it on its layers that return sequences)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.dropout = self.recurrent_dropout = 0.0

    def build(self, input_shape):
        features = TensorShape(input_shape)[-1]
        g = self._gates * self.units
        self.kernel = self.add_weight(name="kernel", shape=(features, g), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel", shape=(self.units, g),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            init = self.bias_initializer
            if self._cell == "lstm" and self.unit_forget_bias:
                u, base = self.units, self.bias_initializer

                def init(shape, dtype=None):
                    b = np.asarray(base((u,), dtype=dtype))
                    return np.concatenate([b, np.ones((u,), b.dtype), np.asarray(base((2 * u,), dtype=dtype))])
            self.bias = self.add_weight(name="bias", shape=self._bias_shape(g), initializer=init,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        self.built = True

    def _bias_shape(self, g):
        return (g,)

    def _cell_options(self):
        """Static cell options beyond the common ones (the GRU's reset_after)."""
        return {}

    def call(self, inputs, initial_state=None, mask=None, training=None):
        outs = _run_cell(self, inputs, initial_state, return_sequences=self.return_sequences,
                         go_backwards=self.go_backwards, mask=mask)
        if mask is not None and self.zero_output_for_mask and self.return_sequences:
            kept = _ops.reverse(mask, axis=[1]) if self.go_backwards else mask
            outs = (outs[0] * _ops.expand_dims(_ops.cast(kept, outs[0].dtype), -1),) + tuple(outs[1:])
        return list(outs) if self.return_state else outs[0]

    def compute_mask(self, inputs, previous_mask=None):
        """The input mask goes on with the sequence output (Keras 3), not with the last step."""
        return previous_mask if self.return_sequences else None



def _set_cell_activations(cell, activation, recurrent_activation, what):
    """A recurrent layer's or cell's activations, and their pure forms for the one compiled op."""
    cell.activation = _activations.get(activation)
    cell.recurrent_activation = _activations.get(recurrent_activation)
    cell._k_act = _activations.pure(cell.activation)
    cell._k_rec_act = _activations.pure(cell.recurrent_activation)
    if cell._k_act is None or cell._k_rec_act is None:
        raise ValueError(f"Recurrent {what} take built-in activations (names such as 'tanh', 'sigmoid' "
                         "or tf.nn ops), since the cell runs inside one compiled op.")


def _set_cell_initializers(cell, kernel_initializer, recurrent_initializer, bias_initializer, seed):
    """The initializers of an RNN layer or cell, seeded as Keras 3 seeds them.

    A Keras 3 cell also makes a dropout SeedGenerator, which takes a seed from Python's
    ``random`` (as an unseeded initializer does): a SimpleRNNCell before its initializers,
    an LSTMCell or GRUCell after them. Taking it in the same place keeps
    ``tf.keras.utils.set_random_seed`` giving TensorFlow's weights, in this layer and the next.
    """
    if seed is None and cell._cell == "simple":
        _pyrandom.randint(1, int(1e9))
    cell.kernel_initializer = _initializers.get(kernel_initializer)
    cell.recurrent_initializer = _initializers.get(recurrent_initializer)
    cell.bias_initializer = _initializers.get(bias_initializer)
    if seed is None and cell._cell != "simple":
        _pyrandom.randint(1, int(1e9))
    cell.seed = seed


def _set_cell_penalties(cell, kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                        recurrent_constraint, bias_constraint):
    """The regularizers and constraints of a recurrent layer's or cell's weights."""
    cell.kernel_regularizer = _regularizers.get(kernel_regularizer)
    cell.recurrent_regularizer = _regularizers.get(recurrent_regularizer)
    cell.bias_regularizer = _regularizers.get(bias_regularizer)
    cell.kernel_constraint = _constraints.get(kernel_constraint)
    cell.recurrent_constraint = _constraints.get(recurrent_constraint)
    cell.bias_constraint = _constraints.get(bias_constraint)


def _run_cell(cell, inputs, initial_state, return_sequences, go_backwards, mask=None):
    """One ``_rnn`` op for a built-in cell's weights (an LSTM/GRU/SimpleRNN layer or cell):
    ``(output, *final_states)``; ``initial_state`` a state or list of states, or None for zeros.
    A ``mask`` (batch, time) skips the steps it marks False: states and output carry over."""
    if initial_state is None:
        states = ()
    elif isinstance(initial_state, (list, tuple)):
        states = tuple(initial_state)
    else:
        states = (initial_state,)
    ws = (cell.kernel, cell.recurrent_kernel) + ((cell.bias,) if cell.use_bias else ())
    masks = () if mask is None else (mask,)
    return _rnn(inputs, *ws, *states, *masks, cell=cell._cell, units=cell.units, return_sequences=return_sequences,
                go_backwards=go_backwards, act=cell._k_act, rec_act=cell._k_rec_act, n_states=len(states),
                masked=mask is not None, **cell._cell_options())


class SimpleRNN(_RNN):
    """Fully connected recurrence ``h = tanh(x @ kernel + h @ recurrent_kernel + bias)``; one op.

    Example:
        >>> import tapejax as tf
        >>> rnn = tf.keras.layers.SimpleRNN(4, return_sequences=True)
        >>> rnn(tf.ones([2, 5, 3])).shape, rnn.recurrent_kernel.shape
        (TensorShape([2, 5, 4]), TensorShape([4, 4]))
    """

    _cell, _gates = "simple", 1
    _k_config_keys = tuple(k for k in _LSTM_CONFIG
                           if k not in ("recurrent_activation", "unit_forget_bias", "seed"))

    def __init__(self, units, activation="tanh", **kwargs):
        kwargs.pop("recurrent_activation", None)
        kwargs.pop("unit_forget_bias", None)
        super().__init__(units, activation=activation, **kwargs)


class LSTM(_RNN):
    """Long short-term memory, Keras's layout (gates i, f, c, o; forget bias 1); one op (``lax.scan``).

    ``return_state=True`` returns ``[output, h, c]``.

    Example:
        >>> import tapejax as tf
        >>> lstm = tf.keras.layers.LSTM(8)
        >>> lstm(tf.ones([2, 5, 3])).shape, lstm.kernel.shape
        (TensorShape([2, 8]), TensorShape([3, 32]))
    """

    _cell, _gates = "lstm", 4


class GRU(_RNN):
    """Gated recurrent unit, Keras 3's layout (gates z, r, h; ``reset_after=True``); one op (``lax.scan``).

    With ``reset_after=True`` (the default, cuDNN's convention) the reset gate multiplies
    the recurrent projection, ``hh = tanh(x_h + r * (h @ U_h + b_rec_h))``, and ``bias`` has
    shape ``(2, 3 * units)`` (row 0 the input bias, row 1 the recurrent bias); with
    ``reset_after=False`` it multiplies the state first, ``hh = tanh(x_h + (r * h) @ U_h)``,
    and ``bias`` has shape ``(3 * units,)``. Then ``h = z * h + (1 - z) * hh``.
    ``return_state=True`` returns ``[output, h]``.

    Example:
        >>> import tapejax as tf
        >>> gru = tf.keras.layers.GRU(4, return_sequences=True)
        >>> gru(tf.ones([2, 5, 3])).shape, gru.kernel.shape, gru.bias.shape
        (TensorShape([2, 5, 4]), TensorShape([3, 12]), TensorShape([2, 12]))
    """

    _cell, _gates = "gru", 3
    _k_config_keys = tuple(k for k in _LSTM_CONFIG if k not in ("unit_forget_bias", "seed")) + ("reset_after", "seed")

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", reset_after=True, **kwargs):
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self, g):
        return (2, g) if self.reset_after else (g,)

    def _cell_options(self):
        return {"reset_after": self.reset_after}
