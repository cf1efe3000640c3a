"""tf.cond, tf.switch_case, tf.while_loop: Python control flow eagerly, jax.lax when traced.

With a concrete predicate (eager code) the chosen branch simply runs in Python,
so tapes record it like any other code. With a traced predicate (inside a
``tapejax.function``) the branches become ``jax.lax.switch`` /
``jax.lax.while_loop``. Each branch and loop body runs in its own state scope
(``_state.Scope``), so what it assigns is known without changing any Variable;
Variables assigned in a branch or loop body are carried through it. While a tape is recording inside the function, a traced ``cond``
computes every branch and selects the result with recorded ``tf.where`` ops,
so the tape differentiates it (jax.lax control flow would hide the ops from it).
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._core import state as _state
from .._core.engine import state
from .._core.tensor import Tensor, _TensorBase, to_array, is_tracer
from ..ops import identity
from .._core.variable import Variable
from ..ops import logical_and as _logical_and, where
from ..ops.tensor_array import infer_loop_shapes


def _is_leaf(x):
    return isinstance(x, _TensorBase) or x is None


def _flatten(x):
    return jax.tree_util.tree_flatten(x, is_leaf=_is_leaf)


def _snapshot(out):
    """A branch's result with Variables read now (they are rewound after the branch)."""
    return jax.tree_util.tree_map(lambda x: identity(x) if isinstance(x, Variable) else x, out,
                                  is_leaf=_is_leaf)


def _concrete(x):
    """The value of ``x`` as numpy, or None while it is traced."""
    v = x._value if isinstance(x, _TensorBase) else x
    if is_tracer(v):
        return None
    return np.asarray(v)


def _arrays(leaves):
    return [x._value if isinstance(x, _TensorBase) else jnp.asarray(to_array(x)) for x in leaves]


_STRUCTURE = ("{what}: the branches must return the same structure of tensors, with the same dtypes "
              "and shapes; got {a} and {b}. Make every branch return the same kind of result "
              "(for example tf.constant(0.0) instead of None).")


# ---------------------------------------------------------------------------
# cond / switch_case
# ---------------------------------------------------------------------------

