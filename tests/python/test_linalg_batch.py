"""The fast paths of the LAPACK-backed linear algebra vs PyTorch 1.13: a batch split over the
thread pool (Note [LAPACK threads]) equal to the serial one, LinAlgError naming the first
failing batch element on any thread count, PyTorch's column-major result strides, linalg.solve
(one getrf + getrs op with its own backward), lu_solve without gradients (getrs), and det /
slogdet from A^T's LU."""
import pytest
import torch

import ember
from helpers import assert_same, check_raises, rand, to_ember, to_torch


@pytest.fixture
def threads():
    saved = ember.get_num_threads()
    yield
    ember.set_num_threads(saved)


def wellcond(*shape, dtype='float64', seed=0):
    return rand(*shape, dtype=dtype, seed=seed, low=-1, high=1) + 3 * torch.eye(shape[-1], dtype=getattr(torch, dtype))


def spd(*shape, dtype='float64', seed=0):
    a = rand(*shape, dtype=dtype, seed=seed, low=-1, high=1)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=a.dtype)


LA = {
    'solve': lambda m, A, S: m.linalg.solve(A, S[..., :3]),
    'lu_factor': lambda m, A, S: m.linalg.lu_factor(A)[0],
    'det': lambda m, A, S: m.linalg.det(A),
    'inv': lambda m, A, S: m.linalg.inv(A),
    'cholesky': lambda m, A, S: m.linalg.cholesky(S),
    'qr': lambda m, A, S: m.linalg.qr(A)[1].abs(),  # R up to the signs of its rows
    'svdvals': lambda m, A, S: m.linalg.svdvals(A),
    'svd': lambda m, A, S: m.linalg.svd(A, full_matrices=False)[1],
    'eigvalsh': lambda m, A, S: m.linalg.eigh(S)[0],
}


@pytest.mark.parametrize('name', list(LA))
def test_batch_on_threads_equals_serial_and_torch(name, threads):
    # 64 matrices of 40 x 40: above the split for every op
    A, S = wellcond(64, 40, 40, seed=1), spd(64, 40, 40, seed=2)
    eA, eS = to_ember(A), to_ember(S)
    ember.set_num_threads(1)
    serial = LA[name](ember, eA, eS)
    ember.set_num_threads(3)
    split = LA[name](ember, eA, eS)
    assert torch.equal(to_torch(split), to_torch(serial))
    assert_same(split, LA[name](torch, A, S), atol=1e-8, rtol=1e-8)


def _raises_like_torch(fn, A):
    with pytest.raises(torch.linalg.LinAlgError) as t:
        fn(torch, A)
    with pytest.raises(ember.linalg.LinAlgError) as e:
        fn(ember, to_ember(A))
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize('nthreads', [1, 2, 3])
def test_errors_name_the_first_failing_batch_element(nthreads, threads):
    ember.set_num_threads(nthreads)
    S = spd(64, 40, 40)
    S[37] = -S[37]  # not positive-definite (leading minor 1)
    S[50, 3:, 3:] = -S[50, 3:, 3:]  # a later one (leading minor 4)
    _raises_like_torch(lambda m, X: m.linalg.cholesky(X), S)
    A = wellcond(64, 40, 40)
    A[37, :, 5] = 0  # singular
    A[60, 2] = 0
    _raises_like_torch(lambda m, X: m.linalg.solve(X, X[..., :1]), A)
    _raises_like_torch(lambda m, X: m.linalg.inv(X), A)
    info_t = torch.linalg.solve_ex(A, A[..., :1])[1]
    assert_same(ember.linalg.solve_ex(to_ember(A), to_ember(A[..., :1]))[1], info_t)


def test_result_strides_are_torchs():
    A, S = wellcond(3, 5, 5).float(), spd(3, 5, 5).float()
    W = rand(3, 5, 4, seed=3)
    eA, eS, eW = to_ember(A), to_ember(S), to_ember(W)
    pairs = [
        (ember.linalg.lu_factor(eA)[0], torch.linalg.lu_factor(A)[0]),
        (ember.linalg.solve(eA, eW), torch.linalg.solve(A, W)),
        (ember.linalg.inv(eA), torch.linalg.inv(A)),
        (ember.linalg.cholesky(eS), torch.linalg.cholesky(S)),
        (ember.linalg.cholesky(eS, upper=True), torch.linalg.cholesky(S, upper=True)),
    ] + [(e, t) for mode in ('reduced', 'complete') for M, eM in ((W, eW), (W.mT, eW.mT))
         for e, t in zip(ember.linalg.qr(eM, mode=mode), torch.linalg.qr(M, mode=mode))]
    for e, t in pairs:
        assert e.stride() == t.stride(), (tuple(e.shape), e.stride(), t.stride())


