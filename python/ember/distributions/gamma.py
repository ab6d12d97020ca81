"""Gamma and the families built from it — Chi2, Beta, Dirichlet, StudentT,
FisherSnedecor, Kumaraswamy — as torch.distributions'. Densities and entropies
use ember.lgamma and ember.digamma (torch.special's)."""
import math

import ember
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .families import Uniform, _broadcast_all, _shape
from .transforms import AffineTransform, PowerTransform
from .transformed import TransformedDistribution
from ._samplers import standard_gamma

__all__ = ['Gamma', 'Chi2', 'Beta', 'Dirichlet', 'StudentT', 'FisherSnedecor', 'Kumaraswamy']


def _log_lower_gamma_regularized(a, x, terms):
    """log P(a, x) by the series x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n))."""
    log_term = ember.zeros_like(x)
    acc = ember.zeros_like(x)
    for n in range(1, terms):
        log_term = log_term + x.log() - (a + n).log()
        acc = ember.logaddexp(acc, log_term)
    return a * x.log() - x - ember.lgamma(a + 1) + acc


class _StandardGammaRsample(ember.autograd.Function):
    """Gamma(a, 1) draws with the implicit reparameterization gradient
    dx/da = -(dP(a, x)/da) / p(x; a) (P the regularized incomplete gamma, differentiated
    by a central difference of its series in float64)."""

    @staticmethod
    def forward(ctx, a):
        x = standard_gamma(a)
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        a64, x64 = a.detach().double(), x.detach().double()
        terms = int(float(x64.max()) + 10 * math.sqrt(float(x64.max())) + 40)
        h = 1e-5 * a64.clamp(min=1e-3)
        dlogp = (_log_lower_gamma_regularized(a64 + h, x64, terms)
                 - _log_lower_gamma_regularized(a64 - h, x64, terms)) / (2 * h)
        cdf = _log_lower_gamma_regularized(a64, x64, terms).exp()
        log_pdf = (a64 - 1) * x64.log() - x64 - ember.lgamma(a64)
        dx = -(dlogp * cdf) / log_pdf.exp()
        return grad * dx.to(grad.dtype)


