"""autocast: PyTorch's mixed-precision regions over Ember's per-thread
autocast state (include/ember/autocast.h: which ops cast to what).

On the CPU, matrix products and convolutions compute in bfloat16 and losses
in float32 inside the region; other ops run in their inputs' dtype. As in
PyTorch 1.13, the CPU accepts only bfloat16 (another dtype warns and
disables the region), and CUDA regions are disabled with a warning when
there is no CUDA device."""
import functools
import warnings

from .. import _C

__all__ = ['autocast']


class autocast:
    """`with autocast(device_type='cpu', dtype=ember.bfloat16):` or as a
    decorator; enabled=False makes a region with autocast off inside."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if device_type not in ('cpu', 'cuda'):
            raise RuntimeError(f"User specified autocast device_type must be 'cuda' or 'cpu', but got {device_type}")
        self.device = device_type
        self.fast_dtype = _C.get_autocast_cpu_dtype() if device_type == 'cpu' else _C.get_autocast_gpu_dtype()
        if dtype is not None:
            self.fast_dtype = dtype
        self._cache_enabled = _C.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        if enabled and device_type == 'cuda' and not _C._is_autocast_available('cuda'):
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        if enabled and device_type == 'cpu' and self.fast_dtype != _C.bfloat16:
            warnings.warn('In CPU autocast, but the target dtype is not supported. Disabling autocast.\n'
                          'CPU Autocast only supports dtype of torch.bfloat16 currently.')
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        self._prev_cache = _C.is_autocast_cache_enabled()
        if self.device == 'cpu':
            self._prev, self._prev_dtype = _C.is_autocast_cpu_enabled(), _C.get_autocast_cpu_dtype()
            _C.set_autocast_cpu_enabled(self._enabled)
            if self._enabled:
                _C.set_autocast_cpu_dtype(self.fast_dtype)
        else:
            self._prev = _C.is_autocast_enabled()
        _C.autocast_increment_nesting()
        _C.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        if _C.autocast_decrement_nesting() == 0:
            _C.clear_autocast_cache()
        if self.device == 'cpu':
            _C.set_autocast_cpu_enabled(self._prev)
            _C.set_autocast_cpu_dtype(self._prev_dtype)
        _C.set_autocast_cache_enabled(self._prev_cache)
        return False

    def __call__(self, func):
        settings = (self.device, self.fast_dtype, self._enabled, self._cache_enabled)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(*settings):  # a fresh region per call
                return func(*args, **kwargs)
        return decorated
