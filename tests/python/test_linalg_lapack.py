"""The LAPACK-backed linear algebra (include/ember/lapack.h, ember/_lapack.py, _lapack_top.py)
vs PyTorch 1.13: values, gradients (against torch, and float64 gradcheck), batched and
broadcast inputs, result types, the deprecated top-level forms, and errors."""
import warnings

import pytest
import torch

import ember
from helpers import assert_same, check, check_raises, rand, to_ember

warnings.filterwarnings('ignore', 'torch.symeig is deprecated')
warnings.filterwarnings('ignore', 'torch.cholesky is deprecated')
pytestmark = pytest.mark.filterwarnings('ignore::UserWarning')


def wellcond(*shape, dtype='float64', seed=0):
    """A random square (batched) matrix with a dominant diagonal: far from singular."""
    a = rand(*shape, dtype=dtype, seed=seed, low=-1, high=1)
    return a + 3 * torch.eye(shape[-1], dtype=a.dtype)


def spd(*shape, dtype='float64', seed=0):
    a = rand(*shape, dtype=dtype, seed=seed, low=-1, high=1)
    return a @ a.transpose(-2, -1) + torch.eye(shape[-1], dtype=a.dtype)


def sym(*shape, dtype='float64', seed=0):
    a = rand(*shape, dtype=dtype, seed=seed, low=-1, high=1)
    return a + a.transpose(-2, -1)


def gradcheck(fn, *inputs):
    """Ember's float64 finite-difference gradcheck of fn on copies of the torch inputs."""
    ein = [to_ember(x.detach().double()).requires_grad_(True) for x in inputs]
    assert ember.autograd.gradcheck(fn, ein, eps=1e-6, atol=1e-5, rtol=1e-4)


SHAPES = [(3, 3), (2, 4, 4), (2, 1, 3, 3), (1, 1)]


# ---- values and gradients against torch ------------------------------------------------------
@pytest.mark.parametrize('shape', SHAPES)
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('name', ['det', 'inv', 'matrix_exp', 'slogdet'])
def test_square_functions(name, shape, dtype):
    A = wellcond(*shape, dtype=dtype)
    tol = dict(atol=1e-4, rtol=1e-4) if dtype == 'float32' else dict(atol=1e-9, rtol=1e-8)
    check(lambda A, m: getattr(m.linalg, name)(A), A, grad=True, **tol)


@pytest.mark.parametrize('name', ['det', 'logdet', 'slogdet', 'inverse', 'matrix_exp'])
def test_top_level_and_methods(name):
    A = wellcond(2, 3, 3)
    check(lambda A, m: getattr(m, name)(A), A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: getattr(A, name)(), A, atol=1e-9, rtol=1e-8)


def test_logdet_negative_and_singular():
    A = torch.tensor([[[0., 1.], [1., 0.]], [[1., 2.], [2., 4.]], [[2., 0.], [0., 3.]]], dtype=torch.float64)
    check(lambda A, m: m.logdet(A), A)
    check(lambda A, m: m.linalg.slogdet(A), A)
    check(lambda A, m: m.linalg.det(A), A)


