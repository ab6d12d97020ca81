"""ember/_functions.py vs PyTorch 1.13: the aliases (as functions, methods and
in-place methods), the in-place function forms, whole-tensor comparisons,
broadcasting and splitting helpers, small math, dtype rules, the RNG state."""
import numpy as np
import pytest
import torch

import ember
from ember import _functions
from helpers import check, rand, to_ember


@pytest.mark.parametrize('alias,op', sorted(_functions.ALIASES.items()))
def test_aliases_are_the_op(alias, op):
    a = rand(3, 4, low=0.1, high=0.9, seed=1)
    b = rand(3, 4, low=0.1, high=0.9, seed=2)
    nargs = 2 if op in ('atan2', 'mul', 'div', 'sub', 'gt', 'ge', 'lt', 'le', 'ne') else 1
    args = (a, b)[:nargs]
    check(lambda *xs, m: getattr(m, alias)(*xs), *args)
    check(lambda x, *rest, m: getattr(x, alias)(*rest), *args)
    if hasattr(torch.Tensor, alias + '_'):
        check(lambda x, *rest, m: getattr(x.clone(), alias + '_')(*rest), *args)


@pytest.mark.parametrize('name', [n for n in _functions.INPLACE_FUNCTIONS if hasattr(torch, n)])
def test_inplace_function_forms(name):
    x = rand(5, low=0.2, high=0.8, seed=3)
    args = {'clamp_': (0.3, 0.6), 'clip_': (0.3, 0.6), 'fill_': (2.5,), 'xlogy_': (x,), 'gcd_': None,
            'lcm_': None, 'logit_': ()}.get(name, ())
    if args is None:  # integer ops
        xi = torch.tensor([4, 6, 9])
        check(lambda t, m: getattr(m, name)(t.clone(), t + 2), xi)
        return
    check(lambda t, m: getattr(m, name)(t.clone(), *[to_ember(a) if m is ember and isinstance(a, torch.Tensor)
                                                      else a for a in args]), x)


def test_isclose_allclose_equal():
    a = torch.tensor([1.0, 2.0, float('nan'), float('inf'), -float('inf'), 1e-9, 3.0])
    b = torch.tensor([1.0 + 1e-6, 2.1, float('nan'), float('inf'), float('inf'), 0.0, 3.0 + 3e-5])
    for kw in ({}, {'equal_nan': True}, {'rtol': 0, 'atol': 0}, {'rtol': 1e-2}, {'atol': 1e-3}):
        check(lambda x, y, m: m.isclose(x, y, **kw), a, b)
        check(lambda x, y, m: x.isclose(y, **kw), a, b)
        assert ember.allclose(to_ember(a), to_ember(b), **kw) == torch.allclose(a, b, **kw)
    ia, ib = torch.tensor([1, 5, 10]), torch.tensor([1, 6, 13])
    check(lambda x, y, m: m.isclose(x, y, rtol=0.2, atol=0), ia, ib)
    for x, y in ((a, a.clone()), (a[:2], a[:2] + 0), (a[:2], a[:3]), (ia, ia)):
        assert ember.equal(to_ember(x), to_ember(y)) == torch.equal(x, y)
    with pytest.raises(RuntimeError):
        ember.isclose(to_ember(a), to_ember(a.double()))
    with pytest.raises(RuntimeError):
        ember.isclose(to_ember(a), to_ember(a), rtol=-1)


def test_broadcasting_helpers():
    for shapes in (((2, 1), (3,)), ((1,), (4, 1, 5), (5,)), ((), (2, 3)), (3, (2, 1))):
        assert tuple(ember.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(RuntimeError):
        ember.broadcast_shapes((2,), (3,))
    a, b = rand(2, 1), rand(3)
    for e, t in zip(ember.broadcast_tensors(to_ember(a), to_ember(b)), torch.broadcast_tensors(a, b)):
        assert np.array_equal(e.numpy(), t.numpy())
    check(lambda x, m: m.broadcast_to(x, (4, 2, 3)), rand(2, 1))
    check(lambda x, m: x.broadcast_to((2, 3)), rand(3))


@pytest.mark.parametrize('fn', ['atleast_1d', 'atleast_2d', 'atleast_3d'])
def test_atleast(fn):
    for shape in ((), (4,), (2, 3), (2, 3, 4)):
        check(lambda x, m: getattr(m, fn)(x), rand(*shape))
    xs = [rand(), rand(3), rand(2, 2)]
    got, want = getattr(ember, fn)(*[to_ember(x) for x in xs]), getattr(torch, fn)(*xs)
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]
    got = getattr(ember, fn)([to_ember(x) for x in xs])
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]


