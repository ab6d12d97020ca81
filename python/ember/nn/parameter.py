"""nn.Parameter: a Tensor that a Module registers as a parameter when it is
assigned as an attribute."""
from .._tensor import Tensor
from .. import _C
from ..autograd.grad_mode import no_grad

__all__ = ['Parameter']


class Parameter(Tensor):
    """A leaf tensor (sharing data's memory) that requires grad by default.
    Parameter(data=None, requires_grad=True); no data gives an empty tensor."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happened in __new__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        with no_grad():
            result = type(self)(self.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return 'Parameter containing:\n' + super().__repr__()

