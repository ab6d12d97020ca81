"""Variable: PyTorch's pre-0.4 wrapper, now the tensor itself. Calling it
returns a tensor (sharing the data) with the requested requires_grad, and
isinstance(t, Variable) holds for every tensor, as in PyTorch."""
from .._tensor import Tensor

__all__ = ['Variable']


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False, volatile=False) -> a new tensor
    sharing data's memory, without history, with that requires_grad."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from .. import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f'Variable data has to be a tensor, but got {type(data).__name__}')
        if volatile:
            import warnings
            warnings.warn('volatile was removed (Variable.volatile is always False)', UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)
