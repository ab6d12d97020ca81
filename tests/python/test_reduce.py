"""Reductions, scans, medians and softmax (include/ember/reduce.h) vs PyTorch 1.13:
values, dtypes, gradients, overloads, keyword forms, out=, in-place forms, errors."""
import pytest
import torch

import ember
from helpers import check, check_raises, rand

SHAPES = [(3, 4), (2, 3, 4), (5,), ()]


def check_out(fn, *inputs, dtypes=('float32',)):
    """fn(*inputs, m=m, out=...) writes into fresh out tensors (one, or a pair
    when two dtypes are given) and returns them, as PyTorch does."""
    def run(*xs, m):
        outs = [m.empty(0, dtype=getattr(m, d)) for d in dtypes]
        r = fn(*xs, m=m, out=outs[0] if len(outs) == 1 else tuple(outs))
        assert all(a is b for a, b in zip(r if len(outs) > 1 else [r], outs))
        return r
    check(run, *inputs)


# ---- sums, means, products --------------------------------------------------------
@pytest.mark.parametrize('op', ['sum', 'mean', 'nansum', 'nanmean', 'prod'])
@pytest.mark.parametrize('shape', SHAPES)
def test_sum_like_forms(op, shape):
    x = rand(*shape, seed=1, noncontig=True)
    dim = 0 if op == 'prod' or len(shape) < 2 else (0, -1)
    check(lambda x, m: getattr(m, op)(x), x, grad=True)
    check(lambda x, m: getattr(x, op)(dtype=m.float64), x, grad=True)
    if shape:
        check(lambda x, m: getattr(m, op)(x, -1), x, grad=True)
        check(lambda x, m: getattr(x, op)(dim, keepdim=True), x, grad=True)
        check(lambda x, m: getattr(m, op)(x, dim=dim, keepdim=False, dtype=m.float64), x, grad=True)
        check_out(lambda x, m, out: getattr(m, op)(x, 0, out=out), x)


@pytest.mark.parametrize('op', ['sum', 'nansum', 'prod'])
@pytest.mark.parametrize('dt', ['int32', 'uint8', 'bool', 'float64'])
def test_sum_like_dtypes(op, dt):
    x = rand(3, 4, dtype=dt, seed=2)
    check(lambda x, m: getattr(m, op)(x), x)
    check(lambda x, m: getattr(m, op)(x, 1), x)
    check(lambda x, m: getattr(m, op)(x, 1, dtype=m.float32), x)


def test_sum_dim_none_and_empty():
    x = rand(2, 3, seed=3)
    check(lambda x, m: m.sum(x, None), x)
    check(lambda x, m: m.sum(x, dim=(), keepdim=True), x)
    check(lambda x, m: m.mean(x, None, True), x)
    check(lambda x, m: m.nansum(x, None), x)
    for op in ('sum', 'mean', 'prod', 'nansum'):  # to_ember keeps no empty shapes: made inside
        check(lambda m: getattr(m, op)(m.zeros(0, 3), 0))
        check(lambda m: getattr(m, op)(m.zeros(0, 3)))


def test_nan_sums():
    x = torch.tensor([[1.0, float('nan'), 2.0], [float('nan'), float('nan'), 3.0]])
    check(lambda x, m: m.nansum(x, 1), x, grad=True)
    check(lambda x, m: m.nanmean(x), x)
    check(lambda x, m: x.nanmean(1, True), x)
    check(lambda x, m: m.sum(x, 1), x)


def test_sum_like_errors():
    x = rand(3, 4, seed=5)
    check_raises(lambda x, m: m.sum(x, 2), x)
    check_raises(lambda x, m: m.sum(x, (0, 0)), x)
    check_raises(lambda x, m: m.sum(x, 2 ** 40), x)
    check_raises(lambda x, m: m.sum(x, True), x)
    check_raises(lambda x, m: m.argmax(x, True), x)
    check_raises(lambda x, m: m.mean(x.long()), x)
    check_raises(lambda x, m: m.prod(x, (0, 1)), x)
    check_raises(lambda x, m: m.nanmean(x.long()), x)


# ---- extrema -------------------------------------------------------------------------
@pytest.mark.parametrize('op', ['max', 'min'])
@pytest.mark.parametrize('shape', SHAPES)
def test_max_min(op, shape):
    x = rand(*shape, seed=6, noncontig=True)
    check(lambda x, m: getattr(m, op)(x), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, 0), x, grad=True)
    check(lambda x, m: getattr(x, op)(dim=-1, keepdim=True), x, grad=True)
    check(lambda x, y, m: getattr(m, op)(x, y), x, rand(*shape, seed=7), grad=True)
    check_out(lambda x, m, out: getattr(m, op)(x, 0, out=out), x, dtypes=('float32', 'int64'))
    check_out(lambda x, y, m, out: getattr(m, op)(x, y, out=out), x, rand(*shape, seed=8))


