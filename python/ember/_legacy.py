"""PyTorch's legacy tensor types: ember.FloatTensor, LongTensor(...), x.type(ember.DoubleTensor),
x.type('torch.IntTensor'), isinstance(x, ember.FloatTensor), set_default_tensor_type.

Each type is a class (of the metaclass `tensortype`) that constructs tensors of its dtype
(FloatTensor(2, 3) uninitialised, FloatTensor([1, 2]) from data) and that a tensor is an instance
of when its dtype and device match, as in PyTorch 1.13. Type strings use PyTorch's text
('torch.FloatTensor'), which programs compare; 'ember.FloatTensor' is accepted as well. The
ember.cuda types exist, and constructing or converting to one raises the no-CUDA error.
"""
import builtins

from . import _C
from ._tensor import Tensor

# the scalar names of the legacy types, by dtype (as x.type() spells them)
_SCALAR_NAMES = {_C.float32: 'Float', _C.float64: 'Double', _C.float16: 'Half', _C.bfloat16: 'BFloat16',
                 _C.int64: 'Long', _C.int32: 'Int', _C.int16: 'Short', _C.int8: 'Char', _C.uint8: 'Byte',
                 _C.bool: 'Bool'}


class tensortype(type):
    """The metaclass of the legacy tensor types."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.is_cuda == cls.is_cuda

    def __call__(cls, *args, device=None):
        if cls.is_cuda or (device is not None and _C.device(device).type != 'cpu'):
            from .cuda import _lazy_init
            _lazy_init()
        if not args:
            return _C.empty((0,), dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            other = args[0]
            if other.dtype != cls.dtype:
                raise TypeError(f'expected {cls.dtype} (got {other.dtype})')
            return other.view(other.shape)
        if all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args) or \
                (len(args) == 1 and isinstance(args[0], _C.Size)):
            return _C.empty(args[0] if isinstance(args[0], _C.Size) else args, dtype=cls.dtype)
        if len(args) == 1:
            return _C.tensor(args[0], dtype=cls.dtype)
        raise TypeError(f'new() received an invalid combination of arguments - got '
                        f'({", ".join(type(a).__name__ for a in args)})')

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make_types(module, is_cuda):
    return {f'{name}Tensor': tensortype(f'{name}Tensor', (), {'dtype': dtype, 'is_cuda': is_cuda, 'is_sparse': False,
                                                              '__module__': module})
            for dtype, name in _SCALAR_NAMES.items()}


TYPES = _make_types('ember', False)
_CUDA_TYPES = None


def cuda_tensor_types():
    global _CUDA_TYPES
    if _CUDA_TYPES is None:
        _CUDA_TYPES = _make_types('ember.cuda', True)
    return _CUDA_TYPES


def _type_of_name(name):
    """The legacy type named 'torch.FloatTensor', 'ember.cuda.LongTensor', ... ."""
    for prefix in ('torch.', 'ember.'):
        if name.startswith(prefix):
            short = name[len(prefix):]
            table = TYPES
            if short.startswith('cuda.'):
                short, table = short[5:], cuda_tensor_types()
            if short in table:
                return table[short]
    raise ValueError(f'invalid type: {name!r}')


def convert_type(tensor, type_, non_blocking=False):
    """Tensor.type(type_) for a type name or a legacy type: a converted copy, or the tensor itself
    when it already has that type."""
    if isinstance(type_, str):
        type_ = _type_of_name(type_)
    if not isinstance(type_, tensortype):
        raise TypeError(f'type() expects a dtype, a tensor type or its name, got {type(type_).__name__}')
    if type_.is_cuda:
        from .cuda import _lazy_init
        _lazy_init()
    return tensor.to(type_.dtype)


def set_default_tensor_type(t):
    """Sets the default floating-point dtype from a legacy type or its name (CPU Float or Double)."""
    if isinstance(t, str):
        t = _type_of_name(t)
    if t.is_cuda:
        from .cuda import _lazy_init
        _lazy_init()
    if t.dtype not in (_C.float32, _C.float64):
        raise TypeError('only floating-point types are supported as the default type')
    _C._set_default_dtype(t.dtype)
