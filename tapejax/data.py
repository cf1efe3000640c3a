"""tf.data on numpy: lazy, re-iterable pipelines that yield tapejax Tensors.

Elements are nested tuples / dicts of numpy arrays; iteration converts the leaves
to Tensors (``as_numpy_iterator`` leaves them as numpy). Pipelines that start with
``from_tensor_slices`` and only reorder or select elements (``shuffle``, ``take``,
``skip``, ``repeat``, ``shard``) carry indices instead of elements, so ``batch``
gathers each batch with one fancy index per array instead of stacking examples.

Example:
    >>> import numpy as np, tapejax as tf
    >>> ds = tf.data.Dataset.from_tensor_slices((np.arange(5.0), np.arange(5)))
    >>> for x, y in ds.batch(2, drop_remainder=True):
    ...     print(x.numpy(), y.numpy())
    [0. 1.] [0 1]
    [2. 3.] [2 3]
"""
import bisect
import itertools
import os
import random as _pyrandom

import jax
import numpy as np

from ._tensor import Tensor, _TensorBase, _python_default_dtype, TensorShape, from_numpy
from . import _dtypes, _state, errors
from ._variable import Variable

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


def _flatten(s):
    return jax.tree_util.tree_flatten(s, is_leaf=_is_leaf)


def _map(f, s):
    leaves, tree = _flatten(s)
    return tree.unflatten([f(x) for x in leaves])


def _to_array(x):
    """A leaf as a numpy array with the dtype JAX will give it (TF's conversion for Python data)."""
    if isinstance(x, Dataset):
        return x  # a dataset-valued component (``window``'s windows) stays a Dataset
    if isinstance(x, (_TensorBase, jax.Array)):
        # Pipelines run on the host, like TF's: one copy here, then cheap numpy slicing.
        x = np.asarray(x._value if isinstance(x, _TensorBase) else x)
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        a = np.asarray(x)
    else:
        a = np.asarray(x)
        if a.dtype.kind in "fiuc":
            a = _python_default_dtype(x)
    if a.dtype.kind in "fiucb":
        dt = jax.dtypes.canonicalize_dtype(a.dtype)
        if a.dtype != dt:
            a = a.astype(dt)
    return a


def _tensor(a):
    if isinstance(a, Dataset):
        return a
    if isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind in "OUS":
        return np.asarray(a)  # strings stay numpy: tapejax tensors hold numbers
    return Tensor(from_numpy(np.asarray(a)))


def _to_tensors(e):
    return _map(_tensor, e)


def _to_numpy(e):
    return _map(np.asarray, e)


def _call(fn, e):
    """TF calls ``fn(*element)`` for tuple elements and ``fn(element)`` otherwise."""
    t = e if all(isinstance(l, Tensor) for l in _flatten(e)[0]) else _to_tensors(e)
    if isinstance(t, tuple) and not hasattr(t, "_fields"):
        return fn(*t)
    return fn(t)


def _stack(elems):
    leaves = [_flatten(e)[0] for e in elems]
    if any(isinstance(l, Dataset) for l in leaves[0]):
        raise TypeError("Cannot batch elements that are Datasets (the windows made by ds.window(n)). "
                        "Batch each window instead: ds.window(n).flat_map(lambda w: w.batch(n)).")
    tree = _flatten(elems[0])[1]
    return tree.unflatten([np.stack([np.asarray(l[i]) for l in leaves]) for i in range(len(leaves[0]))])


def _global_seed():
    """An op seed drawn from tapejax's global generator, so ``tf.random.set_seed`` fixes shuffles."""
    from . import random as _random
    try:
        return int(_random.get_global_generator().uniform((), 0, 2 ** 31 - 1, dtype=np.int32))
    except Exception:  # noqa: BLE001 - e.g. called while a tapejax.function is tracing
        return _pyrandom.SystemRandom().randrange(2 ** 31)


def _unstack(batch):
    leaves, tree = _flatten(batch)
    leaves = [np.asarray(l) for l in leaves]
    for i in range(len(leaves[0]) if leaves else 0):
        yield tree.unflatten([l[i] for l in leaves])


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
        try:
            # A strict scope refuses Variables: a map function that reads one runs eagerly.
            with _state.Scope(strict=True):
                out = self.jitted(chunk)
        except Exception:  # noqa: BLE001 - not traceable: run eagerly, as written
            self.ok = False
            return None
        return self.out_tree.unflatten(out)


