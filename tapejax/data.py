"""tf.data on numpy: lazy, re-iterable pipelines that yield tapejax Tensors.

Elements are nested tuples / dicts of numpy arrays; iteration converts the leaves
to Tensors (``as_numpy_iterator`` leaves them as numpy). Pipelines that start with
``from_tensor_slices`` and only reorder or select elements (``shuffle``, ``take``,
``skip``, ``repeat``, ``shard``) carry indices instead of elements, so ``batch``
gathers each batch with one fancy index per array instead of stacking examples.

Background work is real, as in TF: ``prefetch`` fills a bounded queue from a thread,
``map(num_parallel_calls=N)`` runs the map function on a pool of N threads (results in
input order unless ``deterministic=False``), and ``interleave(num_parallel_calls=N)`` reads
its open inputs on their own threads. Exceptions raised there are raised by the ``next``
that reaches them; an iterator that is closed or dropped stops its threads. Threads help
where the work waits with the GIL released (I/O, ``time.sleep``, NumPy / JAX kernels);
``batch(num_parallel_calls=...)`` is accepted (a batch is one gather or stack already).

Files: ``TextLineDataset``, ``TFRecordDataset`` (``tf.io.TFRecordWriter`` writes the
files), ``FixedLengthRecordDataset``, ``Dataset.list_files``, and
``experimental.CsvDataset`` / ``experimental.make_csv_dataset``, without TensorFlow.
String elements are bytes (NumPy object arrays, what TF's ``.numpy()`` gives).

Other loaders: ``Model.fit`` takes any re-iterable object yielding ``(x, y)`` batches of
arrays, such as a grain ``MapDataset`` / ``IterDataset`` / ``DataLoader`` (checked with
grain 0.2.18), as well as a Python generator of batches.

Example:
    >>> import numpy as np, tapejax as tf
    >>> ds = tf.data.Dataset.from_tensor_slices((np.arange(5.0), np.arange(5)))
    >>> for x, y in ds.batch(2, drop_remainder=True):
    ...     print(x.numpy(), y.numpy())
    [0. 1.] [0 1]
    [2. 3.] [2 3]
"""
import collections
import concurrent.futures
import contextlib
import copy
import csv
import enum
import functools
import glob
import inspect
import io
import itertools
import os
import queue
import random as _pyrandom
import sys
import threading
import types
import time

import jax
import numpy as np

from ._core.tensor import refined_shape as _refined_shape
from ._core.tensor import (Tensor, _TensorBase, _python_default_dtype, TensorShape, check_python_kinds, from_numpy,
                           string_array, to_array, is_symbolic as _is_symbolic)
from ._core import dtypes as _dtypes, philox as _philox, state as _state, logs as _logs
from . import errors as errors
from . import io as _tfio
from ._core.variable import Variable
from ._staging.py_function import calls_run_eagerly as _calls_run_eagerly, graph_function_args as _graph_args
from ._staging.function import TensorSpec as _TensorSpecBase
from .ops.array_ops import convert_to_tensor as _convert_to_tensor
from .ragged import RaggedTensor, RaggedTensorSpec
from .sparse import SparseTensor, SparseTensorSpec
from .experimental import extension_type as _ext

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
INFINITE = INFINITE_CARDINALITY
UNKNOWN = UNKNOWN_CARDINALITY


# ---------------------------------------------------------------------------
# Structures: nested tuples / dicts with array leaves (lists are tensors, as in TF)
# ---------------------------------------------------------------------------

def _is_leaf(x):
    return not isinstance(x, (tuple, dict))


def _padded_sizes(shape, spec):
    """A component's ``padded_shapes`` entry as a list of sizes, None where the batch decides."""
    if isinstance(shape, TensorShape):
        shape = shape.as_list() if shape.rank is not None else [None] * len(spec.shape)
    elif isinstance(shape, (_TensorBase, np.ndarray, jax.Array)):
        shape = np.asarray(shape._value if isinstance(shape, _TensorBase) else shape).tolist()
    if shape is None and spec.shape is not None:
        shape = [None] * len(spec.shape)     # an unknown shape: every dimension to the batch's largest
    elif isinstance(shape, (int, np.integer)):
        shape = [shape]     # TF's as_shape: one number is a 1-D shape (`padded_shapes=5` is [5])
    sizes = [None if d is None or int(d) < 0 else int(d) for d in shape]
    if spec.shape is not None and len(sizes) != len(spec.shape):
        raise ValueError(f"The padded shape {shape} is not compatible with the shape {tuple(spec.shape)} "
                         "of the corresponding input component: give one size per dimension (None or -1 "
                         "to pad to the largest in the batch).")
    return sizes


def _padding_value(value, spec):
    """A ``padding_values`` entry checked as TF's padded_batch does: converted as a tensor (a Python
    int is int32, a float float32), a scalar of the component's dtype."""
    t = _convert_to_tensor(value)
    if t.shape.rank != 0:
        raise ValueError(f"Invalid `padding_values`. `padding_values` values should be scalars, but got "
                         f"{tuple(t.shape)}.")
    if t.dtype != spec.dtype:
        raise TypeError(f"Invalid `padding_values`. `padding_values` values type {t.dtype} does not match "
                        f"type {spec.dtype} of the corresponding input component.")
    return np.asarray(t._value)


def _default_padding(dtype):
    return b"" if dtype.kind in "SUO" else 0


def _flatten(s, is_leaf=_is_leaf):
    """Leaves and treedef of an element; dicts keep their own key order when unflattened (TF's
    ``nest`` packs a dict in its order; JAX's pytrees sort the keys)."""
    leaves, tree = jax.tree_util.tree_flatten(s, is_leaf=is_leaf)
    order = _key_order(s, is_leaf)
    return leaves, (tree if order is None else _OrderedTree(tree, order))


def _key_order(s, is_leaf):
    """None where sorted keys are the structure's order; else each dict's keys, nested."""
    if is_leaf(s):
        return None
    if isinstance(s, dict):
        kids = {k: _key_order(v, is_leaf) for k, v in s.items()}
        try:
            in_order = list(s) == sorted(s)
        except TypeError:
            in_order = False
        return None if in_order and all(k is None for k in kids.values()) else (list(s), kids)
    kids = [_key_order(v, is_leaf) for v in s]
    return None if all(k is None for k in kids) else kids


def _reordered(s, order):
    if order is None:
        return s
    if isinstance(s, dict):
        keys, kids = order
        return type(s)((k, _reordered(s[k], kids[k])) for k in keys)
    parts = [_reordered(v, o) for v, o in zip(s, order)]
    return type(s)(*parts) if hasattr(s, "_fields") else type(s)(parts)


class _OrderedTree:
    """A treedef whose ``unflatten`` gives dicts the key order of the structure it came from."""

    __slots__ = ("_tree", "_order")

    def __init__(self, tree, order):
        self._tree, self._order = tree, order

    def unflatten(self, leaves):
        return _reordered(self._tree.unflatten(leaves), self._order)

    def __getattr__(self, name):
        return getattr(self._tree, name)

    def __eq__(self, other):
        return self._tree == getattr(other, "_tree", other)

    def __hash__(self):
        return hash(self._tree)

    def __repr__(self):
        return repr(self._tree)


def _map(f, s):
    leaves, tree = _flatten(s)
    return tree.unflatten([f(x) for x in leaves])


def _to_array(x):
    """A leaf as a numpy array with the dtype JAX will give it (TF's conversion for Python data)."""
    if isinstance(x, _ext.ExtensionType):   # its tensors as the pipeline holds them (NumPy)
        return _ext.rebuilt(x, [_to_array(c) for c in _ext.components(x)])
    if isinstance(x, Dataset) or _is_composite(x):
        return x  # a dataset-valued component (``window``'s windows) stays a Dataset; ragged and sparse ones too
    if getattr(_NO_PEEK, "on", False) and isinstance(getattr(x, "_value", x), jax.core.Tracer):
        return getattr(x, "_value", x)   # a dataset made while its spec is traced (flat_map's function)
    if isinstance(x, (_TensorBase, jax.Array)):
        # Pipelines run on the host, like TF's: one copy here, then cheap numpy slicing.
        x = np.asarray(x._value if isinstance(x, _TensorBase) else x)
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        a = np.asarray(x)
    elif isinstance(x, list) and _has_tensor(x):
        # A list of Tensors packs as tf.convert_to_tensor packs it: their dtype (int64 stays int64).
        a = np.asarray(_convert_to_tensor(x)._value)
    else:
        a = np.asarray(x)
        if a.dtype.kind in "fiuc":
            a = _python_default_dtype(x)
        elif a.dtype.kind in "US":
            a = string_array(np.array(x, dtype=object))   # NumPy's fixed-width bytes drop trailing NULs
    if a.dtype.kind in "fiucb":
        dt = jax.dtypes.canonicalize_dtype(a.dtype)
        if a.dtype != dt:
            a = a.astype(dt)
    elif a.dtype.kind in "US":
        a = string_array(a)  # text as string tensors hold it: bytes
    return a


def _has_tensor(x):
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    return isinstance(x, _TensorBase)


def _tensor(a):
    if isinstance(a, _ext.ExtensionType):
        return _ext.rebuilt(a, [_tensor(c) for c in _ext.components(a)])
    if isinstance(a, (Dataset, RaggedTensor, SparseTensor)):
        return a
    a = np.array(a, dtype=object) if isinstance(a, (bytes, str)) else np.asarray(a)   # (NumPy's "S" drops NULs)
    if a.dtype.kind in "OUS":
        return Tensor(string_array(a))  # a string tensor (host NumPy bytes)
    return Tensor(from_numpy(a))


def _numpy_component(a):
    if isinstance(a, _ext.ExtensionType):   # (TF raises this when the iterator is made: its spec says)
        raise TypeError("`tf.data.Dataset.as_numpy_iterator()` is not supported for datasets that produce values "
                        f"of type {type(a)}")
    if isinstance(a, (Dataset, bytes, str)):
        return a
    return np.asarray(a)[()] if np.ndim(a) == 0 else np.asarray(a)


def _to_tensors(e):
    return _map(_tensor, e)


def _to_numpy(e):
    return _map(np.asarray, e)


def _call(fn, e):
    """TF calls ``fn(*element)`` for tuple elements and ``fn(element)`` otherwise. A list returned
    is a tuple of components, as in TF (the list ``tf.py_function`` returns need not stack)."""
    t = e if all(isinstance(l, (Tensor, Dataset)) for l in _flatten(e)[0]) else _to_tensors(e)
    with _graph_args():    # TF runs a dataset function as a graph
        if isinstance(t, tuple) and not hasattr(t, "_fields"):
            out = fn(*t)
        else:
            out = fn(t)
    return tuple(out) if isinstance(out, list) else out


def _stack(elems):
    leaves = [_flatten(e)[0] for e in elems]
    if any(isinstance(l, Dataset) for l in leaves[0]):
        raise TypeError("Cannot batch elements that are Datasets (the windows made by ds.window(n)). "
                        "Batch each window instead: ds.window(n).flat_map(lambda w: w.batch(n)).")
    tree = _flatten(elems[0])[1]
    return tree.unflatten([_stack_leaf([l[i] for l in leaves]) for i in range(len(leaves[0]))])


def _unstack(batch):
    leaves, tree = _flatten(batch)
    leaves = [l if _is_composite(l) else np.asarray(l) for l in leaves]
    for i in range(_nrows(leaves[0]) if leaves else 0):
        yield tree.unflatten([_row(l, i) for l in leaves])


# ---------------------------------------------------------------------------
# Composite components: RaggedTensor and SparseTensor leaves, as TF's tf.data holds them
# ---------------------------------------------------------------------------

class _RaggedRow(np.ndarray):
    """A row of a ragged component (TF's ``RaggedTensorSpec`` of ragged rank 0): a dense array
    when read, rows of a RaggedTensor when batched."""


def _ragged_row(x):
    return np.asarray(x._value if isinstance(x, _TensorBase) else x).view(_RaggedRow)


def _is_composite(x):
    return isinstance(x, (RaggedTensor, SparseTensor, _RaggedRow, _ext.ExtensionType))


def _sparse_rows(sp, rows, batched=True):
    """The rows ``rows`` of a SparseTensor, as a batch (``batched``) or, for one row, without
    the leading dimension."""
    idx = sp._indices
    pos, keep = [], []
    for j, r in enumerate(np.asarray(rows).reshape(-1)):
        hit = np.flatnonzero(idx[:, 0] == r)
        keep.append(hit)
        pos.append(np.full(len(hit), j))
    keep = np.concatenate(keep + [np.zeros(0, np.int64)]).astype(np.int64)
    pos = np.concatenate(pos + [np.zeros(0, np.int64)]).astype(np.int64)
    values = _tensor(np.asarray(sp.values._value)[keep])
    if not batched:
        return SparseTensor(idx[keep][:, 1:], values, sp._shape[1:])
    return SparseTensor(np.concatenate([pos[:, None], idx[keep][:, 1:]], axis=1), values,
                        np.concatenate([[len(np.asarray(rows).reshape(-1))], sp._shape[1:]]))


def _row(leaf, i):
    """Element ``i`` of a batched component."""
    if isinstance(leaf, _ext.ExtensionType):   # TensorFlow's ExtensionTypeBatchEncoder: each component's
        return _ext.rebuilt(leaf, [_row(c, i) for c in _ext.components(leaf)], _ext.UNBATCH)
    if isinstance(leaf, RaggedTensor):
        r = leaf[int(i)]
        return r if isinstance(r, RaggedTensor) else _ragged_row(r)
    if isinstance(leaf, SparseTensor):
        return _sparse_rows(leaf, [i], batched=False)
    return leaf[i]


def _rows(leaf, idx):
    """The elements ``idx`` (an int array or a slice) of a batched component, as a batch."""
    if isinstance(leaf, _ext.ExtensionType):
        comps = [_rows(c, idx) for c in _ext.components(leaf)]
        return _ext.rebuilt(_ext.rebuilt(leaf, comps, _ext.UNBATCH), comps, _nrows(comps[0]) if comps else None)
    if isinstance(leaf, RaggedTensor):
        return leaf._take(np.arange(_nrows(leaf))[idx])
    if isinstance(leaf, SparseTensor):
        return _sparse_rows(leaf, np.arange(_nrows(leaf))[idx])
    return leaf[idx]


def _nrows(leaf):
    if isinstance(leaf, _ext.ExtensionType):
        return _nrows(_ext.components(leaf)[0])
    return int(np.shape(leaf)[0])


def _stack_leaf(xs):
    """Elements of one component as a batch: a RaggedTensor for ragged rows, a SparseTensor of
    the largest dense shape for sparse ones."""
    if isinstance(xs[0], _ext.ExtensionType):
        comps = [_ext.components(x) for x in xs]
        return _ext.rebuilt(xs[0], [_stack_leaf([c[k] for c in comps]) for k in range(len(comps[0]))], len(xs))
    if isinstance(xs[0], (_RaggedRow, RaggedTensor)):
        if isinstance(xs[0], RaggedTensor):
            return RaggedTensor.from_row_lengths(_concat_ragged([x for x in xs]), [_nrows(x) for x in xs])
        values = np.concatenate([np.asarray(x) for x in xs]) if xs else np.zeros(0)
        return RaggedTensor.from_row_lengths(_tensor(values), [len(x) for x in xs])
    if isinstance(xs[0], SparseTensor):
        shape = np.max([x._shape for x in xs], axis=0)
        idx = np.concatenate([np.concatenate([np.full((len(x._indices), 1), j), x._indices], axis=1)
                              for j, x in enumerate(xs)])
        values = np.concatenate([np.asarray(x.values._value) for x in xs])
        return SparseTensor(idx, _tensor(values), np.concatenate([[len(xs)], shape]))
    xs = [np.asarray(x) for x in xs]
    for x in xs[1:]:
        if x.shape != xs[0].shape:
            raise errors.InvalidArgumentError(None, None, (
                "Cannot add tensor to the batch: number of elements does not match. Shapes are: [tensor]: "
                f"{list(x.shape)}, [batch]: {list(xs[0].shape)} [Op:IteratorGetNext] name: ".replace(", ", ",")
                .replace(",[batch]", ", [batch]")))
    return np.stack(xs)


def _concat_ragged(rts):
    """The rows of RaggedTensors one after another."""
    if isinstance(rts[0], RaggedTensor):
        return RaggedTensor.from_row_lengths(_concat_ragged([r.values for r in rts]),
                                             np.concatenate([np.asarray(r.row_lengths()) for r in rts]))
    return _tensor(np.concatenate([np.asarray(r._value) for r in rts]))


def _composite_spec(a):
    if isinstance(a, _ext.ExtensionType):
        return _ext.type_spec_from_value(a)
    if isinstance(a, _RaggedRow):
        return RaggedTensorSpec(a.shape, _tensor(a[:0]).dtype, 0)
    if isinstance(a, RaggedTensor):
        return RaggedTensorSpec(a.shape, a.dtype, a.ragged_rank)
    return SparseTensorSpec(a.shape, a.dtype)


def _batched_spec(s, lead):
    """The spec of a batch of elements of spec ``s``."""
    if isinstance(s, _ext.ExtensionTypeSpec):
        return s._batch(lead) if hasattr(s, "_batch") else s
    if isinstance(s, RaggedTensorSpec):
        return RaggedTensorSpec([lead] + list(s.shape), s.dtype, s.ragged_rank + 1)
    if isinstance(s, SparseTensorSpec):
        return SparseTensorSpec([lead] + list(s.shape), s.dtype)
    return TensorSpec(None if s.shape is None else (lead,) + tuple(s.shape), s.dtype)


def _unbatched_spec(s):
    """The spec of the elements of a batch of spec ``s``."""
    if isinstance(s, _ext.ExtensionTypeSpec):
        return s._unbatch() if hasattr(s, "_unbatch") else s
    if isinstance(s, RaggedTensorSpec):
        return RaggedTensorSpec(list(s.shape)[1:], s.dtype, max(s.ragged_rank - 1, 0))
    if isinstance(s, SparseTensorSpec):
        return SparseTensorSpec(list(s.shape)[1:], s.dtype)
    return TensorSpec(None if s.shape is None else s.shape[1:], s.dtype)


# ---------------------------------------------------------------------------
# shuffle: TF's ShuffleDatasetOp (shuffle_dataset_op.cc) and its seed generators
# ---------------------------------------------------------------------------

_PEEKING = threading.local()   # set while element_spec looks at a first element


class _PhiloxWords:
    """TF's ``SingleSampleAdapter<PhiloxRandom>(seed, seed2)``: its uint32 words in order.

    The key is ``seed``, the counter's high 64 bits ``seed2``; each counter gives four
    words, first to last. Words are computed on the host in chunks of ``4 * blocks``.
    """

    def __init__(self, seed, seed2, blocks=256):
        self._key = tuple(np.full(1, w, np.uint32) for w in _philox.split_u64(seed))
        self._high = _philox.split_u64(seed2)
        self._blocks, self._next_block = blocks, 0
        self._words, self._pos = [], 0

    def _refill(self):
        b = np.arange(self._next_block, self._next_block + self._blocks, dtype=np.uint64)
        counter = ((b & np.uint64(0xFFFFFFFF)).astype(np.uint32), (b >> np.uint64(32)).astype(np.uint32),
                   *(np.full(len(b), w, np.uint32) for w in self._high))
        with np.errstate(over="ignore"):
            self._words = np.stack(_philox.philox(counter, self._key), axis=1).reshape(-1).tolist()
        self._next_block += self._blocks
        self._pos = 0

    def __call__(self):
        if self._pos == len(self._words):
            self._refill()
        self._pos += 1
        return self._words[self._pos - 1]


class _ShuffleSeeds:
    """The seeds of each new iterator of one shuffle dataset, as TF's seed generators give them.

    ``(seed, seed2)`` come from ``tf.random.get_seed`` (random ones when neither a global nor
    an op seed is set, as TF's ``RandomSeeds``). Without reshuffling every iterator uses them
    (``FixedSeedGenerator``); with it, each iterator takes the next two words of a Philox stream
    seeded with them (``RandomSeedGenerator``). A peek for ``element_spec`` takes none.
    """

    def __init__(self, seed, reshuffle):
        seeds = _random.get_seed(seed)
        if seeds[0] is None:
            seeds = tuple(_pyrandom.SystemRandom().getrandbits(63) for _ in range(2))
        self._seeds, self._reshuffle = seeds, reshuffle
        self._stream = _PhiloxWords(*seeds, blocks=16)
        self._lock = threading.Lock()

    def next(self):
        if not self._reshuffle:
            return self._seeds
        with self._lock:
            stream = copy.deepcopy(self._stream) if getattr(_PEEKING, "on", False) else self._stream
            return stream(), stream()


def _shuffled(items, buffer_size, random):
    """TF's shuffle iterator: fill the buffer (up to ``buffer_size``), output the element
    ``random() % size`` places after the buffer's start, move the start element into its
    slot, repeat. The buffer is a dict keyed by absolute position (TF's ring buffer)."""
    buf, start, end = {}, 0, 0
    it = iter(items)
    live = True
    while True:
        if live and end - start < buffer_size:
            for x in itertools.islice(it, buffer_size - (end - start)):
                buf[end] = x
                end += 1
            live = end - start == buffer_size
        if start == end:
            return
        i = start + random() % (end - start)
        out = buf.pop(i)
        if i != start:
            buf[i] = buf.pop(start)
        start += 1
        yield out


def _multinomial_picks(seed_words, logits):
    """TF's ``StatelessMultinomial(logits, 1, seed=(a, b))`` for consecutive pairs ``(a, b)`` of
    ``seed_words`` (a ``RandomDataset``'s uint32 values, batched by two, as
    ``sample_from_datasets`` feeds them): the index each draw picks. ``logits`` is one row
    (float32 or float64) or one row per draw. The draw is ``Uint64ToDouble`` of the first two
    Philox words times the total of ``exp(logit - max)``, located in their running sums."""
    words = np.asarray(seed_words, np.uint32)
    a, b = words[0::2], words[1::2]
    zero = np.zeros_like(a)
    with np.errstate(over="ignore"):
        m = [np.asarray(x) for x in _philox.philox((a, zero, b, zero), tuple(np.uint32(k) for k in _philox._SCRAMBLE_KEY))]
        w = [np.asarray(x) for x in _philox.philox((zero, zero, m[2], m[3]), (m[0], m[1]))]
    mantissa = ((w[0] & np.uint32(0xFFFFF)).astype(np.uint64) << np.uint64(32)) | w[1].astype(np.uint64)
    u = (mantissa | np.uint64(1023 << 52)).view(np.float64) - 1.0
    rows = np.broadcast_to(np.atleast_2d(logits), (len(a), np.shape(logits)[-1]))
    finite = np.isfinite(rows)
    top = np.max(np.where(finite, rows, -np.inf), axis=1, keepdims=True).astype(np.float64)
    cdf = np.cumsum(np.where(finite, np.exp(rows.astype(np.float64) - top), 0.0), axis=1)
    return [int(np.searchsorted(c, x * c[-1], side="right")) for c, x in zip(cdf, u)]


