"""MultiheadAttention (torch.nn.MultiheadAttention; torch keeps it in
torch/nn/modules/activation.py). The math is F.multi_head_attention_forward:
the fused attention op when the weights are not asked for."""
from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ['MultiheadAttention']


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim // num_heads each, with input projections
    (one packed (3E, E) in_proj_weight, or q/k/v_proj_weight when kdim or vdim differ from
    embed_dim) and the output projection out_proj. Initialised as PyTorch: xavier_uniform_ on
    the input projections, zeros on the biases, xavier_normal_ on bias_k/bias_v."""

    __constants__ = ['batch_first']

    def __init__(self, embed_dim, num_heads, dropout=0., bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim, 'embed_dim must be divisible by num_heads'
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_C.empty((3 * embed_dim, embed_dim), **factory_kwargs))
            for name in ('q_proj_weight', 'k_proj_weight', 'v_proj_weight'):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(_C.empty((embed_dim, embed_dim), **factory_kwargs))
            self.k_proj_weight = Parameter(_C.empty((embed_dim, self.kdim), **factory_kwargs))
            self.v_proj_weight = Parameter(_C.empty((embed_dim, self.vdim), **factory_kwargs))
            self.register_parameter('in_proj_weight', None)
        if bias:
            self.in_proj_bias = Parameter(_C.empty(3 * embed_dim, **factory_kwargs))
        else:
            self.register_parameter('in_proj_bias', None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory_kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(_C.empty((1, 1, embed_dim), **factory_kwargs))
            self.bias_v = Parameter(_C.empty((1, 1, embed_dim), **factory_kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.)
            init.constant_(self.out_proj.bias, 0.)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True):
        """query (L, N, E) (N first with batch_first) or unbatched (L, E); key and value
        (S, N, kdim/vdim). Returns (output, weights or None) as F.multi_head_attention_forward."""
        if key_padding_mask is not None and key_padding_mask.dtype != _C.bool \
                and not key_padding_mask.is_floating_point():
            raise AssertionError('only bool and floating types of key_padding_mask are supported')
        batched = query.dim() == 3
        if self.batch_first and batched:  # keep `query is key is value` for the packed projection
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else dict(
            use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight)
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, **separate)
        return (out.transpose(1, 0) if self.batch_first and batched else out), weights
