"""torch.linalg's factorizations and what is built on them (real and complex inputs), with PyTorch 1.13's
names, defaults, results and errors. The LAPACK primitives are ember._C's (_linalg_lu_factor_ex,
_linalg_lu_solve, _linalg_solve_triangular, _linalg_cholesky_ex, _linalg_qr, _linalg_svd,
_linalg_eigh, _linalg_eig, _linalg_lstsq, _geqrf, _linalg_householder_product, _ormqr:
include/ember/lapack.h), each with a backward formula where differentiable; det, inv, solve,
lu_solve, pinv, matrix_exp, ... are written with them here and differentiated through them or
with PyTorch's own formulas (ember._lapack_grad). ember.linalg exports these."""
import builtins
import collections
import math

from . import _C, _lapack_grad
from ._argcheck import accepts, param_names
from ._tensor import Tensor

_MODULE = 'ember.return_types'


def _result_type(name, fields):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = _MODULE
    return cls


SlogdetResult = _result_type('linalg_slogdet', 'sign logabsdet')
InvExResult = _result_type('linalg_inv_ex', 'inverse info')
SolveExResult = _result_type('linalg_solve_ex', 'result info')
CholeskyExResult = _result_type('linalg_cholesky_ex', 'L info')
QRResult = _result_type('linalg_qr', 'Q R')
SVDResult = _result_type('linalg_svd', 'U S Vh')
EighResult = _result_type('linalg_eigh', 'eigenvalues eigenvectors')
EigResult = _result_type('linalg_eig', 'eigenvalues eigenvectors')
LUFactorResult = _result_type('linalg_lu_factor', 'LU pivots')
LUFactorExResult = _result_type('linalg_lu_factor_ex', 'LU pivots info')
LUResult = _result_type('linalg_lu', 'P L U')
LstsqResult = _result_type('linalg_lstsq', 'solution residuals rank singular_values')
GeqrfResult = _result_type('geqrf', 'a tau')


class LinAlgError(RuntimeError):
    """Raised for a singular or not positive-definite input (PyTorch's torch.linalg.LinAlgError)."""


LinAlgError.__module__ = 'ember.linalg'


# ---- helpers ---------------------------------------------------------------
def _check_info(info, op, message, error=None):
    """Raises LinAlgError (or `error`) (op: message(code)) for the first nonzero LAPACK info,
    naming the batch element when the input was batched."""
    if info.numel() == 0 or not bool((info != 0).any()):
        return
    flat = info.reshape(-1)
    idx = int(_C.nonzero(flat)[0, 0])
    where = f"(Batch element {idx}): " if info.dim() > 0 else ""
    raise (error or LinAlgError)(f"{op}: {where}{message(int(flat[idx]))}")


def _check_matrix(A, op, square=True, what='A'):
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor {what} must have at least 2 dimensions.")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_scalar_name(A.dtype)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {what} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _scalar_name(dtype):
    return {'int64': 'Long', 'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool',
            'float16': 'Half', 'bfloat16': 'BFloat16', 'float32': 'Float', 'float64': 'Double',
            'complex32': 'ComplexHalf', 'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble'}.get(
        str(dtype).split('.')[-1], str(dtype))


