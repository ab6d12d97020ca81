"""Reading files written by torch.save (or ember.save), without torch.

Two layouts: the zip format (torch >= 1.6: <root>/data.pkl, a pickle whose
storages are persistent ids ('storage', torch.FloatStorage, key, location,
numel) with their bytes in <root>/data/<key>), and the legacy format (five
pickles and raw storages; framing in src/io/torch_legacy.c). The containers
are parsed in C (src/io/zip.c, src/io/torch_legacy.c), every size checked
against the file before anything is allocated. The object pickle is read:
- weights_only=True: by the C parser, which runs nothing, then rebuilt by the
  allowlisting walker (ember/_weights_only.py);
- weights_only=False (trusted files only: it can run any code): by Python's
  Unpickler, torch's globals mapped to ember's (torch.X -> ember.X).
"""
import importlib
import io
import pickle

from . import _C
from . import _weights_only as wo

_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_LEGACY_PREFIX = b'\x80\x02\x8a\x0a' + _LEGACY_MAGIC.to_bytes(10, 'little')


def is_torch_file(head):
    """Whether the first bytes of a file are a torch.save zip or legacy file."""
    return head.startswith(b'PK\x03\x04') or head.startswith(_LEGACY_PREFIX)


def _corrupt(e):
    return RuntimeError(f'ember.load: {e}')


def _check_pid(pid):
    """('storage', StorageType, key, location, numel[, view_metadata]) -> its fields."""
    if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == 'storage'
            and isinstance(pid[1], (wo.StorageType, _TrustedStorageType)) and isinstance(pid[2], str)
            and isinstance(pid[3], str) and isinstance(pid[4], int) and pid[4] >= 0):
        raise pickle.UnpicklingError(f'ember.load: unsupported persistent id {pid!r:.100}')
    view = pid[5] if len(pid) == 6 else None
    if view is not None and not (isinstance(view, tuple) and len(view) == 3 and all(isinstance(v, int) for v in view[1:])):
        raise pickle.UnpicklingError(f'ember.load: bad storage view {view!r:.100}')
    return pid[1].dtype, pid[2], pid[3], pid[4], view


class _TrustedStorageType:
    def __init__(self, dtype):
        self.dtype = dtype


