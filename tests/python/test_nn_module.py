"""nn.Module, Parameter, the containers, Linear/Bilinear/Flatten/Unflatten,
F.linear/F.bilinear and nn.init against PyTorch 1.13."""
import copy
import math
import pickle
import re
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, check, check_raises, rand, to_ember, to_torch
from nn_helpers import check_module, copy_state


def ember_repr(text):
    """PyTorch's repr text with Ember's module name (type strings such as 'torch.FloatTensor' are
    the same text in Ember)."""
    return re.sub(r'torch\.(?!\w+Tensor\b)', 'ember.', text)


def same_error(fn):
    """fn(m) raises the same exception type and message with m = torch and m = ember."""
    errors = []
    for m in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(m)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]), (errors[1], errors[0])
    assert ember_repr(str(errors[1])) == ember_repr(str(errors[0]))


# ---- models used across the tests (built the same way from either library) ----
def make_net(m):
    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = m.nn.Linear(4, 3)
            self.register_buffer('running', m.ones(3))
            self.register_buffer('scratch', m.zeros(2), persistent=False)

        def forward(self, x):
            return self.fc(x) * self.running

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.seq = m.nn.Sequential(m.nn.Linear(3, 5), m.nn.Identity(), m.nn.Linear(5, 2, bias=False))
            self.scale = m.nn.Parameter(m.ones(()))

        def forward(self, x):
            return self.seq(self.block(x)) * self.scale
    return Net()


# ---- Parameter -------------------------------------------------------------------
def test_parameter_basics():
    p = ember.nn.Parameter(ember.ones(2, 3))
    assert isinstance(p, ember.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(2, 3)))
    assert repr(ember.nn.Parameter()) == repr(torch.nn.Parameter())
    assert repr(ember.nn.Parameter(ember.ones(2), requires_grad=False)) == \
        repr(torch.nn.Parameter(torch.ones(2), requires_grad=False))
    x = ember.ones(2, requires_grad=True)
    q = ember.nn.Parameter(x * 2)  # cut from the graph
    assert q.is_leaf and q.grad_fn is None
    d = copy.deepcopy(p)
    assert type(d) is ember.nn.Parameter and d is not p and d.requires_grad
    assert_same(d.detach(), torch.ones(2, 3))


# ---- registration ------------------------------------------------------------------
def test_registration_by_assignment():
    net = make_net(ember)
    tnet = make_net(torch)
    for fn in ('named_parameters', 'named_buffers', 'named_modules', 'named_children'):
        assert [n for n, _ in getattr(net, fn)()] == [n for n, _ in getattr(tnet, fn)()], fn
    assert list(net.state_dict()) == list(tnet.state_dict())
    assert net.state_dict()._metadata == tnet.state_dict()._metadata
    assert [n for n, _ in net.named_parameters(prefix='p', recurse=False)] == ['p.scale']
    assert len(list(net.parameters())) == 6 and len(list(net.buffers())) == 2
    assert [n for n, _ in net.block.named_buffers(recurse=False)] == ['running', 'scratch']
    assert sorted(dir(net)) == dir(net) and 'block' in dir(net) and 'scale' in dir(net)
    assert net.get_submodule('seq.2') is net.seq[2]
    assert net.get_parameter('block.fc.bias') is net.block.fc.bias
    assert net.get_buffer('block.running') is net.block.running


def test_reassignment_moves_between_tables():
    for m in (torch, ember):
        mod = m.nn.Module()
        mod.x = m.nn.Linear(1, 1)
        mod.x = m.nn.Parameter(m.ones(1))  # a parameter replaces the module
        assert 'x' in mod._parameters and 'x' not in mod._modules
        mod.x = None
        assert mod._parameters['x'] is None
        del mod.x
        mod.x = m.nn.Linear(1, 1)
        mod.register_buffer('b', m.ones(1))
        mod.b = m.zeros(2)  # a tensor assigned to a buffer name stays a buffer
        assert mod._buffers['b'].shape == (2,)
        mod.b = None
        assert mod._buffers['b'] is None and 'b' not in mod.state_dict()
        mod.x = None
        assert mod._modules['x'] is None
        del mod.x, mod.b
        assert not hasattr(mod, 'x') and not hasattr(mod, 'b')
        mod.plain = 3
        assert mod.plain == 3 and 'plain' in mod.__dict__


