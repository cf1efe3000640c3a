"""Keras 3's configurations: ``get_config`` / ``from_config`` of the built-in layers, Sequential and
functional models' ``get_config`` / ``to_json``, and ``serialize_keras_object`` of initializers,
regularizers, constraints and dtype policies, compared with what TensorFlow 2.21 (Keras 3.15.1)
printed for the same code (tests/keras_config_cases.py). ``repr`` equality checks the values,
the key order (a printed dict shows it) and tuples against lists at every level.
"""
import json
import os

import numpy as np
import pytest

import tapejax as tf
from keras_config_cases import EXPECTED, LAYER_CASES, MODEL_CASES, VALUE_CASES

L = tf.keras.layers


def _make(expr):
    tf.keras.backend.clear_session()
    return eval(expr, {"tf": tf})


@pytest.mark.parametrize("case, expr", LAYER_CASES, ids=[c for c, _ in LAYER_CASES])
def test_layer_config_is_keras3s(case, expr):
    assert repr(_make(expr).get_config()) == repr(EXPECTED[case])


@pytest.mark.parametrize("case, expr", LAYER_CASES, ids=[c for c, _ in LAYER_CASES])
def test_layer_from_config_round_trips(case, expr):
    layer = _make(expr)
    config = layer.get_config()
    twin = type(layer).from_config(config)
    assert repr(twin.get_config()) == repr(config)
    # through JSON (tuples become lists), as a saved file gives it back
    again = type(layer).from_config(json.loads(json.dumps(config)))
    assert json.dumps(again.get_config()) == json.dumps(config)


@pytest.mark.parametrize("case, expr", MODEL_CASES, ids=[c for c, _ in MODEL_CASES])
def test_model_config_and_json_are_keras3s(case, expr):
    model = _make(expr)
    assert repr(model.get_config()) == repr(EXPECTED[case])
    assert model.to_json() == EXPECTED["json:" + case]


@pytest.mark.parametrize("case, expr", MODEL_CASES, ids=[c for c, _ in MODEL_CASES])
def test_model_from_config_to_json_and_clone_round_trip(case, expr):
    model = _make(expr)
    config = model.get_config()
    twin = type(model).from_config(config)
    assert repr(twin.get_config()) == repr(config)
    assert tf.keras.models.model_from_json(model.to_json()).to_json() == model.to_json()
    clone = tf.keras.models.clone_model(model)
    assert clone.to_json() == model.to_json()
    assert all(a is not b for a, b in zip(clone.weights, model.weights))
    if model.built:
        shapes = [t.shape for t in twin.inputs] if twin.inputs else [config["build_input_shape"]]
        inputs = [tf.ones([2] + list(shape)[1:]) for shape in shapes]
        inputs = inputs if twin.inputs and len(inputs) > 1 else inputs[0]
        twin.set_weights(model.get_weights())
        for a, b in zip(tf.nest.flatten(twin(inputs)), tf.nest.flatten(model(inputs))):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case, expr", VALUE_CASES, ids=[c for c, _ in VALUE_CASES])
def test_serialized_objects_and_values_are_keras3s(case, expr):
    assert repr(_make(expr)) == repr(EXPECTED[case])


def test_global_mixed_policy_configs():
    tf.keras.backend.clear_session()
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        dense = L.Dense(3, name="gm")
        seq = tf.keras.Sequential([L.Dense(3, input_shape=(2,), name="d")], name="gs")
        assert repr(dense.get_config()) == repr(EXPECTED["global_mixed_dense"])
        assert repr(seq.get_config()) == repr(EXPECTED["global_mixed_seq"])
        assert L.Dense.from_config(dense.get_config()).dtype_policy.name == "mixed_float16"
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


def test_deserialized_objects_are_the_same_objects():
    I, R, C = tf.keras.initializers, tf.keras.regularizers, tf.keras.constraints
    for obj, module in [(I.HeNormal(seed=3), I), (I.RandomUniform(-1.0, 2.0, seed=2), I), (I.Constant(0.5), I),
                        (R.L1L2(0.1, 0.2), R), (R.L2(0.3), R), (C.MaxNorm(2.0, axis=1), C), (C.NonNeg(), C)]:
        config = module.serialize(obj)
        for again in (module.deserialize(config), module.get(config),
                      tf.keras.utils.deserialize_keras_object(json.loads(json.dumps(config)))):
            assert type(again) is type(obj) and again.get_config() == obj.get_config()
    # Keras 2's {'class_name', 'config'} form still reads
    assert type(I.get({"class_name": "GlorotUniform", "config": {"seed": 1}})).__name__ == "GlorotUniform"
    assert R.get({"class_name": "L2", "config": {"l2": 0.5}}).l2 == 0.5


