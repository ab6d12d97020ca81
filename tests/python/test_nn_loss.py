"""ember.nn losses vs PyTorch 1.13: values and gradients for every loss and
reduction, K-dimensional class losses, ignore_index, CTC, errors, modules."""
import warnings

import pytest
import torch

import ember
from helpers import check, check_raises, rand, to_ember
from nn_helpers import check_module

REDS = ['none', 'mean', 'sum']


def F(m):
    return m.nn.functional


def T(x, m):
    """A PyTorch tensor argument as the library m takes it."""
    return x if m is torch or x is None else to_ember(x)


def probs(*shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=g, dtype=dtype) * 0.9 + 0.05)


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        yield


@pytest.mark.parametrize('red', REDS)
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('name,kw', [('mse_loss', {}), ('l1_loss', {}), ('smooth_l1_loss', {'beta': 0.5}),
                                     ('smooth_l1_loss', {'beta': 0.0}), ('huber_loss', {'delta': 0.7})])
def test_regression(name, kw, dtype, red):
    x, y = rand(3, 4, dtype=dtype, noncontig=True, seed=1), rand(3, 4, dtype=dtype, seed=2)
    check(lambda a, b, m: getattr(F(m), name)(a, b, reduction=red, **kw), x, y, grad=True)
    check(lambda a, b, m: getattr(F(m), name)(a, b, reduction=red, **kw), x, rand(4, dtype=dtype), grad=True)


def test_regression_legacy_and_errors():
    x, y = rand(5), rand(5, seed=3)
    for sa, rd in [(False, None), (None, False), (True, True)]:
        check(lambda a, b, m: F(m).mse_loss(a, b, size_average=sa, reduce=rd), x, y)
    with pytest.warns(UserWarning, match='target size'):
        ember.nn.functional.mse_loss(to_ember(rand(3)), to_ember(rand(2, 3)))
    check_raises(lambda a, b, m: F(m).mse_loss(a, b, reduction='bad'), x, y)
    check_raises(lambda a, b, m: F(m).smooth_l1_loss(a, b, beta=-1.0), x, y)
    check_raises(lambda a, b, m: F(m).huber_loss(a, b, delta=0.0), x, y)
    check_raises(lambda a, b, m: F(m).mse_loss(a, b), rand(3), rand(2, 4))
    check(lambda a, b, m: F(m).l1_loss(a, b), torch.empty(0), torch.empty(0))


@pytest.mark.parametrize('red', REDS)
def test_bce(red):
    x, y, w = probs(3, 4), probs(3, 4, seed=1), probs(4, seed=2)
    check(lambda a, b, m: F(m).binary_cross_entropy(a, b, reduction=red), x, y, grad=True)
    check(lambda a, b, m: F(m).binary_cross_entropy(a, b, weight=T(w, m), reduction=red), x, y, grad=True)
    check(lambda a, b, m: F(m).binary_cross_entropy(a, b, reduction=red), x.float(), y.float())
    lx = rand(3, 4, dtype='float64', noncontig=True)
    check(lambda a, b, m: F(m).binary_cross_entropy_with_logits(a, b, reduction=red), lx, y, grad=True)
    check(lambda a, b, m: F(m).binary_cross_entropy_with_logits(a, b, weight=T(w, m), pos_weight=T(w * 2, m),
                                                                 reduction=red), lx, y, grad=True)
    check(lambda a, b, m: m.binary_cross_entropy_with_logits(a, b, None, T(w, m), 1), lx, y, grad=True)


