"""Linear-algebra rows of the op table: products, contractions, decompositions, norms."""
import collections

import jax
import jax.numpy as jnp
import numpy as np

from .. import errors
from .._core.engine import shares_dtype
from ..extend import defop
from . import bounds, kinks, normalize
from .namespaces import export



def _flip(x, transpose, adjoint):
    """``x`` transposed (``transpose``) or conjugate-transposed (``adjoint``) in its last two axes."""
    if adjoint:
        return jnp.conj(jnp.swapaxes(x, -1, -2))
    return jnp.swapaxes(x, -1, -2) if transpose else x


_matmul = defop(lambda a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False:
                jnp.matmul(_flip(a, transpose_a, adjoint_a), _flip(b, transpose_b, adjoint_b)),
                name="matmul", static=("transpose_a", "transpose_b", "adjoint_a", "adjoint_b"))
_tensordot = defop(lambda a, b, axes: jnp.tensordot(a, b, axes), name="tensordot", static=("axes",))
_einsum = defop(lambda *xs, equation: jnp.einsum(equation, *xs), name="einsum", static=("equation",))
for _op in (_matmul, _tensordot, _einsum):
    shares_dtype(_op)   # TensorFlow's type attribute T (messages: ops/messages.py)
_solve = defop(jnp.linalg.solve, name="solve")
_norm = defop(lambda x, ord="euclidean", axis=None, keepdims=False: _norm_fn(x, ord, axis, keepdims), name="norm", static=("ord", "axis", "keepdims"))
inv = export("linalg.inv")(defop(jnp.linalg.inv, name="inv"))
det = export("linalg.det")(defop(jnp.linalg.det, name="det"))
logdet = export("linalg.logdet")(defop(lambda x: jnp.linalg.slogdet(x)[1], name="logdet"))
cholesky = export("linalg.cholesky")(defop(jnp.linalg.cholesky, name="cholesky"))
trace = export("linalg.trace")(defop(lambda x: jnp.trace(x, axis1=-2, axis2=-1), name="trace"))
diag_part = export("linalg.diag_part")(defop(lambda x: jnp.diagonal(x, axis1=-2, axis2=-1), name="diag_part"))
diag = export("linalg.diag")(defop(lambda x: x[..., :, None] * jnp.eye(x.shape[-1], dtype=x.dtype), name="diag"))
_matrix_transpose = defop(lambda x, conjugate=False: _flip(x, True, conjugate), name="matrix_transpose", static=("conjugate",))
inv.check = bounds.invertible("MatrixInverse", "Input is not invertible.")
_solve.check = bounds.invertible("MatrixSolve", "Input matrix is not invertible.")
matvec = export("linalg.matvec")(defop(lambda a, b: jnp.einsum("...ij,...j->...i", a, b), name="matvec"))


@export("matmul", "linalg.matmul")
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None):
    """Matrix product of ``a`` and ``b`` (batched over leading dimensions).

    Example:
        >>> import tapejax as tf
        >>> tf.matmul([[1.0, 2.0]], [[3.0], [4.0]]).numpy()
        array([[11.]], dtype=float32)
    """
    for t, adj, x in ((transpose_a, adjoint_a, "a"), (transpose_b, adjoint_b, "b")):
        if t and adj:
            raise ValueError(f"Only one of `transpose_{x}` and `adjoint_{x}` can be True. "
                             f"Received `transpose_{x}`={t}, `adjoint_{x}`={adj}.")
    return _matmul(a, b, transpose_a=bool(transpose_a), transpose_b=bool(transpose_b),
                   adjoint_a=bool(adjoint_a), adjoint_b=bool(adjoint_b))


