"""Keras 3's wrapper layers: ``Bidirectional`` and ``TimeDistributed``.

They hold other layers as tracked sub-layers, so their weights are the inner
layers' (built inside the wrapper's name scope: ``bidirectional/forward_lstm/kernel:0``,
``time_distributed/dense/kernel:0``), and their calls are the inner layers' ops plus
a few tape ops (reverse, concatenate, reshape).
"""
import jax

from ... import ops as _ops
from ..._core.tensor import TensorShape
from ._base import Layer, _accepts
from .. import layers as _layers
from .._serialization import deserialize_keras_object, serialize_keras_object


_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _removeprefix(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


def _serialize_layer(layer):
    return serialize_keras_object(layer)


def _deserialize_layer(obj):
    """A layer from its configuration (``serialize_keras_object``'s, or Keras 2's ``{'class_name',
    'config'}``); a layer instance is returned as it is."""
    if isinstance(obj, Layer) or obj is None:
        return obj
    if obj.get("module") is not None or obj.get("registered_name") is not None:
        return deserialize_keras_object(obj)
    cls = getattr(_layers, obj["class_name"], None)
    if cls is None:
        raise ValueError(f"Unknown layer: '{obj['class_name']}' in a wrapper's config.")
    return cls.from_config(dict(obj["config"]))


def _copy_layer(layer, **overrides):
    """A fresh layer from ``layer``'s config (Keras's serialize / deserialize round trip)."""
    if not hasattr(type(layer), "from_config"):
        raise ValueError(f"Bidirectional needs a layer with get_config/from_config; {layer!r} has none.")
    config = dict(layer.get_config())
    config.update(overrides)
    return type(layer).from_config(config)


class Bidirectional(Layer):
    """Bidirectional wrapper for RNNs: a forward and a backward copy of ``layer``, outputs merged.

    As in Keras 3, the forward layer is a fresh copy of ``layer`` named ``forward_<name>``
    and the backward layer a copy with ``go_backwards=True`` named ``backward_<name>``
    (or ``backward_layer``, which must differ from ``layer`` in ``go_backwards`` only).
    Neither reuses the weights of ``layer``. With ``return_sequences=True`` the backward
    output is reversed along time before merging, so step ``t`` of both halves belongs
    to input step ``t``.

    Args:
        layer: an RNN layer (``LSTM``, ``GRU``, ``SimpleRNN``) or a layer with
            ``go_backwards``, ``return_sequences``, ``return_state`` and ``get_config``.
        merge_mode: ``'concat'`` (default), ``'sum'``, ``'mul'``, ``'ave'``, or ``None``
            (a list ``[forward_output, backward_output]``).
        weights: optional initial weights: the forward layer's, then the backward layer's.
        backward_layer: optional layer for the backward direction.

    With ``return_state=True`` the result is ``[output, *forward_states, *backward_states]``
    (``[forward_output, backward_output, *states]`` when ``merge_mode=None``).

    Example:
        >>> import tapejax as tf
        >>> bi = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4, return_sequences=True, name='lstm'),
        ...                                    name='bidirectional')
        >>> bi(tf.ones([2, 5, 3])).shape
        TensorShape([2, 5, 8])
        >>> [w.path for w in bi.weights][:2]
        ['bidirectional/forward_lstm/kernel', 'bidirectional/forward_lstm/recurrent_kernel']
    """

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a `tf.keras.layers.Layer` instance. "
                             f"Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError("`backward_layer` need to be a `tf.keras.layers.Layer` instance. "
                             f"Received: {backward_layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        for attr in ("go_backwards", "return_sequences", "return_state"):
            if not hasattr(layer, attr):
                raise ValueError(f"Bidirectional wraps sequence layers with a `{attr}` attribute (LSTM, GRU, "
                                 f"SimpleRNN); {layer!r} has none.")
        super().__init__(**kwargs)
        # Keras 3 re-creates the forward layer from the config too, so it carries no state of `layer`.
        self.forward_layer = _copy_layer(layer, name="forward_" + _removeprefix(layer.name, "forward_"))
        if backward_layer is None:
            self.backward_layer = _copy_layer(layer, go_backwards=not layer.go_backwards,
                                              name="backward_" + _removeprefix(layer.name, "backward_"))
        else:
            self.backward_layer = backward_layer
        for sub in (self.forward_layer, self.backward_layer):
            # Keras 3: a masked step's sequence output is zeros in both directions
            if getattr(sub, "zero_output_for_mask", None) is not None:
                sub.zero_output_for_mask = sub.return_sequences
        self._verify_layer_config()
        self.merge_mode = merge_mode
        self._k_initial_weights = list(weights) if weights is not None and len(weights) else None
        self.stateful = bool(getattr(layer, "stateful", False))
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state

    def _verify_layer_config(self):
        fwd, bwd = self.forward_layer, self.backward_layer
        if fwd.go_backwards == bwd.go_backwards:
            raise ValueError("Forward layer and backward layer should have different `go_backwards` value. "
                             f"Received: forward_layer.go_backwards {fwd.go_backwards}, "
                             f"backward_layer.go_backwards={bwd.go_backwards}")
        for a in ("stateful", "return_sequences", "return_state"):
            f, b = getattr(fwd, a, False), getattr(bwd, a, False)
            if f != b:
                raise ValueError(f'Forward layer and backward layer are expected to have the same value for '
                                 f'attribute "{a}", got "{f}" for forward layer and "{b}" for backward layer')

    def build(self, input_shape):
        # Inside this layer's name scope: bidirectional/forward_lstm/kernel:0.
        self.forward_layer._k_maybe_build(input_shape)
        self.backward_layer._k_maybe_build(input_shape)
        if self._k_initial_weights is not None:
            ws, n = self._k_initial_weights, len(self._k_initial_weights)
            self.forward_layer.set_weights(ws[:n // 2])
            self.backward_layer.set_weights(ws[n // 2:])
            self._k_initial_weights = None
        self.built = True

    def call(self, inputs, initial_state=None, mask=None, training=None):
        fwd_kw, bwd_kw = {}, {}
        if training is not None:
            fwd_kw["training"] = bwd_kw["training"] = training
        if mask is not None:
            fwd_kw["mask"] = bwd_kw["mask"] = mask
        if initial_state is not None:
            half = len(initial_state) // 2
            fwd_kw["initial_state"], bwd_kw["initial_state"] = initial_state[:half], initial_state[half:]
        y = self.forward_layer(inputs, **fwd_kw)
        y_rev = self.backward_layer(inputs, **bwd_kw)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if y.dtype != y_rev.dtype:
            y_rev = _ops.cast(y_rev, y.dtype)
        if self.return_sequences:
            y_rev = _ops.reverse(y_rev, axis=[1])
        if self.merge_mode == "concat":
            output = _ops.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if self.return_state:
            return (output if self.merge_mode is None else [output]) + states
        return output

    def get_config(self):
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": _serialize_layer(self.forward_layer),
                "backward_layer": _serialize_layer(self.backward_layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["layer"] = _deserialize_layer(config["layer"])
        config["backward_layer"] = _deserialize_layer(config.pop("backward_layer", None))
        return cls(**config)


class TimeDistributed(Layer):
    """Applies ``layer`` to every time slice of ``(batch, time, ...)`` inputs, with the same weights.

    Batch and time are merged into one axis, ``layer`` is called once on
    ``(batch * time, ...)`` and the result is split back to ``(batch, time, ...)``.
    The inner layer is built for inputs of shape ``(None, *inputs.shape[2:])``; its
    weights are the wrapper's.

    Args:
        layer: a ``tf.keras.layers.Layer`` instance.

    Example:
        >>> import tapejax as tf
        >>> td = tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(8, name='dense'), name='time_distributed')
        >>> td(tf.ones([4, 10, 16])).shape
        TensorShape([4, 10, 8])
        >>> td.compute_output_shape((None, 10, 16))
        TensorShape([None, 10, 8])
        >>> [w.path for w in td.weights]
        ['time_distributed/dense/kernel', 'time_distributed/dense/bias']
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a `tf.keras.layers.Layer` "
                             f"instance. Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer

    @staticmethod
    def _child_input_shape(input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                             f"dimensions, received: {input_shape}")
        return TensorShape((None,) + tuple(input_shape)[2:])

    def build(self, input_shape):
        self.layer._k_maybe_build(self._child_input_shape(input_shape))
        self.built = True

    def compute_output_shape(self, input_shape):
        """``(batch, time, *inner_output_shape[1:])`` from the inner layer's ``compute_output_shape``.

        Example:
            >>> import tapejax as tf
            >>> conv = tf.keras.layers.TimeDistributed(tf.keras.layers.Conv2D(4, 3))
            >>> conv.compute_output_shape((None, 5, 8, 8, 3))
            TensorShape([None, 5, 6, 6, 4])
        """
        input_shape = TensorShape(input_shape)
        self._k_maybe_build(input_shape)
        child = self.layer.compute_output_shape(self._child_input_shape(input_shape))
        batch, time = tuple(input_shape)[:2]
        return jax.tree_util.tree_map(lambda s: TensorShape((batch, time) + tuple(s)[1:]), child,
                                      is_leaf=lambda s: isinstance(s, TensorShape))

    def call(self, inputs, training=None, mask=None):
        shape = tuple(inputs.shape)
        if len(shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed inputs with at least 3 dimensions "
                             f"(batch, time, ...), received shape {shape}")
        batch, time = shape[0], shape[1]
        kw = {}
        if training is not None:
            kw["training"] = training
        if mask is not None and _accepts(self.layer.call, "mask"):
            mshape = tuple(mask.shape)
            if mshape[:2] != (batch, time):
                raise ValueError(f"`TimeDistributed` Layer should be passed a `mask` of shape ({batch}, {time}, "
                                 f"...), received: mask.shape={mshape}")
            kw["mask"] = _ops.reshape(mask, (batch * time,) + mshape[2:])
        y = self.layer(_ops.reshape(inputs, (batch * time,) + shape[2:]), **kw)
        return jax.tree_util.tree_map(lambda t: _ops.reshape(t, (batch, time) + tuple(t.shape)[1:]), y,
                                      is_leaf=_ops.is_tensor)

    def get_config(self):
        return {**super().get_config(), "layer": _serialize_layer(self.layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(_deserialize_layer(config.pop("layer")), **config)
