"""Independent (batch dims reinterpreted as event dims) and MixtureSameFamily
(a Categorical mixture over one family's batch), as torch.distributions'."""
import ember
from . import constraints
from .distribution import Distribution
from .families import Categorical, _shape

__all__ = ['Independent', 'MixtureSameFamily']


def _sum_rightmost(x, n):
    return x.reshape(x.shape[:x.dim() - n] + (-1,)).sum(-1) if n > 0 else x


class Independent(Distribution):
    """base_distribution with its rightmost reinterpreted_batch_ndims batch dims made event dims."""
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = reinterpreted_batch_ndims
        if n > len(base_distribution.batch_shape):
            raise ValueError('Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual '
                             f'{n} vs {len(base_distribution.batch_shape)}')
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        s = self.base_dist.support
        return constraints.independent(s, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else s

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        base = self.base_dist.expand(batch_shape + tuple(self.event_shape[:self.reinterpreted_batch_ndims]))
        new = Independent(base, self.reinterpreted_batch_ndims, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError('Enumeration over cartesian product is not implemented')
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f'Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})'


class MixtureSameFamily(Distribution):
    """sum_k pi_k p_k(x): mixture_distribution (a Categorical over the last batch dim of
    component_distribution) picks a component."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution, self._component_distribution = mixture_distribution, component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(' The Mixture distribution needs to be an instance of torch.distributions.Categorical')
        if not isinstance(component_distribution, Distribution):
            raise ValueError('The Component distribution need to be an instance of torch.distributions.Distribution')
        mb = tuple(mixture_distribution.batch_shape)
        cb = tuple(component_distribution.batch_shape)
        if len(cb) < 1 or len(mb) != len(cb) - 1 or any(a != b and a != 1 and b != 1 for a, b in zip(mb, cb[:-1])):
            raise ValueError(f'`mixture_distribution.batch_shape` ({mb}) is not compatible with '
                             f'`component_distribution.batch_shape`({cb})')
        k = mixture_distribution.logits.shape[-1]
        if k != cb[-1]:
            raise ValueError(f'`mixture_distribution component` ({k}) does not equal '
                             f'`component_distribution.batch_shape[-1]` ({cb[-1]})')
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cb[:-1], component_distribution.event_shape, validate_args=validate_args)

    mixture_distribution = property(lambda self: self._mixture_distribution)
    component_distribution = property(lambda self: self._component_distribution)

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    def _pad(self, x):
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    def _weights(self):
        return self._pad(self._mixture_distribution.probs)

    @property
    def mean(self):
        return (self._weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        p, d = self._weights(), -1 - self._event_ndims
        mean_cond_var = (p * self._component_distribution.variance).sum(d)
        mean = self.mean.unsqueeze(d)
        var_cond_mean = (p * (self._component_distribution.mean - mean).pow(2)).sum(d)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = x.unsqueeze(-1 - self._event_ndims)
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = x.unsqueeze(-1 - self._event_ndims)
        log_prob_x = self._component_distribution.log_prob(x)
        log_mix = self._mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix).logsumexp(-1)

    def sample(self, sample_shape=()):
        with ember.no_grad():
            shape = _shape(sample_shape)
            index = self._mixture_distribution.sample(shape)  # shape + batch
            comps = self._component_distribution.sample(shape)  # shape + batch + (K,) + event
            index = index.reshape(tuple(index.shape) + (1,) + (1,) * self._event_ndims)
            index = index.expand(tuple(index.shape[:len(shape) + len(self.batch_shape)]) + (1,)
                                 + tuple(self.event_shape))
            return comps.gather(len(shape) + len(self.batch_shape), index.contiguous()).squeeze(
                len(shape) + len(self.batch_shape))

    def __repr__(self):
        return (f'MixtureSameFamily(\n  {self._mixture_distribution!r},\n  {self._component_distribution!r})')
