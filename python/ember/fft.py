"""ember.fft: torch.fft. Every transform is composed, as PyTorch 1.13 composes it, from three
primitives of ember._C (include/ember/fft.h): _fft_c2c (complex to complex), _fft_r2c (real to
complex, the Hermitian half or all of it) and _fft_c2r (the Hermitian half to real), each with a
backward formula. Here: argument checks, dtype promotion (integers to the default float dtype,
real to complex where a complex input is needed), the n/s trimming and zero padding, and the
norm modes. fftfreq, rfftfreq, fftshift and ifftshift are written with arange and roll."""
import builtins
import math

from . import _C
from ._argcheck import accepts
from ._tensor import Tensor  # noqa: F401 -- torch.fft.Tensor is torch.Tensor

__all__ = ['fft', 'ifft', 'fft2', 'ifft2', 'fftn', 'ifftn', 'rfft', 'irfft', 'rfft2', 'irfft2', 'rfftn', 'irfftn',
           'hfft', 'ihfft', 'hfft2', 'ihfft2', 'hfftn', 'ihfftn', 'fftfreq', 'rfftfreq', 'fftshift', 'ifftshift']

# em_fft_norm: the scale of a transform's result
_NONE, _SQRT_N, _N = 0, 1, 2
_COMPLEX_OF = {'float32': 'complex64', 'float64': 'complex128'}


# ---- arguments -----------------------------------------------------------------
def _norm(norm, forward):
    """PyTorch's norm string as the scale of a forward or inverse transform."""
    if norm is None or norm == 'backward':
        return _NONE if forward else _N
    if norm == 'forward':
        return _N if forward else _NONE
    if norm == 'ortho':
        return _SQRT_N
    if not isinstance(norm, str):
        raise TypeError(f"argument 'norm' must be str, not {type(norm).__name__}")
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _dtype_name(dtype):
    return str(dtype).split('.')[-1]


def _scalar_name(dtype):
    from ._lapack import _scalar_name as name
    return {'complex32': 'ComplexHalf', 'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble'}.get(
        _dtype_name(dtype)) or name(dtype)


def _promote(x, require_complex=False):
    """PyTorch's promote_tensor_fft: integers (and bool) to the default float dtype; float32 and
    float64 only (no half precision on the CPU); to the complex dtype when require_complex."""
    if x.is_complex():
        if _dtype_name(x.dtype) == 'complex32':
            raise RuntimeError('Unsupported dtype ComplexHalf')
        return x
    dtype = x.dtype if x.is_floating_point() else _C.get_default_dtype()
    if _dtype_name(dtype) not in _COMPLEX_OF:
        raise RuntimeError(f'Unsupported dtype {_scalar_name(dtype)}')
    if require_complex:
        dtype = getattr(_C, _COMPLEX_OF[_dtype_name(dtype)])
    return x if x.dtype == dtype else x.to(dtype)


def _wrap_dim(dim, ndim):
    """dim in [0, ndim); a 0-d tensor takes -1 and 0 (as PyTorch, whose transforms then find no
    data points there)."""
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})')
    return dim % n


def _size(x, d):
    return x.shape[d] if x.dim() else 0


def _int_list(fname, name, value):
    if isinstance(value, _C.TensorBase) or not isinstance(value, (list, tuple, _C.Size)):
        raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    from ._argcheck import int_arg
    return [int_arg(fname, name, v) for v in value]


def _check_length(n):
    if n < 1:
        raise RuntimeError(f'Invalid number of data points ({n}) specified')


