"""Values TensorFlow's CPU kernels treat otherwise than XLA: indices out of range and an integer
division by zero raise TensorFlow's error, eagerly and inside compiled programs (XLA clamps,
drops, fills or divides silently), and float-to-integer casts out of range give x86's results
(XLA saturates) (tf.function, loops, tf.vectorized_map, tf.map_fn), instead of XLA's silent clamping,
dropping or filling; a failed call leaves every Variable as it was. Expected outputs recorded
from TensorFlow 2.21 (CPU) running the same code (/tmp/s31/oob*.py, nested.py); inside
tf.function TF prefixes ``{{function_node __inference_<lambda>_N}} `` (a process-wide number),
stripped here: tapejax raises the kernel's message."""
import numpy as np
import pytest

import tapejax as tf

EAGER = {'batch_gather': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1,0] = 3 is not in [0, 2) [Op:GatherV2]',
 'bincount': 'OK [1, 0, 0]',
 'gather_2didx': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1,0] = 7 is not in [0, 3) [Op:GatherV2]',
 'gather_axis_neg': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 2 is not in [0, 2) [Op:GatherV2]',
 'gather_empty_params': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 0 is not in [0, 0) [Op:GatherV2]',
 'gather_unsigned': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 5 is not in [0, 3) [Op:GatherV2] name: ',
 'getitem_dim1': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 2 of dimension 1 out of bounds. [Op:StridedSlice] '
                 'name: strided_slice/',
 'getitem_dim1b': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 2 of dimension 1 out of bounds. [Op:StridedSlice] '
                  'name: strided_slice/',
 'getitem_ell': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 3 of dimension 1 out of bounds. [Op:StridedSlice] '
                'name: strided_slice/',
 'getitem_int': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 5 of dimension 0 out of bounds. [Op:StridedSlice] '
                'name: strided_slice/',
 'getitem_neg': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index -1 of dimension 0 out of bounds. [Op:StridedSlice] '
                'name: strided_slice/',
 'getitem_neg_ok': 'OK 1.0',
 'getitem_newax': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 3 of dimension 0 out of bounds. [Op:StridedSlice] '
                  'name: strided_slice/',
 'getitem_np': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 5 of dimension 1 out of bounds. [Op:StridedSlice] '
               'name: strided_slice/',
 'gnd_1d': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices = [5, 0] does not index into param shape [3,2], node name: '
           'GatherNd [Op:GatherNd]',
 'gnd_2d': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1] = [5, 0] does not index into param shape [3,2], node name: '
           'GatherNd [Op:GatherNd]',
 'gnd_3d': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1,1] = [0, 9] does not index into param shape [3,2], node name: '
           'GatherNd [Op:GatherNd]',
 'gnd_batch': 'OK [1.0, 4.0, 5.0]',
 'gnd_batch_bad': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1] = [1, 2] does not index into param shape [3,2], node '
                  'name: GatherNd [Op:GatherNd] name: ',
 'gnd_neg': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1] = [-1] does not index into param shape [3,2], node name: '
            'GatherNd [Op:GatherNd]',
 'gnd_partial': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1] = [4] does not index into param shape [3,2], node name: '
                'GatherNd [Op:GatherNd]',
 'gnd_scalar_params': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} params must be at least a vector [Op:GatherNd] name: ',
 'onehot_neg': 'OK [[0.0, 0.0, 0.0]]',
 'sc_2d': 'InvalidArgumentError: {{function_node __wrapped__ScatterNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1] = [7] does not index into shape [3] [Op:ScatterNd]',
 'sc_2dshape': 'InvalidArgumentError: {{function_node __wrapped__ScatterNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [0, 5] does not index into shape [3,2] [Op:ScatterNd]',
 'sc_3d': 'InvalidArgumentError: {{function_node __wrapped__ScatterNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1,0] = [7] does not index into shape [3] [Op:ScatterNd]',
 'sc_neg': 'InvalidArgumentError: {{function_node __wrapped__ScatterNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [-1] does not index into shape [3] [Op:ScatterNd]',
 'seg_sum_neg': 'InvalidArgumentError: {{function_node __wrapped__SegmentSum_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment ids are not increasing [Op:SegmentSum]',
 'seg_unsorted': 'InvalidArgumentError: {{function_node __wrapped__SegmentSum_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment ids are not increasing [Op:SegmentSum]',
 'tsmax': 'InvalidArgumentError: {{function_node __wrapped__TensorScatterMax_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [4] does not index into shape [3,2] '
          '[Op:TensorScatterMax]',
 'tsu_rows': 'InvalidArgumentError: {{function_node __wrapped__TensorScatterUpdate_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [4] does not index into shape [3,2] '
             '[Op:TensorScatterUpdate]',
 'useg_2d': 'InvalidArgumentError: {{function_node __wrapped__UnsortedSegmentSum_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment_ids[1,0] = 5 is out of range [0, 3) '
            '[Op:UnsortedSegmentSum]',
 'useg_max': 'InvalidArgumentError: {{function_node __wrapped__UnsortedSegmentMax_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment_ids[1] = 4 is out of range [0, 3) '
             '[Op:UnsortedSegmentMax]',
 'useg_mean': 'InvalidArgumentError: {{function_node __wrapped__UnsortedSegmentSum_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment_ids[1] = 4 is out of range [0, 3) '
              '[Op:UnsortedSegmentSum] name: ',
 'useg_neg': 'OK [1.0, 3.0, 0.0]',
 'useg_prod': 'InvalidArgumentError: {{function_node __wrapped__UnsortedSegmentProd_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment_ids[1] = 4 is out of range [0, 3) '
              '[Op:UnsortedSegmentProd]',
 'useg_sqrt': 'InvalidArgumentError: {{function_node __wrapped__UnsortedSegmentSum_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment_ids[1] = 4 is out of range [0, 3) '
              '[Op:UnsortedSegmentSum] name: ',
 'var_after': 'OK [1.0, 2.0, 3.0]',
 'var_gather_nd': 'InvalidArgumentError: {{function_node __wrapped__ResourceGatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1] = [4] does not index into param shape [3], node '
                  'name: ResourceGatherNd [Op:ResourceGatherNd]',
 'var_scatter_add': 'InvalidArgumentError: {{function_node __wrapped__ResourceScatterAdd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 4 is not in [0, 3) [Op:ResourceScatterAdd] '
                    'name: ',
 'var_scatter_nd_update': 'InvalidArgumentError: {{function_node __wrapped__ResourceScatterNdUpdate_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [4] does not index into shape '
                          '[3] [Op:ResourceScatterNdUpdate]',
 'var_sparse_read': 'InvalidArgumentError: {{function_node __wrapped__ResourceGather_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1] = 4 is not in [0, 3) [Op:ResourceGather]'}
