"""ember.cpu.amp: CPU autocast (torch.cpu.amp.autocast)."""
from ...amp.autocast_mode import autocast as _autocast
from ... import _C

__all__ = ['autocast']


class autocast(_autocast):
    """ember.autocast('cpu', ...) with the CPU's defaults (bfloat16)."""

    def __init__(self, enabled=True, dtype=_C.bfloat16, cache_enabled=True):
        super().__init__('cpu', dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
