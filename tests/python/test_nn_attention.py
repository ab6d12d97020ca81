"""Attention vs PyTorch 1.13: F.scaled_dot_product_attention (torch 2.0's API) against the
math written with torch ops and torch 1.13's private F._scaled_dot_product_attention;
F.multi_head_attention_forward and nn.MultiheadAttention against torch's; the Transformer
layers (when main has LayerNorm, Dropout and F.relu); errors and reprs."""
import math

import pytest
import torch

import ember
import ember.nn.functional as EF
from helpers import assert_same, check, check_raises, rand, to_ember
from nn_helpers import check_module


def ref_sdpa(q, k, v, mask=None, causal=False, scale=None):
    """The composite attention with torch ops (bool mask: True takes part)."""
    s = q @ k.transpose(-2, -1) * (scale if scale is not None else 1 / math.sqrt(q.size(-1)))
    if causal:
        mask = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril()
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else s + mask
    return s.softmax(-1) @ v


def sdpa_case(shapes, dtype='float32', mask=None, causal=False, scale=None, noncontig=False, grad=True, tol=1e-5):
    qs, ks, vs = shapes
    q, k, v = (rand(*s, dtype=dtype, low=-1, high=1, seed=i, noncontig=noncontig) for i, s in enumerate((qs, ks, vs)))
    kw = {} if scale is None else {'scale': scale}
    inputs = (q, k, v) if mask is None else (q, k, v, mask)
    check(lambda *xs, m: ref_sdpa(*xs[:3], mask=xs[3] if len(xs) > 3 else None, causal=causal, scale=scale),
          *inputs, grad=grad, atol=tol, rtol=tol * 10,
          efn=lambda *xs, m: EF.scaled_dot_product_attention(*xs[:3], attn_mask=xs[3] if len(xs) > 3 else None,
                                                             is_causal=causal, **kw))


SHAPES = [((2, 5, 4), (2, 7, 4), (2, 7, 3)),            # 3-D, L != S, E != Ev
          ((2, 3, 6, 8), (2, 3, 9, 8), (2, 3, 9, 8)),   # 4-D
          ((2, 3, 70, 8), (1, 3, 150, 8), (2, 1, 150, 5)),  # several tiles, broadcast batch
          ((4, 3), (6, 3), (6, 2))]                     # 2-D


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('shapes', SHAPES)
def test_sdpa_values_and_grads(shapes, dtype):
    tol = 1e-5 if dtype == 'float32' else 1e-10
    sdpa_case(shapes, dtype, tol=tol)
    sdpa_case(shapes, dtype, causal=True, tol=tol)
    sdpa_case(shapes, dtype, noncontig=True, scale=0.3, tol=tol)
    L, S = shapes[0][-2], shapes[1][-2]
    bool_mask = rand(L, S, dtype='float64', low=0, high=1, seed=7) > 0.3
    bool_mask[:, 0] = True  # every query sees a key: torch's composite has no NaN rows
    sdpa_case(shapes, dtype, mask=bool_mask, tol=tol)
    float_mask = rand(1, S, dtype=dtype, seed=8)
    sdpa_case(shapes, dtype, mask=float_mask, tol=tol)


def test_sdpa_mask_kinds_broadcast():
    shapes = ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4))
    kpm = rand(2, 1, 1, 6, dtype='float64', low=0, high=1, seed=3) > 0.4
    kpm[..., 0] = True
    sdpa_case(shapes, mask=kpm)
    sdpa_case(shapes, mask=rand(3, 5, 6, seed=4), grad=True)  # float mask gets its gradient too


def test_sdpa_float_mask_gradient():
    q, k, v, mask = rand(2, 5, 4, seed=1), rand(2, 6, 4, seed=2), rand(2, 6, 3, seed=3), rand(5, 6, seed=4)
    check(lambda q, k, v, mask, m: ref_sdpa(q, k, v, mask), q, k, v, mask, grad=True,
          efn=lambda q, k, v, mask, m: EF.scaled_dot_product_attention(q, k, v, mask))


