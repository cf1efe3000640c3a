"""tf.keras.mixed_precision: dtype policies and dynamic loss scaling, as Keras 3.

Under ``set_global_policy('mixed_float16')`` (or ``'mixed_bfloat16'``) layers created afterwards
keep float32 variables and compute in float16: inputs and weights are cast when the layer is
called, and gradients flow back to the float32 variables through the casts.

Example:
    >>> import tapejax as tf
    >>> tf.keras.mixed_precision.set_global_policy('mixed_float16')
    >>> layer = tf.keras.layers.Dense(2)
    >>> y = layer(tf.ones([1, 3]))
    >>> y.dtype, layer.kernel.dtype, layer.dtype_policy.name
    (tf.float16, tf.float32, 'mixed_float16')
    >>> tf.keras.mixed_precision.set_global_policy('float32')
"""
import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.engine import read_raw
from .._core.tensor import to_array
from .optimizers import Optimizer as _Optimizer
from .._core.variable import Variable
from .. import ops as _ops
from .optimizers import serialize

_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}


class Policy:
    """A dtype policy: the dtype layers compute in and the dtype of their variables.

    ``'mixed_float16'``/``'mixed_bfloat16'``: compute in float16/bfloat16, float32 variables;
    any dtype name (``'float32'``, ``'float16'``...): both that dtype.

    Raises:
        ValueError: an unknown name.

    Example:
        >>> import tapejax as tf
        >>> p = tf.keras.mixed_precision.Policy('mixed_bfloat16')
        >>> p.compute_dtype, p.variable_dtype
        ('bfloat16', 'float32')
    """

    # serialize_keras_object names it as Keras 3 does: keras.DTypePolicy
    _keras_public_module = "keras"
    _keras_class_name = "DTypePolicy"

    def __init__(self, name="float32"):
        if isinstance(name, Policy):
            name = name.name
        if not isinstance(name, str):
            name = _dtypes.as_dtype(name).name
        if name in _MIXED:
            compute, variable = _MIXED[name], "float32"
        else:
            try:
                compute = variable = _dtypes.as_dtype(name).name
            except (TypeError, ValueError, KeyError):
                raise ValueError(f"Cannot convert '{name}' to a mixed precision Policy, which can be "
                                 "'mixed_float16', 'mixed_bfloat16', or a dtype such as 'float32'.") from None
        self._name, self._compute, self._variable = name, compute, variable

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return self._compute

    @property
    def variable_dtype(self):
        return self._variable

    def __eq__(self, other):
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f'<DTypePolicy "{self.name}">'

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


DTypePolicy = Policy
_global = [Policy("float32")]


def set_global_policy(policy):
    """Sets the policy of layers created from now on (a :class:`Policy` or its name; None resets
    to float32)."""
    _global[0] = Policy("float32" if policy is None else policy)


def global_policy():
    """The policy new layers get."""
    return _global[0]


def _layer_policy(dtype):
    """The policy of a layer built with ``dtype=`` (None: the global policy)."""
    if isinstance(dtype, dict):   # a configuration (a layer's get_config()['dtype']): tapejax has one class
        return Policy.from_config(dict(dtype.get("config") or {}))
    return global_policy() if dtype is None else Policy(dtype)


# Keras 2's loss-scaling methods, which Keras 3 (TF 2.16+) removed: TF 2.21 raises AttributeError
# for them (the mixed-precision guide's custom loop does). Keras 3's apply_gradients unscales
# itself, so a gradient unscaled by hand as well would be divided by the scale twice.
_KERAS2_ONLY = {
    "get_scaled_loss": "Keras 3 calls it `scale_loss`: `scaled_loss = optimizer.scale_loss(loss)`.",
    "get_unscaled_gradients": "Keras 3 has no such step: pass the gradients of the scaled loss to "
                              "`optimizer.apply_gradients`, which unscales them.",
}


