"""tf.keras.activations: activation functions by name; each is a tapejax op on ``jax.nn``.

Layers fuse a known activation into their own op (one dispatch, one tape node);
:func:`pure` gives the JAX function they fuse.

Example:
    >>> import tapejax as tf
    >>> tf.keras.activations.get('relu')(tf.constant([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
"""
import types

import jax
import jax.numpy as jnp

from .. import ops as _ops
from ..ops import eigen_math, kinks
from ..extend import defop, Op
from ._serialization import get_registered_object, serialize_keras_object

relu6 = _ops.relu6
sigmoid = _ops.sigmoid
tanh = _ops.tanh
softplus = _ops.softplus
softsign = _ops.softsign
elu = _ops.elu
selu = _ops.selu
swish = silu = _ops.silu
exponential = _ops.exp
linear = defop(lambda x: x, name="linear")
hard_sigmoid = defop(lambda x: jax.nn.relu6(x + 3.0) / 6.0, name="hard_sigmoid")  # Keras 3 (Keras 2: 0.2x+0.5)
def _mish_vjp(ans, x):
    """TF's gradient of Keras 3's ``x * tanh(softplus(x))``: ``g * t + TanhGrad(t, x * g) * sigmoid(x)``,
    each product rounded before the sum (XLA would fuse them)."""
    def vjp(g):
        t = eigen_math.tanh(eigen_math.softplus(x))
        f, flush = eigen_math.fence_of(x), eigen_math.flush
        b = eigen_math.tanh_grad(t, flush(x * g)) * eigen_math.logistic(x)
        return flush(f(flush(g * t)) + f(flush(b)))
    return vjp


mish = defop(lambda x: eigen_math.flush(x * eigen_math.tanh(eigen_math.softplus(x))), name="mish",
             vjp=_mish_vjp)   # TF's ops, denormal products flushed as TF's threads do