@pytest.mark.parametrize('case', [
    lambda m: m.nn.Module().register_buffer(1, m.ones(1)),
    lambda m: m.nn.Module().register_buffer('a.b', m.ones(1)),
    lambda m: m.nn.Module().register_buffer('', m.ones(1)),
    lambda m: m.nn.Module().register_buffer('x', 3),
    lambda m: m.nn.Module().register_buffer('training', m.ones(1)),
    lambda m: m.nn.Module().register_parameter('w', m.ones(1)),
    lambda m: m.nn.Module().register_parameter('a.b', m.nn.Parameter(m.ones(1))),
    lambda m: m.nn.Module().register_parameter('', None),
    lambda m: m.nn.Module().add_module('x', 3),
    lambda m: m.nn.Module().add_module('a.b', m.nn.Module()),
    lambda m: m.nn.Module().add_module('', m.nn.Module()),
    lambda m: m.nn.Module().add_module(3, m.nn.Module()),
    lambda m: m.nn.Module().add_module('training', m.nn.Module()),
    lambda m: m.nn.Module().missing,
    lambda m: m.nn.Module()(m.ones(1)),
    lambda m: m.nn.Module().train(1),
    lambda m: m.nn.Linear(2, 2).get_submodule('nothing'),
    lambda m: m.nn.Linear(2, 2).get_parameter('in_features'),
    lambda m: m.nn.Sequential(m.nn.Linear(2, 2)).get_buffer('0.weight'),
    lambda m: m.nn.Linear(2, 2).to(m.int64),
    lambda m: m.nn.Linear(2, 2).load_state_dict([1]),
])
def test_registration_errors(case):
    same_error(case)


def test_assignment_errors():
    def assign_tensor_to_parameter(m):
        mod = m.nn.Linear(2, 2)
        mod.weight = m.ones(2, 2)

    def assign_int_to_module(m):
        mod = m.nn.Sequential(m.nn.Linear(2, 2))
        setattr(mod, '0', 3)

    def assign_int_to_buffer(m):
        mod = m.nn.Module()
        mod.register_buffer('b', m.ones(1))
        mod.b = 3

    def non_leaf_parameter(m):
        mod = m.nn.Module()
        p = m.nn.Parameter(m.ones(1))
        mod.register_parameter('p', p)
        q = p * 2
        q.__class__ = m.nn.Parameter
        mod.register_parameter('q', q)

    def before_init(m):
        class Bad(m.nn.Module):
            def __init__(self):
                self.w = m.nn.Parameter(m.ones(1))
        Bad()

    for case in (assign_tensor_to_parameter, assign_int_to_module, assign_int_to_buffer, before_init):
        same_error(case)
    with pytest.raises(ValueError, match='Cannot assign non-leaf Tensor'):
        non_leaf_parameter(ember)


def test_dedup_and_remove_duplicate():
    for m in (torch, ember):
        shared = m.nn.Linear(2, 2)
        seq = m.nn.Sequential(shared, shared, m.nn.Linear(2, 2))
        seq[2].weight = shared.weight
        assert [n for n, _ in seq.named_modules()] == ['', '0', '2']
        assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ['', '0', '1', '2']
        assert [n for n, _ in seq.named_parameters()] == ['0.weight', '0.bias', '2.bias']
        assert len(list(seq.children())) == 2
        assert list(seq.state_dict()) == ['0.weight', '0.bias', '1.weight', '1.bias', '2.weight', '2.bias']
    seq = ember.nn.Sequential(shared, shared)
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == ['0.weight', '0.bias', '1.weight',
                                                                            '1.bias']
    memo = {seq[0]}
    assert [n for n, _ in seq.named_modules(memo=memo)] == ['']


# ---- state_dict ------------------------------------------------------------------
def test_state_dict_round_trip_both_ways():
    x = rand(6, 4, seed=1)
    torch.manual_seed(0)
    tnet, enet = make_net(torch), make_net(ember)
    with torch.no_grad():
        tnet.block.running.uniform_(0.5, 2)
        tnet.scale.fill_(1.5)
    copy_state(enet, tnet)  # torch -> ember
    assert_same(enet(to_ember(x)), tnet(x))
    for name, t in tnet.state_dict().items():
        assert_same(enet.state_dict()[name], t)
    ember.manual_seed(3)
    enet2 = make_net(ember)
    tnet2 = make_net(torch)
    result = tnet2.load_state_dict({k: to_torch(v) for k, v in enet2.state_dict().items()})  # ember -> torch
    assert str(result) == '<All keys matched successfully>'
    assert_same(enet2(to_ember(x)), tnet2(x))


