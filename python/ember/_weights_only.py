"""The one unpickling policy of ember.load with weights_only=True.

Every pickle ember.load reads (a zip file's data.pkl, a legacy file's
object) is first parsed by the C parser (src/io/pickle.c), which never runs
anything, into a graph of nodes. This walker rebuilds the object from that
graph and is the only place where a pickle's globals turn into Python
objects: tensors, storages, containers, numbers, strings and the allowlist
below (plus what add_safe_globals adds). Anything else raises
pickle.UnpicklingError naming the global and how to allow it.
"""
import collections
import pickle
import sys

from . import _C
from ._storage import TypedStorage, UntypedStorage

# node kinds (em_pk_kind, include/ember/pickle.h)
(NONE, BOOL, INT, BIGINT, FLOAT, STR, BYTES, BYTEARRAY, TUPLE, LIST, DICT, SET, FROZENSET, GLOBAL, CALL,
 PERSID) = range(16)

MAX_DEPTH = 200  # nesting of containers and calls; deeper pickles are refused (not RecursionError)

_safe_globals = {}  # (module, name) -> object, from add_safe_globals


def _name_of(obj):
    if isinstance(obj, tuple) and len(obj) == 2 and all(isinstance(x, str) for x in obj):
        return obj
    module, name = getattr(obj, '__module__', None), getattr(obj, '__qualname__', getattr(obj, '__name__', None))
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(f'add_safe_globals: cannot tell the module and name of {obj!r}; pass (obj, "module.name")')
    return module, name


def add_safe_globals(safe_globals):
    """Allows weights_only loads to use these globals (classes or functions,
    or (obj, "module.name") pairs for objects saved under another name)."""
    for g in safe_globals:
        if isinstance(g, tuple) and len(g) == 2 and isinstance(g[1], str):
            module, _, name = g[1].rpartition('.')
            _safe_globals[(module, name)] = g[0]
        else:
            _safe_globals[_name_of(g)] = g


def get_safe_globals():
    return list(_safe_globals.values())


def clear_safe_globals():
    _safe_globals.clear()


class safe_globals:
    """Context manager: add_safe_globals for the duration of a with block."""

    def __init__(self, globals_list):
        self.globals_list = globals_list

    def __enter__(self):
        self.saved = dict(_safe_globals)
        add_safe_globals(self.globals_list)

    def __exit__(self, *exc):
        _safe_globals.clear()
        _safe_globals.update(self.saved)


def _refuse(what):
    raise pickle.UnpicklingError(
        f"Weights only load failed. {what}. This file needs more than tensors, containers and plain data: "
        "if you trust it, load it with ember.load(..., weights_only=False) (it can run code), or allow the "
        "global with ember.serialization.add_safe_globals([...]) or the ember.serialization.safe_globals([...]) "
        "context manager.")


class Storage(TypedStorage):
    """A loaded storage: `data` is a 1-d tensor of its dtype over all of it
    (what a file's storage loads as when it appears by itself)."""

    def __init__(self, data, location):
        self._set(UntypedStorage._wrap(data), data.dtype)
        self.data, self.location = data, location


def rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    """torch._utils._rebuild_tensor_v2, with the view checked against its storage."""
    if not isinstance(storage, Storage):
        raise pickle.UnpicklingError('ember.load: a tensor refers to something that is not a storage')
    try:
        size, stride, offset = tuple(int(x) for x in size), tuple(int(x) for x in stride), int(storage_offset)
    except (TypeError, ValueError):
        raise pickle.UnpicklingError('ember.load: a tensor has a malformed size, stride or offset') from None
    n = storage.data.numel()
    if len(size) != len(stride) or offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise pickle.UnpicklingError(f'ember.load: bad tensor view (size {size}, stride {stride}, offset {offset})')
    if 0 not in size and offset + sum((s - 1) * st for s, st in zip(size, stride)) >= n:
        raise pickle.UnpicklingError(f'ember.load: a tensor of size {size}, stride {stride} at offset {offset} '
                                     f'runs past its storage of {n} elements (a corrupt or hostile file)')
    if 0 in size and offset > n:
        raise pickle.UnpicklingError(f'ember.load: a tensor starts at {offset}, past its storage of {n} elements')
    t = _C.as_strided(storage.data, size, stride, offset).detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor_v1(storage, storage_offset, size, stride):
    return rebuild_tensor(storage, storage_offset, size, stride)


def rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from ._tensor import Tensor
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError('ember.load: a Parameter of something that is not a tensor')
    if state:
        raise pickle.UnpicklingError('ember.load: Parameters with Python attributes are not supported')
    return Parameter(data, bool(requires_grad))


def _tensor_type(*args):
    raise pickle.UnpicklingError('ember.load: torch.Tensor cannot be called from a checkpoint')


def rebuild_from_type_v2(func, new_type, args, state):
    if func not in (rebuild_tensor, rebuild_tensor_v1):
        raise pickle.UnpicklingError('ember.load: _rebuild_from_type_v2 may only rebuild a tensor')
    t = func(*args)
    if new_type is rebuild_parameter:
        t = rebuild_parameter(t, t.requires_grad)
    elif new_type is not _tensor_type:
        raise pickle.UnpicklingError('ember.load: only Tensor and Parameter tensor types can be loaded')
    if state:
        raise pickle.UnpicklingError('ember.load: tensors with Python attributes cannot be loaded with weights_only')
    return t


def _codecs_encode(text, encoding='utf-8'):
    """Protocol-2 pickles write bytes as _codecs.encode(str, 'latin1')."""
    if not isinstance(text, str) or encoding not in ('latin1', 'latin-1', 'utf-8', 'utf8'):
        raise pickle.UnpicklingError('ember.load: unexpected _codecs.encode arguments')
    return text.encode(encoding)


def _device(*args):
    return _C.device(*args)


def _ordered_dict(*args):
    if args and not (len(args) == 1 and isinstance(args[0], (list, tuple))):
        raise pickle.UnpicklingError('ember.load: unexpected OrderedDict arguments')
    return collections.OrderedDict(*args)


_DTYPE_NAMES = {'float64', 'double', 'float32', 'float', 'float16', 'half', 'bfloat16', 'int64', 'long',
                'int32', 'int', 'int16', 'short', 'int8', 'uint8', 'bool'}

ALLOWED = {
    ('torch._utils', '_rebuild_tensor_v2'): rebuild_tensor,
    ('torch._utils', '_rebuild_tensor'): rebuild_tensor_v1,
    ('torch._utils', '_rebuild_parameter'): rebuild_parameter,
    ('torch._utils', '_rebuild_parameter_with_state'): rebuild_parameter,
    ('torch._tensor', '_rebuild_from_type_v2'): rebuild_from_type_v2,
    ('torch', 'Tensor'): _tensor_type,
    ('torch.nn.parameter', 'Parameter'): rebuild_parameter,
    ('torch', 'Size'): _C.Size,
    ('torch', 'device'): _device,
    ('collections', 'OrderedDict'): _ordered_dict,
    ('builtins', 'set'): set,
    ('builtins', 'frozenset'): frozenset,
    ('builtins', 'complex'): complex,
    ('builtins', 'bytearray'): bytearray,
    ('_codecs', 'encode'): _codecs_encode,
}
for _n in _DTYPE_NAMES:
    ALLOWED[('torch', _n)] = getattr(_C, _n)
for _n in ('set', 'frozenset', 'complex', 'bytearray'):  # protocol <= 2 pickles name Python 2's module
    ALLOWED[('__builtin__', _n)] = ALLOWED[('builtins', _n)]
_CALLABLE = {rebuild_tensor, rebuild_tensor_v1, rebuild_parameter, rebuild_from_type_v2, _C.Size, _device,
             _ordered_dict, set, frozenset, complex, bytearray, _codecs_encode}


