"""ember.optim.lr_scheduler vs torch.optim.lr_scheduler 1.13: the same model,
optimizer and schedule in both libraries, 200 steps; the learning rates (and
cycled momenta) must be equal floats, and so the parameters after training.
Also state_dict round trips into fresh schedulers, step(epoch), warnings,
verbose output and errors."""
import copy
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same

STEPS = 200


class Scale:
    """A callable object as lr_lambda: its __dict__ goes into state_dict."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, epoch):
        return self.rate ** epoch


def _inner(lib, opt, name, **kw):
    return getattr(lib.optim.lr_scheduler, name)(opt, **kw)


# name -> (optimizer name, optimizer options, scheduler factory (lib, optimizer))
CASES = {
    'LambdaLR': ('SGD', {}, lambda m, o: _inner(m, o, 'LambdaLR', lr_lambda=lambda e: 1 / (1 + 0.05 * e))),
    'LambdaLR-list': ('SGD', {}, lambda m, o: _inner(m, o, 'LambdaLR', lr_lambda=[Scale(0.99), lambda e: e % 7])),
    'MultiplicativeLR': ('SGD', {}, lambda m, o: _inner(m, o, 'MultiplicativeLR', lr_lambda=lambda e: 0.98)),
    'StepLR': ('SGD', {}, lambda m, o: _inner(m, o, 'StepLR', step_size=30)),
    'StepLR-gamma': ('Adam', {}, lambda m, o: _inner(m, o, 'StepLR', step_size=7, gamma=0.7)),
    'MultiStepLR': ('SGD', {}, lambda m, o: _inner(m, o, 'MultiStepLR', milestones=[10, 50, 50, 120], gamma=0.5)),
    'ConstantLR': ('SGD', {}, lambda m, o: _inner(m, o, 'ConstantLR')),
    'ConstantLR-long': ('SGD', {}, lambda m, o: _inner(m, o, 'ConstantLR', factor=0.3, total_iters=40)),
    'LinearLR': ('SGD', {}, lambda m, o: _inner(m, o, 'LinearLR')),
    'LinearLR-down': ('SGD', {}, lambda m, o: _inner(m, o, 'LinearLR', start_factor=1.0, end_factor=0.05,
                                                     total_iters=150)),
    'ExponentialLR': ('SGD', {}, lambda m, o: _inner(m, o, 'ExponentialLR', gamma=0.97)),
    'PolynomialLR': ('SGD', {}, lambda m, o: _inner(m, o, 'PolynomialLR')),
    'PolynomialLR-power': ('SGD', {}, lambda m, o: _inner(m, o, 'PolynomialLR', total_iters=150, power=2.5)),
    'CosineAnnealingLR': ('SGD', {}, lambda m, o: _inner(m, o, 'CosineAnnealingLR', T_max=50)),
    'CosineAnnealingLR-eta': ('SGD', {}, lambda m, o: _inner(m, o, 'CosineAnnealingLR', T_max=33, eta_min=0.001)),
    'WarmRestarts': ('SGD', {}, lambda m, o: _inner(m, o, 'CosineAnnealingWarmRestarts', T_0=20)),
    'WarmRestarts-mult': ('SGD', {}, lambda m, o: _inner(m, o, 'CosineAnnealingWarmRestarts', T_0=5, T_mult=2,
                                                         eta_min=0.01)),
    'CyclicLR': ('SGD', dict(momentum=0.9), lambda m, o: _inner(m, o, 'CyclicLR', base_lr=0.01, max_lr=0.1,
                                                               step_size_up=15)),
    'CyclicLR-tri2': ('SGD', dict(momentum=0.9), lambda m, o: _inner(
        m, o, 'CyclicLR', base_lr=[0.01, 0.02], max_lr=[0.1, 0.2], step_size_up=10, step_size_down=25,
        mode='triangular2', base_momentum=[0.8, 0.7], max_momentum=0.95)),
    'CyclicLR-exp': ('SGD', {}, lambda m, o: _inner(m, o, 'CyclicLR', base_lr=0.001, max_lr=0.1, step_size_up=12,
                                                    mode='exp_range', gamma=0.99, cycle_momentum=False)),
    'CyclicLR-fn': ('SGD', dict(momentum=0.5), lambda m, o: _inner(
        m, o, 'CyclicLR', base_lr=0.001, max_lr=0.1, step_size_up=9, scale_fn=lambda x: 1 / (1 + 0.01 * x),
        scale_mode='iterations')),
    'OneCycleLR': ('SGD', dict(momentum=0.9), lambda m, o: _inner(m, o, 'OneCycleLR', max_lr=0.5,
                                                                 total_steps=STEPS)),
    'OneCycleLR-linear3': ('SGD', dict(momentum=0.9), lambda m, o: _inner(
        m, o, 'OneCycleLR', max_lr=[0.5, 1.0], epochs=10, steps_per_epoch=21, pct_start=0.25,
        anneal_strategy='linear', three_phase=True, base_momentum=[0.8, 0.85])),
    'OneCycleLR-adam': ('Adam', dict(betas=(0.9, 0.99)), lambda m, o: _inner(
        m, o, 'OneCycleLR', max_lr=0.01, total_steps=STEPS + 5, div_factor=10., final_div_factor=100.)),
    'OneCycleLR-nomom': ('Adam', {}, lambda m, o: _inner(m, o, 'OneCycleLR', max_lr=0.01, total_steps=STEPS,
                                                         cycle_momentum=False, three_phase=True)),
    'SequentialLR': ('SGD', {}, lambda m, o: m.optim.lr_scheduler.SequentialLR(
        o, [_inner(m, o, 'LinearLR', start_factor=0.1, total_iters=10),
            _inner(m, o, 'CosineAnnealingLR', T_max=60),
            _inner(m, o, 'ExponentialLR', gamma=0.98)], milestones=[10, 80])),
    'ChainedScheduler': ('SGD', {}, lambda m, o: m.optim.lr_scheduler.ChainedScheduler(
        [_inner(m, o, 'ConstantLR', factor=0.1, total_iters=20), _inner(m, o, 'ExponentialLR', gamma=0.99),
         _inner(m, o, 'StepLR', step_size=25, gamma=0.5)])),
    'Plateau': ('SGD', {}, lambda m, o: _inner(m, o, 'ReduceLROnPlateau', patience=3)),
    'Plateau-max-abs': ('SGD', dict(momentum=0.9), lambda m, o: _inner(
        m, o, 'ReduceLROnPlateau', mode='max', factor=0.5, patience=2, threshold=0.01, threshold_mode='abs',
        cooldown=4, min_lr=[0.001, 0.01])),
    'Plateau-eps': ('SGD', {}, lambda m, o: _inner(m, o, 'ReduceLROnPlateau', factor=0.5, patience=0,
                                                   threshold=0.05, eps=1e-4)),
}

METRICS = (1.0 / (1.0 + np.arange(STEPS + 1) / 20) + np.random.default_rng(3).normal(0, 0.05, STEPS + 1)).tolist()


def make_optimizer(lib, opt_name, opt_kwargs, seed=0):
    """A Linear(4, 3) with fixed weights and fixed gradients, in two param
    groups (weight at lr 0.1, bias at lr 0.05)."""
    g = np.random.default_rng(seed)
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        for p in model.parameters():
            values = g.uniform(-1, 1, tuple(p.shape))
            p.copy_(lib.tensor(values, dtype=lib.float32))
            p.grad = lib.tensor(np.cos(values), dtype=lib.float32)
    groups = [{'params': [model.weight]}, {'params': [model.bias], 'lr': 0.05}]
    return model, getattr(lib.optim, opt_name)(groups, lr=0.1, **opt_kwargs)


def snapshot(opt):
    """Each group's lr and, where the optimizer has them, momentum and betas."""
    return [(g['lr'], g.get('momentum'), g.get('betas')) for g in opt.param_groups]


