"""Tensor indexing (x[index], x[index] = value) vs PyTorch 1.13: a fuzzer of
random index expressions (ints, numpy ints, 0-d tensors, slices, None,
Ellipsis, bools, index tensors, masks, lists, and their mixtures) on random
shapes, comparing results, views (writes through a result reach the base
exactly when they do in PyTorch) and exception types; then targeted cases:
errors, value conversion, gradients."""
import random
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import check, check_raises, dtype_name, rand

pytestmark = pytest.mark.filterwarnings('ignore')  # torch's uint8-index and numpy's bool-index deprecations

BASE_DTYPES = ['float32', 'int64', 'bool', 'uint8', 'float64', 'int32']


# ---- building the same data and index in both libraries ----------------------------------
def make_base(rng, shape, dtype):
    """(torch, ember) tensors of equal, distinct values; sometimes non-contiguous."""
    n = int(np.prod(shape))
    a = np.arange(n).reshape(shape)
    if dtype == 'bool':
        a = a % 3 == 0
    elif dtype == 'float32' or dtype == 'float64':
        a = a * 0.5 - 3
    transposed = len(shape) >= 2 and rng.random() < 0.3
    if transposed:  # the same values through a permuted view of the reversed shape
        a = np.ascontiguousarray(a.transpose())
    t = torch.tensor(a, dtype=getattr(torch, dtype))
    e = ember.tensor(a.ravel().tolist(), dtype=getattr(ember, dtype)).reshape(a.shape)
    if transposed:
        perm = list(range(len(shape)))[::-1]
        t, e = t.permute(perm), e.permute(perm)
    return t, e


def build(item, m):
    """One index item (a spec) as the object library m indexes with."""
    kind, v = item
    if kind in ('int', 'bool', 'slice', 'list'):
        return v
    if kind == 'none':
        return None
    if kind == 'ell':
        return Ellipsis
    if kind == 'np':
        return np.int64(v) if v % 2 else np.int32(v)
    if kind == 't0':
        return m.tensor(v, dtype=m.int32 if v % 2 else m.int64)
    if kind == 'b0':
        return m.tensor(v)
    if kind == 'itensor':
        return m.tensor(v.ravel().tolist(), dtype=m.int64).reshape(v.shape)
    if kind == 'mask':
        return m.tensor(v.ravel().tolist(), dtype=m.bool).reshape(v.shape)
    raise AssertionError(kind)


def build_index(spec, m):
    form, items = spec
    built = [build(i, m) for i in items]
    return built[0] if form == 'bare' else built if form == 'list' else tuple(built)


