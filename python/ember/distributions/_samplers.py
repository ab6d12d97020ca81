"""Gamma, Poisson and Binomial variates written with Ember's ops, vectorized
over a tensor of parameters (Ember has no native samplers for them yet). Each
loops only until every element's rejection step has accepted."""
import math

import ember

__all__ = ['standard_gamma', 'poisson', 'binomial']


def standard_gamma(concentration):
    """Gamma(concentration, 1) draws, one per element (Marsaglia and Tsang, 2000; for
    concentration < 1, Gamma(a + 1) * U^(1/a)). Not differentiable: see Gamma.rsample."""
    with ember.no_grad():
        a = concentration.detach()
        boost = a < 1
        a1 = ember.where(boost, a + 1, a)
        d = a1 - 1.0 / 3.0
        c = (9 * d).rsqrt()
        out = ember.zeros_like(a)
        todo = ember.ones_like(a, dtype=ember.bool)
        while bool(todo.any()):
            z = ember.randn(a.shape, dtype=a.dtype)
            v = (1 + c * z).pow(3)
            u = ember.rand(a.shape, dtype=a.dtype)
            ok = (v > 0) & (u.log() < 0.5 * z * z + d - d * v + d * v.clamp(min=1e-300).log())
            take = ok & todo
            out = ember.where(take, d * v, out)
            todo = todo & ~ok
        u = ember.rand(a.shape, dtype=a.dtype).clamp(min=ember.finfo(a.dtype).tiny)
        out = ember.where(boost, out * u.pow(1 / a), out)
        return out.clamp(min=ember.finfo(a.dtype).tiny)


def _log_factorial(k):
    """log(k!) for k >= 0 to ~1e-10: Stirling's series at k + 7, shifted down by the product k+1..k+6."""
    y = k + 7
    shift = ((k + 1) * (k + 2) * (k + 3) * (k + 4) * (k + 5) * (k + 6)).log()
    return (y - 0.5) * y.log() - y + 0.5 * math.log(2 * math.pi) + 1 / (12 * y) - 1 / (360 * y ** 3) \
        + 1 / (1260 * y ** 5) - shift


def poisson(rate):
    """Poisson(rate) draws: counting unit-rate exponential arrivals below rate for small
    rates, Hörmann's transformed rejection (PTRS, 1993) for rate >= 10."""
    with ember.no_grad():
        lam = rate.detach()
        out = ember.zeros_like(lam)
        small = lam < 10
        if bool(small.any()):
            t = ember.zeros_like(lam)
            count = ember.zeros_like(lam)
            live = small.clone()
            while bool(live.any()):
                t = t + ember.empty_like(lam).exponential_()
                arrived = live & (t < lam)
                count = count + arrived.to(lam.dtype)
                live = arrived
            out = ember.where(small, count, out)
        big = ~small
        if bool(big.any()):
            lam_b = ember.where(big, lam, ember.full_like(lam, 10.0))
            slam, loglam = lam_b.sqrt(), lam_b.log()
            b = 0.931 + 2.53 * slam
            a = -0.059 + 0.02483 * b
            inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
            vr = 0.9277 - 3.6224 / (b - 2)
            res = ember.zeros_like(lam)
            todo = big.clone()
            while bool(todo.any()):
                u = ember.rand(lam.shape, dtype=lam.dtype) - 0.5
                v = ember.rand(lam.shape, dtype=lam.dtype)
                us = 0.5 - u.abs()
                k = ((2 * a / us + b) * u + lam_b + 0.43).floor()
                quick = (us >= 0.07) & (v <= vr)
                valid = (k >= 0) & ~((us < 0.013) & (v > us))
                lhs = (v * inv_alpha / (a / (us * us) + b)).clamp(min=1e-300).log()
                rhs = -lam_b + k * loglam - _log_factorial(k)
                ok = quick | (valid & (lhs <= rhs))
                take = ok & todo
                res = ember.where(take, k, res)
                todo = todo & ~ok
            out = ember.where(big, res, out)
        return out


def binomial(total_count, probs):
    """Binomial(total_count, probs) draws as sums of Bernoulli trials, taken in chunks of
    trials so memory stays bounded."""
    with ember.no_grad():
        n, p = ember.broadcast_tensors(total_count.detach(), probs.detach())
        out = ember.zeros_like(p)
        most = int(n.max()) if n.numel() else 0
        chunk = max(1, min(most, (1 << 22) // max(1, p.numel())))
        for start in range(0, most, chunk):
            width = min(chunk, most - start)
            trial = ember.arange(start, start + width, dtype=p.dtype)
            u = ember.rand(tuple(p.shape) + (width,), dtype=p.dtype)
            hits = (u < p.unsqueeze(-1)) & (trial < n.unsqueeze(-1))
            out = out + hits.to(p.dtype).sum(-1)
        return out
