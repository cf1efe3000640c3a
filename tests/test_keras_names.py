"""Keras 3 names and reprs as Keras 3.15 on TensorFlow 2.21 prints them (recorded with TensorFlow,
stdout not a terminal, COLUMNS=80): variable names and paths, layer and model reprs and auto-names,
summary() tables, and tf.Variable reprs after assign."""
import numpy as np
import pytest

import tapejax as tf

L = tf.keras.layers

SMALL_60 = (
    'Model: "mlp"\n'
    '┏━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┓\n'
    '┃ Layer (type)             ┃ Output Shape      ┃   Param # ┃\n'
    '┡━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━┩\n'
    '│ d (Dense)                │ (None, 10)        │     7,850 │\n'
    '└──────────────────────────┴───────────────────┴───────────┘\n'
    ' Total params: 7,850 (30.66 KB)\n'
    ' Trainable params: 7,850 (30.66 KB)\n'
    ' Non-trainable params: 0 (0.00 B)\n'
)

MLP = (
    'Model: "mlp"\n'
    '┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓\n'
    '┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃\n'
    '┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩\n'
    '│ dense (Dense)                   │ (None, 512)            │        16,896 │\n'
    '├─────────────────────────────────┼────────────────────────┼───────────────┤\n'
    '│ batch_normalization             │ (None, 512)            │         2,048 │\n'
    '│ (BatchNormalization)            │                        │               │\n'
    '├─────────────────────────────────┼────────────────────────┼───────────────┤\n'
    '│ dropout (Dropout)               │ (None, 512)            │             0 │\n'
    '├─────────────────────────────────┼────────────────────────┼───────────────┤\n'
    '│ dense_1 (Dense)                 │ (None, 10)             │         5,130 │\n'
    '└─────────────────────────────────┴────────────────────────┴───────────────┘\n'
    ' Total params: 24,074 (94.04 KB)\n'
    ' Trainable params: 23,050 (90.04 KB)\n'
    ' Non-trainable params: 1,024 (4.00 KB)\n'
)

MLP_COMPILED_TRAINABLE = (
    'Model: "mlp"\n'
    '┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━┓\n'
    '┃ Layer (type)                ┃ Output Shape          ┃    Param # ┃ Trai… ┃\n'
    '┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━┩\n'
    '│ dense (Dense)               │ (None, 512)           │     16,896 │   Y   │\n'
    '├─────────────────────────────┼───────────────────────┼────────────┼───────┤\n'
    '│ batch_normalization         │ (None, 512)           │      2,048 │   Y   │\n'
    '│ (BatchNormalization)        │                       │            │       │\n'
    '├─────────────────────────────┼───────────────────────┼────────────┼───────┤\n'
    '│ dropout (Dropout)           │ (None, 512)           │          0 │   -   │\n'
    '├─────────────────────────────┼───────────────────────┼────────────┼───────┤\n'
    '│ dense_1 (Dense)             │ (None, 10)            │      5,130 │   Y   │\n'
    '└─────────────────────────────┴───────────────────────┴────────────┴───────┘\n'
    ' Total params: 70,176 (274.13 KB)\n'
    ' Trainable params: 23,050 (90.04 KB)\n'
    ' Non-trainable params: 1,024 (4.00 KB)\n'
    ' Optimizer params: 46,102 (180.09 KB)\n'
)

TWO_HEADS = (
    'Model: "two_heads"\n'
    '┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓\n'
    '┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃\n'
    '┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩\n'
    '│ x (InputLayer)      │ (None, 3)         │          0 │ -                 │\n'
    '├─────────────────────┼───────────────────┼────────────┼───────────────────┤\n'
    '│ a (Dense)           │ (None, 2)         │          8 │ x[0][0]           │\n'
    '├─────────────────────┼───────────────────┼────────────┼───────────────────┤\n'
    '│ b (Dense)           │ (None, 3)         │         12 │ x[0][0]           │\n'
    '├─────────────────────┼───────────────────┼────────────┼───────────────────┤\n'
    '│ cat (Concatenate)   │ (None, 5)         │          0 │ a[0][0], b[0][0]  │\n'
    '└─────────────────────┴───────────────────┴────────────┴───────────────────┘\n'
    ' Total params: 20 (80.00 B)\n'
    ' Trainable params: 20 (80.00 B)\n'
    ' Non-trainable params: 0 (0.00 B)\n'
)