EAGER_TENSOR_INDEX = {'batch_gather': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[1,0] = 5 is not in [0, 2) [Op:GatherV2] name: ',
 'embedding_lookup': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 5 is not in [0, 3) [Op:GatherV2] name: ',
 'gather': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices = 5 is not in [0, 3) [Op:GatherV2] name: ',
 'gather_axis1': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices = 5 is not in [0, 2) [Op:GatherV2] name: ',
 'gather_int': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices = 5 is not in [0, 3) [Op:GatherV2] name: ',
 'gather_nd': 'InvalidArgumentError: {{function_node __wrapped__GatherNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [5, 0] does not index into param shape [3,2], node name: '
              'GatherNd [Op:GatherNd] name: ',
 'gather_neg': 'InvalidArgumentError: {{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices = -5 is not in [0, 3) [Op:GatherV2] name: ',
 'getitem': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 5 of dimension 0 out of bounds. [Op:StridedSlice] name: '
            'strided_slice/',
 'getitem_slice': 'OK []',
 'one_hot': 'OK [0.0, 0.0, 0.0]',
 'scatter_nd': 'InvalidArgumentError: {{function_node __wrapped__ScatterNd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [5] does not index into shape [3] [Op:ScatterNd]',
 'segment_sum': 'OK [1.0, 2.0, 0.0, 0.0, 0.0, 3.0]',
 'tensor_scatter_add': 'InvalidArgumentError: {{function_node __wrapped__TensorScatterAdd_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [5] does not index into shape [3] '
                       '[Op:TensorScatterAdd]',
 'tensor_scatter_update': 'InvalidArgumentError: {{function_node __wrapped__TensorScatterUpdate_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = [5] does not index into shape [3] '
                          '[Op:TensorScatterUpdate]',
 'unsorted_segment_sum': 'InvalidArgumentError: {{function_node __wrapped__UnsortedSegmentSum_device_/job:localhost/replica:0/task:0/device:CPU:0}} segment_ids[1] = 5 is out of range [0, 3) '
                         '[Op:UnsortedSegmentSum] name: ',
 'var_gather': 'InvalidArgumentError: {{function_node __wrapped__ResourceGather_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 5 is not in [0, 3) [Op:ResourceGather] name: ',
 'var_getitem': 'InvalidArgumentError: {{function_node __wrapped__StridedSlice_device_/job:localhost/replica:0/task:0/device:CPU:0}} slice index 5 of dimension 0 out of bounds. [Op:StridedSlice] '
                'name: strided_slice/',
 'var_scatter': 'InvalidArgumentError: {{function_node __wrapped__ResourceScatterUpdate_device_/job:localhost/replica:0/task:0/device:CPU:0}} indices[0] = 5 is not in [0, 3) '
                '[Op:ResourceScatterUpdate] name: '}
