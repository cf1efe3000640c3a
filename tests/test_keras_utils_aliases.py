"""tf.keras.utils.pad_sequences / tf.keras.preprocessing.sequence.pad_sequences, utils.normalize, the
custom-object registry (get_custom_objects, custom_object_scope) and Keras 3's top-level aliases
(tf.keras.Layer, Loss, Metric, Optimizer, InputSpec, KerasTensor, Initializer, Regularizer).
Expected values recorded from TF 2.21 (Keras 3)."""
import numpy as np
import pytest

import tapejax as tf

pad = tf.keras.utils.pad_sequences
S = [[1], [2, 3], [4, 5, 6]]


def test_pad_sequences_matches_tf():
    assert tf.keras.preprocessing.sequence.pad_sequences is pad
    y = pad(S)
    assert y.dtype == np.int32 and y.tolist() == [[0, 0, 1], [0, 2, 3], [4, 5, 6]]
    assert pad(S, maxlen=2).tolist() == [[0, 1], [2, 3], [5, 6]]
    assert pad(S, maxlen=2, padding="post", truncating="post", value=-1).tolist() == [[1, -1], [2, 3], [4, 5]]
    y = pad([[1.5], [2, 3]], dtype="float32")
    assert y.dtype == np.float32 and y.tolist() == [[0.0, 1.5], [2.0, 3.0]]
    y = pad([["a"], ["b", "c"]], dtype=object, value="")
    assert y.dtype == object and y.tolist() == [["", "a"], ["b", "c"]]
    assert pad([[], [1]], maxlen=3).tolist() == [[0, 0, 0], [0, 0, 1]]
    assert pad([[[1, 2]], [[3, 4], [5, 6]]]).tolist() == [[[0, 0], [1, 2]], [[3, 4], [5, 6]]]


def test_pad_sequences_errors_match_tf():
    with pytest.raises(ValueError, match="`dtype` int32 is not compatible with `value`'s type: <class 'str'>"):
        pad(S, value="x")
    with pytest.raises(ValueError, match='Padding type "mid" not understood'):
        pad(S, padding="mid")
    with pytest.raises(ValueError, match="`sequences` must be a list of iterables. Found non-iterable: 1"):
        pad([1, 2])


def test_normalize_matches_tf():
    np.testing.assert_allclose(tf.keras.utils.normalize(np.array([[3., 4.], [0., 0.]])), [[0.6, 0.8], [0., 0.]])
    np.testing.assert_allclose(tf.keras.utils.normalize(np.array([[3., 4.], [1., 1.]]), axis=0, order=1),
                               [[0.75, 1.], [0.2, 0.2]])
    y = tf.keras.utils.normalize(tf.constant([[3., 4.], [0., 0.]]))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), [[0.6, 0.8], [0., 0.]], rtol=1e-6)


def test_custom_objects_reach_deserialization():
    class Doubler(tf.keras.layers.Layer):
        def call(self, x):
            return 2 * x

    config = tf.keras.layers.serialize(Doubler(name="d")) if hasattr(tf.keras.layers, "serialize") else \
        tf.keras.utils.serialize_keras_object(Doubler(name="d"))
    with tf.keras.utils.custom_object_scope({"Doubler": Doubler}):
        assert type(tf.keras.utils.deserialize_keras_object(config)) is Doubler
    assert tf.keras.utils.get_registered_object("Doubler") is None
    tf.keras.utils.get_custom_objects()["Doubler"] = Doubler
    try:
        assert type(tf.keras.utils.deserialize_keras_object(config)) is Doubler
    finally:
        del tf.keras.utils.get_custom_objects()["Doubler"]

    @tf.keras.utils.register_keras_serializable(package="TestUtils")
    class Tripler(Doubler):
        pass
    assert tf.keras.utils.get_custom_objects()["TestUtils>Tripler"] is Tripler
    assert tf.keras.utils.get_registered_name(Tripler) == "TestUtils>Tripler"


