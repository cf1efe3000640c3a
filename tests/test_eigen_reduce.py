"""TensorFlow's float sums bit for bit (tapejax/ops/eigen_reduce.py): tf.reduce_sum/reduce_mean/
reduce_variance/reduce_std over every axis layout TF's Sum kernel distinguishes, tf.nn.softmax /
log_softmax and their gradients. Per-case digests of TF 2.21's outputs recorded by
/tmp/h12/record_cases.py (single-threaded intra-op pool; softmax with TF_ENABLE_ONEDNN_OPTS=0,
Eigen's kernel) and /tmp/h12/record_threads.py (a 4-thread pool) over reduce_cases.py; checked on
the host evaluator (an eager op's first call at a shape), compiled, through tapejax and inside
tf.function. Compiles are few: XLA takes ~0.3 s per reduction here."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._core import host_eval
from tapejax.ops import eigen_reduce

from reduce_cases import AXES, SOFTMAX, axis_cases, cotangent, digest, full_cases, softmax_cases

CASES = {
    'float32/reduce_sum/full': '23d005ea35cf b56dd0038394 3bf6c6f6d0f5 14c7ea36c2de d29c11d02328 a5620e60a240 7c49f93ec1b8 46343c553c06 6516ec1f0005 d0c023d25880 4bd8d8f299eb e9ec8bab4e75 72ece7b5c3b8 0615f52c4307 26d713244698 5ec3fade64d4 1e01419ef82b 21baec439376 c8d5415c0f0e 74ec476fff01 76c472fdd232 8257802ff61c df3f619804a9 d7173dd8a9e8 ef1eaf26cea9 df3f619804a9',
    'float32/reduce_mean/full': '23d005ea35cf 4ff99bc86a3b 7a2bff64c7a6 9c9096c0637a fb3e21448caf 46c7d6da016a afabbc8a8561 167949361b02 ebe97667ebb9 52c5e38925c2 82cc1703f4ee df1d91367f2f b26b86875897 13ae6ee5e485 44214851c757 258c286703d2 38f63019c2a4 db2eb2fb6a40 9690d54a8c68 a974eceac1c5 daf64353f26a 554fc3ff5e75 df3f619804a9 d7173dd8a9e8 ef1eaf26cea9 df3f619804a9',
    'float32/reduce_sum/axes': '8958b267db60 99fb9961ca01 6eed861578f5 41b95659422e 98e33b76daa5 1bfe4c9769fe 6d49078d8328 234d21e58d39 cd83b5214282 2a1d0334b063 f9101c31c3ce 6632f43a5f5f 256e971facce 6b8cdc5e46dc f76b4b87981a 51c1d1253cf8 f75a559f01a4 7da2af6923ef eecab723b311 6a3c04a9f787 009686fdd0d1 3aa180d3a5f2 dbd6fc8205c9 a84ca76c2cb8',
    'float32/reduce_mean/axes': '90603d0347a9 806d9478206c 905ce23dbd2e 2ee0ed8929ea 3f3c5f63fafa 2d59bb0d4cce 26ae5cec10a9 b4d5fe7c9e00 6fe425724421 d646733ed7e3 44e944086cea 7f8824367140 0d7fbc1e3c7b da3b275f60b0 612434c6b10a ea95caaa9c89 9cb014a2e811 98970213dd0c fd4bdcf88edf f57189c90116 009686fdd0d1 3aa180d3a5f2 ea3ef2164dc6 822376599f76',
    'float32/reduce_variance/axes': '25140e553698 66812710590a 0757685e1646 60c712fb6e9d 63071af41a9c ec16dd4799b9 69f708d557bc 64eb6908d2a0 8879b1782aa5 5daca3e8e826 43c72ff6f101 8d212962e828 6ec8df2713b7 a5ed8b32598e 0d1af25951b1 b827bd35c823 95781610c72f c02130979a2b dfe9c28b0f01 743ee5ed3094 df3f619804a9 de47c9b27eb8 d46673f98d86 5776bcfeca3d',
    'float32/reduce_std/axes': 'caef20878221 9e21a9739846 4e87c5cab714 c19c469adf65 b6014d7f9086 2c537bf6be4e bf7c04e2fbb6 a582b9ae64c4 8c5a5cd11026 36933d005afe da4e37e6ccc8 82eeea167234 29f812f1faf5 3cd31f6dab92 3860bef9618f 44e2d0dbe8f9 1a82a8c7029b 43cb22ea895c 0d54e53e2274 251604ba2cea df3f619804a9 de47c9b27eb8 a32ce4f4a539 01a8ffed2ce5',
    'float32/softmax': 'e00e5eb94441 f6bb1294da2f 105a53136c06 0370b1239418 b65ad386ed30 f3470c4b5d68 d65a94d2ae42 99461d9ccd3c e315f3baa097 898545739c22',
    'float32/softmax/grad': 'df3f619804a9 374708fff771 566018a36e80 65d8f86186a8 15794fd46db4 225d38a6c527 c3834c7d7626 fbffefc9cb36 544d633b24b1 54a58f6e1dc7',
    'float32/log_softmax': 'df3f619804a9 374708fff771 170be62636a0 9c6cc8ef92c9 3702195da3e0 688047bee37b 52358fd8602a 59fa8e9783d2 e86b14fbc96f 5424c8830945',
    'float32/log_softmax/grad': 'df3f619804a9 374708fff771 1adea8b23b92 f74543ddbbd2 60ab92655a0b 24ba95d2cf68 1a1a64c8fb18 87b0d1eb4d65 ba575236e1d9 bd9c57a25845',
    'float64/reduce_sum/full': 'd90598fd67c7 e62547905ad2 bc9955e6b93f 223a1bb3b79d 00ce9ad9429b 73e3252b7f68 9f3410f1d97d ed24ec7d2277 5c0817a6974f 2dccd2c59e5e 964c16d4efe9 68316a18faf5 a943ec93efd7 b39ed20a41b2 672d4841c397 190bf932fd2e 934caaaf9c46 6c87e9e758dc 9db4f423d7d1 35344ae236e9 5ec6bb5d6ddc 610fe7fd935e af5570f5a181 9402bb655bc3 74999fd28ab1 af5570f5a181',
    'float64/reduce_mean/full': 'd90598fd67c7 d069351cc58e be6c9bf35059 5de243de47ab 3845b64f7d30 37dc4b5c9c53 e8074e6e9be1 67b3a9e660e7 0c613068ae56 3c307142f32f da5b5016f5fd d74fc7ed37cf 04d3f327db5d e53d0ff1d50a 7ed93d166524 b5a9285d05fe b4952e934748 36b76caf3364 49fccf04d7d2 5c314a3bd076 3405e748ca08 629fbab89c50 af5570f5a181 9402bb655bc3 74999fd28ab1 af5570f5a181',
    'float64/reduce_sum/axes': 'a486475ad677 064e07a70efd da7d9c30de39 cab5dccc1aa5 3f78b0b405e5 18629e931d4c d85af4d01fff bddb4c609e7c 850bb588b429 a3eebebb992f 88b67e3fb72f ee57fea1d529 d6eaa2a87999 2ab66957f609 567d57428994 5fc6f2656cf0 a98b64132e2c 740cce72c268 7fdfdc54f163 11a7fcea97ed 327d5ad215e3 299f6424ff8b bee33dd7b85e 14005e0f90f1',
    'float64/reduce_mean/axes': 'de1fcc37dc1d 5d5b7226d7ee d96afe07d84a e705be467a8d d3a0a2029eaf 1257ded58c41 f19eeebfa30d 00634d9afbc3 fb064daad782 e14a72fe8fc1 ea8dbf35509e 4877e538ef45 17b82f125aad fd931da6e586 5ca9f7c12b2a 81c488ae8de2 7c6cf7eabbbe c0b6961e4c19 0e83b702da6b 3a1923287769 327d5ad215e3 299f6424ff8b 4383ccba6165 4f6acb7c56d3',
    'float64/reduce_variance/axes': 'f70a03feed2a 52684d7d7715 c3964c95d0bf 8d6e267e8715 3e740f0dc4ca 77493bef0cc3 dfa57a4319f1 cadae0d1312f 318502b0d8a4 1c60b0ec48f0 a8be29f5a83f 10e42e29a7ca 6014d57b965d 2a2eb5f69a62 9a46b147acc8 a20734486c78 a07d70ccfc3b 6c553b32c1f7 e48bd2b0beb6 8d5810ee52e4 af5570f5a181 2c34ce1df23b f9c8294ef66d 7647ae7ab074',
    'float64/reduce_std/axes': 'b87e60a14786 17968a6b505b 7116436d1891 8846a0c845f4 1c0a46a24d53 b671351ec3da ec148625bd20 a24d324a41c8 14a2852bd4fa 83fdd1eb7848 01420d3425f8 0846436ed072 01faf294ccb4 cddb6e253c8f ecfea500bc65 c3160433e003 0a305d3a0c86 edebd60e98cd 3b7445b7122e d21f93812720 af5570f5a181 2c34ce1df23b e6d2849dd41d 4ff8e81f5139',
}

CASES = {k: v.split() for k, v in CASES.items()}
# sum and mean of big vectors with a 4-thread pool: Eigen's FullReducer adds one block per thread
THREADS = {("float32", 108389): ("dc28b94a52c9", "018640c2aed3"), ("float64", 54195): ("2148ce28dbb2", "f145e9cedd63")}


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch):
    monkeypatch.setattr(eigen_reduce, "intra_op_threads", lambda: 1)


def _std(x, axis, keepdims):
    return jnp.sqrt(eigen_reduce.reduce_variance(x, axis, keepdims))


def _grad_of(op):
    fwd, bwd = getattr(eigen_reduce, op), getattr(eigen_reduce, op + "_grad")
    return lambda x, axis: bwd(fwd(x, axis), jnp.asarray(cotangent(np.zeros(x.shape, x.dtype))), axis)


def _cases(key):
    """[(fn of one array, input)] for a key of CASES, in its order."""
    dtype, op, kind = (key.split("/") + [""])[:3]
    dtype = np.dtype(dtype)
    if op in ("softmax", "log_softmax"):
        fn = _grad_of(op) if kind == "grad" else getattr(eigen_reduce, op)
        return [(lambda x, a=a: fn(x, a), x) for x, (_, a) in zip(softmax_cases(dtype), SOFTMAX)]
    fn = _std if op == "reduce_std" else getattr(eigen_reduce, op)
    if kind == "full":
        return [(lambda x: fn(x, None, False), x) for x in full_cases(dtype).values()]
    return [(lambda x, a=a, k=k: fn(x, a, k), x) for x, (_, a, k) in zip(axis_cases(dtype), AXES)]


@pytest.mark.parametrize("key", sorted(CASES))
def test_host_evaluator_gives_tensorflows_bits(key):
    checked = 0
    for (fn, x), want in zip(_cases(key), CASES[key]):
        try:
            out = host_eval.evaluate(jax.make_jaxpr(fn)(x), [x])[0]
        except host_eval.Unsupported:   # loops of long sums, gathers of big ones: compiled
            continue
        assert digest([out]) == want
        checked += 1
    assert checked >= len(CASES[key]) // 2


# the cases the host evaluator leaves to XLA (loops, gathers) and a few small ones
COMPILED = {"float32/reduce_sum/full": ["n17", "n1000", "n8193", "n100003"], "float64/reduce_mean/full": ["n65", "n20001"],
            "float32/reduce_sum/axes": [(3, 1000), (100, 12)], "float64/reduce_variance/axes": [(17, 33)]}


@pytest.mark.parametrize("key", sorted(COMPILED))
def test_compiled_gives_tensorflows_bits(key):
    names = list(full_cases(np.float32)) if key.endswith("full") else [shape for shape, _, _ in AXES]
    picked = [i for i, name in enumerate(names) if name in COMPILED[key]]
    cases = _cases(key)
    fns, xs = [cases[i][0] for i in picked], [cases[i][1] for i in picked]
    outs = jax.jit(lambda xs: [f(x) for f, x in zip(fns, xs)])(xs)
    assert [digest([np.asarray(o)]) for o in outs] == [CASES[key][i] for i in picked]


def test_through_tapejax_eager_and_tf_function():
    xs = axis_cases(np.float32)
    for i in (3, 9, 16):           # rows, columns, a middle axis: host first, then compiled
        _, a, k = AXES[i]
        for _ in range(2):
            assert digest([tf.reduce_sum(tf.constant(xs[i]), axis=a, keepdims=k).numpy()]) == CASES["float32/reduce_sum/axes"][i]
            assert digest([tf.reduce_mean(tf.constant(xs[i]), axis=a, keepdims=k).numpy()]) == CASES["float32/reduce_mean/axes"][i]
    x = softmax_cases(np.float32)[3]
    assert digest([tf.nn.softmax(tf.constant(x)).numpy()]) == CASES["float32/softmax"][3]
    assert digest([tf.nn.log_softmax(tf.constant(x)).numpy()]) == CASES["float32/log_softmax"][3]
    v = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.nn.softmax(v)
    g = tape.gradient(y, v, output_gradients=tf.constant(cotangent(x)))
    assert digest([g.numpy()]) == CASES["float32/softmax/grad"][3]

    @tf.function
    def f(v):
        return tf.reduce_sum(v * 1.0, axis=1)
    assert digest([f(tf.constant(xs[3])).numpy()]) == CASES["float32/reduce_sum/axes"][3]

    @tf.function
    def dot(a, b):                 # the product is rounded before the sum adds it (no FMA)
        return tf.reduce_sum(a * b)
    a, b = np.random.RandomState(0).randn(2, 1000).astype(np.float32)
    assert dot(tf.constant(a), tf.constant(b)).numpy() == tf.reduce_sum(tf.constant(a * b)).numpy()


@pytest.mark.parametrize("dtype, n", sorted(THREADS))
def test_thread_pool_blocks(monkeypatch, dtype, n):
    monkeypatch.setattr(eigen_reduce, "intra_op_threads", lambda: 4)
    x = np.random.RandomState(n).randn(n).astype(dtype)
    s, m = jax.jit(lambda x: (eigen_reduce.reduce_sum(x), eigen_reduce.reduce_mean(x)))(x)
    assert (digest([np.asarray(s)]), digest([np.asarray(m)])) == THREADS[dtype, n]


def test_specials_and_small_cases():
    assert str(tf.reduce_sum(tf.constant([-0.0, -0.0])).numpy()) == "0.0"     # Eigen starts from +0
    assert str(tf.reduce_sum(tf.constant([-0.0])).numpy()) == "-0.0"          # TF copies one value
    assert tf.reduce_mean(tf.constant([0.1, 0.2, 0.4])).numpy() == np.float32(0.23333335)
    assert tf.reduce_sum(tf.constant([[1.0, 2.0]]), axis=0).numpy().tolist() == [1.0, 2.0]
    assert tf.reduce_sum(tf.constant(np.zeros((0, 3), np.float32)), axis=0).numpy().tolist() == [0, 0, 0]
    assert tf.reduce_sum(tf.constant([1, 2, 3])).numpy() == 6


def test_keras_losses_and_metrics_reduce_as_tensorflow():
    """Keras 3 on TF reduces with tf.reduce_mean / reduce_sum: its printed losses and metric
    results are TF's bits (7 of these 14 values differed in the last digit with XLA's sums)."""
    rng = np.random.RandomState(21)
    yt, yp = rng.randn(2, 4, 32, 10).astype(np.float32)
    w = rng.uniform(0, 1, (4, 32)).astype(np.float32)
    k = tf.keras
    out = []
    for i in range(4):
        out.append(k.losses.MeanSquaredError()(yt[i], yp[i]).numpy())
        out.append(k.losses.MeanAbsoluteError()(yt[i], yp[i], sample_weight=w[i]).numpy())
        out.append(k.losses.Huber()(yt[i], yp[i]).numpy())
    m, m2 = k.metrics.Mean(), k.metrics.MeanSquaredError()
    for i in range(4):
        m.update_state(yp[i].ravel())
        m2.update_state(yt[i], yp[i])
    out += [m.result().numpy(), m2.result().numpy()]
    assert [float(v) for v in out] == [   # TF 2.21 / Keras 3 (/tmp/h12/keras_rec.py)
        1.8318580389022827, 0.6079593896865845, 0.6750460863113403, 1.9835553169250488, 0.5374443531036377,
        0.7000775337219238, 1.9732763767242432, 0.4933580160140991, 0.7013286352157593, 1.955906629562378,
        0.5014945864677429, 0.7033258676528931, 0.03248119726777077, 1.9361491203308105]
