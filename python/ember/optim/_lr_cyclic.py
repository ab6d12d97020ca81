"""The schedulers of ember.optim.lr_scheduler that cycle (warm restarts,
CyclicLR, OneCycleLR, the last two also cycling momentum) or react to a
metric (ReduceLROnPlateau), with PyTorch 1.13's arithmetic and state."""
import math
import warnings

from .lr_scheduler import EPOCH_DEPRECATION_WARNING, LRScheduler, _check_optimizer

__all__ = ['CosineAnnealingWarmRestarts', 'CyclicLR', 'OneCycleLR', 'ReduceLROnPlateau']


def _per_group(name, optimizer, value):
    """`value` as one entry per param group: a list or tuple of the right
    length as given, a scalar repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f'expected {len(optimizer.param_groups)} values for {name}, got {len(value)}')
        return value
    return [value] * len(optimizer.param_groups)


def _epoch_string(epoch):
    return ('%.2f' if isinstance(epoch, float) else '%.5d') % epoch


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing from initial_lr to eta_min over T_i epochs, then
    a restart with T_i *= T_mult. step(epoch) accepts fractional epochs
    (e.g. epoch + batch / batches) and may jump anywhere."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0, last_epoch=-1, verbose=False):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f'Expected positive integer T_0, but got {T_0}')
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f'Expected integer T_mult >= 1, but got {T_mult}')
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        self._warn_if_called_outside_step()
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advances one epoch, or goes to `epoch` (any float >= 0). Unlike the
        other schedulers this never warns about the call order."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f'Expected non-negative epoch, but got {epoch}')
        elif epoch < self.T_0:
            self.T_i = self.T_0
            self.T_cur = epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            # restarts so far: T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch
            n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._apply_lrs(values, epoch)


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith 2017): lr goes from base_lr up to max_lr
    in step_size_up steps and back in step_size_down, the amplitude scaled
    by mode ('triangular', 'triangular2', 'exp_range') or scale_fn; momentum
    cycles the other way between max_momentum and base_momentum."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode='triangular',
                 gamma=1., scale_fn=None, scale_mode='cycle', cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group('base_lr', optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group['lr'] = lr
        self.max_lrs = _per_group('max_lr', optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ('triangular', 'triangular2', 'exp_range') and scale_fn is None:
            raise ValueError('mode is invalid and scale_fn is None')
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        if scale_fn is None:
            self.scale_mode = 'iterations' if mode == 'exp_range' else 'cycle'
        else:
            self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if 'momentum' not in optimizer.defaults:
                raise ValueError('optimizer must support momentum with `cycle_momentum` option enabled')
            base_momentums = _per_group('base_momentum', optimizer, base_momentum)
            if last_epoch == -1:
                for momentum, group in zip(base_momentums, optimizer.param_groups):
                    group['momentum'] = momentum
            self.base_momentums = [group['momentum'] for group in optimizer.param_groups]
            self.max_momentums = _per_group('max_momentum', optimizer, max_momentum)
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        """The amplitude scale at cycle number (or iteration) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == 'triangular':
            return 1.
        if self.mode == 'triangular2':
            return 1 / (2. ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        """The rates at batch `last_epoch`; also sets each group's momentum
        when cycle_momentum is on."""
        self._warn_if_called_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1. + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == 'cycle' else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base_m, max_m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                group['momentum'] = max_m - (max_m - base_m) * scale_factor * scale
        return lrs


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): lr anneals from max_lr/div_factor up
    to max_lr over pct_start of total_steps, then down to
    initial_lr/final_div_factor (three_phase: back to initial_lr first);
    momentum (or Adam's beta1) cycles the other way. Not chainable."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy='cos', cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25., final_div_factor=1e4, three_phase=False, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is None and epochs is None and steps_per_epoch is None:
            raise ValueError('You must define either total_steps OR (epochs AND steps_per_epoch)')
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f'Expected positive integer total_steps, but got {total_steps}')
            self.total_steps = total_steps
        else:
            if epochs <= 0 or not isinstance(epochs, int):
                raise ValueError(f'Expected positive integer epochs, but got {epochs}')
            if steps_per_epoch <= 0 or not isinstance(steps_per_epoch, int):
                raise ValueError(f'Expected positive integer steps_per_epoch, but got {steps_per_epoch}')
            self.total_steps = epochs * steps_per_epoch
        self._schedule_phases = self._phases(pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f'Expected float between 0 and 1 pct_start, but got {pct_start}')
        if anneal_strategy not in ('cos', 'linear'):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        max_lrs = _per_group('max_lr', optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max_lr in zip(optimizer.param_groups, max_lrs):
                group['initial_lr'] = group_max_lr / div_factor
                group['max_lr'] = group_max_lr
                group['min_lr'] = group['initial_lr'] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if 'momentum' not in optimizer.defaults and 'betas' not in optimizer.defaults:
                raise ValueError('optimizer must support momentum with `cycle_momentum` option enabled')
            self.use_beta1 = 'betas' in optimizer.defaults
            max_momentums = _per_group('max_momentum', optimizer, max_momentum)
            base_momentums = _per_group('base_momentum', optimizer, base_momentum)
            if last_epoch == -1:
                for group, max_m, base_m in zip(optimizer.param_groups, max_momentums, base_momentums):
                    self._set_momentum(group, max_m)
                    group['max_momentum'] = max_m
                    group['base_momentum'] = base_m
        super().__init__(optimizer, last_epoch, verbose)

    def _phases(self, pct_start, three_phase):
        """Each phase: the step it ends at and the group keys of its start and
        end rates and momenta."""
        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return dict(end_step=end_step, start_lr=start_lr, end_lr=end_lr, start_momentum=start_momentum,
                        end_momentum=end_momentum)
        warmup = phase(float(pct_start * self.total_steps) - 1, 'initial_lr', 'max_lr', 'max_momentum',
                       'base_momentum')
        last = self.total_steps - 1
        if three_phase:
            return [warmup,
                    phase(float(2 * pct_start * self.total_steps) - 2, 'max_lr', 'initial_lr', 'base_momentum',
                          'max_momentum'),
                    phase(last, 'initial_lr', 'min_lr', 'max_momentum', 'max_momentum')]
        return [warmup, phase(last, 'max_lr', 'min_lr', 'base_momentum', 'max_momentum')]

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group['betas'] = (momentum, *group['betas'][1:])
        else:
            group['momentum'] = momentum

    def _anneal(self, start, end, pct):
        """From `start` (pct 0) to `end` (pct 1), by a half cosine or a line."""
        if self.anneal_strategy == 'cos':
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        """The rates at batch `last_epoch`; also sets each group's momentum
        (or beta1) when cycle_momentum is on."""
        self._warn_if_called_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f'Tried to step {step_num + 1} times. The specified number of total steps is '
                             f'{self.total_steps}')
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase['end_step']
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase['start_lr']], group[phase['end_lr']], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[phase['start_momentum']],
                                                               group[phase['end_momentum']], pct))
                    break
                start_step = end_step
        return lrs