def test_bce_edges_and_errors():
    check(lambda a, b, m: F(m).binary_cross_entropy(a, b, reduction='none'), torch.tensor([0., 1.]),
          torch.tensor([1., 0.]))
    check(lambda a, b, m: F(m).binary_cross_entropy_with_logits(a, b), torch.tensor([1000., -1000.]),
          torch.tensor([0., 1.]))
    for fn in ('binary_cross_entropy', 'binary_cross_entropy_with_logits'):
        check_raises(lambda a, b, m: getattr(F(m), fn)(a, b), probs(3), probs(2, 3))
    with pytest.raises(ValueError, match=r'Using a target size \(ember.Size\(\[2, 3\]\)\)'):
        ember.nn.functional.binary_cross_entropy(to_ember(probs(3)), to_ember(probs(2, 3)))
    check_raises(lambda a, b, m: F(m).binary_cross_entropy(a, b), torch.tensor([1.5]), torch.tensor([1.]))
    check_raises(lambda a, b, m: F(m).binary_cross_entropy(a, b), probs(3), probs(3).float())
    w = to_ember(probs(3)).requires_grad_()
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        ember.nn.functional.binary_cross_entropy(to_ember(probs(3)), to_ember(probs(3)), weight=w)


CLASS_SHAPES = [((5, 4), (5,)), ((2, 3, 4), (2, 4)), ((2, 3, 2, 3), (2, 2, 3)), ((2, 3, 2, 1, 2), (2, 2, 1, 2)),
                ((4,), ())]


def class_target(tshape, C, seed=0, ignore=None):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, C, tshape, generator=g)
    if ignore is not None and t.numel() > 1:
        t.view(-1)[0] = ignore
    return t


@pytest.mark.parametrize('red', REDS)
@pytest.mark.parametrize('shape,tshape', CLASS_SHAPES)
@pytest.mark.parametrize('fn', ['cross_entropy', 'nll_loss'])
def test_class_losses(fn, shape, tshape, red):
    C = shape[0] if len(shape) == 1 else shape[1]
    # (torch's nll_loss2d backward refuses a non-contiguous input: "grad_input must be contiguous")
    x = rand(*shape, dtype='float64', noncontig=not (fn == 'nll_loss' and len(shape) == 4))
    w = probs(C, seed=4)
    for kw in ({}, {'weight': w}, {'ignore_index': 1}, {'weight': w, 'ignore_index': 2}):
        t = class_target(tshape, C, ignore=kw.get('ignore_index'))
        check(lambda a, m: getattr(F(m), fn)(a, T(t, m), reduction=red,
                                               **{k: T(v, m) for k, v in kw.items()}), x, grad=True)
    check(lambda a, m: getattr(F(m), fn)(a, T(class_target(tshape, C), m), reduction=red), x.float(), grad=True)


def test_class_all_ignored_and_empty():
    x, t = rand(3, 5), torch.full((3,), -100)
    for fn in ('cross_entropy', 'nll_loss'):
        for red in REDS:
            check(lambda a, m: getattr(F(m), fn)(a, T(t, m), reduction=red), x, grad=True)
        check(lambda a, m: getattr(F(m), fn)(a, T(torch.zeros(0, dtype=torch.long), m)), torch.empty(0, 3))


@pytest.mark.parametrize('red', REDS)
def test_cross_entropy_probs_and_smoothing(red):
    x = rand(4, 5, dtype='float64')
    p = torch.softmax(rand(4, 5, dtype='float64', seed=7), 1)
    w = probs(5, seed=5)
    check(lambda a, b, m: F(m).cross_entropy(a, b, reduction=red), x, p, grad=True)
    check(lambda a, b, m: F(m).cross_entropy(a, b, weight=T(w, m), reduction=red, label_smoothing=0.2), x, p,
          grad=True)
    x3 = rand(2, 5, 3, dtype='float64')
    t3 = class_target((2, 3), 5, ignore=-100)
    for kw in ({}, {'weight': w}):
        check(lambda a, m: F(m).cross_entropy(a, T(t3, m), reduction=red, label_smoothing=0.3,
                                                **{k: T(v, m) for k, v in kw.items()}), x3, grad=True)
    check(lambda a, m: m._C._nn.cross_entropy_loss(a, T(t3, m), None, 1, -100, 0.1), x3)