class IndexGen:
    """Random index expressions for a shape: mostly valid, some not."""

    def __init__(self, rng):
        self.rng = rng

    def int_for(self, size):
        r = self.rng
        if r.random() < 0.05 or size == 0:
            return r.choice([size, -size - 1, size + 3, 7])
        return r.randint(-size, size - 1)

    def tensor_shape(self, bshape):
        """A shape broadcasting to bshape (or, rarely, a random one)."""
        r = self.rng
        if r.random() < 0.02:
            return tuple(r.randint(1, 3) for _ in range(r.randint(0, 2)))
        shape = list(bshape[r.randint(0, len(bshape)):]) if bshape else []
        return tuple(1 if r.random() < 0.3 else s for s in shape)

    def slice_for(self, size):
        r = self.rng
        pick = lambda: r.choice([None, None, r.randint(-size - 2, size + 2)])
        step = r.choice([None, None, 1, 2, 3]) if r.random() > 0.02 else r.choice([0, -1])
        return slice(pick(), pick(), step)

    def consumer(self, sizes, bshape):
        """An item indexing len(...) dims starting with sizes[0]: (item, dims used)."""
        r = self.rng
        size = sizes[0]
        kind = r.choice(['int', 'np', 't0', 'slice', 'slice', 'itensor', 'itensor', 'list', 'mask'])
        if size == 0 and r.random() < 0.8:  # no index fits: mostly slices and masks
            kind = r.choice(['slice', 'mask'])
        if kind in ('int', 'np', 't0'):
            return (kind, self.int_for(size)), 1
        if kind == 'slice':
            return ('slice', self.slice_for(size)), 1
        if kind == 'itensor':
            shape = self.tensor_shape(bshape)
            bad = r.random() < 0.02
            vals = np.array([self.int_for(size) if bad else r.randint(-size, size - 1) if size else 0
                             for _ in range(int(np.prod(shape)))], dtype=np.int64).reshape(shape)
            return ('itensor', vals), 1
        if kind == 'list':
            n = r.randint(0, 3)
            if r.random() < 0.3:  # a list of bools is a mask
                return ('list', [r.random() < 0.5 for _ in range(size if r.random() > 0.05 else size + 1)]), 1
            return ('list', [r.randint(-size, size - 1) if size else 0 for _ in range(n)]), 1
        ndim = r.choice([1, 1, 2]) if len(sizes) >= 2 else 1
        shape = tuple(sizes[:ndim]) if r.random() > 0.05 else tuple(s + 1 for s in sizes[:ndim])
        return ('mask', np.array([r.random() < 0.5 for _ in range(int(np.prod(shape)))]).reshape(shape)), ndim

    def index(self, shape):
        r = self.rng
        nd = len(shape)
        n_consumers = r.randint(0, nd + (1 if r.random() < 0.05 else 0))
        bshape = tuple(r.randint(1, 3) for _ in range(r.randint(0, 2)))
        ellipsis_at = r.randint(0, n_consumers) if r.random() < 0.3 else -1
        # consumers before the ellipsis index from the front, after it from the back
        items, used = [], 0
        for k in range(n_consumers):
            if k == ellipsis_at:
                items.append(('ell', None))
            if used >= nd:
                sizes = [3]
            elif ellipsis_at >= 0 and k >= ellipsis_at:
                sizes = list(shape[nd - (n_consumers - k):]) or [3]
            else:
                sizes = list(shape[used:])
            item, k_used = self.consumer(sizes, bshape)
            used += k_used
            items.append(item)
        if ellipsis_at == n_consumers:
            items.append(('ell', None))
        for _ in range(r.choice([0, 0, 0, 1, 2])):  # dims added: None, bools, 0-d bool tensors
            extra = r.choice([('none', None), ('none', None), ('bool', r.random() < 0.7), ('b0', r.random() < 0.7)])
            items.insert(r.randint(0, len(items)), extra)
        if len(items) == 1 and r.random() < 0.6:
            return ('bare', items)
        return ('list' if r.random() < 0.1 else 'tuple', items)


def describe(shape, dtype, spec, value=None):
    return f'shape {shape} {dtype} index {spec}' + ('' if value is None else f' value {value}')


def outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - exception types are compared
        return None, e


def same_tensor(e, t, what):
    assert tuple(e.shape) == tuple(t.shape), f'{what}: shape {tuple(e.shape)} != {tuple(t.shape)}'
    assert dtype_name(e.dtype) == dtype_name(t.dtype), f'{what}: dtype {e.dtype} != {t.dtype}'
    assert e.tolist() == t.tolist(), f'{what}: values\nember {e.tolist()}\ntorch {t.tolist()}'


def same_outcome(eres, eexc, tres, texc, what):
    if texc is not None:
        assert eexc is not None, f'{what}: ember did not raise; torch raised {type(texc).__name__}: {texc}'
        assert isinstance(eexc, type(texc)), \
            f'{what}: ember raised {type(eexc).__name__}: {eexc}; torch {type(texc).__name__}: {texc}'
        return False
    assert eexc is None, f'{what}: ember raised {type(eexc).__name__}: {eexc}'
    return True


def exact_ember(t):
    """A torch tensor as an equal ember tensor (shape kept even when empty)."""
    return ember.tensor(t.ravel().tolist(), dtype=getattr(ember, dtype_name(t.dtype))).reshape(tuple(t.shape))


def check_same(fn, *inputs):
    """fn(*inputs, m=lib) gives equal tensors in both libraries, or both raise the same type."""
    tres, texc = outcome(lambda: fn(*inputs, m=torch))
    eins = [exact_ember(x) if isinstance(x, torch.Tensor) else x for x in inputs]
    eres, eexc = outcome(lambda: fn(*eins, m=ember))
    if same_outcome(eres, eexc, tres, texc, 'check_same'):
        same_tensor(eres, tres, 'check_same')


def random_case(rng):
    shape = tuple(rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(rng.randint(0, 4)))
    return shape, rng.choice(BASE_DTYPES)


