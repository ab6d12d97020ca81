"""torch.nn.functional's attention: scaled_dot_product_attention (torch 2.0's
signature; torch 1.13 has only the private _scaled_dot_product_attention) and
multi_head_attention_forward (torch 1.13's arguments and semantics).

Without dropout (and without need_weights) attention runs the fused C op
(flash-style tiles with an online softmax: no (L, S) matrix in memory);
dropout and the returned weights need the probabilities, so those paths run
the composite softmax(q k^T scale + mask) (ember._C._nn.attention_weights).
A query row whose keys are all masked gives zeros, where PyTorch's
composite gives NaN."""
import math
import warnings

from ... import _C
import ember

__all__ = ['scaled_dot_product_attention', 'multi_head_attention_forward']


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None):
    """softmax(query key^T * scale + mask) value over the last two dims, batch dims broadcast.
    query (..., L, E), key (..., S, E), value (..., S, Ev); attn_mask broadcastable to
    (..., L, S): bool (True = take part) or float (added); is_causal: the lower triangle
    (not with attn_mask); scale: default 1/sqrt(E). dropout_p > 0 drops probabilities
    (F.dropout, always on, as torch)."""
    if dropout_p > 0.0:
        from . import dropout  # the dropout family's functional, resolved at call time
        weights = _C._nn.attention_weights(query, key, attn_mask, is_causal, scale=scale)
        return ember.matmul(dropout(weights, p=dropout_p), value)
    return _C._nn.scaled_dot_product_attention(query, key, value, attn_mask, is_causal, scale=scale)


def _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, need_attn_weights=False,
                                  is_causal=False):
    """torch 1.13's form: (output, weights), the weights (after dropout) returned whatever
    need_attn_weights says, as its CPU path does; scale 1/sqrt(E)."""
    weights = _C._nn.attention_weights(query, key, attn_mask, is_causal)
    if dropout_p > 0.0:
        from . import dropout
        weights = dropout(weights, p=dropout_p)
    return ember.matmul(weights, value), weights


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """torch 1.13's input checks (AssertionError); True when the input is batched."""
    if query.dim() == 3:
        assert key.dim() == 3 and value.dim() == 3, (
            'For batched (3-D) `query`, expected `key` and `value` to be 3-D'
            f' but found {key.dim()}-D and {value.dim()}-D tensors respectively')
        assert key_padding_mask is None or key_padding_mask.dim() == 2, (
            'For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D'
            f' but found {key_padding_mask.dim()}-D tensor instead')
        assert attn_mask is None or attn_mask.dim() in (2, 3), (
            'For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D'
            f' but found {attn_mask.dim()}-D tensor instead')
        return True
    if query.dim() == 2:
        assert key.dim() == 2 and value.dim() == 2, (
            'For unbatched (2-D) `query`, expected `key` and `value` to be 2-D'
            f' but found {key.dim()}-D and {value.dim()}-D tensors respectively')
        assert key_padding_mask is None or key_padding_mask.dim() == 1, (
            'For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D'
            f' but found {key_padding_mask.dim()}-D tensor instead')
        if attn_mask is not None:
            assert attn_mask.dim() in (2, 3), (
                'For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D'
                f' but found {attn_mask.dim()}-D tensor instead')
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                assert tuple(attn_mask.shape) == expected, \
                    f'Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}'
        return False
    raise AssertionError(f'query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor')


def _in_projection(query, key, value, w, b, separate):
    """q, k, v projections: from the packed (3E, E) weight, or the three separate ones."""
    from . import linear
    if separate is None:
        ws = w.chunk(3)
        bs = b.chunk(3) if b is not None else (None, None, None)
        if query is key and key is value:  # self-attention: one GEMM
            return linear(query, w, b).chunk(3, dim=-1)
    else:
        ws = separate
        bs = b.chunk(3) if b is not None else (None, None, None)
    return tuple(linear(x, wi, bi) for x, wi, bi in zip((query, key, value), ws, bs))


def _pad_last(mask):
    """mask with one more column at the end: False or 0 (torch's pad(mask, (0, 1)))."""
    zero = ember.zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype)
    return ember.cat([mask, zero], dim=-1)


