"""ember.nn: modules, parameters, functional layers and initialisation (torch.nn's API)."""
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional, init, utils  # noqa: F401


def __getattr__(name):  # ember.nn.parallel (and nn.DataParallel) load on first use
    if name in ('parallel', 'DataParallel'):
        import importlib
        parallel = importlib.import_module('.parallel', __name__)
        return parallel if name == 'parallel' else parallel.DataParallel
    raise AttributeError(f"module 'ember.nn' has no attribute '{name}'")