IN_FUNCTION = {'batch_gather': 'InvalidArgumentError: indices[1,0] = 5 is not in [0, 2)',
 'embedding_lookup': 'InvalidArgumentError: indices[0] = 5 is not in [0, 3)',
 'gather': 'InvalidArgumentError: indices = 5 is not in [0, 3)',
 'gather_axis1': 'InvalidArgumentError: indices = 5 is not in [0, 2)',
 'gather_int': 'InvalidArgumentError: indices = 5 is not in [0, 3)',
 'gather_nd': 'InvalidArgumentError: indices[0] = [5, 0] does not index into param shape [3,2], node name: GatherNd',
 'gather_neg': 'InvalidArgumentError: indices = -5 is not in [0, 3)',
 'getitem': 'InvalidArgumentError: slice index 5 of dimension 0 out of bounds.',
 'getitem_slice': 'OK []',
 'one_hot': 'OK [0.0, 0.0, 0.0]',
 'scatter_nd': 'InvalidArgumentError: indices[0] = [5] does not index into shape [3]',
 'segment_sum': 'OK [1.0, 2.0, 0.0, 0.0, 0.0, 3.0]',
 'tensor_scatter_add': 'InvalidArgumentError: indices[0] = [5] does not index into shape [3]',
 'tensor_scatter_update': 'InvalidArgumentError: indices[0] = [5] does not index into shape [3]',
 'unsorted_segment_sum': 'InvalidArgumentError: segment_ids[1] = 5 is out of range [0, 3)',
 'var_gather': 'InvalidArgumentError: indices[0] = 5 is not in [0, 3)',
 'var_getitem': 'InvalidArgumentError: slice index 5 of dimension 0 out of bounds.',
 'var_scatter': 'InvalidArgumentError: indices[0] = 5 is not in [0, 3)'}


def _run(f):
    try:
        r = f()
        return "OK " + repr(r.numpy().tolist() if hasattr(r, "numpy") else r)
    except Exception as e:   # noqa: BLE001 - the class and message are compared
        return type(e).__name__ + ": " + str(e)


