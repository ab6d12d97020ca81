"""The top-level and Tensor-method forms of the factorizations, as torch 1.13 has them: det,
logdet, slogdet, inverse, cholesky, cholesky_solve, cholesky_inverse, qr (some=), svd (some=,
compute_uv=, returning V), symeig, lu (get_infos=), lu_solve, lu_unpack, triangular_solve,
matrix_exp, pinverse, geqrf, orgqr, ormqr, nuclear_norm, norm (for p='nuc'), svd_lowrank, pca_lowrank; and eig, solve, lstsq, matrix_rank,
which 1.13 removed (they raise its RuntimeError). Installed by ember._functions_extra.install."""
import warnings

from . import _C
from . import _lapack as L
from ._lapack import _result_type, _mT

SlogdetResult = _result_type('slogdet', 'sign logabsdet')
QRResult = _result_type('qr', 'Q R')
SVDResult = _result_type('svd', 'U S V')
SymeigResult = _result_type('symeig', 'eigenvalues eigenvectors')
LUWithInfo = _result_type('_lu_with_info', 'LU pivots infos')
LUUnpackResult = _result_type('lu_unpack', 'P L U')
TriangularSolveResult = _result_type('triangular_solve', 'solution cloned_coefficient')


_GONE = ("This function was deprecated since version 1.9 and is now removed. Please use the `torch.linalg.{}` "
         "function instead.")


def eig(input, eigenvectors=False, *, out=None):
    raise RuntimeError(_GONE.format('eig'))


def solve(input, A, *, out=None):
    raise RuntimeError(_GONE.format('solve'))


def lstsq(input, A, *, out=None):
    raise RuntimeError('This function was deprecated since version 1.9 and is now removed.',
                       'Please use the `torch.linalg.lstsq` function instead.')


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError('This function was deprecated since version 1.9 and is now removed.',
                       'Please use the `torch.linalg.matrix_rank` function instead.')


def slogdet(input, *, out=None):
    return L._out(SlogdetResult(*L.slogdet(input)), out)


def cholesky(input, upper=False, *, out=None):
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.", UserWarning, stacklevel=2)
    return L.cholesky(input, upper=upper, out=out)


def qr(input, some=True, *, out=None):
    return L._out(QRResult(*L.qr(input, 'reduced' if some else 'complete')), out)


def svd(input, some=True, compute_uv=True, *, out=None):
    """U, S, V (not Vh) with input = U diag(S) V^H; without compute_uv, U and V are zeros of the
    full shapes."""
    L._check_matrix(input, 'linalg.svd', square=False)
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        S = L.svdvals(input)
        return L._out(SVDResult(_C.zeros(*input.shape[:-2], m, m, dtype=input.dtype), S,
                                _C.zeros(*input.shape[:-2], n, n, dtype=input.dtype)), out)
    U, S, Vh = L.svd(input, full_matrices=not some)
    return L._out(SVDResult(U, S, L._mH(Vh)), out)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    warnings.warn("torch.symeig is deprecated in favor of torch.linalg.eigh and will be removed in a future PyTorch "
                  "release.", UserWarning, stacklevel=2)
    values, vectors = L._eigh(input, 'U' if upper else 'L', eigenvectors or L._needs_grad(input), 'linalg.eigh')
    if not eigenvectors:
        vectors = _C.empty(0, dtype=input.dtype)
    return L._out(SymeigResult(values, vectors), out)


def lu(A, pivot=True, get_infos=False, out=None):
    LU, piv, info = L.lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return L._out(LUWithInfo(LU, piv, info), out)
    return L._out((LU, piv), out)


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    return L.lu_solve(LU_data, LU_pivots, b, out=out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    return L._out(LUUnpackResult(*L._lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)), out)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """X with op(A) X = b, op the transpose when `transpose`: (solution, a copy of A)."""
    L._check_matrix(A, 'triangular_solve')
    if b.dim() < 2:
        raise RuntimeError("torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{b.dim()} dimensions instead")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {A.shape[-2]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    Ao = _mT(A) if transpose else A
    X = _C._linalg_solve_triangular(Ao, b, bool(upper) != bool(transpose), True, bool(unitriangular))
    return L._out(TriangularSolveResult(X, A.clone()), out)


def pinverse(input, rcond=1e-15):
    return L.pinv(input, rtol=rcond)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with {input.dim()} "
                               f"dimension{'' if input.dim() == 1 else 's'} instead.")
        dim = (-2, -1)
    return L._out(L.singular_value_norm(input, 'nuc', dim, keepdim), out)


def norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the nuclear norm (p='nuc') here, every other p in C (ember._C.norm; of the moduli
    for a complex input, a real result)."""
    if not (isinstance(p, str) and p == 'nuc'):
        if input.is_complex() and dtype is None:
            input = input.abs()
        return _C.norm(input, p, dim, keepdim, out=out, dtype=dtype)
    if dtype is not None:
        raise ValueError("dtype argument is not supported in nuclear norm")
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dim) != 2:
            raise RuntimeError("nuclear norm requires a 'dim' argument of size 2")
    return nuclear_norm(input, dim, keepdim, out=out)


def norm_method(self, p='fro', dim=None, keepdim=False, dtype=None, *, out=None):
    return norm(self, p, dim, keepdim, out, dtype)


def orgqr(input, tau):
    return L.householder_product(input, tau)


def _range_basis(A, q, niter, M):
    """An orthonormal basis (m x q) of an approximation of A's range: a random projection refined by
    niter subspace iterations (Halko, Martinsson and Tropp, 2011, algorithm 4.4). M is subtracted
    from A (None: nothing)."""
    def times(X):
        return _C.matmul(A, X) if M is None else _C.matmul(A, X) - _C.matmul(M, X)

    def times_t(X):
        return _C.matmul(L._mH(A), X) if M is None else _C.matmul(L._mH(A), X) - _C.matmul(L._mH(M), X)
    if A.is_complex():  # a complex normal projection
        R = _C.view_as_complex(_C.randn(*A.shape[:-2], A.shape[-1], q, 2, dtype=L._real_dtype(A.dtype)))
    else:
        R = _C.randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype)
    Q = L.qr(times(R)).Q
    for _ in range(niter):
        Q = L.qr(times(L.qr(times_t(Q)).Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """U, S, V of a rank-q approximation of A (or A - M) from a randomized range basis: good when
    q is at least A's numerical rank. V is returned, not Vh (as torch.svd); A = U diag(S) V^H."""
    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None and tuple(M.shape) != tuple(A.shape):
        M = M.expand(A.shape).contiguous()  # (transposed below: not a view of an expanded tensor)
    if m < n or n > q:  # project from the right: the small matrix is (m x q)
        Q = _range_basis(L._mH(A), q, niter, None if M is None else L._mH(M))
        B = _C.matmul(A, Q) if M is None else _C.matmul(A, Q) - _C.matmul(M, Q)
        U, S, Vh = L.svd(B, full_matrices=False)
        return U, S, _C.matmul(Q, L._mH(Vh))
    Q = _range_basis(A, q, niter, M)
    B = _C.matmul(L._mH(Q), A) if M is None else _C.matmul(L._mH(Q), A) - _C.matmul(L._mH(Q), M)
    U, S, Vh = L.svd(B, full_matrices=False)
    return _C.matmul(Q, U), S, L._mH(Vh)


def pca_lowrank(A, q=None, center=True, niter=2):
    """U, S, V of the principal components of A's rows (the columns' means subtracted when center)."""
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f'q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}')
    if niter < 0:
        raise ValueError(f'niter(={niter}) must be non-negative integer')
    return svd_lowrank(A - A.mean(-2, keepdim=True) if center else A, q, niter)


_ARGS = {
    'slogdet': dict(input='Tensor'), 'cholesky': dict(input='Tensor', upper='bool'),
    'qr': dict(input='Tensor', some='bool'), 'svd': dict(input='Tensor', some='bool', compute_uv='bool'),
    'symeig': dict(input='Tensor', eigenvectors='bool', upper='bool'),
    'lu': dict(A='Tensor', pivot='bool', get_infos='bool'),
    'lu_solve': dict(b='Tensor', LU_data='Tensor', LU_pivots='Tensor'),
    'lu_unpack': dict(LU_data='Tensor', LU_pivots='Tensor', unpack_data='bool', unpack_pivots='bool'),
    'triangular_solve': dict(b='Tensor', A='Tensor', upper='bool', transpose='bool', unitriangular='bool'),
    'pinverse': dict(input='Tensor', rcond='float'), 'nuclear_norm': dict(input='Tensor', keepdim='bool'),
    'orgqr': dict(input='Tensor', tau='Tensor'),
}
L._check_args(globals(), _ARGS)


FUNCTIONS = {
    'det': L.det, 'logdet': L.logdet, 'slogdet': slogdet, 'inverse': L.inv, 'cholesky': cholesky,
    'cholesky_solve': L.cholesky_solve, 'cholesky_inverse': L.cholesky_inverse, 'qr': qr, 'svd': svd,
    'symeig': symeig, 'lu': lu, 'lu_solve': lu_solve, 'lu_unpack': lu_unpack, 'triangular_solve': triangular_solve,
    'matrix_exp': L.matrix_exp, 'pinverse': pinverse, 'geqrf': L.geqrf, 'orgqr': orgqr, 'ormqr': L.ormqr,
    'nuclear_norm': nuclear_norm,
    'eig': eig, 'solve': solve, 'lstsq': lstsq, 'matrix_rank': matrix_rank, 'svd_lowrank': svd_lowrank,
    'pca_lowrank': pca_lowrank,
}

# Tensor methods: the functions above with self first (1.13 has no Tensor.matrix_rank).
METHODS = {name: FUNCTIONS[name] for name in (
    'det', 'logdet', 'slogdet', 'inverse', 'cholesky', 'cholesky_solve', 'cholesky_inverse', 'qr', 'svd', 'symeig',
    'lu', 'lu_solve', 'triangular_solve', 'matrix_exp', 'pinverse', 'geqrf', 'orgqr', 'ormqr', 'eig', 'solve',
    'lstsq')}
