"""ember.amp: automatic mixed precision's entry points (torch.amp).

Ember has no autocast yet: `autocast(..., enabled=False)` is the no-op
context manager and decorator PyTorch's is, a CUDA autocast without a GPU
warns and disables itself as PyTorch does, and asking for a CPU autocast
raises NotImplementedError instead of silently running in float32. The
module-level state queries (ember.is_autocast_enabled, ...) answer for that
state: autocast is never on.
"""
import functools
import warnings

from .. import _C


class autocast:
    """Context manager / decorator for autocast regions (only disabled regions in Ember)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if device_type not in ('cuda', 'cpu'):
            raise RuntimeError("User specified autocast device_type must be 'cuda' or 'cpu'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else (_C.bfloat16 if device_type == 'cpu' else _C.float16)
        if enabled and device_type == 'cuda':
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
                enabled = False
        if enabled:
            raise NotImplementedError(f'autocast on device {device_type} is not implemented in Ember; '
                                      'use enabled=False or cast the model explicitly')
        self._enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorated


# ---- the autocast state (torch.is_autocast_enabled, ...): never on in Ember ----
_fast_dtypes = {'cpu': _C.bfloat16, 'cuda': _C.float16}
_cache_enabled = [True]


def is_autocast_enabled():
    return False


def is_autocast_cpu_enabled():
    return False


def _refuse_enabling(device):
    def set_enabled(enabled):
        if enabled:
            raise NotImplementedError(f'autocast on device {device} is not implemented in Ember')
    set_enabled.__name__ = 'set_autocast_enabled' if device == 'cuda' else 'set_autocast_cpu_enabled'
    return set_enabled


set_autocast_enabled = _refuse_enabling('cuda')
set_autocast_cpu_enabled = _refuse_enabling('cpu')


def get_autocast_cpu_dtype():
    return _fast_dtypes['cpu']


def get_autocast_gpu_dtype():
    return _fast_dtypes['cuda']


def set_autocast_cpu_dtype(dtype):
    _fast_dtypes['cpu'] = dtype


def set_autocast_gpu_dtype(dtype):
    _fast_dtypes['cuda'] = dtype


def is_autocast_cache_enabled():
    return _cache_enabled[0]


def set_autocast_cache_enabled(enabled):
    _cache_enabled[0] = bool(enabled)


def clear_autocast_cache():
    pass


_nesting = [0]


def autocast_increment_nesting():
    _nesting[0] += 1
    return _nesting[0]


def autocast_decrement_nesting():
    _nesting[0] -= 1
    return _nesting[0]


# the names ember's top level takes from here (ember/__init__.py's lazy attributes)
TOP_LEVEL = ('autocast', 'is_autocast_enabled', 'is_autocast_cpu_enabled', 'set_autocast_enabled',
             'set_autocast_cpu_enabled', 'get_autocast_cpu_dtype', 'get_autocast_gpu_dtype',
             'set_autocast_cpu_dtype', 'set_autocast_gpu_dtype', 'is_autocast_cache_enabled',
             'set_autocast_cache_enabled', 'clear_autocast_cache', 'autocast_increment_nesting',
             'autocast_decrement_nesting')
