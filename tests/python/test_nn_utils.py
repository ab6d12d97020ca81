"""ember.nn.utils' parametrize, parametrizations.spectral_norm, the hook
spectral_norm, fusion, stateless.functional_call and skip_init against
torch.nn.utils 1.13 (values, gradients in float64, errors)."""
import copy
import pickle

import pytest
import torch

import ember
from helpers import assert_same, to_ember


def linears(dtype=torch.float64, n_in=4, n_out=3):
    torch.manual_seed(0)
    t = torch.nn.Linear(n_in, n_out).to(dtype)
    e = ember.nn.Linear(n_in, n_out).to(getattr(ember, str(dtype).split('.')[-1]))
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return t, e


class Symmetric:
    """A factory for the same parametrization in both libraries."""
    @staticmethod
    def make(m):
        class Sym(m.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(0, 1)

            def right_inverse(self, a):
                return a.triu()
        return Sym()


def scaler(m, k):
    class Scale(m.nn.Module):
        def forward(self, x):
            return x * k

        def right_inverse(self, y):
            return y / k
    return Scale()


def square_pair(dtype=torch.float64):
    torch.manual_seed(1)
    t = torch.nn.Linear(3, 3).to(dtype)
    e = ember.nn.Linear(3, 3).double()
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    return t, e


def test_register_parametrization_layout_and_values():
    t, e = square_pair()
    for m, mod in ((torch, t), (ember, e)):
        w = mod.weight
        m.nn.utils.parametrize.register_parametrization(mod, 'weight', Symmetric.make(m))
        assert m.nn.utils.parametrize.is_parametrized(mod)
        assert m.nn.utils.parametrize.is_parametrized(mod, 'weight')
        assert not m.nn.utils.parametrize.is_parametrized(mod, 'bias')
        assert type(mod).__name__ == 'ParametrizedLinear'
        assert m.nn.utils.parametrize.type_before_parametrizations(mod) is m.nn.Linear
        assert mod.parametrizations.weight.original is w  # the same Parameter object
        assert 'weight' not in mod._parameters
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert_same(e.weight.detach(), t.weight.detach())
    assert_same(e.parametrizations.weight.original.detach(), t.parametrizations.weight.original.detach())
    x = torch.rand(2, 3, dtype=torch.float64)
    t(x).sum().backward()
    e(to_ember(x)).sum().backward()
    assert_same(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)


def test_assignment_uses_right_inverse_and_chains():
    t, e = square_pair()
    a = torch.rand(3, 3, dtype=torch.float64)
    for m, mod in ((torch, t), (ember, e)):
        m.nn.utils.parametrize.register_parametrization(mod, 'weight', Symmetric.make(m))
        m.nn.utils.parametrize.register_parametrization(mod, 'weight', scaler(m, 2.0))
        assert len(mod.parametrizations.weight) == 2
        mod.weight = a if m is torch else to_ember(a)
    assert_same(e.parametrizations.weight.original.detach(), t.parametrizations.weight.original.detach())
    assert_same(e.weight.detach(), t.weight.detach())


@pytest.mark.parametrize('leave', [True, False])
def test_remove_parametrizations(leave):
    t, e = square_pair()
    for m, mod in ((torch, t), (ember, e)):
        original = mod.weight
        m.nn.utils.parametrize.register_parametrization(mod, 'weight', Symmetric.make(m))
        m.nn.utils.parametrize.register_parametrization(mod, 'bias', scaler(m, 3.0))
        m.nn.utils.parametrize.remove_parametrizations(mod, 'weight', leave_parametrized=leave)
        assert type(mod).__name__ == 'ParametrizedLinear'
        m.nn.utils.parametrize.remove_parametrizations(mod, 'bias', leave_parametrized=leave)
        assert type(mod) is m.nn.Linear and not hasattr(mod, 'parametrizations')
        assert mod.weight is original and isinstance(mod.weight, m.nn.Parameter)
    assert_same(e.weight.detach(), t.weight.detach())
    assert_same(e.bias.detach(), t.bias.detach())


def test_cached():
    calls = {}
    for m in (torch, ember):
        class Count(m.nn.Module):
            def forward(self, x):
                calls[m] = calls.get(m, 0) + 1
                return x
        mod = m.nn.Linear(2, 2)
        m.nn.utils.parametrize.register_parametrization(mod, 'weight', Count())
        calls[m] = 0
        with m.nn.utils.parametrize.cached():
            mod.weight
            mod.weight
        mod.weight
    assert calls[ember] == calls[torch] == 2


def test_parametrize_errors_and_copies():
    for m in (torch, ember):
        mod = m.nn.Linear(2, 2)
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with "
                                             "name 'nothing'"):
            m.nn.utils.parametrize.register_parametrization(mod, 'nothing', scaler(m, 2.0))
        with pytest.raises(ValueError, match='does not have a parametrization on weight'):
            m.nn.utils.parametrize.remove_parametrizations(mod, 'weight')

        class Shrink(m.nn.Module):
            def forward(self, x):
                return x[0]
        with pytest.raises(ValueError, match='may not change the shape'):
            m.nn.utils.parametrize.register_parametrization(mod, 'weight', Shrink())
        m.nn.utils.parametrize.register_parametrization(mod, 'weight', scaler(m, 2.0))
        with pytest.raises(RuntimeError, match='Serialization of parametrized modules is only supported through '
                                               'state_dict'):
            pickle.dumps(mod)
        clone = copy.deepcopy(mod)
        assert clone.weight.tolist() == mod.weight.tolist()
        assert clone.parametrizations.weight.original is not mod.parametrizations.weight.original


