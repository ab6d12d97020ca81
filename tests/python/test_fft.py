"""ember.fft against PyTorch 1.13's torch.fft: every transform in float32, float64, complex64,
complex128 and int64 inputs, each norm, n/s/dim variants (trimming, zero padding, -1 sizes,
negative and permuted dims), non-contiguous inputs, out=, the error types, fftfreq/rfftfreq,
fftshift/ifftshift, and stft/istft. Gradients (float64 gradcheck, and against torch with the
same cotangent) where Ember's autograd records complex tensors."""
import numpy as np
import pytest
import torch

import ember

FLOATS = ['float32', 'float64']
COMPLEX = ['complex64', 'complex128']
ONE_D = ['fft', 'ifft', 'rfft', 'irfft', 'hfft', 'ihfft']
N_D = ['fft2', 'ifft2', 'fftn', 'ifftn', 'rfft2', 'irfft2', 'rfftn', 'irfftn', 'hfft2', 'ihfft2', 'hfftn', 'ihfftn']
REAL_IN = {'rfft', 'ihfft', 'rfft2', 'ihfft2', 'rfftn', 'ihfftn'}
NORMS = [None, 'backward', 'ortho', 'forward']


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith('complex'):
        a = a + 1j * rng.standard_normal(shape)
    if dtype == 'int64':
        a = np.round(a * 5)
    return a


def pair(a, dtype):
    return ember.tensor(a, dtype=getattr(ember, dtype)), torch.tensor(a, dtype=getattr(torch, dtype))


def outcome(fn, *args, **kwargs):
    """fn's result as an ndarray (and its dtype name), or the type of the exception it raised."""
    try:
        r = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 -- compared with torch's exception type
        return type(e)
    if isinstance(r, torch.Tensor):
        r = r.resolve_conj()
    return np.asarray(r.detach().numpy()), str(r.dtype).split('.')[-1]


def tolerance(dtype_name):
    return 2e-5 if dtype_name in ('float32', 'complex64') else 1e-11


def check_same(got, want):
    if isinstance(want, type) or isinstance(got, type):
        assert got is want, (got, want)
        return
    (g, gd), (w, wd) = got, want
    assert gd == wd and g.shape == w.shape, (gd, wd, g.shape, w.shape)
    scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
    np.testing.assert_allclose(g, w, rtol=0, atol=tolerance(wd) * scale)


def compare(name, a, dtype, **kwargs):
    x, t = pair(a, dtype)
    check_same(outcome(getattr(ember.fft, name), x, **kwargs), outcome(getattr(torch.fft, name), t, **kwargs))


# ---- values ---------------------------------------------------------------------
@pytest.mark.parametrize('dtype', FLOATS + COMPLEX + ['int64'])
@pytest.mark.parametrize('name', ONE_D)
def test_one_dim(name, dtype):
    for n in (1, 2, 3, 5, 8, 12, 17, 30, 97, 128, 210):
        a = values((3, n), dtype, seed=n)
        for norm in NORMS:
            compare(name, a, dtype, norm=norm)
        for m in (1, n + 3, max(1, n - 2), 2 * n):
            compare(name, a, dtype, n=m)
    a = values((4, 6, 5), dtype)
    for dim in (0, 1, -2, -3):
        compare(name, a, dtype, dim=dim, norm='ortho')
        compare(name, a, dtype, n=7, dim=dim, norm='forward')


@pytest.mark.parametrize('dtype', FLOATS + COMPLEX + ['int64'])
@pytest.mark.parametrize('name', N_D)
def test_n_dim(name, dtype):
    a = values((3, 4, 6), dtype)
    for kwargs in ({}, {'s': (3, 5)}, {'s': (5, -1), 'dim': (0, -1)}, {'dim': (0,)}, {'dim': (-1, 0)},
                   {'dim': (2, 0, 1)}, {'s': (2,)}, {'s': (2, 7), 'dim': (-1, -2)}, {'norm': 'ortho'},
                   {'norm': 'forward', 'dim': 1}, {'s': 4, 'dim': 0}, {'s': (6, 1, 3)}):
        compare(name, a, dtype, **kwargs)


