"""Ops fixed after PyTorch 1.13's op_db replay (issue 15), each against torch 1.13:
values, float64 gradcheck and exception types of the edge cases the replay found."""
import pytest
import torch

import ember
from helpers import check, check_raises, rand, to_ember

X = rand(3, 4, dtype='float64', seed=1)


def gradcheck(fn, *inputs):
    ins = tuple(to_ember(x).requires_grad_(True) for x in inputs)
    assert ember.autograd.gradcheck(fn, ins)


# ---- shapes of 0-d and empty inputs ------------------------------------------------------
def test_mT_mH_adjoint_of_0d():
    s = torch.tensor(2.5, dtype=torch.float64)
    check(lambda a, m: a.mT, s)
    check(lambda a, m: a.mH, s)
    check(lambda a, m: a.adjoint(), s)
    check_raises(lambda a, m: a.mT, rand(3))
    check_raises(lambda a, m: a.adjoint(), rand(3))


def test_unfold_of_0d():
    s = torch.tensor(1.5, dtype=torch.float64)
    check(lambda a, m: a.unfold(0, 1, 1), s, grad=True)
    check(lambda a, m: a.unfold(-1, 0, 1), s)
    check_raises(lambda a, m: a.unfold(0, 2, 1), s)


def test_aminmax():
    s = torch.tensor(2.5, dtype=torch.float64)
    for kw in ({}, {'dim': 0}, {'dim': 0, 'keepdim': True}, {'keepdim': True}):
        check(lambda a, m: tuple(m.aminmax(a, **kw)), s)
    check(lambda a, m: tuple(m.aminmax(a, dim=1, keepdim=True)), X)
    check(lambda a, m: tuple(m.aminmax(a, keepdim=True)), X)
    check_raises(lambda a, m: m.aminmax(a), torch.zeros(5, 0, 5))
    check_raises(lambda a, m: m.aminmax(a, dim=1), torch.zeros(5, 0, 5))
    check_raises(lambda a, m: m.aminmax(a, dim=0, out=(m.empty(0), m.empty(0, dtype=m.float64))), rand(4, 4))
    e = ember.aminmax(to_ember(X), dim=0, out=(ember.empty(0, dtype=ember.float64),) * 2)
    assert tuple(e.min.shape) == (4,)


def test_glu_backward_of_empty_narrowed_halves():
    # sigmoid of an empty view at an offset once asked for a negative allocation
    check(lambda a, m: m.nn.functional.glu(a, 2), torch.zeros(0, 2, 4, dtype=torch.float64), grad=True)
    check(lambda a, m: a.narrow(2, 2, 2).sigmoid(), torch.zeros(0, 2, 4))
    # an empty result is contiguous, as PyTorch's
    assert ember.zeros(0, 3, 4).permute(2, 0, 1).exp().stride() == torch.zeros(0, 3, 4).permute(2, 0, 1).exp().stride()


def test_feature_alpha_dropout_passes_1d_through_in_eval():
    v = rand(5)
    check(lambda a, m: m.nn.functional.feature_alpha_dropout(a, 0.5, training=False), v)
    check(lambda a, m: m.nn.functional.feature_alpha_dropout(a, 0.0, training=True), v)
    check_raises(lambda a, m: m.nn.functional.feature_alpha_dropout(a, 0.5, training=True), v)


def test_batch_norm_of_empty_input():
    e = torch.zeros(0, dtype=torch.float64)
    check(lambda a, m: m.nn.functional.batch_norm(a, m.zeros(0, dtype=m.float64), m.zeros(0, dtype=m.float64),
                                                  training=True), e, grad=True)


@pytest.mark.parametrize('training', [True, False])
def test_native_batch_norm_statistics(training):
    x, w, b = rand(3, 2, 4, dtype='float64', seed=2), rand(2, dtype='float64', seed=3), rand(2, dtype='float64')
    rm, rv = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    eo, to = check(lambda a, c, d, m: tuple(m.native_batch_norm(a, c, d, m.zeros(2, dtype=m.float64),
                                                                m.ones(2, dtype=m.float64), training, 0.1, 1e-5)),
                   x, w, b, grad=True)
    # the statistics are not differentiable, as PyTorch's
    assert [o.requires_grad for o in eo] == [o.requires_grad for o in to]
    gradcheck(lambda a, c, d: ember.native_batch_norm(a, c, d, to_ember(rm), to_ember(rv), training, 0.1, 1e-5)[0],
              x, w, b)


