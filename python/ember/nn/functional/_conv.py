"""Convolutions of torch.nn.functional: the C kernels (ember.conv2d, ...) under
torch's names, and unfold/fold over ember._C._nn.im2col/col2im."""
import ember
from ember import _C

__all__ = ['conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d',
           'unfold', 'fold']

conv1d = ember.conv1d
conv2d = ember.conv2d
conv3d = ember.conv3d
conv_transpose1d = ember.conv_transpose1d
conv_transpose2d = ember.conv_transpose2d
conv_transpose3d = ember.conv_transpose3d


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extracts sliding local blocks of a (N, C, H, W) or (C, H, W) input as
    columns: (N, C * prod(kernel_size), L)."""
    return _C._nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums columns of sliding blocks back into a (N, C, *output_size) image:
    unfold's adjoint."""
    return _C._nn.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                         _pair(stride))