def _shape_and_dims(fname, x, s, dim):
    """PyTorch's canonical (shape, dims) of an n-d transform: dims default to the last len(s) dims,
    or all of them; a size of -1 in s is the input's."""
    if isinstance(dim, int) and not isinstance(dim, bool):
        dim = [dim]
    if isinstance(s, int) and not isinstance(s, bool):
        s = [s]
    if s is not None:  # argument types first, as PyTorch's parser
        s = _int_list(fname, 's', s)
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = [_wrap_dim(d, ndim) for d in _int_list(fname, 'dim', dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError('FFT dims must be unique')
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise RuntimeError('When given, dim and shape arguments must have the same length')
        if len(s) > ndim:
            raise RuntimeError(f'Got shape with {len(s)} values but input tensor only has {ndim} dimensions.')
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [_size(x, d) if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims, shape = list(range(ndim)), list(x.shape)
    else:
        shape = [_size(x, d) for d in dims]
    for n in shape:
        _check_length(n)
    return shape, dims


def _resize(x, dims, sizes):
    """x trimmed or zero-padded at the end of each dim to its size."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = x.narrow(d, 0, n)
        elif have < n:
            pad = list(x.shape)
            pad[d] = n - have
            x = _C.cat([x, _C.zeros(pad, dtype=x.dtype)], d)
    return x


def _out(result, out, fname):
    if out is None:
        return result
    if result.is_complex() and not out.is_complex():
        raise RuntimeError(f'{fname} expects a complex output tensor, but got {_scalar_name(out.dtype)}')
    if not result.is_complex() and not out.is_floating_point():
        raise RuntimeError(f'{fname} expects a floating point output tensor, but got {_scalar_name(out.dtype)}')
    return out.resize_(result.shape).copy_(result)


def _conj(x):
    return x.conj_physical() if x.is_complex() else x


# ---- the three kinds of transform, PyTorch's fft_c2c / fft_r2c / fft_c2r -------
def _c2c(fname, x, s, dims, norm, forward):
    if not x.is_complex():
        raise RuntimeError(f'{fname} expects a complex input tensor, but got {_scalar_name(x.dtype)}')
    x = _resize(x, dims, s)
    return _C._fft_c2c(x, dims, _norm(norm, forward), forward)


def _r2c(fname, x, s, dims, norm, forward, onesided):
    """The forward real transform (conjugated for an inverse one: ihfft and ifft of a real input)."""
    if x.is_complex():
        raise RuntimeError(f'{fname} expects a real input tensor, but got {_scalar_name(x.dtype)}')
    x = _resize(_promote(x), dims, s)
    r = _C._fft_r2c(x, dims, _norm(norm, forward), onesided)
    return r if forward else _conj(r)


def _c2r(x, s, dims, last_dim_size, norm, forward):
    """The real transform of the Hermitian half x (conjugated first for a forward one: hfft):
    s are the sizes x is brought to (the last one last_dim_size // 2 + 1)."""
    x = _resize(x, dims, s)
    if forward:
        x = _conj(x)
    return _C._fft_c2r(x, dims, _norm(norm, forward), last_dim_size)


def _one_dim(fname, x, n, dim):
    d = _wrap_dim(dim, x.dim())
    if x.dim() == 0:
        raise RuntimeError('Invalid number of data points (0) specified')
    n = x.shape[d] if n is None else n
    _check_length(n)
    return [n], [d]


def _c2r_shape(fname, x, s, dim):
    """Shape and dims of an inverse real transform, and the output's last size (default
    2 * (input - 1)); the input is brought to its half there."""
    shape, dims = _shape_and_dims(fname, x, s, dim)
    if not dims:
        raise RuntimeError(f'{fname} must transform at least one axis')
    given = s is not None and (s if isinstance(s, int) else _int_list(fname, 's', s)[-1]) != -1
    last = shape[-1] if given else 2 * (_size(x, dims[-1]) - 1)
    _check_length(last)
    return shape[:-1] + [last // 2 + 1], dims, last


# ---- 1-d ---------------------------------------------------------------------------
@accepts(input='Tensor', n='int?', dim='int')
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-d discrete Fourier transform (complex result; a real input gives the full spectrum)."""
    s, dims = _one_dim('fft', input, n, dim)
    r = _c2c('fft', input, s, dims, norm, True) if input.is_complex() else \
        _r2c('fft', input, s, dims, norm, True, False)
    return _out(r, out, 'fft')


@accepts(input='Tensor', n='int?', dim='int')
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-d inverse discrete Fourier transform."""
    s, dims = _one_dim('ifft', input, n, dim)
    r = _c2c('ifft', input, s, dims, norm, False) if input.is_complex() else \
        _r2c('ifft', input, s, dims, norm, False, False)
    return _out(r, out, 'ifft')


@accepts(input='Tensor', n='int?', dim='int')
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The DFT of a real input: its n // 2 + 1 non-negative frequencies."""
    s, dims = _one_dim('rfft', input, n, dim)
    return _out(_r2c('rfft', input, s, dims, norm, True, True), out, 'rfft')


@accepts(input='Tensor', n='int?', dim='int')
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the n // 2 + 1 first entries of ifft of a real input."""
    s, dims = _one_dim('ihfft', input, n, dim)
    return _out(_r2c('ihfft', input, s, dims, norm, False, True), out, 'ihfft')


def _c2r_1d(fname, input, n, dim, norm, forward, out):
    x = _promote(input, require_complex=True)
    d = _wrap_dim(dim, x.dim())
    if x.dim() == 0:
        raise RuntimeError('Invalid number of data points (0) specified')
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_length(n)
    return _out(_c2r(x, [n // 2 + 1], [d], n, norm, forward), out, fname)


@accepts(input='Tensor', n='int?', dim='int')
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: n real values (default 2 * (input.size(dim) - 1)) from the half spectrum."""
    return _c2r_1d('irfft', input, n, dim, norm, False, out)


@accepts(input='Tensor', n='int?', dim='int')
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The DFT of a Hermitian-symmetric signal given by its half: n real values."""
    return _c2r_1d('hfft', input, n, dim, norm, True, out)


# ---- n-d ---------------------------------------------------------------------------
def _fftn(fname, input, s, dim, norm, forward, out):
    shape, dims = _shape_and_dims(fname, input, s, dim)
    x = _promote(input, require_complex=True)
    if x.dim() == 0:
        raise RuntimeError('ndim must be >= 1')
    if not dims:  # no dims to transform: the (promoted) input itself
        return _out(x if out is None else x.clone(), out, fname)
    return _out(_c2c(fname, x, shape, dims, norm, forward), out, fname)


@accepts(input='Tensor')
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d DFT over dim (default: the last len(s) dims, or all)."""
    return _fftn('fftn', input, s, dim, norm, True, out)


@accepts(input='Tensor')
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d inverse DFT."""
    return _fftn('ifftn', input, s, dim, norm, False, out)


@accepts(input='Tensor')
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-d DFT (fftn over the last two dims)."""
    return _fftn('fftn', input, s, dim, norm, True, out)


@accepts(input='Tensor')
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-d inverse DFT."""
    return _fftn('ifftn', input, s, dim, norm, False, out)


def _rfftn(fname, input, s, dim, norm, forward, out):
    """rfftn (forward) and ihfftn (inverse): the real transform over the last dim, then complex
    transforms over the others (conjugated for ihfftn)."""
    if forward and input.is_complex():
        raise RuntimeError(f'{fname} expects a real-valued input tensor, but got {_scalar_name(input.dtype)}')
    shape, dims = _shape_and_dims(fname, input, s, dim)
    if not dims:
        raise RuntimeError(f'{fname} must transform at least one axis')
    if input.is_complex():
        raise RuntimeError(f'{fname} expects a real-valued input tensor, but got {_scalar_name(input.dtype)}')
    x = _resize(_promote(input), dims, shape)
    mode = _norm(norm, forward)
    if forward:
        return _out(_C._fft_r2c(x, dims, mode, True), out, fname)
    r = _conj(_C._fft_r2c(x, dims[-1:], mode, True))
    if len(dims) > 1:
        r = _C._fft_c2c(r, dims[:-1], mode, False)
    return _out(r, out, fname)


@accepts(input='Tensor')
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d DFT of a real input, the last dim halved (as rfft)."""
    return _rfftn('rfftn', input, s, dim, norm, True, out)


@accepts(input='Tensor')
def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d inverse of hfftn."""
    return _rfftn('ihfftn', input, s, dim, norm, False, out)


@accepts(input='Tensor')
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _rfftn('rfftn', input, s, dim, norm, True, out)


@accepts(input='Tensor')
def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _rfftn('ihfftn', input, s, dim, norm, False, out)


def _irfftn(fname, input, s, dim, norm, forward, out):
    """irfftn (inverse) and hfftn (forward): complex transforms over all dims but the last, then
    the real one over it (on the conjugate for hfftn)."""
    shape, dims, last = _c2r_shape(fname, input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    mode = _norm(norm, forward)
    if not forward:
        return _out(_C._fft_c2r(x, dims, mode, last), out, fname)
    if len(dims) > 1:
        x = _C._fft_c2c(x, dims[:-1], mode, True)
    return _out(_C._fft_c2r(_conj(x), dims[-1:], mode, last), out, fname)


@accepts(input='Tensor')
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn: real values, the last dim's size s[-1] (default 2 * (size - 1))."""
    return _irfftn('irfftn', input, s, dim, norm, False, out)


@accepts(input='Tensor')
def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-d DFT of a Hermitian-symmetric signal given by its half over the last dim."""
    return _irfftn('hfftn', input, s, dim, norm, True, out)


@accepts(input='Tensor')
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _irfftn('irfftn', input, s, dim, norm, False, out)


@accepts(input='Tensor')
def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _irfftn('hfftn', input, s, dim, norm, True, out)


# ---- helpers -----------------------------------------------------------------------
def _freq(fname, k, n, d, dtype, device, requires_grad, out):
    """k (float64 sample indices) / (n d) as a factory function's result: dtype (default: out's,
    else the default float dtype), out=, requires_grad."""
    if dtype is None:
        dtype = out.dtype if out is not None else _C.get_default_dtype()
    probe = _C.zeros(0, dtype=dtype)
    if probe.is_complex():
        raise RuntimeError(f'"arange_cpu" not implemented for \'{_scalar_name(dtype)}\'')
    if not probe.is_floating_point():
        raise RuntimeError(f'{fname} requires a floating point or complex dtype')
    scale = 1.0 / (n * d) if n * d else math.inf
    r = (k * scale).to(dtype)
    if device is not None and str(device).split(':')[0] != 'cpu':
        r = r.to(device)
    if out is not None:
        r = out.resize_(r.shape).copy_(r)
    if requires_grad:
        r.requires_grad_(True)
    return r


def _check_count(n):
    if n < 0:
        raise RuntimeError(f'Trying to create tensor with negative dimension {n}: [{n}]')


@accepts(n='int', d='float')
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of fft of length n and sample spacing d: [0, 1, ..., -2, -1] / (d n)."""
    _check_count(n)
    k = _C.arange(n, dtype=_C.float64)
    k = _C.cat([k.narrow(0, 0, (n + 1) // 2), k.narrow(0, (n + 1) // 2, n // 2) - n])
    return _freq('fftfreq', k, n, d, dtype, device, requires_grad, out)


@accepts(n='int', d='float')
def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft of length n: [0, 1, ..., n // 2] / (d n)."""
    count = (n // 2 if n >= 0 else -(-n // 2)) + 1  # C's division, as PyTorch: n = -1 gives one frequency, -0.0
    _check_count(count)
    return _freq('rfftfreq', _C.arange(count, dtype=_C.float64), n, d, dtype, device, requires_grad, out)


def _shift(input, dim, half):
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [_wrap_dim(d, input.dim()) for d in _int_list('fftshift', 'dim', [dim] if isinstance(dim, int) else dim)]
    if not dims:
        raise RuntimeError('`shifts` required')
    return _C.roll(input, [half(input.shape[d]) for d in dims], dims)


@accepts(input='Tensor')
def fftshift(input, dim=None):
    """Moves the zero frequency to the middle: rolls each dim by size // 2."""
    return _shift(input, dim, lambda n: n // 2)


@accepts(input='Tensor')
def ifftshift(input, dim=None):
    """The inverse of fftshift: rolls each dim by (size + 1) // 2."""
    return _shift(input, dim, lambda n: (n + 1) // 2)

