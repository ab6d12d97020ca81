"""ember.backends.mkldnn: oneDNN (formerly MKL-DNN), which runs Ember's float32 convolutions
when Ember was built with it (is_available())."""
import sys

from .. import _C
from . import _flags_of, _guard

enabled = True
VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def is_available():
    return _C._has_mkldnn()


def set_flags(_enabled):
    global enabled
    previous = (enabled,)
    enabled = _enabled
    return previous


def flags(enabled=False):
    """Context manager: sets `enabled` and restores it on exit."""
    return _flags_of(sys.modules[__name__], enabled=enabled)


class verbose:
    """Context manager for oneDNN's verbose output: only VERBOSE_OFF, as Ember does not route it."""

    def __init__(self, level):
        if level != VERBOSE_OFF:
            raise NotImplementedError('oneDNN verbose output is not implemented in Ember')
        self.level = level

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_guard(sys.modules[__name__], ('enabled',))  # disable_global_flags() freezes these