# ---- the fuzzer ---------------------------------------------------------------------------
# Invalid expressions are kept rare: PyTorch takes milliseconds to raise (it
# records a C++ backtrace); the targeted tests below cover the errors.
@pytest.mark.parametrize('seed', range(12))
def test_fuzz_getitem(seed):
    rng = random.Random(seed)
    gen = IndexGen(rng)
    for _ in range(300):
        shape, dtype = random_case(rng)
        tb, eb = make_base(rng, shape, dtype)
        spec = gen.index(shape)
        what = describe(shape, dtype, spec)
        tres, texc = outcome(lambda: tb[build_index(spec, torch)])
        eres, eexc = outcome(lambda: eb[build_index(spec, ember)])
        if not same_outcome(eres, eexc, tres, texc, what):
            continue
        same_tensor(eres, tres, what)
        assert eres is not eb
        # a view writes through to the base, a copy does not
        fill = {'bool': True, 'uint8': 200}.get(dtype, 99)
        tres.fill_(fill), eres.fill_(fill)
        same_tensor(eb, tb, what + ' (base after writing the result)')


def random_value(rng, shape, dtype):
    """A value to assign to a result of this shape: a Python number, or a
    tensor of that shape, a shape broadcasting to it, or another dtype."""
    r = rng.random()
    if r < 0.3:
        return rng.choice([rng.randint(0, 9), rng.randint(0, 9) + 0.5, rng.random() < 0.5])
    vshape = list(shape or [])
    if r < 0.5:
        vshape = vshape[rng.randint(0, len(vshape)):]
    elif r < 0.6:
        vshape = [1 if rng.random() < 0.5 else s for s in vshape]
    elif r < 0.7:
        vshape = [1] * rng.randint(1, 2) + vshape
    elif r < 0.72:
        vshape = [rng.randint(1, 3)]
    vdtype = dtype if rng.random() < 0.95 else rng.choice(BASE_DTYPES)
    return ('tensor', tuple(vshape), vdtype, rng.randint(0, 1000))


def build_value(value, m):
    if not isinstance(value, tuple):
        return value
    _, shape, dtype, seed = value
    t = rand(*shape, dtype=dtype, seed=seed, low=0, high=9) if shape else torch.tensor(seed % 7).to(getattr(torch, dtype))
    t = t.round() if t.is_floating_point() else t
    return t if m is torch else ember.tensor(t.ravel().tolist(), dtype=getattr(ember, dtype)).reshape(t.shape)


@pytest.mark.parametrize('seed', range(12))
def test_fuzz_setitem(seed):
    rng = random.Random(1000 + seed)
    gen = IndexGen(rng)
    for _ in range(300):
        shape, dtype = random_case(rng)
        tb, eb = make_base(rng, shape, dtype)
        spec = gen.index(shape)
        tres, _ = outcome(lambda: tb[build_index(spec, torch)])
        value = random_value(rng, None if tres is None else tuple(tres.shape), dtype)
        what = describe(shape, dtype, spec, value)
        if not shape and any(kind == 'slice' for kind, _ in spec[1]):
            continue  # PyTorch reads past a 0-d tensor's sizes in x[:0] = v (undefined behaviour)
        tb, eb = tb.clone(), eb.clone()

        tindex, tvalue, eindex, evalue = build_index(spec, torch), build_value(value, torch), \
            build_index(spec, ember), build_value(value, ember)
        _, texc = outcome(lambda: tb.__setitem__(tindex, tvalue))
        _, eexc = outcome(lambda: eb.__setitem__(eindex, evalue))
        if same_outcome(None, eexc, None, texc, what):
            same_tensor(eb, tb, what)


# ---- targeted cases ------------------------------------------------------------------------
def test_views_share_storage():
    x = ember.arange(24.0).reshape(2, 3, 4)
    for index in [0, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0, slice(1, 3)), (1, slice(None, None, 2))]:
        v = x[index]
        v.fill_(-1.0)
        assert x[index].tolist() == v.tolist() and -1.0 in x.flatten().tolist()
        x = ember.arange(24.0).reshape(2, 3, 4)
    assert x[...] is not x and x[()] is not x and x[:] is not x
    y = x[...]
    y[0, 0, 0] = 100.0
    assert x[0, 0, 0].item() == 100.0
    z = x[[0, 1]]  # advanced indexing copies
    z.fill_(5.0)
    assert x[1, 0, 0].item() == 12.0


