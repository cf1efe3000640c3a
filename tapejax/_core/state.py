"""The state model: every Variable read, write and creation goes through here.

Outside any scope a Variable's value is its own storage. Code run inside a
:class:`Scope` (a traced ``tf.function`` body, a ``tf.cond`` branch, a
``tf.while_loop`` body, a ``custom_gradient`` forward pass, an export) sees the
values the scope gives, and its assignments are collected in the scope; the
Variables themselves are not touched. The owner of the scope decides what
becomes of the writes: ``commit`` them (to the enclosing scope, or to storage),
return them from a compiled program, or drop them. So a body that raises, or a
trace that is thrown away, leaves every Variable as it was, and no tracer can be
left behind in one (Keras 3's ``StatelessScope`` and flax nnx's state split are
the models).
"""
import sys
import threading
import weakref

import jax
import jax._src.array
import numpy as np

RNG = "rng"   # Variable kind: the state of a random generator
ARRAY = jax._src.array.ArrayImpl   # a concrete jax array's type (named without making one: that starts the backend)


class _Local(threading.local):
    def __init__(self):
        self.scope = None      # the innermost active Scope
        self.tracing = 0       # > 0 while a tf.function body (or an export) is traced
        self.placement = None  # tf.distribute: value -> (sharding, placed value) for new Variables
        self.names = {}        # tensor id -> TensorFlow-style name, for the latest trace
        self.previous_names = {}   # the trace's before it (a tensor leaked from it is named in errors)
        self.name_counts = {}
        self.known = {}        # tensor id -> its value known while tracing (see known_value)
        self.recorders = []    # active GradientTapes / ForwardAccumulators, innermost last
        self.host_tracing = False  # tracing a program to run on the host (new_shapes)
        self.distribution = (None, None)  # tf.distribute: (strategy in scope, replica id or None)
        self.random_ops = None     # [random op states of the function traced, next op, next graph op seed]
        self.exporting = 0         # > 0 while tf.saved_model.save traces a function for export


_local = _Local()
_MISSING = object()


class TracedInitialValue(ValueError):
    """A Variable was created, while a function was traced, from a value computed from its inputs."""

    def __init__(self, name):
        super().__init__(
            f"tf.Variable '{name}' was created inside a tapejax.function from a value that depends on "
            "the function's inputs, so its initial value is not known when the function is traced. "
            "Create it from shapes or constants (tf.Variable(tf.zeros(x.shape))) and assign the input "
            "afterwards (v.assign(x)), or create it outside the function.")


class Captured(Exception):
    """A strict scope was asked for a Variable it was not given (``Scope(strict=True)``)."""


