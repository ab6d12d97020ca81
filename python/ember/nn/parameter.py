"""nn.Parameter: a Tensor that a Module registers as a parameter when it is
assigned as an attribute; the uninitialized parameters and buffers of lazy
modules (nn.modules.lazy), which take their shape at the first forward."""
from .._tensor import Tensor
from .. import _C
from ..autograd.grad_mode import no_grad
from ..overrides import _disabled_torch_function_impl

__all__ = ['Parameter', 'UninitializedParameter', 'UninitializedBuffer', 'is_lazy']


class Parameter(Tensor):
    """A leaf tensor (sharing data's memory) that requires grad by default.
    Parameter(data=None, requires_grad=True); no data gives an empty tensor."""
    __torch_function__ = _disabled_torch_function_impl  # results of ops are plain tensors

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



class UninitializedTensorMixin:
    """A placeholder with no shape yet: an empty tensor of the eventual dtype
    and device until materialize() gives it its shape and its final class."""
    __torch_function__ = _disabled_torch_function_impl

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Gives the placeholder uninitialized memory of `shape` (its own device
        and dtype unless given) and turns it into a cls_to_become, in place,
        so that references to it (an optimizer's) stay valid."""
        dtype = self.data.dtype if dtype is None else dtype
        device = self.data.device if device is None else device
        self.data = _C.empty(tuple(shape), dtype=dtype, device=device)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f'<{self.__class__.__name__}>'

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape the first forward of its lazy module decides."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Tensor._make_subclass(cls, _C.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape the first forward of its lazy module decides."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return Tensor._make_subclass(cls, _C.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass
