"""ember.multiprocessing: Python's multiprocessing, with tensors sent
through shared memory instead of being copied (Note [Tensors between
processes] in reductions.py), like torch.multiprocessing. Everything of
multiprocessing is here under the same names."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions

__all__ = ['set_sharing_strategy', 'get_sharing_strategy', 'get_all_sharing_strategies'] + multiprocessing.__all__

_sharing_strategy = 'file_descriptor'


def get_all_sharing_strategies():
    """Ember shares only by file descriptor (no named segments to leak)."""
    return {'file_descriptor'}


def get_sharing_strategy():
    return _sharing_strategy


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unsupported sharing strategy {new_strategy!r}; Ember supports 'file_descriptor' only")


init_reductions()