def _acceptance_with_mixing(initial, target):
    """TF's ``_calculate_acceptance_probs_with_mixing``: per-class acceptance probabilities and
    the probability of drawing from the original data, in float32."""
    initial, target = np.asarray(initial, np.float32), np.asarray(target, np.float32)
    ratio = target / (initial + np.finfo(np.float32).tiny)
    lo, hi = ratio.min(), ratio.max()
    return ((ratio - lo) / (hi - lo)).astype(np.float32), np.float32(lo)


def _estimated_initial_dist(target, classes, batch=32, smoothing=10):
    """TF's ``_estimate_initial_dist_ds``: the running class frequencies (from ``smoothing``
    counts each), one estimate per element, updated every ``batch`` elements."""
    def update(seen, c):
        seen = np.asarray(seen) + np.bincount(np.asarray(c).ravel(), minlength=len(target)).astype(np.int64)
        dist = (seen / seen.sum()).astype(np.float32)
        return seen, np.tile(dist[None], (batch, 1))
    return classes.batch(batch).scan(np.full(len(target), smoothing, np.int64), update).unbatch()


class _StatefulUniform:
    """A stateful ``tf.random.uniform([])`` op (TF's PhiloxRandom kernel): each call reserves
    256 blocks of the stream for its one value, the first word of its block as a float."""

    def __init__(self, seeds, chunk=512):
        self._key = tuple(np.full(chunk, w, np.uint32) for w in _philox.split_u64(seeds[0]))
        self._high = tuple(np.full(chunk, w, np.uint32) for w in _philox.split_u64(seeds[1]))
        self._calls, self._chunk, self._values = 0, chunk, []

    def __call__(self):
        if not self._values:     # the next `chunk` calls' values at once
            block = 256 * (self._calls + np.arange(self._chunk, dtype=np.uint64))
            counter = ((block & np.uint64(0xFFFFFFFF)).astype(np.uint32), (block >> np.uint64(32)).astype(np.uint32),
                       *self._high)
            with np.errstate(over="ignore"):
                word = np.asarray(_philox.philox(counter, self._key)[0], np.uint32)
            floats = ((word & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)
            self._values = floats.tolist()[::-1]
        self._calls += 1
        return self._values.pop()


def _float_text(v):
    """A float as TF's logging prints it: 6 significant digits when they round-trip, else 9."""
    text = "%.6g" % v
    return text if np.float32(float(text)) == np.float32(v) else "%.9g" % v


def _rejection_filtered(dataset, accept_ds, init_ds, class_func, seed):
    """TF's ``_filter_ds``: ``(class, element)`` pairs kept with their class's acceptance
    probability, warning while over half the data would be rejected."""
    if seed is None:         # TF: the op seed of a random op built in a dataset function's graph
        global_seed = _random._Seeds.global_seed
        seeds = (None, None) if global_seed is None else (global_seed % _random._MAXINT32, 0)
    else:
        seeds = _random.get_seed(seed)
    if seeds[0] is None:
        seeds = tuple(_pyrandom.SystemRandom().getrandbits(63) for _ in range(2))

    def make():
        uniform, warned = _StatefulUniform(seeds), [0]

        def gather(accept_init, class_and_data):
            accept, initial = (np.asarray(t) for t in accept_init)
            rejected = np.float32(np.sum((1 - accept) * initial, dtype=np.float32))
            if rejected >= 0.5 and warned[0] < 10:
                warned[0] += 1
                print("Proportion of examples rejected by sampler is high: "
                      f"[{_float_text(rejected)}][{' '.join(map(_float_text, initial))}]"
                      f"[{' '.join(map(_float_text, accept))}]", file=sys.stderr)
            c, data = class_and_data
            return c, accept[int(np.asarray(c))], data
        pairs = (gather(a, cd) for a, cd in zip(Dataset.zip(accept_ds, init_ds)._elements(), classed._elements()))
        return ((c, d) for c, p, d in pairs if uniform() < p)

    def with_class(*x):     # one pass over the data, class_func vectorized as a map
        return class_func(*x), (x[0] if len(x) == 1 else x)
    classed = dataset.map(with_class)
    return Dataset(make, UNKNOWN_CARDINALITY, lambda: (dataset.map(class_func).element_spec, dataset.element_spec))


def _weights_row(ws, n):
    """One element of ``sample_from_datasets``' weights dataset as a row of logits."""
    ws = np.ravel(np.asarray(_flatten(ws)[0][0]))
    if ws.shape != (n,) or np.any(ws < 0) or not np.any(ws > 0):
        raise ValueError(f"sample_from_datasets: each element of the `weights` dataset must hold {n} "
                         f"non-negative weights, not all 0; got {ws.tolist()}.")
    with np.errstate(divide="ignore"):
        return np.log(ws if ws.dtype in (np.float32, np.float64) else ws.astype(np.float32))


def _random_dataset_choices(seeds, logits_rows, chunk=128):
    """The selector of ``sample_from_datasets``: ``Dataset.random(seed).batch(2)`` mapped by a
    stateless multinomial draw, for this iteration's ``seeds``. ``logits_rows``: an iterator of
    per-draw rows, or one constant row."""
    stream = _PhiloxWords(*seeds)
    constant = not hasattr(logits_rows, "__next__")
    while True:
        rows = logits_rows if constant else list(itertools.islice(logits_rows, chunk))
        n = chunk if constant else len(rows)
        if n == 0:
            return
        yield from _multinomial_picks([stream() for _ in range(2 * n)], rows)


class _ThreadCapture:
    """``sys.stdout`` while one thread traces a dataset function: what that thread prints goes to
    ``into`` (a StringIO, or nowhere with None); what other threads print (the program consuming
    the dataset while a parallel map's worker traces) goes on to the stream it stands for."""

    def __init__(self, stream, into):
        self._stream, self._into, self._thread = stream, into, threading.get_ident()

    def write(self, text):
        if threading.get_ident() != self._thread:
            return self._stream.write(text)
        return len(text) if self._into is None else self._into.write(text)

    def flush(self):
        if threading.get_ident() != self._thread:
            self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


# Swaps of sys.stdout (a trace capturing what its function prints) one at a time, so that each
# puts back the stream it replaced.
_STDOUT_SWAP = threading.RLock()


@contextlib.contextmanager
def _capturing_stdout(into):
    with _STDOUT_SWAP:
        stream = sys.stdout
        sys.stdout = _ThreadCapture(stream, into)
        try:
            yield
        finally:
            sys.stdout = stream


class _VectorizedMap:
    """``map_func`` traced once per chunk shape with ``jax.vmap`` and compiled.

    Falls back (returns None, for good) when tracing fails or the function reads a
    Variable: a Variable's value would be frozen into the compiled function, and
    stateful ops such as random draws must advance per element.
    """

    def __init__(self, fn):
        self.fn = fn
        self.ok = True
        self.out_tree = None
        self.jitted = jax.jit(self._batched)
        self.traced = set()              # the chunk shapes traced so far
        self.lock = threading.Lock()     # one trace at a time (a parallel map calls from threads)
        self.quiet = False               # True: the spec's trace printed what the function prints

    def _batched(self, chunk):
        def one(elem):
            out = _call(self.fn, _map(Tensor, elem))
            leaves, self.out_tree = _flatten(out)
            return [l._value if isinstance(l, _TensorBase) else jax.numpy.asarray(_to_array(l)) for l in leaves]
        return jax.vmap(one)(chunk)

    def __call__(self, chunk):
        if not self.ok:
            return None
        leaves = _flatten(chunk)[0]
        if any(np.asarray(l).dtype.kind in "OUS" for l in leaves):
            self.ok = False
            return None
        key = tuple((np.shape(l), np.asarray(l).dtype) for l in leaves)
        try:
            # A strict scope refuses Variables: a map function that reads one runs eagerly; so
            # does one calling tf.py_function (its Python function runs once per element).
            with _state.Scope(strict=True), _calls_run_eagerly():
                if key in self.traced:
                    out = self.jitted(chunk)
                else:
                    # Tracing runs Python (which may swap sys.stdout to mute prints): not concurrently.
                    with self.lock:
                        if not self.ok:
                            return None
                        if self.quiet:
                            with _capturing_stdout(None):
                                out = self.jitted(chunk)
                        else:
                            out = self.jitted(chunk)
                        self.traced.add(key)
        except Exception:  # noqa: BLE001 - not traceable: run eagerly, as written
            self.ok = False
            return None
        return self.out_tree.unflatten(out)


class _NoPeek(Exception):
    """An element_spec asked for while a map is made, that only a peek at an element would give."""


_NO_PEEK = threading.local()   # set while a transformation traces its function at construction


def _symbolic_struct(spec, dims):
    """A ``jax.ShapeDtypeStruct`` for a TensorSpec: each unknown dimension a symbol of its own."""
    if not isinstance(spec, TensorSpec) or spec.shape is None or spec.dtype == _dtypes.string:
        raise _NoPeek("not a traceable component")
    shape = tuple(next(dims) if d is None else d for d in spec.shape)
    return jax.ShapeDtypeStruct(shape, jax.dtypes.canonicalize_dtype(spec.dtype.as_numpy_dtype))


def _spec_of_abstract(a):
    return TensorSpec(tuple(d if isinstance(d, (int, np.integer)) else None for d in a.shape), a.dtype)


_VALUE_SHAPED = object()   # a traced function whose output shapes its input values decide


def _value_decides_shape(e):
    """Whether a trace failed because a shape depends on the values (``tf.fill([x], x)``,
    ``tf.range(x)``, ``tf.boolean_mask``): TensorFlow's shape inference leaves those sizes unknown.
    (A Python ``if`` on a tensor is not one: TF's AutoGraph traces it.)"""
    if isinstance(e, jax.errors.TracerBoolConversionError):
        return False
    if isinstance(e, (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError)):
        return True
    text = str(e)
    return "int() of a tensor" in text or "shape depends on the" in text


def _is_unbuilt_layer(obj):
    return getattr(obj, "built", True) is False and any(c.__name__ == "Layer" for c in type(obj).__mro__)


def _calls_unbuilt_layer(fn):
    """Whether ``fn`` (or a variable its code reads) is a Keras layer not built yet: built while
    the spec is traced, it would keep that trace's values (its first call builds it, eagerly)."""
    if _is_unbuilt_layer(fn):
        return True
    if not isinstance(fn, types.FunctionType):
        return False
    names, codes = set(), [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    cells = [c.cell_contents for c in fn.__closure__ or () if c.cell_contents is not None] \
        if all(_cell_full(c) for c in fn.__closure__ or ()) else []
    return any(_is_unbuilt_layer(v) for v in cells + [fn.__globals__.get(n) for n in names])


def _cell_full(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _spec_dataset(element_spec):
    """A dataset known by its spec only (a window while a function taking one is traced): its
    transformations compute their specs; reading an element raises."""
    def make():
        raise _NoPeek("a traced function read a dataset argument")
    return Dataset(make, UNKNOWN_CARDINALITY, lambda: element_spec)


class _Refusal(Exception):
    """An error a check met while a function was traced, raised as the transformation's own."""


def _traced_spec(fn, in_spec, call=_call, method=None, check=None):
    """The output spec of ``fn`` traced on ``in_spec`` as TensorFlow traces a dataset function:
    ``jax.eval_shape`` with a symbol for each unknown dimension, so an output dimension is known
    exactly where it follows from known input dimensions (``batch(2)`` then ``map`` keeps the
    batch dimension unknown); a Dataset argument (a window) is a dataset of that spec. With
    ``method`` the function returns a Dataset (``flat_map``): its element_spec. Returns
    ``(spec, printed)``: what the function printed while traced; ``spec`` None when the
    function cannot be traced so (string components, values that decide shapes, Variables,
    ``py_function``): the spec then comes from an element."""
    if _calls_unbuilt_layer(fn):
        return None, ""
    leaves, tree = _flatten(in_spec)
    n = sum(1 for s in leaves if isinstance(s, TensorSpec) and s.shape is not None for d in s.shape if d is None)
    dims = iter(jax.export.symbolic_shape(", ".join(f"d{i}" for i in range(n)))) if n else iter(())
    try:
        structs = [_symbolic_struct(s, dims) for s in leaves if not isinstance(s, _DatasetSpec)]
    except _NoPeek:
        return None, ""
    out_tree, dataset_spec = [], []

    def run(*xs):
        xs = iter(xs)
        args = [_spec_dataset(s.element_spec) if isinstance(s, _DatasetSpec) else Tensor(next(xs)) for s in leaves]
        for i, t in enumerate(a for a in args if isinstance(a, Tensor)):
            _state.name_input(t, f"args_{i}")     # TensorFlow's names of a dataset function's arguments
        out = call(fn, tree.unflatten(args))
        if check is not None:
            try:
                check(out)
            except Exception as e:  # noqa: BLE001 - the caller's error, raised after the trace
                raise _Refusal(e) from None
        if method is not None:
            dataset_spec.append(_as_dataset(out, method).element_spec)
            return []
        out_leaves, t = _flatten(out)
        out_tree.append(t)
        refined.append([_refined_shape(l) for l in out_leaves])
        return [l._value if isinstance(l, _TensorBase) else jax.numpy.asarray(_to_array(l)) for l in out_leaves]

    printed = io.StringIO()
    refined = []   # per output, the static shape set_shape gave it (TF's shape inference keeps it)
    before, _NO_PEEK.on = getattr(_NO_PEEK, "on", False), True
    try:
        with _capturing_stdout(printed), _state.Scope(strict=True, tracing=True), _calls_run_eagerly():
            out = jax.eval_shape(run, *structs)
    except _Refusal as e:
        raise e.args[0] from None
    except NameError:    # the function's own error, which no element changes: TF raises it when tracing
        raise
    except Exception as e:  # noqa: BLE001 - not traceable with unknown dimensions: an element tells
        return (_VALUE_SHAPED if _value_decides_shape(e) else None), ""
    finally:
        _NO_PEEK.on = before
    if method is not None:
        return dataset_spec[-1], printed.getvalue()
    specs = [_spec_of_abstract(o) for o in out]
    for i, shape in enumerate(refined[-1] if refined else ()):
        if shape is not None and specs[i].shape is not None and len(shape) == len(specs[i].shape):
            specs[i] = TensorSpec(tuple(a if a is not None else b for a, b in zip(specs[i].shape, shape)), specs[i].dtype)
    return out_tree[-1].unflatten(specs), printed.getvalue()


def _common_spec(datasets):
    """The element_spec of a dataset choosing among ``datasets``: TF's most specific compatible one."""
    spec = datasets[0].element_spec
    for d in datasets[1:]:
        spec = _compatible_spec(spec, d.element_spec, "")
    return spec


def _compatible_spec(a, b, method):
    """TensorFlow's most specific compatible spec of two elements' specs (``method``): the
    dimensions that differ become unknown; other structures or dtypes raise TypeError."""
    la, ta = _flatten(a)
    lb, tb = _flatten(b)
    if ta != tb or any(type(x) is not type(y) for x, y in zip(la, lb)):
        raise TypeError(f"Incompatible dataset elements:\n  {a} vs.   {b}")
    out = []
    for x, y in zip(la, lb):
        if not isinstance(x, TensorSpec):
            out.append(x)
            continue
        if x.dtype != y.dtype:
            raise TypeError(f"Incompatible dataset elements:\n  {a} vs.   {b}")
        if x.shape is None or y.shape is None or len(x.shape) != len(y.shape):
            out.append(TensorSpec(None, x.dtype))
        else:
            out.append(TensorSpec([d if d == e else None for d, e in zip(x.shape, y.shape)], x.dtype))
    return ta.unflatten(out)


class _EachCall:
    """``fn`` applied to elements one by one. An element whose call raises is consumed: the next
    ``next`` goes on with the element after it, as TensorFlow's map iterator does after an error
    (what ``ignore_errors`` relies on); a generator would end at the error."""

    def __init__(self, fn, elements):
        self.fn, self.it = fn, iter(elements)

    def __iter__(self):
        return self

    def __next__(self):
        return _map(_to_array, _call(self.fn, next(self.it)))


def _key_of(key_func, e):
    """``group_by_window``'s key of an element: an int64 scalar, as TensorFlow requires."""
    k = _call(key_func, e)
    dt = k.dtype if isinstance(k, _TensorBase) else _dtypes.as_dtype(np.asarray(_to_array(k)).dtype)
    if dt != _dtypes.int64:
        raise ValueError(f"Tensor conversion requested dtype int64 for Tensor with dtype {dt.name}: {k!r}")
    if np.ndim(k) != 0:
        raise ValueError(f"key_func must return a scalar int64 key, got shape {list(np.shape(k))}.")
    return int(np.asarray(k._value if isinstance(k, _TensorBase) else k))


class TensorSpec(_TensorSpecBase):
    """The shape and dtype of one component of a dataset element: a ``tf.TensorSpec`` (equal to
    one of the same shape and dtype, as in TensorFlow).

    Example:
        >>> import tapejax as tf
        >>> tf.data.Dataset.from_tensor_slices([[1.0, 2.0]]).element_spec
        TensorSpec(shape=(2,), dtype=tf.float32, name=None)
        >>> tf.data.Dataset.range(3).element_spec == tf.TensorSpec([], tf.int64)
        True
    """

    def __init__(self, shape, dtype=None, name=None):
        self.shape = None if shape is None else TensorShape(shape)   # None: unknown rank
        if dtype is not None and not isinstance(dtype, _dtypes.DType) and np.dtype(dtype).kind in "OUS":
            self.dtype = _dtypes.string
        else:
            self.dtype = _dtypes.as_dtype(dtype if dtype is not None else np.float32)
        self.name = name

    def __repr__(self):
        dtype = "string" if self.dtype == _dtypes.string else self.dtype.name
        shape = "<unknown>" if self.shape is None else self.shape
        return f"TensorSpec(shape={shape}, dtype=tf.{dtype}, name={self.name!r})"

    def __eq__(self, other):
        return (isinstance(other, _TensorSpecBase) and _shape_key(self.shape) == _shape_key(other.shape)
                and self.dtype == other.dtype and self.name == other.name)

    __hash__ = _TensorSpecBase.__hash__   # equal to a tf.TensorSpec: the same hash


def _shape_key(shape):
    return None if shape is None else tuple(shape)


class DatasetSpec:
    """The spec of a component that is itself a Dataset (``window``'s windows): the windows'
    ``element_spec``.

    Example:
        >>> import tapejax as tf
        >>> spec = tf.data.Dataset.range(4).window(2).element_spec
        >>> spec
        DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))
        >>> spec == tf.data.DatasetSpec(tf.TensorSpec([], tf.int64))
        True
    """

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec = element_spec

    @classmethod
    def from_value(cls, value):
        """The spec of the dataset ``value``.

        Example:
            >>> import tapejax as tf
            >>> tf.data.DatasetSpec.from_value(tf.data.Dataset.range(3))
            DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), TensorShape([]))
        """
        return cls(value.element_spec)

    @property
    def value_type(self):
        return Dataset

    def is_compatible_with(self, spec_or_value):
        other = DatasetSpec(spec_or_value.element_spec) if isinstance(spec_or_value, Dataset) else spec_or_value
        return isinstance(other, DatasetSpec) and _specs_compatible(self.element_spec, other.element_spec)

    def _tf_bind(self, value):
        """``value`` as an argument of a tf.function with this spec in its input_signature."""
        if isinstance(value, Dataset) and self.is_compatible_with(value):
            return value
        raise TypeError(f"Can not cast {value!r} to {self!r}")

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and self.element_spec == other.element_spec

    def __hash__(self):
        return hash(("DatasetSpec", repr(self.element_spec)))


_DatasetSpec = DatasetSpec


def _specs_compatible(a, b):
    """Whether two element_specs are compatible (same structure, each leaf compatible)."""
    (la, ta), (lb, tb) = _flatten(a), _flatten(b)
    return ta == tb and all(x.is_compatible_with(y) if hasattr(x, "is_compatible_with") else x == y
                            for x, y in zip(la, lb))


def _spec_of(e):
    def spec(a):
        if isinstance(a, Dataset):
            return _DatasetSpec(a.element_spec)
        if _is_composite(a):
            return _composite_spec(a)
        if isinstance(a, jax.core.Tracer):
            return _spec_of_abstract(a)
        return TensorSpec(np.shape(a), np.asarray(a).dtype if not isinstance(a, jax.Array) else a.dtype)
    return _map(spec, e)


# ---------------------------------------------------------------------------
# Dataset
# ---------------------------------------------------------------------------

_NEEDS_FINITE = ("The dataset is {what}, so it has no length. Use ds.cardinality() (INFINITE_CARDINALITY "
                 "= -1, UNKNOWN_CARDINALITY = -2), or make it finite with ds.take(n).")



# Specs that stand for a value of their own kind in ``from_generator``'s ``output_signature``.
_SPEC_LEAVES = (_ext.ExtensionTypeSpec, RaggedTensorSpec, SparseTensorSpec)


def _generator_signature(output_types, output_shapes, output_signature):
    """``from_generator``'s declared dtypes and shapes (None: unknown rank), flat, with the
    structure and its printed form, as TF normalizes ``output_types``/``output_shapes``."""
    if output_signature is not None:
        for arg, what in ((output_types, "output_types"), (output_shapes, "output_shapes")):
            if arg is not None:
                raise TypeError(f"The `{what}` argument can not be used together with the "
                                "`output_signature` argument.")
        specs, tree = _flatten(output_signature)
        # An ExtensionType's spec stands for its value (checked against the spec when yielded).
        return ([sp if isinstance(sp, _SPEC_LEAVES) else _dtypes.as_dtype(sp.dtype) for sp in specs],
                [None if isinstance(sp, _SPEC_LEAVES) or sp.shape is None else tuple(sp.shape)
                 for sp in specs], tree, output_signature)
    if output_types is None:
        raise TypeError("To specify the output signature you need to provide either the "
                        "`output_signature` argument or the `output_types` argument.")
    types, tree = _flatten(output_types)
    shapes = [None] * len(types) if output_shapes is None else tree.flatten_up_to(output_shapes)
    shapes = [None if sh is None or (isinstance(sh, TensorShape) and sh.rank is None) else
              tuple(None if d is None else int(d) for d in (sh if isinstance(sh, (tuple, list, TensorShape)) else [sh]))
              for sh in shapes]
    return [_dtypes.as_dtype(t) for t in types], shapes, tree, output_types


def _generator_converter(types, shapes, tree, declared):
    """Converts one yielded element as TF's ``from_generator`` does (its ``generator_py_func``)."""
    strict = tree.num_leaves == 1 and tree.num_nodes == 1 and shapes[0] is None and not isinstance(
        types[0], _SPEC_LEAVES)
    structure_msg = ("`generator` yielded an element that did not match the expected structure. The expected "
                     "structure was {}, but the yielded element was {}.")

    def fail(msg):
        return errors.InvalidArgumentError(None, None, "TypeError: " + msg)

    def component(v, dt, shape):
        if isinstance(dt, _ext.ExtensionTypeSpec):
            if not (isinstance(v, dt.value_type) and dt.is_compatible_with(v)):
                raise fail(f"`generator` yielded an element that did not match the expected structure. The "
                           f"expected structure was {declared}, but the yielded element was {v}.")
            return _to_array(v)
        if isinstance(dt, SparseTensorSpec) and not isinstance(v, SparseTensor):
            raise fail(structure_msg.format(declared, v))     # TF's SparseTensor.from_value
        if isinstance(dt, RaggedTensorSpec):   # TF's convert_to_tensor_or_ragged_tensor
            try:
                return v if isinstance(v, RaggedTensor) else _convert_to_tensor(v)
            except (TypeError, ValueError):
                raise fail(structure_msg.format(declared, v)) from None
        if isinstance(dt, SparseTensorSpec):
            return v
        try:
            if strict:
                check_python_kinds(v, dt)
                a = string_array(v) if dt == _dtypes.string else np.asarray(to_array(v, dt))
            elif dt == _dtypes.string:
                a = string_array(v)
            else:
                a = np.asarray(v._value if isinstance(v, _TensorBase) else v, dtype=_dtypes.np_dtype(dt))
        except (TypeError, ValueError):
            if strict:
                raise fail(f"`generator` yielded an element that did not match the expected structure. The "
                           f"expected structure was {TensorSpec(None, dt)}, but the yielded element was {v}.") from None
            raise fail(f"`generator` yielded an element that could not be converted to the expected type. "
                       f"The expected type was {dt.name}, but the yielded element was {v}.") from None
        if shape is not None and (len(shape) != a.ndim or any(d is not None and d != n for d, n in zip(shape, a.shape))):
            raise fail(f"`generator` yielded an element of shape {a.shape} where an element of shape "
                       f"{TensorShape(shape)} was expected.")
        return _to_array(a)

    def convert(e):
        try:
            flat = tree.flatten_up_to(e)
        except (TypeError, ValueError):
            raise fail(f"`generator` yielded an element that did not match the expected structure. The expected "
                       f"structure was {declared}, but the yielded element was {e}.") from None
        out = [component(v, dt, sh) for v, dt, sh in zip(flat, types, shapes)]
        if any(isinstance(dt, (RaggedTensorSpec, SparseTensorSpec)) and not dt.is_compatible_with(v)
               for v, dt in zip(out, types)):    # TF's are_compatible(type_spec_from_value(element), signature)
            got = tree.unflatten([RaggedTensorSpec.from_value(v) if isinstance(v, RaggedTensor)
                                  else SparseTensorSpec.from_value(v) if isinstance(v, SparseTensor)
                                  else TensorSpec(v.shape, v.dtype) if isinstance(v, _TensorBase)
                                  else TensorSpec(np.shape(v), _dtypes.as_dtype(np.asarray(v).dtype)) for v in out])
            raise fail(f"`generator` yielded an element of {got} where an element of {declared} was expected.")
        return tree.unflatten([_to_array(v) if isinstance(v, _TensorBase) else v for v in out])
    return convert


def _chunks(it, size, drop_remainder):
    """Lists of ``size`` consecutive elements (the last may be shorter unless dropped)."""
    while True:
        chunk = list(itertools.islice(it, size))
        if not chunk or (drop_remainder and len(chunk) < size):
            return
        yield chunk


def _batched_cardinality(card, size, drop_remainder):
    return card if card < 0 else (card // size if drop_remainder else -(-card // size))


def _positive_int(value, what, method):
    v = int(value)
    if v <= 0:
        raise ValueError(f"{method}: `{what}` must be a positive integer, got {value}.")
    return v


def _windows(it, size, shift, stride, drop_remainder):
    """TF's WindowDataset: lists of the elements of each window, in order.

    A buffer holds the ``(size - 1) * stride + 1`` elements a window spans; each
    window takes every ``stride``-th of them, then the buffer moves on by ``shift``
    (skipping input when ``shift`` is larger than the buffer). Windows start at
    every ``shift``-th element while input remains; with ``drop_remainder`` the
    incomplete ones at the end are dropped.
    """
    span = (size - 1) * stride + 1
    buf = []
    live = True
    while True:
        if live:
            buf.extend(itertools.islice(it, span - len(buf)))
            live = len(buf) == span
        if not buf or (drop_remainder and len(buf) < span):
            return
        yield buf[::stride]
        if shift >= len(buf):
            if live:
                skip = shift - len(buf)
                live = sum(1 for _ in itertools.islice(it, skip)) == skip
            buf = []
        else:
            del buf[:shift]


def _directed_cardinality(datasets):
    """TF's DirectedInterleaveDataset (sample_from_datasets, choose_from_datasets): infinite when one of
    the datasets is, else unknown (whatever the selector, the weights or ``stop_on_empty_dataset``)."""
    return INFINITE_CARDINALITY if any(d._card == INFINITE_CARDINALITY for d in datasets) else UNKNOWN_CARDINALITY


def _window_cardinality(card, size, shift, stride, drop_remainder):
    if card < 0:
        return card
    if drop_remainder:
        rest = card - ((size - 1) * stride + 1)
        return 0 if rest < 0 else rest // shift + 1
    return -(-card // shift)


def _list_dataset(items):
    """A finite Dataset of the given elements (structures of arrays)."""
    return Dataset(lambda: iter(items), len(items), lambda: _spec_of(items[0]))


def _variant(dataset):
    """A dataset TF hands over as a tensor (a window's element): it prints as ``_VariantDataset``."""
    dataset._REPR = "_VariantDataset"
    return dataset


def _slices_dataset(leaf, rows):
    """A Dataset of ``leaf[i]`` for ``i`` in ``rows``: index-based, so ``batch`` gathers in one go."""
    rows = list(rows)
    spec = lambda: TensorSpec(np.shape(leaf)[1:], leaf.dtype)  # noqa: E731
    return Dataset(None, len(rows), spec, index=(leaf, lambda: iter(rows)))


def _as_dataset(out, method):
    if not isinstance(out, Dataset):
        raise TypeError(f"{method}: `map_func` must return a tf.data.Dataset, got {type(out).__name__}. "
                        "Wrap tensors: tf.data.Dataset.from_tensor_slices(x), or from_tensors(x) for "
                        "a single element.")
    return out


def _scalar_bool(v, method):
    a = np.asarray(v._value if isinstance(v, _TensorBase) else v)
    if a.shape != ():
        raise ValueError(f"{method}: `predicate` must return a scalar boolean, got shape {a.shape}. "
                         "Reduce it first, e.g. with tf.reduce_all(...) or tf.reduce_any(...).")
    return bool(a)


def _default_cycle_length():
    """``interleave``'s cycle_length for None / AUTOTUNE: the number of CPU cores, as in TF."""
    return os.cpu_count() or 1


def _check_datasets(datasets, method):
    if isinstance(datasets, Dataset) or not datasets:
        raise ValueError(f"{method}: `datasets` must be a non-empty list of tf.data.Dataset objects, "
                         f"got {datasets!r}.")
    datasets = list(datasets)
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(f"{method}: `datasets` must hold tf.data.Dataset objects, got "
                            f"{type(d).__name__}. Wrap tensors first: Dataset.from_tensor_slices(x).")
    if all(d._spec_fn is not None for d in datasets):
        trees = {str(_flatten(d.element_spec)[1]) for d in datasets}
        if len(trees) > 1:
            raise TypeError(f"{method}: the datasets' elements have different structures ({sorted(trees)}); "
                            "map them to one structure first, e.g. ds.map(lambda x, y: (x, y)).")
    return datasets


def _directed_interleave(datasets, choices, stop_on_empty_dataset):
    """Elements of ``datasets[i]`` for each ``i`` that ``choices`` yields (TF's DirectedInterleave).

    ``choices(alive)`` yields indices; ``alive`` (one flag per dataset, updated in place)
    lets it avoid exhausted datasets. An exhausted dataset ends the result when ``stop_on_empty_dataset``,
    else it is skipped; the result ends when every dataset is exhausted. The inputs' iterators
    are made now, as TF makes them with this one.
    """
    alive = [True] * len(datasets)
    return _directed(choices(alive), [d._elements() for d in datasets], alive, stop_on_empty_dataset)


def _then(first, make_second):
    """``first``'s elements, then those of ``make_second()``, whose iterator is made when ``first``
    is exhausted (TF's ConcatenateDataset)."""
    yield from first
    yield from make_second()


def _directed(choices, its, alive, stop_on_empty_dataset):
    for i in choices:
        if alive[i]:
            try:
                yield next(its[i])
                continue
            except StopIteration:
                alive[i] = False
        if stop_on_empty_dataset or not any(alive):
            return

# ---------------------------------------------------------------------------
# Background work: prefetch threads and map / interleave worker pools
# ---------------------------------------------------------------------------

_PREFETCH_AUTOTUNE = 2  # prefetch(AUTOTUNE) buffers this many elements ahead of the consumer
_POLL_S = 0.05          # how often a blocked producer checks whether its consumer is gone


def _parallelism(num_parallel_calls, method):
    """The number of worker threads for ``num_parallel_calls`` (None: run inline, no threads)."""
    if num_parallel_calls is None:
        return None
    n = int(num_parallel_calls)
    if n == AUTOTUNE:
        return os.cpu_count() or 1
    if n <= 0:
        raise ValueError(f"{method}: `num_parallel_calls` must be a positive integer or tf.data.AUTOTUNE, "
                         f"got {num_parallel_calls}.")
    return n


class _Prefetch:
    """An iterator over ``elements`` that a background thread fills, ``size`` elements ahead.

    The thread starts when the iterator is made. An exception raised while producing is
    re-raised by the consumer's ``next`` (the same exception object, with its traceback).
    When the consumer is done (``close()``, or the iterator is garbage-collected) the
    thread stops: after the element it is producing, or within ``_POLL_S`` when it waits
    on a full queue. The thread refers to the queue, not to this object, so dropping
    the iterator is enough.
    """

    def __init__(self, elements, size):
        self._q = q = queue.Queue(size)
        self._stop = stop = threading.Event()
        self._done = False

        def put(item):
            while not stop.is_set():
                try:
                    q.put(item, timeout=_POLL_S)
                    return True
                except queue.Full:
                    pass
            return False

        def produce():
            try:
                for e in elements:
                    if not put((True, e)):
                        return
                put((False, None))
            except BaseException as ex:  # noqa: BLE001 - handed to the consumer
                put((False, ex))
            finally:
                close = getattr(elements, "close", None)
                if close is not None:
                    close()

        threading.Thread(target=produce, name="tf.data.prefetch", daemon=True).start()

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        ok, e = self._q.get()
        if ok:
            return e
        self.close()
        if e is None:
            raise StopIteration
        raise e

    def close(self):
        self._done = True
        self._stop.set()

    __del__ = close


def _collect(work, item):
    """The elements ``work(item)`` yields, and the exception that stopped it (or None)."""
    out = []
    try:
        for e in work(item):
            out.append(e)
    except BaseException as ex:  # noqa: BLE001 - handed to the consumer
        return out, ex
    return out, None


def _pooled(items, work, workers, deterministic):
    """The elements ``work(item)`` yields for each item, computed on ``workers`` threads.

    Up to ``workers`` items are in flight. Results come in input order when
    ``deterministic``, else item by item in the order they complete. An exception
    raised by ``work`` is raised by the consumer's ``next`` after the elements yielded
    before it; closing the consumer cancels pending work and lets the threads exit.
    """
    pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="tf.data.map")
    pending = collections.deque()
    finished = queue.SimpleQueue()  # futures in the order they completed
    items = iter(items)
    live = True
    try:
        while True:
            while live and len(pending) < workers:
                item = next(items, _END)
                if item is _END:
                    live = False
                else:
                    pending.append(pool.submit(_collect, work, item))
                    if not deterministic:
                        pending[-1].add_done_callback(finished.put)
            if not pending:
                return
            if deterministic:
                done = pending.popleft()
            else:  # (wait(FIRST_COMPLETED)'s set of done futures has no order: when the
                done = finished.get()  # consumer falls behind, an early task could jump ahead)
                pending.remove(done)
            out, error = done.result()
            yield from out
            if error is not None:
                raise error
    finally:
        for f in pending:
            f.cancel()
        pool.shutdown(wait=False, cancel_futures=True)


_END = object()


def _frozen(fn):
    """``fn`` with the values its closure and its module's variables hold now: TensorFlow traces a
    dataset function when the transformation is made, so the Python variables it reads are taken
    then (``lambda x: f(x, i)`` made in a loop keeps each ``i``); a function run later per element
    would read their last values."""
    if not isinstance(fn, types.FunctionType) or (fn.__module__ or "").startswith("tapejax"):
        return fn
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(types.CellType(c.cell_contents))
        except ValueError:    # an empty cell (a function defined later in the enclosing scope)
            cells.append(c)
    # the module's variables too (a notebook's loop variable is a global): a copy of the namespace
    # (the functions it calls keep their own)
    names = fn.__globals__ if not fn.__code__.co_names else dict(fn.__globals__)
    out = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, tuple(cells) or None)
    out.__kwdefaults__, out.__qualname__, out.__module__ = fn.__kwdefaults__, fn.__qualname__, fn.__module__
    out.__dict__.update(fn.__dict__)
    return out


def _freezes(*names):
    """The method with its function arguments ``names`` frozen (see ``_frozen``)."""
    def decorate(method):
        signature = inspect.signature(method)

        @functools.wraps(method)
        def frozen(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            for n in names:
                if n in bound.arguments:
                    bound.arguments[n] = _frozen(bound.arguments[n])
            return method(*bound.args, **bound.kwargs)
        return frozen
    return decorate


class Dataset:
    """A re-iterable pipeline of elements; iterating yields Tensors.

    Build one with ``Dataset.from_tensor_slices``, ``from_tensors``, ``range``,
    ``from_generator`` or ``zip``, then chain transformations; each returns a new
    Dataset and nothing runs until iteration.
    """

    def __init__(self, make, cardinality=UNKNOWN_CARDINALITY, spec=None, index=None):
        self._make = make            # () -> iterator of elements (structures of arrays)
        self._card = int(cardinality)
        self._spec_fn = spec         # () -> structure of TensorSpec, or None to peek
        self._index = index          # (source, () -> iterator of ints) when index-based
        self._options = Options()

    def _trackable_children(self):
        """A dataset is trackable with nothing to save (its iterators have their position)."""
        return {}

    # -- iteration -----------------------------------------------------------

    def __iter__(self):
        it = _Iterator(self._elements(), self._card, restart=self._elements)
        it._spec_of_dataset = lambda: self.element_spec
        return it

    def _autograph_elements(self):
        """``for x in dataset`` in a tf.function (AutoGraph): the elements of a finite dataset,
        staged as one loop; None for an infinite one, which is iterated while tracing."""
        return None if self._card == INFINITE_CARDINALITY else list(self)

    def _elements(self):
        if self._index is not None:
            source, idx = self._index
            leaves, tree = _flatten(source)
            return (tree.unflatten([_row(l, i) for l in leaves]) for i in idx())
        return self._make()

    def as_numpy_iterator(self):
        """Iterates the elements as numpy arrays.

        Example:
            >>> import tapejax as tf
            >>> [x.tolist() for x in tf.data.Dataset.range(3).as_numpy_iterator()]
            [0, 1, 2]

        Raises:
            TypeError: the elements hold ExtensionTypes or datasets (TensorFlow has no NumPy form
                of them; raised when the spec says so, before an element is read).
        """
        try:
            spec = self._declared_spec()
        except Exception:  # noqa: BLE001 - the spec needs an element: the elements' types are checked as read
            spec = None
        for s in _flatten(spec)[0] if spec is not None else ():
            if isinstance(s, (DatasetSpec, _ext.ExtensionTypeSpec)):
                kind = ("<class 'tensorflow.python.data.ops.dataset_ops.DatasetV2'>" if isinstance(s, DatasetSpec)
                        else s.value_type)
                raise TypeError("`tf.data.Dataset.as_numpy_iterator()` is not supported for datasets that produce "
                                f"values of type {kind}")
        return NumpyIterator(self)

    def __bool__(self):
        return True

    def __len__(self):
        if self._card == INFINITE_CARDINALITY:
            raise TypeError(_NEEDS_FINITE.format(what="infinite"))
        if self._card < 0:
            raise TypeError(_NEEDS_FINITE.format(what="of unknown length"))
        return self._card

    def cardinality(self):
        """The number of elements as an int Tensor (-1 infinite, -2 unknown)."""
        return Tensor(jax.numpy.asarray(self._card))

    @property
    def element_spec(self):
        """The structure of ``TensorSpec`` of an element."""
        spec = self._spec_fn() if self._spec_fn is not None else None
        if spec is not None and spec is not _VALUE_SHAPED:
            return spec       # (None: the transformation could not tell; an element does)
        if getattr(_NO_PEEK, "on", False):
            raise _NoPeek("element_spec needs an element")
        peeking, _PEEKING.on = getattr(_PEEKING, "on", False), True   # a peek is no iteration:
        try:                                                             # shuffles keep their seeds
            for e in self._elements():
                if spec is _VALUE_SHAPED:   # shapes that the values decide: unknown sizes, as TF's
                    return _map(lambda s: TensorSpec(None if s.shape is None else [None] * len(s.shape), s.dtype)
                                if isinstance(s, TensorSpec) else s, _spec_of(e))
                return _spec_of(e)
        finally:
            _PEEKING.on = peeking
        raise ValueError("element_spec of an empty dataset of unknown structure.")

    def _declared_spec(self):
        """The element_spec where the dataset knows it without reading an element, else None."""
        spec = self._spec_fn() if self._spec_fn is not None else None
        return None if spec is _VALUE_SHAPED else spec

    _REPR = "Dataset"   # the class name TF prints for this kind of dataset

    def __repr__(self):
        try:
            spec = self.element_spec
        except Exception:  # noqa: BLE001 - repr must not fail
            spec = "?"
        return f"<{self._REPR} element_spec={spec}>"

    def _derive(self, make, cardinality, spec=None, index=None):
        out = Dataset(make, cardinality, spec, index)
        out._options = self._options
        return out

    # -- sources ---------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Slices ``tensors`` (an array, or a tuple / dict of arrays) along their first dimension.

        Raises:
            ValueError: if the components' first dimensions differ.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [3.0, 4.0]})
            >>> [sorted(e) for e in ds.as_numpy_iterator()][0]
            ['a', 'b']
        """
        source = _map(_to_array, tensors)
        leaves, _ = _flatten(source)
        if not leaves:
            raise ValueError("from_tensor_slices needs at least one tensor.")
        for a in leaves:
            _ext.check_batchable(a)
            if not isinstance(a, _ext.ExtensionType) and np.ndim(a) == 0:
                raise ValueError("from_tensor_slices needs tensors of rank >= 1 to slice; got a scalar. "
                                 "Use Dataset.from_tensors(x) for a single element.")
        if any(isinstance(a, jax.core.Tracer) for a in leaves):   # made while a function is traced: a spec
            return Dataset(None, UNKNOWN_CARDINALITY, lambda: _map(lambda a: _unbatched_spec(_spec_of_abstract(a)),
                                                                   source), index=(source, None))
        n = {_nrows(a) for a in leaves}
        if len(n) > 1:
            raise ValueError(f"Dimensions of the components do not match: first dimensions {sorted(n)}. "
                             "All tensors given to from_tensor_slices need the same number of rows.")
        n = n.pop()
        spec = lambda: _map(lambda a: _unbatched_spec(_composite_spec(a)) if _is_composite(a)  # noqa: E731
                            else TensorSpec(np.shape(a)[1:], a.dtype), source)
        return Dataset(None, n, spec, index=(source, lambda: iter(range(n))))

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element: ``tensors``."""
        e = _map(_to_array, tensors)
        return Dataset(lambda: iter([e]), 1, lambda: _spec_of(e))

    @staticmethod
    def range(*args, output_type=None, name=None):
        """Integers like Python's ``range(start, stop, step)``, as ``output_type`` (int64 by default).

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(1, 6, 2)]
            [1, 3, 5]
            >>> tf.data.Dataset.range(2, output_type=tf.int32).element_spec
            TensorSpec(shape=(), dtype=tf.int32, name=None)
        """
        r = range(*args)
        dt = jax.dtypes.canonicalize_dtype(_dtypes.np_dtype(output_type) if output_type is not None else np.int64)
        src = np.arange(r.start, r.stop, r.step, dtype=dt)
        return Dataset.from_tensor_slices(src)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        """Pseudorandom int64 values (uint32 words of TF's Philox stream for the seeds that
        ``tf.random.get_seed(seed)`` gives), forever; the same values every iteration unless
        ``rerandomize_each_iteration``.

        Example:
            >>> import tapejax as tf
            >>> a = [int(x) for x in tf.data.Dataset.random(seed=5).take(2)]
            >>> a == [int(x) for x in tf.data.Dataset.random(seed=5).take(2)]
            True
        """
        seeds = _ShuffleSeeds(seed, bool(rerandomize_each_iteration))

        def make():
            stream = _PhiloxWords(*seeds.next())
            return (np.asarray(stream(), np.int64) for _ in itertools.count())
        out = Dataset(make, INFINITE_CARDINALITY, lambda: TensorSpec((), np.int64))
        out._REPR = "_RandomDataset"
        return out

    @staticmethod
    def counter(start=0, step=1, dtype=_dtypes.int64, name=None):
        """``start``, ``start + step``, ... forever (TF prints it as the ``_ScanDataset`` it is built from).

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.counter(3, 2).take(3)]
            [3, 5, 7]
        """
        dt = jax.dtypes.canonicalize_dtype(_dtypes.np_dtype(dtype))
        out = Dataset(lambda: (np.asarray(v, dt) for v in itertools.count(start, step)), INFINITE_CARDINALITY,
                      lambda: TensorSpec((), dt))
        out._REPR = "_ScanDataset"
        return out

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """Elements from calling ``generator(*args)`` anew on each iteration, converted to the
        declared ``output_types`` (and checked against ``output_shapes``) or ``output_signature``.

        As in TensorFlow each component is converted as NumPy converts it to the declared dtype
        (``np.asarray(value, dtype)``: float64 data declared ``tf.float32`` is float32), except
        for a single component of unknown shape, which converts Python values as
        ``tf.convert_to_tensor(value, dtype)`` does. The element spec is the declared one.

        Raises:
            TypeError: neither ``output_types`` nor ``output_signature`` is given, or both.
            tf.errors.InvalidArgumentError: while iterating, for an element that does not have
                the declared structure, does not convert to its dtype or has another shape
                (TensorFlow's messages).

        Example:
            >>> import numpy as np, tapejax as tf
            >>> def gen():
            ...     yield 1, np.array([0.5, 1.5])
            >>> ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.float32),
            ...                                     output_shapes=((), (None,)))
            >>> ds.element_spec
            (TensorSpec(shape=(), dtype=tf.int32, name=None), TensorSpec(shape=(None,), dtype=tf.float32, name=None))
            >>> next(iter(ds))[1]
            <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 1.5], dtype=float32)>
        """
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        for arg, given in (("output_types", output_types), ("output_shapes", output_shapes)):
            if given is not None:
                _deprecated("DatasetV2.from_generator", "tensorflow.python.data.ops.dataset_ops",
                            "Use output_signature instead", arg=arg)
        types, shapes, tree, declared = _generator_signature(output_types, output_shapes, output_signature)
        convert = _generator_converter(types, shapes, tree, declared)

        def make():
            for e in generator(*(args or ())):
                yield convert(e)
        specs = [dt if isinstance(dt, _SPEC_LEAVES) else TensorSpec(sh, dt)
                 for dt, sh in zip(types, shapes)]
        return Dataset(make, UNKNOWN_CARDINALITY, lambda: tree.unflatten(specs))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The files matching the glob pattern(s) ``file_pattern``, as scalar ``tf.string`` elements.

        As in TF the names are sorted, then shuffled unless ``shuffle=False`` (the default
        is to shuffle, with a new order each iteration; pass ``seed`` or set
        ``tf.random.set_seed`` for a repeatable one).

        Raises:
            tf.errors.InvalidArgumentError: if no file matches (TF's message).

        Example:
            >>> import os, tempfile, tapejax as tf
            >>> d = tempfile.mkdtemp()
            >>> for n in ["b.py", "a.txt", "c.py"]:
            ...     open(os.path.join(d, n), "w").close()
            >>> ds = tf.data.Dataset.list_files(os.path.join(d, "*.py"), shuffle=False)
            >>> [os.path.basename(f) for f in ds.as_numpy_iterator()]
            [b'b.py', b'c.py']
        """
        patterns = _string_list(file_pattern, "file_pattern", "list_files")
        matches = _glob(patterns)
        if not matches:
            raise errors.InvalidArgumentError(
                None, None, "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
                            f"b'No files matched pattern: {', '.join(patterns)}'")
        ds = Dataset.from_tensor_slices(_strings(matches))
        if shuffle is None or shuffle:
            ds = ds.shuffle(len(matches), seed=seed)
        return ds

    @staticmethod
    def zip(*datasets, name=None):
        """Zips datasets (given as arguments, or as one tuple / dict of datasets).

        Example:
            >>> import tapejax as tf
            >>> a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)
            >>> [(int(x), int(y)) for x, y in tf.data.Dataset.zip(a, b)]
            [(0, 10), (1, 11)]
        """
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]
        leaves, tree = _flatten(datasets, is_leaf=lambda d: isinstance(d, Dataset))
        for d in leaves:
            if not isinstance(d, Dataset):
                raise TypeError(f"Dataset.zip takes datasets, got {type(d).__name__}. Wrap tensors first: "
                                "Dataset.from_tensor_slices(x).")

        def make():
            return (tree.unflatten(list(parts)) for parts in zip(*[d._elements() for d in leaves]))
        cards = [d._card for d in leaves]
        finite = [c for c in cards if c >= 0]
        card = min(finite) if finite else (INFINITE_CARDINALITY if all(c == -1 for c in cards) else UNKNOWN_CARDINALITY)
        if finite and any(c == UNKNOWN_CARDINALITY for c in cards):
            card = UNKNOWN_CARDINALITY
        return Dataset(make, card, lambda: tree.unflatten([d.element_spec for d in leaves]))

    # -- transformations -------------------------------------------------------

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Combines consecutive elements into batches (the last one smaller unless ``drop_remainder``).

        ``num_parallel_calls`` and ``deterministic`` are accepted: a batch is one gather (for
        ``from_tensor_slices`` pipelines) or one stack, so it is not split across threads;
        put ``prefetch`` after it to build batches ahead of the consumer.

        Example:
            >>> import tapejax as tf
            >>> [b.numpy().tolist() for b in tf.data.Dataset.range(5).batch(2)]
            [[0, 1], [2, 3], [4]]
        """
        bs = int(batch_size)
        if bs <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}.")
        if self._index is not None:
            source, idx = self._index
            leaves, tree = _flatten(source)

            def batches(it):
                while True:
                    chunk = np.fromiter(itertools.islice(it, bs), dtype=np.int64)
                    if len(chunk) == 0 or (drop_remainder and len(chunk) < bs):
                        return
                    yield tree.unflatten([_rows(l, chunk) for l in leaves])
            make = lambda: batches(idx())  # noqa: E731 - TF makes the input's iterator with this one
        else:
            def make():
                return (_stack(chunk) for chunk in _chunks(self._elements(), bs, drop_remainder))
        card = _batched_cardinality(self._card, bs, drop_remainder)
        lead = bs if drop_remainder else None
        return self._derive(make, card, lambda: _map(lambda s: _batched_spec(s, lead), self.element_spec))

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64, name=None):
        """Batches elements whose components may differ in length: such a component becomes a
        RaggedTensor (one ragged dimension more); components of one known shape batch densely.

        A component's shape is known when the dataset's element_spec is (a ``from_tensor_slices``
        source, the batches of it, a ``map`` traced on it); a ``map`` whose output shape depends on
        the values (``tf.range(x)``) has unknown dimensions there, so its components batch as ragged.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.from_tensor_slices([1, 5, 3]).map(tf.range)
            >>> [b for b in ds.ragged_batch(2)]
            [<tf.RaggedTensor [[0], [0, 1, 2, 3, 4]]>, <tf.RaggedTensor [[0, 1, 2]]>]
        """
        known = self._declared_spec() is not None
        specs, tree = _flatten(self.element_spec)
        dense = [known and isinstance(s, TensorSpec) and None not in tuple(s.shape) for s in specs]

        def to_ragged(e):
            leaves = _flatten(e)[0]
            return tree.unflatten([l if d or np.ndim(l) == 0 or _is_composite(l) else _ragged_row(l)
                                   for l, d in zip(leaves, dense)])

        def ragged_spec(s, d):
            if d or not isinstance(s, TensorSpec) or len(s.shape) == 0:
                return s
            return RaggedTensorSpec([None] * len(s.shape) if not known else s.shape, s.dtype, 0)

        rows = self._derive(lambda: (to_ragged(e) for e in self._elements()), self._card,
                            lambda: tree.unflatten([ragged_spec(s, d) for s, d in zip(specs, dense)]))
        return rows.batch(batch_size, drop_remainder)

    def sparse_batch(self, batch_size, row_shape, name=None):
        """Batches dense elements into SparseTensors of dense shape ``[n] + row_shape``: each
        element's entries (every one, zeros too) at its own positions in its row (a ``None`` size
        of ``row_shape`` is the largest in the batch).

        Raises:
            DataLossError: (when iterated) an element is larger than ``row_shape``.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.from_tensor_slices([1, 3]).map(lambda x: tf.fill([x], x))
            >>> b = next(iter(ds.sparse_batch(2, [4])))
            >>> b.indices.numpy().tolist(), b.values.numpy().tolist(), b.dense_shape.numpy().tolist()
            ([[0, 0], [1, 0], [1, 1], [1, 2]], [1, 3, 3, 3], [2, 4])
        """
        bs = int(batch_size)
        row = [None if d is None else int(d) for d in
               (row_shape.as_list() if isinstance(row_shape, TensorShape) else
                np.asarray(row_shape._value if isinstance(row_shape, _TensorBase) else row_shape).tolist())]

        def sparse(chunk):
            arrs = [np.asarray(e) for e in chunk]
            shape = [max(a.shape[d] for a in arrs) if r is None else r for d, r in enumerate(row)]
            for a in arrs:
                if a.ndim != len(row) or any(a.shape[d] > shape[d] for d in range(len(row))):
                    raise errors.DataLossError(None, None, (
                        f"Input element had shape ({list(a.shape)}) that is larger than the row shape "
                        f"({[d if d is not None else -1 for d in row]}). [Op:IteratorGetNext] name: ".replace(", ", ",")))
            idx = [np.concatenate([np.full((a.size, 1), j), np.argwhere(np.ones(a.shape, bool))], axis=1)
                   for j, a in enumerate(arrs)]
            values = np.concatenate([a.reshape(-1) for a in arrs])
            return SparseTensor(np.concatenate(idx).astype(np.int64), _tensor(values),
                                np.asarray([len(arrs)] + shape, np.int64))

        def make():
            return (sparse(chunk) for chunk in _chunks(self._elements(), bs, False))
        return self._derive(make, _batched_cardinality(self._card, bs, False),
                            lambda: SparseTensorSpec([None] + row, self.element_spec.dtype))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches elements of different shapes, padding each component to ``padded_shapes``.

        ``padded_shapes`` is a shape per component (a ``TensorShape``, a list of sizes, a 1-D
        tensor; for a dataset of one tensor, that shape itself): a known size pads to it, an
        unknown one (``None`` or -1) to the largest in the batch; without it, every dimension is
        padded to the largest in the batch. ``padding_values``: a scalar per component (0 and
        ``b''`` by default). An element larger than its padded shape raises TensorFlow's
        ``DataLossError`` when its batch is made.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))
            >>> [b.numpy().tolist() for b in ds.padded_batch(2, padded_shapes=[4])]
            [[[1, 0, 0, 0], [2, 2, 0, 0]], [[3, 3, 3, 0]]]
        """
        bs = int(batch_size)
        specs, spec_tree = _flatten(self.element_spec)
        if padded_shapes is None:
            unknown = next((i for i, s in enumerate(specs) if s.shape is None), None)
            if unknown is not None:
                raise ValueError(f"You must provide `padded_shapes` argument because component {unknown} has "
                                 "unknown rank.")
            sizes = [[None] * len(s.shape) for s in specs]
        else:
            if _is_leaf(padded_shapes) and not _is_leaf(self.element_spec):
                raise TypeError(f"If shallow structure is a sequence, input must also be a sequence. Input has "
                                f"type: '{type(padded_shapes).__name__}'.")
            sizes = [_padded_sizes(p, s) for p, s in zip(spec_tree.flatten_up_to(padded_shapes), specs)]

        def pad_stack(arrs, value, target):
            arrs = [np.asarray(a) for a in arrs]
            shape = [max(a.shape[d] for a in arrs) if t is None else t for d, t in enumerate(target)]
            if any(a.shape[d] > shape[d] for a in arrs for d in range(len(shape))):
                raise errors.DataLossError(None, None, "Attempted to pad to a smaller size than the input element.")
            out = np.full((len(arrs),) + tuple(shape), _default_padding(arrs[0].dtype) if value is None else value,
                          dtype=arrs[0].dtype)
            for i, a in enumerate(arrs):
                out[(i,) + tuple(slice(0, d) for d in a.shape)] = a
            return out

        pv = [None] * len(specs) if padding_values is None else [
            _padding_value(v, s) for v, s in zip(spec_tree.flatten_up_to(padding_values) if not _is_leaf(padding_values)
                                                 else [padding_values] * len(specs), specs)]   # one pads all

        def padded(it):
            for chunk in _chunks(it, bs, drop_remainder):
                leaves = [_flatten(e)[0] for e in chunk]
                yield spec_tree.unflatten([pad_stack([l[i] for l in leaves], pv[i], sizes[i])
                                           for i in range(len(specs))])
        lead = bs if drop_remainder else None
        return self._derive(lambda: padded(self._elements()), _batched_cardinality(self._card, bs, drop_remainder),
                            lambda: spec_tree.unflatten([
                                TensorSpec((lead,) + tuple(s.shape[d] if t is None and padded_shapes is None else t
                                                           for d, t in enumerate(size)), s.dtype)
                                for s, size in zip(specs, sizes)]))

    def unbatch(self, name=None):
        """Splits each element along its first dimension (the inverse of ``batch``)."""
        def rows(it):
            for e in it:
                leaves, tree = _flatten(e)
                for i in range(_nrows(leaves[0])):
                    yield tree.unflatten([_row(l, i) for l in leaves])
        return self._derive(lambda: rows(self._elements()), UNKNOWN_CARDINALITY if self._card != INFINITE_CARDINALITY else INFINITE_CARDINALITY,
                            lambda: _map(_unbatched_spec, self.element_spec))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles with TF's buffer algorithm: each output is drawn uniformly from a buffer of
        ``buffer_size`` upcoming elements, in TensorFlow's order when seeded.

        As in TF, the seeds come from ``tf.random.get_seed(seed)`` (so a global seed set with
        ``tf.random.set_seed`` consumes one op seed here), and each new iteration (a new epoch,
        or each pass of a ``repeat`` after the shuffle) draws a new order unless
        ``reshuffle_each_iteration=False``. Without any seed the order is random.

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(8).shuffle(8, seed=1)]
            [0, 1, 3, 6, 5, 2, 7, 4]
        """
        buffer_size = int(buffer_size)
        if buffer_size == AUTOTUNE or buffer_size <= 0:
            raise ValueError(f"shuffle needs a positive buffer_size, got {buffer_size}. For a full "
                             "shuffle pass the dataset size: ds.shuffle(len(ds)).")
        seeds = _ShuffleSeeds(seed, reshuffle_each_iteration)

        def shuffled(items):
            return _shuffled(items, buffer_size, _PhiloxWords(*seeds.next()))

        if self._index is not None:
            source, idx = self._index
            return self._derive(None, self._card, self._spec_fn, index=(source, lambda: shuffled(idx())))
        return self._derive(lambda: shuffled(self._elements()), self._card, self._spec_fn)

    @_freezes("map_func")
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to each element; it receives Tensors (``*element`` for tuples).

        Like TensorFlow, which traces ``map_func`` into a graph, the function is traced
        once (``jax.vmap`` over chunks of elements, compiled) when it is a pure function
        of its inputs: Python side effects then run at trace time only. Functions that
        read Variables (random ops included), call ``tf.py_function`` /
        ``tf.numpy_function`` or need concrete values run eagerly, element by element.

        ``num_parallel_calls`` (an int, or ``tf.data.AUTOTUNE`` for the number of CPU
        cores) runs ``map_func`` on that many threads, a few elements per task: a speed-up
        where the function spends its time outside Python's GIL (I/O, ``time.sleep``,
        NumPy / JAX kernels). The output order is the input order unless
        ``deterministic=False`` (or ``tf.data.Options().deterministic = False`` given to
        ``with_options`` before this ``map``), which yields elements as they are ready.
        An exception raised by ``map_func`` is raised by the ``next`` that reaches it.

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(3).map(lambda x: x * 10)]
            [0, 10, 20]
            >>> ds = tf.data.Dataset.range(6).map(lambda x: x + 1, num_parallel_calls=tf.data.AUTOTUNE)
            >>> [int(x) for x in ds]
            [1, 2, 3, 4, 5, 6]
        """
        vec = _VectorizedMap(map_func)
        workers = _parallelism(num_parallel_calls, "map")
        ordered = self._deterministic(deterministic)

        def run(chunk):  # lazily: an eager map_func runs once per element consumed
            if isinstance(chunk, list):  # elements that could not be stacked
                return _EachCall(map_func, chunk)
            out = vec(chunk)
            if out is None:
                return _EachCall(map_func, _unstack(chunk))
            return _unstack(out)

        def make():
            if workers is None:
                return itertools.chain.from_iterable(run(chunk) for chunk in self._chunks(self._CHUNK))
            return _pooled(self._chunks(self._PARALLEL_CHUNK), run, workers, ordered)
        return self._derive(make, self._card, self._traced(map_func, vec))

    def _traced(self, fn, vec=None, call=_call, pick=None, arg=None, method=None):
        """The spec function of a transformation applying ``fn`` to this dataset's elements (or
        to ``arg()``): ``fn`` traced on ``element_spec`` (see ``_traced_spec``), now where the
        input spec is known without reading an element (TensorFlow traces when the
        transformation is made), else when the spec is first asked for. A vectorized map's
        function (``vec``) prints now what it prints, and its later vectorized trace prints
        nothing: TensorFlow runs the Python function once. A function run per element (flat_map,
        interleave, scan, an eager map) prints when it runs, not here."""
        done = []

        def spec():
            if not done:
                spec, printed = _traced_spec(fn, self.element_spec if arg is None else arg(), call, method)
                traced = spec is not None and spec is not _VALUE_SHAPED
                if traced and pick is not None:
                    spec = pick(spec)
                done.append(spec)
                if traced and vec is not None:   # (a function run per element prints then instead)
                    sys.stdout.write(printed)
                    vec.quiet = True
            return done[0]
        before, _NO_PEEK.on = getattr(_NO_PEEK, "on", False), True
        try:
            spec()
        except NameError:    # the function's own error, which no element changes: TF raises it when tracing
            raise
        except Exception:  # noqa: BLE001 - an element is needed (or the input fails): asked again later
            pass
        finally:
            _NO_PEEK.on = before
        return spec

    _CHUNK = 256          # elements per vectorized call of a map function
    _PARALLEL_CHUNK = 16  # elements per task of a parallel map

    def _deterministic(self, deterministic):
        if deterministic is not None:
            return bool(deterministic)
        return self._options.deterministic is not False

    def _chunks(self, size):
        """Stacked chunks of consecutive elements (a list where elements do not stack); the input's
        iterator is made now."""
        if self._index is not None:
            return self._index_chunks(self._index[1](), size)
        return self._element_chunks(self._elements(), size)

    def _index_chunks(self, it, size):
        leaves, tree = _flatten(self._index[0])
        while True:
            chunk = np.fromiter(itertools.islice(it, size), dtype=np.int64)
            if len(chunk) == 0:
                return
            if any(_is_composite(l) for l in leaves):   # no vectorized map of ragged or sparse values
                yield [tree.unflatten([_row(l, i) for l in leaves]) for i in chunk]
                continue
            yield tree.unflatten([l[chunk] for l in leaves])

    @staticmethod
    def _element_chunks(it, size):
        while True:
            chunk = list(itertools.islice(it, size))
            if not chunk:
                return
            try:
                stacked = _stack(chunk)
            except (ValueError, TypeError, errors.InvalidArgumentError):
                yield chunk
                continue
            yield chunk if any(_is_composite(l) for l in _flatten(stacked)[0]) else stacked

    @_freezes("map_func")
    def flat_map(self, map_func, name=None):
        """Maps each element to a Dataset and flattens the results."""
        def make():
            return itertools.chain.from_iterable(_as_dataset(_call(map_func, e), "flat_map")._elements()
                                                 for e in self._elements())
        return self._derive(make, UNKNOWN_CARDINALITY, self._traced(map_func, method="flat_map"))

    @_freezes("map_func")
    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        """Maps each element to a Dataset and interleaves the results, in TF's deterministic order.

        ``cycle_length`` input elements are open at once; the output cycles through
        them taking ``block_length`` consecutive elements from each, and when one is
        exhausted the next input element takes its place in the cycle.
        ``cycle_length=1`` is ``flat_map``.

        ``cycle_length=None`` (or ``tf.data.AUTOTUNE``) uses the number of CPU cores
        (``os.cpu_count()``), as TF does: the order is then fixed for a given machine;
        pass ``cycle_length`` for an order that is the same everywhere.
        With ``num_parallel_calls`` (an int or ``tf.data.AUTOTUNE``) each open input
        element's dataset is read ahead by its own background thread (``cycle_length``
        threads), so slow sources (files, generators) are read in parallel; the output
        order stays the deterministic order above (``deterministic`` is accepted).

        Raises:
            ValueError: if ``cycle_length`` or ``block_length`` is not positive.
            TypeError: (when iterated) if ``map_func`` does not return a Dataset.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.range(1, 6).interleave(
            ...     lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
            >>> [int(x) for x in ds]
            [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]
        """
        if cycle_length is None or int(cycle_length) == AUTOTUNE:
            cycle = _default_cycle_length()
        else:
            cycle = _positive_int(cycle_length, "cycle_length", "interleave")
        block = 1 if block_length is None else _positive_int(block_length, "block_length", "interleave")
        parallel = _parallelism(num_parallel_calls, "interleave") is not None

        def open_(x):
            elements = _as_dataset(_call(map_func, x), "interleave")._elements()
            return _Prefetch(elements, max(block, _PREFETCH_AUTOTUNE)) if parallel else elements

        def interleaved(inputs):
            slots = [None] * cycle          # the open input elements' iterators
            n_open, end_of_input, i, b = 0, False, 0, 0
            while not end_of_input or n_open:
                if slots[i] is not None:
                    try:
                        e = next(slots[i])
                    except StopIteration:    # this one is done: its slot waits for the next input
                        slots[i] = None
                        n_open -= 1
                        i, b = (i + 1) % cycle, 0
                        continue
                    b += 1
                    if b == block:
                        i, b = (i + 1) % cycle, 0
                    yield e
                elif not end_of_input:
                    # A parallel interleave opens every empty slot now, in the order the
                    # cycle would reach them (the same assignment), so their threads overlap.
                    for j in ((i + k) % cycle for k in range(cycle if parallel else 1)):
                        if slots[j] is None and not end_of_input:
                            x = next(inputs, None)
                            if x is None:
                                end_of_input = True
                            else:
                                slots[j] = open_(x)
                                n_open += 1
                else:
                    i, b = (i + 1) % cycle, 0
        return self._derive(lambda: interleaved(self._elements()), UNKNOWN_CARDINALITY,
                            self._traced(map_func, method="interleave"))

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Groups elements into windows: each element of the result is a Dataset (a window).

        Window ``k`` starts at input element ``k * shift`` (``shift`` defaults to
        ``size``) and holds ``size`` elements taken every ``stride``-th; the last
        windows may be shorter unless ``drop_remainder``. For nested elements
        (tuples, dicts) each component becomes its own window Dataset, as in TF.
        Turn windows into tensors with ``flat_map``: ``ds.window(n, shift=1,
        drop_remainder=True).flat_map(lambda w: w.batch(n))``.

        Raises:
            ValueError: if ``size``, ``shift`` or ``stride`` is not positive.

        Example:
            >>> import tapejax as tf
            >>> for w in tf.data.Dataset.range(7).window(3, shift=1, stride=2, drop_remainder=True):
            ...     print([int(x) for x in w])
            [0, 2, 4]
            [1, 3, 5]
            [2, 4, 6]
            >>> ds = tf.data.Dataset.range(7).window(3, shift=1, drop_remainder=True)
            >>> for batch in ds.flat_map(lambda w: w.batch(3)):
            ...     print(batch.numpy())
            [0 1 2]
            [1 2 3]
            [2 3 4]
            [3 4 5]
            [4 5 6]
        """
        size = _positive_int(size, "size", "window")
        shift = size if shift is None else _positive_int(shift, "shift", "window")
        stride = _positive_int(stride, "stride", "window")
        drop = bool(drop_remainder)
        card = _window_cardinality(self._card, size, shift, stride, drop)
        if self._index is not None:       # windows of indices: each window slices the source arrays
            source, idx = self._index
            leaves, tree = _flatten(source)

            def make():
                return (tree.unflatten([_variant(_slices_dataset(l, rows)) for l in leaves])
                        for rows in _windows(idx(), size, shift, stride, drop))
        else:
            def window_of(elems):
                tree = _flatten(elems[0])[1]
                columns = zip(*[_flatten(e)[0] for e in elems])
                return tree.unflatten([_variant(_list_dataset(list(c))) for c in columns])

            def make():
                return (window_of(elems) for elems in _windows(self._elements(), size, shift, stride, drop))
        return self._derive(make, card, lambda: _map(_DatasetSpec, self.element_spec))

    @_freezes("scan_func")
    def scan(self, initial_state, scan_func, name=None):
        """A stateful ``map``: ``new_state, output = scan_func(state, element)`` for each element.

        ``state`` starts as ``initial_state`` on every iteration; the new state must
        have the structure and dtypes of ``initial_state``.

        Raises:
            TypeError: (when iterated) if ``scan_func`` does not return a
                ``(new_state, output)`` pair, or changes the state's structure or dtype.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.range(10).scan(tf.constant(0, tf.int64), lambda state, i: (state + i, state + i))
            >>> [int(x) for x in ds]
            [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]
        """
        init = _map(_to_array, initial_state)
        init_leaves, init_tree = _flatten(init)
        init_dtypes = [np.asarray(l).dtype for l in init_leaves]

        def as_state(new_state):
            leaves, tree = _flatten(new_state)
            if tree != init_tree:
                raise TypeError(f"scan: the new state has structure {tree}, but initial_state has "
                                f"{init_tree}. Return a state shaped like initial_state.")
            out = []
            for l, dt in zip(leaves, init_dtypes):
                t = l if isinstance(l, Tensor) else _tensor(_to_array(l))
                got = np.dtype(t.dtype.as_numpy_dtype) if isinstance(t, Tensor) else np.asarray(t).dtype
                if got != dt:
                    raise TypeError(f"scan: scan_func changed the state's dtype from {dt} to {got}. "
                                    "Cast the new state (tf.cast) or give initial_state that dtype.")
                out.append(t)
            return tree.unflatten(out)

        def scanned(it):
            state = _to_tensors(init)
            for e in it:
                out = scan_func(state, _to_tensors(e))
                if not isinstance(out, (tuple, list)) or len(out) != 2:
                    raise TypeError("scan: scan_func must return a pair (new_state, output_element), got "
                                    f"{type(out).__name__}.")
                state = as_state(out[0])
                yield _map(_to_array, out[1])
        traced = self._traced(scan_func, call=lambda fn, e: fn(*e), pick=lambda out: out[1],
                              arg=lambda: (_spec_of(init), self.element_spec))
        return self._derive(lambda: scanned(self._elements()), self._card, traced)

    @_freezes("predicate")
    def take_while(self, predicate, name=None):
        """The elements up to (not including) the first for which ``predicate`` is false.

        Raises:
            ValueError: (when iterated) if ``predicate`` does not return a scalar.

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(10).take_while(lambda x: x < 5)]
            [0, 1, 2, 3, 4]
        """
        def make():
            return itertools.takewhile(lambda e: _scalar_bool(_call(predicate, e), "take_while"), self._elements())
        return self._derive(make, UNKNOWN_CARDINALITY, self._spec_fn)

    def unique(self, name=None):
        """Drops repeated elements, keeping the first occurrence of each.

        As in TF, elements must be single integer or string tensors; the seen values
        are kept in memory.

        Raises:
            TypeError: if elements are nested or of another dtype (checked when the
                dataset's spec is known, else when iterated).

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique()
            >>> sorted(int(x) for x in ds)
            [1, 2, 37]
        """
        def check(leaves, kinds):
            if len(leaves) != 1 or any(k not in "iuOSU" for k in kinds):
                raise TypeError("unique() supports datasets whose elements are single integer or string "
                                f"tensors (as TF: int32, int64, string); got {leaves}. Select one "
                                "component first (ds.map(lambda x, y: x)), or cast floats to integers.")

        if self._declared_spec() is not None:
            leaves = _flatten(self._declared_spec())[0]
            check(leaves, ["O" if isinstance(s, _DatasetSpec) or s.dtype == _dtypes.string
                           else np.dtype(s.dtype.as_numpy_dtype).kind for s in leaves])

        def unique(it):
            seen = set()
            for e in it:
                leaves = _flatten(e)[0]
                arrs = [l if isinstance(l, Dataset) else np.asarray(l) for l in leaves]
                check(arrs, [getattr(a, "dtype", np.dtype(object)).kind if not isinstance(a, Dataset) else "?"
                             for a in arrs])
                a = arrs[0]
                key = (a.shape, a.astype(np.int64).tobytes() if a.dtype.kind in "iu" else tuple(a.ravel().tolist()))
                if key not in seen:
                    seen.add(key)
                    yield e
        return self._derive(lambda: unique(self._elements()), UNKNOWN_CARDINALITY, self._spec_fn)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        """Re-splits batched elements into batches of ``batch_size`` (``unbatch().batch(n)`` in one copy).

        ``batch_size`` may be a list: the batch sizes then cycle through it. The last
        batch is smaller unless ``drop_remainder``.

        Raises:
            ValueError: if a batch size is negative or none is positive.

        Example:
            >>> import tapejax as tf
            >>> [b.numpy().tolist() for b in tf.data.Dataset.range(7).batch(4).rebatch(3)]
            [[0, 1, 2], [3, 4, 5], [6]]
            >>> [b.numpy().tolist() for b in tf.data.Dataset.range(8).batch(4).rebatch([2, 1, 1])]
            [[0, 1], [2], [3], [4, 5], [6], [7]]
        """
        sizes = [int(v) for v in np.ravel(_to_array(batch_size))]
        if not sizes or any(v < 0 for v in sizes) or not any(sizes):
            raise ValueError(f"rebatch: `batch_size` must be a positive integer or a list of non-negative "
                             f"integers with at least one positive, got {batch_size!r}.")
        drop = bool(drop_remainder)

        def rebatched(it):
            cycle = itertools.cycle(sizes)
            want, have, parts, template, tree = next(cycle), 0, [], None, None
            for e in it:
                leaves, tree = _flatten(e)
                leaves = [np.asarray(l) for l in leaves]
                if any(l.ndim == 0 for l in leaves):
                    raise ValueError("rebatch needs batched elements (rank >= 1); got a scalar component. "
                                     "Use ds.batch(n) on unbatched data.")
                template = [l[:0] for l in leaves]
                n, pos = leaves[0].shape[0], 0
                while True:
                    take = min(want - have, n - pos)
                    if take > 0:
                        parts.append([l[pos:pos + take] for l in leaves])
                        have, pos = have + take, pos + take
                    if have == want:
                        cols = zip(*parts) if parts else ([t] for t in template)
                        yield tree.unflatten([np.concatenate(c) for c in cols])
                        want, have, parts = next(cycle), 0, []
                    elif pos >= n:
                        break
            if parts and not drop:
                yield tree.unflatten([np.concatenate(c) for c in zip(*parts)])

        c = self._card

        def lead():   # TF's static batch size: one size, and no partial batch (dropped, or none formed)
            if len(set(sizes)) != 1:
                return None
            known = [s.shape[0] for s in _flatten(self.element_spec)[0]
                     if isinstance(s, TensorSpec) and s.shape is not None and len(s.shape) and s.shape[0] is not None]
            return sizes[0] if drop or (known and known[0] % sizes[0] == 0) else None
        return self._derive(lambda: rebatched(self._elements()), UNKNOWN_CARDINALITY,   # TF: unknown, always
                            lambda: _map(lambda s, n=lead(): TensorSpec((n,) + tuple(s.shape)[1:], s.dtype),
                                         self.element_spec))

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        """Draws each element from a dataset picked at random with probability ``weights[i]``.

        ``weights`` (uniform by default) is a list of ``len(datasets)`` non-negative
        numbers, or a Dataset whose elements are such lists (one per draw).
        Datasets of weight 0 are left out. When a picked dataset is exhausted, the
        result ends if ``stop_on_empty_dataset``, else draws go on among the others
        until all are exhausted. The draws are deterministic given ``seed`` (or
        ``tf.random.set_seed``); every iteration repeats them unless
        ``rerandomize_each_iteration``.

        Raises:
            ValueError: if ``datasets`` is empty or ``weights`` does not give one
                non-negative weight per dataset.
            TypeError: if ``datasets`` holds something other than Datasets.

        Example:
            >>> import tapejax as tf
            >>> a, b = tf.data.Dataset.range(0, 3), tf.data.Dataset.range(100, 103)
            >>> ds = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.5, 0.5], seed=7)
            >>> sorted(int(x) for x in ds)
            [0, 1, 2, 100, 101, 102]
            >>> [int(x) for x in ds] == [int(x) for x in ds]
            True
        """
        datasets = _check_datasets(datasets, "sample_from_datasets")
        n = len(datasets)
        weights_ds = weights if isinstance(weights, Dataset) else None
        if weights_ds is None:
            dtype = np.float32
            if weights is None:
                logits = np.ones(n, np.float32)
            else:
                w = _to_array(weights)
                dtype = w.dtype if w.dtype in (np.float32, np.float64) else np.float32
                w = np.asarray(w, dtype=np.float64)
                if w.shape != (n,):
                    raise ValueError(f"sample_from_datasets: `weights` must hold one weight per dataset: got "
                                     f"shape {w.shape} for {n} datasets.")
                if not np.all(np.isfinite(w)) or np.any(w < 0):
                    raise ValueError(f"sample_from_datasets: `weights` must be finite and non-negative, got "
                                     f"{w.tolist()}.")
                keep = [i for i in range(n) if w[i] > 0]
                if not keep:
                    return datasets[0].take(0)
                datasets, w = [datasets[i] for i in keep], w[keep]
                with np.errstate(divide="ignore"):
                    logits = np.log(w.astype(dtype))
            if len(datasets) == 1:
                return datasets[0]
            n = len(datasets)
        # TF's selector: Dataset.random(seed) (its seeds drawn now, as tf.random.get_seed gives
        # them; new ones per iteration with rerandomize_each_iteration) batched by two, each
        # pair the seed of a stateless multinomial draw from log(weights)
        seeds = _ShuffleSeeds(seed, bool(rerandomize_each_iteration))

        def choices(alive):
            if weights_ds is None:
                return _random_dataset_choices(seeds.next(), logits)
            rows = (_weights_row(ws, n) for ws in weights_ds._elements())
            return _random_dataset_choices(seeds.next(), rows)

        return Dataset(lambda: _directed_interleave(datasets, choices, stop_on_empty_dataset),
                       _directed_cardinality(datasets),
                       lambda: _common_spec(datasets))

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """Takes each element from ``datasets[i]`` for each index ``i`` of ``choice_dataset``.

        When a chosen dataset is exhausted the result ends if ``stop_on_empty_dataset``
        (the default), else that choice is skipped.

        Raises:
            ValueError: if ``datasets`` is empty, or (when iterated) a choice is out of range.
            TypeError: if ``choice_dataset`` is not a Dataset of scalar integers.

        Example:
            >>> import tapejax as tf
            >>> datasets = [tf.data.Dataset.from_tensors("foo").repeat(),
            ...             tf.data.Dataset.from_tensors("bar").repeat(),
            ...             tf.data.Dataset.from_tensors("baz").repeat()]
            >>> choice_dataset = tf.data.Dataset.range(3).repeat(3)
            >>> result = tf.data.Dataset.choose_from_datasets(datasets, choice_dataset)
            >>> [x.numpy() for x in result]
            [b'foo', b'bar', b'baz', b'foo', b'bar', b'baz', b'foo', b'bar', b'baz']
        """
        datasets = _check_datasets(datasets, "choose_from_datasets")
        n = len(datasets)
        if not isinstance(choice_dataset, Dataset):
            raise TypeError(f"choose_from_datasets: `choice_dataset` must be a tf.data.Dataset of scalar "
                            f"integers, got {type(choice_dataset).__name__}. Wrap the indices: "
                            "tf.data.Dataset.from_tensor_slices(indices).")

        def bad_choice(what):
            return TypeError(f"choose_from_datasets: `choice_dataset` must yield scalar integers (indices into "
                             f"`datasets`), got {what}.")

        spec = choice_dataset._declared_spec()
        if spec is not None:
            if not isinstance(spec, TensorSpec) or tuple(spec.shape) != () or not spec.dtype.is_integer:
                raise bad_choice(spec)

        def choices(alive):
            for c in choice_dataset._elements():
                leaves = _flatten(c)[0]
                a = np.asarray(leaves[0]) if len(leaves) == 1 else None
                if a is None or a.shape != () or a.dtype.kind not in "iu":
                    raise bad_choice(c)
                i = int(a)
                if not 0 <= i < n:
                    raise ValueError(f"choose_from_datasets: choice_dataset produced index {i}, but there are "
                                     f"{n} datasets (valid indices 0..{n - 1}).")
                yield i

        return Dataset(lambda: _directed_interleave(datasets, choices, stop_on_empty_dataset),
                       _directed_cardinality(datasets),
                       lambda: _common_spec(datasets))

    def rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None, name=None):
        """Resamples elements to reach ``target_dist`` over the classes ``class_func`` gives, as
        TensorFlow does: accept an element of class ``i`` with probability ``a_i``, mixed with the
        original stream with probability ``m`` (``sample_from_datasets``); ``initial_dist`` is
        estimated from the data when not given. Elements become ``(class, element)``.

        Like TF's, the acceptance draws are a stateful uniform stream (seeded by the global seed
        and ``seed``), and a rejected share over one half is reported on stderr ("Proportion of
        examples rejected by sampler is high: ...", the first 10 times).

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.from_tensor_slices([0, 0, 0, 1] * 50)
            >>> out = ds.rejection_resample(lambda x: x, target_dist=[0.5, 0.5], initial_dist=[0.75, 0.25], seed=1)
            >>> sorted({int(c) for c, x in out.take(20)})
            [0, 1]
        """
        target = np.asarray(_to_array(target_dist), np.float32)
        if initial_dist is not None:
            init = np.asarray(_to_array(initial_dist), np.float32)
            accept, p_orig = _acceptance_with_mixing(init, target)
            init_ds, accept_ds, p_orig_ds = (Dataset.from_tensors(v).repeat() for v in (init, accept, p_orig))
        else:
            init_ds = _estimated_initial_dist(target, self.map(class_func))
            mixed = init_ds.map(lambda initial: _acceptance_with_mixing(np.asarray(initial), target))
            accept_ds, p_orig_ds = mixed.map(lambda a, m: a), mixed.map(lambda a, m: m)
        filtered = _rejection_filtered(self, accept_ds, init_ds, class_func, seed)

        def add_class_value(*x):
            return (class_func(*x), x[0]) if len(x) == 1 else (class_func(*x), x)
        p_static = float(np.min(target / init)) if initial_dist is not None else None
        if p_static == 1:
            return self.map(add_class_value)
        if p_static == 0:
            return filtered
        return Dataset.sample_from_datasets([self.map(add_class_value), filtered],
                                            weights=p_orig_ds.map(lambda m: np.array([(m, 1.0 - m)], np.float32)),
                                            seed=seed, stop_on_empty_dataset=True)

    def ignore_errors(self, log_warning=False, name=None):
        """Drops the elements whose computation raised an error (``InvalidArgumentError`` from a
        ``map`` function, a ``check_numerics``...), going on with the next element, as TF does.

        With ``log_warning=True`` each error is logged (TensorFlow's "Error raised with error
        message ..." warning).

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.from_tensor_slices([1., 2., 0., 4.])
            >>> ds = ds.map(lambda x: tf.debugging.check_numerics(1. / x, "error"))
            >>> [float(x) for x in ds.ignore_errors()]
            [1.0, 0.5, 0.25]
        """
        def make():
            it = self._elements()
            while True:
                try:
                    e = next(it)
                except StopIteration:
                    return
                except Exception as ex:  # noqa: BLE001 - TensorFlow drops any error status
                    if log_warning:   # TF's C++ log line (glog format, on stderr)
                        now = time.time()
                        sys.stderr.write(f"W0000 00:00:{now:.6f} {threading.get_native_id():>8} "
                                         f"ignore_errors_dataset_op.cc:125] Error raised with error message {ex}\n")
                    continue
                yield e
        return self._derive(make, UNKNOWN_CARDINALITY, lambda: self.element_spec)   # TF: unknown, always

    @_freezes("key_func", "reduce_func", "window_size_func")
    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
        """Groups elements by ``key_func(element)`` (an int64 scalar) into windows of
        ``window_size`` elements (or ``window_size_func(key)``) and replaces each window by the
        elements of the dataset ``reduce_func(key, window_dataset)``.

        A window is reduced as soon as it is full; at the end of the input the partial windows
        are reduced in increasing key order (TensorFlow's GroupByWindowDataset).

        Raises:
            ValueError: if neither or both of ``window_size`` and ``window_size_func`` are given.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.range(10).group_by_window(
            ...     key_func=lambda x: x % 2, reduce_func=lambda key, w: w.batch(3), window_size=3)
            >>> [b.numpy().tolist() for b in ds]
            [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
        """
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be "
                             "specified.")
        if window_size is not None:
            size = int(window_size)
            window_size_func = lambda key: size  # noqa: E731
        self._check_key_func(key_func)
        spec = self._traced(reduce_func, method="group_by_window",
                            arg=lambda: (TensorSpec((), np.int64), _DatasetSpec(self.element_spec)))
        return self._grouped(key_func, reduce_func, window_size_func, spec)

    def _check_key_func(self, key_func):
        """TF's ValueError, when the transformation is made, for a key that is no int64 tensor."""
        def check(k):
            if isinstance(k, _TensorBase) and k.dtype != _dtypes.int64:
                raise ValueError(f"Tensor conversion requested dtype int64 for Tensor with dtype {k.dtype.name}: "
                                 f"{k!r}")
        before, _NO_PEEK.on = getattr(_NO_PEEK, "on", False), True
        try:
            spec = self.element_spec
        except Exception:  # noqa: BLE001 - known from an element only: the key is checked per element
            return
        finally:
            _NO_PEEK.on = before
        _traced_spec(key_func, spec, check=check)

    def _grouped(self, key_func, reduce_func, window_size_func, spec):
        def reduced(key, window):
            out = _as_dataset(reduce_func(_tensor(np.int64(key)), _list_dataset(window)), "group_by_window")
            return out._elements()

        def make():
            groups = {}
            for e in self._elements():
                key = _key_of(key_func, e)
                group = groups.setdefault(key, [])
                group.append(e)
                size = int(np.asarray(_to_array(window_size_func(_tensor(np.int64(key))))))
                if len(group) >= size:
                    del groups[key]
                    yield from reduced(key, group)
            for key in sorted(groups):     # TF's std::map: the partial windows by key
                yield from reduced(key, groups[key])
        return self._derive(make, UNKNOWN_CARDINALITY if self._card != INFINITE_CARDINALITY else INFINITE_CARDINALITY,
                            spec)

    @_freezes("element_length_func")
    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        """Batches elements of similar length together: bucket ``i`` holds the elements whose
        ``element_length_func(element)`` lies in ``[bucket_boundaries[i-1], bucket_boundaries[i])``
        and is batched by ``bucket_batch_sizes[i]`` with ``padded_batch`` (``batch`` with
        ``no_padding``), as TensorFlow's ``group_by_window`` over the bucket ids.

        ``pad_to_bucket_boundary=True`` pads each unknown dimension to the bucket's boundary - 1
        (an element as long as the largest boundary then raises ``InvalidArgumentError``).

        Raises:
            ValueError: if ``len(bucket_batch_sizes) != len(bucket_boundaries) + 1``.

        Example:
            >>> import tapejax as tf
            >>> rows = [[0], [1, 2, 3, 4], [5, 6, 7], [7, 8, 9, 10, 11], [13, 14, 15, 16, 19, 20], [21, 22]]
            >>> ds = tf.data.Dataset.from_generator(lambda: rows, tf.int64, output_shapes=[None])
            >>> ds = ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 5], [2, 2, 2])
            >>> [b.numpy().tolist() for b in ds]
            [[[1, 2, 3, 4], [5, 6, 7, 0]], [[7, 8, 9, 10, 11, 0], [13, 14, 15, 16, 19, 20]], [[0, 0], [21, 22]]]
        """
        boundaries = [int(b) for b in bucket_boundaries]
        sizes = [int(b) for b in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                             f"`len(bucket_batch_sizes)={len(sizes)}` and `len(bucket_boundaries)={len(boundaries)}`.")
        lows = [np.iinfo(np.int32).min] + boundaries
        highs = boundaries + [np.iinfo(np.int32).max]

        def bucket_id(*args):
            n = int(np.asarray(_to_array(element_length_func(*args))))
            return np.int64(next(i for i, (lo, hi) in enumerate(zip(lows, highs)) if lo <= n < hi))

        def given_shapes():
            specs, tree = _flatten(self.element_spec)
            if padded_shapes is None:
                return [list(s.shape) for s in specs], tree
            return [_padded_sizes(p, s) for p, s in zip(tree.flatten_up_to(padded_shapes), specs)], tree

        def batching(key, window):
            key = int(key)
            if no_padding:
                return window.batch(sizes[key], drop_remainder=drop_remainder)
            filler = None
            if pad_to_bucket_boundary:
                if key >= len(sizes) - 1:
                    raise errors.InternalError(None, None, (    # (TF wraps the assertion so)
                        "Got error code INVALID_ARGUMENT and message: {\n"
                        "assertion failed: [When pad_to_bucket_boundary=True, elements must have length < "
                        "max(bucket_boundaries).] [Condition x < y did not hold element-wise:] [x (args_0:0) = ] "
                        f"[{key}] [y (Const_1:0) = ] [{len(sizes) - 1}]\n}}"))
                filler = boundaries[key] - 1
            given, tree = given_shapes()
            shapes = tree.unflatten([[filler if d is None else d for d in g] for g in given])
            return window.padded_batch(sizes[key], shapes, padding_values, drop_remainder=drop_remainder)

        def spec():
            if no_padding:
                return _map(lambda s: _batched_spec(s, None), self.element_spec)
            specs = _flatten(self.element_spec)[0]
            given, tree = given_shapes()     # (a None dimension is padded to a size known when batching)
            return tree.unflatten([TensorSpec([None] + g, s.dtype) for s, g in zip(specs, given)])
        return self._grouped(bucket_id, batching, lambda key: sizes[int(key)], spec)

    @_freezes("predicate")
    def filter(self, predicate, name=None):
        """Keeps the elements for which ``predicate`` (receiving Tensors) is true.

        Raises:
            ValueError: ``predicate`` does not return a ``tf.bool`` scalar (TF's message; when
                the dataset is made where the predicate traces on the element_spec).

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(6).filter(lambda x: x % 2 == 0)]
            [0, 2, 4]
        """
        def bad(spec):
            return ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its "
                              f"return type is {spec}.")

        def keep(e):
            out = _call(predicate, e)
            a = np.asarray(out._value if isinstance(out, _TensorBase) else out)
            if a.shape != () or a.dtype != np.bool_:
                raise bad(_spec_of(a))
            return bool(a)

        def make():
            return (e for e in self._elements() if keep(e))
        traced = self._traced(predicate)
        try:
            spec = traced()
        except NameError:
            raise
        except Exception:  # noqa: BLE001 - not traceable on the spec: each result is checked as it comes
            spec = None
        if spec is not None and spec is not _VALUE_SHAPED and spec != TensorSpec((), np.bool_):
            raise bad(spec)
        # TF's FilterDataset: unknown even over an infinite input (the predicate may reject all the rest)
        return self._derive(make, UNKNOWN_CARDINALITY, self._spec_fn)

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times (forever for ``None`` or -1)."""
        forever = count is None or int(count) < 0
        n = None if forever else int(count)
        c = self._card
        card = (0 if c == 0 else INFINITE_CARDINALITY) if forever else (c * n if c >= 0 or n == 0 else c)

        def loop(it_fn):    # TF makes the first pass's iterator with this one, the others as they start
            if not forever and n == 0:
                return iter(())
            return itertools.chain([it_fn()], (it_fn() for _ in (itertools.count() if forever else range(n - 1))))

        if self._index is not None:
            source, idx = self._index
            return self._derive(None, card, self._spec_fn,
                                index=(source, lambda: itertools.chain.from_iterable(loop(idx))))
        return self._derive(lambda: itertools.chain.from_iterable(loop(self._elements)), card, self._spec_fn)

    def take(self, count, name=None):
        """The first ``count`` elements (all for -1)."""
        count = int(count)
        if count < 0:
            return self
        c = self._card
        card = count if c == INFINITE_CARDINALITY else (min(c, count) if c >= 0 else UNKNOWN_CARDINALITY)
        return self._select(lambda it: itertools.islice(it, count), card)

    def skip(self, count, name=None):
        """All but the first ``count`` elements."""
        count = int(count)
        c = self._card
        if count < 0:    # skips all: none left of a known input; TF keeps an infinite or unknown one's cardinality
            def drained():   # TF reads the input to its end (forever, for an infinite one), yields nothing
                for _ in self._elements():
                    pass
                yield from ()
            return self._derive(drained, 0 if c >= 0 else c, self._spec_fn)
        card = c if c < 0 else max(c - count, 0)
        return self._select(lambda it: itertools.islice(it, count, None), card)

    def shard(self, num_shards, index, name=None):
        """Every ``num_shards``-th element, starting at ``index``."""
        c = self._card
        card = c if c < 0 else max(0, -(-(c - index) // num_shards))
        return self._select(lambda it: itertools.islice(it, index, None, num_shards), card)

    def _select(self, f, card):
        if self._index is not None:
            source, idx = self._index
            return self._derive(None, card, self._spec_fn, index=(source, lambda: f(idx())))
        return self._derive(lambda: f(self._elements()), card, self._spec_fn)

    def enumerate(self, start=0, name=None):
        """Pairs each element with its index: ``(i, element)``."""
        def make():
            return ((_to_array(np.int64(i)), e) for i, e in enumerate(self._elements(), start))
        return self._derive(make, self._card,
                            lambda: (TensorSpec((), jax.dtypes.canonicalize_dtype(np.int64)), self.element_spec))

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then ``dataset``'s."""
        a, b = self._card, dataset._card
        card = INFINITE_CARDINALITY if -1 in (a, b) else (a + b if a >= 0 and b >= 0 else UNKNOWN_CARDINALITY)
        spec = lambda: _compatible_spec(self.element_spec, dataset.element_spec, "concatenate")  # noqa: E731
        before, _NO_PEEK.on = getattr(_NO_PEEK, "on", False), True
        try:
            spec()    # TensorFlow's TypeError for elements of other structures or dtypes, now
        except _NoPeek:
            pass
        finally:
            _NO_PEEK.on = before
        return self._derive(lambda: _then(self._elements(), dataset._elements), card, spec)

    def prefetch(self, buffer_size=AUTOTUNE, name=None):
        """Produces elements on a background thread, up to ``buffer_size`` ahead of the consumer.

        The pipeline before ``prefetch`` then runs while the consumer (a training step)
        works on the current element. ``tf.data.AUTOTUNE`` buffers 2 elements;
        ``buffer_size=0`` prefetches nothing. The thread starts with the iterator and
        stops when the iterator is closed or dropped; an exception raised upstream is
        raised by the ``next`` that reaches it.

        Raises:
            ValueError: if ``buffer_size`` is negative (other than AUTOTUNE).

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(4).batch(2).prefetch(tf.data.AUTOTUNE).unbatch()]
            [0, 1, 2, 3]
        """
        size = int(buffer_size)
        if size == AUTOTUNE:
            size = _PREFETCH_AUTOTUNE
        elif size < 0:
            raise ValueError(f"prefetch: `buffer_size` must be a non-negative integer or tf.data.AUTOTUNE, "
                             f"got {buffer_size}.")
        if size == 0:
            return self
        return self._derive(lambda: _Prefetch(self._elements(), size), self._card, self._spec_fn)

    def cache(self, filename="", name=None):
        """Keeps the elements in memory after the first complete iteration."""
        store = []
        done = [False]

        def filling(it):
            store.clear()
            for e in it:
                store.append(e)
                yield e
            done[0] = True
        return self._derive(lambda: iter(list(store)) if done[0] else filling(self._elements()), self._card,
                            self._spec_fn)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None, name=None):
        """The same elements, kept after the first complete pass (``tf.data.Dataset.snapshot``).

        TensorFlow writes them under ``path`` and reads them back on later passes, also in later
        processes; tapejax keeps them in memory, as :meth:`cache` (``path`` is not written).

        Raises:
            NotImplementedError: ``reader_func`` or ``shard_func`` given.

        Example:
            >>> import tempfile, tapejax as tf
            >>> ds = tf.data.Dataset.range(3).snapshot(tempfile.mkdtemp())
            >>> [int(x) for x in ds], int(ds.cardinality())
            ([0, 1, 2], 3)
        """
        if reader_func is not None or shard_func is not None:
            raise NotImplementedError("Dataset.snapshot: reader_func and shard_func are not supported (tapejax "
                                      "keeps the snapshot in memory); leave them out.")
        return self.cache()

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        """Writes the elements and the ``element_spec`` under the directory ``path``, for
        :meth:`Dataset.load` (also in a later process). Returns None, as TensorFlow.

        The files are tapejax's (``dataset_spec.pb``, ``snapshot.metadata`` and one file of
        pickled NumPy elements, named as TF names them), not TensorFlow's snapshot format:
        TensorFlow cannot read them, nor tapejax TensorFlow's.

        Raises:
            NotImplementedError: ``shard_func`` or ``checkpoint_args`` given.

        Example:
            >>> import os, tempfile, tapejax as tf
            >>> path = os.path.join(tempfile.mkdtemp(), "ds")
            >>> tf.data.Dataset.range(3).batch(2).save(path)
            >>> [b.numpy().tolist() for b in tf.data.Dataset.load(path)]
            [[0, 1], [2]]
        """
        import pickle
        if shard_func is not None or checkpoint_args is not None:
            raise NotImplementedError("Dataset.save: shard_func and checkpoint_args are not supported; leave them "
                                      "out (tapejax writes one file).")
        spec = self.element_spec
        elements = [_map(lambda a: a if _is_composite(a) else np.asarray(a), e) for e in self._elements()]
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "dataset_spec.pb"), "wb") as f:
            pickle.dump(spec, f)
        with open(os.path.join(path, "snapshot.metadata"), "wb") as f:
            pickle.dump({"cardinality": len(elements), "compression": compression}, f)
        with open(os.path.join(path, "elements"), "wb") as f:
            pickle.dump(elements, f)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None):
        """The dataset :meth:`Dataset.save` wrote under ``path`` (its elements, spec and cardinality).

        Raises:
            NotFoundError: ``path`` holds no saved dataset (TensorFlow's message).
            NotImplementedError: ``reader_func`` given.

        Example:
            >>> import os, tempfile, tapejax as tf
            >>> path = os.path.join(tempfile.mkdtemp(), "ds")
            >>> tf.data.Dataset.range(3).save(path)
            >>> tf.data.Dataset.load(path)
            <_LoadDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>
        """
        import pickle
        if reader_func is not None:
            raise NotImplementedError("Dataset.load: reader_func is not supported; leave it out.")
        spec_file = os.path.join(path, "dataset_spec.pb")
        if not os.path.exists(spec_file):
            raise errors.NotFoundError(None, None, f"tf.data snapshot element_spec file not found: {spec_file}.")
        with open(spec_file, "rb") as f:
            spec = pickle.load(f) if element_spec is None else element_spec
        with open(os.path.join(path, "elements"), "rb") as f:
            elements = pickle.load(f)
        out = Dataset(lambda: iter(elements), len(elements), lambda: spec)
        out._REPR = "_LoadDataset"
        return out

    def apply(self, transformation_func):
        """``transformation_func(self)``."""
        return transformation_func(self)

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the elements: ``state = reduce_func(state, element)``; the state is tensors (the
        initial one converted as TF converts it), and each new state must keep its dtypes.

        Example:
            >>> import numpy as np
            >>> import tapejax as tf
            >>> tf.data.Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1)
            <tf.Tensor: shape=(), dtype=int64, numpy=5>
        """
        def as_state(value):
            return _map(lambda x: x if isinstance(x, Tensor) else _tensor(_to_array(x)),
                        tuple(value) if isinstance(value, list) else value)
        state = as_state(initial_state)
        first = _flatten(state)[0]
        for e in self:
            new = as_state(reduce_func(state, e))
            leaves = _flatten(new)[0]
            if len(leaves) != len(first):
                raise errors.InvalidArgumentError(
                    None, None, "The number of components of the initial state and the reduce function output does "
                    f"not match. (initial_state={len(first)}, output={len(leaves)}).")
            for a, b in zip(first, leaves):
                if a.dtype != b.dtype:
                    raise TypeError("The element types for the new state must match the initial state. Expected "
                                    f"{a.dtype} but got {b.dtype}.")
            state = new
        return state

    def get_single_element(self, name=None):
        """The one element of a single-element dataset."""
        it = iter(self)
        first = next(it)
        try:
            next(it)
        except StopIteration:
            return first
        raise ValueError("get_single_element() needs a dataset with exactly one element.")

    def options(self):
        """The ``tf.data.Options`` of this dataset (set with ``with_options``)."""
        return self._options

    def with_options(self, options, name=None):
        """This dataset with ``options`` (a ``tf.data.Options``) merged into its options.

        Options set here override those set earlier; the datasets made from the result
        carry them too.

        Raises:
            TypeError: if ``options`` is not a ``tf.data.Options``.

        Example:
            >>> import tapejax as tf
            >>> options = tf.data.Options()
            >>> options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
            >>> ds = tf.data.Dataset.range(2).with_options(options)
            >>> ds.options() == options
            True
        """
        if not isinstance(options, Options):
            raise TypeError(f"with_options: `options` must be a tf.data.Options, got {type(options).__name__}.")
        out = self._derive(self._make, self._card, self._spec_fn, self._index)
        out._options = self._options.merge(options)
        return out


# The class TF prints for the dataset each transformation returns (``<_MapDataset element_spec=...>``);
# a second name where ``num_parallel_calls`` picks TF's parallel kernel.
_TF_DATASET_CLASSES = {
    "from_tensor_slices": "_TensorSliceDataset", "from_tensors": "_TensorDataset", "range": "_RangeDataset",
    "from_generator": "_FlatMapDataset", "zip": "_ZipDataset", "concatenate": "_ConcatenateDataset",
    "sample_from_datasets": "_DirectedInterleaveDataset", "choose_from_datasets": "_DirectedInterleaveDataset",
    "map": ("_MapDataset", "_ParallelMapDataset"), "batch": ("_BatchDataset", "_ParallelBatchDataset"),
    "interleave": ("_InterleaveDataset", "_ParallelInterleaveDataset"), "padded_batch": "_PaddedBatchDataset",
    "unbatch": "_UnbatchDataset", "rebatch": "_RebatchDataset", "shuffle": "_ShuffleDataset",
    "flat_map": "_FlatMapDataset", "window": "_WindowDataset", "scan": "_ScanDataset",
    "take_while": "_TakeWhileDataset", "unique": "_UniqueDataset", "filter": "_FilterDataset",
    "repeat": "_RepeatDataset", "take": "_TakeDataset", "skip": "_SkipDataset", "shard": "_ShardDataset",
    "enumerate": "_ZipDataset", "prefetch": "_PrefetchDataset", "cache": "CacheDataset",
    "with_options": "_OptionsDataset",
    "snapshot": "_MapDataset",   # TF 2.21 prints a snapshot as a _MapDataset
    "ignore_errors": "_IgnoreErrorsDataset", "group_by_window": "_GroupByWindowDataset",
    "sparse_batch": "_DenseToSparseBatchDataset",
    "bucket_by_sequence_length": "_GroupByWindowDataset",
}


def _printed_as(method, names):
    """``method`` whose result prints as TF's class for it (the result's ``_REPR``)."""
    name, parallel = names if isinstance(names, tuple) else (names, None)
    signature = inspect.signature(method) if parallel else None

    @functools.wraps(method)
    def transformation(*args, **kwargs):
        out = method(*args, **kwargs)
        if isinstance(out, Dataset):
            if any(out is a for a in args):     # a no-op (take(-1)) is still a new dataset in TF
                out = copy.copy(out)
            parallel_calls = signature.bind(*args, **kwargs).arguments.get("num_parallel_calls") if parallel else None
            out._REPR = parallel if parallel_calls is not None else name
        return out
    return transformation


for _method, _names in _TF_DATASET_CLASSES.items():
    _attr = Dataset.__dict__[_method]
    if isinstance(_attr, staticmethod):
        setattr(Dataset, _method, staticmethod(_printed_as(_attr.__func__, _names)))
    else:
        setattr(Dataset, _method, _printed_as(_attr, _names))


_GET_NEXT = " [Op:IteratorGetNext] name: "


def _get_next(it):
    """``next(it)`` of an iterator's elements. An error computing an element is raised by
    TensorFlow's IteratorGetNext op: its message ends with the op's decoration, as an eager
    op error's does (``missing.csv; No such file or directory [Op:IteratorGetNext] name: ``)."""
    try:
        return next(it)
    except errors.OpError as e:
        if not str(e).rstrip().endswith("[Op:IteratorGetNext] name:"):
            e.message = str(e) + _GET_NEXT
            e.args = (e.message,)
        raise


