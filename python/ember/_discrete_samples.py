"""torch.poisson and torch.binomial: samples by inversion of the CDF, with
one uniform draw per element from the given generator (so they follow
ember's seed; PyTorch's streams differ). Vectorized over elements:
poisson bisects on P(X <= k) = igammac(k + 1, rate); binomial walks out
from the mode, alternately down and up, subtracting probabilities from the
uniform (inversion in that order of the outcomes, exact in distribution)."""
import math

from . import _C
from ._functions import broadcast_tensors
from ._tensor import Tensor


# Beyond these the samplers' costs grow (igammac's series with sqrt(rate), the walk from the
# mode with sqrt(count)); PyTorch samples them with other methods (not done here).
_MAX_RATE = 2.0 ** 32
_MAX_COUNT = 2 ** 24


def _float_input(name, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    if not t.is_floating_point():
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{str(t.dtype).split(".")[-1].capitalize()}\'')


def _no_gradient(sample, like):
    """PyTorch records these with a zero gradient: a where that always picks the sample."""
    if _C.is_grad_enabled() and like.requires_grad:
        return _C.where(_C.ones_like(sample, dtype=_C.bool), sample, like)
    return sample


def poisson(input, generator=None):
    _float_input('poisson', input)
    rate = input.detach().to(_C.float64)
    if rate.numel() and not bool((rate >= 0).all()):
        raise RuntimeError('invalid Poisson rate, expected rate to be non-negative')
    if rate.numel() and float(rate[_C.isfinite(rate)].max() if bool(_C.isfinite(rate).any()) else 0) > _MAX_RATE:
        raise NotImplementedError(f'poisson: rates above {_MAX_RATE:g} are not supported')
    finite = _C.isfinite(rate)
    safe = _C.where(finite, rate, _C.zeros_like(rate))
    u = _C.rand(tuple(rate.shape), dtype=_C.float64, generator=generator)
    lo = _C.zeros(tuple(rate.shape), dtype=_C.int64)
    hi = _C.ceil(safe + 12 * _C.sqrt(safe) + 12).to(_C.int64)  # P(X > hi) < 1e-30
    while True:
        active = lo < hi
        if not bool(active.any()):
            break
        mid = (lo + hi) // 2
        left = _C.igammac((mid + 1).to(_C.float64), safe) >= u  # P(X <= mid) >= u
        hi = _C.where(active & left, mid, hi)
        lo = _C.where(active & ~left, mid + 1, lo)
    sample = _C.where(finite, lo.to(_C.float64), rate).to(input.dtype)  # (an infinite rate gives inf)
    return _no_gradient(sample, input)


def binomial(count, prob, generator=None):
    _float_input('binomial', count)
    if not isinstance(prob, Tensor):
        raise TypeError(f"binomial(): argument 'prob' (position 2) must be Tensor, not {type(prob).__name__}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f'Found dtype {str(prob.dtype).split(".")[-1].capitalize()} but expected '
                           f'{str(count.dtype).split(".")[-1].capitalize()}')
    n, p = broadcast_tensors(count.detach().to(_C.float64), prob.detach().to(_C.float64))
    bad = _C.isnan(n) | _C.isnan(p)  # (PyTorch loops for ever on a nan count)
    n = _C.where(bad, _C.zeros_like(n), _C.floor(n.clamp(min=0)))
    p = _C.where(bad, _C.zeros_like(p), p.clamp(0, 1))
    if n.numel() and float(n.max()) > _MAX_COUNT:
        raise NotImplementedError(f'binomial: counts above {_MAX_COUNT} are not supported')
    q = 1 - p
    shape = tuple(n.shape)
    u = _C.rand(shape, dtype=_C.float64, generator=generator)
    mode = _C.minimum(_C.floor((n + 1) * p), n)
    # log of the probability of the mode (0 * log 0 = 0 where p is 0 or 1)
    log_pmf = (_C.lgamma(n + 1) - _C.lgamma(mode + 1) - _C.lgamma(n - mode + 1) + _C.xlogy(mode, p)
               + _C.xlogy(n - mode, q))
    pmf = _C.exp(log_pmf)
    u = u - pmf
    result = mode.clone()
    done = u <= 0
    down, up = mode.clone(), mode.clone()
    p_down, p_up = pmf.clone(), pmf.clone()
    while not bool(done.all()):
        # one step down: P(k - 1) = P(k) k q / ((n - k + 1) p)
        can = (~done) & (down > 0)
        ratio = down * q / ((n - down + 1) * p)
        p_down = _C.where(can, p_down * ratio, p_down)
        down = _C.where(can, down - 1, down)
        u = _C.where(can, u - p_down, u)
        hit = can & (u <= 0)
        result = _C.where(hit, down, result)
        done = done | hit
        # one step up: P(k + 1) = P(k) (n - k) p / ((k + 1) q)
        can = (~done) & (up < n)
        ratio = (n - up) * p / ((up + 1) * q)
        p_up = _C.where(can, p_up * ratio, p_up)
        up = _C.where(can, up + 1, up)
        u = _C.where(can, u - p_up, u)
        hit = can & (u <= 0)
        result = _C.where(hit, up, result)
        done = done | hit
        # both ends reached (u left over by rounding): the mode
        done = done | ((down <= 0) & (up >= n))
    result = _C.where(bad, _C.full_like(result, math.nan), result)
    return _no_gradient(result.to(count.dtype), count)


def install(namespace):
    namespace['poisson'] = poisson
    namespace['binomial'] = binomial
