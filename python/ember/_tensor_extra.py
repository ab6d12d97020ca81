"""Tensor methods PyTorch keeps for old code or for other devices: the legacy constructor
(x.new), element-wise Python callables (apply_, map_, map2_), the in-place samplers written
with uniform_ (cauchy_, log_normal_, geometric_), the deprecated non-in-place resize, and the
device methods that need hardware Ember's build lacks (pin_memory, xpu, ipu, record_stream).
Installed on ember.Tensor by ember._functions_extra.install."""
import math
import warnings

from . import _C
from ._tensor import Tensor


def new(self, *args, **kwargs):
    """The legacy constructor of self's type: x.new(2, 3), x.new([1, 2]), x.new()."""
    from ._legacy import TYPES, _SCALAR_NAMES
    return TYPES[_SCALAR_NAMES[self.dtype] + 'Tensor'](*args, **kwargs)


def _python_map(self, fn, *others):
    if self.is_cuda:
        raise TypeError('apply_ is only implemented on CPU tensors')
    values = [o.expand_as(self).reshape(-1).tolist() for o in others]
    flat = self.reshape(-1).tolist()
    result = [fn(*args) for args in zip(flat, *values)]
    self.copy_(_C.tensor(result, dtype=self.dtype).reshape(self.shape))
    return self


def apply_(self, callable):
    """Replaces each element x by callable(x) (a Python function: slow, CPU only)."""
    return _python_map(self, callable)


def map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]), tensor broadcast to self."""
    return _python_map(self, callable, tensor)


def map2_(self, x, y, callable):
    return _python_map(self, callable, x, y)


def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Samples from the Cauchy distribution: median + sigma * tan(pi * (u - 1/2))."""
    u = _C.empty(self.shape, dtype=_C.float64).uniform_(generator=generator) if generator is not None else \
        _C.rand(self.shape, dtype=_C.float64)
    return self.copy_(median + sigma * _C.tan(math.pi * (u - 0.5)))


def log_normal_(self, mean=1, std=2, *, generator=None):
    """Samples exp(N(mean, std^2))."""
    if std <= 0:
        raise RuntimeError(f'log_normal_ expects std > 0.0, but found std={std}')
    return self.normal_(mean, std, generator=generator).exp_() if generator is not None else \
        self.normal_(mean, std).exp_()


def geometric_(self, p, *, generator=None):
    """Samples the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f'geometric_ expects p to be in (0, 1), but got p={p}')
    u = _C.rand(self.shape, dtype=_C.float64)
    return self.copy_(_C.ceil(_C.log1p(-u) / math.log1p(-p)).clamp(min=1))


def is_set_to(self, tensor):
    """Whether both tensors view the same memory with the same geometry."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    return (self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
            and self.stride() == tensor.stride() and self.dtype == tensor.dtype)


def resize(self, *sizes):
    """Deprecated: a view of self with these sizes (the number of elements may not change)."""
    warnings.warn('non-inplace resize is deprecated')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    n = math.prod(sizes)
    if n != self.numel():
        raise RuntimeError(f'requested resize to {"x".join(map(str, sizes))} ({n} elements in total), but the '
                           f'given tensor has a size of {"x".join(map(str, self.shape))} ({self.numel()} elements). '
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           'number of elements. ')
    return self.contiguous().view(sizes)


def resize_as(self, tensor):
    warnings.warn('non-inplace resize_as is deprecated')
    return resize(self, tensor.shape)


def reinforce(self, reward):
    raise RuntimeError('reinforce() was removed.\nUse torch.distributions instead.')


def _volatile(self):
    warnings.warn('volatile was removed (Variable.volatile is always False)', stacklevel=2)
    return False


def _needs_cuda(self, *args, **kwargs):
    from .cuda import _lazy_init
    _lazy_init()


def _not_linked(device):
    def method(self, *args, **kwargs):
        raise RuntimeError(f'Ember is not linked with support for {device} devices')
    method.__name__ = device
    return method


METHODS = dict(new=new, apply_=apply_, map_=map_, map2_=map2_, cauchy_=cauchy_, log_normal_=log_normal_,
               geometric_=geometric_, is_set_to=is_set_to, resize=resize, resize_as=resize_as,
               reinforce=reinforce, is_pinned=lambda self, device=None: False, pin_memory=_needs_cuda,
               record_stream=_needs_cuda, xpu=_not_linked('xpu'), ipu=_not_linked('ipu'))


def install():
    for name, fn in METHODS.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    if not hasattr(Tensor, 'volatile'):
        Tensor.volatile = property(_volatile)
