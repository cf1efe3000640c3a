"""StringLookup / IntegerLookup and Concatenate's dtype promotion, as Keras 3 under TF 2.21
(the pandas_dataframe tutorial's preprocessing). Expected values recorded from TF 2.21."""
import numpy as np
import pytest

import tapejax as tf


def test_one_hot_lookups_of_the_tutorial():
    s = tf.keras.layers.StringLookup(vocabulary=['a', 'b', 'c'], output_mode='one_hot')
    out = s(['c', 'a', 'a', 'b', 'zzz'])
    assert out.dtype == tf.int64 and out.numpy().tolist() == [[0, 0, 0, 1], [0, 1, 0, 0], [0, 1, 0, 0],
                                                               [0, 0, 1, 0], [1, 0, 0, 0]]
    i = tf.keras.layers.IntegerLookup(vocabulary=[1, 4, 7, 99], output_mode='one_hot')
    out = i([-1, 4, 1])
    assert out.dtype == tf.int64 and out.numpy().tolist() == [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0]]
    assert repr(i.get_vocabulary()) == "[-1, np.int64(1), np.int64(4), np.int64(7), np.int64(99)]"
    assert repr((s.get_vocabulary(), s.vocabulary_size())) == \
        "(['[UNK]', np.str_('a'), np.str_('b'), np.str_('c')], 4)"
    assert i(np.array([1.0, 4.0])).numpy().tolist() == [[0, 1, 0, 0, 0], [0, 0, 1, 0, 0]]


@pytest.mark.parametrize("mode,inputs,expected", [
    ("int", [['a', 'x'], ['c', 'b']], [[1, 0], [3, 2]]),
    ("multi_hot", [['a', 'b'], ['c', 'c']], [[0, 1, 1, 0], [0, 0, 0, 1]]),
    ("multi_hot", ['a', 'b'], [0, 1, 1, 0]),
    ("count", [['a', 'a', 'x'], ['c', 'c', 'c']], [[1, 2, 0, 0], [0, 0, 0, 3]]),
    ("one_hot", [['a'], ['c']], [[0, 1, 0, 0], [0, 0, 0, 1]]),
    ("one_hot", [['a', 'b'], ['c', 'a']], [[[0, 1, 0, 0], [0, 0, 1, 0]], [[0, 0, 0, 1], [0, 1, 0, 0]]]),
])
def test_string_lookup_modes(mode, inputs, expected):
    out = tf.keras.layers.StringLookup(vocabulary=['a', 'b', 'c'], output_mode=mode)(inputs)
    assert out.dtype == tf.int64 and out.numpy().tolist() == expected


def test_mask_oov_buckets_invert_and_adapt():
    m = tf.keras.layers.StringLookup(vocabulary=['a', 'b'], mask_token='', num_oov_indices=2)
    assert m(['', 'a', 'zz', 'q', 'b']).numpy().tolist() == [0, 3, 1, 2, 4]     # FarmHash buckets
    assert repr(m.get_vocabulary()) == "['', '[UNK]', '[UNK]', np.str_('a'), np.str_('b')]"
    im = tf.keras.layers.IntegerLookup(vocabulary=[10, 20], mask_token=0, num_oov_indices=2)
    assert im([0, 10, 5, 6, 7, 20]).numpy().tolist() == [0, 3, 2, 1, 2, 4]
    assert repr(im.get_vocabulary()) == "[0, -1, -1, np.int64(10), np.int64(20)]"
    inv = tf.keras.layers.StringLookup(vocabulary=['a', 'b'], invert=True)
    assert inv([[1, 2], [0, 5]]).numpy().tolist() == [[b'a', b'b'], [b'[UNK]', b'[UNK]']]
    a = tf.keras.layers.StringLookup()
    a.adapt(["b", "a", "c", "a", "b", "d", "b"])
    assert repr(a.get_vocabulary()) == "['[UNK]', np.str_('b'), np.str_('a'), np.str_('d'), np.str_('c')]"
    assert a(["a", "b", "z"]).numpy().tolist() == [2, 1, 0]
    ia = tf.keras.layers.IntegerLookup()
    ia.adapt(np.array([[3, 3, 1], [2, 1, 7]]))
    assert repr(ia.get_vocabulary()) == "[-1, np.int64(3), np.int64(1), np.int64(7), np.int64(2)]"
    assert ia([3, 1, 2, 7, 8]).numpy().tolist() == [1, 2, 4, 3, 0]


def test_lookup_errors():
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        tf.keras.layers.StringLookup(vocabulary=['a'], num_oov_indices=0)(['a', 'q'])
    assert ("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b'When "
            "`num_oov_indices=0` all inputs should be in vocabulary, found OOV values [\"q\"], consider setting "
            "`num_oov_indices=1`.'") in str(e.value)
    with pytest.raises(RuntimeError, match="When using `output_mode=one_hot` and `pad_to_max_tokens=False`, you "
                                           "must set the layer's vocabulary before calling it."):
        tf.keras.layers.StringLookup(output_mode='one_hot')(['a'])


