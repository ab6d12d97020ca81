"""ember/_functions_extra.py and Tensor.set_/resize_ vs PyTorch 1.13: the *_copy views, the
scatter-into-a-view functions, real-tensor facts, addr, ldexp, sum_to_size, fill_diagonal_, vander,
range, empty_strided, and the in-place view ops."""
import warnings

import pytest
import torch

import ember
from ember import _functions_extra
from helpers import check, check_raises, rand

VIEW_ARGS = {'as_strided': ((2, 2), (1, 2), 1), 'detach': (), 'diagonal': (), 'expand': ((2, 3, 4),),
             'permute': ((1, 0),), 'select': (1, 2), 'narrow': (0, 1, 2), 'split': (2,), 'squeeze': (),
             't': (), 'transpose': (0, 1), 'unbind': (1,), 'unfold': (1, 2, 1), 'unsqueeze': (1,), 'view': ((12,),),
             'split_with_sizes': ([1, 2],), 'alias': ()}


@pytest.mark.parametrize('view', _functions_extra.VIEW_COPIES)
def test_view_copies(view):
    x = rand(3, 4, seed=1)
    if not hasattr(torch, view + '_copy'):
        pytest.skip(f'torch 1.13 has no {view}_copy')
    eout, _ = check(lambda t, m: getattr(m, view + '_copy')(t, *VIEW_ARGS[view]), x, grad=view not in ('as_strided', 'narrow'))
    ex = ember.tensor(x.numpy())
    out = getattr(ember, view + '_copy')(ex, *VIEW_ARGS[view])
    for o in (out if isinstance(out, tuple) else (out,)):
        o.view(-1)[0] = 100.0
    assert ex.max().item() < 100  # a copy, not a view


def test_scatter_into_views():
    x, s = rand(3, 4, seed=2), rand(4, seed=3)
    check(lambda a, b, m: m.select_scatter(a, b, 0, 1), x, s, grad=True)
    check(lambda a, b, m: m.diagonal_scatter(a, b[:3]), x, s, grad=True)
    check(lambda a, b, m: m.diagonal_scatter(a, b[:3], 1), x, s)
    check(lambda a, b, m: m.slice_scatter(a, b.reshape(2, 2).repeat(3, 1)[:3], 1, 0, 4, 2), x, s, grad=True)
    check(lambda a, b, m: a.select_scatter(b, 0, -1), x, s)


def test_real_tensor_facts():
    x = rand(2, 3, seed=4)
    for name in ('conj', 'resolve_conj', 'resolve_neg', 'conj_physical', 'sgn', 'adjoint', 'isreal'):
        check(lambda t, m: getattr(m, name)(t), x)
        check(lambda t, m: getattr(t, name)(), x)
    check(lambda t, m: (t.is_conj(), t.is_neg(), m.is_conj(t), t.get_device(), t.mH, t.real), x)
    check_raises(lambda t, m: t.imag, x)
    for name in ('is_meta', 'is_mps', 'is_xpu', 'is_ipu', 'is_vulkan', 'is_ort', 'is_nested'):
        assert getattr(ember.ones(1), name) is getattr(torch.ones(1), name) is False


def test_addr_ldexp_clamp_inplace():
    a, v, w = rand(3, 4, seed=5), rand(3, seed=6), rand(4, seed=7)
    check(lambda x, y, z, m: m.addr(x, y, z), a, v, w, grad=True)
    check(lambda x, y, z, m: m.addr(x, y, z, beta=0.5, alpha=2), a, v, w, grad=True)
    check(lambda x, y, z, m: x.clone().addr_(y, z, alpha=3), a, v, w)
    check_raises(lambda x, y, z, m: m.addr(x, x, z), a, v, w)
    check(lambda x, m: m.ldexp(x, m.tensor([1, 2, -1, 0])), a, grad=True)
    check(lambda x, m: x.clone().ldexp_(m.tensor([1, 2, -1, 0])), a)
    check(lambda x, m: m.ldexp(m.tensor([1, 2, 3]), m.tensor([1, 2, 3])), a)
    check(lambda x, m: (x.clone().clamp_min_(0.5), x.clone().clamp_max_(-0.5), m.clamp_min_(x.clone(), 1.)), a)
    check(lambda x, m: x.clone().sgn_(), a)