def test_setitem_writes_in_place():
    x = ember.zeros(3, 4)
    y = x
    x[1] = 2.0
    x[:, 0] = ember.tensor([1.0, 2.0, 3.0])
    x[x > 2.5] = 7.0
    x[[0, 2], [1, 3]] = ember.tensor([8.0, 9.0])
    assert y is x
    assert x.tolist() == [[1, 8, 0, 0], [2, 2, 2, 2], [7, 0, 0, 9]]


@pytest.mark.parametrize('index', [
    5, -4, (0, 5), (0, 0, 0, 0), (None, 5), slice(None, None, -1), slice(None, None, 0), 'a', 1.5, (0, 1.5), {},
    [1.5], [[0, 5]], 2 ** 70, (Ellipsis, 7), [True, False], (slice(None), [True, False]), (0, Ellipsis, 0, 0, 0),
    (np.int64(9),), slice('a', None), object(),
])
def test_getitem_errors_and_odd_indices(index):
    check_same(lambda x, m: x[index], rand(3, 2, 4, seed=1))


@pytest.mark.parametrize('dtype', ['float32', 'int64'])
def test_index_tensor_dtypes(dtype):
    x = rand(3, 4, seed=2)
    check_raises(lambda x, i, m: x[i], x, torch.tensor([0, 1], dtype=torch.int32))
    check_raises(lambda x, i, m: x[i], x, torch.tensor([0.0, 1.0]))
    check_raises(lambda x, i, m: x[i], x, torch.tensor(1.0))
    check(lambda x, i, m: x[i], x, torch.tensor(1, dtype=torch.int32))
    check(lambda x, i, m: x[i], x, torch.tensor([1, 0, 2], dtype=torch.uint8))
    check(lambda x, m: x[m.tensor(True)], x)
    check(lambda x, m: x[np.int16(2), np.uint8(1)], x)
    check(lambda x, m: x[m.tensor(2):m.tensor([4])], rand(6, seed=3))


def test_zero_dim():
    x = torch.tensor(2.5)
    for index in [None, Ellipsis, (), True, False, (None, None), (Ellipsis, None), 0, 1, slice(None), (0,), [0]]:
        check_same(lambda x, m: x[index], x)
    check_same(lambda x, m: x[m.tensor(True)], x)
    check_same(lambda x, m: x[m.tensor(0)], x)


def test_many_indices():
    x = rand(2, 3, seed=4)
    for index in [(0,) * 33, [0] * 33, [0, 1] * 20, [], [None], [0, slice(None)], (None,) * 14]:
        check_same(lambda x, m: x[index], x)  # a long list is one index, not a tuple


@pytest.mark.parametrize('dtype,value', [
    ('uint8', 300), ('uint8', -1), ('uint8', -255), ('uint8', -256), ('uint8', -1.0), ('int8', 200), ('int8', -128.5),
    ('int64', 2 ** 63), ('int64', 2 ** 62 + 1), ('int64', 2.7), ('int64', -2.7), ('bool', 2.5), ('bool', float('nan')),
    ('float16', 1e6), ('float16', 65504), ('float32', 3.5e38), ('float32', float('inf')), ('int32', float('nan')),
    ('float32', 2 + 0j), ('float32', 1 + 2j), ('float32', [1, 2]), ('float32', None), ('float32', 'abc'),
    ('float32', np.float64(2)), ('float32', np.float32(2)), ('int64', np.int16(-7)), ('float32', np.array([1.0])),
    ('float32', np.bool_(True)), ('uint8', True),
])
def test_setitem_number_conversion(dtype, value):
    def f(x, m):
        x = x.clone()
        x[0] = value
        x[1:, [0]] = value
        return x
    check_same(f, rand(2, 3, dtype=dtype, seed=5, low=0))


