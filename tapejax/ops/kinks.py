"""JAX functions with TensorFlow's derivative where the function has a kink.

JAX and TensorFlow agree on a function's derivative wherever it exists; at a kink each picks a
value, and they pick differently: JAX's ``abs'(0)`` is 1 where TensorFlow's is ``sign(0) = 0``,
and JAX splits the gradient of a tie in ``maximum``/``minimum`` (so a value on a bound of
``clip`` gets half of it) where TensorFlow sends all of it to the first argument. A training
step meets these points more often than one would think: an L1 loss whose prediction equals
its label (a zero bias and a zero input), a hinge loss at its margin, a value clipped at 0.

Ops and Keras code that compute these functions in JAX use the ones here, so their gradients
are TensorFlow's (``math_grad.py``: ``_AbsGrad``, ``_MaximumMinimumGrad``), also when JAX
differentiates a whole layer or loss. Complex and integer inputs keep JAX's functions.
"""
import jax
import jax.numpy as jnp


def _floating(*xs):
    return all(jnp.issubdtype(jnp.result_type(x), jnp.floating) for x in xs)


@jax.custom_jvp
def _abs(x):
    return jnp.abs(x)


@_abs.defjvp
def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.abs(x), jnp.sign(x) * t


def abs(x):  # noqa: A001
    """``jnp.abs`` whose derivative is ``sign(x)``: 0 at 0 (TensorFlow's; JAX's is 1)."""
    return _abs(x) if _floating(x) else jnp.abs(x)


def _tie_jvp(fn, first):
    def jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = fn(x, y)
        return out, jnp.where(first(x, y), tx, ty).astype(out.dtype)
    return jvp


_maximum = jax.custom_jvp(jnp.maximum)
_maximum.defjvp(_tie_jvp(jnp.maximum, jnp.greater_equal))
_minimum = jax.custom_jvp(jnp.minimum)
_minimum.defjvp(_tie_jvp(jnp.minimum, jnp.less_equal))


def maximum(x, y):
    """``jnp.maximum`` whose gradient at a tie goes to ``x`` (TensorFlow's; JAX halves it)."""
    if not _floating(x, y):
        return jnp.maximum(x, y)
    x, y = jnp.asarray(x), jnp.asarray(y)
    dt = jnp.result_type(x, y)
    return _maximum(x.astype(dt), y.astype(dt))


def minimum(x, y):
    """``jnp.minimum`` whose gradient at a tie goes to ``x`` (TensorFlow's; JAX halves it)."""
    if not _floating(x, y):
        return jnp.minimum(x, y)
    x, y = jnp.asarray(x), jnp.asarray(y)
    dt = jnp.result_type(x, y)
    return _minimum(x.astype(dt), y.astype(dt))


def clip(t, clip_value_min, clip_value_max):
    """``maximum(minimum(t, hi), lo)``, TensorFlow's clip: a value on a bound keeps its gradient.

    (JAX's ``jnp.clip`` passes half of it there.) Its parameters are TF's ``clip_by_value``'s."""
    return maximum(minimum(t, clip_value_max), clip_value_min)
