"""ember.backends.cudnn: cuDNN's switches. Ember does not use cuDNN: is_available() is False,
version() None, and the flags are kept (programs set benchmark/deterministic) but steer nothing."""
import sys

from . import _flags_of, _guard

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True
CUDNN_TENSOR_DTYPES = set()


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None):
    """Sets the given flags; returns the previous values of all five."""
    global enabled, benchmark, benchmark_limit, deterministic, allow_tf32
    previous = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    if _enabled is not None:
        enabled = _enabled
    if _benchmark is not None:
        benchmark = _benchmark
    if _benchmark_limit is not None:
        benchmark_limit = _benchmark_limit
    if _deterministic is not None:
        deterministic = _deterministic
    if _allow_tf32 is not None:
        allow_tf32 = _allow_tf32
    return previous


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Context manager: sets all five flags (PyTorch's defaults when not given) and restores them on exit."""
    return _flags_of(sys.modules[__name__], enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                     deterministic=deterministic, allow_tf32=allow_tf32)


_guard(sys.modules[__name__], ('enabled', 'benchmark', 'deterministic', 'allow_tf32'))  # frozen by disable_global_flags()
