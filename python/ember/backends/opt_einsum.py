"""ember.backends.opt_einsum: contraction-order optimisation of einsum through the opt_einsum
package when it is installed (torch.backends.opt_einsum). Ember's einsum contracts left to right;
the flags are kept for programs that set them."""
import importlib.util
import sys

from . import _flags_of

_available = importlib.util.find_spec('opt_einsum') is not None
enabled = _available
strategy = 'auto' if _available else None


def is_available():
    return _available


def get_opt_einsum():
    """The opt_einsum module, or None when it is not installed."""
    return importlib.import_module('opt_einsum') if _available else None


def set_flags(_enabled=None, _strategy=None):
    global enabled, strategy
    previous = (enabled, strategy)
    if _enabled is not None:
        if _enabled and not _available:
            raise ValueError('opt_einsum is not available, so setting `enabled` to True will not do anything.')
        enabled = _enabled
    if _strategy is not None:
        if _strategy not in ('auto', 'greedy', 'optimal'):
            raise ValueError(f'opt_einsum strategy must be one of auto, greedy, optimal; got {_strategy}')
        strategy = _strategy
    return previous


def flags(enabled=None, strategy=None):
    """Context manager: sets enabled and strategy (when given) and restores them on exit."""
    return _flags_of(sys.modules[__name__], enabled=enabled, strategy=strategy)
