"""VonMises(loc, concentration): the circular normal on [-pi, pi), as
torch.distributions'. The Bessel functions I0, I1 are Abramowitz and Stegun's
polynomial fits (9.8.1-9.8.4), accurate to ~1e-7 relative."""
import math

import ember
from . import constraints
from .distribution import Distribution
from .families import _broadcast_all, _shape

__all__ = ['VonMises']

# log I_order(x): polynomial in (x/3.75)^2 below 3.75, and in 3.75/x times e^x/sqrt(x) above.
_SMALL = {0: [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
          1: [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]}
_LARGE = {0: [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
              -0.1647633e-1, 0.392377e-2],
          1: [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
              0.1787654e-1, -0.420059e-2]}


def _poly(y, coefs):
    out = ember.full_like(y, coefs[-1])
    for c in reversed(coefs[:-1]):
        out = out * y + c
    return out


def _log_bessel_i(x, order):
    small_y = (x / 3.75).pow(2)
    small = _poly(small_y, _SMALL[order]).log()
    if order == 1:
        small = small + x.log()
    large_y = 3.75 / x
    large = x - 0.5 * x.log() + _poly(large_y, _LARGE[order]).log()
    return ember.where(x < 3.75, small, large)


class VonMises(Distribution):
    """Density exp(concentration cos(x - loc)) / (2 pi I0(concentration)); drawn by Best and
    Fisher's (1979) rejection sampler, in float64."""
    arg_constraints = {'loc': constraints.real, 'concentration': constraints.positive}
    arg_names = ('loc', 'concentration')
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = _broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)
        self._validate_params()

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        k = self.concentration
        return 1 - (_log_bessel_i(k, 1) - _log_bessel_i(k, 0)).exp()

    def log_prob(self, value):
        self._validate_sample(value)
        lp = self.concentration * (value - self.loc).cos()
        return lp - math.log(2 * math.pi) - _log_bessel_i(self.concentration, 0)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        with ember.no_grad():
            k = self.concentration.double().expand(shape)
            tau = 1 + (1 + 4 * k.pow(2)).sqrt()
            rho = (tau - (2 * tau).sqrt()) / (2 * k)
            r = (1 + rho.pow(2)) / (2 * rho)
            x = ember.zeros(shape, dtype=ember.float64)
            todo = ember.ones(shape, dtype=ember.bool)
            while bool(todo.any()):
                u1, u2, u3 = (ember.rand(shape, dtype=ember.float64) for _ in range(3))
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                ok = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
                take = ok & todo
                x = ember.where(take, (u3 - 0.5).sign() * f.clamp(-1, 1).acos(), x)
                todo = todo & ~ok
            angle = (x + self.loc.double() + math.pi) % (2 * math.pi) - math.pi
            return angle.to(self.loc.dtype)
