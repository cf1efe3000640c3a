"""Neural-network rows of the op table (``tf.nn``): activations, softmax and losses on logits,
convolution, pooling, moments, embeddings."""
import jax
import jax.numpy as jnp
import numpy as np

from .._core.tensor import Tensor, _TensorBase, to_array
from ..errors import InvalidArgumentError
from .._core.engine import allows_dtypes
from ..extend import defop
from . import bounds, eigen_math, eigen_reduce, normalize
from .namespaces import export
from .array_ops import concat, gather, _shape_of, _transpose
from .math_ops import clip_by_norm, reduce_sum

relu = export("nn.relu")(defop(jax.nn.relu, name="relu"))
relu6 = export("nn.relu6")(defop(jax.nn.relu6, name="relu6"))
# TF's Elu/Selu kernels (TF's exp, eigen_math) and EluGrad/SeluGrad from the output (SeluGrad:
# scale where the output is >= 0; JAX: scale * alpha at 0).
elu = export("nn.elu")(defop(eigen_math.elu, name="elu", vjp=lambda ans, x: lambda g: eigen_math.elu_grad(ans, g)))
selu = export("nn.selu")(defop(eigen_math.selu, name="selu", vjp=lambda ans, x: lambda g: eigen_math.selu_grad(ans, g)))
silu = swish = export("nn.silu", "nn.swish")(defop(jax.nn.silu, name="silu"))
gelu = export("nn.gelu")(defop(lambda x, approximate=False: jax.nn.gelu(x, approximate=approximate), name="gelu", static=("approximate",)))
_leaky_relu = defop(lambda x, alpha=0.2: jnp.where(x > 0, x, x * alpha), name="leaky_relu", static=("alpha",))
# TensorFlow's kernels and gradients: exp(x - max) and its row sum in Eigen's order (eigen_reduce)
softmax = export("nn.softmax")(defop(
    lambda x, axis=-1: eigen_reduce.softmax(x, axis) if eigen_reduce.applies(x) else jax.nn.softmax(x, axis=axis),
    name="softmax", static=("axis",), vjp=lambda ans, x, axis=-1: lambda g: eigen_reduce.softmax_grad(ans, g, axis)
    if eigen_reduce.applies(ans) else (g - jnp.sum(g * ans, axis, keepdims=True)) * ans))
log_softmax = export("nn.log_softmax")(defop(
    lambda x, axis=-1: eigen_reduce.log_softmax(x, axis) if eigen_reduce.applies(x) else jax.nn.log_softmax(x, axis=axis),
    name="log_softmax", static=("axis",), vjp=lambda ans, x, axis=-1: lambda g: eigen_reduce.log_softmax_grad(ans, g, axis)
    if eigen_reduce.applies(ans) else g - jnp.sum(g, axis, keepdims=True) * jnp.exp(ans)))
for _op, _tf_op in [(softmax, "Softmax"), (log_softmax, "LogSoftmax"), (elu, "Elu"), (selu, "Selu")]:
    allows_dtypes(_op, _tf_op, ("half", "bfloat16", "float", "double"))   # TF's kernels refuse integers
_sparse_xent = defop(lambda labels, logits: -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[..., None].astype(jnp.int32), axis=-1)[..., 0], name="sparse_softmax_cross_entropy_with_logits")
# TensorFlow's kernel gives d/dlogits = softmax(logits) - labels, exact only when the labels sum
# to one: with one class the loss is constant, yet TF's gradient is 1 - label. Keep TF's rule.
_xent = defop(lambda labels, logits, axis=-1: -jnp.sum(labels * jax.nn.log_softmax(logits, axis=axis), axis=axis), name="softmax_cross_entropy_with_logits", static=("axis",),
              vjp=lambda ans, labels, logits, axis=-1: lambda g: (jnp.expand_dims(g, axis) * -jax.nn.log_softmax(logits, axis=axis), jnp.expand_dims(g, axis) * (jax.nn.softmax(logits, axis=axis) - labels)))
# TensorFlow's formula, whose gradient at logits == 0 is sigmoid(0) - labels (JAX's maximum and
# abs at 0 gave 0 - labels), with TF's Exp and Log1p kernels (XLA's log1p(exp(-1)) is 1 ulp off).
_sigmoid_xent = defop(lambda labels, logits: jnp.where(logits >= 0, logits, 0) - logits * labels + eigen_math.log1p(eigen_math.exp(jnp.where(logits >= 0, -logits, logits))), name="sigmoid_cross_entropy_with_logits")
l2_loss = export("nn.l2_loss")(defop(lambda x: jnp.sum(x * x) / 2, name="l2_loss"))
bias_add = export("nn.bias_add")(defop(lambda x, b: x + b, name="bias_add"))
_conv2d = defop(lambda x, w, strides, padding, dilations: jax.lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dilations, dimension_numbers=("NHWC", "HWIO", "NHWC")), name="conv2d", static=("strides", "padding", "dilations"))
_pool = defop(lambda x, kind, ksize, strides, padding: _pool_fn(x, kind, ksize, strides, padding), name="pool", static=("kind", "ksize", "strides", "padding"))
_moments = defop(lambda x, axes, keepdims=False: (jnp.mean(x, axis=axes, keepdims=keepdims), jnp.var(x, axis=axes, keepdims=keepdims)), name="moments", static=("axes", "keepdims"))


