"""Keras 3's preprocessing layers: ``Normalization``, ``Rescaling``, ``CategoryEncoding``.

A call is one tape op; ``adapt`` computes statistics eagerly, outside any tape, and
writes them into the layer's non-trainable weights (Keras 3's ``mean``, ``variance``
and ``count``), so checkpoints and ``set_weights`` carry them.
"""
import math

import jax.numpy as jnp
import numpy as np

from ... import data as _data
from ... import ops as _ops
from ..._core.tensor import Tensor, TensorShape
from ...extend import defop
from ._base import Layer
from .._serialization import deserialize_keras_object

_EPSILON = 1e-7  # keras.backend.epsilon(): Keras divides by max(sqrt(variance), epsilon)


def _normalize_fn(x, mean, variance, *, shape, invert):
    mean = mean.reshape(shape)
    x = x.astype(mean.dtype)  # Keras converts the inputs to the compute dtype (float32)
    std = jnp.maximum(jnp.sqrt(variance.reshape(shape).astype(mean.dtype)), _EPSILON)
    return mean + x * std if invert else (x - mean) / std


_normalize = defop(_normalize_fn, name="normalization", static=("shape", "invert"))


def _first_of(batch):
    # A dataset of (x, y) or (x, y, sample_weight) pairs: adapt to x, as Keras does.
    return batch[0] if isinstance(batch, tuple) else batch


