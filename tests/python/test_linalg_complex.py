"""torch.linalg (and the torch.* forms) on complex64 and complex128 vs PyTorch 1.13: values
(batched, non-square where allowed, LAPACK's phases of the vectors), result dtypes (real singular
values and eigh eigenvalues), LinAlgError and *_ex info, and conjugate Wirtinger gradients:
compared with torch's for the same real loss, and Ember's gradcheck/gradgradcheck on complex128."""
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import to_ember, to_torch

warnings.filterwarnings('ignore', 'torch.cholesky is deprecated')
pytestmark = pytest.mark.filterwarnings('ignore::UserWarning')

CDTYPES = ['complex64', 'complex128']


def crand(*shape, dtype='complex128', seed=0):
    g = np.random.default_rng(seed)
    a = g.uniform(-1, 1, shape) + 1j * g.uniform(-1, 1, shape)
    return torch.tensor(a).to(getattr(torch, dtype))


def wellcond(*shape, dtype='complex128', seed=0):
    return crand(*shape, dtype=dtype, seed=seed) + 3 * torch.eye(shape[-1], dtype=getattr(torch, dtype))


def hpd(*shape, dtype='complex128', seed=0):
    """A Hermitian positive-definite (batched) matrix."""
    a = crand(*shape, dtype=dtype, seed=seed)
    return a @ a.mH + torch.eye(shape[-1], dtype=a.dtype)


def herm(*shape, dtype='complex128', seed=0):
    a = crand(*shape, dtype=dtype, seed=seed)
    return a + a.mH


def tol(dtype):
    return dict(atol=2e-4, rtol=2e-4) if dtype == 'complex64' else dict(atol=1e-9, rtol=1e-8)


