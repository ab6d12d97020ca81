"""Activation modules (torch.nn's, PyTorch 1.13 constructor arguments and reprs).

Each module holds its hyper-parameters and calls its nn.functional
counterpart (ember.nn.functional._activation). MultiheadAttention lives in
attention.py.
"""
import warnings

import ember
from .module import Module
from ..parameter import Parameter
from .. import functional as F

__all__ = ['Threshold', 'ReLU', 'RReLU', 'Hardtanh', 'ReLU6', 'Sigmoid', 'Hardsigmoid', 'Tanh', 'SiLU', 'Mish',
           'Hardswish', 'ELU', 'CELU', 'SELU', 'GLU', 'GELU', 'Hardshrink', 'LeakyReLU', 'LogSigmoid', 'Softplus',
           'Softshrink', 'PReLU', 'Softsign', 'Tanhshrink', 'Softmin', 'Softmax', 'Softmax2d', 'LogSoftmax']


def _inplace_suffix(inplace, first):
    """', inplace=True' after other fields (or 'inplace=True' alone), '' when not in place."""
    if not inplace:
        return ''
    return 'inplace=True' if first else ', inplace=True'


class _Inplace(Module):
    """An activation with only an `inplace` flag: forward is fn(input, inplace)."""
    __constants__ = ['inplace']
    _fn = None
    _show_inplace = True  # torch's Hardswish and Hardsigmoid do not show it

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, True) if self._show_inplace else ''


class _Stateless(Module):
    """An activation without arguments: forward is fn(input)."""
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class ReLU(_Inplace):
    _fn = F.relu


class SiLU(_Inplace):
    _fn = F.silu


class Mish(_Inplace):
    _fn = F.mish


class SELU(_Inplace):
    _fn = F.selu


class Hardswish(_Inplace):
    _fn = F.hardswish
    _show_inplace = False


class Hardsigmoid(_Inplace):
    _fn = F.hardsigmoid
    _show_inplace = False


class Sigmoid(_Stateless):
    _fn = ember.sigmoid


class Tanh(_Stateless):
    _fn = ember.tanh


class LogSigmoid(_Stateless):
    _fn = F.logsigmoid


class Softsign(_Stateless):
    _fn = F.softsign


class Tanhshrink(_Stateless):
    _fn = F.tanhshrink


class Threshold(Module):
    __constants__ = ['threshold', 'value', 'inplace']

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f'threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace, False)}'


class RReLU(Module):
    __constants__ = ['lower', 'upper', 'inplace']

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f'lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace, False)}'


class Hardtanh(Module):
    __constants__ = ['min_val', 'max_val', 'inplace']

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument min_value is deprecated and rename to min_val")
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument max_value is deprecated and rename to max_val")
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f'min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace, False)}'


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, True)


class _Alpha(Module):
    """ELU and CELU: an alpha and an inplace flag."""
    __constants__ = ['alpha', 'inplace']
    _fn = None

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f'alpha={self.alpha}{_inplace_suffix(self.inplace, False)}'


class ELU(_Alpha):
    _fn = F.elu


class CELU(_Alpha):
    _fn = F.celu


class LeakyReLU(Module):
    __constants__ = ['inplace', 'negative_slope']

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f'negative_slope={self.negative_slope}{_inplace_suffix(self.inplace, False)}'


class GLU(Module):
    __constants__ = ['dim']

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f'dim={self.dim}'


class GELU(Module):
    __constants__ = ['approximate']

    def __init__(self, approximate='none'):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f'approximate={self.approximate!r}'


class _Shrink(Module):
    """Hardshrink and Softshrink: a lambd, shown bare in the repr."""
    __constants__ = ['lambd']
    _fn = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(_Shrink):
    _fn = F.hardshrink


class Softshrink(_Shrink):
    _fn = F.softshrink


class Softplus(Module):
    __constants__ = ['beta', 'threshold']

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f'beta={self.beta}, threshold={self.threshold}'


class PReLU(Module):
    """x > 0 ? x : a x with a learnt slope a: one, or one per channel (dim 1), initialised to `init`."""
    __constants__ = ['num_parameters']

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        self.num_parameters = num_parameters
        super().__init__()
        self.weight = Parameter(ember.empty(num_parameters, **factory_kwargs).fill_(init))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f'num_parameters={self.num_parameters}'


class _SoftmaxLike(Module):
    """Softmax, Softmin, LogSoftmax along `dim` (None: torch's implicit choice, with its warning)."""
    __constants__ = ['dim']
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, 'dim'):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f'dim={self.dim}'


class Softmax(_SoftmaxLike):
    _fn = F.softmax


class Softmin(_SoftmaxLike):
    _fn = F.softmin


class LogSoftmax(_SoftmaxLike):
    _fn = F.log_softmax


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        assert input.dim() == 4 or input.dim() == 3, 'Softmax2d requires a 3D or 4D tensor as input'
        return F.softmax(input, -3, _stacklevel=5)
