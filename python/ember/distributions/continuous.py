"""Location-scale and closed-form continuous families: Laplace, Cauchy, Gumbel,
ContinuousBernoulli, VonMises and the TransformedDistribution ones (LogNormal,
HalfNormal, HalfCauchy, Weibull, Pareto, Kumaraswamy, LogisticNormal,
RelaxedBernoulli, RelaxedOneHotCategorical), as torch.distributions'."""
import math

import ember
import ember.nn.functional as F
from . import constraints
from .distribution import Distribution
from .families import Exponential, Normal, _broadcast_all, _probs_logits, _shape
from .transforms import (AffineTransform, ExpTransform, PowerTransform, SigmoidTransform, StickBreakingTransform)
from .transformed import TransformedDistribution

__all__ = ['Laplace', 'Cauchy', 'Gumbel', 'ContinuousBernoulli', 'LogNormal', 'HalfNormal', 'HalfCauchy',
           'Weibull', 'Pareto', 'LogisticNormal', 'RelaxedBernoulli', 'RelaxedOneHotCategorical']

_EULER = 0.57721566490153286061


class _LocScale(Distribution):
    """loc, scale > 0, real support, reparameterized by loc + scale * standard draw."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    arg_names = ('loc', 'scale')
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)
        self._validate_params()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        return self.loc + self.scale * self._standard(shape, self.loc.dtype)

    def log_prob(self, value):
        self._validate_sample(value)
        return self._log_density((value - self.loc) / self.scale) - self.scale.log()


class Laplace(_LocScale):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""
    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    variance = property(lambda self: 2 * self.scale.pow(2))
    stddev = property(lambda self: math.sqrt(2) * self.scale)

    @staticmethod
    def _standard(shape, dtype):
        eps = ember.finfo(dtype).eps
        u = ember.rand(shape, dtype=dtype) * (2 - eps) - (1 - eps)  # (-1, 1)
        return -u.sign() * (-u.abs()).log1p()

    @staticmethod
    def _log_density(z):
        return -z.abs() - math.log(2)

    def cdf(self, value):
        self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        t = value - 0.5
        return self.loc - self.scale * t.sign() * (-2 * t.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class Cauchy(_LocScale):
    """Cauchy(loc, scale): no mean or variance (nan and inf, as torch)."""
    mean = property(lambda self: ember.full(self._extended_shape(), float('nan'), dtype=self.loc.dtype))
    mode = property(lambda self: self.loc)
    variance = property(lambda self: ember.full(self._extended_shape(), float('inf'), dtype=self.loc.dtype))

    @staticmethod
    def _standard(shape, dtype):
        return ember.empty(shape, dtype=dtype).cauchy_()

    @staticmethod
    def _log_density(z):
        return -math.log(math.pi) - z.pow(2).log1p()

    def cdf(self, value):
        self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(_LocScale):
    """Gumbel(loc, scale): the law of the maximum, cdf exp(-exp(-(x - loc) / scale))."""
    mean = property(lambda self: self.loc + self.scale * _EULER)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: (math.pi / math.sqrt(6)) * self.scale)
    variance = property(lambda self: self.stddev.pow(2))

    @staticmethod
    def _standard(shape, dtype):
        finfo = ember.finfo(dtype)
        u = ember.rand(shape, dtype=dtype).clamp(min=finfo.tiny, max=1 - finfo.eps)
        return -(-u.log()).log()

    @staticmethod
    def _log_density(z):
        return -(z + (-z).exp())

    def cdf(self, value):
        self._validate_sample(value)
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value):
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        return self.scale.log() + (1 + _EULER)


class ContinuousBernoulli(Distribution):
    """The continuous Bernoulli on [0, 1] (Loaiza-Ganem and Cunningham, 2019): density
    C(p) p^x (1-p)^(1-x); near p = 1/2 the normalizer's Taylor expansion is used (lims)."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    arg_names = ('probs', 'logits')
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        given = probs if probs is not None else logits
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        self._param = 'probs' if probs is not None else 'logits'
        if probs is not None:
            self.probs, = _broadcast_all(probs)
            super().__init__(self.probs.shape, validate_args=validate_args)
            self._validate_params()
            self.probs, self.logits = _probs_logits(self.probs, None, binary=True)
        else:
            self.logits, = _broadcast_all(given)
            self.probs = self.logits.sigmoid()
            super().__init__(self.logits.shape, validate_args=validate_args)
        self._lims = lims

    def _outside(self):
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _cut_probs(self):
        return ember.where(self._outside(), self.probs, self._lims[0] * ember.ones_like(self.probs))

    def _log_normalizer(self):
        p = ember.where(self._outside(), self.probs, self._lims[0] * ember.ones_like(self.probs))
        p_safe = ember.where(p <= 0.5, p.clamp(max=self._lims[0]), p.clamp(min=self._lims[1]))
        log_norm = (2 * ember.atanh(1 - 2 * p_safe)).abs().log() - ember.where(
            p_safe < 0.5, (-2 * p_safe).log1p(), (2 * p_safe - 1).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.) + (4. / 3. + 104. / 45. * x) * x
        return ember.where(self._outside(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        m = p / (2 * p - 1) + 1 / (2 * ember.atanh(1 - 2 * p))
        x = self.probs - 0.5
        taylor = 0.5 + (1. / 3. + 16. / 45. * x.pow(2)) * x
        return ember.where(self._outside(), m, taylor)

    @property
    def variance(self):
        p = self._cut_probs()
        v = p * (p - 1) / (1 - 2 * p).pow(2) + 1 / (2 * ember.atanh(1 - 2 * p)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1. / 12. - (1. / 15. - 128. / 945. * x) * x
        return ember.where(self._outside(), v, taylor)

    stddev = property(lambda self: self.variance.sqrt())
    param_shape = property(lambda self: self.probs.shape)

    def rsample(self, sample_shape=()):
        u = ember.rand(self._extended_shape(_shape(sample_shape)), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        self._validate_sample(value)
        logits, value = ember.broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction='none') + self._log_normalizer()

    def cdf(self, value):
        self._validate_sample(value)
        p = self._cut_probs()
        num = p.pow(value) * (1 - p).pow(1 - value) + p - 1
        c = ember.where(self._outside(), num / (2 * p - 1), value)
        return ember.where(value <= 0, ember.zeros_like(c), ember.where(value >= 1, ember.ones_like(c), c))

    def icdf(self, value):
        p = self._cut_probs()
        x = ((value * (2 * p - 1) + 1 - p).log() - (1 - p).log()) / (p.log() - (1 - p).log())
        return ember.where(self._outside(), x, value)

    def entropy(self):
        log_p, log_1mp = self.probs.log(), (-self.probs).log1p()
        return -self.mean * (log_p - log_1mp) - self._log_normalizer() - log_1mp


class LogNormal(TransformedDistribution):
    """exp of Normal(loc, scale)."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    loc = property(lambda self: self.base_dist.loc)
    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: (self.loc + self.scale.pow(2) / 2).exp())
    mode = property(lambda self: (self.loc - self.scale.pow(2)).exp())
    variance = property(lambda self: self.scale.pow(2).expm1() * (2 * self.loc + self.scale.pow(2)).exp())

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class _HalfDistribution(TransformedDistribution):
    """|X| for X of a distribution symmetric about 0 with a `scale` (`_base`)."""
    arg_constraints = {'scale': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        from .transforms import AbsTransform
        super().__init__(self._base(0, scale, validate_args=validate_args), AbsTransform(),
                         validate_args=validate_args)

    scale = property(lambda self: self.base_dist.scale)
    mode = property(lambda self: ember.zeros_like(self.scale))

    def log_prob(self, value):
        self._validate_sample(value)
        value = ember.as_tensor(value, dtype=self.base_dist.scale.dtype)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, lp, ember.full_like(lp, -float('inf')))

    def cdf(self, value):
        self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_HalfDistribution):
    """|Normal(0, scale)|."""
    _base = Normal
    mean = property(lambda self: self.scale * math.sqrt(2 / math.pi))
    variance = property(lambda self: self.scale.pow(2) * (1 - 2 / math.pi))


class HalfCauchy(_HalfDistribution):
    """|Cauchy(0, scale)|."""
    _base = Cauchy
    mean = property(lambda self: ember.full(self._extended_shape(), math.inf, dtype=self.scale.dtype))
    variance = property(lambda self: self.base_dist.variance)


class Weibull(TransformedDistribution):
    """scale * E^(1/concentration) for E ~ Exponential(1)."""
    arg_constraints = {'scale': constraints.positive, 'concentration': constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = _broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ember.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(0, self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)
        self._validate_params()

    @property
    def mean(self):
        return self.scale * ember.lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (ember.lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                    - ember.lgamma(1 + self.concentration_reciprocal).exp().pow(2))

    def entropy(self):
        return _EULER * (1 - self.concentration_reciprocal) + (self.scale * self.concentration_reciprocal).log() + 1


class Pareto(TransformedDistribution):
    """scale * exp(Exponential(alpha)), on x >= scale."""
    arg_constraints = {'alpha': constraints.positive, 'scale': constraints.positive}
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = _broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(0, self.scale)], validate_args=validate_args)
        self._validate_params()

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    mode = property(lambda self: self.scale)

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class LogisticNormal(TransformedDistribution):
    """StickBreaking of Normal(loc, scale) vectors: points of the simplex."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        from .independent import Independent
        base = Independent(Normal(loc, scale, validate_args=validate_args), 1)
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    loc = property(lambda self: self.base_dist.base_dist.loc)
    scale = property(lambda self: self.base_dist.base_dist.scale)


class _RelaxedLogits(Distribution):
    """Logistic(logits / T) draws (log-space RelaxedBernoulli), the base of RelaxedBernoulli."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self.probs, self.logits = _probs_logits(probs, logits, binary=True)
        super().__init__(self.logits.shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        finfo = ember.finfo(self.probs.dtype)
        u = ember.rand(self._extended_shape(_shape(sample_shape)), dtype=self.probs.dtype)
        u = u.clamp(min=finfo.tiny, max=1 - finfo.eps)
        probs = self.probs.clamp(min=finfo.tiny, max=1 - finfo.eps)
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        self._validate_sample(value)
        logits, value = ember.broadcast_tensors(self.logits, value)
        temperature = ember.as_tensor(self.temperature, dtype=logits.dtype)
        diff = logits - value * temperature
        return temperature.log() + diff - 2 * F.softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """The Concrete (Gumbel-softmax) relaxation of Bernoulli at temperature."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = _RelaxedLogits(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)


class _RelaxedCategoricalLog(Distribution):
    """Log of a RelaxedOneHotCategorical draw: log-softmax((logits + Gumbel) / T)."""
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        from .families import Categorical
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self.temperature = temperature
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.logits.shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape=()):
        finfo = ember.finfo(self.logits.dtype)
        u = ember.rand(self._extended_shape(_shape(sample_shape)), dtype=self.logits.dtype)
        gumbels = -(-u.clamp(min=finfo.tiny, max=1 - finfo.eps).log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        self._validate_sample(value)
        k = self._categorical._num_events
        t = ember.as_tensor(self.temperature, dtype=self.logits.dtype)
        log_scale = ember.lgamma(ember.tensor(float(k), dtype=self.logits.dtype)) - t.log() * (-(k - 1))
        score = self.logits - value * t
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The Concrete (Gumbel-softmax) relaxation of OneHotCategorical at temperature."""
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        from .transforms import ExpTransform as _Exp
        base = _RelaxedCategoricalLog(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, _Exp(), validate_args=validate_args)

    temperature = property(lambda self: self.base_dist.temperature)
    logits = property(lambda self: self.base_dist.logits)
    probs = property(lambda self: self.base_dist.probs)
