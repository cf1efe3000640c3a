"""tf.keras.layers.Bidirectional and TimeDistributed: forward equals a by-hand computation (the
cell equations in JAX, the time-reversed input), tape gradients equal jax.grad of a pure
reference, Keras 3's weight names, checks and config, and training with fit / tf.function."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import layers as L
from conftest import assert_close

RS = np.random.RandomState(0)


def randn(*shape):
    return RS.randn(*shape).astype(np.float32)


def sigmoid(x):
    return 1.0 / (1.0 + jnp.exp(-x))


# ------------------------------------------------- pure reference of the recurrent layers (Keras 3 cells)

def rnn_ref(cell, x, kernel, rkernel, bias, units, return_sequences, reset_after=True):
    """A forward-direction RNN over ``x`` (batch, time, features), step by step; (output, states)."""
    n, t_len = x.shape[0], x.shape[1]
    h = jnp.zeros((n, units), jnp.float32)
    c = jnp.zeros((n, units), jnp.float32)
    hs = []
    for t in range(t_len):
        xt = x[:, t]
        if cell == "lstm":
            z = xt @ kernel + h @ rkernel + bias
            i, f, g, o = jnp.split(z, 4, axis=-1)
            c = sigmoid(f) * c + sigmoid(i) * jnp.tanh(g)
            h = sigmoid(o) * jnp.tanh(c)
        elif cell == "gru":
            b_in, b_rec = (bias[0], bias[1]) if reset_after else (bias, 0.0)
            x_z, x_r, x_h = jnp.split(xt @ kernel + b_in, 3, axis=-1)
            if reset_after:
                r_z, r_r, r_h = jnp.split(h @ rkernel + b_rec, 3, axis=-1)
            else:
                r_z, r_r = jnp.split(h @ rkernel[:, :2 * units], 2, axis=-1)
            z = sigmoid(x_z + r_z)
            r = sigmoid(x_r + r_r)
            hh = jnp.tanh(x_h + r * r_h) if reset_after else jnp.tanh(x_h + (r * h) @ rkernel[:, 2 * units:])
            h = z * h + (1 - z) * hh
        else:
            h = jnp.tanh(xt @ kernel + h @ rkernel + bias)
        hs.append(h)
    out = jnp.stack(hs, axis=1) if return_sequences else h
    return out, ([h, c] if cell == "lstm" else [h])


def bidirectional_ref(cell, merge_mode, return_sequences, return_state, units, reset_after=True):
    """Pure ``f(x, *forward_weights, *backward_weights)``: the backward half runs on x reversed in time."""
    def f(x, fk, frk, fb, bk, brk, bb):
        y, fs = rnn_ref(cell, x, fk, frk, fb, units, return_sequences, reset_after)
        y_rev, bs = rnn_ref(cell, x[:, ::-1], bk, brk, bb, units, return_sequences, reset_after)
        if return_sequences:
            y_rev = y_rev[:, ::-1]
        out = {"concat": lambda: jnp.concatenate([y, y_rev], -1), "sum": lambda: y + y_rev,
               "ave": lambda: (y + y_rev) / 2, "mul": lambda: y * y_rev,
               None: lambda: [y, y_rev]}[merge_mode]()
        if return_state:
            return (out if merge_mode is None else [out]) + fs + bs
        return out
    return f


def _flat(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def check_grads(layer, x, pure, rtol=1e-4, atol=1e-5):
    """Forward and tape gradients (input and every trainable weight) against ``pure`` and jax.grad."""
    xt = tf.constant(x)
    weights = layer.trainable_weights
    wvals = [np.asarray(w.numpy()) for w in weights]
    expected = _flat(pure(x, *wvals))
    cts = [randn(*np.shape(e)) for e in expected]
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = _flat(layer(xt))
    assert len(out) == len(expected)
    for o, e in zip(out, expected):
        assert_close(o, e, rtol=rtol, atol=atol)
    grads = tape.gradient(out, [xt] + weights, output_gradients=[tf.constant(c) for c in cts])

    def loss(*a):
        return sum(jnp.sum(o * c) for o, c in zip(_flat(pure(*a)), cts))
    want = jax.grad(loss, argnums=tuple(range(1 + len(wvals))))(x, *wvals)
    assert len(grads) == len(want) == 1 + len(wvals)
    for g, w in zip(grads, want):
        assert g is not None
        assert_close(g, w, rtol=rtol, atol=atol)


RNNS = {"lstm": L.LSTM, "gru": L.GRU, "simple": L.SimpleRNN}


# ---------------------------------------------------------------- Bidirectional: forward and gradients

@pytest.mark.parametrize("cell", ["lstm", "gru", "simple"])
@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
@pytest.mark.parametrize("return_sequences", [True, False])
def test_bidirectional_matches_layers_on_reversed_input(cell, merge_mode, return_sequences):
    """The forward half is the forward layer; the backward half is a plain (go_backwards=False)
    layer with the backward weights run on the time-reversed input (reversed back per step)."""
    units = 3
    bi = L.Bidirectional(RNNS[cell](units, return_sequences=return_sequences), merge_mode=merge_mode)
    x = randn(2, 5, 4)
    out = bi(tf.constant(x))
    y = bi.forward_layer(tf.constant(x)).numpy()
    plain = RNNS[cell](units, return_sequences=return_sequences)
    plain.build((None, 5, 4))
    plain.set_weights(bi.backward_layer.get_weights())
    y_rev = plain(tf.constant(np.ascontiguousarray(x[:, ::-1]))).numpy()
    if return_sequences:
        y_rev = y_rev[:, ::-1]
    want = {"concat": lambda: np.concatenate([y, y_rev], -1), "sum": lambda: y + y_rev,
            "ave": lambda: (y + y_rev) / 2, "mul": lambda: y * y_rev, None: lambda: [y, y_rev]}[merge_mode]()
    if merge_mode is None:
        assert isinstance(out, list) and len(out) == 2
        assert_close(out[0], want[0], rtol=1e-5, atol=1e-6)
        assert_close(out[1], want[1], rtol=1e-5, atol=1e-6)
    else:
        assert_close(out, want, rtol=1e-5, atol=1e-6)
        steps = (5,) if return_sequences else ()
        assert tuple(out.shape) == (2,) + steps + ((2 * units,) if merge_mode == "concat" else (units,))


@pytest.mark.parametrize("cell", ["lstm", "gru", "simple"])
@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
@pytest.mark.parametrize("return_sequences", [True, False])
def test_bidirectional_forward_and_gradients_vs_jax(cell, merge_mode, return_sequences):
    units = 3
    bi = L.Bidirectional(RNNS[cell](units, return_sequences=return_sequences), merge_mode=merge_mode)
    x = randn(2, 4, 3)
    bi(tf.constant(x))
    # Non-trivial biases so that every weight matters.
    for w in bi.trainable_weights:
        w.assign(np.asarray(w.numpy()) + 0.1 * randn(*w.shape))
    check_grads(bi, x, bidirectional_ref(cell, merge_mode, return_sequences, False, units))


@pytest.mark.parametrize("cell", ["lstm", "gru", "simple"])
@pytest.mark.parametrize("merge_mode", ["concat", "ave", None])
@pytest.mark.parametrize("return_sequences", [True, False])
def test_bidirectional_return_state(cell, merge_mode, return_sequences):
    units = 2
    bi = L.Bidirectional(RNNS[cell](units, return_sequences=return_sequences, return_state=True),
                         merge_mode=merge_mode)
    x = randn(3, 4, 2)
    out = bi(tf.constant(x))
    n_states = 2 if cell == "lstm" else 1
    n_out = 2 if merge_mode is None else 1
    assert isinstance(out, list) and len(out) == n_out + 2 * n_states
    # The states are the forward layer's, then the backward layer's (final states of each direction).
    fwd = bi.forward_layer(tf.constant(x))
    bwd = bi.backward_layer(tf.constant(x))
    for got, want in zip(out[n_out:], fwd[1:] + bwd[1:]):
        assert_close(got, want, rtol=1e-6, atol=1e-6)
        assert tuple(got.shape) == (3, units)
    check_grads(bi, x, bidirectional_ref(cell, merge_mode, return_sequences, True, units))


def test_bidirectional_gru_reset_after_false_and_custom_backward_layer():
    fwd = L.GRU(3, reset_after=False, return_sequences=True)
    bwd = L.GRU(3, reset_after=False, return_sequences=True, go_backwards=True, name="my_backward")
    bi = L.Bidirectional(fwd, backward_layer=bwd, merge_mode="sum", name="bidirectional")
    x = randn(2, 4, 3)
    bi(tf.constant(x))
    assert bi.backward_layer is bwd                 # Keras keeps a given backward layer as it is
    assert bi.forward_layer is not fwd and not fwd.built
    assert [w.path for w in bi.weights][3:] == [
        "bidirectional/my_backward/kernel", "bidirectional/my_backward/recurrent_kernel",
        "bidirectional/my_backward/bias"]
    check_grads(bi, x, bidirectional_ref("gru", "sum", True, False, 3, reset_after=False))


# ---------------------------------------------------------------- Bidirectional: structure and config

def test_bidirectional_weights_names_and_shapes():
    lstm = L.LSTM(4, name="lstm")
    bi = L.Bidirectional(lstm, name="bidirectional")
    assert bi.forward_layer.name == "forward_lstm" and bi.backward_layer.name == "backward_lstm"
    assert bi.forward_layer.go_backwards is False and bi.backward_layer.go_backwards is True
    assert bi.forward_layer is not lstm
    bi(tf.ones([2, 5, 3]))
    assert not lstm.built and lstm.weights == []          # the passed layer is only a template
    assert [w.path for w in bi.weights] == [
        "bidirectional/forward_lstm/kernel", "bidirectional/forward_lstm/recurrent_kernel",
        "bidirectional/forward_lstm/bias", "bidirectional/backward_lstm/kernel",
        "bidirectional/backward_lstm/recurrent_kernel", "bidirectional/backward_lstm/bias"]
    assert [tuple(w.shape) for w in bi.weights] == [(3, 16), (4, 16), (16,)] * 2
    assert len(bi.trainable_weights) == 6 and bi.non_trainable_weights == []
    assert bi.count_params() == 2 * (3 * 16 + 4 * 16 + 16)
    # Independent initialisation of the two directions; LSTM forget bias 1 in both.
    assert not np.allclose(bi.weights[0].numpy(), bi.weights[3].numpy())
    np.testing.assert_array_equal(bi.weights[5].numpy()[4:8], np.ones(4))
    # Names are taken without doubling the prefix.
    again = L.Bidirectional(L.GRU(2, name="forward_gru"))
    assert again.forward_layer.name == "forward_gru" and again.backward_layer.name == "backward_forward_gru"


def test_bidirectional_keeps_the_layer_options():
    layer = L.SimpleRNN(3, activation="relu", use_bias=False, return_sequences=True,
                        kernel_initializer="ones")
    bi = L.Bidirectional(layer, merge_mode="sum")
    for sub in (bi.forward_layer, bi.backward_layer):
        assert sub.units == 3 and sub.use_bias is False and sub.return_sequences is True
        assert sub.activation is tf.keras.activations.get("relu")
    bi(tf.ones([1, 2, 2]))
    assert [tuple(w.shape) for w in bi.weights] == [(2, 3), (3, 3)] * 2
    np.testing.assert_array_equal(bi.weights[0].numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(bi.weights[2].numpy(), np.ones((2, 3)))
    assert bi.return_sequences is True and bi.return_state is False


def test_bidirectional_initial_weights_argument():
    src = L.Bidirectional(L.LSTM(2))
    src(tf.ones([1, 3, 2]))
    values = src.get_weights()
    bi = L.Bidirectional(L.LSTM(2), weights=values)
    bi(tf.ones([1, 3, 2]))
    for a, b in zip(bi.get_weights(), values):
        np.testing.assert_array_equal(a, b)
    x = randn(2, 3, 2)
    assert_close(bi(tf.constant(x)), src(tf.constant(x)), rtol=1e-6, atol=1e-6)


def test_bidirectional_checks():
    with pytest.raises(ValueError, match="Invalid merge mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="Layer"):
        L.Bidirectional(lambda x: x)
    with pytest.raises(ValueError, match="backward_layer"):
        L.Bidirectional(L.LSTM(2), backward_layer="lstm")
    with pytest.raises(ValueError, match="go_backwards"):
        L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(2))
    with pytest.raises(ValueError, match="return_sequences"):
        L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(2, go_backwards=True, return_sequences=True))
    with pytest.raises(ValueError, match="return_state"):
        L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(2, go_backwards=True, return_state=True))
    with pytest.raises(ValueError, match="go_backwards"):
        L.Bidirectional(L.Dense(2))


def test_bidirectional_compute_output_shape_and_functional_api():
    bi = L.Bidirectional(L.LSTM(4, return_sequences=True))
    assert bi.compute_output_shape((None, 7, 3)) == tf.TensorShape([None, 7, 8])
    assert L.Bidirectional(L.GRU(4), merge_mode="mul").compute_output_shape((None, 7, 3)) == \
        tf.TensorShape([None, 4])
    shapes = L.Bidirectional(L.LSTM(4, return_state=True), merge_mode=None).compute_output_shape((None, 7, 3))
    assert shapes == [tf.TensorShape([None, 4])] * 6
    inputs = tf.keras.Input(shape=(7, 3))
    outputs = L.Dense(1)(L.Bidirectional(L.GRU(5))(inputs))
    assert outputs.shape == tf.TensorShape([None, 1])
    model = tf.keras.Model(inputs, outputs)
    assert model(tf.ones([2, 7, 3])).shape == tf.TensorShape([2, 1])


def test_bidirectional_config_round_trip():
    bi = L.Bidirectional(L.GRU(3, return_sequences=True, reset_after=False, name="gru"), merge_mode="ave")
    cfg = bi.get_config()
    assert cfg["merge_mode"] == "ave"
    assert cfg["layer"]["class_name"] == "GRU" and cfg["layer"]["config"]["name"] == "forward_gru"
    assert cfg["backward_layer"]["config"]["go_backwards"] is True
    assert cfg["layer"]["config"]["reset_after"] is False
    copy = L.Bidirectional.from_config(cfg)
    assert copy.merge_mode == "ave"
    assert copy.forward_layer.name == "forward_gru" and copy.backward_layer.name == "backward_gru"
    assert copy.backward_layer.go_backwards and copy.forward_layer.reset_after is False
    copy(tf.ones([1, 2, 2]))
    assert [tuple(w.shape) for w in copy.weights] == [(2, 9), (3, 9), (9,)] * 2


def test_rnn_get_config_round_trip_does_not_change_the_layer():
    lstm = L.LSTM(3, activation="relu", unit_forget_bias=False, return_state=True,
                  kernel_initializer=tf.keras.initializers.Constant(0.5), name="l")
    cfg = lstm.get_config()
    assert cfg["units"] == 3 and cfg["activation"] == "relu" and cfg["unit_forget_bias"] is False
    # Keras 3's serialize_keras_object form (recorded from TF 2.21; Keras 2's had no module / registered_name)
    assert cfg["kernel_initializer"] == {"module": "keras.initializers", "class_name": "Constant",
                                         "config": {"value": 0.5}, "registered_name": None}
    twin = L.LSTM.from_config(cfg)
    assert twin.get_config() == cfg
    out = twin(tf.ones([1, 2, 2]))
    assert isinstance(out, list) and len(out) == 3
    np.testing.assert_array_equal(twin.kernel.numpy(), np.full((2, 12), 0.5, np.float32))


def test_bidirectional_trainable_flag_reaches_both_directions():
    bi = L.Bidirectional(L.SimpleRNN(2))
    bi(tf.ones([1, 3, 2]))
    bi.trainable = False
    assert bi.trainable_weights == [] and len(bi.non_trainable_weights) == 6
    assert not bi.forward_layer.trainable and not bi.backward_layer.trainable


# ---------------------------------------------------------------- Bidirectional: training

def _text_data():
    rs = np.random.RandomState(1)
    ids = rs.randint(0, 12, size=(64, 7)).astype(np.int32)
    y = ((ids[:, 0] + ids[:, -1]) % 2).astype(np.float32)[:, None]    # needs both ends of the sequence
    return ids, y


def test_bidirectional_sequential_fit_loss_falls():
    tf.random.set_seed(0)
    ids, y = _text_data()
    model = tf.keras.Sequential([L.Embedding(12, 8), L.Bidirectional(L.LSTM(4)), L.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.03), loss="mse")
    hist = model.fit(ids, y, batch_size=16, epochs=6, verbose=0)
    losses = hist.history["loss"]
    assert losses[-1] < losses[0] * 0.9, losses
    names = [w.path for w in model.trainable_weights]
    assert len(names) == 1 + 6 + 2
    assert any("/forward_lstm" in n for n in names) and any("/backward_lstm" in n for n in names)
    assert model.predict(ids[:5], verbose=0).shape == (5, 1)


def test_bidirectional_training_step_in_tf_function():
    tf.random.set_seed(0)
    ids, y = _text_data()
    model = tf.keras.Sequential([L.Embedding(12, 8), L.Bidirectional(L.LSTM(4), merge_mode="sum"),
                                 L.Dense(1)])
    opt = tf.keras.optimizers.Adam(0.03)
    x_t, y_t = tf.constant(ids), tf.constant(y)

    @tf.function
    def step(x, t):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - t))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [float(step(x_t, y_t)) for _ in range(15)]
    assert all(np.isfinite(losses))
    assert losses[-1] < losses[0] * 0.9, losses
    # The compiled step trained the same variables the eager model uses.
    eager = float(tf.reduce_mean(tf.square(model(x_t) - y_t)))
    assert eager < losses[0]


def test_bidirectional_model_save_and_load(tmp_path):
    ids, _ = _text_data()
    model = tf.keras.Sequential([L.Embedding(12, 4), L.Bidirectional(L.GRU(3), merge_mode="concat"),
                                 L.Dense(1)])
    want = model(tf.constant(ids[:4])).numpy()
    model.save(str(tmp_path / "m"))
    loaded = tf.keras.models.load_model(str(tmp_path / "m"))
    bi = loaded.layers[1]
    assert isinstance(bi, L.Bidirectional) and bi.backward_layer.go_backwards
    assert_close(loaded(tf.constant(ids[:4])), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- TimeDistributed

def test_time_distributed_dense_equals_dense_per_step():
    dense = L.Dense(5, activation="tanh", name="dense")
    td = L.TimeDistributed(dense, name="time_distributed")
    x = randn(3, 4, 6)
    out = td(tf.constant(x))
    assert tuple(out.shape) == (3, 4, 5)
    per_step = np.stack([dense(tf.constant(x[:, t])).numpy() for t in range(4)], axis=1)
    assert_close(out, per_step, rtol=1e-6, atol=1e-6)
    assert td.weights == dense.weights and len(td.weights) == 2
    assert [w.path for w in td.weights] == ["time_distributed/dense/kernel", "time_distributed/dense/bias"]
    assert tuple(dense.kernel.shape) == (6, 5)


def test_time_distributed_dense_gradients_vs_jax():
    td = L.TimeDistributed(L.Dense(4, activation="relu"))
    x = randn(2, 3, 5)
    td(tf.constant(x))

    def pure(x, kernel, bias):
        return jax.nn.relu(jnp.einsum("btf,fu->btu", x, kernel) + bias)
    check_grads(td, x, pure, rtol=1e-5, atol=1e-5)


def _conv_ref(x, kernel, bias):
    # x (B, T, H, W, C): each time slice through a VALID NHWC convolution, by hand per step.
    steps = [jax.lax.conv_general_dilated(x[:, t], kernel, (1, 1), "VALID",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC")) + bias
             for t in range(x.shape[1])]
    return jnp.stack(steps, axis=1)


def test_time_distributed_conv2d_forward_gradients_and_shapes():
    conv = L.Conv2D(4, 3)
    td = L.TimeDistributed(conv)
    x = randn(2, 3, 6, 7, 2)
    out = td(tf.constant(x))
    assert tuple(out.shape) == (2, 3, 4, 5, 4)
    per_step = np.stack([conv(tf.constant(x[:, t])).numpy() for t in range(3)], axis=1)
    assert_close(out, per_step, rtol=1e-5, atol=1e-5)
    assert [tuple(w.shape) for w in td.weights] == [(3, 3, 2, 4), (4,)]
    check_grads(td, x, _conv_ref, rtol=1e-4, atol=1e-4)
    assert td.compute_output_shape((None, 3, 6, 7, 2)) == tf.TensorShape([None, 3, 4, 5, 4])
    assert td.compute_output_shape((8, None, 6, 7, 2)) == tf.TensorShape([8, None, 4, 5, 4])


def test_time_distributed_builds_inner_layer_for_merged_batch():
    seen = []

    class Probe(L.Layer):
        def build(self, input_shape):
            seen.append(tuple(input_shape))
            self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer="ones")

        def call(self, inputs):
            return inputs * self.w

    td = L.TimeDistributed(Probe(name="probe"), name="time_distributed")
    td(tf.ones([2, 3, 4]))
    assert seen == [(None, 4)]
    assert [w.path for w in td.weights] == ["time_distributed/probe/w"]
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        L.TimeDistributed(L.Dense(2))(tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Layer"):
        L.TimeDistributed("dense")


def test_time_distributed_in_models_and_config():
    inputs = tf.keras.Input(shape=(5, 8, 8, 1))
    x = L.TimeDistributed(L.Conv2D(2, 3, activation="relu"))(inputs)
    x = L.TimeDistributed(L.Flatten())(x)
    assert x.shape == tf.TensorShape([None, 5, 72])
    out = L.Bidirectional(L.SimpleRNN(3))(x)
    model = tf.keras.Model(inputs, L.Dense(1)(out))
    assert model(tf.ones([2, 5, 8, 8, 1])).shape == tf.TensorShape([2, 1])

    seq = tf.keras.Sequential([L.TimeDistributed(L.Dense(3), input_shape=(4, 2)), L.Flatten(), L.Dense(1)])
    assert seq.built
    rs = np.random.RandomState(2)
    xs = rs.randn(32, 4, 2).astype(np.float32)
    ys = xs.sum(axis=(1, 2))[:, None]
    seq.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse")
    losses = seq.fit(xs, ys, batch_size=8, epochs=5, verbose=0).history["loss"]
    assert losses[-1] < losses[0]

    cfg = L.TimeDistributed(L.Dense(7, name="d")).get_config()
    assert cfg["layer"]["class_name"] == "Dense" and cfg["layer"]["config"]["units"] == 7
    copy = L.TimeDistributed.from_config(cfg)
    assert copy.layer.units == 7 and copy(tf.ones([1, 2, 3])).shape == tf.TensorShape([1, 2, 7])
