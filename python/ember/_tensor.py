"""ember.Tensor: the C TensorBase plus the methods that read better in Python."""
from . import _C
from . import _storage  # noqa: F401 (registers how devices pickle)


class Tensor(_C.TensorBase):
    """A multi-dimensional array with autograd, over Ember's C tensor."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        from .overrides import install
        install(cls)  # a subclass that overrides __torch_function__ gets dispatching methods

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default: runs func with dispatch off and returns its tensors as cls (ember.overrides)."""
        from .overrides import DisableTorchFunction, convert, get_default_nowrap_functions
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunction():
            ret = func(*args, **(kwargs or {}))
            return ret if func in get_default_nowrap_functions() else convert(ret, cls)

    def as_subclass(self, cls):
        """This tensor as an instance of the Tensor subclass cls: same memory, and still part of the
        autograd graph (a view of self)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f'as_subclass: cls must be a subclass of ember.Tensor, got {cls!r}')
        view = _C.TensorBase.view_as(self, self)
        view.__class__ = cls
        return view

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import _str
        return _str(self, tensor_contents=tensor_contents)

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError('iteration over a 0-d tensor')
        return iter(self.unbind(0))

    def __reversed__(self):
        return self.flip(0) if self.dim() else self

    def __contains__(self, element):
        if isinstance(element, (Tensor, int, float, bool)):
            return bool((element == self).any().item())
        raise RuntimeError(
            f'Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.')

    def __format__(self, format_spec):
        if self.dim() == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __rsub__(self, other):
        return _C.rsub(self, other)

    def __rtruediv__(self, other):
        return self.reciprocal() * other

    __rdiv__ = __rtruediv__

    def __rpow__(self, other):
        if not isinstance(self, Tensor):  # called unbound, Tensor.__rpow__(2, t): PyTorch's fails so too
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'device' (Tensor.__rpow__ "
                                 f"needs a Tensor self)")
        return _C.pow(other, self)

    def __rmatmul__(self, other):
        return _C.matmul(other, self)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError('Only Tensors created explicitly by the user (graph leaves) support the deepcopy '
                               'protocol at the moment')
        if id(self) in memo:
            return memo[id(self)]
        with _C_no_grad():
            new = self.clone()
            if type(self) is not Tensor:
                new = type(self)._make_subclass(type(self), new, self.requires_grad)
            else:
                new.requires_grad_(self.requires_grad)
            if self.grad is not None:
                new.grad = self.grad.clone()
            new.__dict__.update({k: __import__('copy').deepcopy(v, memo) for k, v in self.__dict__.items()})
        memo[id(self)] = new
        return new

    # ---- pickling and storages (ember/_storage.py) ----
    def __reduce_ex__(self, protocol):
        from ._storage import reduce_tensor
        return reduce_tensor(self)

    def untyped_storage(self):
        """The bytes under this tensor and all its views (an UntypedStorage)."""
        from ._storage import untyped_storage
        return untyped_storage(self)

    def storage(self):
        """This tensor's storage seen as elements of its dtype (a TypedStorage)."""
        from ._storage import typed_storage
        return typed_storage(self)

    def storage_type(self):
        """The legacy storage class of this tensor's dtype (ember.FloatStorage...)."""
        from ._storage import legacy_class
        return legacy_class(self.dtype)

    def set_(self, source=None, storage_offset=0, size=None, stride=None):
        """Makes this tensor view source (a tensor, or a storage with offset, size and stride)."""
        from ._storage import tensor_set_
        return tensor_set_(self, source, storage_offset, size, stride)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor w.r.t. graph leaves (see ember.autograd.backward)."""
        from . import autograd
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """Registers hook(grad) -> Tensor or None, called with this tensor's gradient."""
        from . import autograd
        return autograd._register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Registers hook(tensor) on a leaf, called after backward accumulated into its .grad."""
        from . import autograd
        return autograd._register_post_accumulate_grad_hook(self, hook)

    # ---- NumPy and DLPack (the memory is shared, never copied) ----
    __array_priority__ = 1000  # NumPy defers binary operators to the tensor

    @property
    def __array_interface__(self):
        return _C._array_interface(self)

    def __array__(self, dtype=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def __array_wrap__(self, array):
        """A NumPy ufunc's result as a tensor (bool arrays become uint8, as in PyTorch)."""
        if array.dtype == bool:
            array = array.astype('uint8')
        return _C.from_numpy(array)

    def __dlpack__(self, stream=None):
        """A DLPack capsule sharing this tensor's memory (the array API's protocol)."""
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if stream is not None and type(stream) is not int:
            raise TypeError('stream must be ``int`` or ``none``')
        return _C._to_dlpack(self)

    def __dlpack_device__(self):
        from .utils.dlpack import DLDeviceType
        device = self.device
        if device.type == 'cuda':
            return (DLDeviceType.kDLGPU, device.index)
        return (DLDeviceType.kDLCPU, 0)

    @property
    def is_cpu(self):
        return not self.is_cuda

    @property
    def layout(self):
        from ._memory_format import strided
        return strided

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The type string ('torch.FloatTensor'), or a copy converted to a dtype, a legacy tensor
        type (ember.DoubleTensor) or a type name ('torch.IntTensor')."""
        if dtype is None or isinstance(dtype, _C.dtype):
            return super().type(dtype, non_blocking)
        from ._legacy import convert_type
        return convert_type(self, dtype, non_blocking)


class _C_no_grad:
    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
