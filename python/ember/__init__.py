"""Ember: a deep learning library with a C core and PyTorch's API.

`import ember as torch` runs ordinary PyTorch code that uses what Ember
covers. The heavy lifting is in the `_C` extension (python/csrc/); this
package adds what reads better in Python: the Tensor class's Python-level
methods, printing, grad-mode context managers.
"""
from . import _C
from ._C import (dtype, device, Size, Generator, default_generator, manual_seed, initial_seed,
                 set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads,
                 get_default_dtype, is_grad_enabled,
                 is_inference_mode_enabled)
from ._C import (uint8, int8, int16, int32, int64, float16, float32, float64, bfloat16, bool,
                 float, double, half, short, int, long,
                 complex32, complex64, complex128, chalf, cfloat, cdouble)
from ._tensor import Tensor
from ._dtype_info import finfo, iinfo
from .autograd.grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode
from .serialization import save, load
from ._argcheck import accepts as _accepts

_C._set_tensor_class(Tensor)

# Every op of the core is a function of this module (ember.add, ember.sum...).
# (torch.special's own functions, special_*, are only ember.special's)
globals().update({name: fn for name, fn in vars(_C).items()
                  if callable(fn) and not name.startswith(('_', 'special_')) and name not in globals()})

# PyTorch's aliases and the functions written with other ops (ember/_functions.py)
from . import _functions
_functions.install(globals())
from ._ops import ops  # noqa: E402 (torch.ops.aten's operators without another name)
from . import _complex
_complex.install(globals(), Tensor)
from . import special
special._install(globals())
from . import _scatter_grad, _discrete_samples
_scatter_grad.install(globals())
_discrete_samples.install(globals())
from . import _stft
_stft.install(globals(), Tensor)

__version__ = '0.1.0'


def set_default_dtype(d):
    """Sets the default floating-point dtype (float32 or float64)."""
    _C._set_default_dtype(d)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets how tensors print (see ember._tensor_str.set_printoptions)."""
    from ._tensor_str import set_printoptions
    set_printoptions(precision, threshold, edgeitems, linewidth, profile, sci_mode)


def is_anomaly_enabled():
    return _C._is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    return _C._is_anomaly_check_nan_enabled()


def set_anomaly_enabled(enabled, check_nan=True):
    """Anomaly mode on or off (ember.autograd.detect_anomaly's switch)."""
    from .autograd import anomaly_mode
    anomaly_mode.set_anomaly_enabled(enabled, check_nan)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of a DLPack producer or capsule (ember.utils.dlpack.from_dlpack)."""
    from .utils.dlpack import from_dlpack
    return from_dlpack(ext_tensor)


def is_tensor(obj):
    """True if obj is an Ember tensor (or a subclass, such as a Parameter)."""
    return isinstance(obj, Tensor)


@_accepts(input='Tensor')
def numel(input):
    """The number of elements of a tensor."""
    return input.numel()


@_accepts(input='Tensor')
def is_floating_point(input):
    return input.is_floating_point()


# Subpackages load on first use (`ember.nn.Linear` without `import ember.nn`),
# so that `import ember` stays fast; so do the top-level names of ember/_toplevel.py.
_LAZY_SUBMODULES = ('nn', 'optim', 'utils', 'autograd', 'linalg', 'distributions', 'cuda', 'backends', 'random',
                    'testing', 'hub', 'jit', 'version', 'amp', 'cpu', 'profiler', '__config__', 'distributed',
                    'overrides', 'fft')


def __getattr__(name):
    import importlib
    if name in _LAZY_SUBMODULES:
        return importlib.import_module('.' + name, __name__)
    value = importlib.import_module('._toplevel', __name__).lookup(name)
    globals()[name] = value
    return value