def test_max_named_tuple_and_ints():
    x = rand(3, 4, dtype='int32', seed=9)
    e = ember.tensor(x.tolist(), dtype=ember.int32)
    r = e.max(1)
    assert type(r).__name__ == 'max' and r.values.tolist() == x.max(1).values.tolist()
    assert r.indices.tolist() == x.max(1).indices.tolist()
    values, indices = ember.min(e, 0)
    assert values.tolist() == x.min(0)[0].tolist() and indices.dtype is ember.int64
    check(lambda x, m: m.max(x, 1), x)
    check(lambda x, m: x.max(m.tensor(1, dtype=m.int32)), x)


def test_max_min_errors():
    x = rand(3, 4, seed=10)
    check_raises(lambda m: m.max(m.zeros(0, 3)))
    check_raises(lambda m: m.max(m.zeros(0, 3), 0))
    check_raises(lambda x, m: m.max(x, 2), x)
    check_raises(lambda x, m: m.max(x, 1, out=m.empty(0)), x)
    check_raises(lambda x, m: m.max(x, 1, out=(m.empty(0),)), x)
    check_raises(lambda x, m: m.min(x, 1, out=(m.empty(0), m.empty(0))), x)
    check_raises(lambda x, m: m.max(x, 1.5), x)


@pytest.mark.parametrize('op', ['amax', 'amin'])
def test_amax_amin(op):
    x = rand(2, 3, 4, seed=11, noncontig=True)
    check(lambda x, m: getattr(m, op)(x), x, grad=True)
    check(lambda x, m: getattr(x, op)((0, 2)), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, -1, True), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, None), x)
    check(lambda x, m: getattr(m, op)(x.long(), 1), x)
    check_out(lambda x, m, out: getattr(m, op)(x, 1, out=out), x)
    check_raises(lambda x, m: getattr(m, op)(x, 3), x)


@pytest.mark.parametrize('op', ['all', 'any'])
@pytest.mark.parametrize('dt', ['bool', 'float32', 'uint8', 'int64'])
def test_all_any(op, dt):
    x = rand(3, 4, dtype=dt, seed=12, low=0, high=1)
    check(lambda x, m: getattr(m, op)(x), x)
    check(lambda x, m: getattr(x, op)(1), x)
    check(lambda x, m: getattr(m, op)(x, dim=0, keepdim=True), x)
    check(lambda m: getattr(m, op)(m.zeros(0, 2, dtype=getattr(m, dt)), 1))
    check_out(lambda x, m, out: getattr(m, op)(x, 0, out=out), x, dtypes=('bool',))
    check_out(lambda x, m, out: getattr(m, op)(x, out=out), x, dtypes=('bool',))
    check_raises(lambda x, m: getattr(m, op)(x, (0, 1)), x)


def test_count_nonzero():
    x = rand(3, 4, 2, dtype='int64', seed=13, low=-1, high=1)
    check(lambda x, m: m.count_nonzero(x), x)
    check(lambda x, m: m.count_nonzero(x, 1), x)
    check(lambda x, m: m.count_nonzero(x, (0, 2)), x)
    check(lambda x, m: x.count_nonzero(0, 2), x)
    check(lambda x, m: x.count_nonzero(dim=(1,)), x)
    check_raises(lambda x, m: m.count_nonzero(x, 0, 1), x)
    check_raises(lambda x, m: m.count_nonzero(x, 3), x)


@pytest.mark.parametrize('op', ['argmax', 'argmin'])
def test_argmax_argmin(op):
    x = rand(3, 4, seed=14, noncontig=True)
    check(lambda x, m: getattr(m, op)(x), x)
    check(lambda x, m: getattr(x, op)(1), x)
    check(lambda x, m: getattr(m, op)(x, dim=0, keepdim=True), x)
    check(lambda x, m: getattr(m, op)(x, keepdim=True), x)
    check(lambda x, m: getattr(m, op)(x.int(), 0), x)
    check_out(lambda x, m, out: getattr(m, op)(x, 1, out=out), x, dtypes=('int64',))
    check_raises(lambda x, m: getattr(m, op)(x.bool()), x)
    check_raises(lambda x, m: getattr(m, op)(x, 2), x)
    check_raises(lambda m: getattr(m, op)(m.zeros(0)))


