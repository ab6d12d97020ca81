"""Learning-rate schedulers with PyTorch 1.13's API and arithmetic: each one
rewrites the optimizer's param_groups' 'lr' (and, for the cyclic ones,
'momentum' or 'betas') when stepped. Pure Python: a step touches a handful
of floats, never a tensor. The cyclic and plateau schedulers live in
_lr_cyclic.py and are re-exported here."""
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from functools import wraps

from .optimizer import Optimizer

__all__ = ['LambdaLR', 'MultiplicativeLR', 'StepLR', 'MultiStepLR', 'ConstantLR', 'LinearLR',
           'ExponentialLR', 'SequentialLR', 'CosineAnnealingLR', 'ChainedScheduler', 'ReduceLROnPlateau',
           'CyclicLR', 'CosineAnnealingWarmRestarts', 'OneCycleLR', 'PolynomialLR']

inf = math.inf  # torch's lr_scheduler module exports it (ReduceLROnPlateau's worst value)

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_ORDER_HELP = 'See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate'


def _count_calls(method):
    """optimizer.step wrapped to count its calls in optimizer._step_count, so
    that a scheduler stepped first can warn. Holds the optimizer weakly (the
    wrapper is stored on it) and wraps only once."""
    if getattr(method, '_with_counter', False):
        return method
    instance_ref = weakref.ref(method.__self__)
    func = method.__func__

    @wraps(func)
    def counted_step(*args, **kwargs):
        instance = instance_ref()
        instance._step_count += 1
        return func(instance, *args, **kwargs)

    counted_step._with_counter = True
    return counted_step


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f'{type(optimizer).__name__} is not an Optimizer')


class LRScheduler:
    """Base of the epoch-indexed schedulers. `last_epoch` counts steps (-1:
    fresh start, which records each group's 'initial_lr'); `get_lr` gives
    the rates for `last_epoch`; `step()` advances and applies them. The
    constructor takes the first step, so 'lr' is the epoch-0 value at once."""

    def __init__(self, optimizer, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault('initial_lr', group['lr'])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if 'initial_lr' not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group['initial_lr'] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.optimizer.step = _count_calls(self.optimizer.step)
        self.verbose = verbose
        self._initial_step()

    def _initial_step(self):
        """Resets both step counters and takes the epoch-0 step."""
        self.optimizer._step_count = 0
        self._step_count = 0
        self.step()

    def state_dict(self):
        """Every attribute but the optimizer (save the optimizer's own
        state_dict beside it)."""
        return {key: value for key, value in self.__dict__.items() if key != 'optimizer'}

    def load_state_dict(self, state_dict):
        """Restores attributes saved by state_dict()."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last step set, one per param group."""
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def _warn_if_called_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn('To get the last learning rate computed by the scheduler, please use `get_last_lr()`.',
                          UserWarning)

    def _group_lrs(self):
        return [group['lr'] for group in self.optimizer.param_groups]

    def print_lr(self, is_verbose, group, lr, epoch=None):
        """Prints a group's new rate when `is_verbose`."""
        if not is_verbose:
            return
        if epoch is None:
            print(f'Adjusting learning rate of group {group} to {lr:.4e}.')
        else:
            epoch_str = ('%.2f' if isinstance(epoch, float) else '%.5d') % epoch
            print(f'Epoch {epoch_str}: adjusting learning rate of group {group} to {lr:.4e}.')

    def _warn_on_call_order(self):
        if self._step_count != 1:
            return
        if not hasattr(self.optimizer.step, '_with_counter'):
            warnings.warn('Seems like `optimizer.step()` has been overridden after learning rate scheduler '
                          'initialization. Please, make sure to call `optimizer.step()` before '
                          '`lr_scheduler.step()`. ' + _ORDER_HELP, UserWarning)
        elif self.optimizer._step_count < 1:
            warnings.warn('Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and '
                          'later, you should call them in the opposite order: `optimizer.step()` before '
                          '`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first '
                          'value of the learning rate schedule. ' + _ORDER_HELP, UserWarning)

    def _compute_lrs(self, epoch):
        """get_lr for the next epoch, or (deprecated) for `epoch` through the
        closed form where the scheduler has one."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                return self.get_lr()
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
            self.last_epoch = epoch
            if hasattr(self, '_get_closed_form_lr'):
                return self._get_closed_form_lr()
            return self.get_lr()
        finally:
            self._get_lr_called_within_step = False

    def _apply_lrs(self, values, epoch):
        for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, values)):
            group['lr'] = lr
            self.print_lr(self.verbose, i, lr, epoch)
        self._last_lr = self._group_lrs()

    def step(self, epoch=None):
        """Advances one epoch and sets the param groups' rates. Passing
        `epoch` is deprecated (it jumps there, by the closed form if any)."""
        self._warn_on_call_order()
        self._step_count += 1
        self._apply_lrs(self._compute_lrs(epoch), epoch)


_LRScheduler = LRScheduler


class _LambdaScheduler(LRScheduler):
    """Shared by LambdaLR and MultiplicativeLR: one function of the epoch per
    group; state_dict keeps the __dict__ of callable objects, not functions."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f'Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}')
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch, verbose)

    def state_dict(self):
        """Attributes but the optimizer; for each lambda, its __dict__ if it is
        a callable object, None if it is a plain function."""
        state = {key: value for key, value in self.__dict__.items() if key not in ('optimizer', 'lr_lambdas')}
        state['lr_lambdas'] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        """Restores attributes and the saved callable objects' __dict__ (the
        given dict is left as it was)."""
        self.__dict__.update({k: v for k, v in state_dict.items() if k != 'lr_lambdas'})
        for fn, saved in zip(self.lr_lambdas, state_dict['lr_lambdas']):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    """lr = initial_lr * lr_lambda(epoch), per group."""

    def get_lr(self):
        self._warn_if_called_outside_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """lr *= lr_lambda(epoch) at every step after the first, per group."""

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch > 0:
            return [group['lr'] * fn(self.last_epoch)
                    for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]
        return self._group_lrs()


