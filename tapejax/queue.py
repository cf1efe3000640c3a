"""tf.queue: TensorFlow's FIFO queue of tensors (eager: a thread-safe buffer).

As in TensorFlow, ``dequeue`` on an empty open queue (and ``enqueue`` on a full one) waits until
another thread enqueues (dequeues) or the queue is closed; a closed queue raises TF's
``OutOfRangeError`` when too few elements remain and ``CancelledError`` on ``enqueue``.
"""
import itertools
import threading

import numpy as np

from . import errors
from ._core import dtypes as _dtypes
from ._core.tensor import Tensor, TensorShape
from .ops.array_ops import convert_to_tensor as _convert_to_tensor

_TF_NAMES = {"float32": "float", "float64": "double", "float16": "half"}   # TF's DataTypeString
_ids = itertools.count()    # TF names an eager queue's resource by a process-wide counter


def _as_dtypes(dtypes):
    return [_dtypes.as_dtype(d) for d in (dtypes if isinstance(dtypes, (list, tuple)) else [dtypes])]


def _as_shape_list(shapes):
    """TF's ``_as_shape_list``: one TensorShape, a list of them, or one shape as a list of ints."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (tuple, list)):
        raise TypeError(f"Shapes must be a TensorShape or a list or tuple of TensorShapes, got {type(shapes)}")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]
    shapes = [s if isinstance(s, TensorShape) else TensorShape(s) for s in shapes]
    if any(s.rank is None or None in s.as_list() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    return shapes


def _check_compatible(shape, spec):
    if spec.rank is None:
        return
    want = TensorShape(spec)
    if len(shape) != want.rank or any(d is not None and d != n for d, n in zip(want.as_list(), shape)):
        raise ValueError(f"Shapes {TensorShape(shape)} and {want} are incompatible")


class QueueBase:
    """The base class of TensorFlow's queues (``tf.queue.QueueBase``): ``enqueue`` /
    ``enqueue_many`` / ``dequeue`` / ``dequeue_many`` / ``dequeue_up_to`` / ``close`` /
    ``is_closed`` / ``size``. Make one with :class:`FIFOQueue`.

    Example:
        >>> import tapejax as tf
        >>> q = tf.queue.FIFOQueue(capacity=3, dtypes=tf.int32)
        >>> q.is_closed()
        <tf.Tensor: shape=(), dtype=bool, numpy=False>
        >>> q.close()
        >>> q.is_closed()
        <tf.Tensor: shape=(), dtype=bool, numpy=True>
    """

    _KIND = "Queue"

    def __init__(self, dtypes, shapes, names, queue_ref=None):
        self._dtypes = _as_dtypes(dtypes)
        if shapes is not None:
            if len(shapes) != len(self._dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes, received len(shapes)="
                                 f"{len(shapes)}, len(dtypes)={len(self._dtypes)}")
            self._shapes = [TensorShape(s) for s in shapes]
        else:
            self._shapes = [TensorShape(None) for _ in self._dtypes]
        if names is not None:
            names = list(names) if isinstance(names, (list, tuple)) else [names]
            if len(names) != len(self._dtypes):
                raise ValueError(f"Queue names must have the same length as dtypes,received len(names)="
                                 f"{len(names)},len {len(self._dtypes)}")
        self._names = names
        self._id = str(next(_ids))
        self._items = []
        self._closed = False
        self._cancelled = False
        self._cond = threading.Condition()

    # ------------------------------------------------------------------ properties
    @property
    def dtypes(self):
        """The dtypes of an element's components."""
        return self._dtypes

    @property
    def shapes(self):
        """The shapes of an element's components (unknown when not given)."""
        return self._shapes

    @property
    def names(self):
        """The names of the components (an element is then a dict), or None."""
        return self._names

    @property
    def name(self):
        """The queue's name: eagerly, TF 2.21 gives the name of the op that made its resource."""
        return "Empty"

    # ------------------------------------------------------------------ enqueue
    def _check_enqueue_dtypes(self, vals):
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  Dictionary: "
                                 f"{sorted(vals.keys())},Queue: {sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        tensors = [_convert_to_tensor(v, dtype=dt) for v, dt in zip(vals, self._dtypes)]
        if len(tensors) != len(self._dtypes):
            have = ", ".join(_TF_NAMES.get(t.dtype.name, t.dtype.name) for t in tensors)
            want = ", ".join(_TF_NAMES.get(dt.name, dt.name) for dt in self._dtypes)
            raise errors.InvalidArgumentError(None, None, f"Signature mismatch, have: resource, {have}-> expected: "
                                              f"resource, {want}->")
        return tensors

    def _put(self, elements):
        with self._cond:
            for e in elements:
                while not self._closed and len(self._items) >= self._capacity:
                    self._cond.wait()
                if self._closed:
                    raise errors.CancelledError(None, None, f"{self._KIND} '{self._id}' is closed.")
                self._items.append(e)
                self._cond.notify_all()

    def enqueue(self, vals, name=None):
        """Adds one element (a tensor, a list/tuple of the components, or a dict by ``names``);
        waits while the queue is full.

        Example:
            >>> import tapejax as tf
            >>> q = tf.queue.FIFOQueue(3, tf.int32)
            >>> q.enqueue(1)
            >>> q.dequeue()
            <tf.Tensor: shape=(), dtype=int32, numpy=1>
        """
        tensors = self._check_enqueue_dtypes(vals)
        for t, shape in zip(tensors, self._shapes):
            _check_compatible(tuple(t.shape), shape)
        self._put([[np.asarray(t._value) for t in tensors]])

    def enqueue_many(self, vals, name=None):
        """Adds the elements that slicing ``vals`` along its first dimension gives.

        Example:
            >>> import tapejax as tf
            >>> q = tf.queue.FIFOQueue(capacity=10, dtypes=tf.int32)
            >>> q.enqueue_many(tf.constant([1, 2, 3, 4, 5], dtype=tf.int32))
            >>> q.size()
            <tf.Tensor: shape=(), dtype=int32, numpy=5>
        """
        tensors = self._check_enqueue_dtypes(vals)
        batch = None
        for t, shape in zip(tensors, self._shapes):
            s = tuple(t.shape)
            if not s:
                raise ValueError(f"Shape {TensorShape(s)} must have rank at least 1")
            if batch is not None and s[0] != batch:
                raise ValueError(f"Dimensions {batch} and {s[0]} are not compatible")
            batch = s[0]
            _check_compatible(s[1:], shape)
        arrays = [np.asarray(t._value) for t in tensors]
        self._put([[np.asarray(a[i], dtype=a.dtype) for a in arrays] for i in range(batch)])

    # ------------------------------------------------------------------ dequeue
    def _result(self, components):
        tensors = [Tensor(c) if c.dtype == object else Tensor(np.asarray(c)) for c in components]
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        return tensors[0] if len(tensors) == 1 else tensors

    def _take(self, n, up_to):
        """TF's dequeue attempt: takes elements as they come (freeing room for waiting enqueues);
        a queue closed before ``n`` came puts them back in front and raises (``up_to``: gives
        those it has, when it has one)."""
        taken = []
        with self._cond:
            while len(taken) < n:
                if self._items:
                    k = n - len(taken)
                    taken.extend(self._items[:k])
                    del self._items[:k]
                    self._cond.notify_all()
                elif self._closed:
                    if up_to and taken:
                        break
                    self._items[:0] = taken
                    raise errors.OutOfRangeError(None, None, f"{self._KIND} '{self._id}' is closed and has "
                                                 f"insufficient elements (requested {n}, current size "
                                                 f"{len(self._items)})")
                else:
                    self._cond.wait()
            return taken

    def dequeue(self, name=None):
        """Removes and returns the first element; waits while the queue is empty and open.

        Example:
            >>> import tapejax as tf
            >>> q = tf.queue.FIFOQueue(3, tf.int32)
            >>> q.enqueue_many([[1, 2]])
            >>> q.dequeue()
            <tf.Tensor: shape=(), dtype=int32, numpy=1>
        """
        return self._result(self._take(1, False)[0])

    def _many(self, n, up_to):
        n = int(np.asarray(n._value if isinstance(n, Tensor) else n))
        if any(s.rank is None for s in self._shapes):
            raise errors.InvalidArgumentError(None, None, f"{self._KIND}'s DequeueMany and DequeueUpTo require the "
                                              "components to have specified shapes.")
        taken = self._take(n, up_to)
        comps = []
        for i, (dt, shape) in enumerate(zip(self._dtypes, self._shapes)):
            if taken:
                comps.append(np.stack([e[i] for e in taken]).astype(taken[0][i].dtype))
            elif dt == _dtypes.string:
                comps.append(np.full((0,) + tuple(shape.as_list()), b"", dtype=object))
            else:
                comps.append(np.zeros((0,) + tuple(shape.as_list()), _dtypes.np_dtype(dt)))
        return self._result(comps)

    def dequeue_many(self, n, name=None):
        """Removes ``n`` elements, stacked (the components need known shapes); waits for them.

        Example:
            >>> import tapejax as tf
            >>> q = tf.queue.FIFOQueue(10, tf.int32, shapes=tf.TensorShape(2))
            >>> q.enqueue(tf.constant([1, 2], dtype=tf.int32, shape=(2)))
            >>> q.enqueue(tf.constant([3, 4], dtype=tf.int32, shape=(2)))
            >>> q.dequeue_many(2)
            <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
            array([[1, 2],
                   [3, 4]], dtype=int32)>
        """
        return self._many(n, False)

    def dequeue_up_to(self, n, name=None):
        """Like ``dequeue_many``, but a closed queue gives what remains (at least one element).

        Example:
            >>> import tapejax as tf
            >>> q = tf.queue.FIFOQueue(10, tf.int32, shapes=tf.TensorShape(2))
            >>> q.enqueue(tf.constant([1, 2], dtype=tf.int32, shape=(2)))
            >>> q.close()
            >>> q.dequeue_up_to(5)
            <tf.Tensor: shape=(1, 2), dtype=int32, numpy=array([[1, 2]], dtype=int32)>
        """
        return self._many(n, True)

    # ------------------------------------------------------------------ state
    def close(self, cancel_pending_enqueues=False, name=None):
        """Closes the queue: enqueues then fail; dequeues take what remains."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def is_closed(self, name=None):
        """Whether the queue is closed (a bool scalar Tensor)."""
        return Tensor(np.asarray(self._closed))

    def size(self, name=None):
        """The number of elements in the queue (an int32 scalar Tensor).

        Example:
            >>> import tapejax as tf
            >>> tf.queue.FIFOQueue(capacity=10, dtypes=tf.int32).size()
            <tf.Tensor: shape=(), dtype=int32, numpy=0>
        """
        with self._cond:
            return Tensor(np.asarray(len(self._items), np.int32))


class FIFOQueue(QueueBase):
    """A queue of at most ``capacity`` elements, dequeued in the order they were enqueued
    (``tf.queue.FIFOQueue``). An element has one component per dtype of ``dtypes``, of the
    shapes in ``shapes`` when given (``dequeue_many`` needs them), keyed by ``names`` when given.

    Example:
        >>> import tapejax as tf
        >>> q = tf.queue.FIFOQueue(capacity=10, dtypes=tf.int32)
        >>> q.size()
        <tf.Tensor: shape=(), dtype=int32, numpy=0>
    """

    _KIND = "FIFOQueue"

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        dtypes = _as_dtypes(dtypes)
        shapes = _as_shape_list(shapes)
        if names is not None:
            names = list(names) if isinstance(names, (list, tuple)) else [names]
            if len(names) != len(dtypes):
                raise ValueError(f"List of names must have the same length as the list of dtypes, received "
                                 f"len(names)={len(names)},len(dtypes)={len(dtypes)}")
        if shapes is not None and len(shapes) != len(dtypes):
            types = ", ".join(_TF_NAMES.get(d.name, d.name) for d in dtypes)
            raise errors.InvalidArgumentError(None, None, f"Different number of component types.  Types: {types}, "
                                              f"Shapes: {[s.as_list() for s in shapes]}")
        super().__init__(dtypes, shapes, names)
        self._capacity = int(capacity) if capacity is not None and int(capacity) >= 0 else float("inf")


__all__ = ["QueueBase", "FIFOQueue"]
