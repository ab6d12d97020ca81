"""ember.linalg against PyTorch 1.13 on the cases its op database replays: results of empty or
trivial inputs that keep the graph, batched tolerances, the sign conventions of the SVD and
eigh (the LAPACK calls torch makes), and gradients (against torch and float64 gradcheck)."""
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check, rand, to_ember

warnings.filterwarnings('ignore', 'torch.symeig is deprecated')
warnings.filterwarnings('ignore', 'torch.cholesky is deprecated')
pytestmark = pytest.mark.filterwarnings('ignore::UserWarning')
F64 = dict(atol=1e-9, rtol=1e-8)


def requires_grad_result(fn, *inputs):
    """fn's result on ember copies of inputs (requiring grad) requires grad, as torch's does."""
    ein = [to_ember(x).requires_grad_(True) if isinstance(x, torch.Tensor) and x.is_floating_point() else
           to_ember(x) if isinstance(x, torch.Tensor) else x for x in inputs]
    tin = [x.clone().requires_grad_(True) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
           for x in inputs]
    assert fn(*tin, m=torch).requires_grad
    assert fn(*ein, m=ember).requires_grad


@pytest.mark.parametrize('case', [
    (lambda A, m: m.linalg.inv(A), (0, 0)),
    (lambda A, m: m.linalg.inv_ex(A).inverse, (2, 0, 0)),
    (lambda A, m: m.linalg.pinv(A), (0, 0)),
    (lambda A, m: m.linalg.pinv(A, hermitian=True), (2, 0, 0)),
    (lambda A, m: m.pinverse(A), (0, 3)),
    (lambda A, m: m.cholesky_inverse(A), (0, 0)),
    (lambda A, m: m.linalg.matrix_power(A, 0), (2, 2)),
    (lambda A, m: m.linalg.matrix_power(A, 0), (0, 2, 2)),
])
def test_empty_or_trivial_results_keep_the_graph(case):
    fn, shape = case
    A = rand(*shape, dtype='float64', seed=1)
    requires_grad_result(fn, A)
    check(fn, A, grad=True, **F64)


def test_lu_solve_empty_right_hand_side_keeps_the_graph():
    A = rand(3, 3, dtype='float64', seed=2) + 3 * torch.eye(3, dtype=torch.float64)
    LU, piv = torch.linalg.lu_factor(A)
    for B, left, adjoint in [(torch.zeros(3, 0, dtype=torch.float64), True, True),
                             (torch.zeros(0, 3, dtype=torch.float64), False, False)]:
        fn = lambda LU, B, m: m.linalg.lu_solve(LU, piv if m is torch else to_ember(piv), B, left=left,  # noqa
                                                adjoint=adjoint)
        requires_grad_result(fn, LU, B)


def test_householder_product_without_reflectors():
    for shape in [(0, 0), (5, 5)]:
        A = rand(*shape, dtype='float64', seed=3)
        tau = torch.zeros(0, dtype=torch.float64)
        requires_grad_result(lambda A, tau, m: m.linalg.householder_product(A, tau), A, tau)


@pytest.mark.parametrize('hermitian', [False, True])
def test_matrix_rank_and_pinv_with_tolerance_per_matrix(hermitian):
    A = rand(2, 5, 5, dtype='float64', seed=4)
    A = A + A.mT
    rtol = torch.tensor([0.5, 0.05], dtype=torch.float64)
    check(lambda A, m: m.linalg.matrix_rank(A, rtol=rtol if m is torch else to_ember(rtol), hermitian=hermitian), A)
    check(lambda A, m: m.linalg.matrix_rank(A, atol=rtol if m is torch else to_ember(rtol), hermitian=hermitian),
          A)
    check(lambda A, m: m.linalg.pinv(A, rtol=rtol if m is torch else to_ember(rtol), hermitian=hermitian), A, **F64)
    check(lambda A, m: m.linalg.matrix_rank(A, hermitian=hermitian), rand(0, 5, 5, dtype='float64'))


