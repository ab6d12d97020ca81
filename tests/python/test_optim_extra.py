"""ember.optim's ASGD, Rprop, SparseAdam and swa_utils against torch.optim
1.13: the same parameters and gradients, many steps, several option sets."""
import pytest
import torch

import ember
from helpers import assert_same, to_ember
from test_optim import make_params, set_grads, steps_match_torch

CASES = [
    ('ASGD', dict()),
    ('ASGD', dict(lr=0.05, lambd=1e-3, alpha=0.5, t0=10, weight_decay=0.1)),
    ('ASGD', dict(lr=0.02, t0=0, maximize=True)),
    ('Rprop', dict()),
    ('Rprop', dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-4, 0.2))),
    ('Rprop', dict(lr=0.01, maximize=True)),
]


@pytest.mark.parametrize('name,opts', CASES, ids=[f'{n}-{i}' for i, (n, _) in enumerate(CASES)])
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_matches_torch(name, opts, dtype):
    estate, tstate = steps_match_torch(name, opts, dtype, 60)
    tol = dict(atol=2e-5, rtol=2e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-9)
    for k, ts in tstate['state'].items():
        for key, tv in ts.items():
            if isinstance(tv, torch.Tensor):
                assert_same(estate['state'][k][key], tv, **tol, check_dtype=False)
            else:
                assert estate['state'][k][key] == tv, key


def test_closure_and_repr():
    tparams, eparams = make_params(torch.float64)
    for m, ps in ((torch, tparams), (ember, eparams)):
        opt = m.optim.Rprop(ps)
        assert opt.step(lambda: 3.0) == 3.0
    assert repr(ember.optim.ASGD(eparams)) == repr(torch.optim.ASGD(tparams))


BAD = [
    ('ASGD', dict(lr=-1.0), 'Invalid learning rate: -1.0'),
    ('ASGD', dict(weight_decay=-1.0), 'Invalid weight_decay value: -1.0'),
    ('Rprop', dict(lr=-1.0), 'Invalid learning rate'),
    ('Rprop', dict(etas=(1.5, 1.2)), 'Invalid eta values: 1.5, 1.2'),
    ('SparseAdam', dict(lr=0.0), 'Invalid learning rate: 0.0'),
    ('SparseAdam', dict(eps=0.0), 'Invalid epsilon value: 0.0'),
    ('SparseAdam', dict(betas=(1.0, 0.9)), 'Invalid beta parameter at index 0: 1.0'),
    ('SparseAdam', dict(betas=(0.9, -0.1)), 'Invalid beta parameter at index 1: -0.1'),
]


@pytest.mark.parametrize('name,opts,match', BAD)
def test_bad_options(name, opts, match):
    tparams, eparams = make_params(torch.float32)
    for m, ps in ((torch, tparams), (ember, eparams)):
        with pytest.raises(ValueError, match=match):
            getattr(m.optim, name)(ps, **opts)


def test_sparse_adam_refuses_dense_gradients():
    tparams, eparams = make_params(torch.float32)
    set_grads(tparams, eparams, 0)
    for m, ps in ((torch, tparams), (ember, eparams)):
        opt = m.optim.SparseAdam(ps)
        with pytest.raises(RuntimeError, match='SparseAdam does not support dense gradients, please consider Adam '
                                               'instead'):
            opt.step()


def models():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).double()
    e = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4), ember.nn.Linear(4, 2)).double()
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return t, e


def perturb(m, model, step):
    with m.no_grad():
        for i, p in enumerate(model.parameters()):
            p.mul_(0.9).add_(0.01 * (step + i))


@pytest.mark.parametrize('use_buffers', [False, True])
@pytest.mark.parametrize('custom', [False, True])
def test_averaged_model(use_buffers, custom):
    t, e = models()
    avg_fn = (lambda a, p, n: 0.75 * a + 0.25 * p) if custom else None
    ta = torch.optim.swa_utils.AveragedModel(t, avg_fn=avg_fn, use_buffers=use_buffers)
    ea = ember.optim.swa_utils.AveragedModel(e, avg_fn=avg_fn, use_buffers=use_buffers)
    x = torch.rand(5, 3, dtype=torch.float64)
    for step in range(4):
        for m, model in ((torch, t), (ember, e)):
            perturb(m, model, step)
            model.train()
            model(x if m is torch else to_ember(x))  # moves the BatchNorm buffers
        ta.update_parameters(t)
        ea.update_parameters(e)
    assert int(ea.n_averaged) == int(ta.n_averaged) == 4
    tsd, esd = ta.state_dict(), ea.state_dict()
    assert list(esd) == list(tsd)
    for k in tsd:
        assert_same(esd[k], tsd[k], atol=1e-12, rtol=1e-10)
    ta.eval()
    ea.eval()
    assert_same(ea(to_ember(x)).detach(), ta(x).detach(), atol=1e-12, rtol=1e-10)


def test_update_bn():
    t, e = models()
    xs = [torch.rand(6, 3, dtype=torch.float64) for _ in range(3)]
    tloader = [(x, 0) for x in xs]
    eloader = [(to_ember(x), 0) for x in xs]
    t.eval()
    e.eval()
    torch.optim.swa_utils.update_bn(tloader, t)
    ember.optim.swa_utils.update_bn(eloader, e)
    assert not e.training
    for k, v in t.state_dict().items():
        assert_same(e.state_dict()[k], v, atol=1e-12, rtol=1e-10)
    assert e[1].momentum == t[1].momentum == 0.1


@pytest.mark.parametrize('strategy', ['cos', 'linear'])
@pytest.mark.parametrize('anneal_epochs', [0, 1, 4])
def test_swalr(strategy, anneal_epochs):
    tparams, eparams = make_params(torch.float32)
    lrs = []
    for m, ps in ((torch, tparams), (ember, eparams)):
        opt = m.optim.SGD([{'params': ps[:2]}, {'params': ps[2:], 'lr': 0.3}], lr=0.1)
        sched = m.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                                        anneal_strategy=strategy)
        seq = []
        for _ in range(7):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
        lrs.append(seq)
    for te, ee in zip(*lrs):
        assert ee == pytest.approx(te, rel=1e-12)


def test_swalr_errors():
    for m, ps in ((torch, make_params(torch.float32)[0]), (ember, make_params(torch.float32)[1])):
        opt = m.optim.SGD(ps, lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear'"):
            m.optim.swa_utils.SWALR(opt, 0.05, anneal_strategy='exp')
        with pytest.raises(ValueError, match='anneal_epochs must be equal or greater than 0, got -1'):
            m.optim.swa_utils.SWALR(opt, 0.05, anneal_epochs=-1)
        with pytest.raises(ValueError, match='swa_lr must have the same length'):
            m.optim.swa_utils.SWALR(opt, [0.05, 0.1])