@pytest.mark.parametrize('dim', [None, 1])
@pytest.mark.parametrize('kind', ['linear', 'conv', 'convT'])
def test_spectral_norm_parametrization(kind, dim):
    torch.manual_seed(0)
    make = {'linear': lambda m: m.nn.Linear(5, 4), 'conv': lambda m: m.nn.Conv2d(2, 3, 3),
            'convT': lambda m: m.nn.ConvTranspose2d(2, 3, 3)}[kind]
    t, e = make(torch).double(), make(ember).double()
    e.load_state_dict({k: to_ember(v) for k, v in t.state_dict().items()})
    torch.nn.utils.parametrizations.spectral_norm(t, dim=dim)
    ember.nn.utils.parametrizations.spectral_norm(e, dim=dim)
    # same start: copy torch's random u, v
    for name in ('_u', '_v'):
        getattr(e.parametrizations.weight[0], name).copy_(to_ember(getattr(t.parametrizations.weight[0], name)))
    shape = {'linear': (2, 5), 'conv': (1, 2, 6, 6), 'convT': (1, 2, 4, 4)}[kind]
    x = torch.rand(*shape, dtype=torch.float64)
    for step in range(3):
        t(x).square().sum().backward()
        e(to_ember(x)).square().sum().backward()
    assert_same(e.weight.detach(), t.weight.detach(), atol=1e-10, rtol=1e-9)
    assert_same(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, atol=1e-10,
                rtol=1e-9)
    assert list(e.state_dict()) == list(t.state_dict())
    t.eval()
    e.eval()
    assert_same(e(to_ember(x)).detach(), t(x).detach(), atol=1e-10, rtol=1e-9)


def test_spectral_norm_parametrization_errors():
    for m in (torch, ember):
        with pytest.raises(ValueError, match='Expected n_power_iterations to be positive'):
            m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(IndexError, match='Dimension out of range'):
            m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(2, 2), dim=2)
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
            m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(2, 2), name='nope')


@pytest.mark.parametrize('n_power_iterations,eps', [(1, 1e-12), (3, 1e-4)])
def test_spectral_norm_hook(n_power_iterations, eps):
    t, e = linears()
    torch.nn.utils.spectral_norm(t, n_power_iterations=n_power_iterations, eps=eps)
    ember.nn.utils.spectral_norm(e, n_power_iterations=n_power_iterations, eps=eps)
    assert sorted(n for n, _ in e.named_parameters()) == sorted(n for n, _ in t.named_parameters())
    assert sorted(e.state_dict()) == sorted(t.state_dict())
    e.weight_u.copy_(to_ember(t.weight_u))
    e.weight_v.copy_(to_ember(t.weight_v))
    x = torch.rand(2, 4, dtype=torch.float64)
    for step in range(3):
        t(x).square().sum().backward()
        e(to_ember(x)).square().sum().backward()
    assert_same(e.weight_u, t.weight_u, atol=1e-10, rtol=1e-9)
    assert_same(e.weight.detach(), t.weight.detach(), atol=1e-10, rtol=1e-9)
    assert_same(e.weight_orig.grad, t.weight_orig.grad, atol=1e-10, rtol=1e-9)
    torch.nn.utils.remove_spectral_norm(t)
    ember.nn.utils.remove_spectral_norm(e)
    assert isinstance(e.weight, ember.nn.Parameter) and not hasattr(e, 'weight_u')
    assert_same(e.weight.detach(), t.weight.detach(), atol=1e-10, rtol=1e-9)