class _Iterator:
    """An iterator over a dataset: ``next(it)`` or ``it.get_next()``.

    Its position is state, as in TensorFlow: inside a compiled ``tf.function``,
    ``next(it)`` reads the element at a position kept in a Variable and advances it,
    so each call gets the next element. The remaining elements are staged (stacked
    into arrays) the first time a function reads the iterator; that needs a finite
    dataset whose elements have one shape and numeric dtypes, else a ValueError
    says to pass the elements as arguments instead (``for x in ds: step(x)``). An
    iterator made inside the function (``for x in ds`` in its body) is local to the
    trace and is simply read while tracing.
    """

    def __init__(self, elements, cardinality=UNKNOWN_CARDINALITY, restart=None):
        self._it = elements
        self._card = cardinality
        self._local = _state.tracing()
        self._staged = None   # (stacked leaves, tree, n) once a compiled function reads it
        self._pos = None      # Variable: the index of the next staged element
        self._restart = restart   # () -> the elements from the start, to seek a restored position
        self._count = 0           # elements read eagerly
        self._saved = None        # Variable: the position a checkpoint saw (or restored)
        self._seen = 0            # its value when this iterator last set it

    def __iter__(self):
        return self

    def next(self):
        """The next element (TensorFlow's iterators have ``next()`` besides ``__next__``)."""
        return self.__next__()

    _spec_of_dataset = None

    @property
    def element_spec(self):
        """The dataset's ``element_spec``."""
        if self._spec_of_dataset is None:
            raise AttributeError("element_spec: this iterator was not made by iter(dataset).")
        return self._spec_of_dataset()

    def _trackable_children(self):
        """A checkpoint saves the position (TensorFlow's key ``.ATTRIBUTES/ITERATOR_STATE``)."""
        if self._saved is None:
            with _state.init_scope():
                self._saved = Variable(np.int32(0), trainable=False, name="iterator_state")
        if not _state.tracing():
            self._seek_restored()
            position = self._count + (int(np.asarray(self._pos._stored)) if self._staged is not None else 0)
            self._saved.assign(position)
            self._seen = position
        return {".ATTRIBUTES/ITERATOR_STATE": self._saved}

    def _seek_restored(self):
        """Moves to the position a checkpoint restore assigned, if one did."""
        n = None if self._saved is None else int(np.asarray(self._saved._stored))
        if n is None or n == self._seen:
            return
        if self._staged is not None and n >= self._count:
            self._pos.assign(n - self._count)
        elif self._restart is not None and self._staged is None:
            self._it, self._count = itertools.islice(self._restart(), n, None), n
        else:
            raise ValueError("This iterator cannot move back to the position restored from a checkpoint: "
                             "make it with iter(dataset) and restore before a tf.function reads it.")
        self._seen = n

    def __next__(self):
        if not _state.tracing():
            self._seek_restored()
        if self._staged is None and (self._local or not _state.tracing()):
            element = _get_next(self._it)
            self._count += 1
            return _to_tensors(element)
        if self._staged is None:
            self._stage()
        leaves, tree, n = self._staged
        if not _state.tracing():
            i = int(self._pos.numpy())
            if i >= n:
                raise StopIteration
            self._pos.assign(i + 1)
            return tree.unflatten([Tensor(l[i]) for l in leaves])
        i = _state.read(self._pos)
        self._pos.assign(i + 1)
        _state.staged_check(self._check_end)
        at = jax.numpy.minimum(i, n - 1)
        return tree.unflatten([Tensor(jax.lax.dynamic_index_in_dim(l, at, keepdims=False)) for l in leaves])

    def _stage(self):
        self._seek_restored()
        if self._card < 0:
            raise ValueError(_NOT_STAGEABLE.format(why="its length is not known (or infinite)"))
        with _state.init_scope():   # the dataset's own functions run now, not in the trace
            elems = [_to_numpy(e) for e in self._it]
        try:
            stacked = _stack(elems) if elems else None
        except (ValueError, TypeError, errors.InvalidArgumentError) as e:
            raise ValueError(_NOT_STAGEABLE.format(why=f"its elements cannot be stacked ({e})")) from None
        leaves, tree = _flatten(stacked)
        if any(np.asarray(l).dtype.kind in "OUS" for l in leaves) or not elems:
            raise ValueError(_NOT_STAGEABLE.format(why="its elements are not numeric (or it is empty)"))
        with _state.init_scope():
            self._pos = Variable(np.int32(0), trainable=False, name="iterator_position")
            self._staged = ([jax.device_put(np.asarray(l)) for l in leaves], tree, len(elems))

    def _check_end(self):
        n = self._staged[2]
        if int(self._pos.numpy()) > n:
            self._pos.assign(n)
            raise errors.OutOfRangeError(None, None, "End of sequence")

    def get_next(self):
        return next(self)

    def get_next_as_optional(self):
        """The next element as an ``Optional``: empty at the end (no StopIteration).

        Example:
            >>> import tapejax as tf
            >>> it = iter(tf.data.Dataset.range(1))
            >>> o = it.get_next_as_optional()
            >>> bool(o.has_value()), int(o.get_value()), bool(it.get_next_as_optional().has_value())
            (True, 0, False)
        """
        try:
            return Optional.from_value(next(self))
        except StopIteration:
            return Optional.empty(self.element_spec if self._spec_of_dataset is not None else None)  # TF's


