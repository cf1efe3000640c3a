"""autodiff.ForwardAccumulator: forward-mode (JVP) on recorded ops, over jax.jvp."""
import jax
import jax.numpy as jnp

from .backward import cached, plan, split_args
from .engine import Op, apply, state
from .tensor import Tensor, _TensorBase, to_array
from .tape import _Recorder, flatten, UnconnectedGradients, _unconnected


def _node_jvp(op, static, gmask, cmask, inputs, tangents):
    kw = dict(static)
    diff = [x for x, m in zip(inputs, gmask) if m]

    def f(*d):
        it = iter(d)
        return op.fn(*[next(it) if m else x for x, m in zip(inputs, gmask)], **kw)

    tangents = [t.astype(jnp.result_type(x)) for t, x in zip(tangents, diff)]
    ans, tout = jax.jvp(f, tuple(diff), tuple(tangents))
    # An output JAX's tangent does not depend on (a symbolic zero) is unconnected: None, as TF.
    linked = _depends_on_inputs(jax.make_jaxpr(lambda *t: jax.jvp(f, tuple(diff), t)[1])(*tangents).jaxpr)
    if not isinstance(ans, (tuple, list)):
        return (tout if linked[0] else None,)
    it = iter(linked)  # one entry per output that is not None
    return tuple(t if next(it) else None for a, t in zip(ans, tout) if a is not None)


def _depends_on_inputs(jaxpr):
    """Per output of ``jaxpr``: whether it is computed from its inputs (data flow, not values)."""
    def var(v):
        return type(v).__name__ != "Literal"
    live = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        if any(var(v) and v in live for v in eqn.invars):
            live.update(eqn.outvars)
    return [var(v) and v in live for v in jaxpr.outvars]


def _pure_forward(p):
    specs, target_slots, source_slots = p.specs, p.target_slots, p.source_slots

    def forward(node_inputs, tangents):
        tan = {s: t for s, t in zip(source_slots, tangents) if s is not None}
        for spec, inputs in zip(specs, node_inputs):
            op, static, gmask, cmask, in_slots, out_slots, _ = spec
            ins_t = [tan.get(s) for s in in_slots]
            if all(t is None for t in ins_t):
                continue
            diff = [x for x, m in zip(inputs, gmask) if m]
            ins_t = [jnp.zeros(jnp.shape(x), jnp.result_type(x)) if t is None else t for t, x in zip(ins_t, diff)]
            outs = _node_jvp(op, static, gmask, cmask, inputs, ins_t)
            for s, t in zip(out_slots, [t for t, m in zip(outs, cmask) if m]):
                if t is not None:
                    tan[s] = t
        return tuple(tan.get(s) for s in target_slots)

    return forward


class ForwardAccumulator(_Recorder):
    """Computes Jacobian-vector products of recorded ops (forward mode), as in TF.

    ``primals`` are watched; ``tangents`` (same structure) are their directions.
    Inside the ``with`` block ops on watched values are recorded; ``jvp(y)`` is
    the directional derivative of ``y``. The JVP is one ``jax.jvp`` pass,
    compiled once per recorded structure. Nested with a ``GradientTape`` it gives
    Hessian-vector products (forward over reverse).

    Example:
        >>> import tapejax as tf
        >>> x = tf.constant([1.0, 2.0])
        >>> with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
        ...     y = tf.reduce_sum(x ** 3)
        >>> print(acc.jvp(y).numpy())
        3.0
    """

    def __init__(self, primals, tangents):
        super().__init__(persistent=True, watch_accessed_variables=False)
        ps, ptree = flatten(primals)
        ts, ttree = flatten(tangents)
        if ptree != ttree and len(ps) != len(ts):
            raise ValueError("primals and tangents must have the same structure: got "
                             f"{len(ps)} primals and {len(ts)} tangents.")
        self._primals = []
        self._tangents = []
        self._enclosing = []
        seen = set()
        for p, t in zip(ps, ts):
            if not isinstance(p, _TensorBase):
                raise ValueError(f"primals must be Tensors or Variables, got {type(p).__name__}.")
            if p._id in seen:
                raise ValueError(
                    f"Tensor {p!r} was specified as a primal multiple times. This may indicate an "
                    "error. If it was intended, please sum the corresponding tangents.")
            seen.add(p._id)
            tv = t if isinstance(t, _TensorBase) else Tensor(to_array(t, p._value.dtype))
            if tuple(tv.shape) != tuple(p.shape):
                raise ValueError(f"Tangent shape {tuple(tv.shape)} does not match primal shape {tuple(p.shape)}.")
            self._watch(p)
            self._primals.append(p)
            self._tangents.append(tv)

    def __enter__(self):
        if self._recording:
            raise ValueError("Accumulator is already recording: enter it once, and nest another "
                             "tf.autodiff.ForwardAccumulator for higher-order JVPs.")
        # TensorFlow computes tangents while each op runs, so the recorders around this
        # accumulator then (and only those) record the tangent computation: jvp() does the same.
        for r in state.recorders:
            if not any(r is e for e in self._enclosing):
                self._enclosing.append(r)
        self._push()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._pop()
        return False

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The JVP of ``primals`` (Tensors computed inside the block), same structure."""
        unconnected = _unconnected(unconnected_gradients)
        ts, tree = flatten(primals)
        p = plan(self._nodes, [t._id for t in ts], [s._id for s in self._primals])
        if p.custom:
            raise NotImplementedError(
                "ForwardAccumulator cannot differentiate through a @tf.custom_gradient function: "
                "its gradient is given only in reverse mode. Use a GradientTape for that part.")
        if p.nodes:
            layout = tuple(len(n.ins) for n in p.nodes)
            key = ("jvp", p.fingerprint, layout)

            def build():
                fwd = _pure_forward(p)

                def fn(*flat):
                    node_inputs, tans = split_args(layout, flat)
                    return fwd(node_inputs, tans)
                return Op(fn, name="jvp")

            op = cached(key, build)
            saved = state.recorders
            state.recorders = [r for r in self._enclosing if r._nodes is not None]
            try:
                res = apply(op, [x for n in p.nodes for x in n.ins] + self._tangents, {})
            finally:
                state.recorders = saved
            outs = list(res)
        else:  # nothing recorded between them: a primal's JVP is its own tangent
            direct = {s._id: t for s, t in zip(self._primals, self._tangents)}
            outs = [direct.get(t._id) for t in ts]
        if unconnected is UnconnectedGradients.ZERO:
            outs = [Tensor(jnp.zeros_like(t._value)) if o is None else o for o, t in zip(outs, ts)]
        return jax.tree_util.tree_unflatten(tree, outs)
