"""Pooling, padding, upsampling and pixel/channel shuffles of ember.nn.functional
(torch.nn.functional's signatures). Argument handling here; the math is in C (ember._C._nn)."""
import math
import warnings

import ember
from ember import _C
from ember._argcheck import int_arg

_nn = _C._nn

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
    "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
    "lp_pool1d", "lp_pool2d",
    "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
    "grid_sample", "affine_grid",
]


def _tuple(v, n, name, what):
    """v as a list of n ints (an int repeats), with PyTorch's message when the length is wrong."""
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return [int_arg(name, what, v[0])] * n
        if len(v) != n:
            raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of "
                               f"{['', 'one', 'two', 'three'][n]} ints")
        return [int_arg(name, what, e) for e in v]
    return [int_arg(name, what, v)] * n


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode):
    name = f"max_pool{nd}d"
    k = _tuple(kernel_size, nd, name, "kernel_size")
    s = [] if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _tuple(stride, nd, name, "stride")
    p = _tuple(padding, nd, name, "padding")
    d = _tuple(dilation, nd, name, "dilation")
    return _nn.max_pool(input, nd, k, s, p, d, bool(ceil_mode))


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r = _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r = _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    r = _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    nd = len(kernel_size)
    default = [(input.size(-nd + d) - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not (lo < output_size[d] < hi):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return output_size


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    name = f"max_unpool{nd}d"
    k = _tuple(kernel_size, nd, name, "kernel_size")
    s = k if stride is None else _tuple(stride, nd, name, "stride")
    p = _tuple(padding, nd, name, "padding")
    size = _unpool_output_size(input, k, s, p, output_size)
    return _nn.max_unpool(input, indices, nd, [int(v) for v in size])


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    name = f"avg_pool{nd}d"
    k = _tuple(kernel_size, nd, name, "kernel_size")
    s = [] if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _tuple(stride, nd, name, "stride")
    p = _tuple(padding, nd, name, "padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _nn.avg_pool(input, nd, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _adaptive_size(input, output_size, nd):
    """output_size as nd ints; None entries keep the input's size (PyTorch's rule)."""
    if isinstance(output_size, (list, tuple)):
        if len(output_size) == 1 and nd > 1:
            output_size = list(output_size) * nd
        if len(output_size) != nd:
            raise RuntimeError(f"adaptive pool: output_size must have {nd} elements, got {len(output_size)}")
        return [input.size(-nd + d) if v is None else int_arg('adaptive pool', 'output_size', v)
                for d, v in enumerate(output_size)]
    if output_size is None:
        return [input.size(-nd + d) for d in range(nd)]
    return [int_arg('adaptive pool', 'output_size', output_size)] * nd


def adaptive_avg_pool1d(input, output_size):
    return _nn.adaptive_avg_pool(input, 1, _adaptive_size(input, output_size, 1))


def adaptive_avg_pool2d(input, output_size):
    return _nn.adaptive_avg_pool(input, 2, _adaptive_size(input, output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    return _nn.adaptive_avg_pool(input, 3, _adaptive_size(input, output_size, 3))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool(input, 1, _adaptive_size(input, output_size, 1))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool(input, 2, _adaptive_size(input, output_size, 2))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool(input, 3, _adaptive_size(input, output_size, 3))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r = adaptive_max_pool1d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    r = adaptive_max_pool2d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    r = adaptive_max_pool3d_with_indices(input, output_size)
    return r if return_indices else r[0]


def _lp_finish(out, norm_type, window):
    return (ember.sign(out) * ember.relu(ember.abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _tuple(kernel_size, 1, "lp_pool1d", "kernel_size")[0]
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, k)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = _tuple(kernel_size, 2, "lp_pool2d", "kernel_size")
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, kw * kh)


def pad(input, pad, mode="constant", value=None):
    if not isinstance(pad, (list, tuple)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    return _nn.pad(input, [int_arg('pad', 'pad', p) for p in pad], mode, value)


def _interp_output(input, size, scale_factor, recompute_scale_factor, dim):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            out = [int(v) for v in size]
        else:
            out = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        out = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor and scales is not None:
        out = [int(math.floor(float(input.size(i + 2)) * scales[i])) for i in range(dim)]
        scales = None
    if out is None:  # PyTorch's compute_output_size: truncation of size * scale in double
        out = [int(input.size(i + 2) * scales[i]) for i in range(dim)]
    return out, scales


_LINEAR_MODE = {3: "linear", 4: "bilinear", 5: "trilinear"}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if mode == "area" and size is None:
        recompute_scale_factor = True
    out, scales = _interp_output(input, size, scale_factor, recompute_scale_factor, dim)
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    if input.dim() in (3, 4, 5):
        s = (scales or []) + [0.0] * 3
        s = [0.0 if v is None else v for v in s[:3]]
        if mode == "nearest":
            return _nn.upsample_nearest(input, out, *s)
        if mode == "area":
            return [adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d][dim - 1](input, out)
        if mode == _LINEAR_MODE[input.dim()] and not antialias:
            return _nn.upsample_linear(input, out, align_corners, *s)
        if mode == "bicubic" and input.dim() == 4 and not antialias:
            return _nn.upsample_bicubic(input, out, align_corners, *s[:2])
        if mode in ("linear", "bilinear", "trilinear"):
            need = {"linear": 3, "bilinear": 4, "trilinear": 5}[mode]
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D input")
        if mode == "nearest-exact" or antialias:
            raise NotImplementedError(f"interpolate: mode '{mode}' is not implemented in Ember")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        " (got {}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
        " (got {})".format(input.dim(), mode))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


pixel_shuffle = _C.pixel_shuffle
pixel_unshuffle = _C.pixel_unshuffle
channel_shuffle = _C.channel_shuffle
native_channel_shuffle = _C.channel_shuffle


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in _GRID_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    return _C.grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode], align_corners)


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) in (4, 5):
        nd = len(size) - 2
        if theta.dim() != 3 or theta.shape[-2] != nd or theta.shape[-1] != nd + 1:
            raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} "
                             f"for size {size}. Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _C.affine_grid_generator(theta, size, align_corners)


def _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    """(values, indices) of fractional max pooling over the nd trailing dims; the window
    steps come from _random_samples (N, C, nd), drawn uniformly when not given."""
    name = f"fractional_max_pool{nd}d()"
    if output_size is None and output_ratio is None:
        raise ValueError(f"fractional_max_pool{nd}d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * nd
        if len(ratio) == 1:
            ratio = tuple(ratio) * nd
        output_size = [int(input.size(-nd + k) * ratio[k]) for k in range(nd)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = ember.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    pool = _nn.fractional_max_pool2d if nd == 2 else _nn.fractional_max_pool3d
    return pool(input, _tuple(kernel_size, nd, name, "kernel_size"), _tuple(output_size, nd, name, "output_size"),
                _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, H, W) or (C, H, W) (Graham, 2014)."""
    out = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W)."""
    out = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]