@pytest.mark.parametrize('name', ONE_D + N_D)
def test_non_contiguous_and_odd_shapes(name):
    dtype = 'float64' if name in REAL_IN else 'complex128'
    a = values((7, 6, 5), dtype)
    x, t = pair(a, dtype)
    x, t = x.transpose(0, 2)[::2], t.transpose(0, 2)[::2]
    check_same(outcome(getattr(ember.fft, name), x), outcome(getattr(torch.fft, name), t))
    one = values((1, 1), dtype)  # length-1 transforms
    if name not in ('irfft', 'hfft', 'irfft2', 'hfft2', 'irfftn', 'hfftn'):
        compare(name, one, dtype)


def test_large_and_prime_lengths():
    for n in (61, 67, 1009, 4096, 4095, 2 * 3 * 5 * 7 * 11, 2 * 10007, 100003):
        for dtype in ('complex64', 'complex128'):
            compare('fft', values((2, n), dtype), dtype)
        compare('irfft', values((2, n // 2 + 1), 'complex128'), 'complex128', n=n)


def test_batched_many_lines():
    # enough lines for the pool to split a pass (each chunk has its own buffers)
    for dtype in ('float32', 'float64', 'complex64', 'complex128'):
        compare('fftn', values((64, 33, 20), dtype), dtype, dim=(0, 2))
        compare('rfft', values((300, 250), dtype if dtype.startswith('float') else 'float64'),
                dtype if dtype.startswith('float') else 'float64', dim=0)


def test_round_trips():
    x = ember.randn(4, 9, dtype=ember.float64)
    for norm in NORMS:
        assert ember.allclose(ember.fft.irfft(ember.fft.rfft(x, norm=norm), n=9, norm=norm), x, atol=1e-12)
        assert ember.allclose(ember.fft.hfft(ember.fft.ihfft(x, norm=norm), n=9, norm=norm), x, atol=1e-12)
        assert ember.allclose(ember.fft.irfftn(ember.fft.rfftn(x, norm=norm), s=(4, 9), norm=norm), x, atol=1e-12)
        z = ember.fft.fftn(x, norm=norm)
        assert ember.allclose(ember.fft.ifftn(z, norm=norm), x.to(ember.complex128), atol=1e-12)


# ---- out=, freq, shift ----------------------------------------------------------
def test_out():
    a = values((3, 8), 'float64')
    x, t = pair(a, 'float64')
    for name, dtype in (('fft', 'complex128'), ('rfft', 'complex128'), ('irfft', 'float64'), ('fftn', 'complex64'),
                        ('ihfftn', 'complex128'), ('hfft2', 'float64')):
        eo, to = ember.zeros(1, dtype=getattr(ember, dtype)), torch.zeros(1, dtype=getattr(torch, dtype))
        r = getattr(ember.fft, name)(x, out=eo)
        getattr(torch.fft, name)(t, out=to)
        assert r is eo
        check_same(outcome(lambda: eo), outcome(lambda: to))
    for name, dtype in (('fft', 'float64'), ('irfft', 'complex128'), ('rfft', 'float32')):
        check_same(outcome(ember.fft.__dict__[name], x, out=ember.zeros(1, dtype=getattr(ember, dtype))),
                   outcome(torch.fft.__dict__[name], t, out=torch.zeros(1, dtype=getattr(torch, dtype))))


def test_fftfreq_rfftfreq():
    for fn in ('fftfreq', 'rfftfreq'):
        for n in (0, 1, 2, 5, 8):
            for d in (1.0, 0.5, 3):
                check_same(outcome(getattr(ember.fft, fn), n, d), outcome(getattr(torch.fft, fn), n, d))
        check_same(outcome(getattr(ember.fft, fn), 6, dtype=ember.float64),
                   outcome(getattr(torch.fft, fn), 6, dtype=torch.float64))
        for n, dtype in ((-1, None), (4, 'int64'), (4, 'complex64')):
            kw_e = {'dtype': getattr(ember, dtype)} if dtype else {}
            kw_t = {'dtype': getattr(torch, dtype)} if dtype else {}
            check_same(outcome(getattr(ember.fft, fn), n, **kw_e), outcome(getattr(torch.fft, fn), n, **kw_t))
        o = ember.zeros(2, dtype=ember.float64)
        assert getattr(ember.fft, fn)(5, out=o) is o and o.dtype == ember.float64
        r = getattr(ember.fft, fn)(4, requires_grad=True)
        assert r.requires_grad and r.is_leaf


def test_shifts():
    a = np.arange(2 * 5 * 4.0).reshape(2, 5, 4)
    for fn in ('fftshift', 'ifftshift'):
        for dim in (None, 0, -1, (0, 2), [1]):
            compare(fn, a, 'float64', dim=dim)
        compare(fn, a, 'complex64', dim=1)
        compare(fn, a, 'int64')
        compare(fn, a, 'float32', dim=3)  # IndexError
        compare(fn, np.float64(1), 'float64')  # a 0-d tensor: torch's roll wants shifts


# ---- errors -----------------------------------------------------------------
@pytest.mark.parametrize('name', ONE_D + N_D)
def test_errors(name):
    x, t = pair(values((3, 4), 'float64'), 'float64')
    z, tz = pair(values((3, 4), 'complex64'), 'complex64')
    fe, ft = getattr(ember.fft, name), getattr(torch.fft, name)
    cases = [((x,), {'norm': 'bogus'}), ((x,), {'dim': 2}), ((x,), {'dim': -3}), ((z,), {}), ((x[0, 0],), {}),
             ((x.to(ember.float16),), {}), ((x.to(ember.bool),), {})]
    torch_cases = [((t,), {'norm': 'bogus'}), ((t,), {'dim': 2}), ((t,), {'dim': -3}), ((tz,), {}), ((t[0, 0],), {}),
                   ((t.to(torch.float16),), {}), ((t.to(torch.bool),), {})]
    if name in ONE_D:
        cases += [((x,), {'n': 0}), ((x,), {'n': -2}), ((x,), {'n': 2.5})]
        torch_cases += [((t,), {'n': 0}), ((t,), {'n': -2}), ((t,), {'n': 2.5})]
    else:
        cases += [((x,), {'dim': (0, 0)}), ((x,), {'s': (2, 3), 'dim': (0,)}), ((x,), {'s': (1, 2, 3)}),
                  ((x,), {'s': (0, 2)}), ((x,), {'s': (2.0, 3)}), ((x,), {'dim': ()})]
        torch_cases += [((t,), {'dim': (0, 0)}), ((t,), {'s': (2, 3), 'dim': (0,)}), ((t,), {'s': (1, 2, 3)}),
                        ((t,), {'s': (0, 2)}), ((t,), {'s': (2.0, 3)}), ((t,), {'dim': ()})]
    for (ea, ek), (ta, tk) in zip(cases, torch_cases):
        got, want = outcome(fe, *ea, **ek), outcome(ft, *ta, **tk)
        if name in ('fftn', 'ifftn', 'fft2', 'ifft2') and ek == {'dim': ()}:
            continue  # torch 1.13 returns uninitialized memory there; Ember the input unchanged
        if isinstance(want, type):
            assert got is want, (name, ek, got, want)
    with pytest.raises(TypeError):
        fe([1.0, 2.0])


def test_argument_types():
    for m in (ember, torch):
        x = m.zeros(3)
        for fn in (lambda: m.fft.fft(x, norm=1), lambda: m.fft.fftn(x, norm=1), lambda: m.fft.fft(x, dim=[0]),
                   lambda: m.fft.fftshift(x, dim=1.0), lambda: m.fft.fftfreq(3.0), lambda: m.fft.fftfreq(3, d='a'),
                   lambda: m.fft.rfft2(x, s=[2.5])):
            with pytest.raises(TypeError):
                fn()


# ---- stft / istft -------------------------------------------------------------------
def _hann(m, n=8):
    return m.hann_window(n, dtype=m.float64)


_SIGNAL, _SIGNALS = values((20,), 'float64', seed=3), values((2, 33), 'float64', seed=4)
STFT_CASES = [
    lambda m: m.stft(m.tensor(_SIGNAL, dtype=m.float32), 8),  # return_complex missing: (re, im) pairs, a warning
    lambda m: m.stft(m.tensor(_SIGNAL), 8, return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNAL), 8, return_complex=False, normalized=True),
    lambda m: m.stft(m.tensor(_SIGNAL), 8, window=_hann(m), return_complex=True, onesided=False),
    lambda m: m.stft(m.tensor(_SIGNAL), 8, win_length=5, window=_hann(m, 5), return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNALS), 10, hop_length=3, win_length=7, return_complex=True, pad_mode='constant'),
    lambda m: m.stft(m.tensor(_SIGNALS), 10, hop_length=3, center=False, return_complex=True,
                     window=m.tensor(np.arange(10.0)) + 0.5j),
    lambda m: m.stft(m.tensor(_SIGNAL).to(m.complex128), 8),
    lambda m: m.stft(m.tensor(_SIGNALS).to(m.complex64), 6, hop_length=4, pad_mode='replicate'),
    lambda m: m.tensor(_SIGNAL).stft(8, return_complex=True),
    # errors
    lambda m: m.stft(m.tensor(_SIGNAL), 30, return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNAL), 30, center=False, return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNAL), 8, hop_length=0, return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNAL), 8, win_length=9, return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNAL), 8, window=m.ones(7), return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNAL).to(m.int64), 8, return_complex=True),
    lambda m: m.stft(m.zeros(2, 3, 20), 8, return_complex=True),
    lambda m: m.stft(m.tensor(_SIGNAL).to(m.complex128), 8, onesided=True),
]
_SPEC = torch.stft(torch.tensor(_SIGNAL), 8, window=torch.hann_window(8, dtype=torch.float64),
                   return_complex=True).numpy()