def test_native_layer_norm_statistics_not_differentiable():
    x, w, b = rand(2, 3, 4, dtype='float64', seed=5), rand(4, dtype='float64', seed=6), rand(4, dtype='float64')
    eo, to = check(lambda a, c, d, m: tuple(m.native_layer_norm(a, (4,), c, d, 1e-5)), x, w, b, grad=True)
    assert [o.requires_grad for o in eo] == [o.requires_grad for o in to]
    gradcheck(lambda a, c, d: ember.native_layer_norm(a, (4,), c, d, 1e-5)[0], x, w, b)
    eo = ember.nn.functional.group_norm(to_ember(x).requires_grad_(), 3)
    assert eo.requires_grad


# ---- gather's empty index ----------------------------------------------------------------
def test_gather_empty_index_of_any_dtype():
    v = rand(5, dtype='float64')
    check(lambda a, m: m.gather(a, 0, m.zeros(0, dtype=m.uint8)), v, grad=True)
    check(lambda a, m: m.gather(a, 1, m.zeros(4, 0, dtype=m.int64)), X, grad=True)
    check_raises(lambda a, m: m.gather(a, 0, m.zeros(1, dtype=m.uint8)), v)
    check_raises(lambda a, m: m.gather(a, 0, m.zeros(1, dtype=m.int32)), v)


# ---- error types -------------------------------------------------------------------------
def test_split_by_zero_sections():
    cube = rand(5, 5, 5)
    for name in ('dsplit', 'hsplit', 'vsplit'):
        check_raises(lambda a, m: getattr(m, name)(a, 0), cube)


def test_kthvalue_out_aliasing_input():
    # once resized its own input under the kernel (a crash)
    check_raises(lambda a, m: m.kthvalue(a, 5, out=(a, m.tensor(0))), rand(10))
    check_raises(lambda a, m: m.kthvalue(a, 2, keepdim=True, out=(a[:1], m.empty(0, dtype=m.int64))), rand(5))


def test_sort_out_aliasing_input_is_allowed():
    check(lambda a, m: m.sort(a, out=(a, m.empty(0, dtype=m.int64)))[0].clone(), rand(7))


def test_linalg_cross_needs_same_rank():
    check_raises(lambda a, b, m: m.linalg.cross(a, b), rand(5, 5, 3), rand(5, 3))
    check_raises(lambda a, b, m: m.cross(a, b), rand(5, 5, 3), rand(5, 3))
    check(lambda a, b, m: m.linalg.cross(a, b), rand(5, 1, 3, dtype='float64'), rand(1, 4, 3, dtype='float64'),
          grad=True)


# ---- fill_ / zero_ are recorded (a zero gradient), as PyTorch's ----------------------------
def test_zero_and_fill_keep_history():
    check(lambda a, m: a.clone().zero_() * 2 + a, X, grad=True)
    check(lambda a, m: m.zero_(a.clone()), X, grad=True)
    check(lambda a, m: (a * 1)[1:].fill_(3.0), X, grad=True)
    e = to_ember(X).requires_grad_()
    with pytest.raises(RuntimeError):
        e.zero_()
    with ember.no_grad():
        e.fill_(1.0)
    assert e.requires_grad and float(e.sum()) == 12.0


# ---- gradient / index_reduce / quantile ------------------------------------------------------
def test_gradient_arguments():
    check(lambda a, m: m.gradient(a, spacing=None), X, grad=True)
    check(lambda a, m: m.gradient(a, spacing=None, edge_order=2), X, grad=True)
    check_raises(lambda a, m: m.gradient(a, spacing=0.1, dim=(1, 1)), X)
    check_raises(lambda a, m: m.gradient(a, spacing=[m.tensor(2.0)], dim=0), X)
    check_raises(lambda a, m: m.gradient(a, dim=3), X)
    check_raises(lambda a, m: m.gradient(a, edge_order=1), torch.zeros(3, 1))