def _cases():
    p = tf.constant([1., 2., 3.])
    p2 = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    V = tf.Variable([1., 2., 3.])
    return V, {
        "gnd_1d": lambda: tf.gather_nd(p2, [5, 0]),
        "gnd_2d": lambda: tf.gather_nd(p2, [[0, 0], [5, 0]]),
        "gnd_3d": lambda: tf.gather_nd(p2, [[[0, 0], [1, 0]], [[0, 1], [0, 9]]]),
        "gnd_partial": lambda: tf.gather_nd(p2, [[0], [4]]),
        "gnd_neg": lambda: tf.gather_nd(p2, [[0], [-1]]),
        "gnd_batch": lambda: tf.gather_nd(p2, [[0], [1], [0]], batch_dims=1),
        "gnd_batch_bad": lambda: tf.gather_nd(p2, [[0], [2], [0]], batch_dims=1),
        "gnd_scalar_params": lambda: tf.gather_nd(tf.constant(3.), tf.zeros([2, 0], tf.int32)),
        "sc_2d": lambda: tf.scatter_nd([[0], [7]], [1., 2.], [3]),
        "sc_3d": lambda: tf.scatter_nd([[[0], [1]], [[7], [0]]], [[1., 2.], [3., 4.]], [3]),
        "sc_neg": lambda: tf.scatter_nd([[-1]], [1.], [3]),
        "sc_2dshape": lambda: tf.scatter_nd([[0, 5]], [1.], [3, 2]),
        "tsu_rows": lambda: tf.tensor_scatter_nd_update(p2, [[4]], [[1., 1.]]),
        "tsmax": lambda: tf.tensor_scatter_nd_max(p2, [[4]], [[1., 1.]]),
        "useg_2d": lambda: tf.math.unsorted_segment_sum(p2, [[0, 1], [5, 0], [1, 1]], 3),
        "useg_neg": lambda: tf.math.unsorted_segment_sum(p, [0, -1, 1], 3),
        "useg_max": lambda: tf.math.unsorted_segment_max(p, [0, 4, 1], 3),
        "useg_mean": lambda: tf.math.unsorted_segment_mean(p, [0, 4, 1], 3),
        "useg_sqrt": lambda: tf.math.unsorted_segment_sqrt_n(p, [0, 4, 1], 3),
        "useg_prod": lambda: tf.math.unsorted_segment_prod(p, [0, 4, 1], 3),
        "seg_sum_neg": lambda: tf.math.segment_sum(p, [0, -1, 1]),
        "seg_unsorted": lambda: tf.math.segment_sum(p, [1, 0, 1]),
        "getitem_neg": lambda: p[tf.constant(-4)],
        "getitem_neg_ok": lambda: p[tf.constant(-3)],
        "getitem_dim1": lambda: p2[:, tf.constant(2)],
        "getitem_dim1b": lambda: p2[0, tf.constant(2)],
        "getitem_ell": lambda: p2[..., tf.constant(3)],
        "getitem_newax": lambda: p2[tf.newaxis, tf.constant(3)],
        "getitem_int": lambda: p2[5],
        "getitem_np": lambda: p2[1, 5],
        "var_sparse_read": lambda: V.sparse_read([0, 4]),
        "var_gather_nd": lambda: V.gather_nd([[0], [4]]),
        "var_scatter_add": lambda: V.scatter_add(tf.IndexedSlices(tf.constant([1.]), tf.constant([4]))),
        "var_scatter_nd_update": lambda: V.scatter_nd_update([[4]], [1.]),
        "var_after": lambda: V,
        "gather_axis_neg": lambda: tf.gather(p2, [2], axis=-1),
        "gather_2didx": lambda: tf.gather(p, [[0, 1], [7, 0]]),
        "gather_empty_params": lambda: tf.gather(tf.zeros([0]), [0]),
        "gather_unsigned": lambda: tf.gather(p, tf.constant([5], tf.int64)),
        "bincount": lambda: tf.math.bincount([0, 5], minlength=3, maxlength=3),
        "batch_gather": lambda: tf.gather(p2, [[0], [3], [1]], batch_dims=1),
        "onehot_neg": lambda: tf.one_hot([-1], 3),
    }


def test_eager_messages_are_tensorflows():
    _, cases = _cases()
    assert set(cases) == set(EAGER)
    got = {name: _run(f) for name, f in cases.items()}   # in order: var_after follows the failed updates
    assert got == EAGER


def _index_cases():
    p = tf.constant([1., 2., 3.])
    p2 = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    V = tf.Variable([1., 2., 3.])
    return {
        "gather": lambda i: tf.gather(p, i),
        "gather_neg": lambda i: tf.gather(p, -i),
        "gather_axis1": lambda i: tf.gather(p2, i, axis=1),
        "gather_nd": lambda i: tf.gather_nd(p2, tf.stack([i, 0])[None]),
        "getitem": lambda i: p[i],
        "scatter_nd": lambda i: tf.scatter_nd(tf.reshape(i, [1, 1]), [1.], [3]),
        "tensor_scatter_update": lambda i: tf.tensor_scatter_nd_update(p, tf.reshape(i, [1, 1]), [9.]),
        "tensor_scatter_add": lambda i: tf.tensor_scatter_nd_add(p, tf.reshape(i, [1, 1]), [9.]),
        "unsorted_segment_sum": lambda i: tf.math.unsorted_segment_sum(p, tf.stack([0, i, 1]), 3),
        "embedding_lookup": lambda i: tf.nn.embedding_lookup(p2, tf.stack([i])),
        "one_hot": lambda i: tf.one_hot(i, 3),
        "batch_gather": lambda i: tf.gather(p2, tf.stack([[0], [i], [1]]), batch_dims=1),
        "gather_int": lambda i: tf.gather(tf.constant([1, 2, 3]), i),
        "var_gather": lambda i: V.sparse_read(tf.reshape(i, [1])),
        "var_scatter": lambda i: V.scatter_update(tf.IndexedSlices(tf.constant([1.]), tf.reshape(i, [1]))),
        "var_getitem": lambda i: V[i],
    }


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_tensor_indices_eagerly_and_in_tf_function(mode):
    for name, f in _index_cases().items():
        g = f if mode == "eager" else tf.function(f)
        want = EAGER_TENSOR_INDEX[name] if mode == "eager" else IN_FUNCTION[name]
        assert _run(lambda: g(tf.constant(5))) == want, name


