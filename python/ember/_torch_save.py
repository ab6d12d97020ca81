"""ember.save in PyTorch's zip format, readable by torch.load.

The archive (written by the C zip writer, src/io/zip.c: stored entries, data
64-byte aligned, atomic when saving to a path) holds
    archive/data.pkl     the object, pickled with protocol 2
    archive/byteorder    "little"
    archive/data/<key>   each storage's raw bytes
    archive/version      "3"
In the pickle, tensors are torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, OrderedDict()), Parameters
torch._utils._rebuild_parameter(tensor, requires_grad, OrderedDict()),
dtypes torch.<name>, devices torch.device(str), Sizes torch.Size(tuple), and
each storage a persistent id ('storage', torch.<Type>Storage, key, location,
numel): the names torch itself writes, so torch.load reads the file. Views
of one storage share it (one key), so they load sharing memory. Any other
object pickles as usual: ember's own classes (a whole nn.Module) under their
ember module names, which only ember (weights_only=False) can load.

These torch names are written without importing torch: a pure-Python
pickler writes _TorchGlobal placeholders as GLOBAL opcodes.
"""
import collections
import io
import pickle

from . import _C
from ._storage import TypedStorage, UntypedStorage, untyped_storage

_STORAGE_NAMES = {
    'float64': 'DoubleStorage', 'float32': 'FloatStorage', 'float16': 'HalfStorage', 'bfloat16': 'BFloat16Storage',
    'int64': 'LongStorage', 'int32': 'IntStorage', 'int16': 'ShortStorage', 'int8': 'CharStorage',
    'uint8': 'ByteStorage', 'bool': 'BoolStorage', 'complex32': 'ComplexHalfStorage',
    'complex64': 'ComplexFloatStorage', 'complex128': 'ComplexDoubleStorage',
}


class _TorchGlobal:
    """A global of torch's, pickled by name (module, name)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable
        raise TypeError(f'{self.module}.{self.name} is a placeholder for torch.load')


_REBUILD_TENSOR = _TorchGlobal('torch._utils', '_rebuild_tensor_v2')
_REBUILD_PARAMETER = _TorchGlobal('torch._utils', '_rebuild_parameter')
_SIZE = _TorchGlobal('torch', 'Size')
_DEVICE = _TorchGlobal('torch', 'device')


def _dtype_name(dtype):
    return str(dtype).split('.')[-1]


class _StorageRef:
    """A storage as it appears in the pickle (a persistent id)."""

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype


class _Pickler(pickle._Pickler):
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.entries = []  # (key, tensor over the whole storage)
        self.keys = {}     # id(UntypedStorage) -> (key, dtype)
        self.refs = {}     # id(UntypedStorage) -> _StorageRef (one per storage: the memo shares it)

    def save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f'{obj.module}\n{obj.name}\n'.encode('utf-8'))
        self.memoize(obj)

    dispatch[_TorchGlobal] = save_torch_global

    def save_dtype(self, obj):
        self.save_torch_global(_TorchGlobal('torch', _dtype_name(obj)))

    dispatch[_C.dtype] = save_dtype

    def persistent_id(self, obj):
        if isinstance(obj, TypedStorage):  # a storage saved by itself, as torch writes one
            obj = _StorageRef(obj.untyped(), obj.dtype)
        elif isinstance(obj, UntypedStorage):
            obj = _StorageRef(obj, _C.uint8)
        if not isinstance(obj, _StorageRef):
            return None
        s = obj.storage
        if id(s) not in self.keys:
            self.keys[id(s)] = (str(len(self.keys)), obj.dtype)
            data = s._as(obj.dtype)
            self.entries.append((self.keys[id(s)][0], data if data.device.type == 'cpu' else data.cpu()))
        key, dtype = self.keys[id(s)]
        if dtype != obj.dtype:
            raise RuntimeError(f'ember.save: one storage is viewed as both {dtype} and {obj.dtype}; torch 1.13\'s '
                               'format stores typed storages: save copies (.clone()) of such views')
        location = str(s.device) if s.device.type != 'cuda' else f'cuda:{s.device.index or 0}'
        numel = s.nbytes() // s._as(dtype).element_size()
        return ('storage', _TorchGlobal('torch', _STORAGE_NAMES[_dtype_name(dtype)]), key, location, numel)

    def reducer_override(self, obj):
        from ._tensor import Tensor
        from .nn.parameter import Parameter
        if isinstance(obj, Tensor):
            if obj.is_conj() or obj.is_neg():  # the values are saved (torch 1.13 saves the storage, losing the bit)
                obj = obj.detach().resolve_conj().resolve_neg().requires_grad_(obj.requires_grad)
            if isinstance(obj, Parameter):
                return (_REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, collections.OrderedDict()))
            if type(obj) is not Tensor:
                raise pickle.PicklingError(f'ember.save: tensors of class {type(obj).__name__} are not supported '
                                           '(save a plain Tensor: t.as_subclass(ember.Tensor))')
            s = untyped_storage(obj)
            ref = self.refs.get((id(s), obj.dtype))
            if ref is None:
                ref = self.refs[(id(s), obj.dtype)] = _StorageRef(s, obj.dtype)
            return (_REBUILD_TENSOR, (ref, obj.storage_offset(), _C.Size(obj.shape), tuple(obj.stride()),
                                      obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, _C.Size):
            return (_SIZE, (tuple(obj),))
        if isinstance(obj, _C.device):
            return (_DEVICE, (str(obj),))
        return NotImplemented


def save_zip(obj, dest, protocol):
    """Writes obj to dest (a path string, atomically, or a write callable)."""
    buf = io.BytesIO()
    p = _Pickler(buf, protocol)
    p.dump(obj)
    entries = [('archive/data.pkl', buf.getbuffer()), ('archive/byteorder', b'little')]
    entries += [(f'archive/data/{key}', t) for key, t in p.entries]
    entries.append(('archive/version', b'3\n'))
    _C._zip_save(dest, entries)