def test_class_errors():
    x = rand(3, 5)
    cases = [torch.tensor([1, 2, 3, 4]), torch.tensor([1, 2, 5]), torch.tensor([1, -1, 0]), torch.tensor([1., 2, 3]),
             torch.tensor([1, 2, 3], dtype=torch.int32), torch.zeros(3, 1, dtype=torch.long)]
    for fn in ('cross_entropy', 'nll_loss'):
        for t in cases:
            check_raises(lambda a, b, m: getattr(F(m), fn)(a, b), x, t)
        check_raises(lambda a, b, m: getattr(F(m), fn)(a, b, reduction='foo'), x, cases[1])
        check_raises(lambda a, b, w, m: getattr(F(m), fn)(a, b, weight=w), x, cases[0][:3], torch.ones(4))
        check_raises(lambda a, b, w, m: getattr(F(m), fn)(a, b, weight=w), x, cases[0][:3],
                     torch.ones(5, dtype=torch.float64))
        check_raises(lambda a, b, m: getattr(F(m), fn)(a, b), rand(2, 3, 4), torch.zeros(2, 5, dtype=torch.long))
        check_raises(lambda a, b, m: getattr(F(m), fn)(a, b), torch.tensor(1.), torch.tensor(0))
    e = ember.nn.functional
    with pytest.raises(ValueError, match=r'Expected input batch_size \(3\) to match target batch_size \(4\)\.'):
        e.cross_entropy(to_ember(x), ember.tensor([1, 2, 3, 4]))
    with pytest.raises(IndexError, match='Target 5 is out of bounds.'):
        e.nll_loss(to_ember(x), ember.tensor([1, 2, 5]))
    with pytest.raises(RuntimeError, match='expected scalar type Long but found Float'):
        e.nll_loss(to_ember(x), ember.tensor([1., 2, 3]))


def test_class_double_backward():
    x = to_ember(rand(3, 5, dtype='float64')).requires_grad_()
    t = ember.tensor([1, 0, 4])
    for fn in (ember.nn.functional.cross_entropy, ember.nn.functional.nll_loss):
        assert ember.autograd.gradcheck(lambda a: fn(a, t), (x,))
        assert ember.autograd.gradgradcheck(lambda a: fn(a, t), (x,))


