"""torch.nn.functional's activations, dropout, embedding and distances.

Argument handling only: the math runs in Ember's C ops (include/ember/nnact.h
and the activation entries of the unary op table).
"""
import warnings

import ember
from ember import _C

_nn = _C._nn

__all__ = [
    'relu', 'relu_', 'relu6', 'elu', 'elu_', 'selu', 'selu_', 'celu', 'celu_', 'leaky_relu', 'leaky_relu_',
    'prelu', 'rrelu', 'rrelu_', 'glu', 'gelu', 'logsigmoid', 'hardshrink', 'tanhshrink', 'softsign', 'softplus',
    'softmin', 'softmax', 'log_softmax', 'gumbel_softmax', 'softshrink', 'tanh', 'sigmoid', 'hardsigmoid', 'silu',
    'mish', 'hardswish', 'hardtanh', 'hardtanh_', 'threshold', 'threshold_',
    'dropout', 'alpha_dropout', 'feature_alpha_dropout', 'dropout1d', 'dropout2d', 'dropout3d',
    'embedding', 'embedding_bag', 'cosine_similarity', 'pairwise_distance', 'pdist', 'normalize', 'one_hot',
]


# ---- activations ---------------------------------------------------------------
def _inplace_or(inplace, fn_, fn, input, *args):
    return fn_(input, *args) if inplace else fn(input, *args)


def relu(input, inplace=False):
    return _inplace_or(inplace, ember.relu_, ember.relu, input)


relu_ = ember.relu_


def relu6(input, inplace=False):
    return _inplace_or(inplace, _nn.relu6_, ember.relu6, input)


def elu(input, alpha=1.0, inplace=False):
    return _inplace_or(inplace, _nn.elu_, ember.elu, input, alpha)


elu_ = _nn.elu_


def selu(input, inplace=False):
    return _inplace_or(inplace, ember.selu_, ember.selu, input)


selu_ = ember.selu_


def celu(input, alpha=1.0, inplace=False):
    return _inplace_or(inplace, ember.celu_, ember.celu, input, alpha)


celu_ = ember.celu_


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _inplace_or(inplace, _nn.leaky_relu_, ember.leaky_relu, input, negative_slope)


leaky_relu_ = _nn.leaky_relu_


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _inplace_or(inplace, _nn.hardtanh_, ember.hardtanh, input, min_val, max_val)


hardtanh_ = _nn.hardtanh_


def threshold(input, threshold, value, inplace=False):
    return _inplace_or(inplace, ember.threshold_, ember.threshold, input, threshold, value)


threshold_ = ember.threshold_


def prelu(input, weight):
    return ember.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return _inplace_or(inplace, ember.rrelu_, ember.rrelu, input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return ember.rrelu_(input, lower, upper, training)


def glu(input, dim=-1):
    return _nn.glu(input, dim)


def gelu(input, approximate='none'):
    return ember.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    if input.is_complex():  # torch 1.13 has complex silu: x sigmoid(x), with its complex gradient
        out = input * ember.sigmoid(input)
        return input.copy_(out) if inplace else out
    return _inplace_or(inplace, _nn.silu_, ember.silu, input)


def mish(input, inplace=False):
    return _inplace_or(inplace, _nn.mish_, ember.mish, input)


def hardswish(input, inplace=False):
    return _inplace_or(inplace, _nn.hardswish_, ember.hardswish, input)


def hardsigmoid(input, inplace=False):
    return _inplace_or(inplace, _nn.hardsigmoid_, ember.hardsigmoid, input)


def sigmoid(input):
    warnings.warn("nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.")
    return input.sigmoid()


def tanh(input):
    warnings.warn("nn.functional.tanh is deprecated. Use torch.tanh instead.")
    return input.tanh()


def logsigmoid(input):
    return ember.logsigmoid(input)


def hardshrink(input, lambd=0.5):
    return ember.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    return _nn.softshrink(input, lambd)


def tanhshrink(input):
    return _nn.tanhshrink(input)


def softsign(input):
    return _nn.softsign(input)


def softplus(input, beta=1, threshold=20):
    return ember.softplus(input, beta, threshold)


# ---- softmax family ----------------------------------------------------------------
def _implicit_softmax_dim(name, ndim, stacklevel):
    """The dim torch picks when none is given (0 for 0-, 1- and 3-d inputs, else 1), with its warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim('softmax', input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)  # a method call, as PyTorch's (whose errors it then shares)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim('softmin', input.dim(), _stacklevel)
    return ember.softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim('log_softmax', input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Softmax of (logits + Gumbel noise) / tau; `hard` gives one-hot samples with the soft gradient."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    gumbels = -ember.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = ember.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---- dropout --------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _inplace_or(inplace, ember.dropout_, ember.dropout, input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _inplace_or(inplace, ember.alpha_dropout_, ember.alpha_dropout, input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _inplace_or(inplace, ember.feature_alpha_dropout_, ember.feature_alpha_dropout, input, p, training)


def _channel_dropout(input, p, training, inplace, batched):
    """feature_dropout over whole channels; an unbatched input gets a batch dim of 1 for the call."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _inplace_or(inplace, ember.feature_dropout_, ember.feature_dropout, input, p, training)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. dropout1d zeroes "
                           "whole channels of inputs shaped (C, L) or (N, C, L).")
    return _channel_dropout(input, p, training, inplace, ndim == 3)


def _spatial_dropout_warning(name, ndim, expected):
    warnings.warn(f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in an error "
                  f"in a future release; use dropout for other inputs ({name} expects {expected} inputs).")


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        _spatial_dropout_warning('dropout2d', ndim, '3D or 4D')
    if ndim == 3:
        # as torch 1.13: a 3-d input is read as (N, C, L), one channel per (n, c)
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L); use dropout1d for that.")
    return _channel_dropout(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        _spatial_dropout_warning('dropout3d', ndim, '4D or 5D')
    return _channel_dropout(input, p, training, inplace, ndim == 5)


# ---- embedding ------------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported by Ember")
    if max_norm is not None:
        input = input.contiguous()
        with ember.no_grad():
            ember.embedding_renorm_(weight, input, max_norm, norm_type)
    return ember.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


# ---- distances -------------------------------------------------------------------------------
cosine_similarity = ember.cosine_similarity


_BAG_MODES = {'sum': 0, 'mean': 1, 'max': 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode='mean',
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if weight.dtype == ember.long and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = ember.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == 'max' and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == 'max' and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with ember.no_grad():
            ember.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != 'sum':
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.size(0)
    if include_last_offset and offsets.numel() and 0 <= int(offsets[-1]) < input.numel():
        # entries past the last offset belong to no bag (the C op wants offsets[-1] == N)
        end = int(offsets[-1])
        input = input[:end]
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights[:end]
    return ember.embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
                               per_sample_weights, include_last_offset, padding_idx)[0]


def pdist(input, p=2):
    return ember.pdist(input, p)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return ember.pairwise_distance(x1, x2, p, eps, keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return ember.div(input, denom, out=out)


def one_hot(tensor, num_classes=-1):
    return ember.one_hot(tensor, num_classes)