def test_sdpa_long_sequence():
    """L = S = 1024: the fused op never builds the (L, S) matrix."""
    shapes = ((1, 2, 1024, 16), (1, 2, 1024, 16), (1, 2, 1024, 16))
    sdpa_case(shapes, causal=True, tol=2e-5)


def test_sdpa_vs_torch_private_sdpa():
    q, k, v = rand(2, 3, 5, 4, seed=1), rand(2, 3, 7, 4, seed=2), rand(2, 3, 7, 4, seed=3)
    mask = rand(5, 7, dtype='float64', low=0, high=1, seed=4) > 0.3
    mask[:, 0] = True
    for m, causal in ((mask, False), (None, True), (None, False)):
        want = torch.nn.functional._scaled_dot_product_attention(q, k, v, m, 0.0, False, causal)[0]
        got = EF.scaled_dot_product_attention(to_ember(q), to_ember(k), to_ember(v),
                                              to_ember(m) if m is not None else None, is_causal=causal)
        assert_same(got, want)


def test_sdpa_fully_masked_rows_are_zero():
    """Ember's documented choice: a query that sees no key gives 0 (torch's composite: NaN)."""
    q, k, v = (ember.randn(2, 4, 3, requires_grad=True) for _ in range(3))
    mask = ember.ones(4, 4, dtype=ember.bool)
    mask[1] = False
    out = EF.scaled_dot_product_attention(q, k, v, mask)
    assert bool((out[:, 1] == 0).all()) and not bool(out.isnan().any())
    out.sum().backward()
    assert all(not bool(t.grad.isnan().any()) for t in (q, k, v))
    empty = EF.scaled_dot_product_attention(ember.randn(2, 3, 4), ember.randn(2, 0, 4), ember.randn(2, 0, 5))
    assert tuple(empty.shape) == (2, 3, 5) and bool((empty == 0).all())