class Scope:
    """Values of Variables as seen by the code running inside, and what it assigned.

    Args:
        given: ``(Variable, value)`` pairs: values substituted for the Variables' own.
        strict: raise :class:`Captured` when other Variables are touched.
        tracing: the body is a staged program (``tf.function`` semantics: nested
            functions inline, ``tf.executing_eagerly()`` is False).

    Attributes:
        captured: ``{id: Variable}`` touched but not given, in first-touch order.
        written: ``{id: Variable}`` assigned inside, in first-write order.
        created: Variables created inside.
    """

    __slots__ = ("values", "captured", "written", "created", "checks", "parent", "strict", "tracing",
                 "_kept", "may_fail", "forbid_creation", "flags", "trace")

    def __init__(self, given=(), strict=False, tracing=False):
        self.values = {v._id: x for v, x in given}
        self.captured = {}
        self.written = {}
        self.created = []
        self.checks = []        # callables run after the program staged in this scope runs
        self.may_fail = False   # a host callback staged inside may raise (note_may_fail)
        self.strict = strict
        self.tracing = tracing
        self._kept = {}         # id -> (Variable, value): generator advances that outlive a drop
        self.parent = None
        self.forbid_creation = None   # a message: creating a Variable here raises ValueError(message)
        self.flags = None       # a compiled program's checks returned as outputs (checks.stage_error)
        self.trace = None       # the JAX trace of that program's body

    def __enter__(self):
        self.parent = _local.scope
        _local.scope = self
        if self.tracing and not _local.tracing:   # a new trace: names start again
            _local.previous_names = _local.names
            _local.names, _local.name_counts, _local.known = {}, {}, {}
        _local.tracing += self.tracing
        return self

    def __exit__(self, *exc):
        _local.scope = self.parent
        _local.tracing -= self.tracing
        return False

    def read(self, v):
        x = self.values.get(v._id, _MISSING)
        if x is _MISSING:
            if self.strict:
                raise Captured(v)
            if self.parent is not None:
                x = self.parent.read(v)
            else:
                x = v._stored
                v._shared = True   # the buffer may escape the scope (a Tensor sharing it)
            self.values[v._id] = x
            self.captured[v._id] = v
        return x

    def write(self, v, x):
        if v._id not in self.values:
            if self.strict:
                raise Captured(v)
            self.captured[v._id] = v
        self.values[v._id] = x
        self.written[v._id] = v

    def new_values(self):
        """The values of the Variables written inside, in ``written`` order."""
        return [self.values[i] for i in self.written]

    def commit(self):
        """Applies the writes to the enclosing scope, or to the Variables when outermost."""
        for i, v in self.written.items():
            if self.parent is not None:
                self.parent.write(v, self.values[i])
            else:
                store(v, self.values[i])

    def drop(self):
        """Forgets the writes, except random generator advances made before the last Variable
        creation: those are initializers' draws, and reusing their keys in the step would
        correlate weights and noise (TensorFlow runs initializers eagerly, in ``init_scope``)."""
        for v, x in self._kept.values():
            store(v, x)

    def _on_create(self, v):
        if self.forbid_creation:
            # Raised where the Variable is created, so the error points at the user's line.
            raise ValueError(self.forbid_creation)
        self.created.append(v)
        for i, w in self.written.items():
            x = self.values[i]
            if w._kind == RNG and not isinstance(x, jax.core.Tracer):
                self._kept[i] = (w, x)


def note_may_fail():
    """Notes, on the scopes being traced, that a host callback staged now may raise (an
    assertion, a ``numpy_function``, a bounds check): a program holding one must not be given
    the Variables' own buffers (a failed run would lose them), and waits for its callbacks."""
    s = _local.scope
    while s is not None:
        s.may_fail = True
        s = s.parent


# ---------------------------------------------------------------------------
# What Variables call
# ---------------------------------------------------------------------------

def read(v):
    """The value of ``v`` as the code running now sees it."""
    s = _local.scope
    if s is None:
        v._shared = True   # the caller may keep the buffer: never donate it
        return v._stored
    return s.read(v)


def read_for_update(variables):
    """The buffers of ``variables`` for a program that replaces them all and donates them
    (updates them in place): a Variable's own buffer where nothing else holds it -- no Tensor
    read from it is alive, no NumPy view was taken of it -- else a copy, so a holder keeps the
    old value (TensorFlow updates a buffer in place when its reference count is one and copies
    it otherwise). One program either way, so the result does not depend on who holds what.
    None inside a scope (a traced function donates its state itself)."""
    if _local.scope is not None:
        return None
    values = []
    for v in variables:
        sole = _references(v) == _SOLE     # counted before this function holds it too
        x = v._stored
        if not sole or type(x) is not ARRAY or x._npy_value is not None:
            x = copy_buffer(x)
        values.append(x)
    return values


def _references(holder):
    """The reference count of ``holder._stored``, as seen from here."""
    return sys.getrefcount(holder._stored)


class _Holder:
    __slots__ = ("_stored",)


def _sole_count():
    """What ``_references`` counts for a value nothing else holds (measured, not assumed: it
    varies between Python versions)."""
    h = _Holder()
    h._stored = object()
    return _references(h)


_SOLE = _sole_count()


