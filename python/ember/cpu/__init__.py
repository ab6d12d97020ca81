"""ember.cpu: the CPU device's namespace (torch.cpu): amp."""
from . import amp

__all__ = ['amp']