@pytest.mark.parametrize('reduce', ['prod', 'mean', 'amax', 'amin'])
def test_index_reduce_of_0d(reduce):
    s, v = torch.tensor(1.5, dtype=torch.float64), torch.tensor(-2.0, dtype=torch.float64)
    check(lambda a, b, m: a.index_reduce(0, m.tensor([0]), b, reduce), s, v, grad=True)
    check(lambda a, b, m: a.clone().index_reduce_(0, m.tensor([0]), b, reduce, include_self=False), s, v, grad=True)
    check(lambda a, b, m: (a * 1).index_reduce_(0, m.tensor([0, 2, 0]), b, reduce), X, rand(3, 4, dtype='float64'),
          grad=True)


def test_quantile_of_0d_and_gradient_in_q():
    s = torch.tensor(1.5, dtype=torch.float64)
    for kw in ({'dim': 0}, {'dim': 0, 'keepdim': True}, {'keepdim': True}):
        check(lambda a, m: m.quantile(a, 0.5, **kw), s)
        check(lambda a, m: m.nanquantile(a, m.tensor([0.25, 0.5], dtype=m.float64), **kw), s)
    q = torch.tensor([0.3, 0.75], dtype=torch.float64)
    check(lambda a, b, m: m.quantile(a, b, dim=1, keepdim=True), X, q, grad=True)
    check(lambda a, b, m: m.nanquantile(a, b, dim=0), X, q, grad=True)
    check(lambda a, b, m: m.quantile(a, b), X, torch.tensor(0.4, dtype=torch.float64), grad=True)
    gradcheck(lambda a, b: ember.quantile(a, b, dim=1), X, q)
    check_raises(lambda a, m: m.quantile(a, m.tensor([0.5])), X)
    check_raises(lambda a, m: m.quantile(a, m.rand(2, 2, dtype=m.float64)), X)


# ---- addbmm_, cartesian_prod / combinations, torch 1.13's private attention ------------------
@pytest.mark.parametrize('shape', [(1,), (), (5, 10)])
def test_addbmm_inplace_broadcasts_and_resizes_self(shape):
    b1, b2 = rand(5, 5, 5, dtype='float64', seed=7), rand(5, 5, 10, dtype='float64', seed=8)
    check(lambda a, p, q, m: a.clone().addbmm_(p, q, beta=0.6, alpha=0.2), rand(*shape, dtype='float64'), b1, b2,
          grad=True)


def test_cartesian_prod_and_combinations_keep_history():
    v1, v2, v3 = rand(1, dtype='float64'), rand(2, dtype='float64', seed=2), rand(4, dtype='float64', seed=3)
    check(lambda a, b, c, m: m.cartesian_prod(a, b, c), v1, v2, v3, grad=True)
    for r in (2, 4):
        check(lambda a, m: m.combinations(a, r), v2, grad=True)
    check(lambda a, m: a.expand(3, 4).reshape(12), v3, grad=True)  # a copy, not a view of the expand


def test_private_scaled_dot_product_attention():
    q, k, v = rand(2, 4, 6, dtype='float64'), rand(2, 3, 6, dtype='float64', seed=2), rand(2, 3, 6, dtype='float64')
    for causal in (False, True):
        for need in (False, True):
            check(lambda a, b, c, m: m.nn.functional._scaled_dot_product_attention(
                a, b, c, need_attn_weights=need, is_causal=causal), q, k, v, grad=True)
    mask = torch.rand(4, 3) > 0.3
    mask[:, 0] = True
    check(lambda a, b, c, m: m.nn.functional._scaled_dot_product_attention(a, b, c, attn_mask=to(m, mask)),
          q, k, v, grad=True)


def to(m, t):
    return t if m is torch else to_ember(t)


# ---- fractional max pooling with given samples (the replay's draw torch's RNG stream) --------
@pytest.mark.parametrize('nd,shape,ks,kw', [
    (2, (2, 3, 9, 9), (4, 4), {'output_size': (2, 3)}), (2, (2, 3, 9, 9), (6, 6), {'output_ratio': (0.5, 0.5)}),
    (2, (3, 9, 9), 3, {'output_size': 5}), (3, (2, 3, 7, 8, 9), (2, 3, 4), {'output_size': (3, 4, 5)}),
    (3, (2, 3, 7, 8, 9), 2, {'output_ratio': 0.5})])