def test_checks_in_loops_branches_vmap_map_fn_and_gradients():
    # TF 2.21: each raises InvalidArgumentError naming the index (nested.py)
    p = tf.constant([1., 2., 3.])

    @tf.function
    def loop(n):
        s = tf.constant(0.)
        for i in tf.range(n):
            s += tf.gather(p, i)
        return s

    @tf.function
    def branch(i):
        if i > 0:
            r = tf.gather(p, i)
        else:
            r = tf.constant(0.)
        return r

    @tf.function
    def grad(i):
        with tf.GradientTape() as t:
            t.watch(p)
            y = tf.reduce_sum(tf.gather(p, i) ** 2)
        return t.gradient(y, p)

    @tf.function
    def inner(i):
        return tf.gather(p, i)

    @tf.function
    def outer(i):
        return inner(i) + 1

    assert loop(tf.constant(3)).numpy() == 6.0
    np.testing.assert_array_equal(tf.convert_to_tensor(grad(tf.constant([0, 2]))).numpy(), [2., 0., 6.])
    np.testing.assert_array_equal(tf.vectorized_map(lambda i: tf.gather(p, i), tf.constant([0, 2])).numpy(), [1., 3.])
    for f, text in [(lambda: loop(tf.constant(4)), "indices = 3 is not in [0, 3)"),
                    (lambda: branch(tf.constant(4)), "indices = 4 is not in [0, 3)"),
                    (lambda: grad(tf.constant([0, 3])), "indices[1] = 3 is not in [0, 3)"),
                    (lambda: outer(tf.constant(3)), "indices = 3 is not in [0, 3)"),
                    # TF vectorizes the gather: "indices[1] = 4"; tapejax checks each element's
                    (lambda: tf.vectorized_map(lambda i: tf.gather(p, i), tf.constant([0, 4])), "= 4 is not in [0, 3)"),
                    (lambda: tf.map_fn(lambda i: tf.gather(p, i), tf.constant([0, 4]), fn_output_signature=tf.float32),
                     "indices = 4 is not in [0, 3)")]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=text.replace("[", "\\[").replace(")", "\\)")):
            f()
    assert loop(tf.constant(2)).numpy() == 3.0   # the program still runs after a failed call


def test_failed_call_leaves_variables_and_keeps_donating():
    # tapejax: a failed call changes no Variable (TF 2.21 keeps the assignments made before the
    # failing op: v would be [3, 4, 5] after the failed step; README "differences")
    v = tf.Variable([1., 2., 3.])
    e = tf.Variable(tf.ones([3, 2]))
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def step(i):
        v.assign_add([1., 1., 1.])
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(tf.gather(e, i))
        opt.apply_gradients([(t.gradient(loss, e), e)])
        return loss

    assert step(tf.constant([0, 1])).numpy() == 4.0
    step(tf.constant([0, 1]))
    before = v._stored
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 7 is not in \[0, 3\)"):
        step(tf.constant([0, 7]))
    assert before.is_deleted()   # the check is an output of the program: its buffers stay donated
    np.testing.assert_array_equal(v.numpy(), [3., 4., 5.])
    np.testing.assert_allclose(e.numpy(), [[0.8, 0.8], [0.8, 0.8], [1., 1.]], rtol=1e-6)
    assert step(tf.constant([2, 2])).numpy() == 4.0
    np.testing.assert_array_equal(v.numpy(), [4., 5., 6.])