class StorageType:
    """A torch.<T>Storage global: only meaningful inside a persistent id."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype


def _storage_type(module, name):
    from ._torch_save import _STORAGE_NAMES
    if module == 'torch' and name == 'UntypedStorage':  # torch 2.x: a storage saved by itself, untyped
        return StorageType(name, _C.uint8)
    for dtype_name, storage_name in _STORAGE_NAMES.items():
        if module == 'torch' and name == storage_name:
            return StorageType(name, getattr(_C, dtype_name))
    return None


def resolve_global(module, name):
    if (module, name) in ALLOWED:
        return ALLOWED[(module, name)]
    st = _storage_type(module, name)
    if st is not None:
        return st
    if (module, name) in _safe_globals:
        return _safe_globals[(module, name)]
    _refuse(f'Unsupported global: GLOBAL {module}.{name} was not an allowed global by default')


class Walker:
    """Rebuilds objects from the parser's nodes; persistent_load(pid tuple) -> Storage."""

    def __init__(self, nodes, persistent_load):
        self.nodes, self.persistent_load, self.built = nodes, persistent_load, {}

    def build(self, i, depth=0):
        if i in self.built:
            return self.built[i]
        if depth > MAX_DEPTH:
            raise pickle.UnpicklingError(f'ember.load: the pickle nests deeper than {MAX_DEPTH} levels')
        kind, value, kids, sets, appends, state = self.nodes[i]
        d = depth + 1
        if kind in (NONE, BOOL, INT, FLOAT, STR, BYTES):
            obj = value
        elif kind == BIGINT:
            obj = int.from_bytes(value, 'little', signed=True)
        elif kind == BYTEARRAY:
            obj = bytearray(value)
        elif kind == TUPLE:
            obj = tuple(self.build(k, d) for k in kids)
        elif kind in (LIST, DICT, SET):
            obj = self.built[i] = {LIST: list, DICT: dict, SET: set}[kind]()  # before the items: cycles
            if kind == LIST:
                obj.extend(self.build(k, d) for k in kids)
            elif kind == SET:
                obj.update(self.hashable(self.build(k, d)) for k in kids)
            else:
                for k in range(0, len(kids), 2):
                    obj[self.hashable(self.build(kids[k], d))] = self.build(kids[k + 1], d)
        elif kind == FROZENSET:
            obj = frozenset(self.hashable(self.build(k, d)) for k in kids)
        elif kind == GLOBAL:
            obj = resolve_global(*value)
        elif kind == PERSID:
            pid = self.build(kids[0], d)
            obj = self.persistent_load(pid)
        else:
            obj = self.call(i, kids, sets, appends, state, value, d)
        self.built[i] = obj
        return obj

    @staticmethod
    def hashable(k):
        try:
            hash(k)
        except TypeError:
            raise pickle.UnpicklingError(f'ember.load: unhashable dict key or set item of type {type(k).__name__}')
        return k

    def call(self, i, kids, sets, appends, state, newobj, d):
        func = self.build(kids[0], d)  # refuses unknown globals, also inside persistent ids
        if self.nodes[kids[0]][0] != GLOBAL:
            _refuse('A call of something that is not a global (a getattr chain or a call result)')
        module, name = self.nodes[kids[0]][1]
        user = (module, name) in _safe_globals and (module, name) not in ALLOWED
        if not user and func not in _CALLABLE:
            _refuse(f'{module}.{name} may not be called')
        args = self.build(kids[1], d)
        kwargs = self.build(kids[2], d) if len(kids) > 2 else {}
        if newobj:
            if not isinstance(func, type):
                _refuse(f'NEWOBJ of {module}.{name}, which is not a class')
            obj = func.__new__(func, *args, **kwargs)
        else:
            obj = func(*args, **kwargs)
        self.built[i] = obj
        if sets:
            if not isinstance(obj, dict):
                _refuse(f'SETITEMS on a {type(obj).__name__}')
            for k in range(0, len(sets), 2):
                obj[self.hashable(self.build(sets[k], d))] = self.build(sets[k + 1], d)
        if appends:
            if not isinstance(obj, list):
                _refuse(f'APPENDS on a {type(obj).__name__}')
            obj.extend(self.build(k, d) for k in appends)
        if state >= 0:
            self.set_state(obj, self.build(state, d), user)
        return obj

    @staticmethod
    def set_state(obj, state, user):
        """BUILD: attributes of an OrderedDict (a state dict's _metadata) or an allowlisted user object."""
        if user:
            if hasattr(obj, '__setstate__'):
                obj.__setstate__(state)
            elif isinstance(state, dict):
                obj.__dict__.update(state)
            else:
                _refuse(f'BUILD of a {type(obj).__name__} with a non-dict state')
        elif isinstance(obj, collections.OrderedDict) and isinstance(state, dict) and \
                all(isinstance(k, str) and not k.startswith('__') for k in state):
            for k, v in state.items():
                setattr(obj, k, v)
        else:
            _refuse(f'BUILD (setting the state) of a {type(obj).__name__}')


def load(tree, persistent_load):
    nodes, root = tree
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 5 * MAX_DEPTH)  # a level costs a few Python frames
    try:
        return Walker(nodes, persistent_load).build(root)
    finally:
        sys.setrecursionlimit(limit)
