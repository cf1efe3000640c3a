"""Linear-algebra rows of the op table: products, contractions, decompositions, norms."""
import collections

import jax.numpy as jnp
import numpy as np

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