def _out(result, out):
    """Writes result (a tensor or a tuple of them) into out, PyTorch's out= contract."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"out must be a tuple of {len(result)} tensors")
        for o, r in zip(out, result):
            o.resize_(r.shape).copy_(r)
        return type(result)(*out) if hasattr(result, '_fields') else tuple(out)
    return out.resize_(result.shape).copy_(result)


def _eye(n, m=None, dtype=None):
    """eye(n, m) of any dtype of the linalg functions (complex ones through their real eye)."""
    return _C.eye(n, n if m is None else m, dtype=_real_dtype(dtype)).to(dtype)


def _eye_like(A, n=None):
    return _eye(A.shape[-1] if n is None else n, dtype=A.dtype)


def _mT(A):
    return A.transpose(-2, -1)


def _mH(A):
    """The conjugate transpose (the transpose of a real A): the adjoint in complex formulas."""
    return A.transpose(-2, -1).conj()


def _real_dtype(dtype):
    return {_C.complex64: _C.float32, _C.complex128: _C.float64}.get(dtype, dtype)


def _eps(dtype):
    return 1.1920928955078125e-07 if _real_dtype(dtype) == _C.float32 else 2.220446049250313e-16


def _needs_grad(*ts):
    return _C.is_grad_enabled() and builtins.any(t is not None and t.requires_grad for t in ts)


def _linked(X, *ts):
    """X recorded as a function of ts with a zero gradient: PyTorch's results of empty or trivial
    inputs (an empty matrix, no reflectors, a zeroth power) keep the graph of their inputs."""
    for t in ts:
        if _needs_grad(t):
            X = X + t.reshape(-1)[:0].sum()  # an empty sum: exactly 0, whatever t holds
    return X


# ---- LU ------------------------------------------------------------------------
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """A = P L U with partial pivoting: (LU, pivots, info); info > 0 where U is singular."""
    _check_matrix(A, 'torch.lu_factor', square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, info = _C._linalg_lu_factor_ex(A)
    if check_errors:
        _check_info(info, 'torch.linalg.lu_factor_ex', _lu_message)
    return _out(LUFactorExResult(LU, piv, info), out)


def _lu_message(i):
    return (f"U[{i},{i}] is zero and using it on lu_solve would result in a division by zero. If you still want to "
            "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    _check_info(info, 'torch.linalg.lu_factor', _lu_message, RuntimeError)
    return _out(LUFactorResult(LU, piv), out)


def _permutation(pivots, m, dtype):
    return _C._lu_pivots_to_permutation(pivots, m, dtype)


def _lu_unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    if LU.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor of dimension >= 2, but got {LU.dim()}")
    m, n = LU.shape[-2], LU.shape[-1]
    k = builtins.min(m, n)
    P = _permutation(pivots, m, LU.dtype) if unpack_pivots else _C.empty(0, dtype=LU.dtype)
    if not unpack_data:
        empty = _C.empty(0, dtype=LU.dtype)
        return LUResult(P, empty, empty)
    L = LU[..., :, :k].tril(-1) + _eye(m, k, LU.dtype)
    U = LU[..., :k, :].triu()
    return LUResult(P, L, U)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U; L is m x k unit lower, U k x n upper, k = min(m, n)."""
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)
    return _out(_lu_unpack(LU, piv), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (A^T X = B when adjoint; X A = B when not left) from A's lu_factor."""
    _check_matrix(LU, 'linalg.lu_solve', what='LU')
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_scalar_name(LU.dtype)} and B of type {_scalar_name(B.dtype)} instead")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _out(_mH(lu_solve(LU, pivots, _mH(B), adjoint=not adjoint)), out)
    if not _needs_grad(LU, B):  # LAPACK's getrs, as PyTorch (its rounding); batch dims broadcast
        return _out(_C._linalg_lu_solve(LU, pivots, B, bool(adjoint)), out)
    batch = _broadcast_batch(LU, B)
    if list(B.shape[:-2]) != batch:  # the row gather needs B at the broadcast batch shape
        B = B.expand(*batch, *B.shape[-2:]).contiguous()
    if n == 0:
        return _out(_linked(B.clone(), LU), out)
    P = _permutation(pivots, n, _real_dtype(LU.dtype))  # (argmax: real)
    if adjoint:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        Y = _C._linalg_solve_triangular(_mH(LU), B, False, True, False)
        X = _permute_rows(_C._linalg_solve_triangular(_mH(LU), Y, True, True, True), P.argmax(-1))
    else:  # X = U^-1 L^-1 P^T B
        Y = _C._linalg_solve_triangular(LU, _permute_rows(B, P.argmax(-2)), False, True, True)
        X = _C._linalg_solve_triangular(LU, Y, True, True, False)
    return _out(X, out)


def _lu_solve_as(LU, piv, B, left, transposed, adjoint=False):
    """op(A)^-1 B (B op(A)^-1 when not left), op(A) = A (A^H when adjoint), from LU, the LU of A or
    (transposed) of A^T. A^T is not A^H for complex A: with M = A^T, A = conj(M)^H, so its solves
    are conjugated ones with M^H."""
    if transposed and LU.is_complex():
        return lu_solve(LU, piv, B.conj(), left=left, adjoint=not adjoint).conj()
    return lu_solve(LU, piv, B, left=left, adjoint=adjoint != transposed)


def _permute_rows(B, rows):
    """B's rows reordered: row i of the result is row rows[i] of B (a gather, not a product with P)."""
    if B.numel() == 0:  # (gather of an empty index records no graph)
        return B
    return B.gather(-2, rows.unsqueeze(-1).expand(*B.shape[:-2], rows.shape[-1], B.shape[-1]))


