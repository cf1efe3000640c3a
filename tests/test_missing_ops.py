"""TensorFlow's tf / tf.math names added to the op table (ops/more_math_ops.py): values, gradients, errors.

Expected values recorded from TensorFlow 2.21 (same cases run under ``tensorflow``);
values compare with a float32 tolerance, errors by class and the start of TF's message.
"""
import pytest

import tapejax as tf
from recorded_cases import check, grad

EXPECTED = {'lbeta': ([0.0, -2.4849066734313965], "<dtype: 'float32'>"), 'lbeta_g': [[-1.0833334922790527, -0.5833334922790527]], 'floor': ([-2.0, -1.0, 0.0, 0.0, 2.0], "<dtype: 'float32'>"), 'round': ([-2.0, -0.0, 0.0, 0.0, 2.0], "<dtype: 'float32'>"), 'rint': ([-2.0, -0.0, 0.0, 0.0, 2.0], "<dtype: 'float32'>"), 'rint_g': [None], 'acos': ([1.0471975803375244], "<dtype: 'float32'>"), 'atan2': ([0.46364760398864746], "<dtype: 'float32'>"), 'cosh_g': [[0.5210952758789062]], 'scalar_mul': ([2, 4], "<dtype: 'int32'>"), 'scalar_mul_bad': ('EXC', 'ValueError', 'The input scalar must be a 0-D value. Re'), 'truncatediv': ([-3, -3], "<dtype: 'int32'>"), 'truncatemod': ([-1, 1], "<dtype: 'int32'>"), 'truncatemod_f': ([-1.5, 1.5], "<dtype: 'float32'>"), 'erfinv': ([-0.47693631052970886, 0.0, 1.1630871295928955], "<dtype: 'float32'>"), 'erfinv_g': [[0.9545203447341919]], 'ndtri': ([-1.2815515995025635, 0.0, 1.959964394569397], "<dtype: 'float32'>"), 'erfcinv': ([1.1630871295928955, -0.0, -0.47693631052970886], "<dtype: 'float32'>"), 'erfinv_int': ('EXC', 'InvalidArgumentError', "Value for attr 'T' of int32 is not in th"), 'xdivy': ([0.0, 0.0, 0.25], "<dtype: 'float32'>"), 'xdivy_g': [[0.0, 0.0, 0.25], [0.0, 0.0, -0.0625]], 'xlog1py': ([0.0, 0.0, 1.3862943649291992], "<dtype: 'float32'>"), 'xlog1py_g': [[0.0, 0.0, 0.6931471824645996], [0.0, 0.0, 1.0]], 'rnn': ([0.0, 0.5], "<dtype: 'float32'>"), 'rnn_g': [[0.0, -0.25]], 'nextafter': ([1.0000001192092896], "<dtype: 'float32'>"), 'zero_fraction': (0.75, "<dtype: 'float32'>"), 'ren': ([2.2360680103302, 4.4721360206604], "<dtype: 'float32'>"), 'ren_int': (5, "<dtype: 'int32'>"), 'ren_g': [[0.6000000238418579, 0.800000011920929]], 'invperm': ([2, 4, 3, 0, 1], "<dtype: 'int32'>"), 'invperm_dup': ('EXC', 'InvalidArgumentError', '0 is duplicated in the input.'), 'invperm_rng': ('EXC', 'InvalidArgumentError', '5 is not between 0 and 2'), 'isnd': (True, "<dtype: 'bool'>"), 'isi': (False, "<dtype: 'bool'>"), 'polyval': ([4.25, 11.0], "<dtype: 'float32'>"), 'polyval_g': [[3.0, 6.0]], 'real': ([1.0, 3.0], "<dtype: 'float64'>"), 'imag_r': ([0.0, 0.0], "<dtype: 'float32'>"), 'conj': ([(1-2j)], "<dtype: 'complex128'>"), 'angle': ([0.7853981633974483, 3.141592653589793], "<dtype: 'float64'>"), 'angle_r': ([3.1415927410125732, 0.0, 0.0], "<dtype: 'float32'>"), 'complex': ([(1+2j)], "<dtype: 'complex64'>"), 'complex_bad': ('EXC', 'TypeError', 'The `real` and `imag` components have in'), 'complex_mix': ('EXC', 'TypeError', 'The `real` and `imag` components have in'), 'seg_sum': ([[4.0, 6.0], [0.0, 0.0], [12.0, 14.0]], "<dtype: 'float32'>"), 'seg_g_sum': [[[1.0, 1.0], [1.0, 1.0], [3.0, 3.0], [3.0, 3.0]]], 'seg_mean': ([[2.0, 3.0], [0.0, 0.0], [6.0, 7.0]], "<dtype: 'float32'>"), 'seg_g_mean': [[[0.5, 0.5], [0.5, 0.5], [1.5, 1.5], [1.5, 1.5]]], 'seg_max': ([[3.0, 4.0], [0.0, 0.0], [7.0, 8.0]], "<dtype: 'float32'>"), 'seg_g_max': [[[0.5, 0.0], [0.5, 1.0], [0.0, 0.0], [3.0, 3.0]]], 'seg_min': ([[1.0, 2.0], [0.0, 0.0], [5.0, 6.0]], "<dtype: 'float32'>"), 'seg_g_min': [[[0.5, 1.0], [0.5, 0.0], [3.0, 3.0], [0.0, 0.0]]], 'seg_prod': ([[3.0, 8.0], [1.0, 1.0], [35.0, 48.0]], "<dtype: 'float32'>"), 'seg_g_prod': [[[1.0, 4.0], [1.0, 2.0], [21.0, 24.0], [15.0, 18.0]]], 'seg_unsorted_err': ('EXC', 'InvalidArgumentError', 'segment ids are not increasing'), 'useg_sum': ([[3.0, 4.0], [0.0, 0.0], [0.0, 0.0], [6.0, 8.0]], "<dtype: 'float32'>"), 'useg_g_sum': [[[4.0, 4.0], [1.0, 1.0], [4.0, 4.0], [4.0, 4.0]]], 'useg_mean': ([[3.0, 4.0], [0.0, 0.0], [0.0, 0.0], [3.0, 4.0]], "<dtype: 'float32'>"), 'useg_g_mean': [[[1.3333333730697632, 1.3333333730697632], [1.0, 1.0], [1.3333333730697632, 1.3333333730697632], [1.3333333730697632, 1.3333333730697632]]], 'useg_max': ([[3.0, 4.0], [-3.4028234663852886e+38, -3.4028234663852886e+38], [-3.4028234663852886e+38, -3.4028234663852886e+38], [5.0, 6.0]], "<dtype: 'float32'>"), 'useg_g_max': [[[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [4.0, 4.0]]], 'useg_min': ([[3.0, 4.0], [3.4028234663852886e+38, 3.4028234663852886e+38], [3.4028234663852886e+38, 3.4028234663852886e+38], [1.0, 2.0]], "<dtype: 'float32'>"), 'useg_g_min': [[[2.0, 4.0], [1.0, 1.0], [2.0, 0.0], [0.0, 0.0]]], 'useg_prod': ([[3.0, 4.0], [1.0, 1.0], [1.0, 1.0], [5.0, 12.0]], "<dtype: 'float32'>"), 'useg_g_prod': [[[28.0, 192.0], [1.0, 1.0], [28.0, 64.0], [4.0, 48.0]]], 'useg_sqrt_n': ([[3.0, 4.0], [0.0, 0.0], [0.0, 0.0], [4.242640972137451, 5.656854152679443]], "<dtype: 'float32'>"), 'useg_g_sqrt_n': [[[2.309401035308838, 2.309401035308838], [1.0, 1.0], [2.309401035308838, 2.309401035308838], [2.309401035308838, 2.309401035308838]]], 'useg_int': ([2, -2147483648], "<dtype: 'int32'>"), 'bincount': ([0, 2, 0, 1], "<dtype: 'int32'>"), 'bincount_w': ([0.0, 1.5, 0.0, 2.0], "<dtype: 'float32'>"), 'bincount_ml': ([0, 2, 0, 1, 0, 0], "<dtype: 'int32'>"), 'bincount_max': ([0, 2], "<dtype: 'int32'>"), 'bincount_ax': ([[0, 2, 0], [1, 0, 1]], "<dtype: 'int32'>"), 'bincount_bin': ([0, 1, 0, 1], "<dtype: 'int32'>"), 'bincount_neg': ('EXC', 'InvalidArgumentError', 'Input arr must be non-negative!'), 'cm': ([[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]], "<dtype: 'int32'>"), 'cm_w': ([[0.0, 0.5, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]], "<dtype: 'float32'>"), 'cm_bad': ('EXC', 'InvalidArgumentError', '`labels` out of bound Condition x < y di'), 'in_top_k': ([True, True, True], "<dtype: 'bool'>"), 'nn_in_top_k': ([False, True], "<dtype: 'bool'>"), 'argsort': ([0, 2, 1, 3], "<dtype: 'int32'>"), 'argsort2': ([[1, 0, 0], [0, 1, 1]], "<dtype: 'int32'>"), 'argsort_bad': ('EXC', 'ValueError', 'Argument `direction` should be one of AS'), 'math_softmax': ([0.2689414322376251, 0.7310585379600525], "<dtype: 'float32'>"), 'math_log_softmax': ([-1.31326162815094, -0.31326165795326233], "<dtype: 'float32'>"), 'bessel': ([0.6450353860855103, 0.46575963497161865], "<dtype: 'float32'>"), 'igamma': ([0.39346936345100403, 0.8008517026901245], "<dtype: 'float32'>"), 'zeta': ([1.644934058189392], "<dtype: 'float32'>"), 'polygamma': ([0.6449341177940369], "<dtype: 'float32'>"), 'betainc': ([0.75], "<dtype: 'float32'>"), 'accumulate_n': ([4.0, 6.0], "<dtype: 'float32'>"), 'cle': ([[0.0, 1.3132617473602295, 1.3490122556686401], [3.0, 3.078889846801758, 3.123872995376587]], "<dtype: 'float32'>"), 'cle_ex': ([['-inf', 0.0, 1.3132617473602295], ['-inf', 3.0, 3.078889846801758]], "<dtype: 'float32'>"), 'cle_rev': ([[3.0485873222351074, 1.4740769863128662, 0.12692800164222717], [3.0, 0.5, 0.0]], "<dtype: 'float32'>"), 'cle_both': ([[1.0485873222351074, -2.0, '-inf'], [0.9740769863128662, 0.0, '-inf']], "<dtype: 'float32'>"), 'cle_g': [[[2.3163723945617676, 3.57827091217041, 0.10535706579685211], [5.4987592697143555, 0.3692806661128998, 0.1319594383239746]]], 'amaxk': [[[3.0, 2.0], [6.0, 5.0]], [[1, 2], [2, 0]]], 'eig': [[(-0.3722812235355377+0j), (5.372281074523926+0j)], [[(-0.8245648145675659+0j), (-0.41597357392311096+0j)], [(0.5657674670219421+0j), (-0.9093767404556274+0j)]]], 'eigvals': ([1j, (-0-1j)], "<dtype: 'complex64'>"), 'eigvals_top': ([(2+0j), (3+0j)], "<dtype: 'complex128'>"), 'gpt': ([1.0, 3.0], "<dtype: 'float32'>"), 'gpt_g': [[3.0, 4.0]], 'gpt_g2': ('EXC', 'ValueError', 'custom_gradient function expected to ret'), 'no_gradient': None, 'zeta_g': [None, [-0.8287966847419739, -0.24696969985961914]], 'polygamma_g': [None, [-0.8287966847419739, 0.4939393997192383]], 'betainc_g': [None, None, [1.0, 1.7639999389648438]], 'igamma_g': [[-0.48945751786231995, -0.19742543995380402], [0.6065306663513184, 0.14936120808124542]], 'erfinv_g2': [[1.7820457220077515, 2.4042840003967285]]}

CASES = {}


def show(name, f):
    CASES[name] = f


x = [-1.5, -0.5, 0.0, 0.5, 2.5]
show("lbeta", lambda: tf.math.lbeta(tf.constant([[1.0, 1.0], [2.0, 3.0]])))
show("lbeta_g", lambda: grad(tf.math.lbeta, [2.0, 3.0]))
show("floor", lambda: tf.floor(x))
show("round", lambda: tf.round(x))
show("rint", lambda: tf.math.rint(x))
show("rint_g", lambda: grad(tf.math.rint, x))
show("acos", lambda: tf.acos([0.5]))
show("atan2", lambda: tf.atan2([1.0], [2.0]))
show("cosh_g", lambda: grad(tf.cosh, [0.5]))
show("scalar_mul", lambda: tf.scalar_mul(2, tf.constant([1, 2])))
show("scalar_mul_bad", lambda: tf.scalar_mul([1.0, 2.0], tf.constant([1.0, 2.0])))
show("truncatediv", lambda: tf.truncatediv([-7, 7], [2, -2]))
show("truncatemod", lambda: tf.truncatemod([-7, 7], [2, -2]))
show("truncatemod_f", lambda: tf.truncatemod([-7.5, 7.5], [2.0, -2.0]))
show("erfinv", lambda: tf.math.erfinv([-0.5, 0.0, 0.9]))
show("erfinv_g", lambda: grad(tf.math.erfinv, [0.3]))
show("ndtri", lambda: tf.math.ndtri([0.1, 0.5, 0.975]))
show("erfcinv", lambda: tf.math.erfcinv([0.1, 1.0, 1.5]))
show("erfinv_int", lambda: tf.math.erfinv(tf.constant([1])))
show("xdivy", lambda: tf.math.xdivy([0.0, 0.0, 1.0], [0.0, 2.0, 4.0]))
show("xdivy_g", lambda: grad(tf.math.xdivy, [0.0, 0.0, 1.0], [0.0, 2.0, 4.0]))
show("xlog1py", lambda: tf.math.xlog1py([0.0, 0.0, 2.0], [-1.0, 2.0, 1.0]))
show("xlog1py_g", lambda: grad(tf.math.xlog1py, [0.0, 0.0, 2.0], [-1.0, 2.0, 1.0]))
show("rnn", lambda: tf.math.reciprocal_no_nan([0.0, 2.0]))
show("rnn_g", lambda: grad(tf.math.reciprocal_no_nan, [0.0, 2.0]))
show("nextafter", lambda: tf.math.nextafter(tf.constant([1.0]), tf.constant([2.0])))
show("zero_fraction", lambda: tf.math.zero_fraction(tf.constant([[0, 1], [0, 0]])))
show("ren", lambda: tf.math.reduce_euclidean_norm(tf.constant([[1.0, 2.0], [2.0, 4.0]]), axis=1))
show("ren_int", lambda: tf.math.reduce_euclidean_norm(tf.constant([[1, 2], [3, 4]])))
show("ren_g", lambda: grad(lambda a: tf.math.reduce_euclidean_norm(a), [3.0, 4.0]))
show("invperm", lambda: tf.math.invert_permutation([3, 4, 0, 2, 1]))
show("invperm_dup", lambda: tf.math.invert_permutation([0, 0]))
show("invperm_rng", lambda: tf.math.invert_permutation([0, 5]))
show("isnd", lambda: tf.math.is_non_decreasing([[1, 2], [2, 3]]))
show("isi", lambda: tf.math.is_strictly_increasing([1, 2, 2]))
show("polyval", lambda: tf.math.polyval([1.0, 2.0, 3.0], tf.constant([0.5, 2.0])))
show("polyval_g", lambda: grad(lambda a: tf.math.polyval([1.0, 2.0, 3.0], a), [0.5, 2.0]))
show("real", lambda: tf.math.real(tf.constant([1 + 2j, 3 - 1j])))
show("imag_r", lambda: tf.math.imag(tf.constant([1.0, 2.0])))
show("conj", lambda: tf.math.conj(tf.constant([1 + 2j])))
show("angle", lambda: tf.math.angle(tf.constant([1 + 1j, -1 + 0j])))
show("angle_r", lambda: tf.math.angle(tf.constant([-2.0, 0.0, 3.0])))
show("complex", lambda: tf.complex([1.0], [2.0]))
show("complex_bad", lambda: tf.complex(tf.constant([1]), tf.constant([2])))
show("complex_mix", lambda: tf.complex(tf.constant([1.0]), tf.constant([2.0], tf.float64)))
d = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
for k in ["sum", "mean", "max", "min", "prod"]:
    show("seg_" + k, lambda k=k: getattr(tf.math, "segment_" + k)(d, tf.constant([0, 0, 2, 2])))
    show("seg_g_" + k, lambda k=k: grad(lambda a, k=k: getattr(tf.math, "segment_" + k)(a, tf.constant([0, 0, 2, 2])) * tf.constant([[1.0], [2.0], [3.0]]), [[1.0, 2.0], [1.0, 4.0], [5.0, 6.0], [7.0, 8.0]]))
show("seg_unsorted_err", lambda: tf.math.segment_sum(d, tf.constant([1, 0, 2, 2])))
for k in ["sum", "mean", "max", "min", "prod", "sqrt_n"]:
    show("useg_" + k, lambda k=k: getattr(tf.math, "unsorted_segment_" + k)(d, tf.constant([3, 0, 3, -1]), 4))
    show("useg_g_" + k, lambda k=k: grad(lambda a, k=k: getattr(tf.math, "unsorted_segment_" + k)(a, tf.constant([3, 0, 3, 3]), 4) * tf.constant([[1.0], [2.0], [3.0], [4.0]]), [[1.0, 2.0], [1.0, 4.0], [1.0, 6.0], [7.0, 8.0]]))
show("useg_int", lambda: tf.math.unsorted_segment_max(tf.constant([1, 2]), tf.constant([0, 0]), 2))
show("bincount", lambda: tf.math.bincount(tf.constant([1, 1, 3])))
show("bincount_w", lambda: tf.math.bincount(tf.constant([1, 1, 3]), weights=tf.constant([0.5, 1.0, 2.0])))
show("bincount_ml", lambda: tf.math.bincount(tf.constant([1, 1, 3]), minlength=6, maxlength=7))
show("bincount_max", lambda: tf.math.bincount(tf.constant([1, 1, 3]), maxlength=2))
show("bincount_ax", lambda: tf.math.bincount(tf.constant([[1, 1], [0, 2]]), axis=-1))
show("bincount_bin", lambda: tf.math.bincount(tf.constant([1, 1, 3]), binary_output=True))
show("bincount_neg", lambda: tf.math.bincount(tf.constant([-1, 1])))
show("cm", lambda: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]))
show("cm_w", lambda: tf.math.confusion_matrix([0, 1], [1, 1], num_classes=3, weights=[0.5, 2.0], dtype=tf.float32))
show("cm_bad", lambda: tf.math.confusion_matrix([0, 3], [1, 1], num_classes=3))
show("in_top_k", lambda: tf.math.in_top_k([0, 1, 2], tf.constant([[0.1, 0.9, 0.0], [0.3, 0.3, 0.4], [0.5, 0.2, 0.3]]), 2))
show("nn_in_top_k", lambda: tf.nn.in_top_k([0, 1], tf.constant([[0.1, 0.9], [0.3, 0.7]]), 1))
show("argsort", lambda: tf.argsort([3.0, 1.0, 2.0, 1.0], direction="DESCENDING"))
show("argsort2", lambda: tf.argsort([[3, 1, 2], [0, 5, 4]], axis=0))
show("argsort_bad", lambda: tf.argsort([3, 1], direction="UP"))
show("math_softmax", lambda: tf.math.softmax([1.0, 2.0]))
show("math_log_softmax", lambda: tf.math.log_softmax([1.0, 2.0]))
show("bessel", lambda: tf.math.bessel_i0e([0.5, 1.0]))
show("igamma", lambda: tf.math.igamma([1.0, 2.0], [0.5, 3.0]))
show("zeta", lambda: tf.math.zeta([2.0], [1.0]))
show("polygamma", lambda: tf.math.polygamma([1.0], [2.0]))
show("betainc", lambda: tf.math.betainc([1.0], [2.0], [0.5]))
show("accumulate_n", lambda: tf.math.accumulate_n([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])]))
c = tf.constant([[0.0, 1.0, -2.0], [3.0, 0.5, 0.0]])
show("cle", lambda: tf.math.cumulative_logsumexp(c, axis=1))
show("cle_ex", lambda: tf.math.cumulative_logsumexp(c, axis=1, exclusive=True))
show("cle_rev", lambda: tf.math.cumulative_logsumexp(c, axis=0, reverse=True))
show("cle_both", lambda: tf.math.cumulative_logsumexp(c, axis=1, exclusive=True, reverse=True))
show("cle_g", lambda: grad(lambda a: tf.reduce_sum(tf.math.cumulative_logsumexp(a, axis=1) * tf.constant([1.0, 2.0, 3.0])), [[0.0, 1.0, -2.0], [3.0, 0.5, 0.0]]))
show("amaxk", lambda: tf.math.approx_max_k(tf.constant([[1.0, 3.0, 2.0], [5.0, 4.0, 6.0]]), 2))
# TF on CPU: NotFoundError (no ApproxTopK kernel)
# show("amink", lambda: tf.math.approx_min_k(tf.constant([[1.0, 3.0, 2.0], [5.0, 4.0, 6.0]]), 2, reduction_dimension=0))
show("eig", lambda: tf.eig(tf.constant([[1.0, 2.0], [3.0, 4.0]])))
show("eigvals", lambda: tf.linalg.eigvals(tf.constant([[0.0, 1.0], [-1.0, 0.0]])))
show("eigvals_top", lambda: tf.eigvals(tf.constant([[2.0, 1.0], [0.0, 3.0]], tf.float64)))
show("gpt", lambda: tf.grad_pass_through(tf.round)(tf.constant([1.4, 2.6])))
show("gpt_g", lambda: grad(lambda a: tf.reduce_sum(tf.grad_pass_through(tf.round)(a) * tf.constant([3.0, 4.0])), [1.4, 2.6]))
show("gpt_g2", lambda: grad(lambda a, b: tf.reduce_sum(tf.grad_pass_through(lambda u, v: tf.floor(u * v))(a, b)), [1.4, 2.6], [2.0, 3.0]))
show("no_gradient", lambda: tf.no_gradient("MyOp"))
show("zeta_g", lambda: grad(lambda a, b: tf.math.zeta(a, b), [2.0, 3.0], [1.5, 2.0]))
show("polygamma_g", lambda: grad(lambda a, b: tf.math.polygamma(a, b), [1.0, 2.0], [1.5, 2.0]))
show("betainc_g", lambda: grad(lambda a, b, c: tf.math.betainc(a, b, c), [1.0, 2.0], [2.0, 3.0], [0.5, 0.3]))
show("igamma_g", lambda: grad(lambda a, b: tf.math.igamma(a, b), [1.0, 2.0], [0.5, 3.0]))
show("erfinv_g2", lambda: grad(lambda a: tf.math.ndtri(a) + tf.math.erfcinv(a) + tf.math.bessel_i1e(a) + tf.math.bessel_i0(a), [0.3, 0.7]))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_as_tensorflow(name):
    check(CASES[name], EXPECTED[name])
