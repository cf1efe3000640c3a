"""GradientTape: records ops on watched values and differentiates them."""
import enum

import jax
import jax.numpy as jnp
import numpy as np

from . import dtypes as _dtypes, engine as _engine, lazy as _lazy, logs as _logs
from .backward import custom_jacobian, plan, run_backward
from .engine import state
from .indexed_slices import gradient_with_indexed_slices
from .tensor import Tensor, _TensorBase, to_array
from .variable import Variable
from .tensor import is_tracer, _ids, export_listeners


# A watched value converted to NumPy leaves the tape: explain() names it.
export_listeners.append(lambda t: _engine.note_barrier("numpy", t))


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on.

    ``NONE`` (the default) gives ``None``; ``ZERO`` gives zeros of the source's
    shape. The strings ``'none'`` and ``'zero'`` are accepted too.

    Example:
        >>> import tapejax as tf
        >>> x, y = tf.Variable(1.0), tf.Variable(2.0)
        >>> with tf.GradientTape() as tape:
        ...     z = y * y
        >>> tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        <tf.Tensor: shape=(), dtype=float32, numpy=0.0>
    """

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How ``tf.gradients`` sums the gradients a tensor gets from its several uses
    (``tf.AggregationMethod``).

    TensorFlow's methods differ in the order and memory of the sum, not in its value: the
    backward pass here sums fan-out in the engine, whichever is given.

    Example:
        >>> import tapejax as tf
        >>> @tf.function
        ... def example():
        ...   x = tf.constant(1.0)
        ...   y = x * 2.0
        ...   z = y + y + y + y
        ...   return tf.gradients(z, [x, y],
        ...     aggregation_method=tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)
        >>> example()
        [<tf.Tensor: shape=(), dtype=float32, numpy=8.0>, <tf.Tensor: shape=(), dtype=float32, numpy=4.0>]
    """

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _unconnected(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}. "
                         "Use tf.UnconnectedGradients.NONE or tf.UnconnectedGradients.ZERO.") from None


def _is_leaf(x):
    return isinstance(x, _TensorBase) or x is None


def flatten(structure):
    return jax.tree_util.tree_flatten(structure, is_leaf=_is_leaf)


def _is_gradient_leaf(x):
    """A leaf of gradient targets and sources: a tensor, None, or a ``tf.experimental.ExtensionType``
    (a pytree elsewhere, refused here by ``_not_differentiable``)."""
    return isinstance(x, _TensorBase) or x is None or hasattr(type(x), "_tf_extension_type_cached_fields")


def _not_differentiable(x):
    """TensorFlow differentiates a composite value only with a ``__composite_gradient__``."""
    if hasattr(type(x), "_tf_extension_type_cached_fields") and not hasattr(x, "__composite_gradient__"):
        raise ValueError(f"Type {type(x).__name__} is not supported as a gradient source or gradient target.")


_NOT_TENSOR = ("{what} must be tf.Tensor or tf.Variable objects (or nested lists, tuples, dicts "
               "of them), but got {typ}. Convert values with tf.constant(...) first, and keep the "
               "tensor your computation used: a fresh conversion is a different tensor.")


class _Recorder:
    """What the op layer records into: watched ids, nodes, watched variables."""

    def __init__(self, persistent, watch_accessed_variables):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._nodes = []
        self._watched = set()
        self._watched_vars = {}
        self._recording = False
        self._started = False     # entered at least once (TF: its C++ tape exists)
        # For explain(): tensor-id ranges of the `with` blocks and stop_recording blocks (ids
        # grow with creation time), and watched values that left the tape (stop_gradient, NumPy).
        self._windows = []
        self._stops = []
        self._barriers = {}

    def _watch_variable(self, var):
        if var._id not in self._watched_vars:
            self._watched_vars[var._id] = var
            self._watched.add(var._id)

    def _push(self):
        state.recorders = state.recorders + [self]
        self._recording = True
        self._started = True
        self._windows.append([next(_ids), None])

    def _pop(self):
        state.recorders = [r for r in state.recorders if r is not self]
        self._recording = False
        self._windows[-1][1] = next(_ids)

    def _watch(self, tensor):
        leaves, _ = flatten(tensor)
        for t in leaves:
            if not isinstance(t, _TensorBase):
                raise ValueError(_NOT_TENSOR.format(what="Watched values", typ=type(t).__name__))
            if not _engine.is_float_dtype(t._aval.dtype):
                _logs.warning("The dtype of the watched tensor must be floating (e.g. tf.float32), got %r",
                             t.dtype)
                continue
            if isinstance(t, Variable):
                self._watch_variable(t)
            else:
                self._watched.add(t._id)