def same(e, t, atol, rtol):
    """Ember result(s) e equal torch's t: shapes, dtypes and values (complex compared as such)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f'expected a Tensor, got {type(e)}'
        assert tuple(e.shape) == tuple(t.shape), f'shape {tuple(e.shape)} != {tuple(t.shape)}'
        assert str(e.dtype).split('.')[-1] == str(t.dtype).split('.')[-1], f'dtype {e.dtype} != {t.dtype}'
        te = to_torch(e)
        if t.dtype.is_floating_point or t.dtype.is_complex:
            assert torch.allclose(te, t, atol=atol, rtol=rtol, equal_nan=True), f'values differ:\nember {te}\ntorch {t}'
        else:
            assert torch.equal(te, t), f'values differ:\nember {te}\ntorch {t}'
    elif isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b, atol, rtol)
    else:
        assert e == t


def run(fn, *inputs, dtype='complex128'):
    """fn(*inputs, m=torch) and fn(*ember copies, m=ember), compared."""
    t = fn(*inputs, m=torch)
    e = fn(*[to_ember(x) if isinstance(x, torch.Tensor) else x for x in inputs], m=ember)
    same(e, t, **tol(dtype))
    return e, t


# ---- values ----------------------------------------------------------------------------------
SQUARE = {
    'det': lambda A, m: m.linalg.det(A),
    'slogdet': lambda A, m: tuple(m.linalg.slogdet(A)),
    'logdet': lambda A, m: m.logdet(A),
    'inv': lambda A, m: m.linalg.inv(A),
    'inv_ex': lambda A, m: tuple(m.linalg.inv_ex(A)),
    'inverse': lambda A, m: m.inverse(A),
    'inv_noncontig': lambda A, m: m.linalg.inv(A.mT),
    'matrix_exp': lambda A, m: m.linalg.matrix_exp(A),
    'matrix_power3': lambda A, m: m.linalg.matrix_power(A, 3),
    'matrix_power-2': lambda A, m: m.linalg.matrix_power(A, -2),
    'eigvals': lambda A, m: m.linalg.eigvals(A),
    'eig': lambda A, m: tuple(m.linalg.eig(A)),
    'lu_factor': lambda A, m: tuple(m.linalg.lu_factor(A)),
    'lu_factor_ex': lambda A, m: tuple(m.linalg.lu_factor_ex(A)),
    'lu': lambda A, m: tuple(m.linalg.lu(A)),
    'torch.lu': lambda A, m: tuple(m.lu(A, get_infos=True)),
    'lu_unpack': lambda A, m: tuple(m.lu_unpack(*m.linalg.lu_factor(A))),
    'cond': lambda A, m: m.linalg.cond(A),
    'cond_fro': lambda A, m: m.linalg.cond(A, 'fro'),
    'tensorinv': lambda A, m: m.linalg.tensorinv(A.reshape(2, 2, 4), ind=2) if A.dim() == 2 else A,
}


@pytest.mark.parametrize('dtype', CDTYPES)
@pytest.mark.parametrize('shape', [(4, 4), (2, 3, 4, 4)])
@pytest.mark.parametrize('name', list(SQUARE))
def test_square_values(name, shape, dtype):
    run(SQUARE[name], wellcond(*shape, dtype=dtype), dtype=dtype)


GENERAL = {
    'qr': lambda A, m: tuple(m.linalg.qr(A)),
    'qr_complete': lambda A, m: tuple(m.linalg.qr(A, mode='complete')),
    'qr_r': lambda A, m: m.linalg.qr(A, mode='r')[1],
    'torch.qr': lambda A, m: tuple(m.qr(A, some=False)),
    'svd': lambda A, m: tuple(m.linalg.svd(A, full_matrices=False)),
    'svd_full': lambda A, m: tuple(m.linalg.svd(A)),
    'torch.svd': lambda A, m: tuple(m.svd(A)),
    'svdvals': lambda A, m: m.linalg.svdvals(A),
    'pinv': lambda A, m: m.linalg.pinv(A),
    'pinverse': lambda A, m: m.pinverse(A),
    'matrix_rank': lambda A, m: m.linalg.matrix_rank(A),
    'norm_nuc': lambda A, m: m.linalg.matrix_norm(A, 'nuc'),
    'norm_2': lambda A, m: m.linalg.matrix_norm(A, 2),
    'norm_-2': lambda A, m: m.linalg.matrix_norm(A, -2),
    'norm_fro': lambda A, m: m.linalg.matrix_norm(A),
    'norm_1': lambda A, m: m.linalg.matrix_norm(A, 1),
    'norm_inf': lambda A, m: m.linalg.matrix_norm(A, float('inf')),
    'linalg.norm': lambda A, m: m.linalg.norm(A, dim=(-2, -1)),
    'vector_norm': lambda A, m: m.linalg.vector_norm(A, 3, dim=-1),
    'torch.norm': lambda A, m: m.norm(A),
    'torch.norm_p1': lambda A, m: A.norm(1, dim=-1),
    'vector_norm_inf': lambda A, m: m.linalg.vector_norm(A, float('inf'), dim=(-2, -1)),
    'cond_1': lambda A, m: m.linalg.cond(A[..., :3, :3], 1),
    'cond_nuc': lambda A, m: m.linalg.cond(A[..., :3, :3], 'nuc'),
    'nuclear_norm': lambda A, m: m.nuclear_norm(A) if A.dim() == 2 else A,
    'geqrf': lambda A, m: tuple(m.geqrf(A)),
    'householder': lambda A, m: m.linalg.householder_product(*m.geqrf(A)) if A.shape[-2] >= A.shape[-1] else A,
    'orgqr': lambda A, m: m.orgqr(*m.geqrf(A)) if A.shape[-2] >= A.shape[-1] else A,
    'ormqr': lambda A, m: m.ormqr(*m.geqrf(A), A.mH @ A if A.shape[-2] == A.shape[-1] else
                                  m.ones(*A.shape[:-1], 2, dtype=A.dtype)),
    'ormqr_t': lambda A, m: m.ormqr(*m.geqrf(A), m.ones(*A.shape[:-2], 2, A.shape[-2], dtype=A.dtype),
                                    left=False, transpose=True),
    'lu': lambda A, m: tuple(m.linalg.lu(A)),
    'lstsq': lambda A, m: tuple(m.linalg.lstsq(A, A[..., :2])),
    'lstsq_gelsd': lambda A, m: tuple(m.linalg.lstsq(A, A[..., :2], driver='gelsd')),
    'lstsq_gelss': lambda A, m: tuple(m.linalg.lstsq(A, A[..., :2], driver='gelss')),
    'lstsq_gels': lambda A, m: tuple(m.linalg.lstsq(A, A[..., :2], driver='gels')) if A.shape[-2] >= A.shape[-1]
    else A,
    'multi_dot': lambda A, m: m.linalg.multi_dot([A, A.mH, A]) if A.dim() == 2 else A,
    'vecdot': lambda A, m: m.linalg.vecdot(A, A.flip(-1)),
}


@pytest.mark.parametrize('dtype', CDTYPES)
@pytest.mark.parametrize('shape', [(5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize('name', list(GENERAL))
def test_general_values(name, shape, dtype):
    run(GENERAL[name], crand(*shape, dtype=dtype, seed=1), dtype=dtype)


HERMITIAN = {
    'cholesky': lambda A, m: m.linalg.cholesky(A),
    'cholesky_upper': lambda A, m: m.linalg.cholesky(A, upper=True),
    'cholesky_ex': lambda A, m: tuple(m.linalg.cholesky_ex(A)),
    'torch.cholesky': lambda A, m: m.cholesky(A),
    'cholesky_solve': lambda A, m: m.cholesky_solve(A[..., :2], m.linalg.cholesky(A)),
    'cholesky_solve_upper': lambda A, m: m.cholesky_solve(A[..., :2], m.linalg.cholesky(A, upper=True), True),
    'cholesky_inverse': lambda A, m: m.cholesky_inverse(m.linalg.cholesky(A)),
    'eigh': lambda A, m: tuple(m.linalg.eigh(A)),
    'eigh_U': lambda A, m: tuple(m.linalg.eigh(A, 'U')),
    'eigvalsh': lambda A, m: m.linalg.eigvalsh(A),
    'pinv_hermitian': lambda A, m: m.linalg.pinv(A, hermitian=True),
    'matrix_rank_hermitian': lambda A, m: m.linalg.matrix_rank(A, hermitian=True),
    'ldl_factor_herm': lambda A, m: tuple(m.linalg.ldl_factor(A, hermitian=True)),
    'ldl_factor_sym': lambda A, m: tuple(m.linalg.ldl_factor(A)),
    'ldl_solve_herm': lambda A, m: m.linalg.ldl_solve(*m.linalg.ldl_factor(A, hermitian=True), A[..., :2],
                                                      hermitian=True),
    'ldl_solve_sym': lambda A, m: m.linalg.ldl_solve(*m.linalg.ldl_factor(A), A[..., :2]),
}


@pytest.mark.parametrize('dtype', CDTYPES)
@pytest.mark.parametrize('shape', [(4, 4), (3, 4, 4)])
@pytest.mark.parametrize('name', list(HERMITIAN))
def test_hermitian_values(name, shape, dtype):
    run(HERMITIAN[name], hpd(*shape, dtype=dtype), dtype=dtype)


SOLVES = {
    'solve': lambda A, B, m: m.linalg.solve(A, B),
    'solve_left': lambda A, B, m: m.linalg.solve(A, B.mT, left=False),
    'solve_ex': lambda A, B, m: tuple(m.linalg.solve_ex(A, B)),
    'solve_noncontig': lambda A, B, m: m.linalg.solve(A.mT, B),
    'solve_vector': lambda A, B, m: m.linalg.solve(A, B[..., 0]),
    'lu_solve': lambda A, B, m: m.linalg.lu_solve(*m.linalg.lu_factor(A), B),
    'lu_solve_adjoint': lambda A, B, m: m.linalg.lu_solve(*m.linalg.lu_factor(A), B, adjoint=True),
    'lu_solve_right': lambda A, B, m: m.linalg.lu_solve(*m.linalg.lu_factor(A), B.mT, left=False),
    'lu_solve_right_adj': lambda A, B, m: m.linalg.lu_solve(*m.linalg.lu_factor(A), B.mT, left=False, adjoint=True),
    'torch.lu_solve': lambda A, B, m: m.lu_solve(B, *m.linalg.lu_factor(A)),
    'solve_triangular': lambda A, B, m: m.linalg.solve_triangular(A.triu(), B, upper=True),
    'solve_triangular_right': lambda A, B, m: m.linalg.solve_triangular(A.tril(), B.mT, upper=False, left=False),
    'solve_triangular_unit': lambda A, B, m: m.linalg.solve_triangular(A.tril(), B, upper=False, unitriangular=True),
    'triangular_solve': lambda A, B, m: tuple(m.triangular_solve(B, A.triu())),
    'triangular_solve_t': lambda A, B, m: tuple(m.triangular_solve(B, A.triu(), transpose=True)),
    'tensorsolve': lambda A, B, m: m.linalg.tensorsolve(A.reshape(*A.shape[:-1], 2, 2), B[..., 0])
    if A.dim() == 2 else B,
    'cross': lambda A, B, m: m.linalg.cross(A[..., :3], B),
}


@pytest.mark.parametrize('dtype', CDTYPES)
@pytest.mark.parametrize('shape', [(4, 4), (2, 4, 4)])
@pytest.mark.parametrize('name', list(SOLVES))
def test_solve_values(name, shape, dtype):
    run(SOLVES[name], wellcond(*shape, dtype=dtype), crand(*shape[:-1], 3, dtype=dtype, seed=2), dtype=dtype)


def test_result_dtypes():
    A = to_ember(crand(3, 3, dtype='complex64'))
    assert ember.linalg.svdvals(A).dtype == ember.float32
    assert ember.linalg.eigvalsh(A).dtype == ember.float32
    assert ember.linalg.eigh(A).eigenvectors.dtype == ember.complex64
    assert ember.linalg.slogdet(A).logabsdet.dtype == ember.float32
    assert ember.linalg.slogdet(A).sign.dtype == ember.complex64
    assert ember.linalg.matrix_norm(A, 'nuc').dtype == ember.float32
    assert ember.linalg.eig(A).eigenvalues.dtype == ember.complex64


# ---- errors ----------------------------------------------------------------------------------
def singular(dtype):
    """Batch element 1 exactly singular (its row 1 is 1j times row 0)."""
    A = wellcond(2, 3, 3, dtype=dtype)
    A[1] = torch.tensor([[1, 1j, 2], [1j, -1, 2j], [0.5, 1, 1 - 1j]])
    return A


def raises_same(fn, *inputs):
    with pytest.raises(Exception) as te:
        fn(*inputs, m=torch)
    with pytest.raises(Exception) as ee:
        fn(*[to_ember(x) for x in inputs], m=ember)
    if isinstance(te.value, torch.linalg.LinAlgError):
        assert isinstance(ee.value, ember.linalg.LinAlgError), (ee.value, te.value)
    else:
        assert type(ee.value).__name__ == type(te.value).__name__, (ee.value, te.value)
    return ee.value


@pytest.mark.parametrize('dtype', CDTYPES)
def test_singular_errors(dtype):
    A = singular(dtype)
    for fn in (lambda A, m: m.linalg.inv(A), lambda A, m: m.linalg.solve(A, A), lambda A, m: m.linalg.lu_factor(A),
               lambda A, m: m.linalg.inv_ex(A, check_errors=True), lambda A, m: m.linalg.inv(A.mT),
               lambda A, m: m.linalg.solve(A, A, left=False), lambda A, m: m.linalg.solve_ex(A, A, check_errors=True)):
        e = raises_same(fn, A)
        assert 'Batch element 1' in str(e)
    run(lambda A, m: tuple(m.linalg.inv_ex(A))[1], A)
    run(lambda A, m: tuple(m.linalg.solve_ex(A, A))[1], A)
    run(lambda A, m: tuple(m.linalg.lu_factor_ex(A))[2], A)


@pytest.mark.parametrize('dtype', CDTYPES)
def test_not_positive_definite(dtype):
    A = hpd(2, 3, 3, dtype=dtype)
    A[1] = -A[1]
    e = raises_same(lambda A, m: m.linalg.cholesky(A), A)
    assert isinstance(e, ember.linalg.LinAlgError)
    run(lambda A, m: m.linalg.cholesky_ex(A).info, A)
    with pytest.raises(ember.linalg.LinAlgError, match='Batch element 1'):
        ember.linalg.cholesky_ex(to_ember(A), check_errors=True)


def test_dtype_mismatch_and_complex32():
    A, B = crand(3, 3, dtype='complex64'), crand(3, 2, dtype='complex128')
    raises_same(lambda A, B, m: m.linalg.solve(A, B), A, B)
    raises_same(lambda A, m: m.linalg.solve(A, A.real), A)


def test_nonfinite():
    A = crand(3, 3)
    A[0, 0] = float('nan')
    raises_same(lambda A, m: m.linalg.svd(A), A)
    raises_same(lambda A, m: m.linalg.eig(A), A)


# ---- gradients -------------------------------------------------------------------------------
# Each f maps complex128 inputs to tensors whose real loss sum(|f|^2) does not depend on the
# phases of singular or eigen vectors (as PyTorch requires).
GRADS = {
    'det': (lambda A, m: m.linalg.det(A), 'square'),
    'slogdet': (lambda A, m: m.linalg.slogdet(A)[1] + m.linalg.slogdet(A)[0], 'square'),
    'logdet': (lambda A, m: m.logdet(A), 'square'),
    'inv': (lambda A, m: m.linalg.inv(A), 'square'),
    'inv_noncontig': (lambda A, m: m.linalg.inv(A.mT), 'square'),
    'solve': (lambda A, m: m.linalg.solve(A, A[..., :2] * 1j), 'square'),
    'solve_right': (lambda A, m: m.linalg.solve(A, A.mT[..., :2, :], left=False), 'square'),
    'solve_noncontig': (lambda A, m: m.linalg.solve(A.mT, A[..., 1:]), 'square'),
    'lu_factor': (lambda A, m: m.linalg.lu_factor(A)[0], 'square'),
    'lu_tall': (lambda A, m: m.linalg.lu(A)[1:], 'tall'),
    'lu_wide': (lambda A, m: m.linalg.lu(A)[1:], 'wide'),
    'lu_solve': (lambda A, m: m.linalg.lu_solve(*m.linalg.lu_factor(A), A.mT), 'square'),
    'lu_solve_adjoint': (lambda A, m: m.linalg.lu_solve(*m.linalg.lu_factor(A), A, adjoint=True), 'square'),
    'solve_triangular': (lambda A, m: m.linalg.solve_triangular(A.triu(), A * 1j, upper=True), 'square'),
    'solve_triangular_r': (lambda A, m: m.linalg.solve_triangular(A.tril(), A, upper=False, left=False), 'square'),
    'cholesky': (lambda A, m: m.linalg.cholesky(A @ A.mH + m.eye(A.shape[-1])), 'square'),
    'cholesky_upper': (lambda A, m: m.linalg.cholesky(A @ A.mH + m.eye(A.shape[-1]), upper=True), 'square'),
    'cholesky_solve': (lambda A, m: m.cholesky_solve(A, m.linalg.cholesky(A @ A.mH + m.eye(A.shape[-1]))), 'square'),
    'cholesky_inverse': (lambda A, m: m.cholesky_inverse(m.linalg.cholesky(A @ A.mH + m.eye(A.shape[-1]))),
                         'square'),
    'qr': (lambda A, m: m.linalg.qr(A), 'tall'),
    'qr_wide': (lambda A, m: m.linalg.qr(A), 'wide'),
    'svd_vals': (lambda A, m: m.linalg.svdvals(A), 'tall'),
    'svd_UVh': (lambda A, m: (lambda U, S, Vh: (U @ Vh, S))(*m.linalg.svd(A, full_matrices=False)), 'square'),
    'svd_abs': (lambda A, m: (lambda U, S, Vh: (U.abs(), Vh.abs(), S))(*m.linalg.svd(A, full_matrices=False)),
                'tall'),
    'svd_abs_wide': (lambda A, m: (lambda U, S, Vh: (U.abs(), Vh.abs()))(*m.linalg.svd(A, full_matrices=False)),
                     'wide'),
    'pinv': (lambda A, m: m.linalg.pinv(A), 'tall'),
    'pinv_hermitian': (lambda A, m: m.linalg.pinv(A @ A.mH + m.eye(A.shape[-1]), hermitian=True), 'square'),
    'lstsq': (lambda A, m: m.linalg.lstsq(A, A[..., :2].flip(-2)).solution, 'tall'),
    'eigh': (lambda A, m: (lambda L, Q: (L, Q.abs()))(*m.linalg.eigh(A + A.mH)), 'square'),
    'eigvalsh': (lambda A, m: m.linalg.eigvalsh(A + A.mH), 'square'),
    'eig': (lambda A, m: (lambda L, V: (L, V.abs()))(*m.linalg.eig(A)), 'square'),
    'eigvals': (lambda A, m: m.linalg.eigvals(A), 'square'),
    'matrix_exp': (lambda A, m: m.linalg.matrix_exp(A), 'square'),
    'matrix_power': (lambda A, m: m.linalg.matrix_power(A, -2), 'square'),
    'matrix_norm_nuc': (lambda A, m: m.linalg.matrix_norm(A, 'nuc'), 'tall'),
    'matrix_norm_2': (lambda A, m: m.linalg.matrix_norm(A, 2), 'tall'),
    'matrix_norm_fro': (lambda A, m: m.linalg.matrix_norm(A), 'tall'),
    'vector_norm': (lambda A, m: m.linalg.vector_norm(A, 3, dim=-1), 'tall'),
    'torch.norm': (lambda A, m: m.norm(A, dim=-2), 'tall'),
    'vecdot': (lambda A, m: m.linalg.vecdot(A, A.flip(-1) * 1j), 'tall'),
    'householder': (lambda A, m: m.linalg.householder_product(A, A[..., 0, :2] * 0.3), 'tall'),
    'cond': (lambda A, m: m.linalg.cond(A), 'square'),
    'tensorinv': (lambda A, m: m.linalg.tensorinv(A.reshape(-1, 4, 4)[0].reshape(2, 2, 4)), 'square4'),
    'svd_full': (lambda A, m: (lambda U, S, Vh: (U @ Vh, S))(*m.linalg.svd(A)), 'square'),
    'torch.svd': (lambda A, m: (lambda U, S, V: (U @ V.mH, S))(*m.svd(A)), 'square'),
    'qr_complete': (lambda A, m: m.linalg.qr(A, mode='complete'), 'wide'),
    'eigh_U': (lambda A, m: (lambda L, Q: (L, Q.abs()))(*m.linalg.eigh(A + A.mH, 'U')), 'square'),
    'lu_unpack': (lambda A, m: m.lu_unpack(*m.linalg.lu_factor(A))[1:], 'tall'),
    'triangular_solve': (lambda A, m: m.triangular_solve(A, A.triu(), transpose=True)[0], 'square'),
    'pinv_wide': (lambda A, m: m.linalg.pinv(A), 'wide'),
    'lstsq_wide': (lambda A, m: m.linalg.lstsq(A, A[..., :2], driver='gelsd').solution, 'wide'),
}

SHAPES = {'square': (2, 3, 3), 'tall': (2, 4, 3), 'wide': (2, 3, 4), 'square4': (4, 4)}


def _loss(out, m):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return sum((o.abs() ** 2).sum() for o in outs)


@pytest.mark.parametrize('name', list(GRADS))
def test_grad_vs_torch(name):
    fn, kind = GRADS[name]
    A = wellcond(*SHAPES[kind][:-2], SHAPES[kind][-2], SHAPES[kind][-1]) if kind in ('square', 'square4') else \
        crand(*SHAPES[kind], seed=3)
    ta = A.clone().requires_grad_(True)
    tg, = torch.autograd.grad(_loss(fn(ta, m=torch), torch), ta)
    ea = to_ember(A).requires_grad_(True)
    eg, = ember.autograd.grad(_loss(fn(ea, m=ember), ember), ea)
    same(eg, tg, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize('name', list(GRADS))
def test_gradcheck(name):
    fn, kind = GRADS[name]
    shape = SHAPES[kind][-3:] if kind != 'square4' else SHAPES[kind]
    A = wellcond(*shape) if kind in ('square', 'square4') else crand(*shape, seed=4)
    ea = to_ember(A).requires_grad_(True)

    def f(A):
        out = fn(A, m=ember)
        return tuple(out) if isinstance(out, (tuple, list)) else out
    assert ember.autograd.gradcheck(f, (ea,), eps=1e-6, atol=1e-5, rtol=1e-4)
    assert ember.autograd.gradgradcheck(f, (ea,), eps=1e-6, atol=1e-4, rtol=1e-3)


PHASE_DEPENDENT = {
    'svd': lambda A, m: m.linalg.svd(A)[0].real.sum(),
    'eigh': lambda A, m: m.linalg.eigh(A)[1].real.sum(),
    'eig': lambda A, m: m.linalg.eig(A)[1].real.sum(),
}


@pytest.mark.parametrize('name', list(PHASE_DEPENDENT))
def test_phase_dependent_loss_raises(name):
    """A loss that depends on the vectors' arbitrary phases has no gradient (PyTorch's error)."""
    A = hpd(3, 3)
    fn = PHASE_DEPENDENT[name]
    with pytest.raises(RuntimeError, match='e\\^\\{i phi\\}') as te:
        ta = A.clone().requires_grad_(True)
        fn(ta, m=torch).backward()
    with pytest.raises(RuntimeError, match='e\\^\\{i phi\\}') as ee:
        ea = to_ember(A).requires_grad_(True)
        fn(ea, m=ember).backward()
    assert str(ee.value).split(':')[0] == str(te.value).split(':')[0]


@pytest.mark.parametrize('name', ['svd', 'inv', 'det', 'eigh', 'qr', 'eig', 'cholesky'])
def test_complex32_refused(name):
    A = ember.zeros(2, 2, dtype=ember.complex32)
    with pytest.raises(RuntimeError):
        getattr(ember.linalg, name)(A)


@pytest.mark.parametrize('dtype', CDTYPES)
def test_svd_lowrank(dtype):
    """A rank-2 complex matrix is rebuilt from svd_lowrank's (U, S, V) and pca_lowrank's."""
    a, b = crand(2, 6, 2, dtype=dtype, seed=5), crand(2, 2, 5, dtype=dtype, seed=6)
    A = to_ember(a @ b)
    U, S, V = ember.svd_lowrank(A, q=3)
    rebuilt = to_torch(U @ (S.unsqueeze(-1).to(A.dtype) * V.mH))
    assert torch.allclose(rebuilt, a @ b, **tol(dtype))
    same(S[..., :2], torch.linalg.svdvals(a @ b)[..., :2], **tol(dtype))


def test_solve_op_backward():
    """The C op's own backward (ember._C._linalg_solve_ex: A^-H solved with the forward's LU of A^T,
    conjugated; under create_graph a solve with A^H), as torch.linalg.solve's gradient."""
    A, B = wellcond(2, 3, 3), crand(2, 3, 2, seed=7)
    ta, tb = A.clone().requires_grad_(True), B.clone().requires_grad_(True)
    tg = torch.autograd.grad((torch.linalg.solve(ta, tb).abs() ** 2).sum(), (ta, tb))
    ea, eb = to_ember(A).requires_grad_(True), to_ember(B).requires_grad_(True)
    eg = ember.autograd.grad((ember._C._linalg_solve_ex(ea, eb)[0].abs() ** 2).sum(), (ea, eb))
    same(eg, tg, atol=1e-8, rtol=1e-7)
    assert ember.autograd.gradcheck(lambda a, b: ember._C._linalg_solve_ex(a, b)[0], (ea, eb))
    assert ember.autograd.gradgradcheck(lambda a, b: ember._C._linalg_solve_ex(a, b)[0], (ea, eb))


