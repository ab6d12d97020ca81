"""ember.nn: modules, parameters, functional layers and initialisation (torch.nn's API)."""
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional, init, utils  # noqa: F401