def test_variable_sparse_methods_values():
    # TF 2.21
    v = tf.Variable([[1., 2.], [3., 4.], [5., 6.]])
    assert v.sparse_read([2, 0]).numpy().tolist() == [[5., 6.], [1., 2.]]
    assert v.gather_nd([[1, 0], [2, 1]]).numpy().tolist() == [3., 6.]
    w = tf.Variable([1., 2., 3.])
    s = tf.IndexedSlices(tf.constant([5., 6.]), tf.constant([1, 1]))
    results = {}
    for kind in ["update", "add", "sub", "mul", "div", "max", "min"]:
        w.assign([1., 2., 3.])
        getattr(w, "scatter_" + kind)(tf.IndexedSlices(tf.constant([5.]), tf.constant([1])))
        results[kind] = w.numpy().tolist()
    assert results == {"update": [1., 5., 3.], "add": [1., 7., 3.], "sub": [1., -3., 3.], "mul": [1., 10., 3.],
                       "div": [1., 0.4000000059604645, 3.], "max": [1., 5., 3.], "min": [1., 2., 3.]}
    w.assign([1., 2., 3.])
    w.scatter_add(s)   # duplicates add up
    assert w.numpy().tolist() == [1., 13., 3.]
    w.assign([1., 2., 3.])
    w.scatter_nd_sub([[0], [2]], [1., 1.])
    assert w.numpy().tolist() == [0., 2., 2.]
    with pytest.raises(TypeError, match="sparse_delta is not IndexedSlices"):
        w.scatter_update([1.])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(v.sparse_read([2, 2]))
    g = t.gradient(y, v)
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_array_equal(tf.convert_to_tensor(g).numpy(), [[0., 0.], [0., 0.], [2., 2.]])

    @tf.function
    def f(i):
        w.scatter_nd_update(tf.reshape(i, [1, 1]), [7.])
        return w.sparse_read(tf.reshape(i, [1]))
    assert f(tf.constant(2)).numpy().tolist() == [7.]
    assert w.numpy().tolist() == [0., 2., 7.]


def test_a_list_subscript_is_a_tuple_as_in_tensorflow():
    # TF 2.21: t[[0, 1]] is t[0, 1] (array_ops._slice_helper reads a list as a tuple)
    p2 = tf.constant([[1., 2.], [3., 4.], [5., 6.]])
    assert p2[[0, 1]].numpy() == 2.0
    assert p2[[2]].numpy().tolist() == [5., 6.]


