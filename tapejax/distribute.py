"""tf.distribute on jax.sharding: data-parallel (and sharded-model) tape training.

TensorFlow runs one copy of the step per device ("replica") and all-reduces the
gradients. tapejax writes no communication code: a strategy owns a 1-D
``jax.sharding.Mesh`` with the axis ``'batch'``, and

* Variables created inside ``strategy.scope()`` (weights, optimizer slots, metric
  totals, also those created lazily inside ``strategy.run``) are placed with
  ``NamedSharding(mesh, P())``: replicated on every device;
* ``experimental_distribute_dataset`` places each global batch with
  ``NamedSharding(mesh, P('batch'))``: split along its first axis;
* ``strategy.run(step, args)`` calls the step on those global arrays. A
  ``tf.function`` step is traced once, with sharded inputs, into one XLA SPMD
  program: each device computes on its slice of the batch and XLA inserts the
  cross-device reductions the gradients need (an all-reduce, as in TensorFlow).

So the step computes on the global batch, and what it returns is already the
value of the whole batch: the cross-replica reduction TensorFlow's
``strategy.reduce(..., axis=None)`` performs. Dividing per-example losses by the
global batch size (``tf.nn.compute_average_loss``) gives the mean loss, exactly
as in the "Custom training with tf.distribute" tutorial; ``strategy.reduce(SUM,
loss, axis=None)`` of it is the loss itself. ``strategy.run`` returns plain
Tensors (TensorFlow returns ``PerReplica`` objects);
``experimental_local_results`` splits a batch-sharded value into its
per-device slices.

Without a distributed batch among its arguments, an eager ``strategy.run`` runs
the function once per replica instead, as TensorFlow does, and returns
``PerReplica`` values: each replica sees its ``replica_id_in_sync_group``, and a
``tf.random.Generator`` created in the scope gives each replica TensorFlow's
numbers for that replica (the "Random number generation" guide).

``MultiWorkerMirroredStrategy`` is the same on a mesh of every device of every
process, after ``jax.distributed.initialize``. ``experimental.shard`` gives a
Variable another layout (a big kernel split over devices); compiled steps keep it.

Where the layout lives: a placed Variable declares it in its ``_sharding`` slot (a
``jax.sharding.NamedSharding``, set by the state model: ``_state.place``, or at
creation inside a strategy's scope); assignments keep it, and a ``tf.function``
constrains the new values it writes to it, so XLA's sharding propagation cannot
drift and the program compiles once.

Limits: ``model.fit`` does not split batches over the strategy's devices (its
steps run replicated, with the same result); write the custom loop with
``strategy.run``. Optimizer slots are placed when created inside ``strategy.run``
or the scope (as TensorFlow requires). ``strategy.run`` on distributed batches returns
plain Tensors, not ``PerReplica`` values, and ``reduce(..., axis=None)`` does not
multiply a value that does not depend on the batch by the number of replicas. A
generator drawn in such a run (one program for all replicas) uses its own key, not
TensorFlow's per-replica keys; inside a ``tf.function`` ``strategy.run`` always runs
one program. Run once per replica, a function cannot assign mirrored Variables
(TensorFlow would update each replica's copy, or aggregate): that raises.

Example:
    >>> import numpy as np, tapejax as tf
    >>> strategy = tf.distribute.MirroredStrategy()   # every local device
    >>> with strategy.scope():
    ...     model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    ...     optimizer = tf.keras.optimizers.SGD(0.1)
    >>> GLOBAL_BATCH = 8 * strategy.num_replicas_in_sync
    >>> x = np.ones([4 * GLOBAL_BATCH, 2], np.float32)
    >>> ds = tf.data.Dataset.from_tensor_slices((x, x.sum(1))).batch(GLOBAL_BATCH)
    >>> @tf.function
    ... def train_step(inputs):
    ...     features, labels = inputs
    ...     with tf.GradientTape() as tape:
    ...         per_example = (model(features)[:, 0] - labels) ** 2
    ...         loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
    ...     grads = tape.gradient(loss, model.trainable_variables)
    ...     optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ...     return loss
    >>> losses = []
    >>> for batch in strategy.experimental_distribute_dataset(ds):
    ...     per_replica = strategy.run(train_step, args=(batch,))
    ...     losses.append(float(strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)))
    >>> losses[-1] < losses[0]
    True
"""
import contextlib
import json
import os
import threading
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from . import errors, math as tfmath
from ._core import devices as _devices, logs as _logs, state as _vstate
from ._core.tensor import Tensor, _TensorBase, is_tracer, to_array
from ._staging.function import Function
from .data import _spec_of, _to_array, _to_tensors

__all__ = [
    "Strategy", "MirroredStrategy", "OneDeviceStrategy", "MultiWorkerMirroredStrategy", "ReduceOp",
    "InputContext", "InputOptions", "ReplicaContext", "DistributedDataset", "DistributedValues", "get_strategy",
    "has_strategy",
    "get_replica_context", "in_cross_replica_context", "experimental",
    "CrossDeviceOps", "ReductionToOneDevice", "NcclAllReduce", "HierarchicalCopyAllReduce",
]

BATCH_AXIS = "batch"


# ---------------------------------------------------------------------------
# Messages (what went wrong, and what to write instead)
# ---------------------------------------------------------------------------

_MIXED_STRATEGIES = (
    "Mixing different tf.distribute.Strategy objects: {new} entered while the scope of {old} is "
    "active. Use one strategy at a time: create the model, optimizer and metrics in "
    "`with strategy.scope():` and call strategy.run of that same strategy.")

_BAD_DEVICE = (
    "MirroredStrategy(devices=...): cannot find the device {device!r}. Give jax devices "
    "(jax.devices()) or TensorFlow names like '/gpu:0' or 'CPU:1'; this process has {available}.")

_DUPLICATE_DEVICE = (
    "MirroredStrategy(devices=...) lists the device {device} twice. Give each device once.")

_BAD_REDUCE_OP = (
    "Unknown reduce op {op!r}. Use tf.distribute.ReduceOp.SUM or tf.distribute.ReduceOp.MEAN.")