def advance(sched, opt, i, record):
    opt.step()
    if isinstance(sched, (torch.optim.lr_scheduler.ReduceLROnPlateau, ember.optim.lr_scheduler.ReduceLROnPlateau)):
        sched.step(METRICS[i])
    else:
        sched.step()
    record.append(snapshot(opt) + [list(sched._last_lr)])


def run(lib, name, steps=STEPS):
    opt_name, opt_kwargs, factory = CASES[name]
    model, opt = make_optimizer(lib, opt_name, opt_kwargs)
    sched = factory(lib, opt)
    record = [snapshot(opt)]
    for i in range(steps):
        advance(sched, opt, i, record)
    return model, opt, sched, record


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        yield


@pytest.mark.parametrize('name', list(CASES))
def test_schedule_matches_torch(name):
    tmodel, _, _, trecord = run(torch, name)
    emodel, _, _, erecord = run(ember, name)
    for step, (t, e) in enumerate(zip(trecord, erecord)):
        assert e == t, f'step {step}: {e} vs {t}'
    for tp, ep in zip(tmodel.parameters(), emodel.parameters()):
        assert_same(ep.detach(), tp.detach(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize('name', list(CASES))
def test_state_dict_round_trip(name):
    _, _, _, trecord = run(torch, name)
    _, opt, sched, erecord = run(ember, name, steps=77)
    opt_state, sched_state = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    assert 'optimizer' not in sched_state
    opt_name, opt_kwargs, factory = CASES[name]
    _, fresh_opt = make_optimizer(ember, opt_name, opt_kwargs)
    fresh = factory(ember, fresh_opt)
    fresh_opt.load_state_dict(opt_state)
    fresh.load_state_dict(sched_state)
    for i in range(77, STEPS):
        advance(fresh, fresh_opt, i, erecord)
    assert erecord == trecord


def test_state_dict_keys_match_torch():
    for name in ('StepLR', 'CosineAnnealingLR', 'LambdaLR-list', 'Plateau', 'SequentialLR', 'WarmRestarts'):
        tstate, estate = run(torch, name, 5)[2].state_dict(), run(ember, name, 5)[2].state_dict()
        assert sorted(estate) == sorted(tstate), name
        assert {k: v for k, v in estate.items() if k != '_schedulers'} == \
            {k: v for k, v in tstate.items() if k != '_schedulers'}, name
    assert run(ember, 'LambdaLR-list', 3)[2].state_dict()['lr_lambdas'] == [{'rate': 0.99}, None]


EPOCH_CASES = ['LambdaLR', 'StepLR', 'MultiStepLR', 'ConstantLR', 'LinearLR', 'ExponentialLR', 'PolynomialLR',
               'CosineAnnealingLR', 'WarmRestarts', 'WarmRestarts-mult', 'Plateau']


@pytest.mark.parametrize('name', EPOCH_CASES)
def test_step_with_epoch_uses_closed_form(name):
    """step(epoch), deprecated, jumps (closed form where there is one); the
    warm-restart scheduler also takes fractional epochs."""
    epochs = [3, 4, 5, 9, 0, 17, 17, 2, 40, 41, 150, 151, 6]
    if name.startswith('WarmRestarts'):
        epochs += [0.5, 7.25, 33.9, 2.0, 100.125]
    records = []
    for lib in (torch, ember):
        opt_name, opt_kwargs, factory = CASES[name]
        _, opt = make_optimizer(lib, opt_name, opt_kwargs)
        sched = factory(lib, opt)
        record = []
        for i, epoch in enumerate(epochs):
            opt.step()
            if name == 'Plateau':
                sched.step(METRICS[i], epoch)
            else:
                sched.step(epoch)
            sched.step() if name != 'Plateau' else None
            record.append((snapshot(opt), sched.last_epoch))
        records.append(record)
    assert records[1] == records[0]


def test_warnings_as_torch():
    for lib in (torch, ember):
        _, opt = make_optimizer(lib, 'SGD', {})
        sched = lib.optim.lr_scheduler.StepLR(opt, 3)
        with pytest.warns(UserWarning, match='Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step'):
            sched.step()
        with pytest.warns(UserWarning, match='please use `get_last_lr\\(\\)`'):
            sched.get_lr()
        with pytest.warns(UserWarning, match='epoch parameter in `scheduler.step\\(\\)` was not necessary'):
            sched.step(5)
        _, opt = make_optimizer(lib, 'SGD', {})
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        assert opt.step._with_counter
        opt.step = lambda closure=None: None
        with pytest.warns(UserWarning, match='has been overridden after learning rate scheduler'):
            sched.step()
        _, opt = make_optimizer(lib, 'SGD', {})
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            opt.step()
            sched.step()   # the right order: no warning
        assert opt._step_count == 1 and sched._step_count == 2


def test_initial_lr_and_resume():
    for lib in (torch, ember):
        _, opt = make_optimizer(lib, 'SGD', {})
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
            lib.optim.lr_scheduler.StepLR(opt, 3, last_epoch=4)
    _, topt = make_optimizer(torch, 'SGD', {})
    _, eopt = make_optimizer(ember, 'SGD', {})
    for opt in (topt, eopt):
        opt.param_groups[0]['lr'] = 0.3
        for group in opt.param_groups:
            group['initial_lr'] = group['lr'] * 2
    tsched = torch.optim.lr_scheduler.CosineAnnealingLR(topt, 40, last_epoch=9)
    esched = ember.optim.lr_scheduler.CosineAnnealingLR(eopt, 40, last_epoch=9)
    assert esched.base_lrs == tsched.base_lrs == [0.6, 0.1]
    for _ in range(50):
        tsched.step()
        esched.step()
        assert snapshot(eopt) == snapshot(topt)
    assert issubclass(ember.optim.lr_scheduler.StepLR, ember.optim.lr_scheduler._LRScheduler)


def test_verbose_output_as_torch(capsys):
    outputs = []
    for lib in (torch, ember):
        _, opt = make_optimizer(lib, 'SGD', {})
        sched = lib.optim.lr_scheduler.StepLR(opt, 2, verbose=True)
        for _ in range(3):
            sched.step()
        sched.step(7)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 3, verbose=True)
        sched.step()
        sched.step(2.5)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, verbose=True)
        for metric in (1.0, 2.0, 3.0):
            sched.step(metric)
        outputs.append(capsys.readouterr().out)
    assert outputs[1] == outputs[0] and 'Epoch 00002: reducing learning rate of group 0' in outputs[1]