class ReduceLROnPlateau:
    """Multiplies the rates by `factor` once a metric passed to step() has not
    improved (by more than threshold, relative or absolute) for more than
    `patience` steps; then waits `cooldown` steps before counting again."""

    def __init__(self, optimizer, mode='min', factor=0.1, patience=10, threshold=1e-4, threshold_mode='rel',
                 cooldown=0, min_lr=0, eps=1e-8, verbose=False):
        if factor >= 1.0:
            raise ValueError('Factor should be < 1.0.')
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f'expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}')
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.best = None
        self.num_bad_epochs = None
        self.mode_worse = None
        self.eps = eps
        self.last_epoch = 0
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Records `metrics` (a number or 0-d tensor) for the next epoch and
        reduces the rates if it has plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group['lr'] for group in self.optimizer.param_groups]

    def _reduce_lr(self, epoch):
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group['lr'])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group['lr'] = new_lr
                if self.verbose:
                    print(f'Epoch {_epoch_string(epoch)}: reducing learning rate of group {i} to {new_lr:.4e}.')

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def is_better(self, a, best):
        if self.mode == 'min' and self.threshold_mode == 'rel':
            return a < best * (1. - self.threshold)
        if self.mode == 'min':
            return a < best - self.threshold
        if self.threshold_mode == 'rel':
            return a > best * (self.threshold + 1.)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {'min', 'max'}:
            raise ValueError('mode ' + mode + ' is unknown!')
        if threshold_mode not in {'rel', 'abs'}:
            raise ValueError('threshold mode ' + threshold_mode + ' is unknown!')
        self.mode_worse = math.inf if mode == 'min' else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def state_dict(self):
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != 'optimizer'}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)