def test_splitting_helpers():
    x = rand(7, 6, 4)
    for arg in (3, 1, 8, [1, 4], [2, -1], [5, 2], torch.tensor([1, 3])):
        for dim in (0, 1, -1):
            targ = arg
            want = torch.tensor_split(x, targ, dim)
            got = ember.tensor_split(to_ember(x), to_ember(arg) if isinstance(arg, torch.Tensor) else arg, dim)
            assert [g.shape for g in got] == [w.shape for w in want]
            for g, w in zip(got, want):
                assert np.array_equal(g.numpy(), w.numpy())
    for fn, arg in (('hsplit', 2), ('hsplit', [1, 4]), ('vsplit', 7), ('vsplit', [3]), ('dsplit', 2)):
        got, want = getattr(ember, fn)(to_ember(x), arg), getattr(torch, fn)(x, arg)
        assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]
    for fn, t, arg in (('hsplit', x, 4), ('vsplit', rand(5), 1), ('dsplit', rand(2, 2), 1)):
        with pytest.raises(RuntimeError):
            getattr(torch, fn)(t, arg)
        with pytest.raises(RuntimeError):
            getattr(ember, fn)(to_ember(t), arg)
    got = ember.split_with_sizes(to_ember(x), [2, 5])
    assert [tuple(g.shape) for g in got] == [(2, 6, 4), (5, 6, 4)]
    check(lambda a, m: m.ravel(a), x[:, ::2])
    check(lambda a, b, m: m.column_stack([a, b]), rand(3), rand(3, 2))


def test_small_math():
    x = rand(4, 5, low=0.05, high=0.95)
    for fn in ('deg2rad', 'rad2deg'):
        check(lambda a, m: getattr(m, fn)(a), x, grad=True)
        with pytest.raises(RuntimeError):
            getattr(ember, fn)(ember.ones(2, dtype=ember.int64))
    check(lambda a, m: m.logit(a), x.double(), grad=True)
    check(lambda a, m: m.logit(a, eps=0.1), x.double(), grad=True)
    check(lambda a, m: m.signbit(a), torch.tensor([-0.0, 0.0, -1.5, 2.0, float('-inf')]))
    check(lambda a, m: m.signbit(a), torch.tensor([-3, 0, 4]))
    check(lambda a, b, m: m.inner(a, b), rand(2, 3, 4), rand(5, 4), grad=True)
    check(lambda a, b, m: m.inner(a, b), rand(), rand(2, 3))
    for p in (2, 1, float('inf'), 0):
        check(lambda a, b, m: m.dist(a, b, p), rand(3, 4), rand(4))
    got, want = ember.aminmax(to_ember(x), dim=1, keepdim=True), torch.aminmax(x, dim=1, keepdim=True)
    assert np.array_equal(got.min.numpy(), want.min.numpy()) and np.array_equal(got.max.numpy(), want.max.numpy())
    got, want = ember.aminmax(to_ember(x)), torch.aminmax(x)
    assert float(got[0]) == float(want[0]) and float(got[1]) == float(want[1])


def test_facts_and_dtype_rules():
    for t in (torch.tensor([0.0]), torch.tensor([3]), torch.tensor(True)):
        assert ember.is_nonzero(to_ember(t)) == torch.is_nonzero(t)
    for t in (torch.tensor([1.0, 2.0]), torch.tensor([])):
        with pytest.raises(RuntimeError):
            torch.is_nonzero(t)
        with pytest.raises(RuntimeError):
            ember.is_nonzero(to_ember(t))
    assert ember.is_same_size(ember.ones(2, 3), ember.zeros(2, 3)) and not ember.is_same_size(ember.ones(2), ember.ones(3))
    dtypes = ['uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64', 'bool']
    for a in dtypes:
        ta, ea = getattr(torch, a), getattr(ember, a)
        assert ember.is_signed(ember.ones(1, dtype=ea)) == torch.is_signed(torch.ones(1, dtype=ta))
        for b in dtypes:
            tb, eb = getattr(torch, b), getattr(ember, b)
            assert str(ember.promote_types(ea, eb)).split('.')[1] == str(torch.promote_types(ta, tb)).split('.')[1]
            assert ember.can_cast(ea, eb) == torch.can_cast(ta, tb), (a, b)
    for x, y in ((torch.ones(2, dtype=torch.int32), 2.5), (torch.ones(2, dtype=torch.int8), torch.tensor(300)),
                 (torch.tensor(1.0, dtype=torch.float64), torch.ones(2, dtype=torch.float16)), (3, 2.0), (True, 2),
                 (torch.ones(2, dtype=torch.uint8), -1)):
        ex = to_ember(x) if isinstance(x, torch.Tensor) else x
        ey = to_ember(y) if isinstance(y, torch.Tensor) else y
        assert str(ember.result_type(ex, ey)).split('.')[1] == str(torch.result_type(x, y)).split('.')[1], (x, y)


