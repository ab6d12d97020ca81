"""nn.init: PyTorch 1.13's parameter initialisations. Each fills its tensor
in place without recording gradients and returns it; random ones draw from
Ember's default generator."""
import math
import warnings

from .. import _C
from ..autograd.grad_mode import no_grad
from .._tensor import Tensor  # noqa: F401 (torch.nn.init.Tensor, for annotations)

__all__ = ['calculate_gain', 'uniform_', 'normal_', 'trunc_normal_', 'constant_', 'ones_', 'zeros_', 'eye_',
           'dirac_', 'xavier_uniform_', 'xavier_normal_', 'kaiming_uniform_', 'kaiming_normal_', 'orthogonal_',
           'sparse_', 'uniform', 'normal', 'constant', 'eye', 'dirac', 'xavier_uniform', 'xavier_normal',
           'kaiming_uniform', 'kaiming_normal', 'orthogonal', 'sparse']

_LINEAR_FNS = ('linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d')


def calculate_gain(nonlinearity, param=None):
    """The recommended scale of the weights feeding a given nonlinearity
    (param: leaky_relu's negative slope, 0.01 by default)."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == 'sigmoid':
        return 1
    if nonlinearity == 'tanh':
        return 5.0 / 3
    if nonlinearity == 'relu':
        return math.sqrt(2.0)
    if nonlinearity == 'leaky_relu':
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f'negative_slope {param} not a valid number')
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == 'selu':
        return 3.0 / 4  # keeps the variance of SELU networks' gradients (PyTorch's value)
    raise ValueError(f'Unsupported nonlinearity {nonlinearity}')


def uniform_(tensor, a=0., b=1.):
    """Fills tensor from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0., std=1.):
    """Fills tensor from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std)


def trunc_normal_(tensor, mean=0., std=1., a=-2., b=2.):
    """Fills tensor from N(mean, std^2) restricted to [a, b]: uniform values
    between the bounds' CDFs mapped through the inverse normal CDF."""
    def norm_cdf(x):
        return (1. + math.erf(x / math.sqrt(2.))) / 2.

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn('mean is more than 2 std from [a, b] in nn.init.trunc_normal_. '
                      'The distribution of values may be incorrect.', stacklevel=2)
    with no_grad():
        lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def constant_(tensor, val):
    """Fills tensor with val."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills a 2-d tensor with the identity (ones on the main diagonal)."""
    if tensor.dim() != 2:
        raise ValueError('Only tensors with 2 dimensions are supported')
    with no_grad():
        return tensor.copy_(_C.eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor, groups=1):
    """Fills a 3/4/5-d convolution weight so that the convolution copies its
    input channels (per group), as far as the channel counts allow."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError('Only tensors with 3, 4, or 5 dimensions are supported')
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError('dim 0 must be divisible by groups')
    out_per_group = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_per_group, sizes[1])):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight (out, in, *kernel): in and out times
    the kernel's size."""
    if tensor.dim() < 2:
        raise ValueError('Fan in and fan out can not be computed for tensor with fewer than 2 dimensions')
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive_field, tensor.size(0) * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ['fan_in', 'fan_out']
    if mode not in valid_modes:
        raise ValueError(f'Mode {mode} not supported, please use one of {valid_modes}')
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == 'fan_in' else fan_out


def xavier_uniform_(tensor, gain=1.):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0., gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def _kaiming_std(tensor, a, mode, nonlinearity):
    """gain / sqrt(fan), or None (with PyTorch's warning) for an empty tensor."""
    if 0 in tensor.shape:
        warnings.warn('Initializing zero-element tensors is a no-op')
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu'):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.); a is
    leaky_relu's negative slope, mode picks fan_in or fan_out."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std)


def kaiming_normal_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu'):
    """N(0, std^2) with std = gain / sqrt(fan) (He et al.)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0, std)


def orthogonal_(tensor, gain=1):
    """Fills tensor (viewed as rows = size(0) by the rest) with a (semi-)
    orthogonal matrix times gain: the Q of the QR factorisation of a normal
    random matrix, its column signs fixed by R's diagonal so that Q is
    uniformly distributed. Ember has no QR op yet: the factorisation runs in
    NumPy (LAPACK's Householder geqrf) on values drawn by Ember's generator."""
    import numpy as np

    if tensor.dim() < 2:
        raise ValueError('Only tensors with 2 or more dimensions are supported')
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = _C.empty((rows, cols), dtype=_C.float64).normal_(0, 1).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.view(rows, cols).copy_(_C.from_numpy(np.ascontiguousarray(q)))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01):
    """Fills a 2-d tensor from N(0, std^2), then zeroes ceil(sparsity * rows)
    random entries in each column."""
    if tensor.dim() != 2:
        raise ValueError('Only tensors with 2 dimensions are supported')
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std)
        for col in range(cols):
            tensor[_C.randperm(rows)[:num_zeros], col] = 0
    return tensor


def _deprecated(new):
    """The old name without the trailing underscore, warning once per call."""
    old_name = new.__name__[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(f'nn.init.{old_name} is now deprecated in favor of nn.init.{new.__name__}.', stacklevel=2)
        return new(*args, **kwargs)
    deprecated.__name__ = old_name
    deprecated.__doc__ = f'Deprecated alias of {new.__name__}.'
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
