"""custom_gradient, recompute_grad: user-defined and rematerialised backward passes."""
import functools
import inspect

import jax
import jax.numpy as jnp

from . import engine as _engine, state as _state
from .engine import state, record_custom, _read_variable
from .state import pause_recording
from .tensor import Tensor, _TensorBase, to_array
from .tape import flatten


def _wants_variables(grad_fn):
    try:
        spec = inspect.getfullargspec(grad_fn)
    except TypeError:
        return False
    return "variables" in spec.args or "variables" in spec.kwonlyargs or spec.varkw is not None


def custom_gradient(f=None):
    """Decorator giving a function its own gradient, as ``tf.custom_gradient``.

    ``f(*x)`` returns ``(y, grad_fn)``; ``grad_fn(*dy)`` returns one gradient per
    positional input of ``f``. If ``f`` reads Variables, ``grad_fn`` must take a
    ``variables=`` keyword and return ``(input_grads, variable_grads)``.
    Inside ``f`` nothing is recorded; the tape records one op whose backward
    pass is ``grad_fn``, run on Tensors, so outer tapes differentiate it too.

    Raises:
        TypeError: ``f`` reads Variables but ``grad_fn`` takes no ``variables``.
        ValueError: ``grad_fn`` returns the wrong number of gradients.

    Example:
        >>> import tapejax as tf
        >>> @tf.custom_gradient
        ... def clip_gradients(y):
        ...     def backward(dy):
        ...         return tf.clip_by_norm(dy, 0.5)
        ...     return y, backward
        >>> v = tf.Variable(2.0)
        >>> with tf.GradientTape() as t:
        ...     output = clip_gradients(v * v)
        >>> print(t.gradient(output, v).numpy())
        2.0
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        # The forward pass runs in a state scope: the Variables it touches are its captured ones.
        with _state.Scope() as scope, pause_recording():
            result = f(*args, **kwargs)
        scope.commit()
        if not (isinstance(result, (tuple, list)) and len(result) == 2 and callable(result[1])):
            raise TypeError("A @tf.custom_gradient function must return a pair (y, grad_fn), where "
                            "grad_fn(*dy) returns the gradients of the inputs.")
        y, grad_fn = result
        leaves, tree = flatten(y)
        outs = [Tensor(to_array(t)) for t in leaves]
        arg_leaves, _ = flatten(list(args))
        # As TF's VariableWatcher: the trainable Variables f read, other than its inputs.
        variables = [v for v in scope.captured.values() if v.trainable and not any(v is a for a in arg_leaves)]
        if variables and not _wants_variables(grad_fn):
            raise TypeError("@tf.custom_gradient grad_fn must accept keyword argument 'variables', since "
                            f"function uses variables: {[v.name for v in variables]}. Write "
                            "`def grad_fn(*dy, variables=None): return input_grads, variable_grads`.")
        if state.recorders:
            ins = [(_read_variable(a) if (isinstance(a, _TensorBase) and type(a) is not Tensor) else a)
                   for a in arg_leaves] + [_read_variable(v) for v in variables]
            record_custom(ins, outs, _backward(grad_fn, outs, variables, len(arg_leaves)))
        return jax.tree_util.tree_unflatten(tree, outs)

    return _Method(decorated, f)


def _backward(grad_fn, outs, variables, n_args):
    """The recorded node's backward: ``grad_fn`` on Tensors, its gradients checked as TF does."""
    def backward(cts, gmask):
        dys = [Tensor(jnp.zeros_like(o._value)) if c is None else c for c, o in zip(cts, outs)]
        if variables:
            in_g, var_g = grad_fn(*dys, variables=variables)
            var_g = list(var_g)
            if len(var_g) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient "
                                 f"grad_fn: got {len(var_g)} for {len(variables)} variables.")
        else:
            in_g, var_g = grad_fn(*dys), []
        flat = list(in_g) if isinstance(in_g, (list, tuple)) else [in_g]
        if len(flat) != n_args:
            raise ValueError(f"custom_gradient function expected to return {n_args} gradients, "
                             f"but returned {len(flat)} instead.")
        grads = [None if g is None else (g if isinstance(g, _TensorBase) else Tensor(to_array(g)))
                 for g in flat + var_g]
        return [g for g, m in zip(grads, gmask) if m]

    return backward


class _Method:
    """A custom-gradient function that also works as a method: ``self`` is bound, not an input."""

    def __init__(self, decorated, f):
        self._decorated = decorated
        self._f = f
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        return self._decorated(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return custom_gradient(functools.partial(self._f, obj))


def recompute_grad(f):
    """Recomputes the forward pass of ``f`` during the backward pass to save memory.

    ``f`` becomes one tape op whose function is ``jax.checkpoint`` of ``f``
    (Variables it reads become inputs), so its intermediates are not kept.

    Example:
        >>> import tapejax as tf
        >>> w = tf.Variable(3.0)
        >>> g = tf.recompute_grad(lambda x: tf.sin(x * w))
        >>> with tf.GradientTape() as t:
        ...     y = g(tf.constant(1.0))
        >>> round(float(t.gradient(y, w)), 4)  # cos(3)
        -0.99
    """
    ops = {}

    @functools.wraps(f)
    def wrapped(*args):
        arg_leaves, tree = flatten(list(args))
        avals = tuple((tuple(a.shape), str(a.dtype)) if isinstance(a, _TensorBase) else repr(a) for a in arg_leaves)
        entry = ops.get((tree, avals))
        if entry is None:
            entry = ops[(tree, avals)] = _remat_op(f, tree, arg_leaves)
        op, variables = entry
        return op(*arg_leaves, *variables)

    return wrapped


def _remat_op(f, tree, example_leaves):
    n = len(example_leaves)

    def run(scope, flat):
        with scope, pause_recording():
            out = f(*jax.tree_util.tree_unflatten(tree, [Tensor(x) for x in flat[:n]]))
            return jax.tree_util.tree_map(to_array, out, is_leaf=lambda x: isinstance(x, _TensorBase))

    # A first abstract run finds the Variables ``f`` reads: they become inputs of the op.
    discovery = _state.Scope()
    jax.eval_shape(lambda *leaves: run(discovery, leaves), *[to_array(a) for a in example_leaves])
    variables = list(discovery.captured.values())

    def pure(*flat):
        return run(_state.Scope(zip(variables, flat[n:])), flat)

    return _engine.Op(jax.checkpoint(pure), name="recompute_grad"), variables