_SPECS = torch.stft(torch.tensor(_SIGNALS), 10, hop_length=3, window=torch.hann_window(10, dtype=torch.float64),
                    return_complex=True, onesided=False).numpy()
ISTFT_CASES = [
    lambda m: m.istft(m.tensor(_SPEC), 8, window=_hann(m)),
    lambda m: m.istft(m.tensor(_SPEC), 8),
    lambda m: m.istft(m.view_as_real(m.tensor(_SPEC)), 8),
    lambda m: m.istft(m.tensor(_SPEC), 8, window=_hann(m), length=30),
    lambda m: m.istft(m.tensor(_SPEC), 8, window=_hann(m), length=11),
    lambda m: m.istft(m.tensor(_SPEC)[None].expand(3, -1, -1), 8, window=_hann(m)),
    lambda m: m.istft(m.tensor(_SPECS), 10, hop_length=3, window=_hann(m, 10), onesided=False),
    lambda m: m.istft(m.tensor(_SPECS), 10, hop_length=3, window=_hann(m, 10), return_complex=True),
    lambda m: m.istft(m.tensor(_SPECS), 10, hop_length=3, win_length=6, window=_hann(m, 6), return_complex=True,
                      normalized=True),
    lambda m: m.tensor(_SPEC).istft(8, window=_hann(m)),
    # errors
    lambda m: m.istft(m.tensor(_SPEC), 8, window=_hann(m), return_complex=True),
    lambda m: m.istft(m.tensor(_SPEC), 10, window=_hann(m, 10)),
    lambda m: m.istft(m.tensor(_SPEC), 8, hop_length=9, window=_hann(m)),
    lambda m: m.istft(m.tensor(_SPEC)[:, :0], 8, window=_hann(m)),
    lambda m: m.istft(m.tensor(_SPEC), 8, window=m.zeros(8)),
    lambda m: m.istft(m.tensor(_SPEC), 8, window=_hann(m), center=False),
    lambda m: m.istft(m.tensor(_SPEC)[0], 8, window=_hann(m)),
]


