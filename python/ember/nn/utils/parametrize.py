"""Parametrizations (torch.nn.utils.parametrize): a module's parameter or
buffer `name` becomes a computed value, parametrization(original), where
`original` is kept (the same Parameter object, so optimizers keep working)
in module.parametrizations[name].original. Reading module.<name> runs the
parametrizations in order; assigning to it stores right_inverse(value).

As in PyTorch, the module's class is replaced by a subclass
('Parametrized<Class>') holding one property per parametrized name."""
from contextlib import contextmanager

import ember
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ['cached', 'ParametrizationList', 'register_parametrization', 'is_parametrized',
           'remove_parametrizations', 'type_before_parametrizations', 'transfer_parametrizations_and_params']

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Inside the block, each parametrized tensor is computed once, on first
    read, and reused (one forward of a model that reads a weight often)."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _assign(dest, value):
    """dest takes value's contents in place (keeping the object: a Parameter
    an optimizer holds stays the one updated)."""
    with ember.no_grad():
        if dest.shape == value.shape and dest.dtype == value.dtype:
            dest.copy_(value)
        else:
            dest.set_(value)


def _right_inverse(modules, value):
    for module in reversed(list(modules)):
        if hasattr(module, 'right_inverse'):
            value = module.right_inverse(value)
    return value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the
    unparametrized value(s): `original` (or original0, original1, ... when
    the first right_inverse returns a sequence)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError('ParametrizationList requires one or more modules.')
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with ember.no_grad():
            new = original
            for module in reversed(list(self)):
                try:  # a right_inverse that cannot invert is taken for the identity here
                    new = module.right_inverse(new) if hasattr(module, 'right_inverse') else new
                except NotImplementedError:
                    pass
        self.is_tensor = isinstance(new, ember.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError('When `right_inverse` outputs one tensor, it may not change the dtype.\n'
                                 f'original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}')
            _assign(original, new)
            _register_parameter_or_buffer(self, 'original', original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, ember.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f'Got element {i} of the sequence with type {type(originali).__name__}.')
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f'original{i}', originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, ember.Tensor):
                raise ValueError('A parametrization must return a tensor. Got {}.'.format(type(z).__name__))
            if z.dtype != original_dtype:
                raise ValueError('Registering a parametrization may not change the dtype of the tensor, unless '
                                 '`unsafe` flag is enabled.\n'
                                 f'unparametrized dtype: {original_dtype}\nparametrized dtype: {z.dtype}')
            if z.shape != original_shape:
                raise ValueError('Registering a parametrization may not change the shape of the tensor, unless '
                                 '`unsafe` flag is enabled.\n'
                                 f'unparametrized shape: {original_shape}\nparametrized shape: {z.shape}')

    def right_inverse(self, value):
        """Stores the unparametrized value(s) that give `value`."""
        with ember.no_grad():
            value = _right_inverse(self, value)
            if self.is_tensor:
                if not isinstance(value, ember.Tensor):
                    raise ValueError(f'`right_inverse` should return a tensor. Got {type(value).__name__}')
                if value.dtype != self.original.dtype:
                    raise ValueError(f'The tensor returned by `right_inverse` has dtype {value.dtype} while '
                                     f'`original` has dtype {self.original.dtype}')
                _assign(self.original, value)
            else:
                if not isinstance(value, (list, tuple)):
                    raise ValueError("'right_inverse' must return a sequence of tensors. "
                                     f'Got {type(value).__name__}.')
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                     f'{self.ntensors}. Got a sequence of length {len(value)}.')
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f'original{i}')
                    if not isinstance(tensor, ember.Tensor):
                        raise ValueError(f'`right_inverse` must return a sequence of tensors. Got element {i} of '
                                         f'type {type(tensor).__name__}')
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f'Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while '
                                         f'`original{i}` has dtype {original_i.dtype}')
                    _assign(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f'original{i}') for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _getstate_refused(self):
    raise RuntimeError('Serialization of parametrized modules is only supported through state_dict(). See:\n'
                       'https://pytorch.org/tutorials/beginner/saving_loading_models.html'
                       '#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training')


def _inject_new_class(module):
    """module's class becomes a fresh subclass, to hold its properties."""
    cls = module.__class__

    def deepcopy(self, memo):
        obj = memo.get(id(self))
        if obj is not None:
            return obj
        import copy
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        return replica

    module.__class__ = type(f'Parametrized{cls.__name__}', (cls,),
                            {'__getstate__': _getstate_refused, '__deepcopy__': deepcopy})


def _inject_property(module, name):
    def get(self):
        parametrization = self.parametrizations[name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(get, set))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrizes module.<tensor_name> (a parameter, a buffer, or an
    already parametrized name, whose list it extends) by `parametrization`
    (a Module; its optional right_inverse(value) maps back). Returns module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, ember.Tensor):
                raise ValueError(f'A parametrization must return a tensor. Got {type(x).__name__}.')
            if x.dtype != y.dtype:
                raise ValueError('Registering a parametrization may not change the dtype of the tensor, unless the '
                                 f'`unsafe` flag is enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n'
                                 f'parametrization(module.{tensor_name}).dtype: {x.dtype}')
            if x.shape != y.shape:
                raise ValueError('Registering a parametrization may not change the shape of the tensor, unless the '
                                 f'`unsafe` flag is enabled.\nmodule.{tensor_name}.shape: {y.shape}\n'
                                 f'parametrization(module.{tensor_name}).shape: {x.shape}')
            if hasattr(parametrization, 'right_inverse'):
                z = parametrization.right_inverse(x)
                if not isinstance(z, ember.Tensor):
                    raise ValueError(f'parametrization.right_inverse must return a tensor. Got: {type(z).__name__}')
                if z.dtype != y.dtype:
                    raise ValueError('The tensor returned by parametrization.right_inverse must have the same dtype '
                                     f'as module.{tensor_name}, unless the `unsafe` flag is enabled.\n'
                                     f'module.{tensor_name}.dtype: {y.dtype}\nreturned dtype: {z.dtype}')
                if z.shape != y.shape:
                    raise ValueError('The tensor returned by parametrization.right_inverse must have the same shape '
                                     f'as module.{tensor_name}, unless the `unsafe` flag is enabled.\n'
                                     f'module.{tensor_name}.shape: {y.shape}\nreturned shape: {z.shape}')
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name "
                         f"'{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Does module have a parametrization (on tensor_name, when given)?"""
    parametrizations = getattr(module, 'parametrizations', None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undoes register_parametrization on tensor_name: the tensor becomes a
    plain parameter (or buffer) again, holding its current parametrized
    value (leave_parametrized) or its original one. Returns module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f'Module {module} does not have a parametrization on {tensor_name}')
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with ember.no_grad():
                _assign(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError('Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized '
                             'in terms of a sequence of tensors.')
        t = getattr(module, tensor_name)  # in grad mode: requires_grad tells whether any original did
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, 'parametrizations')
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Gives to_module the parametrizations of from_module (all, or those of
    tensor_name) with from_module's original values. Returns to_module."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for parametrization in from_module.parametrizations[name]:
            register_parametrization(to_module, name, parametrization)
        with ember.no_grad():
            source, dest = from_module.parametrizations[name], to_module.parametrizations[name]
            if source.is_tensor:
                _assign(dest.original, source.original)
            else:
                for i in range(source.ntensors):
                    _assign(getattr(dest, f'original{i}'), getattr(source, f'original{i}'))
    return to_module


