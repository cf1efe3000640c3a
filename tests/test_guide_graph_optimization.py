"""tf.config.optimizer, found by running TensorFlow's graph_optimization guide cell by cell under
TF 2.21 and tapejax. Expected values are TF 2.21's, recorded with /tmp/tf/bin/python."""
import pytest

import tapejax as tf
from tapejax._core import graph_options


@pytest.fixture(autouse=True)
def _restore_options():
    before = dict(graph_options._options)
    yield
    graph_options._options.clear()
    graph_options._options.update(before)


def test_experimental_options_are_reported_as_tensorflow_reports_them():
    graph_options._options.clear()
    assert tf.config.optimizer.get_experimental_options() == \
        {'disable_model_pruning': False, 'disable_meta_optimizer': False}
    tf.config.optimizer.set_experimental_options(
        {'debug_stripper': True, 'min_graph_nodes': 3, 'foo': 1, 'constant_folding': False})
    got = tf.config.optimizer.get_experimental_options()
    assert repr(got) == ("{'constant_folding': False, 'debug_stripper': True, 'disable_model_pruning': False, "
                         "'disable_meta_optimizer': False, 'min_graph_nodes': 3}")
    tf.config.optimizer.set_experimental_options({'debug_stripper': False})
    assert tf.config.optimizer.get_experimental_options()['debug_stripper'] is False


def test_debug_stripper_leaves_prints_and_checks_out_of_functions(capsys):
    # guide cell 8: with debug_stripper on, check_numerics of an Inf in a tf.function raises nothing
    @tf.function
    def f(x):
        tf.print("printed", x)
        tf.debugging.check_numerics(x, "Bad!")
        tf.debugging.Assert(x < 0, [x])
        tf.debugging.assert_negative(x)
        return tf.debugging.check_numerics(x * 2, "bad2")

    inf = tf.constant(float('inf'))
    tf.config.optimizer.set_experimental_options({'debug_stripper': True})
    assert f(inf).numpy() == float('inf')
    assert capsys.readouterr().out == ""
    with pytest.raises(tf.errors.InvalidArgumentError, match="eager : Tensor had Inf values"):
        tf.debugging.check_numerics(inf, "eager")   # eager ops still check
    # off again, the same function checks again (TF re-optimizes its graph)
    tf.config.optimizer.set_experimental_options({'debug_stripper': False})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Bad! : Tensor had Inf values"):
        f(inf)


def test_jit_setting():
    tf.config.optimizer.set_jit(True)
    assert tf.config.optimizer.get_jit() == "autoclustering"
    tf.config.optimizer.set_jit(False)
    assert tf.config.optimizer.get_jit() == ""
    tf.config.optimizer.set_jit("autoclustering")
    assert tf.config.optimizer.get_jit() == "autoclustering"
    tf.config.optimizer.set_jit(False)