# ---- determinants, inverse, solve -------------------------------------------------
def _lu_sign(pivots, dtype):
    k = pivots.shape[-1]
    swaps = (pivots != _C.arange(1, k + 1, dtype=_C.int32)).sum(-1)
    return (1 - 2 * (swaps % 2)).to(dtype)


def _det_lu(A):
    """slogdet's LU and pivots: through lu_factor_ex of A^T (det A^T = det A), differentiable,
    when A needs a gradient, else _lu_as_torch's."""
    if _needs_grad(A):
        return _C._linalg_lu_factor_ex(_mT(A))[:2]
    return _lu_as_torch(A)[:2]


def det(A, *, out=None):
    _check_matrix(A, 'linalg.det')
    return _out(_lapack_grad.Det.apply(A, _det) if _needs_grad(A) else _det(A)[0], out)


def _det(A):
    """(det A, the LU it comes from, whether that is the LU of A^T): _lu_as_torch's."""
    LU, piv, _, transposed = _lu_as_torch(A)
    return LU.diagonal(0, -2, -1).prod(-1) * _lu_sign(piv, A.dtype), LU, piv, transposed


def _lu_as_torch(A):
    """(LU, pivots, info, transposed): the LU PyTorch's det, solve and inv compute, that of A^T
    when A is real and contiguous (the buffer LAPACK reads as is: getrf on it, solve_ex with no
    right-hand side, no transposing copy), so that their rounding (exact zeros of singular inputs
    included) is torch's. Without history."""
    transposed = _solve_on_transpose(A)
    if transposed:
        _, LU, piv, info = _C._linalg_solve_ex(A.detach(), _C.empty(*A.shape[:-1], 0, dtype=A.dtype))
    else:
        LU, piv, info = _C._linalg_lu_factor_ex(A.detach())
    return LU, piv, info, transposed


def _solve_on_transpose(A):
    """Does PyTorch factor A^T (not A) in solve, inv and det? For a contiguous real A."""
    return A.is_contiguous() and not A.is_complex()


def slogdet(A, *, out=None):
    """(sign, log|det A|); sign 0 and logabsdet -inf for a singular A."""
    _check_matrix(A, 'linalg.slogdet')
    LU, piv = _det_lu(A)
    d = LU.diagonal(0, -2, -1)
    # zero gradient for a real A, but recorded as torch does; d / |d| for a complex one
    sign = (d.sgn() if d.is_complex() else _C.sign(d)).prod(-1) * _lu_sign(piv, A.dtype)
    return _out(SlogdetResult(sign, d.abs().log().sum(-1)), out)


def logdet(A):
    """log det A: nan for a negative determinant, -inf for a singular A."""
    _check_matrix(A, 'logdet')
    sign, logabsdet = slogdet(A)
    return logabsdet + sign.log()


