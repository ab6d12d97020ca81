"""ember.fft's accuracy over lengths: complex128 and complex64 transforms of
lengths 1 to 70 and a spread of larger ones (powers of 2, smooth, prime and
with a large prime factor: kissfft's butterflies, its generic prime
butterfly, Bluestein's algorithm) against the DFT computed in long double,
each error at most about NumPy's (pocketfft's) own; the round trip
ifft(fft(x)); real and Hermitian forms at odd and even lengths against
torch; and the empty-length errors."""
import numpy as np
import pytest
import torch

import ember

LENGTHS = list(range(1, 71)) + [97, 128, 210, 243, 256, 625, 1000, 1021, 1024]


def exact_dft(x, inverse=False):
    """The DFT of each row of x, accumulated in long double."""
    n = x.shape[-1]
    k = np.arange(n)
    angle = (-1 if not inverse else 1) * 2 * np.pi * np.longdouble(1) * (np.outer(k, k) % n) / n
    c, s = np.cos(angle), np.sin(angle)
    re, im = x.real.astype(np.longdouble), x.imag.astype(np.longdouble)
    return re @ c - im @ s, re @ s + im @ c


def rel_error(y, ref):
    re, im = ref
    return float(np.sqrt(((y.real - re) ** 2 + (y.imag - im) ** 2).sum() / (re ** 2 + im ** 2).sum()))


@pytest.mark.parametrize('n', LENGTHS)
def test_complex128_error_at_most_numpys(n):
    x = np.random.default_rng(n).standard_normal((3, n)) + 1j * np.random.default_rng(n + 1).standard_normal((3, n))
    for inverse in (False, True):
        ref = exact_dft(x, inverse)
        got = (ember.fft.ifft(ember.tensor(x), norm='forward') if inverse else ember.fft.fft(ember.tensor(x))).numpy()
        numpy = np.fft.ifft(x, norm='forward') if inverse else np.fft.fft(x)
        assert got.dtype == np.complex128
        assert rel_error(got, ref) <= 2 * rel_error(numpy, ref) + 1e-16, (n, inverse)


@pytest.mark.parametrize('n', [1, 2, 7, 23, 29, 64, 210, 1021])
def test_complex64_error(n):
    x = np.random.default_rng(n).standard_normal((3, n)) + 1j * np.random.default_rng(n + 1).standard_normal((3, n))
    x = x.astype(np.complex64)
    got = ember.fft.fft(ember.tensor(x)).numpy()
    assert got.dtype == np.complex64
    want = torch.fft.fft(torch.tensor(x)).numpy()
    ref = exact_dft(x.astype(np.complex128))
    assert rel_error(got, ref) <= 2 * rel_error(want, ref) + 1e-8, n


@pytest.mark.parametrize('n', [1, 2, 3, 13, 29, 30, 31, 1000, 2 * 1021, 4099])
def test_round_trip_and_batches(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((5, n)) + 1j * rng.standard_normal((5, n))
    y = ember.fft.ifft(ember.fft.fft(ember.tensor(x))).numpy()
    np.testing.assert_allclose(y, x, rtol=0, atol=1e-14 * max(1, np.log2(n)))
    # the same lines along a leading dim (strided passes) give the same spectra
    a = ember.fft.fft(ember.tensor(x.T.copy()), dim=0).numpy().T
    np.testing.assert_allclose(a, np.fft.fft(x), rtol=0, atol=1e-12 * np.abs(np.fft.fft(x)).max())


@pytest.mark.parametrize('n', [1, 2, 5, 14, 29, 58, 255, 1001, 2046])
@pytest.mark.parametrize('fn', ['rfft', 'irfft', 'hfft', 'ihfft'])
def test_real_forms_float64(fn, n):
    rng = np.random.default_rng(n)
    real_in = fn in ('rfft', 'ihfft')
    a = rng.standard_normal((2, n)) if real_in else rng.standard_normal((2, n // 2 + 1)) + 1j * rng.standard_normal(
        (2, n // 2 + 1))
    got = getattr(ember.fft, fn)(ember.tensor(a), n=n).numpy()
    want = getattr(torch.fft, fn)(torch.tensor(a), n=n).resolve_conj().numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * max(1.0, np.abs(want).max()))


def test_empty_lengths_raise_like_torch():
    for m in (ember, torch):
        x = m.zeros(3, 0, dtype=m.complex128)
        with pytest.raises(RuntimeError):
            m.fft.fft(x)
        with pytest.raises(RuntimeError):
            m.fft.fft(m.zeros(4, dtype=m.complex128), n=0)
        with pytest.raises(RuntimeError):
            m.fft.rfft(m.zeros(2, 0, dtype=m.float64))


def test_threads_share_no_plan_scratch():
    """Lengths with prime factors above 5 use kissfft's generic butterfly,
    which keeps scratch in the plan: each chunk of lines runs its own copy."""
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        x = np.random.default_rng(0).standard_normal((256, 7 * 11 * 13)) * (1 + 1j)
        np.testing.assert_allclose(ember.fft.fft(ember.tensor(x)).numpy(), np.fft.fft(x), rtol=0, atol=1e-10)
    finally:
        ember.set_num_threads(threads)
