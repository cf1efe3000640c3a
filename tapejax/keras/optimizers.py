"""tf.keras.optimizers on optax: each Keras optimizer is one line naming its update rule.

Keras's optimizers (SGD, Adam, ...) are ``KerasRule``s: Keras 3's update formulas, each
product rounded before an add reads it, so the weights equal TensorFlow's bit for bit,
with their state laid out by the optax transformation of the same rule. Any other optax
``GradientTransformation`` is an optimizer too (``Optax(tx)``): it gives the update
*direction*, chained after gradient clipping and before weight decay, and the learning
rate scales it. The whole update of all variables is one ``jax.jit``-compiled call per
step, cached per optimizer; its state lives in non-trainable tapejax Variables, created
on the first ``apply_gradients`` for a given set of variables, so ``tf.function`` and
checkpoints find them like any other Variable.

Example:
    >>> import tapejax as tf
    >>> from tapejax.keras import optimizers
    >>> w = tf.Variable([1.0, 2.0])
    >>> opt = optimizers.SGD(learning_rate=0.1)
    >>> with tf.GradientTape() as tape:
    ...     loss = tf.reduce_sum(w ** 2)
    >>> _ = opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
    >>> w.numpy(), int(opt.iterations.numpy())
    (array([0.8, 1.6], dtype=float32), 1)
"""
import inspect
import warnings
from typing import NamedTuple, Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._core.engine import read_raw
from .._core.indexed_slices import IndexedSlices
from ._repr import KerasObjectRepr as _KerasObjectRepr
from .._core.state import init_scope, read_for_update
from .._core.tensor import Tensor, _TensorBase, to_array
from ._variables import owned_variable
from ._naming import _to_snake_case, unique_name as _unique_name
from ..checkpoint.tracking import apply_deferred as _apply_deferred
from .._core.tape import GradientTape
from ..ops.math_ops import _ieee_divisor
from ..ops import eigen_reduce



# ---------------------------------------------------------------------------
# Learning-rate schedules (tf.keras.optimizers.schedules), jittable in the step
# ---------------------------------------------------------------------------

class LearningRateSchedule:
    """Base class of learning-rate schedules: ``schedule(step) -> learning rate``.

    Subclass it and define ``__call__(self, step)`` with jnp/tapejax ops; the
    optimizer calls it inside its compiled update with ``step = optimizer.iterations``.
    """

    def __call__(self, step):
        raise NotImplementedError("LearningRateSchedule subclasses define __call__(self, step).")

    def get_config(self):
        return dict(getattr(self, "_config", {}))


def _schedule_class(name, make, doc):
    """A Keras-named schedule class whose value is an optax (or jnp) schedule."""

    def __init__(self, *args, **kwargs):
        sig = inspect.signature(make)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        self._config = dict(bound.arguments)
        self._fn = make(**self._config)

    def __call__(self, step):
        return jnp.asarray(self._fn(jnp.asarray(step, jnp.float32)), jnp.float32)

    return type(name, (LearningRateSchedule,), {"__init__": __init__, "__call__": __call__, "__doc__": doc})


