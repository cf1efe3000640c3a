"""The ops the core records itself: a Variable's read, the pieces of an IndexedSlices
gradient, the rows of a Jacobian. Each is defined once, here; the op table (``tapejax.ops``)
re-exports them as its rows."""
import jax.numpy as jnp

from .engine import Op, packed, shares_dtype, stack

identity = Op(lambda x: x, name="identity")
negative = Op(jnp.negative, name="negative")
reshape = Op(lambda x, shape: jnp.reshape(x, shape), name="reshape", static=("shape",))
transpose = Op(lambda x, perm=None: jnp.transpose(x, perm), name="transpose", static=("perm",))
concat = shares_dtype(Op(lambda *xs, axis: jnp.concatenate(xs, axis=axis), name="concat", static=("axis",)))

__all__ = ["identity", "negative", "reshape", "transpose", "concat", "stack", "packed"]
