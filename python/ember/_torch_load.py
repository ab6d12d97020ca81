"""Reading files written by torch.save, without torch and without running
code from the file.

Two layouts: the zip format (torch >= 1.6: <root>/data.pkl, a pickle whose
storages are persistent ids ('storage', torch.FloatStorage, key, location,
numel) with their bytes in <root>/data/<key>), and the legacy format (a magic
number, a protocol version and system info pickled, then the object pickle
with ids ('storage', type, key, location, numel, view_metadata), a pickled
list of storage keys, and each storage as an int64 element count plus its
bytes). The pickle is read by an Unpickler whose find_class only knows the
globals torch writes for tensors and plain data (_rebuild_tensor_v2,
_rebuild_parameter, storage types, dtypes, OrderedDict, ...): anything else
raises pickle.UnpicklingError before it is called.
"""
import codecs
import collections
import pickle
import struct
import zipfile

from . import _C

_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_LEGACY_PREFIX = b'\x80\x02\x8a\x0a' + _LEGACY_MAGIC.to_bytes(10, 'little')

_STORAGE_DTYPES = {
    'DoubleStorage': 'float64', 'FloatStorage': 'float32', 'HalfStorage': 'float16',
    'BFloat16Storage': 'bfloat16', 'LongStorage': 'int64', 'IntStorage': 'int32', 'ShortStorage': 'int16',
    'CharStorage': 'int8', 'ByteStorage': 'uint8', 'BoolStorage': 'bool', 'UntypedStorage': 'uint8',
}
_DTYPE_NAMES = {'float64', 'double', 'float32', 'float', 'float16', 'half', 'bfloat16', 'int64', 'long',
                'int32', 'int', 'int16', 'short', 'int8', 'uint8', 'bool'}


def is_torch_file(head):
    """Whether the first bytes of a file are a torch.save zip or legacy file."""
    return head.startswith(b'PK\x03\x04') or head.startswith(_LEGACY_PREFIX)


class _StorageType:
    """What find_class gives for torch.FloatStorage & co.: just the dtype."""

    def __init__(self, name):
        self.dtype = getattr(_C, _STORAGE_DTYPES[name])


class _Storage:
    """A storage: a 1-d tensor (`data`) and where views of it start (legacy
    storage views), and its location string ('cpu', 'cuda:0')."""

    def __init__(self, data, offset, location):
        self.data, self.offset, self.location = data, offset, location


def _rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                    metadata=None):
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError('ember.load: a tensor refers to something that is not a storage')
    t = _C.as_strided(storage.data, tuple(size), tuple(stride), storage.offset + storage_offset).detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v1(storage, storage_offset, size, stride):
    return _rebuild_tensor(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_from_type_v2(func, new_type, args, state):
    t = func(*args)
    if new_type is _rebuild_parameter:
        t = _rebuild_parameter(t, t.requires_grad, None)
    elif new_type is not _tensor_class:
        raise pickle.UnpicklingError('ember.load: only Tensor and Parameter tensor types can be loaded')
    if state:
        raise pickle.UnpicklingError('ember.load: tensors with Python attributes cannot be loaded')
    return t


def _tensor_class(*args):
    raise pickle.UnpicklingError('ember.load: torch.Tensor cannot be called from a checkpoint')


def _codecs_encode(text, encoding='utf-8'):
    """Protocol-2 pickles write bytes as _codecs.encode(str, 'latin1')."""
    if not isinstance(text, str) or codecs.lookup(encoding).name not in ('latin-1', 'iso8859-1', 'utf-8'):
        raise pickle.UnpicklingError('ember.load: unexpected _codecs.encode arguments')
    return text.encode(encoding)


def _device(*args):
    return _C.device(*args)


_ALLOWED = {
    ('torch._utils', '_rebuild_tensor_v2'): _rebuild_tensor,
    ('torch._utils', '_rebuild_tensor'): _rebuild_tensor_v1,
    ('torch._utils', '_rebuild_parameter'): _rebuild_parameter,
    ('torch._tensor', '_rebuild_from_type_v2'): _rebuild_from_type_v2,
    ('torch', 'Tensor'): _tensor_class,
    ('torch.nn.parameter', 'Parameter'): _rebuild_parameter,
    ('torch', 'Size'): _C.Size,
    ('torch', 'device'): _device,
    ('collections', 'OrderedDict'): collections.OrderedDict,
    ('builtins', 'set'): set,
    ('builtins', 'frozenset'): frozenset,
    ('builtins', 'complex'): complex,
    ('_codecs', 'encode'): _codecs_encode,
}


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, storage_loader):
        super().__init__(file, encoding='utf-8')
        self._storage_loader = storage_loader

    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == 'torch' and name in _STORAGE_DTYPES:
            return _StorageType(name)
        if module == 'torch' and name in _DTYPE_NAMES:
            return getattr(_C, name)
        raise pickle.UnpicklingError(
            f"ember.load: refusing to load the global {module}.{name}: a checkpoint may only hold tensors, "
            "storages, dtypes, OrderedDict and plain Python data (ember never runs code from a file)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == 'storage'
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f'ember.load: unsupported persistent id {pid!r:.100}')
        return self._storage_loader(*pid[1:])