def test_vander_of_a_scalar():
    x = torch.tensor(2.0, dtype=torch.float64)
    check(lambda x, m: m.linalg.vander(x, N=3), x, grad=True, **F64)
    for args in [(x,), (rand(3, dtype='float64'), 1)]:
        with pytest.raises(RuntimeError, match='N must be greater than 1'):
            ember.linalg.vander(to_ember(args[0]), N=args[1] if len(args) > 1 else None)


@pytest.mark.parametrize('shape', [(5, 5), (3, 5), (5, 3), (2, 4, 3), (3, 1)])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_svd_vectors_have_torchs_signs(shape, dtype):
    """gesdd on the column-major matrix, as torch: the singular vectors themselves match."""
    A = rand(*shape, dtype=dtype, seed=5)
    tol = dict(atol=1e-4, rtol=1e-4) if dtype == 'float32' else F64
    for full in (True, False):
        check(lambda A, m: m.linalg.svd(A, full_matrices=full), A, **tol)
        check(lambda A, m: m.svd(A, some=not full), A, **tol)


@pytest.mark.parametrize('shape', [(5, 5), (2, 3, 3)])
@pytest.mark.parametrize('uplo', ['L', 'U'])
def test_eigh_vectors_have_torchs_signs(shape, uplo):
    A = rand(*shape, dtype='float64', seed=6)  # not symmetric: one triangle is read
    check(lambda A, m: m.linalg.eigh(A, UPLO=uplo), A, **F64)
    check(lambda A, m: m.symeig(A, True, uplo == 'U'), A, **F64)


@pytest.mark.parametrize('shape', [(0, 3), (3, 0), (0, 3, 5), (2, 0, 4)])
def test_svd_of_empty_matrices(shape):
    """U and Vh are identities where LAPACK is not called (PyTorch's); gradients of a batch of none."""
    A = rand(*shape, dtype='float64')
    check(lambda A, m: m.linalg.svd(A), A, grad=True, **F64)
    check(lambda A, m: m.linalg.svd(A, full_matrices=False), A, grad=True, **F64)


def test_pointwise_on_an_empty_permuted_view():
    x = ember.zeros(0, 5, 5).narrow(-2, 0, 3).mT
    assert (-x).shape == (0, 5, 3) and (x * 2).shape == (0, 5, 3)


@pytest.mark.parametrize('hermitian', [False, True])
@pytest.mark.parametrize('shape', [(4, 4), (3, 5), (5, 3), (2, 4, 4)])
def test_pinv_gradient_is_the_pseudo_inverses(shape, hermitian):
    """Not the SVD's (or eigh's): PyTorch differentiates pinv as the pseudo-inverse, unsymmetrized
    even for hermitian=True, finite at rank-deficient inputs."""
    if hermitian and shape[-1] != shape[-2]:
        return
    A = rand(*shape, dtype='float64', seed=7)
    check(lambda A, m: m.linalg.pinv(A, hermitian=hermitian), A, grad=True, **F64)
    low = rand(*shape[:-1], 2, dtype='float64', seed=8) @ rand(*shape[:-2], 2, shape[-1], dtype='float64', seed=9)
    check(lambda A, m: m.linalg.pinv(A, hermitian=hermitian), low @ low.mT if hermitian else low, grad=True, **F64)
    gradcheck_both = (lambda A: ember.linalg.pinv(A + A.mT, hermitian=True)) if hermitian else ember.linalg.pinv
    x = to_ember(A).requires_grad_(True)
    assert ember.autograd.gradcheck(gradcheck_both, (x,))
    assert ember.autograd.gradgradcheck(gradcheck_both, (x,))


