"""torch functions around the nn losses and signal windows, and small numerics (renorm,
norm_except_dim, frobenius_norm, gradient, quantile), as compositions of Ember ops; installed by
ember._functions_extra.install. The top-level loss functions take PyTorch's integer reductions
(0 none, 1 mean, 2 sum), as torch.kl_div and friends do."""
import builtins
import collections
import math
import os

from . import _C
from ._argcheck import accepts, wrap_dim
from ._tensor import Tensor

_REDUCTIONS = ('none', 'mean', 'sum')
_Frexp = collections.namedtuple('frexp', ['mantissa', 'exponent'])


def _F():
    from .nn import functional
    return functional


def kl_div(input, target, reduction=1, *, log_target=False):
    return _F().kl_div(input, target, reduction=_REDUCTIONS[reduction], log_target=log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().cosine_embedding_loss(input1, input2, target, margin=margin, reduction=_REDUCTIONS[reduction])


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return _F().hinge_embedding_loss(input, target, margin=margin, reduction=_REDUCTIONS[reduction])


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return _F().margin_ranking_loss(input1, input2, target, margin=margin, reduction=_REDUCTIONS[reduction])


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=1):
    return _F().triplet_margin_loss(anchor, positive, negative, margin=margin, p=p, eps=eps, swap=swap,
                                    reduction=_REDUCTIONS[reduction])


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input=log_input, full=full, eps=eps,
                                 reduction=_REDUCTIONS[reduction])


def bilinear(input1, input2, weight, bias=None):
    return _F().bilinear(input1, input2, weight, bias)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode=ceil_mode,
                           return_indices=True)


# ---- windows: w[n] over n = 0..N-1 of a symmetric window of N = length (+1 when periodic) ----
def _window(name, length, periodic, dtype, terms):
    if length < 0:
        raise RuntimeError(f'{name} requires non-negative window_length, got window_length={length}')
    dtype = dtype or _C.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f'{name} expects floating point dtypes, got: {dtype}')
    if length <= 1:
        return _C.ones((length,), dtype=dtype)
    n = length + 1 if periodic else length
    k = _C.arange(length, dtype=_C.float64)
    return terms(k, n - 1).to(dtype)


