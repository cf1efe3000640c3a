"""Behaviours found by running TensorFlow's effective_tf2 guide cell by cell under TF 2.21 and
tapejax. Expected values and messages are TF 2.21's (Keras 3), recorded with /tmp/tf/bin/python."""
import pytest

import tapejax as tf


class _Passes(tf.keras.Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


@pytest.mark.parametrize("cls", [_Passes, tf.keras.Model])
def test_model_arguments_that_are_not_inputs_and_outputs_go_to_layer_init(cls):
    # guide cell 9: DynamicRNN's `super(DynamicRNN, self).__init__(self)`; Keras 3 makes a
    # functional model only of (inputs, outputs), anything else reaches Layer.__init__.
    x = tf.keras.Input((3,))
    y = tf.keras.layers.Dense(2)(x)
    for args, given in (((1,), 2), ((1, 2, 3), 4), ((x,), 2)):
        with pytest.raises(TypeError) as e:
            cls(*args)
        assert str(e.value) == f"Layer.__init__() takes 1 positional argument but {given} were given"
    for key, value in (("inputs", x), ("outputs", y)):
        with pytest.raises(ValueError) as e:
            cls(**{key: value})
        assert str(e.value) == f"Unrecognized keyword arguments passed to {cls.__name__}: {{{key!r}: {value!r}}}"
    assert cls(x, y).outputs is not None and cls(x, outputs=y).outputs is not None
    assert cls(inputs=x, outputs=y).outputs is not None


def test_metrics_have_no_keras2_reset_states():
    # guide cell 11 calls loss_metric.reset_states(): Keras 3 (TF 2.21) has only reset_state
    m = tf.keras.metrics.Mean(name="train_loss")
    with pytest.raises(AttributeError) as e:
        m.reset_states()
    assert str(e.value) == "'Mean' object has no attribute 'reset_states'"
    m.update_state(3.0)
    m.reset_state()
    assert float(m.result()) == 0.0
