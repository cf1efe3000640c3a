"""tf.compat: TensorFlow 2's helpers (values recorded from TF 2.21) and tf.compat.v1, which imports
(as in TF 2.21) and names what to write instead at each TF1 name (the migration guides' cells)."""
import pathlib

import pytest

import tapejax as tf


def test_bytes_and_text_helpers_as_tensorflow():
    assert tf.compat.as_bytes("é") == b"\xc3\xa9" and tf.compat.as_bytes(bytearray(b"x")) == b"x"
    assert tf.compat.as_str(b"b") == "b" == tf.compat.as_text("b")
    assert (tf.compat.as_str_any(b"a"), tf.compat.as_str_any(3)) == ("a", "3")
    assert tf.compat.path_to_str(pathlib.Path("/tmp")) == "/tmp"
    assert tf.compat.dimension_value(tf.TensorShape([2, None])[1]) is None
    assert tf.compat.dimension_at_index(tf.TensorShape([2, 3]), 1) == 3
    assert tf.compat.forward_compatible(2021, 1, 1) is True
    for f in (tf.compat.as_bytes, tf.compat.as_text):
        with pytest.raises(TypeError, match=r"^Expected binary or unicode string, got 3$"):
            f(3)


def test_v1_imports_and_each_tf1_name_says_what_to_write():
    import tapejax.compat.v1 as tf1   # the migration guides' first line (TF 2.21 imports it too)
    assert tf.compat.v1 is tf1 and tf1.executing_eagerly()
    tf1.enable_eager_execution()
    assert tf1.logging.ERROR == 40
    # TF 2.21: AttributeError for tf1.estimator (removed in 2.16) and tf1.layers.Dense (Keras 3)
    with pytest.raises(AttributeError, match=r"tf.compat.v1.estimator \(removed in TensorFlow 2.16\) is not "
                                             r"provided by tapejax: use tf.keras Model.compile/fit"):
        tf1.estimator
    with pytest.raises(AttributeError, match=r"tf.compat.v1.Session .* write TF2 code instead"):
        tf1.Session
    with pytest.raises(AttributeError, match=r"use tf.keras.layers"):
        tf1.layers.Dense
    assert not hasattr(tf1, "_private")
