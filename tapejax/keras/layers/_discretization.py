"""Keras 3's ``Discretization``: buckets numbers by ``bin_boundaries`` (TF's ``Bucketize``: the index
is the number of boundaries <= the value), or learns the boundaries from data with Keras's
approximate quantile summaries (``adapt``), then encodes the indices (``int``, ``one_hot``,
``multi_hot``, ``count``)."""
import numpy as np

from ... import data as _data
from ... import ops as _ops
from ..._core.tensor import TensorShape, _TensorBase
from ._base import Layer
from ._preprocessing import CategoryEncoding


def _summarize(values, epsilon):
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1)::int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _compress(summary, epsilon):
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_percents, summary[0])
    cum_weights = np.interp(percents, cum_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")


def _merge(prev, new, epsilon):
    merged = np.concatenate((prev, new), axis=1)
    return _compress(np.take(merged, np.argsort(merged[0]), axis=1), epsilon)


class Discretization(Layer):
    """Buckets continuous values: with ``bin_boundaries=[0., 1., 2.]`` the buckets are
    ``(-inf, 0)``, ``[0, 1)``, ``[1, 2)``, ``[2, inf)`` (indices 0..3, int32). With ``num_bins`` instead,
    :meth:`adapt` learns ``num_bins - 1`` boundaries (approximate quantiles, ``epsilon``).

    Args:
        bin_boundaries: sorted boundaries, or None with ``num_bins``.
        num_bins: the number of bins to learn by ``adapt``.
        epsilon: the error of the quantile summaries (0.01).
        output_mode: ``"int"`` (default), ``"one_hot"``, ``"multi_hot"``, ``"count"``.

    Example:
        >>> import tapejax as tf, numpy as np
        >>> layer = tf.keras.layers.Discretization(bin_boundaries=[0., 1., 2.])
        >>> layer(np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])).numpy().tolist()
        [[0, 2, 3, 1], [1, 3, 2, 1]]
        >>> layer = tf.keras.layers.Discretization(num_bins=4, epsilon=0.01)
        >>> layer.adapt(np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]]))
        >>> layer(np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])).numpy().tolist()
        [[0, 2, 3, 2], [1, 3, 3, 1]]
    """

    _allow_non_tensor_positional_args = True

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False,
                 dtype=None, name=None):
        super().__init__(name=name, dtype=dtype)
        if sparse and output_mode == "int":
            raise ValueError("`sparse=True` may only be used if `output_mode` is `'one_hot'`, `'multi_hot'`, or "
                             f"`'count'`. Received: sparse={sparse} and output_mode={output_mode}")
        if sparse:
            raise NotImplementedError("sparse=True is not provided by tapejax's Discretization.")
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(f"Unknown value for `output_mode`. Allowed values are ('int', 'one_hot', 'multi_hot', "
                             f"'count'). Received: output_mode={output_mode}")
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = bin_boundaries
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse
        self.summary = None if bin_boundaries else np.array([[], []], dtype="float32")

    def adapt(self, data, steps=None):
        """Learns ``num_bins - 1`` boundaries from ``data`` (an array, a tensor, a dataset or batches)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                             "use `num_bins` instead.")
        self.summary = np.array([[], []], dtype="float32")
        if isinstance(data, _data.Dataset):
            batches = data.take(steps) if steps is not None else data
        elif hasattr(data, "__iter__") and not isinstance(data, (np.ndarray, _TensorBase)):
            batches = [b for i, b in enumerate(data) if steps is None or i < steps]
        else:
            batches = [data]
        for batch in batches:
            values = np.array(batch.numpy() if isinstance(batch, _TensorBase) else batch).astype("float32")
            self.summary = _merge(_summarize(values, self.epsilon), self.summary, self.epsilon)
        self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at construction time or call "
                             "`adapt(dataset)` before you can start using the `Discretization` layer.")
        x = _ops.convert_to_tensor(inputs)
        bounds = _ops.constant(np.asarray([float(b) for b in self.bin_boundaries], np.float32))
        idx = _ops.cast(_ops.searchsorted(bounds, _ops.reshape(_ops.cast(x, "float32"), [-1]), side="right"),
                        "int32")
        idx = _ops.reshape(idx, _ops.shape(x))
        if self.output_mode == "int":
            return idx
        return CategoryEncoding(num_tokens=len(self.bin_boundaries) + 1, output_mode=self.output_mode,
                                dtype=self.dtype_policy)(idx)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(TensorShape(input_shape).as_list())
        if self.output_mode == "int":
            return input_shape
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
                return input_shape[:-1] + (depth,)
            return input_shape + (depth,)
        return (input_shape[0],) + input_shape[2:] + (depth,) if len(input_shape) >= 2 else (depth,)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse, "name": self.name,
                "dtype": self.dtype}   # Keras 3 lists the dtype's name here, not the policy

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            config = dict(config)
            bin_boundaries = config.pop("bin_boundaries")
            layer = cls(**config)
            layer.bin_boundaries = bin_boundaries
            return layer
        return cls(**config)