_SHARD_NO_MESH = (
    "tf.distribute.experimental.shard: the Variable '{name}' was not created in a strategy scope, "
    "so there is no device mesh to shard it over. Create it (or the layer) inside "
    "`with strategy.scope():`, or pass strategy=.")

_SHARD_AXIS = (
    "tf.distribute.experimental.shard: the partition spec {spec} names the mesh axis {axis!r}, but "
    "the strategy's mesh has only the axes {axes}. Write PartitionSpec(None, 'batch') to split the "
    "second dimension over every device.")

_SHARD_RANK = (
    "tf.distribute.experimental.shard: the partition spec {spec} has {n} entries but the Variable "
    "'{name}' has rank {rank}. Give at most one entry per dimension (None for dimensions to keep whole).")

_SHARD_UNEVEN = (
    "tf.distribute.experimental.shard: dimension {dim} of the Variable '{name}' (size {size}) cannot be "
    "split evenly over {parts} devices. Shard a dimension whose size is a multiple of {parts}, or "
    "leave it whole (None in the partition spec).")

_PER_REPLICA_BATCH = (
    "InputContext.get_per_replica_batch_size: the global batch size {gbs} is not divisible by the "
    "{n} replicas in sync. Use a global batch size that is a multiple of {n} "
    "(per_replica_batch * strategy.num_replicas_in_sync).")

_LATE_INITIALIZE = (
    "MultiWorkerMirroredStrategy: the cluster has {n} workers, but JAX was already used in this "
    "process, and jax.distributed.initialize must come before any JAX computation. Create the "
    "strategy right after `import tapejax as tf`, before building models or tensors (or call "
    "jax.distributed.initialize(...) yourself first).")

_BAD_TF_CONFIG = (
    "MultiWorkerMirroredStrategy: TF_CONFIG must be JSON like "
    "'{{\"cluster\": {{\"worker\": [\"host1:12345\", \"host2:12345\"]}}, "
    "\"task\": {{\"type\": \"worker\", \"index\": 0}}}}'; got {value!r} ({error}).")


# ---------------------------------------------------------------------------
# ReduceOp
# ---------------------------------------------------------------------------

class ReduceOp:
    """How ``strategy.reduce`` combines values: ``ReduceOp.SUM`` or ``ReduceOp.MEAN``.

    Example:
        >>> import tapejax as tf
        >>> tf.distribute.ReduceOp.SUM
        'SUM'
    """

    SUM = "SUM"
    MEAN = "MEAN"

    @staticmethod
    def from_variable_aggregation(aggregation):
        name = str(getattr(aggregation, "name", aggregation)).upper()
        return ReduceOp.MEAN if "MEAN" in name else ReduceOp.SUM


def _reduce_op(op):
    name = str(getattr(op, "name", getattr(op, "value", op))).upper()
    if name in ("SUM", "MEAN"):
        return name
    raise ValueError(_BAD_REDUCE_OP.format(op=op))


# ---------------------------------------------------------------------------
# Strategy stack
# ---------------------------------------------------------------------------

class _State(threading.local):
    def __init__(self):
        self.stack = []           # strategies whose scope is entered, innermost last
        self.replica = []         # strategies inside whose run() we are
        self.contexts = []        # the distribution context (_vstate.distribution) each entry replaced


_state = _State()


def _is_tensor_leaf(x):
    return isinstance(x, _TensorBase) or x is None


def _process_local(x):
    """A fully replicated global array as an array of this process (multi-process runs)."""
    if (isinstance(x, jax.Array) and not is_tracer(x) and not x.is_fully_addressable
            and x.is_fully_replicated):
        return x.addressable_data(0)
    return x


_put = _vstate.put


