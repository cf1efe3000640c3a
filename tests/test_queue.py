"""tf.queue.FIFOQueue against TensorFlow 2.21 (its docstrings and behaviour, recorded)."""
import threading

import pytest

import tapejax as tf


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the test compares class and message
        return f"{type(e).__name__}: {e}"
    return "no error"


def test_fifo_queue_docstrings():
    q = tf.queue.FIFOQueue(capacity=10, dtypes=tf.int32)
    assert repr(q.size()) == "<tf.Tensor: shape=(), dtype=int32, numpy=0>"
    q.enqueue_many(tf.constant([1, 2, 3, 4, 5], dtype=tf.int32))
    assert repr(q.size()) == "<tf.Tensor: shape=(), dtype=int32, numpy=5>"
    q = tf.queue.FIFOQueue(10, tf.int32, shapes=tf.TensorShape(2))
    for a, b in ((1, 2), (3, 4), (5, 6), (7, 8)):
        q.enqueue(tf.constant([a, b], dtype=tf.int32, shape=(2)))
    assert repr(q.dequeue_many(3)) == ("<tf.Tensor: shape=(3, 2), dtype=int32, numpy=\narray([[1, 2],\n       "
                                       "[3, 4],\n       [5, 6]], dtype=int32)>")
    q.close()
    assert repr(q.is_closed()) == "<tf.Tensor: shape=(), dtype=bool, numpy=True>"
    assert repr(q.dequeue_up_to(5)) == "<tf.Tensor: shape=(1, 2), dtype=int32, numpy=array([[7, 8]], dtype=int32)>"


def test_fifo_queue_components_names_and_errors_as_tf():
    q = tf.queue.FIFOQueue(3, tf.int32)
    assert q.dtypes == [tf.int32] and q.shapes == [tf.TensorShape(None)] and q.names is None
    q.enqueue(1)
    q.enqueue([2])          # a list is the element's components
    assert _error(lambda: q.enqueue(2.5)) == "TypeError: Cannot convert 2.5 to EagerTensor of dtype int32"
    q.enqueue([[1, 2]])
    assert int(q.size()) == 3 and int(q.dequeue()) == 1
    assert _error(lambda: q.dequeue_many(1)) == ("InvalidArgumentError: FIFOQueue's DequeueMany and DequeueUpTo "
                                                 "require the components to have specified shapes.")
    assert int(q.dequeue()) == 2
    q.close()
    assert q.dequeue().numpy().tolist() == [1, 2]
    assert _error(lambda: q.enqueue(1)).startswith("CancelledError: FIFOQueue '")
    assert _error(lambda: q.dequeue()).endswith("is closed and has insufficient elements (requested 1, current "
                                                "size 0)")
    q2 = tf.queue.FIFOQueue(10, [tf.int32, tf.string], shapes=[[], [2]], names=["a", "b"])
    assert q2.shapes == [tf.TensorShape([]), tf.TensorShape([2])] and q2.names == ["a", "b"]
    q2.enqueue({"a": 1, "b": ["x", "y"]})
    q2.enqueue_many({"a": [1, 2], "b": [["x", "y"], ["z", "w"]]})
    assert _error(lambda: q2.enqueue({"a": 1, "b": ["x"]})) == "ValueError: Shapes (1,) and (2,) are incompatible"
    assert _error(lambda: q2.enqueue((1, ["x", "y"]))) == \
        "ValueError: You must enqueue a dictionary in a Queue with names"
    assert repr(q2.dequeue()) == ("{'a': <tf.Tensor: shape=(), dtype=int32, numpy=1>, 'b': <tf.Tensor: shape=(2,), "
                                  "dtype=string, numpy=array([b'x', b'y'], dtype=object)>}")
    many = q2.dequeue_many(2)
    assert many["a"].numpy().tolist() == [1, 2] and many["b"].numpy().tolist() == [[b"x", b"y"], [b"z", b"w"]]
    q3 = tf.queue.FIFOQueue(10, [tf.int32, tf.float32])
    assert _error(lambda: q3.enqueue((1,))) == ("InvalidArgumentError: Signature mismatch, have: resource, int32-> "
                                                "expected: resource, int32, float->")
    assert _error(lambda: q3.enqueue_many(([1, 2], [3.0]))) == "ValueError: Dimensions 2 and 1 are not compatible"
    assert _error(lambda: tf.queue.FIFOQueue(10, [tf.int32, tf.int32], shapes=[[2]])) == (
        "InvalidArgumentError: Different number of component types.  Types: int32, int32, Shapes: [[2]]")
    assert _error(lambda: tf.queue.FIFOQueue(10, tf.int32, names=["a", "b"])) == (
        "ValueError: List of names must have the same length as the list of dtypes, received len(names)=2,"
        "len(dtypes)=1")
    assert _error(lambda: tf.queue.FIFOQueue(10, tf.int32, shapes=[[None]])) == \
        "ValueError: All shapes must be fully defined: [TensorShape([None])]"
    assert tf.queue.FIFOQueue(10, tf.int32, shapes=[2, 3]).shapes == [tf.TensorShape([2, 3])]


def test_fifo_queue_closed_dequeue_many_restores_and_threads_wait_as_tf():
    q = tf.queue.FIFOQueue(10, tf.int32, shapes=[[]])
    q.enqueue(1)
    q.close()
    assert _error(lambda: q.dequeue_many(2)).endswith("(requested 2, current size 1)")
    assert q.dequeue_up_to(2).numpy().tolist() == [1]
    with pytest.raises(tf.errors.OutOfRangeError, match=r"\(requested 2, current size 0\)"):
        q.dequeue_up_to(2)
    q = tf.queue.FIFOQueue(2, tf.int32, shapes=[[]])   # a dequeue_many larger than the capacity

    def produce():
        for i in range(5):
            q.enqueue(i)
        q.close()
    t = threading.Thread(target=produce)
    t.start()
    assert q.dequeue_many(3).numpy().tolist() == [0, 1, 2]
    assert q.dequeue_up_to(3).numpy().tolist() == [3, 4]
    t.join(10)
