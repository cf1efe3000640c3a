"""TensorFlow's top-level aliases of Keras namespaces: tf.metrics, tf.losses, tf.optimizers and
tf.initializers are tf.keras's (TF 2.21: the same names; values recorded from TF 2.21)."""
import tapejax as tf


def test_top_level_keras_namespaces():
    for name in ("metrics", "losses", "optimizers", "initializers"):
        assert getattr(tf, name) is getattr(tf.keras, name)
    # distribute/save_and_load tutorial: compile(metrics=[tf.metrics.SparseCategoricalAccuracy()])
    m = tf.metrics.SparseCategoricalAccuracy()
    m.update_state([1, 2], [[0.1, 0.9, 0.0], [0.8, 0.1, 0.1]])
    assert (m.name, float(m.result())) == ("sparse_categorical_accuracy", 0.5)
    assert float(tf.losses.MeanSquaredError()([1., 2.], [1.5, 2.5])) == 0.25
    assert float(tf.optimizers.SGD(0.1).learning_rate.numpy()) == float(tf.constant(0.1).numpy())
    assert tf.initializers.Constant(3.)(shape=(2,)).numpy().tolist() == [3.0, 3.0]
