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