def copy_buffer(x):
    """A copy of a buffer, to donate (``jax.device_put`` copies without compiling a program)."""
    if isinstance(x, jax.core.Tracer):
        return jax.numpy.array(x, copy=True)
    # An uncommitted array stays uncommitted; a global (multi-process) one keeps its sharding.
    return jax.device_put(x, None if x.is_fully_addressable else x.sharding, may_alias=False)


def write(v, x):
    """Assigns ``x`` to ``v``: in the innermost scope, else to its storage."""
    strategy, replica = _local.distribution
    if replica is not None and v._sharding is not None and v._kind != RNG:
        raise ValueError(_REPLICA_WRITE.format(name=v.name, n=strategy.num_replicas_in_sync))
    s = _local.scope
    if s is None:
        store(v, x)
    else:
        s.write(v, x)


def created(v):
    """Tells every active scope of a new Variable (its storage holds its initial value)."""
    s = _local.scope
    while s is not None:
        s._on_create(v)
        s = s.parent


def store(v, x, shared=True):
    """Sets the storage of ``v`` (in its layout). ``shared=False`` says no one else holds ``x``
    (a fresh output of a compiled program), so a later call may donate it."""
    if v._sharding is not None and not isinstance(x, jax.core.Tracer):
        x = put(x, v._sharding)
    v._stored = x
    v._shared = shared


def store_outputs(variables, values, held):
    """Stores the new values a compiled program returned (already in the Variables' layouts).
    ``held``: ids of buffers also held elsewhere (returned, or forwarded inputs)."""
    if not held:
        for v, x in zip(variables, values):
            v._stored = x
            v._shared = False
        return
    for v, x in zip(variables, values):
        v._stored = x
        v._shared = id(x) in held


def initialize(v, x):
    """Sets the value of ``v`` outside every scope (a checkpoint restore, which may happen
    while a function is traced, during a lazy build): also what active scopes see of it."""
    store(v, x)
    s = _local.scope
    while s is not None:
        if v._id in s.values and v._id not in s.written:
            s.values[v._id] = v._stored
        s = s.parent


_REPLICA_WRITE = (
    "Cannot assign to the mirrored Variable '{name}' inside strategy.run running once per replica: "
    "each of the {n} replicas would update it in turn, and tapejax does not aggregate the updates "
    "across replicas as TensorFlow's optimizers do. strategy.run runs once per replica when none of "
    "its arguments is a distributed batch: pass the batch from strategy.experimental_distribute_dataset "
    "(then the step runs once, on the global batch), or update the Variable outside strategy.run.")


def set_distribution(strategy, replica=None):
    """Declares the tf.distribute context of this thread: the strategy whose scope is active
    (None: the default) and, inside ``strategy.run`` running once per replica, which replica
    runs (None: cross-replica, or one program for all replicas). Returns the previous one."""
    previous, _local.distribution = _local.distribution, (strategy, replica)
    return previous


def distribution():
    """(strategy, replica id or None) of this thread (see ``set_distribution``)."""
    return _local.distribution


def distribution_key():
    """What a trace depends on of the distribution context: (strategy id, replica id) while one
    replica of a strategy runs, else None."""
    strategy, replica = _local.distribution
    return None if replica is None else (id(strategy), replica)


_replica_local = weakref.WeakKeyDictionary()   # strategy -> {Variable id: Variable}


def replica_local(v):
    """Declares ``v`` (created in a strategy's scope) state of which each replica has its own copy,
    in lockstep: inside ``strategy.run`` running once per replica, every replica starts from the
    value ``v`` had when the run began (a random generator's state, as TF's mirrored copies)."""
    strategy = _local.distribution[0]
    if strategy is not None:
        _replica_local.setdefault(strategy, weakref.WeakValueDictionary())[v._id] = v


def replica_locals(strategy):
    """The live Variables declared with ``replica_local`` in ``strategy``'s scope."""
    d = _replica_local.get(strategy)
    return list(d.values()) if d else []


