"""Storages as Python objects, and tensors as picklable Python objects.

Tensor.untyped_storage() gives an UntypedStorage: the bytes under a tensor and
all its views. One storage has one UntypedStorage object while that object
lives (a weak cache keyed by the storage's address), so that pickling x and
x[0] together pickles their storage once (the pickle memo sees one object)
and they load sharing memory, as in PyTorch. Tensor.storage() gives a
TypedStorage (the storage seen as elements of the tensor's dtype).

Plain pickle (pickle.dumps, copy.copy, deepcopy's fallback) uses
Tensor.__reduce_ex__ below, which names ember's own rebuild functions: such
pickles are for ember. ember.save writes PyTorch's format instead (its own
pickler, ember/_torch_save.py), and multiprocessing sends tensors through
shared memory (ember/multiprocessing/reductions.py registers its reducers on
multiprocessing's pickler, which take precedence over __reduce_ex__).
"""
import copyreg
import weakref

from . import _C

__all__ = ['UntypedStorage', 'TypedStorage']

_live = weakref.WeakValueDictionary()  # (address, device) -> UntypedStorage


class UntypedStorage:
    """The bytes of a storage: `_t` is a 1-d tensor over all of them (in the
    dtype it was first seen with; reinterpreted per dtype by _as)."""

    def __init__(self, t):
        self._t = t
        self._views = {t.dtype: t}

    def _as(self, dtype):
        """A 1-d tensor of dtype over the whole storage (sharing its memory)."""
        v = self._views.get(dtype)
        if v is None:
            if self._t.device.type != 'cpu':
                raise NotImplementedError('reinterpreting a non-CPU storage as another dtype')
            v = _C._storage_as(self._t, dtype)
            self._views[dtype] = v
        return v

    def nbytes(self):
        return self._t.numel() * self._t.element_size()

    def size(self):
        return self.nbytes()

    __len__ = size

    def element_size(self):
        return 1

    def data_ptr(self):
        return self._t.data_ptr()

    @property
    def device(self):
        return self._t.device

    @property
    def is_cuda(self):
        return self.device.type == 'cuda'

    def tolist(self):
        return self._as(_C.uint8).tolist()

    def __getitem__(self, i):
        return self._as(_C.uint8)[i].item()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        return ' ' + '\n '.join(str(v) for v in self.tolist()) + \
               f'\n[ember.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]'

    def __reduce_ex__(self, protocol):
        return (_rebuild_untyped, (_bytes(self._t), str(self.device)))


class TypedStorage:
    """A storage seen as elements of one dtype (what Tensor.storage() returns)."""

    def __init__(self, untyped, dtype):
        self._untyped, self.dtype = untyped, dtype

    def untyped(self):
        return self._untyped

    def _elements(self):
        return self._untyped._as(self.dtype)

    def size(self):
        return self._elements().numel()

    __len__ = size

    def element_size(self):
        return self._elements().element_size()

    def nbytes(self):
        return self._untyped.nbytes()

    def data_ptr(self):
        return self._untyped.data_ptr()

    @property
    def device(self):
        return self._untyped.device

    def tolist(self):
        return self._elements().tolist()

    def __getitem__(self, i):
        return self._elements()[i].item()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        return ' ' + '\n '.join(str(v) for v in self.tolist()) + \
               f'\n[ember.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]'

    def __reduce_ex__(self, protocol):
        return (_rebuild_typed, (self._untyped, str(self.dtype).split('.')[-1]))


def _bytes(t):
    """The bytes of the 1-d tensor t (a copy, on the CPU)."""
    return _C._storage_bytes(t if t.device.type == 'cpu' else t.cpu())


def untyped_storage(t):
    """The UntypedStorage of tensor t (the same object while it lives)."""
    address, nbytes = _C._storage_info(t)
    key = (address, str(t.device))
    s = _live.get(key)
    if s is None or s.nbytes() != nbytes:
        n = nbytes // t.element_size()
        whole = _C.as_strided(t.detach(), (n,), (1,), 0) if n * t.element_size() == nbytes else \
            _C._storage_as(t, _C.uint8)
        s = UntypedStorage(whole)
        _live[key] = s
    return s


def _rebuild_untyped(data, device):
    t = _C.frombuffer(bytearray(data), dtype=_C.uint8) if len(data) else _C.empty(0, dtype=_C.uint8)
    return UntypedStorage(t if device == 'cpu' else t.to(device))


def _rebuild_typed(untyped, dtype):
    return TypedStorage(untyped, getattr(_C, dtype))


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
    """Tensor.__reduce_ex__: (rebuild, args) over the tensor's storage. As in
    torch, a non-leaf tensor pickles as a new leaf with its requires_grad."""
    return (_rebuild_tensor, (type(t), untyped_storage(t), str(t.dtype).split('.')[-1], t.storage_offset(), tuple(t.shape),
                              tuple(t.stride()), t.requires_grad, dict(t.__dict__) or None))


copyreg.pickle(_C.device, lambda d: (_C.device, (str(d),)))  # devices pickle by name, as torch's
