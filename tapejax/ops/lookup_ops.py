"""Table lookups shared by ``tf.lookup`` and Keras's ``StringLookup``/``IntegerLookup``.

Integer keys with numeric values known when the op is made (a static table) are a JAX op:
``searchsorted`` over the sorted keys, so the lookup compiles inside ``tf.function`` and
``fit``. String keys, string values and tables that change (``MutableHashTable``) are looked
up on the host in NumPy, where string tensors live (``tapejax._core.host`` records the call
into a compiled function).
"""
import jax.numpy as jnp
import numpy as np

from ..extend import defop


def sorted_search(x, keys, values, default):
    """jnp: each element of ``x`` replaced by ``values[i]`` where ``keys[i] == x`` (``keys``
    sorted ints, ``values`` an array of ``len(keys)`` rows), else ``default``."""
    k = jnp.asarray(np.asarray(keys, np.int64))
    v = jnp.asarray(values)
    if not len(keys):
        return jnp.broadcast_to(jnp.asarray(default, v.dtype), x.shape + v.shape[1:])
    xi = x.astype(jnp.int64)
    pos = jnp.clip(jnp.searchsorted(k, xi), 0, len(keys) - 1)
    hit = (k[pos] == xi).reshape(x.shape + (1,) * (v.ndim - 1))
    return jnp.where(hit, v[pos], jnp.asarray(default, v.dtype))


def _static_lookup_fn(x, *, keys, values, dtype, default):
    return sorted_search(x, keys, np.asarray(values, dtype), np.asarray(default, dtype))


static_lookup = defop(_static_lookup_fn, name="lookup_table_find",
                      static=("keys", "values", "dtype", "default"))


def dict_lookup(table, default, flat_keys):
    """NumPy: ``[table.get(k, default) for k in flat_keys]`` as a list (the host lookup)."""
    get = table.get
    return [get(k, default) for k in flat_keys]