def test_layer_options_take_effect_after_from_config():
    """The regularizers and constraints of a configuration are the layer's (not just recorded)."""
    dense = L.Dense(2, kernel_initializer="ones", kernel_regularizer=tf.keras.regularizers.L2(0.5),
                    kernel_constraint=tf.keras.constraints.NonNeg(), bias_constraint="non_neg")
    twin = L.Dense.from_config(json.loads(json.dumps(dense.get_config())))
    twin(tf.ones([1, 3]))
    assert round(float(twin.losses[0]), 4) == 3.0
    assert type(twin.kernel.constraint).__name__ == "NonNeg" and twin.bias.constraint is not None
    emb = L.Embedding(4, 2, embeddings_constraint=tf.keras.constraints.UnitNorm(axis=1))
    emb.build((None,))
    assert type(emb.embeddings.constraint).__name__ == "UnitNorm"


def test_constraint_applies_after_an_optimizer_step():
    dense = L.Dense(1, kernel_initializer="ones", kernel_constraint=tf.keras.constraints.MaxNorm(1.0))
    dense(tf.ones([1, 4]))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(dense(tf.ones([1, 4])))
    tf.keras.optimizers.SGD(0.1).apply_gradients(zip(tape.gradient(loss, dense.trainable_variables),
                                                     dense.trainable_variables))
    assert float(tf.norm(dense.kernel)) <= 1.0 + 1e-6


def test_embedding_weights_argument_sets_the_initial_values():
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    emb = L.Embedding(3, 2, weights=[values])
    assert emb.built
    np.testing.assert_array_equal(emb.embeddings.numpy(), values)


def test_bidirectional_masked_sequence_outputs_are_zero():
    # Keras 3 sets zero_output_for_mask on both directions of a Bidirectional returning sequences
    tf.keras.backend.clear_session()
    bi = L.Bidirectional(L.SimpleRNN(2, return_sequences=True, kernel_initializer="ones",
                                     recurrent_initializer="ones"))
    x = tf.constant([[[1.0, 0.5], [0.2, 0.1], [0.0, 0.0], [0.0, 0.0]]])
    y = bi(x, mask=tf.constant([[True, True, False, False]]))
    np.testing.assert_allclose(y.numpy().round(5), np.array(EXPECTED["bi_masked"]), atol=1e-5)
    assert bi.forward_layer.get_config()["zero_output_for_mask"] is True


def test_sequential_and_functional_save_and_load_with_new_configs(tmp_path):
    tf.keras.backend.clear_session()
    seq = tf.keras.Sequential([tf.keras.Input(shape=(4,)), L.Dense(3, activation="relu",
                                                                    kernel_regularizer="l2"),
                               L.BatchNormalization(), L.Dense(1, kernel_constraint="non_neg")], name="s")
    inputs = tf.keras.Input(shape=(4,), name="x")
    hidden = L.Dense(3, activation="relu", name="hid")(inputs)
    fn = tf.keras.Model(inputs, [L.Dense(2, name="o1")(hidden), L.Dense(1, name="o2")(hidden)], name="fn")
    x = tf.ones([2, 4])
    for model in (seq, fn):
        path = os.path.join(tmp_path, model.name + ".keras")
        model.save(path)
        loaded = tf.keras.models.load_model(path)
        assert type(loaded) is type(model) and loaded.to_json() == model.to_json()
        for a, b in zip(tf.nest.flatten(loaded(x)), tf.nest.flatten(model(x))):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_a_file_with_a_string_dtype_still_loads(tmp_path):
    """Files written before (a layer's dtype a name, no module keys) still load."""
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([L.Dense(2, input_shape=(3,), name="d")], name="old")
    path = os.path.join(tmp_path, "old.keras")
    model.save(path)
    meta_path = os.path.join(path, "keras_model.json")
    with open(meta_path) as fh:
        meta = json.load(fh)
    meta["config"] = {"name": "old", "layers": [{"class_name": "Dense", "config": {
        "name": "d", "trainable": True, "dtype": "float32", "batch_input_shape": [None, 3], "units": 2,
        "activation": "linear", "use_bias": True}}]}
    with open(meta_path, "w") as fh:
        json.dump(meta, fh)
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.layers[0].kernel.numpy(), model.layers[0].kernel.numpy())
    assert loaded.layers[0].get_config()["dtype"]["config"] == {"name": "float32"}


