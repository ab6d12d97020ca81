"""Counting families — Geometric, Poisson, Binomial, NegativeBinomial,
Multinomial — and OneHotCategoricalStraightThrough, as torch.distributions'."""
import ember
import ember.nn.functional as F
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .families import Categorical, OneHotCategorical, _broadcast_all, _probs_logits, _shape
from ._samplers import binomial, poisson, standard_gamma

__all__ = ['Geometric', 'Poisson', 'Binomial', 'NegativeBinomial', 'Multinomial',
           'OneHotCategoricalStraightThrough']


def _tensor(v):
    return v if isinstance(v, ember.Tensor) else ember.tensor(float(v))


def _with_count(total_count, probs, logits):
    """(total_count, probs, logits) broadcast together, as tensors."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    given = probs if probs is not None else logits
    total_count, given = _broadcast_all(total_count, given)
    total_count = total_count.to(given.dtype)
    return (total_count,) + tuple(_probs_logits(given, None, True) if probs is not None
                                  else _probs_logits(None, given, True))


class Geometric(Distribution):
    """Number of failures before the first success, with success probability probs."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given, = _broadcast_all(probs if probs is not None else logits)
        self._param = 'probs' if probs is not None else 'logits'
        self.probs, self.logits = _probs_logits(given, None, True) if probs is not None else \
            _probs_logits(None, given, True)
        super().__init__(given.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool(((given > 0) & (given <= 1)).all()):
            raise ValueError(f'Expected parameter probs of distribution {self!r} to satisfy the constraint '
                             'Interval(lower_bound=0.0, upper_bound=1.0) and probs > 0, but found invalid values')

    mean = property(lambda self: 1. / self.probs - 1.)
    mode = property(lambda self: ember.zeros_like(self.probs))
    variance = property(lambda self: (1. / self.probs - 1.) / self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        with ember.no_grad():
            tiny = ember.finfo(self.probs.dtype).tiny
            u = ember.rand(shape, dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        self._validate_sample(value)
        value, probs = ember.broadcast_tensors(value, self.probs)
        fails = ember.where((probs == 1) & (value == 0), ember.zeros_like(probs), value * (-probs).log1p())
        return fails + self.probs.clamp(min=ember.finfo(probs.dtype).tiny).log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction='none') / self.probs


class Poisson(ExponentialFamily):
    """Poisson(rate) counts."""
    arg_constraints = {'rate': constraints.nonnegative}
    arg_names = ('rate',)
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self.rate, = _broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)
        self._validate_params()

    mean = property(lambda self: self.rate)
    mode = property(lambda self: self.rate.floor())
    variance = property(lambda self: self.rate)

    def sample(self, sample_shape=()):
        return poisson(self.rate.expand(self._extended_shape(_shape(sample_shape))))

    def log_prob(self, value):
        self._validate_sample(value)
        rate, value = ember.broadcast_tensors(self.rate, value)
        return ember.xlogy(value, rate) - rate - ember.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


class Binomial(Distribution):
    """Successes in total_count trials of probability probs."""
    arg_constraints = {'total_count': constraints.nonnegative_integer, 'probs': constraints.unit_interval,
                       'logits': constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        self.total_count, self.probs, self.logits = _with_count(total_count, probs, logits)
        self._param = 'probs' if probs is not None else 'logits'
        super().__init__(self.probs.shape, validate_args=validate_args)
        if self._validate_args:
            for name in ('total_count', self._param):
                if not bool(self.arg_constraints[name].check(getattr(self, name)).all()):
                    raise ValueError(f'Expected parameter {name} of distribution {self!r} to satisfy the '
                                     f'constraint {self.arg_constraints[name]!r}, but found invalid values')

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    mean = property(lambda self: self.total_count * self.probs)
    mode = property(lambda self: ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count))
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        self._validate_sample(value)
        n = self.total_count
        log_comb = ember.lgamma(n + 1) - ember.lgamma(value + 1) - ember.lgamma(n - value + 1)
        norm = n * F.softplus(self.logits)  # n log(1 + e^logits)
        return log_comb + value * self.logits - norm

    def entropy(self):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError('Inhomogeneous total count not supported by `entropy`.')
        lp = self.log_prob(self.enumerate_support(False))
        return -(lp.exp() * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError('Inhomogeneous total count not supported by `enumerate_support`.')
        values = ember.arange(1 + n, dtype=self.probs.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values


class NegativeBinomial(Distribution):
    """Successes before total_count failures, each trial succeeding with probs."""
    arg_constraints = {'total_count': constraints.greater_than_eq(0), 'probs': constraints.half_open_interval(0., 1.),
                       'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        self.total_count, self.probs, self.logits = _with_count(total_count, probs, logits)
        self._param = 'probs' if probs is not None else 'logits'
        super().__init__(self.probs.shape, validate_args=validate_args)
        if self._validate_args:
            for name in ('total_count', self._param):
                if not bool(self.arg_constraints[name].check(getattr(self, name)).all()):
                    raise ValueError(f'Expected parameter {name} of distribution {self!r} to satisfy the '
                                     f'constraint {self.arg_constraints[name]!r}, but found invalid values')

    mean = property(lambda self: self.total_count * self.logits.exp())
    mode = property(lambda self: ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.))
    variance = property(lambda self: self.mean / ember.sigmoid(-self.logits))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        with ember.no_grad():
            rate = standard_gamma(self.total_count.expand(shape)) * self.logits.exp().expand(shape)
            return poisson(rate)

    def log_prob(self, value):
        self._validate_sample(value)
        log_unnorm = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_norm = -ember.lgamma(self.total_count + value) + ember.lgamma(1. + value) \
            + ember.lgamma(self.total_count)
        log_norm = ember.where(self.total_count + value == 0., ember.zeros_like(log_norm), log_norm)
        return log_unnorm - log_norm


class Multinomial(Distribution):
    """Counts of total_count draws over the categories of probs (last dim)."""
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError('inhomogeneous total_count is not supported')
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=validate_args)
        self._binomial = Binomial(total_count=total_count, probs=self._categorical.probs, validate_args=False)
        super().__init__(self._categorical.batch_shape, self._categorical.probs.shape[-1:],
                         validate_args=validate_args)

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    mean = property(lambda self: self.probs * self.total_count)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        k = self.probs.shape[-1]
        new = Multinomial(self.total_count, probs=self.probs.expand(batch_shape + (k,)), validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape)
        k = self.probs.shape[-1]
        with ember.no_grad():
            draws = self._categorical.sample((self.total_count,) + shape)  # (n,) + shape + batch
            draws = draws.movedim(0, -1)
            counts = ember.zeros(tuple(draws.shape[:-1]) + (k,), dtype=self.probs.dtype)
            return counts.scatter_add(-1, draws, ember.ones_like(draws, dtype=self.probs.dtype))

    def log_prob(self, value):
        self._validate_sample(value)
        logits, value = ember.broadcast_tensors(self.logits, value)
        logits = logits.clone()
        logits = ember.where((value == 0) & (logits == -float('inf')), ember.zeros_like(logits), logits)
        log_factorial_n = ember.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ember.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n = ember.tensor(float(self.total_count), dtype=self.probs.dtype)
        support = self._binomial.enumerate_support()  # (n+1,) + batch + (K,)
        binomial_probs = self._binomial.log_prob(support).exp()
        # H = -log n! - n sum_i p_i log p_i + sum_i E[log x_i!] with x_i ~ Binomial(n, p_i)
        expected_log_fact = (binomial_probs * ember.lgamma(support + 1)).sum([0, -1])
        return -ember.lgamma(n + 1) - self.total_count * (self.probs * self.logits).sum(-1) + expected_log_fact


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients to probs straight through
    (sample + probs - probs.detach()), as in Bengio et al., 2013."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self.probs
        return samples + (probs - probs.detach())
