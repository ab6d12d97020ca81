"""ember.distributions vs torch.distributions 1.13: densities, entropies,
moments, cdfs, shapes and their gradients, validation errors, kl_divergence,
and sample statistics (the random streams differ, so draws are checked by
their moments)."""
import numpy as np
import pytest
import torch

import ember
from helpers import to_ember


def both(make, leaves=None):
    """make(D, T) with D the library's distributions and T a tensor constructor (float64,
    requiring grad); the parameters made are appended to leaves[0] (ember) and leaves[1] (torch)."""
    leaves = leaves if leaves is not None else ([], [])

    def maker(lib, out):
        def T(v):
            x = lib.tensor(v, dtype=lib.float64, requires_grad=True)
            out.append(x)
            return x
        return T
    t = make(torch.distributions, maker(torch, leaves[1]))
    e = make(ember.distributions, maker(ember, leaves[0]))
    return e, t


def close(e, t, tol=1e-10):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


FAMILIES = {
    'Normal': (lambda D, T: D.Normal(T([0.0, 1.5, -2.0]), T([1.0, 0.5, 3.0])), [0.3, 1.0, -7.0]),
    'Uniform': (lambda D, T: D.Uniform(T([0.0, -1.0, 2.0]), T([1.0, 3.0, 2.5])), [0.5, 0.0, 2.25]),
    'Exponential': (lambda D, T: D.Exponential(T([0.5, 2.0, 4.0])), [1.0, 0.1, 3.0]),
    'Bernoulli probs': (lambda D, T: D.Bernoulli(probs=T([0.1, 0.5, 0.8])), [1.0, 0.0, 1.0]),
    'Bernoulli logits': (lambda D, T: D.Bernoulli(logits=T([-2.0, 0.0, 3.0])), [0.0, 1.0, 1.0]),
    'Categorical probs': (lambda D, T: D.Categorical(probs=T([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])), [2, 0]),
    'Categorical logits': (lambda D, T: D.Categorical(logits=T([[0.0, 1.0, -1.0], [2.0, 0.5, 0.5]])), [1, 2]),
    'OneHotCategorical': (lambda D, T: D.OneHotCategorical(logits=T([[0.0, 1.0, -1.0], [2.0, 0.5, 0.5]])),
                          [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
}


@pytest.mark.parametrize('name', list(FAMILIES))
def test_density_entropy_moments_and_gradients(name):
    make, value = FAMILIES[name]
    leaves = ([], [])
    e, t = both(make, leaves)
    assert tuple(e.batch_shape) == tuple(t.batch_shape) and tuple(e.event_shape) == tuple(t.event_shape)
    kind = torch.int64 if name.startswith('Categorical') else torch.float64
    tv = torch.tensor(value, dtype=kind)
    ev = to_ember(tv)
    close(e.log_prob(ev), t.log_prob(tv))
    close(e.entropy(), t.entropy())
    if not name.startswith('Categorical'):
        close(e.mean, t.mean)
        close(e.variance, t.variance)
        close(e.stddev, t.stddev)
    if hasattr(t, 'cdf') and name in ('Normal', 'Uniform', 'Exponential'):
        close(e.cdf(ev), t.cdf(tv), 1e-7)
    # gradients of log_prob + entropy w.r.t. every parameter that requires grad
    (t.log_prob(tv).sum() + t.entropy().sum()).backward()
    (e.log_prob(ev).sum() + e.entropy().sum()).backward()
    for ep, tp in zip(*leaves):
        assert tp.grad is not None
        close(ep.grad, tp.grad, 1e-8)


@pytest.mark.parametrize('name', list(FAMILIES))
def test_sample_shapes_and_moments(name):
    make, _ = FAMILIES[name]
    e, t = both(make)
    for shape in ((), (5,), (2, 3)):
        assert tuple(e.sample(shape).shape) == tuple(t.sample(shape).shape)
    ember.manual_seed(0)
    draws = e.sample((20000,))
    if name.startswith('Categorical'):
        counts = np.stack([(draws.numpy() == k).mean(0) for k in range(3)], -1)
        np.testing.assert_allclose(counts, t.probs.detach().numpy(), atol=0.02)
    else:
        np.testing.assert_allclose(draws.double().mean(0).numpy(), t.mean.detach().numpy(), atol=0.05 * 3)
        np.testing.assert_allclose(draws.double().var(0).numpy(), t.variance.detach().numpy(), rtol=0.1,
                                   atol=0.02)
    if t.has_rsample:
        r = e.rsample((4,))
        assert r.requires_grad
        r.sum().backward()


def test_validation_and_errors():
    for lib in (torch, ember):
        D = lib.distributions
        for bad in (lambda: D.Normal(lib.tensor([0.0]), lib.tensor([-1.0])),
                    lambda: D.Uniform(lib.tensor([1.0]), lib.tensor([0.0])),
                    lambda: D.Exponential(lib.tensor([0.0])),
                    lambda: D.Bernoulli(probs=lib.tensor([1.5])),
                    lambda: D.Bernoulli(probs=lib.tensor([0.5]), logits=lib.tensor([0.0])),
                    lambda: D.Categorical(probs=lib.tensor([0.5, -0.1]))):
            with pytest.raises(ValueError):
                bad()
        with pytest.raises(ValueError):
            D.Bernoulli(probs=lib.tensor([0.5])).log_prob(lib.tensor([0.5]))
        with pytest.raises(ValueError):
            D.Uniform(lib.tensor(0.0), lib.tensor(1.0)).log_prob(lib.tensor(2.0))
        assert D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]), validate_args=False).scale.item() == -1.0
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.Categorical(lib.tensor([0.5, 0.5])), D.Normal(lib.tensor(0.0), lib.tensor(1.0)))


@pytest.mark.parametrize('pair', [
    ('Normal', lambda D, T: (D.Normal(T([0.0, 1.0]), T([1.0, 2.0])), D.Normal(T([0.5, -1.0]), T([0.7, 1.0])))),
    ('Uniform', lambda D, T: (D.Uniform(T([0.0, 0.0]), T([1.0, 2.0])), D.Uniform(T([-1.0, 0.5]), T([2.0, 3.0])))),
    ('Exponential', lambda D, T: (D.Exponential(T([0.5, 2.0])), D.Exponential(T([1.0, 1.0])))),
    ('Bernoulli', lambda D, T: (D.Bernoulli(T([0.0, 0.3, 1.0])), D.Bernoulli(T([0.5, 0.0, 0.9])))),
    ('Categorical', lambda D, T: (D.Categorical(T([[0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])),
                                  D.Categorical(T([[0.5, 0.25, 0.25], [0.1, 0.0, 0.9]])))),
    ('OneHotCategorical', lambda D, T: (D.OneHotCategorical(T([[0.2, 0.8]])), D.OneHotCategorical(T([[0.5, 0.5]])))),
], ids=lambda p: p[0] if isinstance(p, tuple) else '')
def test_kl_divergence(pair):
    (ep, eq), (tp, tq) = both(pair[1])
    close(ember.distributions.kl_divergence(ep, eq), torch.distributions.kl_divergence(tp, tq))
