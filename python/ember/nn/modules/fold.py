"""torch.nn.Fold and Unfold: modules over F.fold / F.unfold (im2col / col2im)."""
from .. import functional as F
from .module import Module

__all__ = ['Fold', 'Unfold']


class Fold(Module):
    """Sums sliding-block columns (N, C * prod(kernel_size), L) into an image
    (N, C, *output_size)."""

    __constants__ = ['output_size', 'kernel_size', 'dilation', 'padding', 'stride']

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return 'output_size={}, kernel_size={}, dilation={}, padding={}, stride={}'.format(
            self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)


class Unfold(Module):
    """Extracts sliding blocks of an image (N, C, H, W) as columns
    (N, C * prod(kernel_size), L)."""

    __constants__ = ['kernel_size', 'dilation', 'padding', 'stride']

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return 'kernel_size={}, dilation={}, padding={}, stride={}'.format(
            self.kernel_size, self.dilation, self.padding, self.stride)
