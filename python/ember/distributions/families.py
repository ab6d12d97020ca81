"""Normal, Uniform, Exponential, Bernoulli, Categorical and OneHotCategorical,
with torch.distributions' parameters, shapes, validation and formulas."""
import math
import numbers

import ember
import ember.nn.functional as F
from . import constraints
from .distribution import Distribution

__all__ = ['Normal', 'Uniform', 'Exponential', 'Bernoulli', 'Categorical', 'OneHotCategorical']


def _broadcast_all(*values):
    """Tensors broadcast to one shape; numbers become tensors of the tensors' (or the default) dtype."""
    like = next((v for v in values if isinstance(v, ember.Tensor)), None)
    if like is None and not all(isinstance(v, numbers.Number) for v in values):
        raise ValueError('Input arguments must all be instances of numbers.Number, torch.Tensor or objects '
                         'implementing __torch_function__.')
    dtype = like.dtype if like is not None else ember.get_default_dtype()
    tensors = [v if isinstance(v, ember.Tensor) else ember.tensor(float(v), dtype=dtype) for v in values]
    return ember.broadcast_tensors(*tensors)


def _shape(sample_shape):
    return tuple(sample_shape) if not isinstance(sample_shape, int) else (sample_shape,)


class Normal(Distribution):
    """N(loc, scale^2) per batch element."""
    arg_names = ('loc', 'scale')
    has_rsample = True
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real
    mode = property(lambda self: self.loc)

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)
        self._check('loc', self.loc == self.loc)
        self._check('scale', self.scale > 0)

    mean = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale.pow(2))

    def rsample(self, sample_shape=()):
        eps = ember.randn(self._extended_shape(_shape(sample_shape)), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        self._check_sample(value, value == value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    """Uniform on [low, high) per batch element."""
    arg_names = ('low', 'high')
    has_rsample = True
    arg_constraints = {'low': constraints.dependent(is_discrete=False, event_dim=0),
                       'high': constraints.dependent(is_discrete=False, event_dim=0)}
    support = constraints.dependent_property(lambda self: constraints.interval(self.low, self.high),
                                             is_discrete=False, event_dim=0)
    mode = property(lambda self: ember.full_like(self.low, float('nan')))

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)
        self._check('low', self.low < self.high)

    mean = property(lambda self: (self.high + self.low) / 2)
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)

    def rsample(self, sample_shape=()):
        u = ember.rand(self._extended_shape(_shape(sample_shape)), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        self._check_sample(value, (value >= self.low) & (value < self.high))
        inside = ((self.low <= value) & (value < self.high)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(Distribution):
    """rate * exp(-rate x) on x >= 0."""
    arg_names = ('rate',)
    has_rsample = True
    arg_constraints = {'rate': constraints.positive}
    support = constraints.nonnegative
    mode = property(lambda self: ember.zeros_like(self.rate))

    def __init__(self, rate, validate_args=None):
        self.rate, = _broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)
        self._check('rate', self.rate > 0)

    mean = property(lambda self: self.rate.reciprocal())
    stddev = property(lambda self: self.rate.reciprocal())
    variance = property(lambda self: self.rate.pow(-2))

    def rsample(self, sample_shape=()):
        e = ember.empty(self._extended_shape(_shape(sample_shape)), dtype=self.rate.dtype).exponential_()
        return e / self.rate

    def log_prob(self, value):
        self._check_sample(value, value >= 0)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        return 1 - ember.exp(-self.rate * value)

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()


def _probs_logits(probs, logits, binary):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        probs = probs if isinstance(probs, ember.Tensor) else ember.tensor(float(probs))
        if binary:
            eps = ember.finfo(probs.dtype).eps
            clamped = probs.clamp(eps, 1 - eps)
            return probs, clamped.log() - (-clamped).log1p()
        probs = probs / probs.sum(-1, keepdim=True)
        eps = ember.finfo(probs.dtype).eps
        return probs, probs.clamp(eps, 1 - eps).log()
    logits = logits if isinstance(logits, ember.Tensor) else ember.tensor(float(logits))
    if binary:
        return logits.sigmoid(), logits
    logits = logits - logits.logsumexp(-1, keepdim=True)
    return F.softmax(logits, -1), logits


class Bernoulli(Distribution):
    """1 with probability probs (or sigmoid(logits)), else 0."""
    arg_names = ('probs', 'logits')
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    mode = property(lambda self: ember.where(self.probs == 0.5, ember.full_like(self.probs, float('nan')),
                                             (self.probs >= 0.5).to(self.probs.dtype)))

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self.probs.dtype).reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values

    def __init__(self, probs=None, logits=None, validate_args=None):
        self.probs, self.logits = _probs_logits(probs, logits, binary=True)
        self._param = 'probs' if probs is not None else 'logits'
        super().__init__(self.probs.shape, validate_args=validate_args)
        if probs is not None:
            self._check('probs', (self.probs >= 0) & (self.probs <= 1))

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(self._extended_shape(_shape(sample_shape))))

    def log_prob(self, value):
        self._check_sample(value, (value == 0) | (value == 1))
        logits, value = ember.broadcast_tensors(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value.to(logits.dtype), reduction='none')

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction='none')

    def __repr__(self):
        p = getattr(self, self._param)
        return f'Bernoulli({self._param}: {p if p.numel() == 1 else p.size()})'


