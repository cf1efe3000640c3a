"""Keras 3's ``InputSpec``: the rank, dtype and shape a layer accepts, checked when it is called."""
from ..._core.tensor import Tensor, TensorShape


class InputSpec:
    """The rank, dtype and shape of an input a layer accepts (``keras.layers.InputSpec``).

    A layer's ``input_spec`` is checked on its first argument at each call, before it builds and
    again after: a mismatch raises Keras's ``ValueError`` ("Input 0 with name ... of layer ... is
    incompatible with the layer: ..."). ``Dense`` sets ``InputSpec(min_ndim=2)``, then the size of
    the last axis when built.

    Args:
        dtype: the expected dtype name.
        shape: the expected shape (None for any size of an axis), batch axis included.
        ndim, max_ndim, min_ndim: the expected rank, or its bounds.
        axes: ``{axis: size}`` for single axes.
        allow_last_axis_squeeze: accept a shape with or without a last axis of size 1.
        name: the input's name (dict inputs are matched by name).
        optional: a None input is accepted.

    Raises:
        TypeError: ``axes`` does not have integer keys.
        ValueError: an axis of ``axes`` is beyond ``ndim`` / ``max_ndim``.

    Example:
        >>> import tapejax as tf
        >>> layer = tf.keras.layers.Dense(3, name='dense')
        >>> _ = layer(tf.ones([2, 5]))
        >>> layer.input_spec
        InputSpec(min_ndim=2, axes={-1: 5})
        >>> layer(tf.ones([2, 4]))
        Traceback (most recent call last):
        ...
        ValueError: Input 0 with name 'None' of layer 'dense' is incompatible with the layer: expected axis -1 of input shape to have value 5, but received input with shape (2, 4)
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = None if dtype is None else str(getattr(dtype, "name", dtype))
        if shape is not None:
            self.shape = tuple(shape)
            self.ndim = len(shape)
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: axes={axes}") from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            max_axis = max(self.axes)
            if max_axis > max_dim:
                raise ValueError(f"Axis {max_axis} is greater than the maximum allowed value: {max_dim}")

    def __repr__(self):
        spec = [f"dtype={self.dtype}" if self.dtype else "", f"shape={self.shape}" if self.shape else "",
                f"ndim={self.ndim}" if self.ndim else "", f"max_ndim={self.max_ndim}" if self.max_ndim else "",
                f"min_ndim={self.min_ndim}" if self.min_ndim else "", f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(x for x in spec if x)})"

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": self.axes, "optional": self.optional}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _incompatible(index, spec, layer_name, what):
    return ValueError(f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible with the "
                      f"layer: {what}")


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Keras 3's check of ``inputs`` (a layer call's first argument) against ``input_spec``."""
    if not input_spec:
        return
    specs = list(input_spec) if isinstance(input_spec, (list, tuple)) else [input_spec]
    if isinstance(inputs, dict):
        names = [spec.name for spec in specs]
        if all(names):
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(f'Missing data for input "{missing[0]}". You passed a data dictionary with keys '
                                 f"{list(inputs.keys())}. Expected the following keys: {names}")
            inputs = [inputs[n] for n in names]
        else:
            inputs = list(inputs.values())
    elif not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if len(inputs) != len(specs):
        raise ValueError(f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(inputs)} '
                         f"input tensors. Inputs received: {inputs}")
    for index, (x, spec) in enumerate(zip(inputs, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise ValueError(f"Inputs to a layer should be tensors. Got '{x}' (of type {type(x)}) as input for "
                             f"layer '{layer_name}'.")
        # A Tensor's (pending or computed) value knows its shape: no TensorShape made per call
        # (but for symbolic sizes, which TensorShape reads as unknown).
        shape = x._v.shape if type(x) is Tensor else None
        if shape is None or not all(type(d) is int for d in shape):
            shape = tuple(TensorShape(x.shape))
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise _incompatible(index, spec, layer_name, f"expected ndim={spec.ndim}, found ndim={ndim}. "
                                                         f"Full shape received: {shape}")
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise _incompatible(index, spec, layer_name, f"expected max_ndim={spec.max_ndim}, found ndim={ndim}")
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise _incompatible(index, spec, layer_name, f"expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                                                         f"Full shape received: {shape}")
        if spec.dtype is not None:
            dtype = getattr(getattr(x, "dtype", None), "name", str(getattr(x, "dtype", None)))
            if dtype != spec.dtype:
                raise _incompatible(index, spec, layer_name, f"expected dtype={spec.dtype}, found dtype={dtype}")
        for axis, value in spec.axes.items():
            if value is not None and shape[axis] not in {value, None}:
                raise _incompatible(index, spec, layer_name, f"expected axis {axis} of input shape to have value "
                                                             f"{value}, but received input with shape {shape}")
        if spec.shape is not None:
            spec_shape, got = spec.shape, shape
            if spec.allow_last_axis_squeeze:
                got = got[:-1] if got and got[-1] == 1 else got
                spec_shape = spec_shape[:-1] if spec_shape and spec_shape[-1] == 1 else spec_shape
            for spec_dim, dim in zip(spec_shape, got):
                if spec_dim is not None and dim is not None and spec_dim != dim:
                    raise _incompatible(index, spec, layer_name, f"expected shape={spec.shape}, found shape={shape}")