@pytest.mark.parametrize('sa,sb', [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 4, 4), (2, 4)), ((4, 3), (4,))])
@pytest.mark.parametrize('driver', ['gelsy', 'gelsd', 'gels'])
def test_lstsq_gradient(sa, sb, driver):
    if driver == 'gels' and sa[-2] < sa[-1]:
        return
    A, B = rand(*sa, dtype='float64', seed=10), rand(*sb, dtype='float64', seed=11)
    vector = len(sb) == len(sa) - 1  # (torch 1.13's backward raises IndexError there: gradcheck only)
    check(lambda A, B, m: m.linalg.lstsq(A, B, driver=driver).solution, A, B, grad=not vector, **F64)
    xs = (to_ember(A).requires_grad_(True), to_ember(B).requires_grad_(True))
    assert ember.autograd.gradcheck(lambda A, B: ember.linalg.lstsq(A, B, driver=driver).solution, xs)
    assert ember.autograd.gradgradcheck(lambda A, B: ember.linalg.lstsq(A, B, driver=driver).solution, xs)


@pytest.mark.parametrize('shape', [(3, 5), (5, 3), (2, 4, 6), (2, 6, 4), (4, 4)])
def test_lu_gradient_of_non_square_matrices(shape):
    A = rand(*shape, dtype='float64', seed=12)
    check(lambda A, m: m.linalg.lu_factor(A), A, grad=True, **F64)
    check(lambda A, m: m.linalg.lu(A), A, grad=True, **F64)
    x = to_ember(A).requires_grad_(True)
    assert ember.autograd.gradcheck(lambda A: ember.linalg.lu(A)[1:], (x,))
    assert ember.autograd.gradgradcheck(lambda A: ember.linalg.lu(A)[1:], (x,))


def singular_matrices():
    """A rank-deficient batch (exactly singular in floating point: a repeated row, a zero column)
    and a nearly singular one."""
    A = rand(3, 4, 4, dtype='float64', seed=13)
    A[0, 3] = A[0, 1]
    A[1, :, 2] = 0
    A[2] = rand(4, 3, dtype='float64', seed=14) @ rand(3, 4, dtype='float64', seed=15)
    return A


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_det_gradient_at_singular_matrices(dtype):
    """PyTorch's: det from the LU of A^T, gradient g det A^-T with the LU's exact zeros made eps."""
    A = singular_matrices().to(getattr(torch, dtype))
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == 'float32' else F64
    check(lambda A, m: m.linalg.det(A), A, grad=True, **tol)
    check(lambda A, m: m.linalg.det(A.mT), A, grad=True, **tol)  # not contiguous: the LU of A itself


def test_det_second_derivatives():
    """Under create_graph: the solve for invertible inputs, the SVD's cofactors near singular ones."""
    for A in (rand(2, 4, 4, dtype='float64', seed=16), singular_matrices()[1:]):
        x = to_ember(A).requires_grad_(True)
        assert ember.autograd.gradgradcheck(ember.linalg.det, (x,))
        g, = ember.autograd.grad(ember.linalg.det(x).sum(), x, create_graph=True)
        t = A.clone().requires_grad_(True)
        tg, = torch.autograd.grad(torch.linalg.det(t).sum(), t, create_graph=True)
        assert_same(g, tg, 1e-9, 1e-8)


@pytest.mark.parametrize('A', [torch.zeros(4, 4, dtype=torch.float64), torch.eye(3, dtype=torch.float64),
                               torch.zeros(2, 3, 5, dtype=torch.float64)])
def test_values_alone_differentiate_at_repeated_values(A):
    """Singular values or eigenvalues without their vectors: U diag(gS) V^T (Q diag(gL) Q^T),
    finite where the values repeat (PyTorch's subgradients at zero)."""
    check(lambda A, m: m.linalg.svdvals(A), A, grad=True, **F64)
    check(lambda A, m: m.linalg.matrix_norm(A, 'nuc'), A, grad=True, **F64)
    if A.shape[-1] == A.shape[-2]:
        check(lambda A, m: m.linalg.eigvalsh(A), A, grad=True, **F64)
        check(lambda A, m: m.linalg.norm(A, 2), A, grad=True, **F64)


