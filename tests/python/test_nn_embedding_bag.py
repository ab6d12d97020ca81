"""EmbeddingBag and pdist vs PyTorch 1.13: bag values and gradients (weight and
per_sample_weights) for every mode, 1-d input with offsets and 2-d fixed-length
bags, padding_idx, include_last_offset, scale_grad_by_freq, max_norm,
torch.embedding_bag's 4-tuple, errors; the module (repr, init,
from_pretrained); pdist's values, gradients (0 at a zero distance) and errors."""
import pytest
import torch

import ember
from helpers import check, check_raises, rand, to_ember
from nn_helpers import check_module

IDX = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0])
OFF = torch.tensor([0, 2, 2, 5])
CONFIGS = [{}, {'padding_idx': 2}, {'padding_idx': -8}, {'scale_grad_by_freq': True},
           {'include_last_offset': True}, {'padding_idx': 4, 'include_last_offset': True}]


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('mode', ['sum', 'mean', 'max'])
def test_values_and_gradients(dtype, mode):
    w = rand(10, 3, dtype=dtype, seed=1)
    for kw in CONFIGS:
        if mode == 'max' and kw.get('scale_grad_by_freq'):
            continue
        off = torch.cat([OFF, torch.tensor([9])]) if kw.get('include_last_offset') else OFF
        grad = not kw.get('scale_grad_by_freq')  # torch's CPU gradient there is not by frequency: see below
        for idx, o in ((IDX, off), (IDX.int(), off.int())):
            check(lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o, mode=mode, **kw), idx, w, o, grad=grad)
        # 2-d input: fixed-length bags (torch 1.13 corrupts its heap with include_last_offset here)
        if not kw.get('include_last_offset'):
            check(lambda i, w, m: m.nn.functional.embedding_bag(i, w, mode=mode, **kw), IDX.view(3, 3), w, grad=grad)
    # Ember's 2-d bags with include_last_offset: the offsets 0, 3, 6 make two bags, the last row is in none
    e = ember.nn.functional.embedding_bag(to_ember(IDX.view(3, 3)), to_ember(w), mode=mode, include_last_offset=True)
    t = torch.nn.functional.embedding_bag(IDX[:6].view(2, 3), w, mode=mode)
    assert torch.allclose(torch.tensor(e.tolist(), dtype=t.dtype), t)
    # a transposed (non-contiguous) weight
    wt = rand(3, 10, dtype=dtype, seed=2).t()
    check(lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o, mode=mode), IDX, wt, OFF, grad=True)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_per_sample_weights(dtype):
    w, psw = rand(10, 3, dtype=dtype, seed=3), rand(9, dtype=dtype, seed=4)
    for kw in ({}, {'padding_idx': 2}, {'scale_grad_by_freq': True}):
        check(lambda i, w, o, p, m: m.nn.functional.embedding_bag(i, w, o, mode='sum', per_sample_weights=p, **kw),
              IDX, w, OFF, psw, grad=not kw)
    check(lambda i, w, p, m: m.nn.functional.embedding_bag(i, w, mode='sum', per_sample_weights=p),
          IDX.view(3, 3), w, psw.view(3, 3), grad=True)


@pytest.mark.parametrize('mode', ['sum', 'mean'])
def test_scale_grad_by_freq(mode):
    """Each entry's gradient divided by its index's count in the input (the
    documented rule; torch 1.13's CPU kernel divides by other counts)."""
    w = ember.zeros(10, 1, requires_grad=True)
    F = ember.nn.functional
    F.embedding_bag(to_ember(IDX), w, to_ember(OFF), mode=mode, scale_grad_by_freq=True).sum().backward()
    sizes = [2, 0, 3, 4]
    bag = [0, 0, 2, 2, 2, 3, 3, 3, 3]
    want = [0.0] * 10
    for k, i in enumerate(IDX.tolist()):
        want[i] += 1 / (IDX == i).sum().item() / (sizes[bag[k]] if mode == 'mean' else 1)
    assert torch.allclose(torch.tensor(w.grad.flatten().tolist()), torch.tensor(want))


def test_torch_embedding_bag_tuple():
    w = rand(10, 3, dtype='float64', seed=5)
    for mode in (0, 1, 2):
        for pad in (None, 2):
            check(lambda w, i, o, m: m.embedding_bag(w, i, o, False, mode, False, None, False, pad), w, IDX, OFF)


def test_max_norm_renormalises_the_rows_used():
    tw = rand(10, 3, dtype='float64', seed=6) * 3
    ew = to_ember(tw)
    t = torch.nn.functional.embedding_bag(IDX, tw, OFF, max_norm=1.0)
    e = ember.nn.functional.embedding_bag(to_ember(IDX), ew, to_ember(OFF), max_norm=1.0)
    assert torch.allclose(torch.tensor(e.tolist(), dtype=torch.float64), t)
    assert torch.allclose(torch.tensor(ew.tolist(), dtype=torch.float64), tw)