class IteratorSpec:
    """The spec of a dataset iterator (``tf.data.IteratorSpec``): its ``element_spec``.

    Example:
        >>> import tapejax as tf
        >>> tf.data.IteratorSpec(tf.TensorSpec([], tf.int64))
        IteratorSpec(TensorSpec(shape=(), dtype=tf.int64, name=None),)
    """

    def __init__(self, element_spec):
        self.element_spec = element_spec

    @classmethod
    def from_value(cls, value):
        return cls(value.element_spec)

    @property
    def value_type(self):
        return _Iterator

    def is_compatible_with(self, spec_or_value):
        other = IteratorSpec(spec_or_value.element_spec) if isinstance(spec_or_value, _Iterator) else spec_or_value
        return isinstance(other, IteratorSpec) and _specs_compatible(self.element_spec, other.element_spec)

    def _tf_bind(self, value):
        """``value`` as an argument of a tf.function with this spec in its input_signature."""
        if isinstance(value, _Iterator) and self.is_compatible_with(value):
            return value
        raise TypeError(f"Can not cast {value!r} to {self!r}")

    def __repr__(self):
        return f"IteratorSpec({self.element_spec!r},)"

    def __eq__(self, other):
        return isinstance(other, IteratorSpec) and self.element_spec == other.element_spec

    def __hash__(self):
        return hash(("IteratorSpec", repr(self.element_spec)))


