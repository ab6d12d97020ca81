"""Complex inputs of pointwise and reduction ops that Ember composes from
ops with complex kernels (Note [Complex compositions] in src/ops/pointwise.c,
Note [Complex var and norm] in src/ops/reduce_stats.c): var, std, var_mean,
std_mean, norm (vector norms, dist, normalize), abs, log2, log10, positive
and the logical ops, against PyTorch 1.13 in complex128 and complex64
(values, dtypes, out=, errors), and float64-precision gradcheck on
complex128 where PyTorch's op is differentiable."""
import numpy as np
import pytest
import torch

import ember

COMPLEX = ['complex128', 'complex64']


def pair(shape, dtype, seed=0, zeros=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if zeros:
        a.flat[::3] = 0
    return ember.tensor(a, dtype=getattr(ember, dtype)), torch.tensor(a, dtype=getattr(torch, dtype))


def same(got, want, dtype):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    tol = 1e-5 if dtype == 'complex64' else 1e-12
    for g, w in zip(got, want):
        assert str(g.dtype).split('.')[-1] == str(w.dtype).split('.')[-1], (g.dtype, w.dtype)
        w = w.detach().resolve_conj().numpy()
        g = g.detach().numpy()
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


STATS = [
    lambda m, x: m.var(x),
    lambda m, x: m.var(x, 1),
    lambda m, x: m.var(x, (0, 2), keepdim=True),
    lambda m, x: m.var(x, -1, correction=0),
    lambda m, x: m.std(x),
    lambda m, x: m.std(x, 0, keepdim=True, unbiased=False),
    lambda m, x: m.var_mean(x, 1),
    lambda m, x: m.std_mean(x, (-1, 0), keepdim=True),
    lambda m, x: m.std_mean(x),
    lambda m, x: m.var(x[0, 0, 0]),
    lambda m, x: m.var(x[:, :0], 1),
    lambda m, x: x.var(dim=2),
]


@pytest.mark.parametrize('dtype', COMPLEX)
@pytest.mark.parametrize('k', range(len(STATS)))
def test_var_std(dtype, k):
    x, t = pair((3, 4, 5), dtype)
    with np.errstate(invalid='ignore'):
        same(STATS[k](ember, x), STATS[k](torch, t), dtype)


NORMS = [
    lambda m, x: m.linalg.vector_norm(x),
    lambda m, x: m.linalg.vector_norm(x, 1, dim=1),
    lambda m, x: m.linalg.vector_norm(x, float('inf'), dim=(0, 2), keepdim=True),
    lambda m, x: m.linalg.vector_norm(x, 0, dim=-1),
    lambda m, x: m.linalg.vector_norm(x, 3.5),
    lambda m, x: m.linalg.vector_norm(x, float('-inf'), dim=0),
    lambda m, x: m.norm(x),
    lambda m, x: m.norm(x, p='fro', dim=(1, 2)),
    lambda m, x: x.norm(dim=1, keepdim=True),
    lambda m, x: m.dist(x, x * 2 + 1),
    lambda m, x: m.nn.functional.normalize(x, dim=1),
    lambda m, x: m.nn.functional.pairwise_distance(x[0], x[1]),
    lambda m, x: m.norm(x, p=3, dim=0, dtype=m.complex128),
]


@pytest.mark.parametrize('dtype', COMPLEX)
@pytest.mark.parametrize('k', range(len(NORMS)))
def test_norm(dtype, k):
    x, t = pair((3, 4, 5), dtype, zeros=True)
    try:
        want = NORMS[k](torch, t)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            NORMS[k](ember, x)
        return
    same(NORMS[k](ember, x), want, dtype)


POINTWISE = [
    lambda m, x: m.abs(x),
    lambda m, x: m.log2(x),
    lambda m, x: m.log10(x),
    lambda m, x: x.log10(),
    lambda m, x: m.positive(x),
    lambda m, x: m.logical_not(x),
    lambda m, x: m.logical_and(x, x.real),
    lambda m, x: m.logical_or(x[0], x),
    lambda m, x: m.logical_xor(x, m.zeros(5, dtype=m.complex64)),
    lambda m, x: m.nn.functional.softsign(x),
    lambda m, x: m.log2(x, out=m.empty(0, dtype=x.dtype)),
    lambda m, x: m.logical_not(x, out=m.empty(2, dtype=m.bool)),
    lambda m, x: m.logical_and(x, x, out=m.empty(0, dtype=m.complex128)),
    lambda m, x: m.lerp(x, x[0] * 2, 0.25),
    lambda m, x: m.lerp(x, x.flip(0), x.real),  # torch: weight must be complex too
    lambda m, x: m.lerp(x.real, x, 0.5),
    lambda m, x: m.lerp(x, x.flip(0), x * 1j),
    lambda m, x: m.addcmul(x, x[1], x.flip(2), value=-0.5),
    lambda m, x: m.addcdiv(x[0], x.real, x.flip(1) + 1, value=2),
    lambda m, x: m.addcmul(x.real, x, x, out=m.empty(1, dtype=x.dtype)),
    lambda m, x: m.isclose(x, x + 1e-3j, rtol=0, atol=2e-3),
    lambda m, x: m.isclose(x, x * (1 + 1e-3j), rtol=1e-4),
    lambda m, x: m.isclose(x * float('nan'), x * float('nan'), equal_nan=True),
    lambda m, x: m.tensor([m.allclose(x, x + 1e-3j, rtol=0, atol=1e-4), m.allclose(x, x + 1e-9j)]),
    lambda m, x: m.float_power(x, 2),
    lambda m, x: m.float_power(x.real, x),
    lambda m, x: m.float_power(x, x.flip(0), out=m.empty(0, dtype=m.complex128)),
    lambda m, x: m.float_power(x, 2, out=m.empty(0, dtype=m.complex64)),
    lambda m, x: m.nonzero(x),
    lambda m, x: m.argwhere(x * x.real.gt(0)),
    lambda m, x: m.diff(x),
    lambda m, x: m.diff(x, 2, dim=0, prepend=x[:1], append=x.real[:2]),
    lambda m, x: m.diff(x, 0, dim=-2),
    lambda m, x: m.diff(x, dim=1, out=m.empty(0, dtype=x.dtype)),
    lambda m, x: m.cov(x[0]),
    lambda m, x: m.cov(x[1], correction=0, fweights=m.tensor([1, 2, 3, 1, 2])),
    lambda m, x: m.corrcoef(x[2]),
]


@pytest.mark.parametrize('dtype', COMPLEX)
@pytest.mark.parametrize('k', range(len(POINTWISE)))
def test_pointwise(dtype, k):
    x, t = pair((3, 4, 5), dtype, zeros=True)
    if k < 13:  # an infinity where no complex product makes NaN patterns of its own
        x[0, 0, 0] = complex('inf')
        t[0, 0, 0] = complex('inf')
    try:
        want = POINTWISE[k](torch, t)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            POINTWISE[k](ember, x)
        return
    with np.errstate(invalid='ignore'):
        same(POINTWISE[k](ember, x), want, dtype)


@pytest.mark.parametrize('dtype', COMPLEX)
def test_inplace(dtype):
    for m in (ember, torch):
        x = pair((2, 3), dtype)[m is torch]
        with pytest.raises(RuntimeError):
            x.abs_()
        with pytest.raises(RuntimeError):
            m.log2(x, out=m.empty(2, 3))  # complex result into a float out=
    x, t = pair((2, 3), dtype)
    x.log10_(), t.log10_()
    x.logical_not_(), t.logical_not_()
    same(x, t, dtype)
    x, t = pair((2, 3), dtype)
    y, w = pair((2, 3), dtype, seed=1)
    x.addcmul_(y, y, value=3).lerp_(y, 0.5).addcdiv_(y, y + 2), t.addcmul_(w, w, value=3).lerp_(w, 0.5).addcdiv_(w, w + 2)
    same(x, t, dtype)
    for m, v in ((ember, x), (torch, t)):  # float_power_ needs a complex128 base
        if dtype == 'complex64':
            with pytest.raises(RuntimeError):
                v.float_power_(2)
        else:
            v.float_power_(2)
    same(x, t, dtype)


GRADS = [
    lambda m, x: m.var(x, 1),
    lambda m, x: m.std(x, (0, 1), correction=0),
    lambda m, x: m.var_mean(x, 0)[0],
    lambda m, x: m.std_mean(x, -1)[1],
    lambda m, x: m.linalg.vector_norm(x),
    lambda m, x: m.linalg.vector_norm(x, 1, dim=0),
    lambda m, x: m.linalg.vector_norm(x, 3, dim=1),
    lambda m, x: m.dist(x, m.ones(4, dtype=m.complex128) * (1 - 2j)),
    lambda m, x: m.abs(x),
    lambda m, x: m.log2(x),
    lambda m, x: m.log10(x),
    lambda m, x: m.positive(x) * 2,
    lambda m, x: m.lerp(x, x.flip(0) * 2j, 0.3),
    lambda m, x: m.addcmul(x, x, x.flip(1), value=0.5),
    lambda m, x: m.addcdiv(x, x.flip(0), x + 3, value=-2),
    lambda m, x: m.float_power(x, 3),
    lambda m, x: m.diff(x, 2, dim=1, prepend=x[:, :1] * 2),
    lambda m, x: m.cov(x),
]


@pytest.mark.parametrize('k', range(len(GRADS)))
def test_gradcheck_complex128(k):
    x, t = pair((3, 4), 'complex128', seed=k + 1)
    x.requires_grad_(), t.requires_grad_()
    assert ember.autograd.gradcheck(lambda z: GRADS[k](ember, z), (x,))
    # and the same gradient as torch for one real cotangent
    y, w = GRADS[k](ember, x), GRADS[k](torch, t)
    cot = np.random.default_rng(k).standard_normal(tuple(w.shape))
    if w.is_complex():
        cot = cot + 1j * np.random.default_rng(k + 9).standard_normal(tuple(w.shape))
    (gx,) = ember.autograd.grad(y, x, ember.tensor(cot, dtype=y.dtype))
    (gt,) = torch.autograd.grad(w, t, torch.tensor(cot, dtype=w.dtype))
    np.testing.assert_allclose(gx.numpy(), gt.resolve_conj().numpy(), rtol=1e-10, atol=1e-12)