def test_state_dict_options():
    net = ember.nn.Linear(2, 3)
    sd = net.state_dict()
    assert not sd['weight'].requires_grad and isinstance(sd, OrderedDict)
    assert net.state_dict(keep_vars=True)['weight'] is net.weight
    assert list(net.state_dict(prefix='m.')) == ['m.weight', 'm.bias']
    dest = OrderedDict()
    assert net.state_dict(destination=dest) is dest
    with pytest.warns(UserWarning):
        assert list(net.state_dict(None, 'p.')) == ['p.weight', 'p.bias']
    sd['weight'][0, 0] = 7.0  # detached, but shares memory
    assert net.weight[0, 0].item() == 7.0


def test_load_state_dict_strictness():
    def load(m, sd_edit, strict=True):
        mod = make_net(m)
        sd = mod.state_dict()
        sd_edit(sd, m)
        return mod.load_state_dict(sd, strict=strict)

    cases = [
        lambda sd, m: sd.pop('block.fc.weight'),
        lambda sd, m: sd.__setitem__('extra.w', m.ones(1)),
        lambda sd, m: (sd.pop('scale'), sd.__setitem__('seq.9.weight', m.ones(1))),
        lambda sd, m: sd.__setitem__('seq.0.weight', m.ones(5, 4)),
        lambda sd, m: sd.__setitem__('seq.0.bias', 3),
    ]
    for edit in cases:
        same_error(lambda m: load(m, edit))
    for edit in cases[:3]:
        got, want = load(ember, edit, strict=False), load(torch, edit, strict=False)
        assert got.missing_keys == want.missing_keys and got.unexpected_keys == want.unexpected_keys
        assert str(got) == str(want)
    same_error(lambda m: load(m, cases[3], strict=False))  # shape mismatch is an error even when not strict


def test_load_state_dict_scalar_from_1d_and_hooks():
    net = make_net(ember)
    sd = net.state_dict()
    sd['scale'] = ember.full((1,), 2.0)  # an old checkpoint's 1-element tensor loads into a 0-d parameter
    calls = []
    net.register_load_state_dict_post_hook(lambda mod, keys: calls.append((type(mod).__name__, list(keys[0]))))
    net._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: calls.append(('pre', prefix)))
    net.load_state_dict(sd)
    assert net.scale.item() == 2.0
    assert calls == [('pre', ''), ('Net', [])]
    net._register_state_dict_hook(lambda mod, dest, prefix, meta: dest.__setitem__('added', 1))
    assert net.state_dict()['added'] == 1