class _TrustedUnpickler(pickle.Unpickler):
    """weights_only=False: any global, torch's names mapped to ember's."""

    def __init__(self, file, persistent_load):
        super().__init__(file, encoding='utf-8')
        self._persistent_load = persistent_load

    def find_class(self, module, name):
        if (module, name) in wo.ALLOWED:
            return wo.ALLOWED[(module, name)]
        st = wo._storage_type(module, name)
        if st is not None:
            return _TrustedStorageType(st.dtype)
        if module == 'torch' or module.startswith('torch.'):
            ours = 'ember' + module[len('torch'):]
            try:
                return getattr(importlib.import_module(ours), name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(f'ember.load: the file needs {module}.{name}, which ember lacks '
                                             f'({ours}.{name} does not exist)') from None
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._persistent_load(pid)


def _load_pickle(data, weights_only, persistent_load):
    if weights_only:
        try:
            tree, _ = _C._pickle_parse(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise pickle.UnpicklingError(f'ember.load: the pickle is malformed or uses unsupported opcodes: {e}') \
                from None
        return wo.load(tree, persistent_load)
    return _TrustedUnpickler(io.BytesIO(data), persistent_load).load()


def _load_zip(src, relocate, weights_only, mmap):
    try:
        z = _C._zip_open(src)
    except ValueError as e:
        raise _corrupt(e) from None
    names = _C._zip_names(z)
    pkl = [n for n in names if n.endswith('data.pkl') and n.count('/') == 1]
    if len(pkl) != 1:
        raise RuntimeError('ember.load: a torch.save zip file must hold exactly one <root>/data.pkl')
    root = pkl[0][:-len('data.pkl')]
    try:
        if root + 'byteorder' in names and _C._zip_read(z, root + 'byteorder') != b'little':
            raise RuntimeError('ember.load: big-endian torch files are not supported')
        data = _C._zip_read(z, pkl[0])
    except ValueError as e:
        raise _corrupt(e) from None
    storages = {}

    def load_storage(pid):
        dtype, key, location, numel, view = _check_pid(pid)
        if key not in storages:
            try:
                t = _C._zip_tensor(z, f'{root}data/{key}', dtype, mmap)
            except KeyError:
                raise RuntimeError(f'ember.load: storage {key} is missing from the zip file') from None
            except ValueError as e:
                raise _corrupt(e) from None
            if t.numel() < numel:
                raise RuntimeError(f'ember.load: storage {key} declares {numel} elements but holds {t.numel()}')
            storages[key] = wo.Storage(relocate(t[:numel] if t.numel() > numel else t, location), location)
        return storages[key]

    return _load_pickle(data, weights_only, load_storage)


def _load_legacy(data, relocate, weights_only):
    try:
        tree, records, object_at, object_len = _C._torch_legacy_parse(data)
    except UnicodeDecodeError as e:
        raise pickle.UnpicklingError(f'ember.load: the pickle is malformed: {e}') from None
    except ValueError as e:
        if str(e).startswith('pickle:'):  # the object pickle itself, not the framing
            raise pickle.UnpicklingError(f'ember.load: the pickle is malformed or uses unsupported opcodes: {e}') \
                from None
        raise RuntimeError(f'ember.load: {e}') from None
    roots = {}
    for key, dtype, numel, at in records:
        elsize = _C.empty(0, dtype=dtype).element_size()
        raw = data[at:at + numel * elsize]
        t = _C.frombuffer(bytearray(raw), dtype=dtype) if numel else _C.empty(0, dtype=dtype)
        roots[key] = t

    def load_storage(pid):
        if not weights_only and isinstance(pid, tuple) and len(pid) == 4 and pid[0] == 'module':
            return pid[1]  # legacy files name a module's class this way (with its source, unused)
        dtype, key, location, numel, view = _check_pid(pid)
        if key not in roots:
            raise pickle.UnpicklingError(f'ember.load: storage {key!r} is not in the file')
        entry = roots[key]
        data = entry.data if isinstance(entry, wo.Storage) else entry
        if data.dtype != dtype or data.numel() != numel:
            raise pickle.UnpicklingError(f'ember.load: storage {key!r} is declared with different types or sizes')
        if not isinstance(entry, wo.Storage):
            entry = roots[key] = wo.Storage(relocate(data, location), location)
        if view is None:
            return entry
        _, offset, size = view
        if offset < 0 or size < 0 or offset + size > numel:
            raise pickle.UnpicklingError(f'ember.load: storage view ({offset}, {size}) outside storage {key!r}')
        return wo.Storage(entry.data[offset:offset + size], location)

    if weights_only:
        return wo.load(tree, load_storage)
    return _TrustedUnpickler(io.BytesIO(bytes(data[object_at:object_at + object_len])), load_storage).load()


def load_torch(src, relocate, weights_only, mmap):
    """Loads a torch.save file: src is a path string (mapped) or the file's
    bytes. relocate(tensor, location) -> tensor applies map_location."""
    if isinstance(src, str):
        with open(src, 'rb') as f:
            zipped = f.read(4) == b'PK\x03\x04'
        if not zipped:
            if mmap:
                raise RuntimeError('ember.load: mmap=True needs a zip (torch >= 1.6) file, not a legacy one')
            with open(src, 'rb') as f:
                src = f.read()
    else:
        zipped = bytes(src[:4]) == b'PK\x03\x04'
    try:
        if zipped:
            return _load_zip(src, relocate, weights_only, mmap)
        return _load_legacy(memoryview(src), relocate, weights_only)
    except EOFError as e:
        raise pickle.UnpicklingError(f'ember.load: the pickle in the torch file is truncated: {e}') from None
