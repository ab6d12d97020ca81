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
             'permute': ((1, 0),), 'select': (1, 2), 'narrow': (0, 1, 2), 'slice': (1, 1, 4, 2), 'split': (2,), 'squeeze': (),
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
        o.fill_(100.0)  # (a copy keeps a permuted layout, as PyTorch's: no view(-1))
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
    check(lambda x, m: x.clone().transpose(0, 1).fill_diagonal_(-1., wrap), rand(*shape, seed=9))  # strided
    if len(shape) == 2:
        check(lambda x, m: x.clone()[1:].fill_diagonal_(-1., wrap), rand(*shape, seed=9))  # with an offset
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


# ---- ember/_functions_more.py ----
@pytest.mark.parametrize('name', ['hann_window', 'hamming_window', 'blackman_window', 'bartlett_window'])
@pytest.mark.parametrize('length', [0, 1, 2, 5, 8])
def test_windows(name, length):
    check(lambda m: (getattr(m, name)(length), getattr(m, name)(length, False),
                     getattr(m, name)(length, dtype=m.float64)))
    check_raises(lambda m: getattr(m, name)(4, dtype=m.int64))


def test_angle_renorm_norms():
    x = rand(4, 5, seed=13)
    check(lambda m: m.angle(m.tensor([-1., 0., 2., float('nan')])))
    check(lambda m: m.angle(m.tensor([-3, 0, 2])))
    check(lambda t, m: (m.renorm(t, 2, 0, 1.), t.renorm(1, 1, 0.5)), x, grad=True)
    check(lambda t, m: t.clone().renorm_(3, -1, 0.2), x)
    check_raises(lambda t, m: m.renorm(t[0], 2, 0, 1.), x)
    check(lambda t, m: (m.norm_except_dim(t, 2, 1), m.norm_except_dim(t, 3, 0), m.norm_except_dim(t, 2, -1),
                        m.norm_except_dim(t[0], 2, 0)), x, grad=True)
    check(lambda t, m: (m.frobenius_norm(t, (0, 1)), m.frobenius_norm(t, (1,), True)), x, grad=True)


@pytest.mark.parametrize('interpolation', ['linear', 'lower', 'higher', 'midpoint', 'nearest'])
def test_quantile(interpolation):
    x = rand(4, 6, seed=14)
    y = x.clone()
    y[0, 1] = float('nan')
    for fn in ('quantile', 'nanquantile'):
        check(lambda t, m: (getattr(m, fn)(t, 0.3, 1, interpolation=interpolation),
                            getattr(t, fn)(m.tensor([0.1, 0.5, 1.0]), 0, True, interpolation=interpolation),
                            getattr(m, fn)(t, 0.25, interpolation=interpolation)), x)
        check(lambda t, m: getattr(m, fn)(t, 0.5, 1, interpolation=interpolation), y)
    check(lambda t, m: m.quantile(t, 0.4, 0), x, grad=interpolation == 'linear')
    check_raises(lambda t, m: m.quantile(t, 1.5), x)
    check_raises(lambda t, m: m.quantile(t.long(), 0.5), x)


def test_top_level_losses_take_integer_reductions():
    x, y = rand(3, 5, seed=15), rand(3, 5, seed=16)
    sign = torch.tensor([1., -1., 1.])
    for r in (0, 1, 2):
        check(lambda a, b, m: m.kl_div(a.log_softmax(1), b.softmax(1), r), x, y, grad=True)
        check(lambda a, b, m: m.cosine_embedding_loss(a, b, m.tensor([1., -1., 1.]), 0.1, r), x, y, grad=True)
        check(lambda a, b, m: m.hinge_embedding_loss(a, m.tensor([1., -1., 1., 1., -1.]), 0.5, r), x, y)
        check(lambda a, b, m: m.margin_ranking_loss(a[0], b[0], m.ones(5), 0.1, r), x, y, grad=True)
        check(lambda a, b, m: m.triplet_margin_loss(a, b, a * 2, 1.0, 2, 1e-6, False, r), x, y, grad=True)
        check(lambda a, b, m: m.poisson_nll_loss(a, b.abs(), True, False, 1e-8, r), x, y, grad=True)
    assert sign is not None
    w = rand(2, 5, 5, seed=17)
    check(lambda a, b, ww, m: m.bilinear(a, b, ww), x, y, w, grad=True)
    check(lambda a, m: m.max_pool1d_with_indices(a.unsqueeze(0), 2), x)
    check(lambda a, m: (m.matrix_power(a[:, :3], 3), a[:, :3].matrix_power(2)), x, grad=True)


