"""Containers (torch.nn's): Sequential, ModuleList, ModuleDict,
ParameterList, ParameterDict. Their members are registered under string
keys ('0', '1', ... for the list kinds) so that state_dict names match
PyTorch's."""
import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _typename

__all__ = ['Container', 'Sequential', 'ModuleList', 'ModuleDict', 'ParameterList', 'ParameterDict']


def _abs_index(idx, size):
    """idx (any __index__ object, negative counts from the end) in [0, size)."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f'index {idx} is out of range')
    return idx % size if size else idx


def _renumber(modules):
    """The same modules under keys '0', '1', ... (after a deletion)."""
    return OrderedDict((str(i), m) for i, m in enumerate(modules.values()))


def _without_digit_keys(keys):
    return [k for k in keys if not k.isdigit()]


class Container(Module):
    """Deprecated (as in torch): a Module holding the modules given as keyword arguments."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("nn.Container is deprecated. All of it's functionality is now implemented in nn.Module. "
                      "Subclass that instead.")
        for name, module in kwargs.items():
            self.add_module(name, module)


class Sequential(Module):
    """Chains modules: forward feeds the input through each in order.
    Sequential(m1, m2, ...) or Sequential(OrderedDict(name=module, ...))."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _key_at(self, idx):
        return next(islice(self._modules.keys(), _abs_index(idx, len(self)), None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._key_at(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._key_at(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key_at(idx)]
        for key in keys:
            delattr(self, key)
        self._modules = _renumber(self._modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __dir__(self):
        return _without_digit_keys(super().__dir__())

    def _check_sequential(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f'add operator supports only objects of Sequential class, but {type(other)} is given.')

    def __add__(self, other):
        self._check_sequential(other)
        return Sequential().extend(self).extend(other)

    def __iadd__(self, other):
        self._check_sequential(other)
        return self.extend(other)

    def _check_factor(self, other):
        if not isinstance(other, int):
            raise TypeError(f'unsupported operand type(s) for *: {type(self)} and {type(other)}')
        if other <= 0:
            raise ValueError(f'Non-positive multiplication factor {other} for {type(self)}')

    def __mul__(self, other):
        self._check_factor(other)
        combined = Sequential()
        for _ in range(other):
            combined.extend(self)
        return combined

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        self._check_factor(other)
        return self.extend(list(self) * (other - 1))

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f'module should be of type: {Module}')
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f'Index out of range: {index}')
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        for layer in list(sequential):  # a copy: extending by self must terminate
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of submodules, indexable like a Python list."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx):
        keys = range(len(self))[idx] if isinstance(idx, slice) else [_abs_index(idx, len(self))]
        for k in keys:
            delattr(self, str(k))
        self._modules = _renumber(self._modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __dir__(self):
        return _without_digit_keys(super().__dir__())

    def insert(self, index, module):
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError('ModuleList.extend should be called with an iterable, but got ' + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


def _update_pairs(target, pairs, kind):
    """dict.update's sequence-of-pairs form, with PyTorch's messages."""
    for j, pair in enumerate(pairs):
        if not isinstance(pair, Iterable):
            raise TypeError(f'{kind} update sequence element #{j} should be Iterable; is' + type(pair).__name__)
        if len(pair) != 2:
            raise ValueError(f'{kind} update sequence element #{j} has length {len(pair)}; 2 is required')
        target[pair[0]] = pair[1]


class ModuleDict(Module):
    """An ordered dict of submodules (insertion order kept)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError('ModuleDict.update should be called with an iterable of key/value pairs, but got '
                            + type(modules).__name__)
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
        else:
            _update_pairs(self, modules, 'ModuleDict')


def _member_repr(key, value, dtype_text):
    """One line of ParameterList/ParameterDict's repr."""
    if isinstance(value, Tensor):
        size = 'x'.join(str(s) for s in value.size())
        device = f' (GPU {value.get_device()})' if value.is_cuda else ''
        kind = 'Parameter' if isinstance(value, Parameter) else 'Tensor'
        return f'  ({key}): {kind} containing: [{dtype_text(value)} of size {size}{device}]'
    return f'  ({key}): Object of type: {type(value).__name__}'


class ParameterList(Module):
    """A list of parameters (tensors assigned are wrapped in Parameter;
    other objects are kept as plain attributes)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx, param):
        key = str(_abs_index(idx, len(self)))
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return _without_digit_keys(super().__dir__())

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError('ParameterList.extend should be called with an iterable, but got ' + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return '\n'.join(_member_repr(k, p, lambda t: t.dtype) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError('ParameterList should not be called.')


class ParameterDict(Module):
    """An ordered dict of parameters with string keys (tensors assigned are
    wrapped in Parameter)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key):
        if not isinstance(key, str):
            raise TypeError('Index given to ParameterDict cannot be used as a key as it is not a string (type is '
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value):
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        if not isinstance(parameters, Iterable):
            raise TypeError('ParametersDict.update should be called with an iterable of key/value pairs, but got '
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):  # a plain dict's order is not kept (as PyTorch)
                self[key] = value
        else:
            _update_pairs(self, parameters, 'ParameterDict')

    def extra_repr(self):
        return '\n'.join(_member_repr(k, p, _typename) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError('ParameterDict should not be called.')

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self
