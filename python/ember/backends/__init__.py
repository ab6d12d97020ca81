"""ember.backends: switches for the libraries behind Ember's kernels (torch.backends).

Each submodule is a plain module whose flags are module attributes a program
may set (`ember.backends.cudnn.benchmark = True`) and whose `flags()` context
manager sets several at once and restores them on exit. What a flag changes
is up to the backend: without cuDNN or a GPU the cudnn and cuda flags are
kept and reported but steer nothing.
"""
import contextlib
import importlib

from .._stubs import not_implemented

_SUBMODULES = ('cudnn', 'cuda', 'mps', 'mkldnn', 'openmp', 'opt_einsum', 'mkl')


@not_implemented('torch.backends.disable_global_flags (flags are plain module attributes in Ember)')
def disable_global_flags():
    pass


def flags_frozen():
    return False


@contextlib.contextmanager
def _flags_of(module, **settings):
    """Sets module.<name> = value for the settings that are not None; restores them all on exit."""
    saved = {name: getattr(module, name) for name in settings}
    try:
        for name, value in settings.items():
            if value is not None:
                setattr(module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module('.' + name, __name__)
    raise AttributeError(f"module 'ember.backends' has no attribute '{name}'")