BIG = (
    'Model: "big"\n'
    '┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓\n'
    '┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃\n'
    '┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩\n'
    '│ wide (Dense)                    │ (None, 1000)           │     1,001,000 │\n'
    '└─────────────────────────────────┴────────────────────────┴───────────────┘\n'
    ' Total params: 1,001,000 (3.82 MB)\n'
    ' Trainable params: 1,001,000 (3.82 MB)\n'
    ' Non-trainable params: 0 (0.00 B)\n'
)

UNBUILT = (
    'Model: "unbuilt"\n'
    '┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓\n'
    '┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃\n'
    '┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩\n'
    '│ later (Dense)                   │ ?                      │   0 (unbuilt) │\n'
    '└─────────────────────────────────┴────────────────────────┴───────────────┘\n'
    ' Total params: 0 (0.00 B)\n'
    ' Trainable params: 0 (0.00 B)\n'
    ' Non-trainable params: 0 (0.00 B)\n'
)


@pytest.fixture(autouse=True)
def _fresh_names(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")    # Keras sizes the table from the terminal: 80 columns - 4
    tf.keras.backend.clear_session()


def test_variable_names_paths_and_reprs():
    d = L.Dense(4)
    assert repr(d) == "<Dense name=dense, built=False>" and str(d) == repr(d)
    d(tf.ones([2, 3]))
    assert repr(d) == "<Dense name=dense, built=True>"
    assert [w.name for w in d.weights] == ["kernel", "bias"]
    assert [w.path for w in d.weights] == ["dense/kernel", "dense/bias"]
    assert isinstance(d.kernel, tf.Variable) and isinstance(d.kernel, tf.keras.Variable)
    d.bias.assign([0.0, 1.0, 2.0, 3.0])
    assert repr(d.bias) == "<Variable path=dense/bias, shape=(4,), dtype=float32, value=[0. 1. 2. 3.]>"
    k = d.kernel.numpy()
    assert repr(d.kernel) == f"<Variable path=dense/kernel, shape=(3, 4), dtype=float32, value={k}>"
    assert (L.Dense(2).name, L.Dense(2).name) == ("dense_1", "dense_2")
    s = tf.keras.Variable(2.0, name="s")
    assert (repr(s), s.name, s.path) == ("<Variable path=s, shape=(), dtype=float32, value=2.0>", "s", "s")
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        tf.keras.Variable(1.0, name="a/b")


def test_model_paths_names_and_reprs():
    m = tf.keras.Sequential([tf.keras.Input((3,)), L.Dense(4), L.Dense(1)])
    assert m.name == "sequential" and repr(m) == "<Sequential name=sequential, built=True>"
    assert [w.path for w in m.weights] == ["sequential/dense/kernel", "sequential/dense/bias",
                                           "sequential/dense_1/kernel", "sequential/dense_1/bias"]
    assert [w.name for w in m.weights] == ["kernel", "bias", "kernel", "bias"]
    lazy = tf.keras.Sequential([L.Dense(2)])
    lazy(tf.ones([1, 3]))
    assert [w.path for w in lazy.weights] == ["sequential_1/dense_2/kernel", "sequential_1/dense_2/bias"]
    inp = tf.keras.Input((3,))
    assert repr(inp).startswith("<KerasTensor shape=(None, 3), dtype=float32, sparse=False, ragged=False, "
                                "name=keras_tensor")
    out = L.Dense(2, name="out")(L.Dense(4)(inp))
    fm = tf.keras.Model(inp, out)
    # Keras 3 builds a functional model inside each Sequential: the first two took 'functional'
    # and 'functional_1'.
    assert fm.name == "functional_2" and repr(fm) == "<Functional name=functional_2, built=True>"
    # TF 2.21: the lazy Sequential's build made an InputLayer ('input_layer_1'), so this one is _2
    assert [l.name for l in fm.layers] == ["input_layer_2", "dense_3", "out"]
    assert [w.path for w in fm.weights] == ["dense_3/kernel", "dense_3/bias", "out/kernel", "out/bias"]

    class MyM(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = L.Dense(2)

        def call(self, x):
            return self.d(x)

    mm = MyM()
    mm(tf.ones([1, 3]))
    assert repr(mm) == "<MyM name=my_m, built=True>"
    assert [w.path for w in mm.weights] == ["my_m/dense_4/kernel", "my_m/dense_4/bias"]


def test_optimizer_variable_names():
    tf.keras.backend.clear_session()   # Keras 3 names optimizers like layers: adam, adam_1...
    opt = tf.keras.optimizers.Adam()
    d = L.Dense(2)
    d.build((None, 3))
    opt.apply_gradients(zip([tf.ones([3, 2]), tf.ones([2])], d.trainable_variables))
    assert [(v.name, v.path) for v in opt.variables][:2] == [("iteration", "adam/iteration"),
                                                            ("learning_rate", "adam/learning_rate")]
    # Slots are named after the variable's path, as Keras 3's (optax's state names: mu, nu).
    assert "adam/dense_kernel_momentum" in [v.path for v in opt.variables]   # Keras 3: ..._momentum, ..._velocity


def test_tf_variable_reprs_after_assign():
    v = tf.Variable(1.0)
    assert repr(v) == str(v) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"
    assert repr(v.assign(2.0)) == "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=2.0>"
    assert repr(v.assign_add(1.0)) == "<tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=3.0>"
    w = tf.Variable([1.0, 2.0])
    assert str(w.assign_sub([1.0, 1.0])) == ("<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, "
                                              "numpy=array([0., 1.], dtype=float32)>")
    assert w.assign([3.0, 4.0], read_value=False) is None
    assert repr(tf.Variable([1.0, 2.0], name="w")) == ("<tf.Variable 'w:0' shape=(2,) dtype=float32, "
                                                         "numpy=array([1., 2.], dtype=float32)>")


def _summary(model, **kw):
    lines = []
    model.summary(print_fn=lines.append, **kw)
    assert len(lines) == 1       # Keras 3 hands print_fn the whole table
    return lines[0]


def test_summaries_match_keras_3():
    small = tf.keras.Sequential([tf.keras.Input((784,)), L.Dense(10, name="d")], name="mlp")
    assert _summary(small, line_length=60) == SMALL_60
    mlp = tf.keras.Sequential([tf.keras.Input((32,)), L.Dense(512, name="dense"),
                               L.BatchNormalization(name="batch_normalization"), L.Dropout(0.1, name="dropout"),
                               L.Dense(10, name="dense_1")], name="mlp")
    assert _summary(mlp) == MLP
    inp = tf.keras.Input((3,), name="x")
    a, b = L.Dense(2, name="a")(inp), L.Dense(3, name="b")(inp)
    two = tf.keras.Model(inp, [L.Concatenate(name="cat")([a, b]), a], name="two_heads")
    assert _summary(two) == TWO_HEADS
    big = tf.keras.Sequential([tf.keras.Input((1000,)), L.Dense(1000, name="wide")], name="big")
    assert _summary(big) == BIG
    assert _summary(tf.keras.Sequential([L.Dense(3, name="later")], name="unbuilt")) == UNBUILT


def test_summary_after_fit_shows_trainable_column_and_optimizer_params():
    mlp = tf.keras.Sequential([tf.keras.Input((32,)), L.Dense(512, name="dense"),
                               L.BatchNormalization(name="batch_normalization"), L.Dropout(0.1, name="dropout"),
                               L.Dense(10, name="dense_1")], name="mlp")
    mlp.compile("adam", "mse")
    mlp.fit(np.ones((4, 32), np.float32), np.ones((4, 10), np.float32), verbose=0)
    got, want = _summary(mlp, show_trainable=True).splitlines(), MLP_COMPILED_TRAINABLE.splitlines()
    assert got[:-4] == want[:-4]            # the table and the model's own counts
    assert got[-3:-1] == want[-3:-1]
    # optax's Adam keeps a step count of its own next to Keras's iteration: one scalar more.
    assert got[-1].startswith(" Optimizer params: 46,10")


def test_summary_prints_to_stdout(capsys):
    small = tf.keras.Sequential([tf.keras.Input((784,)), L.Dense(10, name="d")], name="mlp")
    small.summary(line_length=60)
    assert capsys.readouterr().out == SMALL_60