class Normalization(Layer):
    """Shifts and scales inputs to zero mean and unit variance: ``(x - mean) / sqrt(variance)``.

    The statistics are passed (``mean=``, ``variance=``) or computed by :meth:`adapt`,
    separately for each index of the kept ``axis`` (default -1, the features;
    ``axis=None`` for one scalar mean). As in Keras 3 the divisor is
    ``max(sqrt(variance), 1e-7)``, ``invert=True`` applies the inverse map, and an
    adapted layer's weights are ``mean``, ``variance`` (non-trainable, shape of the
    kept axes) and ``count`` (int64, kept at 0 for old checkpoints), while the
    attributes ``layer.mean`` / ``layer.variance`` are float32 tensors of the
    broadcast shape (``(1, features)`` for 2-D inputs).

    Args:
        axis: int, tuple of ints, or None: the axes that keep their own statistics.
        mean, variance: the statistics, given together (scalars or arrays that
            broadcast to the kept axes); otherwise call :meth:`adapt`.
        invert: map normalized values back (``mean + x * sqrt(variance)``).

    Example:
        >>> import tapejax as tf, numpy as np
        >>> normalizer = tf.keras.layers.Normalization(axis=-1)
        >>> normalizer.adapt(np.array([[0., 7., 4.], [2., 9., 6.]]))
        >>> print(normalizer.mean.numpy())
        [[1. 8. 5.]]
        >>> normalizer(np.array([[0., 7., 4.]])).numpy().tolist()
        [[-1.0, -1.0, -1.0]]
        >>> tf.keras.layers.Normalization(mean=3., variance=2.)(np.array([[1.], [3.]])).numpy().tolist()
        [[-1.4142135381698608], [0.0]]
    """

    _allow_non_tensor_positional_args = True   # Keras 3's preprocessing layers take any inputs

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        self.axis = axis
        self.input_mean = mean
        self.input_variance = variance
        self.invert = bool(invert)
        self._k_build_shape = None
        self._k_given = None
        if (mean is not None) != (variance is not None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be set. "
                             f"Received: mean={mean} and variance={variance}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError("When setting values directly, `mean` and `variance` must have the same "
                                 f"shape. Received: mean shape {np.shape(mean)} and variance shape "
                                 f"{np.shape(variance)}")
            if len(np.shape(mean)) > len(self.axis):
                raise ValueError("The rank of `mean` must be less than or equal to the number of axes "
                                 f"({len(self.axis)}). Received: mean shape {np.shape(mean)} for axis "
                                 f"{self.axis}")

    def build(self, input_shape):
        input_shape = tuple(TensorShape(input_shape).as_list())
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). "
                             f"Received inputs with ndim={ndim}, while axis={self.axis}")
        self._k_build_shape = input_shape
        self._k_keep = tuple(sorted(a % ndim for a in self.axis))
        for d in self._k_keep:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. Received "
                                 f"axis={self.axis}, inputs.shape={input_shape}, with unknown axis at index {d}")
        self._k_reduce = tuple(d for d in range(ndim) if d not in self._k_keep)
        self._k_broadcast = tuple(input_shape[d] if d in self._k_keep else 1 for d in range(ndim))
        self._k_stat_shape = tuple(input_shape[d] for d in self._k_keep)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._k_stat_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._k_stat_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64", initializer="zeros",
                                         trainable=False)
        else:
            # Keras aligns given statistics with the kept axes from the right.
            stats = []
            for value in (self.input_mean, self.input_variance):
                value = np.asarray(value, np.float32)
                expanded = [1] * ndim
                for i in range(1, value.ndim + 1):
                    expanded[self._k_keep[-i]] = value.shape[-i]
                stats.append(jnp.broadcast_to(value.reshape(expanded), self._k_broadcast))
            self._k_given = tuple(stats)
        self.built = True

    @property
    def mean(self):
        """The mean, float32, in the broadcast shape; None before the layer is built."""
        return self._k_stat(0)

    @property
    def variance(self):
        """The variance, float32, in the broadcast shape; None before the layer is built."""
        return self._k_stat(1)

    def _k_stat(self, i):
        if not self.built:
            return None
        if self._k_given is not None:
            return Tensor(self._k_given[i])
        var = (self.adapt_mean, self.adapt_variance)[i]
        return _ops.reshape(_ops.cast(var, "float32"), self._k_broadcast)

    def adapt(self, data, batch_size=None, steps=None):
        """Computes the mean and variance of ``data`` for each index of the kept axes.

        Args:
            data: a NumPy array (or pandas frame), a Tensor, a ``tf.data.Dataset`` of
                batches (an unbatched dataset of vectors is batched by 128, as Keras
                does; ``(x, y)`` elements adapt to ``x``), or an iterable of batches.

        Example:
            >>> import tapejax as tf, numpy as np
            >>> layer = tf.keras.layers.Normalization(axis=None)
            >>> layer.adapt(tf.data.Dataset.from_tensor_slices(np.array([[1.], [2.], [3.], [4.]])))
            >>> layer.mean.numpy().tolist(), layer.variance.numpy().tolist()
            ([[2.5]], [[1.25]])
        """
        if hasattr(data, "to_numpy") and not isinstance(data, (Tensor, np.ndarray)):
            data = data.to_numpy()  # a pandas DataFrame / Series
        batches = None
        if isinstance(data, np.ndarray) or isinstance(data, Tensor) or hasattr(data, "__jax_array__"):
            input_shape = tuple(data.shape)
        elif isinstance(data, _data.Dataset):
            spec = _first_of(data.element_spec)
            if len(spec.shape) == 1:
                data = data.batch(128)  # a dataset of feature vectors, as Keras assumes
                spec = _first_of(data.element_spec)
            input_shape = tuple(spec.shape)
            batches = data
        elif hasattr(data, "__iter__"):
            batches = list(data)
            if not batches:
                raise ValueError("adapt() received an empty iterable (no batches). Pass a non-empty "
                                 "iterable of arrays, e.g. layer.adapt([x]).")
            input_shape = tuple(np.shape(_first_of(batches[0])))
        else:
            raise TypeError(f"Unsupported data type: {type(data)}. `adapt` supports `np.ndarray`, tensors, "
                            "`tf.data.Dataset` and iterables of batches (e.g. a list of arrays).")
        if not self.built:
            self._k_maybe_build(input_shape)
        else:
            for d in self._k_keep:
                if input_shape[d] != self._k_build_shape[d]:
                    raise ValueError(f"The layer was built with input_shape={self._k_build_shape}, but adapt() "
                                     f"is being called with data with an incompatible shape, "
                                     f"data.shape={input_shape}")
        if self._k_given is not None:
            raise ValueError("This Normalization layer was given `mean` and `variance`; adapt() would "
                             "overwrite them. Create it without them to adapt it to data.")
        if batches is None:
            if isinstance(data, np.ndarray):
                mean, var = np.mean(data, axis=self._k_reduce), np.var(data, axis=self._k_reduce)
            else:
                arr = jnp.asarray(data)
                mean, var = jnp.mean(arr, axis=self._k_reduce), jnp.var(arr, axis=self._k_reduce)
        else:
            # Keras's streaming update (lack-of-fit sum of squares), in float32.
            mean = var = jnp.zeros(self._k_stat_shape, jnp.float32)
            total = 0
            for batch in batches:
                batch = _first_of(batch)
                b = jnp.asarray(batch, jnp.float32)
                b_mean, b_var = jnp.mean(b, axis=self._k_reduce), jnp.var(b, axis=self._k_reduce)
                count = math.prod(b.shape[d] for d in self._k_reduce) if self._k_reduce else 1
                total += count
                w = float(count) / total
                new_mean = mean * (1.0 - w) + b_mean * w
                var = (var + (mean - new_mean) ** 2) * (1.0 - w) + (b_var + (b_mean - new_mean) ** 2) * w
                mean = new_mean
        self.adapt_mean.assign(np.asarray(mean, np.float32))
        self.adapt_variance.assign(np.asarray(var, np.float32))

    def call(self, inputs):
        if self._k_given is not None:
            mean, variance = self._k_given
        else:
            mean, variance = self.adapt_mean, self.adapt_variance
        return _normalize(inputs, mean, variance, shape=self._k_broadcast, invert=self.invert)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(), "variance": np.array(self.input_variance).tolist()}


