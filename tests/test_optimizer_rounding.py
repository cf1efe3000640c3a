"""Keras optimizers update the weights to TensorFlow's bits.

Keras 3 (TF backend) updates a variable one TF op after another, each rounded; XLA fuses the
update and on a CPU contracts a product and the add after it into one FMA (rounded once), and
rewrites ``x / sqrt(y)`` and ``x / scalar`` into multiplications. With equal gradients one Adam
step then differed from TF's in ~0.3% of the weights (AdamW 25%), so seeded trainings drifted.
The expected values are the SHA-256 (first 16 hex digits) of the weights TF 2.21 (Keras 3.15)
computed from the same data (this file's `_data` and `CASES`, `apply_gradients` called eagerly).
Gradients span 9 decades, so most roundings are exercised.
"""
import hashlib

import numpy as np
import pytest

import tapejax as tf

K = tf.keras.optimizers

CASES = {
    "sgd": lambda: K.SGD(0.1), "sgd_momentum": lambda: K.SGD(0.1, momentum=0.9),
    "sgd_nesterov": lambda: K.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: K.Adam(), "adam_lr": lambda: K.Adam(0.0123), "adam_amsgrad": lambda: K.Adam(amsgrad=True),
    "adamw": lambda: K.AdamW(), "rmsprop": lambda: K.RMSprop(),
    "rmsprop_centered_momentum": lambda: K.RMSprop(momentum=0.5, centered=True),
    "adagrad": lambda: K.Adagrad(), "adadelta": lambda: K.Adadelta(1.0), "adamax": lambda: K.Adamax(),
    "nadam": lambda: K.Nadam(), "lion": lambda: K.Lion(),
    "sgd_clipvalue": lambda: K.SGD(0.1, clipvalue=0.5),
    "sgd_weight_decay": lambda: K.SGD(0.1, weight_decay=0.01),
    "adam_schedule": lambda: K.Adam(K.schedules.ExponentialDecay(0.01, 2, 0.5)),
}

# name[/dtype][/steps] -> TF's weights after the steps (3 unless given), float32 unless given
TF = {'sgd': '92b996abf65ae34e', 'sgd_momentum': '412780dc24e2821d', 'sgd_nesterov': 'db28a6f0b8699503',
      'adam': '932c07bee13cc48c', 'adam_lr': '8900a2692415d6ff', 'adam_amsgrad': '3c9d21a3c679c52d',
      'adamw': '9409d13c85e35d57', 'rmsprop': 'd501b4760389d568', 'rmsprop_centered_momentum': '9683f226cd597b27',
      'adagrad': 'dcf7a73312a33f0f', 'adadelta': '078e4bcf9689db26', 'adamax': 'ee9fc58167d99932',
      'nadam': 'f04e2e7c5a72171c', 'lion': '8e6635940b2418fc', 'sgd_clipvalue': '5edad3d67335b8ca',
      'sgd_weight_decay': 'ef5f9713b8575b77', 'adam_schedule': '82d895cbf7848029',
      'sgd_momentum/float64': '107b51a9c5bd6a64', 'adam/float64': '8aaec0042b12b567',
      'nadam/float64': '96c95874ff091166', 'adamax/float64': '8e31052d1d2dabb7',
      'adagrad/float64': 'a4602c8f633720d1', 'lion/float64': '87117a031fa56f9a',
      'adam/20': 'fefe000f8f4c2b1e', 'nadam/20': '6a29ce2eb52ef596', 'rmsprop/20': '142f4298c60cc74c'}


def _data(dtype, steps, n=4096):
    rng = np.random.RandomState(7)
    w0 = rng.randn(n).astype(dtype)
    return w0, [(rng.randn(n) * 10.0 ** rng.uniform(-8, 1, n)).astype(dtype) for _ in range(steps)]


def _case(key):
    name, dtype, steps = key.split("/")[0], "float32", 3
    for part in key.split("/")[1:]:
        dtype, steps = (part, steps) if part.startswith("float") else (dtype, int(part))
    return name, dtype, steps


def _digest(w):
    return hashlib.sha256(np.asarray(w).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("key", sorted(TF))
def test_eager_updates_equal_tensorflows_bits(key):
    name, dtype, steps = _case(key)
    w0, grads = _data(dtype, steps)
    opt, w = CASES[name](), tf.Variable(w0)
    for g in grads:
        opt.apply_gradients([(tf.constant(g), w)])
    assert _digest(w.numpy()) == TF[key], f"{key}: the weights differ from TensorFlow's"


@pytest.mark.parametrize("key", ["adam", "adamw", "nadam", "rmsprop_centered_momentum", "sgd_nesterov", "adagrad"])
def test_updates_in_a_tf_function_equal_tensorflows_bits(key):
    """Traced into the step's program, the products stay rounded on their own: the fence's -0.0
    comes from the step count, a value of the run, not a constant XLA could fold away."""
    name, dtype, steps = _case(key)
    w0, grads = _data(dtype, steps)
    opt, w = CASES[name](), tf.Variable(w0)

    @tf.function
    def step(g):
        opt.apply_gradients([(g * 1.0, w)])   # the gradient is computed in the program

    for g in grads:
        step(tf.constant(g))
    assert _digest(w.numpy()) == TF[key]


def test_slots_have_keras_names():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(3)])
    expected = {"Adam": ["momentum", "velocity"], "Adam_ams": ["momentum", "velocity", "velocity_hat"],
                "SGD": ["momentum"], "RMSprop": ["velocity", "average_gradient", "momentum"],
                "Adagrad": ["accumulator"], "Adadelta": ["accumulated_grad", "accumulated_delta_var"],
                "Adamax": ["momentum", "norm"], "Nadam": ["momentum", "velocity"], "Lion": ["momentum"]}
    made = {"Adam": K.Adam(), "Adam_ams": K.Adam(amsgrad=True), "SGD": K.SGD(momentum=0.9),
            "RMSprop": K.RMSprop(momentum=0.5, centered=True), "Adagrad": K.Adagrad(), "Adadelta": K.Adadelta(),
            "Adamax": K.Adamax(), "Nadam": K.Nadam(), "Lion": K.Lion()}
    for key, opt in made.items():
        opt.build(model.trainable_variables)
        fields = {v.name.rsplit("_kernel_", 1)[1] for v in opt.variables if "_kernel_" in v.name}
        assert fields == set(expected[key]), (key, [v.name for v in opt.variables])


def test_a_keras_optimizer_needs_a_learning_rate():
    """Keras 3 refuses learning_rate=None when the optimizer is made (TF 2.21's message)."""
    with pytest.raises(ValueError, match=r"^Argument `learning_rate` should be float, .* Received instead: learning_rate=None$"):
        K.Adam(learning_rate=None)
