"""tf.data behaviours found by running TensorFlow's tf.data guide and its load_data tutorials
(numpy, pandas_dataframe) cell by cell under TF 2.21 and tapejax. Expected values are TF 2.21's,
recorded with /tmp/tf/bin/python."""
import numpy as np
import pytest

import tapejax as tf


class _ArrayLike:
    """An object with ``__array__`` that is not a Python sequence (what a pandas Series is to TF)."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.a, dtype)


def test_array_likes_keep_numpys_dtype():
    # TF 2.21: tf.convert_to_tensor(pd.Series([1, 2])) is int64, of a float DataFrame float64
    # (pandas_dataframe cells 8, 13, 51); Python lists stay int32 / float32.
    assert tf.convert_to_tensor(_ArrayLike([1.5, 2.0])).dtype == tf.float64
    assert tf.convert_to_tensor(_ArrayLike([1, 2])).dtype == tf.int64
    assert tf.constant(_ArrayLike([1, 2])).dtype == tf.int64
    assert tf.constant(_ArrayLike([1, 2]), dtype=tf.float32).numpy().tolist() == [1.0, 2.0]
    assert tf.convert_to_tensor([1, 2]).dtype == tf.int32
    assert tf.convert_to_tensor([1.5]).dtype == tf.float32
    assert repr(tf.data.Dataset.from_tensor_slices(_ArrayLike([[1.0, 3.5], [2.0, 4.0]])).element_spec) == \
        "TensorSpec(shape=(2,), dtype=tf.float64, name=None)"
    assert repr(tf.data.Dataset.from_tensor_slices(_ArrayLike([1, 2])).element_spec) == \
        "TensorSpec(shape=(), dtype=tf.int64, name=None)"


def test_array_likes_from_pandas():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2], "b": [3.5, 4.0]})
    assert tf.convert_to_tensor(df).dtype == tf.float64
    assert tf.convert_to_tensor(df["a"]).dtype == tf.int64
    assert tf.convert_to_tensor(pd.Series(["x", "y"])).numpy().tolist() == [b"x", b"y"]


def test_dict_elements_keep_their_key_order():
    ds = tf.data.Dataset.from_tensor_slices({"z": [1], "a": [2], "m": [3]})
    assert repr(ds.element_spec) == (
        "{'z': TensorSpec(shape=(), dtype=tf.int32, name=None), 'a': TensorSpec(shape=(), dtype=tf.int32, "
        "name=None), 'm': TensorSpec(shape=(), dtype=tf.int32, name=None)}")
    assert list(next(iter(ds))) == ["z", "a", "m"]
    ds = tf.data.Dataset.from_tensor_slices(({"z": [1], "a": [2]}, [5]))
    assert list(ds.element_spec[0]) == ["z", "a"]
    mapped = ds.map(lambda x, y: ({"q": x["z"], "b": x["a"]}, y))
    assert list(mapped.element_spec[0]) == ["q", "b"]
    assert list(next(iter(mapped))[0]) == ["q", "b"]
    assert repr(next(iter(ds.batch(1)))) == (
        "({'z': <tf.Tensor: shape=(1,), dtype=int32, numpy=array([1], dtype=int32)>, 'a': <tf.Tensor: shape=(1,), "
        "dtype=int32, numpy=array([2], dtype=int32)>}, <tf.Tensor: shape=(1,), dtype=int32, numpy=array([5], "
        "dtype=int32)>)")
    zipped = tf.data.Dataset.zip({"y": tf.data.Dataset.range(2), "b": tf.data.Dataset.range(2)})
    assert list(zipped.element_spec) == ["y", "b"] and list(next(iter(zipped))) == ["y", "b"]


def _gen(*values):
    def gen():
        yield from values
    return gen


def test_from_generator_converts_to_the_declared_types():
    # data guide cell 25: float64 series declared tf.float32 with shape (None,)
    ds = tf.data.Dataset.from_generator(_gen((1, np.array([0.5, 1.5])), (2, np.array([2.5]))),
                                        output_types=(tf.int32, tf.float32), output_shapes=((), (None,)))
    assert repr(ds) == ("<_FlatMapDataset element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                        "TensorSpec(shape=(None,), dtype=tf.float32, name=None))>")
    assert repr(list(ds)) == (
        "[(<tf.Tensor: shape=(), dtype=int32, numpy=1>, <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 1.5], "
        "dtype=float32)>), (<tf.Tensor: shape=(), dtype=int32, numpy=2>, <tf.Tensor: shape=(1,), dtype=float32, "
        "numpy=array([2.5], dtype=float32)>)]")
    ds = tf.data.Dataset.from_generator(_gen((1, np.array([0.5, 1.5]))), output_types=(tf.int64, tf.float64))
    assert repr(ds.element_spec) == ("(TensorSpec(shape=<unknown>, dtype=tf.int64, name=None), "
                                     "TensorSpec(shape=<unknown>, dtype=tf.float64, name=None))")
    assert [x.dtype for x in next(iter(ds))] == [tf.int64, tf.float64]
    # NumPy's conversion: floats declared int32 are truncated
    ds = tf.data.Dataset.from_generator(_gen((1, np.array([0.5, 1.5]))), output_types=(tf.float32, tf.int32),
                                        output_shapes=((), (None,)))
    x, y = next(iter(ds))
    assert float(x) == 1.0 and x.dtype == tf.float32 and y.numpy().tolist() == [0, 1]
    ds = tf.data.Dataset.from_generator(_gen(1.5), output_signature=tf.TensorSpec((), tf.int32))
    assert repr(list(ds)) == "[<tf.Tensor: shape=(), dtype=int32, numpy=1>]"
    ds = tf.data.Dataset.from_generator(_gen(np.array([1, 2, 3])), output_signature=tf.TensorSpec((None,), tf.float32))
    assert repr(list(ds)) == "[<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 2., 3.], dtype=float32)>]"
    ds = tf.data.Dataset.from_generator(_gen({"b": 1, "a": 2.0}), output_types={"b": tf.int64, "a": tf.float32})
    assert repr(list(ds)) == ("[{'b': <tf.Tensor: shape=(), dtype=int64, numpy=1>, "
                              "'a': <tf.Tensor: shape=(), dtype=float32, numpy=2.0>}]")
    ds = tf.data.Dataset.from_generator(_gen(("ab", ["x", "yz"])), output_types=(tf.string, tf.string))
    assert repr(list(ds)) == ("[(<tf.Tensor: shape=(), dtype=string, numpy=b'ab'>, <tf.Tensor: shape=(2,), "
                              "dtype=string, numpy=array([b'x', b'yz'], dtype=object)>)]")
    assert repr(tf.data.Dataset.from_generator(_gen(1), output_types=tf.int32, output_shapes=[2, None])
                .element_spec) == "TensorSpec(shape=(2, None), dtype=tf.int32, name=None)"


@pytest.mark.parametrize("kwargs,value,message", [
    (dict(output_types=tf.int32, output_shapes=(2,)), np.array([1, 2, 3]),
     "TypeError: `generator` yielded an element of shape (3,) where an element of shape (2,) was expected."),
    (dict(output_types=tf.int32), 1.5,
     "TypeError: `generator` yielded an element that did not match the expected structure. The expected structure "
     "was TensorSpec(shape=<unknown>, dtype=tf.int32, name=None), but the yielded element was 1.5."),
    (dict(output_types=tf.int32), "abc",
     "TypeError: `generator` yielded an element that did not match the expected structure. The expected structure "
     "was TensorSpec(shape=<unknown>, dtype=tf.int32, name=None), but the yielded element was abc."),
    (dict(output_types=(tf.int32, tf.float32)), [1, 2.5],
     "TypeError: `generator` yielded an element that did not match the expected structure. The expected structure "
     "was (tf.int32, tf.float32), but the yielded element was [1, 2.5]."),
    (dict(output_types=(tf.int32, tf.float32)), ("a", 2),
     "TypeError: `generator` yielded an element that could not be converted to the expected type. The expected "
     "type was int32, but the yielded element was a."),
])
def test_from_generator_errors(kwargs, value, message):
    ds = tf.data.Dataset.from_generator(_gen(value), **kwargs)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        list(ds)
    assert message in str(e.value)


def test_from_generator_needs_a_signature():
    with pytest.raises(TypeError, match="either the `output_signature` argument or the `output_types` argument"):
        tf.data.Dataset.from_generator(_gen(1))
    with pytest.raises(TypeError, match="`output_types` argument can not be used together"):
        tf.data.Dataset.from_generator(_gen(1), output_types=tf.int32, output_signature=tf.TensorSpec((), tf.int32))
    ds = tf.data.Dataset.from_generator(_gen(np.ones(1), np.ones(3)), output_types=tf.float64)
    with pytest.raises(ValueError, match="You must provide `padded_shapes` argument because component 0 has "
                                         "unknown rank."):
        ds.padded_batch(2)
    batched = ds.padded_batch(2, padded_shapes=[None])
    assert repr(batched.element_spec) == "TensorSpec(shape=(None, None), dtype=tf.float64, name=None)"
    assert next(iter(batched)).numpy().tolist() == [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    unknown = "TensorSpec(shape=<unknown>, dtype=tf.float64, name=None)"
    assert repr(ds.batch(2).element_spec) == repr(ds.batch(2).unbatch().element_spec) == unknown


def test_an_iterator_draws_its_shuffle_seeds_when_it_is_made():
    # TF makes an iterator's inputs' iterators (a shuffle's seeds) when the iterator is made, not
    # at its first element: Keras 3 makes an iterator it never reads after each full pass, so a
    # seeded fit on ds.shuffle(n).batch(b) sees iterator #1, #3, #5 (pandas_dataframe cell 14).
    tf.random.set_seed(42)
    ds = tf.data.Dataset.range(8).shuffle(8).batch(4)
    it1, _, it3 = iter(ds), iter(ds), iter(ds)
    assert [b.numpy().tolist() for b in it3] == [[1, 0, 4, 2], [6, 7, 3, 5]]
    assert [b.numpy().tolist() for b in it1] == [[3, 4, 1, 0], [6, 5, 2, 7]]
    tf.random.set_seed(7)
    ds = tf.data.Dataset.range(6).shuffle(6).map(lambda x: x * 10).filter(lambda x: x >= 0).repeat(2)
    _, it2 = iter(ds), iter(ds)
    assert [int(x) for x in it2] == [40, 0, 30, 50, 20, 10, 40, 0, 20, 30, 50, 10]
    tf.random.set_seed(3)
    a, b = tf.data.Dataset.range(4).shuffle(4), tf.data.Dataset.range(4, 8).shuffle(4)
    z = tf.data.Dataset.zip((a, b)).enumerate().take(3)
    _, it2 = iter(z), iter(z)
    assert [(int(i), int(x), int(y)) for i, (x, y) in it2] == [(0, 0, 5), (1, 3, 6), (2, 2, 4)]
    c = a.concatenate(b)
    _, it2 = iter(c), iter(c)
    assert [int(x) for x in it2] == [2, 1, 0, 3, 6, 5, 7, 4]


def test_seeded_fit_on_a_shuffled_dataset_follows_tensorflows_epochs():
    tf.keras.utils.set_random_seed(1)
    x = np.arange(16, dtype=np.float32).reshape(16, 1) / 16
    ds = tf.data.Dataset.from_tensor_slices((x, 2 * x + 1)).shuffle(16).batch(4)
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    history = model.fit(ds, epochs=3, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [2.189652681350708, 0.3221791386604309, 0.13326622545719147],
                               rtol=1e-5)


def test_counter():
    # data guide cells 71-76
    c = tf.data.Dataset.counter()
    assert repr(c) == "<_ScanDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert int(c.cardinality()) == -1
    assert repr(list(tf.data.Dataset.counter(3, 2, tf.int32).take(3))) == (
        "[<tf.Tensor: shape=(), dtype=int32, numpy=3>, <tf.Tensor: shape=(), dtype=int32, numpy=5>, "
        "<tf.Tensor: shape=(), dtype=int32, numpy=7>]")
    assert [float(x) for x in tf.data.Dataset.counter(0, 0.5, tf.float32).take(3)] == [0.0, 0.5, 1.0]
    tf.random.set_seed(5)
    counter = tf.data.experimental.Counter()
    ds = tf.data.Dataset.zip((counter, tf.data.Dataset.range(100, 130))).shuffle(buffer_size=10).batch(6)
    n, line_batch = next(iter(ds))
    assert n.numpy().tolist() == [7, 9, 2, 10, 11, 14]
    assert line_batch.numpy().tolist() == [107, 109, 102, 110, 111, 114]


def test_counter_is_deprecated(caplog):
    import tapejax.data as data
    data._WARNED.discard(("CounterV2", None))
    tf.data.experimental.Counter(start=5)
    err = caplog.text
    assert "CounterV2 (from tensorflow.python.data.experimental.ops.counter) is deprecated and will be removed " \
           "in a future version.\nInstructions for updating:\nUse `tf.data.Dataset.counter(...)` instead." in err


def test_eager_set_shape_checks_compatibility():
    # data guide cell 83: image.set_shape(im_shape) on a tf.py_function result
    t = tf.zeros([2, 3])
    assert t.set_shape([2, None]) is None and t.set_shape(None) is None and t.set_shape(tf.TensorShape([2, 3])) is None
    for shape, printed in (([3, 3], "(3, 3)"), ((2,), "(2,)"), (tf.TensorShape([2, 4]), "(2, 4)")):
        with pytest.raises(ValueError) as e:
            t.set_shape(shape)
        assert str(e.value) == f"Tensor's shape (2, 3) is not compatible with supplied shape {printed}."


def test_functional_inputs_are_cast_to_their_input_dtype():
    # pandas_dataframe cells 26-27: int64 columns into float32 Inputs (Keras 3 casts them)
    inputs = {n: tf.keras.Input(shape=(1,), name=n, dtype=tf.float32) for n in ["b", "a"]}
    model = tf.keras.Model(inputs, tf.keras.layers.Concatenate(axis=1)([inputs["b"], inputs["a"]]))
    out = model({"b": np.array([[1], [2]]), "a": np.array([[3.5], [4.5]])})
    assert out.dtype == tf.float32 and out.numpy().tolist() == [[1.0, 3.5], [2.0, 4.5]]
    i = tf.keras.Input(shape=(2,), dtype="int32")
    m2 = tf.keras.Model(i, tf.keras.layers.Lambda(lambda t: t * 2)(i))
    assert repr(m2(np.array([[1.7, 2.2]]))) == \
        "<tf.Tensor: shape=(1, 2), dtype=int32, numpy=array([[2, 4]], dtype=int32)>"
    assert repr(m2(tf.constant([[3, 4]], tf.int64))) == \
        "<tf.Tensor: shape=(1, 2), dtype=int32, numpy=array([[6, 8]], dtype=int32)>"


def test_string_inputs():
    # pandas_dataframe cell 30: tf.keras.Input(shape=(1,), name=name, dtype=tf.string)
    s = tf.keras.Input(shape=(1,), dtype=tf.string, name="s")
    assert repr(s) == "<KerasTensor shape=(None, 1), dtype=string, sparse=False, ragged=False, name=s>"
    assert repr(tf.keras.Model(s, s)(tf.constant([["x"]]))) == \
        "<tf.Tensor: shape=(1, 1), dtype=string, numpy=array([[b'x']], dtype=object)>"
    layer = tf.keras.layers.InputLayer(shape=(1,), dtype="string")
    assert (layer.dtype, layer.compute_dtype, layer.variable_dtype) == ("string", "float32", "float32")


def test_a_map_calling_py_function_runs_it_once_per_element():
    # data guide cells 81-84: a scipy rotation by a np.random angle in tf.py_function; TF runs
    # the Python function once per element (tapejax also ran it once more to learn its shapes)
    calls = []

    @tf.py_function(Tout=tf.float32)
    def rot(image):
        calls.append(np.asarray(image).shape)
        return image * 2

    def f(image, label):
        s = image.shape
        image = rot(image)
        image.set_shape(s)
        return image, label
    ds = tf.data.Dataset.from_tensor_slices((np.ones((3, 4, 4), np.float32), np.arange(3))).map(f)
    assert calls == []
    out = [(a.numpy()[0, 0], int(b)) for a, b in ds.take(2)]
    assert calls == [(4, 4), (4, 4)] and out == [(2.0, 0), (2.0, 1)]


def test_sample_from_datasets_draws_as_tensorflow():
    # data guide cells 109-110 (seeded); TF: Dataset.random(seed).batch(2) -> StatelessMultinomial
    tf.random.set_seed(42)
    assert [int(x) for x in tf.data.Dataset.random(seed=5).take(4)] == [2072206047, 1756863668, 2065836197,
                                                                         3747278620]
    assert repr(tf.data.Dataset.random(seed=5)) == \
        "<_RandomDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    a, b = tf.data.Dataset.range(0, 1000), tf.data.Dataset.range(1000, 2000)
    ds = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.3, 0.7], seed=11)
    assert [int(x) for x in ds.take(12)] == [1000, 0, 1001, 1, 1002, 2, 1003, 3, 1004, 4, 1005, 1006]
    ds = tf.data.Dataset.sample_from_datasets([a, b])        # an op seed from the global seed
    assert [int(x) for x in ds.take(12)] == [0, 1000, 1001, 1, 2, 1002, 3, 1003, 4, 5, 6, 7]
    ds = tf.data.Dataset.sample_from_datasets([a, b, tf.data.Dataset.range(5000, 5003)],
                                              weights=np.array([0.2, 0.3, 0.5]), seed=3)
    assert [int(x) for x in ds.take(15)] == [0, 5000, 5001, 5002, 1000, 1, 1001, 1002, 2, 3, 4, 1003, 1004, 1005, 5]
    w = tf.data.Dataset.from_tensor_slices([[0.9, 0.1], [0.1, 0.9]]).repeat()
    ds = tf.data.Dataset.sample_from_datasets([a, b], weights=w, seed=2)
    assert [int(x) for x in ds.take(10)] == [1000, 1001, 0, 1002, 1, 1003, 2, 1004, 3, 1005]
    small = [tf.data.Dataset.range(3), tf.data.Dataset.range(100, 103)]
    ds = tf.data.Dataset.sample_from_datasets(small, seed=1)
    assert [int(x) for x in ds] == [int(x) for x in ds] == [0, 1, 2, 100, 101, 102]
    ds = tf.data.Dataset.sample_from_datasets(small, seed=1, rerandomize_each_iteration=True)
    assert [int(x) for x in ds] == [100, 0, 1, 2, 101, 102]
    assert [int(x) for x in ds] == [100, 0, 101, 1, 2, 102]
    # it took one op seed, as TF's: the next shuffle is TF's
    assert [int(x) for x in tf.data.Dataset.range(5).shuffle(5)] == [0, 4, 3, 2, 1]


def test_rejection_resample_as_tensorflow(capfd):
    # data guide cells 112-114: accept draws of TF's stateful uniform op (seeded (global, 0) in
    # its dataset function, or by `seed`), mixed with the data by sample_from_datasets
    tf.random.set_seed(42)
    labels = np.array(([0] * 19 + [1]) * 50, np.int64)
    ds = tf.data.Dataset.from_tensor_slices((np.arange(1000, dtype=np.float32), labels))

    def class_func(x, y):
        return y
    res = ds.rejection_resample(class_func, target_dist=[0.5, 0.5], initial_dist=[0.95, 0.05])
    assert repr(res.element_spec) == (
        "(TensorSpec(shape=(), dtype=tf.int64, name=None), (TensorSpec(shape=(), dtype=tf.float32, name=None), "
        "TensorSpec(shape=(), dtype=tf.int64, name=None)))")
    assert [(int(c), int(x)) for c, (x, y) in res.take(12)] == [
        (0, 0), (1, 19), (1, 39), (0, 1), (0, 2), (1, 59), (0, 3), (1, 79), (0, 4), (0, 5), (0, 6), (0, 7)]
    err = capfd.readouterr().err
    assert err.count("Proportion of examples rejected by sampler is high: [0.95][0.95 0.05][0 1]\n") == 10
    res = ds.rejection_resample(class_func, target_dist=[0.5, 0.5], initial_dist=[0.95, 0.05], seed=7)
    assert [(int(c), int(x)) for c, (x, y) in res.take(12)] == [
        (1, 19), (0, 0), (0, 1), (1, 39), (1, 59), (0, 2), (0, 3), (1, 79), (1, 99), (1, 119), (0, 4), (0, 5)]
    res = ds.rejection_resample(class_func, target_dist=[0.5, 0.5])     # the initial distribution estimated
    assert [(int(c), int(x)) for c, (x, y) in res.take(12)] == [
        (0, 0), (1, 19), (1, 39), (0, 1), (1, 59), (1, 79), (1, 99), (0, 2), (0, 3), (1, 119), (0, 4), (0, 5)]
    assert "Proportion of examples rejected by sampler is high: [0.788461566][0.788461566 0.211538464][0 1]" \
        in capfd.readouterr().err
    assert [int(x) for x in tf.data.Dataset.range(5).shuffle(5)] == [0, 3, 2, 1, 4]   # TF's op seeds after it


def test_image_codecs_are_in_tf_image_too():
    # data guide cell 86: tf.image.decode_png (TF has the codecs in tf.image and tf.io)
    img = tf.constant([[[255, 0, 0]]], tf.uint8)
    assert tf.image.decode_png(tf.image.encode_png(img)).numpy().tolist() == [[[255, 0, 0]]]
    assert tf.image.decode_jpeg(tf.image.encode_jpeg(tf.zeros([4, 4, 3], tf.uint8))).shape == (4, 4, 3)
    assert bool(tf.image.is_jpeg(b"\xff\xd8\xff\xe0"))
    assert tf.image.decode_image is tf.io.decode_image


def test_an_error_computing_an_element_carries_iterator_get_next(tmp_path, monkeypatch):
    # data.ipynb cells 53-54 (a CsvDataset of a file that is not there): TF 2.21 raises at the
    # iteration, from its IteratorGetNext op, "{{function_node ...}} missing.csv; No such file or
    # directory [Op:IteratorGetNext] name: " (recorded; TF's kernel location prefix aside).
    monkeypatch.chdir(tmp_path)
    get_next = " [Op:IteratorGetNext] name: "
    record_defaults = [999, 999, 999, 999]
    dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults)
    dataset = dataset.map(lambda *items: tf.stack(items))
    for make in (lambda: list(dataset), lambda: next(iter(dataset)), lambda: list(dataset.as_numpy_iterator()),
                 lambda: list(tf.data.TextLineDataset("missing.csv"))):
        with pytest.raises(tf.errors.NotFoundError) as e:
            make()
        assert str(e.value) == "missing.csv; No such file or directory" + get_next
    with pytest.raises(tf.errors.NotFoundError) as e:
        list(tf.data.TFRecordDataset("missing.tfr"))
    assert str(e.value) == "missing.tfr; No such file or directory" + get_next
    # A message that has the decoration already keeps one (a batch of unequal shapes).
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        list(tf.data.Dataset.from_generator(lambda: iter([[1], [1, 2]]), output_types=tf.int32).batch(2))
    assert str(e.value).count("[Op:IteratorGetNext]") == 1 and str(e.value).endswith(get_next)
