"""Tensor printing: repr() must be PyTorch 1.13's, character for character
(with 'torch.' read as 'ember.'), under every print option."""
import math

import numpy as np
import pytest
import torch

import ember


def as_ember(t):
    if t.dtype == torch.bfloat16:
        return ember.tensor(t.float().numpy()).bfloat16()
    return ember.tensor(t.numpy())


def same_repr(t, e=None):
    e = as_ember(t) if e is None else e
    assert repr(e) == repr(t).replace('torch.', 'ember.')
    assert str(e) == repr(e)


@pytest.fixture(autouse=True)
def default_options():
    yield
    torch.set_printoptions(profile='default')
    ember.set_printoptions(profile='default')


def random_tensor(g, i):
    """Shapes from 0-d to 4-d (some summarized), values from 1e-8 to 1e10,
    integers, nan and inf, in every dtype."""
    nd = int(g.integers(0, 5))
    shape = tuple(int(s) for s in g.integers(0, 6, nd))
    if i % 10 == 0:
        shape = (int(g.integers(900, 1500)),)
    elif i % 10 == 1:
        shape = (int(g.integers(7, 40)), int(g.integers(7, 60)))
    elif i % 10 == 2:
        shape = (int(g.integers(7, 12)), 2, int(g.integers(60, 80)))
    dtype = ['float32', 'float64', 'int64', 'int32', 'uint8', 'bool', 'float16', 'int8', 'bfloat16', 'int16'][i % 10]
    a = g.standard_normal(shape) * 10.0 ** int(g.integers(-8, 11))
    if g.random() < 0.3:
        a = np.round(a)
    if g.random() < 0.2 and a.size:
        a.flat[0] = np.nan
    if g.random() < 0.2 and a.size:
        a.flat[-1] = -np.inf if g.random() < 0.5 else np.inf
    if dtype == 'bool':
        a = np.asarray(a > 0)
    elif 'int' in dtype:
        a = np.clip(np.nan_to_num(np.round(a)), -100, 100)
    return torch.tensor(a).to(getattr(torch, dtype))


@pytest.mark.parametrize('seed', range(6))
def test_random_tensors(seed):
    g = np.random.default_rng(seed)
    for i in range(80):
        same_repr(random_tensor(g, i))


@pytest.mark.parametrize('values', [
    [1., 2.], [1.5, -2.25], [0.], [0., -0.], [1e-5, 1.], [1e-4, 1.], [1., 1000.], [1., 1001.], [1e8], [1e9, 1.],
    [123456789.], [float('nan')], [float('inf'), -1.], [float('nan'), 2.5], [3., float('inf')], [1e-30, 1e30],
    [100., 0.5], [1.0e-45], [0.1, 0.2, 0.3], [-1., -10., 100.],
])
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'bfloat16'])
def test_float_notation(values, dtype):
    same_repr(torch.tensor(values).to(getattr(torch, dtype)))


@pytest.mark.parametrize('t', [
    torch.tensor(3.5), torch.tensor(7), torch.tensor(True), torch.tensor(1e-9, dtype=torch.float64),
    torch.tensor(float('nan')), torch.tensor(2., dtype=torch.float16), torch.tensor(-3, dtype=torch.int8),
    torch.tensor([2 ** 62, -2 ** 63]), torch.tensor([[True, False], [False, True]]),
    torch.arange(2000).reshape(2, 10, 100), torch.arange(5000.).reshape(5, 1000) / 7,
    torch.arange(100000).reshape(10, 10, 10, 100), torch.arange(1001), torch.arange(200) * 1e6,
])
def test_special(t):
    same_repr(t)


@pytest.mark.parametrize('shape,dtype', [((0,), 'float32'), ((0,), 'int64'), ((0, 3), 'float32'), ((2, 0), 'int32'),
                                         ((0, 3), 'float64'), ((3, 0, 2), 'bool'), ((0,), 'uint8')])
def test_empty(shape, dtype):
    same_repr(torch.zeros(shape, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize('options', [
    dict(precision=2), dict(precision=8), dict(precision=0), dict(threshold=5), dict(threshold=5, edgeitems=1),
    dict(linewidth=30), dict(linewidth=200), dict(sci_mode=True),
    dict(sci_mode=False), dict(profile='short'), dict(profile='full'), dict(profile='short', precision=6),
])
def test_print_options(options):
    torch.set_printoptions(**options)
    ember.set_printoptions(**options)
    g = np.random.default_rng(1)
    for i in range(40):
        same_repr(random_tensor(g, i))
    same_repr(torch.arange(3000.).reshape(30, 100) / 3)


def test_no_edge_items():
    """edgeitems=0 keeps PyTorch's quirk on 1-d tensors: the tail t[-0:] is everything."""
    torch.set_printoptions(threshold=10, edgeitems=0)
    ember.set_printoptions(threshold=10, edgeitems=0)
    same_repr(torch.arange(20))


def test_default_dtype_float64():
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for t in (torch.tensor([1.5, 2.]), torch.tensor([1.5], dtype=torch.float32), torch.zeros(0, 2),
                  torch.zeros(0, dtype=torch.float32)):
            same_repr(t)
    finally:
        ember.set_default_dtype(ember.float32)
        torch.set_default_dtype(torch.float32)


def test_requires_grad_and_grad_fn():
    assert repr(ember.ones(2, requires_grad=True)) == 'tensor([1., 1.], requires_grad=True)'
    assert repr(ember.ones(2, dtype=ember.float64, requires_grad=True)) == \
        'tensor([1., 1.], dtype=ember.float64, requires_grad=True)'
    x = ember.ones(2, requires_grad=True) * 2
    try:
        fn = x.grad_fn
    except NotImplementedError:
        pytest.skip('graph nodes are not bound to Python in this build')
    name = fn.name() if hasattr(fn, 'name') else type(fn).__name__
    assert repr(x) == f'tensor([2., 2.], grad_fn=<{name}>)'
    assert repr(x) == repr(torch.ones(2, requires_grad=True) * 2)


def test_suffix_wraps_at_linewidth():
    t = torch.arange(12.).reshape(3, 4) * 1.25 + 1000
    e = as_ember(t).double()
    assert repr(e) == repr(t.double()).replace('torch.', 'ember.')
    e.requires_grad_(True)
    assert repr(e) == repr(t.double().requires_grad_(True)).replace('torch.', 'ember.')


def test_subclass_and_contents():
    class MyTensor(ember.Tensor):
        pass
    e = ember.Tensor._make_subclass(MyTensor, ember.ones(2))
    assert repr(e) == 'MyTensor([1., 1.])'
    assert ember.ones(2).__repr__(tensor_contents='[...]') == 'tensor([...])'


def test_noncontiguous_views():
    t = torch.arange(24.).reshape(2, 3, 4)
    same_repr(t.transpose(0, 2), as_ember(t).transpose(0, 2))
    same_repr(t[:, 1], as_ember(t).select(1, 1))


def test_format():
    assert f'{ember.tensor(2.5):.2f}' == '2.50'
    assert math.isclose(float(ember.tensor(1.5)), 1.5)