def test_extra_state():
    class WithExtra(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {'value': self.value}

        def set_extra_state(self, state):
            self.value = state['value']

    a, b = WithExtra(), WithExtra()
    a.value = 5
    sd = a.state_dict()
    assert sd['_extra_state'] == {'value': 5}
    b.load_state_dict(sd)
    assert b.value == 5
    with pytest.raises(RuntimeError, match='Missing key.*_extra_state'):
        b.load_state_dict({})
    with pytest.raises(RuntimeError, match='Unexpected key.*_extra_state'):
        ember.nn.Module().load_state_dict({'_extra_state': 1})


# ---- hooks -----------------------------------------------------------------------
def test_forward_hooks_order_modification_removal():
    log = []
    for m in (torch, ember):
        lin = m.nn.Linear(2, 2)
        with m.no_grad():
            lin.weight.copy_(m.eye(2))
            lin.bias.zero_()
        calls = []
        h1 = lin.register_forward_pre_hook(lambda mod, inp: calls.append('pre1'))
        h2 = lin.register_forward_pre_hook(lambda mod, inp: (calls.append('pre2'), inp[0] * 2)[1])  # not a tuple
        h3 = lin.register_forward_hook(lambda mod, inp, out: calls.append(('fwd', float(inp[0].sum()))))
        h4 = lin.register_forward_hook(lambda mod, inp, out: out + 1)
        out = lin(m.ones(1, 2))
        calls.append(float(out.sum()))
        for h in (h2, h4):
            h.remove()
        h2.remove()  # twice is harmless
        calls.append(float(lin(m.ones(1, 2)).sum()))
        with h1, h3:
            pass  # a with-block removes the hook at its end
        calls.append(float(lin(m.ones(1, 2)).sum()))
        assert not lin._forward_hooks and not lin._forward_pre_hooks
        log.append(calls)
    assert log[0] == log[1]


def test_global_forward_hooks():
    from ember.nn.modules import module as emodule
    calls = []
    h1 = emodule.register_module_forward_pre_hook(lambda mod, inp: calls.append(('pre', type(mod).__name__)))
    h2 = emodule.register_module_forward_hook(lambda mod, inp, out: calls.append(('post', type(mod).__name__)))
    try:
        ember.nn.Sequential(ember.nn.Identity())(ember.ones(1))
    finally:
        h1.remove()
        h2.remove()
    assert calls == [('pre', 'Sequential'), ('pre', 'Identity'), ('post', 'Identity'), ('post', 'Sequential')]


class TwoInTwoOut:
    """forward(x, k, y) -> (x @ W + y, non-tensor, y * 3): grad_input has None for k."""

    @staticmethod
    def make(m):
        class Mod(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(3, 3)

            def forward(self, x, k, y):
                return self.lin(x) * k + y, 'tag', y * 3
        return Mod()


def run_backward_hook(m, x, y, replace):
    torch.manual_seed(0)
    mod = TwoInTwoOut.make(m)
    if m is ember:
        copy_state(mod, TwoInTwoOut.make(torch))
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((module is mod, [None if g is None else to_torch(g) if m is ember else g for g in grad_input],
                     [None if g is None else to_torch(g) if m is ember else g for g in grad_output]))
        if replace:
            return tuple(None if g is None else g * 10 for g in grad_input)

    mod.register_full_backward_hook(hook)
    xs = (x.clone().requires_grad_(), y.clone().requires_grad_()) if m is torch else \
        (to_ember(x).requires_grad_(), to_ember(y).requires_grad_())
    a, tag, b = mod(xs[0], 2.0, xs[1])
    assert tag == 'tag'
    (a.sum() * 2 + (b * b).sum()).backward()
    grads = [to_torch(t.grad) if m is ember else t.grad for t in xs]
    return seen, grads


@pytest.mark.parametrize('replace', [False, True])
def test_full_backward_hook_values(replace):
    x, y = rand(2, 3, seed=4), rand(2, 3, seed=5)
    tseen, tgrads = run_backward_hook(torch, x, y, replace)
    eseen, egrads = run_backward_hook(ember, x, y, replace)
    assert len(eseen) == len(tseen) == 1
    (e_is, e_gin, e_gout), (t_is, t_gin, t_gout) = eseen[0], tseen[0]
    assert e_is and t_is
    for got, want in zip(e_gin + e_gout, t_gin + t_gout):
        assert (got is None) == (want is None)
        if want is not None:
            assert torch.allclose(got, want, atol=1e-5)
    for got, want in zip(egrads, tgrads):
        assert torch.allclose(got, want, atol=1e-5)


def test_full_backward_hook_inputs_without_grad():
    def run(m):
        lin = m.nn.Linear(2, 2)
        seen = []
        lin.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go[0].shape)))
        lin(m.ones(3, 2)).sum().backward()
        return seen
    (tgi, tshape), = run(torch)
    (egi, eshape), = run(ember)
    assert tgi == egi == (None,) and tuple(tshape) == tuple(eshape)


def test_full_backward_hook_bad_return_and_removal():
    lin = ember.nn.Linear(2, 2)
    h = lin.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = ember.ones(1, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match='invalid number of grad_input'):
        lin(x).sum().backward()
    h.remove()
    lin(x).sum().backward()
    assert x.grad is not None


# ---- modes, grads, conversion ------------------------------------------------------
def test_train_eval_and_requires_grad():
    net = make_net(ember)
    assert all(mod.training for mod in net.modules())
    assert net.eval() is net and not any(mod.training for mod in net.modules())
    net.train()
    assert all(mod.training for mod in net.modules())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad():
    lin = ember.nn.Linear(2, 2)
    lin(ember.ones(1, 2)).sum().backward()
    lin.zero_grad()  # 1.13's default keeps zeroed tensors
    assert lin.weight.grad is not None and lin.weight.grad.abs().sum().item() == 0
    lin.zero_grad(set_to_none=True)
    assert lin.weight.grad is None and lin.bias.grad is None


def test_dtype_conversion():
    net = make_net(ember)
    weight = net.block.fc.weight
    net.block.fc(ember.ones(1, 4)).sum().backward()
    assert net.double() is net
    assert weight is net.block.fc.weight and isinstance(weight, ember.nn.Parameter)  # identity kept
    assert weight.dtype == ember.float64 and weight.grad.dtype == ember.float64
    assert net.block.running.dtype == ember.float64
    net.to(ember.float32)
    assert weight.dtype == ember.float32
    net.to(dtype=ember.float16)
    assert weight.dtype == ember.float16
    net.to('cpu', ember.bfloat16)
    assert weight.dtype == ember.bfloat16
    net.to(ember.zeros(1, dtype=ember.float64))
    assert weight.dtype == ember.float64
    net.float().half()
    assert weight.dtype == ember.float16
    net.type(ember.float32)
    assert weight.dtype == ember.float32
    idx = ember.nn.Module()
    idx.register_buffer('i', ember.zeros(2, dtype=ember.int64))
    idx.double()
    assert idx.i.dtype == ember.int64  # only floating tensors are cast
    assert net.cpu() is net
    seen = []
    assert net.apply(lambda mod: seen.append(type(mod).__name__)) is net
    assert seen == ['Linear', 'Block', 'Linear', 'Identity', 'Linear', 'Sequential', 'Net']


