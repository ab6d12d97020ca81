"""Index ops (include/ember/index.h) vs torch 1.13: index_select, gather,
scatter family, index_add/copy/fill, take/put, index_put, masks, nonzero."""
import pytest
import torch

import ember
from helpers import check, check_raises, rand, to_ember

# Gradient checks run once ember.autograd.grad is bound.
GRAD = hasattr(ember.autograd, 'grad')


def idx(*values, dtype=torch.int64):
    return torch.tensor(values, dtype=dtype)


# ---- along one dim -------------------------------------------------------------------------
@pytest.mark.parametrize('dtype', ['float32', 'int64', 'bool'])
def test_index_select(dtype):
    a = rand(3, 4, dtype=dtype, seed=1, noncontig=True)
    g = GRAD and dtype == 'float32'
    check(lambda x, i, m: m.index_select(x, 1, i), a, idx(3, 0, 0), grad=g)
    check(lambda x, i, m: x.index_select(dim=-2, index=i), a, idx(2, 1, dtype=torch.int32), grad=g)
    check(lambda x, i, m: m.index_select(x, 0, i), a, torch.tensor(1))
    check(lambda x, i, m: m.index_select(x, 0, i, out=m.empty(0, dtype=x.dtype)), a, idx(0, 2))
    check_raises(lambda x, i, m: m.index_select(x, 0, i), a, idx(3))            # IndexError
    check_raises(lambda x, i, m: m.index_select(x, 2, i), a, idx(0))
    check_raises(lambda x, i, m: m.index_select(x, 0, i), a, torch.tensor([0.0]))


def test_gather():
    a = rand(3, 4, seed=1, noncontig=True)
    i = torch.tensor([[0, 2], [1, 1], [3, 0]])
    check(lambda x, i, m: m.gather(x, 1, i), a, i, grad=GRAD)
    check(lambda x, i, m: x.gather(0, i % 3, sparse_grad=False), a, i[:2], grad=GRAD)
    check(lambda x, i, m: m.gather(x, -1, i, out=m.empty(0)), a, i)
    check_raises(lambda x, i, m: m.gather(x, 1, i + 4), a, i)                    # RuntimeError
    check_raises(lambda x, i, m: m.gather(x, 1, i), a, i[0])


SCATTER_INDEX = torch.tensor([[0, 1, 2, 0], [2, 0, 0, 1]])


@pytest.mark.parametrize('reduce', [None, 'add', 'multiply'])
def test_scatter(reduce):
    a, src = rand(3, 5, seed=1, noncontig=True), rand(2, 4, seed=2)
    kw = {} if reduce is None else {'reduce': reduce}
    check(lambda x, i, s, m: m.scatter(x, 0, i, s, **kw), a, SCATTER_INDEX, src, grad=GRAD and reduce is None)
    check(lambda x, i, m: x.scatter(0, i, 2.5, **kw), a, SCATTER_INDEX)
    check(lambda x, i, s, m: x.clone().scatter_(0, i, s, **kw), a, SCATTER_INDEX, src)
    check(lambda x, i, m: x.clone().scatter_(1, i, value=-1, **kw), a, SCATTER_INDEX)
    check(lambda x, i, s, m: m.scatter(x, 0, i, s, **kw, out=m.empty(0)), a, SCATTER_INDEX, src)
    check(lambda x, i, m: m.scatter(x, 0, i, 3, **kw, out=m.empty(0)), a, SCATTER_INDEX)


def test_scatter_large_int64_value_and_errors():
    big = 2 ** 60 + 1
    check(lambda x, i, m: x.scatter(0, i, big), torch.zeros(3, 5, dtype=torch.int64), SCATTER_INDEX)
    a = rand(3, 5, seed=1)
    check_raises(lambda x, i, m: x.scatter(0, i, 1.0, reduce='max'), a, SCATTER_INDEX)
    check_raises(lambda x, i, m: x.scatter(0, i + 3, 1.0), a, SCATTER_INDEX)
    check_raises(lambda x, i, s, m: x.scatter(0, i, s), a, SCATTER_INDEX, rand(2, 4, dtype='float64'))