class Categorical(Distribution):
    """One of K categories (the last dim of probs or logits) per batch element."""
    arg_names = ('probs', 'logits')
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    has_enumerate_support = True
    support = constraints.dependent_property(lambda self: constraints.integer_interval(0, self._num_events - 1),
                                             is_discrete=True, event_dim=0)
    mode = property(lambda self: self.probs.argmax(-1))

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events).reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs if probs is not None else logits) is not None and \
                (probs if probs is not None else logits).dim() < 1:
            raise ValueError("`probs` parameter must be at least one-dimensional.")
        self.probs, self.logits = _probs_logits(probs, logits, binary=False)
        self._param = 'probs' if probs is not None else 'logits'
        self._num_events = self.probs.shape[-1]
        super().__init__(self.probs.shape[:-1], validate_args=validate_args)
        if probs is not None:
            self._check('probs', probs >= 0)

    mean = property(lambda self: ember.full(self._extended_shape(), float('nan'), dtype=self.probs.dtype))
    variance = mean

    def sample(self, sample_shape=()):
        shape = _shape(sample_shape)
        n = math.prod(shape)
        with ember.no_grad():
            draws = ember.multinomial(self.probs.reshape(-1, self._num_events), n, True)
            return draws.t().reshape(shape + tuple(self._batch_shape))

    def log_prob(self, value):
        value = value.long()
        self._check_sample(value, (value >= 0) & (value < self._num_events))
        batch = ember.broadcast_shapes(value.shape, self.logits.shape[:-1])
        value = value.expand(batch).unsqueeze(-1)
        logits = self.logits.expand(tuple(batch) + (self._num_events,))
        return logits.gather(-1, value.contiguous()).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=ember.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def __repr__(self):
        return f'Categorical({self._param}: {getattr(self, self._param).size()})'


class OneHotCategorical(Distribution):
    """Categorical draws as one-hot vectors of the K categories."""
    arg_names = ('probs', 'logits')
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True
    mode = property(lambda self: F.one_hot(self.probs.argmax(-1), self.probs.shape[-1]).to(self.probs.dtype))

    def enumerate_support(self, expand=True):
        n = self._categorical._num_events
        values = ember.eye(n, dtype=self.probs.dtype).reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical.batch_shape, self.probs.shape[-1:], validate_args=validate_args)

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    def sample(self, sample_shape=()):
        index = self._categorical.sample(sample_shape)
        return F.one_hot(index, self._categorical._num_events).to(self.probs.dtype)

    def log_prob(self, value):
        self._check_sample(value, ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1))
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def __repr__(self):
        return f'OneHotCategorical({self._categorical._param}: {self.probs.size()})'