def ctc_inputs(T_, N, C, S, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    lp = torch.randn(T_, N, C, generator=g, dtype=dtype).log_softmax(2)
    il = torch.randint(max(1, T_ - 3), T_ + 1, (N,), generator=g)
    tl = torch.randint(0, S + 1, (N,), generator=g)
    tg = torch.randint(1, C, (N, S), generator=g)
    return lp, tg, il, tl


@pytest.mark.parametrize('red', REDS)
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_ctc(red, seed):
    lp, tg, il, tl = ctc_inputs(12, 4, 5, 4, seed)
    check(lambda a, m: F(m).ctc_loss(a, T(tg, m), T(il, m), T(tl, m), reduction=red), lp, grad=True)
    check(lambda a, m: F(m).ctc_loss(a, T(tg, m), il.tolist(), tl.tolist(), reduction=red), lp.float(), grad=True)
    cat = torch.cat([tg[b, :tl[b]] for b in range(4)])
    check(lambda a, m: F(m).ctc_loss(a, T(cat, m), T(il, m), T(tl, m), reduction=red, zero_infinity=True), lp,
          grad=True)


def test_ctc_unbatched_infinite_and_through_log_softmax():
    lp, tg, il, tl = ctc_inputs(6, 1, 4, 3, seed=3)
    check(lambda a, m: F(m).ctc_loss(a, T(tg[0], m), T(il[0], m), T(tl[0], m), reduction='none'), lp[:, 0], grad=True)
    x = rand(3, 2, 4, dtype='float64')
    tg2, il2, tl2 = torch.tensor([[1, 1, 2], [1, 2, 3]]), torch.tensor([3, 3]), torch.tensor([3, 1])
    for zi in (False, True):
        check(lambda a, m: F(m).ctc_loss(a.log_softmax(2), T(tg2, m), T(il2, m), T(tl2, m), reduction='sum',
                                         zero_infinity=zi), x, grad=True)
    check_raises(lambda a, m: F(m).ctc_loss(a, T(tg2, m), [4, 3], [3, 1]), x.log_softmax(2))


@pytest.mark.parametrize('red', REDS)
def test_composites(red):
    x, y = rand(3, 4, dtype='float64'), rand(3, 4, dtype='float64', seed=2)
    p, q = probs(3, 4), probs(3, 4, seed=3)
    sign = torch.tensor([1., -1., 1.], dtype=torch.float64)
    check(lambda a, b, m: F(m).kl_div(a, b, reduction=red), p.log(), q, grad=True)
    check(lambda a, b, m: F(m).kl_div(a, b, reduction=red, log_target=True), p.log(), q.log(), grad=True)
    check(lambda a, b, m: F(m).poisson_nll_loss(a, b, reduction=red), x, q * 3, grad=True)
    check(lambda a, b, m: F(m).poisson_nll_loss(a, b, log_input=False, full=True, reduction=red), p, q * 3, grad=True)
    check(lambda a, b, v, m: F(m).gaussian_nll_loss(a, b, v, reduction=red), x, y, p, grad=True)
    check(lambda a, b, v, m: F(m).gaussian_nll_loss(a, b, v, full=True, reduction=red), x, y, p[:, 0], grad=True)
    check(lambda a, b, m: F(m).cosine_embedding_loss(a, b, T(sign, m), margin=0.2, reduction=red), x, y, grad=True)
    check(lambda a, b, m: F(m).margin_ranking_loss(a, b, T(torch.sign(y[0]), m), margin=0.1, reduction=red),
          x[0], x[1], grad=True)
    check(lambda a, m: F(m).hinge_embedding_loss(a, T(torch.sign(y), m), margin=0.5, reduction=red), x, grad=True)
    check(lambda a, b, c, m: F(m).triplet_margin_loss(a, b, c, margin=0.5, p=1.5, reduction=red), x, y, p,
          grad=True)
    check(lambda a, b, c, m: F(m).triplet_margin_loss(a, b, c, swap=True, reduction=red), x, y, p, grad=True)
    check(lambda a, b, c, m: F(m).triplet_margin_with_distance_loss(
        a, b, c, distance_function=lambda u, v: (u - v).abs().sum(-1), swap=True, reduction=red), x, y, p, grad=True)
    check(lambda a, b, m: F(m).multilabel_soft_margin_loss(a, b, weight=T(p[0], m), reduction=red),
          x, (q > 0.5).double(), grad=True)
    check(lambda a, m: F(m).soft_margin_loss(a, T(torch.sign(y), m), reduction=red), x, grad=True)
    t = torch.tensor([1, 0, 3])
    check(lambda a, m: F(m).multi_margin_loss(a, T(t, m), reduction=red), x, grad=True)
    check(lambda a, m: F(m).multi_margin_loss(a, T(t, m), p=2, margin=0.5, weight=T(p[0], m), reduction=red), x,
          grad=True)
    mt = torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]])
    check(lambda a, m: F(m).multilabel_margin_loss(a, T(mt, m), reduction=red), x, grad=True)


def test_composite_errors():
    x = rand(3, 4)
    check_raises(lambda a, v, m: F(m).gaussian_nll_loss(a, a, v), x, rand(2))
    check_raises(lambda a, v, m: F(m).gaussian_nll_loss(a, a, v), x, -probs(3, 4).float())
    check_raises(lambda a, m: F(m).triplet_margin_loss(a, a, a[0]), x)
    check_raises(lambda a, m: F(m).kl_div(a, a, reduction='bad'), x)
    check_raises(lambda a, m: F(m).multi_margin_loss(a, T(torch.tensor([0, 1, 2]), m), p=3), x)