def _solve_checks(A, B, op):
    _check_matrix(A, op)
    if B.dim() < 1:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type "
                           f"{_scalar_name(A.dtype)} and B of type {_scalar_name(B.dtype)} instead")


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """X with A X = B (X A = B when not left): (result, info). B may be a vector (B.dim() == 1, or
    A's shape without its last dim)."""
    _solve_checks(A, B, 'linalg.solve')
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if (Bm.shape[-2] if left else Bm.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    if left and _solve_on_transpose(A):  # one getrf + getrs op on A^T's LU (PyTorch's), its own backward
        X, _, _, info = _C._linalg_solve_ex(A, Bm)
        info = _batch_of(info, A, 0)  # computed over the broadcast batch
    else:
        grad = _needs_grad(A, B)
        LU, piv, info, transposed = _lu_as_torch(A.detach() if grad else A)
        X = _lu_solve_as(LU, piv, Bm.detach() if grad else Bm, left, transposed)
        if grad:  # differentiated as PyTorch (its formula, its rounding)
            X = _lapack_grad.Solve.apply(A, Bm, X, LU, piv, left, transposed)
    X = X.squeeze(-1) if vector else X
    if check_errors:
        _check_info(info, 'torch.linalg.solve_ex', lambda i: "The solver failed because the input matrix is singular.")
    return _out(SolveExResult(X, info), out)


def _broadcast_batch(A, B):
    a, b = tuple(A.shape[:-2]), tuple(B.shape[:-2])
    n = builtins.max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return out


def solve(A, B, *, left=True, out=None):
    X, info = solve_ex(A, B, left=left)
    _check_info(info, 'torch.linalg.solve', lambda i: "The solver failed because the input matrix is singular.")
    return _out(X, out)


def inv_ex(A, *, check_errors=False, out=None):
    _check_matrix(A, 'linalg.inv')
    if _solve_on_transpose(A):  # as PyTorch: solve(A, I) on A^T's LU, one op with its own backward
        X, _, _, info = _C._linalg_solve_ex(A, _eye_like(A))
    else:
        grad = _needs_grad(A)
        LU, piv, info, transposed = _lu_as_torch(A.detach() if grad else A)
        X = _lu_solve_as(LU, piv, _eye_like(A), True, transposed)
        if grad:
            X = _lapack_grad.Inverse.apply(A, X)
    if check_errors:
        _check_info(info, 'linalg.inv_ex', _inv_message)
    return _out(InvExResult(X, info), out)


def _inv_message(i):
    return (f"The diagonal element {i} is zero, the inversion could not be completed because the input matrix is "
            "singular.")


def inv(A, *, out=None):
    X, info = inv_ex(A)
    _check_info(info, 'linalg.inv', _inv_message)
    return _out(X, out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    _check_matrix(A, 'linalg.solve_triangular')
    return _out(_C._linalg_solve_triangular(A, B, bool(upper), bool(left), bool(unitriangular)), out)


# ---- Cholesky --------------------------------------------------------------------
def _cholesky_message(i):
    return (f"The factorization could not be completed because the input is not positive-definite (the leading "
            f"minor of order {i} is not positive-definite).")


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    _check_matrix(A, 'linalg.cholesky')
    L, info = _C._linalg_cholesky_ex(A, bool(upper))
    if check_errors:
        _check_info(info, 'linalg.cholesky_ex', _cholesky_message)
    return _out(CholeskyExResult(L, info), out)


def cholesky(A, *, upper=False, out=None):
    L, info = cholesky_ex(A, upper=upper)
    _check_info(info, 'linalg.cholesky', _cholesky_message)
    return _out(L, out)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = B (B = input) for A = L L^H (U^H U when upper), from the factor L = input2."""
    B, L = input, input2
    _check_matrix(L, 'cholesky_solve', what='A')
    if B.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_scalar_name(B.dtype)} "
                           f"and A of type {_scalar_name(L.dtype)} instead.")
    Lo = _mH(L) if upper else L
    if _needs_grad(L):
        # PyTorch differentiates L as a dense matrix (its gradient fills both triangles): the
        # same value through A = L L^H with L's other triangle zero in value, not in gradient
        Lo = Lo.tril() + (Lo - Lo.detach()).triu(1)
        return _out(solve(_C.matmul(Lo, _mH(Lo)), B), out)
    Y = _C._linalg_solve_triangular(Lo, B, False, True, False)
    return _out(_C._linalg_solve_triangular(_mH(Lo), Y, True, True, False), out)


def cholesky_inverse(input, upper=False, *, out=None):
    _check_matrix(input, 'cholesky_inverse')
    return _out(cholesky_solve(_eye_like(input).expand(input.shape), input, upper), out)


# ---- QR, Householder -----------------------------------------------------------------
_QR_MODES = {'reduced': 0, 'complete': 1, 'r': 2}


def qr(A, mode='reduced', *, out=None):
    _check_str('linalg_qr', 'mode', 2, mode)
    _check_matrix(A, 'linalg.qr', square=False)
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    return _out(QRResult(*_C._linalg_qr(A, _QR_MODES[mode])), out)


def geqrf(input, *, out=None):
    _check_matrix(input, 'geqrf', square=False, what='input')
    return _out(GeqrfResult(*_C._geqrf(input)), out)


def _householder_matmuls(A, tau, ncols):
    """H_1 ... H_k's first ncols columns, H_i = I - tau_i v_i v_i^H, written with matrix products
    (differentiable in A and tau)."""
    m, k = A.shape[-2], tau.shape[-1]
    Q = _eye(m, ncols, A.dtype).expand(*A.shape[:-2], m, ncols)
    for i in reversed(range(k)):
        v = _C.cat([_C.zeros(*A.shape[:-2], i, dtype=A.dtype), _C.ones(*A.shape[:-2], 1, dtype=A.dtype),
                    A[..., i + 1:, i]], -1).unsqueeze(-1)
        Q = Q - tau[..., i, None, None] * _C.matmul(v, _C.matmul(_mH(v), Q))
    return Q


def householder_product(A, tau, *, out=None):
    """The first n columns of the product of the Householder reflectors (v_i, tau_i) stored in A."""
    op = 'torch.linalg.householder_product'
    _check_matrix(A, op, square=False, what='input')
    if _needs_grad(A, tau):
        Q = _C._linalg_householder_product(A.detach(), tau.detach())  # the checks
        Q = _linked(_householder_matmuls(A, tau, A.shape[-1]), A, tau)
    else:
        Q = _C._linalg_householder_product(A, tau)
    return _out(Q, out)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Q other (other Q when not left; Q^H when transpose) with Q the full product of the
    reflectors of geqrf's result: LAPACK's ormqr, as PyTorch. Differentiable here (PyTorch 1.13's
    is not) through Q's matrix products."""
    if not _needs_grad(input, tau, other):
        return _out(_C._ormqr(input, tau, other, bool(left), bool(transpose)), out)
    _C._ormqr(input.detach(), tau.detach(), other.detach(), bool(left), bool(transpose))  # the checks
    m, k = input.shape[-2], tau.shape[-1]
    full = _C.cat([input[..., :k], _C.zeros(*input.shape[:-1], m - k, dtype=input.dtype)], -1)
    Q = _linked(_householder_matmuls(full, tau, m), input, tau)
    if transpose:
        Q = _mH(Q)
    return _out(_C.matmul(Q, other) if left else _C.matmul(other, Q), out)


# ---- SVD and eigendecomposition -------------------------------------------------------
def _svd_message(i):
    if i < 0:
        return "The algorithm failed to converge because the input matrix contained non-finite values."
    return (f"The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
            f"singular values (error code: {i}).")


def _svd(A, full_matrices, compute_uv, op='linalg.svd'):
    _check_matrix(A, op, square=False)
    U, S, Vh, info = _C._linalg_svd(A, bool(full_matrices), bool(compute_uv))
    _check_info(info, 'linalg.svd', _svd_message)
    m, n = A.shape[-2], A.shape[-1]
    if compute_uv and full_matrices and builtins.min(m, n) == 0 and builtins.max(m, n) > 0:
        U, Vh = U + _eye(m, dtype=A.dtype), Vh + _eye(n, dtype=A.dtype)  # zeros so far: PyTorch's identities
    return U, S, Vh


def svd(A, full_matrices=True, *, driver=None, out=None):
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    return _out(SVDResult(*_svd(A, full_matrices, True)), out)


def svdvals(A, *, driver=None, out=None):
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    return _out(_svd(A, False, _needs_grad(A), 'linalg.svdvals')[1], out)


def _check_str(fname, name, position, value):
    if not isinstance(value, str):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be str, not "
                        f"{type(value).__name__}")


def _check_uplo(UPLO):
    _check_str('linalg_eigh', 'UPLO', 2, UPLO)
    if UPLO not in ('L', 'U', 'l', 'u'):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ('U', 'u')


def _eigh(A, UPLO, compute_v, op):
    upper = _check_uplo(UPLO)
    _check_matrix(A, op)
    L, Q, info = _C._linalg_eigh(A, upper, compute_v)
    _check_info(info, op, lambda i: f"The algorithm failed to converge because the input matrix is ill-conditioned "
                f"or has too many repeated eigenvalues (error code: {i}).")
    return L, Q


def eigh(A, UPLO='L', *, out=None):
    return _out(EighResult(*_eigh(A, UPLO, True, 'linalg.eigh')), out)


def eigvalsh(A, UPLO='L', *, out=None):
    return _out(_eigh(A, UPLO, _needs_grad(A), 'linalg.eigvalsh')[0], out)


def _eig(A, compute_v, op):
    """(eigenvalues, eigenvectors) of the general square A from LAPACK's geev, as PyTorch calls it:
    complex64 (complex128) for float32 (float64) A; differentiated as PyTorch (_lapack_grad.Eig)."""
    _check_matrix(A, op)
    grad = _needs_grad(A)
    L, V, info = _C._linalg_eig(A.detach() if grad else A, bool(compute_v or grad))
    if info.numel() and bool((info < 0).any()):
        raise RuntimeError(f"torch.{op}: input tensor should not contain infs or NaNs.")
    _check_info(info, f"torch.{op}", lambda i: f"The algorithm failed to converge because the input matrix is "
                f"ill-conditioned or has too many repeated eigenvalues (error code: {i}).")
    if grad:
        L, V = _lapack_grad.Eig.apply(A, L, V)
    return L, V


def eig(A, *, out=None):
    return _out(EigResult(*_eig(A, True, 'linalg.eig')), out)


def eigvals(A, *, out=None):
    return _out(_eig(A, False, 'linalg.eigvals')[0], out)


# ---- least squares, pseudo-inverse, rank ----------------------------------------------------
_DRIVERS = {'gels': 0, 'gelsy': 1, 'gelsd': 2, 'gelss': 3}


def lstsq(A, B, rcond=None, *, driver=None):
    """min ||A X - B||: (solution, residuals, rank, singular_values), as LAPACK's driver gives them
    (gelsy by default). Differentiated as pinv(A) @ B, as PyTorch."""
    op = 'torch.linalg.lstsq'
    _check_matrix(A, op, square=False, what='input')
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got input's dtype "
                           f"{A.dtype} and other's dtype {B.dtype}")
    if B.dim() < 1 or not (0 <= A.dim() - B.dim() <= 1):
        raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                           "other.dim()) <= 1")
    driver = 'gelsy' if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = A.dim() == B.dim() + 1
    m, n = A.shape[-2], A.shape[-1]
    if B.shape[-1 if vector else -2] != m:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size({-1 if vector else -2})")
    Bm = B.unsqueeze(-1) if vector else B
    if rcond is None:
        rcond = _eps(A.dtype) * builtins.max(m, n)
    X, res, rank, sv = _C._linalg_lstsq(A, Bm, float(rcond), _DRIVERS[driver])
    if _needs_grad(A, B):
        X = _lapack_grad.LstsqSolution.apply(A, Bm, X, pinv)
    full = driver == 'gels' or bool((rank == builtins.min(m, n)).all())
    residuals = res if m > n and driver != 'gelsy' and full else _C.empty(0, dtype=_real_dtype(A.dtype))
    if vector:
        X = X.squeeze(-1)
    rank = _C.empty(0, dtype=_C.int64) if driver == 'gels' else _batch_of(rank, A, 0)
    sv = _batch_of(sv, A, 1) if driver in ('gelsd', 'gelss') else _C.empty(0, dtype=_real_dtype(A.dtype))
    return LstsqResult(X, residuals, rank, sv)


