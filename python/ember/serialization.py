"""ember.save and ember.load.

`save` writes a safetensors file (the C writer: atomic when `f` is a path):
every tensor of `obj` is one entry, named by its path in the object with '.'
between keys ({'model': {'fc.weight': t}} -> "model.fc.weight"), and the
object's structure (containers, numbers, strings, None, which tensor goes
where) is JSON in the header's `__metadata__` under "ember.structure", so
`load` rebuilds the same object. Any safetensors reader sees plain named
tensors; a safetensors file without that key loads as a dict name -> tensor.

Shared tensors: the same tensor object, or tensors that are the same view of
the same memory (tied weights in a state dict), are stored once and load as
one tensor object at every place. Different views of one storage (x and x[0])
are stored as separate copies and no longer share memory after loading
(safetensors has no views). Non-contiguous tensors are stored in C order.
A process killed during `save` to a path leaves the old file intact and may
leave its temporary file, ".<name>.<pid>.<k>.tmp", beside it; `load` never
reads those (delete them at leisure).

`load` also reads files written by `torch.save` (zip and legacy formats)
without importing torch, through a restricted unpickler (ember/_torch_load.py).
"""
import base64
import collections
import io
import json
import os

from . import _C
from ._tensor import Tensor

__all__ = ['save', 'load']

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


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Saves obj (a tensor, or containers of tensors and plain data) to f (a
    path, written atomically, or a file object with write()) as safetensors.
    pickle_module, pickle_protocol and _use_new_zipfile_serialization are
    accepted for torch.save compatibility and ignored: no pickle is written."""
    flat = _Flattener()
    structure = flat.encode(obj, [])
    metadata = {'format': 'pt', STRUCTURE_KEY: json.dumps(structure, separators=(',', ':'))}
    if _is_path(f):
        _C._safetensors_save(os.fsdecode(f), flat.names, flat.tensors, metadata)
    else:
        _C._safetensors_save(f.write, flat.names, flat.tensors, metadata)


# ---- load -------------------------------------------------------------------

def _rebuild(node, tensors):
    if not isinstance(node, dict):
        return node
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
        items = [_rebuild(v, tensors) for v in value]
        return items if tag == 'list' else tuple(items)
    if tag in ('dict', 'odict'):
        pairs = [(_hashable(_rebuild(k, tensors)), _rebuild(v, tensors)) for k, v in value]
        if tag == 'dict':
            return dict(pairs)
        d = collections.OrderedDict(pairs)
        if 'metadata' in node:
            d._metadata = _rebuild(node['metadata'], tensors)
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
        if not location.startswith('cpu'):
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but ember has no CUDA device in this build. "
                "If you are running on a CPU-only machine, please use ember.load with "
                "map_location=ember.device('cpu') to map your storages to the CPU.")
        return t

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
    except (KeyError, ValueError, TypeError, AttributeError) as e:
        raise ValueError(f"ember.load: the file's {STRUCTURE_KEY} metadata is malformed: {e!r}") from None


def load(f, map_location=None, pickle_module=None, *, mmap=False, weights_only=False, **pickle_load_args):
    """Loads what ember.save or torch.save wrote to f (a path or a file object).
    safetensors files with mmap=True (and a path) share a private mapping of
    the file instead of reading it. torch.save files (zip or legacy) are
    always read through a restricted unpickler that only rebuilds tensors and
    plain data, whatever weights_only says (it never runs code from the file)."""
    from ._torch_load import is_torch_file, load_torch
    if _is_path(f):
        with open(f, 'rb') as fh:
            head = fh.read(64)
            if is_torch_file(head):
                fh.seek(0)
                return load_torch(fh, _map_location_fn(map_location))
        return _load_safetensors(_C._safetensors_load(os.fsdecode(f), bool(mmap)), map_location)
    start = f.tell() if f.seekable() else None
    head = f.read(64)
    if start is not None:
        f.seek(start)
    if is_torch_file(head):
        if start is None:
            f = io.BytesIO(head + f.read())
        return load_torch(f, _map_location_fn(map_location))
    data = f.read() if start is not None else head + f.read()
    return _load_safetensors(_C._safetensors_load_bytes(data), map_location)