def test_norm_nuc():
    A = rand(3, 4, 5, dtype='float64', seed=17)
    check(lambda A, m: m.norm(A[0], 'nuc'), A, grad=True, **F64)
    check(lambda A, m: m.norm(A, 'nuc', dim=[0, 2], keepdim=True), A, grad=True, **F64)
    check(lambda A, m: A.norm('nuc', (1, 2)), A, grad=True, **F64)
    check(lambda A, m: m.norm(A, p=3, dim=1), A, grad=True, **F64)  # the other p still reach C
    for args, kw, exc in [((A, 'nuc'), {}, RuntimeError), ((A, 'nuc'), dict(dim=[0]), RuntimeError),
                          ((A[0], 'nuc'), dict(dtype=torch.float32), ValueError)]:
        with pytest.raises(exc):
            torch.norm(*args, **kw)
        with pytest.raises(exc):
            ember.norm(to_ember(args[0]), *args[1:], **{k: ember.float32 if k == 'dtype' else v for k, v in kw.items()})


@pytest.mark.parametrize('left', [True, False])
@pytest.mark.parametrize('contiguous', [True, False])
def test_solve_and_inv_are_torchs(left, contiguous):
    """The LU of A^T for a contiguous A (PyTorch's rounding), the gradients of PyTorch's formulas
    (gB = A^-T gX, gA = -gB X^T; inv: -X^T g X^T), twice differentiable."""
    A = rand(2, 4, 4, dtype='float32', seed=18)
    B = rand(2, 4, 3, dtype='float32', seed=19)
    B = B if left else B.mT
    prep = (lambda A: A) if contiguous else (lambda A: A.mT.contiguous().mT)
    check(lambda A, B, m: m.linalg.solve(prep(A), B, left=left), A, B, grad=True, atol=1e-5, rtol=1e-5)
    check(lambda A, m: m.linalg.inv(prep(A)), A, grad=True, atol=1e-5, rtol=1e-5)
    xs = (to_ember(A.double()).requires_grad_(True), to_ember(B.double()).requires_grad_(True))
    assert ember.autograd.gradgradcheck(lambda A, B: ember.linalg.solve(prep(A), B, left=left), xs)
    assert ember.autograd.gradgradcheck(lambda A: ember.linalg.inv(prep(A)), xs[:1])
    if left:  # a vector B
        check(lambda A, B, m: m.linalg.solve(A, B[..., 0]), A, B, grad=True, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize('m,n,k', [(5, 5, 5), (5, 2, 2), (2, 5, 2), (5, 3, 1), (4, 4, 0)])
@pytest.mark.parametrize('left', [True, False])
@pytest.mark.parametrize('transpose', [True, False])
def test_ormqr_is_lapacks(m, n, k, left, transpose):
    """LAPACK's ormqr as torch calls it (input's first k columns, any n >= k); differentiable here."""
    A = rand(2, m, n, dtype='float32', seed=20, low=-3, high=3)
    tau = rand(2, k, dtype='float32', seed=21, low=-2, high=2)
    C = rand(2, m, 3, dtype='float32', seed=22) if left else rand(2, 3, m, dtype='float32', seed=22)
    check(lambda A, tau, C, m: m.ormqr(A, tau, C, left, transpose), A, tau, C, atol=1e-5, rtol=1e-5)
    xs = tuple(to_ember(x.double()).requires_grad_(True) for x in (A, tau, C))
    assert ember.autograd.gradcheck(lambda A, tau, C: ember.ormqr(A, tau, C, left, transpose), xs)


def test_ormqr_errors():
    for args in [(torch.randn(()), torch.randn(()), torch.randn(())),
                 (torch.ones(5, 0), torch.ones(5), torch.ones(5, 5)),
                 (torch.ones(5, 5), torch.ones(5), torch.ones(4, 5)),
                 (torch.ones(2, 5, 5), torch.ones(3, 5), torch.ones(2, 5, 5))]:
        with pytest.raises(RuntimeError):
            torch.ormqr(*args)
        with pytest.raises(RuntimeError):
            ember.ormqr(*[to_ember(a) for a in args])


@pytest.mark.parametrize('adjoint', [False, True])
@pytest.mark.parametrize('left', [True, False])
def test_lu_solve_is_getrs(adjoint, left):
    """Without gradients: LAPACK's getrs (torch's rounding), batches broadcast."""
    A = rand(2, 1, 4, 4, dtype='float32', seed=23)
    LU, piv = torch.linalg.lu_factor(A)
    B = rand(3, 4, 2, dtype='float32', seed=24)
    B = B if left else B.mT
    check(lambda LU, B, m: m.linalg.lu_solve(LU, piv if m is torch else to_ember(piv), B, left=left, adjoint=adjoint),
          LU, B, atol=1e-6, rtol=1e-6)
    with pytest.raises(RuntimeError, match='out of range'):
        ember._C._linalg_lu_solve(to_ember(LU[0, 0]), ember.tensor([1, 9, 3, 4], dtype=ember.int32),
                                  ember.zeros(4, 2), False)


def test_lowrank_with_gradients():
    """svd_lowrank with M and pca_lowrank on inputs that require grad (M broadcast, centered input);
    the singular values of a rank-3 input are exact, and their gradient is the SVD's."""
    low = rand(2, 7, 3, dtype='float64', seed=25) @ rand(2, 3, 6, dtype='float64', seed=26)
    x = to_ember(low).requires_grad_(True)
    U, S, V = ember.pca_lowrank(x, q=3)
    centered = low - low.mean(-2, keepdim=True)
    assert_same(S, torch.linalg.svdvals(centered)[..., :3], 1e-9, 1e-8)
    g, = ember.autograd.grad(S.sum(), x)
    t = low.clone().requires_grad_(True)
    tg, = torch.autograd.grad(torch.linalg.svdvals(t - t.mean(-2, keepdim=True))[..., :3].sum(), t)
    assert_same(g, tg, 1e-8, 1e-7)
    M = to_ember(rand(2, 1, 6, dtype='float64', seed=27)).requires_grad_(True)
    U, S, V = ember.svd_lowrank(x, q=4, M=M)
    S.sum().backward()
    assert M.grad is not None and x.grad is not None


# ---- eig / eigvals: PyTorch's gradient of the general eigendecomposition -------------------

def _eig_losses(lib, A, gl, gv):
    """A loss of the eigenvalues and of |V| (V's phase is arbitrary, so no loss may use it)."""
    L, V = lib.linalg.eig(A)
    return (L * gl).real.sum() + (V.abs() * gv).sum(), lib.linalg.eigvals(A)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5)])
