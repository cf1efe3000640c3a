"""tf.keras.utils.plot_model / model_to_dot: Keras 3's checks and messages (TF 2.21 without pydot, the
pandas_dataframe tutorial's cells 25, 41, 48), and the graph when pydot is there."""
import importlib.util
import sys

import pytest

import tapejax as tf


def _model():
    i = {"a": tf.keras.Input((1,), name="a"), "b": tf.keras.Input((1,), name="b")}
    x = tf.keras.layers.Concatenate()([i["a"], i["b"]])
    return tf.keras.Model(i, tf.keras.layers.Dense(1, name="out")(x))


def test_unbuilt_model():
    with pytest.raises(ValueError) as e:
        tf.keras.utils.plot_model(tf.keras.Sequential([tf.keras.layers.Dense(2)]))
    assert str(e.value) == ("This model has not yet been built. Build the model first by calling `build()` or by "
                            "calling the model on a batch of data.")


@pytest.mark.skipif(importlib.util.find_spec("pydot") is not None, reason="pydot is installed")
def test_without_pydot_tensorflows_import_error(monkeypatch):
    # Keras prints the message instead inside IPython; another test of the worker may have imported it.
    monkeypatch.delitem(sys.modules, "IPython.core.magics.namespace", raising=False)
    with pytest.raises(ImportError) as e:
        tf.keras.utils.plot_model(_model(), rankdir="LR", show_shapes=True, show_layer_names=True)
    assert str(e.value) == "You must install pydot (`pip install pydot`) for `plot_model` to work."


def test_model_to_dot_graph():
    pytest.importorskip("pydot")
    dot = tf.keras.utils.model_to_dot(_model(), show_shapes=True)
    labels = sorted(n.get_label() for n in dot.get_nodes() if n.get_label())
    assert labels == ["a (InputLayer)|(None, 1)", "b (InputLayer)|(None, 1)", "concatenate (Concatenate)|(None, 2)",
                      "out (Dense)|(None, 1)"]
    assert len(dot.get_edges()) == 3