class NumpyIterator:
    """What ``Dataset.as_numpy_iterator()`` returns: the elements as NumPy values (the dataset's
    iterator is made when this is, as in TensorFlow).

    Example:
        >>> import tapejax as tf
        >>> it = tf.data.Dataset.range(3).as_numpy_iterator()
        >>> int(next(it)), [int(x) for x in it]
        (0, [1, 2])
    """

    def __init__(self, dataset):
        self._it = dataset._elements()

    def __iter__(self):
        return self

    def __next__(self):
        return _map(_numpy_component, _get_next(self._it))

    next = __next__

    def __repr__(self):
        return f"NumpyIterator(iterator=<tensorflow.python.data.ops.iterator_ops.OwnedIterator object at {hex(id(self._it))}>)"


class Optional:
    """A value that may be absent (``tf.experimental.Optional``): ``has_value()``, ``get_value()``.

    Example:
        >>> import tapejax as tf
        >>> optional = tf.experimental.Optional.from_value(42)
        >>> print(optional.has_value())
        tf.Tensor(True, shape=(), dtype=bool)
        >>> print(optional.get_value())
        tf.Tensor(42, shape=(), dtype=int32)
        >>> print(tf.experimental.Optional.empty(tf.TensorSpec(shape=(), dtype=tf.int32)).has_value())
        tf.Tensor(False, shape=(), dtype=bool)
    """

    def __init__(self, value=None, has_value=False, element_spec=None):
        self._value, self._has = value, has_value   # (``has_value``: a bool, or a bool Tensor when traced)
        self._spec = element_spec

    @staticmethod
    def from_value(value):
        """An Optional holding ``value`` (a structure of tensors, converted as TF converts them).

        Example:
            >>> import tapejax as tf
            >>> tf.experimental.Optional.from_value(42).element_spec
            TensorSpec(shape=(), dtype=tf.int32, name=None)
        """
        value = _map(_to_array, value)
        return Optional(_to_tensors(value), True, _spec_of(value))

    @staticmethod
    def empty(element_spec):
        """An Optional of no value, whose value would have ``element_spec``.

        Example:
            >>> import tapejax as tf
            >>> bool(tf.experimental.Optional.empty(tf.TensorSpec([], tf.int32)).has_value())
            False
        """
        return Optional(None, False, element_spec)

    @property
    def element_spec(self):
        """The spec of the value (TensorSpecs in the value's structure).

        Example:
            >>> import tapejax as tf
            >>> print(tf.experimental.Optional.from_value(42).element_spec)
            TensorSpec(shape=(), dtype=tf.int32, name=None)
        """
        return self._spec

    def has_value(self, name=None):
        """Whether it holds a value: a bool scalar Tensor.

        Example:
            >>> import tapejax as tf
            >>> print(tf.experimental.Optional.from_value(42).has_value())
            tf.Tensor(True, shape=(), dtype=bool)
        """
        return self._has if isinstance(self._has, Tensor) else Tensor(jax.numpy.asarray(self._has))

    def get_value(self, name=None):
        """The value; TF's InvalidArgumentError when there is none.

        Example:
            >>> import tapejax as tf
            >>> print(tf.experimental.Optional.from_value(42).get_value())
            tf.Tensor(42, shape=(), dtype=int32)
        """
        has = self._has._value if isinstance(self._has, Tensor) else self._has
        if not _is_symbolic(has) and not bool(has):
            raise errors.InvalidArgumentError(None, None, "The given optional does not have a value.")
        if self._value is None:   # an empty one's value in a traced function (a branch not taken)
            return _map(_placeholder_of, self._spec)
        return self._value

    @property
    def _type_spec(self):
        return OptionalSpec(self._spec)

    def __repr__(self):
        return f"<tensorflow.python.data.ops.optional_ops._OptionalImpl object at {hex(id(self))}>"