def test_gradcheck_and_double_backward():
    w = ember.randn(10, 3, dtype=ember.float64, requires_grad=True)
    p = ember.randn(9, dtype=ember.float64, requires_grad=True)
    i, o = to_ember(IDX), to_ember(OFF)
    F = ember.nn.functional
    for mode in ('sum', 'mean', 'max'):
        for pad in (None, 4):
            fn = lambda t: F.embedding_bag(i, t, o, mode=mode, padding_idx=pad) ** 2  # noqa: E731
            assert ember.autograd.gradcheck(fn, (w,))
            assert ember.autograd.gradgradcheck(fn, (w,))
    fn = lambda t, q: F.embedding_bag(i, t, o, mode='sum', per_sample_weights=q) ** 2  # noqa: E731
    assert ember.autograd.gradcheck(fn, (w, p))
    assert ember.autograd.gradgradcheck(fn, (w, p))


def test_errors():
    w = rand(10, 3, seed=7)
    cases = [
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o[1:]), IDX, w, OFF),            # offsets[0] != 0
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o), IDX, w, torch.tensor([0, 12])),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o, mode='median'), IDX, w, OFF),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o, mode='max', scale_grad_by_freq=True), IDX, w, OFF),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o, mode='mean', per_sample_weights=m.ones(9)),
         IDX, w, OFF),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o, per_sample_weights=m.ones(8)), IDX, w, OFF),
        (lambda i, w, m: m.nn.functional.embedding_bag(i, w), IDX, w),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i.view(3, 3), w, o), IDX, w, OFF),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w, o.view(2, 2)), IDX, w, OFF),
        (lambda i, w, m: m.nn.functional.embedding_bag(i.view(1, 3, 3), w), IDX, w),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i + 10, w, o), IDX, w, OFF),
        (lambda i, w, o, m: m.nn.functional.embedding_bag(i, w.to(m.bfloat16), o), IDX, w, OFF),
    ]
    for fn, *inputs in cases:
        check_raises(fn, *inputs)
    # offsets out of order: torch reads past the bags; Ember refuses
    with pytest.raises(RuntimeError, match='non-decreasing'):
        ember.nn.functional.embedding_bag(to_ember(IDX), to_ember(w), ember.tensor([0, 5, 3]))


@pytest.mark.parametrize('kw', [{}, {'mode': 'sum'}, {'mode': 'max'}, {'padding_idx': 3},
                                {'max_norm': 1.0, 'norm_type': 1.0}, {'scale_grad_by_freq': True},
                                {'include_last_offset': True, 'mode': 'sum'}])
def test_module(kw):
    off = torch.cat([OFF, torch.tensor([9])]) if kw.get('include_last_offset') else OFF
    grad = not kw.get('scale_grad_by_freq')
    emod, tmod = check_module(lambda m: m.nn.EmbeddingBag(10, 3, **kw), IDX, off, grad=grad)
    assert repr(emod) == repr(tmod)
    if not kw.get('include_last_offset'):
        check_module(lambda m: m.nn.EmbeddingBag(10, 3, **kw), IDX.view(3, 3), grad=grad)
    if kw.get('mode') == 'sum':
        check_module(lambda m: m.nn.EmbeddingBag(10, 3, **kw), IDX, off, rand(9, seed=8),
                     forward=lambda mod, i, o, p: mod(i, o, per_sample_weights=p))


def test_module_init_and_from_pretrained():
    mod = ember.nn.EmbeddingBag(400, 500, padding_idx=7)
    w = mod.weight.detach()
    assert w[7].abs().sum().item() == 0
    assert abs(w.mean().item()) < 0.01 and abs(w.std().item() - 1) < 0.01  # N(0, 1)
    emb = torch.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    for freeze in (True, False):
        e = ember.nn.EmbeddingBag.from_pretrained(to_ember(emb), freeze=freeze, mode='max')
        t = torch.nn.EmbeddingBag.from_pretrained(emb, freeze=freeze, mode='max')
        assert e.weight.requires_grad == t.weight.requires_grad and repr(e) == repr(t)
        assert e(ember.tensor([[1, 0]])).tolist() == t(torch.tensor([[1, 0]])).tolist()


# ---- pdist ----------------------------------------------------------------------------------
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_pdist(dtype):
    for p in (0, 0.5, 1, 2, 3, float('inf')):
        check(lambda x, m: m.nn.functional.pdist(x, p), rand(5, 4, dtype=dtype, seed=9), grad=True)
        check(lambda x, m: m.pdist(x, p), rand(4, 5, dtype=dtype, seed=10).t(), grad=True)
        # equal rows: zero distances, whose gradient is 0
        x = torch.tensor([[1., 2.], [1., 2.], [0., 3.]], dtype=getattr(torch, dtype))
        check(lambda x, m: m.nn.functional.pdist(x, p), x, grad=True)
    for shape in ((1, 3), (0, 3), (4, 0)):  # (torch 1.13's backward crashes on 0 rows)
        check(lambda x, m: m.nn.functional.pdist(x), rand(*shape, dtype=dtype), grad=shape[0] > 0)
    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.nn.functional.pdist(t, 3), (x,))


def test_pdist_errors():
    check_raises(lambda x, m: m.nn.functional.pdist(x), rand(2, 3, 4))
    check_raises(lambda x, m: m.nn.functional.pdist(x, -1), rand(2, 3))
    check_raises(lambda x, m: m.nn.functional.pdist(x), torch.zeros(2, 3, dtype=torch.long))
