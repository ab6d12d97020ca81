"""Optimizer: parameter groups, per-parameter state, state_dict round trips,
with PyTorch 1.13's API and checks. The update rules live in subclasses; the
fused ones (optim/_fused.py) run each group's step in one C call."""
from collections import defaultdict
from copy import deepcopy
from itertools import chain

import ember

__all__ = ['Optimizer', 'required']


class _RequiredParameter:
    """Marks a hyperparameter a param group must give (SGD's lr)."""

    def __repr__(self):
        return '<required parameter>'


required = _RequiredParameter()


class Optimizer:
    """Base class of all optimizers: holds `param_groups` (dicts with a
    'params' list and the hyperparameters) and `state` (per parameter)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, ember.Tensor):
            raise TypeError('params argument given to the optimizer should be an iterable of Tensors or dicts, '
                            f'but got {_typename(params)}')
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError('optimizer got an empty parameter list')
        if not isinstance(param_groups[0], dict):
            param_groups = [{'params': param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {'defaults': self.defaults, 'state': self.state, 'param_groups': self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        text = self.__class__.__name__ + ' ('
        for i, group in enumerate(self.param_groups):
            text += f'\nParameter Group {i}\n'
            text += ''.join(f'    {key}: {group[key]}\n' for key in sorted(group) if key != 'params')
        return text + ')'

    def add_param_group(self, param_group):
        """Adds a group of parameters (a dict with 'params' and optional
        hyperparameters; missing ones come from the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError('param group must be a dict')
        params = param_group['params']
        if isinstance(params, ember.Tensor):
            param_group['params'] = [params]
        elif isinstance(params, set):
            raise TypeError('optimizer parameters need to be organized in ordered collections, but the ordering of '
                            'tensors in sets will change between runs. Please use a list instead.')
        else:
            param_group['params'] = list(params)
        for param in param_group['params']:
            if not isinstance(param, ember.Tensor):
                raise TypeError('optimizer can only optimize Tensors, but one of the params is ' + _typename(param))
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter " + name)
            param_group.setdefault(name, default)
        if len(param_group['params']) != len(set(map(id, param_group['params']))):
            import warnings
            warnings.warn('optimizer contains a parameter group with duplicate parameters; in future, this will '
                          'cause an error; see github.com/pytorch/pytorch/issues/40967 for more information',
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(map(id, group['params']))
        if not seen.isdisjoint(map(id, param_group['params'])):
            raise ValueError('some parameters appear in more than one parameter group')
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=False):
        """Clears every parameter's gradient: zeros it in place, or drops it
        (set_to_none=True, PyTorch 1.13's default being False)."""
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    def _grouped_step(self, closure, update):
        """step()'s frame: `closure` (re-evaluating the model, returning the
        loss) under enable_grad, then update(group, params) for each group's
        parameters that have a gradient, under no_grad; returns the loss."""
        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()
        with ember.no_grad():
            for group in self.param_groups:
                params = [p for p in group['params'] if p.grad is not None]
                if params:
                    update(group, params)
        return loss

    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [...]}: parameters are
        named by their position over all groups, as PyTorch does."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != 'params'}
            for p in group['params']:
                index.setdefault(id(p), len(index))
            packed['params'] = [index[id(p)] for p in group['params']]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {'state': state, 'param_groups': groups}

    def load_state_dict(self, state_dict):
        """Loads a state_dict from state_dict() (of this or another run, or
        PyTorch's): state tensors are cast to each parameter's dtype and
        device, except step counts."""
        state_dict = deepcopy(state_dict)
        groups, saved_groups = self.param_groups, state_dict['param_groups']
        if len(groups) != len(saved_groups):
            raise ValueError('loaded state dict has a different number of parameter groups')
        if any(len(g['params']) != len(s['params']) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(s['params'] for s in saved_groups),
                          chain.from_iterable(g['params'] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict['state'].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: _cast_state(param, value, key) for key, value in v.items()}
            else:
                state[k] = v
        self.state = state
        self.param_groups = [dict(saved, params=group['params']) for group, saved in zip(groups, saved_groups)]


def _typename(obj):
    """PyTorch's typename: 'ember.FloatTensor' for a tensor, else module.qualname."""
    if isinstance(obj, ember.Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == 'builtins' else f'{cls.__module__}.{cls.__qualname__}'


def _cast_state(param, value, key):
    """A loaded state value in the parameter's dtype and device (step counts
    keep their own dtype)."""
    if not isinstance(value, ember.Tensor):
        return value
    if key == 'step':
        return value.to(device=param.device)
    if param.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    return value.to(device=param.device)