def test_process_facts():
    assert ember.get_num_interop_threads() >= 1
    ember.set_num_interop_threads(2)
    assert ember.get_num_interop_threads() == 2
    ember.init_num_threads()
    assert not ember.is_distributed(ember.ones(1)) and not ember.is_vulkan_available()
    assert ember.get_file_path('x').endswith('ember/x')
    x = ember.arange(3.)
    assert ember.from_dlpack(ember.to_dlpack(x)).tolist() == [0., 1., 2.]


# ---- ember/_tensor_extra.py ----
def test_legacy_new_and_python_callables():
    x = ember.ones(2, dtype=ember.int32)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == ember.int32
    assert x.new([1, 2]).tolist() == [1, 2] and x.new().shape == (0,)
    check(lambda t, m: t.clone().apply_(lambda v: v * v + 1), rand(3, 4, seed=18))
    check(lambda t, m: t.clone().map_(t[0], lambda a, b: a - 2 * b), rand(3, 4, seed=19))
    check(lambda t, m: t.clone().map2_(t, t[:, :1], lambda a, b, c: a * b + c), rand(3, 4, seed=20))


def test_samplers():
    ember.manual_seed(0)
    c = ember.empty(20000).cauchy_(1.0, 2.0)
    assert abs(c.median().item() - 1.0) < 0.1
    assert abs((c - 1).abs().median().item() - 2.0) < 0.15  # the Cauchy's scale is its median |deviation|
    ln = ember.empty(20000, dtype=ember.float64).log_normal_(0.5, 0.25).log()
    assert abs(ln.mean().item() - 0.5) < 0.02 and abs(ln.std().item() - 0.25) < 0.02
    g = ember.empty(20000).geometric_(0.25)
    assert g.min().item() == 1 and abs(g.mean().item() - 4.0) < 0.15 and ember.equal(g, g.floor())
    check_raises(lambda m: m.empty(3).geometric_(1.5))
    check_raises(lambda m: m.empty(3).log_normal_(0, -1))


def test_deprecated_and_device_methods():
    x = rand(4, 5, seed=21)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check(lambda t, m: (t.resize(20), t.resize(2, 10), t.resize_as(t.t()), t.volatile), x)
        check_raises(lambda t, m: t.resize(3), x)
    check_raises(lambda t, m: t.reinforce(1), x)
    check_raises(lambda t, m: t.xpu(), x)
    check(lambda t, m: (t.is_set_to(t), t.is_set_to(t.clone()), t.is_set_to(t.view(20)), t.is_pinned()), x)
    with pytest.raises(RuntimeError, match='not compiled with CUDA'):
        ember.ones(2).pin_memory()
    check(lambda t, m: (m.as_strided_scatter(t, m.zeros(2, 2), (2, 2), (1, 2)), m.slice_copy(t, 1, 1, 4, 2),
                        t.narrow_copy(1, 1, 2)), x)


@pytest.mark.parametrize('shape,perm', [((2, 3, 4, 5), None), ((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 1, 4, 5), (0, 2, 3, 1)),
                                        ((2, 3, 4), None), ((2, 3, 4, 5, 6), (0, 2, 3, 4, 1)),
                                        ((2, 3, 4, 5, 6), None), ((1, 3, 1, 1), None)])