@export("nn.leaky_relu")
def leaky_relu(features, alpha=0.2, name=None):
    """``x if x > 0 else alpha * x``."""
    return _leaky_relu(features, alpha=float(alpha))



@export("nn.sparse_softmax_cross_entropy_with_logits")
def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-example cross-entropy of integer ``labels`` and unnormalised ``logits``; a label
    outside ``[0, classes)`` raises InvalidArgumentError, as TensorFlow's CPU kernel."""
    bounds.labels(labels, _shape_of(logits)[-1])
    return _sparse_xent(labels, logits)


@export("nn.softmax_cross_entropy_with_logits")
def softmax_cross_entropy_with_logits(labels=None, logits=None, axis=-1, name=None):
    """Per-example cross-entropy of a label distribution and unnormalised ``logits``."""
    return _xent(labels, logits, axis=int(axis))


@export("nn.sigmoid_cross_entropy_with_logits")
def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise logistic loss of ``labels`` in [0, 1] and ``logits``, computed stably."""
    return _sigmoid_xent(labels, logits)


@export("nn.conv2d")
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution, NHWC input and HWIO filters (TF's layout), on ``lax.conv_general_dilated``."""
    if data_format != "NHWC":
        raise ValueError("tapejax's conv2d takes data_format='NHWC' (channels last). Transpose NCHW inputs "
                         "with tf.transpose(x, [0, 2, 3, 1]) first.")
    pad_ = padding.upper() if isinstance(padding, str) else tuple(tuple(p) for p in padding)[1:-1]
    return _conv2d(input, filters, strides=normalize.window(strides), padding=pad_,
                   dilations=normalize.window(1 if dilations is None else dilations))


@export("nn.max_pool2d")
def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D max pooling of an NHWC tensor (``tf.nn.max_pool2d``); ``padding`` is 'VALID', 'SAME' or
    explicit ``[[0, 0], [top, bottom], [left, right], [0, 0]]`` pairs (padded cells never win).

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.constant([1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12.]), [1, 3, 4, 1])
        >>> tf.nn.max_pool2d(x, ksize=(2, 2), strides=(2, 2),
        ...                  padding=[[0, 0], [1, 1], [1, 1], [0, 0]])[0, :, :, 0].numpy()
        array([[ 1.,  3.,  4.],
               [ 9., 11., 12.]], dtype=float32)
    """
    first = data_format == "NCHW"
    if isinstance(padding, str):
        pad = padding.upper()
    else:
        if first:   # TF's CPU kernel (explicit padding is not transposed to NHWC by its Python wrapper)
            raise InvalidArgumentError(None, None, "Default MaxPoolingOp only supports NHWC on device type CPU")
        pad = tuple(tuple(int(e) for e in p) for p in padding)
        if len(pad) != 4 or pad[0] != (0, 0) or pad[3] != (0, 0):
            raise ValueError(f"`padding` should be a list of 4 pairs with zeros for the batch and channel "
                             f"dimensions; got padding={padding}")
    return _pool_in(input, "max", ksize, strides, pad, first)


def _pool_in(x, kind, ksize, strides, padding, channels_first):
    """Pooling in NHWC; an NCHW tensor (and its 4-element ksize/strides) is transposed there and back,
    as TF's CPU kernels do."""
    ksize, strides = (_nchw_window(v) if channels_first else normalize.window(v) for v in (ksize, strides))
    if not channels_first:
        return _pool(x, kind=kind, ksize=ksize, strides=strides, padding=padding)
    y = _pool(_transpose(x, perm=(0, 2, 3, 1)), kind=kind, ksize=ksize, strides=strides, padding=padding)
    return _transpose(y, perm=(0, 3, 1, 2))


def _nchw_window(v):
    if not isinstance(v, (int, np.integer)) and len(tuple(v)) == 4:
        return tuple(int(e) for e in tuple(v)[2:])
    return normalize.window(v)


@export("nn.avg_pool2d")
def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D average pooling of an NHWC (or NCHW) tensor (``tf.nn.avg_pool2d``)."""
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    return _pool_in(input, "avg", ksize, strides, padding.upper(), data_format == "NCHW")


max_pool = export("nn.max_pool")(max_pool2d)
avg_pool = export("nn.avg_pool")(avg_pool2d)


@export("nn.moments")
def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance of ``x`` over ``axes`` (``tf.nn.moments``)."""
    return _moments(x, axes=tuple(axes), keepdims=bool(keepdims))