def test_scatter_add():
    a, src = rand(3, 5, seed=1), rand(2, 4, seed=2, noncontig=True)
    check(lambda x, i, s, m: m.scatter_add(x, 0, i, s), a, SCATTER_INDEX, src, grad=GRAD)
    check(lambda x, i, s, m: x.clone().scatter_add_(1, i, s), a, SCATTER_INDEX, src)
    check(lambda x, i, s, m: m.scatter_add(x, 0, i, s, out=m.empty(0)), a, SCATTER_INDEX, src)
    check(lambda x, i, s, m: x.scatter_add(0, i, s), rand(3, 5, dtype='int32'), SCATTER_INDEX,
          rand(2, 4, dtype='int32'))


@pytest.mark.parametrize('reduce', ['sum', 'prod', 'mean', 'amax', 'amin'])
@pytest.mark.parametrize('include_self', [True, False])
def test_scatter_reduce(reduce, include_self):
    a, src = rand(3, 5, seed=1), rand(2, 4, seed=2)
    # (the other reductions' gradients: test_scattered.py)
    check(lambda x, i, s, m: m.scatter_reduce(x, 0, i, s, reduce, include_self=include_self), a, SCATTER_INDEX, src,
          grad=GRAD)
    check(lambda x, i, s, m: x.clone().scatter_reduce_(1, i, s, reduce=reduce, include_self=include_self), a,
          SCATTER_INDEX, src)
    check(lambda x, i, s, m: m.scatter_reduce(x, 0, i, s, reduce, include_self=include_self, out=m.empty(0)), a,
          SCATTER_INDEX, src)
    check(lambda x, i, s, m: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
          rand(3, 5, dtype='int64'), SCATTER_INDEX, rand(2, 4, dtype='int64'))


def test_scatter_reduce_errors():
    check_raises(lambda x, i, s, m: x.scatter_reduce(0, i, s, 'max'), rand(3, 5), SCATTER_INDEX, rand(2, 4))
    check_raises(lambda x, i, s, m: x.scatter_reduce(0, i, s), rand(3, 5), SCATTER_INDEX, rand(2, 4))


def test_index_add():
    a, src, i = rand(4, 3, seed=1, noncontig=True), rand(3, 3, seed=2), idx(0, 3, 0)
    check(lambda x, i, s, m: m.index_add(x, 0, i, s), a, i, src, grad=GRAD)
    check(lambda x, i, s, m: x.index_add(0, i, s, alpha=2.5), a, i, src, grad=GRAD)
    check(lambda x, i, m: x.clone().index_add_(1, i % 3, x, alpha=-1), a, i)
    check(lambda x, i, s, m: m.index_add(x, 0, i, s, out=m.empty(0)), a, i, src)
    check(lambda x, i, s, m: x.index_add(0, i, s, alpha=2), rand(4, 3, dtype='int64'), i, rand(3, 3, dtype='int64'))
    check(lambda x, i, s, m: x.index_add(0, i, s), a, idx(0, 3, 0, dtype=torch.int32), src)
    check_raises(lambda x, i, s, m: x.index_add(0, i + 4, s), a, i, src)
    check_raises(lambda x, i, s, m: x.index_add(0, i, s), a, idx(0, 1), src)


def test_index_copy():
    a, src, i = rand(4, 3, seed=1), rand(2, 3, seed=2), idx(3, 1)
    check(lambda x, i, s, m: m.index_copy(x, 0, i, s), a, i, src, grad=GRAD)
    check(lambda x, i, s, m: x.clone().index_copy_(0, i, s), a, i, src)
    check(lambda x, i, s, m: m.index_copy(x, 0, i, s, out=m.empty(0)), a, i, src)
    check_raises(lambda x, i, s, m: x.index_copy(0, i, s), a, i, rand(2, 2))


def test_index_fill():
    a, i = rand(4, 3, seed=1, noncontig=True), idx(3, -1, 0)
    check(lambda x, i, m: m.index_fill(x, 0, i, -2.5), a, i, grad=GRAD)
    check(lambda x, i, m: x.index_fill(1, i % 3, 7), rand(4, 3, dtype='int64'), i)
    check(lambda x, i, m: x.index_fill(1, i % 3, 2.7), rand(4, 3, dtype='int32'), i)
    check(lambda x, i, m: x.index_fill(0, i, 2 ** 62 + 3), rand(4, 3, dtype='int64'), i)
    check(lambda x, i, v, m: x.index_fill(0, i, v), a, i, torch.tensor(5.0), grad=GRAD)
    check(lambda x, i, m: x.clone().index_fill_(0, i, True), a, i)
    check(lambda x, i, v, m: x.clone().index_fill_(0, i, v), a, i, torch.tensor(2))
    check_raises(lambda x, i, v, m: x.index_fill(0, i, v), a, i, torch.tensor([5.0]))
    check_raises(lambda x, i, m: x.index_fill(0, i + 9, 1.0), a, i)


