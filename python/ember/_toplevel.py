"""Top-level names that load on first use (ember/__init__.py's __getattr__ asks `lookup`): the
legacy tensor types, layouts and memory formats, autocast, global switches
(deterministic algorithms, matmul precision, warn-always, flush-denormal), build facts (has_cuda...)
and ember.compile. Keeping them out of `import ember` keeps the import fast."""
import math
import warnings

from . import _C

# name -> the module (relative to ember) that defines it
_FROM = {}
for _module, _names in (('._memory_format', ('memory_format', 'layout', 'contiguous_format', 'channels_last',
                                             'channels_last_3d', 'preserve_format', 'legacy_contiguous_format',
                                             'strided')),
                        ('._legacy', ('set_default_tensor_type',)),
                        ('.overrides', ('DisableTorchFunction',)),
                        ('._rnn_functions', ('rnn_tanh', 'rnn_relu', 'lstm', 'gru')),
                        ('._storage', ('StorageBase', 'UntypedStorage', 'TypedStorage', 'from_file')),
                        ('.amp', ('autocast',))):  # the autocast state functions are _C's
    _FROM.update(dict.fromkeys(_names, _module))
del _module, _names

# ---- build facts and constants ----
e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
has_cuda = _C._cuda_is_built()
has_cudnn = False
has_mkl = False
has_mps = False
has_mkldnn = _C._has_mkldnn()
has_openmp = True
has_lapack = True   # OpenBLAS bundles LAPACK
has_spectral = True   # ember.fft
_state = {'deterministic': False, 'warn_only': False, 'matmul_precision': 'highest', 'warn_always': False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Asks for deterministic algorithms. Ember's CPU kernels are deterministic already (no atomics,
    fixed reduction orders), so this records the setting for programs that query it."""
    _state['deterministic'], _state['warn_only'] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state['deterministic']


def is_deterministic_algorithms_warn_only_enabled():
    return _state['warn_only']


def set_deterministic_debug_mode(debug_mode):
    modes = {'default': 0, 'warn': 1, 'error': 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError('invalid value of debug_mode, expected one of `default`, `warn`, `error`, but '
                               f'got {debug_mode}')
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f'invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}')
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state['deterministic']:
        return 0
    return 1 if _state['warn_only'] else 2


def set_float32_matmul_precision(precision):
    """'highest', 'high' or 'medium'. Ember's float32 matmuls always run in full float32 (no TF32
    on the CPU), the 'highest' precision; the setting is recorded."""
    if precision not in ('highest', 'high', 'medium'):
        raise RuntimeError(f'Invalid precision: {precision!r}, expected one of highest, high, medium')
    _state['matmul_precision'] = precision


def get_float32_matmul_precision():
    return _state['matmul_precision']


def set_warn_always(b):
    """When True, warnings PyTorch gives once per process are given every time."""
    _state['warn_always'] = bool(b)


def is_warn_always_enabled():
    return _state['warn_always']


def set_flush_denormal(mode):
    """Flushes denormal floats to zero on this thread's CPU (SSE's FTZ and DAZ); True if supported."""
    return _C._set_flush_denormal(bool(mode))


class FatalError(Exception):
    """torch.FatalError: an unrecoverable error (Ember raises none of its own; programs may catch it)."""


class Stream:
    """torch.Stream, the base of the device streams (ember.cuda.Stream...): the queue a device runs
    work from. Ember's CPU runs work in order on the calling thread, so its stream is just a device."""
    __hash__ = None

    def __init__(self):
        self.device = _C.device('cpu', 0)


def compiled_with_cxx11_abi():
    """True: Ember has no C++ in its library, and compiler toolchains of today (and Ember's build)
    default to the C++11 ABI, which a C++ extension built beside it should use."""
    return True


def is_storage(obj):
    """True for Ember's storage objects (ember.UntypedStorage, ember.TypedStorage...)."""
    cls = type(obj)
    return cls.__module__.split('.')[0] == 'ember' and cls.__name__.endswith('Storage')


def typename(o):
    """The type name of o: a tensor's type string ('torch.FloatTensor'), else module.qualname."""
    from ._tensor import Tensor
    if isinstance(o, Tensor):
        return o.type()
    module = getattr(o, '__module__', None) or ''
    if module in ('', 'builtins', '__builtin__') or module is None:
        module = ''
    else:
        module += '.'
    if hasattr(o, '__qualname__'):
        return module + o.__qualname__
    if hasattr(o, '__name__'):
        return module + o.__name__
    return module + o.__class__.__name__ if module else o.__class__.__name__


_compile_noted = [False]


def compile(model=None, *, fullgraph=False, dynamic=False, backend='inductor', mode=None, options=None,
            disable=False):
    """Returns the model or function unchanged (Ember runs eagerly), with a one-time note; without
    a model, a decorator that does the same."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not _compile_noted[0]:
        _compile_noted[0] = True
        warnings.warn('ember.compile returns the model unchanged: Ember runs eagerly', stacklevel=2)
    return model


def lookup(name):
    """The value of the lazily loaded top-level name, or AttributeError."""
    if name in _FROM:
        import importlib
        return getattr(importlib.import_module(_FROM[name], 'ember'), name)
    from ._legacy import TYPES
    if name in TYPES:
        return TYPES[name]
    from ._storage import LEGACY
    if name in LEGACY or name == 'Storage':
        return LEGACY.get(name, LEGACY['FloatStorage'])  # torch 1.13's Storage is FloatStorage
    value = globals().get(name)
    if value is None or name.startswith('_') or name in ('lookup', 'math', 'warnings'):
        raise AttributeError(f"module 'ember' has no attribute '{name}'")
    return value
