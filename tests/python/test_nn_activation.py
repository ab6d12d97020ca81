"""ember.nn.functional activations and distances vs PyTorch 1.13: values
(float32/float64, batched and not, non-contiguous), float64 gradients,
in-place forms, error types; the activation modules' outputs and reprs."""
import warnings

import pytest
import torch

import ember
from helpers import check, check_raises, rand

F_CASES = [
    ('relu', lambda x, m: m.nn.functional.relu(x)),
    ('relu6', lambda x, m: m.nn.functional.relu6(x)),
    ('elu', lambda x, m: m.nn.functional.elu(x, 0.7)),
    ('selu', lambda x, m: m.nn.functional.selu(x)),
    ('celu', lambda x, m: m.nn.functional.celu(x, 1.3)),
    ('leaky_relu', lambda x, m: m.nn.functional.leaky_relu(x, 0.2)),
    ('gelu', lambda x, m: m.nn.functional.gelu(x)),
    ('gelu_tanh', lambda x, m: m.nn.functional.gelu(x, approximate='tanh')),
    ('silu', lambda x, m: m.nn.functional.silu(x)),
    ('mish', lambda x, m: m.nn.functional.mish(x)),
    ('sigmoid', lambda x, m: m.nn.functional.sigmoid(x)),
    ('tanh', lambda x, m: m.nn.functional.tanh(x)),
    ('hardtanh', lambda x, m: m.nn.functional.hardtanh(x, -0.5, 0.7)),
    ('hardswish', lambda x, m: m.nn.functional.hardswish(x)),
    ('hardsigmoid', lambda x, m: m.nn.functional.hardsigmoid(x)),
    ('threshold', lambda x, m: m.nn.functional.threshold(x, 0.3, -1.5)),
    ('glu', lambda x, m: m.nn.functional.glu(x, 1)),
    ('glu_last', lambda x, m: m.nn.functional.glu(x)),
    ('logsigmoid', lambda x, m: m.nn.functional.logsigmoid(x)),
    ('hardshrink', lambda x, m: m.nn.functional.hardshrink(x, 0.4)),
    ('softshrink', lambda x, m: m.nn.functional.softshrink(x, 0.4)),
    ('tanhshrink', lambda x, m: m.nn.functional.tanhshrink(x)),
    ('softsign', lambda x, m: m.nn.functional.softsign(x)),
    ('softplus', lambda x, m: m.nn.functional.softplus(x, 2, 3)),
    ('softmax', lambda x, m: m.nn.functional.softmax(x, 1)),
    ('softmin', lambda x, m: m.nn.functional.softmin(x, -1)),
    ('log_softmax', lambda x, m: m.nn.functional.log_softmax(x, 0)),
    ('rrelu_eval', lambda x, m: m.nn.functional.rrelu(x, 0.1, 0.3)),
    ('normalize', lambda x, m: m.nn.functional.normalize(x, 3, 1)),
]


def _eq(a, b):
    """Same shape and values (ember has no ember.equal yet)."""
    return a.shape == b.shape and bool((a == b).all())


def _close(a, b):
    return a.shape == b.shape and bool(((a - b).abs() <= 1e-5 + 1e-4 * b.abs()).all())


@pytest.mark.parametrize('name,fn', F_CASES, ids=[c[0] for c in F_CASES])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_functional_values(name, fn, dtype):
    for shape, nc in (((4, 6), False), ((2, 4, 6), True), ((6, 4), True)):
        check(fn, rand(*shape, dtype=dtype, noncontig=nc, seed=1))


@pytest.mark.parametrize('name,fn', F_CASES, ids=[c[0] for c in F_CASES])
def test_functional_grad(name, fn):
    # values away from the kinks at 0, +-0.3, +-0.4, +-0.5
    x = rand(3, 4, dtype='float64', seed=2)
    x = x + 0.05 * torch.sign(x)
    check(fn, x, grad=True)