def test_spectral_norm_hook_errors():
    for m in (torch, ember):
        mod = m.nn.utils.spectral_norm(m.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match='Cannot register two spectral_norm hooks on the same parameter weight'):
            m.nn.utils.spectral_norm(mod)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
            m.nn.utils.remove_spectral_norm(mod, 'bias')
        with pytest.raises(ValueError, match='Expected n_power_iterations to be positive'):
            m.nn.utils.spectral_norm(m.nn.Linear(2, 2), n_power_iterations=0)


def orthogonal_pair(shape, **kw):
    """A module with weight `shape` under orthogonal(**kw) in both libraries,
    from the same starting weight."""
    torch.manual_seed(0)
    w = torch.randn(*shape, dtype=torch.float64)
    mods = []
    for m in (torch, ember):
        mod = m.nn.Module()
        mod.weight = m.nn.Parameter(w.clone() if m is torch else to_ember(w))
        m.nn.utils.parametrizations.orthogonal(mod, **kw)
        mods.append(mod)
    return mods


def sgd_steps(t, e, steps=3, lr=0.1):
    """A few steps of gradient descent on sum(weight * c) in both; compares
    the gradients of the original on the way."""
    c = torch.rand(*t.weight.shape, dtype=torch.float64)
    for _ in range(steps):
        for m, mod in ((torch, t), (ember, e)):
            mod.parametrizations.weight.original.grad = None
            (mod.weight * (c if m is torch else to_ember(c))).sum().backward()
        assert_same(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, atol=1e-10,
                    rtol=1e-8)
        for mod in (t, e):
            with (torch if mod is t else ember).no_grad():
                mod.parametrizations.weight.original.sub_(lr * mod.parametrizations.weight.original.grad)


@pytest.mark.parametrize('shape,kw', [((4, 4), {}), ((2, 3, 3), {}), ((5, 3), dict(use_trivialization=False)),
                                      ((3, 5), dict(use_trivialization=False)),
                                      ((4, 4), dict(orthogonal_map='householder', use_trivialization=False)),
                                      ((4, 4), dict(orthogonal_map='householder')),
                                      ((4, 4), dict(use_trivialization=False)),
                                      ((5, 3), dict(orthogonal_map='matrix_exp', use_trivialization=False)),
                                      ((4, 4), dict(orthogonal_map='cayley')), ((2, 3, 3), dict(orthogonal_map='cayley')),
                                      ((3, 5), dict(orthogonal_map='cayley', use_trivialization=False))])
def test_orthogonal_matches_torch(shape, kw):
    t, e = orthogonal_pair(shape, **kw)
    assert type(e.parametrizations.weight[0]).__name__ == '_Orthogonal'
    assert_same(e.parametrizations.weight.original.detach(), t.parametrizations.weight.original.detach(),
                atol=1e-12, rtol=1e-10)
    assert_same(e.weight.detach(), t.weight.detach(), atol=1e-12, rtol=1e-10)
    sgd_steps(t, e)
    assert_same(e.weight.detach(), t.weight.detach(), atol=1e-10, rtol=1e-8)
    w = e.weight.detach()
    gram = w.transpose(-2, -1) @ w if shape[-2] >= shape[-1] else w @ w.transpose(-2, -1)
    assert ember.allclose(gram, ember.eye(min(shape[-2:]), dtype=ember.float64).expand_as(gram), atol=1e-12)


@pytest.mark.parametrize('shape', [(5, 3), (3, 5)])
def test_orthogonal_rectangular_with_trivialization(shape):
    # the base is completed with random columns: compare the properties only
    t, e = orthogonal_pair(shape)
    w = e.weight.detach()
    gram = w.transpose(0, 1) @ w if shape[0] > shape[1] else w @ w.transpose(0, 1)
    assert_same(gram, torch.eye(min(shape), dtype=torch.float64), atol=1e-12)
    assert_same(e.parametrizations.weight.original.detach(), t.parametrizations.weight.original.detach())
    e.weight = to_ember(torch.linalg.qr(torch.randn(max(shape), min(shape), dtype=torch.float64))[0].T.contiguous()
                        if shape[0] < shape[1] else
                        torch.linalg.qr(torch.randn(*shape, dtype=torch.float64))[0])
    x = e.weight.detach()
    assert ember.allclose(x.transpose(0, 1) @ x if shape[0] > shape[1] else x @ x.transpose(0, 1),
                          ember.eye(min(shape), dtype=ember.float64), atol=1e-12)