def _inverse_time(initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
    def f(step):
        p = step / decay_steps
        return initial_learning_rate / (1 + decay_rate * (jnp.floor(p) if staircase else p))
    return f


def _piecewise(boundaries, values, name=None):
    b = jnp.asarray(boundaries, jnp.float32)
    v = jnp.asarray(values, jnp.float32)
    return lambda step: v[jnp.sum(step > b)]  # Keras: values[i] while boundaries[i-1] < step <= boundaries[i]


def _cosine(initial_learning_rate, decay_steps, alpha=0.0, name=None, warmup_target=None, warmup_steps=0):
    if warmup_target is None:
        return optax.cosine_decay_schedule(initial_learning_rate, decay_steps, alpha)
    return optax.warmup_cosine_decay_schedule(initial_learning_rate, warmup_target, warmup_steps,
                                              warmup_steps + decay_steps, warmup_target * alpha)


def _polynomial(initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False, name=None):
    if cycle:
        def f(step):
            steps = decay_steps * jnp.maximum(jnp.ceil(step / decay_steps), 1.0)
            return (initial_learning_rate - end_learning_rate) * (1 - step / steps) ** power + end_learning_rate
        return f
    return optax.polynomial_schedule(initial_learning_rate, end_learning_rate, power, decay_steps)


class _Schedules:
    """``tf.keras.optimizers.schedules``."""

    LearningRateSchedule = LearningRateSchedule
    ExponentialDecay = _schedule_class(
        "ExponentialDecay",
        lambda initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None:
            optax.exponential_decay(initial_learning_rate, decay_steps, decay_rate, staircase=staircase),
        "``lr * decay_rate ** (step / decay_steps)`` (floored with ``staircase=True``).")
    InverseTimeDecay = _schedule_class(
        "InverseTimeDecay", _inverse_time, "``lr / (1 + decay_rate * step / decay_steps)``.")
    PiecewiseConstantDecay = _schedule_class(
        "PiecewiseConstantDecay", _piecewise, "``values[i]`` between ``boundaries[i-1]`` and ``boundaries[i]``.")
    CosineDecay = _schedule_class("CosineDecay", _cosine, "Cosine decay to ``alpha * lr`` (optional warmup).")
    PolynomialDecay = _schedule_class(
        "PolynomialDecay", _polynomial, "Polynomial decay to ``end_learning_rate`` over ``decay_steps``.")


schedules = _Schedules()
ExponentialDecay = _Schedules.ExponentialDecay


# ---------------------------------------------------------------------------
# Keras update rules optax does not have verbatim
# ---------------------------------------------------------------------------

class KerasAdamState(NamedTuple):
    """Adam's (and AdamW's) slots: the step count, Keras's momentums, velocities and velocity_hats."""
    count: Any
    mu: Any
    nu: Any
    nu_max: Any


def _keras_adam_state(amsgrad):
    def init(params):
        zeros = lambda: optax.tree_utils.tree_zeros_like(params)  # noqa: E731
        return KerasAdamState(jnp.zeros([], jnp.int32), zeros(), zeros(), zeros() if amsgrad else None)
    return init


class KerasNadamState(NamedTuple):
    """Nadam's slots: the step count, Keras's ``u_product`` (the momentum schedule's running
    product), momentums and velocities."""
    count: Any
    u_product: Any
    mu: Any
    nu: Any


def _keras_nadam_state(params):
    zeros = lambda: optax.tree_utils.tree_zeros_like(params)  # noqa: E731
    leaves = jax.tree.leaves(params)   # Keras: u_product has the first variable's dtype
    dtype = leaves[0].dtype if leaves else jnp.float32
    return KerasNadamState(jnp.zeros([], jnp.int32), jnp.ones([], dtype), zeros(), zeros())


def clip_by_norm_each(clipnorm):
    """Keras's ``clipnorm``: each gradient rescaled to L2 norm at most ``clipnorm``."""

    def clip(g):
        n = jnp.sqrt(jnp.sum(jnp.square(g)))
        return g * clipnorm / jnp.maximum(n, clipnorm)

    return optax.stateless(lambda updates, params=None: jax.tree.map(clip, updates))


# ---------------------------------------------------------------------------
# Keras's update rules, each operation rounded on its own as TensorFlow's kernels round it
# ---------------------------------------------------------------------------
#
# Keras 3 updates a variable with one TF op after another (``m += (g - m) * (1 - beta_1)``...),
# each rounded to the variable's dtype. XLA fuses a whole update into one loop and, on a CPU,
# contracts a product and the add after it into one FMA instruction, rounded once: with equal
# gradients one Adam step then differed from TensorFlow's in the last bit of ~0.3% of the
# weights (SGD 0.6%, AdamW 25%, optax's formulas besides), and a seeded training drifted from
# TF's. The rules below are Keras's formulas in Keras's order, and every product is fenced
# (``f``): ``x + (-0.0)`` with a -0.0 known only at run time, which XLA and LLVM cannot fold, so
# an add reads the product rounded (at most ``fma(a, b, -0.0)``, which rounds as the product
# alone does); a divisor that is a sqrt is fenced too and a scalar one broadcast (``_div``), or
# XLA would multiply by ``rsqrt`` / the reciprocal. The loop stays one fused loop.

class KerasRule(NamedTuple):
    """A Keras optimizer's update rule. ``init(params) -> state`` lays out its state (the slot
    Variables; as the optax transformation of the same rule does, where optax has one);
    ``step(params, grads, state, lr, f) -> (params, state)`` is the update in Keras's formulas
    (``f``: the fence; the step count ``t - 1`` is the state's ``count``, the optimizer's
    ``iterations`` for the variables it was built for); ``names`` are Keras's names of the
    state's fields (``mu`` -> ``momentum``...); ``listed``, the order ``optimizer.variables``
    lists them: Keras's calls creating them, each a tuple of names created together (one
    Variable of each per model variable, in turn); by default each name alone, in ``names``'s
    order."""
    init: Any
    step: Any
    names: Any
    listed: Any = None

    def listing_rank(self, name):
        """(call, place in the call) of the Keras slot ``name`` in Keras's creation order."""
        groups = self.listed or tuple((n,) for n in self.names.values())
        for i, group in enumerate(groups):
            if name in group:
                return i, group.index(name)
        return len(groups), 0      # a slot of no model variable (Nadam's u_product): last


def _updates_itself(updates, state, params=None):
    raise NotImplementedError("A Keras optimizer's rule updates the variables itself (Optimizer._keras_update).")


def _fence_of(count):
    """``f(x)`` = ``x + (-0.0)``, the identity for every x (signed zeros, inf, nan), with the -0.0
    made from the step count (``-(count * 0.0)``: a float product by zero is never folded, it
    could be NaN), so it is a run-time value also where the update is traced into a tf.function."""
    zero = -(jnp.asarray(count).astype(jnp.float32) * 0.0)

    def f(x):
        if isinstance(x, _Slices):
            return x.fenced(f)
        return x + zero.astype(x.dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x
    return f


def _cast(value, dtype):
    """Keras's ``ops.cast`` of a Python float: TF makes it a float32 tensor first (a float64
    variable's update reads ``float64(float32(0.9))``)."""
    return jnp.asarray(np.float32(value), dtype)


def _pow(base, t):
    """TensorFlow's ``pow`` of scalars of ``t``'s dtype. In float32 glibc's ``powf``, here taken
    in float64 and rounded (the same but where powf rounds to the other neighbour: 83 of the
    16110 steps at which ``0.999 ** t`` is above 1e-7; XLA's float32 ``pow`` differs more often);
    in float64 XLA's ``pow``, which may differ from glibc's ``pow`` in the last bits."""
    base = jnp.asarray(base, t.dtype)
    if t.dtype == jnp.float32:
        return jnp.power(base.astype(jnp.float64), t.astype(jnp.float64)).astype(jnp.float32)
    return jnp.power(base, t)


def _div(x, y):
    """``x / y`` rounded as an IEEE division also where ``y`` is a scalar (XLA would multiply by
    its reciprocal). Slices ``x`` divide their values by ``y`` (its rows at their indices)."""
    if isinstance(x, _Slices):
        return x._with(_div(x.values, x._rows(y)))
    return x / _ieee_divisor(y, x)


class _Slices:
    """A ``tf.IndexedSlices`` gradient inside a compiled update, with what Keras 3 on TensorFlow
    makes of it (keras/src/backend/tensorflow/sparse.py and optimizer.py), so that an update rule,
    written once for dense gradients, gives TF's numbers for sparse ones too:

    - ``*`` with a scalar, a dense array (its rows at ``indices`` are gathered) or slices of the
      same indices, ``/`` by a scalar or a dense array (``elementwise_binary_intersection``,
      ``elementwise_division``), ``-x``, ``.astype``, the fence and ``_ops.abs``
      (``elementwise_unary``) keep the slices: one value per index, repeated indices kept
      (``g * g``, Keras's ``square``, squares each slice, not their sum);
    - ``+`` and ``-`` with a dense operand or a scalar, and ``_ops.maximum``, densify them first
      (``elementwise_binary_union``: ``tf.convert_to_tensor``, the slices at a repeated index
      summed in order) -- also ``_dense(x)``;
    - :func:`_assign_add` / :func:`_assign_sub` of slices into a variable scatter them, one
      slice after another (``variable.scatter_add`` / ``scatter_sub``).

    ``dense_shape`` is static; ``fence`` is the update's ``f`` (``_fence_of``), applied to the
    values before they are summed or scattered (so XLA cannot contract a product into the
    scatter's add).
    """

    __slots__ = ("values", "indices", "dense_shape", "fence")
    __array_ufunc__ = None      # numpy scalars defer to the reflected operators below

    def __init__(self, values, indices, dense_shape, fence=None):
        self.values, self.indices, self.dense_shape, self.fence = values, indices, tuple(dense_shape), fence

    def _with(self, values):
        return _Slices(values, self.indices, self.dense_shape, self.fence)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self):
        return self.dense_shape

    def astype(self, dtype):
        return self._with(self.values.astype(dtype))

    def fenced(self, f):
        """These slices with the update's fence ``f`` applied to the values and remembered."""
        return _Slices(f(self.values), self.indices, self.dense_shape, f)

    def _rounded(self):
        return self.fence(self.values) if self.fence is not None else self.values

    def dense(self):
        """``tf.convert_to_tensor``: the slices summed into zeros, in order (``unsorted_segment_sum``),
        behind an optimization barrier: XLA rewrites ``x + scatter_add(zeros, ...)`` into
        ``scatter_add(x, ...)``, which adds the slices to ``x`` one by one (rounded otherwise)."""
        zeros = jnp.zeros(self.dense_shape, self.dtype)
        return jax.lax.optimization_barrier(zeros.at[self.indices].add(self._rounded()))

    def _rows(self, other):
        """``other`` as an operand of the values: a scalar as it is, a dense array's rows gathered."""
        if isinstance(other, _Slices):
            if other.indices is not self.indices:
                raise NotImplementedError("An operation of two IndexedSlices gradients of different indices.")
            return other.values
        if jnp.ndim(other) == 0:
            return other
        return jnp.take(other, self.indices, axis=0)

    def __mul__(self, other):
        return self._with(self.values * self._rows(other))

    def __rmul__(self, other):
        return self._with(self._rows(other) * self.values)

    def __truediv__(self, other):
        # Keras's division of slices by a dense array that has a zero or NaN row adds that row's
        # index to the slices (0 / 0: NaN); here only the slices' rows are divided.
        return self._with(self.values / self._rows(other))

    def __neg__(self):
        return self._with(-self.values)

    def __add__(self, other):
        if isinstance(other, _Slices) and other.indices is self.indices:
            return self._with(self.values + other.values)
        return self.dense() + _dense(other)

    def __radd__(self, other):
        return _dense(other) + self.dense()

    def __sub__(self, other):
        if isinstance(other, _Slices) and other.indices is self.indices:
            return self._with(self.values - other.values)
        return self.dense() - _dense(other)

    def __rsub__(self, other):
        return _dense(other) - self.dense()

    def __rtruediv__(self, other):
        return _dense(other) / self.dense()


jax.tree_util.register_pytree_node(
    _Slices, lambda s: ((s.values, s.indices), s.dense_shape), lambda shape, c: _Slices(c[0], c[1], shape))


def _dense(x):
    """``x`` as a dense array (:class:`_Slices` summed, as ``tf.convert_to_tensor`` does)."""
    return x.dense() if isinstance(x, _Slices) else x


def _unary(fn):
    """Keras's ``elementwise_unary``: ``fn`` of each slice's values, or of a dense array."""
    return lambda x: x._with(fn(x.values)) if isinstance(x, _Slices) else fn(x)


class _ops:
    """The ``keras.ops`` functions the rules apply to what may be a sparse gradient, with their
    TensorFlow-backend semantics for :class:`_Slices` (dense arrays: the ``jnp`` function)."""
    abs = staticmethod(_unary(jnp.abs))

    @staticmethod
    def maximum(x, y):
        """``elementwise_binary_union(..., densify_mixed=True)``: slices are densified."""
        return jnp.maximum(_dense(x), _dense(y))


def _assign_add(variable, value):
    """Keras's ``optimizer.assign_add(variable, value)``: slices are scattered one after another
    (``variable.scatter_add``; a repeated index adds each slice in turn)."""
    if isinstance(value, _Slices):
        return variable.at[value.indices].add(value._rounded())
    return variable + value


def _assign_sub(variable, value):
    """Keras's ``optimizer.assign_sub(variable, value)`` (``scatter_sub`` of slices: ``x - u`` is
    ``x + (-u)`` exactly)."""
    if isinstance(value, _Slices):
        return variable.at[value.indices].add(-value._rounded())
    return variable - value


def _each(fn, *columns):
    """``fn`` variable by variable (a row of ``columns``); its outputs as lists, one per output."""
    return tuple(map(list, zip(*[fn(*row) for row in zip(*columns)])))


def _keras_sgd(momentum, nesterov):
    def step(params, grads, state, lr, f):
        if not momentum:
            return [_assign_sub(w, f(g * lr.astype(w.dtype))) for w, g in zip(params, grads)], state

        def one(w, g, m):
            mom, lr_ = _cast(momentum, w.dtype), lr.astype(w.dtype)
            m = f(m * mom) - f(g * lr_)
            return _assign_add(w, (f(m * mom) - f(g * lr_)) if nesterov else m), m
        params, trace = _each(one, params, grads, state.trace)
        return params, state._replace(trace=trace)
    return KerasRule(_sgd(momentum, nesterov).init, step, {"trace": "momentum"})


def _keras_adam(beta_1, beta_2, epsilon, amsgrad):
    def step(params, grads, state, lr, f):
        def one(w, g, m, v, v_hat):
            d = w.dtype
            t = (state.count + 1).astype(d)
            alpha = f(lr.astype(d) * jnp.sqrt(1 - _pow(_cast(beta_2, d), t))) / (1 - _pow(_cast(beta_1, d), t))
            m = m + f((g - m) * jnp.asarray(1 - beta_1, d))
            v = v + f((f(g * g) - v) * jnp.asarray(1 - beta_2, d))
            if amsgrad:
                v_hat = jnp.maximum(v_hat, v)
            w = _assign_sub(w, f(m * alpha) / (jnp.sqrt(v_hat if amsgrad else v) + jnp.asarray(epsilon, d)))
            return w, m, v, v_hat
        nu_max = state.nu_max if amsgrad else [None] * len(params)
        params, mu, nu, nu_max = _each(one, params, grads, state.mu, state.nu, nu_max)
        return params, KerasAdamState(optax.safe_increment(state.count), mu, nu, nu_max if amsgrad else None)
    return KerasRule(_keras_adam_state(amsgrad), step,
                     {"mu": "momentum", "nu": "velocity", "nu_max": "velocity_hat"},
                     (("momentum", "velocity"), ("velocity_hat",)))


def _keras_rmsprop(rho, momentum, epsilon, centered):
    def step(params, grads, state, lr, f):
        rms, trace = (state[0], state[1]) if momentum else (state, None)

        def one(w, g, v, avg, mom):
            d = w.dtype
            r, r1 = jnp.asarray(rho, d), jnp.asarray(1 - rho, d)
            v = f(r * v) + f(r1 * f(g * g))
            if centered:
                avg = f(r * avg) + f(r1 * g)
                denominator = v - f(avg * avg) + jnp.asarray(epsilon, d)
            else:
                denominator = v + jnp.asarray(epsilon, d)
            increment = f(lr.astype(d) * g) / f(jnp.sqrt(denominator))
            if momentum:
                mom = f(jnp.asarray(momentum, d) * mom) + increment
                return _assign_sub(w, mom), v, avg, mom
            return _assign_sub(w, increment), v, avg, mom
        n = len(params)
        params, nu, mu, tr = _each(one, params, grads, rms.nu, rms.mu if centered else [None] * n,
                                   trace.trace if momentum else [None] * n)
        rms = rms._replace(nu=nu, mu=mu) if centered else rms._replace(nu=nu)
        return params, ((rms, trace._replace(trace=tr)) if momentum else rms)
    names = {"nu": "velocity", "trace": "momentum", "mu": "average_gradient"}
    return KerasRule(_rmsprop(rho, momentum, epsilon, centered).init, step, names)


def _keras_adagrad(initial_accumulator_value, epsilon):
    def step(params, grads, state, lr, f):
        def one(w, g, acc):
            acc = _assign_add(acc, f(g * g))
            return _assign_sub(w, f(lr.astype(w.dtype) * g) / f(jnp.sqrt(acc + jnp.asarray(epsilon, w.dtype)))), acc
        params, acc = _each(one, params, grads, state.sum_of_squares)
        return params, state._replace(sum_of_squares=acc)
    return KerasRule(optax.scale_by_rss(float(np.float32(initial_accumulator_value)), epsilon).init, step,
                     {"sum_of_squares": "accumulator"})


def _keras_adadelta(rho, epsilon):
    def step(params, grads, state, lr, f):
        def one(w, g, acc_g, acc_dx):
            d = w.dtype
            r, r1, eps = jnp.asarray(rho, d), jnp.asarray(1 - rho, d), jnp.asarray(epsilon, d)
            acc_g = f(r * acc_g) + f(r1 * f(g * g))
            delta = -(f(jnp.sqrt(acc_dx + eps) * g) / f(jnp.sqrt(acc_g + eps)))
            acc_dx = f(r * acc_dx) + f(r1 * f(delta * delta))
            return _assign_add(w, f(lr.astype(d) * delta)), acc_g, acc_dx
        params, e_g, e_x = _each(one, params, grads, state.e_g, state.e_x)
        return params, state._replace(e_g=e_g, e_x=e_x)
    return KerasRule(optax.scale_by_adadelta(rho, epsilon).init, step,
                     {"e_g": "accumulated_grad", "e_x": "accumulated_delta_var"},
                     (("accumulated_grad", "accumulated_delta_var"),))


def _keras_nadam(beta_1, beta_2, epsilon):
    def step(params, grads, state, lr, f):
        # Keras's _backend_update_step: u_product *= beta_1 * (1 - 0.5 * 0.96^t), then the variables
        u = state.u_product
        t = (state.count + 1).astype(u.dtype)
        u = f(f(u * jnp.asarray(beta_1, u.dtype)) * (1.0 - f(0.5 * _pow(0.96, t))))

        def one(w, g, m, v):
            d = w.dtype
            t, t1 = (state.count + 1).astype(d), (state.count + 2).astype(d)
            b1, b2, decay = _cast(beta_1, d), _cast(beta_2, d), _cast(0.96, d)
            u_t = f(b1 * (1.0 - f(0.5 * _pow(decay, t))))
            u_t1 = f(b1 * (1.0 - f(0.5 * _pow(decay, t1))))
            u_prod, u_prod1 = u.astype(d), f(u.astype(d) * u_t1)
            m = m + f((g - m) * (1 - b1))
            v = v + f((f(g * g) - v) * (1 - b2))
            m_hat = _div(f(u_t1 * m), 1 - u_prod1) + _div(f((1 - u_t) * g), 1 - u_prod)
            v_hat = _div(v, 1 - _pow(b2, t))
            return _assign_sub(w, f(m_hat * lr.astype(d)) / (jnp.sqrt(v_hat) + jnp.asarray(epsilon, d))), m, v
        params, mu, nu = _each(one, params, grads, state.mu, state.nu)
        return params, KerasNadamState(optax.safe_increment(state.count), u, mu, nu)
    return KerasRule(_keras_nadam_state, step, {"mu": "momentum", "nu": "velocity"}, (("momentum", "velocity"),))


def _keras_adamax(beta_1, beta_2, epsilon):
    def step(params, grads, state, lr, f):
        def one(w, g, m, u):
            d = w.dtype
            b1_power = _pow(_cast(beta_1, d), (state.count + 1).astype(d))
            m = m + f((g - m) * jnp.asarray(1 - beta_1, d))
            u = _ops.maximum(f(jnp.asarray(beta_2, d) * u), _ops.abs(g))
            return _assign_sub(w, f(lr.astype(d) * m) / f((1 - b1_power) * (u + jnp.asarray(epsilon, d)))), m, u
        params, mu, nu = _each(one, params, grads, state.mu, state.nu)
        return params, state._replace(count=optax.safe_increment(state.count), mu=mu, nu=nu)
    return KerasRule(optax.scale_by_adamax(beta_1, beta_2, epsilon).init, step, {"mu": "momentum", "nu": "norm"},
                     (("momentum", "norm"),))


def _keras_lion(beta_1, beta_2):
    def step(params, grads, state, lr, f):
        def one(w, g, m):
            d = w.dtype
            b1, b2 = _cast(beta_1, d), _cast(beta_2, d)
            w = _assign_sub(w, f(lr.astype(d) * jnp.sign(f(m * b1) + f(g * (1.0 - b1)))))
            return w, f(m * b2) + f(g * (1.0 - b2))
        params, mu = _each(one, params, grads, state.mu)
        return params, state._replace(count=optax.safe_increment(state.count), mu=mu)
    return KerasRule(optax.scale_by_lion(beta_1, beta_2).init, step, {"mu": "momentum"})


# ---------------------------------------------------------------------------
# The optimizer
# ---------------------------------------------------------------------------

_NO_GRADIENTS = ("No gradients provided for any variable: {names}. Check that the loss depends on "
                 "the variables: compute it inside `with tf.GradientTape() as tape:` and pass "
                 "`tape.gradient(loss, variables)`.")
_MISSING_GRADIENTS = ("Gradients do not exist for variables {names} when minimizing the loss. "
                      "If using `model.compile()`, did you forget to provide a `loss` argument?")
_TENSOR_LOSS_NEEDS_TAPE = ("`tape` is required when a `Tensor` loss is passed to minimize(). Pass the "
                           "tape that computed it: `optimizer.minimize(loss, var_list, tape=tape)`, or "
                           "pass the loss as a callable: `optimizer.minimize(lambda: loss_fn(), var_list)`.")
_NO_LEARNING_RATE = ("Argument `learning_rate` should be float, or an instance of LearningRateSchedule, or a "
                     "callable (that takes in the current iteration value and returns the corresponding "
                     "learning rate value). Received instead: learning_rate=None")
_ONE_CLIP = ("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
             "clipnorm={}, clipvalue={}, global_clipnorm={}.")


def _is_schedule(lr):
    return isinstance(lr, LearningRateSchedule) or (callable(lr) and not isinstance(lr, _TensorBase))


def _takes_no_args(fn):
    try:
        return not any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                       for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False


_KERAS_MODULES = {name: f"keras.src.optimizers.{name.lower()}" for name in (
    "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Lion", "Nadam", "Optimizer", "RMSprop", "SGD")}


class Optimizer(_KerasObjectRepr):
    """An optimizer made of any ``optax.GradientTransformation``.

    With ``learning_rate=None`` the transformation's updates are added to the
    variables as they are (a complete optax optimizer such as ``optax.adam(1e-3)``).
    With a learning rate, the transformation gives the descent direction and the
    variables move by ``-learning_rate * direction`` (how the Keras aliases below
    are built, so the learning rate stays settable and schedulable).

    Args:
        transform: an ``optax.GradientTransformation``.
        learning_rate: ``None``, a float, a ``schedules`` object, an optax schedule
            (a callable of the step), or a callable of no arguments.
        weight_decay: decoupled weight decay (Keras: ``var -= var * wd * lr``).
        clipnorm: clip each gradient to this L2 norm.
        clipvalue: clip each gradient element to ``[-clipvalue, clipvalue]``.
        global_clipnorm: clip all gradients together to this global L2 norm.
        name: the name, used as a prefix of the slot variables' names.

    Example:
        >>> import optax, tapejax as tf
        >>> from tapejax.keras import optimizers
        >>> w = tf.Variable(1.0)
        >>> opt = optimizers.Optax(optax.sgd(0.5))
        >>> int(opt.minimize(lambda: w ** 2, [w]))
        1
        >>> float(w)
        0.0
    """

    _keras_modules = _KERAS_MODULES

    def __init__(self, transform, learning_rate=None, *, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name=None, **kwargs):
        for k in ("ema_momentum", "ema_overwrite_frequency", "jit_compile", "is_legacy_optimizer", "mesh"):
            kwargs.pop(k, None)
        for k in ("use_ema", "loss_scale_factor", "gradient_accumulation_steps", "decay"):
            if kwargs.pop(k, None):
                raise NotImplementedError(
                    f"{type(self).__name__}({k}=...) is not supported by tapejax. Compose the optax "
                    "transformation instead, e.g. Optimizer(optax.MultiSteps(optax.adam(1e-3), 4)) for "
                    "gradient accumulation, or a schedule (learning_rate=...) for decay.")
        if "lr" in kwargs:  # the Keras 2 spelling
            learning_rate = kwargs.pop("lr")
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments {sorted(kwargs)}. "
                            "Optimizers accept learning_rate, weight_decay, clipnorm, clipvalue, "
                            "global_clipnorm and name besides their own hyperparameters.")
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(_ONE_CLIP.format(clipnorm, clipvalue, global_clipnorm))
        self._rule = transform if isinstance(transform, KerasRule) else None
        if self._rule is not None:   # the state's layout; the rule updates the variables itself
            transform = optax.GradientTransformation(self._rule.init, _updates_itself)
            if learning_rate is None and "lr" not in kwargs:
                raise ValueError(_NO_LEARNING_RATE)
        if hasattr(transform, "gradient_transformation"):  # optax.MultiSteps and friends
            transform = transform.gradient_transformation()
        if not (callable(getattr(transform, "init", None)) and callable(getattr(transform, "update", None))):
            raise TypeError(f"Optimizer(transform) needs an optax.GradientTransformation, got "
                            f"{type(transform).__name__}. For example: Optimizer(optax.adam(1e-3)).")
        # Keras 3's auto_name: the class name in snake case, made unique among the process's
        # layer and optimizer names (adam, adam_1, sgd, adam_w, rm_sprop; clear_session resets).
        self.name = name or _unique_name(_to_snake_case(type(self).__name__))
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        pre = []
        if clipnorm is not None:
            pre.append(clip_by_norm_each(clipnorm))
        if clipvalue is not None:
            pre.append(optax.clip(clipvalue))
        if global_clipnorm is not None:
            pre.append(optax.clip_by_global_norm(global_clipnorm))
        # A Keras rule decays the weights itself, before its update (as Keras 3 does).
        post = [optax.add_decayed_weights(weight_decay)] if weight_decay and self._rule is None else []
        self.transform = transform
        self._tx = optax.chain(*pre, transform, *post) if (pre or post) and self._rule is None else transform
        self._iterations = self._variable(np.int64(0), "iteration")   # Keras 3's int64
        self._lr_var = None
        self._lr_schedule = None
        self._slots = {}          # tuple of variable ids -> (state treedef, slot Variables)
        self._slot_vars = []      # every slot Variable, in creation order
        self._step_counters = set()   # ids of the slots that are an update rule's step count
        self._listing = {}            # id of a slot -> its place in ``variables``
        self._trace_count = 0
        self._set_learning_rate(learning_rate)

    # -- learning rate -----------------------------------------------------

    def _set_learning_rate(self, lr):
        if self._lr_var is not None and self._lr_schedule is None and lr is not None and not _is_schedule(lr):
            self._lr_var.assign(lr)  # a new value, same compiled update
            return
        self._lr_schedule = None
        if lr is None:
            self._lr_var = None
        elif _is_schedule(lr):
            self._lr_schedule = lr
        elif self._lr_var is not None:
            self._lr_var.assign(lr)
        else:
            self._lr_var = self._variable(to_array(lr, np.float32), "learning_rate")
        # The compiled update captures the schedule (not a float rate, which is an argument).
        # Updates the variables' and slots' buffers in place (read_for_update), as Keras does.
        self._jit_update = jax.jit(self._update, donate_argnums=(0, 2))

    @property
    def learning_rate(self):
        """The learning rate: a Variable (assign to change it) or the schedule's current value."""
        if self._lr_schedule is not None:
            return Tensor(self._current_lr(read_raw(self._iterations)))
        return self._lr_var

    @learning_rate.setter
    def learning_rate(self, lr):
        self._set_learning_rate(lr)

    lr = learning_rate

    def _current_lr(self, step):
        s = self._lr_schedule
        if _takes_no_args(s):
            return jnp.asarray(to_array(s()), jnp.float32)
        return jnp.asarray(to_array(s(step)), jnp.float32)

    @property
    def iterations(self):
        """The number of steps taken: a non-trainable int Variable."""
        return self._iterations

    @property
    def built(self):
        """Whether the state for the variables it updates exists (Keras 3: after the first
        ``apply_gradients`` or ``build``; ``summary()`` then counts its parameters).

        Example:
            >>> import tapejax as tf
            >>> opt = tf.keras.optimizers.SGD(0.1)
            >>> opt.built
            False
            >>> _ = opt.apply_gradients([(tf.constant(1.0), tf.Variable(2.0))])
            >>> opt.built, opt.iterations.dtype
            (True, tf.int64)
        """
        return bool(self._slots)

    @property
    def variables(self):
        """``[iterations, learning_rate (if a Variable), slots...]``, as Keras 3 lists them (a
        Keras optimizer's slots in Keras's creation order: Adam's momentum and velocity of each
        variable in turn, ``KerasRule.listed``): the step counters of the update rules
        (``count``, the same as ``iterations``) are state it keeps (and checkpoints) but does
        not list, as Keras has none."""
        head = [self._iterations] + ([self._lr_var] if self._lr_var is not None else [])
        slots = [v for v in self._slot_vars if id(v) not in self._step_counters]
        return head + sorted(slots, key=lambda v: self._listing[id(v)])

    weights = variables

    # -- state ---------------------------------------------------------------

    def build(self, var_list):
        """Creates the optimizer state (slot Variables) for ``var_list`` (done lazily otherwise)."""
        var_list = list(var_list)
        key = tuple(v._id for v in var_list)
        if key not in self._slots:
            # The initial state is computed from the Variables' real values (concrete, in their
            # tf.distribute layout, also while a step is traced), so a sharded kernel's slots are
            # sharded alike. The slots themselves are created in the step, as Keras 3 does.
            with init_scope():
                state = self._tx.init([read_raw(v) for v in var_list])
            leaves, treedef = jax.tree.flatten_with_path(state)
            slots = []
            for path, leaf in leaves:
                field, i = self._slot_field(path, var_list)
                base = var_list[i]._name.replace("/", "_") + "_" if i is not None else ""
                slot = self._variable(leaf, base + field)
                if slot.name == "count" and not slot.shape:
                    self._step_counters.add(id(slot))
                rank = self._rule.listing_rank(field) if self._rule is not None else (0, 0)
                self._listing[id(slot)] = (len(self._slots), rank[0], i or 0, rank[1], len(self._listing))
                slots.append(slot)
            self._slots[key] = (treedef, slots)
            self._slot_vars.extend(slots)
            _apply_deferred(self)  # checkpoint values restored before the slots existed
        return self._slots[key]

    def _trackable_children(self):
        # Checkpoint paths: slots by creation order (the same in every run of the same
        # training code), not by the variable-set keys, which are per-process ids.
        out = {"_iterations": self._iterations, "_slot_vars": self._slot_vars}
        if self._lr_var is not None:
            out["_lr_var"] = self._lr_var
        return out

    def _slot_field(self, path, var_list):
        """(the slot's name without its variable's, the index of its model variable or None)
        of the state leaf at ``path``."""
        field, var = "state", None
        for p in path:
            if isinstance(p, jax.tree_util.GetAttrKey):
                field = p.name
            elif isinstance(p, jax.tree_util.SequenceKey) and var is None and field != "state":
                var = p.idx if p.idx < len(var_list) else None
        if self._rule is not None:
            field = self._rule.names.get(field, field)
        return field, var

    def _variable(self, value, name):
        """A non-trainable ``tf.keras.Variable`` of the optimizer: path ``'<optimizer>/<name>'``."""
        return owned_variable(self.name, value, name)

    def _update(self, params, grads, state, step, lr):
        """The whole step, pure: traced once per structure, then one compiled call."""
        self._trace_count += 1
        grads = [g.astype(p.dtype) for g, p in zip(grads, params)]
        if self._rule is not None:
            return self._keras_update(params, grads, state, step, lr)
        grads = [_dense(g) for g in grads]      # an optax transformation reads dense gradients
        updates, state = self._tx.update(grads, state, params)
        if self._lr_var is not None or self._lr_schedule is not None:
            if lr is None:
                lr = self._current_lr(step)
            updates = jax.tree.map(lambda u: (-lr * u).astype(u.dtype), updates)
        return optax.apply_updates(params, updates), state, step + 1

    def _keras_update(self, params, grads, state, step, lr):
        """Keras 3's ``apply``: clip the gradients, decay the weights (``w -= w * wd * lr``), then
        the rule's update, each product rounded before an add reads it (``_fence_of``)."""
        if lr is None:
            lr = self._current_lr(step)
        f = _fence_of(step)
        params, grads = [f(p) for p in params], [f(g) for g in grads]   # computed in a tf.function
        state = jax.tree.map(f, state)
        grads = self._keras_clip(grads, f)
        if self.weight_decay:
            params = [w - f(f(w * jnp.asarray(self.weight_decay, w.dtype)) * lr.astype(w.dtype)) for w in params]
        params, state = self._rule.step(params, grads, state, lr, f)
        return params, state, step + 1

    def _keras_clip(self, grads, f):
        """Keras 3's gradient clipping (TF backend), products fenced as in the rules."""
        if self.clipnorm:       # tf.clip_by_norm of each gradient
            def clip(g, total=jnp.sum):
                l2sum = total(f(g * g))
                l2norm = jnp.where(l2sum > 0, jnp.sqrt(jnp.where(l2sum > 0, l2sum, 1)), l2sum)
                return _div(f(g * jnp.asarray(self.clipnorm, g.dtype)), jnp.maximum(l2norm, self.clipnorm))
            # of IndexedSlices: of their values (a repeated index's slices each), with the norm
            # summed in TF's (Eigen's) order
            return [g._with(clip(g.values, eigen_reduce.tf_sum)) if isinstance(g, _Slices) else clip(g)
                    for g in grads]
        if self.global_clipnorm:   # ops.sum and `g * scale` make IndexedSlices dense
            norm = jnp.sqrt(jnp.sum(jnp.stack([jnp.sum(_dense(f(g * g))) for g in grads])))
            c = self.global_clipnorm
            scale = f(jnp.asarray(c, norm.dtype) * jnp.minimum(1.0 / norm, 1.0 / c)) + (norm - norm)
            return [f(_dense(g) * scale.astype(g.dtype)) for g in grads]
        if self.clipvalue:         # tf.clip_by_value of IndexedSlices clips their values
            return [_unary(lambda x: jnp.clip(x, -self.clipvalue, self.clipvalue))(g) for g in grads]
        return grads

    # -- applying ------------------------------------------------------------

    def apply_gradients(self, grads_and_vars, name=None, skip_gradients_aggregation=False, **kwargs):
        """Applies ``(gradient, variable)`` pairs; variables with a ``None`` gradient are skipped.

        Returns:
            ``iterations`` (incremented).

        Raises:
            ValueError: if every gradient is ``None``.
        """
        pairs = list(grads_and_vars)
        grads, var_list, missing = [], [], []
        for g, v in pairs:
            if g is None:
                missing.append(v)
            else:
                grads.append(g)
                var_list.append(v)
        if not var_list:
            raise ValueError(_NO_GRADIENTS.format(names=[v.name for _, v in pairs]))
        if missing:
            warnings.warn(_MISSING_GRADIENTS.format(names=[v.name for v in missing]), stacklevel=2)
        self._apply(grads, var_list)
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        """Keras 3 spelling: ``apply(grads, variables)``."""
        return self.apply_gradients(zip(grads, trainable_variables))

    def _apply(self, grads, var_list):
        treedef, slots = self.build(var_list)
        values = read_for_update(list(var_list) + list(slots))
        if values is None:   # traced (tf.function): the function's values, donated by the function
            values = [read_raw(v) for v in list(var_list) + list(slots)]
        params, slot_values = values[:len(var_list)], values[len(var_list):]
        del values
        # A tf.IndexedSlices (embedding gradients) stays sparse (_Slices): a Keras rule computes
        # from it what Keras 3 on TensorFlow does (a repeated index's slices squared one by one,
        # scattered one after another...); its own compiled variant of the update.
        grads = [_Slices(to_array(g.values), to_array(g.indices), p.shape) if isinstance(g, IndexedSlices)
                 else to_array(g) for g, p in zip(grads, params)]
        for g, p, v in zip(grads, params, var_list):
            if isinstance(g, _Slices):   # slices of rows of the variable's shape
                if (tuple(g.values.shape[1:]) != tuple(p.shape[1:]) or g.indices.ndim != 1
                        or g.indices.shape[0] != g.values.shape[0]):
                    raise ValueError(f"The IndexedSlices gradient for variable '{v.name}' has values of shape "
                                     f"{tuple(g.values.shape)} and indices of shape {tuple(g.indices.shape)}; "
                                     f"the variable has shape {tuple(p.shape)}: the values must be "
                                     f"[N, {', '.join(map(str, p.shape[1:]))}] with N indices.")
            elif g.shape != p.shape:
                raise ValueError(f"The gradient for variable '{v.name}' has shape {tuple(g.shape)} but the "
                                 f"variable has shape {tuple(p.shape)}. Pass gradients in the same order "
                                 "as the variables: zip(tape.gradient(loss, variables), variables).")
        state = jax.tree.unflatten(treedef, slot_values)
        del slot_values
        step = read_raw(self._iterations)
        if self._lr_var is not None:
            lr = read_raw(self._lr_var)
        elif self._lr_schedule is not None and _takes_no_args(self._lr_schedule):
            lr = self._current_lr(step)
        else:
            lr = None
        new_params, new_state, new_step = self._jit_update(params, grads, state, step, lr)
        for v, p in zip(var_list, new_params):
            v._set(p)
            if getattr(v, "constraint", None) is not None:  # Keras projects after the update
                v._set(to_array(v.constraint(v), p.dtype))
        for s, leaf in zip(slots, jax.tree.leaves(new_state)):
            s._set(leaf)
        self._iterations._set(new_step)

    def minimize(self, loss, var_list, tape=None):
        """Computes the gradients of ``loss`` and applies them.

        Args:
            loss: a scalar Tensor (then ``tape`` is required) or a callable returning one.
            var_list: the variables, or a callable returning them.
            tape: the ``GradientTape`` that recorded a Tensor ``loss``.

        Returns:
            ``iterations``.
        """
        if not callable(loss) and tape is None:
            raise ValueError(_TENSOR_LOSS_NEEDS_TAPE)
        if callable(loss):
            with GradientTape() as tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list))

    def get_config(self):
        cfg = {"name": self.name, "weight_decay": self.weight_decay, "clipnorm": self.clipnorm,
               "clipvalue": self.clipvalue, "global_clipnorm": self.global_clipnorm}
        if self._lr_var is not None:
            cfg["learning_rate"] = float(np.asarray(self._lr_var._value))
        cfg.update(getattr(self, "_config", {}))
        return cfg

    @classmethod
    def from_config(cls, config):
        return cls(**config)