def _bytes_tensor(data, dtype):
    """A 1-d tensor of dtype over a copy of data."""
    if len(data) == 0:
        return _C.empty(0, dtype=dtype)
    elsize = _C.empty(0, dtype=dtype).element_size()
    if len(data) % elsize:
        raise pickle.UnpicklingError(f'ember.load: storage of {len(data)} bytes is not a whole number of {dtype}')
    return _C.frombuffer(bytearray(data), dtype=dtype)


def _load_zip(f, relocate):
    try:
        zf = zipfile.ZipFile(f)
    except zipfile.BadZipFile as e:
        raise RuntimeError(f'ember.load: not a valid torch.save zip file: {e}') from None
    with zf:
        pkl = [n for n in zf.namelist() if n.endswith('data.pkl') and n.count('/') <= 1]
        if len(pkl) != 1:
            raise RuntimeError('ember.load: a torch.save zip file must hold exactly one <root>/data.pkl')
        root = pkl[0][:-len('data.pkl')]
        if root + 'byteorder' in zf.namelist() and zf.read(root + 'byteorder') != b'little':
            raise RuntimeError('ember.load: big-endian torch files are not supported')
        storages = {}

        def load_storage(storage_type, key, location, numel, *view):
            key = str(key)
            if key not in storages:
                try:
                    data = zf.read(f'{root}data/{key}')
                except KeyError:
                    raise RuntimeError(f'ember.load: storage {key} is missing from the zip file') from None
                t = relocate(_bytes_tensor(data, storage_type.dtype), str(location))
                storages[key] = _Storage(t, 0, str(location))
            return storages[key]

        return _Unpickler(zf.open(pkl[0]), load_storage).load()


def _no_storage(*pid):
    raise pickle.UnpicklingError('ember.load: a storage where plain data was expected')


def _load_legacy(f, relocate):
    def header(what):
        # The records around the object pickle are plain data: read them with
        # the same restricted unpickler, refusing storages (never pickle.load).
        try:
            return _Unpickler(f, _no_storage).load()
        except pickle.UnpicklingError:
            raise
        except Exception as e:
            raise RuntimeError(f'ember.load: legacy torch file: cannot read the {what}: {e}') from None

    if header('magic number') != _LEGACY_MAGIC or header('protocol version') != 1001:
        raise RuntimeError('ember.load: not a legacy torch.save file (bad magic number or protocol version)')
    sys_info = header('system info')
    if not (isinstance(sys_info, dict) and sys_info.get('little_endian', True)):
        raise RuntimeError('ember.load: big-endian torch files are not supported')
    roots = {}  # key -> _Storage over an empty tensor, filled in place after the object pickle

    def load_storage(storage_type, key, location, numel, view_metadata):
        if key not in roots:
            if not isinstance(numel, int) or numel < 0:
                raise pickle.UnpicklingError('ember.load: bad storage size')
            data = relocate(_C.empty(numel, dtype=storage_type.dtype), str(location))
            roots[key] = _Storage(data, 0, str(location))
        root = roots[key]
        if view_metadata is None:
            return root
        view_key, offset, view_size = view_metadata
        return _Storage(root.data, offset, root.location)

    result = _Unpickler(f, load_storage).load()
    keys = header('storage keys')
    for key in keys:
        if key not in roots:
            raise RuntimeError(f'ember.load: legacy torch file: unknown storage key {key!r}')
        data = roots[key].data
        count = f.read(8)
        nbytes = data.numel() * data.element_size()
        if len(count) != 8 or struct.unpack('<q', count)[0] != data.numel():
            raise RuntimeError(f'ember.load: legacy torch file: storage {key!r} has a bad size header')
        raw = f.read(nbytes)
        if len(raw) != nbytes:
            raise RuntimeError(f'ember.load: legacy torch file is truncated (storage {key!r})')
        if nbytes:
            data.copy_(_bytes_tensor(raw, data.dtype))
    return result


def load_torch(f, relocate):
    """Loads a torch.save file from the binary file object f (positioned at
    its start). relocate(tensor, location) -> tensor applies map_location."""
    start = f.tell()
    zipped = f.read(4) == b'PK\x03\x04'
    f.seek(start)
    try:
        return _load_zip(f, relocate) if zipped else _load_legacy(f, relocate)
    except (EOFError, pickle.UnpicklingError) as e:
        if isinstance(e, pickle.UnpicklingError) and str(e).startswith('ember.load'):
            raise
        raise pickle.UnpicklingError(f'ember.load: the pickle in the torch file is truncated or corrupt: {e}') \
            from None
