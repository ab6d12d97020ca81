"""Storages as Python objects (PyTorch 1.13's storage API), and tensors as picklable objects.

A storage object is a handle on the bytes under a tensor and all its views: `_t`, a 1-d tensor
over the whole storage, shares its memory, so writes through the storage are seen by the
tensors and the reverse. Tensor.untyped_storage() gives an UntypedStorage (bytes);
Tensor.storage() a TypedStorage (the bytes seen as elements of one dtype). The legacy classes
(ember.FloatStorage, LongStorage...) construct TypedStorages of their dtype and are what a
TypedStorage is an instance of when its dtype matches, as in torch 1.13.

One storage has one UntypedStorage object while that object lives (a weak cache keyed by the
storage's address), so that pickling x and x[0] together pickles their storage once (the pickle
memo sees one object) and they load sharing memory, as in PyTorch.

Plain pickle (pickle.dumps, copy.copy, deepcopy's fallback) uses Tensor.__reduce_ex__ below,
which names ember's own rebuild functions: such pickles are for ember. ember.save writes
PyTorch's format instead (its own pickler, ember/_torch_save.py), and multiprocessing sends
tensors through shared memory (ember/multiprocessing/reductions.py).

Not as in torch: resize_() gives the storage object new memory (copying what fits); tensors
that viewed the old memory keep it (torch resizes the memory under them too).
"""
import builtins
import copyreg
import os
import sys
import weakref

from . import _C

__all__ = ['StorageBase', 'UntypedStorage', 'TypedStorage']

_live = weakref.WeakValueDictionary()  # (address, device) -> UntypedStorage

# (method name, dtype) of the conversions every storage has: s.float(), s.long()...
_CONVERSIONS = (('byte', _C.uint8), ('char', _C.int8), ('short', _C.int16), ('int', _C.int32),
                ('long', _C.int64), ('half', _C.float16), ('float', _C.float32), ('double', _C.float64),
                ('bfloat16', _C.bfloat16), ('bool', _C.bool))
_LEGACY_NAMES = {_C.float64: 'DoubleStorage', _C.float32: 'FloatStorage', _C.float16: 'HalfStorage',
                 _C.bfloat16: 'BFloat16Storage', _C.int64: 'LongStorage', _C.int32: 'IntStorage',
                 _C.int16: 'ShortStorage', _C.int8: 'CharStorage', _C.uint8: 'ByteStorage', _C.bool: 'BoolStorage'}
_LEGACY_NAMES.update({getattr(_C, d): n for d, n in (('complex64', 'ComplexFloatStorage'),
                                                      ('complex128', 'ComplexDoubleStorage')) if hasattr(_C, d)})


def _dtype_name(dtype):
    return str(dtype).split('.')[-1]


def _new_bytes(nbytes, device):
    if not isinstance(nbytes, builtins.int) or isinstance(nbytes, builtins.bool):
        raise TypeError(f'new(): argument size must be int, not {type(nbytes).__name__}')
    if nbytes < 0:
        raise RuntimeError(f'Storage: size must be non-negative, got {nbytes}')
    return _C.zeros(nbytes, dtype=_C.uint8, device=device)


def _to_device(t, device):
    return t if device is None or _C.device(device) == t.device else t.to(device)