def test_orthogonal_errors():
    for m in (torch, ember):
        with pytest.raises(ValueError, match='Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.'):
            m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), name='bias')
        with pytest.raises(ValueError, match='orthogonal_map has to be one of'):
            m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), orthogonal_map='qr')
        mod = m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), use_trivialization=False)
        with pytest.raises(NotImplementedError, match='not possible to assign to the matrix exponential'):
            mod.weight = m.eye(3)
        mod = m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3))
        with pytest.raises(ValueError, match='Expected a matrix or batch of matrices of shape'):
            mod.weight = m.ones(2, 2)


def bn_pair(m, n):
    bn = m.nn.BatchNorm2d(n).double() if m is torch else m.nn.BatchNorm2d(n).double()
    return bn


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('bias', [True, False])
def test_fuse_conv_bn_eval(transpose, bias):
    torch.manual_seed(0)
    conv_t = (torch.nn.ConvTranspose2d if transpose else torch.nn.Conv2d)(2, 3, 3, bias=bias).double()
    bn_t = torch.nn.BatchNorm2d(3).double()
    with torch.no_grad():
        bn_t.running_mean.uniform_(-1, 1)
        bn_t.running_var.uniform_(0.5, 2)
        bn_t.weight.uniform_(0.5, 1.5)
        bn_t.bias.uniform_(-1, 1)
    conv_e = (ember.nn.ConvTranspose2d if transpose else ember.nn.Conv2d)(2, 3, 3, bias=bias).double()
    bn_e = ember.nn.BatchNorm2d(3).double()
    conv_e.load_state_dict({k: to_ember(v) for k, v in conv_t.state_dict().items()})
    bn_e.load_state_dict({k: to_ember(v) for k, v in bn_t.state_dict().items()})
    for mod in (conv_t, bn_t, conv_e, bn_e):
        mod.eval()
    ft = torch.nn.utils.fuse_conv_bn_eval(conv_t, bn_t, transpose=transpose)
    fe = ember.nn.utils.fuse_conv_bn_eval(conv_e, bn_e, transpose=transpose)
    assert_same(fe.weight.detach(), ft.weight.detach(), atol=1e-12, rtol=1e-10)
    assert_same(fe.bias.detach(), ft.bias.detach(), atol=1e-12, rtol=1e-10)
    x = torch.rand(1, 2, 5, 5, dtype=torch.float64)
    assert_same(fe(to_ember(x)).detach(), bn_t(conv_t(x)).detach(), atol=1e-10, rtol=1e-9)
    assert isinstance(fe.weight, ember.nn.Parameter) and fe is not conv_e
    assert conv_e.bias is None if not bias else True


def test_fuse_linear_bn_eval():
    torch.manual_seed(0)
    lt, bt = torch.nn.Linear(4, 3).double(), torch.nn.BatchNorm1d(3).double()
    with torch.no_grad():
        bt.running_mean.uniform_(-1, 1)
        bt.running_var.uniform_(0.5, 2)
    le, be = ember.nn.Linear(4, 3).double(), ember.nn.BatchNorm1d(3).double()
    le.load_state_dict({k: to_ember(v) for k, v in lt.state_dict().items()})
    be.load_state_dict({k: to_ember(v) for k, v in bt.state_dict().items()})
    for mod in (lt, bt, le, be):
        mod.eval()
    ft = torch.nn.utils.fusion.fuse_linear_bn_eval(lt, bt)
    fe = ember.nn.utils.fusion.fuse_linear_bn_eval(le, be)
    assert_same(fe.weight.detach(), ft.weight.detach(), atol=1e-12, rtol=1e-10)
    assert_same(fe.bias.detach(), ft.bias.detach(), atol=1e-12, rtol=1e-10)
    with pytest.raises(AssertionError, match='Fusion only for eval!'):
        le.train()
        ember.nn.utils.fusion.fuse_linear_bn_eval(le, be)


