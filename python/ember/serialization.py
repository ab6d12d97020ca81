"""ember.save and ember.load.

`save` writes PyTorch's zip format (ember/_torch_save.py) for any picklable
object, so that torch.load reads what ember saves; a path ending in
".safetensors" or format='safetensors' writes safetensors instead (below).
Saves to a path are atomic: a process killed during `save` leaves the old
file intact and may leave its temporary file, ".<name>.<pid>.<k>.tmp",
beside it; `load` never reads those (delete them at leisure).

`load` tells the format from the file's first bytes (zip, legacy torch,
safetensors). Loading is safe by default (weights_only=True, as in current
PyTorch): only tensors, storages, containers, numbers, strings and
allowlisted globals are rebuilt (ember/_weights_only.py; add_safe_globals),
through a pickle parser that runs nothing. weights_only=False unpickles
anything, for trusted files; EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD=1 or
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 make it the default. Every pickle ember
reads from a file goes through this policy. (DataLoader workers pickle
batches to their parent over a private socket; they are the user's own
forked code, not a trust boundary, so that channel uses plain pickle.)

safetensors: every tensor of `obj` is one entry, named by its path in the
object with '.' between keys ({'model': {'fc.weight': t}} ->
"model.fc.weight"), and the object's structure (containers, numbers,
strings, None, which tensor goes where) is JSON in the header's
`__metadata__` under "ember.structure", so `load` rebuilds the same object.
Any safetensors reader sees plain named tensors; a safetensors file without
that key loads as a dict name -> tensor. The same tensor object, or tensors
that are the same view of the same memory (tied weights), are stored once;
different views of one storage are stored as separate copies (safetensors
has no views). Non-contiguous tensors are stored in C order.
"""
import base64
import collections
import json
import os
import pickle

from . import _C
from ._tensor import Tensor

from ._weights_only import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ['save', 'load', 'add_safe_globals', 'clear_safe_globals', 'get_safe_globals', 'safe_globals']

MAX_STRUCTURE_DEPTH = 400  # nesting of a safetensors file's structure metadata

STRUCTURE_KEY = 'ember.structure'


# ---- save -------------------------------------------------------------------

class _Flattener:
    """Turns an object into (names, tensors, JSON structure)."""

    def __init__(self):
        self.names, self.tensors = [], []
        self.taken = {'__metadata__'}
        self.by_id = {}    # id(tensor) -> name
        self.by_view = {}  # (data_ptr, dtype, shape, stride) -> name: same memory, same view

    def tensor(self, t, path):
        name = self.by_id.get(id(t))
        if name is None and t.numel() > 0:
            name = self.by_view.get((t.data_ptr(), t.dtype, tuple(t.shape), t.stride()))
        if name is None:
            name = '.'.join(path) or 'tensor'
            k = 1
            while name in self.taken:
                name, k = f"{'.'.join(path) or 'tensor'}#{k}", k + 1
            self.taken.add(name)
            self.names.append(name)
            self.tensors.append(t)
            if t.numel() > 0:
                self.by_view[(t.data_ptr(), t.dtype, tuple(t.shape), t.stride())] = name
        self.by_id[id(t)] = name
        node = {'T': name}
        from .nn.parameter import Parameter
        if isinstance(t, Parameter):
            node['param'] = t.requires_grad
        elif t.requires_grad:
            node['requires_grad'] = True
        return node

    def encode(self, obj, path):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, float)):
            return int(obj) if isinstance(obj, int) else float(obj)
        if isinstance(obj, Tensor):
            return self.tensor(obj, path)
        if isinstance(obj, _C.Size):
            return {'size': list(obj)}
        if isinstance(obj, (list, tuple)):
            items = [self.encode(v, path + [str(i)]) for i, v in enumerate(obj)]
            return {'tuple' if isinstance(obj, tuple) else 'list': items}
        if isinstance(obj, dict):
            items = [[self.encode(k, path + ['key']), self.encode(v, path + [str(k)])] for k, v in obj.items()]
            if not isinstance(obj, collections.OrderedDict):
                return {'dict': items}
            node = {'odict': items}
            if hasattr(obj, '_metadata'):  # a state dict's per-module versions
                node['metadata'] = self.encode(obj._metadata, path + ['_metadata'])
            return node
        if isinstance(obj, (bytes, bytearray)):
            return {'bytes': base64.b64encode(obj).decode('ascii')}
        if isinstance(obj, _C.dtype):
            return {'dtype': str(obj).split('.')[-1]}
        if isinstance(obj, _C.device):
            return {'device': str(obj)}
        raise TypeError(f"ember.save: cannot save an object of type {type(obj).__name__} "
                        f"(at '{'.'.join(path)}'): it saves tensors, containers (dict, OrderedDict, list, tuple) "
                        "and numbers, strings, bytes, None, dtypes and devices")


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def _safetensors_path(f):
    return _is_path(f) and os.fsdecode(f).endswith('.safetensors')


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True, *, format=None):
    """Saves obj to f (a path or os.PathLike, written atomically, or a file
    object with write()): in PyTorch's zip format (any picklable object), or
    as safetensors when format='safetensors' or the path ends in
    '.safetensors' (tensors, containers and plain data only)."""
    if format not in (None, 'torch', 'safetensors'):
        raise ValueError(f"ember.save: format must be 'torch' or 'safetensors', not {format!r}")
    if format == 'safetensors' or (format is None and _safetensors_path(f)):
        flat = _Flattener()
        structure = flat.encode(obj, [])
        metadata = {'format': 'pt', STRUCTURE_KEY: json.dumps(structure, separators=(',', ':'))}
        dest = os.fsdecode(f) if _is_path(f) else f.write
        _C._safetensors_save(dest, flat.names, flat.tensors, metadata)
        return
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError('ember.save: only the standard pickle module is supported')
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember.save: the legacy (pre-1.6) format is read but not written; "
                                  "save with the default zip format")
    from ._torch_save import save_zip
    if not _is_path(f) and not callable(getattr(f, 'write', None)):
        raise AttributeError(f"ember.save: f must be a path or a file object with write(), not {type(f).__name__}")
    save_zip(obj, os.fsdecode(f) if _is_path(f) else f.write, pickle_protocol or 2)