def _cosine_sum(coefficients):
    def terms(k, m):
        w = _C.zeros_like(k)
        for j, a in enumerate(coefficients):
            w = w + a * _C.cos(k * (2 * math.pi * j / m))
        return w
    return terms


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    w = _window('hann_window', window_length, periodic, dtype, _cosine_sum((0.5, -0.5)))
    return w.requires_grad_(requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    w = _window('hamming_window', window_length, periodic, dtype, _cosine_sum((alpha, -beta)))
    return w.requires_grad_(requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    w = _window('blackman_window', window_length, periodic, dtype, _cosine_sum((0.42, -0.5, 0.08)))
    return w.requires_grad_(requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    w = _window('bartlett_window', window_length, periodic, dtype, lambda k, m: 1 - _C.abs(k * (2 / m) - 1))
    return w.requires_grad_(requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """I0(beta sqrt(1 - r^2)) / I0(beta), r running from -1 to 1 over the (symmetric) window."""
    def terms(k, m):
        r = k * (2 / m) - 1
        return _C.i0(beta * _C.sqrt((1 - r * r).clamp(min=0))) / _C.i0(_C.full((), beta, dtype=_C.float64))
    w = _window('kaiser_window', window_length, periodic, dtype, terms)
    return w.requires_grad_(requires_grad)


# ---- small numerics ----
def renorm(input, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm scaled down to norm maxnorm."""
    if input.dim() <= 1:
        raise RuntimeError(f'renorm: input needs at least 2 dimensions, got {input.dim()} dimensions')
    if p <= 0:
        raise RuntimeError('renorm: non-positive-norm not supported')
    if maxnorm < 0:
        raise RuntimeError(f'renorm: expected maxnorm to be >= 0 but got {maxnorm}')
    dim = dim % input.dim()
    others = tuple(d for d in builtins.range(input.dim()) if d != dim)
    norm = input.norm(p, others, True)
    factor = _C.where(norm > maxnorm, maxnorm / (norm + 1e-7), _C.ones_like(norm))
    return input * factor


@accepts(v='Tensor', pow='int', dim='int')
def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm over every dim but dim, shaped to broadcast against v (weight_norm's norm)."""
    if dim == -1:
        return v.norm(pow)
    dim = wrap_dim(dim, v.dim())
    others = tuple(d for d in builtins.range(v.dim()) if d != dim)
    return v.norm(pow, others, True) if others else v.abs()


def frobenius_norm(input, dim=(), keepdim=False):
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if not dims:
        return _C.sqrt((input * input).sum())
    return _C.sqrt((input * input).sum(dims, keepdim=keepdim))


def _interpolate(sorted_, pos, interpolation):
    lo = _C.floor(pos).to(_C.int64)
    hi = _C.ceil(pos).to(_C.int64)
    a, b = sorted_.gather(-1, lo), sorted_.gather(-1, hi)
    frac = (pos - lo.to(pos.dtype)).to(sorted_.dtype)
    if interpolation == 'lower':
        return a
    if interpolation == 'higher':
        return b
    if interpolation == 'midpoint':
        return _C.where(frac > 0, (a + b) / 2, a)
    if interpolation == 'nearest':
        return sorted_.gather(-1, _C.round(pos).to(_C.int64))  # half to even, as PyTorch
    return a + (b - a) * frac


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if interpolation not in ('linear', 'lower', 'higher', 'midpoint', 'nearest'):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    if not input.is_floating_point():
        raise RuntimeError(f'{name}() input tensor must be either float or double dtype')
    if isinstance(q, Tensor) and q.dim() > 1:
        raise RuntimeError(f'{name}() q must be a scalar or 1D tensor')
    if isinstance(q, Tensor) and q.dtype != input.dtype:
        raise RuntimeError(f'{name}() q tensor must be same dtype as the input tensor')
    scalar_q = not isinstance(q, Tensor) or q.dim() == 0
    # q stays a tensor, so that the linear interpolation differentiates in q too
    qt = q.reshape(-1) if isinstance(q, Tensor) else _C.tensor([q], dtype=input.dtype)
    if ((qt.detach() < 0) | (qt.detach() > 1)).any():
        raise RuntimeError(f'{name}() q values must be in the range [0, 1]')
    if dim is not None:
        dim = wrap_dim(dim, input.dim())
    if input.dim() == 0:  # PyTorch: a 0-d input gives 0-d results, keepdim or not
        dim, keepdim = None, False
    x = input.reshape(-1) if dim is None else input.movedim(dim, -1)
    sorted_ = x.sort(-1).values  # nans sort last
    nans = _C.isnan(x).sum(-1, keepdim=True)
    count = _C.full_like(nans, x.shape[-1]) - (nans if ignore_nan else 0)
    pos = (count - 1).clamp(min=0).to(_C.float64) * qt.to(_C.float64)  # (..., Q)
    value = _interpolate(sorted_, pos, interpolation)
    empty = nans > 0 if not ignore_nan else count == 0
    value = _C.where(empty, _C.full_like(value, math.nan), value)
    if keepdim:
        value = value.reshape([1] * input.dim() + [-1]) if dim is None else value.unsqueeze(dim)
    value = value.movedim(-1, 0)
    return value[0] if scalar_q else value


def _quantile_checked(name, input, q, dim, keepdim, interpolation, ignore_nan, out):
    if not isinstance(q, (int, float, Tensor)) or isinstance(q, bool):
        raise TypeError(f"{name}() received an invalid combination of arguments - got q of type "
                        f"{type(q).__name__}, but expected one of: (Tensor q), (float q)")
    result = _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan)
    return result if out is None else out.resize_(result.shape).copy_(result)


@accepts(input='Tensor', dim='dim?', keepdim='bool', out='Tensor?')
def quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None):
    return _quantile_checked('quantile', input, q, dim, keepdim, interpolation, False, out)


@accepts(input='Tensor', dim='dim?', keepdim='bool', out='Tensor?')
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None):
    return _quantile_checked('nanquantile', input, q, dim, keepdim, interpolation, True, out)


def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution over time-batch-channel input (T, B, Cin) with weight (K, Cin, Cout)."""
    if input.dim() != 3:
        raise RuntimeError('Input must have 3 dims: time, batch, in_channel')
    if weight.dim() != 3:
        raise RuntimeError('Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.')
    out = _F().conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """input with the slices of source along dim reduced ('prod', 'mean', 'amax', 'amin') into
    the slices index names."""
    if reduce not in ('prod', 'mean', 'amax', 'amin'):
        raise RuntimeError(f'index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.')
    dim = dim % builtins.max(input.dim(), 1)
    if input.dim() == 0:  # a 0-d input and source as one slice each
        return index_reduce(input.reshape(1), dim, index, source.reshape(-1), reduce,
                            include_self=include_self).reshape(())
    shape = [1] * source.dim()
    shape[dim] = -1
    expanded = index.reshape(shape).expand_as(source)
    return input.scatter_reduce(dim, expanded, source, reduce, include_self=include_self)


_HistogramddResult = collections.namedtuple('histogramdd', ['hist', 'bin_edges'])
_HistogramddResult.__module__ = 'ember.return_types'


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The D-dimensional histogram of the points input (..., D): bins is a count for every dim, one count
    per dim, or one tensor of increasing edges per dim; range, [min0, max0, min1, max1, ...]. A value
    on an inner edge falls in the bin to its right, on the last edge in the last bin."""
    if input.dim() < 1:
        raise RuntimeError('torch.histogramdd: input tensor should have at least 1 dimension')
    if not input.is_floating_point():
        raise RuntimeError(f'torch.histogramdd: input tensor and bins tensors should have the same dtype, '
                           f'but got input with dtype {input.dtype}')
    D = input.shape[-1]
    points = input.reshape(-1, D)
    counts = [bins] * D if isinstance(bins, int) else list(bins)
    if len(counts) != D:
        raise RuntimeError(f'torch.histogramdd: expected {D} sequences of bin edges for each of the {D} '
                           f'dimensions of the input, but got {len(counts)}')
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f'torch.histogramdd: for a {D}-dimensional histogram range should have {2 * D} '
                           f'elements, but got {len(range)}')
    edges = []
    for d, b in enumerate(counts):
        if isinstance(b, Tensor):
            edges.append(b.to(input.dtype))
        else:
            r = None if range is None else (float(range[2 * d]), float(range[2 * d + 1]))
            edges.append(_C.histogram(points[:, d], b, range=r)[1])
    flat = _C.zeros(points.shape[0], dtype=_C.int64)
    inside = _C.ones(points.shape[0], dtype=_C.bool)
    for d, e in enumerate(edges):
        x, nb = points[:, d], e.numel() - 1
        idx = _C.searchsorted(e, x.contiguous(), right=True) - 1
        idx = _C.where(x == e[-1], _C.full_like(idx, nb - 1), idx)
        inside = inside & (x >= e[0]) & (x <= e[-1])
        flat = flat * nb + idx.clamp(0, builtins.max(nb - 1, 0))
    shape = [e.numel() - 1 for e in edges]
    w = None if weight is None else weight.reshape(-1).to(input.dtype)[inside]
    total = math.prod(shape)
    hist = _C.bincount(flat[inside], weights=w, minlength=total)[:total].to(input.dtype).reshape(shape)
    if density:
        volume = _C.ones(shape, dtype=input.dtype)
        for d, e in enumerate(edges):
            view = [1] * D
            view[d] = -1
            volume = volume * (e[1:] - e[:-1]).reshape(view)
        hist = hist / (hist.sum() * volume)
    return _HistogramddResult(hist, tuple(edges))


def _gradient_along(f, d, h, edge_order):
    """numpy.gradient along dim d: h is a number (uniform spacing) or a 1-d tensor of coordinates."""
    n = f.shape[d]
    if n < edge_order + 1:
        raise RuntimeError('torch.gradient expected each dimension size to be at least edge_order+1')
    take = f.narrow
    shape = [1] * f.dim()
    shape[d] = -1
    if isinstance(h, Tensor):
        x = h.to(f.dtype)
        dx = x[1:] - x[:-1]
        hl, hr = dx[:-1].reshape(shape), dx[1:].reshape(shape)
        inner = (hl * hl * take(d, 2, n - 2) - hr * hr * take(d, 0, n - 2) + (hr * hr - hl * hl) *
                 take(d, 1, n - 2)) / (hl * hr * (hl + hr))
        if edge_order == 1:
            first = (take(d, 1, 1) - take(d, 0, 1)) / dx[0]
            last = (take(d, n - 1, 1) - take(d, n - 2, 1)) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * take(d, 0, 1) + (d1 + d2) / (d1 * d2) * take(d, 1, 1)
                     - d1 / (d2 * (d1 + d2)) * take(d, 2, 1))
            d1, d2 = dx[-2], dx[-1]
            last = (d2 / (d1 * (d1 + d2)) * take(d, n - 3, 1) - (d2 + d1) / (d1 * d2) * take(d, n - 2, 1)
                    + (2 * d2 + d1) / (d2 * (d1 + d2)) * take(d, n - 1, 1))
    else:
        inner = (take(d, 2, n - 2) - take(d, 0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (take(d, 1, 1) - take(d, 0, 1)) / h
            last = (take(d, n - 1, 1) - take(d, n - 2, 1)) / h
        else:
            first = (-3 * take(d, 0, 1) + 4 * take(d, 1, 1) - take(d, 2, 1)) / (2 * h)
            last = (3 * take(d, n - 1, 1) - 4 * take(d, n - 2, 1) + take(d, n - 3, 1)) / (2 * h)
    return _C.cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences in the interior and one-sided ones (first or second order) at the edges
    along each dim; spacing is a number, one number per dim, or one coordinate tensor per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError(f'torch.gradient only supports edge_order=1 and edge_order=2. Got {edge_order}')
    dims = list(builtins.range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [wrap_dim(d, input.dim()) for d in dims]
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise RuntimeError(f'dim {d} appears multiple times in the list of dims')
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f'torch.gradient expected spacing to be unspecified, a scalar or its length to '
                               f'match the number of dimensions of input, got {len(spacing)} and {len(dims)}')
        bad = [s for s in spacing if isinstance(s, Tensor) and s.dim() != 1]
        if bad:
            raise RuntimeError('torch.gradient expected each element of spacing to have one dimension, but got an '
                               f'element with {bad[0].dim()} dimensions!')
        steps = list(spacing)
    else:
        steps = [spacing.item() if isinstance(spacing, Tensor) else spacing] * len(dims)
    f = input if input.is_floating_point() else input.to(_C.get_default_dtype())
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, steps))