@export("nn.compute_average_loss")
def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """Sum of per-example losses divided by the global batch size (tf.nn.compute_average_loss)."""
    if sample_weight is not None:
        per_example_loss = per_example_loss * sample_weight
    n = global_batch_size if global_batch_size is not None else (per_example_loss.shape[0] if per_example_loss.ndim else 1)
    return reduce_sum(per_example_loss) / float(n)



def _pool_fn(x, kind, ksize, strides, padding):
    window = (1,) + ksize + (1,)
    stride = (1,) + strides + (1,)
    if kind == "max":
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, stride, padding)
    s = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, stride, padding)
    if padding == "VALID":
        return s / np.prod(ksize)
    ones = jnp.ones(x.shape[1:-1], x.dtype)[None, ..., None]
    n = jax.lax.reduce_window(ones, 0.0, jax.lax.add, window, stride, padding)
    return s / n



@export("nn.embedding_lookup")
def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of the embedding table ``params`` at ``ids`` (``tf.nn.embedding_lookup``).

    The gradient w.r.t. a table Variable is a ``tf.IndexedSlices``, as in TensorFlow.

    Args:
        params: the table ``[vocab, ...]``, or a list of tables sharded by rows
            ("div" strategy: the list concatenated is the table).
        ids: integer tensor of any shape.
        max_norm: if given, each looked-up row with a larger L2 norm is scaled to it.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``.

    Example:
        >>> import tapejax as tf
        >>> table = tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
        >>> tf.nn.embedding_lookup(table, [[2], [0]]).numpy().tolist()
        [[[4.0, 5.0]], [[0.0, 1.0]]]
    """
    if isinstance(params, (list, tuple)):
        params = params[0] if len(params) == 1 else concat(list(params), axis=0)
    out = gather(params, ids)
    if max_norm is not None:
        n_ids = np.ndim(to_array(ids))
        out = clip_by_norm(out, max_norm, axes=list(range(n_ids, out.ndim)))
    return out



_POOL3D_FORMATS = ("NDHWC", "NCDHW")


def _pool3d(input, ksize, strides, padding, data_format, kind):
    if data_format not in _POOL3D_FORMATS:
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}.")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise InvalidArgumentError(None, None, f"Value for attr 'padding' of {padding!r} is not in the list of "
                                   "allowed values: \"SAME\", \"VALID\".")

    def three(name, v):
        v = [int(v)] if isinstance(v, (int, np.integer)) else [int(e) for e in v]
        if len(v) not in (1, 3, 5):
            raise ValueError(f"{name} should be of length 1, 3 or 5. Received: {name}={v} of length {len(v)}")
        if len(v) == 5:
            v = v[2:] if data_format == "NCDHW" else v[1:-1]
        return tuple(v * 3 if len(v) == 1 else v)

    x = input if isinstance(input, _TensorBase) else Tensor(to_array(input))
    if x.ndim != 5:
        raise ValueError(f"{kind}_pool3d needs a 5-D input ({data_format}), got shape {tuple(x.shape)}.")
    if data_format == "NCDHW":
        x = _transpose(x, perm=(0, 2, 3, 4, 1))
    out = _pool(x, kind=kind, ksize=three("ksize", ksize), strides=three("strides", strides), padding=padding.upper())
    return _transpose(out, perm=(0, 4, 1, 2, 3)) if data_format == "NCDHW" else out


@export("nn.max_pool3d")
def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D max pooling of an NDHWC tensor (``tf.nn.max_pool3d``).

    Args:
        input: a 5-D tensor ``[batch, depth, height, width, channels]`` (or NCDHW).
        ksize, strides: an int or a list of 1, 3 or 5 ints (window and step per dimension).
        padding: ``'VALID'`` or ``'SAME'``.
        data_format: ``'NDHWC'`` (default) or ``'NCDHW'``.

    Returns:
        The pooled tensor, same layout.

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1])
        >>> tf.nn.max_pool3d(x, 2, 2, 'VALID').numpy().ravel().tolist()
        [7.0]
    """
    return _pool3d(input, ksize, strides, padding, data_format, "max")


@export("nn.avg_pool3d")
def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D average pooling of an NDHWC tensor (``tf.nn.avg_pool3d``); 'SAME' averages only the
    values inside the input, as TensorFlow does.

    Args:
        input: a 5-D tensor ``[batch, depth, height, width, channels]`` (or NCDHW).
        ksize, strides: an int or a list of 1, 3 or 5 ints.
        padding: ``'VALID'`` or ``'SAME'``.
        data_format: ``'NDHWC'`` (default) or ``'NCDHW'``.

    Returns:
        The pooled tensor, same layout.

    Example:
        >>> import tapejax as tf
        >>> x = tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1])
        >>> tf.nn.avg_pool3d(x, 2, 2, 'VALID').numpy().ravel().tolist()
        [3.5]
    """
    return _pool3d(input, ksize, strides, padding, data_format, "avg")

