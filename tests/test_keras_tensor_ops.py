"""Keras 3's operators on symbolic tensors (KerasTensor): ``2 * x + 1`` builds a functional model
whose operations are graph nodes (not in model.layers, listed by model.summary), and TensorFlow
ops on a KerasTensor raise Keras 3's ValueError. Outputs recorded from TF 2.21 (csv tutorial
cells 12-14 and probes)."""
import numpy as np
import pytest

import tapejax as tf


def test_operators_build_a_functional_model(capsys):
    x = tf.keras.Input(shape=(), dtype=tf.float32)
    result = 2 * x + 1
    assert repr(result).startswith("<KerasTensor shape=(None,), dtype=float32, sparse=False, ragged=False, name=")
    calc = tf.keras.Model(inputs=x, outputs=result)
    assert calc(np.array([1])).numpy().tolist() == [3.0]
    assert calc(np.array([2])).numpy().tolist() == [5.0]
    assert len(calc.layers) == 1 and type(calc.layers[0]).__name__ == "InputLayer"
    calc.summary()
    rows = [l for l in capsys.readouterr().out.splitlines() if l.startswith("│")]
    assert [r.split("│")[1].strip().split(" ")[1] for r in rows] == ["(InputLayer)", "(Multiply)", "(Add)"]
    assert [r.split("│")[2].strip() for r in rows] == ["(None)", "(None)", "(None)"]


def test_every_operator_and_training_through_them():
    tf.keras.utils.set_random_seed(1)
    a, b = tf.keras.Input((3,)), tf.keras.Input((3,))
    h = tf.keras.layers.Dense(2)(a - b / 2.0)
    out = -h[:, 0] ** 2 + 1 - (1 - a[:, 1])
    m = tf.keras.Model([a, b], out)
    assert [type(l).__name__ for l in m.layers] == ["InputLayer", "InputLayer", "Dense"]
    # TF 2.21: a - b/2 is 0, so the Dense output is its bias (0): 0 + 1 - (1 - 1) = 1
    np.testing.assert_array_equal(m([np.ones((2, 3), np.float32), np.full((2, 3), 2., np.float32)]), [1., 1.])
    p = tf.keras.Input((2,)) @ tf.constant([[1.], [2.]])
    assert p.shape.as_list() == [None, 1]
    m.compile("sgd", "mse")
    loss = m.fit([np.ones((4, 3)), np.ones((4, 3))], np.zeros(4), verbose=0, epochs=2).history["loss"]
    np.testing.assert_allclose(loss, [0.83135, 0.81029], atol=1e-5)   # TF 2.21, same seed


def test_tensorflow_ops_on_a_keras_tensor_raise_keras_valueerror():
    x = tf.keras.Input((2,))
    # migrate/metrics_optimizers cell 6: tf.math.argmax on a KerasTensor (TF 2.21: ValueError)
    for op in (lambda: tf.math.argmax(x, axis=1), lambda: tf.nn.relu(x), lambda: tf.add(x, 1.0)):
        with pytest.raises(ValueError, match=r"^A KerasTensor cannot be used as input to a TensorFlow function\. "
                                             r"A KerasTensor is a symbolic placeholder"):
            op()
    with pytest.raises(ValueError, match=r"^A KerasTensor is symbolic: it's a placeholder for a shape an a dtype\. "
                                         r"It doesn't have any actual numerical value\. You cannot convert it to a "
                                         r"NumPy array\.$"):
        np.asarray(x)