class StorageBase:
    """What UntypedStorage and TypedStorage share: `_t` is a 1-d tensor over the whole storage
    in the storage's element type (uint8 for an UntypedStorage)."""

    def size(self):
        return self._t.numel()

    def __len__(self):
        return self.size()

    def element_size(self):
        return self._t.element_size()

    def nbytes(self):
        return self._t.numel() * self._t.element_size()

    def data_ptr(self):
        return self._t.data_ptr()

    @property
    def device(self):
        return self._t.device

    @property
    def is_cuda(self):
        return self.device.type == 'cuda'

    is_sparse = False

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def tolist(self):
        return self._t.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, idx):
        if isinstance(idx, builtins.int) and not isinstance(idx, builtins.bool):
            n = self.size()
            if not -n <= idx < n:
                raise IndexError(f'index {idx} out of range for storage of size {n}')
            return self._t[idx].item()
        return self._slice(idx)

    def __setitem__(self, idx, value):
        if isinstance(idx, builtins.int) and not isinstance(idx, builtins.bool):
            n = self.size()
            if not -n <= idx < n:
                raise IndexError(f'index {idx} out of range for storage of size {n}')
        elif not isinstance(idx, slice):
            raise RuntimeError(f"can't index a {type(self).__name__} with {type(idx).__name__}")
        self._t[idx] = value

    def fill_(self, value):
        self._t.fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        """Copies source's bytes into this storage (both the same size in bytes)."""
        if not isinstance(source, StorageBase):
            raise TypeError(f'copy_(): expected a storage, got {type(source).__name__}')
        if source.nbytes() != self.nbytes():
            raise RuntimeError('size does not match')
        self._bytes().copy_(source._bytes())
        return self

    def _bytes(self):
        return self._t if self._t.dtype == _C.uint8 else self.untyped()._t

    def resize_(self, size):
        """Gives the storage `size` elements, keeping the first ones (see the module's note)."""
        if not isinstance(size, builtins.int) or isinstance(size, builtins.bool) or size < 0:
            raise RuntimeError(f'resize_: size must be a non-negative int, got {size!r}')
        new = _C.zeros(size, dtype=self._t.dtype, device=self._t.device)
        keep = min(size, self.size())
        new[:keep] = self._t[:keep]
        self._rewrap(new)
        return self

    def share_memory_(self):
        """Moves the storage into shared memory (in place; tensors over it follow)."""
        self._t.share_memory_()
        return self

    def is_shared(self):
        return self._t.is_shared()

    def is_pinned(self):
        return False

    def pin_memory(self):
        from .cuda import _lazy_init
        _lazy_init()

    def cuda(self, device=None, non_blocking=False, **kwargs):
        from .cuda import _lazy_init
        _lazy_init()

    def type(self, dtype=None, non_blocking=False):
        """The type's name ('torch.FloatStorage'), or a copy converted to a storage type (a
        legacy class, its name, or a dtype)."""
        if dtype is None:
            return self._type_name()
        return TypedStorage._wrap_elements(self._t.to(_legacy_class(dtype).dtype))

    def __sizeof__(self):
        return super().__sizeof__() + self.nbytes()

    def __copy__(self):
        return self.clone()  # as torch 1.13's: a copy of the bytes

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self.clone()
        return memo[id(self)]

    def __repr__(self):
        return ' ' + '\n '.join(str(v) for v in self.tolist()) + f'\n[{self._describe()} of size {self.size()}]'

    __str__ = __repr__


def _conversion(dtype):
    def convert(self):
        return TypedStorage._wrap_elements(self._t.to(dtype))
    convert.__name__ = dict((d, n) for n, d in _CONVERSIONS)[dtype]
    convert.__doc__ = f'A copy converted to {dtype} elements (a TypedStorage).'
    return convert


for _name, _dtype in _CONVERSIONS:
    setattr(StorageBase, _name, _conversion(_dtype))
del _name, _dtype


class UntypedStorage(StorageBase):
    """The bytes of a storage. UntypedStorage(n) makes n zeroed bytes, UntypedStorage([b, ...])
    bytes from ints; Tensor.untyped_storage() gives the one under a tensor."""

    def __init__(self, *args, device=None):
        if len(args) > 1:
            raise TypeError(f'UntypedStorage(): expected at most one argument, got {len(args)}')
        if not args:
            t = _new_bytes(0, device)
        elif isinstance(args[0], builtins.int) and not isinstance(args[0], builtins.bool):
            t = _new_bytes(args[0], device)
        else:
            t = _to_device(_C.tensor(_check_sequence(args[0]), dtype=_C.uint8), device)
        self._rewrap(t)

    @classmethod
    def _wrap(cls, t):
        """The UntypedStorage over 1-d tensor t's storage (t covers all of it)."""
        s = cls.__new__(cls)
        s._rewrap(t)
        return s

    def _rewrap(self, t):
        self._t = t if t.dtype == _C.uint8 else _C._storage_as(t, _C.uint8)
        self._views = {_C.uint8: self._t, t.dtype: t}

    def _as(self, dtype):
        """A 1-d tensor of dtype over the whole storage (sharing its memory)."""
        v = self._views.get(dtype)
        if v is None:
            if self._t.device.type != 'cpu':
                raise NotImplementedError('reinterpreting a non-CPU storage as another dtype')
            v = _C._storage_as(self._t, dtype)
            self._views[dtype] = v
        return v

    def _slice(self, idx):
        if not isinstance(idx, slice):
            raise RuntimeError(f"can't index a UntypedStorage with {type(idx).__name__}")
        start, stop, step = idx.indices(self.size())
        if step != 1:
            raise RuntimeError('Trying to slice with a step of {}, but only a step of 1 is supported'.format(step))
        return UntypedStorage._wrap(self._t[start:max(start, stop)].clone())

    def untyped(self):
        return self

    def clone(self):
        return UntypedStorage._wrap(self._t.clone())

    def cpu(self):
        return UntypedStorage._wrap(self._t.cpu())

    def new(self):
        return UntypedStorage(device=self.device)

    def _type_name(self):
        return 'torch.storage.UntypedStorage'

    def _describe(self):
        return f'torch.storage.UntypedStorage(device={self.device})'

    @classmethod
    def from_buffer(cls, buffer, byte_order='native', count=-1, offset=0, *, dtype=None):
        return TypedStorage.from_buffer(buffer, byte_order, count, offset, dtype=dtype or _C.uint8).untyped()

    @classmethod
    def from_file(cls, filename, shared=False, size=0):
        """An UntypedStorage of `size` bytes over a file (mapped; shared=True writes through)."""
        return UntypedStorage._wrap(_map_file(filename, shared, size, 1))

    def __reduce_ex__(self, protocol):
        return (_rebuild_untyped, (_bytes(self._t), str(self.device)))


