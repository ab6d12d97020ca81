"""The optimizers whose update runs in C: one call per parameter group
updates every parameter (include/ember/optim.h). Each class gives PyTorch
1.13's constructor, defaults and state names; _FusedOptimizer.step gathers
the group's tensors and hands them to C."""
import ember
from .optimizer import Optimizer, required

__all__ = ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adadelta', 'Adamax', 'NAdam', 'RAdam']

_step_in_c = ember._C._nn._optimizer_step


class _FusedOptimizer(Optimizer):
    # the C state slots, by PyTorch's state names (None: slot unused)
    _slots = (None, None, None)
    _tensor_step = True   # state['step'] is a 0-d float tensor the C step increments
    _scalar = None        # (name, initial value) of a 0-d per-parameter scalar (NAdam)

    def __init__(self, params, defaults):
        ember._C._nn._optimizer_check(type(self).__name__, {k: v for k, v in defaults.items() if v is not required})
        super().__init__(params, defaults)

    def _uses_slot(self, group, k):
        return self._slots[k] is not None

    def _init_state(self, p, state, group):
        state['step'] = ember.tensor(0.) if self._tensor_step else 0
        if self._scalar:
            state[self._scalar[0]] = ember.tensor(self._scalar[1])
        for k, name in enumerate(self._slots):
            if name is not None and self._uses_slot(group, k):
                state[name] = ember.zeros_like(p)

    def _options(self, group):
        return group

    def step(self, closure=None):
        """One update of every parameter that has a gradient; `closure`
        (re-evaluating the model, returning the loss) is called first."""
        return self._grouped_step(closure, self._step_group)

    def _step_group(self, group, params):
        states = [self.state[p] for p in params]
        for p, state in zip(params, states):
            if not state:
                self._init_state(p, state, group)
        slot_lists = tuple([s[name] for s in states] if name is not None and self._uses_slot(group, k) else None
                           for k, name in enumerate(self._slots))
        if self._tensor_step:
            steps = [s['step'] for s in states]
        else:
            steps = None
            for s in states:
                s['step'] += 1
        scalars = [s[self._scalar[0]] for s in states] if self._scalar else None
        _step_in_c(type(self).__name__, self._options(group), params, [p.grad for p in params], slot_lists,
                   steps, scalars)


class SGD(_FusedOptimizer):
    """Stochastic gradient descent, with momentum (optionally Nesterov),
    dampening, weight decay and maximize as PyTorch 1.13's SGD."""
    _slots = ('momentum_buffer', None, None)
    _tensor_step = False

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault('nesterov', False)
            group.setdefault('maximize', False)

    def _step_group(self, group, params):
        # PyTorch's state is only the momentum buffer (None without momentum);
        # a new buffer takes the first update as it is (PyTorch's clone).
        grads = [p.grad for p in params]
        if group['momentum'] == 0:
            _step_in_c('SGD', group, params, grads, (None, None, None), None, None)
            for p in params:
                self.state[p]['momentum_buffer'] = None
            return
        fresh = [self.state[p].get('momentum_buffer') is None for p in params]
        for first in (True, False):
            idx = [i for i in range(len(params)) if fresh[i] == first]
            if not idx:
                continue
            if first:
                for i in idx:
                    self.state[params[i]]['momentum_buffer'] = ember.empty_like(params[i])
            bufs = [self.state[params[i]]['momentum_buffer'] for i in idx]
            _step_in_c('SGD', dict(group, first_step=first), [params[i] for i in idx], [grads[i] for i in idx],
                       (bufs, None, None), None, None)


class Adam(_FusedOptimizer):
    """Adam (Kingma & Ba), with amsgrad, L2 weight decay and maximize."""
    _slots = ('exp_avg', 'exp_avg_sq', 'max_exp_avg_sq')

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused))

    def _uses_slot(self, group, k):
        return k < 2 or group['amsgrad']


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False):
        _FusedOptimizer.__init__(self, params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                                    amsgrad=amsgrad, foreach=foreach, maximize=maximize,
                                                    capturable=capturable))


class RMSprop(_FusedOptimizer):
    """RMSprop (Hinton), optionally centered and with momentum."""
    _slots = ('square_avg', 'momentum_buffer', 'grad_avg')
    _tensor_step = False

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 foreach=None, maximize=False, differentiable=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _uses_slot(self, group, k):
        return k == 0 or (k == 1 and group['momentum'] > 0) or (k == 2 and group['centered'])


class Adagrad(_FusedOptimizer):
    """Adagrad (Duchi et al.); its state starts at construction, as PyTorch's."""
    _slots = ('sum', None, None)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False):
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f'Invalid initial_accumulator_value value: {initial_accumulator_value}')
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize))
        for group in self.param_groups:
            for p in group['params']:
                self._init_state(p, self.state[p], group)

    def _init_state(self, p, state, group):
        state['step'] = ember.tensor(0.)
        state['sum'] = ember.full_like(p, group['initial_accumulator_value'])

    def share_memory(self):
        for group in self.param_groups:
            for p in group['params']:
                self.state[p]['sum'].share_memory_()


class Adadelta(_FusedOptimizer):
    """Adadelta (Zeiler)."""
    _slots = ('square_avg', 'acc_delta', None)
    _tensor_step = False

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, maximize=False):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach))


class Adamax(_FusedOptimizer):
    """Adamax: Adam with the infinity norm."""
    _slots = ('exp_avg', 'exp_inf', None)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))


class NAdam(_FusedOptimizer):
    """Adam with Nesterov momentum (Dozat), with momentum decay."""
    _slots = ('exp_avg', 'exp_avg_sq', None)
    _scalar = ('mu_product', 1.0)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 foreach=None):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, foreach=foreach))


class RAdam(_FusedOptimizer):
    """Rectified Adam (Liu et al.)."""
    _slots = ('exp_avg', 'exp_avg_sq', None)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach))
