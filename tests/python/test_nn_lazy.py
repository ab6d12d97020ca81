"""Lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*,
LazyInstanceNorm*) and nn.UninitializedParameter / UninitializedBuffer vs
PyTorch 1.13: placeholders until the first forward, shapes inferred from it,
the class switch, state_dict in both states, and the values once initialized."""
import copy

import pytest
import torch

import ember
from helpers import assert_same, rand, to_ember
from nn_helpers import copy_state

pytestmark = pytest.mark.filterwarnings('ignore:Lazy modules are a new feature')

CASES = [
    ('LazyLinear', lambda m: m.nn.LazyLinear(5), (3, 7)),
    ('LazyLinear no bias', lambda m: m.nn.LazyLinear(4, bias=False), (2, 3, 6)),
    ('LazyConv1d', lambda m: m.nn.LazyConv1d(4, 3, padding=1), (2, 3, 9)),
    ('LazyConv2d groups', lambda m: m.nn.LazyConv2d(4, 3, groups=2, stride=2), (2, 6, 9, 8)),
    ('LazyConv2d unbatched', lambda m: m.nn.LazyConv2d(3, 2, bias=False), (5, 6, 6)),
    ('LazyConv3d', lambda m: m.nn.LazyConv3d(2, 2), (1, 3, 4, 4, 4)),
    ('LazyConvTranspose1d', lambda m: m.nn.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 5)),
    ('LazyConvTranspose2d', lambda m: m.nn.LazyConvTranspose2d(2, 3, output_padding=1, stride=2), (2, 4, 5, 5)),
    ('LazyConvTranspose3d', lambda m: m.nn.LazyConvTranspose3d(2, 2), (1, 3, 3, 3, 3)),
    ('LazyBatchNorm1d', lambda m: m.nn.LazyBatchNorm1d(), (6, 4)),
    ('LazyBatchNorm2d', lambda m: m.nn.LazyBatchNorm2d(momentum=None), (3, 4, 5, 5)),
    ('LazyBatchNorm3d', lambda m: m.nn.LazyBatchNorm3d(affine=False), (2, 3, 2, 3, 3)),
    ('LazyInstanceNorm1d', lambda m: m.nn.LazyInstanceNorm1d(affine=True), (2, 3, 7)),
    ('LazyInstanceNorm2d', lambda m: m.nn.LazyInstanceNorm2d(track_running_stats=True), (2, 3, 5, 5)),
    ('LazyInstanceNorm3d', lambda m: m.nn.LazyInstanceNorm3d(), (2, 3, 2, 3, 3)),
]


@pytest.mark.parametrize('name,make,shape', CASES, ids=[c[0] for c in CASES])
def test_dry_run_infers_shapes_like_torch(name, make, shape):
    tmod, emod = make(torch), make(ember)
    assert repr(emod) == repr(tmod)
    assert emod.has_uninitialized_params() == tmod.has_uninitialized_params() is True
    assert [type(v).__name__ for v in emod.state_dict().values()] == [type(v).__name__ for v in tmod.state_dict().values()]
    x = rand(*shape, seed=1)
    tmod(x)
    emod(to_ember(x))
    assert type(emod).__name__ == type(tmod).__name__  # the class it becomes
    assert repr(emod) == repr(tmod)
    for (k, tv), (ek, ev) in zip(tmod.state_dict().items(), emod.state_dict().items()):
        assert k == ek and tuple(ev.shape) == tuple(tv.shape) and type(ev).__name__ == type(tv).__name__
    assert [type(p).__name__ for p in emod.parameters()] == ['Parameter'] * len(list(tmod.parameters()))
    assert not hasattr(emod, '_initialize_hook') and not emod._forward_pre_hooks


@pytest.mark.parametrize('name,make,shape', CASES, ids=[c[0] for c in CASES])
def test_loading_torchs_state_materializes_then_matches(name, make, shape):
    """A lazy Ember module loads an initialized torch state (materializing its
    placeholders from the state's shapes), then computes what torch computes."""
    torch.manual_seed(0)
    tmod, emod = make(torch), make(ember)
    x = rand(*shape, seed=2)
    tmod(x)  # dry run: torch's module is initialized
    copy_state(emod, tmod)
    assert not emod.has_uninitialized_params()
    tx, ex = x.clone().requires_grad_(), to_ember(x).requires_grad_()
    tout, eout = tmod(tx), emod(ex)
    assert type(emod).__name__ == type(tmod).__name__
    assert_same(eout, tout, 1e-5, 1e-4)
    g = rand(*tout.shape, seed=3)
    tout.backward(g)
    eout.backward(to_ember(g))
    assert_same(ex.grad, tx.grad, 1e-4, 1e-3)
    eparams = dict(emod.named_parameters())
    for k, p in tmod.named_parameters():
        assert_same(eparams[k].grad, p.grad, 1e-4, 1e-3)


def test_uninitialized_parameter_behaviour():
    p = ember.nn.UninitializedParameter()
    assert repr(p) == repr(torch.nn.UninitializedParameter()) == '<UninitializedParameter>'
    assert repr(ember.nn.UninitializedBuffer()) == '<UninitializedBuffer>'
    assert isinstance(p, ember.nn.Parameter) and p.requires_grad
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        p.shape
    with pytest.raises(RuntimeError, match="Can't share memory"):
        p.share_memory_()
    q = ember.nn.UninitializedParameter(dtype=ember.float64)
    q.materialize((2, 3))
    assert type(q) is ember.nn.Parameter and q.shape == (2, 3) and q.dtype == ember.float64 and q.requires_grad
    b = ember.nn.UninitializedBuffer()
    b.materialize((4,))
    assert type(b) is ember.Tensor and b.shape == (4,)
    assert ember.nn.parameter.is_lazy(ember.nn.UninitializedBuffer()) and not ember.nn.parameter.is_lazy(q)


def test_optimizer_built_before_the_dry_run_sees_the_materialized_parameters():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.LazyLinear(8), ember.nn.ReLU(), ember.nn.LazyLinear(2))
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    x, y = ember.randn(16, 5), ember.randint(0, 2, (16,))
    losses = []
    for _ in range(20):
        loss = ember.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert model[0].weight.shape == (8, 5) and losses[-1] < losses[0]
    assert opt.param_groups[0]['params'][0] is model[0].weight


def test_lazy_errors_and_copies():
    for lib in (torch, ember):
        conv = lib.nn.LazyConv2d(4, 3)
        with pytest.raises(RuntimeError, match='Expected 3D .unbatched. or 4D .batched. input to LazyConv2d'):
            conv(lib.ones(2, 3))
        grouped = lib.nn.LazyConv1d(4, 3, groups=2)
        with pytest.raises(ValueError, match='in_channels must be divisible by groups'):
            grouped(lib.ones(1, 3, 5))
        with pytest.raises(NotImplementedError):
            lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(lib.nn.LazyLinear(2))
    lazy = ember.nn.LazyLinear(3)
    twin = copy.deepcopy(lazy)
    assert twin.weight is not lazy.weight and twin.has_uninitialized_params()
    twin(ember.ones(2, 4))
    assert twin.weight.shape == (3, 4) and lazy.has_uninitialized_params()
    with pytest.warns(UserWarning, match='Lazy modules are a new feature'):
        ember.nn.LazyLinear(1)