class Strategy:
    """A way to run tape training on several devices: the base of every strategy.

    Most code uses :class:`MirroredStrategy` (one host), :class:`MultiWorkerMirroredStrategy`
    (several hosts) or :func:`get_strategy` (the default: one device, no-op scope).
    A strategy owns ``mesh``, a 1-D ``jax.sharding.Mesh`` with the axis ``'batch'``.
    """

    def __init__(self, devices):
        devices = list(devices)
        self._mesh = Mesh(np.array(devices, dtype=object), (BATCH_AXIS,))
        self._replicated = NamedSharding(self._mesh, PartitionSpec())
        self._batch = NamedSharding(self._mesh, PartitionSpec(BATCH_AXIS))
        self._depth = 0

    # -- the mesh -------------------------------------------------------------

    @property
    def mesh(self):
        """The ``jax.sharding.Mesh`` (1-D, axis ``'batch'``) this strategy computes on."""
        return self._mesh

    @property
    def num_replicas_in_sync(self):
        """How many devices (replicas) each step runs on.

        Example:
            >>> import jax, tapejax as tf
            >>> tf.distribute.MirroredStrategy().num_replicas_in_sync == len(jax.local_devices())
            True
        """
        return self._mesh.size

    @property
    def extended(self):
        return _Extended(self)

    def __repr__(self):
        return f"<tf.distribute.{type(self).__name__} num_replicas_in_sync={self.num_replicas_in_sync}>"

    # -- scope: where Variables are placed --------------------------------------

    @contextlib.contextmanager
    def scope(self):
        """Context in which new Variables are placed on this strategy's devices (replicated).

        Create the model, the optimizer, the metrics and a ``tf.train.Checkpoint``
        inside it. Variables created later by objects made here (lazy layer builds,
        optimizer slots) are placed when they are created inside ``strategy.run``
        or inside the scope.

        Raises:
            ValueError: when the scope of another strategy is active.

        Example:
            >>> import tapejax as tf
            >>> strategy = tf.distribute.MirroredStrategy()
            >>> with strategy.scope():
            ...     v = tf.Variable([1.0, 2.0])
            ...     print(tf.distribute.get_strategy() is strategy)
            True
            >>> v._value.sharding.spec
            P()
        """
        self._enter()
        try:
            yield self
        finally:
            self._exit()

    def _enter(self):
        stack = _state.stack
        if stack and stack[-1] is not self and not isinstance(stack[-1], _DefaultStrategy) \
                and not isinstance(self, _DefaultStrategy):
            raise ValueError(_MIXED_STRATEGIES.format(new=self, old=stack[-1]))
        stack.append(self)
        # Replica-aware state (random generators) sees this strategy; a replica running keeps its id.
        strategy, replica = _vstate.distribution()
        _state.contexts.append(_vstate.set_distribution(
            None if isinstance(self, _DefaultStrategy) else self, replica if strategy is self else None))
        if self._depth == 0 and self._places_variables():
            self._saved_placement = _vstate.set_placement(self._place)
        self._depth += 1

    def _exit(self):
        self._depth -= 1
        if self._depth == 0 and self._places_variables():
            _vstate.set_placement(self._saved_placement)
        _vstate.set_distribution(*_state.contexts.pop())
        _state.stack.pop()

    def _places_variables(self):
        return True

    def _place(self, x):
        """(sharding, placed value) of a Variable created in this strategy's scope."""
        s = getattr(x, "sharding", None)
        if isinstance(s, NamedSharding) and s.mesh == self._mesh and not s.is_fully_replicated:
            sharding = s  # e.g. the optimizer slot of a sharded kernel: keep its layout
        else:
            sharding = self._replicated
            if jax.process_count() > 1 and not _vstate.tracing():
                # Every worker starts from worker 0's initial value, as TensorFlow's MWMS does. Not
                # while a step is traced (JAX allows no collective there): state created then
                # (optimizer slots) starts from zeros on every worker anyway.
                from jax.experimental import multihost_utils
                x = multihost_utils.broadcast_one_to_all(np.asarray(x))
        return sharding, _put(x, sharding)

    # -- data --------------------------------------------------------------

    def _place_batch(self, element):
        """Places each leaf of a global batch: split over devices along its first axis."""
        def place(a):
            if isinstance(a, _TensorBase):
                a = a._value
            if isinstance(a, np.ndarray) and a.dtype.kind in "OUS":
                return a  # strings stay on the host, as tapejax datasets keep them
            if not isinstance(a, jax.Array):
                a = _to_array(a)
            n = self.num_replicas_in_sync
            even = np.ndim(a) >= 1 and a.shape[0] % n == 0
            # A last partial batch that does not split evenly is computed replicated (same result).
            return _distributed(Tensor(_put(a, self._batch if even else self._replicated)))

        return jax.tree_util.tree_map(place, element, is_leaf=_is_tensor_leaf)

    def experimental_distribute_dataset(self, dataset, options=None):
        """Iterates ``dataset`` (of global batches) with each batch split over the devices.

        Each element's tensors are placed with ``NamedSharding(mesh, P('batch'))``
        (their first axis divided among the replicas). A batch whose size is not a
        multiple of ``num_replicas_in_sync`` (the last one, without
        ``drop_remainder=True``) is placed replicated instead, which gives the same
        result. Batch the dataset with the global batch size, as in TensorFlow.

        Args:
            dataset: a ``tf.data.Dataset`` (or any iterable) of global batches.
            options: accepted for compatibility.

        Returns:
            A :class:`DistributedDataset`: iterate it, or ``iter()`` then ``next()``.

        Example:
            >>> import numpy as np, tapejax as tf
            >>> strategy = tf.distribute.MirroredStrategy()
            >>> ds = tf.data.Dataset.from_tensor_slices(np.arange(8.0)).batch(4)
            >>> [b.shape for b in strategy.experimental_distribute_dataset(ds)]
            [TensorShape([4]), TensorShape([4])]
        """
        return DistributedDataset(self, lambda: _raw_elements(dataset), self._place_batch)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """Builds each worker's input pipeline with ``dataset_fn(input_context)``.

        As in TensorFlow, ``dataset_fn`` receives an :class:`InputContext` and
        returns a dataset of per-replica batches
        (``input_context.get_per_replica_batch_size(GLOBAL_BATCH_SIZE)``), sharded
        for this worker (``input_context.input_pipeline_id``). Consecutive batches go
        to this worker's replicas; together they form one global batch.

        Example:
            >>> import numpy as np, tapejax as tf
            >>> strategy = tf.distribute.MirroredStrategy()
            >>> def dataset_fn(ctx):
            ...     bs = ctx.get_per_replica_batch_size(4 * strategy.num_replicas_in_sync)
            ...     return tf.data.Dataset.from_tensor_slices(np.arange(64.0)).batch(bs)
            >>> first = next(iter(strategy.distribute_datasets_from_function(dataset_fn)))
            >>> first.shape[0] == 4 * strategy.num_replicas_in_sync
            True
        """
        ctx = InputContext(jax.process_count(), jax.process_index(), self.num_replicas_in_sync)
        local = sum(1 for d in self._mesh.devices.flat if d.process_index == jax.process_index())

        def elements():
            it = iter(_raw_elements(dataset_fn(ctx)))
            while True:
                group = []
                for _ in range(local):
                    try:
                        group.append(next(it))
                    except StopIteration:
                        break
                if not group:
                    return
                leaves = [jax.tree_util.tree_flatten(g, is_leaf=_is_tensor_leaf) for g in group]
                tree = leaves[0][1]
                yield tree.unflatten([np.concatenate([np.asarray(_host(l[0][i])) for l in leaves])
                                      for i in range(len(leaves[0][0]))])

        def place(element):
            if jax.process_count() == 1:
                return self._place_batch(element)
            return jax.tree_util.tree_map(
                lambda a: _distributed(Tensor(jax.make_array_from_process_local_data(self._batch, np.asarray(a)))),
                element, is_leaf=_is_tensor_leaf)

        return DistributedDataset(self, elements, place)

    # -- running steps -------------------------------------------------------

    def run(self, fn, args=(), kwargs=None, options=None):
        """Runs a training step ``fn(*args, **kwargs)`` on every replica, as one SPMD program.

        The arguments are global batches from :meth:`experimental_distribute_dataset`.
        A ``tf.function`` step (or ``strategy.run`` called inside one) is traced
        once with the sharded inputs and compiled by XLA into one program over all
        devices; gradients of replicated Variables are all-reduced by XLA. Variables
        the step creates (optimizer slots on the first call) are placed like those
        created in :meth:`scope`.

        Called eagerly with no distributed batch among its arguments, on more than one
        replica (in one process), ``fn`` runs once per replica instead, as in
        TensorFlow: replica ``r`` sees ``replica_id_in_sync_group == r``, random
        generators created in the scope give each replica its own numbers, and the
        results come back as a ``PerReplica`` value (a :class:`DistributedValues`).
        Mirrored Variables cannot be assigned there (the replicas' updates are not
        aggregated): pass distributed batches for a training step.

        Returns:
            What ``fn`` returns, as plain Tensors computed on the global batch: a
            loss from ``tf.nn.compute_average_loss`` is already the mean over all
            replicas. Pass it to :meth:`reduce` as in TensorFlow. Run once per
            replica: one ``PerReplica`` value per Tensor ``fn`` returns.

        Example:
            >>> import tapejax as tf
            >>> strategy = tf.distribute.MirroredStrategy()
            >>> strategy.run(lambda x: x * 2.0, args=(tf.constant([1.0, 2.0]),))
            <tf.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
        """
        kwargs = kwargs or {}
        self._warn_eager_run(fn)
        with self.scope():
            if self._runs_per_replica(args, kwargs):
                return self._run_per_replica(fn, args, kwargs)
            _state.replica.append(self)
            try:
                return fn(*args, **kwargs)
            finally:
                _state.replica.pop()

    # TensorFlow's class name in its eager-run warning, for the strategies that warn (those
    # running ``mirrored_run.call_for_each_replica``); None: no warning.
    _EAGER_RUN_NAME = None

    def _warn_eager_run(self, fn):
        """TensorFlow's warning for an eager ``run`` of a Python function (not a tf.function),
        logged the first 5 times in a process (``logging.log_first_n`` in ``mirrored_run``)."""
        if self._EAGER_RUN_NAME is None or _vstate.tracing() or isinstance(fn, Function):
            return
        with _EAGER_RUN_LOCK:
            _EAGER_RUN_WARNINGS[0] += 1
            if _EAGER_RUN_WARNINGS[0] > 5:
                return
        _logs.warning(_EAGER_RUN_WARNING.format(strategy=self._EAGER_RUN_NAME))

    def _runs_per_replica(self, args, kwargs):
        if (self.num_replicas_in_sync == 1 or jax.process_count() > 1 or _vstate.tracing()
                or _vstate.distribution()[1] is not None):
            return False
        leaves = jax.tree_util.tree_leaves((args, kwargs), is_leaf=_is_tensor_leaf)
        return not any(_is_distributed(x) for x in leaves)

    def _run_per_replica(self, fn, args, kwargs):
        """TensorFlow's execution of ``run``: ``fn`` once per replica, in order, each replica
        starting from the same replica-local state (``_vstate.replica_local``)."""
        start = [(v, v.value()) for v in _vstate.replica_locals(self)]
        outs = []
        for r in range(self.num_replicas_in_sync):
            previous = _vstate.set_distribution(self, r)
            _state.replica.append(self)
            try:
                if r:
                    for v, value in start:
                        v.assign(value)
                outs.append(fn(*args, **kwargs))
            finally:
                _state.replica.pop()
                _vstate.set_distribution(*previous)
        return jax.tree_util.tree_map(lambda *xs: xs[0] if all(x is xs[0] for x in xs) else PerReplica(xs),
                                      *outs, is_leaf=_is_tensor_leaf)

    def reduce(self, reduce_op, value, axis=None):
        """Combines a value returned by :meth:`run` across replicas (and along ``axis``).

        ``run`` computes on the global batch, so its outputs already combine every
        replica: with ``axis=None`` the value is returned as it is (for a loss from
        ``tf.nn.compute_average_loss``, ``SUM`` gives the mean loss, as in TensorFlow).
        With an ``axis``, the value is summed (``SUM``) or averaged (``MEAN``) over
        that axis of the global batch, which is TensorFlow's result. A value that
        does not depend on the batch is not multiplied by the number of replicas.

        Args:
            reduce_op: ``tf.distribute.ReduceOp.SUM`` or ``MEAN`` (or the strings).
            value: a Tensor (or nested structure of Tensors) returned by ``run``.
            axis: ``None``, or the batch axis (usually 0) to reduce too.

        Returns:
            A Tensor (or the same structure of Tensors).

        Raises:
            ValueError: for an unknown ``reduce_op``.

        Example:
            >>> import tapejax as tf
            >>> strategy = tf.distribute.get_strategy()
            >>> per_example = tf.constant([1.0, 2.0, 3.0, 6.0])
            >>> print(strategy.reduce(tf.distribute.ReduceOp.MEAN, per_example, axis=0).numpy())
            3.0
        """
        op = _reduce_op(reduce_op)

        def one(x):
            if x is None:
                return None
            if isinstance(x, DistributedValues):
                parts = [self.reduce(op, v, axis) for v in x._values]
                total = tfmath.add_n(parts)
                return total if op == ReduceOp.SUM else total / len(parts)
            if axis is None:
                if isinstance(x, _TensorBase):
                    return x
                # TF's rule for data that is not per-replica: the same on every replica, so its
                # MEAN is itself, and only one replica's SUM is defined.
                if op == ReduceOp.MEAN:
                    return x
                if self.num_replicas_in_sync != 1:
                    raise ValueError(f"A non-DistributedValues value {x} cannot be reduced with the "
                                     f"given reduce op ReduceOp.{op}.")
                return Tensor(_process_local(to_array(x)))
            r = tfmath.reduce_sum(x, axis=axis) if op == ReduceOp.SUM else tfmath.reduce_mean(x, axis=axis)
            return r if is_tracer(r._value) else Tensor(_process_local(r._value))

        return jax.tree_util.tree_map(one, value, is_leaf=_is_tensor_leaf)

    def experimental_local_results(self, value):
        """The per-device pieces of a value from :meth:`run` or of a distributed batch.

        A value split along its first axis over the replicas (a batch, per-example
        losses) gives one Tensor per local replica, in device order. Any other value
        (a replicated loss or Variable) is already the combined value and gives a
        1-tuple.

        Example:
            >>> import tapejax as tf
            >>> tf.distribute.get_strategy().experimental_local_results(tf.constant(1.0))
            (<tf.Tensor: shape=(), dtype=float32, numpy=1.0>,)
        """
        def one(x):
            if isinstance(x, DistributedValues):
                return x._values
            a = x._value if isinstance(x, _TensorBase) else x
            if isinstance(a, jax.Array) and not is_tracer(a) and not a.is_fully_replicated \
                    and len(a.addressable_shards) > 1:
                order = {d: i for i, d in enumerate(self._mesh.devices.flat)}
                shards = sorted(a.addressable_shards, key=lambda s: order.get(s.device, 0))
                return tuple(Tensor(s.data) for s in shards)
            return (x,)

        if isinstance(value, (_TensorBase, jax.Array, DistributedValues)):
            return one(value)
        return jax.tree_util.tree_map(one, value, is_leaf=_is_tensor_leaf)

    def gather(self, value, axis):
        """All replicas' values of a batch-sharded Tensor concatenated along ``axis``: the
        global value, placed replicated."""
        a = value._value if isinstance(value, _TensorBase) else to_array(value)
        return Tensor(a if is_tracer(a) else _put(a, self._replicated))

    def experimental_distribute_values_from_function(self, value_fn):
        raise NotImplementedError(
            "experimental_distribute_values_from_function is not supported: tapejax computes on "
            "global batches. Build the global batch and use experimental_distribute_dataset.")