def test_is_contiguous_memory_format(shape, perm):
    def run(t, m):
        if perm is not None:  # a tensor stored channels-last: NHWC-contiguous, viewed as NCHW
            inverse = [perm.index(k) for k in range(len(perm))]
            t = t.permute(*perm).contiguous().permute(*inverse)
        return tuple(t.is_contiguous(memory_format=f) for f in (
            m.contiguous_format, m.channels_last, m.channels_last_3d, m.preserve_format)) + (t.is_contiguous(),)
    check(run, rand(*shape, seed=22))
    check_raises(lambda t, m: t.is_contiguous(memory_format=3), rand(*shape, seed=22))


def test_manual_seed_returns_the_default_generator():
    assert ember.manual_seed(3) is ember.default_generator
    assert ember.random.manual_seed(3) is ember.default_generator


@pytest.mark.parametrize('reduce', ['prod', 'mean', 'amax', 'amin'])
@pytest.mark.parametrize('include_self', [True, False])
def test_index_reduce(reduce, include_self):
    x, src = rand(3, 4, seed=23), rand(5, 4, seed=24)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # torch: index_reduce() is in beta
        check(lambda a, s, m: m.index_reduce(a, 0, m.tensor([0, 2, 0, 1, 2]), s, reduce, include_self=include_self),
              x, src)
        check(lambda a, s, m: a.clone().index_reduce_(1, m.tensor([3, 0, 3]), s.t()[:3].t(), reduce,
                                                      include_self=include_self), x, rand(3, 3, seed=25))
    check_raises(lambda a, s, m: m.index_reduce(a, 0, m.tensor([0]), s[:1], 'sum'), x, src)


@pytest.mark.parametrize('edge_order', [1, 2])
def test_gradient(edge_order):
    f = rand(5, 6, seed=26)
    coords = torch.tensor([0., 0.5, 1.5, 2., 3.5, 4.])
    for spacing in (1., 2.5, [1.5, 0.5]):
        check(lambda t, m: m.gradient(t, spacing=spacing, edge_order=edge_order), f, grad=True)
    check(lambda t, c, m: m.gradient(t, spacing=[c], dim=1, edge_order=edge_order), f, coords)
    check(lambda t, m: m.gradient(t, dim=0, edge_order=edge_order), f)
    check(lambda m: m.gradient(m.tensor([1, 4, 9, 16]), edge_order=edge_order))
    check_raises(lambda t, m: m.gradient(t[:2], dim=0, edge_order=2), f)
    check_raises(lambda t, m: m.gradient(t, spacing=[1., 2., 3.]), f)


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'bfloat16'])
def test_frexp(dtype):
    values = [0., -0., 1., 8., -3.5, float('inf'), -float('inf'), float('nan'), -0.3, 0.75, 1000.]
    if dtype in ('float32', 'float64'):
        values += [1e-40, 2. ** -126, 0.99999994, 1e30]
    if dtype == 'float64':
        values += [1e-310, 5e-324, 1.7e308]
    check(lambda m: tuple(m.frexp(m.tensor(values, dtype=getattr(m, dtype)))))
    check(lambda m: tuple(m.tensor(values, dtype=getattr(m, dtype)).frexp()))
    check_raises(lambda m: m.frexp(m.tensor([1, 2])))


def test_conv_tbc_and_is_inference():
    check(lambda i, w, b, m: m.conv_tbc(i, w, b, 1), rand(7, 2, 3, seed=27), rand(3, 3, 4, seed=28),
          rand(4, seed=29), grad=True)
    check_raises(lambda i, m: m.conv_tbc(i[0], i, i[0, 0]), rand(7, 2, 3, seed=27))
    assert not ember.ones(2).is_inference() and not ember.is_inference(ember.ones(1))
    with ember.inference_mode():
        assert ember.ones(2).is_inference()
