"""The __torch_function__ protocol (torch.overrides): Tensor subclasses that override the
functions called on them.

A Tensor subclass whose `__torch_function__` is not `_disabled_torch_function_impl` (nn.Parameter's)
gets, when the class is created, a wrapper for each Tensor method and property it inherits from
ember.Tensor: the wrapper hands the call to `__torch_function__(func, types, args, kwargs)`, func
being the Tensor attribute (Tensor.add, Tensor.__add__, Tensor.T.__get__). The first such class also
switches on the same dispatch for the functions of `ember` and `ember.nn.functional` (their module
attributes are replaced by wrappers), so that programs that never define such a class pay nothing.
Tensor.__torch_function__, the default, runs the function with dispatch off and returns tensors
as the subclass (as torch 1.13's does).

Not as in torch: a method called on a plain tensor with a subclass argument (`plain.add(sub)`)
does not dispatch (operators do: Python tries the subclass's reflected operator first); functions
bound before the first subclass was defined (`from ember import add`) do not dispatch; objects
that are not tensors but define __torch_function__ dispatch only after a Tensor subclass has
switched dispatch on.
"""
import functools
from _thread import _local as _thread_local  # the class of threading.local(), without importing threading

__all__ = ['has_torch_function', 'has_torch_function_unary', 'has_torch_function_variadic', 'handle_torch_function',
           'is_tensor_like', 'get_default_nowrap_functions', 'DisableTorchFunction']

_local = _thread_local()
_overloads = {}     # type -> whether its instances dispatch
_module_wrapped = [False]

# attributes of Tensor that never dispatch: the object protocol, interop, the protocol itself
_NO_DISPATCH = {'__class__', '__delattr__', '__dict__', '__dir__', '__doc__', '__getattribute__', '__getstate__',
                '__hash__', '__init__', '__init_subclass__', '__new__', '__reduce__', '__reduce_ex__', '__setattr__',
                '__sizeof__', '__subclasshook__', '__module__', '__deepcopy__', '__array_priority__',
                '__array_interface__', '__array__', '__array_wrap__', '__dlpack__', '__dlpack_device__', '__iter__',
                '__torch_function__', '__weakref__', '_make_subclass', 'as_subclass'}


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """A subclass that sets `__torch_function__ = _disabled_torch_function_impl` does not dispatch."""
    return func(*args, **(kwargs or {}))


def _enabled():
    return not getattr(_local, 'disabled', False)


class DisableTorchFunction:
    """Context manager: no __torch_function__ dispatch on this thread inside it."""

    def __enter__(self):
        self.prev = getattr(_local, 'disabled', False)
        _local.disabled = True
        return self

    def __exit__(self, *exc):
        _local.disabled = self.prev


def _dispatches(cls):
    """Whether instances of cls take part in dispatch (cached per type)."""
    r = _overloads.get(cls)
    if r is None:
        from ._tensor import Tensor
        tf = getattr(cls, '__torch_function__', None)
        r = tf is not None and cls is not Tensor and \
            getattr(tf, '__func__', tf) is not _disabled_torch_function_impl
        _overloads[cls] = r
    return r


def has_torch_function(relevant_args):
    """True when one of relevant_args dispatches through __torch_function__."""
    return _enabled() and any(_dispatches(type(a)) for a in relevant_args)


def has_torch_function_unary(obj):
    return _enabled() and _dispatches(type(obj))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def is_tensor_like(inp):
    """True for tensors and for objects whose type defines __torch_function__."""
    from ._tensor import Tensor
    return type(inp) is Tensor or hasattr(inp, '__torch_function__')


def _overloaded_args(relevant_args):
    """The arguments that dispatch, one per type, subclasses before their superclasses."""
    args, types = [], []
    for a in relevant_args:
        t = type(a)
        if t in types or not _dispatches(t):
            continue
        at = next((i for i, u in enumerate(types) if issubclass(t, u)), len(args))
        args.insert(at, a)
        types.insert(at, t)
    return args


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls the __torch_function__ of relevant_args's overloaded arguments in turn until one does
    not return NotImplemented; TypeError if all do."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        result = a.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, '__qualname__', None) or getattr(public_api, '__name__', str(public_api))
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f'{[type(a) for a in overloaded]}')


def _relevant(args, kwargs):
    """The arguments to look at: positional and keyword ones, and the items of list or tuple ones."""
    out = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            out.extend(a)
        else:
            out.append(a)
    return out


def _dispatch(func, args, kwargs, public=None):
    """func(*args, **kwargs), through __torch_function__ (as `public`, default func) when an
    argument dispatches."""
    relevant = _relevant(args, kwargs)
    if any(_dispatches(type(a)) for a in relevant):
        return handle_torch_function(public or func, relevant, *args, **kwargs)
    return func(*args, **kwargs)


@functools.lru_cache(None)
def get_default_nowrap_functions():
    """The functions whose results Tensor.__torch_function__ returns unconverted."""
    from ._tensor import Tensor
    return {Tensor._base.__get__, Tensor.grad.__get__} if hasattr(Tensor, '_base') else {Tensor.grad.__get__}


def convert(ret, cls):
    """Tensors in ret (or in a tuple or list ret) as cls."""
    from ._tensor import Tensor
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        return type(ret)(convert(r, cls) for r in ret)
    return ret


# ---- installing the dispatch ----

def _method(func):
    @functools.wraps(func)
    def method(self, *args, **kwargs):
        if getattr(_local, 'disabled', False):
            return func(self, *args, **kwargs)
        return _dispatch(func, (self, *args), kwargs)
    return method


def _property(descriptor):
    getter = descriptor.__get__

    def get(self):
        if getattr(_local, 'disabled', False):
            return getter(self, type(self))
        return handle_torch_function(getter, (self,), self) if _dispatches(type(self)) else getter(self, type(self))
    fset = (lambda self, value: descriptor.__set__(self, value)) if hasattr(descriptor, '__set__') else None
    return property(get, fset, doc=getattr(descriptor, '__doc__', None))


def _function(fn):
    @functools.wraps(fn)
    def function(*args, **kwargs):
        if getattr(_local, 'disabled', False):
            return fn(*args, **kwargs)
        return _dispatch(fn, args, kwargs, function)
    function.__ember_torch_function_wrapper__ = True
    return function


def _wrap_module(module):
    import types
    for name, value in list(vars(module).items()):
        if name.startswith('_') or isinstance(value, type) or isinstance(value, types.ModuleType) or \
                not isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) or \
                getattr(value, '__ember_torch_function_wrapper__', False) or value.__module__ == __name__ or \
                getattr(value, '__ember_not_implemented__', False):
            continue
        setattr(module, name, _function(value))


def install(cls):
    """Called for each new Tensor subclass: gives a dispatching one its wrappers."""
    if not _dispatches(cls):
        return
    from ._tensor import Tensor
    from . import _C
    owners = (Tensor, _C.TensorBase)
    for owner in owners:
        for name, value in vars(owner).items():
            if name in _NO_DISPATCH or (name.startswith('_') and not name.endswith('__')):
                continue
            if next(k for k in cls.__mro__ if name in vars(k)) is not owner:
                continue  # the subclass (or a class between) defines its own
            kind = type(value).__name__
            if kind in ('method_descriptor', 'wrapper_descriptor', 'function'):
                setattr(cls, name, _method(getattr(Tensor, name)))
            elif kind in ('getset_descriptor', 'property'):
                setattr(cls, name, _property(value))
    if not _module_wrapped[0]:
        _module_wrapped[0] = True
        import ember
        import ember.nn.functional
        _wrap_module(ember)
        _wrap_module(ember.nn.functional)