def Optax(transform, learning_rate=None, **kwargs):
    """Any ``optax.GradientTransformation`` as a Keras optimizer (``Optimizer(transform)``).

    Example:
        >>> import optax
        >>> from tapejax.keras import optimizers
        >>> optimizers.Optax(optax.adamw(1e-3))  # doctest: +ELLIPSIS
        <keras.src.optimizers.optimizer.Optimizer object at 0x...>
    """
    return Optimizer(transform, learning_rate, **kwargs)


def _alias(name, keras_name, direction, defaults, doc):
    """A Keras optimizer class: its hyperparameters and the optax direction they make."""
    params = list(defaults)

    def __init__(self, *args, **kwargs):
        if len(args) > len(params):
            raise TypeError(f"{name}() takes at most {len(params)} positional arguments ({', '.join(params)}).")
        cfg = dict(defaults)
        cfg.update(zip(params, args))
        for k in list(kwargs):
            if k in cfg:
                cfg[k] = kwargs.pop(k)
        lr = cfg.pop("learning_rate")
        if "lr" in kwargs:
            lr = kwargs.pop("lr")
        self._config = dict(cfg, learning_rate=lr)
        for k, v in cfg.items():
            setattr(self, k, v)
        if "weight_decay" in cfg:
            kwargs["weight_decay"] = cfg.pop("weight_decay")
        Optimizer.__init__(self, direction(**cfg), lr, **kwargs)

    sig = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
    example = (f"\n\n    Example:\n        >>> import tapejax as tf\n        >>> w = tf.Variable([1.0])\n"
               f"        >>> opt = tf.keras.optimizers.{name}()\n"
               f"        >>> _ = opt.apply_gradients([(tf.constant([0.5]), w)])\n"
               f"        >>> bool(w.numpy()[0] < 1.0), int(opt.iterations)\n        (True, 1)\n")
    return type(name, (Optimizer,), {"__init__": __init__,
                                     "__doc__": f"{doc}\n\n    ``{name}({sig})``, Keras's defaults.{example}"})