INPLACE = [
    lambda x, m: m.nn.functional.relu(x, inplace=True), lambda x, m: m.nn.functional.relu_(x),
    lambda x, m: m.nn.functional.relu6(x, inplace=True), lambda x, m: m.nn.functional.elu(x, 0.5, True),
    lambda x, m: m.nn.functional.elu_(x), lambda x, m: m.nn.functional.selu(x, True),
    lambda x, m: m.nn.functional.celu(x, 2.0, True), lambda x, m: m.nn.functional.leaky_relu(x, 0.1, True),
    lambda x, m: m.nn.functional.leaky_relu_(x, 0.1), lambda x, m: m.nn.functional.hardtanh(x, inplace=True),
    lambda x, m: m.nn.functional.hardtanh_(x, -2, 2), lambda x, m: m.nn.functional.threshold(x, 0.1, 7, True),
    lambda x, m: m.nn.functional.threshold_(x, 0.1, 7), lambda x, m: m.nn.functional.silu(x, inplace=True),
    lambda x, m: m.nn.functional.mish(x, inplace=True), lambda x, m: m.nn.functional.hardswish(x, True),
    lambda x, m: m.nn.functional.hardsigmoid(x, True), lambda x, m: m.nn.functional.rrelu(x, inplace=True),
    lambda x, m: m.nn.functional.rrelu_(x),
]


@pytest.mark.parametrize('k', range(len(INPLACE)))
def test_inplace_forms(k):
    def fn(x, m):
        y = x.clone()
        r = INPLACE[k](y, m)
        assert r is y
        return y
    check(fn, rand(3, 5, seed=3))
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        INPLACE[k](x, ember)


def test_prelu():
    for shape, wn in (((2, 3, 4), 3), ((2, 3, 4), 1), ((5,), 1), ((), 1), ((2, 3), 3)):
        check(lambda x, w, m: m.nn.functional.prelu(x, w), rand(*shape, dtype='float64', seed=4),
              rand(wn, dtype='float64', seed=5), grad=True)
    check(lambda x, w, m: m.nn.functional.prelu(x, w), rand(2, 3, 4, noncontig=True, seed=4), rand(3, seed=5))
    check_raises(lambda x, w, m: m.nn.functional.prelu(x, w), rand(2, 3), rand(2))
    check_raises(lambda x, w, m: m.nn.functional.prelu(x, w), rand(2, 3), rand(3, 1))
    check_raises(lambda x, w, m: m.nn.functional.prelu(x, w), rand(2, 3, dtype='int64'), rand(3, dtype='int64'))
    check(lambda x, w, m: x.prelu(w), rand(2, 3), rand(3))


def test_errors():
    F = 'nn.functional'
    check_raises(lambda x, m: m.nn.functional.glu(x, 0), rand(3))
    check_raises(lambda x, m: m.nn.functional.glu(x), torch.tensor(1.0))
    check_raises(lambda x, m: m.nn.functional.glu(x, 2), rand(2, 2))
    check_raises(lambda x, m: m.nn.functional.softshrink(x, -1.0), rand(3))
    check_raises(lambda x, m: m.nn.functional.hardshrink(x), rand(3, dtype='int64'))
    check_raises(lambda x, m: m.nn.functional.threshold(x, 0, 1), torch.tensor([True]))
    check_raises(lambda x, m: m.nn.functional.rrelu(x, 0.5, 0.1, True), rand(3))
    check_raises(lambda x, m: m.nn.functional.gelu(x, approximate='x'), rand(3))
    check_raises(lambda a, b, m: m.nn.functional.cosine_similarity(a, b), rand(2, 3, dtype='int64'),
                 rand(2, 3, dtype='int64'))
    check_raises(lambda a, b, m: m.nn.functional.pairwise_distance(a, b), rand(2, 3), rand(4, 3))
    assert F


def test_threshold_int_and_hardshrink_method():
    check(lambda x, m: m.threshold(x, 1, 5), torch.tensor([-2, 1, 3]))
    check(lambda x, m: x.hardshrink(0.3), rand(4, 5))


def test_threshold_backward_as_aten():
    g, x = rand(4, 5, dtype='float64'), rand(4, 5, dtype='float64')
    x[0, 0] = 0.25
    x[1, 1] = float('nan')
    want = torch.ops.aten.threshold_backward(g, x, 0.25)
    got = ember._C._nn.threshold_backward(ember.tensor(g.numpy()), ember.tensor(x.numpy()), 0.25)
    assert torch.equal(torch.tensor(got.numpy()), want)


