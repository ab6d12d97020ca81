"""ember.nn: modules, parameters, functional layers and initialisation (torch.nn's API)."""
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional, init, utils  # noqa: F401


def factory_kwargs(kwargs):
    """The factory arguments (device, dtype, memory_format) in kwargs, merged with those of its
    'factory_kwargs' entry, as a dict to pass on to ember.empty(...); TypeError for any other key or
    one given twice."""
    if kwargs is None:
        return {}
    simple = {'device', 'dtype', 'memory_format'}
    unexpected = set(kwargs) - simple - {'factory_kwargs'}
    if unexpected:
        raise TypeError(f'unexpected kwargs {unexpected}')
    result = dict(kwargs.get('factory_kwargs', {}))
    for key in simple & set(kwargs):
        if key in result:
            raise TypeError(f'{key} specified twice, in **kwargs and in factory_kwargs')
        result[key] = kwargs[key]
    return result


def __getattr__(name):  # ember.nn.parallel (and nn.DataParallel) load on first use
    if name in ('parallel', 'DataParallel'):
        import importlib
        parallel = importlib.import_module('.parallel', __name__)
        return parallel if name == 'parallel' else parallel.DataParallel
    raise AttributeError(f"module 'ember.nn' has no attribute '{name}'")