def _placeholder_of(spec):
    """Zeros of ``spec`` (unknown sizes 0): what a traced empty Optional's value stands for."""
    if not isinstance(spec, _TensorSpecBase) or spec.shape is None:
        raise errors.InvalidArgumentError(None, None, "The given optional does not have a value.")
    shape = [d or 0 for d in spec.shape]
    if spec.dtype == _dtypes.string:
        return _tensor(np.full(shape, b"", dtype=object))
    return _tensor(np.zeros(shape, _dtypes.np_dtype(spec.dtype)))


class _SpecKey:
    """An element_spec as static pytree data (compared by its repr: dicts are not hashable)."""

    def __init__(self, spec):
        self.spec = spec

    def __eq__(self, other):
        return isinstance(other, _SpecKey) and repr(self.spec) == repr(other.spec)

    def __hash__(self):
        return hash(repr(self.spec))


# An Optional is a JAX pytree (its flag and value the leaves, its spec static): a tf.function
# taking one traces on whether it has a value, so ``if optional.has_value():`` is a tf.cond.
jax.tree_util.register_pytree_node(
    Optional, lambda o: ((o.has_value(), o._value), _SpecKey(o._spec)),
    lambda key, children: Optional(children[1], children[0], key.spec))


class OptionalSpec:
    """The spec of a ``tf.experimental.Optional`` (``tf.OptionalSpec``): the spec of its value;
    usable in a ``tf.function``'s ``input_signature``.

    Example:
        >>> import tapejax as tf
        >>> @tf.function(input_signature=[tf.OptionalSpec(tf.TensorSpec(shape=(), dtype=tf.int32))])
        ... def maybe_square(optional):
        ...     if optional.has_value():
        ...         x = optional.get_value()
        ...         return x * x
        ...     return -1
        >>> print(maybe_square(tf.experimental.Optional.from_value(5)))
        tf.Tensor(25, shape=(), dtype=int32)
    """

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def value_type(self):
        return Optional

    @classmethod
    def from_value(cls, value):
        return cls(value.element_spec)

    def is_compatible_with(self, spec_or_value):
        other = spec_or_value._type_spec if isinstance(spec_or_value, Optional) else spec_or_value
        if not isinstance(other, OptionalSpec):
            return False
        return _specs_compatible(self._element_spec, other._element_spec)

    def _tf_bind(self, value):
        """``value`` as an argument of a tf.function with this spec in its input_signature."""
        if isinstance(value, Optional) and self.is_compatible_with(value):
            return value
        raise TypeError(f"Can not cast {value!r} to {self!r}")

    def __eq__(self, other):
        return isinstance(other, OptionalSpec) and self._element_spec == other._element_spec

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        return f"OptionalSpec({self._element_spec!r},)"