class TensorSpec:
    """The shape and dtype of one component of a dataset element.

    Example:
        >>> import tapejax as tf
        >>> tf.data.Dataset.from_tensor_slices([[1.0, 2.0]]).element_spec
        TensorSpec(shape=(2,), dtype=tf.float32, name=None)
    """

    def __init__(self, shape, dtype=None, name=None):
        self.shape = TensorShape(shape)
        if dtype is not None and not isinstance(dtype, _dtypes.DType) and np.dtype(dtype).kind in "OUS":
            self.dtype = _dtypes.string
        else:
            self.dtype = _dtypes.as_dtype(dtype if dtype is not None else np.float32)
        self.name = name

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and tuple(self.shape) == tuple(other.shape)
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((tuple(self.shape), self.dtype.name))


class _DatasetSpec:
    """The spec of a component that is itself a Dataset (``window``'s windows)."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"

    def __eq__(self, other):
        return isinstance(other, _DatasetSpec) and self.element_spec == other.element_spec

    def __hash__(self):
        return hash(("DatasetSpec", repr(self.element_spec)))


def _spec_of(e):
    def spec(a):
        if isinstance(a, Dataset):
            return _DatasetSpec(a.element_spec)
        return TensorSpec(np.shape(a), np.asarray(a).dtype if not isinstance(a, jax.Array) else a.dtype)
    return _map(spec, e)


# ---------------------------------------------------------------------------
# Dataset
# ---------------------------------------------------------------------------

_NEEDS_FINITE = ("The dataset is {what}, so it has no length. Use ds.cardinality() (INFINITE_CARDINALITY "
                 "= -1, UNKNOWN_CARDINALITY = -2), or make it finite with ds.take(n).")



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
    else it is skipped; the result ends when every dataset is exhausted.
    """
    its = [d._elements() for d in datasets]
    alive = [True] * len(datasets)
    for i in choices(alive):
        if alive[i]:
            try:
                yield next(its[i])
                continue
            except StopIteration:
                alive[i] = False
        if stop_on_empty_dataset or not any(alive):
            return

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

    # -- iteration -----------------------------------------------------------

    def __iter__(self):
        return _Iterator(self._elements(), self._card, restart=self._elements)

    def _elements(self):
        if self._index is not None:
            source, idx = self._index
            leaves, tree = _flatten(source)
            return (tree.unflatten([l[i] for l in leaves]) for i in idx())
        return self._make()

    def as_numpy_iterator(self):
        """Iterates the elements as numpy arrays.

        Example:
            >>> import tapejax as tf
            >>> [x.tolist() for x in tf.data.Dataset.range(3).as_numpy_iterator()]
            [0, 1, 2]
        """
        for e in self._elements():
            yield _map(lambda a: a if isinstance(a, Dataset) else
                       (np.asarray(a)[()] if np.ndim(a) == 0 else np.asarray(a)), e)

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
        if self._spec_fn is not None:
            return self._spec_fn()
        for e in self._elements():
            return _spec_of(e)
        raise ValueError("element_spec of an empty dataset of unknown structure.")

    def __repr__(self):
        try:
            spec = self.element_spec
        except Exception:  # noqa: BLE001 - repr must not fail
            spec = "?"
        return f"<Dataset element_spec={spec}>"

    def _derive(self, make, cardinality, spec=None, index=None):
        return Dataset(make, cardinality, spec, index)

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
            if np.ndim(a) == 0:
                raise ValueError("from_tensor_slices needs tensors of rank >= 1 to slice; got a scalar. "
                                 "Use Dataset.from_tensors(x) for a single element.")
        n = {int(np.shape(a)[0]) for a in leaves}
        if len(n) > 1:
            raise ValueError(f"Dimensions of the components do not match: first dimensions {sorted(n)}. "
                             "All tensors given to from_tensor_slices need the same number of rows.")
        n = n.pop()
        spec = lambda: _map(lambda a: TensorSpec(np.shape(a)[1:], a.dtype), source)  # noqa: E731
        return Dataset(None, n, spec, index=(source, lambda: iter(range(n))))

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element: ``tensors``."""
        e = _map(_to_array, tensors)
        return Dataset(lambda: iter([e]), 1, lambda: _spec_of(e))

    @staticmethod
    def range(*args, dtype=None, name=None):
        """Integers like Python's ``range(start, stop, step)``.

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(1, 6, 2)]
            [1, 3, 5]
        """
        r = range(*args)
        dt = jax.dtypes.canonicalize_dtype(_dtypes.np_dtype(dtype) if dtype is not None else np.int64)
        src = np.arange(r.start, r.stop, r.step, dtype=dt)
        return Dataset.from_tensor_slices(src)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """Elements from calling ``generator(*args)`` anew on each iteration."""
        def make():
            for e in generator(*(args or ())):
                yield _map(_to_array, e)
        spec = None
        if output_signature is not None:
            spec = lambda: output_signature  # noqa: E731
        return Dataset(make, UNKNOWN_CARDINALITY, spec)

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
        leaves, tree = jax.tree_util.tree_flatten(datasets, is_leaf=lambda d: isinstance(d, Dataset))
        for d in leaves:
            if not isinstance(d, Dataset):
                raise TypeError(f"Dataset.zip takes datasets, got {type(d).__name__}. Wrap tensors first: "
                                "Dataset.from_tensor_slices(x).")

        def make():
            for parts in zip(*[d._elements() for d in leaves]):
                yield tree.unflatten(list(parts))
        cards = [d._card for d in leaves]
        finite = [c for c in cards if c >= 0]
        card = min(finite) if finite else (INFINITE_CARDINALITY if all(c == -1 for c in cards) else UNKNOWN_CARDINALITY)
        if finite and any(c == UNKNOWN_CARDINALITY for c in cards):
            card = UNKNOWN_CARDINALITY
        return Dataset(make, card, lambda: tree.unflatten([d.element_spec for d in leaves]))

    # -- transformations -------------------------------------------------------

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Combines consecutive elements into batches (the last one smaller unless ``drop_remainder``).

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

            def make():
                it = idx()
                while True:
                    chunk = np.fromiter(itertools.islice(it, bs), dtype=np.int64)
                    if len(chunk) == 0 or (drop_remainder and len(chunk) < bs):
                        return
                    yield tree.unflatten([l[chunk] for l in leaves])
        else:
            def make():
                for chunk in _chunks(self._elements(), bs, drop_remainder):
                    yield _stack(chunk)
        card = _batched_cardinality(self._card, bs, drop_remainder)
        lead = bs if drop_remainder else None
        return self._derive(make, card, lambda: _map(lambda s: TensorSpec((lead,) + tuple(s.shape), s.dtype),
                                                     self.element_spec))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches elements of different shapes, padding each component to the largest in the batch."""
        bs = int(batch_size)

        def pad_stack(arrs, value):
            arrs = [np.asarray(a) for a in arrs]
            shape = np.max([a.shape for a in arrs], axis=0) if arrs[0].ndim else ()
            out = np.full((len(arrs),) + tuple(shape), 0 if value is None else value, dtype=arrs[0].dtype)
            for i, a in enumerate(arrs):
                out[(i,) + tuple(slice(0, d) for d in a.shape)] = a
            return out

        def make():
            for chunk in _chunks(self._elements(), bs, drop_remainder):
                leaves = [_flatten(e)[0] for e in chunk]
                tree = _flatten(chunk[0])[1]
                pv = _flatten(padding_values)[0] if padding_values is not None else [None] * len(leaves[0])
                yield tree.unflatten([pad_stack([l[i] for l in leaves], pv[i]) for i in range(len(leaves[0]))])
        return self._derive(make, _batched_cardinality(self._card, bs, drop_remainder))

    def unbatch(self, name=None):
        """Splits each element along its first dimension (the inverse of ``batch``)."""
        def make():
            for e in self._elements():
                leaves, tree = _flatten(e)
                for i in range(np.shape(leaves[0])[0]):
                    yield tree.unflatten([l[i] for l in leaves])
        return self._derive(make, UNKNOWN_CARDINALITY if self._card != INFINITE_CARDINALITY else INFINITE_CARDINALITY,
                            lambda: _map(lambda s: TensorSpec(s.shape[1:], s.dtype), self.element_spec))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles with TF's buffer algorithm: each output is drawn uniformly from a buffer of
        ``buffer_size`` upcoming elements. Deterministic when ``seed`` is given; with
        ``reshuffle_each_iteration`` each new iteration draws a new (seeded) order.

        Example:
            >>> import tapejax as tf
            >>> make = lambda: tf.data.Dataset.range(8).shuffle(8, seed=1)
            >>> a, b = make(), make()
            >>> first = [int(x) for x in a]
            >>> sorted(first) == list(range(8)), first == [int(x) for x in b]
            (True, True)
        """
        buffer_size = int(buffer_size)
        if buffer_size == AUTOTUNE or buffer_size <= 0:
            raise ValueError(f"shuffle needs a positive buffer_size, got {buffer_size}. For a full "
                             "shuffle pass the dataset size: ds.shuffle(len(ds)).")
        base_seed = int(seed) if seed is not None else _global_seed()
        epochs = itertools.count()
        card = self._card

        def rng():
            k = next(epochs) if reshuffle_each_iteration else 0
            return _pyrandom.Random(base_seed * 1000003 + k)

        def shuffled(items):
            r = rng()
            if 0 <= card <= buffer_size:  # the buffer holds everything: a uniform permutation
                items = list(items)
                r.shuffle(items)
                yield from items
                return
            buf = list(itertools.islice(items, buffer_size))
            for x in items:
                i = r.randrange(len(buf))
                yield buf[i]
                buf[i] = x
            r.shuffle(buf)
            yield from buf

        if self._index is not None:
            source, idx = self._index
            return self._derive(None, card, self._spec_fn, index=(source, lambda: shuffled(idx())))
        return self._derive(lambda: shuffled(self._elements()), card, self._spec_fn)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to each element; it receives Tensors (``*element`` for tuples).

        Like TensorFlow, which traces ``map_func`` into a graph, the function is traced
        once (``jax.vmap`` over chunks of elements, compiled) when it is a pure function
        of its inputs: Python side effects then run at trace time only. Functions that
        read Variables (random ops included) or need concrete values run eagerly,
        element by element.

        Example:
            >>> import tapejax as tf
            >>> [int(x) for x in tf.data.Dataset.range(3).map(lambda x: x * 10)]
            [0, 10, 20]
        """
        vec = _VectorizedMap(map_func)

        def make():
            for chunk in self._chunks():
                if isinstance(chunk, list):  # elements that could not be stacked
                    for e in chunk:
                        yield _map(_to_array, _call(map_func, e))
                    continue
                out = vec(chunk)
                if out is None:
                    for e in _unstack(chunk):
                        yield _map(_to_array, _call(map_func, e))
                else:
                    yield from _unstack(out)
        return self._derive(make, self._card)

    _CHUNK = 256

    def _chunks(self):
        """Stacked chunks of consecutive elements (a list where elements do not stack)."""
        if self._index is not None:
            source, idx = self._index
            leaves, tree = _flatten(source)
            it = idx()
            while True:
                chunk = np.fromiter(itertools.islice(it, self._CHUNK), dtype=np.int64)
                if len(chunk) == 0:
                    return
                yield tree.unflatten([l[chunk] for l in leaves])
        else:
            it = self._elements()
            while True:
                chunk = list(itertools.islice(it, self._CHUNK))
                if not chunk:
                    return
                try:
                    yield _stack(chunk)
                except (ValueError, TypeError):
                    yield chunk

    def flat_map(self, map_func, name=None):
        """Maps each element to a Dataset and flattens the results."""
        def make():
            for e in self._elements():
                yield from _as_dataset(_call(map_func, e), "flat_map")._elements()
        return self._derive(make, UNKNOWN_CARDINALITY)

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
        ``num_parallel_calls`` and ``deterministic`` are accepted for compatibility:
        elements are always produced one at a time, in the deterministic order.

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

        def make():
            inputs = self._elements()
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
                    x = next(inputs, None)
                    if x is None:
                        end_of_input = True
                    else:
                        slots[i] = _as_dataset(_call(map_func, x), "interleave")._elements()
                        n_open += 1
                else:
                    i, b = (i + 1) % cycle, 0
        return self._derive(make, UNKNOWN_CARDINALITY)

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
                for rows in _windows(idx(), size, shift, stride, drop):
                    yield tree.unflatten([_slices_dataset(l, rows) for l in leaves])
        else:
            def make():
                for elems in _windows(self._elements(), size, shift, stride, drop):
                    tree = _flatten(elems[0])[1]
                    columns = zip(*[_flatten(e)[0] for e in elems])
                    yield tree.unflatten([_list_dataset(list(c)) for c in columns])
        return self._derive(make, card, lambda: _map(_DatasetSpec, self.element_spec))

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

        def make():
            state = _to_tensors(init)
            for e in self._elements():
                out = scan_func(state, _to_tensors(e))
                if not isinstance(out, (tuple, list)) or len(out) != 2:
                    raise TypeError("scan: scan_func must return a pair (new_state, output_element), got "
                                    f"{type(out).__name__}.")
                state = as_state(out[0])
                yield _map(_to_array, out[1])
        return self._derive(make, self._card)

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
            for e in self._elements():
                if not _scalar_bool(_call(predicate, e), "take_while"):
                    return
                yield e
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

        if self._spec_fn is not None:
            leaves = _flatten(self._spec_fn())[0]
            check(leaves, ["O" if isinstance(s, _DatasetSpec) or s.dtype == _dtypes.string
                           else np.dtype(s.dtype.as_numpy_dtype).kind for s in leaves])

        def make():
            seen = set()
            for e in self._elements():
                leaves = _flatten(e)[0]
                arrs = [l if isinstance(l, Dataset) else np.asarray(l) for l in leaves]
                check(arrs, [getattr(a, "dtype", np.dtype(object)).kind if not isinstance(a, Dataset) else "?"
                             for a in arrs])
                a = arrs[0]
                key = (a.shape, a.astype(np.int64).tobytes() if a.dtype.kind in "iu" else tuple(a.ravel().tolist()))
                if key not in seen:
                    seen.add(key)
                    yield e
        return self._derive(make, UNKNOWN_CARDINALITY, self._spec_fn)

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

        def make():
            cycle = itertools.cycle(sizes)
            want, have, parts, template, tree = next(cycle), 0, [], None, None
            for e in self._elements():
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
        lead = sizes[0] if drop and len(set(sizes)) == 1 else None
        return self._derive(make, INFINITE_CARDINALITY if c == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY,
                            lambda: _map(lambda s: TensorSpec((lead,) + tuple(s.shape)[1:], s.dtype),
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
            w = np.ones(n) if weights is None else np.asarray(_to_array(weights), dtype=np.float64)
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
            if len(datasets) == 1:
                return datasets[0]
            n = len(datasets)
        base_seed = int(seed) if seed is not None else _global_seed()
        epochs = itertools.count()

        def choices(alive):
            r = _pyrandom.Random(base_seed * 1000003 + (next(epochs) if rerandomize_each_iteration else 0))
            if weights_ds is None:
                while True:
                    cum = list(itertools.accumulate(w[i] if alive[i] else 0.0 for i in range(n)))
                    yield min(bisect.bisect_right(cum, r.random() * cum[-1]), n - 1)
            for ws in weights_ds._elements():
                ws = np.ravel(np.asarray(_flatten(ws)[0][0], dtype=np.float64))
                if ws.shape != (n,) or np.any(ws < 0) or not np.any(ws > 0):
                    raise ValueError(f"sample_from_datasets: each element of the `weights` dataset must "
                                     f"hold {n} non-negative weights, not all 0; got {ws.tolist()}.")
                cum = list(itertools.accumulate(ws))
                yield min(bisect.bisect_right(cum, r.random() * cum[-1]), n - 1)

        cards = [d._card for d in datasets]
        if weights_ds is not None or stop_on_empty_dataset:
            card = INFINITE_CARDINALITY if all(c == INFINITE_CARDINALITY for c in cards) and \
                weights_ds is None else UNKNOWN_CARDINALITY
        elif INFINITE_CARDINALITY in cards:
            card = INFINITE_CARDINALITY
        else:
            card = UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in cards else sum(cards)
        return Dataset(lambda: _directed_interleave(datasets, choices, stop_on_empty_dataset), card,
                       lambda: datasets[0].element_spec)

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
            >>> [str(x) for x in result]
            ['foo', 'bar', 'baz', 'foo', 'bar', 'baz', 'foo', 'bar', 'baz']
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

        if choice_dataset._spec_fn is not None:
            spec = choice_dataset._spec_fn()
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

        cards = [d._card for d in datasets]
        card = choice_dataset._card if all(c == INFINITE_CARDINALITY for c in cards) else UNKNOWN_CARDINALITY
        return Dataset(lambda: _directed_interleave(datasets, choices, stop_on_empty_dataset), card,
                       lambda: datasets[0].element_spec)

    def filter(self, predicate, name=None):
        """Keeps the elements for which ``predicate`` (receiving Tensors) is true."""
        def make():
            for e in self._elements():
                if bool(_call(predicate, e)):
                    yield e
        return self._derive(make, UNKNOWN_CARDINALITY if self._card != INFINITE_CARDINALITY else INFINITE_CARDINALITY,
                            self._spec_fn)

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times (forever for ``None`` or -1)."""
        forever = count is None or int(count) < 0
        n = None if forever else int(count)
        c = self._card
        card = (0 if c == 0 else INFINITE_CARDINALITY) if forever else (c * n if c >= 0 else c)

        def loop(it_fn):
            for _ in (itertools.count() if forever else range(n)):
                yield from it_fn()

        if self._index is not None:
            source, idx = self._index
            return self._derive(None, card, self._spec_fn, index=(source, lambda: loop(idx)))
        return self._derive(lambda: loop(self._elements), card, self._spec_fn)

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
        if count < 0:
            return self._derive(lambda: iter(()), 0, self._spec_fn)
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
            for i, e in enumerate(self._elements(), start):
                yield (_to_array(np.int64(i)), e)
        return self._derive(make, self._card,
                            lambda: (TensorSpec((), jax.dtypes.canonicalize_dtype(np.int64)), self.element_spec))

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then ``dataset``'s."""
        a, b = self._card, dataset._card
        card = INFINITE_CARDINALITY if -1 in (a, b) else (a + b if a >= 0 and b >= 0 else UNKNOWN_CARDINALITY)
        return self._derive(lambda: itertools.chain(self._elements(), dataset._elements()), card, self._spec_fn)

    def prefetch(self, buffer_size=AUTOTUNE, name=None):
        """Accepted for compatibility: elements are produced on demand, so this is the same dataset."""
        return self

    def cache(self, filename="", name=None):
        """Keeps the elements in memory after the first complete iteration."""
        store = []
        done = [False]

        def make():
            if done[0]:
                yield from store
                return
            store.clear()
            for e in self._elements():
                store.append(e)
                yield e
            done[0] = True
        return self._derive(make, self._card, self._spec_fn)

    def apply(self, transformation_func):
        """``transformation_func(self)``."""
        return transformation_func(self)

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the elements: ``state = reduce_func(state, element)``."""
        state = initial_state
        for e in self:
            state = reduce_func(state, e)
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
        return Options()

    def with_options(self, options, name=None):
        return self


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
            element = next(self._it)
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
        elems = [_to_numpy(e) for e in self._it]
        try:
            stacked = _stack(elems) if elems else None
        except (ValueError, TypeError) as e:
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
        raise NotImplementedError("get_next_as_optional is not supported; use next(iterator) and "
                                  "catch StopIteration.")


_NOT_STAGEABLE = (
    "next(iterator) inside a tf.function reads the iterator's position as state, which needs the "
    "remaining elements staged as arrays, but {why}. Iterate outside and pass each element as an "
    "argument instead: `for x in dataset: step(x)`.")


class Options:
    """``tf.data.Options``: accepted and ignored (any nested attribute may be set)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        sub = Options()
        object.__setattr__(self, name, sub)
        return sub


class _AutoShardPolicy:
    OFF, AUTO, FILE, DATA, HINT = -1, 0, 1, 2, 3


class experimental:
    """``tf.data.experimental``."""

    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE_CARDINALITY
    UNKNOWN_CARDINALITY = UNKNOWN_CARDINALITY
    AutoShardPolicy = _AutoShardPolicy

    @staticmethod
    def cardinality(dataset):
        return dataset.cardinality()


__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental", "Options",
           "TensorSpec"]

from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr(__name__)