# ---- load -------------------------------------------------------------------

def _rebuild(node, tensors, depth=0):
    if not isinstance(node, dict):
        return node
    if depth > MAX_STRUCTURE_DEPTH:
        raise ValueError(f'ember.load: the structure metadata nests deeper than {MAX_STRUCTURE_DEPTH} levels')
    if 'T' in node:
        t = tensors[node['T']]
        if 'param' in node:
            from .nn.parameter import Parameter
            if not isinstance(t, Parameter):
                t = tensors[node['T']] = Parameter(t, node['param'])
        elif node.get('requires_grad') and not t.requires_grad:
            t.requires_grad_(True)
        return t
    (tag, value), = [(k, v) for k, v in node.items() if k != 'metadata']
    if tag in ('list', 'tuple'):
        items = [_rebuild(v, tensors, depth + 1) for v in value]
        return items if tag == 'list' else tuple(items)
    if tag in ('dict', 'odict'):
        pairs = [(_hashable(_rebuild(k, tensors, depth + 1)), _rebuild(v, tensors, depth + 1)) for k, v in value]
        if tag == 'dict':
            return dict(pairs)
        d = collections.OrderedDict(pairs)
        if 'metadata' in node:
            d._metadata = _rebuild(node['metadata'], tensors, depth + 1)
        return d
    if tag == 'size':
        return _C.Size(value)
    if tag == 'bytes':
        return base64.b64decode(value)
    if tag == 'dtype':
        return getattr(_C, value)
    if tag == 'device':
        return _C.device(value)
    raise ValueError(f"ember.load: unknown node {tag!r} in the file's structure")


def _hashable(k):
    return tuple(_hashable(x) for x in k) if isinstance(k, list) else k


def _map_location_fn(map_location):
    """map_location as a function (tensor, location string) -> tensor, as torch.load takes it."""
    def restore(t, location):
        if location.startswith('cpu'):
            return t
        try:
            return t.to(location)
        except (RuntimeError, ValueError, TypeError):
            raise RuntimeError(
                f"Attempting to deserialize object on {'a CUDA device' if location.startswith('cuda') else 'device'} "
                f"'{location}', which ember cannot use here. "
                "If you are running on a CPU-only machine, please use ember.load with "
                "map_location=ember.device('cpu') to map your storages to the CPU.") from None

    if map_location is None:
        return restore
    if isinstance(map_location, dict):
        return lambda t, loc: restore(t, str(map_location.get(loc, loc)))
    if isinstance(map_location, (str, _C.device)):
        return lambda t, loc: restore(t, str(map_location))
    if callable(map_location):
        def call(t, loc):
            r = map_location(t, loc)
            return restore(t, loc) if r is None else r
        return call
    raise TypeError(f"map_location must be None, a str, a device, a dict or a callable, "
                    f"not {type(map_location).__name__}")


def _load_safetensors(contents, map_location):
    names, tensors, metadata = contents
    relocate = _map_location_fn(map_location)
    by_name = {n: relocate(t, 'cpu') for n, t in zip(names, tensors)}
    if STRUCTURE_KEY not in metadata:
        return by_name
    try:
        structure = json.loads(metadata[STRUCTURE_KEY])
        return _rebuild(structure, by_name)
    except RecursionError:
        raise ValueError(f'ember.load: the {STRUCTURE_KEY} metadata nests too deeply') from None
    except (KeyError, ValueError, TypeError, AttributeError) as e:
        raise ValueError(f"ember.load: the file's {STRUCTURE_KEY} metadata is malformed: {e!r}") from None


def _weights_only_default():
    for var in ('EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD', 'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'):
        if os.environ.get(var, '').strip().lower() in ('1', 'y', 'yes', 'true'):
            return False
    return True


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads what ember.save or torch.save wrote to f (a path, os.PathLike or
    a file object), telling the format from its first bytes.
    weights_only (default True unless EMBER_/TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD
    is set): rebuild only tensors, containers, plain data and allowlisted
    globals; False unpickles anything (trusted files only).
    map_location: a str, device, dict {saved location: location} or
    callable(storage, location). mmap=True (a path only): tensors share a
    private mapping of the file instead of being read (zip and safetensors)."""
    from ._torch_load import is_torch_file, load_torch
    if weights_only is None:
        weights_only = _weights_only_default()
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError('ember.load: only the standard pickle module is supported')
    relocate = _map_location_fn(map_location)
    if _is_path(f):
        path = os.fsdecode(f)
        with open(path, 'rb') as fh:
            head = fh.read(64)
        if is_torch_file(head):
            return load_torch(path, relocate, weights_only, bool(mmap))
        return _load_safetensors(_C._safetensors_load(path, bool(mmap)), map_location)
    if mmap:
        raise ValueError('ember.load: mmap=True needs f to be a path (a file object cannot be mapped)')
    data = f.read()
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError('ember.load: the file object must be opened in binary mode')
    if is_torch_file(data[:64]):
        return load_torch(data, relocate, weights_only, False)
    return _load_safetensors(_C._safetensors_load_bytes(data), map_location)