_F32 = {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float32'}, 'registered_name': None}


def test_auto_config_of_a_users_layer_without_get_config():
    """Keras 3 keeps the constructor arguments (defaults too) of a layer without a get_config of
    its own; a Model subclass keeps its defaults only. Recorded from TF 2.21."""
    tf.keras.backend.clear_session()

    class Lin(L.Layer):
        def __init__(self, units=32, scale=1.0, **kwargs):
            super().__init__(**kwargs)
            self.units = units

    class NoKw(L.Layer):
        def __init__(self, units=2):
            super().__init__()

    class M(tf.keras.Model):
        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.d = L.Dense(units)

        def call(self, x):
            return self.d(x)

    class M2(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = L.Dense(2)

        def call(self, x):
            return self.d(x)

    assert repr(Lin(4, name='l').get_config()) == repr(
        {'name': 'l', 'units': 4, 'scale': 1.0, 'trainable': True, 'dtype': _F32})
    assert repr(Lin(units=5, trainable=False, dtype='float64').get_config()) == repr(
        {'name': 'lin', 'units': 5, 'scale': 1.0, 'trainable': False,
         'dtype': {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'float64'},
                   'registered_name': None}})
    assert repr(NoKw(3).get_config()) == repr({'units': 3, 'trainable': True, 'dtype': _F32})
    assert repr(M(4).get_config()) == repr({'name': 'm', 'units': 3, 'trainable': True, 'dtype': _F32})
    assert repr(M2().get_config()) == repr({'trainable': True, 'dtype': _F32})
    twin = Lin.from_config(Lin(7, name='l7').get_config())
    assert (twin.name, twin.units) == ('l7', 7)


def test_auto_config_errors_are_keras3s():
    class Bad(L.Layer):
        def __init__(self, init=None, **kwargs):
            super().__init__(**kwargs)

    class Var(L.Layer):
        def __init__(self, *a, **kwargs):
            super().__init__(**kwargs)

    example = ('\n\nExample:\n\n\nclass CustomLayer(keras.layers.Layer):\n    def __init__(self, arg1, arg2, '
               '**kwargs):\n        super().__init__(**kwargs)\n        self.arg1 = arg1\n        self.arg2 = arg2\n'
               '\n    def get_config(self):\n        config = super().get_config()\n        config.update({\n'
               '            "arg1": self.arg1,\n            "arg2": self.arg2,\n        })\n        return config\n')
    with pytest.raises(NotImplementedError) as e:
        Bad(init=tf.keras.initializers.Ones()).get_config()
    assert str(e.value) == ('\nObject Bad was created by passing\nnon-serializable argument values in `__init__()`,'
                            '\nand therefore the object must override `get_config()` in\norder to be serializable. '
                            'Please implement `get_config()`.' + example)
    with pytest.raises(NotImplementedError) as e:
        Var(1, 2).get_config()
    assert str(e.value) == ('\nObject Var was created by passing\npositional only or variadic positional arguments '
                            '(e.g.,\n`*args`) to `__init__()`, which is not supported by the\nautomatic config '
                            'generation. Please remove all positional\nonly and variadic arguments from `__init__()`'
                            '\nor override `get_config()` and `from_config()` to make\nthe object serializatble.'
                            + example)
    assert Var().get_config()['name'] == 'var_1'   # Var(1, 2) took 'var'


def test_activation_configs_are_keras3s():
    """Recorded from TF 2.21: a user's function is Keras's 'function' configuration; 'swish' is silu."""
    def my_act(x):
        return x * 2.0

    assert L.Dense(2, activation=my_act).get_config()['activation'] == {
        'module': 'builtins', 'class_name': 'function', 'config': 'my_act', 'registered_name': 'function'}
    assert L.Dense(2, activation='swish').get_config()['activation'] == 'silu'
    assert L.Dense(2, activation=tf.nn.gelu).get_config()['activation'] == 'gelu'
    assert L.Activation(tf.math.tanh).get_config()['activation'] == 'tanh'
    registered = tf.keras.saving.register_keras_serializable(package="ConfigTest")(my_act)
    config = L.Dense(2, activation=registered).get_config()
    assert config['activation']['config'] == 'ConfigTest>my_act'
    assert L.Dense.from_config(config).activation is my_act


def test_user_functions_configure_as_keras3s():
    """Recorded from TF 2.21: a function initializer / regularizer is Keras's 'function' configuration;
    a registered one is read back by its registered name."""
    def my_init(shape, dtype=None):
        return tf.ones(shape, dtype=dtype)

    def my_reg(w):
        return tf.reduce_sum(w)

    function = {'module': 'builtins', 'class_name': 'function', 'config': 'my_init', 'registered_name': 'function'}
    assert tf.keras.utils.serialize_keras_object(my_init) == function
    config = L.Dense(2, kernel_initializer=my_init, kernel_regularizer=my_reg).get_config()
    assert config['kernel_initializer'] == function
    assert config['kernel_regularizer'] == dict(function, config='my_reg')
    registered = tf.keras.saving.register_keras_serializable(package="ConfigTest")(my_init)
    config = L.Dense(2, kernel_initializer=registered).get_config()
    assert config['kernel_initializer']['config'] == 'ConfigTest>my_init'
    assert L.Dense.from_config(config).kernel_initializer is my_init
    assert tf.keras.utils.deserialize_keras_object(tf.keras.utils.serialize_keras_object(my_init)) is my_init
