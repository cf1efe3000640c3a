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
import itertools
import random as _pyrandom

import jax
import numpy as np

from ._tensor import Tensor, _TensorBase, _python_default_dtype, TensorShape, from_numpy
from . import _dtypes

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


class _Abort(Exception):
    pass


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
        from . import _engine

        def refuse(var):
            raise _Abort()

        _engine.state.var_readers.append(refuse)
        try:
            out = self.jitted(chunk)
        except Exception:  # noqa: BLE001 - not traceable: run eagerly, as written
            self.ok = False
            return None
        finally:
            _engine.state.var_readers.remove(refuse)
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


def _spec_of(e):
    return _map(lambda a: TensorSpec(np.shape(a), np.asarray(a).dtype if not isinstance(a, jax.Array) else a.dtype), e)


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
        return _Iterator(self._elements())

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
            yield _map(lambda a: np.asarray(a)[()] if np.ndim(a) == 0 else np.asarray(a), e)

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
                yield from _call(map_func, e)._elements()
        return self._derive(make, UNKNOWN_CARDINALITY)

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
    """An iterator over a dataset: ``next(it)`` or ``it.get_next()``."""

    def __init__(self, elements):
        self._it = elements

    def __iter__(self):
        return self

    def __next__(self):
        return _to_tensors(next(self._it))

    def get_next(self):
        return next(self)

    def get_next_as_optional(self):
        raise NotImplementedError("get_next_as_optional is not supported; use next(iterator) and "
                                  "catch StopIteration.")


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