@pytest.mark.parametrize('dtype', CDTYPES)
@pytest.mark.parametrize('uplo', ['L', 'U'])
def test_one_triangle_read(uplo, dtype):
    """eigh, eigvalsh and cholesky read one triangle (and the diagonal's real part) only, as
    LAPACK's heevd/potrf: the other triangle's garbage changes nothing."""
    garbage = crand(2, 4, 4, dtype=dtype, seed=9)
    A = hpd(2, 4, 4, dtype=dtype) + (garbage.triu(1) if uplo == 'L' else garbage.tril(-1))
    run(lambda A, m: tuple(m.linalg.eigh(A, uplo)), A, dtype=dtype)
    run(lambda A, m: m.linalg.eigvalsh(A, uplo), A, dtype=dtype)
    run(lambda A, m: m.linalg.cholesky(A, upper=uplo == 'U'), A, dtype=dtype)
    run(lambda A, m: m.linalg.eigh(A + 0.5j * m.eye(4), uplo).eigenvalues, A, dtype=dtype)


@pytest.mark.parametrize('create_graph', [False, True])
def test_det_grad_singular(create_graph):
    """det's gradient g conj(cofactors) at an exactly singular complex matrix (finite), also under
    create_graph (then from the SVD), as torch's."""
    for A in (singular('complex128')[1], wellcond(3, 3)):
        ta = A.clone().requires_grad_(True)
        tg, = torch.autograd.grad(torch.linalg.det(ta).real + torch.linalg.det(ta).abs() ** 2, ta,
                                  create_graph=create_graph)
        ea = to_ember(A).requires_grad_(True)
        eg, = ember.autograd.grad(ember.linalg.det(ea).real + ember.linalg.det(ea).abs() ** 2, ea,
                                  create_graph=create_graph)
        same(eg.detach(), tg.detach(), atol=1e-8, rtol=1e-7)


@pytest.mark.parametrize('dtype', ['float32', 'complex64'])
def test_matrix_exp_single_precision(dtype):
    """float32/complex64 matrix_exp of a large-norm matrix (many squarings) as accurate as the
    double result rounded: within float32's rounding of torch's float64 answer."""
    g = np.random.default_rng(11)
    a = g.uniform(-3, 3, (3, 4, 4)) + (1j * g.uniform(-3, 3, (3, 4, 4)) if dtype == 'complex64' else 0)
    A = torch.tensor(a).to(getattr(torch, dtype))
    ref = torch.linalg.matrix_exp(A.to(torch.complex128 if dtype == 'complex64' else torch.float64))
    got = to_torch(ember.linalg.matrix_exp(to_ember(A))).to(ref.dtype)
    assert torch.allclose(got, ref, rtol=3e-7, atol=3e-7 * float(ref.abs().max()))
