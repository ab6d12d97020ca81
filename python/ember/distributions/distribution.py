"""The Distribution base: shapes, sampling entry points and argument checks, as
torch.distributions.Distribution."""
import ember

__all__ = ['Distribution']


def _expand_attributes(old, new, batch_shape):
    """Copies old's attributes to new, its tensors of shape batch + tail broadcast to batch_shape + tail.
    The copies are contiguous: Ember cannot yet view (broadcast again) an expanded tensor that requires grad."""
    n = len(old._batch_shape)
    for k, v in old.__dict__.items():
        if k in new.__dict__:
            continue
        if isinstance(v, ember.Tensor) and v.dim() >= n and tuple(v.shape[:n]) == tuple(old._batch_shape):
            v = v.expand(tuple(batch_shape) + tuple(v.shape[n:])).contiguous()
        setattr(new, k, v)


class Distribution:
    """batch_shape: independent distributions; event_shape: the shape of one draw.
    Subclasses give rsample or sample, log_prob, entropy, mean and variance; with
    validate_args (default on, as PyTorch's) parameters and log_prob's values are
    checked."""

    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
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

    def _validate_params(self):
        """Checks each parameter in arg_constraints that was given (set in __dict__)."""
        from . import constraints
        if not self._validate_args:
            return
        for name, c in self.arg_constraints.items():
            if constraints.is_dependent(c) or name not in self.__dict__:
                continue
            value = self.__dict__[name]
            if not bool(c.check(value).all()):
                raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {c!r}, but found invalid "
                                 f"values:\n{value}")

    def _validate_sample(self, value):
        """Checks value's type, shape (broadcastable to batch + event) and support."""
        if not self._validate_args:
            return
        if not isinstance(value, ember.Tensor):
            raise ValueError('The value argument to log_prob must be a Tensor')
        n = len(self._event_shape)
        if tuple(value.shape[value.dim() - n:]) != tuple(self._event_shape) or value.dim() < n:
            raise ValueError(f'The right-most size of value must match event_shape: {tuple(value.shape)} vs '
                             f'{tuple(self._event_shape)}.')
        ember.broadcast_shapes(tuple(value.shape), tuple(self._batch_shape) + tuple(self._event_shape))
        support = self.support
        self._check_sample(value, support.check(value))

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f'{type(self)} does not implement mode')

    @property
    def variance(self):
        raise NotImplementedError

    def expand(self, batch_shape, _instance=None):
        """The same distribution with its parameters broadcast to batch_shape."""
        batch_shape = ember.Size(tuple(batch_shape))
        new = type(self).__new__(type(self)) if _instance is None else _instance
        _expand_attributes(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

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
