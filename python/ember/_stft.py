"""torch.stft and torch.istft (and the Tensor methods), as PyTorch 1.13 defines them: frames of
the (centred, padded) signal times the window, transformed by ember.fft's primitives; istft
inverts each frame and overlap-adds them (F.fold), divided by the summed squared window."""
import warnings

from . import _C

_warned = set()


def _warn_once(message):
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message)


_KINDS = {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'bfloat16': 'BFloat16', 'int64': 'Long',
          'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool',
          'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble', 'complex32': 'ComplexHalf'}


def _kind(x):
    return _KINDS.get(str(x.dtype).split('.')[-1], '')


def _repr(x):
    """A tensor as PyTorch's messages print it: torch.FloatTensor[2, 3]."""
    return f"torch.{_kind(x)}Tensor{list(x.shape)}"


def _window_repr(w):
    return 'None' if w is None else f"torch.{_kind(w)}Tensor{{{list(w.shape)}}}"


def _pad_center(x, n_fft, pad_mode):
    """stft's centring: n_fft // 2 on both sides of the last dim, as F.pad pads a 3-d input
    (a complex signal as its real and imaginary parts, two signals)."""
    from .nn import functional as F
    ndim, pad = x.dim(), n_fft // 2
    if not x.is_complex():
        x3 = x.reshape([1] * (3 - ndim) + list(x.shape)) if ndim < 3 else x
        padded = F.pad(x3, [pad, pad], pad_mode)
        return padded.reshape(list(padded.shape)[-ndim:]) if ndim < 3 else padded
    parts = _C.view_as_real(x).movedim(-1, -2)  # (..., 2, n)
    lead, n = list(parts.shape[:-1]), parts.shape[-1]
    padded = F.pad(parts.reshape(1, -1, n), [pad, pad], pad_mode).reshape(lead + [n + 2 * pad])
    return _C.view_as_complex(padded.movedim(-2, -1).contiguous())


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode='reflect',
         normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform: (n_fft // 2 + 1 or n_fft, frames) per signal, complex (or
    its (real, imag) pairs when return_complex=False)."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if center:
        input = _pad_center(input, n_fft, pad_mode)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(what):
        raise RuntimeError(f"stft({_repr(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window="
                           f"{_window_repr(window)}, normalized={int(normalized)}, onesided={onesided}, "
                           f"return_complex={int(return_complex)}) : {what}")

    complex_out = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_out:
            _warn_once('stft will soon require the return_complex parameter be given for real inputs, and will '
                       'further require that return_complex=True in a future PyTorch release.')
        return_complex = complex_out
    if not (input.is_floating_point() or input.is_complex()):
        fail('expected a tensor of floating point or complex values')
    if input.dim() not in (1, 2):
        fail('expected a 1D or 2D tensor')
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f'expected 0 < n_fft < {length}, but got n_fft={win}')
    if hop <= 0:
        fail(f'expected hop_length > 0, but got hop_length={hop}')
    if win <= 0 or win > n_fft:
        fail(f'expected 0 < win_length <= n_fft, but got win_length={win}')
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f'expected a 1D window tensor of size equal to win_length={win}, but got window with size '
             f'{list(window.shape)}')
    if win < n_fft:  # the window centred in n_fft
        left = (n_fft - win) // 2
        base = window if window is not None else _C.ones(win, dtype=x.dtype)
        window = _C.cat([_C.zeros(left, dtype=base.dtype), base, _C.zeros(n_fft - win - left, dtype=base.dtype)])
    frames = x.unfold(1, n_fft, hop)  # (batch, n_frames, n_fft)
    if window is not None:
        frames = frames * window
    complex_fft = frames.is_complex()
    onesided = not complex_fft if onesided is None else onesided
    mode = 1 if normalized else 0  # by 1/sqrt(n_fft), or not scaled
    if complex_fft:
        if onesided:
            raise RuntimeError('Cannot have onesided output if window or input is complex')
        out = _C._fft_c2c(frames, [2], mode, True)
    else:
        out = _C._fft_r2c(frames, [2], mode, onesided)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex else _C.view_as_real(out)