def test_top_level_aliases_are_keras_classes():
    k = tf.keras
    assert (k.Layer, k.InputSpec, k.KerasTensor) == (k.layers.Layer, k.layers.InputSpec, k.layers.KerasTensor)
    assert (k.Loss, k.Metric, k.Optimizer) == (k.losses.Loss, k.metrics.Metric, k.optimizers.Optimizer)
    assert (k.Initializer, k.Regularizer) == (k.initializers.Initializer, k.regularizers.Regularizer)


# TF 2.21 (Keras's legacy preprocessing.sequence), Python's random state set as in each case
SKIPGRAM_CASES = ['([[1, 2], [2, 1], [2, 3], [3, 2]], [1, 1, 1, 1])', '([[4, 2], [3, 4], [2, 3], [4, 3], [4, 2], [3, 2], [2, 4], [2, 4], [3, 2], [1, 2], [2, 1], [2, 3]], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])', '([[5, 4], [4, 2], [3, 5], [1, 2], [4, 3], [2, 1], [2, 3], [3, 1], [4, 7], [4, 1], [3, 1], [2, 7], [2, 4], [3, 2], [3, 7], [4, 2], [3, 4], [5, 2], [1, 2], [5, 7], [3, 4], [2, 9], [2, 1], [4, 5], [3, 4], [1, 3], [5, 3], [1, 4]], [1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0])', '([[2, 3], [3, 2], [2, 1], [1, 2], [3, 8], [2, 1], [1, 2], [4, 3], [3, 4]], [[0, 1], [0, 1], [0, 1], [0, 1], [1, 0], [1, 0], [1, 0], [0, 1], [0, 1]])', '([[3, 2], [2, 1], [3, 4], [5, 1], [4, 3], [2, 3], [4, 1]], [1, 1, 1, 1, 1, 1, 1])']


def test_skipgrams_and_sampling_table_match_tf():
    import random
    seq = tf.keras.preprocessing.sequence
    np.testing.assert_allclose(seq.make_sampling_table(6), [0.0031522478751942504, 0.0031522478751942504, 0.0054759726939176976, 0.007415564097374219, 0.009128167456366161, 0.010684345040995184], rtol=1e-12)
    got = [seq.skipgrams([1, 2, 3], 4, window_size=1, negative_samples=0, shuffle=False),
           seq.skipgrams([1, 0, 2, 3, 4, 2], 6, window_size=2, negative_samples=0, seed=42)]
    random.seed(7)
    got.append(seq.skipgrams([1, 2, 3, 4, 5], 10, window_size=2, negative_samples=1.0))
    random.seed(3)
    got.append(seq.skipgrams([1, 2, 3, 4], 10, window_size=1, negative_samples=0.5, categorical=True, seed=5))
    random.seed(1)
    got.append(seq.skipgrams([5, 1, 2, 3, 4, 1], 6, window_size=1, negative_samples=0,
                             sampling_table=seq.make_sampling_table(6, sampling_factor=0.2)))
    assert [str(g) for g in got] == SKIPGRAM_CASES


def test_pack_unpack_and_is_keras_tensor_match_tf():
    u = tf.keras.utils
    assert (u.pack_x_y_sample_weight(1), u.pack_x_y_sample_weight(1, 2), u.pack_x_y_sample_weight(1, 2, 3),
            u.pack_x_y_sample_weight(1, None, 3), u.pack_x_y_sample_weight([1, 2])) == (1, (1, 2), (1, 2, 3), 1,
                                                                                       ([1, 2],))
    assert [u.unpack_x_y_sample_weight(d) for d in [(1,), (1, 2), (1, 2, 3), 1, [1, 2]]] == [
        (1, None, None), (1, 2, None), (1, 2, 3), (1, None, None), (1, 2, None)]
    with pytest.raises(ValueError, match=r"found: \(1, 2, 3, 4\)"):
        u.unpack_x_y_sample_weight((1, 2, 3, 4))
    assert u.is_keras_tensor(tf.keras.Input((2,))) and not u.is_keras_tensor(tf.constant(1.))
    assert u.clear_session is tf.keras.backend.clear_session
