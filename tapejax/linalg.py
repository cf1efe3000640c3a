"""tf.linalg: matrix ops (re-exports of the op table)."""
from .ops import (
    matmul as matmul, eye as eye, norm as norm, solve as solve, inv as inv, det as det,
    logdet as logdet, cholesky as cholesky, trace as trace, diag_part as diag_part, diag as diag,
    matvec as matvec, matrix_transpose as matrix_transpose, tensordot as tensordot, einsum as einsum,
    l2_normalize as l2_normalize, global_norm as global_norm,
)
transpose = matrix_transpose