class GradientTape(_Recorder):
    """Records operations for automatic differentiation, as ``tf.GradientTape``.

    Operations run inside the ``with`` block are recorded when one of their
    inputs is watched: trainable Variables read inside the block (unless
    ``watch_accessed_variables=False``), tensors passed to :meth:`watch`, and
    anything computed from those. :meth:`gradient` then differentiates a target
    with respect to sources by one compiled backward pass, cached by the tape's
    structure, so a training loop compiles its backward pass once (on its second
    step: shapes met for the first time, such as a variable batch size or the short
    last batch of an epoch, run on the host without compiling). A structure that
    keeps arriving with new lengths (sequences) is differentiated op by op instead,
    with each op's VJP compiled once per shape and shared; the caches are bounded
    (see ``tf.config.experimental.set_compile_cache_limits``).

    Args:
        persistent: allow more than one ``gradient``/``jacobian`` call. A
            non-persistent tape frees what it saved after the first call.
        watch_accessed_variables: watch trainable Variables automatically when
            they are read.

    Example:
        >>> import tapejax as tf
        >>> x = tf.constant(3.0)
        >>> with tf.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.gradient(y, x)
        <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        super().__init__(persistent, watch_accessed_variables)

    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an "
                             "already-active tape. Enter a tape once: nested blocks need their own "
                             "tf.GradientTape().")
        if self._nodes is None:
            # As TensorFlow: a used non-persistent tape starts afresh when entered again.
            self._nodes = []
            self._watched = set()
            self._watched_vars = {}
        self._push()
        return self

    def __exit__(self, typ, value, traceback):
        if self._recording:
            self._pop()
        return False

    def watch(self, tensor):
        """Ensures ``tensor`` (a Tensor, Variable, or nested structure of them) is traced."""
        self._watch(tensor)

    def watched_variables(self):
        """The Variables this tape watches, in the order they were created."""
        return tuple(sorted(self._watched_vars.values(), key=lambda v: v._id))

    def stop_recording(self):
        """Context manager in which operations are not recorded on this tape.

        Example:
            >>> import tapejax as tf
            >>> x = tf.Variable(2.0)
            >>> with tf.GradientTape() as t:
            ...     with t.stop_recording():
            ...         y = x * x
            >>> print(t.gradient(y, x))
            None
        """
        return _StopRecording(self)

    def reset(self):
        """Clears everything recorded and watched so far; recording continues.

        Example:
            >>> import tapejax as tf
            >>> x = tf.Variable(2.0)
            >>> with tf.GradientTape() as t:
            ...     y = x * x
            ...     t.reset()
            ...     z = x + 1.0
            >>> print(t.gradient(z, x).numpy())
            1.0
        """
        self._nodes = []
        self._watched = set()
        self._watched_vars = {}
        self._barriers = {}

    def explain(self, target, source):
        """Says in words why the gradient of ``target`` w.r.t. ``source`` is (or is not) ``None``.

        tapejax's own addition (TensorFlow has none). It covers the cases of TensorFlow's
        guide "Cases where gradient returns None": an unwatched source, a non-trainable
        Variable, a Variable replaced by a Tensor, an unconnected target, a path through an
        integer dtype, NumPy, a state assignment, ``stop_gradient`` or ``stop_recording``,
        and a used non-persistent tape. It does not compute the gradient.

        Args:
            target: a Tensor (or Variable) computed on this tape.
            source: a Tensor or Variable.

        Returns:
            A :class:`GradientExplanation`: ``str()`` of it is the sentence; ``.connected``
            says whether a gradient flows; ``.reasons`` holds short codes.

        Example:
            >>> import tapejax as tf
            >>> x = tf.constant(3.0)
            >>> with tf.GradientTape(persistent=True) as tape:
            ...     y = x * x
            >>> print(tape.explain(y, x))
            No gradient: the source is a Tensor this tape never watched. Constants are not watched automatically: call tape.watch(x) inside the block, before computing with it.
        """
        return _explain(self, target, source)

    def _check_usable(self):
        if self._nodes is None:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients "
                "(or jacobians). To call gradient() more than once, create the tape with "
                "tf.GradientTape(persistent=True).")

    def _start_differentiating(self):
        if self._recording and not self._persistent:
            self._pop()  # TF: a non-persistent tape stops recording when differentiated

    def _check_loop(self, what, n, parallel_iterations, use_pfor, traced):
        """TensorFlow's contract for jacobian loops: its pfor splits ``n`` rows into chunks of
        ``parallel_iterations``, each chunk a gradient call, which a non-persistent tape
        cannot serve; the while-loop form is a gradient call per row."""
        vectorizing = (f"Encountered an exception while vectorizing the {what} computation. "
                       "Vectorization can be disabled by setting experimental_use_pfor to False.")
        if not use_pfor:
            if not traced and not self._persistent:
                raise RuntimeError(
                    f"GradientTape must be created with persistent=True to compute the {what} "
                    "with eager execution enabled and with experimental_use_pfor set to False "
                    "(that computes one gradient per row). Use tf.GradientTape(persistent=True), or "
                    "keep the default experimental_use_pfor=True.")
            return
        if parallel_iterations is None:
            return
        pi = int(parallel_iterations)
        if pi <= 1:
            raise ValueError(f"{vectorizing} parallel_iterations must be None or an integer > 1, got {pi}.")
        if n >= pi and not self._persistent:
            msg = (f"GradientTape must be created with persistent=True to compute the {what} with "
                   f"parallel_iterations={pi} for {n} rows: the rows are computed in chunks, one "
                   "gradient call each. Use tf.GradientTape(persistent=True), or parallel_iterations=None.")
            if what == "jacobian":
                raise ValueError(f"{vectorizing} {msg}")
            raise RuntimeError(msg)

    def _release(self):
        if not self._persistent:
            self._nodes = None
            self._watched = set()

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Gradients of ``target`` with respect to ``sources``.

        Args:
            target: a Tensor or Variable, or a nested structure of them. A
                non-scalar target (or several) is summed, as in TensorFlow.
            sources: a Tensor or Variable, or a nested structure (list, tuple,
                dict) of them. The result has the same structure.
            output_gradients: optional upstream gradients, one per target (the
                vector of a vector-Jacobian product), or ``None``.
            unconnected_gradients: ``'none'`` (default) or ``'zero'``.

        Returns:
            Gradients shaped like ``sources``; ``None`` where a source is not
            connected (unwatched, integer, through NumPy or a state assignment).

        Raises:
            RuntimeError: a non-persistent tape differentiated twice.
            ValueError / TypeError: targets or sources that are not tensors.

        Example:
            >>> import tapejax as tf
            >>> w = tf.Variable([[1.0], [2.0]])
            >>> b = tf.Variable(0.5)
            >>> with tf.GradientTape() as tape:
            ...     loss = tf.reduce_sum(tf.constant([[1.0, 1.0]]) @ w + b)
            >>> g = tape.gradient(loss, {'w': w, 'b': b})
            >>> g['w'].numpy().tolist(), float(g['b'])
            ([[1.0], [1.0]], 1.0)
        """
        self._check_usable()
        self._start_differentiating()
        unconnected = _unconnected(unconnected_gradients)
        targets, _ = jax.tree_util.tree_flatten(target, is_leaf=_is_gradient_leaf)
        for t in targets:
            if not isinstance(t, _TensorBase):
                _not_differentiable(t)
                raise TypeError(_NOT_TENSOR.format(what="Targets", typ=type(t).__name__))
        srcs, src_tree = jax.tree_util.tree_flatten(sources, is_leaf=_is_gradient_leaf)
        for s in srcs:
            if not isinstance(s, _TensorBase):
                _not_differentiable(s)
                raise ValueError(_NOT_TENSOR.format(what="Sources", typ=type(s).__name__))
        seeds = self._seeds(targets, output_gradients)
        grads = gradient_with_indexed_slices(self, targets, srcs, seeds)
        self._release()
        # Lazy execution: the end of a step. Forward and backward run now, as one program of
        # the same structure every step (what follows, e.g. the optimizer, starts the next).
        _lazy.run_pending()
        grads = _fill_unconnected(grads, srcs, unconnected)
        return jax.tree_util.tree_unflatten(src_tree, grads)

    @staticmethod
    def _seeds(targets, output_gradients):
        if output_gradients is None:
            return [None] * len(targets)
        ogs, _ = jax.tree_util.tree_flatten(output_gradients, is_leaf=_is_leaf)
        if not isinstance(output_gradients, (list, tuple, dict)):
            ogs = [output_gradients]
        if len(ogs) != len(targets):
            raise ValueError(f"output_gradients must have one entry per target: got {len(ogs)} for "
                             f"{len(targets)} targets.")
        out = []
        for i, (t, g) in enumerate(zip(targets, ogs)):
            if g is None:
                # TensorFlow has no meaning for it either: it raises ValueError for most targets
                # (and aborts the process for some), so none is accepted here.
                raise ValueError(
                    f"output_gradients[{i}] is None. Give one gradient per target: "
                    "tf.ones_like(target) for the default seed, tf.zeros_like(target) to leave a "
                    "target out, or output_gradients=None to seed every target with ones.")
            if not isinstance(g, _TensorBase):
                g = Tensor(to_array(g, t._value.dtype))
            if tuple(g.shape) != tuple(t.shape):
                raise ValueError(f"output_gradients shape {tuple(g.shape)} does not match the target "
                                 f"shape {tuple(t.shape)}.")
            out.append(g)
        return out

    def _id_of(self, t):
        """The tape id of a target or source. As in TensorFlow (2.21), a value this tape
        neither watches nor recorded (a constant never passed to watch(), a non-trainable or
        unwatched Variable) gets a gradient only as a target of itself, never through the
        ops it fed -- even when another tape, or this one, recorded those ops."""
        i = t._id
        return i if i in self._watched else -i

    def _backward(self, targets, srcs, seeds, mode="grad", extra=None):
        nodes = self._nodes
        target_ids = [self._id_of(t) for t in targets]
        source_ids = [self._id_of(s) for s in srcs]
        p = plan(nodes, target_ids, source_ids)
        src_slots = p.source_slots
        if not p.nodes and not set(s for s in src_slots if s is not None) & set(p.target_slots):
            return [None] * len(srcs)
        outs = run_backward(p, targets, seeds, mode, extra)
        # Integer sources are never differentiated (TensorFlow returns None).
        return [None if (g is None or not _engine.is_float_dtype(s._value.dtype)) else g
                for g, s in zip(outs, srcs)]

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of ``target`` with respect to each source.

        Computed as one vectorised backward pass (``jax.vmap`` over a basis of
        output gradients), compiled once per tape structure. The result for a
        source of shape ``S`` and a target of shape ``T`` has shape ``T + S``.

        Example:
            >>> import tapejax as tf
            >>> x = tf.constant([1.0, 2.0])
            >>> with tf.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * x
            >>> tape.jacobian(y, x).numpy().tolist()
            [[2.0, 0.0], [0.0, 4.0]]
        """
        self._check_usable()
        unconnected = _unconnected(unconnected_gradients)
        if not isinstance(target, _TensorBase):
            target = Tensor(to_array(target))
        srcs, src_tree = flatten(sources)
        self._check_loop("jacobian", target._value.size, parallel_iterations, experimental_use_pfor,
                         is_tracer(target._value))
        self._start_differentiating()
        if target._value.size == 0:
            out = [Tensor(jnp.zeros(tuple(target.shape) + tuple(s.shape), s._value.dtype)) for s in srcs]
        else:
            out = self._mapped(target, srcs, "jacobian", bool(experimental_use_pfor))
        self._release()
        if unconnected is UnconnectedGradients.ZERO:
            out = [Tensor(jnp.zeros(tuple(target.shape) + tuple(s.shape), s._value.dtype)) if g is None else g
                   for g, s in zip(out, srcs)]
        return jax.tree_util.tree_unflatten(src_tree, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: ``result[i] = d target[i] / d source[i]``.

        Assumes example ``i`` of the target depends only on example ``i`` of the
        source (TensorFlow's contract). Shapes: target ``(B, *T)``, source
        ``(B, *S)``, result ``(B, *T, *S)``.

        Example:
            >>> import tapejax as tf
            >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
            >>> with tf.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * x
            >>> tape.batch_jacobian(y, x).shape
            TensorShape([2, 2, 2])
        """
        self._check_usable()
        _unconnected(unconnected_gradients)
        for what, t in (("target", target), ("source", source)):
            if not isinstance(t, _TensorBase):
                raise ValueError(_NOT_TENSOR.format(what=f"The batch_jacobian {what}", typ=type(t).__name__))
            if t.shape.rank < 2:
                raise ValueError(
                    f"Shape {t.shape} must have rank at least 2: the batch_jacobian {what} is "
                    "(batch, features...). For a per-example scalar, add a feature axis with "
                    "tf.expand_dims(x, -1), or use jacobian().")
        if target.shape[0] != source.shape[0]:
            raise ValueError(
                f"Need first dimension of target shape ({tuple(target.shape)}) and source shape "
                f"({tuple(source.shape)}) to match: batch_jacobian pairs example i of the target with "
                "example i of the source. Use jacobian() for the full Jacobian.")
        row = int(np.prod(target.shape[1:], dtype=np.int64))
        self._check_loop("batch_jacobian", row, parallel_iterations, experimental_use_pfor,
                         is_tracer(target._value))
        self._start_differentiating()
        (out,) = self._mapped(target, [source], "batch_jacobian", bool(experimental_use_pfor))
        self._release()
        if out is None:
            # TensorFlow returns zeros here whatever unconnected_gradients says.
            out = Tensor(jnp.zeros(tuple(target.shape) + tuple(source.shape[1:]), target._value.dtype))
        return out

    def _mapped(self, target, srcs, mode, use_pfor):
        for s in srcs:
            if not isinstance(s, _TensorBase):
                raise ValueError(_NOT_TENSOR.format(what="Sources", typ=type(s).__name__))
        tid = self._id_of(target)
        sids = [self._id_of(s) for s in srcs]
        p = plan(self._nodes, [tid], sids)
        if p.custom:
            return custom_jacobian(p, target, srcs, mode, use_pfor)
        if not p.nodes:
            if mode == "jacobian" and tid in sids:
                # d target / d target: the identity, reshaped.
                n = target._value.size
                eye = Tensor(jnp.eye(n, dtype=target._value.dtype).reshape(tuple(target.shape) * 2))
                return [eye if i == tid else None for i in sids]
            return [None] * len(srcs)
        outs = run_backward(p, [target], [None], mode, use_pfor)
        return [None if (g is None or not _engine.is_float_dtype(s._value.dtype)) else g
                for g, s in zip(outs, srcs)]