_DISTRIBUTED = weakref.WeakValueDictionary()   # id -> Tensor of a distributed batch


def _distributed(t):
    """Marks ``t`` as (a part of) a distributed batch: ``run`` computes on it as one program."""
    _DISTRIBUTED[id(t)] = t
    return t


def _is_distributed(x):
    if isinstance(x, DistributedValues) or (isinstance(x, Tensor) and _DISTRIBUTED.get(id(x)) is x):
        return True
    a = x._value if isinstance(x, _TensorBase) else x
    return isinstance(a, jax.Array) and not is_tracer(a) and not a.is_fully_replicated


class DistributedValues:
    """Values of the replicas of a strategy, one per replica (``tf.distribute.DistributedValues``).

    ``strategy.run`` running once per replica returns its Tensors as ``PerReplica``
    values; ``strategy.experimental_local_results`` gives the values, ``strategy.reduce``
    combines them.

    Example:
        >>> import tapejax as tf
        >>> v = tf.distribute.DistributedValues((tf.constant(1.0), tf.constant(2.0)))
        >>> float(tf.distribute.get_strategy().reduce("SUM", v, axis=None))
        3.0
    """

    def __init__(self, values):
        self._values = tuple(values)

    def __str__(self):
        body = ",\n".join(f"  {i}: {v!s}" for i, v in enumerate(self._values))
        return f"{type(self).__name__}:{{\n{body}\n}}"

    def __repr__(self):
        body = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return f"{type(self).__name__}:{{\n{body}\n}}"


