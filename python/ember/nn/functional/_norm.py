"""Normalization functionals (torch.nn.functional's batch_norm, instance_norm,
layer_norm, group_norm, local_response_norm): argument checks as PyTorch 1.13
makes them in Python, the computation in C (include/ember/norm.h)."""
from typing import List, Optional

import ember
from ember import Tensor

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "local_response_norm"]


def _verify_batch_size(size) -> None:
    # training statistics of one value per channel are meaningless (zero variance)
    count = size[0]
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size {}".format(size))


def _verify_spatial_size(size) -> None:
    count = 1
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size {}".format(size))


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalization over dim 1 of `input` (see ember.nn.BatchNorm1d/2d/3d).
    In training mode, the given running statistics are updated in place."""
    if training:
        _verify_batch_size(input.size())
    return ember.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None,
                  weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalizes each channel of each sample over its spatial elements
    (see ember.nn.InstanceNorm1d/2d/3d)."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return ember.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                               False)


def layer_norm(input: Tensor, normalized_shape: List[int], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    """Normalizes over the last len(normalized_shape) dims (see ember.nn.LayerNorm)."""
    return ember.layer_norm(input, normalized_shape, weight, bias, eps, False)


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               eps: float = 1e-5) -> Tensor:
    """Normalizes groups of channels of each sample (see ember.nn.GroupNorm)."""
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return ember.group_norm(input, num_groups, weight, bias, eps, False)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Divides each element by (k + alpha * mean of the squares of `size`
    neighbouring channels) ** beta (see ember.nn.LocalResponseNorm)."""
    if input.dim() < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got {} dimensions)".format(input.dim()))
    if input.numel() == 0:
        return input
    return ember.local_response_norm(input, size, alpha, beta, k)
