"""ember.linalg: torch.linalg. Norms, products, cross and matrix_power are here; the
LAPACK-backed factorizations and what is built on them (det, inv, solve, qr, svd, eigh,
cholesky, lu, lstsq, pinv, matrix_exp, eig, ...) are in ember._lapack. Real and complex inputs."""
import builtins

from . import _C
from ._argcheck import accepts
from ._functions import cross as _cross
from . import _lapack
from ._lapack import (LinAlgError, det, slogdet, inv, inv_ex, solve, solve_ex, solve_triangular, cholesky,  # noqa: F401
                      cholesky_ex, qr, svd, svdvals, eigh, eigvalsh, eig, eigvals, lu_factor, lu_factor_ex, lu,
                      lu_solve, lstsq, pinv, matrix_rank, matrix_exp, cond, tensorinv, tensorsolve, vander,
                      householder_product, ldl_factor, ldl_factor_ex, ldl_solve)

__all__ = ['vector_norm', 'matrix_norm', 'norm', 'cross', 'matmul', 'multi_dot', 'diagonal', 'vecdot',
           'matrix_power', 'LinAlgError', 'det', 'slogdet', 'inv', 'inv_ex', 'solve', 'solve_ex', 'solve_triangular',
           'cholesky', 'cholesky_ex', 'qr', 'svd', 'svdvals', 'eigh', 'eigvalsh', 'eig', 'eigvals', 'lu_factor',
           'lu_factor_ex', 'lu', 'lu_solve', 'lstsq', 'pinv', 'matrix_rank', 'matrix_exp', 'cond', 'tensorinv',
           'tensorsolve', 'vander', 'householder_product', 'ldl_factor', 'ldl_factor_ex', 'ldl_solve']


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ord-norm of x over dim (all elements when None): inf max |x|, -inf min |x|, 0 the count
    of nonzeros, else (sum |x|^ord)^(1/ord)."""
    if dtype is not None:
        x = x.to(dtype)
    if x.is_complex():  # the norm of the moduli (a real result)
        x = x.abs()
    result = x.norm(ord, dim=dim, keepdim=keepdim) if dim is not None else \
        x.reshape(-1).norm(ord).reshape((1,) * x.dim() if keepdim else ())
    return result if out is None else out.resize_(result.shape).copy_(result)


def matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """'fro', the induced norms 1, -1, inf, -inf (max/min column or row sums of |A|) over the
    two dims, or 'nuc', 2, -2 from the singular values."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    rows, cols = (d % A.dim() for d in dim)
    if ord == 'fro':
        result = (A.abs() if A.is_complex() else A).norm(2, dim=(rows, cols), keepdim=keepdim)
    elif ord in ('nuc', 2, -2):
        result = _lapack.singular_value_norm(A, ord, dim, keepdim)
    elif ord in (1, -1, float('inf'), float('-inf')):
        summed, other = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = A.abs().sum(summed, keepdim=True)
        pick = _C.amax if ord in (1, float('inf')) else _C.amin
        result = pick(sums, other, True)
        if not keepdim:
            result = result.squeeze(builtins.max(rows, cols)).squeeze(builtins.min(rows, cols))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return result if out is None else out.resize_(result.shape).copy_(result)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (dim an int, or a 1-d input) or a matrix norm (dim a pair, or a 2-d input)."""
    if isinstance(dim, builtins.int):
        dim = (dim,)
    if dim is None and ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype, out=out) if dim is None or len(dim) == 1 else \
            matrix_norm(A, 'fro', dim, keepdim, dtype=dtype, out=out)
    if (dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2):
        return matrix_norm(A, ord, dim or (-2, -1), keepdim, dtype=dtype, out=out)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype, out=out)


def cross(input, other, *, dim=-1, out=None):
    return _cross(input, other, dim, out=out)


def matmul(input, other, *, out=None):
    return _C.matmul(input, other) if out is None else _C.matmul(input, other, out=out)


def multi_dot(tensors, *, out=None):
    """A chain of matrix products; a 1-d first factor is a row, a 1-d last one a column."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    chain = [first.unsqueeze(0) if first.dim() == 1 else first, *tensors[1:-1],
             last.unsqueeze(1) if last.dim() == 1 else last]
    result = chain[0]
    for t in chain[1:]:
        result = _C.matmul(result, t)
    if last.dim() == 1:
        result = result.squeeze(-1)
    if first.dim() == 1:
        result = result.squeeze(0)
    return result if out is None else out.resize_(result.shape).copy_(result)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def vecdot(x, y, *, dim=-1, out=None):
    """sum(conj(x) * y) over dim."""
    result = (x.conj() * y).sum(dim)
    return result if out is None else out.resize_(result.shape).copy_(result)


@accepts(A='Tensor', n='int')
def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring (A^0 the identity; inv(A)^-n for negative n)."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are {} by {} "
                           "matrices".format(A.shape[-2] if A.dim() >= 2 else 1, A.shape[-1]))
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else _C.matmul(result, base)
        n >>= 1
        if n:
            base = _C.matmul(base, base)
    if result is None:
        result = _lapack._linked(_lapack._eye_like(A).expand(A.shape).contiguous(), A)
    return result if out is None else out.resize_(result.shape).copy_(result)