def _outcome_msg(fn, m):
    try:
        r = fn(m)
    except Exception as e:  # noqa: BLE001 -- compared with torch's exception
        return type(e), str(e)
    if isinstance(r, torch.Tensor):
        r = r.resolve_conj()
    return np.asarray(r.numpy()), str(r.dtype).split('.')[-1]


@pytest.mark.filterwarnings('ignore::UserWarning')
@pytest.mark.parametrize('case', range(len(STFT_CASES) + len(ISTFT_CASES)))
def test_stft_istft(case):
    fn = (STFT_CASES + ISTFT_CASES)[case]
    got, want = _outcome_msg(fn, ember), _outcome_msg(fn, torch)
    if isinstance(want[0], type):
        assert got == want
    else:
        check_same(got, want)


def test_stft_round_trip():
    x = ember.randn(3, 50, dtype=ember.float64)
    w = ember.hann_window(16, dtype=ember.float64)
    z = ember.stft(x, 16, hop_length=4, window=w, return_complex=True)
    assert ember.allclose(ember.istft(z, 16, hop_length=4, window=w, length=50), x, atol=1e-12)


# ---- gradients ------------------------------------------------------------------------
def _complex_autograd():
    try:
        ember.zeros(1, dtype=ember.complex128).requires_grad_()
    except (NotImplementedError, RuntimeError):
        return False
    return True