@pytest.mark.parametrize('approximate', ['none', 'tanh'])
def test_gelu_backward_and_double_backward(approximate):
    g, x = rand(6, 7, dtype='float64'), rand(6, 7, dtype='float64', low=-6, high=6)
    want = torch.ops.aten.gelu_backward(g, x, approximate=approximate)
    got = ember._C._nn.gelu_backward(ember.tensor(g.numpy()), ember.tensor(x.numpy()), approximate=approximate)
    assert torch.allclose(torch.tensor(got.numpy()), want, rtol=1e-12, atol=1e-12)
    # second derivatives of F.gelu w.r.t. x, through gelu_backward's formula
    grads = []
    for lib, xs in ((torch, x.clone()), (ember, ember.tensor(x.numpy()))):
        xs.requires_grad_()
        y = lib.nn.functional.gelu(xs, approximate=approximate)
        gx, = lib.autograd.grad(y.sum(), xs, create_graph=True)
        gxx, = lib.autograd.grad((gx * gx).sum(), xs)
        grads.append(torch.tensor(gxx.numpy()) if lib is ember else gxx)
    assert torch.allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError):
        ember._C._nn.gelu_backward(ember.tensor(g.numpy()), ember.tensor(x.numpy()), approximate='fast')


def test_rrelu_training():
    x = ember.randn(200, 100, dtype=ember.float64)
    ember.manual_seed(4)
    y = ember.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    ember.manual_seed(4)
    assert _eq(y, ember.nn.functional.rrelu(x, 0.1, 0.3, training=True))
    slope = (y / x)[x < 0]
    assert float(slope.min()) >= 0.1 and float(slope.max()) <= 0.3
    assert abs(float(slope.mean()) - 0.2) < 0.01
    assert _eq(y[x > 0], x[x > 0])
    xg = x.clone().requires_grad_(True)
    ember.manual_seed(4)
    ember.nn.functional.rrelu(xg, 0.1, 0.3, training=True).sum().backward()
    assert _close(xg.grad, y / x)
    gc = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)

    def f(t):
        ember.manual_seed(9)
        return ember.nn.functional.rrelu(t, training=True)
    assert ember.autograd.gradcheck(f, (gc,))


def test_softmax_implicit_dim_and_dtype():
    for shape in ((5,), (3, 4), (2, 3, 4), (2, 3, 4, 5)):
        for name in ('softmax', 'softmin', 'log_softmax'):
            x = rand(*shape, seed=6)
            with warnings.catch_warnings(record=True) as tw:
                warnings.simplefilter('always')
                t = getattr(torch.nn.functional, name)(x)
            with warnings.catch_warnings(record=True) as ew:
                warnings.simplefilter('always')
                e = getattr(ember.nn.functional, name)(ember.tensor(x.numpy()))
            assert [str(w.message) for w in ew] == [str(w.message) for w in tw]
            check(lambda a, m: a, t, efn=lambda a, m: e)
    check(lambda x, m: m.nn.functional.softmax(x, 1, dtype=m.float64), rand(3, 4))


def test_gumbel_softmax():
    x = ember.randn(50, 7)
    y = ember.nn.functional.gumbel_softmax(x, tau=0.5, dim=-1)
    assert _close(y.sum(-1), ember.ones(50))
    h = ember.nn.functional.gumbel_softmax(x, hard=True)
    assert _eq(h.sum(-1), ember.ones(50)) and _eq((h == 1).sum(), ember.tensor(50))


def test_distances():
    for dt in ('float32', 'float64'):
        check(lambda a, b, m: m.nn.functional.cosine_similarity(a, b), rand(4, 5, dtype=dt, seed=1),
              rand(5, dtype=dt, seed=2), grad=dt == 'float64')
        check(lambda a, b, m: m.cosine_similarity(a, b, dim=0, eps=1e-3), rand(4, 5, dtype=dt, seed=1, noncontig=True),
              rand(4, 1, dtype=dt, seed=2), grad=dt == 'float64')
        for p, keep in ((2, False), (1, True), (3.5, False)):
            check(lambda a, b, m: m.nn.functional.pairwise_distance(a, b, p, keepdim=keep),
                  rand(4, 5, dtype=dt, seed=1), rand(4, 5, dtype=dt, seed=2), grad=dt == 'float64')
        check(lambda a, b, m: m.pairwise_distance(a, b), rand(5, dtype=dt, seed=1), rand(5, dtype=dt, seed=2))
    small = torch.tensor([1e-9, 0.0], dtype=torch.float64)
    check(lambda a, b, m: m.nn.functional.cosine_similarity(a, b, dim=0), small, small)
    check(lambda x, m: m.nn.functional.normalize(x, dim=0), rand(3, 4, dtype='float64'), grad=True)
    check(lambda x, o, m: (m.nn.functional.normalize(x, out=o), o)[1], rand(3, 4), torch.empty(3, 4))
    check(lambda x, m: m.nn.functional.one_hot(x, 5), torch.tensor([0, 3, 1]))