def test_rng_state_round_trip():
    state = ember.get_rng_state()
    a = ember.rand(5)
    ember.set_rng_state(state)
    assert ember.equal(ember.rand(5), a)
    assert isinstance(ember.seed(), int)


def test_distances_products_and_statistics():
    check(lambda a, m: m.sinc(a), torch.tensor([0.0, 0.5, -1.25, 3.0, 1e-3], dtype=torch.float64), grad=True)
    for p in (2.0, 1.0, 3.0, float('inf')):
        check(lambda a, b, m: m.cdist(a, b, p), rand(2, 4, 3, dtype='float64'), rand(2, 5, 3, dtype='float64'),
              grad=True)
    for bad in ((rand(3), rand(2, 3)), (rand(2, 3), rand(2, 4))):
        with pytest.raises(RuntimeError):
            ember.cdist(to_ember(bad[0]), to_ember(bad[1]))
    check(lambda a, b, m: m.cross(a, b, dim=1), rand(4, 3, dtype='float64'), rand(1, 3, dtype='float64'), grad=True)
    check(lambda a, b, m: m.cross(a, b), rand(3, 5, dtype='float64'), rand(3, 5, dtype='float64'), grad=True)
    check(lambda a, b, m: a.cross(b), rand(2, 3), rand(2, 3))
    for bad in ((rand(4, 2), rand(4, 2), None), (rand(4, 3), rand(4, 3), 0)):
        with pytest.raises(RuntimeError):
            ember.cross(to_ember(bad[0]), to_ember(bad[1]), dim=bad[2])
    check(lambda a, b, c, m: m.block_diag(a, b, c), rand(2, 2, dtype='float64'), rand(3, dtype='float64'),
          rand(dtype='float64'), grad=True)
    with pytest.raises(RuntimeError):
        ember.block_diag(ember.ones(2, 2, 2))
    x = rand(3, 6, dtype='float64')
    check(lambda a, m: m.cov(a), x, grad=True)
    check(lambda a, m: m.cov(a, correction=0), x)
    check(lambda a, m: m.cov(a[0]), x)
    fw, aw = torch.tensor([1, 2, 1, 3, 1, 1]), rand(6, low=0.1, high=1, dtype='float64')
    check(lambda a, f, w, m: m.cov(a, fweights=f, aweights=w), x, fw, aw)
    check(lambda a, w, m: m.cov(a, aweights=w), x, aw)
    check(lambda a, m: m.corrcoef(a), x, grad=True)
    y, xs = rand(3, 5, dtype='float64'), torch.tensor([0.0, 0.5, 1.5, 2.0, 4.0], dtype=torch.float64)
    check(lambda a, b, m: m.trapezoid(a, b), y, xs, grad=True)
    check(lambda a, m: m.trapezoid(a, dx=0.5, dim=0), y)
    check(lambda a, m: m.trapz(a, dx=2.0), y)
    check(lambda a, b, m: m.cumulative_trapezoid(a, b), y, xs)
    check(lambda a, m: m.cumulative_trapezoid(a, dim=0), y)
    check(lambda a, b, m: m.isin(a, b), torch.tensor([[1, 2], [3, 4]]), torch.tensor([2, 5, 4]))
    check(lambda a, b, m: m.isin(a, b, invert=True), torch.tensor([1, 2, 3]), torch.tensor([2]))
    check(lambda a, m: m.isin(a, 2), torch.tensor([1, 2, 3]))
    for r, rep in ((2, False), (3, False), (2, True), (0, False), (5, False)):
        check(lambda a, m: m.combinations(a, r, with_replacement=rep), torch.tensor([1.0, 2.0, 3.0, 4.0]))