class TypedStorage(StorageBase):
    """A storage seen as elements of one dtype (what Tensor.storage() returns). TypedStorage(n,
    dtype=...) makes n zeroed elements, TypedStorage([v, ...], dtype=...) elements from values,
    TypedStorage(wrap_storage=u, dtype=...) views UntypedStorage u."""

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None):
        dtype = _C.get_default_dtype() if dtype is None else dtype
        if not isinstance(dtype, _C.dtype):
            raise TypeError(f'TypedStorage(): dtype must be a ember.dtype, got {type(dtype).__name__}')
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError('TypedStorage(): with wrap_storage, no other argument or device may be given')
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError('TypedStorage(): wrap_storage must be an UntypedStorage, got '
                                f'{type(wrap_storage).__name__}')
            self._set(wrap_storage, dtype)
            return
        if len(args) > 1:
            raise TypeError(f'TypedStorage(): expected at most one argument, got {len(args)}')
        if args and isinstance(args[0], builtins.int) and not isinstance(args[0], builtins.bool):
            if args[0] < 0:
                raise RuntimeError(f'Storage: size must be non-negative, got {args[0]}')
            t = _C.zeros(args[0], dtype=dtype, device=device)
        elif args:
            t = _to_device(_C.tensor(_check_sequence(args[0]), dtype=dtype), device)
        else:
            t = _C.zeros(0, dtype=dtype, device=device)
        self._set(UntypedStorage._wrap(t), dtype)

    @classmethod
    def _wrap_elements(cls, t):
        """The TypedStorage over 1-d tensor t's storage (t covers all of it, in its dtype)."""
        s = TypedStorage.__new__(TypedStorage)
        s._set(UntypedStorage._wrap(t), t.dtype)
        return s

    def _set(self, untyped, dtype):
        if untyped.nbytes() % _C.empty(0, dtype=dtype).element_size():
            raise RuntimeError(f'Storage: {untyped.nbytes()} bytes do not hold a whole number of {dtype} elements')
        self._untyped, self.dtype = untyped, dtype

    def _rewrap(self, t):
        self._untyped._rewrap(t)

    @property
    def _t(self):
        return self._untyped._as(self.dtype)

    def _slice(self, idx):
        raise RuntimeError('slices are only supported in UntypedStorage.__getitem__')

    def untyped(self):
        return self._untyped

    def _new_wrapped_storage(self, untyped):
        return TypedStorage(wrap_storage=untyped, dtype=self.dtype)

    def clone(self):
        return TypedStorage._wrap_elements(self._t.clone())

    def cpu(self):
        return TypedStorage._wrap_elements(self._t.cpu())

    def pickle_storage_type(self):
        return _LEGACY_NAMES[self.dtype]

    def _type_name(self):
        return 'torch.' + _LEGACY_NAMES[self.dtype]

    def _describe(self):
        return f'torch.storage.TypedStorage(dtype={self.dtype}, device={self.device})'

    @classmethod
    def from_buffer(cls, buffer, byte_order='native', count=-1, offset=0, *, dtype=None):
        """A TypedStorage holding a copy of a buffer's bytes read as dtype elements."""
        dtype = getattr(cls, 'dtype', None) if dtype is None and cls is not TypedStorage else dtype
        if dtype is None:
            raise TypeError('from_buffer: a dtype is needed')
        if byte_order not in ('native', 'little', 'big'):
            raise ValueError(f"byte_order must be 'native', 'little' or 'big', got {byte_order!r}")
        t = _C.frombuffer(bytearray(buffer), dtype=dtype, count=count, offset=offset)
        if byte_order not in ('native', sys.byteorder) and t.element_size() > 1:
            same_size = {2: _C.int16, 4: _C.int32, 8: _C.int64}[t.element_size()]
            t = _C._storage_as(_C.from_numpy(_C._storage_as(t, same_size).numpy().byteswap()), dtype)
        return TypedStorage._wrap_elements(t)

    @classmethod
    def from_file(cls, filename, shared=False, size=0):
        """A TypedStorage of `size` elements over a file (mapped; shared=True writes through)."""
        dtype = cls.dtype if cls is not TypedStorage else _C.get_default_dtype()
        return TypedStorage._wrap_elements(_map_file(filename, shared, size, dtype))

    def __reduce_ex__(self, protocol):
        return (_rebuild_typed, (self._untyped, _dtype_name(self.dtype)))