MODULES = [
    lambda m: m.nn.ReLU(), lambda m: m.nn.ReLU(inplace=True), lambda m: m.nn.ReLU6(True),
    lambda m: m.nn.LeakyReLU(0.2), lambda m: m.nn.LeakyReLU(0.2, True), lambda m: m.nn.ELU(0.5),
    lambda m: m.nn.ELU(inplace=True), lambda m: m.nn.SELU(), lambda m: m.nn.CELU(1.5), lambda m: m.nn.GELU(),
    lambda m: m.nn.GELU('tanh'), lambda m: m.nn.SiLU(), lambda m: m.nn.Mish(), lambda m: m.nn.Sigmoid(),
    lambda m: m.nn.Tanh(), lambda m: m.nn.Softmax(dim=1), lambda m: m.nn.LogSoftmax(1), lambda m: m.nn.Softmin(0),
    lambda m: m.nn.Softplus(2, 10), lambda m: m.nn.Softsign(), lambda m: m.nn.Hardtanh(-0.5, 0.5),
    lambda m: m.nn.Hardswish(), lambda m: m.nn.Hardsigmoid(True), lambda m: m.nn.Threshold(0.1, 20),
    lambda m: m.nn.Threshold(0.1, 20, True), lambda m: m.nn.GLU(), lambda m: m.nn.GLU(1), lambda m: m.nn.LogSigmoid(),
    lambda m: m.nn.Hardshrink(0.3), lambda m: m.nn.Softshrink(), lambda m: m.nn.Tanhshrink(),
    lambda m: m.nn.PReLU(), lambda m: m.nn.PReLU(4, 0.1), lambda m: m.nn.RReLU(0.1, 0.2),
    lambda m: m.nn.RReLU(inplace=True), lambda m: m.nn.Softmax2d(), lambda m: m.nn.Softmax(),
]


@pytest.mark.parametrize('k', range(len(MODULES)))
def test_modules(k):
    from nn_helpers import check_module
    make = MODULES[k]
    assert repr(make(ember)) == repr(make(torch))
    inplace = getattr(make(torch), 'inplace', False)
    train = not isinstance(make(torch), torch.nn.RReLU)  # random slopes: compared in eval mode
    x = rand(2, 4, 3, 2, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        if inplace:  # an in-place module writes its input: compare on copies
            check_module(make, x, grad=False, train=train, forward=lambda mod, t: mod(t.clone()))
        else:
            check_module(make, x, train=train)


def test_prelu_module_init_and_state():
    e, t = ember.nn.PReLU(3, 0.3), torch.nn.PReLU(3, 0.3)
    assert list(e.state_dict()) == list(t.state_dict()) == ['weight']
    assert _eq(e.weight, ember.full((3,), 0.3))
    assert ember.nn.PReLU(dtype=ember.float64).weight.dtype == ember.float64


def test_hardtanh_module_checks():
    with pytest.raises(AssertionError):
        ember.nn.Hardtanh(1, 0)
    with pytest.warns(UserWarning):
        ember.nn.Hardtanh(min_value=-2)
    assert repr(ember.nn.Softmax2d()) == repr(torch.nn.Softmax2d())
    with pytest.raises(AssertionError):
        ember.nn.Softmax2d()(ember.ones(3, 3))


def test_distance_modules():
    from nn_helpers import check_module
    for make in (lambda m: m.nn.CosineSimilarity(), lambda m: m.nn.CosineSimilarity(0, 1e-4),
                 lambda m: m.nn.PairwiseDistance(), lambda m: m.nn.PairwiseDistance(1, 1e-3, True)):
        assert repr(make(ember)) == repr(make(torch))
        check_module(make, rand(4, 5, dtype='float64', seed=1), rand(4, 5, dtype='float64', seed=2))
