"""Keras 3's generic recurrent layer ``RNN(cell)`` and its cells.

The built-in cells (``SimpleRNNCell``, ``LSTMCell``, ``GRUCell``) hold the same weights as
the ``SimpleRNN`` / ``LSTM`` / ``GRU`` layers and run on the same op (``_builtin._rnn``, one
``lax.scan``), so ``RNN(LSTMCell(n))`` computes exactly what ``LSTM(n)`` computes, a whole
sequence being one tape op; a stack of built-in cells is one op per cell (running cell 1
over the sequence, then cell 2 over its outputs, is the stacked recurrence). Any other cell
(a Layer with ``state_size`` and ``call(inputs, states)``, as in TensorFlow's RNN guide) runs
step by step in Python, so the tape records its ops and ``tf.function`` unrolls the loop.
"""
from ... import ops as _ops
from ..._core.tensor import TensorShape
from ._base import Layer
from .._serialization import deserialize_keras_object
from ._builtin import _RNN, _run_cell, _set_cell_activations, _set_cell_initializers, _set_cell_penalties


class _BuiltinCell(Layer):
    """Shared by the built-in cells: options, weights and the one-step call of the layers."""

    _cell = None
    _gates = 1
    # Keras 3's LSTMCell configuration, in its order (the other cells leave some keys out)
    _k_config_keys = ("units", "activation", "recurrent_activation", "use_bias", "unit_forget_bias",
                      "kernel_initializer", "recurrent_initializer", "bias_initializer", "kernel_regularizer",
                      "recurrent_regularizer", "bias_regularizer", "kernel_constraint", "recurrent_constraint",
                      "bias_constraint", "dropout", "recurrent_dropout", "seed")
    # The weights (names, shapes, initializers, LSTM forget bias) exactly as the layers make them.
    build = _RNN.build
    _bias_shape = _RNN._bias_shape
    _cell_options = _RNN._cell_options

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 seed=None, **kwargs):
        if dropout or recurrent_dropout:
            raise NotImplementedError(f"{type(self).__name__}(dropout / recurrent_dropout) is not supported by "
                                      "tapejax yet; apply tf.keras.layers.Dropout to the RNN's inputs or "
                                      "outputs instead.")
        super().__init__(**kwargs)
        self.units = int(units)
        _set_cell_activations(self, activation, recurrent_activation, "cells")
        self.use_bias = use_bias
        _set_cell_initializers(self, kernel_initializer, recurrent_initializer, bias_initializer, seed)
        _set_cell_penalties(self, kernel_regularizer, recurrent_regularizer, bias_regularizer, kernel_constraint,
                            recurrent_constraint, bias_constraint)
        self.unit_forget_bias = unit_forget_bias
        self.dropout = self.recurrent_dropout = 0.0

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def get_initial_state(self, batch_size=None):
        """Zero states, one ``(batch_size, units)`` tensor per entry of ``state_size``."""
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) else [self.state_size]
        return [_ops.zeros((batch_size, d), dtype=self.compute_dtype) for d in sizes]

    def call(self, inputs, states, training=None):
        single = not isinstance(states, (list, tuple))
        outs = _run_cell(self, _ops.expand_dims(inputs, 1), states, return_sequences=False, go_backwards=False)
        new = list(outs[1:])
        return outs[0], (new[0] if single and len(new) == 1 else new)



class SimpleRNNCell(_BuiltinCell):
    """The cell of ``SimpleRNN``: ``h = tanh(x @ kernel + h @ recurrent_kernel + bias)``.

    ``cell(x, [h])`` runs one step and returns ``(h, [h])``; ``RNN(cell)`` runs a sequence.

    Example:
        >>> import tapejax as tf
        >>> cell = tf.keras.layers.SimpleRNNCell(4)
        >>> out, states = cell(tf.ones([2, 3]), [tf.zeros([2, 4])])
        >>> out.shape, len(states), cell.state_size
        (TensorShape([2, 4]), 1, 4)
    """

    _cell, _gates = "simple", 1
    _k_config_keys = tuple(k for k in _BuiltinCell._k_config_keys if k not in ("recurrent_activation", "unit_forget_bias"))

    def __init__(self, units, activation="tanh", **kwargs):
        kwargs.pop("recurrent_activation", None)
        kwargs.pop("unit_forget_bias", None)
        super().__init__(units, activation=activation, **kwargs)