class PerReplica(DistributedValues):
    """What each replica computed, as TensorFlow's ``PerReplica`` (see :class:`DistributedValues`)."""


class _Extended:
    def __init__(self, strategy):
        self._strategy = strategy

    @property
    def worker_devices(self):
        """TensorFlow's names of this process's devices ('/job:localhost/replica:0/task:0/device:CPU:0')."""
        return tuple(_devices.device_name(d) for d in self._strategy.mesh.devices.flat
                     if d.process_index == jax.process_index())

    parameter_devices = worker_devices

    @property
    def should_checkpoint(self):
        return jax.process_index() == 0

    should_save_summary = should_checkpoint

    def colocate_vars_with(self, var):
        return contextlib.nullcontext()


def _host(x):
    return x._value if isinstance(x, _TensorBase) else x


def _raw_elements(dataset):
    """A dataset's elements as host (numpy) structures, without a detour through device 0."""
    elements = getattr(dataset, "_elements", None)
    return elements() if callable(elements) else iter(dataset)


class DistributedDataset:
    """A dataset whose batches are split over a strategy's devices (see
    :meth:`Strategy.experimental_distribute_dataset`). Iterable, as often as needed."""

    def __init__(self, strategy, elements, place):
        self._strategy = strategy
        self._elements = elements
        self._place = place

    def __iter__(self):
        if _vstate.tracing():
            _warn_options_in_graph()
        return DistributedIterator(self._elements(), self._place)

    @property
    def element_spec(self):
        for e in self._elements():
            return _spec_of(e)
        raise ValueError("element_spec of an empty distributed dataset.")


_OPTIONS_IN_GRAPH = (
    "To make it possible to preserve tf.data options across serialization boundaries, their "
    "implementation has moved to be part of the TensorFlow graph. As a consequence, the options value "
    "is in general no longer known at graph construction time. Invoking this method in graph mode "
    "retains the legacy behavior of the original implementation, but note that the returned value "
    "might not reflect the actual value of the options.")


def _warn_options_in_graph():
    # TensorFlow reads the dataset's options when a tf.function iterates a distributed dataset
    # and warns (once per process: Python's default filter, one source line).
    warnings.warn(_OPTIONS_IN_GRAPH, UserWarning, stacklevel=2)


class DistributedIterator:
    """An iterator of distributed batches: ``next(it)`` or ``it.get_next()``."""

    def __init__(self, elements, place):
        self._it = iter(elements)
        self._place = place

    def __iter__(self):
        return self

    def __next__(self):
        return self._place(next(self._it))

    def get_next(self):
        return next(self)