_NOT_STAGEABLE = (
    "next(iterator) inside a tf.function reads the iterator's position as state, which needs the "
    "remaining elements staged as arrays, but {why}. Iterate outside and pass each element as an "
    "argument instead: `for x in dataset: step(x)`.")


class _OptionsBase:
    """TF's options objects: known attributes only, type-checked, ``None`` until set."""

    _FIELDS = {}    # name: (type, or an _OptionsBase subclass for nested options)
    _ALIASES = {}   # deprecated name: name

    def __init__(self):
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name):
        if name.startswith("__") or name == "_values":
            raise AttributeError(name)
        name = self._ALIASES.get(name, name)
        if name not in self._FIELDS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if name not in self._values and isinstance(self._FIELDS[name], type) and \
                issubclass(self._FIELDS[name], _OptionsBase):
            self._values[name] = self._FIELDS[name]()
        return self._values.get(name)

    def __setattr__(self, name, value):
        name = self._ALIASES.get(name, name)
        if name not in self._FIELDS:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        kind = self._FIELDS[name]
        if value is not None and not isinstance(value, kind):
            raise TypeError(f'Property "{name}" must be of type {kind}, got: {value!r} (type: {type(value)})')
        self._values[name] = value

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        names = set(self._values) | set(other._values)
        return all(getattr(self, n) == getattr(other, n) for n in names)

    __hash__ = None

    def merge(self, options):
        """These options overridden by those set in ``options`` (a new object)."""
        out = type(self)()
        for src in (self, options):
            for name, v in src._values.items():
                if isinstance(v, _OptionsBase):
                    v = getattr(out, name).merge(v)
                object.__setattr__(out, "_values", {**out._values, name: v})
        return out


class AutotuneOptions(_OptionsBase):
    """``tf.data.experimental.AutotuneOptions`` (accepted; tapejax sizes buffers and pools itself)."""
    _FIELDS = {"autotune_algorithm": object, "cpu_budget": int, "enabled": bool, "initial_parallelism": int,
               "min_parallelism": int, "ram_budget": int}


class DistributeOptions(_OptionsBase):
    """``tf.data.experimental.DistributeOptions``."""
    _FIELDS = {"auto_shard_policy": int, "num_devices": int}


class OptimizationOptions(_OptionsBase):
    """``tf.data.experimental.OptimizationOptions`` (accepted; no graph rewrites happen)."""
    _FIELDS = dict.fromkeys(
        ["apply_default_optimizations", "filter_fusion", "filter_parallelization", "inject_prefetch",
         "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion", "map_parallelization",
         "noop_elimination", "parallel_batch", "seq_interleave_prefetch", "shuffle_and_repeat_fusion"], bool)


class ThreadingOptions(_OptionsBase):
    """``tf.data.ThreadingOptions`` (accepted)."""
    _FIELDS = {"max_intra_op_parallelism": int, "private_threadpool_size": int}


class Options(_OptionsBase):
    """``tf.data.Options``: settings for a whole pipeline, given with ``ds.with_options``.

    Only TF's option names can be set (others raise AttributeError), with TF's types.
    ``deterministic = False`` lets parallel ``map`` calls made on the resulting dataset
    yield elements as they are ready; the other options are accepted and have no effect.

    Example:
        >>> import tapejax as tf
        >>> options = tf.data.Options()
        >>> options.deterministic = False
        >>> ds = tf.data.Dataset.range(3).with_options(options)
        >>> ds.options().deterministic
        False
    """
    _FIELDS = {"autotune": AutotuneOptions, "dataset_name": str, "deterministic": bool,
               "experimental_distribute": DistributeOptions, "experimental_external_state_policy": object,
               "experimental_optimization": OptimizationOptions, "experimental_service": object,
               "experimental_slack": bool, "experimental_symbolic_checkpoint": bool,
               "experimental_warm_start": bool, "framework_type": list, "threading": ThreadingOptions}
    _ALIASES = {"experimental_deterministic": "deterministic", "experimental_threading": "threading"}


# ---------------------------------------------------------------------------
# File datasets: text lines, TFRecords, fixed-length records, CSV
# ---------------------------------------------------------------------------

def _string(value):
    """A string element: a 0-d object array holding bytes (what TF's ``.numpy()`` gives)."""
    return np.array(value.encode() if isinstance(value, str) else bytes(value), dtype=object)


def _strings(values):
    out = np.empty(len(values), dtype=object)
    out[:] = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    return out


def _path(element):
    """A filename element (a string tensor, NumPy bytes / str, a Python str or PathLike) as a str."""
    if isinstance(element, os.PathLike):
        return os.fspath(element)
    if hasattr(element, "numpy"):
        element = element.numpy()
    value = np.asarray(element).item() if not isinstance(element, (str, bytes)) else element
    return value.decode() if isinstance(value, bytes) else str(value)


def _string_list(values, what, method):
    """``values`` (a str, PathLike, or a list / array of them) as a list of str."""
    if isinstance(values, (str, bytes, os.PathLike)):
        values = [values]
    if isinstance(values, (_TensorBase, np.ndarray)) or hasattr(values, "numpy"):
        values = np.ravel(np.asarray(values.numpy() if hasattr(values, "numpy") else values)).tolist()
    out = []
    for v in values:
        if not isinstance(v, (str, bytes, os.PathLike, np.str_, np.bytes_)):
            raise TypeError(f"{method}: The `{what}` argument must contain `tf.string` elements. Got "
                            f"`{type(v).__name__}` elements.")
        out.append(_path(v))
    return out


def _filenames_dataset(filenames, method):
    """TF's check of a reader's ``filenames``: a Dataset of scalar strings, or strings to slice."""
    if isinstance(filenames, Dataset):
        if filenames._spec_fn is not None:
            spec = filenames.element_spec
            if not isinstance(spec, TensorSpec) or spec.dtype != _dtypes.string:
                what = f"`tf.{spec.dtype.name}`" if isinstance(spec, TensorSpec) else repr(spec)
                raise TypeError(f"{method}: The `filenames` argument must contain `tf.string` elements. Got a "
                                f"dataset of {what} elements.")
            if tuple(spec.shape) != ():
                raise TypeError(f"{method}: The `filenames` argument must contain `tf.string` elements of "
                                f"shape [] (i.e. scalars). Got a dataset of element shape {spec.shape!r}.")
        return filenames
    return Dataset.from_tensor_slices(_strings(_string_list(filenames, "filenames", method)))


_STRING_SPEC = TensorSpec((), _dtypes.string)


def _read_files(filenames, read_one, num_parallel_reads, method, spec):
    """TF's ``_create_dataset_reader``: ``read_one(path)`` for each file, one file after another,
    or ``num_parallel_reads`` files interleaved element by element, each read by its own thread."""
    files = _filenames_dataset(filenames, method)

    def one(f):
        path = _path(f)
        return Dataset(lambda: read_one(path), UNKNOWN_CARDINALITY, spec)

    if num_parallel_reads is None:
        return files.flat_map(one)
    n = _parallelism(num_parallel_reads, method)
    return files.interleave(one, cycle_length=n, block_length=1, num_parallel_calls=n)


class _FileDataset(Dataset):
    """A dataset read from files; it prints as TF's class of the same name."""

    def _init_from(self, dataset, spec):
        Dataset.__init__(self, dataset._make, dataset._card, spec)


def _text_lines(path, kind):
    with _tfio.open_file(path, kind) as f:
        for line in f:
            if line.endswith(b"\n"):
                line = line[:-1]
                if line.endswith(b"\r"):
                    line = line[:-1]
            yield _string(line)


class TextLineDataset(_FileDataset):
    """The lines of text files, as scalar ``tf.string`` elements without their line endings.

    ``filenames`` is a path, a list of paths or a Dataset of paths; the files are read
    one after another (``num_parallel_reads`` files at once, interleaved line by line).
    ``compression_type`` is None (or ''), 'GZIP' or 'ZLIB'. A trailing '\\r' is removed
    with the '\\n', as TF does. A missing file raises ``tf.errors.NotFoundError`` when
    the iteration reaches it.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
        >>> with open(path, "w") as f:
        ...     _ = f.write("first line\\nsecond line\\n")
        >>> list(tf.data.TextLineDataset(path).as_numpy_iterator())
        [b'first line', b'second line']
    """
    _REPR = "TextLineDatasetV2"

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        kind = _tfio.compression(compression_type, "TextLineDataset")
        spec = lambda: _STRING_SPEC  # noqa: E731
        self._init_from(_read_files(filenames, lambda p: _text_lines(p, kind), num_parallel_reads,
                                    "TextLineDataset", spec), spec)


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files, as scalar ``tf.string`` elements (the raw bytes).

    Reads the format TensorFlow writes (``tf.io.TFRecordWriter``) without TensorFlow,
    checking each record's two CRC32-C checksums: a damaged or truncated file raises
    ``tf.errors.DataLossError`` naming the offset. ``compression_type`` is None (or ''),
    'GZIP' or 'ZLIB'; ``num_parallel_reads`` reads that many files at once, interleaved
    record by record. Parse the records with ``map``.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
        >>> with tf.io.TFRecordWriter(path) as w:
        ...     w.write(b"\\x01\\x02")
        ...     w.write(b"xyz")
        >>> ds = tf.data.TFRecordDataset([path])
        >>> ds
        <TFRecordDatasetV2 element_spec=TensorSpec(shape=(), dtype=tf.string, name=None)>
        >>> list(ds.as_numpy_iterator())
        [b'\\x01\\x02', b'xyz']
    """
    _REPR = "TFRecordDatasetV2"

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        kind = _tfio.compression(compression_type, "TFRecordDataset")

        def read(path):
            for record in _tfio.read_records(path, kind):
                yield _string(record)
        spec = lambda: _STRING_SPEC  # noqa: E731
        self._init_from(_read_files(filenames, read, num_parallel_reads, "TFRecordDataset", spec), spec)


class FixedLengthRecordDataset(_FileDataset):
    """Records of ``record_bytes`` bytes from binary files, after ``header_bytes`` and
    before ``footer_bytes`` (both skipped), as scalar ``tf.string`` elements.

    Raises:
        tf.errors.InvalidArgumentError: (when iterated) if a file's body is not a whole
            number of records.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "f.bin")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"HEADER012345FOOTER")
        >>> ds = tf.data.FixedLengthRecordDataset(path, record_bytes=2, header_bytes=6, footer_bytes=6)
        >>> list(ds.as_numpy_iterator())
        [b'01', b'23', b'45']
    """
    _REPR = "FixedLengthRecordDatasetV2"

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None, name=None):
        size = _positive_int(record_bytes, "record_bytes", "FixedLengthRecordDataset")
        head, foot = int(header_bytes or 0), int(footer_bytes or 0)
        kind = _tfio.compression(compression_type, "FixedLengthRecordDataset")

        def read(path):
            with _tfio.open_file(path, kind) as f:
                body = f.read()[head:]
            body = body[:len(body) - foot]
            if len(body) % size:
                raise errors.InvalidArgumentError(
                    None, None, f"Excluding the header ({head} bytes) and footer ({foot} bytes), input file "
                                f"\"{path}\" has body length {len(body)} bytes, which is not an exact multiple of "
                                f"the record length ({size} bytes).")
            for i in range(0, len(body), size):
                yield _string(body[i:i + size])
        spec = lambda: _STRING_SPEC  # noqa: E731
        self._init_from(_read_files(filenames, read, num_parallel_reads, "FixedLengthRecordDataset", spec), spec)


def _glob(patterns):
    """The files matching any of ``patterns``, sorted (TF's MatchingFiles)."""
    return sorted(m for p in patterns for m in glob.glob(p))


_CSV_TYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}


def _csv_column(default, i):
    """A CSV column from a ``record_defaults`` entry: (dtype name, default element or None if required)."""
    if isinstance(default, _dtypes.DType) or (isinstance(default, type) and issubclass(default, np.generic)):
        dt = _dtypes.as_dtype(default)
        value = None
    else:
        a = _to_array(default)
        if a.size > 1:
            raise ValueError(f"CsvDataset: record_defaults[{i}] must be a dtype or a tensor of at most one "
                             f"element (the column's default), got shape {a.shape}.")
        dt = _dtypes.string if a.dtype.kind in "OUS" else _dtypes.as_dtype(a.dtype)
        value = None if a.size == 0 else a.reshape(())
    name = "string" if dt == _dtypes.string else dt.name
    if name not in _CSV_TYPES and name != "string":
        raise TypeError(f"CsvDataset: record_defaults[{i}] has dtype {name}; CSV columns are float32, float64, "
                        "int32, int64 or string.")
    if value is not None:
        value = _string(value.item()) if name == "string" else np.asarray(value, _CSV_TYPES[name])
    return name, value


def _csv_field(text, name, default, col, na_value):
    if text == "" or text == na_value:
        if default is None:
            raise errors.InvalidArgumentError(None, None, f"Field {col} is required but missing in record!")
        return default
    if name == "string":
        return _string(text.encode("utf-8", "surrogateescape"))
    try:
        if name.startswith("int"):
            v = int(text.strip())
            info = np.iinfo(_CSV_TYPES[name])
            if not info.min <= v <= info.max:
                raise ValueError(text)
        else:
            v = float(text.strip())
        return np.asarray(v, _CSV_TYPES[name])
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"Field {col} in record is not a valid {name}: "
                                                      f"{text}") from None


def _csv_rows(path, kind, field_delim, use_quote_delim, header, encoding="utf-8"):
    """The rows (lists of str) of a CSV file; blank lines are skipped."""
    with _tfio.open_file(path, kind) as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, errors="surrogateescape", newline="")
        quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
        rows = csv.reader(text, delimiter=field_delim, quoting=quoting)
        if header:
            next(rows, None)
        for row in rows:
            if row:
                yield row


class CsvDataset(_FileDataset):
    """The records of CSV files (RFC 4180), one tuple of scalars per row.

    ``record_defaults`` gives one entry per parsed column: a dtype (float32, float64,
    int32, int64, string) for a required column, or a one-element tensor / Python value
    for an optional one whose empty (or ``na_value``) fields take that value. Choose the
    columns with ``select_cols`` or ``exclude_cols`` (sorted indices). Leading and
    trailing spaces around numbers are allowed.

    Raises:
        tf.errors.InvalidArgumentError: (when iterated) if a required field is empty, a
            field does not parse as its column's dtype, or a row has a wrong number of
            fields.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "my_file0.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("abcdefg,4.28E10,5.55E6,12\\n")
        ...     _ = f.write("hijklmn,-5.3E14,,2\\n")
        >>> ds = tf.data.experimental.CsvDataset(path, [tf.float32, [0.0], tf.int32], select_cols=[1, 2, 3])
        >>> for n0, n1, n2 in ds.as_numpy_iterator():
        ...     print(n0, n1, n2)
        4.28e+10 5550000.0 12
        -5.3e+14 0.0 2
    """
    _REPR = "CsvDatasetV2"

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None,
                 _skip_errors=False):
        columns = [_csv_column(d, i) for i, d in enumerate(record_defaults)]
        if not columns:
            raise ValueError("CsvDataset: `record_defaults` needs one entry per column.")
        if select_cols is not None and exclude_cols is not None:
            raise errors.InvalidArgumentError(None, None, "CsvDataset: give at most one of `select_cols` and "
                                                          "`exclude_cols`.")
        kind = _tfio.compression(compression_type, "CsvDataset")
        picks = sorted(int(c) for c in (select_cols if select_cols is not None else exclude_cols or []))
        if select_cols is not None:
            if len(picks) != len(columns):
                raise errors.InvalidArgumentError(
                    None, None, f"CsvDataset: select_cols has {len(picks)} indices but record_defaults has "
                                f"{len(columns)} entries; give one default per selected column.")
            cols, width = picks, None
        elif exclude_cols is not None:
            width = len(columns) + len(picks)
            cols = [c for c in range(width) if c not in set(picks)]
        else:
            cols, width = list(range(len(columns))), len(columns)

        def read(path):
            for row in _csv_rows(path, kind, field_delim, use_quote_delim, bool(header)):
                try:
                    if (width is not None and len(row) != width) or len(row) <= cols[-1]:
                        raise errors.InvalidArgumentError(
                            None, None, f"Expect {width or cols[-1] + 1} fields but have {len(row)} in record "
                                        f"({path}).")
                    out = tuple(_csv_field(row[c], name, default, c, na_value)
                                for c, (name, default) in zip(cols, columns))
                except errors.InvalidArgumentError:
                    if _skip_errors:
                        continue
                    raise
                yield out

        spec = lambda: tuple(TensorSpec((), _dtypes.string if n == "string" else _CSV_TYPES[n])  # noqa: E731
                             for n, _ in columns)
        self._init_from(_read_files(filenames, read, None, "CsvDataset", spec), spec)