@pytest.mark.parametrize('shapes', [((4, 4), (4, 2)), ((2, 4, 4), (4, 3)), ((4, 4), (3, 4, 1)),
                                    ((2, 1, 3, 3), (5, 3, 2)), ((3, 3), (3,)), ((2, 3, 3), (2, 3))])
@pytest.mark.parametrize('left', [True, False])
def test_solve_values_and_gradients(shapes, left):
    sa, sb = shapes
    if not left:
        if len(sb) == 1 or sb == sa[:-1]:
            return  # a vector B is for left=True only (as PyTorch)
        sb = sb[:-2] + (sb[-1], sb[-2])
    A, B = wellcond(*sa, seed=4), rand(*sb, dtype='float64', seed=5)
    tA, tB = A.clone().requires_grad_(), B.clone().requires_grad_()
    eA, eB = to_ember(A).requires_grad_(), to_ember(B).requires_grad_()
    t = torch.linalg.solve(tA, tB, left=left)
    e = ember.linalg.solve(eA, eB, left=left)
    assert_same(e, t.detach(), atol=1e-10, rtol=1e-10)
    g = rand(*t.shape, dtype='float64', seed=6)
    t.backward(g)
    e.backward(to_ember(g))
    assert_same(eA.grad, tA.grad, atol=1e-10, rtol=1e-10)
    assert_same(eB.grad, tB.grad, atol=1e-10, rtol=1e-10)


def test_solve_gradgradcheck():
    A, B = to_ember(wellcond(2, 3, 3)), to_ember(rand(2, 3, 2, dtype='float64', seed=7))
    A.requires_grad_(), B.requires_grad_()
    assert ember.autograd.gradcheck(ember.linalg.solve, (A, B))
    assert ember.autograd.gradgradcheck(ember.linalg.solve, (A, B))
    assert ember.autograd.gradgradcheck(ember.linalg.inv, (A,))


@pytest.mark.parametrize('adjoint', [False, True])
@pytest.mark.parametrize('left', [True, False])
def test_lu_solve_without_gradients(adjoint, left):
    A = wellcond(2, 4, 4)
    B = rand(3, 2, 4, 2, dtype='float64', seed=8) if left else rand(3, 2, 2, 4, dtype='float64', seed=8)
    LU, piv = torch.linalg.lu_factor(A)
    eLU, epiv = ember.linalg.lu_factor(to_ember(A))
    assert_same(eLU, LU, atol=1e-12, rtol=1e-12)
    assert_same(ember.linalg.lu_solve(eLU, epiv, to_ember(B), left=left, adjoint=adjoint),
                torch.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint), atol=1e-10, rtol=1e-10)


def test_lu_solve_rejects_bad_pivots():
    LU, piv = ember.linalg.lu_factor(to_ember(wellcond(4, 4)))
    with pytest.raises(RuntimeError):
        ember.linalg.lu_solve(LU, ember.tensor([1, 2, 5, 4], dtype=ember.int32), to_ember(rand(4, 1)).double())
    check_raises(lambda LU, B, m: m.linalg.lu_solve(LU, m.linalg.lu_factor(LU)[1], B),
                 wellcond(4, 4), rand(3, 1, dtype='float64'))


@pytest.mark.parametrize('shape', [(5, 5), (3, 6, 6), (0, 0), (2, 0, 0)])
def test_det_slogdet_with_and_without_gradients(shape):
    A = rand(*shape, dtype='float64', seed=9)
    if A.numel():
        A[..., 0, :] = A[..., 1, :] * 2 if len(shape) == 2 else A[..., 0, :]  # a singular one when 2-D
    eA = to_ember(A)
    assert_same(ember.linalg.det(eA), torch.linalg.det(A), atol=1e-10, rtol=1e-10)
    assert_same(ember.linalg.slogdet(eA), torch.linalg.slogdet(A), atol=1e-10, rtol=1e-10)
    # the differentiable path factors the same A^T: the same values
    eg = eA.clone().requires_grad_()
    assert torch.equal(to_torch(ember.linalg.det(eg).detach()), to_torch(ember.linalg.det(eA)))
