"""The extender API: turn any JAX function into a tape op.

Example:
    >>> import jax.numpy as jnp
    >>> import tapejax as tf
    >>> from tapejax.extend import defop
    >>> cube = defop(lambda x: x ** 3, name="cube")
    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as tape:
    ...     y = cube(x)
    >>> print(tape.gradient(y, x).numpy())
    12.0
"""
from ._core.engine import Op, freeze  # freeze: static arguments made hashable, as ops receive them


def defop(fn=None, *, vjp=None, name=None, static=(), jit=True):
    """Makes a tape op of a pure JAX function.

    Args:
        fn: ``fn(*arrays, **static) -> array or tuple of arrays``, pure JAX.
        vjp: optional hand-written rule ``vjp(ans, *arrays, **static) -> (g -> grads)``
            returning one gradient per positional input. ``ans`` is the output the
            forward call computed (kept on the tape for single-output ops, so the
            backward pass does not run ``fn`` again). Without a rule, JAX derives
            the VJP. The engine unbroadcasts and casts the gradients.
        name: the op's name (defaults to ``fn.__name__``).
        static: names of parameters that are static configuration (axis, shape...).
            They may also be passed positionally after the tensor arguments.
        jit: compile the forward with ``jax.jit`` (one dispatch per eager call).

    Returns:
        An :class:`Op`: call it with Tensors, Variables, arrays or numbers; it
        returns Tensors and records itself on every tape watching an input.
        Usable as a decorator: ``@defop`` or ``@defop(vjp=..., static=("axis",))``.

    Example:
        >>> import jax.numpy as jnp, tapejax as tf
        >>> from tapejax.extend import defop
        >>> softsign = defop(lambda x: x / (1 + jnp.abs(x)), name="softsign")
        >>> print(softsign(tf.constant(1.0)).numpy())
        0.5
    """
    if fn is None:
        return lambda f: Op(f, vjp=vjp, name=name, static=static, jit=jit)
    return Op(fn, vjp=vjp, name=name, static=static, jit=jit)


__all__ = ["defop", "Op", "freeze"]