@export("linalg.matrix_transpose", "linalg.transpose")
def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of ``a``; ``conjugate=True`` also conjugates a
    complex ``a`` (``tf.linalg.matrix_transpose``).

    >>> import tapejax as tf
    >>> x = tf.constant([[1 + 1j, 2 + 2j, 3 + 3j], [4 + 4j, 5 + 5j, 6 + 6j]])
    >>> tf.linalg.matrix_transpose(x, conjugate=True)
    <tf.Tensor: shape=(3, 2), dtype=complex128, numpy=
    array([[1.-1.j, 4.-4.j],
           [2.-2.j, 5.-5.j],
           [3.-3.j, 6.-6.j]])>
    """
    return _matrix_transpose(a, conjugate=bool(conjugate))


@export("linalg.adjoint")
def adjoint(matrix, name=None):
    """The conjugate transpose of the last two dimensions of ``matrix`` (``tf.linalg.adjoint``).

    >>> import tapejax as tf
    >>> x = tf.constant([[1 + 1j, 2 + 2j, 3 + 3j], [4 + 4j, 5 + 5j, 6 + 6j]])
    >>> tf.linalg.adjoint(x)
    <tf.Tensor: shape=(3, 2), dtype=complex128, numpy=
    array([[1.-1.j, 4.-4.j],
           [2.-2.j, 5.-5.j],
           [3.-3.j, 6.-6.j]])>
    """
    return _matrix_transpose(matrix, conjugate=True)


@export("einsum", "linalg.einsum")
def einsum(equation, *inputs, **kwargs):
    """``tf.einsum(equation, *inputs)``.

    Example:
        >>> import tapejax as tf
        >>> tf.einsum('ij,j->i', [[1.0, 2.0]], [3.0, 4.0]).numpy()
        array([11.], dtype=float32)
    """
    return _einsum(*inputs, equation=equation)


@export("tensordot", "linalg.tensordot")
def tensordot(a, b, axes, name=None):
    """Tensor contraction of ``a`` and ``b`` over ``axes`` (``tf.tensordot``)."""
    return _tensordot(a, b, axes=axes)


@export("linalg.solve")
def solve(matrix, rhs, adjoint=False, name=None):
    """Solves ``matrix @ x = rhs`` for ``x`` (``tf.linalg.solve``)."""
    return _solve(_matrix_transpose(matrix, conjugate=True) if adjoint else matrix, rhs)


@export("norm", "linalg.norm")
def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector or matrix norm (``tf.norm``); 'euclidean' by default."""
    return _norm(tensor, ord=ord, axis=normalize.axis(axis), keepdims=bool(keepdims))


def _norm_fn(x, ord, axis, keepdims):
    if ord in ("euclidean", 2, 2.0, "fro") and (axis is None or isinstance(axis, int) or ord == "fro"):
        return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims))
    if ord in (1, 1.0) and (axis is None or isinstance(axis, int)):
        return jnp.sum(kinks.abs(x), axis=axis, keepdims=keepdims)
    if ord == np.inf and (axis is None or isinstance(axis, int)):
        return jnp.max(kinks.abs(x), axis=axis, keepdims=keepdims)
    return jnp.linalg.norm(x, ord=None if ord == "euclidean" else ord, axis=axis, keepdims=keepdims)


def _svd_fn(x, full_matrices=False, compute_uv=True):
    if not compute_uv:
        return jnp.linalg.svd(x, compute_uv=False)
    u, s, vh = jnp.linalg.svd(x, full_matrices=full_matrices)
    return s, u, jnp.conj(jnp.swapaxes(vh, -1, -2))


_svd = defop(_svd_fn, name="svd", static=("full_matrices", "compute_uv"))


@export("linalg.svd")
def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values ``s`` and vectors, ``tensor = u @ diag(s) @ adjoint(v)`` (TF's order: s, u, v).

    Singular vectors are unique up to sign: a pair ``u[:, k]``, ``v[:, k]`` may have the opposite
    sign of TensorFlow's (its CPU kernel is Eigen's, tapejax's LAPACK's); ``s`` and every
    product of the factors are the same.

    Example:
        >>> import tapejax as tf
        >>> s, u, v = tf.linalg.svd(tf.constant([[3.0, 0.0], [0.0, 2.0]]))
        >>> s.numpy().tolist()
        [3.0, 2.0]
    """
    return _svd(tensor, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


_qr = defop(lambda x, full_matrices=False: jnp.linalg.qr(x, mode="complete" if full_matrices else "reduced"),
            name="qr", static=("full_matrices",))


Qr = collections.namedtuple("Qr", ["q", "r"])   # TensorFlow's named result


@export("linalg.qr")
def qr(input, full_matrices=False, name=None):
    """The QR decomposition: ``Qr(q, r)``, ``q`` orthonormal columns, ``r`` upper triangular.

    Example:
        >>> import tapejax as tf
        >>> q, r = tf.linalg.qr(tf.constant([[2.0, 0.0], [0.0, 3.0]]))
        >>> tf.abs(r).numpy().tolist()
        [[2.0, 0.0], [0.0, 3.0]]
    """
    return Qr(*_qr(input, full_matrices=bool(full_matrices)))


eigh = export("linalg.eigh")(defop(lambda x: tuple(jnp.linalg.eigh(x)), name="eigh"))
eigvalsh = export("linalg.eigvalsh")(defop(jnp.linalg.eigvalsh, name="eigvalsh"))


def _triangular_solve_fn(a, b, lower=True, adjoint=False):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    return jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=adjoint, conjugate_a=adjoint)


_triangular_solve = defop(_triangular_solve_fn, name="triangular_solve", static=("lower", "adjoint"))


@export("linalg.triangular_solve")
def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves ``matrix @ x = rhs`` for a triangular ``matrix`` (only its ``lower`` or upper
    triangle is read); ``adjoint=True`` solves with its conjugate transpose; batch dimensions
    broadcast (``tf.linalg.triangular_solve``).

    Example:
        >>> import tapejax as tf
        >>> a = tf.constant([[3, 0, 0, 0], [2, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], dtype=tf.float32)
        >>> b = tf.constant([[4], [2], [4], [2]], dtype=tf.float32)
        >>> tf.linalg.triangular_solve(a, b, lower=True).numpy()
        array([[ 1.3333334 ],
               [-0.66666675],
               [ 2.6666665 ],
               [-1.3333331 ]], dtype=float32)
    """
    shape = _shape(matrix)
    if len(shape) >= 2 and shape[-1] != shape[-2]:
        raise errors.InvalidArgumentError(None, None, f"In[0] matrices in the last dimensions must be square "
                                                      f"({shape[-1]} =/= {shape[-2]})")
    return _triangular_solve(matrix, rhs, lower=bool(lower), adjoint=bool(adjoint))