def _scale_by_power_of_two(x, k):
    """x * 2**k, exact, in two steps (2**k alone may overflow where the product does not)."""
    half = _C.floor(k / 2)
    return x * _C.pow(2.0, half) * _C.pow(2.0, k - half)


def _frexp_values(input):
    x = input.detach().to(_C.float64)
    regular = _C.isfinite(x) & (x != 0)
    safe = _C.where(regular, x, _C.ones_like(x))
    e = _C.floor(_C.log2(_C.abs(safe))) + 1
    m = _scale_by_power_of_two(safe, -e)
    e = e + (_C.abs(m) >= 1).to(e.dtype) - (_C.abs(m) < 0.5).to(e.dtype)  # log2's rounding, either way
    mantissa = _C.where(regular, _scale_by_power_of_two(safe, -e), x).to(input.dtype)
    return mantissa, _C.where(regular, e, _C.zeros_like(e)).to(_C.int32)


_frexp_function = None


def _frexp_fn():
    """The autograd Function of frexp, made on first use (ember.autograd loads after this module).
    Its backward is PyTorch's, grad / exponent.exp2(): exp2 of the int32 exponent is taken in the
    default dtype, so a float64 input beyond float32's exponent range gets a 0 or inf gradient, as
    in torch."""
    global _frexp_function
    if _frexp_function is None:
        from .autograd import Function

        class Frexp(Function):
            @staticmethod
            def forward(ctx, input):
                mantissa, exponent = _frexp_values(input)
                ctx.mark_non_differentiable(exponent)
                ctx.save_for_backward(exponent)
                return mantissa, exponent

            @staticmethod
            def backward(ctx, grad_mantissa, grad_exponent):
                exponent, = ctx.saved_tensors
                return grad_mantissa / exponent.exp2()
        _frexp_function = Frexp
    return _frexp_function


