"""Keras 3's Hashing: FarmHash Fingerprint64 buckets of strings, integers (as decimal strings) and floats
(truncated), the mask bin, the encodings, the configuration and symbolic shapes. Expected values recorded
from TF 2.21 (Keras 3)."""
import numpy as np

import tapejax as tf

L = tf.keras.layers


def test_hashing_matches_tf():
    y = L.Hashing(num_bins=3)([["A"], ["B"], ["C"], ["D"], ["E"]])
    assert y.dtype == tf.int64 and y.numpy().tolist() == [[1], [0], [1], [1], [2]]
    assert L.Hashing(num_bins=3, mask_value="")([["A"], ["B"], [""], ["C"], ["D"]]).numpy().tolist() == [[1], [1], [0], [2], [2]]
    ints = np.array([[1, 2, -5], [123456789, 0, 7]])
    assert L.Hashing(num_bins=7)(ints).numpy().tolist() == [[5, 5, 0], [3, 2, 2]]
    assert L.Hashing(num_bins=7, mask_value=0)(ints).numpy().tolist() == [[4, 2, 1], [3, 0, 5]]
    assert L.Hashing(num_bins=5)(np.array([1.7, -2.2, 3.0])).numpy().tolist() == [4, 0, 1]
    y = L.Hashing(num_bins=4, output_mode="multi_hot")([["A", "B"], ["C", "C"]])
    assert y.dtype == tf.float32 and y.numpy().tolist() == [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    assert L.Hashing(num_bins=4, output_mode="one_hot")([["A"], ["B"]]).numpy().tolist() == [[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    assert L.Hashing(num_bins=4, output_mode="count")([["A", "A", "B"]]).numpy().tolist() == [[3.0, 0.0, 0.0, 0.0]]


def test_hashing_config_and_symbolic_shapes():
    config = L.Hashing(num_bins=3, mask_value="").get_config()
    config.pop("name")
    assert sorted(config.items()) == [('dtype', {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'int64'}, 'registered_name': None}), ('mask_value', ''), ('num_bins', 3), ('output_mode', 'int'), ('salt', None), ('sparse', False), ('trainable', True)]
    inp = tf.keras.Input(shape=(1,), dtype="string")
    assert tuple(L.Hashing(num_bins=3)(inp).shape) == (None, 1)
    assert tuple(L.Hashing(num_bins=3, output_mode="one_hot")(inp).shape) == (None, 3)