class InputContext:
    """What ``distribute_datasets_from_function`` tells each worker's ``dataset_fn``.

    Example:
        >>> import tapejax as tf
        >>> ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=0,
        ...                                  num_replicas_in_sync=8)
        >>> ctx.get_per_replica_batch_size(64)
        8
    """

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(_PER_REPLICA_BATCH.format(gbs=global_batch_size, n=self.num_replicas_in_sync))
        return global_batch_size // self.num_replicas_in_sync

    def __repr__(self):
        return (f"InputContext(num_input_pipelines={self.num_input_pipelines}, input_pipeline_id="
                f"{self.input_pipeline_id}, num_replicas_in_sync={self.num_replicas_in_sync})")


class InputOptions:
    """``tf.distribute.InputOptions``: accepted and ignored."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------

def _device(d):
    """The jax device a jax device or a TensorFlow device name ('/gpu:0', 'CPU:1') stands for."""
    if isinstance(d, jax.Device):
        return d
    try:
        found = _devices.resolve(_devices.parse(str(d).strip()), soft=False)
    except (ValueError, errors.InvalidArgumentError):
        found = None
    if found is None:
        raise ValueError(_BAD_DEVICE.format(device=d, available=[str(x) for x in jax.local_devices()]))
    return found


_EAGER_RUN_WARNING = (
    "Using {strategy} eagerly has significant overhead currently. We will be working on improving "
    "this in the future, but for now please wrap `call_for_each_replica` or `experimental_run` or "
    "`run` inside a tf.function to get the best performance.")
_EAGER_RUN_WARNINGS = [0]
_EAGER_RUN_LOCK = threading.Lock()


class MirroredStrategy(Strategy):
    """Synchronous data parallelism on the devices of one host (``tf.distribute.MirroredStrategy``).

    Variables created in :meth:`scope` are replicated on every device; each global
    batch is split over them; :meth:`run` compiles the step into one XLA SPMD
    program that all-reduces the gradients.

    Args:
        devices: jax devices or TensorFlow device names (``'/gpu:0'``); every
            local device when omitted.
        cross_device_ops: accepted for compatibility (XLA chooses the collectives).

    Raises:
        ValueError: for an unknown or repeated device.

    Example:
        >>> import tapejax as tf
        >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
        >>> strategy.num_replicas_in_sync
        1
    """

    def __init__(self, devices=None, cross_device_ops=None):
        # No devices (None, or an empty list such as the GPUs of a machine without any) means all
        # local devices, as in TensorFlow.
        devices = None if devices is None else list(devices)
        devs = jax.local_devices() if not devices else [_device(d) for d in devices]
        seen = set()
        for d in devs:
            if id(d) in seen:
                raise ValueError(_DUPLICATE_DEVICE.format(device=d))
            seen.add(id(d))
        super().__init__(devs)

    _EAGER_RUN_NAME = "MirroredStrategy"


class CrossDeviceOps:
    """How a :class:`MirroredStrategy` combines values across devices (``tf.distribute.CrossDeviceOps``).

    Accepted by ``MirroredStrategy(cross_device_ops=...)`` for compatibility: the step is one XLA
    SPMD program, and XLA chooses its collectives (NCCL on GPUs), whichever is given.
    """


class ReductionToOneDevice(CrossDeviceOps):
    """Reduce on one device, then broadcast (``tf.distribute.ReductionToOneDevice``); see
    :class:`CrossDeviceOps`."""

    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn


class _AllReduce(CrossDeviceOps):
    _NAME = ""

    def __init__(self, num_packs=1):
        if num_packs < 0:
            raise ValueError(f"{self._NAME} requires num_packs >= 0, but {num_packs} is specified")
        self.num_packs = num_packs


class NcclAllReduce(_AllReduce):
    """All-reduce with NVIDIA NCCL (``tf.distribute.NcclAllReduce``); see :class:`CrossDeviceOps`.

    Example:
        >>> import tapejax as tf
        >>> strategy = tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce())
    """
    _NAME = "NCCL all-reduce"


class HierarchicalCopyAllReduce(_AllReduce):
    """All-reduce along a hierarchy of devices (``tf.distribute.HierarchicalCopyAllReduce``);
    see :class:`CrossDeviceOps`.

    Example:
        >>> import tapejax as tf
        >>> strategy = tf.distribute.MirroredStrategy(
        ...     cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
    """
    _NAME = "HierarchicalCopy"


class CentralStorageStrategy(Strategy):
    """Variables kept in one place, computation on every GPU (``tf.distribute.experimental.CentralStorageStrategy``).

    As in TensorFlow, the compute devices are the local GPUs, or the CPU where there is none.
    JAX keeps a replicated Variable's copies equal, so this computes as a :class:`MirroredStrategy`
    over those devices.

    Args:
        compute_devices: device names (``'/gpu:0'``) or jax devices to compute on.
        parameter_device: accepted for compatibility.

    Example:
        >>> import tapejax as tf
        >>> strategy = tf.distribute.experimental.CentralStorageStrategy()
        >>> with strategy.scope():
        ...     v = tf.Variable(1.0)
        >>> print(v.numpy())
        1.0
    """

    def __init__(self, compute_devices=None, parameter_device=None):
        if compute_devices is None:
            gpus = [d for d in jax.local_devices() if d.platform == "gpu"]
            devs = gpus or jax.local_devices(backend="cpu")[:1]
        else:
            devs = [_device(d) for d in compute_devices]
        super().__init__(devs)


class OneDeviceStrategy(Strategy):
    """Everything on one device (``tf.distribute.OneDeviceStrategy``): Variables and batches
    are placed on it.

    Example:
        >>> import tapejax as tf
        >>> strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
        >>> with strategy.scope():
        ...     v = tf.Variable(1.0)
        >>> strategy.num_replicas_in_sync
        1
    """

    def __init__(self, device):
        super().__init__([_device(device)])


class _DefaultStrategy(Strategy):
    """The strategy in effect outside every scope: one replica, nothing placed."""

    def __init__(self):
        self._depth = 0
        self._mesh_cache = None

    @property
    def mesh(self):
        # Made on first use: creating it at import would start JAX's backend (too early for
        # jax.distributed.initialize).
        if self._mesh_cache is None:
            self._mesh_cache = Mesh(np.array(jax.local_devices()[:1], dtype=object), (BATCH_AXIS,))
        return self._mesh_cache

    @property
    def _mesh(self):
        return self.mesh

    @property
    def _replicated(self):
        return NamedSharding(self.mesh, PartitionSpec())

    @property
    def num_replicas_in_sync(self):
        return 1

    def _places_variables(self):
        return False

    def _place_batch(self, element):
        return _to_tensors(element)

    def experimental_distribute_dataset(self, dataset, options=None):
        return dataset

    def reduce(self, reduce_op, value, axis=None):
        """As TF's default strategy: with ``axis=None`` the value itself (one replica, nothing to
        combine: ``reduce("SUM", 1., axis=None)`` is ``1.0``); with an axis, the sum or mean over it."""
        op = _reduce_op(reduce_op)
        if axis is None and not isinstance(value, DistributedValues):
            return value
        return super().reduce(op, value, axis)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext())

    def experimental_local_results(self, value):
        return jax.tree_util.tree_map(lambda x: (x,), value, is_leaf=_is_tensor_leaf) \
            if not isinstance(value, (_TensorBase, jax.Array)) else (value,)

    def gather(self, value, axis):
        return value if isinstance(value, _TensorBase) else Tensor(to_array(value))

    def __repr__(self):
        return "<tf.distribute default strategy (one replica)>"


_default = _DefaultStrategy()


def _tf_config_cluster():
    """(coordinator address, number of workers, this worker's index) from TF_CONFIG, or None."""
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        return None
    try:
        cfg = json.loads(raw)
        cluster = cfg.get("cluster", {})
        task = cfg.get("task", {})
        workers = list(cluster.get("chief", [])) + list(cluster.get("worker", []))
        kind, index = task.get("type", "worker"), int(task.get("index", 0))
    except (ValueError, AttributeError, TypeError) as e:
        raise ValueError(_BAD_TF_CONFIG.format(value=raw, error=e)) from None
    if kind == "worker" and cluster.get("chief"):
        index += len(cluster["chief"])
    return workers[0], len(workers), index


def _initialize_cluster(cluster_resolver=None):
    """Starts jax.distributed from TF_CONFIG (or a resolver), unless it is running already."""
    if jax.distributed.is_initialized():
        return
    spec = None
    if cluster_resolver is not None and hasattr(cluster_resolver, "cluster_spec"):
        cluster = cluster_resolver.cluster_spec()
        cluster = cluster.as_dict() if hasattr(cluster, "as_dict") else dict(cluster)
        workers = list(cluster.get("chief", [])) + list(cluster.get("worker", []))
        index = int(getattr(cluster_resolver, "task_id", 0) or 0)
        if getattr(cluster_resolver, "task_type", "worker") == "worker" and cluster.get("chief"):
            index += len(cluster["chief"])
        spec = (workers[0], len(workers), index) if workers else None
    else:
        spec = _tf_config_cluster()
    if spec is None or spec[1] <= 1:
        return
    address, n, index = spec
    try:
        jax.distributed.initialize(coordinator_address=address, num_processes=n, process_id=index)
    except RuntimeError as e:
        if "before" in str(e) or "backend" in str(e).lower():
            raise RuntimeError(_LATE_INITIALIZE.format(n=n)) from e
        raise


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous data parallelism over every device of several processes (hosts).

    Built on ``jax.distributed.initialize``: creating the strategy starts the
    cluster described by ``TF_CONFIG`` (as in TensorFlow), unless
    ``jax.distributed.initialize`` was already called; the mesh then holds every
    device of every process (``jax.devices()``). Without a cluster it behaves like
    :class:`MirroredStrategy` over ``jax.devices()``.

    Launch one process per host with the same script and a ``TF_CONFIG`` naming
    all workers (the first worker's address is the JAX coordinator)::

        TF_CONFIG='{"cluster": {"worker": ["host1:12345", "host2:12345"]},
                    "task": {"type": "worker", "index": 0}}' python train.py   # on host1
        TF_CONFIG='{... "task": {"type": "worker", "index": 1}}' python train.py  # on host2

    or call ``jax.distributed.initialize(...)`` (or rely on its SLURM / cloud TPU
    auto-detection) before creating the strategy. Create the strategy right after
    ``import tapejax as tf``: JAX must not have computed anything yet. Every worker
    runs the same program: it must build the same models and iterate the same
    dataset of global batches (use a fixed shuffle seed); each worker feeds only its
    devices' slices. Variables created in the scope start from worker 0's initial
    values; those created while a step is first traced (optimizer slots, layers
    built lazily inside a ``tf.function``) start from each worker's own, so build
    models before the first step or call ``tf.random.set_seed`` with the same seed
    on every worker. Values returned by ``strategy.reduce`` are local to each worker.

    Args:
        cluster_resolver: optional object with ``cluster_spec()``, ``task_type`` and
            ``task_id`` (like TensorFlow's ``TFConfigClusterResolver``).
        communication_options: accepted for compatibility.

    Example:
        >>> import jax, tapejax as tf
        >>> strategy = tf.distribute.MultiWorkerMirroredStrategy()
        >>> strategy.num_replicas_in_sync == len(jax.devices())
        True
    """

    _EAGER_RUN_NAME = "CollectiveAllReduceStrategy"   # TF's class behind this name

    def __init__(self, cluster_resolver=None, communication_options=None):
        started = _devices.backends_initialized()
        _initialize_cluster(cluster_resolver)
        super().__init__(jax.devices())
        if jax.process_count() == 1:
            # TensorFlow's warnings for local training: its collectives are configured when the
            # runtime starts (JAX's backends here), and NCCL needs GPUs.
            if started:
                _logs.warning("Collective ops is not configured at program startup. Some performance "
                              "features may not be enabled.")
            nccl = getattr(communication_options, "implementation", None) == \
                _Experimental.CommunicationImplementation.NCCL
            if nccl and not any(d.platform == "gpu" for d in jax.local_devices()):
                _logs.warning("Enabled NCCL communication but no GPUs detected/specified.")

    @property
    def cluster_resolver(self):
        return None


# ---------------------------------------------------------------------------
# Contexts
# ---------------------------------------------------------------------------

def get_strategy():
    """The strategy whose scope is active, else the default strategy (one replica, no-op scope).

    Example:
        >>> import tapejax as tf
        >>> tf.distribute.get_strategy().num_replicas_in_sync
        1
        >>> tf.distribute.has_strategy()
        False
    """
    return _state.stack[-1] if _state.stack else _default


def has_strategy():
    """Whether a non-default strategy's scope is active."""
    return bool(_state.stack) and not isinstance(_state.stack[-1], _DefaultStrategy)


def in_cross_replica_context():
    """True inside a strategy's scope but outside ``strategy.run``."""
    return has_strategy() and not _state.replica


class ReplicaContext:
    """The context of a step inside ``strategy.run`` (see :func:`get_replica_context`).

    The step computes on the global batch, so the "replica" it sees is all of them:
    ``all_reduce`` returns its value (already combined over replicas) and
    ``replica_id_in_sync_group`` is 0. Where ``strategy.run`` runs once per replica,
    ``replica_id_in_sync_group`` is the replica's.
    """

    def __init__(self, strategy):
        self.strategy = strategy

    @property
    def num_replicas_in_sync(self):
        return self.strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        strategy, replica = _vstate.distribution()
        return Tensor(jnp.asarray(replica if strategy is self.strategy and replica is not None else 0, jnp.int32))

    def all_reduce(self, reduce_op, value, options=None):
        _reduce_op(reduce_op)
        return value

    def merge_call(self, merge_fn, args=(), kwargs=None):
        return merge_fn(self.strategy, *args, **(kwargs or {}))


def get_replica_context():
    """The :class:`ReplicaContext` inside ``strategy.run`` or outside every scope; ``None``
    in a strategy's scope outside ``run`` (cross-replica context), as in TensorFlow."""
    if _state.replica:
        return ReplicaContext(_state.replica[-1])
    if has_strategy():
        return None
    return ReplicaContext(_default)


# ---------------------------------------------------------------------------
# experimental: model sharding
# ---------------------------------------------------------------------------

def _sharding_spec(spec):
    if spec is None:
        return PartitionSpec()
    if isinstance(spec, str):
        spec = (spec,)
    entries = list(spec)
    # P('batch', None) and P('batch') are one layout, but not equal: jit would compile twice.
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)


def shard(variable, partition_spec, strategy=None):
    """Lays a Variable out over the strategy's devices with a ``jax.sharding`` PartitionSpec.

    For a layer too big for one device: ``shard(dense.kernel, PartitionSpec(None,
    'batch'))`` splits the kernel's output dimension over every device. Compiled
    steps (``tf.function``) keep the layout: the new value the step assigns is
    constrained to it, and optimizer slots created for the Variable afterwards get
    it too (shard before the first training step). XLA inserts the communication
    the sharded computation needs.

    Args:
        variable: a Variable created in a strategy's scope.
        partition_spec: a ``jax.sharding.PartitionSpec`` (or tuple) naming the mesh
            axis ``'batch'`` for each split dimension, ``None`` for whole ones;
            ``PartitionSpec()`` (or ``None``) replicates.
        strategy: the strategy whose mesh to use (by default the one the Variable
            was placed by, else the current one).

    Returns:
        The Variable.

    Raises:
        ValueError: no mesh, an unknown axis, too many entries, or a dimension that
            does not split evenly.

    Example:
        >>> import tapejax as tf
        >>> from jax.sharding import PartitionSpec as P
        >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
        >>> with strategy.scope():
        ...     layer = tf.keras.layers.Dense(4)
        ...     layer.build((None, 3))
        >>> k = tf.distribute.experimental.shard(layer.kernel, P(None, "batch"))
        >>> k._value.sharding.spec
        P(None, 'batch')
    """
    spec = _sharding_spec(partition_spec)
    if strategy is not None:
        mesh = strategy.mesh
    elif variable._sharding is not None:
        mesh = variable._sharding.mesh
    elif has_strategy():
        mesh = get_strategy().mesh
    else:
        raise ValueError(_SHARD_NO_MESH.format(name=getattr(variable, "name", variable)))
    shape = tuple(variable._value.shape)
    if len(spec) > len(shape):
        raise ValueError(_SHARD_RANK.format(spec=spec, n=len(spec), name=variable.name, rank=len(shape)))
    for dim, (size, names) in enumerate(zip(shape, spec)):
        if names is None:
            continue
        names = (names,) if isinstance(names, str) else tuple(names)
        parts = 1
        for nm in names:
            if nm not in mesh.shape:
                raise ValueError(_SHARD_AXIS.format(spec=spec, axis=nm, axes=tuple(mesh.axis_names)))
            parts *= mesh.shape[nm]
        if size % parts:
            raise ValueError(_SHARD_UNEVEN.format(dim=dim, name=variable.name, size=size, parts=parts))
    _vstate.place(variable, NamedSharding(mesh, spec))
    return variable


class _Experimental:
    """``tf.distribute.experimental``: model sharding, and TensorFlow's experimental aliases."""

    shard = staticmethod(shard)
    PartitionSpec = PartitionSpec
    MultiWorkerMirroredStrategy = MultiWorkerMirroredStrategy
    CentralStorageStrategy = CentralStorageStrategy

    class CommunicationImplementation:
        AUTO, RING, NCCL = "AUTO", "RING", "NCCL"

    CollectiveCommunication = CommunicationImplementation

    class CommunicationOptions:
        def __init__(self, bytes_per_pack=0, timeout_seconds=None, implementation=None):
            self.bytes_per_pack = bytes_per_pack
            self.timeout_seconds = timeout_seconds
            self.implementation = implementation


experimental = _Experimental()