@pytest.mark.parametrize('sa,sb', [((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((3, 3), (2, 3, 4)), ((3, 3), (3,)),
                                   ((2, 3, 3), (2, 3)), ((1, 3, 3), (4, 3, 2))])
@pytest.mark.parametrize('left', [True, False])
def test_solve(sa, sb, left):
    A, B = wellcond(*sa), rand(*sb, dtype='float64', seed=1)
    vector = len(sb) == 1 or sb == sa[:-1]
    if not left and vector:  # a vector B is a column: X A = B does not fit
        check_raises(lambda A, B, m: m.linalg.solve(A, B, left=False), A, B)
        return
    if not left:  # X A = B: B is (..., k, n)
        B = B.transpose(-2, -1)
    check(lambda A, B, m: m.linalg.solve(A, B, left=left), A, B, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, B, m: m.linalg.solve_ex(A, B, left=left), A, B, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('upper', [True, False])
@pytest.mark.parametrize('left', [True, False])
@pytest.mark.parametrize('unit', [True, False])
def test_solve_triangular(upper, left, unit):
    A, B = wellcond(2, 3, 3), rand(2, 3, 3, dtype='float64', seed=1)
    check(lambda A, B, m: m.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit), A, B,
          grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, B, m: m.triangular_solve(B, A, upper, not left, unit), A, B, grad=True, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize('upper', [False, True])
def test_cholesky(shape, upper):
    A = spd(*shape)
    check(lambda A, m: m.linalg.cholesky(A, upper=upper), A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.cholesky_ex(A, upper=upper), A, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.cholesky(A, upper), A, atol=1e-9, rtol=1e-8)
    L = torch.linalg.cholesky(A, upper=upper)
    B = rand(*shape[:-1], 2, dtype='float64', seed=3)
    check(lambda B, L, m: m.cholesky_solve(B, L, upper), B, L, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda L, m: m.cholesky_inverse(L, upper), L, grad=True, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(4, 3), (3, 3), (2, 3, 5), (2, 5, 2)])
@pytest.mark.parametrize('mode', ['reduced', 'complete', 'r'])
def test_qr(shape, mode):
    A = rand(*shape, dtype='float64', seed=2)
    check(lambda A, m: m.linalg.qr(A, mode=mode), A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.qr(A, mode != 'complete'), A, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(4, 3), (3, 3), (2, 3, 5)])
@pytest.mark.parametrize('full', [False, True])
def test_svd(shape, full):
    A = rand(*shape, dtype='float64', seed=5)
    k = min(shape[-2:])
    # the vectors up to sign: compare gauge-invariant functions of them
    check(lambda A, m: [r if i == 1 else (r[..., :k] if i == 0 else r[..., :k, :]) ** 2
                        for i, r in enumerate(m.linalg.svd(A, full_matrices=full))], A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.svdvals(A), A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: [m.svd(A, some=not full)[i].abs()[..., :k] if i != 1 else m.svd(A)[1] for i in range(3)], A,
          atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.svd(A, compute_uv=False), A, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(3, 3), (2, 4, 4)])
@pytest.mark.parametrize('uplo', ['L', 'U'])
def test_eigh(shape, uplo):
    A = sym(*shape)
    check(lambda A, m: [r ** 2 if i else r for i, r in enumerate(m.linalg.eigh(A, UPLO=uplo))], A, grad=True,
          atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.eigvalsh(A, UPLO=uplo), A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.symeig(A, uplo == 'U', uplo == 'U').eigenvalues, A, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(3, 3), (2, 4, 4), (3, 5), (5, 3)])
