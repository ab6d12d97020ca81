"""ember.optim vs torch.optim 1.13: the same parameters and gradients, 100
steps, for several option combinations; state_dict round trips; errors."""
import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, to_ember, to_torch

SHAPES = [(5, 3), (7,), (2, 3, 4), ()]

CASES = [
    ('SGD', dict(lr=0.1)),
    ('SGD', dict(lr=0.05, momentum=0.9)),
    ('SGD', dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ('SGD', dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1, maximize=True)),
    ('Adam', dict()),
    ('Adam', dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ('Adam', dict(lr=0.01, maximize=True, eps=1e-6)),
    ('AdamW', dict(lr=0.01)),
    ('AdamW', dict(lr=0.01, weight_decay=0.3, amsgrad=True, maximize=True)),
    ('RMSprop', dict()),
    ('RMSprop', dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    ('RMSprop', dict(lr=0.01, alpha=0.9, maximize=True)),
    ('Adagrad', dict()),
    ('Adagrad', dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, maximize=True)),
    ('Adadelta', dict()),
    ('Adadelta', dict(lr=0.5, rho=0.8, weight_decay=0.05, maximize=True)),
    ('Adamax', dict()),
    ('Adamax', dict(lr=0.01, betas=(0.7, 0.9), weight_decay=0.1, maximize=True)),
    ('NAdam', dict()),
    ('NAdam', dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ('RAdam', dict()),
    ('RAdam', dict(lr=0.01, betas=(0.5, 0.9), weight_decay=0.1)),
]


def make_params(dtype, seed=0):
    g = np.random.default_rng(seed)
    tparams = [torch.tensor(g.uniform(-1, 1, s), dtype=dtype).requires_grad_() for s in SHAPES]
    eparams = [to_ember(p).requires_grad_() for p in tparams]
    return tparams, eparams


def set_grads(tparams, eparams, step):
    """Gradients of a noisy quadratic bowl: they depend on the parameters,
    so any divergence between the libraries would show."""
    g = np.random.default_rng(1000 + step)
    for tp, ep in zip(tparams, eparams):
        noise = torch.tensor(g.normal(0, 0.1, tuple(tp.shape)), dtype=tp.dtype)
        tp.grad = (tp.detach() - 0.5) + noise
        ep.grad = (ep.detach() - 0.5) + to_ember(noise)


@pytest.mark.parametrize('name,opts', CASES, ids=[f'{n}-{i}' for i, (n, _) in enumerate(CASES)])
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_matches_torch_100_steps(name, opts, dtype):
    steps_match_torch(name, opts, dtype, 100)


def steps_match_torch(name, opts, dtype, steps):
    """The named optimizer on ember and torch, the same parameters and gradients for `steps` steps: the
    same values and state keys."""
    tparams, eparams = make_params(dtype)
    topt = getattr(torch.optim, name)(tparams, **opts)
    eopt = getattr(ember.optim, name)(eparams, **opts)
    for step in range(steps):
        set_grads(tparams, eparams, step)
        topt.step()
        eopt.step()
    tol = dict(atol=2e-5, rtol=2e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-9)
    for tp, ep in zip(tparams, eparams):
        assert_same(ep.detach(), tp.detach(), **tol)
    tstate, estate = topt.state_dict(), eopt.state_dict()
    assert estate['param_groups'] == tstate['param_groups']
    for k, ts in tstate['state'].items():
        es = estate['state'][k]
        assert list(es) == list(ts), f'state keys {list(es)} vs {list(ts)}'
    return estate, tstate


def test_param_groups_options_and_repr():
    tparams, eparams = make_params(torch.float32)
    groups = lambda ps: [{'params': ps[:2]}, {'params': ps[2:], 'lr': 0.5, 'momentum': 0.5}]  # noqa: E731
    topt = torch.optim.SGD(groups(tparams), lr=0.1)
    eopt = ember.optim.SGD(groups(eparams), lr=0.1)
    assert repr(eopt) == repr(topt)
    for step in range(5):
        set_grads(tparams, eparams, step)
        topt.step()
        eopt.step()
    for tp, ep in zip(tparams, eparams):
        assert_same(ep.detach(), tp.detach())


def test_state_dict_round_trip_into_fresh_optimizer():
    _, eparams = make_params(torch.float32)
    _, eparams2 = make_params(torch.float32)
    tparams, _ = make_params(torch.float32)
    opt = ember.optim.Adam(eparams, lr=0.01, amsgrad=True)
    for step in range(3):
        set_grads(tparams, eparams, step)
        opt.step()
    fresh = ember.optim.Adam(eparams2, lr=0.5)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]['lr'] == 0.01 and fresh.param_groups[0]['params'] == eparams2
    for p, q in zip(eparams, eparams2):
        q.data.copy_(p.detach())
    for step in range(3, 6):
        set_grads(tparams, eparams, step)
        set_grads(tparams, eparams2, step)
        opt.step()
        fresh.step()
    for p, q in zip(eparams, eparams2):
        assert_same(q.detach(), to_torch(p.detach()))


def test_missing_grads_skipped_and_zero_grad():
    p = ember.ones(3, requires_grad=True)
    q = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([p, q], lr=1.0, momentum=0.9)
    p.grad = ember.ones(3)
    opt.step()
    assert p.tolist() == [0.0, 0.0, 0.0] and q.tolist() == [1.0, 1.0]
    assert q not in opt.state
    opt.zero_grad()
    assert p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad(set_to_none=True)
    assert p.grad is None


def test_closure_runs_with_grad():
    w = ember.tensor([1.0, -2.0], requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert abs(float(loss) - 5.0) < 1e-6
    assert_same(w.detach(), torch.tensor([0.8, -1.6]))


def test_non_contiguous_parameter():
    base = torch.tensor(np.random.default_rng(3).uniform(-1, 1, (3, 4)), dtype=torch.float32)
    tp = base.t().contiguous().t().requires_grad_()  # stride (1, 3)
    ep = to_ember(tp.detach()).requires_grad_()
    assert not ep.is_contiguous()
    topt, eopt = torch.optim.Adam([tp], lr=0.1), ember.optim.Adam([ep], lr=0.1)
    for step in range(5):
        set_grads([tp], [ep], step)
        topt.step()
        eopt.step()
    assert_same(ep.detach(), tp.detach())


@pytest.mark.parametrize('make', [
    lambda m, p: m.optim.SGD(p, lr=-1),
    lambda m, p: m.optim.SGD(p, lr=0.1, momentum=-1),
    lambda m, p: m.optim.SGD(p, lr=0.1, nesterov=True),
    lambda m, p: m.optim.SGD(p),
    lambda m, p: m.optim.Adam(p, betas=(1.0, 0.9)),
    lambda m, p: m.optim.Adam(p, betas=(0.9, -0.1)),
    lambda m, p: m.optim.Adam(p, eps=-1),
    lambda m, p: m.optim.AdamW(p, weight_decay=-1),
    lambda m, p: m.optim.Adadelta(p, rho=1.5),
    lambda m, p: m.optim.Adagrad(p, lr_decay=-1),
    lambda m, p: m.optim.Adagrad(p, initial_accumulator_value=-1),
    lambda m, p: m.optim.RMSprop(p, alpha=-1),
    lambda m, p: m.optim.NAdam(p, momentum_decay=-1),
    lambda m, p: m.optim.SGD([], lr=0.1),
    lambda m, p: m.optim.SGD(p[0], lr=0.1),
    lambda m, p: m.optim.SGD([{'params': {p[0]}}], lr=0.1),
    lambda m, p: m.optim.SGD([p[0] * 2], lr=0.1),
    lambda m, p: m.optim.SGD([{'params': p}, {'params': p[:1]}], lr=0.1),
])
def test_errors_like_torch(make):
    tparams, eparams = make_params(torch.float32)
    with pytest.raises(Exception) as texc:
        make(torch, tparams)
    with pytest.raises(texc.type):
        make(ember, eparams)


def test_step_with_grad_mode_on_from_c_is_refused():
    p = ember.ones(2, requires_grad=True)
    p.grad = ember.ones(2)
    with pytest.raises(RuntimeError, match='leaf Variable'):
        ember._C._nn._optimizer_step('SGD', {'lr': 0.1}, [p], [p.grad], (None, None, None), None, None)
    assert p.tolist() == [1.0, 1.0]


def test_bad_state_leaves_params_unchanged():
    p = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        with pytest.raises(RuntimeError):
            ember._C._nn._optimizer_step('Adam', {'lr': 0.1, 'betas': (0.9, 0.99)}, [p], [ember.ones(3)],
                                         ([ember.zeros(2)], [ember.zeros(2)], None), [ember.tensor(0.)], None)
        with pytest.raises(TypeError):
            ember._C._nn._optimizer_step('Adam', {'lr': 0.1, 'betas': (0.9, 0.99)}, [p], [ember.ones(2).double()],
                                         ([ember.zeros(2)], [ember.zeros(2)], None), [ember.tensor(0.)], None)
    assert p.tolist() == [1.0, 1.0]