def test_pickle_and_deepcopy_state():
    net = make_net(ember)
    clone = copy.deepcopy(net)
    assert clone.block.fc.weight is not net.block.fc.weight
    assert_same(clone.block.fc.weight.detach(), to_torch(net.block.fc.weight))
    state = net.__getstate__()
    del state['_forward_pre_hooks'], state['_is_full_backward_hook']
    fresh = object.__new__(type(net))
    fresh.__setstate__(state)
    assert fresh._forward_pre_hooks == OrderedDict() and fresh._is_full_backward_hook is None
    h = ember.nn.Linear(1, 1).register_forward_hook(lambda *a: None)
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.id == h.id


# ---- repr --------------------------------------------------------------------------
def test_repr_matches_torch():
    for make in (make_net,
                 lambda m: m.nn.Sequential(OrderedDict(a=m.nn.Linear(2, 3), b=m.nn.Flatten(0, 1),
                                                       c=m.nn.Unflatten(1, (2, 2)))),
                 lambda m: m.nn.ModuleList([m.nn.Bilinear(2, 3, 4), m.nn.Sequential(), None]),
                 lambda m: m.nn.ModuleDict({'x': m.nn.Linear(1, 1, bias=False), 'y': m.nn.Identity()}),
                 lambda m: m.nn.ParameterList([m.nn.Parameter(m.ones(2, 3)), m.ones(1), 'text']),
                 lambda m: m.nn.ParameterDict({'b': m.ones(2, dtype=m.float64), 'a': m.nn.Parameter(m.ones(4))}),
                 lambda m: m.nn.Module()):
        assert repr(make(ember)) == ember_repr(repr(make(torch)))


# ---- containers --------------------------------------------------------------------
def test_sequential():
    for m in (torch, ember):
        a, b, c = m.nn.Linear(1, 1), m.nn.Identity(), m.nn.Flatten()
        seq = m.nn.Sequential(a, b, c)
        assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
        sl = seq[1:]
        assert type(sl) is m.nn.Sequential and list(sl) == [b, c] and list(sl._modules) == ['1', '2']
        seq[1] = m.nn.Linear(2, 2)
        assert seq[1] is not b
        del seq[0]
        assert list(seq._modules) == ['0', '1'] and seq[1] is c
        seq.append(a).insert(0, b)
        assert list(seq) == [b, seq[1], c, a]
        assert seq.pop(1) is not b and len(seq) == 3
        seq.extend(m.nn.Sequential(a))
        assert len(seq + m.nn.Sequential(b)) == 5 and len(seq * 2) == 8
        del seq[1:3]
        assert list(seq) == [b, a]
        with pytest.raises(IndexError):
            seq[5]
        with pytest.raises(ValueError):
            seq + 1
        assert '0' not in dir(seq)
    x = rand(2, 3, seed=2)
    check_module(lambda m: m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Linear(4, 2)), x)


def test_module_list_and_dict():
    for m in (torch, ember):
        a, b = m.nn.Linear(1, 1), m.nn.Identity()
        ml = m.nn.ModuleList([a])
        ml.append(b).extend([a])
        assert len(ml) == 3 and ml[-1] is a and list(ml[:2]) == [a, b]
        ml.insert(1, m.nn.Flatten())
        assert len(ml) == 4 and isinstance(ml[1], m.nn.Flatten)
        del ml[0]
        assert list(ml._modules) == ['0', '1', '2']
        ml += [b]
        assert len(ml) == 4 and len(ml + ml) == 8 and ml.pop(0) is not a
        md = m.nn.ModuleDict([('x', a), ('y', b)])
        assert list(md) == ['x', 'y'] and 'x' in md and md['y'] is b
        md.update({'z': a})
        assert list(md.keys()) == ['x', 'y', 'z'] and md.pop('x') is a and len(md) == 2
        md.clear()
        assert len(md) == 0
        with pytest.raises(TypeError):
            ml.extend(3)
        with pytest.raises(ValueError):
            md.update([('a', b, 1)])
    same_error(lambda m: m.nn.ModuleList()[0])