class _StopRecording:
    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        t = self._tape
        if t._nodes is None or not t._started:
            raise RuntimeError("Trying to stop recording a tape which is not recording. Use "
                               "tape.stop_recording() inside the tape's `with` block.")
        if not t._recording:
            raise ValueError("Tape is not recording: its `with` block has ended. Use "
                             "tape.stop_recording() inside the tape's `with` block.")
        t._pop()
        t._stops.append([next(_ids), None])

    def __exit__(self, *exc):
        t = self._tape
        t._stops[-1][1] = next(_ids)
        t._push()
        return False


def _fill_unconnected(grads, srcs, unconnected):
    if unconnected is UnconnectedGradients.NONE:
        return grads
    return [Tensor(jnp.zeros_like(s._value)) if g is None else g for g, s in zip(grads, srcs)]


class GradientExplanation:
    """What :meth:`GradientTape.explain` found: ``connected``, ``reasons`` (codes) and the text."""

    def __init__(self, connected, reasons, text):
        self.connected = connected
        self.reasons = tuple(reasons)
        self.text = text

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"GradientExplanation({self.text!r})"


_WHY = {
    "used": "this non-persistent tape was already used to compute gradients, and freed what it "
            "recorded. Create it with tf.GradientTape(persistent=True) to call gradient() again.",
    "integer_source": "the source has dtype {dtype}; only floating-point values have gradients. "
                      "Compute with a float (tf.cast(x, tf.float32)) before the tape.",
    "string_source": "the source is a string tensor: strings carry no gradients (TensorFlow ignores "
                     "tape.watch of one). Differentiate w.r.t. the numbers made from the text instead "
                     "(tf.strings.to_number, or the embeddings of its token ids).",
    "non_trainable": "the source is a Variable created with trainable=False; tapes watch only trainable "
                     "Variables automatically. Call tape.watch(v) inside the block.",
    "variable_unwatched": "the source is a Variable this tape does not watch (watch_accessed_variables="
                          "False). Call tape.watch(v) inside the block.",
    "variable_not_read": "no recorded operation read the source Variable inside the tape's block. Used "
                         "only as the value of an assignment (v.assign(x), v.assign_add(x)), it got no "
                         "gradient: assignments are state and stop gradients. After `x = x + 1`, x is a "
                         "Tensor, not the Variable: use x.assign_add(1) to keep it.",
    "not_watched": "the source is a Tensor this tape never watched. Constants are not watched automatically: "
                   "call tape.watch(x) inside the block, before computing with it.",
    "stop_gradient": "a value computed from the source went through tf.stop_gradient, which cuts the tape.",
    "numpy": "a value computed from the source was converted to NumPy (.numpy() or np.asarray); the tape "
             "cannot follow NumPy computations. Keep the computation in tf ops.",
    "integer": "a value computed from the source went through an op with an integer or boolean result "
               "(tf.cast to int, argmax, a comparison, rounding to int); integers carry no gradient.",
    "dead_end": "values computed from the source were recorded, but the target does not use them. If "
                "they were stored with Variable.assign/assign_add/assign_sub, the assignment is state: "
                "it stops gradients. Compute the target from the values themselves.",
    "target_stopped": "the target was computed inside tape.stop_recording(), so the tape did not see it.",
    "target_outside": "the target was computed outside the tape's `with` block; only operations inside "
                      "the block are recorded.",
    "unconnected": "the target does not depend on the source through recorded operations "
                   "(unconnected_gradients='zero' would give zeros instead of None).",
}