class Rescaling(Layer):
    """``inputs * scale + offset`` in the layer's compute dtype (Keras 3's ``Rescaling``), e.g.
    ``Rescaling(1.0 / 255)`` for pixel values; ``scale`` and ``offset`` may be per-channel lists.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Rescaling(2.0, offset=-1.0)(tf.constant([0, 1, 2])).numpy().tolist()
        [-1.0, 1.0, 3.0]
    """

    _allow_non_tensor_positional_args = True   # a Keras 3 TFDataLayer: takes lists and arrays
    supports_masking = True
    _k_config_keys = ("scale", "offset")

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        dtype = self.compute_dtype
        return (_ops.cast(inputs, dtype) * _ops.cast(self.scale, dtype)) + _ops.cast(self.offset, dtype)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("scale", "offset"):
            if isinstance(config.get(key), dict):   # an array's configuration
                config[key] = deserialize_keras_object(config[key])
        return cls(**config)


class CategoryEncoding(Layer):
    """Encodes integer category indices as one-hot, multi-hot or count vectors (Keras 3's layer).

    ``"one_hot"``: each index becomes a vector of ``num_tokens`` (a last axis of size 1 is replaced);
    ``"multi_hot"`` / ``"count"``: each sample (a row of a 2-D input, or a whole 1-D input) becomes
    one vector marking / counting its indices (``count_weights`` weighs the counts). Indices
    outside ``[0, num_tokens)`` count nowhere. The output has the layer's dtype (float32).

    Args:
        num_tokens: the number of categories.
        output_mode: ``"multi_hot"`` (default; ``"binary"`` is its old name), ``"one_hot"`` or ``"count"``.
        sparse: accepted as Keras's argument; the output is dense.

    Raises:
        ValueError: ``num_tokens`` missing or < 1, an unknown ``output_mode`` (Keras's messages).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")([[0, 1], [3, 1]]).numpy()
        array([[1., 1., 0., 0.],
               [0., 1., 0., 1.]], dtype=float32)
    """

    _allow_non_tensor_positional_args = True   # a Keras 3 TFDataLayer: takes lists and arrays

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens is not known "
                             "beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = sparse

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not `'count'`. Received "
                             f"`count_weights={count_weights}`.")
        x = _ops.convert_to_tensor(inputs)
        if x.shape.rank == 0:
            x = _ops.expand_dims(x, -1)
        dtype = self.compute_dtype
        if self.output_mode == "one_hot":
            if x.shape.rank > 1 and x.shape[-1] == 1:
                x = _ops.squeeze(x, -1)
            return _ops.one_hot(_ops.cast(x, "int64"), self.num_tokens, dtype=dtype)
        if x.shape.rank > 2:
            raise ValueError("When output_mode is not `'int'`, maximum supported output rank is 2. Received "
                             f"output_mode {self.output_mode} and input shape {tuple(x.shape)}, which would "
                             f"result in output rank {x.shape.rank}.")
        hits = _ops.one_hot(_ops.cast(x, "int64"), self.num_tokens, dtype=dtype)
        if count_weights is not None:
            hits = hits * _ops.expand_dims(_ops.cast(count_weights, dtype), -1)
        counts = _ops.reduce_sum(hits, axis=-2)
        return _ops.minimum(counts, _ops.ones_like(counts)) if self.output_mode == "multi_hot" else counts

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and (input_shape[-1] != 1 or len(input_shape) == 1):
            return input_shape + (self.num_tokens,)
        return input_shape[:-1] + (self.num_tokens,)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens, "output_mode": self.output_mode}