def test_parameter_list_and_dict():
    for m in (torch, ember):
        pl = m.nn.ParameterList([m.ones(2), m.nn.Parameter(m.zeros(3))])
        assert all(isinstance(p, m.nn.Parameter) for p in pl) and len(pl) == 2
        pl.append(m.ones(1))
        assert [n for n, _ in pl.named_parameters()] == ['0', '1', '2']
        assert len(pl[1:]) == 2
        pl[0] = m.zeros(5)
        assert pl[0].shape == (5,)
        pd = m.nn.ParameterDict({'b': m.ones(1), 'a': m.ones(2)})
        assert list(pd) == ['a', 'b']  # a plain dict is sorted
        pd['c'] = m.ones(3)
        assert isinstance(pd['c'], m.nn.Parameter) and 'c' in pd
        assert [n for n, _ in pd.named_parameters()] == ['a', 'b', 'c']
        assert pd.pop('a').shape == (2,) and pd.popitem()[0] == 'c' and len(pd) == 1
        assert pd.get('zz', 4) == 4 and len(pd | m.nn.ParameterDict({'q': m.ones(1)})) == 2
        assert pd.setdefault('s', m.ones(1)).shape == (1,)
        with pytest.raises(RuntimeError):
            pl(1)
    same_error(lambda m: m.nn.ParameterDict()[3])


# ---- Linear, Bilinear, Flatten, Unflatten --------------------------------------------
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_linear_module(dtype):
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == 'float32' else dict(atol=1e-10, rtol=1e-9)
    for shape in [(5, 3), (2, 4, 3), (3,), (2, 3, 3)]:
        for bias in (True, False):
            x = rand(*shape, dtype=dtype, seed=len(shape), noncontig=shape == (2, 3, 3))
            check_module(lambda m: m.nn.Linear(3, 4, bias=bias, dtype=getattr(m, dtype)), x, **tol)
    emod, tmod = check_module(lambda m: m.nn.Linear(3, 0), rand(2, 3))
    assert repr(emod) == repr(tmod)
    assert repr(ember.nn.Linear(3, 4, bias=False)) == repr(torch.nn.Linear(3, 4, bias=False))


def test_bilinear_module():
    for bias in (True, False):
        x1, x2 = rand(4, 3, seed=1), rand(4, 5, seed=2)
        check_module(lambda m: m.nn.Bilinear(3, 5, 2, bias=bias), x1, x2)
    check_module(lambda m: m.nn.Bilinear(3, 5, 2, dtype=m.float64), rand(2, 6, 3, dtype='float64', seed=3),
                 rand(2, 6, 5, dtype='float64', seed=4, noncontig=True), atol=1e-10, rtol=1e-9)
    check_module(lambda m: m.nn.Bilinear(3, 5, 2), rand(3), rand(5))
    assert repr(ember.nn.Bilinear(3, 5, 2)) == repr(torch.nn.Bilinear(3, 5, 2))


def test_flatten_unflatten():
    x = rand(2, 3, 4, 5, seed=7)
    for args in [(), (0,), (1, 2), (0, -2), (2, 3)]:
        emod, tmod = check_module(lambda m: m.nn.Flatten(*args), x)
        assert repr(emod) == repr(tmod)
    for dim, size in [(1, (3, 1)), (-1, [5, 1]), (2, (2, -1))]:
        emod, tmod = check_module(lambda m: m.nn.Unflatten(dim, size), x)
        assert repr(emod) == repr(tmod)
    same_error(lambda m: m.nn.Unflatten(1, 3))
    same_error(lambda m: m.nn.Unflatten(1, (3, 1.0)))
    check_module(lambda m: m.nn.Identity(54, unused='x'), x)


def test_linear_functional():
    for shapes in [((5, 3), (4, 3), (4,)), ((2, 5, 3), (4, 3), (4,)), ((3,), (4, 3), (4,)), ((5, 3), (4, 3), None),
                   ((3,), (3,), None), ((2, 3), (3,), None), ((0, 3), (4, 3), (4,)), ((5, 3), (4, 3), (1,))]:
        xs, ws, bs = shapes
        ins = [rand(*xs, seed=1, dtype='float64'), rand(*ws, seed=2, dtype='float64')]
        if bs is not None:
            ins.append(rand(*bs, seed=3, dtype='float64'))
        check(lambda *a, m: m.nn.functional.linear(*a), *ins, grad=True)
    bad = [((2, 3), (4, 5), None), ((2, 3), (3,), (1,)), ((2, 3), (4, 3), (5,)), ((3,), (3,), (4,)), ((2, 3), (4, 3, 1), None)]
    for xs, ws, bs in bad:
        ins = [rand(*xs), rand(*ws)] + ([rand(*bs)] if bs else [])
        check_raises(lambda *a, m: m.nn.functional.linear(*a), *ins)
    check_raises(lambda x, w, m: m.nn.functional.linear(x, w), rand(2, 3), rand(4, 3, dtype='float64'))