def test_eig_gradients_match_torch(shape):
    rng = np.random.RandomState(sum(shape))
    a = rng.randn(*shape)
    gl = rng.randn(*shape[:-1]) + 1j * rng.randn(*shape[:-1])
    gv = rng.randn(*shape)
    c = rng.randn(*shape[:-1]) + 1j * rng.randn(*shape[:-1])
    grads = []
    for lib in (torch, ember):
        A = lib.from_numpy(a.copy()).requires_grad_()
        loss, L = _eig_losses(lib, A, lib.from_numpy(gl), lib.from_numpy(gv))
        g1, = lib.autograd.grad(loss, A)
        g2, = lib.autograd.grad(L, A, lib.from_numpy(c))  # a complex cotangent straight into eigvals
        grads.append((g1.detach().numpy(), g2.detach().numpy()))
    for t, e in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-10)


def test_eig_gradcheck():
    A = ember.from_numpy(np.random.RandomState(3).randn(2, 4, 4)).requires_grad_()
    assert ember.autograd.gradcheck(lambda x: (ember.linalg.eig(x)[0], ember.linalg.eig(x)[1].abs()), (A,))
    assert ember.autograd.gradcheck(ember.linalg.eigvals, (A,))


def test_mH_conjugates_complex():
    a = np.arange(6).reshape(2, 3) + 1j * np.arange(6).reshape(2, 3)
    for f in (lambda t: t.mH, lambda t: t.adjoint()):
        np.testing.assert_array_equal(f(ember.from_numpy(a)).resolve_conj().numpy(),  # (a conj view, as torch's)
                                      f(torch.from_numpy(a)).resolve_conj().numpy())