class StepLR(LRScheduler):
    """lr *= gamma every `step_size` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr *= gamma at each milestone epoch (a milestone listed twice decays
    twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor for the first `total_iters` epochs, then
    initial_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose=False):
        if factor > 1.0 or factor < 0:
            raise ValueError('Constant multiplicative factor expected to be between 0 and 1.')
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._group_lrs()]
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return [lr * (1.0 / self.factor) for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on initial_lr moves linearly from start_factor to
    end_factor over `total_iters` epochs, then stays."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1,
                 verbose=False):
        if start_factor > 1.0 or start_factor < 0:
            raise ValueError('Starting multiplicative factor expected to be between 0 and 1.')
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError('Ending multiplicative factor expected to be between 0 and 1.')
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._group_lrs()]
        if self.last_epoch > self.total_iters:
            return self._group_lrs()
        delta = self.end_factor - self.start_factor
        ratio = 1. + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
        return [lr * ratio for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr *= gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power, reaching 0 at
    total_iters and staying there."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1, verbose=False):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return self._group_lrs()
        decay = ((1.0 - self.last_epoch / self.total_iters) /
                 (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * decay for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from initial_lr to eta_min over T_max epochs (and back
    up over the next T_max), in the recursive form: each step rescales the
    current lr, so changes made to it from outside carry through."""

    def __init__(self, optimizer, T_max, eta_min=0, last_epoch=-1, verbose=False):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        epoch, T_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if epoch == 0:
            return self._group_lrs()
        if self._step_count == 1 and epoch > 0:
            # resumed at last_epoch > 0: start from the closed form
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / T_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - T_max) % (2 * T_max) == 0:
            # leaving the minimum: the ratio below would divide by zero there
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / T_max)) / 2
                    for base_lr, lr in zip(self.base_lrs, self._group_lrs())]
        ratio = (1 + math.cos(math.pi * epoch / T_max)) / (1 + math.cos(math.pi * (epoch - 1) / T_max))
        return [ratio * (lr - eta_min) + eta_min for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class _SchedulerList(LRScheduler):
    """state_dict/load_state_dict for schedulers that drive others: the inner
    schedulers' states are saved nested, by position."""

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ('optimizer', '_schedulers')}
        state['_schedulers'] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        self.__dict__.update({k: v for k, v in state_dict.items() if k != '_schedulers'})
        for scheduler, saved in zip(self._schedulers, state_dict['_schedulers']):
            scheduler.load_state_dict(saved)


class SequentialLR(_SchedulerList):
    """Runs `schedulers[i]` between milestones[i-1] and milestones[i]; each
    one starts (at its epoch 0) when its milestone is reached."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):
        for i, scheduler in enumerate(schedulers):
            if scheduler.optimizer is not optimizer:
                raise ValueError('Sequential Schedulers expects all schedulers to belong to the same optimizer, but '
                                 f'got schedulers at index {i} to be different than the optimizer passed in.')
            if scheduler.optimizer is not schedulers[0].optimizer:
                raise ValueError('Sequential Schedulers expects all schedulers to belong to the same optimizer, but '
                                 f'got schedulers at index 0 and {i} to be different.')
        if len(milestones) != len(schedulers) - 1:
            raise ValueError('Sequential Schedulers expects number of schedulers provided to be one more than the '
                             f'number of milestone points, but got number of schedulers {len(schedulers)} and the '
                             f'number of milestones to be equal to {len(milestones)}')
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # each scheduler's constructor stepped the optimizer: undo, then let
        # only the first one take its initial step
        for group in optimizer.param_groups:
            group['lr'] = group['initial_lr']
        for scheduler in schedulers:
            scheduler.last_epoch -= 1
        schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_SchedulerList):
    """Steps every scheduler of the list, in order, at each step (their
    effects compose on the shared optimizer)."""

    def __init__(self, schedulers):
        for i in range(1, len(schedulers)):
            if schedulers[i].optimizer is not schedulers[0].optimizer:
                raise ValueError('ChainedScheduler expects all schedulers to belong to the same optimizer, but got '
                                 f'schedulers at index 0 and {i} to be different')
        self._schedulers = list(schedulers)
        self.optimizer = schedulers[0].optimizer
        self._last_lr = self._group_lrs()

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._group_lrs()


from ._lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, ReduceLROnPlateau  # noqa: E402