MODULES = [
    (lambda m: m.nn.MSELoss(), 'reg'), (lambda m: m.nn.L1Loss(reduction='sum'), 'reg'),
    (lambda m: m.nn.SmoothL1Loss(beta=0.3), 'reg'), (lambda m: m.nn.HuberLoss(delta=0.5, reduction='none'), 'reg'),
    (lambda m: m.nn.SoftMarginLoss(), 'sign'), (lambda m: m.nn.HingeEmbeddingLoss(margin=0.3), 'sign'),
    (lambda m: m.nn.BCELoss(weight=m.ones(4) * 0.5), 'prob'),
    (lambda m: m.nn.BCEWithLogitsLoss(weight=m.ones(4) * 2, pos_weight=m.ones(4) * 3), 'prob'),
    (lambda m: m.nn.KLDivLoss(reduction='batchmean'), 'prob'), (lambda m: m.nn.PoissonNLLLoss(full=True), 'prob'),
    (lambda m: m.nn.MultiLabelSoftMarginLoss(weight=m.ones(4) * 0.3), 'prob'),
    (lambda m: m.nn.CrossEntropyLoss(weight=m.ones(4) * 2, ignore_index=1, label_smoothing=0.1), 'class'),
    (lambda m: m.nn.CrossEntropyLoss(), 'class'), (lambda m: m.nn.NLLLoss(weight=m.ones(4) * 0.5), 'class'),
    (lambda m: m.nn.MultiMarginLoss(p=2), 'class'),
]


@pytest.mark.parametrize('make,kind', MODULES)
def test_modules(make, kind):
    x = rand(3, 4)
    target = {'reg': rand(3, 4, seed=5), 'sign': torch.sign(rand(3, 4, seed=5)), 'prob': probs(3, 4).float(),
              'class': torch.tensor([0, 3, 1])}[kind]
    inp = probs(3, 4, seed=9).float() if kind == 'prob' and 'BCELoss()' in repr(make(torch)) else x
    if isinstance(make(torch), torch.nn.BCELoss):
        inp = probs(3, 4, seed=9).float()
    # PyTorch's soft_margin_loss refuses a target that requires grad (check_module makes float inputs require it)
    check_module(make, inp, target, grad=not isinstance(make(torch), torch.nn.SoftMarginLoss))
    assert repr(make(ember)) == repr(make(torch))
    assert list(make(ember).state_dict()) == list(make(torch).state_dict())


def test_modules_multi_input():
    x, y, z = rand(3, 4), rand(3, 4, seed=1), rand(3, 4, seed=2)
    check_module(lambda m: m.nn.CosineEmbeddingLoss(margin=0.1), x, y, torch.tensor([1., -1., 1.]))
    check_module(lambda m: m.nn.MarginRankingLoss(margin=0.2), x[0], y[0], torch.sign(z[0]))
    check_module(lambda m: m.nn.TripletMarginLoss(margin=0.5, swap=True), x, y, z)
    check_module(lambda m: m.nn.GaussianNLLLoss(), x, y, probs(3, 4).float())
    check_module(lambda m: m.nn.MultiLabelMarginLoss(), x, torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 0, 0]]))
    lp, tg, il, tl = ctc_inputs(8, 3, 5, 3, dtype=torch.float32)
    check_module(lambda m: m.nn.CTCLoss(zero_infinity=True), lp, tg, il, tl)
    for name in ('CTCLoss', 'GaussianNLLLoss', 'TripletMarginLoss', 'NLLLoss2d', 'KLDivLoss'):
        assert repr(getattr(ember.nn, name)()) == repr(getattr(torch.nn, name)())


def test_backward_ops_from_python():
    x, t = rand(4, 5, dtype='float64'), torch.tensor([1, 0, 4, 2])
    tx = x.clone().requires_grad_()
    torch.nn.functional.cross_entropy(tx, t, reduction='sum').backward()
    ex, et = to_ember(x), to_ember(t)
    g, tw = ember.tensor(1., dtype=ember.float64), ember.tensor(4., dtype=ember.float64)
    lse = ember.logsumexp(ex, 1)
    gx = ember._C._nn.cross_entropy_backward(g, ex, et, None, 2, -100, lse, tw)
    assert torch.allclose(torch.tensor(gx.tolist(), dtype=torch.float64), tx.grad)
    gn = ember._C._nn.nll_loss_backward(g, ex, et, None, 2, -100, tw)
    assert gn.tolist()[0][1] == -1.0
    assert float(ember._C._nn.cross_entropy(ex, et, None, 2)) == pytest.approx(
        float(torch.nn.functional.cross_entropy(x, t, reduction='sum')))