def test_keras_embedding_refuses_ids_out_of_range():
    # TF 2.21 (Keras 3): "... indices[0] = 5 is not in [0, 3) [Op:GatherV2]" eagerly and in tf.function
    e = tf.keras.layers.Embedding(3, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 5 is not in \[0, 3\)"):
        e(tf.constant([5]))
    f = tf.function(lambda x: e(x))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 5 is not in \[0, 3\)"):
        f(tf.constant([5]))
    assert f(tf.constant([2])).shape == (1, 2)


def test_integer_division_by_zero():
    # TF 2.21 (div.py): the CPU kernels refuse it; a float division gives inf
    a, z = tf.constant([7, -7]), tf.constant([0, 2])
    prefix = "{{function_node __wrapped__%s_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
    got = {
        "floordiv": _run(lambda: a // z),
        "floordiv_f": _run(lambda: tf.function(lambda a, z: a // z)(a, z)),
        "mod": _run(lambda: a % z),
        "mod_f": _run(lambda: tf.function(lambda a, z: a % z)(a, z)),
        "truncdiv": _run(lambda: tf.truncatediv(a, z)),
        "truncmod": _run(lambda: tf.truncatemod(tf.constant([7]), tf.constant([0]))),
        "python_zero": _run(lambda: tf.math.floordiv(tf.constant([7]), 0)),
        "uint8": _run(lambda: tf.constant([7], tf.uint8) // tf.constant([0], tf.uint8)),
        "div_int": _run(lambda: a / z),
        "float_floordiv": _run(lambda: tf.constant([7.]) // 0),
        "nonzero": _run(lambda: a // tf.constant([2, 2])),
    }
    unexpected = "Unexpected error in binary operator (only integer div and mod should have errors)"
    assert got == {
        "floordiv": "InvalidArgumentError: " + prefix % "FloorDiv" + "Integer division by zero [Op:FloorDiv] name: ",
        "floordiv_f": "InvalidArgumentError: Integer division by zero",
        "mod": "InvalidArgumentError: " + prefix % "FloorMod" + "Integer division by zero [Op:FloorMod] name: ",
        "mod_f": "InvalidArgumentError: Integer division by zero",
        "truncdiv": "InternalError: " + prefix % "TruncateDiv" + unexpected + " [Op:TruncateDiv] name: ",
        "truncmod": "InternalError: " + prefix % "TruncateMod" + unexpected + " [Op:TruncateMod] name: ",
        "python_zero": "InvalidArgumentError: " + prefix % "FloorDiv" + "Integer division by zero [Op:FloorDiv] name: ",
        "uint8": "InvalidArgumentError: " + prefix % "FloorDiv" + "Integer division by zero [Op:FloorDiv] name: ",
        "div_int": "OK [inf, -3.5]",
        "float_floordiv": "OK [inf]",
        "nonzero": "OK [3, -4]",
    }


def test_float_to_int_casts_out_of_range_as_tensorflow_cpu():
    # TF 2.21 on x86 (cast.py, cast2.py): NaN and values out of range give the most negative
    # 32-bit (64-bit) integer, narrower integers its low bits; eagerly and in tf.function.
    x = tf.constant([1e10, -1e10, float("nan"), float("inf"), -float("inf"), 3.7, -3.7, 2147483520.0])
    want = {
        "int32": [-2147483648, -2147483648, -2147483648, -2147483648, -2147483648, 3, -3, 2147483520],
        "int64": [10000000000, -10000000000, -9223372036854775808, -9223372036854775808, -9223372036854775808,
                  3, -3, 2147483520],
        "uint8": [0, 0, 0, 0, 0, 3, 253, 128],
        "int8": [0, 0, 0, 0, 0, 3, -3, -128],
        "int16": [0, 0, 0, 0, 0, 3, -3, -128],
    }
    f = tf.function(lambda v, dt: tf.cast(v, dt))
    for name, values in want.items():
        dt = getattr(tf, name)
        assert tf.cast(x, dt).numpy().tolist() == values, name
        assert f(x, dt).numpy().tolist() == values, name
    y = tf.constant([3e9, 4.5e9, 1e10, -1.0, -3e9, 2.5e9, 65537.5, -40000.0, 1e20, float("nan")], tf.float64)
    assert tf.cast(y, tf.uint8).numpy().tolist() == [0, 0, 0, 255, 0, 0, 1, 192, 0, 0]
    assert tf.cast(y, tf.int64).numpy().tolist() == [3000000000, 4500000000, 10000000000, -1, -3000000000,
                                                      2500000000, 65537, -40000, -9223372036854775808,
                                                      -9223372036854775808]
    h = tf.constant([300., -1., 70000., float("nan"), float("inf")], tf.float16)
    assert tf.cast(h, tf.uint8).numpy().tolist() == [44, 255, 0, 0, 0]
    assert tf.cast(h, tf.uint32).numpy().tolist() == [300, 4294967295, 0, 0, 0]
    assert tf.cast(tf.constant([300, -1]), tf.uint8).numpy().tolist() == [44, 255]


def test_singular_matrix_inverse_and_solve():
    # TF 2.21 (div.py): an exact zero pivot is refused (XLA gives inf); a batch fails if one does
    prefix = "{{function_node __wrapped__%s_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
    s = tf.constant([[1., 2.], [2., 4.]])
    assert _run(lambda: tf.linalg.inv(s)) == (
        "InvalidArgumentError: " + prefix % "MatrixInverse" + "Input is not invertible. [Op:MatrixInverse] name: ")
    assert _run(lambda: tf.function(tf.linalg.inv)(s)) == "InvalidArgumentError: Input is not invertible."
    assert _run(lambda: tf.linalg.solve(s, tf.constant([[1.], [1.]]))) == (
        "InvalidArgumentError: " + prefix % "MatrixSolve" + "Input matrix is not invertible. [Op:MatrixSolve] name: ")
    assert _run(lambda: tf.linalg.inv(tf.stack([tf.eye(2), s]))).startswith("InvalidArgumentError")
    b = tf.Variable([[2., 1.], [1., 3.]])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.linalg.inv(b))
    np.testing.assert_allclose(t.gradient(y, b).numpy(), [[-0.16, -0.08], [-0.08, -0.04]], rtol=1e-6)
    np.testing.assert_allclose(tf.linalg.solve(b, [[1.], [2.]]).numpy(), [[0.2], [0.6]], rtol=1e-6)


def test_sparse_cross_entropy_labels_out_of_range():
    # TF 2.21 (labels.py): the kernel refuses a label outside [0, classes) and lists the labels;
    # Keras 3's sparse categorical cross-entropy calls it (from logits or probabilities)
    prefix = ("{{function_node __wrapped__SparseSoftmaxCrossEntropyWithLogits_device_/job:localhost/replica:0/"
              "task:0/device:CPU:0}} ")
    suffix = " [Op:SparseSoftmaxCrossEntropyWithLogits] name: "
    logits = tf.constant([[1., 2., 3.], [1., 0., 0.]])
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits
    text3 = "Received a label value of 3 which is outside the valid range of [0, 3).  Label values: 0 3"
    assert _run(lambda: xent(labels=tf.constant([0, 3]), logits=logits)) == (
        "InvalidArgumentError: " + prefix + text3 + suffix)
    assert _run(lambda: xent(labels=tf.constant([0, -1]), logits=logits)) == (
        "InvalidArgumentError: " + prefix + "Received a label value of -1 which is outside the valid range of "
        "[0, 3).  Label values: 0 -1" + suffix)
    assert _run(lambda: tf.function(lambda l, x: xent(labels=l, logits=x))(tf.constant([0, 3]), logits)) == (
        "InvalidArgumentError: " + text3)
    scce = tf.keras.losses.SparseCategoricalCrossentropy
    assert _run(lambda: scce(from_logits=True)(tf.constant([0, 3]), logits)) == "InvalidArgumentError: " + prefix + text3 + suffix
    assert _run(lambda: scce()(tf.constant([0., 3.]), tf.nn.softmax(logits))) == (
        "InvalidArgumentError: " + prefix + text3 + suffix)
    np.testing.assert_allclose(xent(labels=tf.constant([2, 0]), logits=logits).numpy(), [0.40760597, 0.55144465],
                               rtol=1e-6)
    # Keras model.fit: the step's check raises at the step
    m = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    m.compile(loss=scce(from_logits=True), optimizer="sgd")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Received a label value of 5"):
        m.fit(np.ones((4, 2), np.float32), np.array([0, 1, 5, 2]), verbose=0)


def test_in_top_k_cannot_say():
    # TF 2.21: a target out of range, or a row with inf or nan, is not in the top k
    p = tf.constant([[1., 2., 3.], [1., 0., 0.], [1., 1., 1.], [float("nan"), 1., 2.], [3., 2., 1.]])
    assert tf.math.in_top_k(tf.constant([0, 5, -1, 2, 0]), p, 2).numpy().tolist() == [False, False, False, False, True]


def test_a_check_of_an_unused_op_raises_nothing():
    # TF 2.21 (guide intro_to_graphs): a graph runs only the ops its outputs need, so an unused
    # gather's bad index raises nothing; used, or assigned to a Variable, it raises
    p = tf.constant([1., 2., 3.])
    v = tf.Variable(0.)

    @tf.function
    def unused(i):
        tf.gather(p, i)
        tf.gather(p, [7])
        return p

    @tf.function
    def used(i):
        return tf.gather(p, i) + tf.gather(p, [0])

    @tf.function
    def assigned(i):
        v.assign(tf.gather(p, i))
        return tf.constant(0.)

    assert unused(tf.constant(5)).numpy().tolist() == [1., 2., 3.]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices = 5 is not in \[0, 3\)"):
        used(tf.constant(5))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices = 5 is not in \[0, 3\)"):
        assigned(tf.constant(5))
    assert v.numpy() == 0.0
    assigned(tf.constant(2))
    assert v.numpy() == 3.0
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):   # TF's shape inference
        tf.function(lambda x: x[5])(p)


def test_checks_of_the_arguments_run_before_the_program():
    # A check that reads the arguments alone (the labels of a training step) is computed by
    # NumPy before the program runs, so the program returns no conditions and its call need not
    # wait for it; a failed one raises TF 2.21's error and changes no Variable. A check of a
    # computed value stays in the program.
    model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    model.build((None, 2))
    opt = tf.keras.optimizers.SGD(0.1)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    x = tf.ones([2, 2])
    step(x, tf.constant([0, 2]))
    conc = step.get_concrete_function(x, tf.constant([0, 2]))
    assert conc._precheck is not None and conc._flagged == []   # nothing for the call to wait for
    before = [w.numpy() for w in model.weights]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Received a label value of 3 which is outside the valid range of \[0, 3\)"):
        step(x, tf.constant([0, 3]))
    for w, b in zip(model.weights, before):
        np.testing.assert_array_equal(w.numpy(), b)
    assert np.isfinite(step(x, tf.constant([1, 2])).numpy())

    v = tf.Variable([0, 1])

    @tf.function
    def computed(p):
        return tf.gather(p, v + 2)

    assert computed(tf.constant([1., 2., 3., 4.])).numpy().tolist() == [3., 4.]
    v.assign([0, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 4\)"):
        computed(tf.constant([1., 2., 3., 4.]))
