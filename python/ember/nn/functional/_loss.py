"""Loss functions of ember.nn.functional (torch.nn.functional's, PyTorch 1.13
signatures and checks). The fused losses run in C (ember._C._nn and the
top-level ops); the others are composites of table ops, differentiated
through them."""
import math
import warnings

import ember
from ember._C import _nn
from ember._argcheck import accepts

__all__ = [
    'binary_cross_entropy', 'binary_cross_entropy_with_logits', 'cosine_embedding_loss', 'cross_entropy',
    'ctc_loss', 'gaussian_nll_loss', 'hinge_embedding_loss', 'huber_loss', 'kl_div', 'l1_loss',
    'margin_ranking_loss', 'mse_loss', 'multi_margin_loss', 'multilabel_margin_loss',
    'multilabel_soft_margin_loss', 'nll_loss', 'poisson_nll_loss', 'smooth_l1_loss', 'soft_margin_loss',
    'triplet_margin_loss', 'triplet_margin_with_distance_loss',
]

_REDUCTIONS = {'none': 0, 'mean': 1, 'sum': 2}


def _reduction_enum(reduction):
    if reduction == 'elementwise_mean':
        warnings.warn("reduction='elementwise_mean' is deprecated, please use reduction='mean' instead.")
        return 1
    if reduction not in _REDUCTIONS:
        raise ValueError(f'{reduction} is not a valid value for reduction')
    return _REDUCTIONS[reduction]


def _legacy_reduction(size_average, reduce, emit_warning=True):
    """The reduction the deprecated size_average/reduce pair asks for."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = 'mean' if size_average and reduce else 'sum' if reduce else 'none'
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.")
    return ret


def _resolve(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    return reduction


def _reduce(loss, reduction):
    """A composite loss's elementwise values reduced as asked."""
    if reduction == 'mean':
        return loss.mean()
    if reduction == 'sum':
        return loss.sum()
    if reduction == 'none':
        return loss
    raise ValueError(f'{reduction} is not a valid value for reduction')


def _warn_size(input, target, stacklevel=3):
    if target.size() != input.size():
        warnings.warn(f'Using a target size ({target.size()}) that is different to the input size ({input.size()}). '
                      'This will likely lead to incorrect results due to broadcasting. '
                      'Please ensure they have the same size.', stacklevel=stacklevel)


# ---- regression -----------------------------------------------------------------------
def l1_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    _warn_size(input, target)
    return _nn.l1_loss(input, target, _reduction_enum(_resolve(size_average, reduce, reduction)))


def mse_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    _warn_size(input, target)
    return _nn.mse_loss(input, target, _reduction_enum(_resolve(size_average, reduce, reduction)))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0):
    _warn_size(input, target)
    return _nn.smooth_l1_loss(input, target, _reduction_enum(_resolve(size_average, reduce, reduction)), beta)


def huber_loss(input, target, reduction='mean', delta=1.0):
    _warn_size(input, target)
    return _nn.huber_loss(input, target, _reduction_enum(reduction), delta)