def test_bilinear_functional():
    x1, x2, w, b = (rand(2, 3, dtype='float64', seed=1), rand(2, 4, dtype='float64', seed=2),
                    rand(5, 3, 4, dtype='float64', seed=3), rand(5, dtype='float64', seed=4))
    check(lambda a, c, d, e, m: m.nn.functional.bilinear(a, c, d, e), x1, x2, w, b, grad=True)
    check(lambda a, c, d, m: m.nn.functional.bilinear(a, c, d), x1, x2, w, grad=True)
    for args in [(rand(2, 3), rand(2, 5), rand(5, 3, 4)), (rand(2, 3), rand(3, 4), rand(5, 3, 4)),
                 (rand(2, 3), rand(1, 2, 4), rand(5, 3, 4)), (rand(2, 2), rand(2, 4), rand(5, 3, 4)),
                 (rand(2, 3), rand(2, 4), rand(5, 3, 4), rand(4))]:
        same_error(lambda m: m.nn.functional.bilinear(*(to_ember(a) if m is ember else a for a in args)))


# ---- init ----------------------------------------------------------------------------
def moments(t):
    a = np.asarray(to_torch(t).double())
    return a.mean(), a.std(), a.min(), a.max()


def test_calculate_gain_and_fans():
    for args in [('linear',), ('conv2d',), ('sigmoid',), ('tanh',), ('relu',), ('leaky_relu',), ('leaky_relu', 0.2),
                 ('leaky_relu', 3), ('selu',)]:
        assert ember.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    same_error(lambda m: m.nn.init.calculate_gain('leaky_relu', True))
    same_error(lambda m: m.nn.init.calculate_gain('softsign'))
    for shape in [(3, 4), (8, 4, 3, 3), (2, 5, 7)]:
        assert ember.nn.init._calculate_fan_in_and_fan_out(ember.empty(shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    same_error(lambda m: m.nn.init._calculate_fan_in_and_fan_out(m.empty(3)))
    same_error(lambda m: m.nn.init.kaiming_uniform_(m.empty(3, 3), mode='fan_avg'))


def test_init_distributions():
    init = ember.nn.init
    shape = (400, 250)
    fan_in, fan_out = 250, 400
    t = ember.empty(shape)
    cases = [
        (lambda: init.uniform_(t, -2, 3), 0.5, 5 / math.sqrt(12), -2, 3),
        (lambda: init.normal_(t, 1, 2), 1, 2, None, None),
        (lambda: init.xavier_uniform_(t, gain=2), 0, 2 * math.sqrt(2 / (fan_in + fan_out)), None, None),
        (lambda: init.xavier_normal_(t), 0, math.sqrt(2 / (fan_in + fan_out)), None, None),
        (lambda: init.kaiming_uniform_(t, a=math.sqrt(5)), 0, math.sqrt(1 / 3) / math.sqrt(fan_in), None, None),
        (lambda: init.kaiming_normal_(t, mode='fan_out', nonlinearity='relu'), 0, math.sqrt(2 / fan_out), None, None),
    ]
    for fill, mean, std, lo, hi in cases:
        assert fill() is t
        m, s, mn, mx = moments(t)
        assert abs(m - mean) < 5 * std / math.sqrt(t.numel()) + 1e-9
        assert abs(s / std - 1) < 0.02
        if lo is not None:
            assert lo <= mn and mx <= hi
    init.kaiming_uniform_(t, a=math.sqrt(5))  # Linear's weight init: within +-1/sqrt(fan_in)
    assert moments(t)[3] <= 1 / math.sqrt(fan_in) and moments(t)[2] >= -1 / math.sqrt(fan_in)
    init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    m, s, mn, mx = moments(t)
    ref = torch.nn.init.trunc_normal_(torch.empty(shape, dtype=torch.float64), 0.5, 1.0, -1.0, 1.5)
    assert mn >= -1 and mx <= 1.5 and abs(m - ref.mean().item()) < 0.01 and abs(s - ref.std().item()) < 0.01
    w = ember.empty(1000, 100, requires_grad=True)
    init.normal_(w)
    assert w.requires_grad and w.grad_fn is None  # filled without recording
    with pytest.warns(UserWarning, match='zero-element'):
        init.kaiming_normal_(ember.empty(0, 3))
    with pytest.warns(UserWarning, match='more than 2 std'):
        init.trunc_normal_(ember.empty(3), mean=10)
    with pytest.warns(UserWarning, match='deprecated'):
        init.uniform(ember.empty(3))
    lin = ember.nn.Linear(300, 200)
    m, s, mn, mx = moments(lin.bias)
    assert -1 / math.sqrt(300) <= mn and mx <= 1 / math.sqrt(300) and abs(s * math.sqrt(300) - 1 / math.sqrt(3)) < 0.05


def test_deterministic_inits():
    init = ember.nn.init
    for fill in (lambda m, t: m.nn.init.constant_(t, 0.5), lambda m, t: m.nn.init.ones_(t),
                 lambda m, t: m.nn.init.zeros_(t), lambda m, t: m.nn.init.eye_(t)):
        assert_same(fill(ember, ember.empty(3, 5)), fill(torch, torch.empty(3, 5)))
    for shape, groups in [((4, 3, 3), 1), ((6, 2, 3, 3), 2), ((4, 4, 1, 3, 3), 1), ((2, 5, 3), 1)]:
        assert_same(init.dirac_(ember.empty(shape), groups), torch.nn.init.dirac_(torch.empty(shape), groups))
    same_error(lambda m: m.nn.init.eye_(m.empty(3)))
    same_error(lambda m: m.nn.init.dirac_(m.empty(3, 3)))
    same_error(lambda m: m.nn.init.dirac_(m.empty(3, 3, 3), groups=2))


def test_orthogonal_and_sparse():
    init = ember.nn.init
    for shape, gain in [((6, 6), 1), ((4, 9), 2), ((9, 4), 1), ((3, 2, 2, 2), 0.5)]:
        t = init.orthogonal_(ember.empty(shape), gain)
        a = np.asarray(to_torch(t).double()).reshape(shape[0], -1)
        gram = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a
        assert np.allclose(gram, gain ** 2 * np.eye(gram.shape[0]), atol=1e-5)
    same_error(lambda m: m.nn.init.orthogonal_(m.empty(3)))
    assert init.orthogonal_(ember.empty(0, 3)).shape == (0, 3)
    t = init.sparse_(ember.empty(10, 20), 0.3)
    zeros = np.asarray(to_torch(t)) == 0
    assert (zeros.sum(0) >= 3).all()
    same_error(lambda m: m.nn.init.sparse_(m.empty(3), 0.1))


# ---- nn.utils: convert_parameters, weight_norm -----------------------------------------
def test_parameters_vector_round_trip():
    torch.manual_seed(0)
    tnet, enet = make_net(torch), make_net(ember)
    copy_state(enet, tnet)
    tvec = torch.nn.utils.parameters_to_vector(tnet.parameters())
    evec = ember.nn.utils.parameters_to_vector(enet.parameters())
    assert_same(evec, tvec)
    new = rand(tvec.numel(), seed=9)
    torch.nn.utils.vector_to_parameters(new, tnet.parameters())
    ember.nn.utils.vector_to_parameters(to_ember(new), enet.parameters())
    for (name, t), (_, e) in zip(tnet.named_parameters(), enet.named_parameters()):
        assert_same(e.detach(), t.detach())
    same_error(lambda m: m.nn.utils.vector_to_parameters([1.0], m.nn.Linear(1, 1).parameters()))


@pytest.mark.parametrize('dim', [0, 1, None, -2])
def test_weight_norm(dim):
    x = rand(5, 3, seed=11)

    def make(m):
        return m.nn.utils.weight_norm(m.nn.Linear(3, 4), dim=dim)
    emod, tmod = check_module(make, x)
    assert list(emod.state_dict()) == list(tmod.state_dict()) == ['bias', 'weight_g', 'weight_v']
    assert emod.weight_g.shape == tmod.weight_g.shape
    ember.nn.utils.remove_weight_norm(emod)
    torch.nn.utils.remove_weight_norm(tmod)
    assert list(emod.state_dict()) == ['bias', 'weight'] and isinstance(emod.weight, ember.nn.Parameter)
    assert_same(emod.weight.detach(), tmod.weight.detach())
    same_error(lambda m: m.nn.utils.remove_weight_norm(m.nn.Linear(1, 1)))
    same_error(lambda m: m.nn.utils.weight_norm(m.nn.utils.weight_norm(m.nn.Linear(1, 1))))
