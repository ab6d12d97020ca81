"""ember.linalg against PyTorch 1.13 on the cases its op database replays: results of empty or
trivial inputs that keep the graph, batched tolerances, the sign conventions of the SVD and
eigh (the LAPACK calls torch makes), and gradients (against torch and float64 gradcheck)."""
import warnings

import pytest
import torch

import ember
from helpers import check, rand, to_ember

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