def set_placement(fn):
    """Makes ``fn(value) -> (sharding, placed value)`` place every Variable created from now on
    in this thread (a tf.distribute strategy's scope; None: no placement). Returns the previous."""
    previous, _local.placement = _local.placement, fn
    return previous


def placed(value):
    """(sharding, value) for a new Variable: placed by the strategy in scope, if any."""
    fn = _local.placement
    if fn is None or isinstance(value, jax.core.Tracer):
        return None, value
    return fn(value)


def place(v, sharding):
    """Gives ``v`` a layout (``jax.sharding.Sharding``) that its assigned values keep."""
    v._sharding = sharding
    store(v, v._stored)


def put(x, sharding):
    """Places a concrete value with ``sharding`` (on every process in a multi-process run)."""
    if getattr(x, "sharding", None) == sharding:
        return x
    # Placing a concrete value is eager, also while a function is traced (an optimizer slot).
    with jax.ensure_compile_time_eval():
        if jax.process_count() == 1 or (isinstance(x, jax.Array) and not x.is_fully_addressable):
            return jax.device_put(x, sharding)
        host = np.asarray(x)
        return jax.make_array_from_callback(host.shape, sharding, lambda idx: host[idx])


def staged_check(fn):
    """Runs ``fn()`` after each run of the program being traced (eagerly; it may raise)."""
    s = _local.scope
    while s is not None and not s.tracing:
        s = s.parent
    if s is None:
        raise RuntimeError("staged_check is only meaningful while a tf.function is traced.")
    s.checks.append(fn)


# TensorFlow's names of the ops tapejax's op table calls by their Python names.
_TF_OP_NAMES = {
    "multiply": "mul", "subtract": "sub", "negative": "Neg", "reduce_sum": "Sum", "reduce_mean": "Mean",
    "reduce_max": "Max", "reduce_min": "Min", "reduce_prod": "Prod", "matmul": "MatMul", "relu": "Relu",
    "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "square": "Square", "tanh": "Tanh", "sigmoid": "Sigmoid",
    "identity": "Identity", "reshape": "Reshape", "cast": "Cast", "abs": "Abs", "maximum": "Maximum",
    "minimum": "Minimum", "greater": "Greater", "less": "Less", "greater_equal": "GreaterEqual",
    "less_equal": "LessEqual", "equal": "Equal", "not_equal": "NotEqual", "logical_and": "LogicalAnd",
    "logical_or": "LogicalOr", "logical_not": "LogicalNot", "select": "SelectV2", "floormod": "FloorMod",
    "pow": "Pow", "sign": "Sign", "expand_dims": "ExpandDims", "squeeze": "Squeeze", "gather": "GatherV2",
    "reduce_all": "All", "reduce_any": "Any", "argmax": "ArgMax", "argmin": "ArgMin", "tile": "Tile",
    "round": "Round", "floor": "Floor", "ceil": "Ceil", "reciprocal": "Reciprocal", "rsqrt": "Rsqrt",
    "softplus": "Softplus", "softmax": "Softmax", "log1p": "Log1p", "expm1": "Expm1", "sin": "Sin", "cos": "Cos",
}


def name_traced(tensors, name):
    """Names tensors computed while a function is traced, as TensorFlow's graph would
    (``mul``, ``mul_1``, ...): their repr shows it."""
    name = _TF_OP_NAMES.get(name, name)
    n = _local.name_counts.get(name, 0)
    _local.name_counts[name] = n + 1
    base = name if n == 0 else f"{name}_{n}"
    for i, t in enumerate(tensors):
        _local.names[t._id] = f"{base}:{i}"


def name_input(tensor, name):
    """Names an argument of the function being traced (TensorFlow: ``x:0``)."""
    _local.names[tensor._id] = f"{name}:0"


def set_known(tensor, value):
    """Records the value of a tensor computed while tracing that is known without running the
    program: a shape (``tf.shape``), or small integer arithmetic on shapes."""
    _local.known[tensor._id] = value