def _rsample_standard_gamma(concentration):
    if concentration.requires_grad and ember.is_grad_enabled():
        return _StandardGammaRsample.apply(concentration)
    return standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^a x^(a-1) e^(-rate x) / Gamma(a)."""
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    arg_names = ('concentration', 'rate')
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)
        self._validate_params()

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ((self.concentration - 1) / self.rate).clamp(min=0))
    variance = property(lambda self: self.concentration / self.rate.pow(2))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        x = _rsample_standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return x.clamp(min=ember.finfo(x.dtype).tiny)

    def log_prob(self, value):
        value = ember.as_tensor(value, dtype=self.rate.dtype)
        self._validate_sample(value)
        return ember.xlogy(self.concentration, self.rate) + ember.xlogy(self.concentration - 1, value) \
            - self.rate * value - ember.lgamma(self.concentration)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + ember.lgamma(a) + (1.0 - a) * ember.digamma(a)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        self._validate_sample(value)
        return ember.special.gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""
    arg_constraints = {'df': constraints.positive}

    def __init__(self, df, validate_args=None):
        df, = _broadcast_all(df)
        super().__init__(0.5 * df, ember.full_like(df, 0.5), validate_args=validate_args)

    df = property(lambda self: self.concentration * 2)

    def expand(self, batch_shape, _instance=None):
        return Gamma.expand(self, batch_shape, _instance)


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration) on the simplex of the last dim."""
    arg_constraints = {'concentration': constraints.independent(constraints.positive, 1)}
    arg_names = ('concentration',)
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError('`concentration` parameter must be at least one-dimensional.')
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)
        self._validate_params()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        g = _rsample_standard_gamma(self.concentration.expand(shape))
        return (g / g.sum(-1, keepdim=True)).clamp(min=ember.finfo(g.dtype).tiny)

    def log_prob(self, value):
        self._validate_sample(value)
        a = self.concentration
        return ember.xlogy(a - 1.0, value).sum(-1) + ember.lgamma(a.sum(-1)) - ember.lgamma(a).sum(-1)

    mean = property(lambda self: self.concentration / self.concentration.sum(-1, keepdim=True))

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        below = (self.concentration < 1).all(-1)
        onehot = ember.nn.functional.one_hot(self.concentration.argmax(-1), self.concentration.shape[-1])
        return ember.where(below.unsqueeze(-1), onehot.to(mode.dtype), mode)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a, a0 = self.concentration, self.concentration.sum(-1)
        return ember.lgamma(a).sum(-1) - ember.lgamma(a0) - (k - a0) * ember.digamma(a0) \
            - ((a - 1.0) * ember.digamma(a)).sum(-1)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return ember.lgamma(x).sum(-1) - ember.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0) on [0, 1], a two-category Dirichlet."""
    arg_constraints = {'concentration1': constraints.positive, 'concentration0': constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        c1, c0 = _broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(ember.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    concentration1 = property(lambda self: self._dirichlet.concentration[..., 0])
    concentration0 = property(lambda self: self._dirichlet.concentration[..., 1])
    mean = property(lambda self: self.concentration1 / (self.concentration1 + self.concentration0))
    mode = property(lambda self: self._dirichlet.mode[..., 0])

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        self._validate_sample(value)
        return self._dirichlet.log_prob(ember.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return ember.lgamma(x) + ember.lgamma(y) - ember.lgamma(x + y)


class StudentT(Distribution):
    """Student's t(df, loc, scale)."""
    arg_constraints = {'df': constraints.positive, 'loc': constraints.real, 'scale': constraints.positive}
    arg_names = ('df', 'loc', 'scale')
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0., scale=1., validate_args=None):
        self.df, self.loc, self.scale = _broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df, validate_args=False)
        super().__init__(self.df.shape, validate_args=validate_args)
        self._validate_params()

    @property
    def mean(self):
        m = self.loc.clone()
        return ember.where(self.df <= 1, ember.full_like(m, float('nan')), m)

    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        df = self.df
        v = self.scale.pow(2) * df / (df - 2)
        v = ember.where(df <= 2, ember.full_like(v, float('inf')), v)
        return ember.where(df <= 1, ember.full_like(v, float('nan')), v)

    def expand(self, batch_shape, _instance=None):
        new = Distribution.expand(self, batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        x = ember.randn(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + ember.lgamma(0.5 * self.df) \
            - ember.lgamma(0.5 * (self.df + 1.))
        return -0.5 * (self.df + 1.) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        lbeta = ember.lgamma(0.5 * self.df) + math.lgamma(0.5) - ember.lgamma(0.5 * (self.df + 1))
        return self.scale.log() + 0.5 * (self.df + 1) * (ember.digamma(0.5 * (self.df + 1))
                                                         - ember.digamma(0.5 * self.df)) \
            + 0.5 * self.df.log() + lbeta


class FisherSnedecor(Distribution):
    """F(df1, df2): the ratio of two scaled chi-squared variables."""
    arg_constraints = {'df1': constraints.positive, 'df2': constraints.positive}
    arg_names = ('df1', 'df2')
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = _broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        super().__init__(self.df1.shape, validate_args=validate_args)
        self._validate_params()

    @property
    def mean(self):
        df2 = self.df2.clone()
        return ember.where(df2 <= 2, ember.full_like(df2, float('nan')), df2 / (df2 - 2))

    @property
    def mode(self):
        m = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 <= 2, ember.full_like(m, float('nan')), m)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        v = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return ember.where(df2 <= 4, ember.full_like(v, float('nan')), v)

    def expand(self, batch_shape, _instance=None):
        new = Distribution.expand(self, batch_shape, _instance)
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        return new

    def rsample(self, sample_shape=()):
        tiny = ember.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = ember.lgamma(ct1 + ct2) - ember.lgamma(ct1) - ember.lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3


class Kumaraswamy(TransformedDistribution):
    """(1 - U^(1/concentration0))^(1/concentration1) for U ~ Uniform(0, 1)."""
    arg_constraints = {'concentration1': constraints.positive, 'concentration0': constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _broadcast_all(concentration1, concentration0)
        base = Uniform(ember.full_like(self.concentration0, 0), ember.full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1., scale=-1.),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)
        self._validate_params()

    def _moment(self, n):
        a, b = self.concentration1, self.concentration0
        arg1 = 1 + n / a
        return (b.log() + ember.lgamma(arg1) + ember.lgamma(b) - ember.lgamma(arg1 + b)).exp()

    mean = property(lambda self: self._moment(1))

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a  # mode ((a-1)/(ab-1))^(1/a)
        valid = (a >= 1) & (b >= 1) & ((a != 1) | (b != 1))
        return ember.where(valid, log_mode.exp(), ember.full_like(log_mode, float('nan')))

    variance = property(lambda self: self._moment(2) - self._moment(1).pow(2))

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h_b = ember.digamma(b + 1) + 0.57721566490153286061
        return t0 + t1 * h_b - a.log() - b.log()
