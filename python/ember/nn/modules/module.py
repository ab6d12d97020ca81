"""nn.Module: the base class of every layer and model (torch.nn.Module's
semantics): parameters, buffers and submodules registered by attribute
assignment, recursive iteration, state_dict save/load, train/eval, dtype
and device conversion, forward and full backward hooks, and the repr."""
import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _C
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...utils import hooks
from ..parameter import Parameter

__all__ = ['Module']  # the global hook functions live here only (as in torch.nn.modules.module)

# Hooks that run for every module (debugging and profiling aids).
_global_backward_hooks = OrderedDict()
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()

_EXTRA_STATE_KEY_SUFFIX = '_extra_state'


def register_module_forward_pre_hook(hook):
    """hook(module, input) -> None or a new input, before every module's
    forward (before the module's own pre-hooks)."""
    handle = hooks.RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook):
    """hook(module, input, output) -> None or a new output, after every
    module's forward (before the module's own hooks)."""
    handle = hooks.RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) -> None or a new grad_input, for
    every module (before the module's own backward hooks)."""
    handle = hooks.RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


class _IncompatibleKeys(namedtuple('IncompatibleKeys', ['missing_keys', 'unexpected_keys'])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return '<All keys matched successfully>'
        return super().__repr__()

    __str__ = __repr__


def _typename(obj):
    """torch.typename: a tensor's type string, else the qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, '__module__', '') or ''
    qualname = getattr(obj, '__qualname__', None) or getattr(obj, '__name__', None) or type(obj).__qualname__
    return qualname if module in ('', 'builtins') else f'{module}.{qualname}'


def _addindent(text, spaces):
    """Indents every line of text but the first."""
    first, *rest = text.split('\n')
    if not rest:
        return text
    return first + '\n' + '\n'.join(' ' * spaces + line for line in rest)


def _forward_unimplemented(self, *input):
    """The computation of the module: subclasses define it; call the module
    (not forward) so that its hooks run."""
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class of all neural-network modules. Assigning a Parameter, a
    Module or (after register_buffer) a buffer as an attribute registers it;
    call super().__init__() first."""

    dump_patches = False
    _version = 1  # saved in state_dict's _metadata; bump when the state layout changes

    def __init__(self):
        # object.__setattr__ bypasses Module.__setattr__'s registration logic
        object.__setattr__(self, 'training', True)
        object.__setattr__(self, '_parameters', OrderedDict())
        object.__setattr__(self, '_buffers', OrderedDict())
        object.__setattr__(self, '_non_persistent_buffers_set', set())
        object.__setattr__(self, '_backward_hooks', OrderedDict())
        object.__setattr__(self, '_is_full_backward_hook', None)
        object.__setattr__(self, '_forward_hooks', OrderedDict())
        object.__setattr__(self, '_forward_pre_hooks', OrderedDict())
        object.__setattr__(self, '_state_dict_hooks', OrderedDict())
        object.__setattr__(self, '_load_state_dict_pre_hooks', OrderedDict())
        object.__setattr__(self, '_load_state_dict_post_hooks', OrderedDict())
        object.__setattr__(self, '_modules', OrderedDict())

    forward = _forward_unimplemented

    # ---- registration ----------------------------------------------------------------
    def _check_member_name(self, kind, name, table):
        """The checks register_buffer/register_parameter/add_module share."""
        if not isinstance(name, str):
            raise TypeError(f'{kind} name should be a string. Got {_typename(name)}')
        if '.' in name:
            raise KeyError(f'{kind} name can\'t contain "."' + (f', got: {name}' if kind == 'module' else ''))
        if name == '':
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (module state that is not a parameter, e.g. running
        statistics); persistent buffers are part of state_dict."""
        if '_buffers' not in self.__dict__:
            raise AttributeError('cannot assign buffer before Module.__init__() call')
        self._check_member_name('buffer', name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            '(torch Tensor or None required)')
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (a Parameter or None) under name."""
        if '_parameters' not in self.__dict__:
            raise AttributeError('cannot assign parameter before Module.__init__() call')
        self._check_member_name('parameter', name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            '(torch.nn.Parameter or None required)')
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             'the forward() method.')
        self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module (or None) under name."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f'{_typename(module)} is not a Module subclass')
        if '_modules' not in self.__dict__:
            raise AttributeError('cannot assign module before Module.__init__() call')
        self._check_member_name('module', name, self._modules)
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of add_module."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path target ('' is self)."""
        if target == '':
            return self
        mod = self
        for item in target.split('.'):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + ' has no attribute `' + item + '`')
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError('`' + item + '` is not an nn.Module')
        return mod

    def _get_member(self, target, table, kind):
        module_path, _, name = target.rpartition('.')
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + ' has no attribute `' + name + '`')
        if name not in getattr(mod, table):
            raise AttributeError('`' + name + '` is not ' + kind)
        return getattr(mod, name)

    def get_parameter(self, target):
        """The parameter at the dotted path target."""
        return self._get_member(target, '_parameters', 'an nn.Parameter')

    def get_buffer(self, target):
        """The buffer at the dotted path target."""
        return self._get_member(target, '_buffers', 'a buffer')

    def get_extra_state(self):
        """Override (with set_extra_state) to save extra state in state_dict."""
        raise RuntimeError('Reached a code path in Module.get_extra_state() that should never be called. Please file '
                           'an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to '
                           'report this bug.')

    def set_extra_state(self, state):
        """Override (with get_extra_state) to load extra state from state_dict."""
        raise RuntimeError('Reached a code path in Module.set_extra_state() that should never be called. Please file '
                           'an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to '
                           'report this bug.')

    # ---- conversion ----------------------------------------------------------------------
    def _apply(self, fn):
        """Replaces every parameter, gradient and buffer t (recursively) by
        fn(t); parameters keep their identity (their .data is swapped)."""
        for module in self.children():
            module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            grad = param.grad
            with no_grad():
                param.data = fn(param)
                if grad is not None:
                    # Ember's .data assignment replaces the C tensor (and its .grad):
                    # convert the gradient object in place and attach it again
                    grad.data = fn(grad)
                    param.grad = grad
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Calls fn(module) on every submodule (children first) then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def share_memory(self):
        """Moves every parameter and buffer to shared memory, in place (ember.multiprocessing)."""
        return self._apply(lambda t: t.share_memory_())

    def type(self, dst_type):
        """Casts all parameters and buffers to dst_type."""
        return self._apply(lambda t: t.type(dst_type))

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floating(_C.float32)

    def double(self):
        return self._cast_floating(_C.float64)

    def half(self):
        return self._cast_floating(_C.float16)

    def bfloat16(self):
        return self._cast_floating(_C.bfloat16)

    def to_empty(self, *, device):
        """Moves to device with uninitialised storage."""
        return self._apply(lambda t: _C.empty_like(t, device=device))

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None, non_blocking=False), to(dtype,
        non_blocking=False), to(tensor, non_blocking=False), to(memory_format=...): moves and/or
        casts the parameters and buffers (dtype only applies to floating ones; memory_format to
        the 4-d and 5-d ones)."""
        memory_format = kwargs.pop('memory_format', None)
        device, dtype, non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError('nn.Module.to only accepts floating point or complex dtypes, but got desired '
                            f'dtype={dtype}')

        def convert(t):
            dt = dtype if t.is_floating_point() or t.is_complex() else None
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device, dt, non_blocking, memory_format=memory_format)
            return t.to(device, dt, non_blocking)
        return self._apply(convert)

    # ---- hooks -----------------------------------------------------------------------------
    def register_full_backward_hook(self, hook):
        """hook(module, grad_input, grad_output) -> None or a new grad_input,
        called when the gradients w.r.t. the module's inputs are computed
        (the forward then sees views of its tensor inputs and returns views)."""
        if self._is_full_backward_hook is False:
            raise RuntimeError('Cannot use both regular backward hooks and full backward hooks on a single Module. '
                               'Please use only one of them.')
        self._is_full_backward_hook = True
        handle = hooks.RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_forward_pre_hook(self, hook):
        """hook(module, input) -> None or a new input (a tuple, or one value
        that is wrapped in a tuple), before forward."""
        handle = hooks.RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook):
        """hook(module, input, output) -> None or a new output, after forward."""
        handle = hooks.RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def _call_impl(self, *input, **kwargs):
        if not (self._backward_hooks or self._forward_hooks or self._forward_pre_hooks or _global_backward_hooks
                or _global_forward_hooks or _global_forward_pre_hooks):
            return self.forward(*input, **kwargs)
        for hook in (*_global_forward_pre_hooks.values(), *self._forward_pre_hooks.values()):
            result = hook(self, input)
            if result is not None:
                input = result if isinstance(result, tuple) else (result,)
        backward_hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
        bw_hook = None
        if backward_hooks:
            bw_hook = hooks.BackwardHook(self, backward_hooks)
            input = bw_hook.setup_input_hook(input)
        result = self.forward(*input, **kwargs)
        for hook in (*_global_forward_hooks.values(), *self._forward_hooks.values()):
            hook_result = hook(self, input, result)
            if hook_result is not None:
                result = hook_result
        if bw_hook:
            result = bw_hook.setup_output_hook(result)
        return result

    __call__ = _call_impl

    def _register_state_dict_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> None or a new
        state_dict, after the module saved its state."""
        handle = hooks.RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs), before the module loads its state
        (with_module: the module is passed first)."""
        handle = hooks.RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) -> None, after load_state_dict
        loaded the module; it may edit incompatible_keys in place."""
        handle = hooks.RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- attributes ------------------------------------------------------------------------
    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        # states saved before these attributes existed
        for name, default in (('_forward_pre_hooks', OrderedDict), ('_forward_hooks', OrderedDict),
                              ('_backward_hooks', OrderedDict), ('_state_dict_hooks', OrderedDict),
                              ('_load_state_dict_pre_hooks', OrderedDict),
                              ('_load_state_dict_post_hooks', OrderedDict), ('_non_persistent_buffers_set', set)):
            if name not in self.__dict__:
                object.__setattr__(self, name, default())
        if '_is_full_backward_hook' not in self.__dict__:
            object.__setattr__(self, '_is_full_backward_hook', None)

    def __getattr__(self, name):
        # only reached when normal lookup fails: parameters, buffers, submodules
        d = self.__dict__
        for table in ('_parameters', '_buffers', '_modules'):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*tables):
            for table in tables:
                if name in table:
                    if isinstance(table, dict):
                        del table[name]
                    else:
                        table.discard(name)

        d = self.__dict__
        params = d.get('_parameters')
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError('cannot assign parameters before Module.__init__() call')
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                '(torch.nn.Parameter or None expected)')
            self.register_parameter(name, value)
            return
        modules = d.get('_modules')
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError('cannot assign module before Module.__init__() call')
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                '(torch.nn.Module or None expected)')
            modules[name] = value
            return
        buffers = d.get('_buffers')
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                '(torch.Tensor or None expected)')
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())  # not attribute names (Sequential's '0')

    # ---- state_dict ------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Puts this module's own parameters and persistent buffers (not its
        children's) into destination; subclasses override to add state."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix='', keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted
        name (detached unless keep_vars), with a `_metadata` attribute holding
        each module's version."""
        if args:  # the deprecated positional form state_dict(destination, prefix, keep_vars)
            warnings.warn('Positional args are being deprecated, use kwargs instead. Refer to '
                          'https://pytorch.org/docs/master/generated/torch.nn.Module.html#torch.nn.Module.state_dict '
                          'for details.')
            names = ('destination', 'prefix', 'keep_vars')
            values = dict(zip(names, args))
            destination = values.get('destination', destination)
            prefix = values.get('prefix', prefix)
            keep_vars = values.get('keep_vars', keep_vars)
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, '_metadata'):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + '.', keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if hook_result is not None:
                destination = hook_result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Copies this module's own entries of state_dict (keys prefix+name)
        into its parameters and persistent buffers, recording problems in
        the three lists; subclasses override to convert old layouts (they can
        read local_metadata['version'])."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f'object from checkpoint but received {type(input_param)}')
                continue
            if param.dim() == 0 and input_param.dim() == 1:  # checkpoints from before 0-d tensors
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f'size mismatch for {key}: copying a param with shape {input_param.shape} from '
                                  f'checkpoint, the shape in current model is {param.shape}.')
                continue
            try:
                with no_grad():
                    param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f'{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, '
                                  f'an exception occurred : {ex.args}.')
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split('.', 1)[0]
                    if input_name not in self._modules and input_name not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True):
        """Copies state_dict's tensors into the parameters and buffers. With
        strict, missing and unexpected keys are errors; shape mismatches
        always are (RuntimeError listing every problem). Returns
        (missing_keys, unexpected_keys) as a named tuple."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f'Expected state_dict to be dict-like, got {type(state_dict)}.')
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, '_metadata', None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=''):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + '.'
                    child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible_keys)
                if out is not None:
                    raise RuntimeError('Hooks registered with ``register_load_state_dict_post_hook`` are not '
                                       'expected to return new values, if incompatible_keys need to be modified, '
                                       'it should be done inplace.')

        load(self, state_dict)
        del load
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, 'Unexpected key(s) in state_dict: {}. '.format(
                    ', '.join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, 'Missing key(s) in state_dict: {}. '.format(
                    ', '.join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError('Error(s) in loading state_dict for {}:\n\t{}'.format(
                self.__class__.__name__, '\n\t'.join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- iteration -------------------------------------------------------------------------
    def _named_members(self, get_members, prefix='', recurse=True, remove_duplicate=True):
        """(dotted name, member) of get_members(module) over self (and its
        submodules when recurse); None members skipped, each object once
        when remove_duplicate."""
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or value in memo:
                    continue
                if remove_duplicate:
                    memo.add(value)
                yield module_prefix + ('.' if module_prefix else '') + name, value

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix='', recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) pairs; a shared parameter appears once
        unless remove_duplicate is False."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix='', recurse=True, remove_duplicate=True):
        """(dotted name, buffer) pairs, persistent or not."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """(name, module) of the direct children, each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix='', remove_duplicate=True):
        """(dotted name, module) of self and every submodule, depth first;
        a module reachable by several paths appears once unless
        remove_duplicate is False."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ('.' if prefix else '') + name, remove_duplicate)

    # ---- modes and gradients ---------------------------------------------------------------
    def train(self, mode=True):
        """Sets training mode on self and every submodule; returns self."""
        if not isinstance(mode, bool):
            raise ValueError('training mode is expected to be boolean')
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets requires_grad on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=False):
        """Zeroes every parameter's .grad (or sets it to None)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            if p.grad.grad_fn is not None:
                p.grad = p.grad.detach()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()

    # ---- printing --------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The module's own settings, shown inside its repr; override it."""
        return ''

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split('\n') if extra else []
        child_lines = [f'({key}): ' + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + '('
        if len(extra_lines) == 1 and not child_lines:
            main += extra_lines[0]
        elif lines:
            main += '\n  ' + '\n  '.join(lines) + '\n'
        return main + ')'


def _parse_to(*args, **kwargs):
    """(device, dtype, non_blocking) from Tensor.to's argument forms."""
    device = kwargs.pop('device', None)
    dtype = kwargs.pop('dtype', None)
    non_blocking = kwargs.pop('non_blocking', False)
    kwargs.pop('copy', None)
    kwargs.pop('memory_format', None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and isinstance(args[0], _C.dtype):
        dtype = args.pop(0)
    elif args and (args[0] is None or isinstance(args[0], (str, int, _C.device))):
        device = args.pop(0)
        if args and (args[0] is None or isinstance(args[0], _C.dtype)):
            dtype = args.pop(0)
    if args and isinstance(args[0], bool):
        non_blocking = args.pop(0)
    if args:
        raise TypeError(f'to() received an invalid combination of arguments: {args!r}')
    if device is not None and not isinstance(device, _C.device):
        device = _C.device(device)
    return device, dtype, non_blocking
