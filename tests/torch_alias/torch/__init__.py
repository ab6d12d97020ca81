"""A test-only `torch` that is Ember: with tests/torch_alias and python/ on
PYTHONPATH, `import torch` gives the `ember` module itself, and
`import torch.X.Y` (or `from torch.X import Y`) gives the module object
`ember.X.Y`, so that a program written for PyTorch runs on Ember unchanged and
isinstance checks and pickles (which name ember's modules) agree within a run.

Without this folder on the path, `import torch` is the real PyTorch."""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

import ember

_PREFIX = __name__ + '.'


class _Alias(importlib.abc.Loader):
    """Loads `torch.X` by importing `ember.X` and putting that module object in
    sys.modules under the torch name (the import system returns whatever
    sys.modules holds after exec_module, so the placeholder it made is dropped)."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        sys.modules[module.__name__] = importlib.import_module(self.target)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if not name.startswith(_PREFIX):
            return None
        ember_name = 'ember.' + name[len(_PREFIX):]
        if ember_name not in sys.modules and importlib.util.find_spec(ember_name) is None:
            raise ModuleNotFoundError("No module named %r (the test alias maps it to %r, which Ember lacks)"
                                      % (name, ember_name), name=name)
        return importlib.machinery.ModuleSpec(name, _Alias(ember_name), is_package=True)


if not any(isinstance(f, _Finder) for f in sys.meta_path):
    sys.meta_path.insert(0, _Finder())
sys.modules[__name__] = ember