# ---- variance and norms -------------------------------------------------------------------
@pytest.mark.parametrize('op', ['var', 'std'])
def test_var_std(op):
    x = rand(3, 4, 5, seed=15, noncontig=True)
    f = lambda *a, **k: lambda x, m: getattr(m, op)(x, *a, **k)  # noqa: E731
    check(f(), x, grad=True)
    check(f(False), x, grad=True)
    check(f(unbiased=False), x, grad=True)
    check(f(1), x, grad=True)
    check(f((0, 2), True, True), x, grad=True)
    check(f(None, False), x)
    check(f(1, correction=0), x, grad=True)
    check(f(dim=(1, 2), correction=2, keepdim=True), x, grad=True)
    check(f(-1, unbiased=False, keepdim=True), x)
    check(lambda x, m: getattr(x, op)(1, keepdim=True), x)
    check(lambda x, m: getattr(x, op)(False), x)
    check_out(lambda x, m, out: getattr(m, op)(x, 1, out=out), x)
    check_raises(f(3), x)
    check_raises(lambda x, m: getattr(m, op)(x.long()), x)
    check_raises(f(1, correction=0.5), x)


@pytest.mark.parametrize('op', ['var_mean', 'std_mean'])
def test_var_mean(op):
    x = rand(3, 4, seed=16)
    check(lambda x, m: getattr(m, op)(x), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, False), x)
    check(lambda x, m: getattr(m, op)(x, 1, keepdim=True), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, 0, correction=0), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, (0, 1), False, True), x)
    assert type(getattr(ember, op)(ember.ones(3))) is tuple
    assert not hasattr(ember.Tensor, op)


def test_norm():
    x = rand(3, 4, seed=17, noncontig=True)
    for p in (2, 1, 3, 0, float('inf'), -float('inf'), 2.5, None):
        check(lambda x, m: m.norm(x, p), x, grad=p not in (0, None))
        check(lambda x, m: x.norm(p, 1), x)
    check(lambda x, m: m.norm(x), x, grad=True)
    check(lambda x, m: m.norm(x, 'fro', (0, 1), True), x, grad=True)
    check(lambda x, m: x.norm(dim=1, keepdim=True), x, grad=True)
    check(lambda x, m: m.norm(x, 2, dim=0, dtype=m.float64), x, grad=True)
    check(lambda x, m: x.norm(1, 0, False, m.float64), x)
    check(lambda x, m: m.norm(x, 'fro'), rand(2, 3, 4))
    check_out(lambda x, m, out: m.norm(x, 2, 1, False, out), x)
    check_out(lambda x, m, out: m.norm(x, 'fro', 0, out=out), x)
    check_raises(lambda x, m: m.norm(x, 'fro', (0, 1, 2)), rand(2, 3, 4))
    check_raises(lambda x, m: m.norm(x, 'fro', dtype=m.float64), x)
    check_raises(lambda x, m: m.norm(x, 'abc'), x)
    check_raises(lambda x, m: m.norm(x, 'nuc', (0, 1, 1)), x)
    check_raises(lambda x, m: m.norm(x.long()), x)
    check_raises(lambda x, m: m.norm(x, 2, 5), x)


def test_logsumexp():
    x = rand(3, 4, 2, seed=18, noncontig=True)
    check(lambda x, m: m.logsumexp(x, 1), x, grad=True)
    check(lambda x, m: x.logsumexp((0, 2), keepdim=True), x, grad=True)
    check(lambda x, m: m.logsumexp(x.long(), 0), x)
    check_out(lambda x, m, out: m.logsumexp(x, -1, out=out), x)
    check_raises(lambda x, m: m.logsumexp(x), x)
    check_raises(lambda x, m: m.logsumexp(x, 3), x)


# ---- scans --------------------------------------------------------------------------------
@pytest.mark.parametrize('op', ['cumsum', 'cumprod'])
@pytest.mark.parametrize('shape', [(3, 4), (5,), ()])
def test_cumsum_cumprod(op, shape):
    x = rand(*shape, seed=19, noncontig=True)
    check(lambda x, m: getattr(m, op)(x, 0), x, grad=True)
    check(lambda x, m: getattr(x, op)(dim=-1, dtype=m.float64), x, grad=True)
    check(lambda x, m: getattr(m, op)(x.int(), 0), x)
    check(lambda x, m: getattr(m, op)(x.bool(), 0, dtype=m.int32), x)
    check_out(lambda x, m, out: getattr(m, op)(x, 0, out=out), x)
    check(lambda x, m: getattr(x.clone(), op + '_')(0), x)
    y = ember.tensor(x.tolist())
    assert getattr(y, op + '_')(0) is y
    check_raises(lambda x, m: getattr(m, op)(x, 2), x)
    check_raises(lambda x, m: getattr(m, op)(x), x)


