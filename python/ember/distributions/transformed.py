"""TransformedDistribution: base_dist pushed through a list of transforms, with
log_prob by the change of variables, as torch.distributions'."""
import ember
from . import constraints
from .distribution import Distribution, _expand_attributes
from .transforms import ComposeTransform, Transform

__all__ = ['TransformedDistribution']


def _sum_rightmost(x, n):
    return x.reshape(x.shape[:x.dim() - n] + (-1,)).sum(-1) if n > 0 else x


class TransformedDistribution(Distribution):
    """Draws T_n(...T_1(x)) for x ~ base_distribution."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list) and all(isinstance(t, Transform) for t in transforms):
            self.transforms = transforms
        else:
            raise ValueError(f'transforms must be a Transform or a list of Transforms, but was {transforms}')
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f'base_distribution needs at least {chain.domain.event_dim} dimensions, but got '
                             f'{base_shape}')
        shape = tuple(chain.forward_shape(ember.Size(base_shape)))
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim, 0)
        if event_dim - len(base_distribution.event_shape) > 0 or len(shape) != len(base_shape) or \
                tuple(shape) != tuple(base_shape):
            from .independent import Independent
            expanded_base_shape = tuple(chain.inverse_shape(ember.Size(shape)))
            if tuple(expanded_base_shape) != base_shape:
                base_distribution = base_distribution.expand(expanded_base_shape[:len(expanded_base_shape)
                                                                                 - base_event_dim])
            reinterpreted = chain.domain.event_dim - base_event_dim
            if reinterpreted > 0:
                base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    def sample(self, sample_shape=()):
        with ember.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotone_sign(self):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return 1
        return sign

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        value = self.base_dist.cdf(value)
        sign = self._monotone_sign()
        return value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5

    def icdf(self, value):
        sign = self._monotone_sign()
        if not (isinstance(sign, int) and sign == 1):
            value = sign * (value - 0.5) + 0.5
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = ember.Size(tuple(batch_shape))
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(ember.Size(shape)))
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        new.transforms = self.transforms
        _expand_attributes(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new
