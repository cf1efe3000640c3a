"""Keras 3's ``Hashing``: FarmHash ``Fingerprint64`` of each value's string (TF's
``to_hash_bucket_fast``) modulo ``num_bins``, on the host (NumPy), as string tensors live there."""
import jax.numpy as jnp
import numpy as np

from ... import ops as _ops
from ..._core import host as _host
from ..._core.farmhash import fingerprint64 as _fingerprint64
from ..._core.tensor import Tensor, TensorShape, _TensorBase, string_array
from ._base import Layer, _Spec
from ._lookup import _encode


def _as_bytes(a):
    """TF's ``as_string`` of integers (floats truncated to int64 first), strings as bytes."""
    if a.dtype.kind in "SUO":
        return string_array(a)
    if a.dtype.kind == "f":
        a = a.astype(np.int64)
    out = np.empty(a.shape, dtype=object)
    out.reshape(-1)[:] = [str(int(v)).encode() for v in a.reshape(-1)]
    return out


class Hashing(Layer):
    """Hashes values into ``num_bins`` bins: ``Fingerprint64(str(value)) % num_bins`` (TF's
    ``to_hash_bucket_fast``; integers are hashed as their decimal strings). With ``mask_value``
    that value maps to 0 and the others to ``1 + hash % (num_bins - 1)``. Outputs are int64
    (``"int"``) or float32 encodings (``"one_hot"``, ``"multi_hot"``, ``"count"``).

    Args:
        num_bins: the number of bins (including the mask's).
        mask_value: a value mapped to bin 0, or None.
        salt: not provided (SipHash); None.
        output_mode: ``"int"`` (default), ``"one_hot"``, ``"multi_hot"``, ``"count"``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.layers.Hashing(num_bins=3)([["A"], ["B"], ["C"], ["D"], ["E"]]).numpy().tolist()
        [[1], [0], [1], [1], [2]]
        >>> tf.keras.layers.Hashing(num_bins=3, mask_value="")([["A"], ["B"], [""], ["C"], ["D"]]).numpy().tolist()
        [[1], [1], [0], [2], [2]]
    """

    _allow_non_tensor_positional_args = True

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(autocast=False, **kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(f"Unknown value for `output_mode`. Allowed values are ('int', 'one_hot', 'multi_hot', "
                             f"'count'). Received: output_mode={output_mode}")
        if salt is not None or sparse:
            raise NotImplementedError("tapejax's Hashing provides FarmHash buckets (salt=None) and dense outputs.")
        self.num_bins = num_bins
        self.mask_value = mask_value
        self.salt = None
        self.strong_hash = False
        self.output_mode = output_mode
        self.sparse = False

    def _k_hash(self, inputs):
        a = np.asarray(inputs._value if isinstance(inputs, _TensorBase) else inputs)
        if a.dtype.kind == "U":
            a = a.astype(object)
        if self.output_mode == "one_hot" and a.ndim and a.shape[-1] == 1:
            a = a.reshape(a.shape[:-1])
        bins = self.num_bins
        mask = None
        if self.mask_value is not None and bins > 1:
            bins -= 1
            if a.dtype.kind in "SUO":
                mv = self.mask_value.encode() if isinstance(self.mask_value, str) else self.mask_value
                mask = string_array(a) == mv
            else:
                mask = a == self.mask_value
        strings = _as_bytes(a)
        idx = np.array([_fingerprint64(s) % bins for s in strings.reshape(-1)], np.int64).reshape(a.shape)
        if mask is not None:
            idx = np.where(mask, 0, idx + 1)
        if self.output_mode == "int":
            return Tensor(jnp.asarray(idx.astype(self.dtype)))
        return Tensor(jnp.asarray(_encode(idx, self.output_mode, self.num_bins, np).astype(self.dtype)))

    def call(self, inputs):
        return _host.call("Hashing", self._k_hash, inputs)

    def _k_output_specs(self, fn, inputs):
        shape = tuple(inputs[0].shape)
        if self.output_mode == "int":
            return _Spec(shape, np.dtype(self.dtype))
        return _Spec((shape[:-1] if shape else ()) + (self.num_bins,), np.dtype(self.dtype))

    def compute_output_shape(self, input_shape):
        shape = tuple(TensorShape(input_shape).as_list())
        return shape if self.output_mode == "int" else (shape[:-1] if shape else ()) + (self.num_bins,)

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt, "mask_value": self.mask_value,
                "output_mode": self.output_mode, "sparse": self.sparse}