def _sgd(momentum, nesterov):
    if not 0 <= momentum <= 1:
        raise ValueError(f"`momentum` must be a float between [0, 1]. Received: momentum={momentum}.")
    return optax.trace(decay=momentum, nesterov=nesterov) if momentum else optax.identity()


def _rmsprop(rho, momentum, epsilon, centered):
    scale = optax.scale_by_stddev if centered else optax.scale_by_rms
    tx = scale(decay=rho, eps=epsilon, eps_in_sqrt=True)
    return optax.chain(tx, optax.trace(decay=momentum)) if momentum else tx


_A = _alias  # one line per Keras optimizer: name, Keras name, Keras update rule, Keras defaults
SGD = _A("SGD", "SGD", _keras_sgd,
         dict(learning_rate=0.01, momentum=0.0, nesterov=False), "Gradient descent, with (Nesterov) momentum.")
Adam = _A("Adam", "adam", _keras_adam,
          dict(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False), "Adam (Keras's epsilon placement).")
AdamW = _A("AdamW", "adamw", _keras_adam,
           dict(learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False),
           "Adam with decoupled weight decay.")
RMSprop = _A("RMSprop", "rmsprop", _keras_rmsprop,
             dict(learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False), "RMSprop (eps inside the sqrt, as Keras).")