# ---- flat ----------------------------------------------------------------------------------
def test_take_and_take_along_dim():
    a = rand(3, 4, seed=1, noncontig=True)
    check(lambda x, i, m: m.take(x, i), a, torch.tensor([[0, -1], [5, 11]]), grad=GRAD)
    check(lambda x, i, m: x.take(i), a, torch.tensor(3))
    check(lambda x, i, m: m.take(x, i, out=m.empty(0)), a, idx(1, 2))
    check_raises(lambda x, i, m: m.take(x, i), a, idx(12))
    i = torch.tensor([[0, 2, 1, 0]])
    check(lambda x, i, m: m.take_along_dim(x, i, 0), a, i, grad=GRAD)
    check(lambda x, i, m: x.take_along_dim(i.t(), dim=1), a, i[:, :3], grad=GRAD)
    # dim=None: torch 1.13 views the input flat, so it must be contiguous there
    check(lambda x, i, m: m.take_along_dim(x, i), a.contiguous(), i, grad=GRAD)
    check(lambda x, i, m: m.take_along_dim(x, i, out=m.empty(0)), a.contiguous(), i)
    check(lambda x, i, m: m.take_along_dim(x, i, 0, out=m.empty(0)), a, i)
    check_raises(lambda x, i, m: m.take_along_dim(x, i, 0), a, i.float())


def test_put():
    a = rand(3, 4, seed=1)
    i, s = torch.tensor([0, -1, 5, 0]), rand(4, seed=2)
    check(lambda x, i, s, m: m.put(x, i, s), a, i[1:], s[1:], grad=GRAD)
    check(lambda x, i, s, m: x.put(i, s, accumulate=True), a, i, s, grad=GRAD)
    check(lambda x, i, s, m: x.clone().put_(i, s, True), a, i, s)
    check(lambda x, i, s, m: x.clone().put_(i, s), a, i[1:], s[1:])
    check_raises(lambda x, i, s, m: x.put(i + 20, s), a, i, s)
    check_raises(lambda x, i, s, m: x.put(i, s), a, i, s[:2])


def test_index_put():
    a, v = rand(3, 4, seed=1, noncontig=True), rand(2, seed=2)
    i0, i1 = idx(0, 2), idx(3, 3)
    check(lambda x, i, j, v, m: m.index_put(x, (i, j), v), a, i0, i1, v, grad=GRAD)
    check(lambda x, i, j, v, m: x.index_put([i, j], v, accumulate=True), a, i0, i1, v, grad=GRAD)
    check(lambda x, i, v, m: m.index_put(x, (i,), v), a, i0, torch.tensor(1.5))
    check(lambda x, i, j, v, m: m.index_put_(x.clone(), (i, i), v, True), a, i0, i0, v)
    check(lambda x, i, j, v, m: x.clone().index_put_((i, j), v), a, i0, i1, v)
    check(lambda x, mk, m: x.index_put((mk,), m.tensor(0.0)), a, a > 0)
    check_raises(lambda x, i, v, m: x.index_put((i, i, i), v), a, i0, v)          # IndexError
    check_raises(lambda x, i, v, m: x.index_put((i + 5,), v), a, i0, v)
    check_raises(lambda x, i, v, m: x.index_put(i, v), a, i0, v)                  # TypeError
    check_raises(lambda x, i, v, m: x.index_put((i, None), v), a, i0, v)


# ---- masks ---------------------------------------------------------------------------------
def test_masked_fill():
    a = rand(3, 4, seed=1, noncontig=True)
    mask = rand(3, 4, dtype='bool', seed=2)
    check(lambda x, k, m: m.masked_fill(x, k, -1.5), a, mask, grad=GRAD)
    check(lambda x, k, m: x.masked_fill(k, 2), a, mask[0], grad=GRAD)
    check(lambda x, k, v, m: x.masked_fill(mask=k, value=v), a, mask, torch.tensor(3.0), grad=GRAD)
    check(lambda x, k, m: x.masked_fill(k, 2 ** 62 + 1), rand(3, 4, dtype='int64'), mask)
    check(lambda x, k, m: x.masked_fill(k, 7.9), rand(3, 4, dtype='int32'), mask)
    check(lambda x, k, m: x.clone().masked_fill_(k, 0), a, mask)
    check(lambda x, k, v, m: x.clone().masked_fill_(k, v), a, mask, torch.tensor(1))
    check_raises(lambda x, k, v, m: x.masked_fill(k, v), a, mask, torch.tensor([1.0]))
    check_raises(lambda x, k, m: x.clone().masked_fill_(k.view(3, 4, 1), 1.0), a, mask)