def test_sdpa_gradcheck_float64():
    def inputs(*shapes):
        return [ember.randn(*s, dtype=ember.float64, requires_grad=True) for s in shapes]
    mask = ember.rand(5, 7) > 0.3
    mask[:, 0] = True
    fmask = ember.randn(5, 7, dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    q, k, v = inputs((2, 5, 4), (2, 7, 4), (2, 7, 3))
    assert ember.autograd.gradcheck(lambda q, k, v: EF.scaled_dot_product_attention(q, k, v, mask), (q, k, v))
    assert ember.autograd.gradcheck(lambda q, k, v: EF.scaled_dot_product_attention(q, k, v, is_causal=True),
                                    (q, k, v))
    assert ember.autograd.gradcheck(lambda q, k, v, f: EF.scaled_dot_product_attention(q, k, v, f), (q, k, v, fmask))
    assert ember.autograd.gradgradcheck(lambda q, k, v: EF.scaled_dot_product_attention(q, k, v, mask), (q, k, v))


def test_sdpa_dropout():
    q, k, v = rand(2, 5, 4, seed=1), rand(2, 7, 4, seed=2), rand(2, 7, 3, seed=3)
    check(lambda q, k, v, m: ref_sdpa(q, k, v), q, k, v, grad=True,
          efn=lambda q, k, v, m: EF.scaled_dot_product_attention(q, k, v, dropout_p=0.0))
    if not hasattr(EF, 'dropout'):
        pytest.skip('F.dropout is not on main yet')
    # with v = 1 each output is the sum of the kept probabilities / (1 - p): 1 on average
    ember.manual_seed(0)
    out = EF.scaled_dot_product_attention(ember.randn(64, 64, 8), ember.randn(64, 64, 8), ember.ones(64, 64, 1),
                                          dropout_p=0.5)
    assert abs(out.mean().item() - 1) < 0.05
    assert bool((out != 1).any())


def test_sdpa_errors():
    q, k, v = rand(2, 5, 4), rand(2, 7, 4), rand(2, 7, 3)
    ref = (lambda q, k, v, m: ref_sdpa(q, k, v))
    efn = (lambda q, k, v, m: EF.scaled_dot_product_attention(q, k, v))
    check_raises(ref, q, k.double(), v, efn=efn)         # mixed dtypes
    check_raises(ref, q, rand(2, 7, 3), v, efn=efn)      # E differs
    check_raises(ref, q, k, rand(2, 6, 3), efn=efn)      # S differs
    qe, ke, ve = to_ember(q), to_ember(k), to_ember(v)
    with pytest.raises(RuntimeError, match=r'\[5, 6\]'):
        EF.scaled_dot_product_attention(qe, ke, ve, ember.ones(5, 6, dtype=ember.bool))
    with pytest.raises(RuntimeError, match='is_causal'):
        EF.scaled_dot_product_attention(qe, ke, ve, ember.ones(5, 7, dtype=ember.bool), is_causal=True)
    with pytest.raises(RuntimeError, match='Int'):
        EF.scaled_dot_product_attention(qe.int(), ke.int(), ve.int())
    with pytest.raises(TypeError):
        EF.scaled_dot_product_attention(qe, ke)


# ---- multi_head_attention_forward -------------------------------------------------------
def mha_args(E=8, H=2, kdim=None, vdim=None, bias=True, bias_kv=False, dtype='float32', seed=0):
    """Random weights for F.multi_head_attention_forward (torch tensors)."""
    g = iter(range(seed * 100, seed * 100 + 100))
    separate = kdim is not None or vdim is not None
    w = {'in_proj_weight': None if separate else rand(3 * E, E, dtype=dtype, low=-.5, high=.5, seed=next(g)),
         'in_proj_bias': rand(3 * E, dtype=dtype, seed=next(g)) if bias else None,
         'bias_k': rand(1, 1, E, dtype=dtype, seed=next(g)) if bias_kv else None,
         'bias_v': rand(1, 1, E, dtype=dtype, seed=next(g)) if bias_kv else None,
         'out_proj_weight': rand(E, E, dtype=dtype, low=-.5, high=.5, seed=next(g)),
         'out_proj_bias': rand(E, dtype=dtype, seed=next(g)) if bias else None}
    if separate:
        w.update(q_proj_weight=rand(E, E, dtype=dtype, low=-.5, high=.5, seed=next(g)),
                 k_proj_weight=rand(E, kdim or E, dtype=dtype, low=-.5, high=.5, seed=next(g)),
                 v_proj_weight=rand(E, vdim or E, dtype=dtype, low=-.5, high=.5, seed=next(g)))
    return w


def run_mha(E, H, L, S, N, weights, grad=True, batched=True, self_attn=False, kdim=None, vdim=None,
            dtype='float32', **kw):
    names = list(weights)
    shape = (lambda n, d: (n, N, d)) if batched else (lambda n, d: (n, d))
    q = rand(*shape(L, E), dtype=dtype, seed=1)
    k = q if self_attn else rand(*shape(S, kdim or E), dtype=dtype, seed=2)
    v = q if self_attn else rand(*shape(S, vdim or E), dtype=dtype, seed=3)
    masks = {n: kw.pop(n) for n in ('key_padding_mask', 'attn_mask', 'static_k', 'static_v') if n in kw}
    mnames = list(masks)
    separate = weights.get('q_proj_weight') is not None

    def fn(q, k, v, *rest, m):
        w = dict(zip(names, rest[:len(names)]))
        extra = dict(zip(mnames, rest[len(names):]))
        if self_attn:
            k = v = q
        F = m.nn.functional
        return F.multi_head_attention_forward(
            q, k, v, E, H, w['in_proj_weight'], w['in_proj_bias'], w['bias_k'], w['bias_v'], kw.get('add_zero_attn',
                                                                                                      False),
            0.0, w['out_proj_weight'], w['out_proj_bias'], training=True, use_separate_proj_weight=separate,
            q_proj_weight=w.get('q_proj_weight'), k_proj_weight=w.get('k_proj_weight'),
            v_proj_weight=w.get('v_proj_weight'), need_weights=kw.get('need_weights', True),
            average_attn_weights=kw.get('average_attn_weights', True), **extra)
    tol = 1e-5 if dtype == 'float32' else 1e-10
    return check(fn, q, k, v, *weights.values(), *masks.values(), grad=grad, atol=tol, rtol=tol * 10)


@pytest.mark.parametrize('need_weights', [True, False])
def test_mha_functional_basic(need_weights):
    run_mha(8, 2, 5, 7, 3, mha_args(), need_weights=need_weights)
    run_mha(8, 2, 5, 5, 3, mha_args(), self_attn=True, need_weights=need_weights)
    run_mha(8, 4, 5, 7, 3, mha_args(), need_weights=need_weights, average_attn_weights=False)
    run_mha(8, 2, 5, 7, 1, mha_args(), batched=False, need_weights=need_weights)
    run_mha(6, 3, 4, 5, 2, mha_args(6, dtype='float64'), dtype='float64', need_weights=need_weights)


@pytest.mark.parametrize('need_weights', [True, False])
def test_mha_functional_masks(need_weights):
    L, S, N, H = 5, 7, 3, 2
    kpm = rand(N, S, dtype='float64', low=0, high=1, seed=5) > 0.7
    kpm[:, 0] = False
    am = rand(L, S, dtype='float64', low=0, high=1, seed=6) > 0.7
    am[:, 1] = False
    for extra in ({'key_padding_mask': kpm}, {'key_padding_mask': rand(N, S, seed=9)},
                  {'attn_mask': am}, {'attn_mask': rand(L, S, seed=10)},
                  {'attn_mask': rand(N * H, L, S, seed=11)}, {'attn_mask': am, 'key_padding_mask': kpm},
                  {'attn_mask': rand(L, S, seed=12), 'key_padding_mask': kpm}):
        run_mha(8, H, L, S, N, mha_args(), need_weights=need_weights, **extra)


def test_mha_functional_options():
    L, S, N = 5, 7, 3
    kpm = rand(N, S, dtype='float64', low=0, high=1, seed=5) > 0.7
    kpm[:, 0] = False
    run_mha(8, 2, L, S, N, mha_args(bias_kv=True), key_padding_mask=kpm, attn_mask=rand(L, S, seed=3))
    run_mha(8, 2, L, S, N, mha_args(), add_zero_attn=True, key_padding_mask=kpm, need_weights=False)
    run_mha(8, 2, L, S, N, mha_args(kdim=5, vdim=3), kdim=5, vdim=3)
    run_mha(8, 2, L, S, N, mha_args(bias=False), need_weights=False)
    run_mha(8, 2, L, S, N, mha_args(), static_k=rand(N * 2, 6, 4, seed=20), static_v=rand(N * 2, 6, 4, seed=21))


def test_mha_functional_errors():
    w = mha_args()
    q = rand(5, 3, 8)

    def call(q, k, m, E=8, H=2, **kw):
        return m.nn.functional.multi_head_attention_forward(
            q, k, k, E, H, to(m, w['in_proj_weight']), to(m, w['in_proj_bias']), None, None, False, 0.0,
            to(m, w['out_proj_weight']), to(m, w['out_proj_bias']), **kw)

    def to(m, t):
        return to_ember(t) if m is ember else t
    check_raises(lambda q, m: call(q, q, m, E=8, H=3), q)                         # not divisible
    check_raises(lambda q, m: call(q, q, m, E=6), q)                              # embed dim
    check_raises(lambda q, m: call(q, q[:, :2], m), q)                            # batch mismatch
    check_raises(lambda q, m: call(q.unsqueeze(0), q, m), q)                      # 4-D query
    check_raises(lambda q, a, m: call(q, q, m, attn_mask=a), q, rand(4, 5) > 0)   # 2-D mask shape
    check_raises(lambda q, a, m: call(q, q, m, attn_mask=a), q, rand(4, 5, 5))    # 3-D mask shape
    check_raises(lambda q, a, m: call(q, q, m, key_padding_mask=a), q, rand(3, 4) > 0)
    check_raises(lambda q, a, m: call(q, q, m, key_padding_mask=a), q, rand(3, 5, dtype='int64'))
    check_raises(lambda q, a, m: call(q, q, m, attn_mask=a), q, rand(5, 5, dtype='int64'))


# ---- nn.MultiheadAttention --------------------------------------------------------------
def mha_forward(**kw):
    return lambda mod, q, k, v, *masks: mod(q, k, v, **dict(zip(kw.get('mask_names', ()), masks)),
                                             **{n: x for n, x in kw.items() if n != 'mask_names'})


@pytest.mark.parametrize('need_weights', [True, False])
def test_mha_module(need_weights):
    q, k, v = rand(5, 3, 8, seed=1), rand(7, 3, 8, seed=2), rand(7, 3, 8, seed=3)
    check_module(lambda m: m.nn.MultiheadAttention(8, 2), q, k, v, forward=mha_forward(need_weights=need_weights))
    qb, kb, vb = (x.transpose(0, 1).contiguous() for x in (q, k, v))
    check_module(lambda m: m.nn.MultiheadAttention(8, 4, batch_first=True), qb, kb, vb,
                 forward=mha_forward(need_weights=need_weights, average_attn_weights=False))
    check_module(lambda m: m.nn.MultiheadAttention(8, 2, kdim=5, vdim=3), q, rand(7, 3, 5), rand(7, 3, 3),
                 forward=mha_forward(need_weights=need_weights))
    check_module(lambda m: m.nn.MultiheadAttention(8, 2, bias=False, add_bias_kv=True, add_zero_attn=True), q, k, v,
                 forward=mha_forward(need_weights=need_weights))
    kpm = rand(3, 7, dtype='float64', low=0, high=1, seed=5) > 0.7
    kpm[:, 0] = False
    check_module(lambda m: m.nn.MultiheadAttention(8, 2, dropout=0.0), q, k, v, kpm, rand(5, 7, seed=6),
                 forward=mha_forward(need_weights=need_weights, mask_names=('key_padding_mask', 'attn_mask')))
    check_module(lambda m: m.nn.MultiheadAttention(8, 2), rand(5, 8), rand(7, 8), rand(7, 8),
                 forward=mha_forward(need_weights=need_weights))


def test_mha_module_self_attention_eval():
    x = rand(2, 5, 8, seed=1)
    check_module(lambda m: m.nn.MultiheadAttention(8, 2, batch_first=True), x, x, x, train=False, grad=False,
                 forward=lambda mod, x, *_: mod(x, x, x, need_weights=False))


def test_mha_module_init_repr_errors():
    torch_mod, mod = torch.nn.MultiheadAttention(8, 2), ember.nn.MultiheadAttention(8, 2)
    assert repr(mod) == repr(torch_mod)
    assert repr(ember.nn.MultiheadAttention(8, 2, kdim=3, bias=False)) == \
        repr(torch.nn.MultiheadAttention(8, 2, kdim=3, bias=False))
    assert [n for n, _ in mod.named_parameters()] == [n for n, _ in torch_mod.named_parameters()]
    sep = ember.nn.MultiheadAttention(8, 2, kdim=3, vdim=4, add_bias_kv=True)
    assert [n for n, _ in sep.named_parameters()] == \
        [n for n, _ in torch.nn.MultiheadAttention(8, 2, kdim=3, vdim=4, add_bias_kv=True).named_parameters()]
    big = ember.nn.MultiheadAttention(256, 4)
    bound = math.sqrt(6 / (256 + 3 * 256))  # xavier_uniform_ on (3E, E)
    w = big.in_proj_weight
    assert w.abs().max().item() <= bound and abs(w.std().item() - bound / math.sqrt(3)) < 0.02 * bound
    assert big.in_proj_bias.abs().sum().item() == 0 and big.out_proj.bias.abs().sum().item() == 0
    with pytest.raises(AssertionError):
        ember.nn.MultiheadAttention(10, 3)
    with pytest.raises(AssertionError):
        mod(ember.randn(5, 3, 8), ember.randn(5, 3, 8), ember.randn(5, 3, 8),
            key_padding_mask=ember.zeros(3, 5, dtype=ember.int64))


def test_generate_square_subsequent_mask():
    assert_same(ember.nn.Transformer.generate_square_subsequent_mask(5),
                torch.nn.Transformer.generate_square_subsequent_mask(5))


# ---- Transformer layers (need LayerNorm, Dropout and F.relu from the other families) ----
needs_layers = pytest.mark.skipif(
    not all(hasattr(ember.nn, n) for n in ('LayerNorm', 'Dropout')) or not hasattr(EF, 'relu'),
    reason='LayerNorm, Dropout or F.relu not on main yet')


@needs_layers
@pytest.mark.parametrize('train', [True, False])
@pytest.mark.parametrize('norm_first', [False, True])
def test_transformer_layers(train, norm_first):
    src, tgt = rand(6, 2, 8, seed=1), rand(5, 2, 8, seed=2)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    kw = dict(dim_feedforward=16, dropout=0.0, norm_first=norm_first)
    check_module(lambda m: m.nn.TransformerEncoderLayer(8, 2, **kw), src, train=train)
    check_module(lambda m: m.nn.TransformerEncoderLayer(8, 2, activation='gelu', batch_first=True, **kw),
                 src.transpose(0, 1).contiguous(), train=train)
    check_module(lambda m: m.nn.TransformerDecoderLayer(8, 2, **kw), tgt, src, mask, train=train,
                 forward=lambda mod, t, s, mk: mod(t, s, tgt_mask=mk))
    check_module(lambda m: m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(8, 2, **kw), 2,
                                                   norm=m.nn.LayerNorm(8), enable_nested_tensor=False),
                 src, train=train)
    check_module(lambda m: m.nn.TransformerDecoder(m.nn.TransformerDecoderLayer(8, 2, **kw), 2), tgt, src,
                 train=train)
    check_module(lambda m: m.nn.Transformer(8, 2, 2, 2, **kw), src, tgt, mask, train=train,
                 forward=lambda mod, s, t, mk: mod(s, t, tgt_mask=mk))