def _batch_of(t, A, nextra):
    """t, computed over the broadcast batch, cut to A's batch shape (what depends on A alone)."""
    lead = t.dim() - nextra - (A.dim() - 2)
    for _ in range(lead):
        t = t[0]
    for d, size in enumerate(A.shape[:-2]):
        if size == 1 and t.shape[d] != 1:
            t = t.narrow(d, 0, 1)
    return t


def _tolerances(S_max, atol, rtol, dtype, m, n):
    """PyTorch's cut-off max(atol, rtol * largest), rtol defaulting to eps * max(m, n) when atol is
    not given (or zero)."""
    if rtol is None:
        rtol = 0.0 if atol is not None and not (isinstance(atol, (int, float)) and atol == 0) else \
            _eps(dtype) * builtins.max(m, n)
    if isinstance(rtol, Tensor):  # one tolerance per matrix of the batch
        rtol = rtol.unsqueeze(-1)
    tol = S_max * rtol
    if atol is not None:
        tol = _C.maximum(tol, atol.unsqueeze(-1) if isinstance(atol, Tensor) else _C.full_like(tol, float(atol)))
    return tol


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse from the SVD (eigh when hermitian), singular values below
    max(atol, rtol * largest) taken as zero. rcond is the older name of rtol. Differentiated as
    the pseudo-inverse (ember._lapack_grad), not through the SVD, as PyTorch."""
    _check_matrix(A, 'linalg.pinv', square=False)
    if rcond is not None:
        rtol = rcond

    def value(A):
        return _pinv(A, hermitian, atol, rtol)
    return _out(_lapack_grad.Pinv.apply(A, value) if _needs_grad(A) else value(A), out)


def _pinv(A, hermitian, atol, rtol):
    m, n = A.shape[-2], A.shape[-1]
    if A.numel() == 0:
        return _C.zeros(*A.shape[:-2], n, m, dtype=A.dtype)
    if hermitian:  # from A's lower triangle, as PyTorch
        L, Q = eigh(A)
        tol = _tolerances(L.abs().amax(-1, keepdim=True), atol, rtol, A.dtype, m, n)
        Linv = _C.where(L.abs() > tol, 1 / L, _C.zeros_like(L))
        return _C.matmul(Q * Linv.unsqueeze(-2).to(A.dtype), _mH(Q))
    U, S, Vh = _svd(A, False, True, 'linalg.pinv')
    tol = _tolerances(S[..., :1], atol, rtol, A.dtype, m, n)
    Sinv = _C.where(S > tol, 1 / S, _C.zeros_like(S))
    return _C.matmul(_mH(Vh) * Sinv.unsqueeze(-2).to(A.dtype), _mH(U))


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    _check_matrix(A, 'torch.linalg.matrix_rank', square=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = A.shape[-2], A.shape[-1]
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    if S.shape[-1] == 0:
        return _out(_C.zeros(tuple(A.shape[:-2]), dtype=_C.int64), out)
    tol = _tolerances(S.amax(-1, keepdim=True), atol, rtol, A.dtype, m, n)
    return _out((S > tol).sum(-1), out)


# ---- matrix functions, norms ------------------------------------------------------------
def matrix_exp(A):
    """e^A by scaling and squaring: a degree-18 Taylor polynomial of A / 2^s with ||A / 2^s||_1
    <= 1/2 (error below float64's eps), squared s times. Differentiated through its products.
    Single precision is computed in double and rounded once (the s squarings would amplify
    float32's rounding past torch's)."""
    _check_matrix(A, 'linalg.matrix_exp')
    if A.numel() == 0:
        return A.clone()
    if A.dtype in (_C.float32, _C.complex64):
        return matrix_exp(A.to(_C.float64 if A.dtype == _C.float32 else _C.complex128)).to(A.dtype)
    norm = float(A.detach().abs().sum(-2).amax()) if A.numel() else 0.0
    s = builtins.max(0, math.ceil(math.log2(norm)) + 1) if norm > 0 and math.isfinite(norm) else 0
    X = A / (2.0 ** s) if s else A
    eye = _eye_like(A)
    E = eye + X / 18.0
    for k in range(17, 0, -1):
        E = eye + _C.matmul(X, E) / float(k)
    for _ in range(s):
        E = _C.matmul(E, E)
    return E


def singular_value_norm(A, ord, dim, keepdim):
    """'nuc', 2 and -2 matrix norms over the two dims: the sum, largest and smallest singular value."""
    rows, cols = (d % A.dim() for d in dim)
    M = A.movedim((rows, cols), (-2, -1))
    S = svdvals(M)
    result = S.sum(-1) if ord == 'nuc' else S.amax(-1) if ord == 2 else S.amin(-1)
    if keepdim:
        for d in sorted((rows, cols)):
            result = result.unsqueeze(d)
    return result


def cond(A, p=None, *, out=None):
    """The condition number in the p-norm: S_max / S_min for p None, 2, -2 (inverted); else
    norm(A, p) * norm(inv(A), p) (square A)."""
    from .linalg import matrix_norm
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p in (None, 2, -2):
        S = svdvals(A)
        result = S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
        return _out(result, out)
    _check_matrix(A, 'linalg.cond')
    return _out(matrix_norm(A, p) * matrix_norm(inv(A), p), out)


def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(head), math.prod(tail)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _out(inv(A.reshape(rows, cols)).reshape(*tail, *head), out)


def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.movedim(dims, list(range(A.dim() - len(dims), A.dim())))
    rest = tuple(A.shape[B.dim():])
    rows = B.numel()
    if math.prod(rest) != rows:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {math.prod(rest)} != {rows}")
    return _out(solve(A.reshape(rows, rows), B.reshape(rows)).reshape(rest), out)


def vander(x, *, N=None):
    """Columns x^0, x^1, ..., x^(N-1) (increasing powers) of the last dim of x."""
    if x.dim() == 0:  # a scalar is a vector of one (PyTorch's shape (1, N))
        if N is None:
            raise RuntimeError("N must be greater than 1.")
        x = x.reshape(1)
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = _C.cat([_C.ones_like(x).unsqueeze(-1), x.unsqueeze(-1).expand(*x.shape, N - 1)], -1)
    return powers.cumprod(-1)


LDLFactorExResult = _result_type('linalg_ldl_factor_ex', 'LD pivots info')
LDLFactorResult = _result_type('linalg_ldl_factor', 'LD pivots')


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """A = L D L^T (L D L^H when hermitian: hetrf) with Bunch-Kaufman pivoting (LAPACK's sytrf),
    from A's lower triangle: (LD, pivots, info). hermitian changes nothing for real inputs. Not
    differentiable (as PyTorch)."""
    _check_matrix(A, 'torch.linalg.ldl_factor_ex')
    LD, piv, info = _C._linalg_ldl_factor_ex(A, bool(hermitian))
    if check_errors:
        _check_info(info, 'torch.linalg.ldl_factor_ex', _ldl_message)
    return _out(LDLFactorExResult(LD, piv, info), out)


def _ldl_message(i):
    return f"The factorization could not be completed because the input is singular (D[{i},{i}] is zero)."


def ldl_factor(A, *, hermitian=False, out=None):
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    _check_info(info, 'torch.linalg.ldl_factor', _ldl_message)
    return _out(LDLFactorResult(LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    return _out(_C._linalg_ldl_solve(LD, pivots, B, bool(hermitian)), out)


# PyTorch's argument types, checked as its parser does (a TypeError naming the argument).
_ARGS = {
    'lu_factor_ex': dict(A='Tensor', pivot='bool', check_errors='bool'),
    'lu_factor': dict(A='Tensor', pivot='bool'), 'lu': dict(A='Tensor', pivot='bool'),
    'lu_solve': dict(LU='Tensor', pivots='Tensor', B='Tensor', left='bool', adjoint='bool'),
    'det': dict(A='Tensor'), 'slogdet': dict(A='Tensor'), 'logdet': dict(A='Tensor'), 'inv': dict(A='Tensor'),
    'inv_ex': dict(A='Tensor', check_errors='bool'), 'matrix_exp': dict(A='Tensor'),
    'solve_ex': dict(A='Tensor', B='Tensor', left='bool', check_errors='bool'),
    'solve': dict(A='Tensor', B='Tensor', left='bool'),
    'solve_triangular': dict(A='Tensor', B='Tensor', upper='bool', left='bool', unitriangular='bool'),
    'cholesky_ex': dict(A='Tensor', upper='bool', check_errors='bool'), 'cholesky': dict(A='Tensor', upper='bool'),
    'cholesky_solve': dict(input='Tensor', input2='Tensor', upper='bool'),
    'cholesky_inverse': dict(input='Tensor', upper='bool'), 'qr': dict(A='Tensor'), 'geqrf': dict(input='Tensor'),
    'householder_product': dict(A='Tensor', tau='Tensor'),
    'ormqr': dict(input='Tensor', tau='Tensor', other='Tensor', left='bool', transpose='bool'),
    'svd': dict(A='Tensor', full_matrices='bool'), 'svdvals': dict(A='Tensor'), 'eigh': dict(A='Tensor'),
    'eigvalsh': dict(A='Tensor'), 'eig': dict(A='Tensor'), 'eigvals': dict(A='Tensor'), 'lstsq': dict(A='Tensor', B='Tensor', rcond='float?'),
    'pinv': dict(A='Tensor', hermitian='bool'), 'matrix_rank': dict(A='Tensor', hermitian='bool'),
    'cond': dict(A='Tensor'), 'tensorinv': dict(A='Tensor', ind='int'), 'tensorsolve': dict(A='Tensor', B='Tensor'),
    'vander': dict(x='Tensor'), 'ldl_factor_ex': dict(A='Tensor', hermitian='bool', check_errors='bool'),
    'ldl_factor': dict(A='Tensor', hermitian='bool'),
    'ldl_solve': dict(LD='Tensor', pivots='Tensor', B='Tensor', hermitian='bool'),
}


def _check_args(namespace, table):
    """Wraps each function of `table` in accepts(), its out= included (a tuple for tuple results)."""
    for name, kinds in table.items():
        fn = namespace[name]
        if 'out' in sum(param_names(fn), ()):
            kinds = dict(kinds, out='Tensors?' if name in _TUPLE_RESULTS else 'Tensor?')
        namespace[name] = accepts(**kinds)(fn)


_TUPLE_RESULTS = {'slogdet', 'inv_ex', 'solve_ex', 'cholesky_ex', 'qr', 'svd', 'eigh', 'lu_factor', 'lu_factor_ex',
                  'lu', 'geqrf', 'symeig', 'eig', 'lu_unpack', 'triangular_solve', 'ldl_factor', 'ldl_factor_ex'}
_check_args(globals(), _ARGS)