def cond(pred, true_fn=None, false_fn=None, name=None):
    """Runs ``true_fn()`` if ``pred`` else ``false_fn()``, also on traced values (``tf.cond``).

    Eagerly only the chosen branch runs. Inside a ``tf.function`` it becomes
    ``jax.lax.cond``; both branches must return the same structure of tensors.

    Args:
        pred: a scalar boolean tensor (or Python bool).
        true_fn, false_fn: callables taking no arguments.

    Returns:
        The chosen branch's result.

    Example:
        >>> import tapejax as tf
        >>> @tf.function
        ... def relu(x):
        ...     return tf.cond(x > 0, lambda: x, lambda: tf.zeros_like(x))
        >>> print(relu(tf.constant(-2.0)).numpy(), relu(tf.constant(3.0)).numpy())
        0.0 3.0
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("tf.cond needs callables: tf.cond(pred, lambda: a, lambda: b).")
    p = _concrete(pred)
    if p is not None:
        return true_fn() if bool(p) else false_fn()
    index = jnp.where(to_array(pred), 0, 1).astype(jnp.int32)
    return _branches(index, [true_fn, false_fn], "tf.cond")


def switch_case(branch_index, branch_fns, default=None, name=None):
    """Runs ``branch_fns[branch_index]()`` (``tf.switch_case``); ``default`` when out of range.

    ``branch_fns`` is a list of callables, a list of ``(index, callable)`` pairs
    or a dict ``{index: callable}``. Without ``default`` an out-of-range index
    runs the last branch, as in TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> print(tf.switch_case(tf.constant(1), [lambda: tf.constant(10), lambda: tf.constant(20)]).numpy())
        20
    """
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
    elif branch_fns and isinstance(branch_fns[0], (tuple, list)):
        items = sorted(branch_fns)
    else:
        items = list(enumerate(branch_fns))
    if [k for k, _ in items] != list(range(len(items))) or not all(callable(f) for _, f in items):
        raise ValueError("tf.switch_case: branch_fns must be callables for the indices 0..n-1, as a list "
                         "[fn0, fn1, ...] or a dict {0: fn0, 1: fn1, ...}.")
    fns = [f for _, f in items]
    n = len(fns)
    if default is not None:
        fns = fns + [default]
    fallback = n if default is not None else n - 1
    i = _concrete(branch_index)
    if i is not None:
        i = int(i)
        return fns[i if 0 <= i < n else fallback]()
    idx = to_array(branch_index).astype(jnp.int32)
    index = jnp.where((idx >= 0) & (idx < n), idx, fallback)
    return _branches(index, fns, "tf.switch_case")


def _branches(index, fns, what):
    if state.recorders:
        return _select_all(index, fns, what)
    return _lax_switch(index, fns, what)


def _select_all(index, fns, what):
    """Every branch runs (recorded); ``tf.where`` picks the result the traced index selects."""
    results, scopes = [], []
    for f in fns:
        with _state.Scope() as scope:
            results.append(_snapshot(f()))
        scopes.append(scope)
    leaves0, tree0 = _flatten(results[0])
    chosen = results[-1]
    for k in range(len(fns) - 2, -1, -1):
        leaves, tree = _flatten(results[k])
        c_leaves, c_tree = _flatten(chosen)
        if tree != c_tree:
            raise TypeError(_STRUCTURE.format(what=what, a=tree, b=c_tree))
        pick = Tensor(index == k)
        chosen = jax.tree_util.tree_unflatten(
            tree, [where(pick, a, b) for a, b in zip(leaves, c_leaves)])
    variables = {}
    for scope in scopes:
        variables.update(scope.written)
    for i, v in variables.items():
        val = _state.read(v)
        for k in range(len(fns) - 1, -1, -1):
            if i in scopes[k].written:
                val = jnp.where(index == k, scopes[k].values[i], val)
        v._set(val)
    return chosen


def _lax_switch(index, fns, what):
    """jax.lax.switch over the branches; Variables assigned in any branch are outputs of all."""
    probes = []
    for f in fns:
        scope = _state.Scope()

        def run(f=f, scope=scope):
            with scope:
                out = _snapshot(f())
            leaves, tree = _flatten(out)
            run.tree = tree
            return _arrays(leaves), scope.new_values()

        closed = jax.make_jaxpr(run)()
        probes.append((closed, run.tree, scope))
    tree = probes[0][1]
    for _, t, _ in probes[1:]:
        if t != tree:
            raise TypeError(_STRUCTURE.format(what=what, a=tree, b=t))
    variables = {}
    for _, _, scope in probes:
        variables.update(scope.written)
    variables = list(variables.values())
    before = [_state.read(v) for v in variables]

    def branch(closed, scope):
        ids = list(scope.written)

        def fn():
            vals = jax.core.eval_jaxpr(closed.jaxpr, closed.consts)
            n_out = len(vals) - len(ids)
            outs, after = vals[:n_out], dict(zip(ids, vals[n_out:]))
            return outs, [after.get(v._id, x) for v, x in zip(variables, before)]

        return fn

    try:
        outs, new = jax.lax.switch(index, [branch(c, scope) for c, _, scope in probes])
    except TypeError as e:
        raise TypeError(_STRUCTURE.format(what=what, a="one branch", b=f"another ({e})")) from None
    for v, x in zip(variables, new):
        v._set(x)
    return jax.tree_util.tree_unflatten(tree, [Tensor(o) for o in outs])


# ---------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------

def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (``tf.while_loop``).

    Eagerly it is a Python loop (tapes record every iteration). Inside a
    ``tf.function`` with a traced condition it becomes ``jax.lax.while_loop``;
    ``body`` must keep the structure, shapes and dtypes of ``loop_vars``.

    Args:
        cond: callable returning a scalar boolean tensor.
        body: callable returning new loop variables (same structure).
        loop_vars: a tensor, or a list/tuple (possibly nested) of tensors.
        maximum_iterations: optional upper bound on the number of iterations.

    Returns:
        The final loop variables, with the structure of ``loop_vars``.

    Example:
        >>> import tapejax as tf
        >>> @tf.function
        ... def collatz_steps(n):
        ...     return tf.while_loop(lambda n, k: n > 1,
        ...                          lambda n, k: (tf.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1),
        ...                          (n, tf.constant(0)))[1]
        >>> print(collatz_steps(tf.constant(6)).numpy())
        8
    """
    if not callable(cond) or not callable(body):
        raise TypeError("tf.while_loop(cond, body, loop_vars): cond and body must be callables.")
    packed = isinstance(loop_vars, (list, tuple))

    def call(f, lv):
        return f(*lv) if packed else f(lv)

    def normalize(new, lv):
        if packed and len(lv) == 1 and not isinstance(new, (list, tuple)):
            new = [new]
        if packed:
            new = type(lv)(new) if not hasattr(lv, "_fields") else type(lv)(*new)
        return new

    limit = None if maximum_iterations is None else _concrete(maximum_iterations)
    if maximum_iterations is not None and limit is None:
        raise TypeError("tf.while_loop: maximum_iterations must be a Python int or a concrete tensor.")
    limit = None if limit is None else int(limit)
    lv = loop_vars
    it = 0
    while limit is None or it < limit:
        c = call(cond, lv)
        cv = _concrete(c)
        if cv is None:
            remaining = None if limit is None else limit - it
            return _traced_loop(cond, body, lv, call, normalize, remaining)
        if not bool(cv):
            break
        lv = normalize(call(body, lv), lv)
        it += 1
    return lv


