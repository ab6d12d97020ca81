"""ember.cuda.amp: CUDA mixed precision (torch.cuda.amp).

Without a GPU both halves disable themselves with PyTorch's warnings:
autocast() runs its region unchanged, and GradScaler passes losses and
steps through unscaled (scale 1.0), so training scripts written for AMP run
in float32 on the CPU.
"""
import functools
import warnings

from .. import _C
from ..amp import autocast as _autocast


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=_C.float16, cache_enabled=True):
        super().__init__('cuda', dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorator for a custom Function's forward under autocast (runs it as is: autocast is never on)."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    return bwd


class GradScaler:
    """Loss scaling for float16 training; disabled (scale 1.0, a plain step) without a GPU."""

    def __init__(self, init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        from . import is_available
        if enabled and not is_available():
            warnings.warn('torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.')
            enabled = False
        if enabled:
            raise NotImplementedError('GradScaler on a GPU is not implemented in Ember yet')
        self._enabled = False

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def _disabled_setting(self):
        raise AttributeError("'GradScaler' object is disabled: its growth settings are not kept")

    def get_growth_factor(self):
        self._disabled_setting()

    def set_growth_factor(self, new_factor):
        self._disabled_setting()

    def get_backoff_factor(self):
        self._disabled_setting()

    def set_backoff_factor(self, new_factor):
        self._disabled_setting()

    def get_growth_interval(self):
        self._disabled_setting()

    def set_growth_interval(self, new_interval):
        self._disabled_setting()

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass  # a disabled scaler keeps no state, as PyTorch's