class LossScaleOptimizer(_Optimizer):
    """Wraps an optimizer with dynamic loss scaling, as Keras 3: multiply the loss by
    ``dynamic_scale`` (``scale_loss``) before differentiating; ``apply_gradients`` unscales the
    gradients, and when any is NaN or Inf skips the step (variables, slots and ``iterations``
    unchanged) and halves the scale; after ``dynamic_growth_steps`` finite steps in a row it
    doubles the scale. Works eagerly and inside ``tf.function`` (the choice is a select, not a branch).

    Example:
        >>> import tapejax as tf
        >>> opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
        >>> v = tf.Variable([1.0])
        >>> _ = opt.apply_gradients([(tf.constant([float('inf')]), v)])
        >>> v.numpy(), float(opt.dynamic_scale.numpy())
        (array([1.], dtype=float32), 16384.0)
    """

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                             "`loss_scale_factor` directly on the `inner_optimizer`.")
        self.inner_optimizer = inner_optimizer
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.name = name or "loss_scale_optimizer"
        self.dynamic_scale = Variable(np.float32(initial_scale), trainable=False, name=f"{self.name}/dynamic_scale")
        self.step_counter = Variable(np.int32(0), trainable=False, name=f"{self.name}/step_counter")

    def __getattr__(self, name):
        # learning_rate, iterations, get_config... are the inner optimizer's.
        if name.startswith("__") or name == "inner_optimizer":
            raise AttributeError(name)
        if name in _KERAS2_ONLY:
            raise AttributeError(f"'LossScaleOptimizer' object has no attribute '{name}'. {_KERAS2_ONLY[name]}")
        return getattr(self.inner_optimizer, name)

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    def build(self, var_list):
        return self.inner_optimizer.build(var_list)

    def __repr__(self):
        return f"<LossScaleOptimizer of {self.inner_optimizer!r}>"

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    @property
    def variables(self):
        return list(self.inner_optimizer.variables) + [self.dynamic_scale, self.step_counter]

    weights = variables

    @property
    def loss_scale(self):
        """The current scale (TF 2's name for ``dynamic_scale``)."""
        return self.dynamic_scale

    def _trackable_children(self):
        return {"inner_optimizer": self.inner_optimizer, "dynamic_scale": self.dynamic_scale,
                "step_counter": self.step_counter}

    def scale_loss(self, loss):
        """``loss * dynamic_scale``: differentiate this one."""
        return loss * _ops.cast(self.dynamic_scale, loss.dtype)

    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        """Unscales the gradients and applies them when all are finite; updates the scale.

        Returns:
            the inner optimizer's ``iterations``.
        """
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            return self.inner_optimizer.apply_gradients(grads_and_vars)
        scale = read_raw(self.dynamic_scale)
        grads = [to_array(g) for g, _ in pairs]
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in grads]))
        unscaled = [jnp.where(finite, g / scale.astype(g.dtype), jnp.zeros_like(g)) for g in grads]
        var_list = [v for _, v in pairs]
        inner = self.inner_optimizer
        _, slots = inner.build(var_list)
        state = var_list + list(slots) + [inner.iterations]
        before = [read_raw(v) for v in state]
        inner.apply_gradients(zip(unscaled, var_list))
        # A step with non-finite gradients leaves every variable of the step as it was.
        for v, old in zip(state, before):
            v._set(jnp.where(finite, read_raw(v), old))
        counter = read_raw(self.step_counter)
        grow = counter == self.dynamic_growth_steps - 1
        self.dynamic_scale._set(jnp.where(finite, jnp.where(grow, scale * 2.0, scale), scale * 0.5).astype(scale.dtype))
        self.step_counter._set(jnp.where(finite & ~grow, counter + 1, 0).astype(counter.dtype))
        return inner.iterations

    def apply(self, grads, trainable_variables=None):
        """Keras 3 spelling: ``apply(grads, variables)``."""
        return self.apply_gradients(zip(grads, trainable_variables))

    def minimize(self, loss, var_list, tape=None):
        """Applies the gradients of ``loss`` (recorded by ``tape``) through the finite check."""
        if tape is None:
            raise ValueError("LossScaleOptimizer.minimize needs the tape that recorded `loss` (tape=tape).")
        var_list = var_list() if callable(var_list) else list(var_list)
        grads = tape.gradient(loss, var_list)
        scale = read_raw(self.dynamic_scale)
        return self.apply_gradients((None if g is None else to_array(g) * scale, v) for g, v in zip(grads, var_list))

    def get_config(self):
        return {"name": self.name, "inner_optimizer": serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}