def _traced_loop(cond, body, lv, call, normalize, limit):
    # [fnsurface hook] a TensorArray entering the loop with no element shape learns it from one
    # probe run of the body (JAX preallocates every loop variable).
    lv = infer_loop_shapes(lv, lambda copy: _probe_body(body, copy, call, normalize))
    if state.recorders:
        if limit is None:
            raise NotImplementedError(
                "tf.while_loop with a traced condition inside a tf.function while a GradientTape is "
                "recording needs maximum_iterations (the loop is then unrolled so the tape can "
                "differentiate it): tf.while_loop(cond, body, loop_vars, maximum_iterations=100).")
        return _unrolled(cond, body, lv, call, normalize, limit)
    leaves, tree = _flatten(lv)
    init = _arrays(leaves)

    def rebuild(arrays):
        return jax.tree_util.tree_unflatten(tree, [Tensor(a) for a in arrays])

    # The body is traced once (its Python side effects happen once, as in TensorFlow), which
    # also tells which Variables it assigns: they join the carry, in place of the values the
    # trace read of them (constants of its jaxpr, the enclosing trace's values).
    probe_scope = _state.Scope()

    def probe(arrays):
        with probe_scope:
            new = _snapshot(normalize(call(body, rebuild(arrays)), lv))
        new_leaves, new_tree = _flatten(new)
        if new_tree != tree:
            raise TypeError(f"tf.while_loop: body must return the structure of loop_vars ({tree}), "
                            f"got {new_tree}.")
        return [jnp.asarray(to_array(x)).astype(a.dtype) for x, a in zip(new_leaves, arrays)], \
            probe_scope.new_values()

    closed = jax.make_jaxpr(probe)(init)
    variables = list(probe_scope.written.values())
    before = {id(_state.read(v)): k for k, v in enumerate(variables)}
    carried = [before.get(id(c)) for c in closed.consts]

    def with_vars(vals, fn):
        with _state.Scope(zip(variables, vals)):
            return fn()

    def cond_fn(carry):
        arrays, vals, i = carry
        c = to_array(with_vars(vals, lambda: call(cond, rebuild(arrays))))
        return c if limit is None else jnp.logical_and(c, i < limit)

    def body_fn(carry):
        arrays, vals, i = carry
        consts = [c if k is None else vals[k] for c, k in zip(closed.consts, carried)]
        out = jax.core.eval_jaxpr(closed.jaxpr, consts, *arrays)
        return out[:len(arrays)], out[len(arrays):], i + 1

    arrays, vals, _ = jax.lax.while_loop(cond_fn, body_fn, (init, [_state.read(v) for v in variables], 0))
    for v, x in zip(variables, vals):
        v._set(x)
    return rebuild(arrays)


def _probe_body(body, lv, call, normalize):  # [fnsurface hook] for _tensor_array.infer_loop_shapes
    with _state.Scope():  # the probe's writes never reach the Variables
        return normalize(call(body, lv), lv)


def _unrolled(cond, body, lv, call, normalize, limit):
    """The loop unrolled ``limit`` times, finished iterations masked by recorded ``tf.where``."""
    active = None
    for _ in range(limit):
        c = call(cond, lv)
        active = c if active is None else _logical_and(active, c)
        with _state.Scope() as scope:
            new = _snapshot(normalize(call(body, lv), lv))
        for i, v in scope.written.items():
            v._set(jnp.where(to_array(active), scope.values[i], _state.read(v)))
        nl, _ = _flatten(new)
        ol, tree = _flatten(lv)
        lv = jax.tree_util.tree_unflatten(tree, [where(active, a, b) for a, b in zip(nl, ol)])
    return lv