def _in(i, ranges):
    return i is not None and any(a < i and (b is None or i < b) for a, b in ranges)


def _explain(tape, target, source):
    def no(*codes, **fmt):
        return GradientExplanation(False, codes, "No gradient: " + " ".join(_WHY[c].format(**fmt) for c in codes))

    if tape._nodes is None:
        return no("used")
    if not _engine.is_float_dtype(source._value.dtype):
        return no("string_source" if source.dtype == _dtypes.string else "integer_source", dtype=source.dtype.name)
    tid, sid = tape._id_of(target), tape._id_of(source)
    p = plan(tape._nodes, [tid], [sid])
    if p.nodes or tid == sid:
        n = len(p.nodes)
        return GradientExplanation(True, ("connected",), (
            f"Connected: the gradient flows from the target to the source through {n} recorded "
            f"operation{'s' if n != 1 else ''}. A zero value is the derivative itself (relu below 0, "
            "a tie in max, a constant function), not a missing path."))
    if _in(target._id, tape._stops):
        return no("target_stopped")
    if tape._windows and not _in(target._id, tape._windows) and tid < 0:
        return no("target_outside")
    if sid < 0:
        if not isinstance(source, Variable):
            return no("not_watched")
        if not source.trainable:
            return no("non_trainable")
        return no("variable_unwatched" if not tape._watch_accessed else "variable_not_read")
    # Follow the source forward through the tape and name what stopped it.
    reach = {sid}
    codes = []
    consumed = set()
    for n in tape._nodes:
        if not reach.isdisjoint(n.in_ids):
            consumed.update(i for i in n.in_ids if i in reach)
            if any(o is None for o in n.out_ids) and "integer" not in codes:
                codes.append("integer")
            reach.update(o for o in n.out_ids if o is not None)
    for i in reach:
        kind = tape._barriers.get(i)
        if kind and kind not in codes:
            codes.append(kind)
    if not codes and (reach - consumed - {sid}):
        codes.append("dead_end")
    return no(*(codes or ["unconnected"]))