@pytest.mark.parametrize('size', [(1, 4), (3, 1), (1, 1), (3, 4), (4,)])
def test_sum_to_size(size):
    check(lambda x, m: x.sum_to_size(*size), rand(3, 4, seed=8), grad=True)
    check(lambda x, m: x.sum_to_size(size), rand(2, 3, 4, seed=8))


@pytest.mark.parametrize('shape,wrap', [((3, 3), False), ((7, 3), False), ((7, 3), True), ((3, 7), True),
                                        ((3, 3, 3), False)])
def test_fill_diagonal_(shape, wrap):
    check(lambda x, m: x.clone().fill_diagonal_(2.5, wrap), rand(*shape, seed=9))
    check_raises(lambda x, m: x.clone().fill_diagonal_(1), rand(2, 3, 4, seed=9))


def test_vander_range_empty_strided_fill_type_as():
    check(lambda m: m.vander(m.tensor([1., 2., 3.]), 4))
    check(lambda m: m.vander(m.tensor([1, 2, 3]), increasing=True))
    check(lambda m: m.vander(m.tensor([2., -1.])))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check(lambda m: (m.range(1, 4, 0.5), m.range(0, 5), m.range(0, 3, dtype=m.int64)))
    check(lambda m: (m.empty_strided((2, 3), (1, 2)).fill_(1).stride(), m.empty_strided((0, 3), (3, 1)).shape))
    check(lambda x, m: (m.fill(x, 2.0), x.type_as(m.ones(1, dtype=m.int32)), m.row_stack([x, x]),
                        m.chain_matmul(x, x.t(), x), m.unsafe_chunk(x, 2), x.unsafe_split(2, 1),
                        x.unsafe_split_with_sizes([1, 3], 1)), rand(2, 4, seed=10))
    check(lambda x, m: x.new_empty_strided((2, 2), (1, 2)).fill_(3), rand(2, seed=1))


# ---- in-place view ops and set_/resize_ ----
@pytest.mark.parametrize('op,args', [('squeeze_', ()), ('squeeze_', (1,)), ('unsqueeze_', (0,)), ('t_', ()),
                                     ('transpose_', (0, 2)), ('swapdims_', (0, 1)), ('swapaxes_', (2, 0)),
                                     ('as_strided_', ((2, 3), (1, 2), 0))])
def test_inplace_view_ops(op, args):
    def run(x, m):
        y = x.clone() if op != 't_' else x.clone()[0, 0]
        out = getattr(y, op)(*args)
        assert out is y
        return y, y.stride(), y.storage_offset() if hasattr(y, 'storage_offset') else 0
    check(run, rand(2, 1, 3, seed=11))


def test_set_and_resize():
    def run(x, m):
        y = m.zeros(0)
        y.set_(x.view(6))
        y[0] = 7.0
        z = m.zeros(5)
        z.resize_(2, 2)
        w = m.zeros(3)
        w.resize_as_(x)
        return y, x, z.shape, w.shape, m.ones(3).set_().shape
    check(run, rand(2, 3, seed=12))
    check_raises(lambda m: m.zeros(2).set_(m.zeros(2, dtype=m.int64)))
    check_raises(lambda m: m.ones(2, requires_grad=True).unsqueeze_(0))
    check_raises(lambda m: m.ones(2, requires_grad=True).resize_(3))


def test_detach_():
    x = ember.ones(2, requires_grad=True)
    assert x.detach_() is x and not x.requires_grad
    with pytest.raises(RuntimeError, match='detach_'):
        (ember.ones(2, requires_grad=True) * 2).detach_()