def _band_part_fn(x, num_lower, num_upper):
    """Keeps a band of each innermost matrix: ``num_lower`` subdiagonals and ``num_upper``
    superdiagonals (negative: all of them), zeros elsewhere (``tf.linalg.band_part``).

    Example:
        >>> import tapejax as tf
        >>> tf.linalg.band_part(tf.reshape(tf.range(16), [4, 4]), 1, -1).numpy()
        array([[ 0,  1,  2,  3],
               [ 4,  5,  6,  7],
               [ 0,  9, 10, 11],
               [ 0,  0, 14, 15]], dtype=int32)
    """
    i = jnp.arange(x.shape[-2])[:, None]
    j = jnp.arange(x.shape[-1])[None, :]
    keep = ((num_lower < 0) | (i - j <= num_lower)) & ((num_upper < 0) | (j - i <= num_upper))
    return jnp.where(keep, x, jnp.zeros((), x.dtype))


band_part = export("linalg.band_part")(defop(_band_part_fn, name="band_part"))


def _tensor_diag_part_fn(x):
    half = x.ndim // 2
    n = int(np.prod(x.shape[:half], dtype=np.int64))
    return jnp.diagonal(x.reshape(n, n)).reshape(x.shape[:half])


def _tensor_diag_fn(d):
    """A tensor of rank ``2k`` with ``diagonal`` (rank ``k``) on its diagonal, zeros elsewhere
    (``tf.linalg.tensor_diag``).

    Example:
        >>> import tapejax as tf
        >>> tf.linalg.tensor_diag([1, 2]).numpy()
        array([[1, 0],
               [0, 2]], dtype=int32)
    """
    return jnp.diag(d.reshape(-1)).reshape(d.shape + d.shape)


_tensor_diag_part = defop(_tensor_diag_part_fn, name="tensor_diag_part")
tensor_diag = export("linalg.tensor_diag")(defop(_tensor_diag_fn, name="tensor_diag"))


@export("linalg.tensor_diag_part")
def tensor_diag_part(input, name=None):
    """The diagonal of a tensor of shape ``[D1, ..., Dk, D1, ..., Dk]``: ``output[i1..ik] =
    input[i1..ik, i1..ik]`` (``tf.linalg.tensor_diag_part``).

    Example:
        >>> import tapejax as tf
        >>> x = [[[[1111, 1112], [1121, 1122]], [[1211, 1212], [1221, 1222]]],
        ...      [[[2111, 2112], [2121, 2122]], [[2211, 2212], [2221, 2222]]]]
        >>> tf.linalg.tensor_diag_part(x)
        <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
        array([[1111, 1212],
               [2121, 2222]], dtype=int32)>
    """
    shape = _shape(input)
    half = len(shape) // 2
    if len(shape) % 2 or tuple(shape[:half]) != tuple(shape[half:]):
        bad = next((i for i in range(half) if shape[i] != shape[i + half]), 0)
        raise errors.InvalidArgumentError(None, None, f"Invalid shape [{','.join(str(d) for d in shape)}]: dimensions "
                                                      f"{bad} and {bad + half} do not match.")
    return _tensor_diag_part(input)


def _shape(x):
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
