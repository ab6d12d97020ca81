"""Sort ops (include/ember/sort.h) vs PyTorch 1.13: sort, argsort, msort, topk,
kthvalue, unique, unique_consecutive, searchsorted, bucketize, histc, histogram,
bincount — values, dtypes, gradients, overloads, out=, errors."""
import pytest
import torch

import ember
from helpers import check, check_raises, rand
from test_reduce import check_out


def distinct(*shape, seed=0, dtype=torch.float32):
    """Values without ties (so indices are unambiguous), in a random order."""
    n = 1
    for s in shape:
        n *= s
    g = torch.Generator().manual_seed(seed)
    return (torch.randperm(n, generator=g).to(dtype) - n // 2).reshape(shape)


# ---- sort, argsort, msort ----------------------------------------------------------
@pytest.mark.parametrize('shape', [(4, 5), (6,), (), (2, 3, 4)])
def test_sort_forms(shape):
    x = distinct(*shape, seed=1)
    check(lambda x, m: m.sort(x), x, grad=True)
    check(lambda x, m: x.sort(0), x, grad=True)
    check(lambda x, m: m.sort(x, -1, True), x, grad=True)
    check(lambda x, m: m.sort(x, dim=0, descending=True), x)
    check(lambda x, m: m.sort(x, stable=True), x)
    check(lambda x, m: x.sort(stable=False, dim=0, descending=True), x)
    check(lambda x, m: m.argsort(x), x)
    check(lambda x, m: x.argsort(0, True), x)
    check(lambda x, m: m.argsort(x, stable=True, descending=True), x)
    check_out(lambda x, m, out: m.sort(x, 0, out=out), x, dtypes=('float32', 'int64'))


def test_sort_ties_and_dtypes():
    x = rand(3, 8, dtype='int64', seed=2, low=0, high=2)
    check(lambda x, m: m.sort(x, stable=True), x)
    check(lambda x, m: m.sort(x, descending=True, stable=True), x)
    check(lambda x, m: m.argsort(x, stable=True, dim=0), x)
    check(lambda x, m: m.sort(x.bool(), stable=True), x)
    n = torch.tensor([3.0, float('nan'), -1.0, float('inf'), 0.0])
    check(lambda x, m: m.sort(x), n)
    check(lambda x, m: m.sort(x, descending=True), n)
    r = ember.sort(ember.tensor([2.0, 1.0]))
    assert type(r).__name__ == 'sort' and r.values.tolist() == [1.0, 2.0] and r.indices.tolist() == [1, 0]


def test_msort():
    x = distinct(5, 3, seed=3)
    check(lambda x, m: m.msort(x), x, grad=True)
    check(lambda x, m: x.msort(), x, grad=True)
    check_out(lambda x, m, out: m.msort(x, out=out), x)


def test_sort_errors():
    x = distinct(3, 4, seed=4)
    check_raises(lambda x, m: m.sort(x, 2), x)
    check_raises(lambda x, m: m.sort(x, 0, out=(x,)), x)
    check_raises(lambda x, m: m.sort(x, 0, out=m.empty(0)), x)
    check_raises(lambda x, m: m.argsort(x, 1.5, True), x)
    check_raises(lambda x, m: m.sort(x, 0, descending=1), x)


# ---- topk, kthvalue ---------------------------------------------------------------------
@pytest.mark.parametrize('shape', [(4, 6), (7,)])
def test_topk(shape):
    x = distinct(*shape, seed=5)
    check(lambda x, m: m.topk(x, 3), x, grad=True)
    check(lambda x, m: x.topk(2, 0), x, grad=True)
    check(lambda x, m: m.topk(x, 2, largest=False), x, grad=True)
    check(lambda x, m: m.topk(x, k=1, dim=-1, largest=True, sorted=True), x)
    check(lambda x, m: m.topk(x, 0), x)
    check(lambda x, m: m.topk(x.long(), 2), x)
    check_out(lambda x, m, out: m.topk(x, 2, out=out), x, dtypes=('float32', 'int64'))
    assert type(ember.topk(ember.ones(3), 1)).__name__ == 'topk'
    check_raises(lambda x, m: m.topk(x, 100), x)
    check_raises(lambda x, m: m.topk(x, -1), x)
    check_raises(lambda x, m: m.topk(x), x)
    check_raises(lambda x, m: m.topk(x.bool(), 1), x)


def test_kthvalue():
    x = distinct(4, 6, seed=6)
    check(lambda x, m: m.kthvalue(x, 2), x, grad=True)
    check(lambda x, m: x.kthvalue(3, 0), x, grad=True)
    check(lambda x, m: m.kthvalue(x, 1, -1, True), x, grad=True)
    check(lambda x, m: m.kthvalue(x, k=4, dim=0, keepdim=True), x)
    check(lambda x, m: m.kthvalue(x.double(), 6), x)
    check_out(lambda x, m, out: m.kthvalue(x, 2, 1, out=out), x, dtypes=('float32', 'int64'))
    assert type(ember.kthvalue(ember.ones(3), 1)).__name__ == 'kthvalue'
    check_raises(lambda x, m: m.kthvalue(x, 0), x)
    check_raises(lambda x, m: m.kthvalue(x, 7), x)
    check_raises(lambda x, m: m.kthvalue(x, 1, 2), x)


# ---- unique ----------------------------------------------------------------------------------
@pytest.mark.parametrize('dt', ['int64', 'float32', 'bool', 'uint8'])
def test_unique(dt):
    x = rand(4, 5, dtype=dt, seed=7, low=-2, high=2)
    check(lambda x, m: m.unique(x), x)
    check(lambda x, m: x.unique(), x)
    check(lambda x, m: m.unique(x, return_inverse=True), x)
    check(lambda x, m: m.unique(x, return_counts=True), x)
    check(lambda x, m: x.unique(True, True, True), x)
    check(lambda x, m: m.unique(x, sorted=False).sort().values, x)  # PyTorch's order is unspecified
    check(lambda x, m: m.unique(x, dim=0, return_inverse=True, return_counts=True), x)
    check(lambda x, m: x.unique(dim=1), x)


def test_unique_consecutive():
    x = torch.tensor([[1, 1, 2, 2, 3], [1, 1, 2, 2, 3], [0, 0, 0, 1, 1]])
    check(lambda x, m: m.unique_consecutive(x), x)
    check(lambda x, m: x.unique_consecutive(return_inverse=True), x)
    check(lambda x, m: m.unique_consecutive(x, True, True), x)
    check(lambda x, m: m.unique_consecutive(x, return_counts=True, dim=0), x)
    check(lambda x, m: x.unique_consecutive(return_inverse=True, return_counts=True, dim=1), x)
    check(lambda x, m: m.unique_consecutive(x.float()), x)


def test_unique_errors():
    x = rand(3, 4, dtype='int64', seed=8)
    check_raises(lambda x, m: m.unique(x, dim=2), x)
    check_raises(lambda x, m: m.unique_consecutive(x, dim=-3), x)
    check_raises(lambda x, m: m.unique(x.half()), x)
    check_raises(lambda x, m: m.unique(x, sorted=None), x)


# ---- searchsorted, bucketize -------------------------------------------------------------------
def test_searchsorted():
    seq = torch.tensor([1.0, 2.0, 2.0, 3.0, 5.0])
    v = torch.tensor([[0.0, 2.0, 6.0], [2.5, 3.0, 5.0]])
    check(lambda s, v, m: m.searchsorted(s, v), seq, v)
    check(lambda s, v, m: m.searchsorted(s, v, right=True), seq, v)
    check(lambda s, v, m: m.searchsorted(s, v, side='right'), seq, v)
    check(lambda s, v, m: m.searchsorted(s, v, side='left', out_int32=True), seq, v)
    check(lambda s, v, m: m.searchsorted(s, 2.0), seq, v)
    check(lambda s, v, m: m.searchsorted(s, 2, right=True), seq, v)
    rows = torch.tensor([[1, 3, 5], [2, 4, 6]])
    check(lambda s, v, m: m.searchsorted(s, v), rows, torch.tensor([[0, 3, 6], [4, 4, 7]]))
    check(lambda s, v, m: m.searchsorted(s, v), rows, v)
    unsorted = torch.tensor([3.0, 1.0, 2.0])
    check(lambda s, v, m: m.searchsorted(s, v, sorter=s.argsort()), unsorted, v)
    check_out(lambda s, v, m, out: m.searchsorted(s, v, out=out), seq, v, dtypes=('int64',))
    check_out(lambda s, v, m, out: m.searchsorted(s, v, out_int32=True, out=out), seq, v, dtypes=('int32',))
    assert not hasattr(ember.Tensor, 'searchsorted')


def test_searchsorted_errors():
    seq, v = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([[1.5]])
    check_raises(lambda s, v, m: m.searchsorted(s, v, side='middle'), seq, v)
    check_raises(lambda s, v, m: m.searchsorted(s, v, right=True, side='left'), seq, v)
    check_raises(lambda s, v, m: m.searchsorted(s.reshape(3, 1), v.reshape(1, 1, 1)), seq, v)
    check_raises(lambda s, v, m: m.searchsorted(s, v, out=m.empty(0, dtype=m.int32)), seq, v)
    check_raises(lambda s, v, m: m.searchsorted(s, 'a'), seq, v)


def test_bucketize():
    b = torch.tensor([1.0, 3.0, 5.0, 7.0])
    x = torch.tensor([[0.0, 3.0, 6.0], [9.0, 1.0, 5.0]])
    check(lambda x, b, m: m.bucketize(x, b), x, b)
    check(lambda x, b, m: m.bucketize(x, b, right=True), x, b)
    check(lambda x, b, m: m.bucketize(x, b, out_int32=True), x, b)
    check(lambda x, b, m: m.bucketize(4, b), x, b)
    check(lambda x, b, m: m.bucketize(3.0, boundaries=b, right=True), x, b)
    check_out(lambda x, b, m, out: m.bucketize(x, b, out=out), x, b, dtypes=('int64',))
    check_raises(lambda x, b, m: m.bucketize(x, b.reshape(2, 2)), x, b)
    assert not hasattr(ember.Tensor, 'bucketize')


# ---- histograms, bincount -----------------------------------------------------------------------
def test_histc():
    x = rand(50, seed=9)
    check(lambda x, m: m.histc(x), x)
    check(lambda x, m: x.histc(5), x)
    check(lambda x, m: m.histc(x, 4, -1, 1), x)
    check(lambda x, m: m.histc(x, bins=3, min=0, max=0), x)
    check(lambda x, m: m.histc(x.double(), 7, max=2.5), x)
    check_out(lambda x, m, out: m.histc(x, 3, out=out), x)
    check_raises(lambda x, m: m.histc(x, 0), x)
    check_raises(lambda x, m: m.histc(x, 3, 2, 1), x)
    check_raises(lambda x, m: m.histc(x.long()), x)


def test_histogram():
    x = rand(40, seed=10)
    w = rand(40, seed=11, low=0, high=1)
    edges = torch.tensor([-3.0, -1.0, 0.0, 2.0, 3.0])
    check(lambda x, m: m.histogram(x), x)
    check(lambda x, m: x.histogram(6), x)
    check(lambda x, m: m.histogram(x, 4, range=(-1, 1)), x)
    check(lambda x, m: m.histogram(x, bins=4, range=[-2.0, 2.5], density=True), x)
    check(lambda x, w, m: m.histogram(x, 5, weight=w), x, w)
    check(lambda x, e, m: m.histogram(x, e), x, edges)
    check(lambda x, e, w, m: x.histogram(e, weight=w, density=True), x, edges, w)
    check(lambda x, m: m.histogram(x.double(), 3), x)
    check_out(lambda x, m, out: m.histogram(x, 3, out=out), x, dtypes=('float32', 'float32'))
    check_out(lambda x, e, m, out: m.histogram(x, e, out=out), x, edges, dtypes=('float32', 'float32'))
    r = ember.histogram(ember.tensor([1.0, 2.0]), 2)
    assert type(r).__name__ == 'histogram' and r.hist.tolist() == [1.0, 1.0] and len(r.bin_edges) == 3
    check_raises(lambda x, m: m.histogram(x, 3, range=(0, 1, 2)), x)
    check_raises(lambda x, m: m.histogram(x, 3, range='a'), x)
    check_raises(lambda x, m: m.histogram(x.long(), 3), x)
    check_raises(lambda x, m: m.histogram(x, 3, out=(m.empty(0, dtype=m.float64), m.empty(0))), x)


def test_bincount():
    x = rand(20, dtype='int64', seed=12, low=0, high=6)
    w = rand(20, seed=13)
    check(lambda x, m: m.bincount(x), x)
    check(lambda x, m: x.bincount(minlength=10), x)
    check(lambda x, w, m: m.bincount(x, w), x, w)
    check(lambda x, w, m: x.bincount(weights=w.double(), minlength=3), x, w)
    check(lambda x, m: m.bincount(x.int()), x)
    check(lambda m: m.bincount(m.zeros(0, dtype=m.int64), minlength=4))
    check_raises(lambda x, m: m.bincount(x - 10), x)
    check_raises(lambda x, m: m.bincount(x.float()), x)
    check_raises(lambda x, m: m.bincount(x.reshape(4, 5)), x)
    check_raises(lambda x, m: m.bincount(x, minlength=-1), x)


def test_names():
    from test_reduce import same_names
    same_names(('sort argsort msort topk kthvalue unique unique_consecutive searchsorted bucketize histc histogram '
                'bincount').split())