def test_masked_scatter_and_select():
    a, src = rand(3, 4, seed=1), rand(12, seed=2)
    mask = rand(3, 4, dtype='bool', seed=3)
    check(lambda x, k, s, m: m.masked_scatter(x, k, s), a, mask, src, grad=GRAD)
    check(lambda x, k, s, m: x.masked_scatter(k, s.view(3, 4)), a, mask[0], src)
    check(lambda x, k, s, m: x.clone().masked_scatter_(k, s), a, mask, src)
    check_raises(lambda x, k, s, m: x.masked_scatter(k, s), a, torch.ones(3, 4, dtype=torch.bool), src[:1])
    check(lambda x, k, m: m.masked_select(x, k), a, mask, grad=GRAD)
    check(lambda x, k, m: x.masked_select(k), rand(3, 4, dtype='int64', noncontig=True), mask[1])
    check(lambda x, k, m: m.masked_select(x, k, out=m.empty(0)), a, mask)
    check_raises(lambda x, k, m: m.masked_select(x, k), a, mask[:2])


# ---- nonzero -------------------------------------------------------------------------------
@pytest.mark.parametrize('shape', [(3, 4), (5,), (2, 3, 2)])
def test_nonzero_argwhere_where(shape):
    a = rand(*shape, dtype='int64', low=-1, high=1, seed=1)
    check(lambda x, m: m.nonzero(x), a)
    check(lambda x, m: x.nonzero(), a)
    check(lambda x, m: m.nonzero(x, as_tuple=True), a)
    check(lambda x, m: x.nonzero(as_tuple=True), a)
    check(lambda x, m: m.nonzero(x, out=m.empty(0, dtype=m.int64)), a)
    check(lambda x, m: m.argwhere(x), a)
    check(lambda x, m: x.argwhere(), a)
    check(lambda x, m: m.where(x), a)
    check(lambda x, m: m.where(condition=x > 0), a)


def test_nonzero_0d_and_empty():
    # helpers' conversions lose the shape of empty tensors: compared by hand
    for v in (0, 5):
        for f in (lambda m, x: m.nonzero(x), lambda m, x: m.argwhere(x)):
            assert tuple(f(ember, ember.tensor(v)).shape) == tuple(f(torch, torch.tensor(v)).shape)
        check(lambda m: m.nonzero(m.tensor(v), as_tuple=True))
        check(lambda m: m.where(m.tensor(v)))
    for f in (lambda m: m.nonzero(m.zeros(0, 3)), lambda m: m.argwhere(m.zeros(2, 0))):
        assert tuple(f(ember).shape) == tuple(f(torch).shape)
    assert [tuple(t.shape) for t in ember.nonzero(ember.zeros(0, 3), as_tuple=True)] == [(0,), (0,)]


def test_nonzero_float_nan_and_where_method():
    check(lambda x, m: m.nonzero(x), torch.tensor([0.0, float('nan'), -0.0, 2.0]))
    a, b = rand(3, 4, seed=1), rand(4, seed=2)
    check(lambda x, y, m: x.where(x > 0, y), a, b, grad=GRAD)
    check(lambda x, m: x.where(x > 0, m.tensor(0.0)), a)
    check(lambda x, y, m: m.where(x > 0, x, y), a, b, grad=GRAD)


def test_bad_arguments_raise_type_error():
    x = ember.ones(2, 2)
    i = ember.tensor([0])
    for f in (lambda: ember.gather(x, 1.5, i), lambda: ember.index_select(x, 0, [0]), lambda: x.scatter_(0, i),
              lambda: ember.take(x, 0), lambda: x.put_(i, 1.0), lambda: ember.nonzero(x, True),
              lambda: x.masked_fill(i, 'a'), lambda: ember.scatter_reduce(x, 0, i, x, 3)):
        with pytest.raises(TypeError):
            f()
