"""Keras 3's autocast and KerasTensor dtypes, as TF 2.21 prints them (the mixed-precision guide).

Keras 3 casts the floating tensors among a layer's arguments to the layer's compute dtype,
whatever its policy: the guide's ``Activation('softmax', dtype='float32')`` after float16 layers
computes and returns float32. A KerasTensor's ``dtype`` is a string. Every expected value was
printed by TensorFlow 2.21 for the same code.
"""
import pytest

import tapejax as tf

keras = tf.keras


@pytest.fixture
def mixed():
    keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    keras.mixed_precision.set_global_policy("float32")


class Seen(keras.layers.Layer):
    def call(self, x, y=None):
        self.seen = (x.dtype, None if y is None else y.dtype)
        return x


def test_floating_arguments_are_cast_to_the_compute_dtype():
    assert keras.layers.Activation("softmax", dtype="float32")(tf.ones([2], tf.float16)).dtype == tf.float32
    assert keras.layers.Dense(3)(tf.ones([1, 2], tf.float64)).dtype == tf.float32
    assert keras.layers.Add()([tf.ones([1, 2], tf.float16), tf.ones([1, 2])]).dtype == tf.float32
    layer = Seen()
    layer(tf.ones([1], tf.float16), y=tf.ones([1], tf.float64))
    assert layer.seen == (tf.float32, tf.float32)
    layer = Seen(autocast=False)
    layer(tf.ones([1], tf.float16))
    assert layer.seen == (tf.float16, None)
    layer = Seen(dtype="mixed_float16")
    layer(tf.ones([1]), tf.ones([1], tf.float64))
    assert layer.seen == (tf.float16, tf.float16)
    assert keras.layers.Embedding(3, 2)(tf.constant([1])).dtype == tf.float32


def test_keras_tensor_dtype_is_a_string(mixed):
    inp = keras.Input(shape=(4,), name="digits")
    assert inp.dtype == "float32" and isinstance(inp.dtype, str)
    x = keras.layers.Dense(3)(inp)
    assert x.dtype == "float16"
    assert "dtype=float16" in repr(x)
    # the guide's cell: print('x.dtype: %s' % x.dtype.name)
    with pytest.raises(AttributeError, match="'str' object has no attribute 'name'"):
        x.dtype.name
    assert keras.layers.Activation("softmax", dtype="float32")(x).dtype == "float32"
    assert keras.layers.Dense(10, activation="softmax")(x).dtype == "float16"


def test_symbolic_and_sequential_builds_see_the_compute_dtype(mixed):
    inp = keras.Input((2,))
    layer = Seen()
    keras.Model(inp, layer(inp))
    assert layer.seen == (tf.float16, None)
    layer = Seen()
    model = keras.Sequential([layer])
    model(tf.ones([1, 2]))
    assert layer.seen == (tf.float16, None)
    assert model(tf.ones([1, 2])).dtype == tf.float16
