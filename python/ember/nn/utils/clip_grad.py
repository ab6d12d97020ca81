"""Gradient clipping with PyTorch 1.13's API: by the total norm over all
gradients (one norm per gradient, then one norm of the stacked norms, and an
in-place scale of each gradient) or by value (an in-place clamp)."""
import math
import warnings

import ember

__all__ = ['clip_grad_norm_', 'clip_grad_norm', 'clip_grad_value_']


def _grads(parameters):
    if isinstance(parameters, ember.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients of `parameters` (a tensor or an iterable) in
    place so that their total norm_type-norm, taken as if they were one
    vector, is at most max_norm. Returns the total norm before clipping (a
    0-d tensor; tensor(0.) when no parameter has a gradient)."""
    grads = _grads(parameters)
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if not grads:
        return ember.tensor(0.)
    device = grads[0].device
    if norm_type == math.inf:
        norms = [g.detach().abs().max().to(device) for g in grads]
        total_norm = norms[0] if len(norms) == 1 else ember.max(ember.stack(norms))
    else:
        total_norm = ember.norm(ember.stack([ember.norm(g.detach(), norm_type).to(device) for g in grads]),
                                norm_type)
    if error_if_nonfinite and ember.logical_or(total_norm.isnan(), total_norm.isinf()):
        raise RuntimeError(f'The total norm of order {norm_type} for gradients from `parameters` is non-finite, '
                           'so it cannot be clipped. To disable this error and scale the gradients by the '
                           'non-finite norm anyway, set `error_if_nonfinite=False`')
    # scaling by min(coef, 1) unconditionally avoids reading the norm back to
    # the host (a device synchronization) just to decide
    clip_coef = ember.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.detach().mul_(clip_coef.to(g.device))
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2., error_if_nonfinite=False):
    """Deprecated spelling of clip_grad_norm_."""
    warnings.warn('torch.nn.utils.clip_grad_norm is now deprecated in favor of torch.nn.utils.clip_grad_norm_.',
                  stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient of `parameters` (a tensor or an iterable) in
    place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.detach().clamp_(min=-clip_value, max=clip_value)
