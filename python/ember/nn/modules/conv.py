"""Convolution modules (torch.nn.Conv1d/2d/3d, ConvTranspose1d/2d/3d and
their Lazy forms) over ember.nn.functional's convolutions, with torch 1.13's
arguments, checks, initialisation, state_dict names and repr."""
import math

from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
import ember

__all__ = ['Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d', 'ConvTranspose3d', 'LazyConv1d',
           'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d']

_PADDING_MODES = {'zeros', 'reflect', 'replicate', 'circular'}


def _tuple(n, v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    """What the convolution modules share: parameters, their initialisation
    and the repr. Subclasses give the spatial dims (`_nd`) and forward."""

    __constants__ = ['stride', 'padding', 'dilation', 'groups', 'padding_mode', 'output_padding', 'in_channels',
                     'out_channels', 'kernel_size']
    _nd = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        if groups <= 0:
            raise ValueError('groups must be a positive integer')
        if in_channels % groups != 0:
            raise ValueError('in_channels must be divisible by groups')
        if out_channels % groups != 0:
            raise ValueError('out_channels must be divisible by groups')
        if isinstance(padding, str):
            if padding not in ('same', 'valid'):
                raise ValueError("Invalid padding string {!r}, should be one of {}".format(padding, {'same', 'valid'}))
            if padding == 'same' and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError("padding_mode must be one of {}, but got padding_mode='{}'".format(
                _PADDING_MODES, padding_mode))
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zero padding modes: last dim first, (before, after) per dim
        pads = []
        for d in reversed(range(len(kernel_size))):
            if padding == 'same':
                total = dilation[d] * (kernel_size[d] - 1)
                pads += [total // 2, total - total // 2]
            elif padding == 'valid':
                pads += [0, 0]
            else:
                pads += [padding[d], padding[d]]
        self._reversed_padding_repeated_twice = pads
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(ember.empty((*shape, *kernel_size), **factory_kwargs))
        if bias:
            self.bias = Parameter(ember.empty(out_channels, **factory_kwargs))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a = sqrt(5) draws from U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = '{}, {}, kernel_size={}, stride={}'.format(self.in_channels, self.out_channels, self.kernel_size,
                                                       self.stride)
        if self.padding != (0,) * len(self.padding):
            s += ', padding={}'.format(self.padding)
        if self.dilation != (1,) * len(self.dilation):
            s += ', dilation={}'.format(self.dilation)
        if self.output_padding != (0,) * len(self.output_padding):
            s += ', output_padding={}'.format(self.output_padding)
        if self.groups != 1:
            s += ', groups={}'.format(self.groups)
        if self.bias is None:
            s += ', bias=False'
        if self.padding_mode != 'zeros':
            s += ', padding_mode={}'.format(self.padding_mode)
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, 'padding_mode'):
            self.padding_mode = 'zeros'


def _pad(input, pads, mode):
    """F.pad for the non-zero padding modes (looked up when needed: the pool
    family provides it)."""
    pad = getattr(F, 'pad', None)
    if pad is None:
        raise NotImplementedError("padding_mode='{}' needs ember.nn.functional.pad, which this build lacks".format(mode))
    return pad(input, pads, mode=mode)


class _Conv(_ConvNd):
    _conv = None  # the functional, set per subclass

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode='zeros', device=None, dtype=None):
        n = self._nd
        padding = padding if isinstance(padding, str) else _tuple(n, padding)
        super().__init__(in_channels, out_channels, _tuple(n, kernel_size), _tuple(n, stride), padding,
                         _tuple(n, dilation), False, _tuple(n, 0), groups, bias, padding_mode, device=device,
                         dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._conv
        if self.padding_mode != 'zeros':
            padded = _pad(input, self._reversed_padding_repeated_twice, self.padding_mode)
            return conv(padded, weight, bias, self.stride, _tuple(self._nd, 0), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) or (C_in, L) inputs."""
    _nd = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W) inputs."""
    _nd = 2
    _conv = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W) inputs."""
    _nd = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _conv = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode='zeros', device=None, dtype=None):
        if padding_mode != 'zeros':
            raise ValueError('Only "zeros" padding mode is supported for {}'.format(self.__class__.__name__))
        n = self._nd
        super().__init__(in_channels, out_channels, _tuple(n, kernel_size), _tuple(n, stride), _tuple(n, padding),
                         _tuple(n, dilation), True, _tuple(n, output_padding), groups, bias, padding_mode,
                         device=device, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding that gives `output_size` (None: the module's own)."""
        if output_size is None:
            return list(_tuple(1, self.output_padding))
        batched = input.dim() == num_spatial_dims + 2
        non_spatial = 2 if batched else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError("ConvTranspose{}D: for {}D input, output_size must have {} or {} elements (got {})".format(
                num_spatial_dims, input.dim(), num_spatial_dims, non_spatial + num_spatial_dims, len(output_size)))
        lo, hi = [], []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            size = (input.size(d + non_spatial) - 1) * stride[d] - 2 * padding[d] + dil * (kernel_size[d] - 1) + 1
            lo.append(size)
            hi.append(size + stride[d] - 1)
        for d, size in enumerate(output_size):
            if size < lo[d] or size > hi[d]:
                raise ValueError("requested an output size of {}, but valid sizes range from {} to {} (for an input "
                                 "of {})".format(output_size, lo, hi, input.size()[2:]))
        return [output_size[d] - lo[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        if self.padding_mode != 'zeros':
            raise ValueError('Only `zeros` padding mode is supported for {}'.format(self.__class__.__name__))
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._nd, self.dilation)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution (the adjoint of Conv1d in its input)."""
    _nd = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution (the adjoint of Conv2d in its input)."""
    _nd = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution (the adjoint of Conv3d in its input)."""
    _nd = 3
    _conv = staticmethod(F.conv_transpose3d)


class _LazyConvMixin(LazyModuleMixin):
    """in_channels from the first input: dim 1 batched, dim 0 unbatched."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise RuntimeError('Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}'.format(
                self._nd + 1, self._nd + 2, self.__class__.__name__, input.shape))
        self.in_channels = input.shape[1] if input.dim() == self._nd + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError('in_channels must be divisible by groups')
        with no_grad():
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _lazy_init(self, out_channels, bias, device, dtype):
        """After the eager constructor ran with 0 channels: placeholders instead of empty tensors."""
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


def _lazy_conv(eager):
    class Lazy(_LazyConvMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode='zeros', device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            self._lazy_init(out_channels, bias, device, dtype)
    Lazy.__name__ = Lazy.__qualname__ = 'Lazy' + eager.__name__
    Lazy.__doc__ = 'A {} whose in_channels comes from its first input.'.format(eager.__name__)
    return Lazy


def _lazy_conv_transpose(eager):
    class Lazy(_LazyConvMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode='zeros', device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode)
            self._lazy_init(out_channels, bias, device, dtype)
    Lazy.__name__ = Lazy.__qualname__ = 'Lazy' + eager.__name__
    Lazy.__doc__ = 'A {} whose in_channels comes from its first input.'.format(eager.__name__)
    return Lazy


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(c) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv_transpose(c) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