def _check_sequence(data):
    if isinstance(data, (str, bytes)) or not hasattr(data, '__len__'):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    return list(data)


class _LegacyStorageMeta(type):
    """The legacy storage classes: FloatStorage(...) builds a float32 TypedStorage, and a
    TypedStorage is an instance of the class of its dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, TypedStorage) and obj.dtype == cls.dtype and obj.is_cuda == cls.is_cuda

    def __call__(cls, *args, wrap_storage=None, device=None):
        if cls.is_cuda or (device is not None and _C.device(device).type != 'cpu'):
            from .cuda import _lazy_init
            _lazy_init()
        if cls.is_cuda and device is None:
            device = 'cuda'
        return TypedStorage(*args, dtype=cls.dtype, wrap_storage=wrap_storage, device=device)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make_legacy(dtype, name, is_cuda=False):
    def from_buffer(cls_or_self, *args, **kwargs):
        return TypedStorage.from_buffer(*args, dtype=dtype, **kwargs)

    def from_file(filename, shared=False, size=0):
        return TypedStorage._wrap_elements(_map_file(filename, shared, size, dtype))
    return _LegacyStorageMeta(name, (TypedStorage,), {
        'dtype': dtype, 'is_cuda': is_cuda, '__module__': 'ember.cuda' if is_cuda else 'ember',
        '__doc__': f'{dtype} storages (builds a TypedStorage).',
        'from_buffer': classmethod(from_buffer), 'from_file': staticmethod(from_file)})


LEGACY = {name: _make_legacy(dtype, name) for dtype, name in _LEGACY_NAMES.items()}
CUDA_LEGACY = {name: _make_legacy(dtype, name, True) for dtype, name in _LEGACY_NAMES.items()}  # ember.cuda's
_LEGACY_BY_DTYPE = {c.dtype: c for c in LEGACY.values()}


def legacy_class(dtype):
    """ember.FloatStorage for float32... (Tensor.storage_type())."""
    return _LEGACY_BY_DTYPE[dtype]


def _legacy_class(type_):
    if isinstance(type_, _C.dtype):
        return _LEGACY_BY_DTYPE[type_]
    if isinstance(type_, str):
        for prefix in ('torch.', 'ember.'):
            if type_.startswith(prefix) and type_[len(prefix):] in LEGACY:
                return LEGACY[type_[len(prefix):]]
    if isinstance(type_, _LegacyStorageMeta):
        return type_
    raise ValueError(f'invalid storage type: {type_!r}')


def _map_file(filename, shared, size, dtype):
    """A 1-d tensor of `size` elements over the file (size * element size bytes), mapped: with
    shared, writes go to the file (which grows to fit, as torch's does); else they stay private."""
    import numpy
    dtype = _C.uint8 if dtype == 1 else dtype
    elsize = _C.empty(0, dtype=dtype).element_size()
    if not isinstance(size, builtins.int) or size < 0:
        raise RuntimeError(f'from_file: size must be a non-negative int, got {size!r}')
    nbytes = size * elsize
    if nbytes == 0:
        return _C.empty(0, dtype=dtype)
    filename = os.fspath(filename)
    have = os.path.getsize(filename) if os.path.exists(filename) else -1
    if have < 0 and not shared:
        raise RuntimeError(f"from_file: unable to open '{filename}': No such file or directory")
    if have < nbytes:
        if not shared:
            raise RuntimeError(f"from_file: '{filename}' holds {have} bytes, {nbytes} are needed")
        with open(filename, 'ab') as f:
            f.truncate(nbytes)
    array = numpy.memmap(filename, dtype=numpy.uint8, mode='r+' if shared else 'c', shape=(nbytes,))
    t = _C.from_numpy(array)
    return t if dtype == _C.uint8 else _C._storage_as(t, dtype)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-d tensor of `size` elements mapped from a file: with shared=True the tensor and the file
    share memory (writes go to the file), else the tensor's writes stay private."""
    dtype = _C.get_default_dtype() if dtype is None else dtype
    t = _map_file(filename, bool(shared), size, dtype)
    if device is not None and _C.device(device).type != 'cpu':
        t = t.to(device)
    return t.requires_grad_(True) if requires_grad else t


def _bytes(t):
    """The bytes of the 1-d tensor t (a copy, on the CPU)."""
    return _C._storage_bytes(t if t.device.type == 'cpu' else t.cpu())


def _storage_view(t):
    """t detached, without its conjugate / negative bits: a view of what its storage holds."""
    t = t.detach()
    t = _C._conj(t) if _C._is_conj(t) else t
    return _C._neg_view(t) if _C._is_neg(t) else t


def untyped_storage(t):
    """The UntypedStorage of tensor t (the same object while it lives)."""
    address, nbytes = _C._storage_info(t)
    key = (address, str(t.device))
    s = _live.get(key)
    if s is None or s.nbytes() != nbytes:
        n = nbytes // t.element_size()
        raw = _storage_view(t)
        whole = _C.as_strided(raw, (n,), (1,), 0) if n * t.element_size() == nbytes else _C._storage_as(raw, _C.uint8)
        s = UntypedStorage._wrap(whole)
        _live[key] = s
    return s


def typed_storage(t):
    """Tensor.storage(): t's storage seen as elements of t's dtype."""
    s = TypedStorage.__new__(TypedStorage)
    s._set(untyped_storage(t), t.dtype)
    return s


def tensor_set_(t, source=None, storage_offset=0, size=None, stride=None):
    """Tensor.set_(): t takes source's storage (a storage or a tensor), with the given view."""
    if source is None:
        return _C.TensorBase.set_(t)
    if isinstance(source, _C.TensorBase):
        if size is not None or storage_offset:
            raise TypeError('set_(): with a tensor source, no offset, size or stride is taken')
        return _C.TensorBase.set_(t, source)
    if not isinstance(source, StorageBase):
        raise TypeError(f'set_(): expected a Tensor or a storage as source, got {type(source).__name__}')
    if isinstance(source, TypedStorage) and source.dtype != t.dtype:
        raise RuntimeError(f'Expected a Storage of type {t.dtype} but got type {source.dtype} for argument #1 '
                           "'source' (while checking arguments for set_)")
    whole = source.untyped()._as(t.dtype)
    if size is None:
        size = (whole.numel(),)
    size = tuple(size)
    if stride is None:
        stride, step = [], 1
        for n in reversed(size):
            stride.insert(0, step)
            step *= max(n, 1)
    return _C.TensorBase.set_(t, _C.as_strided(whole, size, tuple(stride), storage_offset))


def _rebuild_untyped(data, device):
    t = _C.frombuffer(bytearray(data), dtype=_C.uint8) if len(data) else _C.empty(0, dtype=_C.uint8)
    return UntypedStorage._wrap(t if device == 'cpu' else t.to(device))


def _rebuild_typed(untyped, dtype):
    return TypedStorage(wrap_storage=untyped, dtype=getattr(_C, dtype))


def _rebuild_tensor(cls, storage, dtype, offset, size, stride, requires_grad, state):
    from ._tensor import Tensor
    t = _C.as_strided(storage._as(getattr(_C, dtype)), size, stride, offset)
    if cls is not Tensor:
        t = Tensor._make_subclass(cls, t, requires_grad)
    elif requires_grad:
        t.requires_grad_(True)
    if state:
        t.__dict__.update(state)
    return t


def reduce_tensor(t):
    """Tensor.__reduce_ex__: (rebuild, args) over the tensor's storage. As in torch, a non-leaf tensor
    pickles as a new leaf with its requires_grad. A conjugate (negative) view pickles its values."""
    if t.is_conj() or t.is_neg():
        t = t.detach().resolve_conj().resolve_neg().requires_grad_(t.requires_grad)
    return (_rebuild_tensor, (type(t), untyped_storage(t), _dtype_name(t.dtype), t.storage_offset(), tuple(t.shape),
                              tuple(t.stride()), t.requires_grad, dict(t.__dict__) or None))


copyreg.pickle(_C.device, lambda d: (_C.device, (str(d),)))  # devices pickle by name, as torch's
