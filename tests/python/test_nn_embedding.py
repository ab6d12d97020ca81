"""Embedding vs PyTorch 1.13: lookup values for index shapes and dtypes,
weight gradients (padding_idx, scale_grad_by_freq, repeated indices), max_norm
renormalisation, errors, the module (init, padding row, from_pretrained, repr)."""
import pytest
import torch

import ember
from helpers import check, check_raises, rand, to_ember

IDX = torch.tensor([[1, 4, 1, 0], [3, 3, 3, 2]])


def _eq(a, b):
    """Same shape and values (ember has no ember.equal yet)."""
    return a.shape == b.shape and bool((a == b).all())


def _close(a, b):
    return a.shape == b.shape and bool(((a - b).abs() <= 1e-5 + 1e-4 * b.abs()).all())


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_values_and_gradients(dtype):
    w = rand(6, 5, dtype=dtype, seed=1)
    for idx in (IDX, IDX.int(), IDX[0], torch.tensor(3), IDX.t(), torch.zeros(0, dtype=torch.long)):
        for kw in ({}, {'padding_idx': 3}, {'padding_idx': -3}, {'scale_grad_by_freq': True},
                   {'padding_idx': 1, 'scale_grad_by_freq': True}):
            check(lambda i, w, m: m.nn.functional.embedding(i, w, **kw), idx, w, grad=True)
    check(lambda i, w, m: m.nn.functional.embedding(i, w), IDX, rand(5, 6, dtype=dtype, seed=2).t(), grad=True)
    check(lambda i, w, m: m.embedding(w, i), IDX, w)
    check(lambda i, w, m: m.nn.functional.embedding(i, w), IDX, torch.arange(30).reshape(6, 5))


def test_gradcheck_and_double_backward():
    w = ember.randn(6, 3, dtype=ember.float64, requires_grad=True)
    idx = to_ember(IDX)
    for kw in ({}, {'padding_idx': 5}):
        assert ember.autograd.gradcheck(lambda t: ember.nn.functional.embedding(idx, t, **kw) ** 2, (w,))
        assert ember.autograd.gradgradcheck(lambda t: ember.nn.functional.embedding(idx, t, **kw) ** 2, (w,))


def test_large_gradient_threads():
    idx = torch.randint(0, 100, (300, 40))
    check(lambda i, w, m: m.nn.functional.embedding(i, w), idx, rand(100, 16, seed=3), grad=True)


def test_max_norm():
    for norm_type in (2.0, 1.0, 3.0):
        w = rand(6, 4, seed=4)
        tw, ew = w.clone(), to_ember(w)
        t = torch.nn.functional.embedding(IDX, tw, max_norm=1.0, norm_type=norm_type)
        e = ember.nn.functional.embedding(to_ember(IDX), ew, max_norm=1.0, norm_type=norm_type)
        check(lambda a, m: a, t, efn=lambda a, m: e)
        check(lambda a, m: a, tw, efn=lambda a, m: ew)  # the weight was renormalised in place
    tw = torch.nn.Parameter(rand(6, 4, seed=5))
    ew = ember.nn.Parameter(to_ember(tw.detach()))
    torch.nn.functional.embedding(IDX, tw, max_norm=0.5).sum().backward()
    ember.nn.functional.embedding(to_ember(IDX), ew, max_norm=0.5).sum().backward()
    check(lambda a, m: a, tw.grad, efn=lambda a, m: ew.grad)


def test_errors():
    w = rand(5, 3)
    check_raises(lambda i, w, m: m.nn.functional.embedding(i, w), torch.tensor([5]), w)
    check_raises(lambda i, w, m: m.nn.functional.embedding(i, w), torch.tensor([-1]), w)
    check_raises(lambda i, w, m: m.nn.functional.embedding(i, w), torch.tensor([1.0]), w)
    check_raises(lambda i, w, m: m.nn.functional.embedding(i, w), torch.tensor([1], dtype=torch.int16), w)
    check_raises(lambda i, w, m: m.nn.functional.embedding(i, w), torch.tensor([1]), rand(5))
    check_raises(lambda i, w, m: m.nn.functional.embedding(i, w, padding_idx=5), torch.tensor([1]), w)
    check_raises(lambda i, w, m: m.nn.functional.embedding(i, w, padding_idx=-6), torch.tensor([1]), w)
    with pytest.raises(IndexError, match='index out of range in self'):
        ember.nn.functional.embedding(ember.tensor([7]), ember.ones(5, 3))
    with pytest.raises(NotImplementedError):
        ember.nn.functional.embedding(ember.tensor([1]), ember.ones(5, 3), sparse=True)
    leaf = ember.ones(5, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match='leaf Variable'):
        ember.embedding_renorm_(leaf, ember.tensor([1]), 1.0, 2.0)


MODULES = [lambda m: m.nn.Embedding(10, 4), lambda m: m.nn.Embedding(10, 4, padding_idx=2),
           lambda m: m.nn.Embedding(10, 4, padding_idx=-1, max_norm=1.5, norm_type=1.0),
           lambda m: m.nn.Embedding(10, 4, scale_grad_by_freq=True)]


@pytest.mark.parametrize('k', range(len(MODULES)))
def test_modules(k):
    from nn_helpers import check_module
    make = MODULES[k]
    assert repr(make(ember)) == repr(make(torch))
    check_module(make, torch.tensor([[1, 2, 9], [2, 2, 0]]))
    assert repr(ember.nn.Embedding(3, 2, sparse=True)) == repr(torch.nn.Embedding(3, 2, sparse=True))


def test_module_init():
    e = ember.nn.Embedding(2000, 50, padding_idx=7)
    w = e.weight.detach()
    assert bool((w[7] == 0).all())
    assert abs(w.mean().item()) < 0.01 and abs(w.std().item() - 1) < 0.01
    assert e.weight.shape == (2000, 50) and e.weight.requires_grad
    assert ember.nn.Embedding(3, 2, dtype=ember.float64).weight.dtype == ember.float64
    with pytest.raises(AssertionError):
        ember.nn.Embedding(3, 2, padding_idx=3)


def test_from_pretrained():
    w = ember.randn(4, 3)
    e = ember.nn.Embedding.from_pretrained(w)
    assert _eq(e.weight, w) and not e.weight.requires_grad
    assert repr(e) == repr(torch.nn.Embedding.from_pretrained(torch.randn(4, 3)))
    e2 = ember.nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1, max_norm=2.0)
    assert e2.weight.requires_grad and e2.padding_idx == 1
    assert repr(e2) == repr(torch.nn.Embedding.from_pretrained(torch.randn(4, 3), freeze=False, padding_idx=1,
                                                              max_norm=2.0))
    y = e2(ember.tensor([1, 2]))
    y.sum().backward()
    assert bool((e2.weight.grad[1] == 0).all()) and bool((e2.weight.grad[2] == 1).all())
    with pytest.raises(AssertionError):
        ember.nn.Embedding.from_pretrained(ember.ones(3))