_relu_op = _ops.relu
_gelu_op = _ops.gelu
_softmax_op = _ops.softmax
_leaky_op = _ops.leaky_relu


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Keras's relu: ``max(x, 0)``, with optional leak ``alpha``, cap ``max_value`` and ``threshold``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.activations.relu(tf.constant([-2.0, 1.0, 9.0]), max_value=6.0).numpy().tolist()
        [0.0, 1.0, 6.0]
    """
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return _relu_op(x)
    return _relu_general(x, alpha=float(alpha), max_value=None if max_value is None else float(max_value),
                         threshold=float(threshold))


def _relu_general_fn(x, alpha=0.0, max_value=None, threshold=0.0):
    # Keras 3's ReLU.static_call step by step: its values (0.0, not -0.0, below the threshold)
    # and, with kinks.clip, TensorFlow's gradients at the threshold and at max_value.
    if alpha != 0.0 and max_value is None and threshold == 0.0:
        return jnp.where(x > 0, x, x * alpha)   # Keras calls leaky_relu here
    negative_part = jax.nn.relu(threshold - x) if alpha != 0.0 else 0.0
    clip_max = max_value is not None
    if threshold != 0.0:
        y = jnp.where(x > threshold, x, jnp.zeros_like(x))
    elif max_value == 6:
        y, clip_max = jax.nn.relu6(x), False
    else:
        y = jax.nn.relu(x)
    if clip_max:
        y = kinks.clip(y, 0.0, max_value)
    return y - alpha * negative_part if alpha != 0.0 else y


_relu_general = defop(_relu_general_fn, name="relu", static=("alpha", "max_value", "threshold"))


def gelu(x, approximate=False):
    """Gaussian error linear unit (exact by default, as Keras).

    Example:
        >>> import tapejax as tf
        >>> round(float(tf.keras.activations.gelu(tf.constant(1.0))), 4)
        0.8413
    """
    return _gelu_op(x, approximate=bool(approximate))


def softmax(x, axis=-1):
    """Softmax over ``axis``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.activations.softmax(tf.constant([[0.0, 0.0]])).numpy().tolist()
        [[0.5, 0.5]]
    """
    return _softmax_op(x, axis=axis)


def leaky_relu(x, alpha=0.2):
    """``x`` if positive else ``alpha * x``.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.activations.leaky_relu(tf.constant([-1.0]), alpha=0.5).numpy().tolist()
        [-0.5]
    """
    return _leaky_op(x, alpha=float(alpha))


_BY_NAME = {
    "relu": relu, "relu6": relu6, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
    "softplus": softplus, "softsign": softsign, "elu": elu, "selu": selu, "silu": silu, "swish": swish,
    "gelu": gelu, "exponential": exponential, "linear": linear, "hard_sigmoid": hard_sigmoid,
    "leaky_relu": leaky_relu, "mish": mish,
}

def _gelu_exact(x):
    return jax.nn.gelu(x, approximate=False)


# The pure JAX function of each activation a layer may fuse into its op. Keys are the
# callables users pass (Keras names resolve to these, tf.nn ops are the same objects).
_PURE = {
    id(relu): jax.nn.relu, id(_relu_op): jax.nn.relu, id(gelu): _gelu_exact, id(_gelu_op): _gelu_exact,
    id(softmax): jax.nn.softmax, id(_softmax_op): jax.nn.softmax, id(leaky_relu): None,
}


def get(identifier):
    """The activation function for a name, a callable, or ``None`` (linear).

    Raises:
        ValueError: an unknown name.

    Example:
        >>> import tapejax as tf
        >>> float(tf.keras.activations.get(None)(tf.constant(3.0)))
        3.0
    """
    if identifier is None:
        return linear
    if isinstance(identifier, dict):   # a configuration (serialize's form for a user's function)
        return deserialize(identifier)
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(f"Unknown activation function: {identifier!r}. Use one of {sorted(_BY_NAME)} "
                             "or pass a callable such as tf.nn.relu.")
        return fn
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}. Pass a name "
                    "('relu'), a callable (tf.nn.relu), or None.")


def pure(activation):
    """The pure JAX function to fuse for ``activation`` (already resolved by :func:`get`), or None.

    None means: call ``activation`` on the layer's output Tensor (a user function).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.activations.pure(tf.nn.elu) is not None
        True
    """
    if activation is linear:
        return _identity
    if id(activation) in _PURE:
        return _PURE[id(activation)]
    if isinstance(activation, Op) and not activation.static:
        return activation.fn
    return None


def _identity(x):
    return x


def _relu_grad(ans, g):
    return jnp.where(ans > 0, g, jnp.zeros((), g.dtype))


# Activations whose derivative is a function of their output (JAX's own rules, written
# on the output): a layer op that fuses one differentiates it from the saved output.
_GRAD_FROM_OUTPUT = {
    _identity: lambda ans, g: g,
    jax.nn.relu: _relu_grad,
    jax.nn.sigmoid: lambda ans, g: g * ans * (1 - ans),
    jnp.tanh: lambda ans, g: (g + g * ans) * (1 - ans),
    jax.nn.softmax: lambda ans, g: ans * (g - jnp.sum(g * ans, axis=-1, keepdims=True)),
    jnp.exp: lambda ans, g: g * ans,
    # tf.sigmoid / tf.tanh / tf.exp (TF's SigmoidGrad, TanhGrad, dy * y, bit for bit)
    eigen_math.logistic: lambda ans, g: eigen_math.sigmoid_grad(ans, g),
    eigen_math.tanh: lambda ans, g: eigen_math.tanh_grad(ans, g),
    eigen_math.exp: lambda ans, g: eigen_math.exp_grad(ans, g),
}


def _grad_from_output(fn):
    """``(ans, g) -> g * fn'(x)`` written on ``ans = fn(x)`` for a pure activation ``fn``
    (as :func:`pure` returns it), or None when the derivative needs ``x``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> import tapejax as tf
        >>> d = tf.keras.activations._grad_from_output(jax.nn.relu)
        >>> d(jnp.array([0.0, 2.0]), jnp.array([5.0, 5.0])).tolist()
        [0.0, 5.0]
    """
    try:
        rule = _GRAD_FROM_OUTPUT.get(fn)
        if rule is None and hasattr(fn, "__wrapped__"):   # an op's dtype check (allows_dtypes)
            rule = _GRAD_FROM_OUTPUT.get(fn.__wrapped__)
        return rule
    except TypeError:  # an unhashable callable
        return None


def serialize(activation):
    """Keras 3's configuration of an activation: the Keras name of a built-in one (or an op's
    name), Keras's ``{'module': 'builtins', 'class_name': 'function', 'config': <name>, ...}`` for a
    user's function (its ``register_keras_serializable`` name, else its own).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.activations.serialize(tf.keras.activations.get('relu'))
        'relu'
    """
    for k, v in _BY_NAME.items():
        if v is activation:
            return k
    if isinstance(activation, types.FunctionType) and activation.__name__ != "<lambda>" \
            and not activation.__module__.startswith("tapejax."):
        return serialize_keras_object(activation)
    return getattr(activation, "__name__", getattr(activation, "name", repr(activation)))


def deserialize(config, custom_objects=None):
    """The activation a configuration names: a Keras name, or a user's function by its
    registered name (``custom_objects`` or ``register_keras_serializable``).

    Raises:
        ValueError: a name that is no activation.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.activations.deserialize('tanh') is tf.keras.activations.tanh
        True
    """
    if isinstance(config, dict):
        name = config.get("config")
        fn = get_registered_object(name, custom_objects) if isinstance(name, str) else None
        if fn is None and isinstance(name, str):
            fn = _BY_NAME.get(name)
        if not callable(fn):
            raise ValueError(f"Could not interpret activation function identifier: {config}")
        return fn
    return get(config)
