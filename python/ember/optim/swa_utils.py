"""Stochastic Weight Averaging (torch.optim.swa_utils): a model that keeps a
running average of another's parameters, the SWA learning-rate schedule,
and the pass that recomputes BatchNorm statistics for the averaged weights."""
import itertools
import math
import warnings
from copy import deepcopy

import ember
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler

__all__ = ['AveragedModel', 'update_bn', 'SWALR']


def _mean_update(averaged, current, num_averaged):
    """The equal-weight running mean after num_averaged earlier models."""
    return averaged + (current - averaged) / (num_averaged + 1)


class AveragedModel(Module):
    """A deep copy of `model` (in self.module) whose parameters (and buffers,
    with use_buffers=True) update_parameters() folds into a running average
    avg_fn(averaged, current, n_averaged); n_averaged counts the updates."""

    def __init__(self, model, device=None, avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer('n_averaged', ember.tensor(0, dtype=ember.long, device=device))
        self.avg_fn = avg_fn if avg_fn is not None else _mean_update
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged(self, model):
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model):
        """Folds `model`'s current parameters into the average (the first
        call copies them)."""
        mine = self._averaged(self.module) if self.use_buffers else self.parameters()
        first = int(self.n_averaged) == 0
        for p_avg, p_model in zip(mine, self._averaged(model)):
            current = p_model.detach().to(p_avg.device)
            if first:
                p_avg.detach().copy_(current)
            else:
                p_avg.detach().copy_(self.avg_fn(p_avg.detach(), current, self.n_averaged.to(p_avg.device)))
        self.n_averaged += 1


def update_bn(loader, model, device=None):
    """One pass over `loader` (batches: tensors, or sequences whose first
    item is the input) in train mode, with every BatchNorm's running
    statistics reset and momentum None (a cumulative average), so that
    they describe the activations of `model`'s current (averaged) weights."""
    from ..nn.modules.batchnorm import _BatchNorm
    with ember.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.running_mean = ember.zeros_like(module.running_mean)
                module.running_var = ember.ones_like(module.running_var)
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
            module.num_batches_tracked *= 0
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its value to swa_lr over
    anneal_epochs steps ('cos' or 'linear'), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos', last_epoch=-1):
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(optimizer.param_groups):
                raise ValueError('swa_lr must have the same length as optimizer.param_groups: swa_lr has '
                                 f'{len(swa_lr)}, optimizer.param_groups has {len(optimizer.param_groups)}')
            swa_lrs = list(swa_lr)
        else:
            swa_lrs = [swa_lr] * len(optimizer.param_groups)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group['swa_lr'] = lr
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == 'cos' else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f'anneal_epochs must be equal or greater than 0, got {anneal_epochs}')
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    def _progress(self, step):
        return self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn('To get the last learning rate computed by the scheduler, please use `get_last_lr()`.',
                          UserWarning)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # the group's lr is the previous step's blend: recover the rate the
        # annealing started from, then blend it with swa_lr for this step
        prev_alpha, alpha = self._progress(step - 1), self._progress(step)
        lrs = []
        for group in self.optimizer.param_groups:
            swa = group['swa_lr']
            start = swa if prev_alpha == 1 else (group['lr'] - prev_alpha * swa) / (1 - prev_alpha)
            lrs.append(swa * alpha + start * (1 - alpha))
        return lrs
