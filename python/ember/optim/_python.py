"""Optimizers whose update is written with Ember ops in Python (ASGD, Rprop,
SparseAdam): rarely used ones, whose per-parameter loops are not the hot path
of a training step, so a fused C step (optim/_fused.py) would not pay for its
code. Constructors, defaults, state names and update order as PyTorch 1.13's
single-tensor path, so that the steps agree with it to rounding."""
import math

import ember
from .optimizer import Optimizer

__all__ = ['ASGD', 'Rprop', 'SparseAdam']


class _PythonOptimizer(Optimizer):
    """step(): the closure, then _update(group, params) over each group's
    parameters that have a gradient, under no_grad."""

    def step(self, closure=None):
        return self._grouped_step(closure, self._update)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault('foreach', None)
            group.setdefault('maximize', False)


class ASGD(_PythonOptimizer):
    """Averaged SGD: SGD with a decaying step size eta and a running average
    of the iterates in state['ax'] (averaging starts after t0 steps)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f'Invalid learning rate: {lr}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _update(self, group, params):
        lr, lambd, alpha, t0 = group['lr'], group['lambd'], group['alpha'], group['t0']
        for p in params:
            state = self.state[p]
            if not state:
                state['step'] = ember.tensor(0.)
                state['eta'] = ember.tensor(float(lr))
                state['mu'] = ember.tensor(1.)
                state['ax'] = ember.zeros_like(p)
            grad = -p.grad if group['maximize'] else p.grad
            state['step'] += 1
            step = state['step'].item()
            if group['weight_decay'] != 0:
                grad = grad.add(p, alpha=group['weight_decay'])
            eta = state['eta'].item()
            p.mul_(1 - lambd * eta)
            p.add_(grad, alpha=-eta)
            if state['mu'].item() != 1:
                state['ax'].add_(p.sub(state['ax']).mul(state['mu']))
            else:
                state['ax'].copy_(p)
            state['eta'].fill_(lr / math.pow(1 + lambd * lr * step, alpha))
            state['mu'].fill_(1 / max(1, step - t0))


class Rprop(_PythonOptimizer):
    """Resilient backpropagation: each element's step size grows by etaplus
    while its gradient keeps its sign and shrinks by etaminus when it flips
    (that step is then skipped); only the gradient's sign moves the parameter."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f'Invalid learning rate: {lr}')
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f'Invalid eta values: {etas[0]}, {etas[1]}')
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize))

    def _update(self, group, params):
        etaminus, etaplus = group['etas']
        step_min, step_max = group['step_sizes']
        for p in params:
            state = self.state[p]
            if not state:
                state['step'] = 0
                state['prev'] = ember.zeros_like(p)
                state['step_size'] = ember.full_like(p.grad, group['lr'])
            state['step'] += 1
            grad = -p.grad if group['maximize'] else p.grad
            sign = grad.mul(state['prev']).sign()
            flipped = sign < 0
            factor = sign.masked_fill(sign > 0, etaplus).masked_fill(flipped, etaminus).masked_fill(sign == 0, 1)
            state['step_size'].mul_(factor).clamp_(step_min, step_max)
            grad = grad.masked_fill(flipped, 0)
            p.addcmul_(grad.sign(), state['step_size'], value=-1)
            state['prev'].copy_(grad)


class SparseAdam(_PythonOptimizer):
    """Adam for sparse gradients. Ember has no sparse tensors, so no gradient
    it makes is sparse: step() refuses dense gradients as PyTorch does."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f'Invalid learning rate: {lr}')
        if not 0.0 < eps:
            raise ValueError(f'Invalid epsilon value: {eps}')
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f'Invalid beta parameter at index 0: {betas[0]}')
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f'Invalid beta parameter at index 1: {betas[1]}')
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _update(self, group, params):
        raise RuntimeError('SparseAdam does not support dense gradients, please consider Adam instead')
