"""ember.backends: switches for the libraries behind Ember's kernels (torch.backends).

Each submodule is a plain module whose flags are module attributes a program
may set (`ember.backends.cudnn.benchmark = True`) and whose `flags()` context
manager sets several at once and restores them on exit. What a flag changes
is up to the backend: without cuDNN or a GPU the cudnn and cuda flags are
kept and reported but steer nothing.
"""
import contextlib
import importlib
import types

_SUBMODULES = ('cudnn', 'cuda', 'mps', 'mkldnn', 'openmp', 'opt_einsum', 'mkl')


_mutable = [True]  # False after disable_global_flags(): guarded flags change only inside flags()


def disable_global_flags():
    """From now on the guarded flags (cudnn's enabled, benchmark, deterministic, allow_tf32 and
    mkldnn's enabled) can only be changed through their flags() context managers."""
    _mutable[0] = False


def flags_frozen():
    return not _mutable[0]


class _GuardedModule(types.ModuleType):
    """A backend module whose `_guarded` flags refuse plain assignment after disable_global_flags()."""

    def __setattr__(self, name, value):
        if not _mutable[0] and name in self._guarded:
            raise RuntimeError(f"not allowed to set {self.__name__.replace('ember.', 'torch.', 1)} flags after "
                               'disable_global_flags; please use flags() context manager instead')
        super().__setattr__(name, value)


def _guard(module, names):
    module._guarded = frozenset(names)
    module.__class__ = _GuardedModule


@contextlib.contextmanager
def _flags_of(module, **settings):
    """Sets module.<name> = value for the settings that are not None; restores them all on exit."""
    saved = {name: getattr(module, name) for name in settings}
    mutable, _mutable[0] = _mutable[0], True
    try:
        for name, value in settings.items():
            if value is not None:
                setattr(module, name, value)
        _mutable[0] = mutable
        yield
    finally:
        _mutable[0] = True
        for name, value in saved.items():
            setattr(module, name, value)
        _mutable[0] = mutable


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module('.' + name, __name__)
    raise AttributeError(f"module 'ember.backends' has no attribute '{name}'")