def test_symbolic_and_compiled_calls():
    i = tf.keras.layers.IntegerLookup(vocabulary=[1, 4, 7, 99], output_mode='one_hot')
    s = tf.keras.layers.StringLookup(vocabulary=['a', 'b', 'c'], output_mode='one_hot')
    x = tf.keras.Input(shape=(1,), dtype=tf.int64)
    assert (tuple(i(x).shape), i(x).dtype) == ((None, 5), "float32")
    xs = tf.keras.Input(shape=(1,), dtype=tf.string)
    assert (tuple(s(xs).shape), s(xs).dtype) == ((None, 4), "float32")
    si = tf.keras.layers.StringLookup(vocabulary=['a', 'b', 'c'])
    assert (tuple(si(xs).shape), si(xs).dtype) == ((None, 1), "int64")
    multi = tf.keras.layers.StringLookup(vocabulary=['a'], output_mode='multi_hot')(tf.keras.Input((3,), dtype="string"))
    assert tuple(multi.shape) == (None, 2)
    f = tf.function(lambda t: s(t))
    assert f(tf.constant([["a"], ["c"]])).numpy().tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]
    g = tf.function(lambda t: i(t))
    assert g(tf.constant([[4], [99]], tf.int64)).numpy().tolist() == [[0, 0, 1, 0, 0], [0, 0, 0, 0, 1]]


def test_concatenate_promotes_dtypes_as_keras3():
    c = tf.keras.layers.Concatenate(axis=1)
    out = c([tf.constant([[1]], tf.int64), tf.constant([[2.5]])])
    assert out.dtype == tf.float32 and out.numpy().tolist() == [[1.0, 2.5]]
    assert c([tf.constant([[1]], tf.int32), tf.constant([[2]], tf.int64)]).dtype == tf.int64
    sym = c([tf.keras.Input((1,), dtype='int64'), tf.keras.Input((2,))])
    assert (tuple(sym.shape), sym.dtype) == ((None, 3), "float32")


def test_a_preprocessing_model_with_string_inputs_trains():
    # pandas_dataframe cells 30-52 in small: string and integer columns one-hot encoded and
    # concatenated with a float column, inside a compiled fit
    inputs = {"num": tf.keras.Input((1,), name="num", dtype=tf.float32),
              "cat": tf.keras.Input((1,), name="cat", dtype=tf.int64),
              "txt": tf.keras.Input((1,), name="txt", dtype=tf.string)}
    parts = [inputs["num"], tf.keras.layers.IntegerLookup(vocabulary=[1, 2], output_mode='one_hot')(inputs["cat"]),
             tf.keras.layers.StringLookup(vocabulary=['x', 'y'], output_mode='one_hot')(inputs["txt"])]
    features = tf.keras.layers.Concatenate(axis=1)(parts)
    assert tuple(features.shape) == (None, 7)
    preprocessor = tf.keras.Model(inputs, features)
    row = preprocessor({"num": np.array([[0.5]]), "cat": np.array([[2]]), "txt": np.array([["y"]])})
    assert row.dtype == tf.float32 and row.numpy().tolist() == [[0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]]
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(preprocessor(inputs)))
    model.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    ds = tf.data.Dataset.from_tensor_slices((
        {"num": np.array([0.5, 1.5, 2.0, 0.1]), "cat": np.array([1, 2, 3, 1]), "txt": np.array(["x", "y", "z", "y"])},
        np.array([0, 1, 1, 0]))).batch(2)
    history = model.fit(ds, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_text_arrays_are_no_keras_dtype_in_fit():
    # pandas_dataframe cell 49: fit(dict(df), ...) with a text column raises in Keras 3
    # ('Invalid dtype: str' for pandas' str dtype); the model itself takes them
    i = {'t': tf.keras.Input((1,), dtype=tf.string, name='t'), 'n': tf.keras.Input((1,), dtype=tf.float32, name='n')}
    x = tf.keras.layers.Concatenate(axis=1)([tf.keras.layers.StringLookup(vocabulary=['a'], output_mode='one_hot')(i['t']),
                                             i['n']])
    m = tf.keras.Model(i, x)
    m.compile('adam', 'mse')
    with pytest.raises(ValueError, match="^Invalid dtype: str32$"):
        m.fit({'t': np.array(['a', 'b']), 'n': np.ones(2)}, np.zeros((2, 3)), verbose=0)
    with pytest.raises(ValueError, match="^Invalid dtype: object$"):
        m.predict({'t': np.array(['a', 'b'], dtype=object), 'n': np.ones(2)}, verbose=0)
    assert m({'t': np.array([['a'], ['b']]), 'n': np.array([[1], [2]])}).numpy().tolist() == \
        [[0.0, 1.0, 1.0], [1.0, 0.0, 2.0]]


def test_pandas_columns_into_a_functional_model():
    pd = pytest.importorskip("pandas")
    i = {'t': tf.keras.Input((1,), dtype=tf.string, name='t'), 'n': tf.keras.Input((1,), dtype=tf.float32, name='n')}
    x = tf.keras.layers.Concatenate(axis=1)([tf.keras.layers.StringLookup(vocabulary=['a'], output_mode='one_hot')(i['t']),
                                             i['n']])
    m = tf.keras.Model(i, x)
    m.compile('adam', 'mse')
    assert m({'t': pd.Series(['a', 'b']), 'n': pd.Series([1, 2])}).numpy().tolist() == [[0.0, 1.0, 1.0], [1.0, 0.0, 2.0]]
    assert m(dict(pd.DataFrame({'t': ['a', 'q'], 'n': [3, 4]}).iloc[:1])).numpy().tolist() == [[0.0, 1.0, 3.0]]
    with pytest.raises(ValueError, match="^Invalid dtype: str$"):
        m.fit({'t': pd.Series(['a', 'b']), 'n': pd.Series([1, 2])}, np.zeros((2, 3)), verbose=0)
