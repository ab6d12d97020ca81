"""The Transformer of "Attention Is All You Need" (torch.nn.modules.transformer):
encoder and decoder layers (post-norm, or pre-norm with norm_first), their stacks,
and the full model. Layers are plain compositions of MultiheadAttention, Linear,
LayerNorm and Dropout; PyTorch's inference fast paths (nested tensors,
_transformer_encoder_layer_fwd) compute the same values and are not reproduced:
enable_nested_tensor is accepted and ignored (padded positions are computed, not
zeroed as torch's nested path does in eval mode)."""
import copy
import math

from ... import _C
from ..._argcheck import check_count
from .. import functional as F
from .. import init
from .attention import MultiheadAttention
from .container import ModuleList
from .linear import Linear
from .module import Module

__all__ = ['Transformer', 'TransformerEncoder', 'TransformerDecoder', 'TransformerEncoderLayer',
           'TransformerDecoderLayer']


def _activation(activation):
    """'relu' / 'gelu' -> F.relu / F.gelu; a callable stays."""
    if not isinstance(activation, str):
        return activation
    if activation == 'relu':
        return F.relu
    if activation == 'gelu':
        return F.gelu
    raise RuntimeError(f'activation should be relu/gelu, not {activation}')


def _check_padding_mask(mask):
    if mask is not None and mask.dtype != _C.bool and not mask.is_floating_point():
        raise AssertionError('only bool and floating types of key_padding_mask are supported')


def _clones(module, n):
    check_count('num_layers', n)
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class _Sublayers(Module):
    """What both layer kinds share: the feed-forward block, norms and dropouts."""

    def _init_common(self, d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, nnorms,
                     factory_kwargs):
        from .dropout import Dropout  # the dropout and norm families, resolved when a layer is built
        from .normalization import LayerNorm
        self.linear1 = Linear(d_model, dim_feedforward, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **factory_kwargs)
        self.norm_first = norm_first
        for i in range(1, nnorms + 1):
            setattr(self, f'norm{i}', LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs))
        for i in range(1, nnorms + 1):
            setattr(self, f'dropout{i}', Dropout(dropout))
        self.activation = _activation(activation)

    def _ff_block(self, x, dropout):
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_Sublayers):
    """Self-attention then a feed-forward network, each with a residual connection and
    LayerNorm (after the sum; before the block with norm_first)."""

    __constants__ = ['batch_first', 'norm_first']

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu', layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            **factory_kwargs)
        self._init_common(d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, 2,
                          factory_kwargs)
        self.activation_relu_or_gelu = 1 if self.activation is F.relu else 2 if self.activation is F.gelu else 0

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x, self.dropout2))

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)


class TransformerDecoderLayer(_Sublayers):
    """Self-attention, attention over the encoder's memory, then a feed-forward network,
    each with a residual connection and LayerNorm (before the block with norm_first)."""

    __constants__ = ['batch_first', 'norm_first']

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu', layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 **factory_kwargs)
        self._init_common(d_model, dim_feedforward, dropout, activation, layer_norm_eps, norm_first, 3,
                          factory_kwargs)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x, self.dropout3))

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer, then `norm` (if given)."""

    __constants__ = ['norm']

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor  # accepted; Ember has no nested tensors
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return self.norm(output) if self.norm is not None else output


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer, then `norm` (if given)."""

    __constants__ = ['norm']

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        return self.norm(output) if self.norm is not None else output


class Transformer(Module):
    """Encoder (num_encoder_layers layers + LayerNorm) and decoder (num_decoder_layers + LayerNorm);
    every parameter of more than one dim re-initialised with xavier_uniform_, as PyTorch."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation='relu', custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        from .normalization import LayerNorm
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **factory_kwargs),
                                              num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **factory_kwargs),
                                              num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, **factory_kwargs))
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None):
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError('the batch number of src and tgt must be equal')
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError('the feature number of src and tgt must be equal to d_model')
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device='cpu'):
        """(sz, sz) float mask: 0 on and below the diagonal, -inf above (position i sees j <= i)."""
        return _C.triu(_C.full((sz, sz), -math.inf, device=device), diagonal=1)