def test_plateau_accepts_tensor_metric():
    _, opt = make_optimizer(ember, 'SGD', {})
    sched = ember.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    sched.step(ember.tensor(1.0))
    sched.step(ember.tensor(2.0))
    assert sched._last_lr == [0.1 * 0.1, 0.05 * 0.1] and sched.best == 1.0


def _step_n(sched, n):
    for _ in range(n):
        sched.step()


def _errors(m):
    """Bad arguments, each a thunk; both libraries must raise the same
    exception type with the same message."""
    S = m.optim.lr_scheduler
    fresh = lambda name='SGD', **kw: make_optimizer(m, name, kw)[1]  # noqa: E731
    other = fresh()
    o = fresh(momentum=0.9)
    return [
        lambda: S.StepLR(object(), 3),
        lambda: S.MultiStepLR(fresh(), milestones=5),
        lambda: S.LambdaLR(fresh(), [lambda e: 1.0] * 3),
        lambda: S.MultiplicativeLR(fresh(), (lambda e: 1.0,)),
        lambda: S.ConstantLR(fresh(), factor=1.5),
        lambda: S.LinearLR(fresh(), start_factor=-0.1),
        lambda: S.LinearLR(fresh(), end_factor=2.0),
        lambda: S.CosineAnnealingWarmRestarts(fresh(), T_0=0),
        lambda: S.CosineAnnealingWarmRestarts(fresh(), T_0=2.5),
        lambda: S.CosineAnnealingWarmRestarts(fresh(), T_0=5, T_mult=0),
        lambda: S.CosineAnnealingWarmRestarts(fresh(), T_0=5).step(-1),
        lambda: S.CyclicLR(o, 0.1, 1.0, mode='triangle'),
        lambda: S.CyclicLR(fresh('Adam'), 0.1, 1.0),
        lambda: S.CyclicLR(o, [0.1], 1.0),
        lambda: S.CyclicLR(o, 0.1, 1.0, base_momentum=(0.1, 0.2, 0.3)),
        lambda: S.OneCycleLR(o, 1.0),
        lambda: S.OneCycleLR(o, 1.0, total_steps=0),
        lambda: S.OneCycleLR(o, 1.0, total_steps=10.0),
        lambda: S.OneCycleLR(o, 1.0, epochs=0, steps_per_epoch=3),
        lambda: S.OneCycleLR(o, 1.0, epochs=3, steps_per_epoch=-1),
        lambda: S.OneCycleLR(o, 1.0, total_steps=10, pct_start=1),
        lambda: S.OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5),
        lambda: S.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy='exp'),
        lambda: S.OneCycleLR(fresh('Adagrad'), 1.0, total_steps=10),
        lambda: S.OneCycleLR(o, [1.0], total_steps=10),
        lambda: _step_n(S.OneCycleLR(o, 1.0, total_steps=3), 4),
        lambda: S.SequentialLR(o, [S.StepLR(o, 2), S.StepLR(o, 3)], milestones=[2, 4]),
        lambda: S.SequentialLR(o, [S.StepLR(o, 2), S.StepLR(other, 3)], milestones=[2]),
        lambda: S.SequentialLR(other, [S.StepLR(o, 2)], milestones=[]),
        lambda: S.ChainedScheduler([S.StepLR(o, 2), S.StepLR(other, 3)]),
        lambda: S.ReduceLROnPlateau(o, factor=1.0),
        lambda: S.ReduceLROnPlateau(o, mode='median'),
        lambda: S.ReduceLROnPlateau(o, threshold_mode='ratio'),
        lambda: S.ReduceLROnPlateau(o, min_lr=[0.1, 0.2, 0.3]),
        lambda: S.ReduceLROnPlateau(object()),
    ]


def test_errors_as_torch():
    for tfn, efn in zip(_errors(torch), _errors(ember)):
        with pytest.raises(Exception) as texc:
            tfn()
        with pytest.raises(Exception) as eexc:
            efn()
        assert type(eexc.value) is type(texc.value)
        assert str(eexc.value) == str(texc.value)


def test_lbfgs_style_closure_optimizer_is_counted():
    """A scheduler wraps optimizer.step without changing what it returns."""
    p = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    opt = ember.optim.SGD([p], lr=0.5)
    sched = ember.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    p.grad = ember.ones(2)
    assert opt.step(lambda: 3.0) == 3.0
    sched.step()
    assert opt._step_count == 1 and math.isclose(opt.param_groups[0]['lr'], 0.25)
    assert_same(p.detach(), torch.tensor([0.5, 1.5]))