def test_lu(shape):
    A = rand(*shape, dtype='float64', seed=7)
    grad = shape[-1] == shape[-2]
    check(lambda A, m: m.linalg.lu_factor(A), A, grad=grad, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.lu_factor_ex(A), A, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.lu(A), A, grad=grad, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.lu_unpack(*m.linalg.lu_factor(A)), A, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.lu(A, get_infos=True), A, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('left', [True, False])
@pytest.mark.parametrize('adjoint', [True, False])
def test_lu_solve(left, adjoint):
    A, B = wellcond(2, 3, 3), rand(2, 3, 3, dtype='float64', seed=8)
    LU, piv = torch.linalg.lu_factor(A)
    check(lambda LU, B, m: m.linalg.lu_solve(LU, piv if m is torch else to_ember(piv), B, left=left,
                                             adjoint=adjoint), LU, B, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda LU, B, m: m.lu_solve(B, LU, piv if m is torch else to_ember(piv)), LU, B, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('driver', ['gels', 'gelsy', 'gelsd', 'gelss', None])
@pytest.mark.parametrize('sa,sb', [((5, 3), (5, 2)), ((2, 5, 3), (2, 5)), ((3, 5), (3, 2)), ((4, 4), (4,)),
                                   ((1, 4, 3), (2, 4, 1))])
def test_lstsq(driver, sa, sb):
    if driver == 'gels' and sa[-2] < sa[-1]:
        pytest.skip('gels needs full rank and m >= n here')
    A, B = rand(*sa, dtype='float64', seed=9), rand(*sb, dtype='float64', seed=10)
    check(lambda A, B, m: m.linalg.lstsq(A, B, driver=driver), A, B, atol=1e-9, rtol=1e-8)
    if len(sa) != len(sb) + 1:  # torch 1.13's backward fails for a vector B
        check(lambda A, B, m: m.linalg.lstsq(A, B, driver=driver).solution, A, B, grad=True, atol=1e-8, rtol=1e-7)


@pytest.mark.parametrize('shape', [(4, 3), (3, 3), (2, 3, 5)])
def test_pinv_rank_norms(shape):
    A = rand(*shape, dtype='float64', seed=11)
    tol = dict(atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.pinv(A), A, grad=True, **tol)
    check(lambda A, m: m.pinverse(A), A, **tol)
    check(lambda A, m: m.linalg.matrix_rank(A), A)
    for ord in ('nuc', 2, -2):
        check(lambda A, m: m.linalg.matrix_norm(A, ord), A, grad=True, **tol)
        check(lambda A, m: m.linalg.norm(A, ord, dim=(-2, -1), keepdim=True), A, **tol)
    check(lambda A, m: m.linalg.cond(A), A, **tol)
    if len(shape) == 2:
        check(lambda A, m: m.nuclear_norm(A), A, grad=True, **tol)


def test_pinv_hermitian_and_rank_deficient():
    A = sym(4, 4)
    check(lambda A, m: m.linalg.pinv(A, hermitian=True), A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.matrix_rank(A, hermitian=True), A)
    low = rand(5, 2, dtype='float64', seed=1) @ rand(2, 4, dtype='float64', seed=2)
    check(lambda A, m: m.linalg.matrix_rank(A), low)
    check(lambda A, m: m.linalg.matrix_rank(A, atol=1.0, rtol=0.0), low)
    check(lambda A, m: m.linalg.pinv(A), low, atol=1e-9, rtol=1e-8)


def test_cond_other_norms_tensor_functions():
    A = wellcond(3, 3)
    for p in ('fro', 1, float('inf'), -1, -2):
        check(lambda A, m: m.linalg.cond(A, p), A, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.tensorinv(A.reshape(3, 1, 3, 1) if m is torch else A.reshape(3, 1, 3, 1), 2), A,
          atol=1e-9, rtol=1e-8)
    T, b = wellcond(6, 6).reshape(2, 3, 6), rand(2, 3, dtype='float64', seed=4)
    check(lambda T, b, m: m.linalg.tensorsolve(T, b), T, b, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.matrix_power(A, -2), A, grad=True, atol=1e-9, rtol=1e-8)
    x = rand(2, 4, dtype='float64', seed=5)
    check(lambda x, m: m.linalg.vander(x), x, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda x, m: m.linalg.vander(x, N=2), x, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(5, 3), (4, 4), (2, 4, 2)])
def test_householder_geqrf_ormqr(shape):
    A = rand(*shape, dtype='float64', seed=12)
    check(lambda A, m: m.geqrf(A), A, atol=1e-9, rtol=1e-8)
    a, tau = torch.geqrf(A)
    check(lambda a, tau, m: m.linalg.householder_product(a, tau), a, tau, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda a, tau, m: m.orgqr(a, tau), a, tau, atol=1e-9, rtol=1e-8)
    C = rand(*shape[:-2], shape[-2], 2, dtype='float64', seed=13)
    for left, trans in ((True, False), (True, True)):  # torch 1.13 has no ormqr derivative: gradcheck below
        check(lambda a, tau, C, m: m.ormqr(a, tau, C, left, trans), a, tau, C, atol=1e-9, rtol=1e-8)
    Cr = rand(*shape[:-2], 2, shape[-2], dtype='float64', seed=13)
    check(lambda a, tau, C, m: m.ormqr(a, tau, C, False, True), a, tau, Cr, atol=1e-9, rtol=1e-8)


# ---- float64 gradcheck on Ember alone ----------------------------------------------------------
GRADCHECKS = {
    'det': (lambda A: ember.linalg.det(A), lambda: [wellcond(2, 3, 3)]),
    'slogdet': (lambda A: ember.linalg.slogdet(A).logabsdet, lambda: [wellcond(3, 3)]),
    'logdet': (lambda A: ember.logdet(A), lambda: [wellcond(3, 3)]),
    'inv': (lambda A: ember.linalg.inv(A), lambda: [wellcond(2, 3, 3)]),
    'solve': (lambda A, B: ember.linalg.solve(A, B), lambda: [wellcond(2, 3, 3), rand(3, 2, dtype='float64')]),
    'cholesky': (lambda A: ember.linalg.cholesky(A + A.mT), lambda: [spd(3, 3)]),
    # PyTorch differentiates the factor as a dense matrix: only its triangle is the function's input
    'cholesky_solve': (lambda B, L: ember.cholesky_solve(B, L.tril()), lambda: [rand(3, 2, dtype='float64'),
                                                                         torch.linalg.cholesky(spd(3, 3))]),
    'cholesky_inverse': (lambda L: ember.cholesky_inverse(L.tril()), lambda: [torch.linalg.cholesky(spd(3, 3))]),
    'qr_tall': (lambda A: ember.linalg.qr(A), lambda: [rand(4, 3, dtype='float64', seed=1)]),
    'qr_wide': (lambda A: ember.linalg.qr(A), lambda: [rand(2, 4, dtype='float64', seed=1)]),
    'svd': (lambda A: [r.abs() for r in ember.linalg.svd(A, full_matrices=False)],
            lambda: [rand(4, 3, dtype='float64')]),
    'svd_wide': (lambda A: [r.abs() for r in ember.linalg.svd(A, full_matrices=False)],
                 lambda: [rand(2, 4, dtype='float64')]),
    'svdvals': (lambda A: ember.linalg.svdvals(A), lambda: [rand(3, 4, dtype='float64')]),
    'eigh': (lambda A: [r.abs() for r in ember.linalg.eigh(A + A.mT)], lambda: [rand(3, 3, dtype='float64')]),
    'eigvalsh': (lambda A: ember.linalg.eigvalsh(A + A.mT), lambda: [rand(3, 3, dtype='float64')]),
    'lu_factor': (lambda A: ember.linalg.lu_factor(A).LU, lambda: [rand(2, 3, 3, dtype='float64')]),
    'lstsq': (lambda A, B: ember.linalg.lstsq(A, B).solution, lambda: [rand(5, 3, dtype='float64'),
                                                                       rand(5, 2, dtype='float64')]),
    'pinv': (lambda A: ember.linalg.pinv(A), lambda: [rand(4, 3, dtype='float64')]),
    'matrix_exp': (lambda A: ember.linalg.matrix_exp(A), lambda: [rand(2, 3, 3, dtype='float64')]),
    'solve_triangular': (lambda A, B: ember.linalg.solve_triangular(A, B, upper=True),
                         lambda: [wellcond(3, 3), rand(3, 2, dtype='float64')]),
    'triangular_solve': (lambda B, A: ember.triangular_solve(B, A, False, True).solution,
                         lambda: [rand(3, 2, dtype='float64'), wellcond(3, 3)]),
    'ormqr': (lambda A, tau, C: ember.ormqr(A, tau, C, True, True),
              lambda: [*torch.geqrf(rand(4, 3, dtype='float64')), rand(4, 2, dtype='float64')]),
    'householder_product': (lambda A, tau: ember.linalg.householder_product(A, tau),
                            lambda: list(torch.geqrf(rand(4, 3, dtype='float64')))),
}


@pytest.mark.parametrize('name', sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, make = GRADCHECKS[name]
    gradcheck(fn, *make())


def test_double_backward_of_solve():
    A = to_ember(wellcond(3, 3)).requires_grad_(True)
    B = to_ember(rand(3, 2, dtype='float64')).requires_grad_(True)
    assert ember.autograd.gradgradcheck(lambda A, B: ember.linalg.solve(A, B), [A, B])


# ---- result types, errors --------------------------------------------------------------------
def test_result_fields():
    A = to_ember(spd(3, 3))
    assert ember.linalg.slogdet(A)._fields == ('sign', 'logabsdet')
    assert ember.linalg.eigh(A)._fields == ('eigenvalues', 'eigenvectors')
    assert ember.linalg.svd(A)._fields == ('U', 'S', 'Vh')
    assert ember.svd(A)._fields == ('U', 'S', 'V')
    assert ember.linalg.lstsq(A, A)._fields == ('solution', 'residuals', 'rank', 'singular_values')
    assert ember.linalg.lu(A)._fields == ('P', 'L', 'U')
    assert ember.linalg.inv_ex(A)._fields == ('inverse', 'info')
    assert ember.triangular_solve(A, A)._fields == ('solution', 'cloned_coefficient')
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


def singular():
    S = torch.zeros(2, 3, 3, dtype=torch.float64)
    S[0] = torch.eye(3)
    S[1, 0, 0] = 1
    return S


@pytest.mark.parametrize('fn,make', [
    (lambda A, m: m.linalg.inv(A), singular),
    (lambda A, m: m.linalg.inv(A[1]), singular),
    (lambda A, m: m.linalg.solve(A, A), singular),
    (lambda A, m: m.linalg.cholesky(A), lambda: torch.tensor([[1., 2.], [2., 1.]], dtype=torch.float64)),
    (lambda A, m: m.linalg.cholesky_ex(A, check_errors=True), singular),
    (lambda A, m: m.linalg.inv_ex(A, check_errors=True), singular),
    (lambda A, m: m.linalg.svd(A), lambda: torch.full((2, 2), float('nan'))),
])
def test_linalg_errors(fn, make):
    """LinAlgError with torch's message, batch element included."""
    with pytest.raises(torch.linalg.LinAlgError) as t:
        fn(make(), torch)
    with pytest.raises(ember.linalg.LinAlgError) as e:
        fn(to_ember(make()), ember)
    assert str(e.value) == str(t.value)


def test_singular_info_without_error():
    check(lambda A, m: m.linalg.inv_ex(A).info, singular())
    check(lambda A, m: m.linalg.lu_factor_ex(A).info, singular())
    check(lambda A, m: m.linalg.cholesky_ex(A).info, singular())
    check_raises(lambda A, m: m.linalg.lu_factor(A), singular())


@pytest.mark.parametrize('fn,args', [
    (lambda A, m: m.linalg.inv(A), [rand(2, 3)]),
    (lambda A, m: m.linalg.det(A), [rand(3)]),
    (lambda A, m: m.linalg.det(A), [rand(2, 2, dtype='int64')]),
    (lambda A, m: m.linalg.cholesky(A), [rand(2, 3)]),
    (lambda A, m: m.linalg.eigh(A), [rand(2, 3)]),
    (lambda A, m: m.linalg.eigh(A, UPLO='X'), [rand(2, 2)]),
    (lambda A, m: m.linalg.qr(A, mode='x'), [rand(2, 2)]),
    (lambda A, m: m.linalg.svd(A), [rand(4)]),
    (lambda A, m: m.linalg.matrix_exp(A), [rand(2, 3)]),
    (lambda A, B, m: m.linalg.solve(A, B), [rand(2, 2), rand(3)]),
    (lambda A, B, m: m.linalg.solve(A, B), [rand(2, 2), rand(2, dtype='float64')]),
    (lambda A, B, m: m.linalg.solve(A, B), [rand(2, 3, 3), rand(3, 3, 1)]),
    (lambda A, B, m: m.linalg.lstsq(A, B, driver='foo'), [rand(3, 2), rand(3, 1)]),
    (lambda A, B, m: m.linalg.lstsq(A, B), [rand(4, 4), rand(2, 4, 1)]),
    (lambda A, B, m: m.linalg.lstsq(A, B), [rand(2, 4, 4), rand(4, 1)]),
    (lambda A, B, m: m.linalg.lstsq(A, B), [rand(2, 4, 4), rand(4)]),
    (lambda A, B, m: m.linalg.solve_triangular(A, B, upper=True), [rand(2, 3), rand(3, 1)]),
    (lambda A, m: m.cholesky_inverse(A), [rand(2, 3)]),
    (lambda A, m: m.solve(A, A), [rand(2, 2)]),
    (lambda A, m: m.lstsq(A, A), [rand(2, 2)]),
    (lambda A, m: m.eig(A), [rand(2, 2)]),
    (lambda A, m: m.matrix_rank(A), [rand(2, 2)]),
    (lambda A, m: A.solve(A), [rand(2, 2)]),
])
def test_errors_match_torch(fn, args):
    check_raises(fn, *args)


def test_qr_r_mode_and_complete_tall_not_differentiable():
    A = rand(4, 3, dtype='float64')
    check(lambda A, m: m.linalg.qr(A, mode='r').R, A, grad=True)
    check(lambda A, m: m.linalg.qr(A, mode='complete'), A, grad=True, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(5, 5), (2, 4, 4), (1, 1), (0, 0), (3, 0, 0)])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_eig(shape, dtype):
    """geev as torch calls it: the same complex eigenvalues and eigenvectors (normalization, signs);
    gradients: test_linalg_grads.py."""
    A = rand(*shape, dtype=dtype, seed=3, low=-1, high=1)
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == 'float32' else dict(atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.eig(A), A, **tol)
    check(lambda A, m: m.linalg.eigvals(A), A, **tol)
    assert ember.linalg.eig(ember.eye(2, requires_grad=True))[0].requires_grad
    check_raises(lambda A, m: m.linalg.eig(A), torch.tensor([[1., float('nan')], [0., 1.]]))
    check_raises(lambda A, m: m.linalg.eigvals(A), rand(2, 3))


def test_empty_and_noncontiguous():
    check(lambda A, m: m.linalg.det(A), rand(0, 3, 3, dtype='float64'))
    check(lambda A, m: m.linalg.inv(A), rand(2, 0, 0, dtype='float64'))
    check(lambda A, m: m.linalg.svdvals(A), rand(3, 0, dtype='float64'))
    A = wellcond(4, 4)
    check(lambda A, m: m.linalg.inv(A.mT[1:, 1:]), A, grad=True, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.eigvalsh(A.mT[::2, ::2]), A, atol=1e-9, rtol=1e-8)


@pytest.mark.parametrize('shape', [(8, 5), (5, 8), (2, 7, 6)])
def test_svd_lowrank_pca_lowrank(shape):
    """Randomized: exact for a matrix of rank <= q; the same singular values as torch's."""
    low = rand(*shape[:-1], 3, dtype='float64', seed=1) @ rand(*shape[:-2], 3, shape[-1], dtype='float64', seed=2)
    e = to_ember(low)
    U, S, V = ember.svd_lowrank(e, q=4)
    assert_same(U @ ember.diag_embed(S) @ V.mT, low, atol=1e-9, rtol=1e-8)
    assert_same(S[..., :3], torch.linalg.svdvals(low)[..., :3], atol=1e-9, rtol=1e-8)
    U, S, V = ember.pca_lowrank(e, q=3)
    centered = low - low.mean(-2, keepdim=True)
    assert_same(S, torch.linalg.svdvals(centered)[..., :3], atol=1e-9, rtol=1e-8)
    with pytest.raises(ValueError):
        ember.pca_lowrank(e, q=99)


def test_out_arguments():
    A = wellcond(3, 3)
    check(lambda A, m: m.linalg.inv(A, out=m.empty(0, dtype=m.float64)), A, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.slogdet(A, out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.float64))), A,
          atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.eigh(A + A.mT, out=(m.empty(3, dtype=m.float64), m.empty(3, 3, dtype=m.float64)))[0],
          A, atol=1e-9, rtol=1e-8)
    check_raises(lambda A, m: m.linalg.inv(A, out=3), A)


@pytest.mark.parametrize('shape', [(4, 4), (2, 3, 3)])
def test_ldl(shape):
    A = sym(*shape)
    check(lambda A, m: m.linalg.ldl_factor(A), A, atol=1e-9, rtol=1e-8)
    check(lambda A, m: m.linalg.ldl_factor_ex(A), A, atol=1e-9, rtol=1e-8)
    LD, piv = torch.linalg.ldl_factor(A)
    B = rand(*shape[:-1], 2, dtype='float64', seed=3)
    check(lambda LD, B, m: m.linalg.ldl_solve(LD, piv if m is torch else to_ember(piv), B), LD, B,
          atol=1e-9, rtol=1e-8)
    check_raises(lambda A, m: m.linalg.ldl_factor(A), rand(2, 3, dtype='float64'))


@pytest.mark.parametrize('name', ['inv', 'det', 'cholesky', 'svd', 'eigh', 'qr'])
def test_half_precision_refused(name):
    check_raises(lambda A, m: getattr(m.linalg, name)(A), torch.eye(2, dtype=torch.float16))