# ---- binary cross entropy -----------------------------------------------------------------
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction='mean'):
    reduction_enum = _reduction_enum(_resolve(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(f'Using a target size ({target.size()}) that is different to the input size '
                         f'({input.size()}) is deprecated. Please ensure they have the same size.')
    return _nn.binary_cross_entropy(input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction='mean', pos_weight=None):
    reduction_enum = _reduction_enum(_resolve(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(f'Target size ({target.size()}) must be the same as input size ({input.size()})')
    return ember.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)


# ---- class losses -------------------------------------------------------------------------------
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    return _nn.nll_loss_nd(input, target, weight, _reduction_enum(reduction), ignore_index)


def _class_dim(input):
    return 0 if input.dim() == 1 else 1


def _weight_view(weight, input):
    """weight (C) shaped to broadcast along the input's class dim."""
    shape = [1] * input.dim()
    shape[_class_dim(input)] = weight.size(0)
    return weight.view(shape)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    if input.size() != target.size():
        raise RuntimeError(f'Expected target size {list(input.size())}, got {list(target.size())}')
    cdim = _class_dim(input)
    n_classes = input.size(cdim)
    logp = ember.log_softmax(input, cdim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    if weight is not None:
        logp = logp * _weight_view(weight, input)
    prod = logp * target
    if reduction == 'mean':
        return -prod.sum() / (input.numel() / n_classes) if input.numel() else -prod.sum() / 0.0
    if reduction == 'sum':
        return -prod.sum()
    return -prod.sum(cdim)


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing):
    cdim = _class_dim(input)
    n_classes = input.size(cdim)
    logp = ember.log_softmax(input, cdim)
    nll = _nn.nll_loss_nd(logp, target, weight, _reduction_enum(reduction), ignore_index)
    ignored = target == ignore_index
    smooth = -(logp * _weight_view(weight, input)).sum(cdim) if weight is not None else -logp.sum(cdim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == 'mean':
        if weight is not None:
            ret = smooth.sum() / weight.gather(0, target.masked_select(~ignored).flatten()).sum()
        else:
            ret = smooth.sum() / (~ignored).sum()
    elif reduction == 'sum':
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction='mean', label_smoothing=0.0):
    reduction = _resolve(size_average, reduce, reduction)
    reduction_enum = _reduction_enum(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f'label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}')
    if target.dtype.is_floating_point:
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 0:
        return _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing)
    return _nn.cross_entropy_loss(input, target, weight, reduction_enum, ignore_index)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    if p != 1 and p != 2:
        raise ValueError('only p == 1 and p == 2 supported')
    if weight is not None and weight.dim() != 1:
        raise ValueError('weight must be one-dimensional')
    x = input if input.dim() > 0 else input.reshape(1)
    x = x if x.dim() == 2 else x.unsqueeze(0)
    t = target.reshape(-1, 1)
    picked = x.gather(1, t)
    terms = (margin - picked + x).clamp_min(0)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight.gather(0, t.reshape(-1)).unsqueeze(1)
    terms = terms.scatter(1, t, 0.0)
    loss = terms.sum(1) / x.size(1)
    if input.dim() < 2 and reduction == 'none':
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


# ---- composites ------------------------------------------------------------------------------------
def kl_div(input, target, size_average=None, reduce=None, reduction='mean', log_target=False):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == 'mean':
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    if reduction != 'batchmean':
        _reduction_enum(reduction)
    if log_target:
        loss = ember.exp(target) * (target - input)
    else:
        loss = ember.xlogy(target, target) - target * input
    if reduction == 'batchmean':
        loss = loss.sum()
        return loss / input.size(0) if input.dim() != 0 else loss
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    if reduction not in ('none', 'mean', 'sum'):
        raise ValueError(reduction + ' is not valid')
    if log_input:
        loss = ember.exp(input) - target * input
    else:
        loss = input - target * ember.log(input + eps)
    if full:
        stirling = target * ember.log(target) - target + 0.5 * ember.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean'):
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = ember.unsqueeze(var, -1)
        elif input.size()[:-1] == var.size()[:-1] and var.size(-1) == 1:
            pass
        else:
            raise ValueError('var is of incorrect size')
    if reduction not in ('none', 'mean', 'sum'):
        raise ValueError(reduction + ' is not valid')
    if bool(ember.any(var < 0)):
        raise ValueError('var has negative entry/entries')
    var = var.clone()
    with ember.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (ember.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    if input1.dim() != input2.dim():
        raise RuntimeError(f'cosine_embedding_loss : All input tensors should have same dimension but got sizes: '
                           f'input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ')
    eps = 1e-12
    dim = input1.dim() - 1
    prod = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = prod / ember.sqrt(mag)
    zeros = ember.zeros_like(cos)
    loss = ember.where(target == 1, 1 - cos, zeros) + ember.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f'margin_ranking_loss : All input tensors should have same dimension but got sizes: '
                           f'input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ')
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    zeros = ember.zeros_like(input)
    loss = (ember.where(target != 1, (margin - input).clamp_min(0), zeros)
            + ember.where(target != -1, input, zeros))
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    loss = -(target * ember.logsigmoid(input) + (1 - target) * ember.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    if target.requires_grad and ember.is_grad_enabled():  # PyTorch's kernel does not differentiate the target
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True.")
    return _reduce(ember.log1p(ember.exp(-target * input)), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    x = input.reshape(1, -1) if input.dim() < 2 else input
    t = target.reshape(1, -1) if target.dim() < 2 else target
    if x.shape != t.shape:
        raise RuntimeError(f'inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}')
    n, c = x.shape
    # the targets of each row are its labels up to the first -1
    valid = ember.cumprod((t >= 0).long(), 1).bool()
    idx = t.clamp_min(0)
    is_target = ((idx.unsqueeze(2) == ember.arange(c)) & valid.unsqueeze(2)).any(1)  # (n, class)
    picked = x.gather(1, idx)  # (n, c): x at each target slot
    terms = (1 - picked.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # (n, slot, class)
    mask = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (terms * mask).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(()) if input.dim() == 1 else loss.reshape(input.shape)
    return _reduce(loss, reduction)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    dim = -1 if max(x1.dim(), x2.dim()) > 0 else 0
    return ember.norm(x1 - x2 + eps, p, dim, keepdim)


@accepts(anchor='Tensor', positive='Tensor', negative='Tensor')
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction='mean'):
    reduction = _resolve(size_average, reduce, reduction)
    _reduction_enum(reduction)
    if not (anchor.dim() == positive.dim() == negative.dim()):
        raise RuntimeError(f'All inputs should have same dimension but got {anchor.dim()}D, {positive.dim()}D and '
                           f'{negative.dim()}D inputs.')
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ember.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction='mean'):
    if reduction not in ('none', 'mean', 'sum'):
        raise ValueError(f'{reduction} is not a valid value for reduction')
    if not (anchor.dim() == positive.dim() == negative.dim()):
        raise RuntimeError(f'The anchor, positive, and negative tensors are expected to have the same number of '
                           f'dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative '
                           f'{negative.dim()}D inputs')
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ember.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', zero_infinity=False):
    return ember.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction_enum(reduction),
                          zero_infinity)
