"""ember.linalg (the part Ember's ops express) vs torch.linalg 1.13."""
import pytest
import torch

import ember
from helpers import check, rand, to_ember

INF = float('inf')


@pytest.mark.parametrize('ord', [2, 1, 0, INF, -INF, 3, 0.5])
@pytest.mark.parametrize('dim', [None, 1, (0, 2), -1])
def test_vector_norm(ord, dim):
    check(lambda x, m: m.linalg.vector_norm(x, ord, dim), rand(3, 4, 5, dtype='float64'), grad=ord not in (0,))
    check(lambda x, m: m.linalg.vector_norm(x, ord, dim, keepdim=True), rand(3, 4, 5))


@pytest.mark.parametrize('ord', ['fro', 1, -1, INF, -INF])
@pytest.mark.parametrize('keepdim', [False, True])
def test_matrix_norm(ord, keepdim):
    check(lambda x, m: m.linalg.matrix_norm(x, ord, keepdim=keepdim), rand(2, 3, 4, dtype='float64'), grad=True)
    check(lambda x, m: m.linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=keepdim), rand(3, 2, 4))


def test_norm_dispatch_products_and_power():
    for args in ((None, None), (None, 1), (None, (0, 1)), (3, 1), ('fro', None), (INF, None), (1, (1, 0))):
        check(lambda x, m: m.linalg.norm(x, *args), rand(4, 3, dtype='float64'), grad=True)
    check(lambda x, m: m.linalg.norm(x, 3), rand(5))
    with pytest.raises(RuntimeError):
        ember.linalg.norm(ember.ones(2, 2, 2), 2)
    check(lambda a, b, m: m.linalg.cross(a, b), rand(4, 3), rand(4, 3))
    check(lambda a, b, m: m.linalg.cross(a, b, dim=0), rand(3, 2), rand(3, 2))
    check(lambda a, b, c, m: m.linalg.multi_dot([a, b, c]), rand(3), rand(3, 4), rand(4), grad=True)
    check(lambda a, b, c, m: m.linalg.multi_dot([a, b, c]), rand(2, 3), rand(3, 4), rand(4, 5))
    check(lambda a, m: m.linalg.diagonal(a, offset=1), rand(2, 4, 4))
    check(lambda a, b, m: m.linalg.vecdot(a, b, dim=0), rand(3, 2), rand(3, 2))
    check(lambda a, b, m: m.linalg.matmul(a, b), rand(2, 3), rand(3))
    for n in (0, 1, 2, 5):
        check(lambda a, m: m.linalg.matrix_power(a, n), rand(2, 3, 3, dtype='float64', low=-1, high=1), grad=n > 0)
    check(lambda a, m: m.linalg.matrix_power(a, -3), rand(2, 3, 3, dtype='float64', low=-1, high=1) +
          3 * torch.eye(3, dtype=torch.float64), grad=True, atol=1e-9, rtol=1e-8)
    with pytest.raises(RuntimeError):
        ember.linalg.matrix_power(ember.ones(2, 3), 2)


@pytest.mark.parametrize('name', ['eig', 'eigvals'])
def test_general_eigendecomposition_matches_torch(name):
    """eig/eigvals of a real matrix: complex results, as torch's (gradients: test_linalg_grads.py)."""
    a = torch.tensor([[2., 1., 0.], [-1., 2., 0.], [0., 0., 3.]])
    want = getattr(torch.linalg, name)(a)
    got = getattr(ember.linalg, name)(ember.from_numpy(a.numpy()))
    for w, g in zip(want if name == 'eig' else [want], got if name == 'eig' else [got]):
        assert str(g.dtype) == 'ember.complex64'
        torch.testing.assert_close(torch.from_numpy(g.numpy()), w)
