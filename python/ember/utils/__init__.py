"""ember.utils: helpers around tensors (DLPack exchange, data loading, checkpointing).

The submodules load on first use (`ember.utils.data.DataLoader` after a
plain `import ember`)."""
import importlib

_SUBMODULES = ('data', 'dlpack', 'hooks', 'checkpoint')


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module('.' + name, __name__)
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