def _infer_csv_type(text, na_value, prev):
    """TF's ``_infer_type``: the least permissive of int32, int64, float32, float64, string
    that fits ``text`` and every earlier value of the column."""
    if text in ("", na_value):
        return prev
    order = ["int32", "int64", "float32", "float64", "string"]

    def fits(t):
        try:
            if t.startswith("int"):
                info = np.iinfo(_CSV_TYPES[t])
                return info.min <= int(text) <= info.max
            if t.startswith("float"):
                return bool(np.abs(_CSV_TYPES[t](float(text))) < np.inf)
        except (ValueError, OverflowError):
            return False
        return True

    for i, t in enumerate(order):
        if fits(t) and (prev is None or prev in order[:i + 1]):
            return t
    return "string"


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """Batches of CSV rows as ``(OrderedDict of columns, label)`` (or just the dict), as TF.

    Column names come from the header row unless given; column types are inferred
    from the first ``num_rows_for_inference`` rows (int32, int64, float32, float64 or
    string; missing values default to 0 or '') unless ``column_defaults`` is given.
    ``select_columns`` (names or indices) keeps those columns, in file order. The files
    matching ``file_pattern`` (sorted) and the rows are shuffled unless
    ``shuffle=False``; the rows repeat ``num_epochs`` times (forever for None, the
    default, which also drops the last partial batch, as TF does).

    Raises:
        ValueError: if no file matches, the header is missing or has duplicates, or
            ``label_name`` / ``select_columns`` name unknown columns.

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "d.csv")
        >>> with open(path, "w") as f:
        ...     _ = f.write("x,y,label\\n1,2.5,0\\n3,4.5,1\\n5,,1\\n")
        >>> ds = tf.data.experimental.make_csv_dataset(path, batch_size=2, label_name="label",
        ...                                            shuffle=False, num_epochs=1)
        >>> for features, label in ds.as_numpy_iterator():
        ...     print(dict(features), label)
        {'x': array([1, 3], dtype=int32), 'y': array([2.5, 4.5], dtype=float32)} [0 1]
        {'x': array([5], dtype=int32), 'y': array([0.], dtype=float32)} [1]
    """
    patterns = _string_list(file_pattern, "file_pattern", "make_csv_dataset")
    if not patterns:
        raise ValueError("Argument `file_pattern` should not be empty.")
    filenames = _glob(patterns)
    if not filenames:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    kind = _tfio.compression(compression_type, "make_csv_dataset")

    def rows(names, header_):
        for name in names:
            yield from _csv_rows(name, kind, field_delim, use_quote_delim, header_, encoding)

    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        heads = []
        for name in filenames:
            head = next(_csv_rows(name, kind, field_delim, use_quote_delim, False, encoding), None)
            if head is None:
                raise ValueError(f"Failed when reading the header line of {name}. Is it an empty file?")
            heads.append(head)
        column_names = heads[0]
        for name, head in zip(filenames[1:], heads[1:]):
            if head != column_names:
                raise ValueError("All input CSV files should have the same column names in the header row. "
                                 f"File {name} has different column names.")
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        dups = {n for n in column_names if column_names.count(n) > 1}
        raise ValueError(f"Either `column_names` argument or CSV header row contains duplicate column names: "
                         f"{dups}.")
    select = None
    if select_columns is not None:
        index = {n: i for i, n in enumerate(column_names)}
        select = []
        for v in select_columns:
            if isinstance(v, (int, np.integer)):
                if not 0 <= v < len(column_names):
                    raise ValueError(f"Column index {v} specified in `select_columns` should be > 0  and <= "
                                     f"{len(column_names)}, which is the number of columns.")
                select.append(int(v))
            elif v not in index:
                raise ValueError(f"Column {v} specified in `select_columns` must be of one of the columns: "
                                 f"{index.keys()}.")
            else:
                select.append(index[v])
        if len(set(select)) != len(select):
            raise ValueError(f"The `select_columns` argument contains duplicate columns: "
                             f"{ {column_names[i] for i in select if select.count(i) > 1} }.")
        select = sorted(select)
    picked = select if select is not None else list(range(len(column_names)))
    if column_defaults is None:
        types = [None] * len(picked)
        for r, row in enumerate(rows(filenames, header)):
            if num_rows_for_inference is not None and r >= num_rows_for_inference:
                break
            if len(row) != len(column_names):
                raise ValueError(f"Problem inferring types: CSV row {r + 1 + bool(header)} has {len(row)} number "
                                 f"of fields. Expected: {len(column_names)}.")
            types = [_infer_csv_type(row[c], na_value, t) for c, t in zip(picked, types)]
        column_defaults = [[""] if (t or "string") == "string" else np.zeros(1, _CSV_TYPES[t]) for t in types]
    if select is not None and len(column_defaults) != len(select):
        raise ValueError(f"If specified, `column_defaults` and `select_columns` must have the same length: "
                         f"`column_defaults` has length {len(column_defaults)}, `select_columns` has length "
                         f"{len(select)}.")
    names = [column_names[i] for i in picked]
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. Received: {label_name}.")

    files = Dataset.from_tensor_slices(_strings(filenames))
    if shuffle:
        files = files.shuffle(len(filenames), shuffle_seed)
    reads = 1 if num_parallel_reads is None else num_parallel_reads

    def read_file(f):
        return CsvDataset(f, column_defaults, compression_type=compression_type, header=header,
                          field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                          select_cols=select, _skip_errors=ignore_errors)

    parallel = num_parallel_reads is not None and _parallelism(reads, "make_csv_dataset") > 1
    ds = files.interleave(read_file, cycle_length=_parallelism(reads, "make_csv_dataset"), block_length=1,
                          num_parallel_calls=reads if parallel else None)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    batches = ds.batch(batch_size, drop_remainder=num_epochs is None)
    col_specs = [TensorSpec((batch_size if num_epochs is None else None,), s.dtype)
                 for s in (TensorSpec((), _dtypes.string if n == "string" else _CSV_TYPES[n])
                           for n, _ in (_csv_column(d, i) for i, d in enumerate(column_defaults)))]

    def organize(columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    def make():
        return (organize(b) for b in batches._elements())
    out = batches._derive(make, batches._card, lambda: organize(col_specs))
    return out.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


_WARNED = set()


def _deprecated(name, tf_module, instructions, arg=None):
    """TensorFlow's deprecation warning, once per function (per argument with ``arg``: TF's
    ``deprecated_args``), naming the caller's line. TF's ``deprecated_args`` warns in graph mode
    only: while a function is traced (a dataset function, as TF traces them), not eagerly once
    the eager context exists (any op made it)."""
    if (name, arg) in _WARNED:
        return
    if arg is not None and not (_state.tracing() or getattr(_NO_PEEK, "on", False)):
        return
    _WARNED.add((name, arg))
    here = os.path.dirname(os.path.abspath(__file__))
    caller = next((f for f in inspect.stack()[2:] if not os.path.abspath(f.filename).startswith(here + os.sep)),
                  inspect.stack()[2])
    what = name if arg is None else f"calling {name}"
    _logs.warning("From %s:%d: %s (from %s)%s is deprecated and will be removed in a future version.\n"
                  "Instructions for updating:\n%s", caller.filename, caller.lineno, what, tf_module,
                  "" if arg is None else f" with {arg}", instructions)


class _AutoShardPolicy:
    OFF, AUTO, FILE, DATA, HINT = -1, 0, 1, 2, 3


class experimental:
    """``tf.data.experimental``."""

    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY
    AutoShardPolicy = _AutoShardPolicy
    AutotuneOptions = AutotuneOptions
    DistributeOptions = DistributeOptions
    OptimizationOptions = OptimizationOptions
    ThreadingOptions = ThreadingOptions
    CsvDataset = CsvDataset
    make_csv_dataset = staticmethod(make_csv_dataset)

    @staticmethod
    def cardinality(dataset):
        return dataset.cardinality()

    @staticmethod
    def Counter(start=0, step=1, dtype=_dtypes.int64, name=None):  # noqa: N802 - TensorFlow's name
        """``tf.data.Dataset.counter`` (deprecated in TensorFlow, which logs so).

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.experimental.Counter(start=5).take(2)]
            [5, 6]
        """
        _deprecated("CounterV2", "tensorflow.python.data.experimental.ops.counter",
                    "Use `tf.data.Dataset.counter(...)` instead.")
        return Dataset.counter(start, step, dtype, name)

    @staticmethod
    def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64):
        """``dataset.apply(tf.data.experimental.dense_to_ragged_batch(n))``: ``ragged_batch``
        (deprecated in TensorFlow, which logs so).

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.from_tensor_slices([2, 1]).map(tf.range)
            >>> [b.to_list() for b in ds.apply(tf.data.experimental.dense_to_ragged_batch(2))]
            [[[0, 1], [0]]]
        """
        _deprecated("dense_to_ragged_batch", "tensorflow.python.data.experimental.ops.batching",
                    "Use `tf.data.Dataset.ragged_batch` instead.")
        return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)

    @staticmethod
    def assert_cardinality(expected_cardinality):
        """``dataset.apply(tf.data.experimental.assert_cardinality(n))``: the dataset, with
        cardinality ``n``; iterating raises TF's ``FailedPreconditionError`` when it holds more or
        fewer elements.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.Dataset.range(6).filter(lambda x: True)
            >>> int(ds.apply(tf.data.experimental.assert_cardinality(6)).cardinality())
            6
        """
        n = int(expected_cardinality)

        def apply(dataset):
            def make():
                count = 0
                for e in dataset._elements():
                    count += 1
                    if n >= 0 and count > n:
                        raise errors.FailedPreconditionError(None, None, (
                            f"Input dataset was expected to contain {n} element{'s' if n != 1 else ''} but "
                            f"contained at least {count} element{'s' if count != 1 else ''}. [Op:IteratorGetNext] "
                            "name: "))
                    yield e
                if n >= 0 and count < n:
                    raise errors.FailedPreconditionError(None, None, (
                        f"Input dataset was expected to contain {n} element{'s' if n != 1 else ''} but "
                        f"contained only {count} element{'s' if count != 1 else ''}. [Op:IteratorGetNext] name: "))
            out = dataset._derive(make, n, lambda: dataset.element_spec)
            out._REPR = "_AssertCardinalityDataset"
            return out
        return apply

    @staticmethod
    def from_list(elements, name=None):
        """A dataset of the given elements (each of one structure), stacked per component.

        Example:
            >>> import tapejax as tf
            >>> ds = tf.data.experimental.from_list([(1, "a"), (2, "b")])
            >>> list(ds.as_numpy_iterator())
            [(np.int32(1), b'a'), (np.int32(2), b'b')]
        """
        if not elements:
            raise ValueError("Invalid `elements`. `elements` should not be empty. If you want an empty dataset, "
                             "use `tf.data.Dataset.range(0)`.")
        if not isinstance(elements, list):
            raise ValueError("Invalid `elements`. `elements` must be a list.")
        items = [_map(_to_array, e) for e in elements]
        first = _spec_of(items[0])
        spec = first
        for e in items[1:]:
            other = _spec_of(e)
            if _flatten(first)[1] != _flatten(other)[1]:
                raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                                 f"{first}\n\nSecond structure: {other}")
            spec = _compatible_spec(spec, other, "from_list")   # TF's most specific common supertype
        if spec == first:     # one shape: the stacked slices (random access kept)
            out = Dataset.from_tensor_slices(_stack(items))
        else:                 # shapes differ ([[1], [2, 3]]): the elements as given, TF's common spec
            out = Dataset(lambda: iter(items), len(items), lambda: spec)
        out._REPR = "_ListDataset"
        return out

    @staticmethod
    def get_structure(dataset_or_iterator):
        """The ``element_spec`` of a dataset (or of the dataset an iterator reads)."""
        spec = getattr(dataset_or_iterator, "element_spec", None)
        if spec is None:
            raise TypeError("Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a `tf.data.Dataset` or "
                            f"tf.data.Iterator object, but got {type(dataset_or_iterator)}.")
        return spec

    @staticmethod
    def get_single_element(dataset):
        """``dataset.get_single_element()`` (deprecated in TensorFlow, which logs so)."""
        _deprecated("get_single_element", "tensorflow.python.data.experimental.ops.get_single_element",
                    "Use `tf.data.Dataset.get_single_element()`.")
        return dataset.get_single_element()

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
        """``Dataset.sample_from_datasets`` (deprecated in TensorFlow, which logs so)."""
        _deprecated("sample_from_datasets_v2", "tensorflow.python.data.experimental.ops.interleave_ops",
                    "Use `tf.data.Dataset.sample_from_datasets(...)`.")
        return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
        """``Dataset.choose_from_datasets`` with TF's experimental default
        ``stop_on_empty_dataset=False`` (deprecated in TensorFlow, which logs so)."""
        _deprecated("choose_from_datasets_v2", "tensorflow.python.data.experimental.ops.interleave_ops",
                    "Use `tf.data.Dataset.choose_from_datasets(...)` instead. Note that, unlike the experimental "
                    "endpoint, the non-experimental endpoint sets `stop_on_empty_dataset=True` by default. You "
                    "should set this argument explicitly in case you would like to match the behavior of the "
                    "experimental endpoint.")
        return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


class _ExternalStatePolicy(enum.Enum):
    WARN = 0
    IGNORE = 1
    FAIL = 2


class _AutotuneAlgorithm(enum.Enum):
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


_ExternalStatePolicy.__name__ = _ExternalStatePolicy.__qualname__ = "ExternalStatePolicy"
_AutotuneAlgorithm.__name__ = _AutotuneAlgorithm.__qualname__ = "AutotuneAlgorithm"


class Reducer:
    """``tf.data.experimental.Reducer``: ``init_func(key)`` -> state, ``reduce_func(state,
    element)`` -> state, ``finalize_func(state)`` -> output, for ``group_by_reducer``."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self.init_func, self.reduce_func, self.finalize_func = init_func, reduce_func, finalize_func


def _group_by_reducer(dataset, key_func, reducer):
    def make():
        states = {}
        for e in dataset._elements():
            key = _key_of(key_func, e)
            if key not in states:
                states[key] = reducer.init_func(_tensor(np.int64(key)))
            t = _to_tensors(e)
            states[key] = reducer.reduce_func(states[key], *t) if isinstance(t, tuple) else \
                reducer.reduce_func(states[key], t)
        for key in sorted(states):
            yield _map(_to_array, reducer.finalize_func(states[key]))
    out = dataset._derive(make, UNKNOWN_CARDINALITY)
    out._REPR = "_GroupByReducerDataset"
    return out


def _pad_to_cardinality(dataset, cardinality, mask_key="valid"):
    n = int(dataset._card)
    if n < 0:
        raise ValueError(f"The dataset passed into `pad_to_cardinality` must have a known cardinalty, but has "
                         f"cardinality {n}")
    if n > cardinality:
        raise ValueError(f"The dataset passed into `pad_to_cardinality` must have a cardinalty less than the target "
                         f"cardinality ({cardinality}), but has cardinality {n}")
    spec = dataset.element_spec
    if not isinstance(spec, dict):
        raise ValueError(f"`pad_to_cardinality` requires its input dataset to be a dictionary, but got {spec}.")
    valid = dataset.map(lambda e: {**e, mask_key: True})
    blank = {k: np.zeros([0 if d is None else d for d in v.shape], v.dtype.as_numpy_dtype) for k, v in spec.items()}
    blank[mask_key] = np.asarray(False)
    out = valid.concatenate(Dataset.from_tensors(blank).repeat(cardinality - n))
    out._REPR = "_ConcatenateDataset"
    return out


def _experimental_transformation(name, module, instructions, apply):
    """A deprecated ``tf.data.experimental`` transformation: logs TF's warning when called and
    returns ``lambda dataset: apply(dataset, *args)`` for ``dataset.apply``."""
    def transformation(*args, **kwargs):
        _deprecated(name, "tensorflow.python.data.experimental.ops." + module, instructions)
        return lambda dataset: apply(dataset, *args, **kwargs)
    transformation.__name__ = transformation.__qualname__ = name
    transformation.__doc__ = (f"``dataset.apply(tf.data.experimental.{name}(...))`` (deprecated in TensorFlow, "
                              f"which logs so): {instructions}")
    return staticmethod(transformation)


for _name, _module, _instructions, _apply in [
    ("bucket_by_sequence_length", "grouping", "Use `tf.data.Dataset.bucket_by_sequence_length(...)`.",
     Dataset.bucket_by_sequence_length),
    ("dense_to_sparse_batch", "batching", "Use `tf.data.Dataset.sparse_batch` instead.", Dataset.sparse_batch),
    ("enumerate_dataset", "enumerate_ops", "Use `tf.data.Dataset.enumerate()`.", Dataset.enumerate),
    ("group_by_window", "grouping", "Use `tf.data.Dataset.group_by_window(...)`.", Dataset.group_by_window),
    ("ignore_errors", "error_ops", "Use `tf.data.Dataset.ignore_errors` instead.", Dataset.ignore_errors),
    ("map_and_batch", "batching", "Use `tf.data.Dataset.map(map_func, num_parallel_calls)` followed by "
     "`tf.data.Dataset.batch(batch_size, drop_remainder)`. Static tf.data optimizations will take care of using "
     "the fused implementation.",
     lambda ds, map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None:
     ds.map(map_func, num_parallel_calls).batch(batch_size, drop_remainder)),
    ("parallel_interleave", "interleave_ops", "Use `tf.data.Dataset.interleave(map_func, cycle_length, "
     "block_length, num_parallel_calls=tf.data.AUTOTUNE)` instead. If sloppy execution is desired, use "
     "`tf.data.Options.deterministic`.",
     lambda ds, map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
     prefetch_input_elements=None: ds.interleave(map_func, cycle_length, block_length, num_parallel_calls=AUTOTUNE)),
    ("rejection_resample", "resampling", "Use `tf.data.Dataset.rejection_resample(...)`.",
     Dataset.rejection_resample),
    ("scan", "scan_ops", "Use `tf.data.Dataset.scan(...) instead", Dataset.scan),
    ("shuffle_and_repeat", "shuffle_ops", "Use `tf.data.Dataset.shuffle(buffer_size, seed)` followed by "
     "`tf.data.Dataset.repeat(count)`. Static tf.data optimizations will take care of using the fused "
     "implementation.",
     lambda ds, buffer_size, count=None, seed=None: ds.shuffle(buffer_size, seed).repeat(count)),
    ("take_while", "take_while_ops", "Use `tf.data.Dataset.take_while(...)", Dataset.take_while),
    ("unbatch", "batching", "Use `tf.data.Dataset.unbatch()`.", Dataset.unbatch),
    ("unique", "unique", "Use `tf.data.Dataset.unique(...)", Dataset.unique),
    ("snapshot", "snapshot", "Use `tf.data.Dataset.snapshot(...)`.", Dataset.snapshot),
]:
    setattr(experimental, _name, _experimental_transformation(_name, _module, _instructions, _apply))

class _TFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type)``: ``write(dataset)``
    writes a dataset of scalar strings as one TFRecord file (``tf.io.TFRecordWriter``'s records).

    Example:
        >>> import os, tempfile, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "x.tfrecord")
        >>> tf.data.experimental.TFRecordWriter(path).write(tf.data.Dataset.from_tensor_slices([b"a", b"bc"]))
        >>> list(tf.data.TFRecordDataset(path).as_numpy_iterator())
        [b'a', b'bc']
    """

    def __init__(self, filename, compression_type=None):
        self._filename, self._compression = filename, compression_type

    def write(self, dataset):
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != _dtypes.string or spec.shape is None or len(spec.shape):
            shape = "None" if not isinstance(spec, TensorSpec) or spec.shape is None else str(tuple(spec.shape))
            dtype = f"<dtype: '{spec.dtype.name}'>" if isinstance(spec, TensorSpec) else type(spec).__name__
            raise TypeError("Invalid `dataset`. Expected a`dataset` that produces scalar `tf.string` elements, but "
                            f"got a dataset which produces elements with shapes {shape} and types {dtype}.")
        with _tfio.TFRecordWriter(self._filename, self._compression) as w:
            for e in dataset._elements():
                w.write(bytes(np.asarray(e, dtype=object)[()]))

    def __repr__(self):
        return f"<tensorflow.python.data.experimental.ops.writers.TFRecordWriter object at {hex(id(self))}>"


_TFRecordWriter.__name__ = _TFRecordWriter.__qualname__ = "TFRecordWriter"


def _device_copy(name):
    def transformation(*args, **kwargs):
        def apply(dataset):
            out = dataset._derive(dataset._elements, dataset._card, lambda: dataset.element_spec)
            out._REPR = name
            return out
        return apply
    return staticmethod(transformation)


experimental.TFRecordWriter = _TFRecordWriter
experimental.SHARD_HINT = -1
experimental.ExternalStatePolicy = _ExternalStatePolicy
experimental.AutotuneAlgorithm = _AutotuneAlgorithm
experimental.Optional = Optional
experimental.Reducer = Reducer
experimental.group_by_reducer = staticmethod(
    lambda key_func, reducer: lambda dataset: _group_by_reducer(dataset, key_func, reducer))
experimental.pad_to_cardinality = staticmethod(
    lambda cardinality, mask_key="valid": lambda dataset: _pad_to_cardinality(dataset, cardinality, mask_key))
experimental.prefetch_to_device = _device_copy("_PrefetchToDeviceDataset")   # one host device: the same elements
experimental.copy_to_device = _device_copy("_CopyToDeviceDataset")
experimental.enable_debug_mode = staticmethod(lambda: None)   # tapejax's pipelines run eagerly already


def _experimental_at(dataset, index):
    """The element at ``index`` (``tf.data.experimental.at``)."""
    for i, e in enumerate(dataset._elements()):
        if i == int(index):
            return _to_tensors(e)
    raise errors.OutOfRangeError(None, None, f"Index {int(index)} is out of range.")


experimental.at = staticmethod(_experimental_at)


def _deprecated_call(name, module, instructions, fn):
    def call(*args, **kwargs):
        _deprecated(name, module, instructions)
        return fn(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"(deprecated in TensorFlow, which logs so): {instructions}"
    return staticmethod(call)


experimental.save = _deprecated_call("save", "tensorflow.python.data.experimental.ops.io",
                                     "Use `tf.data.Dataset.save(...)` instead.",
                                     lambda dataset, path, *a, **k: dataset.save(path, *a, **k))
experimental.load = _deprecated_call("load", "tensorflow.python.data.experimental.ops.io",
                                     "Use `tf.data.Dataset.load(...)` instead.", Dataset.load)
experimental.get_next_as_optional = _deprecated_call(
    "get_next_as_optional", "tensorflow.python.data.ops.iterator_ops",
    "Use `tf.data.Iterator.get_next_as_optional()` instead.", lambda iterator: iterator.get_next_as_optional())


def _random_dataset(seed=None):
    _deprecated("_RandomDataset.__init__", "tensorflow.python.data.experimental.ops.random_ops",
                "Use `tf.data.Dataset.random(...)`.")
    out = Dataset.random(seed)
    out._REPR = "RandomDatasetV2"
    return out


experimental.RandomDataset = staticmethod(_random_dataset)

Iterator = _Iterator   # ``isinstance(iter(dataset), tf.data.Iterator)``


__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental", "Options",
           "ThreadingOptions", "TensorSpec", "TextLineDataset", "TFRecordDataset", "FixedLengthRecordDataset",
           "DatasetSpec", "Iterator", "IteratorSpec", "NumpyIterator"]

from ._missing import module_getattr as _module_getattr  # noqa: E402
from . import random as _random
__getattr__ = _module_getattr(__name__)
