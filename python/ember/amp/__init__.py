"""ember.amp: automatic mixed precision (torch.amp). See autocast_mode."""
from .autocast_mode import autocast

__all__ = ['autocast']