def _overlap_add(frames, hop, length):
    """(channels, n_frames, n_fft) frames summed at offsets k * hop into (channels, length); complex
    ones part by part (as twice the channels)."""
    from .nn import functional as F
    c, n_frames, n_fft = frames.shape
    if frames.is_complex():
        parts = _C.view_as_real(frames).permute(0, 3, 1, 2).reshape(c * 2, n_frames, n_fft)
        y = _overlap_add(parts, hop, length)
        return _C.view_as_complex(y.reshape(c, 2, length).transpose(1, 2).contiguous())
    cols = frames.transpose(1, 2)  # (channels, n_fft, n_frames): fold's columns
    return F.fold(cols, output_size=(1, length), kernel_size=(1, n_fft), stride=(1, hop)).reshape(c, length)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft: the overlap-added inverse transforms of the frames, divided by the
    overlap-added squared window; `length` trims or zero-pads the result."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(what, sep=' : '):
        raise RuntimeError(f"istft(CPU{_kind(input)}Type{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
                           f"win_length={win}, window={_window_repr(window)}, center={int(center)}, normalized="
                           f"{int(normalized)}, onesided={onesided}, length={length}, return_complex="
                           f"{int(return_complex)}){sep}{what}")

    if not input.is_complex():
        _warn_once('istft will require a complex-valued input tensor in a future PyTorch release. Matching the '
                   'output from stft with return_complex=True. ')
    real = _C.view_as_real(input) if input.is_complex() else input
    ndim = real.dim()
    if ndim < 3:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], '
                         'but got -3)')
    n_frames, fft_size = real.shape[-2], real.shape[-3]
    expected = n_fft + hop * (n_frames - 1)
    if real.numel() == 0:
        fail('input tensor cannot be empty.')
    if ndim not in (3, 4):
        fail('expected a tensor with 3 or 4 dimensions of real, or 2 or 3 dimensions of  complex, but got '
             f'{ndim}')
    if real.shape[-1] != 2:
        fail('expected the last dimension to be 2 (corresponding to real and imaginary parts), but got '
             f'{input.shape[-1]}')
    half = fft_size != n_fft if onesided is None else onesided
    if half and n_fft // 2 + 1 != fft_size:
        fail('expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 when '
             f'onsided=True, but got {fft_size}')
    if not half and n_fft != fft_size:
        fail('expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when '
             f'onsided=False, but got {fft_size}')
    if not 0 < hop <= win:
        fail('expected 0 < hop_length <= win_length')
    if not 0 < win <= n_fft:
        fail('expected 0 < win_length <= n_fft')
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail('Invalid window shape. window has to be 1D and length of `win_length`')
    w = window if window is not None else _C.ones(win, dtype=real.dtype)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = _C.cat([_C.zeros(left, dtype=w.dtype), w, _C.zeros(n_fft - win - left, dtype=w.dtype)])
    if ndim == 3:
        real = real.unsqueeze(0)
    spec = _C.view_as_complex(real.transpose(1, 2).contiguous())  # (channels, n_frames, fft_size)
    mode = 1 if normalized else 2  # by 1/sqrt(n_fft), or by 1/n_fft
    if return_complex:
        if half:
            raise RuntimeError('Cannot have onesided output if window or input is complex')
        frames = _C._fft_c2c(spec, [2], mode, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError('Complex windows are incompatible with return_complex=False')
        if not half:
            spec = spec.narrow(-1, 0, n_fft // 2 + 1)
        frames = _C._fft_c2r(spec, [2], mode, n_fft)
    y = _overlap_add(frames * w, hop, expected)
    envelope = _overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft).contiguous(), hop, expected)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (expected - n_fft // 2 if center else expected)
    stop = min(end, expected)
    y = y.narrow(1, start, max(stop - start, 0))
    envelope = envelope.narrow(1, start, max(stop - start, 0))
    if envelope.numel() and bool((envelope.abs() < 1e-11).any()):
        fail('window overlap add min: 1\n[ CPUBoolType{} ]', sep=' ')
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > expected:
        _warn_once('The length of signal is shorter than the length parameter. Result is being padded with zeros '
                   'in the tail. Please check your center and hop_length settings.')
        extra = list(y.shape)
        extra[-1] = end - expected
        y = _C.cat([y, _C.zeros(extra, dtype=y.dtype)], -1)
    return y


def install(namespace, tensor_class):
    namespace['stft'], namespace['istft'] = stft, istft
    tensor_class.stft = stft
    tensor_class.istft = istft