@pytest.mark.parametrize('index,vshape,vdtype', [
    (0, (1, 1, 3), 'float32'), (0, (2, 3), 'float32'), (0, (2,), 'float32'), (0, (3,), 'int64'),
    ([0], (2,), 'float32'), ([0], (1, 1, 1, 3), 'float32'), ([0], (3,), 'float64'), ([0], (), 'int64'),
    ('mask', (), 'int64'), ('mask', (1, 1), 'int64'), ('mask', (6,), 'float32'), ('mask', (3,), 'float32'),
    ('row_mask', (), 'int64'), ('col_mask', (), 'float32'), (True, (3,), 'int64'), (False, (7,), 'float32'),
    ('b0', (3,), 'float32'), ('b0', (3,), 'int64'), ((0, 'b0'), (), 'float32'), ([[0, 1], [1, 0]], (2, 1), 'float32'),
])
def test_setitem_values(index, vshape, vdtype):
    x = rand(2, 3, seed=6)
    named = {'mask': lambda m, x: x > 0, 'row_mask': lambda m, x: m.tensor([True, False, True]),
             'col_mask': lambda m, x: (slice(None), m.tensor([True, False, True])), 'b0': lambda m, x: m.tensor(True)}

    def f(x, v, m):
        x = x.clone()
        idx = tuple(named[i](m, x) if isinstance(i, str) else i for i in index) if isinstance(index, tuple) else \
            named[index](m, x) if isinstance(index, str) else index
        x[idx] = v
        return x
    check_same(f, x, rand(*vshape, dtype=vdtype, seed=7))


def test_setitem_errors():
    x = ember.zeros(2, 3)
    with pytest.raises(TypeError, match='does not support deleting'):
        del x[0]
    with pytest.raises(IndexError, match='index 5 is out of bounds for dimension 0 with size 2'):
        x[5] = 1
    with pytest.raises(ValueError, match='step must be greater than zero'):
        x[::-1] = 1
    with pytest.raises(IndexError, match='index 3 is out of bounds for dimension 2 with size 3'):
        x[None, 0, 3]
    check_raises(lambda x, m: x.__setitem__('a', 1), rand(2))
    check_raises(lambda x, m: x.__setitem__((0, 0, 0), 1), rand(2, 2))
    check_raises(lambda x, v, m: x.__setitem__(slice(None), v), rand(3), rand(2))


@pytest.mark.parametrize('assign', [
    lambda x: x.__setitem__(slice(1, None), x[:-1]), lambda x: x.__setitem__([1, 2], x[0:2]),
    lambda x: x.__setitem__(0, x[0]), lambda x: x.__setitem__(x > 0, x[0, 0]),
])
def test_setitem_from_overlapping_views(assign):
    def f(x, m):
        x = x.clone()
        assign(x)
        return x
    check_same(f, rand(3, 4, seed=11))


def test_len_still_works():
    assert len(ember.zeros(4, 2)) == 4
    with pytest.raises(TypeError):
        len(ember.tensor(1.0))


# ---- gradients -------------------------------------------------------------------------------
needs_grad = pytest.mark.skipif(not hasattr(ember.autograd, 'grad'), reason='ember.autograd.grad is not bound yet')


@needs_grad
@pytest.mark.parametrize('index', [
    0, -1, slice(1, None, 2), (None, 1), (Ellipsis, 0), ([0, 2, 0],), ([[0, 1]], [2]), (slice(None), [[1], [3]]),
    (slice(None), [True, False, True, True]), ([0, 1], None, [1, 3]), (1, [0, 0, 3]),
])
def test_getitem_grad(index):
    check(lambda x, m: x[index] * 2, rand(3, 2, 4, dtype='float64', seed=8)[:, 0], grad=True)


@needs_grad
@pytest.mark.parametrize('index', [1, (0, slice(None)), ([0, 2],), 'mask', ([0, 1], [1, 0]), (None, 1)])
def test_setitem_grad(index):
    def f(x, v, m):
        y = x * 1
        y[(y > 0) if index == 'mask' else index] = v if index != 'mask' else v[1]
        return y
    check(f, rand(3, 2, dtype='float64', seed=9), rand(2, dtype='float64', seed=10), grad=True)


def test_fast_paths_allocate_only_the_result():
    x = ember.zeros(5, 4)
    warnings.simplefilter('ignore')
    for _ in range(3):
        x[1], x[1:3], x[-1]  # warm up
    import sys
    before = sys.getallocatedblocks()
    for _ in range(1000):
        x[1]
        x[1:3]
    assert sys.getallocatedblocks() - before < 50