def known_value(tensor):
    """TensorFlow's ``constant_value`` of a tensor of the trace: a NumPy array, of dtype object
    where it holds unknown dimensions (``jax.export`` symbolic dimensions), or None. Ops that
    need static values (``tf.zeros(tf.shape(x))``, ``tf.reshape(x, [tf.shape(x)[0], -1])``)
    use it, as TensorFlow's shape inference does."""
    return _local.known.get(tensor._id)


def traced_name(tensor):
    """The name of a tensor of the latest trace (or of the one before), or None."""
    return _local.names.get(tensor._id) or _local.previous_names.get(tensor._id)


def tracing():
    """Whether a ``tf.function`` body is being traced here (and not inside ``init_scope``)."""
    return _local.tracing > 0


class exporting:
    """Context in which ``tf.saved_model.save`` traces functions for export: unknown sizes stay
    symbolic in the program (no trace per size to fall back on)."""

    def __enter__(self):
        _local.exporting += 1
        return self

    def __exit__(self, *exc):
        _local.exporting -= 1
        return False


def is_exporting():
    return _local.exporting > 0


class random_ops:
    """The trace of a function body that runs inside: its seeded random ops (the n-th one met)
    keep their state in ``nodes[n]``, the list one concrete function keeps, so traces of the
    same concrete function (discovery traces, the gradient's re-run) find the same states.
    TensorFlow's graph op has its own kernel, whose counter starts at its seeds and advances
    per run."""

    def __init__(self, nodes):
        self._nodes = nodes

    def __enter__(self):
        self._saved, _local.random_ops = _local.random_ops, [self._nodes, 0, 0]
        return self

    def __exit__(self, *exc):
        _local.random_ops = self._saved
        return False


def graph_op_seed():
    """The op seed of the next random op given none in the body being traced (TF's graph counts
    them: 0, 1, ...), or None outside a trace."""
    here = _local.random_ops
    if here is None or not tracing():
        return None
    here[2] += 1
    return here[2] - 1


def random_op_state(key, make):
    """The state of the next seeded random op of the body being traced (``make()`` the first
    time, or when the op met at this place is another one: ``key`` tells), or None outside."""
    here = _local.random_ops
    if here is None or not tracing():
        return None
    nodes, n, _ = here
    here[1] = n + 1
    if n == len(nodes):
        nodes.append(None)
    if nodes[n] is None or nodes[n][0] != key:
        nodes[n] = (key, make())
    return nodes[n][1]


class pause_recording:
    """Context in which no recorder sees ops (used by stop_recording, custom_gradient)."""

    __slots__ = ("_saved", "_only")

    def __init__(self, only=None):
        self._only = only

    def __enter__(self):
        st = _local
        self._saved = st.recorders
        st.recorders = [] if self._only is None else [r for r in self._saved if r is not self._only]
        return self

    def __exit__(self, *exc):
        _local.recorders = self._saved
        return False


class init_scope:
    """``tf.init_scope()``: code inside runs eagerly, outside any function being traced.

    Variables read and assigned inside see and change their real values (as
    TensorFlow lifts the block out of the graph being built), tapes do not record,
    and values are computed now. Use it for one-time initialisation inside a
    ``tf.function``.

    Example:
        >>> import tapejax as tf
        >>> @tf.function
        ... def f():
        ...     with tf.init_scope():
        ...         print("eager inside:", tf.executing_eagerly())
        ...     return tf.constant(1)
        >>> _ = f()
        eager inside: True
    """

    def __enter__(self):
        self._saved = (_local.scope, _local.tracing)
        _local.scope, _local.tracing = None, 0
        self._paused = pause_recording()
        self._paused.__enter__()
        self._eval = jax.ensure_compile_time_eval()
        self._eval.__enter__()
        return self

    def __exit__(self, *exc):
        self._eval.__exit__(*exc)
        self._paused.__exit__(*exc)
        _local.scope, _local.tracing = self._saved
        return False
