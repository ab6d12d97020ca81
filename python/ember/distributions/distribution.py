"""The Distribution base: shapes, sampling entry points and argument checks, as
torch.distributions.Distribution."""
import ember

__all__ = ['Distribution']


class Distribution:
    """batch_shape: independent distributions; event_shape: the shape of one draw.
    Subclasses give rsample or sample, log_prob, entropy, mean and variance; with
    validate_args (default on, as PyTorch's) parameters and log_prob's values are
    checked."""

    has_rsample = False
    _validate_default = True

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError
        Distribution._validate_default = value

    def __init__(self, batch_shape=ember.Size(()), event_shape=ember.Size(()), validate_args=None):
        self._batch_shape = ember.Size(tuple(batch_shape))
        self._event_shape = ember.Size(tuple(event_shape))
        self._validate_args = Distribution._validate_default if validate_args is None else validate_args
        super().__init__()

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=ember.Size(())):
        return ember.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=ember.Size(())):
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=ember.Size(())):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized samples (rsample)")

    def sample_n(self, n):
        return self.sample(ember.Size((n,)))

    def _check(self, name, ok):
        if self._validate_args and not bool(ok.all()):
            raise ValueError(f"Expected parameter {name} of distribution {self!r} to satisfy its constraint, but "
                             "found invalid values")

    def _check_sample(self, value, ok):
        if self._validate_args and not bool(ok.all()):
            raise ValueError("Expected value argument to be within the support of the distribution "
                             f"{self!r}, but found invalid values:\n{value}")

    def perplexity(self):
        return ember.exp(self.entropy())

    def __repr__(self):
        names = [k for k in getattr(self, 'arg_names', ()) if k in self.__dict__]
        args = ', '.join(f'{k}: {self.__dict__[k] if self.__dict__[k].numel() == 1 else self.__dict__[k].size()}'
                         for k in names)
        return f'{type(self).__name__}({args})'