class LSTMCell(_BuiltinCell):
    """The cell of ``LSTM`` (gates i, f, c, o; forget bias 1): ``cell(x, [h, c])`` returns ``(h, [h, c])``.

    Example:
        >>> import tapejax as tf
        >>> cell = tf.keras.layers.LSTMCell(4)
        >>> tf.keras.layers.RNN(cell)(tf.ones([2, 5, 3])).shape, cell.state_size
        (TensorShape([2, 4]), [4, 4])
    """

    _cell, _gates = "lstm", 4

    @property
    def state_size(self):
        return [self.units, self.units]


class GRUCell(_BuiltinCell):
    """The cell of ``GRU`` (Keras 3's layout, ``reset_after=True``): ``cell(x, [h])`` returns ``(h, [h])``.

    Example:
        >>> import tapejax as tf
        >>> cell = tf.keras.layers.GRUCell(4)
        >>> _ = tf.keras.layers.RNN(cell)(tf.ones([2, 5, 3]))
        >>> cell.kernel.shape, cell.bias.shape
        (TensorShape([3, 12]), TensorShape([2, 12]))
    """

    _cell, _gates = "gru", 3
    _k_config_keys = tuple(k for k in _BuiltinCell._k_config_keys if k not in ("unit_forget_bias", "seed")) + (
        "reset_after", "seed")

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", reset_after=True, **kwargs):
        kwargs.pop("unit_forget_bias", None)
        super().__init__(units, activation=activation, recurrent_activation=recurrent_activation, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self, g):
        return (2, g) if self.reset_after else (g,)

    def _cell_options(self):
        return {"reset_after": self.reset_after}



def _is_builtin(cell):
    # A subclass that overrides call computes something else: it runs step by step.
    return isinstance(cell, _BuiltinCell) and type(cell).call is _BuiltinCell.call


def _output_size(cell):
    size = getattr(cell, "output_size", None)
    if size is not None:
        return size
    return cell.state_size[0] if isinstance(cell.state_size, (list, tuple)) else cell.state_size


def _zero_states(cell, batch_size, dtype):
    fn = getattr(cell, "get_initial_state", None)
    if fn is not None:
        return fn(batch_size=batch_size)
    sizes = cell.state_size if isinstance(cell.state_size, (list, tuple)) else [cell.state_size]
    return [_ops.zeros((batch_size, d), dtype=dtype) for d in sizes]


def _check_cell(cell, what):
    if "call" not in dir(cell):
        raise ValueError(f"{what} should have a `call` method. Received: cell={cell}")
    if "state_size" not in dir(cell):
        raise ValueError(f"{what} should have a `state_size` attribute (single integer or list of integers, "
                         f"one integer per RNN state). Received: cell={cell}")


class StackedRNNCells(Layer):
    """Cells run one after another at each step, as one cell (``RNN([cell1, cell2])`` makes one).

    ``state_size`` is the list of the cells' state sizes, the states a list with one
    entry (a list of states) per cell.

    Example:
        >>> import tapejax as tf
        >>> cells = tf.keras.layers.StackedRNNCells([tf.keras.layers.LSTMCell(3), tf.keras.layers.GRUCell(4)])
        >>> out, h_c, h = tf.keras.layers.RNN(cells, return_state=True)(tf.ones([2, 5, 3]))
        >>> out.shape, cells.state_size, [s.shape for s in h_c]
        (TensorShape([2, 4]), [[3, 3], 4], [TensorShape([2, 3]), TensorShape([2, 3])])
    """

    def __init__(self, cells, **kwargs):
        for cell in cells:
            _check_cell(cell, "All cells")
        super().__init__(**kwargs)
        self.cells = list(cells)

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def get_initial_state(self, batch_size=None):
        return [_zero_states(c, batch_size, self.compute_dtype) for c in self.cells]

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer):
                cell._k_maybe_build(input_shape)
            input_shape = TensorShape((input_shape[0], _output_size(cell)))
        self.built = True

    def call(self, inputs, states, training=None):
        new_states = []
        for cell, st in zip(self.cells, states):
            is_list = isinstance(st, (list, tuple))
            inputs, st = cell(inputs, list(st) if is_list else [st])
            if not isinstance(st, (list, tuple)):
                st = [st]
            new_states.append(list(st) if is_list or len(st) != 1 else st[0])
        return inputs, new_states

    _k_config_keys = ("cells",)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize_keras_object(c, custom_objects) if isinstance(c, dict) else c for c in config.pop("cells")]
        return cls(cells, **config)