def test_fractional_max_pool_with_samples(nd, shape, ks, kw):
    x = rand(*shape, dtype='float64')
    u = torch.rand(shape[0] if len(shape) == nd + 2 else 1, shape[-nd - 1], nd, dtype=torch.float64)
    fn = f'fractional_max_pool{nd}d'
    check(lambda a, m: getattr(m.nn.functional, fn)(a, ks, _random_samples=to(m, u), return_indices=True, **kw), x,
          grad=True)


# ---- segment_reduce ----------------------------------------------------------------------------
@pytest.mark.parametrize('reduce', ['max', 'min', 'sum', 'prod', 'mean'])
@pytest.mark.parametrize('initial', [None, 2.0])
def test_segment_reduce(reduce, initial):
    v = rand(5, dtype='float64', seed=11)
    lengths = torch.tensor([0, 1, 2, 2])
    offsets = torch.tensor([0, 0, 1, 3, 5])
    check(lambda a, m: m.segment_reduce(a, reduce, lengths=to(m, lengths), initial=initial), v, grad=True)
    check(lambda a, m: m.segment_reduce(a, reduce, offsets=to(m, offsets), initial=initial), v, grad=True)
    x = rand(4, 5, 3, dtype='float64', seed=12)
    rows = torch.tensor([[2, 0, 3, 0], [0, 1, 2, 2], [3, 0, 2, 0], [1, 1, 1, 2]])
    check(lambda a, m: m.segment_reduce(a, reduce, lengths=to(m, rows), axis=1, initial=initial), x, grad=True)
    check(lambda a, m: m.segment_reduce(a, reduce, lengths=to(m, torch.tensor([1, 2])), unsafe=True,
                                        initial=initial), x, grad=True)
    if reduce in ('sum', 'mean'):
        gradcheck(lambda a: ember.segment_reduce(a, reduce, lengths=to_ember(rows), axis=1, initial=initial), x)


def test_segment_reduce_errors():
    v = rand(5)
    check_raises(lambda a, m: m.segment_reduce(a, 'sum', lengths=m.tensor([1, 2])), v)
    check_raises(lambda a, m: m.segment_reduce(a, 'sum'), v)


def test_ops_aten_slice():
    x = rand(4, 6, 5, dtype='float64')
    for args in ((), (1, 1, -2), (2, -4, None, 2), (0, -100, 100, 3)):
        check(lambda a, m: m.ops.aten.slice.Tensor(a, *args), x, grad=True)
    check(lambda a, m: m.ops.aten.slice(a, 1, 1, 5, 2), x, grad=True)
    check_raises(lambda a, m: m.ops.aten.slice.Tensor(a, 0, 0, 2, 0), x)
    e = ember.ops.aten.slice.Tensor(to_ember(x), 1, 1, 3)
    assert e.storage_offset() == 5 and e.data_ptr() == e.storage().data_ptr() + 5 * 8  # a view
    with pytest.raises(AttributeError):
        ember.ops.aten.slice.NoSuchOverload


def test_views_of_an_expanded_view_that_requires_grad():
    # once refused ("taking a view of an expanded tensor"): now views of the expand's root
    v = rand(1, 3, dtype='float64')
    check(lambda a, m: a.expand(4, 3).transpose(-2, -1), v, grad=True)
    check(lambda a, m: (a * 2).expand(4, 3).t()[1:, ::2], v, grad=True)
    check(lambda a, m: a.expand(2, 4, 3).mT.select(0, 1).diagonal(), v, grad=True)
    gradcheck(lambda a: a.expand(4, 3).t()[1:, ::2].diagonal(), v)


def test_masked_fill_complex_value_into_real_tensor():
    check_raises(lambda a, m: a.masked_fill(m.tensor(True), m.tensor(1 + 1j)), rand(2, 2))
    check_raises(lambda a, m: a.masked_fill(m.tensor(True), 1j), rand(2, 2))
    check_raises(lambda a, m: a.masked_fill(m.tensor(True), m.tensor(1 + 2j)), torch.tensor([1, 2]))
    check(lambda a, m: a.masked_fill(m.tensor(True), m.tensor(2 + 0j)), rand(2, 2))
