"""Keras 3 masking: Embedding(mask_zero=True) masks flow through layers that support masking to
the recurrent layers (masked steps keep the state and repeat the output) and
GlobalAveragePooling1D (the mean of the kept steps). Values recorded from TF 2.21."""
import numpy as np

import tapejax as tf

X = np.array([[5, 3, 0, 0], [2, 0, 0, 0], [1, 2, 3, 4]])
LSTM = [[[0.0028200000524520874, -0.002259999979287386], [0.0007699999841861427, 0.004689999856054783], [0.0007699999841861427, 0.004689999856054783], [0.0007699999841861427, 0.004689999856054783]], [[0.002099999925121665, -0.009170000441372395], [0.002099999925121665, -0.009170000441372395], [0.002099999925121665, -0.009170000441372395], [0.002099999925121665, -0.009170000441372395]], [[-0.002589999930933118, 0.0006699999794363976], [-7.999999797903001e-05, -0.008390000090003014], [-0.0007200000109151006, 0.0004299999854993075], [-0.0012600000482052565, -0.001500000013038516]]]
GRU = [[[-0.015930000692605972, -0.011830000206828117], [-0.016669999808073044, -0.0016299999551847577], [-0.016669999808073044, -0.0016299999551847577], [-0.016669999808073044, -0.0016299999551847577]], [[-0.008659999817609787, -0.008539999835193157], [-0.008659999817609787, -0.008539999835193157], [-0.008659999817609787, -0.008539999835193157], [-0.008659999817609787, -0.008539999835193157]], [[-0.027969999238848686, -0.0015899999998509884], [-0.022700000554323196, -0.00989999994635582], [-0.020230000838637352, -0.0012499999720603228], [-0.011909999884665012, -2.9999999242136255e-05]]]
SIMPLE = [[0.026350000873208046, 0.05452999845147133], [-0.05375999957323074, -0.07225999981164932], [-0.11006999760866165, -0.05542999878525734]]
LSTM_BACKWARDS = [[[0.0, 0.0], [0.0, 0.0], [0.0037499999161809683, 0.006240000016987324], [0.0015200000489130616, 0.010990000329911709]], [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [-0.008700000122189522, -0.0014199999859556556]], [[-0.00267999991774559, -0.0013599999947473407], [0.0015699999639764428, 0.005510000046342611], [-0.006819999776780605, 0.002460000105202198], [-0.010610000230371952, 0.010449999943375587]]]
POOLED = [[-0.03183000162243843, -0.0023900000378489494, -0.018449999392032623], [0.004509999882429838, -0.04834999889135361, 0.029650000855326653], [-0.005229999776929617, -0.02387000061571598, -0.011020000092685223]]


def test_masked_recurrent_layers_and_pooling():
    tf.keras.utils.set_random_seed(1)
    e = tf.keras.layers.Embedding(10, 3, mask_zero=True)(X)
    assert e._keras_mask.numpy().tolist() == [[True, True, False, False], [True, False, False, False],
                                              [True, True, True, True]]
    outs = []
    for layer in [tf.keras.layers.LSTM(2, return_sequences=True), tf.keras.layers.GRU(2, return_sequences=True),
                  tf.keras.layers.SimpleRNN(2), tf.keras.layers.LSTM(2, go_backwards=True, return_sequences=True)]:
        out = layer(e)
        outs.append((np.round(out.numpy(), 5).tolist(), getattr(out, '_keras_mask', None) is not None))
    assert outs == [(LSTM, True), (GRU, True), (SIMPLE, False), (LSTM_BACKWARDS, True)]
    assert tf.keras.layers.Dense(2)(e)._keras_mask.numpy().tolist() == e._keras_mask.numpy().tolist()
    pooled = tf.keras.layers.GlobalAveragePooling1D()(e)
    assert np.round(pooled.numpy(), 5).tolist() == POOLED
    assert getattr(pooled, '_keras_mask', None) is None


def test_ragged_guide_lstm_model_trains_as_tensorflow():
    """ragged_tensor guide cells 29-30, seeded: the padded steps are masked, so the model learns
    (tapejax ignored the mask: every output negative, the loss stuck at 8.0590)."""
    tf.keras.utils.set_random_seed(42)
    x = np.array([[940, 203, 668, 387, 790, 320, 939, 185], [315, 515, 791, 181, 939, 787, 0, 0],
                  [564, 205, 0, 0, 0, 0, 0, 0], [820, 180, 993, 739, 0, 0, 0, 0]])
    model = tf.keras.Sequential([
        tf.keras.layers.Embedding(1000, 16, mask_zero=True),
        tf.keras.layers.LSTM(32, return_sequences=True, use_bias=False),
        tf.keras.layers.GlobalAveragePooling1D(),
        tf.keras.layers.Dense(32),
        tf.keras.layers.Activation(tf.nn.relu),
        tf.keras.layers.Dense(1)])
    np.testing.assert_allclose(model(x).numpy().ravel(), [-0.00192211, 0.00120179, 0.00209059, 0.0029463],
                               rtol=1e-4, atol=1e-7)
    model.compile(loss='binary_crossentropy', optimizer='rmsprop')
    history = model.fit(x, tf.constant([True, False, True, False]), epochs=5, verbose=0)
    np.testing.assert_allclose(history.history['loss'], [5.5731, 2.2969, 1.9965, 1.8859, 1.8129], atol=2e-4)
    np.testing.assert_allclose(model.predict(x, verbose=0).ravel(),
                               [0.02819109, 0.01762266, 0.03286229, 0.01292847], atol=5e-5)


def test_embedding_mask_survives_save_and_load(tmp_path):
    """ragged_tensor guide cell 44: the reloaded model keeps mask_zero (TF 2.21: same outputs)."""
    tf.keras.utils.set_random_seed(42)
    x = np.array([[940, 203, 668, 387, 0, 0, 0, 0], [564, 205, 0, 0, 0, 0, 0, 0]])
    model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 16, mask_zero=True),
                                 tf.keras.layers.LSTM(8, return_sequences=True),
                                 tf.keras.layers.GlobalAveragePooling1D(), tf.keras.layers.Dense(1)])
    before = model(x).numpy()
    model.save(str(tmp_path / "m.keras"))
    loaded = tf.keras.models.load_model(str(tmp_path / "m.keras"))
    assert loaded.layers[0].get_config()['mask_zero'] is True
    np.testing.assert_allclose(loaded(x).numpy(), before, atol=1e-6)
