"""ember.testing.make_tensor: random tensors of a given shape and dtype for tests, uniform in
[low, high) with torch.testing's per-dtype default ranges, optionally non-contiguous or free of zeros."""
import collections.abc
import math

from .. import _C
from .._dtype_info import finfo, iinfo

_INTEGRAL = (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64)
_FLOATING = (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def _range(low, high, lowest, highest, default_low, default_high, integral):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if low != low or high != high:
        raise ValueError('make_tensor: one of low or high was NaN!')
    if low > high:
        raise ValueError('make_tensor: low must be weakly less than high!')
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.floor(low), math.ceil(high)) if integral else (low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False):
    """A tensor of `shape` with values drawn uniformly from [low, high): by default [0, 2) for bool,
    [0, 10) for uint8, [-9, 10) for other integers and [-9, 9) for floating dtypes; bounds outside the
    dtype's range are clamped to it."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if requires_grad and dtype not in _FLOATING:
        raise ValueError('make_tensor: requires_grad must be False for integral dtype')
    if dtype == _C.bool:
        result = _C.randint(0, 2, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = iinfo(dtype)
        lo, hi = _range(low, high, info.min, info.max, 0 if dtype == _C.uint8 else -9, 10, True)
        result = _C.randint(lo, hi, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING:
        info = finfo(dtype)
        lo, hi = _range(low, high, info.min, info.max, -9, 9, False)
        u = _C.rand(shape, device=device, dtype=dtype)
        result = hi * u + lo * (1 - u)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor().")
    if noncontiguous and result.numel() > 1:
        result = result.repeat_interleave(2, dim=-1)[..., ::2]
    if exclude_zero:
        tiny = 1 if dtype in _INTEGRAL or dtype == _C.bool else finfo(dtype).tiny
        result[result == 0] = _C.tensor(tiny, dtype=dtype)
    if dtype in _FLOATING:
        result.requires_grad = requires_grad
    return result


def make_non_contiguous(tensor):
    """Deprecated: a non-contiguous copy of `tensor` with the same values."""
    if tensor.numel() <= 1:
        return tensor.clone()
    wide = _C.empty(tuple(tensor.shape[:-1]) + (tensor.shape[-1] * 2,), dtype=tensor.dtype)
    result = wide[..., ::2]
    result.copy_(tensor)
    return result
