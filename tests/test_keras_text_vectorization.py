"""Keras 3's TextVectorization: standardization (ASCII lower, Keras's punctuation), whitespace /
character split, n-grams, adapt's vocabulary order, int / multi_hot / count outputs, output lengths,
configs, symbolic calls and tf.data. Expected values recorded from TF 2.21 (Keras 3)."""
import numpy as np

import tapejax as tf

L = tf.keras.layers
DATA = ["The cat sat.", "The dog sat on the mat!", "A cat, a DOG; and a bird?", "Éclair CAFÉ the end"]


def test_adapt_and_int_output_match_tf():
    t = L.TextVectorization(max_tokens=8, output_sequence_length=5)
    t.adapt(DATA)
    assert t.get_vocabulary() == ["", "[UNK]", "the", "a", "sat", "dog", "cat", "Éclair"]
    assert t.vocabulary_size() == 8
    y = t(["the cat sat on a mat with a dog", "bird", ""])
    assert y.dtype == tf.int64 and y.numpy().tolist() == [[2, 6, 4, 1, 3], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
    assert t("the cat").numpy().tolist() == [2, 6, 0, 0, 0]   # a scalar string: an unbatched output
    config = {k: v for k, v in t.get_config().items() if k not in ("name", "dtype")}
    assert sorted(config.items()) == [
        ("encoding", "utf-8"), ("idf_weights", None), ("max_tokens", 8), ("ngrams", None), ("output_mode", "int"),
        ("output_sequence_length", 5), ("pad_to_max_tokens", False), ("ragged", False), ("sparse", False),
        ("split", "whitespace"), ("standardize", "lower_and_strip_punctuation"), ("trainable", True),
        ("vocabulary", None), ("vocabulary_size", 8)]


def test_unlimited_vocabulary_pads_to_the_longest():
    t = L.TextVectorization()
    t.adapt(DATA)
    assert t.get_vocabulary() == ["", "[UNK]", "the", "a", "sat", "dog", "cat", "Éclair", "on", "mat", "end", "cafÉ",
                                  "bird", "and"]
    assert t(DATA).numpy().tolist() == [[2, 6, 4, 0, 0, 0, 0], [2, 5, 4, 8, 2, 9, 0], [3, 6, 3, 5, 13, 3, 12],
                                        [7, 11, 2, 10, 0, 0, 0]]
    assert t(np.array([["the cat"], ["dog dog dog mat sat"]])).numpy().tolist() == [[2, 6, 0, 0, 0],
                                                                                  [5, 5, 5, 9, 4]]


def test_other_modes_match_tf():
    t = L.TextVectorization(output_mode="multi_hot", max_tokens=6)
    t.adapt(DATA)
    assert t(DATA[:2]).numpy().tolist() == [[0, 1, 0, 1, 0, 1], [1, 1, 0, 1, 1, 0]]
    t = L.TextVectorization(output_mode="count", vocabulary=["cat", "dog", "the"])
    assert t(["the cat the dog Dog"]).numpy().tolist() == [[0, 1, 2, 2]]
    t = L.TextVectorization(ngrams=2, standardize="lower")
    t.adapt(["a b a b.", "b a"])
    assert t.get_vocabulary() == ["", "[UNK]", "a", "b a", "b", "b.", "a b.", "a b"]
    assert t(["a b a"]).numpy().tolist() == [[2, 4, 2, 7, 3]]
    t = L.TextVectorization(split="character", standardize=None)
    t.adapt(["abca", "ba"])
    assert t.get_vocabulary() == ["", "[UNK]", "a", "b", "c"] and t(["cab"]).numpy().tolist() == [[4, 2, 3]]
    t = L.TextVectorization(output_mode="multi_hot", max_tokens=10, pad_to_max_tokens=True, vocabulary=["a", "b"])
    assert t(["a c"]).numpy().tolist() == [[1, 1, 0, 0, 0, 0, 0, 0, 0, 0]]


def test_dataset_adapt_map_and_model():
    ds = tf.data.Dataset.from_tensor_slices(DATA).batch(2)
    t = L.TextVectorization(max_tokens=5)
    t.adapt(ds)
    assert t.get_vocabulary() == ["", "[UNK]", "the", "a", "sat"]
    pairs = tf.data.Dataset.from_tensor_slices((["the a", "sat x"], [0, 1])).batch(2).map(lambda x, y: (t(x), y))
    x, y = next(iter(pairs))
    assert x.numpy().tolist() == [[2, 3], [4, 1]]
    t8 = L.TextVectorization(max_tokens=8, output_sequence_length=5)
    t8.adapt(DATA)
    model = tf.keras.Sequential([tf.keras.Input(shape=(1,), dtype="string"), t8, L.Embedding(8, 2)])
    assert model.output_shape == (None, 5, 2)