@needs_layers
def test_transformer_reprs_and_errors():
    assert repr(ember.nn.TransformerEncoderLayer(8, 2, 16)) == repr(torch.nn.TransformerEncoderLayer(8, 2, 16))
    assert repr(ember.nn.Transformer(8, 2, 1, 1, 16)) == repr(torch.nn.Transformer(8, 2, 1, 1, 16))
    with pytest.raises(RuntimeError):
        ember.nn.TransformerEncoderLayer(8, 2, activation='tanh')
    model = ember.nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError):
        model(ember.randn(6, 2, 8), ember.randn(5, 3, 8))
    with pytest.raises(RuntimeError):
        model(ember.randn(6, 2, 8), ember.randn(5, 2, 4))


@pytest.mark.parametrize('dtype, tol', [('bfloat16', 2e-2), ('float16', 2e-3)])
def test_half_types_compute_in_float32(dtype, tol):
    """float16/bfloat16 q, k, v (as a bfloat16 autocast region makes them): the result and the
    gradients in that dtype, equal to float32 attention on the same rounded values up to one rounding."""
    dt = getattr(ember, dtype)
    g = ember.Generator().manual_seed(0)
    q, k, v = (ember.randn(2, 3, 16, 8, generator=g).to(dt) for _ in range(3))
    mask = ember.rand(16, 16, generator=g) > 0.3
    half = [t.clone().requires_grad_() for t in (q, k, v)]
    full = [t.float().requires_grad_() for t in (q, k, v)]
    out_h = ember.nn.functional.scaled_dot_product_attention(*half, attn_mask=mask)
    out_f = ember.nn.functional.scaled_dot_product_attention(*full, attn_mask=mask)
    assert out_h.dtype == dt
    out_h.float().square().sum().backward()
    out_f.square().sum().backward()
    for got, want in zip([out_h] + [t.grad for t in half], [out_f] + [t.grad for t in full]):
        assert got.dtype == dt
        assert float((got.float() - want).abs().max()) <= tol * float(want.abs().max())