needs_complex_autograd = pytest.mark.skipif(not _complex_autograd(),
                                            reason="Ember's autograd does not record complex tensors yet")


def _grads(mod, name, a, dtype, cot, **kwargs):
    x = mod.tensor(a, dtype=getattr(mod, dtype)).requires_grad_()
    y = getattr(mod.fft, name)(x, **kwargs)
    g = mod.tensor(cot, dtype=y.dtype)
    y.backward(g)
    return np.asarray(x.grad.detach().resolve_conj().numpy()), str(y.dtype).split('.')[-1]


@needs_complex_autograd
@pytest.mark.parametrize('name', ONE_D + N_D)
def test_gradients_against_torch(name):
    dtypes = ['float64'] if name in REAL_IN else ['float64', 'complex128']
    for dtype in dtypes:
        a = values((4, 6), dtype)
        for kwargs in ({}, {'norm': 'ortho'}, {'norm': 'forward'},
                       {'n': 9} if name in ONE_D else {'s': (3, 9)}, {'n': 3} if name in ONE_D else {'s': (5, 4)}):
            t = getattr(torch.fft, name)(torch.tensor(a, dtype=getattr(torch, dtype)), **kwargs)
            cot = values(tuple(t.shape), 'complex128' if t.is_complex() else 'float64', seed=7)
            check_same(_grads(ember, name, a, dtype, cot, **kwargs), _grads(torch, name, a, dtype, cot, **kwargs))


@needs_complex_autograd
@pytest.mark.parametrize('name', ONE_D + N_D)
def test_gradcheck(name):
    dtype = 'float64' if name in REAL_IN else 'complex128'
    for kwargs in ({'norm': 'ortho'}, {'n': 5} if name in ONE_D else {'s': (2, 5)}):
        x = ember.tensor(values((3, 4), dtype), dtype=getattr(ember, dtype)).requires_grad_()
        assert ember.autograd.gradcheck(lambda t: getattr(ember.fft, name)(t, **kwargs), (x,))


@needs_complex_autograd
@pytest.mark.parametrize('name', ['fft', 'rfft', 'irfft', 'hfft', 'ihfft', 'fftn', 'rfftn', 'irfftn', 'hfftn'])
def test_gradgradcheck(name):
    # the backward formulas are DFTs themselves: differentiable again
    dtype = 'float64' if name in REAL_IN else 'complex128'
    x = ember.tensor(values((3, 4), dtype), dtype=getattr(ember, dtype)).requires_grad_()
    assert ember.autograd.gradgradcheck(lambda t: getattr(ember.fft, name)(t, norm='ortho'), (x,))


@needs_complex_autograd
@pytest.mark.filterwarnings('ignore::UserWarning')
def test_stft_istft_gradients():
    x = ember.tensor(values((2, 40), 'float64')).requires_grad_()
    w = ember.tensor(values((8,), 'float64', seed=2) + 2).requires_grad_()
    assert ember.autograd.gradcheck(lambda s, win: ember.stft(s, 8, hop_length=3, window=win, return_complex=True),
                                    (x, w))
    z = ember.tensor(_SPEC).requires_grad_()
    assert ember.autograd.gradcheck(lambda s: ember.istft(s, 8, window=ember.hann_window(8, dtype=ember.float64)),
                                    (z,))


def test_stft_warnings():
    import warnings
    for m in (ember, torch):  # a missing return_complex warns for real input; return_complex=False does not (1.13)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            m.stft(m.zeros(20), 8, return_complex=False)
        assert not caught, m
    from ember import _stft
    _stft._warned.clear()
    with pytest.warns(UserWarning, match='return_complex'):
        ember.stft(ember.zeros(20), 8)