class RNN(Layer):
    """Runs a recurrent cell over the time axis of ``(batch, time, features)`` inputs.

    The cell is a built-in cell (``SimpleRNNCell``, ``LSTMCell``, ``GRUCell``: one op per
    sequence, the same numbers as the matching layer), a list of cells (a
    ``StackedRNNCells``), or any Layer with ``state_size`` (an int or a list of ints) and
    ``call(inputs, states) -> (output, new_states)``.

    Args:
        cell: the cell, or a list of cells.
        return_sequences: return every step's output ``(batch, time, units)``, not the last.
        return_state: also return the final states: ``[output, *states]``.
        go_backwards: process the sequence in reverse (outputs in processing order).

    Call arguments: ``inputs``; ``initial_state`` (a state or list of states; zeros by default).

    Example:
        >>> import tapejax as tf
        >>> class MinimalRNNCell(tf.keras.layers.Layer):
        ...     def __init__(self, units, **kwargs):
        ...         super().__init__(**kwargs)
        ...         self.units = units
        ...         self.state_size = units
        ...     def build(self, input_shape):
        ...         self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer='ones',
        ...                                       name='kernel')
        ...         self.recurrent_kernel = self.add_weight(shape=(self.units, self.units),
        ...                                                 initializer='zeros', name='recurrent_kernel')
        ...     def call(self, inputs, states):
        ...         output = tf.matmul(inputs, self.kernel) + tf.matmul(states[0], self.recurrent_kernel)
        ...         return output, [output]
        >>> rnn = tf.keras.layers.RNN(MinimalRNNCell(2), return_sequences=True)
        >>> rnn(tf.ones([1, 3, 4])).numpy().tolist()
        [[[4.0, 4.0], [4.0, 4.0], [4.0, 4.0]]]
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        _check_cell(cell, "Argument `cell`")
        if stateful:
            raise NotImplementedError("RNN(stateful=True) is not supported by tapejax yet; pass the final "
                                      "states back as initial_state= instead (return_state=True).")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = False
        self.unroll = unroll
        self.zero_output_for_mask = zero_output_for_mask
        state_size = cell.state_size
        if not isinstance(state_size, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers "
                             "(one for each state tensor).")
        self.state_size = [state_size] if isinstance(state_size, int) else list(state_size)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        if isinstance(self.cell, Layer):
            self.cell._k_maybe_build(TensorShape((input_shape[0],) + tuple(input_shape[2:])))
        self.built = True

    def get_initial_state(self, batch_size):
        """The cell's initial states (zeros), a list."""
        states = _zero_states(self.cell, batch_size, self.compute_dtype)
        return list(states) if isinstance(states, (list, tuple)) else [states]

    def call(self, sequences, initial_state=None, mask=None, training=None):
        if mask is not None:
            raise NotImplementedError("RNN(mask=...) is not supported by tapejax yet.")
        if initial_state is not None and not isinstance(initial_state, (list, tuple)):
            initial_state = [initial_state]
        cell = self.cell
        if _is_builtin(cell):
            outs = _run_cell(cell, sequences, initial_state, self.return_sequences, self.go_backwards)
            return [outs[0], *outs[1:]] if self.return_state else outs[0]
        if isinstance(cell, StackedRNNCells) and all(_is_builtin(c) for c in cell.cells):
            return self._stacked_builtin(sequences, initial_state)
        return self._steps(sequences, initial_state)

    def _stacked_builtin(self, sequences, initial_state):
        # Cell i over the whole sequence of cell i-1's outputs: the stacked recurrence, one op per cell.
        seq, finals, last = sequences, [], len(self.cell.cells) - 1
        for i, c in enumerate(self.cell.cells):
            outs = _run_cell(c, seq, None if initial_state is None else initial_state[i],
                             return_sequences=self.return_sequences or i < last,
                             go_backwards=self.go_backwards and i == 0)
            seq = outs[0]
            finals.append(list(outs[1:]))
        return [seq, *finals] if self.return_state else seq

    def _steps(self, sequences, initial_state):
        states = list(initial_state) if initial_state is not None else \
            self.get_initial_state(batch_size=sequences.shape[0])
        steps = range(sequences.shape[1])
        outputs = []
        for t in (reversed(steps) if self.go_backwards else steps):
            out, states = self.cell(sequences[:, t], states)
            if not isinstance(states, (list, tuple)):
                states = [states]
            outputs.append(out)
        output = _ops.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return [output, *states] if self.return_state else output

    _k_config_keys = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
                      "zero_output_for_mask", "cell")

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = config.pop("cell")
        return cls(deserialize_keras_object(cell, custom_objects) if isinstance(cell, dict) else cell, **config)
