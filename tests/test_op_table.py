"""The op table's rows say where TensorFlow publishes each op, and the namespaces are generated
from them: one object per op, whichever namespace it is reached through."""
import inspect

import pytest

import tapejax as tf
from tapejax import ops
from tapejax.ops.namespaces import export, exports

NAMESPACES = {"": tf, "math": tf.math, "nn": tf.nn, "linalg": tf.linalg, "dtypes": tf.dtypes,
              "experimental.numpy": tf.experimental.numpy}


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_namespaces_are_the_rows(namespace):
    module = NAMESPACES[namespace]
    rows = exports(namespace)
    assert rows, namespace
    wrong = [n for n, obj in rows.items() if getattr(module, n, None) is not obj]
    assert not wrong, f"tf.{namespace}: not the table's row: {wrong}"
    assert set(rows) <= set(dir(module))


def test_generated_all_lists_the_rows():
    assert tf.math.__all__ == sorted(exports("math"))
    assert tf.linalg.__all__ == sorted(exports("linalg"))
    assert set(exports("nn")) <= set(tf.nn.__all__)


def test_one_object_per_op():
    # the table's name, tf.X and tf.math.X are one function with TensorFlow's signature
    assert ops.reduce_sum is tf.reduce_sum is tf.math.reduce_sum
    assert ops.reshape is tf.reshape and ops.squeeze is tf.squeeze and ops.tile is tf.tile
    assert ops.matmul is tf.matmul is tf.linalg.matmul
    assert tf.nn.sigmoid is tf.math.sigmoid is tf.sigmoid
    assert tf.linalg.transpose is tf.linalg.matrix_transpose
    assert list(inspect.signature(tf.math.reduce_mean).parameters) == ["input_tensor", "axis", "keepdims", "name"]
    assert list(inspect.signature(tf.reshape).parameters) == ["tensor", "shape", "name"]
    # (tf.no_op is TensorFlow's own name)
    assert not [n for n in dir(ops) if n.endswith("_op") and n != "no_op"], "one name per op: the public one is tf.X"


def test_reductions_share_one_helper():
    x = tf.constant([[1, 2], [3, 4]])
    assert tf.reduce_sum(x, axis=[1]).numpy().tolist() == [3, 7]
    assert tf.math.reduce_prod(x, 0, keepdims=True).numpy().tolist() == [[3, 8]]
    assert tf.reduce_mean(x).dtype == tf.int32 and int(tf.reduce_mean(x)) == 2   # TF's integer mean
    assert tf.reduce_sum(tf.constant([True, True, False])).numpy() == 2
    for name in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_std",
                 "reduce_variance", "reduce_logsumexp", "reduce_all", "reduce_any"):
        fn = getattr(tf.math, name)
        assert fn.__name__ == name and fn.op.name == name
        assert list(inspect.signature(fn).parameters) == ["input_tensor", "axis", "keepdims", "name"]


def test_two_rows_cannot_publish_one_name():
    export("math.reduce_sum")(ops.reduce_sum)   # the same row again is harmless
    with pytest.raises(ValueError, match="tf.math.reduce_sum"):
        export("math.reduce_sum")(ops.reduce_mean)
    assert exports("math")["reduce_sum"] is ops.reduce_sum


def test_ragged_dispatch_sees_the_rows_ops():
    # TF's ragged dispatch keys on the op a row runs, reached through TensorFlow's function
    rt = tf.ragged.constant([[-1.0, 2.0], [3.0]])
    assert tf.nn.leaky_relu(rt, 0.5).to_list() == [[-0.5, 2.0], [3.0]]
    assert tf.reduce_sum(rt, axis=1).numpy().tolist() == [1.0, 3.0]
    assert tf.math.reduce_max(rt, axis=0).numpy().tolist() == [3.0, 2.0]
    assert tf.tile(tf.ragged.constant([[1], [2, 3]]), [2, 1]).to_list() == [[1], [2, 3], [1], [2, 3]]
    assert tf.cast(rt, tf.int32).to_list() == [[-1, 2], [3]]