def test_functional_call():
    t, e = linears()
    w = torch.rand(3, 4, dtype=torch.float64, requires_grad=True)
    we = to_ember(w).requires_grad_()
    x = torch.rand(2, 4, dtype=torch.float64)
    yt = torch.nn.utils.stateless.functional_call(t, {'weight': w}, (x,))
    ye = ember.nn.utils.stateless.functional_call(e, {'weight': we}, (to_ember(x),))
    assert_same(ye.detach(), yt.detach())
    yt.sum().backward()
    ye.sum().backward()
    assert_same(we.grad, w.grad)
    assert e.weight.grad is None and isinstance(e.weight, ember.nn.Parameter)  # restored
    assert_same(e.weight.detach(), t.weight.detach())
    # a single argument that is not a tuple, kwargs, and nested names
    seq_t, seq_e = torch.nn.Sequential(t), ember.nn.Sequential(e)
    b = torch.zeros(3, dtype=torch.float64)
    yt = torch.nn.utils.stateless.functional_call(seq_t, {'0.bias': b}, x)
    ye = ember.nn.utils.stateless.functional_call(seq_e, {'0.bias': to_ember(b)}, to_ember(x))
    assert_same(ye.detach(), yt.detach())


def test_functional_call_buffers_and_writes():
    for m in (torch, ember):
        class Counter(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer('foo', m.zeros(()))

            def forward(self, x):
                self.foo = self.foo + 1
                return x + self.foo
        mod = Counter()
        a = {'foo': m.zeros(())}
        out = m.nn.utils.stateless.functional_call(mod, a, (m.ones(()),))
        assert out.item() == 2.0 and mod.foo.item() == 0.0 and a['foo'].item() == 1.0


def test_functional_call_tied_weights():
    for m in (torch, ember):
        class Tied(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = m.nn.Linear(2, 2, bias=False)
                self.b = m.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))
        mod = Tied()
        w = m.eye(2) * 2
        out = m.nn.utils.stateless.functional_call(mod, {'a.weight': w, 'b.weight': w}, (m.ones(1, 2),))
        assert out.tolist() == [[4.0, 4.0]]
        assert mod.a.weight is mod.b.weight


def test_skip_init():
    for m in (torch, ember):
        mod = m.nn.utils.skip_init(m.nn.Linear, 5, 2)
        assert isinstance(mod, m.nn.Linear) and mod.weight.shape == (2, 5) and str(mod.weight.device) == 'cpu'
        class NoDevice(m.nn.Module):
            def __init__(self, n):
                super().__init__()
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            m.nn.utils.skip_init(NoDevice, 2)
        with pytest.raises(RuntimeError, match='Expected a Module; got'):
            m.nn.utils.skip_init(int, 2)


def test_parameters_vector_round_trip():
    t, e = linears()
    vt = torch.nn.utils.parameters_to_vector(t.parameters())
    ve = ember.nn.utils.parameters_to_vector(e.parameters())
    assert_same(ve.detach(), vt.detach())
    ember.nn.utils.vector_to_parameters(ve * 2, e.parameters())
    torch.nn.utils.vector_to_parameters(vt * 2, t.parameters())
    assert_same(e.weight.detach(), t.weight.detach())


def test_parametrization_with_a_sequence_of_originals_and_buffers():
    t, e = square_pair()
    for m, mod in ((torch, t), (ember, e)):
        class Split(m.nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, w):
                return w * 0.25, w * 0.75
        m.nn.utils.parametrize.register_parametrization(mod, 'weight', Split())
        plist = mod.parametrizations.weight
        assert not plist.is_tensor and plist.ntensors == 2
        assert isinstance(plist.original0, m.nn.Parameter) and isinstance(plist.original1, m.nn.Parameter)
        mod.register_buffer('buf', m.ones(3, dtype=m.float64))
        m.nn.utils.parametrize.register_parametrization(mod, 'buf', scaler(m, 2.0))
        assert 'original' in dict(mod.parametrizations.buf.named_buffers())
        with pytest.raises(ValueError, match='Cannot leave unparametrized'):
            m.nn.utils.parametrize.remove_parametrizations(mod, 'weight', leave_parametrized=False)
    assert sorted(e.state_dict()) == sorted(t.state_dict())
    assert_same(e.weight.detach(), t.weight.detach())
    assert_same(e.buf, t.buf)
    x = torch.rand(2, 3, dtype=torch.float64)
    t(x).sum().backward()
    e(to_ember(x)).sum().backward()
    assert_same(e.parametrizations.weight.original1.grad, t.parametrizations.weight.original1.grad)
    for m, mod in ((torch, t), (ember, e)):
        m.nn.utils.parametrize.remove_parametrizations(mod, 'weight')
        assert isinstance(mod.weight, m.nn.Parameter)
    assert_same(e.weight.detach(), t.weight.detach())
