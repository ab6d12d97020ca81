"""LayerNorm, GroupNorm and LocalResponseNorm modules (torch.nn's)."""
import numbers

import ember
from ember import Tensor
from .module import Module
from ..parameter import Parameter
from .. import functional as F
from .. import init

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "CrossMapLRN2d"]


class LocalResponseNorm(Module):
    """Normalizes each element by its neighbours across `size` channels."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{}, alpha={}, beta={}, k={}".format(self.size, self.alpha, self.beta, self.k)


class LayerNorm(Module):
    """Normalizes over the trailing dims given by normalized_shape, with an
    elementwise affine map when elementwise_affine."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ember.empty(self.normalized_shape, **factory_kwargs))
            self.bias = Parameter(ember.empty(self.normalized_shape, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{}, eps={}, elementwise_affine={}".format(self.normalized_shape, self.eps, self.elementwise_affine)


class GroupNorm(Module):
    """Normalizes num_groups groups of channels of each sample, with a
    per-channel affine map when affine."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(ember.empty(num_channels, **factory_kwargs))
            self.bias = Parameter(ember.empty(num_channels, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{}, {}, eps={}, affine={}".format(self.num_groups, self.num_channels, self.eps, self.affine)


def _windows(channels, size, dtype):
    """The (C, C) 0/1 matrices of the channels CrossMapLRN2d sums: `forward` as torch's legacy
    recurrence does it (the window [c - pre + 1, c + pre - 1], but channel 0 never leaves it), and
    `backward` the window its hand-written gradient sums ([c - inv, c + size - 1 - inv])."""
    pre, inv = int((size - 1) / 2 + 1), int(size - (size - 1) / 2)
    c = ember.arange(channels).unsqueeze(1)
    j = ember.arange(channels).unsqueeze(0)
    forward = ((j <= c + pre - 1) & ((j >= c - pre + 1) | (j == 0))).to(dtype)
    backward = ((j >= c - inv) & (j <= c + size - 1 - inv)).to(dtype)
    return forward, backward


class _CrossMapLRN2dFunction(ember.autograd.Function):
    """torch 1.13's legacy cross-channel LRN, forward and its own backward formula."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        window, back = _windows(input.size(1), size, input.dtype)
        scale = ember.einsum('cj,njhw->nchw', window, input * input) * (alpha / size) + k
        output = input * scale.pow(-beta)
        ctx.save_for_backward(input, output, scale, back)
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale, back = ctx.saved_tensors
        ratio = grad_output * output / scale
        accum = ember.einsum('cj,njhw->nchw', back, ratio)
        grad = scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / ctx.size) * input * accum
        return grad, None, None, None, None


class CrossMapLRN2d(Module):
    """Local response normalization across channels of a 4-d input, as Lua Torch's legacy
    SpatialCrossMapLRN (torch.nn.CrossMapLRN2d; nn.LocalResponseNorm is the modern form)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        assert input.dim() == 4
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return '{size}, alpha={alpha}, beta={beta}, k={k}'.format(**self.__dict__)