Adagrad = _A("Adagrad", "adagrad", _keras_adagrad,
             dict(learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7), "Adagrad.")
Adadelta = _A("Adadelta", "adadelta", _keras_adadelta,
              dict(learning_rate=0.001, rho=0.95, epsilon=1e-7), "Adadelta.")
Nadam = _A("Nadam", "nadam", _keras_nadam,
           dict(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7), "Nadam (Keras's momentum schedule).")
Adamax = _A("Adamax", "adamax", _keras_adamax,
            dict(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7), "Adamax.")
Lion = _A("Lion", "lion", _keras_lion,
          dict(learning_rate=0.001, beta_1=0.9, beta_2=0.99), "Lion.")
del _A



class legacy:
    """``tf.keras.optimizers.legacy``: the same optimizers (the update rules are Keras's)."""

    SGD, Adam, RMSprop, Adagrad, Adadelta, Nadam, Adamax, Optimizer = (
        SGD, Adam, RMSprop, Adagrad, Adadelta, Nadam, Adamax, Optimizer)


experimental = legacy

_BY_NAME = {c.__name__.lower(): c for c in (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Nadam, Adamax, Lion)}


def get(identifier):
    """An optimizer from a name (``'adam'``), a config dict, an optax transformation or an optimizer.

    Example:
        >>> from tapejax.keras import optimizers
        >>> optimizers.get("adam").epsilon
        1e-07
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, optax.GradientTransformation) or hasattr(identifier, "gradient_transformation"):
        return Optimizer(identifier)
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(str(identifier.get("class_name", "")).lower())
        if cls is not None:
            return cls(**identifier.get("config", {}))
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}. Use one of "
                     f"{sorted(_BY_NAME)}, an optimizer object such as tf.keras.optimizers.Adam(1e-3), "
                     "or an optax transformation.")


def serialize(optimizer):
    """``{'class_name': ..., 'config': ...}`` of a optimizer object (the inverse of :func:`deserialize`)."""
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config):
    """A optimizer from the dict :func:`serialize` made (same as :func:`get`)."""
    return get(config)


__all__ = ["Optimizer", "Optax", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Nadam",
           "Adamax", "Lion", "schedules", "get", "serialize", "deserialize", "LearningRateSchedule"]