def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2**exponent and 0.5 <= |mantissa| < 1 (zeros, infinities
    and nans: themselves and exponent 0); the mantissa is differentiable."""
    if not input.is_floating_point():
        raise RuntimeError('torch.frexp() only supports floating-point dtypes')
    if input.requires_grad and _C.is_grad_enabled():
        mantissa, exponent = _frexp_fn().apply(input)
    else:
        mantissa, exponent = _frexp_values(input)
    if out is not None:
        out[0].resize_(mantissa.shape).copy_(mantissa)
        out[1].resize_(exponent.shape).copy_(exponent)
        return _Frexp(out[0], out[1])
    return _Frexp(mantissa, exponent)


def is_inference(input):
    return input.is_inference_tensor


def matrix_power(input, n):
    from . import linalg
    return linalg.matrix_power(input, n)


# ---- process and build facts ----
_interop_threads = [1]


def get_num_interop_threads():
    """Ember runs no inter-op thread pool; the value set is reported back."""
    return _interop_threads[0]


def set_num_interop_threads(num):
    if num <= 0:
        raise RuntimeError('Expected positive number of threads')
    _interop_threads[0] = num


def init_num_threads():
    pass


def is_distributed(input):
    return False


def is_vulkan_available():
    return False


def get_file_path(*path_components):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), *path_components)


def prepare_multiprocessing_environment(path):
    pass


def to_dlpack(tensor):
    from .utils.dlpack import to_dlpack as convert
    return convert(tensor)


FUNCTIONS = {f.__name__: f for f in (
    kl_div, cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, triplet_margin_loss,
    poisson_nll_loss, bilinear, max_pool1d_with_indices, hann_window, hamming_window, blackman_window, kaiser_window,
    bartlett_window, renorm, norm_except_dim, frobenius_norm, quantile, nanquantile, matrix_power,
    get_num_interop_threads, set_num_interop_threads, init_num_threads, is_distributed, is_vulkan_available,
    get_file_path, prepare_multiprocessing_environment, to_dlpack, conv_tbc, index_reduce, gradient, frexp,
    is_inference, histogramdd)}
from ._segment import segment_reduce  # noqa: E402 (its own file)
FUNCTIONS['segment_reduce'] = segment_reduce
METHODS = dict(renorm=renorm, quantile=quantile, nanquantile=nanquantile, matrix_power=matrix_power,
               is_distributed=is_distributed, index_reduce=index_reduce, frexp=frexp, is_inference=is_inference,
               # (from a clone: the reduction saves its input, which the copy_ then overwrites)
               index_reduce_=lambda self, dim, index, source, reduce, *, include_self=True: self.copy_(
                   index_reduce(self.clone(), dim, index, source, reduce, include_self=include_self)),
               renorm_=lambda self, p, dim, maxnorm:
               self.copy_(renorm(self, p, dim, maxnorm)))