def _prepare_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    """attn_mask as a 3-D bool or float mask (1 or bsz * num_heads, tgt_len, src_len)."""
    if attn_mask.dtype == ember.uint8:
        warnings.warn('Byte tensor for attn_mask in nn.MultiheadAttention is deprecated. Use bool tensor instead.')
        attn_mask = attn_mask.to(ember.bool)
    else:
        assert attn_mask.is_floating_point() or attn_mask.dtype == ember.bool, \
            f'Only float, byte, and bool types are supported for attn_mask, not {attn_mask.dtype}'
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f'The shape of the 2D attn_mask is {attn_mask.shape}, but should be '
                               f'{(tgt_len, src_len)}.')
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f'The shape of the 3D attn_mask is {attn_mask.shape}, but should be '
                               f'{(bsz * num_heads, tgt_len, src_len)}.')
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _heads(x, static, name, length, bsz, num_heads, head_dim):
    """(length, bsz, E) -> (bsz * num_heads, length, head_dim), or the checked static_k/v."""
    if static is None:
        return x.contiguous().view(length, bsz * num_heads, head_dim).transpose(0, 1)
    assert static.size(0) == bsz * num_heads, \
        f'expecting {name}.size(0) of {bsz * num_heads}, but got {static.size(0)}'
    assert static.size(2) == head_dim, f'expecting {name}.size(2) of {head_dim}, but got {static.size(2)}'
    return static


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True):
    """Multi-head attention, sequence-first: query (L, N, E) or (L, E), key/value (S, N, E) or
    (S, E). key_padding_mask (N, S) or (S): True (or a float added) masks a key; attn_mask
    (L, S) or (N * num_heads, L, S): True masks, a float is added. Returns (output (L, N, E),
    weights (N, L, S) averaged over heads, or (N, num_heads, L, S), or None)."""
    from . import linear
    is_batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if key_padding_mask is not None and key_padding_mask.dtype != ember.bool \
            and not key_padding_mask.is_floating_point():
        raise AssertionError('only bool and floating types of key_padding_mask are supported')
    assert embed_dim == embed_dim_to_check, \
        f'was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}'
    head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, f'embed_dim {embed_dim} not divisible by num_heads {num_heads}'
    if use_separate_proj_weight:
        assert key.shape[:2] == value.shape[:2], \
            f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
        assert q_proj_weight is not None, 'use_separate_proj_weight is True but q_proj_weight is None'
        assert k_proj_weight is not None, 'use_separate_proj_weight is True but k_proj_weight is None'
        assert v_proj_weight is not None, 'use_separate_proj_weight is True but v_proj_weight is None'
        q, k, v = _in_projection(query, key, value, None, in_proj_bias, (q_proj_weight, k_proj_weight, v_proj_weight))
    else:
        assert key.shape == value.shape, f'key shape {key.shape} does not match value shape {value.shape}'
        assert in_proj_weight is not None, 'use_separate_proj_weight is False but in_proj_weight is None'
        q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, None)

    if attn_mask is not None:
        attn_mask = _prepare_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads)
    if bias_k is not None and bias_v is not None:
        assert static_k is None, 'bias cannot be added to static key.'
        assert static_v is None, 'bias cannot be added to static value.'
        k = ember.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ember.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = _pad_last(attn_mask) if attn_mask is not None else None
        key_padding_mask = _pad_last(key_padding_mask) if key_padding_mask is not None else None
    else:
        assert bias_k is None
        assert bias_v is None

    q = _heads(q, None, 'q', tgt_len, bsz, num_heads, head_dim)
    k = _heads(k, static_k, 'static_k', k.shape[0], bsz, num_heads, head_dim)
    v = _heads(v, static_v, 'static_v', v.shape[0], bsz, num_heads, head_dim)
    if add_zero_attn:
        zeros = ember.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k = ember.cat([k, zeros], dim=1)
        v = ember.cat([v, zeros.to(v.dtype)], dim=1)
        attn_mask = _pad_last(attn_mask) if attn_mask is not None else None
        key_padding_mask = _pad_last(key_padding_mask) if key_padding_mask is not None else None
    src_len = k.size(1)

    if key_padding_mask is not None:
        assert tuple(key_padding_mask.shape) == (bsz, src_len), \
            f'expecting key_padding_mask shape of {(bsz, src_len)}, but got {key_padding_mask.shape}'
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        if attn_mask is None:
            attn_mask = key_padding_mask
        elif attn_mask.dtype == ember.bool:
            attn_mask = attn_mask.logical_or(key_padding_mask)
        else:
            attn_mask = attn_mask.masked_fill(key_padding_mask, float('-inf'))
    if attn_mask is not None and attn_mask.dtype == ember.bool:
        attn_mask = ember.zeros(tuple(attn_mask.shape), dtype=q.dtype).masked_fill_(attn_mask, float('-inf'))
    if not training:
        dropout_p = 0.0

    if need_weights or dropout_p > 0.0:
        weights = _C._nn.attention_weights(q, k, attn_mask)
        if dropout_p > 0.0:
            from . import dropout
            weights = dropout(weights, p=dropout_p)
        out = ember.bmm(weights, v)
    else:
        weights = None
        out = _C._nn.scaled_dot_product_attention(q, k, v, attn_mask)
    out = linear(out.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim), out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if weights is not None:
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.sum(dim=1) / num_heads
        if not is_batched:
            weights = weights.squeeze(0)
    if not is_batched:
        out = out.squeeze(1)
    return out, weights
