"""TensorFlow's gpu guide on a machine without GPUs, cell by cell under TF 2.21 and tapejax:
what TF 2.21 prints there (recorded with /tmp/tf/bin/python)."""
import tapejax as tf


def test_log_device_placement_setting_and_soft_placement(capsys):
    # cells 3, 7, 8: with placement logging on, the ops of a missing GPU's scope run on the CPU
    tf.debugging.set_log_device_placement(True)
    try:
        assert tf.debugging.get_log_device_placement() is True
        with tf.device('/device:GPU:2'):
            a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            c = tf.matmul(a, b)
        print(c)
        assert capsys.readouterr().out == ("tf.Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), "
                                           "dtype=float32)\n")
    finally:
        tf.debugging.set_log_device_placement(False)
    assert tf.debugging.get_log_device_placement() is False
