"""FlaxLayer: any flax module (linen or nnx) as a Keras layer whose call is one tape op."""
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from ..._core.engine import read_raw
from ..._core.tensor import TensorShape
from ...extend import defop
from ... import random as _random
from .. import initializers as _initializers
from ._base import Layer, _leaves


def _path_name(path):
    parts = [str(getattr(k, "key", getattr(k, "name", getattr(k, "idx", k)))) for k in path]
    if len(parts) > 1 and parts[-1] == "value":  # nnx.Variable's own field, not part of the name
        parts = parts[:-1]
    return "/".join(parts)


def _is_key(x):
    return hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


class FlaxLayer(Layer):
    """Wraps a flax module as a layer: its parameters become tapejax Variables.

    * ``flax.linen`` modules are initialised on the first call (``module.init``
      with keys from the layer's seed generator), unless ``variables`` are given;
      the ``params`` collection becomes trainable Variables, other collections
      (``batch_stats``) non-trainable ones, updated after each call (they are
      ``mutable``). As in Keras 3, a method with a ``training`` parameter is
      passed the layer call's ``training`` (``True`` in ``fit``, ``False`` in
      ``evaluate``/``predict`` and by default). Each call gets a fresh
      ``'dropout'`` rng stream from the seed generator.
    * ``flax.nnx`` modules are split (``nnx.split``): ``nnx.Param`` leaves become
      trainable Variables, other state non-trainable ones, written back after
      each call.

    The whole module call is one tape op, so the tape holds one node for it and
    its VJP is one compiled call. Extra keyword arguments of the layer call are
    passed to the module as static (hashable) arguments.

    Args:
        module: a ``flax.linen.Module`` or ``flax.nnx.Module``.
        method: for linen, the method to apply (default ``__call__``).
        variables: for linen, initial variables as ``module.init`` returns them
            (``{'params': ..., 'batch_stats': ...}``); default: ``module.init``.
        seed: seeds the layer's generator of init and dropout keys; default
            ``tf.random``'s global generator.

    Example:
        >>> import flax.linen as nn, tapejax as tf
        >>> layer = tf.keras.layers.FlaxLayer(nn.Dense(3), name='flax_dense')
        >>> x = tf.ones([2, 4])
        >>> with tf.GradientTape() as tape:
        ...     y = tf.reduce_sum(layer(x))
        >>> [v.path for v in layer.trainable_variables]
        ['flax_dense/params/bias', 'flax_dense/params/kernel']
        >>> [tuple(g.shape) for g in tape.gradient(y, layer.trainable_variables)]
        [(3,), (4, 3)]
    """

    def __init__(self, module, method=None, variables=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        from flax import nnx
        self._k_module = module
        self._k_method = method
        self._k_variables = variables
        self._k_seed_generator = None if seed is None else _random.Generator.from_seed(seed)
        fn = getattr(module, method) if isinstance(method, str) else (method or getattr(module, "__call__"))
        try:
            self._k_takes_training = "training" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            self._k_takes_training = False
        self._k_is_nnx = isinstance(module, nnx.Module)
        self._k_op = None
        self._k_in_dtypes = None
        if self._k_is_nnx:
            self._k_setup_nnx()

    # -- nnx --------------------------------------------------------------

    def _k_setup_nnx(self):
        from flax import nnx
        graphdef, params, rest = nnx.split(self._k_module, nnx.Param, ...)
        p_leaves, p_tree = jax.tree_util.tree_flatten_with_path(params)
        r_leaves, r_tree = jax.tree_util.tree_flatten_with_path(rest)
        self._k_make_vars([(_path_name(p), v) for p, v in p_leaves],
                          [(_path_name(p), v) for p, v in r_leaves])
        keys = tuple(_is_key(v) for _, v in r_leaves)
        n_p = len(p_leaves)

        def fn(*arrays, n_in, static):
            xs, ps, rs = arrays[:n_in], arrays[n_in:n_in + n_p], arrays[n_in + n_p:]
            rs = [jax.random.wrap_key_data(r) if k else r for r, k in zip(rs, keys)]
            model = nnx.merge(graphdef, jax.tree_util.tree_unflatten(p_tree, ps),
                              jax.tree_util.tree_unflatten(r_tree, rs))
            y = model(*xs, **dict(static))
            _, _, new_rest = nnx.split(model, nnx.Param, ...)
            new = [jax.random.key_data(r) if k else r
                   for r, k in zip(jax.tree_util.tree_leaves(new_rest), keys)]
            return (y, *new)

        self._k_op = defop(fn, name=f"flax_{type(self._k_module).__name__}", static=("n_in", "static"))
        self.built = True

    # -- linen ------------------------------------------------------------

    def build(self, input_shape):
        if self._k_is_nnx:
            self.built = True
            return
        module = self._k_module
        shapes = input_shape if isinstance(input_shape, list) else [input_shape]
        dtypes = self._k_in_dtypes or [jnp.float32] * len(shapes)
        dummies = [jnp.zeros(tuple(1 if d is None else d for d in TensorShape(s)), dt)
                   for s, dt in zip(shapes, dtypes)]
        if self._k_variables is not None:
            variables = dict(self._k_variables)
        else:
            k1, k2 = self._k_key(), self._k_key()
            training = {"training": True} if self._k_takes_training else {}   # Keras 3 inits in training mode
            with jax.ensure_compile_time_eval():
                variables = module.init({"params": k1, "dropout": k2}, *dummies, method=self._k_method,
                                        **training)
            variables = dict(variables)
        params = {"params": variables.pop("params", {})}
        p_leaves, p_tree = jax.tree_util.tree_flatten_with_path(params)
        r_leaves, r_tree = jax.tree_util.tree_flatten_with_path(variables)
        self._k_make_vars([(_path_name(p), v) for p, v in p_leaves],
                          [(_path_name(p), v) for p, v in r_leaves])
        n_p = len(p_leaves)
        mutable = tuple(sorted(variables))
        method = self._k_method

        def fn(key_data, *arrays, n_in, static):
            xs, ps, rs = arrays[:n_in], arrays[n_in:n_in + n_p], arrays[n_in + n_p:]
            v = {**jax.tree_util.tree_unflatten(p_tree, ps), **jax.tree_util.tree_unflatten(r_tree, rs)}
            # A fresh "dropout" stream per call; modules that draw no random numbers ignore it.
            rngs = {"dropout": jax.random.wrap_key_data(key_data)}
            if not mutable:
                return (module.apply(v, *xs, method=method, rngs=rngs, **dict(static)),)
            y, updated = module.apply(v, *xs, method=method, rngs=rngs, mutable=list(mutable), **dict(static))
            updated = {**jax.tree_util.tree_unflatten(r_tree, rs), **dict(updated)}
            return (y, *jax.tree_util.tree_leaves(updated))

        self._k_op = defop(fn, name=f"flax_{type(module).__name__}", static=("n_in", "static"))
        self.built = True

    def _k_make_vars(self, params, rest):
        with self._k_scope():
            self._k_params = [self.add_weight(name=name, shape=np.shape(v), dtype=v.dtype,
                                              initializer=_initializers.Constant(np.asarray(v)))
                              for name, v in params]
            self._k_state = [self.add_weight(name=name, shape=np.shape(jax.random.key_data(v) if _is_key(v) else v),
                                             dtype=(jax.random.key_data(v) if _is_key(v) else v).dtype,
                                             initializer=_initializers.Constant(
                                                 np.asarray(jax.random.key_data(v) if _is_key(v) else v)),
                                             trainable=False)
                             for name, v in rest]

    def __call__(self, *args, **kwargs):
        if not self.built and args:
            self._k_in_dtypes = [getattr(a, "dtype", jnp.float32) for a in _leaves(args[0])]
            self._k_in_dtypes = [np.dtype(getattr(d, "_np", d)) if not isinstance(d, np.dtype) else d
                                 for d in self._k_in_dtypes]
        return super().__call__(*args, **kwargs)

    def _k_key(self):
        gen = self._k_seed_generator or _random.get_global_generator()
        return gen.make_key()

    def call(self, inputs, training=None, **kwargs):
        # A method with a `training` parameter gets the layer call's; modules that spell the mode
        # their own way (deterministic=, train=, use_running_average=) get those as keyword
        # arguments of the layer call.
        xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if self._k_takes_training and not self._k_is_nnx:
            kwargs.setdefault("training", bool(training))
        static = tuple(sorted(kwargs.items()))
        extra = () if self._k_is_nnx else (jax.random.key_data(self._k_key()),)
        outs = self._k_op(*extra, *xs, *self._k_params, *self._k_state, n_in=len(xs), static=static)
        y, new_state = outs[0], outs[1:]
        for var, val in zip(self._k_state, new_state):
            if val is not None:
                var.assign(val._value)
        return y

    @property
    def module(self):
        return self._k_module