@pytest.mark.parametrize('op', ['cummax', 'cummin'])
def test_cummax_cummin(op):
    x = rand(3, 5, seed=20, noncontig=True)
    check(lambda x, m: getattr(m, op)(x, 1), x, grad=True)
    check(lambda x, m: getattr(x, op)(dim=0), x, grad=True)
    check(lambda x, m: getattr(m, op)(x.long(), 0), x)
    check_out(lambda x, m, out: getattr(m, op)(x, 1, out=out), x, dtypes=('float32', 'int64'))
    r = getattr(ember, op)(ember.tensor([1.0, 3.0, 2.0]), 0)
    assert type(r).__name__ == op and r.indices.dtype is ember.int64
    check_raises(lambda x, m: getattr(m, op)(x, 2), x)


def test_logcumsumexp():
    x = rand(3, 4, seed=21, noncontig=True)
    check(lambda x, m: m.logcumsumexp(x, 1), x, grad=True)
    check(lambda x, m: x.logcumsumexp(dim=0), x, grad=True)
    check_out(lambda x, m, out: m.logcumsumexp(x, 0, out=out), x)
    check_raises(lambda x, m: m.logcumsumexp(x.long(), 0), x)


# ---- medians, mode ------------------------------------------------------------------------
@pytest.mark.parametrize('op', ['median', 'nanmedian'])
def test_median(op):
    x = rand(3, 5, seed=22, noncontig=True)
    check(lambda x, m: getattr(m, op)(x), x, grad=True)
    check(lambda x, m: getattr(x, op)(1), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, dim=0, keepdim=True), x, grad=True)
    check(lambda x, m: getattr(m, op)(x.long(), 1).values, x)
    check_out(lambda x, m, out: getattr(m, op)(x, 1, out=out), x, dtypes=('float32', 'int64'))
    n = torch.tensor([[1.0, float('nan'), 3.0], [2.0, 5.0, 4.0]])
    check(lambda x, m: getattr(m, op)(x, 1), n)
    check(lambda x, m: getattr(m, op)(x), n)
    check_raises(lambda x, m: getattr(m, op)(x, 2), x)


def test_mode():
    x = rand(4, 6, dtype='int64', seed=23, low=0, high=2)
    check(lambda x, m: m.mode(x), x)
    check(lambda x, m: x.mode(0), x)
    check(lambda x, m: m.mode(x, -1, True), x)
    check(lambda x, m: m.mode(x.double(), 1), x)
    check_out(lambda x, m, out: m.mode(x, 1, out=out), x, dtypes=('int64', 'int64'))
    assert type(ember.mode(ember.ones(3))).__name__ == 'mode'


# ---- softmax ----------------------------------------------------------------------------------
@pytest.mark.parametrize('op', ['softmax', 'log_softmax'])
def test_softmax(op):
    x = rand(3, 4, 2, seed=24, noncontig=True)
    check(lambda x, m: getattr(m, op)(x, 1), x, grad=True)
    check(lambda x, m: getattr(x, op)(-1), x, grad=True)
    check(lambda x, m: getattr(m, op)(x, 0, m.float64), x, grad=True)
    check(lambda x, m: getattr(x, op)(dim=2, dtype=m.float64), x)
    check(lambda x, m: getattr(m, op)(x.long(), 0, dtype=m.float32), x)
    check_out(lambda x, m, out: getattr(m, op)(x, 1, out=out), x)
    check_raises(lambda x, m: getattr(m, op)(x), x)
    check_raises(lambda x, m: getattr(m, op)(x, 3), x)
    check_raises(lambda x, m: getattr(m, op)(x.long(), 0), x)


def test_reduce_bad_arguments():
    x = rand(3, 4, seed=25)
    for op in ('sum', 'mean', 'max', 'var', 'cumsum', 'median', 'softmax', 'amax', 'argmax', 'logsumexp'):
        check_raises(lambda x, m: getattr(m, op)(x, 1.5), x)
        check_raises(lambda x, m: getattr(m, op)([1, 2]), x)
        check_raises(lambda x, m: getattr(m, op)(x, 1, nonsense=1), x)


REDUCE_OPS = ('sum nansum mean nanmean prod max min amax amin all any count_nonzero argmax argmin var std var_mean '
              'std_mean norm logsumexp cumsum cumprod cummax cummin logcumsumexp median nanmedian mode softmax '
              'log_softmax').split()


def same_names(names):
    """ember has each function, method and in-place method PyTorch has (and no others)."""
    for n in names:
        for s in (n, n + '_'):
            assert hasattr(ember, s) == hasattr(torch, s), f'ember.{s}'
            assert hasattr(ember.Tensor, s) == hasattr(torch.Tensor, s), f'Tensor.{s}'


def test_names():
    same_names(REDUCE_OPS)
